r"""A head read at a corner of the operator family: projecting a head, and which corner it is nearest.

A head :math:`(W_Q, W_K)` read at a corner keeps its weights and takes the corner's logits
(:func:`~workbench.attention.family_logits` at ``CORNERS[name]``); the distance between the head's own
operator and each corner's on a context :math:`X` says which geometry it is closest to (a workbench rule).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §1, §7, §9 (Table 1), §10, Table 4; book/reference.md
§A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and its corollaries [DERIVED], §A.10
(:math:`\rho_{\mathrm{skew}}`) [RECON].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.attention._family import checked_family_logits
from workbench.attention._forms import effective_form
from workbench.attention._head_checks import admissible_mask, tokens_of
from workbench.attention._operators import CORNERS, OPERATORS, SQRT_HALF, check_query_key_weights
from workbench.attention._overflow import overflow_ignored
from workbench.attention._softmax import softmax_rows
from workbench.backend import host_array, namespace, to_numpy
from workbench.markov import MarkovOperator
from workbench.validation import as_array, check_choice, check_in_range, check_matching, shape_of

__all__ = [
    "CornerHead",
    "corner_distances",
    "nearest_corner",
    "project_head",
    "token_corner_distances",
]


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
        W_Q, W_K = check_query_key_weights(self.W_Q, self.W_K, ndim=2)
        check_choice("name", self.name, OPERATORS)
        object.__setattr__(self, "W_Q", W_Q)
        object.__setattr__(self, "W_K", W_K)

    @property
    def corner(self) -> tuple[int, int]:
        """The corner ``(b, a)``."""
        return CORNERS[self.name]

    @property
    def W_M(self):
        r""":math:`W_M = (W_Q + W_K)/\sqrt2`."""
        return SQRT_HALF * (self.W_Q + self.W_K)

    @property
    def W_N(self):
        r""":math:`W_N = (W_Q - W_K)/\sqrt2`."""
        return SQRT_HALF * (self.W_Q - self.W_K)

    @property
    def parameters(self) -> tuple:
        """The weights the corner needs: ``(W_M,)`` for DMAP, ``(W_M, W_N)`` otherwise (see parameter_count)."""
        return (self.W_M,) if self.name == "DMAP" else (self.W_M, self.W_N)

    def effective_form(self):
        """``(M_S_op, M_A_op)`` of :func:`effective_form`."""
        return effective_form(self.W_Q, self.W_K, self.name)

    def _queries_keys(self, X):
        X = as_array("X", X, ndim=2)
        namespace(X=X, W_Q=self.W_Q)
        check_matching("X columns", X.shape[-1], "W_Q rows", self.W_Q.shape[0])
        if X.shape[0] == 0:
            raise ValueError(f"X must have at least one row (token), got shape {shape_of(X)}")
        with overflow_ignored():  # an overflow here reaches the logits, which are checked naming X, W_Q, W_K
            return X @ self.W_Q, X @ self.W_K

    def _inputs(self, X):
        return {"X": as_array("X", X, ndim=2), "W_Q": self.W_Q, "W_K": self.W_K}

    def logits(self, X, beta=None):
        """The corner's logits on a context ``X`` of shape [n, D]."""
        q, k = self._queries_keys(X)
        return checked_family_logits(q, k, *self.corner, beta, self._inputs(X))

    def operator(self, X, beta=None, mask=None):
        r"""The corner's Markov operator :math:`\mathsf P` (row-stochastic) on ``X``."""
        logits = self.logits(X, beta=beta)  # = family_operator at the corner, with the mask checked against X
        return softmax_rows(logits, admissible_mask(mask, logits, False, tokens_of("X", logits)))

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
    Attention Geometry §10, §11; book/reference.md §A.7 "The four parameterisations" [CODE].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import parameter_count
    >>> rng = np.random.default_rng(5)
    >>> X, W_Q, W_K = rng.standard_normal((4, 6)), rng.standard_normal((6, 2)), rng.standard_normal((6, 2))
    >>> head = project_head(W_Q, W_K, "DMTN")
    >>> W_N = (W_Q - W_K) / np.sqrt(2)
    >>> bool(np.allclose(head.logits(X, beta=1.0), X @ (W_Q @ W_K.T + 0.5 * W_N @ W_N.T) @ X.T))  # M + ½W_NW_Nᵀ
    True
    >>> sum(p.size for p in project_head(W_Q, W_K, "DMAP").parameters) == parameter_count("DMAP", 6, 2)
    True
    """
    W_Q, W_K = check_query_key_weights(W_Q, W_K, ndim=2)
    return CornerHead(W_Q, W_K, check_choice("operator", operator, OPERATORS))


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
    Workbench diagnostic built on book/reference.md §A.7 (not from Attention Geometry).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(6)
    >>> X, W_Q = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))
    >>> d = corner_distances(X, W_Q, W_Q.copy())  # tied weights: n = 0, so DMTN is the head itself
    >>> d["ATTN"], d["DMTN"]
    (0.0, 0.0)
    """
    W_Q, W_K = check_query_key_weights(W_Q, W_K, ndim=2)
    head = project_head(W_Q, W_K, "ATTN")
    q, k = head._queries_keys(X)
    return _distances(q, k, beta, mask, head._inputs(X), "X")


def token_corner_distances(q, k, beta=None, mask=None):
    r""":func:`corner_distances` from a head's queries and keys themselves, :math:`q_i, k_j`.

    The corners are functions of the token form :math:`\mathcal W_{ij} = q_i\cdot k_j` (:func:`family_logits`),
    so the distances need no weights: this is the reading of heads whose scores are not one fixed bilinear form
    of the rows, e.g. rotary position embeddings, where :math:`q_i = R_i(x_iW_Q)` and :math:`k_j = R_j(x_jW_K)`
    with a rotation per position.  For :math:`q = XW_Q`, :math:`k = XW_K` it equals
    ``corner_distances(X, W_Q, W_K, beta, mask)``.

    Parameters
    ----------
    q, k : array, shape=[..., n, d_h]
        Queries and keys of one head, or of a stack of heads (numpy or torch, same shape).
    beta : float, optional
        Default :math:`1/\sqrt{d_h}`.
    mask : bool array, shape=[n, n], optional
        Applied to every corner (a causal head passes its causal mask).

    Returns
    -------
    dict
        ``{operator: float}`` for all of :data:`OPERATORS`; for a stack, ``{operator: array of shape [...]}`` (numpy),
        equal to the heads read one at a time (the same operations, batched).

    References
    ----------
    Workbench diagnostic built on book/reference.md §A.7 (not from Attention Geometry).

    Examples
    --------
    >>> import numpy as np
    >>> q = np.random.default_rng(3).standard_normal((4, 2))
    >>> token_corner_distances(q, q.copy())["DMTN"]  # tied queries and keys: n = 0, DMTN is the head itself
    0.0
    """
    q, k = as_array("q", q, min_ndim=2), as_array("k", k, min_ndim=2)
    namespace(q=q, k=k)
    if tuple(q.shape) != tuple(k.shape) or q.shape[-2] == 0:
        raise ValueError(
            f"q and k must have the same shape (..., n, d_h) with n >= 1, got {shape_of(q)} and {shape_of(k)}"
        )
    return _distances(q, k, beta, mask, {"q": q, "k": k}, "q")


def _distances(q, k, beta, mask, inputs, rows: str):
    """The mean row total-variation distance of each corner's operator from the ATTN one, on ``q, k``."""
    if mask is not None:
        n = int(q.shape[-2])
        if isinstance(mask, (list, tuple)):
            mask = host_array("mask", mask)
        shape = shape_of(mask, "mask") if hasattr(mask, "shape") else np.shape(mask)
        try:
            joint = np.broadcast_shapes(shape, (n, n))
        except ValueError:
            joint = None
        if joint != (n, n):
            raise ValueError(
                f"mask must be broadcastable to (n, n) = ({n}, {n}) for the n = {n} rows of {rows}, got shape {shape}"
            )

    def operator(name):
        return softmax_rows(checked_family_logits(q, k, *CORNERS[name], beta, inputs), mask)

    reference = operator("ATTN")
    xp = namespace(reference)
    distances = {}
    for name in OPERATORS:
        P = reference if name == "ATTN" else operator(name)
        mean = xp.mean(0.5 * xp.sum(xp.abs(reference - P), axis=-1), axis=-1)  # one per head of a stack
        distances[name] = float(mean) if mean.ndim == 0 else np.asarray(to_numpy(mean), dtype=np.float64)
    return distances


def nearest_corner(X, W_Q, W_K, beta=None, mask=None, tol=0.1):
    r"""Classify a head by the constrained corner whose operator is closest to its own.

    Returns the operator among DMAP, DMTN, ATAP with the smallest :func:`corner_distances` (ties go to the
    earlier one in :data:`OPERATORS`), unless even that distance exceeds ``tol``; then ``'ATTN'`` (no
    constrained corner reproduces the head).  The rule is a workbench choice, not from the paper: with the
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
    Workbench choice on top of book/reference.md §A.7 (Attention Geometry gives no classification rule).

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
