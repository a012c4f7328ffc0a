r"""The four attention operators DMAP, DMTN, ATAP, ATTN as corners of one two-parameter family.

Write a head's queries and keys in the rotated pair :math:`m = (q + k)/\sqrt2`, :math:`n = (q - k)/\sqrt2`.  The
raw score :math:`q_i\cdot k_j` splits into a bond :math:`\tfrac12\langle m_i, m_j\rangle - \tfrac12\langle n_i,
n_j\rangle` (symmetric, indefinite) and a free link :math:`\tfrac12(q_i\cdot k_j - k_i\cdot q_j)`
(antisymmetric).  Two switches restrict it: :math:`b` keeps (1) or drops (0) the negative sector
:math:`-\tfrac12\langle n_i, n_j\rangle` of the bond, and :math:`a` keeps (1) the free link or replaces it (0) by
the exact link :math:`\tfrac12(g_i - g_j)` of the site potential :math:`g`:

.. math::

    \ell_{ij}(b, a) = \beta\Bigl[\tfrac12\langle m_i, m_j\rangle - b\,\tfrac12\langle n_i, n_j\rangle
        + a\,\tfrac12(q_i\cdot k_j - k_i\cdot q_j) + (1 - a)\,\tfrac12(g_i - g_j)\Bigr],
    \qquad g_i = \tfrac12\lVert m_i\rVert^2 - b\,\tfrac12\lVert n_i\rVert^2 .

================  ==========  ====================  ==================  ================================
operator          (b, a)      bond                  link                Markov operator
================  ==========  ====================  ==================  ================================
DMAP              (0, 0)      definite              exact               reversible (diffusion map)
DMTN              (0, 1)      definite              free                nonreversible in general
ATAP              (1, 0)      indefinite            exact               reversible
ATTN              (1, 1)      indefinite            free                standard attention, :math:`q_i\cdot k_j`
================  ==========  ====================  ==================  ================================

The Markov operator of a corner is :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\ell)`, row-stochastic,
acting from the left (:math:`(\mathsf Pf)_i = \sum_j\mathsf P_{ij}f_j`), with positive generator
:math:`\mathsf L = I - \mathsf P`.  The exact link corners are Doob transforms of symmetric kernels, hence
reversible; DMAP is the Gaussian kernel :math:`\exp(-\tfrac\beta4\lVert m_i - m_j\rVert^2)` in the learned metric
(kernel scale :math:`e^{-\beta'\lVert x - y\rVert^2}` with :math:`\beta' = \beta/4` in :math:`m`-coordinates).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §1, §7, §9 (Table 1), §10, Table 4; attention-geometry-math
§A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and its corollaries [DERIVED], §A.10
(:math:`\rho_{\mathrm{skew}}`) [RECON].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from workbench.attention._diagnostics import score_skew_ratio
from workbench.attention._heads import softmax_rows
from workbench.backend import namespace, to_numpy
from workbench.markov import MarkovOperator
from workbench.validation import as_array, check_choice, check_in_range, check_integer, check_matching, check_square

__all__ = [
    "CORNERS",
    "OPERATORS",
    "CornerHead",
    "bond_inertia",
    "corner_distances",
    "effective_form",
    "family_logits",
    "family_operator",
    "nearest_corner",
    "negative_mass",
    "operator_logits",
    "operator_skew_ratio",
    "parameter_count",
    "project_head",
]

#: The four operators of Attention Geometry, Table 4 (bond definite/indefinite × link exact/free).
OPERATORS = ("DMAP", "DMTN", "ATAP", "ATTN")

#: Corner (b, a) of each operator in the nanochat family: b = 1 keeps the indefinite bond, a = 1 the free link.
CORNERS = MappingProxyType({"DMAP": (0, 0), "DMTN": (0, 1), "ATAP": (1, 0), "ATTN": (1, 1)})

_SQRT_HALF = 1.0 / math.sqrt(2.0)


# --- helpers --------------------------------------------------------------------------------------------


def _transpose(x):
    return namespace(x).matrix_transpose(x)


def _symmetrised(x):
    return 0.5 * (x + _transpose(x))


def _corner(operator):
    """``(b, a)`` of a named operator, or of an explicit pair ``(b, a)`` in [0, 1]²."""
    if isinstance(operator, str):
        return CORNERS[check_choice("operator", operator, OPERATORS)]
    if isinstance(operator, tuple) and len(operator) == 2:
        return check_in_range("b", operator[0], 0.0, 1.0), check_in_range("a", operator[1], 0.0, 1.0)
    raise ValueError(
        f"operator must be one of {', '.join(repr(o) for o in OPERATORS)} or a pair (b, a) in [0, 1]², got {operator!r}"
    )


def _queries_and_keys(q, k):
    q = as_array("q", q, min_ndim=2)
    k = as_array("k", k, min_ndim=2)
    namespace(q, k)
    if tuple(q.shape) != tuple(k.shape):
        raise ValueError(f"q and k must have the same shape, got {tuple(q.shape)} and {tuple(k.shape)}")
    if int(q.shape[-1]) == 0:
        raise ValueError(f"q and k must have at least one feature column (d_h >= 1), got shape {tuple(q.shape)}")
    if int(q.shape[-2]) == 0:
        raise ValueError(f"q and k must have at least one token (row), got shape {tuple(q.shape)}")
    return q, k


def _weights(W_Q, W_K, *, ndim=None):
    kwargs = {"ndim": ndim} if ndim is not None else {"min_ndim": 2}
    W_Q = as_array("W_Q", W_Q, **kwargs)
    W_K = as_array("W_K", W_K, **kwargs)
    namespace(W_Q, W_K)
    if tuple(W_Q.shape) != tuple(W_K.shape):
        raise ValueError(f"W_Q and W_K must have the same shape, got {tuple(W_Q.shape)} and {tuple(W_K.shape)}")
    return W_Q, W_K


def _beta(beta, d_head):
    if beta is None:
        return 1.0 / math.sqrt(d_head)
    return check_in_range("beta", beta, 0.0, low_inclusive=False)


# --- logits and operators ------------------------------------------------------------------------------


def family_logits(q, k, b, a, beta=None):
    r"""Logits of the (b, a) member of the operator family (nanochat parameterisation).

    With :math:`m = (q + k)/\sqrt2` and :math:`n = (q - k)/\sqrt2`,

    .. math::

        \ell_{ij} = \beta\Bigl[\tfrac12\langle m_i, m_j\rangle - b\,\tfrac12\langle n_i, n_j\rangle
            + a\,\tfrac12(\langle q_i, k_j\rangle - \langle k_i, q_j\rangle) + (1 - a)\,\tfrac12(g_i - g_j)\Bigr],
        \quad g_i = \tfrac12\lVert m_i\rVert^2 - b\,\tfrac12\lVert n_i\rVert^2 .

    Since :math:`\tfrac12\langle m_i,m_j\rangle - \tfrac12\langle n_i,n_j\rangle = \tfrac12(q_i\cdot k_j +
    k_i\cdot q_j)`, the same logits read, with :math:`\mathcal W_{ij} = q_i\cdot k_j` and its link
    :math:`\mathcal A = \tfrac12(\mathcal W - \mathcal W^\top)`,

    .. math::

        \ell_{ij} = \beta\Bigl[\mathcal W_{ij} + (1 - b)\,\tfrac12\langle n_i, n_j\rangle
            - (1 - a)\bigl(\mathcal A_{ij} - \tfrac12(g_i - g_j)\bigr)\Bigr],
        \quad g_i = q_i\cdot k_i + (1 - b)\,\tfrac12\lVert n_i\rVert^2,

    which is how they are computed: the ATTN corner :math:`(1, 1)` is then exactly :math:`\beta q_i\cdot k_j`,
    and the DMTN corner :math:`(0, 1)` is :math:`\beta(\mathcal W + \tfrac12 nn^\top)`, the token form of
    :math:`\mathcal W^{\mathrm{DMTN}} = M + \tfrac12 W_NW_N^\top`.  Intermediate :math:`(b, a)` interpolate.

    Parameters
    ----------
    q, k : array, shape=[..., n, d_h]
        Queries and keys (numpy or torch, same shape).
    b, a : float
        In :math:`[0, 1]`: weight of the negative bond sector and of the free link.
    beta : float, optional
        :math:`\beta > 0`; default :math:`1/\sqrt{d_h}`.

    Returns
    -------
    array, shape=[..., n, n]

    References
    ----------
    attention-geometry-math §A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and
    corollaries [DERIVED]; Attention Geometry §7, §11.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    >>> bool(np.array_equal(family_logits(q, k, 1, 1), (q @ k.T) / 2.0))  # ATTN: β q·k, β = 1/√4
    True
    >>> m, n = (q + k) / np.sqrt(2), (q - k) / np.sqrt(2)
    >>> nanochat = 0.5 * m @ m.T + 0.5 * (q @ k.T - k @ q.T)  # DMTN (0, 1), the seed's formula verbatim
    >>> bool(np.allclose(family_logits(q, k, 0, 1, beta=1.0), nanochat))
    True
    """
    q, k = _queries_and_keys(q, k)
    b = check_in_range("b", b, 0.0, 1.0)
    a = check_in_range("a", a, 0.0, 1.0)
    beta = _beta(beta, int(q.shape[-1]))
    xp = namespace(q)
    W = q @ _transpose(k)
    logits = W
    if b != 1.0 or a != 1.0:
        n = _SQRT_HALF * (q - k)
        n_gram = 0.5 * _symmetrised(n @ _transpose(n))
        if b != 1.0:
            logits = logits + (1.0 - b) * n_gram
        if a != 1.0:
            g = xp.sum(q * k, axis=-1) + (1.0 - b) * xp.linalg.diagonal(n_gram)
            link = 0.5 * (W - _transpose(W))
            exact = 0.5 * (g[..., :, None] - g[..., None, :])
            logits = logits - (1.0 - a) * (link - exact)
    return beta * logits


def operator_logits(q, k, operator, beta=None):
    r"""Logits of a named operator, :func:`family_logits` at its corner ``CORNERS[operator]``.

    Up to row constants (which the row softmax ignores), with :math:`\mathcal S, \mathcal A` the bond and link
    of :math:`q_i\cdot k_j` and :math:`d^2_{ij} = \mathcal S_{ii} + \mathcal S_{jj} - 2\mathcal S_{ij}`:

    .. math::

        \ell^{\mathrm{DMAP}} \simeq -\tfrac\beta4\lVert m_i - m_j\rVert^2, \quad
        \ell^{\mathrm{DMTN}} = \beta(\tfrac12\langle m_i, m_j\rangle + \mathcal A_{ij}), \quad
        \ell^{\mathrm{ATAP}} \simeq -\tfrac\beta2 d^2_{ij}, \quad
        \ell^{\mathrm{ATTN}} = \beta\, q_i\cdot k_j .

    Parameters
    ----------
    q, k : array, shape=[..., n, d_h]
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}
    beta : float, optional
        Default :math:`1/\sqrt{d_h}`.

    Returns
    -------
    array, shape=[..., n, n]

    References
    ----------
    attention-geometry-math §A.7 "The four parameterisations" and corollaries [CODE nanochat; DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.markov import softmax_operator
    >>> rng = np.random.default_rng(1)
    >>> q, k = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    >>> m = (q + k) / np.sqrt(2)
    >>> dist2 = ((m[:, None, :] - m[None, :, :]) ** 2).sum(-1)
    >>> bool(np.allclose(softmax_operator(operator_logits(q, k, "DMAP", beta=1.0)), softmax_operator(-dist2 / 4)))
    True
    """
    b, a = CORNERS[check_choice("operator", operator, OPERATORS)]
    return family_logits(q, k, b, a, beta=beta)


def family_operator(q, k, operator, beta=None, mask=None):
    r"""Markov operator of a family member, :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\ell)`.

    Row-stochastic, acting from the left, :math:`(\mathsf Pf)_i = \sum_j\mathsf P_{ij}f_j`; positive generator
    :math:`\mathsf L = I - \mathsf P`.  Masked logits are :math:`-\infty` before the softmax, so
    :math:`\mathsf P_{ij} = 0` exactly where ``mask`` is False.  DMAP and ATAP without a mask are reversible for
    any weights; DMTN and ATTN are not in general.

    Parameters
    ----------
    q, k : array, shape=[..., n, d_h]
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'} or tuple (b, a)
        A named corner, or an interpolation point in :math:`[0, 1]^2`.
    beta : float, optional
        Default :math:`1/\sqrt{d_h}`.
    mask : bool array, shape=[..., n, n], optional
        True where key :math:`j` is visible from query :math:`i`; every row needs one True.

    Returns
    -------
    array, shape=[..., n, n]

    References
    ----------
    Attention Geometry §7 :math:`\mathsf P = \operatorname{diag}(\mathsf J\mathbf 1)^{-1}\mathsf J` [SEED];
    attention-geometry-math §A.7.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> q, k = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    >>> causal = np.tril(np.ones((4, 4), dtype=bool))
    >>> P = family_operator(q, k, "ATTN", beta=1.0, mask=causal)
    >>> w = np.where(causal, np.exp(q @ k.T), 0.0)  # by hand: masked exponentials, row-normalised
    >>> bool(np.allclose(P, w / w.sum(axis=1, keepdims=True)) and P[0, 1] == 0.0)
    True
    """
    b, a = _corner(operator)
    return softmax_rows(family_logits(q, k, b, a, beta=beta), mask)


# --- the parameter level -------------------------------------------------------------------------------


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
    the ATTN corner returns :func:`~workbench.attention._split.bond_link_split` of :math:`M` exactly, and
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
    attention-geometry-math §A.7 "The four parameterisations", parameter level [CODE DITFLEX AMAP README] and
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
    b, a = _corner(operator)
    W_Q, W_K = _weights(W_Q, W_K)
    M = W_Q @ _transpose(W_K)
    Mt = _transpose(M)
    M_S, M_A = 0.5 * (M + Mt), 0.5 * (M - Mt)
    if b != 1.0:
        W_N = _SQRT_HALF * (W_Q - W_K)
        M_S = M_S + (1.0 - b) * 0.5 * _symmetrised(W_N @ _transpose(W_N))
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
    Attention Geometry §9, Table 1 (:math:`\rho_{\mathrm{skew}}`); attention-geometry-math §A.10 [RECON], the v1
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
    W_Q, W_K = _weights(W_Q, W_K, ndim=2)
    M_S, M_A = effective_form(W_Q, W_K, operator)
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

    These count stored weights, as the seed does ("only half of the ATTN weights" for DMAP); they do not
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
    Attention Geometry §10 ("only half of the ATTN weights"); attention-geometry-math §A.7 corollaries (DMAP
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
    gap = float(xp.max(xp.abs(M_S - _transpose(M_S)))) if int(M_S.shape[0]) else 0.0
    if gap > 1e-10 * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"M_S must be symmetric, got max |M_S - M_S^T| = {gap:.6g} (relative {gap / scale:.6g}); "
            "pass the bond of bond_link_split(M)"
        )
    return np.asarray(to_numpy(xp.linalg.eigvalsh(_symmetrised(M_S))), dtype=np.float64)


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
    Attention Geometry Table 4 (𝒮 definite / indefinite); attention-geometry-math §A.6, §A.7.

    Examples
    --------
    >>> import numpy as np
    >>> bond_inertia(np.diag([2.0, -1.0, 0.0, 3.0]))
    (2, 1, 1)
    """
    rtol = check_in_range("rtol", rtol, 0.0)
    eigenvalues = _bond_eigenvalues(M_S)
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
    Attention Geometry Table 4, §6 (indefinite feature form); attention-geometry-math §A.6, §A.7.

    Examples
    --------
    >>> import numpy as np
    >>> negative_mass(np.diag([3.0, -4.0]))  # by hand: 4 / √(3² + 4²)
    0.8
    """
    eigenvalues = _bond_eigenvalues(M_S)
    total = float(np.sqrt(np.sum(eigenvalues**2)))
    if total == 0.0:
        return 0.0
    return float(np.sqrt(np.sum(eigenvalues[eigenvalues < 0] ** 2))) / total


# --- projecting a head onto a corner ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CornerHead:
    r"""A head's query/key weights read at one corner of the operator family.

    The projection of a trained head :math:`(W_Q, W_K)` onto a corner keeps the weights and changes the
    operator: its logits are :func:`family_logits` of :math:`q = XW_Q`, :math:`k = XW_K` at ``CORNERS[name]``.
    For DMAP that is the folded distance form in :math:`W_M` alone; for DMTN it is
    :math:`\mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top` (the substitution of Attention Geometry §10).

    Attributes
    ----------
    W_Q, W_K : array, shape=[D, d_h]
    name : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}
    """

    W_Q: object
    W_K: object
    name: str

    def __post_init__(self):
        W_Q, W_K = _weights(self.W_Q, self.W_K, ndim=2)
        check_choice("operator", self.name, OPERATORS)
        object.__setattr__(self, "W_Q", W_Q)
        object.__setattr__(self, "W_K", W_K)

    @property
    def corner(self) -> tuple[int, int]:
        """The corner ``(b, a)``."""
        return CORNERS[self.name]

    @property
    def W_M(self):
        r""":math:`W_M = (W_Q + W_K)/\sqrt2`."""
        return _SQRT_HALF * (self.W_Q + self.W_K)

    @property
    def W_N(self):
        r""":math:`W_N = (W_Q - W_K)/\sqrt2`."""
        return _SQRT_HALF * (self.W_Q - self.W_K)

    @property
    def parameters(self) -> tuple:
        """The weights the corner needs: ``(W_M,)`` for DMAP, ``(W_M, W_N)`` otherwise (see parameter_count)."""
        return (self.W_M,) if self.name == "DMAP" else (self.W_M, self.W_N)

    def effective_form(self):
        """``(M_S_op, M_A_op)`` of :func:`effective_form`."""
        return effective_form(self.W_Q, self.W_K, self.name)

    def _queries_keys(self, X):
        X = as_array("X", X, ndim=2)
        namespace(X, self.W_Q)
        check_matching("X columns", X.shape[-1], "W_Q rows", self.W_Q.shape[0])
        return X @ self.W_Q, X @ self.W_K

    def logits(self, X, beta=None):
        """The corner's logits on a context ``X`` of shape [n, D]."""
        return operator_logits(*self._queries_keys(X), self.name, beta=beta)

    def operator(self, X, beta=None, mask=None):
        r"""The corner's Markov operator :math:`\mathsf P` (row-stochastic) on ``X``."""
        return family_operator(*self._queries_keys(X), self.name, beta=beta, mask=mask)

    def markov(self, X, beta=None, mask=None) -> MarkovOperator:
        """:meth:`operator` wrapped as a :class:`~workbench.markov.MarkovOperator`."""
        return MarkovOperator(self.operator(X, beta=beta, mask=mask))


def project_head(W_Q, W_K, operator):
    r"""Project a head onto a corner of the family: the same weights, evaluated at that corner.

    Returns a :class:`CornerHead` whose logits on a context :math:`X` are :func:`operator_logits`
    ``(XW_Q, XW_K, operator)``.  This is the weight-preserving substitution of Attention Geometry §10
    (ATTN → DMTN by :math:`\mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top`; DMTN → DMAP by folding onto
    :math:`W_M`), before any re-adaptation.

    Parameters
    ----------
    W_Q, W_K : array, shape=[D, d_h]
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}

    Returns
    -------
    CornerHead

    References
    ----------
    Attention Geometry §10, §11; attention-geometry-math §A.7 "The four parameterisations" [CODE].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(5)
    >>> X, W_Q, W_K = rng.standard_normal((4, 6)), rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    >>> head = project_head(W_Q, W_K, "DMTN")
    >>> W_N = (W_Q - W_K) / np.sqrt(2)
    >>> bool(np.allclose(head.logits(X, beta=1.0), X @ (W_Q @ W_K.T + 0.5 * W_N @ W_N.T) @ X.T))  # M + ½W_NW_Nᵀ
    True
    >>> sum(p.size for p in project_head(W_Q, W_K, "DMAP").parameters) == parameter_count("DMAP", 6, 2)
    True
    """
    return CornerHead(W_Q, W_K, operator)


def corner_distances(X, W_Q, W_K, beta=None, mask=None):
    r"""How far a head's attention moves when it is projected onto each corner.

    For each operator, the mean over query rows of the total-variation distance between the head's
    :math:`\mathsf P` (its ATTN corner, :math:`\operatorname{softmax}(\beta q_i\cdot k_j)`) and the corner's
    :math:`\mathsf P^{\mathrm{op}}` on the same context:

    .. math::

        \delta_{\mathrm{op}} = \frac1n\sum_i \tfrac12\sum_j\bigl|\mathsf P_{ij} - \mathsf P^{\mathrm{op}}_{ij}\bigr|
        \in [0, 1],

    the average share of a query's attention mass that the projection moves (``ATTN`` is 0 exactly).

    Parameters
    ----------
    X : array, shape=[n, D]
    W_Q, W_K : array, shape=[D, d_h]
    beta : float, optional
        Default :math:`1/\sqrt{d_h}`.
    mask : bool array, shape=[n, n], optional
        Applied to every corner.

    Returns
    -------
    dict
        ``{operator: float}`` for all of :data:`OPERATORS`.

    References
    ----------
    Workbench diagnostic built on attention-geometry-math §A.7 (not from the seed).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(6)
    >>> X, W_Q = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
    >>> d = corner_distances(X, W_Q, W_Q.copy())  # tied weights: n = 0, so DMTN is the head itself
    >>> d["ATTN"], d["DMTN"]
    (0.0, 0.0)
    """
    W_Q, W_K = _weights(W_Q, W_K, ndim=2)
    head = project_head(W_Q, W_K, "ATTN")
    q, k = head._queries_keys(X)
    reference = family_operator(q, k, "ATTN", beta=beta, mask=mask)
    xp = namespace(reference)
    distances = {}
    for name in OPERATORS:
        P = reference if name == "ATTN" else family_operator(q, k, name, beta=beta, mask=mask)
        distances[name] = float(xp.mean(0.5 * xp.sum(xp.abs(reference - P), axis=-1)))
    return distances


def nearest_corner(X, W_Q, W_K, beta=None, mask=None, tol=0.1):
    r"""Classify a head by the constrained corner whose operator is closest to its own.

    Returns the operator among DMAP, DMTN, ATAP with the smallest :func:`corner_distances` (ties go to the
    earlier one in :data:`OPERATORS`), unless even that distance exceeds ``tol``; then ``'ATTN'`` (no
    constrained corner reproduces the head).  The rule is a workbench choice, not from the seed: with the
    default ``tol = 0.1`` a head counts as DMAP, DMTN or ATAP when projecting it there moves at most 10% of an
    average query's attention mass.

    Parameters
    ----------
    X : array, shape=[n, D]
    W_Q, W_K : array, shape=[D, d_h]
    beta : float, optional
        Default :math:`1/\sqrt{d_h}`.
    mask : bool array, shape=[n, n], optional
    tol : float
        In :math:`[0, 1]`.

    Returns
    -------
    str
        One of :data:`OPERATORS`.

    References
    ----------
    Workbench choice on top of attention-geometry-math §A.7 (the seed gives no classification rule).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(7)
    >>> X, W_Q = rng.standard_normal((6, 4)), rng.standard_normal((4, 2))
    >>> nearest_corner(X, W_Q, W_Q.copy())  # tied Q = K: symmetric definite bond, no free link beyond it
    'DMTN'
    """
    tol = check_in_range("tol", tol, 0.0, 1.0)
    distances = corner_distances(X, W_Q, W_K, beta=beta, mask=mask)
    best = min(("DMAP", "DMTN", "ATAP"), key=lambda name: distances[name])  # min keeps the first of ties
    return best if distances[best] <= tol else "ATTN"
