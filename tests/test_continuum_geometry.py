"""Tests for the symbolic Riemannian toolkit and the continuum_geometry catalogue identities.

Symbolic oracles are decided exactly by sympy (tolerance: none, the difference simplifies to 0).
Numeric oracles state their tolerance where they are used.
"""

import pytest
import sympy as sp

from workbench.continuum._riemann import (
    RiemannianMetric,
    bakry_emery_gamma2,
    bochner_gamma2,
    diffusion_generator,
    formal_adjoint,
    witten_generator,
    witten_potential,
)
from workbench.derivations.continuum_geometry import (
    HBAR,
    IDENTITIES,
    THETA,
    U,
    X,
    Y,
    _coexact_drift,
    plane,
    revolution,
    sphere,
)

BY_NAME = {identity.name: identity for identity in IDENTITIES}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_derivation_step_holds(name):
    # Oracle: sympy decides each claimed equality exactly.
    steps = BY_NAME[name].derive()
    claims = [step for step in steps if step.holds is not None]
    assert len(claims) >= 5
    failing = [step.text for step in claims if not step.holds]
    assert failing == []


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_verification_passes_at_small_scale(name, rng):
    # Oracles and tolerances are documented in each verify function (rounding / spectral quadrature level).
    result = BY_NAME[name].verify(rng, "small", "numpy")
    assert result.passed, result
    # The measured residual is far below the tolerance (rounding level), not merely NaN-free.
    assert result.residual < result.tolerance / 100


def test_identities_are_in_the_continuum_area_and_numpy_only():
    assert sorted(BY_NAME) == ["continuum.bakry_emery.bochner", "continuum.witten.girsanov"]
    assert {identity.area for identity in IDENTITIES} == {"continuum"}
    assert all(identity.backends == ("numpy",) for identity in IDENTITIES)


# ---- the toolkit against closed forms ------------------------------------------------------------


def test_sphere_laplacian_has_the_spherical_harmonic_spectrum():
    # Oracle: Δ Y_l = −l(l+1)/r² Y_l for zonal harmonics Y_1 = cos θ, Y_2 = 3cos²θ − 1.
    m = sphere()
    r = sp.Symbol("r", positive=True)
    for degree, harmonic in ((1, sp.cos(THETA)), (2, 3 * sp.cos(THETA) ** 2 - 1)):
        assert sp.simplify(m.laplacian(harmonic) + degree * (degree + 1) / r**2 * harmonic) == 0


def test_surface_of_revolution_scalar_curvature_is_twice_gauss():
    # Oracle: in d = 2, R = 2K with K = −r''/r; for r(u) = cosh u (a hyperbolic-plane chart) r'' = r, K = −1.
    m = revolution(sp.cosh(U))
    assert sp.simplify(m.scalar_curvature) == -2


def test_flat_hessian_is_the_matrix_of_second_derivatives_and_christoffels_vanish():
    m = plane()
    f = sp.sin(X) * sp.exp(Y)
    assert m.christoffel == [[[0, 0], [0, 0]], [[0, 0], [0, 0]]]
    assert sp.simplify(m.hessian(f) - sp.hessian(f, (X, Y))) == sp.zeros(2, 2)


def test_hessian_is_symmetric_and_norm_matches_frobenius_in_orthonormal_frame_on_the_sphere():
    # Oracle: on the unit sphere at θ = π/2 the frame (∂θ, ∂φ) is orthonormal, so ‖Hess‖² = Σ H_ab².
    m = sphere(1)
    f = sp.cos(THETA) * sp.sin(2 * sp.Symbol("phi", positive=True)) + sp.sin(THETA) ** 3
    hess = m.hessian(f)
    assert sp.simplify(hess - hess.T) == sp.zeros(2, 2)
    at_equator = {THETA: sp.pi / 2}
    frobenius = sum(entry**2 for entry in hess.subs(at_equator))
    assert sp.simplify(m.hessian_norm2(f).subs(at_equator) - frobenius) == 0


def test_ornstein_uhlenbeck_is_the_one_dimensional_witten_generator():
    # Oracle: the OU generator −ħf'' + 2xf' (Φ = x²/2); its Witten potential is x²/ħ − 1, harmonic oscillator.
    line = RiemannianMetric([[1]], (X,))
    C = witten_generator(line, [X], HBAR)
    f = sp.Function("f")(X)
    assert sp.simplify(C(f) - (-HBAR * f.diff(X, 2) + 2 * X * f.diff(X))) == 0
    assert sp.simplify(witten_potential(line, X**2 / 2, HBAR) - (X**2 / HBAR - 1)) == 0


# ---- negative controls -----------------------------------------------------------------------------


def test_wrong_sign_of_the_potential_is_not_stationary():
    # Control for claim (c): e^{+2Φ/ħ} is not annihilated by the adjoint (Φ = x²/2 on the line).
    line = RiemannianMetric([[1]], (X,))
    good = formal_adjoint(line, [X], HBAR, sp.exp(-(X**2) / HBAR))
    bad = formal_adjoint(line, [X], HBAR, sp.exp(X**2 / HBAR))
    assert sp.simplify(good) == 0
    assert sp.simplify(bad) != 0


def test_the_unweighted_coexact_drift_is_divergence_free_for_dx_but_not_for_mu():
    # Why the outside case of continuum.witten.girsanov fails: div(e^{−2Φ/ħ}A^⊥) = 0 needs the weight e^{2Φ/ħ}
    # in A^⊥; without it div A^⊥ = 0 but div(e^{−2Φ/ħ}A^⊥) = −(2/ħ)e^{−2Φ/ħ}⟨∇Φ, A^⊥⟩ ≠ 0.  Oracle: sympy.
    m = plane()
    phi, psi = sp.cos(X) / 2 + sp.sin(Y) / 3, sp.sin(X) * sp.sin(Y)
    gibbs = sp.exp(-2 * phi / HBAR)
    unweighted = _coexact_drift(phi, psi, weighted=False)
    assert sp.simplify(m.divergence(gibbs * _coexact_drift(phi, psi))) == 0
    assert sp.simplify(m.divergence(unweighted)) == 0
    expected = -2 / HBAR * gibbs * m.inner(m.differential(phi), unweighted)
    assert sp.simplify(m.divergence(gibbs * unweighted) - expected) == 0
    assert sp.simplify(expected) != 0


def test_wrong_sign_in_the_witten_conjugation_fails():
    # Control for claim (b): conjugating with e^{+Φ/ħ} on the other side does not give the Witten operator.
    m = plane()
    phi, u = sp.Function("Phi")(X, Y), sp.Function("u")(X, Y)
    C = witten_generator(m, m.differential(phi), HBAR)
    wrong = sp.exp(phi / HBAR) * C(sp.exp(-phi / HBAR) * u) + HBAR * m.laplacian(u) - witten_potential(m, phi, HBAR) * u
    assert sp.simplify(sp.expand(wrong)) != 0


@pytest.mark.parametrize("metric", [sphere(), revolution()], ids=["sphere", "revolution"])
def test_bochner_without_the_ricci_term_fails_on_curved_surfaces(metric):
    # Control: Γ₂ − (Bochner without Ric) = ħ²Ric(∇f,∇f) ≠ 0 for generic f.
    f, phi = sp.Function("f")(*metric.coordinates), sp.Function("Phi")(*metric.coordinates)
    L = diffusion_generator(metric, phi, HBAR)
    gamma2 = bakry_emery_gamma2(L, f)
    miss = sp.simplify(sp.expand(gamma2 - bochner_gamma2(metric, f, phi, HBAR, ricci=False)))
    grad = metric.gradient(f)
    assert miss != 0
    assert sp.simplify(miss - HBAR**2 * metric.bilinear(metric.ricci, grad, grad)) == 0


def test_flat_bochner_needs_no_ricci_term():
    m = plane()
    f = sp.Function("f")(X, Y)
    assert sp.simplify(bochner_gamma2(m, f, 0, HBAR) - bochner_gamma2(m, f, 0, HBAR, ricci=False)) == 0


def test_sphere_gamma2_of_a_first_harmonic_is_the_ricci_bound():
    # Oracle (hand computation): on the unit sphere f = cos θ has Hess f = −f G, so ‖Hess f‖² = 2cos²θ,
    # and Ric(∇f,∇f) = |∇f|² = sin²θ; Γ₂(f) = ħ²(2cos²θ + sin²θ) = ħ²(1 + cos²θ).
    m = sphere(1)
    L = diffusion_generator(m, 0, HBAR)
    assert sp.simplify(bakry_emery_gamma2(L, sp.cos(THETA)) - HBAR**2 * (1 + sp.cos(THETA) ** 2)) == 0


# ---- bad input --------------------------------------------------------------------------------------


def test_non_square_metric_is_rejected():
    with pytest.raises(ValueError, match=r"metric must be a non-empty square matrix, got shape \(2, 3\)"):
        RiemannianMetric(sp.ones(2, 3), (X, Y))


def test_non_symmetric_metric_is_rejected():
    with pytest.raises(ValueError, match=r"metric must be symmetric, got G\[0,1\] = x and G\[1,0\] = 0"):
        RiemannianMetric([[1, X], [0, 1]], (X, Y))


def test_coordinate_count_must_match_the_metric():
    with pytest.raises(ValueError, match=r"coordinates must have one symbol per row of the metric \(2\), got 3"):
        RiemannianMetric(sp.eye(2), (X, Y, U))


def test_coordinates_must_be_distinct_symbols():
    with pytest.raises(TypeError, match="coordinates must be sympy Symbols"):
        RiemannianMetric(sp.eye(2), ("x", "y"))
    with pytest.raises(ValueError, match="coordinates must be distinct symbols"):
        RiemannianMetric(sp.eye(2), (X, X))


def test_degenerate_metric_and_wrong_volume_density_are_rejected():
    with pytest.raises(ValueError, match="metric must be nondegenerate, got det G = 0"):
        RiemannianMetric([[1, 1], [1, 1]], (X, Y))
    with pytest.raises(ValueError, match="volume_density must square to det G"):
        RiemannianMetric(sp.diag(1, 4), (X, Y), 3)


def test_one_form_length_and_hbar_sign_are_checked():
    m = plane()
    with pytest.raises(ValueError, match=r"one_form must have 2 components \(one per coordinate\), got shape \(3, 1\)"):
        witten_generator(m, [X, Y, 1], HBAR)
    with pytest.raises(ValueError, match="hbar must be a positive real scale, got -1"):
        diffusion_generator(m, 0, -1)
