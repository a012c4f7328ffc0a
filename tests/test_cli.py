import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.cli import main

FIXTURE_COURSE = Path(__file__).parent / "fixtures" / "course"


def run(*args, extra_path=None):
    env = dict(os.environ, COLUMNS="200")
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env, timeout=600
    )


def test_check_json_is_one_document_and_exits_zero():
    out = run("check", "--json", "--seed", "3", "--area", "structure")
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["passed"] is True and document["seed"] == 3
    assert document["summary"]["failed"] == 0
    assert {r["backend"] for r in document["results"]} >= {"sympy", "numpy"}
    assert all(r["residual"] <= r["tolerance"] for r in document["results"])


def test_check_table_lists_passing_identities(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # a narrower table folds the names (pytest-xdist's workers run at 80)
    assert main(["check", "expmv"]) == 0
    text = capsys.readouterr().out
    assert "expmv.rank_one.closed_form" in text and "pass" in text and "FAIL" not in text


def test_list_json_has_name_area_source_statement():
    out = run("list", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) >= 7
    for row in rows:
        assert {"name", "area", "source", "statement"} <= row.keys()
        assert all(row[k] for k in ("name", "area", "source", "statement"))


def test_broken_outside_course_makes_check_exit_one_and_shows_residual():
    # A course registered by its own dist-info entry point (discovered, not injected).
    out = run("check", "--area", "fixture", extra_path=FIXTURE_COURSE)
    assert out.returncode == 1
    assert "fixture.broken.arithmetic" in out.stdout
    assert "FAIL fixture.broken.arithmetic [numpy]: residual 1 exceeds tolerance 1.00e-12" in out.stdout
    assert "symbolic claims failed: 1 + 1 = 3" in out.stdout
    assert "ArithmeticError: verification blew up on purpose" in out.stdout


def test_broken_course_json_carries_the_residual():
    out = run("check", "--json", "--area", "fixture", extra_path=FIXTURE_COURSE)
    assert out.returncode == 1
    document = json.loads(out.stdout)
    assert document["passed"] is False
    numeric = [r for r in document["results"] if r["name"] == "fixture.broken.arithmetic" and r["backend"] == "numpy"]
    assert numeric[0]["residual"] == 1.0 and numeric[0]["passed"] is False


def test_derive_prints_checked_steps(capsys):
    assert main(["derive", "continuum.softmax.small_beta"]) == 0
    text = capsys.readouterr().out
    assert "✓" in text and "✗" not in text and "C₁ = N⁻¹ S (I − N⁻¹ 1 1ᵀ)" in text


def test_derive_latex(capsys):
    assert main(["derive", "markov.dirichlet_form.gauss", "--format", "latex"]) == 0
    text = capsys.readouterr().out
    assert r"\frac" in text and r"$\checkmark$ 2. π is stationary" in text
    assert r"\[ \pi^\top\mathsf P = \pi^\top" in text and "proved for general N:" in text


def test_derive_shows_statements_and_reasons_not_expanded_matrices(capsys):
    assert main(["derive", "markov.dirichlet_form.gauss"]) == 0
    text = capsys.readouterr().out
    assert "✓ 2. π is stationary: πᵀP = πᵀ" in text
    assert r"   statement: \pi^\top\mathsf P = \pi^\top" in text
    assert "   because:   πᵀP = pᵀD⁻¹K/1ᵀp" in text
    assert "checked on the symbolic instance (3×3 matrices): ✓" in text
    assert "proved for general N: ✓" in text
    assert "⎡" not in text and "K₀₁" not in text  # no pretty-printed instance


def test_derive_expand_prints_the_instance(capsys):
    assert main(["derive", "markov.dirichlet_form.gauss", "--expand"]) == 0
    text = capsys.readouterr().out
    assert "statement:" in text and "⎡" in text and "K₀₁" in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check", "--area", "nope"], "workbench check: error: area must be one of"),
        (["check", "no.such.identity"], "workbench check: error: name must be an identity or a dotted prefix"),
        (["derive", "nope"], "workbench derive: error: name must be a series (bch, symmetric-bch, bch3, commutator"),
        (["derive", "markov.dirichlet_form.gauss", "--format", "json"], "apply to series, not to catalogue identities"),
        (
            ["derive", "markov.dirichlet_form.gauss", "--format", "latex", "--expand"],
            "--expand applies to --format text",
        ),
        (["derive", "bch", "--expand"], "--expand applies to catalogue identities, not to series"),
        (["lab", "--dir", "/nonexistent"], "workbench lab: error: --dir must be a folder of course notebooks"),
    ],
)
def test_bad_arguments_exit_two_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_scale_is_rejected_by_the_parser():
    out = run("check", "--scale", "huge")
    assert out.returncode == 2 and "invalid choice: 'huge'" in out.stderr


def test_console_script_and_module_agree():
    out = subprocess.run(["workbench", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("workbench 0.")


def test_bench_bch_small_json(tmp_path, monkeypatch):
    # A degree below the table measures that degree alone; without WORKBENCH_BCH_PROGRAM the C program's column
    # shows issue 20's figures (none at degree 8), with it the program is run (here a stand-in script).
    out = run("bench", "bch", "--max-degree", "8", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [row[0] for row in report["rows"]] == [8]
    assert report["columns"][2] == "Hofstätter bch" and report["rows"][0][2] == "—"
    assert "not run (degree 20 not in the table)" in report["notes"]
    stand_in = tmp_path / "bch"
    stand_in.write_text("#!/bin/sh\nexit 0\n")
    stand_in.chmod(0o755)
    from workbench.benchmarks import bch as bench

    monkeypatch.setenv("WORKBENCH_BCH_PROGRAM", str(stand_in))
    row = bench.run(max_degree=6, runs=1)["rows"][0]
    assert row[0] == 6 and row[2].endswith("(measured)")
    stand_in.chmod(0o644)
    with pytest.raises(ValueError, match="WORKBENCH_BCH_PROGRAM must name an executable built copy"):
        bench.run(max_degree=6, runs=1)


def test_bench_unknown_name(capsys):
    assert main(["bench", "nope"]) == 2
    assert (
        "workbench bench: error: name must be one of bch, bch-fusion, diagnose, diffusion-map, exp-markov, expmv, gpu, rank1, subspaces, transport-gram, got 'nope'"
        in capsys.readouterr().err
    )


def test_bench_bch_fusion_toggle_and_tables(monkeypatch, capsys):
    # The seed's toggle: GAUGE_BCH_FUSION=0 skips the micro-experiment and says so; otherwise both tables
    # (the fusion table and the residual-stack latency table) are printed.
    monkeypatch.setenv("GAUGE_BCH_FUSION", "0")
    assert main(["bench", "bch-fusion"]) == 0
    out = capsys.readouterr().out
    assert "skipped (GAUGE_BCH_FUSION=0)" in out
    monkeypatch.delenv("GAUGE_BCH_FUSION")
    assert main(["bench", "bch-fusion"]) == 0
    out = capsys.readouterr().out
    assert "BCH fusion of 4 skew exponentials" in out and "Residual stack fusion" in out


def test_bench_exp_markov_small_json():
    # The layer kernel, the dense exponential, scipy and the engine agree (the benchmark's own error column).
    import workbench.benchmarks.exp_markov as bench

    report = bench.run(sizes=(64,), d=4)
    assert report["columns"][0] == "n" and report["rows"][0][0] == 64
    assert float(report["rows"][0][-1]) < 1e-12
