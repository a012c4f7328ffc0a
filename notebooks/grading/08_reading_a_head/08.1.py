"""Tests of exercise 08.1: the first-order small-β softmax, its O(β²) remainder, and the cancelled source term."""

import numpy as np
from otter.test_files import test_case

from workbench.attention import random_head, softmax_rows
from workbench.catalogue import fit_rate
from workbench.continuum import softmax_first_order

OK_FORMAT = False
name = "08.1"
points = 5


def _score():
    """The score W of notebook 08, rebuilt with its generator (seed 8) and its draws."""
    rng = np.random.default_rng(8)
    head = random_head(rng, 16, 4, bias=True, scale=1.5 / np.sqrt(16))
    X = rng.standard_normal((12, 16))
    return head.scores(X)


def _betas(answer):
    betas = np.asarray(answer["betas"], dtype=float).ravel()
    expected = np.geomspace(1e-3, 1e-1, 5)
    assert betas.shape == (5,) and np.allclose(np.sort(betas), expected, rtol=1e-12, atol=0), (
        f"'betas' should be the five geometric values 1e-1, …, 1e-3 (np.geomspace(1e-1, 1e-3, 5)), got {betas}"
    )
    return betas


@test_case(points=1)
def test_keys(answer_08_1):
    keys = {"betas", "errors", "slope", "c", "first_order_gap", "softmax_gap"}
    assert isinstance(answer_08_1, dict) and keys <= set(answer_08_1), (
        f"answer_08_1 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=1)
def test_betas(answer_08_1):
    _betas(answer_08_1)


@test_case(points=1)
def test_errors(answer_08_1):
    betas = _betas(answer_08_1)
    W = _score()
    errors = np.asarray(answer_08_1["errors"], dtype=float).ravel()
    assert errors.shape == betas.shape, "'errors' should hold one value per β, in the order of 'betas'"
    # Oracle: the largest entrywise difference, recomputed on the notebook's W.  The smallest error (β = 1e-3) is
    # ~1e-6 and rounding of entries ~1/n is ~1e-17, so a relative 1e-8 separates right from wrong.
    oracle = np.array([np.abs(softmax_rows(b * W) - softmax_first_order(W, b)).max() for b in betas])
    assert np.allclose(errors, oracle, rtol=1e-8, atol=0), (
        "'errors' are not max_ij |softmax_rows(βW) − softmax_first_order(W, β)| for your β (entrywise maximum, "
        "not a matrix norm), in the order of 'betas'"
    )


@test_case(points=1)
def test_slope(answer_08_1):
    betas = _betas(answer_08_1)
    W = _score()
    oracle = fit_rate(betas, [np.abs(softmax_rows(b * W) - softmax_first_order(W, b)).max() for b in betas])
    slope = float(answer_08_1["slope"])
    # Oracle: fit_rate (slope of log error against log β) on the recomputed errors; 1e-6 is far above rounding.
    assert abs(slope - oracle) < 1e-6 and abs(slope - 2) < 0.05, (
        f"'slope' is {slope:.4f}; fit_rate(betas, errors) gives {oracle:.4f} (β first, errors second)"
    )


@test_case(points=1)
def test_source_term_cancels(answer_08_1):
    W = _score()
    c = np.asarray(answer_08_1["c"], dtype=float).ravel()
    assert c.shape == (12,), f"'c' should hold one constant per row (12 values), got shape {c.shape}"
    assert np.ptp(c) > 0, "choose constants c_i that vary from row to row: a single constant tests less"
    source = W + c[:, None]  # c_i added to every entry of row i
    # Oracle: exact invariance of both sides; only rounding of entries ~1/n remains (~1e-16), hence 1e-13.
    assert np.abs(softmax_first_order(source, 1e-2) - softmax_first_order(W, 1e-2)).max() < 1e-13
    for key in ("first_order_gap", "softmax_gap"):
        gap = float(answer_08_1[key])
        assert 0 <= gap < 1e-13, (
            f"'{key}' is {gap:.2e}: adding c_i to row i of W should change neither side (to rounding); "
            "did you add c to the columns instead of the rows, or use a β other than 1e-2?"
        )
