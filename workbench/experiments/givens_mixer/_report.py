r"""Tables and figures of the token-mixer stability experiment (:func:`workbench.experiments.run_givens_mixer`).

References
----------
Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" and "Training stability & speed" [SEED].
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write, restore_floats

__all__ = ["givens_mixer_figures", "givens_mixer_rows", "givens_mixer_table"]


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _best(runs: list[dict]) -> dict[tuple[str, int], dict]:
    """Per (condition, warm-up): the run with the lowest held-out bpb among those that did not diverge."""
    best: dict[tuple[str, int], dict] = {}
    for r in runs:
        key = (r["condition"], r["warmup"])
        if not r["diverged"] and _finite(r["bpb"]) and (key not in best or r["bpb"] < best[key]["bpb"]):
            best[key] = r
    return best


def givens_mixer_rows(result: dict) -> list[dict]:
    """One flat row per (condition, learning rate, warm-up): keys as strings, measurements as numbers (a sweep).

    ``best_lr`` is 1 for the learning rate with the lowest bpb of its condition and warm-up (among the runs that
    did not diverge), so a sweep's mean of it is the fraction of seeds that chose that learning rate.  A run that
    stopped has a NaN bpb (a float, also when the result was read back from JSON).

    Examples
    --------
    >>> run = {"condition": "givens", "lr": 0.01, "warmup": 0, "bpb": 3.0, "diverged": False, "spikes": 0,
    ...        "grad_norm_max": 2.0, "grad_norm_median": 0.5, "final_loss": 2.1, "seconds_per_step": 0.1}
    >>> rows = givens_mixer_rows({"runs": [run]})
    >>> rows[0]["condition"], rows[0]["lr"], rows[0]["warmup"], rows[0]["best_lr"]
    ('givens', '0.01', '0', 1.0)
    """
    runs = restore_floats(result["runs"])  # a run read back from JSON spells NaN "nan"
    best = _best(runs)
    return [
        {
            "condition": r["condition"],
            "lr": f"{r['lr']:g}",
            "warmup": str(r["warmup"]),
            "bpb": r["bpb"],
            "diverged": float(bool(r["diverged"])),
            "spikes": r["spikes"],
            "grad_norm_max": r["grad_norm_max"],
            "grad_norm_median": r["grad_norm_median"],
            "final_loss": r["final_loss"],
            "seconds_per_step": r["seconds_per_step"],
            "best_lr": float(best.get((r["condition"], r["warmup"])) is r),
        }
        for r in runs
    ]


def _number(value, digits: int) -> str:
    return f"{value:.{digits}f}" if _finite(value) else "—"


def givens_mixer_table(result: dict) -> str:
    r"""Markdown: every run, then per condition its best learning rate and how forgiving the grid was.

    The first table has one line per (warm-up, condition, learning rate): held-out masked bpb (bold at the
    condition's best learning rate), diverged, spikes, the largest and median gradient norm before clipping and
    the seconds a step.  The second has one line per (warm-up, condition): the best learning rate and its bpb,
    how many learning rates of the grid did not diverge, the spread :math:`\max - \min` of bpb over those, and the
    time a step relative to attention (median over the grid, same run).

    Examples
    --------
    >>> runs = [{"condition": c, "lr": lr, "warmup": 0, "bpb": b, "diverged": d, "stop_reason": None, "spikes": 0,
    ...          "grad_norm_max": 1.0, "grad_norm_median": 0.5, "seconds_per_step": s, "orthogonality_defect": None}
    ...         for c, lr, b, d, s in (("givens", 0.01, 3.0, False, 0.2), ("givens", 0.03, 2.9, False, 0.2),
    ...                                ("attention", 0.01, 2.8, False, 0.1), ("attention", 0.03, 7.0, True, 0.1))]
    >>> table = givens_mixer_table({"runs": runs})
    >>> print(table.splitlines()[3])
    | 0 | givens | 0.03 | **2.9000** | no | 0 | 1.00 | 0.50 | 0.200 |
    >>> print([line for line in table.splitlines() if line.startswith("| 0 | attention | 0.01")][-1])
    | 0 | attention | 0.01 | 2.8000 | 1 of 2 | — | 1.00 |
    """
    runs = restore_floats(result["runs"])
    best = _best(runs)
    lines = [
        "| warm-up | condition | peak lr | held-out masked bpb | diverged | spikes | max ‖g‖ | median ‖g‖ | s / step |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        bpb = _number(r["bpb"], 4)
        if best.get((r["condition"], r["warmup"])) is r:
            bpb = f"**{bpb}**"
        diverged = "no" if not r["diverged"] else ("yes" if r.get("stop_reason") is None else "yes (stopped)")
        lines.append(
            f"| {r['warmup']} | {r['condition']} | {r['lr']:g} | {bpb} | {diverged} | {r['spikes']} "
            f"| {_number(r['grad_norm_max'], 2)} | {_number(r['grad_norm_median'], 2)} "
            f"| {_number(r['seconds_per_step'], 3)} |"
        )
    lines += [
        "",
        "| warm-up | condition | best lr | bpb at best lr | lrs not diverged | bpb spread over those "
        "| s / step vs attention |",
        "|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, int], list[dict]] = {}
    for r in runs:
        groups.setdefault((r["condition"], r["warmup"]), []).append(r)
    for (condition, warmup), members in groups.items():
        chosen = best.get((condition, warmup))
        stable = [r["bpb"] for r in members if not r["diverged"] and _finite(r["bpb"])]
        spread = _number(max(stable) - min(stable), 4) if len(stable) > 1 else "—"
        attention = groups.get(("attention", warmup))
        speed = "—"
        if attention:
            ratio = np.median([r["seconds_per_step"] for r in members]) / np.median(
                [r["seconds_per_step"] for r in attention]
            )
            speed = _number(float(ratio), 2)
        lr, bpb = (f"{chosen['lr']:g}", _number(chosen["bpb"], 4)) if chosen else ("—", "—")
        lines.append(
            f"| {warmup} | {condition} | {lr} | {bpb} | {len(stable)} of {len(members)} | {spread} | {speed} |"
        )
    return "\n".join(lines)


def _smooth(values, window: int) -> np.ndarray:
    """Running mean over the last ``window`` values (fewer at the start)."""
    v = np.asarray(values, dtype=float)
    c = np.concatenate([[0.0], np.cumsum(v)])
    i = np.arange(1, len(v) + 1)
    lo = np.maximum(0, i - window)
    return (c[i] - c[lo]) / (i - lo)


def givens_mixer_figures(result: dict) -> tuple:
    """The two figures of a run: final bpb against the peak learning rate, and the curves at the largest one.

    Left figure: one panel per warm-up, held-out masked bpb against the learning rate (log axis) for each
    condition; a cross marks a diverged run (at its bpb, or at the top of the panel when it has none).  Right
    figure: training loss (running mean over ``spike_window`` steps) and gradient norm before clipping, per
    condition, at the largest learning rate of the grid.
    """
    import matplotlib.pyplot as plt

    runs = restore_floats(result["runs"])
    warmups = list(dict.fromkeys(r["warmup"] for r in runs))
    conditions = list(dict.fromkeys(r["condition"] for r in runs))
    colours = {c: f"C{i}" for i, c in enumerate(conditions)}
    sweep, axes = plt.subplots(1, len(warmups), figsize=(5.5 * len(warmups), 4), squeeze=False, sharey=True)
    finite = [r["bpb"] for r in runs if _finite(r["bpb"])]
    top = max(finite) if finite else 8.0
    for ax, warmup in zip(axes[0], warmups, strict=True):
        for c in conditions:
            members = sorted((r for r in runs if r["condition"] == c and r["warmup"] == warmup), key=lambda r: r["lr"])
            lrs = [r["lr"] for r in members]
            ax.plot(lrs, [r["bpb"] if _finite(r["bpb"]) else np.nan for r in members], "o-", color=colours[c], label=c)
            bad = [r for r in members if r["diverged"]]
            ax.plot(
                [r["lr"] for r in bad], [r["bpb"] if _finite(r["bpb"]) else top for r in bad], "x", color=colours[c]
            )
        ax.set_xscale("log")
        grid = sorted({r["lr"] for r in runs})
        ax.set_xticks(grid, [f"{lr:g}" for lr in grid])
        ax.minorticks_off()
        ax.set(xlabel="peak learning rate", title=f"warm-up {warmup} steps (x: diverged)")
        ax.legend(fontsize=8)
    axes[0, 0].set_ylabel("held-out masked bits per byte")
    sweep.tight_layout()

    window = int(result.get("config", {}).get("spike_window", 1))
    largest = max(r["lr"] for r in runs)
    curves, axes = plt.subplots(2, len(warmups), figsize=(5.5 * len(warmups), 6), squeeze=False, sharex=True)
    for j, warmup in enumerate(warmups):
        for r in (r for r in runs if r["lr"] == largest and r["warmup"] == warmup):
            loss, norm = r["curve"]["train_loss"], r["curve"]["grad_norm"]
            steps = np.arange(1, len(loss) + 1)
            axes[0, j].plot(steps, _smooth(loss, window), color=colours[r["condition"]], label=r["condition"])
            axes[1, j].plot(steps, norm, color=colours[r["condition"]], lw=0.8)
        axes[0, j].set(title=f"peak lr {largest:g}, warm-up {warmup}", ylabel=f"train loss (mean of {window})")
        axes[1, j].set(xlabel="step", ylabel="‖g‖ before clipping", yscale="log")
        axes[0, j].legend(fontsize=8)
    curves.tight_layout()
    return sweep, curves


def save_figures(result: dict, path: Path) -> None:
    """Write ``lr_sweep.png`` and ``curves.png`` of a :func:`run_givens_mixer` result into ``path``."""
    # No backend is forced: headless, pyplot falls back to Agg itself; in a notebook the figure stays inline.
    import matplotlib.pyplot as plt

    for fig, name in zip(givens_mixer_figures(result), ("lr_sweep.png", "curves.png"), strict=True):
        with atomic_write(Path(path) / name) as temporary:  # format given: the temporary name has no .png
            fig.savefig(temporary, format="png", dpi=120)
        plt.close(fig)
