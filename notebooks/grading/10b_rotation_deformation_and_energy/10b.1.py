"""Tests of exercise 10b.1: the singular values of a flat and of a random connection Laplacian (parallel sections)."""

import os

import numpy as np
from otter.test_files import test_case
from scipy.stats import ortho_group

from workbench.attention import connection_laplacian, gauge_transform, random_multihead, softmax_rows

OK_FORMAT = False
name = "10b.1"
points = 5


def _walk_and_field():
    """P_walk and O_rand of notebook 10b §2, rebuilt with its generator (seed 10) and all its earlier draws."""
    small = os.environ.get("WORKBENCH_SCALE", "small") == "small"
    rng = np.random.default_rng(10)
    random_multihead(rng, 4, 6, 3, bias=True, scale=1.5 / np.sqrt(6))
    rng.standard_normal((7, 6))
    dims = np.array([4, 8, 16, 32, 64, 128, 256, 384] if small else [4, 8, 16, 32, 64, 128, 256, 384, 768, 1024])
    for k in dims:
        for _ in range(5):
            rng.standard_normal((k, k))
    for k in dims[dims > 32]:
        rng.standard_normal((k, 32)), rng.standard_normal((32, k))
    rng.uniform(0.5, 2.0, 4)
    P_walk = softmax_rows(rng.standard_normal((7, 7)) * 1.5)
    O_rand = ortho_group.rvs(3, size=49, random_state=13).reshape(7, 7, 3, 3)
    return P_walk, O_rand


def _values(answer, key):
    values = np.sort(np.asarray(answer[key], dtype=float).ravel())
    assert values.shape == (21,), f"'{key}' should hold the 21 singular values of the 21×21 matrix, got {values.size}"
    return values


@test_case(points=1)
def test_keys(answer_10b_1):
    keys = {"V", "sv_flat", "sv_rand", "kernel_dim"}
    assert isinstance(answer_10b_1, dict) and keys <= set(answer_10b_1), (
        f"answer_10b_1 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=2)
def test_flat_connection(answer_10b_1):
    P_walk, _ = _walk_and_field()
    V = np.asarray(answer_10b_1["V"], dtype=float)
    assert V.shape == (7, 3, 3), f"'V' should hold 7 frames 3×3, got shape {V.shape}"
    assert np.abs(np.swapaxes(V, -1, -2) @ V - np.eye(3)).max() < 1e-10, "the frames in 'V' should be orthogonal"
    O_flat = gauge_transform(np.broadcast_to(np.eye(3), (7, 7, 3, 3)).copy(), V)
    oracle = np.sort(np.linalg.svd(connection_laplacian(P_walk, O_flat), compute_uv=False))
    values = _values(answer_10b_1, "sv_flat")
    # Oracle: the dense SVD of the flat connection built from your frames on P_walk.  Singular values of an O(1)
    # matrix are accurate to ~1e-15 absolutely; 1e-10 leaves a wide margin.
    assert np.abs(values - oracle).max() < 1e-10, (
        "'sv_flat' are not the singular values of connection_laplacian(P_walk, gauge_transform(identity, V)) for "
        f"your V (largest difference {np.abs(values - oracle).max():.2e}); use the walk P_walk of the notebook"
    )
    assert int(answer_10b_1["kernel_dim"]) == 3 == int(np.sum(oracle < 1e-12)), (
        f"'kernel_dim' is {answer_10b_1['kernel_dim']}; count the singular values of the flat connection below 1e-12"
    )


@test_case(points=2)
def test_random_connection(answer_10b_1):
    P_walk, O_rand = _walk_and_field()
    oracle = np.sort(np.linalg.svd(connection_laplacian(P_walk, O_rand), compute_uv=False))
    values = _values(answer_10b_1, "sv_rand")
    # Oracle: the dense SVD of the notebook's random orthogonal connection; 1e-10 as above.
    assert np.abs(values - oracle).max() < 1e-10, (
        "'sv_rand' are not the singular values of connection_laplacian(P_walk, O_rand) (largest difference "
        f"{np.abs(values - oracle).max():.2e}); singular values are not the moduli of the eigenvalues"
    )
