"""One prepared GPU run: the torch paths on a device, in one command, with their agreement against the CPU.

``workbench bench gpu --out DIR`` on a machine with one CUDA GPU (about 6 minutes at ``--size full``; the budget is
8) runs, each timed on the device with ``torch.cuda.synchronize`` around it:

1. **check**: every identity's numeric rows on ``torch:cuda`` (``workbench check --device cuda --numeric-only``):
   rows passed and wall seconds.
2. **expmv heat**: :math:`e^{-tL}v` for the Laplacian of a path of ``n`` nodes (:math:`10^7` at full size),
   :math:`t = 1`, a torch sparse CSR matrix on the device (``workbench.expmv.expmv``, its automatic method) against
   ``scipy.sparse.linalg.expm_multiply`` on the CPU; the ratio and the relative difference.
3. **exp-Markov layer**: ``uniformized_action`` of a banded generator (offsets ±1, ±2, ±4) on ``n`` tokens × 64
   (16,384 at full size), :math:`t = 2`, forward and forward + backward, against scipy's ``expm_multiply`` of the
   same generator on the CPU (relative difference).
4. **diagnose**: a GPT-2-shaped random checkpoint (124M parameters at full size) read by ``load_model``, its forward
   pass on the device (float64), 64 tokens; the largest difference of every head's entropy and δ_orth from the
   same diagnosis on the CPU.
5. **lm**: the ``gpu`` preset of ``workbench experiment lm`` trained for about ``lm_seconds`` (180 at full size;
   the steps from a timed 20-step probe): held-out bits per byte and tokens a second.

``--device cpu`` runs the same script on the CPU (torch:cpu), and ``--size tiny`` at sizes of seconds: CI runs
``--size tiny --device cpu`` so that the script cannot rot.  ``--out DIR`` writes ``gpu.json`` (the report) and
``gpu.md`` (a section for ``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import json
import platform
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

#: The ``run`` keywords ``workbench bench`` may pass.
OPTIONS = ("size", "device", "out")

#: Problem sizes: the GPU run, and the CI check of the script.
SIZES = {
    "full": {"expmv_n": 10**7, "layer_n": 16384, "gpt2": "124M", "lm_seconds": 180.0, "check_area": None},
    "tiny": {"expmv_n": 10**4, "layer_n": 256, "gpt2": "tiny", "lm_seconds": 2.0, "check_area": "expmv"},
}


def _synchronised(device: str):
    import torch

    def wait():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    return wait


def _timed(fn, wait) -> tuple[float, object]:
    wait()
    start = time.perf_counter()
    value = fn()
    wait()
    return time.perf_counter() - start, value


def _check_rows(device: str, area: str | None) -> dict:
    from workbench.catalogue import discover, run_checks, select

    identities = select(discover(), area=area) if area else discover()
    start = time.perf_counter()
    results = run_checks(identities, backends=[f"torch:{device}"], symbolic=False)
    seconds = time.perf_counter() - start
    failed = [f"{r.name}: {r.error or r.residual}" for r in results if not r.passed]
    return {"rows": len(results), "passed": len(results) - len(failed), "failed": failed, "seconds": seconds}


def _path_laplacian(n: int):
    import scipy.sparse

    degree = np.full(n, 2.0)
    degree[[0, -1]] = 1.0
    off = -np.ones(n - 1)
    return scipy.sparse.diags([off, degree, off], [-1, 0, 1], format="csr")


def _expmv_heat(n: int, device: str, wait) -> dict:
    import scipy.sparse.linalg
    import torch

    from workbench.expmv import expmv

    laplacian = _path_laplacian(n)
    v = np.random.default_rng(0).standard_normal(n)
    cpu_seconds, reference = _timed(lambda: scipy.sparse.linalg.expm_multiply(-laplacian, v), lambda: None)
    with warnings.catch_warnings():  # torch: "sparse CSR support is in beta", "invariant checks disabled"
        warnings.simplefilter("ignore", UserWarning)
        A = torch.sparse_csr_tensor(
            torch.as_tensor(laplacian.indptr),
            torch.as_tensor(laplacian.indices),
            torch.as_tensor(-laplacian.data),
            size=(n, n),
            device=device,
        )
    b = torch.as_tensor(v, device=device)
    expmv(A, b, 1.0)  # warm: kernels loaded, memory pooled
    seconds, (result, info) = _timed(lambda: expmv(A, b, 1.0, return_info=True), wait)
    difference = float(np.linalg.norm(result.cpu().numpy() - reference) / np.linalg.norm(reference))
    return {
        "n": n,
        "device_seconds": seconds,
        "scipy_cpu_seconds": cpu_seconds,
        "ratio": cpu_seconds / seconds,
        "relative_difference": difference,
        "method": info["method"],
        "matvecs": info["matvecs"],
    }


def _exp_markov_layer(n: int, device: str, wait, d: int = 64, t: float = 2.0) -> dict:
    import scipy.sparse
    import scipy.sparse.linalg
    import torch

    from workbench.nn import banded_generator, multiscale_offsets, uniformized_action

    rng = np.random.default_rng(0)
    offsets = multiscale_offsets(2)  # ±1, ±2, ±4
    logits = torch.tensor(rng.standard_normal((len(offsets), n)), device=device)
    values = torch.tensor(rng.standard_normal((n, d)), device=device)
    time_t = torch.tensor(t, dtype=torch.float64, device=device)

    def forward():
        with torch.no_grad():
            return uniformized_action(banded_generator(logits, offsets), values, time_t)

    def forward_backward():
        leaves = [x.detach().requires_grad_(True) for x in (logits, values, time_t)]
        out = uniformized_action(banded_generator(leaves[0], offsets), leaves[1], leaves[2])
        out.square().sum().backward()
        return leaves[0].grad

    forward()
    forward_seconds, out = _timed(forward, wait)
    forward_backward()
    backward_seconds, _ = _timed(forward_backward, wait)
    sparse = scipy.sparse.csr_array(banded_generator(logits.cpu(), offsets).to_banded_matrix().to_scipy())
    reference = scipy.sparse.linalg.expm_multiply(t * sparse, values.cpu().numpy())
    difference = float(np.linalg.norm(out.cpu().numpy() - reference) / np.linalg.norm(reference))
    return {
        "n": n,
        "d": d,
        "forward_seconds": forward_seconds,
        "forward_backward_seconds": backward_seconds,
        "relative_difference_to_scipy": difference,
    }


def _diagnose(size: str, device: str, wait, folder: Path) -> dict:
    from workbench.benchmarks.diagnose import gpt2_checkpoint
    from workbench.models import diagnose_ids, load_model, read_checkpoint

    directory = gpt2_checkpoint(folder / "gpt2", size)
    checkpoint = read_checkpoint(directory)
    parameters = sum(int(np.prod(checkpoint.shape(name))) for name in checkpoint.names)
    host = load_model(directory)
    ids = np.random.default_rng(0).integers(10, 50000, 64)  # 64 tokens of GPT-2's vocabulary
    on_host = diagnose_ids(host, ids, text="64 random tokens")
    model = host.to_backend(f"torch:{device}")
    diagnose_ids(model, ids, text="64 random tokens")  # warm: the weights' readings are read once per model
    seconds, on_device = _timed(lambda: diagnose_ids(model, ids, text="64 random tokens"), wait)
    gaps = [
        abs(a - b)
        for x, y in zip(on_host.heads, on_device.heads, strict=True)
        for a, b in ((x.entropy, y.entropy), (x.delta_orth, y.delta_orth))
    ]
    return {
        "parameters": parameters,
        "tokens": len(on_device.tokens),
        "seconds": seconds,
        "max_difference_to_cpu": float(max(gaps)),
    }


def _language_model(device: str, seconds: float, size: str) -> dict:
    from workbench.experiments import LanguageModelConfig, run_language_model

    preset = "gpu" if size == "full" else "quick"
    probe = LanguageModelConfig.preset(preset, device=device, steps=20, log_every=20, warmup=5, eval_bytes=4096)
    rate = run_language_model(probe, progress=False)["runs"][0]["seconds"] / 20  # seconds a step, with compiling
    steps = max(20, int(seconds / rate))
    config = LanguageModelConfig.preset(preset, device=device, steps=steps, log_every=max(1, steps // 4))
    row = run_language_model(config, progress=False)["runs"][0]
    return {
        "preset": preset,
        "steps": steps,
        "parameters": row["parameters"],
        "seconds": row["seconds"],
        "bpb": row["bpb"],
        "tokens_per_second": row["tokens_per_second"],
    }


def _device_name(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return f"{platform.processor() or platform.machine()} (torch:cpu, {torch.get_num_threads()} threads)"


def run(size: str = "full", device: str = "cuda", out: str | None = None) -> dict:
    import torch

    from workbench.validation import check_choice

    check_choice("size", size, tuple(SIZES))
    check_choice("device", device, ("cuda", "cpu"))
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            "device cuda needs torch with a visible CUDA GPU, and none is available here; --device cpu runs the same "
            "script on the CPU (with --size tiny in seconds)"
        )
    sizes = SIZES[size]
    wait = _synchronised(device)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        parts = {
            "check": _check_rows(device, sizes["check_area"]),
            "expmv_heat": _expmv_heat(sizes["expmv_n"], device, wait),
            "exp_markov_layer": _exp_markov_layer(sizes["layer_n"], device, wait),
            "diagnose": _diagnose(sizes["gpt2"], device, wait, Path(tmp)),
            "lm": _language_model(device, sizes["lm_seconds"], size),
        }
    total = time.perf_counter() - start
    machine = {
        "device": _device_name(device),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    report = _report(parts, machine, size, device, total)
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "gpu.json").write_text(json.dumps({"machine": machine, "size": size, **parts}, indent=1) + "\n")
        (folder / "gpu.md").write_text(_section(report) + "\n")
        report["notes"] += f"; written to {folder / 'gpu.json'} and {folder / 'gpu.md'}"
    return report


def _report(parts: dict, machine: dict, size: str, device: str, total: float) -> dict:
    check, heat, layer, diag, lm = (parts[k] for k in ("check", "expmv_heat", "exp_markov_layer", "diagnose", "lm"))
    rows = [
        ["check (numeric rows)", f"{check['passed']}/{check['rows']} passed", f"{check['seconds']:.1f} s", "—", "—"],
        [
            f"expmv heat, path of n = {heat['n']:,}, t = 1 ({heat['method']}, {heat['matvecs']} products)",
            f"{heat['device_seconds']:.3f} s",
            f"scipy CPU {heat['scipy_cpu_seconds']:.3f} s",
            f"{heat['ratio']:.1f}×",
            f"{heat['relative_difference']:.1e}",
        ],
        [
            f"exp-Markov layer, n = {layer['n']:,} × {layer['d']}",
            f"fwd {layer['forward_seconds'] * 1e3:.1f} ms",
            f"fwd+bwd {layer['forward_backward_seconds'] * 1e3:.1f} ms",
            "—",
            f"{layer['relative_difference_to_scipy']:.1e}",
        ],
        [
            f"diagnose, GPT-2-shaped random ({diag['parameters'] / 1e6:.0f}M), {diag['tokens']} tokens",
            f"{diag['seconds']:.2f} s",
            "—",
            "—",
            f"{diag['max_difference_to_cpu']:.1e}",
        ],
        [
            f"lm `{lm['preset']}` preset, {lm['steps']} steps ({lm['parameters'] / 1e6:.2f}M parameters)",
            f"{lm['seconds']:.0f} s",
            f"{lm['tokens_per_second']:,.0f} tokens/s",
            "—",
            f"bpb {lm['bpb']:.3f}",
        ],
    ]
    failed = "; ".join(check["failed"][:3])
    return {
        "title": f"workbench on {device}: check, expmv, the exp-Markov layer, diagnose, lm ({size} sizes)",
        "columns": ["workload", "device", "against", "ratio", "agreement"],
        "rows": rows,
        "notes": f"{machine['device']}, torch {machine['torch']}, numpy {machine['numpy']}, {machine['date']}; "
        f"whole run {total:.0f} s" + (f"; failed rows: {failed}" if failed else ""),
    }


def _section(report: dict) -> str:
    lines = [f"## {report['title']} (`workbench bench gpu`)", "", report["notes"], ""]
    lines.append("| " + " | ".join(report["columns"]) + " |")
    lines.append("|" + "---|" * len(report["columns"]))
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in report["rows"]]
    return "\n".join(lines)
