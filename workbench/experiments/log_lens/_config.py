r"""Settings of the log-lens study: the varying-period induction task, the two-layer models, the snapshots.

:class:`LogLensConfig` holds every setting of :func:`workbench.experiments.run_log_lens`; the task and model
settings mean what they mean in :class:`~workbench.experiments.InductionConfig` (and are checked by its checks),
with the training period varying by default (``min_period = 8 < T``: no fixed look-back predicts the repeat).

References
----------
Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits"; Olsson et al. (2022), "In-context
learning and induction heads" (two-layer attention-only models on repeated random tokens).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from workbench.experiments.common import Check, ExperimentConfig
from workbench.experiments.induction import InductionConfig
from workbench.validation import check_integer

__all__ = ["LOG_LENS_OPERATORS", "LogLensConfig"]

#: The score geometries read: those whose logits are a bilinear form x_i W_QK x_jᵀ (ATTN: M = W_Q W_Kᵀ; DMTN:
#: M + ½ W_N W_Nᵀ), which the composition scores presume.  DMAP and ATAP add a key-only quadratic term.
LOG_LENS_OPERATORS = ("ATTN", "DMTN")

_PRESETS: dict[str, dict[str, Any]] = {
    # CI: every code path in seconds on one core.  The period is fixed (min_period = T, as in the induction
    # experiment's quick preset) so that the transition, and the statistics around it, appear within 300 steps;
    # the copier that forms is then positional, and no claim about induction circuits is made at this size.
    "quick": dict(
        vocab_size=16,
        half_length=8,
        min_period=8,
        d_model=32,
        n_heads=2,
        steps=300,
        batch=16,
        log_every=10,
        eval_batch=32,
    ),
    # The varying-period run of the induction experiment (ATTN, attention-only, min_period 8, 10,000 steps, a
    # snapshot every 50): the same seeds, stream and optimiser, so the same training trajectory.
    "paper": dict(steps=10000, log_every=50),
}


def _check_min_period(config, name: str, value) -> None:
    check_integer(name, value, 1, config.half_length)


def _check_log_every(config, name: str, value) -> None:
    check_integer(name, value, 1, max(1, config.steps // 2))


_SHARED = (
    "seed", "vocab_size", "half_length", "d_model", "n_heads", "steps", "batch", "lr", "weight_decay", "grad_clip",
    "eval_batch", "smooth", "plateau_fraction", "drop_fraction", "window_fraction", "name",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class LogLensConfig(ExperimentConfig):
    r"""Settings of the log-lens study: the induction task, the two-layer models, the snapshot schedule.

    Parameters
    ----------
    seed : int
        Seeds the initial weights, the training stream and the eval batch.
    vocab_size, half_length, min_period : int
        :math:`V`, :math:`T` (sequences of :math:`2T` tokens) and the shortest repeated segment
        :math:`L_0 \le T`: training sequences repeat a segment of random length in :math:`[L_0, T]`
        (:func:`~workbench.experiments.induction.variable_period_tokens`); the eval batch has period :math:`T`.
    d_model, n_heads : int
        Width and heads per layer (two layers).
    steps, batch, lr, weight_decay, grad_clip : int, int, float, float, float
        AdamW steps, sequences per step, learning rate (constant), decoupled weight decay, gradient-norm clip.
    log_every : int
        A snapshot (eval losses, scores, circuits, lens) every ``log_every`` steps, at step 0 and the last step;
        at most ``steps // 2`` (three snapshots at least).
    eval_batch : int
        Sequences of the fixed eval batch.
    smooth, plateau_fraction, drop_fraction, window_fraction : int, float, float, float
        The phase-transition criterion (:func:`~workbench.experiments.induction.detect_phase_transition`); ``smooth``
        also smooths the lens curves.
    name : str
        The preset's name (``"custom"`` otherwise).

    References
    ----------
    Elhage et al. (2021); Olsson et al. (2022) (two-layer attention-only models on repeated random tokens).

    Examples
    --------
    ``preset("quick")`` runs both operators in about 12 s on one core; ``preset("paper")`` in an estimated
    10 min on a quiet core (4,000 steps of it took 230 s for DMTN and 340 s for ATTN on the loaded two-core
    machine, so up to about 25 min there):

    >>> LogLensConfig.preset("quick").induction_config().min_period  # fixed period at CI size
    8
    >>> LogLensConfig(log_every=6000)
    Traceback (most recent call last):
        ...
    ValueError: log_every must be an integer in [1, 5000], got 6000
    >>> LogLensConfig(min_period=40)
    Traceback (most recent call last):
        ...
    ValueError: min_period must be an integer in [1, 32], got 40
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = InductionConfig.HEADS_MESSAGE
    CHECKS: ClassVar[dict[str, Check]] = {
        **{key: InductionConfig.CHECKS[key] for key in _SHARED},
        "min_period": _check_min_period,
        "log_every": _check_log_every,
    }

    seed: int = 0
    vocab_size: int = 64
    half_length: int = 32
    min_period: int = 8
    d_model: int = 64
    n_heads: int = 4
    steps: int = 10000
    batch: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    log_every: int = 50
    eval_batch: int = 64
    smooth: int = 5
    plateau_fraction: float = 0.8
    drop_fraction: float = 0.4
    window_fraction: float = 0.25
    name: str = "custom"

    def induction_config(self) -> InductionConfig:
        """The same task as an induction config (two layers).

        For the induction experiment's readings, e.g. :func:`~workbench.experiments.induction.shifted_period_accuracy`.
        """
        shared = {key: getattr(self, key) for key in _SHARED}
        return InductionConfig(**shared, n_layers=2, log_every=self.log_every, min_period=self.min_period)
