"""Tests of exercise 14.2: the real lower-triangular orthogonal 3×3 matrices, solved with sympy."""

import itertools

import numpy as np
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "14.2"
points = 3

NAMES = ("a", "b", "c", "d", "e", "f")


def _matrix(solution):
    """The 3×3 matrix L of one solution dict (keys: sympy symbols named a..f), as floats."""
    by_name = {str(k): v for k, v in solution.items()}
    missing = [x for x in NAMES if x not in by_name]
    assert not missing, f"a solution leaves {missing} free: solve all the equations of LᵀL = I for all six symbols"
    values = []
    for x in NAMES:
        value = sp.sympify(by_name[x])
        assert not value.free_symbols, f"a solution gives {x} = {value}, not a number: use every equation of LᵀL = I"
        values.append(complex(value))
    assert all(abs(v.imag) < 1e-12 for v in values), "the symbols should be real"
    a, b, c, d, e, f = (v.real for v in values)
    return np.array([[a, 0, 0], [b, c, 0], [d, e, f]])


@test_case(points=1)
def test_keys(answer_14_2):
    assert isinstance(answer_14_2, dict), "answer_14_2 should be a dict"
    missing = {"solutions", "count"} - set(answer_14_2)
    assert not missing, f"answer_14_2 lacks the key(s) {sorted(missing)}"
    assert int(answer_14_2["count"]) == len(answer_14_2["solutions"]), "count should be the number of solutions"


@test_case(points=1)
def test_each_solution_is_orthogonal_and_diagonal(answer_14_2):
    for solution in answer_14_2["solutions"]:
        L = _matrix(solution)
        assert np.allclose(L.T @ L, np.eye(3), atol=1e-12), f"{L.tolist()} does not satisfy LᵀL = I"
        assert np.allclose(L, np.diag(np.diag(L)), atol=1e-12), f"{L.tolist()} is not diagonal"


@test_case(points=1)
def test_all_sign_patterns(answer_14_2):
    found = {tuple(np.sign(np.diag(_matrix(s))).astype(int)) for s in answer_14_2["solutions"]}
    expected = set(itertools.product((-1, 1), repeat=3))
    assert found == expected and len(answer_14_2["solutions"]) == 8, (
        f"sympy should find the 8 matrices diag(±1, ±1, ±1); got the sign patterns {sorted(found)}: do not "
        "restrict the symbols to positive values"
    )
