r"""Samplers of manifolds with known geometry: the oracles for continuum limits.

This module holds the circle, the round sphere, the flat torus and the interval; the Swiss roll is
in :mod:`workbench.markov._swiss_roll` and the shared seeding and spectrum helpers in
:mod:`workbench.markov._manifolds`.

Each sampler is a small frozen dataclass describing a compact Riemannian manifold :math:`M`
embedded in :math:`\mathbb R^D`, with

* ``sample(n, seed=None)`` -- ``n`` independent points, row vectors, ``shape=[n, D]``;
* ``intrinsic_dimension`` -- :math:`d = \dim M`;
* ``spectrum(count)`` -- the lowest ``count`` eigenvalues of the *positive* Laplace--Beltrami
  operator :math:`-\Delta` (Neumann conditions where :math:`M` has a boundary), repeated by
  multiplicity, ascending, from closed forms;
* ``density(points)`` -- the sampling density with respect to the Riemannian volume
  :math:`dV`, so that :math:`\int_M \rho\,dV = 1`.

For the uniform circle and the uniform sphere, ``kernel_spectrum(beta, count)`` gives the exact
eigenvalues of the continuum Markov operator of the Gauss kernel
:math:`K(x,y) = \exp(-\beta\lVert x-y\rVert^2)` (Funk--Hecke).  Together with
:math:`4\beta(I - \mathsf P_\beta) \to -\Delta` (book/reference.md §A.4, positive generator
:math:`\mathsf L = I - \mathsf P`), these are the rate oracles for discrete diffusion on samples.

Randomness follows ``seed=None`` :math:`\to` :func:`numpy.random.default_rng`; a
:class:`numpy.random.Generator` is used as given.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2 and Figure 1 (Swiss roll);
book/reference.md §A.2--A.4.
I. Chavel, *Eigenvalues in Riemannian Geometry*, Academic Press (1984), §II.2--II.4 (spectra of
spheres, flat tori, rectangles).
K. Atkinson and W. Han, *Spherical Harmonics and Approximations on the Unit Sphere*, Springer LNM
2044 (2012), §2.1 (dimension of the spaces of spherical harmonics) and §2.5 (Funk--Hecke formula).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.markov._manifolds import (
    check_count,
    check_points,
    check_sample_size,
    gauss_kernel_sphere_eigenvalues,
    generator,
    harmonic_degrees,
    lowest_lattice_values,
    repeat_by_multiplicity,
)
from workbench.validation import check_in_range, check_integer

__all__ = ["Circle", "FlatTorus", "Interval", "Sphere"]


# --------------------------------------------------------------------------------------------
# the manifolds


@dataclass(frozen=True)
class Circle:
    r"""The circle of radius :math:`r` in :math:`\mathbb R^2`, angle density :math:`\propto 1 + a\cos\theta`.

    Points are :math:`x = r(\cos\theta, \sin\theta)` with :math:`\theta` drawn from

    .. math::

        p(\theta) = \frac{1 + a\cos\theta}{2\pi}, \qquad |a| < 1,
        \qquad F(\theta) = \frac{\theta + a\sin\theta}{2\pi} \quad (0 \le \theta < 2\pi),

    sampled exactly by rejection from the uniform law (acceptance :math:`1/(1+|a|)`).  ``a = 0``
    is the uniform circle.  The spectrum of :math:`-\Delta` is :math:`(k/r)^2`, :math:`k \ge 0`,
    with multiplicity 2 for :math:`k \ge 1` (:math:`\cos k\theta`, :math:`\sin k\theta`).

    Parameters
    ----------
    radius : float
        :math:`r > 0`.
    density_amplitude : float
        :math:`a \in (-1, 1)`.

    References
    ----------
    Chavel (1984) §II.2; book/reference.md §A.2.

    Examples
    --------
    >>> import numpy as np
    >>> circle = Circle(radius=2.0)
    >>> x = circle.sample(5, seed=0)
    >>> np.allclose(np.hypot(x[:, 0], x[:, 1]), 2.0)
    True
    >>> circle.spectrum(5).tolist()  # (k/r)^2: 0, 1/4, 1/4, 1, 1
    [0.0, 0.25, 0.25, 1.0, 1.0]
    """

    radius: float = 1.0
    density_amplitude: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "radius", check_in_range("radius", self.radius, 0.0, low_inclusive=False))
        amplitude = check_in_range(
            "density_amplitude", self.density_amplitude, -1.0, 1.0, low_inclusive=False, high_inclusive=False
        )
        object.__setattr__(self, "density_amplitude", amplitude)

    intrinsic_dimension = 1
    ambient_dimension = 2

    @property
    def volume(self) -> float:
        r"""Length :math:`2\pi r`."""
        return 2.0 * math.pi * self.radius

    def sample_angles(self, n: int, seed=None) -> np.ndarray:
        r"""``n`` angles :math:`\theta \in [0, 2\pi)` with density :math:`(1 + a\cos\theta)/2\pi`.

        Rejection: propose :math:`\theta \sim U[0, 2\pi)`, accept with probability
        :math:`(1 + a\cos\theta)/(1 + |a|)`; the first ``n`` accepted proposals are exact draws.
        """
        n = check_sample_size(n, 2)
        rng = generator(seed)
        a = self.density_amplitude
        if a == 0.0:
            return rng.uniform(0.0, 2.0 * math.pi, size=n)
        accepted = np.empty(0)
        while accepted.size < n:
            batch = int(1.2 * (n - accepted.size) * (1.0 + abs(a))) + 16
            theta = rng.uniform(0.0, 2.0 * math.pi, size=batch)
            keep = rng.uniform(0.0, 1.0 + abs(a), size=batch) < 1.0 + a * np.cos(theta)
            accepted = np.concatenate([accepted, theta[keep]])
        return accepted[:n]

    def sample(self, n: int, seed=None) -> np.ndarray:
        r"""``n`` points :math:`r(\cos\theta_i, \sin\theta_i)`, ``shape=[n, 2]``."""
        theta = self.sample_angles(n, seed)
        return self.radius * np.column_stack([np.cos(theta), np.sin(theta)])

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` eigenvalues of :math:`-\Delta`: :math:`(k/r)^2`, multiplicity 2 for :math:`k \ge 1`."""
        count = check_count(count)
        degrees, multiplicities = harmonic_degrees(1, count)
        return repeat_by_multiplicity((degrees / self.radius) ** 2, multiplicities, count)

    def density(self, points) -> np.ndarray:
        r"""Density w.r.t. arc length, :math:`\rho = (1 + a\cos\theta)/(2\pi r)`, at the angle of each point."""
        points = check_points(points, 2, "Circle")
        theta = np.arctan2(points[:, 1], points[:, 0])
        return (1.0 + self.density_amplitude * np.cos(theta)) / self.volume

    def kernel_spectrum(self, beta: float, count: int) -> np.ndarray:
        r"""Exact eigenvalues of the continuum Gauss-kernel Markov operator on the uniform circle.

        For :math:`K(x,y) = \exp(-\beta\lVert x-y\rVert^2)` and
        :math:`(\mathsf P_\beta f)(x) = \int K(x,y)f(y)\,d\sigma(y) / \int K(x,y)\,d\sigma(y)`,
        the Fourier modes :math:`e^{\pm ik\theta}` are eigenfunctions with

        .. math::

            \mu_k = \frac{I_k(2\beta r^2)}{I_0(2\beta r^2)}, \qquad
            4\beta(1 - \mu_k) = \frac{k^2}{r^2} + O(\beta^{-1}),

        since :math:`\lVert x-y\rVert^2 = 2r^2(1 - \cos(\theta-\phi))` and
        :math:`\frac1{2\pi}\int_0^{2\pi} e^{c\cos\theta}\cos k\theta\,d\theta = I_k(c)`.
        Repeated by multiplicity, in the order of :meth:`spectrum` (descending :math:`\mu`).

        Raises
        ------
        ValueError
            If the circle is not uniform (``density_amplitude != 0``).

        References
        ----------
        Funk--Hecke formula for :math:`S^1` (Atkinson--Han §2.5); book/reference.md §A.4.

        Examples
        --------
        >>> import numpy as np
        >>> from scipy.integrate import quad
        >>> beta = 3.0
        >>> w = lambda t: np.exp(-2 * beta * (1 - np.cos(t)))   # K on the unit circle
        >>> mu_1 = quad(lambda t: w(t) * np.cos(t), 0, 2 * np.pi)[0] / quad(w, 0, 2 * np.pi)[0]
        >>> bool(np.isclose(Circle().kernel_spectrum(beta, 2)[1], mu_1, rtol=1e-12))
        True
        """
        beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
        count = check_count(count)
        if self.density_amplitude != 0.0:
            raise ValueError(
                "kernel_spectrum needs the uniform circle (density_amplitude = 0), "
                f"got density_amplitude={self.density_amplitude!r}"
            )
        return gauss_kernel_sphere_eigenvalues(beta, self.radius, 1, count)


@dataclass(frozen=True)
class Sphere:
    r"""The round sphere :math:`S^d \subset \mathbb R^{d+1}` of radius :math:`r`, uniform.

    Samples are normalised standard Gaussian vectors (rotation invariance), scaled by :math:`r`.
    The spectrum of :math:`-\Delta` is

    .. math::

        \lambda_l = \frac{l(l+d-1)}{r^2}, \qquad
        \operatorname{mult}(l) = \binom{l+d}{d} - \binom{l+d-2}{d}
        \quad(1,\ 2,2,\dots \text{ for } d=1;\ 2l+1 \text{ for } d=2;\ (l+1)^2 \text{ for } d=3),

    the degree-:math:`l` spherical harmonics.

    Parameters
    ----------
    dim : int
        :math:`d \ge 1`.
    radius : float
        :math:`r > 0` (default 1: the unit sphere).

    References
    ----------
    Chavel (1984) §II.4; Atkinson--Han (2012) §2.1.

    Examples
    --------
    >>> import numpy as np
    >>> s2 = Sphere(2)
    >>> x = s2.sample(4, seed=1)
    >>> np.allclose(np.linalg.norm(x, axis=1), 1.0)
    True
    >>> s2.spectrum(9).tolist()  # l(l+1) with multiplicity 2l+1
    [0.0, 2.0, 2.0, 2.0, 6.0, 6.0, 6.0, 6.0, 6.0]
    """

    dim: int = 2
    radius: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "dim", check_integer("dim", self.dim, 1))
        object.__setattr__(self, "radius", check_in_range("radius", self.radius, 0.0, low_inclusive=False))

    @property
    def intrinsic_dimension(self) -> int:
        """:math:`d`."""
        return self.dim

    @property
    def ambient_dimension(self) -> int:
        """:math:`d + 1`."""
        return self.dim + 1

    @property
    def volume(self) -> float:
        r""":math:`|S^d_r| = 2\pi^{(d+1)/2} r^d / \Gamma((d+1)/2)`."""
        half = 0.5 * (self.dim + 1)
        return 2.0 * math.pi**half * self.radius**self.dim / math.gamma(half)

    def sample(self, n: int, seed=None) -> np.ndarray:
        """``n`` uniform points, ``shape=[n, d + 1]``."""
        n = check_sample_size(n, self.dim + 1)
        g = generator(seed).standard_normal((n, self.dim + 1))
        return self.radius * g / np.linalg.norm(g, axis=1, keepdims=True)

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` eigenvalues of :math:`-\Delta`: :math:`l(l+d-1)/r^2` with harmonic multiplicity."""
        count = check_count(count)
        degrees, multiplicities = harmonic_degrees(self.dim, count)
        values = degrees * (degrees + self.dim - 1.0) / self.radius**2
        return repeat_by_multiplicity(values, multiplicities, count)

    def density(self, points) -> np.ndarray:
        r"""Uniform density :math:`1/|S^d_r|` w.r.t. the surface measure."""
        points = check_points(points, self.dim + 1, f"Sphere({self.dim})")
        return np.full(points.shape[0], 1.0 / self.volume)

    def kernel_spectrum(self, beta: float, count: int) -> np.ndarray:
        r"""Exact eigenvalues of the continuum Gauss-kernel Markov operator on the uniform :math:`S^d`.

        With :math:`K(x,y) = \exp(-\beta\lVert x-y\rVert^2) = e^{-2\beta r^2} e^{2\beta r^2 \langle x, y\rangle / r^2}`
        (a zonal kernel) and
        :math:`(\mathsf P_\beta f)(x) = \int K(x,y)f(y)\,d\sigma(y) / \int K(x,y)\,d\sigma(y)`, every
        degree-:math:`l` spherical harmonic is an eigenfunction (Funk--Hecke) with

        .. math::

            \mu_l = \frac{I_{l+\nu}(2\beta r^2)}{I_{\nu}(2\beta r^2)}, \quad \nu = \frac{d-1}{2},
            \qquad 4\beta(1 - \mu_l) = \frac{l(l+d-1)}{r^2} + O(\beta^{-1}),

        repeated by multiplicity, in the order of :meth:`spectrum` (descending :math:`\mu`).

        References
        ----------
        Funk--Hecke formula (Atkinson--Han 2012, Thm 2.22) with the Gegenbauer generating
        integral of :math:`e^{ct}`; book/reference.md §A.4.

        Examples
        --------
        >>> import numpy as np
        >>> from scipy.integrate import quad
        >>> beta = 2.0
        >>> w = lambda t: np.exp(-2 * beta * (1 - t))   # K as a function of t = <x, y> on S^2
        >>> mu_1 = quad(lambda t: w(t) * t, -1, 1)[0] / quad(w, -1, 1)[0]   # Legendre P_1(t) = t
        >>> bool(np.isclose(Sphere(2).kernel_spectrum(beta, 2)[1], mu_1, rtol=1e-12))
        True
        """
        beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
        count = check_count(count)
        return gauss_kernel_sphere_eigenvalues(beta, self.radius, self.dim, count)


@dataclass(frozen=True)
class FlatTorus:
    r"""The flat torus :math:`(\mathbb R/s\mathbb Z)^d`, embedded isometrically in :math:`\mathbb R^{2d}`, uniform.

    Each factor is a circle of circumference :math:`s` (radius :math:`\rho = s/2\pi`):
    :math:`x = (\rho\cos\theta_1, \rho\sin\theta_1, \dots, \rho\cos\theta_d, \rho\sin\theta_d)`, a
    product of circles, which is an isometric (Clifford-type) embedding of the flat metric.  The
    spectrum of :math:`-\Delta` is the dual lattice:

    .. math::

        \lambda_k = \Bigl(\frac{2\pi}{s}\Bigr)^2 \lVert k\rVert^2, \qquad k \in \mathbb Z^d,

    each :math:`k` counted once (:math:`e^{2\pi i k\cdot\theta/s}`).

    Parameters
    ----------
    dim : int
        :math:`d \ge 1`.
    side : float
        Circumference :math:`s > 0` of each factor (default :math:`2\pi`: unit circles, integer
        eigenvalues).

    References
    ----------
    Chavel (1984) §II.2.

    Examples
    --------
    >>> import numpy as np
    >>> torus = FlatTorus(2)
    >>> torus.spectrum(10).tolist()  # |k|^2 over Z^2: 0; 1 (x4); 2 (x4); 4
    [0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 4.0]
    >>> x = torus.sample(3, seed=2)
    >>> np.allclose(x[:, 0] ** 2 + x[:, 1] ** 2, 1.0) and np.allclose(x[:, 2] ** 2 + x[:, 3] ** 2, 1.0)
    True
    """

    dim: int = 2
    side: float = 2.0 * math.pi

    def __post_init__(self):
        object.__setattr__(self, "dim", check_integer("dim", self.dim, 1))
        object.__setattr__(self, "side", check_in_range("side", self.side, 0.0, low_inclusive=False))

    @property
    def intrinsic_dimension(self) -> int:
        """:math:`d`."""
        return self.dim

    @property
    def ambient_dimension(self) -> int:
        """:math:`2d`."""
        return 2 * self.dim

    @property
    def volume(self) -> float:
        """:math:`s^d`."""
        return self.side**self.dim

    def sample_angles(self, n: int, seed=None) -> np.ndarray:
        r"""``n`` uniform angle vectors :math:`\theta \in [0, 2\pi)^d`, ``shape=[n, d]``."""
        n = check_sample_size(n, 2 * self.dim)
        return generator(seed).uniform(0.0, 2.0 * math.pi, size=(n, self.dim))

    def sample(self, n: int, seed=None) -> np.ndarray:
        """``n`` uniform points, ``shape=[n, 2d]`` (columns ``2i, 2i+1`` are factor ``i``)."""
        theta = self.sample_angles(n, seed)
        rho = self.side / (2.0 * math.pi)
        out = np.empty((theta.shape[0], 2 * self.dim))
        out[:, 0::2] = rho * np.cos(theta)
        out[:, 1::2] = rho * np.sin(theta)
        return out

    def spectrum(self, count: int) -> np.ndarray:
        r"""Eigenvalues of :math:`-\Delta`: :math:`(2\pi/s)^2\lVert k\rVert^2`, :math:`k\in\mathbb Z^d`."""
        count = check_count(count, self.dim)
        return lowest_lattice_values([(2.0 * math.pi / self.side) ** 2] * self.dim, count, signed=True)

    def density(self, points) -> np.ndarray:
        r"""Uniform density :math:`1/s^d` w.r.t. the flat volume."""
        points = check_points(points, 2 * self.dim, f"FlatTorus({self.dim})")
        return np.full(points.shape[0], 1.0 / self.volume)


@dataclass(frozen=True)
class Interval:
    r"""The interval :math:`[0, L] \subset \mathbb R`, uniform, with the Neumann Laplacian.

    The spectrum of :math:`-\Delta = -d^2/dx^2` with :math:`f'(0) = f'(L) = 0` is
    :math:`(\pi k/L)^2`, :math:`k \ge 0`, each simple (:math:`\cos(\pi k x/L)`).

    Parameters
    ----------
    length : float
        :math:`L > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> Interval(np.pi).spectrum(4).tolist()
    [0.0, 1.0, 4.0, 9.0]
    >>> Interval(2.0).sample(3, seed=0).shape
    (3, 1)
    """

    length: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "length", check_in_range("length", self.length, 0.0, low_inclusive=False))

    intrinsic_dimension = 1
    ambient_dimension = 1

    @property
    def volume(self) -> float:
        """:math:`L`."""
        return self.length

    def sample(self, n: int, seed=None) -> np.ndarray:
        """``n`` uniform points, ``shape=[n, 1]``."""
        n = check_sample_size(n, 1)
        return generator(seed).uniform(0.0, self.length, size=(n, 1))

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` Neumann eigenvalues :math:`(\pi k/L)^2`, :math:`k = 0, 1, \dots`."""
        count = check_count(count)
        return (math.pi * np.arange(count) / self.length) ** 2

    def density(self, points) -> np.ndarray:
        """Uniform density :math:`1/L`."""
        points = check_points(points, 1, "Interval")
        return np.full(points.shape[0], 1.0 / self.length)
