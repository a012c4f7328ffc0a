"""The settings of the ``magnus-fusion`` experiment: the generator LM, its budgets, the fusion orders, timing."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from workbench.experiments.bch_fusion import check_orders
from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    device_check,
    eval_bytes_check,
    integer_check,
    name_check,
    range_check,
)

__all__ = ["FLOAT32_LOGITS_TOLERANCE", "MAX_BUDGETS", "MagnusFusionConfig", "budget_label"]

#: At most this many budgets in one run (their conditions are ``budget-0`` … ``budget-7``).
MAX_BUDGETS = 8
#: Float32 logits through a few blocks: the exact product and the r factors differ by rounding, ~1e-6 relative.
FLOAT32_LOGITS_TOLERANCE = 1e-4


def budget_label(tau: float | None) -> str:
    """The row key of a budget: ``"none"`` or ``τ`` as ``%g``."""
    return "none" if tau is None else f"{tau:g}"


def _check_budgets(config, name: str, value) -> None:
    if not isinstance(value, tuple) or not 1 <= len(value) <= MAX_BUDGETS:
        raise ValueError(f"{name} must be a tuple of 1 to {MAX_BUDGETS} budgets (None or tau > 0), got {value!r}")
    for i, tau in enumerate(value):
        if tau is not None:
            range_check(0.0, low_inclusive=False)(config, f"{name}[{i}]", tau)
    if len({budget_label(t) for t in value}) != len(value):
        raise ValueError(f"{name} must be distinct, got {value!r}")


def _check_orders(config, name: str, value) -> None:
    if not isinstance(value, tuple):
        raise ValueError(f"{name} must be a tuple of distinct truncation orders in [1, 6], got {value!r}")
    check_orders(value)


def _check_bool(config, name: str, value) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")


def _check_even_width(config, name: str, value) -> None:
    integer_check(2)(config, name, value)
    if value % 2:
        raise ValueError(f"{name} must be even (the sinusoidal position encoding pairs sin and cos), got {value}")


_PRESETS: dict[str, dict[str, Any]] = {
    # Seconds on one core: every code path, no claim.
    "quick": dict(
        context=32,
        d_model=32,
        n_heads=2,
        n_layers=2,
        n_generators=3,
        steps=30,
        batch=8,
        warmup=5,
        log_every=10,
        eval_bytes=2048,
        error_windows=8,
        budgets=(None, 0.05),
        time_context=256,
        time_repeats=5,
    ),
    # The lm experiment's paper model (d = 128, 4 blocks) with r = 4 sublayers a block (1.12 M parameters): about
    # 0.66 s a step on one core, so 3 budgets × 600 steps plus ~1 min of scoring and timing each ≈ 25 min.
    "paper": {},
}


@dataclasses.dataclass(frozen=True)
class MagnusFusionConfig(ExperimentConfig):
    r"""Settings of the MagnusBlock fusion experiment.

    Parameters
    ----------
    seed : int
        Seeds the initial weights (the same for every budget) and the training windows.
    context : int
        Training and scoring window (bytes).
    d_model, n_heads, n_layers : int
        Width (even), heads (dividing it), blocks.
    n_generators : int
        :math:`r \in [2, 8]` generator sublayers a block.
    mlp : bool
        Each block ends with a GELU MLP.
    init_scale : float
        :math:`s \in (0, 1]`: generators start at :math:`\lVert A_i \rVert_2 \approx 2s`.
    steps, batch, lr, warmup, weight_decay, grad_clip, log_every :
        AdamW training (linear warm-up, cosine decay to ``lr / 10``), as in the ``lm`` experiment.
    eval_bytes : int
        Held-out bytes scored for each bpb (each predicted once).
    error_windows : int
        Held-out windows on which the logits' relative error is measured.
    held_out_every : int
        Every so many works one is held out.
    budgets : tuple of (float or None)
        The training conditions: ``None`` (no budget) or :math:`\tau > 0`; 1 to 8, distinct.
    budget_weight : float
        :math:`\mu > 0`, the hinge penalty's slope.
    anneal_factor, anneal_fraction : float
        :math:`\kappa \ge 1` and :math:`a \in (0, 1]`: :math:`\tau_t` falls from :math:`\kappa\tau` to :math:`\tau`
        over the first :math:`a` of the steps (:func:`workbench.experiments.budget_schedule`).
    orders : tuple of int
        BCH truncation orders to fuse at, distinct, in ``[1, 6]``.
    time_context, time_batch, time_repeats : int
        Sequence / cache length, streams and timed rounds of :func:`workbench.experiments.fusion_wall_clock`.
    device, name : str

    Examples
    --------
    >>> MagnusFusionConfig.preset("paper").budgets, MagnusFusionConfig.preset("quick").n_generators
    ((None, 0.3, 0.03), 3)
    >>> MagnusFusionConfig(budgets=(None, None))
    Traceback (most recent call last):
        ...
    ValueError: budgets must be distinct, got (None, None)
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        **TRAINING_CHECKS,
        "context": integer_check(2),
        "d_model": _check_even_width,
        "n_layers": integer_check(1),
        "n_generators": integer_check(2, 8),
        "mlp": _check_bool,
        "init_scale": range_check(0.0, 1.0, low_inclusive=False),
        "warmup": integer_check(0),
        "grad_clip": range_check(0.0, low_inclusive=False),
        "eval_bytes": eval_bytes_check,
        "error_windows": integer_check(1),
        "held_out_every": integer_check(2),
        "budgets": _check_budgets,
        "budget_weight": range_check(0.0, low_inclusive=False),
        "anneal_factor": range_check(1.0),
        "anneal_fraction": range_check(0.0, 1.0, low_inclusive=False),
        "orders": _check_orders,
        "time_context": integer_check(1),
        "time_batch": integer_check(1),
        "time_repeats": integer_check(1),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    context: int = 128
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 4
    n_generators: int = 4
    mlp: bool = True
    init_scale: float = 0.05
    steps: int = 600
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 40
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    log_every: int = 50
    eval_bytes: int = 131072
    error_windows: int = 32
    held_out_every: int = 10
    budgets: tuple = (None, 0.3, 0.03)
    budget_weight: float = 1.0
    anneal_factor: float = 100.0
    anneal_fraction: float = 0.5
    orders: tuple = (1, 2, 3, 4)
    time_context: int = 2048
    time_batch: int = 1
    time_repeats: int = 21
    device: str = "cpu"
    name: str = "custom"
