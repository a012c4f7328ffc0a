r"""Short-time heat kernels (Varadhan) and the diffusive scaling of a Gauss jump form (Beurling–Deny).

Heat kernels are those of :math:`\hbar\Delta`, i.e. :math:`\partial_t p_t = \hbar\Delta p_t`, so that in
:math:`m` flat dimensions :math:`p_t(x,y) = (4\pi\hbar t)^{-m/2}\exp(-\lvert x-y\rvert^2/(4\hbar t))` and

.. math::

    -4\hbar t\log p_t(x,y) = d(x,y)^2 + 2m\hbar t\log(4\pi\hbar t) \;\to\; d(x,y)^2 \quad (t\to 0)

(Varadhan's formula; the second term is the prefactor correction).  :func:`circle_log_heat_kernel` and
:func:`sphere_log_heat_kernel` evaluate the exact kernels of the unit circle and the unit sphere
:math:`S^2` to high relative accuracy at short times, where :math:`p_t` is astronomically small.

The jump form :func:`circle_jump_kernel` discretises, on the uniform grid of the unit circle,

.. math::

    \mathcal E_\beta(f,f) = \tfrac12\iint (f(x)-f(y))^2\,\bigl[\lambda_\beta e^{-\beta\lvert x-y\rvert^2}
                             + n(x-y)\bigr]\,dx\,dy + \int\kappa f^2\,dx,
    \qquad \lambda_\beta = 4\hbar\beta\,(\beta/\pi)^{m/2},

(kernel :math:`K_\beta(x,y) = \exp(-\beta\lvert y-x\rvert^2)`, :math:`G = I`): :math:`\lambda_\beta
e^{-\beta\lvert u\rvert^2}` is :math:`4\hbar\beta` times the density of :math:`N(0, I/(2\beta))`, the
paper's scaling :math:`4\hbar\beta\,\mathcal P_\beta`; its form tends to :math:`\hbar\int\lvert\nabla f\rvert^2`
(the factor 4 cancels :math:`\tfrac12\cdot\tfrac1{2\beta}`), while the β-independent remote kernel
:math:`n` survives as the jump part.  Split it with :func:`workbench.markov.beurling_deny_split`.

:func:`circle_courrege_operator` adds a drift tilt :math:`e^{-\Phi/\hbar}` of the destinations and a
killing diagonal: a discrete Courrège generator tending to
:math:`-\hbar f'' + 2\Phi'f' - \int[f(y) - f(x) - \chi(\lvert y-x\rvert)(y-x)f'(x)]\,n\,dy + cf`.

Source: Attention Geometry §8, Varadhan :math:`\lim_{t\to0}-4\hbar t\log p_t = d_{\mathcal G}^2` [SEED
fragment]; §6 Beurling–Deny with critical rate scaling λ_β [RECON]; §7 Courrège form [RECON, standard]
(book/reference.md §A.5 "Also", §A.6, §A.7).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import mpmath
import numpy as np

from workbench.memory import check_memory
from workbench.validation import (
    as_array,
    check_choice,
    check_finite,
    check_finite_result,
    check_in_range,
    check_integer,
)

__all__ = [
    "JumpKernel",
    "circle_courrege_operator",
    "circle_jump_kernel",
    "circle_log_heat_kernel",
    "diffusive_jump_rate",
    "sphere_log_heat_kernel",
    "varadhan_remainder",
]

_GUARD_DIGITS = 30  # correct digits kept after the cancellation in the Legendre / Fourier sums
# Longest ħt the image sum takes: it needs about 2√(ħt) + 9 images (2·10⁴ at 10⁸); the Fourier sum needs
# only a few terms there.
_MAX_IMAGES_TIME = 1e8


def _check_time(t, hbar):
    t = check_in_range("t", t, 0.0, low_inclusive=False)
    hbar = check_in_range("hbar", hbar, 0.0, low_inclusive=False)
    return t, hbar


def circle_log_heat_kernel(theta, t, hbar=1.0, *, method="images"):
    r""":math:`\log p_t(\theta)` for the heat kernel of :math:`\hbar\,\partial_\theta^2` on the unit circle.

    .. math::

        p_t(\theta) = \sum_{k\in\mathbb Z}\frac{e^{-(\theta+2\pi k)^2/(4\hbar t)}}{\sqrt{4\pi\hbar t}}
                    = \frac1{2\pi}\sum_{n\in\mathbb Z} e^{-\hbar n^2 t}\cos n\theta

    (images and Fourier series agree by Poisson summation).  ``"images"`` sums the images as a
    log-sum-exp in float64 (accurate at short times); ``"fourier"`` sums the Fourier series in mpmath with
    enough digits to survive its cancellation (the terms are O(1), the sum :math:`e^{-\theta^2/(4\hbar t)}`).

    Parameters
    ----------
    theta : float
        Angle; the geodesic distance is :math:`\lvert\theta\rvert` reduced to :math:`[0, \pi]`.
    t, hbar : float
        Time and diffusion scale, both > 0; only :math:`\hbar t` enters.
    method : {"images", "fourier"}

    Returns
    -------
    float

    References
    ----------
    book/reference.md §A.5 "Also" (Varadhan, [SEED fragment]); Poisson summation.

    Examples
    --------
    >>> a = circle_log_heat_kernel(1.0, 0.01, 1.0)
    >>> b = circle_log_heat_kernel(1.0, 0.01, 1.0, method="fourier")
    >>> abs(a - b) < 1e-12, abs(a - (-1.0 / 0.04 - 0.5 * math.log(4 * math.pi * 0.01))) < 1e-12
    (True, True)
    """
    theta = math.remainder(check_in_range("theta", theta), 2 * math.pi)  # p_t is 2π-periodic in θ
    t, hbar = _check_time(t, hbar)
    method = check_choice("method", method, ("images", "fourier"))
    s = hbar * t
    if method == "images" and s > _MAX_IMAGES_TIME:
        raise ValueError(
            f"hbar * t must be at most {_MAX_IMAGES_TIME:g} for method='images' (the sum needs about "
            f"2√(ħt) images); use method='fourier', got hbar * t = {s:.6g}"
        )
    if method == "images":
        reach = 3 + math.ceil(math.sqrt(s))  # images beyond ~3 + √(ħt) periods are below e^{-36}
        shifted = theta + 2 * math.pi * np.arange(-reach - 1, reach + 2)
        exponents = -(shifted**2) / (4 * s)
        top = float(np.max(exponents))
        return top + math.log(float(np.sum(np.exp(exponents - top)))) - 0.5 * math.log(4 * math.pi * s)
    digits = _GUARD_DIGITS + math.ceil(min(theta % (2 * math.pi), math.pi) ** 2 / (4 * s) / math.log(10))
    with mpmath.workdps(digits):
        n_max = math.ceil(math.sqrt((digits * math.log(10) + 10) / s)) + 2
        exact_s, angle = mpmath.mpf(s), mpmath.mpf(theta)  # exponents in float64 would lose e^{-θ²/4ħt}
        total = mpmath.mpf(1)
        for n in range(1, n_max + 1):
            total += 2 * mpmath.exp(-exact_s * n * n) * mpmath.cos(n * angle)
        return float(mpmath.log(total / (2 * mpmath.pi)))


def sphere_log_heat_kernel(theta, t, hbar=1.0):
    r""":math:`\log p_t(\theta)` for the heat kernel of :math:`\hbar\Delta_{S^2}` on the unit sphere.

    .. math::

        p_t(\theta) = \sum_{l\ge0}\frac{2l+1}{4\pi}P_l(\cos\theta)\,e^{-\hbar l(l+1)t},

    :math:`\theta` the geodesic distance.  The series is summed in mpmath with
    :math:`30 + \theta^2/(4\hbar t\ln 10)` digits (the terms are O(1/ħt), the sum
    :math:`\sim e^{-\theta^2/(4\hbar t)}/(4\pi\hbar t)`) and :math:`P_l` by the three-term recurrence, up to
    :math:`l` where :math:`e^{-\hbar l^2 t}` is below the working precision.

    Parameters
    ----------
    theta : float
        Geodesic distance in :math:`[0, \pi]`.
    t, hbar : float
        Time and diffusion scale, both > 0; only :math:`\hbar t` enters.

    Returns
    -------
    float

    References
    ----------
    book/reference.md §A.5 "Also" (Varadhan, [SEED fragment]); the series is the spectral expansion
    with the spherical harmonics addition theorem.

    Examples
    --------
    >>> s = 0.005  # short time: p_t ≈ (4πħt)⁻¹ e^{−θ²/(4ħt)} (θ / sin θ)^{1/2}
    >>> leading = -1.0 / (4 * s) - math.log(4 * math.pi * s) + 0.5 * math.log(1.0 / math.sin(1.0))
    >>> abs(sphere_log_heat_kernel(1.0, s) - leading) < 2 * s
    True
    """
    theta = check_in_range("theta", theta, 0.0, math.pi)
    t, hbar = _check_time(t, hbar)
    s = hbar * t
    digits = _GUARD_DIGITS + math.ceil(theta**2 / (4 * s) / math.log(10))
    with mpmath.workdps(digits):
        x, exact_s = mpmath.cos(mpmath.mpf(theta)), mpmath.mpf(s)  # float64 exponents would lose the sum
        l_max = math.ceil(math.sqrt((digits * math.log(10) + 10) / s)) + 2
        previous, current = mpmath.mpf(1), x
        total = 1 + 3 * x * mpmath.exp(-2 * exact_s)
        for deg in range(1, l_max):  # current = P_deg → P_{deg+1} (Bonnet recurrence)
            previous, current = current, ((2 * deg + 1) * x * current - deg * previous) / (deg + 1)
            total += (2 * deg + 3) * current * mpmath.exp(-exact_s * (deg + 1) * (deg + 2))
        return float(mpmath.log(total / (4 * mpmath.pi)))


def varadhan_remainder(log_p, distance, t, hbar=1.0, dimension=1):
    r"""The remainder :math:`-4\hbar t\log p_t - d^2 - 2m\hbar t\log(4\pi\hbar t)` of Varadhan's formula.

    Zero for the flat kernel :math:`(4\pi\hbar t)^{-m/2}e^{-d^2/(4\hbar t)}`; on a curved manifold it is
    :math:`-4\hbar t\log u_0(x,y) + O(t^2)` with :math:`u_0` the van Vleck–Morette factor
    (:math:`u_0 = (\theta/\sin\theta)^{1/2}` on the unit :math:`S^2`).

    Parameters
    ----------
    log_p : float
        :math:`\log p_t(x,y)`.
    distance : float
        Geodesic distance :math:`d(x,y) \ge 0`.
    t, hbar : float
        Time and diffusion scale, both > 0.
    dimension : int
        Manifold dimension :math:`m \ge 1`.

    Returns
    -------
    float

    References
    ----------
    book/reference.md §A.5 "Also" (Varadhan [SEED fragment]); the prefactor term is [DERIVED].

    Examples
    --------
    >>> s = 0.01
    >>> flat = -0.25 / (4 * s) - 0.5 * math.log(4 * math.pi * s)  # line, d = 0.5, ħ = 1
    >>> abs(varadhan_remainder(flat, 0.5, s)) < 1e-15
    True
    """
    log_p = check_in_range("log_p", log_p)
    distance = check_in_range("distance", distance, 0.0)
    t, hbar = _check_time(t, hbar)
    dimension = check_integer("dimension", dimension, 1)
    s = hbar * t
    try:
        value = -4 * s * log_p - distance**2 - 2 * dimension * s * math.log(4 * math.pi * s)
    except OverflowError:
        value = math.inf
    return check_finite_result("the Varadhan remainder", value, log_p=log_p, distance=distance, t=t, hbar=hbar)


def diffusive_jump_rate(beta, hbar=1.0, dimension=1):
    r"""The critical rate :math:`\lambda_\beta = 4\hbar\beta(\beta/\pi)^{m/2}` of the jump kernel.

    The kernel is :math:`\lambda_\beta e^{-\beta\lvert u\rvert^2}` (:math:`K_\beta = \exp(-\beta\lvert y-x\rvert^2)`).

    With it, :math:`\lambda_\beta e^{-\beta\lvert u\rvert^2} = 4\hbar\beta\,\mathcal N(u; 0, I/(2\beta))` and
    :math:`\tfrac12\iint(f(x)-f(y))^2\lambda_\beta e^{-\beta\lvert x-y\rvert^2} \to \hbar\int\lvert\nabla f\rvert^2`:
    the Gaussian second moment :math:`1/(2\beta)`, the ½ of the form and the 4 of :math:`4\hbar\beta` give ħ.

    Parameters
    ----------
    beta, hbar : float
        Inverse bandwidth and diffusion scale, both > 0.
    dimension : int
        :math:`m \ge 1`.

    Returns
    -------
    float

    References
    ----------
    book/reference.md §A.6 ("critical rate scaling", λ_β [RECON]), §A.4 (4ħβ(I − 𝒫_β) [SEED]).

    Examples
    --------
    >>> beta = 50.0
    >>> u = np.linspace(-3, 3, 60001)
    >>> moment = np.sum(u**2 * np.exp(-beta * u**2)) * (u[1] - u[0])  # ∫u² e^{−βu²} du
    >>> round(float(0.5 * diffusive_jump_rate(beta, hbar=0.25) * moment), 9)  # → ħ
    0.25
    """
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    hbar = check_in_range("hbar", hbar, 0.0, low_inclusive=False)
    dimension = check_integer("dimension", dimension, 1)
    try:
        rate = 4 * hbar * beta * (beta / math.pi) ** (dimension / 2)
    except OverflowError:
        rate = math.inf
    return check_finite_result("the jump rate", rate, beta=beta, hbar=hbar, dimension=dimension)


class JumpKernel(NamedTuple):
    r"""The discretised jump form of :func:`circle_jump_kernel`.

    Attributes
    ----------
    points : array, shape=[n]
        Grid angles :math:`x_i = 2\pi i/n`.
    kernel : array, shape=[n, n]
        Bond weights :math:`h^2 J(x_i, x_j)` (zero diagonal), :math:`h = 2\pi/n`.
    distances : array, shape=[n, n]
        Periodic distances :math:`\min(\lvert x_i - x_j\rvert, 2\pi - \lvert x_i - x_j\rvert)`.
    killing : array, shape=[n]
        :math:`h\,\kappa(x_i)` (zeros without a killing rate).
    """

    points: np.ndarray
    kernel: np.ndarray
    distances: np.ndarray
    killing: np.ndarray


def _circle_grid(n, beta, hbar):
    """Checked ``(n, beta, hbar)``, the spacing h = 2π/n, the grid x_i = ih and its periodic distances."""
    n = check_integer("n", n, 8)
    beta = check_in_range("beta", beta, 5.0)
    hbar = check_in_range("hbar", hbar, 0.0, low_inclusive=False)
    if n * n < 160 * beta:
        raise ValueError(f"n must satisfy n**2 >= 160*beta for a spectrally accurate trapezoid sum, got n={n}")
    check_memory(f"the n x n matrices of the circle grid (n = {n})", 8.0 * 6 * n * n, "use a smaller n")
    h = 2 * math.pi / n
    x = h * np.arange(n)
    gap = np.abs(x[:, None] - x[None, :])
    distances = np.minimum(gap, 2 * math.pi - gap)
    return n, beta, hbar, h, x, distances


def _check_callables(**functions) -> None:
    for name, function in functions.items():
        if function is not None and not callable(function):
            raise TypeError(f"{name} must be a vectorised function of the grid, or None, got {function!r}")


def circle_jump_kernel(n, beta, hbar=1.0, *, remote=None, killing=None):
    r"""Trapezoid discretisation of a Gauss + remote jump form with killing on the unit circle.

    .. math::

        \mathcal E(f,f) \approx \tfrac12\sum_{ij}h^2 J(x_i,x_j)(f_i - f_j)^2 + \sum_i h\,\kappa(x_i)f_i^2,
        \qquad J(x,y) = \lambda_\beta e^{-\beta d(x,y)^2} + n(d(x,y)),

    with kernel :math:`K_\beta(x,y) = \exp(-\beta d(x,y)^2)` (:math:`G = 1`, d the periodic distance) and
    :math:`\lambda_\beta` of :func:`diffusive_jump_rate` (m = 1).  For smooth periodic data the trapezoid
    sums are spectrally accurate once :math:`n^2/(4\beta) \gtrsim 40` (aliasing error :math:`e^{-n^2/(4\beta)}`
    of the Gaussian), which is required; the periodised and minimal-image Gaussians differ by
    :math:`e^{-\beta\pi^2}`, negligible for β ≥ 5.

    Parameters
    ----------
    n : int
        Grid size, :math:`n \ge 8` and :math:`n^2 \ge 160\beta`.
    beta, hbar : float
        Inverse bandwidth (≥ 5) and diffusion scale (> 0).
    remote : callable, optional
        :math:`u \mapsto n(u) \ge 0` on :math:`[0, \pi]`, vectorised; default none.
    killing : callable, optional
        :math:`x \mapsto \kappa(x) \ge 0`, vectorised; default none.

    Returns
    -------
    JumpKernel
        Feed ``kernel``, ``distances`` and ``killing`` to :func:`workbench.markov.beurling_deny_split`.

    References
    ----------
    book/reference.md §A.6 (Beurling–Deny, critical rate scaling [RECON]).

    Examples
    --------
    >>> from workbench.markov import beurling_deny_split
    >>> jk = circle_jump_kernel(256, 100.0, hbar=0.5)
    >>> parts = beurling_deny_split(jk.kernel, jk.distances, 7 / np.sqrt(100.0), np.cos(jk.points))
    >>> exact = 2 * 0.5 * 100.0 * 2 * np.pi * (1 - np.exp(-1 / 400.0))  # 2ħβ·2π(1 − e^{−k²/(4β)}), k = 1
    >>> bool(abs(parts.local - exact) < 1e-12), round(parts.local, 2)  # → ħ∫(f')² = ħπ = 1.57
    (True, 1.57)
    """
    _check_callables(remote=remote, killing=killing)
    n, beta, hbar, h, x, distances = _circle_grid(n, beta, hbar)
    rate = diffusive_jump_rate(beta, hbar, 1) * np.exp(-beta * distances**2)
    if remote is not None:
        extra = as_array("remote(u)", remote(distances), ndim=2)
        if np.any(extra < 0):
            raise ValueError("remote must be nonnegative, got a negative value")
        rate = rate + extra
    kernel = h * h * rate
    np.fill_diagonal(kernel, 0.0)
    kill = np.zeros(n)
    if killing is not None:
        kill = h * as_array("killing(x)", killing(x), ndim=1)
        if np.any(kill < 0):
            raise ValueError("killing must be nonnegative, got a negative value")
    return JumpKernel(x, kernel, distances, kill)


def circle_courrege_operator(n, beta, hbar=1.0, *, potential=None, remote=None, killing=None):
    r"""Discrete Courrège generator on the uniform grid of the unit circle (positive convention).

    .. math::

        \mathsf L = 4\hbar\beta\,(I - \mathsf P_\beta) + \bigl(\operatorname{diag}(\mathsf R\mathbf 1) - \mathsf R\bigr)
                    + \operatorname{diag}(c), \qquad
        \mathsf P_{\beta,ij} = \frac{K_{ij}\,e^{-\Phi(x_j)/\hbar}}{\sum_l K_{il}\,e^{-\Phi(x_l)/\hbar}},\quad
        \mathsf R_{ij} = h\,n(d_{ij}),

    with kernel :math:`K_{ij} = \exp(-\beta\,d_{ij}^2)` (G = 1, :math:`d_{ij}` the periodic distance) tilted by
    the destination weight :math:`e^{-\Phi/\hbar}` (a Doob / logit-bias tilt), a symmetric remote kernel
    :math:`n` and a killing rate :math:`c`, :math:`h = 2\pi/n`.  As β → ∞ (grid fine enough),
    :math:`\mathsf Lf \to \mathcal Cf` pointwise, with

    .. math::

        \mathcal Cf = -\hbar f'' + 2\Phi' f'
                      - \int\bigl[f(x+u) - f(x) - \chi(\lvert u\rvert)\,u f'(x)\bigr]n(\lvert u\rvert)\,du + c f :

    the tilted Gauss part gives :math:`-\hbar[f'' + 2(\log e^{-\Phi/\hbar})'f'] = -\hbar f'' + 2\Phi'f'`
    (drift 1-form :math:`\mathcal A = d\Phi`) with an :math:`O(1/\beta)` bias, and for a symmetric
    :math:`n` the compensator :math:`\chi(\lvert u\rvert)u f'` integrates to zero, so the remote sum is the
    Courrège integral up to the (spectral) trapezoid error.

    Parameters
    ----------
    n : int
        Grid size, :math:`n \ge 8` and :math:`n^2 \ge 160\beta`.
    beta, hbar : float
        Inverse bandwidth (≥ 5) and diffusion scale (> 0).
    potential, remote, killing : callable, optional
        Vectorised :math:`\Phi(x)`, :math:`n(u) \ge 0` on :math:`[0,\pi]`, :math:`c(x) \ge 0`; default none.

    Returns
    -------
    points : array, shape=[n]
    generator : array, shape=[n, n]
        :math:`\mathsf L`.

    References
    ----------
    book/reference.md §A.7 (Courrège form [RECON, standard]), §A.4 (Doob transform, drift
    :math:`\mathcal A = d\Phi` [SEED/DERIVED]), §A.6 (jump and killing parts [RECON]).

    Examples
    --------
    >>> x, L = circle_courrege_operator(512, 400.0, hbar=0.5)
    >>> exact = 0.5 * 4 * np.cos(2 * x)  # −ħ f'' for f = cos 2x, no drift, jumps or killing
    >>> bool(np.max(np.abs(L @ np.cos(2 * x) - exact)) < 0.01)
    True
    """
    _check_callables(potential=potential, remote=remote, killing=killing)
    n, beta, hbar, h, x, distances = _circle_grid(n, beta, hbar)
    check_finite_result("the diffusive rate 4 * hbar * beta", 4 * hbar * beta, hbar=hbar, beta=beta)
    log_weight = np.zeros(n)
    if potential is not None:
        with np.errstate(over="ignore"):
            log_weight = -as_array("potential(x)", potential(x), ndim=1) / hbar
        check_finite("potential(x) / hbar", log_weight)
    logits = -beta * distances**2 + (log_weight - log_weight.max())[None, :]
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    L = 4 * hbar * beta * (np.eye(n) - P)
    if remote is not None:
        R = h * as_array("remote(u)", remote(distances), ndim=2)
        if np.any(R < 0):
            raise ValueError("remote must be nonnegative, got a negative value")
        np.fill_diagonal(R, 0.0)
        L += np.diag(R.sum(axis=1)) - R
    if killing is not None:
        c = as_array("killing(x)", killing(x), ndim=1)
        if np.any(c < 0):
            raise ValueError("killing must be nonnegative, got a negative value")
        L += np.diag(c)
    return x, L
