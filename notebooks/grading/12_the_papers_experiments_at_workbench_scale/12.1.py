"""Tests of exercise 12.1: three walks at the ends of the ε_rev scale."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "12.1"
points = 4

MIXTURES = (0.1, 0.3, 0.5, 0.7, 0.9)


def _eps_rev(P):
    """‖F − Fᵀ‖_F/‖F‖_F with F = diag(π)P, π the left Perron vector (numpy eig; independent of the workbench)."""
    w, v = np.linalg.eig(P.T)
    pi = np.abs(np.real(v[:, np.argmin(np.abs(w - 1))]))
    pi = pi / pi.sum()
    F = pi[:, None] * P
    return np.linalg.norm(F - F.T) / np.linalg.norm(F)


def _walks(S):
    E = np.exp(S - S.max(axis=1, keepdims=True))
    P_sym = E / E.sum(axis=1, keepdims=True)
    n = len(S)
    cycle = np.zeros((n, n))
    cycle[np.arange(n), (np.arange(n) + 1) % n] = 1.0  # i → i + 1 mod n
    return P_sym, cycle


@test_case(points=1)
def test_keys_and_scores(answer_12_1):
    assert isinstance(answer_12_1, dict), "answer_12_1 should be a dict"
    missing = {"S", "eps_symmetric", "eps_cycle", "mixtures"} - set(answer_12_1)
    assert not missing, f"answer_12_1 lacks the key(s) {sorted(missing)}"
    S = np.asarray(answer_12_1["S"], float)
    assert S.shape == (6, 6), "S should be a 6×6 score matrix"
    assert np.allclose(S, S.T, rtol=0, atol=1e-14), "S should be symmetric: symmetrise your random matrix"


@test_case(points=1)
def test_symmetric_scores(answer_12_1):
    S = np.asarray(answer_12_1["S"], float)
    P_sym, _ = _walks(S)
    # detailed balance holds exactly; what remains is rounding on entries of size ~1/n
    assert _eps_rev(P_sym) < 1e-12, "softmax_rows of symmetric scores should be reversible"
    assert abs(float(answer_12_1["eps_symmetric"])) < 1e-13, (
        f"ε_rev of softmax_rows(S) should be zero to rounding, got {float(answer_12_1['eps_symmetric']):.2e}"
    )


@test_case(points=1)
def test_cycle(answer_12_1):
    assert abs(float(answer_12_1["eps_cycle"]) - np.sqrt(2)) < 1e-13, (
        f"the directed cycle has ε_rev = √2 exactly, got {float(answer_12_1['eps_cycle']):.15f}"
    )


@test_case(points=1)
def test_mixtures(answer_12_1):
    P_sym, cycle = _walks(np.asarray(answer_12_1["S"], float))
    mixtures = answer_12_1["mixtures"]
    assert set(mixtures) >= set(MIXTURES), f"mixtures should have the keys {MIXTURES}"
    for s in MIXTURES:
        expected = _eps_rev((1 - s) * P_sym + s * cycle)
        got = float(mixtures[s])
        # two computations of the same O(1) ratio (eigenvector by numpy.linalg.eig): rounding ~1e-14
        assert abs(got - expected) < 1e-9, (
            f"at s = {s} the mixture (1 − s)P_(a) + s P_(b) has ε_rev = {expected:.6f}, got {got:.6f} (is s the weight "
            "of the cycle, i → i + 1?)"
        )
        assert 0 < got < np.sqrt(2)
