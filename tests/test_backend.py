import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
from conftest import HAS_TORCH

from workbench.backend import (
    REQUIRED_OPERATIONS,
    available_backends,
    matrix_exp,
    namespace,
    to_backend,
    to_numpy,
)


def test_import_does_not_import_torch():
    code = (
        "import sys, workbench, workbench.catalogue, workbench.markov, workbench.expmv, "
        "workbench.continuum, workbench.cli; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_each_backend_supplies_required_operations(backend):
    xp = namespace(to_backend(np.ones(2), backend))
    missing = [op for op in REQUIRED_OPERATIONS if not hasattr(xp, op)]
    assert missing == []
    assert hasattr(xp.linalg, "eigh") and hasattr(xp.linalg, "matrix_norm")


def test_namespace_ignores_scalars_and_lists():
    assert namespace(np.ones(2), 3.0, None, [1.0]).__name__ == "array_api_compat.numpy"


def test_namespace_rejects_foreign_objects():
    with pytest.raises(TypeError, match=r"argument 0 must be a numpy array or a torch tensor, got builtins.str"):
        namespace("abc")


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_mixed_numpy_and_torch_is_a_type_error():
    import torch

    with pytest.raises(TypeError, match=r"inputs mix array libraries: numpy from argument 0 .* torch from argument 1"):
        namespace(np.ones(2), torch.ones(2))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_to_backend_keeps_float64_and_roundtrips():
    x = np.arange(6.0).reshape(2, 3)
    t = to_backend(x, "torch:cpu")
    assert str(t.dtype) == "torch.float64" and t.device.type == "cpu"
    np.testing.assert_array_equal(to_numpy(t), x)


def test_to_backend_rejects_unknown_backend():
    with pytest.raises(ValueError, match=r"backend must be one of numpy, torch:cpu, torch:cuda, got 'jax'"):
        to_backend([1.0], "jax")


def test_available_backends_starts_with_numpy():
    found = available_backends()
    assert found[0] == "numpy"
    assert ("torch:cpu" in found) == HAS_TORCH


def test_matrix_exp_batched_equals_loop(rng, backend):
    # Oracle: scipy.linalg.expm applied matrix by matrix; batched ≡ loop to rounding.
    stack = rng.standard_normal((5, 4, 4))
    batched = to_numpy(matrix_exp(to_backend(stack, backend)))
    looped = np.stack([scipy.linalg.expm(a) for a in stack])
    np.testing.assert_allclose(batched, looped, rtol=1e-13, atol=1e-14)


def test_matrix_exp_refuses_bad_matrices_by_name():
    with pytest.raises(ValueError, match=r"matrix must be finite, got a NaN or infinite entry"):
        matrix_exp(np.array([[0.0, np.nan], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"matrix must be a square matrix .* got shape \(2, 3\)"):
        matrix_exp(np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"matrix must be a numeric array, got dtype object"):
        matrix_exp(np.full((2, 2), "a", dtype=object))
