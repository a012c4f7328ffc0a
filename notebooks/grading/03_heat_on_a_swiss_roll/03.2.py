"""Tests of exercise 03.2: arc length and sampling density of the Swiss roll's spiral."""

import numpy as np
import scipy.integrate
import scipy.optimize
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "03.2"
points = 6

T0, T1 = 3 * np.pi / 2, 9 * np.pi / 2


def _function_of_t(expression):
    """A sympy expression in the symbol named t, as a float function (the symbol matched by name)."""
    expression = sp.sympify(expression)
    symbols = {str(x): x for x in expression.free_symbols}
    assert set(symbols) <= {"t"}, f"the expression should depend on t only, it has the symbols {sorted(symbols)}"
    return sp.lambdify(symbols.get("t", sp.Symbol("t")), expression, "numpy")


def _arc_length(t):
    """s(t) − s(t₀) by adaptive quadrature of the speed √(1 + t²): an oracle that uses no closed form."""
    return scipy.integrate.quad(lambda x: np.sqrt(1 + x * x), T0, t, epsabs=1e-13)[0]


@test_case(points=1)
def test_keys(answer_03_2):
    keys = {"speed_squared", "arc_length", "ell", "ell_quad", "ratio", "s", "edges", "observed", "expected"}
    assert isinstance(answer_03_2, dict), "answer_03_2 should be a dict"
    missing = keys - set(answer_03_2)
    assert not missing, f"answer_03_2 lacks the keys {sorted(missing)}"


@test_case(points=1)
def test_speed_and_arc_length(answer_03_2):
    speed2 = _function_of_t(answer_03_2["speed_squared"])
    arc = sp.sympify(answer_03_2["arc_length"])
    (t,) = [x for x in arc.free_symbols if str(x) == "t"] or [sp.Symbol("t")]
    derivative = sp.lambdify(t, sp.diff(arc, t), "numpy")
    for value in (0.5, T0, 7.0, T1):
        # oracle: |c'(t)|² = 1 + t² for c(t) = (t cos t, t sin t); s'(t) must be the speed
        assert abs(speed2(value) - (1 + value**2)) < 1e-9 * (1 + value**2), (
            f"|c'(t)|² should be 1 + t²; yours gives {speed2(value):.6g} at t = {value:.3g}"
        )
        assert abs(derivative(value) - np.sqrt(1 + value**2)) < 1e-9 * value, (
            f"the arc length s(t) should have s'(t) = √(1 + t²); yours gives {derivative(value):.6g} at t = {value:.3g}"
        )


@test_case(points=1)
def test_ell(answer_03_2):
    expected = _arc_length(T1)  # ≈ 89.0; Gauss–Kronrod on a smooth integrand, error ≪ 1e-10
    for key in ("ell", "ell_quad"):
        assert abs(answer_03_2[key] - expected) < 1e-9, (
            f"{key} should be the length of the spiral for t ∈ [3π/2, 9π/2], {expected:.10f}; got {answer_03_2[key]}"
        )


@test_case(points=1)
def test_ratio(answer_03_2):
    expected = np.sqrt(1 + T1**2) / np.sqrt(1 + T0**2)  # oracle: ρ ∝ 1/√(1 + t²), densest on the inner turn t₀
    assert abs(answer_03_2["ratio"] - expected) < 1e-12, (
        f"the inner/outer density ratio √(1 + t₁²)/√(1 + t₀²) is {expected:.6f}, got {answer_03_2['ratio']}"
    )


@test_case(points=1)
def test_histogram(answer_03_2):
    s, edges = np.asarray(answer_03_2["s"], float), np.asarray(answer_03_2["edges"], float)
    observed = np.asarray(answer_03_2["observed"])
    assert np.array_equal(observed, np.histogram(s, bins=edges)[0]), "observed should be np.histogram(s, bins=edges)[0]"
    assert observed.sum() == s.size, "the bins should cover all samples: edges from 0 to ℓ"


@test_case(points=1)
def test_expected_counts(answer_03_2):
    s, edges = np.asarray(answer_03_2["s"], float), np.asarray(answer_03_2["edges"], float)
    # oracle: invert s(t) by root finding on the quadrature; a bin [a, b] of s holds n (t(b) − t(a))/(t₁ − t₀) samples
    ell = _arc_length(T1)

    def parameter(arc):
        if arc <= 0 or arc >= ell:
            return T0 if arc <= 0 else T1
        return scipy.optimize.brentq(lambda t: _arc_length(t) - arc, T0, T1, xtol=1e-13)

    t_edges = [parameter(e) for e in edges]
    expected = s.size * np.diff(t_edges) / (T1 - T0)
    got = np.asarray(answer_03_2["expected"], float)
    assert got.shape == expected.shape and np.abs(got - expected).max() < 1e-6 * expected.max(), (
        "the expected count of a bin [a, b] of s is n (t(b) − t(a))/(t₁ − t₀): uniform in t, not in s"
    )
    z = (np.asarray(answer_03_2["observed"]) - expected) / np.sqrt(expected)
    assert np.abs(z).max() < 5, "the observed counts should follow the expected ones within Poisson noise (< 5σ)"
