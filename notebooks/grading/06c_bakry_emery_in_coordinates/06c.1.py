"""Tests of exercise 06c.1: Γ and Γ₂ of the height on the unit sphere, and where Γ₂/Γ is smallest."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "06c.1"
points = 5

SAMPLES = [(0.4, 0.7), (1.1, 1.3), (2.6, 0.45)]  # (ϑ, ħ) pairs; ħ ≠ 1 so that a dropped ħ is seen


def _values(expr):
    expr = sp.sympify(expr)
    names = {s.name: s for s in expr.free_symbols}
    unknown = set(names) - {"vartheta", "hbar", "varphi"}
    assert not unknown, f"unexpected symbols {sorted(unknown)}: use vartheta and hbar of the exercise cell"
    out = []
    for theta, hbar in SAMPLES:
        subs = {names[n]: v for n, v in (("vartheta", theta), ("hbar", hbar), ("varphi", 0.3)) if n in names}
        out.append(float(expr.subs(subs)))
    return np.array(out)


def _check(expr, oracle, what):
    got = _values(expr)
    want = np.array([oracle(theta, hbar) for theta, hbar in SAMPLES])
    # closed forms evaluated in double precision: 1e-10 is rounding only
    assert np.abs(got - want).max() < 1e-10, (
        f"{what}: expected {np.round(want, 6)} at (ϑ, ħ) = {SAMPLES}, got {np.round(got, 6)}"
    )


@test_case(points=1)
def test_keys(answer_06c_1):
    keys = {"gamma", "gamma2", "bochner_ricci_free", "min_ratio", "argmin"}
    assert isinstance(answer_06c_1, dict) and keys <= set(answer_06c_1), (
        f"answer_06c_1 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=1)
def test_gamma(answer_06c_1):
    # oracle: Γ(z) = ħ|∇z|² = ħ sin²ϑ on the unit sphere
    _check(answer_06c_1["gamma"], lambda t, h: h * np.sin(t) ** 2, "Γ(z) should be ħ sin²ϑ (keep ħ in the generator)")


@test_case(points=1)
def test_gamma2(answer_06c_1):
    # oracle: Bochner with Ric = G and Hess z = −zG: ħ²(2cos²ϑ + sin²ϑ) = ħ²(1 + cos²ϑ)
    _check(answer_06c_1["gamma2"], lambda t, h: h**2 * (1 + np.cos(t) ** 2), "Γ₂(z) should be ħ²(1 + cos²ϑ)")
    _check(
        answer_06c_1["bochner_ricci_free"],
        lambda t, h: 2 * h**2 * np.cos(t) ** 2,
        "the Ricci-free Bochner form should be ħ²‖Hess z‖² = 2ħ²cos²ϑ (ricci=False)",
    )


@test_case(points=2)
def test_minimum(answer_06c_1):
    # oracle: Γ₂/Γ = (1 + z²)/(1 − z²) at ħ = 1, smallest (= 1) on the equator ϑ = π/2;
    # a grid search resolves the argmin to its spacing, so 1e-3 rad and 1e-6 in the value
    assert abs(float(answer_06c_1["min_ratio"]) - 1) < 1e-6, (
        f"the minimum of Γ₂/Γ at ħ = 1 should be 1, got {answer_06c_1['min_ratio']}"
    )
    assert abs(float(answer_06c_1["argmin"]) - np.pi / 2) < 1e-3, (
        f"the minimum should be on the equator ϑ = π/2 ≈ 1.5708, got ϑ = {answer_06c_1['argmin']}; search all of (0, π)"
    )
