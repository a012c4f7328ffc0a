"""Fuzz suite, ``workbench.lie``: every public callable, one bad argument at a time (harness: ``fuzz.py``)."""

import io
from fractions import Fraction

import numpy as np
import pytest
from fuzz import Case, public_callables, run

from workbench import lie


def _element():
    return lie.LieSeries("x", 2, 2, {(0,): Fraction(1), (0, 1): Fraction(1, 2)})


CASES = [
    Case("workbench.lie.bch", lambda: ((4,), {})),
    Case("workbench.lie.bch_many", lambda: ((3, 3), {})),
    Case("workbench.lie.bch_cost", lambda: ((12,), {"n_factors": 2})),
    Case("workbench.lie.write_series_json", lambda: ((io.StringIO(), lie.bch(3)), {"basis": "lyndon"})),
    Case("workbench.lie.write_bch_json", lambda: ((io.StringIO(), 4), {"n_factors": 2})),
    Case("workbench.lie.symmetric_bch", lambda: ((4,), {})),
    Case("workbench.lie.zassenhaus", lambda: ((4,), {})),
    Case("workbench.lie.commutator_log", lambda: ((4,), {})),
    Case("workbench.lie.hausdorff", lambda: ((4,), {}), aliases={"form": ("form",)}),
    Case("workbench.lie.magnus", lambda: ((4,), {"n_terms": 2})),
    Case("workbench.lie.magnus_integrals", lambda: ((3,), {})),
    Case(
        "workbench.lie.magnus_omega",
        lambda: ((np.array([[[0.0, 1.0], [-1.0, 0.0]], [[0.1, 0.0], [0.0, -0.1]]]), 0.5), {"order": 4}),
    ),
    Case("workbench.lie.bch_even_degree", lambda: ((dict(lie.bch(3).coordinates), 4), {})),
    Case("workbench.lie.basis_trees", lambda: (("lyndon", 2, 4), {})),
    Case("workbench.lie.change_of_basis", lambda: ((dict(lie.bch(3).coordinates), "hall", 2), {})),
    Case("workbench.lie.lyndon_words", lambda: ((2, 4), {})),
    Case("workbench.lie.witt_dimension", lambda: ((2, 4), {})),
    Case("workbench.lie.is_lyndon", lambda: (((0, 0, 1),), {})),
    Case("workbench.lie.lyndon_factorization", lambda: (((0, 1, 0, 0, 1),), {})),
    Case("workbench.lie.lyndon_tree", lambda: (((0, 0, 1),), {})),
    Case("workbench.lie.standard_factorization", lambda: (((0, 0, 1),), {})),
    Case("workbench.lie.tree_degree", lambda: (((0, (0, 1)),), {})),
    Case("workbench.lie.tree_to_string", lambda: (((0, (0, 1)),), {})),
    Case("workbench.lie.expand_tree", lambda: (((0, (0, 1)),), {})),
    Case("workbench.lie.format_word", lambda: (((0, 1, 1),), {})),
    Case(
        "workbench.lie.log_of_exponentials",
        lambda: (([(1, 0), (0, 1)], 4), {}),
    ),
    Case(
        "workbench.lie.LieSeries",
        lambda: (("x", 2, 2, {(0,): Fraction(1), (0, 1): Fraction(1, 2)}), {}),
    ),
]

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.lie.bracket": "takes the library's own FreeElement objects (built only by the library)",
    "workbench.lie.lyndon_coordinates": "takes the library's own FreeElement objects (built only by the library)",
    "workbench.lie.integrate_noncommutative": "takes a sympy expression; sympy validates its own input",
    "workbench.lie.Cost": "a record (NamedTuple) that bch_cost returns; it holds what it is given by design",
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.lie") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- methods of the public classes --------------------------------------------------------------------

METHOD_CASES = [
    Case("workbench.lie.LieSeries.terms", lambda: ((lie.bch(4),), {"basis": "hall"})),
    Case("workbench.lie.LieSeries.component", lambda: ((lie.bch(4), 3), {})),
    Case("workbench.lie.LieSeries.to_json", lambda: ((lie.bch(4),), {"basis": "right-normed"})),
    Case("workbench.lie.LieSeries.to_text", lambda: ((lie.bch(4),), {"basis": "right-normed"})),
    Case("workbench.lie.LieSeries.to_latex", lambda: ((lie.bch(4),), {"basis": "right-normed"})),
    Case(
        "workbench.lie.LieSeries.evaluate",
        lambda: ((lie.bch(4), np.array([[0.0, 0.1], [0.0, 0.0]]), np.array([[0.0, 0.0], [0.2, 0.0]])), {}),
    ),
]


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    assert public_methods("workbench.lie") - {case.function for case in METHOD_CASES} == set()


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    run(case)


# ---- huge entries: finite inputs whose results leave the double range (issue 17) --------------------------


def test_lie_series_refuses_brackets_that_overflow_naming_the_matrix():
    # Degree-4 brackets of an entry 1e300 are of size 1e1200: the refusal names the matrix that is too large.
    with pytest.raises(
        ValueError,
        match=r"^the Lie series evaluated at the matrices \(degree 4\) overflows float64 .* for "
        r"matrices\[0\] \(max \|entry\| 1e\+300\), matrices\[1\] \(max \|entry\| 0\.2\)",
    ):
        lie.bch(4).evaluate(np.array([[0.0, 1e300], [0.0, 0.0]]), np.array([[0.0, 0.0], [0.2, 0.0]]))


def test_magnus_omega_names_the_coefficients_that_overflow_the_terms():
    X = np.array([[[0.0, 1.0], [-1.0, 0.0]], [[0.1, 0.0], [0.0, -0.1]]])
    # ‖X_0‖_F = √2, so the refusal reports √2·1e300 (the norm is s·‖X/s‖, never an overflowing sum of squares).
    with pytest.raises(ValueError, match=r"from coefficients of \|\|X_j\|\|_F up to 1\.41e\+300\), got 0\.5"):
        lie.magnus_omega(X * 1e300, 0.5, order=4)
