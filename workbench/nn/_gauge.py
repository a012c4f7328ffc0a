r"""Gauge transport on a sequence: prefix transports, transported scores, the double exponential.

A connection on the chain :math:`0 \to 1 \to \dots \to n-1` is a field of generators :math:`A_\ell \in
\mathbb R^{d\times d}`, one per edge :math:`\ell \to \ell+1`.  From it this module builds the pieces of the
seed's "gauge transformer": prefix transports by an associative scan, transported compatibilities
:math:`\langle q_i, R_{i\leftarrow j} k_j\rangle`, the multiscale banded Markov generator, the double exponential
(transport in, Markov exponential, transport out), the exact conjugation identity behind it and its BCH error,
the discrete curvature :math:`F_i` and the holonomy of a segment.

Conventions (one for the whole module)
--------------------------------------
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
  :math:`y_i \mapsto S_i y_i`.  [RECON: the seed's displays of the transformation law were lost.]
* Kronecker lift, position-major: :math:`\operatorname{vec}(U)_{i d + a} = U_{ia}`, so :math:`Q \otimes I_d` acts
  on ``U.reshape(..., n * d)`` and :math:`\mathcal T = \operatorname{diag}(T_0, \dots, T_{n-1})`.

The seed writes the double exponential as :math:`T^{-1} e^{tQ\otimes I} T V` with "transport in"
:math:`u_j = T_j v_j` and "transport out" :math:`y_i = T_i^{-1} z_i`, but its compatibilities as
:math:`\langle q_i, T_i T_j^{-1} k_j\rangle`; the two displays are gauge-covariant only for opposite meanings of
:math:`T_j` (frame :math:`j` to shared, versus shared to frame :math:`j`).  This module keeps the second (the
path-ordered product above), so its double exponential reads :math:`\mathcal T e^{tQ\otimes I} \mathcal T^{-1} V`;
the seed's form is the same formula with its :math:`T_j` equal to our :math:`T_j^{-1}`.  [RECON]

Everything is torch (float64-friendly, batched over leading axes, differentiable except where a docstring says
"host").  References: lie-exponential-roadmap (seed), sections "gauge transformer", "double exponential",
"BCH roles", "curvature", "holonomy memory".
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
import torch

from workbench.lie import bch, commutator_log
from workbench.nn._exp_markov import (
    DEFAULT_MAX_TERMS,
    BandedGenerator,
    _check_offsets,
    multiscale_offsets,  # noqa: F401  (re-exported: the offsets of the banded scores)
    uniformized_action,
)
from workbench.nn._log_lens import principal_log
from workbench.validation import check_choice, check_finite, check_in_range, check_integer

__all__ = [
    "banded_transported_scores",
    "bch_conjugation_error",
    "conjugated_generator",
    "curvature",
    "double_exponential",
    "gauge_change",
    "holonomy",
    "multiscale_generator",
    "prefix_transports",
    "transport",
    "transported_scores",
    "twist_generator",
    "twisted_generator",
]

#: The most BCH / commutator-log degree accepted (the engine is exact at any degree; this bounds the cost).
MAX_DEGREE = 10


# --- validation ---------------------------------------------------------------------------------------------


def _tensor(name: str, x, min_ndim: int) -> torch.Tensor:
    """Return ``x`` after checking it is a finite real floating torch tensor with ``ndim >= min_ndim``."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch tensor, got {type(x).__name__}")
    if x.is_complex() or not x.is_floating_point():
        raise TypeError(f"{name} must be a real floating tensor, got dtype {x.dtype}")
    if x.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {tuple(x.shape)}")
    check_finite(name, x.detach())
    return x


def _matrices(name: str, x, min_ndim: int = 3) -> torch.Tensor:
    """A stack of square matrices ``shape=[..., m, d, d]``."""
    x = _tensor(name, x, min_ndim)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} must hold square matrices (shape [..., d, d]), got shape {tuple(x.shape)}")
    return x


def _transports(transports) -> torch.Tensor:
    return _matrices("transports", transports, 3)


def _same_frames(name: str, x: torch.Tensor, transports: torch.Tensor) -> None:
    """``x`` of shape [..., n, d] must match transports [..., n, d, d] in n and d."""
    n, d = transports.shape[-3], transports.shape[-1]
    if tuple(x.shape[-2:]) != (n, d):
        raise ValueError(
            f"{name} must have shape [..., {n}, {d}] to match transports {tuple(transports.shape)}, "
            f"got shape {tuple(x.shape)}"
        )


def _expm(x: torch.Tensor) -> torch.Tensor:
    """``torch.linalg.matrix_exp`` on a contiguous copy (it rejects some strided views of batched slices)."""
    return torch.linalg.matrix_exp(x.contiguous())


def _degree(degree) -> int:
    return check_integer("degree", degree, 1, MAX_DEGREE)


@functools.cache
def _bch_series(degree: int):
    return bch(degree)


@functools.cache
def _commutator_series(degree: int):
    return commutator_log(degree)


def _solve(name: str, matrices: torch.Tensor, rhs: torch.Tensor, *, left: bool = True) -> torch.Tensor:
    """``torch.linalg.solve`` whose singular-matrix error names the argument that must be invertible."""
    try:
        return torch.linalg.solve(matrices, rhs, left=left)
    except torch.linalg.LinAlgError as error:
        raise ValueError(f"{name} must be invertible, got a singular matrix ({error})") from error


def _to_frame0(transports: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
    """:math:`T_j^{-1} x_j`, the vectors carried back to the shared frame (one batched solve)."""
    return _solve("transports", transports, vectors.unsqueeze(-1)).squeeze(-1)


def _from_frame0(transports: torch.Tensor, vectors: torch.Tensor) -> torch.Tensor:
    """:math:`T_i z_i`, vectors in the shared frame carried out to the frame of each position."""
    return (transports @ vectors.unsqueeze(-1)).squeeze(-1)


# --- 1. prefix transports -----------------------------------------------------------------------------------


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
    lie-exponential-roadmap (seed), gauge transformer: "prefix transports: compute
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
    a = _matrices("generators", generators)
    m, d = a.shape[-3], a.shape[-1]
    if m < 1:
        raise ValueError(
            f"generators must hold at least one edge (shape [..., m, d, d], m >= 1), got shape {tuple(a.shape)}"
        )
    prefix = _expm(a)  # G_ℓ = e^{A_ℓ}
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
    lie-exponential-roadmap (seed), summary: ":math:`R_{i\leftarrow j}=T_iT_j^{-1}`" [SEED].

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
    t = _transports(transports)
    n = t.shape[-3]
    i = check_integer("i", i, 0, n - 1)
    j = check_integer("j", j, 0, n - 1)
    return _solve("transports", t[..., j, :, :], t[..., i, :, :], left=False)


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
    lie-exponential-roadmap (seed), axioms: "computations must be gauge-covariant under :math:`x_j\mapsto S_j
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
    s = _matrices("gauge", gauge)
    out: list[torch.Tensor | None] = [None, None, None, None]
    if transports is not None:
        t = _transports(transports)
        if t.shape[-3:] != s.shape[-3:]:
            raise ValueError(f"transports must have the shape of gauge {tuple(s.shape)}, got shape {tuple(t.shape)}")
        out[0] = _solve("gauge", s[..., :1, :, :], s @ t, left=False)  # S_j T_j S_0^{-1}
    if queries is not None:
        q = _tensor("queries", queries, 2)
        _same_frames("queries", q, s)
        out[1] = _solve("gauge", s.transpose(-1, -2), q.unsqueeze(-1)).squeeze(-1)  # S_i^{-T} q_i
    for slot, name, x in ((2, "keys", keys), (3, "values", values)):
        if x is not None:
            x = _tensor(name, x, 2)
            _same_frames(name, x, s)
            out[slot] = _from_frame0(s, x)
    return out[0], out[1], out[2], out[3]


# --- 2. transported compatibilities ------------------------------------------------------------------------


def _pulled_and_pushed(queries, keys, transports) -> tuple[torch.Tensor, torch.Tensor]:
    t = _transports(transports)
    q = _tensor("queries", queries, 2)
    k = _tensor("keys", keys, 2)
    _same_frames("queries", q, t)
    _same_frames("keys", k, t)
    pulled = (t.transpose(-1, -2) @ q.unsqueeze(-1)).squeeze(-1)  # T_i^T q_i, a covector in the shared frame
    pushed = _to_frame0(t, k)  # T_j^{-1} k_j, a vector in the shared frame
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
    lie-exponential-roadmap (seed), "compare in a shared frame: :math:`c_{ij} = \langle q_i, R_{i\leftarrow j}
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
    offsets: cost :math:`O(n d^2 + n d \cdot \#\text{offsets})` (the seed's bound
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
    lie-exponential-roadmap (seed), "multiscale banded synthesis ... each term is a single transported
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
    deltas = _check_offsets(offsets, n=pulled.shape[-2])
    return torch.stack([_at_offset(pulled, pushed, delta) for delta in deltas], dim=-1)


# --- 3. multiscale generator -------------------------------------------------------------------------------


def multiscale_generator(
    scores: torch.Tensor,
    offsets: Sequence[int],
    phi: Callable[[torch.Tensor], torch.Tensor] = torch.nn.functional.softplus,
) -> torch.Tensor:
    r"""The banded Markov generator built from transported compatibilities (negative convention, rows sum to 0).

    .. math::

        Q_{i,i+\delta} = \varphi(c_{i,\delta})\ (\delta \in \text{offsets},\ 0 \le i+\delta < n),\qquad
        Q_{ii} = -\sum_{\delta} Q_{i,i+\delta},

    all other entries zero; rates that would leave the chain are dropped, so every row sums to zero and
    :math:`e^{tQ}` is row-stochastic for :math:`t \ge 0`.  Built as
    ``BandedGenerator(offsets, phi(scores).mT).dense()`` (:class:`workbench.nn._exp_markov.BandedGenerator`,
    which stores rates as ``[..., K, n]``): the same banded construction as the exp-Markov layer.  For the
    banded :math:`O(n\,K\,d)`-per-power route, pass that ``BandedGenerator`` itself to
    :func:`double_exponential` with ``method="uniformization"``.

    Parameters
    ----------
    scores : torch.Tensor, shape=[..., n, K]
        :math:`c_{i,\delta}` (:func:`banded_transported_scores`), one column per offset.
    offsets : sequence of int
        The :math:`K` distinct nonzero offsets, :math:`|\delta| \le n-1`.
    phi : callable
        Applied to the whole ``scores`` tensor and must return nonnegative rates of the same shape (so a
        per-offset :math:`\varphi_\delta` acts along the last axis); default softplus.

    Returns
    -------
    torch.Tensor, shape=[..., n, n]
        Dense (differentiable); hand it to :func:`double_exponential`.

    References
    ----------
    lie-exponential-roadmap (seed), "multiscale banded synthesis: :math:`(Q)_{i,i+\delta} =
    \phi_\delta(\langle q_i, R_{i\leftarrow i+\delta} k_{i+\delta}\rangle)`, :math:`(Q)_{ii} = -\sum_{\delta\ne0}
    (Q)_{i,i+\delta}`" [SEED].

    Examples
    --------
    >>> import torch
    >>> c = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    >>> Q = multiscale_generator(c, multiscale_offsets(1))
    >>> bool(Q.sum(-1).abs().max() < 1e-14), bool((Q - torch.diag(torch.diagonal(Q)) >= 0).all())
    (True, True)
    >>> float(Q[0, 2]) == float(torch.nn.functional.softplus(c[0, 3]))  # offset +2 is the fourth column
    True
    """
    c = _tensor("scores", scores, 2)
    n = c.shape[-2]
    deltas = _check_offsets(offsets, n=n)
    if c.shape[-1] != len(deltas):
        raise ValueError(
            f"scores must have one column per offset (shape [..., n, {len(deltas)}]), got shape {tuple(c.shape)}"
        )
    if not callable(phi):
        raise TypeError(f"phi must be callable, got {type(phi).__name__}")
    rates = phi(c)
    if not isinstance(rates, torch.Tensor) or rates.shape != c.shape:
        got = tuple(rates.shape) if isinstance(rates, torch.Tensor) else type(rates).__name__
        raise ValueError(f"phi must return a tensor of the shape of scores {tuple(c.shape)}, got {got}")
    check_finite("phi(scores)", rates.detach())
    low = float(rates.detach().min())
    if low < 0:
        raise ValueError(f"phi must return nonnegative rates, got minimum {low:.6g}")
    # The banded generator of workbench.nn._exp_markov stores rates as [..., K, n]; scores are [..., n, K].
    return BandedGenerator(deltas, rates.mT).dense()


# --- 4. double exponential -------------------------------------------------------------------------------


def double_exponential(
    generator: torch.Tensor | BandedGenerator,
    transports: torch.Tensor,
    values: torch.Tensor,
    t: float | torch.Tensor = 1.0,
    *,
    method: str = "dense",
    max_terms: int | None = DEFAULT_MAX_TERMS,
) -> torch.Tensor:
    r"""The double exponential: transport values to the shared frame, mix by :math:`e^{tQ}`, transport back.

    .. math::

        u_j = T_j^{-1} v_j,\qquad z = e^{tQ} u,\qquad y_i = T_i z_i
        \quad\Longleftrightarrow\quad
        \operatorname{vec} Y = \mathcal T\, e^{t\,Q\otimes I_d}\, \mathcal T^{-1} \operatorname{vec} V
        = \exp\!\big(t\,\mathcal T (Q\otimes I_d) \mathcal T^{-1}\big) \operatorname{vec} V,

    so :math:`y_i = \sum_j (e^{tQ})_{ij} R_{i\leftarrow j} v_j`.  With :math:`\mathcal T = \operatorname{diag}(T_j)`
    (module conventions); the seed's :math:`T^{-1} e^{tQ\otimes I} T V` is the same formula for its
    frame-to-shared transports :math:`T_j^{-1}` [RECON].  Covariant: under :func:`gauge_change`,
    :math:`y_i \mapsto S_i y_i`.  For a Markov generator :math:`Q` and :math:`t \ge 0`, :math:`e^{tQ}` is
    row-stochastic.

    The Kronecker lift never has to be formed: :math:`e^{tQ\otimes I_d}\operatorname{vec}U = \operatorname{vec}
    (e^{tQ}U)` for :math:`U = [u_0; \dots; u_{n-1}]` of shape ``[n, d]``, so the mixing step is one action of
    :math:`e^{tQ}` on the :math:`d` columns of :math:`U`.

    Parameters
    ----------
    generator : torch.Tensor, shape=[..., n, n], or BandedGenerator
        :math:`Q` (e.g. :func:`multiscale_generator`), a Markov generator for ``method="uniformization"``.  A
        :class:`~workbench.nn._exp_markov.BandedGenerator` is applied banded by ``"uniformization"`` and
        densified for the other methods.
    transports : torch.Tensor, shape=[..., n, d, d]
    values : torch.Tensor, shape=[..., n, d]
    t : float or torch.Tensor
        Time :math:`t \ge 0`; a tensor (learnable, broadcastable to the batch shape) is differentiated through.
    method : {'dense', 'uniformization', 'expmv'}
        ``'dense'``: ``torch.linalg.matrix_exp`` (differentiable; :math:`O(n^3)`, fine for :math:`n` up to a few
        hundred).  ``'uniformization'``: :func:`workbench.nn._exp_markov.uniformized_action` applied to
        :math:`U` (differentiable in :math:`Q`, :math:`t`, the transports and the values; about
        :math:`\lambda t` powers, each :math:`O(n\,w\,d)` for a ``BandedGenerator`` with :math:`w` offsets
        or :math:`O(n^2 d)` dense, plus :math:`O(n\,d^3)` for the transports).  ``'expmv'``:
        :func:`workbench.expmv.expmv` by uniformization (no gradient; float ``t``; a loop over the batch).
    max_terms : int or None
        Cap on the uniformization powers for ``method="uniformization"`` (see :func:`uniformized_action`).

    Returns
    -------
    torch.Tensor, shape=[..., n, d]

    References
    ----------
    lie-exponential-roadmap (seed), "double exponential attention", "pullback :math:`Y_i = T_i^{-1} Z_i`",
    "output: :math:`Y_i=T_i^{-1}[P(TV)]_i`" [SEED]; the frame convention [RECON].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(6)
    >>> T = prefix_transports(0.3 * torch.randn(4, 2, 2, dtype=torch.float64, generator=g))
    >>> Q = multiscale_generator(torch.randn(5, 2, dtype=torch.float64, generator=g), (-1, 1))
    >>> V = torch.randn(5, 2, dtype=torch.float64, generator=g)
    >>> Y = double_exponential(Q, T, V, 0.7)
    >>> P = torch.linalg.matrix_exp(0.7 * Q)
    >>> direct = sum(P[2, j] * transport(T, 2, j) @ V[j] for j in range(5))
    >>> bool(torch.allclose(Y[2], direct, atol=1e-13))
    True
    >>> bool(torch.allclose(double_exponential(Q, T, V, 0.7, method="uniformization"), Y, atol=1e-13))
    True
    """
    t_ = _transports(transports)
    n = t_.shape[-3]
    check_choice("method", method, ("dense", "uniformization", "expmv"))
    banded = generator if isinstance(generator, BandedGenerator) else None
    if banded is not None:
        if banded.n != n:
            raise ValueError(f"generator must have n = {n} states to match transports, got n = {banded.n}")
        if method != "uniformization":
            generator, banded = banded.dense(), None
    if banded is None:
        q = _matrices("generator", generator, 2)
        if q.shape[-1] != n:
            raise ValueError(
                f"generator must have shape [..., {n}, {n}] to match transports, got shape {tuple(q.shape)}"
            )
    v = _tensor("values", values, 2)
    _same_frames("values", v, t_)
    if isinstance(t, torch.Tensor):
        t = _tensor("t", t, 0)
        if bool((t.detach() < 0).any()):
            raise ValueError(f"t must be >= 0, got minimum {float(t.detach().min()):.6g}")
        if method == "expmv":
            if t.ndim != 0:
                raise ValueError(f"t must be a scalar for method='expmv', got shape {tuple(t.shape)}")
            t = float(t.detach())
    else:
        t = check_in_range("t", t, 0.0)
    u = _to_frame0(t_, v)
    if method == "dense":
        tq = t[..., None, None] * q if isinstance(t, torch.Tensor) else t * q
        z = _expm(tq) @ u
    elif method == "uniformization":  # e^{tQ⊗I} vec(U) = vec(e^{tQ} U): one semigroup action on the d columns
        z = uniformized_action(banded if banded is not None else q, u, t, max_terms=max_terms)
    else:
        from workbench.expmv import expmv  # numpy-backed engine: no autograd

        batch = torch.broadcast_shapes(q.shape[:-2], u.shape[:-2])
        qb = q.detach().expand(*batch, n, n).reshape(-1, n, n)
        ub = u.detach().expand(*batch, *u.shape[-2:]).reshape(-1, *u.shape[-2:])
        z = torch.stack([expmv(qi, ui, t, method="uniformization") for qi, ui in zip(qb, ub, strict=True)])
        z = z.reshape(*batch, *u.shape[-2:])
    return _from_frame0(t_, z)


# --- 5. conjugation identity and its BCH error -------------------------------------------------------------


def conjugated_generator(generator: torch.Tensor, transports: torch.Tensor) -> torch.Tensor:
    r"""The Kronecker-lifted generator conjugated by the transports, :math:`\mathcal T (Q\otimes I) \mathcal T^{-1}`.

    .. math::

        \mathcal T (Q\otimes I_d)\mathcal T^{-1} = \sum_{i,j} Q_{ij}\, E_{ij} \otimes T_i T_j^{-1}
        = \sum_{i\ne j} Q_{ij}\, E_{ij}\otimes R_{i\leftarrow j} + \sum_i Q_{ii}\, E_{ii}\otimes I_d,

    and, because conjugation commutes with the exponential (termwise in the power series),

    .. math:: \mathcal T e^{t\,Q\otimes I}\mathcal T^{-1} = \exp\!\big(t\,\mathcal T (Q\otimes I)\mathcal T^{-1}\big)

    exactly, for every invertible :math:`T_i` — commuting or not.  This is the effective single generator of the
    transport + mixing block (:func:`double_exponential`).  The seed's form, with blocks
    :math:`e^{-(\Phi_i-\Phi_j)}`, is this identity with :math:`T_i T_j^{-1}` replaced by the exponential of
    a difference; that replacement is exact only when the :math:`\Phi` commute (see :func:`twist_generator`).
    The seed's sum over :math:`i\ne j` omits the diagonal blocks :math:`Q_{ii} I_d`, which are part of the
    generator [RECON].

    Parameters
    ----------
    generator : torch.Tensor, shape=[..., n, n]
    transports : torch.Tensor, shape=[..., n, d, d]

    Returns
    -------
    torch.Tensor, shape=[..., n d, n d]
        Position-major blocks: block :math:`(i, j)` is rows :math:`id..id+d-1`, columns :math:`jd..jd+d-1`.

    References
    ----------
    lie-exponential-roadmap (seed), "conjugation of sequence mixing by feature transports" and "BCH roles"
    [SEED]; the exact statement with :math:`T_iT_j^{-1}` blocks [RECON].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(7)
    >>> T = prefix_transports(0.3 * torch.randn(3, 2, 2, dtype=torch.float64, generator=g))
    >>> Q = multiscale_generator(torch.randn(4, 2, dtype=torch.float64, generator=g), (-1, 1))
    >>> V = torch.randn(4, 2, dtype=torch.float64, generator=g)
    >>> G = conjugated_generator(Q, T)
    >>> lhs = (torch.linalg.matrix_exp(0.5 * G) @ V.reshape(8)).reshape(4, 2)
    >>> bool(torch.allclose(lhs, double_exponential(Q, T, V, 0.5), atol=1e-13))
    True
    """
    t_ = _transports(transports)
    n, d = t_.shape[-3], t_.shape[-1]
    q = _matrices("generator", generator, 2)
    if q.shape[-1] != n:
        raise ValueError(f"generator must have shape [..., {n}, {n}] to match transports, got shape {tuple(q.shape)}")
    inverse = _solve("transports", t_, torch.eye(d, dtype=t_.dtype, device=t_.device).expand_as(t_))
    twists = t_.unsqueeze(-3) @ inverse.unsqueeze(-4)  # [..., n, n, d, d]: T_i T_j^{-1}
    blocks = q[..., None, None] * twists
    batch = blocks.shape[:-4]
    return blocks.transpose(-3, -2).reshape(*batch, n * d, n * d)


def _phi_pair(phi_i, phi_j) -> tuple[torch.Tensor, torch.Tensor]:
    a = _matrices("phi_i", phi_i, 2)
    b = _matrices("phi_j", phi_j, 2)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"phi_i and phi_j must be d x d for the same d, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    return a, b


def twist_generator(phi_i: torch.Tensor, phi_j: torch.Tensor, degree: int) -> torch.Tensor:
    r"""The BCH series through ``degree`` for :math:`\log R_{i\leftarrow j} = \log(e^{\Phi_i} e^{-\Phi_j})`.

    With :math:`T_i = e^{\Phi_i}` the transport is :math:`R_{i\leftarrow j} = e^{\Phi_i} e^{-\Phi_j}` and

    .. math::

        \log(e^{\Phi_i} e^{-\Phi_j}) = \operatorname{BCH}(\Phi_i, -\Phi_j)
        = (\Phi_i - \Phi_j) - \tfrac12[\Phi_i, \Phi_j] - \tfrac1{12}[\Phi_i,[\Phi_i,\Phi_j]]
        - \tfrac1{12}[\Phi_j,[\Phi_i,\Phi_j]] + \dots

    Degree 1 is the seed's twist :math:`\Phi_i - \Phi_j` (exact when the :math:`\Phi` commute); each further
    degree adds the nested commutators from :func:`workbench.lie.bch` (exact rational coefficients), and
    truncation after degree :math:`N` leaves an error :math:`O(\varepsilon^{N+1})` for :math:`\Phi = O(\varepsilon)`.

    Parameters
    ----------
    phi_i, phi_j : torch.Tensor, shape=[..., d, d]
        Broadcastable batches.
    degree : int
        Truncation degree :math:`N \in [1, 10]`.

    Returns
    -------
    torch.Tensor, shape=[..., d, d]

    References
    ----------
    lie-exponential-roadmap (seed), "BCH roles": "the gap between :math:`e^{-(\Phi_i-\Phi_j)}` and
    :math:`T_i^{-1}T_j` is exactly the BCH commutator series" [SEED]; signs for this module's convention [RECON].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(8)
    >>> a, b = 0.1 * torch.randn(2, 3, 3, dtype=torch.float64, generator=g)
    >>> exact_twist = torch.linalg.matrix_exp(a) @ torch.linalg.matrix_exp(-b)
    >>> errors = [float(torch.linalg.matrix_norm(torch.linalg.matrix_exp(twist_generator(a, b, N)) - exact_twist))
    ...           for N in (1, 2, 3)]
    >>> errors[0] > 10 * errors[1] > 100 * errors[2]
    True
    """
    a, b = _phi_pair(phi_i, phi_j)
    return _bch_series(_degree(degree)).evaluate(a, -b)


def bch_conjugation_error(phi_i: torch.Tensor, phi_j: torch.Tensor, degree: int = 1) -> torch.Tensor:
    r"""Frobenius error of the twist :math:`e^{\Phi_i}e^{-\Phi_j}` against the exponential of its BCH truncation.

    .. math::

        \mathrm{err}_N = \big\|e^{\Phi_i} e^{-\Phi_j} - \exp\big(\textstyle\sum_{k\le N}
        \operatorname{BCH}^{(k)}(\Phi_i, -\Phi_j)\big)\big\|_F = O(\varepsilon^{N+1}),

    in particular :math:`\mathrm{err}_1 = \|e^{\Phi_i}e^{-\Phi_j} - e^{\Phi_i-\Phi_j}\|_F
    \approx \tfrac12 \|[\Phi_i,\Phi_j]\|_F`, zero when they commute.

    Parameters
    ----------
    phi_i, phi_j : torch.Tensor, shape=[..., d, d]
    degree : int
        :math:`N \in [1, 10]`; 1 is the naive twist :math:`e^{\Phi_i-\Phi_j}`.

    Returns
    -------
    torch.Tensor, shape=[...]

    References
    ----------
    lie-exponential-roadmap (seed), "BCH roles", the twist and its BCH gap [SEED]; the error order [RECON].

    Examples
    --------
    >>> import torch
    >>> diag = torch.diag_embed(torch.tensor([[0.3, -0.2], [0.1, 0.5]], dtype=torch.float64))
    >>> float(bch_conjugation_error(diag[0], diag[1]))  # commuting: the twist is exact
    0.0
    """
    a, b = _phi_pair(phi_i, phi_j)
    exact = _expm(a) @ _expm(-b)
    approx = _expm(twist_generator(a, b, degree))
    return torch.linalg.matrix_norm(exact - approx)


def twisted_generator(generator: torch.Tensor, phis: torch.Tensor, degree: int = 1) -> torch.Tensor:
    r"""The seed's "content-twisted" generator: blocks :math:`Q_{ij}\exp(\operatorname{BCH}_N(\Phi_i, -\Phi_j))`.

    .. math::

        \mathcal G_N = \sum_{i,j} Q_{ij}\, E_{ij} \otimes \exp\big(\operatorname{BCH}_N(\Phi_i, -\Phi_j)\big),
        \qquad \mathcal G_1 = \sum_{i,j} Q_{ij}\, E_{ij}\otimes e^{\Phi_i-\Phi_j},

    the approximation of :func:`conjugated_generator` for :math:`T_i = e^{\Phi_i}` that replaces each exact twist
    :math:`T_iT_j^{-1} = e^{\Phi_i}e^{-\Phi_j}` by the exponential of its BCH series through degree :math:`N`
    (diagonal blocks are exactly :math:`Q_{ii} I`).  Exact for commuting :math:`\Phi` at every :math:`N`; otherwise
    each block errs by :math:`O(\varepsilon^{N+1})` (:func:`bch_conjugation_error`), and so does
    :math:`e^{t\mathcal G_N}` against the double exponential.

    Parameters
    ----------
    generator : torch.Tensor, shape=[..., n, n]
    phis : torch.Tensor, shape=[..., n, d, d]
        :math:`\Phi_i` with :math:`T_i = e^{\Phi_i}`.
    degree : int
        :math:`N \in [1, 10]`; 1 is the seed's :math:`e^{-(\Phi_i - \Phi_j)}` form (sign for this module's
        convention).

    Returns
    -------
    torch.Tensor, shape=[..., n d, n d]

    References
    ----------
    lie-exponential-roadmap (seed), "the effective single generator of the whole attention+transport block ...
    the off-diagonal block sending :math:`j\to i` is scaled by the feature-space twist
    :math:`e^{-(\Phi_i-\Phi_j)}`" [SEED]; BCH-corrected twists [RECON].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(11)
    >>> Q = multiscale_generator(torch.randn(3, 2, dtype=torch.float64, generator=g), (-1, 1))
    >>> commuting = torch.diag_embed(torch.randn(3, 2, dtype=torch.float64, generator=g))
    >>> exact = conjugated_generator(Q, torch.linalg.matrix_exp(commuting))
    >>> bool(torch.allclose(twisted_generator(Q, commuting), exact, atol=1e-14))
    True
    """
    q = _matrices("generator", generator, 2)
    phi = _matrices("phis", phis, 3)
    n, d = phi.shape[-3], phi.shape[-1]
    if q.shape[-1] != n:
        raise ValueError(f"generator must have shape [..., {n}, {n}] to match phis, got shape {tuple(q.shape)}")
    shape = (*phi.shape[:-3], n, n, d, d)
    left = phi.unsqueeze(-3).expand(shape)  # Φ_i along rows
    right = phi.unsqueeze(-4).expand(shape)  # Φ_j along columns
    twists = _expm(_bch_series(_degree(degree)).evaluate(left, -right))
    blocks = q[..., None, None] * twists
    batch = blocks.shape[:-4]
    return blocks.transpose(-3, -2).reshape(*batch, n * d, n * d)


# --- 6. curvature ---------------------------------------------------------------------------------------------


def _principal_logs(matrices: torch.Tensor, what: str) -> torch.Tensor:
    """:func:`workbench.nn._log_lens.principal_log` (``kind="auto"``) of each matrix of a stack, on the host.

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
    :func:`workbench.nn._log_lens.principal_log` (``kind="auto"``: the Mercator/Padé quadrature near the
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
    lie-exponential-roadmap (seed), "define discrete curvature on a 2-step loop", summary
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
    a = _matrices("generators", generators)
    if a.shape[-3] < 2:
        raise ValueError(
            f"generators must hold at least two edges (shape [..., m, d, d], m >= 2), got shape {tuple(a.shape)}"
        )
    later, earlier = a[..., 1:, :, :], a[..., :-1, :, :]
    if degree is not None:
        return _commutator_series(_degree(degree)).evaluate(later, earlier)
    e_later, e_earlier = _expm(later), _expm(earlier)
    group = e_later @ e_earlier @ _expm(-later) @ _expm(-earlier)
    return _principal_logs(group, "the group commutator at edge")


# --- 7. holonomy ----------------------------------------------------------------------------------------------


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
    lie-exponential-roadmap (seed), "holonomy memory: over long spans, the loop transport around a segment stores
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
    a = _matrices("generators", generators)
    m, d = a.shape[-3], a.shape[-1]
    start = check_integer("start", start, 0, m - 1)
    stop = check_integer("stop", stop, start + 1, m)
    steps = _expm(a[..., start:stop, :, :])
    path = steps[..., 0, :, :]
    for k in range(1, stop - start):
        path = steps[..., k, :, :] @ path  # later edges on the left
    if second is None:
        other = steps[..., 0, :, :]
        for k in range(1, stop - start):
            other = other @ steps[..., k, :, :]  # the same moves, reversed order
    else:
        other = _matrices("second", second, 2)
        if other.shape[-1] != d:
            raise ValueError(f"second must be {d} x {d} to match generators, got shape {tuple(other.shape)}")
    return _solve("second", other, path, left=False)
