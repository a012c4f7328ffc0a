"""Tests of exercise 00.1: the symplectic residual of e^{tA}, A = JS, normalised by max|W|²."""

import numpy as np
import scipy.linalg
from otter.test_files import test_case

OK_FORMAT = False
name = "00.1"
points = 5

TIMES = {1.0, 10.0, 20.0, 30.0}
J = np.block([[np.zeros((3, 3)), np.eye(3)], [-np.eye(3), np.zeros((3, 3))]])
TOLERANCE = 100 * 6 * np.finfo(float).eps  # the catalogue's tolerance 100·n·ε for n = 6


@test_case(points=1)
def test_keys(answer_00_1):
    keys = {"S", "A", "hamiltonian_residual", "max_W", "residual", "relative", "tolerance"}
    assert isinstance(answer_00_1, dict), "answer_00_1 should be a dict"
    missing = keys - set(answer_00_1)
    assert not missing, f"answer_00_1 lacks the keys {sorted(missing)}"
    for key in ("max_W", "residual", "relative"):
        got = {float(t) for t in answer_00_1[key]}
        assert got == TIMES, f"answer_00_1[{key!r}] should have the times t = 1, 10, 20, 30 as keys, got {sorted(got)}"


@test_case(points=1)
def test_hamiltonian(answer_00_1):
    S, A = np.asarray(answer_00_1["S"], float), np.asarray(answer_00_1["A"], float)
    assert S.shape == (6, 6) and A.shape == (6, 6), "S and A should be 6×6 matrices"
    assert np.array_equal(S, S.T), "S should be exactly symmetric: form it as (G + G.T) / 2"
    # oracle: J @ S only permutes entries of S and flips signs, so A must equal it exactly
    assert np.array_equal(A, J @ S), "A should be the Hamiltonian matrix J @ S (J on the left)"
    # AᵀJ + JA = S − S is exactly 0 in floating point: the answer must say so
    assert answer_00_1["hamiltonian_residual"] == 0, "max|AᵀJ + JA| vanishes exactly in floating point, not just nearly"


@test_case(points=1)
def test_max_W(answer_00_1):
    A = np.asarray(answer_00_1["A"], float)
    for t, value in answer_00_1["max_W"].items():
        expected = np.abs(scipy.linalg.expm(float(t) * A)).max()
        # oracle: scipy's expm of the student's own A; its relative accuracy is far better than 1e-8 here
        assert abs(value - expected) <= 1e-8 * expected, (
            f"max|W_ij| at t = {t:g} should be {expected:.6g} for W = expm(t·A), got {value:.6g}"
        )


@test_case(points=1)
def test_relative_is_residual_over_max_W_squared(answer_00_1):
    for t in answer_00_1["relative"]:
        residual, largest, relative = answer_00_1["residual"][t], answer_00_1["max_W"][t], answer_00_1["relative"][t]
        assert residual > 0, f"the residual at t = {t:g} should be a positive rounding error, got {residual}"
        # the answer's own numbers must be consistent: relative = residual / max|W|² (not / max|W|, not the raw residual)
        assert abs(relative - residual / largest**2) <= 1e-9 * relative, (
            f"at t = {t:g}, relative = {relative:.3e} is not residual / max|W_ij|² = {residual / largest**2:.3e}"
        )


@test_case(points=1)
def test_relative_below_tolerance(answer_00_1):
    assert abs(answer_00_1["tolerance"] - TOLERANCE) <= 1e-3 * TOLERANCE, (
        f"the catalogue's tolerance is 100·n·ε = {TOLERANCE:.3e} for n = 6, got {answer_00_1['tolerance']:.3e}"
    )
    for t, relative in answer_00_1["relative"].items():
        # oracle: WᵀJW = J exactly, and rounding in W gives errors of size a few u·max|W_ij|², so the fair
        # relative residual stays far below 100·n·ε at every t; a residual divided by max|W| alone grows like max|W|
        assert 0 < relative < TOLERANCE, (
            f"at t = {t:g} the relative residual {relative:.2e} exceeds the tolerance {TOLERANCE:.2e}: "
            "divide the max-norm residual by max|W_ij|² (the size of the entries of WᵀJW), not by max|W_ij|"
        )
