"""What researchers pass: scipy.sparse kernels where a kernel is meant, and one-line refusals of graphs and sparse
tensors where a dense array is meant.

Oracles: the dense functions on ``kernel.toarray()`` (the sparse paths sum the same products in another order, so
agreement is to a few ulps of the result, not to the last bit).
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse

from workbench.markov import (
    bakry_emery_curvature,
    dirichlet_form,
    graph_weights,
    markov_operator,
    reversible_stationary_law,
)

torch = pytest.importorskip("torch")


def _kernel(rng, n=60, density=0.08):
    k = scipy.sparse.random_array((n, n), density=density, random_state=rng)
    return scipy.sparse.csr_array(k + k.T + scipy.sparse.eye_array(n))  # symmetric, every row positive


def test_markov_operator_of_a_sparse_kernel_is_the_dense_one_and_keeps_the_sparsity(rng):
    kernel = _kernel(rng)
    p = markov_operator(kernel)
    assert isinstance(p, scipy.sparse.csr_array) and p.dtype == np.float64
    assert p.nnz == kernel.nnz
    np.testing.assert_allclose(p.toarray(), markov_operator(kernel.toarray()), rtol=1e-14, atol=0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-14)


def test_dirichlet_form_of_a_sparse_kernel_is_the_dense_one(rng):
    kernel = _kernel(rng)
    f, g = rng.standard_normal(60), rng.standard_normal(60)
    for args in ((f,), (f, g)):
        dense = float(dirichlet_form(kernel.toarray(), *args))
        assert dirichlet_form(kernel, *args) == pytest.approx(dense, rel=1e-12)


def test_sparse_kernels_are_checked_as_dense_ones_are():
    negative = scipy.sparse.csr_array(np.array([[1.0, -0.5], [0.5, 1.0]]))
    with pytest.raises(
        ValueError, match=r"^kernel must be entrywise nonnegative, got minimum -0\.5 at index \(0, 1\)$"
    ):
        markov_operator(negative)
    empty_row = scipy.sparse.csr_array(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"^kernel must have positive row sums .* got a row summing to 0$"):
        markov_operator(empty_row)
    with pytest.raises(
        ValueError, match=r"^kernel must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)$"
    ):
        markov_operator(scipy.sparse.csr_array(np.ones((2, 3))))
    with pytest.raises(TypeError, match=r"^f must be a numpy array with a scipy sparse kernel, got a torch tensor$"):
        dirichlet_form(scipy.sparse.eye_array(3), torch.ones(3))
    with pytest.raises(ValueError, match=r"^kernel rows and f must have matching sizes, got 3 and 4$"):
        dirichlet_form(scipy.sparse.eye_array(3), np.ones(4))


def test_a_networkx_graph_where_an_array_is_meant_names_the_converters():
    graph = nx.cycle_graph(6)
    with pytest.raises(TypeError) as caught:
        bakry_emery_curvature(graph)
    assert str(caught.value) == (
        "rates must be an array, got a networkx Graph; convert it with W, nodes = workbench.markov.graph_weights(graph) "
        "(a sparse weight matrix and its vertex order) or MarkovOperator.from_networkx(graph)"
    )
    # The converter it names gives what the function takes: the 6-cycle has curvature 0 at every vertex.
    weights, _ = graph_weights(graph)
    np.testing.assert_allclose(bakry_emery_curvature(weights), 0.0, atol=1e-9)


def test_a_sparse_torch_tensor_or_scipy_matrix_where_a_dense_array_is_meant_is_one_line():
    with pytest.raises(
        TypeError, match=r"^rates must be a dense torch tensor here, got layout torch\.sparse_coo; pass"
    ):
        bakry_emery_curvature(torch.eye(4, dtype=torch.float64).to_sparse())
    with pytest.raises(TypeError, match=r"^kernel must be a dense array here, got a scipy sparse csr_array; pass"):
        reversible_stationary_law(scipy.sparse.csr_array(np.eye(4)))  # dense only (its docstring says array)
