r"""The Swiss SiT model: a one-block flow transformer on sets of 2-D points, with one operator's attention.

Linear embedding, one block of two pre-LN sublayers (MHSA of the chosen operator, bidirectional; FFN with GELU)
in the chosen order, each modulated by adaLN-Zero from a sinusoidal embedding of the generative time, and a
modulated linear read-out of the velocity.  No positional encoding: a context is a set.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9 [SEED: one block, both orders]; book/reference.md
§A.11 [RECON: pre-LN, adaLN]; SiT "Linear" interpolant and DiT adaLN-Zero conditioning as described in §A.11
[RECON].
"""

from __future__ import annotations

import math

import torch
from torch import nn

from workbench.attention import OPERATORS
from workbench.experiments.swiss_sit._config import SWISS_SIT_ORDERS
from workbench.nn import OperatorAttention
from workbench.validation import check_choice, check_integer

__all__ = ["SwissSiT"]


def _time_embedding(tau: torch.Tensor, dim: int, max_period: float = 10_000.0) -> torch.Tensor:
    """Sinusoidal embedding of ``1000·τ`` (DiT convention), shape ``[B, dim]``."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=tau.dtype, device=tau.device) / half)
    angles = 1000.0 * tau[:, None] * freqs[None]
    emb = torch.cat([torch.cos(angles), torch.sin(angles)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


def _modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1.0 + scale[:, None]) + shift[:, None]


class SwissSiT(nn.Module):
    r"""One-block flow transformer on sets of 2-D points, with the attention of a chosen operator.

    For a context :math:`X \in \mathbb R^{N\times 2}` at generative time :math:`\tau`, with
    :math:`c = \mathrm{MLP}(\mathrm{sinusoid}(\tau))` and adaLN-Zero modulation of each sublayer,

    .. math::

        h_0 = XW_{\mathrm{in}} + b_{\mathrm{in}},\quad
        h \leftarrow h + g_s(c)\odot S\bigl(\mathrm{LN}(h)\,(1 + a_s(c)) + b_s(c)\bigr)
        \ \text{for } S \text{ in the order},\quad
        v = \bigl(\mathrm{LN}(h)(1 + a_o(c)) + b_o(c)\bigr)W_{\mathrm{out}} + b_{\mathrm{out}},

    where the sublayers are :math:`S = \mathrm{MHSA}` (:class:`OperatorAttention`, bidirectional, operator
    ``operator``) and :math:`S = \mathrm{FFN}` (GELU), and ``order="ffn-mhsa"`` applies the FFN first.  No
    positional encoding: the model is permutation-equivariant over the :math:`N` points.

    Parameters
    ----------
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}
    order : {'ffn-mhsa', 'mhsa-ffn'}
    d_model, n_heads, ffn_mult : int

    References
    ----------
    Attention Geometry §9 [SEED: one block, both orders]; book/reference.md §A.11 [RECON: pre-LN, adaLN].

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> model = SwissSiT("DMTN", "ffn-mhsa", d_model=8, n_heads=2)
    >>> x, tau = torch.randn(3, 5, 2), torch.rand(3)
    >>> tuple(model(x, tau).shape), tuple(model.operators(x, tau).shape)
    ((3, 5, 2), (3, 2, 5, 5))
    >>> bool(torch.allclose(model.operators(x, tau).sum(-1), torch.ones(3, 2, 5)))  # row-stochastic
    True
    """

    def __init__(self, operator: str, order: str, d_model: int = 64, n_heads: int = 4, ffn_mult: int = 4):
        super().__init__()
        self.operator = check_choice("operator", operator, OPERATORS)
        self.order = check_choice("order", order, SWISS_SIT_ORDERS)
        d_model = check_integer("d_model", d_model, 1)
        ffn_mult = check_integer("ffn_mult", ffn_mult, 1)
        self.d_model = d_model
        self.embed = nn.Linear(2, d_model)
        self.time_mlp = nn.Sequential(nn.Linear(d_model, d_model), nn.SiLU(), nn.Linear(d_model, d_model))
        self.attn = OperatorAttention(d_model, n_heads, operator, causal=False)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, ffn_mult * d_model), nn.GELU(), nn.Linear(ffn_mult * d_model, d_model)
        )
        self.norm_attn = nn.LayerNorm(d_model, elementwise_affine=False)
        self.norm_ffn = nn.LayerNorm(d_model, elementwise_affine=False)
        self.norm_out = nn.LayerNorm(d_model, elementwise_affine=False)
        # adaLN-Zero: 3 (shift, scale, gate) per sublayer + 2 (shift, scale) for the output; zero-initialised.
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(d_model, 8 * d_model))
        nn.init.zeros_(self.ada[1].weight)
        nn.init.zeros_(self.ada[1].bias)
        self.head = nn.Linear(d_model, 2)

    def _run(self, x: torch.Tensor, tau: torch.Tensor, want_operator: bool):
        if x.ndim != 3 or x.shape[-1] != 2:
            raise ValueError(f"x must have shape [batch, points, 2], got {tuple(x.shape)}")
        if tau.shape != (x.shape[0],):
            raise ValueError(f"tau must have shape [{x.shape[0]}] (one time per context), got {tuple(tau.shape)}")
        c = self.time_mlp(_time_embedding(tau, self.d_model))
        mods = self.ada(c).chunk(8, dim=-1)
        h = self.embed(x)
        P = None
        sublayers = ("ffn", "mhsa") if self.order == "ffn-mhsa" else ("mhsa", "ffn")
        for name in sublayers:
            if name == "mhsa":
                shift, scale, gate = mods[0:3]
                y, P = self.attn(_modulate(self.norm_attn(h), shift, scale), return_operator=True)
            else:
                shift, scale, gate = mods[3:6]
                y = self.ffn(_modulate(self.norm_ffn(h), shift, scale))
            h = h + gate[:, None] * y
        v = self.head(_modulate(self.norm_out(h), mods[6], mods[7]))
        return (v, P) if want_operator else v

    def forward(self, x: torch.Tensor, tau: torch.Tensor, return_operator: bool = False):
        """Velocity ``[B, N, 2]`` at points ``x [B, N, 2]`` and times ``tau [B]`` (and ``P [B, H, N, N]``)."""
        return self._run(x, tau, return_operator)

    def operators(self, x: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
        r"""The MHSA Markov operators :math:`\mathsf P^{(h)}` of each context, ``[B, H, N, N]``, rows summing to 1."""
        return self._run(x, tau, True)[1]
