"""Tests of exercise 00.2: the first-order expansion of a softmax row, and the numeric check at β = 1e-4."""

import numpy as np
import scipy.special
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "00.2"
points = 4


def _row_softmax(M, beta):
    return scipy.special.softmax(beta * M, axis=1)  # oracle: scipy's softmax, row by row


def _first_order(M, beta):
    N = M.shape[1]
    return 1 / N + beta / N * (M - M.mean(axis=1, keepdims=True))


@test_case(points=1)
def test_keys(answer_00_2):
    keys = {"expansion", "M", "beta", "gap", "relative_to_second"}
    assert isinstance(answer_00_2, dict), "answer_00_2 should be a dict"
    missing = keys - set(answer_00_2)
    assert not missing, f"answer_00_2 lacks the keys {sorted(missing)}"
    assert len(answer_00_2["expansion"]) == 3, "answer_00_2['expansion'] should list p_1, p_2, p_3 (N = 3)"


@test_case(points=1)
def test_expansion(answer_00_2):
    beta = sp.Symbol("beta")
    scores = sp.symbols("S1:4")
    mean = sum(scores) / 3
    canonical = {"beta": beta, **{str(x): x for x in scores}}
    for j, (expression, s) in enumerate(zip(answer_00_2["expansion"], scores, strict=True), 1):
        expression = sp.sympify(expression)
        # compare by name: the student's symbols may carry other assumptions than these
        expression = expression.subs({x: canonical[str(x)] for x in expression.free_symbols if str(x) in canonical})
        expected = sp.Rational(1, 3) + beta / 3 * (s - mean)  # oracle: the hand expansion 1/N + (β/N)(S_j − S̄)
        difference = sp.expand(expression - expected)
        assert difference == 0, f"p_{j} to first order should be 1/3 + (β/3)(S{j} − S̄), yours differs by {difference}"


@test_case(points=1)
def test_gap(answer_00_2):
    M, beta = np.asarray(answer_00_2["M"], float), float(answer_00_2["beta"])
    assert M.shape == (8, 8), f"M should be an 8×8 score matrix, got shape {M.shape}"
    assert beta == 1e-4, f"the exercise uses β = 1e-4, got {beta}"
    expected = np.abs(_row_softmax(M, beta) - _first_order(M, beta)).max()
    # the gap is a difference of entries ~1/8 computed to ~1e-17, and of size ~1e-9: 1e-5 relative is generous
    assert abs(answer_00_2["gap"] - expected) <= 1e-5 * expected, (
        f"max|softmax − first order| for your M should be {expected:.4e}, got {answer_00_2['gap']:.4e} "
        "(row-wise softmax of β·M, maximum over all entries)"
    )
    assert expected < 10 * beta**2, "the gap should be O(β²)"


@test_case(points=1)
def test_second_order(answer_00_2):
    M, beta = np.asarray(answer_00_2["M"], float), float(answer_00_2["beta"])
    N = M.shape[1]
    centred = M - M.mean(axis=1, keepdims=True)
    C2 = (centred**2 - (centred**2).mean(axis=1, keepdims=True)) / (2 * N)  # oracle: the β² Taylor coefficient
    remainder = _row_softmax(M, beta) - _first_order(M, beta)
    expected = np.abs(remainder - beta**2 * C2).max() / np.abs(beta**2 * C2).max()
    got = answer_00_2["relative_to_second"]
    # the ratio is O(β) ≈ 1e-5–1e-4; rounding of the remainder (~1e-17 on ~1e-13) moves it by ~1e-3 relative
    assert got < 1e-3, f"the remainder should match the second-order term to a relative O(β), got {got:.2e}"
    assert abs(got - expected) <= 0.05 * expected + 1e-7, (
        f"max|remainder − β²C₂| / max|β²C₂| should be about {expected:.2e}, got {got:.2e}"
    )
