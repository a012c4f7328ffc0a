"""Edges of the markov layer that used to give a wrong answer or an unhelpful crash (issue: reliability).

Each test names its reproducer.  Oracles: closed-form limits and exact values; messages are pinned.
"""

import numpy as np
import pytest
from conftest import HAS_TORCH

from workbench.backend import to_backend, to_numpy
from workbench.markov import bakry_emery_curvature, gauss_kernel, softmax_operator
from workbench.memory import check_memory

BACKENDS = ["numpy", "torch:cpu"] if HAS_TORCH else ["numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_at_a_huge_inverse_temperature_is_the_argmax_not_nan(backend):
    # Reproducer: softmax_operator([[1, -1], [.5, 2]], beta=1e308) gave a row of NaN (β·S overflowed to ±inf).
    # Oracle: the β → ∞ limit puts all mass on each row's maximum (exact zeros and ones).
    P = to_numpy(softmax_operator(to_backend(np.array([[1.0, -1.0], [0.5, 2.0]]), backend), beta=1e308))
    assert P.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_softmax_with_a_spread_beyond_the_float_range_stays_finite():
    # Scores 1e308 apart: the shifted score −2e308 overflows to −inf, whose weight is exactly 0 (the limit).
    P = softmax_operator(np.array([[1e308, -1e308], [0.5, 2.0]]), beta=2.0)
    assert P[0].tolist() == [1.0, 0.0]
    # Second row: the ordinary softmax (oracle: the two-term closed form 1/(1 + e^{∓3}), to a few roundings).
    np.testing.assert_allclose(P[1], [1 / (1 + np.exp(3.0)), 1 / (1 + np.exp(-3.0))], rtol=1e-15)


def test_softmax_of_ordinary_scores_is_unchanged_by_the_overflow_path():
    # The overflow fallback runs only when β·S is not finite; ordinary inputs keep the previous operations
    # (oracle: the formula written out, same order of operations, so equal to the last bit on this machine).
    rng = np.random.default_rng(0)
    S = rng.standard_normal((5, 7))
    z = 3.0 * S
    z = z - z.max(axis=-1, keepdims=True)
    expected = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(softmax_operator(S, beta=3.0), expected)


def test_a_dense_kernel_larger_than_memory_is_refused_before_allocating():
    # Reproducer: gauss_kernel(np.zeros((10**6, 2)), 1.) raised MemoryError after trying to allocate 7 TiB.
    with pytest.raises(
        ValueError, match=r"dense pairwise distances of points \(n = 1000000\) needs about .* GiB, more"
    ):
        gauss_kernel(np.zeros((10**6, 2)), 1.0)
    with pytest.raises(ValueError, match=r"needs about 0.0075 GiB, more than the budget of 0.000977 GiB; fewer"):
        check_memory("a batch", 8e6, "fewer", budget=2**20)
    check_memory("a batch", 8e6, budget=2**30)  # within budget: no error


def test_curvature_of_an_empty_graph_is_a_clear_error():
    # Reproducer: bakry_emery_curvature(np.zeros((0, 0))) raised IndexError.
    with pytest.raises(ValueError, match=r"rates must have at least one vertex, got shape \(0, 0\)"):
        bakry_emery_curvature(np.zeros((0, 0)))


def test_ollivier_ricci_of_a_networkx_graph_with_int64_indices():
    # Reproducer: nx.to_scipy_sparse_array gives int64 CSR indices, which csgraph.dijkstra refused before
    # scipy 1.15 ("Buffer dtype mismatch") — ollivier_ricci crashed on the scipy floor (1.12).
    # Oracle: W1 between the uniform laws on the two neighbourhoods by a linear program (scipy.optimize.linprog)
    # on networkx's shortest-path distances; tolerance 1e-9: both are exact LP optima up to simplex rounding.
    nx = pytest.importorskip("networkx")
    pytest.importorskip("ot")
    import scipy.optimize

    from workbench.markov import ollivier_ricci

    graph = nx.petersen_graph()
    A = nx.to_scipy_sparse_array(graph, weight=None, format="csr")
    A.indices, A.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    edges, kappa = ollivier_ricci(A)
    distance = dict(nx.all_pairs_shortest_path_length(graph))
    for (x, y), value in zip(edges[:3], kappa[:3], strict=True):
        nx_, ny_ = sorted(graph[x]), sorted(graph[y])
        cost = np.array([[distance[u][v] for v in ny_] for u in nx_], dtype=float)
        a_eq = np.vstack([np.kron(np.eye(3), np.ones(3)), np.kron(np.ones(3), np.eye(3))])
        plan = scipy.optimize.linprog(cost.ravel(), A_eq=a_eq, b_eq=np.full(6, 1 / 3), bounds=(0, None))
        assert value == pytest.approx(1.0 - plan.fun, abs=1e-9)
