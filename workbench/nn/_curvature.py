r"""Discrete curvature and holonomy of a connection on a sequence.

curvature  -- F_i = log(e^{A_{i+1}} e^{A_i} e^{-A_{i+1}} e^{-A_i}), by the principal log or a truncated series
holonomy   -- H = R_{b<-a} C^{-1}: a segment's path-ordered transport against a second transport (or reversed order)

Conventions: those of :mod:`workbench.nn._transport` (edge :math:`\ell` carries :math:`e^{A_\ell}`, prefix
transports :math:`T_j = e^{A_{j-1}}\cdots e^{A_0}`, column vectors, position-major Kronecker lift).

References
----------
Lie-Exponential Roadmap, sections "curvature", "holonomy memory" [SEED].
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from workbench.lens import principal_log
from workbench.lie import commutator_log
from workbench.nn._frames import (
    check_degree,
    check_matrices,
    check_same_dtype,
    evaluate_series,
    expm,
    solve,
)
from workbench.nn._primitives import check_finite_result
from workbench.validation import check_integer

__all__ = ["curvature", "holonomy"]


@functools.cache
def _commutator_series(degree: int):
    return commutator_log(degree)


def _principal_logs(matrices: torch.Tensor, what: str) -> torch.Tensor:
    """:func:`workbench.lens.principal_log` (``kind="auto"``) of each matrix of a stack, on the host.

    No gradient.  A matrix without a real principal logarithm raises ``ValueError`` naming its index and the
    log lens's reason, so this module and the log lens agree on when a logarithm exists.
    """
    flat = matrices.detach().reshape(-1, *matrices.shape[-2:])
    out = np.empty(tuple(flat.shape), dtype=np.float64)
    for index, m in enumerate(flat):
        try:
            out[index] = principal_log(m, "auto")
        except ValueError as error:
            where = tuple(int(i) for i in np.unravel_index(index, tuple(matrices.shape[:-2])))
            raise ValueError(
                f"{what} {where} has no real principal logarithm ({error}); use a truncated series (degree=N) "
                "or smaller generators"
            ) from error
    return torch.from_numpy(out.reshape(tuple(matrices.shape))).to(dtype=matrices.dtype, device=matrices.device)


def curvature(generators: torch.Tensor, degree: int | None = None) -> torch.Tensor:
    r"""Discrete curvature of consecutive edges, :math:`F_i = \log(e^{A_{i+1}} e^{A_i} e^{-A_{i+1}} e^{-A_i})`.

    .. math::

        F_i = \log\big(e^{A_{i+1}} e^{A_i} e^{-A_{i+1}} e^{-A_i}\big)
        = [A_{i+1}, A_i] + \tfrac12[A_{i+1},[A_{i+1},A_i]] - \tfrac12[[A_{i+1},A_i],A_i] + \dots,

    the logarithm of the group commutator of the two edge transports: zero when they commute ("flat wire"),
    :math:`[A_{i+1}, A_i] + O(\varepsilon^3)` for generators of size :math:`\varepsilon`.

    ``degree=None`` takes the real principal logarithm on the host with the log lens's
    :func:`workbench.lens.principal_log` (``kind="auto"``: the Mercator/Padé quadrature near the
    identity, where these group commutators live, ``logm`` elsewhere; no gradient; a ``ValueError`` naming the
    edge when no real principal logarithm exists, e.g. an eigenvalue on the closed negative real axis).
    ``degree=N`` evaluates the group-commutator series :func:`workbench.lie.commutator_log` through degree :math:`N` on
    :math:`(A, B) = (A_{i+1}, A_i)` in torch (differentiable, batched), error :math:`O(\varepsilon^{N+1})`.

    On a chain every connection is pure gauge (:math:`e^{A_\ell} = T_{\ell+1} T_\ell^{-1}`), so :math:`F_i` is not a
    gauge-invariant curvature: it measures the non-commutativity of consecutive edge moves read in one fixed
    frame (the curvature of the constant 2-D connection :math:`A_i\,dx + A_{i+1}\,dy` on a unit plaquette).  It is
    covariant, not invariant, under a constant gauge :math:`S_\ell = S`: :math:`F_i \mapsto S F_i S^{-1}` (its
    spectrum is invariant, and so is :math:`\lVert F_i\rVert_F` for an orthogonal :math:`S`).

    Parameters
    ----------
    generators : torch.Tensor, shape=[..., m, d, d]
        :math:`m \ge 2` edge generators.
    degree : int, optional
        Series degree :math:`N \in [1, 10]`; ``None`` for the principal logarithm.

    Returns
    -------
    torch.Tensor, shape=[..., m - 1, d, d]
        :math:`F_0, \dots, F_{m-2}`.

    References
    ----------
    Lie-Exponential Roadmap, "define discrete curvature on a 2-step loop", summary
    ":math:`F_i=\log(\exp(A_{i+1})\exp(A_i)\exp(-A_{i+1})\exp(-A_i))\approx[A_{i+1},A_i]`" [SEED];
    the BCH correction terms from the Lie engine and the gauge remark [RECON].

    Examples
    --------
    >>> import torch
    >>> A = 0.01 * torch.randn(3, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    >>> F = curvature(A)  # principal logarithm (host)
    >>> leading = A[1:] @ A[:-1] - A[:-1] @ A[1:]
    >>> err2 = float((F - leading).norm())  # O(ε³) against ‖[A_{i+1}, A_i]‖ = O(ε²)
    >>> err4 = float((F - curvature(A, degree=4)).norm())  # O(ε⁵)
    >>> err2 < 0.05 * float(leading.norm()) and err4 < 1e-3 * err2
    True
    """
    a = check_matrices("generators", generators)
    if a.shape[-3] < 2:
        raise ValueError(
            f"generators must hold at least two edges (shape [..., m, d, d], m >= 2), got shape {tuple(a.shape)}"
        )
    later, earlier = a[..., 1:, :, :], a[..., :-1, :, :]
    if degree is not None:
        series = _commutator_series(check_degree(degree))
        what = f"the group-commutator series (degree {series.degree})"
        return evaluate_series(series, (later, earlier), what, generators=a)
    e_later, e_earlier = expm(later), expm(earlier)
    group = e_later @ e_earlier @ expm(-later) @ expm(-earlier)
    return _principal_logs(group, "the group commutator at edge")


# --- holonomy ----------------------------------------------------------------------------------------------


def holonomy(generators: torch.Tensor, start: int, stop: int, second: torch.Tensor | None = None) -> torch.Tensor:
    r"""Holonomy of the segment :math:`[a, b]`: along the path, then back along a second transport from a to b.

    .. math::

        H_{[a,b]} = R_{b\leftarrow a}\, C_{b\leftarrow a}^{-1},\qquad
        R_{b\leftarrow a} = e^{A_{b-1}} \cdots e^{A_{a+1}} e^{A_a}\ \text{(path-ordered)},

    the loop based at :math:`b` that returns to :math:`a` along :math:`C^{-1}` and comes back along the path.

    * ``second`` given: :math:`C_{b\leftarrow a}` is another transport from :math:`a` to :math:`b`, e.g. a
      cached coarse-scale transport of a multiscale model.  If :math:`C` transforms like an edge
      (:math:`C \mapsto S_b C S_a^{-1}`), :math:`H \mapsto S_b H S_b^{-1}`: its spectrum is gauge-invariant.
      A flat (pure-gauge) pair, :math:`C = R_{b\leftarrow a}`, gives :math:`H = I`.
    * ``second=None``: :math:`C = e^{A_a} e^{A_{a+1}} \cdots e^{A_{b-1}}`, the same moves in the opposite order
      (frame-dependent, like :func:`curvature`).  Then :math:`H_{[a,a+2]} = e^{F_a}` and
      :math:`H = I` whenever the edge generators of the segment commute.

    Parameters
    ----------
    generators : torch.Tensor, shape=[..., m, d, d]
    start, stop : int
        :math:`0 \le a < b \le m` (positions; the segment uses edges :math:`a, \dots, b-1`).
    second : torch.Tensor, shape=[..., d, d], optional
        Invertible :math:`C_{b\leftarrow a}`.

    Returns
    -------
    torch.Tensor, shape=[..., d, d]

    References
    ----------
    Lie-Exponential Roadmap, "holonomy memory: over long spans, the loop transport around a segment stores
    a persistent group element"; holonomy probes :math:`T_jT_i^{-1}` [SEED]; the precise loop (two
    discretisations of the segment) [RECON].

    Examples
    --------
    >>> import torch
    >>> A = 0.2 * torch.randn(4, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(10))
    >>> H = holonomy(A, 1, 3)
    >>> bool(torch.allclose(H, torch.linalg.matrix_exp(curvature(A)[1]), atol=1e-12))
    True
    >>> X = torch.diag(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    >>> flat = torch.stack([c * X for c in (0.1, -0.3, 0.2, 0.4)])  # commuting edges
    >>> bool(torch.allclose(holonomy(flat, 0, 4), torch.eye(3, dtype=torch.float64), atol=1e-14))
    True
    """
    a = check_matrices("generators", generators)
    m, d = a.shape[-3], a.shape[-1]
    if m == 0:
        raise ValueError(
            f"generators must hold at least one edge generator (shape [..., m, d, d]), got shape {tuple(a.shape)}"
        )
    start = check_integer("start", start, 0, m - 1)
    stop = check_integer("stop", stop, start + 1, m)
    steps = expm(a[..., start:stop, :, :])
    path = steps[..., 0, :, :]
    for k in range(1, stop - start):
        path = steps[..., k, :, :] @ path  # later edges on the left
    if second is None:
        other = steps[..., 0, :, :]
        for k in range(1, stop - start):
            other = other @ steps[..., k, :, :]  # the same moves, reversed order
    else:
        other = check_matrices("second", second, 2)
        if other.shape[-1] != d:
            raise ValueError(f"second must be {d} x {d} to match generators, got shape {tuple(other.shape)}")
        check_same_dtype("second", other, "generators", a)
        try:
            batch = torch.broadcast_shapes(other.shape[:-2], path.shape[:-2])
        except RuntimeError:
            raise ValueError(
                f"second must have a batch shape broadcasting with generators.shape[:-3] = {tuple(path.shape[:-2])}, "
                f"got shape {tuple(other.shape)}"
            ) from None
        other, path = other.expand(*batch, d, d), path.expand(*batch, d, d)
    loop = solve("second", other, path, left=False)
    # e^A of entries near the float range overflows: refused naming the inputs rather than returned as inf/nan.
    inputs = {"generators": a} if second is None else {"generators": a, "second": other}
    return check_finite_result("the holonomy", loop, **inputs)
