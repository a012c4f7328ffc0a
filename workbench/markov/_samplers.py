r"""Samplers of manifolds with known geometry: the oracles for continuum limits.

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
:math:`4\beta(I - \mathsf P_\beta) \to -\Delta` (attention-geometry-math §A.4, positive generator
:math:`\mathsf L = I - \mathsf P`), these are the rate oracles for discrete diffusion on samples.

Randomness follows ``seed=None`` :math:`\to` :func:`numpy.random.default_rng`; a
:class:`numpy.random.Generator` is used as given.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2 and Figure 1 (Swiss roll);
attention-geometry-math §A.2--A.4.
I. Chavel, *Eigenvalues in Riemannian Geometry*, Academic Press (1984), §II.2--II.4 (spectra of
spheres, flat tori, rectangles).
K. Atkinson and W. Han, *Spherical Harmonics and Approximations on the Unit Sphere*, Springer LNM
2044 (2012), §2.1 (dimension of the spaces of spherical harmonics) and §2.5 (Funk--Hecke formula).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.special

from workbench.validation import as_array, check_choice, check_in_range, check_integer

__all__ = ["Circle", "FlatTorus", "Interval", "Sphere", "SwissRoll"]


# --------------------------------------------------------------------------------------------
# shared helpers


def _generator(seed) -> np.random.Generator:
    """``seed=None`` -> fresh entropy; an int or SeedSequence -> seeded; a Generator -> itself."""
    try:
        return np.random.default_rng(seed)
    except TypeError as exc:
        raise TypeError(f"seed must be None, an int or a numpy Generator, got {type(seed).__name__}") from exc


def _check_points(points, ambient_dimension: int, manifold: str) -> np.ndarray:
    points = np.asarray(as_array("points", points, ndim=2))
    if points.shape[1] != ambient_dimension:
        raise ValueError(
            f"points must have {ambient_dimension} columns (the ambient dimension of {manifold}), "
            f"got shape {points.shape}"
        )
    return points


def _lowest_lattice_values(weights, count: int, *, signed: bool) -> np.ndarray:
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


def _repeat_by_multiplicity(value, multiplicity, count: int) -> np.ndarray:
    """``value(l)`` repeated ``multiplicity(l)`` times for l = 0, 1, ..., truncated to ``count``."""
    out: list[float] = []
    degree = 0
    while len(out) < count:
        out.extend([value(degree)] * multiplicity(degree))
        degree += 1
    return np.asarray(out[:count], dtype=float)


def _harmonic_multiplicity(dim: int, degree: int) -> int:
    r"""Dimension of the degree-:math:`l` spherical harmonics on :math:`S^d \subset \mathbb R^{d+1}`.

    :math:`N(d, l) = \binom{l+d}{d} - \binom{l+d-2}{d}`: harmonic polynomials of degree :math:`l`
    in :math:`d+1` variables are the kernel of the (onto) Laplacian from degree :math:`l` to
    :math:`l-2` (Atkinson--Han (2.10)).
    """
    if degree == 0:
        return 1
    return math.comb(degree + dim, dim) - math.comb(degree + dim - 2, dim)


def _gauss_kernel_sphere_eigenvalues(beta: float, radius: float, dim: int, count: int) -> np.ndarray:
    r"""Funk--Hecke eigenvalues :math:`\mu_l = I_{l+\nu}(2\beta r^2)/I_\nu(2\beta r^2)`, :math:`\nu=(d-1)/2`.

    ``ive`` (the scaled Bessel function :math:`e^{-x}I_\nu(x)`) keeps numerator and denominator
    finite for any :math:`\beta r^2`; the common factor :math:`e^{-x}` cancels in the ratio.
    """
    x = 2.0 * beta * radius**2
    nu = 0.5 * (dim - 1)
    base = scipy.special.ive(nu, x)
    return _repeat_by_multiplicity(
        lambda degree: float(scipy.special.ive(degree + nu, x) / base),
        lambda degree: _harmonic_multiplicity(dim, degree),
        count,
    )


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
    Chavel (1984) §II.2; attention-geometry-math §A.2.

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
        n = check_integer("n", n, 1)
        rng = _generator(seed)
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
        count = check_integer("count", count, 1)
        return _repeat_by_multiplicity(lambda k: (k / self.radius) ** 2, lambda k: 1 if k == 0 else 2, count)

    def density(self, points) -> np.ndarray:
        r"""Density w.r.t. arc length, :math:`\rho = (1 + a\cos\theta)/(2\pi r)`, at the angle of each point."""
        points = _check_points(points, 2, "Circle")
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
        Funk--Hecke formula for :math:`S^1` (Atkinson--Han §2.5); attention-geometry-math §A.4.

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
        count = check_integer("count", count, 1)
        if self.density_amplitude != 0.0:
            raise ValueError(
                "kernel_spectrum needs the uniform circle (density_amplitude = 0), "
                f"got density_amplitude={self.density_amplitude!r}"
            )
        return _gauss_kernel_sphere_eigenvalues(beta, self.radius, 1, count)


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
        n = check_integer("n", n, 1)
        g = _generator(seed).standard_normal((n, self.dim + 1))
        return self.radius * g / np.linalg.norm(g, axis=1, keepdims=True)

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` eigenvalues of :math:`-\Delta`: :math:`l(l+d-1)/r^2` with harmonic multiplicity."""
        count = check_integer("count", count, 1)
        d, r2 = self.dim, self.radius**2
        return _repeat_by_multiplicity(
            lambda degree: degree * (degree + d - 1) / r2, lambda degree: _harmonic_multiplicity(d, degree), count
        )

    def density(self, points) -> np.ndarray:
        r"""Uniform density :math:`1/|S^d_r|` w.r.t. the surface measure."""
        points = _check_points(points, self.dim + 1, f"Sphere({self.dim})")
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
        integral of :math:`e^{ct}`; attention-geometry-math §A.4.

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
        count = check_integer("count", count, 1)
        return _gauss_kernel_sphere_eigenvalues(beta, self.radius, self.dim, count)


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
        n = check_integer("n", n, 1)
        return _generator(seed).uniform(0.0, 2.0 * math.pi, size=(n, self.dim))

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
        count = check_integer("count", count, 1)
        return _lowest_lattice_values([(2.0 * math.pi / self.side) ** 2] * self.dim, count, signed=True)

    def density(self, points) -> np.ndarray:
        r"""Uniform density :math:`1/s^d` w.r.t. the flat volume."""
        points = _check_points(points, 2 * self.dim, f"FlatTorus({self.dim})")
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
        n = check_integer("n", n, 1)
        return _generator(seed).uniform(0.0, self.length, size=(n, 1))

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` Neumann eigenvalues :math:`(\pi k/L)^2`, :math:`k = 0, 1, \dots`."""
        count = check_integer("count", count, 1)
        return (math.pi * np.arange(count) / self.length) ** 2

    def density(self, points) -> np.ndarray:
        """Uniform density :math:`1/L`."""
        points = _check_points(points, 1, "Interval")
        return np.full(points.shape[0], 1.0 / self.length)


def _arc_length(t):
    r"""Spiral arc length from 0, :math:`s(t) = (t\sqrt{1+t^2} + \operatorname{arsinh} t)/2`."""
    return 0.5 * (t * np.sqrt(1.0 + t * t) + np.arcsinh(t))


@dataclass(frozen=True)
class SwissRoll:
    r"""The Swiss-roll sheet :math:`X(t, h) = (t\cos t,\ h,\ t\sin t)`, :math:`t \in [t_0, t_1]`, :math:`h \in [0, H]`.

    The defaults :math:`t_0 = 3\pi/2`, 1.5 turns (:math:`t_1 = 9\pi/2`) and :math:`H = 21` are the
    sheet of :func:`sklearn.datasets.make_swiss_roll`.  With the arc length of the spiral

    .. math::

        s(t) = \tfrac12\bigl(t\sqrt{1+t^2} + \operatorname{arsinh} t\bigr), \qquad
        s'(t) = \sqrt{1+t^2}, \qquad \ell = s(t_1) - s(t_0),

    the map :math:`(s, h) \mapsto X` is an isometry from the rectangle :math:`[0, \ell] \times [0, H]`
    onto the sheet (:math:`\lvert\partial_s X\rvert = \lvert\partial_h X\rvert = 1`,
    :math:`\partial_s X \perp \partial_h X`).  So the Neumann spectrum of :math:`-\Delta` is

    .. math::

        \lambda_{m,k} = \Bigl(\frac{\pi m}{\ell}\Bigr)^2 + \Bigl(\frac{\pi k}{H}\Bigr)^2, \qquad m, k \ge 0.

    Sampling, ``sampling=``:

    * ``"area"`` (default): uniform in arc length :math:`\times` height, i.e. uniform w.r.t. area,
      density :math:`1/(\ell H)`.  :math:`t = s^{-1}(s(t_0) + u\ell)` is found by Newton's method
      started at :math:`t_1`: :math:`s` is increasing and convex on :math:`t \ge 0`, so the iterates
      decrease monotonically to the root (quadratic convergence, to rounding).
    * ``"parameter"``: uniform in :math:`t`, as ``make_swiss_roll`` and the seed's Figure 1; the
      density w.r.t. area is :math:`1/((t_1-t_0) H \sqrt{1+t^2})`, denser on the inner turns.
      Discrete diffusion on such samples converges to a weighted Laplacian unless α-normalised
      with :math:`\alpha = 1`.

    Parameters
    ----------
    t_start : float
        :math:`t_0 \ge 0`.
    turns : float
        :math:`(t_1 - t_0)/2\pi > 0`.
    height : float
        :math:`H > 0`.
    sampling : {"area", "parameter"}

    References
    ----------
    Attention Geometry §2, Figure 1 [SEED]; attention-geometry-math §A.2, §A.11; Chavel (1984) §II.2
    (Neumann rectangle).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.integrate import quad
    >>> roll = SwissRoll()
    >>> ell = quad(lambda t: np.sqrt(1 + t * t), roll.t_start, roll.t_end)[0]
    >>> bool(np.isclose(roll.arc_length, ell, rtol=1e-12))
    True
    >>> bool(np.isclose(roll.spectrum(2)[1], (np.pi / ell) ** 2))  # ℓ > H: first mode runs along the roll
    True
    """

    t_start: float = 1.5 * math.pi
    turns: float = 1.5
    height: float = 21.0
    sampling: str = "area"

    def __post_init__(self):
        object.__setattr__(self, "t_start", check_in_range("t_start", self.t_start, 0.0))
        object.__setattr__(self, "turns", check_in_range("turns", self.turns, 0.0, low_inclusive=False))
        object.__setattr__(self, "height", check_in_range("height", self.height, 0.0, low_inclusive=False))
        check_choice("sampling", self.sampling, ("area", "parameter"))

    intrinsic_dimension = 2
    ambient_dimension = 3

    @property
    def t_end(self) -> float:
        r""":math:`t_1 = t_0 + 2\pi\cdot\text{turns}`."""
        return self.t_start + 2.0 * math.pi * self.turns

    @property
    def arc_length(self) -> float:
        r""":math:`\ell = s(t_1) - s(t_0)`."""
        return float(_arc_length(self.t_end) - _arc_length(self.t_start))

    @property
    def volume(self) -> float:
        r"""Area :math:`\ell H`."""
        return self.arc_length * self.height

    def parameter_from_arc_length(self, s) -> np.ndarray:
        r"""Invert the arc length: :math:`t \in [t_0, t_1]` with :math:`s(t) - s(t_0) = s`, for :math:`s \in [0, \ell]`.

        Vectorised Newton iteration :math:`t \leftarrow t - (s(t) - s^\ast)/\sqrt{1+t^2}` from
        :math:`t = t_1`, monotone by convexity of :math:`s`; it stops when no step exceeds
        :math:`4\epsilon_{\text{mach}} t_1`.
        """
        s = np.asarray(as_array("s", s))
        ell = self.arc_length
        if s.size and (s.min() < 0.0 or s.max() > ell):
            raise ValueError(f"s must be in [0, {ell:g}] (the arc length), got range [{s.min():g}, {s.max():g}]")
        target = _arc_length(self.t_start) + s
        t = np.full(s.shape, self.t_end)
        tolerance = 4.0 * np.finfo(float).eps * self.t_end
        for _ in range(100):  # quadratic convergence: ~6-10 steps in practice
            step = (_arc_length(t) - target) / np.sqrt(1.0 + t * t)
            t = t - step
            if not step.size or np.max(np.abs(step)) <= tolerance:
                break
        return np.clip(t, self.t_start, self.t_end)

    def sample_parameters(self, n: int, seed=None) -> np.ndarray:
        r"""``n`` pairs :math:`(t, h)`, ``shape=[n, 2]``, drawn as set by ``sampling``."""
        n = check_integer("n", n, 1)
        rng = _generator(seed)
        u = rng.uniform(0.0, 1.0, size=n)
        h = rng.uniform(0.0, self.height, size=n)
        if self.sampling == "area":
            t = self.parameter_from_arc_length(u * self.arc_length)
        else:
            t = self.t_start + u * (self.t_end - self.t_start)
        return np.column_stack([t, h])

    def sample(self, n: int, seed=None) -> np.ndarray:
        r"""``n`` points :math:`(t\cos t, h, t\sin t)`, ``shape=[n, 3]``."""
        t, h = self.sample_parameters(n, seed).T
        return np.column_stack([t * np.cos(t), h, t * np.sin(t)])

    def intrinsic_coordinates(self, points) -> np.ndarray:
        r"""Isometric coordinates :math:`(s(t) - s(t_0), h) \in [0,\ell]\times[0,H]`, :math:`t = \sqrt{x^2 + z^2}`."""
        points = _check_points(points, 3, "SwissRoll")
        t = np.hypot(points[:, 0], points[:, 2])
        return np.column_stack([_arc_length(t) - _arc_length(self.t_start), points[:, 1]])

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` Neumann eigenvalues :math:`(\pi m/\ell)^2 + (\pi k/H)^2`, :math:`m, k \ge 0`."""
        count = check_integer("count", count, 1)
        weights = [(math.pi / self.arc_length) ** 2, (math.pi / self.height) ** 2]
        return _lowest_lattice_values(weights, count, signed=False)

    def density(self, points) -> np.ndarray:
        r"""Sampling density w.r.t. area.

        :math:`1/(\ell H)` for ``"area"``; :math:`1/((t_1-t_0)H\sqrt{1+t^2})` for ``"parameter"``, with
        :math:`t = \sqrt{x^2 + z^2}`.
        """
        points = _check_points(points, 3, "SwissRoll")
        if self.sampling == "area":
            return np.full(points.shape[0], 1.0 / self.volume)
        t = np.hypot(points[:, 0], points[:, 2])
        return 1.0 / ((self.t_end - self.t_start) * self.height * np.sqrt(1.0 + t * t))
