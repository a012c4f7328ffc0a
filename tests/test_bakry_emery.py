import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
from conftest import HAS_TORCH

from workbench.backend import to_backend, to_numpy
from workbench.markov import dirichlet_form
from workbench.markov._bakry_emery import (
    _negative_generator_apply,
    carre_du_champ,
    gamma2,
    hessian_form,
)
from workbench.markov._currents import circulation, gauge_gradients, hatano_nelson, stationary_current

# --------------------------------------------------------------------------------------------------
# Fixtures: random rates, random (non-reversible) Markov operators and their stationary laws
# --------------------------------------------------------------------------------------------------


def random_rates(rng, n=8, density=0.5):
    """Non-symmetric jump rates with a random diagonal (of either sign: it must be ignored)."""
    W = rng.random((n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(W, rng.standard_normal(n))
    return W


def random_markov(rng, n=9, density=0.4):
    """Non-reversible P with a symmetric support (a ring keeps it irreducible) and some holding."""
    mask = rng.random((n, n)) < density
    ring = np.roll(np.eye(n, dtype=bool), 1, axis=1)
    mask = mask | mask.T | ring | ring.T
    K = rng.random((n, n)) * mask
    return K / K.sum(axis=1, keepdims=True)


def reversible_markov(rng, n=9):
    K = rng.random((n, n))
    K = K + K.T
    return K / K.sum(axis=1, keepdims=True), K.sum(axis=1) / K.sum()


def stationary_law(P):
    """Left null vector of P − I by scipy's SVD (an independent route to π)."""
    v = scipy.linalg.null_space(P.T - np.eye(P.shape[0]))[:, 0]
    return np.abs(v) / np.abs(v).sum()


def gamma_by_double_loop(W, f, g):
    n = W.shape[0]
    return np.array([0.5 * sum(W[i, j] * (f[j] - f[i]) * (g[j] - g[i]) for j in range(n) if j != i) for i in range(n)])


def gamma2_by_paths(W, f, x):
    """Γ₂(f)(x) summed over the paths x → y → z (f translated so f(x) = 0); the diagonal is dropped first.

    Expanding ½ℒΓ(f) − Γ(f, ℒf) at x gives four sums (the oracle for `gamma2` and for the
    local forms of the curvature): ¼ΣΣ W_xy W_yz (f_z − f_y)² − ¼ d_x Σ W_xy f_y²
    − ½ Σ W_xy f_y Σ W_yz (f_z − f_y) + ½ (Σ W_xy f_y)².
    """
    W = W - np.diag(np.diag(W))
    d = W.sum(axis=1)
    g = f - f[x]
    n = W.shape[0]
    t1 = 0.25 * sum(W[x, y] * W[y, z] * (g[z] - g[y]) ** 2 for y in range(n) for z in range(n))
    t2 = -0.25 * d[x] * sum(W[x, y] * g[y] ** 2 for y in range(n))
    t3 = -0.5 * sum(W[x, y] * g[y] * sum(W[y, z] * (g[z] - g[y]) for z in range(n)) for y in range(n))
    t4 = 0.5 * sum(W[x, y] * g[y] for y in range(n)) ** 2
    return t1 + t2 + t3 + t4


# --------------------------------------------------------------------------------------------------
# Γ, ℒ, Γ₂, Hessian form: definitions, backends, sparse
# --------------------------------------------------------------------------------------------------


def test_carre_du_champ_matches_the_definition(rng, backend):
    # Oracle: ½ Σ_{j≠i} W_ij (f_j − f_i)(g_j − g_i) by an explicit double loop; rounding only (1e-13).
    W = random_rates(rng)
    f, g = rng.standard_normal((2, 8))
    expected = gamma_by_double_loop(W, f, g)
    for form in ("edge", "operator"):
        got = carre_du_champ(to_backend(W, backend), to_backend(f, backend), to_backend(g, backend), form=form)
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(
        to_numpy(carre_du_champ(to_backend(W, backend), to_backend(f, backend))),
        gamma_by_double_loop(W, f, f),
        rtol=1e-13,
    )


def test_carre_du_champ_sparse_equals_dense_and_columns_equal_loop(rng):
    # Oracles: the dense path (same sums, different order: 1e-13) and a loop over columns (bitwise).
    W = random_rates(rng, n=12, density=0.3)
    F, G = rng.standard_normal((2, 12, 4))
    dense = carre_du_champ(W, F, G)
    sparse = carre_du_champ(scipy.sparse.csr_matrix(W), F, G)
    assert dense.shape == (12, 4)
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(dense, np.stack([carre_du_champ(W, F[:, k], G[:, k]) for k in range(4)], axis=1))
    np.testing.assert_allclose(carre_du_champ(scipy.sparse.coo_array(W), F, G, form="operator"), dense, rtol=1e-12)


def test_edge_form_survives_a_large_offset_where_the_operator_form_does_not(rng):
    # Γ(f + c) = Γ(f).  The edge form only sees differences (error ≈ 1e-16·c = 1e-10 absolute), the
    # three-term form subtracts numbers of size c² = 1e12 (error ≈ 1e-4): why 'edge' is the default.
    W = random_rates(rng)
    f = rng.standard_normal(8)
    exact = carre_du_champ(W, f)
    np.testing.assert_allclose(carre_du_champ(W, f + 1e6), exact, rtol=0, atol=1e-8)
    assert np.max(np.abs(carre_du_champ(W, f + 1e6, form="operator") - exact)) > 1e-7


def test_generator_follows_the_jump_rates_convention(rng):
    # Oracles: ℒ = P − I for a Markov operator (its diagonal is a holding probability), and the
    # networkx graph Laplacians L = D − A (unnormalised) and I − D⁻¹A (random walk) with ℒ = −L.
    P = random_markov(rng)
    f = rng.standard_normal(9)
    np.testing.assert_allclose(_negative_generator_apply(P, f), P @ f - f, rtol=1e-13, atol=1e-14)
    G = nx.gnp_random_graph(10, 0.5, seed=3)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = rng.random() + 0.1
    A = nx.to_numpy_array(G)
    f = rng.standard_normal(10)
    L = nx.laplacian_matrix(G).toarray()
    np.testing.assert_allclose(_negative_generator_apply(A, f), -L @ f, rtol=1e-13, atol=1e-13)
    d = A.sum(axis=1)
    np.testing.assert_allclose(_negative_generator_apply(A / d[:, None], f), A @ f / d - f, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(_negative_generator_apply(scipy.sparse.csr_array(A), f), -L @ f, rtol=1e-13, atol=1e-13)


def test_gamma2_matches_the_two_step_path_sum(rng, backend):
    # Oracle: the explicit path sum over x → y → z (see gamma2_by_paths); rounding only (1e-12).
    W = random_rates(rng, n=7, density=0.6)
    f = rng.standard_normal(7)
    expected = np.array([gamma2_by_paths(W, f, x) for x in range(7)])
    got = to_numpy(gamma2(to_backend(W, backend), to_backend(f, backend)))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gamma2(scipy.sparse.csr_array(W), f), expected, rtol=1e-12, atol=1e-12)


def test_gamma2_is_a_symmetric_bilinear_form_that_kills_constants(rng):
    # Laws: polarisation Γ₂(f, g) = ¼[Γ₂(f+g) − Γ₂(f−g)], symmetry, Γ₂(f, 1) = 0; rounding (1e-12).
    W = random_rates(rng)
    f, g = rng.standard_normal((2, 8))
    fg = gamma2(W, f, g)
    np.testing.assert_allclose(fg, 0.25 * (gamma2(W, f + g) - gamma2(W, f - g)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fg, gamma2(W, g, f), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(gamma2(W, f, np.ones(8)), 0.0, atol=1e-14)
    F = np.stack([f, g], axis=1)
    np.testing.assert_allclose(gamma2(scipy.sparse.csr_array(W), F)[:, 1], gamma2(W, g), rtol=1e-12)


def test_hessian_form_on_the_lattice_is_the_second_derivative(rng):
    # Oracle: on ℤ (a long cycle, unit rates) the second difference of a quadratic is exact, so
    # H(f)(g, h) = f'' g' h' for quadratics f and linear g, h away from the seam (rounding, 1e-10).
    n = 40
    W = np.roll(np.eye(n), 1, axis=1) + np.roll(np.eye(n), -1, axis=1)
    x = np.arange(n) - n / 2
    f, g, h = 1.5 * x**2 - x, 2.0 * x + 1, -0.5 * x
    interior = slice(10, 30)
    np.testing.assert_allclose(hessian_form(W, f, g, h)[interior], 3.0 * 2.0 * -0.5, rtol=1e-10)
    np.testing.assert_allclose(hessian_form(W, f, g, h), hessian_form(W, f, h, g), rtol=1e-13)
    np.testing.assert_allclose(
        hessian_form(scipy.sparse.csr_array(W), np.stack([f, g], 1), np.stack([g, g], 1), np.stack([h, f], 1))[:, 0],
        hessian_form(W, f, g, h),
        rtol=1e-12,
    )


# --------------------------------------------------------------------------------------------------
# Continuum limit of P_β on a square lattice: K = exp(−β‖x − y‖²)
# --------------------------------------------------------------------------------------------------

# Lattice step h = 0.6/√β, so in lattice units the kernel exp(−0.36(p² + q²)) does not depend on β;
# it is cut at |p|, |q| ≤ 9 (weight e^{−29}), and the square has half-width 18 steps, so every vertex
# within 9 steps of the centre has a complete row: Γ₂ and H at the centre see no boundary.  Lattice
# moments equal the Gaussian ones up to e^{−π²/0.36} ≈ 1e-12 (Poisson summation).
_REACH, _HALF = 9, 18


def _lattice_markov_operator():
    a = np.arange(-_HALF, _HALF + 1)
    A, B = (grid.ravel() for grid in np.meshgrid(a, a, indexing="ij"))
    index = np.arange(A.size).reshape(a.size, a.size)
    rows, cols, vals = [], [], []
    for p in range(-_REACH, _REACH + 1):
        for q in range(-_REACH, _REACH + 1):
            ok = (np.abs(A + p) <= _HALF) & (np.abs(B + q) <= _HALF)
            rows.append(np.flatnonzero(ok))
            cols.append(index[A[ok] + p + _HALF, B[ok] + q + _HALF])
            vals.append(np.full(ok.sum(), np.exp(-0.36 * (p * p + q * q))))
    K = scipy.sparse.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))))
    P = scipy.sparse.diags_array(1.0 / np.asarray(K.sum(axis=1)).ravel()) @ K
    return scipy.sparse.csr_array(P), A, B, int(index[_HALF, _HALF])


@pytest.fixture(scope="module")
def lattice():
    return _lattice_markov_operator()


def _quadratic(rng):
    H = rng.standard_normal((2, 2))
    H = H + H.T
    b, c = rng.standard_normal(2), rng.standard_normal()
    return H, b, lambda x, y: 0.5 * (H[0, 0] * x * x + 2 * H[0, 1] * x * y + H[1, 1] * y * y) + b[0] * x + b[1] * y + c


def test_continuum_limit_is_exact_for_quadratics(lattice, rng):
    # Oracle: Gaussian moments (E h_a h_b = δ_ab/(2β), Isserlis for the fourth) give, with ε = 1/(4β),
    #   Γ(f, g)   = ε ∇f·∇g + (ε²/2)(tr H_f tr H_g + 2 tr H_f H_g)   (so 4βΓ has bias exactly 1/(8β)·(…)),
    #   Γ₂(f)     = ε² ‖H_f‖²   (ℒ of a quadratic is ε tr H, a constant; the bias of Γ is a constant),
    #   Γ₂(linear) = 0,   and H(f)(g, h) from composing the closed form for Γ twice (below).
    # Tolerance 1e-9: lattice-moment and truncation errors are ≈ 1e-12 relative.
    P, A, B, centre = lattice
    beta = 400.0
    eps, h = 1 / (4 * beta), 0.6 / np.sqrt(beta)
    x0 = np.array([0.3, -0.2])
    x, y = x0[0] + h * A, x0[1] + h * B
    (Hf, bf, f), (Hg, bg, g), (Hh, bh, hh) = _quadratic(rng), _quadratic(rng), _quadratic(rng)
    grad_f, grad_g, grad_h = Hf @ x0 + bf, Hg @ x0 + bg, Hh @ x0 + bh

    def closed_gamma(Ha, ga, Hb, gb):
        return eps * ga @ gb + 0.5 * eps**2 * (np.trace(Ha) * np.trace(Hb) + 2 * np.trace(Ha @ Hb))

    fv, gv, hv = f(x, y), g(x, y), hh(x, y)
    np.testing.assert_allclose(carre_du_champ(P, fv, gv)[centre], closed_gamma(Hf, grad_f, Hg, grad_g), rtol=1e-9)
    np.testing.assert_allclose(
        4 * beta * carre_du_champ(P, fv, gv)[centre] - grad_f @ grad_g,
        (np.trace(Hf) * np.trace(Hg) + 2 * np.trace(Hf @ Hg)) / (8 * beta),
        rtol=1e-6,  # a difference of O(1) numbers: 1e-12 absolute on a 1e-3 bias
    )
    np.testing.assert_allclose((4 * beta) ** 2 * gamma2(P, fv)[centre], np.sum(Hf * Hf), rtol=1e-9)
    # A linear function has zero Hessian: (4β)²Γ₂ = 0 up to rounding (≈ 4β·‖∇f‖²·1e-16 ≈ 1e-11).
    linear = 2.0 * x - 3.0 * y + 1.0
    assert abs((4 * beta) ** 2 * gamma2(P, linear)[centre]) < 1e-9

    # Γ(a, b) for quadratics a, b is again quadratic: gradient ε(H_a∇b + H_b∇a), Hessian ε(H_aH_b + H_bH_a).
    def composed(Ha, ga, Hb, gb, Hc, gc):  # Γ(a, Γ(b, c)) at x0
        return closed_gamma(Ha, ga, eps * (Hb @ Hc + Hc @ Hb), eps * (Hb @ gc + Hc @ gb))

    expected_h = 0.5 * (
        composed(Hg, grad_g, Hf, grad_f, Hh, grad_h)
        + composed(Hh, grad_h, Hf, grad_f, Hg, grad_g)
        - composed(Hf, grad_f, Hg, grad_g, Hh, grad_h)
    )
    got_h = hessian_form(P, fv, gv, hv)[centre]
    np.testing.assert_allclose(got_h, expected_h, rtol=1e-8)
    # Leading order: (4β)² H(f)(g, h) = Hess f(∇g, ∇h) + O(1/β).
    np.testing.assert_allclose((4 * beta) ** 2 * got_h, grad_g @ Hf @ grad_h, rtol=20 / beta, atol=20 / beta)


def test_continuum_bias_decays_like_one_over_beta(lattice):
    # Oracle: the flat-space limits 4βΓ(f,g) → ∇f·∇g, (4β)²Γ₂(f) → ‖Hess f‖², (4β)²H(f)(g,g) → Hess f(∇g,∇g)
    # for smooth non-polynomial f, g; the errors must decay with fitted log-log slope −1 (±0.05: the
    # next order is O(1/β²)).  Since P_β = e^{εΔ} on ℝ² (ε = 1/(4β)), ℒ = εΔ + ε²Δ²/2 + …, so
    # β·(4βΓ(f, g) − ∇f·∇g) → X/16 with X = Δ²(fg) − fΔ²g − gΔ²f
    #   = 2ΔfΔg + 4(∇f·∇Δg + ∇g·∇Δf) + 4 Hess f : Hess g   (Leibniz; explicit derivatives below).
    # Tolerance 1% at β = 3200, where the next-order drift is ≈ 0.1%.
    P, A, B, centre = lattice
    x0, y0 = 0.3, -0.2
    u, v = 1.3 * x0 + 0.7 * y0, 0.4 * x0 - 1.1 * y0

    def f(x, y):
        return np.sin(1.3 * x + 0.7 * y) + 0.5 * np.cos(0.4 * x - 1.1 * y)

    def g(x, y):
        return np.exp(0.3 * x) * np.cos(y)

    grad_f = np.array([1.3 * np.cos(u) - 0.2 * np.sin(v), 0.7 * np.cos(u) + 0.55 * np.sin(v)])
    hess_f = -np.sin(u) * np.outer([1.3, 0.7], [1.3, 0.7]) - 0.5 * np.cos(v) * np.outer([0.4, -1.1], [0.4, -1.1])
    e = np.exp(0.3 * x0)
    grad_g = np.array([0.3 * e * np.cos(y0), -e * np.sin(y0)])
    betas = np.array([200.0, 400.0, 800.0, 1600.0, 3200.0])
    errors = {"gamma": [], "gamma2": [], "hessian": []}
    for beta in betas:
        h = 0.6 / np.sqrt(beta)
        fv, gv = f(x0 + h * A, y0 + h * B), g(x0 + h * A, y0 + h * B)
        errors["gamma"].append(4 * beta * carre_du_champ(P, fv, gv)[centre] - grad_f @ grad_g)
        errors["gamma2"].append((4 * beta) ** 2 * gamma2(P, fv)[centre] - np.sum(hess_f**2))
        errors["hessian"].append((4 * beta) ** 2 * hessian_form(P, fv, gv, gv)[centre] - grad_g @ hess_f @ grad_g)
    for name, err in errors.items():
        slope = np.polyfit(np.log(betas), np.log(np.abs(err)), 1)[0]
        assert abs(slope + 1.0) < 0.05, f"{name}: fitted slope {slope:.3f}, expected -1"

    lap_f = -np.sin(u) * (1.3**2 + 0.7**2) - 0.5 * np.cos(v) * (0.4**2 + 1.1**2)
    grad_lap_f = -(1.3**2 + 0.7**2) * np.cos(u) * np.array([1.3, 0.7]) + 0.5 * (0.4**2 + 1.1**2) * np.sin(v) * np.array(
        [0.4, -1.1]
    )
    # g = e^{0.3x} cos y: Δg = (0.09 − 1) g.
    lap_g = (0.09 - 1.0) * e * np.cos(y0)
    grad_lap_g = (0.09 - 1.0) * grad_g
    hess_g = e * np.array([[0.09 * np.cos(y0), -0.3 * np.sin(y0)], [-0.3 * np.sin(y0), -np.cos(y0)]])
    bilaplacian_leibniz = (
        4 * (grad_f @ grad_lap_g + grad_g @ grad_lap_f) + 2 * lap_f * lap_g + 4 * np.sum(hess_f * hess_g)
    )
    np.testing.assert_allclose(betas[-1] * errors["gamma"][-1], bilaplacian_leibniz / 16, rtol=1e-2)


def test_flat_limit_of_gamma2_gains_the_density_drift_unless_q_is_uniform_or_alpha_is_one():
    # `markov.bakry_emery.flat_limits` on a non-uniform density (issue 37, item 3).  Oracle: the α-normalised walk
    # tends to Δ + ∇V·∇ with V = 2(1 − α) log q, and Bochner with that drift, Γ₂ = ‖Hess f‖² − Hess V(∇f, ∇f), both
    # derived by sympy in the identity; q = q₁(s)q₂(t) has Hess log q in closed form.  At β = 3200 on quadrature
    # nodes of q, (4β)²Γ₂(f) is within 0.5 % of the drift-corrected limit (measured 0.16 %, 0.20 %, 0.24 %: the
    # O(1/β) bias), while the uniform-q limit ‖Hess f‖² misses by 12 % (α = 0) and 6 % (α = ½).
    from workbench.catalogue import discover, select
    from workbench.derivations import markov_geometry as mg
    from workbench.markov import MarkovOperator, gauss_kernel_sparse

    beta = 3200.0
    nodes, centre = mg._flat_nodes(beta)
    hess_log_q, (u, v), _ = mg._flat_hess_log_q(mg.FLAT_EPS)
    kernel = gauss_kernel_sparse(nodes, beta, radius=mg.FLAT_REACH / np.sqrt(beta))
    x, y = nodes.T
    grad_f = np.array([np.cos(u) * np.cos(2 * v), -2 * np.sin(u) * np.sin(2 * v)])
    hess_f = np.array(
        [
            [-np.sin(u) * np.cos(2 * v), -2 * np.cos(u) * np.sin(2 * v)],
            [-2 * np.cos(u) * np.sin(2 * v), -4 * np.sin(u) * np.cos(2 * v)],
        ]
    )
    uniform_limit = np.sum(hess_f**2)
    for alpha in (0.0, 0.5, 1.0):
        got = (4 * beta) ** 2 * gamma2(MarkovOperator.from_kernel(kernel, alpha).P, np.sin(x) * np.cos(2 * y))[centre]
        limit = uniform_limit - 2 * (1 - alpha) * grad_f @ hess_log_q @ grad_f
        assert abs(got / limit - 1) < 5e-3, (alpha, got, limit)
        if alpha < 1:
            assert abs(got / uniform_limit - 1) > 0.05, (alpha, got, uniform_limit)
    (identity,) = select(discover(), name="markov.bakry_emery.flat_limits")
    assert r"- 2(1-\alpha)\operatorname{Hess}\log q(\nabla f,\nabla f)" in identity.statement


# --------------------------------------------------------------------------------------------------
# Stationary current, circulation, Hatano–Nelson, gauge gradients
# --------------------------------------------------------------------------------------------------


def test_stationary_current_is_antisymmetric_conserved_and_vanishes_iff_reversible(rng, backend):
    # Oracles: J = diag(π)P − Pᵀdiag(π) entry by entry; J1 = π − πP = 0 for the SVD-computed π;
    # a symmetric kernel's P is reversible (J = 0).  Rounding only (1e-13 relative to max|A|).
    P = random_markov(rng)
    pi = stationary_law(P)
    J = to_numpy(stationary_current(to_backend(P, backend), to_backend(pi, backend)))
    expected = np.array([[pi[i] * P[i, j] - pi[j] * P[j, i] for j in range(9)] for i in range(9)])
    np.testing.assert_allclose(J, expected, rtol=1e-13, atol=1e-16)
    np.testing.assert_array_equal(J, -J.T)
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-14)
    assert np.abs(J).max() > 1e-3  # genuinely non-reversible
    P_rev, pi_rev = reversible_markov(rng)
    np.testing.assert_allclose(
        to_numpy(stationary_current(to_backend(P_rev, backend), to_backend(pi_rev, backend))), 0.0, atol=1e-16
    )
    sparse = stationary_current(scipy.sparse.csr_array(P), pi)
    assert scipy.sparse.issparse(sparse)
    np.testing.assert_allclose(sparse.toarray(), expected, rtol=1e-13, atol=1e-16)


def test_circulation_is_the_antisymmetric_part_of_p_in_l2_pi(rng, backend):
    # Oracle: ⟨f, ½(P − P*)g⟩_π with the π-adjoint P* = diag(π)⁻¹Pᵀdiag(π) formed explicitly (1e-13).
    P = random_markov(rng)
    pi = stationary_law(P)
    f, g = rng.standard_normal((2, 9))
    P_star = (P.T * pi[None, :]) / pi[:, None]
    expected = np.sum(pi * f * (0.5 * (P - P_star) @ g))
    args = [to_backend(a, backend) for a in (P, f, g, pi)]
    got = float(circulation(*args))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(float(circulation(args[0], args[2], args[1], args[3])), -expected, rtol=1e-12)
    np.testing.assert_allclose(circulation(scipy.sparse.csr_array(P), f, g, pi), expected, rtol=1e-12)
    J = stationary_current(P, pi)
    np.testing.assert_allclose(got, 0.5 * f @ J @ g, rtol=1e-12)
    P_rev, pi_rev = reversible_markov(rng)
    assert abs(circulation(P_rev, f, g, pi_rev)) < 1e-15


def test_hatano_nelson_factorises_flux_and_current(rng, backend):
    # Oracles: the defining identities A = Ā⊙e^θ and J = 2Ā sinh θ, Ā = Āᵀ, θ = −θᵀ, and the cycle
    # sums of θ are half the cycle affinities Σ log(P_ij/P_ji) (π cancels around a cycle); 1e-12.
    P = random_markov(rng)
    pi = stationary_law(P)
    A_bar, theta = (to_numpy(a) for a in hatano_nelson(to_backend(P, backend), to_backend(pi, backend)))
    A = pi[:, None] * P
    np.testing.assert_allclose(A_bar * np.exp(theta), A, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(2 * A_bar * np.sinh(theta), stationary_current(P, pi), rtol=1e-12, atol=1e-16)
    np.testing.assert_array_equal(A_bar, A_bar.T)
    np.testing.assert_array_equal(theta, -theta.T)
    np.testing.assert_array_equal(theta[A == 0], 0.0)
    cycle = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0]  # the ring in the support
    affinity = sum(np.log(P[i, j] / P[j, i]) for i, j in itertools.pairwise(cycle))
    np.testing.assert_allclose(sum(theta[i, j] for i, j in itertools.pairwise(cycle)), affinity / 2, rtol=1e-12)
    A_bar_s, theta_s = hatano_nelson(scipy.sparse.csr_array(P), pi)
    np.testing.assert_allclose(A_bar_s.toarray(), A_bar, rtol=1e-13)
    np.testing.assert_allclose(theta_s.toarray(), theta, rtol=1e-12, atol=1e-15)


def test_gauge_gradients_identity_and_potential(rng, backend):
    # Oracles [RECON identity]: ½ D_Qᵀ D_K = diag(Ā1) − Ā⊙e^θ = diag(π)L + diag(V), V = Ā1 − π ≤ 0
    # (AM–GM, strict somewhere for non-reversible P); tested through ½ Σ (D_Q g)(D_K f) = gᵀ(…)f for
    # random f, g and, for scipy, the full matrix.  Rounding only (1e-12).
    P = random_markov(rng)
    pi = stationary_law(P)
    A_bar, _ = hatano_nelson(P, pi)
    V = A_bar.sum(axis=1) - pi
    generator_form = np.diag(pi) @ (np.eye(9) - P)
    assert np.all(V <= 1e-15) and V.min() < -1e-4
    f, g = rng.standard_normal((2, 9))
    D_K, D_Q, edges = gauge_gradients(to_backend(P, backend), to_backend(pi, backend))
    lhs = 0.5 * float(to_numpy(D_Q @ to_backend(g, backend)) @ to_numpy(D_K @ to_backend(f, backend)))
    np.testing.assert_allclose(lhs, g @ (generator_form + np.diag(V)) @ f, rtol=1e-12)
    edges = to_numpy(edges)
    assert edges.shape == (int(np.sum((A_bar > 0) & ~np.eye(9, dtype=bool))), 2)
    assert np.all(edges[:, 0] != edges[:, 1])
    for P_in in (P, scipy.sparse.csr_array(P)):
        D_K, D_Q, _ = gauge_gradients(P_in, pi)
        np.testing.assert_allclose(
            0.5 * (D_Q.T @ D_K).toarray(), np.diag(A_bar.sum(axis=1)) - pi[:, None] * P, rtol=1e-12, atol=1e-15
        )


def test_gauge_gradients_of_a_reversible_chain_are_the_weighted_gradient(rng):
    # Oracle: for reversible P, θ = 0 and V = 0, so D_K = D_Q = Ā^{1/2}(f_i − f_j) and
    # ½‖D_K f‖² = ℰ_Ā(f, f), the existing `dirichlet_form` of the kernel Ā; rounding (1e-12).
    P, pi = reversible_markov(rng)
    A_bar, theta = hatano_nelson(P, pi)
    np.testing.assert_allclose(theta, 0.0, atol=1e-15)
    np.testing.assert_allclose(A_bar.sum(axis=1), pi, rtol=1e-13)
    D_K, D_Q, _ = gauge_gradients(P, pi)
    np.testing.assert_allclose((D_K - D_Q).toarray(), 0.0, atol=1e-15)
    f = rng.standard_normal(9)
    np.testing.assert_allclose(0.5 * np.sum((D_K @ f) ** 2), dirichlet_form(A_bar, f), rtol=1e-12)


# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


def test_rates_are_validated():
    f = np.ones(3)
    with pytest.raises(
        ValueError, match=r"rates must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)"
    ):
        carre_du_champ(np.ones((2, 3)), f)
    with pytest.raises(ValueError, match=r"rates must be a square matrix .* got shape \(2, 3\)"):
        gamma2(scipy.sparse.csr_array(np.ones((2, 3))), f)
    bad = np.ones((3, 3))
    bad[0, 1] = -1.0
    with pytest.raises(
        ValueError, match=r"rates must have nonnegative off-diagonal entries \(jump rates\), got rates\[0, 1\] = -1"
    ):
        carre_du_champ(bad, f)
    with pytest.raises(
        ValueError, match=r"rates must have nonnegative off-diagonal entries \(jump rates\), got rates\[0, 1\] = -1"
    ):
        carre_du_champ(scipy.sparse.csr_array(bad), f)
    with pytest.raises(ValueError, match=r"rates must be finite, got 1 non-finite entry"):
        carre_du_champ(np.array([[0.0, np.nan], [1.0, 0.0]]), np.ones(2))
    with pytest.raises(ValueError, match=r"rates entries must be finite"):
        carre_du_champ(scipy.sparse.csr_array(np.array([[0.0, np.inf], [1.0, 0.0]])), np.ones(2))
    generator = np.array([[-1.0, 1.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, -2.0]])  # a negative diagonal is ignored
    np.testing.assert_array_equal(carre_du_champ(generator, np.arange(3.0)), [0.5, 0.5, 1.0])


def test_functions_are_validated():
    W = np.ones((3, 3))
    with pytest.raises(ValueError, match=r"rates rows and f must have matching sizes, got 3 and 4"):
        carre_du_champ(W, np.ones(4))
    with pytest.raises(ValueError, match=r"f and g must have the same shape, got \(3,\) and \(3, 2\)"):
        gamma2(W, np.ones(3), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"f and h must have the same shape"):
        hessian_form(W, np.ones(3), np.ones(3), np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"f must have shape \[n\] or \[n, m\], got shape \(3, 1, 1\)"):
        carre_du_champ(W, np.ones((3, 1, 1)))
    with pytest.raises(ValueError, match=r"form must be one of 'edge', 'operator', got 'naive'"):
        carre_du_champ(W, np.ones(3), form="naive")
    with pytest.raises(ValueError, match=r"f must be finite"):
        carre_du_champ(W, np.array([0.0, np.nan, 1.0]))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_and_torch_are_not_mixed():
    import torch

    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        carre_du_champ(np.ones((3, 3)), torch.ones(3, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"f must be a numpy array when rates is a scipy.sparse matrix"):
        gamma2(scipy.sparse.csr_array(np.ones((3, 3))), torch.ones(3, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"pi must be a numpy array when P is a scipy.sparse matrix"):
        stationary_current(scipy.sparse.csr_array(np.full((2, 2), 0.5)), torch.ones(2, dtype=torch.float64))


def test_markov_operator_and_law_are_validated():
    P = np.full((3, 3), 1 / 3)
    with pytest.raises(
        ValueError, match=r"P must be row-stochastic \(rows summing to 1 within 1e-10\), got row 0 summing to 2"
    ):
        stationary_current(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]), np.ones(3))
    with pytest.raises(ValueError, match=r"P must be row-stochastic .* got row 1 summing to 0.5"):
        hatano_nelson(scipy.sparse.csr_array(np.array([[1.0, 0.0], [0.0, 0.5]])), np.ones(2))
    with pytest.raises(ValueError, match=r"pi must be entrywise nonnegative, got minimum -0.1 at index \(2,\)"):
        circulation(P, np.ones(3), np.ones(3), np.array([0.6, 0.5, -0.1]))
    with pytest.raises(ValueError, match=r"P rows and pi must have matching sizes, got 3 and 2"):
        stationary_current(P, np.ones(2))
    with pytest.raises(ValueError, match=r"P rows and g must have matching sizes, got 3 and 4"):
        circulation(P, np.ones(3), np.ones(4), np.ones(3) / 3)


def test_hatano_nelson_needs_a_symmetric_support():
    P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])  # a one-way cycle
    message = (
        r"the flux A = diag\(pi\) P must have a symmetric support .* got A\[0, 1\] = 0.333333 > 0 but A\[1, 0\] = 0"
    )
    with pytest.raises(ValueError, match=message):
        hatano_nelson(P, np.ones(3) / 3)
    with pytest.raises(ValueError, match=message):
        gauge_gradients(scipy.sparse.csr_array(P), np.ones(3) / 3)
