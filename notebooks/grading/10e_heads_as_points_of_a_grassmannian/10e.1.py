"""Tests of exercise 10e.1: the Beta law of the angle between a random line and a fixed plane."""

import numpy as np
from otter.test_files import test_case
from scipy import stats

OK_FORMAT = False
name = "10e.1"
points = 4

CASES = ((384, 32), (10, 3))
DRAWS = 4000


def _law(n, l):  # noqa: E741 (l, the plane's dimension, as in the exercise)
    # cos²θ = χ²_l / (χ²_l + χ²_{n−l}): Beta(l/2, (n − l)/2)
    return stats.beta(l / 2, (n - l) / 2)


@test_case(points=1)
def test_keys_and_samples(answer_10e_1):
    assert isinstance(answer_10e_1, dict), "answer_10e_1 should be a dict"
    missing = {"jacobi", "bases", "p_values", "over_60"} - set(answer_10e_1)
    assert not missing, f"answer_10e_1 lacks the key(s) {sorted(missing)}"
    for key in ("jacobi", "bases"):
        for case in CASES:
            assert case in answer_10e_1[key], f"answer_10e_1[{key!r}] has no entry for (n, l) = {case}"
            x = np.asarray(answer_10e_1[key][case], float)
            assert x.shape == (DRAWS,), f"answer_10e_1[{key!r}][{case}] should hold {DRAWS} values, has shape {x.shape}"
            assert np.all((x >= 0) & (x <= 1)), f"answer_10e_1[{key!r}][{case}]: a squared cosine lies in [0, 1]"


@test_case(points=1)
def test_samples_follow_the_law(answer_10e_1):
    for key in ("jacobi", "bases"):
        for n, l in CASES:  # noqa: E741
            x = np.asarray(answer_10e_1[key][(n, l)], float)
            p = stats.kstest(x, _law(n, l).cdf).pvalue
            # a correct sample fails this at the 1e-3 level once in a thousand seeds; a sample of cos θ, sin²θ or θ
            # fails it with p far below 1e-10
            assert p > 1e-3, (
                f"answer_10e_1[{key!r}][{(n, l)}] does not follow Beta(l/2, (n − l)/2) (KS p = {p:.1e}): store "
                "cos²θ of each draw"
            )
            sd = _law(n, l).std()
            assert abs(x.mean() - l / n) < 4 * sd / np.sqrt(DRAWS), f"the mean of {key} at {(n, l)} is far from l/n"


@test_case(points=1)
def test_p_values(answer_10e_1):
    for n, l in CASES:  # noqa: E741
        jacobi = np.asarray(answer_10e_1["jacobi"][(n, l)], float)
        bases = np.asarray(answer_10e_1["bases"][(n, l)], float)
        expected = (
            stats.kstest(jacobi, _law(n, l).cdf).pvalue,
            stats.kstest(bases, _law(n, l).cdf).pvalue,
            stats.ks_2samp(jacobi, bases).pvalue,
        )
        got = np.asarray(answer_10e_1["p_values"][(n, l)], float)
        assert got.shape == (3,), f"answer_10e_1['p_values'][{(n, l)}] should be three p-values"
        # the same scipy functions on the same samples: agreement to rounding
        assert np.allclose(got, expected, rtol=1e-8, atol=1e-12), (
            f"the p-values at (n, l) = {(n, l)} are {np.round(got, 4)}, expected {np.round(expected, 4)}: test "
            "against Beta(l/2, (n − l)/2), and the two samples against each other with ks_2samp"
        )


@test_case(points=1)
def test_over_60(answer_10e_1):
    x = np.asarray(answer_10e_1["jacobi"][(384, 32)], float)
    expected = np.mean(np.arccos(np.sqrt(x)) > np.pi / 3)  # θ > 60° ⇔ cos²θ < 1/4
    got = float(answer_10e_1["over_60"])
    assert abs(got - expected) < 0.5 / DRAWS, (
        f"over_60 = {got:.4f}, but {expected:.4f} of your Jacobi draws at (384, 32) have θ > 60°"
    )
    assert got > 0.5, "most random lines make more than 60° with a 32-plane of R^384"
