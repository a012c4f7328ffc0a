import numpy as np
import pytest
import sympy as sp

from workbench.backend import to_backend, to_numpy
from workbench.catalogue import fit_rate
from workbench.continuum import softmax_first_order, softmax_second_order, softmax_series
from workbench.markov import softmax_operator


def test_numeric_first_order_equals_symbolic_coefficients(rng):
    # Oracle: the sympy-derived C₀ + βC₁, evaluated at the same scores (an independent route).
    scores_sym, (c0, c1) = softmax_series(3, 4, 1)
    s = rng.standard_normal((3, 4))
    subs = {scores_sym[i, j]: s[i, j] for i in range(3) for j in range(4)}
    beta = 0.05
    symbolic = np.array((c0 + beta * c1).subs(subs).evalf(), dtype=float)
    np.testing.assert_allclose(softmax_first_order(s, beta), symbolic, rtol=1e-14)


def test_second_order_coefficient_predicts_the_remainder(rng):
    # (softmax − first order)/β² → C₂ as β → 0: the remainder is O(β²) with the derived constant.
    scores_sym, coefficients = softmax_series(2, 3, 2)
    s = rng.standard_normal((2, 3))
    subs = {scores_sym[i, j]: s[i, j] for i in range(2) for j in range(3)}
    c2 = np.array(coefficients[2].subs(subs).evalf(), dtype=float)
    beta = 1e-3
    remainder = (softmax_operator(s, beta) - softmax_first_order(s, beta)) / beta**2
    np.testing.assert_allclose(remainder, c2, rtol=0, atol=5e-3 * np.abs(c2).max())  # O(β) bias


def test_remainder_rate_is_two(rng, backend):
    s = to_backend(rng.standard_normal((20, 20)), backend)
    betas = np.geomspace(1e-3, 1e-1, 6)
    errors = [np.linalg.norm(to_numpy(softmax_operator(s, b) - softmax_first_order(s, b))) for b in betas]
    assert abs(fit_rate(betas, errors) - 2.0) < 0.05


def test_rows_of_first_order_sum_to_one(rng):
    s = rng.standard_normal((4, 7))
    np.testing.assert_allclose(softmax_first_order(s, 0.3).sum(axis=-1), 1.0, rtol=0, atol=1e-15)


def test_series_bad_arguments():
    with pytest.raises(ValueError, match=r"n_queries must be a positive integer, got 0"):
        softmax_series(0, 2, 1)
    with pytest.raises(ValueError, match=r"order must be a nonnegative integer, got -1"):
        softmax_series(2, 2, -1)
    # The symbolic work explodes (1 x 8 at order 3 takes 22 s): refused before any work.
    with pytest.raises(ValueError, match=r"n_keys must be at most 6 \(the symbolic expansion grows fast\), got 8"):
        softmax_series(1, 8, 3)
    with pytest.raises(TypeError, match=r"order must be an integer, got 2.5"):
        softmax_series(2, 2, 2.5)


def test_second_order_refuses_an_overflowing_beta():
    with pytest.raises(ValueError, match=r"beta\*\*2 is not finite in double precision for beta=1e\+308"):
        softmax_second_order(np.zeros((2, 3)), 1e308)


def test_first_order_bad_arguments():
    with pytest.raises(ValueError, match=r"beta must be in \[0, inf\), got -0.1"):
        softmax_first_order(np.ones((2, 2)), -0.1)
    with pytest.raises(ValueError, match=r"scores must have at least 2 dimensions, got shape \(2,\)"):
        softmax_first_order(np.ones(2), 0.1)
    with pytest.raises(ValueError, match=r"scores must be finite"):
        softmax_first_order(np.array([[np.nan, 1.0]]), 0.1)


def test_series_zeroth_coefficient_is_uniform():
    _, (c0,) = softmax_series(2, 5, 0)
    assert c0 == sp.ones(2, 5) / 5


def test_second_order_matches_the_symbolic_series(rng):
    # Oracle: the sympy Taylor coefficients C₀ + βC₁ + β²C₂ of softmax_series, evaluated at random scores.
    symbols, coefficients = softmax_series(2, 3, 2)
    values = rng.standard_normal((2, 3))
    beta = 0.37
    subs = {symbols[i, j]: values[i, j] for i in range(2) for j in range(3)}
    series = sum((c.subs(subs) * beta**k for k, c in enumerate(coefficients)), sp.zeros(2, 3))
    np.testing.assert_allclose(softmax_second_order(values, beta), np.array(series, dtype=float), rtol=1e-13)
    np.testing.assert_allclose(softmax_second_order(values, beta).sum(axis=1), 1.0, rtol=1e-14)
    with pytest.raises(ValueError, match="beta must be"):
        softmax_second_order(values, -1.0)
