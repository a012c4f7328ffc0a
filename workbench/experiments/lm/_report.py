r"""Tables of the language-model experiment: one run, and Table 2 over seeds with paired differences.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Table 2 [SEED]; book/reference.md §A.12.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "PAPER_TABLE2",
    "language_model_rows",
    "language_model_sweep_figure",
    "language_model_sweep_table",
    "language_model_table",
    "paired_difference",
]

#: Attention Geometry's Table 2: held-out bits per byte of depth-12 (~200M) models, one seed each.
PAPER_TABLE2 = {"ATTN": 0.8471, "DMTN": 0.8492, "DMAP": 0.8621}


def language_model_rows(result: dict) -> list[dict]:
    """One flat row per trained model: the operator (key) and its numbers (for a sweep)."""
    return [
        {
            "operator": r["operator"],
            "bpb": r["bpb"],
            "induction_accuracy": r["induction_accuracy"],
            "best_induction_score": r["best_induction_score"],
            "final_train_loss": r["curve"]["train_loss"][-1],
            "parameters": r["parameters"],
            "seconds": r["seconds"],
        }
        for r in result["runs"]
    ]


def language_model_table(result: dict) -> str:
    """Markdown: the run's operator, held-out bpb, probe accuracy and best induction score, beside the paper.

    Examples
    --------
    >>> row = {"operator": "DMTN", "bpb": 2.5, "induction_accuracy": 0.1, "best_induction_score": 0.2,
    ...        "parameters": 10, "seconds": 60.0, "curve": {"train_loss": [1.7]}}
    >>> print(language_model_table({"runs": [row]}).splitlines()[2])
    | DMTN | 2.5000 | 0.100 | 0.200 | 10 | 1.0 min | 0.8492 |
    """
    lines = [
        "| Operator | held-out bpb | induction accuracy | best induction score | parameters | wall time "
        "| paper bpb (~200M) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['operator']} | {r['bpb']:.4f} | {r['induction_accuracy']:.3f} | {r['best_induction_score']:.3f} "
            f"| {r['parameters']} | {r['seconds'] / 60:.1f} min | {PAPER_TABLE2.get(r['operator'], '—')} |"
        )
    return "\n".join(lines)


def paired_difference(a: dict[int, float], b: dict[int, float], level: float = 0.95) -> dict:
    r"""Mean and Student-t interval of the paired differences :math:`a_s - b_s` over the seeds both have.

    .. math::

        \bar d \pm t_{(1+\ell)/2,\,n-1}\,\frac{s_d}{\sqrt n}

    Examples
    --------
    >>> d = paired_difference({0: 1.0, 1: 2.0, 2: 3.0}, {0: 0.5, 1: 1.0, 2: 2.5})
    >>> d["n"], round(d["mean"], 4), round(d["low"], 4), round(d["high"], 4)
    (3, 0.6667, -0.0504, 1.3838)
    """
    from scipy import stats

    seeds = sorted(set(a) & set(b))
    d = np.array([a[s] - b[s] for s in seeds])
    if len(d) < 2:
        return {"n": len(d), "mean": float(d.mean()) if len(d) else math.nan, "low": math.nan, "high": math.nan}
    half = float(stats.t.ppf((1 + level) / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d)))
    mean = float(d.mean())
    return {"n": len(d), "mean": mean, "sd": float(d.std(ddof=1)), "low": mean - half, "high": mean + half}


def _by_seed(sweep: dict, field: str) -> dict[str, dict[int, float]]:
    """``{operator: {seed: value}}`` from a sweep's finished tasks."""
    values: dict[str, dict[int, float]] = {}
    for task in sweep["tasks"]:
        for row in task.get("rows") or ():
            if row.get(field) is not None:
                values.setdefault(row["operator"], {})[task["seed"]] = row[field]
    return values


def language_model_sweep_table(sweep: dict) -> str:
    """Table 2 over seeds: bpb mean ± sd per operator, paired differences to ATTN with 95% intervals.

    Examples
    --------
    >>> tasks = [{"seed": s, "rows": [{"operator": op, "bpb": b + 0.01 * s, "induction_accuracy": 0.1}]}
    ...          for s in range(3) for op, b in (("ATTN", 2.0), ("DMAP", 2.1))]
    >>> print(language_model_sweep_table({"tasks": tasks}).splitlines()[3])
    | DMAP | 2.1100 ± 0.0100 (3) | +0.1000 [+0.1000, +0.1000] | 0.100 ± 0.000 | 0.8621 | +0.0150 |
    """
    bpb = _by_seed(sweep, "bpb")
    accuracy = _by_seed(sweep, "induction_accuracy")
    lines = [
        "| Operator | held-out bpb, mean ± sd (seeds) | paired Δ vs ATTN, mean [95% CI] | induction accuracy "
        "| paper bpb (~200M, 1 seed) | paper Δ vs ATTN |",
        "|---|---|---|---|---|---|",
    ]
    for op in [o for o in ("ATTN", "DMTN", "DMAP", "ATAP") if o in bpb]:
        v = np.array(list(bpb[op].values()))
        sd = f"{v.std(ddof=1):.4f}" if len(v) > 1 else "—"
        if op == "ATTN" or "ATTN" not in bpb:
            delta = "—"
        else:
            d = paired_difference(bpb[op], bpb["ATTN"])
            interval = f"[{d['low']:+.4f}, {d['high']:+.4f}]" if d["n"] >= 2 else f"(no interval: {d['n']} paired seed)"
            delta = f"{d['mean']:+.4f} {interval}"
        acc = np.array(list(accuracy.get(op, {}).values()) or [math.nan])
        acc_sd = f"{acc.std(ddof=1):.3f}" if len(acc) > 1 else "—"
        paper = PAPER_TABLE2.get(op)
        paper_delta = f"{paper - PAPER_TABLE2['ATTN']:+.4f}" if paper is not None and op != "ATTN" else "—"
        lines.append(
            f"| {op} | {v.mean():.4f} ± {sd} ({len(v)}) | {delta} | {acc.mean():.3f} ± {acc_sd} "
            f"| {paper if paper is not None else '—'} | {paper_delta} |"
        )
    return "\n".join(lines)


def language_model_sweep_figure(sweep: dict, runs: dict[tuple[str, int], dict] | None = None):
    """Table 2 as a figure: held-out bpb per seed and operator (seeds joined: the pairing), and the mean curves.

    ``runs`` maps (operator, seed) to a run's ``results.json`` record (for the held-out bpb curves); without it
    only the left panel is drawn.  Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    bpb = _by_seed(sweep, "bpb")
    operators = [o for o in ("ATTN", "DMTN", "DMAP", "ATAP") if o in bpb]
    seeds = sorted({s for values in bpb.values() for s in values})
    fig, axes = plt.subplots(1, 2 if runs else 1, figsize=(11 if runs else 5.5, 4), squeeze=False)
    ax = axes[0, 0]
    for s in seeds:
        ax.plot(range(len(operators)), [bpb[o].get(s, math.nan) for o in operators], "o-", alpha=0.6, label=f"seed {s}")
    ax.set_xticks(range(len(operators)), operators)
    ax.set_ylabel("held-out bits per byte")
    ax.set_title("Table 2 at workbench scale: one line per seed")
    ax.legend(fontsize=8)
    if runs:
        ax = axes[0, 1]
        for op in operators:
            curves = [runs[(op, s)]["runs"][0]["curve"] for s in seeds if (op, s) in runs]
            steps = curves[0]["steps"]
            mean = np.mean([c["held_out_bpb"] for c in curves], axis=0)
            ax.plot(steps, mean, label=f"{op} (mean of {len(curves)} seeds)")
        ax.set_xlabel("step")
        ax.set_ylabel("held-out bpb (first eighth of the scored bytes)")
        ax.set_title("training curves")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
