"""Tests for the Varadhan short-time heat kernels, the Beurling–Deny jump-form scaling and their identities."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

import workbench.derivations.continuum_nonlocal as nonlocal_module
from workbench.catalogue import fit_rate
from workbench.continuum._nonlocal import (
    circle_courrege_operator,
    circle_jump_kernel,
    circle_log_heat_kernel,
    diffusive_jump_rate,
    sphere_log_heat_kernel,
    varadhan_remainder,
)
from workbench.derivations.continuum_nonlocal import (
    IDENTITIES,
    circle_cut_point_errors,
    courrege_errors,
    jump_form_errors,
    sphere_varadhan_errors,
    triangle_local_errors,
)
from workbench.markov import beurling_deny_split

BY_NAME = {identity.name: identity for identity in IDENTITIES}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_derivation_steps_all_hold(name):
    steps = BY_NAME[name].derive()
    assert steps and all(step.holds is not False for step in steps)
    assert sum(step.holds is True for step in steps) >= (3 if "courrege" in name else 6)


def test_varadhan_verify_passes_at_small_scale(rng):
    # Oracle: fitted exponents 2 (van Vleck subtracted, tol 0.05) and 1 (tol 0.1) in t on S².
    result = BY_NAME["continuum.varadhan.short_time"].verify(rng, "small", "numpy")
    assert result.passed, result
    assert all(abs(rate - round(rate)) <= 0.05 for rate in result.sizes["rates"].values())
    assert result.sizes["circle_gate"] <= 1.0


def test_beurling_deny_verify_passes_at_small_scale(rng):
    # Oracle: fitted exponents 1 (local, tol 0.05) and 7/2 (jump, tol 0.15) in 1/β.
    result = BY_NAME["continuum.beurling_deny.scaling"].verify(rng, "small", "numpy")
    assert result.passed, result
    assert abs(result.sizes["local_rate"] - 1.0) <= 0.05
    assert abs(result.sizes["jump_rate"] - 3.5) <= 0.15


def test_courrege_verify_passes_at_small_scale(rng):
    # Oracle: fitted exponent 1 in 1/β of max |𝖫f − 𝒞f| (tol 0.05); remote + killing gate to 1e-10.
    result = BY_NAME["continuum.courrege.generator"].verify(rng, "small", "numpy")
    assert result.passed, result
    assert result.sizes["gate"] <= 1.0


def test_negative_control_courrege_without_drift_tilt_does_not_converge():
    # Negative control: dropping the e^{−Φ/ħ} tilt removes the drift 2Φ'f' = −0.8 cos x sin 2x (Φ = 0.2 sin x,
    # f = cos 2x): the error stays O(0.1) and its fitted exponent in 1/β is ≈ 0.
    betas = np.array([200.0, 800.0])
    errors = courrege_errors(betas, drop_drift=True)
    assert np.all(errors > 0.1)
    assert abs(fit_rate(1 / betas, errors)) < 0.05


def test_sphere_heat_kernel_matches_a_direct_float_series_at_moderate_time():
    # Oracle: the Legendre series summed in float64 with scipy's eval_legendre, where no cancellation
    # occurs (ħt = 0.5: terms decay fast, the sum is O(0.1)); tolerance 1e-12 relative.
    from scipy.special import eval_legendre

    theta, s = 1.3, 0.5
    ell = np.arange(60)
    direct = np.sum((2 * ell + 1) / (4 * math.pi) * eval_legendre(ell, math.cos(theta)) * np.exp(-s * ell * (ell + 1)))
    assert math.isclose(sphere_log_heat_kernel(theta, 0.25, hbar=2.0), math.log(direct), rel_tol=1e-12)


def test_sphere_heat_kernel_integrates_to_one():
    # Oracle: mass conservation ∫p_t dA = 2π∫p_t(θ) sin θ dθ = 1; quad tolerance 1e-9.
    mass = quad(lambda th: 2 * math.pi * math.sin(th) * math.exp(sphere_log_heat_kernel(th, 0.1)), 0, math.pi)[0]
    assert abs(mass - 1.0) < 1e-9


def test_circle_images_equal_fourier_series():
    # Oracle: Poisson summation; the two evaluations agree to 1e-10 in log p over distances and times.
    for theta in (0.0, 0.7, 2.5, math.pi):
        for s in (1.0, 0.05, 0.004):
            a = circle_log_heat_kernel(theta, s)
            b = circle_log_heat_kernel(theta, s, method="fourier")
            assert abs(a - b) < 1e-10, (theta, s)


def test_flat_line_remainder_is_zero_and_wrong_dimension_is_not():
    # Oracle: −4ħt log p_t = d² + 2mħt log(4πħt) exactly on the line (m = 1); m = 2 leaves 2ħt log(4πħt).
    hbar, t, dist = 0.3, 0.02, 0.8
    log_p = -(dist**2) / (4 * hbar * t) - 0.5 * math.log(4 * math.pi * hbar * t)
    assert abs(varadhan_remainder(log_p, dist, t, hbar, 1)) < 1e-14
    wrong = varadhan_remainder(log_p, dist, t, hbar, 2)
    assert math.isclose(wrong, -2 * hbar * t * math.log(4 * math.pi * hbar * t), rel_tol=1e-12)


# ---- why the outside cases fail: the mechanism, against closed forms -------------------------------


def test_at_the_cut_point_the_remainder_is_four_hbar_t_log_two():
    # Oracle: at θ = π two images of the line kernel tie, p_t = 2(4πħt)^{-1/2}e^{−π²/4ħt}(1 + O(e^{−2π²/ħt})),
    # so |remainder| = 4ħt log 2 exactly to rounding (the next images are below e^{−900}): O(t), not O(t²).
    times = np.array([0.02, 0.005, 0.001])
    np.testing.assert_allclose(circle_cut_point_errors(times, hbar=0.5), 4 * 0.5 * times * math.log(2), rtol=1e-10)


def test_the_triangle_wave_bias_falls_like_beta_to_the_minus_half():
    # Oracle: near a kink the deficit scales like β^{−1/2} (bond length β^{−1/2}); β ×4 at the same grid ratio
    # n/√β halves it, to the discretisation's wobble (tolerance 0.05 on the exponent).
    errors = triangle_local_errors([400.0, 1600.0])
    assert abs(math.log(errors[0] / errors[1]) / math.log(4.0) - 0.5) < 0.05


def test_a_skewed_jump_kernel_converges_to_the_uncompensated_integral(monkeypatch):
    # Oracle: the bond sum Σ_j h n(x_j − x_i)(f_i − f_j) tends to −∫[f(x+u) − f(x)]n(u)du with no compensator.
    # Adding the compensator term 2∫_{|u|<1}u n_odd back to the oracle restores the O(1/β) convergence of the
    # symmetric case (slope 1 ± 0.05), so the outside case fails by the compensator alone.
    compensator = quad(lambda u: u * nonlocal_module._skew_remote(u), -1.0, 1.0, epsabs=1e-14)[0]
    assert compensator > 0.01  # the statement's prediction differs by 2·compensator·|sin 2x|
    with_compensator = nonlocal_module._skew_limit_coefficient()
    monkeypatch.setattr(nonlocal_module, "_skew_limit_coefficient", lambda: with_compensator + 2 * compensator)
    betas = np.array([200.0, 800.0])
    assert abs(fit_rate(1 / betas, courrege_errors(betas, skew=True)) - 1.0) < 0.05


def test_negative_control_sphere_with_line_prefactor_misses_rate_two():
    # Negative control: using m = 1 instead of 2 leaves 2ħt log(4πħt) (a t log t term): the fitted exponent is
    # about 1 (bent by the log), nowhere near 2.
    times = np.array([0.02, 0.01, 0.005, 0.0025])
    rate = fit_rate(times, sphere_varadhan_errors(times, 1.0, dimension=1))
    assert abs(rate - 2.0) > 0.5


def test_negative_control_wrong_limit_constant_stops_local_convergence():
    # Negative control: comparing the local part with ħ' = 1.05ħ leaves an O(1) error: fitted exponent ≈ 0.
    betas = np.array([400.0, 800.0, 1600.0])
    local, _, gate = jump_form_errors(betas, limit_hbar=0.25 * 1.05)
    assert gate <= 1.0
    assert abs(fit_rate(1 / betas, local)) < 0.1


def test_gaussian_part_has_no_jump_part_in_the_limit():
    # Oracle: without a remote kernel, the jump part beyond r = 7/√β is the Gaussian tail ≲ e^{−49}·local.
    jk = circle_jump_kernel(512, 800.0, hbar=0.25)
    parts = beurling_deny_split(jk.kernel, jk.distances, 7 / math.sqrt(800.0), np.cos(2 * jk.points))
    assert parts.jump <= 1e-15 * parts.local


def test_wrong_rate_exponent_diverges():
    # Negative control: λ ∝ β (not β^{3/2}) makes the local part vanish like β^{-1/2}; check at two β.
    values = []
    for beta in (400.0, 1600.0):
        jk = circle_jump_kernel(512, beta, hbar=0.25)
        scale = math.sqrt(math.pi / beta)  # λ_β·√(π/β) ∝ β
        parts = beurling_deny_split(jk.kernel * scale, jk.distances, 7 / math.sqrt(beta), np.cos(jk.points))
        values.append(parts.local)
    assert math.isclose(values[1] / values[0], 0.5, rel_tol=1e-3)


def test_diffusive_rate_formula():
    # Oracle: λ_β = 4ħβ(β/π)^{m/2} by hand.
    assert math.isclose(diffusive_jump_rate(9.0, 0.5, 2), 4 * 0.5 * 9.0 * 9.0 / math.pi)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: circle_log_heat_kernel(1.0, 0.0), ValueError, "t must be in (0, inf), got 0.0"),
        (lambda: circle_log_heat_kernel(1.0, 0.1, -1.0), ValueError, "hbar must be in (0, inf), got -1.0"),
        (lambda: circle_log_heat_kernel(1.0, 0.1, method="x"), ValueError, "method must be one of"),
        (lambda: sphere_log_heat_kernel(4.0, 0.1), ValueError, "theta must be in [0, 3.14159], got 4.0"),
        (lambda: varadhan_remainder(-1.0, 1.0, 0.1, 1.0, 0), ValueError, "dimension must be an integer >= 1"),
        (lambda: varadhan_remainder(-1.0, -1.0, 0.1), ValueError, "distance must be in [0, inf), got -1.0"),
        (lambda: diffusive_jump_rate(0.0), ValueError, "beta must be in (0, inf), got 0.0"),
        (lambda: circle_jump_kernel(64, 100.0), ValueError, "n must satisfy n**2 >= 160*beta"),
        (lambda: circle_jump_kernel(4, 10.0), ValueError, "n must be an integer >= 8, got 4"),
        (lambda: circle_jump_kernel(256, 10.0, remote=lambda u: -u), ValueError, "remote must be nonnegative"),
        (lambda: circle_jump_kernel(256, 10.0, killing=lambda x: -x), ValueError, "killing must be nonnegative"),
        (lambda: circle_jump_kernel(256.0, 10.0), TypeError, "n must be an integer, got float"),
        (lambda: circle_courrege_operator(64, 100.0), ValueError, "n must satisfy n**2 >= 160*beta"),
        (lambda: circle_courrege_operator(256, 1.0), ValueError, "beta must be in [5, inf), got 1.0"),
        (lambda: circle_courrege_operator(256, 10.0, remote=lambda u: -u), ValueError, "remote must be nonnegative"),
        (lambda: circle_courrege_operator(256, 10.0, killing=lambda x: -x - 1), ValueError, "killing must be"),
    ],
)
def test_bad_input_messages(call, error, message):
    with pytest.raises(error) as excinfo:
        call()
    assert message in str(excinfo.value)
