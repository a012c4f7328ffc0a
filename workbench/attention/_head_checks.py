r"""Boundary checks of attention heads: boolean masks, weight shapes, β, flags, the context :math:`X`.

The primitives of :mod:`._softmax`, :mod:`._heads` and :mod:`._random_heads`.  Messages name the parameter,
the expected shape (and the parameter it must match) and the value.  :func:`check_head_weights` is the one
validation path of :class:`~workbench.attention.AttentionHead` and
:class:`~workbench.attention.MultiHeadAttention` (a stack is a head with a leading head axis).
Package-internal: nothing here is exported.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §7; book/reference.md §A.7 ("Full head").
From Self-Attention to Connection Laplacian, Eq. (4); book/reference.md §B.3 [RECON].
A. Vaswani et al., "Attention is all you need", NeurIPS 2017 (scaled dot-product and multi-head attention).
"""

from __future__ import annotations

import math
from numbers import Real

import array_api_compat
import numpy as np

from workbench.backend import host_array, namespace
from workbench.validation import as_array, as_scalar, shape_of

__all__ = []


def is_bool(x) -> bool:
    if array_api_compat.is_torch_array(x):
        import torch

        return x.dtype == torch.bool
    return x.dtype == np.bool_


def validated_mask(mask, like, source: str = ""):
    """Return ``mask`` as a boolean array of ``like``'s library, checked broadcastable to ``like.shape``.

    ``source`` says where the logits' shape came from (e.g. ``" of the 4 tokens in X"``), so that a refusal
    names the parameter the caller sized them by.
    """
    if isinstance(mask, (list, tuple)):
        mask = host_array("mask", mask)
    namespace(logits=like, mask=mask)  # one array library per call (TypeError on mixing)
    if not hasattr(mask, "dtype") or not is_bool(mask):
        kind = getattr(mask, "dtype", type(mask).__name__)
        raise TypeError(f"mask must be a boolean array (True = admissible key), got {kind}")
    target = shape_of(like)
    try:
        joint = np.broadcast_shapes(shape_of(mask), target)
    except ValueError:
        joint = None
    if joint != target:
        raise ValueError(f"mask must be broadcastable to the logits shape {target}{source}, got shape {shape_of(mask)}")
    return mask


def check_shape(name, array, expected, reference=None, *, like=False):
    """Raise unless ``array`` has ``expected`` shape (entries ``None`` are free, printed by their symbol)."""
    shape = shape_of(array, name)
    ok = len(shape) == len(expected) and all(e is None or s == e for s, e in zip(shape, expected, strict=False))
    if ok:
        return
    entries = ["d_v" if e is None else str(e) for e in expected]
    printed = f"({entries[0]},)" if len(entries) == 1 else "(" + ", ".join(entries) + ")"
    if reference is None:
        raise ValueError(f"{name} must have shape {printed}, got {shape}")
    ref_name, ref = reference
    if like:
        raise ValueError(f"{name} must have shape {printed} like {ref_name}, got {shape}")
    raise ValueError(f"{name} must have shape {printed} to match {ref_name} of shape {shape_of(ref)}, got {shape}")


def check_beta(beta, d_head):
    if beta is None:
        return 1.0 / math.sqrt(d_head)
    if isinstance(beta, bool) or not isinstance(beta, Real):
        if hasattr(beta, "shape") and tuple(beta.shape) == ():
            beta = float(beta)
        else:
            raise TypeError(f"beta must be a real number, got {type(beta).__name__}")
    beta = float(beta)
    if math.isnan(beta) or beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if math.isinf(beta):
        raise ValueError(f"beta must be finite, got {beta!r}")
    return beta


def check_flag(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_rng(name, rng):
    """A ``numpy.random.Generator`` from a Generator, a nonnegative integer seed or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    rng = as_scalar(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{name} must be a nonnegative integer seed, a numpy Generator or None, got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(f"{name} must be a numpy Generator, an integer seed or None, got {type(rng).__name__}")


def causal_support(n, like):
    r"""The causal mask :math:`j \le i`, shape (n, n), in the library and on the device of ``like``."""
    xp = namespace(like)
    index = xp.arange(n, device=array_api_compat.device(like))
    return index[None, :] <= index[:, None]


def convert_weights(fields, names):
    """Convert the given weight fields with ``as_array`` (finite, floating) and check one array library."""
    converted = {}
    for name in names:
        value = fields[name]
        converted[name] = None if value is None else as_array(name, value)
    namespace(**{k: v for k, v in converted.items() if v is not None})  # TypeError naming both if mixed
    return converted


def check_context(X, d_model, reference):
    """Validate the context ``X``: a 2-D array with ``d_model`` columns and at least one row."""
    X = as_array("X", X, ndim=2)
    namespace(X=X, W_Q=reference)  # TypeError if X and the weights mix numpy and torch
    n, width = shape_of(X)
    if width != d_model:
        raise ValueError(f"X must have shape (n, {d_model}), got {(n, width)}")
    if n == 0:
        raise ValueError(f"X must have at least one row (token), got shape {(n, width)}")
    return X


def admissible_mask(mask, logits, causal, source: str = ""):
    r"""The user mask (validated against ``logits``, see :func:`validated_mask`) and the causal mask :math:`j \le i`."""
    if mask is not None:
        mask = validated_mask(mask, logits, source)
    if causal:
        causal_mask = causal_support(int(logits.shape[-1]), logits)
        mask = causal_mask if mask is None else mask & causal_mask
    return mask


def tokens_of(name: str, logits) -> str:
    """The ``source`` of :func:`validated_mask` for logits computed from a context ``name`` of n tokens."""
    return f" of the {int(logits.shape[-1])} tokens in {name}"


def check_head_weights(fields, *, stacked):
    r"""The one validation path of head weights: a head (``stacked=False``) or a stack of heads (``stacked=True``).

    A head has :math:`W_Q, W_K` of shape ``(D, d_h)``, optional :math:`W_V` ``(D, d_v)``, :math:`W_O` ``(d_v, D)``
    and biases :math:`b_Q, b_K` ``(d_h,)``, :math:`b_V` ``(d_v,)``; a stack puts a leading head axis ``H`` on
    every one of them, requires :math:`W_V, W_O` and may carry the output bias :math:`b_O` ``(D,)``.  The
    weights are converted with ``as_array`` (finite, floating; one array library).

    Returns
    -------
    weights : dict
        The converted fields, in the order given.
    d_head : int
        :math:`d_h`, for the default inverse temperature.
    """
    w = convert_weights(fields, tuple(fields))
    for name in ("W_Q", "W_K", "W_V", "W_O") if stacked else ("W_Q", "W_K"):
        if w[name] is None:
            raise ValueError(f"{name} is required, got None")
    W_Q, W_V = w["W_Q"], w["W_V"]
    if W_Q.ndim != (3 if stacked else 2) or 0 in shape_of(W_Q):
        layout = "3-dimensional array (H, D, d_h)" if stacked else "2-dimensional array (D, d_h)"
        raise ValueError(f"W_Q must be a nonempty {layout}, got shape {shape_of(W_Q)}")
    *lead, D, d_h = shape_of(W_Q)
    check_shape("W_K", w["W_K"], (*lead, D, d_h), ("W_Q", W_Q), like=True)
    if W_V is not None:
        check_shape("W_V", W_V, (*lead, D, None), ("W_Q", W_Q))
        if W_V.shape[-1] == 0:
            expected = "d_v >= 1" if stacked else "at least one column (d_v >= 1)"
            raise ValueError(f"W_V must have {expected}, got shape {shape_of(W_V)}")
    for name in ("W_O", "b_V"):
        if w[name] is not None and W_V is None:
            raise ValueError(f"{name} needs W_V (it acts on the values X W_V), got W_V=None")
    d_v = None if W_V is None else int(W_V.shape[-1])
    if w["W_O"] is not None:
        check_shape("W_O", w["W_O"], (*lead, d_v, D), ("W_V", W_V))
    for name, expected, ref in (
        ("b_Q", (*lead, d_h), "W_Q"),
        ("b_K", (*lead, d_h), "W_K"),
        ("b_V", (*lead, d_v), "W_V"),
        ("b_O", (D,), "W_Q"),
    ):
        if w.get(name) is not None:
            check_shape(name, w[name], expected, (ref, w[ref]))
    return w, d_h
