"""Reliability of ``workbench.lie`` at its boundary: work budgets, integer parameters, clear refusals.

Each test names the reproducer of the reliability issue it pins (numbers 1–6) and its oracle.  No test
is timed: a refusal is checked by its exception and message, and every refused call raises before any
work is done (the estimates are evaluated on counts, never by running the series).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
import sympy as sp

from workbench import lie
from workbench.lie import (
    _budget,
    basis_trees,
    bch,
    bch_even_degree,
    bch_many,
    bracket,
    change_of_basis,
    commutator_log,
    expand_tree,
    format_word,
    hausdorff,
    integrate_noncommutative,
    is_lyndon,
    log_of_exponentials,
    lyndon_coordinates,
    lyndon_factorization,
    lyndon_tree,
    lyndon_words,
    magnus,
    magnus_integrals,
    magnus_omega,
    standard_factorization,
    symmetric_bch,
    tree_degree,
    tree_to_string,
    witt_dimension,
    zassenhaus,
)

NAN, INF = float("nan"), float("inf")

# --- reproducer 1: unbounded work gets a documented, measured ceiling ---------------------------------

# The ceilings the docstrings state (and the issue's tested uses they must keep: bch(20), the benchmark's
# --max-degree 20; catalogue scales: zassenhaus 7, magnus order 6, bch_many(k ≤ 4, 6) in experiments).
DOCUMENTED_CEILINGS = [
    # The BCH family without its compiled kernel (a checkout that was never built): the time budget.
    (_budget.python_increasing_log_seconds, (2,), 20),  # bch, symmetric_bch
    (_budget.python_increasing_log_seconds, (3,), 12),  # bch_many(3, ·)
    (_budget.python_increasing_log_seconds, (4,), 10),  # bch_many(4, ·)
    (_budget.generic_log_seconds, (2, 4), 16),  # commutator_log
    (_budget.zassenhaus_seconds, (), 21),
    (_budget.magnus_seconds, (2,), 24),
    (_budget.magnus_seconds, (3,), 18),
    (_budget.magnus_seconds, (4,), 17),
    (_budget.basis_change_seconds, ("hall", 2), 15),
    (_budget.basis_change_seconds, ("chibrikov", 2), 16),
    (_budget.basis_change_seconds, ("right-normed", 2), 16),  # another name for chibrikov
    (_budget.basis_change_seconds, ("hall", 3), 10),
    (_budget.basis_change_seconds, ("chibrikov", 3), 11),
    (_budget.basis_change_seconds, ("hall", 4), 8),
    (_budget.basis_change_seconds, ("chibrikov", 4), 9),
    (_budget.lyndon_words_seconds, (2,), 26),
    (_budget.lyndon_words_seconds, (3,), 16),
    (_budget.lyndon_words_seconds, (26,), 5),
    (_budget.hausdorff_seconds, (), 64),
]


@pytest.mark.parametrize(("model", "params", "documented"), DOCUMENTED_CEILINGS)
def test_repro1_documented_ceilings_equal_the_ones_the_estimates_give(model, params, documented):
    # Oracle: the docstrings' numbers; exact (both are integers from the same estimate).
    assert _budget.ceiling(model, *params) == documented


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: commutator_log(17), r"degree must be at most 16 for commutator"),
        (lambda: zassenhaus(1000), r"degree must be at most 21 for zassenhaus .*got 1000"),
        (lambda: zassenhaus(22), r"degree must be at most 21 for zassenhaus"),
        (lambda: hausdorff(10**9), r"degree must be at most 64 for hausdorff \(the package's largest degree\)"),
        (lambda: magnus(25), r"order must be at most 24 for magnus with n_terms=2 .*got 25"),
        (lambda: magnus(10**9, 1), r"order must be at most 64 for magnus with n_terms=1"),
        (lambda: magnus_omega([np.eye(2), np.eye(2)], 0.1, order=10**9), r"order must be at most 24 for magnus"),
        (lambda: basis_trees("hall", 2, 40), r"degree must be at most 15 for the hall basis on n_letters=2 letters"),
        (lambda: basis_trees("chibrikov", 2, 17), r"degree must be at most 16 for the chibrikov basis"),
        (lambda: basis_trees("right-normed", 2, 17), r"degree must be at most 16 for the right-normed basis"),
        (lambda: hausdorff(30).terms("hall"), r"degree must be at most 15 for the hall basis"),
        (lambda: hausdorff(30).to_text("right-normed"), r"degree must be at most 16 for the right-normed basis"),
        (lambda: lyndon_words(2, 100), r"degree must be at most 26 for lyndon_words on n_letters=2 letters"),
        (lambda: lyndon_words(10**6, 2), r"degree must be at most 1 for lyndon_words on n_letters=1000000 letters"),
        (lambda: log_of_exponentials([(0, 1), (1, -1)], 40), r"degree must be at most \d+ for log"),
    ],
)
def test_repro1_series_past_their_ceiling_are_refused_before_any_work(call, pattern):
    # Oracle: the message names the parameter, the ceiling and the estimate (exact text).
    with pytest.raises(ValueError, match=pattern):
        call()


def test_repro1_the_estimates_rest_on_witt_counts():
    # Oracle: lyndon_count (Witt's formula) against Duval's generation (an independent algorithm), and the
    # squared-multinomial sum against a brute-force sum over letter contents; exact integers.
    for r, k in [(2, 1), (2, 12), (3, 7), (4, 5)]:
        assert _budget.lyndon_count(r, k) == len(lyndon_words(r, k))
    for r, k in [(2, 9), (3, 6), (4, 4)]:
        brute = sum(
            (math.factorial(k) // math.prod(math.factorial(c) for c in content)) ** 2
            for content in product(range(k + 1), repeat=r)
            if sum(content) == k
        )
        assert _budget._squared_multinomials(r, k) == brute


def test_repro1_no_degree_past_a_ceiling_fits_the_budget():
    # The ceiling search counts up and stops at the first degree past the budget: valid only if no
    # larger degree fits again.  Oracle: every estimate from the ceiling + 1 to 40 exceeds the budget.
    for model, params, top in DOCUMENTED_CEILINGS:
        if top < _budget.EXACT_UP_TO:
            assert all(model(*params, d) > _budget.BUDGET_SECONDS for d in range(top + 1, 41))


def test_repro1_uses_at_the_ceiling_still_work():
    # Oracle: Witt counts (the Lyndon basis has witt_dimension(2, d) elements); exact.
    assert len(hausdorff(64).coordinates) == 64
    assert len(basis_trees("hall", 2, 8)) == witt_dimension(2, 8) == 30
    assert zassenhaus(6).degree == 6 and magnus(6, 3).degree == 6 and bch_many(4, 6).degree == 6


# --- reproducer 2: lyndon_words on floats / NaN -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        ((2.5, 3), r"n_letters must be an integer >= 1, got 2.5"),
        ((NAN, 3), r"n_letters must be an integer >= 1, got nan"),
        ((INF, 3), r"n_letters must be an integer >= 1, got inf"),
        ((0, 3), r"n_letters must be an integer >= 1, got 0"),
        ((True, 3), r"n_letters must be an integer >= 1, got True"),
        ((2, 3.5), r"degree must be an integer >= 1, got 3.5"),
        ((2, -1), r"degree must be an integer >= 1, got -1"),
        ((2, "3"), r"degree must be an integer >= 1, got '3'"),
    ],
)
def test_repro2_lyndon_words_refuses_non_integers(args, pattern):
    with pytest.raises(ValueError, match=pattern):
        lyndon_words(*args)


# --- reproducer 3: witt_dimension -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        ((NAN, 3), r"n_letters must be an integer >= 1, got nan"),
        ((2, 0), r"degree must be an integer >= 1, got 0"),
        ((-2, 3), r"n_letters must be an integer >= 1, got -2"),
        ((2, 2.0), r"degree must be an integer >= 1, got 2.0"),
        ((2, 10**9), r"degree must keep n_letters\*\*degree within 4194304 bits .*got 1000000000"),
    ],
)
def test_repro3_witt_dimension_refuses_bad_input(args, pattern):
    with pytest.raises(ValueError, match=pattern):
        witt_dimension(*args)


def test_repro3_witt_dimension_against_sympy_mobius():
    # Oracle: Witt's formula written with sympy's divisors and Möbius function (independent code); exact.
    from sympy import divisors
    from sympy.functions.combinatorial.numbers import mobius

    for r, n in [(1, 1), (1, 7), (2, 60), (3, 97), (5, 144), (26, 210), (2, 4096)]:
        expected = sum(int(mobius(d)) * r ** (n // d) for d in divisors(n)) // n
        assert witt_dimension(r, n) == expected


# --- reproducer 4: bracket trees ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["AB", (0,), (0, 1, 1), (0, "B"), 2.5, NAN, None, [0, 1], ((0, 1), None)])
@pytest.mark.parametrize("function", [tree_to_string, tree_degree, expand_tree])
def test_repro4_malformed_trees_get_a_type_error(function, bad):
    with pytest.raises(TypeError, match=r"tree must be a letter index \(int >= 0\) or a pair \(left, right\)"):
        function(bad)


def test_repro4_tree_letters_and_depth_are_checked():
    with pytest.raises(ValueError, match=r"tree letters must be integers >= 0, got -1"):
        tree_degree((0, -1))
    with pytest.raises(ValueError, match=r"tree letters must be integers >= 0 and < 2, got 2"):
        tree_to_string((0, 2), "AB")
    deep = 0
    for _ in range(2000):
        deep = (0, deep)
    with pytest.raises(ValueError, match=r"tree must have bracket depth at most 500"):
        tree_to_string(deep)
    with pytest.raises(ValueError, match=r"tree must have degree at most 19 to be expanded"):
        expand_tree(lyndon_tree((0,) * 20 + (1,)))
    # numpy letters are letters: oracle, the int tree's rendering and expansion (exact).
    assert tree_to_string((np.int64(0), np.int64(1))) == "[A,B]"
    assert expand_tree((np.int64(0), 1)) == expand_tree((0, 1))


# --- reproducer 5: numpy integers accepted, bools refused ----------------------------------------------


@pytest.mark.parametrize("four", [np.int64(4), np.int32(4), np.uint8(4), np.array(4)])
def test_repro5_numpy_integers_are_integers(four):
    # Oracle: the same call with a Python int; exact equality of coordinates and values.
    assert bch(four).coordinates == bch(4).coordinates
    assert bch(four).degree == 4 and type(bch(four).degree) is int
    assert symmetric_bch(four).coordinates == symmetric_bch(4).coordinates
    assert commutator_log(four).coordinates == commutator_log(4).coordinates
    assert zassenhaus(four).coordinates == zassenhaus(4).coordinates
    assert hausdorff(four).coordinates == hausdorff(4).coordinates
    assert magnus(four).coordinates == magnus(4).coordinates
    assert magnus(four, np.int64(3)).coordinates == magnus(4, 3).coordinates
    assert bch_many(np.int64(3), four).coordinates == bch_many(3, 4).coordinates
    assert lyndon_words(np.int64(2), four) == lyndon_words(2, 4)
    assert witt_dimension(np.int64(2), four) == witt_dimension(2, 4) == 3
    assert basis_trees("hall", np.int64(2), four) == basis_trees("hall", 2, 4)
    assert bch(6).component(four).coordinates == bch(6).component(4).coordinates
    assert bch_even_degree(bch(3).coordinates, four) == bch(4).component(4).coordinates
    assert magnus_integrals(np.int64(1))[0] == magnus_integrals(1)[0]
    np.testing.assert_array_equal(magnus_omega([np.eye(2)], 0.5, four), magnus_omega([np.eye(2)], 0.5, 4))
    assert lie.SERIES["magnus"](four).coordinates == lie.SERIES["magnus"](4).coordinates
    assert format_word([np.int64(0), np.int64(1)]) == "AB" and is_lyndon(np.array([0, 1]))


@pytest.mark.parametrize("flag", [True, np.True_, np.array(True)])
def test_repro5_bools_are_not_integers(flag):
    with pytest.raises(ValueError, match=r"degree must be a positive integer, got "):
        bch(flag)
    with pytest.raises(ValueError, match=r"n_letters must be an integer >= 1, got "):
        lyndon_words(flag, 3)


def test_repro5_the_issue_message_is_gone():
    # The issue: bch(np.int64(4)) raised "degree must be a positive integer, got np.int64(4)".
    assert bch(np.int64(4)).to_text() == bch(4).to_text()
    # A float is refused, named by its repr (np.float64(4.0) on numpy 2, 4.0 on numpy 1.26).
    with pytest.raises(ValueError, match=re.escape(f"degree must be a positive integer, got {np.float64(4.0)!r}")):
        bch(np.float64(4.0))


# --- reproducer 6: magnus_omega step length -------------------------------------------------------------


@pytest.mark.parametrize(
    ("h", "pattern"),
    [
        (1e308, r"h must keep the order-4 Magnus terms within float64 range .*got 1e\+308; shorten h"),
        (1e80, r"h must keep the order-4 Magnus terms within float64 range .*got 1e\+80"),
        (INF, r"h must be in \[0, inf\), got inf"),
        (NAN, r"h must be in \[0, inf\), got nan"),
        (-1e-3, r"h must be in \[0, inf\), got -0.001"),
        ("0.1", r"h must be a real number, got str"),
    ],
)
def test_repro6_magnus_omega_refuses_a_step_it_cannot_evaluate(h, pattern, capfd):
    with pytest.raises((ValueError, TypeError), match=pattern):
        magnus_omega([np.eye(2), np.ones((2, 2))], h)
    assert "DLASCL" not in capfd.readouterr().err  # the LAPACK noise of the issue


def test_repro6_a_large_but_representable_step_still_evaluates():
    # Oracle: closed form.  For A(t) = X (one constant matrix) Ω(h) = hX exactly at every order; the
    # step is far outside the convergence domain, so the warning fires, but the value is exact.
    x = np.array([[0.0, 1.0], [0.0, 0.0]])
    with pytest.warns(RuntimeWarning, match=r"outside the guaranteed convergence domain"):
        omega = magnus_omega([x], 1e6, order=4)
    np.testing.assert_allclose(omega, 1e6 * x, rtol=1e-15, atol=0)  # one product by h: exact in float64


# --- every public function, one bad argument at a time ---------------------------------------------------

BAD_INTEGERS = [NAN, INF, -1, 2.5, True, "3", None, np.float64(2.0), np.array([3])]
INTEGER_PARAMETERS = [
    ("degree", lambda v: bch(v)),
    ("degree", lambda v: symmetric_bch(v)),
    ("degree", lambda v: commutator_log(v)),
    ("degree", lambda v: zassenhaus(v)),
    ("degree", lambda v: hausdorff(v)),
    ("degree", lambda v: bch_many(3, v)),
    ("n_factors", lambda v: bch_many(v, 3)),
    ("degree", lambda v: log_of_exponentials([(0, 1), (1, 1)], v)),
    ("n_letters", lambda v: log_of_exponentials([(0, 1)], 3, v)),
    ("factors\\[0\\] letter", lambda v: log_of_exponentials([(v, 1)], 3)),
    ("order", lambda v: magnus(v)),
    ("n_terms", lambda v: magnus(4, v)),
    ("order", lambda v: magnus_omega([np.eye(2)], 0.1, v)),
    ("n", lambda v: magnus_integrals(v)),
    ("n_letters", lambda v: lyndon_words(v, 3)),
    ("degree", lambda v: lyndon_words(2, v)),
    ("n_letters", lambda v: witt_dimension(v, 3)),
    ("degree", lambda v: witt_dimension(2, v)),
    ("n_letters", lambda v: basis_trees("hall", v, 3)),
    ("degree", lambda v: basis_trees("right-normed", 2, v)),
    ("n_letters", lambda v: change_of_basis({(0, 1): 1}, "hall", v)),
    ("degree", lambda v: bch_even_degree(bch(3).coordinates, v)),
    ("degree", lambda v: bch(4).component(v)),
    ("degree", lambda v: lie.SERIES["magnus"](v)),
]


@pytest.mark.parametrize(
    ("name", "call", "bad"),
    [
        (name, call, bad)
        for k, (name, call) in enumerate(INTEGER_PARAMETERS)
        for bad in BAD_INTEGERS
        if not (k == 8 and bad is None)  # n_letters=None is log_of_exponentials' documented default
    ],
)
def test_every_integer_parameter_refuses_non_integers_by_name(name, call, bad):
    with pytest.raises(ValueError, match=rf"^{name} must be "):
        call(bad)


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda: format_word("AB"), TypeError, r"word must be a sequence of letter indices"),
        (lambda: format_word((0, 1.5)), ValueError, r"word\[1\] must be a letter index, an integer >= 0 < 26, got 1.5"),
        (lambda: format_word((0, 30)), ValueError, r"word\[1\] must be a letter index"),
        (lambda: format_word((0, 1), ""), TypeError, r"names must be a nonempty string"),
        (lambda: is_lyndon(5), TypeError, r"word must be a sequence of letter indices"),
        (lambda: is_lyndon((0, NAN)), ValueError, r"word\[1\] must be a letter index"),
        (
            lambda: lyndon_factorization((0, -1)),
            ValueError,
            r"word\[1\] must be a letter index, an integer >= 0, got -1",
        ),
        (lambda: standard_factorization([1, 0]), ValueError, r"word must be a Lyndon word of length ≥ 2, got 'BA'"),
        (lambda: standard_factorization("AB"), TypeError, r"word must be a sequence of letter indices"),
        (lambda: lyndon_tree((1, 0)), ValueError, r"word must be a Lyndon word of length 1 to 64"),
        (lambda: lyndon_tree(()), ValueError, r"word must be a Lyndon word of length 1 to 64"),
        (lambda: bracket({(0,): 0.5}, {(1,): 1}), TypeError, r"x\[\(0,\)\] must be an exact rational"),
        (lambda: bracket({(0,): 1}, [(1,)]), TypeError, r"y must be a dict \{word: coefficient\}"),
        (lambda: bracket({"AB": 1}, {(1,): 1}), TypeError, r"x key must be a sequence of letter indices"),
        (lambda: lyndon_coordinates({(0, 1): NAN}), TypeError, r"element\[\(0, 1\)\] must be an exact rational"),
        (
            lambda: lyndon_coordinates({(0,) * 20 + (1,): 1}),
            ValueError,
            r"element must have words of length at most 19",
        ),
        (lambda: change_of_basis({(1, 0): 1}, "hall", 2), ValueError, r"coordinates keys must be Lyndon words"),
        (lambda: change_of_basis({(0, 2): 1}, "hall", 2), ValueError, r"coordinates key\[1\] must be a letter index"),
        (lambda: change_of_basis({(0, 1): 1}, "halls", 2), ValueError, r"basis must be one of 'lyndon', 'hall'"),
        (
            lambda: basis_trees(None, 2, 3),
            ValueError,
            r"basis must be one of 'lyndon', 'hall', 'chibrikov', 'right-normed', got None",
        ),
        (lambda: log_of_exponentials([(0, 0.5)], 3), TypeError, r"factors\[0\] scale must be an exact rational"),
        (lambda: log_of_exponentials(5, 3), TypeError, r"factors must be a sequence of \(letter, scale\) pairs"),
        (lambda: log_of_exponentials([0, 1], 3), TypeError, r"factors\[0\] must be a \(letter, scale\) pair"),
        (
            lambda: log_of_exponentials([(10**9, 1)], 3),
            ValueError,
            r"factors\[0\] letter must be an integer in \[0, 25\]",
        ),
        (lambda: log_of_exponentials([], 3), ValueError, r"factors must name at least one exponential"),
        (lambda: bch_even_degree(bch(4).coordinates, 5), ValueError, r"degree must be an even integer in \[2, 64\]"),
        (lambda: bch_even_degree({(0, 2): 1}, 4), ValueError, r"lower key\[1\] must be a letter index"),
        (lambda: hausdorff(3, "A"), ValueError, r"form must be '-A'"),
        (lambda: bch(3).terms("foo"), ValueError, r"basis must be one of"),
        (lambda: magnus_omega(np.float64(1.0), 0.1), TypeError, r"coefficients must be a sequence of matrices"),
        (lambda: magnus_omega([], 0.1), ValueError, r"coefficients must hold at least one matrix"),
        (lambda: magnus_omega([np.full((2, 2), NAN)], 0.1), ValueError, r"coefficients\[0\] must be finite"),
        (lambda: integrate_noncommutative("x"), TypeError, r"expr must be a sympy expression, got str"),
    ],
)
def test_every_other_argument_is_checked_by_name(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_exact_rationals_and_numpy_integers_are_accepted_as_coefficients():
    # Oracle: the same element with Python ints and Fractions; exact equality.
    assert bracket({(0,): np.int64(2)}, {(1,): Fraction(1, 2)}) == {(0, 1): Fraction(1), (1, 0): Fraction(-1)}
    assert lyndon_coordinates({(0, 1): sp.Integer(1), (1, 0): -1}) == {(0, 1): Fraction(1)}
