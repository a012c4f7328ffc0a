r"""Tables of the sequential transfer: one run's states, and Table 3 over seeds beside the paper's.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Table 3 [SEED]; book/reference.md §A.12.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PAPER_TABLE3", "transfer_rows", "transfer_sweep_figure", "transfer_sweep_table", "transfer_table"]

#: Attention Geometry's Table 3 (depth-32, ~1.9B, one model): (operator, held-out bpb, induction accuracy).
PAPER_TABLE3 = {
    "A0": ("ATTN", 0.7650, 0.8081),
    "M1": ("DMTN", 0.6657, 0.5735),
    "A1": ("ATTN", 0.6619, 0.8334),
    "M2": ("DMTN", 0.6690, 0.4676),
}

#: The measurements of each task, in table order: (field, column heading, format).
_FIELDS = {
    "shakespeare": (
        ("bpb", "held-out bpb", ".4f"),
        ("induction_accuracy", "induction accuracy (letters)", ".3f"),
        ("best_induction_score", "best head's induction score", ".3f"),
        ("rho_skew", "ρ_skew", ".3f"),
    ),
    "induction": (
        ("repeat_loss", "repeat-half loss", ".3f"),
        ("induction_accuracy", "induction accuracy (period T)", ".3f"),
        ("shifted_period_accuracy", "shifted-period accuracy", ".3f"),
        ("best_induction_score", "best head's induction score", ".3f"),
        ("rho_skew", "ρ_skew", ".3f"),
    ),
}


def transfer_rows(result: dict) -> list[dict]:
    """One flat row per state: keys ``state`` and ``operator``, the task's measurements and steps (for a sweep)."""
    task = result["config"]["task"]
    return [
        {"state": s["state"], "operator": s["operator"], "steps": s["steps"], **{f: s[f] for f, _, _ in _FIELDS[task]}}
        for s in result["states"]
    ]


def _paper(state: str) -> str:
    if state not in PAPER_TABLE3:
        return "—"
    _, bpb, induction = PAPER_TABLE3[state]
    return f"{bpb:.4f} / {induction:.4f}"


def transfer_table(result: dict) -> str:
    """Markdown: every state of one run with the task's measurements, the paper's (bpb / induction) beside.

    Examples
    --------
    >>> states = [{"state": "A0", "operator": "ATTN", "steps": 5, "bpb": 3.0, "induction_accuracy": 0.5,
    ...            "best_induction_score": 0.25, "rho_skew": 1.0}]
    >>> print(transfer_table({"config": {"task": "shakespeare"}, "states": states}).splitlines()[2])
    | A0 | ATTN | 5 | 3.0000 | 0.500 | 0.250 | 1.000 | 0.7650 / 0.8081 |
    """
    fields = _FIELDS[result["config"]["task"]]
    lines = [
        "| State | operator | steps | " + " | ".join(h for _, h, _ in fields) + " | paper bpb / induction |",
        "|---|---|---|" + "---|" * len(fields) + "---|",
    ]
    for s in result["states"]:
        values = " | ".join(format(s[f], spec) for f, _, spec in fields)
        lines.append(f"| {s['state']} | {s['operator']} | {s['steps']} | {values} | {_paper(s['state'])} |")
    return "\n".join(lines)


def transfer_sweep_table(sweep: dict) -> str:
    """Table 3 over seeds: each state's measurements as mean ± sd (n), the paper's numbers beside.

    Examples
    --------
    >>> rows = lambda b: [{"state": "A0", "operator": "ATTN", "steps": 5, "bpb": b, "induction_accuracy": 0.5,
    ...                    "best_induction_score": 0.25, "rho_skew": 1.0}]
    >>> config = {"task": "shakespeare"}
    >>> sweep = {"tasks": [{"seed": 0, "config": config, "rows": rows(3.0)},
    ...                    {"seed": 1, "config": config, "rows": rows(3.2)}]}
    >>> transfer_sweep_table(sweep).splitlines()[2].split(" | ")[:5]
    ['| A0', 'ATTN', '5', '3.1000 ± 0.1414 (2)', '0.500 ± 0.000 (2)']
    """
    tasks = {t["config"]["task"] for t in sweep["tasks"]}
    if len(tasks) != 1:
        raise ValueError(f"sweep must hold transfers of one task, got tasks {sorted(tasks)}")
    fields = _FIELDS[tasks.pop()]
    by_state: dict[str, list[dict]] = {}
    for t in sweep["tasks"]:
        for row in t.get("rows") or ():
            by_state.setdefault(row["state"], []).append(row)
    lines = [
        "| State | operator | steps | " + " | ".join(h for _, h, _ in fields) + " | paper bpb / induction |",
        "|---|---|---|" + "---|" * len(fields) + "---|",
    ]
    for state, rows in by_state.items():
        cells = []
        for f, _, spec in fields:
            v = np.array([r[f] for r in rows if r.get(f) is not None], dtype=float)
            sd = format(v.std(ddof=1), spec) if len(v) > 1 else "—"
            cells.append(f"{format(v.mean(), spec)} ± {sd} ({len(v)})" if len(v) else "—")
        lines.append(
            f"| {state} | {rows[0]['operator']} | {rows[0]['steps']} | {' | '.join(cells)} | {_paper(state)} |"
        )
    return "\n".join(lines)


def transfer_sweep_figure(sweep: dict):
    """Table 3 as a figure: each measurement across the seven states, one line per seed.  Returns the figure."""
    import matplotlib.pyplot as plt

    task = {t["config"]["task"] for t in sweep["tasks"]}.pop()
    fields = [f for f in _FIELDS[task] if f[0] != "rho_skew"]
    fig, axes = plt.subplots(1, len(fields), figsize=(4.2 * len(fields), 3.8), squeeze=False)
    for ax, (field, heading, _) in zip(axes[0], fields, strict=True):
        for t in sorted(sweep["tasks"], key=lambda t: t["seed"]):
            rows = t.get("rows") or []
            ax.plot(range(len(rows)), [r[field] for r in rows], "o-", alpha=0.7, label=f"seed {t['seed']}")
        states = [r["state"].replace(":projected", "\nproj.") for r in (sweep["tasks"][0].get("rows") or [])]
        ax.set_xticks(range(len(states)), states, fontsize=7)
        ax.set_title(heading, fontsize=9)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"Table 3 at workbench scale ({task}): ATTN → {sweep['tasks'][0]['config']['target']} → ATTN → …")
    fig.tight_layout()
    return fig
