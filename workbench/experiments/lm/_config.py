"""The settings of the ``lm`` experiment: one byte-level language model, its operator and training budget."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from workbench.attention import OPERATORS
from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    device_check,
    eval_bytes_check,
    even_context_check,
    integer_check,
    name_check,
    range_check,
)
from workbench.validation import check_choice

__all__ = ["LanguageModelConfig"]

#: The operators Table 2 compares (ATAP was not evaluated there; it is accepted here too).
LM_OPERATORS = ("ATTN", "DMTN", "DMAP")


def _check_operator(config, name: str, value) -> None:
    check_choice(name, value, OPERATORS)


_PRESETS: dict[str, dict[str, Any]] = {
    # Seconds on one core: the CI preset (every code path, no claim about the operators).
    "quick": dict(
        context=32, d_model=32, n_heads=2, n_layers=2, steps=30, batch=8, warmup=5, log_every=10, eval_bytes=4096
    ),
    # 0.87 M parameters; about 4-5 min per model on one core of the 2-core machine (0.5-0.6 s a step).
    "paper": dict(
        context=128,
        d_model=128,
        n_heads=4,
        n_layers=4,
        steps=400,
        batch=32,
        lr=3e-3,
        warmup=40,
        log_every=50,
        eval_bytes=131072,
    ),
    # A larger model for a GPU (about 10.8 M parameters): not run on the CPU machines of this project.
    "gpu": dict(
        context=256,
        d_model=384,
        n_heads=6,
        n_layers=6,
        steps=5000,
        batch=64,
        lr=1e-3,
        warmup=200,
        log_every=250,
        eval_bytes=970752,
        device="cuda",
    ),
}


@dataclasses.dataclass(frozen=True)
class LanguageModelConfig(ExperimentConfig):
    r"""Settings of one byte-level language model (Table 2 at workbench scale).

    Parameters
    ----------
    seed : int
        Seeds the initial weights, the training windows and nothing else (the held-out bytes are fixed and the
        probe sequences are seeded by ``seed`` too), so two operators at one seed are a matched pair.
    operator : {'ATTN', 'DMTN', 'DMAP', 'ATAP'}
        The score geometry of every head.
    context : int
        Bytes a model reads (even, :math:`\ge 4`); also the learned position table's length.
    d_model, n_heads, n_layers : int
        Width, heads (dividing ``d_model``), blocks.
    steps, batch : int
        AdamW steps and windows per step (``batch × context`` bytes a step).
    lr, warmup, weight_decay, grad_clip : float, int, float, float
        Peak learning rate, linear warm-up steps (then cosine decay to ``lr / 10``; a warm-up of ``steps`` or more
        never decays), decoupled weight decay,
        gradient-norm clip.
    log_every : int
        Record the training loss and a held-out estimate (the first ``eval_bytes / 8`` bytes) every so many steps.
    eval_bytes : int
        Held-out bytes scored for the final bits per byte (each predicted once).
    held_out_every : int
        Every so many works (sorted by name) one is held out (:func:`~workbench.experiments.common.shakespeare_bytes`).
    device : str
        ``"cpu"`` or ``"cuda[:N]"``.
    name : str
        The preset's name (``"custom"`` otherwise).

    Examples
    --------
    >>> LanguageModelConfig.preset("paper").context, LanguageModelConfig.preset("quick").name
    (128, 'quick')
    >>> LanguageModelConfig(operator="softmax")
    Traceback (most recent call last):
        ...
    ValueError: operator must be one of 'DMAP', 'DMTN', 'ATAP', 'ATTN', got 'softmax'
    >>> LanguageModelConfig(context=33)
    Traceback (most recent call last):
        ...
    ValueError: context must be even (the induction probe repeats context / 2 bytes), got 33
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        **TRAINING_CHECKS,
        "operator": _check_operator,
        "context": even_context_check,
        "n_layers": integer_check(1),
        "warmup": integer_check(0),
        "grad_clip": range_check(0.0, low_inclusive=False),
        "eval_bytes": eval_bytes_check,
        "held_out_every": integer_check(2),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    operator: str = "ATTN"
    context: int = 128
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    steps: int = 400
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 40
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    log_every: int = 50
    eval_bytes: int = 131072
    held_out_every: int = 10
    device: str = "cpu"
    name: str = "custom"
