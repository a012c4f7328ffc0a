import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
from conftest import HAS_TORCH
from expmv_matrices import markov, nonnormal, symmetric

from workbench.backend import to_backend, to_numpy
from workbench.expmv import AccuracyWarning, expmv


@pytest.mark.parametrize(
    ("build", "expected"),
    [(markov, "uniformization"), (symmetric, "chebyshev"), (nonnormal, "taylor")],
    ids=["markov", "symmetric", "general"],
)
def test_auto_chooses_from_the_structure_and_matches_dense_expm(rng, backend, build, expected):
    # Oracle: dense scipy.linalg.expm (Padé); tolerance 1e-12 relative (‖tA‖₁ ≈ 10, rounding only).
    a = build(rng, 40)
    b = rng.standard_normal((40, 3))
    y, info = expmv(to_backend(a, backend), to_backend(b, backend), 0.7, return_info=True)
    assert info["method"] == expected and info["reason"] and info["matvecs"] > 0
    exact = scipy.linalg.expm(0.7 * a) @ b
    np.testing.assert_allclose(to_numpy(y), exact, rtol=1e-12, atol=1e-12 * np.abs(exact).max())


def test_a_markov_generator_at_negative_time_is_not_sent_to_uniformization(rng):
    y, info = expmv(markov(rng, 10), np.ones(10), -0.3, return_info=True)
    assert info["method"] != "uniformization"
    np.testing.assert_allclose(y, 1.0, rtol=1e-13)  # e^{tQ}1 = 1 for every t: Q1 = 0


def test_a_time_grid_walks_forward_and_matches_separate_calls(rng):
    # Oracle: one call per time; the grid reuses each result as the next start.
    a, b = symmetric(rng, 30), rng.standard_normal((30, 2))
    grid = np.array([0.0, 0.25, 1.0, 3.0])
    stacked, info = expmv(a, b, grid, return_info=True)
    assert stacked.shape == (4, 30, 2) and len(info["per_time"]) == 4
    for k, t in enumerate(grid):
        np.testing.assert_allclose(stacked[k], scipy.linalg.expm(t * a) @ b, rtol=1e-11, atol=1e-12)


def test_vectors_sparse_and_linear_operators_are_accepted(rng):
    a = markov(rng, 25)
    v = rng.random(25)
    exact = scipy.linalg.expm(2.0 * a) @ v
    for operator in (a, scipy.sparse.csr_array(a), scipy.sparse.linalg.aslinearoperator(a)):
        y = expmv(operator, v, 2.0)
        assert y.shape == (25,)
        np.testing.assert_allclose(y, exact, rtol=1e-12)


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")
def test_torch_sparse_csr_and_float32(rng):
    import torch

    a = symmetric(rng, 30)
    b = rng.standard_normal((30, 2))
    exact = scipy.linalg.expm(0.5 * a) @ b
    y = expmv(torch.tensor(a).to_sparse_csr(), torch.tensor(b), 0.5)
    np.testing.assert_allclose(to_numpy(y), exact, rtol=1e-11, atol=1e-12)
    # float32: default tolerance 2⁻²⁴ ≈ 6e-8; allow 1e-5 relative for rounding in ~20 products.
    y32 = expmv(torch.tensor(a, dtype=torch.float32), torch.tensor(b, dtype=torch.float32), 0.5)
    assert y32.dtype == torch.float32
    np.testing.assert_allclose(to_numpy(y32), exact, rtol=1e-5, atol=1e-5 * np.abs(exact).max())


def test_bad_input_is_refused_with_named_messages(rng):
    a = symmetric(rng, 4)
    with pytest.raises(ValueError, match=r"A must be a square matrix \(shape \[n, n\]\), got shape \(4, 3\)"):
        expmv(np.ones((4, 3)), np.ones(4))
    with pytest.raises(ValueError, match="A and B rows must have matching sizes, got 4 and 5"):
        expmv(a, np.ones(5))
    with pytest.raises(ValueError, match=r"A must be finite, got 1 non-finite entry \(first at index \(0, 0\)\)"):
        expmv(np.diag([np.nan, 1.0, 1.0, 1.0]), np.ones(4))
    with pytest.raises(ValueError, match="B must be finite"):
        expmv(a, np.array([1.0, np.inf, 0.0, 0.0]))
    with pytest.raises(
        ValueError,
        match="method must be one of 'auto', 'taylor', 'krylov', 'chebyshev', 'uniformization', 'kronecker', got 'pade'",
    ):
        expmv(a, np.ones(4), method="pade")
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\), got 2"):
        expmv(a, np.ones(4), tol=2)
    with pytest.raises(ValueError, match="t must be a finite real number or a non-empty 1-D grid"):
        expmv(a, np.ones(4), t=np.nan)
    with pytest.raises(ValueError, match="Markov generator"):
        expmv(a, np.ones(4), method="uniformization")
    with pytest.raises(ValueError, match=r"a grid of times must be nondecreasing .* got \[5.0, 1.0\]"):
        expmv(a, np.ones(4), t=[5.0, 1.0])
    with pytest.raises(ValueError, match="B must be a vector or a block of columns"):
        expmv(a, np.ones((4, 2, 2)))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_mixing_libraries_is_a_type_error(rng):
    import torch

    a = symmetric(rng, 4)
    with pytest.raises(TypeError, match="inputs mix array libraries"):
        expmv(a, torch.ones(4, dtype=torch.float64))
    with pytest.raises(TypeError, match="a scipy operator A acts on numpy arrays"):
        expmv(scipy.sparse.csr_array(a), torch.ones(4, dtype=torch.float64))


def test_accuracy_warning_is_a_user_warning():
    # RuntimeWarnings are errors in this suite; accuracy problems are reported as UserWarnings.
    assert issubclass(AccuracyWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expmv(np.zeros((3, 3)), np.ones(3), 1.0)


def test_a_kronecker_sum_is_exponentiated_on_its_factors(rng):
    # Oracle: dense expm of A ⊗ I + I ⊗ B (scipy.sparse.kron); the factor route is exact up to rounding.
    from workbench.expmv._kronecker import KroneckerSum

    a, b = symmetric(rng, 6), markov(rng, 5)
    v = rng.standard_normal((30, 2))
    y, info = expmv(KroneckerSum(a, b), v, 0.8, return_info=True)
    assert info["method"] == "kronecker"
    dense = np.kron(a, np.eye(5)) + np.kron(np.eye(6), b)
    np.testing.assert_allclose(y, scipy.linalg.expm(0.8 * dense) @ v, rtol=1e-12, atol=1e-13)


def test_the_sums_test_never_calls_a_symmetric_sparse_matrix_asymmetric():
    # is_symmetric first compares row and column sums (no A − Aᵀ formed); the two sums of an exactly symmetric
    # matrix are the same numbers added in another order, so their rounding is allowed for.  Oracle: the
    # construction (X + Xᵀ is exactly symmetric), and a one-entry change of 1e-9 relative that must be seen.
    import scipy.sparse

    from workbench.expmv._linear import as_linear_map

    rng = np.random.default_rng(5)
    x = scipy.sparse.random_array((300, 300), density=0.3, rng=rng, format="csr")
    x.data *= 10.0 ** rng.uniform(-8, 8, x.nnz)  # magnitudes over 16 decades: sums that round differently
    symmetric = (x + x.T).tocsr()
    for rtol in (0.0, 1e-15, 1e-12):
        assert as_linear_map(symmetric).is_symmetric(rtol)
        assert not as_linear_map(symmetric).surely_asymmetric(rtol)
    broken = symmetric.tolil()
    i, j = map(int, np.argwhere(symmetric.toarray() == abs(symmetric).max())[0])
    broken[i, j] *= 1 + 1e-9
    assert not as_linear_map(broken.tocsr()).is_symmetric(1e-12)
