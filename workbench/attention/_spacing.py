r"""Sample quality against a training set: the nearest-target distance :math:`d_{\mathrm{NN}}` and the native spacing.

The distance of generated samples to their nearest training point, and the training set's own spacing
(each point to its nearest other point) as the scale to read it against.

The exact formulas of the paper's Table 1 metrics were not recovered; the ones here are reconstructions
consistent with every constraint in the paper ([RECON], book/reference.md §A.10).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; book/reference.md §A.10, §A.12 [RECON].
"""

from __future__ import annotations

import numpy as np

from workbench.attention._overflow import binary_scale
from workbench.backend import to_numpy
from workbench.validation import as_array, check_choice, check_matching

__all__ = ["native_spacing", "nearest_target_distance"]


#: The reductions accepted by the distance diagnostics.
REDUCTIONS = ("mean", "median")


def _points(name: str, x):
    x = to_numpy(as_array(name, x, ndim=2))
    if x.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one point, got shape {x.shape}")
    return x


def _common_scale(*points: np.ndarray) -> float:
    # Distances are homogeneous of degree 1: computed on x / 2^e and multiplied back (powers of two are exact),
    # the squares inside the tree never overflow (points near 1e300) or underflow (points near 1e-300).
    return float(max(binary_scale(x) for x in points))


def _reduce(distances: np.ndarray, reduce: str) -> float:
    return float(np.mean(distances) if reduce == "mean" else np.median(distances))


def nearest_target_distance(generated, train, reduce: str = "mean") -> float:
    r"""Nearest-target distance :math:`d_{\mathrm{NN}}` of generated samples to a training set [RECON].

    .. math::

        d_{\mathrm{NN}} = \frac1M\sum_{m=1}^{M}\min_{r \in \text{train}}\lVert x_m - r\rVert_2

    (the median instead of the mean with ``reduce="median"``).  Compare it with :func:`native_spacing`:
    samples on the data manifold sit about one native spacing from their nearest training point; a value
    far below it means memorisation, far above it off-manifold samples.  Computed with a k-d tree
    (:class:`scipy.spatial.cKDTree`).

    Parameters
    ----------
    generated : array, shape=[M, D]
        Samples (numpy or torch; distances are computed on the host).
    train : array, shape=[N, D]
        Training points.
    reduce : {'mean', 'median'}
        How the :math:`M` nearest distances are summarised.

    Returns
    -------
    float

    References
    ----------
    Attention Geometry Table 1 (:math:`d_{\mathrm{NN}}`, 0.0494–0.0512 on 4000 training points);
    book/reference.md §A.10 [RECON] (mean or median not recovered).

    Examples
    --------
    >>> import numpy as np
    >>> train = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> nearest_target_distance(np.array([[0.0, 0.3], [0.9, 0.0]]), train)  # (0.3 + 0.1) / 2
    0.2
    """
    reduce = check_choice("reduce", reduce, REDUCTIONS)
    generated, train = _points("generated", generated), _points("train", train)
    check_matching("generated columns", generated.shape[1], "train columns", train.shape[1])
    from scipy.spatial import cKDTree

    scale = _common_scale(generated, train)
    distances, _ = cKDTree(train / scale).query(generated / scale, k=1)
    return _reduce(distances, reduce) * scale


def native_spacing(train, reduce: str = "mean") -> float:
    r"""Native spacing of a point set: the distance from each point to its nearest *other* point.

    .. math::

        s = \frac1N\sum_{i=1}^{N}\min_{j \ne i}\lVert x_i - x_j\rVert_2

    (the median with ``reduce="median"``), the reference scale for :func:`nearest_target_distance`.
    Duplicated points have spacing 0.

    Parameters
    ----------
    train : array, shape=[N, D]
        At least two points.
    reduce : {'mean', 'median'}

    Returns
    -------
    float

    References
    ----------
    book/reference.md §A.10 [RECON] ("close to the native spacing").

    Examples
    --------
    >>> import numpy as np
    >>> grid = np.stack(np.meshgrid(np.arange(4.0), np.arange(3.0)), axis=-1).reshape(-1, 2) * 0.05
    >>> round(native_spacing(grid), 12)  # every lattice point has a neighbour at the lattice step
    0.05
    """
    reduce = check_choice("reduce", reduce, REDUCTIONS)
    train = _points("train", train)
    if train.shape[0] < 2:
        raise ValueError(f"train must hold at least 2 points, got {train.shape[0]}")
    from scipy.spatial import cKDTree

    scale = _common_scale(train)
    distances, _ = cKDTree(train / scale).query(train / scale, k=2)
    # Column 0 is the point itself (distance 0); column 1 its nearest other point (0 for a duplicate).
    return _reduce(distances[:, 1], reduce) * scale
