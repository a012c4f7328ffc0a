"""``workbench.models.diagnose`` on causal and rotary checkpoints, against ``transformers`` itself.

Oracles: a tiny random GPT-2 (causal, learned positions, biases) and a tiny random Llama (RoPE with linear
scaling, 4 query heads sharing 2 key/value heads, a ``<s>`` BOS template) written by ``transformers`` at test
time (``checkpoints.py``).  The reference quantities are recomputed here from what ``transformers`` computes
itself, eager attention in float64 (with :func:`~checkpoints.float64_transformers` for the Llama family):

- its ``output_attentions`` → per-head entropy and :math:`e^{\\bar H}`, both layer effective-neighbour
  conventions, :math:`A_{\\mathrm{eff}}`, :math:`\\lVert A_{\\mathrm{eff}}\\rVert_F`, the drift :math:`d_A`
  (``workbench.attention.geometric_drift`` on the causal content pairs) and the layer
  :math:`\\delta_{\\mathrm{orth}}` (``effective_connection`` then ``orthogonality_deviation`` weighted by
  :math:`A_{\\mathrm{eff}}`: the dense route, where ``diagnose`` takes the factored one);
- its own queries and keys (each attention module's input caught by a forward pre-hook, projected by the
  module's ``c_attn`` / ``q_proj``, ``k_proj`` and rotated by ``apply_rotary_pos_emb`` with the
  ``position_embeddings`` the model handed it, keys repeated by ``repeat_kv``) → the corner distances
  (``token_corner_distances``);
- its weights → :math:`\\delta_{\\mathrm{orth}}` of every head's dense :math:`M_h = W_V^{g(h)}W_O^h`
  (``orthogonality_deviation``), with the key/value group :math:`g(h) = \\lfloor h/2\\rfloor` of ``repeat_kv``.

Tolerances: the forward passes agree to ≤ 1e-14 (attention) and ≤ 4e-14 (hidden states)
(``test_models_checkpoints.py``), so every reading, a smooth function of them with condition numbers of order
one on these inputs, is asserted to 1e-10 relative (1e-12 absolute for values near 0); the largest relative
error measured is 1.3e-14.  About 5 s for the file.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from checkpoints import (  # noqa: E402
    HEADS,
    LAYERS,
    WIDTH,
    bpe,
    float64_transformers,
    gpt2,
    llama,
    llama_config,
    save,
)

from workbench.attention import (  # noqa: E402
    effective_connection,
    geometric_drift,
    mean_entropy,
    orthogonality_deviation,
    score_skew_ratio,
    token_corner_distances,
)
from workbench.models import circuit_scores, diagnose, diagnose_ids, load_model  # noqa: E402

TEXT = "the quick brown fox jumps over the lazy dog"
D_HEAD = WIDTH // HEADS
RTOL, ATOL = 1e-10, 1e-12  # see the module docstring


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    model = gpt2(seed=11)
    directory = save(model, tmp_path_factory.mktemp("gpt2"), bpe(bos=False))
    return directory, model.double()


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    model = llama(llama_config(rope={"rope_type": "linear", "rope_theta": 500.0, "factor": 2.0}), seed=12)
    directory = save(model, tmp_path_factory.mktemp("llama"), bpe(bos=True))
    with float64_transformers():
        return directory, model.double()


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


# ---- what transformers computes ------------------------------------------------------------------------------


def _run(model, ids):
    """transformers' attentions [L, H, n, n] and each attention module's (input, position embeddings)."""
    seen = []

    def catch(module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        seen.append((hidden.detach().clone(), kwargs.get("position_embeddings")))

    blocks = _blocks(model)
    handles = [block.register_forward_pre_hook(catch, with_kwargs=True) for block in blocks]
    try:
        with torch.no_grad(), float64_transformers():
            out = model(torch.as_tensor(ids)[None], output_attentions=True)
    finally:
        for handle in handles:
            handle.remove()
    attention = np.stack([a[0].numpy() for a in out.attentions])
    return attention, seen


def _blocks(model):
    if isinstance(model, transformers.GPT2PreTrainedModel):
        return [block.attn for block in model.transformer.h]
    return [layer.self_attn for layer in model.model.layers]


def _queries_keys(model, layer, caught):
    """transformers' own queries and keys of one layer, [H, n, d] each (rotated, keys repeated per query head)."""
    hidden, position_embeddings = caught
    with torch.no_grad(), float64_transformers():
        if isinstance(model, transformers.GPT2PreTrainedModel):
            q, k, _ = model.transformer.h[layer].attn.c_attn(hidden).split(WIDTH, dim=2)
            shape = (1, -1, HEADS, D_HEAD)
            q, k = q.view(shape).transpose(1, 2), k.view(shape).transpose(1, 2)
        else:
            from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv

            attn = model.model.layers[layer].self_attn
            shape = (1, hidden.shape[1], -1, D_HEAD)
            q = attn.q_proj(hidden).view(shape).transpose(1, 2)
            k = attn.k_proj(hidden).view(shape).transpose(1, 2)
            cos, sin = position_embeddings
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            k = repeat_kv(k, HEADS // model.config.num_key_value_heads)
    return q[0].numpy(), k[0].numpy()


def _value_output_maps(model, layer, group=None):
    """Every head's dense M_h = W_V^{g(h)} W_O^h [H, D, D] from transformers' weights (row-vector convention)."""
    d = D_HEAD
    if isinstance(model, transformers.GPT2PreTrainedModel):
        attn = model.transformer.h[layer].attn
        W_V = attn.c_attn.weight.detach().numpy()[:, 2 * WIDTH :]  # Conv1D: (in, out)
        W_O = attn.c_proj.weight.detach().numpy()
        return np.stack([W_V[:, h * d : (h + 1) * d] @ W_O[h * d : (h + 1) * d] for h in range(HEADS)])
    attn = model.model.layers[layer].self_attn
    rep = HEADS // model.config.num_key_value_heads
    group = group or (lambda h: h // rep)  # repeat_kv: query head h reads key/value head h // rep
    W_V = attn.v_proj.weight.detach().numpy().T  # nn.Linear: (out, in)
    W_O = attn.o_proj.weight.detach().numpy().T
    return np.stack([W_V[:, group(h) * d : (group(h) + 1) * d] @ W_O[h * d : (h + 1) * d] for h in range(HEADS)])


def _check_against_transformers(report, model, ids, content):
    attention, caught = _run(model, ids)
    n = ids.size
    causal = np.tril(np.ones((n, n), dtype=bool))
    pairs = content[:, None] & content[None, :] & causal
    assert report.causal and np.array_equal(report.content, content)
    _close(report.a_eff, attention.mean(axis=1))
    for layer in range(LAYERS):
        A = attention[layer]
        heads = [r for r in report.heads if r.layer == layer]
        entropies = np.array([mean_entropy(A[h]) for h in range(HEADS)])
        q, k = _queries_keys(model, layer, caught[layer])
        M = _value_output_maps(model, layer)
        for h, reading in enumerate(heads):
            _close(reading.entropy, entropies[h])
            _close(reading.effective_neighbours, math.exp(entropies[h]))
            distances = token_corner_distances(q[h], k[h], beta=1 / math.sqrt(D_HEAD), mask=causal)
            nearest = min(("DMAP", "DMTN", "ATAP"), key=distances.get)
            assert reading.nearest_constrained == nearest
            _close(reading.corner_distance, distances[nearest])
            _close(reading.delta_orth, orthogonality_deviation(M[h]))
        reading = report.layers[layer]
        _close(reading.entropy, entropies.mean())
        _close(reading.mean_effective_neighbours, np.exp(entropies).mean())
        _close(reading.effective_neighbours_of_mean_entropy, math.exp(entropies.mean()))
        A_eff, O_eff = effective_connection(A, M)
        _close(reading.a_eff_norm, np.linalg.norm(A_eff))
        _close(reading.delta_orth, orthogonality_deviation(O_eff, weights=A_eff, mask=pairs))
        if layer + 1 < LAYERS:
            _close(reading.drift, geometric_drift(A_eff, attention[layer + 1].mean(axis=0), mask=pairs))
    return attention


def _check_undefined(report):
    for head in report.heads:
        assert head.eps_rev is None and head.undefined["eps_rev"].startswith("causal:")
    for layer in report.layers:
        for key in ("eps_rev", "eps_rev_content", "energy_ratio", "loop_inconsistency"):
            assert getattr(layer, key) is None and layer.undefined[key].startswith("causal:"), key
    assert (
        report.layers[-1].drift is None and report.layers[-1].undefined["drift"] == "the last layer has no next layer"
    )
    document = report.to_dict()
    text = json.dumps(document, allow_nan=False)  # strict JSON: no NaN, no Infinity
    assert "NaN" not in text and "Infinity" not in text
    assert document["layers"][0]["eps_rev"] is None and document["layers"][0]["undefined"]["eps_rev"].startswith(
        "causal"
    )


# ---- the two families ----------------------------------------------------------------------------------------


def test_gpt2_diagnosis_matches_transformers(gpt2_dir):
    directory, reference = gpt2_dir
    model = load_model(directory)
    report = diagnose(model, TEXT)
    ids = model.tokenize(TEXT).ids
    assert model.n_template == 0 and report.tokens == model.tokenize(TEXT).tokens
    _check_against_transformers(report, reference, ids, np.ones(ids.size, dtype=bool))
    _check_undefined(report)
    # ρ_skew of the augmented form (x, 1) [W; b]: the query/key biases enter the bilinear form exactly
    attn = reference.transformer.h[0].attn
    W, b = attn.c_attn.weight.detach().numpy(), attn.c_attn.bias.detach().numpy()
    for h in (0, 3):
        cols = slice(h * D_HEAD, (h + 1) * D_HEAD)
        W_Q = np.vstack([W[:, :WIDTH][:, cols], b[:WIDTH][cols]])
        W_K = np.vstack([W[:, WIDTH : 2 * WIDTH][:, cols], b[WIDTH : 2 * WIDTH][cols]])
        _close(report.heads[h].rho_skew, score_skew_ratio(W_Q @ W_K.T))


def test_llama_diagnosis_matches_transformers(llama_dir):
    directory, reference = llama_dir
    model = load_model(directory)
    assert (model.n_heads, model.n_kv_heads, model.architecture.rope.factor) == (HEADS, 2, 2.0)
    report = diagnose(model, TEXT)
    tokens = model.tokenize(TEXT)
    content = ~tokens.special
    assert report.tokens[0] == "<s>" and content.tolist() == [False] + [True] * (tokens.ids.size - 1)
    attention = _check_against_transformers(report, reference, tokens.ids, content)
    _check_undefined(report)
    # the content form at offset 0, W_Q^h W_K^{g(h)ᵀ} (no biases in Llama)
    attn = reference.model.layers[1].self_attn
    W_Q, W_K = attn.q_proj.weight.detach().numpy().T, attn.k_proj.weight.detach().numpy().T
    for h in range(HEADS):
        M = W_Q[:, h * D_HEAD : (h + 1) * D_HEAD] @ W_K[:, (h // 2) * D_HEAD : (h // 2 + 1) * D_HEAD].T
        _close(report.heads[HEADS + h].rho_skew, score_skew_ratio(M))
    # the BOS is a sink: counted in the content pairs it would change d_A, so leaving it out is a real choice
    everything = np.tril(np.ones((content.size,) * 2, dtype=bool))
    with_bos = geometric_drift(attention[0].mean(axis=0), attention[1].mean(axis=0), mask=everything)
    assert abs(with_bos - report.layers[0].drift) > 1e-6


def test_gqa_heads_share_their_value_group(llama_dir):
    # Heads 0, 1 read key/value head 0 and heads 2, 3 key/value head 1 (repeat_kv): the expanded W_V of the
    # workbench repeats v_proj's groups exactly, and δ_orth of each head uses its own group's W_V.
    directory, reference = llama_dir
    model = load_model(directory)
    report = diagnose(model, TEXT)
    for layer in range(LAYERS):
        W_V = model.layers[layer].attention.W_V  # [H, D, d]
        v_proj = reference.model.layers[layer].self_attn.v_proj.weight.detach().numpy().T
        for h in range(HEADS):
            g = h // 2
            assert np.array_equal(W_V[h], v_proj[:, g * D_HEAD : (g + 1) * D_HEAD])
        assert not np.array_equal(W_V[0], W_V[2])
        right = _value_output_maps(reference, layer)
        wrong = _value_output_maps(reference, layer, group=lambda h: h % 2)  # the interleaved grouping
        got = [r.delta_orth for r in report.heads if r.layer == layer]
        _close(got, [orthogonality_deviation(M) for M in right])
        assert not np.allclose(got, [orthogonality_deviation(M) for M in wrong], rtol=1e-6)


def test_bos_is_special_by_id_not_by_text(llama_dir):
    directory, _ = llama_dir
    model = load_model(directory)
    bos = model.tokenize("x").ids[0]
    report = diagnose(model, "a literal <s> in the text")
    ids = model.tokenize("a literal <s> in the text").ids
    assert ids[0] == bos and bos not in ids[1:].tolist()  # the literal "<s>" is tokenized as text
    assert report.content.tolist() == [False] + [True] * (ids.size - 1)
    assert report.to_dict()["tokens"][0] == "<s>"
    # diagnose_ids flags the BOS by id too, and gives the same report
    again = diagnose_ids(model, ids, text="a literal <s> in the text")
    assert np.array_equal(again.content, report.content)
    assert again.to_dict()["layers"] == report.to_dict()["layers"]


def test_a_transformers_object_without_tokenizer(gpt2_dir):
    # diagnose takes a transformers model object; without its tokenizer the text route says so and the id route
    # works (its circuit probe drawn from the whole vocabulary but the configuration's BOS/EOS), giving the
    # numbers of the same checkpoint read from disk (the same float64 weights: bit for bit) for the same probe.
    directory, reference = gpt2_dir
    disk = load_model(directory)
    ids = disk.tokenize(TEXT).ids
    with pytest.raises(ValueError, match=r"has no tokenizer .* trace_ids works on token ids"):
        diagnose(reference, TEXT)
    alone = diagnose_ids(reference, ids, model_name="gpt2-object")
    assert alone.model == "gpt2-object" and alone.tokens == [str(i) for i in ids]
    assert all(math.isfinite(h.induction) and math.isfinite(h.previous_token) for h in alone.heads)
    circuits = circuit_scores(disk)
    from_object = diagnose_ids(reference, ids, circuits=circuits).to_dict()
    from_disk = diagnose_ids(disk, ids, circuits=circuits).to_dict()
    assert from_object["layers"] == from_disk["layers"] and from_object["heads"] == from_disk["heads"]
    assert alone.to_dict()["layers"] == from_disk["layers"]  # the probe enters the head readings only


def test_a_transformers_object_with_its_tokenizer(gpt2_dir):
    # With the tokenizer beside it, the text route of a transformers object gives the report of the same
    # checkpoint read from disk (the same float64 weights and the same tokenizer file: equal dictionaries).
    import tokenizers

    directory, reference = gpt2_dir
    tokenizer = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    from_object = diagnose(reference, TEXT, tokenizer=tokenizer, model_name="gpt2").to_dict()
    from_disk = diagnose(load_model(directory), TEXT, model_name="gpt2").to_dict()
    assert from_object == from_disk
    with pytest.raises(ValueError, match=r"tokenizer applies to a transformers model object"):
        diagnose(load_model(directory), TEXT, tokenizer=tokenizer)
