"""Helpers shared by the derivation modules.

``by_scale``, ``as_float`` and ``relative_error`` are the public helpers every identity author gets from
:mod:`workbench.catalogue`; they are named here too, for the modules' imports.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from workbench.catalogue import as_float, by_scale, relative_error

__all__ = ["EPS", "as_float", "by_scale", "exp_series_coefficient", "relative_error", "sandwich_coefficient"]

EPS = float(np.finfo(np.float64).eps)


def exp_series_coefficient(a: sp.Matrix, k: int) -> sp.Matrix:
    """Return the coefficient of tᵏ in e^{tA}, that is Aᵏ/k!."""
    return a**k / sp.factorial(k)


def sandwich_coefficient(left: sp.Matrix, middle: sp.Matrix, right: sp.Matrix, k: int) -> sp.Matrix:
    """Return the coefficient of tᵏ in e^{t·left} · middle · e^{t·right} (Cauchy product)."""
    total = sp.zeros(middle.rows, middle.cols)
    for j in range(k + 1):
        total += exp_series_coefficient(left, j) * middle * exp_series_coefficient(right, k - j)
    return total.applyfunc(sp.expand)
