r"""Settings and data of the Swiss SiT experiment: the config, its presets, the standardised Swiss roll.

The experiment (:func:`workbench.experiments.run_swiss_sit`) trains a one-block flow transformer on the 2-D
Swiss roll under each attention operator and both block orders (:data:`SWISS_SIT_ORDERS`);
:class:`SwissSiTConfig` holds every setting of the protocol (see :mod:`workbench.experiments.swiss_sit._run`) and
:func:`swiss_roll_points` draws the training set.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1 [SEED]; book/reference.md §A.11 [SEED: 4000
points, seed 123; RECON: everything else].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from workbench.experiments.common import (
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    integer_check,
    range_check,
)
from workbench.markov import SwissRoll
from workbench.validation import check_in_range, check_integer

__all__ = ["SWISS_SIT_ORDERS", "SwissSiTConfig", "swiss_roll_points"]

SWISS_SIT_ORDERS = ("ffn-mhsa", "mhsa-ffn")
"""Block orders: ``"ffn-mhsa"`` runs the FFN sublayer first (Attention Geometry's FFN→MHSA convention)."""

_PRESETS: dict[str, dict[str, Any]] = {
    "quick": dict(
        n_train=4000,
        context=32,
        d_model=16,
        n_heads=2,
        ffn_mult=2,
        steps=120,
        batch=8,
        lr=3e-3,
        ema=0.95,
        euler_steps=20,
        n_generate=128,
        log_every=50,
    ),
    "paper": {},
}


def _check_context(config, name: str, value) -> None:
    check_integer(name, value, 2)
    if value > config.n_train:
        raise ValueError(f"context must be <= n_train={config.n_train}, got {value}")


def _check_n_generate(config, name: str, value) -> None:
    check_integer(name, value, 1)
    if value % config.context:
        raise ValueError(f"n_generate must be a multiple of context={config.context}, got {value}")


def _check_diagnostic_times(config, name: str, times) -> None:
    if not isinstance(times, tuple) or not times:
        raise TypeError(f"diagnostic_times must be a non-empty tuple of floats, got {times!r}")
    for t in times:
        check_in_range("diagnostic_times entry", t, 0.0, 1.0, low_inclusive=False)


@dataclass(frozen=True)
class SwissSiTConfig(ExperimentConfig):
    r"""Settings of the Swiss SiT scan; the defaults are the ``"paper"`` preset.

    Parameters
    ----------
    n_train : int
        Training-set size (4000 in Attention Geometry §9).
    seed : int
        Seed of the data, initialisation, batches and sampling noise (123 in Attention Geometry §9).
    noise : float
        Standard deviation of the isotropic Gaussian noise added to the raw :math:`(x, z)` roll (sklearn units),
        before standardisation: the thickness of the roll.
    context : int
        :math:`N`, points per context (tokens per sequence).
    d_model, n_heads, ffn_mult : int
        Width :math:`D`, heads (dividing :math:`D`) and FFN hidden width :math:`\text{ffn\_mult}\cdot D`.
    steps, batch : int
        Training steps and contexts per step.
    lr, weight_decay : float
        AdamW learning rate (constant) and decoupled weight decay.
    ema : float
        Decay of the EMA of the weights in :math:`[0, 1)`; the EMA model samples and is diagnosed.
    euler_steps : int
        Euler steps from :math:`\tau = 1` to :math:`\tau = 0`.
    n_generate : int
        Generated points, a multiple of ``context`` (``n_generate / context`` independent contexts).
    diagnostic_times : tuple of float
        Generative times in :math:`(0, 1]` at which the attention operators are recorded.
    log_every : int
        Steps between progress-bar loss updates.

    References
    ----------
    book/reference.md §A.11 [SEED: 4000 points, seed 123; RECON: everything else].

    Examples
    --------
    ``preset("quick")`` runs all 8 conditions in about a minute on 2 cores; keyword overrides replace single
    fields:

    >>> SwissSiTConfig.preset("quick").context
    32
    >>> SwissSiTConfig.preset("paper") == SwissSiTConfig(), SwissSiTConfig().preset_name()
    (True, 'paper')
    >>> SwissSiTConfig.preset("quick", steps=5).steps
    5
    >>> SwissSiTConfig(context=0)
    Traceback (most recent call last):
        ...
    ValueError: context must be an integer >= 2, got 0
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    CHECKS: ClassVar[dict[str, Check]] = {
        **TRAINING_CHECKS,
        "n_train": integer_check(2),
        "noise": range_check(0.0),
        "context": _check_context,
        "ffn_mult": integer_check(1),
        "ema": range_check(0.0, 1.0, high_inclusive=False),
        "euler_steps": integer_check(1),
        "n_generate": _check_n_generate,
        "diagnostic_times": _check_diagnostic_times,
    }

    n_train: int = 4000
    seed: int = 123
    noise: float = 0.5
    context: int = 64
    d_model: int = 64
    n_heads: int = 4
    ffn_mult: int = 4
    steps: int = 3000
    batch: int = 16
    lr: float = 1e-3
    weight_decay: float = 0.0
    ema: float = 0.998
    euler_steps: int = 100
    n_generate: int = 2048
    diagnostic_times: tuple[float, ...] = (1.0, 0.75, 0.5, 0.25, 0.05)
    log_every: int = 100


def swiss_roll_points(n: int, seed: int | None = 123, noise: float = 0.5) -> np.ndarray:
    r"""``n`` points of the noisy 2-D Swiss roll, standardised.

    .. math::

        y_i = (t_i\cos t_i,\ t_i\sin t_i) + \sigma\,\xi_i, \quad t_i \sim U[3\pi/2, 9\pi/2],\
        \xi_i \sim \mathcal N(0, I_2); \qquad x_i = \frac{y_i - \bar y}{s}, \quad
        s^2 = \frac1{2n}\sum_i\lVert y_i - \bar y\rVert^2,

    the :math:`(x, z)` slice of :class:`workbench.markov.SwissRoll` (``sampling="parameter"``, as sklearn's
    ``make_swiss_roll``) with noise :math:`\sigma` = ``noise`` in raw units; one overall scale :math:`s`, so
    the roll keeps its shape.  For ``n=4000, seed=123, noise=0.5`` the native spacing
    (:func:`workbench.attention.native_spacing`) is about 0.017; with ``noise=0`` about 0.0017.

    Parameters
    ----------
    n : int
        Number of points (at least 2).
    seed : int or None
        Seed of the :class:`numpy.random.Generator` (parameters first, then noise).
    noise : float
        Noise standard deviation :math:`\sigma \ge 0` before standardisation.

    Returns
    -------
    numpy.ndarray, shape=[n, 2], float64

    References
    ----------
    Attention Geometry §9 [SEED]; book/reference.md §A.11 [RECON: 2-D slice, standardisation].

    Examples
    --------
    >>> import numpy as np
    >>> x = swiss_roll_points(500, seed=0)
    >>> x.shape, bool(np.allclose(x.mean(0), 0.0, atol=1e-12)), bool(np.isclose((x**2).mean(), 1.0))
    ((500, 2), True, True)
    """
    n = check_integer("n", n, 2)
    noise = check_in_range("noise", noise, 0.0)
    rng = np.random.default_rng(seed)
    xyz = SwissRoll(sampling="parameter").sample(n, rng)
    y = xyz[:, [0, 2]] + noise * rng.standard_normal((n, 2))
    y = y - y.mean(axis=0)
    return y / math.sqrt(float((y**2).mean()))
