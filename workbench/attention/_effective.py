r"""Multi-head attention as one connection step, and the drift of its effective walk across layers.

Multi-head attention :math:`\operatorname{MHA}(X) = \sum_h A^{(h)} X M_h` (value-output maps
:math:`M_h = W_V^h W_O^h`) is one step of the connection walk,
:math:`\operatorname{MHA}(X) = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X`, with the mean attention
:math:`A_{\mathrm{eff}}` and the attention-weighted mean of the :math:`M_h` as transport
(:func:`effective_connection`, :func:`connection_step`).  Between consecutive layers the effective walk moves
by the cosine distance :math:`d_A` (:func:`geometric_drift`).

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §4, Eqs. (8)–(10) (MHA as a connection step), §7 (metrics:
:math:`d_A`); book/reference.md §B.3, §B.6.
Every displayed formula of that paper is lost; the formulas here are the reconstructions of
book/reference.md §B [RECON], checked against the surviving text and numerically.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.

from __future__ import annotations

from workbench.attention._connection_checks import check_features, check_heads, check_mask, check_walk, eye_like
from workbench.attention._overflow import binary_scale
from workbench.backend import namespace
from workbench.validation import as_array, shape_of

__all__ = ["connection_step", "effective_connection", "geometric_drift"]


def effective_connection(A_heads, M_heads, fill=None):
    r"""The effective walk and transport of multi-head attention, :math:`(A_{\mathrm{eff}}, O^{\mathrm{eff}})`.

    .. math::

        A_{\mathrm{eff}} = \frac1H\sum_{h=1}^H A^{(h)},\qquad
        O^{\mathrm{eff}}_{ij} = \frac{\sum_h A^{(h)}_{ij} M_h}{\sum_h A^{(h)}_{ij}}
        \quad\text{where } \textstyle\sum_h A^{(h)}_{ij} > 0,

    and :math:`O^{\mathrm{eff}}_{ij} =` ``fill`` (default :math:`I_d`) on inactive edges, where every head
    has :math:`A^{(h)}_{ij} = 0` and the edge carries no weight.  The transport is the attention-weighted mean
    of the head maps: heads form a dictionary of transports and attention selects from it edge by edge.
    With it, :math:`\operatorname{MHA}(X) = \sum_h A^{(h)} X M_h = H\,\mathcal T(A_{\mathrm{eff}},
    O^{\mathrm{eff}})X` exactly (see :func:`connection_step`); the inactive-edge value never matters because
    nonnegative weights summing to zero are all zero.

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        Nonnegative attention matrices of the heads (row-stochastic for softmax heads, zeros where masked).
    M_heads : array, shape=[H, d, d]
        Value-output maps :math:`M_h = W_V^h W_O^h` (row-vector convention, ``X @ M_h``).
    fill : array, shape=[d, d], optional
        The transport put on inactive edges; the identity by default.

    Returns
    -------
    A_eff : array, shape=[n, n]
    O_eff : array, shape=[n, n, d, d]

    References
    ----------
    Connection-Laplacian paper §4, Eqs. (8)–(10) (effective walk, effective transport, MHA as one connection
    step; the proof by active/inactive edges survives in the paper); book/reference.md §B.3 [RECON of the
    displays].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import propagate
    >>> rng = np.random.default_rng(2)
    >>> A_heads = rng.random((3, 4, 4)); A_heads /= A_heads.sum(axis=2, keepdims=True)
    >>> M_heads, X = rng.standard_normal((3, 2, 2)), rng.standard_normal((4, 2))
    >>> A_eff, O_eff = effective_connection(A_heads, M_heads)
    >>> mha = sum(A_heads[h] @ X @ M_heads[h] for h in range(3))
    >>> bool(np.allclose(3 * propagate(A_eff, O_eff, X), mha, rtol=1e-13, atol=1e-15))
    True
    """
    A_heads, M_heads = check_heads(A_heads, M_heads)
    xp = namespace(A_heads=A_heads, M_heads=M_heads, fill=fill)
    H = int(A_heads.shape[0])
    d = int(M_heads.shape[-1])
    if fill is None:
        fill = eye_like(xp, d, M_heads)
    else:
        fill = as_array("fill", fill, ndim=2)
        if shape_of(fill) != (d, d):
            raise ValueError(f"fill must have shape (d, d) = ({d}, {d}) matching M_heads, got shape {shape_of(fill)}")
    total = xp.sum(A_heads, axis=0)  # Σ_h A^(h)_ij = H A_eff(i, j)
    active = total > 0
    numerator = xp.einsum("hij,hab->ijab", A_heads, M_heads)
    # safe denominator: inactive edges are overwritten by `fill`, so no 0/0 is ever formed
    denominator = xp.where(active, total, xp.ones_like(total))
    O_eff = xp.where(active[:, :, None, None], numerator / denominator[:, :, None, None], fill)
    return total / H, O_eff


def connection_step(A_heads, X, M_heads):
    r"""Multi-head attention without biases, :math:`\sum_h A^{(h)} X M_h`, head by head.

    .. math::

        \operatorname{MHA}(X) = \sum_{h=1}^H A^{(h)} X M_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X,

    the second form by :func:`effective_connection`.  This function computes the first form (two matrix
    products per head), so comparing it with :func:`propagate` checks the identity.

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        Nonnegative attention matrices.
    X : array, shape=[n, d]
        Row-vector features (the input of the value projections).
    M_heads : array, shape=[H, d, d]
        Value-output maps.

    Returns
    -------
    array, shape=[n, d]

    References
    ----------
    Connection-Laplacian paper §4, Eq. (4) and Eq. (10); book/reference.md §B.3 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> A_heads = np.stack([np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])])
    >>> M_heads = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> connection_step(A_heads, np.array([[1.0, 0.0], [0.0, 1.0]]), M_heads).tolist()
    [[1.0, 2.0], [2.0, 1.0]]
    """
    A_heads, M_heads = check_heads(A_heads, M_heads)
    X = check_features("X", X, int(A_heads.shape[1]), int(M_heads.shape[-1]))
    xp = namespace(A_heads=A_heads, X=X, M_heads=M_heads)
    return xp.sum(A_heads @ (X[None, :, :] @ M_heads), axis=0)


def geometric_drift(A_prev, A_next, mask=None) -> float:
    r"""Cosine distance between two walks on a support, :math:`d_A = 1 - \cos(\operatorname{vec}_{\mathcal M} A_{\mathrm{next}}, \operatorname{vec}_{\mathcal M} A_{\mathrm{prev}})`.

    .. math::

        d_A^{\ell\to\ell+1} = 1 - \frac{\sum_{(i,j)\in\mathcal M} A^{\ell+1}_{ij} A^{\ell}_{ij}}
        {\lVert A^{\ell+1}\rVert_{\mathcal M}\,\lVert A^{\ell}\rVert_{\mathcal M}} .

    Zero for proportional walks, in :math:`[0, 1]` for nonnegative ones (it is clipped at 0 against rounding).
    For a causal model :math:`\mathcal M` is the lower triangle, which changes nothing when both walks vanish
    above the diagonal; for an encoder it is the valid non-special-token mask.

    Parameters
    ----------
    A_prev, A_next : array, shape=[n, n]
        Effective walks of consecutive layers.
    mask : bool array, shape=[n, n], optional
        The support :math:`\mathcal M` (True = included); default every pair.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If either walk vanishes on the mask (the cosine is undefined).

    References
    ----------
    Connection-Laplacian paper §7 (metrics, geometric drift); book/reference.md §B.6 [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> A_prev = np.array([[1.0, 0.0], [0.5, 0.5]])
    >>> A_next = np.eye(2)
    >>> bool(np.isclose(geometric_drift(A_prev, A_next), 1 - np.sqrt(3) / 2, rtol=1e-14))  # cos = 1.5/(√1.5 √2)
    True
    """  # noqa: E501
    A_prev = check_walk("A_prev", A_prev)
    A_next = check_walk("A_next", A_next)
    xp = namespace(A_prev=A_prev, A_next=A_next)  # a numpy boolean mask is accepted with torch data
    if shape_of(A_prev) != shape_of(A_next):
        raise ValueError(f"A_prev and A_next must have the same shape, got {shape_of(A_prev)} and {shape_of(A_next)}")
    if mask is not None:
        mask = check_mask(mask, shape_of(A_prev), xp, A_prev, "A_prev")
        A_prev = xp.where(mask, A_prev, xp.zeros_like(A_prev))
        A_next = xp.where(mask, A_next, xp.zeros_like(A_next))
    # The cosine is scale-free: each matrix is divided by a power of two first (exact), so no square overflows.
    A_prev, A_next = A_prev / binary_scale(A_prev), A_next / binary_scale(A_next)
    norm_prev = float(xp.sqrt(xp.sum(A_prev**2)))
    norm_next = float(xp.sqrt(xp.sum(A_next**2)))
    for name, norm in (("A_prev", norm_prev), ("A_next", norm_next)):
        if norm == 0.0:
            raise ValueError(f"{name} must have a nonzero entry on the mask (the cosine is undefined), got all zeros")
    cosine = float(xp.sum(A_prev * A_next)) / (norm_prev * norm_next)
    return max(0.0, 1.0 - cosine)
