r"""Primitives of the gauge transport: checks of tensors, stacks and frames, and moves between frames.

Package-internal helpers (no ``__all__`` entry) of :mod:`workbench.nn._transport`,
:mod:`workbench.nn._double_exponential`, :mod:`workbench.nn._twist` and :mod:`workbench.nn._curvature`.
Conventions: those of :mod:`workbench.nn._transport` (edge :math:`\ell` carries :math:`e^{A_\ell}`, prefix
transports :math:`T_j = e^{A_{j-1}}\cdots e^{A_0}`, column vectors, position-major Kronecker lift).

References
----------
Lie-Exponential Roadmap, sections "gauge transformer", "double exponential" [SEED].
"""

from __future__ import annotations

import torch

from workbench.validation import check_finite, check_integer

__all__ = []  # package-internal helpers only

#: The most BCH / commutator-log degree accepted (the engine is exact at any degree; this bounds the cost).
MAX_DEGREE = 10


def check_tensor(name: str, x, min_ndim: int) -> torch.Tensor:
    """Return ``x`` after checking it is a finite real floating torch tensor with ``ndim >= min_ndim``."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.is_complex() or not x.is_floating_point():
        raise TypeError(f"{name} must be a real floating tensor, got dtype {x.dtype}")
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {tuple(x.shape)}")
    check_finite(name, x.detach())
    return x


def check_matrices(name: str, x, min_ndim: int = 3) -> torch.Tensor:
    """A stack of square matrices ``shape=[..., m, d, d]``."""
    x = check_tensor(name, x, min_ndim)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} must hold square matrices (shape [..., d, d]), got shape {tuple(x.shape)}")
    return x


def check_transports(transports) -> torch.Tensor:
    return check_matrices("transports", transports, 3)


def check_same_dtype(name: str, x: torch.Tensor, reference_name: str, reference: torch.Tensor) -> None:
    """``x`` must have the floating dtype of ``reference`` (torch does not promote inside matmul and solve)."""
    if x.dtype != reference.dtype:
        raise TypeError(
            f"{name} must have the dtype of {reference_name} ({reference.dtype}), got {x.dtype}; cast one of them"
        )


def check_same_frames(name: str, x: torch.Tensor, transports: torch.Tensor, reference: str = "transports") -> None:
    """``x`` of shape [..., n, d] must match transports [..., n, d, d] in n, d and dtype."""
    n, d = transports.shape[-3], transports.shape[-1]
    if tuple(x.shape[-2:]) != (n, d):
        raise ValueError(
            f"{name} must have shape [..., {n}, {d}] to match {reference} {tuple(transports.shape)}, "
            f"got shape {tuple(x.shape)}"
        )
    check_same_dtype(name, x, reference, transports)


def expm(x: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.matrix_exp`` on a contiguous copy (it rejects some strided views of batched slices)."""
    return torch.linalg.matrix_exp(x.contiguous())


def evaluate_series(series, matrices, what: str, **inputs: torch.Tensor) -> torch.Tensor:
    """``series.evaluate(*matrices)`` (a :mod:`workbench.lie` series), its overflow refusal naming ``inputs``.

    The callers have already checked the shapes and finiteness of ``matrices``, so the one ``ValueError`` left is
    the series' own refusal of a non-finite sum (entries near the top of the float range: a degree-k bracket
    grows like the k-th power of the entries).  It names the series' positional ``matrices[i]``; it is re-raised
    naming the caller's parameters ``inputs`` with their largest ``|entry|``, the original chained as the cause.
    """
    try:
        # No convergence warning: the callers are the asymptotic gauge/BCH tools, whose error is what they measure
        # (and exact cases such as a Heisenberg pair are outside any norm bound but terminate).
        return series.evaluate(*matrices, check_convergence=False)
    except ValueError as exc:
        dtype = str(matrices[0].dtype).rsplit(".", 1)[-1]
        shown = ", ".join(f"{name} (max |entry| {float(x.detach().abs().max()):.3g})" for name, x in inputs.items())
        raise ValueError(f"{what} overflows {dtype} for {shown}; use smaller entries") from exc


def check_degree(degree) -> int:
    return check_integer("degree", degree, 1, MAX_DEGREE)


def solve(name: str, matrices: torch.Tensor, rhs: torch.Tensor, *, left: bool = True) -> torch.Tensor:
    """``torch.linalg.solve`` whose singular-matrix error names the argument that must be invertible."""
    try:
        return torch.linalg.solve(matrices, rhs, left=left)
    except torch.linalg.LinAlgError as error:
        raise ValueError(f"{name} must be invertible, got a singular matrix ({error})") from error


def to_frame0(transports: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
    """:math:`T_j^{-1} x_j`, the vectors carried back to the shared frame (one batched solve)."""
    return solve("transports", transports, vectors.unsqueeze(-1)).squeeze(-1)


def from_frame0(transports: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
    """:math:`T_i z_i`, vectors in the shared frame carried out to the frame of each position."""
    return (transports @ vectors.unsqueeze(-1)).squeeze(-1)
