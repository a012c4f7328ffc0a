r"""Exp-Markov and heat-kernel attention: :math:`e^{tQ}X` for a learned banded Markov generator, in torch ops.

A Markov generator :math:`Q` (negative convention :math:`\mathcal L = P - I`: off-diagonal rates
:math:`Q_{ij} \ge 0`, rows summing to 0) exponentiates to a row-stochastic matrix :math:`e^{tQ}` for every
:math:`t \ge 0`.  Used as an attention operator, :math:`X \mapsto e^{tQ}X` is nonnegative and mass-preserving
*by construction*, with no softmax normalisation; :math:`t` sets the reach of the mixing and a banded
:math:`Q` keeps the cost at :math:`O(n\,w\,d)` per power.  With :math:`Q = -L` for a symmetric graph Laplacian
:math:`L = D - W` the operator is the heat kernel :math:`e^{-tL}`: symmetric and doubly stochastic.

The exponential is applied by uniformization (Jensen 1953),

.. math::

    e^{tQ}X = \sum_{k\ge 0} \pi_k(\lambda t)\,P^kX, \qquad P = I + Q/\lambda, \qquad
    \pi_k(\Lambda) = e^{-\Lambda}\frac{\Lambda^k}{k!}, \qquad \lambda \ge \max_i(-Q_{ii}),

written entirely in differentiable torch operations (the :mod:`workbench.expmv` engine converts to numpy and
cannot carry gradients).  The Poisson cut-off is the engine's own
(:func:`workbench.expmv.poisson_truncation`), so the truncation rule is shared.

uniformized_action   -- e^{tQ}X by uniformization, differentiable in Q, t and X; batched, several t at once
BandedGenerator      -- a banded Markov generator stored by its rates: Q X by shifted adds, or the dense Q
banded_generator     -- softplus rates at the given offsets, rows summing to 0, nothing across the ends
symmetric_banded_generator -- -L = W - D for a symmetric banded weight W (the heat-kernel generator)
multiscale_offsets   -- ±1, ±2, ±4, ..., ±2^levels (or the negative half, for a causal band)
ExpMarkovAttention   -- per head: content-dependent banded Q, learnable t, output e^{tQ}V
HeatKernelAttention  -- per head: symmetric banded Laplacian, several t, outputs mixed or concatenated

References
----------
lie-exponential-roadmap (seed), "ExpMarkovAttention (global, normalized attention)" and "Heat-kernel
attention (diffusion on sequence/graph)" [SEED]; "Multiscale banded synthesis:
:math:`(Q)_{i,i+\delta} = \phi_\delta(\langle q_i, R_{i\leftarrow i+\delta}k_{i+\delta}\rangle)`,
:math:`(Q)_{ii} = -\sum_{\delta\neq0}(Q)_{i,i+\delta}`" [SEED; the display was lost in extraction and is
reconstructed here with :math:`R = I`, no feature transport — RECON].
A. Jensen, "Markoff chains as an aid in the study of Markoff processes", Skand. Aktuarietidskr. 36 (1953).
B. L. Fox and P. W. Glynn, "Computing Poisson probabilities", Comm. ACM 31 (1988), 440–445.
attention-geometry-math §A.10 (attention maps as row-stochastic operators; row entropy).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import torch
import torch.nn.functional as F
from torch import nn

from workbench.expmv import BandedMatrix, poisson_truncation
from workbench.validation import check_choice, check_finite, check_in_range, check_integer

__all__ = [
    "BandedGenerator",
    "ExpMarkovAttention",
    "HeatKernelAttention",
    "banded_generator",
    "multiscale_offsets",
    "symmetric_banded_generator",
    "uniformized_action",
]

#: Relative margin of the uniformization rate over max_i(-Q_ii), as in the expmv engine
#: (:data:`workbench.expmv._uniformization.RATE_MARGIN`): keeps every diagonal entry of P = I + Q/λ strictly
#: positive, so the stochastic powers stay nonnegative to rounding.
RATE_MARGIN = 2.0**-20

#: Default cap on the number of uniformization powers (:func:`uniformized_action` and both layers): it allows
#: :math:`\lambda t \lesssim 9.2\cdot10^3` at the default ``tol``.  Each power is a banded product kept for the
#: backward pass, so a huge :math:`\lambda t` (a 2-state chain with exit rate 2 at :math:`t = 10^6` needs
#: ~2·10^6 powers) fails fast with a ``ValueError`` instead of running for minutes or exhausting memory.
DEFAULT_MAX_TERMS = 10_000


# ---- validation helpers -----------------------------------------------------------------------


def _check_offsets(offsets, *, n: int | None = None, causal: bool = False, positive: bool = False) -> tuple[int, ...]:
    r"""Offsets as a tuple of distinct nonzero ints; the one offsets validator of :mod:`workbench.nn`.

    ``TypeError`` for something that is not a sequence of integers; ``ValueError`` for bad values: empty, zero,
    repeated, positive when ``causal``, negative when ``positive``, or (if ``n`` is given) :math:`|\delta| > n-1`.
    Without ``n`` an offset may exceed the sequence (its rates are then dropped by :class:`BandedGenerator`).
    """
    if isinstance(offsets, (str, bytes)):
        values = None
    else:
        try:
            values = list(offsets)
        except TypeError:
            values = None
    if values is None:
        raise TypeError(f"offsets must be a non-empty sequence of distinct nonzero integers, got {offsets!r}")
    for o in values:
        if isinstance(o, bool) or not isinstance(o, Integral):
            raise TypeError(f"offsets must hold integers, got {o!r} in {offsets!r}")
    values = [int(o) for o in values]
    if not values or any(o == 0 for o in values) or len(set(values)) != len(values):
        raise ValueError(f"offsets must be a non-empty sequence of distinct nonzero integers, got {tuple(values)}")
    if n is not None:
        for o in values:
            if abs(o) > n - 1:
                raise ValueError(f"offsets must be nonzero integers with |delta| <= n - 1 = {n - 1}, got {o}")
    if causal and any(o > 0 for o in values):
        raise ValueError(
            f"offsets must all be negative when causal=True (position i reads only j = i + offset < i), got {values}"
        )
    if positive and any(o < 0 for o in values):
        raise ValueError(f"offsets must be positive distances of the symmetric band, got {values}")
    return tuple(values)


def _check_heads(d_model, n_heads) -> tuple[int, int]:
    d_model = check_integer("d_model", d_model, 1)
    n_heads = check_integer("n_heads", n_heads, 1)
    if d_model % n_heads:
        raise ValueError(f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}")
    return d_model, n_heads


def _check_input(x, d_model: int, dtype: torch.dtype):
    """``x`` of shape [batch, n, d_model], floating, of the layer's parameter dtype, finite."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor of shape [batch, n, d_model={d_model}], got {type(x).__name__}")
    if x.ndim != 3 or x.shape[-1] != d_model or x.shape[1] < 1:
        raise ValueError(f"x must have shape [batch, n, d_model={d_model}], got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating-point tensor, got dtype {x.dtype}")
    if x.dtype != dtype:
        raise TypeError(
            f"x must have the layer's dtype {dtype}, got x of dtype {x.dtype}; convert x (x.to({dtype})) "
            "or the layer (layer.to(x.dtype))"
        )
    check_finite("x", x.detach())
    return x


def _split_heads(y, n_heads: int):
    """[B, n, H·d_head] -> [B, H, n, d_head] (the head split shared by both attention layers)."""
    b, n, width = y.shape
    return y.reshape(b, n, n_heads, width // n_heads).transpose(1, 2)


def _check_max_terms(max_terms):
    return None if max_terms is None else check_integer("max_terms", max_terms, 1)


def _inverse_softplus(y: float) -> float:
    r""":math:`\operatorname{softplus}^{-1}(y) = \log(e^y - 1)`, for a parameter initialised at ``y > 0``."""
    return y + math.log(-math.expm1(-y))


# ---- shifts: the O(n) building block of every banded product ------------------------------------


def _shift(x, offset: int):
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
    lie-exponential-roadmap (seed), "Banded generator: :math:`(Q)_{i,i+\delta} = \phi_\delta(c_{i,\delta})`,
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
        self.offsets = _check_offsets(offsets)
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

    def matmul(self, x):
        r""":math:`QX` by shifted adds, :math:`\sum_r R_{r}\odot(S_{o_r}X - X)`, for ``x`` of shape ``[..., n, d]``."""
        out = -self.exit_rates()[..., None] * x
        for r, view in enumerate(_shifted_views(x, self.offsets)):
            out = out + self.rates[..., r, :, None] * view
        return out

    def stochastic_step(self, x, rate):
        r""":math:`PX` with :math:`P = I + Q/\lambda`, written as a sum of nonnegative terms.

        .. math::

            (PX)_i = \Big(1 - \tfrac{1}{\lambda}\sum_r R_{r,i}\Big)X_i + \sum_r \tfrac{R_{r,i}}{\lambda}X_{i+o_r},

        ``rate`` a tensor broadcastable to the batch shape (detached).  Every coefficient is :math:`\ge 0` when
        :math:`\lambda \ge \max_i(-Q_{ii})`, so :math:`X \ge 0 \Rightarrow PX \ge 0` exactly in floating point.
        """
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
    lie-exponential-roadmap (seed), ExpMarkovAttention: "clamp off-diagonals :math:`\ge 0` via softplus",
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
    offsets = _check_offsets(offsets, causal=bool(causal))
    if not isinstance(offdiag_logits, torch.Tensor) or not offdiag_logits.is_floating_point():
        raise TypeError(f"offdiag_logits must be a floating-point torch tensor, got {type(offdiag_logits).__name__}")
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
    lie-exponential-roadmap (seed), "Heat-kernel attention ... with :math:`Q = -L` the graph Laplacian,
    :math:`P = \exp(-tL)` is a heat kernel" [SEED].

    Examples
    --------
    >>> import torch
    >>> Q = symmetric_banded_generator(torch.randn(2, 5, dtype=torch.float64), [1, 2]).dense()
    >>> bool(torch.equal(Q, Q.mT)), bool(torch.allclose(Q.sum(-1), torch.zeros(5, dtype=torch.float64)))
    (True, True)
    """
    offsets = _check_offsets(offsets, positive=True)
    if not isinstance(weight_logits, torch.Tensor) or not weight_logits.is_floating_point():
        raise TypeError(f"weight_logits must be a floating-point torch tensor, got {type(weight_logits).__name__}")
    if weight_logits.ndim < 2 or weight_logits.shape[-2] != len(offsets):
        raise ValueError(
            f"weight_logits must have shape [..., len(offsets)={len(offsets)}, n], "
            f"got shape {tuple(weight_logits.shape)}"
        )
    n = weight_logits.shape[-1]
    mask = _valid_mask(offsets, n, device=weight_logits.device, dtype=torch.bool)
    zero = torch.zeros((), dtype=weight_logits.dtype, device=weight_logits.device)
    up = torch.where(mask, F.softplus(weight_logits), zero)
    # Row i at offset -δ holds the weight of edge (i-δ, i), stored at row i-δ of ``up``: shift down by δ.
    down = torch.stack([_shift(up[..., r, :, None], -o)[..., 0] for r, o in enumerate(offsets)], dim=-2)
    return BandedGenerator((*offsets, *(-o for o in offsets)), torch.cat([up, down], dim=-2))


def multiscale_offsets(levels: int, *, causal: bool = False) -> tuple[int, ...]:
    r"""Dyadic offsets :math:`\pm1, \pm2, \pm4, \dots, \pm2^{L}` (only the negative ones if ``causal``).

    With :math:`L = O(\log n)` levels a banded generator couples every pair of positions within a few jumps.

    References
    ----------
    lie-exponential-roadmap (seed), "Multiscale banded synthesis. For offsets
    :math:`\delta \in \{\pm1, \pm2, \ldots, \pm2^L\}`" [SEED].

    Examples
    --------
    >>> multiscale_offsets(2), multiscale_offsets(1, causal=True)
    ((-4, -2, -1, 1, 2, 4), (-2, -1))
    """
    levels = check_integer("levels", levels, 0)
    positive = tuple(2**k for k in range(levels + 1))
    negative = tuple(-o for o in reversed(positive))
    return negative if causal else negative + positive


# ---- uniformization in torch -------------------------------------------------------------------


def _as_generator(Q):
    """(BandedGenerator or None, dense tensor or None, batch shape, n) after checking Q is a generator."""
    if isinstance(Q, BandedGenerator):
        return Q, None, Q.batch_shape, Q.n
    if not isinstance(Q, torch.Tensor) or not Q.is_floating_point():
        raise TypeError(f"Q must be a BandedGenerator or a floating-point torch tensor, got {type(Q).__name__}")
    if Q.ndim < 2 or Q.shape[-1] != Q.shape[-2]:
        raise ValueError(f"Q must have shape [..., n, n] (square), got shape {tuple(Q.shape)}")
    q = Q.detach()
    n = q.shape[-1]
    scale = float(q.abs().max()) if q.numel() else 0.0
    atol = 1e-10 * max(scale, 1.0)
    off = q - torch.diag_embed(torch.diagonal(q, dim1=-2, dim2=-1))
    sums = q.sum(dim=-1)
    if not bool(torch.isfinite(q).all()) or bool((off < -atol).any()) or bool((sums.abs() > atol * n).any()):
        raise ValueError(
            "Q must be a Markov generator (negative convention: off-diagonal entries >= 0, rows summing to 0), "
            f"got min off-diagonal {float(off.min()):.3g} and max |row sum| {float(sums.abs().max()):.3g}"
        )
    return None, Q, tuple(Q.shape[:-2]), n


def _check_tol(tol) -> float:
    return check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)


def uniformized_action(Q, X, t, *, rate=None, tol=None, max_terms=DEFAULT_MAX_TERMS):
    r"""The action :math:`e^{tQ}X` of a Markov semigroup by uniformization, differentiable in :math:`Q, t, X`.

    .. math::

        e^{tQ}X \approx \sum_{k=0}^{K} w_k\, P^k X, \qquad P = I + Q/\lambda, \qquad
        w_k = \frac{\pi_k(\lambda t)}{\sum_{j\le K}\pi_j(\lambda t)}, \qquad
        \log\pi_k(\Lambda) = -\Lambda + k\log\Lambda - \log\Gamma(k+1).

    :math:`\lambda \ge \max_i(-Q_{ii})` is detached from the graph: :math:`e^{tQ}` does not depend on it, so it
    is treated as a constant (per batch element; by default :math:`(1 + 2^{-20})\max_i(-Q_{ii})`, the margin
    keeping the diagonal of :math:`P` positive).  The weights are computed in log space with
    :func:`torch.lgamma`, so the gradient in :math:`t` flows through them; the cut-off :math:`K` is the right
    Fox–Glynn point of :func:`workbench.expmv.poisson_truncation` at the largest detached :math:`\lambda t`
    (neglected mass :math:`\le` ``tol``/2), the truncation rule of the expmv engine, and at least 1 (so the
    derivative in :math:`t` at :math:`t = 0` is :math:`QX`, not 0).  Renormalising the kept
    weights keeps :math:`e^{tQ}\mathbf 1 = \mathbf 1` to rounding, and every term is nonnegative for
    :math:`X \ge 0`, so the result is a stochastic average of :math:`X` to rounding.

    **Accuracy of the weights.**  :math:`-\Lambda + k\log\Lambda - \log k!` cancels terms of size
    :math:`\Lambda`, so each weight carries a relative error of a few :math:`u\Lambda` (measured against the engine's
    mode-centred weights: :math:`1.3\cdot10^{-13}` at :math:`\lambda t = 100`, :math:`1.3\cdot10^{-12}` at
    :math:`10^3`, :math:`1.5\cdot10^{-11}` at :math:`10^4`, float64).  The engine's recursion avoids this but is not
    differentiable in :math:`t`; for attention layers (:math:`\lambda t` of tens to hundreds) it is far below
    what training notices.

    The powers :math:`P^kX` do not depend on :math:`t`: several times (a trailing batch dimension of ``t``,
    e.g. ``[heads, scales]``) cost one sequence of powers.  No tensor that needs a gradient is edited in place.

    Parameters
    ----------
    Q : BandedGenerator or torch.Tensor, shape=[..., n, n]
        Markov generator (negative convention: off-diagonal rates :math:`\ge 0`, rows summing to 0); a
        :class:`BandedGenerator` is applied by shifted adds, a dense tensor by ``matmul``.
    X : torch.Tensor, shape=[..., n, d]
        Features (rows are states).
    t : float or torch.Tensor
        Times :math:`t \ge 0`, broadcastable against the batch shape of ``Q`` (e.g. one per head).
    rate : float, optional
        A uniformization rate :math:`\lambda \ge \max_i(-Q_{ii})` for every batch element.
    tol : float, optional
        Neglected Poisson mass, in :math:`(0, 1)`; default the unit roundoff of ``X``'s dtype
        (:math:`2^{-53}` for float64, :math:`2^{-24}` for float32): a smaller mass cannot show in the result.
    max_terms : int or None
        Raise ``ValueError`` (naming ``t``, :math:`\lambda t` and the cap) instead of running when more than this
        many powers would be needed; default :data:`DEFAULT_MAX_TERMS` = 10 000 (:math:`\lambda t \lesssim 9.2
        \cdot 10^3`).  ``None`` removes the cap (cost and memory then grow like :math:`\lambda t`).

    Returns
    -------
    torch.Tensor, shape=broadcast(Q batch, t, X batch) + [n, d]

    Raises
    ------
    ValueError
        ``Q`` not a generator, ``X`` or ``t`` not finite, ``t < 0``, ``rate`` below :math:`\max_i(-Q_{ii})`,
        shapes that do not match, or more than ``max_terms`` powers needed.
    TypeError
        ``Q`` or ``X`` not floating-point torch tensors, or of different dtypes.

    References
    ----------
    lie-exponential-roadmap (seed), "Uniformization: pick :math:`\lambda \ge \max_i -Q_{ii}`; then
    :math:`\exp(tQ) = e^{-\lambda t}\sum_{k\ge0}(\lambda t)^k/k!\,T^k` with :math:`T = I + Q/\lambda`" [SEED];
    Jensen (1953); Fox & Glynn (1988).

    Examples
    --------
    A two-state chain against its closed form, with the gradient in :math:`t` against :math:`Qe^{tQ}`:

    >>> import torch
    >>> a, b = 2.0, 0.5
    >>> Q = torch.tensor([[-a, a], [b, -b]], dtype=torch.float64)
    >>> t = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    >>> P = uniformized_action(Q, torch.eye(2, dtype=torch.float64), t)
    >>> exact = torch.linalg.matrix_exp(1.3 * Q)
    >>> bool(torch.allclose(P, exact, rtol=0, atol=1e-15))
    True
    >>> P[0, 1].backward()
    >>> bool(torch.isclose(t.grad, (Q @ exact)[0, 1], rtol=1e-12))
    True
    """
    banded, dense, q_batch, n = _as_generator(Q)
    if not isinstance(X, torch.Tensor) or not X.is_floating_point():
        raise TypeError(f"X must be a floating-point torch tensor of shape [..., n, d], got {type(X).__name__}")
    if X.ndim < 2 or X.shape[-2] != n:
        raise ValueError(f"X must have shape [..., n={n}, d], got shape {tuple(X.shape)}")
    q_dtype = banded.rates.dtype if banded is not None else dense.dtype
    if q_dtype != X.dtype:
        raise TypeError(f"Q and X must have the same floating type, got Q {q_dtype} and X {X.dtype}; convert one")
    check_finite("X", X.detach())
    if tol is None:
        tol = torch.finfo(X.dtype).eps / 2 if isinstance(X, torch.Tensor) and X.is_floating_point() else 2.0**-53
    tol = _check_tol(tol)
    max_terms = _check_max_terms(max_terms)
    dtype, device = X.dtype, X.device
    if isinstance(t, torch.Tensor):
        times = t.to(dtype=dtype, device=device)
    elif isinstance(t, Real) and not isinstance(t, bool):
        times = torch.tensor(float(t), dtype=dtype, device=device)
    else:
        raise TypeError(f"t must be a real number or a torch tensor, got {type(t).__name__}")
    t_host = times.detach()
    if not bool(torch.isfinite(t_host).all()) or bool((t_host < 0).any()):
        raise ValueError(
            "t must be finite and >= 0 (e^(tQ) with t < 0 is not a Markov semigroup), "
            f"got min {float(t_host.min()):.6g}"
        )
    try:
        weight_shape = torch.broadcast_shapes(q_batch, tuple(times.shape))
        torch.broadcast_shapes(weight_shape, tuple(X.shape[:-2]))
    except RuntimeError:
        raise ValueError(
            f"the batch shapes of Q {q_batch}, t {tuple(times.shape)} and X {tuple(X.shape[:-2])} do not broadcast"
        ) from None

    exit_rates = (banded.exit_rates() if banded is not None else -torch.diagonal(dense, dim1=-2, dim2=-1)).detach()
    top = exit_rates.amax(dim=-1).to(dtype) if n else torch.zeros(q_batch, dtype=dtype, device=device)
    if rate is not None:
        rate = check_in_range("rate", rate, 0.0, low_inclusive=False)
        if top.numel() and float(top.max()) > rate:
            raise ValueError(f"rate must be >= max_i(-Q_ii) = {float(top.max()):.6g}, got {rate!r}")
        lam = torch.full(q_batch, rate, dtype=dtype, device=device)
    else:
        lam = torch.where(top > 0, top * (1.0 + RATE_MARGIN), torch.ones((), dtype=dtype, device=device))
    mean = lam * times  # Λ = λt, differentiable in t only (λ is detached)
    peak = float(mean.detach().max()) if mean.numel() else 0.0

    def too_many(needed: str):
        at = int(mean.detach().argmax()) if mean.numel() else 0
        t_peak = float(times.detach().expand(mean.shape).reshape(-1)[at]) if mean.numel() else 0.0
        return ValueError(
            f"uniformization needs {needed} powers for max λt = {peak:.6g} (t = {t_peak:.6g}), more than "
            f"max_terms = {max_terms}; shorten t, lower the rates, or raise max_terms"
        )

    # The right Fox–Glynn point exceeds λt, so a cap below λt fails before the (itself O(λt)) truncation search.
    if max_terms is not None and peak + 1 > max_terms:
        raise too_many(f"at least {math.floor(peak) + 1}")
    _, right, _ = poisson_truncation(peak, tol)
    right = max(right, 1)  # at λt = 0 the cut-off is 0; one more power carries the derivative Q X in t
    if max_terms is not None and right + 1 > max_terms:
        raise too_many(str(right + 1))
    # log π_k(Λ) in log space; Λ + tiny keeps log finite at t = 0 (then π_0 = 1, π_k = 0 to rounding).
    k = torch.arange(right + 1, dtype=dtype, device=device)
    safe = (mean + torch.finfo(dtype).tiny)[..., None]
    log_pi = -safe + k * torch.log(safe) - torch.lgamma(k + 1.0)
    weights = torch.softmax(log_pi, dim=-1)  # π_k / Σ_{j≤K} π_j, stable for any Λ

    def step(y):
        if banded is not None:
            return banded.stochastic_step(y, lam)
        return y + (dense @ y) / lam[..., None, None]

    power = X
    total = weights[..., 0, None, None] * power
    for j in range(1, right + 1):
        power = step(power)
        total = total + weights[..., j, None, None] * power
    return total


# ---- layers ---------------------------------------------------------------------------------------


class ExpMarkovAttention(nn.Module):
    r"""Multi-head attention whose operator is :math:`e^{t_hQ_h(x)}` for a learned banded Markov generator.

    Per head :math:`h`, with :math:`q_i = W_Q^{(h)}x_i`, :math:`k_i = W_K^{(h)}x_i`, :math:`v_i = W_V^{(h)}x_i`
    (head width :math:`d_h = d_{\text{model}}/H`):

    .. math::

        (Q_h)_{i,\,i+\delta} = \operatorname{softplus}\!\Big(a_{h,\delta}\,
        \frac{\langle q_i, k_{i+\delta}\rangle}{\sqrt{d_h}} + b_{h,\delta}\Big), \qquad
        (Q_h)_{ii} = -\sum_\delta (Q_h)_{i,\,i+\delta}, \qquad
        Y = \big[\,e^{t_1Q_1}V_1 \,\big|\, \cdots \,\big|\, e^{t_HQ_H}V_H\,\big]W_O,

    with :math:`t_h = \operatorname{softplus}(\tau_h) > 0` learnable.  Each :math:`e^{t_hQ_h}` is row-stochastic
    and nonnegative by construction (no softmax), its reach set by :math:`t_h`; the band costs
    :math:`O(n\,|\delta|\,d_h)` per uniformization power.  :math:`\phi_\delta(c) = \operatorname{softplus}(a_\delta c
    + b_\delta)` is the seed's "small learned" :math:`\phi_\delta`, here affine-then-softplus [RECON], with no feature
    transport (:math:`R_{i\leftarrow j} = I`).

    Parameters
    ----------
    d_model, n_heads : int
        Model width and number of heads (``d_model % n_heads == 0``).
    offsets : sequence of int, optional
        Band offsets; default :func:`multiscale_offsets(2, causal=causal) <multiscale_offsets>`.
    causal : bool
        Only negative offsets (position :math:`i` reads earlier positions).  Then :math:`Q` and :math:`e^{tQ}`
        are exactly lower triangular: the returned operator has exact zeros above the diagonal, and row
        :math:`i` of :math:`e^{tQ}` depends on rows :math:`\le i` of :math:`Q` only.  The *computed* output at
        position :math:`i` still depends on later tokens at rounding level, through two scalars shared by all
        rows of a head: the uniformization rate :math:`\lambda = (1+2^{-20})\max_j(-Q_{jj})` and the Poisson
        cut-off :math:`K(\lambda t)`.  :math:`e^{tQ}` does not depend on :math:`\lambda`, so a later token
        changes only the rounding of the sum and its neglected Poisson mass (:math:`\le` ``tol``): measured
        :math:`\approx 4\cdot10^{-16}` relative at :math:`\lambda t` of order 10 in float64, of the order of a
        few :math:`Ku`.  A per-row :math:`\lambda` (e.g. a running maximum) does not fix this, because
        uniformization needs one :math:`P = I + Q/\lambda` shared by all rows.
    t_init : float
        Initial time of every head, :math:`> 0`.
    bias : bool
        Biases in the four projections.
    tol : float, optional
        Neglected Poisson mass of the uniformization (:func:`uniformized_action`); default the input's unit
        roundoff.
    max_terms : int or None
        Cap on the uniformization powers per forward (:func:`uniformized_action`); default
        :data:`DEFAULT_MAX_TERMS`.  A forward whose :math:`\max_h t_h\lambda_h` needs more raises ``ValueError``.

    References
    ----------
    lie-exponential-roadmap (seed), "ExpMarkovAttention (global, normalized attention)", "Multiscale banded
    synthesis" [SEED]; :math:`\phi_\delta` [RECON].

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> layer = ExpMarkovAttention(8, 2, offsets=(-1, 1, 2)).double()
    >>> y, P = layer(torch.randn(3, 5, 8, dtype=torch.float64), return_operator=True)
    >>> tuple(y.shape), tuple(P.shape)
    ((3, 5, 8), (3, 2, 5, 5))
    >>> bool((P >= 0).all()), bool(torch.allclose(P.sum(-1), torch.ones(3, 2, 5, dtype=torch.float64), atol=1e-14))
    (True, True)
    """

    def __init__(
        self,
        d_model,
        n_heads,
        offsets=None,
        causal=False,
        t_init=1.0,
        *,
        bias=True,
        tol=None,
        max_terms=DEFAULT_MAX_TERMS,
    ):
        super().__init__()
        self.d_model, self.n_heads = _check_heads(d_model, n_heads)
        self.causal = bool(causal)
        if offsets is None:
            offsets = multiscale_offsets(2, causal=self.causal)
        self.offsets = _check_offsets(offsets, causal=self.causal)
        t_init = check_in_range("t_init", t_init, 0.0, low_inclusive=False)
        self.tol = None if tol is None else _check_tol(tol)
        self.max_terms = _check_max_terms(max_terms)
        self.d_head = self.d_model // self.n_heads
        self.q_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.k_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.v_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.out_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        m = len(self.offsets)
        self.offset_scale = nn.Parameter(torch.ones(self.n_heads, m))  # a_{h,δ}
        self.offset_bias = nn.Parameter(torch.zeros(self.n_heads, m))  # b_{h,δ}
        self.raw_time = nn.Parameter(torch.full((self.n_heads,), _inverse_softplus(t_init)))  # τ_h

    @property
    def times(self):
        r"""The per-head times :math:`t_h = \operatorname{softplus}(\tau_h)`, shape ``[n_heads]``."""
        return F.softplus(self.raw_time)

    def generator(self, x) -> BandedGenerator:
        r"""The content-dependent generators :math:`Q_h(x)`: rates of shape ``[B, n_heads, len(offsets), n]``."""
        x = _check_input(x, self.d_model, self.q_proj.weight.dtype)
        q, k = _split_heads(self.q_proj(x), self.n_heads), _split_heads(self.k_proj(x), self.n_heads)
        scores = torch.stack([(q * _shift(k, o)).sum(-1) for o in self.offsets], dim=-2) / math.sqrt(self.d_head)
        logits = self.offset_scale[None, :, :, None] * scores + self.offset_bias[None, :, :, None]
        return banded_generator(logits, self.offsets, causal=self.causal)

    def forward(self, x, return_operator=False):
        """``y``, shape ``[B, n, d_model]``; with ``return_operator`` also the dense ``P``, shape ``[B, H, n, n]``."""
        gen = self.generator(x)
        t = self.times.to(x.dtype)  # [H], broadcast against the rates' batch [B, H]
        v = _split_heads(self.v_proj(x), self.n_heads)
        y = uniformized_action(gen, v, t, tol=self.tol, max_terms=self.max_terms)  # [B, H, n, d_head]
        b, _, n, _ = y.shape
        out = self.out_proj(y.transpose(1, 2).reshape(b, n, self.d_model))
        if not return_operator:
            return out
        eye = torch.eye(n, dtype=x.dtype, device=x.device)
        return out, uniformized_action(gen, eye, t, tol=self.tol, max_terms=self.max_terms)


class HeatKernelAttention(nn.Module):
    r"""Multi-head, multiscale heat-kernel attention :math:`\sum_s \alpha_{h,s}\,e^{-t_{h,s}L_h(x)}V_h`.

    Per head :math:`h`, a symmetric banded weight from a shared projection :math:`u_i = W_U^{(h)}x_i`,

    .. math::

        (W_h)_{i,\,i+\delta} = (W_h)_{i+\delta,\,i} = \operatorname{softplus}\!\Big(a_{h,\delta}
        \frac{\langle u_i, u_{i+\delta}\rangle}{\sqrt{d_h}} + b_{h,\delta}\Big), \qquad
        L_h = D_h - W_h,

    and several learnable times :math:`t_{h,s} = \operatorname{softplus}(\tau_{h,s})` per head.  Each
    :math:`e^{-t L_h}` is symmetric and doubly stochastic, with :math:`\lVert e^{-tL_h}\rVert_2 \le 1`; the
    scales are mixed by learned convex weights :math:`\alpha_{h,\cdot} = \operatorname{softmax}(\rho_{h,\cdot})`
    (``mix="learned"``; the mixture stays symmetric and doubly stochastic) or concatenated
    (``mix="concat"``, output projection of width :math:`H\cdot S\cdot d_h`).  All scales share one sequence of
    uniformization powers.

    Parameters
    ----------
    d_model, n_heads : int
        Model width and number of heads (``d_model % n_heads == 0``).
    times : sequence of float
        Initial times :math:`t_s > 0` (the same for every head; each learnable).
    offsets : sequence of int
        Positive band distances :math:`\delta` of the symmetric weight.
    mix : {'learned', 'concat'}
        How the scales are combined.
    bias : bool
        Biases in the projections.
    tol : float, optional
        Neglected Poisson mass of the uniformization; default the input's unit roundoff.
    max_terms : int or None
        Cap on the uniformization powers per forward (:func:`uniformized_action`); default
        :data:`DEFAULT_MAX_TERMS`.

    References
    ----------
    lie-exponential-roadmap (seed), "Heat-kernel attention (diffusion on sequence/graph) ... using multiple
    :math:`t`'s per head approximates multi-scale attention" [SEED]; the content-dependent weight [RECON].

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> layer = HeatKernelAttention(8, 2, times=(0.5, 2.0)).double()
    >>> y, P = layer(torch.randn(2, 6, 8, dtype=torch.float64), return_operator=True)
    >>> tuple(y.shape), tuple(P.shape), bool(torch.allclose(P, P.mT, atol=1e-15))
    ((2, 6, 8), (2, 2, 6, 6), True)
    """

    def __init__(
        self,
        d_model,
        n_heads,
        times=(0.5, 2.0),
        offsets=(1, 2),
        mix="learned",
        *,
        bias=True,
        tol=None,
        max_terms=DEFAULT_MAX_TERMS,
    ):
        super().__init__()
        self.d_model, self.n_heads = _check_heads(d_model, n_heads)
        try:
            values = [float(s) for s in times] if not isinstance(times, (str, bytes)) else None
        except (TypeError, ValueError):
            values = None
        if not values or any(not (math.isfinite(s) and s > 0) for s in values):
            raise ValueError(f"times must be a non-empty sequence of positive numbers, got {times!r}")
        self.offsets = _check_offsets(offsets, positive=True)
        self.mix = check_choice("mix", mix, ("learned", "concat"))
        self.tol = None if tol is None else _check_tol(tol)
        self.max_terms = _check_max_terms(max_terms)
        self.d_head = self.d_model // self.n_heads
        self.n_scales = len(values)
        self.u_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.v_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        width = self.d_model * (self.n_scales if self.mix == "concat" else 1)
        self.out_proj = nn.Linear(width, self.d_model, bias=bias)
        m = len(self.offsets)
        self.offset_scale = nn.Parameter(torch.ones(self.n_heads, m))
        self.offset_bias = nn.Parameter(torch.zeros(self.n_heads, m))
        raw = torch.tensor([_inverse_softplus(s) for s in values])
        self.raw_times = nn.Parameter(raw.repeat(self.n_heads, 1))  # τ_{h,s}
        self.mix_logits = nn.Parameter(torch.zeros(self.n_heads, self.n_scales)) if self.mix == "learned" else None

    @property
    def times(self):
        r"""The times :math:`t_{h,s} = \operatorname{softplus}(\tau_{h,s})`, shape ``[n_heads, n_scales]``."""
        return F.softplus(self.raw_times)

    def mixing_weights(self):
        r"""The convex weights :math:`\alpha_{h,s}`, shape ``[n_heads, n_scales]`` (``None`` for ``mix='concat'``)."""
        return None if self.mix_logits is None else torch.softmax(self.mix_logits, dim=-1)

    def generator(self, x) -> BandedGenerator:
        r"""The symmetric generators :math:`-L_h(x)`: rates of shape ``[B, n_heads, 2·len(offsets), n]``."""
        x = _check_input(x, self.d_model, self.u_proj.weight.dtype)
        u = _split_heads(self.u_proj(x), self.n_heads)
        scores = torch.stack([(u * _shift(u, o)).sum(-1) for o in self.offsets], dim=-2) / math.sqrt(self.d_head)
        logits = self.offset_scale[None, :, :, None] * scores + self.offset_bias[None, :, :, None]
        return symmetric_banded_generator(logits, self.offsets)

    def _diffuse(self, gen, features, dtype):
        """Σ_s α_{h,s} e^{-t_{h,s} L_h} features ([B,H,n,k] -> [B,H,n,k]) or the stack over s ([B,H,S,n,k])."""
        rates = BandedGenerator(gen.offsets, gen.rates[:, :, None])  # batch [B, H, 1]: shares powers over s
        stacked = uniformized_action(
            rates, features[:, :, None], self.times.to(dtype), tol=self.tol, max_terms=self.max_terms
        )
        if self.mix_logits is None:
            return stacked
        return (self.mixing_weights().to(dtype)[None, :, :, None, None] * stacked).sum(dim=2)

    def forward(self, x, return_operator=False):
        """``y`` of shape ``[B, n, d_model]``; with ``return_operator`` also the dense operator per head.

        The operator has shape ``[B, H, n, n]`` (``mix='learned'``) or ``[B, H, S, n, n]`` (``mix='concat'``).
        """
        gen = self.generator(x)
        v = _split_heads(self.v_proj(x), self.n_heads)
        y = self._diffuse(gen, v, x.dtype)
        b, n = x.shape[0], x.shape[1]
        if self.mix_logits is None:  # [B, H, S, n, dh] -> [B, n, H·S·dh]
            y = y.permute(0, 3, 1, 2, 4).reshape(b, n, self.n_heads * self.n_scales * self.d_head)
        else:
            y = y.transpose(1, 2).reshape(b, n, self.d_model)
        out = self.out_proj(y)
        if not return_operator:
            return out
        eye = torch.eye(n, dtype=x.dtype, device=x.device).expand(b, self.n_heads, n, n)
        return out, self._diffuse(gen, eye, x.dtype)
