r"""Boundary checks of the attention diagnostics: stacks of row-stochastic maps, row-sum tolerances, stack axes.

The primitives of :mod:`._entropy`, :mod:`._reversibility` and :mod:`._circuits` (package-internal, not
exported).  A map :math:`\mathsf P` is row-stochastic and acts on functions from the left; stacks have
``shape=[..., n, n]``.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; book/reference.md §A.10, §A.12 [RECON].
"""

from __future__ import annotations

import math
from numbers import Integral

from workbench.backend import namespace
from workbench.validation import as_array, as_scalar, check_in_range, check_row_stochastic, check_square

__all__ = []


def default_atol(x) -> float:
    """Row-sum tolerance: 1e-10, or n·eps of the dtype when that is larger (a float32 softmax row)."""
    eps = float(namespace(x).finfo(x.dtype).eps)
    return max(1e-10, int(x.shape[-1]) * eps)


def check_stochastic(name: str, P, atol: float | None):
    """``P`` as a validated stack of row-stochastic matrices ``shape=[..., n, n]``."""
    P = as_array(name, P, min_ndim=2)
    check_square(name, P)
    if atol is None:
        check_row_stochastic(name, P, atol=default_atol(P))
        return P
    atol = check_in_range("atol", atol, 0.0)
    try:
        check_row_stochastic(name, P, atol=atol)
    except ValueError as exc:
        raise ValueError(f"{exc} (row-sum tolerance atol = {atol:g})") from None
    return P


def scalar_or_array(x):
    """A 0-d result as a Python float; a stacked one as it is."""
    return float(x) if x.ndim == 0 else x


def leading_mean(values, axis, name: str, shape: tuple[int, ...]):
    """Average ``values`` (the leading axes of an input of ``shape``) over ``axis`` (None: all of them)."""
    lead = values.ndim
    if axis is None:
        axes = tuple(range(lead))
    else:
        axis = as_scalar(axis) if getattr(axis, "ndim", None) == 0 else axis
        try:
            raw = (axis,) if isinstance(axis, Integral) else tuple(axis)
        except TypeError:
            raise TypeError(f"axis must be None, an integer or a tuple of integers, got {axis!r}") from None
        axes = []
        for a in raw:
            if isinstance(a, bool) or not isinstance(a, Integral) or not -lead <= a < lead:
                raise ValueError(
                    f"axis must index the leading (stack) axes of {name}, which has {lead} of them "
                    f"(shape {shape}), got {axis!r}"
                )
            axes.append(int(a) % lead)
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis must not repeat an axis, got {axis!r}")
        axes = tuple(axes)
    empty = [a for a in axes if int(values.shape[a]) == 0]
    if empty:
        raise ValueError(f"{name} must not be an empty stack along the averaged axis {empty[0]}, got shape {shape}")
    if axes:  # torch reads an empty axis tuple as "all axes"
        values = namespace(values).mean(values, axis=axes)
    return scalar_or_array(values)


def flat_stack(P):
    """``P`` viewed as ``(count, n, n)`` with the leading shape, for loops over a stack."""
    lead = tuple(int(s) for s in P.shape[:-2])
    n = int(P.shape[-1])
    return namespace(P).reshape(P, (math.prod(lead), n, n)), lead
