r"""Induction heads under ATTN, DMTN and DMAP scores: the phase transition at workbench scale.

Small causal transformers (two layers, attention-only or with an MLP sublayer) learn next-token prediction on
repeated random tokens :math:`t = (s, s)`, :math:`s \in \{0,\dots,V-1\}^T` i.i.d. uniform.  The first half is
unpredictable (loss :math:`\log V` at best); the second half is predictable by *induction* — find the earlier
occurrence of the current token and copy its successor.  A two-layer model learns this through a previous-token
head in layer 0 and an induction head in layer 1; the repeated-half loss sits on the :math:`\log V` plateau and
then falls abruptly, while the induction head's attention entropy collapses (Olsson et al. 2022; the ISA ML01
seed calls it the :math:`\beta^*` snap).  The experiment trains the same model, data and budget under three score
geometries (:data:`INDUCTION_OPERATORS`) and compares when, and whether, the transition happens.

**A positional shortcut, and the probe that exposes it.**  With a fixed period :math:`T` and learned absolute
positions, the repeat is also predicted by a head that looks back a constant :math:`T - 1` tokens, with no
content matching at all.  So the final model of every run is scored on the *shifted-period probe*
(:func:`shifted_period_accuracy`: periods in :math:`[\lceil T/4\rceil, \lfloor T/2\rfloor]` after a random
prefix), where that shortcut is at chance :math:`1/V` and an induction circuit is not.  Measured on the quick
preset: accuracy 1.000 on period :math:`T` for every operator, 0.071 on the probe (chance 0.0625) — the
transition there is the formation of a positional copier.  Training on varying periods
(``InductionConfig(min_period=8)``, :func:`variable_period_tokens`) removes the shortcut but needs about 5× the
budget.  At the paper widths with 10,000 steps (``experiments/results/induction-varying-period``) all three
operators copy by content: the probe scores 0.84 (ATTN), 0.99 (DMTN) and 0.91 (DMAP).  DMTN forms a clean
induction head at its transition, step 1225 (score 0.79).  The presets keep the fixed period, which is fast and
shows the transition clearly, and report the probe beside it.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Tables 2–3 [SEED]: induction accuracy of a depth-32 model,
ATTN 0.8081 → DMTN 0.5735 → ATTN 0.8334 → DMTN 0.4676; attention-geometry-math §A.12 (§11 numbers), §A.10
(entropy, :math:`e^{\bar H}`), §A.7 [CODE] (the operators' logits); ISA ML01 seed (entropy drop at the
induction snap); Olsson et al. (2022), "In-context learning and induction heads".
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workbench.attention import (
    induction_score,
    mean_entropy,
    previous_token_score,
    repeated_random_tokens,
    uniform_entropy,
)
from workbench.experiments._layers import OperatorAttention
from workbench.experiments._runs import jsonable, run_directory, save_json
from workbench.experiments._runs import progress as _progress_bar
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = [
    "ARCHITECTURES",
    "INDUCTION_OPERATORS",
    "SEED_INDUCTION",
    "InductionConfig",
    "InductionTransformer",
    "PhaseTransition",
    "detect_phase_transition",
    "format_table",
    "run_induction",
    "shifted_period_accuracy",
    "variable_period_tokens",
]

#: The score geometries compared (Attention Geometry §11 trains ATTN, DMTN and DMAP language models).
INDUCTION_OPERATORS = ("ATTN", "DMTN", "DMAP")
#: ``"attn-only"``: blocks are attention sublayers only; ``"mlp"``: each block adds a GELU MLP sublayer.
ARCHITECTURES = ("attn-only", "mlp")
#: Seed's §11 depth-32 sequence (Tables 2–3): (stage, operator, induction accuracy).  [SEED]
SEED_INDUCTION = (("A0", "ATTN", 0.8081), ("M1", "DMTN", 0.5735), ("A1", "ATTN", 0.8334), ("M2", "DMTN", 0.4676))

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


@dataclass(frozen=True)
class InductionConfig:
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
    >>> cfg = InductionConfig.preset("quick")
    >>> cfg.n_layers, cfg.name
    (2, 'quick')
    >>> InductionConfig(steps=0)
    Traceback (most recent call last):
        ...
    ValueError: steps must be an integer >= 1, got 0
    """

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

    def __post_init__(self):
        check_integer("seed", self.seed, 0)
        check_integer("vocab_size", self.vocab_size, 2)
        check_integer("half_length", self.half_length, 2)
        check_integer("d_model", self.d_model, 1)
        check_integer("n_heads", self.n_heads, 1)
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads must divide d_model, got d_model={self.d_model} and n_heads={self.n_heads}")
        check_integer("n_layers", self.n_layers, 1)
        check_integer("steps", self.steps, 1)
        check_integer("batch", self.batch, 1)
        check_in_range("lr", self.lr, 0.0, low_inclusive=False)
        check_in_range("weight_decay", self.weight_decay, 0.0)
        check_in_range("grad_clip", self.grad_clip, 0.0, low_inclusive=False)
        check_integer("log_every", self.log_every, 1)
        check_integer("eval_batch", self.eval_batch, 1)
        _check_smooth(self.smooth)
        check_in_range("plateau_fraction", self.plateau_fraction, 0.0, 1.0)
        check_in_range("drop_fraction", self.drop_fraction, 0.0, 1.0, low_inclusive=False)
        check_in_range("window_fraction", self.window_fraction, 0.0, 1.0, low_inclusive=False)
        if self.min_period is not None:
            check_integer("min_period", self.min_period, 1, self.half_length)
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string, got {type(self.name).__name__}")

    @classmethod
    def preset(cls, name: str, **overrides) -> InductionConfig:
        """The ``"quick"`` (about 30 s for all six runs on two cores) or ``"paper"`` (about 17 min) settings.

        Examples
        --------
        >>> InductionConfig.preset("paper").vocab_size
        64
        >>> InductionConfig.preset("huge")
        Traceback (most recent call last):
            ...
        ValueError: name must be one of 'quick', 'paper', got 'huge'
        """
        check_choice("name", name, tuple(_PRESETS))
        return cls(**{**_PRESETS[name], "name": name, **overrides})

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


def _check_smooth(smooth) -> int:
    smooth = check_integer("smooth", smooth, 1)
    if smooth % 2 == 0:
        raise ValueError(f"smooth must be an odd integer >= 1, got {smooth}")
    return smooth


# ---- model -------------------------------------------------------------------------------------------


class _Block(nn.Module):
    """Pre-LN block: ``x + MHSA(LN x)`` then, with an MLP, ``x + W_2 GELU(W_1 LN x)``."""

    def __init__(self, d_model: int, n_heads: int, operator: str, mlp: bool):
        super().__init__()
        self.norm_attention = nn.LayerNorm(d_model)
        self.attention = OperatorAttention(d_model, n_heads, operator, causal=True)
        self.mlp = None
        if mlp:
            self.norm_mlp = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, P = self.attention(self.norm_attention(x), return_operator=True)
        x = x + y
        if self.mlp is not None:
            x = x + self.mlp(self.norm_mlp(x))
        return x, P


class InductionTransformer(nn.Module):
    r"""A small causal transformer whose attention scores are those of one operator.

    .. math::

        h^{(0)} = E[t] + P_{\mathrm{pos}}, \qquad
        h^{(\ell+1)} = h^{(\ell)} + \mathrm{MHSA}^{\mathrm{op}}_{\mathrm{causal}}(\mathrm{LN}\,h^{(\ell)})
        \;[+\ \mathrm{MLP}(\mathrm{LN}\,\cdot)], \qquad
        \mathrm{logits} = \mathrm{LN}(h^{(L)})\,W_U,

    with :class:`workbench.experiments._layers.OperatorAttention` as the MHSA (causal mask) and, for
    ``architecture="mlp"``, a GELU MLP of width :math:`4D` after each attention sublayer.

    Parameters
    ----------
    vocab_size, seq_len, d_model, n_heads, n_layers : int
        Vocabulary, maximal sequence length (learned positions), width, heads, blocks.
    operator : {'ATTN', 'DMTN', 'DMAP', 'ATAP'}
        The score geometry of every head.
    architecture : {'attn-only', 'mlp'}

    References
    ----------
    Attention Geometry §11 [SEED] (nanochat models with the operators swapped in); attention-geometry-math §A.7;
    Elhage et al. (2021) (attention-only transformers).

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> model = InductionTransformer(10, 8, 16, 2, 2, "DMAP", "mlp")
    >>> tokens = torch.randint(0, 10, (3, 8))
    >>> tuple(model(tokens).shape)
    (3, 8, 10)
    >>> ops = model.attention_operators(tokens)
    >>> len(ops), tuple(ops[0].shape), bool(torch.allclose(ops[1].sum(-1), torch.ones(3, 2, 8)))
    (2, (3, 2, 8, 8), True)
    >>> bool((ops[0].triu(1) == 0).all())  # causal: nothing above the diagonal
    True
    """

    def __init__(
        self,
        vocab_size: int,
        seq_len: int,
        d_model: int,
        n_heads: int,
        n_layers: int = 2,
        operator: str = "ATTN",
        architecture: str = "attn-only",
    ):
        super().__init__()
        self.vocab_size = check_integer("vocab_size", vocab_size, 1)
        self.seq_len = check_integer("seq_len", seq_len, 1)
        check_integer("n_layers", n_layers, 1)
        self.operator = operator
        self.architecture = check_choice("architecture", architecture, ARCHITECTURES)
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads, operator, architecture == "mlp") for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, vocab_size, bias=False)
        # Small embeddings and read-out: the initial prediction is near uniform (loss ≈ log V), so the
        # repeated-half curve starts on the plateau rather than above it.
        for weight in (self.embed.weight, self.position.weight, self.unembed.weight):
            nn.init.normal_(weight, std=0.02)

    def _run(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"tokens must be an integer torch tensor, got {getattr(tokens, 'dtype', type(tokens))}")
        if tokens.ndim != 2 or not 1 <= tokens.shape[1] <= self.seq_len:
            raise ValueError(
                f"tokens must have shape [batch, n] with 1 <= n <= {self.seq_len}, got {tuple(tokens.shape)}"
            )
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= self.vocab_size):
            raise ValueError(
                f"tokens must lie in [0, {self.vocab_size - 1}], "
                f"got values in [{int(tokens.min())}, {int(tokens.max())}]"
            )
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.position(positions)
        operators = []
        for block in self.blocks:
            x, P = block(x)
            operators.append(P)
        return self.unembed(self.norm(x)), operators

    def forward(self, tokens: torch.Tensor, return_operators: bool = False):
        """Next-token logits ``[B, n, V]`` (and, if asked, every layer's operators ``[B, H, n, n]``)."""
        logits, operators = self._run(tokens)
        return (logits, operators) if return_operators else logits

    @torch.no_grad()
    def attention_operators(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's attention operators for a batch: a list (one per layer) of ``[B, H, n, n]`` tensors."""
        return self._run(tokens)[1]

    def skew_ratios(self) -> np.ndarray:
        r""":math:`\rho_{\mathrm{skew}}` of every head, shape ``[layers, heads]`` (0 exactly for DMAP)."""
        return np.stack([block.attention.skew_ratios() for block in self.blocks])


# ---- the transition criterion ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PhaseTransition:
    r"""The outcome of :func:`detect_phase_transition` (steps are training steps; losses are smoothed).

    ``window`` is :math:`(\tau_i, \tau_j)`; ``head`` is ``(layer, head)`` with the largest final induction score
    (None without per-head series); ``reason`` names the failed condition (``""`` when detected).

    References
    ----------
    This workbench's [RECON] criterion (see :func:`detect_phase_transition`).

    Examples
    --------
    >>> PhaseTransition(False, None, None, None, None, reason="flat").detected
    False
    """

    detected: bool
    step: float | None
    loss_before: float | None
    loss_after: float | None
    window: tuple[float, float] | None
    head: tuple[int, int] | None = None
    head_entropy_before: float | None = None
    head_entropy_after: float | None = None
    head_score_before: float | None = None
    head_score_after: float | None = None
    reason: str = ""


def _smooth(values: np.ndarray, width: int) -> np.ndarray:
    """Centred moving average; near the ends the window shrinks to the points that exist."""
    if width == 1:
        return values.copy()
    kernel = np.ones(width)
    sums = np.convolve(values, kernel, mode="same")
    counts = np.convolve(np.ones_like(values), kernel, mode="same")
    return sums / counts


def detect_phase_transition(
    steps,
    repeat_loss,
    *,
    vocab_size: int,
    induction_scores=None,
    entropies=None,
    smooth: int = 5,
    plateau_fraction: float = 0.8,
    drop_fraction: float = 0.4,
    window_fraction: float = 0.25,
) -> PhaseTransition:
    r"""Detect the induction phase transition in a repeated-half loss curve.

    Let :math:`s_k` be the repeated-half loss at the logged steps :math:`\tau_k`, smoothed by a centred moving
    average of ``smooth`` points, :math:`\ell_0 = \log V` the loss of a uniform guess, and
    :math:`S = \tau_{\mathrm{last}} - \tau_0` the logged span.  The curve has a transition when all of these hold:

    1. *steepest drop*: :math:`k^* = \arg\min_k (s_{k+1} - s_k)/(\tau_{k+1} - \tau_k)`; the transition step is
       the midpoint :math:`(\tau_{k^*} + \tau_{k^*+1})/2`;
    2. *sharp*: the window :math:`[\tau_i, \tau_j]` is the shortest one with :math:`i \le k^* < j` over which the
       loss falls by at least :math:`\delta\,\ell_0` (:math:`\delta` = ``drop_fraction``), and its length is
       :math:`\tau_j - \tau_i \le w\,S` (:math:`w` = ``window_fraction``);
    3. *from a plateau*: at least two of the points :math:`s_0, \dots, s_i` before the window lie at or above
       :math:`p\,\ell_0` (:math:`p` = ``plateau_fraction``): the run sat near the :math:`\log V` plateau before
       the drop (the loss may already be sliding when the steepest window begins);
    4. *an induction head forms* (only when per-head series are given): the head with the largest final
       induction score has a higher score and a lower mean entropy at :math:`\tau_j` than at :math:`\tau_i`.

    A straight descent of the whole :math:`\ell_0` over the run needs :math:`\delta S` steps to fall
    :math:`\delta\ell_0`, so it is rejected whenever :math:`w < \delta` (the defaults).

    Parameters
    ----------
    steps : array_like, shape=[K]
        Strictly increasing logged steps, ``K >= 3``.
    repeat_loss : array_like, shape=[K]
        Finite repeated-half losses (nats).
    vocab_size : int
        :math:`V \ge 2`.
    induction_scores, entropies : array_like, shape=[K, layers, heads], optional
        Per-head induction score and mean row entropy at the logged steps (both or neither).
    smooth : int
        Odd moving-average width in points.
    plateau_fraction, drop_fraction, window_fraction : float
        :math:`p \in [0, 1]`, :math:`\delta \in (0, 1]`, :math:`w \in (0, 1]`.

    Returns
    -------
    PhaseTransition
        ``detected``, ``step``, smoothed ``loss_before`` / ``loss_after`` at the window ends, ``window``, the
        head and its entropy/score at the window ends (at the first/last logged step when nothing is
        detected), and ``reason`` (which condition failed, or ``""``).

    References
    ----------
    Olsson et al. (2022) (the plateau-then-drop of the in-context loss); ISA ML01 seed (abrupt entropy drop at the
    induction snap); Attention Geometry §11 [SEED]. The numeric criterion is this workbench's [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> steps = np.arange(0, 1001, 20)
    >>> loss = np.log(50) / (1 + np.exp((steps - 600) / 15))  # a sigmoid drop at step 600
    >>> found = detect_phase_transition(steps, loss, vocab_size=50)
    >>> found.detected, abs(found.step - 600) <= 20
    (True, True)
    >>> detect_phase_transition(steps, np.log(50) * (1 - steps / 1000), vocab_size=50).detected  # a line
    False
    """
    vocab_size = check_integer("vocab_size", vocab_size, 2)
    smooth = _check_smooth(smooth)
    p = check_in_range("plateau_fraction", plateau_fraction, 0.0, 1.0)
    delta = check_in_range("drop_fraction", drop_fraction, 0.0, 1.0, low_inclusive=False)
    w = check_in_range("window_fraction", window_fraction, 0.0, 1.0, low_inclusive=False)
    tau = np.asarray(steps, dtype=np.float64)
    loss = np.asarray(repeat_loss, dtype=np.float64)
    if tau.ndim != 1 or tau.size < 3:
        raise ValueError(f"steps must be a 1-dimensional array of at least 3 logged steps, got shape {tau.shape}")
    if loss.shape != tau.shape:
        raise ValueError(f"repeat_loss must have the shape of steps {tau.shape}, got {loss.shape}")
    if not np.all(np.diff(tau) > 0):
        raise ValueError("steps must be strictly increasing")
    if not np.all(np.isfinite(loss)):
        raise ValueError(f"repeat_loss must be finite, got {int((~np.isfinite(loss)).sum())} non-finite values")
    if (induction_scores is None) != (entropies is None):
        raise ValueError("induction_scores and entropies must be given together (both or neither)")
    scores = ent = None
    if induction_scores is not None:
        scores = np.asarray(induction_scores, dtype=np.float64)
        ent = np.asarray(entropies, dtype=np.float64)
        if scores.ndim != 3 or scores.shape[0] != tau.size or ent.shape != scores.shape:
            raise ValueError(
                f"induction_scores and entropies must have shape [{tau.size}, layers, heads], "
                f"got {scores.shape} and {ent.shape}"
            )

    ell0 = math.log(vocab_size)
    s = _smooth(loss, smooth)
    slopes = np.diff(s) / np.diff(tau)
    k = int(np.argmin(slopes))
    step = float(0.5 * (tau[k] + tau[k + 1]))
    # shortest window [i, j] with i <= k < j and s[i] - s[j] >= delta * ell0
    best = None
    for i in range(k + 1):
        later = np.nonzero(s[k + 1 :] <= s[i] - delta * ell0)[0]
        if later.size:
            j = k + 1 + int(later[0])
            if best is None or tau[j] - tau[i] < tau[best[1]] - tau[best[0]]:
                best = (i, j)
    reason = ""
    if best is None:
        reason = f"the loss never falls by drop_fraction * log V = {delta * ell0:.3g} across the steepest drop"
        i, j = 0, tau.size - 1
    else:
        i, j = best
        if tau[j] - tau[i] > w * (tau[-1] - tau[0]):
            reason = f"the drop takes {tau[j] - tau[i]:g} steps > window_fraction * span = {w * (tau[-1] - tau[0]):g}"
        elif np.count_nonzero(s[: i + 1] >= p * ell0) < 2:
            reason = "the drop does not start from a plateau near log V"

    head = None
    head_values: dict[str, float | None] = dict.fromkeys(
        ("head_entropy_before", "head_entropy_after", "head_score_before", "head_score_after")
    )
    if scores is not None:
        flat = int(np.argmax(scores[-1]))
        layer, h = divmod(flat, scores.shape[2])
        head = (layer, h)
        head_values = {
            "head_entropy_before": float(ent[i, layer, h]),
            "head_entropy_after": float(ent[j, layer, h]),
            "head_score_before": float(scores[i, layer, h]),
            "head_score_after": float(scores[j, layer, h]),
        }
        if not reason and not (
            head_values["head_score_after"] > head_values["head_score_before"]
            and head_values["head_entropy_after"] < head_values["head_entropy_before"]
        ):
            reason = "no head's induction score rises while its entropy falls across the window"
    detected = not reason
    return PhaseTransition(
        detected=detected,
        step=step if detected else None,
        loss_before=float(s[i]) if best is not None else None,
        loss_after=float(s[j]) if best is not None else None,
        window=(float(tau[i]), float(tau[j])) if best is not None else None,
        head=head,
        reason=reason,
        **head_values,
    )


# ---- training -----------------------------------------------------------------------------------------


def _losses(logits: torch.Tensor, tokens: torch.Tensor, T: int) -> dict[str, torch.Tensor]:
    """Per-region next-token losses: position i predicts token i + 1."""
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")  # [B, 2T-1]
    # positions T..2T-2 predict t[i+1] = t[i+1-T]: predictable by induction; positions 0..T-1 are not
    repeat = per_token[:, T:]
    predicted = logits[:, T:-1].argmax(-1)
    return {
        "loss": per_token.mean(),
        "repeat_loss": repeat.mean(),
        "first_half_loss": per_token[:, :T].mean(),
        "induction_accuracy": (predicted == tokens[:, T + 1 :]).double().mean(),
    }


def _evaluate(model: InductionTransformer, tokens: torch.Tensor, tokens_np: np.ndarray, T: int) -> dict[str, Any]:
    model.eval()
    with torch.no_grad():
        logits, operators = model(tokens, return_operators=True)
        losses = {k: float(v) for k, v in _losses(logits, tokens, T).items()}
    model.train()
    entropy, previous, induction = [], [], []
    for P in operators:
        A = P.detach().cpu().numpy()  # [B, H, n, n], float32: the diagnostics' default tolerance is dtype-aware
        entropy.append(np.asarray(mean_entropy(A, axis=0)))
        previous.append(np.asarray(previous_token_score(A)).mean(axis=0))
        induction.append(np.asarray(induction_score(A, tokens_np[0])).mean(axis=0))
    return {
        **losses,
        "entropy": np.stack(entropy),
        "previous_token_score": np.stack(previous),
        "induction_score": np.stack(induction),
        "operators": operators,
    }


def _train_one(
    config: InductionConfig, operator: str, architecture: str, *, progress: bool
) -> tuple[InductionTransformer, dict[str, Any]]:
    n, T = config.sequence_length, config.half_length
    torch.manual_seed(config.seed)
    model = InductionTransformer(
        config.vocab_size, n, config.d_model, config.n_heads, config.n_layers, operator, architecture
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    data = np.random.default_rng([config.seed, 0])  # same stream for every operator and architecture
    eval_np = repeated_random_tokens(np.random.default_rng([config.seed, 1]), config.vocab_size, T, config.eval_batch)
    eval_tokens = torch.from_numpy(eval_np)
    curves: dict[str, list] = {
        k: []
        for k in (
            "steps",
            "train_loss",
            "repeat_loss",
            "first_half_loss",
            "induction_accuracy",
            "entropy",
            "previous_token_score",
            "induction_score",
        )
    }

    def log(step: int, train_loss: float) -> dict[str, Any]:
        record = _evaluate(model, eval_tokens, eval_np, T)
        curves["steps"].append(step)
        curves["train_loss"].append(train_loss)
        for key in ("repeat_loss", "first_half_loss", "induction_accuracy"):
            curves[key].append(record[key])
        for key in ("entropy", "previous_token_score", "induction_score"):
            curves[key].append(record[key])
        return record

    start = time.perf_counter()
    record = log(0, float("nan"))
    with _progress_bar(config.steps, f"induction {operator}/{architecture}", progress) as bar:
        for step in range(1, config.steps + 1):
            tokens = torch.from_numpy(
                variable_period_tokens(data, config.vocab_size, T, config.batch, config.shortest_period)
            )
            loss = _losses(model(tokens), tokens, T)["loss"]
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            optimizer.step()
            if step % config.log_every == 0 or step == config.steps:
                record = log(step, loss.item())
                bar.set_postfix(repeat=f"{record['repeat_loss']:.3f}", acc=f"{record['induction_accuracy']:.2f}")
            bar.update(1)
    seconds = time.perf_counter() - start
    return model, {"curves": curves, "final": record, "seconds": seconds}


def shifted_period_accuracy(model: InductionTransformer, config: InductionConfig) -> float:
    r"""Top-1 accuracy on the second copy of segments whose period differs from the training period.

    Sequences from :func:`variable_period_tokens` with periods :math:`L \in [\lceil T/4\rceil, \lfloor
    T/2\rfloor]` (at least 1) after a random prefix; position :math:`i` of the second copy (except the last
    token) must predict :math:`t_{i+1} = t_{i+1-L}`.  A circuit that copies from a fixed offset :math:`T - 1`
    scores at chance (:math:`\approx 1/V`); a content-based induction circuit scores as on period :math:`T`.

    References
    ----------
    Olsson et al. (2022) (induction heads generalise across positions); this probe is the workbench's.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> cfg = InductionConfig.preset("quick")
    >>> untrained = InductionTransformer(cfg.vocab_size, cfg.sequence_length, cfg.d_model, cfg.n_heads)
    >>> 0.0 <= shifted_period_accuracy(untrained, cfg) < 0.3  # chance is 1/V = 1/16
    True
    """
    T, n = config.half_length, config.sequence_length
    low = max(1, -(-T // 4))
    high = max(low, T // 2)
    rng = np.random.default_rng([config.seed, 2])
    tokens, periods = variable_period_tokens(
        rng, config.vocab_size, T, config.eval_batch, low, high, return_periods=True
    )
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(tokens)).argmax(-1).numpy()  # [B, n]: position i predicts t_{i+1}
    model.train()
    hits = [predicted[b, n - p : n - 1] == tokens[b, n - p + 1 :] for b, p in enumerate(periods)]
    return float(np.concatenate(hits).mean())


def _run_record(config: InductionConfig, model: InductionTransformer, trained: dict[str, Any], operator, arch):
    curves, final = trained["curves"], trained["final"]
    scores = np.array(curves["induction_score"])
    entropies = np.array(curves["entropy"])
    transition = (
        detect_phase_transition(
            curves["steps"],
            curves["repeat_loss"],
            vocab_size=config.vocab_size,
            induction_scores=scores,
            entropies=entropies,
            smooth=min(config.smooth, len(curves["steps"]) - 1 + len(curves["steps"]) % 2),  # odd, <= K
            plateau_fraction=config.plateau_fraction,
            drop_fraction=config.drop_fraction,
            window_fraction=config.window_fraction,
        )
        if len(curves["steps"]) >= 3
        else None
    )
    layer, head = divmod(int(np.argmax(scores[-1])), scores.shape[2])
    n = config.sequence_length
    operators = [P.detach().cpu().double() for P in final["operators"]]
    rho = model.skew_ratios()
    neighbours = np.exp(entropies)
    checks = {
        "dmap_skew_zero": bool(np.all(rho == 0.0)) if operator == "DMAP" else None,
        "effective_neighbours_in_range": bool(np.all((neighbours >= 1 - 1e-9) & (neighbours <= n + 1e-9))),
        "scores_in_unit_interval": bool(
            all(
                np.all((np.array(curves[k]) >= -1e-12) & (np.array(curves[k]) <= 1 + 1e-12))
                for k in ("previous_token_score", "induction_score")
            )
        ),
        "causal": bool(all(torch.all(P.triu(1) == 0) for P in operators)),
        "row_stochastic": bool(all(torch.allclose(P.sum(-1), torch.ones(()).double(), atol=1e-5) for P in operators)),
    }
    return {
        "operator": operator,
        "architecture": arch,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "final_repeat_loss": final["repeat_loss"],
        "final_first_half_loss": final["first_half_loss"],
        "induction_accuracy": final["induction_accuracy"],
        "shifted_period_accuracy": shifted_period_accuracy(model, config),
        "transition": dataclasses.asdict(transition) if transition is not None else None,
        "best_head": {
            "layer": layer,
            "head": head,
            "induction_score": float(scores[-1, layer, head]),
            "previous_token_score": float(np.array(curves["previous_token_score"])[-1, layer, head]),
            "entropy": float(entropies[-1, layer, head]),
        },
        "uniform_entropy": float(uniform_entropy(n, causal=True).mean()),
        "rho_skew": rho,
        "seconds": trained["seconds"],
        "seconds_per_step": trained["seconds"] / config.steps,
        "checks": checks,
        "curves": curves,
    }


def run_induction(
    config: InductionConfig,
    *,
    operators=INDUCTION_OPERATORS,
    architectures=ARCHITECTURES,
    out: str | Path | None = None,
    progress: bool = True,
) -> dict:
    r"""Train one model per (operator, architecture) with matched budgets and read their induction circuits.

    Every run shares the seed (hence the initial weights, which have the same shapes for every operator), the
    training stream, the eval batch, the widths and the number of steps.  The training loss is next-token
    cross-entropy over all positions,

    .. math::

        \mathcal L = -\frac{1}{2T-1}\sum_{i=0}^{2T-2}\log p_\theta(t_{i+1}\mid t_{\le i}),

    and every ``log_every`` steps the fixed eval batch gives the repeated-half loss (positions
    :math:`T \le i \le 2T-2`, whose target :math:`t_{i+1} = t_{i+1-T}` follows an earlier occurrence of
    :math:`t_i`), the first-half loss (:math:`0 \le i \le T-1`, floor :math:`\log V`), the induction accuracy
    (top-1 on the repeated half) and per layer × head the mean row entropy :math:`\bar H` (to compare with
    the uniform causal head's :math:`\frac{1}{2T}\log (2T)!`), the previous-token score and the induction score
    (:mod:`workbench.attention`).  :func:`detect_phase_transition` reads the repeated-half curve.

    Parameters
    ----------
    config : InductionConfig
    operators : sequence of {'ATTN', 'DMTN', 'DMAP'}
    architectures : sequence of {'attn-only', 'mlp'}
    out : path, optional
        Run directory to write ``config.json``, ``results.json``, ``table.md``, ``loss_curves.png``,
        ``induction_heads.png`` and one ``<operator>-<architecture>.pt`` state dict per run.
    progress : bool
        Show a tqdm bar per run.

    Returns
    -------
    dict
        JSON-able: ``{"experiment": "induction", "config", "runs": [...], "checks": {...}}``; each run holds
        ``operator, architecture, parameters, final_repeat_loss, final_first_half_loss, induction_accuracy,
        transition, best_head, rho_skew, seconds, curves`` (see the module docs); ``checks`` holds the
        structural facts: ρ_skew = 0 exactly for DMAP heads, every :math:`e^{\bar H} \in [1, 2T]`, scores in
        :math:`[0, 1]`, operators causal and row-stochastic.

    References
    ----------
    Attention Geometry §11, Tables 2–3 [SEED]; attention-geometry-math §A.10–A.12; ISA ML01 seed; Olsson et al.
    (2022).

    Examples
    --------
    >>> cfg = InductionConfig(vocab_size=8, half_length=4, d_model=8, n_heads=2, steps=2, batch=4, log_every=1,
    ...                       eval_batch=4)
    >>> result = run_induction(cfg, operators=("DMAP",), architectures=("attn-only",), progress=False)
    >>> run = result["runs"][0]
    >>> run["rho_skew"] == [[0.0, 0.0], [0.0, 0.0]], result["checks"]["all"]
    (True, True)
    >>> run["curves"]["steps"]
    [0, 1, 2]
    """
    if not isinstance(config, InductionConfig):
        raise TypeError(f"config must be an InductionConfig, got {type(config).__name__}")
    operators = _selection("operators", operators, INDUCTION_OPERATORS)
    architectures = _selection("architectures", architectures, ARCHITECTURES)
    path = run_directory("induction", config.name, out) if out is not None else None
    if path is not None:
        save_json(path / "config.json", dataclasses.asdict(config))
    runs, models = [], {}
    for arch in architectures:
        for operator in operators:
            model, trained = _train_one(config, operator, arch, progress=progress)
            runs.append(_run_record(config, model, trained, operator, arch))
            models[(operator, arch)] = model
    checks = _aggregate_checks(runs)
    result = jsonable({"experiment": "induction", "config": dataclasses.asdict(config), "runs": runs, "checks": checks})
    if path is not None:
        save_json(path / "results.json", result)
        (path / "table.md").write_text(format_table(result) + "\n", encoding="utf-8")
        _figures(result, path)
        for (operator, arch), model in models.items():
            torch.save(model.state_dict(), path / f"{operator}-{arch}.pt")
        result["out"] = str(path)
    return result


def _selection(name: str, values, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(values, str):
        values = (values,)
    try:
        values = tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of names from {allowed}, got {type(values).__name__}") from None
    if not values:
        raise ValueError(f"{name} must name at least one of {allowed}, got an empty selection")
    for v in values:
        check_choice(name, v, allowed)
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a name, got {values}")
    return values


def _aggregate_checks(runs: list[dict]) -> dict[str, Any]:
    keys = ("dmap_skew_zero", "effective_neighbours_in_range", "scores_in_unit_interval", "causal", "row_stochastic")
    checks: dict[str, Any] = {}
    for key in keys:
        values = [r["checks"][key] for r in runs if r["checks"][key] is not None]
        checks[key] = all(values) if values else None
    checks["all"] = all(v for v in checks.values() if v is not None)
    return checks


# ---- reporting ------------------------------------------------------------------------------------------


def format_table(results: dict) -> str:
    """Markdown table of the runs, with the seed's §11 induction accuracies for context.

    Columns: Operator | Arch | final repeat-half loss | induction acc | shifted-period acc (the probe of
    :func:`shifted_period_accuracy`, "—" when absent) | transition step (or "none") | best head induction score |
    its entropy.

    References
    ----------
    Attention Geometry §11, Tables 2–3 [SEED]; attention-geometry-math §A.12.

    Examples
    --------
    >>> run = {"operator": "ATTN", "architecture": "mlp", "final_repeat_loss": 0.5, "induction_accuracy": 0.9,
    ...        "transition": {"detected": True, "step": 425.0}, "best_head": {"layer": 1, "head": 0,
    ...        "induction_score": 0.8, "entropy": 0.3}}
    >>> print(format_table({"runs": [run]}).splitlines()[2])
    | ATTN | mlp | 0.500 | 0.900 | — | 425 | 0.800 (L1H0) | 0.300 |
    """
    if not isinstance(results, dict) or not isinstance(results.get("runs"), list):
        raise TypeError("results must be the dict returned by run_induction (with a 'runs' list)")
    lines = [
        "| Operator | Arch | final repeat-half loss | induction acc | shifted-period acc | transition step "
        "| best head induction score | its entropy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in results["runs"]:
        t = run.get("transition") or {}
        step = f"{t['step']:.0f}" if t.get("detected") else "none"
        head = run["best_head"]
        probe = run.get("shifted_period_accuracy")
        probe = "—" if probe is None else f"{probe:.3f}"
        lines.append(
            f"| {run['operator']} | {run['architecture']} | {run['final_repeat_loss']:.3f} | "
            f"{run['induction_accuracy']:.3f} | {probe} | {step} | {head['induction_score']:.3f} "
            f"(L{head['layer']}H{head['head']}) | {head['entropy']:.3f} |"
        )
    seed = ", ".join(f"{stage} {op} {acc:.4f}" for stage, op, acc in SEED_INDUCTION)
    lines.append("")
    lines.append(
        f"Seed (Attention Geometry §11, Tables 2–3, depth-32 ~1.9B model, induction accuracy): {seed}. "
        "Workbench scale differs by orders of magnitude; compare orderings, not values."
    )
    return "\n".join(lines)


def _figures(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    runs = result["runs"]
    archs = list(dict.fromkeys(r["architecture"] for r in runs))
    vocab = result["config"]["vocab_size"]
    fig, axes = plt.subplots(1, len(archs), figsize=(5.5 * len(archs), 4), squeeze=False, sharey=True)
    for ax, arch in zip(axes[0], archs, strict=True):
        for r in (r for r in runs if r["architecture"] == arch):
            (line,) = ax.plot(r["curves"]["steps"], r["curves"]["repeat_loss"], label=f"{r['operator']} repeat half")
            ax.plot(r["curves"]["steps"], r["curves"]["first_half_loss"], ls=":", color=line.get_color(), lw=1)
            t = r["transition"] or {}
            if t.get("detected"):
                ax.axvline(t["step"], color=line.get_color(), ls="--", lw=1)
        ax.axhline(math.log(vocab), color="grey", lw=0.8, label="log V")
        ax.set(title=f"{arch}: repeated-half loss (dotted: first half; dashed: transition)", xlabel="step")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("loss (nats)")
    fig.tight_layout()
    fig.savefig(path / "loss_curves.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for r in runs:
        layer, head = r["best_head"]["layer"], r["best_head"]["head"]
        label = f"{r['operator']}/{r['architecture']} L{layer}H{head}"
        axes[0].plot(r["curves"]["steps"], [s[layer][head] for s in r["curves"]["induction_score"]], label=label)
        axes[1].plot(r["curves"]["steps"], [e[layer][head] for e in r["curves"]["entropy"]], label=label)
    if runs:
        axes[1].axhline(runs[0]["uniform_entropy"], color="grey", lw=0.8, label="uniform causal head")
    axes[0].set_ylabel("induction score")
    axes[1].set(ylabel="mean row entropy (nats)", xlabel="step")
    axes[1].legend(fontsize=7)
    fig.suptitle("induction head (largest final induction score) over training")
    fig.tight_layout()
    fig.savefig(path / "induction_heads.png", dpi=120)
    plt.close(fig)
