"""Tests of exercise 09.2: ε_rev and the cycle affinity of the biased walk on a cycle, in closed form."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

from workbench.attention import reversibility_residual
from workbench.markov import cycle_affinities

OK_FORMAT = False
name = "09.2"
points = 5


def _function(expression, names):
    """A numpy function of the named symbols, from a sympy expression (or a Python function, returned as is)."""
    if not isinstance(expression, sp.Basic):
        return expression
    free = {s.name: s for s in expression.free_symbols}
    assert set(free) <= set(names), f"the expression should use only the symbols {names}, it has {sorted(free)}"
    return sp.lambdify([free.get(name, sp.Symbol(name)) for name in names], expression, "numpy")


def _walk(N, p):
    """Forward with probability p, backward with 1 − p, on the cycle 0 → 1 → … → N−1 → 0."""
    return p * np.roll(np.eye(N), 1, axis=1) + (1 - p) * np.roll(np.eye(N), -1, axis=1)


@test_case(points=1)
def test_keys(answer_09_2):
    keys = {"eps_rev", "affinity", "p_values", "eps_numeric"}
    assert isinstance(answer_09_2, dict) and keys <= set(answer_09_2), (
        f"answer_09_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=2)
def test_eps_rev(answer_09_2):
    eps = _function(answer_09_2["eps_rev"], ["p"])
    for p in (0.05, 0.3, 0.5, 0.7, 0.95):
        # Oracle: reversibility_residual of the walk itself (N = 5); a few roundings of O(1) numbers, hence 1e-12.
        oracle = reversibility_residual(_walk(5, p))
        value = float(eps(p))
        assert abs(value - oracle) < 1e-12, (
            f"'eps_rev' at p = {p} is {value:.6f}, but the walk has ε_rev = {oracle:.6f}; check the factor √2, the "
            "absolute value and the square root in the denominator"
        )


@test_case(points=1)
def test_affinity(answer_09_2):
    affinity = _function(answer_09_2["affinity"], ["p", "N"])
    for N in (3, 5, 8):
        for p in (0.2, 0.6, 0.9):
            # Oracle: cycle_affinities on the cycle walked forwards, 0 → 1 → … → N−1 → 0.
            oracle = cycle_affinities(_walk(N, p), [list(range(N))])[0]
            value = float(affinity(p, N))
            assert abs(value - oracle) < 1e-10, (
                f"'affinity' at p = {p}, N = {N} is {value:.6f}, but the forward cycle has affinity {oracle:.6f}"
            )


@test_case(points=1)
def test_numeric_check(answer_09_2):
    p = np.asarray(answer_09_2["p_values"], dtype=float).ravel()
    eps = np.asarray(answer_09_2["eps_numeric"], dtype=float).ravel()
    assert p.size >= 3 and eps.shape == p.shape, "'p_values' and 'eps_numeric' should have the same length, at least 3"
    assert np.all((p > 0) & (p < 1)), "the values of p should lie in (0, 1)"
    closed = np.sqrt(2) * np.abs(2 * p - 1) / np.hypot(p, 1 - p)
    # Oracle: the closed form at your p (it does not depend on N); 1e-12 is a few roundings.
    assert np.abs(eps - closed).max() < 1e-12, (
        "'eps_numeric' should be reversibility_residual of the N = 6 walk at each p of 'p_values'"
    )
