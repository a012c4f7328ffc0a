"""Tests of exercise 02.1: the DCT eigen-pairs of the path graph and its heat kernel, against expmv."""

import numpy as np
import scipy.linalg
from otter.test_files import test_case

OK_FORMAT = False
name = "02.1"
points = 5

METHODS = ("taylor", "krylov", "chebyshev", "uniformization")


def _path_laplacian(n):
    """L = D − A of the path graph on n vertices, dense, built independently of the notebook's helper."""
    adjacency = np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1)
    return np.diag(adjacency.sum(axis=1)) - adjacency


def _heat(answer):
    n, t, source = int(answer["n"]), float(answer["t"]), int(answer["source"])
    return scipy.linalg.expm(-t * _path_laplacian(n))[:, source]  # oracle: dense Padé expm, ~1e-15 relative


@test_case(points=1)
def test_keys(answer_02_1):
    keys = {"n", "t", "source", "eigenvalues", "eigenvectors", "eigen_residual", "spectral", "expmv"}
    assert isinstance(answer_02_1, dict), "answer_02_1 should be a dict"
    missing = keys - set(answer_02_1)
    assert not missing, f"answer_02_1 lacks the keys {sorted(missing)}"
    got = (answer_02_1["n"], answer_02_1["t"], answer_02_1["source"])
    assert got == (300, 50.0, 60), f"the exercise uses n = 300, t = 50 and the source vertex 60, got {got}"
    assert set(answer_02_1["expmv"]) == set(METHODS), f"answer_02_1['expmv'] should have the keys {METHODS}"


@test_case(points=1)
def test_eigenvalues(answer_02_1):
    n = int(answer_02_1["n"])
    expected = 2 - 2 * np.cos(np.pi * np.arange(n) / n)  # oracle: the closed form, in the order k = 0, …, n − 1
    got = np.asarray(answer_02_1["eigenvalues"], float)
    assert got.shape == (n,), f"eigenvalues should be a vector of length {n}, got shape {got.shape}"
    assert np.abs(got - expected).max() < 1e-12, "eigenvalues should be λ_k = 2 − 2cos(πk/n) for k = 0, …, n − 1"


@test_case(points=1)
def test_eigenvectors(answer_02_1):
    n = int(answer_02_1["n"])
    Phi = np.asarray(answer_02_1["eigenvectors"], float)
    lam = 2 - 2 * np.cos(np.pi * np.arange(n) / n)
    assert Phi.shape == (n, n), f"eigenvectors should be an n×n matrix with φ_k in column k, got shape {Phi.shape}"
    norms = np.linalg.norm(Phi, axis=0)
    assert np.abs(norms - 1).max() < 1e-12, "each column φ_k should have Euclidean norm 1 (normalise along axis 0)"
    # oracle: the eigen-equation with an independently built Laplacian; entries of size ≤ 0.1, rounding ~1e-15
    residual = np.abs(_path_laplacian(n) @ Phi - Phi * lam).max()
    assert residual < 1e-12, (
        f"max_k ‖Lφ_k − λ_kφ_k‖ = {residual:.1e}: column k should be cos(πk(j + ½)/n) over j = 0, …, n − 1"
    )
    assert 0 <= answer_02_1["eigen_residual"] < 1e-12, "eigen_residual should be at rounding level"


@test_case(points=1)
def test_spectral_sum(answer_02_1):
    expected = _heat(answer_02_1)
    got = np.asarray(answer_02_1["spectral"], float)
    error = np.linalg.norm(got - expected) / np.linalg.norm(expected)
    assert error < 1e-12, (
        f"the spectral sum Σ_k e^(−tλ_k) φ_k φ_k(source) differs from e^(−tL)δ_source by {error:.1e} (relative)"
    )


@test_case(points=1)
def test_expmv(answer_02_1):
    expected = _heat(answer_02_1)
    for method in METHODS:
        got = np.asarray(answer_02_1["expmv"][method], float)
        error = np.linalg.norm(got - expected) / np.linalg.norm(expected)
        # every method promises a normwise 2^-53 at the default tol; 1e-12 leaves room for expm's own rounding
        assert error < 1e-12, f"expmv with method {method!r} differs from e^(−tL)δ_source by {error:.1e} (relative)"
