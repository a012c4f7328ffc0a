"""Dtypes and complex data in ``workbench.expmv`` (issue 17): the result dtype, single-precision tolerances,
complex and Hermitian operators, complex blocks on real operators, and torch's promotion rules.

Oracles: scipy's own ``expm_multiply`` for the dtype rule, scipy.linalg.expm (dense Padé) for values, and
for Hermitian / skew-Hermitian operators the eigendecomposition (numpy.linalg.eigh) as a second reference.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from workbench.expmv import AccuracyWarning, expmv, expmv_chebyshev

SCIPY_VERSION = tuple(int(p) for p in scipy.__version__.split(".")[:2])
#: numpy dtypes of A and B whose result dtype is compared with scipy's (float16 A fails in scipy itself).
DTYPES = (np.bool_, np.int8, np.int32, np.int64, np.float32, np.float64, np.complex64, np.complex128)


def relerr(y, exact):
    return np.linalg.norm(y - exact) / np.linalg.norm(exact)


def hermitian(n, seed):
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    return (g + g.conj().T) / np.sqrt(8 * n)


def eig_action(h, b, scalar):
    """e^{scalar·H}B from H = VΛV* (numpy.linalg.eigh): the independent reference for (skew-)Hermitian A."""
    w, v = np.linalg.eigh(h)
    return v @ (np.exp(scalar * w)[:, None] * (v.conj().T @ b))


@pytest.mark.parametrize("dtype_b", (*DTYPES, np.float16))
@pytest.mark.parametrize("dtype_a", DTYPES)
def test_result_dtype_is_scipys(dtype_a, dtype_b):
    # Oracle for the dtype: the documented rule, result_type(A read as float64 if integer or bool, B), float16
    # computed in float32 — the rule of scipy.sparse.linalg.expm_multiply since scipy 1.17 (checked against it
    # there; older scipy keeps float32 for an integer A with a float32 B).  Oracle for the value:
    # scipy.linalg.expm in complex128; tolerance 1e3·u of the result's dtype (‖A‖₁ = 1.3, a 3×3 problem:
    # rounding only, the dtype's own u sets the scale).
    a = (0.5 * np.eye(3) + 0.1 * np.ones((3, 3))).astype(dtype_a)
    if np.dtype(dtype_a).kind == "c":
        a = a + (0.2j * np.eye(3, k=1)).astype(dtype_a)
    b = np.array([1, 0, 1]).astype(dtype_b)
    exact = scipy.linalg.expm(a.astype(np.complex128)) @ b.astype(np.complex128)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's sparse-efficiency notices
        for operator in (a, scipy.sparse.csr_array(a)):
            read_a = np.float64 if np.dtype(dtype_a).kind in "biu" else dtype_a
            expected = np.result_type(read_a, np.float32 if dtype_b == np.float16 else dtype_b)
            y = expmv(operator, b)
            assert y.dtype == expected
            if SCIPY_VERSION >= (1, 17):
                assert scipy.sparse.linalg.expm_multiply(operator, b).dtype == expected
            unit = 2.0**-24 if y.dtype in (np.float32, np.complex64) else 2.0**-53
            assert relerr(y, exact) <= 1e3 * unit


def test_float32_sparse_is_computed_in_float32_like_dense():
    # Issue 17: csr_matrix(float32) with a float32 vector raised "got A float64 and B float32" (the sparse path
    # upcast A).  Now sparse and dense float32 both run at tol = 2⁻²⁴ and return float32.  Oracle:
    # scipy.linalg.expm in float64; tolerance 100·u₃₂ = 6e-6 (‖A‖₁ ≈ 2, ~20 products each rounding at u₃₂).
    a = scipy.sparse.random(30, 30, density=0.2, random_state=1, dtype=np.float32, format="csr")
    b = np.ones(30, dtype=np.float32)
    exact = scipy.linalg.expm(a.toarray().astype(np.float64)) @ b
    for operator in (a, scipy.sparse.csr_matrix(a), a.toarray()):
        y, info = expmv(operator, b, return_info=True)
        assert y.dtype == np.float32 and info["tol"] == 2.0**-24
        assert relerr(y, exact) <= 100 * 2.0**-24


def test_mixed_real_precisions_upcast():
    # Issue 17: float32 A with float64 B was refused ("must have the same floating type").  Oracle:
    # scipy.linalg.expm of the float32 data in float64; 1e-13 relative (computed in float64, ‖A‖₁ ≈ 1.3).
    a = np.array([[0.1, 0.7], [-0.3, 0.2]], dtype=np.float32)
    b = np.array([1.0, -2.0])
    exact = scipy.linalg.expm(a.astype(np.float64)) @ b
    for operator, vector in ((a, b), (a.astype(np.float64), b.astype(np.float32))):
        y, info = expmv(operator, vector, return_info=True)
        assert y.dtype == np.float64 and info["tol"] == 2.0**-53
        assert relerr(y, exact) <= 1e-13


def test_complex_block_on_a_real_operator_keeps_the_real_methods():
    # A real A with a complex B runs on [Re B, Im B]: a Markov generator still goes to uniformization and a
    # symmetric A to Chebyshev.  Oracle: scipy.linalg.expm; 1e-13 relative (‖tA‖ ≤ 4, rounding only).
    rng = np.random.default_rng(3)
    q = rng.random((6, 6))
    np.fill_diagonal(q, 0.0)
    q -= np.diag(q.sum(axis=1))
    s = q + q.T
    b = rng.standard_normal((6, 2)) + 1j * rng.standard_normal((6, 2))
    for a, method in ((q, "uniformization"), (s, "chebyshev")):
        for block in (b, b[:, 0], b.astype(np.complex64)):
            y, info = expmv(a, block, 0.7, return_info=True)
            assert info["method"] == method and y.dtype == np.result_type(a, block) and y.shape == block.shape
            unit = 2.0**-24 if block.dtype == np.complex64 else 2.0**-53
            assert relerr(y, scipy.linalg.expm(0.7 * a) @ block) <= 1e3 * unit
    grid = expmv(q, b, [0.0, 0.5, 1.0])  # a time grid of a split block (oracle: B itself at t = 0)
    np.testing.assert_array_equal(grid[0], b)
    assert relerr(grid[2], scipy.linalg.expm(q) @ b) <= 1e-13


@pytest.mark.parametrize("t", [1.0, 10.0, -5.0])
@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_hermitian_operator_runs_chebyshev(kind, t):
    # Hermitian A has a real spectrum: 'auto' picks Chebyshev.  Oracle: eigh (independent of every method);
    # tolerance 1e-13 relative (‖tA‖₂ ≤ 20: rounding ~u·degree, observed ≤ 5e-15).
    h = hermitian(40, 0)
    b = np.random.default_rng(1).standard_normal((40, 2)) + 0j
    operator = h if kind == "dense" else scipy.sparse.csr_array(h)
    exact = eig_action(h, b, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        y, info = expmv(operator, b, t, return_info=True)
        assert info["method"] == "chebyshev" and "Hermitian" in info["reason"]
        assert relerr(y, exact) <= 1e-13
        for method in ("taylor", "krylov"):  # the other two methods agree (Krylov runs Lanczos on it)
            y, info = expmv(operator, b, t, method=method, return_info=True)
            assert relerr(y, exact) <= 1e-13
    assert expmv(operator, b, t, method="krylov", return_info=True)[1]["process"] == "lanczos"


@pytest.mark.parametrize("t", [1.0, 10.0, -5.0])
def test_skew_hermitian_schroedinger_flow_goes_to_taylor_with_the_reason(t):
    # e^{-itH}ψ, A = -iH skew-Hermitian: Chebyshev on a real interval does not apply and is not run; the reason
    # says so.  Oracle: eigh of H, e^{-itH} = V e^{-itΛ} V*; tolerance 1e-13 relative (unitary flow, ‖tH‖₂ ≤ 20:
    # rounding ~u·‖tA‖, observed ≤ 3e-14); unitarity preserves the norm to the same accuracy.
    h = hermitian(40, 2)
    psi = np.random.default_rng(4).standard_normal(40) + 1j * np.random.default_rng(5).standard_normal(40)
    exact = eig_action(h, psi[:, None], -1j * t)[:, 0]
    y, info = expmv(-1j * h, psi, t, return_info=True)
    assert info["method"] == "taylor" and "skew-Hermitian" in info["reason"] and "not implemented" in info["reason"]
    assert relerr(y, exact) <= 1e-13
    assert abs(np.linalg.norm(y) / np.linalg.norm(psi) - 1.0) <= 1e-13
    assert relerr(expmv(-1j * h, psi, t, method="krylov"), exact) <= 1e-13
    with pytest.raises(ValueError, match=r"needs a Hermitian A \(real spectrum\).*skew-Hermitian A = -iH"):
        expmv_chebyshev(-1j * h, psi, t)


def test_complex_action_only_operator_uses_arnoldi():
    # A complex LinearOperator (entries unseen) goes to Krylov; complex64 data is computed at u₃₂.  Oracle:
    # scipy.linalg.expm; tolerances 1e-13 (complex128) and 1e-5 (complex64: ~100·u₃₂, ‖A‖₁ ≈ 3).
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((20, 20)) + 1j * rng.standard_normal((20, 20))) / np.sqrt(40)
    b = rng.standard_normal(20)
    for dtype, tol in ((np.complex128, 1e-13), (np.complex64, 1e-5)):
        op = scipy.sparse.linalg.aslinearoperator(a.astype(dtype))
        y, info = expmv(op, b.astype(np.float32) if dtype == np.complex64 else b, return_info=True)
        assert info["method"] == "krylov" and y.dtype == dtype
        assert relerr(y, scipy.linalg.expm(a.astype(dtype).astype(np.complex128)) @ b) <= tol


def test_extended_precision_and_non_numeric_data_are_refused():
    # longdouble would silently carry only double precision through the methods: refused, saying what to do.
    if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps:
        with pytest.raises(TypeError, match=r"A must have at most double precision .* got dtype float128"):
            expmv(np.eye(2, dtype=np.longdouble), np.ones(2))
        with pytest.raises(TypeError, match=r"B must have at most double precision"):
            expmv(np.eye(2), np.ones(2, dtype=np.longdouble))
    with pytest.raises(TypeError, match=r"B must be a numeric array .* got dtype <U1"):
        expmv(np.eye(2), np.array(["a", "b"]))


def test_torch_follows_torch_promotion():
    # torch tensors keep torch's rules (torch.promote_types); mixing numpy and torch stays a TypeError.
    # Oracle: scipy.linalg.expm; tolerance 1e3·u of the result dtype (‖A‖₁ ≈ 2, rounding only).
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 8)) / np.sqrt(8) + 1j * rng.standard_normal((8, 8)) / np.sqrt(8)
    b = rng.standard_normal(8)
    for ta, tb in ((torch.float32, torch.float64), (torch.complex64, torch.float32), (torch.float64, torch.int64)):
        dense = torch.tensor(a if ta.is_complex else a.real).to(ta)
        block = torch.tensor(b).to(tb)
        for operator in (dense, dense.to_sparse_csr()):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # torch's "sparse CSR is beta" notice
                y = expmv(operator, block)
            assert y.dtype == torch.promote_types(ta, tb)
            exact = scipy.linalg.expm(dense.numpy().astype(np.complex128)) @ block.numpy().astype(np.complex128)
            unit = 2.0**-24 if y.dtype in (torch.float32, torch.complex64) else 2.0**-53
            assert relerr(y.numpy(), exact) <= 1e3 * unit
    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        expmv(torch.tensor(a.real), b)


def test_complex_operator_is_not_a_markov_generator():
    # Rates are real: a complex A is refused by uniformization with a message saying what to use instead.
    with pytest.raises(
        ValueError, match=r"needs a Markov generator Q with real rates; A is complex \(dtype complex128\)"
    ):
        expmv(np.array([[-1.0, 1.0], [2.0, -2.0]]) + 0j, np.ones(2), method="uniformization")
