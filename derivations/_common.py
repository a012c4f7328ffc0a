"""Helpers shared by the derivation modules (not part of the workbench API)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from workbench.backend import to_numpy
from workbench.catalogue import SCALES
from workbench.validation import check_choice

EPS = float(np.finfo(np.float64).eps)


def by_scale(scale: str, small, large):
    """Return the problem size for ``scale``."""
    check_choice("scale", scale, SCALES)
    return small if scale == "small" else large


def as_float(x) -> float:
    """Return a backend scalar (numpy or 0-d torch) as a Python float."""
    return float(to_numpy(x))


def relative_error(approx, exact) -> float:
    """Return the Frobenius ‖approx − exact‖ / ‖exact‖, computed on the host."""
    a, e = to_numpy(approx), to_numpy(exact)
    return float(np.linalg.norm(a - e) / np.linalg.norm(e))


def exp_series_coefficient(a: sp.Matrix, k: int) -> sp.Matrix:
    """Return the coefficient of tᵏ in e^{tA}, that is Aᵏ/k!."""
    return a**k / sp.factorial(k)


def sandwich_coefficient(left: sp.Matrix, middle: sp.Matrix, right: sp.Matrix, k: int) -> sp.Matrix:
    """Return the coefficient of tᵏ in e^{t·left} · middle · e^{t·right} (Cauchy product)."""
    total = sp.zeros(middle.rows, middle.cols)
    for j in range(k + 1):
        total += exp_series_coefficient(left, j) * middle * exp_series_coefficient(right, k - j)
    return total.applyfunc(sp.expand)
