"""Tests of exercise 13.3: the cost of each projection in the committed §10 sweep, seed by seed."""

import json

import numpy as np
from otter.test_files import test_case
from scipy import stats

from workbench.experiments import committed_results

OK_FORMAT = False
name = "13.3"
points = 5


def _committed():
    """Complete seeds and the held-out loss of every (target, state), read from the committed sweep."""
    sweep = json.loads((committed_results("sit-transfer") / "sweep.json").read_text())
    rows = {t["seed"]: t["rows"] for t in sweep["tasks"] if t.get("rows")}
    seeds = sorted(rows)

    def loss(target, state):
        return np.array(
            [next(r["heldout_loss"] for r in rows[s] if (r["target"], r["state"]) == (target, state)) for s in seeds]
        )

    jump = {
        "DMTN": loss("DMTN", "projected") - loss("ATTN", "pretrained"),  # projected from the pretrained ATTN model
        "DMAP": loss("DMAP", "projected") - loss("DMTN", "adapted"),  # folded from the adapted DMTN model
    }
    left = {t: loss(t, "adapted") - loss("ATTN", "pretrained") for t in ("DMTN", "DMAP")}
    return seeds, jump, left


def _array(answer, key, target, size):
    got = np.asarray(answer[key][target], float)
    assert got.shape == (size,), f"answer_13_3[{key!r}][{target!r}] should hold one value per seed ({size})"
    return got


@test_case(points=1)
def test_keys_and_seeds(answer_13_3):
    assert isinstance(answer_13_3, dict), "answer_13_3 should be a dict"
    missing = {"seeds", "jump", "left", "interval"} - set(answer_13_3)
    assert not missing, f"answer_13_3 lacks the key(s) {sorted(missing)}"
    seeds, _, _ = _committed()
    assert list(answer_13_3["seeds"]) == seeds, f"use the complete seeds {seeds} (a pending task has no rows)"


@test_case(points=2)
def test_jumps(answer_13_3):
    seeds, jump, _ = _committed()
    for target in ("DMTN", "DMAP"):
        got = _array(answer_13_3, "jump", target, len(seeds))
        # differences of committed floats: exact up to rounding
        if np.allclose(got, jump["DMAP" if target == "DMTN" else "DMTN"], rtol=0, atol=1e-12):
            raise AssertionError(f"answer_13_3['jump'][{target!r}] holds the other target's jumps: the two are swapped")
        assert np.allclose(got, jump[target], rtol=0, atol=1e-12), (
            f"the jumps of {target} are {np.round(jump[target], 4)}, got {np.round(got, 4)}: projected minus the "
            "model it was projected from (DMTN: the pretrained ATTN model; DMAP: the adapted DMTN model)"
        )


@test_case(points=1)
def test_left_after_adaptation(answer_13_3):
    seeds, _, left = _committed()
    for target in ("DMTN", "DMAP"):
        got = _array(answer_13_3, "left", target, len(seeds))
        assert np.allclose(got, left[target], rtol=0, atol=1e-12), (
            f"what is left for {target} is adapted minus the pretrained ATTN loss, {np.round(left[target], 4)}; got "
            f"{np.round(got, 4)}"
        )


@test_case(points=1)
def test_interval(answer_13_3):
    _, jump, _ = _committed()
    expected = stats.ttest_rel(jump["DMAP"], jump["DMTN"]).confidence_interval(0.95)
    got = np.asarray(answer_13_3["interval"], float)
    assert got.shape == (2,), "interval should be a pair (low, high)"
    assert np.allclose(got, (expected.low, expected.high), rtol=0, atol=1e-10), (
        f"the paired 95 % interval of DMAP − DMTN is [{expected.low:+.4f}, {expected.high:+.4f}], got "
        f"[{got[0]:+.4f}, {got[1]:+.4f}]"
    )
