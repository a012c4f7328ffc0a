r"""The SiT transfer report: the Markdown table beside Attention Geometry §10, the sweep rows, the figure.

:func:`sit_transfer_table` formats a :func:`workbench.experiments.run_sit_transfer` result beside the paper's
results (:data:`PAPER_SECTION10`); :func:`sit_transfer_rows` flattens it for a sweep; :func:`save_figure` draws
each target's samples before, after the projection and after the adaptation.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §10, Figures 4 and 5 [SEED]; book/reference.md §A.12 (the §10
numbers) [SEED + CODE].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write
from workbench.experiments.sit_transfer._config import PAPER_SECTION10

__all__ = ["MEASUREMENTS", "sit_transfer_rows", "sit_transfer_table"]

#: The measurements of a row, in the order of :func:`sit_transfer_rows`.
MEASUREMENTS = (
    "d_nn",
    "d_nn_ratio",
    "eff_neighbours",
    "eps_rev",
    "eps_rev_max",
    "rho_skew",
    "heldout_loss",
    "train_loss",
    "qk_parameters",
    "steps",
    "seconds",
)


def _fmt(value) -> str:
    if value is None:
        return "—"
    if value == 0:
        return "0"
    if abs(value) < 1e-2 or abs(value) >= 1e4:
        return f"{value:.2e}"
    return f"{value:.3g}"


def _paper_cell(target: str, state: str) -> str:
    paper = PAPER_SECTION10.get((target, state))
    if paper is None:
        return "—"
    if "fid" in paper:
        return f"FID {paper['fid']:.4f} ± {paper['half_width']:.4f} ({paper['note']})"
    return paper["note"]


def sit_transfer_table(result: dict) -> str:
    r"""Markdown table of a :func:`run_sit_transfer` result: one row per state, Attention Geometry §10 beside it.

    Columns: :math:`d_{\mathrm{NN}}` (and its ratio to the native spacing), :math:`e^{\bar H}`,
    :math:`\varepsilon_{\mathrm{rev}}` (mean / max), :math:`\rho_{\mathrm{skew}}`, the held-out flow-matching loss,
    the query–key weights the logits read, the training steps of the state, seconds, and the paper's result for
    the same state (FID-50k on ImageNet, or its qualitative reading of the samples).  Below the table, per target,
    the direction of the held-out loss along source → projected → adapted, and the caveat that the paper's FID
    and these numbers are different measurements: compare directions, not values.

    Parameters
    ----------
    result : dict
        The dictionary returned by :func:`run_sit_transfer`.

    Returns
    -------
    str

    References
    ----------
    Attention Geometry §10 [SEED]; book/reference.md §A.12.

    Examples
    --------
    >>> row = dict(target="ATTN", state="pretrained", d_nn=0.02, d_nn_ratio=1.2, eff_neighbours=9.5, eps_rev=0.4,
    ...            eps_rev_max=1.1, rho_skew=3.0, heldout_loss=0.95, qk_parameters=16384, steps=3000, seconds=70.0)
    >>> text = sit_transfer_table({"native_spacing": 0.0167, "rows": [row], "direction": []})
    >>> "| ATTN | pretrained | 0.02 (1.2×) | 9.5 | 0.4 / 1.1 | 3 | 0.95 | 16384 | 3000 | 70 | FID 2.7650" in text
    True
    """
    lines = [
        "| Target | State | d_NN (×native) | e^{H̄} | ε_rev mean / max | ρ_skew | held-out FM loss | QK weights | "
        "steps | s | Attention Geometry §10 (ImageNet 256, SiT-XL/2) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        state = r["state"] + (f" (from {r['source']})" if r.get("source") else "")
        lines.append(
            f"| {r['target']} | {state} | {_fmt(r['d_nn'])} ({r['d_nn_ratio']:.2g}×) | {_fmt(r['eff_neighbours'])} | "
            f"{_fmt(r['eps_rev'])} / {_fmt(r['eps_rev_max'])} | {_fmt(r['rho_skew'])} | {r['heldout_loss']:.4g} | "
            f"{r['qk_parameters']} | {r['steps']} | {r['seconds']:.0f} | {_paper_cell(r['target'], r['state'])} |"
        )
    lines.append("")
    for d in result["direction"]:
        loss = " → ".join(f"{v:.4g}" for v in d["heldout_loss"])
        ratio = " → ".join(f"{v:.2g}×" for v in d["d_nn_ratio"])
        lines.append(
            f"- {d['target']}: held-out loss {d['source']} → projected → adapted: {loss}; d_NN / native: {ratio} "
            f"(projection raises the loss: {'yes' if d['projection_raises_loss'] else 'no'}; adaptation lowers it: "
            f"{'yes' if d['adaptation_lowers_loss'] else 'no'}; adapted minus ATTN pretrained: "
            f"{d['adapted_minus_pretrained']:+.2e})."
        )
    lines.append(
        "- Attention Geometry §10: both substitutions first give unusable samples, which adaptation repairs; "
        "DMTN ends near the unmodified model (FID 2.93 against 2.77), DMAP further from it (8.12, with half the "
        "query–key weights and twice the adaptation)."
    )
    lines.append(
        "- FID-50k on ImageNet (cfg 1.5, 50 Euler steps; ± a bootstrap 95% half-width) and d_NN or a held-out "
        "flow-matching loss on a 2-D Swiss roll are different measurements of different models: the comparison "
        "is of direction (projection hurts, adaptation repairs, DMAP is repaired less), not of value."
    )
    lines.append(f"- Native spacing of the training set (mean NN distance): {_fmt(result['native_spacing'])}.")
    return "\n".join(lines) + "\n"


def sit_transfer_rows(result: dict) -> list[dict]:
    """Flat rows of a :func:`run_sit_transfer` result, for a sweep: the keys and the numeric measurements.

    One dict per state: ``target`` and ``state`` (strings, the row's keys) and :data:`MEASUREMENTS` (numbers;
    ``train_loss`` is ``None`` for a projected state, which is not trained).

    Examples
    --------
    >>> row = dict(target="DMAP", state="projected", d_nn=0.5, d_nn_ratio=30.0, eff_neighbours=2.0, eps_rev=1e-15,
    ...            eps_rev_max=2e-15, rho_skew=0.0, heldout_loss=3.1, train_loss=None, qk_parameters=8192,
    ...            steps=0, seconds=2.5, source="DMTN adapted", weights_identical=True, diagnostic_times_used=[1.0])
    >>> sit_transfer_rows({"rows": [row]})[0]["state"], sorted(sit_transfer_rows({"rows": [row]})[0])[:3]
    ('projected', ['d_nn', 'd_nn_ratio', 'eff_neighbours'])
    """
    return [{"target": r["target"], "state": r["state"], **{k: r[k] for k in MEASUREMENTS}} for r in result["rows"]]


def save_figure(path: Path, train: np.ndarray, config, targets, rows: list[dict], samples: dict) -> None:
    """``transfer.png``: per target (rows) its source, projected and adapted samples over the training set."""
    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    by = {(r["target"], r["state"]): r for r in rows}
    lim = 1.1 * max(3.0, float(np.abs(train).max()))
    fig = Figure(figsize=(3 * 2.8, 2.9 * len(targets)))
    axes = fig.subplots(len(targets), 3, squeeze=False)
    for line, target in zip(axes, targets, strict=True):
        source = ("ATTN", "pretrained") if target == "DMTN" or config.dmap_from == "ATTN" else ("DMTN", "adapted")
        for ax, key in zip(line, (source, (target, "projected"), (target, "adapted")), strict=True):
            pts = samples[key]
            ax.scatter(train[:, 0], train[:, 1], s=1, c="0.8")
            ax.scatter(pts[:, 0], pts[:, 1], s=2, c="C3")
            r = by[key]
            ax.set_title(
                f"{key[0]} {key[1]}\nheld-out loss {r['heldout_loss']:.4g}, d_NN {r['d_nn_ratio']:.2g}×", fontsize=8
            )
            ax.set_xlim(-lim, lim)
            ax.set_ylim(-lim, lim)
            ax.set_aspect("equal")
            ax.set_xticks([])
            ax.set_yticks([])
    fig.suptitle("SiT transfer: source → projected (no training) → adapted", fontsize=10)
    fig.tight_layout()
    with atomic_write(path) as temporary:  # format given: the temporary name has no .png
        fig.savefig(temporary, format="png", dpi=110)
