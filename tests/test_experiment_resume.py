"""Interrupted experiment runs: marked as such, resumed to the uninterrupted run's results, --force, refusals.

Every run here is real and tiny (two conditions of a quick-preset config cut to a few hundred steps, one torch
thread).  A run is interrupted the way a user does it: ``python -m workbench experiment ...`` in a subprocess,
sent SIGINT once its ``run.json`` lists the first condition as done (the second condition trains for about
a second, so the signal lands inside it).

Oracle of the resume tests: the uninterrupted run of the same command.  Both experiments seed every condition
on its own (``torch.manual_seed(config.seed)`` and the data generators at the condition's start), and torch on
the CPU with one thread is deterministic on one machine, so every field of every row except the wall-clock
``seconds``/``seconds_per_step`` is expected to be bitwise equal; the comparison allows a relative 1e-12, far
below the ~1e-7 that any change of the float32 training arithmetic would leave, so it still proves the same
computation.  Finished conditions are read back from JSON, which keeps doubles exactly (shortest repr).
"""

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from workbench.cli import main  # noqa: E402  (after the torch skip)

torch.set_num_threads(1)

# Two conditions each; --steps makes a condition last about half a second, so SIGINT lands in the second.
SWISS = ["experiment", "swiss-sit", "--operator", "DMAP", "--operator", "ATTN", "--order", "mhsa-ffn"]
SWISS += ["--set", "n_generate=32", "--set", "euler_steps=2", "--steps", "100", "--no-progress"]
INDUCTION = ["experiment", "induction", "--operator", "DMAP", "--operator", "ATTN", "--architecture", "attn-only"]
INDUCTION += ["--set", "vocab_size=8", "--set", "half_length=4", "--set", "d_model=8", "--set", "eval_batch=4"]
INDUCTION += ["--set", "batch=4", "--set", "log_every=100", "--steps", "200", "--no-progress"]
WALL_CLOCK = ("seconds", "seconds_per_step")
FIGURES = {"swiss-sit": ("samples.png", "grid.png"), "induction": ("loss_curves.png", "induction_heads.png")}


def run_json(out: Path) -> dict:
    return json.loads((out / "run.json").read_text(encoding="utf-8"))


def interrupt_after_first_condition(argv: list[str], out: Path, timeout: float = 120.0) -> tuple[int, str]:
    """Run ``workbench argv --out out`` in a subprocess; SIGINT it once run.json lists one condition done."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    command = [sys.executable, "-m", "workbench", *argv, "--out", str(out)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    deadline, sent = time.monotonic() + timeout, False
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                done = run_json(out)["done"]  # written atomically: never a half file
            except (OSError, ValueError):
                done = []
            if done:
                proc.send_signal(signal.SIGINT)
                sent = True
                break
            time.sleep(0.02)
        _, stderr = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert sent, f"the run ended before its first condition was done: {stderr}"
    return proc.returncode, stderr


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory) -> dict[str, tuple[Path, int, str]]:
    """One interrupted run per experiment: its directory, exit status and stderr (read-only for the tests)."""
    root = tmp_path_factory.mktemp("interrupted")
    runs = {}
    for name, argv in (("swiss-sit", SWISS), ("induction", INDUCTION)):
        status, stderr = interrupt_after_first_condition(argv, root / name)
        runs[name] = (root / name, status, stderr)
    return runs


def fresh_copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    shutil.copytree(source, target)
    return target


def rows_of(document: dict) -> list[dict]:
    rows = document["rows"] if "rows" in document else document["runs"]
    return [{k: v for k, v in row.items() if k not in WALL_CLOCK} for row in rows]


def assert_same(a, b, where="row"):
    """Equal structure and strings; floats equal to a relative 1e-12 (see the module docstring)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0), (where, a, b)
    else:
        assert a == b, (where, a, b)


def last_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- (1) an interrupted run is marked interrupted and keeps its finished conditions ------------------------


@pytest.mark.parametrize("name", ["swiss-sit", "induction"])
def test_sigint_marks_the_run_interrupted_and_keeps_the_first_condition(interrupted, name):
    out, status, stderr = interrupted[name]
    assert status == 130 and "Traceback" not in stderr, stderr
    first = "DMAP-mhsa-ffn" if name == "swiss-sit" else "DMAP-attn-only"
    second = first.replace("DMAP", "ATTN")
    record = run_json(out)
    assert record["status"] == "interrupted" and record["experiment"] == name
    assert record["conditions"] == [first, second] and record["done"] == [first]
    assert record["config"] == json.loads((out / "config.json").read_text())
    assert {"workbench", "python", "numpy", "torch"} <= set(record["sessions"][0]["versions"])
    # kept: the run's record and settings, and the finished condition's state dict and row; no results yet
    assert sorted(p.name for p in out.iterdir()) == sorted(["run.json", "config.json", f"{first}.pt", f"{first}.json"])
    assert torch.load(out / f"{first}.pt", weights_only=True)  # a readable state dict
    line = stderr.strip().splitlines()[-1]
    assert line.startswith(f"workbench experiment: interrupted; the run directory {out} keeps 1 of 2 conditions")
    assert f"marked interrupted in run.json; continue it with: workbench experiment {name} --resume {out}" in line


# --- (2) --resume gives the uninterrupted run's results ----------------------------------------------------


@pytest.mark.parametrize(("name", "argv"), [("swiss-sit", SWISS), ("induction", INDUCTION)])
def test_resume_gives_the_rows_of_an_uninterrupted_run(interrupted, name, argv, tmp_path, capsys):
    resumed = fresh_copy(interrupted[name][0], tmp_path)
    # the same options as the interrupted run: accepted (they agree with its config.json)
    assert main([*argv, "--resume", str(resumed), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    reference = tmp_path / "uninterrupted"
    assert main([*argv, "--out", str(reference), "--json"]) == 0
    expected = json.loads(capsys.readouterr().out)

    assert_same(rows_of(document), rows_of(expected))
    assert_same(rows_of(json.loads((resumed / "results.json").read_text())), rows_of(expected))
    assert document["checks"] == expected["checks"]
    assert (resumed / "table.md").read_text() == (reference / "table.md").read_text()
    record = run_json(resumed)
    assert record["status"] == "complete" and record["done"] == record["conditions"]
    assert len(record["sessions"]) == 2  # the interrupted session and the resumed one
    assert sorted(p.name for p in resumed.iterdir()) == sorted(p.name for p in reference.iterdir())
    # The figures, byte for byte (same data and the same matplotlib give the same PNG).  For swiss-sit this
    # checks that the kept condition's samples were drawn again from its EMA state dict with the sampling
    # seed: samples.png shows the kept DMAP condition's snapshots, grid.png both conditions' samples.
    for figure in FIGURES[name]:
        assert (resumed / figure).read_bytes() == (reference / figure).read_bytes(), figure


# --- (3) --force replaces the previous run's files and only those ------------------------------------------


def test_force_removes_the_previous_runs_files_and_keeps_others(interrupted, tmp_path, capsys):
    out = fresh_copy(interrupted["swiss-sit"][0], tmp_path)
    (out / "notes.txt").write_text("mine")
    (out / "figures").mkdir()
    one = [*SWISS[:4], "--order", "ffn-mhsa", *SWISS[8:]]  # one condition, DMAP ffn-mhsa, not the old ones
    assert main([*one, "--out", str(out)]) == 2  # not empty: refused, nothing touched
    message = last_line(capsys.readouterr().err)
    assert "out must be a new or empty directory" in message and "(an interrupted run)" in message
    assert "--force" in message and "--resume" in message and run_json(out)["status"] == "interrupted"

    # a run of another experiment is not replaced: its files are not the ones an induction run writes
    assert main([*INDUCTION, "--out", str(out), "--force"]) == 2
    assert "out must hold a run of induction to replace it with force" in last_line(capsys.readouterr().err)

    assert main([*one, "--out", str(out), "--force"]) == 0
    names = {p.name for p in out.iterdir()}
    assert "DMAP-mhsa-ffn.pt" not in names and "DMAP-mhsa-ffn.json" not in names  # the old run's checkpoint
    assert {"notes.txt", "figures", "DMAP-ffn-mhsa.pt", "DMAP-ffn-mhsa.json", "results.json"} <= names
    assert (out / "notes.txt").read_text() == "mine"
    record = run_json(out)
    assert record["status"] == "complete" and record["done"] == ["DMAP-ffn-mhsa"] and len(record["sessions"]) == 1
    assert [r["order"] for r in json.loads((out / "results.json").read_text())["rows"]] == ["ffn-mhsa"]


# --- (4) what --resume refuses: one line, exit 2 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--steps", "5"], "--steps 5 conflicts with the run in"),
        (["--set", "n_generate=64"], "--set n_generate=64 conflicts with the run in"),
        (["--preset", "paper"], "--preset paper conflicts with the run in"),
        (["--operator", "DMAP"], "--operator DMAP conflicts with the run in"),
        (["--order", "ffn-mhsa"], "--order ffn-mhsa conflicts with the run in"),
        (["--force"], "--force does not apply with --resume"),
        (["--out", "elsewhere"], "--out does not apply with --resume"),
    ],
)
def test_resume_refuses_options_that_change_the_run(interrupted, extra, message, tmp_path, capsys):
    resumed = fresh_copy(interrupted["swiss-sit"][0], tmp_path)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in resumed.iterdir())
    assert main(["experiment", "swiss-sit", "--resume", str(resumed), *extra]) == 2
    assert message in last_line(capsys.readouterr().err)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in resumed.iterdir()) == before  # nothing written


def test_resume_refuses_another_experiment_a_complete_run_and_a_non_run_directory(interrupted, tmp_path, capsys):
    resumed = fresh_copy(interrupted["swiss-sit"][0], tmp_path)
    assert main(["experiment", "induction", "--resume", str(resumed)]) == 2
    assert "name must be the experiment of the run in" in last_line(capsys.readouterr().err)

    assert main(["experiment", "swiss-sit", "--resume", str(resumed), "--no-progress"]) == 0  # no options: fine
    capsys.readouterr()
    assert main(["experiment", "swiss-sit", "--resume", str(resumed)]) == 2
    assert "which is complete: nothing to resume" in last_line(capsys.readouterr().err)

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "results.json").write_text("{}")  # e.g. a run written before run records existed
    for target, text in [
        (plain, "--resume must be a run directory (one holding run.json)"),
        (tmp_path / "missing", "--resume must be a run directory, got a path that does not exist"),
        (plain / "results.json", "--resume must be a run directory, got an existing file"),
    ]:
        assert main(["experiment", "swiss-sit", "--resume", str(target)]) == 2
        assert text in last_line(capsys.readouterr().err)
    (plain / "run.json").write_text("{not json")
    assert main(["experiment", "swiss-sit", "--resume", str(plain)]) == 2
    assert "--resume must be a run directory with a readable run.json" in last_line(capsys.readouterr().err)


def test_a_failed_run_is_marked_failed_with_its_error(tmp_path):
    """A run that raises is recorded as failed (with the error) and is resumable; only a finished run is complete."""
    from workbench.experiments import RunLog, resumable_run

    plan = dict(experiment="toy", config={"steps": 1}, conditions=["a"], selection={}, artefacts=set())
    with pytest.raises(OSError, match="No space left"), RunLog.open(tmp_path / "run", **plan):
        raise OSError(28, "No space left on device")
    record = resumable_run(tmp_path / "run")
    assert record["status"] == "failed" and record["error"] == "OSError: [Errno 28] No space left on device"
    with pytest.raises(ValueError, match=r"config must be the one recorded in .*: steps=1 recorded, 2 given"):
        RunLog.open(tmp_path / "run", **{**plan, "config": {"steps": 2}}, resume=True)
    with pytest.raises(ValueError, match="force and resume exclude each other"):
        RunLog.open(tmp_path / "run", **plan, force=True, resume=True)


# --- atomic writes and the documentation of the options -----------------------------------------------------


def test_every_file_of_a_run_arrives_by_an_atomic_replace(tmp_path, monkeypatch, capsys):
    """Spy on os.replace during a real run: every file in the run directory (checkpoints, rows, run.json,
    results, table, figures) was renamed into place from a temporary file beside it, and none is left over."""
    replaced = []
    real_replace = os.replace

    def spy(source, target):
        replaced.append((Path(source), Path(target)))
        return real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    out = tmp_path / "run"
    assert main([*SWISS[:6], *SWISS[8:], "--steps", "2", "--out", str(out)]) == 0  # both orders of DMAP, ATTN
    capsys.readouterr()
    files = {p.name for p in out.iterdir()}
    assert {t.name for _, t in replaced} == files
    assert all(s.parent == t.parent == out and s.name.startswith(f".{t.name}.") for s, t in replaced)
    assert {"DMAP-ffn-mhsa.pt", "ATTN-mhsa-ffn.json", "table.md", "grid.png", "samples.png", "run.json"} <= files
    assert not [name for name in files if name.endswith(".tmp")]


def test_the_help_documents_force_and_resume(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert exit_.value.code == 0
    assert "non-empty --out: the files a run writes" in text and "other files are left as they are" in text
    assert "--resume DIR continue the unfinished run in DIR" in text and "uninterrupted run's" in text


def test_resuming_with_other_library_versions_warns(tmp_path):
    """A condition run by other versions (torch, numpy, ...) may not reproduce the uninterrupted run: say so."""
    from workbench.experiments import RunLog

    plan = dict(experiment="toy", config={"steps": 1}, conditions=["a"], selection={}, artefacts=set())
    with pytest.raises(KeyboardInterrupt), RunLog.open(tmp_path / "run", **plan):
        raise KeyboardInterrupt
    record = run_json(tmp_path / "run")
    record["sessions"][0]["versions"]["numpy"] = "1.0.0"
    (tmp_path / "run" / "run.json").write_text(json.dumps(record))
    with pytest.warns(RuntimeWarning, match="resuming the run in .* started with .*'numpy': '1.0.0'"):
        RunLog.open(tmp_path / "run", **plan, resume=True)
    with pytest.raises(ValueError, match="out must be the run directory to resume, got None"):
        RunLog.open(None, **plan, resume=True)
