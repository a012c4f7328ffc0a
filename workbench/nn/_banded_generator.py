r"""Banded Markov generators stored by their rates: :math:`QX` by shifted adds, in :math:`O(n\,w\,d)`.

A banded generator (negative convention :math:`\mathcal L = P - I`) has rates :math:`Q_{i,i+\delta} \ge 0` at a
few offsets :math:`\delta` and :math:`Q_{ii} = -\sum_\delta Q_{i,i+\delta}`; nothing wraps across the ends of the
sequence.  With :math:`Q = -L` for a symmetric banded weight, :math:`L = D - W` is the graph Laplacian of the
heat kernel.

BandedGenerator             -- a banded Markov generator stored by its rates: Q X by shifted adds, or the dense Q
banded_generator            -- softplus rates at the given offsets, rows summing to 0, nothing across the ends
symmetric_banded_generator  -- -L = W - D for a symmetric banded weight W (the heat-kernel generator)
multiscale_offsets          -- ±1, ±2, ±4, ..., ±2^levels (or the negative half, for a causal band)

References
----------
Lie-Exponential Roadmap, "Multiscale banded synthesis:
:math:`(Q)_{i,i+\delta} = \phi_\delta(\langle q_i, R_{i\leftarrow i+\delta}k_{i+\delta}\rangle)`,
:math:`(Q)_{ii} = -\sum_{\delta\neq0}(Q)_{i,i+\delta}`" [SEED; the display was lost in extraction and is
reconstructed here with :math:`R = I`, no feature transport — RECON].
"""

from __future__ import annotations

from numbers import Real

import torch
import torch.nn.functional as F

from workbench.expmv import BandedMatrix
from workbench.nn._primitives import check_offsets
from workbench.validation import as_scalar, check_finite, check_flag, check_integer

#: The most dyadic levels: 2^62 is the largest power of two an int64 position index holds.
MAX_LEVELS = 62

__all__ = [
    "BandedGenerator",
    "banded_generator",
    "multiscale_offsets",
    "symmetric_banded_generator",
]


# ---- shifts: the O(n) building block of every banded product ------------------------------------


def shift(x, offset: int):
    r"""Rows shifted by ``offset``: :math:`(Sx)_i = x_{i+o}` where :math:`0 \le i+o < n`, zero elsewhere.

    ``x`` has shape ``[..., n, d]``; out of place (cat with zeros), so autograd sees no in-place edit.
    """
    n = x.shape[-2]
    if abs(offset) >= n:
        return torch.zeros_like(x)
    pad = x.new_zeros((*x.shape[:-2], abs(offset), x.shape[-1]))
    if offset > 0:
        return torch.cat([x[..., offset:, :], pad], dim=-2)
    return torch.cat([pad, x[..., : n + offset, :]], dim=-2)


def _shifted_views(x, offsets):
    r"""All shifts :math:`(S_o x)_i = x_{i+o}` (zero outside the sequence) as views of one zero-padded copy.

    One allocation per call instead of one per offset; out of place, so autograd sees no in-place edit.
    """
    n, width = x.shape[-2], max(abs(o) for o in offsets)
    padded = torch.nn.functional.pad(x, (0, 0, width, width))
    return [padded[..., width + o : width + o + n, :] for o in offsets]


def _valid_mask(offsets, n: int, *, device, dtype):
    r"""``mask[r, i] = 1`` where :math:`0 \le i + o_r < n` (the rate :math:`Q_{i,i+o_r}` exists)."""
    idx = torch.arange(n, device=device)
    rows = [((idx + o >= 0) & (idx + o < n)) for o in offsets]
    return torch.stack(rows).to(dtype)


# ---- the generator ----------------------------------------------------------------------------


class BandedGenerator:
    r"""A banded Markov generator stored by its rates: :math:`Q_{i,\,i+o_r} = R_{r,i} \ge 0`.

    .. math::

        (QX)_i = \sum_r R_{r,i}\,\big(X_{i+o_r} - X_i\big), \qquad Q_{ii} = -\sum_r R_{r,i},

    so rows sum to zero by construction (negative convention :math:`\mathcal L = P - I`).  Rates whose
    target :math:`i + o_r` falls outside :math:`[0, n)` are zeroed on construction: the chain never crosses
    the ends of the sequence.  Products cost :math:`O(n\,m\,d)` for :math:`m` offsets and never form the
    dense :math:`n\times n` matrix; :meth:`dense` builds it for small :math:`n` (tests, diagnostics).

    Parameters
    ----------
    offsets : sequence of int
        Distinct nonzero offsets :math:`o_r` (positive: later positions; negative: earlier ones).
    rates : torch.Tensor, shape=[..., len(offsets), n]
        Nonnegative rates (leading dimensions are batch dimensions, e.g. ``[batch, heads]``).  Gradients flow.

    References
    ----------
    Lie-Exponential Roadmap, "Banded generator: :math:`(Q)_{i,i+\delta} = \phi_\delta(c_{i,\delta})`,
    diagonals to minus row sum" [SEED].

    Examples
    --------
    >>> import torch
    >>> Q = BandedGenerator([-1, 1], torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 0.0]], dtype=torch.float64))
    >>> Q.dense()
    tensor([[-3.,  3.,  0.],
            [ 1., -5.,  4.],
            [ 0.,  2., -2.]], dtype=torch.float64)
    >>> x = torch.arange(6.0, dtype=torch.float64).reshape(3, 2)
    >>> bool(torch.equal(Q.matmul(x), Q.dense() @ x))
    True
    """

    def __init__(self, offsets, rates):
        self.offsets = check_offsets(offsets)
        if not isinstance(rates, torch.Tensor) or not rates.is_floating_point():
            raise TypeError(f"rates must be a floating-point torch tensor, got {type(rates).__name__}")
        if rates.ndim < 2 or rates.shape[-2] != len(self.offsets):
            raise ValueError(
                f"rates must have shape [..., len(offsets)={len(self.offsets)}, n], got shape {tuple(rates.shape)}"
            )
        if bool((rates.detach() < 0).any()) or not bool(torch.isfinite(rates.detach()).all()):
            raise ValueError("rates must be finite and >= 0 (off-diagonal entries of a Markov generator)")
        mask = _valid_mask(self.offsets, rates.shape[-1], device=rates.device, dtype=torch.bool)
        self.rates = torch.where(mask, rates, torch.zeros((), dtype=rates.dtype, device=rates.device))

    @property
    def n(self) -> int:
        """The number of states (sequence length) :math:`n`."""
        return int(self.rates.shape[-1])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The leading (batch) dimensions of the rates."""
        return tuple(self.rates.shape[:-2])

    def exit_rates(self):
        r"""The total exit rate of each state, :math:`-Q_{ii} = \sum_r R_{r,i}`, shape ``[..., n]``."""
        return self.rates.sum(dim=-2)

    def diagonal(self):
        r"""The diagonal :math:`Q_{ii} = -\sum_r R_{r,i}`, shape ``[..., n]``."""
        return -self.exit_rates()

    def _check_operand(self, x) -> None:
        """``x``: a real floating torch tensor ``[..., n, d]``, on the rates' device, batch broadcastable, finite."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
        if not x.is_floating_point():
            raise TypeError(f"x must be a real floating-point tensor, got dtype {x.dtype}")
        if x.ndim < 2 or x.shape[-2] != self.n:
            raise ValueError(f"x must have shape [..., n={self.n}, d], got shape {tuple(x.shape)}")
        if x.device != self.rates.device:
            raise TypeError(f"x must be on the device of the rates ({self.rates.device}), got {x.device}")
        try:
            torch.broadcast_shapes(tuple(x.shape[:-2]), self.batch_shape)
        except RuntimeError:
            raise ValueError(
                f"x must have batch dimensions broadcastable to the rates' {self.batch_shape}, got shape "
                f"{tuple(x.shape)}"
            ) from None
        check_finite("x", x.detach())

    def matmul(self, x):
        r""":math:`QX` by shifted adds, :math:`\sum_r R_{r}\odot(S_{o_r}X - X)`, for ``x`` of shape ``[..., n, d]``.

        ``x`` is a finite real floating tensor on the device of the rates, its batch dimensions broadcasting
        against the rates'.
        """
        self._check_operand(x)
        out = -self.exit_rates()[..., None] * x
        for r, view in enumerate(_shifted_views(x, self.offsets)):
            out = out + self.rates[..., r, :, None] * view
        return out

    def stochastic_step(self, x, rate):
        r""":math:`PX` with :math:`P = I + Q/\lambda`, written as a sum of nonnegative terms.

        .. math::

            (PX)_i = \Big(1 - \tfrac{1}{\lambda}\sum_r R_{r,i}\Big)X_i + \sum_r \tfrac{R_{r,i}}{\lambda}X_{i+o_r},

        ``rate`` a tensor broadcastable to the batch shape (detached), or a real number.  Every coefficient is
        :math:`\ge 0` when :math:`\lambda \ge \max_i(-Q_{ii})`, so :math:`X \ge 0 \Rightarrow PX \ge 0` exactly in
        floating point; a smaller (or non-finite) rate is refused.  ``x`` as in :meth:`matmul`.
        """
        self._check_operand(x)
        rate = rate if isinstance(rate, torch.Tensor) else as_scalar(rate)
        if isinstance(rate, Real) and not isinstance(rate, bool):
            rate = torch.tensor(float(rate), dtype=self.rates.dtype, device=self.rates.device)
        if not isinstance(rate, torch.Tensor) or not rate.is_floating_point():
            raise TypeError(f"rate must be a real number or a floating torch tensor, got {type(rate).__name__}")
        try:
            fits = torch.broadcast_shapes(tuple(rate.shape), self.batch_shape) == self.batch_shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(
                f"rate must be broadcastable to the batch shape {self.batch_shape}, got shape {tuple(rate.shape)}"
            )
        check_finite("rate", rate.detach())
        top = self.exit_rates().detach().amax(dim=-1) if self.n else self.rates.new_zeros(self.batch_shape)
        lam = rate.detach()
        short = (lam < top) | (lam <= 0)
        if bool(short.any()):
            raise ValueError(
                f"rate must be > 0 and >= max_i(-Q_ii) = {float(top.max()):.6g} for P = I + Q/rate to be "
                f"stochastic, got {float(lam.min()):.6g}"
            )
        return self._stochastic_step(x, rate)

    def _stochastic_step(self, x, rate):
        # The step for operands uniformized_action built and checked (its per-term loop): no check repeated.
        scaled = self.rates / rate[..., None, None]
        stay = 1.0 - scaled.sum(dim=-2)
        out = stay[..., None] * x
        for r, view in enumerate(_shifted_views(x, self.offsets)):
            out = out + scaled[..., r, :, None] * view
        return out

    def dense(self):
        r"""The dense generator :math:`Q`, shape ``[..., n, n]`` (small :math:`n` only)."""
        n = self.n
        q = torch.diag_embed(self.diagonal())
        for r, o in enumerate(self.offsets):
            if abs(o) >= n:
                continue
            band = self.rates[..., r, : n - o] if o > 0 else self.rates[..., r, -o:]
            q = q + torch.diag_embed(band, offset=o)
        return q

    def to_banded_matrix(self) -> BandedMatrix:
        """The same generator as a :class:`workbench.expmv.BandedMatrix` (no batch dimensions; detached).

        For the :mod:`workbench.expmv` engine, e.g. as an independent oracle.
        """
        if self.rates.ndim != 2:
            raise ValueError(f"to_banded_matrix needs rates of shape [m, n] (no batch), got {tuple(self.rates.shape)}")
        rates = self.rates.detach()
        offsets = (0, *self.offsets)
        return BandedMatrix(offsets, torch.cat([self.diagonal().detach()[None], rates], dim=0))

    def __repr__(self) -> str:
        return f"BandedGenerator(offsets={self.offsets}, rates shape={tuple(self.rates.shape)})"


def banded_generator(offdiag_logits, offsets, *, causal: bool = False) -> BandedGenerator:
    r"""A banded Markov generator with softplus rates: :math:`Q_{i,\,i+o_r} = \operatorname{softplus}(s_{r,i})`.

    .. math::

        Q_{i,\,i+o_r} = \log\big(1 + e^{s_{r,i}}\big) \quad (0 \le i + o_r < n), \qquad
        Q_{ii} = -\sum_{r} Q_{i,\,i+o_r},

    other entries zero; logits whose target falls outside the sequence are ignored.  With ``causal=True``
    every offset must be negative: position :math:`i` then only moves mass to earlier positions, and :math:`Q`
    and :math:`e^{tQ}` are exactly lower triangular.  (How exactly a *computed* :math:`e^{tQ}X` is causal
    depends on the method: see :class:`ExpMarkovAttention`.)

    Parameters
    ----------
    offdiag_logits : torch.Tensor, shape=[..., len(offsets), n]
        Unconstrained logits :math:`s_{r,i}`.
    offsets : sequence of int
        Distinct nonzero offsets (e.g. :func:`multiscale_offsets`).
    causal : bool
        Require negative offsets.

    Returns
    -------
    BandedGenerator

    References
    ----------
    Lie-Exponential Roadmap, ExpMarkovAttention: "clamp off-diagonals :math:`\ge 0` via softplus",
    "enforce row-sum zero by setting diagonals to :math:`-\sum_{j\ne i}Q_{ij}`" [SEED].

    Examples
    --------
    >>> import torch
    >>> Q = banded_generator(torch.zeros(2, 4, dtype=torch.float64), [-1, 1]).dense()
    >>> bool((Q.sum(-1).abs() < 1e-15).all()), round(float(Q[1, 0]), 6), float(Q[0, 0]) < 0
    (True, 0.693147, True)
    >>> banded_generator(torch.zeros(1, 4), [1], causal=True)
    Traceback (most recent call last):
        ...
    ValueError: offsets must all be negative when causal=True (position i reads only j = i + offset < i), got [1]
    """
    offsets = check_offsets(offsets, causal=check_flag("causal", causal))
    if not isinstance(offdiag_logits, torch.Tensor) or not offdiag_logits.is_floating_point():
        raise TypeError(f"offdiag_logits must be a floating-point torch tensor, got {type(offdiag_logits).__name__}")
    if offdiag_logits.ndim < 2 or offdiag_logits.shape[-2] != len(offsets):
        raise ValueError(
            f"offdiag_logits must have shape [..., len(offsets)={len(offsets)}, n], "
            f"got shape {tuple(offdiag_logits.shape)}"
        )
    check_finite("offdiag_logits", offdiag_logits.detach())
    return BandedGenerator(offsets, F.softplus(offdiag_logits))


def symmetric_banded_generator(weight_logits, offsets) -> BandedGenerator:
    r"""The negative Laplacian :math:`-L = W - D` of a symmetric banded weight :math:`W` with softplus entries.

    .. math::

        W_{i,\,i+\delta} = W_{i+\delta,\,i} = \operatorname{softplus}(s_{\delta,i}) \quad (\delta > 0,\
        0 \le i < n - \delta), \qquad D = \operatorname{diag}(W\mathbf 1), \qquad L = D - W.

    :math:`-L` is a symmetric Markov generator, so :math:`e^{-tL}` is symmetric and doubly stochastic and a
    contraction in every :math:`\ell^p`.  Stored with offsets :math:`\pm\delta` (the rate at
    :math:`-\delta` in row :math:`i` is the weight of the edge :math:`(i-\delta, i)`).

    Parameters
    ----------
    weight_logits : torch.Tensor, shape=[..., len(offsets), n]
        Logits :math:`s_{\delta,i}` of the edge :math:`(i, i+\delta)`; the last :math:`\delta` of each row are
        ignored (no such edge).
    offsets : sequence of int
        Distinct positive distances :math:`\delta`.

    Returns
    -------
    BandedGenerator
        With offsets ``(+δ..., -δ...)``.

    References
    ----------
    Lie-Exponential Roadmap, "Heat-kernel attention ... with :math:`Q = -L` the graph Laplacian,
    :math:`P = \exp(-tL)` is a heat kernel" [SEED].

    Examples
    --------
    >>> import torch
    >>> Q = symmetric_banded_generator(torch.randn(2, 5, dtype=torch.float64), [1, 2]).dense()
    >>> bool(torch.equal(Q, Q.mT)), bool(torch.allclose(Q.sum(-1), torch.zeros(5, dtype=torch.float64)))
    (True, True)
    """
    offsets = check_offsets(offsets, positive=True)
    if not isinstance(weight_logits, torch.Tensor) or not weight_logits.is_floating_point():
        raise TypeError(f"weight_logits must be a floating-point torch tensor, got {type(weight_logits).__name__}")
    if weight_logits.ndim < 2 or weight_logits.shape[-2] != len(offsets):
        raise ValueError(
            f"weight_logits must have shape [..., len(offsets)={len(offsets)}, n], "
            f"got shape {tuple(weight_logits.shape)}"
        )
    check_finite("weight_logits", weight_logits.detach())
    n = weight_logits.shape[-1]
    mask = _valid_mask(offsets, n, device=weight_logits.device, dtype=torch.bool)
    zero = torch.zeros((), dtype=weight_logits.dtype, device=weight_logits.device)
    up = torch.where(mask, F.softplus(weight_logits), zero)
    # Row i at offset -δ holds the weight of edge (i-δ, i), stored at row i-δ of ``up``: shift down by δ.
    down = torch.stack([shift(up[..., r, :, None], -o)[..., 0] for r, o in enumerate(offsets)], dim=-2)
    return BandedGenerator((*offsets, *(-o for o in offsets)), torch.cat([up, down], dim=-2))


def multiscale_offsets(levels: int, *, causal: bool = False) -> tuple[int, ...]:
    r"""Dyadic offsets :math:`\pm1, \pm2, \pm4, \dots, \pm2^{L}` (only the negative ones if ``causal``).

    With :math:`L = O(\log n)` levels a banded generator couples every pair of positions within a few jumps.

    References
    ----------
    Lie-Exponential Roadmap, "Multiscale banded synthesis. For offsets
    :math:`\delta \in \{\pm1, \pm2, \ldots, \pm2^L\}`" [SEED].

    Examples
    --------
    >>> multiscale_offsets(2), multiscale_offsets(1, causal=True)
    ((-4, -2, -1, 1, 2, 4), (-2, -1))
    """
    levels = check_integer("levels", levels, 0, MAX_LEVELS)
    causal = check_flag("causal", causal)
    positive = tuple(2**k for k in range(levels + 1))
    negative = tuple(-o for o in reversed(positive))
    return negative if causal else negative + positive
