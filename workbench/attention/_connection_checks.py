r"""Boundary checks of the connection walk: walk weights, transport fields, features, laws, masks, head stacks.

The primitives of the connection-walk modules (:mod:`._walk`, :mod:`._effective`, :mod:`._mixing`,
:mod:`._polar`, :mod:`._holonomy`).  Arrays follow the conventions of the connection-Laplacian paper §3:
walk weights ``A`` with ``shape=[n, n]``, transports ``O`` with ``shape=[n, n, d, d]`` (``O[i, j]`` for the edge
``j → i``), row-vector features ``X`` with ``shape=[n, d]``.  Messages name the parameter, the expectation and
the value.  Package-internal: nothing here is exported.

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §3 (arrays of the connection walk).
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

import array_api_compat
import numpy as np

from workbench.backend import host_array, namespace, to_numpy
from workbench.markov import MarkovOperator
from workbench.validation import (
    as_array,
    check_matching,
    check_nonnegative,
    check_row_stochastic,
    check_square,
    shape_of,
)

__all__ = []  # package-internal helpers only


def check_walk(name: str, A):
    """Validate walk weights: a square matrix."""
    A = as_array(name, A, ndim=2)
    check_square(name, A)
    return A


def check_transports(name: str, O, n: int | None, weights_name: str = "A"):
    """Validate a transport field ``shape=[n, n, d, d]`` (against ``n`` tokens of ``weights_name`` if given)."""
    O = as_array(name, O, ndim=4)
    shape = shape_of(O)
    if n is None:
        if shape[0] != shape[1] or shape[2] != shape[3]:
            raise ValueError(f"{name} must have shape (n, n, d, d), got shape {shape}")
    elif shape[:2] != (n, n) or shape[2] != shape[3]:
        raise ValueError(
            f"{name} must have shape (n, n, d, d) = ({n}, {n}, d, d) matching {weights_name}, got shape {shape}"
        )
    return O


def check_features(name: str, X, n: int, d: int):
    """Validate row-vector features ``shape=[n, d]``."""
    X = as_array(name, X, ndim=2)
    shape = shape_of(X)
    if shape != (n, d):
        raise ValueError(f"{name} must have shape (n, d) = ({n}, {d}), got shape {shape}")
    return X


def check_law(name: str, pi, n: int, *, positive: bool):
    """Validate vertex weights ``shape=[n]``: nonnegative, and positive if asked."""
    pi = as_array(name, pi, ndim=1)
    check_matching(name, pi.shape[0], "A rows", n)
    check_nonnegative(name, pi)
    if positive and float(namespace(pi).min(pi)) <= 0.0:
        host = to_numpy(pi)
        raise ValueError(f"{name} must be positive, got {name}[{int(np.argmin(host))}] = {float(host.min()):.6g}")
    return pi


def check_mask(mask, shape: tuple[int, ...], xp, like, matching: str = ""):
    """Validate a boolean support mask of the given shape (``matching`` says whose); return it like ``like``."""
    if not (isinstance(mask, np.ndarray) or array_api_compat.is_torch_array(mask)):
        mask = host_array("mask", mask)
    if str(mask.dtype) not in ("bool", "torch.bool"):
        raise TypeError(f"mask must be a boolean array (True = included), got dtype {mask.dtype}")
    if shape_of(mask) != shape:
        where = f" matching {matching}" if matching else ""
        raise ValueError(f"mask must have shape {shape}{where}, got shape {shape_of(mask)}")
    return xp.asarray(mask, device=array_api_compat.device(like))


def eye_like(xp, d: int, like):
    """The identity :math:`I_d` in the namespace ``xp``, with the dtype and device of ``like``."""
    return xp.eye(d, dtype=like.dtype, device=array_api_compat.device(like))


def stationary_law(name: str, A):
    """The stationary law of a row-stochastic ``A`` (through :class:`workbench.markov.MarkovOperator`)."""
    check_row_stochastic(name, A)
    return MarkovOperator(A).stationary


def check_heads(A_heads, M_heads):
    """Validate a head stack: nonnegative attention ``[H, n, n]`` and value-output maps ``[H, d, d]``."""
    A_heads = as_array("A_heads", A_heads, ndim=3)
    check_square("A_heads", A_heads)
    check_nonnegative("A_heads", A_heads)
    M_heads = as_array("M_heads", M_heads, ndim=3)
    check_square("M_heads", M_heads)
    namespace(A_heads=A_heads, M_heads=M_heads)
    check_matching("A_heads heads", A_heads.shape[0], "M_heads heads", M_heads.shape[0])
    return A_heads, M_heads


def check_head_factors(A_heads, W_V, W_O):
    """Heads' attention [H, n, n] (square) and the factors W_V [H, d, r], W_O [H, r, d] of their maps, matching."""
    A_heads = as_array("A_heads", A_heads, ndim=3)
    check_square("A_heads", A_heads)
    W_V, W_O = as_array("W_V", W_V, ndim=3), as_array("W_O", W_O, ndim=3)
    H, d, r = shape_of(W_V)
    if shape_of(W_O) != (H, r, d) or int(A_heads.shape[0]) != H:
        raise ValueError(
            f"W_V [H, d, r], W_O [H, r, d] and A_heads [H, n, n] must match, got shapes {shape_of(W_V)}, "
            f"{shape_of(W_O)} and {shape_of(A_heads)}"
        )
    return A_heads, W_V, W_O
