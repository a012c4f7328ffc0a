"""Tests of exercise 09.1: the edge a = 0 of the family as Doob transforms, and DMAP's stationary law as a degree."""

import numpy as np
from otter.test_files import test_case

from workbench.attention import family_operator
from workbench.markov import MarkovOperator, SwissRoll

OK_FORMAT = False
name = "09.1"
points = 5

BONDS = (0.0, 0.5, 1.0)


def _head():
    """q and k of the Swiss-roll head of notebook 09 (sections 2–7), rebuilt with its generator (seed 9) and draws."""
    rng = np.random.default_rng(9)
    D, d_h = 16, 4
    rng.standard_normal((10, D)), rng.standard_normal((2, D, d_h))  # the draws of section 1
    points = SwissRoll().sample(64, seed=9)[:, [0, 2]]
    points = points[np.argsort(np.hypot(*points.T))]
    points = points / points.std()
    X = points @ rng.standard_normal((2, D))
    W_Q, W_K = 0.35 * rng.standard_normal((2, D, d_h))
    return X @ W_Q, X @ W_K


def _entry(answer, key, b, shape):
    table = answer[key]
    assert isinstance(table, dict) and all(any(abs(float(c) - v) < 1e-12 for c in table) for v in BONDS), (
        f"answer_09_1['{key}'] should be a dict with keys 0.0, 0.5 and 1.0 (the values of b)"
    )
    value = np.asarray(next(v for c, v in table.items() if abs(float(c) - b) < 1e-12), dtype=float)
    assert value.shape == shape, f"answer_09_1['{key}'][{b}] should have shape {shape}, got {value.shape}"
    return value


@test_case(points=1)
def test_keys(answer_09_1):
    keys = {"K", "h", "pi", "pi_degree"}
    assert isinstance(answer_09_1, dict) and keys <= set(answer_09_1), (
        f"answer_09_1 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=2)
def test_doob_transform(answer_09_1):
    q, k = _head()
    for b in BONDS:
        K, h = _entry(answer_09_1, "K", b, (64, 64)), _entry(answer_09_1, "h", b, (64,))
        assert np.abs(K - K.T).max() <= 1e-12 * np.abs(K).max(), f"K for b = {b} should be symmetric"
        P_h = K * h[None, :] / (K @ h)[:, None]  # diag(Kh)⁻¹ K diag(h)
        # Oracle: the family's own operator at (b, 0).  Entries are at most 1 and the logits lose about one digit
        # in exp, so the identity holds to ~1e-15; 1e-12 leaves a wide margin.
        gap = np.abs(P_h - family_operator(q, k, (b, 0.0))).max()
        assert gap < 1e-12, (
            f"for b = {b}, diag(Kh)⁻¹ K diag(h) differs from family_operator(q, k, (b, 0)) by {gap:.2e}: check "
            "K = exp(β S^(b)) and the sign and the ½ in h = exp(−β g^(b)/2)"
        )


@test_case(points=1)
def test_stationary_law(answer_09_1):
    q, k = _head()
    for b in BONDS:
        pi = _entry(answer_09_1, "pi", b, (64,))
        # Oracle: the left Perron vector of the family's operator, computed without K or h.
        oracle = MarkovOperator(family_operator(q, k, (b, 0.0))).stationary
        assert np.abs(pi - oracle).max() < 1e-12, (
            f"'pi' for b = {b} is not the stationary law (h⊙Kh normalised to sum 1); largest difference "
            f"{np.abs(pi - oracle).max():.2e}"
        )


@test_case(points=1)
def test_dmap_degree(answer_09_1):
    q, k = _head()
    pi = np.asarray(answer_09_1["pi_degree"], dtype=float)
    assert pi.shape == (64,), f"'pi_degree' should hold 64 values, got shape {pi.shape}"
    # Oracle: DMAP's stationary law from its operator; the degree of gauss_kernel(m, β/4) must reproduce it.
    oracle = MarkovOperator(family_operator(q, k, "DMAP")).stationary
    assert np.abs(pi - oracle).max() < 1e-12, (
        "'pi_degree' is not DMAP's stationary law: normalise the degree of gauss_kernel(m, beta / 4) on the features "
        "m = (q + k)/√2 (not the tokens X), with β/4 in the exponent"
    )
