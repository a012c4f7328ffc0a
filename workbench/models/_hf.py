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


def from_transformers(model, tokenizer=None, *, max_positions: int | None = None) -> Transformer:
    """The :class:`~workbench.models.Transformer` of a ``transformers`` model object.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A model of any family the workbench reads (a base model or one with a head; the head is not read).  BERT,
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
