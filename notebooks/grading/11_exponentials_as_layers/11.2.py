"""Tests of exercise 11.2: the second-order defect of two overlapping rotations."""

import numpy as np
import scipy.linalg
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "11.2"
points = 4


def _E(i, j):
    m = np.zeros((3, 3))
    m[i, j] = 1.0
    return m


B1, B2 = _E(0, 1) - _E(1, 0), _E(1, 2) - _E(2, 1)


def _numeric(matrix, values):
    """A sympy matrix as a float array, its symbols replaced by name (values: name -> number)."""
    matrix = sp.Matrix(matrix)
    subs = {s: values[s.name] for s in matrix.free_symbols if s.name in values}
    left = matrix.subs(subs).free_symbols
    assert not left, f"unexpected symbols {sorted(map(str, left))}: write the coefficient in the symbols a and b"
    return np.array(matrix.subs(subs).evalf(), dtype=float)


@test_case(points=1)
def test_keys(answer_11_2):
    assert isinstance(answer_11_2, dict), "answer_11_2 should be a dict"
    missing = {"commutator", "second_order", "weights", "epsilons", "ratios"} - set(answer_11_2)
    assert not missing, f"answer_11_2 lacks the key(s) {sorted(missing)}"


@test_case(points=1)
def test_commutator(answer_11_2):
    got = _numeric(answer_11_2["commutator"], {})
    assert got.shape == (3, 3), "the commutator should be a 3×3 matrix"
    assert np.array_equal(got, B1 @ B2 - B2 @ B1), f"[B1, B2] = B1B2 − B2B1 = E02 − E20; got {got.tolist()}"


@test_case(points=1)
def test_second_order(answer_11_2):
    rng = np.random.default_rng(0)
    for a, b in rng.normal(size=(3, 2)):
        got = _numeric(answer_11_2["second_order"], {"a": a, "b": b})
        expected = 0.5 * a * b * (B1 @ B2 - B2 @ B1)  # the first BCH term at order ε²
        assert np.allclose(got, expected, rtol=0, atol=1e-12), (
            "the ε² coefficient of W(ε) − e^{ε(aB1 + bB2)} should be (ab/2)[B1, B2]: expand each exponential to "
            "second order (I + M + M²/2)"
        )


@test_case(points=1)
def test_ratios(answer_11_2):
    a, b = (float(w) for w in answer_11_2["weights"])
    epsilons = np.asarray(answer_11_2["epsilons"], float)
    ratios = np.asarray(answer_11_2["ratios"], float)
    assert ratios.shape == epsilons.shape and len(epsilons) >= 3, "one ratio per ε, at least three values of ε"
    for eps, ratio in zip(epsilons, ratios, strict=True):
        W = scipy.linalg.expm(eps * a * B1) @ scipy.linalg.expm(eps * b * B2)
        defect = np.linalg.norm(W - scipy.linalg.expm(eps * (a * B1 + b * B2)))
        expected = defect / (eps**2 * abs(a * b) / np.sqrt(2))
        # a defect of size ε² computed from matrices of size 1: relative rounding ~1e-16/ε², i.e. ~1e-10 at 1e-3
        assert abs(ratio - expected) < 1e-7, (
            f"at ε = {eps:g} the ratio ‖W − e^A‖_F/(ε²|ab|/√2) is {expected:.8f}, got {ratio:.8f}"
        )
        assert abs(ratio - 1) < 0.1 * eps**2 + 1e-7, f"the ratio should tend to 1 like 1 − O(ε²); at ε = {eps:g}"
