"""Tests of exercise 13.1: paired, Welch and bootstrap intervals over the committed seeds of Table 2."""

import itertools
import json

import numpy as np
from otter.test_files import test_case
from scipy import stats

from workbench.experiments import committed_results

OK_FORMAT = False
name = "13.1"
points = 6

OPERATORS = ("DMTN", "DMAP")


def _committed():
    """Seeds and bpb per operator, read from the committed sweep (the oracle's data, not the student's)."""
    sweep = json.loads((committed_results("lm-table2") / "sweep.json").read_text())
    by_seed = {}
    for task in sweep["tasks"]:
        for row in task.get("rows") or ():
            by_seed.setdefault(row["operator"], {})[task["seed"]] = row["bpb"]
    seeds = sorted(set(by_seed["ATTN"]) & set(by_seed["DMTN"]) & set(by_seed["DMAP"]))
    return seeds, {op: np.array([by_seed[op][s] for s in seeds]) for op in ("ATTN", "DMTN", "DMAP")}


def _interval(answer, method, op):
    got = np.asarray(answer[method][op], float)
    assert got.shape == (2,), f"answer_13_1[{method!r}][{op!r}] should be a pair (low, high)"
    return got


@test_case(points=1)
def test_keys_and_data(answer_13_1):
    assert isinstance(answer_13_1, dict), "answer_13_1 should be a dict"
    missing = {"seeds", "bpb", "correlation", "paired", "welch", "bootstrap"} - set(answer_13_1)
    assert not missing, f"answer_13_1 lacks the key(s) {sorted(missing)}"
    seeds, bpb = _committed()
    assert list(answer_13_1["seeds"]) == seeds, f"pair the committed seeds {seeds}, got {answer_13_1['seeds']}"
    for op in ("ATTN", "DMTN", "DMAP"):
        got = np.asarray(answer_13_1["bpb"][op], float)
        assert got.shape == bpb[op].shape and np.allclose(got, bpb[op], rtol=0, atol=1e-12), (
            f"answer_13_1['bpb'][{op!r}] is not the committed held-out bpb of {op}, seed by seed"
        )


@test_case(points=1)
def test_correlation(answer_13_1):
    _, bpb = _committed()
    for op in OPERATORS:
        expected = np.corrcoef(bpb[op], bpb["ATTN"])[0, 1]
        got = float(answer_13_1["correlation"][op])
        assert abs(got - expected) < 1e-10, (
            f"the correlation of {op} with ATTN over seeds is {expected:+.4f}, got {got:+.4f}"
        )


@test_case(points=1)
def test_paired_interval(answer_13_1):
    _, bpb = _committed()
    for op in OPERATORS:
        expected = stats.ttest_rel(bpb[op], bpb["ATTN"]).confidence_interval(0.95)
        got = _interval(answer_13_1, "paired", op)
        # the same t-interval computed twice: rounding only (~1e-16); 1e-10 catches a level or ddof slip (≥ 1e-3 here)
        assert np.allclose(got, (expected.low, expected.high), rtol=0, atol=1e-10), (
            f"the paired 95 % interval of {op} − ATTN is [{expected.low:+.4f}, {expected.high:+.4f}], got "
            f"[{got[0]:+.4f}, {got[1]:+.4f}]: mean ± t(0.975, n − 1)·s_d/√n with the sample standard deviation (ddof=1)"
        )


@test_case(points=1)
def test_welch_interval(answer_13_1):
    _, bpb = _committed()
    for op in OPERATORS:
        expected = stats.ttest_ind(bpb[op], bpb["ATTN"], equal_var=False).confidence_interval(0.95)
        got = _interval(answer_13_1, "welch", op)
        # the pooled interval differs from Welch's by 3e-5 (DMAP) to 5e-3 (DMTN) at 95 %: rounding-level tolerance
        assert np.allclose(got, (expected.low, expected.high), rtol=0, atol=1e-10), (
            f"Welch's 95 % interval of {op} − ATTN is [{expected.low:+.4f}, {expected.high:+.4f}], got "
            f"[{got[0]:+.4f}, {got[1]:+.4f}]: unequal variances (equal_var=False), level 0.95"
        )


@test_case(points=1)
def test_bootstrap_interval(answer_13_1):
    _, bpb = _committed()
    for op in OPERATORS:
        d = bpb[op] - bpb["ATTN"]
        n = len(d)
        # the exact bootstrap law of the resampled mean: all n^n index tuples, equally likely (3,125 for 5 seeds)
        means = np.array([d[list(idx)].mean() for idx in itertools.product(range(n), repeat=n)])
        expected = np.percentile(means, [2.5, 97.5])
        got = _interval(answer_13_1, "bootstrap", op)
        # 10,000 resamples estimate a 2.5 % point to about 0.03 standard errors of the mean (≤ 0.0007 here); a 90 %
        # interval or resampling the two operators separately moves an endpoint by more than 0.003
        assert np.allclose(got, expected, rtol=0, atol=0.003), (
            f"the percentile bootstrap interval of {op} − ATTN should be close to [{expected[0]:+.4f}, "
            f"{expected[1]:+.4f}], got [{got[0]:+.4f}, {got[1]:+.4f}]: resample the seeds' differences d_s with "
            "replacement and take the 2.5 % and 97.5 % points of the means"
        )


@test_case(points=1)
def test_comparisons(answer_13_1):
    for op in OPERATORS:
        paired, welch = _interval(answer_13_1, "paired", op), _interval(answer_13_1, "welch", op)
        wider = welch[1] - welch[0] > paired[1] - paired[0]
        assert wider == (float(answer_13_1["correlation"][op]) > 0), (
            f"{op}: Welch's interval should be wider than the paired one exactly when the correlation is positive"
        )
    paired, boot = _interval(answer_13_1, "paired", "DMTN"), _interval(answer_13_1, "bootstrap", "DMTN")
    assert paired[0] < 0 < paired[1] and boot[0] > 0, (
        "for DMTN − ATTN the t-interval contains 0 and the (too narrow) bootstrap interval does not"
    )
