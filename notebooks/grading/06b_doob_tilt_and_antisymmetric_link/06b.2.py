"""Tests of exercise 06b.2: detailed balance of a Doob tilt, and α-normalisation as a Doob transform."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "06b.2"
points = 6

# positive rationals for the symbols k_ij and h_i: exact arithmetic, no tolerance needed
VALUES = {
    "k_00": 3,
    "k_01": 1,
    "k_02": 2,
    "k_11": 5,
    "k_12": sp.Rational(1, 3),
    "k_22": 4,
    "h_0": 2,
    "h_1": sp.Rational(1, 2),
    "h_2": 3,
}


def _numeric(matrix):
    matrix = sp.Matrix(matrix)
    subs = {s: VALUES[s.name] for s in matrix.free_symbols if s.name in VALUES}
    unknown = {s.name for s in matrix.free_symbols} - set(VALUES)
    assert not unknown, (
        f"unexpected symbols {sorted(unknown)}: use k_00, …, k_22 and h_0, h_1, h_2 of the exercise cell"
    )
    return sp.simplify(matrix.subs(subs))


def _oracle():
    k = VALUES
    K = sp.Matrix(
        [[k["k_00"], k["k_01"], k["k_02"]], [k["k_01"], k["k_11"], k["k_12"]], [k["k_02"], k["k_12"], k["k_22"]]]
    )
    h = sp.Matrix([k["h_0"], k["h_1"], k["h_2"]])
    Kh = K * h
    return K, h, Kh, sp.diag(*[1 / v for v in Kh]) * K * sp.diag(*h)


def _gauss_kernel():
    """exp(−β‖x_i − x_j‖²), β = 0.5, on the 50 points of the exercise (recomputed with numpy only)."""
    points = np.random.default_rng(0).standard_normal((50, 3))
    squared = ((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-0.5 * squared)


@test_case(points=1)
def test_keys(answer_06b_2):
    keys = {"P", "pi", "balance", "P_doob", "gaps"}
    assert isinstance(answer_06b_2, dict) and keys <= set(answer_06b_2), (
        f"answer_06b_2 should be a dict with keys {sorted(keys)}"
    )
    for key in ("P_doob", "gaps"):
        assert {0.5, 1.0} <= set(answer_06b_2[key]), f'answer_06b_2["{key}"] should have the keys 0.5 and 1.0 (the α)'


@test_case(points=1)
def test_tilted_operator(answer_06b_2):
    P = _numeric(answer_06b_2["P"])
    *_, oracle = _oracle()
    assert P.shape == (3, 3) and sp.simplify(P - oracle) == sp.zeros(3, 3), (
        "P should be diag(Kh)⁻¹ K diag(h): divide row i by (Kh)_i and multiply column j by h_j"
    )


@test_case(points=2)
def test_stationary_law(answer_06b_2):
    pi = _numeric(answer_06b_2["pi"]).reshape(3, 1)
    _, h, Kh, P = _oracle()
    # oracle: π ∝ h ⊙ Kh; exact rationals, so proportionality is decided exactly
    target = sp.Matrix([h[i] * Kh[i] for i in range(3)])
    ratios = [sp.nsimplify(pi[i] / target[i]) for i in range(3)]
    assert ratios[0] != 0 and all(r == ratios[0] for r in ratios), (
        f"pi should be proportional to h_i (Kh)_i; at the test values it is {list(pi)} instead of a multiple of {list(target)}"
    )
    assert sp.simplify(pi.T * P - pi.T) == sp.zeros(1, 3), "pi should be stationary: πᵀP_h = πᵀ"
    balance = _numeric(answer_06b_2["balance"])
    assert balance == sp.zeros(3, 3), "balance should simplify to the zero matrix"


@test_case(points=2)
def test_alpha_normalisation(answer_06b_2):
    K = _gauss_kernel()
    q = K.sum(axis=1)
    for alpha in (0.5, 1.0):
        P = np.asarray(answer_06b_2["P_doob"][alpha], float)
        assert P.shape == (50, 50), f"P_doob[{alpha}] should be the 50 × 50 transition matrix"
        # oracle: rownorm(diag(q^−α) K diag(q^−α)), computed directly; entries ~1/50, so 1e-13 is a few hundred ulps
        W = q[:, None] ** -alpha * K * q[None, :] ** -alpha
        oracle = W / W.sum(axis=1, keepdims=True)
        assert np.abs(P - oracle).max() < 1e-13, (
            f"P_doob[{alpha}] should be the Doob transform with h = q^(−α) (q = K 1), i.e. the α-normalised operator"
        )
        assert 0 <= float(answer_06b_2["gaps"][alpha]) < 1e-14, f"gaps[{alpha}] should be below 1e-14"
