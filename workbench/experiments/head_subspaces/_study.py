r"""``workbench study head-subspaces``: whether heads whose subspaces lie close on the Grassmannian attend alike.

ISA ML01 reads the :math:`H` heads of a layer as points of :math:`\mathrm{Gr}(d_h, D)` and claims that heads which
attend to similar features lie close.  This study makes the claim a measurement, on pretrained models and on the
workbench's own trained induction models.

**Pretrained models** (:func:`study_head_subspaces`).  From the weights, :func:`~workbench.models.head_geometry`:
per layer the head-by-head geodesic distances of the query, key, value and output subspaces and of the query–key
pair (:math:`\mathrm{Gr}(d_h, D)^2`), summarised against independent uniform subspaces.  From the corpus (the first
``windows`` windows of ``max_tokens`` tokens, interleaved over documents): the mean total-variation distance
between the heads' attention rows on the content tokens, :math:`T_{ab}`.  Then Spearman's :math:`\rho` between
each distance and :math:`T` with its one-sided Mantel p-value (:func:`~workbench.attention.mantel_test`):

- per layer (the :math:`\binom H2` pairs of one layer's heads, which read the same input);
- pooled over layers (within-layer pairs only, heads relabelled within their layer);
- model-wide (every pair of heads of every layer, the subspaces compared in the attention-input coordinates,
  heads relabelled freely).

**Induction models** (:func:`study_induction_subspaces`).  The two-layer attention-only models of
``workbench experiment induction`` (:mod:`workbench.experiments`), trained per seed.  On the eval batch each head's
previous-token and induction scores find the previous-token head (layer 0) and the induction head (layer 1).  Their
subspaces are compared two ways: as points (all heads of both layers, distances as above, and the Mantel test over
the 28 pairs, enumerated exactly), and as a **composition**: what the previous-token head writes, the row space of
its :math:`W_O`, against what the induction head's keys read, the column space of :math:`C\,\operatorname{diag}
(\gamma)\,W_K` in residual-stream coordinates (:math:`C = I - \tfrac1D\mathbf 1\mathbf 1^\top` and :math:`\gamma`
the LayerNorm before the attention; the K-composition of Elhage et al. 2021), beside every other (layer-0 head,
layer-1 head) pair and the random null of :math:`d_h`-planes of :math:`\mathbb R^D`.

Run directory: ``results.json`` (strict JSON), ``table.md`` (:func:`head_subspaces_table`), ``distances.png`` (per
layer: QK subspace distance and attention-pattern distance, side by side) and ``correlation.png`` (every
within-layer pair: QK distance against pattern distance, coloured by layer).

References
----------
ISA ML01; Mantel (1967); Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits" (K-composition);
Olsson et al. (2022) (induction heads); Edelman, Arias & Smith (1998) §4.3.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from workbench.attention import (
    HEAD_MAPS,
    HeadSubspaces,
    MultiHeadAttention,
    attention_pattern_distance,
    distance_from_angles,
    head_subspace_angles,
    head_subspaces,
    induction_score,
    mantel_test,
    previous_token_score,
    principal_angles,
    repeated_random_tokens,
    subspace_null,
)
from workbench.experiments.common import load_state, save_json, save_text, strict_json
from workbench.experiments.common import progress as progress_bar
from workbench.models import (
    GEOMETRY_MAPS,
    Transformer,
    corpus_windows,
    head_distance_matrices,
    head_geometry,
    read_corpus,
)
from workbench.validation import check_choice, check_integer

__all__ = ["head_subspaces_table", "study_head_subspaces", "study_induction_subspaces"]


def _check_models(models) -> list[Transformer]:
    models = [models] if isinstance(models, Transformer) else list(models)
    if not models or not all(isinstance(m, Transformer) for m in models):
        raise TypeError("models must be a Transformer or a non-empty sequence of them (load_model, load_minilm)")
    return models


def _tests(distances: dict, pattern: np.ndarray, strata, permutations: int, seed: int) -> dict:
    """Spearman ρ and Mantel p of every distance matrix against the pattern distance."""
    out = {}
    for name in GEOMETRY_MAPS:
        try:
            result = mantel_test(distances[name], pattern, strata=strata, permutations=permutations, seed=seed)
        except ValueError as error:  # a constant matrix (every head alike): ρ undefined, say why
            out[name] = {"rho": None, "p_value": None, "undefined": str(error)}
            continue
        out[name] = {
            "rho": result.rho,
            "p_value": result.p_value,
            "pairs": result.pairs,
            "permutations": result.permutations,
            "exact": result.exact,
        }
    return out


#: Random pairs of the data-aware null per layer.
DATA_NULL_SAMPLES = 256


def _data_null(moment: np.ndarray, d_head: int, seed: int) -> dict:
    r"""Distances between random heads that read where the layer's inputs live.

    A random head of this null has :math:`W = S^{1/2}G`, :math:`G` a standard Gaussian :math:`D\times d_h`
    matrix and :math:`S = \mathbb E\,x^\top x` the second moment of the attention inputs (content tokens): its
    subspace leans towards the inputs' dominant directions as a head trained on them may, with no other structure.
    Two independent such heads give the null distance; real heads closer than its 5 % quantile are closer than
    a shared anisotropy alone explains.
    """
    values, vectors = np.linalg.eigh(0.5 * (moment + moment.T))
    root = (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T
    rng = np.random.default_rng([seed, 11])
    D = moment.shape[0]
    draws = [root @ rng.standard_normal((DATA_NULL_SAMPLES, D, d_head)) for _ in range(4)]  # Q, K of two heads
    bases = [np.linalg.qr(W)[0] for W in draws]
    theta = principal_angles(bases[0], bases[1], orthonormal=True)
    d_q = distance_from_angles(theta)
    d_k = distance_from_angles(principal_angles(bases[2], bases[3], orthonormal=True))
    qk = np.hypot(d_q, d_k)
    return {
        "median_angle": float(np.degrees(np.median(theta))),
        "smallest_angle": float(np.degrees(np.median(theta[:, 0]))),
        "median_distance": float(np.median(d_q)),
        "qk_median_distance": float(np.median(qk)),
        "qk_chance_distance": float(np.quantile(qk, 0.05)),
        "samples": DATA_NULL_SAMPLES,
    }


def _model_record(model: Transformer, documents, windows: int, max_tokens: int, permutations: int, seed: int, bar):
    geometry = head_geometry(model, seed=seed)
    chosen = list(corpus_windows(documents, model, max_tokens, windows, order="interleaved"))
    if not chosen:
        raise ValueError(f"the corpus has no window of {max_tokens} tokens for {model.name}")
    L, H = model.n_layers, model.n_heads
    patterns = np.zeros((L, H, H))
    model_pattern = np.zeros((L * H, L * H))
    moments = np.zeros((L, model.d_model, model.d_model))  # Σ xxᵀ of each layer's attention input, content tokens
    tokens = 0
    for window in chosen:
        trace = model.trace_ids(window.ids, special=window.special)
        attention = np.asarray(trace.attention, dtype=np.float64)  # [L, H, n, n]
        rows = ~np.asarray(window.special, dtype=bool)
        inputs = np.asarray(trace.attention_inputs, dtype=np.float64)[:, rows]  # [L, content, D]
        moments += np.einsum("lia,lib->lab", inputs, inputs)
        tokens += int(rows.sum())
        patterns += np.stack([attention_pattern_distance(attention[layer], rows=rows) for layer in range(L)])
        model_pattern += attention_pattern_distance(attention.reshape(L * H, *attention.shape[-2:]), rows=rows)
        bar.update(1)
    patterns /= len(chosen)
    model_pattern /= len(chosen)
    layers = []
    for layer in range(L):
        distances = geometry.layers[layer].distances
        data_null = _data_null(moments[layer] / tokens, model.d_head, seed + layer)
        upper = np.triu_indices(H, 1)
        layers.append(
            {
                "layer": layer,
                "summary": {name: vars(s).copy() for name, s in geometry.layers[layer].summary.items()},
                "data_null": data_null
                | {"qk_closer_than_chance": int(np.sum(distances["QK"][upper] < data_null["qk_chance_distance"]))},
                "tests": _tests(distances, patterns[layer], None, permutations, seed + layer),
                "pattern_distance": patterns[layer].tolist(),
                "qk_distance": distances["QK"].tolist(),
                "median_pattern_distance": float(np.median(patterns[layer][np.triu_indices(H, 1)])),
            }
        )
    # the whole model: every head of every layer in one set
    every = HeadSubspaces.concatenate([head_subspaces(layer.attention) for layer in model.layers])
    whole = head_distance_matrices(every)
    strata = np.repeat(np.arange(L), H)
    pooled = _tests(whole, model_pattern, strata, permutations, seed)
    model_wide = _tests(whole, model_pattern, None, permutations, seed)
    return {
        "model": model.name,
        "family": model.family,
        "d_model": model.d_model,
        "d_head": model.d_head,
        "n_layers": L,
        "n_heads": H,
        "dimension": geometry.dimension,
        "null": geometry.null,
        "windows": len(chosen),
        "max_tokens": max_tokens,
        "layers": layers,
        "pooled_within_layers": pooled,
        "model_wide": model_wide,
    }


def study_head_subspaces(
    models,
    *,
    corpus="shakespeare",
    windows: int = 64,
    max_tokens: int = 64,
    permutations: int = 9999,
    seed: int = 0,
    out=None,
    progress: bool = True,
) -> dict:
    r"""The heads of pretrained models as points of a Grassmannian, and their attention over a corpus.

    Parameters
    ----------
    models : Transformer or sequence of Transformer
    corpus : str or Path
        A text file, a folder of ``.txt`` files, or ``"shakespeare"``.
    windows : int
        Windows of the corpus (interleaved over documents).
    max_tokens : int
        Tokens per window, template included.
    permutations : int
        Mantel relabellings per test.
    seed : int
        Seeds the random-subspace null and the permutations.
    out : path, optional
        Run directory for ``results.json``, ``table.md`` and the figures.
    progress : bool

    Returns
    -------
    dict
        Strict JSON: ``{"study": "head-subspaces", "settings", "models": [...]}``; per model the null, per layer
        the summaries, the tests (ρ, p per map) and both matrices, and the pooled and model-wide tests.

    References
    ----------
    ISA ML01; Mantel (1967); Legendre & Legendre (2012), ch. 10.
    """
    models = _check_models(models)
    windows = check_integer("windows", windows, 1, 100_000)
    permutations = check_integer("permutations", permutations, 99, 10**6)
    seed = check_integer("seed", seed, 0)
    for model in models:
        check_integer("max_tokens", max_tokens, model.n_template + 2, model.max_positions)
    documents = read_corpus(corpus)
    records = []
    with progress_bar(windows * len(models), "head-subspaces", progress) as bar:
        for model in models:
            records.append(_model_record(model, documents, windows, max_tokens, permutations, seed, bar))
    result = strict_json(
        {
            "study": "head-subspaces",
            "settings": {
                "corpus": str(corpus),
                "windows": windows,
                "max_tokens": max_tokens,
                "permutations": permutations,
                "seed": seed,
                "metric": "geodesic",
            },
            "models": records,
        }
    )
    if out is not None:
        _write(Path(out), result)
    return result


# ---- the induction models ------------------------------------------------------------------------------


def _operator_heads(block) -> tuple[MultiHeadAttention, np.ndarray]:
    """A trained block's attention as a MultiHeadAttention (row convention), and its LayerNorm gain γ."""
    attention = block.attention
    H, dh = attention.n_heads, attention.d_head

    def heads(linear, rows: bool):
        W = linear.weight.detach().double().cpu().numpy()  # [out, in]: y = x Wᵀ
        if rows:  # query/key/value: head h takes outputs h·d_h:(h+1)·d_h → W_h = W[block].T, [D, d_h]
            return np.stack([W[h * dh : (h + 1) * dh].T for h in range(H)])
        return np.stack([W[:, h * dh : (h + 1) * dh].T for h in range(H)])  # out: [d_h, D] per head

    mha = MultiHeadAttention(
        heads(attention.query, True), heads(attention.key, True), heads(attention.value, True),
        heads(attention.out, False), causal=True,
    )  # fmt: skip
    gamma = block.norm_attention.weight.detach().double().cpu().numpy()
    return mha, gamma


def _residual_readers(mha: MultiHeadAttention, gamma: np.ndarray) -> MultiHeadAttention:
    """The same heads with the LayerNorm's linear part folded in: W ↦ C diag(γ) W, C the centring map."""
    D = gamma.size
    fold = (np.eye(D) - 1.0 / D) * gamma[None, :]  # C diag(γ)
    return MultiHeadAttention(fold @ mha.W_Q, fold @ mha.W_K, fold @ mha.W_V, mha.W_O, causal=True)


def _composition(writers: HeadSubspaces, readers: HeadSubspaces, read: str) -> dict:
    angles = head_subspace_angles(writers, "O", other=readers, other_map=read)
    smallest = np.array([[float(t[0]) for t in row] for row in angles])
    median = np.array([[float(np.median(t)) for t in row] for row in angles])
    return {"smallest_angle": np.degrees(smallest).tolist(), "median_angle": np.degrees(median).tolist()}


def _induction_record(config, seed: int, out: Path, permutations: int, progress: bool, operator: str) -> dict:
    import dataclasses

    import torch

    from workbench.experiments.induction import InductionTransformer, run_induction

    config = dataclasses.replace(config, seed=seed)
    run_dir = out / f"induction-seed-{seed}"
    result = run_induction(
        config, operators=(operator,), architectures=("attn-only",), out=run_dir, progress=progress, force=True
    )
    run = result["runs"][0]
    model = InductionTransformer(
        config.vocab_size, config.sequence_length, config.d_model, config.n_heads, config.n_layers, operator
    )
    load_state(run_dir / f"{operator}-attn-only.pt", model, what="the trained weights of the induction run")
    model = model.double().eval()
    tokens = repeated_random_tokens(np.random.default_rng([seed, 7]), config.vocab_size, config.half_length, 64)
    with torch.no_grad():
        operators = [P.numpy() for P in model.attention_operators(torch.from_numpy(tokens))]  # L × [B, H, n, n]
    attention = np.stack(operators, axis=1)  # [B, L, H, n, n]
    previous = previous_token_score(attention).mean(axis=0)  # [L, H]
    induction = induction_score(attention, tokens[:, None, None, :]).mean(axis=0)
    L, H = previous.shape
    prev_head = (0, int(np.argmax(previous[0])))
    ind_head = (L - 1, int(np.argmax(induction[L - 1])))
    blocks = [_operator_heads(block) for block in model.blocks]
    points = HeadSubspaces.concatenate([head_subspaces(mha) for mha, _ in blocks])
    distances = head_distance_matrices(points)
    pattern = attention_pattern_distance(attention.reshape(attention.shape[0], L * H, *attention.shape[-2:]))
    writers = head_subspaces(blocks[0][0])
    readers = head_subspaces(_residual_readers(*blocks[L - 1]))
    composition = {read: _composition(writers, readers, read) for read in ("Q", "K", "V")}
    null = subspace_null(config.d_model, config.d_model // config.n_heads, samples=1024, seed=seed)
    flat = lambda layer, head: layer * H + head  # noqa: E731
    a, b = flat(*prev_head), flat(*ind_head)
    k_smallest = np.array(composition["K"]["smallest_angle"])
    return {
        "seed": seed,
        "operator": operator,
        "induction_accuracy": run["induction_accuracy"],
        "shifted_period_accuracy": run["shifted_period_accuracy"],
        "final_repeat_loss": run["final_repeat_loss"],
        "previous_token_score": previous.tolist(),
        "induction_score": induction.tolist(),
        "previous_token_head": list(prev_head),
        "induction_head": list(ind_head),
        "pair": {
            name: {"distance": float(distances[name][a, b]), "median_other_pairs": _median_off(distances[name], a, b)}
            for name in GEOMETRY_MAPS
        },
        "null": {
            "median_distance": null.median,
            "chance_distance": null.quantile(0.05),
            "median_angle": float(np.degrees(np.median(null.median_angles))),
            "smallest_angle": float(np.degrees(np.median(null.smallest_angles))),
            "smallest_angle_5pct": float(np.degrees(np.quantile(null.smallest_angles, 0.05))),
        },
        "k_composition": {
            "smallest_angle": float(k_smallest[prev_head[1], ind_head[1]]),
            "rank_among_pairs": int(1 + np.sum(k_smallest < k_smallest[prev_head[1], ind_head[1]])),
            "pairs": int(k_smallest.size),
        },
        "composition": composition,
        "tests": _tests(distances, pattern, None, permutations, seed),
        "qk_distance": distances["QK"].tolist(),
        "pattern_distance": pattern.tolist(),
    }


def _median_off(D: np.ndarray, a: int, b: int) -> float:
    upper = np.triu_indices(D.shape[0], 1)
    values = [D[i, j] for i, j in zip(*upper, strict=True) if {i, j} != {a, b}]
    return float(np.median(values))


def study_induction_subspaces(
    config=None,
    *,
    seeds: Sequence[int] = (0, 1, 2),
    operator: str = "ATTN",
    permutations: int = 40320,
    out=None,
    progress: bool = True,
) -> dict:
    r"""The trained induction models' heads as Grassmannian points, and the K-composition of their circuit.

    Parameters
    ----------
    config : InductionConfig, optional
        Default ``InductionConfig.preset("paper")``; one attention-only model per seed.
    seeds : sequence of int
    operator : {"ATTN", "DMTN", "DMAP"}
        The heads' scores (:class:`~workbench.nn.OperatorAttention`); every one reads through W_Q, W_K.
    permutations : int
        Mantel relabellings (the 8 heads of the paper preset have 8! = 40,320: enumerated exactly).
    out : path
        Run directory (each seed's training run goes in ``induction-seed-S/``).
    progress : bool

    Returns
    -------
    dict
        Strict JSON: ``{"study": "head-subspaces-induction", "config", "seeds": [...]}``.

    References
    ----------
    Olsson et al. (2022); Elhage et al. (2021); ISA ML01.
    """
    from workbench.experiments.induction import InductionConfig

    config = InductionConfig.preset("paper") if config is None else config
    if not isinstance(config, InductionConfig):
        raise TypeError(f"config must be an InductionConfig, got {type(config).__name__}")
    if out is None:
        raise ValueError("out must be a run directory (the trained models are kept there), got None")
    seeds = [check_integer("seeds", s, 0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed, got none")
    permutations = check_integer("permutations", permutations, 99, 10**6)
    operator = check_choice("operator", operator, ("ATTN", "DMTN", "DMAP"))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    import dataclasses

    records = [_induction_record(config, seed, out, permutations, progress, operator) for seed in seeds]
    result = strict_json({"study": "head-subspaces-induction", "config": dataclasses.asdict(config), "seeds": records})
    save_json(out / "results.json", result)
    save_text(out / "table.md", head_subspaces_table(result) + "\n")
    return result


# ---- tables and figures --------------------------------------------------------------------------------


def _p(value) -> str:
    return "—" if value is None else f"{value:.2g}"


def _r(value) -> str:
    return "—" if value is None else f"{value:+.2f}"


def head_subspaces_table(result: dict) -> str:
    """The Markdown tables of :func:`study_head_subspaces` or :func:`study_induction_subspaces`."""
    if result.get("study") == "head-subspaces-induction":
        return _induction_table(result)
    parts = []
    for record in result["models"]:
        null = record["null"]
        parts.append(
            f"### {record['model']} (D = {record['d_model']}, d_h = {record['d_head']}, "
            f"dim Gr = {record['dimension']}; "
            f"{record['windows']} windows of {record['max_tokens']} tokens)\n\n"
            f"Random null (two independent uniform {record['d_head']}-planes of R^{record['d_model']}): median "
            f"principal angle {null['median_angle']:.1f}°, smallest angle {null['smallest_angle']:.1f}° (median "
            f"over pairs).\n\n"
            "| layer | median angle Q / K / V / O (°) | smallest angle Q / K (°) | QK pairs closer than chance: "
            "uniform / data-aware null | data-aware null: median, smallest angle (°) | ρ(QK, attention) | p | ρ(Q) | "
            "ρ(K) | ρ(V) | ρ(O) |\n|---|---|---|---|---|---|---|---|---|---|---|"
        )
        for layer in record["layers"]:
            s, t = layer["summary"], layer["tests"]
            medians = " / ".join(f"{s[m]['median_angle']:.1f}" for m in HEAD_MAPS)
            smallest = f"{s['Q']['smallest_angle']:.1f} / {s['K']['smallest_angle']:.1f}"
            data = layer["data_null"]
            closer = f"{s['QK']['closer_than_chance']} / {data['qk_closer_than_chance']} of {s['QK']['pairs']}"
            data_angles = f"{data['median_angle']:.1f}, {data['smallest_angle']:.1f}"
            parts.append(
                f"| {layer['layer']} | {medians} | {smallest} | {closer} | {data_angles} | {_r(t['QK']['rho'])} | "
                f"{_p(t['QK']['p_value'])} | " + " | ".join(_r(t[m]["rho"]) for m in HEAD_MAPS) + " |"
            )
        for label, key in (("pooled within layers", "pooled_within_layers"), ("model-wide", "model_wide")):
            t = record[key]
            parts.append(
                f"| {label} | | | | | {_r(t['QK']['rho'])} | {_p(t['QK']['p_value'])} | "
                + " | ".join(_r(t[m]["rho"]) for m in HEAD_MAPS)
                + " |"
            )
        parts.append("")
    return "\n".join(parts)


def _induction_table(result: dict) -> str:
    rows = [
        "| operator, seed | accuracy (shifted) | prev-token head | induction head | "
        "QK distance of the pair (others' median) | "
        "K-composition smallest angle (°) (rank among pairs) | null smallest angle (°): median, 5 % | "
        "ρ(QK, attention) | p |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["seeds"]:
        pair, k, null, t = r["pair"]["QK"], r["k_composition"], r["null"], r["tests"]["QK"]
        rows.append(
            f"| {r.get('operator', 'ATTN')} {r['seed']} | "
            f"{r['induction_accuracy']:.3f} ({r['shifted_period_accuracy']:.3f}) | "
            f"L{r['previous_token_head'][0]}H{r['previous_token_head'][1]} | "
            f"L{r['induction_head'][0]}H{r['induction_head'][1]} | {pair['distance']:.2f} "
            f"({pair['median_other_pairs']:.2f}) | {k['smallest_angle']:.1f} ({k['rank_among_pairs']} of "
            f"{k['pairs']}) | {null['smallest_angle']:.1f}, {null['smallest_angle_5pct']:.1f} | {_r(t['rho'])} | "
            f"{_p(t['p_value'])} |"
        )
    return "\n".join(rows)


def _write(out: Path, result: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    save_json(out / "results.json", result)
    save_text(out / "table.md", head_subspaces_table(result) + "\n")
    _figures(result, out)


def _figures(result: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for index, record in enumerate(result["models"]):
        suffix = "" if index == 0 else f"-{index}"
        L = record["n_layers"]
        fig, axes = plt.subplots(2, L, figsize=(3.2 * L, 6.4), squeeze=False, layout="constrained")
        for layer in record["layers"]:
            for row, (key, label, cmap) in enumerate(
                (
                    ("qk_distance", "QK subspace distance", "magma"),
                    ("pattern_distance", "attention TV distance", "viridis"),
                )
            ):
                M = np.array(layer[key], dtype=float)
                np.fill_diagonal(M, np.nan)
                ax = axes[row, layer["layer"]]
                image = ax.imshow(M, cmap=cmap)
                t = layer["tests"]["QK"]
                title = f"layer {layer['layer']}: {label}"
                if row == 1:
                    title += f"\nρ = {_r(t['rho'])}, p = {_p(t['p_value'])}"
                ax.set_title(title, fontsize=9)
                ax.set_xlabel("head", fontsize=8)
                ax.set_ylabel("head", fontsize=8)
                ax.tick_params(labelsize=7)
                fig.colorbar(image, ax=ax, shrink=0.7).ax.tick_params(labelsize=7)
        fig.suptitle(f"{record['model']}: heads' query–key subspace distance and attention-pattern distance")
        fig.savefig(out / f"distances{suffix}.png", dpi=110)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(6, 4.5), layout="constrained")
        colours = plt.get_cmap("viridis")(np.linspace(0, 1, L))
        for layer, colour in zip(record["layers"], colours, strict=True):
            D, T = np.array(layer["qk_distance"]), np.array(layer["pattern_distance"])
            upper = np.triu_indices(D.shape[0], 1)
            ax.scatter(D[upper], T[upper], s=10, color=colour, label=f"layer {layer['layer']}")
        null = record["null"]["qk_median_distance"]
        ax.axvline(null, color="grey", linestyle="--", linewidth=1)
        ax.text(null, ax.get_ylim()[1], " random heads", fontsize=8, va="top", color="grey")
        pooled = record["pooled_within_layers"]["QK"]
        ax.set_title(
            f"{record['model']}: every within-layer pair of heads\npooled Spearman ρ = {_r(pooled['rho'])}, "
            f"Mantel p = {_p(pooled['p_value'])}",
            fontsize=10,
        )
        ax.set_xlabel(r"geodesic distance of the QK subspaces in Gr$(d_h, D)^2$")
        ax.set_ylabel("mean total-variation distance of attention")
        ax.legend(fontsize=7, ncol=2)
        fig.savefig(out / f"correlation{suffix}.png", dpi=110)
        plt.close(fig)
