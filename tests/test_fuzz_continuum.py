"""Fuzz suite, ``workbench.continuum``: every public callable, one bad argument at a time (harness: ``fuzz.py``).

The numeric cases use small grids (16–64 nodes); the symbolic cases use the line and the plane, whose
sympy work takes milliseconds.
"""

import numpy as np
import pytest
import sympy as sp
from fuzz import Case, public_callables, run

from workbench import continuum

_x, _y = sp.symbols("x y", real=True)


def _line():
    return continuum.RiemannianMetric([[1]], (_x,))


def _plane():
    return continuum.RiemannianMetric(sp.eye(2), (_x, _y))


def _diffusion():
    return continuum.diffusion_generator(_line(), 0, sp.Rational(1, 2))


def _scores():
    return np.random.default_rng(0).standard_normal((3, 4))


_METRIC = "a RiemannianMetric: an object the library builds (its own case fuzzes the metric entries)"
_GENERATOR = "a callable generator that diffusion_generator or witten_generator builds"

CASES = [
    # --- small-β softmax -------------------------------------------------------------------------------
    Case("workbench.continuum.softmax_first_order", lambda: ((_scores(), 0.1), {})),
    Case("workbench.continuum.softmax_second_order", lambda: ((_scores(), 0.1), {})),
    Case("workbench.continuum.softmax_series", lambda: ((1, 2, 2), {"symbol": "s"})),
    # --- kernel moments ----------------------------------------------------------------------------------
    Case(
        "workbench.continuum.kernel_generator_expansion",
        lambda: ((), {"d": 1, "order": 1, "alpha": 1, "diagonal_metric": False}),
    ),
    Case(
        "workbench.continuum.cauchy_green_estimator",
        lambda: (
            (
                np.array([[0.0], [1.0], [-1.0]]),
                np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
                2.0,
            ),
            {},
        ),
    ),
    # --- sampled Bakry–Émery calculus --------------------------------------------------------------------
    Case(
        "workbench.continuum.kernel_calculus_at",
        lambda: (
            (*continuum.torus_lattice(16, dim=2), np.sin(continuum.torus_lattice(16, dim=2)[0][:, 0]), 10.0, [35]),
            {"period": 2 * np.pi, "cutoff": 6.0},
        ),
    ),
    Case("workbench.continuum.sphere_product_quadrature", lambda: ((4, 8), {})),
    Case("workbench.continuum.torus_lattice", lambda: ((4,), {"dim": 2, "period": 1.0})),
    # --- nonlocal limits ---------------------------------------------------------------------------------
    Case("workbench.continuum.circle_log_heat_kernel", lambda: ((1.0, 0.01, 1.0), {"method": "images"})),
    Case("workbench.continuum.circle_log_heat_kernel", lambda: ((1.0, 0.01, 1.0), {"method": "fourier"})),
    Case("workbench.continuum.sphere_log_heat_kernel", lambda: ((1.0, 0.05, 1.0), {})),
    Case("workbench.continuum.varadhan_remainder", lambda: ((-7.5, 0.5, 0.01), {"hbar": 1.0, "dimension": 1})),
    Case("workbench.continuum.diffusive_jump_rate", lambda: ((50.0,), {"hbar": 0.25, "dimension": 1})),
    Case(
        "workbench.continuum.circle_jump_kernel",
        lambda: ((32, 5.0), {"hbar": 0.5, "remote": lambda u: 0.1 * np.exp(-u), "killing": lambda x: 0.1 + 0 * x}),
    ),
    Case(
        "workbench.continuum.circle_courrege_operator",
        lambda: (
            (32, 5.0),
            {
                "hbar": 0.5,
                "potential": lambda x: np.cos(x),
                "remote": lambda u: 0.1 * np.exp(-u),
                "killing": lambda x: 0.1 + 0 * x,
            },
        ),
    ),
    # --- Riemannian geometry in coordinates (sympy) ------------------------------------------------------
    Case("workbench.continuum.RiemannianMetric", lambda: (([[1, 0], [0, 2]], (_x, _y)), {"volume_density": None})),
    Case(
        "workbench.continuum.diffusion_generator",
        lambda: ((_line(), _x**2 / 2, sp.Rational(1, 2)), {}),
        fixed={"metric": _METRIC},
    ),
    Case("workbench.continuum.witten_generator", lambda: ((_line(), [_x], 1), {}), fixed={"metric": _METRIC}),
    Case(
        "workbench.continuum.bakry_emery_gamma",
        lambda: ((_diffusion(), _x**2, sp.sin(_x)), {}),
        fixed={"generator": _GENERATOR},
    ),
    Case(
        "workbench.continuum.bakry_emery_gamma2",
        lambda: ((_diffusion(), _x**3), {}),
        fixed={"generator": _GENERATOR},
    ),
    Case(
        "workbench.continuum.bochner_gamma2",
        lambda: ((_plane(), _x**2 * _y, (_x**2 + _y**2) / 2, 1), {"ricci": True}),
        fixed={"metric": _METRIC},
    ),
    Case(
        "workbench.continuum.witten_potential",
        lambda: ((_line(), _x**2 / 2, 1), {}),
        fixed={"metric": _METRIC},
    ),
    Case(
        "workbench.continuum.formal_adjoint",
        lambda: ((_line(), [_x], 1, sp.exp(-(_x**2))), {}),
        fixed={"metric": _METRIC},
    ),
]

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.continuum.JumpKernel": "a result record that circle_jump_kernel builds; its fields are not inputs",
    "workbench.continuum.KernelCalculus": "a result record that kernel_calculus_at builds; its fields are not inputs",
    "workbench.continuum.KernelExpansion": (
        "a result record that kernel_generator_expansion builds; its fields are not inputs"
    ),
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.continuum") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- methods of the public classes ------------------------------------------------------------------------
# The arguments are sympy expressions (fuzzed with a string), numeric lists (fuzzed with an empty list, a NaN
# entry and a string entry) and sympy matrices.

METHOD_CASES = [
    Case("workbench.continuum.RiemannianMetric.differential", lambda: ((_plane(), _x**2 * _y), {})),
    Case("workbench.continuum.RiemannianMetric.gradient", lambda: ((_plane(), _x**2 * _y), {})),
    Case("workbench.continuum.RiemannianMetric.inner", lambda: ((_plane(), [1.0, 2.0], [_x, _y]), {})),
    Case("workbench.continuum.RiemannianMetric.inner", lambda: ((_plane(), [_x, _y], [0.5, -1.0]), {})),
    Case("workbench.continuum.RiemannianMetric.divergence", lambda: ((_plane(), [_x, _y]), {})),
    Case("workbench.continuum.RiemannianMetric.divergence", lambda: ((_plane(), [1.0, 2.0]), {})),
    Case("workbench.continuum.RiemannianMetric.laplacian", lambda: ((_plane(), _x**2 * _y), {})),
    Case("workbench.continuum.RiemannianMetric.hessian", lambda: ((_plane(), _x**2 * _y), {})),
    Case("workbench.continuum.RiemannianMetric.hessian_norm2", lambda: ((_plane(), _x**2 * _y), {})),
    # A number is a constant function: fuzzed with NaN and ±inf, which sympy would carry as nan/oo silently.
    Case("workbench.continuum.RiemannianMetric.differential", lambda: ((_plane(), 2.0), {})),
    Case("workbench.continuum.RiemannianMetric.gradient", lambda: ((_plane(), 2.0), {})),
    Case("workbench.continuum.RiemannianMetric.laplacian", lambda: ((_plane(), 2.0), {})),
    Case("workbench.continuum.RiemannianMetric.hessian", lambda: ((_plane(), 2.0), {})),
    Case("workbench.continuum.RiemannianMetric.hessian_norm2", lambda: ((_plane(), 2.0), {})),
    Case(
        "workbench.continuum.RiemannianMetric.bilinear",
        lambda: ((_plane(), sp.Matrix([[1, _x], [_x, 2]]), sp.Matrix([1, _y]), sp.Matrix([_x, 0])), {}),
    ),
    Case(
        "workbench.continuum.RiemannianMetric.bilinear",
        lambda: ((_plane(), [[1.0, 0.0], [0.0, 2.0]], [1.0, 3.0], [2.0, -1.0]), {}),
    ),
]


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    assert public_methods("workbench.continuum") - {case.function for case in METHOD_CASES} == set()


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    run(case)


# The harness sees only numpy/torch numbers: a sympy ``nan`` or ``oo`` in a symbolic result would pass it, so the
# refusals of non-finite symbolic input are pinned here (oracle: the message, and the exact sympy answer).


@pytest.mark.parametrize("bad", [sp.nan, sp.oo, -sp.oo, sp.zoo, float("nan"), _x + sp.oo])
def test_metric_methods_refuse_non_finite_functions(bad):
    for method in ("differential", "gradient", "laplacian", "hessian", "hessian_norm2"):
        with pytest.raises(ValueError, match=r"^f must be a finite expression \(no nan, oo or zoo\), got "):
            getattr(_plane(), method)(bad)


def test_metric_methods_refuse_non_finite_components():
    with pytest.raises(ValueError, match=r"^alpha\[0\] must be a finite expression \(no nan, oo or zoo\), got nan"):
        _plane().inner([float("nan"), 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match=r"^vector\[1\] must be a finite expression \(no nan, oo or zoo\), got oo"):
        _plane().divergence(sp.Matrix([_x, sp.oo]))
    with pytest.raises(ValueError, match=r"^tensor\[1\]\[0\] must be a finite expression"):
        _plane().bilinear([[1, 0], [float("inf"), 1]], [1, 0], [0, 1])


def test_bilinear_checks_its_operands():
    with pytest.raises(TypeError, match=r"^u must be a sequence of 2 sympy expressions, got 'x'"):
        _plane().bilinear(sp.eye(2), "x", [1, 0])
    with pytest.raises(ValueError, match=r"^v must have 2 components \(one per coordinate\), got shape \(3, 1\)"):
        _plane().bilinear(sp.eye(2), [1, 0], [1, 0, 0])
    with pytest.raises(ValueError, match=r"^tensor must have shape \(2, 2\) \(a row and a column per coordinate\)"):
        _plane().bilinear(sp.eye(3), [1, 0], [0, 1])
    with pytest.raises(TypeError, match=r"^f must be a sympy expression \(or a number\), got \[1, 2\]"):
        _plane().laplacian([1, 2])


def test_a_string_function_is_read_in_the_coordinates():
    # Oracle: the exact sympy derivative.  A plain sympify("x**2*y") would make non-real symbols x, y that differ
    # from the coordinates, and every derivative would be a silent 0.
    np.testing.assert_equal(list(_plane().differential("x**2*y")), [2 * _x * _y, _x**2])
    assert sp.expand(_plane().laplacian("x**2*y") - 2 * _y) == 0
    assert _plane().bilinear(sp.eye(2), ["x", 1], [1, "y"]) == _x + _y


# ---- huge entries: finite inputs whose results leave the double range (issue 17) --------------------------


def test_softmax_orders_at_huge_scores():
    S = np.array([[1e300, 0.0, -1e300]])
    # First order: closed form 1/N + (β/N)·(S − row mean) = 1/3 + (0.1/3)·S (row mean 0), finite.
    # Tolerance: two roundings of numbers of size 3e298.
    np.testing.assert_allclose(continuum.softmax_first_order(S, 0.1), 1 / 3 + (0.1 / 3) * S, rtol=1e-15)
    # Second order: β²(S̃² − v)/(2N) is about 1e597, beyond the double range; refused, naming scores.
    with pytest.raises(
        ValueError,
        match=r"^softmax_second_order overflows float64 .* for scores \(max \|entry\| 1e\+300\), beta = 0\.1",
    ):
        continuum.softmax_second_order(S, 0.1)


def test_huge_inputs_of_the_moment_estimators_are_refused_by_name():
    x = np.array([[0.0], [1.0], [-1.0]])
    P = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(
        ValueError, match=r"^the second moments .* overflows float64 .* for points \(max \|entry\| 1e\+300\)"
    ):
        continuum.cauchy_green_estimator(1e300 * x, P, 2.0)
    points, weights = continuum.torus_lattice(16, dim=2)
    with pytest.raises(ValueError, match=r"^the carré du champ and Γ₂ of f .* largest \|entry\| 1e\+300; rescale f"):
        continuum.kernel_calculus_at(
            points, weights, 1e300 * np.sin(points[:, 0]), 10.0, [35], period=2 * np.pi, cutoff=6.0
        )


def test_kernel_generator_expansion_refuses_a_non_finite_alpha():
    # Found by the fuzz suite once it read sympy results: alpha = nan gave an expansion full of nan.
    from workbench.continuum import kernel_generator_expansion

    for alpha in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="alpha must be a finite exponent"):
            kernel_generator_expansion(d=1, order=1, alpha=alpha)
