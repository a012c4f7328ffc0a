"""Tests of exercise 06a.1: the Witten operator of the double well, its zero level and ground state."""

import numpy as np
import scipy.linalg
import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "06a.1"
points = 5


def _grid():
    return np.linspace(-4, 4, 2002)[1:-1]  # 2000 interior points of [−4, 4], Dirichlet ends dropped


def _levels(grid, count):
    """Lowest eigenvalues of −d²/dx² + V, V = Φ'² − Φ'' for Φ = (x² − 1)²/4, three-point Laplacian (closed form of V)."""
    dx = grid[1] - grid[0]
    V = (grid**3 - grid) ** 2 - (3 * grid**2 - 1)
    return scipy.linalg.eigh_tridiagonal(
        2 / dx**2 + V, np.full(grid.size - 1, -1 / dx**2), eigvals_only=True, select="i", select_range=(0, count - 1)
    )


@test_case(points=1)
def test_keys(answer_06a_1):
    keys = {"V", "grid", "eigenvalues", "ground_state"}
    assert isinstance(answer_06a_1, dict) and keys <= set(answer_06a_1), (
        f"answer_06a_1 should be a dict with keys {sorted(keys)}"
    )
    grid = np.asarray(answer_06a_1["grid"], float)
    assert grid.shape == (2000,) and np.allclose(grid, _grid(), rtol=0, atol=1e-12), (
        "grid should be the 2000 interior points of [−4, 4]: np.linspace(-4, 4, 2002)[1:-1]"
    )


@test_case(points=1)
def test_potential(answer_06a_1):
    V = sp.sympify(answer_06a_1["V"])
    symbols = {s.name: s for s in V.free_symbols}
    assert set(symbols) == {"x"}, f"V should be an expression in x alone (ħ = 1), got symbols {sorted(symbols)}"
    for point in (-1.7, -0.4, 0.0, 0.9, 2.2):
        oracle = (point**3 - point) ** 2 - (3 * point**2 - 1)  # Φ'²/ħ − Φ'' with Φ' = x³ − x, ħ = 1
        got = float(V.subs(symbols["x"], point))
        assert abs(got - oracle) < 1e-9, f"V({point}) should be Φ'² − Φ'' = {oracle:.6f}, got {got:.6f}"


@test_case(points=2)
def test_eigenvalues(answer_06a_1):
    values = np.asarray(answer_06a_1["eigenvalues"], float)
    assert values.shape == (4,), "eigenvalues should hold the four lowest eigenvalues"
    oracle = _levels(_grid(), 4)
    # the same tridiagonal matrix factorised again: LAPACK agrees with itself far below 1e-8
    assert np.abs(values - oracle).max() < 1e-8, (
        f"the four lowest eigenvalues of the discretised H should be {np.round(oracle, 6)}, got {np.round(values, 6)} "
        f"(max deviation {np.abs(values - oracle).max():.1e}); use the grid above, the diagonal 2ħ/Δx² + V and the "
        "off-diagonal −ħ/Δx²"
    )
    # oracle 2: the exact zero level of H = Q*Q, up to the O(Δx²) discretisation error (~1e-5 at Δx = 0.004)
    assert abs(values[0]) < 1e-4, f"the lowest eigenvalue should be 0 up to discretisation error, got {values[0]:.2e}"


@test_case(points=1)
def test_ground_state(answer_06a_1):
    mode = np.asarray(answer_06a_1["ground_state"], float)
    assert mode.shape == (2000,), "ground_state should be the eigenvector on the 2000 grid points"
    assert abs(np.linalg.norm(mode) - 1) < 1e-10, (
        f"ground_state should have Euclidean norm 1, got {np.linalg.norm(mode):.4f}"
    )
    grid = _grid()
    exact = np.exp(-((grid**2 - 1) ** 2) / 4)  # e^{−Φ/ħ}, the conjugate image of the constant
    exact /= np.linalg.norm(exact)
    gap = min(np.abs(mode - exact).max(), np.abs(mode + exact).max())
    # O(Δx²) discretisation error of the eigenvector, ~1e-6 here: 1e-5 leaves a factor of ten
    assert gap < 1e-5, f"ground_state should match e^(−Φ/ħ)/‖e^(−Φ/ħ)‖ (up to sign); max deviation {gap:.1e}"
