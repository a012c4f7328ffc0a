"""Tests of exercise 10b.2: the orthogonality deviation of an equal mixture of two rotations, in closed form."""

import numpy as np
import sympy as sp
from otter.test_files import test_case
from scipy.spatial.transform import Rotation
from scipy.stats import ortho_group

from workbench.attention import orthogonality_deviation

OK_FORMAT = False
name = "10b.2"
points = 5


def _evaluate(closed_form, angles):
    """Evaluate a sympy expression in the symbol named 'phi' (or a Python function) at the given angles."""
    if isinstance(closed_form, sp.Basic):
        symbols = {s.name: s for s in closed_form.free_symbols}
        assert set(symbols) <= {"phi"}, f"'delta' should depend on the symbol phi only, it has {sorted(symbols)}"
        function = sp.lambdify(symbols.get("phi", sp.Symbol("phi")), closed_form, "numpy")
    else:
        function = closed_form
    return np.broadcast_to(np.asarray(function(angles), dtype=float), angles.shape)


def _oracle(angles):
    """δ_orth of ½(Q₁ + Q₁R) for a rotation R by each angle about a fixed axis (an independent numerical oracle)."""
    Q1 = ortho_group.rvs(3, random_state=7)
    Q1 = Q1 * np.sign(np.linalg.det(Q1))
    axis = np.array([0.3, -1.0, 0.6]) / np.linalg.norm([0.3, -1.0, 0.6])
    return np.array(
        [orthogonality_deviation(0.5 * (Q1 + Q1 @ Rotation.from_rotvec(a * axis).as_matrix())) for a in angles]
    )


@test_case(points=1)
def test_keys(answer_10b_2):
    keys = {"delta", "angles", "numeric", "planar_max"}
    assert isinstance(answer_10b_2, dict) and keys <= set(answer_10b_2), (
        f"answer_10b_2 should be a dict with keys {sorted(keys)}"
    )


@test_case(points=2)
def test_closed_form(answer_10b_2):
    angles = np.linspace(0.1, np.pi, 12)
    values = _evaluate(answer_10b_2["delta"], angles)
    oracle = _oracle(angles)
    # Oracle: orthogonality_deviation of the mixture itself, for a rotation and an axis of the test's own choice.
    # A 3×3 Gram matrix rounds at ~1e-16, so 1e-12 separates a right formula from any wrong one.
    assert np.abs(values - oracle).max() < 1e-12, (
        "your 'delta' does not match δ_orth of ½(Q₁ + Q₂) (largest difference "
        f"{np.abs(values - oracle).max():.2e}); check μ = tr G / 3 and the denominator μ d"
    )


@test_case(points=1)
def test_numeric_check(answer_10b_2):
    angles = np.asarray(answer_10b_2["angles"], dtype=float).ravel()
    numeric = np.asarray(answer_10b_2["numeric"], dtype=float).ravel()
    assert angles.size >= 5 and numeric.shape == angles.shape, (
        "'angles' and 'numeric' should be arrays of the same length, at least 5 angles"
    )
    assert angles.min() > 0 and angles.max() <= np.pi + 1e-12, "the angles should lie in (0, π]"
    closed = (1 - np.cos(angles)) / (np.sqrt(6) * (2 + np.cos(angles)))
    # Oracle: the closed form; your numeric δ should be δ_orth of ½(Q₁ + Q₁R(φ)) with R(φ) a rotation by φ.
    assert np.abs(numeric - closed).max() < 1e-12, (
        f"'numeric' differs from the closed form by up to {np.abs(numeric - closed).max():.2e}; is Q₁ᵀQ₂ a rotation by "
        "exactly the angle in 'angles'?"
    )


@test_case(points=1)
def test_planar(answer_10b_2):
    planar = float(answer_10b_2["planar_max"])
    # In d = 2 the mixture is a scaled rotation, so δ_orth is rounding (~1e-16); 1e-12 leaves a wide margin.
    assert 0 <= planar < 1e-12, f"'planar_max' is {planar:.2e}: in d = 2 the mixture is a scaled rotation"
