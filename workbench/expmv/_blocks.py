r"""Blocks of columns, the operand every ``expmv`` method works on: the shape contract and one fused update.

A method receives :math:`B` as a vector ``[n]`` or a block ``[n, k]``, works on the block, and hands the
result back in the shape it came in (:func:`as_block`, :func:`finish`).  Its series and recurrences
take products :math:`AX` they may overwrite (:func:`fresh_product`) and accumulate
:math:`y \leftarrow y + a x` over the whole block, once per term (:func:`axpy`), in the array library of
the block (numpy or torch, any device).  The unit roundoff that sets each method's floor is
:func:`workbench.backend.unit_roundoff`.

These are package-internal helpers (not exported).
"""

from __future__ import annotations

import math

import array_api_compat
import numpy as np
import scipy.linalg.blas

from workbench.backend import namespace
from workbench.expmv._linear import LinearMap, as_operand, result_dtype
from workbench.validation import check_matching

__all__ = []

#: The most block products of A one call of a method may plan; past it a ValueError says what to change
#: (before any product is formed).  At 10⁷ a sparse operator with 10⁶ nonzeros costs hours; the catalogue's
#: largest cases plan under 10⁴.
MAX_PRODUCTS = 10**7


def as_block(op: LinearMap, b, name: str = "B", op_name: str = "A"):
    """``b`` as a 2-D block ``[n, k]`` and whether it came as a vector.

    ``b`` must be finite and numeric, in the array library products with ``op`` live in (refusals name
    the two parameters ``op_name`` and ``name``).  The block is cast to the dtype of the result
    (:func:`~workbench.expmv._linear.result_dtype`): complex when :math:`A` is, double precision when
    either side is.
    """
    b = as_operand(name, b, keep_integers=True)
    if b.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape [n] or [n, k], got shape {tuple(b.shape)}")
    check_matching(f"{op_name} columns", op.n, f"{name} rows", b.shape[0])
    op.check_operand(b, op_name, name)
    vector = b.ndim == 1
    b = promote_block(op, b)
    return (namespace(b).reshape(b, (b.shape[0], 1)) if vector else b), vector


def promote_block(op: LinearMap, b):
    """``b`` in the dtype of :math:`e^{tA}B` (a no-op when it already has it)."""
    dtype = result_dtype(op, b)
    return b if b.dtype == dtype else namespace(b).astype(b, dtype)


def split_complex(xp, b):
    r"""The real block :math:`[\operatorname{Re} B,\ \operatorname{Im} B]` (``[n, 2k]``) of a complex block.

    For real :math:`A`, :math:`e^{tA}B = e^{tA}\operatorname{Re}B + i\,e^{tA}\operatorname{Im}B`: the methods
    that need a real operator (Chebyshev, uniformization) then run unchanged on twice the columns.
    """
    return xp.concat([xp.real(b), xp.imag(b)], axis=1)


def join_complex(xp, y, k: int):
    """The complex block :math:`Y_{:, :k} + iY_{:, k:}` from a split result (see :func:`split_complex`)."""
    return y[..., :k] + 1j * y[..., k:]


def fresh_product(xp, op: LinearMap, x, dtype):
    """:math:`AX` as an array the caller may update in place, in ``dtype``."""
    y = op._matmat(x)
    if y is x:  # an operator may hand back its input; the callers update the product in place
        y = xp.asarray(y, copy=True)
    return y if y.dtype == dtype else xp.astype(y, dtype)


def axpy(y, a: float, x):
    r""":math:`y \leftarrow y + a x` in place, in one pass where the library has a fused kernel.

    torch has ``add_(x, alpha=a)``; for contiguous numpy float blocks BLAS ``axpy`` does it (the Array API
    has no ``out=``, and ``y += a * x`` costs a temporary and a second pass over the block).
    """
    if array_api_compat.is_torch_array(y):
        return y.add_(x, alpha=a)
    if (
        isinstance(y, np.ndarray)
        and y.dtype in (np.float64, np.float32)
        and x.dtype == y.dtype
        and y.flags.c_contiguous
        and x.flags.c_contiguous
        and y.flags.writeable
    ):
        scipy.linalg.blas.get_blas_funcs("axpy", (y,))(x.reshape(-1), y.reshape(-1), a=a)  # writes into y
        return y
    y += a * x
    return y


def finish(xp, result, vector):
    """The block ``result`` back in the caller's shape: a vector ``[n]`` if :func:`as_block` got one."""
    return xp.reshape(result, (result.shape[0],)) if vector else result


def scale_by_power_of_two(w, exponent: int):
    """:math:`2^E W`, in two exact halves when :math:`2^E` alone is outside the floating range.

    Exact for any block whose scaled entries stay normal: each factor is a power of two within the range.
    """
    half = exponent // 2
    return (w * math.ldexp(1.0, half)) * math.ldexp(1.0, exponent - half)
