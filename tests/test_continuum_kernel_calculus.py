"""Local Bakry–Émery calculus of weighted Gauss-kernel operators (workbench.continuum._kernel_calculus).

Oracles are exact finite-β values, not limits:
* flat torus lattice: the lattice sum of the Gauss kernel equals its integral up to e^{−π²/(βh²)} (Poisson
  summation), and on ℝ² the normalised Gauss step is the heat semigroup e^{εΔ}, ε = 1/(4β); so Fourier modes are
  eigenfunctions with ℒ_β e^{ikx} = μ(k) e^{ikx}, μ(k) = 4β(e^{−εk²} − 1), and Γ, Γ₂ of sin x follow in closed form;
* unit sphere, product rule: Funk–Hecke gives ℒ_β on degree-ℓ harmonics as μ_ℓ = 4β(λ_ℓ − 1) with λ₁ = coth c − 1/c,
  λ₂ = (3(1 − 2λ₁/c) − 1)/2, c = 2β, exactly; the product rule integrates the kernel rows to ≲1e-12.
"""

import math

import numpy as np
import pytest

from workbench.continuum._kernel_calculus import kernel_calculus_at, sphere_product_quadrature, torus_lattice


def test_sphere_product_quadrature_integrates_polynomials():
    x, w = sphere_product_quadrature(10, 21)
    assert w.sum() == pytest.approx(4 * math.pi, rel=1e-14)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=0, atol=1e-15)
    # ∫ x²y² dA = 4π/15 and ∫ z⁴ dA = 4π/5 on the unit sphere (degree 4 < min(2·10, 21): exact to rounding)
    assert w @ (x[:, 0] ** 2 * x[:, 1] ** 2) == pytest.approx(4 * math.pi / 15, rel=1e-13)
    assert w @ x[:, 2] ** 4 == pytest.approx(4 * math.pi / 5, rel=1e-13)


def _mu(k, beta):
    return 4 * beta * math.expm1(-(k**2) / (4 * beta))


def test_torus_sine_matches_the_heat_semigroup_in_closed_form():
    beta = 60.0
    x, w = torus_lattice(128, dim=2)
    targets = [128 * 5 + 17, 128 * 100 + 90]
    out = kernel_calculus_at(x, w, np.sin(x[:, 0]), beta, targets, period=2 * math.pi)
    t = x[targets, 0]
    mu1, mu2 = _mu(1, beta), _mu(2, beta)
    gamma = -0.25 * mu2 * np.cos(2 * t) - mu1 * np.sin(t) ** 2
    cos2 = -0.25 * mu2 + 0.5 * mu1  # Γ(sin) = −μ₁/2 + (−μ₂/4 + μ₁/2) cos 2x
    gamma2 = 0.5 * mu2 * cos2 * np.cos(2 * t) - mu1 * gamma  # ½ℒΓ − Γ(f, ℒf), ℒf = μ₁f
    # Tolerance 1e-9: Poisson error e^{−π²/(βh²)} ≈ e^{−68} plus rounding of sums of ~10³ terms of size 4β
    np.testing.assert_allclose(out.generator, mu1 * np.sin(t), rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.gamma, gamma, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.gamma2, gamma2, rtol=0, atol=1e-8)


def test_sphere_height_function_matches_funk_hecke_at_finite_beta():
    beta = 150.0
    c = 2 * beta
    lam1 = 1 / math.tanh(c) - 1 / c
    lam2 = (3 * (1 - 2 * lam1 / c) - 1) / 2
    mu1, mu2 = 4 * beta * (lam1 - 1), 4 * beta * (lam2 - 1)
    x, w = sphere_product_quadrature(140, 280)
    heights = np.unique(x[:, 2])
    targets = [int(np.flatnonzero(x[:, 2] == heights[k])[0]) for k in (40, 90)]
    out = kernel_calculus_at(x, w, x[:, 2], beta, targets)
    z = x[targets, 2]
    p2 = (3 * z**2 - 1) / 2
    gamma = 0.5 * (mu2 * (2 / 3) * p2 - 2 * mu1 * z**2)
    # Γ(z) = a + b z² with b = μ₂/2 − μ₁ (from ½[μ₂·⅔P₂ − 2μ₁z²]), so ℒΓ = μ₂·(2b/3)·P₂ and Γ₂ = ½ℒΓ − μ₁Γ
    b = mu2 / 2 - mu1
    gamma2 = 0.5 * mu2 * (2 * b / 3) * p2 - mu1 * gamma
    # Tolerance 1e-8: the product rule's error on the kernel rows (≲1e-12) amplified by (4β)² ≈ 4e5
    np.testing.assert_allclose(out.generator, mu1 * z, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.gamma, gamma, rtol=0, atol=1e-9)
    np.testing.assert_allclose(out.gamma2, gamma2, rtol=0, atol=1e-6)
    # and the Bochner limit with the Ricci term, 1 + z², is within the O(1/β) bias (≈ 1/β · |1 − 3z²|)
    assert np.all(np.abs(out.gamma2 - (1 + z**2)) < 2 / beta)


def test_several_functions_at_once_equal_one_by_one():
    x, w = sphere_product_quadrature(40, 80)
    f = np.column_stack([x[:, 0] * x[:, 1], x[:, 2] ** 3])
    both = kernel_calculus_at(x, w, f, 80.0, [500, 1700])
    for k in range(2):
        single = kernel_calculus_at(x, w, f[:, k], 80.0, [500, 1700])
        np.testing.assert_allclose(both.gamma2[:, k], single.gamma2, rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(both.generator[:, k], single.generator, rtol=1e-13, atol=1e-12)


def test_validation_messages():
    x, w = torus_lattice(8, dim=2, period=1.0)
    f = x[:, 0]
    with pytest.raises(ValueError, match=r"weights must be 64 positive numbers \(one per point\)"):
        kernel_calculus_at(x, -w, f, 10.0, [0])
    with pytest.raises(ValueError, match=r"f must have shape \[64\] or \[64, m\]"):
        kernel_calculus_at(x, w, f[:5], 10.0, [0])
    with pytest.raises(ValueError, match=r"targets must be node indices in \[0, 64\), got \[64\]"):
        kernel_calculus_at(x, w, f, 10.0, [64])
    with pytest.raises(ValueError, match="beta"):
        kernel_calculus_at(x, w, f, 0.0, [0])
    with pytest.raises(ValueError, match=r"points must lie in \[0, period\)"):
        kernel_calculus_at(x + 0.5, w, f, 10.0, [0], period=1.0)
    with pytest.raises(ValueError, match="n_azimuth"):
        sphere_product_quadrature(4, 2)
