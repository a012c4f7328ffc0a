r"""The polar split of transports :math:`O = RS` and the scaled-orthogonality deviation :math:`\delta_{\mathrm{orth}}`.

Each transport factors into a rotation :math:`R` (pure connection) and a deformation :math:`S = (O^\top O)^{1/2}`
(metric deformation); :math:`\delta_{\mathrm{orth}}` (Eq. (15)) measures how far a transport is from a scaled
rotation.  :func:`effective_transport_gram` computes :math:`\delta_{\mathrm{orth}}` and the mean Gram matrix of
the effective transports of multi-head attention from the heads alone.

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §5 (polar decomposition), §7, Eq. (15) and Figure 2(b)
(transport orthogonality, mean transport Gram); book/reference.md §B.4, §B.6.
Every displayed formula of that paper is lost; the formulas here are the reconstructions of
book/reference.md §B [RECON], checked against the surviving text and numerically.
N. J. Higham, *Functions of Matrices*, SIAM (2008), §8.1.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from workbench.attention._connection_checks import check_heads, check_mask, eye_like
from workbench.attention._overflow import binary_scale, check_overflow, overflow_ignored
from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, check_in_range, check_nonnegative, check_square, shape_of

__all__ = [
    "EffectiveTransportGram",
    "OrthogonalityDeviation",
    "effective_transport_gram",
    "orthogonality_deviation",
    "polar_transports",
]


def polar_transports(O, *, partial: bool = False, rtol: float | None = None):
    r"""Polar decomposition :math:`O = R\,S` of every transport: a rotation followed by a deformation.

    From the SVD :math:`O = U\Sigma V^\top`,

    .. math::

        R = U V^\top \in O(d),\qquad S = V\Sigma V^\top = (O^\top O)^{1/2} \succeq 0,\qquad R S = O.

    In the row convention :math:`X_j O = (X_j R) S`: transport rigidly, then deform.  :math:`R` is the
    length-preserving part (pure connection), :math:`S` the anisotropic scaling and shear (metric deformation).
    For nonsingular :math:`O` both factors are unique and :math:`S \succ 0`.  For singular :math:`O`,
    :math:`S` is still the unique positive semidefinite root, but the orthogonal factor is not unique (it is
    free on the kernel of :math:`O`); ``U @ Vᵀ`` from the full SVD is one orthogonal choice.  With
    ``partial=True`` the singular directions are dropped instead, :math:`R = U\,\mathbb 1[\sigma > \tau]\,V^\top`:
    the paper's partial isometry, unique, with :math:`R^\top R` the projector onto the range of :math:`S`
    and still :math:`RS = O`.

    Parameters
    ----------
    O : array, shape=[..., d, d]
        Transports (any leading batch shape, e.g. ``[n, n]`` edges or ``[H]`` heads).
    partial : bool
        Return the partial isometry instead of an orthogonal completion.
    rtol : float, optional
        With ``partial``, singular values :math:`\sigma \le \tau = \mathrm{rtol}\cdot\sigma_{\max}` count as zero;
        default ``d`` times the machine epsilon of the dtype.

    Returns
    -------
    R : array, shape=[..., d, d]
        Orthogonal (or, with ``partial``, a partial isometry).
    S : array, shape=[..., d, d]
        Symmetric positive semidefinite.

    References
    ----------
    Connection-Laplacian paper §5 (polar decomposition, partial isometry for singular transports);
    book/reference.md §B.4 [RECON; right polar form chosen, the paper's side is not recoverable];
    N. J. Higham, *Functions of Matrices*, SIAM (2008), §8.1.

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> O = np.array([[2.0, 1.0], [0.0, 1.0]])
    >>> R, S = polar_transports(O)
    >>> R_ref, S_ref = scipy.linalg.polar(O, side="right")  # an independent implementation
    >>> bool(np.allclose(R, R_ref, atol=1e-14) and np.allclose(S, S_ref, atol=1e-14))
    True
    >>> bool(np.allclose(R.T @ R, np.eye(2), atol=1e-15) and np.allclose(R @ S, O, atol=1e-14))
    True
    """
    O = as_array("O", O, min_ndim=2)
    check_square("O", O)
    check_in_range("rtol", 0.0 if rtol is None else rtol, 0.0)
    xp = namespace(O)
    U, sigma, Vh = xp.linalg.svd(O, full_matrices=True)
    S = xp.matrix_transpose(Vh) @ (sigma[..., :, None] * Vh)
    if partial:
        d = int(O.shape[-1])
        tol = (d * float(xp.finfo(O.dtype).eps) if rtol is None else rtol) * sigma[..., :1]
        keep = xp.astype(sigma > tol, O.dtype)
        return (U * keep[..., None, :]) @ Vh, S
    return U @ Vh, S


class OrthogonalityDeviation(NamedTuple):
    r"""Scaled-orthogonality deviation :math:`\delta_{\mathrm{orth}}`: the weighted mean and the per-edge values.

    Attributes
    ----------
    mean : float
        Weighted mean of :math:`\delta_{\mathrm{orth}}` over the valid pairs.
    edges : array, shape=[...]
        :math:`\delta_{\mathrm{orth}}` of every transport; 0 on invalid pairs (see ``valid``).
    valid : array of bool, shape=[...]
        The pairs that enter the mean: inside ``mask``, positive weight, nonzero transport.
    """

    mean: float
    edges: Any
    valid: Any


def orthogonality_deviation(O, weights=None, mask=None, *, return_edges: bool = False):
    r"""How far transports are from scaled-orthogonal: the diagnostic :math:`\delta_{\mathrm{orth}}` of Eq. (15).

    For each transport, with Gram matrix :math:`G = O^\top O` and mean scale :math:`\mu = \operatorname{tr}(G)/d`,

    .. math::

        \delta_{\mathrm{orth}} = \frac{\lVert G - \mu I_d\rVert_F}{\mu\, d}
        \in \Bigl[0, \sqrt{1 - 1/d}\,\Bigr],

    the root-mean-square entry of :math:`G/\mu - I_d`.
    It is invariant under :math:`O \mapsto cO` and under rotations on either side, vanishes exactly for
    :math:`O = cQ` with :math:`Q` orthogonal, and attains :math:`\sqrt{1 - 1/d}` for rank-one :math:`O` (because
    :math:`\lVert G - \mu I\rVert_F^2 = \lVert G\rVert_F^2 - d\mu^2 \le (\operatorname{tr}G)^2(1 - 1/d)` for
    :math:`G \succeq 0`).  The reduction is a weighted mean over valid pairs, :math:`\sum w\,\delta/\sum w`.
    With ``weights`` (typically :math:`A_{\mathrm{eff}}`) the weights are those; without, every pair with a
    nonzero transport counts once [RECON: the paper reports "weighted means across valid token pairs" without
    the weights].  Zero transports (:math:`\mu = 0`) have no scale and never count.

    Parameters
    ----------
    O : array, shape=[..., d, d]
        Transports, e.g. ``O_eff`` with ``shape=[n, n, d, d]``.
    weights : array, shape=O.shape[:-2], optional
        Nonnegative weights of the mean (e.g. ``A_eff``); pairs of zero weight are not valid.
    mask : bool array, shape=O.shape[:-2], optional
        Admissible pairs (True = included), e.g. the causal support or the non-special-token mask.
    return_edges : bool
        Return an :class:`OrthogonalityDeviation` with the per-edge values instead of the mean alone.

    Returns
    -------
    float or OrthogonalityDeviation

    Raises
    ------
    ValueError
        If no pair is valid (all transports zero, or all masked or weighted out).

    References
    ----------
    Connection-Laplacian paper §7, Eq. (15) (transport orthogonality); book/reference.md §B.6 [SEED for
    the per-edge formula, RECON for the weights].

    Examples
    --------
    >>> import numpy as np
    >>> O = np.stack([3.0 * np.array([[0.6, 0.8], [-0.8, 0.6]]), np.diag([1.0, 0.0])])
    >>> result = orthogonality_deviation(O, return_edges=True)
    >>> result.edges.round(12).tolist()  # scaled rotation: 0; rank one: sqrt(1 - 1/2)
    [0.0, 0.707106781187]
    >>> bool(np.isclose(result.mean, np.sqrt(0.5) / 2, rtol=1e-14))
    True
    """
    O = as_array("O", O, min_ndim=2)
    check_square("O", O)
    xp = namespace(O=O, weights=weights)  # a numpy boolean mask is accepted with torch data
    batch = shape_of(O)[:-2]
    d = int(O.shape[-1])
    # Each δ is scale-free: every transport is divided by a power of two first (exact), so no square overflows.
    O = O / binary_scale(O, axis=(-2, -1))
    gram = xp.matrix_transpose(O) @ O
    mu = xp.sum(O**2, axis=(-2, -1)) / d  # tr(OᵀO)/d without forming the trace of G
    valid = mu > 0
    if mask is not None:
        valid = valid & check_mask(mask, batch, xp, O, "O.shape[:-2]")
    if weights is not None:
        weights = as_array("weights", weights)
        if shape_of(weights) != batch:
            raise ValueError(f"weights must have shape {batch} matching O.shape[:-2], got shape {shape_of(weights)}")
        check_nonnegative("weights", weights)
        valid = valid & (weights > 0)
    if not bool(xp.any(valid)):
        raise ValueError(
            "orthogonality_deviation needs at least one valid pair (nonzero transport, inside mask, positive weight)"
        )
    scale = xp.where(valid, mu, xp.ones_like(mu))  # μ = 0 only on invalid pairs, which are zeroed below
    deviation = gram - scale[..., None, None] * eye_like(xp, d, O)
    delta = xp.sqrt(xp.sum(deviation**2, axis=(-2, -1))) / (scale * d)
    delta = xp.where(valid, delta, xp.zeros_like(delta))
    w = xp.astype(valid, O.dtype) if weights is None else xp.where(valid, weights, xp.zeros_like(weights))
    mean = float(xp.sum(w * delta) / xp.sum(w))
    return OrthogonalityDeviation(mean, delta, valid) if return_edges else mean


class EffectiveTransportGram(NamedTuple):
    r""":math:`\delta_{\mathrm{orth}}` of :math:`O^{\mathrm{eff}}` and its mean Gram matrix, from the heads."""

    mean: float  # weighted mean of δ_orth over valid pairs
    edges: np.ndarray  # δ_orth per pair, shape [n, n] (0 where not valid)
    valid: np.ndarray  # pairs that count, shape [n, n]
    mean_gram: np.ndarray  # Σ w_ij G_ij / Σ w_ij, shape [d, d]


def effective_transport_gram(A_heads, M_heads, weights=None, mask=None) -> EffectiveTransportGram:
    r""":math:`\delta_{\mathrm{orth}}` and the mean Gram matrix of the effective transports, from the heads alone.

    With head weights :math:`w_h(i,j) = A^{(h)}_{ij}/\sum_g A^{(g)}_{ij}` the transport is
    :math:`O^{\mathrm{eff}}_{ij} = \sum_h w_h M_h`, so its Gram matrix is a quadratic form in :math:`w`:

    .. math::

        G_{ij} = \sum_{h,g} w_h w_g\, B_{hg},\quad B_{hg} = M_h^\top M_g,\qquad
        \operatorname{tr}G_{ij} = \sum_{h,g} w_hw_g \operatorname{tr}B_{hg},\qquad
        \lVert G_{ij}\rVert_F^2 = \sum_{h,g,h',g'} w_hw_gw_{h'}w_{g'}\langle B_{hg}, B_{h'g'}\rangle_F,

    and :math:`\lVert G - \mu I\rVert_F^2 = \lVert G\rVert_F^2 - (\operatorname{tr}G)^2/d`.  The
    :math:`H^2 \times H^2` Gram matrix of the :math:`B_{hg}` is computed once, so memory is
    :math:`O(H^2d^2 + n^2H^2)` instead of the :math:`O(n^2d^2)` of :func:`effective_connection` and its Gram
    matrices: on a MiniLM layer (:math:`H = 12`, :math:`d = 384`) a constant 177 MiB against 288 MiB, 1.1 GiB and
    4.5 GiB at 8, 16 and 32 tokens, and 20× faster at 32 (``workbench bench transport-gram``; benchmarks/RESULTS.md).
    The result equals :func:`orthogonality_deviation` applied to :math:`O^{\mathrm{eff}}` (tested).

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        Nonnegative attention matrices.
    M_heads : array, shape=[H, d, d]
        Value-output maps.
    weights : array, shape=[n, n], optional
        Weights of the mean over pairs; default :math:`A_{\mathrm{eff}}` [RECON, as in
        :func:`orthogonality_deviation`].
    mask : bool array, shape=[n, n], optional
        Admissible pairs.

    Returns
    -------
    EffectiveTransportGram
        ``mean``, per-pair ``edges``, ``valid`` and the weighted ``mean_gram``
        :math:`\bar G = \sum w_{ij}G_{ij}/\sum w_{ij}` (numpy, computed on the host).

    References
    ----------
    Connection-Laplacian paper §7, Eq. (15) and Figure 2(b) (mean transport Gram); book/reference.md §B.6.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import effective_connection
    >>> rng = np.random.default_rng(0)
    >>> A_heads = rng.random((3, 4, 4)); A_heads /= A_heads.sum(axis=2, keepdims=True)
    >>> M_heads = rng.standard_normal((3, 5, 5))
    >>> A_eff, O_eff = effective_connection(A_heads, M_heads)
    >>> dense = orthogonality_deviation(O_eff, weights=A_eff)
    >>> bool(np.isclose(effective_transport_gram(A_heads, M_heads).mean, dense, rtol=1e-10))
    True
    """
    A_heads, M_heads = check_heads(A_heads, M_heads)
    A, M = to_numpy(A_heads).astype(np.float64), to_numpy(M_heads).astype(np.float64)
    # δ is of degree 0 and the mean Gram of degree 2 in M: work on M / 2^e (exact) and scale the Gram back.
    unit = float(binary_scale(M))
    M = M / unit
    H, n, d = A.shape[0], A.shape[1], M.shape[-1]
    total = A.sum(axis=0)
    active = total > 0
    w = A / np.where(active, total, 1.0)  # head weights per edge (zero on inactive edges)
    B = (np.swapaxes(M, -1, -2)[:, None] @ M[None, :]).reshape(H * H, d * d)  # B_hg = M_hᵀ M_g (batched BLAS)
    trace_b = (M.reshape(H, d * d) @ M.reshape(H, d * d).T).reshape(H * H)  # tr(M_hᵀ M_g) = ⟨M_h, M_g⟩_F
    gram_b = B @ B.T
    u = (w[:, None] * w[None, :]).transpose(2, 3, 0, 1).reshape(n, n, H * H)  # u_ij = w(i,j) ⊗ w(i,j)
    trace_g = u @ trace_b
    norm2_g = np.sum((u @ gram_b) * u, axis=-1)
    mu = trace_g / d
    valid = active & (mu > 0)
    if mask is not None:
        valid &= to_numpy(check_mask(mask, (n, n), namespace(A), A, "A_heads"))
    pair_weights = total / H if weights is None else to_numpy(as_array("weights", weights, ndim=2)).astype(float)
    if pair_weights.shape != (n, n):
        raise ValueError(f"weights must have shape ({n}, {n}) matching A_heads, got shape {pair_weights.shape}")
    check_nonnegative("weights", pair_weights)
    valid &= pair_weights > 0
    if not valid.any():
        raise ValueError(
            "effective_transport_gram needs at least one valid pair (active edge, inside mask, positive weight)"
        )
    scale = np.where(valid, mu, 1.0)
    spread = np.maximum(norm2_g - trace_g**2 / d, 0.0)  # ‖G − μI‖² ≥ 0 up to rounding
    delta = np.where(valid, np.sqrt(spread) / (scale * d), 0.0)
    pw = np.where(valid, pair_weights, 0.0)
    mean_u = np.einsum("ij,ijk->k", pw, u) / pw.sum()
    with overflow_ignored():
        mean_gram = (mean_u @ B).reshape(d, d) * unit * unit
    check_overflow("the mean transport Gram", mean_gram, {"M_heads": M_heads})
    return EffectiveTransportGram(float((pw * delta).sum() / pw.sum()), delta, valid, mean_gram)
