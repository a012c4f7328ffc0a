"""Constants and small helpers shared by the attention derivations (symbols, host gaps, sampled contexts)."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.backend import namespace, to_backend, to_numpy

__all__ = [
    "SPREAD",
    "SQRT2",
    "N",
    "canonical",
    "context",
    "gap",
    "max_abs",
    "rownorm",
    "score_symbols",
    "symmetric_symbols",
    "transpose",
]

N = 3  # tokens in the symbolic derivations of the split and the family
SQRT2 = math.sqrt(2.0)
# Token spread for the ε_rev checks: logits of order 1/4 keep π spread over the tokens.  Peaked logits make π
# sit on one self-attending token, whose symmetric self-loop then dominates the flux and drives ε_rev of a free
# link towards 0 (at spread 1 and n = 16, ε_rev(DMTN) fell to 7e-4 in 2000 draws; at 0.5 and n = 24 its minimum
# was 0.12).
SPREAD = 0.5


def max_abs(x) -> float:
    return float(np.max(np.abs(to_numpy(x))))


def gap(a, b) -> float:
    """The largest entry of |a − b|, on the host."""
    return float(np.max(np.abs(to_numpy(a) - to_numpy(b))))


def transpose(x):
    return namespace(x).matrix_transpose(x)


def score_symbols():
    """A generic 3×3 score matrix w_ij = q_i·k_j (no symmetry assumed: biases are included)."""
    return sp.Matrix(N, N, lambda i, j: sp.Symbol(f"w{i}{j}", real=True))


def symmetric_symbols(prefix):
    return sp.Matrix(N, N, lambda i, j: sp.Symbol(f"{prefix}{min(i, j)}{max(i, j)}", real=True))


def canonical(expr):
    """A normal form for rational functions of exponentials: exp(a + b) is split into exp(a)exp(b), then cancelled."""
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(canonical)
    return sp.cancel(sp.expand(expr))


def rownorm(kernel: sp.Matrix) -> sp.Matrix:
    sums = [sum(kernel[i, j] for j in range(kernel.cols)) for i in range(kernel.rows)]
    return sp.Matrix(kernel.rows, kernel.cols, lambda i, j: kernel[i, j] / sums[i])


def context(rng, n, D, backend, spread=1.0):
    return to_backend(spread * rng.standard_normal((n, D)), backend)
