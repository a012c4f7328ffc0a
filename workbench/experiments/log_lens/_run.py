r"""Log-lens dashboards on a trained induction model: commutator maps of the heads beside their known circuits.

The Lie-Exponential Roadmap proposes to read a network's learned linear maps :math:`W_\ell` through their
generators :math:`S_\ell = \log W_\ell`, to track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert` and the spectrum of
:math:`S_\ell` during training, and to "use spikes in commutator norms to drive targeted pruning/fusion or
curriculum on depth"; its minimal experiment is "log-lens dashboards correlating commutator heatmaps with classic
interpretability circuits".  This experiment runs it on the one circuit the workbench trains and can name: the
previous-token head → induction head pair of a two-layer transformer on repeated random tokens of varying
period (:func:`~workbench.experiments.variable_period_tokens`, so that no fixed look-back predicts the repeat).
Two score geometries are read, ATTN and DMTN, the two whose logits are a bilinear form :math:`x_iW_{QK}x_j^\top`
(which the composition scores presume): the induction experiment's varying-period runs found that ATTN learns to
copy by content without any single head scoring high at the induction offset (best 0.03 after 10,000 steps), while
DMTN forms a clean induction head (0.81); with both, the pair is read where the circuit is diffuse and where it is
clean.

**What the lens reads** [RECON].  A head's OV circuit :math:`W_{OV}^h = F W_V^h W_O^h` (LayerNorm's linear part
:math:`F = C\operatorname{diag}\gamma` folded in; :func:`head_circuits`) has rank :math:`d_h < D`, so it has no
logarithm.  The lens therefore reads the head's residual update map

.. math::

    M_h = I + W_{OV}^h, \qquad S_h = \log M_h \quad (\texttt{principal\_log}),

the map :math:`x \mapsto x + x W_{OV}^h` of a token, in LayerNorm-normalised (unit-RMS) coordinates, that attends
only to itself; it is invertible unless :math:`W_{OV}^h` has the eigenvalue :math:`-1`, and has a real principal
logarithm unless it has an eigenvalue on :math:`(-\infty, -1]`, which :func:`~workbench.lens.log_lens` reports
per head instead of raising.  The residual stream's own scale :math:`\sigma` (its RMS at the layer's input) is
not in :math:`M_h`; it is recorded beside it (``residual_rms``), because the real update of a token is
:math:`1/\sigma` times larger relative to its residual.  Per layer the lens also reads
:math:`M_\ell = I + \sum_h W_{OV}^{\ell h}`, the map the roadmap's :math:`\lVert[S_\ell, S_{\ell+1}]\rVert` is about.

**The dashboard** (every ``log_every`` steps): the commutator map :math:`\lVert[S_a, S_b]\rVert_F` over all heads
across depth and its scale-free form :math:`\lVert[S_a, S_b]\rVert_F / (\lVert S_a\rVert_F\lVert S_b\rVert_F)`
(:func:`~workbench.lens.commutator_norms`), each head's log-norm, spectral abscissa, most negative log-gain and
top frequency; and the known circuits: each head's previous-token and induction scores
(:mod:`workbench.attention`) and the K-, Q- and V-composition of every (layer-0, layer-1) head pair
(:func:`composition_scores`).  For small :math:`W_{OV}`, :math:`[S_a, S_b] \approx W_{OV}^aW_{OV}^b -
W_{OV}^bW_{OV}^a` holds the V-composition product, so the commutator is expected to track V- more than
K-composition; the experiment measures both.

**Measured** (every number from the run; the correlation may be absent, and then the table says so):

* the Spearman :math:`\rho` over the :math:`H^2` cross-layer head pairs between commutator norm and K- (Q-, V-)
  composition at the end of training, with the p-value of relabelling the heads (:func:`alignment_test`), and
  :math:`\rho` at every snapshot;
* the previous-token head (largest previous-token score in layer 0) and induction head (largest induction score in
  layer 1) at the end, and the rank of their pair among the cross-layer pairs by commutator norm, beside its rank
  by K-composition (Elhage et al.'s predicted signature of the circuit: the control);
* the phase transition (:func:`~workbench.experiments.detect_phase_transition` on the repeated-half loss) and,
  for the pair's commutator and the layer commutator :math:`\lVert[S_0, S_1]\rVert_F`, where each changes fastest
  and how much of its change falls inside the transition window (:func:`change_statistics`): whether the
  "spike" the roadmap expects appears, and when relative to the transition.

References
----------
Lie-Exponential Roadmap, "Log lens", "Log-Lens Diagnostics" (periodically compute :math:`S_\ell = \log W_\ell`,
track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert` and the spectrum; spikes drive pruning, fusion or curriculum) and
the minimal experiment "log-lens dashboards correlating commutator heatmaps with classic interpretability
circuits" [SEED]; N. Elhage et al., "A Mathematical Framework for Transformer Circuits" (2021) (OV/QK circuits,
Q-/K-/V-composition, the previous-token → induction circuit); C. Olsson et al., "In-context learning and induction
heads" (2022) (the phase transition); N. J. Higham, *Functions of Matrices*, SIAM 2008, ch. 11 (the principal log).
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg
import torch

from workbench.attention import induction_score, previous_token_score
from workbench.experiments.common import jsonable
from workbench.experiments.induction import (
    ARCHITECTURES,
    InductionTransformer,
    attention_scores,
    detect_phase_transition,
    repeat_losses,
    run_grid,
    shifted_period_accuracy,
    train_on_repeats,
)
from workbench.experiments.log_lens._circuits import (
    alignment_test,
    change_statistics,
    composition_scores,
    head_circuits,
    rank_correlation,
)
from workbench.experiments.log_lens._config import LOG_LENS_OPERATORS, LogLensConfig
from workbench.experiments.log_lens._report import log_lens_table, save_dashboards
from workbench.lens import commutator_norms, generator_spectrum, log_lens

__all__ = ["lens_of_maps", "run_log_lens", "transition_statistics"]

#: Every file a log-lens run can write into its run directory (``force`` removes these, and only these).
ARTEFACTS = frozenset(
    {"results.json", "table.md"}
    | {f"{op}-{arch}{suffix}" for op in LOG_LENS_OPERATORS for arch in ARCHITECTURES for suffix in (".pt", ".json")}
    | {f"dashboard-{op}-{arch}.png" for op in LOG_LENS_OPERATORS for arch in ARCHITECTURES}
)


# ---- one snapshot: the eval batch, the circuits, the lens ------------------------------------------------------


def _residual_rms(model: InductionTransformer, tokens: torch.Tensor) -> tuple[list[float], Any]:
    """The eval forward pass, recording each layer's residual RMS σ (its LayerNorm's scale) on the way."""
    scales: list[float] = []

    def record(module, inputs):
        x = inputs[0]
        scales.append(float(torch.sqrt(x.var(-1, unbiased=False) + module.eps).mean()))

    hooks = [block.norm_attention.register_forward_pre_hook(record) for block in model.blocks]
    try:
        model.eval()
        with torch.no_grad():
            output = model(tokens, return_operators=True)
    finally:
        model.train()
        for hook in hooks:
            hook.remove()
    return scales, output


def lens_of_maps(maps: list[np.ndarray]) -> dict[str, Any]:
    """log_lens of the maps, the scale-free commutator map on those with a log, and per-map spectra."""
    report = log_lens(maps)
    count = len(maps)
    normalised = np.full((count, count), np.nan)
    have = [i for i, entry in enumerate(report.entries) if entry.log is not None]
    if have:
        normalised[np.ix_(have, have)] = commutator_norms([report.logs[i] for i in have], normalize=True)
    min_gain = [
        float(generator_spectrum(entry.log).log_gains[-1]) if entry.log is not None else math.nan
        for entry in report.entries
    ]
    residual = [
        float(np.linalg.norm(scipy.linalg.expm(entry.log) - M) / np.linalg.norm(M)) if entry.log is not None else 0.0
        for entry, M in zip(report.entries, maps, strict=True)
    ]
    return {
        "commutator": report.commutators,
        "commutator_normalized": normalised,
        "log_norm": [entry.log_norm for entry in report.entries],
        "spectral_abscissa": [entry.spectral_abscissa for entry in report.entries],
        "min_log_gain": min_gain,
        "max_frequency": [entry.max_frequency for entry in report.entries],
        "kind": [entry.kind for entry in report.entries],
        "reason": [entry.reason for entry in report.entries],
        "expm_residual": max(residual),
    }


def _snapshot(model: InductionTransformer, tokens: torch.Tensor, tokens_np: np.ndarray, T: int) -> dict[str, Any]:
    scales, (logits, operators) = _residual_rms(model, tokens)
    losses = {k: float(v) for k, v in repeat_losses(logits, tokens, T).items()}
    attention = [P.detach().cpu().numpy() for P in operators]  # L × [B, H, n, n], float32
    W_OV, W_QK = head_circuits(model)
    L, H, D = W_OV.shape[0], W_OV.shape[1], W_OV.shape[-1]
    eye = np.eye(D)
    heads = lens_of_maps([eye + W for W in W_OV.reshape(L * H, D, D)])
    layers = lens_of_maps([eye + W_OV[layer].sum(axis=0) for layer in range(L)])
    return {
        **losses,
        **attention_scores(attention, tokens_np),
        "causal": all(bool(np.all(np.triu(A, 1) == 0)) for A in attention),
        "row_stochastic": all(bool(np.allclose(A.sum(-1), 1.0, atol=1e-5)) for A in attention),
        "residual_rms": scales,
        "ov_norm": np.linalg.norm(W_OV, ord=2, axis=(-2, -1)),
        "heads": heads,
        "layer_commutator": float(layers["commutator"][0, 1]),
        "layer_commutator_normalized": float(layers["commutator_normalized"][0, 1]),
        "layer_log_norm": layers["log_norm"],
        "composition": composition_scores(W_OV[0], W_QK[1], W_OV[1]),
    }


# ---- training with snapshots -------------------------------------------------------------------------------


def _train(
    config: LogLensConfig, operator: str, architecture: str, *, progress: bool
) -> tuple[InductionTransformer, dict]:
    T = config.half_length
    torch.manual_seed(config.seed)
    model = InductionTransformer(
        config.vocab_size, 2 * T, config.d_model, config.n_heads, 2, operator, architecture
    )  # fmt: skip
    snapshots: list[dict] = []

    def snap(eval_tokens: torch.Tensor, eval_np: np.ndarray) -> dict:
        snapshots.append(_snapshot(model, eval_tokens, eval_np, T))
        return {"repeat_loss": snapshots[-1]["repeat_loss"]}

    start = time.perf_counter()
    run = train_on_repeats(
        model, config, config.min_period, snap, label=f"log-lens {operator}/{architecture}", progress=progress
    )
    steps, train_loss = run.curve["steps"], run.curve["train_loss"]
    return model, {
        "steps": steps,
        "train_loss": train_loss,
        "snapshots": snapshots,
        "seconds": time.perf_counter() - start,
    }


# ---- the record of one trained model ---------------------------------------------------------------------------


def _cross(snapshot: dict, key: str, H: int) -> np.ndarray:
    """The (layer-0 head, layer-1 head) block of a head-by-head lens map."""
    return np.asarray(snapshot["heads"][key])[:H, H:]


def _rho(a: np.ndarray, b: np.ndarray) -> float:
    mask = np.isfinite(a)
    try:
        return rank_correlation(a[mask], b[mask])
    except ValueError:  # constant or too few measured pairs: undefined at this snapshot
        return math.nan


def _rank(values: np.ndarray, index) -> int | None:
    """1 + the number of finite entries larger than ``values[index]`` (1 = largest); None if it is not finite."""
    value = values[index]
    return None if not np.isfinite(value) else int(1 + np.sum(values[np.isfinite(values)] > value))


def _alignment(A: np.ndarray, B: np.ndarray, seed: int) -> dict:
    try:
        return alignment_test(A, B, seed=seed)
    except ValueError as error:
        return {"rho": None, "p_value": None, "undefined": str(error)}


def transition_statistics(steps, series, transition, smooth: int) -> dict:
    """Change statistics of a lens curve around the transition, over the snapshots where the curve is defined."""
    values = np.asarray(series, dtype=np.float64)
    defined = np.isfinite(values)
    if defined.sum() < 3:
        return {"undefined": f"{int((~defined).sum())} of {values.size} snapshots without a logarithm"}
    tau = np.asarray(steps, dtype=np.float64)[defined]
    window = tuple(transition["window"]) if transition and transition["detected"] else None
    if window is not None and not (tau[0] <= window[0] and window[1] <= tau[-1]):
        window = None  # the curve is undefined at the window's ends: no concentration to compare
    width = min(smooth, int(defined.sum()) - 1 + int(defined.sum()) % 2)
    stats = change_statistics(tau, values[defined], window, smooth=width)
    stats["lag"] = stats["spike_step"] - transition["step"] if transition and transition["detected"] else None
    stats["snapshots_without_log"] = int((~defined).sum())
    return stats


def _record(config: LogLensConfig, model: InductionTransformer, trained: dict, architecture: str) -> dict:
    snaps, steps, H = trained["snapshots"], trained["steps"], config.n_heads
    final = snaps[-1]
    stack = {key: np.array([s[key] for s in snaps]) for key in ("previous_token_score", "induction_score", "entropy")}
    transition = detect_phase_transition(
        steps,
        [s["repeat_loss"] for s in snaps],
        vocab_size=config.vocab_size,
        induction_scores=stack["induction_score"],
        entropies=stack["entropy"],
        smooth=min(config.smooth, len(steps) - 1 + len(steps) % 2),
        plateau_fraction=config.plateau_fraction,
        drop_fraction=config.drop_fraction,
        window_fraction=config.window_fraction,
    )
    transition = dataclasses.asdict(transition)
    prev = int(np.argmax(final["previous_token_score"][0]))
    ind = int(np.argmax(final["induction_score"][1]))
    curves = {
        "steps": steps,
        "train_loss": trained["train_loss"],
        **{key: [s[key] for s in snaps] for key in ("repeat_loss", "first_half_loss", "induction_accuracy")},
        **{key: value for key, value in stack.items()},
        "residual_rms": [s["residual_rms"] for s in snaps],
        "ov_norm": [s["ov_norm"] for s in snaps],
        "pair_commutator": [_cross(s, "commutator", H)[prev, ind] for s in snaps],
        "pair_commutator_normalized": [_cross(s, "commutator_normalized", H)[prev, ind] for s in snaps],
        "pair_k_composition": [s["composition"]["K"][prev, ind] for s in snaps],
        "layer_commutator": [s["layer_commutator"] for s in snaps],
        "layer_commutator_normalized": [s["layer_commutator_normalized"] for s in snaps],
        **{
            f"rho_{kind}{suffix}": [_rho(_cross(s, key, H), s["composition"][kind]) for s in snaps]
            for kind in ("K", "Q", "V")
            for key, suffix in (("commutator", ""), ("commutator_normalized", "_normalized"))
        },
        "heads_without_log": [sum(r is not None for r in s["heads"]["reason"]) for s in snaps],
    }
    lens_maps = (
        "commutator",
        "commutator_normalized",
        "log_norm",
        "spectral_abscissa",
        "min_log_gain",
        "max_frequency",
    )
    history = {key: [s["heads"][key] for s in snaps] for key in lens_maps}
    history.update({kind: [s["composition"][kind] for s in snaps] for kind in ("K", "Q", "V")})
    C, Cn = _cross(final, "commutator", H), _cross(final, "commutator_normalized", H)
    alignment = {
        f"{kind}{suffix}": _alignment(A, final["composition"][kind], config.seed)
        for kind in ("K", "Q", "V")
        for suffix, A in (("", C), ("_normalized", Cn))
    }
    all_pairs = np.asarray(final["heads"]["commutator"])[np.triu_indices(2 * H, 1)]
    pair = {
        "previous_token_head": [0, prev],
        "induction_head": [1, ind],
        "previous_token_score": float(final["previous_token_score"][0, prev]),
        "induction_score": float(final["induction_score"][1, ind]),
        "commutator": float(C[prev, ind]),
        "commutator_rank": _rank(C, (prev, ind)),
        "commutator_normalized_rank": _rank(Cn, (prev, ind)),
        "commutator_rank_all_pairs": (
            int(1 + np.sum(all_pairs[np.isfinite(all_pairs)] > C[prev, ind])) if np.isfinite(C[prev, ind]) else None
        ),
        "k_composition": float(final["composition"]["K"][prev, ind]),
        "k_composition_rank": _rank(final["composition"]["K"], (prev, ind)),
        "cross_layer_pairs": H * H,
        "all_pairs": len(all_pairs),
    }
    n = 2 * config.half_length
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]  # a head that attends uniformly (causal)
    pair["chance_previous_token_score"] = float(previous_token_score(uniform))
    pair["chance_induction_score"] = float(induction_score(uniform, np.tile(np.arange(config.half_length), 2)))
    spikes = {
        name: transition_statistics(steps, curves[name], transition, config.smooth)
        for name in ("pair_commutator", "pair_commutator_normalized", "layer_commutator", "layer_commutator_normalized")
    }
    near = int(np.argmin(np.abs(np.asarray(steps) - transition["step"]))) if transition["detected"] else None
    checks = _checks(snaps)
    return {
        "operator": model.operator,
        "architecture": architecture,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "final_repeat_loss": final["repeat_loss"],
        "final_first_half_loss": final["first_half_loss"],
        "induction_accuracy": final["induction_accuracy"],
        "shifted_period_accuracy": shifted_period_accuracy(model, config.induction_config()),
        "transition": transition,
        "pair": pair,
        "alignment": alignment,
        "spikes": spikes,
        "dashboard": _dashboard(final, steps[-1]),
        "transition_dashboard": _dashboard(snaps[near], steps[near]) if near is not None else None,
        "seconds": trained["seconds"],
        "seconds_per_step": trained["seconds"] / config.steps,
        "checks": checks,
        "curves": curves,
        "history": history,
    }


def _dashboard(snapshot: dict, step: int) -> dict:
    heads = snapshot["heads"]
    return {
        "step": step,
        **{key: heads[key] for key in ("commutator", "commutator_normalized", "log_norm", "spectral_abscissa")},
        **{key: heads[key] for key in ("min_log_gain", "max_frequency", "kind", "reason")},
        "previous_token_score": snapshot["previous_token_score"],
        "induction_score": snapshot["induction_score"],
        "composition": snapshot["composition"],
        "ov_norm": snapshot["ov_norm"],
        "residual_rms": snapshot["residual_rms"],
        "layer_commutator": snapshot["layer_commutator"],
        "layer_commutator_normalized": snapshot["layer_commutator_normalized"],
    }


def _checks(snaps: list[dict]) -> dict[str, Any]:
    def commutator_ok(H: np.ndarray, bound: float) -> bool:
        finite = np.isfinite(H)
        symmetric = bool(np.array_equal(finite, finite.T) and np.all(H[finite] == H.T[finite]))
        diagonal = bool(np.all(np.diag(H)[np.isfinite(np.diag(H))] == 0))
        return symmetric and diagonal and bool(np.all((H[finite] >= 0) & (H[finite] <= bound)))

    checks = {
        "commutators_symmetric_nonnegative": all(
            commutator_ok(np.asarray(s["heads"]["commutator"]), np.inf) for s in snaps
        ),
        # Böttcher–Wenzel: ‖[X, Y]‖_F ≤ √2 ‖X‖_F ‖Y‖_F (a hair of rounding allowed)
        "normalized_within_bottcher_wenzel": all(
            commutator_ok(np.asarray(s["heads"]["commutator_normalized"]), math.sqrt(2) * (1 + 1e-12)) for s in snaps
        ),
        "compositions_in_unit_interval": all(
            bool(np.all((s["composition"][k] >= 0) & (s["composition"][k] <= 1 + 1e-12))) for s in snaps for k in "KQV"
        ),
        # every logarithm exponentiates back to its map (relative Frobenius residual)
        "logs_exponentiate_back": all(s["heads"]["expm_residual"] <= 1e-8 for s in snaps),
        "scores_in_unit_interval": all(
            bool(np.all((s[k] >= -1e-9) & (s[k] <= 1 + 1e-9)))
            for s in snaps
            for k in ("previous_token_score", "induction_score")
        ),
        "causal": all(s["causal"] for s in snaps),
        "row_stochastic": all(s["row_stochastic"] for s in snaps),
    }
    checks["all"] = all(checks.values())
    return checks


# ---- the experiment -----------------------------------------------------------------------------------------


def run_log_lens(
    config: LogLensConfig | None = None,
    *,
    operators=LOG_LENS_OPERATORS,
    architectures=("attn-only",),
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Train the two-layer induction models with snapshots and read every snapshot through the log lens.

    For each operator and architecture: train on varying-period repeated tokens (:class:`LogLensConfig`), and every
    ``log_every`` steps record the dashboard (module docstring): per head :math:`S_h = \log(I + W_{OV}^h)`, the
    commutator map :math:`\lVert[S_a, S_b]\rVert_F` (raw and scale-free), spectra, previous-token and induction
    scores, K-/Q-/V-composition, the layer maps' :math:`\lVert[S_0, S_1]\rVert_F`.  Then the measurements:
    Spearman :math:`\rho` (commutator vs composition over the cross-layer pairs) with its relabelling p-value, the
    rank of the (previous-token head, induction head) pair, the phase transition and the change statistics of the
    pair's and the layers' commutators around it.

    Parameters
    ----------
    config : LogLensConfig, optional
        Default ``LogLensConfig.preset("paper")``.
    operators : sequence of {'ATTN', 'DMTN'}
        Score geometries (:data:`LOG_LENS_OPERATORS`, both by default).
    architectures : sequence of {'attn-only', 'mlp'}
        Block types; default attention-only.  One model, one RunLog condition ``<operator>-<architecture>``, per
        pair; each starts from the seed's weights and reads the seed's batches (as in the induction experiment).
    out : path, optional
        Run directory: ``run.json``, ``config.json``, ``<operator>-<arch>.pt`` / ``.json`` per model,
        ``results.json``, ``table.md`` and ``dashboard-<operator>-<arch>.png``.
    progress, force, resume : bool
        A progress bar; reuse a non-empty ``out`` (its log-lens files are removed first); continue an
        unfinished run (finished models are read back; the rest is trained again from its seed).

    Returns
    -------
    dict
        JSON-able ``{"experiment": "log-lens", "config", "runs": [...], "checks"}``; each run holds the final
        losses and probe accuracy, ``transition``, ``pair`` (the circuit's heads, their scores beside a uniform
        causal head's, and the pair's ranks), ``alignment``
        (``rho``/``p_value`` per composition kind, raw and ``_normalized``), ``spikes``, ``dashboard`` (final),
        ``transition_dashboard``, ``curves`` and ``history`` (every snapshot's maps), ``checks``.

    References
    ----------
    Lie-Exponential Roadmap, "Log-Lens Diagnostics" and its minimal experiment [SEED]; Elhage et al. (2021);
    Olsson et al. (2022).

    Examples
    --------
    >>> cfg = LogLensConfig(vocab_size=8, half_length=4, min_period=2, d_model=8, n_heads=2, steps=4, batch=4,
    ...                     log_every=2, eval_batch=4)
    >>> result = run_log_lens(cfg, operators=("ATTN",), progress=False)
    >>> run = result["runs"][0]
    >>> run["curves"]["steps"], len(run["dashboard"]["commutator"]), result["checks"]["all"]
    ([0, 2, 4], 4, True)
    """
    if config is None:
        config = LogLensConfig.preset("paper")
    if not isinstance(config, LogLensConfig):
        raise TypeError(f"config must be a LogLensConfig, got {type(config).__name__}")

    def fit(operator: str, arch: str) -> tuple[dict, dict]:
        model, trained = _train(config, operator, arch, progress=progress)
        return jsonable(_record(config, model, trained, arch)), model.state_dict()

    return run_grid(
        "log-lens",
        config,
        fit,
        operators=(operators, LOG_LENS_OPERATORS),
        architectures=architectures,
        report=(log_lens_table, save_dashboards),
        artefacts=ARTEFACTS,
        out=out,
        force=force,
        resume=resume,
    )
