r"""The parameter level of the operator family: effective bilinear forms, skew ratios, parameter counts, bond inertia.

With :math:`M = W_QW_K^\top = M_S + M_A` (bond and link), each corner :math:`(b, a)` reads an effective form
:math:`(M_S^{\mathrm{op}}, M_A^{\mathrm{op}})`; the definiteness of the bond (its Sylvester inertia and the
share of negative eigenvalues) says how far a head is from the definite corners DMAP and DMTN.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §1, §7, §9 (Table 1), §10, Table 4; book/reference.md
§A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and its corollaries [DERIVED], §A.10
(:math:`\rho_{\mathrm{skew}}`) [RECON].
Attention Geometry §10 (Eq. (128), :math:`\mathcal W^{\mathrm{DMTN}}`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.attention._operators import OPERATORS, SQRT_HALF, check_query_key_weights, corner_of, symmetrised
from workbench.attention._overflow import binary_scale, check_overflow, overflow_ignored
from workbench.attention._reversibility import score_skew_ratio
from workbench.attention._split_checks import transpose
from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, check_choice, check_in_range, check_integer, check_square

__all__ = [
    "BondReading",
    "bond_inertia",
    "bond_reading",
    "effective_form",
    "negative_mass",
    "operator_skew_ratio",
    "parameter_count",
]


def effective_form(W_Q, W_K, operator):
    r"""Effective bilinear form :math:`(M_S^{\mathrm{op}}, M_A^{\mathrm{op}})` of an operator.

    With :math:`M = W_QW_K^\top = M_S + M_A`, :math:`W_M = (W_Q + W_K)/\sqrt2`, :math:`W_N = (W_Q - W_K)/\sqrt2`,
    and :math:`M_S = \tfrac12W_MW_M^\top - \tfrac12W_NW_N^\top`:

    ==========  =====================================  ====================
    operator    :math:`M_S^{\mathrm{op}}`               :math:`M_A^{\mathrm{op}}`
    ==========  =====================================  ====================
    ATTN        :math:`M_S`                             :math:`M_A`
    DMTN        :math:`\tfrac12W_MW_M^\top`             :math:`M_A`
    DMAP        :math:`\tfrac12W_MW_M^\top`             0
    ATAP        :math:`M_S`                             0
    ==========  =====================================  ====================

    computed as :math:`M_S^{\mathrm{op}} = M_S + (1 - b)\tfrac12W_NW_N^\top`, :math:`M_A^{\mathrm{op}} = aM_A`, so
    the ATTN corner returns :func:`~workbench.attention.bond_link_split` of :math:`M` exactly, and
    :math:`\mathcal W^{\mathrm{DMTN}} = M_S^{\mathrm{op}} + M_A^{\mathrm{op}} = M + \tfrac12W_NW_N^\top`.  On a
    context :math:`X`, the corner's logits are :math:`\beta[XM_S^{\mathrm{op}}X^\top + XM_A^{\mathrm{op}}X^\top
    + (1 - a)\tfrac12(g_i - g_j)]` with :math:`g_i = x_iM_S^{\mathrm{op}}x_i^\top`: the exact link of DMAP and ATAP
    is quadratic in :math:`x`, not bilinear, and carries no skew (it is a destination tilt).

    Parameters
    ----------
    W_Q, W_K : array, shape=[..., D, d_h]
        Query and key maps (a stack ``[H, D, d_h]`` gives one form per head).
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'} or tuple (b, a)

    Returns
    -------
    (M_S_op, M_A_op) : tuple of arrays, shape=[..., D, D]
        Exactly symmetric and exactly antisymmetric.

    References
    ----------
    book/reference.md §A.7 "The four parameterisations", parameter level [CODE DITFLEX AMAP README] and
    §A.10 (:math:`M^{\mathrm{op}}`) [RECON]; Attention Geometry §10 (Eq. (128), :math:`\mathcal W^{\mathrm{DMTN}}`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> W_Q, W_K = rng.standard_normal((5, 2)), rng.standard_normal((5, 2))
    >>> W_M = (W_Q + W_K) / np.sqrt(2)
    >>> S_op, A_op = effective_form(W_Q, W_K, "DMAP")
    >>> bool(np.allclose(S_op, 0.5 * W_M @ W_M.T) and not np.any(A_op))
    True
    """
    b, a = corner_of(operator)
    W_Q, W_K = check_query_key_weights(W_Q, W_K)
    with overflow_ignored():
        form = _effective_form(W_Q, W_K, b, a)
    return check_overflow("the effective form (M_S^op, M_A^op)", form, {"W_Q": W_Q, "W_K": W_K})


def _effective_form(W_Q, W_K, b, a):
    M = W_Q @ transpose(W_K)
    Mt = transpose(M)
    M_S, M_A = 0.5 * (M + Mt), 0.5 * (M - Mt)
    if b != 1.0:
        W_N = SQRT_HALF * (W_Q - W_K)
        M_S = M_S + (1.0 - b) * 0.5 * symmetrised(W_N @ transpose(W_N))
    return M_S, a * M_A


def operator_skew_ratio(W_Q, W_K, operator="ATTN"):
    r"""Score skew ratio :math:`\rho_{\mathrm{skew}} = \lVert M_A^{\mathrm{op}}\rVert_F / \lVert M_S^{\mathrm{op}}\rVert_F` [RECON].

    The ratio of link to bond in the operator's effective form (:func:`effective_form`).  It is exactly 0 for
    DMAP and ATAP (exact link: no bilinear skew).  For independent standard Gaussian :math:`W_Q, W_K \in
    \mathbb R^{D\times d_h}` (attention at initialisation)

    .. math::

        \mathbb E\lVert M_A\rVert_F^2 = \tfrac12 Dd_h(D - 1), \qquad
        \mathbb E\lVert M_S\rVert_F^2 = \tfrac12 Dd_h(D + 1),

    (the diagonal of :math:`M` is all bond, :math:`\mathbb E\operatorname{tr}M^2 = Dd_h`), so
    :math:`\rho_{\mathrm{skew}} \approx \sqrt{(D-1)/(D+1)} \to 1` with fluctuations of order :math:`1/D`.

    Parameters
    ----------
    W_Q, W_K : array, shape=[D, d_h]
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'} or tuple (b, a)
        Default ``'ATTN'``.

    Returns
    -------
    float
        ``inf`` for a pure link (:math:`M_S^{\mathrm{op}} = 0 \ne M_A^{\mathrm{op}}`).

    Raises
    ------
    ValueError
        If the whole effective form is zero (the ratio is 0/0).

    See Also
    --------
    workbench.attention.score_skew_ratio : the same ratio for any bilinear form :math:`M`.

    References
    ----------
    Attention Geometry §9, Table 1 (:math:`\rho_{\mathrm{skew}}`); book/reference.md §A.10 [RECON], the v1
    "R ratio" [CODE DITFLEX ``qk_ratio``].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(4)
    >>> W_Q, W_K = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    >>> M = W_Q @ W_K.T
    >>> bool(np.isclose(operator_skew_ratio(W_Q, W_K), np.linalg.norm(M - M.T) / np.linalg.norm(M + M.T)))
    True
    >>> operator_skew_ratio(W_Q, W_K, "DMAP")
    0.0
    """  # noqa: E501
    W_Q, W_K = check_query_key_weights(W_Q, W_K, ndim=2)
    b, a = corner_of(operator)
    # The effective form is homogeneous of degree 2 in (W_Q, W_K) and the ratio of degree 0, so one common
    # power-of-two scale (exact) keeps huge weights from overflowing the form without changing the ratio.
    scale = binary_scale(namespace(W_Q).stack([W_Q, W_K]))
    M_S, M_A = _effective_form(W_Q / scale, W_K / scale, b, a)
    return score_skew_ratio(M_S + M_A)


def parameter_count(operator, d_model, d_head):
    r"""Number of query/key weights a corner needs for its logits (per head).

    ==========  ========================  =====================================================================
    operator    count                     why
    ==========  ========================  =====================================================================
    DMAP        :math:`Dd_h`              the logits depend on :math:`W_Q, W_K` only through
                                          :math:`W_M = (W_Q + W_K)/\sqrt2` (bond :math:`\tfrac12\langle m_i,
                                          m_j\rangle`, exact link :math:`\tfrac12(g_i - g_j)`, :math:`g =
                                          \tfrac12\lVert m\rVert^2`); :math:`W_N` is a flat gauge orbit of the
                                          loss, so only :math:`W_M` is stored (the folded distance form)
    DMTN        :math:`2Dd_h`             bond from :math:`W_M`, but the free link
                                          :math:`M_A = \tfrac12(W_NW_M^\top - W_MW_N^\top)` needs :math:`W_N`
    ATAP        :math:`2Dd_h`             the indefinite bond
                                          :math:`\tfrac12W_MW_M^\top - \tfrac12W_NW_N^\top` needs both factors
    ATTN        :math:`2Dd_h`             :math:`W_Q` and :math:`W_K`
    ==========  ========================  =====================================================================

    These count stored weights, as Attention Geometry does ("only half of the ATTN weights" for DMAP); they do not
    subtract the continuous symmetries every corner has (:math:`W_M \mapsto W_MR`, :math:`R \in O(d_h)`, etc.).

    Parameters
    ----------
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}
    d_model, d_head : int
        Model width :math:`D \ge 1` and head width :math:`d_h \ge 1`.

    Returns
    -------
    int

    References
    ----------
    Attention Geometry §10 ("only half of the ATTN weights"); book/reference.md §A.7 corollaries (DMAP
    "half of attention's QK parameters") [DERIVED].

    Examples
    --------
    >>> [parameter_count(op, 384, 32) for op in OPERATORS]
    [12288, 24576, 24576, 24576]
    >>> parameter_count("DMAP", 384, 32) * 2 == parameter_count("ATTN", 384, 32)
    True
    """
    check_choice("operator", operator, OPERATORS)
    d_model = check_integer("d_model", d_model, 1)
    d_head = check_integer("d_head", d_head, 1)
    return d_model * d_head if operator == "DMAP" else 2 * d_model * d_head


def _bond_eigenvalues(M_S):
    M_S = as_array("M_S", M_S, ndim=2)
    check_square("M_S", M_S)
    xp = namespace(M_S)
    scale = float(xp.max(xp.abs(M_S))) if int(M_S.shape[0]) else 0.0
    gap = float(xp.max(xp.abs(M_S - transpose(M_S)))) if int(M_S.shape[0]) else 0.0
    if gap > 1e-10 * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"M_S must be symmetric, got max |M_S - M_S^T| = {gap:.6g} (relative {gap / scale:.6g}); "
            "pass the bond of bond_link_split(M)"
        )
    return np.asarray(to_numpy(xp.linalg.eigvalsh(symmetrised(M_S))), dtype=np.float64)


def factored_bond_eigenvalues(W_Q, W_K) -> np.ndarray:
    r"""Eigenvalues (ascending) of the bond :math:`M_S = \tfrac12(W_QW_K^\top + W_KW_Q^\top)` from its factors.

    With :math:`F = [W_Q\; W_K]` (shape [D, 2r]) and :math:`J = \tfrac12\bigl(\begin{smallmatrix}0 & I\\ I &
    0\end{smallmatrix}\bigr)`, :math:`M_S = FJF^\top`; from the thin QR :math:`F = QR` (:math:`Q` of shape [D, k],
    :math:`k = \min(D, 2r)`), :math:`M_S = Q\,(RJR^\top)\,Q^\top`, so its spectrum is that of the
    :math:`k\times k` core :math:`RJR^\top` and :math:`D - k` exact zeros: :math:`O(Dr^2 + r^3)` instead of the
    :math:`O(D^3)` of ``eigvalsh(M_S)`` (the core of :func:`bond_reading`; equal to :func:`_bond_eigenvalues` of
    the dense :math:`M_S` up to rounding, tested).  ``W_Q``, ``W_K`` have shape [D, r].
    """
    W_Q, W_K = np.asarray(W_Q, dtype=np.float64), np.asarray(W_K, dtype=np.float64)
    D, r = W_Q.shape
    R = np.linalg.qr(np.hstack([W_Q, W_K]), mode="r")  # [k, 2r]
    core = 0.5 * (R[:, :r] @ R[:, r:].T)  # R J Rᵀ = ½(R_Q R_Kᵀ + R_K R_Qᵀ), R = [R_Q | R_K]
    core = core + core.T
    return np.sort(np.concatenate([np.linalg.eigvalsh(core), np.zeros(D - R.shape[0])]))


class BondReading(NamedTuple):
    """The bond of a head read from its factors: its spectrum, Sylvester inertia and negative share."""

    eigenvalues: np.ndarray  # ascending, shape [D]
    inertia: tuple[int, int, int]  # (n_pos, n_neg, n_zero), the rule of bond_inertia
    negative_mass: float  # the share of negative_mass


def bond_reading(W_Q, W_K, rtol=1e-10) -> BondReading:
    r"""The bond :math:`M_S = \tfrac12(W_QW_K^\top + W_KW_Q^\top)` of a head read from its factors, never formed.

    Its spectrum is that of a :math:`k\times k` core, :math:`k = \min(D, 2d_h)`, and :math:`D - k` exact zeros
    (thin QR of :math:`[W_Q\;W_K]`): :math:`O(Dd_h^2)` instead of the :math:`O(D^3)` of a dense eigensolve.
    ``inertia`` and ``negative_mass`` are those of :func:`bond_inertia` and :func:`negative_mass` of the dense
    bond (tested against them).

    Parameters
    ----------
    W_Q, W_K : array, shape=[D, d_h]
        The query and key maps (a bias is one more row, as in the augmented form of a head with biases).
    rtol : float
        The zero threshold of :func:`bond_inertia`, ``rtol >= 0``.

    Returns
    -------
    BondReading

    References
    ----------
    Attention Geometry Table 4 (definite / indefinite bond); book/reference.md §A.6, §A.7.

    Examples
    --------
    >>> import numpy as np
    >>> W = np.random.default_rng(0).standard_normal((6, 2))
    >>> bond_reading(W, W).inertia  # a tied head: M_S = W Wᵀ is positive semidefinite of rank 2
    (2, 0, 4)
    """
    W_Q, W_K = check_query_key_weights(W_Q, W_K, ndim=2)
    rtol = check_in_range("rtol", rtol, 0.0)
    eigenvalues = factored_bond_eigenvalues(to_numpy(W_Q), to_numpy(W_K))
    return BondReading(eigenvalues, spectrum_inertia(eigenvalues, rtol), spectrum_negative_mass(eigenvalues))


def bond_inertia(M_S, rtol=1e-10):
    r"""Inertia of a bond form (Sylvester): the numbers of positive, negative and zero eigenvalues.

    An eigenvalue :math:`\lambda` counts as zero when :math:`|\lambda| \le \mathrm{rtol}\cdot\max_k|\lambda_k|`.
    A definite bond (DMAP, DMTN: :math:`\tfrac12W_MW_M^\top`) has ``n_neg = 0``; an indefinite one (ATAP,
    ATTN) has both signs, and :math:`d^2_{ij}` is then only a pseudo-distance.

    Parameters
    ----------
    M_S : array, shape=[D, D]
        Symmetric (checked to a relative 1e-10).
    rtol : float
        Relative zero threshold, ``rtol >= 0``.

    Returns
    -------
    (n_pos, n_neg, n_zero) : tuple of int

    References
    ----------
    Attention Geometry Table 4 (𝒮 definite / indefinite); book/reference.md §A.6, §A.7.

    Examples
    --------
    >>> import numpy as np
    >>> bond_inertia(np.diag([2.0, -1.0, 0.0, 3.0]))
    (2, 1, 1)
    """
    rtol = check_in_range("rtol", rtol, 0.0)
    return spectrum_inertia(_bond_eigenvalues(M_S), rtol)


def spectrum_inertia(eigenvalues: np.ndarray, rtol: float) -> tuple[int, int, int]:
    """(n_pos, n_neg, n_zero) of a spectrum, zero meaning ``|λ| <= rtol · max|λ|`` (the rule of bond_inertia)."""
    if eigenvalues.size == 0:
        return 0, 0, 0
    threshold = rtol * float(np.max(np.abs(eigenvalues)))
    n_pos = int(np.sum(eigenvalues > threshold))
    n_neg = int(np.sum(eigenvalues < -threshold))
    return n_pos, n_neg, int(eigenvalues.size) - n_pos - n_neg


def negative_mass(M_S):
    r"""Share of a bond in its negative sector, :math:`\lVert M_S^-\rVert_F / \lVert M_S\rVert_F \in [0, 1]`.

    .. math::

        \frac{\lVert M_S^-\rVert_F}{\lVert M_S\rVert_F} = \Bigl(\frac{\sum_{\lambda_k < 0}\lambda_k^2}
        {\sum_k\lambda_k^2}\Bigr)^{1/2},

    with :math:`M_S^-` the negative part of the spectral decomposition.  Zero for a positive semidefinite bond
    (up to rounding of the zero eigenvalues), :math:`\approx 1/\sqrt2` for ATTN at a Gaussian initialisation
    (:math:`\tfrac12W_MW_M^\top` and :math:`\tfrac12W_NW_N^\top` are then identically distributed).  Returns 0 for
    the zero form.

    Parameters
    ----------
    M_S : array, shape=[D, D]
        Symmetric.

    Returns
    -------
    float

    References
    ----------
    Attention Geometry Table 4, §6 (indefinite feature form); book/reference.md §A.6, §A.7.

    Examples
    --------
    >>> import numpy as np
    >>> negative_mass(np.diag([3.0, -4.0]))  # by hand: 4 / √(3² + 4²)
    0.8
    """
    return spectrum_negative_mass(_bond_eigenvalues(M_S))


def spectrum_negative_mass(eigenvalues: np.ndarray) -> float:
    """The share of negative_mass from a spectrum."""
    eigenvalues = eigenvalues / binary_scale(eigenvalues)  # the share is scale-free; the power of two is exact
    total = float(np.sqrt(np.sum(eigenvalues**2)))
    if total == 0.0:
        return 0.0
    return float(np.sqrt(np.sum(eigenvalues[eigenvalues < 0] ** 2))) / total
