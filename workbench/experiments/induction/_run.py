r"""Induction heads under ATTN, DMTN and DMAP scores: the phase transition at workbench scale.

Small causal transformers (two layers, attention-only or with an MLP sublayer) learn next-token prediction on
repeated random tokens :math:`t = (s, s)`, :math:`s \in \{0,\dots,V-1\}^T` i.i.d. uniform.  The first half is
unpredictable (loss :math:`\log V` at best); the second half is predictable by *induction* — find the earlier
occurrence of the current token and copy its successor.  A two-layer model learns this through a previous-token
head in layer 0 and an induction head in layer 1; the repeated-half loss sits on the :math:`\log V` plateau and
then falls abruptly, while the induction head's attention entropy collapses (Olsson et al. 2022; ISA ML01
calls it the :math:`\beta^*` snap).  The experiment trains the same model, data and budget under three score
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
ATTN 0.8081 → DMTN 0.5735 → ATTN 0.8334 → DMTN 0.4676; book/reference.md §A.12 (§11 numbers), §A.10
(entropy, :math:`e^{\bar H}`), §A.7 [CODE] (the operators' logits); ISA ML01 (entropy drop at the
induction snap); Olsson et al. (2022), "In-context learning and induction heads".
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from workbench.attention import (
    induction_score,
    mean_entropy,
    previous_token_score,
    repeated_random_tokens,
    uniform_entropy,
)
from workbench.experiments.common import RunLog, Schedule, Training, jsonable, train
from workbench.experiments.induction._config import (
    ARCHITECTURES,
    INDUCTION_OPERATORS,
    InductionConfig,
    variable_period_tokens,
)
from workbench.experiments.induction._model import InductionTransformer
from workbench.experiments.induction._phase_transition import detect_phase_transition
from workbench.experiments.induction._report import induction_table, save_figures
from workbench.validation import check_choice

__all__ = [
    "attention_scores",
    "repeat_losses",
    "run_grid",
    "run_induction",
    "shifted_period_accuracy",
    "train_on_repeats",
]

#: Every file an induction run can write into its run directory (``force`` removes these, and only these).
ARTEFACTS = frozenset(
    {"results.json", "table.md", "loss_curves.png", "induction_heads.png"}
    | {f"{op}-{arch}{suffix}" for op in INDUCTION_OPERATORS for arch in ARCHITECTURES for suffix in (".pt", ".json")}
)


# ---- training -----------------------------------------------------------------------------------------


def repeat_losses(logits: torch.Tensor, tokens: torch.Tensor, half_length: int) -> dict[str, torch.Tensor]:
    r"""Next-token losses of repeated tokens :math:`t = (s, s)` by region: position :math:`i` predicts :math:`t_{i+1}`.

    ``loss`` over all :math:`2T - 1` predictions, ``repeat_loss`` over :math:`T \le i \le 2T-2` (predictable by
    induction: :math:`t_{i+1} = t_{i+1-T}`), ``first_half_loss`` over :math:`0 \le i \le T-1` (floor
    :math:`\log V`), and ``induction_accuracy``, top-1 on the repeated half.

    Examples
    --------
    >>> tokens = torch.tensor([[0, 1, 0, 1]])
    >>> logits = 10.0 * F.one_hot(torch.tensor([[1, 0, 1, 0]]), 2).float()  # predicts every next token
    >>> {k: round(float(v), 4) for k, v in repeat_losses(logits, tokens, 2).items()}
    {'loss': 0.0, 'repeat_loss': 0.0, 'first_half_loss': 0.0, 'induction_accuracy': 1.0}
    """
    T = half_length
    per_token = F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")  # [B, 2T-1]
    return {
        "loss": per_token.mean(),
        "repeat_loss": per_token[:, T:].mean(),
        "first_half_loss": per_token[:, :T].mean(),
        "induction_accuracy": (logits[:, T:-1].argmax(-1) == tokens[:, T + 1 :]).double().mean(),
    }


def attention_scores(attention: list[np.ndarray], tokens: np.ndarray) -> dict[str, np.ndarray]:
    """Per layer × head, averaged over the batch: mean row entropy, previous-token and induction scores.

    ``attention`` holds one ``[B, H, n, n]`` array per layer (float32: the diagnostics' tolerance is
    dtype-aware); the induction score reads the repeat of ``tokens[0]``.  Each entry is ``[L, H]``.
    """
    return {
        "entropy": np.stack([np.asarray(mean_entropy(A, axis=0)) for A in attention]),
        "previous_token_score": np.stack([np.asarray(previous_token_score(A)).mean(axis=0) for A in attention]),
        "induction_score": np.stack([np.asarray(induction_score(A, tokens[0])).mean(axis=0) for A in attention]),
    }


def _evaluate(model: InductionTransformer, tokens: torch.Tensor, tokens_np: np.ndarray, T: int) -> dict[str, Any]:
    model.eval()
    with torch.no_grad():
        logits, operators = model(tokens, return_operators=True)
        losses = {k: float(v) for k, v in repeat_losses(logits, tokens, T).items()}
    model.train()
    attention = [P.detach().cpu().numpy() for P in operators]  # [B, H, n, n], float32
    return {**losses, **attention_scores(attention, tokens_np), "operators": operators}


def train_on_repeats(model, config, min_period: int, evaluate, *, label: str, progress: bool) -> Training:
    """AdamW on fresh repeated tokens of periods in ``[min_period, T]``, evaluated on one fixed batch of period T.

    The training stream is seeded ``[config.seed, 0]`` and the eval batch ``[config.seed, 1]``
    (``config.eval_batch`` sequences of :func:`workbench.attention.repeated_random_tokens`), the same for every
    operator and architecture; ``evaluate(eval_tokens, eval_np)`` runs at step 0, every ``config.log_every`` steps
    and after the last (:func:`workbench.experiments.common.train`, ``logged="last"``).  ``config`` is an
    :class:`InductionConfig` or any config with its task and schedule fields.
    """
    T = config.half_length
    data = np.random.default_rng([config.seed, 0])
    eval_np = repeated_random_tokens(np.random.default_rng([config.seed, 1]), config.vocab_size, T, config.eval_batch)
    eval_tokens = torch.from_numpy(eval_np)

    def loss_at(step: int) -> torch.Tensor:
        tokens = torch.from_numpy(variable_period_tokens(data, config.vocab_size, T, config.batch, min_period))
        return repeat_losses(model(tokens), tokens, T)["loss"]

    return train(
        model,
        Schedule(config.steps, config.lr, config.weight_decay, config.grad_clip, config.log_every),
        loss_at,
        evaluate=lambda done: evaluate(eval_tokens, eval_np),
        label=label,
        progress=progress,
        logged="last",
        evaluate_first=True,
    )


def _train_one(
    config: InductionConfig, operator: str, architecture: str, *, progress: bool
) -> tuple[InductionTransformer, dict[str, Any]]:
    n, T = config.sequence_length, config.half_length
    torch.manual_seed(config.seed)
    model = InductionTransformer(
        config.vocab_size, n, config.d_model, config.n_heads, config.n_layers, operator, architecture
    )
    final: dict[str, Any] = {}

    def evaluate(eval_tokens: torch.Tensor, eval_np: np.ndarray) -> dict[str, Any]:
        final.update(_evaluate(model, eval_tokens, eval_np, T))
        return {key: final[key] for key in _CURVES}

    start = time.perf_counter()
    run = train_on_repeats(
        model, config, config.shortest_period, evaluate, label=f"induction {operator}/{architecture}", progress=progress
    )
    seconds = time.perf_counter() - start
    curves = {key: run.curve[key] for key in ("steps", "train_loss", *_CURVES)}
    return model, {"curves": curves, "final": dict(final), "seconds": seconds}


#: The evaluations logged in an induction run's curves (beside ``steps`` and ``train_loss``).
_CURVES = (
    "repeat_loss",
    "first_half_loss",
    "induction_accuracy",
    "entropy",
    "previous_token_score",
    "induction_score",
)


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
    force: bool = False,
    resume: bool = False,
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
        Run directory (:class:`workbench.experiments.RunLog`): ``run.json`` and ``config.json`` at the start,
        ``<operator>-<architecture>.pt`` (state dict) and ``<operator>-<architecture>.json`` (its run record) as
        each run finishes, ``results.json``, ``table.md``, ``loss_curves.png`` and ``induction_heads.png`` at
        the end.  An ``out`` that already holds files is refused unless ``force`` or ``resume``.
    progress : bool
        Show a tqdm bar per run.
    force : bool
        Reuse a non-empty ``out``: the files an induction run writes are removed first, other files are kept.
    resume : bool
        Continue the unfinished run in ``out`` (same ``config``, ``operators`` and ``architectures``), reading
        back the records of the finished runs.  Each run is seeded on its own (``config.seed``), so the records
        equal those of an uninterrupted run, except the wall-clock ``seconds`` and ``seconds_per_step``.

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
    Attention Geometry §11, Tables 2–3 [SEED]; book/reference.md §A.10–A.12; ISA ML01; Olsson et al.
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

    def fit(operator: str, arch: str) -> tuple[dict, dict]:
        model, trained = _train_one(config, operator, arch, progress=progress)
        return _run_record(config, model, trained, operator, arch), model.state_dict()

    return run_grid(
        "induction",
        config,
        fit,
        operators=(operators, INDUCTION_OPERATORS),
        architectures=architectures,
        report=(induction_table, save_figures),
        artefacts=ARTEFACTS,
        out=out,
        force=force,
        resume=resume,
    )


def run_grid(experiment: str, config, fit, *, operators, architectures, report, artefacts, out, force, resume) -> dict:
    """Train one model per (operator, architecture), architecture outermost, in one resumable run directory.

    ``operators`` is the pair (selection, the names allowed), ``architectures`` a selection of
    :data:`ARCHITECTURES`.  ``fit(operator, architecture)`` returns the condition's record and state dict (kept
    as ``<operator>-<architecture>.json`` / ``.pt``; a finished condition is read back instead).  Every record's
    ``checks`` are reduced over the runs (``None`` where no run has the fact); ``report = (table, figures)``
    writes ``table.md`` and the figures beside ``results.json``.

    Returns
    -------
    dict
        JSON-able ``{"experiment", "config", "runs", "checks"}`` (and ``out`` with a run directory).
    """
    operators = _selection("operators", *operators)
    architectures = _selection("architectures", architectures, ARCHITECTURES)
    plan = [(operator, arch) for arch in architectures for operator in operators]
    log = RunLog.open(
        out,
        experiment=experiment,
        config=dataclasses.asdict(config),
        conditions=[f"{operator}-{arch}" for operator, arch in plan],
        selection={"operators": operators, "architectures": architectures},
        artefacts=artefacts,
        force=force,
        resume=resume,
    )
    with log:
        runs = []
        for operator, arch in plan:
            name = f"{operator}-{arch}"
            record = log.finished(name)
            if record is None:
                record, state = fit(operator, arch)
                log.keep(name, record, state)
            runs.append(record)
        checks = _aggregate_checks(runs)
        result = jsonable(
            {"experiment": experiment, "config": dataclasses.asdict(config), "runs": runs, "checks": checks}
        )
        if log.path is not None:
            table, figures = report
            log.write_results(result, table(result))
            figures(result, log.path)
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
    """Each fact of the runs' ``checks`` over all runs (``None`` where no run has it), and ``all``."""
    checks: dict[str, Any] = {}
    for key in (key for key in runs[0]["checks"] if key != "all"):
        values = [r["checks"][key] for r in runs if r["checks"][key] is not None]
        checks[key] = all(values) if values else None
    checks["all"] = all(v for v in checks.values() if v is not None)
    return checks
