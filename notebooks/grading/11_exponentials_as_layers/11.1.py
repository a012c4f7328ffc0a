"""Tests of exercise 11.1: uniformization of e^{tQ} with the Poisson tail as a certificate."""

import numpy as np
import scipy.linalg
from otter.test_files import test_case
from scipy.stats import poisson

OK_FORMAT = False
name = "11.1"
points = 5


def _generator(answer):
    return np.asarray(answer["Q"], float), float(answer["t"])


def _oracle(Q, t, terms):
    """‖S_K − e^{tQ}‖_∞ for K = 0..terms−1 and Pr(N > K), recomputed from the student's Q and t."""
    rate = float(-np.diag(Q).min())
    P = np.eye(len(Q)) + Q / rate
    reference = scipy.linalg.expm(t * Q)
    partial, power, errors = np.zeros_like(Q), np.eye(len(Q)), []
    for k in range(terms):
        partial = partial + poisson.pmf(k, rate * t) * power
        power = power @ P
        errors.append(np.abs(partial - reference).sum(axis=1).max())
    return rate, np.array(errors), poisson.sf(np.arange(terms), rate * t)


@test_case(points=1)
def test_keys_and_generator(answer_11_1):
    assert isinstance(answer_11_1, dict), "answer_11_1 should be a dict"
    missing = {"Q", "t", "rate", "errors", "tails", "K"} - set(answer_11_1)
    assert not missing, f"answer_11_1 lacks the key(s) {sorted(missing)}"
    Q, t = _generator(answer_11_1)
    assert Q.shape == (24, 24), "Q should be the 24×24 generator dense_q[0] of §1"
    off = Q - np.diag(np.diag(Q))
    assert off.min() >= 0 and np.abs(Q.sum(axis=1)).max() < 1e-12, "Q should be a Markov generator (rows sum to 0)"
    assert t == 2.0, "use t = 2"


@test_case(points=1)
def test_rate(answer_11_1):
    Q, _ = _generator(answer_11_1)
    expected = float(-np.diag(Q).min())
    assert np.isclose(float(answer_11_1["rate"]), expected, rtol=1e-12), (
        f"λ should be the largest exit rate max_i(−Q_ii) = {expected:.6f}, got {float(answer_11_1['rate']):.6f}"
    )


@test_case(points=1)
def test_tails(answer_11_1):
    Q, t = _generator(answer_11_1)
    tails = np.asarray(answer_11_1["tails"], float)
    _, _, expected = _oracle(Q, t, len(tails))
    # the same scipy function: agreement to rounding, relative to the tail itself
    assert np.allclose(tails, expected, rtol=1e-9, atol=1e-300), (
        "tails[K] should be Pr(N > K) = poisson.sf(K, λt) for N ~ Poisson(λt) "
        f"(first entries expected {np.round(expected[:3], 6)}, got {np.round(tails[:3], 6)})"
    )


@test_case(points=1)
def test_errors(answer_11_1):
    Q, t = _generator(answer_11_1)
    errors = np.asarray(answer_11_1["errors"], float)
    _, expected, tails = _oracle(Q, t, len(errors))
    # partial sums of nonnegative terms; expm itself is accurate to ~1e-15 on this 24×24 generator, hence 1e-13
    assert np.allclose(errors, expected, rtol=1e-8, atol=1e-13), (
        "errors[K] should be ‖S_K − expm(tQ)‖_∞, the largest absolute row sum, with S_K the Poisson-weighted sum of "
        "P^k for k = 0..K (weights e^{−λt}(λt)^k/k!)"
    )
    assert np.all(errors <= tails + 1e-14), "the error should never exceed the Poisson tail"


@test_case(points=1)
def test_smallest_K(answer_11_1):
    Q, t = _generator(answer_11_1)
    errors = np.asarray(answer_11_1["errors"], float)
    _, expected, _ = _oracle(Q, t, max(len(errors), 120))
    K = int(np.argmax(expected < 1e-12))
    assert int(answer_11_1["K"]) == K, f"the smallest K with ‖S_K − e^{{tQ}}‖_∞ < 1e-12 is {K}, got {answer_11_1['K']}"
