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
Attention Geometry (Candanedo, arXiv 2604.09560) §4, §7 and Table 4; attention-geometry-math §A.7 "Exact
bond/link split", "Distance form with site potentials", "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities"
[DERIVED].
"""

from __future__ import annotations

from typing import NamedTuple

import array_api_compat
import numpy as np

from workbench.backend import namespace
from workbench.markov import hodge_split
from workbench.markov._cycles import _cycle_edges, _segment_sums
from workbench.validation import as_array, check_in_range, check_integer, check_matching, check_square

__all__ = [
    "DestinationTilt",
    "LinkHodgeSplit",
    "ScoreSplit",
    "bond_link_split",
    "destination_tilt",
    "distance_form_logits",
    "exact_link",
    "is_exact_link",
    "link_hodge_split",
    "link_holonomy",
    "link_potential",
    "score_split",
    "token_split",
    "triangle_cycles",
]


# --- helpers --------------------------------------------------------------------------------------------


def _transpose(x):
    return namespace(x).matrix_transpose(x)


def _check_same_shape(name_a, a, name_b, b):
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}")


def _check_antisymmetric(name, x, rtol=1e-12):
    xp = namespace(x)
    if int(x.shape[-1]) == 0:
        return
    gap = float(xp.max(xp.abs(x + _transpose(x))))
    scale = max(float(xp.max(xp.abs(x))), np.finfo(float).tiny)
    if gap > rtol * scale:
        raise ValueError(
            f"{name} must be antisymmetric, got max |{name} + {name}^T| = {gap:.6g} (relative {gap / scale:.6g})"
        )


def _antisymmetric_matrix(name, x):
    x = as_array(name, x, ndim=2)
    check_square(name, x)
    _check_antisymmetric(name, x)
    return x


def _zero_diagonal(x):
    """``x`` with its diagonal set to exactly 0 (shape [..., n, n])."""
    xp = namespace(x)
    n = int(x.shape[-1])
    eye = xp.eye(n, dtype=xp.bool, device=array_api_compat.device(x))
    return xp.where(eye, xp.zeros_like(x), x)


# --- the split of a bilinear form ---------------------------------------------------------------------


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
    Attention Geometry §7; attention-geometry-math §A.7 "Exact bond/link split" [DERIVED].

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
    Mt = _transpose(M)
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
    Attention Geometry §7, Table 4; attention-geometry-math §A.7 "Exact bond/link split" (token form [CODE]
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
    namespace(q, k)
    _check_same_shape("q", q, "k", k)
    return _split_scores(q @ _transpose(k))


def _split_scores(W):
    xp = namespace(W)
    Wt = _transpose(W)
    bond = 0.5 * (W + Wt)
    link = 0.5 * (W - Wt)
    g = xp.linalg.diagonal(bond)
    # g_i + g_i - 2 S_ii is exactly 0 in IEEE arithmetic; the explicit zero guards fused or reordered kernels.
    d2 = _zero_diagonal(g[..., :, None] + g[..., None, :] - 2.0 * bond)
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
    [SEED]; attention-geometry-math §A.7 [DERIVED].

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
    namespace(X, W_Q, W_K)
    _check_same_shape("W_Q", W_Q, "W_K", W_K)
    check_matching("X columns", X.shape[-1], "W_Q rows", W_Q.shape[-2])
    q, k = X @ W_Q, X @ W_K
    for name, bias in (("b_Q", b_Q), ("b_K", b_K)):
        if bias is not None:
            bias = as_array(name, bias, min_ndim=1)
            namespace(X, bias)
            check_matching(f"{name} length", bias.shape[-1], "W_Q columns", W_Q.shape[-1])
            if name == "b_Q":
                q = q + bias[..., None, :]
            else:
                k = k + bias[..., None, :]
    return token_split(q, k)


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
    attention-geometry-math §A.7 "Distance form with site potentials" [DERIVED; CODE DITFLEX ``bidivergence``].

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
    return -0.5 * beta * split.squared_distance + 0.5 * beta * g[..., None, :] + beta * split.link


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
    Attention Geometry §4 (Doob h-transform) and §7; attention-geometry-math §A.7 "Distance form with site
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
    kernel = xp.exp(-0.5 * beta * (d2 - c))
    h = xp.exp(0.5 * beta * (g - xp.max(g, axis=-1, keepdims=True)))
    return DestinationTilt(kernel, h)


# --- exact links, the Hodge split and holonomy ---------------------------------------------------------


def exact_link(phi):
    r"""The exact (gradient) link of a potential, :math:`\mathcal A_{ij} = \varphi_i - \varphi_j`.

    A head whose link is exact is a Doob transform of its bond, hence reversible: in the logits,
    :math:`\beta(\varphi_i - \varphi_j)` is a source term (cancelled by the row softmax) plus a destination
    tilt :math:`e^{-\beta\varphi_j}`.

    Parameters
    ----------
    phi : array, shape=[..., n]

    Returns
    -------
    array, shape=[..., n, n]
        Exactly antisymmetric.

    References
    ----------
    attention-geometry-math §A.7 "Exact link ⇔ Doob ⇔ reversible" [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> exact_link(np.array([0.0, 1.0, 3.0])).tolist()  # by hand: φ_i - φ_j
    [[0.0, -1.0, -3.0], [1.0, 0.0, -2.0], [3.0, 2.0, 0.0]]
    """
    phi = as_array("phi", phi, min_ndim=1)
    return phi[..., :, None] - phi[..., None, :]


def link_potential(link):
    r"""Least-squares potential of a link on the complete graph, :math:`\varphi_i = \tfrac1N\sum_j\mathcal A_{ij}`.

    It minimises :math:`\sum_{i,j}(\mathcal A_{ij} - (\varphi_i - \varphi_j))^2` with :math:`\sum_i\varphi_i = 0`:
    the normal equations on :math:`K_N` read :math:`N\varphi_i - \sum_j\varphi_j = \sum_j\mathcal A_{ij}`.  For an
    exact link :math:`\mathcal A = \varphi_i - \varphi_j` it returns :math:`\varphi` minus its mean.

    Parameters
    ----------
    link : array, shape=[..., n, n]
        Antisymmetric (checked to a relative 1e-12).

    Returns
    -------
    array, shape=[..., n]

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" (Hodge split of the link on the complete graph) [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([1.0, 2.0, 6.0])
    >>> link_potential(exact_link(phi)).tolist()  # φ minus its mean 3
    [-2.0, -1.0, 3.0]
    """
    link = as_array("link", link, min_ndim=2)
    check_square("link", link)
    _check_antisymmetric("link", link)
    n = int(link.shape[-1])
    return namespace(link).sum(link, axis=-1) / max(n, 1)  # an empty link has the empty potential


class LinkHodgeSplit(NamedTuple):
    r"""Hodge split of a link, :math:`\mathcal A = (\varphi_i - \varphi_j) + \mathcal A^\perp`."""

    exact: object
    r"""Gradient part :math:`\varphi_i - \varphi_j`: carries no holonomy; a destination (Doob) tilt."""
    coexact: object
    r"""Divergence-free part :math:`\mathcal A^\perp` (:math:`\sum_j w_{ij}\mathcal A^\perp_{ij} = 0`): all holonomy."""


def link_hodge_split(link, weights=None):
    r"""Hodge split of a link into its exact (Doob) and coexact (circulating) parts.

    .. math::

        \mathcal A = \underbrace{(\varphi_i - \varphi_j)}_{\text{exact}} + \underbrace{\mathcal A^\perp}_{\text{coexact}},
        \qquad \sum_j w_{ij}\mathcal A^\perp_{ij} = 0,

    with :math:`\varphi` the :math:`w`-weighted least-squares potential.  On the complete graph
    :math:`K_N` with unit weights (the default) :math:`\varphi` is :func:`link_potential` and
    :math:`\mathcal A^\perp\mathbf 1 = 0`.  The exact part is absorbed by the row softmax into a destination
    tilt; only the coexact part makes the head nonreversible.  This delegates to
    :func:`workbench.markov.hodge_split`.

    Parameters
    ----------
    link : array, shape=[n, n]
        Antisymmetric.
    weights : array, shape=[n, n], optional
        Symmetric nonnegative edge weights; default: the complete graph (ones off the diagonal).  Pass the
        symmetrised mask for a masked head.

    Returns
    -------
    LinkHodgeSplit
        ``(exact, coexact)`` in the library of ``link``.

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" (Hodge split of the link) [DERIVED]; L.-H. Lim, "Hodge
    Laplacians on graphs", SIAM Review 62 (2020) 685.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(4)
    >>> B = rng.standard_normal((5, 5)); link = (B - B.T) / 2
    >>> exact, coexact = link_hodge_split(link)
    >>> bool(np.allclose(exact, exact_link(link.mean(axis=1))) and np.allclose(coexact.sum(axis=1), 0.0))
    True
    """  # noqa: E501
    link = _antisymmetric_matrix("link", link)
    if weights is None:
        xp = namespace(link)
        n = int(link.shape[0])
        ones = xp.ones((n, n), dtype=link.dtype, device=array_api_compat.device(link))
        weights = _zero_diagonal(ones)
    _, exact, coexact = hodge_split(link, weights)
    return LinkHodgeSplit(exact, coexact)


def triangle_cycles(n):
    r"""The triangles :math:`(0, i, j, 0)`, :math:`1 \le i < j \le n-1`: a cycle basis of the complete graph.

    There are :math:`(n-1)(n-2)/2` of them, the cyclomatic number of :math:`K_n`; each is the fundamental
    cycle of the edge :math:`\{i, j\}` with respect to the star spanning tree at vertex 0.

    Parameters
    ----------
    n : int
        Number of vertices, :math:`n \ge 0`.

    Returns
    -------
    list of tuple of int
        Closed vertex sequences, ordered by :math:`(i, j)`.

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" [DERIVED].

    Examples
    --------
    >>> triangle_cycles(4)
    [(0, 1, 2, 0), (0, 1, 3, 0), (0, 2, 3, 0)]
    >>> len(triangle_cycles(10)) == 9 * 8 // 2
    True
    """
    n = check_integer("n", n, 0)
    return [(0, i, j, 0) for i in range(1, n) for j in range(i + 1, n)]


def link_holonomy(link, cycles=None):
    r"""Holonomy of a link around cycles, :math:`\oint_\gamma\mathcal A = \sum_m\mathcal A_{i_m i_{m+1}}`.

    For a cycle :math:`\gamma = (i_0\to i_1\to\dots\to i_k = i_0)`.  The holonomy vanishes on every cycle
    exactly when the link is exact (:math:`\mathcal A_{ij} = \varphi_i - \varphi_j`), and the cycle affinity of
    the head :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))` is twice it,

    .. math::

        \mathfrak A(\gamma) = \sum_m \log\frac{\mathsf P_{i_m i_{m+1}}}{\mathsf P_{i_{m+1} i_m}}
        = 2\beta\oint_\gamma\mathcal A,

    because the partition functions telescope and the bond cancels (see
    :func:`workbench.markov.cycle_affinities`).

    Parameters
    ----------
    link : array, shape=[n, n]
        Antisymmetric.
    cycles : sequence of sequences of int, optional
        Closed :math:`(i_0, \dots, i_{k-1}, i_0)` or open :math:`(i_0, \dots, i_{k-1})` vertex sequences.
        Default: :func:`triangle_cycles` ``(n)``, a basis of the cycle space of the complete graph.

    Returns
    -------
    array, shape=[len(cycles)]
        In the library of ``link``.

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" [DERIVED]; J. Schnakenberg, Rev. Mod. Phys. 48 (1976) 571.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(5)
    >>> B = rng.standard_normal((4, 4)); link = B - B.T
    >>> by_hand = link[0, 2] + link[2, 3] + link[3, 0]
    >>> bool(np.isclose(link_holonomy(link, [(0, 2, 3, 0)])[0], by_hand))
    True
    >>> bool(np.allclose(link_holonomy(exact_link(rng.standard_normal(4))), 0.0))  # exact: no holonomy
    True
    """
    link = _antisymmetric_matrix("link", link)
    n = int(link.shape[0])
    if cycles is None:
        cycles = triangle_cycles(n)
    sources, targets, starts = _cycle_edges(cycles, n)  # the parser of markov.cycle_affinities
    xp = namespace(link)
    device = array_api_compat.device(link)
    if starts.size == 0:
        return xp.zeros(0, dtype=link.dtype, device=device)
    steps = link[xp.asarray(sources, device=device), xp.asarray(targets, device=device)]
    return _segment_sums(steps, starts)


def is_exact_link(link, rtol=1e-10):
    r"""Whether a link is exact on the complete graph, :math:`\mathcal A_{ij} = \varphi_i - \varphi_j`.

    On :math:`K_N` the link is exact iff its holonomy vanishes on the triangle basis :math:`(0, i, j)`, i.e.

    .. math::

        r_{ij} = \mathcal A_{ij} - \mathcal A_{i0} - \mathcal A_{0j} = 0 \quad\text{for all } i, j,

    (then :math:`\varphi_i = \mathcal A_{i0}`).  The test is
    :math:`\max_{ij}|r_{ij}| \le \mathrm{rtol}\cdot\max_{ij}|\mathcal A_{ij}|`; an exact link built from a
    potential of size :math:`|\varphi|` carries rounding of order :math:`10^{-16}|\varphi|`, so choose ``rtol``
    above that relative to :math:`\max|\mathcal A|`.  By the Kolmogorov criterion this is the same as the head
    :math:`\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))` being reversible, for any bond.

    Parameters
    ----------
    link : array, shape=[n, n]
        Antisymmetric.
    rtol : float
        Relative tolerance, ``rtol >= 0``.

    Returns
    -------
    bool

    References
    ----------
    attention-geometry-math §A.7 "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities" (Kolmogorov criterion)
    [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([0.3, -1.2, 2.0, 0.5])
    >>> is_exact_link(exact_link(phi)), is_exact_link(exact_link(phi) + np.array(
    ...     [[0, 1, -1, 0], [-1, 0, 1, 0], [1, -1, 0, 0], [0, 0, 0, 0.0]]))  # plus a circulation on (0, 1, 2)
    (True, False)
    """
    link = _antisymmetric_matrix("link", link)
    rtol = check_in_range("rtol", rtol, 0.0)
    xp = namespace(link)
    if int(link.shape[0]) == 0:
        return True
    residual = link - link[:, :1] - link[:1, :]
    scale = float(xp.max(xp.abs(link)))
    return float(xp.max(xp.abs(residual))) <= rtol * scale
