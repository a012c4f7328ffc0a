r"""The exact bond/link split of an attention score, its distance form and its Doob reading.

A head without biases scores the tokens of a context :math:`X \in \mathbb R^{n\times D}` (row vectors) with
the bilinear form :math:`M = W_Q W_K^\top`, :math:`\mathcal W = X M X^\top`, :math:`\mathcal W_{ij} = q_i\cdot
k_j`.  Splitting :math:`M` into its symmetric and antisymmetric parts splits the score exactly,

.. math::

    \mathcal W = \underbrace{X M_S X^\top}_{\mathcal S\ \text{(bond)}}
               + \underbrace{X M_A X^\top}_{\mathcal A\ \text{(link)}}, \qquad
    \exp_\odot(\beta\mathcal W) = \exp_\odot(\beta\mathcal S)\odot\exp_\odot(\beta\mathcal A),

and the bond is a Gaussian kernel of a (pseudo-)distance with a site potential :math:`g_i = \mathcal S_{ii}`:
:math:`\beta\mathcal W_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_i + \tfrac\beta2 g_j + \beta\mathcal A_{ij}`.
Row normalisation removes the source term :math:`\tfrac\beta2 g_i`; the destination term is a Doob
tilt :math:`h_j = e^{\beta g_j/2}`.  A link that is a gradient, :math:`\mathcal A_{ij} = \varphi_i - \varphi_j`,
is a further destination tilt :math:`e^{-\beta\varphi_j}`, so the head is then a Doob transform of a symmetric
kernel and reversible; the cycle sums (holonomy) of the link measure how far it is from that.

Conventions: the Markov operator of a head is :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta\mathcal W)`,
row-stochastic and acting from the left, :math:`(\mathsf Pf)_i = \sum_j\mathsf P_{ij}f_j`, with positive
generator :math:`\mathsf L = I - \mathsf P`.  The distance kernel here is
:math:`\mathsf K_{ij} = \exp(-\tfrac\beta2 d^2_{ij})` (note the factor :math:`\tfrac12`: it is
:math:`e^{-\beta'\lVert x_i - x_j\rVert^2}` with :math:`\beta' = \beta/2` in the learned metric).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4, §7 and Table 4; book/reference.md §A.7 "Exact
bond/link split", "Distance form with site potentials", "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities"
[DERIVED].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from workbench.attention._overflow import check_overflow, overflow_ignored
from workbench.attention._split_checks import check_same_shape, scaled_logits, transpose, zero_diagonal
from workbench.backend import namespace
from workbench.validation import as_array, check_in_range, check_matching, check_square, shape_of

__all__ = [
    "DestinationTilt",
    "ScoreSplit",
    "bond_link_split",
    "destination_tilt",
    "distance_form_logits",
    "score_split",
    "token_split",
]


def bond_link_split(M):
    r"""Symmetric (bond) and antisymmetric (link) parts of a bilinear form, :math:`M = M_S + M_A`.

    .. math::

        M_S = \tfrac12(M + M^\top), \qquad M_A = \tfrac12(M - M^\top).

    For a head, :math:`M = W_Q W_K^\top` and the score :math:`X M X^\top` splits into the bond
    :math:`X M_S X^\top` and the link :math:`X M_A X^\top`.  :math:`M_S` is exactly symmetric and
    :math:`M_A` exactly antisymmetric in floating point (both are built from ``M`` and its transpose).

    Parameters
    ----------
    M : array, shape=[..., D, D]
        numpy array or torch tensor (a stack of forms is split form by form).

    Returns
    -------
    (M_S, M_A) : tuple of arrays, shape=[..., D, D]
        In the library of ``M``.

    References
    ----------
    Attention Geometry §7; book/reference.md §A.7 "Exact bond/link split" [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> M = np.array([[1.0, 2.0], [0.0, 3.0]])
    >>> M_S, M_A = bond_link_split(M)
    >>> M_S.tolist(), M_A.tolist()  # by hand: (M + Mᵀ)/2 and (M - Mᵀ)/2
    ([[1.0, 1.0], [1.0, 3.0]], [[0.0, 1.0], [-1.0, 0.0]])
    """
    M = as_array("M", M, min_ndim=2)
    check_square("M", M)
    Mt = transpose(M)
    return 0.5 * (M + Mt), 0.5 * (M - Mt)


# --- the split of a score ---------------------------------------------------------------------------------


class ScoreSplit(NamedTuple):
    r"""The exact split :math:`\mathcal W = \mathcal S + \mathcal A` of a score, with the distance form of the bond."""

    bond: object
    r"""Symmetric bond :math:`\mathcal S_{ij} = \tfrac12(q_i\cdot k_j + k_i\cdot q_j)`, shape [..., n, n]."""
    link: object
    r"""Antisymmetric link :math:`\mathcal A_{ij} = \tfrac12(q_i\cdot k_j - k_i\cdot q_j)`, shape [..., n, n]."""
    potential: object
    r"""Site potential :math:`g_i = \mathcal S_{ii} = q_i\cdot k_i`, shape [..., n]."""
    squared_distance: object
    r"""Pseudo-distance :math:`d^2_{ij} = g_i + g_j - 2\mathcal S_{ij}`, zero diagonal, shape [..., n, n]."""


def token_split(q, k):
    r"""Split the raw score :math:`\mathcal W_{ij} = q_i\cdot k_j` into bond, link, potential and distance.

    .. math::

        \mathcal S_{ij} = \tfrac12(q_i\cdot k_j + k_i\cdot q_j), \quad
        \mathcal A_{ij} = \tfrac12(q_i\cdot k_j - k_i\cdot q_j), \quad
        g_i = \mathcal S_{ii} = q_i\cdot k_i, \quad
        d^2_{ij} = g_i + g_j - 2\mathcal S_{ij}.

    When the bond form :math:`M_S` is positive semidefinite, :math:`M_S = LL^\top`, the pseudo-distance is a
    squared distance, :math:`d^2_{ij} = \lVert (x_i - x_j)L\rVert^2`; for an indefinite bond it can be
    negative off the diagonal.  The diagonal of :math:`d^2` is exactly zero, :math:`\mathcal S` is exactly
    symmetric and :math:`\mathcal A` exactly antisymmetric (all are formed from :math:`\mathcal W` and its
    transpose, since :math:`\mathcal W^\top_{ij} = k_i\cdot q_j`); :math:`\mathcal S + \mathcal A = \mathcal W`
    to rounding.

    Parameters
    ----------
    q, k : array, shape=[..., n, d_h]
        Queries and keys (rows are tokens); numpy arrays or torch tensors of the same shape.

    Returns
    -------
    ScoreSplit
        ``(bond, link, potential, squared_distance)`` in the library of ``q``.

    References
    ----------
    Attention Geometry §7, Table 4; book/reference.md §A.7 "Exact bond/link split" (token form [CODE]
    nanochat ``dac.py``) and "Distance form with site potentials" [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q, k = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    >>> S, A, g, d2 = token_split(q, k)
    >>> bool(np.allclose(S + A, q @ k.T) and np.allclose(g, np.einsum("id,id->i", q, k)))
    True
    >>> bool(np.all(np.diag(d2) == 0.0) and np.allclose(d2[0, 1], g[0] + g[1] - (q[0] @ k[1] + k[0] @ q[1])))
    True
    """
    q = as_array("q", q, min_ndim=2)
    k = as_array("k", k, min_ndim=2)
    namespace(q=q, k=k)
    check_same_shape("q", q, "k", k)
    return _checked_split(q, k, {"q": q, "k": k})


def _checked_split(q, k, inputs):
    # The split is a few products and sums: computed with the overflow warnings off, then checked once.
    with overflow_ignored():
        split = _split_scores(q @ transpose(k))
    return check_overflow("the score split (bond, link, potential, squared distance)", split, inputs)


def _split_scores(W):
    xp = namespace(W)
    Wt = transpose(W)
    bond = 0.5 * (W + Wt)
    link = 0.5 * (W - Wt)
    g = xp.linalg.diagonal(bond)
    # g_i + g_i - 2 S_ii is exactly 0 in IEEE arithmetic; the explicit zero guards fused or reordered kernels.
    d2 = zero_diagonal(g[..., :, None] + g[..., None, :] - 2.0 * bond)
    return ScoreSplit(bond, link, g, d2)


def score_split(X, W_Q, W_K, b_Q=None, b_K=None):
    r"""Bond/link split of a head's raw score on a context, :math:`X M X^\top = X M_S X^\top + X M_A X^\top`.

    With :math:`q = XW_Q + b_Q` and :math:`k = XW_K + b_K` this is :func:`token_split` of :math:`(q, k)`;
    without biases, :math:`\mathcal S = X M_S X^\top` and :math:`\mathcal A = X M_A X^\top` for
    :math:`(M_S, M_A)` = :func:`bond_link_split` of :math:`M = W_QW_K^\top` (computed in the :math:`d_h`-wide
    token space, not through the :math:`D\times D` form).

    Parameters
    ----------
    X : array, shape=[n, D]
        The context (row vectors).
    W_Q, W_K : array, shape=[..., D, d_h]
        Query and key maps; a stack ``[H, D, d_h]`` gives one split per head.
    b_Q, b_K : array, shape=[..., d_h], optional
        Query and key biases.

    Returns
    -------
    ScoreSplit

    References
    ----------
    Attention Geometry §7: :math:`\mathsf J = \exp_\odot(\beta\mathcal RM\mathcal R^\top)`, :math:`M = W_QW_K^\top`
    [SEED]; book/reference.md §A.7 [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> X, W_Q, W_K = rng.standard_normal((5, 4)), rng.standard_normal((4, 2)), rng.standard_normal((4, 2))
    >>> M_S, M_A = bond_link_split(W_Q @ W_K.T)
    >>> split = score_split(X, W_Q, W_K)
    >>> bool(np.allclose(split.bond, X @ M_S @ X.T) and np.allclose(split.link, X @ M_A @ X.T))
    True
    """
    X = as_array("X", X, ndim=2)
    W_Q = as_array("W_Q", W_Q, min_ndim=2)
    W_K = as_array("W_K", W_K, min_ndim=2)
    namespace(X=X, W_Q=W_Q, W_K=W_K)
    check_same_shape("W_Q", W_Q, "W_K", W_K)
    check_matching("X columns", X.shape[-1], "W_Q rows", W_Q.shape[-2])
    inputs = {"X": X, "W_Q": W_Q, "W_K": W_K}
    with overflow_ignored():  # an overflow here reaches the split, which is checked naming the inputs
        q, k = X @ W_Q, X @ W_K
    for name, bias in (("b_Q", b_Q), ("b_K", b_K)):
        if bias is not None:
            bias = as_array(name, bias, min_ndim=1)
            namespace(X=X, **{name: bias})
            check_matching(f"{name} length", bias.shape[-1], "W_Q columns", W_Q.shape[-1])
            lead, heads = shape_of(bias)[:-1], shape_of(W_Q)[:-2]
            if len(lead) > len(heads) or any(b not in (1, h) for b, h in zip(lead[::-1], heads[::-1], strict=False)):
                raise ValueError(
                    f"{name} must have shape [..., d_h] with leading axes broadcasting to those of W_Q {heads}, "
                    f"got shape {shape_of(bias)}"
                )
            inputs[name] = bias
            with overflow_ignored():
                if name == "b_Q":
                    q = q + bias[..., None, :]
                else:
                    k = k + bias[..., None, :]
    return _checked_split(q, k, inputs)


def _as_split(split):
    if not isinstance(split, ScoreSplit):
        raise TypeError(f"split must be a ScoreSplit (from score_split or token_split), got {type(split).__name__}")
    return split


def distance_form_logits(split, beta):
    r"""Logits of the distance form: the head's logits with the source potential dropped.

    .. math::

        \beta\mathcal W_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_i + \tfrac\beta2 g_j + \beta\mathcal A_{ij},
        \qquad
        \ell_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_j + \beta\mathcal A_{ij} .

    The source term :math:`\tfrac\beta2 g_i` is constant along row :math:`i`, so the row softmax cancels it:
    :math:`\operatorname{softmax}(\ell) = \operatorname{softmax}(\beta\mathcal W)` exactly, and adding
    :math:`\tfrac\beta2 g_i` back reproduces :math:`\beta\mathcal W` to rounding.  The bond acts as the Gaussian
    kernel :math:`e^{-\beta d^2_{ij}/2}` tilted at the destination by :math:`e^{\beta g_j/2}`.

    Parameters
    ----------
    split : ScoreSplit
        From :func:`score_split` or :func:`token_split`.
    beta : float
        Inverse temperature :math:`\beta > 0` (standard attention: :math:`1/\sqrt{d_h}`).

    Returns
    -------
    array, shape=[..., n, n]

    References
    ----------
    book/reference.md §A.7 "Distance form with site potentials" [DERIVED; CODE DITFLEX ``bidivergence``].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.markov import softmax_operator
    >>> rng = np.random.default_rng(2)
    >>> q, k = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    >>> logits = distance_form_logits(token_split(q, k), beta=0.5)
    >>> bool(np.allclose(softmax_operator(logits), softmax_operator(q @ k.T, beta=0.5)))
    True
    """
    split = _as_split(split)
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    g = split.potential
    return scaled_logits(beta, -0.5 * split.squared_distance + 0.5 * g[..., None, :] + split.link)


class DestinationTilt(NamedTuple):
    r"""The Doob reading of a bond: a symmetric distance kernel and a positive destination tilt."""

    kernel: object
    r"""Symmetric :math:`\mathsf K_{ij} = \exp(-\tfrac\beta2(d^2_{ij} - c))`, :math:`c = \min(0, \min d^2)`."""
    h: object
    r"""Destination tilt :math:`h_j = \exp(\tfrac\beta2(g_j - \max_l g_l))`, so :math:`\max h = 1`."""


def destination_tilt(split, beta):
    r"""The bond as a Doob transform: distance kernel :math:`\mathsf K` and tilt :math:`h = e^{\beta g/2}`.

    .. math::

        \mathsf K_{ij} = e^{-\frac\beta2 d^2_{ij}}, \qquad h_j = e^{\frac\beta2 g_j}, \qquad
        \operatorname{rownorm}\exp_\odot(\beta\mathcal S) = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K
        \operatorname{diag}(h) = \mathsf P_h .

    For a head without link (:math:`\mathcal A = 0`, e.g. the bond alone) the Markov operator is the Doob
    h-transform :func:`workbench.markov.doob_transform` ``(K, h)``, reversible with
    :math:`\pi \propto h\odot\mathsf Kh`.  With an exact link :math:`\mathcal A_{ij} = \varphi_i - \varphi_j` the
    tilt becomes :math:`h\odot e^{-\beta\varphi}`; a free link is not a Doob transform.

    Both factors are defined up to a positive constant (row normalisation cancels it), which is used for
    stability: :math:`h` is shifted so that :math:`\max_j h_j = 1` (no overflow for large :math:`g`), and
    :math:`\mathsf K` carries the factor :math:`e^{\beta c/2}`, :math:`c = \min(0, \min_{ij} d^2_{ij})`, which is
    1 whenever the pseudo-distances are nonnegative (a positive semidefinite bond; then
    :math:`\mathsf K_{ii} = 1`) and keeps :math:`\mathsf K \le 1` for an indefinite one.  A tilt
    :math:`h_j` that underflows to 0 (:math:`\beta(g_j - \max g) < -1490`) marks a token the head never
    attends to.

    Parameters
    ----------
    split : ScoreSplit
        From :func:`score_split` or :func:`token_split`.
    beta : float
        Inverse temperature :math:`\beta > 0`.

    Returns
    -------
    DestinationTilt
        ``(kernel, h)`` of shapes [..., n, n] and [..., n], in the library of the split.

    References
    ----------
    Attention Geometry §4 (Doob h-transform) and §7; book/reference.md §A.7 "Distance form with site
    potentials" and "Exact link ⇔ Doob ⇔ reversible" [DERIVED; CODE DITFLEX "Theorem 4.1"].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.markov import doob_transform, softmax_operator
    >>> rng = np.random.default_rng(3)
    >>> q, k = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    >>> split = token_split(q, k)
    >>> K, h = destination_tilt(split, beta=0.7)
    >>> P_bond = softmax_operator(split.bond, beta=0.7)  # the head with its link removed
    >>> bool(np.allclose(doob_transform(K, h).P, P_bond))
    True
    """
    split = _as_split(split)
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    xp = namespace(split.squared_distance)
    d2, g = split.squared_distance, split.potential
    if int(d2.shape[-1]) == 0:
        return DestinationTilt(d2, g)  # an empty context: nothing to tilt
    c = xp.min(d2, axis=(-2, -1), keepdims=True)
    c = xp.where(c < 0, c, xp.zeros_like(c))
    # Both exponents are <= 0; for a huge beta they may overflow to -inf, whose exp is the exact limit 0.
    with np.errstate(over="ignore"):
        kernel = xp.exp(-0.5 * beta * (d2 - c))
        h = xp.exp(0.5 * beta * (g - xp.max(g, axis=-1, keepdims=True)))
    return DestinationTilt(kernel, h)
