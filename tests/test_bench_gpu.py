"""The prepared GPU run (`workbench bench gpu`) in its CPU mode at tiny sizes, so that the script cannot rot.

Oracles: scipy's ``expm_multiply`` on the CPU for the heat semigroup and the exp-Markov layer (1e-12 relative:
both are exact to ~1e-16 here, measured 3e-16 and 6e-16), the same diagnosis on the numpy backend (1e-10 absolute on
entropies and δ_orth: float64 forward passes agreeing to ~1e-15), and every numeric check row passing on torch:cpu.
On a GPU the same command runs at ``--size full`` (about 6 minutes) and its numbers go to benchmarks/RESULTS.md.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_the_gpu_script_runs_on_the_cpu_at_tiny_sizes_and_agrees(tmp_path):
    from workbench.benchmarks import gpu

    report = gpu.run(size="tiny", device="cpu", out=str(tmp_path))
    written = json.loads((tmp_path / "gpu.json").read_text())
    assert written["size"] == "tiny" and set(written) >= {"check", "expmv_heat", "exp_markov_layer", "diagnose", "lm"}
    assert written["check"]["rows"] > 0 and written["check"]["passed"] == written["check"]["rows"]
    assert written["expmv_heat"]["relative_difference"] < 1e-12
    assert written["exp_markov_layer"]["relative_difference_to_scipy"] < 1e-12
    assert written["diagnose"]["tokens"] == 64 and written["diagnose"]["max_difference_to_cpu"] < 1e-10
    lm = written["lm"]
    assert lm["steps"] >= 20 and 0.0 < lm["bpb"] < 9.0 and math.isfinite(lm["tokens_per_second"])
    section = (tmp_path / "gpu.md").read_text()
    assert section.startswith("## workbench on cpu") and section.count("\n|") == 2 + len(report["rows"])


def test_the_gpu_command_says_what_it_needs(tmp_path):
    import torch

    def workbench(*arguments):
        return subprocess.run(
            [sys.executable, "-m", "workbench", *arguments], capture_output=True, text=True, check=False, cwd=tmp_path
        )

    if not torch.cuda.is_available():
        shown = workbench("bench", "gpu")
        assert shown.returncode == 2 and "Traceback" not in shown.stderr
        assert "device cuda needs torch with a visible CUDA GPU" in shown.stderr and "--device cpu" in shown.stderr
    shown = workbench("bench", "bch", "--size", "tiny")
    assert shown.returncode == 2
    assert "--size does not apply to the bch benchmark" in shown.stderr
