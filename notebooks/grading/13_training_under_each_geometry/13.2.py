"""Tests of exercise 13.2: bits per byte of a constant model, and Gibbs' inequality."""

import hashlib

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "13.2"
points = 5

# Oracles recorded from `shakespeare_bytes()` (the corpus ships with the workbench; reading it takes seconds, too
# long for a test): the SHA-256 of the 65,536 held-out bytes that held_out_bpb(·, corpus, 65_536, 128) scores
# (held_out[1:65_537]: the first held-out byte is context only), and two moments of the add-one training
# frequencies q (train has 8,572,279 bytes).
PREDICTED_SHA256 = "d2c44c0f9ca32f42971810ad6bc15f0f546d5ff37b8e1a18de8f28d716cc4f50"
Q_MEAN_BYTE = 86.98064434849202  # Σ_b b·q_b
Q_SQUARES = 0.06041746587891165  # Σ_b q_b²


def _predicted(answer):
    return np.asarray(answer["predicted"])


@test_case(points=1)
def test_keys_and_bytes(answer_13_2):
    assert isinstance(answer_13_2, dict), "answer_13_2 should be a dict"
    missing = {"q", "predicted", "bpb", "direct", "entropy"} - set(answer_13_2)
    assert not missing, f"answer_13_2 lacks the key(s) {sorted(missing)}"
    predicted = _predicted(answer_13_2)
    assert predicted.shape == (65_536,), f"predicted should hold the 65,536 scored bytes, has shape {predicted.shape}"
    digest = hashlib.sha256(np.ascontiguousarray(predicted, dtype=np.uint8).tobytes()).hexdigest()
    assert digest == PREDICTED_SHA256, (
        "predicted is not the sequence of held-out bytes that held_out_bpb scores: the first held-out byte is "
        "context only, so the scored bytes are held_out[1], held_out[2], …"
    )


@test_case(points=1)
def test_frequencies(answer_13_2):
    q = np.asarray(answer_13_2["q"], float)
    assert q.shape == (256,) and np.all(q > 0) and abs(q.sum() - 1) < 1e-12, (
        "q should be 256 positive probabilities (add one to every byte count of the training text)"
    )
    # moments of a probability vector summed in another order: rounding ~1e-16 relative
    assert abs(q @ np.arange(256) - Q_MEAN_BYTE) < 1e-9 and abs(q @ q - Q_SQUARES) < 1e-12, (
        "q is not the add-one byte frequencies of the training text (corpus.train)"
    )


@test_case(points=1)
def test_direct(answer_13_2):
    q, predicted = np.asarray(answer_13_2["q"], float), _predicted(answer_13_2).astype(np.int64)
    expected = float(-np.log2(q[predicted]).mean())
    got = float(answer_13_2["direct"])
    assert abs(got - expected) < 1e-12, (
        f"−(1/N) Σ_t log₂ q(x_t) over the scored bytes is {expected:.6f}, got {got:.6f} (bits: log base 2)"
    )


@test_case(points=1)
def test_held_out_bpb(answer_13_2):
    q, predicted = np.asarray(answer_13_2["q"], float), _predicted(answer_13_2).astype(np.int64)
    expected = float(-np.log2(q[predicted]).mean())
    got = float(answer_13_2["bpb"])
    # held_out_bpb sums float64 log-probabilities in another order: ~1e-15
    assert abs(got - expected) < 1e-12, (
        f"held_out_bpb of the constant model should equal {expected:.6f}, got {got:.6f}: its logits are log q at "
        "every position"
    )


@test_case(points=1)
def test_entropy(answer_13_2):
    predicted = _predicted(answer_13_2).astype(np.int64)
    p = np.bincount(predicted, minlength=256) / len(predicted)
    expected = float(-(p[p > 0] * np.log2(p[p > 0])).sum())
    got = float(answer_13_2["entropy"])
    assert abs(got - expected) < 1e-12, (
        f"the empirical entropy of the scored bytes is {expected:.6f} bits, got {got:.6f} (use their own "
        "frequencies, not q)"
    )
    assert got <= float(answer_13_2["bpb"]), "Gibbs: the constant model's bpb is at least the empirical entropy"
