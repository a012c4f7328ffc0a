"""The loop defect from the factors (``factored_loop_defect``) against the dense route it replaces.

Oracle: :func:`_dense_reference`, the dense loop of ``loop_defect`` as it stood before the factored route (two
:math:`d\\times d\\times d` products per triangle, the defect read off the formed holonomy), kept here verbatim
in substance.  The factored route reads the same defect as :math:`\\sqrt{2 - 2\\cos\\theta}` from
:math:`\\operatorname{tr}\\mathrm{Hol}` and :math:`\\lVert\\mathrm{Hol}\\rVert_F`, both contracted from tables of
the layer; the tests cover every shape regime (:math:`r < d`, :math:`r = d`, :math:`r > d`, :math:`Hr < d`,
:math:`Hr = d`, rank-deficient heads), uneven attention, a subset of tokens, the flat and ill-conditioned
triangles that the route hands back to the dense one, and the refusals.
"""

import math

import numpy as np
import pytest
from scipy.linalg import expm

from workbench.attention import _holonomy as holonomy_module
from workbench.attention import loop_defect
from workbench.attention._holonomy import (
    _dense_cost,
    _factored_cost,
    _factored_defects,
    _triangle_weights,
    factored_loop_defect,
    loop_defect_operations,
)

#: Per triangle, factored against dense, for defects of order 1 away from the flat case: both routes round
#: each of tr Hol and ‖Hol‖_F² to a few hundred ulps of their terms (sums over H³ and H⁶/4 products of
#: bounded entries), and √(2 − 2cos) maps an error δ of the cosine to δ/defect; 1e-12 leaves a margin of ~100.
ATOL_VALUE = 1e-12


@pytest.fixture
def rng():
    return np.random.default_rng(20260419)


def _dense_reference(A, M, tokens) -> np.ndarray:
    """Per-triangle defects ‖Hol/s − I‖_F/√d by forming the three transports and their product."""
    H, d = M.shape[0], M.shape[-1]
    maps = M.reshape(H, d * d)
    values = []
    for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False):
        weights = A[:, [b, c, a], [a, b, c]].T
        O_ba, O_cb, O_ac = ((weights / weights.sum(axis=1, keepdims=True)) @ maps).reshape(3, d, d)
        hol = O_ba @ O_cb @ O_ac
        scale = np.sqrt(np.sum(hol**2)) / math.sqrt(d)
        values.append(np.sqrt(np.sum((hol / scale - np.eye(d)) ** 2)) / math.sqrt(d))
    return np.array(values)


def _heads(rng, H, n, d, r):
    A = rng.random((H, n, n)) ** 3  # uneven attention
    A /= A.sum(axis=-1, keepdims=True)
    return A, rng.standard_normal((H, d, r)), rng.standard_normal((H, r, d))


def _core(A, W_V, W_O, tokens):
    """The factored route's per-triangle values and redo flags, on the balanced factors (Q_h, R_h W_O^h)."""
    _, weights = _triangle_weights(A, tokens)
    Q, R = np.linalg.qr(W_V)
    return _factored_defects(weights, Q, R @ W_O)


SHAPES = {
    "r < d": (3, 9, 5, 2),
    "r = d": (2, 7, 4, 4),
    "r > d": (2, 7, 3, 5),
    "Hr < d": (2, 8, 8, 3),
    "Hr = d": (4, 9, 8, 2),
    "Hr > d": (4, 8, 6, 3),
}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_the_factored_values_are_the_dense_values(rng, shape):
    H, n, d, r = shape
    A, W_V, W_O = _heads(rng, H, n, d, r)
    for tokens in (list(range(n)), [1, 2, 4, 5, n - 1]):  # every token, and a subset (special tokens masked)
        dense = _dense_reference(A, W_V @ W_O, tokens)
        values, redo = _core(A, W_V, W_O, tokens)
        assert not redo.any()  # generic heads: nothing is flat or ill-conditioned
        np.testing.assert_allclose(values, dense, rtol=0, atol=ATOL_VALUE)
        # the public front, whichever route its cost model picks, against the dense public function
        expected = loop_defect(A, W_V @ W_O, tokens)
        assert factored_loop_defect(A, W_V, W_O, tokens) == pytest.approx(expected, rel=0, abs=ATOL_VALUE)


def test_rank_deficient_heads(rng):
    # W_V^h of rank 1 < r = 3 (repeated columns) and one head that is zero altogether: QR keeps the map exact
    A, W_V, W_O = _heads(rng, 3, 8, 6, 3)
    W_V[0] = np.outer(W_V[0, :, 0], [1.0, -2.0, 0.5])
    W_V[1, :, 2] = W_V[1, :, 0] + W_V[1, :, 1]
    W_O[2] = 0.0
    tokens = list(range(8))
    values, redo = _core(A, W_V, W_O, tokens)
    assert not redo.any()
    np.testing.assert_allclose(values, _dense_reference(A, W_V @ W_O, tokens), rtol=0, atol=ATOL_VALUE)


def test_the_public_route_is_factored_where_it_is_cheaper_and_agrees(rng):
    # 40 triangles of a 2-head layer with d = 24 ≫ r = 4: the cost model picks the factored route
    H, n, d, r = 2, 42, 24, 4
    A, W_V, W_O = _heads(rng, H, n, d, r)
    assert _factored_cost(H, r, d, n - 2) < holonomy_module._dense_cost(H, r, d, n - 2)
    tokens = list(range(n))
    assert factored_loop_defect(A, W_V, W_O, tokens) == pytest.approx(
        _dense_reference(A, W_V @ W_O, tokens).mean(), rel=0, abs=ATOL_VALUE
    )


def test_the_cost_model_on_a_minilm_layer():
    # all-MiniLM-L6-v2: H = 12 heads of r = 32 in d = 384, 62 triangles (64 tokens): ≥ 4× fewer operations
    factored, dense = _factored_cost(12, 32, 384, 62), holonomy_module._dense_cost(12, 32, 384, 62)
    assert 4 * factored < dense
    assert _factored_cost(32, 128, 4096, 62) == math.inf  # tables past the memory bound: the dense route


def test_flat_triangles_are_redone_densely(rng):
    # M_h = I in every head (r = d): Hol = I, defect 0.  The cosine route alone leaves √(2ε)-sized residues
    # (cos = 1 − O(ε)); the flagged triangles are redone densely, which is exact here.
    H, n, d = 3, 7, 5
    A = _heads(rng, H, n, d, d)[0]
    W_V, W_O = np.broadcast_to(np.eye(d), (H, d, d)).copy(), np.broadcast_to(np.eye(d), (H, d, d)).copy()
    values, redo = _core(A, W_V, W_O, list(range(n)))
    assert redo.all()
    assert values.max() < 1e-7  # the residue √(2ε) ≈ 2e-8 of the cosine route (measured 0 to 2.6e-8)
    assert factored_loop_defect(A, W_V, W_O, list(range(n))) <= 1e-15


def test_one_orthogonal_map_in_every_head(rng):
    # M_h = Q for all h: O_x = Q, Hol = Q³, defect ‖Q³ − I‖_F/√d of order 1 (not flagged)
    H, n, d = 3, 7, 6
    A = _heads(rng, H, n, d, d)[0]
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    W_V, W_O = np.broadcast_to(Q, (H, d, d)).copy(), np.broadcast_to(np.eye(d), (H, d, d)).copy()
    expected = np.linalg.norm(np.linalg.matrix_power(Q, 3) - np.eye(d)) / math.sqrt(d)
    values, redo = _core(A, W_V, W_O, list(range(n)))
    assert not redo.any()
    np.testing.assert_allclose(values, expected, rtol=0, atol=ATOL_VALUE)


def test_nearly_flat_triangles_match_the_dense_route(rng):
    # Small, different rotations per head, M_h = exp(10⁻⁵ S_h): defects ~1e-5, below the 1.4e-3 of the
    # threshold cos > 1 − 1e-6, so every triangle is redone densely: the same numbers as the dense route.
    H, n, d = 3, 8, 6
    A = _heads(rng, H, n, d, d)[0]
    S = rng.standard_normal((H, d, d))
    M = np.stack([expm(1e-5 * (s - s.T)) for s in S])
    W_V, W_O = M, np.broadcast_to(np.eye(d), (H, d, d)).copy()
    tokens = list(range(n))
    dense = _dense_reference(A, M, tokens)
    assert 1e-7 < dense.min() and dense.max() < 1e-3
    _, redo = _core(A, W_V, W_O, tokens)
    assert redo.all()
    # 1e-15 absolute (≈ 1e-10 relative): the dense route's own rounding on a holonomy within 1e-5 of I
    assert factored_loop_defect(A, W_V, W_O, tokens) == pytest.approx(dense.mean(), rel=0, abs=1e-15)


def test_cancelling_heads_are_redone_densely(rng):
    # Two heads whose maps nearly cancel (M_2 = −M_1 + 1e-6 E) under equal weights: each transport is 1e6
    # times smaller than its heads, so the squared-norm contraction would lose 12 digits; the triangles are
    # flagged and the value is the dense route's.
    H, n, d = 2, 6, 5
    W_V = np.stack([np.eye(d)] * 2)
    W_O1 = rng.standard_normal((d, d))
    W_O = np.stack([W_O1, -W_O1 + 1e-6 * rng.standard_normal((d, d))])
    A = np.broadcast_to(rng.random((n, n)) + 0.1, (H, n, n)).copy()
    tokens = list(range(n))
    _, redo = _core(A, W_V, W_O, tokens)
    assert redo.all()
    expected = loop_defect(A, W_V @ W_O, tokens)
    assert factored_loop_defect(A, W_V, W_O, tokens) == pytest.approx(expected, rel=1e-12)


def test_without_room_for_the_maps_the_dense_route_runs_edge_by_edge(rng, monkeypatch):
    # A working-set bound too small for the tables and for the maps: O_x = U D_x V is formed edge by edge
    monkeypatch.setattr(holonomy_module, "_LOOP_BYTES", 512)
    A, W_V, W_O = _heads(rng, 3, 7, 6, 2)
    assert 3 * 6 * 6 * 8 > 512  # the three maps alone pass the bound
    tokens = list(range(7))
    # 1e-12 relative: O_x formed as (U D_x) V instead of Σ_h w_h M_h, a few ulps per entry
    assert factored_loop_defect(A, W_V, W_O, tokens) == pytest.approx(
        _dense_reference(A, W_V @ W_O, tokens).mean(), rel=1e-12
    )


def test_the_defect_is_scale_free_in_each_factor(rng):
    # Powers of two are divided out exactly; 1e300 rounds every entry once (a few ulps in the result)
    A, W_V, W_O = _heads(rng, 2, 30, 16, 3)
    tokens = list(range(30))
    reference = factored_loop_defect(A, W_V, W_O, tokens)
    assert factored_loop_defect(A, 2.0**600 * W_V, 2.0**-900 * W_O, tokens) == reference
    assert factored_loop_defect(A, 1e300 * W_V, 1e300 * W_O, tokens) == pytest.approx(reference, rel=1e-13)


def test_refusals(rng):
    A, W_V, W_O = _heads(rng, 2, 6, 5, 2)
    with pytest.raises(ValueError, match=r"tokens must hold at least three tokens \(one triangle\), got 2"):
        factored_loop_defect(A, W_V, W_O, [1, 2])
    with pytest.raises(ValueError, match=r"W_V \[H, d, r\], W_O \[H, r, d\] and A_heads \[H, n, n\] must match"):
        factored_loop_defect(A, W_V, W_O[:, :, :4], [0, 1, 2])
    silent = A.copy()
    silent[:, 1, 0] = 0.0  # the edge 0 → 1 carries no weight in any head
    with pytest.raises(ValueError, match=r"A_heads must give weight to every edge of the triangle \(0, 1, 2\)"):
        factored_loop_defect(silent, W_V, W_O, [0, 1, 2, 3])
    with pytest.raises(ValueError, match=r"the holonomy around tokens \(0, 1, 2, 0\) is zero"):
        factored_loop_defect(A, W_V, np.zeros_like(W_O), [0, 1, 2, 3])
    with pytest.raises(ValueError, match="A_heads must be nonnegative"):
        factored_loop_defect(-A, W_V, W_O, [0, 1, 2])


def test_the_layer_tables_are_built_once_per_layer_and_reused():
    # The tables depend on W_V, W_O only: a second text on the same layer reuses them (one cache entry), and its
    # defect still equals the dense route's (1e-12 absolute, as above).
    from workbench.attention import _holonomy

    rng = np.random.default_rng(11)
    H, d, r, n = 4, 12, 3, 16
    W_V, W_O = rng.standard_normal((H, d, r)), rng.standard_normal((H, r, d))
    _holonomy._TABLES.clear()
    for seed in (1, 2, 3):
        A = np.random.default_rng(seed).random((H, n, n)) ** 3
        A /= A.sum(axis=-1, keepdims=True)
        fast = factored_loop_defect(A, W_V, W_O, list(range(n)))
        assert fast == pytest.approx(loop_defect(A, W_V @ W_O, list(range(n))), abs=1e-12)
    assert len(_holonomy._TABLES) == 1
    factored_loop_defect(A, 2.0 * W_V, W_O, list(range(n)))  # other weights (after the exact rescaling: the same)
    factored_loop_defect(A, W_V + 1.0, W_O, list(range(n)))  # other weights: a second entry
    assert len(_holonomy._TABLES) == 2


def test_max_triangles_averages_an_evenly_spaced_subset_and_the_budget_estimate_is_the_cheaper_route():
    # Oracle: the dense loop_defect of each kept triangle alone (a walk of three tokens is one triangle).
    rng = np.random.default_rng(21)
    A = rng.random((3, 12, 12)) + 0.05
    W_V, W_O = rng.standard_normal((3, 6, 2)), rng.standard_normal((3, 2, 6))
    tokens = list(range(12))  # 10 triangles; 4 kept: 0, 3, 6, 9 (np.round of linspace(0, 9, 4))
    kept = [loop_defect(A, W_V @ W_O, tokens[t : t + 3]) for t in (0, 3, 6, 9)]
    assert factored_loop_defect(A, W_V, W_O, tokens, max_triangles=4) == pytest.approx(np.mean(kept), abs=1e-12)
    assert factored_loop_defect(A, W_V, W_O, tokens, max_triangles=50) == pytest.approx(
        factored_loop_defect(A, W_V, W_O, tokens), abs=1e-15
    )
    with pytest.raises(ValueError, match=r"max_triangles must be an integer"):
        factored_loop_defect(A, W_V, W_O, tokens, max_triangles=0)
    assert loop_defect_operations(12, 64, 768, 195) == min(
        _factored_cost(12, 64, 768, 195), _dense_cost(12, 64, 768, 195)
    )


def test_diagnose_keeps_the_most_triangles_its_budget_allows(monkeypatch):
    # Oracle: loop_defect_operations itself — the count kept is the largest whose cost is within LOOP_OPERATIONS
    # (the cost of one more passes it), never below LOOP_MIN_TRIANGLES; all of them (None) when they fit.  A
    # ViT-B/16 image (H = 12, r = 64, d = 768, 194 triangles) fits through the trace route's tables.
    from workbench.attention import loop_defect_operations
    from workbench.models import _diagnose

    assert _diagnose._triangles_within_budget(12, 64, 768, 194) is None
    kept = _diagnose._triangles_within_budget(16, 64, 512, 195)  # 16 heads: the tables pass their bound, dense
    budget = _diagnose.LOOP_OPERATIONS
    assert 8 < kept < 195
    assert loop_defect_operations(16, 64, 512, kept) <= budget < loop_defect_operations(16, 64, 512, kept + 1)
    assert _diagnose._triangles_within_budget(16, 64, 1024, 195) == _diagnose.LOOP_MIN_TRIANGLES  # ViT-L/16: 6 fit
    monkeypatch.setattr(_diagnose, "LOOP_OPERATIONS", 1.0)
    assert _diagnose._triangles_within_budget(16, 64, 1024, 195) == _diagnose.LOOP_MIN_TRIANGLES
