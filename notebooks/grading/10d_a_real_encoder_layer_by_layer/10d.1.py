"""Tests of exercise 10d.1: the loop reading of `diagnose`, recomputed triangle by triangle."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "10d.1"
points = 4

SENTENCE = "The cat sat on the warm mat."
# Oracle: `diagnose(load_minilm(), SENTENCE).layers[l].loop_inconsistency` for l = 0..5, recorded from the float64
# forward pass of the workbench (the weights ship in a fixed package).  Loading the model takes seconds, too long
# for a test; BLAS may change the last digits (~1e-14), hence the tolerance 1e-8 below.
REFERENCE = np.array(
    [1.406620037677693, 1.4047164254117737, 1.407996713346658, 1.3988164853467469, 1.416282914062186, 1.401848626080868]
)
# [CLS] the cat sat on the warm mat . [SEP]: 8 content tokens, so 6 triangles t → t+1 → t+2 → t
TRIANGLES = 6


def _array(answer, key):
    return np.asarray(answer[key], dtype=float)


@test_case(points=1)
def test_keys_and_shapes(answer_10d_1):
    assert isinstance(answer_10d_1, dict), "answer_10d_1 should be a dict"
    missing = {"text", "learned", "null", "diagnose"} - set(answer_10d_1)
    assert not missing, f"answer_10d_1 lacks the key(s) {sorted(missing)}"
    assert answer_10d_1["text"] == SENTENCE, f"read the short sentence of the notebook, {SENTENCE!r}"
    for key in ("learned", "null"):
        shape = np.shape(answer_10d_1[key])
        assert shape == (6, TRIANGLES), (
            f"answer_10d_1[{key!r}] has shape {shape}; expected (6, {TRIANGLES}): one row per layer, one column per "
            "triangle of three consecutive content tokens ([CLS] and [SEP] left out)"
        )


@test_case(points=1)
def test_diagnose_values(answer_10d_1):
    diag = _array(answer_10d_1, "diagnose")
    assert diag.shape == (6,), "answer_10d_1['diagnose'] should hold one value per layer"
    assert np.allclose(diag, REFERENCE, rtol=0, atol=1e-8), (
        "answer_10d_1['diagnose'] is not report.layers[layer].loop_inconsistency of diagnose(model, text) for the "
        f"short sentence: got {np.round(diag, 6)}"
    )


@test_case(points=1)
def test_learned_means_match_diagnose(answer_10d_1):
    means = _array(answer_10d_1, "learned").mean(axis=1)
    # the same defect summed in another order: agreement to rounding; 1e-8 leaves room for BLAS differences
    assert np.allclose(means, REFERENCE, rtol=0, atol=1e-8), (
        f"the layer means of your readings {np.round(means, 6)} differ from diagnose's {np.round(REFERENCE, 6)}: "
        "check the triangle (0, 1, 2, 0) on three consecutive content tokens, the layer's own maps "
        "value_output_maps(), and remove_scale=True"
    )


@test_case(points=1)
def test_null_readings(answer_10d_1):
    learned, null = _array(answer_10d_1, "learned"), _array(answer_10d_1, "null")
    assert np.all((null >= 0) & (null <= 2)), "a scale-free loop reading lies in [0, 2] (Exercise 10d.2)"
    assert np.abs(null - learned).max() > 1e-3, (
        "the null readings equal the learned ones: use the maps of a fresh layer (random_multihead) for the null"
    )
    # random 384×384 maps: |τ| ~ 1/D, so each layer mean is √2 to within a few thousandths; margin 0.03
    assert np.abs(null.mean(axis=1) - np.sqrt(2)).max() < 0.03, (
        f"the null layer means {np.round(null.mean(axis=1), 4)} should lie within 0.03 of √2"
    )
