r"""The log-lens study's report: the Markdown table, the sweep rows and the dashboard figure.

:func:`log_lens_table` gives one row per trained model of a :func:`~workbench.experiments.run_log_lens` result;
:func:`log_lens_rows` the flat rows ``workbench sweep log-lens`` gathers over seeds; :func:`save_dashboards` one
figure per model: the commutator map across depth and heads, the K-composition map, each head's circuit scores,
and the time curves (repeated-half loss, the circuit pair's and the layers' commutators, :math:`\rho` over time)
with the phase transition marked.

References
----------
Lie-Exponential Roadmap, "Log-lens dashboards correlating commutator heatmaps with classic interpretability
circuits" [SEED]; Elhage et al. (2021) (K-composition); Olsson et al. (2022).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write, restore_floats

__all__ = ["log_lens_rows", "log_lens_table", "save_dashboards"]


def _number(value) -> float | None:
    return None if value is None else float(restore_floats(value))


def _f(value, digits: int = 3, signed: bool = False) -> str:
    value = _number(value)
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _head(pair: list) -> str:
    return f"L{pair[0]}H{pair[1]}"


def log_lens_rows(result: dict) -> list[dict]:
    """One flat row per trained model of a :func:`run_log_lens` result, for ``workbench sweep``.

    The keys are ``operator`` and ``architecture`` (strings); every other value is a measurement: the final losses
    and probe accuracy, Spearman ρ and p of commutator vs K-, Q- and V-composition (raw and scale-free commutator), the
    circuit pair's scores and ranks, the transition step (``None`` when none is detected) and, for the pair's and
    the layers' commutators, the spike step, its lag behind the transition and the concentration of the change in
    the transition window.

    Examples
    --------
    >>> import json
    >>> from workbench.experiments.log_lens._config import LogLensConfig
    >>> from workbench.experiments.log_lens._run import run_log_lens
    >>> cfg = LogLensConfig(vocab_size=8, half_length=4, min_period=2, d_model=8, n_heads=2, steps=4, batch=4,
    ...                     log_every=2, eval_batch=4)
    >>> row = log_lens_rows(json.loads(json.dumps(run_log_lens(cfg, operators=("ATTN",), progress=False))))[0]
    >>> [k for k, v in row.items() if isinstance(v, str)], row["cross_layer_pairs"]
    (['operator', 'architecture'], 4)
    """
    rows = []
    for run in result["runs"]:
        pair, alignment, spikes = run["pair"], run["alignment"], run["spikes"]
        transition = run.get("transition") or {}
        row = {
            "operator": run["operator"],
            "architecture": run["architecture"],
            "final_repeat_loss": _number(run["final_repeat_loss"]),
            "induction_accuracy": _number(run["induction_accuracy"]),
            "shifted_period_accuracy": _number(run["shifted_period_accuracy"]),
            "transition_detected": bool(transition.get("detected")),
            "transition_step": _number(transition.get("step")),
        }
        for name, test in alignment.items():
            row[f"rho_{name}"] = _number(test.get("rho"))
            row[f"p_{name}"] = _number(test.get("p_value"))
        for key in ("previous_token_score", "induction_score", "commutator_rank", "commutator_normalized_rank"):
            row[f"pair_{key}"] = _number(pair.get(key))
        row["pair_commutator_rank_all_pairs"] = _number(pair.get("commutator_rank_all_pairs"))
        row["pair_k_composition"] = _number(pair.get("k_composition"))
        row["pair_k_composition_rank"] = _number(pair.get("k_composition_rank"))
        row["cross_layer_pairs"] = pair["cross_layer_pairs"]
        for name, stats in spikes.items():
            for key in ("spike_step", "lag", "concentration"):
                row[f"{name}_{key}"] = _number(stats.get(key))
        row["seconds"] = _number(run["seconds"])
        rows.append(row)
    return rows


_RANKS = ("commutator_rank", "k_composition_rank")


def log_lens_table(result: dict) -> str:
    """Markdown: per model, the circuit pair, ρ(commutator, composition), the pair's ranks and the spikes.

    Columns: operator | architecture | repeat loss | probe acc (shifted period) | prev-token head → induction head
    (their scores; those of a uniform causal head) |
    transition step | ρ(‖[S_a,S_b]‖, K) [p] | ρ scale-free vs K | ρ vs V | pair rank by commutator | by K | pair
    commutator: spike step (lag), concentration | layer commutator: spike step (lag), concentration.  "—" where
    a measurement is undefined (no transition, a constant sample, a head without a logarithm).

    Examples
    --------
    >>> run = {"operator": "ATTN", "architecture": "attn-only", "final_repeat_loss": 0.5,
    ...        "shifted_period_accuracy": 0.9, "transition": {"detected": True, "step": 1250.0},
    ...        "pair": {"previous_token_head": [0, 1], "induction_head": [1, 2], "previous_token_score": 0.8,
    ...                 "induction_score": 0.4, "commutator_rank": 3, "k_composition_rank": 1,
    ...                 "cross_layer_pairs": 16},
    ...        "alignment": {"K": {"rho": 0.1, "p_value": 0.7}, "K_normalized": {"rho": -0.2, "p_value": 0.5},
    ...                      "V": {"rho": 0.6, "p_value": 0.01}},
    ...        "spikes": {"pair_commutator_normalized": {"spike_step": 1300.0, "lag": 50.0, "concentration": 2.5},
    ...                   "layer_commutator_normalized": {"undefined": "no log"}}}
    >>> cells = log_lens_table({"runs": [run]}).splitlines()[2].split(" | ")
    >>> cells[4:9]
    ['L0H1 → L1H2 (0.80, 0.40)', '1250', '+0.10 [0.70]', '-0.20 [0.50]', '+0.60 [0.01]']
    >>> cells[9:]
    ['3/16', '1/16', '1300 (+50), 2.50', '— |']
    """
    if not isinstance(result, dict) or not isinstance(result.get("runs"), list):
        raise TypeError("result must be the dict returned by run_log_lens (with a 'runs' list)")
    lines = [
        "| Operator | Arch | repeat loss | probe acc | prev-token → induction head (scores) | transition | "
        "ρ(‖[S_a,S_b]‖, K) [p] | ρ scale-free, K [p] | ρ(‖[S_a,S_b]‖, V) [p] | pair rank by ‖[S_a,S_b]‖ | by K "
        "| pair ‖[S_a,S_b]‖/(‖S_a‖‖S_b‖): spike (lag), concentration | ‖[S_0,S_1]‖ scale-free: spike (lag), "
        "concentration |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def test(entry):
        entry = entry or {}
        return (
            f"{_f(entry.get('rho'), 2, True)} [{_f(entry.get('p_value'), 2)}]" if entry.get("rho") is not None else "—"
        )

    def spike(stats):
        if not stats or stats.get("spike_step") is None:
            return "—"
        lag = f" ({_f(stats.get('lag'), 0, True)})" if stats.get("lag") is not None else ""
        return f"{_f(stats['spike_step'], 0)}{lag}, {_f(stats.get('concentration'), 2)}"

    for run in result["runs"]:
        pair, alignment, spikes = run["pair"], run["alignment"], run["spikes"]
        transition = run.get("transition") or {}
        step = _f(transition.get("step"), 0) if transition.get("detected") else "none"
        n = pair["cross_layer_pairs"]
        chance = ""
        if pair.get("chance_previous_token_score") is not None:
            chance = f"; uniform {_f(pair['chance_previous_token_score'], 2)}, {_f(pair['chance_induction_score'], 2)}"
        rank = {key: f"{pair[key]}/{n}" if pair.get(key) is not None else "—" for key in _RANKS}
        lines.append(
            f"| {run['operator']} | {run['architecture']} | {_f(run['final_repeat_loss'])} | "
            f"{_f(run['shifted_period_accuracy'])} | "
            f"{_head(pair['previous_token_head'])} → {_head(pair['induction_head'])} "
            f"({_f(pair['previous_token_score'], 2)}, {_f(pair['induction_score'], 2)}{chance}) | {step} | "
            f"{test(alignment.get('K'))} | {test(alignment.get('K_normalized'))} | {test(alignment.get('V'))} | "
            f"{rank['commutator_rank']} | {rank['k_composition_rank']} | "
            f"{spike(spikes.get('pair_commutator_normalized'))} | {spike(spikes.get('layer_commutator_normalized'))} |"
        )
    lines.append("")
    lines.append(
        "ρ: Spearman over the cross-layer (layer-0 head, layer-1 head) pairs at the end of training, p from "
        "relabelling the heads. Rank 1 = largest. Spike: step of steepest change (lag after the transition); "
        "concentration: share of the curve's change inside the transition window over the window's share of "
        "training (1 = no special change there)."
    )
    return "\n".join(lines)


def _mark_transition(ax, transition: dict) -> None:
    if transition and transition.get("detected"):
        ax.axvline(transition["step"], color="k", linestyle="--", linewidth=1, label="transition")
        if transition.get("window"):
            ax.axvspan(*transition["window"], color="0.85", zorder=0)


def _dashboard_figure(run: dict):
    # No backend is forced: headless, pyplot falls back to Agg itself; in a notebook the figure stays inline.
    import matplotlib.pyplot as plt

    from workbench.lens import plot_commutator_heatmap

    board, curves, pair = run["dashboard"], run["curves"], run["pair"]
    transition = run.get("transition") or {}
    H = len(board["composition"]["K"])
    labels = [f"L{layer}H{h}" for layer in range(2) for h in range(H)]
    fig, axes = plt.subplots(2, 4, figsize=(21, 9))
    C = np.array(restore_floats(board["commutator_normalized"]), dtype=np.float64)
    plot_commutator_heatmap(C, axes[0, 0], labels=labels, title=f"step {board['step']}: ‖[S_a,S_b]‖/(‖S_a‖‖S_b‖)")
    axes[0, 0].set_xlabel("head b")
    axes[0, 0].set_ylabel("head a")
    K = np.array(board["composition"]["K"], dtype=np.float64)
    image = axes[0, 1].imshow(K, cmap="viridis", vmin=0)
    fig.colorbar(image, ax=axes[0, 1], label="K-composition")
    prev, ind = pair["previous_token_head"][1], pair["induction_head"][1]
    axes[0, 1].add_patch(plt.Rectangle((ind - 0.5, prev - 0.5), 1, 1, fill=False, edgecolor="r", linewidth=2))
    axes[0, 1].set_xticks(range(H), [f"L1H{h}" for h in range(H)])
    axes[0, 1].set_yticks(range(H), [f"L0H{h}" for h in range(H)])
    axes[0, 1].set_title("K-composition (red: prev-token → induction pair)")
    width = 0.4
    x = np.arange(2 * H)
    previous = np.ravel(board["previous_token_score"])
    induction = np.ravel(board["induction_score"])
    axes[0, 2].bar(x - width / 2, previous, width, label="previous-token score")
    axes[0, 2].bar(x + width / 2, induction, width, label="induction score")
    axes[0, 2].set_xticks(x, labels)
    axes[0, 2].set_ylim(0, 1)
    axes[0, 2].legend(fontsize=8)
    axes[0, 2].set_title("the known circuits, per head")
    spectrum = axes[0, 3]
    third = 0.27
    for offset, (key, label) in zip(
        (-third, 0.0, third),
        (("spectral_abscissa", "max Re λ(S)"), ("min_log_gain", "min Re λ(S)"), ("max_frequency", "max |Im λ(S)|")),
        strict=True,
    ):
        spectrum.bar(x + offset, np.array(restore_floats(board[key]), dtype=np.float64), third, label=label)
    spectrum.axhline(0, color="0.5", linewidth=0.8)
    spectrum.set_xticks(x, labels)
    spectrum.legend(fontsize=8)
    spectrum.set_title("spectrum of each S_h = log(I + W_OV^h)")
    steps = curves["steps"]
    axes[1, 0].plot(steps, curves["repeat_loss"], label="repeated-half loss")
    axes[1, 0].plot(steps, curves["first_half_loss"], label="first-half loss", alpha=0.6)
    axes[1, 0].set_ylabel("nats")
    axes[1, 0].set_title("eval losses")
    ax = axes[1, 1]
    ax.plot(steps, restore_floats(curves["pair_commutator_normalized"]), label="pair, scale-free")
    ax.plot(steps, restore_floats(curves["layer_commutator_normalized"]), label="layers ‖[S_0,S_1]‖, scale-free")
    twin = ax.twinx()
    twin.plot(steps, restore_floats(curves["pair_commutator"]), color="C2", alpha=0.6, label="pair, raw (right)")
    twin.set_ylabel("raw ‖[S_a,S_b]‖_F")
    ax.set_title(f"commutators of {_head(pair['previous_token_head'])} → {_head(pair['induction_head'])}")
    ax.legend(fontsize=8, loc="upper left")
    twin.legend(fontsize=8, loc="lower right")
    for key, label in (("rho_K", "ρ(raw, K)"), ("rho_K_normalized", "ρ(scale-free, K)"), ("rho_V", "ρ(raw, V)")):
        axes[1, 2].plot(steps, restore_floats(curves[key]), label=label)
    norms = np.array(restore_floats(curves["ov_norm"]), dtype=np.float64)  # [K, L, H]
    for layer in range(norms.shape[1]):
        for h in range(norms.shape[2]):
            axes[1, 3].plot(
                steps, norms[:, layer, h], color=f"C{layer}", alpha=0.7, label=f"layer {layer}" if h == 0 else None
            )
    axes[1, 3].set_ylabel("‖W_OV^h‖₂ (distance of I + W_OV^h from I)")
    axes[1, 3].set_title("how far the lens is from its linear regime")
    axes[1, 3].legend(fontsize=8)
    axes[1, 2].axhline(0, color="0.5", linewidth=0.8)
    axes[1, 2].set_ylim(-1, 1)
    axes[1, 2].set_title("Spearman ρ over the cross-layer pairs")
    for ax in axes[1]:
        _mark_transition(ax, transition)
        ax.set_xlabel("step")
    axes[1, 0].legend(fontsize=8)
    axes[1, 2].legend(fontsize=8)
    fig.suptitle(f"log-lens dashboard: {run['operator']} {run['architecture']}")
    fig.tight_layout()
    return fig


def save_dashboards(result: dict, out: str | Path) -> list[Path]:
    """Write ``dashboard-<operator>-<architecture>.png`` for every run of a :func:`run_log_lens` result.

    Panels: the scale-free commutator map of the final snapshot over all heads (:func:`plot_commutator_heatmap`),
    the K-composition map with the circuit pair outlined, each head's previous-token and induction scores, each
    head's generator spectrum (extreme real parts, top frequency); the eval losses, the pair's and the layers'
    commutators, Spearman ρ and every head's ‖W_OV‖₂ over training, the transition marked (dashed line, window
    shaded).  Returns the paths written.
    """
    import matplotlib.pyplot as plt

    paths = []
    for run in result["runs"]:
        fig = _dashboard_figure(run)
        path = Path(out) / f"dashboard-{run['operator']}-{run['architecture']}.png"
        with atomic_write(path) as temporary:
            fig.savefig(temporary, dpi=110, format="png")
        plt.close(fig)
        paths.append(path)
    return paths
