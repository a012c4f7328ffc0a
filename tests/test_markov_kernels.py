"""Sparse Gauss kernels, α-normalisation, bandwidth selection and graph weights."""

import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from conftest import HAS_TORCH
from scipy.special import ive

from workbench.backend import to_backend, to_numpy
from workbench.markov._bandwidth import BandwidthSweep, bandwidth_sweep, median_bandwidth
from workbench.markov._graphs import graph_weights
from workbench.markov._kernels import alpha_normalize, gauss_kernel, gauss_kernel_sparse, squared_distances
from workbench.markov._operators import markov_operator
from workbench.markov._samplers import Circle, FlatTorus, Sphere

# ---------------------------------------------------------------------------------------------
# gauss_kernel_sparse


def test_sparse_kernel_with_radius_above_the_diameter_equals_the_dense_kernel(rng):
    # Oracle: the dense gauss_kernel; both compute exp(-β Σ (x_i - x_j)²) from coordinate differences,
    # so only the summation order may differ: rtol 1e-14.
    x = rng.standard_normal((60, 3))
    diameter = np.sqrt(squared_distances(x).max())
    sparse = gauss_kernel_sparse(x, 0.7, radius=1.01 * diameter)
    assert isinstance(sparse, scipy.sparse.csr_array) and sparse.has_sorted_indices
    assert sparse.nnz == 60 * 60
    np.testing.assert_allclose(sparse.toarray(), gauss_kernel(x, 0.7), rtol=1e-14, atol=0)


def _brute_force_knn_pattern(x, k):
    d2 = squared_distances(x)
    np.fill_diagonal(d2, np.inf)
    pattern = np.zeros(d2.shape, dtype=bool)
    rows = np.arange(len(x))[:, None]
    pattern[rows, np.argsort(d2, axis=1)[:, :k]] = True
    return pattern | pattern.T | np.eye(len(x), dtype=bool)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_sparse_knn_kernel_matches_brute_force_neighbours(rng, k):
    # Oracle: k nearest neighbours by argsort of the dense distance matrix, union-symmetrised, with the
    # dense kernel's values on that pattern; continuous random points have no distance ties. rtol 1e-14.
    x = rng.standard_normal((80, 2))
    pattern = _brute_force_knn_pattern(x, k)
    got = gauss_kernel_sparse(x, 1.3, k=k)
    np.testing.assert_array_equal(got.toarray() != 0, pattern)
    np.testing.assert_allclose(got.toarray(), np.where(pattern, gauss_kernel(x, 1.3), 0.0), rtol=1e-14, atol=0)
    assert (got != got.T).nnz == 0  # exactly symmetric
    np.testing.assert_array_equal(got.diagonal(), 1.0)


def test_sparse_radius_kernel_matches_brute_force_ball(rng):
    # Oracle: the pattern {‖x_i - x_j‖ <= r} from the dense distance matrix; values from the dense kernel.
    x = rng.uniform(size=(100, 2))
    r = 0.2
    pattern = squared_distances(x) <= r * r
    got = gauss_kernel_sparse(x, 5.0, radius=r)
    np.testing.assert_array_equal(got.toarray() != 0, pattern)
    np.testing.assert_allclose(got.toarray(), np.where(pattern, gauss_kernel(x, 5.0), 0.0), rtol=1e-14, atol=0)


def test_sparse_knn_kernel_with_duplicate_points_keeps_k_neighbours_per_row():
    # Oracle: counting. Each row keeps exactly k non-self neighbours before symmetrisation, so at least
    # k off-diagonal entries; a twin at distance 0 has kernel value exactly 1.
    x = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    got = gauss_kernel_sparse(x, 1.0, k=2)
    off_diagonal = np.diff(got.indptr) - 1
    assert off_diagonal.min() >= 2
    assert got[0, 1] == 1.0 and got[0, 2] == 1.0
    np.testing.assert_array_equal(got.diagonal(), 1.0)


def test_sparse_kernel_stores_underflowed_entries_so_the_pattern_is_the_graph(rng):
    # Oracle: the pattern does not depend on β even when exp(-β d²) underflows to 0.
    x = rng.standard_normal((30, 2))
    small, huge = gauss_kernel_sparse(x, 1e-3, k=4), gauss_kernel_sparse(x, 1e6, k=4)
    np.testing.assert_array_equal(small.indices, huge.indices)
    np.testing.assert_array_equal(small.indptr, huge.indptr)


def test_sparse_kernel_rejects_bad_input():
    x = np.zeros((5, 2))
    with pytest.raises(ValueError, match=r"exactly one of k and radius must be given, got k=None and radius=None"):
        gauss_kernel_sparse(x, 1.0)
    with pytest.raises(ValueError, match=r"exactly one of k and radius must be given, got k=2 and radius=1.0"):
        gauss_kernel_sparse(x, 1.0, k=2, radius=1.0)
    for k in (0, 5, 2.5, True):
        with pytest.raises(ValueError, match=r"k must be an integer in \[1, n - 1\] = \[1, 4\] for n = 5 points, got"):
            gauss_kernel_sparse(x, 1.0, k=k)
    with pytest.raises(ValueError, match=r"radius must be in \(0, inf\), got 0.0"):
        gauss_kernel_sparse(x, 1.0, radius=0.0)
    with pytest.raises(ValueError, match=r"beta must be in \(0, inf\), got -1.0"):
        gauss_kernel_sparse(x, -1.0, k=1)
    with pytest.raises(ValueError, match=r"points must be a 2-dimensional array, got shape \(5,\)"):
        gauss_kernel_sparse(np.zeros(5), 1.0, k=1)


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_sparse_kernel_rejects_torch_points():
    import torch

    with pytest.raises(
        TypeError, match=r"points must be a numpy array for a sparse kernel \(scipy.sparse is numpy only\)"
    ):
        gauss_kernel_sparse(torch.zeros(4, 2), 1.0, k=1)


# ---------------------------------------------------------------------------------------------
# alpha_normalize


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_alpha_normalize_matches_the_definition_entry_by_entry(rng, backend, alpha):
    # Oracle: K_ij / (q_i^α q_j^α) with q_i = Σ_j K_ij, by explicit loops; rounding only.
    k = rng.random((6, 6))
    q = k.sum(axis=1)
    expected = np.array([[k[i, j] / (q[i] ** alpha * q[j] ** alpha) for j in range(6)] for i in range(6)])
    got = to_numpy(alpha_normalize(to_backend(k, backend), alpha))
    np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_alpha_normalized_markov_operator_is_the_doob_transform(rng):
    # Oracle: the identity P^(α) = diag(K h)^{-1} K diag(h), h = q^{-α} (attention-geometry-math §A.2,
    # DERIVED), evaluated directly; rounding only.
    k = gauss_kernel(rng.standard_normal((20, 2)), 0.5)
    h = k.sum(axis=1) ** -0.7
    doob = k * h[None, :] / (k @ h)[:, None]
    np.testing.assert_allclose(markov_operator(alpha_normalize(k, 0.7)), doob, rtol=1e-13)


def test_alpha_normalize_batched_equals_loop(rng):
    stack = rng.random((3, 5, 5))
    np.testing.assert_allclose(
        alpha_normalize(stack, 0.5), np.stack([alpha_normalize(a, 0.5) for a in stack]), rtol=1e-15
    )


@pytest.mark.parametrize("kind", ["csr_array", "csr_matrix", "csc_array"])
def test_alpha_normalize_sparse_equals_dense(rng, kind):
    # Oracle: the dense path on the densified kernel; rounding only. Output stays CSR of the same flavour.
    x = rng.standard_normal((50, 2))
    sparse = gauss_kernel_sparse(x, 2.0, k=5)
    sparse = getattr(scipy.sparse, kind)(sparse)
    got = alpha_normalize(sparse, 0.5)
    expected_type = scipy.sparse.csr_matrix if kind == "csr_matrix" else scipy.sparse.csr_array
    assert type(got) is expected_type
    np.testing.assert_allclose(got.toarray(), alpha_normalize(sparse.toarray(), 0.5), rtol=1e-14)
    assert sparse.toarray()[0, 0] == 1.0  # the input is not modified


def test_alpha_normalize_rejects_bad_input():
    good = np.ones((3, 3))
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got 1.5"):
        alpha_normalize(good, 1.5)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got -0.1"):
        alpha_normalize(scipy.sparse.csr_array(good), -0.1)
    bad = good.copy()
    bad[1, 2] = -1.0
    with pytest.raises(ValueError, match=r"kernel must be entrywise nonnegative, got minimum -1 at index \(1, 2\)"):
        alpha_normalize(bad, 0.5)
    with pytest.raises(ValueError, match=r"kernel must be entrywise nonnegative, got minimum -1 at index \(1, 2\)"):
        alpha_normalize(scipy.sparse.csr_array(bad), 0.5)
    zero_row = good.copy()
    zero_row[2] = 0.0
    with pytest.raises(ValueError, match=r"kernel must have positive row sums .* got a row summing to 0"):
        alpha_normalize(zero_row, 0.5)
    with pytest.raises(ValueError, match=r"kernel must have positive row sums .* got row 2 summing to 0"):
        alpha_normalize(scipy.sparse.csr_array(zero_row), 0.5)
    with pytest.raises(ValueError, match=r"kernel must be a square matrix \(shape \[n, n\]\), got shape \(2, 3\)"):
        alpha_normalize(scipy.sparse.csr_array(np.ones((2, 3))), 0.5)
    nan = scipy.sparse.csr_array(np.array([[1.0, np.nan], [1.0, 1.0]]))
    with pytest.raises(
        ValueError, match=r"kernel must be finite, got 1 non-finite stored entries \(first at index \(0, 1\)\)"
    ):
        alpha_normalize(nan, 0.5)


# ---------------------------------------------------------------------------------------------
# bandwidth


def test_median_bandwidth_is_one_over_the_median_pairwise_squared_distance(rng, backend):
    # Oracle: the median over i < j of the dense squared-distance matrix; the same numbers, so exact.
    x = rng.standard_normal((41, 3))
    d2 = squared_distances(x)
    expected = 1.0 / np.median(d2[np.triu_indices(41, 1)])
    assert median_bandwidth(to_backend(x, backend)) == expected
    np.testing.assert_allclose(median_bandwidth(3.0 * x), expected / 9.0, rtol=1e-14)  # β scales as 1/c²


def test_median_bandwidth_subsample_is_seeded_and_close_to_the_closed_form():
    # Oracle: on the uniform unit circle |x - y|² = 2(1 - cos θ), θ ~ U[0, π], has median 2: β = 1/2.
    # A 500-point subsample (124750 dependent pairs) is within 1% (measured spread over seeds: 0.2%).
    x = Circle().sample(3000, seed=3)
    a = median_bandwidth(x, max_points=500, seed=1)
    assert a == median_bandwidth(x, max_points=500, seed=1)
    np.testing.assert_allclose(a, 0.5, rtol=1e-2)


def test_median_bandwidth_rejects_bad_input():
    with pytest.raises(ValueError, match=r"points must hold at least 2 points \(rows\), got shape \(1, 2\)"):
        median_bandwidth(np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"points must have a positive median pairwise squared distance .* got 0"):
        median_bandwidth(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"max_points must be an integer >= 2, got 1"):
        median_bandwidth(np.eye(3), max_points=1)


def test_bandwidth_sweep_sums_equal_dense_and_sparse_kernel_sums(rng):
    # Oracle: S(β) = Σ_ij K_ij from gauss_kernel (dense path) and from gauss_kernel_sparse (kNN path);
    # rtol 1e-12 (summation order).
    x = rng.standard_normal((120, 2))
    betas = [0.1, 1.0, 10.0, 100.0]
    dense = bandwidth_sweep(x, betas)
    sparse = bandwidth_sweep(x, betas, k=7)
    np.testing.assert_allclose(dense.sums, [gauss_kernel(x, b).sum() for b in betas], rtol=1e-12)
    np.testing.assert_allclose(sparse.sums, [gauss_kernel_sparse(x, b, k=7).sum() for b in betas], rtol=1e-12)
    assert isinstance(dense, BandwidthSweep)
    best = int(np.argmax(dense.slopes))
    assert dense.beta == dense.betas[best] and dense.dimension == 2 * dense.slopes[best]


def test_bandwidth_sweep_slopes_follow_the_circle_closed_form():
    # Oracle: on the uniform unit circle E S(β) = n + n(n-1) e^{-c} I_0(c), c = 2β (the Funk–Hecke mean
    # of exp(-β|x-y|²)); its log-log slope peaks at 0.6051 near c ≈ 1.7 (chords are shorter than arcs),
    # which is why the default grid stops at ε = median/10.  Monte-Carlo error of the slopes with
    # n = 1000 is ~1e-3 (measured 1.3e-3): tolerance 0.01.
    n = 1000
    x = Circle().sample(n, seed=4)
    c = np.logspace(np.log10(0.3), np.log10(300), 40)
    sweep = bandwidth_sweep(x, c / 2)
    expected = n + n * (n - 1) * ive(0, c)
    np.testing.assert_allclose(sweep.slopes, np.gradient(np.log(expected), -np.log(c / 2)), atol=0.01)
    np.testing.assert_allclose(sweep.dimension / 2, 0.6051, atol=0.01)


@pytest.mark.parametrize(
    ("sampler", "n", "k"),
    [
        (Circle(), 1000, None),
        (Sphere(2), 1000, None),
        (FlatTorus(2), 1000, None),
        (Circle(), 2000, 300),
        (Sphere(2), 2000, 300),
        (FlatTorus(2), 2000, 300),
    ],
    ids=["circle", "sphere", "torus", "circle-knn", "sphere-knn", "torus-knn"],
)
def test_bandwidth_sweep_estimates_the_intrinsic_dimension(sampler, n, k):
    # Oracle: the intrinsic dimension d of the sampled manifold.  The estimate 2·max slope is biased low by
    # the diagonal (factor (S - n)/S) and by kNN truncation, and high by the embedding's curvature; with
    # these sizes the measured values are 1.02 / 1.96 / 2.05 (dense) and 1.00 / 1.94 / 2.05 (k = 300):
    # tolerance ±0.15.
    sweep = bandwidth_sweep(sampler.sample(n, seed=21), k=k)
    assert abs(sweep.dimension - sampler.intrinsic_dimension) < 0.15, sweep.dimension
    assert np.all(np.diff(sweep.betas) > 0)
    if k is not None:  # kNN truncation makes S saturate at large scales: the peak is interior
        assert sweep.betas[0] < sweep.beta < sweep.betas[-1]
    else:  # the dense slope is still rising (curvature) at the grid's largest scale, ε = median/10
        assert sweep.beta == sweep.betas[0]


def test_bandwidth_sweep_rejects_bad_input():
    x = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match=r"betas must hold at least 3 values \(for a slope\), got 2"):
        bandwidth_sweep(x, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"betas must be positive, got minimum -1"):
        bandwidth_sweep(x, [1.0, 2.0, -1.0])
    with pytest.raises(ValueError, match=r"betas must be distinct, got 2 twice"):
        bandwidth_sweep(x, [1.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 9\], got 10"):
        bandwidth_sweep(x, k=10)
    with pytest.raises(ValueError, match=r"points must hold at least 2 points"):
        bandwidth_sweep(x[:1])


# ---------------------------------------------------------------------------------------------
# graph_weights


def test_graph_weights_of_an_undirected_graph_match_networkx_dense(rng):
    # Oracle: networkx.to_numpy_array, an independent dense conversion; exact.
    G = nx.gnm_random_graph(12, 40, seed=3)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.uniform(0.1, 2.0))
    W, nodes = graph_weights(G)
    assert isinstance(W, scipy.sparse.csr_array) and W.dtype == np.float64
    assert nodes == list(G)
    np.testing.assert_array_equal(W.toarray(), nx.to_numpy_array(G))
    assert (W != W.T).nnz == 0


def test_graph_weights_directed_self_loops_default_weights_and_custom_attribute():
    # Oracle: the matrix written by hand; exact.
    G = nx.DiGraph()
    G.add_edge("a", "b", w=2.0)
    G.add_edge("b", "a")  # no attribute: weight 1
    G.add_edge("b", "b", w=3.0)  # a self-loop is stored once on the diagonal
    W, nodes = graph_weights(G, weight="w")
    assert nodes == ["a", "b"]
    np.testing.assert_array_equal(W.toarray(), [[0.0, 2.0], [1.0, 3.0]])
    W, _ = graph_weights(G, weight=None)  # every edge weighs 1
    np.testing.assert_array_equal(W.toarray(), [[0.0, 1.0], [1.0, 1.0]])


def test_graph_weights_nodelist_permutes_and_multigraph_edges_add():
    # Oracle: permutation of the default-order matrix; parallel edges summed by hand; exact.
    G = nx.MultiGraph()
    G.add_edge(0, 1, weight=1.0)
    G.add_edge(0, 1, weight=2.5)
    G.add_edge(1, 2, weight=4.0)
    W, _ = graph_weights(G)
    np.testing.assert_array_equal(W.toarray(), [[0.0, 3.5, 0.0], [3.5, 0.0, 4.0], [0.0, 4.0, 0.0]])
    order = [2, 0, 1]
    Wp, nodes = graph_weights(G, nodelist=order)
    assert nodes == order
    np.testing.assert_array_equal(Wp.toarray(), W.toarray()[np.ix_(order, order)])


def test_graph_weights_give_a_row_stochastic_walk():
    # Oracle: the random walk D⁻¹W has unit row sums (markov_operator on the dense matrix); rounding only.
    W, _ = graph_weights(nx.petersen_graph())
    np.testing.assert_allclose(markov_operator(W.toarray()).sum(axis=1), 1.0, rtol=1e-15)


def test_graph_weights_warn_when_the_stationary_law_is_not_unique():
    with pytest.warns(
        UserWarning,
        match=r"graph is not connected \(2 connected components\): .* 2 closed classes, so the stationary law is not unique",
    ):
        graph_weights(nx.Graph([(0, 1), (2, 3)]))
    with pytest.warns(
        UserWarning,
        match=r"graph is not strongly connected .* one closed class and 1 transient vertex, so the stationary law is unique",
    ):
        graph_weights(nx.DiGraph([(0, 1), (1, 2), (2, 1)]))
    with pytest.warns(UserWarning, match=r"2 closed classes, so the stationary law is not unique"):
        graph_weights(nx.DiGraph([(0, 1), (0, 2), (1, 1), (2, 2)]))
    # a zero-weight edge is never taken by the walk, so it does not connect
    G = nx.Graph([(0, 1), (2, 3)])
    G.add_edge(1, 2, weight=0.0)
    with pytest.warns(UserWarning, match=r"stationary law is not unique"):
        graph_weights(G)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graph_weights(nx.cycle_graph(5, create_using=nx.DiGraph))  # strongly connected: silent


def test_graph_weights_reject_bad_input():
    with pytest.raises(TypeError, match=r"graph must be a networkx Graph or DiGraph, got ndarray"):
        graph_weights(np.eye(3))
    with pytest.raises(ValueError, match=r"graph must have at least one vertex, got an empty graph"):
        graph_weights(nx.Graph())
    G = nx.Graph()
    G.add_edge(0, 1, weight=1.0)
    G.add_edge(1, 2, weight=-2.0)
    with pytest.raises(ValueError, match=r"edge weights must be nonnegative, got weight=-2.0 on edge \(1, 2\)"):
        graph_weights(G)
    G[1][2]["weight"] = float("nan")
    with pytest.raises(ValueError, match=r"edge weights must be finite real numbers, got weight=nan on edge \(1, 2\)"):
        graph_weights(G)
    G[1][2]["weight"] = "heavy"
    with pytest.raises(
        ValueError, match=r"edge weights must be finite real numbers, got weight='heavy' on edge \(1, 2\)"
    ):
        graph_weights(G)
    with pytest.raises(ValueError, match=r"vertex 'c' with out-degree 0: a random walk cannot leave it"):
        graph_weights(nx.DiGraph([("a", "b"), ("b", "c")]))
    H = nx.path_graph(3)
    H.add_nodes_from([7, 8])
    with pytest.raises(ValueError, match=r"vertex 7 with out-degree 0 \(2 such vertices\)"):
        graph_weights(H)
    with pytest.raises(ValueError, match=r"nodelist must list vertices of graph, got 9, which is not a vertex"):
        graph_weights(nx.path_graph(3), nodelist=[0, 1, 9])
    with pytest.raises(ValueError, match=r"nodelist must not repeat a vertex, got 1 twice"):
        graph_weights(nx.path_graph(3), nodelist=[0, 1, 1])
