r"""Tables, rows, crossover and figure of the long-context experiment (numpy and matplotlib only).

The crossover of two cost curves measured at a few contexts :math:`n_1 < \dots < n_k` is read on log-log
axes: with :math:`r_i = \mathrm{time}_{\text{banded}}(n_i)/\mathrm{time}_{\text{dense}}(n_i)`, the banded layer
overtakes for good between the last :math:`n_i` with :math:`r_i > 1` and the next one, where

.. math::

    \log n^\star = \log n_i + \frac{-\log r_i}{\log r_{i+1} - \log r_i}\,(\log n_{i+1} - \log n_i),

exact when both costs are power laws between the two measured contexts (:math:`O(n^2)` against :math:`O(n)`
gives :math:`r \propto 1/n`, a straight line on those axes).

References
----------
Lie-Exponential Roadmap, "Long-context efficiency" and "ExpMarkovAttention (global, normalized attention)"
[SEED] (banded :math:`e^{tQ}V` at :math:`O(k\cdot\mathrm{nnz}(Q)\cdot d)` against :math:`O(n^2)` attention).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.experiments.common import atomic_write

__all__ = [
    "crossover_context",
    "long_context_figure",
    "long_context_rows",
    "long_context_table",
]


def crossover_context(contexts, ratios) -> dict:
    r"""The context where a cost ratio :math:`r(n) = \mathrm{banded}/\mathrm{dense}` drops below 1 for good.

    Interpolated linearly in :math:`(\log n, \log r)` between the last measured context with :math:`r > 1` and
    the next one (formula in the module docstring).

    Parameters
    ----------
    contexts : sequence of int
        Strictly increasing contexts :math:`n_i`.
    ratios : sequence of float
        Positive finite ratios :math:`r_i` (banded time over dense time; above 1: the banded layer is slower).

    Returns
    -------
    dict
        ``context`` (:math:`n^\star`, or ``None``), ``status`` (``"crossed"``; ``"ahead from the start"`` when
        :math:`r \le 1` at every context, :math:`n^\star \le n_1`; ``"not reached"`` when :math:`r_k > 1`), and
        ``range`` (:math:`[n_1, n_k]`).

    Raises
    ------
    ValueError
        Contexts not strictly increasing, lengths that differ, or ratios not positive and finite.

    References
    ----------
    Lie-Exponential Roadmap, "Long-context efficiency" [SEED].

    Examples
    --------
    Dense :math:`a n^2` against banded :math:`b n`: :math:`r = (b/a)/n` crosses 1 at :math:`n^\star = b/a`.

    >>> n = [256, 512, 1024, 2048]
    >>> crossing = crossover_context(n, [700 / c for c in n])
    >>> round(crossing["context"], 9), crossing["status"], crossing["range"]
    (700.0, 'crossed', [256, 2048])
    >>> crossover_context(n, [3.0, 2.0, 1.5, 1.2])["status"]
    'not reached'
    """
    n = np.asarray(contexts, dtype=float)
    r = np.asarray(ratios, dtype=float)
    if n.ndim != 1 or n.size < 1 or np.any(np.diff(n) <= 0) or np.any(n <= 0):
        raise ValueError(f"contexts must be strictly increasing positive numbers, got {list(contexts)}")
    if r.shape != n.shape or not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(
            f"ratios must be {n.size} positive finite numbers (one per context), got {np.atleast_1d(ratios).tolist()}"
        )
    span = [int(n[0]) if n[0] == int(n[0]) else float(n[0]), int(n[-1]) if n[-1] == int(n[-1]) else float(n[-1])]
    slower = np.flatnonzero(r > 1.0)
    if slower.size == 0:
        return {"context": None, "status": "ahead from the start", "range": span}
    i = int(slower[-1])
    if i == n.size - 1:
        return {"context": None, "status": "not reached", "range": span}
    x0, x1, y0, y1 = math.log(n[i]), math.log(n[i + 1]), math.log(r[i]), math.log(r[i + 1])
    return {"context": math.exp(x0 + (-y0) / (y1 - y0) * (x1 - x0)), "status": "crossed", "range": span}


def _crossover_text(crossing: dict) -> str:
    low, high = crossing["range"]
    if crossing["status"] == "crossed":
        return f"n* ≈ {crossing['context']:.0f}"
    if crossing["status"] == "not reached":
        return f"not reached in {low}–{high}"
    return f"ahead from n = {low} (n* ≤ {low})"


def _fmt(value, spec: str) -> str:
    return "—" if value is None or (isinstance(value, float) and not math.isfinite(value)) else format(value, spec)


def long_context_table(result: dict) -> str:
    """Markdown: per context the held-out bpb of both mixers, the speed ratios, saved activations; crossovers.

    Speed ratios are exp-Markov tokens/s over softmax tokens/s (above 1: the banded layer is faster); saved
    activations are the bytes autograd keeps for the backward pass of the mixers of every layer.

    Examples
    --------
    >>> row = {"context": 256, "bpb": {"softmax": 2.5, "exp-markov": 2.6}, "speed_ratio": {"forward": 0.5,
    ...        "forward_backward": 0.8}, "saved_mib": {"softmax": 1.0, "exp-markov": 6.0, "softmax-explicit": 9.0},
    ...        "learned_t": [0.9, 1.4]}
    >>> result = {"contexts": [row], "crossover": {"forward": {"context": None, "status": "not reached",
    ...           "range": [256, 256]}, "forward_backward": {"context": 300.0, "status": "crossed",
    ...           "range": [256, 512]}}}
    >>> print(long_context_table(result).splitlines()[2])
    | 256 | 2.5000 | 2.6000 | +0.1000 | 0.50 | 0.80 | 1.00 | 6.00 | 9.00 | 0.90, 1.40 |
    """
    lines = [
        "| context | bpb softmax | bpb exp-Markov | Δ bpb | fwd tokens/s ratio | fwd+bwd tokens/s ratio "
        "| saved MiB softmax (fused) | saved MiB exp-Markov | saved MiB softmax (explicit n×n) | learned t per layer |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["contexts"]:
        bpb, saved = row["bpb"], row["saved_mib"]
        soft, exp = bpb.get("softmax"), bpb.get("exp-markov")
        delta = exp - soft if soft is not None and exp is not None else None
        times = ", ".join(f"{t:.2f}" for t in row.get("learned_t") or ()) or "—"
        lines.append(
            f"| {row['context']} | {_fmt(soft, '.4f')} | {_fmt(exp, '.4f')} | {_fmt(delta, '+.4f')} "
            f"| {_fmt(row['speed_ratio']['forward'], '.2f')} | {_fmt(row['speed_ratio']['forward_backward'], '.2f')} "
            f"| {_fmt(saved.get('softmax'), '.2f')} | {_fmt(saved.get('exp-markov'), '.2f')} "
            f"| {_fmt(saved.get('softmax-explicit'), '.2f')} | {times} |"
        )
    peaks = [row for row in result["contexts"] if any((row.get("cuda_peak_mib") or {}).values())]
    if peaks:
        lines += ["", "| context | GPU peak MiB softmax | GPU peak MiB exp-Markov | GPU peak MiB softmax (explicit) |"]
        lines.append("|---|---|---|---|")
        for row in peaks:
            peak = row["cuda_peak_mib"]
            cells = " | ".join(_fmt(peak.get(k), ".1f") for k in ("softmax", "exp-markov", "softmax-explicit"))
            lines.append(f"| {row['context']} | {cells} |")
    crossing = result["crossover"]
    lines.append("")
    lines.append(
        f"Banded exp-Markov overtakes fused softmax: forward {_crossover_text(crossing['forward'])}; "
        f"forward+backward {_crossover_text(crossing['forward_backward'])}."
    )
    return "\n".join(lines)


def long_context_rows(result: dict) -> list[dict]:
    """Flat rows for a sweep: one per (context, mixer) with its measurements, and one per crossover.

    String values are keys (``context``, ``mixer``), numbers measurements (``None`` where a mixer has none).

    Examples
    --------
    >>> row = {"context": 64, "bpb": {"softmax": 3.0, "exp-markov": 3.1}, "speed_ratio": {"forward": 0.5,
    ...        "forward_backward": 0.6}, "saved_mib": {"softmax": 1.0, "exp-markov": 2.0},
    ...        "tokens_per_second": {"softmax": {"forward": 10.0, "forward_backward": 5.0},
    ...                              "exp-markov": {"forward": 5.0, "forward_backward": 3.0}},
    ...        "learned_t": [1.0, 2.0], "layers": [{"reach": 3.0, "powers": 12}, {"reach": 5.0, "powers": 16}]}
    >>> cross = {"context": None, "status": "not reached", "range": [64, 64]}
    >>> rows = long_context_rows({"contexts": [row], "crossover": {"forward": cross, "forward_backward": cross}})
    >>> rows[1]["mixer"], rows[1]["bpb_delta"], rows[1]["t_mean"], rows[1]["powers_max"], rows[2]["context"]
    ('exp-markov', 0.10000000000000009, 1.5, 16, 'crossover')
    """
    rows = []
    for row in result["contexts"]:
        for mixer in ("softmax", "exp-markov", "softmax-explicit"):
            speed = row.get("tokens_per_second", {}).get(mixer)
            if speed is None and mixer == "softmax-explicit":
                continue
            flat = {
                "context": str(row["context"]),
                "mixer": mixer,
                "bpb": row["bpb"].get(mixer),
                "forward_tokens_per_second": speed["forward"] if speed else None,
                "forward_backward_tokens_per_second": speed["forward_backward"] if speed else None,
                "saved_mib": row["saved_mib"].get(mixer),
            }
            if mixer == "exp-markov":
                soft, exp = row["bpb"].get("softmax"), row["bpb"].get("exp-markov")
                flat.update(
                    bpb_delta=exp - soft if soft is not None and exp is not None else None,
                    forward_speed_ratio=row["speed_ratio"]["forward"],
                    forward_backward_speed_ratio=row["speed_ratio"]["forward_backward"],
                    t_mean=float(np.mean(row["learned_t"])) if row.get("learned_t") else None,
                    reach_max=max((layer["reach"] for layer in row.get("layers", ())), default=None),
                    powers_max=max((layer["powers"] for layer in row.get("layers", ())), default=None),
                )
            rows.append(flat)
    crossing = result["crossover"]
    rows.append(
        {
            "context": "crossover",
            "mixer": "exp-markov",
            "forward_crossover": crossing["forward"]["context"],
            "forward_backward_crossover": crossing["forward_backward"]["context"],
        }
    )
    return rows


def long_context_figure(result: dict, path=None):
    """Three panels: seconds per token against context (log-log), held-out bpb, saved activation MiB.

    Returns the matplotlib figure; with ``path`` it is also written there as PNG (atomically).

    Examples
    --------
    >>> speed = {"forward": 2e5, "forward_backward": 1e5}
    >>> row = {"context": 256, "tokens_per_second": {"softmax": speed, "exp-markov": speed},
    ...        "saved_mib": {"softmax": 1.0, "exp-markov": 8.0}, "bpb": {"softmax": 2.5, "exp-markov": 2.6}}
    >>> fig = long_context_figure({"contexts": [row], "threads": 1, "config": {"tokens_per_step": 4096}})
    >>> [ax.get_title() for ax in fig.axes]
    ['wall clock, 1 thread(s)', 'quality at a matched budget', 'activation memory']
    """
    # No backend is forced: headless, pyplot falls back to Agg itself; in a notebook the figure stays inline.
    import matplotlib.pyplot as plt

    rows = result["contexts"]
    n = [r["context"] for r in rows]
    styles = {"softmax": "C0", "exp-markov": "C1", "softmax-explicit": "C2"}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for mixer, colour in styles.items():
        points = [(c, r["tokens_per_second"].get(mixer)) for c, r in zip(n, rows, strict=True)]
        points = [(c, s) for c, s in points if s]
        if not points:
            continue
        ctx = [c for c, _ in points]
        axes[0].loglog(ctx, [1e6 / s["forward"] for _, s in points], "o--", color=colour, label=f"{mixer} fwd")
        axes[0].loglog(
            ctx, [1e6 / s["forward_backward"] for _, s in points], "s-", color=colour, label=f"{mixer} fwd+bwd"
        )
        saved = [(c, r["saved_mib"].get(mixer)) for c, r in zip(n, rows, strict=True)]
        saved = [(c, m) for c, m in saved if m]
        axes[2].loglog([c for c, _ in saved], [m for _, m in saved], "o-", color=colour, label=mixer)
        bpb = [(c, r["bpb"].get(mixer)) for c, r in zip(n, rows, strict=True)]
        bpb = [(c, b) for c, b in bpb if b is not None]
        if bpb:
            axes[1].semilogx([c for c, _ in bpb], [b for _, b in bpb], "o-", color=colour, label=mixer)
    axes[0].set(
        xlabel="context n",
        ylabel="µs per token (all layers' mixers)",
        title=f"wall clock, {result['threads']} thread(s)",
    )
    axes[1].set(xlabel="context n", ylabel="held-out bits per byte", title="quality at a matched budget")
    tokens = result["config"]["tokens_per_step"]
    axes[2].set(xlabel="context n", ylabel=f"MiB saved for backward ({tokens} tokens)", title="activation memory")
    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    if path is not None:
        with atomic_write(path) as temporary:  # format given: the temporary name has no .png
            fig.savefig(temporary, format="png", dpi=110)
    return fig
