"""Tests of the exact bond/link split of an attention score (attention-geometry-math §A.7)."""

import numpy as np
import pytest
import scipy.linalg
from conftest import HAS_TORCH

from workbench.attention import (
    DestinationTilt,
    LinkHodgeSplit,
    ScoreSplit,
    bond_link_split,
    destination_tilt,
    distance_form_logits,
    exact_link,
    is_exact_link,
    link_hodge_split,
    link_holonomy,
    link_potential,
    score_split,
    token_split,
    triangle_cycles,
)
from workbench.backend import to_backend, to_numpy
from workbench.markov import MarkovOperator, cycle_affinities, cycle_basis, doob_transform, softmax_operator

EPS = np.finfo(float).eps

# ---------------------------------------------------------------------------------------------- helpers


def _head(rng, n=9, D=6, d_h=4, scale=1.0):
    X = scale * rng.standard_normal((n, D))
    W_Q = rng.standard_normal((D, d_h)) / np.sqrt(D)
    W_K = rng.standard_normal((D, d_h)) / np.sqrt(D)
    return X, W_Q, W_K


def _free_link(rng, n):
    B = rng.standard_normal((n, n))
    return B - B.T


def _softmax(z):
    # Independent oracle: a plain numpy row softmax (not workbench.markov.softmax_operator).
    w = np.exp(z - z.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def _perron(P):
    # Independent oracle: the left Perron vector from a dense eigensolver.
    values, vectors = scipy.linalg.eig(P.T)
    v = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
    return v / v.sum()


# ------------------------------------------------------------------------------------- bond_link_split


def test_bond_link_split_by_hand_and_exact_symmetry(rng):
    # Oracle: the closed form (M ± Mᵀ)/2 by hand; symmetry is bitwise (built from M and Mᵀ).
    M_S, M_A = bond_link_split(np.array([[1.0, 4.0], [2.0, -3.0]]))
    assert M_S.tolist() == [[1.0, 3.0], [3.0, -3.0]]
    assert M_A.tolist() == [[0.0, 1.0], [-1.0, 0.0]]
    M = rng.standard_normal((7, 7))
    M_S, M_A = bond_link_split(M)
    assert np.array_equal(M_S, M_S.T) and np.array_equal(M_A, -M_A.T)
    np.testing.assert_allclose(M_S + M_A, M, rtol=0, atol=4 * EPS * np.abs(M).max())  # two roundings per entry


def test_bond_link_split_of_a_stack_is_the_split_of_each(rng):
    # Oracle: the same function on each slice (batch ≡ loop), bitwise.
    M = rng.standard_normal((3, 5, 5))
    M_S, M_A = bond_link_split(M)
    for h in range(3):
        S_h, A_h = bond_link_split(M[h])
        assert np.array_equal(M_S[h], S_h) and np.array_equal(M_A[h], A_h)


def test_bond_link_split_rejects_bad_input():
    with pytest.raises(ValueError, match=r"M must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)"):
        bond_link_split(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"M must have at least 2 dimensions, got shape \(3,\)"):
        bond_link_split(np.ones(3))
    with pytest.raises(ValueError, match=r"M must be finite, got 1 non-finite entry"):
        bond_link_split(np.array([[1.0, np.nan], [0.0, 1.0]]))


# ------------------------------------------------------------------------------------- the score split


def test_token_split_matches_the_token_formulas(rng):
    # Oracle: the token form of §A.7 entry by entry with explicit dot products (einsum), not through qkᵀ.
    q, k = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    qk = np.einsum("id,jd->ij", q, k)
    kq = np.einsum("id,jd->ij", k, q)
    split = token_split(q, k)
    assert isinstance(split, ScoreSplit)
    tol = 8 * EPS * np.abs(qk).max()  # a dot product of length 3 plus one addition
    np.testing.assert_allclose(split.bond, 0.5 * (qk + kq), rtol=0, atol=tol)
    np.testing.assert_allclose(split.link, 0.5 * (qk - kq), rtol=0, atol=tol)
    np.testing.assert_allclose(split.potential, np.einsum("id,id->i", q, k), rtol=0, atol=tol)
    np.testing.assert_allclose(split.bond + split.link, q @ k.T, rtol=0, atol=tol)
    g = split.potential
    np.testing.assert_allclose(split.squared_distance, g[:, None] + g[None, :] - (qk + kq), rtol=0, atol=4 * tol)
    # Structure holds bitwise: exact symmetry, antisymmetry and a zero diagonal.
    assert np.array_equal(split.bond, split.bond.T) and np.array_equal(split.link, -split.link.T)
    assert np.array_equal(np.diag(split.squared_distance), np.zeros(6))
    assert np.array_equal(split.squared_distance, split.squared_distance.T)


def test_score_split_is_the_split_of_the_bilinear_form(rng):
    # Oracle: S = X M_S Xᵀ and A = X M_A Xᵀ through the D×D form (a different order of operations).
    X, W_Q, W_K = _head(rng)
    M_S, M_A = bond_link_split(W_Q @ W_K.T)
    split = score_split(X, W_Q, W_K)
    scale = np.abs(X).max() ** 2 * np.abs(M_S).max() * X.shape[1] ** 2
    np.testing.assert_allclose(split.bond, X @ M_S @ X.T, rtol=0, atol=50 * EPS * scale)
    np.testing.assert_allclose(split.link, X @ M_A @ X.T, rtol=0, atol=50 * EPS * scale)
    # ... and the same split as token_split of (XW_Q, XW_K), the token form (§A.7 says the two agree): bitwise.
    token = token_split(X @ W_Q, X @ W_K)
    for a, b in zip(split, token, strict=True):
        assert np.array_equal(a, b)


def test_positive_semidefinite_bond_gives_true_squared_distances(rng):
    # Oracle: for M_S = LLᵀ (tied W_Q = W_K = L), d²_ij = ‖(x_i - x_j)L‖², computed from coordinates.
    X, L, _ = _head(rng)
    d2 = score_split(X, L, L).squared_distance
    Y = X @ L
    direct = ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(d2, direct, rtol=0, atol=20 * EPS * np.abs(Y).max() ** 2 * L.shape[1])


def test_score_split_with_biases_and_stacked_heads(rng):
    # Oracle: token_split of the biased q, k (definition); stacked heads against a loop over heads.
    X, W_Q, W_K = _head(rng)
    b_Q, b_K = rng.standard_normal(4), rng.standard_normal(4)
    for a, b in zip(score_split(X, W_Q, W_K, b_Q, b_K), token_split(X @ W_Q + b_Q, X @ W_K + b_K), strict=True):
        assert np.array_equal(a, b)
    W_Qs, W_Ks = rng.standard_normal((3, 6, 4)), rng.standard_normal((3, 6, 4))
    stacked = score_split(X, W_Qs, W_Ks)
    assert stacked.bond.shape == (3, 9, 9) and stacked.potential.shape == (3, 9)
    for h in range(3):
        single = score_split(X, W_Qs[h], W_Ks[h])
        for a, b in zip(stacked, single, strict=True):
            np.testing.assert_allclose(a[h], b, rtol=1e-13, atol=1e-13)  # batched vs single matmul: rounding


def test_score_split_rejects_bad_input(rng):
    X, W_Q, W_K = _head(rng)
    with pytest.raises(ValueError, match=r"W_Q and W_K must have the same shape, got \(6, 4\) and \(6, 3\)"):
        score_split(X, W_Q, W_K[:, :3])
    with pytest.raises(ValueError, match=r"X columns and W_Q rows must have matching sizes, got 5 and 6"):
        score_split(X[:, :5], W_Q, W_K)
    with pytest.raises(ValueError, match=r"q and k must have the same shape, got \(9, 4\) and \(8, 4\)"):
        token_split(X @ W_Q, (X @ W_K)[:8])
    with pytest.raises(ValueError, match=r"b_Q length and W_Q columns must have matching sizes, got 3 and 4"):
        score_split(X, W_Q, W_K, b_Q=np.ones(3))
    with pytest.raises(ValueError, match=r"X must be a 2-dimensional array, got shape \(9,\)"):
        score_split(X[:, 0], W_Q, W_K)


# --------------------------------------------------------------------------- distance form and Doob tilt


@pytest.mark.parametrize("beta", [0.1, 0.5, 2.0])
def test_distance_form_softmax_equals_the_head(rng, beta):
    # Oracle: the head's own softmax(β(S + A)), computed with a plain numpy softmax. Tolerance: rounding of
    # logits of size ~β·max|d²| propagates as relative errors of that many ulps into P.
    X, W_Q, W_K = _head(rng, scale=2.0)
    split = score_split(X, W_Q, W_K)
    logits = distance_form_logits(split, beta)
    W = (X @ W_Q) @ (X @ W_K).T
    scale = beta * np.abs(split.squared_distance).max()
    np.testing.assert_allclose(_softmax(logits), _softmax(beta * W), rtol=0, atol=64 * EPS * max(scale, 1.0))
    # Adding back the source term (β/2) g_i reproduces βW to rounding (four terms of size ≤ scale).
    restored = logits + 0.5 * beta * split.potential[:, None]
    np.testing.assert_allclose(restored, beta * W, rtol=0, atol=16 * EPS * max(scale, 1.0))


def test_destination_tilt_is_the_doob_reading_of_the_bond(rng):
    # Oracle: rownorm exp(βS) (the head with its link removed) against doob_transform(K, h) of the
    # reused markov module; and K, h against their closed forms. Tolerance: rounding of β·max|d²| ≲ 5.
    X, W_Q, W_K = _head(rng)
    beta = 0.8
    split = score_split(X, W_Q, W_K)
    tilt = destination_tilt(split, beta)
    assert isinstance(tilt, DestinationTilt)
    np.testing.assert_allclose(doob_transform(tilt.kernel, tilt.h).P, _softmax(beta * split.bond), atol=1e-13)
    g, d2 = split.potential, split.squared_distance
    np.testing.assert_allclose(tilt.h, np.exp(beta * (g - g.max()) / 2), rtol=1e-14)
    c = min(0.0, d2.min())
    np.testing.assert_allclose(tilt.kernel, np.exp(-beta * (d2 - c) / 2), rtol=1e-14)
    assert tilt.h.max() == 1.0 and np.array_equal(tilt.kernel, tilt.kernel.T)
    # Reversible with π ∝ h ⊙ Kh (Doob), checked against the Perron vector of P.
    op = doob_transform(tilt.kernel, tilt.h)
    pi = tilt.h * (tilt.kernel @ tilt.h)
    np.testing.assert_allclose(_perron(op.P), pi / pi.sum(), rtol=1e-10, atol=1e-14)  # eig: absolute accuracy


def test_destination_tilt_is_stable_for_large_potentials(rng):
    # Oracle: the softmax of the bond, for tokens clustered far from the origin, where e^{βg/2} overflows
    # (βg/2 ~ 10³ > 709) without the shift, while the differences β(g_i - g_j)/2 stay moderate.
    _, L, _ = _head(rng)
    offset = rng.standard_normal(6)
    offset *= np.sqrt(2200.0) / np.linalg.norm(offset @ L)  # ‖offset·L‖² = 2200
    X = offset + 0.05 * rng.standard_normal((9, 6))
    split = score_split(X, L, L)  # positive semidefinite bond: d² ≥ 0 up to rounding, so K_ii ≈ 1
    beta = 1.0
    assert 0.5 * beta * split.potential.min() > 709.8  # np.exp(βg/2) would overflow for every token
    tilt = destination_tilt(split, beta)
    assert np.all(np.isfinite(tilt.h)) and tilt.h.max() == 1.0 and tilt.h.min() > 1e-100
    assert np.all(tilt.kernel <= 1.0)
    # c = min(0, min d²) is rounding of d² = g_i + g_j - 2S_ij with g ~ 2200: |c| ≲ 1e-11.
    np.testing.assert_allclose(np.diag(tilt.kernel), 1.0, rtol=0, atol=1e-10)
    # Tolerance: the logits β S ~ 2200 carry rounding ~ 2200 · 1e-16 · (a few) into P.
    np.testing.assert_allclose(doob_transform(tilt.kernel, tilt.h).P, _softmax(beta * split.bond), atol=1e-11)


def test_destination_tilt_of_an_indefinite_bond_keeps_the_kernel_bounded(rng):
    # Oracle: softmax of βS for an indefinite bond whose pseudo-distances go negative.
    X = rng.standard_normal((8, 2)) * 5.0
    W_Q, W_K = np.eye(2), np.diag([1.0, -1.0])  # M = diag(1, -1): indefinite, link-free
    split = score_split(X, W_Q, W_K)
    assert split.squared_distance.min() < -1.0
    tilt = destination_tilt(split, 1.0)
    assert tilt.kernel.max() <= 1.0
    np.testing.assert_allclose(doob_transform(tilt.kernel, tilt.h).P, _softmax(split.bond), atol=1e-12)


def test_distance_form_rejects_bad_input(rng):
    split = token_split(rng.standard_normal((3, 2)), rng.standard_normal((3, 2)))
    with pytest.raises(ValueError, match=r"beta must be in \(0, inf\), got 0.0"):
        distance_form_logits(split, 0.0)
    with pytest.raises(TypeError, match=r"split must be a ScoreSplit \(from score_split or token_split\), got tuple"):
        destination_tilt(tuple(split), 1.0)


# ----------------------------------------------------------------- exact link ⇔ Doob ⇔ reversible


@pytest.mark.parametrize("beta", [0.3, 1.0])
def test_exact_link_is_a_doob_transform_and_reversible(rng, beta):
    # Oracle: the theorem of §A.7 — with A = φ_i - φ_j, rownorm exp(β(S + A)) = doob_transform(exp(βS), e^{-βφ}),
    # ε_rev = 0 (1e-12: the rounding of a 10×10 linear solve for π), and π ∝ h ⊙ Kh (dense Perron vector).
    X, W_Q, W_K = _head(rng, n=10)
    S = score_split(X, W_Q, W_K).bond
    phi = rng.standard_normal(10)
    A = exact_link(phi)
    P = softmax_operator(S + A, beta=beta)
    K, h = np.exp(beta * S), np.exp(-beta * phi)
    np.testing.assert_allclose(P, doob_transform(K, h).P, rtol=1e-13, atol=1e-16)
    op = MarkovOperator(P)
    assert op.reversibility_residual < 1e-12
    pi = h * (K @ h)
    np.testing.assert_allclose(op.stationary, pi / pi.sum(), rtol=1e-11)
    np.testing.assert_allclose(_perron(P), pi / pi.sum(), rtol=1e-10)
    assert is_exact_link(A)


def test_free_link_is_nonreversible_with_affinity_twice_the_holonomy(rng):
    # Oracle: Schnakenberg affinities of the reused markov.cycle_affinities on the triangle basis (0, i, j),
    # against 2β × the holonomy of the link (the partition functions telescope). Tolerance: log-ratios of
    # entries of size ~β|S + A| ≲ 5, three steps per cycle.
    X, W_Q, W_K = _head(rng, n=10)
    beta = 0.7
    split = score_split(X, W_Q, W_K)
    A = 0.5 * _free_link(rng, 10)
    P = softmax_operator(split.bond + A, beta=beta)
    assert MarkovOperator(P).reversibility_residual > 0.05
    triangles = triangle_cycles(10)
    assert len(triangles) == 9 * 8 // 2  # (N-1)(N-2)/2 independent cycles of K_N
    np.testing.assert_allclose(cycle_affinities(P, triangles), 2 * beta * link_holonomy(A, triangles), atol=1e-13)
    assert not is_exact_link(A)
    # The head's own link (not a random one) obeys the same identity, on networkx's fundamental cycle basis.
    P_head = softmax_operator(split.bond + split.link, beta=beta)
    basis = cycle_basis(P_head)
    np.testing.assert_allclose(cycle_affinities(P_head, basis), 2 * beta * link_holonomy(split.link, basis), atol=1e-13)


# ------------------------------------------------------------------------------ potentials and Hodge split


def test_exact_link_and_link_potential_by_hand():
    # Oracle: φ_i - φ_j and the row mean, by hand.
    A = exact_link(np.array([2.0, -1.0, 5.0]))
    assert A.tolist() == [[0.0, 3.0, -3.0], [-3.0, 0.0, -6.0], [3.0, 6.0, 0.0]]
    assert link_potential(A).tolist() == [0.0, -3.0, 3.0]  # φ minus its mean 2
    stacked = exact_link(np.array([[0.0, 1.0], [2.0, 0.0]]))
    assert stacked.tolist() == [[[0.0, -1.0], [1.0, 0.0]], [[0.0, 2.0], [-2.0, 0.0]]]


def test_link_potential_is_the_least_squares_potential(rng):
    # Oracle: scipy lstsq on the incidence system (φ_i - φ_j ≈ A_ij over all ordered pairs), mean removed.
    n = 7
    A = _free_link(rng, n)
    rows = []
    for i in range(n):
        for j in range(n):
            r = np.zeros(n)
            r[i] += 1.0
            r[j] -= 1.0
            rows.append(r)
    phi = scipy.linalg.lstsq(np.array(rows), A.ravel())[0]
    np.testing.assert_allclose(link_potential(A), phi - phi.mean(), atol=1e-13)


def test_link_hodge_split_on_the_complete_graph(rng):
    # Oracle: the closed forms on K_N — exact part = exact_link(link_potential), A^⊥ 1 = 0 — and the holonomy:
    # the exact part carries none, the coexact part all of it.
    n = 8
    A = _free_link(rng, n)
    parts = link_hodge_split(A)
    assert isinstance(parts, LinkHodgeSplit)
    np.testing.assert_allclose(parts.exact, exact_link(link_potential(A)), atol=1e-13)
    np.testing.assert_allclose(parts.coexact.sum(axis=1), 0.0, atol=1e-13)
    np.testing.assert_allclose(parts.exact + parts.coexact, A, atol=1e-14)
    np.testing.assert_allclose(link_holonomy(parts.exact), 0.0, atol=1e-13)
    np.testing.assert_allclose(link_holonomy(parts.coexact), link_holonomy(A), atol=1e-13)
    assert is_exact_link(parts.exact) and not is_exact_link(parts.coexact)


def test_link_hodge_split_default_is_the_complete_graph_even_with_zero_entries(rng):
    # Oracle: the explicit complete-graph weights (ones off the diagonal). A link with a zero pair still lives
    # on K_N, so the default must not read the graph off the link's support.
    A = _free_link(rng, 5)
    A[1, 3] = A[3, 1] = 0.0
    default = link_hodge_split(A)
    explicit = link_hodge_split(A, weights=np.ones((5, 5)) - np.eye(5))
    np.testing.assert_allclose(default.exact, explicit.exact, atol=1e-15)
    np.testing.assert_allclose(default.coexact.sum(axis=1), 0.0, atol=1e-13)


def test_link_hodge_split_with_weights_is_divergence_free(rng):
    # Oracle: Σ_j w_ij A^⊥_ij = 0 (the definition of the coexact part) on a weighted path-plus-chord graph.
    n = 5
    w = np.zeros((n, n))
    for i, j, v in [(0, 1, 1.0), (1, 2, 2.0), (2, 3, 0.5), (3, 4, 1.5), (0, 2, 1.0), (1, 4, 3.0)]:
        w[i, j] = w[j, i] = v
    A = _free_link(rng, n) * (w > 0)
    exact, coexact = link_hodge_split(A, weights=w)
    np.testing.assert_allclose((w * coexact).sum(axis=1), 0.0, atol=1e-13)
    np.testing.assert_allclose(exact + coexact, A, atol=1e-14)


# ------------------------------------------------------------------------------------------- holonomy


def test_link_holonomy_by_hand_open_closed_and_uneven_cycles(rng):
    # Oracle: the cycle sums written out by hand.
    A = _free_link(rng, 5)
    cycles = [(0, 1, 2, 0), (1, 3, 4), (0, 4, 2, 3, 1)]
    expected = [
        A[0, 1] + A[1, 2] + A[2, 0],
        A[1, 3] + A[3, 4] + A[4, 1],
        A[0, 4] + A[4, 2] + A[2, 3] + A[3, 1] + A[1, 0],
    ]
    np.testing.assert_allclose(link_holonomy(A, cycles), expected, rtol=1e-15, atol=1e-15)
    # Reversing a cycle flips the sign; the default basis is the triangles.
    np.testing.assert_allclose(link_holonomy(A, [(0, 2, 1)]), -link_holonomy(A, [(0, 1, 2)]), rtol=1e-15)
    np.testing.assert_array_equal(link_holonomy(A), link_holonomy(A, triangle_cycles(5)))
    assert link_holonomy(A, []).shape == (0,)


def test_link_holonomy_and_is_exact_link_reject_bad_input(rng):
    A = _free_link(rng, 4)
    with pytest.raises(ValueError, match=r"cycles\[1\] must hold vertex indices in \[0, 4\), got \(0, 7\)"):
        link_holonomy(A, [(0, 1, 2), (0, 7)])
    with pytest.raises(ValueError, match=r"cycles\[0\] must visit at least 2 vertices, got \(3, 3\)"):
        link_holonomy(A, [(3, 3)])
    with pytest.raises(TypeError, match=r"cycles must be a sequence of vertex sequences, got str"):
        link_holonomy(A, "012")
    with pytest.raises(TypeError, match=r"cycles\[0\] must be a sequence of integer vertex indices"):
        link_holonomy(A, [(0.0, 1.0, 2.0)])
    with pytest.raises(ValueError, match=r"link must be antisymmetric, got max \|link \+ link\^T\|"):
        link_holonomy(A + np.eye(4), [(0, 1, 2)])
    with pytest.raises(ValueError, match=r"link must be antisymmetric"):
        link_potential(np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"rtol must be in \[0, inf\), got -1.0"):
        is_exact_link(A, rtol=-1.0)
    with pytest.raises(ValueError, match=r"n must be an integer >= 0, got -1"):
        triangle_cycles(-1)


def test_is_exact_link_tolerance(rng):
    # Oracle: an exact link perturbed by a circulation of relative size δ is exact iff δ ≤ rtol (up to a
    # factor 3 from the three triangle terms).
    phi = rng.standard_normal(6)
    A = exact_link(phi)
    C = 0.5 * _free_link(rng, 6)
    C = C / np.abs(C).max() * np.abs(A).max()
    assert is_exact_link(A + 1e-13 * C)  # below the default 1e-10
    assert not is_exact_link(A + 1e-6 * C)
    assert is_exact_link(A + 1e-6 * C, rtol=1e-4)
    assert is_exact_link(np.zeros((3, 3))) and is_exact_link(np.zeros((0, 0)))


# ---------------------------------------------------------------------------------------- numpy ≡ torch


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_and_torch_agree(rng, backend):
    # Oracle: the numpy path on the same float64 data; the same operations in another library (rounding only).
    X, W_Q, W_K = _head(rng, n=7)
    split_np = score_split(X, W_Q, W_K)
    split = score_split(*(to_backend(x, backend) for x in (X, W_Q, W_K)))
    assert type(split.bond) is type(to_backend(X, backend))
    for a, b in zip(split, split_np, strict=True):
        np.testing.assert_allclose(to_numpy(a), b, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(
        to_numpy(distance_form_logits(split, 0.5)), distance_form_logits(split_np, 0.5), rtol=1e-13, atol=1e-14
    )
    for a, b in zip(destination_tilt(split, 0.5), destination_tilt(split_np, 0.5), strict=True):
        np.testing.assert_allclose(to_numpy(a), b, rtol=1e-13)
    for a, b in zip(bond_link_split(to_backend(W_Q @ W_K.T, backend)), bond_link_split(W_Q @ W_K.T), strict=True):
        np.testing.assert_allclose(to_numpy(a), b, rtol=1e-14, atol=1e-15)
    A_np = _free_link(rng, 7)
    A = to_backend(A_np, backend)
    np.testing.assert_allclose(to_numpy(link_holonomy(A)), link_holonomy(A_np), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(to_numpy(link_potential(A)), link_potential(A_np), rtol=1e-14)
    for a, b in zip(link_hodge_split(A), link_hodge_split(A_np), strict=True):
        np.testing.assert_allclose(to_numpy(a), b, atol=1e-14)
    phi = rng.standard_normal(7)
    np.testing.assert_array_equal(to_numpy(exact_link(to_backend(phi, backend))), exact_link(phi))
    assert is_exact_link(to_backend(exact_link(phi), backend)) and not is_exact_link(A)
