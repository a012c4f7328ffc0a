"""Tests of the DMAP/DMTN/ATAP/ATTN operator family (attention-geometry-math §A.7, §A.10)."""

import math

import numpy as np
import pytest
from conftest import HAS_TORCH

from workbench.attention import (
    CORNERS,
    OPERATORS,
    CornerHead,
    bond_inertia,
    bond_link_split,
    corner_distances,
    effective_form,
    family_logits,
    family_operator,
    nearest_corner,
    negative_mass,
    operator_logits,
    operator_skew_ratio,
    parameter_count,
    project_head,
    token_split,
)
from workbench.backend import to_backend, to_numpy
from workbench.markov import MarkovOperator, doob_transform

EPS = np.finfo(float).eps

# ---------------------------------------------------------------------------------------------- helpers


def _head(rng, n=10, D=8, d_h=4):
    X = rng.standard_normal((n, D))
    W_Q = rng.standard_normal((D, d_h)) / np.sqrt(D)
    W_K = rng.standard_normal((D, d_h)) / np.sqrt(D)
    return X, W_Q, W_K


def _qk(rng, n=7, d_h=4):
    return rng.standard_normal((n, d_h)), rng.standard_normal((n, d_h))


def _nanochat(q, k, b, a):
    # Independent oracle: the §A.7 formula verbatim, term by term, with m and n formed explicitly.
    m, n = (q + k) / np.sqrt(2), (q - k) / np.sqrt(2)
    g = 0.5 * (m * m).sum(1) - b * 0.5 * (n * n).sum(1)
    return 0.5 * m @ m.T - b * 0.5 * n @ n.T + a * 0.5 * (q @ k.T - k @ q.T) + (1 - a) * 0.5 * (g[:, None] - g[None, :])


def _softmax(z):
    # Independent oracle: a plain numpy row softmax.
    w = np.exp(z - z.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def _pairwise_sq(Y):
    return ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


# ------------------------------------------------------------------------------------------- constants


def test_operator_names_and_corners():
    # Oracle: attention-geometry-math §A.7 name map (Table 4 of the seed).
    assert OPERATORS == ("DMAP", "DMTN", "ATAP", "ATTN")
    assert dict(CORNERS) == {"DMAP": (0, 0), "DMTN": (0, 1), "ATAP": (1, 0), "ATTN": (1, 1)}
    with pytest.raises(TypeError):
        CORNERS["ATTN"] = (0, 0)  # read-only: a shared constant


# ------------------------------------------------------------------------------------------------ logits


@pytest.mark.parametrize("corner", [(0, 0), (0, 1), (1, 0), (1, 1), (0.3, 0.8), (0.75, 0.25)])
def test_family_logits_match_the_nanochat_formula(rng, corner):
    # Oracle: the seed's formula term by term (the implementation uses the rearranged W + (1-b)½nnᵀ - ... form).
    # Tolerance: a dozen roundings of terms of size ≲ max|q|·max|k|·d_h.
    q, k = _qk(rng)
    b, a = corner
    scale = np.abs(q).max() * np.abs(k).max() * q.shape[1]
    np.testing.assert_allclose(family_logits(q, k, b, a, beta=0.7), 0.7 * _nanochat(q, k, b, a), atol=32 * EPS * scale)


def test_attn_corner_is_exactly_beta_q_dot_k(rng):
    # Oracle: standard attention β q_i·k_j with β = 1/√d_h — bitwise (the (1,1) corner adds exact zeros).
    q, k = _qk(rng, d_h=9)
    np.testing.assert_array_equal(family_logits(q, k, 1, 1), (q @ k.T) * (1 / 3))
    np.testing.assert_array_equal(operator_logits(q, k, "ATTN", beta=0.25), 0.25 * (q @ k.T))


def test_dmap_corner_is_the_quarter_distance_kernel(rng):
    # Oracle: softmax(-(β/4)‖m_i - m_j‖²) from coordinates (§A.7 corollary). Tolerance: rounding of logits ~ β·10.
    q, k = _qk(rng)
    beta = 0.6
    m = (q + k) / np.sqrt(2)
    P = family_operator(q, k, "DMAP", beta=beta)
    np.testing.assert_allclose(P, _softmax(-beta / 4 * _pairwise_sq(m)), atol=1e-14)


def test_atap_corner_is_the_half_pseudo_distance_kernel(rng):
    # Oracle: softmax(-(β/2) d²) with d² the pseudo-distance of the (indefinite) bond, from token_split.
    q, k = _qk(rng)
    beta = 0.6
    d2 = token_split(q, k).squared_distance
    assert d2.min() < 0  # indefinite bond: some pseudo-distances are negative
    P = family_operator(q, k, "ATAP", beta=beta)
    np.testing.assert_allclose(P, _softmax(-beta / 2 * d2), atol=1e-14)


def test_dmtn_logits_are_the_definite_bond_plus_the_free_link(rng):
    # Oracle: β(½⟨m_i, m_j⟩ + A_ij) with A from token_split — no row constant at a = 1.
    q, k = _qk(rng)
    beta = 0.6
    m = (q + k) / np.sqrt(2)
    expected = beta * (0.5 * m @ m.T + token_split(q, k).link)
    np.testing.assert_allclose(
        operator_logits(q, k, "DMTN", beta=beta), expected, atol=16 * EPS * np.abs(expected).max()
    )


def test_family_logits_of_a_stack_are_the_logits_of_each(rng):
    # Oracle: batch ≡ loop over heads (rounding of batched matmul only).
    q, k = rng.standard_normal((3, 6, 4)), rng.standard_normal((3, 6, 4))
    stacked = family_logits(q, k, 0.4, 0.6)
    for h in range(3):
        np.testing.assert_allclose(stacked[h], family_logits(q[h], k[h], 0.4, 0.6), rtol=1e-14, atol=1e-15)


# -------------------------------------------------------------------------------------------- operators


def test_family_operator_with_a_causal_mask(rng):
    # Oracle: exponentials of the logits, zeroed off the mask and row-normalised by hand.
    q, k = _qk(rng, n=6)
    causal = np.tril(np.ones((6, 6), dtype=bool))
    for name in OPERATORS:
        P = family_operator(q, k, name, mask=causal)
        z = operator_logits(q, k, name)
        w = np.where(causal, np.exp(z - z.max()), 0.0)
        np.testing.assert_allclose(P, w / w.sum(axis=1, keepdims=True), rtol=1e-13)
        assert np.all(P[~causal] == 0.0)  # exact zeros, not underflow
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-15)
    # A full mask is the unmasked operator (different code path, same numbers to rounding).
    full = np.ones((6, 6), dtype=bool)
    np.testing.assert_allclose(family_operator(q, k, "DMTN", mask=full), family_operator(q, k, "DMTN"), rtol=1e-14)


def test_family_operator_interpolates_between_corners(rng):
    # Oracle: the logits at an interior (b, a) through family_logits, softmaxed by numpy.
    q, k = _qk(rng)
    np.testing.assert_allclose(family_operator(q, k, (0.5, 0.5)), _softmax(family_logits(q, k, 0.5, 0.5)), atol=1e-15)


def test_reversibility_of_the_four_corners(rng):
    # Oracle: ε_rev from MarkovOperator (π by a linear solve). DMAP and ATAP are Doob transforms of symmetric
    # kernels, so ε_rev = 0 up to rounding (1e-12: a few hundred ulps of a 10×10 solve); DMTN and ATTN carry
    # a free link and are nonreversible (> 1e-3 in every draw here; typical values 0.01-0.8).
    for _ in range(5):
        X, W_Q, W_K = _head(rng)
        q, k = X @ W_Q, X @ W_K
        eps = {name: MarkovOperator(family_operator(q, k, name)).reversibility_residual for name in OPERATORS}
        assert eps["DMAP"] < 1e-12 and eps["ATAP"] < 1e-12
        assert eps["DMTN"] > 1e-3 and eps["ATTN"] > 1e-3
        # The Doob reading of DMAP: exp(β·½mmᵀ) tilted by e^{-βg/2}, g = ½‖m‖² (§A.7).
        beta = 0.5
        m = (q + k) / np.sqrt(2)
        K, h = np.exp(beta * 0.5 * m @ m.T), np.exp(-beta * 0.25 * (m * m).sum(1))
        np.testing.assert_allclose(family_operator(q, k, "DMAP", beta=beta), doob_transform(K, h).P, atol=1e-14)


# ---------------------------------------------------------------------------------------- parameter level


def test_effective_forms_of_the_four_corners(rng):
    # Oracle: the table of §A.7/§A.10 written with W_M, W_N; the M_S identity and W^DMTN = M + ½W_NW_Nᵀ.
    _, W_Q, W_K = _head(rng)
    W_M, W_N = (W_Q + W_K) / np.sqrt(2), (W_Q - W_K) / np.sqrt(2)
    M = W_Q @ W_K.T
    M_S, M_A = bond_link_split(M)
    tol = 16 * EPS * np.abs(W_Q).max() * np.abs(W_K).max() * W_Q.shape[1]
    np.testing.assert_allclose(M_S, 0.5 * W_M @ W_M.T - 0.5 * W_N @ W_N.T, atol=tol)
    expected = {
        "ATTN": (M_S, M_A),
        "DMTN": (0.5 * W_M @ W_M.T, M_A),
        "DMAP": (0.5 * W_M @ W_M.T, np.zeros_like(M)),
        "ATAP": (M_S, np.zeros_like(M)),
    }
    for name, (S_exp, A_exp) in expected.items():
        S_op, A_op = effective_form(W_Q, W_K, name)
        np.testing.assert_allclose(S_op, S_exp, atol=tol)
        np.testing.assert_allclose(A_op, A_exp, atol=tol)
        assert np.array_equal(S_op, S_op.T) and np.array_equal(A_op, -A_op.T)
    S_op, A_op = effective_form(W_Q, W_K, "ATTN")  # the ATTN corner is the plain split, bitwise
    assert np.array_equal(S_op, M_S) and np.array_equal(A_op, M_A)
    S_op, A_op = effective_form(W_Q, W_K, "DMTN")
    np.testing.assert_allclose(S_op + A_op, M + 0.5 * W_N @ W_N.T, atol=tol)  # Eq. (128)


def test_effective_form_reproduces_the_corner_logits_on_a_context(rng):
    # Oracle: β[X M_S_op Xᵀ + X M_A_op Xᵀ + (1-a)·½(g_i - g_j)], g_i = x_i M_S_op x_iᵀ, through the D×D forms,
    # against the token-level logits. Tolerance: rounding of D-term sums of entries ≲ 10.
    X, W_Q, W_K = _head(rng)
    for name in OPERATORS:
        a = CORNERS[name][1]
        S_op, A_op = effective_form(W_Q, W_K, name)
        g = np.einsum("id,de,ie->i", X, S_op, X)
        expected = X @ (S_op + A_op) @ X.T + (1 - a) * 0.5 * (g[:, None] - g[None, :])
        np.testing.assert_allclose(operator_logits(X @ W_Q, X @ W_K, name, beta=1.0), expected, atol=1e-13)


def test_effective_form_of_a_stack_and_interpolation(rng):
    # Oracle: loop over heads; the interior point is the linear interpolation of the corner forms in b and a.
    W_Q, W_K = rng.standard_normal((3, 6, 2)), rng.standard_normal((3, 6, 2))
    S, A = effective_form(W_Q, W_K, "DMTN")
    for h in range(3):
        S_h, A_h = effective_form(W_Q[h], W_K[h], "DMTN")
        np.testing.assert_allclose(S[h], S_h, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(A[h], A_h, rtol=1e-14, atol=1e-14)
    S_mid, A_mid = effective_form(W_Q[0], W_K[0], (0.25, 0.5))
    S0, A1 = effective_form(W_Q[0], W_K[0], "DMTN")
    S1, _ = effective_form(W_Q[0], W_K[0], "ATTN")
    np.testing.assert_allclose(S_mid, 0.75 * S0 + 0.25 * S1, atol=1e-14)
    np.testing.assert_allclose(A_mid, 0.5 * A1, atol=1e-15)


def test_operator_skew_ratio_exact_zeros_and_definition(rng):
    # Oracle: ‖M_A‖_F/‖M_S‖_F from numpy norms; exactly 0 for the exact-link corners (§A.10 [RECON]).
    _, W_Q, W_K = _head(rng)
    M = W_Q @ W_K.T
    W_M = (W_Q + W_K) / np.sqrt(2)
    assert operator_skew_ratio(W_Q, W_K, "DMAP") == 0.0 and operator_skew_ratio(W_Q, W_K, "ATAP") == 0.0
    np.testing.assert_allclose(
        operator_skew_ratio(W_Q, W_K), np.linalg.norm(M - M.T) / np.linalg.norm(M + M.T), rtol=1e-13
    )
    np.testing.assert_allclose(
        operator_skew_ratio(W_Q, W_K, "DMTN"), np.linalg.norm(M - M.T) / np.linalg.norm(W_M @ W_M.T), rtol=1e-13
    )
    # A pure link (M antisymmetric) has ratio inf; the zero form is 0/0.
    assert operator_skew_ratio(np.eye(2), np.array([[0.0, -1.0], [1.0, 0.0]])) == math.inf
    with pytest.raises(ValueError, match=r"M must be a nonzero form, got ‖M‖_F = 0"):
        operator_skew_ratio(np.zeros((3, 2)), np.zeros((3, 2)))


def test_operator_skew_ratio_at_gaussian_initialisation(rng):
    # Oracle: the closed form E‖M_A‖² / E‖M_S‖² = (D-1)/(D+1) for iid standard Gaussian W_Q, W_K (the diagonal
    # of M is all bond; E tr M² = D d_h), so ρ ≈ √(63/65) = 0.9844 at D = 64 — "≈ 1" in the seed's code comment.
    # Measured: one draw has std ≈ 0.022 (≈ 1/D), so the mean of 20 draws has std ≈ 0.005; tolerance 0.02 = 4σ.
    D = d_h = 64
    rho = [operator_skew_ratio(rng.standard_normal((D, d_h)), rng.standard_normal((D, d_h))) for _ in range(20)]
    assert abs(np.mean(rho) - np.sqrt((D - 1) / (D + 1))) < 0.02
    assert abs(np.mean(rho) - 1.0) < 0.1  # the seed's statement


def test_parameter_count():
    # Oracle: §A.7 — DMAP stores W_M only (half of attention's QK weights), the others W_M and W_N.
    assert [parameter_count(op, 64, 16) for op in OPERATORS] == [1024, 2048, 2048, 2048]
    with pytest.raises(ValueError, match=r"d_model must be an integer >= 1, got 0"):
        parameter_count("ATTN", 0, 16)
    with pytest.raises(TypeError, match=r"d_head must be an integer, got float"):
        parameter_count("ATTN", 64, 16.0)
    with pytest.raises(ValueError, match=r"operator must be one of 'DMAP', 'DMTN', 'ATAP', 'ATTN', got 'MHA'"):
        parameter_count("MHA", 64, 16)


def test_dmap_depends_on_w_m_only(rng):
    # Oracle: moving along the W_N direction (W_Q + E, W_K - E keeps W_M) leaves DMAP unchanged (the flat gauge
    # orbit behind parameter_count) but changes every other corner. Tolerance: rounding of W_M.
    X, W_Q, W_K = _head(rng)
    E = rng.standard_normal(W_Q.shape)
    for name in OPERATORS:
        before = project_head(W_Q, W_K, name).operator(X)
        after = project_head(W_Q + E, W_K - E, name).operator(X)
        if name == "DMAP":
            np.testing.assert_allclose(after, before, atol=1e-13)
        else:
            assert np.abs(after - before).max() > 1e-3


def test_bond_inertia_and_negative_mass(rng):
    # Oracle: Sylvester's law — ½W_MW_Mᵀ is PSD of rank d_h; M_S = ½W_MW_Mᵀ - ½W_NW_Nᵀ has d_h positive and d_h
    # negative eigenvalues for generic W_M, W_N (D ≥ 2 d_h); closed forms on diagonal matrices.
    D, d_h = 12, 3
    _, W_Q, W_K = _head(rng, D=D, d_h=d_h)
    assert bond_inertia(effective_form(W_Q, W_K, "DMAP")[0]) == (d_h, 0, D - d_h)
    assert bond_inertia(effective_form(W_Q, W_K, "DMTN")[0]) == (d_h, 0, D - d_h)
    assert bond_inertia(effective_form(W_Q, W_K, "ATTN")[0]) == (d_h, d_h, D - 2 * d_h)
    assert negative_mass(effective_form(W_Q, W_K, "DMAP")[0]) < 1e-14  # rounding of the zero eigenvalues
    assert bond_inertia(np.diag([1.0, -2.0, 1e-14, 0.0])) == (1, 1, 2)
    assert bond_inertia(np.diag([1.0, -2.0, 1e-14, 0.0]), rtol=0.0) == (2, 1, 1)
    assert bond_inertia(np.zeros((2, 2))) == (0, 0, 2) and negative_mass(np.zeros((2, 2))) == 0.0
    np.testing.assert_allclose(negative_mass(np.diag([2.0, -1.0, -2.0])), np.sqrt(5.0 / 9.0), rtol=1e-15)


def test_negative_mass_at_gaussian_initialisation(rng):
    # Oracle: W_M and W_N are iid Gaussian when W_Q, W_K are, so the bond's law is invariant under M_S → -M_S and
    # the negative mass is 1/√2 in the large-D limit. Measured at D = 64, d_h = 16: std ≈ 0.026 per draw;
    # the mean of 20 draws is within 0.03 (5σ).
    values = [
        negative_mass(effective_form(rng.standard_normal((64, 16)), rng.standard_normal((64, 16)), "ATTN")[0])
        for _ in range(20)
    ]
    assert abs(np.mean(values) - 1 / np.sqrt(2)) < 0.03


# ------------------------------------------------------------------------------ projection and distances


def test_project_head_is_the_corner_of_the_same_weights(rng):
    # Oracle: operator_logits of (XW_Q, XW_K) at the corner (the definition); parameters against parameter_count.
    X, W_Q, W_K = _head(rng)
    for name in OPERATORS:
        head = project_head(W_Q, W_K, name)
        assert isinstance(head, CornerHead) and head.corner == CORNERS[name]
        np.testing.assert_array_equal(head.logits(X), operator_logits(X @ W_Q, X @ W_K, name))
        np.testing.assert_array_equal(head.operator(X), family_operator(X @ W_Q, X @ W_K, name))
        assert sum(p.size for p in head.parameters) == parameter_count(name, *W_Q.shape)
        assert head.markov(X).n == X.shape[0]
    np.testing.assert_allclose(project_head(W_Q, W_K, "DMAP").W_M, (W_Q + W_K) / np.sqrt(2), rtol=1e-15)


def test_corner_distances_and_nearest_corner(rng):
    # Oracle: the total-variation distances recomputed from family_operator; the classification rule applied by
    # hand to that dict.
    X, W_Q, W_K = _head(rng)
    d = corner_distances(X, W_Q, W_K)
    assert set(d) == set(OPERATORS) and d["ATTN"] == 0.0
    P = family_operator(X @ W_Q, X @ W_K, "ATTN")
    for name in OPERATORS:
        P_op = family_operator(X @ W_Q, X @ W_K, name)
        np.testing.assert_allclose(d[name], 0.5 * np.abs(P - P_op).sum(axis=1).mean(), rtol=1e-14)
        assert 0.0 <= d[name] <= 1.0
    best = min(("DMAP", "DMTN", "ATAP"), key=d.get)
    for tol in (0.0, d[best], 1.0):
        assert nearest_corner(X, W_Q, W_K, tol=tol) == (best if d[best] <= tol else "ATTN")


def test_nearest_corner_recognises_constructed_heads(rng):
    # Oracle: heads built to sit exactly on a corner.
    # Tied weights W_Q = W_K: n = 0, so the DMTN logits are the head's own, bitwise.
    X, W_Q, _ = _head(rng)
    assert corner_distances(X, W_Q, W_Q.copy())["DMTN"] == 0.0
    assert nearest_corner(X, W_Q, W_Q.copy(), tol=0.0) == "DMTN"
    # M = diag(1, -1) on the hyperbola x = (cosh t, sinh t): symmetric indefinite bond with constant potential
    # g_i = cosh² - sinh² = 1, so ATAP reproduces the head while DMAP/DMTN (which drop the n-sector) do not.
    t = np.linspace(-1.5, 1.5, 8)
    X_h = np.stack([np.cosh(t), np.sinh(t)], axis=1)
    W_Q, W_K = np.eye(2), np.diag([1.0, -1.0])
    d = corner_distances(X_h, W_Q, W_K, beta=1.0)
    assert d["ATAP"] < 1e-14 and min(d["DMAP"], d["DMTN"]) > 0.05
    assert nearest_corner(X_h, W_Q, W_K, beta=1.0) == "ATAP"
    # A sharp random head is far from every constrained corner.
    X, W_Q, W_K = _head(rng)
    assert nearest_corner(X, 4 * W_Q, 4 * W_K, tol=0.1) == "ATTN"


def test_corner_distances_with_a_mask(rng):
    # Oracle: the same TV formula on the masked operators, recomputed here.
    X, W_Q, W_K = _head(rng, n=6)
    causal = np.tril(np.ones((6, 6), dtype=bool))
    d = corner_distances(X, W_Q, W_K, mask=causal)
    P = family_operator(X @ W_Q, X @ W_K, "ATTN", mask=causal)
    P_dmap = family_operator(X @ W_Q, X @ W_K, "DMAP", mask=causal)
    np.testing.assert_allclose(d["DMAP"], 0.5 * np.abs(P - P_dmap).sum(axis=1).mean(), rtol=1e-14)


# --------------------------------------------------------------------------------------------- bad input


def test_bad_input_is_rejected_with_named_messages(rng):
    q, k = _qk(rng)
    with pytest.raises(ValueError, match=r"operator must be one of 'DMAP', 'DMTN', 'ATAP', 'ATTN', got 'attn'"):
        operator_logits(q, k, "attn")
    with pytest.raises(ValueError, match=r"operator must be one of 'DMAP', 'DMTN', 'ATAP', 'ATTN', got 'HMAP'"):
        family_operator(q, k, "HMAP")
    with pytest.raises(ValueError, match=r"operator must be one of 'DMAP', 'DMTN', 'ATAP', 'ATTN' or a pair"):
        effective_form(np.eye(2), np.eye(2), 3)
    with pytest.raises(ValueError, match=r"b must be in \[0, 1\], got 1.5"):
        family_logits(q, k, 1.5, 0.0)
    with pytest.raises(ValueError, match=r"a must be in \[0, 1\], got -0.1"):
        family_logits(q, k, 0.0, -0.1)
    with pytest.raises(ValueError, match=r"b must be in \[0, 1\], got 2.0"):
        family_operator(q, k, (2.0, 0.0))
    with pytest.raises(ValueError, match=r"q and k must have the same shape, got \(7, 4\) and \(7, 3\)"):
        family_logits(q, k[:, :3], 1, 1)
    with pytest.raises(ValueError, match=r"beta must be in \(0, inf\), got -1.0"):
        family_logits(q, k, 1, 1, beta=-1.0)
    with pytest.raises(ValueError, match=r"q and k must have at least one feature column"):
        family_logits(np.ones((3, 0)), np.ones((3, 0)), 1, 1)
    with pytest.raises(ValueError, match=r"q and k must have at least one token \(row\), got shape \(0, 2\)"):
        family_operator(np.ones((0, 2)), np.ones((0, 2)), "ATTN")
    with pytest.raises(ValueError, match=r"W_Q and W_K must have the same shape, got \(4, 2\) and \(4, 3\)"):
        effective_form(np.ones((4, 2)), np.ones((4, 3)), "ATTN")
    with pytest.raises(ValueError, match=r"X columns and W_Q rows must have matching sizes, got 3 and 4"):
        project_head(np.ones((4, 2)), np.ones((4, 2)), "DMAP").logits(np.ones((5, 3)))
    with pytest.raises(ValueError, match=r"tol must be in \[0, 1\], got 2.0"):
        nearest_corner(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 2)), tol=2.0)
    with pytest.raises(ValueError, match=r"M_S must be symmetric"):
        bond_inertia(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"M_S must be a square matrix"):
        negative_mass(np.ones((2, 3)))


def test_bad_masks_are_rejected(rng):
    q, k = _qk(rng, n=4)
    empty_row = np.tril(np.ones((4, 4), dtype=bool))
    empty_row[3] = False
    with pytest.raises(ValueError, match=r"mask must leave at least one admissible key in every row; row 3 has none"):
        family_operator(q, k, "ATTN", mask=empty_row)
    with pytest.raises(TypeError, match=r"mask must be a boolean array \(True = admissible key\), got float64"):
        family_operator(q, k, "ATTN", mask=np.zeros((4, 4)))
    with pytest.raises(
        ValueError, match=r"mask must be broadcastable to the logits shape \(4, 4\), got shape \(3, 3\)"
    ):
        family_operator(q, k, "ATTN", mask=np.ones((3, 3), dtype=bool))


# ---------------------------------------------------------------------------------------- numpy ≡ torch


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_and_torch_agree(rng, backend):
    # Oracle: the numpy path on the same float64 data (rounding only: the same operations in another library).
    X, W_Q, W_K = _head(rng, n=6)
    causal = np.tril(np.ones((6, 6), dtype=bool))
    Xb, W_Qb, W_Kb, maskb = (to_backend(x, backend) for x in (X, W_Q, W_K, causal))
    q, k = X @ W_Q, X @ W_K
    qb, kb = Xb @ W_Qb, Xb @ W_Kb
    for name in OPERATORS:
        out = family_operator(qb, kb, name, mask=maskb)
        assert type(out) is type(Xb)
        np.testing.assert_allclose(to_numpy(out), family_operator(q, k, name, mask=causal), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(to_numpy(family_operator(qb, kb, name)), family_operator(q, k, name), rtol=1e-13)
        for a, b in zip(effective_form(W_Qb, W_Kb, name), effective_form(W_Q, W_K, name), strict=True):
            np.testing.assert_allclose(to_numpy(a), b, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(
            operator_skew_ratio(W_Qb, W_Kb, name), operator_skew_ratio(W_Q, W_K, name), rtol=1e-13
        )
    S_b, S = effective_form(W_Qb, W_Kb, "ATTN")[0], effective_form(W_Q, W_K, "ATTN")[0]
    assert bond_inertia(S_b) == bond_inertia(S)
    np.testing.assert_allclose(negative_mass(S_b), negative_mass(S), rtol=1e-12)
    d_b, d = corner_distances(Xb, W_Qb, W_Kb, mask=maskb), corner_distances(X, W_Q, W_K, mask=causal)
    for name in OPERATORS:
        np.testing.assert_allclose(d_b[name], d[name], rtol=1e-12, atol=1e-15)
    assert nearest_corner(Xb, W_Qb, W_Kb) == nearest_corner(X, W_Q, W_K)
    if backend != "numpy":  # a numpy mask with torch logits: one array library per call
        with pytest.raises(TypeError, match=r"inputs mix array libraries"):
            family_operator(qb, kb, "ATTN", mask=causal)
