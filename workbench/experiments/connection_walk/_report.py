"""The report of a connection-walk study: the metrics' names and labels, its Markdown tables, its figures.

:func:`connection_walk_table` writes the tables of a :func:`workbench.experiments.study_connection_walk` result;
:func:`layers_figure`, :func:`sweep_figure` and :func:`figure2` draw ``layers.png``, ``sweep.png`` and the
Figure-2 panels of one window (see :mod:`workbench.experiments.connection_walk._study`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write
from workbench.models import Transformer, circuit_scores, diagnose_ids, plot_diagnosis

__all__ = ["connection_walk_table"]

#: The per-layer metrics of the windows (the null's are ``null_`` + name).
METRICS = ("drift", "a_eff_norm", "delta_orth", "gram_diagonal_ratio")
NULL_METRICS = ("null_delta_orth", "null_gram_diagonal_ratio")
SWEEP_METRICS = ("drift", "a_eff_norm", "delta_orth")
LABELS = {
    "drift": "d_A (ℓ → ℓ+1)",
    "a_eff_norm": "‖A_eff‖_F",
    "delta_orth": "δ_orth",
    "gram_diagonal_ratio": "Gram |diag| / |off-diag|",
    "null_delta_orth": "δ_orth of the null",
    "null_gram_diagonal_ratio": "Gram |diag| / |off-diag| of the null",
}


# ---- the table ----------------------------------------------------------------------------------------------


def _cell(stat: dict | None) -> str:
    if stat is None or stat.get("mean") is None:
        return "—"
    mean = f"{stat['mean']:.4g}"
    return mean if stat.get("sd") is None else f"{mean} ± {stat['sd']:.4g}"


def _depth_rows(records: list[dict]) -> list[tuple[str, list[int]]]:
    """Row labels and, per model, the layer shown in that row."""
    if len({r["n_layers"] for r in records}) == 1:
        return [(str(layer), [layer] * len(records)) for layer in range(records[0]["n_layers"])]
    deepest = max(r["n_layers"] for r in records)
    rows = []
    for layer in range(deepest):
        depth = layer / (deepest - 1) if deepest > 1 else 0.0
        picks = [round(depth * (r["n_layers"] - 1)) for r in records]
        rows.append((f"{depth:.2f}", picks))
    return rows


def connection_walk_table(result: dict) -> str:
    r"""The Markdown tables of a :func:`study_connection_walk` result: per metric, a row per layer, a column per model.

    When the models have different numbers of layers the rows are relative depths :math:`\ell/(L - 1)` of the
    deepest model, and each cell holds the layer of that model nearest to the depth (named in the cell).  Then
    the sweep: per metric, a row per context length and a column per model (layer mean ± sd over the windows),
    and the lengths skipped, with the reason.
    """
    if not isinstance(result, dict) or "models" not in result:
        raise TypeError("result must be the dict of study_connection_walk")
    records = result["models"]
    same = len({r["n_layers"] for r in records}) == 1
    header = "| layer |" if same else "| relative depth |"
    columns = "".join(f" {r['label']} |" for r in records)
    rule = "|---|" + "---|" * len(records)
    rows = _depth_rows(records)
    used = ", ".join(
        f"{r['label']}: {r['windows']['used']} windows of {r['windows']['max_tokens']} tokens" for r in records
    )
    lines = [
        "# Connection walk: the layerwise study",
        "",
        f"Mean ± sd over the windows ({used}); d_A and δ_orth on the content-token pairs (causal pairs for a causal "
        "model), ‖A_eff‖_F on every pair.  The null keeps each model's attention and draws fresh Gaussian value "
        "and output maps (W_V ~ N(0, 1/D), W_O ~ N(0, 1/d_v)); d_A and ‖A_eff‖_F depend on the attention alone, "
        "so the null shares them.",
        "",
    ]
    if not same:
        lines += [
            "The models have different numbers of layers: rows are relative depths ℓ/(L − 1) and each cell is the "
            "model's nearest layer (named in the cell).",
            "",
        ]
    for metric in METRICS + NULL_METRICS:
        lines += [f"## {LABELS[metric]}", "", header + columns, rule]
        for label, picks in rows:
            cells = []
            for record, layer in zip(records, picks, strict=True):
                cell = _cell(record["layers"][layer][metric])
                cells.append(cell if same else f"{cell} (ℓ {layer})")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    lengths = sorted({s["length"] for r in records for s in r["sweep"]["lengths"]})
    lines += ["# Context-length sweep", "", "Layer mean ± sd over the windows of each length (tokens per window).", ""]
    for metric in SWEEP_METRICS:
        lines += [f"## {LABELS[metric]}", "", "| tokens |" + columns, rule]
        for length in lengths:
            cells = []
            for record in records:
                found = [s for s in record["sweep"]["lengths"] if s["length"] == length]
                cells.append(f"{_cell(found[0]['layer_mean'][metric])} (n={found[0]['windows']})" if found else "—")
            lines.append(f"| {length} | " + " | ".join(cells) + " |")
        lines.append("")
    skips = [(r["label"], s) for r in records for s in r["sweep"]["skipped"]]
    if skips:
        lines += ["Skipped:", ""] + [f"- {label}, {s['length']} tokens: {s['reason']}" for label, s in skips] + [""]
    return "\n".join(lines)


# ---- figures ------------------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> None:
    with atomic_write(path) as temporary:
        fig.savefig(temporary, format="png", dpi=120)


def figure2(model: Transformer, label: str, window, path: Path) -> None:
    """The Figure-2 panels (A_eff and mean transport Gram per layer) of one window, by plot_diagnosis."""
    plt = _pyplot()
    circuits = circuit_scores(model, half_length=min(24, model.max_positions // 2))
    report = diagnose_ids(model, window.ids, special=window.special, text=window.text, model_name=label,
                          circuits=circuits)  # fmt: skip
    fig = plot_diagnosis(report)
    _save(fig, path)
    plt.close(fig)


def _band(ax, x, stats, colour, style, label):
    mean = np.array([np.nan if s["mean"] is None else s["mean"] for s in stats], dtype=float)
    sd = np.array([np.nan if s["sd"] is None else s["sd"] for s in stats], dtype=float)
    ax.plot(x, mean, style, color=colour, marker="o", markersize=3, label=label)
    ax.fill_between(x, mean - sd, mean + sd, color=colour, alpha=0.15, linewidth=0)


def layers_figure(result: dict, path: Path) -> None:
    plt = _pyplot()
    records = result["models"]
    by_depth = result["rows"] != "layer"
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), squeeze=False)
    fig.set_layout_engine("constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    panels = (
        ("drift", None, "$d_A^{\\ell\\to\\ell+1}$ (content pairs)"),
        ("a_eff_norm", None, "$\\|A_{\\rm eff}\\|_F$ (the null shares it: it depends on $A$ only)"),
        ("delta_orth", "null_delta_orth", "$\\delta_{\\rm orth}$ of the effective transports"),
        ("gram_diagonal_ratio", "null_gram_diagonal_ratio", "mean Gram |diag| / |off-diag|"),
    )
    for ax, (metric, null, title) in zip(axes.flat, panels, strict=True):
        for k, record in enumerate(records):
            L = record["n_layers"]
            x = np.array([row["relative_depth"] for row in record["layers"]]) if by_depth else np.arange(L)
            colour = colours[k % len(colours)]
            stats = [row[metric] for row in record["layers"]]
            _band(ax, x, stats, colour, "-", record["label"] if null is None else f"{record['label']}: model")
            if null is not None:
                _band(ax, x, [row[null] for row in record["layers"]], colour, "--", f"{record['label']}: null")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("relative depth $\\ell/(L-1)$" if by_depth else "layer $\\ell$", fontsize=9)
        ax.set_ylabel(LABELS[metric], fontsize=9)
        if not by_depth:
            ax.set_xticks(range(max(r["n_layers"] for r in records)))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    shown = ", ".join(f"{r['label']} ({r['windows']['used']} × {r['windows']['max_tokens']} tokens)" for r in records)
    fig.suptitle(f"Connection walk per layer: mean ± sd over windows; {shown}", fontsize=11)
    _save(fig, path)
    plt.close(fig)


def sweep_figure(result: dict, path: Path) -> None:
    plt = _pyplot()
    records = result["models"]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2), squeeze=False)
    fig.set_layout_engine("constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    measured = sorted({s["length"] for r in records for s in r["sweep"]["lengths"]})
    for ax, metric in zip(axes.flat, SWEEP_METRICS, strict=True):
        for k, record in enumerate(records):
            sweep = record["sweep"]["lengths"]
            if not sweep:
                continue
            x = np.array([s["length"] for s in sweep], dtype=float)
            _band(ax, x, [s["layer_mean"][metric] for s in sweep], colours[k % len(colours)], "-", record["label"])
        ax.set_xscale("log", base=2)
        if measured:
            ax.set_xticks(measured, [str(n) for n in measured])
        ax.set_xlabel("context length (tokens per window)", fontsize=9)
        ax.set_ylabel(f"layer mean of {LABELS[metric]}", fontsize=9)
        ax.set_title(f"{LABELS[metric]} against context length", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    skipped = sorted({s["length"] for r in records for s in r["sweep"]["skipped"]})
    note = f"; skipped lengths (see table.md): {skipped}" if skipped else ""
    fig.suptitle(f"Context-length sweep: layer mean ± sd over windows{note}", fontsize=11)
    _save(fig, path)
    plt.close(fig)
