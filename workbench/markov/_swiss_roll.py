r"""The Swiss roll: a rectangle rolled isometrically into :math:`\mathbb R^3`, with its exact Neumann spectrum.

A sampler with the interface of :mod:`workbench.markov._samplers` (``sample``, ``intrinsic_dimension``,
``spectrum``, ``density``): the sheet :math:`X(t, h) = (t\cos t, h, t\sin t)` is isometric to a
rectangle through the arc length of the spiral, so its Laplace--Beltrami spectrum is the rectangle's.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2 and Figure 1 (Swiss roll);
book/reference.md §A.2--A.4.
I. Chavel, *Eigenvalues in Riemannian Geometry*, Academic Press (1984), §II.2--II.4 (spectra of
rectangles).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.markov._manifolds import check_count, check_points, check_sample_size, generator, lowest_lattice_values
from workbench.validation import as_array, check_choice, check_finite_output, check_in_range

__all__ = ["SwissRoll"]


def _arc_length(t):
    r"""Spiral arc length from 0, :math:`s(t) = (t\sqrt{1+t^2} + \operatorname{arsinh} t)/2`."""
    return 0.5 * (t * np.hypot(1.0, t) + np.arcsinh(t))  # hypot: √(1 + t²) without squaring a large t


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
    * ``"parameter"``: uniform in :math:`t`, as ``make_swiss_roll`` and Attention Geometry's Figure 1; the
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
    Attention Geometry §2, Figure 1 [SEED]; book/reference.md §A.2, §A.11; Chavel (1984) §II.2
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
        n = check_sample_size(n, 3)
        rng = generator(seed)
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
        points = check_points(points, 3, "SwissRoll")
        t = np.hypot(points[:, 0], points[:, 2])
        with np.errstate(over="ignore", invalid="ignore"):  # s(t) ~ t²/2: t near 1e300 is refused just below
            coordinates = np.column_stack([_arc_length(t) - _arc_length(self.t_start), points[:, 1]])
        return check_finite_output("SwissRoll.intrinsic_coordinates", coordinates, points=points)

    def spectrum(self, count: int) -> np.ndarray:
        r"""Lowest ``count`` Neumann eigenvalues :math:`(\pi m/\ell)^2 + (\pi k/H)^2`, :math:`m, k \ge 0`."""
        count = check_count(count, 2)
        weights = [(math.pi / self.arc_length) ** 2, (math.pi / self.height) ** 2]
        return lowest_lattice_values(weights, count, signed=False)

    def density(self, points) -> np.ndarray:
        r"""Sampling density w.r.t. area.

        :math:`1/(\ell H)` for ``"area"``; :math:`1/((t_1-t_0)H\sqrt{1+t^2})` for ``"parameter"``, with
        :math:`t = \sqrt{x^2 + z^2}`.
        """
        points = check_points(points, 3, "SwissRoll")
        if self.sampling == "area":
            return np.full(points.shape[0], 1.0 / self.volume)
        t = np.hypot(points[:, 0], points[:, 2])
        return (1.0 / ((self.t_end - self.t_start) * self.height)) / np.hypot(1.0, t)  # finite for every finite t
