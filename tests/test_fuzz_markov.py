"""Fuzz suite, ``workbench.markov``: every public callable, one bad argument at a time (harness: ``fuzz.py``).

The valid inputs are small (six points in the plane, a Gauss kernel at β = 1, its Markov operator and a
non-reversible three-state cycle), so that the whole file runs in seconds.
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from fuzz import Case, public_callables, run

from workbench import markov


def _points():
    return np.random.default_rng(0).standard_normal((6, 2))


def _kernel():
    return markov.gauss_kernel(_points(), 1.0)


def _rates():
    K = _kernel()
    return K - np.diag(np.diag(K))  # jump rates: the diagonal is ignored, zero it for clarity


def _P():
    return markov.markov_operator(_kernel())


def _pi():
    return markov.reversible_stationary_law(_kernel())


def _cycle_P():
    # The non-reversible three-state rotation of the currents docstrings; its stationary law is uniform.
    return np.array([[0.0, 0.7, 0.3], [0.3, 0.0, 0.7], [0.7, 0.3, 0.0]])


def _f():
    return _points()[:, 0]


def _g():
    return _points()[:, 1]


def _distances():
    x = _points()
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


def _graph():
    G = nx.Graph()
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("b", "c", weight=1.0)
    return G


def _generator():
    return np.array([[-1.0, 1.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, -2.0]])


CASES = [
    # --- samples with known geometry -----------------------------------------------------------------
    Case("workbench.markov.Circle", lambda: ((1.0, 0.5), {})),
    Case("workbench.markov.Sphere", lambda: ((2, 1.0), {})),
    Case("workbench.markov.FlatTorus", lambda: ((2, 6.0), {})),
    Case("workbench.markov.Interval", lambda: ((1.0,), {})),
    Case("workbench.markov.SwissRoll", lambda: ((4.7, 1.5, 21.0, "area"), {})),
    # --- kernels and bandwidths ------------------------------------------------------------------------
    Case("workbench.markov.gauss_kernel", lambda: ((_points(), 1.0), {})),
    Case("workbench.markov.gauss_kernel_sparse", lambda: ((_points(), 1.0), {"k": 3})),
    Case("workbench.markov.squared_distances", lambda: ((_points(),), {})),
    Case("workbench.markov.alpha_normalize", lambda: ((_kernel(), 0.5), {})),
    Case("workbench.markov.median_bandwidth", lambda: ((_points(),), {"max_points": 5, "seed": 0})),
    Case(
        "workbench.markov.bandwidth_sweep",
        lambda: ((np.random.default_rng(0).uniform(size=(30, 1)),), {"betas": [1.0, 10.0, 100.0], "k": 5, "seed": 0}),
    ),
    Case(
        "workbench.markov.graph_weights",
        lambda: ((_graph(),), {"weight": "weight", "nodelist": ["a", "b", "c"]}),
        fixed={"nodelist": "a list of graph nodes: any hashable is a valid node name, so no value is 'bad' by type"},
    ),
    # --- operators ---------------------------------------------------------------------------------------
    Case("workbench.markov.MarkovOperator", lambda: ((_P(),), {"stationary": _pi(), "atol": 1e-10})),
    Case("workbench.markov.MarkovOperator", lambda: ((scipy.sparse.csr_array(_P()),), {"stationary": _pi()})),
    Case("workbench.markov.doob_transform", lambda: ((_kernel(), np.ones(6) + _f() ** 2), {})),
    Case("workbench.markov.markov_operator", lambda: ((_kernel(),), {})),
    Case("workbench.markov.softmax_operator", lambda: ((_distances(), 1.0), {})),
    Case("workbench.markov.markov_semigroup", lambda: ((_generator(), 0.5), {})),
    Case("workbench.markov.sparse_factorisation", lambda: ((1000,), {})),
    Case("workbench.markov.reversible_stationary_law", lambda: ((_kernel(),), {})),
    Case("workbench.markov.stationary_laws", lambda: ((np.stack([_P(), _P() @ _P()]),), {"atol": 1e-10})),
    # --- forms, cycles and currents ---------------------------------------------------------------------
    Case("workbench.markov.dirichlet_form", lambda: ((_kernel(), _f(), _g()), {})),
    Case(
        "workbench.markov.beurling_deny_split",
        lambda: ((_kernel(), _distances(), 1.0, _f()), {"killing": np.full(6, 0.1)}),
    ),
    Case(
        "workbench.markov.beurling_deny_scan",
        lambda: ((_kernel(), _distances(), [0.5, 1.0, 2.0], _f()), {"killing": np.full(6, 0.1)}),
    ),
    Case("workbench.markov.killing_measure", lambda: ((_P() * 0.9, _pi()), {"tol": 1e-10})),
    Case("workbench.markov.support_graph", lambda: ((_cycle_P(),), {})),
    Case("workbench.markov.cycle_basis", lambda: ((_cycle_P(),), {})),
    Case("workbench.markov.cycle_affinities", lambda: ((_cycle_P(),), {"cycles": [(0, 1, 2)]})),
    Case("workbench.markov.kolmogorov_residual", lambda: ((_cycle_P(),), {"cycles": [(0, 1, 2)]})),
    Case("workbench.markov.cycle_edges", lambda: (([(0, 1, 2, 0), (2, 3)], 4), {})),
    Case("workbench.markov.segment_sums", lambda: ((np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 3])), {})),
    Case(
        "workbench.markov.hodge_split", lambda: ((_cycle_P() - _cycle_P().T,), {"weights": _cycle_P() + _cycle_P().T})
    ),
    # --- Bakry–Émery calculus and curvature --------------------------------------------------------------
    Case("workbench.markov.carre_du_champ", lambda: ((_rates(), _f(), _g()), {"form": "edge"})),
    Case("workbench.markov.gamma2", lambda: ((_rates(), _f(), _g()), {})),
    Case("workbench.markov.hessian_form", lambda: ((_rates(), _f() ** 2, _f(), _g()), {})),
    Case("workbench.markov.bakry_emery_curvature", lambda: ((np.ones((5, 5)) - np.eye(5),), {"vertices": [0, 3]})),
    Case(
        "workbench.markov.ollivier_ricci",
        lambda: ((np.ones((5, 5)) - np.eye(5),), {"edges": [[0, 1], [2, 4]], "idleness": 0.25}),
    ),
    # --- stationary currents and the gauge ---------------------------------------------------------------
    Case("workbench.markov.stationary_current", lambda: ((_cycle_P(), np.full(3, 1 / 3)), {})),
    Case(
        "workbench.markov.circulation",
        lambda: ((_cycle_P(), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), np.full(3, 1 / 3)), {}),
    ),
    Case("workbench.markov.hatano_nelson", lambda: ((_cycle_P(), np.full(3, 1 / 3)), {})),
    Case("workbench.markov.gauge_gradients", lambda: ((_cycle_P(), np.full(3, 1 / 3)), {})),
]

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.markov.BandwidthSweep": "a result record that bandwidth_sweep builds; its fields are not inputs",
    "workbench.markov.BeurlingDenyParts": "a result record that beurling_deny_split builds; its fields are not inputs",
    "workbench.markov.GaugeGradients": "a result record that gauge_gradients builds; its fields are not inputs",
    "workbench.markov.HodgeDecomposition": "a result record that hodge_split builds; its fields are not inputs",
    "workbench.markov.Spectrum": "a result record that MarkovOperator.spectrum builds; its fields are not inputs",
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.markov") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- methods of the public classes ------------------------------------------------------------------------


def _circle_points():
    return markov.Circle(1.0, 0.5).sample(4, seed=0)


def _roll_points():
    return markov.SwissRoll().sample(4, seed=0)


def _sampled_operator():
    return markov.MarkovOperator.from_points(_points(), 1.0)


METHOD_CASES = [
    # --- samplers: draws, closed-form spectra and densities ----------------------------------------------
    Case("workbench.markov.Circle.sample", lambda: ((markov.Circle(1.0, 0.5), 5), {"seed": 0})),
    Case("workbench.markov.Circle.sample_angles", lambda: ((markov.Circle(1.0, 0.5), 5), {"seed": 0})),
    Case("workbench.markov.Circle.spectrum", lambda: ((markov.Circle(2.0), 5), {})),
    Case("workbench.markov.Circle.density", lambda: ((markov.Circle(1.0, 0.5), _circle_points()), {})),
    Case("workbench.markov.Circle.kernel_spectrum", lambda: ((markov.Circle(1.0), 3.0, 4), {})),
    Case("workbench.markov.Sphere.sample", lambda: ((markov.Sphere(2), 5), {"seed": 0})),
    Case("workbench.markov.Sphere.spectrum", lambda: ((markov.Sphere(2), 9), {})),
    Case("workbench.markov.Sphere.density", lambda: ((markov.Sphere(2), markov.Sphere(2).sample(4, seed=0)), {})),
    Case("workbench.markov.Sphere.kernel_spectrum", lambda: ((markov.Sphere(2), 2.0, 5), {})),
    Case("workbench.markov.FlatTorus.sample", lambda: ((markov.FlatTorus(2), 5), {"seed": 0})),
    Case("workbench.markov.FlatTorus.sample_angles", lambda: ((markov.FlatTorus(2), 5), {"seed": 0})),
    Case("workbench.markov.FlatTorus.spectrum", lambda: ((markov.FlatTorus(2), 10), {})),
    Case(
        "workbench.markov.FlatTorus.density",
        lambda: ((markov.FlatTorus(2), markov.FlatTorus(2).sample(4, seed=0)), {}),
    ),
    Case("workbench.markov.Interval.sample", lambda: ((markov.Interval(2.0), 5), {"seed": 0})),
    Case("workbench.markov.Interval.spectrum", lambda: ((markov.Interval(2.0), 4), {})),
    Case("workbench.markov.Interval.density", lambda: ((markov.Interval(2.0), np.array([[0.5], [1.5]])), {})),
    Case("workbench.markov.SwissRoll.sample", lambda: ((markov.SwissRoll(), 5), {"seed": 0})),
    Case("workbench.markov.SwissRoll.sample_parameters", lambda: ((markov.SwissRoll(), 5), {"seed": 0})),
    Case("workbench.markov.SwissRoll.spectrum", lambda: ((markov.SwissRoll(), 6), {})),
    Case("workbench.markov.SwissRoll.density", lambda: ((markov.SwissRoll(), _roll_points()), {})),
    Case(
        "workbench.markov.SwissRoll.density",
        lambda: ((markov.SwissRoll(sampling="parameter"), _roll_points()), {}),
    ),
    Case("workbench.markov.SwissRoll.intrinsic_coordinates", lambda: ((markov.SwissRoll(), _roll_points()), {})),
    Case(
        "workbench.markov.SwissRoll.parameter_from_arc_length",
        lambda: ((markov.SwissRoll(), np.array([0.0, 10.0, 50.0])), {}),
    ),
    # --- MarkovOperator: constructors and spectral data ---------------------------------------------------
    Case("workbench.markov.MarkovOperator.from_kernel", lambda: ((_kernel(),), {"alpha": 0.5})),
    Case(
        "workbench.markov.MarkovOperator.from_kernel",
        lambda: ((scipy.sparse.csr_array(_kernel()),), {"alpha": 1.0}),
    ),
    Case("workbench.markov.MarkovOperator.from_points", lambda: ((_points(), 1.0), {"alpha": 0.5})),
    Case(
        "workbench.markov.MarkovOperator.from_points",
        lambda: ((_points(),), {"k": 3, "zero_diagonal": True}),
        fixed={"zero_diagonal": "a flag: both values are valid"},
    ),
    Case("workbench.markov.MarkovOperator.from_points", lambda: ((_points(),), {"radius": 2.0})),
    Case(
        "workbench.markov.MarkovOperator.from_networkx",
        lambda: ((_graph(),), {"weight": "weight", "nodelist": ["a", "b", "c"]}),
        fixed={"nodelist": "a list of graph nodes: any hashable is a valid node name, so no value is 'bad' by type"},
    ),
    Case("workbench.markov.MarkovOperator.spectrum", lambda: ((markov.MarkovOperator(_P()), 3), {})),
    Case("workbench.markov.MarkovOperator.spectrum", lambda: ((markov.MarkovOperator(_cycle_P()), 2), {})),
    Case(
        "workbench.markov.MarkovOperator.diffusion_map",
        lambda: ((markov.MarkovOperator.from_kernel(_kernel()),), {"n_components": 2, "t": 1.5}),
    ),
    Case(
        "workbench.markov.MarkovOperator.nystrom",
        lambda: ((_sampled_operator(), _points()[:3] + 0.1), {"n_components": 2, "t": 1.0}),
        aliases={"points": ("points columns",)},
    ),
]


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    assert public_methods("workbench.markov") - {case.function for case in METHOD_CASES} == set()


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    run(case)


# ---- what the method fuzz found, pinned -------------------------------------------------------------------


def _harmonic_degrees(dim, count):
    # Degree l repeated by its multiplicity on S^d: 1, 2, 2, ... (d = 1), 2l + 1 (d = 2), (l + 1)^2 (d = 3).
    multiplicity = {1: lambda deg: 1 if deg == 0 else 2, 2: lambda deg: 2 * deg + 1, 3: lambda deg: (deg + 1) ** 2}
    return [deg for deg in range(count) for _ in range(multiplicity[dim](deg))][:count]


@pytest.mark.parametrize("sampler", [markov.Circle(), markov.Sphere(2), markov.Sphere(3)], ids=["S1", "S2", "S3"])
@pytest.mark.parametrize("beta", [4e8, 1e12, 1e-10])
def test_kernel_spectrum_beyond_the_range_of_ive_matches_mpmath(sampler, beta):
    # scipy's ive returns NaN for arguments past about 2^31, so 2βr² >= 1e9 uses the Hankel expansion and
    # 2βr² < 1e-8 the leading power; beta = 4e8 stays on ive as a control.  Oracle: mpmath's besseli ratio
    # I_{l+ν}(2β)/I_ν(2β), ν = (d - 1)/2, at 40 digits.  Tolerance 1e-14: a few roundings in the series and the
    # ratio (measured <= 1.2e-16).
    import mpmath

    nu = 0.5 * (sampler.intrinsic_dimension - 1)
    with mpmath.workdps(40):
        x = mpmath.mpf(2 * beta)
        degrees = _harmonic_degrees(sampler.intrinsic_dimension, 12)
        want = [float(mpmath.besseli(deg + nu, x) / mpmath.besseli(nu, x)) for deg in degrees]
    np.testing.assert_allclose(sampler.kernel_spectrum(beta, 12), want, rtol=1e-14, atol=0.0)


def test_kernel_spectrum_is_one_where_two_beta_r_squared_overflows():
    # Oracle: μ_l = 1 - l(l + d - 1)/(4βr²) + O(β^-2), which rounds to 1 for every degree once 2βr² > 1e308
    # (scipy's ive gave NaN there); exact.
    np.testing.assert_array_equal(markov.Sphere(2).kernel_spectrum(1e308, 10), np.ones(10))
    np.testing.assert_array_equal(markov.Circle(2.0).kernel_spectrum(1e308, 5), np.ones(5))


def test_kernel_spectrum_refuses_degrees_out_of_reach_of_the_expansion():
    # At 2β = 1e9 degrees beyond √(2β) ≈ 3.2e4 would cancel digits in the Hankel series: a refusal, not a guess.
    with pytest.raises(ValueError, match=r"^beta = 500000000.0 \(2·beta·radius² = 1e\+09\): the Funk–Hecke"):
        markov.Circle().kernel_spectrum(5e8, 100_000)


def test_samplers_refuse_sizes_beyond_memory():
    for sampler in (markov.Circle(), markov.Sphere(2), markov.FlatTorus(2), markov.Interval(), markov.SwissRoll()):
        with pytest.raises(ValueError, match=r"^n = 1000000000000 samples of \d+ coordinates needs about"):
            sampler.sample(10**12)
        with pytest.raises(ValueError, match=r"^count = 1000000000000 eigenvalues needs about"):
            sampler.spectrum(10**12)


def test_large_spectra_are_fast_closed_forms():
    # Oracle: the closed forms (k/r)² with multiplicity 2 (circle) and l(l+1) with 2l+1 (S²); exact.
    k = (np.arange(10**6) + 1) // 2
    np.testing.assert_array_equal(markov.Circle(2.0).spectrum(10**6), (k / 2.0) ** 2)
    degree = np.floor(np.sqrt(np.arange(10**6)))  # S²: degree l fills the indices l², ..., (l + 1)² - 1
    np.testing.assert_array_equal(markov.Sphere(2).spectrum(10**6), degree * (degree + 1))


def test_markov_operator_method_refusals_name_the_parameter():
    op = markov.MarkovOperator.from_points(_points(), 1.0)
    with pytest.raises(ValueError, match=r"^n_components must be an integer in \[1, 5\], got 0"):
        op.diffusion_map(0)
    with pytest.raises(TypeError, match=r"^n_components must be an integer, got str"):
        op.nystrom(_points()[:2], "2")
    with pytest.raises(ValueError, match=r"^points must hold at least one new point \(a row\), got shape \(0, 2\)"):
        op.nystrom(np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"^points must hold at least one point \(a row\), got shape \(0, 2\)"):
        markov.MarkovOperator.from_points(np.zeros((0, 2)), k=3)
    with pytest.raises(ValueError, match=r"^radius = 1e\+308 gives no default beta = 9/radius² in floating point"):
        markov.MarkovOperator.from_points(_points(), radius=1e308)


# ---- huge entries: finite inputs whose results leave the double range (issue 17) --------------------------
# Where the mathematics is scale-invariant or scale-covariant the result is computed exactly (the oracle is the
# unscaled computation times the scale, or a closed form); elsewhere the refusal names the input that is too large.


@pytest.mark.parametrize("scale", [1e300, 1e-250])
def test_bakry_emery_curvature_is_computed_at_any_rate_scale(scale):
    # Closed form: the complete graph K_5 with unit rates has K_∞ = 1 + n/2 = 3.5 (Klartag et al. 2016); the
    # curvature is linear in the rates.  Rates 1e300 overflowed the products W_xy W_yz, rates 1e-250 underflowed
    # them.  Tolerance 1e-12 relative: a batched eigvalsh of 4×4 local forms.
    A = np.ones((5, 5)) - np.eye(5)
    np.testing.assert_allclose(markov.bakry_emery_curvature(scale * A), 3.5 * scale, rtol=1e-12)


def test_doob_transform_ignores_the_scale_of_h():
    # P_h is homogeneous of degree 0 in h; oracle: the same transform of the unscaled h.  Tolerance 1e-14: h
    # rescaled by 1e300 / max h carries one rounding per entry.
    h = np.ones(6) + _f() ** 2
    reference = markov.doob_transform(_kernel(), h).P
    np.testing.assert_allclose(markov.doob_transform(_kernel(), h * (1e300 / h.max())).P, reference, rtol=1e-14)


def test_neighbour_graphs_of_huge_points_are_those_of_the_unscaled_points():
    # The kNN graph is scale-invariant (oracle: the graph of the unscaled points, scaled by a power of two so that
    # the comparison is exact); every kernel value off the diagonal is e^{-β d²} = 0 to double precision.
    x = _points()
    small, huge = markov.gauss_kernel_sparse(x, 1.0, k=3), markov.gauss_kernel_sparse(x * 2.0**990, 1.0, k=3)
    np.testing.assert_array_equal(huge.indptr, small.indptr)
    np.testing.assert_array_equal(huge.indices, small.indices)
    np.testing.assert_array_equal(huge.toarray(), np.eye(6))
    np.testing.assert_array_equal(markov.gauss_kernel(x * 2.0**990, 1.0), np.eye(6))  # dense: the same kernel


def test_distances_and_bandwidths_of_huge_points_are_refused_by_name():
    x = 1e300 * _points()
    with pytest.raises(
        ValueError, match=r"^squared_distances overflows float64 .* for points \(max \|entry\| 1\.3e\+300\)"
    ):
        markov.squared_distances(x)
    with pytest.raises(ValueError, match=r"median pairwise squared distance within double precision .*rescale points$"):
        markov.median_bandwidth(x)
    with pytest.raises(
        ValueError, match=r"^points \(largest \|entry\| 1\.3e\+300\) give no default beta = 1/median d²_k"
    ):
        markov.MarkovOperator.from_points(x, k=3)


def test_hatano_nelson_of_a_huge_law_is_the_scaled_one():
    # Ā = √(A_ij A_ji) is linear and θ invariant in π (oracle: the unscaled π, the factor 1e300 applied after).
    # Tolerances: Ā few ulps (split square roots); θ absolute 1e-12 (a difference of logs of size 690).
    P, pi = _cycle_P(), np.full(3, 1 / 3)
    A_bar, theta = markov.hatano_nelson(P, pi)
    big_A_bar, big_theta = markov.hatano_nelson(P, 1e300 * pi)
    np.testing.assert_allclose(big_A_bar, 1e300 * A_bar, rtol=1e-14)
    np.testing.assert_allclose(big_theta, theta, rtol=0, atol=1e-12)


def test_forms_quadratic_in_huge_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match=r"^gamma2 overflows float64 .* for rates \(max \|entry\| 8\.96e\+299\), f"):
        markov.gamma2(1e300 * _rates(), _f(), _g())
    with pytest.raises(ValueError, match=r"^the local part of the Dirichlet energy E\(f, f\) overflows .* f \(max"):
        markov.beurling_deny_split(_kernel(), _distances(), 1.0, 1e300 * _f())
    with pytest.raises(ValueError, match=r"^SwissRoll\.intrinsic_coordinates overflows .* for points"):
        markov.SwissRoll().intrinsic_coordinates(np.array([[1e300, 0.0, 1e300]]))


def test_swiss_roll_density_at_huge_points():
    # Closed form 1/((t₁ − t₀) H √(1 + t²)) with √(1 + t²) = t in double precision for t = √2·1e300.
    # Tolerance 1e-15: three roundings.
    roll = markov.SwissRoll(sampling="parameter")
    t = np.hypot(1e300, 1e300)
    expected = 1.0 / ((roll.t_end - roll.t_start) * roll.height) / t
    np.testing.assert_allclose(roll.density(np.array([[1e300, 0.0, 1e300]])), expected, rtol=1e-15)
