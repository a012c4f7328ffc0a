"""Tests of exercise 01.1: the degree-8 BCH series in three bases, against logm and the first neglected term."""

import numpy as np
import scipy.linalg
from otter.test_files import test_case

from workbench.lie import bch

OK_FORMAT = False
name = "01.1"
points = 5

BASES = ("lyndon", "hall", "right-normed")
# Nonzero coefficients of the degree-8 series bch(8) in each basis: exact integers of the exact engine (rational
# arithmetic, no rounding), listed here because the change to the Hall basis costs seconds.
COUNTS = {"lyndon": 52, "hall": 60, "right-normed": 52}


def _inputs(answer):
    A0, B0, eps = np.asarray(answer["A0"], float), np.asarray(answer["B0"], float), float(answer["eps"])
    return eps * A0, eps * B0


def _witt(n):
    """Witt's formula on two letters, (1/n) Σ_{d | n} μ(d) 2^{n/d}, with the Möbius function by trial division."""

    def mobius(d):
        sign, p = 1, 2
        while p * p <= d:
            if d % p == 0:
                d //= p
                if d % p == 0:
                    return 0
                sign = -sign
            p += 1
        return -sign if d > 1 else sign

    return sum(mobius(d) * 2 ** (n // d) for d in range(1, n + 1) if n % d == 0) // n


@test_case(points=1)
def test_keys(answer_01_1):
    keys = {"A0", "B0", "eps", "values", "reference", "counts", "dimension", "first_neglected"}
    assert isinstance(answer_01_1, dict), "answer_01_1 should be a dict"
    missing = keys - set(answer_01_1)
    assert not missing, f"answer_01_1 lacks the keys {sorted(missing)}"
    for key in ("values", "counts"):
        assert set(answer_01_1[key]) == set(BASES), f"answer_01_1[{key!r}] should have the keys {BASES}"
    assert float(answer_01_1["eps"]) == 0.2, f"the exercise scales A0, B0 to ε = 0.2, got {answer_01_1['eps']}"


@test_case(points=1)
def test_reference(answer_01_1):
    eA, eB = _inputs(answer_01_1)
    expected = scipy.linalg.logm(scipy.linalg.expm(eA) @ scipy.linalg.expm(eB)).real
    # oracle: dense logm of the product in this order (e^{εA} first); its rounding is ~1e-15 on entries ~0.5
    gap = np.abs(np.asarray(answer_01_1["reference"]) - expected).max()
    assert gap < 1e-12, (
        f"reference should be logm(expm(ε·A0) @ expm(ε·B0)) (in this order, real part), it differs by {gap:.1e}"
    )


@test_case(points=1)
def test_counts_and_dimension(answer_01_1):
    dimension = sum(_witt(k) for k in range(1, 9))  # oracle: Witt's formula, 2 + 1 + 2 + 3 + 6 + 9 + 18 + 30
    assert answer_01_1["dimension"] == dimension, (
        f"the number of basis elements of degree 1 to 8 is {dimension}, got {answer_01_1['dimension']}"
        " (sum witt_dimension(2, k) over k = 1, ..., 8)"
    )
    for basis, count in COUNTS.items():
        assert answer_01_1["counts"][basis] == count, (
            f"the degree-8 series has {count} nonzero coefficients in the {basis} basis, got "
            f"{answer_01_1['counts'][basis]} (count change_of_basis(bch(8).coordinates, basis, 2))"
        )


@test_case(points=1)
def test_first_neglected(answer_01_1):
    eA, eB = _inputs(answer_01_1)
    expected = bch(9).component(9).evaluate(eA, eB)  # Z_9 evaluated by the engine; ‖Z_9‖ ~ 1e-11
    got = np.asarray(answer_01_1["first_neglected"])
    assert np.linalg.norm(got - expected) <= 1e-6 * np.linalg.norm(expected), (
        "first_neglected should be the degree-9 component bch(9).component(9) evaluated at (ε·A0, ε·B0)"
    )


@test_case(points=1)
def test_values(answer_01_1):
    eA, eB = _inputs(answer_01_1)
    reference = scipy.linalg.logm(scipy.linalg.expm(eA) @ scipy.linalg.expm(eB)).real
    Z9 = bch(9).component(9).evaluate(eA, eB)
    for basis in BASES:
        value = np.asarray(answer_01_1["values"][basis])
        # oracle: logm minus Z_9 leaves Z_10 + ... (relative O(ε) ≈ 4 % of ‖Z_9‖ ≈ 1e-11); 10 % rejects a degree-7
        # or degree-9 truncation, other arguments, and any error above ~1e-12
        gap = np.linalg.norm(reference - Z9 - value)
        assert gap < 0.1 * np.linalg.norm(Z9), (
            f"the {basis} evaluation of bch(8) at (ε·A0, ε·B0) should equal logm(...) minus the degree-9 term to "
            f"~1e-12; it differs by {gap:.1e}"
        )
