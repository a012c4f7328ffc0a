"""Tests of exercise 04.2: the Gaussian-tail jump fraction, in closed form and on a 1-D sample."""

import numpy as np
import scipy.special
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "04.2"
points = 5

C_TEST = np.linspace(0, 4, 17)


def _measured(points, beta, c_grid):
    """Jump fraction ½Σ_{d>r}K(f_i − f_j)² / ½ΣK(f_i − f_j)² at r = c/√β, f = sin 2πx, recomputed over all pairs."""
    x = np.asarray(points, float).ravel()
    i, j = np.triu_indices(x.size, 1)
    d = np.abs(x[i] - x[j])
    f = np.sin(2 * np.pi * x)
    energy = np.exp(-beta * d**2) * (f[i] - f[j]) ** 2
    order = np.argsort(d)
    tail = np.cumsum(energy[order][::-1])[::-1]  # tail[m] = Σ of the energies of the bonds order[m:]
    first_beyond = np.searchsorted(d[order], np.asarray(c_grid) / np.sqrt(beta), side="right")
    beyond = np.append(tail, 0.0)[first_beyond]
    return beyond / energy.sum()


@test_case(points=1)
def test_keys(answer_04_2):
    keys = {"closed_forms", "points", "beta", "c_grid", "measured", "predicted"}
    assert isinstance(answer_04_2, dict), "answer_04_2 should be a dict"
    missing = keys - set(answer_04_2)
    assert not missing, f"answer_04_2 lacks the keys {sorted(missing)}"
    assert {int(m) for m in answer_04_2["closed_forms"]} == {1, 2}, "closed_forms should have the keys m = 1 and 2"


@test_case(points=1)
def test_closed_forms(answer_04_2):
    for m, expression in answer_04_2["closed_forms"].items():
        expression = sp.sympify(expression)
        symbols = {str(x): x for x in expression.free_symbols}
        assert set(symbols) <= {"c"}, f"the closed form for m = {m} should depend on c only, it has {sorted(symbols)}"
        function = sp.lambdify(symbols.get("c", sp.Symbol("c")), expression, "scipy")
        got = np.broadcast_to(np.asarray(function(C_TEST), float), C_TEST.shape)
        expected = scipy.special.gammaincc(m / 2 + 1, C_TEST**2)  # oracle: the regularised upper Γ(m/2 + 1, c²)
        assert np.abs(got - expected).max() < 1e-12, (
            f"the jump fraction for m = {m} should equal Γ(m/2 + 1, c²)/Γ(m/2 + 1) on c ∈ [0, 4]; yours differs by "
            f"{np.abs(got - expected).max():.1e}"
        )


@test_case(points=1)
def test_predicted(answer_04_2):
    c_grid = np.asarray(answer_04_2["c_grid"], float)
    assert c_grid.min() == 0 and c_grid.max() == 4, "c_grid should run from 0 to 4"
    expected = scipy.special.gammaincc(1.5, c_grid**2)  # m = 1: erfc(c) + 2c e^{−c²}/√π
    assert np.abs(np.asarray(answer_04_2["predicted"], float) - expected).max() < 1e-12, (
        "predicted should be erfc(c) + (2c/√π) e^{−c²} on c_grid (the m = 1 tail)"
    )


@test_case(points=1)
def test_measured(answer_04_2):
    points, beta = np.asarray(answer_04_2["points"], float), float(answer_04_2["beta"])
    assert points.size == 1500 and beta == 400.0, "the exercise uses 1500 points of [0, 1] and β = 400"
    c_grid = np.asarray(answer_04_2["c_grid"], float)
    expected = _measured(points, beta, c_grid)  # oracle: the edge sums by hand, over all pairs
    got = np.asarray(answer_04_2["measured"], float)
    # sums of ~1e6 positive terms in two orders: agreement to ~1e-12; 1e-9 leaves room and rejects any other
    # radius, kernel or function
    assert got.shape == expected.shape and np.abs(got - expected).max() < 1e-9, (
        "measured should be jump/total of the Gauss kernel exp(−β d²) at the radii r = c/√β, "
        "with d the distances (not squared) and f = sin 2πx"
    )


@test_case(points=1)
def test_measured_follows_tail(answer_04_2):
    gap = np.abs(np.asarray(answer_04_2["measured"]) - np.asarray(answer_04_2["predicted"])).max()
    # finite-sample and boundary effects at 1500 points and kernel width 1/√(2β) ≈ 0.035 are below 0.03
    assert gap < 0.03, f"the measured jump fraction should follow the Gaussian tail within 0.03, max gap {gap:.3f}"
