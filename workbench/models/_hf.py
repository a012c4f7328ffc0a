r"""A ``transformers`` model object read into the workbench's own forward pass.

:func:`from_transformers` takes a loaded ``transformers`` model (``BertModel``, ``GPT2Model``,
``GPT2LMHeadModel``, ``LlamaModel``, ``LlamaForCausalLM``, ``Qwen2Model``, ``MistralModel``...), reads its
configuration (``model.config.to_dict()``) and its ``state_dict`` (widened exactly to float64), and returns the
same :class:`~workbench.models.Transformer` that :func:`~workbench.models.load_model` builds from the model's
directory.  Nothing of ``transformers`` is imported here for those families: the object is only read.  A model
of any other family is handed to :func:`~workbench.models.read_transformers` (run by ``transformers`` itself).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.models._architecture import FAMILIES, parse_architecture
from workbench.models._layers import checked_shape, weight_prefix
from workbench.models._transformer import Transformer

__all__ = ["from_transformers"]


def _backend_tokenizer(tokenizer):
    if tokenizer is None:
        return None
    inner = getattr(tokenizer, "backend_tokenizer", None)  # a transformers fast tokenizer wraps a tokenizers one
    tokenizer = tokenizer if inner is None else inner
    from tokenizers import Tokenizer

    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(
            "tokenizer must be a tokenizers.Tokenizer or a transformers fast tokenizer (with .backend_tokenizer), "
            f"got {type(tokenizer).__name__}"
        )
    return tokenizer


#: The segment TransformerLens's bridge inserts into every key of the model it wraps.
_BRIDGE_SEGMENT = "._original_component"


def _unwrapped(model):
    """The plain ``transformers`` model behind a TransformerLens ``TransformerBridge`` (or the model it wrapped).

    The bridge keeps the model as ``original_model`` with each submodule replaced by a wrapper (every state-dict
    key gains ``._original_component``, and the wrappers cannot be copied); a fresh model of the same class and
    configuration is loaded with the same tensors, keys restored, every one of them used.
    """
    if type(model).__module__.startswith("transformer_lens") and hasattr(model, "original_model"):
        model = model.original_model
    state_dict = getattr(model, "state_dict", None)
    if not callable(state_dict) or not any(_BRIDGE_SEGMENT in key for key in state_dict()):
        return model
    import copy

    import torch

    state = {key.replace(_BRIDGE_SEGMENT, ""): value for key, value in state_dict().items()}
    with torch.device("meta"):
        fresh = type(model)(copy.deepcopy(model.config))
    missing, unexpected = fresh.load_state_dict(state, strict=False, assign=True)
    buffers = {name for name, _ in fresh.named_buffers()}
    missing = [k for k in missing if k not in buffers]
    # The bridge's state dict also holds its own views (aliases such as blocks' ln1, the q/k/v split of a fused
    # projection): keys the wrapped model does not own, left aside.  Every tensor the model owns must be there.
    del unexpected
    if missing:
        raise ValueError(
            f"model wraps a {type(model).__name__} that lacks tensors a fresh one has, after TransformerLens's "
            f"renaming: {', '.join(missing[:3])}" + (f", … ({len(missing)} in all)" if len(missing) > 3 else "")
        )
    for name, buffer in list(fresh.named_buffers()):
        if buffer.is_meta:  # non-persistent buffers (rotary tables): the model's own, recomputed on the CPU
            owner, _, leaf = name.rpartition(".")
            module = fresh.get_submodule(owner) if owner else fresh
            source = model.get_submodule(owner.replace(_BRIDGE_SEGMENT, "")) if owner else model
            module._buffers[leaf] = getattr(source, leaf, None)
    return fresh.eval()


def from_transformers(model, tokenizer=None, *, max_positions: int | None = None) -> Transformer:
    """The :class:`~workbench.models.Transformer` of a ``transformers`` model object.

    Parameters
    ----------
    model : transformers.PreTrainedModel or transformer_lens.model_bridge.TransformerBridge
        A model of any family the workbench reads (or a TransformerLens bridge around one, or the model a bridge
        wrapped) (a base model or one with a head; the head is not read).  BERT,
        GPT-2 and the Llama family run in the workbench's own forward pass; every other family as ``transformers``
        runs it, on a float64 copy (:class:`~workbench.models.HookedTransformer`).
    tokenizer : tokenizers.Tokenizer or transformers fast tokenizer, optional
        Without one the text methods raise a clear error and ``trace_ids`` works.
    max_positions : int, optional
        Read at most this many tokens (default: the model's positions).

    Raises
    ------
    TypeError
        ``model`` has no ``config`` and ``state_dict``, or the tokenizer is of another kind.
    ValueError
        Unsupported model type or option, or a missing or mis-shaped tensor.
    """
    model = _unwrapped(model)
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict") or not callable(getattr(model, "state_dict", None)):
        raise TypeError(
            f"model must be a transformers PreTrainedModel (with .config and .state_dict()), got {type(model).__name__}"
        )
    name = Path(str(getattr(config, "name_or_path", "") or "")).name or type(model).__name__
    if getattr(config, "model_type", None) not in FAMILIES:
        # every other family runs as transformers runs it (a float64 copy), its operator proven at load
        from workbench.models._hooked import read_transformers

        return read_transformers(model, _backend_tokenizer(tokenizer), name=name, max_positions=max_positions)
    architecture = parse_architecture(config.to_dict())
    state = model.state_dict()
    source = f"the state_dict of {type(model).__name__}"
    prefix = weight_prefix(state.keys(), architecture.family, source)

    def get(name: str, shape: tuple) -> np.ndarray:
        key = prefix + name
        if key not in state:
            raise ValueError(f"{source} lacks tensor {key!r}; is it a {architecture.family} model?")
        array = state[key].detach().to("cpu").double().numpy().copy()  # widening to float64 is exact
        if not np.all(np.isfinite(array)):
            raise ValueError(f"tensor {key!r} in {source} has non-finite entries")
        return checked_shape(key, array, shape, source)

    return Transformer(architecture, get, _backend_tokenizer(tokenizer), name=name, max_positions=max_positions)
