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
# # 09 — DMAP, DMTN, ATAP, ATTN
#
# Notebook 08 took one head apart into a bond $\mathcal S$ (symmetric) and a link $\mathcal A$ (antisymmetric).
# Two independent restrictions of those parts give four operators ({cite:p}`candanedo2026attention` §1, §7 and
# Table 4 in §12; [mathematical reference §A.7](reference.md#reference-a7), "The four parameterisations"):
#
# |                               | link $\mathcal A$ exact | link $\mathcal A$ free |
# |-------------------------------|-------------------------|------------------------|
# | bond $\mathcal S$ definite    | **DMAP** (diffusion map)| **DMTN**               |
# | bond $\mathcal S$ indefinite  | **ATAP**                | **ATTN** (attention)   |
#
# **Objectives.**  After this notebook you can
# * build the four operators as corners of one two-parameter family $\ell(b, a)$ with `family_operator`, and write
#   each corner's logits in closed form (DMAP as a Gaussian kernel of learned features);
# * prove and check that an exact link makes an operator reversible for any weights, and compute the two diagnostics
#   $\varepsilon_{\mathrm{rev}} \in [0, \sqrt2]$ and $\rho_{\mathrm{skew}}$;
# * explain why DMAP needs half of attention's query–key weights (a flat gauge orbit) and read the inertia of each bond;
# * project a head onto the corners, and locate its circulation in the stationary current $J$ and in the cycle affinities.
#
# **Prerequisites.**  Notebook 08 (Reading a head: bond and link, the site potential and the pseudo-distance $d^2$, the
# Doob tilt of a head, $\varepsilon_{\mathrm{rev}}$ and cycle affinities), notebook 03 (Heat on a Swiss roll: Swiss-roll
# samples, Gauss-kernel walks and the α = 0 diffusion map, whose stationary law is the degree) and notebook 06b (Doob
# tilt and antisymmetric link: Doob transforms, the stationary current); finite Markov chains with their stationary law
# and detailed balance, which the course assumes as background.  Maths: quadratic forms and Sylvester's law of inertia,
# Frobenius norms.
#
# **Time.**  Two sessions of about 50 minutes (sections 1–3, then 4–7); the code runs in about 30 s.
#
# **Plan.**  This notebook
#
# 1. builds the four corners of one two-parameter family $(b, a)$ from the *same* $W_Q, W_K$ and checks each
#    against its closed form;
# 2. shows them on a context of points sampled from a Swiss roll;
# 3. measures reversibility and skew: $\varepsilon_{\mathrm{rev}} = \rho_{\mathrm{skew}} = 0$ for the exact-link
#    corners on any weights, the bound $\varepsilon_{\mathrm{rev}} \le \sqrt2$ and a head that reaches it;
# 4. counts parameters (DMAP needs half: the $W_N$ direction is a flat gauge orbit), reads the inertia of
#    each bond, and projects a head onto the corners;
# 5. draws the stationary current $J$ (zero exactly for an exact link) and the effective neighbour count
#    $e^{\bar H}$ of each operator along β.
#
# **Tags.**  Those of the [mathematical reference](reference.md): **[SEED]** printed in the available text of the paper,
# **[CODE]** what the author's public implementation computes, **[DERIVED]** a consequence checked here, **[RECON]** a
# reconstruction of a formula that is not available.
#
# **Conventions.**  Tokens are row vectors $X_i$, with queries $q_i = X_iW_Q$ and keys $k_i = X_iW_K$ (no biases here).
# Every operator is $\mathsf P = \operatorname{rownorm}\exp_\odot(\ell)$ for its logits $\ell$: row-stochastic, acting
# on functions from the left, positive generator $\mathsf L = I - \mathsf P$.  Gauss kernels are written
# $e^{-\beta'\lVert m_i - m_j\rVert^2}$, with no factor 2 or 4 inside the exponent (`gauss_kernel(m, beta_prime)`).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from workbench.attention import (
    CORNERS,
    OPERATORS,
    bond_inertia,
    corner_distances,
    effective_form,
    effective_neighbours,
    family_logits,
    family_operator,
    link_holonomy,
    nearest_corner,
    negative_mass,
    operator_skew_ratio,
    parameter_count,
    project_head,
    reversibility_residual,
    softmax_rows,
    token_split,
    triangle_cycles,
)
from workbench.markov import (
    MarkovOperator,
    SwissRoll,
    cycle_affinities,
    gauss_kernel,
    markov_operator,
    stationary_current,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(9)
D, d_h = 16, 4
beta = 1 / np.sqrt(d_h)  # standard attention
BOND = {0: "definite", 1: "indefinite"}
LINK = {0: "exact", 1: "free"}

# %% [markdown]
# ## 1. One family, four corners
#
# Rotate queries and keys into $m = (q + k)/\sqrt2$ and $n = (q - k)/\sqrt2$.  Then
# $q_i\cdot k_j + k_i\cdot q_j = \langle m_i, m_j\rangle - \langle n_i, n_j\rangle$: the bond of a head is a definite part
# minus a definite part.  The family **[CODE]** (the author's public implementation, as recorded in [§A.7](reference.md#reference-a7)) has two
# switches,
#
# $$\ell_{ij}(b, a) = \beta\Bigl[\tfrac12\langle m_i, m_j\rangle - b\,\tfrac12\langle n_i, n_j\rangle
#   + a\,\mathcal A_{ij} + (1 - a)\,\tfrac12(g_i - g_j)\Bigr], \qquad g_i = \tfrac12\lVert m_i\rVert^2 - b\,\tfrac12\lVert n_i\rVert^2,$$
#
# $b$ keeping the negative sector of the bond and $a$ the free link $\mathcal A_{ij} = \tfrac12(q_i\cdot k_j - k_i\cdot q_j)$;
# with $a = 0$ the link is replaced by the exact link $\tfrac12(g_i - g_j)$ of the site potential.

# %%
print(f"{'operator':9s} {'(b, a)':7s} {'bond':11s} {'link':6s}")
for name in OPERATORS:
    b, a = CORNERS[name]
    print(f"{name:9s} {(b, a)!s:7s} {BOND[b]:11s} {LINK[a]:6s}")

X_small = rng.standard_normal((10, D))
W_Q, W_K = rng.standard_normal((2, D, d_h)) / np.sqrt(D)
q, k = X_small @ W_Q, X_small @ W_K
m_feat, n_feat = (q + k) / np.sqrt(2), (q - k) / np.sqrt(2)
polar = np.abs(q @ k.T + k @ q.T - (m_feat @ m_feat.T - n_feat @ n_feat.T)).max()
print(f"max |q_i·k_j + k_i·q_j − (⟨m_i, m_j⟩ − ⟨n_i, n_j⟩)| = {polar:.1e}")
assert polar < 1e-14
logits = {name: family_logits(q, k, *CORNERS[name]) for name in OPERATORS}

# %% [markdown]
# **The corners in closed form** **[DERIVED]** ([§A.7](reference.md#reference-a7), corollaries).  Up to row constants, which the row softmax
# ignores,
#
# $$\ell^{\mathrm{ATTN}} = \beta\,q_i\cdot k_j, \quad
# \ell^{\mathrm{DMTN}} = \beta\bigl(q_i\cdot k_j + \tfrac12\langle n_i, n_j\rangle\bigr), \quad
# \ell^{\mathrm{ATAP}} \simeq -\tfrac\beta2\,d^2_{ij}, \quad
# \ell^{\mathrm{DMAP}} \simeq -\tfrac\beta4\lVert m_i - m_j\rVert^2,$$
#
# with $d^2$ the pseudo-distance of the bond from notebook 08.  DMAP is thus the Gauss kernel
# $\mathsf K_{ij} = e^{-\beta'\lVert m_i - m_j\rVert^2}$, $\beta' = \beta/4$, of the learned features $m_i = X_iW_M$,
# $W_M = (W_Q + W_K)/\sqrt2$: an α = 0 diffusion map {cite:p}`coifman2006diffusion` of the points $m_i$ — on the tokens
# themselves, a Gauss kernel in the degenerate metric $W_MW_M^\top$, $\lVert m_i - m_j\rVert^2 =
# (X_i - X_j)W_MW_M^\top(X_i - X_j)^\top$.  The DMAP oracle below is built by `workbench.markov` from the points $m_i$
# alone.

# %%
d2 = token_split(q, k).squared_distance
oracles = {
    "ATTN": beta * (q @ k.T),
    "DMTN": beta * (q @ k.T + 0.5 * n_feat @ n_feat.T),
}
print(f"ATTN: max |ℓ − βq·k| = {np.abs(logits['ATTN'] - oracles['ATTN']).max():.1e}")
print(f"DMTN: max |ℓ − β(q·k + ½⟨n, n⟩)| = {np.abs(logits['DMTN'] - oracles['DMTN']).max():.1e}")
assert np.abs(logits["ATTN"] - oracles["ATTN"]).max() == 0.0  # the ATTN corner is exact, not rounded
assert np.abs(logits["DMTN"] - oracles["DMTN"]).max() < 1e-14

P_dmap_oracle = markov_operator(gauss_kernel(m_feat, beta / 4))
P_atap_oracle = softmax_rows(-0.5 * beta * d2)
gap_dmap = np.abs(softmax_rows(logits["DMAP"]) - P_dmap_oracle).max()
row_spread = np.ptp(logits["ATAP"] + 0.5 * beta * d2, axis=1).max()
print(f"ATAP: ℓ + (β/2)d² is constant along rows to {row_spread:.1e}")
print(f"ATAP: max |P − rownorm exp(−(β/2)d²)| = {np.abs(softmax_rows(logits['ATAP']) - P_atap_oracle).max():.1e}")
print(f"DMAP: max |P − rownorm gauss_kernel(m, β/4)| = {gap_dmap:.1e}")
assert row_spread < 1e-14
assert np.abs(softmax_rows(logits["ATAP"]) - P_atap_oracle).max() < 1e-14
assert gap_dmap < 1e-14

# %% [markdown]
# ## 2. The four operators on a Swiss-roll context
#
# Tokens are points: $n = 64$ samples of the Swiss roll, seen through its $(x, z)$ slice (a planar spiral),
# rescaled to unit spread but not centred (the centre of the spiral stays at the origin), ordered by the roll
# parameter $t$ so that neighbours along the sheet are neighbours in the index, and lifted to width $D$ by a
# random linear map, $X = p\,R$ with $R \in \mathbb R^{2\times D}$.  One head $(W_Q, W_K)$, read at the four
# corners.

# %%
roll = SwissRoll()
n = 64
points = roll.sample(n, seed=9)[:, [0, 2]]
points = points[np.argsort(np.hypot(*points.T))]  # the radius of the spiral is the roll parameter t
points = points / points.std()
X = points @ rng.standard_normal((2, D))
W_Q, W_K = 0.35 * rng.standard_normal((2, D, d_h))
q, k = X @ W_Q, X @ W_K
P = {name: family_operator(q, k, name) for name in OPERATORS}
for name in OPERATORS:
    assert np.abs(P[name].sum(axis=1) - 1).max() < 1e-14 and P[name].min() >= 0

fig, axes = plt.subplots(2, 2, figsize=(8.5, 8), layout="constrained")
for name in OPERATORS:
    b, a = CORNERS[name]
    ax = axes[b, a]
    image = ax.imshow(P[name], cmap="magma", vmin=0, vmax=np.quantile(P[name], 0.995))
    ax.set_title(f"{name} (b, a) = ({b}, {a}): {BOND[b]} bond, {LINK[a]} link", fontsize=9)
    ax.set(xlabel="key j (along the roll)", ylabel="query i")
    fig.colorbar(image, ax=ax, shrink=0.75, label=r"$\mathsf{P}_{ij}$")
fig.suptitle(r"$\mathsf{P}$ at the four corners, same $W_Q, W_K$ (the layout of Table 4)")
plt.show()

# %% [markdown]
# DMAP is a band along the diagonal — neighbours along the sheet — with side bands where the next turn of the
# spiral passes close by in the plane; ATAP's indefinite bond adds long-range partners of its own.  The two
# free-link operators move their mass off the diagonal, in the direction the link pushes.
#
# Where does one token look?  The row $\mathsf P_{i\cdot}$ of a token halfway along the roll, drawn on the points
# (marker area ∝ attention weight).

# %%
query = n // 2
fig, axes = plt.subplots(1, 4, figsize=(14, 3.9), layout="constrained")
for ax, name in zip(axes, OPERATORS, strict=True):
    ax.plot(*points.T, ".", color="lightgrey")
    ax.scatter(*points.T, s=600 * P[name][query], color="C3", alpha=0.7)
    ax.plot(*points[query], "k*", ms=12)
    ax.set_title(
        rf"{name}: row $\mathsf{{P}}_{{i\cdot}}$ ($e^{{\bar H}}$ = {effective_neighbours(P[name]):.1f} over all rows)",
        fontsize=10,
    )
    ax.set(xlabel="x (rescaled)", ylabel="z (rescaled)", aspect="equal")
plt.show()

# %% [markdown]
# ## 3. Reversibility and skew
#
# **Exact link ⇔ reversible** **[DERIVED]** ([§A.7](reference.md#reference-a7) "Exact link ⇔ Doob ⇔ reversible").  With an exact link the
# logits are a symmetric kernel plus row constants plus a destination tilt, i.e. a Doob transform, so DMAP and
# ATAP satisfy detailed balance for *any* weights; a free link generically does not.  The table reports the
# two diagnostics of Table 1 of Attention Geometry (§9), both **[RECON]** ([§A.10](reference.md#reference-a10)):
#
# $$\varepsilon_{\mathrm{rev}} = \frac{\lVert\operatorname{diag}(\pi)\mathsf P - \mathsf P^\top\operatorname{diag}(\pi)\rVert_F}
#   {\lVert\operatorname{diag}(\pi)\mathsf P\rVert_F}, \qquad
# \rho_{\mathrm{skew}} = \frac{\lVert M_A^{\mathrm{op}}\rVert_F}{\lVert M_S^{\mathrm{op}}\rVert_F},$$
#
# the second on the operator's effective bilinear form (`effective_form`: DMAP and ATAP have
# $M_A^{\mathrm{op}} = 0$, their exact link being quadratic, not bilinear).

# %%
eps = {name: reversibility_residual(P[name]) for name in OPERATORS}
rho = {name: operator_skew_ratio(W_Q, W_K, name) for name in OPERATORS}
print(f"{'operator':9s} {'ε_rev':>10s} {'ρ_skew':>8s}")
for name in OPERATORS:
    print(f"{name:9s} {eps[name]:10.2e} {rho[name]:8.3f}")
assert eps["DMAP"] < 1e-12 and eps["ATAP"] < 1e-12 and eps["DMTN"] > 1e-3 and eps["ATTN"] > 1e-3
assert rho["DMAP"] == 0.0 and rho["ATAP"] == 0.0 and rho["DMTN"] > 0 and rho["ATTN"] > 0

# %% [markdown]
# "Any weights" deserves more than one draw: random heads at random scales, on random contexts.

# %%
draws = 40 if SMALL else 200
worst = {name: [] for name in OPERATORS}
for _ in range(draws):
    X_draw = rng.standard_normal((10, 8))
    scale = rng.uniform(0.3, 1.0) / np.sqrt(8)  # around the standard init σ = 1/√D
    q_draw, k_draw = X_draw @ (scale * rng.standard_normal((2, 8, 3)))
    for name in OPERATORS:
        worst[name].append(reversibility_residual(family_operator(q_draw, k_draw, name)))
print(f"over {draws} random heads: max ε_rev DMAP {max(worst['DMAP']):.1e}, ATAP {max(worst['ATAP']):.1e}")
print(f"                       min ε_rev DMTN {min(worst['DMTN']):.1e}, ATTN {min(worst['ATTN']):.1e}")
assert max(worst["DMAP"] + worst["ATAP"]) < 1e-12 and min(worst["DMTN"] + worst["ATTN"]) > 1e-3

# %% [markdown]
# **The whole square.**  Between the corners, $\varepsilon_{\mathrm{rev}}$ over a grid of $(b, a) \in [0, 1]^2$ on the
# Swiss-roll head.  The whole edge $a = 0$ is reversible, for every $b$: only the link decides.

# %%
grid = np.linspace(0, 1, 11)
square = np.array([[reversibility_residual(family_operator(q, k, (b, a))) for a in grid] for b in grid])
print(f"max ε_rev on the edge a = 0: {square[:, 0].max():.1e};  min for a ≥ 0.1: {square[:, 1:].min():.1e}")
assert square[:, 0].max() < 1e-12 and square[:, 1:].min() > 1e-6

fig, ax = plt.subplots(figsize=(5, 4))
image = ax.imshow(square, origin="lower", extent=(-0.05, 1.05, -0.05, 1.05), cmap="viridis")
for name in OPERATORS:
    b, a = CORNERS[name]
    ax.text(a - 0.04 if a == 0 else a + 0.04, b, name, color="w", ha="left" if a == 0 else "right", va="center")
ax.set(
    xlabel="a (weight of the free link)",
    ylabel="b (weight of the negative bond)",
    title=r"$\varepsilon_{\mathrm{rev}}$ over the family",
)
fig.colorbar(image, ax=ax, label=r"$\varepsilon_{\mathrm{rev}}$")
plt.tight_layout()
plt.show()

# %% [markdown]
# **The bound $\varepsilon_{\mathrm{rev}} \le \sqrt2$** **[DERIVED]** ([§A.10](reference.md#reference-a10)).  The flux $F = \operatorname{diag}(\pi)\mathsf P$ is
# nonnegative, so
#
# $$\lVert F - F^\top\rVert_F^2 = 2\lVert F\rVert_F^2 - 2\sum_{ij}F_{ij}F_{ji} \le 2\lVert F\rVert_F^2,$$
#
# with equality iff no edge is travelled both ways.  The trained ATTN head of Attention Geometry reaches 1.414 (Table 1).  A
# one-way cycle reaches it exactly; so, in the limit β → ∞, does a pure-rotation head on tokens around a circle:
# $M = W_QW_K^\top$ antisymmetric (no bond at all), $q_i\cdot k_j = \sin(\theta_j - \theta_i)$, so each token
# looks a quarter turn ahead.

# %%
F = np.diag(MarkovOperator(P["ATTN"]).stationary) @ P["ATTN"]
identity_gap = np.sum((F - F.T) ** 2) - (2 * np.sum(F**2) - 2 * np.sum(F * F.T))
print(f"‖F − Fᵀ‖² − (2‖F‖² − 2ΣF_ij F_ji) = {identity_gap:.1e}")
assert abs(identity_gap) < 1e-15

one_way = np.roll(np.eye(6), 1, axis=1)  # i → i + 1 (mod 6)
print(f"one-way 6-cycle: ε_rev − √2 = {reversibility_residual(one_way) - np.sqrt(2):.1e}")
assert abs(reversibility_residual(one_way) - np.sqrt(2)) < 1e-15

angles = 2 * np.pi * np.arange(12) / 12
circle = np.column_stack([np.cos(angles), np.sin(angles)])
rotation = np.array([[0.0, -1.0], [1.0, 0.0]])  # W_Q = I, W_K = rotation: q_i·k_j = sin(θ_j − θ_i)
assert np.abs(circle @ (circle @ rotation).T - np.sin(angles[None, :] - angles[:, None])).max() < 1e-14
sharpness = np.geomspace(0.1, 100, 30)
rotating = {name: [] for name in ("ATTN", "DMAP")}
for s in sharpness:
    for name in rotating:
        P_rot = family_operator(circle, circle @ rotation, name, beta=s)
        rotating[name].append(reversibility_residual(P_rot))
print(f"rotation head, ATTN: ε_rev at β = {sharpness[-1]:g} is √2 − {np.sqrt(2) - rotating['ATTN'][-1]:.1e}")
print(f"rotation head, DMAP of the same weights: max ε_rev {max(rotating['DMAP']):.1e}")
assert np.sqrt(2) - rotating["ATTN"][-1] < 1e-6 and max(rotating["DMAP"]) < 1e-12
assert max(rotating["ATTN"]) <= np.sqrt(2) + 8 * np.finfo(float).eps  # the bound √2, up to a few roundings

fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
ax.semilogx(sharpness, rotating["ATTN"], "o-", ms=3, label=r"ATTN, pure rotation $M = -M^\top$")
ax.semilogx(sharpness, np.maximum(rotating["DMAP"], 1e-18), "s-", ms=3, label="DMAP, same weights")
ax.axhline(np.sqrt(2), color="k", ls="--", lw=1, label=r"the bound $\sqrt{2}$")
ax.set(xlabel=r"$\beta$", ylabel=r"$\varepsilon_{\mathrm{rev}}$", title="12 tokens on a circle")
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
plt.show()

# %% [markdown]
# ## 4. Parameters, gauge and inertia
#
# **DMAP needs half the weights** **[DERIVED]** ([§A.7](reference.md#reference-a7) corollaries; Attention Geometry §10 notes that DMAP
# trains with half of ATTN's query–key weights).  Write $W_M = (W_Q + W_K)/\sqrt2$ and
# $W_N = (W_Q - W_K)/\sqrt2$.  DMAP's logits use $m_i = X_iW_M$ only, so every $(W_Q, W_K)$ with the same $W_M$ —
# any $W_N$ at all, a whole $D\times d_h$ space of them — gives the same operator: a flat gauge orbit, along
# which every loss is constant.  The other three corners all see $W_N$.

# %%
print(f"{'operator':9s} {'D = 16, d_h = 4':>16s} {'D = 384, d_h = 32':>18s} {'stored in CornerHead':>21s}")
for name in OPERATORS:
    stored = sum(p.size for p in project_head(W_Q, W_K, name).parameters)
    assert stored == parameter_count(name, D, d_h)
    print(f"{name:9s} {parameter_count(name, D, d_h):16d} {parameter_count(name, 384, 32):18d} {stored:21d}")
assert 2 * parameter_count("DMAP", D, d_h) == parameter_count("ATTN", D, d_h)

W_M, W_N = (W_Q + W_K) / np.sqrt(2), (W_Q - W_K) / np.sqrt(2)
W_N_moved = rng.standard_normal((D, d_h))  # a different point of the orbit
W_Q_moved, W_K_moved = (W_M + W_N_moved) / np.sqrt(2), (W_M - W_N_moved) / np.sqrt(2)
print("moving W_N with W_M fixed, max |P(moved) − P| per operator:")
moved = {}
for name in OPERATORS:
    moved[name] = np.abs(family_operator(X @ W_Q_moved, X @ W_K_moved, name) - P[name]).max()
    print(f"  {name}: {moved[name]:.1e}")
assert moved["DMAP"] < 1e-14 and min(moved["DMTN"], moved["ATAP"], moved["ATTN"]) > 1e-2

# %% [markdown]
# **Bond inertia** (Table 4: $\mathcal S$ definite or indefinite).  The effective bond of each corner is
# $M_S^{\mathrm{op}} = \tfrac12W_MW_M^\top$ (DMAP, DMTN: positive semidefinite, rank $d_h$) or
# $M_S = \tfrac12W_MW_M^\top - \tfrac12W_NW_N^\top$ (ATAP, ATTN: $d_h$ positive and $d_h$ negative directions
# generically).  Sylvester's inertia counts the signs; `negative_mass` the Frobenius share of the form in its
# negative sector, $\lVert M_S^-\rVert_F/\lVert M_S\rVert_F$ with $M_S^-$ the negative part of its spectral
# decomposition ($\approx 1/\sqrt2$ for a random head, where $W_M$ and $W_N$ are identically distributed, so
# that each sector carries about half of $\lVert M_S\rVert_F^2$).

# %%
print(f"{'operator':9s} {'(n₊, n₋, n₀)':>14s} {'negative mass':>14s}")
for name in OPERATORS:
    M_S_op, M_A_op = effective_form(W_Q, W_K, name)
    inertia = bond_inertia(M_S_op)
    print(f"{name:9s} {inertia!s:>14s} {negative_mass(M_S_op):14.3f}")
    expected = (d_h, 0, D - d_h) if CORNERS[name][0] == 0 else (d_h, d_h, D - 2 * d_h)
    assert inertia == expected

# %% [markdown]
# ## 5. Projecting a head onto the corners
#
# `project_head` keeps a head's weights and evaluates them at a corner (the weight-preserving substitution of
# Attention Geometry §10, before any re-training); `corner_distances` measures how much attention mass that moves,
# $\delta_{\mathrm{op}} = \frac1n\sum_i\tfrac12\sum_j|\mathsf P_{ij} - \mathsf P^{\mathrm{op}}_{ij}|$, and
# `nearest_corner` names the closest constrained corner if it moves at most 10 % (a workbench rule, not
# the paper's).  Four heads on the Swiss-roll context: the random one above; a tied head $W_K = W_Q$
# ($W_N = 0$, so DMTN is the head itself); a nearly tied one; and a head with $W_N$ scaled up.

# %%
for name in OPERATORS:
    gap = np.abs(project_head(W_Q, W_K, name).operator(X) - P[name]).max()
    assert gap < 1e-14, (name, gap)
heads = {
    "random": (W_Q, W_K),
    "tied W_K = W_Q": (W_Q, W_Q.copy()),
    "nearly tied": ((W_M + 0.05 * W_N) / np.sqrt(2), (W_M - 0.05 * W_N) / np.sqrt(2)),
    "large W_N": ((W_M + 3 * W_N) / np.sqrt(2), (W_M - 3 * W_N) / np.sqrt(2)),
}
distances, nearest = {}, {}
print(f"{'head':15s}" + "".join(f"{name:>7s}" for name in OPERATORS) + "   nearest")
for label, (wq, wk) in heads.items():
    distances[label] = corner_distances(X, wq, wk)
    nearest[label] = nearest_corner(X, wq, wk)
    print(f"{label:15s}" + "".join(f"{distances[label][name]:7.3f}" for name in OPERATORS) + f"   {nearest[label]}")
assert all(d["ATTN"] == 0.0 for d in distances.values())
assert distances["tied W_K = W_Q"]["DMTN"] == 0.0 and nearest["nearly tied"] == "DMTN"

fig, ax = plt.subplots(figsize=(9, 3.6), layout="constrained")
width = 0.2
for h, (label, values) in enumerate(distances.items()):
    ax.bar(np.arange(4) + (h - 1.5) * width, [values[name] for name in OPERATORS], width, label=label)
ax.axhline(0.1, color="k", ls=":", lw=1, label="tolerance of nearest_corner")
ax.set_xticks(np.arange(4), OPERATORS)
ax.set(
    xlabel="corner the head is projected onto",
    ylabel="mean TV distance to the head",
    title="how far each projection moves the attention",
)
ax.legend(fontsize=9, title="head", title_fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
plt.show()

# %% [markdown]
# ## 6. Where the circulation is: the stationary current
#
# $J = \operatorname{diag}(\pi)\mathsf P - \mathsf P^\top\operatorname{diag}(\pi)$ **[RECON defs, DERIVED identities]**
# ([§A.7](reference.md#reference-a7) "Stationary currents") is antisymmetric, $J\mathbf 1 = 0$ at stationarity, and $J = 0$ iff detailed balance
# holds.  Exact link ⇔ $J = 0$: DMAP carries none; DMTN, whose link is the head's free link, carries a current
# along the roll.  Its cycle affinities are $2\beta\oint\mathcal A$, the *same* as ATTN's — the bond (definite or
# not) never enters a cycle affinity.

# %%
J = {name: stationary_current(P[name], MarkovOperator(P[name]).stationary) for name in ("DMAP", "DMTN")}
for name, current in J.items():
    sizes = [np.abs(current).max(), np.abs(current + current.T).max(), np.abs(current.sum(axis=1)).max()]
    print(f"{name}: max |J| = {sizes[0]:.1e}, max |J + Jᵀ| = {sizes[1]:.1e}, max |J1| = {sizes[2]:.1e}")
assert np.abs(J["DMAP"]).max() < 1e-14 and np.abs(J["DMTN"]).max() > 1e-5
assert np.abs(J["DMTN"].sum(axis=1)).max() < 1e-14

cycles = triangle_cycles(n)
link = token_split(q, k).link
affinity = {name: cycle_affinities(P[name], cycles) for name in OPERATORS}
gap_link = np.abs(affinity["DMTN"] - 2 * beta * link_holonomy(link, cycles)).max()
gap_attn = np.abs(affinity["DMTN"] - affinity["ATTN"]).max()
print(f"{len(cycles)} triangles: max |𝔄_DMTN − 2β∮𝒜| = {gap_link:.1e}, max |𝔄_DMTN − 𝔄_ATTN| = {gap_attn:.1e}")
print(f"max |𝔄| for DMAP, ATAP: {np.abs(affinity['DMAP']).max():.1e}, {np.abs(affinity['ATAP']).max():.1e}")
assert gap_link < 1e-10 and gap_attn < 1e-10
assert max(np.abs(affinity["DMAP"]).max(), np.abs(affinity["ATAP"]).max()) < 1e-10

# %% [markdown]
# **The link of a planar context.**  Here $X = pR$ with $p \in \mathbb R^2$, so the link is
# $\mathcal A = p\,(RM_AR^\top)\,p^\top$ and $RM_AR^\top$ is a $2\times2$ antisymmetric matrix: one number $c$,
#
# $$\mathcal A_{ij} = c\,(p_i\times p_j) = c\,\lvert p_i\rvert\lvert p_j\rvert\sin(\theta_j - \theta_i),$$
#
# a push around the origin, which is the centre of the spiral: along the sheet.  We check the form, then draw
# the current as a matrix and as a field on the points, $v_i = \sum_j J_{ij}(p_j - p_i)$ (net flow out of token
# $i$, marker area ∝ $\pi_i$).  The colour scale of $J$ is clipped at its 99th percentile of $|J|$, because a
# few tokens of large $\pi$ dominate the flux.

# %%
cross = points[:, [0]] * points[None, :, 1] - points[:, [1]] * points[None, :, 0]  # p_i × p_j
c = np.sum(link * cross) / np.sum(cross**2)
print(f"c = {c:.3f}; max |𝒜 − c p_i×p_j| = {np.abs(link - c * cross).max():.1e} (max |𝒜| = {np.abs(link).max():.1f})")
assert np.abs(link - c * cross).max() < 1e-12 * np.abs(link).max()

pi_dmtn = MarkovOperator(P["DMTN"]).stationary
flow = np.einsum("ij,ijd->id", J["DMTN"], points[None, :, :] - points[:, None, :])
fig, axes = plt.subplots(1, 3, figsize=(14, 4.4), layout="constrained")
top = np.quantile(np.abs(J["DMTN"]), 0.99)
for ax, (name, current) in zip(axes[:2], J.items(), strict=True):
    image = ax.imshow(current, cmap="RdBu_r", vmin=-top, vmax=top)
    ax.set(title=f"current J of {name}", xlabel="j (along the roll)", ylabel="i")
    fig.colorbar(image, ax=ax, shrink=0.8, extend="both", label=r"$J_{ij}$")
axes[2].scatter(*points.T, s=2000 * pi_dmtn, color="lightgrey", edgecolors="grey")
longest = 0.6  # the longest arrow, in units of the plane: arrows stay inside the frame
length = np.hypot(*flow.T).max()
axes[2].quiver(*points.T, *flow.T, color="C3", angles="xy", scale_units="xy", scale=length / longest)
axes[2].plot(0, 0, "k+")
low, high = points.min(axis=0) - longest - 0.1, points.max(axis=0) + longest + 0.1
axes[2].set(xlim=(low[0], high[0]), ylim=(low[1], high[1]), aspect="equal")
axes[2].set(xlabel="x (rescaled)", ylabel="z (rescaled)", title="DMTN: net current out of each token")
plt.show()

# %% [markdown]
# ## 7. How many keys each operator reads
#
# The effective neighbour count $e^{\bar H} \in [1, n]$ **[RECON]** ([§A.10](reference.md#reference-a10); Table 1 of Attention Geometry reports it for
# trained heads, e.g. 1.14 for a DMAP head close to the identity walk).  Along β every operator goes from $n$
# (uniform) towards 1: DMAP and ATAP become identity-like (every token is its own nearest point), ATTN and DMTN
# concentrate on a row argmax.

# %%
betas = np.geomspace(1e-3, 1e2, 41)
neighbours = {}
for name in OPERATORS:
    curve = np.array([effective_neighbours(family_operator(q, k, name, beta=s)) for s in betas])
    neighbours[name] = curve
    standard = effective_neighbours(P[name])
    print(
        f"{name}: e^H̄ = {curve[0]:.1f} at β = {betas[0]:g}, {standard:.2f} at β = {beta}, {curve[-1]:.2f} at β = {betas[-1]:g}"
    )
    assert curve[0] > 0.95 * n and curve[-1] < 2.0 and np.all((curve >= 1) & (curve <= n))

fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
for name in OPERATORS:
    ax.loglog(betas, neighbours[name], label=name)
ax.axvline(beta, color="grey", lw=1, label=r"standard $\beta = 1/\sqrt{d_h}$")
ax.axhline(n, color="k", ls="--", lw=1, label=f"uniform: n = {n}")
ax.axhline(1, color="k", ls=":", lw=1, label="one key")
ax.set(xlabel=r"$\beta$", ylabel=r"$e^{\bar H}$ (effective keys)", title=f"Swiss-roll context, n = {n}")
ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.01, 1))
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  Which corners of the square are reversible for *every* choice of $W_Q, W_K$?
#
# (a) DMAP and ATAP  (b) DMAP and DMTN  (c) DMAP only  (d) all four, at small enough β
#
# :::{dropdown} Answer
# (a).  Reversibility is decided by the link: with $a = 0$ it is the exact link $\tfrac12(g_i - g_j)$, and the
# operator is a Doob transform of a symmetric kernel, whatever the bond.  DMTN (b) keeps the free link and circulates;
# (c) forgets that ATAP's indefinite bond is still symmetric; and a free link gives $\varepsilon_{\mathrm{rev}} > 0$ at
# every β > 0 (d), only proportionally smaller.
# :::
#
# **Check 2.**  A trained head has $\varepsilon_{\mathrm{rev}} = 1.41$.  What does that say?
#
# (a) almost no edge carries flux both ways: the head transports one way  (b) its cycle affinities are maximal
# (c) its bond is strongly indefinite  (d) its attention is nearly uniform
#
# :::{dropdown} Answer
# (a).  $\lVert F - F^\top\rVert_F^2 = 2\lVert F\rVert_F^2 - 2\sum_{ij}F_{ij}F_{ji}$, so the bound $\sqrt2$ is reached
# exactly when $F_{ij}F_{ji} = 0$ on every edge.  The affinities (b) are not bounded at all — $\varepsilon_{\mathrm{rev}}$
# saturates while they grow (Exercise 09.2); the bond (c) does not decide reversibility; and uniform attention (d) is
# reversible.
# :::
#
# **Check 3.**  $W_N = (W_Q - W_K)/\sqrt2$ is changed and $W_M$ kept.  Which operators change?
#
# (a) DMTN, ATAP and ATTN, but not DMAP  (b) all four  (c) only ATTN  (d) none: only $W_M$ enters the logits
#
# :::{dropdown} Answer
# (a).  DMAP's logits $-\tfrac\beta4\lVert m_i - m_j\rVert^2$ use $m = XW_M$ only, so $W_N$ is a flat gauge orbit for DMAP
# (its parameter count is half of ATTN's); DMTN keeps the link $\mathcal A$, ATAP the negative sector
# $-\tfrac12\langle n_i, n_j\rangle$, ATTN both, and all of them involve $n = XW_N$.
# :::
#
# **Check 4.**  How do the cycle affinities of DMTN and ATTN, built from the same weights, compare?
#
# (a) they are equal  (b) DMTN's are smaller, its bond being definite  (c) DMTN's vanish  (d) ATTN's are twice DMTN's
#
# :::{dropdown} Answer
# (a).  Both are $2\beta\oint\mathcal A$: around a loop the symmetric bond, definite or not, cancels between the two
# directions, and only the link survives.  DMTN and ATTN share the free link, so they share every affinity (§6 checks it
# on all triangles); DMTN's current $J$ still differs from ATTN's, because π does.
# :::

# %% [markdown]
# ## Recap
#
# * One family $\ell(b, a)$ holds the four operators; its corners are closed forms: ATTN is $\beta q\cdot k$ exactly (bit
#   for bit), DMAP the Gaussian kernel $e^{-\frac\beta4\lVert m_i - m_j\rVert^2}$ of the learned features (oracle: `gauss_kernel`
#   on the points $m_i$, to $10^{-14}$), ATAP the kernel of the indefinite pseudo-distance, DMTN attention plus $\tfrac12\langle n, n\rangle$.
# * The link decides reversibility: on the whole edge $a = 0$ of the square, and on 40 random heads,
#   $\varepsilon_{\mathrm{rev}} = 0$ to rounding and $\rho_{\mathrm{skew}} = 0$ exactly; a free link gives $\varepsilon_{\mathrm{rev}} > 10^{-3}$.
# * $\varepsilon_{\mathrm{rev}} \le \sqrt2$ from $\lVert F - F^\top\rVert^2 = 2\lVert F\rVert^2 - 2\sum F_{ij}F_{ji}$ (checked as an identity); the bound is
#   reached by one-way transport: a one-way cycle exactly, a sharp pure-rotation head to $10^{-6}$.
# * The bond decides definiteness: inertia $(d_h, 0, \cdot)$ for DMAP and DMTN, $(d_h, d_h, \cdot)$ for ATAP and ATTN (Sylvester).
# * DMAP ignores $W_N$ entirely (moving along the orbit changes $\mathsf P$ by $< 10^{-14}$) and needs half the query–key weights.
# * Exact link ⇔ zero current; a free link's circulation lives in its cycle affinities $2\beta\oint\mathcal A$, shared by DMTN and
#   ATTN (to $10^{-10}$ on all triangles): the bond never enters a cycle affinity.
#
# The trained numbers of Table 1 of Attention Geometry depend on a training protocol that is not available
# ([mathematical reference §A.11](reference.md#reference-a11)); what is reproduced here are the structural facts behind them.
# Notebook 10a (Multi-head attention is a connection walk) puts several heads together: multi-head attention
# as one step of a connection walk.

# %% [markdown]
# ## Exercises
#
# Use the Swiss-roll head of sections 2–7 (`q`, `k`, `P`, `points`, `beta`) and only the public API imported at the
# top (`workbench.attention`, `workbench.markov`), plus `workbench.catalogue.fit_rate` and sympy.

# %% [markdown]
# ### Exercise 09.1 (compute)
#
# Every member of the edge $a = 0$ is a Doob transform.  Write $S^{(b)}_{ij} = \tfrac12\langle m_i, m_j\rangle - \tfrac b2\langle n_i, n_j\rangle$ and
# $g^{(b)}_i = S^{(b)}_{ii}$; the logits are $\beta[S^{(b)}_{ij} + \tfrac12(g^{(b)}_i - g^{(b)}_j)]$, and the row softmax drops the source term.
# For $b = 0, \tfrac12, 1$ build $\mathsf K = \exp_\odot(\beta S^{(b)})$ and $h = e^{-\beta g^{(b)}/2}$, and compare
# `doob_transform(K, h)` (from `workbench.markov`) with
# `family_operator(q, k, (b, 0.0))`, and the left Perron vector (`MarkovOperator(...).stationary`) with $h\odot\mathsf Kh$ normalised.
# Then, for DMAP ($b = 0$), show that $h_i\mathsf K_{ij}h_j = e^{-\frac\beta4\lVert m_i - m_j\rVert^2}$, so that π is the normalised **degree** of
# `gauss_kernel(m, beta / 4)`.
#
# **What a correct answer shows.**  Operators and stationary laws agree to $\sim10^{-15}$ for every $b$ (rounding only:
# these are identities), and DMAP's stationary law is the degree of the Gauss kernel — the stationary law of an α = 0
# diffusion map {cite:p}`coifman2006diffusion`: tokens in dense parts of the roll (in feature space) are visited more.
#
# **Answer in** `answer_09_1`: a dict with keys `"K"`, `"h"` and `"pi"`, each a dict keyed by $b \in \{0.0, 0.5, 1.0\}$
# (`"K"`: the $64\times64$ kernel $\exp_\odot(\beta S^{(b)})$; `"h"`: the 64 values of the tilt $h$; `"pi"`:
# $h\odot\mathsf Kh$ normalised to sum 1), and `"pi_degree"` (array of 64 values: the degree of
# `gauss_kernel(m, beta / 4)` normalised to sum 1).

# %%
# your code here: m = (q + k) / np.sqrt(2), n_feat = (q - k) / np.sqrt(2); then doob_transform and MarkovOperator

# %% [markdown]
# ### Exercise 09.2 (derive)
#
# Take the walk on a cycle of $N \ge 3$ tokens that steps forward with probability $p$ and backward with $1 - p$.  On paper:
# find its stationary law, its flux $F = \operatorname{diag}(\pi)\mathsf P$, and show
#
# $$\varepsilon_{\mathrm{rev}}(p) = \frac{\sqrt2\,\lvert2p - 1\rvert}{\sqrt{p^2 + (1 - p)^2}}, \qquad
# \mathfrak A(\text{the whole cycle}) = N\log\frac p{1 - p},$$
#
# independent of $N$ for $\varepsilon_{\mathrm{rev}}$.  Check the first formula with sympy (build $\mathsf P$ symbolically for $N = 3$ and
# $N = 6$) and both numerically with `reversibility_residual` and `cycle_affinities` at a few values of $p$.
#
# **What a correct answer shows.**  sympy confirms $\varepsilon_{\mathrm{rev}}^2$ identically for both $N$; the numbers agree to
# $10^{-14}$.  The formula is $0$ at $p = \tfrac12$ (reversible), reaches $\sqrt2$ only at $p \in \{0, 1\}$ (one-way transport,
# the equality case of the bound), and is already $1.03$ at $p = 0.8$: $\varepsilon_{\mathrm{rev}}$ saturates, while the affinity
# $N\log\frac p{1-p}$ grows without bound as $p \to 1$.
#
# **Answer in** `answer_09_2`: a dict with keys `"eps_rev"` (your closed form of $\varepsilon_{\mathrm{rev}}(p)$, a sympy
# expression in the symbol `p`), `"affinity"` (the affinity of the whole cycle walked forwards, $0 \to 1 \to \dots \to
# N - 1 \to 0$, a sympy expression in the symbols `p` and `N`), `"p_values"` (array: the values of $p$ of your numerical
# check) and `"eps_numeric"` (array: `reversibility_residual` of the walk with $N = 6$ at those $p$).

# %%
# your code here: sympy Matrix for the cycle walk, then reversibility_residual and cycle_affinities(P, [list(range(N))])

# %% [markdown]
# ### Exercise 09.3 (explore)
#
# Walk away from the reversible edge: for $b \in \{0, \tfrac12, 1\}$ and $a$ in `np.geomspace(1e-4, 1e-2, 5)`, compute
# $\varepsilon_{\mathrm{rev}}$ of `family_operator(q, k, (b, a))` and fit its rate in $a$ with `fit_rate`.  Compare also the cycle
# affinities on `triangle_cycles(n)` with $a$ times those of DMTN.
#
# **What a correct answer shows.**  The fitted slopes are 1 (within 0.05): irreversibility is linear in the weight of the
# free link, and the prefactor $\lim\varepsilon_{\mathrm{rev}}/a$ depends on $b$ (about 2.2, 2.7 and 2.1 here), because the bond shapes
# π and the flux that the link tilts.  The affinities are exactly $a$ times DMTN's (to $10^{-13}$), for every $b$: the exact
# part $(1 - a)\tfrac12(g_i - g_j)$ and the bond cancel around every loop, so only $a\mathcal A$ circulates.

# %%
# your code here: reversibility_residual(family_operator(q, k, (b, a))) over the grid; fit_rate(a_values, eps)
