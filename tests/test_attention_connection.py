"""Tests of the connection walk of attention (workbench.attention: _walk, _effective, _mixing, _polar, _holonomy, _twisted_ring).

Oracles: explicit loops over edges (dense references), the closed-form spectrum of the twisted ring,
scipy.linalg.polar and scipy.linalg.sqrtm (independent implementations of the polar factors), hand values,
and exact algebraic laws (π-adjointness, gauge conjugation, parallel sections).  Sizes are tiny (n ≤ 12,
d ≤ 4), so rounding is a few ulps times the number of summed terms: most identities are held to 1e-12.
"""

# The transport field is called O as in the paper.
# ruff: noqa: E741

import math

import numpy as np
import pytest
import scipy.linalg
from conftest import HAS_TORCH

from workbench.attention import (
    MixingGenerator,
    OrthogonalityDeviation,
    block_operator,
    connection_energy,
    connection_laplacian,
    connection_step,
    cycle_connection,
    effective_connection,
    gauge_transform,
    geometric_drift,
    holonomy,
    holonomy_deviation,
    mixing_generator,
    orthogonality_deviation,
    polar_transports,
    propagate,
)
from workbench.backend import to_backend, to_numpy
from workbench.markov import MarkovOperator

# ---- helpers -----------------------------------------------------------------------------------


def random_stochastic(rng, n, mask=None):
    w = rng.random((n, n)) + 0.05
    if mask is not None:
        w = np.where(mask, w, 0.0)
    return w / w.sum(axis=1, keepdims=True)


def softmax_head(rng, n, mask):
    # a head as attention computes it: masked logits at -inf, row softmax, exact zeros off the mask
    logits = np.where(mask, rng.standard_normal((n, n)), -np.inf)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def random_orthogonal(rng, shape, d):
    q, r = np.linalg.qr(rng.standard_normal((*shape, d, d)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def rotation(phi):
    # right multiplication turns row vectors counterclockwise by phi (the module's convention)
    return np.array([[math.cos(phi), math.sin(phi)], [-math.sin(phi), math.cos(phi)]])


def loop_propagate(A, O, X):
    n = A.shape[0]
    return np.array([sum(A[i, j] * X[j] @ O[i, j] for j in range(n)) for i in range(n)])


def flat_connection(rng, n, d):
    V = rng.standard_normal((n, d, d)) + 2 * np.eye(d)
    O = np.linalg.inv(V)[None, :] @ V[:, None]  # O[i, j] = V_j^{-1} V_i
    return V, O


def ring_spectrum(n, theta, w=1.0):
    k = np.arange(n)
    return np.sort(np.concatenate([w * (2 - 2 * np.cos((2 * np.pi * k + s * theta) / n)) for s in (1, -1)]))


def is_torch(x):
    return type(x).__module__.startswith("torch")


# ---- the connection walk and its block matrix --------------------------------------------------


def test_propagate_matches_the_edge_loop(rng, backend):
    # Oracle: Σ_j A_ij X_j O_ij as an explicit double loop; tolerance 1e-13 (7 terms of O(1) per entry).
    n, d = 7, 3
    A, O, X = rng.random((n, n)), rng.standard_normal((n, n, d, d)), rng.standard_normal((n, d))
    out = propagate(*(to_backend(a, backend) for a in (A, O, X)))
    assert is_torch(out) == backend.startswith("torch")
    np.testing.assert_allclose(to_numpy(out), loop_propagate(A, O, X), rtol=1e-13, atol=1e-14)


def test_identity_transports_give_ordinary_averaging(rng, backend):
    # Oracle: A X (SEED: O ≡ I is random-walk averaging); rounding only (1e-14, 6 terms per entry).
    n, d = 6, 4
    A, X = random_stochastic(rng, n), rng.standard_normal((n, d))
    identity = np.broadcast_to(np.eye(d), (n, n, d, d)).copy()
    Ab, Xb = to_backend(A, backend), to_backend(X, backend)
    np.testing.assert_allclose(
        to_numpy(propagate(Ab, None, Xb)), A @ X, rtol=1e-14
    )  # torch's matmul rounds its own way
    np.testing.assert_allclose(to_numpy(propagate(Ab, to_backend(identity, backend), Xb)), A @ X, rtol=1e-14)


def test_block_operator_has_transposed_blocks_and_acts_on_row_stacking(rng, backend):
    # Oracles: the block definition T_ij = A_ij O_ijᵀ entry by entry (exact: one product each), and
    # vec_r(𝒯X) = T vec_r(X) with vec_r = reshape(-1) against the edge loop (rounding, 1e-13).
    n, d = 5, 3
    A, O, X = rng.random((n, n)), rng.standard_normal((n, n, d, d)), rng.standard_normal((n, d))
    T = to_numpy(block_operator(to_backend(A, backend), to_backend(O, backend)))
    assert T.shape == (n * d, n * d)
    for i in range(n):
        for j in range(n):
            np.testing.assert_array_equal(T[i * d : (i + 1) * d, j * d : (j + 1) * d], A[i, j] * O[i, j].T)
    np.testing.assert_allclose(T @ X.reshape(-1), loop_propagate(A, O, X).reshape(-1), rtol=1e-13, atol=1e-14)


# ---- multi-head attention as one connection step -------------------------------------------------


def causal_heads(rng, n):
    causal = np.tril(np.ones((n, n), dtype=bool))
    i, j = np.indices((n, n))
    window = causal & (i - j <= 2)  # sliding window: edges active in some heads only
    previous = causal & (i - j <= 1)
    return np.stack([softmax_head(rng, n, m) for m in (causal, window, previous, causal)])


def test_mha_is_H_times_one_connection_step(rng, backend):
    # Oracle: MHA(X) = Σ_h A^(h) X M_h as a loop over heads (Eq. 4); the seed identity (Eq. 10)
    # MHA = H 𝒯(A_eff, O_eff) X must hold to rounding (1e-12: 4 heads × 9 tokens of O(1) terms), with causal
    # and windowed masks so that the upper triangle is inactive and O_eff is filled there.
    n, d, H = 9, 4, 4
    A_heads = causal_heads(rng, n)
    M_heads, X = rng.standard_normal((H, d, d)), rng.standard_normal((n, d))
    mha = sum(A_heads[h] @ X @ M_heads[h] for h in range(H))
    Ab, Mb, Xb = (to_backend(a, backend) for a in (A_heads, M_heads, X))
    A_eff, O_eff = effective_connection(Ab, Mb)
    assert is_torch(O_eff) == backend.startswith("torch")
    A_eff, O_eff = to_numpy(A_eff), to_numpy(O_eff)
    np.testing.assert_allclose(A_eff.sum(axis=1), 1.0, atol=1e-14)  # mean of row-stochastic heads (SEED)
    np.testing.assert_allclose(H * loop_propagate(A_eff, O_eff, X), mha, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(to_numpy(connection_step(Ab, Xb, Mb)), mha, rtol=1e-12, atol=1e-13)
    # block level: T_MHA with blocks Σ_h A^(h)_ij M_hᵀ equals H T(A_eff, O_eff)
    T_mha = sum(block_operator(A_heads[h], np.broadcast_to(M_heads[h], (n, n, d, d))) for h in range(H))
    np.testing.assert_allclose(H * block_operator(A_eff, O_eff), T_mha, rtol=1e-12, atol=1e-14)
    # inactive edges (every head zero) carry the identity by default
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    assert np.all(A_eff[upper] == 0)
    np.testing.assert_array_equal(O_eff[upper], np.broadcast_to(np.eye(d), (int(upper.sum()), d, d)))


def test_effective_transport_is_the_attention_weighted_mean_and_fill_is_irrelevant(rng):
    # Oracles: on an edge seen by one head only, O_eff is that head's M (exact up to one division);
    # on an edge seen by all heads, Σ_h A_h M_h / Σ_h A_h by hand; the fill changes O_eff only where
    # A_eff = 0, so 𝒯 is unchanged (exactly: those terms are 0 · anything finite).
    n, d = 6, 2
    A_heads = causal_heads(rng, n)
    M_heads = rng.standard_normal((4, d, d))
    A_eff, O_eff = effective_connection(A_heads, M_heads)
    i, j = 5, 3  # i - j = 2: inside the causal and window heads (0, 1, 3), outside the previous-token head
    weights = A_heads[:, i, j]
    assert weights[2] == 0 and np.all(weights[[0, 1, 3]] > 0)
    expected = np.einsum("h,hab->ab", weights, M_heads) / weights.sum()
    np.testing.assert_allclose(O_eff[i, j], expected, rtol=1e-14, atol=1e-15)
    single = np.stack([A_heads[0], np.zeros((n, n))])
    _, O_single = effective_connection(single, M_heads[:2])
    np.testing.assert_allclose(O_single[4, 0], M_heads[0], rtol=1e-15)
    _, O_zero_fill = effective_connection(A_heads, M_heads, fill=np.zeros((d, d)))
    X = rng.standard_normal((n, d))
    np.testing.assert_array_equal(propagate(A_eff, O_zero_fill, X), propagate(A_eff, O_eff, X))
    np.testing.assert_array_equal(O_zero_fill[A_eff == 0], 0.0)


# ---- the connection Laplacian and parallel sections ----------------------------------------------


def test_parallel_sections_lie_in_the_kernel(rng, backend):
    # Oracle: a flat connection O_ij = V_j⁻¹V_i has the parallel section X_i = c V_i (X_j O_ij = X_i),
    # so L X = 0 for row-stochastic A (SEED), 𝒯X = X, ℰ_c(X) = 0, and every holonomy is I.  Tolerance:
    # 1e-12 relative to ‖X‖ (V is well conditioned, the inverses cost a few ulps times cond(V)).
    n, d = 6, 3
    V, O = flat_connection(rng, n, d)
    X = rng.standard_normal(d) @ V
    A = random_stochastic(rng, n)
    Ab, Ob, Xb = (to_backend(a, backend) for a in (A, O, X))
    L = to_numpy(connection_laplacian(Ab, Ob))
    scale = np.linalg.norm(X)
    assert np.linalg.norm(L @ X.reshape(-1)) <= 1e-12 * scale
    np.testing.assert_allclose(to_numpy(propagate(Ab, Ob, Xb)), X, atol=1e-12 * scale)
    assert abs(float(connection_energy(Ab, Ob, Xb))) <= 1e-24 * scale**2 * n * n
    hol = to_numpy(holonomy(Ob, (0, 3, 5, 1, 0)))
    np.testing.assert_allclose(hol, np.eye(d), atol=1e-12)
    # a generic (non-parallel) section is not in the kernel: the test can fail
    assert np.linalg.norm(L @ rng.standard_normal(n * d)) > 1e-2


def test_unnormalized_laplacian_is_degree_minus_T(rng):
    # Oracle: D ⊗ I − T assembled with np.kron; the random-walk form is I − T (exact arithmetic here).
    n, d = 4, 2
    A, O = rng.random((n, n)), rng.standard_normal((n, n, d, d))
    T = block_operator(A, O)
    np.testing.assert_array_equal(connection_laplacian(A, O), np.eye(n * d) - T)
    np.testing.assert_allclose(
        connection_laplacian(A, O, kind="unnormalized"), np.kron(np.diag(A.sum(1)), np.eye(d)) - T, rtol=1e-15
    )


# ---- generator split and energy -------------------------------------------------------------------


def test_mixing_generator_parts_are_pi_self_and_skew_adjoint(rng, backend):
    # Oracles: ⟨X, L Y⟩_π = ⟨L♯X, Y⟩_π (definition of the adjoint), ΠL_sym symmetric, ΠL_skew antisymmetric,
    # L_sym + L_skew = L_mix; π is the Perron vector of A_effᵀ (dense eigenvector).  Tolerance 1e-13 relative
    # (sums of ≤ 24 terms; π from a linear solve of a well-conditioned 8×8 system).
    n, d = 8, 3
    A, O = random_stochastic(rng, n), rng.standard_normal((n, n, d, d))
    gen = mixing_generator(to_backend(A, backend), to_backend(O, backend))
    assert isinstance(gen, MixingGenerator) and is_torch(gen.L_mix) == backend.startswith("torch")
    L, Ls, Lk, Lsh, pi = (to_numpy(x) for x in (gen.L_mix, gen.L_sym, gen.L_skew, gen.L_adjoint, gen.pi))
    w, v = np.linalg.eig(A.T)
    perron = np.real(v[:, np.argmin(np.abs(w - 1))])
    np.testing.assert_allclose(pi, perron / perron.sum(), rtol=1e-12)
    Pi = np.diag(np.repeat(pi, d))
    x, y = rng.standard_normal(n * d), rng.standard_normal(n * d)
    assert math.isclose(x @ Pi @ L @ y, (Lsh @ x) @ Pi @ y, rel_tol=1e-12)
    np.testing.assert_allclose(Pi @ Ls, (Pi @ Ls).T, atol=1e-15)
    np.testing.assert_allclose(Pi @ Lk, -(Pi @ Lk).T, atol=1e-15)
    np.testing.assert_allclose(Ls + Lk, L, atol=1e-15)
    assert np.linalg.norm(Lk) > 0.1  # a generic walk has drift


def test_skew_part_vanishes_for_a_reversible_walk_with_inverse_consistent_transports(rng, backend):
    # Oracle: π_i A_ij O_ijᵀ = π_j A_ji O_ji when A is reversible (A = rownorm K, K symmetric, π ∝ K1) and
    # O_ji = O_ijᵀ orthogonal (diagonal blocks symmetric orthogonal: Householder reflections), so ΠT is
    # symmetric and L_skew = 0 to rounding (1e-15: entries of size ≤ 1).
    n, d = 7, 3
    K = rng.random((n, n))
    K = K + K.T
    A = K / K.sum(axis=1, keepdims=True)
    Q = random_orthogonal(rng, (n, n), d)
    O = np.empty_like(Q)
    for i in range(n):
        u = rng.standard_normal(d)
        O[i, i] = np.eye(d) - 2 * np.outer(u, u) / (u @ u)
        for j in range(i + 1, n):
            O[i, j], O[j, i] = Q[i, j], Q[i, j].T
    gen = mixing_generator(to_backend(A, backend), to_backend(O, backend))
    np.testing.assert_allclose(to_numpy(gen.pi), K.sum(1) / K.sum(), rtol=1e-12)
    assert np.max(np.abs(to_numpy(gen.L_skew))) <= 1e-15
    # breaking inverse consistency on one edge breaks it: the test can fail
    O[0, 1] = Q[0, 1] @ rotation_3d(0.3)
    assert np.max(np.abs(mixing_generator(A, O).L_skew)) > 1e-3


def rotation_3d(phi):
    return np.array([[math.cos(phi), math.sin(phi), 0.0], [-math.sin(phi), math.cos(phi), 0.0], [0.0, 0.0, 1.0]])


def test_energy_is_the_quadratic_form_for_stationary_pi_and_orthogonal_transports(rng):
    # Oracle: ⟨X, L_mix X⟩_π computed as xᵀΠLx from the dense generator.  [DERIVED] hypotheses: A row-stochastic,
    # πᵀA = πᵀ, every O_ij orthogonal — reversibility is NOT needed (ε_rev of this walk is far from 0).
    # Tolerance 1e-12 relative (sums of n²d = 300 terms).  Then L_sym is π-PSD.
    n, d = 10, 3
    A = random_stochastic(rng, n)
    assert MarkovOperator(A).reversibility_residual > 0.05
    O = random_orthogonal(rng, (n, n), d)
    gen = mixing_generator(A, O)
    weight = np.repeat(gen.pi, d)
    for _ in range(3):
        X = rng.standard_normal((n, d))
        x = X.reshape(-1)
        form = x @ (weight * (gen.L_mix @ x))
        assert math.isclose(float(connection_energy(A, O, X)), form, rel_tol=1e-12)
    root = np.sqrt(weight)
    sym = root[:, None] * gen.L_sym / root[None, :]  # Π^{1/2} L_sym Π^{-1/2}, symmetric
    assert np.linalg.eigvalsh(0.5 * (sym + sym.T)).min() >= -1e-13


def test_energy_identity_needs_its_hypotheses_and_the_residual_is_as_derived(rng):
    # Oracle: the exact residual ⟨X,LX⟩_π − ℰ_c = Σ π_i(1 − r_i/2)‖X_i‖² − ½Σ π_i A_ij ‖X_j O_ij‖² (expanding the
    # square), for arbitrary A ≥ 0, O and π; and the identity visibly fails when one hypothesis is dropped
    # (uniform π for a nonreversible walk; scaled transports 1.3·Q).  Tolerance 1e-12 relative.
    n, d = 8, 2
    A = random_stochastic(rng, n)
    pi = MarkovOperator(A).stationary
    Q = random_orthogonal(rng, (n, n), d)
    X = rng.standard_normal((n, d))
    x = X.reshape(-1)

    def form(A, O, pi):
        return x @ (np.repeat(pi, d) * (connection_laplacian(A, O) @ x))

    def residual(A, O, pi):
        r = A.sum(axis=1)
        moved = np.einsum("jb,ijba->ija", X, O)
        return np.sum(pi * (1 - r / 2) * np.sum(X**2, 1)) - 0.5 * np.sum(pi[:, None] * A * np.sum(moved**2, -1))

    uniform = np.full(n, 1 / n)
    for A_, O_, pi_ in [(A, Q, uniform), (A, 1.3 * Q, pi), (rng.random((n, n)), rng.standard_normal((n, n, d, d)), pi)]:
        gap = form(A_, O_, pi_) - float(connection_energy(A_, O_, X, pi_))
        assert abs(gap) > 1e-3
        assert math.isclose(gap, residual(A_, O_, pi_), rel_tol=1e-11)


def test_connection_energy_matches_the_edge_sum_on_both_backends(rng, backend):
    # Oracle: ½Σ π_i A_ij ‖X_i − X_j O_ij‖² as an explicit loop; tolerance 1e-13 relative.
    n, d = 5, 3
    A, O, X = rng.random((n, n)), rng.standard_normal((n, n, d, d)), rng.standard_normal((n, d))
    pi = rng.random(n)
    expected = 0.5 * sum(pi[i] * A[i, j] * np.sum((X[i] - X[j] @ O[i, j]) ** 2) for i in range(n) for j in range(n))
    value = connection_energy(*(to_backend(a, backend) for a in (A, O, X, pi)))
    assert is_torch(value) == backend.startswith("torch")
    assert math.isclose(float(value), expected, rel_tol=1e-13)


# ---- polar split -----------------------------------------------------------------------------------


def test_polar_factors_against_scipy_and_sqrtm(rng, backend):
    # Oracles: R orthogonal and S symmetric PSD with RS = O (definition); scipy.linalg.polar(side="right") on
    # a few blocks (independent implementation; the factors are unique for nonsingular O) and
    # S = sqrtm(OᵀO) (Schur-based, an independent algorithm).  Tolerance 1e-12: random Gaussian 4×4 blocks
    # (condition numbers ~ 10²) lose at most a few digits in sqrtm.
    n, d = 4, 4
    O = rng.standard_normal((n, n, d, d))
    R, S = (to_numpy(f) for f in polar_transports(to_backend(O, backend)))
    eye = np.broadcast_to(np.eye(d), R.shape)
    np.testing.assert_allclose(np.swapaxes(R, -1, -2) @ R, eye, atol=1e-12)
    np.testing.assert_allclose(R @ S, O, atol=1e-12)
    np.testing.assert_allclose(S, np.swapaxes(S, -1, -2), atol=1e-13)
    assert np.linalg.eigvalsh(S).min() > 0
    for i, j in [(0, 0), (1, 3), (3, 2)]:
        R_ref, S_ref = scipy.linalg.polar(O[i, j], side="right")
        np.testing.assert_allclose(R[i, j], R_ref, atol=1e-12)
        np.testing.assert_allclose(S[i, j], S_ref, atol=1e-12)
        np.testing.assert_allclose(S[i, j], np.real(scipy.linalg.sqrtm(O[i, j].T @ O[i, j])), atol=1e-11)


def test_polar_of_singular_transports_orthogonal_completion_or_partial_isometry(rng):
    # Oracles: for rank-2 O in 4 dimensions, S = (OᵀO)^{1/2} is still unique (sqrtm is not reliable at
    # a singular matrix, so S² = OᵀO is checked), R is orthogonal by default, and partial=True gives the
    # partial isometry: RRᵀR = R, RᵀR = projector onto range(S) (S S⁺), still RS = O.  Tolerance 1e-12.
    d = 4
    O = rng.standard_normal((d, 2)) @ rng.standard_normal((2, d))
    R, S = polar_transports(O)
    np.testing.assert_allclose(R.T @ R, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(R @ S, O, atol=1e-12)
    np.testing.assert_allclose(S @ S, O.T @ O, atol=1e-12)
    P, S2 = polar_transports(O, partial=True)
    np.testing.assert_array_equal(S2, S)
    np.testing.assert_allclose(P @ S, O, atol=1e-12)
    np.testing.assert_allclose(P @ P.T @ P, P, atol=1e-12)
    np.testing.assert_allclose(P.T @ P, S @ np.linalg.pinv(S), atol=1e-10)
    assert np.linalg.matrix_rank(P) == 2


# ---- scaled orthogonality ----------------------------------------------------------------------------


def test_orthogonality_deviation_closed_forms(rng, backend):
    # Oracles: δ = 0 for cQ (Q orthogonal, c > 0); δ = √(1 − 1/d) for rank-one O (the maximum, G has one
    # nonzero eigenvalue); δ = |a² − b²|/(√2 (a² + b²)) for diag(a, b) by hand.  Tolerance 1e-14 (d ≤ 4).
    d = 4
    scaled = rng.uniform(0.5, 3.0, (3, 1, 1)) * random_orthogonal(rng, (3,), d)
    rank_one = np.stack([np.outer(rng.standard_normal(d), rng.standard_normal(d)) for _ in range(2)])
    O = np.concatenate([scaled, rank_one])
    result = orthogonality_deviation(to_backend(O, backend), return_edges=True)
    assert isinstance(result, OrthogonalityDeviation) and is_torch(result.edges) == backend.startswith("torch")
    edges = to_numpy(result.edges)
    assert np.max(edges[:3]) <= 1e-14
    np.testing.assert_allclose(edges[3:], math.sqrt(1 - 1 / d), rtol=1e-14)
    assert math.isclose(result.mean, 2 * math.sqrt(1 - 1 / d) / 5, rel_tol=1e-14)
    a, b = 1.5, 0.5
    hand = abs(a**2 - b**2) / (math.sqrt(2) * (a**2 + b**2))
    assert math.isclose(orthogonality_deviation(np.diag([a, b])), hand, rel_tol=1e-14)


def test_orthogonality_deviation_weights_mask_and_invariances(rng):
    # Oracles: the weighted mean Σ w δ / Σ w over valid pairs computed by hand from the per-edge values;
    # zero transports and masked pairs excluded; δ invariant under O ↦ c Q₁ O Q₂ (G ↦ c² Q₂ᵀ G Q₂).
    n, d = 5, 3
    O = rng.standard_normal((n, n, d, d))
    O[0, 1] = 0.0
    W = rng.random((n, n))
    W[2, 2] = 0.0
    mask = np.tril(np.ones((n, n), dtype=bool))
    result = orthogonality_deviation(O, weights=W, mask=mask, return_edges=True)
    valid = mask & (W > 0)
    np.testing.assert_array_equal(result.valid, valid)
    manual = np.sum(W[valid] * result.edges[valid]) / np.sum(W[valid])
    assert math.isclose(result.mean, manual, rel_tol=1e-14)
    assert np.all(result.edges[~valid] == 0)
    unweighted = orthogonality_deviation(O, return_edges=True)
    assert not unweighted.valid[0, 1] and unweighted.valid.sum() == n * n - 1
    Q1, Q2 = random_orthogonal(rng, (), d), random_orthogonal(rng, (), d)
    moved = orthogonality_deviation(2.5 * Q1 @ O @ Q2, return_edges=True)
    np.testing.assert_allclose(moved.edges, unweighted.edges, rtol=1e-12, atol=1e-15)


# ---- geometric drift ----------------------------------------------------------------------------------


def test_geometric_drift_hand_value_zero_and_mask(rng, backend):
    # Oracles: 1 − √3/2 by hand ([[1,0],[.5,.5]] vs I: cos = 1.5/(√1.5·√2)); 0 for equal and proportional
    # walks (≤ 1e-15: 1 − cos of nearly parallel vectors is rounding); entries outside the mask are ignored.
    A_prev = to_backend(np.array([[1.0, 0.0], [0.5, 0.5]]), backend)
    assert math.isclose(geometric_drift(A_prev, to_backend(np.eye(2), backend)), 1 - math.sqrt(3) / 2, rel_tol=1e-14)
    n = 8
    causal = np.tril(np.ones((n, n), dtype=bool))
    A = random_stochastic(rng, n, causal)
    B = random_stochastic(rng, n, causal)
    Ab, Bb = to_backend(A, backend), to_backend(B, backend)
    assert geometric_drift(Ab, Ab) <= 1e-15
    assert geometric_drift(Ab, 3 * Ab) <= 1e-15
    d_full = geometric_drift(Ab, Bb)
    assert 0.01 < d_full < 1
    assert math.isclose(geometric_drift(Ab, Bb, mask=causal), d_full, rel_tol=1e-14)  # zeros above the diagonal
    noisy = A + np.triu(rng.random((n, n)), 1)  # differs from A only outside the mask
    assert geometric_drift(Ab, to_backend(noisy, backend), mask=causal) <= 1e-15


# ---- gauge and holonomy --------------------------------------------------------------------------------


def test_gauge_transform_is_equivariant_and_conjugates_holonomy(rng, backend):
    # Oracles: 𝒯(A, O')(XV) = (𝒯(A,O)X)V row by row (definition of the gauge action); Hol' = V_{i0}⁻¹ Hol V_{i0};
    # the sorted eigenvalues of Hol and Hol' agree.  Tolerances: 1e-11 for the linear identities (inverses of
    # random 3×3 matrices shifted by 2I, cond ≲ 10); 1e-8 for eigenvalues of a non-normal 3×3 (eigenvalue
    # conditioning amplifies rounding).
    n, d = 6, 3
    O = rng.standard_normal((n, n, d, d))
    V = rng.standard_normal((n, d, d)) + 2 * np.eye(d)
    A, X = rng.random((n, n)), rng.standard_normal((n, d))
    Ob, Vb = to_backend(O, backend), to_backend(V, backend)
    O2 = to_numpy(gauge_transform(Ob, Vb))
    for i, j in [(0, 1), (4, 2), (5, 5)]:
        np.testing.assert_allclose(O2[i, j], np.linalg.inv(V[j]) @ O[i, j] @ V[i], rtol=1e-12, atol=1e-12)
    XV = np.einsum("ib,iba->ia", X, V)
    np.testing.assert_allclose(
        loop_propagate(A, O2, XV), np.einsum("ib,iba->ia", loop_propagate(A, O, X), V), rtol=1e-11, atol=1e-11
    )
    cycle = (2, 0, 4, 1, 2)
    hol, hol2 = to_numpy(holonomy(Ob, cycle)), to_numpy(holonomy(to_backend(O2, backend), cycle))
    np.testing.assert_allclose(hol2, np.linalg.inv(V[2]) @ hol @ V[2], rtol=1e-10, atol=1e-10)

    def spectrum(M):
        ev = np.linalg.eigvals(M)
        return ev[np.lexsort((ev.imag, ev.real))]

    np.testing.assert_allclose(spectrum(hol2), spectrum(hol), rtol=1e-8, atol=1e-8)
    # flat connections are the gauge orbit of the identity
    identity = np.broadcast_to(np.eye(d), (n, n, d, d))
    W = rng.standard_normal((n, d, d)) + 2 * np.eye(d)
    np.testing.assert_allclose(
        gauge_transform(identity, W), np.linalg.inv(W)[None, :] @ W[:, None], rtol=1e-14, atol=1e-14
    )


def test_holonomy_follows_the_triangle_formula_and_reverses_to_the_inverse(rng, backend):
    # Oracles: §B.6, walking i → k → j → i gives O_ki O_jk O_ij (exact: the same products in the same order);
    # for inverse-consistent orthogonal transports (O_ji = O_ijᵀ) the reversed cycle gives Holᵀ (1e-14).
    n, d = 5, 3
    O = rng.standard_normal((n, n, d, d))
    i, j, k = 1, 3, 4
    hol = to_numpy(holonomy(to_backend(O, backend), (i, k, j, i)))
    np.testing.assert_allclose(hol, O[k, i] @ O[j, k] @ O[i, j], rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(to_numpy(holonomy(to_backend(O, backend), (2, 2))), O[2, 2])
    _, Oc = cycle_connection(n, 1.1)
    forward, backward = holonomy(Oc, (*range(n), 0)), holonomy(Oc, (0, *range(n - 1, 0, -1), 0))
    np.testing.assert_allclose(forward, rotation(1.1), atol=1e-15)
    np.testing.assert_allclose(backward, forward.T, atol=1e-15)


def test_holonomy_deviation_closed_form_and_scale_removal(rng, backend):
    # Oracle: ‖R(θ) − I‖_F/√2 = 2|sin(θ/2)| (closed form); a uniform scale c on every edge multiplies the
    # k-step holonomy by c^k, which remove_scale divides out (1e-14).
    n = 6
    cycles = [(*range(n), 0), (0, 1, 2, 1, 0)]
    for theta in (0.0, 0.4, math.pi, 5.0):
        _, O = cycle_connection(n, theta)
        values = to_numpy(holonomy_deviation(to_backend(O, backend), cycles))
        np.testing.assert_allclose(values, [2 * abs(math.sin(theta / 2)), 0.0], atol=1e-14)
        scaled = to_numpy(holonomy_deviation(to_backend(1.7 * O, backend), cycles, remove_scale=True))
        np.testing.assert_allclose(scaled, values, atol=1e-14)
    assert to_numpy(holonomy_deviation(1.7 * O, cycles))[1] > 1  # with the scale kept, 1.7⁴ I is far from I


# ---- the oracle: the twisted ring -------------------------------------------------------------------------


@pytest.mark.parametrize("uniform", [False, True])
@pytest.mark.parametrize(("n", "theta", "w"), [(3, 0.3, 1.0), (5, 2.0, 1.0), (8, -1.3, 0.7), (12, math.pi, 2.5)])
def test_ring_spectrum_matches_the_closed_form(n, theta, w, uniform):
    # Oracle: {w(2 − 2cos((2πk ± θ)/n))}, k = 0..n−1 (Fourier modes × rotation eigenvectors).  Tolerance 1e-12
    # absolute: eigvalsh of a symmetric 2n×2n matrix with entries ≤ 2w is backward stable to ~n·ε·‖L‖.
    A, O = cycle_connection(n, theta, weights=w, uniform=uniform)
    L = connection_laplacian(A, O, kind="unnormalized")
    np.testing.assert_allclose(L, L.T, atol=0)
    np.testing.assert_allclose(np.linalg.eigvalsh(L), ring_spectrum(n, theta, w), rtol=0, atol=1e-12)


def test_ring_spectrum_is_gauge_invariant_and_periodic_in_theta(rng):
    # Oracles: the closed form again after (a) an orthogonal gauge change at every vertex (orthogonal
    # similarity: eigvalsh, 1e-12), (b) a general invertible gauge change (a similarity T' = BᵀTB⁻ᵀ;
    # eigvals of a non-symmetric matrix, 1e-9), (c) θ + 2π; and uniform twist = gauge transform of the one-edge
    # twist by V_m = R(−mθ/n) (1e-14), with holonomy R(θ) either way.
    n, theta = 7, 0.9
    A, O = cycle_connection(n, theta)
    expected = ring_spectrum(n, theta)
    Q = random_orthogonal(rng, (n,), 2)
    L_q = connection_laplacian(A, gauge_transform(O, Q), kind="unnormalized")
    np.testing.assert_allclose(np.linalg.eigvalsh(0.5 * (L_q + L_q.T)), expected, atol=1e-12)
    np.testing.assert_allclose(L_q, L_q.T, atol=1e-14)
    V = rng.standard_normal((n, 2, 2)) + 2 * np.eye(2)
    ev = np.linalg.eigvals(connection_laplacian(A, gauge_transform(O, V), kind="unnormalized"))
    assert np.max(np.abs(ev.imag)) <= 1e-9
    np.testing.assert_allclose(np.sort(ev.real), expected, atol=1e-9)
    _, O_shift = cycle_connection(n, theta + 2 * np.pi)
    np.testing.assert_allclose(
        np.linalg.eigvalsh(connection_laplacian(A, O_shift, kind="unnormalized")), expected, atol=1e-12
    )
    _, O_uniform = cycle_connection(n, theta, uniform=True)
    frames = np.stack([rotation(-m * theta / n) for m in range(n)])
    np.testing.assert_allclose(gauge_transform(O_uniform, frames), O, atol=1e-14)
    ring = (*range(n), 0)
    np.testing.assert_allclose(holonomy(O_uniform, ring), rotation(theta), atol=1e-14)
    np.testing.assert_allclose(holonomy(O, ring), rotation(theta), atol=1e-15)
    # θ = 0 is the flat ring: the scalar cycle spectrum 2 − 2cos(2πk/n), each twice
    A0, O0 = cycle_connection(n, 0.0)
    scalar = np.sort(np.linalg.eigvalsh(np.diag(A0.sum(1)) - A0))
    np.testing.assert_allclose(
        np.linalg.eigvalsh(connection_laplacian(A0, O0, kind="unnormalized")), np.repeat(scalar, 2), atol=1e-12
    )


def test_ring_with_unequal_weights_is_still_gauge_trivialised_by_theta_zero(rng):
    # Oracle: with θ = 0 the transports are the identity on edges, so the connection Laplacian is
    # (D − A) ⊗ I_2 exactly, for any positive weights.
    w = rng.uniform(0.5, 2.0, 5)
    A, O = cycle_connection(5, 0.0, weights=w)
    np.testing.assert_allclose(A, A.T, atol=0)
    assert A[0, 1] == w[0] and A[4, 0] == w[4]
    np.testing.assert_allclose(
        connection_laplacian(A, O, kind="unnormalized"), np.kron(np.diag(A.sum(1)) - A, np.eye(2)), atol=1e-15
    )


# ---- bad input ----------------------------------------------------------------------------------------------


def test_bad_shapes_are_rejected_with_named_messages(rng):
    A, O, X = rng.random((4, 4)), rng.standard_normal((4, 4, 2, 2)), rng.standard_normal((4, 2))
    with pytest.raises(ValueError, match=r"O must have shape \(n, n, d, d\) = \(3, 3, d, d\) matching A, got shape"):
        propagate(rng.random((3, 3)), O, rng.standard_normal((3, 2)))
    with pytest.raises(ValueError, match=r"O must have shape .* got shape \(4, 4, 2, 3\)"):
        block_operator(A, rng.standard_normal((4, 4, 2, 3)))
    with pytest.raises(ValueError, match=r"A must be a square matrix .* got shape \(4, 3\)"):
        propagate(rng.random((4, 3)), O, X)
    with pytest.raises(ValueError, match=r"X must have shape \(n, d\) = \(4, 2\), got shape \(4, 3\)"):
        propagate(A, O, rng.standard_normal((4, 3)))
    with pytest.raises(ValueError, match="kind must be one of 'random-walk', 'unnormalized', got 'sym'"):
        connection_laplacian(A, O, kind="sym")
    with pytest.raises(ValueError, match="A must be finite"):
        propagate(np.full((4, 4), np.nan), O, X)


def test_bad_heads_are_rejected(rng):
    A_heads, M_heads = rng.random((2, 4, 4)), rng.standard_normal((2, 3, 3))
    with pytest.raises(ValueError, match="A_heads must be entrywise nonnegative"):
        effective_connection(-A_heads, M_heads)
    with pytest.raises(ValueError, match="A_heads heads and M_heads heads must have matching sizes, got 2 and 3"):
        effective_connection(A_heads, rng.standard_normal((3, 3, 3)))
    with pytest.raises(ValueError, match=r"fill must have shape \(d, d\) = \(3, 3\)"):
        effective_connection(A_heads, M_heads, fill=np.eye(2))
    with pytest.raises(ValueError, match=r"X must have shape \(n, d\) = \(4, 3\)"):
        connection_step(A_heads, rng.standard_normal((4, 2)), M_heads)


def test_bad_laws_are_rejected(rng):
    n, d = 5, 2
    causal = np.tril(np.ones((n, n), dtype=bool))
    A, O = random_stochastic(rng, n, causal), rng.standard_normal((n, n, d, d))
    with pytest.raises(ValueError, match=r"vanishes on transient states .* pass a positive pi"):
        mixing_generator(A, O)
    gen = mixing_generator(A, O, pi=np.full(n, 1 / n))  # an explicit positive π works for a causal walk
    assert np.isfinite(gen.L_skew).all()
    with pytest.raises(ValueError, match=r"pi must be positive, got pi\[2\] = 0"):
        mixing_generator(A, O, pi=np.array([0.2, 0.3, 0.0, 0.25, 0.25]))
    with pytest.raises(ValueError, match="A_eff must be row-stochastic"):
        mixing_generator(2 * A, O)
    with pytest.raises(ValueError, match="A must be row-stochastic"):
        connection_energy(2 * A, O, rng.standard_normal((n, d)))
    with pytest.raises(ValueError, match="pi must be entrywise nonnegative"):
        connection_energy(A, O, rng.standard_normal((n, d)), pi=-np.ones(n))


def test_bad_gauge_and_cycles_are_rejected(rng):
    n, d = 4, 2
    O = rng.standard_normal((n, n, d, d))
    V = rng.standard_normal((n, d, d))
    V[2] = [[1.0, 2.0], [2.0, 4.0]]
    with pytest.raises(ValueError, match=r"V must hold invertible matrices, got V\[2\] singular"):
        gauge_transform(O, V)
    with pytest.raises(ValueError, match=r"O must have shape \(n, n, d, d\) = \(4, 4, 3, 3\) matching V"):
        gauge_transform(O, rng.standard_normal((n, 3, 3)))
    with pytest.raises(ValueError, match=r"cycle must be closed \(first vertex == last vertex\), got \(0, 1, 2\)"):
        holonomy(O, (0, 1, 2))
    with pytest.raises(ValueError, match=r"cycle\[1\] must be an integer in \[0, 3\], got 7"):
        holonomy(O, (0, 7, 0))
    with pytest.raises(TypeError, match=r"cycle\[1\] must be an integer, got float"):
        holonomy(O, (0, 1.0, 0))
    with pytest.raises(ValueError, match="cycle must list at least two vertices"):
        holonomy(O, (0,))
    with pytest.raises(TypeError, match="cycle must be a sequence of vertex indices, got int"):
        holonomy(O, 3)
    with pytest.raises(TypeError, match="cycles must be a nonempty sequence"):
        holonomy_deviation(O, [])
    zero = np.zeros((n, n, d, d))
    with pytest.raises(ValueError, match=r"holonomy of cycles\[0\] is zero"):
        holonomy_deviation(zero, [(0, 1, 0)], remove_scale=True)
    assert holonomy(O, np.array([0, 1, 0])).shape == (d, d)  # an integer array is a cycle too


def test_bad_diagnostics_input_is_rejected(rng):
    O = rng.standard_normal((3, 3, 2, 2))
    with pytest.raises(ValueError, match="needs at least one valid pair"):
        orthogonality_deviation(np.zeros((3, 2, 2)))
    with pytest.raises(TypeError, match="mask must be a boolean array"):
        orthogonality_deviation(O, mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"weights must have shape \(3, 3\) matching O.shape\[:-2\], got shape \(3,\)"):
        orthogonality_deviation(O, weights=np.ones(3))
    with pytest.raises(ValueError, match=r"O must be a square matrix"):
        polar_transports(rng.standard_normal((3, 2)))
    with pytest.raises(ValueError, match=r"A_prev and A_next must have the same shape, got \(3, 3\) and \(4, 4\)"):
        geometric_drift(np.eye(3), np.eye(4))
    with pytest.raises(ValueError, match="A_next must have a nonzero entry on the mask"):
        geometric_drift(np.eye(3), np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"n must be an integer >= 3, got 2"):
        cycle_connection(2, 0.1)
    with pytest.raises(ValueError, match=r"weights must be positive, got weights\[1\] = -1"):
        cycle_connection(3, 0.1, weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match=r"theta must be in \(-inf, inf\), got nan"):
        cycle_connection(3, float("nan"))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_mixing_numpy_and_torch_is_a_type_error(rng):
    import torch

    with pytest.raises(TypeError, match="inputs mix array libraries"):
        propagate(rng.random((3, 3)), torch.zeros((3, 3, 2, 2), dtype=torch.float64), rng.random((3, 2)))
