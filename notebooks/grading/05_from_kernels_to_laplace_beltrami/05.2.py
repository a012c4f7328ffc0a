"""Tests of exercise 05.2: the 1/β coefficient of 4β(1 − μ_k) on S¹, derived and measured."""

import numpy as np
import scipy.special
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "05.2"
points = 4


@test_case(points=1)
def test_keys(answer_05_2):
    keys = {"coefficient", "betas", "measured"}
    assert isinstance(answer_05_2, dict) and keys <= set(answer_05_2), (
        f"answer_05_2 should be a dict with keys {sorted(keys)}"
    )
    assert {1, 2, 3} <= set(answer_05_2["measured"]), 'answer_05_2["measured"] should have the keys 1, 2, 3 (the k)'
    betas = np.asarray(answer_05_2["betas"], float)
    assert np.allclose(np.sort(betas), [100, 200, 400, 800]), "betas should be 100, 200, 400, 800"


@test_case(points=1)
def test_coefficient(answer_05_2):
    coefficient = sp.sympify(answer_05_2["coefficient"])
    symbols = {s.name: s for s in coefficient.free_symbols}
    assert set(symbols) == {"k"}, f"the coefficient should be an expression in k alone, got symbols {sorted(symbols)}"
    for k in (1, 2, 3, 5):
        oracle = -(k**2) * (k**2 - 2) / 8  # the large-argument expansion of I_k/I_0 at x = 2β
        got = float(coefficient.subs(symbols["k"], k))
        assert abs(got - oracle) < 1e-12, (
            f"at k = {k} the 1/β coefficient should be −k²(k² − 2)/8 = {oracle}, got {got}; "
            "remember 1/x = 1/(2β) when converting from x to β"
        )


@test_case(points=2)
def test_measured(answer_05_2):
    betas = np.asarray(answer_05_2["betas"], float)
    for k in (1, 2, 3):
        measured = np.asarray(answer_05_2["measured"][k], float)
        assert measured.shape == betas.shape, f"measured[{k}] should have one value per β"
        # oracle: μ_k = I_k(2β)/I_0(2β) from scipy's exponentially scaled Bessel functions (independent of workbench);
        # β[4β(1 − μ) − k²] multiplies a rounding of ~1e-16 in μ by 4β² ≤ 2.6e6, so 1e-7 is generous
        mu = scipy.special.ive(k, 2 * betas) / scipy.special.ive(0, 2 * betas)
        oracle = betas * (4 * betas * (1 - mu) - k**2)
        assert np.abs(measured - oracle).max() < 1e-7, (
            f"measured[{k}] should be β[4β(1 − μ_k) − k²] with μ_k = I_k(2β)/I_0(2β) "
            f"(index 2k − 1 of kernel_spectrum(β, 2k)); expected {np.round(oracle, 4)}, got {np.round(measured, 4)}"
        )
