"""Samplers with known geometry: closed-form spectra, Funk–Hecke kernel spectra, exact sampling laws."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
import scipy.special
import scipy.stats
from scipy.integrate import quad

from workbench.markov._samplers import Circle, FlatTorus, Interval, Sphere
from workbench.markov._swiss_roll import SwissRoll, _arc_length

# KS tests run on a fixed seed, so they are deterministic; the threshold p > 1e-3 is what a correct
# sampler passes with probability 0.999 over seeds, and each has a negative control (the wrong law
# rejected at p < 1e-6) showing the sample is large enough to tell the laws apart.
KS_PASS = 1e-3
KS_REJECT = 1e-6


# ---------------------------------------------------------------------------------------------
# spectra of -Δ from closed forms


def test_circle_spectrum_is_k_over_r_squared_with_multiplicity_two():
    # Oracle: Fourier modes cos kθ, sin kθ on a circle of radius r have -Δ-eigenvalue (k/r)²; exact.
    got = Circle(radius=2.0).spectrum(7)
    np.testing.assert_array_equal(got, [0.0, 0.25, 0.25, 1.0, 1.0, 2.25, 2.25])


@pytest.mark.parametrize(
    ("dim", "multiplicity"),
    [(1, lambda deg: 1 if deg == 0 else 2), (2, lambda deg: 2 * deg + 1), (3, lambda deg: (deg + 1) ** 2)],
)
def test_sphere_spectrum_closed_form_multiplicities(dim, multiplicity):
    # Oracle: -Δ on S^d has eigenvalue l(l+d-1) with the classical multiplicities
    # 1,2,2,... (d=1), 2l+1 (d=2), (l+1)² (d=3); exact integers.
    expected = [deg * (deg + dim - 1) for deg in range(60) for _ in range(multiplicity(deg))][:100]
    np.testing.assert_array_equal(Sphere(dim).spectrum(100), expected)


@pytest.mark.parametrize("dim", [2, 3, 4, 5])
def test_sphere_multiplicity_equals_brute_force_count_of_harmonic_polynomials(dim):
    # Oracle (independent algorithm): dim of degree-l harmonics on S^d = #monomials of degree l in d+1
    # variables minus #monomials of degree l-2 (Δ maps onto), counted by enumeration; exact integers.
    def monomials(degree):
        if degree < 0:
            return 0
        return sum(1 for e in itertools.product(range(degree + 1), repeat=dim + 1) if sum(e) == degree)

    spectrum = Sphere(dim).spectrum(400)
    for deg in range(5):
        assert np.count_nonzero(spectrum == deg * (deg + dim - 1)) == monomials(deg) - monomials(deg - 2)


def test_sphere_spectrum_scales_with_radius():
    # Oracle: -Δ scales as r^{-2} under dilation; exact up to one rounding.
    np.testing.assert_allclose(Sphere(2, radius=3.0).spectrum(20), Sphere(2).spectrum(20) / 9.0, rtol=1e-15)


@pytest.mark.parametrize(("dim", "side"), [(1, 2 * np.pi), (2, 2 * np.pi), (3, 1.5), (2, 0.3)])
def test_flat_torus_spectrum_equals_brute_force_lattice_enumeration(dim, side):
    # Oracle (independent algorithm): sort (2π/s)²|k|² over the whole box [-m, m]^d, which holds every
    # k with |k|² <= m² -- above the 60th value (m = 40 for d = 1, 12 otherwise); exact up to rounding.
    m = 40 if dim == 1 else 12
    box = np.array(list(itertools.product(range(-m, m + 1), repeat=dim)), dtype=float)
    expected = np.sort((2 * np.pi / side) ** 2 * (box**2).sum(axis=1))[:60]
    np.testing.assert_allclose(FlatTorus(dim, side=side).spectrum(60), expected, rtol=1e-14)


def test_flat_torus_2d_multiplicities_are_sums_of_two_squares():
    # Oracle: r_2(m) = #{k in Z²: |k|² = m} = 1, 4, 4, 0, 4, 8 for m = 0..5 (published, OEIS A004018).
    values = FlatTorus(2).spectrum(21)
    assert [int(np.count_nonzero(values == m)) for m in range(6)] == [1, 4, 4, 0, 4, 8]


def test_interval_neumann_spectrum():
    # Oracle: cos(πkx/L) has -f'' = (πk/L)² f and f'(0) = f'(L) = 0; exact up to rounding.
    np.testing.assert_allclose(Interval(2.0).spectrum(5), (np.pi * np.arange(5) / 2.0) ** 2, rtol=1e-15)


def test_swiss_roll_arc_length_matches_quadrature():
    # Oracle: numerical quadrature of |γ'(t)| = √(1+t²); quad's error estimate is ~1e-12 relative.
    roll = SwissRoll(t_start=1.0, turns=2.0, height=5.0)
    ell, _ = quad(lambda t: math.sqrt(1 + t * t), roll.t_start, roll.t_end)
    np.testing.assert_allclose(roll.arc_length, ell, rtol=1e-12)
    np.testing.assert_allclose(roll.volume, ell * 5.0, rtol=1e-12)


def test_swiss_roll_spectrum_is_neumann_rectangle():
    # Oracle (independent algorithm): brute-force sort of (πm/ℓ)² + (πk/H)² over 0 <= m, k < 50, which
    # covers the 40 lowest values (each axis alone already gives 50 smaller ones); rounding only.
    roll = SwissRoll(height=30.0)
    m, k = np.meshgrid(np.arange(50), np.arange(50))
    expected = np.sort(((np.pi * m / roll.arc_length) ** 2 + (np.pi * k / 30.0) ** 2).ravel())[:40]
    np.testing.assert_allclose(roll.spectrum(40), expected, rtol=1e-14)


def test_swiss_roll_is_isometric_to_the_rectangle():
    # Oracle: the embedding X(s, h) in arc-length coordinates has |∂_s X| = |∂_h X| = 1 and ∂_s X ⊥ ∂_h X
    # (an isometry); central differences with step 1e-5 have error ~1e-10, tolerance 1e-8.
    roll = SwissRoll()
    s = np.linspace(0.5, roll.arc_length - 0.5, 25)
    step = 1e-5

    def embed(s_values):
        t = roll.parameter_from_arc_length(s_values)
        return np.column_stack([t * np.cos(t), np.zeros_like(t), t * np.sin(t)])

    tangent = (embed(s + step) - embed(s - step)) / (2 * step)
    np.testing.assert_allclose(np.linalg.norm(tangent, axis=1), 1.0, atol=1e-8)
    np.testing.assert_allclose(tangent[:, 1], 0.0, atol=1e-12)  # ∂_h X = (0, 1, 0) is orthogonal


def test_swiss_roll_arc_length_inversion_is_accurate_to_rounding():
    # Oracle: s(t(s)) = s, forward formula; Newton stops at 4 ulp of t_1, so |error| <= ~1e-12 ℓ.
    roll = SwissRoll()
    s = np.concatenate([[0.0, roll.arc_length], np.random.default_rng(5).uniform(0, roll.arc_length, 1000)])
    t = roll.parameter_from_arc_length(s)
    np.testing.assert_allclose(_arc_length(t) - _arc_length(roll.t_start), s, rtol=0, atol=1e-12 * roll.arc_length)
    assert t.min() >= roll.t_start and t.max() <= roll.t_end


# ---------------------------------------------------------------------------------------------
# Funk–Hecke: exact eigenvalues of the continuum Gauss-kernel Markov operator


@pytest.mark.parametrize("radius", [1.0, 1.5])
@pytest.mark.parametrize("beta", [0.1, 1.0, 10.0])
def test_circle_kernel_spectrum_matches_quadrature(beta, radius):
    # Oracle: Funk–Hecke integral on S^1 by quadrature, μ_l = ∫ K(θ) cos lθ dθ / ∫ K(θ) dθ with
    # K(θ) = exp(-2βr²(1 - cos θ)) = exp(-β|x - y|²); independent of Bessel functions. quad: ~1e-13.
    c = 2 * beta * radius**2

    def moment(deg):
        return quad(lambda t: np.exp(-c * (1 - np.cos(t))) * np.cos(deg * t), 0, 2 * np.pi, limit=200)[0]

    expected = [moment(deg) / moment(0) for deg in range(6)]
    got = Circle(radius=radius).kernel_spectrum(beta, 11)
    np.testing.assert_allclose(got[[0, 1, 3, 5, 7, 9]], expected, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(got[1::2], got[2::2])  # multiplicity 2


@pytest.mark.parametrize("beta", [0.1, 1.0, 10.0])
def test_sphere_kernel_spectrum_matches_quadrature(beta):
    # Oracle: Funk–Hecke for zonal kernels, μ_l = ∫ k(t) P_l(t) w(t) dt / ∫ k(t) w(t) dt with
    # k(t) = exp(-2β(1 - t)) (|x-y|² = 2 - 2t on the unit sphere), P_l the Legendre polynomial for S²
    # (weight 1), and the normalised Gegenbauer C_l^(1)(t)/(l+1) for S³ (weight √(1-t²)).  The polynomial
    # moments cancel, so quad is accurate to ~1e-13 absolute, not relative: atol 1e-12.
    def ratio(poly, weight, deg):
        def moment(f):
            return quad(lambda t: np.exp(-2 * beta * (1 - t)) * f(t) * weight(t), -1, 1, limit=200)[0]

        return moment(lambda t: poly(deg, t)) / moment(lambda t: 1.0)

    s2 = Sphere(2).kernel_spectrum(beta, 25)  # l = 0..4 start at 0, 1, 4, 9, 16
    for deg in range(5):
        expected = ratio(scipy.special.eval_legendre, lambda t: 1.0, deg)
        np.testing.assert_allclose(s2[deg * deg : (deg + 1) ** 2], expected, rtol=1e-10, atol=1e-12)
    s3 = Sphere(3).kernel_spectrum(beta, 30)  # l = 0..3 start at 0, 1, 5, 14
    starts = np.cumsum([0, 1, 4, 9, 16])
    for deg in range(4):
        expected = ratio(
            lambda n, t: scipy.special.eval_gegenbauer(n, 1.0, t) / (n + 1), lambda t: np.sqrt(1 - t * t), deg
        )
        np.testing.assert_allclose(s3[starts[deg] : starts[deg + 1]], expected, rtol=1e-10, atol=1e-12)


def test_sphere_of_dimension_one_is_the_circle():
    # Oracle: S^1 ⊂ R² is the unit circle; both routes give I_l(2β)/I_0(2β) and l²; rounding only.
    np.testing.assert_allclose(Sphere(1).kernel_spectrum(0.7, 9), Circle().kernel_spectrum(0.7, 9), rtol=1e-15)
    np.testing.assert_array_equal(Sphere(1).spectrum(9), Circle().spectrum(9))


@pytest.mark.parametrize("sampler", [Circle(), Circle(radius=0.5), Sphere(2), Sphere(3), Sphere(2, radius=2.0)])
def test_kernel_spectrum_converges_to_laplacian_at_rate_one_over_beta(sampler):
    # Oracle: 4β(1 - μ_l) = λ_l + C_l/β + O(β^-2) (the generator limit 4β(I - P_β) -> -Δ with the
    # closed-form λ_l); the fitted slope of log|error| against log(1/β) over β in [1e3, 1e5] is 1 up to
    # the O(1/β) curvature of the log-log line, < 0.01 there.  Rounding in 4β(1 - μ) is ~4β·1e-15 <= 4e-10,
    # far below the error C_l/β >= 1e-6.
    betas = np.logspace(3, 5, 9)
    count = 10
    exact = sampler.spectrum(count)
    errors = np.array([4 * b * (1 - sampler.kernel_spectrum(b, count)) - exact for b in betas])
    for column in range(1, count):  # l = 0 is exact (μ_0 = 1)
        if isinstance(sampler, Sphere) and sampler.dim == 2 and exact[column] * sampler.radius**2 == 2:
            continue  # S², l = 1: C_1 = 0, the error is exponentially small (Langevin test below)
        slope = np.polyfit(np.log(1 / betas), np.log(np.abs(errors[:, column])), 1)[0]
        assert abs(slope - 1.0) < 0.01, (column, slope)
    np.testing.assert_array_equal(errors[:, 0], 0.0)


def test_two_sphere_first_kernel_eigenvalue_is_the_langevin_function():
    # Oracle: on S², μ_1 = ∫ e^{ct} t dt / ∫ e^{ct} dt = coth c - 1/c (c = 2β), in closed form, so
    # 4β(1 - μ_1) = 2 + 4β(1 - coth 2β): no 1/β term.  Rounding only (coth computed as 1/tanh).
    for beta in (0.05, 0.5, 5.0, 50.0):
        c = 2 * beta
        np.testing.assert_allclose(Sphere(2).kernel_spectrum(beta, 4)[1:], 1 / np.tanh(c) - 1 / c, rtol=1e-12)


def test_kernel_spectrum_is_finite_at_extreme_bandwidths():
    # Oracle: μ_0 = 1 and 0 <= μ_l <= 1 (a Markov operator); ive keeps e^{2β} out of the ratio.
    for beta in (1e-8, 1e8):
        mu = Sphere(2).kernel_spectrum(beta, 50)
        assert np.all(np.isfinite(mu)) and mu[0] == 1.0 and np.all((mu >= 0) & (mu <= 1))


def test_kernel_spectrum_rejects_bad_input():
    with pytest.raises(
        ValueError,
        match=r"kernel_spectrum needs the uniform circle \(density_amplitude = 0\), got density_amplitude=0.5",
    ):
        Circle(density_amplitude=0.5).kernel_spectrum(1.0, 3)
    with pytest.raises(ValueError, match=r"beta must be in \(0, inf\), got 0.0"):
        Sphere(2).kernel_spectrum(0.0, 3)
    with pytest.raises(ValueError, match=r"count must be an integer >= 1, got 0"):
        Circle().kernel_spectrum(1.0, 0)


# ---------------------------------------------------------------------------------------------
# sampling laws


@pytest.mark.parametrize("amplitude", [0.6, -0.9])
def test_circle_angles_follow_the_exact_cdf(amplitude):
    # Oracle: KS test of angles against F(θ) = θ/2π + a sin θ/2π (threshold: see KS_PASS).
    circle = Circle(radius=1.3, density_amplitude=amplitude)
    x = circle.sample(20000, seed=11)
    np.testing.assert_allclose(np.hypot(x[:, 0], x[:, 1]), 1.3, rtol=1e-15)
    theta = np.mod(np.arctan2(x[:, 1], x[:, 0]), 2 * np.pi)
    exact = scipy.stats.kstest(theta, lambda t: (t + amplitude * np.sin(t)) / (2 * np.pi))
    uniform = scipy.stats.kstest(theta, scipy.stats.uniform(0, 2 * np.pi).cdf)
    assert exact.pvalue > KS_PASS, exact
    assert uniform.pvalue < KS_REJECT, uniform


def test_circle_density_is_normalised_and_matches_the_angle_law():
    # Oracle: ∫ ρ ds over the circle = 1 (quadrature, ~1e-14), and ρ·2πr/(1 + a cos θ) = 1 pointwise.
    circle = Circle(radius=2.0, density_amplitude=0.4)
    total = quad(lambda t: circle.density(2.0 * np.array([[np.cos(t), np.sin(t)]]))[0] * 2.0, 0, 2 * np.pi)[0]
    np.testing.assert_allclose(total, 1.0, rtol=1e-12)
    x = circle.sample(50, seed=0)
    theta = np.arctan2(x[:, 1], x[:, 0])
    np.testing.assert_allclose(circle.density(x) * 4 * np.pi, 1 + 0.4 * np.cos(theta), rtol=1e-14)


@pytest.mark.parametrize("dim", [2, 3])
def test_sphere_coordinate_follows_the_exact_marginal(dim):
    # Oracle: a coordinate t of a uniform point on S^d has density ∝ (1-t²)^{(d-2)/2}, i.e.
    # (t+1)/2 ~ Beta(d/2, d/2) (Archimedes: uniform for d = 2). KS threshold: see KS_PASS.
    x = Sphere(dim).sample(20000, seed=12)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=1e-14)
    law = scipy.stats.beta(dim / 2, dim / 2)
    assert scipy.stats.kstest((x[:, -1] + 1) / 2, law.cdf).pvalue > KS_PASS
    assert scipy.stats.kstest((x[:, -1] + 1) / 2, scipy.stats.beta(dim, dim).cdf).pvalue < KS_REJECT


def test_sphere_density_integrates_to_one():
    # Oracle: |S²| = 4π, |S³| = 2π² (closed forms); rounding only.
    np.testing.assert_allclose(Sphere(2).density(np.zeros((3, 3))), 1 / (4 * np.pi), rtol=1e-15)
    np.testing.assert_allclose(Sphere(3, radius=2.0).volume, 2 * np.pi**2 * 8.0, rtol=1e-15)


def test_flat_torus_samples_lie_on_the_product_of_circles_uniformly():
    # Oracle: each factor has radius s/2π and a uniform angle (KS, see KS_PASS).
    torus = FlatTorus(3, side=3.0)
    x = torus.sample(5000, seed=13)
    assert x.shape == (5000, 6)
    rho = 3.0 / (2 * np.pi)
    for i in range(3):
        np.testing.assert_allclose(np.hypot(x[:, 2 * i], x[:, 2 * i + 1]), rho, rtol=1e-14)
        theta = np.mod(np.arctan2(x[:, 2 * i + 1], x[:, 2 * i]), 2 * np.pi)
        assert scipy.stats.kstest(theta, scipy.stats.uniform(0, 2 * np.pi).cdf).pvalue > KS_PASS
    np.testing.assert_allclose(torus.density(x), 1 / 27.0, rtol=1e-15)


def test_swiss_roll_area_sampling_is_uniform_in_arc_length():
    # Oracle: KS test of t against the exact CDF F(t) = (s(t) - s(t_0))/ℓ of area-uniform sampling;
    # negative control: the parameter-uniform law is rejected.  Heights are U[0, H].  See KS_PASS.
    roll = SwissRoll()
    x = roll.sample(20000, seed=14)
    t = np.hypot(x[:, 0], x[:, 2])
    cdf = lambda u: (_arc_length(u) - _arc_length(roll.t_start)) / roll.arc_length  # noqa: E731
    assert scipy.stats.kstest(t, cdf).pvalue > KS_PASS
    assert scipy.stats.kstest(t, scipy.stats.uniform(roll.t_start, roll.t_end - roll.t_start).cdf).pvalue < KS_REJECT
    assert scipy.stats.kstest(x[:, 1], scipy.stats.uniform(0, roll.height).cdf).pvalue > KS_PASS
    np.testing.assert_allclose(roll.intrinsic_coordinates(x)[:, 0], cdf(t) * roll.arc_length, rtol=1e-12, atol=1e-12)


def test_swiss_roll_parameter_sampling_is_uniform_in_t_and_its_density_integrates_to_one():
    # Oracle: KS of t against U[t_0, t_1] (the make_swiss_roll law); the stated area density integrates
    # to 1 over the sheet, ∫∫ ρ dA = H ∫ ρ(t) √(1+t²) dt (quadrature, ~1e-12).
    roll = SwissRoll(sampling="parameter")
    x = roll.sample(20000, seed=15)
    t = np.hypot(x[:, 0], x[:, 2])
    assert scipy.stats.kstest(t, scipy.stats.uniform(roll.t_start, roll.t_end - roll.t_start).cdf).pvalue > KS_PASS

    def rho(u):
        return roll.density(np.array([[u * np.cos(u), 0.0, u * np.sin(u)]]))[0]

    total = roll.height * quad(lambda u: rho(u) * np.sqrt(1 + u * u), roll.t_start, roll.t_end)[0]
    np.testing.assert_allclose(total, 1.0, rtol=1e-12)
    np.testing.assert_allclose(SwissRoll().density(x), 1 / SwissRoll().volume, rtol=1e-15)


def test_interval_samples_are_uniform():
    # Oracle: KS against U[0, L] (see KS_PASS).
    x = Interval(3.0).sample(10000, seed=16)
    assert x.shape == (10000, 1)
    assert scipy.stats.kstest(x[:, 0], scipy.stats.uniform(0, 3.0).cdf).pvalue > KS_PASS
    np.testing.assert_allclose(Interval(3.0).density(x), 1 / 3.0)


# ---------------------------------------------------------------------------------------------
# reproducibility and bad input

SAMPLERS = [Circle(), Circle(density_amplitude=0.5), Sphere(3), FlatTorus(2), Interval(), SwissRoll()]


@pytest.mark.parametrize("sampler", SAMPLERS, ids=lambda s: type(s).__name__)
def test_seeded_sampling_is_reproducible_and_accepts_a_generator(sampler):
    a = sampler.sample(40, seed=7)
    np.testing.assert_array_equal(a, sampler.sample(40, seed=7))
    assert a.shape == (40, sampler.ambient_dimension)
    assert not np.array_equal(a, sampler.sample(40, seed=8))
    rng = np.random.default_rng(7)
    np.testing.assert_array_equal(sampler.sample(40, seed=rng), a)  # a Generator is used as given...
    assert not np.array_equal(sampler.sample(40, seed=rng), a)  # ...and advances
    assert sampler.sample(3).shape == (3, sampler.ambient_dimension)  # seed=None: fresh entropy
    assert len(sampler.spectrum(5)) == 5 and sampler.intrinsic_dimension >= 1


def test_samplers_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Circle().radius = 2.0


def test_samplers_reject_bad_input():
    with pytest.raises(ValueError, match=r"radius must be in \(0, inf\), got -1.0"):
        Circle(radius=-1.0)
    with pytest.raises(ValueError, match=r"density_amplitude must be in \(-1, 1\), got 1.0"):
        Circle(density_amplitude=1.0)
    with pytest.raises(ValueError, match=r"dim must be an integer >= 1, got 0"):
        Sphere(0)
    with pytest.raises(TypeError, match=r"dim must be an integer, got float"):
        FlatTorus(1.5)
    with pytest.raises(ValueError, match=r"side must be in \(0, inf\), got 0.0"):
        FlatTorus(2, side=0.0)
    with pytest.raises(ValueError, match=r"length must be in \(0, inf\), got -2.0"):
        Interval(-2.0)
    with pytest.raises(ValueError, match=r"t_start must be in \[0, inf\), got -1.0"):
        SwissRoll(t_start=-1.0)
    with pytest.raises(ValueError, match=r"sampling must be one of 'area', 'parameter', got 'volume'"):
        SwissRoll(sampling="volume")
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got 0"):
        Sphere(2).sample(0)
    with pytest.raises(TypeError, match=r"n must be an integer, got float"):
        Interval().sample(2.5)
    with pytest.raises(ValueError, match=r"count must be an integer >= 1, got -1"):
        FlatTorus(2).spectrum(-1)
    with pytest.raises(TypeError, match=r"seed must be None, an int or a numpy Generator, got str"):
        Circle().sample(3, seed="abc")
    with pytest.raises(
        ValueError, match=r"points must have 3 columns \(the ambient dimension of SwissRoll\), got shape \(4, 2\)"
    ):
        SwissRoll().density(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"points must be a 2-dimensional array, got shape \(3,\)"):
        Circle().density(np.zeros(3))
    with pytest.raises(ValueError, match=r"s must be in \[0, 89.37\d*\] \(the arc length\), got range \[-1, 1\]"):
        SwissRoll().parameter_from_arc_length([-1.0, 1.0])
