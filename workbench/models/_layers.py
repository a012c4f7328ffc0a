r"""The blocks of the three families, read from a checkpoint's tensors: norms, activations, layers.

:func:`build_layers` turns the tensors of a BERT, GPT-2 or Llama-family checkpoint (named as in its
``config.json`` family, read through a ``get(name, shape)`` callable that checks each shape) into the embedding
tables, one :class:`TransformerLayer` per block (its attention a :class:`~workbench.attention.MultiHeadAttention`,
grouped-query keys and values expanded per query head) and the final norm.  :class:`Norm` is LayerNorm or
RMSNorm and :func:`activate` the feed-forward nonlinearity, on numpy or torch.  The forward pass that runs
them is :class:`~workbench.models.Transformer`.

References
----------
J. Devlin et al., BERT (2019); A. Radford et al., GPT-2 (2019); H. Touvron et al., Llama (2023); B. Zhang and
R. Sennrich, RMSNorm (2019); N. Shazeer, GLU variants (2020); J. Ainslie et al., GQA (2023).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from workbench.attention import MultiHeadAttention
from workbench.backend import namespace
from workbench.models._architecture import Architecture
from workbench.models._rope import RotaryEmbedding

__all__ = []  # package-internal: the forward pass and the transformers bridge read these


@dataclass(frozen=True)
class Norm:
    weight: object
    bias: object  # None for RMSNorm
    eps: float

    def __call__(self, x):
        xp = namespace(x)
        if self.bias is None:  # RMSNorm: x / rms(x), then the gain
            return self.weight * (x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + self.eps))
        centred = x - xp.mean(x, axis=-1, keepdims=True)
        variance = xp.mean(centred * centred, axis=-1, keepdims=True)
        return centred / xp.sqrt(variance + self.eps) * self.weight + self.bias


@dataclass(frozen=True)
class TransformerLayer:
    """One block: its attention (a MultiHeadAttention), rotary embedding, norms and feed-forward weights.

    Attributes
    ----------
    attention : MultiHeadAttention
        Unrotated query/key maps for rotary layers (the rotation is ``rope``).
    rope : RotaryEmbedding or None
    attention_norm, mlp_norm
        The norms (post-LN: after each sublayer; pre-LN: before it).
    W_in, b_in, W_gate, b_gate, W_out, b_out
        Feed-forward weights, row-vector convention: ``F(h) = act(h W_in + b_in) W_out + b_out``, or
        ``(act(h W_gate + b_gate) ⊙ (h W_in + b_in)) W_out + b_out`` with a gate (SwiGLU).
    activation : str
    """

    attention: MultiHeadAttention
    rope: RotaryEmbedding | None
    attention_norm: Norm
    mlp_norm: Norm
    W_in: object
    b_in: object
    W_gate: object
    b_gate: object
    W_out: object
    b_out: object
    activation: str


def is_numpy(x) -> bool:
    return isinstance(x, np.ndarray)


def activate(name: str, x):
    if name == "gelu":  # exact, with erf
        if is_numpy(x):
            from scipy.special import erf

            return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
        import torch

        return 0.5 * x * (1.0 + torch.special.erf(x / math.sqrt(2.0)))
    xp = namespace(x)
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):  # the tanh approximation
        return 0.5 * x * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    if name == "relu":
        return xp.where(x > 0, x, xp.zeros_like(x))
    # silu / swish: x σ(x)
    if is_numpy(x):
        from scipy.special import expit

        return x * expit(x)
    import torch

    return x * torch.sigmoid(x)


def check_shape(name: str, found: tuple, shape: tuple, source: str) -> None:
    """Refuse a tensor whose shape ``found`` is not the ``shape`` the configuration implies."""
    if tuple(found) != tuple(shape):
        raise ValueError(
            f"tensor {name!r} in {source} must have shape {tuple(shape)} for the architecture in its config, "
            f"got {tuple(found)}"
        )


def checked_shape(name: str, array: np.ndarray, shape: tuple, source: str) -> np.ndarray:
    check_shape(name, array.shape, shape, source)
    return array


_ANCHORS = {"bert": "embeddings.word_embeddings.weight", "gpt2": "wte.weight", "llama": "embed_tokens.weight"}


def weight_prefix(names, family: str, source: str) -> str:
    anchor = _ANCHORS[family]
    found = sorted((n[: -len(anchor)] for n in names if n.endswith(anchor)), key=len)
    found = [p for p in found if p == "" or p.endswith(".")]
    if not found:
        raise ValueError(
            f"model weights in {source} lack the {family} embedding tensor {anchor!r} (under any prefix); is it a "
            f"{family} checkpoint?"
        )
    return found[0]


def build_layers(arch: Architecture, get: Callable[[str, tuple], np.ndarray]):
    """The embedding tables, the layers and the final norm of ``arch``, reading tensors through ``get``."""
    D, H, d, F = arch.d_model, arch.n_heads, arch.d_head, arch.d_ff
    layers, tables = [], {}
    if (
        arch.family != "llama" and D % H
    ):  # after the embedding's shape check: a config that mismatches its weights says more
        get(_ANCHORS[arch.family], (arch.vocab_size, D))
        raise ValueError(f"config.json gives {H} attention heads, which must divide the width {D}")

    def norm(prefix: str, bias: bool) -> Norm:
        return Norm(get(prefix + ".weight", (D,)), get(prefix + ".bias", (D,)) if bias else None, arch.norm_eps)

    def linear(prefix: str, n_in: int, n_out: int, bias: bool):  # nn.Linear stores (out, in): transpose
        W = get(prefix + ".weight", (n_out, n_in)).T.copy()
        return W, (get(prefix + ".bias", (n_out,)) if bias else None)

    if arch.family == "bert":
        tables["word"] = get("embeddings.word_embeddings.weight", (arch.vocab_size, D))
        tables["position"] = get("embeddings.position_embeddings.weight", (arch.max_position_embeddings, D))
        tables["token_type"] = get("embeddings.token_type_embeddings.weight", (arch.type_vocab_size, D))
        tables["embedding_norm"] = norm("embeddings.LayerNorm", True)
        for layer in range(arch.n_layers):
            p = f"encoder.layer.{layer}."
            (W_Q, b_Q), (W_K, b_K), (W_V, b_V) = (
                linear(p + f"attention.self.{x}", D, D, True) for x in ("query", "key", "value")
            )
            W_O, b_O = linear(p + "attention.output.dense", D, D, True)
            mha = MultiHeadAttention.from_fused(
                W_Q, W_K, W_V, W_O, H, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O, beta=arch.beta(layer)
            )
            W_1, b_1 = linear(p + "intermediate.dense", D, F, True)
            W_2, b_2 = linear(p + "output.dense", F, D, True)
            layers.append(
                TransformerLayer(
                    attention=mha,
                    rope=None,
                    attention_norm=norm(p + "attention.output.LayerNorm", True),
                    mlp_norm=norm(p + "output.LayerNorm", True),
                    W_in=W_1,
                    b_in=b_1,
                    W_gate=None,
                    b_gate=None,
                    W_out=W_2,
                    b_out=b_2,
                    activation=arch.activation,
                )
            )
        return tables, layers, None

    if arch.family == "gpt2":
        tables["word"] = get("wte.weight", (arch.vocab_size, D))
        tables["position"] = get("wpe.weight", (arch.max_position_embeddings, D))
        for layer in range(arch.n_layers):
            p = f"h.{layer}."
            W = get(p + "attn.c_attn.weight", (D, 3 * D))  # Conv1D stores (in, out): already row-vector
            b = get(p + "attn.c_attn.bias", (3 * D,))
            mha = MultiHeadAttention.from_fused(
                W[:, :D].copy(),
                W[:, D : 2 * D].copy(),
                W[:, 2 * D :].copy(),
                get(p + "attn.c_proj.weight", (D, D)),
                H,
                b_Q=b[:D].copy(),
                b_K=b[D : 2 * D].copy(),
                b_V=b[2 * D :].copy(),
                b_O=get(p + "attn.c_proj.bias", (D,)),
                beta=arch.beta(layer),
                causal=True,
            )
            layers.append(
                TransformerLayer(
                    attention=mha,
                    rope=None,
                    attention_norm=norm(p + "ln_1", True),
                    mlp_norm=norm(p + "ln_2", True),
                    W_in=get(p + "mlp.c_fc.weight", (D, F)),
                    b_in=get(p + "mlp.c_fc.bias", (F,)),
                    W_gate=None,
                    b_gate=None,
                    W_out=get(p + "mlp.c_proj.weight", (F, D)),
                    b_out=get(p + "mlp.c_proj.bias", (D,)),
                    activation=arch.activation,
                )
            )
        return tables, layers, norm("ln_f", True)

    # llama family
    tables["word"] = get("embed_tokens.weight", (arch.vocab_size, D))
    kv, rep = arch.n_kv_heads, arch.n_heads // arch.n_kv_heads
    columns = None
    for layer in range(arch.n_layers):
        p = f"layers.{layer}."
        W_Q, b_Q = linear(p + "self_attn.q_proj", D, H * d, arch.qkv_bias)
        W_K, b_K = linear(p + "self_attn.k_proj", D, kv * d, arch.qkv_bias)
        W_V, b_V = linear(p + "self_attn.v_proj", D, kv * d, arch.qkv_bias)
        W_O, b_O = linear(p + "self_attn.o_proj", H * d, D, arch.o_bias)
        if columns is None:  # made once the shapes agree with the config (a head_dim of 1e9 is refused above)
            # query head h reads key/value head h // rep (transformers' repeat_kv): expand to one K/V per query head
            columns = np.concatenate([np.arange(g * d, (g + 1) * d) for g in (h // rep for h in range(H))])
        W_K, W_V = W_K[:, columns], W_V[:, columns]
        b_K, b_V = (None if b is None else b[columns] for b in (b_K, b_V))
        mha = MultiHeadAttention.from_fused(
            W_Q, W_K, W_V, W_O, H, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O, beta=arch.beta(layer), causal=True
        )
        W_g, b_g = linear(p + "mlp.gate_proj", D, F, arch.mlp_bias)
        W_u, b_u = linear(p + "mlp.up_proj", D, F, arch.mlp_bias)
        W_d, b_d = linear(p + "mlp.down_proj", F, D, arch.mlp_bias)
        layers.append(
            TransformerLayer(
                attention=mha,
                rope=RotaryEmbedding(d, arch.rope),
                attention_norm=norm(p + "input_layernorm", False),
                mlp_norm=norm(p + "post_attention_layernorm", False),
                W_in=W_u,
                b_in=b_u,
                W_gate=W_g,
                b_gate=b_g,
                W_out=W_d,
                b_out=b_d,
                activation=arch.activation,
            )
        )
    return tables, layers, norm("norm", False)
