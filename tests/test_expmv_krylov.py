import math
import warnings

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
from workbench.expmv._krylov import expmv_krylov
from workbench.expmv._linear import AccuracyWarning, as_linear_map

# ---- helpers ---------------------------------------------------------------------------------------


def run(a, b, t, **options):
    return expmv_krylov(as_linear_map(a), b, t, **options)


def counting_operator(a):
    """A scipy LinearOperator for ``a`` with a call counter (to check ``info['matvecs']``)."""
    calls = [0]

    def forward(x):
        calls[0] += 1
        return a @ x

    def backward(x):  # for LinearMap.one_norm()'s estimator
        return a.T @ x

    operator = scipy.sparse.linalg.LinearOperator(
        a.shape, matvec=forward, matmat=forward, rmatvec=backward, rmatmat=backward, dtype=np.float64
    )
    return operator, calls


# ---- dense references and closed forms --------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(
    kind=st.sampled_from(["symmetric", "markov", "nonnormal"]),
    n=st.integers(1, 12),
    scale=st.floats(0.01, 30.0),
    t=st.floats(-1.5, 1.5).filter(lambda x: abs(x) > 1e-3),
    seed=st.integers(0, 2**32 - 1),
)
def test_against_dense_expm(kind, n, scale, t, seed):
    # Oracle: scipy.linalg.expm (Padé).  Tolerance: rounding, grown with ‖tA‖ (time steps, conditioning);
    # the Krylov part is held below tol = 2⁻⁵³ by the a-posteriori control.
    assume(not (kind == "markov" and t < 0))  # e^{tQ}, t < 0, grows like e^{|t|‖Q‖}: see test_negative_time
    rng = np.random.default_rng(seed)
    a = {"symmetric": symmetric, "markov": markov, "nonnormal": nonnormal}[kind](rng, n) * scale
    b = rng.standard_normal((n, 2))
    y, info = run(a, b, t)
    exact = scipy.linalg.expm(t * a) @ b
    norm = abs(t) * np.abs(a).sum(axis=0).max()
    assert relerr(y, exact) <= 1e-13 * (1.0 + norm) ** 2
    assert info["process"] == ("lanczos" if np.array_equal(a, a.T) else "arnoldi")


def test_jordan_block_is_an_invariant_space(backend):
    # Closed form e^{t[[λ,1],[0,λ]]} = e^{λt}[[1,t],[0,1]]; a 2-dimensional space is invariant: one step, exact.
    lam, t = -0.7, 2.5
    a = to_backend(np.array([[lam, 1.0], [0.0, lam]]), backend)
    y, info = expmv_krylov(as_linear_map(a), to_backend(np.eye(2), backend), t)
    np.testing.assert_allclose(to_numpy(y), np.exp(lam * t) * np.array([[1.0, t], [0.0, 1.0]]), rtol=1e-14, atol=1e-16)
    assert info["steps"] == 1 and info["error_estimate"] == 0.0


def test_diagonal_operator(rng):
    # Closed form: e^{tD}b = diag(e^{t d_i}) b; d spans 3 decades (a stiff, normal case).
    d = -np.logspace(-1, 2, 60)
    b = rng.standard_normal((60, 1))
    y, _ = run(np.diag(d), b, 3.0)
    np.testing.assert_allclose(y, np.exp(3.0 * d)[:, None] * b, rtol=1e-12, atol=1e-14)


def test_cycle_heat_kernel_bessel_image_sum():
    # Closed form: (e^{−tL} on the n-cycle)_{0j} = e^{−2t} Σ_w I_{j+wn}(2t), summed over windings w.
    n, t = 24, 7.0
    a = np.zeros((n, n))
    i = np.arange(n)
    a[i, (i + 1) % n] = a[i, (i - 1) % n] = 1.0
    a[i, i] = -2.0
    j = np.arange(n)
    exact = sum(np.exp(-2 * t) * scipy.special.iv(j + w * n, 2 * t) for w in range(-6, 7))
    y, info = run(scipy.sparse.csr_array(a), np.eye(n)[:, :1], t)
    np.testing.assert_allclose(y[:, 0], exact, rtol=1e-12, atol=1e-15)
    assert info["process"] == "lanczos"


def test_stiff_symmetric_heat_kernel():
    # ‖tA‖₁ = 10³.  Oracle: eigendecomposition of the path Laplacian; time stepping needed at m = 30.
    a = path_laplacian(150)
    t = 250.0
    w, v = np.linalg.eigh(a.toarray())
    b = np.random.default_rng(0).standard_normal((150, 2))
    exact = v @ (np.exp(t * w)[:, None] * (v.T @ b))
    y, info = run(a, b, t)
    assert info["steps"] > 1 and info["error_estimate"] <= 2.0**-53
    assert relerr(y, exact) < 1e-12


def test_stiff_markov_generator(rng):
    # ‖tQ‖₁ ≈ 10³.  Oracle: dense expm; and e^{tQ}1 = 1 (rows of e^{tQ} sum to one).
    q = markov(rng, 80)
    t = 1000.0 / np.abs(q).sum(axis=0).max()
    b = np.c_[np.ones(80), rng.standard_normal(80)]
    y, _ = run(q, b, t)
    np.testing.assert_allclose(y[:, 0], 1.0, rtol=1e-12)
    assert relerr(y, scipy.linalg.expm(t * q) @ b) < 1e-12


def test_stiff_nonnormal(rng):
    # ‖tA‖₁ ≈ 300, non-normal.  Oracle: dense expm; tolerance: the conditioning of exp at this norm.
    a = nonnormal(rng, 60) - 12 * np.eye(60)
    t = 300.0 / np.abs(a).sum(axis=0).max()
    b = rng.standard_normal((60, 1))
    y, info = run(a, b, t)
    assert info["steps"] > 1
    assert relerr(y, scipy.linalg.expm(t * a) @ b) < 1e-10


def test_negative_time(rng):
    # Oracle: dense expm; and the group law e^{tA}e^{-tA}b = b.
    a = nonnormal(rng, 30) / 3
    b = rng.standard_normal((30, 2))
    back, _ = run(a, b, -1.3)
    np.testing.assert_allclose(back, scipy.linalg.expm(-1.3 * a) @ b, rtol=1e-11, atol=1e-12 * np.abs(back).max())
    forth, _ = run(a, back, 1.3)
    np.testing.assert_allclose(forth, b, rtol=1e-10, atol=1e-11)


def test_tiny_norm():
    # ‖tA‖ = 1e-20: e^{tA}b = b + tAb to rounding.
    a = np.array([[0.0, 1e-20], [-3e-20, 2e-20]])
    b = np.array([[1.0], [2.0]])
    y, _ = run(a, b, 1.0)
    np.testing.assert_allclose(y, b + a @ b, rtol=0, atol=1e-30)


@pytest.mark.parametrize("build", [symmetric, markov, nonnormal], ids=["symmetric", "markov", "nonnormal"])
def test_loose_tolerance_is_met_with_fewer_products(rng, build):
    # tol = 1e-6 at ‖tA‖₁ = 30: error ≤ ~1e-6 (the a-posteriori estimate, within a factor 3), fewer products.
    a = build(rng, 120)
    t = 30.0 / np.abs(a).sum(axis=0).max()
    b = rng.standard_normal((120, 2))
    exact = scipy.linalg.expm(t * a) @ b
    loose, info_loose = run(a, b, t, tol=1e-6)
    tight, info_tight = run(a, b, t)
    assert relerr(loose, exact) <= 3e-6 and info_loose["error_estimate"] <= 1e-6
    assert relerr(tight, exact) <= 1e-13
    assert info_loose["matvecs"] < info_tight["matvecs"]


def test_error_estimate_tracks_the_error_of_a_heat_kernel():
    # The a-posteriori estimate against the true error (eigh oracle) at tol = 1e-8 on a stiff heat kernel:
    # the error is at most a few times the estimate, and the estimate at most tol.
    a = path_laplacian(200)
    w, v = np.linalg.eigh(a.toarray())
    b = np.random.default_rng(5).standard_normal((200, 1))
    t = 60.0
    exact = v @ (np.exp(t * w)[:, None] * (v.T @ b))
    y, info = run(a, b, t, tol=1e-8, m=20)
    assert info["error_estimate"] <= 1e-8
    assert relerr(y, exact) <= 3 * max(info["error_estimate"], 1e-14)


def test_lanczos_and_arnoldi_agree_on_a_symmetric_operator(rng):
    a = symmetric(rng, 80)
    b = rng.standard_normal((80, 2))
    lanczos, info_l = run(a, b, 0.5, lanczos=True)
    arnoldi, info_a = run(a, b, 0.5, lanczos=False)
    assert (info_l["process"], info_a["process"]) == ("lanczos", "arnoldi")
    np.testing.assert_allclose(lanczos, arnoldi, rtol=1e-12, atol=1e-12 * np.abs(arnoldi).max())


def test_block_equals_column_by_column(rng):
    # Batched ≡ loop: the columns run independent processes with shared steps (tolerance: tol-level).
    a = nonnormal(rng, 50) / 4
    b = rng.standard_normal((50, 3))
    block, _ = run(a, b, 1.0)
    for j in range(3):
        column, _ = run(a, b[:, j : j + 1], 1.0)
        np.testing.assert_allclose(block[:, j : j + 1], column, rtol=1e-12, atol=1e-13)


# ---- inputs, counting, warnings -----------------------------------------------------------------------


def test_sparse_and_linear_operator_agree_with_dense(rng):
    a = markov(rng, 60)
    b = rng.standard_normal((60, 2))
    dense, _ = run(a, b, 0.4)
    sparse, _ = run(scipy.sparse.csr_array(a), b, 0.4)
    linop, info = run(scipy.sparse.linalg.aslinearoperator(a), b, 0.4)
    assert info["process"] == "arnoldi"
    np.testing.assert_allclose(sparse, dense, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(linop, dense, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(dense, scipy.linalg.expm(0.4 * a) @ b, rtol=1e-12, atol=1e-13)


def test_matvecs_counts_every_block_product(rng):
    # Oracle: a LinearOperator counting its calls (LinearMap's one_norm() estimate excluded).
    a = nonnormal(rng, 40)
    operator, calls = counting_operator(a)
    op = as_linear_map(operator)
    op.one_norm()
    calls[0] = 0
    _, info = expmv_krylov(op, rng.standard_normal((40, 2)), 100.0 / np.abs(a).sum(axis=0).max())
    assert info["matvecs"] == calls[0] > 0 and info["steps"] > 1


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_numpy_and_torch_agree(rng, backend):
    # numpy ≡ torch:cpu: the same steps; float64 results equal to ~1e-13 relative (different BLAS orders).
    a = symmetric(rng, 60)
    b = rng.standard_normal((60, 2))
    reference, info_np = run(a, b, 0.8)
    y, info = expmv_krylov(as_linear_map(to_backend(a, backend)), to_backend(b, backend), 0.8)
    assert info["steps"] == info_np["steps"] and info["matvecs"] == info_np["matvecs"]
    np.testing.assert_allclose(to_numpy(y), reference, rtol=1e-12, atol=1e-13 * np.abs(reference).max())


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_torch_sparse_and_float32():
    import torch

    rng = np.random.default_rng(4)
    a = nonnormal(rng, 40) / 4
    b = rng.standard_normal((40, 2))
    exact = scipy.linalg.expm(0.5 * a) @ b
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        y, _ = expmv_krylov(as_linear_map(torch.as_tensor(a).to_sparse_csr()), torch.as_tensor(b), 0.5)
    np.testing.assert_allclose(to_numpy(y), exact, rtol=1e-12, atol=1e-13)
    # float32: tol raised to 2⁻²⁴; error a few units of float32 rounding times the growth of this e^{tA}.
    y32, info = expmv_krylov(
        as_linear_map(torch.as_tensor(a, dtype=torch.float32)), torch.as_tensor(b, dtype=torch.float32), 0.5
    )
    assert y32.dtype == torch.float32 and info["tol"] == 2.0**-24
    assert relerr(y32, exact) < 5e-6


def test_step_limit_warns_and_still_returns_the_full_time(rng):
    # max_steps = 1 on a stiff problem: the one step covers all of t, the estimate says how far off it is.
    a = path_laplacian(100)
    b = rng.standard_normal((100, 1))
    with pytest.warns(AccuracyWarning, match=r"max_steps=1 was reached.*increase m \(now 10\) or max_steps"):
        y, info = run(a, b, 200.0, m=10, max_steps=1)
    assert info["steps"] == 1 and info["error_estimate"] > 2.0**-53 and np.all(np.isfinite(y))


def test_rejection_limit_warns(rng):
    a = path_laplacian(100)
    b = rng.standard_normal((100, 1))
    with pytest.warns(AccuracyWarning, match=r"after max_rejections=0 reductions.*increase m \(now 10\)"):
        run(a, b, 200.0, m=10, max_rejections=0)


def test_zero_time_zero_operator_zero_block_and_zero_column(rng):
    b = rng.standard_normal((6, 2))
    y, info = run(rng.standard_normal((6, 6)), b, 0.0)
    np.testing.assert_array_equal(y, b)
    assert info["matvecs"] == 0 and y is not b
    y, _ = run(np.zeros((6, 6)), b, 2.0)
    np.testing.assert_array_equal(y, b)
    y, _ = run(rng.standard_normal((6, 6)), np.zeros((6, 2)), 2.0)
    np.testing.assert_array_equal(y, 0.0)
    # a zero column stays zero and does not disturb its neighbour (oracle: dense expm).
    a = symmetric(rng, 6)
    b[:, 1] = 0.0
    y, _ = run(a, b, 1.0)
    np.testing.assert_array_equal(y[:, 1], 0.0)
    np.testing.assert_allclose(y[:, 0], scipy.linalg.expm(a) @ b[:, 0], rtol=1e-13)


def test_overflow_is_an_error_not_inf():
    with pytest.raises(ValueError, match="exp\\(tA\\)B overflows"):
        run(np.array([[0.0, 1.0], [1.0, 0.0]]) * 800, np.ones((2, 1)), 2.0)


def test_bad_options():
    op, b = as_linear_map(np.eye(3)), np.ones((3, 1))
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\), got 1.5"):
        expmv_krylov(op, b, 1.0, tol=1.5)
    with pytest.raises(ValueError, match=r"m must be an integer in \[1, 500\], got 0"):
        expmv_krylov(op, b, 1.0, m=0)
    with pytest.raises(TypeError, match="max_steps must be an integer, got float"):
        expmv_krylov(op, b, 1.0, max_steps=1.5)
    with pytest.raises(ValueError, match=r"t must be in \(-inf, inf\), got inf"):
        expmv_krylov(op, b, math.inf)


# ---- non-normal operators: never a wrong number quietly (issue 40, finding 5) ------------------------


def _exact_action(a, b, t):
    """e^{tA}b at 60 digits (mpmath): the oracle where scaling and squaring itself is unreliable."""
    import mpmath

    with mpmath.workdps(60):
        exact = mpmath.expm(mpmath.matrix(a.tolist()) * t) * mpmath.matrix(b.tolist())
        return np.array([float(x) for x in exact])


def test_jordan_like_operator_is_refused_not_answered_wrongly():
    # Reproducer: A = −diag(1, …, 5) + 1000·N (N the shift), t = 1, b = 1.  Krylov returned a vector off by a
    # factor ~1,400 with error estimate 0 and no warning: the space is invariant (exact in exact arithmetic), but
    # scaling and squaring on the non-normal Hessenberg H loses every digit.  Now refused in one line naming the
    # cause and the method that works; Taylor (the default for a matrix) meets 1e-12 against the 60-digit oracle.
    from workbench.expmv import expmv

    a = -np.diag(np.arange(1.0, 6.0)) + 1000.0 * np.eye(5, k=1)
    b = np.ones(5)
    with pytest.raises(ValueError, match=r"far from normal .* no digit would be correct; use method='taylor'"):
        run(a, b, 1.0)
    with pytest.raises(ValueError, match="far from normal"):
        expmv(a, b, 1.0, method="krylov")
    np.testing.assert_allclose(expmv(a, b, 1.0), _exact_action(a, b, 1.0), rtol=1e-12)


@pytest.mark.parametrize("coupling", [1.0, 10.0, 100.0, 1000.0])
@pytest.mark.parametrize("n", [5, 10])
@pytest.mark.parametrize("t", [0.3, 1.0, 3.0])
def test_nonnormal_results_are_within_their_reported_accuracy(coupling, n, t):
    # Oracle: e^{tA}b at 60 digits.  Every outcome is honest: a refusal; or a result within the accuracy it reports
    # — without a warning, within max(tol, error_estimate, rounding_estimate); with an AccuracyWarning, within 10×
    # the rounding estimate it names (the estimate samples a derivative: a factor, not digits, of slack).
    a = -np.diag(np.arange(1.0, n + 1.0)) + coupling * np.eye(n, k=1)
    b = np.ones(n)
    exact = _exact_action(a, b, t)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            y, info = run(a, b, t)
        except ValueError as refusal:
            assert "far from normal" in str(refusal) or "rounding" in str(refusal)
            return
    error = relerr(y, exact)
    reported = max(info["tol"], info["error_estimate"], info["rounding_estimate"])
    if any(issubclass(w.category, AccuracyWarning) for w in caught):
        assert error <= 10 * reported
    else:
        assert error <= reported, (error, info)


def test_normal_operators_keep_their_accuracy_and_report_no_amplification(rng):
    # A = S − I with S skew-symmetric is normal (AAᵀ = AᵀA = I − S²) but not symmetric, so it runs Arnoldi; its
    # exponential is well conditioned, so no warning, and the rounding estimate stays near the a-priori
    # u·|t|·‖A‖₁ (asserted below 1e-10).  Oracle: scipy.linalg.expm; 1e-12 relative and absolute, rounding over
    # ‖tA‖ ≈ 2·40 with room to spare.
    skew = rng.standard_normal((40, 40))
    a = skew - skew.T - np.eye(40)
    b = rng.standard_normal((40, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        y, info = run(a, b, 2.0, lanczos=False)
    np.testing.assert_allclose(y, scipy.linalg.expm(2.0 * a) @ b, rtol=1e-12, atol=1e-12)
    assert info["rounding_estimate"] < 1e-10
