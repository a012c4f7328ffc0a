import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from conftest import HAS_TORCH

from workbench.backend import to_backend, to_numpy
from workbench.markov._doob import doob_transform
from workbench.markov._kernels import gauss_kernel
from workbench.markov._markov_operator import MarkovOperator


def random_stochastic(rng, n, density=1.0):
    weights = rng.random((n, n)) * (rng.random((n, n)) < density)
    weights += np.diag(np.full(n, 0.1))  # aperiodic and every row nonempty
    return weights / weights.sum(axis=1, keepdims=True)


def random_symmetric_kernel(rng, n):
    w = rng.random((n, n))
    return w + w.T


def dense_stationary(P):
    # Oracle: the left Perron vector from a dense eigendecomposition of Pᵀ.
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    return pi / pi.sum()


# ---- stationary law, adjoint, currents ------------------------------------------------------


def test_stationary_law_of_a_nonreversible_chain_matches_the_perron_vector(rng, backend):
    # Oracle: dense eigenvector of Pᵀ at eigenvalue 1; tolerance 1e-12 (a linear solve of a
    # well-conditioned 30×30 system).
    P = random_stochastic(rng, 30)
    op = MarkovOperator(to_backend(P, backend))
    np.testing.assert_allclose(to_numpy(op.stationary), dense_stationary(P), rtol=1e-12)
    assert op.reversibility_residual > 0.1 and not op.is_reversible


def test_sparse_and_dense_operators_agree(rng):
    # Oracle: the dense route on the same matrix; rounding only.
    P = random_stochastic(rng, 40, density=0.2)
    dense, sparse = MarkovOperator(P), MarkovOperator(scipy.sparse.csr_array(P))
    np.testing.assert_allclose(sparse.stationary, dense.stationary, rtol=1e-11)
    np.testing.assert_allclose(sparse.adjoint.toarray(), dense.adjoint, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(sparse.current.toarray(), dense.current, atol=1e-16)
    assert math.isclose(sparse.reversibility_residual, dense.reversibility_residual, rel_tol=1e-12)


def test_kernel_route_gives_the_degree_law_exactly(rng):
    # Oracle: π = K1/1ᵀK1 for symmetric K (detailed balance π_i P_ij = K_ij/1ᵀK1), against the
    # linear-solve route on the same P.
    K = random_symmetric_kernel(rng, 25)
    op = MarkovOperator.from_kernel(K)
    np.testing.assert_allclose(op.stationary, K.sum(1) / K.sum(), rtol=1e-15)
    np.testing.assert_allclose(MarkovOperator(op.P).stationary, op.stationary, rtol=1e-12)
    assert op.is_reversible and op.reversibility_residual < 1e-15


def test_adjoint_is_the_pi_adjoint_and_current_is_divergence_free(rng):
    # Oracles: ⟨f, Pg⟩_π = ⟨P*f, g⟩_π by definition; J1 = πᵀP − π = 0 at stationarity;
    # ε_rev ≤ √2 because ⟨A, Aᵀ⟩ ≥ 0 for a nonnegative flux.
    P = random_stochastic(rng, 20)
    op = MarkovOperator(P)
    pi = op.stationary
    f, g = rng.standard_normal(20), rng.standard_normal(20)
    assert math.isclose(np.sum(pi * f * (P @ g)), np.sum(pi * (op.adjoint @ f) * g), rel_tol=1e-12)
    np.testing.assert_allclose(op.adjoint.sum(axis=1), 1.0, atol=1e-13)
    np.testing.assert_allclose(op.current.sum(axis=1), 0.0, atol=1e-15)
    np.testing.assert_allclose(op.flux.sum(), 1.0, rtol=1e-14)
    assert op.reversibility_residual <= math.sqrt(2)


def test_one_way_cycle_attains_the_maximal_residual():
    # Oracle: a deterministic rotation has A ⟂ Aᵀ, so ε_rev = ‖A − Aᵀ‖/‖A‖ = √2 exactly.
    op = MarkovOperator(np.roll(np.eye(5), 1, axis=1))
    assert math.isclose(op.reversibility_residual, math.sqrt(2), rel_tol=1e-14)


def test_reducible_chain_with_one_closed_class_has_zero_mass_on_transient_states():
    # Oracle: state 0 leaks into the closed 2-cycle {1, 2} whose law is (½, ½).
    P = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    op = MarkovOperator(P)
    np.testing.assert_allclose(op.stationary, [0.0, 0.5, 0.5], atol=1e-15)
    with pytest.raises(ValueError, match="transient states"):
        _ = op.adjoint


def test_disconnected_chain_says_the_law_is_not_unique():
    P = np.kron(np.eye(2), np.full((2, 2), 0.5))
    with pytest.raises(
        ValueError, match=r"not unique: P has 2 closed communicating classes \(vertices \[0, 1\]; \[2, 3\]\)"
    ):
        _ = MarkovOperator(P).stationary
    with pytest.raises(ValueError, match="not unique"):
        _ = MarkovOperator(scipy.sparse.csr_array(P)).stationary


# ---- Doob transforms and α-normalisation ------------------------------------------------------


def test_doob_transform_is_reversible_with_law_h_times_kh(rng, backend):
    # Oracle: the definition diag(Kh)⁻¹ K diag(h) and the closed form π ∝ h ⊙ Kh, checked by the
    # stationarity residual of the independent linear-solve route.
    K, h = random_symmetric_kernel(rng, 15), rng.random(15) + 0.1
    op = doob_transform(to_backend(K, backend), to_backend(h, backend))
    expected_P = (K * h[None, :]) / (K @ h)[:, None]
    np.testing.assert_allclose(to_numpy(op.P), expected_P, rtol=1e-14)
    pi = h * (K @ h)
    np.testing.assert_allclose(to_numpy(op.stationary), pi / pi.sum(), rtol=1e-14)
    np.testing.assert_allclose(to_numpy(op.stationary) @ expected_P, to_numpy(op.stationary), rtol=1e-13)
    assert op.is_reversible


def test_doob_transform_of_a_nonsymmetric_kernel_solves_for_the_law(rng):
    K, h = rng.random((12, 12)) + 0.01, rng.random(12) + 0.1
    op = doob_transform(K, h)
    np.testing.assert_allclose(op.P, (K * h) / (K @ h)[:, None], rtol=1e-14)
    np.testing.assert_allclose(op.stationary @ op.P, op.stationary, atol=1e-15)


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_alpha_normalisation_is_the_doob_transform_with_h_q_to_minus_alpha(rng, alpha):
    # Oracle: attention-geometry-math §A.2 [DERIVED]: P^(α) = P_h with h = q^{-α}, q = K1.
    K = random_symmetric_kernel(rng, 18)
    by_alpha, by_doob = MarkovOperator.from_kernel(K, alpha), doob_transform(K, K.sum(1) ** -alpha)
    np.testing.assert_allclose(by_alpha.P, by_doob.P, rtol=1e-13)
    np.testing.assert_allclose(by_alpha.stationary, by_doob.stationary, rtol=1e-13)


# ---- spectra ----------------------------------------------------------------------------------


GRAPH_SPECTRA = [
    # Closed forms of the random-walk eigenvalues μ = 1 − λ(normalised Laplacian).
    ("cycle C_12", nx.cycle_graph(12), sorted((math.cos(2 * math.pi * k / 12) for k in range(12)), reverse=True)),
    ("path P_9", nx.path_graph(9), [math.cos(math.pi * k / 8) for k in range(9)]),
    ("hypercube Q_4", nx.hypercube_graph(4), sorted((1 - 2 * bin(v).count("1") / 4 for v in range(16)), reverse=True)),
    ("complete K_7", nx.complete_graph(7), [1.0] + [-1 / 6] * 6),
]


@pytest.mark.parametrize(("name", "graph", "expected"), GRAPH_SPECTRA, ids=[g[0] for g in GRAPH_SPECTRA])
def test_random_walk_spectra_of_graphs_match_closed_forms(name, graph, expected):
    # Oracle: closed-form spectra (Chung, Spectral Graph Theory §1.2); rounding of eigh only.
    op = MarkovOperator.from_networkx(graph)
    np.testing.assert_allclose(op.spectrum(op.n).values, expected, atol=1e-13)


def test_reversible_eigenpairs_are_pi_orthonormal_and_start_with_the_constant(rng, backend):
    # Oracle: the eigen-equation residual ‖Pψ − μψ‖ and the Gram matrix in ⟨·,·⟩_π.
    K = random_symmetric_kernel(rng, 30)
    op = MarkovOperator.from_kernel(to_backend(K, backend), alpha=0.5)
    spectrum = op.spectrum(6)
    mu, psi, P, pi = (to_numpy(x) for x in (spectrum.values, spectrum.vectors, op.P, op.stationary))
    np.testing.assert_allclose(P @ psi, psi * mu, atol=1e-12)
    np.testing.assert_allclose(psi.T @ (pi[:, None] * psi), np.eye(6), atol=1e-12)
    np.testing.assert_allclose(psi[:, 0], 1.0, rtol=1e-12)
    assert np.all(np.diff(mu) <= 0)


def test_sparse_shift_invert_spectrum_matches_dense_eigh(rng):
    # Oracle: dense eigh of the same operator (the sparse matrix stores every entry; n above the
    # dense cut-off so shift-invert Lanczos runs).  Tolerance 1e-10: Lanczos convergence.
    x = rng.standard_normal((600, 2))
    K = gauss_kernel(x, 2.0)
    dense_op = MarkovOperator.from_kernel(K, alpha=1.0)
    dense = dense_op.spectrum(8)
    sparse = MarkovOperator.from_kernel(scipy.sparse.csr_array(K), alpha=1.0).spectrum(8)
    np.testing.assert_allclose(sparse.values, dense.values, atol=1e-10)
    overlap = sparse.vectors.T @ (dense_op.stationary[:, None] * dense.vectors)  # π-inner products
    np.testing.assert_allclose(np.abs(np.diag(overlap)), 1.0, atol=1e-8)


def test_knn_spectrum_matches_dense_eigh_and_scipys_own_shift_invert():
    # Two oracles for the symmetric factorisation behind the sparse spectrum: dense eigh of the same symmetric
    # conjugate, and scipy's eigsh with its own (pivoting, COLAMD-ordered) shift-invert factorisation.  A 15-NN
    # Swiss roll clusters ten eigenvalues within 3e-3 of 1, the case shift-invert is for.  Tolerances: eigenvalues
    # 1e-12 (Lanczos to 1e-10 relative on (μ − σ)⁻¹ ≈ 10³…10⁶, i.e. far below 1e-12 on μ), eigenvector spans 1e-8
    # (the gaps between the top eigenvalues are ~1e-4, and Lanczos' tolerance is 1e-10).
    import scipy.linalg
    from scipy.sparse.linalg import eigsh

    from workbench.markov import SwissRoll
    from workbench.markov._sparse_spectrum import SHIFT

    op = MarkovOperator.from_points(SwissRoll().sample(1500, seed=3), k=15)
    spectrum = op.spectrum(10)
    mu, psi = to_numpy(spectrum.values), to_numpy(spectrum.vectors)
    root = np.sqrt(to_numpy(op.stationary))
    s = root[:, None] * op.P.toarray() / root[None, :]
    dense = scipy.linalg.eigh(0.5 * (s + s.T), eigvals_only=True)[::-1][:10]
    np.testing.assert_allclose(mu, dense, rtol=0, atol=1e-12)
    theirs, vectors = eigsh(scipy.sparse.csr_array(0.5 * (s + s.T)), k=10, sigma=SHIFT, which="LM", tol=1e-12)
    np.testing.assert_allclose(mu, np.sort(theirs)[::-1], rtol=0, atol=1e-12)
    ours = psi * root[:, None]  # back to the orthonormal eigenvectors of S
    singular = np.linalg.svd(ours.T @ vectors, compute_uv=False)
    assert singular.min() > 1 - 1e-8  # the same 10-dimensional span
    assert np.all(np.diff(mu) <= 0) and np.isclose(mu[0], 1.0, rtol=0, atol=1e-13)


def test_sparse_diagonal_scalings_keep_the_pattern_and_equal_the_matrix_products(rng):
    # Oracle: the products with diags_array.  Explicit zeros (underflowed kernel weights) stay stored, so the
    # pattern of P is the neighbour graph.
    from workbench.markov._matrices import scale_both, scale_columns, scale_rows

    dense = rng.random((7, 7)) * (rng.random((7, 7)) < 0.5)
    matrix = scipy.sparse.csr_array(dense)
    matrix.data[0] = 0.0  # an explicit zero
    before = matrix.copy()
    d = rng.random(7) + 0.5
    rows, cols = scale_rows(d, matrix), scale_columns(matrix, d)
    np.testing.assert_array_equal(rows.toarray(), (scipy.sparse.diags_array(d) @ matrix).toarray())
    np.testing.assert_array_equal(cols.toarray(), (matrix @ scipy.sparse.diags_array(d)).toarray())
    assert rows.nnz == cols.nnz == matrix.nnz
    # Both sides at once, in one pass: the same products in the same order as the two passes, so equal to the bit;
    # the dense path likewise.
    e = rng.random(7) + 0.5
    both = scale_both(d, matrix, e)
    np.testing.assert_array_equal(both.toarray(), scale_columns(scale_rows(d, matrix), e).toarray())
    np.testing.assert_array_equal(scale_both(d, dense, e), scale_columns(scale_rows(d, dense), e))
    assert both.nnz == matrix.nnz and both.has_sorted_indices == matrix.has_sorted_indices
    np.testing.assert_array_equal(matrix.data, before.data)  # the argument is not scaled in place


def test_nonreversible_spectrum_satisfies_the_eigen_equation(rng):
    P = random_stochastic(rng, 15)
    spectrum = MarkovOperator(P).spectrum(4)
    np.testing.assert_allclose(P @ spectrum.vectors, spectrum.vectors * spectrum.values, atol=1e-12)
    assert abs(spectrum.values[0] - 1) < 1e-12


def test_diffusion_distance_equals_euclidean_distance_in_the_full_diffusion_map(rng):
    # Oracle: D_t(i,j)² = Σ_l (P^t_il − P^t_jl)²/π_l from the dense matrix power (Coifman–Lafon 2006, Prop. 1).
    K = random_symmetric_kernel(rng, 25)
    op = MarkovOperator.from_kernel(K)
    t = 3
    coordinates = op.diffusion_map(op.n - 1, t=t)
    Pt = np.linalg.matrix_power(op.P, t)
    direct = ((Pt[:, None, :] - Pt[None, :, :]) ** 2 / op.stationary).sum(-1)
    embedded = ((coordinates[:, None, :] - coordinates[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(embedded, direct, atol=1e-12)


@pytest.mark.parametrize("zero_diagonal", [False, True], ids=["self-loops", "no-self-loops"])
@pytest.mark.parametrize("neighbours", [None, {"k": 12}, {"radius": 1.0}], ids=["dense", "knn", "radius"])
def test_nystrom_reproduces_the_diffusion_map_at_training_points(rng, neighbours, zero_diagonal):
    # Oracle: at x = x_i the extension formula is the eigen-equation itself; rounding only.
    x = rng.standard_normal((150, 2))
    op = MarkovOperator.from_points(x, beta=3.0, alpha=0.5, zero_diagonal=zero_diagonal, **(neighbours or {}))
    np.testing.assert_allclose(op.nystrom(x[:40], 3, t=2), op.diffusion_map(3, t=2)[:40], atol=1e-10)


def test_zero_diagonal_drops_exactly_the_self_weights(rng):
    # Oracle: the dense kernel minus the identity, normalised by hand.
    x = rng.standard_normal((30, 2))
    K = gauss_kernel(x, 2.0) - np.eye(30)
    for kwargs in ({}, {"radius": 100.0}):
        op = MarkovOperator.from_points(x, 2.0, zero_diagonal=True, **kwargs)
        P = op.P.toarray() if op.is_sparse else op.P
        np.testing.assert_allclose(P, K / K.sum(1, keepdims=True), rtol=1e-14)


def test_default_scales_follow_the_neighbourhood(rng):
    # Oracles: the definitions — dense: 1/median d²_ij; kNN: 1/median of the squared k-th neighbour
    # distance (brute-force sort); radius: 9/r².
    x = rng.standard_normal((80, 2))
    d2 = ((x[:, None] - x[None]) ** 2).sum(-1)
    assert MarkovOperator.from_points(x)._sampling[1] == pytest.approx(1 / np.median(d2[np.triu_indices(80, 1)]))
    kth = np.sort(d2, axis=1)[:, 5]  # column 0 is the point itself
    assert MarkovOperator.from_points(x, k=5)._sampling[1] == pytest.approx(1 / np.median(kth), rel=1e-12)
    assert MarkovOperator.from_points(x, radius=0.5)._sampling[1] == pytest.approx(36.0)


def test_nystrom_extends_circle_harmonics_to_new_angles():
    # Oracle: on a uniform circle ψ₁, ψ₂ span {cos θ, sin θ}; the extension at new angles must lie
    # in that span (least-squares residual 1e-6 relative: bias O(1/n) of the discretisation).
    theta = 2 * np.pi * np.arange(300) / 300
    op = MarkovOperator.from_points(np.column_stack([np.cos(theta), np.sin(theta)]), beta=50.0, alpha=1.0)
    new = np.linspace(0.01, 6.2, 37)
    extended = op.nystrom(np.column_stack([np.cos(new), np.sin(new)]), 2, t=0)
    basis = np.column_stack([np.cos(new), np.sin(new)])
    coefficients, *_ = np.linalg.lstsq(basis, extended, rcond=None)
    residual = np.linalg.norm(basis @ coefficients - extended) / np.linalg.norm(extended)
    assert residual < 1e-6


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_torch_and_numpy_spectra_agree(rng):
    K = random_symmetric_kernel(rng, 20)
    a = MarkovOperator.from_kernel(K, 1.0).diffusion_map(4, t=2)
    b = MarkovOperator.from_kernel(to_backend(K, "torch:cpu"), 1.0).diffusion_map(4, t=2)
    np.testing.assert_allclose(to_numpy(b), a, atol=1e-12)


# ---- bad input --------------------------------------------------------------------------------


def test_bad_input_is_refused_with_named_messages(rng):
    with pytest.raises(ValueError, match=r"transition must be row-stochastic .* got row 1 summing to 0.9"):
        MarkovOperator(np.array([[0.5, 0.5], [0.2, 0.7]]))
    with pytest.raises(ValueError, match=r"transition must be row-stochastic .* got row 0 summing to 2"):
        MarkovOperator(scipy.sparse.csr_array(np.array([[1.0, 1.0], [0.5, 0.5]])))
    with pytest.raises(
        ValueError, match=r"transition must be entrywise nonnegative, got minimum -0.5 at index \(0, 1\)"
    ):
        MarkovOperator(scipy.sparse.csr_array(np.array([[1.5, -0.5], [0.5, 0.5]])))
    with pytest.raises(ValueError, match="kernel must be finite"):
        MarkovOperator.from_kernel(np.array([[1.0, np.nan], [1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"kernel must have positive row sums .* got row 1 summing to 0"):
        MarkovOperator.from_kernel(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got 1.5"):
        MarkovOperator.from_kernel(np.eye(2), alpha=1.5)
    with pytest.raises(ValueError, match=r"h must be entrywise positive, got minimum -1"):
        doob_transform(np.ones((2, 2)), np.array([1.0, -1.0]))
    op = MarkovOperator(random_stochastic(rng, 5))
    with pytest.raises(ValueError, match=r"count must be an integer in \[1, 5\], got 0"):
        op.spectrum(0)
    with pytest.raises(ValueError, match=r"diffusion_map needs a reversible operator .* ε_rev = "):
        op.diffusion_map(2)
    with pytest.raises(ValueError, match=r"nystrom needs an operator built by MarkovOperator\.from_points"):
        MarkovOperator.from_kernel(np.ones((3, 3))).nystrom(np.zeros((1, 2)))
    bipartite = MarkovOperator.from_networkx(nx.cycle_graph(6))  # μ = −1 is in the spectrum
    with pytest.raises(ValueError, match=r"t must be an integer when P has negative eigenvalues .*got 0.5"):
        bipartite.diffusion_map(5, t=0.5)


def _sharp_swiss_roll_head():
    from workbench.markov import SwissRoll, softmax_operator

    points = SwissRoll().sample(64, seed=9)
    points = points[np.argsort(np.hypot(points[:, 0], points[:, 2]))][:, [0, 2]]
    points = (points - points.mean(0)) / points.std()
    rng = np.random.default_rng(9)
    X = points @ rng.standard_normal((2, 16))
    W_Q, W_K = 0.7 * rng.standard_normal((16, 4)), 0.7 * rng.standard_normal((16, 4))
    return softmax_operator((X @ W_Q) @ (X @ W_K).T, beta=14.67799267622069)  # a plain attention head


def _gth_mpmath(P, digits=60):
    """GTH elimination in mpmath (arbitrary exponent range): the oracle for a law beyond double range."""
    import mpmath

    mpmath.mp.dps = digits
    n = P.shape[0]
    A = [[mpmath.mpf(float(P[i, j])) for j in range(n)] for i in range(n)]
    for k in range(n - 1, 0, -1):
        s = mpmath.fsum(A[k][:k])
        for i in range(k):
            A[i][k] /= s
        for i in range(k):
            for j in range(k):
                A[i][j] += A[i][k] * A[k][j]
    pi = [mpmath.mpf(1)]
    for k in range(1, n):
        pi.append(mpmath.fsum(pi[i] * A[i][k] for i in range(k)))
    total = mpmath.fsum(pi)
    return [p / total for p in pi]


def test_stationary_law_of_a_numerically_reducible_head_is_a_clear_error():
    # A sharp attention head (β ≈ 15 on an ordered Swiss-roll context): by its support it has one closed class,
    # but its law spans more than the double range (oracle: the same elimination in mpmath, π_max/π_min ≈
    # 1e1190), so no float64 vector holds it.  The error must say so, on every BLAS (it no longer depends on
    # whether LAPACK's pivoting happens to meet an exact zero).
    P = _sharp_swiss_roll_head()
    pi = _gth_mpmath(P)
    assert max(pi) / min(pi) > 1e308
    with pytest.raises(
        ValueError, match=r"the stationary law is numerically undetermined: .*\(smallest positive transition"
    ):
        _ = MarkovOperator(P).stationary


@pytest.mark.parametrize("backend", ["numpy", "torch:cpu"] if HAS_TORCH else ["numpy"])
def test_stationary_law_keeps_transitions_below_the_unit_roundoff(backend):
    # Oracle: the two-state closed form π = (b, a)/(a + b) for P = [[1 − a, a], [b, 1 − b]].  With a, b ≈ 1e-20,
    # 1 − P_ii rounds to 0 and (I − P)ᵀ is the zero matrix in float64; GTH never forms it.  Tolerance 4u: a few
    # roundings of sums and quotients of positive numbers (no cancellation).
    a, b = 1e-20, 3e-20
    P = to_backend(np.array([[1 - a, a], [b, 1 - b]]), backend)
    pi = to_numpy(MarkovOperator(P).stationary)
    np.testing.assert_allclose(pi, [b / (a + b), a / (a + b)], rtol=4 * 2.0**-53, atol=0)


def test_stationary_law_of_a_sharp_head_to_full_relative_accuracy():
    # Oracle: the mpmath elimination at 60 digits on the same stored matrix.  β = 6 on the same context leaves
    # transitions down to ~1e-126 and π over 125 decades; every π_i is to match to 1e-12 relative (the
    # elimination's entrywise bound is O(n²u) ≈ 5e-13 for n = 64).  LU on (I − P)ᵀ, the previous method, is off
    # by 190 % on the smallest entries here.
    P = softmax_operator_for_beta(6.0)
    pi = to_numpy(MarkovOperator(P).stationary)
    reference = np.array([float(p) for p in _gth_mpmath(P)])
    assert reference.max() / reference.min() > 1e10
    np.testing.assert_allclose(pi, reference, rtol=1e-12, atol=0)


def softmax_operator_for_beta(beta):
    P = _sharp_swiss_roll_head()
    logits = np.log(np.maximum(P, np.finfo(float).tiny)) / 14.67799267622069  # the head's scores, shifted per row
    weights = np.exp(beta * (logits - logits.max(axis=1, keepdims=True)))
    return weights / weights.sum(axis=1, keepdims=True)


def test_stationary_law_vanishes_off_the_closed_class_and_refuses_subnormal_links():
    # Oracle: closed forms.  State 2 is transient (it leaves for {0, 1} and nothing returns): π = (1/2, 1/2, 0).
    P = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    np.testing.assert_allclose(MarkovOperator(P).stationary, [0.5, 0.5, 0.0], rtol=4 * 2.0**-53, atol=0)
    # Two states joined only by a subnormal transition (1e-310 < the smallest normal 2.2e-308): one closed class
    # by support, but the law hangs on a number with no relative precision left.
    joined = np.array([[1.0, 0.0], [1e-310, 1.0 - 1e-310]])
    joined[0] = [1.0 - 1e-310, 1e-310]
    with pytest.raises(ValueError, match=r"numerically undetermined: .*only through transitions that underflow"):
        _ = MarkovOperator(joined).stationary


def test_stationary_law_agrees_with_a_dense_solve_on_well_conditioned_chains():
    # Oracle: numpy's LU solve of (I − P)ᵀπ = 0 with one equation replaced by Σπ = 1 (well conditioned for a
    # dense random chain: 1e-13 covers a few hundred roundings).
    rng = np.random.default_rng(4)
    for n in (3, 17, 80):
        P = rng.random((n, n)) ** 3
        P /= P.sum(axis=1, keepdims=True)
        system = (np.eye(n) - P).T
        system[-1] = 1.0
        reference = np.linalg.solve(system, np.eye(n)[-1])
        np.testing.assert_allclose(MarkovOperator(P).stationary, reference, rtol=1e-13, atol=0)


@pytest.mark.parametrize("backend", ["numpy", "torch:cpu"] if HAS_TORCH else ["numpy"])
def test_stationary_laws_of_a_stack_match_each_matrix_alone(backend):
    # Oracle: the mpmath elimination at 60 digits of each matrix (sharp heads, π over ten decades and more) and
    # MarkovOperator(P[k]).stationary one matrix at a time.  1e-12 relative, as for one matrix: the stack runs the
    # same positive sums and products, only batched.
    from workbench.markov import stationary_laws

    heads = np.stack([softmax_operator_for_beta(beta) for beta in (0.5, 2.0, 6.0)]).reshape(3, 1, 64, 64)
    laws = to_numpy(stationary_laws(to_backend(heads, backend)))
    assert laws.shape == (3, 1, 64)
    for k in range(3):
        reference = np.array([float(p) for p in _gth_mpmath(heads[k, 0])])
        np.testing.assert_allclose(laws[k, 0], reference, rtol=1e-12, atol=0)
        np.testing.assert_allclose(laws[k, 0], to_numpy(MarkovOperator(heads[k, 0]).stationary), rtol=1e-12, atol=0)


def test_stationary_laws_of_a_stack_with_zeros_go_matrix_by_matrix_and_name_the_matrix():
    # A stack with a zero transition is not positive: each matrix is read by MarkovOperator (closed classes
    # found).  Oracle: the two-state closed form π = (b, a)/(a + b); a reducible matrix is named in the error.
    from workbench.markov import stationary_laws

    a, b = 0.25, 0.5
    chain = np.array([[1 - a, a], [b, 1 - b]])
    absorbing = np.array([[1.0, 0.0], [0.5, 0.5]])  # state 0 absorbs: π = (1, 0)
    laws = stationary_laws(np.stack([chain, absorbing]))
    np.testing.assert_allclose(laws, [[b / (a + b), a / (a + b)], [1.0, 0.0]], rtol=1e-15, atol=0)
    with pytest.raises(ValueError, match=r"cannot compute the stationary law of P\[1\]: the stationary law is not"):
        stationary_laws(np.stack([chain, np.eye(2)]))
    with pytest.raises(ValueError, match=r"P must be row-stochastic .* \(row-sum tolerance atol = 0\)"):
        stationary_laws(np.stack([chain, chain + 1e-15]), atol=0.0)


@pytest.mark.parametrize("n", [2, 16, 17, 33])
def test_gth_in_blocks_matches_mpmath_at_block_boundaries(n):
    # GTH runs in blocks of 16 states (the last block shorter); oracle: the one-state-at-a-time elimination in
    # mpmath at 60 digits.  Sharp random rows (transitions down to ~1e-40); 1e-12 relative, as above.
    from workbench.markov import stationary_laws

    rng = np.random.default_rng(n)
    logits = 6.0 * rng.standard_normal((2, n, n))
    P = np.exp(logits - logits.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    laws = stationary_laws(P)
    for k in range(2):
        reference = np.array([float(p) for p in _gth_mpmath(P[k])])
        np.testing.assert_allclose(laws[k], reference, rtol=1e-12, atol=0)
