r"""Settings of the token-mixer stability experiment (:func:`workbench.experiments.run_givens_mixer`).

The conditions, the mixer starts, the masked-position count and the frozen config with its presets and field
checks; numpy only (the model and the runner need torch).

References
----------
Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" and "Training stability & speed" [SEED].
"""

from __future__ import annotations

import dataclasses
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
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = ["GIVENS_MIXER_CONDITIONS", "MIXER_INITS", "GivensMixerConfig"]

#: The token-mixing branches compared.
GIVENS_MIXER_CONDITIONS = ("givens", "givens-ln", "attention", "linear")
#: How a token mixer starts: the identity (Givens angles 0) or the library's uniform angles in [-π, π).
MIXER_INITS = ("identity", "uniform")


def masked_count(context: int, fraction: float) -> int:
    r"""Positions masked in a window of ``context`` bytes: :math:`\mathrm{round}(f n)`."""
    return round(fraction * context)


def _check_names(config, name: str, value) -> None:
    if not isinstance(value, tuple) or not value or len(set(value)) != len(value):
        raise ValueError(f"{name} must be a non-empty tuple of distinct names, got {value!r}")
    for v in value:
        check_choice(name, v, GIVENS_MIXER_CONDITIONS)


def _check_values(kind: str, check) -> Check:
    def checked(config, name: str, value) -> None:
        if not isinstance(value, tuple) or not value or len(set(value)) != len(value):
            raise ValueError(f"{name} must be a non-empty tuple of distinct {kind}, got {value!r}")
        for v in value:
            check(name, v)

    return checked


def _check_mask_fraction(config, name: str, value) -> None:
    check_in_range(name, value, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    k = masked_count(config.context, value)
    if not 1 <= k <= config.context - 1:
        raise ValueError(
            f"{name} must mask 1 to {config.context - 1} positions of a window of context={config.context} bytes, "
            f"got {value} ({k} positions)"
        )


def _check_spike_window(config, name: str, value) -> None:
    check_integer(name, value, 2)
    if value >= config.steps:
        raise ValueError(f"{name} must be smaller than steps={config.steps}, got {value}")


_PRESETS: dict[str, dict[str, Any]] = {
    # Seconds on one core: every code path, no claim.
    "quick": dict(
        lrs=(3e-3, 3e-2),
        warmups=(0, 5),
        context=16,
        d_model=16,
        n_heads=2,
        n_layers=1,
        steps=20,
        batch=8,
        log_every=10,
        eval_windows=32,
        spike_window=5,
    ),
    # The defaults: 32 models (4 conditions × 4 learning rates × warm-up 0 or 40 steps) of ~0.12 M parameters,
    # 400 steps of 64 windows each.  About 16 min on one core of a lightly loaded machine (a step: Givens 0.11 s,
    # attention 0.03 s, linear 0.02 s), ~30 min on a busy one; the Givens conditions take ~3/4 of it (a brick wall
    # is 32 sequential stages of small ops per mixer, 8 mixers a model).
    "paper": dict(),
}


@dataclasses.dataclass(frozen=True)
class GivensMixerConfig(ExperimentConfig):
    r"""Settings of the token-mixer stability experiment.

    Parameters
    ----------
    seed : int
        Seeds the shared initial weights, the training stream and the held-out masks (a matched pair per seed).
    conditions : tuple of {'givens', 'givens-ln', 'attention', 'linear'}
        The token-mixing branches trained.
    lrs : tuple of float
        Peak learning rates (the stability grid).
    warmups : tuple of int
        Linear warm-up lengths (0: none), a second grid axis; cosine decay to ``lr / 10`` after it.
    context : int
        Window length :math:`n` (the token mixers are :math:`n \times n`), at least 2.
    d_model, n_heads, n_layers : int
        Width; heads of the attention condition and feature groups (one mixer each) of the others; blocks.
    mixer_init : {'identity', 'uniform'}
        Start of the Givens and linear mixers (:class:`MaskedByteTransformer`): :math:`W_g = A_g = I`, or the
        library's uniform angles (a random rotation of the positions).
    steps, batch : int
        AdamW steps (betas 0.9, 0.95) and windows a step.
    mask_fraction : float
        Fraction :math:`f` of each window masked: :math:`\mathrm{round}(fn)` positions, in :math:`[1, n - 1]`.
    weight_decay, grad_clip : float
        Decoupled weight decay (on every parameter; on Givens angles it pulls :math:`W` toward :math:`I`) and the
        gradient-norm clip (the norms are recorded before it).
    spike_window, spike_factor : int, float
        A spike is a step whose loss exceeds ``spike_factor`` × the median of the previous ``spike_window`` losses
        (:func:`count_spikes`); the final loss is the mean of the last ``spike_window``.
    log_every : int
        Held-out bpb on the first eighth of the held-out windows every so many steps (the curves).
    eval_windows : int
        Held-out windows scored at the end (consecutive, from the start of the held-out text).
    held_out_every : int
        Every so many works (sorted by name) one is held out (:func:`~workbench.experiments.common.shakespeare_bytes`).
    device, name : str
        ``"cpu"`` or ``"cuda[:N]"``; the preset's name (``"custom"`` otherwise).

    Examples
    --------
    >>> GivensMixerConfig.preset("paper").lrs, GivensMixerConfig.preset("quick").name
    ((0.001, 0.003, 0.01, 0.03), 'quick')
    >>> GivensMixerConfig(conditions=("givens", "mlp"))
    Traceback (most recent call last):
        ...
    ValueError: conditions must be one of 'givens', 'givens-ln', 'attention', 'linear', got 'mlp'
    >>> GivensMixerConfig(context=8, mask_fraction=0.05)
    Traceback (most recent call last):
        ...
    ValueError: mask_fraction must mask 1 to 7 positions of a window of context=8 bytes, got 0.05 (0 positions)
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        **TRAINING_CHECKS,
        "conditions": _check_names,
        "lrs": _check_values("positive learning rates", lambda n, v: check_in_range(n, v, 0.0, low_inclusive=False)),
        "warmups": _check_values("warm-up lengths >= 0", lambda n, v: check_integer(n, v, 0)),
        "context": integer_check(2),
        "n_layers": integer_check(1),
        "mixer_init": lambda config, name, value: check_choice(name, value, MIXER_INITS),
        "mask_fraction": _check_mask_fraction,
        "grad_clip": range_check(0.0, low_inclusive=False),
        "spike_window": _check_spike_window,
        "spike_factor": range_check(1.0, low_inclusive=False),
        "eval_windows": integer_check(1),
        "held_out_every": integer_check(2),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    conditions: tuple[str, ...] = GIVENS_MIXER_CONDITIONS
    lrs: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2)
    warmups: tuple[int, ...] = (0, 40)
    context: int = 32
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    mixer_init: str = "identity"
    steps: int = 400
    batch: int = 64
    mask_fraction: float = 0.15
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    spike_window: int = 20
    spike_factor: float = 1.5
    log_every: int = 50
    eval_windows: int = 2048
    held_out_every: int = 10
    device: str = "cpu"
    name: str = "custom"
