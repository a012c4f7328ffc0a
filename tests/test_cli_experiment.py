"""``workbench experiment``: argument checks, a tiny end-to-end run, and (slow) both quick presets.

The tiny runs use ``--steps`` small enough to take seconds; they check the plumbing (run directory, JSON,
exit status from the structural checks), not what a model learns.
"""

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")

from workbench.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["experiment", "mnist"],
            "name must be one of swiss-sit, induction, sit-transfer, lm, transfer, givens-mixer, log-lens, "
            "long-context, magnus-fusion, spd-certified, got 'mnist'",
        ),
        (["experiment", "lm", "--preset", "huge"], "--preset must be one of quick, paper, gpu, got 'huge'"),
        (["experiment", "transfer", "--steps", "3"], "--steps does not apply to this experiment (no steps field)"),
        (["experiment", "lm", "--set", "operator=SOFTMAX"], "operator must be one of 'DMAP', 'DMTN', 'ATAP', 'ATTN'"),
        (["experiment", "induction", "--order", "ffn-mhsa"], "--order does not apply to the induction experiment"),
        (["experiment", "swiss-sit", "--operator", "SOFTMAX"], "--operator must be one of DMAP, DMTN, ATAP, ATTN"),
        (["experiment", "induction", "--operator", "ATAP"], "--operator must be one of ATTN, DMTN, DMAP, got 'ATAP'"),
        (["experiment", "swiss-sit", "--steps", "0"], "steps must be an integer >= 1, got 0"),
        (["experiment", "swiss-sit", "--threads", "0"], "--threads must be an integer >= 1, got 0"),
        (["experiment", "induction", "--set", "width=3"], "--set must be FIELD=VALUE with FIELD one of"),
        (["experiment", "induction", "--set", "min_period=99"], "min_period must be an integer in [1, 8], got 99"),
    ],
)
def test_bad_arguments_exit_two_with_a_message(argv, message, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    assert message in capsys.readouterr().err


def test_swiss_sit_tiny_run_writes_its_run_directory(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["experiment", "swiss-sit", "--operator", "DMAP", "--operator", "ATTN", "--order", "mhsa-ffn"]
    status = main([*argv, "--steps", "3", "--out", str(out), "--json"])
    document = json.loads(capsys.readouterr().out)
    assert status == 0  # structural checks hold for any weights; the fidelity band is informational here
    assert [(r["operator"], r["order"]) for r in document["rows"]] == [("DMAP", "mhsa-ffn"), ("ATTN", "mhsa-ffn")]
    dmap = document["rows"][0]
    assert dmap["rho_skew"] == 0.0 and dmap["eps_rev"] < 1e-10  # exact link: reversible, skew-free
    assert {"results.json", "table.md"} <= {p.name for p in out.iterdir()}
    assert json.loads((out / "results.json").read_text())["rows"][1]["operator"] == "ATTN"


def test_induction_tiny_run_prints_the_table(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["experiment", "induction", "--operator", "DMAP", "--architecture", "attn-only", "--steps", "4"]
    assert main([*argv, "--set", "min_period=3", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["min_period"] == 3
    assert "| DMAP | attn-only |" in text and f"run directory: {out}" in text
    assert (out / "results.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        *("swiss-sit", "induction", "sit-transfer", "lm", "transfer"),
        *("long-context", "givens-mixer", "magnus-fusion", "spd-certified", "log-lens"),
    ],
)
def test_quick_presets_run_end_to_end(name, tmp_path, capsys):
    out = Path(tmp_path) / name
    assert main(["experiment", name, "--preset", "quick", "--out", str(out), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["checks"] and (out / "results.json").is_file()
