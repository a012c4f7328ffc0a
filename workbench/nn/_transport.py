r"""Gauge transport on a sequence: prefix transports, transports between positions, transported scores.

A connection on the chain :math:`0 \to 1 \to \dots \to n-1` is a field of generators :math:`A_\ell \in
\mathbb R^{d\times d}`, one per edge :math:`\ell \to \ell+1`.  From it this module builds the first pieces of
the Lie-Exponential Roadmap's "gauge transformer": prefix transports by an associative scan, the transport between
two positions, gauge changes, and transported compatibilities :math:`\langle q_i, R_{i\leftarrow j} k_j\rangle`
(dense and banded).  The multiscale generator and the double exponential are in :mod:`workbench.nn._double_exponential`,
the BCH twist in :mod:`workbench.nn._twist`, curvature and holonomy in :mod:`workbench.nn._curvature`; all of
them follow the conventions below.

prefix_transports          -- T_0 = I, T_j = e^{A_{j-1}} T_{j-1}, by an associative scan
transport                  -- R_{i<-j} = T_i T_j^{-1}
gauge_change               -- transports, queries, keys and values after x_j -> S_j x_j
transported_scores         -- c_ij = <q_i, T_i T_j^{-1} k_j>, all pairs
banded_transported_scores  -- c_{i,delta} at the given offsets only

Conventions (one for all gauge modules)
---------------------------------------
* Column vectors, features in the last axis: ``values`` has ``shape=[..., n, d]``, matrices act on the left.
* Edge :math:`\ell` carries the group element :math:`e^{A_\ell}`, the transport from the frame at position
  :math:`\ell` to the frame at :math:`\ell+1`.  The prefix transport is the path-ordered product, later edges on
  the left:

  .. math:: T_0 = I,\qquad T_j = e^{A_{j-1}} \cdots e^{A_1} e^{A_0} = e^{A_{j-1}}\, T_{j-1},

  the transport from the shared frame (that of position 0) to the frame of position :math:`j`.
* The transport from :math:`j` to :math:`i` is :math:`R_{i\leftarrow j} = T_i T_j^{-1}`; it composes exactly,
  :math:`R_{i\leftarrow k} R_{k\leftarrow j} = R_{i\leftarrow j}`, and :math:`R_{j+1\leftarrow j} = e^{A_j}`.
* Gauge change :math:`x_j \mapsto S_j x_j` (vectors, keys, values): :math:`T_j \mapsto S_j T_j S_0^{-1}`,
  :math:`R_{i\leftarrow j} \mapsto S_i R_{i\leftarrow j} S_j^{-1}`, queries are covectors,
  :math:`q_i \mapsto S_i^{-\top} q_i`.  Then scores are invariant and the double exponential is covariant,
  :math:`y_i \mapsto S_i y_i`.  [RECON: the roadmap's displays of the transformation law were lost.]
* Kronecker lift, position-major: :math:`\operatorname{vec}(U)_{i d + a} = U_{ia}`, so :math:`Q \otimes I_d` acts
  on ``U.reshape(..., n * d)`` and :math:`\mathcal T = \operatorname{diag}(T_0, \dots, T_{n-1})`.

The roadmap writes the double exponential as :math:`T^{-1} e^{tQ\otimes I} T V` with "transport in"
:math:`u_j = T_j v_j` and "transport out" :math:`y_i = T_i^{-1} z_i`, but its compatibilities as
:math:`\langle q_i, T_i T_j^{-1} k_j\rangle`; the two displays are gauge-covariant only for opposite meanings of
:math:`T_j` (frame :math:`j` to shared, versus shared to frame :math:`j`).  The gauge modules keep the second (the
path-ordered product above), so its double exponential reads :math:`\mathcal T e^{tQ\otimes I} \mathcal T^{-1} V`;
the roadmap's form is the same formula with its :math:`T_j` equal to our :math:`T_j^{-1}`.  [RECON]

Everything is torch (float64-friendly, batched over leading axes, differentiable except where a docstring says
"host").  References: Lie-Exponential Roadmap, sections "gauge transformer", "double exponential",
"BCH roles", "curvature", "holonomy memory".
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from workbench.nn._frames import (
    check_matrices,
    check_same_dtype,
    check_same_frames,
    check_tensor,
    check_transports,
    expm,
    from_frame0,
    solve,
    to_frame0,
)
from workbench.nn._primitives import check_offsets
from workbench.validation import check_integer

__all__ = [
    "banded_transported_scores",
    "gauge_change",
    "prefix_transports",
    "transport",
    "transported_scores",
]


# --- prefix transports -----------------------------------------------------------------------------------


def prefix_transports(generators: torch.Tensor) -> torch.Tensor:
    r"""Prefix transports :math:`T_j = e^{A_{j-1}}\cdots e^{A_0}` of a connection, by an associative scan.

    .. math::

        T_0 = I,\qquad T_j = \prod_{\ell<j}^{\longleftarrow} e^{A_\ell} = e^{A_{j-1}} \cdots e^{A_1} e^{A_0},
        \qquad j = 1, \dots, m.

    The edge exponentials are formed once (``torch.linalg.matrix_exp``, differentiable); their inclusive prefix
    products are then computed by the Hillis–Steele doubling scan: in round :math:`r` (shift :math:`s = 2^r`)
    every partial product :math:`P_k = G_k \cdots G_{k-s+1}` is replaced by :math:`P_k P_{k-s}`, so after
    :math:`\lceil \log_2 m\rceil` rounds of batched matmuls :math:`P_k = G_k \cdots G_0`.  Work
    :math:`O(m \log m\, d^3)`, depth :math:`O(\log m)`.

    Parameters
    ----------
    generators : torch.Tensor, shape=[..., m, d, d]
        :math:`A_\ell`, the generator on edge :math:`\ell \to \ell+1`, :math:`m \ge 1`.

    Returns
    -------
    torch.Tensor, shape=[..., m + 1, d, d]
        :math:`T_0 = I, T_1, \dots, T_m` (dtype and device of ``generators``).

    Raises
    ------
    ValueError
        If ``generators`` is not a finite stack of square matrices, or if ``matrix_exp`` or the prefix products
        overflow (the message names ``generators`` and the largest Frobenius norm of a generator).

    References
    ----------
    Lie-Exponential Roadmap, gauge transformer: "prefix transports: compute
    :math:`T_j=\prod_{\ell<j}\exp(A_\ell)` via group-scan" [SEED]; the product order (later edges on the left,
    so that :math:`T_j` is the path-ordered transport from position 0 to :math:`j`) [RECON].

    Examples
    --------
    >>> import torch
    >>> A = 0.3 * torch.randn(5, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    >>> T = prefix_transports(A)
    >>> T.shape
    torch.Size([6, 3, 3])
    >>> sequential = torch.linalg.matrix_exp(A[2]) @ torch.linalg.matrix_exp(A[1]) @ torch.linalg.matrix_exp(A[0])
    >>> bool(torch.allclose(T[3], sequential, rtol=0, atol=1e-13)), bool(torch.equal(T[0], torch.eye(3, dtype=A.dtype)))
    (True, True)
    """
    a = check_matrices("generators", generators)
    m, d = a.shape[-3], a.shape[-1]
    if m < 1:
        raise ValueError(
            f"generators must hold at least one edge (shape [..., m, d, d], m >= 1), got shape {tuple(a.shape)}"
        )
    prefix = expm(a)  # G_ℓ = e^{A_ℓ}
    shift = 1
    while shift < m:  # Hillis–Steele: P_k <- P_k P_{k-s} (later factors on the left), out of place for autograd
        prefix = torch.cat((prefix[..., :shift, :, :], prefix[..., shift:, :, :] @ prefix[..., :-shift, :, :]), dim=-3)
        shift *= 2
    if not bool(torch.isfinite(prefix.detach()).all()):
        norm = float(torch.linalg.matrix_norm(a.detach()).max())
        raise ValueError(
            "generators are too large: matrix_exp or the prefix products overflowed to a non-finite transport "
            f"(largest Frobenius norm of a generator {norm:.6g}); scale the generators down"
        )
    eye = torch.eye(d, dtype=a.dtype, device=a.device).expand(*a.shape[:-3], 1, d, d)
    return torch.cat((eye, prefix), dim=-3)


def transport(transports: torch.Tensor, i: int, j: int) -> torch.Tensor:
    r"""The transport :math:`R_{i\leftarrow j} = T_i T_j^{-1}` from the frame of position ``j`` to that of ``i``.

    .. math:: R_{i\leftarrow j} = T_i T_j^{-1},\qquad R_{i\leftarrow k} R_{k\leftarrow j} = R_{i\leftarrow j}.

    For :math:`i > j` it equals the path-ordered product :math:`e^{A_{i-1}}\cdots e^{A_j}`; for :math:`i < j` its
    inverse.  Computed by one solve (``X T_j = T_i``), not by an explicit inverse.

    Parameters
    ----------
    transports : torch.Tensor, shape=[..., n, d, d]
        Prefix transports (:func:`prefix_transports`).
    i, j : int
        Positions in :math:`[0, n-1]`.

    Returns
    -------
    torch.Tensor, shape=[..., d, d]

    Raises
    ------
    ValueError
        ``"transports must be invertible, ..."`` if :math:`T_j` is singular (likewise every function of this
        module that inverts transports, a gauge or ``second``).

    References
    ----------
    Lie-Exponential Roadmap, summary: ":math:`R_{i\leftarrow j}=T_iT_j^{-1}`" [SEED].

    Examples
    --------
    >>> import torch
    >>> A = 0.3 * torch.randn(4, 2, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    >>> T = prefix_transports(A)
    >>> bool(torch.allclose(transport(T, 3, 2), torch.linalg.matrix_exp(A[2]), atol=1e-13))
    True
    >>> bool(torch.allclose(transport(T, 4, 2) @ transport(T, 2, 1), transport(T, 4, 1), atol=1e-13))
    True
    """
    t = check_transports(transports)
    n = t.shape[-3]
    if n == 0:
        raise ValueError(f"transports must hold at least one frame (shape [..., n, d, d]), got shape {tuple(t.shape)}")
    i = check_integer("i", i, 0, n - 1)
    j = check_integer("j", j, 0, n - 1)
    return solve("transports", t[..., j, :, :], t[..., i, :, :], left=False)


def gauge_change(
    gauge: torch.Tensor,
    transports: torch.Tensor | None = None,
    queries: torch.Tensor | None = None,
    keys: torch.Tensor | None = None,
    values: torch.Tensor | None = None,
) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None]:
    r"""Apply the gauge change :math:`x_j \mapsto S_j x_j` to transports, queries, keys and values.

    .. math::

        T_j \mapsto S_j T_j S_0^{-1},\quad q_i \mapsto S_i^{-\top} q_i,\quad k_j \mapsto S_j k_j,\quad
        v_j \mapsto S_j v_j,

    so that :math:`R_{i\leftarrow j} \mapsto S_i R_{i\leftarrow j} S_j^{-1}` (edge elements
    :math:`e^{A_\ell} \mapsto S_{\ell+1} e^{A_\ell} S_\ell^{-1}`), the compatibilities
    :math:`\langle q_i, R_{i\leftarrow j} k_j\rangle` are invariant and the double exponential output transforms
    like a vector, :math:`y_i \mapsto S_i y_i`.  Queries are covectors (they pair with vectors), hence the
    inverse transpose; for an orthogonal gauge it is :math:`S_i` itself.

    Parameters
    ----------
    gauge : torch.Tensor, shape=[..., n, d, d]
        Invertible :math:`S_j`, one per position.
    transports : torch.Tensor, shape=[..., n, d, d], optional
    queries, keys, values : torch.Tensor, shape=[..., n, d], optional

    Returns
    -------
    tuple
        ``(transports, queries, keys, values)`` after the change (``None`` where not given).

    References
    ----------
    Lie-Exponential Roadmap, axioms: "computations must be gauge-covariant under :math:`x_j\mapsto S_j
    x_j`" [SEED]; the transformation law of :math:`T`, :math:`q`, :math:`k` [RECON].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(2)
    >>> A = 0.3 * torch.randn(3, 2, 2, dtype=torch.float64, generator=g)
    >>> T = prefix_transports(A)
    >>> q, k = torch.randn(2, 4, 2, dtype=torch.float64, generator=g)
    >>> S = torch.linalg.matrix_exp(0.5 * torch.randn(4, 2, 2, dtype=torch.float64, generator=g))
    >>> T2, q2, k2, _ = gauge_change(S, T, q, k)
    >>> bool(torch.allclose(transported_scores(q2, k2, T2), transported_scores(q, k, T), atol=1e-12))
    True
    """
    s = check_matrices("gauge", gauge)
    out: list[torch.Tensor | None] = [None, None, None, None]
    if transports is not None:
        t = check_transports(transports)
        if t.shape[-3:] != s.shape[-3:]:
            raise ValueError(f"transports must have the shape of gauge {tuple(s.shape)}, got shape {tuple(t.shape)}")
        check_same_dtype("transports", t, "gauge", s)
        out[0] = solve("gauge", s[..., :1, :, :], s @ t, left=False)  # S_j T_j S_0^{-1}
    if queries is not None:
        q = check_tensor("queries", queries, 2)
        check_same_frames("queries", q, s, "gauge")
        out[1] = solve("gauge", s.transpose(-1, -2), q.unsqueeze(-1)).squeeze(-1)  # S_i^{-T} q_i
    for slot, name, x in ((2, "keys", keys), (3, "values", values)):
        if x is not None:
            x = check_tensor(name, x, 2)
            check_same_frames(name, x, s, "gauge")
            out[slot] = from_frame0(s, x)
    return out[0], out[1], out[2], out[3]


# --- transported compatibilities ------------------------------------------------------------------------


def _pulled_and_pushed(queries, keys, transports) -> tuple[torch.Tensor, torch.Tensor]:
    t = check_transports(transports)
    q = check_tensor("queries", queries, 2)
    k = check_tensor("keys", keys, 2)
    check_same_frames("queries", q, t)
    check_same_frames("keys", k, t)
    pulled = (t.transpose(-1, -2) @ q.unsqueeze(-1)).squeeze(-1)  # T_i^T q_i, a covector in the shared frame
    pushed = to_frame0(t, k)  # T_j^{-1} k_j, a vector in the shared frame
    return pulled, pushed


def transported_scores(queries: torch.Tensor, keys: torch.Tensor, transports: torch.Tensor) -> torch.Tensor:
    r"""Dense transported compatibilities :math:`c_{ij} = \langle q_i, R_{i\leftarrow j} k_j\rangle`.

    .. math::

        c_{ij} = q_i^\top T_i T_j^{-1} k_j = (T_i^\top q_i)^\top (T_j^{-1} k_j),

    the factorised right-hand side being how it is computed: each query is pulled back and each key carried
    back to the shared frame once (:math:`O(n d^2)`), then one :math:`n\times n` product (:math:`O(n^2 d)`).
    Invariant under the gauge change of :func:`gauge_change`.  For non-orthogonal transports the rounding error
    grows with :math:`\kappa(T_j)`; for orthogonal ones the factorisation is exact to rounding.

    Parameters
    ----------
    queries, keys : torch.Tensor, shape=[..., n, d]
    transports : torch.Tensor, shape=[..., n, d, d]

    Returns
    -------
    torch.Tensor, shape=[..., n, n]

    References
    ----------
    Lie-Exponential Roadmap, "compare in a shared frame: :math:`c_{ij} = \langle q_i, R_{i\leftarrow j}
    k_j\rangle`" [SEED].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(3)
    >>> T = prefix_transports(0.3 * torch.randn(3, 2, 2, dtype=torch.float64, generator=g))
    >>> q, k = torch.randn(2, 4, 2, dtype=torch.float64, generator=g)
    >>> c = transported_scores(q, k, T)
    >>> bool(torch.isclose(c[3, 1], q[3] @ transport(T, 3, 1) @ k[1], atol=1e-13))
    True
    """
    pulled, pushed = _pulled_and_pushed(queries, keys, transports)
    return pulled @ pushed.transpose(-1, -2)


def _at_offset(rows: torch.Tensor, cols: torch.Tensor, delta: int) -> torch.Tensor:
    """The dot products of rows i and cols i + delta for every i, zero where i + delta is off the chain."""
    n = rows.shape[-2]
    if delta > 0:
        vals = (rows[..., : n - delta, :] * cols[..., delta:, :]).sum(-1)
        return torch.nn.functional.pad(vals, (0, delta))
    vals = (rows[..., -delta:, :] * cols[..., : n + delta, :]).sum(-1)
    return torch.nn.functional.pad(vals, (-delta, 0))


def banded_transported_scores(
    queries: torch.Tensor, keys: torch.Tensor, transports: torch.Tensor, offsets: Sequence[int]
) -> torch.Tensor:
    r"""Transported compatibilities at a few offsets only, :math:`c_{i,\delta} = c_{i,i+\delta}`.

    .. math::

        c_{i,\delta} = (T_i^\top q_i)^\top (T_{i+\delta}^{-1} k_{i+\delta}),\qquad \delta \in \text{offsets},

    zero where :math:`i+\delta` falls off the chain.  The prefix transports are reused across all positions and
    offsets: cost :math:`O(n d^2 + n d \cdot \#\text{offsets})` (the roadmap's bound
    :math:`O(n d^2\cdot\#\text{offsets})` for forming each :math:`R_{i\leftarrow i+\delta}` is not needed).

    Parameters
    ----------
    queries, keys : torch.Tensor, shape=[..., n, d]
    transports : torch.Tensor, shape=[..., n, d, d]
    offsets : sequence of int
        Distinct nonzero :math:`\delta` with :math:`|\delta| \le n-1`, e.g. :func:`multiscale_offsets`.

    Returns
    -------
    torch.Tensor, shape=[..., n, len(offsets)]

    References
    ----------
    Lie-Exponential Roadmap, "multiscale banded synthesis ... each term is a single transported
    dot-product at offset :math:`\delta`, computable using prefix transports reused across all positions" [SEED].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(4)
    >>> T = prefix_transports(0.3 * torch.randn(7, 2, 2, dtype=torch.float64, generator=g))
    >>> q, k = torch.randn(2, 8, 2, dtype=torch.float64, generator=g)
    >>> band = banded_transported_scores(q, k, T, (-2, 1))
    >>> dense = transported_scores(q, k, T)
    >>> bool(torch.isclose(band[5, 0], dense[5, 3], atol=1e-13)), float(band[7, 1])  # 7 + 1 is off the chain
    (True, 0.0)
    """
    pulled, pushed = _pulled_and_pushed(queries, keys, transports)
    deltas = check_offsets(offsets, n=pulled.shape[-2])
    return torch.stack([_at_offset(pulled, pushed, delta) for delta in deltas], dim=-1)
