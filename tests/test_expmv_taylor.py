import math
import warnings

import mpmath
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg
import scipy.special
from conftest import HAS_TORCH
from expmv_matrices import markov, nonnormal, path_laplacian, relerr, symmetric
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.backend import to_backend, to_numpy
from workbench.expmv._linear import as_linear_map
from workbench.expmv._taylor import _largest_first, expmv_taylor
from workbench.expmv._taylor_theta import (
    _THETA_DOUBLE,
    _THETA_SINGLE,
    _log_abs_coefficients,
    _theta_generated,
    taylor_theta,
)

# ---- helpers ---------------------------------------------------------------------------------------


def run(a, b, t, **options):
    return expmv_taylor(as_linear_map(a), b, t, **options)


class Counting:
    """A scipy LinearOperator for ``a`` that counts its block products (to check ``info['matvecs']``)."""

    def __init__(self, a):
        self.calls = 0

        def forward(x):
            self.calls += 1
            return a @ x

        def backward(x):
            self.calls += 1
            return a.T @ x

        self.operator = scipy.sparse.linalg.LinearOperator(
            a.shape, matvec=forward, rmatvec=backward, matmat=forward, rmatmat=backward, dtype=np.float64
        )


# ---- the constants θ_m ------------------------------------------------------------------------------

# Al-Mohy & Higham (2011), Table 3.1: θ_m for m = 5, 10, ..., 55, printed to two significant digits.
TABLE_3_1_DOUBLE = [2.4e-3, 1.4e-1, 6.4e-1, 1.4e0, 2.4e0, 3.5e0, 4.7e0, 6.0e0, 7.2e0, 8.5e0, 9.9e0]
TABLE_3_1_SINGLE = [1.3e-1, 1.0e0, 2.2e0, 3.6e0, 4.9e0, 6.3e0, 7.7e0, 9.1e0, 1.1e1, 1.2e1, 1.3e1]


def significant(x, digits):
    return float(f"{x:.{digits - 1}e}")


@pytest.mark.parametrize(("tol", "published"), [(2.0**-53, TABLE_3_1_DOUBLE), (2.0**-24, TABLE_3_1_SINGLE)])
def test_theta_reproduces_table_3_1(tol, published):
    # Oracle: the paper's published table (two significant digits): rounding ours must give theirs.
    theta = taylor_theta(tol)
    ours = [significant(theta[m - 1], 2) for m in range(5, 56, 5)]
    assert ours == published


def test_theta_matches_scipys_table_to_its_printed_digits():
    # Oracle: scipy's private _theta (the same paper, three significant digits), imported only here.
    # Tolerance: one unit in the last printed digit (scipy's 0.781 for θ_16 is 0.78029 rounded up).
    # scipy prints θ_1 = 2.29e-16 where the closed form gives 2.22e-16: m = 1 is checked there instead.
    oracle = pytest.importorskip("scipy.sparse.linalg._expm_multiply")._theta
    theta = taylor_theta(2.0**-53)
    for m, value in oracle.items():
        if m == 1:
            continue
        digits = max(len(f"{value:e}".split("e")[0].replace(".", "").rstrip("0")), 2)
        unit = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
        assert abs(theta[m - 1] - value) <= unit, m


@pytest.mark.parametrize("tol", [2.0**-53, 2.0**-24, 1e-6])
def test_theta_1_against_its_closed_form(tol):
    # m = 1: h̃_2(θ)/θ = (−log(1 − θ) − θ)/θ exactly; its root by 40-digit mpmath. Tolerance: bisection ~ 1e-15.
    mpmath.mp.dps = 40
    exact = mpmath.findroot(lambda x: (-mpmath.log(1 - x) - x) / x - tol, 2 * tol)
    np.testing.assert_allclose(taylor_theta(tol)[0], float(exact), rtol=1e-14)


@pytest.mark.parametrize("m", [1, 3, 8])
def test_series_coefficients_against_mpmath_taylor(m):
    # Oracle: mpmath's Taylor coefficients of log(e^{-x} T_m(x)) at 0, 50 digits (independent of the recurrence).
    mpmath.mp.dps = 50

    def h(x):
        return mpmath.log(mpmath.exp(-x) * sum(x**j / mpmath.factorial(j) for j in range(m + 1)))

    coefficients = mpmath.taylor(h, 0, m + 12)
    assert all(abs(c) < mpmath.mpf(10) ** -45 for c in coefficients[: m + 1])  # h = O(x^{m+1})
    ks, logs = _log_abs_coefficients(m)
    stored = dict(zip(ks.tolist(), logs.tolist(), strict=True))
    for k in range(m + 1, m + 13):
        if k in stored:
            np.testing.assert_allclose(stored[k], float(mpmath.log(abs(coefficients[k]))), rtol=1e-14, atol=1e-13)
        else:  # an exactly vanishing coefficient is left out of the series
            assert abs(coefficients[k]) < mpmath.mpf(10) ** -45


def test_stored_tables_are_what_the_generator_prints():
    # The literal tables in _taylor_theta.py must be the generator's output (last-bit slack for other platforms).
    np.testing.assert_allclose(_theta_generated(2.0**-53, 55), _THETA_DOUBLE, rtol=1e-14, atol=0)
    np.testing.assert_allclose(_theta_generated(2.0**-24, 55), _THETA_SINGLE, rtol=1e-14, atol=0)


def test_theta_grows_with_degree_and_with_tolerance():
    # Laws: θ_m increases with m (more terms) and with tol (a looser bound).
    tight, loose = taylor_theta(2.0**-53), taylor_theta(1e-6)
    assert np.all(np.diff(tight) > 0) and np.all(loose > tight)


# ---- closed forms and dense references --------------------------------------------------------------


def test_jordan_block(backend):
    # Closed form: e^{t[[λ,1],[0,λ]]} = e^{λt}[[1, t], [0, 1]]; float64 rounding.
    lam, t = -0.7, 2.5
    a = to_backend(np.array([[lam, 1.0], [0.0, lam]]), backend)
    y, _ = expmv_taylor(as_linear_map(a), to_backend(np.eye(2), backend), t)
    np.testing.assert_allclose(to_numpy(y), np.exp(lam * t) * np.array([[1.0, t], [0.0, 1.0]]), rtol=1e-14, atol=1e-16)


def test_diagonal_operator(rng):
    # Closed form: e^{tD}B = diag(e^{t d_i}) B.  Tolerance: a few ulps of the largest entry.
    d = rng.uniform(-20.0, 3.0, 50)
    b = rng.standard_normal((50, 2))
    y, _ = run(np.diag(d), b, 0.8)
    np.testing.assert_allclose(y, np.exp(0.8 * d)[:, None] * b, rtol=1e-13, atol=1e-14 * np.abs(b).max())


def test_cycle_heat_kernel_bessel_image_sum():
    # Closed form: (e^{−tL} on the n-cycle)_{0j} = e^{−2t} Σ_w I_{j+wn}(2t) (the walk's image sum over windings).
    n, t = 24, 7.0
    a = np.zeros((n, n))
    i = np.arange(n)
    a[i, (i + 1) % n] = a[i, (i - 1) % n] = 1.0
    a[i, i] = -2.0
    j = np.arange(n)
    exact = sum(np.exp(-2 * t) * scipy.special.iv(j + w * n, 2 * t) for w in range(-6, 7))
    y, _ = run(scipy.sparse.csr_array(a), np.eye(n)[:, :1], t)
    np.testing.assert_allclose(y[:, 0], exact, rtol=1e-13, atol=1e-16)


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(["symmetric", "markov", "nonnormal"]),
    n=st.integers(1, 12),
    scale=st.floats(0.01, 30.0),
    t=st.floats(-1.5, 1.5).filter(lambda x: abs(x) > 1e-3),
    seed=st.integers(0, 2**32 - 1),
)
def test_against_dense_expm(kind, n, scale, t, seed):
    # Oracle: scipy.linalg.expm (Padé, an independent algorithm).  Tolerance: the backward bound tol·‖tA‖
    # plus the conditioning of exp (∝ ‖tA‖ for these sizes) times u.
    assume(not (kind == "markov" and t < 0))  # e^{tQ}, t < 0, grows like e^{|t|‖Q‖}: see test_negative_time
    rng = np.random.default_rng(seed)
    a = {"symmetric": symmetric, "markov": markov, "nonnormal": nonnormal}[kind](rng, n) * scale
    b = rng.standard_normal((n, 2))
    y, info = run(a, b, t)
    exact = scipy.linalg.expm(t * a) @ b
    norm = abs(t) * np.abs(a).sum(axis=0).max()
    assert relerr(y, exact) <= 1e-13 * (1.0 + norm) ** 2
    assert info["matvecs"] <= info["degree"] * info["steps"] + info["norm_matvecs"]


def test_negative_time(rng):
    # Oracle: dense expm; e^{-tA} = (e^{tA})^{-1} also checked as a law on vectors.
    a = nonnormal(rng, 30) / 3
    b = rng.standard_normal((30, 2))
    back, _ = run(a, b, -1.3)
    np.testing.assert_allclose(back, scipy.linalg.expm(-1.3 * a) @ b, rtol=1e-11, atol=1e-12 * np.abs(back).max())
    forth, _ = run(a, back, 1.3)
    np.testing.assert_allclose(forth, b, rtol=1e-10, atol=1e-11)


def test_stiff_symmetric_heat_kernel():
    # ‖tA‖₁ = 4·250 = 10³.  Oracle: the eigendecomposition of the path Laplacian (eigh, independent of expm).
    a = path_laplacian(120).toarray()
    t = 250.0
    w, v = np.linalg.eigh(a)
    b = np.random.default_rng(0).standard_normal((120, 2))
    exact = v @ (np.exp(t * w)[:, None] * (v.T @ b))
    y, info = run(scipy.sparse.csr_array(a), b, t)
    assert info["norm_kind"] == "2-norm" and info["shift"] == -2.0  # Gershgorin [−4, 0], midpoint −2
    assert relerr(y, exact) < 1e-12


def test_stiff_markov_generator(rng):
    # ‖tQ‖₁ ≈ 10³.  Oracle: dense expm; also e^{tQ}1 = 1 (rows of e^{tQ} sum to 1).
    q = markov(rng, 60)
    t = 1000.0 / np.abs(q).sum(axis=0).max()
    b = np.c_[np.ones(60), rng.standard_normal(60)]
    y, _ = run(q, b, t)
    np.testing.assert_allclose(y[:, 0], 1.0, rtol=1e-12)
    exact = scipy.linalg.expm(t * q) @ b
    assert relerr(y, exact) < 1e-12


def test_tiny_norm():
    # ‖tA‖ = 1e-20: e^{tA}b = b + tAb to rounding (the next term is 1e-40).
    a = np.array([[0.0, 1e-20], [-3e-20, 2e-20]])
    b = np.array([[1.0], [2.0]])
    y, info = run(a, b, 1.0)
    np.testing.assert_allclose(y, b + a @ b, rtol=0, atol=1e-30)
    assert info["matvecs"] <= 2


def test_loose_tolerance_is_met_with_fewer_products(rng):
    # tol = 1e-6 (backward) on ‖tA‖ ≈ 20: the error stays ≤ 1e-6 and costs fewer products than 2⁻⁵³.
    a = nonnormal(rng, 50)
    t = 20.0 / np.abs(a).sum(axis=0).max()
    b = rng.standard_normal((50, 2))
    exact = scipy.linalg.expm(t * a) @ b
    loose, info_loose = run(a, b, t, tol=1e-6)
    tight, info_tight = run(a, b, t)
    assert relerr(loose, exact) <= 1e-6 and relerr(tight, exact) <= 1e-13
    assert info_loose["matvecs"] < info_tight["matvecs"]


def test_forward_error_mode_bounds_the_error(rng):
    # error="forward": the a-priori bound (e^{tol·α} − 1) is ≤ tol, and the actual error is below it.
    a = symmetric(rng, 40)
    t = 30.0 / np.abs(a).sum(axis=0).max()
    b = rng.standard_normal((40, 1))
    exact = scipy.linalg.expm(t * a) @ b
    y, info = run(a, b, t, tol=1e-8, error="forward")
    assert info["error_estimate"] <= 1e-8 * (1 + 1e-12)
    assert relerr(y, exact) <= info["error_estimate"] + 1e-14
    _, backward = run(a, b, t, tol=1e-8)
    assert backward["error_estimate"] > 1e-8 and backward["matvecs"] <= info["matvecs"]


def test_power_norms_sharpen_the_bound_for_a_nonnormal_matrix(rng):
    # A strictly upper triangular A has ρ(A) = 0 and ‖A^p‖^{1/p} ≪ ‖A‖₁: the α_p bounds (paper §4) cut the cost.
    n = 60
    a = 4 * np.triu(rng.standard_normal((n, n)), 1) / np.sqrt(n)
    b = rng.standard_normal((n, 1))
    exact = scipy.linalg.expm(a) @ b
    results = {how: run(a, b, 1.0, power_norms=how) for how in ("off", "exact", "estimate")}
    for y, _ in results.values():
        assert relerr(y, exact) < 1e-13
    assert results["exact"][1]["matvecs"] < results["off"][1]["matvecs"]
    assert results["estimate"][1]["norm_matvecs"] > 0 and results["exact"][1]["norm_matvecs"] == 0
    assert results["estimate"][1]["matvecs"] - results["estimate"][1]["norm_matvecs"] < results["off"][1]["matvecs"]


# ---- inputs: sparse, LinearOperator, torch -----------------------------------------------------------


def test_sparse_and_linear_operator_agree_with_dense(rng):
    # Oracle: the dense-array path (and dense expm); the same algorithm on every kind of operator.
    a = nonnormal(rng, 40) / 4
    b = rng.standard_normal((40, 3))
    dense, _ = run(a, b, 1.1)
    sparse, _ = run(scipy.sparse.csr_array(a), b, 1.1)
    linop, _ = run(scipy.sparse.linalg.aslinearoperator(a), b, 1.1)
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(linop, dense, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(dense, scipy.linalg.expm(1.1 * a) @ b, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("power_norms", ["off", "estimate"])
def test_matvecs_counts_every_block_product(rng, power_norms):
    # Oracle: a LinearOperator that counts its calls (the one_norm() estimate of LinearMap excluded).
    a = nonnormal(rng, 40) * 2
    counting = Counting(a)
    op = as_linear_map(counting.operator)
    op.one_norm()
    counting.calls = 0
    _, info = expmv_taylor(op, rng.standard_normal((40, 2)), 1.0, power_norms=power_norms)
    assert info["matvecs"] == counting.calls > 0
    assert (info["norm_matvecs"] > 0) == (power_norms == "estimate")


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_and_torch_agree(rng, backend):
    # numpy ≡ torch:cpu on the same data: the same (m, s) and float64 results equal to ~1e-14 relative.
    a = nonnormal(rng, 50) / 3
    b = rng.standard_normal((50, 2))
    reference, info_np = run(a, b, 0.9)
    y, info = expmv_taylor(as_linear_map(to_backend(a, backend)), to_backend(b, backend), 0.9)
    assert (info["degree"], info["steps"]) == (info_np["degree"], info_np["steps"])
    np.testing.assert_allclose(to_numpy(y), reference, rtol=1e-13, atol=1e-14)


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_torch_sparse_and_float32():
    import torch

    rng = np.random.default_rng(3)
    a = markov(rng, 40)
    b = rng.standard_normal((40, 2))
    exact = scipy.linalg.expm(0.2 * a) @ b
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        sparse = torch.as_tensor(a).to_sparse_csr()
        y, _ = expmv_taylor(as_linear_map(sparse), torch.as_tensor(b), 0.2)
    np.testing.assert_allclose(to_numpy(y), exact, rtol=1e-12, atol=1e-13)
    # float32: tol is raised to 2⁻²⁴ (info["tol"]); the error is a few units of float32 rounding times ‖tA‖₁ ≈ 8.
    y32, info = expmv_taylor(
        as_linear_map(torch.as_tensor(a, dtype=torch.float32)), torch.as_tensor(b, dtype=torch.float32), 0.2
    )
    assert y32.dtype == torch.float32 and info["tol"] == 2.0**-24
    assert relerr(y32, exact) < 2e-6


# ---- edge cases and bad input -----------------------------------------------------------------------


def test_zero_time_zero_operator_and_zero_block(rng):
    b = rng.standard_normal((5, 2))
    y, info = run(rng.standard_normal((5, 5)), b, 0.0)
    np.testing.assert_array_equal(y, b)
    assert info["matvecs"] == 0 and y is not b
    y, info = run(np.zeros((5, 5)), b, 3.0)
    np.testing.assert_array_equal(y, b)
    y, _ = run(rng.standard_normal((5, 5)), np.zeros((5, 2)), 3.0)
    np.testing.assert_array_equal(y, 0.0)


def test_scalar_multiple_of_identity_is_exact():
    # A = cI: α = 0 after the shift, no products at all, e^{tc} B.
    y, info = run(-3.0 * np.eye(4), np.ones((4, 1)), 0.5)
    np.testing.assert_allclose(y, np.exp(-1.5), rtol=1e-15)
    assert info["matvecs"] == 0


def test_overflow_is_an_error_not_inf():
    with pytest.raises(ValueError, match="exp\\(tA\\)B overflows"):
        run(800.0 * np.eye(3), np.ones((3, 1)), 1.0)
    with pytest.raises(ValueError, match="exp\\(tA\\)B overflows"):
        run(np.array([[0.0, 1.0], [1.0, 0.0]]) * 500, np.ones((2, 1)), 2.0)


def test_bad_options(rng):
    op, b = as_linear_map(np.eye(3)), np.ones((3, 1))
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\), got 0.0"):
        expmv_taylor(op, b, 1.0, tol=0.0)
    with pytest.raises(ValueError, match=r"m_max must be an integer in \[1, 100\], got 0"):
        expmv_taylor(op, b, 1.0, m_max=0)
    with pytest.raises(TypeError, match="p_max must be an integer, got float"):
        expmv_taylor(op, b, 1.0, p_max=2.5)
    with pytest.raises(ValueError, match="power_norms must be one of 'auto', 'exact', 'estimate', 'off', got 'fast'"):
        expmv_taylor(op, b, 1.0, power_norms="fast")
    with pytest.raises(ValueError, match="error must be one of 'backward', 'forward', got 'both'"):
        expmv_taylor(op, b, 1.0, error="both")
    with pytest.raises(ValueError, match=r"t must be in \(-inf, inf\), got nan"):
        expmv_taylor(op, b, math.nan)
    with pytest.raises(ValueError, match="power_norms='exact' needs an explicit operator"):
        expmv_taylor(as_linear_map(Counting(np.eye(3)).operator), b, 1.0, power_norms="exact")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=45),
)
def test_largest_first_is_the_head_of_the_stable_descending_sort(values, k):
    # Oracle: np.argsort(-h, kind="stable")[:k], which the norm estimator used before (it sorted all n entries);
    # many ties (a handful of distinct values), so the tie rule — lowest index first — is what is tested.
    h = np.array(values)
    np.testing.assert_array_equal(_largest_first(h, k)[:k], np.argsort(-h, kind="stable")[:k])
