r"""Primitives of the bond/link split: transposes, same-shape and antisymmetry checks, a zero diagonal.

Shared by :mod:`._split`, :mod:`._links` and the operator family (package-internal, not exported).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4, §7 and Table 4; book/reference.md §A.7 "Exact
bond/link split", "Distance form with site potentials", "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities"
[DERIVED].
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from workbench.attention._overflow import check_overflow
from workbench.backend import namespace
from workbench.validation import as_array, check_square

__all__ = []


def transpose(x):
    """The matrix transpose of the last two axes, in the library of ``x``."""
    return namespace(x).matrix_transpose(x)


def check_same_shape(name_a, a, name_b, b):
    """Raise unless ``a`` and ``b`` have the same shape."""
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {tuple(a.shape)} and {tuple(b.shape)}")


def check_antisymmetric(name, x, rtol=1e-12):
    """Raise unless ``x`` is antisymmetric to relative tolerance ``rtol`` (max-entry scale)."""
    xp = namespace(x)
    if int(x.shape[-1]) == 0:
        return
    gap = float(xp.max(xp.abs(x + transpose(x))))
    scale = max(float(xp.max(xp.abs(x))), np.finfo(float).tiny)
    if gap > rtol * scale:
        raise ValueError(
            f"{name} must be antisymmetric, got max |{name} + {name}^T| = {gap:.6g} (relative {gap / scale:.6g})"
        )


def antisymmetric_matrix(name, x):
    """Validate an antisymmetric square matrix (a link)."""
    x = as_array(name, x, ndim=2)
    check_square(name, x)
    check_antisymmetric(name, x)
    return x


def scaled_logits(beta, logits, inputs=None):
    r"""``beta * logits``, refused with a ``ValueError`` when the logits or the product leave the dtype's range.

    The logits come from validated, finite inputs.  When ``inputs`` (name -> array) is given and the unscaled
    logits are already non-finite, the inputs overflowed them and the message names the inputs; otherwise an
    infinite product can only be the inverse temperature's doing (:math:`\beta = 10^{308}` on a logit of 2)
    and the message names ``beta``.  A softmax of either would be NaN.
    """
    if inputs is not None:
        check_overflow("the logits", logits, inputs)
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = beta * logits
    xp = namespace(scaled)
    if not bool(xp.all(xp.isfinite(scaled))):
        largest = float(xp.max(xp.abs(logits)))
        raise ValueError(
            f"beta must keep the logits finite in {scaled.dtype}, got beta={beta:g} on logits up to {largest:.6g} "
            "in magnitude; use a smaller beta"
        )
    return scaled


def zero_diagonal(x):
    """``x`` with its diagonal set to exactly 0 (shape [..., n, n])."""
    xp = namespace(x)
    n = int(x.shape[-1])
    eye = xp.eye(n, dtype=xp.bool, device=array_api_compat.device(x))
    return xp.where(eye, xp.zeros_like(x), x)
