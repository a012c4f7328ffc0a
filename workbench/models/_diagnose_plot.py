r"""The figure of a diagnosis: heatmaps of each layer's effective walk, mean transport Gram and head geometry.

Kept apart from :mod:`workbench.models._diagnose` (the readings) because it is its own subject — matplotlib,
labels, colour scales — and the readings module stays under the project's module size.

References
----------
"From Self-Attention to Connection Laplacian", Figure 2; ISA ML01 (the heads' subspace distances).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.models._diagnose import Diagnosis

__all__ = ["plot_diagnosis"]


#: The most token labels a heatmap axis carries; beyond it every k-th token is labelled.
LEGIBLE_LABELS = 24


def plot_diagnosis(diagnosis: Diagnosis, path=None):
    r"""Heatmaps of each layer's effective walk and mean transport Gram matrix (the Connection Laplacian Figure 2).

    Row 1: :math:`A_{\mathrm{eff}}^\ell` on the content tokens (special tokens such as ``[CLS]``/``[SEP]``/BOS
    removed and rows renormalised for display, as the figure says).  Row 2: the :math:`A_{\mathrm{eff}}`-weighted
    mean Gram matrix :math:`\bar G^\ell` of the transports, its leading 48×48 block, on a symmetric colour scale.
    Row 3 (when the diagnosis carries the weights' geometry): the head-by-head geodesic distance between the
    heads' query–key subspaces in :math:`\mathrm{Gr}(d_h, D)^2`, with the random null's median marked on the colour
    bar and the text's Spearman :math:`\rho` against attention-pattern distance in the title.
    Every heatmap has its own colour bar, labelled with its quantity; at most ``LEGIBLE_LABELS`` token labels
    per axis (every k-th token beyond that), so the figure stays legible at any length.

    Parameters
    ----------
    diagnosis : Diagnosis
    path : str or Path, optional
        Where to save the figure (PNG, PDF, ... by suffix).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(diagnosis, Diagnosis):
        raise TypeError(f"diagnosis must be a Diagnosis (from diagnose), got {type(diagnosis).__name__}")
    import matplotlib.pyplot as plt

    L = diagnosis.a_eff.shape[0]
    keep = np.flatnonzero(diagnosis.content)
    labels = [diagnosis.tokens[i] for i in keep]
    step = max(1, math.ceil(len(labels) / LEGIBLE_LABELS))
    ticks = list(range(0, len(labels), step))
    columns = min(L, 6)
    rows = math.ceil(L / columns)
    per = 2 if diagnosis.geometry is None else 3  # panels per layer, stacked
    fig, axes = plt.subplots(per * rows, columns, figsize=(3.8 * columns, 3.5 * per * rows), squeeze=False)
    fig.set_layout_engine("constrained")
    for layer in range(L):
        top, ax_col = per * (layer // columns), layer % columns
        if diagnosis.geometry is not None:
            _plot_subspace_distances(fig, axes[top + 2, ax_col], diagnosis, layer)
        walk = diagnosis.a_eff[layer][np.ix_(keep, keep)]
        walk = walk / walk.sum(axis=1, keepdims=True)
        ax = axes[top, ax_col]
        image = ax.imshow(walk, cmap="viridis", vmin=0.0)
        ax.set_title(f"layer {layer}: $A_{{\\rm eff}}$", fontsize=10)
        ax.set_xticks(ticks, [labels[i] for i in ticks], rotation=90, fontsize=8)
        ax.set_yticks(ticks, [labels[i] for i in ticks], fontsize=8)
        ax.set_xlabel("attended token $j$", fontsize=9)
        ax.set_ylabel("query token $i$", fontsize=9)
        bar = fig.colorbar(image, ax=ax, shrink=0.75)
        bar.set_label(r"$A_{\rm eff}(i, j)$, rows renormalised", fontsize=8)
        bar.ax.tick_params(labelsize=8)
        block = diagnosis.mean_gram[layer][:48, :48]
        ax = axes[top + 1, ax_col]
        if not np.all(np.isfinite(block)):
            ax.set_axis_off()
            ax.set_title(r"$\bar G$ undefined (fewer than two content tokens)", fontsize=9)
            continue
        bound = float(np.abs(block).max())
        image = ax.imshow(block, cmap="RdBu_r", vmin=-bound, vmax=bound)
        ratio = diagnosis.layers[layer].gram_diagonal_ratio
        ax.set_title(rf"$\bar G$: |diag| / |off-diag| = {ratio:.1f}", fontsize=9)
        edge = block.shape[0] - 1
        ax.set_xticks(sorted({0, edge // 3, 2 * edge // 3, edge}))
        ax.set_yticks(sorted({0, edge // 3, 2 * edge // 3, edge}))
        ax.tick_params(labelsize=8)
        ax.set_xlabel(f"feature $b$ (first {block.shape[0]} of $D$)", fontsize=9)
        ax.set_ylabel("feature $a$", fontsize=9)
        bar = fig.colorbar(image, ax=ax, shrink=0.75)
        bar.set_label(r"mean transport Gram $\bar G_{ab}$", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    for spare in range(L, rows * columns):
        for offset in range(per):
            axes[per * (spare // columns) + offset, spare % columns].set_axis_off()
    removed = [t for t, c in zip(diagnosis.tokens, diagnosis.content, strict=True) if not c]
    note = (
        f"special tokens removed ({', '.join(sorted(set(removed)))}) and rows renormalised"
        if removed
        else "all tokens shown"
    )
    shown = diagnosis.text if len(diagnosis.text) <= 80 else diagnosis.text[:77] + "…"
    fig.suptitle(f"{diagnosis.model}: {shown!r}\n$A_{{\\rm eff}}$ panels: {note}; {len(labels)} tokens", fontsize=11)
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _plot_subspace_distances(fig, ax, diagnosis: Diagnosis, layer: int) -> None:
    geometry = diagnosis.geometry
    D = geometry.layers[layer].distances["QK"].copy()
    np.fill_diagonal(D, np.nan)  # a head's distance to itself is 0 and would take the whole colour scale
    null = geometry.null["qk_median_distance"]
    image = ax.imshow(D, cmap="magma", vmin=float(np.nanmin(D)), vmax=max(float(np.nanmax(D)), null))
    reading = diagnosis.layers[layer]
    rho = reading.subspace_rho
    rho = "undefined" if rho is None else f"{rho:+.2f} (p = {reading.subspace_p_value:.2g})"
    ax.set_title(f"heads' QK subspace distance\nSpearman ρ vs attention: {rho}", fontsize=9)
    heads = range(0, D.shape[0], max(1, math.ceil(D.shape[0] / 12)))
    ax.set_xticks(list(heads))
    ax.set_yticks(list(heads))
    ax.set_xlabel("head $b$", fontsize=9)
    ax.set_ylabel("head $a$", fontsize=9)
    ax.tick_params(labelsize=8)
    bar = fig.colorbar(image, ax=ax, shrink=0.75)
    bar.set_label(r"geodesic distance in Gr$(d_h, D)^2$", fontsize=8)
    bar.ax.axhline(null, color="cyan", linewidth=2)  # the median distance of two random heads' subspaces
    bar.ax.text(-0.1, null, "random ", transform=bar.ax.get_yaxis_transform(), fontsize=7, va="center", ha="right")
    bar.ax.tick_params(labelsize=8)
