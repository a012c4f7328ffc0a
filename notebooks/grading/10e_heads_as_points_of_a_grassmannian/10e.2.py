"""Tests of exercise 10e.2: Grassmannian distances as matrix norms, and the dimension count."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "10e.2"
points = 5


def _bases(answer):
    Q1, Q2 = np.asarray(answer["Q1"], float), np.asarray(answer["Q2"], float)
    return Q1, Q2


def _cosines(Q1, Q2):
    return np.clip(np.linalg.svd(Q1.T @ Q2, compute_uv=False), 0.0, 1.0)  # descending


@test_case(points=1)
def test_keys_and_bases(answer_10e_2):
    assert isinstance(answer_10e_2, dict), "answer_10e_2 should be a dict"
    keys = {"Q1", "Q2", "theta", "chordal", "projection", "procrustes", "procrustes_min", "random_value", "dimension"}
    missing = keys - set(answer_10e_2)
    assert not missing, f"answer_10e_2 lacks the key(s) {sorted(missing)}"
    Q1, Q2 = _bases(answer_10e_2)
    assert Q1.shape == Q2.shape == (384, 32), "Q1 and Q2 should be 384×32 bases of two query subspaces"
    for Q in (Q1, Q2):
        assert np.abs(Q.T @ Q - np.eye(32)).max() < 1e-10, "Q1 and Q2 should be orthonormal bases"
    assert np.abs(Q1 - Q2).max() > 1e-3, "Q1 and Q2 should be two different heads"


@test_case(points=1)
def test_angles(answer_10e_2):
    Q1, Q2 = _bases(answer_10e_2)
    expected = np.sort(np.arccos(_cosines(Q1, Q2)))  # the angles here are far from 0, so arccos is accurate
    theta = np.asarray(answer_10e_2["theta"], float)
    assert theta.shape == (32,), "theta should hold the 32 principal angles"
    assert np.allclose(theta, expected, rtol=0, atol=1e-8), (
        "theta is not the principal angles of Q1, Q2 in ascending order"
    )


@test_case(points=1)
def test_chordal_and_projection(answer_10e_2):
    Q1, Q2 = _bases(answer_10e_2)
    sines = np.sqrt(1 - _cosines(Q1, Q2) ** 2)
    chordal = np.linalg.norm(sines)
    projection = np.linalg.norm(Q1 @ Q1.T - Q2 @ Q2.T)  # Frobenius
    # norms of O(1) quantities computed in two ways: relative rounding ~1e-14; margin 1e-10
    assert np.isclose(float(answer_10e_2["chordal"]), chordal, rtol=1e-10), (
        f"chordal should be ‖sin θ‖₂ = {chordal:.6f}, got {float(answer_10e_2['chordal']):.6f}"
    )
    assert np.isclose(float(answer_10e_2["projection"]), projection, rtol=1e-10), (
        f"projection should be the Frobenius norm ‖P1 − P2‖_F = {projection:.6f} (no square, no spectral norm), got "
        f"{float(answer_10e_2['projection']):.6f}"
    )
    assert np.isclose(projection, np.sqrt(2) * chordal, rtol=1e-10)


@test_case(points=1)
def test_procrustes(answer_10e_2):
    Q1, Q2 = _bases(answer_10e_2)
    cosines = _cosines(Q1, Q2)
    minimum = np.sqrt(max(2 * len(cosines) - 2 * cosines.sum(), 0.0))  # 2k − 2 Σ σ_i at the singular vectors
    assert np.isclose(float(answer_10e_2["procrustes"]), minimum, rtol=1e-9), (
        f"procrustes should be ‖2 sin(θ/2)‖₂ = {minimum:.6f}, got {float(answer_10e_2['procrustes']):.6f}"
    )
    assert np.isclose(float(answer_10e_2["procrustes_min"]), minimum, rtol=1e-9), (
        f"procrustes_min should be the minimum {minimum:.6f} of ‖Q1 − Q2 R‖_F, got "
        f"{float(answer_10e_2['procrustes_min']):.6f}: orthogonal_procrustes(A, B) minimises ‖A R − B‖_F"
    )
    assert float(answer_10e_2["random_value"]) > minimum + 0.1, "a random orthogonal pair U, V should do worse"


@test_case(points=1)
def test_dimension(answer_10e_2):
    got = answer_10e_2["dimension"]
    assert int(got) == got and int(got) == 32 * (384 - 32), (
        f"dim Gr(32, 384) counts nk parameters minus the k² of GL_k; got {got}"
    )
