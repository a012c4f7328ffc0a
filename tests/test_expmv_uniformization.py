import math
import warnings

import mpmath
import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.sparse.linalg import LinearOperator

from workbench.backend import to_backend, to_numpy
from workbench.expmv._banded import BandedMatrix, banded_markov_generator
from workbench.expmv._linear import AccuracyWarning
from workbench.expmv._uniformization import expmv_uniformization, poisson_truncation


def random_generator(rng, n, density=0.4, spread=0.0):
    """Q = W − diag(W1) with W ≥ 0 off the diagonal; rates spread over 10^±spread."""
    w = rng.random((n, n)) * (rng.random((n, n)) < density) * 10.0 ** (spread * rng.uniform(-1, 1, (n, n)))
    np.fill_diagonal(w, 0.0)
    return w - np.diag(w.sum(axis=1))


def stationary(q):
    """π with πQ = 0, π1 = 1 (dense solve; oracle for the long-time limit e^{tQ} → 1π)."""
    n = q.shape[0]
    system = np.vstack([q.T, np.ones((1, n))])
    return np.linalg.lstsq(system, np.r_[np.zeros(n), 1.0], rcond=None)[0]


class CountingBanded(BandedMatrix):
    """A BandedMatrix that counts its block products (to check info['matvecs'])."""

    calls = 0

    def matmat(self, x):
        type(self).calls += 1
        return super().matmat(x)


# ---- Poisson weights ------------------------------------------------------------------------------


@pytest.mark.parametrize("mean", [1e-3, 1.0, 30.0, 1e3, 1e5])
def test_poisson_weights_against_mpmath(mean):
    # Oracle: 40-digit pmf ratios π_k/π_L from mpmath; the log-space recursion keeps ~1e-13 relative accuracy
    # even at Λ = 1e5, where -Λ + k log Λ - log k! would lose 5 digits.
    mpmath.mp.dps = 40
    left, right, w = poisson_truncation(mean, 1e-14)
    lam = mpmath.mpf(mean)
    ks = np.unique(np.linspace(left, right, 25).astype(int))
    exact_total = mpmath.fsum(mpmath.exp(-lam) * lam**k / mpmath.factorial(k) for k in range(left, right + 1))
    for k in ks:
        exact = mpmath.exp(-lam) * lam ** int(k) / mpmath.factorial(int(k)) / exact_total
        assert w[k - left] == pytest.approx(float(exact), rel=1e-12)
    assert math.fsum(w) == pytest.approx(1.0, abs=4e-16)


@pytest.mark.parametrize(("mean", "tol"), [(0.5, 1e-10), (50.0, 1e-16), (1e4, 2.0**-53), (1e6, 1e-12)])
def test_truncation_points_are_the_tightest_within_tol(mean, tol):
    # Oracle: scipy.stats.poisson cdf/sf (regularised incomplete gamma); each tail ≤ tol/2, and moving
    # either point inward would exceed it.
    left, right, _ = poisson_truncation(mean, tol)
    law = scipy.stats.poisson(mean)
    below, above = (law.cdf(left - 1) if left > 0 else 0.0), law.sf(right)
    assert below <= tol / 2 and above <= tol / 2
    assert left == 0 or law.cdf(left) > tol / 2
    assert law.sf(right - 1) > tol / 2


def test_poisson_zero_mean_and_bad_input():
    assert poisson_truncation(0.0)[:2] == (0, 0)
    with pytest.raises(ValueError, match=r"mean must be in \[0, inf\), got -1.0"):
        poisson_truncation(-1.0)
    with pytest.raises(ValueError, match=r"tol must be in \(0, 1\), got 1.0"):
        poisson_truncation(1.0, tol=1.0)


# ---- agreement with references -------------------------------------------------------------------


@pytest.mark.parametrize("t", [0.01, 0.5, 3.0])
def test_dense_expm_agreement(rng, backend, t):
    # Oracle: scipy.linalg.expm; ‖tQ‖ ≤ 30 keeps Padé accurate. Max-norm contract: tol·‖b‖_∞ + rounding.
    q = random_generator(rng, 25)
    b = rng.standard_normal((25, 3))
    y, info = expmv_uniformization(to_backend(q, backend), to_backend(b, backend), t)
    reference = scipy.linalg.expm(t * q) @ b
    assert np.abs(to_numpy(y) - reference).max() <= 1e-13 * np.abs(b).max()
    assert info["method"] == "uniformization" and info["error_bound"] <= 2.0**-53


def test_two_state_closed_form_at_large_qt():
    # Oracle: e^{tQ} = (1π) + e^{−(a+b)t}(I − 1π) for the two-state chain, π = (b, a)/(a+b).
    a, b, t = 3.0, 1.0, 2500.0  # qt ≈ 7500
    q = np.array([[-a, a], [b, -b]])
    y, _ = expmv_uniformization(q, np.eye(2), t)
    pi = np.array([b, a]) / (a + b)
    exact = np.ones((2, 1)) * pi + math.exp(-(a + b) * t) * (np.eye(2) - np.ones((2, 1)) * pi)
    np.testing.assert_allclose(y, exact, rtol=1e-13, atol=0)


def test_long_time_limit_is_the_stationary_law(rng):
    # Oracle: e^{tQ}B → 1(πB) (dense stationary solve) once e^{−gap·t} < 1e-16.
    q = random_generator(rng, 30)
    gap = np.sort(-np.linalg.eigvals(q).real)[1]
    t = 40.0 / gap
    b = rng.random((30, 2))
    y, info = expmv_uniformization(q, b, t)
    np.testing.assert_allclose(y, np.ones((30, 1)) * (stationary(q) @ b), rtol=1e-12, atol=0)
    assert info["poisson_mean"] > 100


def test_semigroup_law(rng):
    # Law: e^{sQ}e^{tQ}B = e^{(s+t)Q}B, independent of any reference exponential.
    q = random_generator(rng, 20)
    b = rng.standard_normal((20, 2))
    inner, _ = expmv_uniformization(q, b, 0.7)
    lhs, _ = expmv_uniformization(q, inner, 1.1)
    rhs, _ = expmv_uniformization(q, b, 1.8)
    assert np.abs(lhs - rhs).max() <= 1e-13 * np.abs(b).max()


# ---- structure kept exactly -----------------------------------------------------------------------


@pytest.mark.parametrize("t", [0.1, 10.0, 400.0])
def test_ones_preserved_and_nonnegativity_at_large_qt(backend, t):
    # By construction: convex combination of stochastic P^k with P1 = 1 bit for bit. qt reaches ~4e3.
    q = banded_markov_generator(300, 4, seed=3)
    if backend != "numpy":
        q = BandedMatrix(q.offsets, to_backend(q.diagonals, backend))
    rng = np.random.default_rng(0)
    b = np.where(rng.random((300, 3)) < 0.5, 0.0, rng.random((300, 3)) * 10.0 ** rng.uniform(-300, 0, (300, 3)))
    b[:, 0] = 1.0
    y, info = expmv_uniformization(q, to_backend(b, backend), t)
    y = to_numpy(y)
    assert np.abs(y[:, 0] - 1.0).max() <= 1e-14
    assert y.min() >= 0.0
    if t == 400.0:
        assert info["poisson_mean"] > 3e3


def test_nonnegative_with_rates_over_twelve_decades(rng):
    # Stiff rates (1e-6..1e6) and a row at exactly the uniformization rate: the 2^-20 margin keeps P ≥ 0
    # through rounding. Exact property (min ≥ 0), and 1 preserved to 1e-14.
    q = random_generator(rng, 40, density=0.6, spread=6.0)
    b = np.zeros((40, 2))
    b[int(np.argmin(np.diag(q))), 0] = 1.0  # mass only at the fastest state
    b[:, 1] = 1.0
    y, _ = expmv_uniformization(q, b, 1e-3)
    assert y.min() >= 0.0
    assert np.abs(y[:, 1] - 1.0).max() <= 1e-14


def test_matvecs_are_qt_plus_order_sqrt_qt():
    # Cost model: R ≈ qt + sqrt(2 qt log(4/tol)) products, +1 for r = Q1; counted by the operator itself.
    base = banded_markov_generator(50, 2, seed=1)
    q = CountingBanded(base.offsets, base.diagonals)
    top = float(np.max(-q.diagonal()))
    for mean in (100.0, 4000.0):
        CountingBanded.calls = 0
        _, info = expmv_uniformization(q, np.ones((50, 1)), mean / top)
        assert info["matvecs"] == CountingBanded.calls == info["right"] + 1
        excess = (info["right"] - info["poisson_mean"]) / math.sqrt(info["poisson_mean"])
        assert 0 < excess < 12


@settings(max_examples=30, deadline=None)
@given(
    rates=arrays(np.float64, (5, 5), elements=st.floats(0, 3)),
    b=arrays(np.float64, (5, 2), elements=st.floats(0, 1)),
    t=st.floats(0, 4),
)
def test_random_generators_property(rates, b, t):
    # Properties: Y ≥ 0 for B ≥ 0, exp(tQ)1 = 1; agreement with dense expm (oracle) in the max-norm contract.
    q = rates - np.diag(np.diag(rates))
    q -= np.diag(q.sum(axis=1))
    y, _ = expmv_uniformization(q, b, t)
    ones, _ = expmv_uniformization(q, np.ones((5, 1)), t)
    assert y.min() >= 0.0
    assert np.abs(ones - 1.0).max() <= 1e-14
    assert np.abs(y - scipy.linalg.expm(t * q) @ b).max() <= 1e-13 * max(np.abs(b).max(), 1e-300)


def test_float32_and_torch_agree_with_numpy(rng):
    torch = pytest.importorskip("torch")
    # Oracle: the float64 numpy run. torch float64: same arithmetic → 1e-14; float32: u = 6e-8 times
    # ~sqrt(R) accumulated roundings → 1e-5 is the stated tolerance.
    q = banded_markov_generator(200, 3, seed=2)
    b = rng.random((200, 2))
    y64, _ = expmv_uniformization(q, b, 5.0)
    qt = BandedMatrix(q.offsets, torch.as_tensor(q.diagonals))
    yt, _ = expmv_uniformization(qt, torch.as_tensor(b), 5.0)
    assert isinstance(yt, torch.Tensor)
    np.testing.assert_allclose(to_numpy(yt), y64, rtol=1e-14, atol=0)
    q32 = BandedMatrix(q.offsets, q.diagonals.astype(np.float32))
    y32, _ = expmv_uniformization(q32, b.astype(np.float32), 5.0)
    assert y32.dtype == np.float32 and y32.min() >= 0
    np.testing.assert_allclose(y32, y64, rtol=1e-5, atol=0)


def test_decayed_mean_zero_input_warns():
    # A mean-zero (under π) input decays to ~0: accuracy only relative to ‖b‖_∞, and the warning says so.
    q = banded_markov_generator(20, 3, seed=4)
    dense = q.to_scipy().toarray()
    gap = np.sort(-np.linalg.eigvals(dense).real)[1]
    b = np.random.default_rng(1).standard_normal((20, 1))
    b -= stationary(dense) @ b
    with pytest.warns(AccuracyWarning, match=r"mean-zero part has decayed"):
        y, _ = expmv_uniformization(q, b, 25.0 / gap)  # decays like e^{-25}
    assert np.abs(y).max() <= 1e-9 * np.abs(b).max()


def test_trivial_cases():
    q = np.array([[-1.0, 1.0], [2.0, -2.0]])
    b = np.array([[1.0], [3.0]])
    y, info = expmv_uniformization(q, b, 0.0)
    assert np.array_equal(y, b) and info["matvecs"] == 0
    y, info = expmv_uniformization(np.zeros((2, 2)), b, 5.0)
    assert np.array_equal(y, b) and info["matvecs"] == 0
    y, _ = expmv_uniformization(q, b[:, 0], 1.0)
    assert y.shape == (2,)


def test_errors_name_the_problem():
    b = np.ones((2, 1))
    with pytest.raises(ValueError, match=r"t must be in \[0, inf\) for uniformization .* got -1.0"):
        expmv_uniformization(np.array([[-1.0, 1.0], [1.0, -1.0]]), b, -1.0)
    with pytest.raises(ValueError, match=r"needs a Markov generator .*negative off-diagonal rate A\[1, 0\] = -0.5"):
        expmv_uniformization(np.array([[-1.0, 1.0], [-0.5, 0.5]]), b, 1.0)
    with pytest.raises(ValueError, match=r"row 0 of A sums to 0.5, not 0"):
        expmv_uniformization(np.array([[-0.5, 1.0], [1.0, -1.0]]), b, 1.0)
    with pytest.raises(ValueError, match=r"-A is a generator: a positive generator L = I - P must be passed as Q = -L"):
        expmv_uniformization(np.array([[1.0, -1.0], [-2.0, 2.0]]), b, 1.0)
    op = LinearOperator((2, 2), matvec=lambda x: x, dtype=float)
    with pytest.raises(ValueError, match=r"linear-operator operator whose entries cannot be inspected"):
        expmv_uniformization(op, b, 1.0)
    with pytest.raises(ValueError, match=r"needs \d+ block products for qt = 1e\+06.*more than max_matvecs = 1000"):
        expmv_uniformization(np.array([[-1.0, 1.0], [1.0, -1.0]]), b, 1e6 / (1 + 2.0**-20), max_matvecs=1000)
    with pytest.raises(ValueError, match=r"op columns and B rows must have matching sizes, got 2 and 3"):
        expmv_uniformization(np.array([[-1.0, 1.0], [1.0, -1.0]]), np.ones(3), 1.0)


def test_no_warning_for_nonnegative_inputs():
    # Nonnegative B keeps ‖y_j‖_∞ ≥ min-row-mass > 0: the estimate stays at rounding level, no warning.
    q = banded_markov_generator(80, 2, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        _, info = expmv_uniformization(q, np.random.default_rng(2).random((80, 2)), 50.0)
    assert info["error_estimate"] < 1e-12
