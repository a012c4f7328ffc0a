r"""The four operators DMAP, DMTN, ATAP, ATTN: their names, their corners (b, a), and the family's boundary checks.

The primitives of :mod:`._family`, :mod:`._forms` and :mod:`._corners`: the table of corners and the checks
of queries, keys, query/key maps and the inverse temperature (package-internal, not exported).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §1, §7, §9 (Table 1), §10, Table 4; book/reference.md
§A.7 "The four parameterisations" [CODE jcandane/nanochat ``gpt.py``] and its corollaries [DERIVED], §A.10
(:math:`\rho_{\mathrm{skew}}`) [RECON].
"""

from __future__ import annotations

import math
from types import MappingProxyType

from workbench.attention._split_checks import transpose
from workbench.backend import namespace
from workbench.validation import as_array, check_choice, check_in_range

__all__ = ["CORNERS", "OPERATORS"]


#: The four operators of Attention Geometry, Table 4 (bond definite/indefinite × link exact/free).
OPERATORS = ("DMAP", "DMTN", "ATAP", "ATTN")

#: Corner (b, a) of each operator in the nanochat family: b = 1 keeps the indefinite bond, a = 1 the free link.
CORNERS = MappingProxyType({"DMAP": (0, 0), "DMTN": (0, 1), "ATAP": (1, 0), "ATTN": (1, 1)})

SQRT_HALF = 1.0 / math.sqrt(2.0)


def symmetrised(x):
    r"""The symmetric part :math:`\tfrac12(x + x^\top)` of the last two axes."""
    return 0.5 * (x + transpose(x))


def corner_of(operator):
    """``(b, a)`` of a named operator, or of an explicit pair ``(b, a)`` in [0, 1]²."""
    if isinstance(operator, str):
        return CORNERS[check_choice("operator", operator, OPERATORS)]
    if isinstance(operator, tuple) and len(operator) == 2:
        return check_in_range("b", operator[0], 0.0, 1.0), check_in_range("a", operator[1], 0.0, 1.0)
    raise ValueError(
        f"operator must be one of {', '.join(repr(o) for o in OPERATORS)} or a pair (b, a) in [0, 1]², got {operator!r}"
    )


def check_queries_and_keys(q, k):
    """Validate queries and keys: the same shape ``[..., n, d_h]``, at least one token and one feature."""
    q = as_array("q", q, min_ndim=2)
    k = as_array("k", k, min_ndim=2)
    namespace(q=q, k=k)
    if tuple(q.shape) != tuple(k.shape):
        raise ValueError(f"q and k must have the same shape, got {tuple(q.shape)} and {tuple(k.shape)}")
    if int(q.shape[-1]) == 0:
        raise ValueError(f"q and k must have at least one feature column (d_h >= 1), got shape {tuple(q.shape)}")
    if int(q.shape[-2]) == 0:
        raise ValueError(f"q and k must have at least one token (row), got shape {tuple(q.shape)}")
    return q, k


def check_query_key_weights(W_Q, W_K, *, ndim=None):
    """Validate query and key maps of the same shape (``ndim`` dimensions, or at least 2)."""
    kwargs = {"ndim": ndim} if ndim is not None else {"min_ndim": 2}
    W_Q = as_array("W_Q", W_Q, **kwargs)
    W_K = as_array("W_K", W_K, **kwargs)
    namespace(W_Q=W_Q, W_K=W_K)
    if tuple(W_Q.shape) != tuple(W_K.shape):
        raise ValueError(f"W_Q and W_K must have the same shape, got {tuple(W_Q.shape)} and {tuple(W_K.shape)}")
    return W_Q, W_K


def check_family_beta(beta, d_head):
    r"""The inverse temperature: ``beta > 0`` as given, or :math:`1/\sqrt{d_h}` by default."""
    if beta is None:
        return 1.0 / math.sqrt(d_head)
    return check_in_range("beta", beta, 0.0, low_inclusive=False)
