import numpy as np
import pytest
import scipy.special
from conftest import HAS_TORCH
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from workbench.backend import to_backend, to_numpy
from workbench.markov import (
    dirichlet_form,
    gauss_kernel,
    markov_operator,
    markov_semigroup,
    reversible_stationary_law,
    softmax_operator,
    squared_distances,
)


def test_gauss_kernel_matches_explicit_double_loop(rng, backend):
    # Oracle: the definition exp(-β‖x_i − x_j‖²) evaluated entry by entry; rounding only.
    x = rng.standard_normal((7, 3))
    beta = 0.8
    expected = np.array([[np.exp(-beta * np.sum((a - b) ** 2)) for b in x] for a in x])
    got = to_numpy(gauss_kernel(to_backend(x, backend), beta))
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    np.testing.assert_array_equal(np.diag(got), 1.0)


def test_squared_distances_batched_equals_loop(rng):
    stack = rng.standard_normal((3, 5, 2))
    np.testing.assert_array_equal(squared_distances(stack), np.stack([squared_distances(x) for x in stack]))


def test_squared_distances_of_nearby_points_do_not_cancel():
    # The Gram expansion would return ~1e-7 noise here (|x|² ≈ 1e8); differences are exact.
    x = np.array([[1e4, 0.0], [1e4 + 1e-6, 0.0]])
    np.testing.assert_allclose(squared_distances(x)[0, 1], 1e-12, rtol=1e-6)


def test_gauss_kernel_rejects_bad_input():
    with pytest.raises(ValueError, match=r"beta must be in \(0, inf\), got -1.0"):
        gauss_kernel(np.ones((3, 2)), -1.0)
    with pytest.raises(ValueError, match=r"points must have at least 2 dimensions, got shape \(3,\)"):
        gauss_kernel(np.ones(3), 1.0)
    with pytest.raises(ValueError, match=r"points must be finite, got 1 non-finite entry"):
        gauss_kernel(np.array([[0.0, np.nan], [1.0, 1.0]]), 1.0)


def test_markov_operator_is_row_stochastic_and_batched(rng, backend):
    k = rng.random((4, 6, 6))
    p = to_numpy(markov_operator(to_backend(k, backend)))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(p, np.stack([markov_operator(a) for a in k]), rtol=1e-15)


def test_markov_operator_rejects_bad_kernels():
    with pytest.raises(
        ValueError, match=r"kernel must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)"
    ):
        markov_operator(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"kernel must be entrywise nonnegative, got minimum -1 at index \(1, 0\)"):
        markov_operator(np.array([[1.0, 0.0], [-1.0, 1.0]]))
    with pytest.raises(ValueError, match=r"kernel must have positive row sums .* got a row summing to 0"):
        markov_operator(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"kernel must be finite"):
        markov_operator(np.array([[1.0, np.inf], [0.0, 1.0]]))


def test_softmax_operator_matches_scipy(rng, backend):
    # Oracle: scipy.special.softmax (an independent implementation).
    s = 30 * rng.standard_normal((5, 8))  # large scores: the max shift must prevent overflow
    got = to_numpy(softmax_operator(to_backend(s, backend), beta=2.0))
    np.testing.assert_allclose(got, scipy.special.softmax(2.0 * s, axis=-1), rtol=1e-13, atol=1e-300)


def test_softmax_operator_rejects_negative_beta():
    with pytest.raises(ValueError, match=r"beta must be in \[0, inf\), got -0.5"):
        softmax_operator(np.ones((2, 2)), -0.5)


def test_reversible_stationary_law_is_stationary_and_reversible(rng, backend):
    x = rng.standard_normal((9, 2))
    k = gauss_kernel(to_backend(x, backend), 1.0)
    pi = to_numpy(reversible_stationary_law(k))
    p = to_numpy(markov_operator(k))
    np.testing.assert_allclose(pi @ p, pi, rtol=1e-14)  # oracle: stationarity πᵀP = πᵀ
    flux = pi[:, None] * p
    np.testing.assert_allclose(flux, flux.T, rtol=1e-14)  # detailed balance


def test_reversible_stationary_law_needs_symmetry():
    with pytest.raises(ValueError, match=r"kernel must be symmetric"):
        reversible_stationary_law(np.array([[1.0, 2.0], [1.0, 1.0]]))


def test_dirichlet_form_small_closed_form():
    # Two vertices joined by weight w: ℰ(f,f) = ½·2·w(f₀−f₁)² = w(f₀ − f₁)².
    assert float(dirichlet_form(np.array([[5.0, 3.0], [3.0, 7.0]]), np.array([1.0, -1.0]))) == 12.0


def test_dirichlet_form_polarisation(rng):
    # Bilinear form: ℰ(f,g) = ¼[ℰ(f+g) − ℰ(f−g)] (polarisation identity), to rounding.
    k = gauss_kernel(rng.standard_normal((10, 2)), 0.5)
    f, g = rng.standard_normal(10), rng.standard_normal(10)
    polar = (dirichlet_form(k, f + g) - dirichlet_form(k, f - g)) / 4
    np.testing.assert_allclose(dirichlet_form(k, f, g), polar, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    points=arrays(np.float64, (6, 2), elements=st.floats(-3, 3)),
    f=arrays(np.float64, (6,), elements=st.floats(-10, 10)),
    beta=st.floats(0.01, 5.0),
)
def test_dirichlet_form_equals_quadratic_form(points, f, beta):
    # Law: ½ΣK(f_i−f_j)² = Σ p_i f_i ((I − P)f)_i ≥ 0 for every symmetric kernel.
    k = gauss_kernel(points, beta)
    p = k.sum(axis=1)
    quadratic = float(np.sum(p * f * (f - markov_operator(k) @ f)))
    edge = float(dirichlet_form(k, f))
    assert edge >= 0.0
    assert abs(edge - quadratic) <= 1e-9 * (1.0 + abs(edge) + float(np.sum(p * f * f)))


def test_dirichlet_form_rejects_bad_input():
    k = np.ones((3, 3))
    with pytest.raises(ValueError, match=r"kernel rows and f must have matching sizes, got 3 and 2"):
        dirichlet_form(k, np.ones(2))
    with pytest.raises(ValueError, match=r"f and g must have matching sizes, got 3 and 4"):
        dirichlet_form(k, np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match=r"f must be finite"):
        dirichlet_form(k, np.array([0.0, np.nan, 1.0]))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_dirichlet_form_rejects_mixed_libraries():
    import torch

    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        dirichlet_form(np.ones((2, 2)), torch.ones(2, dtype=torch.float64))


def test_markov_semigroup_is_stochastic_and_a_semigroup(rng, backend):
    rates = rng.exponential(size=(5, 5)) * (1 - np.eye(5))
    q = rates - np.diag(rates.sum(axis=1))
    qb = to_backend(q, backend)
    p1, p2, p3 = (to_numpy(markov_semigroup(qb, t)) for t in (0.4, 0.6, 1.0))
    np.testing.assert_allclose(p3.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert p3.min() >= 0.0
    np.testing.assert_allclose(p1 @ p2, p3, rtol=1e-13)  # oracle: P_s P_t = P_{s+t}


def test_markov_semigroup_rejects_non_generators():
    with pytest.raises(
        ValueError,
        match=r"generator must be a Markov generator with nonnegative off-diagonal entries, got generator\[0, 1\] = -1",
    ):
        markov_semigroup(np.array([[1.0, -1.0], [-1.0, 1.0]]))
    with pytest.raises(
        ValueError, match=r"generator must be a Markov generator with rows summing to 0, got row 0 summing to 1"
    ):
        markov_semigroup(np.array([[0.0, 1.0], [1.0, -1.0]]))
    with pytest.raises(ValueError, match=r"t must be in \[0, inf\), got -1.0"):
        markov_semigroup(np.array([[-1.0, 1.0], [1.0, -1.0]]), t=-1.0)
    with pytest.raises(ValueError, match=r"generator must be a square matrix"):
        markov_semigroup(np.ones((2, 3)))


def test_semigroup_refuses_times_past_its_accuracy():
    # Past t * max|L| = 1e8 scaling and squaring loses accuracy (row sums off by 6e-5 at 1e12, NaN by 1e50):
    # a refusal naming t, never a silently wrong or NaN matrix.
    q = np.array([[-1.0, 1.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, -2.0]])
    with pytest.raises(ValueError, match=r"t must satisfy t \* max\|generator\| <= 1e\+08 .* got t=1e\+50"):
        markov_semigroup(q, t=1e50)
    # At the limit itself the answer is the stationary law (oracle: π ∝ (2, 4, 1) solves πL = 0 by hand);
    # tolerance 1e-6, far above the ~1e-8 accumulated rounding of 27 squarings.
    p = to_numpy(markov_semigroup(q, t=5e7))
    assert np.max(np.abs(p - np.array([2.0, 4.0, 1.0]) / 7.0)) < 1e-6
