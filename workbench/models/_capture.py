r"""What a ``transformers`` model computes at its attention kernel, captured while it runs in float64.

Every family of ``transformers`` 5 (but a few older ones) calls one function per layer, ``eager_attention_forward``
of its modelling module, with the queries and keys after every projection, norm and rotation, the values, the
additive mask (causal, padding, sliding window, and ALiBi where a family folds it in), the scale and the
family's extras (``softcap``, T5's ``position_bias``).  :class:`KernelCapture` replaces that name in the
modelling modules for the duration of a forward pass by a wrapper that calls the original and records its
arguments and its attention probabilities, together with what each attention module read (a forward pre-hook)
and what its output projection received and returned (a forward hook).  Nothing of the model is re-implemented:
the numbers recorded are the family's own.

``transformers`` casts a few steps to float32 even in a float64 model (softmax, RMSNorm, rotary frequencies:
explicit ``torch.float32`` / ``torch.float`` arguments).  While a capture is active the model's modelling modules
(and ``transformers.modeling_rope_utils``) see a ``torch`` whose ``float32`` and ``float`` are float64, so the
whole pass runs in float64; nothing else of ``torch`` changes.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from dataclasses import dataclass, field

__all__ = []  # package-internal: the transformers reader (workbench.models._hooked) uses these

_ROPE_MODULES = ("transformers.modeling_rope_utils", "transformers.masking_utils")


class _Float64Torch:
    """``torch`` with ``float`` and ``float32`` meaning float64 (the explicit casts of the modelling code only)."""

    def __init__(self, torch):
        self._torch = torch
        self.float = torch.float64
        self.float32 = torch.float64

    def __getattr__(self, name):
        return getattr(self._torch, name)


def _float64_method(torch):
    def float(self, memory_format=torch.preserve_format):
        return self.to(torch.float64, memory_format=memory_format)

    return float


@dataclass
class KernelCall:
    """One call of a layer's attention kernel: its inputs (batch first, as the family passes them) and output."""

    module: object
    query: object  # [B, H, n, d]
    key: object  # [B, H_kv, n, d]
    value: object  # [B, H_kv, n, d]
    mask: object  # additive, broadcastable to [B, H, n, n], or None
    kwargs: dict
    weights: object  # [B, H, n, n], the family's attention probabilities
    output: object  # [B, n, H, d]


@dataclass
class Recording:
    calls: list = field(default_factory=list)
    # in call order (a module shared by several layers, as in ALBERT, appears once per call)
    inputs: list = field(default_factory=list)  # (attention module, what it read [B, n, D])
    projections: list = field(default_factory=list)  # (output projection, its input, its output)


def _modelling_modules(model) -> list:
    names = {type(m).__module__ for m in model.modules()} | set(_ROPE_MODULES)
    return [importlib.import_module(n) for n in sorted(names) if n.startswith("transformers")]


class KernelCapture:
    """Records the attention kernel of every layer of ``model`` while active (``with capture.recording() as r``).

    ``hook_inputs(modules)`` and ``hook_projections(modules)`` add the pre-hooks (what each attention module read)
    and hooks (input and output of each output projection) once the modules are known (after a first pass).
    """

    def __init__(self, model):
        import torch

        self.model = model
        self.modules = _modelling_modules(model)
        self._torch = torch
        self._active: Recording | None = None
        self._handles = []

    @property
    def kernels(self) -> list:
        """The modelling modules that define an ``eager_attention_forward`` (the kernels this capture wraps)."""
        return [m for m in self.modules if hasattr(m, "eager_attention_forward")]

    def _wrap(self, original):
        def eager_attention_forward(module, query, key, value, attention_mask, *args, **kwargs):
            output, weights = original(module, query, key, value, attention_mask, *args, **kwargs)
            if self._active is not None:
                if args:  # the families pass everything after the mask by keyword; anything else is unknown
                    kwargs = {**kwargs, "positional arguments": args}
                self._active.calls.append(
                    KernelCall(
                        module,
                        query.detach(),
                        key.detach(),
                        value.detach(),
                        attention_mask,
                        kwargs,
                        None if weights is None else weights.detach(),
                        output.detach(),
                    )
                )
            return output, weights

        eager_attention_forward.__wrapped__ = original
        return eager_attention_forward

    def hook_inputs(self, modules) -> None:
        def read(module, args, kwargs):
            if self._active is not None:
                x = kwargs.get("hidden_states", args[0] if args else None)
                self._active.inputs.append((module, None if x is None else x.detach()))

        for module in modules:
            self._handles.append(module.register_forward_pre_hook(read, with_kwargs=True))

    def hook_projections(self, modules) -> None:
        def read(module, args, output):
            if self._active is not None:
                self._active.projections.append((module, args[0].detach(), output.detach()))

        for module in modules:
            self._handles.append(module.register_forward_hook(read))

    @contextlib.contextmanager
    def float64(self):
        """Inside, the model's modelling modules see float32 casts as float64 (also for its norms run alone)."""
        saved = [(m, m.torch) for m in self.modules if hasattr(m, "torch") and not isinstance(m.torch, _Float64Torch)]
        tensor = self._torch.Tensor
        to_float = tensor.float
        try:
            for module, _ in saved:
                module.torch = _Float64Torch(self._torch)
            # some families cast with the method (modernbert's rotary: `q.float()`): float64 there too
            tensor.float = _float64_method(self._torch)
            with self._torch.no_grad():
                yield
        finally:
            tensor.float = to_float
            for module, original in saved:
                module.torch = original

    @contextlib.contextmanager
    def recording(self):
        """Run the model inside: float64 casts mapped, kernels wrapped; yields the :class:`Recording`."""
        kernels = [(m, m.eager_attention_forward) for m in self.kernels]
        recording = Recording()
        try:
            with self.float64():
                for module, original in kernels:
                    module.eager_attention_forward = self._wrap(original)
                self._active = recording
                yield recording
        finally:
            self._active = None
            for module, original in kernels:
                module.eager_attention_forward = original

    def rebuild_position_tables(self) -> list[str]:
        """Recompute, in float64, the position tables the model's rotary modules computed at construction.

        ``transformers`` builds them in float32 (gptj's sin/cos table, the inverse frequencies of the llama-style
        rotary modules); a float64 copy of the model keeps float32-rounded tables, whose rotations are orthogonal
        only to ~6e-8.  Each rotary module is constructed again from the model's configuration with the float32
        casts mapped, and its buffers replace the old ones.  Returns the class names rebuilt.
        """
        rebuilt = []
        config = getattr(self.model, "config", None)
        for module in self.model.modules():
            name = type(module).__name__
            if "Rotary" not in name or not module._buffers:
                continue
            try:
                with self.float64():
                    fresh = type(module)(getattr(module, "config", None) or config)
            except Exception:
                continue
            for key, buffer in fresh._buffers.items():
                old = module._buffers.get(key)
                if buffer is not None and old is not None and buffer.shape == old.shape:
                    module._buffers[key] = buffer.to(device=old.device, dtype=self._torch.float64)
            rebuilt.append(name)
        return rebuilt

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


def module_of(obj) -> object:
    """The modelling module of a ``transformers`` object (for messages)."""
    return sys.modules.get(type(obj).__module__)
