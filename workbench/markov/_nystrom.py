r"""Kernels between new points and a training sample, for the Nyström extension of a diffusion map.

:meth:`MarkovOperator.nystrom <workbench.markov.MarkovOperator.nystrom>` extends the eigenfunctions of an
operator built by :meth:`~workbench.markov.MarkovOperator.from_points` to new points :math:`x` through the
same Gauss kernel :math:`\mathsf K(x, x_j) = e^{-\beta\lVert x - x_j\rVert^2}` against the training
points, with the training kernel's sparsity rule (dense, k nearest neighbours by union, or a radius).
:func:`cross_kernel` builds those rows; :func:`drop_coincident` removes the self-weight of a new point that
coincides with a training point when the training kernel had its diagonal dropped.  Package-internal.

References
----------
R. R. Coifman and S. Lafon, "Geometric harmonics", Appl. Comput. Harmon. Anal. 21 (2006) 31–52;
R. R. Coifman and S. Lafon, "Diffusion maps", Appl. Comput. Harmon. Anal. 21 (2006) 5–30;
book/reference.md §A.2.
"""

from __future__ import annotations

import math

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.validation import is_sparse

__all__ = []  # package-internal helpers only


def cross_kernel(points, train, beta, k, radius):
    """Gauss kernel rows of new ``points`` against the ``train`` points, with the training kernel's sparsity rule."""
    if k is None and radius is None:
        xp = namespace(points)
        diff = points[:, None, :] - train[None, :, :]
        with np.errstate(over="ignore"):  # β d² past the double range: e^{-∞} = 0, the correctly rounded value
            return xp.exp(-beta * xp.sum(diff * diff, axis=-1))
    import scipy.sparse
    from scipy.spatial import cKDTree

    # The neighbour rule is scale-invariant: the trees see both clouds divided by one power of two (exact),
    # so that their squared distances cannot overflow; the kernel values use the unscaled coordinates.
    extent = max(float(np.abs(points).max()), float(np.abs(train).max()))
    shift = -math.frexp(extent)[1] if 0.0 < extent < math.inf else 0
    shift = shift if abs(shift) > 256 else 0  # as in gauss_kernel_sparse: ordinary coordinates are left alone
    points_scaled, train_scaled = np.ldexp(points, shift), np.ldexp(train, shift)
    tree = cKDTree(train_scaled)
    m = points.shape[0]
    if k is not None:
        # The training kernel keeps j ~ i when either is among the other's k nearest (union).  The
        # same rule for a new x: j among x's k nearest training points, or x within j's own k-th
        # neighbour distance r_k(j).  At a training point this is exactly its kernel row.
        _, index = tree.query(points_scaled, k=k + 1, workers=-1)
        nearest = scipy.sparse.csr_array(
            (np.ones(m * (k + 1)), (np.repeat(np.arange(m), k + 1), index.ravel())), shape=(m, train.shape[0])
        )
        reach = tree.query(train_scaled, k=k + 1, workers=-1)[0][:, -1]
        within = cKDTree(points_scaled).sparse_distance_matrix(tree, float(reach.max()), output_type="coo_matrix")
        keep = within.data <= reach[within.col]
        within = scipy.sparse.csr_array(
            (np.ones(int(keep.sum())), (within.row[keep], within.col[keep])), shape=nearest.shape
        )
        pattern = (nearest + within).tocoo()
        diff = points[pattern.row] - train[pattern.col]
        with np.errstate(over="ignore"):  # e^{-∞} = 0, as above
            values = np.exp(-beta * np.einsum("ij,ij->i", diff, diff))
        return scipy.sparse.csr_array((values, (pattern.row, pattern.col)), shape=nearest.shape)
    # keeps d = 0; the distances come back in the scaled unit
    pairs = cKDTree(points_scaled).sparse_distance_matrix(tree, math.ldexp(radius, shift), output_type="coo_matrix")
    with np.errstate(over="ignore"):  # e^{-∞} = 0, as above
        values = np.exp(-beta * np.ldexp(pairs.data, -shift) ** 2)
    return scipy.sparse.csr_array((values, (pairs.row, pairs.col)), shape=(m, train.shape[0]))


def drop_coincident(cross, points, train):
    """Zero the cross-kernel entries of new points that coincide with a training point."""
    from scipy.spatial import cKDTree

    distance, index = cKDTree(to_numpy(train)).query(to_numpy(points), k=1)
    hits = np.flatnonzero(distance == 0.0)
    if hits.size == 0:
        return cross
    if is_sparse(cross):
        cross = cross.tolil()
        cross[hits, index[hits]] = 0.0
        return cross.tocsr()
    xp = namespace(cross)
    mask = np.zeros(tuple(cross.shape), dtype=bool)
    mask[hits, index[hits]] = True
    keep = xp.asarray(~mask, device=array_api_compat.device(cross))
    return xp.where(keep, cross, xp.zeros_like(cross))
