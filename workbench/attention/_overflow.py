r"""Primitives for finite inputs whose results leave the double range: binary rescaling and the overflow refusal.

Package-internal helpers (no ``__all__`` entry).  Two tools, one for each kind of result:

* a scale-invariant result (a ratio of norms, a cosine, a relative deviation) or one that is homogeneous in
  its input (a distance, a norm) is computed on :math:`x / 2^e` with :math:`2^e \le \max|x| < 2^{e+1}`
  (:func:`binary_scale`): dividing by a power of two is exact in binary floating point, so the answer is
  unchanged bit for bit wherever nothing overflowed, and finite where only an intermediate square would
  have overflowed;
* a result that is itself out of range (a product of two inputs of size :math:`10^{300}`) is computed with
  the overflow warnings off and then checked once (:func:`check_overflow`): a ``ValueError`` that names the
  inputs, with their sizes, instead of a silent infinity.

References
----------
N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, §2.1 (scaling by powers of
the base is exact) and §27.5 (avoiding overflow in norms by scaling).
"""

from __future__ import annotations

import numpy as np

from workbench.backend import namespace

__all__ = []  # package-internal helpers only


def overflow_ignored():
    """A context in which numpy's overflow and invalid-operation warnings are off (the result is checked after)."""
    return np.errstate(over="ignore", invalid="ignore")


def binary_scale(x, axis=None):
    r"""The power of two :math:`2^e \le \max|x| < 2^{e+1}` (1 for a zero or empty ``x``), over ``axis``.

    With ``axis`` the scale has the input's rank (reduced axes kept as size 1), so ``x / binary_scale(x, axis)``
    broadcasts.  The result is in the library and dtype of ``x``.
    """
    xp = namespace(x)
    if not int(np.prod(x.shape)):
        return xp.ones_like(xp.sum(x, axis=axis, keepdims=True)) if axis is not None else xp.ones_like(xp.sum(x))
    largest = xp.max(xp.abs(x), axis=axis, keepdims=axis is not None)
    largest = xp.where(largest > 0, largest, xp.ones_like(largest))
    return xp.pow(xp.full_like(largest, 2.0), xp.floor(xp.log2(largest)))


def _largest(x) -> str:
    xp = namespace(x)
    if not int(np.prod(x.shape)):
        return "empty"
    return f"{float(xp.max(xp.abs(x))):.3g}"


def describe_inputs(inputs: dict) -> tuple[str, str]:
    """``("X and W_Q", "max |X| = 1e+300, max |W_Q| = 0.5")`` for the named input arrays."""
    names = list(inputs)
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    sizes = ", ".join(f"max |{name}| = {_largest(value)}" for name, value in inputs.items())
    return joined, sizes


def check_overflow(what: str, result, inputs: dict):
    """Return ``result`` (an array or a tuple of arrays) if finite, else a ``ValueError`` naming ``inputs``.

    The inputs were validated finite, so a non-finite result means their sizes pushed it out of the dtype's
    range; the message says which result, names every input and gives its largest magnitude.
    """
    arrays = result if isinstance(result, tuple) else (result,)
    for value in arrays:
        xp = namespace(value)
        if not bool(xp.all(xp.isfinite(value))):
            names, sizes = describe_inputs(inputs)
            raise ValueError(f"{what} overflow {value.dtype} for the given {names} ({sizes}); use smaller {names}")
    return result
