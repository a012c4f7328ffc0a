r"""The induction experiment's report: the Markdown table beside Attention Geometry's §11 numbers, and the figures.

:func:`induction_table` formats a :func:`workbench.experiments.run_induction` result (one row per operator and
architecture) and quotes the paper's depth-32 induction accuracies (:data:`PAPER_INDUCTION`);
:func:`save_figures` draws the loss curves and the induction head's score and entropy over training.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Tables 2–3 [SEED]; book/reference.md §A.12 (§11
numbers), §A.10 (entropy, :math:`e^{\bar H}`).
"""

from __future__ import annotations

import math
from pathlib import Path

from workbench.experiments.common import atomic_write, restore_floats

__all__ = ["PAPER_INDUCTION", "induction_rows", "induction_table"]

#: Attention Geometry's §11 depth-32 sequence (Tables 2–3): (stage, operator, induction accuracy).  [SEED]
PAPER_INDUCTION = (("A0", "ATTN", 0.8081), ("M1", "DMTN", 0.5735), ("A1", "ATTN", 0.8334), ("M2", "DMTN", 0.4676))


def induction_table(results: dict) -> str:
    """Markdown table of the runs, with Attention Geometry's §11 induction accuracies for context.

    Columns: Operator | Arch | final repeat-half loss | induction acc | shifted-period acc (the probe of
    :func:`shifted_period_accuracy`, "—" when absent) | transition step (or "none") | best head induction score |
    its entropy.

    References
    ----------
    Attention Geometry §11, Tables 2–3 [SEED]; book/reference.md §A.12.

    Examples
    --------
    >>> run = {"operator": "ATTN", "architecture": "mlp", "final_repeat_loss": 0.5, "induction_accuracy": 0.9,
    ...        "transition": {"detected": True, "step": 425.0}, "best_head": {"layer": 1, "head": 0,
    ...        "induction_score": 0.8, "entropy": 0.3}}
    >>> print(induction_table({"runs": [run]}).splitlines()[2])
    | ATTN | mlp | 0.500 | 0.900 | — | 425 | 0.800 (L1H0) | 0.300 |
    """
    if not isinstance(results, dict) or not isinstance(results.get("runs"), list):
        raise TypeError("results must be the dict returned by run_induction (with a 'runs' list)")
    lines = [
        "| Operator | Arch | final repeat-half loss | induction acc | shifted-period acc | transition step "
        "| best head induction score | its entropy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in results["runs"]:
        t = run.get("transition") or {}
        step = f"{t['step']:.0f}" if t.get("detected") else "none"
        head = run["best_head"]
        probe = run.get("shifted_period_accuracy")
        probe = "—" if probe is None else f"{probe:.3f}"
        lines.append(
            f"| {run['operator']} | {run['architecture']} | {run['final_repeat_loss']:.3f} | "
            f"{run['induction_accuracy']:.3f} | {probe} | {step} | {head['induction_score']:.3f} "
            f"(L{head['layer']}H{head['head']}) | {head['entropy']:.3f} |"
        )
    quoted = ", ".join(f"{stage} {op} {acc:.4f}" for stage, op, acc in PAPER_INDUCTION)
    lines.append("")
    lines.append(
        f"Paper (Attention Geometry §11, Tables 2–3, depth-32 ~1.9B model, induction accuracy): {quoted}. "
        "Workbench scale differs by orders of magnitude; compare orderings, not values."
    )
    return "\n".join(lines)


def _measurement(value) -> float | None:
    """A run's number as a float (``None`` stays ``None``; JSON's ``"nan"``/``"inf"`` spellings become floats)."""
    return None if value is None else float(restore_floats(value))


def induction_rows(results: dict) -> list[dict]:
    """One flat dict per (operator, architecture) run of a :func:`run_induction` result, for ``workbench sweep``.

    The keys are ``operator`` and ``architecture`` (strings); the measurements are the final repeated-half loss,
    the induction accuracy (top-1 on the repeated half), the shifted-period probe's accuracy (``None`` in results
    written before the probe existed), the step of the detected phase transition (``transition_step``, ``None``
    when :func:`detect_phase_transition` found none), the best head's final induction score
    (``best_head_induction_score``) and the wall-clock ``seconds`` of the run.  A result read back from
    ``results.json`` gives the same floats as the one returned.

    References
    ----------
    Attention Geometry §11, Tables 2–3 [SEED] (the induction accuracy); Olsson et al. (2022) (the transition).

    Examples
    --------
    >>> run = {"operator": "DMTN", "architecture": "mlp", "final_repeat_loss": 0.5, "induction_accuracy": 0.9,
    ...        "shifted_period_accuracy": 0.1, "transition": {"detected": False, "step": None},
    ...        "best_head": {"layer": 1, "head": 0, "induction_score": 0.8}, "seconds": 12.0}
    >>> flat = induction_rows({"runs": [run]})[0]
    >>> flat["operator"], flat["architecture"], flat["transition_step"], flat["best_head_induction_score"]
    ('DMTN', 'mlp', None, 0.8)
    """
    if not isinstance(results, dict) or not isinstance(results.get("runs"), list):
        raise TypeError("results must be the dict returned by run_induction (with a 'runs' list)")
    rows = []
    for run in results["runs"]:
        transition = run.get("transition") or {}
        rows.append(
            {
                "operator": run["operator"],
                "architecture": run["architecture"],
                "final_repeat_loss": _measurement(run["final_repeat_loss"]),
                "induction_accuracy": _measurement(run["induction_accuracy"]),
                "shifted_period_accuracy": _measurement(run.get("shifted_period_accuracy")),
                "transition_step": _measurement(transition.get("step")) if transition.get("detected") else None,
                "best_head_induction_score": _measurement(run["best_head"]["induction_score"]),
                "seconds": _measurement(run.get("seconds")),
            }
        )
    return rows


def save_figures(result: dict, path: Path) -> None:
    """Write ``loss_curves.png`` and ``induction_heads.png`` of a :func:`run_induction` result into ``path``."""
    # No backend is forced: headless, pyplot falls back to Agg itself; in a notebook the figure stays inline.
    import matplotlib.pyplot as plt

    runs = result["runs"]
    archs = list(dict.fromkeys(r["architecture"] for r in runs))
    vocab = result["config"]["vocab_size"]
    fig, axes = plt.subplots(1, len(archs), figsize=(5.5 * len(archs), 4), squeeze=False, sharey=True)
    for ax, arch in zip(axes[0], archs, strict=True):
        for r in (r for r in runs if r["architecture"] == arch):
            (line,) = ax.plot(r["curves"]["steps"], r["curves"]["repeat_loss"], label=f"{r['operator']} repeat half")
            ax.plot(r["curves"]["steps"], r["curves"]["first_half_loss"], ls=":", color=line.get_color(), lw=1)
            t = r["transition"] or {}
            if t.get("detected"):
                ax.axvline(t["step"], color=line.get_color(), ls="--", lw=1)
        ax.axhline(math.log(vocab), color="grey", lw=0.8, label="log V")
        ax.set(title=f"{arch}: repeated-half loss (dotted: first half; dashed: transition)", xlabel="step")
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("loss (nats)")
    fig.tight_layout()
    with atomic_write(path / "loss_curves.png") as temporary:  # format given: the temporary name has no .png
        fig.savefig(temporary, format="png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for r in runs:
        layer, head = r["best_head"]["layer"], r["best_head"]["head"]
        label = f"{r['operator']}/{r['architecture']} L{layer}H{head}"
        axes[0].plot(r["curves"]["steps"], [s[layer][head] for s in r["curves"]["induction_score"]], label=label)
        axes[1].plot(r["curves"]["steps"], [e[layer][head] for e in r["curves"]["entropy"]], label=label)
    if runs:
        axes[1].axhline(runs[0]["uniform_entropy"], color="grey", lw=0.8, label="uniform causal head")
    axes[0].set_ylabel("induction score")
    axes[1].set(ylabel="mean row entropy (nats)", xlabel="step")
    axes[1].legend(fontsize=7)
    fig.suptitle("induction head (largest final induction score) over training")
    fig.tight_layout()
    with atomic_write(path / "induction_heads.png") as temporary:  # format given: the temporary name has no .png
        fig.savefig(temporary, format="png", dpi=120)
    plt.close(fig)
