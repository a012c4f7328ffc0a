"""Shared fixtures: seeded generators and the backends present on this machine."""

import importlib.util

import numpy as np
import pytest

HAS_TORCH = importlib.util.find_spec("torch") is not None
BACKENDS = ["numpy", "torch:cpu"] if HAS_TORCH else ["numpy"]


@pytest.fixture
def rng():
    return np.random.default_rng(20261129)


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param
