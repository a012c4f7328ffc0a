"""Tests of exercise 01.2: the degree-3 words of X, X², X³ for X = e^A e^B − 1, and the degree-3 BCH term."""

import itertools
import math

import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "01.2"
points = 5

A, B = sp.symbols("A B", commutative=False)


def _canonical(expression):
    """The expression in this file's noncommutative A and B (the student's symbols are matched by name)."""
    expression = sp.sympify(expression)
    names = {"A": A, "B": B}
    return sp.expand(expression.subs({x: names[str(x)] for x in expression.free_symbols if str(x) in names}))


def _degree3_of_power(k):
    """Degree-3 part of X^k, X = Σ_{(i,j) ≠ (0,0)} A^i B^j/(i! j!), by enumerating the k factors' degrees."""
    pieces = [(i, j) for i in range(4) for j in range(4) if 1 <= i + j <= 3]
    total = sp.Integer(0)
    for factors in itertools.product(pieces, repeat=k):
        if sum(i + j for i, j in factors) == 3:
            term = sp.Integer(1)
            for i, j in factors:
                term = term * A**i * B**j / (math.factorial(i) * math.factorial(j))
            total += term
    return sp.expand(total)


@test_case(points=1)
def test_keys(answer_01_2):
    keys = {"X1", "X2", "X3", "log_degree3"}
    assert isinstance(answer_01_2, dict), "answer_01_2 should be a dict"
    missing = keys - set(answer_01_2)
    assert not missing, f"answer_01_2 lacks the keys {sorted(missing)}"


def _check_power(answer, k):
    expected = _degree3_of_power(k)  # oracle: direct enumeration of the products of the factors' homogeneous parts
    difference = sp.expand(_canonical(answer[f"X{k}"]) - expected)
    assert difference == 0, f"the degree-3 words of X^{k} are {expected}; yours differ by {difference}"


@test_case(points=1)
def test_X1(answer_01_2):
    _check_power(answer_01_2, 1)


@test_case(points=1)
def test_X2(answer_01_2):
    _check_power(answer_01_2, 2)


@test_case(points=1)
def test_X3(answer_01_2):
    _check_power(answer_01_2, 3)


@test_case(points=1)
def test_log_degree3(answer_01_2):
    def bracket(x, y):
        return x * y - y * x

    # oracle: the Lie polynomial (1/12)[A,[A,B]] + (1/12)[[A,B],B], expanded into words
    expected = sp.expand(sp.Rational(1, 12) * (bracket(A, bracket(A, B)) + bracket(bracket(A, B), B)))
    difference = sp.expand(_canonical(answer_01_2["log_degree3"]) - expected)
    assert difference == 0, (
        "the degree-3 part of log(e^A e^B) = X − X²/2 + X³/3 should be (1/12)[A,[A,B]] + (1/12)[[A,B],B]; "
        f"yours differs by {difference}"
    )
