r"""The Doob h-transform of a kernel: destination reweighting, then row normalisation.

:math:`\mathsf P_h = \operatorname{diag}(\mathsf K h)^{-1}\mathsf K\operatorname{diag}(h)`; for a symmetric
kernel it is reversible with :math:`\pi^{(h)} \propto h\odot\mathsf K h`, and Coifman–Lafon
α-normalisation is the case :math:`h = (\mathsf K\mathbf 1)^{-\alpha}`.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4 [SEED]; book/reference.md §A.4 (Doob
h-transform) and §A.2 (α-normalisation as a Doob transform [DERIVED]).
J. L. Doob, "Conditional Brownian motion and the boundary limits of harmonic functions", Bull. Soc. Math.
France 85 (1957) 431–458.
"""

from __future__ import annotations

import math

from workbench.backend import namespace
from workbench.markov._markov_operator import MarkovOperator
from workbench.markov._matrices import is_symmetric, scale_both, scale_columns, validated_kernel
from workbench.validation import as_array, check_matching, is_sparse

__all__ = ["doob_transform"]


def doob_transform(kernel, h) -> MarkovOperator:
    r"""The Doob h-transform :math:`\mathsf P_h = \operatorname{diag}(\mathsf K h)^{-1}\mathsf K\operatorname{diag}(h)`.

    Destination reweighting by :math:`h > 0`, then row normalisation (in logits: score
    :math:`+ \log h_j`).  For symmetric :math:`\mathsf K`, :math:`\pi^{(h)}_i\mathsf P_{h,ij} \propto
    h_i\mathsf K_{ij}h_j` is symmetric, so :math:`\mathsf P_h` is reversible with
    :math:`\pi^{(h)} \propto h\odot\mathsf K h` (returned exactly, as the operator of the symmetric
    kernel :math:`h_i\mathsf K_{ij}h_j`).  Coifman–Lafon α-normalisation is the case
    :math:`h = (\mathsf K\mathbf 1)^{-\alpha}`.

    Parameters
    ----------
    kernel : array or scipy sparse, shape=[n, n]
        Nonnegative with positive row sums.
    h : array, shape=[n]
        Positive.

    Returns
    -------
    MarkovOperator

    References
    ----------
    Attention Geometry §4 [SEED]; book/reference.md §A.4 (Doob h-transform) and §A.2
    (α-normalisation as a Doob transform [DERIVED]).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 2.0], [2.0, 1.0]]); h = np.array([1.0, 3.0])
    >>> op = doob_transform(K, h)
    >>> op.P.tolist()  # rows of K diag(h), normalised
    [[0.14285714285714285, 0.8571428571428571], [0.4, 0.6]]
    >>> bool(np.allclose(op.stationary, h * (K @ h) / np.sum(h * (K @ h))))
    True
    """
    kernel, _ = validated_kernel(kernel)
    h = as_array("h", h, ndim=1)
    if not is_sparse(kernel):
        namespace(kernel=kernel, h=h)
    check_matching("kernel rows", kernel.shape[0], "h", h.shape[0])
    if float(namespace(h).min(h)) <= 0.0:
        raise ValueError(f"h must be entrywise positive, got minimum {float(namespace(h).min(h)):.6g}")
    # P_h is unchanged by h -> c h; an h far from 1 (entries near 1e300, whose products h_i h_j overflow) is
    # divided by a power of two, which is exact.
    exponent = math.frexp(float(namespace(h).max(h)))[1]
    if abs(exponent) > 256:
        h = h * 2.0**-exponent
    if is_symmetric(kernel):
        return MarkovOperator.from_kernel(scale_both(h, kernel, h))
    return MarkovOperator.from_kernel(scale_columns(kernel, h))
