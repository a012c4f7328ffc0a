"""Tests of exercise 14.1: power laws fitted to the committed forward times, and the crossover."""

import json

import numpy as np
from otter.test_files import test_case

from workbench.experiments import committed_results, crossover_context

OK_FORMAT = False
name = "14.1"
points = 5

MIXERS = ("softmax", "exp-markov")


def _committed():
    """Contexts and forward times of the lowest complete seed of the committed long-context sweep."""
    sweep = json.loads((committed_results("long-context") / "sweep.json").read_text())
    task = min((t for t in sweep["tasks"] if t["status"] == "complete"), key=lambda t: t["seed"])
    result = json.loads((committed_results("long-context") / task["id"] / "results.json").read_text())
    n = np.array([row["context"] for row in result["contexts"]], dtype=float)
    times = {m: np.array([row["seconds"][m]["forward"] for row in result["contexts"]]) for m in MIXERS}
    return n, times


def _laws(n, times):
    """(p, a) of t = a n^p by least squares on (log n, log t), for each mixer."""
    laws = {}
    for mixer, seconds in times.items():
        p, log_a = np.polyfit(np.log(n), np.log(seconds), 1)
        laws[mixer] = (p, np.exp(log_a))
    return laws


@test_case(points=1)
def test_keys_and_data(answer_14_1):
    assert isinstance(answer_14_1, dict), "answer_14_1 should be a dict"
    missing = {"n", "times", "exponents", "prefactors", "n_star", "crossover"} - set(answer_14_1)
    assert not missing, f"answer_14_1 lacks the key(s) {sorted(missing)}"
    n, times = _committed()
    assert np.array_equal(np.asarray(answer_14_1["n"], float), n), f"n should be the committed contexts {n.astype(int)}"
    for mixer in MIXERS:
        got = np.asarray(answer_14_1["times"][mixer], float)
        assert got.shape == n.shape and np.allclose(got, times[mixer], rtol=0, atol=1e-15), (
            f"times[{mixer!r}] should be the committed forward times of seed 0, context by context"
        )


@test_case(points=1)
def test_exponents(answer_14_1):
    laws = _laws(*_committed())
    for mixer in MIXERS:
        got = float(answer_14_1["exponents"][mixer])
        # a least-squares fit of five points computed twice: rounding only
        assert abs(got - laws[mixer][0]) < 1e-9, (
            f"the exponent of {mixer} is {laws[mixer][0]:.4f}, got {got:.4f}: fit log t against log n (not the other "
            "way round, not t itself)"
        )


@test_case(points=1)
def test_prefactors(answer_14_1):
    laws = _laws(*_committed())
    for mixer in MIXERS:
        got = float(answer_14_1["prefactors"][mixer])
        assert np.isclose(got, laws[mixer][1], rtol=1e-8), (
            f"the prefactor a of {mixer} is {laws[mixer][1]:.3e} s, got {got:.3e}: a = exp(intercept), in seconds"
        )


@test_case(points=1)
def test_power_law_crossover(answer_14_1):
    laws = _laws(*_committed())
    (p1, a1), (p2, a2) = laws["softmax"], laws["exp-markov"]
    expected = (a2 / a1) ** (1 / (p1 - p2))  # a1 n^p1 = a2 n^p2
    got = float(answer_14_1["n_star"])
    assert np.isclose(got, expected, rtol=1e-8), (
        f"the two power laws cross at n* = {expected:.0f}, got {got:.0f}: n* = (a2/a1)^(1/(p1 − p2))"
    )


@test_case(points=1)
def test_interpolated_crossover(answer_14_1):
    n, times = _committed()
    expected = crossover_context(n.astype(int).tolist(), (times["exp-markov"] / times["softmax"]).tolist())
    got = answer_14_1["crossover"]
    assert (
        isinstance(got, dict) and got.get("status") == expected["status"] and got.get("context") == expected["context"]
    ), (
        f"crossover_context on the ratios exp-Markov time / softmax time gives {expected}, got {got}: the ratio is "
        "banded over dense (above 1: the band is slower)"
    )
