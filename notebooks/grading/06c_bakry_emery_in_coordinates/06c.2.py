"""Tests of exercise 06c.2: Γ₂ on the line with a potential, the bound K = 2 inf Φ'' and the spectral gap."""

import numpy as np
import scipy.linalg
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "06c.2"
points = 6

HBAR = sp.Rational(3, 5)
POINTS = (-0.9, 0.2, 1.3)


def _levels():
    """Two lowest levels of −d²/dx² + Φ'² − Φ'', Φ = x⁴/4 + x²/2, on 2000 interior points of [−6, 6] (closed-form V)."""
    grid = np.linspace(-6, 6, 2002)[1:-1]
    dx = grid[1] - grid[0]
    V = (grid**3 + grid) ** 2 - (3 * grid**2 + 1)
    return scipy.linalg.eigh_tridiagonal(
        2 / dx**2 + V, np.full(grid.size - 1, -1 / dx**2), eigvals_only=True, select="i", select_range=(0, 1)
    )


@test_case(points=1)
def test_keys(answer_06c_2):
    keys = {"gamma2", "K", "levels", "K_double_well"}
    assert isinstance(answer_06c_2, dict) and keys <= set(answer_06c_2), (
        f"answer_06c_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=2)
def test_gamma2(answer_06c_2):
    expr = sp.sympify(answer_06c_2["gamma2"])
    names = {s.name: s for s in expr.free_symbols}
    names.update({type(a).__name__: a for a in expr.atoms(sp.core.function.AppliedUndef)})
    assert {"x", "Phi", "f"} <= set(names), "gamma2 should be in the symbols x, hbar, Phi(x), f(x) of the exercise cell"
    x = names["x"]
    phi, f = x**3 / 3 - sp.cos(x), sp.sin(2 * x) + x**2
    value = expr.subs({names["Phi"]: phi, names["f"]: f}).doit()
    if "hbar" in names:
        value = value.subs(names["hbar"], HBAR)
    oracle = HBAR**2 * f.diff(x, 2) ** 2 + 2 * HBAR * phi.diff(x, 2) * f.diff(x) ** 2  # the hand derivation
    for p in POINTS:
        got, want = float(value.subs(x, p)), float(oracle.subs(x, p))
        # exact expressions in double precision: 1e-9 is rounding only
        assert abs(got - want) < 1e-9, (
            f"Γ₂(f) at x = {p} (Φ = x³/3 − cos x, f = sin 2x + x², ħ = 3/5) should be ħ²f''² + 2ħΦ''f'² = {want:.6f}, "
            f"got {got:.6f}; build 𝓛 with diffusion_generator(line, Phi, hbar)"
        )


@test_case(points=1)
def test_bounds(answer_06c_2):
    # oracle: K = 2 inf Φ''; Φ'' = 3x² + 1 ≥ 1 for the quartic, Φ'' = 3x² − 1 ≥ −1 for the double well
    assert abs(float(answer_06c_2["K"]) - 2) < 1e-12, (
        f"K should be 2 inf Φ'' = 2 for Φ = x⁴/4 + x²/2, got {answer_06c_2['K']}"
    )
    assert abs(float(answer_06c_2["K_double_well"]) + 2) < 1e-12, (
        f"K_double_well should be 2 inf Φ'' = −2, got {answer_06c_2['K_double_well']}"
    )


@test_case(points=2)
def test_levels(answer_06c_2):
    levels = np.asarray(answer_06c_2["levels"], float)
    assert levels.shape == (2,), "levels should hold λ₀ and λ₁"
    oracle = _levels()
    # a grid of 2000 points with or without the ends differs by O(Δx²)·ΔΔx/Δx ≪ 1e-4; the Witten operator's
    # own discretisation error is ~1e-4, so 1e-4 accepts either reading of "2000 points" and nothing else
    assert np.abs(levels - oracle).max() < 1e-4, (
        f"the two lowest levels of −d²/dx² + Φ'² − Φ'' should be about {np.round(oracle, 5)}, got {np.round(levels, 5)}"
    )
    assert levels[1] - levels[0] > 2, "the gap λ₁ − λ₀ should exceed the bound K = 2"
