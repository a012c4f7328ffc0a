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

from workbench.attention._connection_checks import check_head_factors, check_heads, check_mask, eye_like
from workbench.attention._overflow import binary_scale, check_overflow, overflow_ignored
from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, check_flag, check_in_range, check_nonnegative, check_square, shape_of

__all__ = [
    "EffectiveTransportGram",
    "OrthogonalityDeviation",
    "TransportForm",
    "effective_transport_gram",
    "factored_orthogonality_deviation",
    "factored_transport_gram",
    "orthogonality_deviation",
    "polar_transports",
    "transport_form",
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
    partial = check_flag("partial", partial)
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

    and :math:`\lVert G - \mu I\rVert_F^2 = \lVert G\rVert_F^2 - (\operatorname{tr}G)^2/d`.  Since
    :math:`B_{gh} = B_{hg}^\top` and :math:`w_hw_g = w_gw_h`, the form lives on the :math:`H(H+1)/2` symmetric
    matrices :math:`S_{hh} = B_{hh}`, :math:`S_{hg} = B_{hg} + B_{hg}^\top` (:math:`h < g`), whose Gram matrix is
    computed once: memory is :math:`O(H^2d^2/2 + n^2H^2)` instead of the :math:`O(n^2d^2)` of
    :func:`effective_connection` and its Gram matrices.  On a MiniLM layer (:math:`H = 12`, :math:`d = 384`) that
    is a constant 154 MiB against 360 MiB, 1.4 GiB and 5.6 GiB at 8, 16 and 32 tokens, and about 40× faster at 32
    (``workbench bench transport-gram``; benchmarks/RESULTS.md).  The :math:`n^2H^2` per-edge coefficients are
    formed for a block of query rows at a time (at most 64 MiB), so at long contexts the memory beyond the
    :math:`[n, n]` results stays bounded (:math:`n = 1024`, :math:`H = 12`: 64 MiB blocks instead of up to
    1.1 GiB).  The result equals :func:`orthogonality_deviation` applied to :math:`O^{\mathrm{eff}}` (tested).

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
    terms = _dense_gram_terms(M / unit)
    return _transport_gram(A, terms, unit, weights, mask, {"M_heads": M_heads})


class _GramTerms(NamedTuple):
    r"""The quadratic form of :math:`G_{ij}` in the head weights, on a basis of matrices :math:`S_p`.

    :math:`G_{ij} = \sum_p w_{h_p}(i,j)\,w_{g_p}(i,j)\,S_p`; ``trace[p]`` is :math:`\operatorname{tr}S_p`,
    ``gram[p, q]`` is :math:`\langle S_p, S_q\rangle_F` and ``combine(c)`` is :math:`\sum_p c_pS_p` (shape [d, d]).
    """

    first: np.ndarray  # h_p
    second: np.ndarray  # g_p
    trace: np.ndarray
    gram: np.ndarray
    combine: Any
    d: int


def _dense_gram_terms(M: np.ndarray) -> _GramTerms:
    r"""The terms of the quadratic form from the dense maps, on a basis of symmetric matrices.

    The basis is :math:`S_{hh} = B_{hh}`, :math:`S_{hg} = B_{hg} + B_{hg}^\top` (:math:`h < g`) with
    :math:`B_{hg} = M_h^\top M_g`.

    Because :math:`B_{gh} = B_{hg}^\top` and :math:`w_hw_g` is symmetric in :math:`(h, g)`, the
    :math:`H(H+1)/2` matrices :math:`S_p` carry the whole form: about half the products and a quarter of the Gram
    entries of the :math:`H^2` basis :math:`B_{hg}`.
    """
    H, d = M.shape[0], M.shape[-1]
    first, second = np.triu_indices(H)
    side = np.ascontiguousarray(M.transpose(1, 0, 2)).reshape(d, H * d)  # [M_1 | M_2 | ... | M_H]
    S = np.empty((first.size, d, d))
    p = 0
    for h in range(H):
        row = M[h].T @ side[:, h * d :]  # [B_hh | B_h,h+1 | ... | B_hH] in one BLAS call
        S[p] = row[:, :d]
        for k in range(1, H - h):
            block = row[:, k * d : (k + 1) * d]
            S[p + k] = block + block.T
        p += H - h
    inner = M.reshape(H, d * d) @ M.reshape(H, d * d).T  # ⟨M_h, M_g⟩_F = tr(M_hᵀ M_g)
    trace = np.where(first == second, 1.0, 2.0) * inner[first, second]
    flat = S.reshape(first.size, d * d)
    return _GramTerms(first, second, trace, flat @ flat.T, lambda c: (c @ flat).reshape(d, d), d)


def _factored_gram_terms(U: np.ndarray, V: np.ndarray) -> _GramTerms:
    r"""The terms of the quadratic form from factors :math:`M_h = U_hV_h^\top` (``U``, ``V`` of shape [H, d, r]).

    The products :math:`B_{hg} = M_h^\top M_g = V_h\Gamma_{hg}V_g^\top` are read through :math:`\Gamma = U^\top U`
    and :math:`\Pi = V^\top V`, cut into :math:`r\times r` blocks (the Gram matrices of the concatenated factors):

    .. math::

        \operatorname{tr}B_{hg} = \operatorname{tr}(\Gamma_{hg}\Pi_{gh}),\qquad
        \langle B_{hg}, B_{kl}\rangle_F = \operatorname{tr}(\Gamma_{gh}\Pi_{hk}\Gamma_{kl}\Pi_{lg})
        = \langle Z^{(h)}_{gk}, (Z^{(l)}_{kg})^\top\rangle_F,\quad Z^{(h)} = \Gamma_{:h}\Pi_{h:},

    so with :math:`R = Hr` the cost is :math:`O(dR^2 + R^3 + H^2R^2)` instead of :math:`O(H^2d^3 + H^4d^2)`.  The
    :math:`H^2` products are then summed into the basis of :func:`_dense_gram_terms`, :math:`S_{hh} = B_{hh}`,
    :math:`S_{hg} = B_{hg} + B_{gh}` (:math:`h < g`): :math:`H(H+1)/2` terms, so each edge's quadratic form
    costs about a quarter of the :math:`H^2` one.
    """
    H, d, r = U.shape
    R = H * r
    U_all = np.ascontiguousarray(U.transpose(1, 0, 2)).reshape(d, R)  # [U_1 | ... | U_H]
    V_all = np.ascontiguousarray(V.transpose(1, 0, 2)).reshape(d, R)
    Gamma, Pi = U_all.T @ U_all, V_all.T @ V_all
    trace = (Gamma * Pi).reshape(H, r, H, r).sum(axis=(1, 3)).reshape(H * H)  # Π is symmetric: Π_gh = Π_hgᵀ
    Z = Gamma.reshape(R, H, r).transpose(1, 0, 2) @ Pi.reshape(H, r, R)  # Z[h] = Γ[:, h] Π[h, :], shape [H, R, R]
    blocks = Z.reshape(H, H, r, H, r)  # [h, g, b, k, c] = Z[h][(g, b), (k, c)]
    left = blocks.transpose(1, 3, 0, 2, 4).reshape(H, H, H, r * r)  # [g, k, h, (b, c)]
    right = blocks.transpose(3, 1, 0, 4, 2).reshape(H, H, H, r * r)  # [g, k, l, (b, c)] = Z[l][(k, c), (g, b)]
    gram = (left @ right.transpose(0, 1, 3, 2)).transpose(2, 0, 1, 3).reshape(H * H, H * H)  # [(h, g), (k, l)]
    # S_p = Σ of the B_hg in the orbit {(h, g), (g, h)} of p: E[(h, g), p] = 1 there
    first, second = np.triu_indices(H)
    E = np.zeros((H * H, first.size))
    E[first * H + second, np.arange(first.size)] = 1.0
    E[second * H + first, np.arange(first.size)] = 1.0
    Gamma_blocks = Gamma.reshape(H, r, H, r)

    def combine(c):
        pairs = (E @ c).reshape(H, 1, H, 1)  # the coefficient of each B_hg
        return V_all @ (Gamma_blocks * pairs).reshape(R, R) @ V_all.T

    return _GramTerms(first, second, E.T @ trace, E.T @ gram @ E, combine, d)


class TransportForm:
    r"""The transport Gram of a layer as a quadratic form in the head weights, read once from its factors.

    :math:`G_{ij} = (O^{\mathrm{eff}}_{ij})^\top O^{\mathrm{eff}}_{ij}` is a quadratic form in the head weights
    :math:`w_h(i, j)` whose :math:`H(H+1)/2` coefficient matrices depend on :math:`W_V^h, W_O^h` alone.  Reading
    them costs :math:`O(dR^2 + R^3 + H^2R^2)` (:math:`R = Hr`); :meth:`gram` then costs :math:`O(n^2H^4)` per
    attention pattern, so a model that reads many texts reads each layer's form once.  Made by
    :func:`transport_form`.
    """

    def __init__(self, terms: _GramTerms, unit: float, n_heads: int, inputs: dict):
        self._terms, self._unit, self._inputs = terms, unit, inputs
        self.n_heads, self.d = n_heads, terms.d

    def __repr__(self) -> str:
        return f"TransportForm(n_heads={self.n_heads}, d={self.d})"

    def gram(self, A_heads, weights=None, mask=None) -> EffectiveTransportGram:
        r""":func:`factored_transport_gram` of the heads' attention ``A_heads`` [H, n, n] under this form.

        ``weights`` and ``mask`` are those of :func:`effective_transport_gram`.
        """
        A_heads = as_array("A_heads", A_heads, ndim=3)
        check_square("A_heads", A_heads)
        if int(A_heads.shape[0]) != self.n_heads:
            raise ValueError(
                f"A_heads must have one map per head of the form, {self.n_heads}, got shape {shape_of(A_heads)}"
            )
        check_nonnegative("A_heads", A_heads)
        A = to_numpy(A_heads).astype(np.float64)
        return _transport_gram(A, self._terms, self._unit, weights, mask, self._inputs)


def transport_form(W_V, W_O) -> TransportForm:
    r"""The :class:`TransportForm` of the maps :math:`M_h = W_V^hW_O^h` (``W_V`` [H, d, r], ``W_O`` [H, r, d]).

    ``transport_form(W_V, W_O).gram(A_heads, weights, mask)`` equals
    ``factored_transport_gram(A_heads, W_V, W_O, weights, mask)``: read the form once per layer and apply it to
    the attention of every text.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> W_V, W_O = rng.standard_normal((2, 4, 2)), rng.standard_normal((2, 2, 4))
    >>> form = transport_form(W_V, W_O)
    >>> A = rng.random((2, 3, 3)); A /= A.sum(axis=-1, keepdims=True)
    >>> bool(np.isclose(form.gram(A).mean, effective_transport_gram(A, W_V @ W_O).mean, rtol=1e-10))
    True
    """
    W_V, W_O = as_array("W_V", W_V, ndim=3), as_array("W_O", W_O, ndim=3)
    H, d, r = shape_of(W_V)
    if shape_of(W_O) != (H, r, d):
        raise ValueError(f"W_V [H, d, r] and W_O [H, r, d] must match, got shapes {shape_of(W_V)} and {shape_of(W_O)}")
    U, V = to_numpy(W_V).astype(np.float64), to_numpy(W_O).astype(np.float64)
    unit_u, unit_v = float(binary_scale(U)), float(binary_scale(V))
    terms = _factored_gram_terms(U / unit_u, np.swapaxes(V / unit_v, -1, -2))
    return TransportForm(terms, unit_u * unit_v, H, {"W_V": W_V, "W_O": W_O})


def factored_transport_gram(A_heads, W_V, W_O, weights=None, mask=None) -> EffectiveTransportGram:
    r""":func:`effective_transport_gram` of the maps :math:`M_h = W_V^hW_O^h`, from the factors.

    The :math:`d\times d` maps are never formed: a model's reading holds the factors, of rank :math:`r = d_v`.
    For many attention patterns of one layer, read its :func:`transport_form` once.

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        The heads' attention (nonnegative).
    W_V : array, shape=[H, d, r]
    W_O : array, shape=[H, r, d]
    weights, mask
        As in :func:`effective_transport_gram`.

    Returns
    -------
    EffectiveTransportGram
        Equal to ``effective_transport_gram(A_heads, W_V @ W_O, weights, mask)`` up to rounding (tested).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A = rng.random((2, 3, 3)); A /= A.sum(axis=-1, keepdims=True)
    >>> W_V, W_O = rng.standard_normal((2, 4, 2)), rng.standard_normal((2, 2, 4))
    >>> dense = effective_transport_gram(A, W_V @ W_O)
    >>> bool(np.isclose(factored_transport_gram(A, W_V, W_O).mean, dense.mean, rtol=1e-10))
    True
    """
    A_heads, W_V, W_O = check_head_factors(A_heads, W_V, W_O)
    return transport_form(W_V, W_O).gram(A_heads, weights, mask)


#: Bytes of the per-edge coefficient arrays of :func:`_transport_gram` held at once (query rows are processed in
#: blocks of this size: at n = 1024, H = 12 the whole [n, n, H²] array would take 1.1 GiB, twice over).
_EDGE_BLOCK_BYTES = 64 * 2**20


def _transport_gram(A, terms: _GramTerms, unit: float, weights, mask, inputs) -> EffectiveTransportGram:
    """The reductions of :func:`effective_transport_gram` from the terms of the quadratic form.

    The coefficients :math:`u_p(i, j)` of every edge take ``n² P`` numbers (``P`` terms); they are formed for a
    block of query rows at a time (at most ``_EDGE_BLOCK_BYTES`` each), so the memory beyond the ``[n, n]``
    results is bounded whatever ``n``.  Every edge's value is computed exactly as without blocks.
    """
    H, n, d = A.shape[0], A.shape[1], terms.d
    total = A.sum(axis=0)
    active = total > 0
    valid = active.copy()
    if mask is not None:
        valid &= to_numpy(check_mask(mask, (n, n), namespace(A), A, "A_heads"))
    pair_weights = total / H if weights is None else to_numpy(as_array("weights", weights, ndim=2)).astype(float)
    if pair_weights.shape != (n, n):
        raise ValueError(f"weights must have shape ({n}, {n}) matching A_heads, got shape {pair_weights.shape}")
    check_nonnegative("weights", pair_weights)
    valid &= pair_weights > 0
    P = terms.first.size
    rows = max(1, _EDGE_BLOCK_BYTES // (8 * n * max(P, H)))
    delta = np.zeros((n, n))
    weighted_u = np.zeros(P)
    for start in range(0, n, rows):
        block = slice(start, min(start + rows, n))
        t = total[block]
        w = np.moveaxis(A[:, block] / np.where(active[block], t, 1.0), 0, -1)  # head weights [b, n, H], 0 if inactive
        u = w[..., terms.first] * w[..., terms.second]  # the coefficients of the S_p at each edge
        del w
        trace_g = u @ terms.trace
        norm2_g = np.sum((u @ terms.gram) * u, axis=-1)
        mu = trace_g / d
        valid[block] &= mu > 0
        ok = valid[block]
        scale = np.where(ok, mu, 1.0)
        spread = np.maximum(norm2_g - trace_g**2 / d, 0.0)  # ‖G − μI‖² ≥ 0 up to rounding
        delta[block] = np.where(ok, np.sqrt(spread) / (scale * d), 0.0)
        weighted_u += np.einsum("ij,ijk->k", np.where(ok, pair_weights[block], 0.0), u)
    if not valid.any():
        raise ValueError(
            "effective_transport_gram needs at least one valid pair (active edge, inside mask, positive weight)"
        )
    pw = np.where(valid, pair_weights, 0.0)
    mean_u = weighted_u / pw.sum()
    with overflow_ignored():
        mean_gram = terms.combine(mean_u) * unit * unit
    check_overflow("the mean transport Gram", mean_gram, inputs)
    return EffectiveTransportGram(float((pw * delta).sum() / pw.sum()), delta, valid, mean_gram)


def factored_orthogonality_deviation(W_V, W_O) -> np.ndarray:
    r""":math:`\delta_{\mathrm{orth}}` of each map :math:`M_h = W_V^hW_O^h` from its factors.

    With the thin QR :math:`(W_O^h)^\top = QR` (:math:`Q` of shape [d, k], orthonormal columns),
    :math:`G = M_h^\top M_h = Q\,C\,Q^\top` with the :math:`k\times k` core :math:`C = R\,(W_V^{h\top}W_V^h)\,R^\top`,
    so :math:`\lVert G - \mu I_d\rVert_F^2 = \lVert C - \mu I_k\rVert_F^2 + (d - k)\mu^2` and
    :math:`\mu = \operatorname{tr}C/d`: the value of :func:`orthogonality_deviation` of :math:`M_h` (tested), at
    :math:`O(dr^2)` per head instead of :math:`O(d^3)`.

    Parameters
    ----------
    W_V : array, shape=[H, d, r]
    W_O : array, shape=[H, r, d]

    Returns
    -------
    ndarray, shape=[H]

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.linalg.qr(np.random.default_rng(1).standard_normal((4, 4)))[0]
    >>> float(factored_orthogonality_deviation(Q[None], Q.T[None])[0]) < 1e-12  # M = Q Qᵀ = I is orthogonal
    True
    """
    W_V, W_O = as_array("W_V", W_V, ndim=3), as_array("W_O", W_O, ndim=3)
    H, d, r = shape_of(W_V)
    if shape_of(W_O) != (H, r, d):
        raise ValueError(f"W_V [H, d, r] and W_O [H, r, d] must match, got shapes {shape_of(W_V)} and {shape_of(W_O)}")
    U = to_numpy(W_V).astype(np.float64)
    V = np.swapaxes(to_numpy(W_O).astype(np.float64), -1, -2)
    U, V = U / binary_scale(U, axis=(-2, -1)), V / binary_scale(V, axis=(-2, -1))  # δ is scale-free; exact
    d = U.shape[-2]
    R = np.linalg.qr(V, mode="r")  # [H, k, r], k = min(d, r)
    k = R.shape[-2]
    core = R @ (np.swapaxes(U, -1, -2) @ U) @ np.swapaxes(R, -1, -2)
    core = 0.5 * (core + np.swapaxes(core, -1, -2))
    mu = np.trace(core, axis1=-2, axis2=-1) / d
    if not np.all(mu > 0):
        raise ValueError(
            f"W_V and W_O must give a nonzero map M_h = W_V^h W_O^h in every head, got M_h = 0 in heads "
            f"{np.flatnonzero(~(mu > 0)).tolist()}"
        )
    gap = core - mu[:, None, None] * np.eye(k)
    return np.sqrt(np.sum(gap**2, axis=(-2, -1)) + (d - k) * mu**2) / (mu * d)
