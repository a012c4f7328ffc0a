"""Tests of exercise 10d.2: the loop reading as √(2 − 2τ), and its closed form on the twisted ring."""

import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "10d.2"
points = 4

# Oracle for the encoder: the layer means of the reading, as diagnose(load_minilm(), "The cat sat on the warm mat.")
# reports them (recorded; see the tests of 10d.1).
REFERENCE = np.array(
    [1.406620037677693, 1.4047164254117737, 1.407996713346658, 1.3988164853467469, 1.416282914062186, 1.401848626080868]
)


def _rotation_reading(theta):
    """‖R/s − I‖_F/√2 for the 2×2 rotation R(θ), s = ‖R‖_F/√2, computed with numpy."""
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, -s], [s, c]])
    scale = np.linalg.norm(R) / np.sqrt(2)
    return np.linalg.norm(R / scale - np.eye(2)) / np.sqrt(2)


@test_case(points=1)
def test_keys(answer_10d_2):
    assert isinstance(answer_10d_2, dict), "answer_10d_2 should be a dict"
    missing = {"tau", "reading", "thetas", "ring", "closed_form"} - set(answer_10d_2)
    assert not missing, f"answer_10d_2 lacks the key(s) {sorted(missing)}"
    assert callable(answer_10d_2["closed_form"]), "answer_10d_2['closed_form'] should be a function of θ"


@test_case(points=1)
def test_identity_on_the_encoder(answer_10d_2):
    tau, reading = np.asarray(answer_10d_2["tau"], float), np.asarray(answer_10d_2["reading"], float)
    assert tau.shape == reading.shape == (6, 6), "tau and reading should be 6×6: layers × triangles, as in 10d.1"
    assert np.allclose(reading.mean(axis=1), REFERENCE, rtol=0, atol=1e-8), (
        "the readings are not those of 10d.1 (their layer means differ from diagnose's loop_inconsistency)"
    )
    # an identity between O(1) numbers: rounding only; 1e-10 leaves room for the order of summation
    gap = np.abs(np.sqrt(2 - 2 * tau) - reading).max()
    assert gap < 1e-10, (
        f"√(2 − 2τ) misses the reading by {gap:.1e}: τ = tr Hol / (√D ‖Hol‖_F), with the Frobenius norm of the "
        "holonomy and D = 384"
    )
    assert np.abs(tau).max() < 0.05, "on the encoder |τ| stays below 0.05"


@test_case(points=1)
def test_ring_readings(answer_10d_2):
    thetas, ring = np.asarray(answer_10d_2["thetas"], float), np.asarray(answer_10d_2["ring"], float)
    assert thetas.ndim == 1 and thetas.size >= 3 and ring.shape == thetas.shape, (
        "thetas and ring should be 1-D arrays of the same length (at least three angles)"
    )
    expected = np.array([_rotation_reading(t) for t in thetas])
    # products of six 2×2 rotations: rounding ~1e-16 per factor
    assert np.allclose(ring, expected, rtol=0, atol=1e-12), "the ring readings are not those of cycle_connection(6, θ)"


@test_case(points=1)
def test_closed_form(answer_10d_2):
    grid = np.linspace(-6.0, 6.0, 49)  # both signs, and angles beyond π
    expected = np.array([_rotation_reading(t) for t in grid])
    got = np.asarray(answer_10d_2["closed_form"](grid), float)
    assert got.shape == grid.shape, "closed_form should accept a numpy array of angles and return one value each"
    bad = np.abs(got - expected) > 1e-12
    assert not bad.any(), (
        f"closed_form(θ) is wrong at θ = {grid[bad][:3]}: it gives {got[bad][:3]}, the rotation R(θ) reads "
        f"{expected[bad][:3]} (mind the sign of θ and the factor ½ inside the sine)"
    )
