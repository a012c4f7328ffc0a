r"""The adapter of every family read through ``transformers``: where W_Q, W_K, W_V, W_O live, and their proof.

One adapter for all families: the projections are found by name (``q_proj``/``k_proj``/``v_proj``,
``query``/``key``/``value``, ``q_lin``…, ``q``…, or one fused ``query_key_value``/``c_attn``/``qkv_proj``/``Wqkv``
whose layout — blocks, per head, or per key group — is the one the values match), the output projection beside
them or in the parent's ``output.dense``.  :func:`prove_layer` proves it on one captured kernel call (see
:mod:`workbench.models._hooked` for the steps and tolerances); :mod:`workbench.models._inline` on the outputs of
the families without a kernel.  :data:`MECHANISMS` names what a proof finds in a layer's scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from workbench.attention import MultiHeadAttention

__all__ = ["AdapterProofError", "HookedLayer"]

#: Relative tolerance of the weight proofs (values, queries, keys, output projection) and absolute of the attention.
PROOF_RTOL, ATTENTION_ATOL = 1e-10, 1e-12
#: Keyword arguments of the kernels that do not change the attention probabilities.
_INERT_KWARGS = {
    "dropout",
    "scaling",
    "sliding_window",
    "is_causal",
    "position_ids",
    "output_attentions",
    "use_cache",
    "cache_position",
    "head_mask",
    "layer_head_mask",
    "s_aux",
}
_SEPARATE = (
    ("q_proj", "k_proj", "v_proj"),
    ("query", "key", "value"),
    ("query_proj", "key_proj", "value_proj"),
    ("q_lin", "k_lin", "v_lin"),
    ("q", "k", "v"),
)
_FUSED = ("query_key_value", "c_attn", "qkv_proj", "Wqkv", "qkv")
_OUTPUT = ("o_proj", "out_proj", "dense", "out_lin", "o", "c_proj", "Wo")
MECHANISMS = {
    "rotary": "rotary positions: the content form W_Q W_Kᵀ is the form at offset 0",
    "qk_norm": "q/k norms: each query and key is normalised, so the scores are not a bilinear form of the input",
    "softcap": "logit soft-capping: the attention is the softmax of c·tanh(s/c), not of a bilinear form",
    "position_bias": "a position bias (ALiBi or relative buckets) is added to the scores: the bilinear readings are "
    "of the content form alone, and the corners (softmax of βqkᵀ) leave the bias out",
    "sliding_window": "a sliding window masks distant tokens",
}


class AdapterProofError(ValueError):
    """The operator read from a model's weights does not reproduce what the model computed."""


@dataclass(frozen=True)
class HookedLayer:
    """One layer of a :class:`HookedTransformer`: its attention as a MultiHeadAttention, and what the proof found.

    Attributes
    ----------
    attention : MultiHeadAttention
        W_Q, W_K, W_V, W_O (grouped keys and values expanded to one per query head) and biases, β the family's
        scale; for a rotary layer the unrotated maps.
    rope : None
        Rotations are read from the captured queries and keys, never re-applied.
    mechanisms : dict
        Mechanism name → what it changes (see :data:`MECHANISMS`).
    proof : dict
        The largest residual of each proof step (relative for weights, absolute for the attention).
    """

    attention: MultiHeadAttention
    rope: None = None
    mechanisms: dict = field(default_factory=dict)
    proof: dict = field(default_factory=dict)


def as_float64(t) -> np.ndarray:
    return t.detach().to("cpu").double().numpy()


def linear_map(module) -> tuple[np.ndarray, np.ndarray | None]:
    """(W [in, out], b [out] or None) of a Linear (weight [out, in]) or a GPT-2 Conv1D (weight [in, out])."""
    weight = as_float64(module.weight)
    W = weight if type(module).__name__ == "Conv1D" else weight.T
    bias = getattr(module, "bias", None)
    return W, None if bias is None else as_float64(bias)


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    scale = max(float(np.max(np.abs(b))), 1e-300) if b.size else 1.0
    return float(np.max(np.abs(a - b))) / scale if a.size else 0.0


def _fused_layouts(H: int, H_kv: int, d: int) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Column indices (q, k, v) of a fused projection of width (H + 2 H_kv) d, for each layout families use."""
    g = H // H_kv
    blocks = np.arange((H + 2 * H_kv) * d)
    layouts = {"blocks": (blocks[: H * d], blocks[H * d : (H + H_kv) * d], blocks[(H + H_kv) * d :])}
    if H == H_kv:  # gpt_neox: [H, 3, d]
        c = blocks.reshape(H, 3, d)
        layouts["per head"] = (c[:, 0].ravel(), c[:, 1].ravel(), c[:, 2].ravel())
    c = blocks.reshape(H_kv, g + 2, d)  # falcon's new decoder architecture: per key group, its queries then k, v
    layouts["per key group"] = (c[:, :g].ravel(), c[:, g].ravel(), c[:, g + 1].ravel())
    return layouts


def _parent(model, module):
    names = {id(m): n for n, m in model.named_modules()}
    name = names.get(id(module), "")
    parent = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
    return parent, name


def output_projection(model, module):
    for name in _OUTPUT:
        child = getattr(module, name, None)
        if child is not None and hasattr(child, "weight"):
            return child
    parent, _ = _parent(model, module)
    output = getattr(parent, "output", None)  # BERT-style: the projection is the sibling SelfOutput's dense
    if output is not None and hasattr(getattr(output, "dense", None), "weight"):
        return output.dense
    return None


def qkv_maps(module, X: np.ndarray, value, H: int, H_kv: int, d: int, choose=None):
    """The (W, b) of queries, keys and values [D, H·d] (H_kv·d for keys/values) and the layout found.

    A fused projection's layout is the one whose values [H_kv, n, d] match ``value`` best, or minimise
    ``choose(values)`` when given (the families without a kernel: the values are not captured).
    """
    for names in _SEPARATE:
        parts = [getattr(module, n, None) for n in names]
        if all(p is not None and hasattr(p, "weight") for p in parts):
            return [linear_map(p) for p in parts], "separate " + "/".join(names)
    for name in _FUSED:
        fused = getattr(module, name, None)
        if fused is None or not hasattr(fused, "weight"):
            continue
        W, b = linear_map(fused)
        if W.shape[1] != (H + 2 * H_kv) * d:
            raise AdapterProofError(
                f"the fused projection {name} has {W.shape[1]} outputs, not (H + 2 H_kv)·d = {(H + 2 * H_kv) * d}"
            )
        best = None
        for layout, (iq, ik, iv) in _fused_layouts(H, H_kv, d).items():
            v = X @ W[:, iv] + (0 if b is None else b[iv])
            v = v.reshape(len(X), H_kv, d).transpose(1, 0, 2)
            residual = choose(v) if choose is not None else relative_error(v, value)
            if best is None or residual < best[0]:
                best = (residual, layout, [(W[:, i], None if b is None else b[i]) for i in (iq, ik, iv)])
        return best[2], f"fused {name} ({best[1]})"
    names = sorted(n for n, _ in module.named_children())
    raise AdapterProofError(f"no query/key/value projections found among the attention module's children {names}")


def paired_biases(b_Q, b_K, shape_Q: tuple, shape_K: tuple):
    """(b_Q, b_K) with a zero bias where exactly one of the two is missing (an exact rewriting of the same map)."""
    if (b_Q is None) == (b_K is None):
        return b_Q, b_K
    return (np.zeros(shape_Q) if b_Q is None else b_Q), (np.zeros(shape_K) if b_K is None else b_K)


def split_heads(W: np.ndarray, b, n: int, d: int):
    """[D, n·d] → [n, D, d]; [n·d] → [n, d]."""
    D = W.shape[0]
    return W.reshape(D, n, d).transpose(1, 0, 2), None if b is None else b.reshape(n, d)


def _normed(module, name: str, x: np.ndarray, heads: int, d: int) -> np.ndarray:
    """X [n, heads·d] through the module's own q/k norm (per head when its weight has d entries)."""
    import torch

    norm = getattr(module, name)
    width = int(np.prod(norm.weight.shape)) if getattr(norm, "weight", None) is not None else d
    t = torch.as_tensor(x, dtype=torch.float64)
    with torch.no_grad():
        if width == d:
            return as_float64(norm(t.reshape(len(x), heads, d))).reshape(len(x), heads * d)
        return as_float64(norm(t))


def _rotation(captured: np.ndarray, plain: np.ndarray, other_c: np.ndarray, other_p: np.ndarray):
    """(m, residual) of ``captured`` [H, n, d] read as ``plain`` rotated per position and scaled by m.

    The residual is small for a rotation: position 0 unrotated, the same-position Gram entries multiplied by m².
    """
    m2 = float(np.sum(captured[:, 0] ** 2) / max(np.sum(plain[:, 0] ** 2), 1e-300))
    m = math.sqrt(m2)
    checks = [
        relative_error(captured[:, 0], m * plain[:, 0]),
        relative_error(np.sum(captured * other_c, -1), m2 * np.sum(plain * other_p, -1)),
        relative_error(np.sum(captured**2, -1), m2 * np.sum(plain**2, -1)),
    ]
    return m, max(checks)


def _scale(captured: np.ndarray, plain: np.ndarray) -> float:
    """The factor s with captured ≈ s · plain (a family that scales its queries before the kernel, e.g. opt)."""
    return float(np.sum(captured * plain) / max(np.sum(plain * plain), 1e-300))


def _softmax(S: np.ndarray) -> np.ndarray:
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(S)
    return E / E.sum(axis=-1, keepdims=True)


def _score_bias(call, H: int, n: int) -> np.ndarray:
    """The captured additive mask plus any position bias, as [H, n, n] (masked entries very negative)."""
    bias = np.zeros((H, n, n))
    for term in (call.mask, call.kwargs.get("position_bias")):
        if term is not None:
            t = as_float64(term)
            t = t[0] if t.ndim == 4 else t
            bias = bias + np.broadcast_to(t[..., -n:, -n:], (H, n, n))
    return bias


@dataclass
class LayerProof:
    attention: MultiHeadAttention
    mechanisms: dict
    proof: dict
    allowed: np.ndarray  # [H, n, n] not masked
    bias: np.ndarray  # [H, n, n] finite part of the bias on allowed entries (0 elsewhere)
    causal: bool


def prove_layer(model, call, X: np.ndarray, projection) -> LayerProof:
    """Read one layer's operator from its weights and prove it against one captured kernel call (see module doc)."""
    module = call.module
    unknown = sorted(
        k
        for k, v in call.kwargs.items()
        if k not in _INERT_KWARGS | {"softcap", "position_bias"}
        and (hasattr(v, "shape") or k == "positional arguments")
    )
    if unknown:
        raise AdapterProofError(f"the attention kernel received inputs the workbench does not know: {unknown}")
    q_c, k_c, v_c = (as_float64(t)[0] for t in (call.query, call.key, call.value))
    H, n, d = q_c.shape
    H_kv = k_c.shape[0]
    if H % H_kv:
        raise AdapterProofError(f"{H} query heads do not share {H_kv} key heads evenly")
    g = H // H_kv
    (Wq, bq), (Wk, bk), (Wv, bv) = maps = qkv_maps(module, X, v_c, H, H_kv, d)[0]
    del maps
    proof, mechanisms = {}, {}
    v = X @ Wv + (0 if bv is None else bv)
    proof["values"] = relative_error(v.reshape(n, H_kv, d).transpose(1, 0, 2), v_c)
    plain = {}
    for name, W, b, heads in (("queries", Wq, bq, H), ("keys", Wk, bk, H_kv)):
        x = X @ W + (0 if b is None else b)
        norm = "q_norm" if name == "queries" else "k_norm"
        if getattr(module, norm, None) is not None:
            x = _normed(module, norm, x, heads, d)
            mechanisms["qk_norm"] = MECHANISMS["qk_norm"]
        plain[name] = x.reshape(n, heads, d).transpose(1, 0, 2)
    # A family that multiplies its queries by the scale before the kernel (opt: kernel scale 1) has the scale
    # folded into W_Q, b_Q here, so that β q kᵀ with the kernel's β is the logits either way.
    s = _scale(q_c, plain["queries"])
    if abs(s - 1) > PROOF_RTOL and relative_error(q_c, s * plain["queries"]) <= PROOF_RTOL:
        Wq, bq, plain["queries"] = s * Wq, None if bq is None else s * bq, s * plain["queries"]
    k_plain, k_cap = np.repeat(plain["keys"], g, axis=0), np.repeat(k_c, g, axis=0)
    direct = max(relative_error(plain["queries"], q_c), relative_error(plain["keys"], k_c))
    if direct <= PROOF_RTOL:
        proof["queries_keys"] = direct
    else:
        m, residual_q = _rotation(q_c, plain["queries"], k_cap, k_plain)
        _, residual_k = _rotation(k_c, plain["keys"], k_c, plain["keys"])
        proof["queries_keys"] = max(residual_q, residual_k)
        if proof["queries_keys"] > PROOF_RTOL:
            raise AdapterProofError(
                f"the queries and keys recomputed from the weights differ from the model's by {direct:.3g} (relative) "
                f"and not by a rotation per position (residual {proof['queries_keys']:.3g})"
            )
        mechanisms["rotary"] = MECHANISMS["rotary"] + (f" (rotary scale {m:.6g})" if abs(m - 1) > 1e-12 else "")
    scaling = call.kwargs.get("scaling")
    beta = float(d**-0.5 if scaling is None else scaling)
    S = beta * q_c @ k_cap.transpose(0, 2, 1)
    cap = call.kwargs.get("softcap")
    if cap is not None:
        S = cap * np.tanh(S / cap)
        mechanisms["softcap"] = MECHANISMS["softcap"] + f" (c = {cap:g})"
    bias = _score_bias(call, H, n)
    A = _softmax(S + bias)
    weights = as_float64(call.weights)[0]
    proof["attention"] = float(np.max(np.abs(A - weights)))
    heads_out = np.einsum("hij,hjd->ihd", weights, np.repeat(v_c, g, axis=0)).reshape(n, H * d)
    if projection is None:
        raise AdapterProofError("no output projection found (o_proj, out_proj, dense, … or output.dense)")
    W_O, b_O = linear_map(projection[0])
    o_in, o_out = (as_float64(t).reshape(-1, t.shape[-1])[-n:] for t in projection[1])
    proof["output_input"] = relative_error(o_in, heads_out)
    proof["output"] = relative_error(o_in @ W_O + (0 if b_O is None else b_O), o_out)
    for step, residual in proof.items():
        limit = ATTENTION_ATOL if step == "attention" else PROOF_RTOL
        if not residual <= limit:
            raise AdapterProofError(f"{step}: the operator read from the weights misses the model by {residual:.3g}")
    allowed = bias > -1e30
    finite = np.where(allowed, bias, 0.0)
    upper = np.triu(np.ones((n, n), bool), 1)
    causal = bool(not allowed[:, upper].any())
    lower_masked = (~allowed) & ~upper
    if lower_masked.any():
        mechanisms["sliding_window"] = MECHANISMS["sliding_window"]
    W_Q, b_Q = split_heads(Wq, bq, H, d)
    W_K, b_K = split_heads(Wk, bk, H_kv, d)
    # one of the pair without a bias (whisper's keys): a zero bias, the same map, so the bond reads (W; b) for both
    b_Q, b_K = paired_biases(b_Q, b_K, (H, d), (H_kv, d))
    W_V, b_V = split_heads(Wv, bv, H_kv, d)
    expand = lambda b: None if b is None else np.repeat(b, g, axis=0)  # noqa: E731
    mha = MultiHeadAttention(
        W_Q,
        np.repeat(W_K, g, axis=0),
        np.repeat(W_V, g, axis=0),
        W_O.reshape(H, d, -1),
        b_Q,
        expand(b_K),
        expand(b_V),
        b_O,
        beta=beta,
        causal=causal,
    )
    return LayerProof(mha, mechanisms, proof, allowed, finite, causal)
