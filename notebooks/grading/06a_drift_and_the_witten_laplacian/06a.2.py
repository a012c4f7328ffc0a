"""Tests of exercise 06a.2: the factorisation H = Q*Q, the partner QQ* and their common levels."""

import numpy as np
import scipy.linalg
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "06a.2"
points = 6

POINTS = (-0.8, 0.35, 1.4)
HBAR = sp.Rational(7, 10)


def _evaluate(expr, phi_test=None):
    """Substitute Φ = x³/3 + sin x (or phi_test), u = e^{−x²}cos 2x, ħ = 7/10 by name; return (values, x)."""
    expr = sp.sympify(expr)
    names = {s.name: s for s in expr.free_symbols}
    names.update({type(a).__name__: a for a in expr.atoms(sp.core.function.AppliedUndef)})
    unknown = set(names) - {"x", "hbar", "Phi", "u"}
    assert not unknown, f"unexpected symbols {sorted(unknown)}: use x, hbar, Phi(x), u(x) of the exercise cell"
    x = names.get("x", sp.Symbol("x", real=True))  # a constant (e.g. a simplified 0) has no x
    phi = x**3 / 3 + sp.sin(x) if phi_test is None else phi_test(x)
    u = sp.exp(-(x**2)) * sp.cos(2 * x)
    subs = {}
    if "Phi" in names:
        subs[names["Phi"]] = phi
    if "u" in names:
        subs[names["u"]] = u
    value = expr.subs(subs).doit()
    if "hbar" in names:
        value = value.subs(names["hbar"], HBAR)
    return [complex(value.subs(x, p).evalf()) for p in POINTS], phi, u, x


def _check(expr, expected, what, phi_test=None):
    values, phi, u, x = _evaluate(expr, phi_test)
    target = expected(phi, u, x)
    for p, got in zip(POINTS, values, strict=True):
        want = complex(target.subs(x, p).evalf())
        # exact expressions evaluated in double precision: 1e-9 is rounding only
        assert abs(got - want) < 1e-9, (
            f"{what} is wrong at x = {p} (Φ = x³/3 + sin x, ħ = 7/10): expected {want.real:.6f}, got {got.real:.6f}"
        )


def _levels(potential):
    grid = np.linspace(-4, 4, 2002)[1:-1]  # the grid of Exercise 06a.1
    dx = grid[1] - grid[0]
    return scipy.linalg.eigh_tridiagonal(
        2 / dx**2 + potential(grid),
        np.full(grid.size - 1, -1 / dx**2),
        eigvals_only=True,
        select="i",
        select_range=(0, 4),
    )


@test_case(points=1)
def test_keys(answer_06a_2):
    keys = {"QstarQ", "QQstar", "Q_ground", "commutator_well", "levels_H", "levels_partner"}
    assert isinstance(answer_06a_2, dict) and keys <= set(answer_06a_2), (
        f"answer_06a_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=1)
def test_factorisation(answer_06a_2):
    # oracle: H = −ħ d²/dx² + Φ'²/ħ − Φ'' applied to u
    _check(
        answer_06a_2["QstarQ"],
        lambda phi, u, x: -HBAR * u.diff(x, 2) + (phi.diff(x) ** 2 / HBAR - phi.diff(x, 2)) * u,
        "Q*Qu (should be −ħu'' + (Φ'²/ħ − Φ'')u; Q* = −√ħ d/dx + Φ'/√ħ)",
    )
    values, *_ = _evaluate(answer_06a_2["Q_ground"])
    assert max(abs(v) for v in values) < 1e-9, "Q e^(−Φ/ħ) should simplify to 0"


@test_case(points=2)
def test_partner(answer_06a_2):
    # oracle: the partner QQ* = −ħ d²/dx² + Φ'²/ħ + Φ'' (the sign of Φ'' flips)
    _check(
        answer_06a_2["QQstar"],
        lambda phi, u, x: -HBAR * u.diff(x, 2) + (phi.diff(x) ** 2 / HBAR + phi.diff(x, 2)) * u,
        "QQ*u (should be −ħu'' + (Φ'²/ħ + Φ'')u)",
    )
    # oracle: for Φ = x²/2 the two orderings differ by 2Φ''u = 2u
    _check(answer_06a_2["commutator_well"], lambda phi, u, x: 2 * u, "QQ*u − Q*Qu for Φ = x²/2 (should be 2u)")


@test_case(points=2)
def test_levels(answer_06a_2):
    H = np.asarray(answer_06a_2["levels_H"], float)
    partner = np.asarray(answer_06a_2["levels_partner"], float)
    assert H.shape == (5,) and partner.shape == (5,), "levels_H and levels_partner should hold five eigenvalues each"

    # oracle: the double well Φ = (x² − 1)²/4 at ħ = 1, V∓ = Φ'² ∓ Φ'' in closed form, same grid as Exercise 06a.1;
    # the same tridiagonal problem solved again agrees far below 1e-8
    def phi1(x):
        return x**3 - x

    oracle_H = _levels(lambda x: phi1(x) ** 2 - (3 * x**2 - 1))
    oracle_partner = _levels(lambda x: phi1(x) ** 2 + (3 * x**2 - 1))
    assert np.abs(H - oracle_H).max() < 1e-8, f"levels_H should be {np.round(oracle_H, 5)}, got {np.round(H, 5)}"
    assert np.abs(partner - oracle_partner).max() < 1e-8, (
        f"levels_partner should be the five lowest levels of −d²/dx² + Φ'² + Φ'' (starting with the lowest), "
        f"{np.round(oracle_partner, 5)}; got {np.round(partner, 5)}"
    )
    # isospectrality up to the two O(Δx²) discretisation errors (~1e-4 each)
    assert np.abs(H[1:] - partner[:4]).max() < 1e-3, "λ₁…λ₄ of H should equal the four lowest levels of the partner"
