"""Fuzz suite, ``workbench.expmv``: every public callable, one bad argument at a time (harness: ``fuzz.py``).

Complex and float32 operands are valid for ``expmv`` and its methods (the result then has the promoted
dtype), so for them the contract is a finite result; NaN/inf entries, wrong shapes, strings and mixed
numpy/torch inputs must be refused with a message that names the parameter.
"""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
import torch
from fuzz import Case, public_callables, run

from workbench import expmv

#: A 4-state Markov generator (rows sum to 0, rates ≥ 0): uniformization's operator.
_Q = np.array(
    [
        [-1.0, 0.5, 0.5, 0.0],
        [0.2, -0.7, 0.0, 0.5],
        [0.0, 0.3, -0.4, 0.1],
        [0.6, 0.0, 0.4, -1.0],
    ]
)
#: The path Laplacian on 4 vertices, negated: symmetric (Chebyshev, Lanczos) with spectrum in [-4, 0].
_L = -(np.diag([1.0, 2.0, 2.0, 1.0]) - np.eye(4, k=1) - np.eye(4, k=-1))
#: A general (non-symmetric, non-generator) matrix: Taylor's and Arnoldi's case.
_G = np.array([[0.5, 1.0, 0.0, 0.0], [0.0, -0.3, 2.0, 0.0], [0.1, 0.0, 0.2, 1.0], [0.0, -1.0, 0.0, 0.4]])
_B = np.array([[1.0, 0.0], [0.5, 1.0], [0.0, -1.0], [2.0, 0.25]])
_V6 = np.arange(6.0) / 6.0


def _block():
    return _B.copy()


def _kron():
    return expmv.KroneckerSum(_L[:2, :2].copy(), _L[:3, :3].copy())


def _path_diagonals():
    return np.stack([-np.ones(5), np.array([1.0, 2.0, 2.0, 2.0, 1.0]), -np.ones(5)])


def _banded_path():
    return expmv.BandedMatrix([-1, 0, 1], -_path_diagonals())


CASES = [
    # The front door: one case per route of method="auto", one per explicit method, a grid of times, torch.
    Case("workbench.expmv.expmv", lambda: ((_Q.copy(), np.ones(4), 0.5), {"method": "auto", "tol": 1e-10})),
    Case("workbench.expmv.expmv", lambda: ((_L.copy(), _block(), 0.7), {"tol": 1e-12})),
    Case("workbench.expmv.expmv", lambda: ((_G.copy(), _block(), 0.3), {"method": "taylor"})),
    Case("workbench.expmv.expmv", lambda: ((_G.copy(), np.ones(4), 0.3), {"method": "krylov"})),
    Case(
        "workbench.expmv.expmv",
        lambda: ((scipy.sparse.csr_array(_Q), np.ones(4), np.array([0.0, 0.25, 0.5])), {"method": "uniformization"}),
    ),
    Case("workbench.expmv.expmv", lambda: ((_kron(), _V6.copy(), 0.4), {})),
    Case("workbench.expmv.expmv", lambda: ((torch.as_tensor(_G), torch.as_tensor(_B), 0.3), {})),
    Case("workbench.expmv.expmv", lambda: ((scipy.sparse.linalg.aslinearoperator(_G), _block(), 0.3), {})),
    Case("workbench.expmv.expmv", lambda: ((_banded_path(), np.ones(5), 0.7), {})),
    # The methods, called directly (op: anything as_linear_map accepts).
    Case(
        "workbench.expmv.expmv_taylor",
        lambda: (
            (expmv.as_linear_map(_G.copy()), _block(), 0.3),
            {"tol": 1e-12, "m_max": 55, "p_max": 8, "power_norms": "auto", "error": "backward"},
        ),
    ),
    Case("workbench.expmv.expmv_taylor", lambda: ((_G.copy(), _block(), 0.3), {"power_norms": "exact"})),
    Case(
        "workbench.expmv.expmv_krylov",
        lambda: ((expmv.as_linear_map(_G.copy()), _block(), 0.3), {"tol": 1e-12, "m": 3, "max_steps": 100}),
    ),
    Case("workbench.expmv.expmv_krylov", lambda: ((_L.copy(), _block(), 0.3), {"max_rejections": 5})),
    Case("workbench.expmv.expmv_chebyshev", lambda: ((_L.copy(), _block(), 0.7), {"tol": 1e-12})),
    Case("workbench.expmv.expmv_chebyshev", lambda: ((_L.copy(), np.ones(4), 0.7), {"interval": (-4.0, 0.0)})),
    Case("workbench.expmv.expmv_uniformization", lambda: ((_Q.copy(), _block(), 0.5), {"tol": 1e-12})),
    Case(
        "workbench.expmv.expmv_uniformization",
        lambda: ((scipy.sparse.csr_array(_Q), np.ones(4), 0.5), {"max_matvecs": 1000}),
    ),
    Case("workbench.expmv.expmv_kronecker", lambda: ((_kron(), _V6.copy(), 0.4), {"tol": 1e-12, "dense_limit": 8})),
    Case("workbench.expmv.expmv_kronecker", lambda: ((_kron(), _V6.copy(), 0.4), {"dense_limit": 0})),
    Case(
        "workbench.expmv.expmv_kronecker_sum",
        lambda: ((_L[:2, :2].copy(), _L[:3, :3].copy(), _V6.copy(), 0.4), {"dense_limit": 8, "tol": 1e-12}),
    ),
    # Operators and their wrappers.
    Case(
        "workbench.expmv.as_linear_map",
        lambda: ((_G.copy(),), {"name": "A"}),
        # Refusals name the operator by ``name`` (default "A"), the word the caller knows it by.
        aliases={"a": ("A",)},
    ),
    Case("workbench.expmv.as_linear_map", lambda: ((scipy.sparse.csr_array(_Q),), {}), aliases={"a": ("A",)}),
    Case("workbench.expmv.LinearMap", lambda: ((_G.copy(), "dense"), {})),
    Case("workbench.expmv.KroneckerSum", lambda: ((_L[:2, :2].copy(), _L[:3, :3].copy()), {})),
    Case("workbench.expmv.BandedMatrix", lambda: (([-1, 0, 1], _path_diagonals()), {})),
    Case("workbench.expmv.BandedMatrix", lambda: (([-1, 0, 1], torch.as_tensor(_path_diagonals())), {})),
    Case("workbench.expmv.banded_markov_generator", lambda: ((6, 2), {"seed": 0})),
    # Constants of the methods.
    Case("workbench.expmv.taylor_theta", lambda: ((1e-8,), {"m_max": 30})),
    Case("workbench.expmv.chebyshev_exp_coefficients", lambda: ((0.7, (-4.0, 0.0)), {"tol": 1e-12})),
    Case(
        "workbench.expmv.ChebyshevExpansion",
        lambda: ((np.array([1.0, 0.5, 0.125]), 0.0, 1e-17, -2.0, 2.0), {}),
    ),
    Case("workbench.expmv.poisson_truncation", lambda: ((3.5,), {"tol": 1e-12})),
    # Closed forms.
    Case("workbench.expmv.phi1", lambda: ((np.array([-2.0, 0.0, 1e-20, 1.5]),), {})),
    Case("workbench.expmv.phi1", lambda: ((torch.tensor([-2.0, 0.0, 1.5], dtype=torch.float64),), {})),
    Case("workbench.expmv.expm_rank1", lambda: ((np.array([1.0, 2.0, 0.5]), np.array([0.5, -0.1, 0.2]), 0.7), {})),
    Case(
        "workbench.expmv.expmv_rank1",
        lambda: ((np.array([1.0, 2.0, 0.5]), np.array([0.5, -0.1, 0.2]), np.ones((3, 2)), 0.7), {}),
    ),
]

#: Public callables without a case, each with the reason.
EXEMPT: dict[str, str] = {}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.expmv") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- the refusals the fuzz suite found, pinned one by one ------------------------------------------------


def test_mixed_libraries_name_the_parameters():
    with pytest.raises(TypeError, match=r"numpy from B \(ndarray\) and torch from A \(Tensor\)"):
        expmv.expmv(torch.as_tensor(_G), _block())
    with pytest.raises(TypeError, match=r"numpy from op \(ndarray\) and torch from B \(Tensor\)"):
        expmv.expmv_taylor(_G.copy(), torch.as_tensor(_B), 0.3)
    with pytest.raises(TypeError, match=r"numpy from v \(ndarray\) and torch from u \(Tensor\)"):
        expmv.expm_rank1(torch.ones(3, dtype=torch.float64), np.ones(3))
    with pytest.raises(TypeError, match=r"A and B must live in one array library, got A in numpy and B in torch"):
        expmv.KroneckerSum(_L[:2, :2], torch.as_tensor(_L[:3, :3]))
    with pytest.raises(TypeError, match=r"the structured operator A acts on numpy arrays; got B as Tensor"):
        expmv.expmv(_banded_path(), torch.ones(5, dtype=torch.float64))


def test_method_functions_validate_op_and_B():
    with pytest.raises(TypeError, match=r"op must be a numpy array or a torch tensor, got builtins.str"):
        expmv.expmv_krylov("x", _block(), 0.3)
    with pytest.raises(ValueError, match=r"op columns and B rows must have matching sizes, got 4 and 3"):
        expmv.expmv_taylor(_G.copy(), _B[:3], 0.3)
    with pytest.raises(ValueError, match=r"B must have shape \[n\] or \[n, k\], got shape \(\)"):
        expmv.expmv_krylov(_G.copy(), np.array(1.0), 0.3)
    with pytest.raises(ValueError, match=r"op must be symmetric: expmv_chebyshev needs a symmetric A"):
        expmv.expmv_chebyshev(_G.copy(), _block(), 0.3)
    with pytest.raises(TypeError, match=r"op must be a KroneckerSum: expmv_kronecker needs a KroneckerSum operator"):
        expmv.expmv_kronecker("x", _V6, 0.3)


def test_method_functions_keep_the_shape_of_B():
    # Oracle: scipy.linalg.expm of the dense 4×4 matrix.  Tolerance 1e-12 relative: tol=1e-14 requested of
    # each method, plus rounding of order u·‖tA‖ on a 4×4 problem.
    exact = scipy.linalg.expm(0.3 * _G) @ np.ones(4)
    for method in (expmv.expmv_taylor, expmv.expmv_krylov):
        y, _ = method(_G.copy(), np.ones(4), 0.3, tol=1e-14)
        assert y.shape == (4,)
        np.testing.assert_allclose(y, exact, rtol=1e-12, atol=0)


def test_times_must_be_real_numbers():
    with pytest.raises(TypeError, match=r"t must be a real number or a 1-D grid of real numbers, got 1j"):
        expmv.expmv(_Q.copy(), np.ones(4), 1j)
    with pytest.raises(TypeError, match=r"t must be a real number .* got '0.5' \(dtype <U3\)"):
        expmv.expmv(_Q.copy(), np.ones(4), "0.5")


def test_kronecker_factor_overflow_names_t():
    with pytest.raises(ValueError, match=r"t·F overflows float64 for a Kronecker factor F of order 2 \(t = 1e\+308"):
        expmv.expmv_kronecker_sum(_L[:2, :2], _L[:3, :3], _V6, 1e308)


def test_constructors_validate():
    with pytest.raises(ValueError, match=r"kind must be one of 'dense', .*got 'banded'"):
        expmv.LinearMap(_G, "banded")
    with pytest.raises(ValueError, match=r"a must be a square operator \(shape \[n, n\]\), got shape \(\)"):
        expmv.LinearMap(np.array(1.0), "dense")
    with pytest.raises(ValueError, match=r"tail_bound must be in \[0, inf\), got nan"):
        expmv.ChebyshevExpansion(np.ones(2), 0.0, float("nan"), 0.0, 1.0)
    with pytest.raises(ValueError, match=r"coefficients must be finite"):
        expmv.ChebyshevExpansion(np.array([1.0, np.inf]), 0.0, 0.0, 0.0, 1.0)
    with pytest.raises(
        ValueError, match=r"seed must be None, a nonnegative integer or a numpy.random.Generator, got -1"
    ):
        expmv.banded_markov_generator(6, 2, seed=-1)
    with pytest.raises(ValueError, match=r"banded_markov_generator with n = 1000000000000 .* needs about"):
        expmv.banded_markov_generator(10**12, 2)
    with pytest.raises(TypeError, match=r"name must be a string .*got int"):
        expmv.as_linear_map(_G, name=3)


# ---- methods of the public classes --------------------------------------------------------------------


def _banded_torch():
    return expmv.BandedMatrix([-1, 0, 1], torch.as_tensor(-_path_diagonals()))


METHOD_CASES = [
    # Products: numpy (scipy's DIA kernel) and torch (shifted slices) for banded, the vec identity for
    # Kronecker sums, and LinearMap's public door on dense, sparse and structured operators.
    Case("workbench.expmv.BandedMatrix.matmat", lambda: ((_banded_path(), np.ones((5, 2))), {})),
    Case(
        "workbench.expmv.BandedMatrix.matmat",
        lambda: ((_banded_torch(), torch.ones(5, 2, dtype=torch.float64)), {}),
    ),
    Case("workbench.expmv.BandedMatrix.from_scipy", lambda: ((scipy.sparse.csr_array(_Q),), {})),
    Case("workbench.expmv.BandedMatrix.is_symmetric", lambda: ((_banded_path(),), {"rtol": 1e-12})),
    Case("workbench.expmv.BandedMatrix.is_markov_generator", lambda: ((_banded_path(),), {"atol": 1e-10})),
    Case("workbench.expmv.KroneckerSum.matmat", lambda: ((_kron(), np.ones((6, 2))), {})),
    Case("workbench.expmv.KroneckerSum.matmat", lambda: ((_kron(), _V6.copy()), {})),
    Case("workbench.expmv.KroneckerSum.is_symmetric", lambda: ((_kron(),), {"rtol": 1e-12})),
    Case("workbench.expmv.KroneckerSum.is_markov_generator", lambda: ((_kron(),), {"atol": 1e-10})),
    Case("workbench.expmv.LinearMap.matmat", lambda: ((expmv.as_linear_map(_G.copy()), _block()), {})),
    Case(
        "workbench.expmv.LinearMap.matmat",
        lambda: ((expmv.as_linear_map(scipy.sparse.csr_array(_Q)), np.ones(4)), {}),
    ),
    Case(
        "workbench.expmv.LinearMap.matmat",
        lambda: ((expmv.as_linear_map(torch.as_tensor(_G)), torch.as_tensor(_B)), {}),
    ),
    Case("workbench.expmv.LinearMap.matmat", lambda: ((expmv.as_linear_map(_banded_path()), np.ones((5, 2))), {})),
    Case("workbench.expmv.LinearMap.astype", lambda: ((expmv.as_linear_map(_G.copy()), "float32"), {})),
    Case("workbench.expmv.LinearMap.astype", lambda: ((expmv.as_linear_map(torch.as_tensor(_G)), "complex128"), {})),
    Case("workbench.expmv.LinearMap.is_symmetric", lambda: ((expmv.as_linear_map(_L.copy()),), {"rtol": 1e-12})),
    Case("workbench.expmv.LinearMap.surely_asymmetric", lambda: ((expmv.as_linear_map(_L.copy()),), {"rtol": 1e-12})),
    Case(
        "workbench.expmv.LinearMap.is_markov_generator",
        lambda: ((expmv.as_linear_map(scipy.sparse.csr_array(_Q)),), {"atol": 1e-10}),
    ),
    Case(
        "workbench.expmv.LinearMap.is_markov_generator",
        lambda: ((expmv.as_linear_map(_banded_path()),), {"atol": 1e-10}),
    ),
    Case("workbench.expmv.LinearMap.dense", lambda: ((expmv.as_linear_map(_G.copy()), _block()), {})),
]

_ENGINE = "engine internal: called only by the expmv methods, on operands as_block has already validated"

#: Public methods without a case, each with the reason.
EXEMPT_METHODS = {
    "workbench.expmv.LinearMap.check_operand": _ENGINE + " (op_name and b_name are literals of the caller)",
    "workbench.expmv.LinearMap.host_matrix": _ENGINE + " (its one argument is the flag strict)",
}


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    covered = {case.function for case in METHOD_CASES} | set(EXEMPT_METHODS)
    assert public_methods("workbench.expmv") - covered == set()


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    run(case)


def test_method_refusals_name_the_parameter():
    # The refusals the method fuzz cases found, pinned (each was an IndexError, a NaN or a foreign message).
    with pytest.raises(ValueError, match=r"x must have shape \[n\] or \[n, k\], got shape \(\)"):
        _banded_path().matmat(np.array(1.0))
    with pytest.raises(ValueError, match=r"x must be finite, got 1 non-finite entry \(first at index \(2, 0\)\)"):
        _banded_path().matmat(np.array([[1.0], [1.0], [np.nan], [1.0], [1.0]]))
    with pytest.raises(TypeError, match=r"x must be a numeric array"):
        expmv.as_linear_map(_G).matmat(np.full((4, 2), "a", dtype=object))
    with pytest.raises(TypeError, match=r"numpy from A \(ndarray\) and torch from x \(Tensor\)"):
        expmv.as_linear_map(_G).matmat(torch.as_tensor(_B))
    with pytest.raises(ValueError, match=r"A ⊕ B columns and v rows must have matching sizes, got 6 and 5"):
        _kron().matmat(np.ones(5))
    with pytest.raises(TypeError, match=r"the structured operator A ⊕ B acts on numpy arrays; got v as Tensor"):
        _kron().matmat(torch.ones(6, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"matrix must be finite, got 1 non-finite entry"):
        expmv.BandedMatrix.from_scipy(scipy.sparse.csr_array(np.array([[np.nan, 1.0], [0.0, 1.0]])))
    with pytest.raises(TypeError, match=r"rtol must be a real number, got str"):
        _banded_path().is_symmetric("1e-12")
    with pytest.raises(ValueError, match=r"atol must be in \[0, inf\), got nan"):
        _kron().is_markov_generator(float("nan"))
    with pytest.raises(TypeError, match=r"dtype must be a floating or complex dtype .*got 'no-such-choice'"):
        expmv.as_linear_map(_G).astype("no-such-choice")
    with pytest.raises(TypeError, match=r"dtype must be a floating or complex dtype .*got <class 'int'>"):
        expmv.as_linear_map(_G).astype(int)


def test_public_products_agree_with_dense():
    # Oracle: the dense matrices (numpy @).  Tolerance 1e-14: sums of at most three products of numbers of
    # size <= 2, so the only error is rounding in the last place.
    dense_path = _banded_path().to_scipy().toarray()
    x = np.arange(10.0).reshape(5, 2)
    np.testing.assert_allclose(_banded_path().matmat(x.astype(np.int64)), dense_path @ x, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(expmv.as_linear_map(_G).matmat(np.ones(4)), _G @ np.ones(4), rtol=1e-14, atol=1e-14)
    dense_kron = np.kron(_L[:2, :2], np.eye(3)) + np.kron(np.eye(2), _L[:3, :3])
    np.testing.assert_allclose(_kron().matmat(_V6), dense_kron @ _V6, rtol=1e-14, atol=1e-14)
    # A float32 torch operator and a float64 block: the product is formed in float64 (the promoted dtype).
    y = expmv.as_linear_map(torch.as_tensor(_G, dtype=torch.float32)).matmat(torch.as_tensor(_B))
    assert y.dtype == torch.float64
    # Tolerance 1e-6 relative: the entries of G rounded to float32 (u = 6e-8), times sums of four terms.
    np.testing.assert_allclose(y.numpy(), _G @ _B, rtol=1e-6, atol=1e-6)


def test_fact_caches_are_per_tolerance():
    # A symmetric matrix perturbed by 1e-6: asymmetric at rtol 1e-12, symmetric at rtol 1e-3 — the second
    # question must not get the first answer from the cache.
    a = expmv.as_linear_map(_L + 1e-6 * np.eye(4, k=1))
    assert not a.is_symmetric()
    assert a.is_symmetric(1e-3)
    q = expmv.as_linear_map(_Q + 1e-6 * np.eye(4, k=1))
    assert not q.is_markov_generator()
    assert q.is_markov_generator(1e-3)


# ---- huge entries: an operator of norm 1e300 (issue 17) -----------------------------------------------------
# Every refusal of a too-large operator names it by the parameter the caller used: ``A`` through the front door,
# ``op`` for a method called directly, ``A``/``B`` for a Kronecker factor.


def test_a_huge_operator_is_refused_under_its_parameter_name():
    huge_G, huge_L, huge_Q = 1e300 * _G, 1e300 * _L, 1e300 * _Q
    # Krylov: u·|t|·‖op‖₁ = 2^-53 · 0.3 · 4e300 = 1.33e284 (‖L‖₁ = 4).
    with pytest.raises(
        ValueError, match=r"^expmv_taylor would need about .* products of A .* shorten t \(or rescale A\)"
    ):
        expmv.expmv(huge_G, _block(), 0.3, method="taylor")
    with pytest.raises(
        ValueError, match=r"^expmv_taylor would need about .* products of op .*\|t\|·‖op‖ ≈ \d\.\d+e\+299"
    ):
        expmv.expmv_taylor(huge_G, _block(), 0.3)
    with pytest.raises(
        ValueError, match=r"rounding in the Krylov projection is about u\*\|t\|\*\|\|op\|\|_1 = 1\.33e\+284"
    ):
        expmv.expmv_krylov(huge_L, _block(), 0.3)
    with pytest.raises(ValueError, match=r"bounds the spectrum of op, so rescale op or shorten t$"):
        expmv.expmv_chebyshev(huge_L, _block(), 0.7)
    with pytest.raises(ValueError, match=r"^uniformization needs 5e\+299 block products .* from the diagonal of op"):
        expmv.expmv_uniformization(huge_Q, _block(), 0.5)
    with pytest.raises(
        ValueError, match=r"^e\^\(tF\) is not finite in float64 for the Kronecker factor F = B of order 3"
    ):
        expmv.expmv_kronecker_sum(_L[:2, :2], 1e300 * _L[:3, :3], _V6.copy(), 0.4, dense_limit=8)


def test_exact_power_norms_of_a_huge_operator_fall_back_on_the_one_norm():
    # With entries 1e300 the powers ‖A^p‖₁ overflow; they bound nothing and the plan uses ‖A‖₁ (no RuntimeWarning,
    # which the test configuration turns into an error).  The plan is then refused for its size, naming op.
    with pytest.raises(ValueError, match=r"products of op"):
        expmv.expmv_taylor(1e300 * _G, _block(), 0.3, power_norms="exact")
