r"""Families whose attention ``transformers`` computes inline (bloom, gpt_neo, mpnet): the proof from the outputs.

These families compute their scores in their own attention module, with no kernel function to capture.  What
is read instead: the attention the model reports (``output_attentions``), what the attention module read (a
forward pre-hook) and what its output projection received and returned (a forward hook).  Their queries and keys
are affine maps of the input (no rotation, no norm), so the operator is proven at load by:

1. the output projection's input is :math:`\big[A_h(XW_V^h + b_V^h)\big]_h` side by side (this also picks the
   layout of a fused projection) and its output :math:`(\cdot)W_O + b_O`, within 1e-10 relative;
2. the score residual :math:`R = \log A - \beta\,(XW_Q + b_Q)(XW_K + b_K)^\top` on the entries the model
   attends to, centred per row (softmax forgets a constant per row), is the same on two probe inputs of different
   content, within 1e-9 absolute (logarithms of float64 probabilities): the scores are the bilinear form plus a
   bias of the positions alone — zero for gpt_neo (a mask, a local window on alternate layers), ALiBi for bloom,
   relative buckets for mpnet.  A family whose residual changes with the content (DeBERTa's disentangled
   attention: content-to-position and position-to-content terms) fails this step and is refused.

:math:`\beta` is the family's: bloom's ``inv_norm_factor``, :math:`d_h^{-1/2}` for mpnet, 1 for gpt_neo (it does
not scale its scores).
"""

from __future__ import annotations

import numpy as np

from workbench.attention import MultiHeadAttention
from workbench.models._adapter import (
    AdapterProofError,
    linear_map,
    paired_biases,
    qkv_maps,
    relative_error,
    split_heads,
)

__all__ = []  # package-internal: HookedTransformer reads these families through this module

#: model_type → the class name of its attention module (the one holding the projections).
INLINE_MODULES = {
    "bloom": "BloomAttention",
    "gpt_neo": "GPTNeoSelfAttention",
    "mpnet": "MPNetSelfAttention",
    "deberta-v2": "DisentangledSelfAttention",
}
#: Largest change of the centred score residual between two probes for a bias of the positions alone.
RESIDUAL_ATOL = 1e-9


def inline_modules(model, model_type: str) -> list:
    """The attention modules of ``model`` in layer order."""
    name = INLINE_MODULES[model_type]
    return [m for _, m in model.named_modules() if type(m).__name__ == name]


def inline_beta(module, model_type: str, d: int) -> float:
    if model_type == "bloom":
        return float(module.inv_norm_factor)
    if model_type == "gpt_neo":
        return 1.0  # GPT-Neo does not scale its scores
    return float(d) ** -0.5


def prove_inline_layer(module, model_type: str, X: np.ndarray, weights: np.ndarray, projection, n_heads: int):
    """(MultiHeadAttention, proof residuals, allowed [H, n, n], centred residual [H, n, n]) of one layer."""
    n, D = X.shape
    H, d = n_heads, D // n_heads
    if projection is None:
        raise AdapterProofError("no output projection found (dense, out_proj, o)")
    W_O, b_O = linear_map(projection[0])
    o_in, o_out = (np.asarray(t.detach().double().numpy()).reshape(-1, t.shape[-1])[-n:] for t in projection[1])
    # the values' layout is the one whose A v is the projection's input
    heads_out = o_in.reshape(n, H, d).transpose(1, 0, 2)  # [H, n, d] = A_h v_h
    maps, _ = qkv_maps(module, X, None, H, H, d, choose=lambda v: relative_error(weights @ v, heads_out))
    (Wq, bq), (Wk, bk), (Wv, bv) = maps
    v = (X @ Wv + (0 if bv is None else bv)).reshape(n, H, d).transpose(1, 0, 2)
    proof = {"output_input": relative_error(weights @ v, heads_out)}
    proof["output"] = relative_error(o_in @ W_O + (0 if b_O is None else b_O), o_out)
    beta = inline_beta(module, model_type, d)
    q = (X @ Wq + (0 if bq is None else bq)).reshape(n, H, d).transpose(1, 0, 2)
    k = (X @ Wk + (0 if bk is None else bk)).reshape(n, H, d).transpose(1, 0, 2)
    allowed = weights > 0
    with np.errstate(divide="ignore"):
        residual = np.where(allowed, np.log(weights) - beta * q @ k.transpose(0, 2, 1), 0.0)
    counts = allowed.sum(axis=-1, keepdims=True)
    residual = np.where(allowed, residual - residual.sum(axis=-1, keepdims=True) / counts, 0.0)
    for step, value in proof.items():
        if not value <= 1e-10:
            raise AdapterProofError(f"{step}: the operator read from the weights misses the model by {value:.3g}")
    W_Q, b_Q = split_heads(Wq, bq, H, d)
    W_K, b_K = split_heads(Wk, bk, H, d)
    # one of the pair without a bias (whisper's keys): a zero bias, the same map, so the bond reads (W; b) for both
    b_Q, b_K = paired_biases(b_Q, b_K, (H, d), (H, d))
    W_V, b_V = split_heads(Wv, bv, H, d)
    upper = np.triu(np.ones((n, n), bool), 1)
    causal = bool(not allowed[:, upper].any())
    mha = MultiHeadAttention(W_Q, W_K, W_V, W_O.reshape(H, d, -1), b_Q, b_K, b_V, b_O, beta=beta, causal=causal)
    return mha, proof, allowed, residual, causal
