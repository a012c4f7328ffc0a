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
Attention Geometry (Candanedo, arXiv 2604.09560) §1, §7, §9 (Table 1), §10, Table 4; book/reference.md
§A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and its corollaries [DERIVED], §A.10
(:math:`\rho_{\mathrm{skew}}`) [RECON].
"""

from __future__ import annotations

from workbench.attention._operators import (
    CORNERS,
    OPERATORS,
    SQRT_HALF,
    check_family_beta,
    check_queries_and_keys,
    corner_of,
    symmetrised,
)
from workbench.attention._overflow import overflow_ignored
from workbench.attention._softmax import softmax_rows
from workbench.attention._split_checks import scaled_logits, transpose
from workbench.backend import namespace
from workbench.validation import check_choice, check_in_range

__all__ = [
    "family_logits",
    "family_logits_unchecked",
    "family_operator",
    "operator_logits",
]


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
    book/reference.md §A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and
    corollaries [DERIVED]; Attention Geometry §7, §11.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    >>> bool(np.array_equal(family_logits(q, k, 1, 1), (q @ k.T) / 2.0))  # ATTN: β q·k, β = 1/√4
    True
    >>> m, n = (q + k) / np.sqrt(2), (q - k) / np.sqrt(2)
    >>> nanochat = 0.5 * m @ m.T + 0.5 * (q @ k.T - k @ q.T)  # DMTN (0, 1), Attention Geometry's formula verbatim
    >>> bool(np.allclose(family_logits(q, k, 0, 1, beta=1.0), nanochat))
    True
    """
    q, k = check_queries_and_keys(q, k)
    return checked_family_logits(q, k, b, a, beta, {"q": q, "k": k})


def checked_family_logits(q, k, b, a, beta, inputs):
    """:func:`family_logits` of validated ``q, k``; an overflow of the logits is refused naming ``inputs``.

    Package-internal: a caller that built ``q, k`` from its own inputs (a context ``X`` and weights) passes
    those, so the refusal names what the user gave.
    """
    b = check_in_range("b", b, 0.0, 1.0)
    a = check_in_range("a", a, 0.0, 1.0)
    beta = check_family_beta(beta, int(q.shape[-1]))
    with overflow_ignored():  # checked at once by scaled_logits, which names the inputs
        logits = family_logits_unchecked(q, k, b, a, 1.0)
    return scaled_logits(beta, logits, inputs)


def family_logits_unchecked(q, k, b, a, beta):
    r"""The core of :func:`family_logits`, without its boundary checks: the path the torch layers call.

    Computes exactly what :func:`family_logits` returns, by the same operations in the same order,

    .. math::

        \ell_{ij} = \beta\Bigl[\mathcal W_{ij} + (1 - b)\,\tfrac12\langle n_i, n_j\rangle
            - (1 - a)\bigl(\mathcal A_{ij} - \tfrac12(g_i - g_j)\bigr)\Bigr],
        \quad g_i = q_i\cdot k_i + (1 - b)\,\tfrac12\lVert n_i\rVert^2,

    but skips the checks: ``q`` and ``k`` are not converted or compared (no finiteness, dtype or shape
    checks), :math:`b, a` are not checked to lie in :math:`[0, 1]` and ``beta`` has no default.  Why: a layer
    that builds ``q`` and ``k`` itself from its own weights (:class:`workbench.nn.OperatorAttention`) would spend
    about a third of a training step validating tensors it made; the public function is the boundary, this
    is the formula.  Bad input here gives whatever the array library does with it.

    Parameters
    ----------
    q, k : array, shape=[..., n, d_h]
        Queries and keys of one array library, same shape.
    b, a : float
        In :math:`[0, 1]`: weight of the negative bond sector and of the free link.
    beta : float
        :math:`\beta > 0` (e.g. :math:`1/\sqrt{d_h}`).

    Returns
    -------
    array, shape=[..., n, n]
        Differentiable under torch.

    References
    ----------
    book/reference.md §A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and
    corollaries [DERIVED]; Attention Geometry §7, §11.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    >>> bool(np.array_equal(family_logits_unchecked(q, k, 0, 1, 0.5), family_logits(q, k, 0, 1)))  # same bits
    True
    """
    xp = namespace(q)
    W = q @ transpose(k)
    logits = W
    if b != 1.0 or a != 1.0:
        n = SQRT_HALF * (q - k)
        n_gram = 0.5 * symmetrised(n @ transpose(n))
        if b != 1.0:
            logits = logits + (1.0 - b) * n_gram
        if a != 1.0:
            g = xp.sum(q * k, axis=-1) + (1.0 - b) * xp.linalg.diagonal(n_gram)
            link = 0.5 * (W - transpose(W))
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
    book/reference.md §A.7 "The four parameterisations" and corollaries [CODE nanochat; DERIVED].

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
    book/reference.md §A.7.

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
    b, a = corner_of(operator)
    return softmax_rows(family_logits(q, k, b, a, beta=beta), mask)
