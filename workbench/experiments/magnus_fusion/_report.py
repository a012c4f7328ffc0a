r"""Tables and the figure of the MagnusBlock fusion experiment.

One row per budget × fusion (``unfused``, ``identity`` = the sublayers dropped, ``order-N``, ``exact``): held-out
bpb, :math:`\Delta\mathrm{bpb}` against the unfused model, the logits' and the matrices' relative errors, the
blocks' commutator sums, and the speed-up of the long-context forward and of one decoding step; a timing table
with the measured Amdahl bound beside the FLOP model's.

References
----------
Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)" [SEED]; Amdahl (1967).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write

__all__ = ["magnus_fusion_figure", "magnus_fusion_rows", "magnus_fusion_table"]


def _speedup(timing: dict, workload: str, variant: str) -> float:
    """The median over timing rounds of t_unfused / t_variant (``fused``, or ``skipped``: the Amdahl limit)."""
    return timing[workload]["speedup" if variant == "fused" else "speedup_skipped"]


def magnus_fusion_rows(result: dict) -> list[dict]:
    """One flat row per budget × fusion: keys ``budget``, ``fusion``; the rest are measurements (for a sweep).

    Examples
    --------
    >>> timing = {w: {"speedup": 2.0, "speedup_skipped": 4.0} for w in ("forward", "decode")}
    >>> fusion = {"fusion": "order-1", "bpb": 2.5, "delta_bpb": 0.5, "logits_rel_error": 0.1, "matrix_rel_error": 0.2,
    ...           "diverged": False}
    >>> run = {"budget": "none", "bpb": 2.0, "commutator_sums": [1.0, 3.0], "magnus_sums": [0.5, 0.7],
    ...        "timing": timing, "fusions": [fusion]}
    >>> rows = magnus_fusion_rows({"runs": [run]})
    >>> [(r["fusion"], r["speedup_decode"]) for r in rows], rows[0]["commutator_sum"]
    ([('unfused', 1.0), ('order-1', 2.0)], 2.0)
    """
    rows = []
    for run in result["runs"]:
        timing = run["timing"]
        common = {
            "budget": run["budget"],
            "commutator_sum": float(np.mean(run["commutator_sums"])),
            "commutator_sum_max": float(np.max(run["commutator_sums"])),
            "magnus_sum_max": float(np.max(run["magnus_sums"])),
            "budget_cost_bpb": run.get("budget_cost_bpb"),
        }
        rows.append({
            **common, "fusion": "unfused", "bpb": run["bpb"], "delta_bpb": 0.0, "logits_rel_error": 0.0,
            "matrix_rel_error": 0.0, "speedup_forward": 1.0, "speedup_decode": 1.0,
        })  # fmt: skip
        for f in run["fusions"]:
            variant = "skipped" if f["fusion"] == "identity" else "fused"
            rows.append({
                **common, "fusion": f["fusion"], "bpb": f["bpb"], "delta_bpb": f["delta_bpb"],
                "logits_rel_error": f["logits_rel_error"], "matrix_rel_error": f["matrix_rel_error"],
                "speedup_forward": _speedup(timing, "forward", variant),
                "speedup_decode": _speedup(timing, "decode", variant),
            })  # fmt: skip
    return rows


def _number(value, spec: str) -> str:
    return "diverged" if value is None else format(value, spec)


def magnus_fusion_table(result: dict) -> str:
    """Markdown: budget × fusion quality and speed-up; each budget's cost and commutators; its wall clock and bounds.

    Examples
    --------
    >>> timing = {w: {"unfused": 2e-3, "fused": 1e-3, "skipped": 5e-4, "saving": 0.5, "bound": 0.75, "speedup": 2.0,
    ...               "speedup_skipped": 4.0} for w in ("forward", "decode")}
    >>> fusion = {"fusion": "exact", "bpb": 2.0, "delta_bpb": 0.0, "logits_rel_error": 1e-7, "matrix_rel_error": 0.0,
    ...           "diverged": False}
    >>> run = {"budget": "0.1", "bpb": 2.0, "commutator_sums": [0.1], "magnus_sums": [0.5], "timing": timing,
    ...        "fusions": [fusion], "flop": {"saving": 0.1, "context_at_target": None}}
    >>> print(magnus_fusion_table({"runs": [run], "config": {"time_context": 64}}).splitlines()[3])
    | 0.1 | exact | 2.0000 | +0.0000 | 1.0e-07 | 0.0e+00 | 0.1 / 0.1 | 2.00× | 2.00× |
    """
    lines = [
        "| budget τ | fusion | held-out bpb | Δbpb | logits rel. err. | ‖W−Π‖/‖Π‖ | comm. sum (mean / max) "
        "| speed-up forward | speed-up decode |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in magnus_fusion_rows(result):
        lines.append(
            f"| {row['budget']} | {row['fusion']} | {_number(row['bpb'], '.4f')} | {_number(row['delta_bpb'], '+.4f')} "
            f"| {_number(row['logits_rel_error'], '.1e')} | {_number(row['matrix_rel_error'], '.1e')} "
            f"| {row['commutator_sum']:.3g} / {row['commutator_sum_max']:.3g} | {row['speedup_forward']:.2f}× "
            f"| {row['speedup_decode']:.2f}× |"
        )
    lines += [
        "",
        "Per budget: the budget's cost (unfused bpb minus the same seed's no-budget model), the blocks' commutator "
        "sums against τ, and the largest Moan–Niesen sum (the BCH series of a block converges when it is below π).",
        "",
        "| budget τ | unfused bpb | cost of the budget (Δbpb) | C_b mean / max | max_b C_b − τ | max_b Σ_i ‖A_i‖₂ |",
        "|---|---|---|---|---|---|",
    ]
    for run in result["runs"]:
        cost, excess = run.get("budget_cost_bpb"), run.get("budget_excess")
        lines.append(
            f"| {run['budget']} | {run['bpb']:.4f} | {'—' if cost is None else format(cost, '+.4f')} "
            f"| {np.mean(run['commutator_sums']):.3g} / {np.max(run['commutator_sums']):.3g} "
            f"| {'—' if excess is None else format(excess, '+.3g')} | {np.max(run['magnus_sums']):.3g} |"
        )
    context = result["config"]["time_context"]
    lines += [
        "",
        f"Wall clock at context {context} (one thread; median seconds of the rounds): unfused (r matmuls a block) / "
        "fused (1) / skipped (0); saving = 1 − med(fused/unfused), bound = 1 − med(skipped/unfused), the share of "
        "the time in the sublayers, which no fusion can beat (Amdahl); the FLOP model's decode saving beside them.",
        "",
        "| budget τ | forward (ms) | forward saving | forward bound | decode step (µs) | decode saving "
        "| decode bound | FLOP-model decode saving | longest context with ≥ 20 % (FLOP model) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in result["runs"]:
        f, d = run["timing"]["forward"], run["timing"]["decode"]
        longest = run["flop"]["context_at_target"]
        lines.append(
            f"| {run['budget']} | {1e3 * f['unfused']:.1f} / {1e3 * f['fused']:.1f} / {1e3 * f['skipped']:.1f} "
            f"| {f['saving']:.1%} | {f['bound']:.1%} "
            f"| {1e6 * d['unfused']:.0f} / {1e6 * d['fused']:.0f} / {1e6 * d['skipped']:.0f} "
            f"| {d['saving']:.1%} | {d['bound']:.1%} | {run['flop']['saving']:.1%} "
            f"| {'none (out of reach)' if longest is None else longest} |"
        )
    return "\n".join(lines)


def magnus_fusion_figure(result: dict):
    """``|Δbpb|`` and the logits' error against the truncation order, one line per budget (log y); the speed-ups.

    The exact product is drawn as a dashed line at its own level per budget (it is no order).  Returns the
    matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for run in result["runs"]:
        ordered = [f for f in run["fusions"] if f["order"] is not None and not f["diverged"]]
        exact = next((f for f in run["fusions"] if f["fusion"] == "exact" and not f["diverged"]), None)
        for ax, key in zip(axes[:2], ("delta_bpb", "logits_rel_error"), strict=True):
            orders = [f["order"] for f in ordered]
            values = [max(abs(f[key]), 1e-12) for f in ordered]
            (line,) = ax.semilogy(orders, values, "o-", label=f"budget {run['budget']}")
            if exact is not None:
                ax.axhline(max(abs(exact[key]), 1e-12), color=line.get_color(), ls="--", lw=0.8)
    ticks = sorted({f["order"] for run in result["runs"] for f in run["fusions"] if f["order"] is not None})
    for ax, what in zip(axes[:2], ("|Δbpb| vs unfused", "logits relative error"), strict=True):
        ax.set_xticks(ticks)
        ax.set(xlabel="BCH truncation order N (0: W = I)", ylabel=what, title=f"{what} (dashed: exact product)")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
    ax = axes[2]
    budgets = [run["budget"] for run in result["runs"]]
    x = np.arange(len(budgets))
    for k, (workload, variant, label) in enumerate([
        ("forward", "fused", "forward, fused"), ("forward", "skipped", "forward, skipped (bound)"),
        ("decode", "fused", "decode step, fused"), ("decode", "skipped", "decode step, skipped (bound)"),
    ]):  # fmt: skip
        ax.bar(x + 0.2 * (k - 1.5), [_speedup(run["timing"], workload, variant) for run in result["runs"]], 0.2,
               label=label)  # fmt: skip
    ax.axhline(1.0, color="grey", lw=0.8)
    for target in (0.2, 0.4):
        ax.axhline(1.0 / (1.0 - target), color="red", ls=":", lw=0.8)
    ax.set_xticks(x, [f"budget {b}" for b in budgets])
    ax.set(ylabel="speed-up t_unfused / t", title="speed-up (dotted: the roadmap's 20 % and 40 % savings)")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def save_figure(result: dict, path: Path) -> None:
    """Write ``fusion.png`` (:func:`magnus_fusion_figure`) into the run directory ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig = magnus_fusion_figure(result)
    with atomic_write(Path(path) / "fusion.png") as temporary:
        fig.savefig(temporary, format="png", dpi=120)
    plt.close(fig)
