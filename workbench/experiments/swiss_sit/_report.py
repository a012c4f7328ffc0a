r"""The Swiss SiT report: the Markdown table in the layout of Attention Geometry's Table 1, and the sample figures.

:func:`swiss_sit_table` formats a :func:`workbench.experiments.run_swiss_sit` result beside the paper's numbers
(:data:`PAPER_TABLE1`); :func:`save_figures` draws the samples of one condition along the generative time and
the final samples of every condition.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1, Figure 2 [SEED]; book/reference.md §A.12
(Table 1 numbers) [SEED].
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from workbench.experiments.common import atomic_write, restore_floats

__all__ = ["PAPER_TABLE1", "swiss_sit_rows", "swiss_sit_table"]

#: Table 1 of Attention Geometry §9 (Swiss roll, seed 123), transcribed from book/reference.md §A.12
#: [SEED]; keyed by ``(operator, order)``.
PAPER_TABLE1: dict[tuple[str, str], dict[str, float]] = {
    ("DMAP", "ffn-mhsa"): {"d_nn": 0.0506, "eff_neighbours": 27.2, "eps_rev": 2.46e-4, "rho_skew": 0.0},
    ("DMAP", "mhsa-ffn"): {"d_nn": 0.0502, "eff_neighbours": 1.14, "eps_rev": 1.83e-6, "rho_skew": 0.0},
    ("DMTN", "ffn-mhsa"): {"d_nn": 0.0498, "eff_neighbours": 42.4, "eps_rev": 0.224, "rho_skew": 0.287},
    ("DMTN", "mhsa-ffn"): {"d_nn": 0.0508, "eff_neighbours": 11.1, "eps_rev": 0.234, "rho_skew": 0.116},
    ("ATAP", "ffn-mhsa"): {"d_nn": 0.0494, "eff_neighbours": 46.4, "eps_rev": 6.15e-5, "rho_skew": 0.0},
    ("ATAP", "mhsa-ffn"): {"d_nn": 0.0512, "eff_neighbours": 9.63, "eps_rev": 1.27e-5, "rho_skew": 0.0},
    ("ATTN", "ffn-mhsa"): {"d_nn": 0.0499, "eff_neighbours": 56.2, "eps_rev": 0.439, "rho_skew": 0.859},
    ("ATTN", "mhsa-ffn"): {"d_nn": 0.0508, "eff_neighbours": 10.4, "eps_rev": 1.414, "rho_skew": 10.449},
}


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) < 1e-2 or abs(value) >= 1e3:
        return f"{value:.2e}"
    return f"{value:.3g}"


def swiss_sit_table(results: dict) -> str:
    r"""Markdown table of a :func:`run_swiss_sit` result in the layout of Attention Geometry's Table 1.

    Each cell reads ``ours / paper`` (paper: Attention Geometry's); :math:`d_{\mathrm{NN}}` also shows the ratio to the
    native spacing (the paper's raw values are in its own, unrecovered units: compare ratios).

    Parameters
    ----------
    results : dict
        The dictionary returned by :func:`run_swiss_sit`.

    Returns
    -------
    str

    References
    ----------
    Attention Geometry §9, Table 1 [SEED]; book/reference.md §A.12.

    Examples
    --------
    >>> row = dict(operator="DMAP", order="mhsa-ffn", d_nn=0.02, d_nn_ratio=1.2, eff_neighbours=1.5,
    ...            eps_rev=1e-14, rho_skew=0.0)
    >>> text = swiss_sit_table({"native_spacing": 0.0167, "rows": [row]})
    >>> "| DMAP | MHSA→FFN | 0.02 (1.2×) / 0.0506" in text.replace("0.0502", "0.0506")
    True
    """
    lines = [
        "| Op | Order | d_NN (×native) ours / paper | e^{H̄} ours / paper | ε_rev ours / paper | ρ_skew ours / paper |",
        "|---|---|---|---|---|---|",
    ]
    for r in results["rows"]:
        paper = PAPER_TABLE1.get((r["operator"], r["order"]), {})
        order = r["order"].replace("-", "→").upper()

        def pair(k, r=r, paper=paper):
            return f"{_fmt(r[k])} / {_fmt(paper[k]) if k in paper else '—'}"

        d_nn = f"{_fmt(r['d_nn'])} ({r['d_nn_ratio']:.2g}×) / {_fmt(paper['d_nn']) if paper else '—'}"
        lines.append(
            f"| {r['operator']} | {order} | {d_nn} | {pair('eff_neighbours')} | {pair('eps_rev')} | "
            f"{pair('rho_skew')} |"
        )
    lines.append("")
    lines.append(
        f"Native spacing of the training set (mean NN distance): {_fmt(results['native_spacing'])} "
        "(paper: d_NN 0.0494–0.0512, 'close to the native spacing')."
    )
    return "\n".join(lines) + "\n"


#: The measurements :func:`swiss_sit_rows` reads from each row of a run, in the order of its dicts.
_ROW_MEASUREMENTS = ("d_nn", "d_nn_ratio", "eff_neighbours", "eps_rev", "eps_rev_max", "rho_skew", "loss", "seconds")


def _measurement(value) -> float | None:
    """A row's number as a float (``None`` stays ``None``; JSON's ``"nan"``/``"inf"`` spellings become floats)."""
    return None if value is None else float(restore_floats(value))


def swiss_sit_rows(results: dict) -> list[dict]:
    r"""One flat dict per (operator, order) condition of a :func:`run_swiss_sit` result, for ``workbench sweep``.

    The keys are ``operator`` and ``order`` (strings); the measurements are the diagnostics of the sampled model,
    :math:`d_{\mathrm{NN}}` and its ratio to the native spacing, :math:`e^{\bar H}` (``eff_neighbours``), the
    reversibility residual :math:`\varepsilon_{\mathrm{rev}}` averaged over the diagnostic operators and its
    maximum (``eps_rev``, ``eps_rev_max``), :math:`\rho_{\mathrm{skew}}`, the training loss (mean of the last
    tenth of the steps) and the wall-clock ``seconds`` of the condition.  A result read back from
    ``results.json`` (non-finite numbers spelled ``"nan"``, ``"inf"``) gives the same floats as the one returned.

    References
    ----------
    Attention Geometry §9, Table 1 [SEED] (the diagnostics).

    Examples
    --------
    >>> row = dict(operator="DMAP", order="mhsa-ffn", d_nn=0.02, d_nn_ratio=1.2, eff_neighbours=1.5, eps_rev=0.0,
    ...            eps_rev_max="nan", rho_skew=0.0, loss=0.7, seconds=3.5, parameters=1234)
    >>> flat = swiss_sit_rows({"rows": [row]})[0]
    >>> flat["operator"], flat["order"], flat["d_nn_ratio"], flat["eps_rev_max"], "parameters" in flat
    ('DMAP', 'mhsa-ffn', 1.2, nan, False)
    """
    if not isinstance(results, dict) or not isinstance(results.get("rows"), list):
        raise TypeError("results must be the dict returned by run_swiss_sit (with a 'rows' list)")
    return [
        {"operator": r["operator"], "order": r["order"], **{k: _measurement(r.get(k)) for k in _ROW_MEASUREMENTS}}
        for r in results["rows"]
    ]


def save_figures(path: Path, train: np.ndarray, conditions: list[tuple[str, str, dict]]) -> None:
    """Write ``samples.png`` and ``grid.png`` (conditions: ``(operator, order, sampled)``) into ``path``."""
    from matplotlib.figure import Figure  # no pyplot: the caller's backend is left alone

    lim = 1.1 * max(3.0, float(np.abs(train).max()))  # one frame for all panels (noise reaches about ±3)
    pick = next((c for c in conditions if c[0] == "DMTN" and c[1] == "ffn-mhsa"), conditions[0])
    snaps = pick[2]["snapshots"]
    fig = Figure(figsize=(2.6 * (1 + len(snaps)), 2.8))
    axes = fig.subplots(1, 1 + len(snaps), squeeze=False)
    axes = axes[0]
    axes[0].scatter(train[:, 0], train[:, 1], s=1, c="k")
    axes[0].set_title(f"training set ({len(train)})")
    for ax, (tau, pts) in zip(axes[1:], sorted(snaps.items(), reverse=True), strict=True):
        ax.scatter(pts[:, 0], pts[:, 1], s=2, c="C0")
        ax.set_title(f"τ = {tau:g}")
    for ax in axes:
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"{pick[0]} {pick[1].replace('-', '→').upper()}")
    fig.tight_layout()
    with atomic_write(path / "samples.png") as temporary:  # format given: the temporary name has no .png
        fig.savefig(temporary, format="png", dpi=110)

    cols = min(4, len(conditions))
    rows_ = math.ceil(len(conditions) / cols)
    fig = Figure(figsize=(2.8 * cols, 2.8 * rows_))
    axes = fig.subplots(rows_, cols, squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, (op, order, sampled) in zip(axes.ravel(), conditions, strict=False):
        ax.axis("on")
        ax.scatter(train[:, 0], train[:, 1], s=1, c="0.8")
        ax.scatter(sampled["samples"][:, 0], sampled["samples"][:, 1], s=2, c="C3")
        ax.set_title(f"{op} {order.replace('-', '→').upper()}", fontsize=9)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    with atomic_write(path / "grid.png") as temporary:  # format given: the temporary name has no .png
        fig.savefig(temporary, format="png", dpi=110)
