r"""The certified-radius experiment's report: flat rows for a sweep, the Markdown table, the figure.

:func:`spd_certified_table` formats a :func:`workbench.experiments.run_spd_certified` result, one line per model
(capped SPD-MLPs, the uncapped one, the dense baseline): accuracy, median certified radius, the Lipschitz
bounds and, per :math:`\varepsilon`, the certified accuracy (cheap and exact bound) beside the empirical robust
accuracy under attack.  :func:`save_figure` draws the certified accuracy against :math:`\varepsilon` per model
and the accuracy against the median radius (the trade-off).

References
----------
Lie-Exponential Roadmap, "SPD-MLP with Lipschitz control" and "Robustness & certification" [SEED].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write, restore_floats

__all__ = ["spd_certified_rows", "spd_certified_table"]


def _eps_key(eps: float) -> str:
    return f"{eps:g}"


def spd_certified_rows(result: dict) -> list[dict]:
    r"""One flat row per model of a :func:`run_spd_certified` result (for ``workbench sweep``).

    The key is ``model`` (string); the measurements are the accuracy, the median radii, the bounds, the cap
    (``None`` when uncapped), the soundness counts, and per :math:`\varepsilon` of the grid
    ``certified_exact@<eps>``, ``certified_cheap@<eps>`` and ``robust@<eps>``.

    Examples
    --------
    >>> row = {"model": "spd-L2", "cap": 2.0, "accuracy": 0.9, "train_accuracy": 1.0, "median_radius_cheap": 0.1,
    ...        "median_radius_exact": 0.2, "lip_cheap": 4.0, "lip_exact": 3.0, "lip_lower": 1.5, "seconds": 1.0,
    ...        "attack_radius_ratio_median": 3.0, "certified_cheap": [0.9, 0.1], "certified_exact": [0.9, 0.3],
    ...        "robust": [0.9, 0.8], "violations": [0, 0], "sound_attack_flips": 0, "sound_random_flips": 0}
    >>> flat = spd_certified_rows({"config": {"radii": [0.0, 0.5]}, "runs": [row]})[0]
    >>> flat["model"], flat["certified_exact@0.5"], flat["robust@0.5"], flat["violations"]
    ('spd-L2', 0.3, 0.8, 0)
    """
    result = restore_floats(result)
    radii = result["config"]["radii"]
    rows = []
    for r in result["runs"]:
        row = {"model": r["model"], "cap": r["cap"]}
        for field in (
            "accuracy",
            "train_accuracy",
            "median_radius_cheap",
            "median_radius_exact",
            "lip_cheap",
            "lip_exact",
            "lip_lower",
            "attack_radius_ratio_median",
            "seconds",
        ):
            row[field] = r[field]
        row["violations"] = sum(r["violations"]) + r["sound_attack_flips"] + r["sound_random_flips"]
        for k, eps in enumerate(radii):
            row[f"certified_exact@{_eps_key(eps)}"] = r["certified_exact"][k]
            row[f"certified_cheap@{_eps_key(eps)}"] = r["certified_cheap"][k]
            row[f"robust@{_eps_key(eps)}"] = r["robust"][k]
        rows.append(row)
    return rows


def spd_certified_table(result: dict) -> str:
    """Markdown: per model, accuracy, median radius, bounds, and per ε certified (cheap / exact) vs empirical.

    Examples
    --------
    >>> row = {"model": "spd-L2", "cap": 2.0, "accuracy": 0.9, "median_radius_cheap": 0.1,
    ...        "median_radius_exact": 0.2, "lip_cheap": 4.0, "lip_exact": 3.0, "lip_lower": 1.5,
    ...        "attack_radius_ratio_median": 3.0, "certified_cheap": [0.9, 0.1], "certified_exact": [0.9, 0.3],
    ...        "robust": [0.9, 0.8], "violations": [0, 0], "sound_attack_flips": 0, "sound_random_flips": 0}
    >>> print(spd_certified_table({"config": {"radii": [0.0, 0.5]}, "runs": [row]}).splitlines()[2])
    | spd-L2 | 0.900 | 0.100 / 0.200 | 4.00 / 3.00 / 1.50 | 3.0 | 0.90 / 0.90 / 0.90 | 0.10 / 0.30 / 0.80 | 0 |
    """
    result = restore_floats(result)
    if not isinstance(result, dict) or not isinstance(result.get("runs"), list):
        raise TypeError("result must be the dict returned by run_spd_certified (with a 'runs' list)")
    radii = result["config"]["radii"]
    lines = [
        "| model | accuracy | median radius (cheap / exact) | Lip bound (cheap / exact / lower) "
        "| attack radius / r (median) | "
        + " | ".join(f"ε={_eps_key(e)}: cert. cheap / exact / attack" for e in radii)
        + " | violations |",
        "|---|---|---|---|---|" + "---|" * len(radii) + "---|",
    ]
    for r in result["runs"]:
        per_eps = " | ".join(
            f"{c:.2f} / {e:.2f} / {a:.2f}"
            for c, e, a in zip(r["certified_cheap"], r["certified_exact"], r["robust"], strict=True)
        )
        violations = sum(r["violations"]) + r["sound_attack_flips"] + r["sound_random_flips"]
        lines.append(
            f"| {r['model']} | {r['accuracy']:.3f} | {r['median_radius_cheap']:.3f} / {r['median_radius_exact']:.3f} "
            f"| {r['lip_cheap']:.2f} / {r['lip_exact']:.2f} / {r['lip_lower']:.2f} "
            f"| {r['attack_radius_ratio_median']:.1f} | {per_eps} | {violations} |"
        )
    lines += [
        "",
        "Certified accuracy: correct with r(x) > ε, r from the cheap (Gershgorin, or √(‖A‖₁‖A‖∞) for the dense "
        "baseline) or the exact (e^λmax, σ_max) product of layer norms; attack: empirical robust accuracy under "
        "targeted ℓ2 PGD (an upper bound of the true robust accuracy, the certificates lower bounds).  Lower: the "
        "largest Jacobian norm on the test set.  Violations (certified yet broken, or broken inside 0.99·r) must "
        "be 0.",
    ]
    return "\n".join(lines)


def save_figure(result: dict, path: Path) -> None:
    """Write ``certified_radius.png``: certified accuracy against ε per model, and accuracy against median radius."""
    # No backend is forced: headless, pyplot falls back to Agg itself; in a notebook the figure stays inline.
    import matplotlib.pyplot as plt

    result = restore_floats(result)
    runs = result["runs"]
    radii = result["config"]["radii"]
    top = max(max(r["radii_exact"]) for r in runs) or 1.0
    grid = np.linspace(0.0, top, 200)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for r in runs:
        exact, cheap = np.asarray(r["radii_exact"]), np.asarray(r["radii_cheap"])
        (line,) = axes[0].plot(grid, [(exact > e).mean() for e in grid], label=r["model"])
        axes[0].plot(grid, [(cheap > e).mean() for e in grid], ls="--", lw=1, color=line.get_color())
        axes[0].plot(radii, r["robust"], "o", ms=4, color=line.get_color())
        axes[1].plot(r["median_radius_exact"], r["accuracy"], "o", color=line.get_color())
        axes[1].annotate(r["model"], (r["median_radius_exact"], r["accuracy"]), fontsize=8)
    axes[0].set(xlabel="ε (ℓ2)", ylabel="accuracy", title="certified (solid: exact, dashed: cheap); dots: attack")
    axes[0].title.set_fontsize(9)
    axes[0].legend(fontsize=8)
    axes[1].set(xlabel="median certified radius (exact bound, correct points)", ylabel="clean test accuracy")
    axes[1].set_title("accuracy against certified radius", fontsize=9)
    fig.tight_layout()
    with atomic_write(Path(path) / "certified_radius.png") as temporary:  # format given: no .png suffix
        fig.savefig(temporary, format="png", dpi=120)
    plt.close(fig)
