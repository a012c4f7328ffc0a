"""Closed-form continuum scalars that used to return inf/nan or raise OverflowError for huge inputs.

Each test names its reproducer; the oracle is the closed form itself at ordinary inputs, and a pinned message
where the double range is left.
"""

import math

import numpy as np
import pytest

from workbench.continuum import diffusive_jump_rate, torus_lattice, varadhan_remainder


def test_jump_rate_outside_the_double_range_is_an_error_not_inf():
    # Reproducer: diffusive_jump_rate(1e308) returned inf.  Oracle at β = 2, m = 1: 4ħβ(β/π)^{1/2}.
    assert math.isclose(diffusive_jump_rate(2.0), 8.0 * math.sqrt(2.0 / math.pi), rel_tol=1e-15)
    with pytest.raises(ValueError, match=r"the jump rate is not finite in double precision for beta=1e\+308"):
        diffusive_jump_rate(1e308)


def test_varadhan_remainder_outside_the_double_range_is_an_error_not_nan():
    # Reproducer: varadhan_remainder(-1, 1, 1e308) returned nan (−∞ + ∞ inside the formula).
    with pytest.raises(ValueError, match=r"the Varadhan remainder is not finite .* t=1e\+308"):
        varadhan_remainder(-1.0, 1.0, 1e308)


def test_torus_lattice_with_an_overflowing_cell_or_too_many_nodes_is_refused():
    # Reproducer: torus_lattice(16, period=1e308) raised OverflowError from h**dim.
    with pytest.raises(ValueError, match=r"the cell volume \(period/n\)\^dim is not finite .* period=1e\+308"):
        torus_lattice(16, period=1e308)
    with pytest.raises(ValueError, match=r"a torus lattice of n\^dim = 100000\^3 nodes needs about .* GiB, more"):
        torus_lattice(10**5, dim=3)
    points, weights = torus_lattice(4, dim=2, period=2.0)  # oracle: the cell volume h² = (L/n)² exactly
    assert points.shape == (16, 2) and np.all(weights == 0.25)
