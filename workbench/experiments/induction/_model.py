r"""The induction experiment's model: a small causal transformer whose heads use one operator's scores.

Token and learned position embeddings, pre-LN blocks of causal multi-head attention (each head's scores those of
one operator, :class:`workbench.nn.OperatorAttention`) with an optional GELU MLP sublayer, and a
linear read-out: the two-layer models in which induction heads form.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11 [SEED] (nanochat models with the operators swapped in);
book/reference.md §A.7 [CODE] (the operators' logits); Elhage et al. (2021) (attention-only transformers);
Olsson et al. (2022), "In-context learning and induction heads".
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from workbench.experiments.induction._config import ARCHITECTURES
from workbench.nn import OperatorAttention
from workbench.validation import check_choice, check_integer

__all__ = ["InductionTransformer"]


class _Block(nn.Module):
    """Pre-LN block: ``x + MHSA(LN x)`` then, with an MLP, ``x + W_2 GELU(W_1 LN x)``."""

    def __init__(self, d_model: int, n_heads: int, operator: str, mlp: bool):
        super().__init__()
        self.norm_attention = nn.LayerNorm(d_model)
        self.attention = OperatorAttention(d_model, n_heads, operator, causal=True)
        self.mlp = None
        if mlp:
            self.norm_mlp = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, P = self.attention(self.norm_attention(x), return_operator=True)
        x = x + y
        if self.mlp is not None:
            x = x + self.mlp(self.norm_mlp(x))
        return x, P


class InductionTransformer(nn.Module):
    r"""A small causal transformer whose attention scores are those of one operator.

    .. math::

        h^{(0)} = E[t] + P_{\mathrm{pos}}, \qquad
        h^{(\ell+1)} = h^{(\ell)} + \mathrm{MHSA}^{\mathrm{op}}_{\mathrm{causal}}(\mathrm{LN}\,h^{(\ell)})
        \;[+\ \mathrm{MLP}(\mathrm{LN}\,\cdot)], \qquad
        \mathrm{logits} = \mathrm{LN}(h^{(L)})\,W_U,

    with :class:`workbench.nn.OperatorAttention` as the MHSA (causal mask) and, for
    ``architecture="mlp"``, a GELU MLP of width :math:`4D` after each attention sublayer.

    Parameters
    ----------
    vocab_size, seq_len, d_model, n_heads, n_layers : int
        Vocabulary, maximal sequence length (learned positions), width, heads, blocks.
    operator : {'ATTN', 'DMTN', 'DMAP', 'ATAP'}
        The score geometry of every head.
    architecture : {'attn-only', 'mlp'}

    References
    ----------
    Attention Geometry §11 [SEED] (nanochat models with the operators swapped in); book/reference.md §A.7;
    Elhage et al. (2021) (attention-only transformers).

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> model = InductionTransformer(10, 8, 16, 2, 2, "DMAP", "mlp")
    >>> tokens = torch.randint(0, 10, (3, 8))
    >>> tuple(model(tokens).shape)
    (3, 8, 10)
    >>> ops = model.attention_operators(tokens)
    >>> len(ops), tuple(ops[0].shape), bool(torch.allclose(ops[1].sum(-1), torch.ones(3, 2, 8)))
    (2, (3, 2, 8, 8), True)
    >>> bool((ops[0].triu(1) == 0).all())  # causal: nothing above the diagonal
    True
    """

    def __init__(
        self,
        vocab_size: int,
        seq_len: int,
        d_model: int,
        n_heads: int,
        n_layers: int = 2,
        operator: str = "ATTN",
        architecture: str = "attn-only",
    ):
        super().__init__()
        self.vocab_size = check_integer("vocab_size", vocab_size, 1)
        self.seq_len = check_integer("seq_len", seq_len, 1)
        check_integer("n_layers", n_layers, 1)
        self.operator = operator
        self.architecture = check_choice("architecture", architecture, ARCHITECTURES)
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads, operator, architecture == "mlp") for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)
        # Small embeddings and read-out: the initial prediction is near uniform (loss ≈ log V), so the
        # repeated-half curve starts on the plateau rather than above it.
        for weight in (self.embed.weight, self.position.weight, self.unembed.weight):
            nn.init.normal_(weight, std=0.02)

    def _run(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"tokens must be an integer torch tensor, got {getattr(tokens, 'dtype', type(tokens))}")
        if tokens.ndim != 2 or not 1 <= tokens.shape[1] <= self.seq_len:
            raise ValueError(
                f"tokens must have shape [batch, n] with 1 <= n <= {self.seq_len}, got {tuple(tokens.shape)}"
            )
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= self.vocab_size):
            raise ValueError(
                f"tokens must lie in [0, {self.vocab_size - 1}], "
                f"got values in [{int(tokens.min())}, {int(tokens.max())}]"
            )
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.position(positions)
        operators = []
        for block in self.blocks:
            x, P = block(x)
            operators.append(P)
        return self.unembed(self.norm(x)), operators

    def forward(self, tokens: torch.Tensor, return_operators: bool = False):
        """Next-token logits ``[B, n, V]`` (and, if asked, every layer's operators ``[B, H, n, n]``)."""
        logits, operators = self._run(tokens)
        return (logits, operators) if return_operators else logits

    @torch.no_grad()
    def attention_operators(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's attention operators for a batch: a list (one per layer) of ``[B, H, n, n]`` tensors."""
        return self._run(tokens)[1]

    def skew_ratios(self) -> np.ndarray:
        r""":math:`\rho_{\mathrm{skew}}` of every head, shape ``[layers, heads]`` (0 exactly for DMAP)."""
        return np.stack([block.attention.skew_ratios() for block in self.blocks])
