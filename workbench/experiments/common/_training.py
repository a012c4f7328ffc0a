r"""The one training loop of the experiments, and what the byte-level language models share around it.

Every experiment that trains a transformer by gradient steps (``lm``, ``transfer``, ``long-context``,
``givens-mixer``, ``magnus-fusion``, ``induction``, ``log-lens``) runs :func:`train`: AdamW with the rate of a
:class:`Schedule` (constant, or a linear warm-up then cosine decay to a tenth of the peak), gradient-norm
clipping, a curve logged every ``log_every`` steps (the training terms over the window and what the
experiment's ``evaluate`` measures), the time spent in optimisation steps, and, where asked (``guard``), a stop
with its reason at the first non-finite loss or gradient instead of steps taken on NaN.  An experiment supplies
only ``loss_at(step)``: its batch, its model's loss and any penalty beside it.

For the byte-level models on the Shakespeare corpus it also holds the next-byte loss on random training
windows (:func:`train_bytes`) and the held-out bits per byte (:func:`held_out_bpb`), so every byte model is
trained and scored the same way.

References
----------
Loshchilov & Hutter (2019), "Decoupled weight decay regularization" (AdamW); Loshchilov & Hutter (2017),
"SGDR" (cosine decay); Pascanu, Mikolov & Bengio (2013) (gradient-norm clipping); Attention Geometry §11
[SEED] (held-out bits per byte).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Mapping
from functools import reduce
from operator import add
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workbench.experiments.common._corpus import ByteCorpus, bits_per_byte
from workbench.experiments.common._runs import progress as progress_bar
from workbench.validation import check_in_range, check_integer

__all__ = [
    "VOCAB",
    "Schedule",
    "Training",
    "held_out_bpb",
    "learning_rate",
    "next_byte_loss",
    "train",
    "train_bytes",
    "training_windows",
]

#: Byte vocabulary.
VOCAB = 256


def learning_rate(step: int, steps: int, peak: float, warmup: int) -> float:
    r"""Linear warm-up to ``peak`` over ``warmup`` steps, then cosine decay to ``peak / 10`` at ``steps``.

    Examples
    --------
    >>> [round(learning_rate(s, 10, 1.0, 2), 3) for s in (0, 1, 2, 6, 10)]
    [0.5, 1.0, 1.0, 0.55, 0.1]
    """
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress))))


@dataclasses.dataclass(frozen=True)
class Schedule:
    """AdamW's settings for one training run.

    Parameters
    ----------
    steps : int
        Optimisation steps.
    lr : float
        Peak learning rate.
    weight_decay, grad_clip : float
        Decoupled weight decay; the gradient-norm clip.
    log_every : int
        Log the curve every so many steps, and after the last.
    warmup : int or None
        Linear warm-up steps, then cosine decay (:func:`learning_rate`); ``None`` keeps the rate at ``lr``.
    betas : (float, float)
        AdamW's moment decays (torch's default, or ``(0.9, 0.95)`` as the byte models use).
    """

    steps: int
    lr: float
    weight_decay: float
    grad_clip: float
    log_every: int
    warmup: int | None = None
    betas: tuple[float, float] = (0.9, 0.999)

    def __post_init__(self):
        check_integer("steps", self.steps, 1)
        check_in_range("lr", self.lr, 0.0, low_inclusive=False)
        check_in_range("weight_decay", self.weight_decay, 0.0)
        check_in_range("grad_clip", self.grad_clip, 0.0, low_inclusive=False)
        check_integer("log_every", self.log_every, 1)
        if self.warmup is not None:
            check_integer("warmup", self.warmup, 0)

    def rate(self, step: int) -> float:
        """The learning rate of step ``step`` (from 0)."""
        return self.lr if self.warmup is None else learning_rate(step, self.steps, self.lr, self.warmup)


@dataclasses.dataclass
class Training:
    """What :func:`train` returns.

    Attributes
    ----------
    curve : dict of lists
        ``steps`` (steps done at each log), then each training term (the window's mean, or its last value) and
        what ``evaluate`` returned, one entry per log (NaN where a key was not logged).
    losses, grad_norms : lists of float
        The first training term and the gradient norm (before clipping) of every step whose gradient was computed
        (with ``guard``, the step refused for a non-finite gradient norm is the last entry, not an update).
    stop : str or None
        Why training stopped early (``guard`` only), else ``None``.
    seconds : float
        Wall-clock seconds in optimisation steps (evaluations excluded).
    updates : int
        Optimiser steps taken.
    """

    curve: dict[str, list]
    losses: list[float]
    grad_norms: list[float]
    stop: str | None
    seconds: float
    updates: int


def train(
    model: nn.Module,
    schedule: Schedule,
    loss_at: Callable[[int], torch.Tensor | Mapping[str, torch.Tensor]],
    *,
    evaluate: Callable[[int], Mapping[str, Any]] | None = None,
    label: str = "train",
    progress: bool = False,
    guard: bool = False,
    logged: str = "mean",
    evaluate_first: bool = False,
) -> Training:
    r"""AdamW on ``loss_at(step)`` for ``schedule.steps`` steps, the curve logged every ``schedule.log_every``.

    Parameters
    ----------
    model : torch.nn.Module
        Put in training mode; its parameters are optimised.
    schedule : Schedule
    loss_at : callable
        ``loss_at(step)`` (from 0) draws the step's batch and returns the loss, or a mapping of named terms
        (``{"train_loss": ce, "penalty": p}``) whose sum is minimised and each of which is logged.
    evaluate : callable, optional
        ``evaluate(steps_done)`` returns the measurements logged beside the training terms.
    label, progress : str, bool
        The progress bar's label; whether to show it.
    guard : bool
        Stop, and say why in ``Training.stop``, at a ``FloatingPointError``, a non-finite first term (before
        the backward pass) or a non-finite gradient norm (before the update: it catches a non-finite later term);
        otherwise such steps are taken.
    logged : {'mean', 'last'}
        Log each term's mean over the steps since the last log, or its value at the logged step.
    evaluate_first : bool
        Log once before the first step too (``steps`` 0, terms NaN).

    Returns
    -------
    Training

    Examples
    --------
    Least squares on one weight: the loss falls and the curve logs its window means.

    >>> torch.manual_seed(0) and None
    >>> layer = nn.Linear(1, 1, bias=False)
    >>> x = torch.ones(4, 1)
    >>> run = train(layer, Schedule(steps=40, lr=0.1, weight_decay=0.0, grad_clip=10.0, log_every=20),
    ...             lambda step: ((layer(x) - 2.0) ** 2).mean())
    >>> run.curve["steps"], run.curve["train_loss"][1] < run.curve["train_loss"][0], run.updates
    ([20, 40], True, 40)
    """
    if not isinstance(schedule, Schedule):
        raise TypeError(f"schedule must be a Schedule, got {type(schedule).__name__}")
    if not callable(loss_at):
        raise TypeError(f"loss_at must be a function of the step, got {type(loss_at).__name__}")
    if logged not in ("mean", "last"):
        raise ValueError(f"logged must be 'mean' or 'last', got {logged!r}")
    model.train()
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=schedule.lr, weight_decay=schedule.weight_decay, betas=schedule.betas
    )
    curve: dict[str, list] = {"steps": []}
    window: dict[str, list[float]] = {}
    losses: list[float] = []
    norms: list[float] = []
    stop, seconds, updates = None, 0.0, 0

    def log(done: int, terms: Mapping[str, float]) -> None:
        nonlocal stop
        measured: Mapping[str, Any] = {}
        if evaluate is not None:
            try:
                measured = evaluate(done)
            except FloatingPointError as exc:
                if not guard:
                    raise
                stop = f"step {done}: {exc}"
                return
        if terms.keys() & measured.keys():
            raise ValueError(
                f"evaluate must not return a training term's name, got {sorted(terms.keys() & measured.keys())}"
            )
        curve["steps"].append(done)
        for key, value in (*terms.items(), *measured.items()):
            # A key first logged late (the terms, after an ``evaluate_first`` log) is NaN at the logs before.
            curve.setdefault(key, [math.nan] * (len(curve["steps"]) - 1)).append(value)
        for values in curve.values():
            if len(values) < len(curve["steps"]):  # a key not logged this time: NaN, so every list follows steps
                values.append(math.nan)
        shown = {k: f"{float(v):.4g}" for k, v in measured.items() if isinstance(v, (float, np.floating))}
        if shown:
            bar.set_postfix(shown)

    with progress_bar(schedule.steps, label, progress) as bar:
        if evaluate_first:
            log(0, {})
            if stop is not None:
                return Training(curve, losses, norms, stop, seconds, updates)
        for step in range(schedule.steps):
            started = time.perf_counter()
            for group in optimizer.param_groups:
                group["lr"] = schedule.rate(step)
            try:
                terms = loss_at(step)
            except FloatingPointError as exc:
                if not guard:
                    raise
                stop = f"step {step}: {exc}"
                break
            if isinstance(terms, torch.Tensor):
                terms = {"train_loss": terms}
            first = next(iter(terms.values()))
            if guard and not bool(torch.isfinite(first)):
                stop = f"step {step}: the training loss is not finite ({first.item()})"
                break
            optimizer.zero_grad(set_to_none=True)
            reduce(add, terms.values()).backward()
            norm = float(nn.utils.clip_grad_norm_(model.parameters(), schedule.grad_clip))
            values = {key: term.item() for key, term in terms.items()}
            losses.append(values[next(iter(values))])
            norms.append(norm)
            if guard and not math.isfinite(norm):
                stop = f"step {step}: the gradient norm is not finite ({norm})"
                break
            optimizer.step()
            updates += 1
            seconds += time.perf_counter() - started
            for key, value in values.items():
                window.setdefault(key, []).append(value)
            bar.update(1)
            if (step + 1) % schedule.log_every == 0 or step + 1 == schedule.steps:
                terms_logged = {
                    key: float(np.mean(seen)) if logged == "mean" else seen[-1] for key, seen in window.items()
                }
                window = {}
                log(step + 1, terms_logged)
                if stop is not None:
                    break
    return Training(curve, losses, norms, stop, seconds, updates)


# ---- the byte-level language models ---------------------------------------------------------------------


def training_windows(corpus: ByteCorpus, data: np.random.Generator, batch: int, context: int, device) -> torch.Tensor:
    """``batch`` random training windows of ``context + 1`` bytes (the model reads all but the last byte)."""
    high = len(corpus.train) - context - 1
    return torch.from_numpy(corpus.windows("train", data.integers(0, high, batch), context + 1)).to(device)


def next_byte_loss(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    r"""Next-byte cross-entropy :math:`-\frac1{Bc}\sum\ln p_\theta(x_{i+1}\mid x_{\le i})` on windows ``tokens``."""
    logits = model(tokens[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))


def train_bytes(
    model: nn.Module,
    corpus: ByteCorpus,
    config,
    steps: int,
    data: np.random.Generator,
    *,
    warmup: int,
    label: str,
    progress: bool,
    curve_bytes: int,
) -> dict[str, list]:
    """A byte model trained by :func:`train` on random training windows; the curve of loss and held-out bpb.

    ``config`` gives ``context``, ``batch``, ``lr``, ``weight_decay``, ``grad_clip``, ``log_every`` and
    ``device``; the rate warms up over ``warmup`` steps (AdamW's betas 0.9, 0.95); every log scores the
    first ``curve_bytes`` held-out bytes (:func:`held_out_bpb`).
    """
    schedule = Schedule(
        steps, config.lr, config.weight_decay, config.grad_clip, config.log_every, warmup, betas=(0.9, 0.95)
    )
    run = train(
        model,
        schedule,
        lambda step: next_byte_loss(model, training_windows(corpus, data, config.batch, config.context, config.device)),
        evaluate=lambda done: {"held_out_bpb": held_out_bpb(model, corpus, curve_bytes, config.context)["bpb"]},
        label=label,
        progress=progress,
    )
    return run.curve


@torch.no_grad()
def held_out_bpb(model: nn.Module, corpus: ByteCorpus, n_bytes: int, context: int, batch: int = 64) -> dict:
    r"""Bits per byte of ``model`` on the first held-out bytes, each predicted exactly once.

    Windows of ``context + 1`` bytes start every ``context`` bytes, so window :math:`w` predicts bytes
    :math:`wc + 1, \dots, (w + 1)c` from the ones before it in the window; the
    :math:`W = \lfloor n_{\mathrm{bytes}} / c\rfloor` windows predict :math:`Wc` bytes and

    .. math::

        \mathrm{bpb} = \frac{\sum_{w, i} -\ln p_\theta(x_{wc+i+1} \mid x_{wc}, \dots, x_{wc+i})}{Wc\,\ln 2}.

    Parameters
    ----------
    model : torch.nn.Module
        Maps ``[B, n]`` byte ids to ``[B, n, 256]`` logits.
    corpus : ByteCorpus
    n_bytes, context : int
        Bytes to score (at least ``context``) and window length.
    batch : int
        Windows per forward pass (memory only; the result does not depend on it beyond float rounding).

    Returns
    -------
    dict
        ``bpb``, ``nats_per_byte`` and ``bytes`` (:math:`Wc`).

    References
    ----------
    Attention Geometry §11, Table 2 [SEED] (held-out bpb).

    Examples
    --------
    A model whose logits are all equal predicts every byte with probability 1/256: 8 bits per byte.

    >>> corpus = ByteCorpus(np.zeros(1, np.uint8), np.arange(100, dtype=np.uint8), (), ())
    >>> uniform = lambda x: torch.zeros(*x.shape, 256)
    >>> held_out_bpb(uniform, corpus, 64, 16)
    {'bpb': 8.0, 'nats_per_byte': 5.545177444479562, 'bytes': 64}
    """
    windows = min(n_bytes, len(corpus.held_out) - 1) // context
    if windows < 1:
        raise ValueError(f"n_bytes must cover at least one window of context={context} held-out bytes, got {n_bytes}")
    training = getattr(model, "training", False)
    if training:
        model.eval()
    device = next(iter(model.parameters())).device if isinstance(model, nn.Module) else "cpu"
    nats = 0.0
    starts = np.arange(windows) * context
    for lo in range(0, windows, batch):
        tokens = torch.from_numpy(corpus.windows("held_out", starts[lo : lo + batch], context + 1)).to(device)
        logits = model(tokens[:, :-1]).double()
        nats += float(F.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1), reduction="sum"))
    if training:
        model.train()
    n = windows * context
    return {"bpb": bits_per_byte(nats, n), "nats_per_byte": nats / n, "bytes": n}
