"""Markov operators built from kernels and scores."""

from __future__ import annotations

import numpy as np

from workbench.backend import namespace
from workbench.validation import (
    as_array,
    as_sparse,
    check_in_range,
    check_nonnegative,
    check_square,
    check_symmetric,
    is_sparse,
)

__all__ = ["markov_operator", "reversible_stationary_law", "softmax_operator"]


def positive_row_sums(name, kernel):
    """Degrees ``p = kernel·1`` (last axis), raising unless every row sums to a positive number.

    Package-internal (not in ``__all__``): :func:`workbench.markov._kernels.alpha_normalize` uses it too.
    """
    if is_sparse(kernel):
        degree = np.asarray(kernel.sum(axis=1), dtype=np.float64).ravel()
        smallest = float(degree.min()) if degree.size else 1.0
    else:
        xp = namespace(kernel)
        degree = xp.sum(kernel, axis=-1)
        smallest = float(xp.min(degree))
    if smallest <= 0.0:
        raise ValueError(
            f"{name} must have positive row sums (a degree p = {name}·1 > 0), got a row summing to {smallest:.6g}"
        )
    return degree


def markov_operator(kernel):
    r"""Row normalisation :math:`\mathsf P = \operatorname{diag}(\mathsf K\mathbf 1)^{-1}\mathsf K`.

    :math:`\mathsf P` is row-stochastic and acts on functions from the left,
    :math:`(\mathsf P f)_i = \sum_j \mathsf P_{ij} f_j`.  The positive generator is
    :math:`\mathsf L = I - \mathsf P`.

    Parameters
    ----------
    kernel : array, shape=[..., n, n], or scipy sparse matrix, shape=[n, n]
        Nonnegative, finite, with positive row sums.

    Returns
    -------
    array, shape=[..., n, n]
        A scipy sparse CSR array (float64) for a sparse kernel, with the kernel's sparsity.

    References
    ----------
    Attention Geometry §2; book/reference.md §A.2.

    Examples
    --------
    >>> import numpy as np
    >>> markov_operator(np.array([[1.0, 3.0], [2.0, 2.0]])).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    if is_sparse(kernel):
        import scipy.sparse

        kernel = as_sparse("kernel", kernel)
        check_square("kernel", kernel)
        check_nonnegative("kernel", kernel)
        degree = positive_row_sums("kernel", kernel)
        return scipy.sparse.csr_array(scipy.sparse.diags_array(1.0 / degree) @ kernel)
    kernel = as_array("kernel", kernel)
    check_square("kernel", kernel)
    check_nonnegative("kernel", kernel)
    degree = positive_row_sums("kernel", kernel)
    return kernel / degree[..., None]


def reversible_stationary_law(kernel):
    r"""Stationary law :math:`\pi = \mathsf p / \mathbf 1^\top \mathsf p`, :math:`\mathsf p = \mathsf K\mathbf 1`, of a symmetric kernel.

    For symmetric :math:`\mathsf K`, :math:`\pi_i \mathsf P_{ij} = \mathsf K_{ij}/\mathbf 1^\top\mathsf p`
    is symmetric, so :math:`\pi` is stationary and :math:`\mathsf P` is reversible with respect to it.

    Parameters
    ----------
    kernel : array, shape=[..., n, n]
        Symmetric, nonnegative, with positive row sums.

    Returns
    -------
    array, shape=[..., n]

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 1.0], [1.0, 3.0]])
    >>> pi = reversible_stationary_law(K)
    >>> pi.tolist()
    [0.3333333333333333, 0.6666666666666666]
    >>> bool(np.allclose(pi @ markov_operator(K), pi))
    True
    """  # noqa: E501
    kernel = as_array("kernel", kernel)
    check_symmetric("kernel", kernel)
    check_nonnegative("kernel", kernel)
    xp = namespace(kernel)
    degree = positive_row_sums("kernel", kernel)
    return degree / xp.sum(degree, axis=-1, keepdims=True)


def softmax_operator(scores, beta=1.0):
    r"""Row softmax :math:`\operatorname{softmax}_\beta(S)_{ij} = e^{\beta S_{ij}} / \sum_l e^{\beta S_{il}}`.

    This is the Markov operator of the kernel :math:`\exp_\odot(\beta S)`; it is computed with the
    row maximum subtracted, so large scores do not overflow.

    Parameters
    ----------
    scores : array, shape=[..., n, m]
        Finite attention scores.
    beta : float
        Inverse temperature, :math:`\beta \ge 0`.

    Returns
    -------
    array, shape=[..., n, m]
        Row-stochastic.

    Examples
    --------
    >>> import numpy as np
    >>> softmax_operator(np.array([[0.0, np.log(3.0)]])).round(12).tolist()
    [[0.25, 0.75]]
    """
    scores = as_array("scores", scores, min_ndim=2)
    beta = check_in_range("beta", beta, 0.0)
    xp = namespace(scores)
    with np.errstate(over="ignore", invalid="ignore"):
        z = beta * scores
        z = z - xp.max(z, axis=-1, keepdims=True)
        if not bool(xp.all(xp.isfinite(z))):
            # β·S overflowed (β near the float maximum): shift first, then scale.  The law is the same; each
            # shifted entry is ≤ 0, so an overflow now gives −∞ (weight exactly 0, the β → ∞ limit), never NaN.
            z = beta * (scores - xp.max(scores, axis=-1, keepdims=True))
    weights = xp.exp(z)
    return weights / xp.sum(weights, axis=-1, keepdims=True)
