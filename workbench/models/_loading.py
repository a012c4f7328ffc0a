"""A checkpoint directory of any family read: the workbench's own forward pass or transformers', by family.

The bert, gpt2 and llama families (``FAMILIES``) run in the workbench's own numpy forward pass
(:func:`~workbench.models._transformer.read_own_family`: no torch, no ``transformers``); every other family runs
as ``transformers`` runs it, its operator proven at load (:func:`~workbench.models._hooked.load_with_transformers`).
"""

from __future__ import annotations

import math

from workbench.memory import check_memory
from workbench.models._architecture import FAMILIES
from workbench.models._checkpoint import Checkpoint
from workbench.models._hooked import load_with_transformers
from workbench.models._transformer import Transformer, read_own_family

__all__ = ["load_model"]


def load_model(path, *, max_positions: int | None = None) -> Transformer:
    """Load a checkpoint directory (Hugging Face layout) of any family the workbench reads.

    bert, gpt2 and the llama family (llama, qwen2, mistral) run in the workbench's own float64 forward pass
    (:class:`~workbench.models.Transformer`); every other family ``transformers`` runs through an attention kernel
    is run by ``transformers`` itself, its operator proven at load (:class:`~workbench.models.HookedTransformer`).

    Parameters
    ----------
    path : str or Path
        A directory with ``config.json``, ``model.safetensors`` (or ``model.safetensors.index.json`` and its
        shards) and, for the text methods, ``tokenizer.json`` (a vision model: ``preprocessor_config.json``).
    max_positions : int, optional
        Read at most this many tokens (default: the model's positions; for bert, sentence-transformers'
        ``max_seq_length`` from ``sentence_bert_config.json`` when present).

    Raises
    ------
    FileNotFoundError
        The directory, ``config.json`` or the weights are missing.
    ValueError
        A file is corrupt; a tensor is missing, mis-shaped or not read; the model type or an option is not
        supported (the message says why); the weights as float64 would not fit the memory budget
        (:mod:`workbench.memory`), judged from the headers before any tensor is read.
    """
    checkpoint = Checkpoint(path)
    # From the headers, before any tensor is read: the weights as float64 (the dtype every route computes in).
    elements = sum(math.prod(checkpoint.shape(name)) for name in checkpoint.names)
    check_memory(
        f"the weights of {checkpoint.directory} as float64 ({elements:.3g} numbers)",
        8.0 * elements,
        "raise --max-memory / WORKBENCH_MAX_MEMORY if the machine has the memory, or load a smaller checkpoint",
    )
    if checkpoint.config.get("model_type") in FAMILIES:
        return read_own_family(checkpoint, max_positions=max_positions)
    return load_with_transformers(checkpoint, max_positions=max_positions)
