"""Settings of the long-context comparison: :class:`LongContextConfig`, its field checks and presets.

The experiment (:func:`workbench.experiments.run_long_context`, :mod:`workbench.experiments.long_context._run`)
trains banded exp-Markov and softmax attention at every context of ``contexts`` with a matched budget; the presets
are ``quick`` (seconds, every code path), ``paper`` (contexts 256–4096 on one core) and ``gpu`` (to 16384).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, ClassVar

from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    device_check,
    integer_check,
    name_check,
    range_check,
)
from workbench.validation import check_choice

__all__ = ["LongContextConfig"]


def _check_contexts(config, name: str, value) -> None:
    if not isinstance(value, tuple) or not value:
        raise TypeError(f"{name} must be a non-empty tuple of integers, got {value!r}")
    for n in value:
        integer_check(2)(config, name, n)
    if any(b <= a for a, b in itertools.pairwise(value)):
        raise ValueError(f"{name} must be strictly increasing, got {value}")


def _check_tokens_per_step(config, name: str, value) -> None:
    integer_check(1)(config, name, value)
    bad = [n for n in config.contexts if value % n]
    if bad:
        raise ValueError(
            f"{name} must be a multiple of every context (whole windows), got {value}, not a multiple of {bad[0]}"
        )


def _check_eval_bytes(config, name: str, value) -> None:
    integer_check(1)(config, name, value)
    if value < max(config.contexts):
        raise ValueError(f"{name} must be at least the largest context {max(config.contexts)}, got {value}")


_PRESETS: dict[str, dict[str, Any]] = {
    # Seconds on one core: every code path, no claim about the mixers.
    "quick": dict(
        contexts=(32, 64),
        d_model=32,
        n_heads=2,
        n_layers=2,
        levels=2,
        steps=12,
        tokens_per_step=256,
        warmup=3,
        log_every=6,
        eval_bytes=2048,
        check_context=32,
        timing_repeats=3,
        explicit_max_context=64,
    ),
    # Ten models (5 contexts x 2 mixers; 0.13 M parameters + a 64 n position table), 4096 bytes a step.  Measured
    # at n = 256 (2026-12-02, a 2-core machine shared with three other runs): the softmax model trained in 75 s, the
    # exp-Markov model in 960 s (the trained layers use K = 26-28 uniformization terms), so expect about an hour of
    # one quiet core in all, most of it the exp-Markov training.
    "paper": dict(
        contexts=(256, 512, 1024, 2048, 4096),
        d_model=64,
        n_heads=4,
        n_layers=2,
        levels=3,
        steps=250,
        tokens_per_step=4096,
        lr=3e-3,
        warmup=25,
        log_every=50,
        eval_bytes=65536,
        check_context=64,
        timing_repeats=5,
        explicit_max_context=2048,
    ),
    # A GPU run to 16384 bytes of context (not run on the CPU machines of this project).
    "gpu": dict(
        contexts=(256, 512, 1024, 2048, 4096, 8192, 16384),
        d_model=256,
        n_heads=8,
        n_layers=4,
        levels=4,
        steps=2000,
        tokens_per_step=32768,
        lr=1e-3,
        warmup=100,
        log_every=250,
        eval_bytes=262144,
        check_context=64,
        timing_repeats=10,
        explicit_max_context=4096,
        device="cuda",
    ),
}


@dataclasses.dataclass(frozen=True)
class LongContextConfig(ExperimentConfig):
    r"""Settings of the long-context comparison of banded exp-Markov and softmax attention.

    Parameters
    ----------
    seed : int
        Seeds the initial weights and the training windows; both mixers at one context are a matched pair.
    contexts : tuple of int
        Strictly increasing contexts :math:`n` (bytes a model reads); one pair of models per context.
    d_model, n_heads, n_layers : int
        Width, heads (dividing ``d_model``), blocks of both models.
    levels : int
        The band: offsets :math:`-1, -2, \dots, -2^{\text{levels}}` (:func:`workbench.nn.multiscale_offsets`).
    t_init : float
        Initial time of every exp-Markov layer, :math:`> 0`.
    time_per : {'layer', 'head'}
        One learned time per layer (shared by its heads) or one per head.
    steps, tokens_per_step : int
        AdamW steps and bytes a step (``tokens_per_step / n`` windows of :math:`n`; a multiple of every context).
    lr, warmup, weight_decay, grad_clip : float, int, float, float
        Peak learning rate, linear warm-up steps (then cosine decay to ``lr / 10``), weight decay, gradient clip.
    log_every : int
        Record the training loss and a held-out estimate every so many steps.
    eval_bytes : int
        Held-out bytes scored at each context (at least the largest context).
    check_context : int
        Window of the operator checks (dense :math:`e^{tQ}` per layer; capped at the context).
    timing_repeats, timing_warmup : int
        Timed repeats (the median is kept) and untimed warm-up repeats.
    explicit_max_context : int
        The explicit softmax (the :math:`n \times n` matrix in memory) is measured up to this context.
    held_out_every : int
        Every so many works one is held out (:func:`~workbench.experiments.common.shakespeare_bytes`).
    device : str
        ``"cpu"`` or ``"cuda[:N]"``.
    name : str
        The preset's name (``"custom"`` otherwise).

    Examples
    --------
    >>> LongContextConfig.preset("paper").contexts, LongContextConfig.preset("quick").name
    ((256, 512, 1024, 2048, 4096), 'quick')
    >>> LongContextConfig(contexts=(256, 512), tokens_per_step=768)
    Traceback (most recent call last):
        ...
    ValueError: tokens_per_step must be a multiple of every context (whole windows), got 768, not a multiple of 512
    >>> LongContextConfig(contexts=(512, 256))
    Traceback (most recent call last):
        ...
    ValueError: contexts must be strictly increasing, got (512, 256)
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        **{k: TRAINING_CHECKS[k] for k in ("seed", "d_model", "n_heads", "steps", "lr", "weight_decay", "log_every")},
        "contexts": _check_contexts,
        "n_layers": integer_check(1),
        "levels": integer_check(0, 16),
        "t_init": range_check(0.0, 1e6, low_inclusive=False),
        "time_per": lambda config, name, value: check_choice(name, value, ("layer", "head")),
        "tokens_per_step": _check_tokens_per_step,
        "warmup": integer_check(0),
        "grad_clip": range_check(0.0, low_inclusive=False),
        "eval_bytes": _check_eval_bytes,
        "check_context": integer_check(2),
        "timing_repeats": integer_check(1),
        "timing_warmup": integer_check(0),
        "explicit_max_context": integer_check(0),
        "held_out_every": integer_check(2),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    contexts: tuple[int, ...] = (256, 512, 1024, 2048, 4096)
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    levels: int = 3
    t_init: float = 1.0
    time_per: str = "layer"
    steps: int = 250
    tokens_per_step: int = 4096
    lr: float = 3e-3
    warmup: int = 25
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    log_every: int = 50
    eval_bytes: int = 65536
    check_context: int = 64
    timing_repeats: int = 5
    timing_warmup: int = 1
    explicit_max_context: int = 2048
    held_out_every: int = 10
    device: str = "cpu"
    name: str = "custom"
