"""Tests of exercise 04.1: the Bakry–Émery curvature of the cycles C_3, …, C_10, against published values."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "04.1"
points = 4

# Published values (Klartag et al. 2016; Cushing, Liu, Peyerimhoff 2020): C_3 = K_3 has 1 + 3/2 and (3 + 2)/(2·2),
# C_4 = Q_2 has 2 and 2/2, every cycle of length ≥ 5 is flat.
PUBLISHED = {n: (0.0, 0.0) for n in range(5, 11)} | {3: (2.5, 1.25), 4: (2.0, 1.0)}


def _per_vertex(answer, key, n):
    values = np.atleast_1d(np.asarray(answer[key][n], float))
    assert values.shape in ((n,), (1,)), f"{key}[{n}] should be the curvature at each of the {n} vertices"
    return values


@test_case(points=1)
def test_keys(answer_04_1):
    assert isinstance(answer_04_1, dict), "answer_04_1 should be a dict"
    missing = {"unnormalised", "normalised"} - set(answer_04_1)
    assert not missing, f"answer_04_1 lacks the keys {sorted(missing)}"
    for key in ("unnormalised", "normalised"):
        got = sorted(int(n) for n in answer_04_1[key])
        assert got == list(range(3, 11)), f"answer_04_1[{key!r}] should have the keys n = 3, …, 10, got {got}"


@test_case(points=1)
def test_vertex_transitive(answer_04_1):
    for key in ("unnormalised", "normalised"):
        for n in range(3, 11):
            values = _per_vertex(answer_04_1, key, n)
            # the cycle is vertex-transitive: every vertex has the same curvature, up to eigensolver rounding
            assert np.ptp(values) < 1e-10, f"{key}[{n}] should be one value repeated (the cycle is vertex-transitive)"


@test_case(points=1)
def test_unnormalised(answer_04_1):
    for n, (expected, _) in PUBLISHED.items():
        values = _per_vertex(answer_04_1, "unnormalised", n)
        # oracle: the published closed forms; the engine's value is an eigenvalue of a tiny matrix, exact to ~1e-15
        assert np.abs(values - expected).max() < 1e-10, (
            f"K_∞(C_{n}) with rates = adjacency should be {expected:g}, got {values[0]:.6g}"
        )


@test_case(points=1)
def test_normalised(answer_04_1):
    for n, (_, expected) in PUBLISHED.items():
        values = _per_vertex(answer_04_1, "normalised", n)
        assert np.abs(values - expected).max() < 1e-10, (
            f"K_∞(C_{n}) with rates = D⁻¹A (each row of A divided by the degree 2) should be {expected:g}, "
            f"got {values[0]:.6g}"
        )
