"""Closed-form exponentials of structured matrices."""

from __future__ import annotations

import math

import array_api_compat
import numpy as np

from workbench.backend import namespace
from workbench.validation import as_array, check_in_range, check_matching

__all__ = ["expm_rank1", "expmv_rank1", "phi1"]


def phi1(z):
    r"""Evaluate the entire function :math:`\varphi_1(z) = (e^z - 1)/z`, with :math:`\varphi_1(0) = 1`.

    Evaluated as ``expm1(z) / z``, which keeps full relative accuracy as :math:`z \to 0` (the naive
    ``(exp(z) - 1) / z`` loses all digits below :math:`|z| \approx 10^{-16}`).

    Parameters
    ----------
    z : array
        Real arguments.

    Returns
    -------
    array
        Same shape as ``z``.

    Raises
    ------
    ValueError
        If :math:`\varphi_1(z)` overflows (``z`` above about 709 in float64).

    Examples
    --------
    >>> import numpy as np
    >>> bool(np.allclose(phi1(np.array([0.0, 1e-20, 1.0])), [1.0, 1.0, np.e - 1], rtol=2.0**-52, atol=0))
    True
    """
    z = as_array("z", z)
    xp = namespace(z)
    # e^z overflows past log(largest float): 709.78 in float64, 88.72 in float32.
    limit = math.log(float(xp.finfo(z.dtype).max))
    if math.prod(z.shape) and float(xp.max(z)) > limit:
        raise ValueError(
            f"phi1 overflows for z = {float(xp.max(z)):.6g}; arguments must be at most {limit:.2f} in {z.dtype}"
        )
    zero = z == 0
    safe = xp.where(zero, xp.ones_like(z), z)
    return xp.where(zero, xp.ones_like(z), xp.expm1(safe) / safe)


def _rank1_inputs(u, v, t):
    u = as_array("u", u, ndim=1)
    v = as_array("v", v, ndim=1)
    xp = namespace(u=u, v=v)
    check_matching("u", u.shape[0], "v", v.shape[0])
    t = check_in_range("t", t)
    return xp, u, v, t


def _exponent(xp, t, u, v):
    r""":math:`z = t\,v^\top u`, refused when it is not a finite number (huge ``t``, ``u`` or ``v``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        z = t * xp.sum(u * v)
    limit = math.log(float(xp.finfo(z.dtype).max))  # φ₁(z) overflows past it
    if not (math.isfinite(float(z)) and float(z) <= limit):
        raise ValueError(
            f"t·vᵀu must be at most {limit:.2f} in {z.dtype}, got {float(z):.6g} (t = {t:g}); e^(t uvᵀ) is beyond "
            "the floating range: shorten t or rescale u or v"
        )
    return z


def expm_rank1(u, v, t=1.0):
    r"""Exponential of a rank-one matrix, :math:`e^{t\,uv^\top} = I + t\,\varphi_1(t\,v^\top u)\,uv^\top`.

    Since :math:`(uv^\top)^k = (v^\top u)^{k-1} uv^\top`, the exponential series collapses to
    one scalar function :math:`\varphi_1(z) = (e^z-1)/z`.  The case :math:`v^\top u = 0` (nilpotent
    :math:`uv^\top`) is included: :math:`e^{t\,uv^\top} = I + t\,uv^\top`.

    Parameters
    ----------
    u, v : array, shape=[n]
    t : float
        Real time.

    Returns
    -------
    array, shape=[n, n]

    References
    ----------
    Lie-Exponential Roadmap, "rank-1 exponentials".

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import expm
    >>> u, v = np.array([1.0, 2.0]), np.array([0.5, -0.1])
    >>> bool(np.allclose(expm_rank1(u, v), expm(np.outer(u, v)), rtol=1e-14, atol=0))
    True
    """
    xp, u, v, t = _rank1_inputs(u, v, t)
    z = _exponent(xp, t, u, v)
    n = u.shape[0]
    eye = xp.eye(n, dtype=u.dtype, device=array_api_compat.device(u))
    return eye + (t * phi1(z)) * (u[:, None] * v[None, :])


def expmv_rank1(u, v, b, t=1.0):
    r"""Apply :math:`e^{t\,uv^\top} B = B + t\,\varphi_1(t\,v^\top u)\,u\,(v^\top B)` without forming the matrix.

    Costs :math:`O(nk)` for :math:`B \in \mathbb R^{n\times k}`, against :math:`O(n^3)` for a dense
    exponential.

    Parameters
    ----------
    u, v : array, shape=[n]
    b : array, shape=[n] or [n, k]
    t : float

    Returns
    -------
    array
        Same shape as ``b``.

    Examples
    --------
    >>> import numpy as np
    >>> u, v, b = np.array([1.0, 2.0]), np.array([0.5, -0.1]), np.array([1.0, 1.0])
    >>> bool(np.allclose(expmv_rank1(u, v, b), expm_rank1(u, v) @ b, rtol=1e-15))
    True
    """
    xp, u, v, t = _rank1_inputs(u, v, t)
    b = as_array("b", b)
    namespace(u=u, b=b)
    if b.ndim not in (1, 2):
        raise ValueError(f"b must have shape [n] or [n, k], got shape {tuple(b.shape)}")
    check_matching("u", u.shape[0], "b rows", b.shape[0])
    z = _exponent(xp, t, u, v)
    coefficient = t * phi1(z)
    if b.ndim == 1:
        return b + coefficient * xp.sum(v * b) * u
    return b + coefficient * (u[:, None] * (v[None, :] @ b))
