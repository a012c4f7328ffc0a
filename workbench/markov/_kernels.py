r"""Kernels on point clouds: the Gauss kernel (dense and sparse) and its α-normalisation.

Scale convention throughout: :math:`K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)`, with
:math:`\beta = 1/\varepsilon` and no factor 2 or 4 in the exponent (book/reference.md §A.2).

Sparse kernels are :class:`scipy.sparse.csr_array` (the array interface: ``@`` is the matrix
product and ``*`` is entrywise, as for numpy arrays); this is also what
:func:`networkx.to_scipy_sparse_array` returns.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2; book/reference.md §A.2.
R. R. Coifman and S. Lafon, Diffusion maps, Appl. Comput. Harmon. Anal. 21 (2006) 5--30, §2.3
(the α-normalisation).
"""

from __future__ import annotations

import math
from numbers import Integral

import array_api_compat
import numpy as np
import scipy.sparse
from scipy.spatial import cKDTree

from workbench.backend import namespace
from workbench.markov._operators import positive_row_sums
from workbench.memory import check_memory
from workbench.validation import (
    as_array,
    as_scalar,
    check_finite_output,
    check_in_range,
    check_nonnegative,
    check_square,
)

__all__ = ["alpha_normalize", "gauss_kernel", "gauss_kernel_sparse", "squared_distances"]


def _pairwise_squared_distances(points):
    # d²_ij from coordinate differences; entries past the double range are inf (gauss_kernel maps them to 0).
    if array_api_compat.is_torch_array(points):
        import torch

        d = torch.cdist(points, points, compute_mode="donot_use_mm_for_euclid_dist")
        return d * d
    from scipy.spatial.distance import cdist

    if points.ndim == 2:
        return cdist(points, points, "sqeuclidean")
    flat = points.reshape(-1, *points.shape[-2:])
    out = np.stack([cdist(x, x, "sqeuclidean") for x in flat])
    return out.reshape(*points.shape[:-1], points.shape[-2])


def _check_pairwise_memory(points):
    n, batch = int(points.shape[-2]), math.prod(int(s) for s in points.shape[:-2])
    # The n×n result and one temporary of the same size (cdist's output, then the caller's exp).
    check_memory(
        f"the dense pairwise distances of points (n = {n}{f', batch {batch}' if batch > 1 else ''})",
        2.0 * batch * n * n * points.dtype.itemsize,
        "use gauss_kernel_sparse (a kNN or radius graph) or fewer points",
    )


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
    _check_pairwise_memory(points)
    return check_finite_output("squared_distances", _pairwise_squared_distances(points), points=points)


def gauss_kernel(points, beta):
    r"""Gauss kernel :math:`K_{ij} = \exp(-\beta \lVert x_i - x_j \rVert^2)` on a point cloud.

    The scale is the inverse bandwidth :math:`\beta = 1/\varepsilon`, with no factor 2 or 4 inside
    the exponent; this is the convention under which
    :math:`4\hbar\beta(I - \mathsf P_\beta) \to \mathcal C` (book/reference.md §A.2).

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
    Attention Geometry (Candanedo, arXiv 2604.09560) §2; book/reference.md §A.2 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> K = gauss_kernel(np.array([[0.0], [1.0]]), beta=2.0)
    >>> bool(np.isclose(K[0, 1], np.exp(-2.0)))
    True
    """
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    points = as_array("points", points, min_ndim=2)
    _check_pairwise_memory(points)
    d2 = _pairwise_squared_distances(points)  # an infinite d² (points near 1e300) is a kernel entry 0 below
    xp = namespace(d2)
    with np.errstate(over="ignore"):  # β d² past the double range: e^{-∞} = 0, the correctly rounded value
        return xp.exp(-beta * d2)


#: Binary exponent beyond which :func:`neighbour_pairs` rescales the coordinates (2^256 ≈ 1e77: squared
#: distances of coordinates up to it stay far inside the double range).
_TREE_EXPONENT = 256


def neighbour_pairs(points, k=None, radius=None):
    """The edges {i, j}, i < j, of the k-nearest-neighbour or fixed-radius graph, each listed once.

    kNN: j among the k nearest neighbours of i (self excluded) or i among those of j (union).
    Radius: ‖x_i - x_j‖ <= radius.  Uses :class:`scipy.spatial.cKDTree`.
    """
    n = points.shape[0]
    # The graph is scale-invariant: coordinates far from 1 are brought near it by a power of two (exact), so
    # that the tree's squared distances neither overflow (every neighbour "at infinity") nor underflow (ties).
    extent = float(np.abs(points).max()) if points.size else 0.0
    if extent > 0.0 and abs(math.frexp(extent)[1]) > _TREE_EXPONENT:
        shift = -math.frexp(extent)[1]
        points = np.ldexp(points, shift)
        radius = None if radius is None else math.ldexp(radius, shift)
    tree = cKDTree(points)
    if radius is not None:
        pairs = tree.query_pairs(radius, output_type="ndarray")  # i < j, each pair once
        return pairs[:, 0], pairs[:, 1]
    _, index = tree.query(points, k=k + 1, workers=-1)
    index = index.reshape(n, k + 1)
    # Drop self from each row.  With duplicate points self may tie with a twin and not come first,
    # or not appear at all; then the farthest of the k + 1 is dropped, leaving exactly k.
    is_self = index == np.arange(n)[:, None]
    is_self[~is_self.any(axis=1), -1] = True
    rows, cols = np.repeat(np.arange(n), k), index[~is_self]
    # Union symmetrisation: an undirected edge found from both ends is kept once.
    # (sort + first-of-run mask: np.unique does the same work but ~20× slower on 10⁶ int64 keys.)
    edges = np.sort(np.minimum(rows, cols) * n + np.maximum(rows, cols))
    edges = edges[np.concatenate([[True], edges[1:] != edges[:-1]])]
    return edges // n, edges % n


def pair_squared_distances(points, i, j):
    """‖x_i - x_j‖² from coordinate differences (as :func:`squared_distances`), for index arrays i, j."""
    diff = points[i] - points[j]
    return np.einsum("ij,ij->i", diff, diff)


def gauss_kernel_sparse(points, beta, *, k=None, radius=None):
    r"""Sparse Gauss kernel :math:`K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)` on a neighbour graph.

    Entries are kept on the edges of one of two graphs (give exactly one of ``k``, ``radius``):

    * ``k``: :math:`j` is among the ``k`` nearest neighbours of :math:`i` (self excluded) *or*
      :math:`i` among those of :math:`j` -- the union, so :math:`K` is symmetric;
    * ``radius``: :math:`\lVert x_i - x_j\rVert \le` ``radius``.

    The diagonal is :math:`K_{ii} = 1`.  Neighbours come from :class:`scipy.spatial.cKDTree`
    (``query`` with ``workers=-1``; ``query_pairs`` for the radius graph); the values are then
    computed from coordinate differences, exactly as in :func:`gauss_kernel`, so a radius above the
    diameter reproduces the dense kernel to rounding.  Entries that underflow to zero stay stored,
    so the sparsity pattern is the neighbour graph.

    Parameters
    ----------
    points : numpy array, shape=[n, D]
        Row-vector samples (numpy only: scipy.sparse has no torch counterpart).
    beta : float
        Inverse bandwidth, :math:`\beta > 0`.
    k : int, optional
        Number of nearest neighbours, :math:`1 \le k \le n - 1`.
    radius : float, optional
        Neighbourhood radius, :math:`> 0` (a distance, not a squared distance).

    Returns
    -------
    scipy.sparse.csr_array, shape=[n, n]
        Symmetric, nonnegative, unit diagonal, sorted indices.

    References
    ----------
    Attention Geometry §2; book/reference.md §A.2 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [3.0]])
    >>> K = gauss_kernel_sparse(x, 0.5, k=1)   # 1-NN: 0-1, 1-0 and 2-1; union adds 1-2
    >>> K.toarray().round(4).tolist()
    [[1.0, 0.6065, 0.0], [0.6065, 1.0, 0.1353], [0.0, 0.1353, 1.0]]
    >>> bool(np.allclose(gauss_kernel_sparse(x, 0.5, radius=10.0).toarray(), gauss_kernel(x, 0.5)))
    True
    """
    if array_api_compat.is_torch_array(points):
        raise TypeError(
            "points must be a numpy array for a sparse kernel (scipy.sparse is numpy only), "
            f"got {type(points).__module__}.{type(points).__name__}"
        )
    points = as_array("points", points, ndim=2)
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    if (k is None) == (radius is None):
        raise ValueError(f"exactly one of k and radius must be given, got k={k!r} and radius={radius!r}")
    n = points.shape[0]
    k = as_scalar(k)
    if k is not None and (isinstance(k, bool) or not isinstance(k, Integral) or not 1 <= k <= n - 1):
        raise ValueError(f"k must be an integer in [1, n - 1] = [1, {n - 1}] for n = {n} points, got {k!r}")
    if radius is not None:
        radius = check_in_range("radius", radius, 0.0, low_inclusive=False)
    i, j = neighbour_pairs(points, None if k is None else int(k), radius)
    with np.errstate(over="ignore"):  # β d² past the double range: e^{-∞} = 0, the correctly rounded value
        values = np.exp(-beta * pair_squared_distances(points, i, j))
    diagonal = np.arange(n)
    # Both triangles and the diagonal in one COO -> CSR conversion: it keeps explicit zeros (a CSR sum
    # U + Uᵀ would drop underflowed entries) and leaves the indices sorted.
    rows = np.concatenate([i, j, diagonal])
    cols = np.concatenate([j, i, diagonal])
    data = np.concatenate([values, values, np.ones(n)])
    kernel = scipy.sparse.csr_array((data, (rows, cols)), shape=(n, n))
    kernel.sort_indices()
    return kernel


def _sparse_degree(name, kernel):
    """Validate a scipy.sparse kernel (square, finite, nonnegative, positive row sums) and return K·1."""
    if kernel.ndim != 2 or kernel.shape[0] != kernel.shape[1]:
        raise ValueError(f"{name} must be a square matrix (shape [n, n]), got shape {kernel.shape}")
    data = kernel.data
    if not np.isfinite(data).all() or (data.size and data.min() < 0):
        coo = kernel.tocoo()  # only to name the offending entry
        bad = ~np.isfinite(coo.data)
        if bad.any():
            first = int(np.argmax(bad))
            raise ValueError(
                f"{name} must be finite, got {int(bad.sum())} non-finite stored entries "
                f"(first at index ({int(coo.row[first])}, {int(coo.col[first])}))"
            )
        worst = int(np.argmin(coo.data))
        raise ValueError(
            f"{name} must be entrywise nonnegative, got minimum {coo.data[worst]:.6g} "
            f"at index ({int(coo.row[worst])}, {int(coo.col[worst])})"
        )
    degree = np.asarray(kernel.sum(axis=1)).ravel()
    if degree.size and degree.min() <= 0.0:
        raise ValueError(
            f"{name} must have positive row sums (a degree p = {name}·1 > 0), "
            f"got row {int(np.argmin(degree))} summing to {degree.min():.6g}"
        )
    return degree


def alpha_normalize(kernel, alpha):
    r"""Coifman--Lafon α-normalisation :math:`\mathsf K^{(\alpha)} = D_q^{-\alpha}\,\mathsf K\,D_q^{-\alpha}`.

    With the degree :math:`q = \mathsf K\mathbf 1`,

    .. math::

        \mathsf K^{(\alpha)}_{ij} = \frac{\mathsf K_{ij}}{q_i^{\alpha}\, q_j^{\alpha}}, \qquad
        \alpha \in [0, 1].

    Row-normalising the result, :math:`\mathsf P = \operatorname{diag}(\mathsf K^{(\alpha)}\mathbf 1)^{-1}
    \mathsf K^{(\alpha)}`, gives the Doob transform of :math:`\mathsf K` with :math:`h = q^{-\alpha}`.
    For the Gauss kernel :math:`\exp(-\beta\lVert x-y\rVert^2)` on samples of density :math:`\rho`,
    :math:`4\beta(I - \mathsf P) \to -\Delta - 2(1-\alpha)\langle\nabla\log\rho, \nabla\,\cdot\,\rangle`
    (positive generator :math:`\mathsf L = I - \mathsf P`): :math:`\alpha = 0` is the graph-Laplacian
    normalisation, :math:`\alpha = 1/2` Fokker--Planck, :math:`\alpha = 1` the Laplace--Beltrami
    operator whatever the density.

    Parameters
    ----------
    kernel : array, shape=[..., n, n], or scipy.sparse matrix/array, shape=[n, n]
        Nonnegative, finite, with positive row sums (need not be symmetric).
    alpha : float
        :math:`\alpha \in [0, 1]`.

    Returns
    -------
    array, shape=[..., n, n], or CSR sparse, shape=[n, n]
        Same library as ``kernel``; a sparse input comes back as CSR (``csr_array`` for a sparse
        array input, ``csr_matrix`` for a sparse matrix input), with the same pattern.

    References
    ----------
    Coifman & Lafon (2006) §2.3; book/reference.md §A.2 [CODE: DMAE ``eager_map.py``].

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 1.0], [1.0, 3.0]])   # q = (2, 4)
    >>> alpha_normalize(K, 1.0).tolist()         # K_ij / (q_i q_j)
    [[0.25, 0.125], [0.125, 0.1875]]
    """
    alpha = check_in_range("alpha", alpha, 0.0, 1.0)
    if scipy.sparse.issparse(kernel):
        out = scipy.sparse.csr_array(kernel, dtype=float, copy=True)
        scale = _sparse_degree("kernel", out) ** -alpha
        rows = np.repeat(np.arange(out.shape[0]), np.diff(out.indptr))
        out.data *= scale[rows] * scale[out.indices]
        return out if isinstance(kernel, scipy.sparse.sparray) else scipy.sparse.csr_matrix(out)
    kernel = as_array("kernel", kernel, min_ndim=2)
    check_square("kernel", kernel)
    check_nonnegative("kernel", kernel)
    scale = positive_row_sums("kernel", kernel) ** -alpha
    return scale[..., :, None] * kernel * scale[..., None, :]
