r"""Swiss SiT: a one-block flow transformer on the 2-D Swiss roll, for the four attention operators.

The experiment of Attention Geometry §9 (Table 1, Figure 2) at workbench scale.  A *context* is a set of
:math:`N` Swiss-roll points; a one-block transformer (no positional encoding: a context is a set) learns the
velocity of the SiT "Linear" flow-matching path, and sampling integrates it from noise back to data.  The
scan trains one model per condition (operator :math:`\in` {DMAP, DMTN, ATAP, ATTN}) :math:`\times`
(order :math:`\in` {FFN→MHSA, MHSA→FFN}) and reports the Table 1 diagnostics of the learned attention:

* :math:`d_{\mathrm{NN}}` — mean distance from a generated point to its nearest training point
  (:func:`workbench.attention.nearest_target_distance`), and its ratio to the training set's own native
  spacing (:func:`workbench.attention.native_spacing`);
* :math:`e^{\bar H}` — effective neighbour count (:func:`workbench.attention.effective_neighbours`) over all
  recorded operators (heads :math:`\times` contexts :math:`\times` rows :math:`\times` diagnostic times);
* :math:`\varepsilon_{\mathrm{rev}}` — detailed-balance residual
  (:func:`workbench.attention.reversibility_residual`), mean and max over recorded operators;
* :math:`\rho_{\mathrm{skew}}` — mean over heads of the effective score skew ratio
  (:meth:`workbench.experiments._layers.OperatorAttention.skew_ratios`).

Protocol (the seed's protocol was lost; every choice below is a reconstruction, [RECON], exposed in
:class:`SwissSiTConfig`):

* **Data.**  The :math:`(x, z)` slice of the Swiss roll sampled uniformly in the parameter :math:`t`
  (:class:`workbench.markov.SwissRoll` with ``sampling="parameter"``, the sheet of sklearn's
  ``make_swiss_roll``), plus isotropic Gaussian noise of standard deviation ``noise`` in the roll's raw units
  (as sklearn's ``noise``), then centred and divided by one overall standard deviation.  With the paper
  preset (4000 points, ``noise=0.5``, seed 123) the native spacing is :math:`\approx 0.017` (mean) in these
  standardised units; the seed's 0.05 implies a coarser, unrecovered scaling, so compare *ratios*
  :math:`d_{\mathrm{NN}}/s`, not raw values.
* **Path.**  :math:`x_\tau = (1-\tau)\,x_{\mathrm{data}} + \tau\,\varepsilon`, :math:`\tau\sim U(0,1)` per
  context, target velocity :math:`\varepsilon - x_{\mathrm{data}}`, mean-squared error.  A context is
  ``context`` training points drawn without replacement, independently per batch element.
* **Model.**  Linear embedding :math:`\mathbb R^2\to\mathbb R^D`; one block of two pre-LN sublayers (MHSA of
  the chosen operator, bidirectional; FFN with GELU), in the chosen order, each modulated by adaLN-Zero
  (shift, scale, gate from an MLP of a sinusoidal :math:`\tau` embedding; gates start at 0); final
  modulated LN and linear :math:`D\to 2`.
* **Optimisation.**  AdamW with constant learning rate; an exponential moving average (EMA) of the weights
  is the model that samples and is diagnosed.
* **Sampling.**  Euler steps of the ODE :math:`\dot x = v(x,\tau)` from :math:`\tau = 1` (pure noise) to
  :math:`\tau = 0`, on ``n_generate / context`` independent contexts, in float64 (a float64 copy of the EMA
  model), so the recorded operators carry float64 rounding only.  The operators are recorded at the Euler
  grid time nearest to each of ``diagnostic_times``.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1, Figure 2 [SEED]; attention-geometry-math §A.10
(diagnostics, [RECON]), §A.11 (protocol, [SEED] + [RECON]), §A.12 (Table 1 numbers) [SEED]; SiT "Linear"
interpolant and DiT adaLN-Zero conditioning as described in §A.11 [RECON].
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from workbench.attention import (
    OPERATORS,
    effective_neighbours,
    native_spacing,
    nearest_target_distance,
    reversibility_residual,
)
from workbench.experiments._layers import OperatorAttention
from workbench.experiments._runs import jsonable, run_directory, save_json
from workbench.experiments._runs import progress as _progress_bar
from workbench.markov import SwissRoll
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = [
    "SEED_TABLE1",
    "SWISS_SIT_ORDERS",
    "SwissSiT",
    "SwissSiTConfig",
    "format_table",
    "run_swiss_sit",
    "swiss_roll_points",
]

SWISS_SIT_ORDERS = ("ffn-mhsa", "mhsa-ffn")
"""Block orders: ``"ffn-mhsa"`` runs the FFN sublayer first (the seed's FFN→MHSA convention)."""

#: Table 1 of Attention Geometry §9 (Swiss roll, seed 123), transcribed from attention-geometry-math §A.12
#: [SEED]; keyed by ``(operator, order)``.
SEED_TABLE1: dict[tuple[str, str], dict[str, float]] = {
    ("DMAP", "ffn-mhsa"): {"d_nn": 0.0506, "eff_neighbours": 27.2, "eps_rev": 2.46e-4, "rho_skew": 0.0},
    ("DMAP", "mhsa-ffn"): {"d_nn": 0.0502, "eff_neighbours": 1.14, "eps_rev": 1.83e-6, "rho_skew": 0.0},
    ("DMTN", "ffn-mhsa"): {"d_nn": 0.0498, "eff_neighbours": 42.4, "eps_rev": 0.224, "rho_skew": 0.287},
    ("DMTN", "mhsa-ffn"): {"d_nn": 0.0508, "eff_neighbours": 11.1, "eps_rev": 0.234, "rho_skew": 0.116},
    ("ATAP", "ffn-mhsa"): {"d_nn": 0.0494, "eff_neighbours": 46.4, "eps_rev": 6.15e-5, "rho_skew": 0.0},
    ("ATAP", "mhsa-ffn"): {"d_nn": 0.0512, "eff_neighbours": 9.63, "eps_rev": 1.27e-5, "rho_skew": 0.0},
    ("ATTN", "ffn-mhsa"): {"d_nn": 0.0499, "eff_neighbours": 56.2, "eps_rev": 0.439, "rho_skew": 0.859},
    ("ATTN", "mhsa-ffn"): {"d_nn": 0.0508, "eff_neighbours": 10.4, "eps_rev": 1.414, "rho_skew": 10.449},
}

#: Tolerance of the structural check ε_rev = 0 for DMAP/ATAP: the operators are recorded in float64, so the
#: residual is float64 rounding of P and of the stationary law (~1e-13); 1e-6 leaves room for ill-conditioned
#: stationary laws of very sharp heads while staying far below any trained DMTN/ATTN value (~0.1–1.4).
EPS_REV_TOLERANCE = 1e-6

#: Null-task fidelity band for d_NN / native spacing (meaningful only for a trained, paper-preset model).
FIDELITY_BAND = (0.5, 2.0)

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


@dataclass(frozen=True)
class SwissSiTConfig:
    r"""Settings of the Swiss SiT scan; the defaults are the ``"paper"`` preset.

    Parameters
    ----------
    n_train : int
        Training-set size (4000 in the seed).
    seed : int
        Seed of the data, initialisation, batches and sampling noise (123 in the seed).
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
    attention-geometry-math §A.11 [SEED: 4000 points, seed 123; RECON: everything else].

    Examples
    --------
    >>> SwissSiTConfig.preset("quick").context
    32
    >>> SwissSiTConfig(context=0)
    Traceback (most recent call last):
        ...
    ValueError: context must be an integer >= 2, got 0
    """

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

    def __post_init__(self):
        check_integer("n_train", self.n_train, 2)
        check_integer("seed", self.seed, 0)
        check_in_range("noise", self.noise, 0.0)
        check_integer("context", self.context, 2)
        if self.context > self.n_train:
            raise ValueError(f"context must be <= n_train={self.n_train}, got {self.context}")
        check_integer("d_model", self.d_model, 1)
        check_integer("n_heads", self.n_heads, 1)
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads must divide d_model={self.d_model}, got {self.n_heads}")
        check_integer("ffn_mult", self.ffn_mult, 1)
        check_integer("steps", self.steps, 1)
        check_integer("batch", self.batch, 1)
        check_in_range("lr", self.lr, 0.0, low_inclusive=False)
        check_in_range("weight_decay", self.weight_decay, 0.0)
        check_in_range("ema", self.ema, 0.0, 1.0, high_inclusive=False)
        check_integer("euler_steps", self.euler_steps, 1)
        check_integer("n_generate", self.n_generate, 1)
        if self.n_generate % self.context:
            raise ValueError(f"n_generate must be a multiple of context={self.context}, got {self.n_generate}")
        times = self.diagnostic_times
        if not isinstance(times, tuple) or not times:
            raise TypeError(f"diagnostic_times must be a non-empty tuple of floats, got {times!r}")
        for t in times:
            check_in_range("diagnostic_times entry", t, 0.0, 1.0, low_inclusive=False)
        check_integer("log_every", self.log_every, 1)

    @classmethod
    def preset(cls, name: str, **overrides) -> SwissSiTConfig:
        """The ``"quick"`` (all 8 conditions in about a minute on 2 cores) or ``"paper"`` preset.

        Keyword ``overrides`` replace single fields.

        Examples
        --------
        >>> SwissSiTConfig.preset("paper") == SwissSiTConfig()
        True
        >>> SwissSiTConfig.preset("quick", steps=5).steps
        5
        """
        check_choice("name", name, tuple(_PRESETS))
        return cls(**{**_PRESETS[name], **overrides})

    def preset_name(self) -> str:
        """``"quick"`` or ``"paper"`` if this is that preset exactly, else ``"custom"``."""
        for name in _PRESETS:
            if self == SwissSiTConfig.preset(name):
                return name
        return "custom"


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
    Attention Geometry §9 [SEED]; attention-geometry-math §A.11 [RECON: 2-D slice, standardisation].

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


def _time_embedding(tau: torch.Tensor, dim: int, max_period: float = 10_000.0) -> torch.Tensor:
    """Sinusoidal embedding of ``1000·τ`` (DiT convention), shape ``[B, dim]``."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=tau.dtype, device=tau.device) / half)
    angles = 1000.0 * tau[:, None] * freqs[None]
    emb = torch.cat([torch.cos(angles), torch.sin(angles)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


def _modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1.0 + scale[:, None]) + shift[:, None]


class SwissSiT(nn.Module):
    r"""One-block flow transformer on sets of 2-D points, with the attention of a chosen operator.

    For a context :math:`X \in \mathbb R^{N\times 2}` at generative time :math:`\tau`, with
    :math:`c = \mathrm{MLP}(\mathrm{sinusoid}(\tau))` and adaLN-Zero modulation of each sublayer,

    .. math::

        h_0 = XW_{\mathrm{in}} + b_{\mathrm{in}},\quad
        h \leftarrow h + g_s(c)\odot S\bigl(\mathrm{LN}(h)\,(1 + a_s(c)) + b_s(c)\bigr)
        \ \text{for } S \text{ in the order},\quad
        v = \bigl(\mathrm{LN}(h)(1 + a_o(c)) + b_o(c)\bigr)W_{\mathrm{out}} + b_{\mathrm{out}},

    where the sublayers are :math:`S = \mathrm{MHSA}` (:class:`OperatorAttention`, bidirectional, operator
    ``operator``) and :math:`S = \mathrm{FFN}` (GELU), and ``order="ffn-mhsa"`` applies the FFN first.  No
    positional encoding: the model is permutation-equivariant over the :math:`N` points.

    Parameters
    ----------
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}
    order : {'ffn-mhsa', 'mhsa-ffn'}
    d_model, n_heads, ffn_mult : int

    References
    ----------
    Attention Geometry §9 [SEED: one block, both orders]; attention-geometry-math §A.11 [RECON: pre-LN, adaLN].

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> model = SwissSiT("DMTN", "ffn-mhsa", d_model=8, n_heads=2)
    >>> x, tau = torch.randn(3, 5, 2), torch.rand(3)
    >>> tuple(model(x, tau).shape), tuple(model.operators(x, tau).shape)
    ((3, 5, 2), (3, 2, 5, 5))
    >>> bool(torch.allclose(model.operators(x, tau).sum(-1), torch.ones(3, 2, 5)))  # row-stochastic
    True
    """

    def __init__(self, operator: str, order: str, d_model: int = 64, n_heads: int = 4, ffn_mult: int = 4):
        super().__init__()
        self.operator = check_choice("operator", operator, OPERATORS)
        self.order = check_choice("order", order, SWISS_SIT_ORDERS)
        d_model = check_integer("d_model", d_model, 1)
        ffn_mult = check_integer("ffn_mult", ffn_mult, 1)
        self.d_model = d_model
        self.embed = nn.Linear(2, d_model)
        self.time_mlp = nn.Sequential(nn.Linear(d_model, d_model), nn.SiLU(), nn.Linear(d_model, d_model))
        self.attn = OperatorAttention(d_model, n_heads, operator, causal=False)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, ffn_mult * d_model), nn.GELU(), nn.Linear(ffn_mult * d_model, d_model)
        )
        self.norm_attn = nn.LayerNorm(d_model, elementwise_affine=False)
        self.norm_ffn = nn.LayerNorm(d_model, elementwise_affine=False)
        self.norm_out = nn.LayerNorm(d_model, elementwise_affine=False)
        # adaLN-Zero: 3 (shift, scale, gate) per sublayer + 2 (shift, scale) for the output; zero-initialised.
        self.ada = nn.Sequential(nn.SiLU(), nn.Linear(d_model, 8 * d_model))
        nn.init.zeros_(self.ada[1].weight)
        nn.init.zeros_(self.ada[1].bias)
        self.head = nn.Linear(d_model, 2)

    def _run(self, x: torch.Tensor, tau: torch.Tensor, want_operator: bool):
        if x.ndim != 3 or x.shape[-1] != 2:
            raise ValueError(f"x must have shape [batch, points, 2], got {tuple(x.shape)}")
        if tau.shape != (x.shape[0],):
            raise ValueError(f"tau must have shape [{x.shape[0]}] (one time per context), got {tuple(tau.shape)}")
        c = self.time_mlp(_time_embedding(tau, self.d_model))
        mods = self.ada(c).chunk(8, dim=-1)
        h = self.embed(x)
        P = None
        sublayers = ("ffn", "mhsa") if self.order == "ffn-mhsa" else ("mhsa", "ffn")
        for name in sublayers:
            if name == "mhsa":
                shift, scale, gate = mods[0:3]
                y, P = self.attn(_modulate(self.norm_attn(h), shift, scale), return_operator=True)
            else:
                shift, scale, gate = mods[3:6]
                y = self.ffn(_modulate(self.norm_ffn(h), shift, scale))
            h = h + gate[:, None] * y
        v = self.head(_modulate(self.norm_out(h), mods[6], mods[7]))
        return (v, P) if want_operator else v

    def forward(self, x: torch.Tensor, tau: torch.Tensor, return_operator: bool = False):
        """Velocity ``[B, N, 2]`` at points ``x [B, N, 2]`` and times ``tau [B]`` (and ``P [B, H, N, N]``)."""
        return self._run(x, tau, return_operator)

    def operators(self, x: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
        r"""The MHSA Markov operators :math:`\mathsf P^{(h)}` of each context, ``[B, H, N, N]``, rows summing to 1."""
        return self._run(x, tau, True)[1]


def _grid_index(times: tuple[float, ...], euler_steps: int) -> list[int]:
    """Euler step index k (grid time τ_k = 1 − k/steps) nearest to each requested time."""
    return [min(euler_steps, max(0, round((1.0 - t) * euler_steps))) for t in times]


@torch.no_grad()
def _sample(model: SwissSiT, config: SwissSiTConfig, snapshot_times: tuple[float, ...], generator) -> dict:
    """Euler sampling in float64; snapshots and recorded operators at the nearest grid times."""
    model64 = copy.deepcopy(model).double().eval()
    n_ctx = config.n_generate // config.context
    x = torch.randn(n_ctx, config.context, 2, generator=generator, dtype=torch.float64)
    diag_k = _grid_index(config.diagnostic_times, config.euler_steps)
    snap_k = _grid_index(snapshot_times, config.euler_steps)
    dt = 1.0 / config.euler_steps
    operators, snapshots, taus_used = [], {}, []
    for k in range(config.euler_steps + 1):
        tau_k = 1.0 - k * dt
        if k in snap_k:
            snapshots[round(tau_k, 6)] = x.reshape(-1, 2).numpy().copy()
        if k == config.euler_steps:
            break
        tau = torch.full((n_ctx,), tau_k, dtype=torch.float64)
        v, P = model64(x, tau, return_operator=True)
        for _ in range(diag_k.count(k)):
            operators.append(P.numpy().copy())
            taus_used.append(tau_k)
        x = x - dt * v  # dx/dτ = v; stepping τ → τ − dτ
    # Operators at τ = 0 requested by k == euler_steps: evaluate there on the final state.
    for _ in range(diag_k.count(config.euler_steps)):
        tau = torch.zeros(n_ctx, dtype=torch.float64)
        operators.append(model64.operators(x, tau).numpy().copy())
        taus_used.append(0.0)
    return {
        "samples": x.reshape(-1, 2).numpy(),
        "snapshots": snapshots,
        "operators": np.stack(operators),  # [times, contexts, heads, N, N]
        "diagnostic_times_used": taus_used,
    }


def _train_condition(operator, order, config, train_t, bar) -> tuple[SwissSiT, SwissSiT, list[float]]:
    torch.manual_seed(config.seed)
    model = SwissSiT(operator, order, config.d_model, config.n_heads, config.ffn_mult)
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(config.seed)
    losses = []
    for step in range(config.steps):
        idx = torch.rand(config.batch, config.n_train, generator=gen).topk(config.context, dim=1).indices
        x0 = train_t[idx]  # [B, N, 2]; without replacement within a context
        eps = torch.randn(x0.shape, generator=gen)
        tau = torch.rand(config.batch, generator=gen)
        x_tau = (1.0 - tau[:, None, None]) * x0 + tau[:, None, None] * eps
        loss = torch.mean((model(x_tau, tau) - (eps - x0)) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p_ema, p in zip(ema.parameters(), model.parameters(), strict=True):
                p_ema.lerp_(p, 1.0 - config.ema)
        losses.append(float(loss.detach()))
        bar.update(1)
        if (step + 1) % config.log_every == 0:
            bar.set_postfix(loss=f"{np.mean(losses[-config.log_every :]):.4f}")
    return model, ema, losses


def _diagnose(ema: SwissSiT, sampled: dict, train: np.ndarray, spacing: float) -> dict:
    P = sampled["operators"]  # float64
    eps = np.asarray(reversibility_residual(P), dtype=float)
    d_nn = nearest_target_distance(sampled["samples"], train)
    return {
        "d_nn": d_nn,
        "d_nn_ratio": d_nn / spacing,
        "eff_neighbours": float(effective_neighbours(P)),
        "eps_rev": float(eps.mean()),
        "eps_rev_max": float(eps.max()),
        "rho_skew": float(np.mean(ema.attn.skew_ratios())),
    }


def _checks(rows: list[dict], config: SwissSiTConfig) -> dict:
    sym = [r for r in rows if r["operator"] in ("DMAP", "ATAP")]

    def key(r):
        return f"{r['operator']}-{r['order']}"

    lo, hi = FIDELITY_BAND
    return {
        "rho_skew_zero_dmap_atap": {
            "passed": all(r["rho_skew"] == 0.0 for r in sym),
            "values": {key(r): r["rho_skew"] for r in sym},
        },
        "eps_rev_zero_dmap_atap": {
            "passed": all(r["eps_rev_max"] <= EPS_REV_TOLERANCE for r in sym),
            "tolerance": EPS_REV_TOLERANCE,
            "values": {key(r): r["eps_rev_max"] for r in sym},
        },
        "eps_rev_at_most_sqrt2": {
            "passed": all(r["eps_rev_max"] <= math.sqrt(2) + 1e-12 for r in rows),
            "values": {key(r): r["eps_rev_max"] for r in rows},
        },
        "eff_neighbours_in_range": {
            "passed": all(1.0 - 1e-9 <= r["eff_neighbours"] <= config.context + 1e-9 for r in rows),
            "range": [1, config.context],
            "values": {key(r): r["eff_neighbours"] for r in rows},
        },
        "d_nn_fidelity_band": {
            "passed": all(lo <= r["d_nn_ratio"] <= hi for r in rows),
            "band": list(FIDELITY_BAND),
            "values": {key(r): r["d_nn_ratio"] for r in rows},
            "meaningful": config.preset_name() == "paper",
            "note": "d_NN / native spacing; only meaningful for trained (paper-preset) models",
        },
    }


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) < 1e-2 or abs(value) >= 1e3:
        return f"{value:.2e}"
    return f"{value:.3g}"


def format_table(results: dict) -> str:
    r"""Markdown table of a :func:`run_swiss_sit` result in the layout of the seed's Table 1.

    Each cell reads ``ours / seed``; :math:`d_{\mathrm{NN}}` also shows the ratio to the native spacing
    (the seed's raw values are in its own, unrecovered units: compare ratios).

    Parameters
    ----------
    results : dict
        The dictionary returned by :func:`run_swiss_sit`.

    Returns
    -------
    str

    References
    ----------
    Attention Geometry §9, Table 1 [SEED]; attention-geometry-math §A.12.

    Examples
    --------
    >>> row = dict(operator="DMAP", order="mhsa-ffn", d_nn=0.02, d_nn_ratio=1.2, eff_neighbours=1.5,
    ...            eps_rev=1e-14, rho_skew=0.0)
    >>> text = format_table({"native_spacing": 0.0167, "rows": [row]})
    >>> "| DMAP | MHSA→FFN | 0.02 (1.2×) / 0.0506" in text.replace("0.0502", "0.0506")
    True
    """
    lines = [
        "| Op | Order | d_NN (×native) ours / seed | e^{H̄} ours / seed | ε_rev ours / seed | ρ_skew ours / seed |",
        "|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        seed = SEED_TABLE1.get((r["operator"], r["order"]), {})
        order = r["order"].replace("-", "→").upper()

        def pair(k, r=r, seed=seed):
            return f"{_fmt(r[k])} / {_fmt(seed[k]) if k in seed else '—'}"

        d_nn = f"{_fmt(r['d_nn'])} ({r['d_nn_ratio']:.2g}×) / {_fmt(seed['d_nn']) if seed else '—'}"
        lines.append(
            f"| {r['operator']} | {order} | {d_nn} | {pair('eff_neighbours')} | {pair('eps_rev')} | "
            f"{pair('rho_skew')} |"
        )
    lines.append("")
    lines.append(
        f"Native spacing of the training set (mean NN distance): {_fmt(results['native_spacing'])} "
        "(seed: d_NN 0.0494–0.0512, 'close to the native spacing')."
    )
    return "\n".join(lines) + "\n"


def _figures(path: Path, train: np.ndarray, conditions: list[tuple[str, str, dict]]) -> None:
    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    lim = 1.1 * max(3.0, float(np.abs(train).max()))  # one frame for all panels (noise reaches about ±3)
    pick = next((c for c in conditions if c[0] == "DMTN" and c[1] == "ffn-mhsa"), conditions[0])
    snaps = pick[2]["snapshots"]
    fig = Figure(figsize=(2.6 * (1 + len(snaps)), 2.8))
    axes = fig.subplots(1, 1 + len(snaps), squeeze=False)
    axes = axes[0]
    axes[0].scatter(train[:, 0], train[:, 1], s=1, c="k")
    axes[0].set_title(f"training set ({len(train)})")
    for ax, (tau, pts) in zip(axes[1:], sorted(snaps.items(), reverse=True), strict=True):
        ax.scatter(pts[:, 0], pts[:, 1], s=2, c="C0")
        ax.set_title(f"τ = {tau:g}")
    for ax in axes:
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"{pick[0]} {pick[1].replace('-', '→').upper()}")
    fig.tight_layout()
    fig.savefig(path / "samples.png", dpi=110)

    cols = min(4, len(conditions))
    rows_ = math.ceil(len(conditions) / cols)
    fig = Figure(figsize=(2.8 * cols, 2.8 * rows_))
    axes = fig.subplots(rows_, cols, squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, (op, order, sampled) in zip(axes.ravel(), conditions, strict=False):
        ax.axis("on")
        ax.scatter(train[:, 0], train[:, 1], s=1, c="0.8")
        ax.scatter(sampled["samples"][:, 0], sampled["samples"][:, 1], s=2, c="C3")
        ax.set_title(f"{op} {order.replace('-', '→').upper()}", fontsize=9)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path / "grid.png", dpi=110)


def run_swiss_sit(
    config: SwissSiTConfig | None = None,
    *,
    operators=OPERATORS,
    orders=SWISS_SIT_ORDERS,
    out: str | Path | None = None,
    progress: bool = True,
) -> dict:
    r"""Train and diagnose the Swiss SiT for each (operator, order) condition.

    Per condition: flow matching on contexts of the training set (:func:`swiss_roll_points`), Euler sampling
    of ``n_generate`` points with the EMA model, and the Table 1 diagnostics

    .. math::

        d_{\mathrm{NN}} = \frac1M\sum_m\min_r\lVert x_m - r\rVert,\quad
        e^{\bar H},\quad
        \varepsilon_{\mathrm{rev}} = \frac{\lVert\operatorname{diag}(\pi)\mathsf P
        - \mathsf P^\top\operatorname{diag}(\pi)\rVert_F}{\lVert\operatorname{diag}(\pi)\mathsf P\rVert_F},\quad
        \rho_{\mathrm{skew}} = \frac{\lVert M_A^{\mathrm{op}}\rVert_F}{\lVert M_S^{\mathrm{op}}\rVert_F},

    with :math:`e^{\bar H}` and :math:`\varepsilon_{\mathrm{rev}}` over the operators recorded at
    ``config.diagnostic_times`` (all heads and contexts) and :math:`\rho_{\mathrm{skew}}` averaged over heads.

    Parameters
    ----------
    config : SwissSiTConfig, optional
        Defaults to the paper preset.
    operators : sequence of str
        Subset of :data:`workbench.attention.OPERATORS`.
    orders : sequence of str
        Subset of :data:`SWISS_SIT_ORDERS`.
    out : path, optional
        Run directory; if given, ``results.json``, ``config.json``, ``table.md``, ``samples.png``,
        ``grid.png`` and one ``<op>-<order>.pt`` (EMA state_dict) per condition are written there.
    progress : bool
        Show a progress bar per condition.

    Returns
    -------
    dict
        JSON-able: ``experiment``, ``config``, ``native_spacing``, ``rows`` (one dict per condition: operator,
        order, d_nn, d_nn_ratio, eff_neighbours, eps_rev, eps_rev_max, rho_skew, loss, seconds,
        seconds_per_step, parameters, diagnostic_times_used) and ``checks`` (structural facts, each with
        ``passed`` and the values).

    References
    ----------
    Attention Geometry §9, Table 1 [SEED]; attention-geometry-math §A.10–§A.12 [RECON diagnostics/protocol].

    Examples
    --------
    >>> cfg = SwissSiTConfig.preset("quick", steps=2, n_generate=32, euler_steps=2)
    >>> res = run_swiss_sit(cfg, operators=("DMAP",), orders=("mhsa-ffn",), progress=False)
    >>> res["checks"]["rho_skew_zero_dmap_atap"]["passed"], res["checks"]["eps_rev_zero_dmap_atap"]["passed"]
    (True, True)
    """
    config = SwissSiTConfig() if config is None else config
    if not isinstance(config, SwissSiTConfig):
        raise TypeError(f"config must be a SwissSiTConfig, got {type(config).__name__}")
    operators = tuple([operators] if isinstance(operators, str) else operators)
    orders = tuple([orders] if isinstance(orders, str) else orders)
    if not operators:
        raise ValueError("operators must be a non-empty sequence of operator names, got ()")
    if not orders:
        raise ValueError("orders must be a non-empty sequence of block orders, got ()")
    for op in operators:
        check_choice("operators entry", op, OPERATORS)
    for order in orders:
        check_choice("orders entry", order, SWISS_SIT_ORDERS)

    train = swiss_roll_points(config.n_train, config.seed, config.noise)
    spacing = native_spacing(train)
    train_t = torch.as_tensor(train, dtype=torch.float32)
    path = run_directory("swiss-sit", config.preset_name(), out) if out is not None else None
    snapshot_times = (1.0, 0.75, 0.5, 0.25, 0.0)

    rows, conditions = [], []
    for op in operators:
        for order in orders:
            start = time.perf_counter()
            with _progress_bar(config.steps, f"{op} {order}", progress) as bar:
                model, ema, losses = _train_condition(op, order, config, train_t, bar)
            train_seconds = time.perf_counter() - start
            gen = torch.Generator().manual_seed(config.seed + 1)
            sampled = _sample(ema, config, snapshot_times, gen)
            row = {"operator": op, "order": order, **_diagnose(ema, sampled, train, spacing)}
            tail = max(1, config.steps // 10)
            row.update(
                loss=float(np.mean(losses[-tail:])),
                seconds=time.perf_counter() - start,
                seconds_per_step=train_seconds / config.steps,
                parameters=sum(p.numel() for p in model.parameters()),
                diagnostic_times_used=sampled["diagnostic_times_used"],
            )
            rows.append(row)
            conditions.append((op, order, sampled))
            if path is not None:
                torch.save(ema.state_dict(), path / f"{op}-{order}.pt")

    results = {
        "experiment": "swiss-sit",
        "preset": config.preset_name(),
        "config": dataclasses.asdict(config),
        "native_spacing": spacing,
        "fidelity_band": list(FIDELITY_BAND),
        "eps_rev_tolerance": EPS_REV_TOLERANCE,
        "rows": rows,
        "checks": _checks(rows, config),
    }
    if path is not None:
        save_json(path / "config.json", dataclasses.asdict(config))
        save_json(path / "results.json", results)
        (path / "table.md").write_text(format_table(results), encoding="utf-8")
        _figures(path, train, conditions)
        results["out"] = str(path)
    return jsonable(results)
