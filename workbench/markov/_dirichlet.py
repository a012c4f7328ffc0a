"""Dirichlet forms of kernels."""

from __future__ import annotations

import array_api_compat
import numpy as np

from workbench.backend import namespace
from workbench.validation import as_array, as_sparse, check_matching, check_nonnegative, check_square, is_sparse

__all__ = ["dirichlet_form"]


def dirichlet_form(kernel, f, g=None):
    r"""Edge form :math:`\mathcal E(f,g) = \tfrac12 \sum_{ij} \mathsf K_{ij}(f_i - f_j)(g_i - g_j)`.

    For symmetric :math:`\mathsf K` with degree :math:`\mathsf p = \mathsf K\mathbf 1`, stationary law
    :math:`\pi = \mathsf p/\mathbf 1^\top\mathsf p` and generator :math:`\mathsf L = I - \mathsf P`,

    .. math::

        \mathcal E(f,f) = (\mathbf 1^\top\mathsf p)\,\langle f, \mathsf L f\rangle_\pi
                        = \tfrac12 \sum_{ij} \mathsf K_{ij} (f_i - f_j)^2 .

    The sum runs over coordinate differences, so it stays accurate for smooth ``f`` where the
    quadratic-form route :math:`\sum_i \mathsf p_i f_i (\mathsf L f)_i` loses digits to cancellation.

    Parameters
    ----------
    kernel : array, shape=[n, n], or scipy sparse matrix
        Nonnegative kernel weights; a sparse kernel sums over its stored entries only (numpy ``f``, ``g``).
    f, g : array, shape=[n]
        Functions on the vertices; ``g`` defaults to ``f``.

    Returns
    -------
    float or 0-d tensor

    References
    ----------
    Attention Geometry §2 (Dirichlet form); book/reference.md §A.2 [SEED + DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[0.0, 2.0], [2.0, 0.0]])
    >>> float(dirichlet_form(K, np.array([1.0, 4.0])))
    18.0
    """
    if is_sparse(kernel):
        return _sparse_dirichlet_form(kernel, f, g)
    kernel = as_array("kernel", kernel, ndim=2)
    check_square("kernel", kernel)
    check_nonnegative("kernel", kernel)
    f = as_array("f", f, ndim=1)
    g = f if g is None else as_array("g", g, ndim=1)
    namespace(kernel=kernel, f=f, g=g)
    check_matching("kernel rows", kernel.shape[0], "f", f.shape[0])
    check_matching("f", f.shape[0], "g", g.shape[0])
    xp = namespace(kernel)
    df = f[:, None] - f[None, :]
    dg = df if g is f else g[:, None] - g[None, :]
    return 0.5 * xp.sum(kernel * df * dg)


def _sparse_dirichlet_form(kernel, f, g) -> float:
    kernel = as_sparse("kernel", kernel).tocoo()
    check_square("kernel", kernel)
    check_nonnegative("kernel", kernel)
    for name, x in (("f", f), ("g", g)):
        if array_api_compat.is_torch_array(x):
            raise TypeError(f"{name} must be a numpy array with a scipy sparse kernel, got a torch tensor")
    f = as_array("f", f, ndim=1)
    g = f if g is None else as_array("g", g, ndim=1)
    check_matching("kernel rows", kernel.shape[0], "f", f.shape[0])
    check_matching("f", f.shape[0], "g", g.shape[0])
    df = f[kernel.row] - f[kernel.col]
    dg = df if g is f else g[kernel.row] - g[kernel.col]
    return float(0.5 * np.sum(kernel.data * df * dg))
