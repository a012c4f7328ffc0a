"""Tampered runs (issue 40): every file read back from a run directory, edited or damaged, is one line of refusal.

A run directory is the user's to edit, and disks damage files.  Whatever the workbench reads back on ``--resume``,
``--force``, a sweep's continuation or a transfer's ``pretrained`` run (``run.json``, ``config.json``, a condition's
row and ``.pt`` state dict, ``sweep.json``, a task's ``results.json``, the lines of ``records.jsonl``) must, when
tampered, be refused in one line that names the file and says what it must be and what it holds: exit status 2,
``workbench COMMAND: error: ...``, never a traceback (an ``AttributeError``, ``KeyError``, ``UnpicklingError`` or
``RuntimeError`` escaping :func:`workbench.cli.main` fails the test).

The runs are real and tiny, made once for the module: a byte-level lm of six steps (under a second on one thread),
the Table-3 transfer that starts from it (``pretrained``), the same lm as the one task of a sweep (written by
``workbench experiment`` into the task's folder, so the sweep keeps it and starts no Dask cluster), and a corpus
run of three toy windows.  Each test copies one, marks it interrupted where a resume needs that (a valid edit), and
tampers one file.  Oracle: the documented exit status and message shape of the command line (see
``workbench.cli.main``); the words each message must carry are those of the file and of what was found in it.
"""

import json
import os
import shutil
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from workbench.cli import main  # noqa: E402  (after the torch skip)
from workbench.experiments import run_corpus  # noqa: E402

torch.set_num_threads(1)

LM = ["experiment", "lm", "--steps", "6", "--set", "log_every=3", "--seed", "0", "--no-progress"]
TRANSFER = ["experiment", "transfer", "--set", "pretrain_steps=6", "--set", "adapt_steps=[2,1,1]"]
TRANSFER += ["--set", "warmup=5", "--set", "log_every=3", "--no-progress"]
SWEEP = ["sweep", "lm", "--set", "steps=6", "--set", "log_every=3", "--seeds", "0", "--no-progress"]
#: Bytes that are neither a zip archive nor a pickle (torch raises UnpicklingError on them).
RANDOM_BYTES = np.random.default_rng(40).bytes(2048)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The complete runs every test copies (read-only for the tests)."""
    root = tmp_path_factory.mktemp("runs")
    lm, transfer, sweep = root / "lm", root / "transfer", root / "sweep"
    assert main([*LM, "--out", str(lm)]) == 0
    assert main([*TRANSFER, "--set", f"pretrained={lm}", "--out", str(transfer)]) == 0
    # A sweep stopped after its one task finished and before it recorded that: its settings and no task yet.  Run
    # again, it finds the task complete on disk and keeps it (no Dask cluster is started for nothing to run).
    assert main([*LM, "--out", str(sweep / "base" / "seed-0")]) == 0
    settings = {"preset": "quick", "grid": {}, "seeds": [0], "overrides": {"steps": 6, "log_every": 3}}
    (sweep / "sweep.json").write_text(json.dumps({"experiment": "lm", **settings, "selection": {}, "tasks": []}))
    assert main([*SWEEP, "--out", str(sweep)]) == 0
    assert json.loads((sweep / "sweep.json").read_text())["tasks"][0]["source"] == "kept"
    return {"lm": lm, "transfer": transfer, "sweep": sweep}


def copy_of(run: Path, tmp_path: Path, status: str | None = "interrupted") -> Path:
    """A copy of ``run``, its run.json marked ``status`` (an interrupted run is one a resume continues)."""
    out = tmp_path / run.name
    shutil.copytree(run, out)
    if status is not None:
        edit_json(out / "run.json", lambda record: {**record, "status": status})
    return out


def edit_json(path: Path, change) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")


def without_digests(run: Path) -> None:
    """Drop the SHA-256 of the kept files from run.json, as in a run written before they were recorded."""
    edit_json(run / "run.json", lambda record: {k: v for k, v in record.items() if k != "sha256"})


def refused(argv: list[str], capsys, file: Path, *found: str) -> str:
    """Run the command line; assert exit 2 and one line naming ``file`` and carrying ``found``; return the line."""
    status = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert status == 2, captured.err
    assert "Traceback" not in captured.err + captured.out
    assert len(lines) == 1 and lines[0].startswith(f"workbench {argv[0]}: error: "), captured.err
    assert str(file) in lines[0], lines[0]
    for words in found:
        assert words in lines[0], lines[0]
    return lines[0]


def tamper_text(text: str):
    return lambda path: path.write_text(text, encoding="utf-8")


def tamper_record(**changes):
    return lambda path: edit_json(path, lambda record: {**record, **changes})


def cut_short(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")


def not_utf8(path: Path) -> None:
    path.write_bytes(b"\xff\xfe" + path.read_bytes())


def without(key: str):
    return lambda path: edit_json(path, lambda record: {k: v for k, v in record.items() if k != key})


def a_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()
    (path / "inside.txt").write_text("a folder where a file was")


# ---- run.json and config.json of a resumed run ---------------------------------------------------------------

RUN_RECORD_TAMPERING = {
    "not JSON": (tamper_text("{not json"), "text that is not JSON"),
    "cut short": (cut_short, "JSON cut short"),
    "not UTF-8": (not_utf8, "not UTF-8"),
    "nested too deeply": (tamper_text("[" * 100_000), "nested too deeply"),
    "a list": (tamper_text("[1, 2]"), "a list ([1, 2])"),
    "a number": (tamper_text("3"), "a number (3)"),
    "status missing": (without("status"), "an object without 'status'"),
    "status a number": (tamper_record(status=3), "'status' is 3 (a number) where a string is expected"),
    "status unknown": (tamper_record(status="paused"), "'status' is \"paused\" where one of running"),
    "config a string": (tamper_record(config="x"), "'config' is \"x\" (a string) where an object is expected"),
    "done a number": (tamper_record(done=3), "'done' is 3 (a number) where a list of strings is expected"),
    "done of numbers": (tamper_record(done=[3]), "'done' is [3] (a list) where a list of strings is expected"),
    "selection a list": (tamper_record(selection=[]), "'selection' is [] (a list) where an object of lists"),
    "sessions of numbers": (tamper_record(sessions=[3]), "'sessions' is [3] (a list) where a list of objects"),
    "digests a number": (tamper_record(sha256=3), "'sha256' is 3 (a number) where an object of strings"),
}


@pytest.mark.parametrize("case", RUN_RECORD_TAMPERING)
def test_a_tampered_run_record_is_refused_on_resume(case, runs, tmp_path, capsys):
    tamper, found = RUN_RECORD_TAMPERING[case]
    out = copy_of(runs["transfer"], tmp_path)
    tamper(out / "run.json")
    line = refused(["experiment", "transfer", "--resume", str(out), "--no-progress"], capsys, out / "run.json", found)
    assert "--resume must be a run directory with a readable run.json (a run record)" in line


@pytest.mark.parametrize(
    ("tamper", "found"),
    [(tamper_text("[]"), "a list ([])"), (tamper_text('{"steps": '), "JSON cut short"), (not_utf8, "not UTF-8")],
    ids=["a list", "cut short", "not UTF-8"],
)
def test_a_tampered_config_record_is_refused_on_resume(tamper, found, runs, tmp_path, capsys):
    out = copy_of(runs["transfer"], tmp_path)
    tamper(out / "config.json")
    refused(["experiment", "transfer", "--resume", str(out)], capsys, out / "config.json", found)


def test_a_config_edited_in_both_records_is_refused_naming_the_run_record(runs, tmp_path, capsys):
    # config.json and run.json agree, so the run record's own check passes; the transfer's config class does not.
    out = copy_of(runs["transfer"], tmp_path)
    for name in ("run.json", "config.json"):
        (out / name).write_text((out / name).read_text().replace('"pretrain_steps"', '"nosuch"'))
    refused(
        ["experiment", "transfer", "--resume", str(out)],
        capsys,
        out / "run.json",
        "must record the settings of a transfer run",
        "unknown nosuch",
    )


# ---- a condition's row and state dict ------------------------------------------------------------------------

ROW_TAMPERING = {
    "not JSON": (tamper_text("{not json"), "text that is not JSON"),
    "cut short": (cut_short, "JSON cut short"),
    "not UTF-8": (not_utf8, "not UTF-8"),
    "a list": (tamper_text("[]"), "a list ([])"),
    "keys missing": (tamper_text("{}"), "a file with other contents"),
    "a key of another type": (tamper_record(states=3), "a file with other contents"),
    "a directory": (a_directory, "got a directory"),
}


@pytest.mark.parametrize("case", ROW_TAMPERING)
def test_a_tampered_row_is_refused_on_resume(case, runs, tmp_path, capsys):
    tamper, found = ROW_TAMPERING[case]
    out = copy_of(runs["transfer"], tmp_path)
    tamper(out / "A0.json")
    refused(["experiment", "transfer", "--resume", str(out)], capsys, out / "A0.json", "the row", found)


def random_bytes(path: Path) -> None:
    path.write_bytes(RANDOM_BYTES)


def other_shapes(path: Path) -> None:
    state = torch.load(path, weights_only=True)
    name = next(iter(state))
    state[name] = torch.zeros(*(n + 1 for n in state[name].shape))
    torch.save(state, path)


def keys_missing(path: Path) -> None:
    state = torch.load(path, weights_only=True)
    torch.save({k: v for i, (k, v) in enumerate(state.items()) if i % 2}, path)


def not_a_dict(path: Path) -> None:
    torch.save([torch.zeros(2)], path)


STATE_TAMPERING = {
    "random bytes": (random_bytes, True, "a file with other contents"),
    "random bytes, no digest": (random_bytes, False, "a file torch.load cannot read (UnpicklingError"),
    "other shapes, no digest": (other_shapes, False, "a state dict with the shapes"),
    "keys missing, no digest": (keys_missing, False, "a state dict without"),
    "not a dict, no digest": (not_a_dict, False, "a saved list, not a dict of tensors"),
    "another stage's weights": (lambda path: shutil.copy(path.with_name("M1.pt"), path), True, "other contents"),
    "a directory": (a_directory, True, "got a directory"),
}


@pytest.mark.parametrize("case", STATE_TAMPERING)
def test_a_tampered_state_dict_is_refused_on_resume(case, runs, tmp_path, capsys):
    tamper, digests, found = STATE_TAMPERING[case]
    out = copy_of(runs["transfer"], tmp_path)
    if not digests:
        without_digests(out)  # then the state dict itself is what torch and the model refuse
    tamper(out / "A0.pt")
    refused(["experiment", "transfer", "--resume", str(out)], capsys, out / "A0.pt", found)


def test_force_replaces_a_run_whose_record_cannot_be_read(runs, tmp_path, capsys):
    # --force reads run.json only to learn whose run it replaces; an unreadable one is no record, and a folder that
    # holds nothing but the files an lm run writes is replaced (it used to raise RecursionError here).
    out = copy_of(runs["lm"], tmp_path, status=None)
    (out / "run.json").write_text("[" * 100_000)
    assert main([*LM, "--out", str(out), "--force"]) == 0, capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["status"] == "complete"


# ---- a transfer's pretrained lm run --------------------------------------------------------------------------

PRETRAINED_TAMPERING = {
    "run.json not JSON": ("run.json", tamper_text("{not json"), True, "text that is not JSON"),
    "run.json a list": ("run.json", tamper_text("[]"), True, "a list ([])"),
    "config a string": ("run.json", tamper_record(config="x"), True, "'config' is \"x\" (a string)"),
    "done a number": ("run.json", tamper_record(done=3), True, "'done' is 3 (a number)"),
    "ATTN.pt random bytes": ("ATTN.pt", random_bytes, True, "a file with other contents"),
    "ATTN.pt random bytes, no digest": ("ATTN.pt", random_bytes, False, "torch.load cannot read"),
    "ATTN.pt other shapes, no digest": ("ATTN.pt", other_shapes, False, "a state dict with the shapes"),
    "ATTN.pt a directory": ("ATTN.pt", a_directory, True, "got a directory"),
}


@pytest.mark.parametrize("case", PRETRAINED_TAMPERING)
def test_a_tampered_pretrained_run_is_refused(case, runs, tmp_path, capsys):
    name, tamper, digests, found = PRETRAINED_TAMPERING[case]
    lm = copy_of(runs["lm"], tmp_path, status=None)
    if not digests:
        without_digests(lm)
    tamper(lm / name)
    argv = [*TRANSFER, "--set", f"pretrained={lm}", "--out", str(tmp_path / "transfer")]
    refused(argv, capsys, lm / name, found)


# ---- a sweep's record and its kept tasks ---------------------------------------------------------------------

SWEEP_TAMPERING = {
    "sweep.json not JSON": ("sweep.json", tamper_text("{not json"), "text that is not JSON"),
    "sweep.json a list": ("sweep.json", tamper_text("[]"), "a list ([])"),
    "tasks an object": ("sweep.json", tamper_record(tasks={}), "'tasks' is {} (an object)"),
    "tasks a number": ("sweep.json", tamper_record(tasks=3), "'tasks' is 3 (a number)"),
    "a task a number": ("sweep.json", tamper_record(tasks=[3]), "'tasks' is [3] (a list) where a list of objects"),
    "task run.json a list": ("base/seed-0/run.json", tamper_text("[]"), "a list ([])"),
    "task results.json empty": (
        "base/seed-0/results.json",
        tamper_text("{}"),
        "a complete lm run, got an object the experiment's rows cannot read",
    ),
    "task results.json cut": ("base/seed-0/results.json", cut_short, "JSON cut short"),
}


@pytest.mark.parametrize("case", SWEEP_TAMPERING)
def test_a_tampered_sweep_is_refused_before_any_task_runs(case, runs, tmp_path, capsys):
    name, tamper, found = SWEEP_TAMPERING[case]
    out = copy_of(runs["sweep"], tmp_path, status=None)
    tamper(out / name)
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    refused([*SWEEP, "--out", str(out)], capsys, out.resolve() / name, found)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before  # nothing written, nothing removed


# ---- records.jsonl of a corpus run (workbench diagnose --corpus ... --resume) --------------------------------

Window = namedtuple("Window", "index document start ids text")
WINDOWS = [Window(i, f"doc-{i}", 0, np.arange(3), "abc") for i in range(3)]


def measure(window):
    return {"layers": [{"layer": 0, "h": float(window.index)}]}


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "run"
    run_corpus(WINDOWS, measure, out, config={"corpus": "toy"}, progress=False)
    return out


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ('{"index": 0}', "an object without 'document', 'start', 'n_tokens'"),
        ('{"index": 0, "document": 3, "start": 0, "n_tokens": 3}', "'document' is 3 (a number)"),
        ('"abc"', 'a string ("abc")'),
        ("[" * 100_000, "unreadable"),
    ],
    ids=["keys missing", "a key of another type", "a string", "nested too deeply"],
)
def test_a_tampered_record_line_is_refused_on_resume(line, found, corpus_run, tmp_path):
    out = copy_of(corpus_run, tmp_path)
    records = out / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines()
    records.write_text("\n".join([line, *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as refusal:
        run_corpus(WINDOWS, measure, out, config={"corpus": "toy"}, resume=True, progress=False)
    message = str(refusal.value)
    assert "\n" not in message and f"line 1 of {str(records)!r}" in message and found in message, message


def test_a_state_dict_is_read_with_weights_only(runs, tmp_path, capsys):
    # A .pt whose pickle would call a function (here os.getcwd, harmless) is refused by torch.load(weights_only=True)
    # and never run: the refusal names the file (the run has no digest for it, as one written by hand).
    out = copy_of(runs["transfer"], tmp_path)
    without_digests(out)

    class Calls:
        def __reduce__(self):
            return (os.getcwd, ())

    torch.save({"weights": Calls()}, out / "A0.pt")
    refused(["experiment", "transfer", "--resume", str(out)], capsys, out / "A0.pt", "torch.load cannot read")


@pytest.mark.parametrize("option", ["--set", "--grid"])
def test_an_option_value_nested_past_the_json_depth_is_a_one_line_refusal(option, tmp_path, capsys):
    # Before: json.loads raised RecursionError on 100,000 '[' and the command printed a traceback.
    value = "[" * 100_000
    command = [*SWEEP, "--grid", f"steps={value}"] if option == "--grid" else [*LM, "--set", f"steps={value}"]
    code = main([*command, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{option} " in err and "[[[" in err and "nests lists too deeply to read; give a flat value" in err
