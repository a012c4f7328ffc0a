"""Tests of exercise 07.2: the jump part of the carré du champ of cos kx, closed form and grid."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "07.2"
points = 6

NU = 0.3  # the ν of notebook 07


def _number(expr, **values):
    expr = sp.sympify(expr)
    names = {s.name: s for s in expr.free_symbols}
    unknown = set(names) - set(values)
    assert not unknown, f"unexpected symbols {sorted(unknown)} (expected only {sorted(values)})"
    return float(expr.subs({names[n]: v for n, v in values.items() if n in names}))


@test_case(points=1)
def test_keys(answer_07_2):
    keys = {"A", "B", "closed_form", "nodes", "gamma_grid"}
    assert isinstance(answer_07_2, dict) and keys <= set(answer_07_2), (
        f"answer_07_2 should be a dict with keys {sorted(keys)}"
    )
    assert {2, 3, 4} <= set(answer_07_2["A"]) and {2, 3, 4} <= set(answer_07_2["B"]), (
        "A and B should have the keys 2, 3, 4"
    )
    assert {3, 4} <= set(answer_07_2["gamma_grid"]), "gamma_grid should have the keys 3 and 4"


@test_case(points=2)
def test_coefficients(answer_07_2):
    # oracle: n = ν(3/2 − 2cos u + ½cos 2u) and orthogonality of the cosines on (−π, π)
    expected_A = {2: 2.5 * np.pi * NU, 3: 3 * np.pi * NU, 4: 3 * np.pi * NU}
    expected_B = {2: -np.pi * NU, 3: -1.5 * np.pi * NU, 4: -1.5 * np.pi * NU}
    for k in (2, 3, 4):
        A, B = _number(answer_07_2["A"][k], nu=NU), _number(answer_07_2["B"][k], nu=NU)
        # exact values in double precision: 1e-12 relative is rounding
        assert abs(A / expected_A[k] - 1) < 1e-12, (
            f"A_{k} should be {expected_A[k] / (np.pi * NU):g}πν, got {A / (np.pi * NU):.6f}πν (integrate over (−π, π))"
        )
        assert abs(B / expected_B[k] - 1) < 1e-12, (
            f"B_{k} should be {expected_B[k] / (np.pi * NU):g}πν, got {B / (np.pi * NU):.6f}πν"
        )


@test_case(points=1)
def test_closed_form(answer_07_2):
    for k in (3, 5, 7):
        for x in (0.0, 0.4, 1.9):
            got = _number(answer_07_2["closed_form"], x=x, nu=NU, k=k)
            want = 3 * np.pi * NU * (2 + np.cos(2 * k * x)) / 4  # ½[A_k − B_k cos 2kx] with A_k = 3πν, B_k = −3πν/2
            assert abs(got - want) < 1e-12, (
                f"the closed form at k = {k}, x = {x} should be 3πν(2 + cos 2kx)/4 = {want:.6f}, got {got:.6f}"
            )


@test_case(points=2)
def test_grid(answer_07_2):
    nodes = np.asarray(answer_07_2["nodes"], float)
    n = nodes.size
    assert n >= 256 and np.allclose(nodes, 2 * np.pi * np.arange(n) / n, atol=1e-12), (
        "nodes should be the uniform grid of circle_courrege_operator"
    )
    for k in (3, 4):
        gamma = np.asarray(answer_07_2["gamma_grid"][k], float)
        assert gamma.shape == nodes.shape, f"gamma_grid[{k}] should have one value per node"
        want = 3 * np.pi * NU * (2 + np.cos(2 * k * nodes)) / 4
        # the trapezoid rule is exact for a trigonometric polynomial: only rounding of sums of ~1000 terms, ≪ 1e-12
        assert np.abs(gamma - want).max() < 1e-12, (
            f"gamma_grid[{k}] should be 3πν(2 + cos 2kx)/4 on the grid (max deviation {np.abs(gamma - want).max():.2e}); "
            "the remote rates are L_local − L (off-diagonal of −L, Gauss part removed)"
        )
