"""Tests of exercise 10c.1: holonomy and the four smallest eigenvalues of the twisted ring C_8 at θ = π and 0.9π."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "10c.1"
points = 4

TWISTS = {"pi": np.pi, "0.9pi": 0.9 * np.pi}


@test_case(points=1)
def test_keys(answer_10c_1):
    assert isinstance(answer_10c_1, dict) and {"holonomy", "smallest"} <= set(answer_10c_1), (
        "answer_10c_1 should be a dict with keys 'holonomy' and 'smallest'"
    )
    for key in ("holonomy", "smallest"):
        assert isinstance(answer_10c_1[key], dict) and set(TWISTS) <= set(answer_10c_1[key]), (
            f"answer_10c_1['{key}'] should be a dict with keys 'pi' and '0.9pi'"
        )


@test_case(points=1)
def test_holonomy(answer_10c_1):
    for label, theta in TWISTS.items():
        hol = np.asarray(answer_10c_1["holonomy"][label], dtype=float)
        assert hol.shape == (2, 2), f"the holonomy at θ = {label} should be a 2×2 matrix, got shape {hol.shape}"
        # Oracle: R(θ) in the row convention x ↦ xR (the docstring of cycle_connection); the product of eight
        # 2×2 rotations rounds at ~1e-15, so 1e-12 is ample.
        rotation = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
        assert np.abs(hol - rotation).max() < 1e-12, (
            f"the holonomy at θ = {label} is not R(θ) = [[cos θ, sin θ], [−sin θ, cos θ]]; walk the loop "
            "0 → 1 → … → 7 → 0 forwards, with holonomy(transports, (0, 1, …, 7, 0))"
        )


@test_case(points=2)
def test_smallest_eigenvalues(answer_10c_1):
    for label, theta in TWISTS.items():
        values = np.sort(np.asarray(answer_10c_1["smallest"][label], dtype=float).ravel())
        assert values.shape == (4,), f"give the four smallest eigenvalues at θ = {label}, got {values.size} values"
        # Oracle: the closed form 2 − 2cos((2πk ± θ)/8); its four smallest values are the pairs k = 0 and
        # (1, −), (7, +).  Symmetric 16×16 eigenvalues are accurate to ~1e-15; 1e-12 is ample.
        closed = np.sort([2 - 2 * np.cos((2 * np.pi * k + s * theta) / 8) for k in range(8) for s in (1, -1)])[:4]
        assert np.abs(values - closed).max() < 1e-12, (
            f"at θ = {label} the four smallest eigenvalues of 2I − T should be {np.round(closed, 6)}, got "
            f"{np.round(values, 6)}; use kind='unnormalized' and take the bottom of the spectrum"
        )
