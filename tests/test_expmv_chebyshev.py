import math
import warnings

import mpmath
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.sparse.linalg import LinearOperator

from workbench.backend import to_backend, to_numpy
from workbench.expmv import _chebyshev
from workbench.expmv._banded import BandedMatrix
from workbench.expmv._chebyshev import chebyshev_exp_coefficients, expmv_chebyshev
from workbench.expmv._linear import AccuracyWarning

UNIT = 2.0**-53


def path_laplacian(n):
    """The (positive) Laplacian of the path graph P_n, as scipy CSR."""
    main = np.r_[1.0, 2.0 * np.ones(n - 2), 1.0]
    return scipy.sparse.diags([-np.ones(n - 1), main, -np.ones(n - 1)], [-1, 0, 1], format="csr")


def path_heat(n, t, b):
    """Closed form: L_Pn has eigenvalues 2 − 2cos(πk/n), eigenvectors cos(πk(j + ½)/n) (the DCT-II basis)."""
    k = np.arange(n)
    values = 2.0 - 2.0 * np.cos(np.pi * k / n)
    vectors = np.cos(np.pi * np.outer(np.arange(n) + 0.5, k) / n)
    vectors /= np.linalg.norm(vectors, axis=0)
    return vectors @ (np.exp(-t * values)[:, None] * (vectors.T @ b))


def cycle_laplacian(n):
    lap = 2.0 * scipy.sparse.eye_array(n) - scipy.sparse.eye_array(n, k=1) - scipy.sparse.eye_array(n, k=-1)
    lap = lap + scipy.sparse.eye_array(n, k=n - 1) * -1.0 + scipy.sparse.eye_array(n, k=-(n - 1)) * -1.0
    return scipy.sparse.csr_array(lap)


def cycle_heat_column(n, t):
    """Bessel image sum: (e^{−tL_Cn})_{j0} = Σ_w e^{−2t} I_{j + wn}(2t), over windings w (continuous-time walk on ℤ)."""
    windings = np.arange(-int(4 * math.sqrt(2 * t) / n) - 3, int(4 * math.sqrt(2 * t) / n) + 4)
    orders = np.abs(np.arange(n)[:, None] + n * windings[None, :])
    return scipy.special.ive(orders, 2.0 * t).sum(axis=1)


def rel(a, b):
    return np.linalg.norm(to_numpy(a) - b) / np.linalg.norm(b)


# ---- coefficients -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t", "interval"), [(-50.0, (0.0, 4.0)), (-1.0, (-3.0, 2.0)), (0.3, (1.0, 9.0)), (20.0, (-1.0, 0.5))]
)
def test_expansion_reproduces_exp_within_its_tail_bound(t, interval):
    # Oracle: e^{tx} itself on a fine grid, the expansion evaluated by numpy's independent chebval.
    # The tail bound is rigorous for the truncation; evaluating the degree-K series rounds by up to ~K·u
    # (Clenshaw, near the ends of the interval), relative to max e^{tx}.
    e = chebyshev_exp_coefficients(t, interval, tol=1e-15)
    x = np.linspace(*interval, 2001)
    approx = np.polynomial.chebyshev.chebval((x - e.center) / e.half_width, e.coefficients)
    error = np.max(np.abs(approx - np.exp(t * x - e.log_scale)))
    assert e.tail_bound <= 1e-15
    assert error <= e.tail_bound + 2 * len(e.coefficients) * UNIT
    assert math.isclose(e.log_scale, max(t * interval[0], t * interval[1]), rel_tol=1e-15, abs_tol=1e-15)


@pytest.mark.parametrize("tau", [0.5, 40.0, 900.0])
def test_coefficients_and_tail_against_mpmath_bessel(tau):
    # Oracle: 30-digit I_k(τ)e^{−τ} (mpmath); scipy's ive is accurate to ~1e-13 relative for the terms that matter.
    mpmath.mp.dps = 30
    e = chebyshev_exp_coefficients(1.0, (-tau, tau), tol=1e-14)  # τ = t·h = tau
    exact = [
        float(mpmath.besseli(k, tau) * mpmath.exp(-tau)) * (1 if k == 0 else 2) for k in range(len(e.coefficients) + 40)
    ]
    big = np.array(exact[: len(e.coefficients)]) > 1e-200
    np.testing.assert_allclose(e.coefficients[big], np.array(exact[: len(e.coefficients)])[big], rtol=1e-12)
    true_tail = math.fsum(exact[len(e.coefficients) :])  # terms past +40 are negligible against the tail
    # The Turán-ratio bound is an upper bound (up to ive's own ~1e-14 relative accuracy) and meets tol.
    assert true_tail <= e.tail_bound * (1 + 1e-12) and e.tail_bound <= 1e-14
    assert e.tail_bound <= 100 * true_tail + 1e-300  # and not wildly pessimistic


def test_degree_grows_like_sqrt_tau():
    # Theory (Hochbruck–Lubich): K ~ sqrt(2τ log(1/tol)); Taylor-type methods need ~τ products.
    degrees = [len(chebyshev_exp_coefficients(-1.0, (0.0, 2.0 * tau)).coefficients) - 1 for tau in (100, 10_000)]
    assert 7 <= degrees[1] / degrees[0] <= 12  # ≈ sqrt(100) = 10
    assert degrees[1] < 10_000 / 10


# ---- closed forms and dense references --------------------------------------------------------


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
@pytest.mark.parametrize("t", [0.1, 3.0, 100.0, 1000.0])
def test_cycle_heat_kernel_bessel_image_sum(backend, t):
    # Oracle: the Bessel image sum (closed form); ‖tL‖ up to 4000 (stiff). Tolerance 1e-12 relative:
    # the method's estimate is u·sqrt(K) ≈ 3e-15 relative to ‖δ‖ = 1, and the column has norm ≥ 0.05.
    n = 64
    delta = np.zeros((n, 1))
    delta[0] = 1.0
    op = -cycle_laplacian(n)
    if backend != "numpy":
        import torch

        op = torch.as_tensor(op.toarray()).to_sparse_csr()
    y, info = expmv_chebyshev(op, to_backend(delta, backend), t)
    assert rel(y[:, 0], cycle_heat_column(n, t)) <= 1e-12
    # One extra product (two columns) certifies the Gershgorin end: R(1) = 0 for a Laplacian.
    assert info["matvecs"] == info["degree"] + 1 and info["interval"] == (-4.0, 0.0)
    assert info["interval_source"] == "gershgorin"


def test_numpy_and_torch_agree_to_rounding_and_float32_is_stated():
    torch = pytest.importorskip("torch")
    # Oracle: the numpy run; same recurrence, so float64 agreement is at rounding level (1e-13 relative).
    rng = np.random.default_rng(5)
    lap = path_laplacian(200)
    b = rng.standard_normal((200, 3))
    y_np, _ = expmv_chebyshev(-lap, b, 40.0)
    y_t, _ = expmv_chebyshev(torch.as_tensor(-lap.toarray()), torch.as_tensor(b), 40.0)
    assert isinstance(y_t, torch.Tensor) and y_t.dtype == torch.float64
    np.testing.assert_allclose(to_numpy(y_t), y_np, rtol=1e-12, atol=1e-13 * np.abs(y_np).max())
    # float32: unit roundoff 6e-8 times sqrt(K) ~ 10 → 1e-5 relative is the stated tolerance.
    y32, _ = expmv_chebyshev(-lap.astype(np.float32), b.astype(np.float32), 40.0)
    assert y32.dtype == np.float32 and rel(y32, y_np) <= 1e-5
    y32t, _ = expmv_chebyshev(
        torch.as_tensor(-lap.toarray(), dtype=torch.float32), torch.as_tensor(b, dtype=torch.float32), 40.0
    )
    assert y32t.dtype == torch.float32 and rel(y32t, y_np) <= 1e-5


@pytest.mark.parametrize("t", [1.0, 10.0, 100.0, 1000.0])
def test_path_laplacian_n300_stiff(t):
    # Oracle: the DCT-II eigendecomposition of L_P300 (closed form, itself accurate to ~1e-14); ‖tL‖ up to 4000.
    rng = np.random.default_rng(1)
    b = rng.standard_normal((300, 3))
    y, info = expmv_chebyshev(-path_laplacian(300), b, t)
    assert rel(y, path_heat(300, t, b)) <= 1e-12
    assert info["error_estimate"] <= 1e-13


def test_banded_operator_on_numpy_and_torch(backend):
    # The shifted-and-scaled BandedMatrix path (formed once); oracle: the DCT closed form, 1e-12 relative.
    banded = BandedMatrix.from_scipy(-path_laplacian(300))
    if backend != "numpy":
        banded = BandedMatrix(banded.offsets, to_backend(banded.diagonals, backend))
    b = np.random.default_rng(10).standard_normal((300, 2))
    y, info = expmv_chebyshev(banded, to_backend(b, backend), 150.0)
    assert rel(y, path_heat(300, 150.0, b)) <= 1e-12
    assert info["interval"] == (-4.0, 0.0) and info["matvecs"] == info["degree"] + 1


def test_path_laplacian_against_dense_expm():
    # Oracle: scipy.linalg.expm (Padé), accurate at moderate ‖tL‖ = 40.
    lap = path_laplacian(120)
    b = np.random.default_rng(2).standard_normal((120, 2))
    y, _ = expmv_chebyshev(-lap, b, 10.0)
    assert rel(y, scipy.linalg.expm(-10.0 * lap.toarray()) @ b) <= 1e-13


def test_negative_time_growth_is_relative():
    # e^{tA} with A = −L and t = −5 is e^{5L}: growing, dominated by λ_max; oracle: DCT closed form at −t.
    b = np.random.default_rng(3).standard_normal((300, 2))
    y, info = expmv_chebyshev(-path_laplacian(300), b, -5.0)
    assert info["log_scale"] == pytest.approx(20.0)  # max_[−4, 0] e^{−5x} = e^{20}
    assert rel(y, path_heat(300, -5.0, b)) <= 1e-13


def test_wider_interval_is_still_correct_with_more_terms():
    # Widening on the decaying side keeps M = max e^{tx} = 1: correct, just more terms. Oracle: closed form.
    b = np.random.default_rng(4).standard_normal((300, 2))
    reference = path_heat(300, 100.0, b)
    _, tight = expmv_chebyshev(-path_laplacian(300), b, 100.0)
    y, wide = expmv_chebyshev(-path_laplacian(300), b, 100.0, interval=(-9.0, 0.0))
    assert rel(y, reference) <= 1e-12
    assert wide["degree"] > tight["degree"] and wide["interval_source"] == "given"


def test_interval_too_wide_on_the_growing_side_warns():
    # M = e^{100·5} ≫ ‖e^{−100L}B‖: relative accuracy is lost, and the warning says so.
    b = np.ones((300, 1))
    with pytest.warns(AccuracyWarning, match=r"rounding limits its relative accuracy.*interval='lanczos'"):
        expmv_chebyshev(-path_laplacian(300), b, 100.0, interval=(-4.0, 5.0))


@pytest.mark.parametrize("interval", [(-3.0, 0.0), (-4.0, -0.5)])
def test_interval_too_narrow_is_detected(interval):
    b = np.random.default_rng(6).standard_normal((300, 2))
    with pytest.raises(ValueError, match=r"interval \(-[34], -?0\.?5?\) does not contain the spectrum of A"):
        expmv_chebyshev(-path_laplacian(300), b, 100.0, interval=interval)


def test_lanczos_interval_and_its_fallback(monkeypatch):
    # Random symmetric matrix: Gershgorin is loose (width ~ n), Lanczos ~ the true spectrum.
    # Oracle: the eigendecomposition (eigh); relative tolerance 1e-12 (M within e^0.05 of ‖e^{tA}‖).
    rng = np.random.default_rng(7)
    a = rng.standard_normal((80, 80))
    a = (a + a.T) / 2
    eig, vectors = np.linalg.eigh(a)
    b = rng.standard_normal((80, 2))
    y, info = expmv_chebyshev(a, b, 1.5, interval="lanczos")
    lo, hi = info["interval"]
    radius = np.abs(a).sum(axis=1) - np.abs(np.diag(a))
    gershgorin_width = np.max(np.diag(a) + radius) - np.min(np.diag(a) - radius)
    assert lo <= eig[0] and eig[-1] <= hi and hi - lo < 0.5 * gershgorin_width
    assert info["matvecs"] > info["degree"] and info["interval_source"] == "lanczos"
    assert rel(y, vectors @ (np.exp(1.5 * eig)[:, None] * (vectors.T @ b))) <= 1e-12
    # One Lanczos step gives [α − β, α + β], which misses the spectrum of L_P300: growth is detected and
    # the method falls back to Gershgorin bounds (oracle: closed form).
    monkeypatch.setattr(_chebyshev, "LANCZOS_STEPS", 1)
    b = rng.standard_normal((300, 1))
    y, info = expmv_chebyshev(-path_laplacian(300), b, 20.0, interval="lanczos")
    assert info["interval_source"] == "gershgorin (lanczos bound failed)" and info["interval"] == (-4.0, 0.0)
    assert rel(y, path_heat(300, 20.0, b)) <= 1e-12


def test_result_tiny_relative_to_input_warns():
    # B orthogonal to the kernel of L: e^{−tL}B decays like e^{−tλ₂}; relative accuracy is then limited
    # by rounding relative to ‖B‖ (the documented absolute contract) and the method warns.
    b = np.cos(np.pi * (np.arange(300) + 0.5) / 300)[:, None]  # the λ₂ eigenvector, λ₂ ≈ 1.1e-4
    with pytest.warns(AccuracyWarning, match="absolute bound"):
        y, info = expmv_chebyshev(-path_laplacian(300), b, 2e5)
    assert np.abs(y).max() <= 1e-7  # e^{−2e5·λ₂} ≈ 2e-10, within the absolute bound
    assert info["error_estimate"] > 1e-8


def test_overflowing_scale_is_split_and_true_overflow_is_an_error():
    # Oracle: diagonal A (closed form e^{t a_i} b_i); e^{300·2.5} overflows float64 but the result doesn't.
    a = np.diag([1.0, 2.0, 2.5])
    b = np.full((3, 1), 1e-300)
    y, info = expmv_chebyshev(a, b, 300.0)
    exact = np.exp(300.0 * np.diag(a) + np.log(1e-300))
    assert info["log_scale"] == pytest.approx(750.0)
    # Contract: absolute in units of M‖B‖_F (≈ the largest component here), plus u·|ℓ| ≈ 1e-13 from
    # rounding ℓ = 750 inside e^ℓ; the dominant component is then accurate relative to itself.
    assert np.abs(y[:, 0] - exact).max() <= 1e-12 * exact.max()
    assert y[2, 0] == pytest.approx(exact[2], rel=1e-12)
    with pytest.raises(ValueError, match=r"exp\(tA\)B overflows float64"):
        expmv_chebyshev(a, np.ones((3, 1)), 300.0)


def test_trivial_cases_cost_nothing():
    lap = path_laplacian(10)
    b = np.random.default_rng(8).standard_normal((10, 2))
    y, info = expmv_chebyshev(-lap, b, 0.0)
    assert np.array_equal(y, b) and info["matvecs"] == 0
    y, info = expmv_chebyshev(-lap, np.zeros((10, 2)), 5.0)
    assert not y.any() and info["matvecs"] == 0
    y, info = expmv_chebyshev(3.0 * np.eye(10), b, 0.5)  # Gershgorin a = b: A = 3I, e^{1.5}B exactly
    np.testing.assert_allclose(y, math.exp(1.5) * b, rtol=1e-15)
    assert info["matvecs"] == 0
    y, _ = expmv_chebyshev(-lap, b[:, 0], 1.0)
    assert y.shape == (10,)


def test_matvecs_are_counted():
    # A LinearOperator counts its own calls; info["matvecs"] must agree.
    lap = path_laplacian(100)
    calls = []

    def matmat(x):
        calls.append(x.shape)
        return -(lap @ x)

    op = LinearOperator((100, 100), matvec=matmat, matmat=matmat, dtype=float)
    b = np.random.default_rng(9).standard_normal((100, 3))
    y, info = expmv_chebyshev(op, b, 50.0, interval=(-4.0, 0.0), assume_symmetric=True)
    assert info["matvecs"] == len(calls) == info["degree"]
    assert rel(y, path_heat(100, 50.0, b)) <= 1e-12


@settings(max_examples=40, deadline=None)
@given(
    entries=arrays(np.float64, (6, 6), elements=st.floats(-2, 2)),
    b=arrays(np.float64, (6, 2), elements=st.floats(-1, 1)),
    t=st.floats(-3, 3),
)
def test_random_symmetric_matches_spectral_reference(entries, b, t):
    # Oracle: the spectral theorem, V e^{tΛ} Vᵀ B from eigh (more accurate than Padé expm here: for
    # A = 0.875·11ᵀ, t = 3, scipy's expm is off by 2e-12 relative). Contract: ‖Y − e^{tA}B‖_F ≤
    # (ε_K + rounding)·M‖B‖_F, M = e^{log_scale}; 1e-12 leaves room for ~K·u rounding at degree ≤ 100.
    a = (entries + entries.T) / 2
    values, vectors = np.linalg.eigh(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)  # B may be orthogonal to the growing modes
        y, info = expmv_chebyshev(a, b, t)
    reference = vectors @ (np.exp(t * values)[:, None] * (vectors.T @ b))
    assert np.linalg.norm(y - reference) <= 1e-12 * math.exp(info["log_scale"]) * max(np.linalg.norm(b), 1e-300)
    assert info["log_scale"] <= t * (values[-1] if t > 0 else values[0]) + 1.1  # M ≤ e^{1.1}‖e^{tA}‖


def test_bad_input():
    lap = path_laplacian(5)
    b = np.ones((5, 1))
    with pytest.raises(ValueError, match=r"expmv_chebyshev needs a symmetric A"):
        expmv_chebyshev(np.triu(np.ones((5, 5))), b, 1.0)
    with pytest.raises(
        ValueError, match=r"interval must be a pair \(a, b\) of finite real numbers with a < b, got \(1.0, 1.0\)"
    ):
        expmv_chebyshev(-lap, b, 1.0, interval=(1.0, 1.0))
    with pytest.raises(ValueError, match=r"interval must be None, 'auto', 'gershgorin', 'lanczos' or a pair"):
        expmv_chebyshev(-lap, b, 1.0, interval="exact")
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\), got 0.0"):
        expmv_chebyshev(-lap, b, 1.0, tol=0.0)
    with pytest.raises(ValueError, match=r"op columns and B rows must have matching sizes, got 5 and 4"):
        expmv_chebyshev(-lap, np.ones((4, 1)), 1.0)
    with pytest.raises(ValueError, match=r"t must be in \(-inf, inf\), got nan"):
        expmv_chebyshev(-lap, b, float("nan"))
    with pytest.raises(ValueError, match=r"B must be finite"):
        expmv_chebyshev(-lap, np.full((5, 1), np.inf), 1.0)
