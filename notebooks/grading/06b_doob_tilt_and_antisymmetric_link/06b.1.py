"""Tests of exercise 06b.1: the stationary flux through cuts of a ring, for a co-closed and a constant link."""

import numpy as np
import scipy.integrate
from otter.test_files import test_case

OK_FORMAT = False
name = "06b.1"
points = 5

C_LINK = 0.2
BETAS = (50.0, 200.0)
LINKS = ("co-closed", "constant")


def _constant_link_ratio():
    """4πβj/c for B = c: the periodic Fokker–Planck solution of (ρe^W)' = −4βj e^W, W = 2U − 2cθ (trapezoid)."""
    theta = np.linspace(0, 2 * np.pi, 40001)
    W = 2 * (np.cos(theta) + 0.5 * np.sin(2 * theta)) - 2 * C_LINK * theta
    inner = scipy.integrate.cumulative_trapezoid(np.exp(W), theta, initial=0)
    density = (inner[-1] / (1 - np.exp(-4 * np.pi * C_LINK)) - inner) * np.exp(-W)  # ρ for 4βj = 1
    return np.pi / (C_LINK * scipy.integrate.trapezoid(density, theta))


@test_case(points=1)
def test_keys(answer_06b_1):
    assert isinstance(answer_06b_1, dict) and {"flux", "ratio"} <= set(answer_06b_1), (
        "answer_06b_1 should be a dict with keys 'flux' and 'ratio'"
    )
    for key in ("flux", "ratio"):
        for link in LINKS:
            assert link in answer_06b_1[key] and set(BETAS) <= set(answer_06b_1[key][link]), (
                f'answer_06b_1["{key}"] should map "co-closed" and "constant" to dicts with the keys 50.0 and 200.0'
            )


@test_case(points=1)
def test_kirchhoff(answer_06b_1):
    for link in LINKS:
        for beta in BETAS:
            F = np.asarray(answer_06b_1["flux"][link][beta], float)
            assert F.shape == (3,), f"flux[{link!r}][{beta}] should hold F at the three cuts m = 0, N/3, N/2"
            # oracle: J1 = π − πP = 0, so every cut carries the same current; rounding of ~1e-16 per entry
            assert np.ptp(F) < 1e-10 * abs(F[0]), (
                f"{link}, β = {beta}: the three cut fluxes {F} differ — use the antisymmetric current J, "
                "and sum J_ij over i in the N/4 nodes before m, j in the N/4 nodes from m on"
            )


@test_case(points=2)
def test_co_closed_flux(answer_06b_1):
    for beta in BETAS:
        F = np.asarray(answer_06b_1["flux"]["co-closed"][beta], float)
        ratio = 4 * np.pi * beta * F[0] / C_LINK
        # oracle: the continuum current c/(4πβ) of the co-closed link; the kernel limit has an O(1/β) bias
        assert abs(ratio - 1) < 1 / beta, (
            f"co-closed link, β = {beta}: 4πβF/c should be within 1/β of 1, got {ratio:.4f} "
            "(sign: the current flows from the nodes before m to those after it; the link is c Z e^(2U) sin(θ_j − θ_i))"
        )
        assert abs(float(answer_06b_1["ratio"]["co-closed"][beta]) - ratio) < 1e-9, "ratio should be 4πβF(0)/c"


@test_case(points=1)
def test_constant_flux(answer_06b_1):
    expected = _constant_link_ratio()
    for beta in BETAS:
        F = np.asarray(answer_06b_1["flux"]["constant"][beta], float)
        ratio = 4 * np.pi * beta * F[0] / C_LINK
        # oracle: the periodic Fokker–Planck flux of the constant push (≈ 0.17), up to the O(1/β) kernel bias
        assert abs(ratio / expected - 1) < 1 / beta, (
            f"constant link, β = {beta}: 4πβF/c should be about {expected:.4f} (Fokker–Planck), got {ratio:.4f}"
        )
        assert abs(float(answer_06b_1["ratio"]["constant"][beta]) - ratio) < 1e-9, "ratio should be 4πβF(0)/c"
