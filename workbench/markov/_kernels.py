"""Kernels on point clouds."""

from __future__ import annotations

import array_api_compat

from workbench._backend import namespace
from workbench._validation import as_array, check_in_range

__all__ = ["gauss_kernel", "squared_distances"]


def squared_distances(points):
    r"""Pairwise squared Euclidean distances :math:`d^2_{ij} = \lVert x_i - x_j \rVert^2`.

    Computed from coordinate differences (not from the Gram expansion
    :math:`\lVert x\rVert^2 + \lVert y\rVert^2 - 2x\cdot y`, which cancels catastrophically for
    nearby points), so the diagonal is exactly zero and every entry is nonnegative.

    Parameters
    ----------
    points : array, shape=[..., n, d]
        Row-vector samples :math:`x_i`.

    Returns
    -------
    array, shape=[..., n, n]

    Examples
    --------
    >>> import numpy as np
    >>> squared_distances(np.array([[0.0, 0.0], [3.0, 4.0]])).tolist()
    [[0.0, 25.0], [25.0, 0.0]]
    """
    points = as_array("points", points, min_ndim=2)
    if array_api_compat.is_torch_array(points):
        import torch

        d = torch.cdist(points, points, compute_mode="donot_use_mm_for_euclid_dist")
        return d * d
    import numpy as np
    from scipy.spatial.distance import cdist

    if points.ndim == 2:
        return cdist(points, points, "sqeuclidean")
    flat = points.reshape(-1, *points.shape[-2:])
    out = np.stack([cdist(x, x, "sqeuclidean") for x in flat])
    return out.reshape(*points.shape[:-1], points.shape[-2])


def gauss_kernel(points, beta):
    r"""Gauss kernel :math:`K_{ij} = \exp(-\beta \lVert x_i - x_j \rVert^2)` on a point cloud.

    The scale is the inverse bandwidth :math:`\beta = 1/\varepsilon`, with no factor 2 or 4 inside
    the exponent; this is the convention under which
    :math:`4\hbar\beta(I - \mathsf P_\beta) \to \mathcal C` (attention-geometry-math §A.2).

    Parameters
    ----------
    points : array, shape=[..., n, d]
        Row-vector samples.
    beta : float
        Inverse bandwidth, :math:`\beta > 0`.

    Returns
    -------
    array, shape=[..., n, n]
        Symmetric, entrywise positive, unit diagonal.

    References
    ----------
    Attention Geometry (Candanedo, arXiv 2604.09560) §2; attention-geometry-math §A.2 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> K = gauss_kernel(np.array([[0.0], [1.0]]), beta=2.0)
    >>> bool(np.isclose(K[0, 1], np.exp(-2.0)))
    True
    """
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    d2 = squared_distances(points)
    xp = namespace(d2)
    return xp.exp(-beta * d2)
