r"""Any ``transformers`` family read through its own implementation, every head's operator proven at load.

Design.  Re-implementing each family's forward pass does not scale to forty families, and every copy is a
place to be wrong.  So a model of a family other than the three the workbench implements itself (bert, gpt2,
llama; kept because they run on numpy without torch or ``transformers``) runs as ``transformers`` runs it:
eager attention, float64, its float32 casts mapped (:mod:`workbench.models._capture`).  Each layer's attention
kernel is captured as the family calls it (queries and keys after every projection, norm and rotation, values,
the additive mask, the scale, the extras), with what the attention module read and what its output projection
received and returned.  The attention probabilities and hidden states a :class:`HookedTransformer` reports are
therefore the family's own numbers.

The operator view is read from the weights by one small adapter for all families: the projections are found by
name (``q_proj``/``k_proj``/``v_proj``, ``query``/``key``/``value``, ``q_lin``…, ``q``…, or one fused
``query_key_value``/``c_attn``/``qkv_proj``/``Wqkv`` whose layout — blocks, per head, or per key group — is the one
the values match), the output projection beside them or in the parent's ``output.dense``.  **The adapter is
proven at load**, on two probe inputs, layer by layer, within 1e-10 relative (float64 rounding through a few
products; the tolerance is ~10⁵ ulps):

1. the values are :math:`XW_V + b_V` of the captured input :math:`X`;
2. the queries and keys are :math:`XW_Q + b_Q`, :math:`XW_K + b_K`, after the module's own q/k norms if it has
   them; where they differ the difference must be a rotation per position (rotary positions, any pairing or
   partial width): equal at position 0 up to the rotary scale :math:`m`, and the same-position Gram entries
   :math:`q_i\cdot k_i`, :math:`|q_i|^2`, :math:`|k_i|^2` multiplied by :math:`m^2`;
3. the attention is :math:`\operatorname{softmax}(\beta\,qk^\top + B)` of the captured queries and keys
   (:math:`c\tanh(\cdot/c)` first where the family soft-caps), :math:`B` the captured mask and position bias,
   within 1e-12 absolute;
4. the output projection's input is the heads' :math:`A v` side by side and its output
   :math:`(Av)W_O + b_O`.

A layer that fails any step is refused, naming the step and the residual.  What the proof finds is recorded per
layer as *mechanisms*: ``rotary`` (the content form :math:`W_QW_K^\top` is the offset-0 form, as for the llama
family), ``qk_norm`` (the scores are not a bilinear form of the input), ``softcap`` (the softmax is of a capped
form), ``position_bias`` (a bias that depends on the positions alone — ALiBi, T5's relative buckets: the scores
are the bilinear form plus that bias), ``sliding_window``.  :mod:`workbench.models._diagnose` sets to ``null``,
with the mechanism as the reason, the readings that assume what a mechanism breaks.

Families without a kernel function in ``transformers`` (bloom, gpt_neo, deberta-v2, mpnet compute their
attention inline) are refused with that reason.
"""

from __future__ import annotations

import collections
import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from workbench.attention import MultiHeadAttention
from workbench.backend import to_numpy
from workbench.models._capture import KernelCapture
from workbench.models._transformer import UNREAD_TENSORS, Trace, Transformer
from workbench.validation import check_integer

__all__ = ["AdapterProofError", "HookedLayer", "HookedTransformer", "read_transformers"]

#: Relative tolerance of the weight proofs (values, queries, keys, output projection) and absolute of the attention.
PROOF_RTOL, ATTENTION_ATOL = 1e-10, 1e-12
#: Traces whose captured queries and keys :meth:`HookedTransformer.queries_keys` keeps (a diagnosis runs two).
RECENT_TRACES = 4
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
_SEPARATE = (("q_proj", "k_proj", "v_proj"), ("query", "key", "value"), ("q_lin", "k_lin", "v_lin"), ("q", "k", "v"))
_FUSED = ("query_key_value", "c_attn", "qkv_proj", "Wqkv", "qkv")
_OUTPUT = ("o_proj", "out_proj", "dense", "out_lin", "o", "c_proj", "Wo")
#: Families whose attention is computed inline in ``transformers`` (no kernel to capture), with the reason.
INLINE_FAMILIES = {
    "bloom": "transformers computes bloom's ALiBi attention inline (no attention kernel to capture)",
    "gpt_neo": "transformers computes gpt_neo's attention in its own _attn method (no attention kernel to capture)",
    "deberta-v2": "DeBERTa's disentangled attention (content-to-position and position-to-content terms) is "
    "computed inline, with no kernel to capture",
    "mpnet": "transformers computes mpnet's relative-position attention inline (no attention kernel to capture)",
}

#: Families whose input the workbench does not feed yet.
UNREAD_INPUTS = {
    "whisper": "whisper's encoder reads log-mel audio features; the workbench feeds text and images only",
}

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


def _np(t) -> np.ndarray:
    return t.detach().to("cpu").double().numpy()


def _linear(module) -> tuple[np.ndarray, np.ndarray | None]:
    """(W [in, out], b [out] or None) of a Linear (weight [out, in]) or a GPT-2 Conv1D (weight [in, out])."""
    weight = _np(module.weight)
    W = weight if type(module).__name__ == "Conv1D" else weight.T
    bias = getattr(module, "bias", None)
    return W, None if bias is None else _np(bias)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
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


def _output_projection(model, module):
    for name in _OUTPUT:
        child = getattr(module, name, None)
        if child is not None and hasattr(child, "weight"):
            return child
    parent, _ = _parent(model, module)
    output = getattr(parent, "output", None)  # BERT-style: the projection is the sibling SelfOutput's dense
    if output is not None and hasattr(getattr(output, "dense", None), "weight"):
        return output.dense
    return None


def _qkv_maps(module, X: np.ndarray, value: np.ndarray, H: int, H_kv: int, d: int):
    """The (W, b) of queries, keys and values [D, H·d] (H_kv·d for keys/values) and the layout found."""
    for names in _SEPARATE:
        parts = [getattr(module, n, None) for n in names]
        if all(p is not None and hasattr(p, "weight") for p in parts):
            return [_linear(p) for p in parts], "separate " + "/".join(names)
    for name in _FUSED:
        fused = getattr(module, name, None)
        if fused is None or not hasattr(fused, "weight"):
            continue
        W, b = _linear(fused)
        if W.shape[1] != (H + 2 * H_kv) * d:
            raise AdapterProofError(
                f"the fused projection {name} has {W.shape[1]} outputs, not (H + 2 H_kv)·d = {(H + 2 * H_kv) * d}"
            )
        best = None
        for layout, (iq, ik, iv) in _fused_layouts(H, H_kv, d).items():
            v = X @ W[:, iv] + (0 if b is None else b[iv])
            residual = _relative(v.reshape(len(X), H_kv, d).transpose(1, 0, 2), value)
            if best is None or residual < best[0]:
                best = (residual, layout, [(W[:, i], None if b is None else b[i]) for i in (iq, ik, iv)])
        return best[2], f"fused {name} ({best[1]})"
    names = sorted(n for n, _ in module.named_children())
    raise AdapterProofError(f"no query/key/value projections found among the attention module's children {names}")


def _heads(W: np.ndarray, b, n: int, d: int):
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
            return _np(norm(t.reshape(len(x), heads, d))).reshape(len(x), heads * d)
        return _np(norm(t))


def _rotation(captured: np.ndarray, plain: np.ndarray, other_c: np.ndarray, other_p: np.ndarray):
    """(m, residual) of ``captured`` [H, n, d] read as ``plain`` rotated per position and scaled by m.

    The residual is small for a rotation: position 0 unrotated, the same-position Gram entries multiplied by m².
    """
    m2 = float(np.sum(captured[:, 0] ** 2) / max(np.sum(plain[:, 0] ** 2), 1e-300))
    m = math.sqrt(m2)
    checks = [
        _relative(captured[:, 0], m * plain[:, 0]),
        _relative(np.sum(captured * other_c, -1), m2 * np.sum(plain * other_p, -1)),
        _relative(np.sum(captured**2, -1), m2 * np.sum(plain**2, -1)),
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
            t = _np(term)
            t = t[0] if t.ndim == 4 else t
            bias = bias + np.broadcast_to(t[..., -n:, -n:], (H, n, n))
    return bias


@dataclass
class _LayerProof:
    attention: MultiHeadAttention
    mechanisms: dict
    proof: dict
    allowed: np.ndarray  # [H, n, n] not masked
    bias: np.ndarray  # [H, n, n] finite part of the bias on allowed entries (0 elsewhere)
    causal: bool


def prove_layer(model, call, X: np.ndarray, projection) -> _LayerProof:
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
    q_c, k_c, v_c = (_np(t)[0] for t in (call.query, call.key, call.value))
    H, n, d = q_c.shape
    H_kv = k_c.shape[0]
    if H % H_kv:
        raise AdapterProofError(f"{H} query heads do not share {H_kv} key heads evenly")
    g = H // H_kv
    (Wq, bq), (Wk, bk), (Wv, bv) = maps = _qkv_maps(module, X, v_c, H, H_kv, d)[0]
    del maps
    proof, mechanisms = {}, {}
    v = X @ Wv + (0 if bv is None else bv)
    proof["values"] = _relative(v.reshape(n, H_kv, d).transpose(1, 0, 2), v_c)
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
    if abs(s - 1) > PROOF_RTOL and _relative(q_c, s * plain["queries"]) <= PROOF_RTOL:
        Wq, bq, plain["queries"] = s * Wq, None if bq is None else s * bq, s * plain["queries"]
    k_plain, k_cap = np.repeat(plain["keys"], g, axis=0), np.repeat(k_c, g, axis=0)
    direct = max(_relative(plain["queries"], q_c), _relative(plain["keys"], k_c))
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
    weights = _np(call.weights)[0]
    proof["attention"] = float(np.max(np.abs(A - weights)))
    heads_out = np.einsum("hij,hjd->ihd", weights, np.repeat(v_c, g, axis=0)).reshape(n, H * d)
    if projection is None:
        raise AdapterProofError("no output projection found (o_proj, out_proj, dense, … or output.dense)")
    W_O, b_O = _linear(projection[0])
    o_in, o_out = (_np(t).reshape(-1, t.shape[-1])[-n:] for t in projection[1])
    proof["output_input"] = _relative(o_in, heads_out)
    proof["output"] = _relative(o_in @ W_O + (0 if b_O is None else b_O), o_out)
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
    W_Q, b_Q = _heads(Wq, bq, H, d)
    W_K, b_K = _heads(Wk, bk, H_kv, d)
    W_V, b_V = _heads(Wv, bv, H_kv, d)
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
    return _LayerProof(mha, mechanisms, proof, allowed, finite, causal)


class HookedTransformer(Transformer):
    """A ``transformers`` model of any family the workbench can prove, run by ``transformers`` in float64.

    Built by :func:`read_transformers` (a model object) or :func:`~workbench.models.load_model` (a directory of a
    family other than bert, gpt2 and llama).  The interface of :class:`~workbench.models.Transformer`:
    tokenize, trace, trace_ids, queries_keys, embed; ``trace_image`` for vision models.  ``layers[l]`` is a
    :class:`HookedLayer` (its ``mechanisms`` and ``proof``).
    """

    def __init__(
        self, model, tokenizer=None, *, name: str = "", max_positions: int | None = None, image_processor=None
    ):
        import torch

        self._model = model
        self.family = str(model.config.model_type)
        self.name = str(name)
        self.backend = "numpy"
        config = model.config
        self.architecture = _Labels(config)
        self.vision = getattr(model, "main_input_name", "input_ids") == "pixel_values"
        self.vocab_size = int(getattr(config, "vocab_size", 0) or 0)
        self._image_processor = image_processor
        self._capture = KernelCapture(model)
        self._capture.rebuild_position_tables()
        if not self._capture.kernels:
            raise ValueError(
                f"{self.family}: transformers runs this family without an attention kernel the workbench can capture"
            )
        if self.vision:
            limit = self._patch_count() + self._extra_tokens()
        else:
            limit = _positions(config)
        if max_positions is not None:
            max_positions = check_integer("max_positions", max_positions, 1)
        self.max_positions = limit if max_positions is None else min(max_positions, limit)
        self._set_tokenizer(tokenizer)
        # discover the attention modules in layer order, hook them, then prove the adapter on two probes
        probes = self._probes()
        with self._capture.recording() as first:
            self._run(probes[0])
        modules = [call.module for call in first.calls]  # one per layer (shared modules repeat: ALBERT)
        if not modules:
            raise ValueError(f"{self.family}: a forward pass called no attention kernel")
        self._modules = modules
        self._projections = [_output_projection(model, m) for m in modules]
        distinct = list({id(m): m for m in modules}.values())
        self._capture.hook_inputs(distinct)
        self._capture.hook_projections(list({id(p): p for p in self._projections if p is not None}.values()))
        proofs = []
        for probe in probes:
            with self._capture.recording() as recording:
                self._run(probe)
            self._checked(recording)
            proofs.append([self._prove(index, recording) for index in range(len(modules))])
        layers = []
        for index, (a, b) in enumerate(zip(*proofs, strict=True)):
            mechanisms = dict(a.mechanisms)
            if np.any(a.bias) or np.any(b.bias):
                if a.bias.shape == b.bias.shape and np.max(np.abs(a.bias - b.bias)) > 1e-12:
                    raise AdapterProofError(
                        f"layer {index}: the score bias changes with the input: not a position bias the workbench "
                        "can read"
                    )
                mechanisms["position_bias"] = MECHANISMS["position_bias"]
            proof = {step: max(a.proof[step], b.proof[step]) for step in a.proof}
            layers.append(HookedLayer(a.attention, None, mechanisms, proof))
        self.layers = layers
        first_mha = layers[0].attention
        self.n_layers = len(layers)
        self.n_heads = first_mha.n_heads
        self.n_kv_heads = int(self._last_kv(first))
        self.d_model = first_mha.d_model
        self.d_head = first_mha.d_head
        self.causal = all(p.causal for p in proofs[0])
        self._recent = collections.deque(maxlen=RECENT_TRACES)
        del torch

    # ---- inputs --------------------------------------------------------------------------------------

    def _patch_count(self) -> int:
        c = self._model.config
        size, patch = _pair(c.image_size), _pair(c.patch_size)
        return (size[0] // patch[0]) * (size[1] // patch[1])

    def _extra_tokens(self) -> int:
        return 2 if self.family == "deit" else 1

    def _probes(self) -> list:
        rng = np.random.default_rng(0)
        if self.vision:
            c = self._model.config
            size = _pair(c.image_size)
            return [rng.standard_normal((1, getattr(c, "num_channels", 3), *size)) for _ in range(2)]
        n = min(12, self.max_positions)
        high = max(self.vocab_size, 2)
        return [rng.integers(0, high, size=(1, n)) for _ in range(2)]

    def _run(self, inputs):
        import torch

        model = self._model
        kwargs = {"output_attentions": True, "output_hidden_states": True, "return_dict": True}
        tensor = torch.as_tensor(inputs)
        if self.vision:
            return model(pixel_values=tensor.to(torch.float64), **kwargs)
        return model(input_ids=tensor.to(torch.long), **kwargs)

    def _last_kv(self, recording) -> int:
        return int(recording.calls[0].key.shape[1])

    def _checked(self, recording) -> None:
        """Each layer's kernel call, attention input and output projection, in call order, are the expected ones."""
        L = len(self._modules)
        calls, inputs, projections = recording.calls, recording.inputs, recording.projections
        if (
            len(calls) != L
            or len(inputs) != L
            or any(c.module is not m or i[0] is not m for c, i, m in zip(calls, inputs, self._modules, strict=True))
        ):
            raise AdapterProofError(
                f"{self.family}: one pass ran {len(calls)} attention kernels on {len(inputs)} captured inputs, "
                f"not one per layer ({L}) in the order of the first pass"
            )
        if [p[0] for p in projections] != [p for p in self._projections if p is not None]:
            raise AdapterProofError(f"{self.family}: the output projections did not run once per layer, in order")

    def _prove(self, index: int, recording):
        call, (_, X) = recording.calls[index], recording.inputs[index]
        if X is None:
            raise AdapterProofError(f"layer {index}: the attention module's input was not captured")
        projection = self._projections[index]
        captured = None
        if projection is not None:
            position = sum(p is not None for p in self._projections[:index])
            captured = (projection, recording.projections[position][1:])
        try:
            with self._capture.float64():
                return prove_layer(self._model, call, _np(X)[0], captured)
        except AdapterProofError as exc:
            raise AdapterProofError(f"{self.family} layer {index}: {exc}") from None

    # ---- forward pass --------------------------------------------------------------------------------

    def _forward(self, ids: np.ndarray):
        batch = ids.ndim == 2
        with self._capture.recording() as recording:
            out = self._run(ids if batch else ids[None])
        hidden = getattr(out, "hidden_states", None)
        if hidden is None:
            raise ValueError(f"{self.family}: the model returned no hidden states")
        self._checked(recording)
        attention = np.stack([_np(c.weights) for c in recording.calls])  # [L, B, H, n, n]
        inputs = np.stack([_np(x) for _, x in recording.inputs])  # [L, B, n, D]
        hidden = np.stack([_np(h) for h in hidden])  # [L+1, B, n, D]
        if not batch:
            self._remember(inputs, recording.calls)
            return hidden[:, 0], inputs[:, 0], attention[:, 0]
        return hidden, inputs, attention

    def queries_keys(self, layer: int, X):
        """The queries and keys [H, n, d_head] the layer used on its input ``X`` in the last trace.

        Rotations and norms are the model's own; ``beta * q @ k.T`` plus the layer's bias is its logits.

        A model read through ``transformers`` does not recompute them for another input: they are kept for the last
        :data:`RECENT_TRACES` traces of one sequence; trace the text first.
        """
        layer = check_integer("layer", layer, 0, self.n_layers - 1)
        X = to_numpy(X) if hasattr(X, "shape") else np.asarray(X)
        if X.dtype.kind not in "iuf":
            raise TypeError(f"X must be a real array of shape (n, {self.d_model}), got dtype {X.dtype}")
        X = X.astype(np.float64)
        for inputs, calls in reversed(self._recent):
            if inputs.shape[1] == 1 and inputs[layer, 0].shape == X.shape and np.array_equal(inputs[layer, 0], X):
                call = calls[layer]
                g = self.n_heads // int(call.key.shape[1])
                return _np(call.query)[0], np.repeat(_np(call.key)[0], g, axis=0)
        raise ValueError(
            f"X must be the input layer {layer} read in one of the last {RECENT_TRACES} traces of this {self.family} "
            "model (its queries and keys are the ones transformers computed; trace the text first)"
        )

    def _remember(self, inputs: np.ndarray, calls) -> None:
        self._recent.append((inputs, calls))

    def trace_image(self, image) -> Trace:
        """Run a vision model on one image (a path, a PIL image or an [H, W, C] array) through its preprocessor.

        Tokens are labelled ``[CLS]`` (and ``[DIST]`` for DeiT) and ``patch r,c`` (row, column of the patch grid);
        the class and distillation tokens are flagged special.
        """
        if not self.vision:
            raise ValueError(f"trace_image needs a vision model, got a {self.family} model (use trace)")
        pixels = preprocess_image(image, self._image_processor, self._model.config)
        with self._capture.recording() as recording:
            out = self._run(pixels)
        self._checked(recording)
        attention = np.stack([_np(c.weights)[0] for c in recording.calls])
        inputs = np.stack([_np(x)[0] for _, x in recording.inputs])
        hidden = np.stack([_np(h)[0] for h in out.hidden_states])
        self._remember(inputs[:, None], recording.calls)
        n = attention.shape[-1]
        extra = n - self._patch_count()
        columns = _pair(self._model.config.image_size)[1] // _pair(self._model.config.patch_size)[1]
        tokens = ["[CLS]", "[DIST]"][:extra] + [f"patch {p // columns},{p % columns}" for p in range(n - extra)]
        special = np.arange(n) < extra
        ids = np.arange(n, dtype=np.int64)
        return Trace(tokens, ids, special, hidden, inputs, attention, n_total=n, text=None)

    def to_backend(self, backend: str):
        if backend == "numpy":
            return self
        if backend in ("torch:cpu", "torch:cuda"):
            raise ValueError(
                f"a {self.family} model read through transformers runs on the CPU in float64 here; backend "
                f"{backend!r} is for the bert, gpt2 and llama families"
            )
        raise ValueError(f"backend must be 'numpy', 'torch:cpu' or 'torch:cuda', got {backend!r}")

    @property
    def proof(self) -> list[dict]:
        """Per layer, the largest residual of each proof step on the two probes (see the module docstring)."""
        return [dict(layer.proof) for layer in self.layers]


@dataclass(frozen=True)
class _Labels:
    """What the tokenizer-facing code of Transformer reads from an architecture: the special ids."""

    bos_token_id: int | None
    eos_token_id: int | None
    pad_token_id: int | None
    model_type: str

    def __init__(self, config):
        def one(name):
            value = getattr(config, name, None)
            return value if isinstance(value, int) else None

        object.__setattr__(self, "bos_token_id", one("bos_token_id"))
        object.__setattr__(self, "eos_token_id", one("eos_token_id"))
        object.__setattr__(self, "pad_token_id", one("pad_token_id"))
        object.__setattr__(self, "model_type", str(config.model_type))


def _pair(value) -> tuple[int, int]:
    return (int(value[0]), int(value[1])) if isinstance(value, (tuple, list)) else (int(value), int(value))


def _positions(config) -> int:
    for name in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
                return value - 2  # positions start after the padding index
            return value
    if getattr(config, "model_type", "") == "t5":
        return 512  # relative positions: no table; the usual training length
    raise ValueError(f"{config.model_type}: config.json names no maximum number of positions")


def preprocess_image(image, processor, config):
    """pixel_values [1, C, H, W] of ``image`` through the checkpoint's image processor (or its config's size)."""
    from pathlib import Path

    from PIL import Image

    if isinstance(image, (str, Path)):
        path = Path(image)
        if not path.is_file():
            raise FileNotFoundError(f"image must be an image file, got {str(path)!r}, which does not exist")
        try:
            with Image.open(path) as opened:
                image = opened.convert("RGB")
        except OSError as exc:
            raise ValueError(f"image {str(path)!r} could not be read as an image: {exc}") from None
    elif isinstance(image, np.ndarray):
        if image.ndim != 3 or image.shape[2] not in (1, 3, 4) or image.size == 0:
            raise ValueError(f"image must be an [H, W, C] array with 1, 3 or 4 channels, got shape {image.shape}")
        if image.dtype.kind not in "iuf":
            raise TypeError(f"image must hold real pixel values in [0, 255], got dtype {image.dtype}")
        if not (np.all(np.isfinite(image)) and image.min() >= 0 and image.max() <= 255):
            raise ValueError(
                f"image must hold finite pixel values in [0, 255], got range [{image.min()}, {image.max()}]"
            )
        pixels = np.round(image).astype(np.uint8)
        image = Image.fromarray(pixels[..., 0] if pixels.shape[2] == 1 else pixels).convert("RGB")
    elif not isinstance(image, Image.Image):
        raise TypeError(f"image must be a file path, a PIL image or an [H, W, C] array, got {type(image).__name__}")
    if processor is None:
        raise ValueError(
            f"this {config.model_type} model has no image processor (preprocessor_config.json): it cannot read images"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pixels = processor(images=image.convert("RGB"), return_tensors="np")["pixel_values"]
    return np.asarray(pixels, dtype=np.float64)


def read_transformers(
    model,
    tokenizer=None,
    *,
    name: str = "",
    max_positions: int | None = None,
    image_processor=None,
    copy_model: bool = True,
) -> HookedTransformer:
    """A :class:`HookedTransformer` of a loaded ``transformers`` model (copied to float64 with eager attention).

    The model itself is not changed (``copy_model=False``: converted in place, for a model loaded only for this).
    Encoder–decoder models (T5) are read through their encoder.
    """
    import copy

    import torch

    config = getattr(model, "config", None)
    if not isinstance(model, torch.nn.Module) or not isinstance(getattr(config, "model_type", None), str):
        raise TypeError(
            f"model must be a transformers PreTrainedModel (a torch module with .config.model_type), got "
            f"{type(model).__name__}"
        )
    model_type = config.model_type
    if model_type in INLINE_FAMILIES:
        raise ValueError(f"model_type {model_type!r} is not read: {INLINE_FAMILIES[model_type]}")
    if model_type in UNREAD_INPUTS:
        raise ValueError(f"model_type {model_type!r} is not read: {UNREAD_INPUTS[model_type]}")
    if getattr(model.config, "is_encoder_decoder", False) and hasattr(model, "get_encoder"):
        model = model.get_encoder()
    copied = (copy.deepcopy(model) if copy_model else model).to(torch.float64).eval()
    if hasattr(copied, "set_attn_implementation"):
        copied.set_attn_implementation("eager")
    else:
        copied.config._attn_implementation = "eager"
    if getattr(copied.config, "_experts_implementation", None) not in (None, "eager"):
        # mixture-of-experts blocks: the plain loop over experts (the grouped kernels take no float64)
        if hasattr(copied, "set_experts_implementation"):
            copied.set_experts_implementation("eager")
        else:
            copied.config._experts_implementation = "eager"
    return HookedTransformer(copied, tokenizer, name=name, max_positions=max_positions, image_processor=image_processor)


#: Checkpoint classes for model types whose ``AutoModel`` is not the tower the workbench reads.
_TOWERS = {"clip": "CLIPVisionModel", "siglip": "SiglipVisionModel"}


def load_with_transformers(checkpoint, *, max_positions: int | None = None) -> HookedTransformer:
    """A checkpoint directory of a family the workbench does not implement itself, loaded by ``transformers``.

    ``checkpoint`` is an opened :class:`~workbench.models.Checkpoint` (its files already checked).  Every tensor must
    be read: loading fails, naming them, when the checkpoint lacks tensors the model needs (they would be random)
    or holds tensors it does not use, apart from the documented task heads and buffers
    (:data:`~workbench.models._transformer.UNREAD_TENSORS`) and, for CLIP, the text tower.
    """
    model_type = checkpoint.config.get("model_type")
    source = str(checkpoint.directory)
    if model_type in INLINE_FAMILIES or model_type in UNREAD_INPUTS:
        reason = INLINE_FAMILIES.get(model_type) or UNREAD_INPUTS[model_type]
        raise ValueError(f"model_type {model_type!r} in {source}/config.json is not read: {reason}")
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ValueError(
            f"reading a {model_type!r} checkpoint runs transformers' own implementation, which needs torch and "
            f"transformers ({exc.name} is not installed): pip install 'torch==2.13.0' transformers"
        ) from None
    from transformers import AutoModel
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    if model_type not in CONFIG_MAPPING:
        raise ValueError(
            f"model_type {model_type!r} in {source}/config.json is unknown to transformers {transformers.__version__}"
        )
    loader = getattr(transformers, _TOWERS[model_type]) if model_type in _TOWERS else AutoModel
    _check_size(checkpoint, loader, model_type)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()
        bar = transformers.utils.logging.is_progress_bar_enabled()
        transformers.utils.logging.disable_progress_bar()  # the command's output stays the report
        try:
            model, info = loader.from_pretrained(
                source,
                dtype=torch.float64,
                attn_implementation="eager",
                local_files_only=True,
                output_loading_info=True,
            )
        finally:
            transformers.logging.set_verbosity(verbosity)
            if bar:
                transformers.utils.logging.enable_progress_bar()
    tower = r"^(text_model|text_projection|visual_projection|logit_scale)\b" if model_type in _TOWERS else None
    unread = sorted(
        k
        for k in info.get("unexpected_keys", ())
        if not UNREAD_TENSORS.search(k) and not (tower and re.match(tower, k))
    )
    missing = sorted(info.get("missing_keys", ()))
    mismatched = sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get("mismatched_keys", ()))
    for what, names in (
        ("holds tensors the model does not read", unread),
        ("lacks tensors the model needs (transformers would fill them with random numbers)", missing),
        ("holds tensors of the wrong shape", mismatched),
    ):
        if names:
            shown = ", ".join(names[:4]) + (f", … ({len(names)} in all)" if len(names) > 4 else "")
            raise ValueError(f"{source} {what}: {shown}; it is not read (is config.json's model_type the model's own?)")
    processor = None
    if (checkpoint.directory / "preprocessor_config.json").is_file():
        from transformers import AutoImageProcessor

        processor = AutoImageProcessor.from_pretrained(source, local_files_only=True)
    return read_transformers(
        model,
        checkpoint.tokenizer(),
        name=checkpoint.directory.name,
        max_positions=max_positions,
        image_processor=processor,
        copy_model=False,
    )


def _check_size(checkpoint, loader, model_type: str) -> None:
    """Refuse, before anything is allocated, a model the checkpoint cannot fill or the memory budget cannot hold.

    A small checkpoint relabelled qwen3 would otherwise build qwen3's 8-billion-parameter default in float64.
    """
    import torch
    from transformers import AutoConfig

    from workbench.memory import check_memory

    source = str(checkpoint.directory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if loader.__name__.startswith("Auto"):
            config = AutoConfig.from_pretrained(source, local_files_only=True)
            build = loader.from_config
        else:
            config = loader.config_class.from_pretrained(source, local_files_only=True)
            build = loader._from_config
        with torch.device("meta"):
            skeleton = build(config)
    needed = sum(p.numel() for p in skeleton.parameters())
    held = sum(math.prod(checkpoint.shape(name)) for name in checkpoint.names)
    if needed > 1.5 * held + 4096:
        raise ValueError(
            f"{source}/config.json describes a {model_type} model of {needed:.3g} parameters, but the checkpoint holds "
            f"{held:.3g}: it lacks tensors the model needs (is config.json's model_type the model's own?)"
        )
    # float64 weights, and the eager attention's [H, n, n] per layer is small beside them at the lengths read
    check_memory(f"the {model_type} model in float64 ({needed:.3g} parameters)", 8.0 * needed)
