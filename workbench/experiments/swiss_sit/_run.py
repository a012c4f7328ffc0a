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
  (:meth:`workbench.nn.OperatorAttention.skew_ratios`).

Protocol (the paper's protocol was lost; every choice below is a reconstruction, [RECON], exposed in
:class:`SwissSiTConfig`):

* **Data.**  The :math:`(x, z)` slice of the Swiss roll sampled uniformly in the parameter :math:`t`
  (:class:`workbench.markov.SwissRoll` with ``sampling="parameter"``, the sheet of sklearn's
  ``make_swiss_roll``), plus isotropic Gaussian noise of standard deviation ``noise`` in the roll's raw units
  (as sklearn's ``noise``), then centred and divided by one overall standard deviation.  With the paper
  preset (4000 points, ``noise=0.5``, seed 123) the native spacing is :math:`\approx 0.017` (mean) in these
  standardised units; the paper's 0.05 implies a coarser, unrecovered scaling, so compare *ratios*
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
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1, Figure 2 [SEED]; book/reference.md §A.10
(diagnostics, [RECON]), §A.11 (protocol, [SEED] + [RECON]), §A.12 (Table 1 numbers) [SEED]; SiT "Linear"
interpolant and DiT adaLN-Zero conditioning as described in §A.11 [RECON].
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from pathlib import Path

import numpy as np
import torch

from workbench.attention import (
    OPERATORS,
    effective_neighbours,
    native_spacing,
    nearest_target_distance,
    reversibility_residual,
)
from workbench.experiments.common import RunLog, jsonable
from workbench.experiments.common import progress as _progress_bar
from workbench.experiments.swiss_sit._config import SWISS_SIT_ORDERS, SwissSiTConfig, swiss_roll_points
from workbench.experiments.swiss_sit._model import SwissSiT
from workbench.experiments.swiss_sit._report import save_figures, swiss_sit_table
from workbench.validation import check_choice

__all__ = [
    "EPS_REV_TOLERANCE",
    "diagnose",
    "diagnostic_checks",
    "run_swiss_sit",
    "sample",
    "train_condition",
    "train_flow",
]

#: Tolerance of the structural check ε_rev = 0 for DMAP/ATAP: the operators are recorded in float64, so the
#: residual is float64 rounding of P and of the stationary law (~1e-13); 1e-6 leaves room for ill-conditioned
#: stationary laws of very sharp heads while staying far below any trained DMTN/ATTN value (~0.1–1.4).
EPS_REV_TOLERANCE = 1e-6

#: Every file a Swiss SiT run can write into its run directory (``force`` removes these, and only these).
ARTEFACTS = frozenset(
    {"results.json", "table.md", "samples.png", "grid.png"}
    | {f"{op}-{order}{suffix}" for op in OPERATORS for order in SWISS_SIT_ORDERS for suffix in (".pt", ".json")}
)

#: Null-task fidelity band for d_NN / native spacing (meaningful only for a trained, paper-preset model).
FIDELITY_BAND = (0.5, 2.0)


def _grid_index(times: tuple[float, ...], euler_steps: int) -> list[int]:
    """Euler step index k (grid time τ_k = 1 − k/steps) nearest to each requested time."""
    return [min(euler_steps, max(0, round((1.0 - t) * euler_steps))) for t in times]


@torch.no_grad()
def sample(model: SwissSiT, config: SwissSiTConfig, snapshot_times: tuple[float, ...], generator) -> dict:
    r"""Euler sampling of the flow in float64, with snapshots and the operators recorded along the way.

    From :math:`x_{\tau=1} \sim \mathcal N(0, I)` on ``n_generate / context`` contexts, the Euler steps
    :math:`x_{\tau - \Delta\tau} = x_\tau - \Delta\tau\, v(x_\tau, \tau)`, :math:`\Delta\tau = 1/`
    ``euler_steps``, of a float64 copy of ``model`` (``model`` itself is left as it is); the attention operators
    are recorded at the grid times nearest to ``config.diagnostic_times`` and the points at those nearest to
    ``snapshot_times``.  ``config`` is a :class:`SwissSiTConfig` or any config with its sampling fields
    (``n_generate``, ``context``, ``euler_steps``, ``diagnostic_times``).

    Returns
    -------
    dict
        ``samples`` ``[n_generate, 2]``, ``snapshots`` (grid time → points), ``operators``
        ``[times, contexts, heads, N, N]`` (float64) and ``diagnostic_times_used``.
    """
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


def train_condition(operator, order, config, train_t, bar) -> tuple[SwissSiT, SwissSiT, list[float]]:
    """Train one condition from its seed: ``(model, EMA model, per-step losses)``.

    A fresh :class:`SwissSiT` initialised after ``torch.manual_seed(config.seed)``, trained by :func:`train_flow`
    for ``config.steps`` steps with the batch generator seeded by ``config.seed``.
    """
    torch.manual_seed(config.seed)
    model = SwissSiT(operator, order, config.d_model, config.n_heads, config.ffn_mult)
    return train_flow(model, config, train_t, bar)


def train_flow(model, config, train_t, bar, *, steps=None, seed=None) -> tuple[SwissSiT, SwissSiT, list[float]]:
    r"""Flow matching of ``model`` from its present weights, with AdamW and an EMA of the weights.

    Each step draws ``config.batch`` contexts of ``config.context`` points of ``train_t`` (without replacement
    within a context), :math:`\tau \sim U(0, 1)` per context and :math:`\varepsilon \sim \mathcal N(0, I)`,
    and takes an AdamW step (``config.lr``, ``config.weight_decay``, fresh moments) on the mean squared error

    .. math::

        \mathcal L = \operatorname{mean}\lVert v_\theta(x_\tau, \tau) - (\varepsilon - x_0)\rVert^2,
        \qquad x_\tau = (1 - \tau)\,x_0 + \tau\,\varepsilon ;

    the EMA copy starts at the present weights and follows
    :math:`\bar\theta \leftarrow \text{ema}\,\bar\theta + (1 - \text{ema})\,\theta` after every step.
    ``model`` is trained in place.

    Parameters
    ----------
    model : SwissSiT
        The starting point: a fresh model (training) or a trained one (adaptation).
    config : SwissSiTConfig
        Or any config with its training fields (``batch``, ``n_train``, ``context``, ``lr``, ``weight_decay``,
        ``ema``, ``log_every``, ``steps``, ``seed``).
    train_t : torch.Tensor, shape=[n_train, 2]
    bar : tqdm bar
        Advanced by one per step (:func:`workbench.experiments.progress`).
    steps : int, optional
        Number of steps; default ``config.steps``.
    seed : int, optional
        Seed of the batch generator (contexts, :math:`\tau`, :math:`\varepsilon`); default ``config.seed``.

    Returns
    -------
    tuple
        ``(model, EMA model, per-step losses)``.
    """
    steps = config.steps if steps is None else steps
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    gen = torch.Generator().manual_seed(config.seed if seed is None else seed)
    losses = []
    for step in range(steps):
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


def diagnose(ema: SwissSiT, sampled: dict, train: np.ndarray, spacing: float) -> dict:
    r"""The Table 1 diagnostics of a sampled model, as a row of :func:`run_swiss_sit`.

    :math:`d_{\mathrm{NN}}` of ``sampled["samples"]`` to ``train`` and its ratio to ``spacing``;
    :math:`e^{\bar H}` and :math:`\varepsilon_{\mathrm{rev}}` (mean, max) over the operators ``sampled`` recorded
    (:func:`sample`); the mean over ``ema``'s heads of :math:`\rho_{\mathrm{skew}}`.
    """
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


def diagnostic_checks(rows: list[dict], reversible: list[dict], context: int, key, label: str) -> dict:
    r"""The structural facts of the Table 1 diagnostics, each with ``passed`` and the values (named by ``key(row)``).

    On the ``reversible`` rows (symmetric scores: DMAP, ATAP) :math:`\rho_{\mathrm{skew}} = 0` exactly and
    :math:`\varepsilon_{\mathrm{rev}} \le` :data:`EPS_REV_TOLERANCE` (``rho_skew_zero_<label>``,
    ``eps_rev_zero_<label>``); on every row :math:`\varepsilon_{\mathrm{rev}} \le \sqrt2` and
    :math:`1 \le e^{\bar H} \le` ``context``.
    """
    return {
        f"rho_skew_zero_{label}": {
            "passed": all(r["rho_skew"] == 0.0 for r in reversible),
            "values": {key(r): r["rho_skew"] for r in reversible},
        },
        f"eps_rev_zero_{label}": {
            "passed": all(r["eps_rev_max"] <= EPS_REV_TOLERANCE for r in reversible),
            "tolerance": EPS_REV_TOLERANCE,
            "values": {key(r): r["eps_rev_max"] for r in reversible},
        },
        "eps_rev_at_most_sqrt2": {
            "passed": all(r["eps_rev_max"] <= math.sqrt(2) + 1e-12 for r in rows),
            "values": {key(r): r["eps_rev_max"] for r in rows},
        },
        "eff_neighbours_in_range": {
            "passed": all(1.0 - 1e-9 <= r["eff_neighbours"] <= context + 1e-9 for r in rows),
            "range": [1, context],
            "values": {key(r): r["eff_neighbours"] for r in rows},
        },
    }


def _checks(rows: list[dict], config: SwissSiTConfig) -> dict:
    sym = [r for r in rows if r["operator"] in ("DMAP", "ATAP")]

    def key(r):
        return f"{r['operator']}-{r['order']}"

    lo, hi = FIDELITY_BAND
    return {
        **diagnostic_checks(rows, sym, config.context, key, "dmap_atap"),
        "d_nn_fidelity_band": {
            "passed": all(lo <= r["d_nn_ratio"] <= hi for r in rows),
            "band": list(FIDELITY_BAND),
            "values": {key(r): r["d_nn_ratio"] for r in rows},
            "meaningful": config.preset_name() == "paper",
            "note": "d_NN / native spacing; only meaningful for trained (paper-preset) models",
        },
    }


def run_swiss_sit(
    config: SwissSiTConfig | None = None,
    *,
    operators=OPERATORS,
    orders=SWISS_SIT_ORDERS,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
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
        Run directory (:class:`workbench.experiments.RunLog`): ``run.json`` and ``config.json`` at the start,
        ``<op>-<order>.pt`` (EMA state_dict) and ``<op>-<order>.json`` (its row) as each condition finishes,
        ``results.json``, ``table.md``, ``samples.png`` and ``grid.png`` at the end.  An ``out`` that already
        holds files is refused unless ``force`` or ``resume``.
    progress : bool
        Show a progress bar per condition.
    force : bool
        Reuse a non-empty ``out``: the files a Swiss SiT run writes are removed first, other files are kept.
    resume : bool
        Continue the unfinished run in ``out`` (same ``config``, ``operators`` and ``orders``): a finished
        condition's row is read back and its samples, for the figures, are drawn again from its EMA state dict
        with the same generator seed.  Every condition is seeded on its own (``config.seed``), so the rows equal
        those of an uninterrupted run, except the wall-clock ``seconds`` and ``seconds_per_step``.

    Returns
    -------
    dict
        JSON-able: ``experiment``, ``config``, ``native_spacing``, ``rows`` (one dict per condition: operator,
        order, d_nn, d_nn_ratio, eff_neighbours, eps_rev, eps_rev_max, rho_skew, loss, seconds,
        seconds_per_step, parameters, diagnostic_times_used) and ``checks`` (structural facts, each with
        ``passed`` and the values).

    References
    ----------
    Attention Geometry §9, Table 1 [SEED]; book/reference.md §A.10–§A.12 [RECON diagnostics/protocol].

    Examples
    --------
    >>> cfg = SwissSiTConfig.preset("quick", steps=2, n_generate=32, euler_steps=2)
    >>> res = run_swiss_sit(cfg, operators=("DMAP",), orders=("mhsa-ffn",), progress=False)
    >>> res["checks"]["rho_skew_zero_dmap_atap"]["passed"], res["checks"]["eps_rev_zero_dmap_atap"]["passed"]
    (True, True)
    """
    config = SwissSiTConfig() if config is None else config
    if type(config) is not SwissSiTConfig:  # exactly: config.json records its fields (SitTransferConfig has more)
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
    snapshot_times = (1.0, 0.75, 0.5, 0.25, 0.0)
    plan = [(op, order) for op in operators for order in orders]
    log = RunLog.open(
        out,
        experiment="swiss-sit",
        config=dataclasses.asdict(config),
        conditions=[f"{op}-{order}" for op, order in plan],
        selection={"operators": operators, "orders": orders},
        artefacts=ARTEFACTS,
        force=force,
        resume=resume,
    )
    with log:
        rows, conditions = [], []
        for op, order in plan:
            name = f"{op}-{order}"
            row = log.finished(name)
            if row is None:
                row, ema, sampled = _run_condition(op, order, config, train, train_t, spacing, snapshot_times, progress)
                log.keep(name, row, ema.state_dict())
            else:  # kept by an earlier session: its EMA weights and the sampling seed give the same samples
                ema = SwissSiT(op, order, config.d_model, config.n_heads, config.ffn_mult).requires_grad_(False)
                log.load_state(name, ema)
                sampled = sample(ema, config, snapshot_times, torch.Generator().manual_seed(config.seed + 1))
            rows.append(row)
            conditions.append((op, order, sampled))
        results = _results(config, spacing, rows)
        if log.path is not None:
            log.write_results(results, swiss_sit_table(results))
            save_figures(log.path, train, conditions)
    return jsonable(results)


def _run_condition(op, order, config, train, train_t, spacing, snapshot_times, progress):
    """Train one condition from its own seed, sample with its EMA model, diagnose: (row, EMA model, samples)."""
    start = time.perf_counter()
    with _progress_bar(config.steps, f"{op} {order}", progress) as bar:
        model, ema, losses = train_condition(op, order, config, train_t, bar)
    train_seconds = time.perf_counter() - start
    gen = torch.Generator().manual_seed(config.seed + 1)
    sampled = sample(ema, config, snapshot_times, gen)
    row = {"operator": op, "order": order, **diagnose(ema, sampled, train, spacing)}
    tail = max(1, config.steps // 10)
    row.update(
        loss=float(np.mean(losses[-tail:])),
        seconds=time.perf_counter() - start,
        seconds_per_step=train_seconds / config.steps,
        parameters=sum(p.numel() for p in model.parameters()),
        diagnostic_times_used=sampled["diagnostic_times_used"],
    )
    return row, ema, sampled


def _results(config: SwissSiTConfig, spacing: float, rows: list[dict]) -> dict:
    return {
        "experiment": "swiss-sit",
        "preset": config.preset_name(),
        "config": dataclasses.asdict(config),
        "native_spacing": spacing,
        "fidelity_band": list(FIDELITY_BAND),
        "eps_rev_tolerance": EPS_REV_TOLERANCE,
        "rows": rows,
        "checks": _checks(rows, config),
    }
