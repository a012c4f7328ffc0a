r"""Shared pieces of the manifold samplers: seeding, point checks and closed-form spectra.

Every sampler of :mod:`workbench.markov._samplers` and :mod:`workbench.markov._swiss_roll` seeds itself
the same way (``seed=None`` :math:`\to` :func:`numpy.random.default_rng`), checks points against its
ambient dimension, and lists Laplace--Beltrami eigenvalues by multiplicity: lattice sums
:math:`\sum_i w_i k_i^2` for flat tori and rectangles, spherical-harmonic multiplicities and the
Funk--Hecke eigenvalues of the Gauss kernel for spheres.  Package-internal helpers (public names of this
private module, not exported by :mod:`workbench.markov`).

References
----------
I. Chavel, *Eigenvalues in Riemannian Geometry*, Academic Press (1984), §II.2--II.4 (spectra of
spheres, flat tori, rectangles).
K. Atkinson and W. Han, *Spherical Harmonics and Approximations on the Unit Sphere*, Springer LNM
2044 (2012), §2.1 (dimension of the spaces of spherical harmonics) and §2.5 (Funk--Hecke formula).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.special

from workbench.validation import as_array

__all__ = []  # package-internal helpers only


def generator(seed) -> np.random.Generator:
    """``seed=None`` -> fresh entropy; an int or SeedSequence -> seeded; a Generator -> itself."""
    try:
        return np.random.default_rng(seed)
    except TypeError as exc:
        raise TypeError(f"seed must be None, an int or a numpy Generator, got {type(seed).__name__}") from exc
    except ValueError as exc:  # a negative integer
        raise ValueError(f"seed must be a nonnegative integer, got {seed!r}") from exc


def check_points(points, ambient_dimension: int, manifold: str) -> np.ndarray:
    points = np.asarray(as_array("points", points, ndim=2))
    if points.shape[1] != ambient_dimension:
        raise ValueError(
            f"points must have {ambient_dimension} columns (the ambient dimension of {manifold}), "
            f"got shape {points.shape}"
        )
    return points


def lowest_lattice_values(weights, count: int, *, signed: bool) -> np.ndarray:
    r"""The ``count`` smallest values of :math:`\sum_i w_i k_i^2` over a lattice, with multiplicity.

    ``k`` runs over :math:`\mathbb Z^d` (``signed``: periodic directions) or :math:`\mathbb N^d`
    (Neumann directions).  Every lattice point with value :math:`\le B` has
    :math:`|k_i| \le \sqrt{B/w_i}`, so enumerating that box and keeping the values :math:`\le B` is
    exact; :math:`B` doubles until at least ``count`` values are found (so the box is at most
    :math:`2^{d/2}` times larger than needed).
    """
    weights = np.asarray(weights, dtype=float)
    bound = float(weights.min())
    while True:
        axes = []
        for w in weights:
            m = math.isqrt(int(bound / w)) + 1  # +1: no lattice point at the boundary lost to rounding
            k = np.arange(-m, m + 1) if signed else np.arange(0, m + 1)
            axes.append(w * k.astype(float) ** 2)
        values = functools.reduce(np.add.outer, axes).ravel()
        values = values[values <= bound]
        if values.size >= count:
            return np.sort(values)[:count]
        bound *= 2.0


def repeat_by_multiplicity(value, multiplicity, count: int) -> np.ndarray:
    """``value(l)`` repeated ``multiplicity(l)`` times for l = 0, 1, ..., truncated to ``count``."""
    out: list[float] = []
    degree = 0
    while len(out) < count:
        out.extend([value(degree)] * multiplicity(degree))
        degree += 1
    return np.asarray(out[:count], dtype=float)


def harmonic_multiplicity(dim: int, degree: int) -> int:
    r"""Dimension of the degree-:math:`l` spherical harmonics on :math:`S^d \subset \mathbb R^{d+1}`.

    :math:`N(d, l) = \binom{l+d}{d} - \binom{l+d-2}{d}`: harmonic polynomials of degree :math:`l`
    in :math:`d+1` variables are the kernel of the (onto) Laplacian from degree :math:`l` to
    :math:`l-2` (Atkinson--Han (2.10)).
    """
    if degree == 0:
        return 1
    return math.comb(degree + dim, dim) - math.comb(degree + dim - 2, dim)


def gauss_kernel_sphere_eigenvalues(beta: float, radius: float, dim: int, count: int) -> np.ndarray:
    r"""Funk--Hecke eigenvalues :math:`\mu_l = I_{l+\nu}(2\beta r^2)/I_\nu(2\beta r^2)`, :math:`\nu=(d-1)/2`.

    ``ive`` (the scaled Bessel function :math:`e^{-x}I_\nu(x)`) keeps numerator and denominator
    finite for any :math:`\beta r^2`; the common factor :math:`e^{-x}` cancels in the ratio.
    """
    x = 2.0 * beta * radius**2
    nu = 0.5 * (dim - 1)
    base = scipy.special.ive(nu, x)
    return repeat_by_multiplicity(
        lambda degree: float(scipy.special.ive(degree + nu, x) / base),
        lambda degree: harmonic_multiplicity(dim, degree),
        count,
    )
