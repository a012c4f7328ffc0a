r"""Stationary currents of a Markov operator: the current J, the circulation Ω_π and the Hatano–Nelson gauge.

For a Markov operator :math:`\mathsf P` (row-stochastic, acting from the left; positive generator
:math:`\mathsf L = I - \mathsf P`) with a law :math:`\pi`, the flux :math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P`
carries the stationary current :math:`J = \mathsf A - \mathsf A^\top`, the circulation form
:math:`\Omega_\pi`, the Hatano–Nelson factorisation :math:`\mathsf A = \bar{\mathsf A}\odot e^{\theta}` and
the gauge gradients :math:`\mathsf D_K, \mathsf D_Q`.  ``P`` may be a dense numpy array, a dense torch
tensor or a :mod:`scipy.sparse` matrix (numpy only, never densified).

References
----------
Attention Geometry §4, §5 and §7; book/reference.md §A.5 (Ω_π) [RECON], §A.7 "Stationary currents"
and "D_K, D_Q operators" [SEED definitions; Ā, θ are RECON].
N. Hatano, D. R. Nelson, "Localization transitions in non-Hermitian quantum mechanics",
Phys. Rev. Lett. 77 (1996) 570 (imaginary gauge field).
"""  # noqa: E501

from __future__ import annotations

from typing import NamedTuple

import array_api_compat
import numpy as np
import scipy.sparse

from workbench.backend import namespace, to_numpy
from workbench.markov._matrices import check_row_sums
from workbench.validation import as_array, check_matching, check_nonnegative, check_row_stochastic

__all__ = ["GaugeGradients", "circulation", "gauge_gradients", "hatano_nelson", "stationary_current"]


# --------------------------------------------------------------------------------------------------
# Flux, stationary current, circulation
# --------------------------------------------------------------------------------------------------


def _markov_and_law(P, pi):
    """Validate a Markov operator (dense or sparse) and a law; return (P, pi, sparse)."""
    if scipy.sparse.issparse(P):
        shape = tuple(int(s) for s in P.shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"P must be a square matrix (shape [..., n, n]), got shape {shape}")
        P = scipy.sparse.csr_array(P, copy=True)
        P.sum_duplicates()
        P.data = as_array("P entries", P.data, ndim=1)
        if P.nnz and P.data.min() < 0:
            raise ValueError(f"P must be entrywise nonnegative, got minimum {P.data.min():.6g}")
        check_row_sums("P", P)
        if array_api_compat.is_torch_array(pi):
            raise TypeError("pi must be a numpy array when P is a scipy.sparse matrix, got a torch tensor")
        pi = as_array("pi", pi, ndim=1)
    else:
        P = as_array("P", P, ndim=2)
        check_row_stochastic("P", P)
        pi = as_array("pi", pi, ndim=1)
        namespace(P=P, pi=pi)
    check_nonnegative("pi", pi)
    check_matching("P rows", int(P.shape[0]), "pi", int(pi.shape[0]))
    return P, pi, scipy.sparse.issparse(P)


def _flux(P, pi, sparse):
    if sparse:
        A = scipy.sparse.csr_array(scipy.sparse.diags_array(pi) @ P)
        A.eliminate_zeros()
        A.sort_indices()
        return A
    return pi[:, None] * P


def stationary_current(P, pi):
    r"""Probability current :math:`J = \operatorname{diag}(\pi)\mathsf P - \mathsf P^\top\operatorname{diag}(\pi)`.

    :math:`J_{ij} = \pi_i\mathsf P_{ij} - \pi_j\mathsf P_{ji}` is the net flow :math:`i \to j` of the
    flux :math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P`.  It is antisymmetric;
    :math:`J\mathbf 1 = \pi - \pi\mathsf P` vanishes iff :math:`\pi` is stationary; and :math:`J = 0` iff
    :math:`\mathsf P` satisfies detailed balance with respect to :math:`\pi`.  (:math:`\mathsf P` acts
    from the left, positive generator :math:`\mathsf L = I - \mathsf P`.)

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Row-stochastic Markov operator (rows summing to 1 within 1e-10).
    pi : array, shape=[n]
        A nonnegative law, usually the stationary one (not checked).

    Returns
    -------
    array or scipy.sparse.csr_array, shape=[n, n]

    References
    ----------
    Attention Geometry §4, §7; book/reference.md §A.7 "Stationary currents" [RECON defs, DERIVED].

    Examples
    --------
    A biased walk on the 3-cycle: uniform :math:`\pi`, current :math:`(0.7 - 0.3)/3` around it.

    >>> import numpy as np
    >>> P = np.array([[0.0, 0.7, 0.3], [0.3, 0.0, 0.7], [0.7, 0.3, 0.0]])
    >>> J = stationary_current(P, np.full(3, 1 / 3))
    >>> np.allclose(J, (0.4 / 3) * np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]]))
    True
    """
    P, pi, sparse = _markov_and_law(P, pi)
    A = _flux(P, pi, sparse)
    return scipy.sparse.csr_array(A - A.T) if sparse else A - A.T


def circulation(P, f, g, pi):
    r"""Circulation form :math:`\Omega_\pi(f,g) = \langle f, \tfrac12(\mathsf P - \mathsf P^*) g\rangle_\pi = \tfrac12\sum_{ij} J_{ij} f_i g_j`.

    :math:`\mathsf P^* = \operatorname{diag}(\pi)^{-1}\mathsf P^\top\operatorname{diag}(\pi)` is the
    :math:`\pi`-adjoint and :math:`J` the :func:`stationary_current`.  :math:`\Omega_\pi` is
    antisymmetric, and it vanishes identically iff :math:`\mathsf P` is reversible (detailed balance).
    It is computed as :math:`\tfrac12(f^\top\mathsf A g - g^\top\mathsf A f)`,
    :math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P`, without forming :math:`\mathsf P^*`.

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Row-stochastic Markov operator.
    f, g : array, shape=[n]
        Functions on the vertices.
    pi : array, shape=[n]
        A nonnegative law.

    Returns
    -------
    float or 0-d array/tensor

    References
    ----------
    Attention Geometry §5; book/reference.md §A.5 "Circulation Ω_π" [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.0, 0.7, 0.3], [0.3, 0.0, 0.7], [0.7, 0.3, 0.0]])
    >>> pi, f, g = np.full(3, 1 / 3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    >>> J = stationary_current(P, pi)
    >>> bool(np.isclose(circulation(P, f, g, pi), 0.5 * J[0, 1]))
    True
    """  # noqa: E501
    P, pi, sparse = _markov_and_law(P, pi)
    n = int(P.shape[0])
    for name, value in (("f", f), ("g", g)):
        if sparse and array_api_compat.is_torch_array(value):
            raise TypeError(f"{name} must be a numpy array when P is a scipy.sparse matrix, got a torch tensor")
    f = as_array("f", f, ndim=1)
    g = as_array("g", g, ndim=1)
    if not sparse:
        namespace(P=P, f=f, g=g)
    check_matching("P rows", n, "f", int(f.shape[0]))
    check_matching("P rows", n, "g", int(g.shape[0]))
    A = _flux(P, pi, sparse)
    if sparse:
        return 0.5 * float(f @ (A @ g) - g @ (A @ f))
    xp = namespace(P)
    return 0.5 * (xp.sum(f * (A @ g)) - xp.sum(g * (A @ f)))


# --------------------------------------------------------------------------------------------------
# Hatano–Nelson factorisation and gauge gradients
# --------------------------------------------------------------------------------------------------


def _asymmetric_support_error(i, j, a):
    return ValueError(
        "the flux A = diag(pi) P must have a symmetric support for the Hatano-Nelson factorisation, "
        f"got A[{i}, {j}] = {a:.6g} > 0 but A[{j}, {i}] = 0"
    )


def hatano_nelson(P, pi):
    r"""Imaginary-gauge factorisation :math:`\mathsf A = \bar{\mathsf A}\odot e^{\theta}` of the flux :math:`\mathsf A = \operatorname{diag}(\pi)\mathsf P`.

    .. math::

        \bar{\mathsf A}_{ij} = \sqrt{\mathsf A_{ij}\mathsf A_{ji}}, \qquad
        \theta_{ij} = \tfrac12\log\frac{\mathsf A_{ij}}{\mathsf A_{ji}},

    on the support, and :math:`\bar{\mathsf A}_{ij} = \theta_{ij} = 0` where
    :math:`\mathsf A_{ij} = \mathsf A_{ji} = 0`.  :math:`\bar{\mathsf A}` is symmetric (a reversible
    "bond" flux), :math:`\theta` antisymmetric (an imaginary gauge field whose cycle sums are half the
    cycle affinities), and the current is :math:`J_{ij} = 2\bar{\mathsf A}_{ij}\sinh\theta_{ij}`.
    [RECON: the paper uses :math:`\bar{\mathsf A}, \theta` in :math:`\mathsf D_K, \mathsf D_Q` without
    defining them; the geometric mean is the choice that gives its :math:`e^{\pm\theta/2}` weights.]

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Row-stochastic Markov operator.
    pi : array, shape=[n]
        A nonnegative law, usually the stationary one.

    Returns
    -------
    A_bar, theta : arrays or scipy.sparse.csr_array, shape=[n, n]
        Sparse input gives two CSR arrays on the support of :math:`\mathsf A` (``theta`` may store
        explicit zeros there).

    Raises
    ------
    ValueError
        If the support of :math:`\mathsf A` is not symmetric (:math:`\mathsf A_{ij} > 0 = \mathsf A_{ji}`):
        the factorisation needs both directions of every edge.

    References
    ----------
    Attention Geometry §4, §7; book/reference.md §A.7 "Stationary currents" [RECON defs, DERIVED
    identities]; Hatano & Nelson (1996).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.0, 0.7, 0.3], [0.3, 0.0, 0.7], [0.7, 0.3, 0.0]])
    >>> pi = np.full(3, 1 / 3)
    >>> A_bar, theta = hatano_nelson(P, pi)
    >>> bool(np.allclose(A_bar * np.exp(theta), pi[:, None] * P))
    True
    >>> bool(np.allclose(2 * A_bar * np.sinh(theta), stationary_current(P, pi)))
    True
    """  # noqa: E501
    P, pi, sparse = _markov_and_law(P, pi)
    A = _flux(P, pi, sparse)
    if sparse:
        n = A.shape[0]
        row = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
        col = A.indices.astype(np.int64)
        keys = row * n + col  # sorted: canonical CSR
        reverse = col * n + row
        position = np.minimum(np.searchsorted(keys, reverse), max(keys.size - 1, 0))
        found = keys[position] == reverse
        if not np.all(found):
            k = int(np.flatnonzero(~found)[0])
            raise _asymmetric_support_error(int(row[k]), int(col[k]), A.data[k])
        a, a_reverse = A.data, A.data[position]
        A_bar = scipy.sparse.csr_array((_geometric_mean(np, a, a_reverse), A.indices, A.indptr), shape=A.shape)
        theta = scipy.sparse.csr_array((0.5 * (np.log(a) - np.log(a_reverse)), A.indices, A.indptr), shape=A.shape)
        return A_bar, theta
    xp = namespace(A)
    At = A.T
    forward, backward = A > 0, At > 0
    one_sided = forward != backward
    if bool(xp.any(one_sided)):
        host = to_numpy(one_sided)
        i, j = (int(v) for v in np.argwhere(host)[0])
        if not bool(forward[i, j]):
            i, j = j, i
        raise _asymmetric_support_error(i, j, float(A[i, j]))
    ones = xp.ones_like(A)
    # log only where both directions are positive: log(0) would be a silent -inf (and a RuntimeWarning).
    theta = 0.5 * (xp.log(xp.where(forward, A, ones)) - xp.log(xp.where(forward, At, ones)))
    return _geometric_mean(xp, A, At), theta


def _geometric_mean(xp, a, b):
    """``sqrt(a * b)`` entrywise, through ``sqrt(a) * sqrt(b)`` where the product leaves the normal range.

    The product form is exact for ``a = b`` (a reversible bond); the split form is finite and keeps every
    digit where the product overflows (a law ``pi`` of entries near 1e300) or underflows (near 1e-200).
    """
    with np.errstate(over="ignore", under="ignore"):
        product = a * b
        split = xp.sqrt(a) * xp.sqrt(b)
    normal = xp.isfinite(product) & ((product >= xp.finfo(product.dtype).tiny) | (product == 0) & (split == 0))
    return xp.where(normal, xp.sqrt(product), split)


class GaugeGradients(NamedTuple):
    r"""The gauge gradients :math:`\mathsf D_K, \mathsf D_Q` and the oriented edges that index their rows."""

    D_K: object
    """Sparse operator, shape=[E, n]: :math:`(\\mathsf D_K f)_e = \\bar{\\mathsf A}_{ij}^{1/2}(e^{-\\theta_{ij}/2} f_i - e^{\\theta_{ij}/2} f_j)`."""  # noqa: E501
    D_Q: object
    """Sparse operator, shape=[E, n]: :math:`(\\mathsf D_Q g)_e = \\bar{\\mathsf A}_{ij}^{1/2}(e^{\\theta_{ij}/2} g_i - e^{-\\theta_{ij}/2} g_j)`."""  # noqa: E501
    edges: object
    """Integer array, shape=[E, 2]: row ``e`` of the operators is the ordered pair ``(i, j) = edges[e]``."""


def gauge_gradients(P, pi):
    r"""Gauge gradients :math:`\mathsf D_K, \mathsf D_Q`: vertex functions to fields on oriented edges.

    With the Hatano–Nelson data :math:`\bar{\mathsf A}, \theta` of :func:`hatano_nelson`,

    .. math::

        (\mathsf D_K f)_{ij} = \bar{\mathsf A}_{ij}^{1/2}\bigl(e^{-\theta_{ij}/2} f_i - e^{\theta_{ij}/2} f_j\bigr),
        \qquad
        (\mathsf D_Q g)_{ij} = \bar{\mathsf A}_{ij}^{1/2}\bigl(e^{\theta_{ij}/2} g_i - e^{-\theta_{ij}/2} g_j\bigr),

    for every ordered pair :math:`i \ne j` with :math:`\bar{\mathsf A}_{ij} > 0` (the pairs
    :math:`i = j` give zero rows and are left out).  Then [RECON: the paper defines
    :math:`\mathsf D_K, \mathsf D_Q` but not :math:`\bar{\mathsf A}, \theta`]

    .. math::

        \tfrac12\,\mathsf D_Q^\top\mathsf D_K
            = \operatorname{diag}(\bar{\mathsf A}\mathbf 1) - \bar{\mathsf A}\odot e^{\theta}
            = \operatorname{diag}(\pi)\,\mathsf L + \operatorname{diag}(V),
        \qquad V_i = \sum_j \bar{\mathsf A}_{ij} - \pi_i,

    with the positive generator :math:`\mathsf L = I - \mathsf P`.  For stationary :math:`\pi`,
    :math:`V \le 0` by the AM–GM inequality, with :math:`V = 0` iff :math:`\mathsf P` is reversible;
    at :math:`\theta = 0` both operators are the weighted gradient
    :math:`\bar{\mathsf A}_{ij}^{1/2}(f_i - f_j)` and :math:`\tfrac12\lVert\mathsf D f\rVert^2` is the
    Dirichlet form of :math:`\bar{\mathsf A}`.

    The operators are returned sparse, two entries per row, so memory is :math:`O(E)`, never
    :math:`O(n^3)`.

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Row-stochastic Markov operator; the support of :math:`\operatorname{diag}(\pi)\mathsf P` must be
        symmetric.
    pi : array, shape=[n]
        A nonnegative law, usually the stationary one.

    Returns
    -------
    GaugeGradients
        ``(D_K, D_Q, edges)``: ``D_K`` and ``D_Q`` are :class:`scipy.sparse.csr_array` of shape
        [E, n] (torch sparse COO tensors on the input's device for torch input); ``edges`` is the
        integer array of shape [E, 2] of ordered pairs ``(i, j)`` in row-major order.

    References
    ----------
    Attention Geometry §7; book/reference.md §A.7 "D_K, D_Q operators" [SEED definitions; the
    identity is DERIVED with the RECON choice of Ā, θ].

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.0, 0.7, 0.3], [0.3, 0.0, 0.7], [0.7, 0.3, 0.0]])
    >>> pi = np.full(3, 1 / 3)
    >>> D_K, D_Q, edges = gauge_gradients(P, pi)
    >>> A_bar, theta = hatano_nelson(P, pi)
    >>> lhs = 0.5 * (D_Q.T @ D_K).toarray()
    >>> bool(np.allclose(lhs, np.diag(A_bar.sum(axis=1)) - pi[:, None] * P))
    True
    """
    A_bar, theta = hatano_nelson(P, pi)
    n = int(A_bar.shape[0])
    if scipy.sparse.issparse(A_bar):
        row = np.repeat(np.arange(n), np.diff(A_bar.indptr))
        col = A_bar.indices
        keep = (row != col) & (A_bar.data > 0)
        i, j = row[keep], col[keep]
        scale, t = np.sqrt(A_bar.data[keep]), theta.data[keep]
    else:
        xp = namespace(A_bar)
        off = (A_bar > 0) & ~xp.eye(n, dtype=xp.bool, device=array_api_compat.device(A_bar))
        i, j = xp.nonzero(off)
        scale, t = xp.sqrt(A_bar[i, j]), theta[i, j]
    xp = namespace(scale)
    half_up, half_down = xp.exp(0.5 * t), xp.exp(-0.5 * t)
    D_K = _two_per_row(i, j, scale * half_down, -scale * half_up, n)
    D_Q = _two_per_row(i, j, scale * half_up, -scale * half_down, n)
    edges = xp.stack([i, j], axis=1)
    return GaugeGradients(D_K, D_Q, edges)


def _two_per_row(i, j, value_i, value_j, n):
    """Sparse [E, n] operator with row e holding value_i[e] at column i[e] and value_j[e] at column j[e]."""
    E = int(i.shape[0])
    if array_api_compat.is_torch_array(i):
        import torch

        rows = torch.arange(E, device=i.device)
        indices = torch.stack([torch.cat([rows, rows]), torch.cat([i, j])])
        values = torch.cat([value_i, value_j])
        return torch.sparse_coo_tensor(indices, values, (E, n), check_invariants=True).coalesce()
    rows = np.arange(E)
    return scipy.sparse.csr_array(
        (np.concatenate([value_i, value_j]), (np.concatenate([rows, rows]), np.concatenate([i, j]))), shape=(E, n)
    )
