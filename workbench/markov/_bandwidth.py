r"""Choosing the inverse bandwidth of the Gauss kernel :math:`K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)`.

Two rules:

* the median rule, :math:`\beta = 1/\operatorname{median}_{i<j}\lVert x_i - x_j\rVert^2` (the default of the
  paper author's code, book/reference.md §A.2);
* the kernel-sum sweep of Coifman et al. (2008) and Berry, Giannakis & Harlim (2015): on samples of a
  :math:`d`-dimensional manifold, :math:`S(\beta) = \sum_{ij} K_{ij}` grows like
  :math:`\beta^{-d/2}` on the range of scales where the kernel is local but still sees many
  neighbours, so the slope of :math:`\log S` against :math:`\log(1/\beta)` peaks near :math:`d/2`.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2; book/reference.md §A.2.
R. R. Coifman, Y. Shkolnisky, F. J. Sigworth and A. Singer, Graph Laplacian tomography from unknown
random projections, IEEE Trans. Image Process. 17 (2008) 1891--1899.
T. Berry, D. Giannakis and J. Harlim, Nonparametric forecasting of low-dimensional dynamical systems,
Phys. Rev. E 91 (2015) 032915.
T. Berry and J. Harlim, Variable bandwidth diffusion kernels, Appl. Comput. Harmon. Anal. 40 (2016)
68--96, §5.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.distance import pdist

from workbench.backend import to_numpy
from workbench.markov._kernels import neighbour_pairs, pair_squared_distances
from workbench.markov._manifolds import generator
from workbench.validation import as_array, check_integer

__all__ = ["BandwidthSweep", "DegenerateBandwidthWarning", "bandwidth_sweep", "median_bandwidth"]

#: Grid density of the default sweep (points per decade of β).
_POINTS_PER_DECADE = 10


def _check_points(points) -> np.ndarray:
    points = to_numpy(as_array("points", points, ndim=2))
    if points.shape[0] < 2:
        raise ValueError(f"points must hold at least 2 points (rows), got shape {points.shape}")
    return points


def median_bandwidth(points, *, max_points=2000, seed=None) -> float:
    r"""Median rule :math:`\beta = 1 / \operatorname{median}_{i<j} \lVert x_i - x_j\rVert^2`.

    The median runs over distinct pairs :math:`i < j` (the zero diagonal is excluded).  Above
    ``max_points`` samples it is taken over a uniform subsample of ``max_points`` points without
    replacement (drawn with ``seed``), which costs :math:`O(\text{max\_points}^2)` instead of
    :math:`O(n^2)`; the sample median of :math:`\sim 2\times 10^6` pairs is accurate to well
    under 1% for any continuous distance law.

    Parameters
    ----------
    points : array, shape=[n, D]
        Row-vector samples, :math:`n \ge 2` (numpy or torch; the result is a float).
    max_points : int
        Subsample size above which the median is estimated, :math:`\ge 2`.
    seed : None, int or numpy.random.Generator
        Randomness of the subsample (unused when :math:`n \le` ``max_points``).

    Returns
    -------
    float
        :math:`\beta > 0`, for the kernel :math:`\exp(-\beta\lVert x-y\rVert^2)`.

    Raises
    ------
    ValueError
        If more than half of the pairs coincide (the median squared distance is 0).

    References
    ----------
    book/reference.md §A.2 [CODE: DMAE ``eager_map.py``, default β = 1/median(d²)].

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [3.0]])   # squared distances 1, 9, 4: median 4
    >>> median_bandwidth(x)
    0.25
    """
    points = _check_points(points)
    max_points = check_integer("max_points", max_points, 2)
    rng = generator(seed)  # checked even when no subsample is drawn: a bad seed is refused at every size
    if points.shape[0] > max_points:
        chosen = rng.choice(points.shape[0], size=max_points, replace=False)
        points = points[chosen]
    median = float(np.median(pdist(points, "sqeuclidean")))
    if median <= 0.0:
        raise ValueError(
            "points must have a positive median pairwise squared distance (more than half of the pairs "
            f"coincide), got {median:g}"
        )
    if not math.isfinite(median):  # 1 / median would be a silent β = 0
        raise ValueError(
            "points must have a median pairwise squared distance within double precision for the median rule, "
            f"got {median!r} (largest |points| entry {float(np.abs(points).max()):.3g}); rescale points"
        )
    return 1.0 / median


class BandwidthSweep(NamedTuple):
    r"""Result of :func:`bandwidth_sweep`.

    Attributes
    ----------
    beta : float
        The chosen inverse bandwidth: the grid point of largest slope.
    dimension : float
        Intrinsic-dimension estimate :math:`2\max_\beta \frac{d\log S}{d\log(1/\beta)}`.
    betas : numpy.ndarray
        The grid, ascending.
    sums : numpy.ndarray
        :math:`S(\beta) = \sum_{ij} K_{ij}` on the grid.
    slopes : numpy.ndarray
        :math:`d\log S / d\log(1/\beta)` on the grid (second-order finite differences).
    """

    beta: float
    dimension: float
    betas: np.ndarray
    sums: np.ndarray
    slopes: np.ndarray


def _default_betas(points, seed) -> np.ndarray:
    r"""Default log grid of :func:`bandwidth_sweep`, ten points per decade.

    From :math:`\varepsilon = \operatorname{median}(d^2)/10` down to
    :math:`\operatorname{median}(d^2_{\mathrm{NN}})/100`, :math:`\beta = 1/\varepsilon`; :math:`d^2` are
    pairwise and :math:`d^2_{\mathrm{NN}}` nearest-neighbour squared distances (coincident points
    ignored).  The grid spans at least two decades, so the
    peak of the slope is interior.
    """
    eps_max = 0.1 / median_bandwidth(points, seed=seed)
    _, nn = cKDTree(points).query(points, k=2, workers=-1)
    nn_d2 = pair_squared_distances(points, np.arange(points.shape[0]), nn[:, 1])
    nn_d2 = nn_d2[nn_d2 > 0]
    eps_min = float(np.median(nn_d2)) / 100.0 if nn_d2.size else eps_max * 1e-4
    eps_min = min(eps_min, eps_max * 1e-2)
    num = max(16, math.ceil(_POINTS_PER_DECADE * math.log10(eps_max / eps_min)) + 1)
    return np.logspace(-math.log10(eps_max), -math.log10(eps_min), num)


def bandwidth_sweep(points, betas=None, *, k=None, seed=None) -> BandwidthSweep:
    r"""Kernel-sum sweep: :math:`S(\beta) = \sum_{ij} e^{-\beta\lVert x_i - x_j\rVert^2}` and its log-log slope.

    For :math:`n` samples of density :math:`\rho` on a :math:`d`-dimensional manifold and
    :math:`\varepsilon = 1/\beta` small against its curvature but large against the sample spacing,

    .. math::

        S(\beta) \approx n + n^2 (\pi/\beta)^{d/2} \int_M \rho^2\,dV,
        \qquad
        \frac{d \log S}{d \log(1/\beta)} \approx \frac d2 \cdot \frac{S - n}{S},

    so the slope rises from 0 (only the diagonal, :math:`\beta` large) towards :math:`d/2`, and
    falls back to 0 when the kernel sees the whole data set (:math:`S \to n^2`).  The chosen
    :math:`\beta` is the argmax of the slope on the grid, and ``dimension`` is twice the maximum.
    Both are heuristics: finite :math:`n` biases the peak below :math:`d/2`, curvature of the
    embedding can push it above.

    Parameters
    ----------
    points : array, shape=[n, D]
        Row-vector samples (numpy or torch; computed in numpy).
    betas : array_like, optional
        At least 3 distinct positive values.  Default: a log grid of ten points per decade from
        :math:`\beta = 10/\operatorname{median}\lVert x_i-x_j\rVert^2` to
        :math:`100/\operatorname{median}_i \lVert x_i - x_{\mathrm{NN}(i)}\rVert^2` (see the Notes).
    k : int, optional
        If given, sum only over the symmetrised :math:`k`-nearest-neighbour graph (plus the
        diagonal): :math:`O(nk)` memory and time per grid point instead of :math:`O(n^2)`, for large
        :math:`n`.  The dropped far pairs make :math:`S` saturate at small :math:`\beta`, where the
        slope then falls to 0, so the argmax still lands at a local scale; but the peak is lower,
        the more so the smaller ``k`` (measured on 1000--4000 samples of :math:`S^2`: dimension
        1.66 at ``k=30``, 1.86 at ``k=100``, 1.94 at ``k=300``).
    seed : None, int or numpy.random.Generator
        For the subsample of the median rule in the default grid (see :func:`median_bandwidth`).

    Returns
    -------
    BandwidthSweep
        ``(beta, dimension, betas, sums, slopes)``, grid ascending in :math:`\beta`.

    Notes
    -----
    The default grid stops at a tenth of the median squared distance, because at scales comparable
    to the extent of the data the slope measures the embedding rather than the dimension: on the
    uniform unit circle :math:`\mathbb E S - n \propto e^{-c}I_0(c)`, :math:`c = 2\beta`, whose slope
    :math:`c(1 - I_1(c)/I_0(c))` overshoots to 0.609 at :math:`c \approx 1.7` (chords are shorter
    than arcs) but is 0.513 at :math:`c = 10`.  A consequence: on the default grid the dense slope is
    often still rising at the largest scale (a plateau tilted by curvature), and the chosen
    :math:`\beta` is then the first grid point, :math:`10/\operatorname{median}\lVert x_i-x_j\rVert^2`;
    pass a wider ``betas`` to see the whole curve.  With ``k`` the saturation of the truncated sum
    gives an interior peak.  The dense path costs :math:`O(n^2)` per grid point.

    References
    ----------
    Coifman et al. (2008) §III; Berry, Giannakis & Harlim (2015); Berry & Harlim (2016) §5.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.markov._kernels import gauss_kernel
    >>> x = np.random.default_rng(0).uniform(size=(300, 1))
    >>> sweep = bandwidth_sweep(x)
    >>> bool(np.isclose(sweep.sums[0], gauss_kernel(x, sweep.betas[0]).sum()))   # dense reference
    True
    >>> bool(abs(sweep.dimension - 1.0) < 0.15)                                   # an interval: d = 1
    True
    """
    points = _check_points(points)
    seed = generator(seed)  # refused here even when betas are given and no subsample is drawn
    n = points.shape[0]
    if k is not None:
        k = check_integer("k", k, 1, n - 1)
        pair_d2 = pair_squared_distances(points, *neighbour_pairs(points, k))
    else:
        pair_d2 = pdist(points, "sqeuclidean")
    if betas is None:
        betas = _default_betas(points, seed)
    else:
        betas = to_numpy(as_array("betas", betas, ndim=1))
        if betas.size < 3:
            raise ValueError(f"betas must hold at least 3 values (for a slope), got {betas.size}")
        if betas.min() <= 0:
            raise ValueError(f"betas must be positive, got minimum {betas.min():g}")
        betas = np.sort(betas)
        if np.any(np.diff(betas) == 0):
            raise ValueError(f"betas must be distinct, got {betas[np.argmax(np.diff(betas) == 0)]:g} twice")
    # pairs i < j, each once: S = n (diagonal) + 2 Σ_{i<j} K_ij
    sums = np.array([n + 2.0 * np.exp(-beta * pair_d2).sum() for beta in betas])
    slopes = np.gradient(np.log(sums), -np.log(betas))
    best = int(np.argmax(slopes))
    return BandwidthSweep(
        beta=float(betas[best]), dimension=float(2.0 * slopes[best]), betas=betas, sums=sums, slopes=slopes
    )


#: A dense Gauss kernel is called degenerate when a typical point's kernel mass q_i = Σ_j K_ij (its effective
#: number of neighbours, K_ij <= 1) exceeds this fraction of the sample.  A kernel local on a d-manifold has
#: q_i/n ≈ ρ(π/β)^{d/2} -> 0; the median rule puts half of all pairs at K >= e^{-1} (mean q_i/n >= 0.18 on any
#: sample).  Measured medians: 0.40-0.44 under the median rule (Swiss rolls and Gaussian blobs, n = 60 to 5000);
#: at most 0.075 for the dense kernels of the repository's checks (Laplace-Beltrami rate sweeps, n = 800 and
#: 1000, at their widest β).  0.2 sits 2.5x above the widest well-posed kernel and 2x below the median rule.
DEGENERATE_KERNEL_MASS = 0.2

#: Below this many points the degenerate-bandwidth warning stays silent: on a Swiss roll the advised remedy
#: (k=15) resolves the roll only from about 500 points (|Spearman| >= 0.97 against arc length at n = 500,
#: <= 0.66 at n = 300, five seeds each), and the dense kernel costs well under a second there.
DEGENERATE_MIN_POINTS = 500


class DegenerateBandwidthWarning(UserWarning):
    """A dense Gauss kernel of :meth:`MarkovOperator.from_points` is so wide that its walk sees the ambient space.

    The message gives the measured kernel mass and what to change (``k=15``, or a larger ``beta``).
    """


def warn_if_degenerate(degree, beta: float, default: bool) -> None:
    """Warn when a dense kernel's typical mass q_i = Σ_j K_ij is a large fraction of the sample (from_points)."""
    degree = to_numpy(degree)
    n = degree.shape[0]
    if n < DEGENERATE_MIN_POINTS:
        return
    fraction = float(np.median(degree)) / n
    if fraction <= DEGENERATE_KERNEL_MASS:
        return
    origin = "the median rule, the dense default" if default else "as given"
    warnings.warn(
        f"degenerate bandwidth: a typical point's kernel mass Σ_j K_ij covers {fraction:.0%} of the n = {n} points "
        f"(median over points; above {DEGENERATE_KERNEL_MASS:.0%} the walk sees ambient distances, not the sampled "
        f"manifold's, and diffusion coordinates need not follow it) at beta = {beta:.3g} ({origin}); pass k=15 "
        "(a sparse 15-nearest-neighbour kernel with a self-tuned bandwidth, O(n·k) memory and a sparse "
        f"eigensolver instead of the dense O(n²) memory and O(n³) eigensolve) or a larger beta (a narrower kernel)",
        DegenerateBandwidthWarning,
        stacklevel=3,
    )
