"""Tests of exercise 08.2: the entropy of a softmax row, its β-derivative and its small-β expansion."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

from workbench.attention import beta_sweep, random_head
from workbench.catalogue import fit_rate

OK_FORMAT = False
name = "08.2"
points = 5

NAMES = ["beta", "s0", "s1", "s2"]


def _function(expression):
    """A numpy function of (beta, s0, s1, s2) from a sympy expression in symbols with those names."""
    assert isinstance(expression, sp.Basic), "give a sympy expression in the symbols beta, s0, s1, s2"
    expression = expression.removeO()
    free = {s.name: s for s in expression.free_symbols}
    assert set(free) <= set(NAMES), f"the expression should use only the symbols {NAMES}, it has {sorted(free)}"
    return sp.lambdify([free.get(name, sp.Symbol(name)) for name in NAMES], expression, "numpy")


def _entropy(beta, s):
    p = np.exp(beta * s - np.max(beta * s))
    p /= p.sum()
    return -np.sum(p * np.log(p))


def _points():
    rng = np.random.default_rng(82)
    return [(rng.uniform(0.2, 2.0), rng.standard_normal(3)) for _ in range(6)]


def _score():
    """The score W of notebook 08, rebuilt with its generator (seed 8) and its draws."""
    rng = np.random.default_rng(8)
    head = random_head(rng, 16, 4, bias=True, scale=1.5 / np.sqrt(16))
    return head.scores(rng.standard_normal((12, 16)))


@test_case(points=1)
def test_keys(answer_08_2):
    keys = {"dH_dbeta", "series", "betas", "residual", "slope"}
    assert isinstance(answer_08_2, dict) and keys <= set(answer_08_2), (
        f"answer_08_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=1)
def test_derivative(answer_08_2):
    derivative = _function(answer_08_2["dH_dbeta"])
    for beta, s in _points():
        # Oracle: a central finite difference of the entropy of the row (step 1e-4: error ~1e-8, rounding ~1e-12).
        oracle = (_entropy(beta + 1e-4, s) - _entropy(beta - 1e-4, s)) / 2e-4
        value = float(derivative(beta, *s))
        assert abs(value - oracle) < 1e-6, (
            f"'dH_dbeta' at β = {beta:.3f}, s = {np.round(s, 3)} is {value:.6f}, but the entropy changes at the rate "
            f"{oracle:.6f}; check the sign and the factor β"
        )


@test_case(points=1)
def test_series(answer_08_2):
    series = _function(answer_08_2["series"])
    for beta, s in _points():
        # Oracle: log 3 − (β²/2) Var_u(s), with Var_u the variance under the uniform law (divide by 3, not 2).
        oracle = np.log(3) - beta**2 / 2 * np.var(s)
        value = float(series(beta, *s))
        assert abs(value - oracle) < 1e-10, (
            f"'series' at β = {beta:.3f} is {value:.6f}, but log 3 − (β²/2)Var_u(s) is {oracle:.6f}; the second-order "
            "term is −β²κ₂/2 with κ₂ the variance of s under the uniform law"
        )


@test_case(points=2)
def test_numeric_residual(answer_08_2):
    betas = np.asarray(answer_08_2["betas"], dtype=float).ravel()
    assert betas.shape == (5,) and np.allclose(np.sort(betas), np.geomspace(2e-4, 2e-3, 5), rtol=1e-12, atol=0), (
        f"'betas' should be five geometric values from 2e-3 down to 2e-4, got {betas}"
    )
    W = _score()
    H_bar = beta_sweep(W, betas).mean_entropy
    oracle = np.abs(H_bar - (np.log(12) - betas**2 / 2 * W.var(axis=1).mean()))
    residual = np.asarray(answer_08_2["residual"], dtype=float).ravel()
    # Oracle: the residual recomputed from beta_sweep on the notebook's W, with the population variance of each row.
    # It is ~1e-7 … 1e-10, a difference of O(1) entropies, so it carries ~1e-15 of rounding: relative 1e-4 is safe.
    assert residual.shape == betas.shape and np.allclose(np.abs(residual), oracle, rtol=1e-4, atol=1e-14), (
        "'residual' is not |H̄(β) − log n + (β²/2)·mean Var_u| for your β (row variances with ddof=0, averaged "
        "over the rows), in the order of 'betas'"
    )
    slope = float(answer_08_2["slope"])
    assert abs(slope - fit_rate(betas, oracle)) < 1e-3 and abs(slope - 3) < 0.1, (
        f"'slope' is {slope:.3f}; fit_rate(betas, residual) on the right residual is {fit_rate(betas, oracle):.3f}"
    )
