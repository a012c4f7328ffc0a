r"""Settings and data of the induction-head experiment: the config, its presets, repeated-segment tokens.

The experiment (:func:`workbench.experiments.run_induction`) trains small causal transformers on repeated random
tokens :math:`t = (s, s)` under the score geometries :data:`INDUCTION_OPERATORS` and the block types
:data:`ARCHITECTURES`; :class:`InductionConfig` holds every setting, and :func:`variable_period_tokens` draws the
varying-period sequences that remove the positional shortcut (see :mod:`workbench.experiments.induction._run`).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Tables 2–3 [SEED] (matched budgets across operators);
Olsson et al. (2022), "In-context learning and induction heads" (repeated random tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    integer_check,
    name_check,
    range_check,
)
from workbench.experiments.induction._phase_transition import check_smooth
from workbench.validation import check_integer

__all__ = ["ARCHITECTURES", "INDUCTION_OPERATORS", "InductionConfig", "variable_period_tokens"]

#: The score geometries compared (Attention Geometry §11 trains ATTN, DMTN and DMAP language models).
INDUCTION_OPERATORS = ("ATTN", "DMTN", "DMAP")
#: ``"attn-only"``: blocks are attention sublayers only; ``"mlp"``: each block adds a GELU MLP sublayer.
ARCHITECTURES = ("attn-only", "mlp")

_PRESETS: dict[str, dict[str, Any]] = {
    # Measured on two CPU cores: 6 runs in about 26 s; every run shows a detected transition (steps 65-105).
    "quick": dict(
        vocab_size=16, half_length=8, d_model=32, n_heads=2, steps=400, batch=16, log_every=10, eval_batch=32
    ),
    # Measured on two CPU cores (one torch thread, a loaded machine): all 6 runs in 1037 s, 0.07-0.11 s/step with
    # evaluation; every run leaves the log V plateau with a detected transition between steps 110 and 170.
    "paper": dict(
        vocab_size=64, half_length=32, d_model=64, n_heads=4, steps=2000, batch=32, log_every=20, eval_batch=64
    ),
}


def _check_min_period(config, name: str, value) -> None:
    if value is not None:
        check_integer(name, value, 1, config.half_length)


@dataclass(frozen=True)
class InductionConfig(ExperimentConfig):
    r"""Settings of one induction experiment (every operator and architecture gets the same ones).

    Parameters
    ----------
    seed : int
        Seeds the initialisation (``torch.manual_seed``), the training stream and the fixed eval batch.
    vocab_size : int
        :math:`V`; the first-half loss floor is :math:`\log V`.
    half_length : int
        :math:`T`; sequences have :math:`2T` tokens (:func:`workbench.attention.repeated_random_tokens`).
    d_model, n_heads, n_layers : int
        Width, heads per layer (dividing ``d_model``), blocks (2: previous-token head → induction head).
    steps, batch : int
        AdamW steps and sequences per step (a fresh random batch each step).
    lr, weight_decay : float
        AdamW learning rate (constant) and decoupled weight decay.
    grad_clip : float
        Gradient-norm clip (``torch.nn.utils.clip_grad_norm_``); without it the measured ATTN run spiked back to
        a repeated-half loss of 2.4 after converging to 0.36.
    log_every, eval_batch : int
        Evaluate every ``log_every`` steps (and at step 0 and the last step) on a fixed batch of ``eval_batch``
        sequences.
    smooth : int
        Moving-average width (in logged points, odd) used by :func:`detect_phase_transition`.
    plateau_fraction, drop_fraction, window_fraction : float
        The transition criterion's thresholds (see :func:`detect_phase_transition`).
    min_period : int, optional
        With ``min_period = L₀ < T`` the training sequences repeat a segment of random length
        :math:`L \in [L_0, T]` after a random prefix (:func:`variable_period_tokens`), so that the copy offset
        varies.  Default ``None``: every training sequence has period :math:`T` (fast, but open to a
        positional shortcut; the module docstring gives both settings as measured).  Either way the eval batch has
        period :math:`T` (the convention of :func:`workbench.attention.induction_score`), and the final model is
        also scored on the **shifted-period probe** (periods in :math:`[\lceil T/4\rceil, \lfloor T/2\rfloor]`
        after a random prefix).  A positional shortcut, "look back :math:`T - 1` tokens", fails the probe; an
        induction circuit passes it.
    name : str
        Name of the preset the config came from (``"custom"`` otherwise); names the run directory.

    References
    ----------
    Attention Geometry §11 [SEED] (matched budgets across operators); Olsson et al. (2022) (two-layer
    attention-only models on repeated random tokens).

    Examples
    --------
    ``preset("quick")`` runs all six models in about 30 s on two cores, ``preset("paper")`` in about 17 min:

    >>> cfg = InductionConfig.preset("quick")
    >>> cfg.n_layers, cfg.name
    (2, 'quick')
    >>> InductionConfig.preset("paper").vocab_size
    64
    >>> InductionConfig.preset("huge")
    Traceback (most recent call last):
        ...
    ValueError: name must be one of 'quick', 'paper', got 'huge'
    >>> InductionConfig(steps=0)
    Traceback (most recent call last):
        ...
    ValueError: steps must be an integer >= 1, got 0
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        **TRAINING_CHECKS,
        "vocab_size": integer_check(2),
        "half_length": integer_check(2),
        "n_layers": integer_check(1),
        "grad_clip": range_check(0.0, low_inclusive=False),
        "eval_batch": integer_check(1),
        "smooth": lambda config, name, value: check_smooth(value),
        "plateau_fraction": range_check(0.0, 1.0),
        "drop_fraction": range_check(0.0, 1.0, low_inclusive=False),
        "window_fraction": range_check(0.0, 1.0, low_inclusive=False),
        "min_period": _check_min_period,
        "name": name_check,
    }

    seed: int = 0
    vocab_size: int = 64
    half_length: int = 32
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    steps: int = 2000
    batch: int = 32
    lr: float = 1e-3
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    log_every: int = 20
    eval_batch: int = 64
    smooth: int = 5
    plateau_fraction: float = 0.8
    drop_fraction: float = 0.4
    window_fraction: float = 0.25
    min_period: int | None = None
    name: str = "custom"

    @property
    def shortest_period(self) -> int:
        """The shortest repeated segment in training: ``min_period``, or :math:`T` (fixed period) by default."""
        return self.min_period if self.min_period is not None else self.half_length

    @property
    def sequence_length(self) -> int:
        """:math:`2T`, the tokens per sequence."""
        return 2 * self.half_length


def variable_period_tokens(
    rng,
    vocab_size: int,
    half_length: int,
    batch: int,
    min_period: int,
    max_period: int | None = None,
    *,
    return_periods: bool = False,
):
    r"""Sequences of :math:`2T` tokens ending in a random segment repeated twice, of random length per sequence.

    Sequence :math:`b` draws :math:`L_b` uniformly from :math:`[\text{min\_period}, \text{max\_period}]`
    (default maximum :math:`T`), then
    :math:`2(T - L_b)` uniform prefix tokens, a segment :math:`s` of :math:`L_b` uniform tokens, and :math:`s`
    again: :math:`t = (p, s, s)`.  Position :math:`i` of the second copy is predicted by the token after the
    earlier occurrence of :math:`t_i`, at the sequence-dependent offset :math:`L_b`; with ``min_period = T``
    this is :func:`workbench.attention.repeated_random_tokens`.

    Parameters
    ----------
    rng : numpy.random.Generator
    vocab_size, half_length, batch, min_period : int
        :math:`V \ge 2`, :math:`T \ge 1`, batch size, and :math:`1 \le` ``min_period`` :math:`\le T`.
    max_period : int, optional
        ``min_period`` :math:`\le` ``max_period`` :math:`\le T`; default :math:`T`.
    return_periods : bool
        Also return the periods :math:`L_b`.

    Returns
    -------
    ndarray of int64, shape=[batch, 2T]
        (and, with ``return_periods``, the periods, shape=[batch])

    References
    ----------
    Olsson et al. (2022), "In-context learning and induction heads" (repeated random tokens); the random
    period is this workbench's guard against a positional shortcut.

    Examples
    --------
    >>> import numpy as np
    >>> t = variable_period_tokens(np.random.default_rng(0), 50, 6, 4, 2)
    >>> t.shape
    (4, 12)
    >>> all(any(np.array_equal(row[12 - 2 * L : 12 - L], row[12 - L :]) for L in range(2, 7)) for row in t)
    True
    """
    vocab_size = check_integer("vocab_size", vocab_size, 2)
    half_length = check_integer("half_length", half_length, 1)
    batch = check_integer("batch", batch, 1)
    min_period = check_integer("min_period", min_period, 1, half_length)
    max_period = half_length if max_period is None else check_integer("max_period", max_period, min_period, half_length)
    n = 2 * half_length
    tokens = rng.integers(0, vocab_size, size=(batch, n), dtype=np.int64)
    periods = rng.integers(min_period, max_period + 1, size=batch)
    for row, period in zip(tokens, periods, strict=True):
        row[n - period :] = row[n - 2 * period : n - period]
    return (tokens, periods) if return_periods else tokens
