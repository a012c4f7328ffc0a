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
# # 08 — Reading a head: bond, link, potential
#
# One attention head, read as a Markov operator.  Its raw score $\mathcal W_{ij} = q_i\cdot k_j$ is not
# symmetric, and that single fact organises everything: the symmetric part (the **bond**) is a Gaussian
# kernel of a pseudo-distance with a site potential, the antisymmetric part (the **link**) is a field
# on the edges of the complete graph, and the row softmax turns the two into a diffusion, a Doob tilt
# and a circulation ({cite:p}`candanedo2026attention` §4, §7; [mathematical reference §A.7](reference.md#reference-a7)).
#
# **Objectives.**  After this notebook you can
# * split a head's score into bond $\mathcal S$ and link $\mathcal A$, and the bond into a pseudo-distance $d^2$ and a site
#   potential $g$, with `score_split`, and say why the row softmax ignores the source term;
# * write the bond-only head as a Doob transform and predict its stationary law $\pi \propto h\odot\mathsf Kh$;
# * Hodge-split the link into an exact gauge and a coexact circulation, and compute cycle affinities as
#   $2\beta$ times the link's holonomy;
# * explain with a formula how the inverse temperature moves a head from uniform to argmax attention, and why
#   $\beta = 1/\sqrt{d_h}$ keeps the logits at unit variance.
#
# **Prerequisites.**  Notebooks 00 (How to read this workbench: the small-β softmax expansion and `fit_rate`, used in
# Exercise 08.1), 04 (Geometry without coordinates: the flux $\operatorname{diag}(\pi)\mathsf P$ and its current, the
# residual $\varepsilon_{\mathrm{rev}}$, cycle affinities and Kolmogorov's criterion, the Hodge split of a link) and 06b
# (Doob tilt and antisymmetric link: the Doob h-transform and its stationary law $\pi \propto h\odot\mathsf Kh$); finite
# Markov chains with their stationary law, reversibility and detailed balance, which the course assumes as background.
# Maths: symmetric and antisymmetric parts of a matrix, the softmax and its entropy, variance of a product of
# independent Gaussians.
#
# **Time.**  About 60 minutes in class (sections 1–4; section 5 as reading); the code runs in about 20 s.
#
# **Plan.**  On a random head with biases and a context of a dozen tokens, this notebook checks cell by cell that
#
# 1. the score splits exactly into bond $\mathcal S$ and link $\mathcal A$, and the bond into a
#    distance $d^2$ and a site potential $g$;
# 2. the row softmax cancels the source term of the distance form, and the destination term is a Doob
#    transform with stationary law $\pi \propto h\odot\mathsf Kh$;
# 3. the link splits into an exact part (a Doob gauge: reversible) and a coexact part that carries
#    all the circulation — the cycle affinity is $2\beta$ times the holonomy of the link;
# 4. the inverse temperature β moves the head from uniform to argmax attention, and the standard
#    $\beta = 1/\sqrt{d_h}$ keeps the logits at unit variance for every head width.
#
# **Tags.**  Those of the [mathematical reference](reference.md): **[SEED]** printed in the
# available text of the paper, **[DERIVED]** a consequence checked here, **[RECON]** a reconstruction of a formula
# that is not available.
#
# **Conventions.**  Row-vector tokens $X \in \mathbb R^{n\times D}$, $q_i = X_iW_Q + b_Q$, $k_j = X_jW_K + b_K$;
# the head's Markov operator $\mathsf P = \operatorname{rownorm}\exp_\odot(\beta\mathcal W)$ is
# row-stochastic and acts on functions from the left, $(\mathsf Pf)_i = \sum_j\mathsf P_{ij}f_j$; its
# positive generator is $\mathsf L = I - \mathsf P$.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from workbench.attention import (
    beta_sweep,
    bond_inertia,
    bond_link_split,
    destination_tilt,
    distance_form_logits,
    exact_link,
    link_hodge_split,
    link_holonomy,
    link_potential,
    logit_variance_at_init,
    mean_entropy,
    random_head,
    reversibility_residual,
    score_split,
    softmax_rows,
    triangle_cycles,
)
from workbench.markov import MarkovOperator, cycle_affinities, doob_transform

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(8)

n, D, d_h = 12, 16, 4
head = random_head(rng, D, d_h, bias=True, scale=1.5 / np.sqrt(D))  # 1.5× the init scale: a sharper head
X = rng.standard_normal((n, D))
beta = head.beta
print(head)
print(f"context: n = {n} tokens of width D = {D}; β = 1/√d_h = {beta}")


def heatmap(ax, values, title):
    """A matrix as an image, on a colour scale symmetric about 0."""
    top = np.abs(values).max()
    image = ax.imshow(values, cmap="RdBu_r", vmin=-top, vmax=top)
    ax.set(title=title, xlabel="key j", ylabel="query i")
    plt.colorbar(image, ax=ax, shrink=0.8)


# %% [markdown]
# ## 1. Bond and link
#
# **[DERIVED]** ([§A.7](reference.md#reference-a7) "Exact bond/link split").  Split the score into its symmetric and antisymmetric parts,
#
# $$\mathcal W = \mathcal S + \mathcal A, \qquad \mathcal S_{ij} = \tfrac12(q_i\cdot k_j + k_i\cdot q_j), \qquad
# \mathcal A_{ij} = \tfrac12(q_i\cdot k_j - k_i\cdot q_j),$$
#
# so that $\exp_\odot(\beta\mathcal W) = \exp_\odot(\beta\mathcal S)\odot\exp_\odot(\beta\mathcal A)$.  Without
# biases this is the split $M = M_S + M_A$ of the bilinear form $M = W_QW_K^\top$ ($\mathcal S = XM_SX^\top$,
# $\mathcal A = XM_AX^\top$; Attention Geometry §7 {cite:p}`candanedo2026attention` writes the head as $\exp_\odot(\beta\mathcal RM\mathcal R^\top)$
# [SEED]).  With biases the token form above is the one that holds.

# %%
W = head.scores(X)
split = score_split(X, head.W_Q, head.W_K, head.b_Q, head.b_K)
S, A, g, d2 = split
residual = np.abs(S + A - W).max()
print(f"max |S + A − W| = {residual:.1e}")
print(f"S symmetric: {np.array_equal(S, S.T)};  A antisymmetric: {np.array_equal(A, -A.T)}  (exactly)")
assert residual < 1e-13 and np.array_equal(S, S.T) and np.array_equal(A, -A.T)

product = np.exp(beta * S) * np.exp(beta * A)
print(f"max relative |exp(βS)⊙exp(βA) − exp(βW)| = {np.abs(product / np.exp(beta * W) - 1).max():.1e}")
assert np.abs(product / np.exp(beta * W) - 1).max() < 1e-13

# the bias-free part of the same head, as a bilinear form
M_S, M_A = bond_link_split(head.W_Q @ head.W_K.T)
plain = score_split(X, head.W_Q, head.W_K)
form_residual = max(np.abs(plain.bond - X @ M_S @ X.T).max(), np.abs(plain.link - X @ M_A @ X.T).max())
print(f"no biases: max |𝒮 − X M_S Xᵀ|, |𝒜 − X M_A Xᵀ| = {form_residual:.1e}")
assert form_residual < 1e-13
print(f"inertia of M_S (positive, negative, zero eigenvalues): {bond_inertia(M_S)}  — an indefinite bond")

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
heatmap(axes[0], W, r"score $\mathcal{W}_{ij} = q_i\cdot k_j$")
heatmap(axes[1], S, r"bond $\mathcal{S}$ (symmetric)")
heatmap(axes[2], A, r"link $\mathcal{A}$ (antisymmetric)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 2. The distance form and the site potential
#
# **[DERIVED]** ([§A.7](reference.md#reference-a7) "Distance form with site potentials").  Put $g_i = \mathcal S_{ii} = q_i\cdot k_i$ and
# $d^2_{ij} = g_i + g_j - 2\mathcal S_{ij}$.  Then, exactly,
#
# $$\beta\mathcal W_{ij} = -\tfrac\beta2 d^2_{ij} + \underbrace{\tfrac\beta2 g_i}_{\text{source}}
#   + \underbrace{\tfrac\beta2 g_j}_{\text{destination}} + \beta\mathcal A_{ij}.$$
#
# For a positive semidefinite bond $M_S = LL^\top$, $d^2$ is the squared distance $\lVert(x_i - x_j)L\rVert^2$;
# a random head's bond is indefinite, and $d^2$ is then a pseudo-distance that can be negative off the
# diagonal.

# %%
recombined = -0.5 * beta * d2 + 0.5 * beta * g[:, None] + 0.5 * beta * g[None, :] + beta * A
print(f"max |distance form − βW| = {np.abs(recombined - beta * W).max():.1e}")
assert np.abs(recombined - beta * W).max() < 1e-13
print(f"diag d² = 0 exactly: {np.all(np.diag(d2) == 0)};  negative off-diagonal d²: {(d2 < 0).sum()} of {n * (n - 1)}")

fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), gridspec_kw={"width_ratios": [1, 1.25]})
axes[0].bar(np.arange(n), g, color=np.where(g > 0, "C3", "C0"))
axes[0].set(xlabel="token i", ylabel=r"$g_i = q_i\cdot k_i$", title="site potential $g$")
heatmap(axes[1], d2, r"pseudo-distance $d^2_{ij} = g_i + g_j - 2\mathcal{S}_{ij}$")
plt.tight_layout()
plt.show()

# %% [markdown]
# **The row softmax cancels the source term.**  The source term $\tfrac\beta2g_i$ is constant along row $i$,
# and a row constant divides out of $e^{\ell_{ij}}/\sum_l e^{\ell_{il}}$.  So the logits
# $\ell_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_j + \beta\mathcal A_{ij}$ (`distance_form_logits`) give the
# head's own $\mathsf P$, although they differ from $\beta\mathcal W$ by a term that varies from row to row.

# %%
P = head.operator(X)
P_distance = softmax_rows(distance_form_logits(split, beta))
gap = distance_form_logits(split, beta) - beta * W
print(f"logits differ by the source term: max |ℓ − βW + βg_i/2| = {np.abs(gap + 0.5 * beta * g[:, None]).max():.1e}")
print(f"spread of that row constant over the rows: {np.ptp(0.5 * beta * g):.2f}")
print(f"max |P(ℓ) − P(βW)| = {np.abs(P_distance - P).max():.1e}")
assert np.abs(P_distance - P).max() < 1e-14

# %% [markdown]
# **The destination term is a Doob transform.**  With the symmetric kernel
# $\mathsf K_{ij} = e^{-\beta d^2_{ij}/2}$ (the Gauss kernel $e^{-\beta'\lVert x_i - x_j\rVert^2}$ with $\beta' = \beta/2$,
# in the metric of the bond, when that is definite) and the tilt $h_j = e^{\beta g_j/2}$, the head *without its
# link* is
#
# $$\operatorname{rownorm}\exp_\odot(\beta\mathcal S) = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K\operatorname{diag}(h) =
# \mathsf P_h,$$
#
# the Doob h-transform {cite:p}`doob1957conditional` of Attention Geometry §4 **[SEED]**; for symmetric $\mathsf K$ it is reversible with
# $\pi^{(h)} \propto h\odot\mathsf Kh$ **[DERIVED]**, since $\pi_i\mathsf P_{h,ij} \propto h_i\mathsf K_{ij}h_j$ is symmetric.
# We compare with the stationary law found as a left eigenvector, without using $h$.

# %%
K, h = destination_tilt(split, beta)
P_bond = softmax_rows(beta * S)
doob = doob_transform(K, h)
pi_eigen = MarkovOperator(P_bond).stationary  # left Perron vector, computed from P alone
pi_doob = h * (K @ h) / np.sum(h * (K @ h))
print(f"max |P_h − rownorm exp(β𝒮)| = {np.abs(doob.P - P_bond).max():.1e}")
print(f"max |π(eigenvector) − h⊙Kh/Σ| = {np.abs(pi_eigen - pi_doob).max():.1e}")
print(f"ε_rev of the bond-only head: {reversibility_residual(P_bond):.1e}")
assert np.abs(doob.P - P_bond).max() < 1e-14 and np.abs(pi_eigen - pi_doob).max() < 1e-12
assert reversibility_residual(P_bond) < 1e-12

# %% [markdown]
# ## 3. The link: an exact gauge and a circulation
#
# **[DERIVED]** ([§A.7](reference.md#reference-a7) "Cycle affinities").  On the complete graph the link has a Hodge split
#
# $$\mathcal A_{ij} = \underbrace{\varphi_i - \varphi_j}_{\text{exact}} + \mathcal A^\perp_{ij},
# \qquad \varphi_i = \tfrac1n\sum_j\mathcal A_{ij}, \qquad \mathcal A^\perp\mathbf 1 = 0,$$
#
# and the two parts are orthogonal in $\sum_{ij}$ (the least-squares split).

# %%
exact, coexact = link_hodge_split(A)
phi = link_potential(A)
print(f"max |exact + coexact − 𝒜| = {np.abs(exact + coexact - A).max():.1e}")
print(f"max |exact − (φ_i − φ_j)| = {np.abs(exact - exact_link(phi)).max():.1e}")
print(f"max |𝒜^⊥ 1| = {np.abs(coexact.sum(axis=1)).max():.1e};  ⟨exact, coexact⟩ = {np.sum(exact * coexact):.1e}")
share = np.sum(coexact**2) / np.sum(A**2)
print(f"share of ‖𝒜‖² in the coexact part: {share:.2f}")
assert np.abs(exact + coexact - A).max() < 1e-14 and np.abs(coexact.sum(axis=1)).max() < 1e-13
assert abs(np.sum(exact * coexact)) < 1e-12

# %% [markdown]
# **The exact part is a Doob gauge** **[DERIVED]** ([§A.7](reference.md#reference-a7) "Exact link ⇔ Doob ⇔ reversible").  In the logits,
# $\beta(\varphi_i - \varphi_j)$ is one more source term (cancelled) and one more destination tilt
# $e^{-\beta\varphi_j}$.  So the head with its coexact link removed,
# $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \text{exact}))$, is the Doob transform of the same $\mathsf K$
# by $h\odot e^{-\beta\varphi}$ — and is reversible.  The detailed-balance residual (a [RECON] of the
# paper's Table 1 metric, [§A.10](reference.md#reference-a10))
#
# $$\varepsilon_{\mathrm{rev}} = \frac{\lVert\operatorname{diag}(\pi)\mathsf P - \mathsf P^\top\operatorname{diag}(\pi)\rVert_F}
# {\lVert\operatorname{diag}(\pi)\mathsf P\rVert_F}$$
#
# drops from the head's value to rounding.

# %%
P_gauge = softmax_rows(beta * (S + exact))  # the head with its coexact link removed
doob_gauge = doob_transform(K, h * np.exp(-beta * phi))
eps_head, eps_gauge = reversibility_residual(P), reversibility_residual(P_gauge)
print(f"max |rownorm exp(β(𝒮 + dφ)) − P_(h e^(−βφ))| = {np.abs(P_gauge - doob_gauge.P).max():.1e}")
print(f"ε_rev of the head: {eps_head:.4f};  with its coexact link removed: {eps_gauge:.1e}")
assert np.abs(P_gauge - doob_gauge.P).max() < 1e-14
assert eps_gauge < 1e-12 and eps_head > 0.01

# %% [markdown]
# **The coexact part carries all the circulation** **[DERIVED]** ([§A.7](reference.md#reference-a7) "Cycle affinities"; {cite:p}`schnakenberg1976network`).  For a cycle
# $\gamma = (i_0\to i_1\to\dots\to i_0)$ the Schnakenberg affinity of the head is twice β times the holonomy of the
# link,
#
# $$\mathfrak A(\gamma) = \sum_m\log\frac{\mathsf P_{i_mi_{m+1}}}{\mathsf P_{i_{m+1}i_m}} = 2\beta\oint_\gamma\mathcal A,$$
#
# because the partition functions $Z_i$ and the symmetric bond cancel around a loop.  The exact part has
# zero holonomy, so the affinities of the head and of the head with its *exact* link removed coincide.
# We check on the $(n-1)(n-2)/2 = 55$ triangles $(0, i, j)$, a basis of the cycle space of $K_n$
# (Kolmogorov's criterion: all of them vanish iff the head is reversible).  The affinities, not
# $\varepsilon_{\mathrm{rev}}$, are the gauge-invariant record: $\varepsilon_{\mathrm{rev}}$ is weighted by $\pi$,
# which the exact part does move.

# %%
cycles = triangle_cycles(n)
affinity = cycle_affinities(P, cycles)
holonomy = link_holonomy(A, cycles)
affinity_coexact = cycle_affinities(softmax_rows(beta * (S + coexact)), cycles)
print(f"{len(cycles)} triangles; max |𝔄 − 2β∮𝒜| = {np.abs(affinity - 2 * beta * holonomy).max():.1e}")
print(f"max |∮ exact| = {np.abs(link_holonomy(exact, cycles)).max():.1e}")
print(f"max |𝔄(head) − 𝔄(head without its exact link)| = {np.abs(affinity - affinity_coexact).max():.1e}")
print(f"largest |affinity|: {np.abs(affinity).max():.2f}")
eps_coexact = reversibility_residual(softmax_rows(beta * (S + coexact)))
print(f"ε_rev with the exact link removed: {eps_coexact:.4f} (head: {eps_head:.4f}) — still irreversible")
assert np.abs(affinity - 2 * beta * holonomy).max() < 1e-12
assert np.abs(affinity - affinity_coexact).max() < 1e-12 and eps_coexact > 0.01

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), gridspec_kw={"width_ratios": [1, 1, 1.1]})
heatmap(axes[0], exact, r"exact part $\varphi_i - \varphi_j$")
heatmap(axes[1], coexact, r"coexact part $\mathcal{A}^\perp$")
line = np.array([holonomy.min(), holonomy.max()]) * 2 * beta
axes[2].plot(line, line, "k--", lw=1, label=r"$\mathfrak{A} = 2\beta\oint\mathcal{A}$")
axes[2].plot(2 * beta * holonomy, affinity, "o", ms=4, label="triangles (0, i, j)")
axes[2].set(
    xlabel=r"$2\beta\,\times$ holonomy of the link",
    ylabel=r"cycle affinity of $\mathsf{P}$",
    title=r"affinity $= 2\beta\,\times$ holonomy",
)
axes[2].legend(fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. Temperature: uniform, mixture, argmax
#
# The ISA ML01 catalogue entry {cite:p}`isaml01` sorts attention by its inverse temperature into three regimes: β → 0 gives uniform
# rows (entropy $\log n$), β → ∞ the argmax of each row (entropy 0 without ties), and the standard
# $\beta = 1/\sqrt{d_h}$ sits in between, a genuine mixture.  Along the way each row entropy
# $H_i = \log Z_i - \beta\,\mathbb E_{\mathsf P_i}[\mathcal W_{i\cdot}]$ decreases, with
#
# $$\frac{dH_i}{d\beta} = -\beta\operatorname{Var}_{\mathsf P^{(\beta)}_{i\cdot}}(\mathcal W_{i\cdot}) \le 0$$
#
# **[DERIVED]** (a one-line differentiation, `beta_sweep` docstring).  We check the two limits, the
# monotonicity, and the derivative against a centred finite difference.

# %%
betas = np.geomspace(1e-3, 1e3, 121)
sweep = beta_sweep(W, betas)
print(f"uniform limit log n = {np.log(n):.4f}: H̄(β = {betas[0]:g}) = {sweep.mean_entropy[0]:.4f}")
print(f"argmax limit {sweep.argmax_limit:.1f}: H̄(β = {betas[-1]:g}) = {sweep.mean_entropy[-1]:.2e}")
H_standard = mean_entropy(P)
print(f"standard β = {beta}: H̄ = {H_standard:.3f}, e^H̄ = {np.exp(H_standard):.2f} effective keys of {n}")
assert np.all(np.diff(sweep.mean_entropy) <= 1e-12)
assert abs(sweep.mean_entropy[0] - np.log(n)) < 1e-2 and sweep.mean_entropy[-1] < 1e-3
assert 0.2 * np.log(n) < H_standard < 0.95 * np.log(n)

step = 1e-4
slope = (beta_sweep(W, [beta + step]).mean_entropy[0] - beta_sweep(W, [beta - step]).mean_entropy[0]) / (2 * step)
variance = np.sum(P * W**2, axis=1) - np.sum(P * W, axis=1) ** 2
print(f"dH̄/dβ at β = {beta}: finite difference {slope:.6f}, −β mean Var = {-beta * variance.mean():.6f}")
assert abs(slope + beta * variance.mean()) < 1e-6

# %%
fig, ax = plt.subplots(figsize=(6.5, 3.8))
ax.semilogx(betas, sweep.mean_entropy, color="C0", label=r"mean row entropy $\bar H(\beta)$")
ax.axhline(np.log(n), color="grey", ls="--", lw=1, label=r"uniform limit $\log n$")
ax.axhline(sweep.argmax_limit, color="grey", ls=":", lw=1, label="argmax limit")
ax.axvline(beta, color="C3", lw=1, label=r"standard $\beta = 1/\sqrt{d_h}$")
for text, where in (("uniform", 3e-3), ("mixture", 1.3 * beta), ("argmax", 1e2)):
    ax.text(where, 1.6, text, ha="left" if text == "mixture" else "center", fontsize=9)
ax.set(xlabel=r"$\beta$", ylabel=r"$\bar H$ (nats)", title=f"one head, n = {n}: from uniform to argmax")
ax.legend(fontsize=9, loc="lower left")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 5. Why $1/\sqrt{d_h}$
#
# At the standard initialisation ($X_i \sim N(0, I_D)$, weights $N(0, 1/D)$, all independent) the raw score of
# two different tokens has mean 0 and
#
# $$\operatorname{Var}(q_i\cdot k_j) = \operatorname{tr}\bigl(\mathbb E[W_Q^\top W_Q]\,\mathbb E[W_K^\top W_K]\bigr) = d_h,$$
#
# independent of $D$ ({cite:p}`vaswani2017attention` §3.2.1; {cite:t}`isaml01` quotes $\sigma^2 \approx d_h$).  Unscaled logits
# therefore grow like $\sqrt{d_h}$ and push wide heads into the argmax regime; the factor $1/\sqrt{d_h}$ holds
# their variance at 1.  Monte Carlo over `n_draws` independent heads, on a log–log plot: slope 1 unscaled,
# slope 0 scaled.

# %%
widths = np.array([1, 2, 4, 8, 16, 32, 64])
draws = 100 if SMALL else 400
unscaled = [logit_variance_at_init(rng, 64, int(w), n_draws=draws, scaled=False) for w in widths]
scaled = [logit_variance_at_init(rng, 64, int(w), n_draws=draws, scaled=True) for w in widths]
slope_unscaled = np.polyfit(np.log(widths), np.log([v.measured for v in unscaled]), 1)[0]
slope_scaled = np.polyfit(np.log(widths), np.log([v.measured for v in scaled]), 1)[0]
print(f"{'d_h':>4s} {'Var unscaled':>13s} {'(pred.)':>8s} {'Var scaled':>11s} {'z':>6s}")
for w, u, s in zip(widths, unscaled, scaled, strict=True):
    print(f"{w:4d} {u.measured:13.3f} {u.predicted:8.0f} {s.measured:11.3f} {s.z_score:6.2f}")
print(f"log-log slopes: unscaled {slope_unscaled:.3f}, scaled {slope_scaled:.3f}")
assert abs(slope_unscaled - 1) < 0.05 and abs(slope_scaled) < 0.05
assert all(abs(v.z_score) < 4 for v in unscaled + scaled)  # each within four standard errors

fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.errorbar(
    widths, [v.measured for v in unscaled], [2 * v.standard_error for v in unscaled], fmt="o", label=r"$q\cdot k$"
)
ax.errorbar(
    widths,
    [v.measured for v in scaled],
    [2 * v.standard_error for v in scaled],
    fmt="s",
    label=r"$q\cdot k/\sqrt{d_h}$",
)
ax.loglog(widths, widths, "k--", lw=1, label=r"$d_h$ (slope 1)")
ax.loglog(widths, np.ones_like(widths), "k:", lw=1, label="1")
ax.set(xlabel=r"head width $d_h$", ylabel="logit variance at init", title="D = 64, off-diagonal logits")
ax.legend(fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  A constant $c_i$ is added to every score of row $i$, $\mathcal W_{ij} \mapsto \mathcal W_{ij} + c_i$.
# What happens to the head's operator $\mathsf P = \operatorname{rownorm}\exp_\odot(\beta\mathcal W)$?
#
# (a) nothing: $e^{\beta c_i}$ divides out of row $i$  (b) it becomes the Doob transform by $h = e^{\beta c}$
# (c) its stationary law is multiplied by $e^{\beta c}$ and renormalised  (d) its link changes, so it circulates
#
# :::{dropdown} Answer
# (a).  A row constant is a source term, and the row normalisation removes it exactly — the same cancellation as the
# $\tfrac\beta2g_i$ of §2.  (b) is what a *destination* term $c_j$ would do (a Doob tilt, whose stationary law is
# $h\odot\mathsf Kh$ and not the (c) of the options); and the antisymmetric part $\tfrac12(c_i - c_j)$ of a row constant
# is exact, so it could not create circulation anyway (d).
# :::
#
# **Check 2.**  The coexact part $\mathcal A^\perp$ of the link is removed and the exact part $\varphi_i - \varphi_j$
# kept.  The new head $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \varphi_i - \varphi_j))$ is
#
# (a) reversible: the Doob transform of $\mathsf K$ by $h\odot e^{-\beta\varphi}$  (b) reversible only if $\varphi$ is
# constant  (c) irreversible, with the same cycle affinities as the head  (d) the head itself, since the exact part
# carries the circulation
#
# :::{dropdown} Answer
# (a).  In the logits, $\beta\varphi_i$ is one more source term (cancelled) and $-\beta\varphi_j$ one more destination
# tilt, so the head is a Doob transform of the symmetric $\mathsf K$, reversible for every $\varphi$ (b is wrong).  Its
# cycle affinities are $2\beta\oint(\varphi_i - \varphi_j) = 0$, not the head's (c); the circulation sits in
# $\mathcal A^\perp$, not in the exact part (d).
# :::
#
# **Check 3.**  Removing the *exact* part of the link leaves every cycle affinity unchanged but moves
# $\varepsilon_{\mathrm{rev}}$.  Why?
#
# (a) affinities are sums of $\log(\mathsf P_{ij}/\mathsf P_{ji})$ around loops, where partition functions and gradients
# telescope; $\varepsilon_{\mathrm{rev}}$ is weighted by π, which the exact part moves  (b) rounding
# (c) $\varepsilon_{\mathrm{rev}}$ only sees the bond  (d) affinities only see the bond
#
# :::{dropdown} Answer
# (a).  Around a loop each partition function $Z_{i_m}$ appears once with each sign, the symmetric bond cancels between
# the two directions and $\oint(\varphi_i - \varphi_j) = 0$, so only $2\beta\oint\mathcal A^\perp$ survives.  $\varepsilon_{\mathrm{rev}}$ is
# built from the flux $\operatorname{diag}(\pi)\mathsf P$, and a Doob tilt changes π: it is not gauge invariant.  The
# differences in §3 are of order 0.01, far from rounding (b); (c) and (d) swap what each quantity sees — the bond
# enters $\varepsilon_{\mathrm{rev}}$ through π, and never enters an affinity.
# :::
#
# **Check 4.**  At the standard initialisation a head's width $d_h$ is doubled and the logits are *not* scaled by
# $1/\sqrt{d_h}$.  What happens to the variance of an off-diagonal score $q_i\cdot k_j$, and to the head?
#
# (a) it doubles, and the head moves towards the argmax regime  (b) it stays 1  (c) it halves, and the head becomes
# more uniform  (d) it quadruples
#
# :::{dropdown} Answer
# (a).  $\operatorname{Var}(q_i\cdot k_j) = \operatorname{tr}(\mathbb E[W_Q^\top W_Q]\,\mathbb E[W_K^\top W_K]) = d_h$, a
# sum of $d_h$ uncorrelated products of unit variance: linear in $d_h$, not quadratic (d).  Larger logits act like a
# larger β, and the row entropy falls with β (§4), so the head sharpens — not (c).  The factor $1/\sqrt{d_h}$ is exactly
# what makes (b) true.
# :::

# %% [markdown]
# ## Recap
#
# * A head's score is bond + link, exactly (residual at rounding, $\mathcal S$ and $\mathcal A$ symmetric and antisymmetric
#   bit for bit); without biases this is the split $M = M_S + M_A$ of the bilinear form, whose bond is indefinite at a random init.
# * The bond is a Gaussian kernel of a pseudo-distance $d^2$ with a site potential $g$ on both ends; $d^2$ can be negative
#   off the diagonal when the bond is indefinite.
# * The row softmax throws the source potential away (same $\mathsf P$ to $10^{-14}$ from logits that differ row by row); the
#   destination potential is a Doob tilt $h = e^{\beta g/2}$, and the bond alone is reversible with $\pi \propto h\odot\mathsf Kh$
#   (oracle: the left Perron vector, computed without $h$).
# * The link's exact part $\varphi_i - \varphi_j$ is one more Doob tilt: removing the coexact part makes the head reversible
#   ($\varepsilon_{\mathrm{rev}}$ to rounding).
# * Removing the exact part leaves every cycle affinity unchanged: the circulation is $2\beta\oint\mathcal A^\perp$ (oracle: the
#   holonomy of the link on the 55 triangles, to $10^{-12}$).
# * β interpolates between uniform and argmax attention, the mean entropy falling with $dH_i/d\beta = -\beta\operatorname{Var}$
#   (oracle: a centred finite difference); $1/\sqrt{d_h}$ keeps the logits at unit variance, and the head in the mixture
#   regime, at any head width (Monte Carlo within four standard errors, fitted log–log slopes 1 and 0).
#
# Notebook 09 restricts the bond to be definite and/or the link to be exact: the four operators DMAP,
# DMTN, ATAP and ATTN.

# %% [markdown]
# ## Exercises
#
# Use the head `head`, the context `X` and the score `W` of this notebook, and only the public API imported at the
# top (`workbench.attention`, `workbench.markov`), plus `workbench.continuum.softmax_first_order`,
# `workbench.catalogue.fit_rate`, `workbench.catalogue.claim` and sympy.

# %% [markdown]
# ### Exercise 08.1 (compute)
#
# The small-β end of the temperature sweep has a closed form to first order
# ([mathematical reference §A.9](reference.md#reference-a9)):
#
# $$\operatorname{softmax}_\beta(\mathcal W) = \tfrac1n\mathbf 1\mathbf 1^\top + \tfrac\beta n\,\mathcal W\bigl(I - \tfrac1n\mathbf 1\mathbf 1^\top\bigr) + O(\beta^2).$$
#
# Compute the error $\max_{ij}\lvert\operatorname{softmax\_rows}(\beta\mathcal W) - \texttt{softmax\_first\_order}(\mathcal W, \beta)\rvert$ for
# $\beta = 10^{-1}, \dots, 10^{-3}$ (five values, geometric), fit its rate with `fit_rate`, and check at $\beta = 10^{-2}$
# that adding an arbitrary row constant to $\mathcal W$ (a source potential $c_i$) changes neither side.
#
# **What a correct answer shows.**  The fitted slope is 2 (within 0.05): the expansion is exact to first order.  The
# first-order term uses only the row-centred score, so the source potential drops out already at first order, not only
# after the full softmax — the same cancellation as section 2, seen perturbatively (the first-order terms agree to
# rounding, ~$10^{-16}$).
#
# **Answer in** `answer_08_1`: a dict with keys `"betas"` (array of the five β), `"errors"` (array: the five errors
# $\max_{ij}\lvert\dots\rvert$, in the order of `"betas"`), `"slope"` (float: `fit_rate(betas, errors)`), `"c"` (array of
# 12 values: your constants $c_i$, varying from row to row), `"first_order_gap"` and `"softmax_gap"` (floats: the largest
# change of `softmax_first_order(·, 1e-2)`, respectively of `softmax_rows(1e-2 * ·)`, when $c_i$ is added to row $i$ of
# $\mathcal W$).

# %%
# your code here: softmax_rows(b * W) against softmax_first_order(W, b) for b in np.geomspace(1e-1, 1e-3, 5)

# %% [markdown]
# ### Exercise 08.2 (derive)
#
# On paper: for one row with scores $s_j$ and $p_j = e^{\beta s_j}/Z$, $Z = \sum_je^{\beta s_j}$, show that
# $H = -\sum_jp_j\log p_j = \log Z - \beta\,\mathbb E_p[s]$, that $\tfrac d{d\beta}\log Z = \mathbb E_p[s]$ and
# $\tfrac d{d\beta}\mathbb E_p[s] = \operatorname{Var}_p(s)$, hence $dH/d\beta = -\beta\operatorname{Var}_p(s)$.  Then expand at small β, using
# the cumulants of $s$ under the *uniform* law $u$:
#
# $$H(\beta) = \log n - \tfrac{\beta^2}2\operatorname{Var}_u(s) + O(\beta^3).$$
#
# Check both statements with sympy on a row of three symbolic scores (`claim` with `sp.series`), and numerically: the
# residual $\lvert\bar H(\beta) - \log n + \tfrac{\beta^2}2\,\overline{\operatorname{Var}_u}\rvert$ of `beta_sweep(W, betas)` (row variances
# averaged over rows) for five β from $2\cdot10^{-3}$ down to $2\cdot10^{-4}$ should fall with slope 3 (the scores are of size
# ~10, so β must be small for the series to be asymptotic).
#
# **What a correct answer shows.**  sympy confirms $dH/d\beta + \beta\operatorname{Var}_p = 0$ and the series identically; the numeric
# slope is 3 (within 0.1).  So the entropy is flat at β = 0 (no first-order term: a slightly warm head is still uniform to
# first order in its entropy), and its curvature there is the spread of the scores along each row.
#
# **Answer in** `answer_08_2`: a dict with keys `"dH_dbeta"` (your closed form of $dH/d\beta$ for the row of three
# scores, a sympy expression in the symbols `beta`, `s0`, `s1`, `s2`), `"series"` (the expansion of $H(\beta)$ to second
# order, without the $O(\beta^3)$ term, a sympy expression in the same symbols), `"betas"` (array of the five β),
# `"residual"` (array: $\lvert\bar H(\beta) - \log n + \tfrac{\beta^2}2\overline{\operatorname{Var}_u}\rvert$ at those β) and
# `"slope"` (float: its fitted rate, `fit_rate(betas, residual)`).

# %%
# your code here: sympy symbols for beta and three scores, then beta_sweep(W, np.geomspace(2e-3, 2e-4, 5))

# %% [markdown]
# ### Exercise 08.3 (explore)
#
# How irreversible is a head as a function of its weight scale?  Scale both $W_Q$ and $W_K$ (and the biases) by $s$, so
# that the score becomes $s^2\mathcal W$, for $s$ in `np.geomspace(0.02, 3, 15)`.  For each $s$ compute
# $\mathsf P = \operatorname{softmax\_rows}(\beta s^2\mathcal W)$, its $\varepsilon_{\mathrm{rev}}$ (`reversibility_residual`) and its largest cycle
# affinity on `triangle_cycles(n)`.  Fit both against $s$ for the five smallest values, and the affinity over all $s$;
# plot both.
#
# **What a correct answer shows.**  The affinity is exactly $2\beta s^2\oint\mathcal A$: slope 2 over the whole range (to
# $10^{-6}$).  $\varepsilon_{\mathrm{rev}}$ also starts with slope 2 (irreversibility is linear in the link at small scale), but then
# peaks and falls back towards 0 at large $s$, while the affinities keep growing.  Explain why: in the argmax limit the
# chain becomes a deterministic map, its stationary law concentrates on the map's terminal cycle (here a token that
# attends to itself), and $\varepsilon_{\mathrm{rev}}$, weighted by π, sees no flux — the affinities are the gauge-invariant,
# π-free record of circulation.

# %%
# your code here: softmax_rows(beta * s**2 * W), reversibility_residual, cycle_affinities(P, triangle_cycles(n))
