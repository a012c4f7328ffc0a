r"""``workbench study connection-walk``: the layerwise study of the Connection Laplacian paper, as one call.

For every model (a :class:`~workbench.models.Transformer`) the study reads the windows of a corpus
(:func:`~workbench.models.read_corpus`, :func:`~workbench.models.corpus_windows`: the model's own tokenizer and
template, every window exactly ``max_tokens`` tokens long, the corpus's first windows in order) and, per layer
:math:`\ell` and window, on the pairs :math:`\mathcal M` of content tokens (not ``[CLS]``/``[SEP]``/BOS; for a
causal model only the causal pairs :math:`j \le i`):

- the drift :math:`d_A^{\ell\to\ell+1}` of the effective walk :math:`A_{\mathrm{eff}}^\ell = \frac1H\sum_h A^{(h)}`
  to the next layer's (:func:`~workbench.attention.geometric_drift` on :math:`\mathcal M`; undefined for the
  last layer);
- :math:`\lVert A_{\mathrm{eff}}^\ell\rVert_F` (every pair, special tokens included);
- :math:`\delta_{\mathrm{orth}}` of the effective transports :math:`O^{\mathrm{eff}}_{ij} = \sum_h w_h(i,j)M_h`,
  :math:`M_h = W_V^hW_O^h`, weighted by :math:`A_{\mathrm{eff}}` over :math:`\mathcal M`
  (:func:`~workbench.attention.factored_transport_gram`);
- the diagonal dominance of the mean transport Gram matrix :math:`\bar G`: the mean :math:`|\bar G_{aa}|` over
  the mean :math:`|\bar G_{ab}|`, :math:`a \ne b` (the reading of the paper's Figure 2(b), as
  :func:`~workbench.models.diagnose` reports it),

and their mean ± sd (ddof = 1) over the windows.  These are the metrics of Connection Laplacian §7.

Null model.  The same walks (the model's own attention, unchanged) with freshly initialised value and output
maps: per layer one seeded Gaussian draw at the standard initialisation, :math:`W_V` entries
:math:`\mathcal N(0, 1/D)` and :math:`W_O` entries :math:`\mathcal N(0, 1/d_v)`.  Exactly (so anyone can redraw
it): ``rng = numpy.random.default_rng([seed, layer])``, then ``rng.standard_normal((n_kv_heads, D, d_v)) / √D``
for the value maps, repeated for the query heads that share them (head :math:`h` reads group
:math:`h \div (H / n_{kv})`, as the model's grouped-query attention does; no repetition without it), and
``rng.standard_normal((H, d_v, D)) / √d_v`` for the output maps.  The draw is the same for every window.  Its
:math:`\delta_{\mathrm{orth}}` and Gram ratio stand beside the model's, so "the transports are nearly
orthogonal" is read against what random maps give on the same walks.  :math:`d_A` and
:math:`\lVert A_{\mathrm{eff}}\rVert_F` depend on the attention alone, so the null has the model's values.

Context-length sweep.  At each length of ``lengths`` (tokens per window, template included) the first
``sweep_windows`` windows of that length give the per-layer and layer-mean :math:`d_A`,
:math:`\lVert A_{\mathrm{eff}}\rVert_F` and :math:`\delta_{\mathrm{orth}}` (the model's maps only).  A length
beyond the model's ``max_positions``, one the corpus has no window of, one shorter than the template plus two
tokens, or one whose forward pass would not fit the memory budget (:mod:`workbench.memory`: the trace holds
:math:`L\cdot H\cdot n^2` attention weights) is skipped, and the result records which and why.  The
transport Gram itself needs no refusal: :func:`~workbench.attention.factored_transport_gram` forms its
per-edge coefficients a block of query rows at a time, so beyond the :math:`[n, n]` results its memory is
bounded (64 MiB per block) at any length.

Run directory (``out``): ``config.json`` and ``run.json`` (:class:`~workbench.experiments.RunLog`: each model is
a condition, ``model-<k>-<name>.json``, so an interrupted run resumes with its finished models kept),
``results.json`` (strict JSON: an undefined value is ``null``, never NaN), ``table.md``
(:func:`connection_walk_table`), ``layers.png`` (the curves per layer with ±sd bands, model and null),
``sweep.png`` (each metric's layer mean against the context length, log scale) and ``figure2.png`` (the
Figure-2 panels, :func:`~workbench.models.plot_diagnosis`, of the first model's first window; further models'
in ``figure2-model-<k>-<name>.png``).

References
----------
"From Self-Attention to Connection Laplacian" §7 (metrics: drift, transport orthogonality) and Figure 2
(effective walk and mean transport Gram); book/reference.md §B.6.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from workbench.attention import factored_transport_gram, geometric_drift
from workbench.backend import to_numpy
from workbench.experiments.common import RunLog, strict_json
from workbench.experiments.common import progress as progress_bar
from workbench.experiments.connection_walk._report import (
    METRICS,
    NULL_METRICS,
    SWEEP_METRICS,
    connection_walk_table,
    figure2,
    layers_figure,
    sweep_figure,
)
from workbench.memory import check_memory
from workbench.models import Transformer, corpus_windows, read_corpus
from workbench.validation import check_integer

__all__ = ["study_connection_walk", "trace_bytes"]

EXPERIMENT = "connection-walk"
DEFAULT_LENGTHS = (16, 32, 64, 128, 256, 512, 1024)
LAST_LAYER = "the last layer has no next layer"
FEW_TOKENS = "fewer than 2 content tokens"
# factored_transport_gram works on blocks of query rows of at most 64 MiB (a few such arrays at once).
_GRAM_BLOCK_BYTES = 64 * 2**20


# ---- one window ---------------------------------------------------------------------------------------------


def _pairs(special: np.ndarray, causal: bool) -> np.ndarray:
    content = ~np.asarray(special, dtype=bool)
    pairs = content[:, None] & content[None, :]
    if causal:
        pairs &= np.tril(np.ones(pairs.shape, dtype=bool))
    return pairs


def _gram_reading(A: np.ndarray, W_V, W_O, pairs: np.ndarray) -> tuple[float | None, float | None]:
    """δ_orth of the effective transports on ``pairs`` and the diagonal dominance of their mean Gram."""
    try:
        gram = factored_transport_gram(A, W_V, W_O, mask=pairs)
    except ValueError:  # no valid pair: the reading is undefined, not a number
        return None, None
    G = gram.mean_gram
    D = G.shape[0]
    diagonal = float(np.abs(np.diag(G)).mean())
    off = float((np.abs(G).sum() - np.abs(np.diag(G)).sum()) / (D * (D - 1)))
    return gram.mean, (diagonal / off if off > 0 else None)


def _window_readings(model: Transformer, attention: np.ndarray, special: np.ndarray, null=None) -> dict[str, list]:
    """Per layer: d_A, ‖A_eff‖_F, δ_orth, Gram ratio (and the null's) of one window's attention [L, H, n, n]."""
    pairs = _pairs(special, model.causal)
    enough = int((~np.asarray(special, dtype=bool)).sum()) >= 2
    a_eff = attention.mean(axis=1)
    L = attention.shape[0]
    out: dict[str, list] = {name: [] for name in METRICS + (NULL_METRICS if null is not None else ())}
    for layer in range(L):
        mha = model.layers[layer].attention
        out["a_eff_norm"].append(float(np.linalg.norm(a_eff[layer])))
        delta, ratio = _gram_reading(attention[layer], mha.W_V, mha.W_O, pairs) if enough else (None, None)
        out["delta_orth"].append(delta)
        out["gram_diagonal_ratio"].append(ratio)
        if null is not None:
            delta, ratio = _gram_reading(attention[layer], *null[layer], pairs) if enough else (None, None)
            out["null_delta_orth"].append(delta)
            out["null_gram_diagonal_ratio"].append(ratio)
        if layer == L - 1 or not enough:
            out["drift"].append(None)
            continue
        try:
            out["drift"].append(geometric_drift(a_eff[layer], a_eff[layer + 1], mask=pairs))
        except ValueError:  # a walk that vanishes on the pairs: the cosine is undefined
            out["drift"].append(None)
    return out


def _null_maps(model: Transformer, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The null model's value and output maps ``(W_V [H, D, d_v], W_O [H, d_v, D])`` per layer (module docstring)."""
    H, kv, D = model.n_heads, model.n_kv_heads, model.d_model
    maps = []
    for layer in range(model.n_layers):
        d_v = int(model.layers[layer].attention.W_V.shape[-1])
        rng = np.random.default_rng([seed, layer])
        values = rng.standard_normal((kv, D, d_v)) / math.sqrt(D)
        outputs = rng.standard_normal((H, d_v, D)) / math.sqrt(d_v)
        maps.append((values[np.arange(H) // (H // kv)], outputs))
    return maps


# ---- statistics ---------------------------------------------------------------------------------------------


def _stat(values: Iterable) -> dict[str, Any]:
    """Mean, sd (ddof = 1) and count of the finite values; mean None when none, sd None when fewer than two."""
    data = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = int(data.size)
    return {
        "mean": float(data.mean()) if n else None,
        "sd": float(data.std(ddof=1)) if n > 1 else None,
        "n": n,
    }


def _layer_mean(row: list) -> float | None:
    values = [v for v in row if v is not None]
    return float(np.mean(values)) if values else None


# ---- windows and traces -------------------------------------------------------------------------------------


def trace_bytes(model: Transformer, n: int) -> float:
    """Bytes a window of ``n`` tokens needs: the trace, one layer's logits and softmax, the transport Gram's work."""
    H = model.n_heads
    attention = model.n_layers * H * n * n
    streams = 2 * (model.n_layers + 1) * n * model.d_model
    softmax = 3 * H * n * n
    gram = min(3 * _GRAM_BLOCK_BYTES / 8, 3 * n * n * H * H) + 8 * n * n  # its row blocks, then its [n, n] arrays
    return 8.0 * (attention + streams + softmax + gram)


def _full_windows(documents, model: Transformer, length: int, count: int) -> list:
    """The first ``count`` windows of exactly ``length`` tokens, interleaved across the documents.

    A document's shorter last chunk is passed over; interleaved, the windows sample the whole corpus, not its
    first play.
    """
    found = []
    for window in corpus_windows(documents, model, length, order="interleaved"):
        if len(window.ids) == length:
            found.append(window)
            if len(found) == count:
                break
    return found


def _attention(model: Transformer, window) -> np.ndarray:
    trace = model.trace_ids(window.ids, special=window.special)
    return np.asarray(to_numpy(trace.attention), dtype=np.float64)


def _model_record(model, label, condition, documents, settings, directory, progress) -> dict:
    """Everything the study measures on one model (a JSON-ready dict); the Figure-2 panels go to ``directory``."""
    windows, max_tokens, lengths, sweep_windows, seed = (
        settings[k] for k in ("windows", "max_tokens", "lengths", "sweep_windows", "seed")
    )
    check_memory(
        f"the forward pass of {label} on {max_tokens} tokens",
        trace_bytes(model, max_tokens),
        "lower max_tokens, or raise the budget (workbench --max-memory, WORKBENCH_MAX_MEMORY)",
    )
    chosen = _full_windows(documents, model, max_tokens, windows)
    if not chosen:
        raise ValueError(
            f"corpus must have at least one window of max_tokens = {max_tokens} tokens for {label}, got none "
            "(its documents are all shorter)"
        )
    plan, skipped = [], []
    for length in lengths:
        reason = None
        if length > model.max_positions:
            reason = f"longer than the model's {model.max_positions} positions (max_positions)"
        elif length < model.n_template + 2:
            reason = f"shorter than the template's {model.n_template} tokens plus 2 content tokens"
        else:
            try:
                check_memory(f"the forward pass of {label} on {length} tokens", trace_bytes(model, length))
            except ValueError as error:
                reason = str(error)
        if reason is None:
            sweep = _full_windows(documents, model, length, sweep_windows)
            if sweep:
                plan.append((length, sweep))
                continue
            reason = f"the corpus has no window of {length} tokens (its documents are shorter)"
        skipped.append({"length": length, "reason": reason})
    null = _null_maps(model, seed)
    rows: dict[str, list] = {name: [] for name in METRICS + NULL_METRICS}
    sweep_rows: dict[int, dict[str, list]] = {}
    total = len(chosen) + sum(len(s) for _, s in plan)
    with progress_bar(total, f"{EXPERIMENT} {label}", progress) as bar:
        for window in chosen:
            readings = _window_readings(model, _attention(model, window), window.special, null)
            for name in rows:
                rows[name].append(readings[name])
            bar.update(1)
        for length, sweep in plan:
            per = sweep_rows[length] = {name: [] for name in SWEEP_METRICS}
            for window in sweep:
                readings = _window_readings(model, _attention(model, window), window.special)
                for name in SWEEP_METRICS:
                    per[name].append(readings[name])
                bar.update(1)
    L = model.n_layers
    layers = [
        {"layer": layer, "relative_depth": layer / (L - 1) if L > 1 else 0.0}
        | {name: _stat(row[layer] for row in rows[name]) for name in rows}
        for layer in range(L)
    ]
    sweep_out = []
    for length, sweep in plan:
        per = sweep_rows[length]
        sweep_out.append(
            {
                "length": length,
                "windows": len(sweep),
                "layers": [
                    {"layer": layer} | {name: _stat(row[layer] for row in per[name]) for name in SWEEP_METRICS}
                    for layer in range(L)
                ],
                "layer_mean": {name: _stat(_layer_mean(row) for row in per[name]) for name in SWEEP_METRICS},
            }
        )
    figure = None
    first = chosen[0]
    if directory is not None:
        figure = "figure2.png" if condition.startswith("model-0-") else f"figure2-{condition}.png"
        figure2(model, label, first, directory / figure)
    return strict_json(
        {
            "name": model.name,
            "label": label,
            "condition": condition,
            "model_dir": str(getattr(model, "path", "") or ""),
            "family": model.family,
            "causal": bool(model.causal),
            "n_layers": L,
            "n_heads": model.n_heads,
            "n_kv_heads": model.n_kv_heads,
            "d_model": model.d_model,
            "d_head": model.d_head,
            "max_positions": model.max_positions,
            "n_template": model.n_template,
            "pairs": "content tokens, causal pairs j ≤ i" if model.causal else "content tokens, every pair",
            "windows": {
                "requested": windows,
                "used": len(chosen),
                "max_tokens": max_tokens,
                "first": {"document": first.document, "start": int(first.start), "text": first.text},
            },
            "layers": layers,
            "per_window": {
                "document": [w.document for w in chosen],
                "start": [int(w.start) for w in chosen],
                **rows,
            },
            "null": {
                "seed": seed,
                "init": "W_V ~ N(0, 1/D), W_O ~ N(0, 1/d_v), one draw per layer: default_rng([seed, layer])",
                "same_as_model": ["drift", "a_eff_norm"],
            },
            "sweep": {"lengths": sweep_out, "skipped": skipped, "windows_per_length": sweep_windows},
            "figure2": figure,
        }
    )


# ---- the study ----------------------------------------------------------------------------------------------


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


def _labels(models: Sequence[Transformer]) -> list[str]:
    """The models' names, made unique (``name``, ``name (2)``, …) for the tables and figures."""
    labels, seen = [], {}
    for model in models:
        name = model.name or model.family
        seen[name] = seen.get(name, 0) + 1
        labels.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return labels


def _check_lengths(lengths) -> tuple[int, ...]:
    if isinstance(lengths, (str, bytes)) or not isinstance(lengths, Iterable):
        raise TypeError(f"lengths must be a sequence of integers (tokens per window), got {type(lengths).__name__}")
    values = tuple(check_integer("lengths", v, 2) for v in lengths)
    if not values:
        raise ValueError("lengths must name at least one context length, got an empty sequence")
    if len(set(values)) != len(values):
        raise ValueError(f"lengths must not repeat a length, got {list(values)}")
    return tuple(sorted(values))


def study_connection_walk(
    models,
    *,
    corpus="shakespeare",
    windows: int = 64,
    max_tokens: int = 64,
    lengths: Sequence[int] = DEFAULT_LENGTHS,
    sweep_windows: int = 8,
    seed: int = 0,
    out=None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""The Connection Laplacian paper's layerwise study of one or several models, with a null model and a sweep.

    See the module docstring for every quantity, the null model and the run directory.

    Parameters
    ----------
    models : Transformer or sequence of Transformer
        From :func:`~workbench.models.load_model` / :func:`~workbench.models.load_minilm` (with a tokenizer).
    corpus : str or Path
        A text file (one text per line), a folder of ``.txt`` files, or ``"shakespeare"``.
    windows : int
        Windows of the layerwise curves (the corpus's first windows of exactly ``max_tokens`` tokens; fewer
        when the corpus has fewer, recorded as ``windows.used``).
    max_tokens : int
        Tokens per window of the curves, template included; at most every model's ``max_positions``.
    lengths : sequence of int
        The context lengths of the sweep (tokens per window, template included).
    sweep_windows : int
        Windows per length of the sweep.
    seed : int
        Seed of the null model's maps.
    out : str or Path, optional
        The run directory; ``None`` writes nothing (no figures either) and returns the result.
    progress : bool
        Show a progress bar per model.
    force, resume : bool
        Replace the run in ``out``, or continue it (its finished models are kept), as in
        :meth:`~workbench.experiments.common.RunLog.open`.

    Returns
    -------
    dict
        JSON-ready (strict: ``null`` for an undefined value): ``experiment``, ``config``, ``rows`` (``"layer"`` when
        every model has the same number of layers, else ``"relative depth"``: how :func:`connection_walk_table`
        lines them up), ``models`` (one record per model: its ``layers`` (per layer, each metric's
        ``{"mean", "sd", "n"}`` over the windows, the null's as ``null_delta_orth`` and
        ``null_gram_diagonal_ratio``), ``per_window`` (every window's per-layer values), ``sweep`` (``lengths``
        measured and ``skipped`` with the reason), ``null``, ``windows``, …), and ``out`` when written.

    Raises
    ------
    TypeError
        ``models`` holds something other than a Transformer.
    ValueError
        A setting is out of range, ``max_tokens`` exceeds a model's positions, the corpus has no window of
        ``max_tokens`` tokens, the forward pass on ``max_tokens`` tokens exceeds the memory budget, or ``out``
        holds files without ``force``/``resume``.
    """
    if isinstance(models, Transformer):
        models = [models]
    models = list(models)
    if not models:
        raise ValueError("models must hold at least one Transformer, got none")
    wrong = sorted({type(m).__name__ for m in models if not isinstance(m, Transformer)})
    if wrong:
        raise TypeError(f"models must be workbench Transformers (load_model, load_minilm), got {wrong}")
    windows = check_integer("windows", windows, 1)
    sweep_windows = check_integer("sweep_windows", sweep_windows, 1)
    seed = check_integer("seed", seed, 0)
    lengths = _check_lengths(lengths)
    low = max(m.n_template for m in models) + 2
    high = min(m.max_positions for m in models)
    max_tokens = check_integer("max_tokens", max_tokens, low, high)
    labels = _labels(models)
    conditions = [f"model-{k}-{_slug(label)}" for k, label in enumerate(labels)]
    corpus_name = str(corpus) if str(corpus) == "shakespeare" else str(Path(corpus).resolve())
    settings = {
        "windows": windows,
        "max_tokens": max_tokens,
        "lengths": list(lengths),
        "sweep_windows": sweep_windows,
        "seed": seed,
    }
    config = {
        "models": labels,
        "model_dirs": [str(getattr(m, "path", "") or "") for m in models],
        "corpus": corpus_name,
        **settings,
    }
    artefacts = {"results.json", "table.md", "layers.png", "sweep.png", "figure2.png"}
    artefacts |= {f"{c}.json" for c in conditions} | {f"figure2-{c}.png" for c in conditions}
    log = RunLog.open(
        out,
        experiment=EXPERIMENT,
        config=config,
        conditions=conditions,
        selection={},
        artefacts=artefacts,
        force=force,
        resume=resume,
    )
    documents = read_corpus(corpus)
    with log:
        records = []
        for model, label, condition in zip(models, labels, conditions, strict=True):
            record = log.finished(condition, state=False)
            if record is None:
                record = _model_record(model, label, condition, documents, settings, log.path, progress)
                log.keep(condition, record)
            records.append(record)
        same_depth = len({r["n_layers"] for r in records}) == 1
        result = strict_json(
            {
                "experiment": EXPERIMENT,
                "config": config,
                "rows": "layer" if same_depth else "relative depth",
                "models": records,
            }
        )
        if log.path is not None:
            log.write_results(result, connection_walk_table(result))
            layers_figure(result, log.path / "layers.png")
            sweep_figure(result, log.path / "sweep.png")
    return result
