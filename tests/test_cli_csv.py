"""``--csv`` on every command that prints a table, and ``diagnose --plot`` in PNG, SVG or PDF.

The oracle of every CSV is the JSON document of the same run (its ``--json`` output, or the ``results.json`` /
``sweep.json`` / ``layers.json`` the run wrote beside the CSV): each CSV row is one record of the document, each
dotted column a path into it, read here by walking the path rather than by the command's own flattening.  The
comparison is exact: a number printed at full precision reads back as the same double.  Where two runs are
compared (``--json`` then ``--csv``), the computation is seeded and deterministic, and only wall-clock seconds
may differ; those columns are left out.  Every workload is the smallest the commands' own tests use (a tiny random
GPT-2 from ``checkpoints.py``, a few training steps), so each test takes seconds.
"""

import csv
import io
import json
import subprocess
import sys

import pytest
from test_cli import FIXTURE_COURSE, run

from workbench.cli import main

#: JSON spells a non-finite number as null (print_json) or as a string (Result.to_dict, jsonable); CSV leaves a
#: NaN empty and writes an infinity as Python reads it back.
_NON_FINITE = {None: ("", "inf", "-inf"), "nan": ("",), "inf": ("inf",), "-inf": ("-inf",)}


def _read_csv(text: str) -> tuple[list[str], list[dict]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    assert reader.fieldnames, "the header row is missing"
    return list(reader.fieldnames), rows


def _csv_of(argv, capsys):
    """Run ``workbench ARGV --csv`` in this process; its header and rows (nothing else may be on stdout)."""
    assert main([*argv, "--csv"]) == 0
    return _read_csv(capsys.readouterr().out)


def _leaves(record, prefix=""):
    """The dotted path of every value in ``record`` that is not itself a mapping (lists are leaves)."""
    for key, value in record.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def _at(record, path):
    """The value at the dotted ``path`` of ``record``; ``None`` where the record has no such path."""
    value = record
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _cell_holds(cell: str, value) -> bool:
    """Does the CSV ``cell`` hold the JSON ``value`` exactly?"""
    if isinstance(value, dict):  # a mapping spreads into dotted columns of its own: a column of its name is empty
        return cell == ""
    if value is None or (isinstance(value, str) and value in _NON_FINITE):
        return cell in _NON_FINITE[value] or (isinstance(value, str) and cell == value)
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, int):
        return cell == str(value)
    if isinstance(value, float):
        return float(cell) == value  # repr precision: the shortest text that reads back as the same double
    if isinstance(value, list):
        return json.loads(cell) == value
    return cell == value


def _assert_row_is_record(header, row, record, skip=()):
    """Every leaf of ``record`` is a column of ``header``, and every column of ``row`` holds the record's value."""
    assert set(_leaves(record)) - set(skip) <= set(header)
    for column in header:
        if column in skip:
            continue
        assert _cell_holds(row[column], _at(record, column)), (column, row[column], _at(record, column))


def test_the_cells_keep_every_digit_and_leave_missing_values_empty(capsys):
    # Hand-made rows with every kind of value a document holds; the oracle is Python's own float(repr(x)) == x.
    import numpy as np

    from workbench.cli._common import print_csv

    third, tiny = 1 / 3, np.float32(0.1)
    rows = [
        {"x": third, "flag": True, "nested": {"a": 1, "b": {"c": "text, with a comma"}}, "curve": [0.5, None]},
        {"x": float("nan"), "flag": False, "nested": {"a": None}, "extra": float("-inf"), "small": tiny},
    ]
    print_csv(rows, columns=("name",))
    header, (first, second) = _read_csv(capsys.readouterr().out)
    assert header == ["name", "x", "flag", "nested.a", "nested.b.c", "curve", "extra", "small"]
    assert float(first["x"]) == third and first["x"] == repr(third) and first["name"] == ""
    assert (first["flag"], second["flag"]) == ("true", "false")
    assert first["nested.b.c"] == "text, with a comma" and json.loads(first["curve"]) == [0.5, None]
    assert second["x"] == second["nested.a"] == second["nested.b.c"] == ""  # NaN, None and absent alike
    assert second["extra"] == "-inf" and float(second["small"]) == float(tiny)  # float32 widened exactly


# ---- list, check, bench ---------------------------------------------------------------------------------------


def test_list_csv_is_the_json_catalogue(capsys):
    assert main(["list", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    header, rows = _csv_of(["list"], capsys)
    assert header == ["name", "area", "source", "statement", "asymptotic", "backends", "hypotheses"]
    assert len(rows) == len(document)
    for row, record in zip(rows, document, strict=True):
        _assert_row_is_record(header, row, record)


def test_check_csv_is_the_json_results(capsys):
    argv = ["check", "expmv.rank_one.closed_form", "--seed", "2"]
    assert main([*argv, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    header, rows = _csv_of(argv, capsys)
    fixed = ["name", "area", "backend", "passed", "residual", "tolerance", "rate", "expected_rate", "seconds", "error"]
    assert header[:10] == fixed and all(column.startswith("sizes.") for column in header[10:])
    assert [(r["name"], r["backend"]) for r in rows] == [(r["name"], r["backend"]) for r in document["results"]]
    for row, record in zip(rows, document["results"], strict=True):
        _assert_row_is_record(header, row, record, skip=("seconds",))  # wall-clock: the one field two runs differ in


def test_check_csv_keeps_the_exit_status_and_the_failures(capsys):
    # The fixture course registered by its own dist-info (test_cli's): a check fails, so exit 1 as the table does.
    as_json = run("check", "--area", "fixture", "--json", extra_path=FIXTURE_COURSE)
    as_csv = run("check", "--area", "fixture", "--csv", extra_path=FIXTURE_COURSE)
    assert as_json.returncode == as_csv.returncode == 1
    header, rows = _read_csv(as_csv.stdout)
    document = json.loads(as_json.stdout)
    assert len(rows) == len(document["results"])
    for row, record in zip(rows, document["results"], strict=True):
        _assert_row_is_record(header, row, record, skip=("seconds",))
    (numeric,) = [r for r in rows if r["name"] == "fixture.broken.arithmetic" and r["backend"] == "numpy"]
    assert numeric["passed"] == "false" and float(numeric["residual"]) == 1.0
    assert any("ArithmeticError: verification blew up on purpose" in r["error"] for r in rows)


def test_check_csv_with_no_rows_still_has_its_header(capsys):
    # expmv.rank_one.closed_form states no hypothesis: --hypotheses has no outside case to run.
    header, rows = _csv_of(["check", "expmv.rank_one.closed_form", "--hypotheses"], capsys)
    assert rows == [] and header[:4] == ["name", "area", "backend", "passed"]


def test_bench_csv_is_the_report_of_the_same_run(monkeypatch, capsys):
    # A benchmark's rows hold timings, so the oracle is the report this very run returned (its --json document).
    import workbench.benchmarks.bch_fusion as bench

    reports = []
    measure = bench.run
    monkeypatch.setattr(bench, "run", lambda **options: reports.append(measure(**options)) or reports[-1])
    monkeypatch.delenv("GAUGE_BCH_FUSION", raising=False)  # =0 would skip the first table
    header, rows = _csv_of(["bench", "bch-fusion"], capsys)
    (report,) = reports
    document = json.loads(json.dumps(report))
    parts = [document, *document.get("tables", [])]
    assert len(parts) == 2 and header[0] == "table"
    expected = [(part["title"], dict(zip(part["columns"], r, strict=True))) for part in parts for r in part["rows"]]
    assert [row["table"] for row in rows] == [title for title, _ in expected]
    for row, (_, record) in zip(rows, expected, strict=True):
        assert all(_cell_holds(row[column], record.get(column)) for column in header[1:]), row  # others: empty


# ---- --json and --csv together ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["list"],
        ["check", "expmv"],
        ["bench", "bch"],
        ["diagnose", "--text", "a cat"],
        ["study", "connection-walk"],
        ["experiment", "swiss-sit"],
        ["sweep", "swiss-sit"],
    ],
)
def test_csv_with_json_is_refused_by_the_parser(argv, capsys):
    with pytest.raises(SystemExit) as refused:
        main([*argv, "--json", "--csv"])
    assert refused.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error == f"workbench {argv[0]}: error: argument --csv: not allowed with argument --json"


# ---- diagnose and study on a tiny checkpoint ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    """A random 2-layer, 4-head GPT-2 on disk (``checkpoints.py``, as test_cli_models uses) and a small corpus."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from checkpoints import gpt2_and_corpus

    directory, corpus = gpt2_and_corpus(tmp_path_factory)
    return str(directory), str(corpus)


def test_diagnose_text_csv_is_the_json_layers_and_heads(tiny_checkpoint, capsys):
    # The forward pass is float64 and deterministic: two runs on one text give the same numbers.
    argv = ["diagnose", "--model-dir", tiny_checkpoint[0], "--text", "the quick brown fox jumps over"]
    assert main([*argv, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    header, rows = _csv_of(argv, capsys)
    assert header[:3] == ["table", "layer", "head"]
    expected = [("layers", r) for r in document["layers"]] + [("heads", r) for r in document["heads"]]
    assert [row["table"] for row in rows] == [table for table, _ in expected]
    for row, (_, record) in zip(rows, expected, strict=True):
        _assert_row_is_record(header, row, record, skip=("table",))


def test_diagnose_corpus_csv_is_the_runs_layer_summary(tiny_checkpoint, tmp_path, capsys):
    model, corpus = tiny_checkpoint
    out = tmp_path / "run"
    argv = ["diagnose", "--model-dir", model, "--corpus", corpus, "--max-tokens", "16", "--limit", "2"]
    header, rows = _csv_of([*argv, "--out", str(out)], capsys)
    summary = json.loads((out / "layers.json").read_text(encoding="utf-8"))["rows"]  # the run's own summary
    assert header[:3] == ["table", "layer", "field"] and {"mean", "sd", "n"} <= set(header)
    assert len(rows) == len(summary) > 0 and {row["table"] for row in rows} == {"layers"}
    for row, record in zip(rows, summary, strict=True):
        _assert_row_is_record(header, row, record, skip=("table",))


@pytest.mark.parametrize(
    ("suffix", "magic"), [(".svg", (b"<?xml", b"<svg")), (".pdf", (b"%PDF",)), (".PNG", (b"\x89PNG",))]
)
def test_diagnose_plot_format_follows_the_suffix(tiny_checkpoint, tmp_path, suffix, magic, capsys):
    figure = tmp_path / f"heads{suffix}"
    argv = ["diagnose", "--model-dir", tiny_checkpoint[0], "--text", "the quick brown fox", "--plot", str(figure)]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["layers"]  # the report is printed beside the figure
    assert figure.read_bytes().startswith(magic)


@pytest.mark.parametrize("plot", ["figure.jpg", "figure.eps", "figure"])
def test_diagnose_plot_refuses_other_suffixes_before_the_model_runs(plot, tmp_path, capsys):
    # Checked before any model is loaded: no weights needed, and the file is never written.
    assert main(["diagnose", "--model-dir", str(tmp_path / "none"), "--text", "a", "--plot", plot]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"workbench diagnose: error: --plot must be a file name ending in one of .png, .svg, .pdf, got {plot!r}\n"
    )
    assert captured.out == ""


def test_study_connection_walk_csv_is_its_results_json(tiny_checkpoint, tmp_path, capsys):
    model, corpus = tiny_checkpoint
    out = tmp_path / "walk"
    argv = ["study", "connection-walk", "--model-dir", model, "--corpus", corpus, "--windows", "2"]
    argv += ["--max-tokens", "16", "--lengths", "8,4096", "--sweep-windows", "1", "--out", str(out)]
    header, rows = _csv_of(argv, capsys)
    (record,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"]
    assert header[:4] == ["table", "model", "layer", "length"]
    assert {row["model"] for row in rows} == {record["label"]}
    by_table = {}
    for row in rows:
        by_table.setdefault(row["table"], []).append(row)
    assert list(by_table) == ["layers", "sweep", "sweep_layers", "skipped", "models"]
    for row, layer in zip(by_table["layers"], record["layers"], strict=True):
        _assert_row_is_record(header, row, layer, skip=("table", "model", "length"))
    (length,), (sweep_row,) = record["sweep"]["lengths"], by_table["sweep"]
    assert int(sweep_row["length"]) == length["length"] == 8 and int(sweep_row["windows"]) == length["windows"]
    _assert_row_is_record(header, sweep_row, length["layer_mean"], skip=("table", "model", "length", "windows"))
    for row, layer in zip(by_table["sweep_layers"], length["layers"], strict=True):
        _assert_row_is_record(header, row, layer, skip=("table", "model", "length", "windows"))
    (skipped,) = by_table["skipped"]
    assert int(skipped["length"]) == 4096 and skipped["reason"] == record["sweep"]["skipped"][0]["reason"]
    (model_row,) = by_table["models"]
    rest = {k: v for k, v in record.items() if k not in ("layers", "per_window", "sweep")}
    _assert_row_is_record(header, model_row, rest, skip=("table", "model"))


def test_study_head_subspaces_csv_is_its_results_json(tiny_checkpoint, tmp_path, capsys):
    model, corpus = tiny_checkpoint
    out = tmp_path / "heads"
    argv = ["study", "head-subspaces", "--model-dir", model, "--corpus", corpus, "--windows", "2"]
    header, rows = _csv_of([*argv, "--max-tokens", "16", "--permutations", "99", "--out", str(out)], capsys)
    (record,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["models"]
    assert header[:3] == ["table", "model", "layer"] and "tests.QK.rho" in header
    assert [row["table"] for row in rows] == ["layers", "layers", "pooled_within_layers", "model_wide", "models"]
    for row, layer in zip(rows[:2], record["layers"], strict=True):
        _assert_row_is_record(header, row, layer, skip=("table", "model"))
    for row, key in zip(rows[2:4], ("pooled_within_layers", "model_wide"), strict=True):
        _assert_row_is_record(header, row, {"tests": record[key]}, skip=("table", "model", "layer"))
    rest = {k: v for k, v in record.items() if k not in ("layers", "pooled_within_layers", "model_wide")}
    _assert_row_is_record(header, rows[4], rest, skip=("table",))


# ---- experiment and sweep -------------------------------------------------------------------------------------


def test_experiment_csv_is_one_row_per_condition_of_its_results_json(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "run"
    argv = ["experiment", "swiss-sit", "--operator", "DMAP", "--operator", "ATTN", "--order", "mhsa-ffn"]
    header, rows = _csv_of([*argv, "--steps", "3", "--out", str(out), "--no-progress"], capsys)
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert header[:2] == ["operator", "order"] and {"eps_rev", "rho_skew", "loss", "seconds"} <= set(header)
    assert len(rows) == len(document["rows"]) == 2
    for row, record in zip(rows, document["rows"], strict=True):  # the columns are the records' own fields
        assert all(_cell_holds(row[column], record[column]) for column in header), row


def test_sweep_csv_is_one_row_per_cell_of_its_sweep_json(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("distributed")
    tiny = {"vocab_size": 8, "half_length": 4, "n_heads": 2, "steps": 2, "batch": 4, "log_every": 1, "eval_batch": 4}
    out = tmp_path / "sweep"
    argv = ["sweep", "induction", *(f"--set={key}={value}" for key, value in tiny.items()), "--grid", "d_model=8,16"]
    argv += ["--operator", "DMAP", "--architecture", "attn-only", "--workers", "1", "--out", str(out), "--csv"]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *argv], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr
    header, rows = _read_csv(done.stdout)
    document = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert header[:2] == ["cell", "grid.d_model"] and "measurements.final_repeat_loss.mean" in header
    assert [row["cell"] for row in rows] == ["d_model=8", "d_model=16"]
    for row, cell in zip(rows, document["cells"], strict=True):
        _assert_row_is_record(header, row, cell)
