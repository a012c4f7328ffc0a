"""Tests of exercise 10a.1: the head weights of every edge, read back from the effective transport by least squares."""

import numpy as np
from otter.test_files import test_case

from workbench.attention import random_multihead

OK_FORMAT = False
name = "10a.1"
points = 4


def _layer():
    """The multi-head layer of notebook 10a §1, rebuilt with the notebook's generator (seed 10) and draws."""
    rng = np.random.default_rng(10)
    n, D, d_h, H = 7, 6, 3, 4
    mha = random_multihead(rng, H, D, d_h, bias=True, scale=1.5 / np.sqrt(D))
    X = rng.standard_normal((n, D))
    return mha.attention(X), mha.value_output_maps()


@test_case(points=1)
def test_keys(answer_10a_1):
    assert isinstance(answer_10a_1, dict) and {"weights", "condition", "residual"} <= set(answer_10a_1), (
        "answer_10a_1 should be a dict with keys 'weights', 'condition' and 'residual'"
    )


@test_case(points=2)
def test_weights(answer_10a_1):
    A_heads, _ = _layer()
    weights = np.asarray(answer_10a_1["weights"], dtype=float)
    assert weights.shape == (7, 7, 4), (
        f"'weights' should have shape (7, 7, 4), weights[i, j, h] = w_h(i, j); got shape {weights.shape}"
    )
    assert np.all(np.isfinite(weights)), "'weights' contains NaN or inf"
    # Oracle: w_h(i, j) = A^(h)_ij / Σ_g A^(g)_ij, read off the attention matrices.  The least-squares solve has
    # condition number O(1), so it reproduces them to a few ulps; 1e-10 leaves a wide margin.
    oracle = np.moveaxis(A_heads / A_heads.sum(axis=0), 0, -1)
    if np.abs(weights - oracle).max() > 1e-10:
        hint = ""
        if np.abs(weights - np.swapaxes(oracle, 0, 1)).max() < 1e-10:
            hint = " (they are the weights of the reversed edges: weights[i, j] should belong to the edge j → i)"
        elif np.abs(weights.sum(axis=-1) - 1).max() > 1e-8:
            hint = " (they do not sum to 1 over the heads: check how the least-squares solution is reshaped)"
        raise AssertionError(
            f"'weights' differ from A^(h)_ij / Σ_g A^(g)_ij by up to {np.abs(weights - oracle).max():.2e}{hint}"
        )


@test_case(points=1)
def test_condition_and_residual(answer_10a_1):
    _, M_heads = _layer()
    # Oracle: the condition number of the 36 × 4 matrix whose column h is the flattened M_h (equal for the
    # transpose, and for any other flattening order of the same maps); relative 1e-8 is far above rounding.
    oracle = np.linalg.cond(M_heads.reshape(4, -1).T)
    condition = float(answer_10a_1["condition"])
    assert abs(condition - oracle) <= 1e-8 * oracle, (
        f"'condition' is {condition:.6g}, but the 36×4 matrix of the flattened M_h has condition number {oracle:.6g}"
    )
    residual = float(answer_10a_1["residual"])
    # The transports lie exactly in the span of the M_h, so the least-squares residual is rounding (~1e-15).
    assert 0 <= residual < 1e-12, f"'residual' should be the (tiny) least-squares residual, got {residual:.2e}"
