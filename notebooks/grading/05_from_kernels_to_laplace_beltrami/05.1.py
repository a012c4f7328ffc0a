"""Tests of exercise 05.1: the α = ¼ and α = ¾ generators, their bias rate and a negative control."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "05.1"
points = 5

ALPHAS = (0.25, 0.75)


def _slope(xs, ys):
    """Least-squares slope of log ys against log xs (an independent refit, not workbench.fit_rate)."""
    return np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)[0]


def _by_name(expr):
    """The symbols and undefined functions of an expression, by name."""
    names = {s.name: s for s in expr.free_symbols}
    names.update({type(a).__name__: a for a in expr.atoms(sp.core.function.AppliedUndef)})
    return names


@test_case(points=1)
def test_keys(answer_05_1):
    keys = {"generators", "drift", "betas", "bias", "slopes", "control", "control_slope"}
    assert isinstance(answer_05_1, dict) and keys <= set(answer_05_1), (
        f"answer_05_1 should be a dict with keys {sorted(keys)}"
    )
    for key in ("generators", "drift", "bias", "slopes"):
        assert set(ALPHAS) <= set(answer_05_1[key]), f'answer_05_1["{key}"] should have the keys 0.25 and 0.75 (the α)'
    betas = np.asarray(answer_05_1["betas"], float)
    assert np.allclose(np.sort(betas), [100, 200, 400, 800]), "betas should be 100, 200, 400, 800"


@test_case(points=1)
def test_generators_and_drift(answer_05_1):
    for a in ALPHAS:
        d = 2 * (1 - a)  # oracle: 4c₁ = Δ_G f + 2(1 − α)⟨∇log q, ∇f⟩_G, read in one dimension
        assert abs(float(answer_05_1["drift"][a]) - d) < 1e-12, (
            f"the drift coefficient at α = {a} should be 2(1 − α) = {d}, got {answer_05_1['drift'][a]}"
        )
        generator = sp.sympify(answer_05_1["generators"][a])
        names = _by_name(generator)
        assert {"x", "f", "q", "g"} <= set(names), (
            "the generator should be in the symbols x, f(x), q(x), g of the expansion"
        )
        x, g = names["x"], names["g"]
        f_test, q_test, g_test = sp.sin(x) + x**2 / 3, 2 + sp.cos(x), sp.Rational(17, 10)
        value = generator.subs({names["f"]: f_test, names["q"]: q_test}).doit().subs(g, g_test)
        oracle = -f_test.diff(x, 2) / g_test - d * q_test.diff(x) * f_test.diff(x) / (g_test * q_test)
        for point in (0.3, 1.1, 2.5):
            # exact expressions evaluated in double precision: agreement to 1e-10 is rounding only
            assert abs(float(value.subs(x, point)) - float(oracle.subs(x, point))) < 1e-10, (
                f"the generator at α = {a} is not −f''/g − 2(1 − α) q'f'/(gq); "
                "use kernel_generator_expansion(d=1, order=1, alpha=alpha).generator"
            )


@test_case(points=1)
def test_bias_rate(answer_05_1):
    betas = np.asarray(answer_05_1["betas"], float)
    for a in ALPHAS:
        bias = np.asarray(answer_05_1["bias"][a], float)
        assert bias.shape == betas.shape, f"bias[{a}] should have one error per β"
        refit = _slope(1 / betas, bias)
        # oracle: the O(1/β) bias on quadrature nodes; the β⁻² term bends a four-point fit by under 1 %
        assert abs(refit - 1) < 0.05, f"the errors at α = {a} should fall like 1/β (slope 1 in 1/β), refit {refit:.3f}"
        assert bias.max() < 0.01, (
            f"the bias at α = {a} should be below 0.01 at β ≥ 100 (compare with the right limit α)"
        )
        slope = float(answer_05_1["slopes"][a])
        # the reported slope must be the fit of these errors against 1/β (same least-squares fit: 1e-6 is rounding)
        assert abs(slope - refit) < 1e-6, (
            f"slopes[{a}] = {slope:.3f} is not the slope of log(error) against log(1/β) ({refit:.3f}); "
            "fit against 1/β, not β"
        )


@test_case(points=2)
def test_control(answer_05_1):
    betas = np.asarray(answer_05_1["betas"], float)
    control = np.asarray(answer_05_1["control"], float)
    assert control.shape == betas.shape, "control should have one error per β"
    # oracle: the α = ¼ operator converges to the α = ¼ limit, which differs from the α = ¾ one by the drift
    # difference (2(1 − ¼) − 2(1 − ¾)) q'f'/(gq) = q'f'/(gq) with q = 1 + ½cos θ, f = cos θ, g = r² = 1.3²
    theta = np.linspace(0, 2 * np.pi, 200001)
    gap = np.abs(0.5 * np.sin(theta) ** 2 / (1.3**2 * (1 + 0.5 * np.cos(theta)))).max()
    # the O(1/β) bias rides on the constant: 2 % of it covers β ≥ 100
    assert abs(control[-1] / gap - 1) < 0.02, (
        f"the control should converge to max|q'f'/(gq)| ≈ {gap:.4f} (the α = ¼ operator against the α = ¾ limit, "
        f"limit_alpha=0.75), got {control[-1]:.4f}"
    )
    refit = _slope(1 / betas, control)
    assert abs(refit) < 0.1, f"the control's error should not decay with β (slope ≈ 0), refit {refit:.3f}"
    assert abs(float(answer_05_1["control_slope"]) - refit) < 1e-6, "control_slope is not the fitted slope in 1/β"
