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

Families without a kernel function in ``transformers`` (bloom, gpt_neo, mpnet and deberta-v2 compute their
attention inside their own module) are read from the attention the model reports, with their own proof
(:mod:`workbench.models._inline`): there the score residual — the log-attention minus the bilinear form — must be a
bias of the positions alone; DeBERTa's disentangled attention fails it and is refused.  A bias that changes with
the content is refused in either route.
"""

from __future__ import annotations

import collections
import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

from workbench.backend import check_view_size, host_array
from workbench.models._adapter import (
    MECHANISMS,
    AdapterProofError,
    HookedLayer,
    LayerProof,
    as_float64,
    output_projection,
    prove_layer,
)
from workbench.models._capture import KernelCapture
from workbench.models._inline import INLINE_MODULES, RESIDUAL_ATOL, inline_modules, prove_inline_layer
from workbench.models._transformer import UNREAD_TENSORS, Trace, Transformer
from workbench.validation import check_integer

__all__ = ["HookedTransformer", "read_transformers"]

#: Traces whose captured queries and keys :meth:`HookedTransformer.queries_keys` keeps (a diagnosis runs two).
RECENT_TRACES = 4
#: What a score term that changes with the content is, where a family is known to have one.
CONTENT_TERMS = {
    "deberta-v2": "DeBERTa's disentangled attention adds content-to-position and position-to-content terms",
}


class HookedTransformer(Transformer):
    """A ``transformers`` model of any family the workbench can prove, run by ``transformers`` in float64.

    Built by :func:`read_transformers` (a model object) or :func:`~workbench.models.load_model` (a directory of a
    family other than bert, gpt2 and llama).  The interface of :class:`~workbench.models.Transformer`:
    tokenize, trace, trace_ids, queries_keys, embed; ``trace_image`` for vision models.  ``layers[l]`` is a
    :class:`HookedLayer` (its ``mechanisms`` and ``proof``).
    """

    def __init__(
        self,
        model,
        tokenizer=None,
        *,
        name: str = "",
        max_positions: int | None = None,
        image_processor=None,
        feature_extractor=None,
    ):
        self._model = model
        self.family = str(model.config.model_type)
        self.name = str(name)
        self.backend = "numpy"
        config = model.config
        self.architecture = _Labels(config)
        self.vision = getattr(model, "main_input_name", "input_ids") == "pixel_values"
        self.audio = getattr(model, "main_input_name", "input_ids") == "input_features"
        self._feature_extractor = feature_extractor
        self.vocab_size = int(getattr(config, "vocab_size", 0) or 0)
        self._image_processor = image_processor
        self._capture = KernelCapture(model)
        self._capture.rebuild_position_tables()
        self._inline = self.family in INLINE_MODULES  # attention computed in the module: read from the outputs
        if not self._inline and not self._capture.kernels:
            raise ValueError(
                f"{self.family}: transformers runs this family without an attention kernel the workbench can capture"
            )
        if self.vision:
            limit = self._patch_count() + self._extra_tokens()
        elif self.audio:
            limit = int(config.max_source_positions)
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
        if self._inline:
            modules = inline_modules(model, self.family)
        else:
            modules = [call.module for call in first.calls]  # one per layer (shared modules repeat: ALBERT)
        if not modules:
            raise ValueError(f"{self.family}: a forward pass called no attention kernel")
        self._modules = modules
        self._projections = [output_projection(model, m) for m in modules]
        distinct = list({id(m): m for m in modules}.values())
        self._capture.hook_inputs(distinct)
        self._capture.hook_projections(list({id(p): p for p in self._projections if p is not None}.values()))
        proofs = []
        for probe in probes:
            with self._capture.recording() as recording:
                out = self._run(probe)
            self._checked(recording)
            proofs.append([self._prove(index, recording, out) for index in range(len(modules))])
        layers = []
        tolerance = RESIDUAL_ATOL if self._inline else 1e-12
        for index, (a, b) in enumerate(zip(*proofs, strict=True)):
            mechanisms = dict(a.mechanisms)
            if np.any(np.abs(a.bias) > tolerance) or np.any(np.abs(b.bias) > tolerance):
                if a.bias.shape == b.bias.shape and np.max(np.abs(a.bias - b.bias)) > tolerance:
                    change = float(np.max(np.abs(a.bias - b.bias)))
                    known = f" ({CONTENT_TERMS[self.family]})" if self.family in CONTENT_TERMS else ""
                    raise AdapterProofError(
                        f"{self.family} layer {index}: the scores minus the bilinear form change with the input (by "
                        f"{change:.3g} between two probes): a score term of the content{known}, not a position bias "
                        "the readings can account for"
                    )
                mechanisms["position_bias"] = MECHANISMS["position_bias"]
            proof = {step: max(a.proof[step], b.proof[step]) for step in a.proof}
            if self._inline:  # step 2 of workbench.models._inline: the same bias of the positions on both probes
                proof["score_residual"] = (
                    float(np.max(np.abs(a.bias - b.bias))) if a.bias.shape == b.bias.shape else 0.0
                )
            layers.append(HookedLayer(a.attention, None, mechanisms, proof))
        self.layers = layers
        first_mha = layers[0].attention
        self.n_layers = len(layers)
        self.n_heads = first_mha.n_heads
        self.n_kv_heads = self.n_heads if self._inline else int(self._last_kv(first))
        self.d_model = first_mha.d_model
        self.d_head = first_mha.d_head
        self.causal = all(p.causal for p in proofs[0])
        self._recent = collections.deque(maxlen=RECENT_TRACES)

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
        if self.audio:  # log-mel frames: two per encoder position (whisper's convolutions have stride 2)
            c = self._model.config
            return [rng.standard_normal((1, c.num_mel_bins, 2 * c.max_source_positions)) for _ in range(2)]
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
        if self.audio:
            return model(input_features=tensor.to(torch.float64), **kwargs)
        return model(input_ids=tensor.to(torch.long), **kwargs)

    def _last_kv(self, recording) -> int:
        return int(recording.calls[0].key.shape[1])

    def _checked(self, recording) -> None:
        """Each layer's kernel call, attention input and output projection, in call order, are the expected ones."""
        L = len(self._modules)
        calls, inputs, projections = recording.calls, recording.inputs, recording.projections
        if self._inline:  # no kernel: the attention comes with the outputs
            calls = [type("Call", (), {"module": m})() for m in self._modules]
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

    def _prove(self, index: int, recording, out):
        (_, X) = recording.inputs[index]
        if X is None:
            raise AdapterProofError(f"layer {index}: the attention module's input was not captured")
        projection = self._projections[index]
        captured = None
        if projection is not None:
            position = sum(p is not None for p in self._projections[:index])
            captured = (projection, recording.projections[position][1:])
        try:
            if self._inline:
                weights = as_float64(out.attentions[index])[0]
                mha, proof, allowed, bias, causal = prove_inline_layer(
                    self._modules[index], self.family, as_float64(X)[0], weights, captured, weights.shape[0]
                )
                mechanisms = {"sliding_window": MECHANISMS["sliding_window"]} if (~allowed & ~np.triu(
                    np.ones(allowed.shape[-2:], bool), 1)).any() else {}  # fmt: skip
                return LayerProof(mha, mechanisms, proof, allowed, bias, causal)
            with self._capture.float64():
                return prove_layer(self._model, recording.calls[index], as_float64(X)[0], captured)
        except AdapterProofError as exc:
            raise AdapterProofError(f"{self.family} layer {index}: {exc}") from None

    # ---- forward pass --------------------------------------------------------------------------------

    def _forward(self, ids: np.ndarray):
        """States [L+1, ..., n, D], attention inputs [L, ..., n, D], attention [L, ..., H, n, n] of ids [..., n]."""
        if ids.ndim == 1:
            return self._forward_one(ids[None])
        return self._pass(ids)[:3]

    def _forward_one(self, inputs):
        """One sequence (ids, pixels or features with a batch axis of 1): its arrays without the batch axis.

        Its captured queries and keys are kept for :meth:`queries_keys`.
        """
        hidden, attention_inputs, attention, calls = self._pass(inputs)
        self._remember(attention_inputs, calls)
        return hidden[:, 0], attention_inputs[:, 0], attention[:, 0]

    def _pass(self, inputs):
        """One forward pass, checked: hidden states, attention inputs, attention (batch axis kept), kernel calls."""
        with self._capture.recording() as recording:
            out = self._run(inputs)
        if getattr(out, "hidden_states", None) is None:
            raise ValueError(f"{self.family}: the model returned no hidden states")
        self._checked(recording)
        attention = np.stack([as_float64(a) for a in out.attentions])  # [L, B, H, n, n]: the model's own
        attention_inputs = np.stack([as_float64(x) for _, x in recording.inputs])  # [L, B, n, D]
        hidden = np.stack([as_float64(h) for h in out.hidden_states])  # [L+1, B, n, D]
        return hidden, attention_inputs, attention, recording.calls

    def queries_keys(self, layer: int, X):
        """The queries and keys [H, n, d_head] the layer used on its input ``X`` in the last trace.

        Rotations and norms are the model's own; ``beta * q @ k.T`` plus the layer's bias is its logits.

        A model read through ``transformers`` does not recompute them for another input: they are kept for the last
        :data:`RECENT_TRACES` traces of one sequence; trace the text first.
        """
        layer = check_integer("layer", layer, 0, self.n_layers - 1)
        X = host_array("X", X)
        check_view_size("X", X)  # a repeated view claiming gigabytes: refused before the float64 copy
        if X.dtype.kind not in "iuf":
            raise TypeError(f"X must be a real array of shape (n, {self.d_model}), got dtype {X.dtype}")
        X = X.astype(np.float64)
        if self._inline:  # affine queries and keys (no rotation, no norm), proven at load: any X
            if X.ndim != 2 or X.shape[1] != self.d_model:
                raise ValueError(f"X must have shape (n, {self.d_model}), got {X.shape}")
            mha = self.layers[layer].attention
            q, k = X @ mha.W_Q, X @ mha.W_K
            return (q if mha.b_Q is None else q + mha.b_Q[:, None]), (k if mha.b_K is None else k + mha.b_K[:, None])
        for inputs, calls in reversed(self._recent):
            if inputs.shape[1] == 1 and inputs[layer, 0].shape == X.shape and np.array_equal(inputs[layer, 0], X):
                call = calls[layer]
                g = self.n_heads // int(call.key.shape[1])
                return as_float64(call.query)[0], np.repeat(as_float64(call.key)[0], g, axis=0)
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
        hidden, inputs, attention = self._forward_one(
            preprocess_image(image, self._image_processor, self._model.config)
        )
        n = attention.shape[-1]
        extra = n - self._patch_count()
        columns = _pair(self._model.config.image_size)[1] // _pair(self._model.config.patch_size)[1]
        tokens = ["[CLS]", "[DIST]"][:extra] + [f"patch {p // columns},{p % columns}" for p in range(n - extra)]
        special = np.arange(n) < extra
        ids = np.arange(n, dtype=np.int64)
        return Trace(tokens, ids, special, hidden, inputs, attention, n_total=n, text=None)

    def trace_audio(self, waveform, sampling_rate: int) -> Trace:
        """Run an audio encoder (whisper) on a mono waveform through the checkpoint's feature extractor.

        The extractor pads or cuts the waveform to its window (whisper: 30 s) and computes log-mel frames; each
        encoder position covers two frames.  Tokens are labelled by their start time (``t=1.24s``); positions
        wholly in the padding after the waveform are flagged special.
        """
        if not self.audio:
            raise ValueError(f"trace_audio needs an audio encoder (whisper), got a {self.family} model")
        features, seconds = preprocess_audio(waveform, sampling_rate, self._feature_extractor)
        hidden, inputs, attention = self._forward_one(features)
        n = attention.shape[-1]
        step = 2 * self._feature_extractor.hop_length / self._feature_extractor.sampling_rate
        tokens = [f"t={k * step:.2f}s" for k in range(n)]
        special = np.arange(n) * step >= seconds  # the padding after the waveform
        if special.all():
            special[0] = False
        return Trace(tokens, np.arange(n, dtype=np.int64), special, hidden, inputs, attention, n_total=n)

    def to_backend(self, backend: str):
        """``self`` for "numpy": a model read through ``transformers`` runs on the CPU in float64."""
        if not isinstance(backend, str):
            raise TypeError(f"backend must be 'numpy', 'torch:cpu' or 'torch:cuda', got {type(backend).__name__}")
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
        if not path.is_file():  # a string that names no file is a bad value of image, like a bad array
            raise ValueError(
                f"image must be an image file, a PIL image or an [H, W, C] array, got {str(path)!r}, which names "
                "no file"
            )
        try:
            with Image.open(path) as opened:
                image = opened.convert("RGB")
        except OSError as exc:
            raise ValueError(f"image {str(path)!r} could not be read as an image: {exc}") from None
    elif isinstance(image, np.ndarray):
        check_view_size("image", image)  # before the scans of every pixel
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


def preprocess_audio(waveform, sampling_rate, extractor) -> tuple[np.ndarray, float]:
    """(log-mel features [1, mels, frames], duration in seconds) of a mono waveform through ``extractor``."""
    from math import gcd

    from workbench.memory import check_memory

    if extractor is None:
        raise ValueError("this model has no feature extractor (preprocessor_config.json): it cannot read audio")
    # samples per second: up to 10 MHz (audio hardware stops near 768 kHz)
    sampling_rate = check_integer("sampling_rate", sampling_rate, 1, 10**7)
    wave = host_array("waveform", waveform)
    check_view_size("waveform", wave)  # before the scans and the float64 copy
    if wave.ndim != 1 or wave.size == 0 or wave.dtype.kind not in "iuf":
        raise ValueError(
            f"waveform must be a nonempty 1-d array of real samples, got shape {wave.shape} and dtype {wave.dtype}"
        )
    if not np.all(np.isfinite(wave)):
        raise ValueError("waveform must hold finite samples, got NaN or infinity")
    limit = float(np.finfo(np.float32).max)  # the extractor computes in float32
    if np.max(np.abs(wave)) > limit:
        raise ValueError(f"waveform must hold samples within float32's range (|x| ≤ {limit:.3g}), got larger ones")
    wave = wave.astype(np.float64)
    target = int(extractor.sampling_rate)
    if sampling_rate != target:  # the extractor's rate, by polyphase resampling
        from scipy.signal import resample_poly

        g = gcd(sampling_rate, target)
        up, down = target // g, sampling_rate // g
        check_memory(f"resampling {wave.size} samples from {sampling_rate} Hz to {target} Hz", 16.0 * wave.size * up)
        wave = resample_poly(wave, up, down)
    features = extractor(wave.astype(np.float32), sampling_rate=target, return_tensors="np")["input_features"]
    return np.asarray(features, dtype=np.float64), wave.size / target


def read_transformers(
    model,
    tokenizer=None,
    *,
    name: str = "",
    max_positions: int | None = None,
    image_processor=None,
    feature_extractor=None,
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
    return HookedTransformer(
        copied,
        tokenizer,
        name=name,
        max_positions=max_positions,
        image_processor=image_processor,
        feature_extractor=feature_extractor,
    )


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
    processor = extractor = None
    if (checkpoint.directory / "preprocessor_config.json").is_file():
        if getattr(model, "main_input_name", "") == "input_features" or model_type == "whisper":
            from transformers import AutoFeatureExtractor

            extractor = AutoFeatureExtractor.from_pretrained(source, local_files_only=True)
        else:
            from transformers import AutoImageProcessor

            processor = AutoImageProcessor.from_pretrained(source, local_files_only=True)
    return read_transformers(
        model,
        checkpoint.tokenizer(),
        name=checkpoint.directory.name,
        max_positions=max_positions,
        image_processor=processor,
        feature_extractor=extractor,
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
