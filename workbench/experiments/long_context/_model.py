r"""The long-context experiment's model and its memory measurement (imports torch).

LONG_CONTEXT_MIXERS     -- the mixers compared, softmax and exp-markov
LongContextLM           -- pre-LN byte-level causal transformer whose mixer is fused softmax or banded exp-Markov
CausalSoftmaxAttention  -- causal softmax attention by the fused kernel (explicit n×n form on request)
saved_tensor_bytes      -- bytes autograd saves for backward during a call, each storage once

References
----------
Lie-Exponential Roadmap, "ExpMarkovAttention (global, normalized attention)" [SEED]; T. Dao et al.,
"FlashAttention", NeurIPS 2022 (the fused kernel); PyTorch documentation, "Hooks for saved tensors".
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from workbench.nn import ExpMarkovAttention, multiscale_offsets
from workbench.validation import check_choice

__all__ = ["LONG_CONTEXT_MIXERS", "CausalSoftmaxAttention", "LongContextLM", "saved_tensor_bytes"]

#: The two mixers compared: the fused softmax baseline and the banded exp-Markov layer.
LONG_CONTEXT_MIXERS = ("softmax", "exp-markov")


# ---- the model ------------------------------------------------------------------------------------------


def _split_heads(y: torch.Tensor, n_heads: int) -> torch.Tensor:
    b, n, width = y.shape
    return y.reshape(b, n, n_heads, width // n_heads).transpose(1, 2)


class CausalSoftmaxAttention(nn.Module):
    r"""Causal multi-head softmax attention through the fused kernel, with the same projections as exp-Markov.

    .. math::

        Y = \big[\operatorname{softmax}(Q_hK_h^\top/\sqrt{d_h} + M)V_h\big]_h W_O, \qquad
        M_{ij} = -\infty\ (j > i),\ 0\ \text{otherwise},

    computed by :func:`torch.nn.functional.scaled_dot_product_attention` (``is_causal=True``), which never stores
    the :math:`n\times n` matrix; :meth:`explicit` computes the same formula with the matrix in memory.  The
    projections are named as in :class:`workbench.nn.ExpMarkovAttention` (``q_proj``, ``k_proj``, ``v_proj``,
    ``out_proj``), so one state dict initialises both.

    References
    ----------
    Vaswani et al., "Attention is all you need" (2017), eq. (1); Dao et al., "FlashAttention" (2022).

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> layer = CausalSoftmaxAttention(8, 2)
    >>> x = torch.randn(3, 5, 8)
    >>> bool(torch.allclose(layer(x), layer.explicit(x), atol=1e-6)), tuple(layer.operator(x).shape)
    (True, (3, 2, 5, 5))
    """

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model must be divisible by n_heads, got d_model={d_model}, n_heads={n_heads}")
        self.d_model, self.n_heads = d_model, n_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d_model, d_model) for _ in range(4))

    def _heads(self, x):
        return tuple(_split_heads(proj(x), self.n_heads) for proj in (self.q_proj, self.k_proj, self.v_proj))

    def _merge(self, y):
        b, _, n, _ = y.shape
        return self.out_proj(y.transpose(1, 2).reshape(b, n, self.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, n, d_model] -> [B, n, d_model]`` by the fused kernel."""
        q, k, v = self._heads(x)
        return self._merge(F.scaled_dot_product_attention(q, k, v, is_causal=True))

    def operator(self, x: torch.Tensor) -> torch.Tensor:
        """The attention matrices ``[B, H, n, n]`` (row-stochastic, lower triangular)."""
        q, k, _ = self._heads(x)
        n = x.shape[1]
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        mask = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)

    def explicit(self, x: torch.Tensor) -> torch.Tensor:
        r"""The same output with the :math:`n\times n` attention matrix formed (the textbook :math:`O(n^2)` layer)."""
        return self._merge(self.operator(x) @ self._heads(x)[2])


class _Block(nn.Module):
    def __init__(self, mixer: nn.Module, d_model: int):
        super().__init__()
        self.norm_mixer = nn.LayerNorm(d_model)
        self.mixer = mixer
        self.norm_mlp = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.mixer(self.norm_mixer(x))
        return x + self.mlp(self.norm_mlp(x))


class LongContextLM(nn.Module):
    r"""A pre-LN byte-level causal transformer whose token mixer is softmax or banded exp-Markov attention.

    .. math::

        h^{(0)} = E[x] + P_{\mathrm{pos}}, \quad
        h^{(\ell+1)} = g + \mathrm{MLP}(\mathrm{LN}\,g),\ g = h^{(\ell)} + \mathrm{Mix}(\mathrm{LN}\,h^{(\ell)}), \quad
        \mathrm{logits} = \mathrm{LN}(h^{(L)})W_U,

    with Mix a :class:`CausalSoftmaxAttention` (``mixer="softmax"``) or a causal
    :class:`workbench.nn.ExpMarkovAttention` on the offsets :math:`-1, \dots, -2^{\text{levels}}`
    (``mixer="exp-markov"``).  Both have the same parameters apart from the band's
    (``offset_scale``, ``offset_bias``, ``raw_time``).

    Examples
    --------
    >>> _ = torch.manual_seed(0)
    >>> model = LongContextLM(256, 16, 16, 2, 2, "exp-markov", levels=1, time_per="layer")
    >>> tuple(model(torch.randint(0, 256, (3, 16))).shape), [tuple(t.shape) for t in model.learned_times()]
    ((3, 16, 256), [(2,), (2,)])
    """

    def __init__(
        self, vocab_size, context, d_model, n_heads, n_layers, mixer, *, levels=2, t_init=1.0, time_per="layer"
    ):
        super().__init__()
        self.mixer = check_choice("mixer", mixer, LONG_CONTEXT_MIXERS)
        self.context = context

        def make():
            if mixer == "softmax":
                return CausalSoftmaxAttention(d_model, n_heads)
            offsets = multiscale_offsets(levels, causal=True)
            return ExpMarkovAttention(d_model, n_heads, offsets, causal=True, t_init=t_init, time_per=time_per)

        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList(_Block(make(), d_model) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)
        for weight in (self.embed.weight, self.position.weight, self.unembed.weight):
            nn.init.normal_(weight, std=0.02)  # a near-uniform first prediction, as in the lm experiment

    def _embed(self, tokens):
        return self.embed(tokens) + self.position(torch.arange(tokens.shape[1], device=tokens.device))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-byte logits ``[B, n, vocab]`` of byte ids ``[B, n]``."""
        x = self._embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.unembed(self.norm(x))

    @torch.no_grad()
    def mixer_inputs(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """The input of every layer's mixer (the normalised residual stream), a list of ``[B, n, d_model]``."""
        x, inputs = self._embed(tokens), []
        for block in self.blocks:
            inputs.append(block.norm_mixer(x))
            x = block(x)
        return inputs

    def learned_times(self) -> list[torch.Tensor]:
        """Each exp-Markov layer's times ``[n_heads]`` (all equal with ``time_per="layer"``); empty for softmax."""
        mixers = [block.mixer for block in self.blocks]
        return [m.times.detach() for m in mixers if isinstance(m, ExpMarkovAttention)]


def saved_tensor_bytes(fn, *, exclude=()) -> tuple[int, Any]:
    r"""Bytes autograd saves for the backward pass while ``fn()`` runs, each storage counted once.

    .. math::

        S = \sum_{s\,\in\,\{\text{storages of saved tensors}\}\,\setminus\,E} \mathrm{nbytes}(s)

    Every tensor an operation saves for its backward passes through
    :func:`torch.autograd.graph.saved_tensors_hooks`; views of one storage (a transpose, the shifted views of a
    padded copy) count once, at the storage's size.  ``exclude`` lists tensors (e.g. the parameters) whose
    storages are left out, so :math:`S` is the activation memory a training step holds until its backward.

    Parameters
    ----------
    fn : callable
        Runs the forward pass (with gradients enabled) and returns its result.
    exclude : iterable of torch.Tensor
        Tensors whose storages are not counted.

    Returns
    -------
    (int, object)
        :math:`S` in bytes and ``fn()``'s result (keep it alive until the backward, or drop it).

    References
    ----------
    PyTorch documentation, "Hooks for saved tensors" (``torch.autograd.graph.saved_tensors_hooks``).

    Examples
    --------
    A product :math:`AB` saves both factors: :math:`(3\cdot4 + 4\cdot5)\cdot 8` bytes in float64.

    >>> a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    >>> b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    >>> saved_tensor_bytes(lambda: a @ b)[0]
    256
    """
    skip = {_storage_key(t) for t in exclude}
    seen: dict[tuple, int] = {}

    def pack(t):
        key = _storage_key(t)
        if key not in skip:
            seen[key] = max(seen.get(key, 0), _storage_bytes(t))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return int(sum(seen.values())), out


def _storage_key(t: torch.Tensor) -> tuple:
    return (t.untyped_storage().data_ptr(), str(t.device))


def _storage_bytes(t: torch.Tensor) -> int:
    return int(t.untyped_storage().nbytes())
