r"""MagnusBlock fusion of a trained model: quality and latency per BCH truncation order, with a commutator budget.

The Lie-Exponential Roadmap proposes to collapse a block's linearised sublayers :math:`A_1, \dots, A_r` into one
matmul :math:`W \approx \exp(\Omega_1 + \Omega_2)`, :math:`\Omega_1 = \sum_i A_i`,
:math:`\Omega_2 = \tfrac12 \sum_{i<j} [A_i, A_j]`, after training under a commutator budget
:math:`\sum_{i<j} \lVert [A_i, A_j] \rVert \le \tau`, and speculates "20–40 % wall-clock savings on long context
decoding with negligible quality loss when :math:`\tau` is small".  This experiment tests that on a byte-level
causal LM of Shakespeare (:class:`workbench.experiments.GeneratorLM`): each block is causal softmax attention,
:math:`r` generator sublayers :math:`x \mapsto x e^{A_i}` (the linear sublayers to fuse) and a GELU MLP (kept by
default: a block without one is not a language model a user would fuse, and dropping it would inflate the share of
time the sublayers take).  For every budget (none, or :math:`\tau`, a hinge penalty
:math:`\mu \sum_b \max(0, C_b - \tau_t)` with :math:`\tau_t` annealed geometrically from :math:`\kappa\tau` to
:math:`\tau`) one model is trained from the same initial weights on the same windows (paired by seed); then each
block's stack is replaced by

.. math::

    W_N = \exp(\Omega_N) \ (N = 1, \dots, 4;\ \Omega_N = \log(e^{A_1} \cdots e^{A_r}) \text{ to degree } N), \qquad
    W_{\text{exact}} = e^{A_1} \cdots e^{A_r}, \qquad W_0 = I,

and measured against the unfused model: held-out bits per byte and :math:`\Delta\mathrm{bpb}`, the relative error of
the logits :math:`\lVert f_W - f \rVert_F / \lVert f \rVert_F` on held-out windows, the matrix error
:math:`\lVert W_N - W_{\text{exact}} \rVert_F / \lVert W_{\text{exact}} \rVert_F`, each block's commutator sum
:math:`C_b = \sum_{i<j} \lVert [A_i, A_j] \rVert_F` and Moan–Niesen sum :math:`\sum_i \lVert A_i \rVert_2` (the
series converges below :math:`\pi`), and the wall clock of the whole model (long-context forward and one
incremental decoding step) with :math:`r` matmuls, one, or none per block
(:func:`workbench.experiments.fusion_wall_clock`): the speed-up, and the share of time in the sublayers, which
bounds any fusion's saving (Amdahl).

Two facts frame the result.  Every :math:`W_N` and :math:`W_{\text{exact}}` costs the same one matmul at inference,
and for linear sublayers the exact product is exact, so BCH truncation can only tie it; the truncation is the
roadmap's route and is measured, but the exact product is the baseline a user would pick.  And the saving is
bounded by the sublayers' share of the step, which shrinks as the context grows (attention over the cache costs
:math:`2nd` a token, the sublayers :math:`rd^2`); the record carries the FLOP model of that share
(:func:`decode_flop_share`) beside the measured one.

References
----------
.. [1] Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)" and "MagnusBlock fusion on a trained model:
   measure latency/quality trade-off as a function of commutator truncation order" [SEED].
.. [2] P. C. Moan, J. Niesen, "Convergence of the Magnus series", *Found. Comput. Math.* 8 (2008) 291–301.
.. [3] G. M. Amdahl, "Validity of the single processor approach to achieving large scale computing
   capabilities", AFIPS Conf. Proc. 30 (1967) 483–485.
.. [4] A. Karpathy (2023), nanoGPT (the byte-level Shakespeare language model as a benchmark task).
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.experiments.common import (
    VOCAB,
    ByteCorpus,
    RunLog,
    Schedule,
    held_out_bpb,
    jsonable,
    next_byte_loss,
    shakespeare_bytes,
    train,
    training_windows,
)
from workbench.experiments.magnus_fusion._config import (
    FLOAT32_LOGITS_TOLERANCE,
    MAX_BUDGETS,
    MagnusFusionConfig,
    budget_label,
)
from workbench.experiments.magnus_fusion._model import (
    EXACT,
    GeneratorLM,
    budget_schedule,
    commutator_penalty,
    commutator_sum,
    decode_flop_share,
    exponential_maps,
    fused_matrix,
    fusion_wall_clock,
)

__all__ = ["run_magnus_fusion"]


def new_generator_model(config: MagnusFusionConfig) -> GeneratorLM:
    """The model of ``config``, initialised from ``torch.manual_seed(seed)`` (the same for every budget)."""
    torch.manual_seed(config.seed)
    model = GeneratorLM(
        VOCAB, config.d_model, config.n_heads, config.n_layers, config.n_generators, config.mlp, config.init_scale
    )
    return model.to(config.device)


def train_with_budget(
    model: GeneratorLM, corpus: ByteCorpus, config: MagnusFusionConfig, tau: float | None, *, progress: bool
) -> dict[str, list]:
    r"""AdamW on next-byte cross-entropy plus, with a budget :math:`\tau`, the annealed commutator penalty.

    .. math::

        \mathcal L_t = \mathrm{CE}_t + \mu \sum_b \max\bigl(0,\ C_b - \tau_t\bigr), \qquad
        \tau_t = \tau \kappa^{\max(0, 1 - t/(aS))}

    Returns the curve: ``steps``, ``train_loss`` (cross-entropy), ``penalty``, ``held_out_bpb`` (first eighth of
    ``eval_bytes``), ``commutator_sum`` (mean over blocks), ``commutator_max`` and ``tau`` (:math:`\tau_t`).
    """
    data = np.random.default_rng([config.seed, 0])
    schedule = Schedule(
        config.steps, config.lr, config.weight_decay, config.grad_clip, config.log_every, config.warmup, (0.9, 0.95)
    )

    def tau_at(step: int) -> float | None:
        if tau is None:
            return None
        return budget_schedule(step, config.steps, tau, config.anneal_factor, config.anneal_fraction)

    def loss_at(step: int) -> dict[str, torch.Tensor]:
        loss = next_byte_loss(model, training_windows(corpus, data, config.batch, config.context, config.device))
        penalty = torch.zeros((), device=loss.device)
        if tau is not None:
            penalty = commutator_penalty(model.generators(), tau_at(step), config.budget_weight)
        return {"train_loss": loss, "penalty": penalty}

    def evaluate(done: int) -> dict:
        with torch.no_grad():
            sums = commutator_sum(model.generators())
        bpb = held_out_bpb(model, corpus, max(config.context, config.eval_bytes // 8), config.context)["bpb"]
        return {
            "held_out_bpb": bpb,
            "commutator_sum": sums.mean().item(),
            "commutator_max": sums.max().item(),
            "tau": tau_at(done - 1),
        }

    run = train(
        model,
        schedule,
        loss_at,
        evaluate=evaluate,
        label=f"magnus-fusion budget {budget_label(tau)}",
        progress=progress,
    )
    model.eval()
    return run.curve


def _relative(a: torch.Tensor | np.ndarray, b: torch.Tensor | np.ndarray) -> float:
    a, b = (x.double().cpu().numpy() if isinstance(x, torch.Tensor) else x for x in (a, b))
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@torch.no_grad()
def evaluate_fusions(model: GeneratorLM, corpus: ByteCorpus, config: MagnusFusionConfig, label: str) -> dict:
    """The unfused model's bpb, then each fusion's bpb, Δbpb, logits and matrix errors; per-block diagnostics."""
    model.eval()
    generators = [b.generators.detach().double().cpu() for b in model.blocks]
    exact = [fused_matrix(g, EXACT) for g in generators]
    dtype, device = model.embed.weight.dtype, model.embed.weight.device
    windows = torch.from_numpy(
        corpus.windows("held_out", np.arange(config.error_windows) * config.context, config.context)
    ).to(device)
    model.set_maps(exponential_maps(model))
    reference = held_out_bpb(model, corpus, config.eval_bytes, config.context)["bpb"]
    reference_logits = model(windows)
    fusions = []
    for fusion, order in [("identity", 0), *((f"order-{n}", n) for n in config.orders), (EXACT, EXACT)]:
        entry = {"fusion": fusion, "order": order if isinstance(order, int) else None, "diverged": True}
        entry.update(bpb=None, delta_bpb=None, logits_rel_error=None, matrix_rel_error=None, matrix_rel_error_max=None)
        try:
            matrices = [fused_matrix(g, order) for g in generators]
        except ValueError as exc:
            warnings.warn(f"budget {label}, {fusion}: {exc}", RuntimeWarning, stacklevel=2)
            fusions.append(entry)
            continue
        maps = [(torch.from_numpy(w).to(dtype).to(device),) for w in matrices]
        model.set_maps(maps)
        logits = model(windows)
        if not all(bool(torch.isfinite(m[0]).all()) for m in maps) or not bool(torch.isfinite(logits).all()):
            warnings.warn(f"budget {label}, {fusion}: the fused model's logits are not finite", RuntimeWarning, 2)
            fusions.append(entry)
            continue
        bpb = held_out_bpb(model, corpus, config.eval_bytes, config.context)["bpb"]
        errors = [_relative(w, p) for w, p in zip(matrices, exact, strict=True)]
        entry.update(
            diverged=False, bpb=bpb, delta_bpb=bpb - reference, logits_rel_error=_relative(logits, reference_logits),
            matrix_rel_error=float(np.mean(errors)), matrix_rel_error_max=float(np.max(errors)),
        )  # fmt: skip
        fusions.append(entry)
    model.set_maps(None)
    # The decoding step the timing uses must compute the model: one step against the cache vs the full forward.
    probe = windows[:2, : min(config.context, 16)]
    cache = model.new_cache(probe.shape[0], probe.shape[1])
    model.prefill(probe[:, :-1], cache)
    decode_error = _relative(model.step(probe[:, -1], cache, probe.shape[1] - 1), model(probe)[:, -1])
    sums = commutator_sum(torch.stack(generators))
    return {
        "bpb": reference,
        "commutator_sums": sums.tolist(),
        "magnus_sums": [float(sum(np.linalg.norm(a.numpy(), 2) for a in g)) for g in generators],
        "generator_norm": float(np.mean([np.linalg.norm(a.numpy()) for g in generators for a in g])),
        "fusions": fusions,
        "decode_error": decode_error,
    }


def _condition(i: int) -> str:
    return f"budget-{i}"


def run_magnus_fusion(
    config: MagnusFusionConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Train one model per budget, fuse each block's generator sublayers at every order, score and time them.

    Per budget (one condition: :func:`train_with_budget`, then the fusions and the wall clock) the row holds
    the unfused model's held-out ``bpb``; ``commutator_sums`` (:math:`C_b` per block), ``magnus_sums``
    (:math:`\sum_i \lVert A_i \rVert_2` per block; the BCH series converges below :math:`\pi`),
    ``budget_excess`` (:math:`\max_b C_b - \tau`, or ``None``); ``budget_cost_bpb`` (the unfused bpb minus that
    of the same seed's no-budget model, when the run has one: what the budget costs in training); ``fusions``
    (``identity``, ``order-N``, ``exact``: ``bpb``, ``delta_bpb``, ``logits_rel_error``, ``matrix_rel_error``,
    ``diverged``); ``timing`` (:func:`workbench.experiments.fusion_wall_clock`); ``flop``
    (:func:`decode_flop_share` at ``time_context``); ``decode_error``; ``curve``, ``seconds``, ``parameters``.

    Parameters
    ----------
    config : MagnusFusionConfig, optional
        Defaults to the paper preset.
    out : path, optional
        Run directory: ``run.json``, ``config.json``, ``budget-<i>.pt`` and ``.json`` per budget,
        ``results.json``, ``table.md`` and ``fusion.png``.
    progress, force, resume : bool
        A progress bar; reuse a non-empty ``out``; continue an unfinished run (finished budgets read back).

    Returns
    -------
    dict
        JSON-able ``{"experiment": "magnus-fusion", "config", "runs": [row per budget], "checks"}``.

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)" and "MagnusBlock fusion on a trained model" [SEED].

    Examples
    --------
    >>> cfg = MagnusFusionConfig.preset("quick", steps=2, log_every=1, eval_bytes=64, error_windows=1, budgets=(0.1,),
    ...                                 orders=(1,), time_context=8, time_repeats=1)
    >>> result = run_magnus_fusion(cfg, progress=False)
    >>> [f["fusion"] for f in result["runs"][0]["fusions"]], result["checks"]["all"]
    (['identity', 'order-1', 'exact'], True)
    """
    if config is None:
        config = MagnusFusionConfig.preset("paper")
    if not isinstance(config, MagnusFusionConfig):
        raise TypeError(f"config must be a MagnusFusionConfig, got {type(config).__name__}")
    corpus = shakespeare_bytes(config.held_out_every)
    if config.error_windows * config.context >= len(corpus.held_out):
        raise ValueError(f"error_windows × context must fit the held-out text ({len(corpus.held_out)} bytes)")
    conditions = [_condition(i) for i in range(len(config.budgets))]
    artefacts = {"results.json", "table.md", "fusion.png"}
    artefacts |= {f"{_condition(i)}{s}" for i in range(MAX_BUDGETS) for s in (".pt", ".json")}
    log = RunLog.open(
        out, experiment="magnus-fusion", config=dataclasses.asdict(config), conditions=conditions, selection={},
        artefacts=frozenset(artefacts), force=force, resume=resume,
    )  # fmt: skip
    with log:
        rows = []
        for condition, tau in zip(conditions, config.budgets, strict=True):
            row = log.finished(condition)
            if row is None:
                model = new_generator_model(config)
                start = time.perf_counter()
                curve = train_with_budget(model, corpus, config, tau, progress=progress)
                seconds = time.perf_counter() - start
                label = budget_label(tau)
                row = {"budget": label, "tau": tau, **evaluate_fusions(model, corpus, config, label)}
                row["budget_excess"] = None if tau is None else max(row["commutator_sums"]) - tau
                row["timing"] = fusion_wall_clock(model, config.time_context, config.time_batch, config.time_repeats)
                row["flop"] = decode_flop_share(
                    config.d_model, config.n_layers, config.n_generators, config.mlp, VOCAB, config.time_context
                )
                row.update(parameters=sum(p.numel() for p in model.parameters()), seconds=seconds, curve=curve)
                row = jsonable(row)
                log.keep(condition, row, model.state_dict())
            rows.append(row)
        free = next((r for r in rows if r["tau"] is None), None)  # the paired no-budget model of this seed
        rows = [{**r, "budget_cost_bpb": None if free is None else r["bpb"] - free["bpb"]} for r in rows]
        result = jsonable(
            {"experiment": "magnus-fusion", "config": dataclasses.asdict(config), "runs": rows, "checks": _checks(rows)}
        )
        if log.path is not None:
            from workbench.experiments.magnus_fusion._report import magnus_fusion_table, save_figure

            log.write_results(result, magnus_fusion_table(result))
            save_figure(result, log.path)
    return result


def _checks(rows: list[dict]) -> dict[str, Any]:
    def exact_error(row: dict) -> float:
        entry = next(f for f in row["fusions"] if f["fusion"] == EXACT)
        return math.inf if entry["diverged"] else entry["logits_rel_error"]

    checks = {
        # The exact product is the same linear map as the r factors: only float32 rounding may separate them.
        "exact_fusion_matches_unfused": all(exact_error(r) < FLOAT32_LOGITS_TOLERANCE for r in rows),
        # The timed decoding step computes what the full forward computes at that position.
        "decode_matches_forward": all(r["decode_error"] < FLOAT32_LOGITS_TOLERANCE for r in rows),
        "bpb_finite": all(math.isfinite(r["bpb"]) and r["bpb"] > 0 for r in rows),
        "timings_positive": all(
            r["timing"][w][v] > 0 for r in rows for w in ("forward", "decode") for v in ("unfused", "fused", "skipped")
        ),
    }
    checks["all"] = all(checks.values())
    return checks
