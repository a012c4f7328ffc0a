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


def pytest_terminal_summary(terminalreporter):
    """Print the wall time of every course notebook executed in this run (the 60 s budget of the course)."""
    import sys

    module = sys.modules.get("test_notebooks") or sys.modules.get("tests.test_notebooks")
    times = getattr(module, "NOTEBOOK_TIMES", {})
    if times:
        terminalreporter.section("notebook wall times (default scale)")
        for name, seconds in sorted(times.items()):
            terminalreporter.write_line(f"{seconds:6.1f} s  {name}")
