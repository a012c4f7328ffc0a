from itertools import pairwise

import networkx as nx
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from conftest import HAS_TORCH

from workbench.backend import to_backend, to_numpy
from workbench.markov._cycles import (
    cycle_affinities,
    cycle_basis,
    kolmogorov_residual,
    support_graph,
)
from workbench.markov._hodge import hodge_split

# ---------------------------------------------------------------------------------------------- helpers


def _head(rng, n, beta, *, link="free"):
    """P = rownorm exp⊙(β(S + A)) with S symmetric and A antisymmetric (free or exact)."""
    s = rng.standard_normal((n, n))
    s = s + s.T
    if link == "free":
        b = rng.standard_normal((n, n))
        a = b - b.T
    else:
        phi = rng.standard_normal(n)
        a = phi[:, None] - phi[None, :]
    w = beta * (s + a)
    p = np.exp(w - w.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True), a


def _stationary_law(p):
    # Independent oracle: the left Perron eigenvector from a dense eigensolver.
    values, vectors = scipy.linalg.eig(p.T)
    v = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
    return v / v.sum()


def _detailed_balance_residual(p):
    pi = _stationary_law(p)
    flux = pi[:, None] * p
    return np.abs(flux - flux.T).max() / np.abs(flux).max()


def _sparse_rownorm(k):
    sums = np.asarray(k.sum(axis=1)).ravel()
    return sp.csr_array(sp.diags_array(1.0 / np.where(sums > 0, sums, 1.0)) @ k)  # isolated rows stay zero


def _cycle_sum(field, cycle):
    return sum(field[cycle[m], cycle[m + 1]] for m in range(len(cycle) - 1))


def _random_weighted_graph(rng, n, p_edge, *, components=1):
    """Symmetric sparse weights on a random graph (several blocks and an isolated vertex)."""
    blocks = []
    for _ in range(components):
        g = nx.gnp_random_graph(n, p_edge, seed=int(rng.integers(1 << 31)))
        w = nx.to_scipy_sparse_array(g, format="coo")
        w = sp.coo_array((rng.uniform(0.5, 2.0, w.nnz), (w.row, w.col)), shape=w.shape)
        blocks.append(w + w.T)
    blocks.append(sp.csr_array((1, 1)))  # an isolated vertex: its own component
    return sp.block_diag(blocks, format="csr")


# ------------------------------------------------------------------------------------ the support graph


def test_support_graph_reads_pairs_and_ignores_the_diagonal():
    # Oracle: the nonzero off-diagonal pairs read by hand.
    p = np.array(
        [
            [0.9, 0.1, 0.0, 0.0],
            [0.5, 0.0, 0.5, 0.0],
            [0.0, 0.3, 0.7, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )
    g = support_graph(p)
    assert sorted(g.nodes) == [0, 1, 2, 3]  # the absorbing vertex 3 is kept, isolated
    assert sorted(g.edges) == [(0, 1), (1, 2)]
    assert sorted(support_graph(sp.csr_matrix(p)).edges) == [(0, 1), (1, 2)]


def test_support_graph_dense_equals_sparse(rng):
    w = _random_weighted_graph(rng, 12, 0.3, components=2)
    dense, sparse = support_graph(w.toarray()), support_graph(w)
    assert set(dense.edges) == set(sparse.edges)
    assert dense.number_of_nodes() == sparse.number_of_nodes() == w.shape[0]


@pytest.mark.parametrize("make", [np.asarray, sp.csr_array])
def test_support_graph_names_the_first_one_way_pair(make):
    p = np.array([[0.0, 0.5, 0.5], [0.0, 0.2, 0.8], [1.0, 0.0, 0.0]])
    with pytest.raises(
        ValueError,
        match=r"P must have symmetric support .* got P\[0, 1\] = 0\.5 but P\[1, 0\] = 0: the pair \(0, 1\) "
        r"is irreversible, the affinity log\(P\[0, 1\]/P\[1, 0\]\) of any cycle through it is infinite",
    ):
        support_graph(make(p))


def test_support_graph_rejects_bad_matrices():
    with pytest.raises(ValueError, match=r"P must be entrywise nonnegative, got minimum -0.1 at index \(0, 1\)"):
        support_graph(np.array([[1.1, -0.1], [0.5, 0.5]]))
    with pytest.raises(ValueError, match=r"P must be entrywise nonnegative, got minimum -0.1 at index \(0, 1\)"):
        support_graph(sp.csr_array(np.array([[1.1, -0.1], [0.5, 0.5]])))
    with pytest.raises(ValueError, match=r"P must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)"):
        support_graph(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"P must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)"):
        support_graph(sp.csr_array(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"P must be finite, got 1 non-finite entry \(first at index \(1, 0\)\)"):
        support_graph(sp.csr_array(np.array([[0.0, 1.0], [np.nan, 0.0]])))
    with pytest.raises(TypeError, match=r"P must be real-valued"):
        support_graph(np.eye(2, dtype=complex))


# ------------------------------------------------------------------------------------------ cycle basis


@pytest.mark.parametrize("components", [1, 3])
def test_cycle_basis_is_a_basis_of_the_cycle_space(rng, components):
    # Oracle: linear algebra of the oriented incidence matrix ∂ (n × m).  A cycle basis is a set of
    # m − n + c vectors z with ∂z = 0 (each is a cycle) of full rank (independent): c counted by networkx.
    w = _random_weighted_graph(rng, 9, 0.45, components=components)
    g = support_graph(w)
    edges = sorted(g.edges)
    index = {e: k for k, e in enumerate(edges)}
    n, m, c = g.number_of_nodes(), len(edges), nx.number_connected_components(g)
    basis = cycle_basis(w)
    assert len(basis) == m - n + c
    z = np.zeros((len(basis), m))
    for k, cycle in enumerate(basis):
        assert cycle[0] == cycle[-1] and len(set(cycle[:-1])) == len(cycle) - 1  # closed and simple
        for i, j in pairwise(cycle):
            z[k, index[(min(i, j), max(i, j))]] += 1.0 if i < j else -1.0
    boundary = np.zeros((n, m))
    for k, (i, j) in enumerate(edges):
        boundary[i, k], boundary[j, k] = -1.0, 1.0
    np.testing.assert_array_equal(boundary @ z.T, 0.0)  # exact: integer arithmetic
    assert np.linalg.matrix_rank(z) == len(basis)


def test_cycle_basis_of_complete_graph_and_forest():
    # Closed forms: K_N has (N − 1)(N − 2)/2 independent cycles; a tree has none.
    for n in (3, 6, 10):
        assert len(cycle_basis(np.full((n, n), 1.0 / n))) == (n - 1) * (n - 2) // 2
    path = nx.to_numpy_array(nx.path_graph(6))
    assert cycle_basis(path) == []
    assert kolmogorov_residual(path) == 0.0
    assert cycle_affinities(path).shape == (0,)


# ------------------------------------------------------------------------------------- cycle affinities


def test_cycle_affinities_match_the_definition(rng, backend):
    # Oracle: log of the ratio of the forward and backward path products, one cycle at a time.
    p = rng.random((8, 8)) + 0.05
    p /= p.sum(axis=1, keepdims=True)
    basis = cycle_basis(p)
    expected = [
        np.log(np.prod([p[i, j] for i, j in pairwise(c)]) / np.prod([p[j, i] for i, j in pairwise(c)])) for c in basis
    ]
    got = to_numpy(cycle_affinities(to_backend(p, backend)))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)  # rounding of ~7 logs per cycle
    np.testing.assert_allclose(to_numpy(cycle_affinities(to_backend(p, backend), basis)), got, rtol=0, atol=0)


def test_cycle_affinities_orientation_and_closure(rng):
    # Laws: reversing a cycle negates its affinity; an open sequence is closed implicitly.
    p = rng.random((5, 5)) + 0.1
    p /= p.sum(axis=1, keepdims=True)
    closed = cycle_affinities(p, [(0, 3, 1, 4, 0)])
    np.testing.assert_array_equal(cycle_affinities(p, [(0, 3, 1, 4)]), closed)
    np.testing.assert_allclose(cycle_affinities(p, [(0, 4, 1, 3, 0)]), -closed, rtol=1e-14)
    np.testing.assert_array_equal(cycle_affinities(p, [(2, 3)]), 0.0)  # i → j → i: the ratio cancels exactly


def test_cycle_affinities_are_additive_over_the_cycle_space(rng):
    # Oracle: every simple cycle z is an integer combination z = Σ c_k z_k of the basis (solved by least
    # squares on the edge-cycle incidence), and the affinity is linear: 𝔄(z) = Σ c_k 𝔄(z_k).
    w = _random_weighted_graph(rng, 7, 0.6)
    p = _sparse_rownorm(w.multiply(rng.uniform(0.5, 1.5, w.shape)))  # asymmetric values, symmetric support
    g = support_graph(p)
    edges = sorted(g.edges)
    index = {e: k for k, e in enumerate(edges)}

    def incidence(cycle):
        z = np.zeros(len(edges))
        for i, j in pairwise((*cycle, cycle[0])):
            z[index[(min(i, j), max(i, j))]] += 1.0 if i < j else -1.0
        return z

    basis = cycle_basis(p)
    z_basis = np.array([incidence(c[:-1]) for c in basis])
    basis_affinities = cycle_affinities(p, basis)
    cycles = [c for c in nx.simple_cycles(g, length_bound=6)][:40]
    assert len(cycles) > len(basis)  # the check covers cycles outside the basis
    coefficients = np.linalg.lstsq(z_basis.T, np.array([incidence(c) for c in cycles]).T, rcond=None)[0]
    np.testing.assert_allclose(coefficients, np.round(coefficients), atol=1e-9)  # integer combinations
    np.testing.assert_allclose(
        cycle_affinities(p, cycles), np.round(coefficients).T @ basis_affinities, rtol=1e-11, atol=1e-12
    )


def test_cycle_affinities_dense_equals_sparse(rng):
    w = _random_weighted_graph(rng, 15, 0.3, components=2)
    p = _sparse_rownorm(w.multiply(rng.uniform(0.2, 3.0, w.shape)))
    basis = cycle_basis(p)
    assert basis == cycle_basis(p.toarray())
    np.testing.assert_allclose(cycle_affinities(p), cycle_affinities(p.toarray()), rtol=0, atol=0)


@pytest.mark.parametrize("beta", [0.3, 2.0])
def test_head_affinity_is_twice_the_link_holonomy(rng, backend, beta):
    # Identity (§A.7, DERIVED): the row partition functions telescope, so 𝔄(γ) = 2β Σ_m A_{i_m i_{m+1}}.
    p, a = _head(rng, 9, beta)
    basis = cycle_basis(p)
    assert len(basis) == 28  # (N − 1)(N − 2)/2 on the complete graph
    holonomy = np.array([_cycle_sum(a, c) for c in basis])
    got = to_numpy(cycle_affinities(to_backend(p, backend), basis))
    # Tolerance: each term log P_ij is O(β|S + A|) ≈ 10 and carries one rounding; 3-cycles on K_N.
    np.testing.assert_allclose(got, 2 * beta * holonomy, rtol=1e-12, atol=1e-12)
    assert np.abs(got).max() > 0.1  # a free link is genuinely nonreversible


def test_head_with_exact_link_is_reversible(rng, backend):
    # Identity (§A.7): A_ij = φ_i − φ_j ⇒ all affinities vanish and P is reversible; the detailed-balance
    # residual uses π from an independent dense eigensolve.
    p, _ = _head(rng, 10, 1.5, link="exact")
    assert kolmogorov_residual(to_backend(p, backend)) < 1e-12  # rounding of 3 logs of size O(10)
    assert _detailed_balance_residual(p) < 1e-11  # eigensolver accuracy


def _chains(rng):
    """(name, P, expected reversible) covering dense, tree-supported and sparse chains."""
    n = 8
    sym = rng.random((n, n))
    sym = sym + sym.T
    tree = nx.to_numpy_array(nx.random_labeled_tree(n, seed=int(rng.integers(1 << 31))))
    ring = nx.to_numpy_array(nx.cycle_graph(n))
    h = rng.uniform(0.5, 2.0, n)

    def rownorm(k):
        return k / k.sum(axis=1, keepdims=True)

    return [
        ("symmetric kernel", rownorm(sym), True),
        ("Doob transform", rownorm(sym * h[None, :]), True),
        ("tree, arbitrary weights", rownorm(tree * rng.uniform(0.1, 1.0, (n, n))), True),
        ("exact link head", _head(rng, n, 1.0, link="exact")[0], True),
        ("free link head", _head(rng, n, 1.0)[0], False),
        ("random dense", rownorm(rng.random((n, n))), False),
        ("ring, arbitrary weights", rownorm(ring * rng.uniform(0.1, 1.0, (n, n))), False),
        ("ring, symmetric weights", rownorm(ring * sym), True),
    ]


def test_kolmogorov_criterion_agrees_with_detailed_balance(rng):
    # Oracle: detailed balance π_i P_ij = π_j P_ji with π from a dense left-eigenvector solve, an
    # independent criterion.  Thresholds: reversible cases sit at rounding (< 1e-11), the others at O(0.1).
    for name, p, reversible in _chains(rng):
        kolmogorov = kolmogorov_residual(p)
        balance = _detailed_balance_residual(p)
        assert (kolmogorov < 1e-11) == reversible, (name, kolmogorov)
        assert (balance < 1e-10) == reversible, (name, balance)
        assert kolmogorov_residual(sp.csr_array(p)) == kolmogorov, name


def test_cycle_affinities_reject_bad_cycles():
    p = np.array([[0.0, 0.5, 0.5, 0.0], [0.5, 0.0, 0.5, 0.0], [0.3, 0.3, 0.0, 0.4], [0.0, 0.0, 1.0, 0.0]])
    with pytest.raises(
        ValueError, match=r"cycles\[1\] must step only along pairs .* got the step 3 -> 0 with P\[3, 0\] = 0"
    ):
        cycle_affinities(p, [(0, 1, 2), (2, 3, 0)])
    with pytest.raises(
        ValueError, match=r"cycles\[0\] must hold vertex indices in \[0, 4\), got \(0, 7\) \(n = 4 vertices\)"
    ):
        cycle_affinities(p, [(0, 7)])
    with pytest.raises(ValueError, match=r"cycles\[0\] must visit at least 2 vertices, got \(1, 1\)"):
        cycle_affinities(p, [(1, 1)])
    with pytest.raises(ValueError, match=r"cycles\[0\] must not stay at a vertex"):
        cycle_affinities(p, [(0, 0, 1)])
    with pytest.raises(TypeError, match=r"cycles\[0\] must be a sequence of integer vertex indices"):
        cycle_affinities(p, [(0.0, 1.0)])
    with pytest.raises(TypeError, match=r"cycles must be a sequence of vertex sequences, got int"):
        cycle_affinities(p, 3)


# ----------------------------------------------------------------------------------------- Hodge split


def _edge_inner(w, u, v):
    return 0.5 * np.sum(w * u * v)


def _lstsq_potential(w, a):
    # Independent algorithm: weighted least squares √w(φ_i − φ_j) ≈ √w a_ij on the edge list (numpy lstsq,
    # minimum-norm), then centred per component.
    rows, cols = np.nonzero(np.triu(w, 1))
    n = w.shape[0]
    design = np.zeros((rows.size, n))
    design[np.arange(rows.size), rows] = 1.0
    design[np.arange(rows.size), cols] = -1.0
    sqrt_w = np.sqrt(w[rows, cols])
    phi = np.linalg.lstsq(sqrt_w[:, None] * design, sqrt_w * a[rows, cols], rcond=None)[0]
    _, labels = sp.csgraph.connected_components(sp.csr_array(w), directed=False)
    for label in np.unique(labels):
        phi[labels == label] -= phi[labels == label].mean()
    return phi


def test_hodge_split_complete_graph_closed_form(rng, backend):
    # Closed form (§A.7): on K_N with unit weights φ_i = (1/N) Σ_j a_ij and a^⊥ 1 = 0.
    b = rng.standard_normal((12, 12))
    a = b - b.T
    phi, exact, coexact = (to_numpy(x) for x in hodge_split(to_backend(a, backend)))
    np.testing.assert_allclose(phi, a.mean(axis=1), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(exact, phi[:, None] - phi[None, :], rtol=0, atol=0)
    np.testing.assert_allclose(coexact.sum(axis=1), 0.0, atol=1e-13)  # rounding of 12 terms of size O(1)
    np.testing.assert_allclose(exact + coexact, a, rtol=0, atol=1e-15)


def test_hodge_split_weighted_graph_laws(rng):
    # Oracles: an independent least-squares potential; divergence-freeness Σ_j w_ij a^⊥_ij = 0; weighted
    # orthogonality of the parts; cycle sums (exact: 0; coexact: those of a).  Tolerances: a direct solve
    # on ~40 vertices with weights in [0.5, 2] (condition number ~1e2) leaves ~1e-13.
    w = _random_weighted_graph(rng, 14, 0.35, components=3).toarray()
    b = rng.standard_normal(w.shape)
    a = np.where(w > 0, b - b.T, 0.0)
    phi, exact, coexact = hodge_split(a, w)
    np.testing.assert_allclose(phi, _lstsq_potential(w, a), atol=1e-12)
    np.testing.assert_allclose(np.sum(w * coexact, axis=1), 0.0, atol=1e-12)
    assert abs(_edge_inner(w, exact, coexact)) < 1e-12 * _edge_inner(w, a, a)
    _, labels = sp.csgraph.connected_components(sp.csr_array(w), directed=False)
    for label in np.unique(labels):
        assert abs(phi[labels == label].mean()) < 1e-14  # mean zero per component
    for cycle in cycle_basis(w):
        assert abs(_cycle_sum(exact, cycle)) < 1e-12
        np.testing.assert_allclose(_cycle_sum(coexact, cycle), _cycle_sum(a, cycle), atol=1e-12)
    np.testing.assert_array_equal(exact[w == 0], 0.0)
    np.testing.assert_array_equal(coexact[w == 0], 0.0)


def test_hodge_split_dense_equals_sparse(rng):
    w = _random_weighted_graph(rng, 40, 0.15, components=2)
    b = sp.csr_array(w.multiply(rng.standard_normal(w.shape)))
    a = sp.csr_array(b - b.T)
    sparse_parts = hodge_split(a, w)
    dense_parts = hodge_split(a.toarray(), w.toarray())
    assert sp.issparse(sparse_parts.exact) and sp.issparse(sparse_parts.coexact)
    np.testing.assert_allclose(sparse_parts.potential, dense_parts.potential, atol=1e-12)  # two solvers
    np.testing.assert_allclose(sparse_parts.exact.toarray(), dense_parts.exact, atol=1e-12)
    np.testing.assert_allclose(sparse_parts.coexact.toarray(), dense_parts.coexact, atol=1e-12)
    divergence = np.asarray(w.multiply(sparse_parts.coexact).sum(axis=1)).ravel()
    np.testing.assert_allclose(divergence, 0.0, atol=1e-12)


def test_hodge_split_of_a_reversible_log_ratio_is_minus_log_pi(rng):
    # Oracle: for reversible P, log(P_ij/P_ji) = log π_j − log π_i, so φ = −log π (centred) with π from a
    # dense eigensolve, and there is no coexact part.
    p, _ = _head(rng, 8, 1.0, link="exact")
    theta = np.log(p) - np.log(p).T
    phi, _, coexact = hodge_split(theta)
    log_pi = np.log(_stationary_law(p))
    np.testing.assert_allclose(phi, -(log_pi - log_pi.mean()), atol=1e-11)  # eigensolver accuracy
    np.testing.assert_allclose(coexact, 0.0, atol=1e-12)


def test_hodge_split_of_a_head_link(rng):
    # Identity (§A.7): with A = (φ_i − φ_j) + A^⊥, the affinities 2β Σ A are carried by A^⊥ alone,
    # and an exact link has no coexact part.
    beta = 0.8
    p, a = _head(rng, 7, beta)
    _, _, a_perp = hodge_split(a)
    basis = cycle_basis(p)
    np.testing.assert_allclose(
        cycle_affinities(p, basis), [2 * beta * _cycle_sum(a_perp, c) for c in basis], rtol=1e-11, atol=1e-12
    )
    phi = rng.standard_normal(7)
    potential, _, coexact = hodge_split(phi[:, None] - phi[None, :])
    np.testing.assert_allclose(potential, phi - phi.mean(), atol=1e-14)
    np.testing.assert_allclose(coexact, 0.0, atol=1e-14)


def test_hodge_split_rejects_bad_input():
    a = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 2.0], [0.0, -2.0, 0.0]])
    with pytest.raises(ValueError, match=r"edge_field must be antisymmetric, got max \|edge_field \+ edge_field\^T\|"):
        hodge_split(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"edge_field must be antisymmetric"):
        hodge_split(sp.csr_array(np.array([[0.0, 1.0], [1.0, 0.0]])))
    with pytest.raises(ValueError, match=r"weights must be entrywise nonnegative, got minimum -1 at index \(0, 1\)"):
        hodge_split(a, np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"weights must be symmetric, got max \|weights - weights\^T\| = 1"):
        hodge_split(a, np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"edge_field and weights must have the same shape, got \(3, 3\) and \(2, 2\)"):
        hodge_split(a, np.ones((2, 2)))
    with pytest.raises(
        ValueError, match=r"edge_field must vanish off the support of weights, got edge_field\[1, 2\] = 2 where"
    ):
        hodge_split(a, np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"edge_field must be a square matrix"):
        hodge_split(np.zeros((2, 3)))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_hodge_split_rejects_mixed_libraries():
    import torch

    a = np.array([[0.0, 1.0], [-1.0, 0.0]])
    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        hodge_split(a, torch.ones(2, 2, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"edge_field and weights must both be dense"):
        hodge_split(torch.as_tensor(a), sp.csr_array(np.ones((2, 2))))


def test_segment_sums_refuses_bad_values_and_starts():
    from workbench.markov import segment_sums

    values = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.raises(ValueError, match=r"values must be finite, got 1 non-finite entry"):
        segment_sums(np.array([1.0, np.nan, 3.0]), np.array([0]))
    with pytest.raises(ValueError, match=r"values must be a 1-dimensional array, got shape \(\)"):
        segment_sums(np.array(1.0), np.array([0]))
    with pytest.raises(TypeError, match=r"starts must hold integer offsets, got dtype float64"):
        segment_sums(values, np.array([0.0, 3.0]))
    with pytest.raises(ValueError, match=r"starts must be strictly increasing offsets from 0, each below"):
        segment_sums(values, np.array([0, 5]))
    with pytest.raises(ValueError, match=r"starts must begin with 0 when values holds 5 entries"):
        segment_sums(values, np.zeros(0, dtype=int))
    # Closed form: no segments of no values sum to nothing.
    assert segment_sums(np.zeros(0), np.zeros(0, dtype=int)).shape == (0,)


def test_cycle_edges_refuses_a_bad_vertex_count():
    from workbench.markov import cycle_edges

    with pytest.raises(TypeError, match=r"n must be an integer, got float"):
        cycle_edges([(0, 1, 2)], 2.5)
    with pytest.raises(ValueError, match=r"n must be an integer >= 0, got -1"):
        cycle_edges([(0, 1, 2)], -1)
