r"""Primitives of the log lens: boundary checks of maps and stacks, the tolerance, the commutator.

Package-internal helpers (no ``__all__`` entry): every public function of :mod:`workbench.lens` reads its
matrices through :func:`as_matrix` / :func:`as_stack` (finite, real, square; float64 numpy copies, torch
tensors detached and moved to the host) and its tolerance through :func:`check_tol`.

References
----------
Lie-Exponential Roadmap, "Log lens", "Log-Lens Diagnostics" [SEED].
"""

from __future__ import annotations

import numpy as np

from workbench.backend import to_numpy
from workbench.validation import as_array, check_in_range, check_matching, check_square

__all__ = []  # package-internal helpers only

#: Default structural tolerance (relative, max-norm): symmetry, orthogonality, eigenvalues at -1 or 0.
DEFAULT_TOL = 1e-10


def as_matrix(name: str, W) -> np.ndarray:
    """Return one finite real square matrix as a private float64 numpy array."""
    if isinstance(W, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got {type(W).__name__}")
    W = as_array(name, W)
    check_square(name, W)
    if len(W.shape) != 2:
        raise ValueError(f"{name} must be a single square matrix (2-dimensional), got shape {tuple(W.shape)}")
    return np.array(to_numpy(W), dtype=np.float64)


def as_stack(name: str, generators) -> np.ndarray:
    """Return a list or stack of equal-size square matrices as a float64 array ``shape=[L, d, d]``."""
    if isinstance(generators, (list, tuple)):
        if not generators:
            raise ValueError(f"{name} must hold at least one matrix, got 0")
        mats = [as_matrix(f"{name}[{i}]", g) for i, g in enumerate(generators)]
        for i, m in enumerate(mats[1:], start=1):
            check_matching(f"{name}[0]", mats[0].shape[0], f"{name}[{i}]", m.shape[0])
        return np.stack(mats)
    arr = as_array(name, generators, ndim=3)
    check_square(name, arr)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one matrix, got 0")
    return np.array(to_numpy(arr), dtype=np.float64)


def check_tol(tol) -> float:
    return check_in_range("tol", tol, 0.0, low_inclusive=False)


def binary_scale(x: np.ndarray, axis=None) -> np.ndarray:
    r"""The power of two :math:`2^e \le \max|x| < 2^{e+1}` over ``axis`` (1 where ``x`` is zero or empty).

    Dividing by it is exact in binary floating point, so a scale-free quantity (a ratio of norms, a
    relative gap) computed on ``x / binary_scale(x)`` is unchanged bit for bit, and a homogeneous one (a
    norm, a commutator) is recovered by multiplying back: no square of a huge entry overflows on the way.
    """
    if x.size == 0:
        return np.ones(np.sum(x, axis=axis, keepdims=axis is not None).shape)
    largest = np.max(np.abs(x), axis=axis, keepdims=axis is not None)
    _, exponent = np.frexp(np.where(largest > 0, largest, 1.0))
    return np.ldexp(1.0, exponent - 1)


def commutator(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The commutator :math:`[a, b] = ab - ba`."""
    return a @ b - b @ a
