r"""The Bakry–Émery calculus of a Gauss-kernel Markov operator, evaluated locally on a weighted point cloud.

On nodes :math:`x_j` with quadrature weights :math:`w_j` (a discretisation of the volume measure) the
kernel operator and its generator in continuum units are

.. math::

    \mathsf P_\beta(x_i, x_j) = \frac{k_{ij} w_j}{\sum_l k_{il} w_l},\quad k_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2},
    \qquad \mathcal L_\beta = 4\beta(\mathsf P_\beta - I) \;\longrightarrow\; \Delta_g ,

so that :math:`\Gamma_\beta(f) = 2\beta\sum_j\mathsf P_\beta(x_i,x_j)(f_j - f_i)^2 \to \lvert\nabla f\rvert^2` and
:math:`\Gamma_{2,\beta}(f) = \tfrac12\mathcal L_\beta\Gamma_\beta(f) - \Gamma_\beta(f, \mathcal L_\beta f) \to
\lVert\operatorname{Hess}f\rVert^2 + \operatorname{Ric}(\nabla f, \nabla f)` (Bochner), each with bias
:math:`O(1/\beta)` on a compact manifold without boundary.  The distance is the ambient (chordal) one, or the
flat one of a periodic box (a torus).

Why locally and why quadrature nodes: :math:`\Gamma_2` at a node needs the kernel rows of its one-step ball
only (its values depend on :math:`f` on the two-step ball), so the sparse operator is built on that ball
alone; and :math:`\Gamma_2` applies :math:`4\beta(\mathsf P_\beta - I)` twice, so an i.i.d. sample's Monte Carlo
error, amplified by :math:`(4\beta)^2`, swamps the :math:`O(1/\beta)` bias at any practical size.  A product
Gauss rule (or a periodic lattice) is a weighted sample whose integration error for the Gaussian kernels is
far below that bias.

References
----------
Attention Geometry §5, §8 (Γ, Γ₂ and curvature); book/reference.md §A.3 (generator limit, ħ = 1/(4β)),
§A.5 [RECON, standard Bakry–Émery]; Belkin & Niyogi (2008) (kernel Laplacians on submanifolds with the
ambient distance).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import array_api_compat
import numpy as np
import scipy.sparse
from scipy.spatial import cKDTree

from workbench.backend import check_view_size, host_array
from workbench.markov import carre_du_champ, gamma2
from workbench.memory import check_memory
from workbench.validation import as_array, check_finite_output, check_finite_result, check_in_range, check_integer

__all__ = ["KernelCalculus", "kernel_calculus_at", "sphere_product_quadrature", "torus_lattice"]


def sphere_product_quadrature(n_polar: int, n_azimuth: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights of the product rule (Gauss–Legendre in :math:`z`) × (uniform in :math:`\varphi`) on S².

    .. math::

        x = (\sqrt{1 - z_a^2}\cos\varphi_b,\ \sqrt{1 - z_a^2}\sin\varphi_b,\ z_a), \qquad
        w = \omega_a\,\frac{2\pi}{n_\varphi}, \qquad \varphi_b = \frac{2\pi b}{n_\varphi},

    with :math:`(z_a, \omega_a)` the Gauss–Legendre rule on :math:`[-1, 1]`.  It integrates spherical
    polynomials of degree :math:`< \min(2n_z, n_\varphi)` exactly; the weights sum to :math:`4\pi`.

    Parameters
    ----------
    n_polar, n_azimuth : int
        Number of Gauss–Legendre nodes in :math:`z` (1 to 2000: numpy's rule solves an eigenproblem of
        that size, 1.7 s at 2000) and of azimuths (≥ 3, within the available memory).

    Returns
    -------
    points : ndarray, shape=[n_polar·n_azimuth, 3]
    weights : ndarray, shape=[n_polar·n_azimuth]

    References
    ----------
    Atkinson & Han, *Spherical Harmonics and Approximations on the Unit Sphere* (2012), §5.2 (product rules).

    Examples
    --------
    >>> import numpy as np
    >>> x, w = sphere_product_quadrature(8, 16)
    >>> bool(np.isclose(w.sum(), 4 * np.pi)), bool(np.isclose(w @ x[:, 2] ** 2, 4 * np.pi / 3))  # ∫z² = 4π/3
    (True, True)
    """
    n_polar = check_integer("n_polar", n_polar, 1, 2000)
    n_azimuth = check_integer("n_azimuth", n_azimuth, 3)
    check_memory(
        f"a product rule of n_polar * n_azimuth = {n_polar} * {n_azimuth} nodes",
        8.0 * 6 * n_polar * n_azimuth,  # points (3), weights and two meshgrid planes
        "use fewer nodes",
    )
    z, omega = np.polynomial.legendre.leggauss(n_polar)
    phi = 2.0 * np.pi * np.arange(n_azimuth) / n_azimuth
    zz, pp = np.meshgrid(z, phi, indexing="ij")
    r = np.sqrt(1.0 - zz**2)
    points = np.stack([r * np.cos(pp), r * np.sin(pp), zz], axis=-1).reshape(-1, 3)
    weights = np.repeat(omega * (2.0 * np.pi / n_azimuth), n_azimuth)
    return points, weights


def torus_lattice(n: int, dim: int = 2, period: float = 2.0 * math.pi) -> tuple[np.ndarray, np.ndarray]:
    r"""The regular lattice :math:`\{(h k_1, \dots, h k_d)\}`, :math:`h = L/n`, of the flat torus :math:`(\mathbb R/L\mathbb Z)^d`.

    Weights are the cell volume :math:`h^d`; with the periodic distance, the Gauss kernel sum over the lattice
    equals its integral up to :math:`O(e^{-\pi^2/(\beta h^2)})` (Poisson summation).

    Parameters
    ----------
    n : int
        Nodes per side (≥ 3).
    dim : int
        Dimension d ≥ 1.
    period : float
        Side :math:`L > 0`.

    Returns
    -------
    points : ndarray, shape=[n^d, d], in :math:`[0, L)^d`
    weights : ndarray, shape=[n^d]

    Examples
    --------
    >>> x, w = torus_lattice(4, dim=2, period=1.0)
    >>> x.shape, float(w.sum())
    ((16, 2), 1.0)
    """  # noqa: E501
    n = check_integer("n", n, 3)
    dim = check_integer("dim", dim, 1)
    period = check_in_range("period", period, 0.0, low_inclusive=False)
    h = period / n
    try:
        volume = h**dim
    except OverflowError:
        volume = math.inf
    check_finite_result("the cell volume (period/n)^dim", volume, n=n, dim=dim, period=period)
    try:
        nodes = float(n) ** dim
    except OverflowError:
        nodes = math.inf
    check_memory(f"a torus lattice of n^dim = {n}^{dim} nodes", 8.0 * (dim + 2) * nodes, "use fewer nodes")
    axes = np.meshgrid(*([np.arange(n) * h] * dim), indexing="ij")
    points = np.stack([a.ravel() for a in axes], axis=-1)
    return points, np.full(n**dim, volume)


class KernelCalculus(NamedTuple):
    r"""Generator :math:`\mathcal L_\beta f`, :math:`\Gamma_\beta(f)` and :math:`\Gamma_{2,\beta}(f)` at the targets."""

    generator: np.ndarray
    gamma: np.ndarray
    gamma2: np.ndarray
    ball_size: int


def _periodic(period, dim):
    if period is None:
        return None
    period = check_in_range("period", period, 0.0, low_inclusive=False)
    return np.full(dim, period)


def kernel_calculus_at(points, weights, f, beta, targets, *, period=None, cutoff: float = 6.0) -> KernelCalculus:
    r"""Generator, carré du champ and :math:`\Gamma_2` of the weighted Gauss-kernel operator at chosen nodes.

    With rates :math:`W = 4\beta\,\mathsf P_\beta` (jump-rates convention of :func:`workbench.markov.gamma2`),

    .. math::

        \mathcal L_\beta f = 4\beta(\mathsf P_\beta - I)f,\quad
        \Gamma_\beta(f) = 2\beta\sum_j \mathsf P_\beta(x, x_j)(f_j - f(x))^2,\quad
        \Gamma_{2,\beta}(f) = \tfrac12\mathcal L_\beta\Gamma_\beta(f) - \Gamma_\beta(f, \mathcal L_\beta f),

    which tend to :math:`\Delta f`, :math:`\lvert\nabla f\rvert^2` and :math:`\lVert\operatorname{Hess}f\rVert^2
    + \operatorname{Ric}(\nabla f,\nabla f)` as :math:`\beta \to \infty` (bias :math:`O(1/\beta)`).  The kernel is
    cut at distance ``cutoff``:math:`/\sqrt\beta` (relative weight :math:`e^{-\mathrm{cutoff}^2}`); rows are built
    for the targets' one-step ball only, which is all :math:`\Gamma_2` at a target reads.

    Parameters
    ----------
    points : array, shape=[n, D]
        Nodes (in :math:`[0, L)^D` when ``period`` is given).
    weights : array, shape=[n]
        Positive quadrature weights.
    f : array, shape=[n] or [n, m]
        The function at the nodes (``m`` functions column by column).
    beta : float
        Kernel sharpness :math:`\beta > 0`.
    targets : array of int
        Node indices where the calculus is evaluated.
    period : float, optional
        Side :math:`L` of a periodic box (flat torus); distances are then the periodic ones.
    cutoff : float
        Kernel truncation radius in units of :math:`1/\sqrt\beta` (≥ 3).

    Returns
    -------
    KernelCalculus
        ``generator``, ``gamma``, ``gamma2`` at ``targets`` (shape [t] or [t, m]); ``ball_size`` = nodes in the
        two-step ball.

    References
    ----------
    Attention Geometry §5; book/reference.md §A.3, §A.5 [RECON].

    Examples
    --------
    On the flat torus :math:`f = \sin x` has :math:`\Delta f = -\sin x`, :math:`\lvert\nabla f\rvert^2 = \cos^2x`,
    :math:`\Gamma_2(f) = (f'')^2 = \sin^2 x`; at :math:`\beta = 40` the bias is ~1/β:

    >>> import numpy as np
    >>> x, w = torus_lattice(64, dim=2)
    >>> out = kernel_calculus_at(x, w, np.sin(x[:, 0]), 40.0, [64 * 10 + 3], period=2 * np.pi)
    >>> t = x[64 * 10 + 3, 0]
    >>> bool(abs(out.generator[0] + np.sin(t)) < 0.02), bool(abs(out.gamma2[0] - np.sin(t) ** 2) < 0.05)
    (True, True)
    """
    for name, value in (("points", points), ("weights", weights), ("f", f)):
        if array_api_compat.is_torch_array(value):
            raise TypeError(
                f"{name} must be a numpy array (kernel_calculus_at runs on scipy.sparse), got a torch tensor"
            )
    points = as_array("points", points, ndim=2)
    n, dim = points.shape
    weights = as_array("weights", weights, ndim=1)
    if weights.shape[0] != n or not np.all(weights > 0):
        raise ValueError(
            f"weights must be {n} positive numbers (one per point), matching points of shape {tuple(points.shape)}, "
            f"got shape {weights.shape}"
        )
    f = as_array("f", f)
    if f.ndim not in (1, 2) or f.shape[0] != n:
        raise ValueError(f"f must have shape [{n}] or [{n}, m] (one row per point), got shape {f.shape}")
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    # Γ₂,β carries (4β)²: refuse a β whose square leaves the double range rather than return inf − inf.
    check_finite_result("(4 * beta)**2", (4.0 * beta) ** 2 if beta < 1e150 else math.inf, beta=beta)
    cutoff = check_in_range("cutoff", cutoff, 3.0)
    check_view_size("targets", targets)
    targets = np.atleast_1d(host_array("targets", targets))
    if targets.dtype.kind not in "iu" or targets.ndim != 1 or np.any((targets < 0) | (targets >= n)):
        raise ValueError(f"targets must be node indices in [0, {n}), got {targets.tolist()!r}")
    box = _periodic(period, dim)
    if box is not None and (np.any(points < 0) or np.any(points >= box)):
        raise ValueError(f"points must lie in [0, period) = [0, {box[0]}) when period is given")
    radius = cutoff / math.sqrt(beta)
    tree = cKDTree(points, boxsize=box)
    one_step = np.unique(
        np.concatenate([np.asarray(b, dtype=np.int64) for b in tree.query_ball_point(points[targets], radius)])
    )
    neighbours = tree.query_ball_point(points[one_step], radius)
    two_step = np.unique(np.concatenate([one_step] + [np.asarray(b, dtype=np.int64) for b in neighbours]))
    local = np.full(n, -1)
    local[two_step] = np.arange(two_step.size)
    rows, cols, vals = [], [], []
    for i, ball in zip(one_step, neighbours, strict=True):
        ball = np.asarray(ball, dtype=np.int64)
        delta = points[ball] - points[i]
        if box is not None:
            delta -= box * np.round(delta / box)
        k = np.exp(-beta * np.einsum("ij,ij->i", delta, delta)) * weights[ball]
        rows.append(np.full(ball.size, local[i]))
        cols.append(local[ball])
        vals.append(4.0 * beta * k / k.sum())
    size = two_step.size
    rates = scipy.sparse.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(size, size)
    )
    f_local = f[two_step]
    at = local[targets]
    degree = rates.sum(axis=1)
    # Σ_j W_ij (f_j − f_i), column by column for f of shape [n, m]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing f is refused just below
        generator = rates @ f_local - (degree if f_local.ndim == 1 else degree[:, None]) * f_local
    check_finite_output("the generator L_beta f", generator, f=f, beta=beta)
    try:
        gamma, gamma_two = carre_du_champ(rates, f_local)[at], gamma2(rates, f_local)[at]
    except ValueError as exc:  # the local rates are finite and at most 4β, so it is f (or β) that overflows
        raise ValueError(
            f"the carré du champ and Γ₂ of f (quadratic in f, with factors up to (4 beta)² = {(4 * beta) ** 2:g}) "
            f"overflow double precision for f with largest |entry| {float(np.abs(f).max()):.3g}; rescale f"
        ) from exc
    return KernelCalculus(generator=np.asarray(generator)[at], gamma=gamma, gamma2=gamma_two, ball_size=int(size))
