"""Tests of exercise 07.1: the Beurling–Deny split of cos kx for k = 3, 5 against its hand-computed limits."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "07.1"
points = 6

HBAR, NU, KAPPA0 = 0.25, 0.3, 0.2  # the data of notebook 07
KS = (3, 5)
PARTS = ("local", "jump", "killing")


@test_case(points=1)
def test_keys(answer_07_1):
    keys = {"beta", "parts", "predicted"}
    assert isinstance(answer_07_1, dict) and keys <= set(answer_07_1), (
        f"answer_07_1 should be a dict with keys {sorted(keys)}"
    )
    assert float(answer_07_1["beta"]) == 1600.0, "beta should be 1600"
    for key in ("parts", "predicted"):
        for k in KS:
            assert k in answer_07_1[key] and set(PARTS) <= set(answer_07_1[key][k]), (
                f'answer_07_1["{key}"][{k}] should be a dict with keys "local", "jump", "killing"'
            )


@test_case(points=2)
def test_predicted_limits(answer_07_1):
    for k in KS:
        predicted = answer_07_1["predicted"][k]
        # oracles: ħπk²; π∫(1 − cos ku) n du = π·3πν for k ≥ 3 (n has no Fourier mode above 2); ∫κ cos²kx = πκ₀
        exact = {"local": HBAR * np.pi * k**2, "jump": 3 * np.pi**2 * NU, "killing": np.pi * KAPPA0}
        for part in PARTS:
            got = float(predicted[part])
            assert abs(got / exact[part] - 1) < 1e-12, (
                f"k = {k}: the predicted {part} part should be {exact[part]:.10f}, got {got:.10f}"
                + (
                    "; expand n = ν(3/2 − 2cos u + ½cos 2u): for k ≥ 3 only its mass 3πν is left"
                    if part == "jump"
                    else ""
                )
            )


@test_case(points=1)
def test_jump_and_killing(answer_07_1):
    for k in KS:
        parts = answer_07_1["parts"][k]
        # oracle: 3π²ν; the remote energy inside r = 7/√β (∝ r⁷) is ~1e-6, so 1e-5
        assert abs(float(parts["jump"]) - 3 * np.pi**2 * NU) < 1e-5, (
            f"k = {k}: the measured jump part should be within 1e-5 of 3π²ν = {3 * np.pi**2 * NU:.6f}, got {parts['jump']:.6f}; "
            "cut at r = 7/√β"
        )
        # oracle: πκ₀, exact for the trapezoid rule on a trigonometric polynomial: rounding only
        assert abs(float(parts["killing"]) - np.pi * KAPPA0) < 1e-12, (
            f"k = {k}: the killing part should be πκ₀ = {np.pi * KAPPA0:.12f}, got {parts['killing']}; pass killing=jk.killing"
        )


@test_case(points=2)
def test_local_bias(answer_07_1):
    beta = float(answer_07_1["beta"])
    for k in KS:
        bias = HBAR * np.pi * k**2 - float(answer_07_1["parts"][k]["local"])
        predicted = HBAR * np.pi * k**4 / (8 * beta)  # the leading term of 4πħβ(1 − e^{−k²/4β})
        # the next term is O(k⁶/β²), a few per cent of the bias at k = 5: 5 %
        assert abs(bias / predicted - 1) < 0.05, (
            f"k = {k}: the local part should lie below ħπk² by about ħπk⁴/(8β) = {predicted:.3e}, but lies below by {bias:.3e}"
        )
