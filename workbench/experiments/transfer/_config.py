"""The settings of the ``transfer`` experiment: the task, the target operator, the stages' budgets, the model."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    device_check,
    even_context_check,
    integer_check,
    name_check,
    range_check,
)
from workbench.validation import check_choice

__all__ = ["STAGES", "TRANSFER_TASKS", "TransferConfig"]


#: The tasks a transfer runs on.
TRANSFER_TASKS = ("shakespeare", "induction")
#: The paper's states and the corner of each (the target replaces DMTN).
STAGES = ("A0", "M1", "A1", "M2")


def _check_choice_of(allowed):
    return lambda config, name, value: check_choice(name, value, allowed)


def _check_adapt_steps(config, name: str, value) -> None:
    if not isinstance(value, tuple) or len(value) != 3:
        raise ValueError(f"adapt_steps must be three step counts (M1, A1, M2), got {value!r}")
    for v in value:
        integer_check(1)(config, name, v)


def _check_pretrained(config, name: str, value) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value:
        raise TypeError(f"pretrained must be a run directory (a str), got {value!r}")
    if config.task != "shakespeare":
        raise ValueError(f"pretrained applies to the shakespeare task only, got task={config.task!r}")


def _check_min_period(config, name: str, value) -> None:
    integer_check(1)(config, name, value)
    if value > config.half_length:
        raise ValueError(f"min_period must be at most half_length={config.half_length}, got {value}")


_PRESETS: dict[str, dict[str, Any]] = {
    "quick": dict(
        context=32,
        d_model=32,
        n_heads=2,
        n_layers=2,
        batch=8,
        pretrain_steps=20,
        adapt_steps=(6, 2, 2),
        warmup=2,
        log_every=10,
        eval_bytes=4096,
        vocab_size=16,
        half_length=8,
        min_period=4,
        eval_batch=16,
    ),
    # The shakespeare task: the Table-2 paper model (0.87 M parameters), A0 with the Table-2 budget, then
    # 240 / 80 / 80 adaptation steps.  The induction task (--set task=induction) reads the vocab/half_length/
    # min_period fields: the widths of the varying-period induction run, 4,000 + 1,500 / 500 / 500 steps.
    "paper": dict(),
}


@dataclasses.dataclass(frozen=True)
class TransferConfig(ExperimentConfig):
    r"""Settings of one sequential transfer ATTN → target → ATTN → target (Table 3 at workbench scale).

    Parameters
    ----------
    seed : int
        Initial weights, training stream, evaluation batches.
    task : {'shakespeare', 'induction'}
        The byte language model on the Shakespeare corpus, or the varying-period induction task.
    target : {'DMTN', 'DMAP'}
        The corner of the M stages (the paper's is DMTN).
    pretrain_steps : int
        Steps of :math:`A_0` (ATTN from scratch).  ``None`` takes the task's default: 400 (shakespeare, the
        Table-2 budget) or 4,000 (induction).
    pretrained : str, optional
        Shakespeare task: the run directory of a finished ``workbench experiment lm`` ATTN run (for example a
        task of the Table-2 sweep) whose model is :math:`A_0`, instead of training it here; ``{seed}`` in it is
        replaced by ``seed`` (nothing else: other braces are part of the path).
        Its settings must be this transfer's (seed, widths, ``pretrain_steps``, batch,
        learning rate, warm-up, …): then it is the very model :math:`A_0` would be, and the adaptations read the
        training windows after the ones it read.
    adapt_steps : tuple of int
        Adaptation steps of :math:`M_1, A_1, M_2` (the paper's ratio is 3 : 1 : 1).  ``None``: (240, 80, 80)
        for shakespeare, (1500, 500, 500) for induction.
    d_model, n_heads, n_layers, batch, lr, weight_decay, grad_clip, log_every : as in the language model
        ``None`` for ``d_model`` takes the task's width (128 for shakespeare, 64 for induction), and ``None`` for
        ``n_layers`` its depth (4 and 2).
    warmup : int
        Linear warm-up steps of every stage's learning rate (then cosine decay to a tenth; shakespeare only, the
        induction task trains at a constant rate as its experiment does).
    context, eval_bytes, held_out_every : int
        Shakespeare task: bytes a model reads, held-out bytes scored, the held-out split.
    vocab_size, half_length, min_period, eval_batch : int
        Induction task: :math:`V`, :math:`T`, the shortest training period, the eval batch.
    device, name : str

    Examples
    --------
    >>> cfg = TransferConfig.preset("paper")
    >>> cfg.steps_of("A0"), cfg.steps_of("M1"), cfg.width
    (400, 240, 128)
    >>> TransferConfig(task="induction").adaptation
    (1500, 500, 500)
    >>> TransferConfig(target="ATAP")
    Traceback (most recent call last):
        ...
    ValueError: target must be one of 'DMTN', 'DMAP', got 'ATAP'
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide the width, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        "seed": TRAINING_CHECKS["seed"],
        "task": _check_choice_of(TRANSFER_TASKS),
        "target": _check_choice_of(("DMTN", "DMAP")),
        "pretrain_steps": lambda c, n, v: v is None or integer_check(1)(c, n, v),
        "pretrained": _check_pretrained,
        "adapt_steps": lambda c, n, v: v is None or _check_adapt_steps(c, n, v),
        "d_model": lambda c, n, v: v is None or integer_check(1)(c, n, v),
        "n_heads": lambda c, n, v: _check_heads(c, n, v),
        "n_layers": lambda c, n, v: v is None or integer_check(1)(c, n, v),
        "batch": TRAINING_CHECKS["batch"],
        "lr": lambda c, n, v: v is None or TRAINING_CHECKS["lr"](c, n, v),
        "warmup": integer_check(0),
        "weight_decay": TRAINING_CHECKS["weight_decay"],
        "grad_clip": range_check(0.0, low_inclusive=False),
        "log_every": TRAINING_CHECKS["log_every"],
        "context": even_context_check,
        "eval_bytes": integer_check(1),
        "held_out_every": integer_check(2),
        "vocab_size": integer_check(2),
        "half_length": integer_check(2),
        "min_period": _check_min_period,
        "eval_batch": integer_check(1),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    task: str = "shakespeare"
    target: str = "DMTN"
    pretrain_steps: int | None = None
    pretrained: str | None = None
    adapt_steps: tuple | None = None
    d_model: int | None = None
    n_heads: int = 4
    n_layers: int | None = None
    batch: int = 32
    lr: float | None = None
    warmup: int = 40
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    log_every: int = 50
    context: int = 128
    eval_bytes: int = 65536
    held_out_every: int = 10
    vocab_size: int = 64
    half_length: int = 32
    min_period: int = 8
    eval_batch: int = 64
    device: str = "cpu"
    name: str = "custom"

    # -- the task's defaults for the fields left None ------------------------------------------------------
    @property
    def width(self) -> int:
        """``d_model``, or the task's width."""
        return self.d_model or (128 if self.task == "shakespeare" else 64)

    @property
    def depth(self) -> int:
        """``n_layers``, or the task's depth."""
        return self.n_layers or (4 if self.task == "shakespeare" else 2)

    @property
    def adaptation(self) -> tuple[int, int, int]:
        """``adapt_steps``, or the task's 3 : 1 : 1 budget."""
        return self.adapt_steps or ((240, 80, 80) if self.task == "shakespeare" else (1500, 500, 500))

    @property
    def peak_lr(self) -> float:
        """``lr``, or the task's learning rate (3e-3 shakespeare, 1e-3 induction)."""
        return self.lr or (3e-3 if self.task == "shakespeare" else 1e-3)

    def steps_of(self, stage: str) -> int:
        """Training steps of a stage: ``pretrain_steps`` for A0, else its share of the adaptation."""
        if stage == "A0":
            return self.pretrain_steps or (400 if self.task == "shakespeare" else 4000)
        return self.adaptation[STAGES.index(stage) - 1]

    def corner(self, stage: str) -> str:
        """The operator of a stage: ATTN for the A stages, the target for the M stages."""
        return "ATTN" if stage.startswith("A") else self.target


def _check_heads(config, name, value) -> None:
    integer_check(1)(config, name, value)
    if config.width % value:
        raise ValueError(config.HEADS_MESSAGE.format(d_model=config.width, n_heads=value))
