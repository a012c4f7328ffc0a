"""Honest defaults of ``MarkovOperator.from_points`` (issue 35, item 8).

The defaults (dense kernel, median-rule scale) stay as they are, since the DMAE convention and the checks built
on it rely on them.  When the dense kernel is so wide that its walk sees the ambient space, ``from_points`` says so
with a :class:`DegenerateBandwidthWarning` that names the measured kernel mass and the remedy.  A dense kernel
past the memory budget is refused with the same advice.
"""

import warnings

import numpy as np
import pytest
from scipy.special import i0e
from scipy.stats import spearmanr

from workbench.backend import to_backend
from workbench.markov import DegenerateBandwidthWarning, MarkovOperator, SwissRoll
from workbench.markov._bandwidth import DEGENERATE_KERNEL_MASS, DEGENERATE_MIN_POINTS
from workbench.memory import memory_limit


def circle(n):
    theta = 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(theta), np.sin(theta)])


def silent_from_points(*args, **kwargs):
    """``from_points`` with every warning turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return MarkovOperator.from_points(*args, **kwargs)


def test_the_default_kernel_on_a_swiss_roll_warns_and_k15_unrolls_it():
    # Oracle: the arc length s of the generating parameter (SwissRoll.intrinsic_coordinates), the coordinate a
    # diffusion map should recover.  The first non-trivial eigenvector of a walk that sees the manifold is
    # monotone in s up to the few points at its ends (Spearman's rank correlation 0.999-1.000 on five seeds at
    # n = 1000, hence the bound 0.99); the median-rule kernel reaches 0.30-0.43 on the same seeds (bound 0.6).
    roll = SwissRoll()
    points = roll.sample(1000, seed=0)
    arc_length = roll.intrinsic_coordinates(points)[:, 0]
    message = (
        r"^degenerate bandwidth: a typical point's kernel mass Σ_j K_ij covers \d+% of the n = 1000 points .*"
        r"the walk sees ambient distances.* \(the median rule, the dense default\); pass k=15 .*or a larger beta"
    )
    with pytest.warns(DegenerateBandwidthWarning, match=message):
        dense = MarkovOperator.from_points(points)
    assert abs(spearmanr(dense.spectrum(2).vectors[:, 1], arc_length)[0]) < 0.6
    knn = silent_from_points(points, k=15)
    assert abs(spearmanr(knn.spectrum(2).vectors[:, 1], arc_length)[0]) >= 0.99


@pytest.mark.parametrize("zero_diagonal", [False, True], ids=["self-loops", "no-self-loops"])
@pytest.mark.parametrize("beta", [0.5, 25.0])
def test_the_warning_reports_the_kernel_mass_of_the_circle(backend, beta, zero_diagonal):
    # Oracle: on n equally spaced points of the unit circle every row's kernel mass is the trapezoid sum of
    # e^{-β|x-y|²} = e^{-2β(1 - cos θ)}, i.e. n e^{-2β} I₀(2β) to spectral accuracy (a periodic analytic integrand):
    # 0.466 n at β = 0.5 (the median rule's scale on the circle: median |x-y|² = 2) and 0.057 n at β = 25 (the
    # widest kernel of the Laplace-Beltrami rate check, derivations/markov_spectra.py).  The message rounds to a
    # percent, so it must read 47%, with or without the self-weight; the well-posed kernel must not warn at all.
    points = to_backend(circle(600), backend)
    fraction = float(i0e(2 * beta))
    if fraction > DEGENERATE_KERNEL_MASS:
        message = rf"covers {fraction:.0%} of the n = 600 points .* at beta = 0.5 \(as given\)"
        with pytest.warns(DegenerateBandwidthWarning, match=message):
            MarkovOperator.from_points(points, beta, zero_diagonal=zero_diagonal)
        assert f"{fraction:.0%}" == "47%"
    else:
        silent_from_points(points, beta, alpha=1.0, zero_diagonal=zero_diagonal)


def test_samples_below_the_floor_do_not_warn(rng):
    # Below DEGENERATE_MIN_POINTS the k=15 remedy does not resolve a Swiss roll either, so a wide kernel is not
    # reported: 499 points of the circle at the median-rule scale are silent, 500 warn.  The 80-point Gaussian
    # blob is the default-scale case of tests/test_markov_operator.py, which must stay silent.
    assert DEGENERATE_MIN_POINTS == 500
    silent_from_points(circle(499), 0.5)
    with pytest.warns(DegenerateBandwidthWarning, match=r"of the n = 500 points"):
        MarkovOperator.from_points(circle(500), 0.5)
    silent_from_points(rng.standard_normal((80, 2)))


def test_sparse_kernels_are_not_diagnosed():
    # The kNN default scale is self-tuned (K ≈ e^{-1} at the k-th neighbour), and a radius is an explicit
    # locality: neither is the dense median rule the warning is about.
    points = SwissRoll().sample(600, seed=1)
    silent_from_points(points, k=15)
    silent_from_points(points, radius=5.0)


def test_a_dense_kernel_past_the_memory_budget_is_refused_naming_k():
    # 3 n² doubles (K, P and one temporary) = 8.6 MB for n = 600: over a 1 MiB budget, refused before allocating.
    with (
        memory_limit("1MiB"),
        pytest.raises(
            ValueError,
            match=r"^the dense Gauss kernel of from_points \(n = 600\) needs about 0\.008 GiB, more than the budget "
            r"of 0\.000977 GiB \(set by memory_limit\); pass k \(e\.g\. k=15",
        ),
    ):
        MarkovOperator.from_points(circle(600), 25.0)


def test_the_default_scale_is_the_same_from_run_to_run_above_the_subsample_size():
    # Above 2,000 points the median rule is estimated on a subsample; from_points draws it with a fixed seed, so two
    # operators of the same points are the same operator (exactly: same β, same arithmetic).
    points = SwissRoll().sample(2500, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateBandwidthWarning)
        first, second = MarkovOperator.from_points(points), MarkovOperator.from_points(points)
    assert np.array_equal(first.P, second.P)
