"""Tests of exercise 12.2: ‖F − Fᵀ‖² = 2‖F‖² − 2ΣF_ijF_ji, and the bound ε_rev ≤ √2 with its equality case."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "12.2"
points = 4


def _eps_rev(P):
    """‖F − Fᵀ‖_F/‖F‖_F with F = diag(π)P, π the left Perron vector (numpy eig; independent of the workbench)."""
    w, v = np.linalg.eig(P.T)
    pi = np.abs(np.real(v[:, np.argmin(np.abs(w - 1))]))
    pi = pi / pi.sum()
    F = pi[:, None] * P
    return np.linalg.norm(F - F.T) / np.linalg.norm(F)


@test_case(points=1)
def test_keys(answer_12_2):
    assert isinstance(answer_12_2, dict), "answer_12_2 should be a dict"
    missing = {"rhs", "samples", "values", "one_way", "reciprocal"} - set(answer_12_2)
    assert not missing, f"answer_12_2 lacks the key(s) {sorted(missing)}"
    assert callable(answer_12_2["rhs"]), "answer_12_2['rhs'] should be a function of a matrix F"


@test_case(points=1)
def test_identity(answer_12_2):
    rng = np.random.default_rng(1)
    for n in (2, 3, 5, 8):
        F = rng.random((n, n)) ** 2
        expected = np.linalg.norm(F - F.T) ** 2
        got = float(answer_12_2["rhs"](F))
        # sums of n² products of numbers in [0, 1]: relative rounding ~1e-15
        assert abs(got - expected) <= 1e-12 * np.sum(F**2), (
            f"rhs(F) = {got:.6f} but ‖F − Fᵀ‖_F² = {expected:.6f} for a random {n}×{n} F: the cross term is "
            "Σ F_ij F_ji, counted with the factor 2"
        )


@test_case(points=1)
def test_bound_on_samples(answer_12_2):
    walks = np.asarray(answer_12_2["samples"], float)
    values = np.asarray(answer_12_2["values"], float)
    assert walks.ndim == 3 and walks.shape[1] == walks.shape[2] and len(walks) >= 50, (
        "samples should be an (m, n, n) array of at least 50 walks"
    )
    assert np.all(walks >= 0) and np.allclose(walks.sum(axis=2), 1, atol=1e-12), "each sample should be row-stochastic"
    assert values.shape == (len(walks),), "values should hold one ε_rev per sample"
    expected = np.array([_eps_rev(P) for P in walks[:50]])
    assert np.allclose(values[:50], expected, rtol=0, atol=1e-10), "values are not the ε_rev of the samples"
    assert values.max() <= np.sqrt(2) + 1e-12, "ε_rev ≤ √2 on every sample"


@test_case(points=1)
def test_equality_case(answer_12_2):
    one_way = np.asarray(answer_12_2["one_way"], float)
    reciprocal = np.asarray(answer_12_2["reciprocal"], float)
    for P, label in ((one_way, "one_way"), (reciprocal, "reciprocal")):
        assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1, atol=1e-12), f"{label} should be row-stochastic"
    assert np.all(one_way * one_way.T == 0), "one_way should have no reciprocal edge and no self-loop (P_ij P_ji = 0)"
    assert np.any((reciprocal * reciprocal.T)[~np.eye(len(reciprocal), dtype=bool)] > 0), (
        "reciprocal should have at least one edge travelled both ways"
    )
    assert abs(_eps_rev(one_way) - np.sqrt(2)) < 1e-12, "the one-way walk should reach √2"
    assert _eps_rev(reciprocal) < np.sqrt(2) - 1e-3, "a reciprocal edge should bring ε_rev strictly below √2"
