"""Tests of exercise 10c.2: the magnetic phase and the eigenvalues λ_{k,±} of the uniformly twisted ring."""

import numpy as np
import sympy as sp
from otter.test_files import test_case

from workbench.attention import connection_laplacian, cycle_connection

OK_FORMAT = False
name = "10c.2"
points = 5


def _function(expression, names):
    """A numpy function of the named symbols, from a sympy expression (or a Python function, returned as is)."""
    if not isinstance(expression, sp.Basic):
        return expression
    free = {s.name: s for s in expression.free_symbols}
    assert set(free) <= set(names), f"the expression should use only the symbols {names}, it has {sorted(free)}"
    return sp.lambdify([free.get(name, sp.Symbol(name)) for name in names], expression, "numpy")


def _ring(n, theta):
    A, transports = cycle_connection(n, theta, uniform=True)
    return connection_laplacian(A, transports, kind="unnormalized")


@test_case(points=1)
def test_keys(answer_10c_2):
    keys = {"phase", "eigenvalue_plus", "eigenvalue_minus", "residual"}
    assert isinstance(answer_10c_2, dict) and keys <= set(answer_10c_2), (
        f"answer_10c_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=1)
def test_magnetic_phase(answer_10c_2):
    phase = _function(answer_10c_2["phase"], ["alpha"])
    n, theta = 5, 0.9
    c = complex(phase(theta / n))
    f = np.exp(1j * np.arange(n) * 1.7) * np.linspace(1, 2, n)  # an arbitrary complex profile
    image = (_ring(n, theta) @ (f[:, None] * np.array([1, 1j])).reshape(-1)).reshape(n, 2)
    # Oracle: the connection Laplacian itself, applied to X_j = f_j (1, i); 1e-12 is far above rounding.
    predicted = 2 * f - c * np.roll(f, 1) - np.conj(c) * np.roll(f, -1)
    assert np.abs(image - predicted[:, None] * np.array([1, 1j])).max() < 1e-12, (
        "with your 'phase' c, 2f_j − c f_{j−1} − c̄ f_{j+1} is not what 2I − T does to X_j = f_j (1, i); "
        "check on which side of the edge the rotation acts, and its sign"
    )


@test_case(points=2)
def test_eigenvalues(answer_10c_2):
    for key, direction in (("eigenvalue_plus", 1j), ("eigenvalue_minus", -1j)):
        eigenvalue = _function(answer_10c_2[key], ["k", "theta", "n"])
        for n, theta in ((5, 0.9), (7, 2.3)):
            L = _ring(n, theta)
            for k in range(n):
                v = (np.exp(2j * np.pi * k * np.arange(n) / n)[:, None] * np.array([1, direction])).reshape(-1)
                lam = float(eigenvalue(k, theta, n))
                # Oracle: the eigenvalue equation of the connection Laplacian; entries O(1), so 1e-12 is ample.
                assert np.abs(L @ v - lam * v).max() < 1e-12, (
                    f"'{key}' is not the eigenvalue of v_j = e^(2πikj/n)(1, {'i' if direction == 1j else '−i'}) "
                    f"(n = {n}, θ = {theta}, k = {k}); check the factor 2, that θ is divided by n, and which sign "
                    "goes with which eigenvector"
                )


@test_case(points=1)
def test_residual(answer_10c_2):
    residual = float(answer_10c_2["residual"])
    assert 0 <= residual < 1e-12, f"'residual' is {residual:.2e}; the eigenvalue equation holds to rounding"
