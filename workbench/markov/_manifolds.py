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

from workbench.memory import check_memory
from workbench.validation import as_array, as_scalar, check_integer

__all__ = []  # package-internal helpers only


def generator(seed) -> np.random.Generator:
    """``seed=None`` -> fresh entropy; an int or SeedSequence -> seeded; a Generator -> itself."""
    try:
        return np.random.default_rng(as_scalar(seed) if isinstance(seed, np.ndarray) else seed)
    except TypeError as exc:
        raise TypeError(f"seed must be None, an int or a numpy Generator, got {type(seed).__name__}") from exc
    except ValueError as exc:  # a negative integer
        raise ValueError(f"seed must be a nonnegative integer, got {seed!r}") from exc


def check_sample_size(n, columns: int) -> int:
    """``n`` as an int >= 1 whose ``[n, columns]`` draw (and its few working copies) fits in memory."""
    n = check_integer("n", n, 1)
    check_memory(f"n = {n} samples of {columns} coordinates", 8.0 * n * (columns + 4))
    return n


def check_count(count, dim: int = 1) -> int:
    r"""``count`` as an int >= 1 whose list of eigenvalues fits in memory.

    The estimate covers the lattice box of :func:`lowest_lattice_values` in ``dim`` directions: at most
    :math:`2^{d/2}` times the needed values, in a box :math:`2^d/V_d` times the ball (:math:`V_d` the volume of
    the unit ball), two float64 copies of it.
    """
    count = check_integer("count", count, 1)
    ball = math.pi ** (dim / 2) / math.gamma(dim / 2 + 1)
    check_memory(f"count = {count} eigenvalues", 16.0 * count * 2.0 ** (1.5 * dim) / ball + 8.0 * count)
    return count


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


def harmonic_degrees(dim: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Degrees :math:`l = 0, 1, \dots, L` and multiplicities :math:`N(d, l)` with :math:`\sum_l N(d, l) \ge` ``count``.

    For :math:`d = 1` (:math:`N = 1, 2, 2, \dots`) in closed form; for :math:`d \ge 2` degree by degree, which
    stops after :math:`O(\text{count}^{1/d})` degrees.
    """
    if dim == 1:
        degrees = np.arange(count // 2 + 1)
        return degrees, np.where(degrees == 0, 1, 2)
    multiplicities: list[int] = []
    total = 0
    while total < count:
        multiplicities.append(harmonic_multiplicity(dim, len(multiplicities)))
        total += multiplicities[-1]
    return np.arange(len(multiplicities)), np.asarray(multiplicities)


def repeat_by_multiplicity(values: np.ndarray, multiplicities: np.ndarray, count: int) -> np.ndarray:
    """``values[l]`` repeated ``multiplicities[l]`` times for l = 0, 1, ..., truncated to ``count``."""
    return np.repeat(np.asarray(values, dtype=float), multiplicities)[:count]


def harmonic_multiplicity(dim: int, degree: int) -> int:
    r"""Dimension of the degree-:math:`l` spherical harmonics on :math:`S^d \subset \mathbb R^{d+1}`.

    :math:`N(d, l) = \binom{l+d}{d} - \binom{l+d-2}{d}`: harmonic polynomials of degree :math:`l`
    in :math:`d+1` variables are the kernel of the (onto) Laplacian from degree :math:`l` to
    :math:`l-2` (Atkinson--Han (2.10)).
    """
    if degree == 0:
        return 1
    return math.comb(degree + dim, dim) - math.comb(degree + dim - 2, dim)


#: Arguments from which ``scipy.special.ive`` is replaced by the Hankel expansion: ive returns NaN beyond
#: about :math:`2^{31}` (the AMOS routines' integer range), and at :math:`10^9` the expansion already
#: converges to rounding for every order it is used at (:data:`HANKEL_TERMS` terms).
HANKEL_FROM = 1e9
#: Arguments below which the leading power :math:`(x/2)^\nu/\Gamma(\nu+1)` is used: its relative error
#: :math:`(x/2)^2/(\nu+1) < 2.5\times10^{-17}` is below rounding.
SERIES_BELOW = 1e-8
#: Most terms of the Hankel expansion summed before it is declared out of reach.
HANKEL_TERMS = 60


def _hankel_scaled_bessel(orders: np.ndarray, x: float) -> np.ndarray | None:
    r"""The scaled Bessel function :math:`\sqrt{2\pi x}\,e^{-x}I_\nu(x)` at large :math:`x`, for each order.

    The large-argument expansion (DLMF 10.40.1)
    :math:`\sqrt{2\pi x}\,e^{-x}I_\nu(x) \sim \sum_k (-1)^k a_k(\nu) x^{-k}` with
    :math:`a_k = \prod_{j\le k}(4\nu^2 - (2j-1)^2)/(k!\,8^k)`; its :math:`e^{-2x}` companion is zero in double
    precision for :math:`x \ge 10^9`.  Each term is the one before times :math:`(4\nu^2-(2k-1)^2)/(8kx)`, of
    size about :math:`\nu^2/(2kx) \le 1/(2k)` while :math:`\nu^2 \le x` (the :math:`(2k-1)^2/(8kx)` part is
    below :math:`10^{-7}` for :math:`k \le 60`): no term exceeds the sum by much, so no digit cancels.  ``None``
    for larger orders, or when the terms have not fallen below rounding after :data:`HANKEL_TERMS` of them.
    """
    if float(np.max(orders)) ** 2 > x:
        return None
    four_nu2 = 4.0 * orders * orders
    term = np.ones_like(orders)
    total = np.ones_like(orders)
    for k in range(1, HANKEL_TERMS + 1):
        term = -term * (four_nu2 - (2 * k - 1) ** 2) / (8.0 * k * x)
        total = total + term
        if np.all(np.abs(term) <= 1e-17 * np.abs(total)):
            return total
    return None


def gauss_kernel_sphere_eigenvalues(beta: float, radius: float, dim: int, count: int) -> np.ndarray:
    r"""Funk--Hecke eigenvalues :math:`\mu_l = I_{l+\nu}(2\beta r^2)/I_\nu(2\beta r^2)`, :math:`\nu=(d-1)/2`.

    ``ive`` (the scaled Bessel function :math:`e^{-x}I_\nu(x)`) keeps numerator and denominator
    finite for moderate :math:`x = 2\beta r^2`; the common factor :math:`e^{-x}` cancels in the ratio.  For
    :math:`x \ge` :data:`HANKEL_FROM` (where ive fails) the ratio of Hankel expansions is used, which also
    gives the limit :math:`\mu_l = 1` when :math:`x` overflows; for :math:`x <` :data:`SERIES_BELOW` the
    ratio of leading powers, :math:`\mu_l = (x/2)^l\,\Gamma(\nu+1)/\Gamma(\nu+l+1)`.

    Raises
    ------
    ValueError
        Naming ``beta``, when :math:`I_\nu(x)` underflows (very high dimension at small :math:`x`) or the
        Hankel expansion does not converge (degrees comparable with :math:`\sqrt x`).
    """
    x = 2.0 * beta * radius * radius
    nu = 0.5 * (dim - 1)
    degrees, multiplicities = harmonic_degrees(dim, count)
    orders = degrees + nu
    if x >= HANKEL_FROM:
        scaled = _hankel_scaled_bessel(orders.astype(float), x)
        if scaled is None:
            raise ValueError(
                f"beta = {beta!r} (2·beta·radius² = {x:.3g}): the Funk–Hecke eigenvalues up to degree "
                f"{int(degrees[-1])} are out of reach of the large-argument expansion; ask for fewer (count)"
            )
        mu = scaled / scaled[0]
    elif x < SERIES_BELOW:
        # μ_l = Π_{j=1}^{l} (x/2)/(ν + j): one rounding per factor (an exp of log-gammas would lose l·log(2/x) ulps)
        mu = np.cumprod(np.concatenate([[1.0], 0.5 * x / (nu + degrees[1:])]))
    else:
        base = scipy.special.ive(nu, x)
        if not base > 1e-290:  # subnormal or zero: the ratio would lose every digit
            raise ValueError(
                f"beta = {beta!r} is too small for S^{dim}: I_nu(2·beta·radius²) underflows at nu = {nu:g}; "
                "increase beta"
            )
        mu = scipy.special.ive(orders, x) / base
    return repeat_by_multiplicity(mu, multiplicities, count)
