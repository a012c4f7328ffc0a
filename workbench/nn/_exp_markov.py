r"""Exp-Markov and heat-kernel attention layers: :math:`e^{tQ}V` for a learned banded Markov generator.

A Markov generator :math:`Q` (negative convention :math:`\mathcal L = P - I`: off-diagonal rates
:math:`Q_{ij} \ge 0`, rows summing to 0) exponentiates to a row-stochastic matrix :math:`e^{tQ}` for every
:math:`t \ge 0`.  Used as an attention operator, :math:`X \mapsto e^{tQ}X` is nonnegative and mass-preserving
*by construction*, with no softmax normalisation; :math:`t` sets the reach of the mixing and a banded
:math:`Q` keeps the cost at :math:`O(n\,w\,d)` per power.  With :math:`Q = -L` for a symmetric graph Laplacian
:math:`L = D - W` the operator is the heat kernel :math:`e^{-tL}`: symmetric and doubly stochastic.

The exponential is applied by uniformization in differentiable torch operations
(:func:`~workbench.nn._uniformization.uniformized_action`) to a content-dependent banded generator
(:class:`~workbench.nn._banded_generator.BandedGenerator`).

ExpMarkovAttention   -- per head: content-dependent banded Q, learnable t (per head or per layer), output e^{tQ}V
HeatKernelAttention  -- per head: symmetric banded Laplacian, several t, outputs mixed or concatenated

References
----------
Lie-Exponential Roadmap, "ExpMarkovAttention (global, normalized attention)" and "Heat-kernel
attention (diffusion on sequence/graph)" [SEED]; "Multiscale banded synthesis:
:math:`(Q)_{i,i+\delta} = \phi_\delta(\langle q_i, R_{i\leftarrow i+\delta}k_{i+\delta}\rangle)`,
:math:`(Q)_{ii} = -\sum_{\delta\neq0}(Q)_{i,i+\delta}`" [SEED; the display was lost in extraction and is
reconstructed here with :math:`R = I`, no feature transport — RECON].
A. Jensen, "Markoff chains as an aid in the study of Markoff processes", Skand. Aktuarietidskr. 36 (1953).
B. L. Fox and P. W. Glynn, "Computing Poisson probabilities", Comm. ACM 31 (1988), 440–445.
book/reference.md §A.10 (attention maps as row-stochastic operators; row entropy).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from workbench.nn._banded_generator import (
    BandedGenerator,
    banded_generator,
    multiscale_offsets,
    shift,
    symmetric_banded_generator,
)
from workbench.nn._primitives import check_finite_result, check_offsets, check_width
from workbench.nn._uniformization import DEFAULT_MAX_TERMS, check_max_terms, check_tol, uniformized_action
from workbench.validation import check_choice, check_finite, check_flag, check_in_range, check_integer

__all__ = ["ExpMarkovAttention", "HeatKernelAttention"]


# ---- validation helpers -----------------------------------------------------------------------


#: The largest finite float32: the layers' parameters are float32 until cast.
FLOAT32_MAX = float(torch.finfo(torch.float32).max)


def _check_heads(d_model, n_heads) -> tuple[int, int]:
    d_model = check_width("d_model", d_model, 1, matrices=4)
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


def _inverse_softplus(y: float) -> float:
    r""":math:`\operatorname{softplus}^{-1}(y) = \log(e^y - 1)`, for a parameter initialised at ``y > 0``."""
    return y + math.log(-math.expm1(-y))


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

    with :math:`t_h = \operatorname{softplus}(\tau_h) > 0` learnable (``time_per="head"``, the default), or
    one time :math:`t_h = t = \operatorname{softplus}(\tau)` shared by the layer's heads (``time_per="layer"``:
    one reach per layer, the heads differing only through their generators).  Each :math:`e^{t_hQ_h}` is
    row-stochastic
    and nonnegative by construction (no softmax), its reach set by :math:`t_h`; the band costs
    :math:`O(n\,|\delta|\,d_h)` per uniformization power.  :math:`\phi_\delta(c) = \operatorname{softplus}(a_\delta c
    + b_\delta)` is the roadmap's "small learned" :math:`\phi_\delta`, here affine-then-softplus [RECON], with no
    feature transport (:math:`R_{i\leftarrow j} = I`).

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
    time_per : {'head', 'layer'}
        One learned time per head (``raw_time`` of shape ``[n_heads]``) or one per layer, shared by its heads
        (``raw_time`` of shape ``[1]``).  :attr:`times` has shape ``[n_heads]`` either way.
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
    Lie-Exponential Roadmap, "ExpMarkovAttention (global, normalized attention)", "Multiscale banded
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

    One time for the whole layer: a single parameter, read by every head.

    >>> shared = ExpMarkovAttention(8, 2, causal=True, t_init=0.5, time_per="layer")
    >>> tuple(shared.raw_time.shape), [round(float(t), 6) for t in shared.times.detach()]
    ((1,), [0.5, 0.5])
    """

    def __init__(
        self,
        d_model,
        n_heads,
        offsets=None,
        causal=False,
        t_init=1.0,
        *,
        time_per="head",
        bias=True,
        tol=None,
        max_terms=DEFAULT_MAX_TERMS,
    ):
        super().__init__()
        self.d_model, self.n_heads = _check_heads(d_model, n_heads)
        self.time_per = check_choice("time_per", time_per, ("head", "layer"))
        self.causal = check_flag("causal", causal)
        if offsets is None:
            offsets = multiscale_offsets(2, causal=self.causal)
        self.offsets = check_offsets(offsets, causal=self.causal)
        # the time is a float32 parameter until the layer is cast
        t_init = check_in_range("t_init", t_init, 0.0, FLOAT32_MAX, low_inclusive=False)
        self.tol = None if tol is None else check_tol(tol)
        self.max_terms = check_max_terms(max_terms)
        self.d_head = self.d_model // self.n_heads
        self.q_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.k_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.v_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        self.out_proj = nn.Linear(self.d_model, self.d_model, bias=bias)
        m = len(self.offsets)
        self.offset_scale = nn.Parameter(torch.ones(self.n_heads, m))  # a_{h,δ}
        self.offset_bias = nn.Parameter(torch.zeros(self.n_heads, m))  # b_{h,δ}
        times = self.n_heads if self.time_per == "head" else 1
        self.raw_time = nn.Parameter(torch.full((times,), _inverse_softplus(t_init)))  # τ_h, or one τ per layer

    @property
    def times(self):
        r"""The per-head times :math:`t_h = \operatorname{softplus}(\tau_h)`, shape ``[n_heads]``.

        With ``time_per="layer"`` every entry is the layer's one time (an expanded view: gradients of all heads
        reach the single parameter).
        """
        return F.softplus(self.raw_time).expand(self.n_heads)

    def generator(self, x) -> BandedGenerator:
        r"""The content-dependent generators :math:`Q_h(x)`: rates of shape ``[B, n_heads, len(offsets), n]``."""
        x = _check_input(x, self.d_model, self.q_proj.weight.dtype)
        q, k = _split_heads(self.q_proj(x), self.n_heads), _split_heads(self.k_proj(x), self.n_heads)
        scores = torch.stack([(q * shift(k, o)).sum(-1) for o in self.offsets], dim=-2) / math.sqrt(self.d_head)
        logits = self.offset_scale[None, :, :, None] * scores + self.offset_bias[None, :, :, None]
        # Finite x can still overflow the scores (entries near the float range): refused naming x.
        check_finite_result("the generator's logits", logits, x=x)
        return banded_generator(logits, self.offsets, causal=self.causal)

    def forward(self, x, return_operator=False):
        """``y``, shape ``[B, n, d_model]``; with ``return_operator`` also the dense ``P``, shape ``[B, H, n, n]``."""
        return_operator = check_flag("return_operator", return_operator)
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
    Lie-Exponential Roadmap, "Heat-kernel attention (diffusion on sequence/graph) ... using multiple
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
        if not values or any(not (math.isfinite(s) and 0 < s <= FLOAT32_MAX) for s in values):
            raise ValueError(f"times must be a non-empty sequence of positive numbers, got {times!r}")
        self.offsets = check_offsets(offsets, positive=True)
        self.mix = check_choice("mix", mix, ("learned", "concat"))
        self.tol = None if tol is None else check_tol(tol)
        self.max_terms = check_max_terms(max_terms)
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
        scores = torch.stack([(u * shift(u, o)).sum(-1) for o in self.offsets], dim=-2) / math.sqrt(self.d_head)
        logits = self.offset_scale[None, :, :, None] * scores + self.offset_bias[None, :, :, None]
        # Finite x can still overflow the scores (entries near the float range): refused naming x.
        check_finite_result("the generator's logits", logits, x=x)
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
        return_operator = check_flag("return_operator", return_operator)
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
