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
# # 10a — Multi-head attention is a connection walk
#
# A single head moves features along the edges of a Markov chain.  Several heads do more: each carries
# its own value-output map, and on every edge attention picks a mixture of those maps.  The result is a
# walk on the tokens whose steps also *transport* the feature vector — a connection on the token graph,
# with a connection Laplacian, a Dirichlet energy and a gauge freedom ({cite:t}`connectionlaplacian` §3–§7;
# [mathematical reference §B](reference.md)).  This notebook writes multi-head attention exactly as one step of
# such a walk and splits its generator into dissipation and drift.  Notebook 10b takes the transports apart
# (rotation and deformation) and checks the energy identity; notebooks 10c and 10d continue with curvature
# (holonomy) and a real encoder.
#
# **Objectives.**  After this notebook you can
# * write $\sum_hA^{(h)}XM_h$ as $H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X$ and as a block matrix, and
#   check both to rounding;
# * read the effective transport of an edge as a convex combination of the head maps and recover its weights;
# * split a connection generator into a π-symmetric dissipation and a π-skew drift, and say which two
#   conditions make the drift vanish;
# * show that the drift conserves $\lVert X\rVert_\pi^2$ while the dissipation sets the initial loss rate;
# * measure how the drift switches on as a walk becomes nonreversible.
#
# **Prerequisites.**  Notebook 08 (Reading a head: a head as a row-stochastic walk
# $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))$, bond and link, reversibility and the residual
# $\varepsilon_{\mathrm{rev}}$) and notebook 00 (the positive generator $L = I - T$); finite Markov chains with their
# stationary law and detailed balance $\pi_iA_{ij} = \pi_jA_{ji}$, which the course assumes as background (they are at
# work in notebooks 03, 04 and 06b).  Maths: block matrices and Kronecker products, adjoints with respect to a weighted
# inner product, the matrix exponential.
#
# **Time.**  About 50 minutes in class (§1 and §2); the code runs in about 20 s.
#
# **Sources.**  The connection-Laplacian paper states its results in prose and proofs; where one of its displayed formulas
# is not available, the formula used here is the one reconstructed in the mathematical reference, and the
# text says so ("reconstructed").  "Derived" marks consequences worked out in the workbench.  Every such
# statement is checked numerically below.
#
# **Conventions.**  Features are row vectors, $X \in \mathbb R^{n\times d}$ with token $i$ the row $X_i$.  The
# transport $O_{ij} \in \mathbb R^{d\times d}$ belongs to the oriented edge $j \to i$ and acts by right
# multiplication, $X_j \mapsto X_jO_{ij}$; arrays have `O.shape == (n, n, d, d)`.  Walks are row-stochastic
# and act from the left; generators are positive, $L = I - T$.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
from scipy.stats import ortho_group

from workbench.attention import (
    block_operator,
    effective_connection,
    mixing_generator,
    propagate,
    random_multihead,
    reversibility_residual,
    softmax_rows,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(10)


def pi_similar(matrix, pi, d):
    """Π^{1/2} L Π^{-1/2} with Π = diag(π) ⊗ I_d: the π-adjoint becomes the ordinary transpose."""
    s = np.sqrt(np.repeat(pi, d))
    return s[:, None] * matrix / s[None, :]


def inverse_consistent(Q):
    """Keep Q_ij for i > j, set O_ji = Q_ijᵀ and O_ii = I: transposed transports on reversed edges."""
    field = Q.copy()
    n, d = field.shape[0], field.shape[-1]
    for i in range(n):
        field[i, i] = np.eye(d)
        for j in range(i):
            field[j, i] = field[i, j].T
    return field


# %% [markdown]
# ## 1. Multi-head attention as one connection step
#
# With $H$ heads of attention $A^{(h)}$ (row-stochastic) and value-output maps $M_h = W_V^hW_O^h \in
# \mathbb R^{D\times D}$, the bias-free part of multi-head attention is $\sum_h A^{(h)}XM_h$ ({cite:p}`connectionlaplacian` §3, Eq. (4),
# reconstructed in [mathematical reference §B.3](reference.md#reference-b3)).  Define the **effective walk** and the **effective transport** (Eqs. (8)–(9), reconstructed)
#
# $$A_{\mathrm{eff}} = \frac1H\sum_h A^{(h)}, \qquad
# O^{\mathrm{eff}}_{ij} = \frac{\sum_h A^{(h)}_{ij}M_h}{\sum_h A^{(h)}_{ij}}\quad(\text{any matrix, e.g. } I,
# \text{ where all heads vanish}).$$
#
# Then, with $(\mathcal T(A, O)X)_i = \sum_j A_{ij}X_jO_{ij}$ the connection propagation operator ([§B.2](reference.md#reference-b2)),
#
# $$\sum_h A^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X \qquad\text{(Eq. (10); the paper proves it by splitting
# active and inactive edges, §4).}$$
#
# On each edge the transport is a convex combination of the head maps, with weights
# $w_h(i,j) = A^{(h)}_{ij}/\sum_gA^{(g)}_{ij}$: the heads are a dictionary of transports and attention
# chooses from it edge by edge.  The biases $b_V, b_O$ add the same row to every token, because each
# $A^{(h)}$ is row-stochastic.  A random multi-head layer with biases, on $n = 7$ tokens:

# %%
n, D, d_h, H = 7, 6, 3, 4
mha = random_multihead(rng, H, D, d_h, bias=True, scale=1.5 / np.sqrt(D))  # 1.5× the init scale: sharper heads
X = rng.standard_normal((n, D))
A_heads = mha.attention(X)
M_heads = mha.value_output_maps()
A_eff, O_eff = effective_connection(A_heads, M_heads)
print(mha)
print(f"ranks of the M_h: {[int(np.linalg.matrix_rank(M)) for M in M_heads]} (d_v = {d_h} < D = {D}: singular maps)")

weights = A_heads / A_heads.sum(axis=0)  # w_h(i, j), the head weights of every edge
constant = np.einsum("hv,hvD->D", mha.b_V, mha.W_O) + mha.b_O  # Σ_h b_V^h W_O^h + b_O
checks = {
    "A_eff 1 − 1": np.abs(A_eff.sum(axis=1) - 1).max(),
    "spectral radius of A_eff − 1": abs(np.abs(np.linalg.eigvals(A_eff)).max() - 1),
    "O_eff − Σ_h w_h M_h": np.abs(O_eff - np.einsum("hij,hab->ijab", weights, M_heads)).max(),
    "Σ_h A^(h) X M_h − H 𝒯(A_eff, O_eff) X": np.abs(mha.linear_part(X) - H * propagate(A_eff, O_eff, X)).max(),
    "linear part − Σ_h (A^(h) X W_V^h) W_O^h, a loop": np.abs(
        mha.linear_part(X) - sum(A_heads[h] @ X @ mha.W_V[h] @ mha.W_O[h] for h in range(H))
    ).max(),
    "MHA(X) − linear part − 1(Σ b_V W_O + b_O)": np.abs(mha(X) - mha.linear_part(X) - constant).max(),
}
for name, residual in checks.items():
    print(f"{name:44s} residual {residual:.1e}")
assert max(checks.values()) < 1e-13

# %% [markdown]
# **The block matrix** ([§B.2](reference.md#reference-b2); the transposes come from the row-vector convention).  Stack the rows,
# $\operatorname{vec}^r(X) = (X_1, \dots, X_n)$ (`X.reshape(-1)`).  The $a$-th entry of $X_jO_{ij}$ is
# $\sum_b(O_{ij}^\top)_{ab}X_{jb}$, so
#
# $$\operatorname{vec}^r(\mathcal T(A, O)X) = T(A, O)\operatorname{vec}^r(X), \qquad T(A, O)_{ij} = A_{ij}O_{ij}^\top
# \in\mathbb R^{d\times d},$$
#
# and multi-head attention has the blocks $(T_{\mathrm{MHA}})_{ij} = \sum_hA^{(h)}_{ij}M_h^\top =
# H\,T(A_{\mathrm{eff}}, O^{\mathrm{eff}})_{ij}$.  We build $T_{\mathrm{MHA}}$ from the heads directly and compare.

# %%
T = block_operator(A_eff, O_eff)
T_mha = np.einsum("hij,hba->iajb", A_heads, M_heads).reshape(n * D, n * D)  # blocks Σ_h A_ij M_hᵀ
checks = {
    "T vec(X) − vec(𝒯X)": np.abs(T @ X.reshape(-1) - propagate(A_eff, O_eff, X).reshape(-1)).max(),
    "T_MHA − H T(A_eff, O_eff)": np.abs(T_mha - H * T).max(),
    "T_MHA vec(X) − vec(Σ_h A^(h) X M_h)": np.abs(T_mha @ X.reshape(-1) - mha.linear_part(X).reshape(-1)).max(),
}
for name, residual in checks.items():
    print(f"{name:38s} residual {residual:.1e}")
assert max(checks.values()) < 1e-13

# A causal layer: edges j > i are inactive in every head, O_eff is the identity there and never used
causal = random_multihead(rng, H, D, d_h, causal=True)
A_causal, O_causal = effective_connection(causal.attention(X), causal.value_output_maps())
upper = np.triu(np.ones((n, n), dtype=bool), 1)
gap = np.abs(causal.linear_part(X) - H * propagate(A_causal, O_causal, X)).max()
print(
    f"causal: A_eff above the diagonal {np.abs(A_causal[upper]).max():.0e}; O_eff there is I: "
    f"{np.array_equal(O_causal[upper], np.broadcast_to(np.eye(D), (upper.sum(), D, D)))}; identity residual {gap:.1e}"
)
assert gap < 1e-13

fig, axes = plt.subplots(1, H + 2, figsize=(2.9 * (H + 2), 3.3), layout="constrained")
for h in range(H):
    image = axes[h].imshow(A_heads[h], cmap="viridis", vmin=0, vmax=1)
    axes[h].set_title(f"$A^{{({h + 1})}}$", fontsize=10)
axes[H].imshow(A_eff, cmap="viridis", vmin=0, vmax=1)
axes[H].set_title(r"$A_{\rm eff}$ (mean)", fontsize=10)
fig.colorbar(image, ax=axes[: H + 1], shrink=0.8, label="attention weight (dimensionless)")
bound = np.abs(T).max()
blocks = axes[H + 1].imshow(T, cmap="RdBu_r", vmin=-bound, vmax=bound)
for k in range(1, n):
    axes[H + 1].axhline(k * D - 0.5, color="k", lw=0.3)
    axes[H + 1].axvline(k * D - 0.5, color="k", lw=0.3)
axes[H + 1].set_title(r"$T(A_{\rm eff}, O^{\rm eff})$, blocks $A_{ij}O_{ij}^\top$", fontsize=10)
axes[H + 1].set_xticks(np.arange(n) * D + D / 2 - 0.5, range(n))
axes[H + 1].set_yticks(np.arange(n) * D + D / 2 - 0.5, range(n))
axes[H + 1].set_xlabel("key block j")
axes[H + 1].set_ylabel("query block i")
fig.colorbar(blocks, ax=axes[H + 1], shrink=0.8, label="entry (dimensionless)")
for ax in axes[: H + 1]:
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.set_xlabel("key j")
axes[0].set_ylabel("query i")
plt.show()

# %% [markdown]
# ## 2. The generator: dissipation and drift
#
# The normalised propagator is $\bar T = T_{\mathrm{MHA}}/H = T(A_{\mathrm{eff}}, O^{\mathrm{eff}})$ and its
# generator $L_{\mathrm{mix}} = I_{nd} - \bar T$ (positive convention; Eq. (13), reconstructed).  With the stationary law
# π of $A_{\mathrm{eff}}$, the inner product $\langle X, Y\rangle_\pi = \sum_i\pi_i\langle X_i, Y_i\rangle$ and
# $\Pi = \operatorname{diag}(\pi)\otimes I_d$, the π-adjoint is $L^\sharp = \Pi^{-1}L_{\mathrm{mix}}^\top\Pi$ and
#
# $$L_{\mathrm{mix}} = \underbrace{\tfrac12(L_{\mathrm{mix}} + L^\sharp)}_{L_{\mathrm{sym}}\text{: dissipation}}
# + \underbrace{\tfrac12(L_{\mathrm{mix}} - L^\sharp)}_{L_{\mathrm{skew}}\text{: drift}}
# \qquad\text{(§B.4, reconstructed)}.$$
#
# $\Pi L_{\mathrm{sym}}$ is symmetric and $\Pi L_{\mathrm{skew}}$ antisymmetric, so the skew part never
# enters the quadratic form: $\langle X, L_{\mathrm{mix}}X\rangle_\pi = \langle X, L_{\mathrm{sym}}X\rangle_\pi$.

# %%
gen = mixing_generator(A_eff, O_eff)
Pi = np.repeat(gen.pi, D)
Y = rng.standard_normal((n, D))
y = Y.reshape(-1)
checks = {
    "L_mix − (I − T)": np.abs(gen.L_mix - (np.eye(n * D) - T)).max(),
    "Π L_sym − (Π L_sym)ᵀ": np.abs(Pi[:, None] * gen.L_sym - (Pi[:, None] * gen.L_sym).T).max(),
    "Π L_skew + (Π L_skew)ᵀ": np.abs(Pi[:, None] * gen.L_skew + (Pi[:, None] * gen.L_skew).T).max(),
    "⟨Y, L_skew Y⟩_π": abs(y @ (Pi * (gen.L_skew @ y))),
    "⟨Y, L_mix Y⟩_π − ⟨Y, L_sym Y⟩_π": abs(y @ (Pi * ((gen.L_mix - gen.L_sym) @ y))),
}
for name, residual in checks.items():
    print(f"{name:34s} residual {residual:.1e}")
assert max(checks.values()) < 1e-13

# %% [markdown]
# **When is there no drift?**  $L_{\mathrm{skew}} = 0$ means $\Pi\bar T$ is symmetric, i.e.
# $\pi_iA_{ij}O_{ij}^\top = \pi_jA_{ji}O_{ji}$ on every edge.  A reversible walk ($\pi_iA_{ij} = \pi_jA_{ji}$,
# Eq. (12)) with transposed transports on reversed edges, $O_{ji} = O_{ij}^\top$, satisfies it; for
# orthogonal transports the latter is inverse consistency $O_{ji} = O_{ij}^{-1}$, and then $L_{\mathrm{mix}}$
# is also positive semidefinite ([mathematical reference §B.4](reference.md#reference-b4)).  We test the two conditions separately, and the role of
# orthogonality: a walk $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \lambda\mathcal A))$ with a
# symmetric bond $\mathcal S$ and an antisymmetric link $\mathcal A$ (reversible at λ = 0, notebook 08) and
# random orthogonal transports in $d = 3$.  The norm is the π-weighted one,
# $\lVert L\rVert_\pi = \lVert\Pi^{1/2}L\Pi^{-1/2}\rVert_F$, and $\lambda_{\min}$ is the smallest eigenvalue of
# the symmetric matrix $\Pi^{1/2}L_{\mathrm{sym}}\Pi^{-1/2}$.

# %%
m, d = 7, 3
bond = rng.standard_normal((m, m))
bond = (bond + bond.T) / 2
link = rng.standard_normal((m, m))
link = (link - link.T) / 2
Q = ortho_group.rvs(d, size=m * m, random_state=11).reshape(m, m, d, d)  # independent rotations (and reflections)
O_consistent = inverse_consistent(Q)  # O_ji = O_ijᵀ = O_ij⁻¹
P_rev, P_nonrev = softmax_rows(1.5 * bond), softmax_rows(1.5 * (bond + link))


def drift_reading(P, transports):
    """‖L_skew‖_π / ‖L_mix‖_π and the smallest eigenvalue of L_sym in ⟨·,·⟩_π."""
    g = mixing_generator(P, transports)
    width = transports.shape[-1]
    skew, full = pi_similar(g.L_skew, g.pi, width), pi_similar(g.L_mix, g.pi, width)
    sym = pi_similar(g.L_sym, g.pi, width)
    return np.linalg.norm(skew) / np.linalg.norm(full), np.linalg.eigvalsh((sym + sym.T) / 2).min()


cases = {
    "reversible walk, O_ji = O_ijᵀ orthogonal": (P_rev, O_consistent),
    "reversible walk, O_ji = O_ijᵀ = 1.5 × orthogonal": (P_rev, 1.5 * O_consistent),
    "reversible walk, O_ji independent of O_ij": (P_rev, Q),
    "nonreversible walk, O_ji = O_ijᵀ orthogonal": (P_nonrev, O_consistent),
}
print(f"ε_rev of the two walks: {reversibility_residual(P_rev):.1e}, {reversibility_residual(P_nonrev):.2f}")
print(f"{'case':50s} {'‖L_skew‖_π/‖L_mix‖_π':>22s} {'λ_min(L_sym)':>13s}")
readings = {}
for name, (P, transports) in cases.items():
    readings[name] = drift_reading(P, transports)
    print(f"{name:50s} {readings[name][0]:22.2e} {readings[name][1]:13.3f}")
skew_mha = drift_reading(A_eff, O_eff)[0]
print(f"{'the random MHA layer of §1':50s} {skew_mha:22.2e}")
first, second, third, fourth = readings.values()
assert first[0] < 1e-14 and first[1] > 0  # no drift, and dissipative
assert second[0] < 1e-14 and second[1] < 0  # no drift, but no longer positive semidefinite
assert third[0] > 0.1 and fourth[0] > 0.1

# %% [markdown]
# Either failure alone switches the drift on.  For orthogonal transports the two conditions are also
# necessary: all orthogonal matrices have the same Frobenius norm $\sqrt d$, so
# $\pi_iA_{ij}O_{ij}^\top = \pi_jA_{ji}O_{ji}$ forces $\pi_iA_{ij} = \pi_jA_{ji}$, and then $O_{ji} = O_{ij}^\top$
# on every active edge (derived).  Orthogonality is not what removes the drift — the scaled maps $1.5\,Q$ with
# $O_{ji} = O_{ij}^\top$ have none either — it is what keeps the dissipative part nonnegative: with $1.5\,Q$ the
# operator $\bar T$ can amplify, and $L_{\mathrm{sym}}$ gets a negative eigenvalue.
#
# The two parts do different things to a trajectory $\dot X = -LX$.  The skew flow
# $e^{-tL_{\mathrm{skew}}}$ is an isometry of $\langle\cdot,\cdot\rangle_\pi$ (it moves features around without
# losing any: advection), the symmetric flow only dissipates (here $L_{\mathrm{sym}} \succeq 0$), and the full flow starts with the same loss
# rate as the symmetric one, $\tfrac{d}{dt}\lVert X\rVert_\pi^2 = -2\langle X, L_{\mathrm{sym}}X\rangle_\pi$.
# On the nonreversible walk with inverse-consistent orthogonal transports:

# %%
g = mixing_generator(P_nonrev, O_consistent)
Pi_small = np.repeat(g.pi, d)
x0 = rng.standard_normal(m * d)
times = np.linspace(0, 6, 61)
norms = {}
for name, L in (("L_mix", g.L_mix), ("L_sym", g.L_sym), ("L_skew", g.L_skew)):
    norms[name] = np.array([x @ (Pi_small * x) for x in (scipy.linalg.expm(-t * L) @ x0 for t in times)])
conserved = np.abs(norms["L_skew"] / norms["L_skew"][0] - 1).max()
slope = -2 * x0 @ (Pi_small * (g.L_sym @ x0))
step = 1e-4  # central difference, error O(step²)


def energy_at(L, t):
    x = scipy.linalg.expm(-t * L) @ x0
    return x @ (Pi_small * x)


fd = {
    name: (energy_at(L, step) - energy_at(L, -step)) / (2 * step)
    for name, L in (("L_mix", g.L_mix), ("L_sym", g.L_sym))
}
print(
    f"skew flow: max relative change of ‖X(t)‖²_π = {conserved:.1e};  sym flow monotone: {np.all(np.diff(norms['L_sym']) <= 0)}"
)
print(
    f"initial slopes (central difference): L_mix {fd['L_mix']:.8f}, L_sym {fd['L_sym']:.8f}; "
    f"−2⟨X, L_sym X⟩_π = {slope:.8f}"
)
assert conserved < 1e-12 and np.all(np.diff(norms["L_sym"]) <= 0)
assert max(abs(value - slope) for value in fd.values()) < 1e-6 * abs(slope)

lams = np.linspace(0, 2, 21)
skew_curve = [drift_reading(softmax_rows(1.5 * (bond + lam * link)), O_consistent)[0] for lam in lams]
eps_curve = [reversibility_residual(softmax_rows(1.5 * (bond + lam * link))) for lam in lams]

fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
for name, values in norms.items():
    axes[0].plot(times, values / values[0], label=rf"$e^{{-tL}}$, $L = L_{{\rm {name[2:]}}}$")
axes[0].set_xlabel("time t (dimensionless)")
axes[0].set_ylabel(r"$\|X(t)\|_\pi^2 / \|X(0)\|_\pi^2$ (dimensionless)")
axes[0].set_title("drift conserves, dissipation decays")
axes[0].legend(fontsize=8)
axes[1].plot(lams, skew_curve, "o-", ms=3, label=r"$\|L_{\rm skew}\|_\pi / \|L_{\rm mix}\|_\pi$")
axes[1].plot(lams, eps_curve, "s--", ms=3, label=r"$\varepsilon_{\rm rev}$ of the walk")
axes[1].set_xlabel(r"link scale $\lambda$ in rownorm exp($\beta(\mathcal{S} + \lambda\mathcal{A})$)")
axes[1].set_ylabel("ratio (dimensionless)")
axes[1].set_title(r"drift grows with the link (transports fixed, $O_{ji} = O_{ij}^\top$)")
axes[1].legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  On the edge $j \to i$ only heads 1 and 2 attend: $A^{(1)}_{ij} = 0.3$, $A^{(2)}_{ij} = 0.1$, and
# $A^{(3)}_{ij} = A^{(4)}_{ij} = 0$.  What is $O^{\mathrm{eff}}_{ij}$?
#
# (a) $0.3M_1 + 0.1M_2$  (b) $\tfrac34M_1 + \tfrac14M_2$  (c) $\tfrac12(M_1 + M_2)$  (d) $\tfrac14(0.3M_1 + 0.1M_2)$
#
# :::{dropdown} Answer
# (b).  The effective transport is the mixture $\sum_hw_h(i,j)M_h$ with weights normalised on the edge,
# $w_h = A^{(h)}_{ij}/\sum_gA^{(g)}_{ij}$, here $0.3/0.4$ and $0.1/0.4$.  (a) is the unnormalised sum
# $\sum_hA^{(h)}_{ij}M_h$, the transposed block of $T_{\mathrm{MHA}}$, and (d) is $A_{\mathrm{eff},ij}O^{\mathrm{eff}}_{ij}$,
# the transposed block of $\bar T$: both still carry the weight of the edge, which the transport must not.  (c) ignores
# how strongly each head attends.
# :::
#
# **Check 2.**  Which hypotheses make the drift $L_{\mathrm{skew}}$ vanish?
#
# (a) a reversible walk, whatever the transports  (b) orthogonal transports, whatever the walk
# (c) a reversible walk and $O_{ji} = O_{ij}^\top$ on every edge, self-loops included  (d) a row-stochastic walk and $O_{ii} = I$
#
# :::{dropdown} Answer
# (c).  $L_{\mathrm{skew}} = 0$ means $\pi_iA_{ij}O_{ij}^\top = \pi_jA_{ji}O_{ji}$ on every pair; detailed balance
# supplies the scalar factor and $O_{ji} = O_{ij}^\top$ the matrix one.  The table of §2 shows that the reversible walk
# with independent $O_{ji}$ (a) and the nonreversible walk with orthogonal, inverse-consistent transports (b) both drift;
# (d) says nothing about the pairs $i \ne j$.
# :::
#
# **Check 3.**  Along the flow $\dot X = -L_{\mathrm{skew}}X$, what happens to $\lVert X\rVert_\pi^2$?
#
# (a) it is constant  (b) it decreases at the rate $2\langle X, L_{\mathrm{sym}}X\rangle_\pi$  (c) it grows
# (d) it decreases only when the transports are orthogonal
#
# :::{dropdown} Answer
# (a).  $\tfrac d{dt}\lVert X\rVert_\pi^2 = -2\langle X, L_{\mathrm{skew}}X\rangle_\pi = 0$, because
# $\Pi L_{\mathrm{skew}}$ is antisymmetric: the drift moves features around without losing any (advection), whatever
# the transports.  (b) is the loss rate of the symmetric part (and, at $t = 0$, of the full flow); (c) and (d) confuse
# the drift with the dissipation, whose sign does depend on the transports.
# :::
#
# **Check 4.**  With $O_{ji} = O_{ij}^\top = 1.5\,Q_{ij}$ on the reversible walk, §2 finds $L_{\mathrm{skew}} = 0$
# and $\lambda_{\min}(L_{\mathrm{sym}}) < 0$.  What does orthogonality of the transports buy, then?
#
# (a) nothing: the drift vanishes either way  (b) a nonnegative dissipation: $\bar T$ cannot amplify a feature field
# (c) reversibility of the walk  (d) a zero drift on the self-loops
#
# :::{dropdown} Answer
# (b).  Orthogonal transports have operator norm 1, so $\bar T$ is a contraction in $\lVert\cdot\rVert_\pi$ and
# $L_{\mathrm{sym}} \succeq 0$; with $1.5\,Q$ the propagator can amplify and the "dissipation" has a negative
# direction.  (a) is half true — the drift does vanish — but misses this; reversibility (c) is a property of the walk
# $A$, not of the transports; and the self-loops (d) need symmetric $O_{ii}$, which orthogonality does not give.
# :::

# %% [markdown]
# ## Recap
#
# * $\sum_hA^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X$ and its block form
#   $T_{\mathrm{MHA}} = H\,T(A_{\mathrm{eff}}, O^{\mathrm{eff}})$ hold to rounding (residuals $\sim 10^{-15}$ against a
#   loop over the heads), with or without a causal mask; the biases add one constant row.
# * On every edge $O^{\mathrm{eff}}_{ij}$ is the mixture $\sum_hw_h(i,j)M_h$ of the head maps, checked against the
#   head weights read off the attention matrices.
# * $L_{\mathrm{mix}} = L_{\mathrm{sym}} + L_{\mathrm{skew}}$: $\Pi L_{\mathrm{sym}}$ is symmetric and
#   $\Pi L_{\mathrm{skew}}$ antisymmetric to rounding, so the skew part never enters $\langle X, L_{\mathrm{mix}}X\rangle_\pi$.
# * The drift vanishes exactly for a reversible walk with $O_{ji} = O_{ij}^\top$ and switches on when either
#   condition fails; orthogonality is what keeps $L_{\mathrm{sym}}$ nonnegative (scaled maps $1.5\,Q$ give a
#   negative eigenvalue).
# * The skew flow conserves $\lVert X\rVert_\pi^2$ to $10^{-15}$, the symmetric flow decays monotonically, and the
#   initial loss rate of the full flow matches $-2\langle X, L_{\mathrm{sym}}X\rangle_\pi$ (central difference as
#   the oracle).
# * Along the family $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \lambda\mathcal A))$ the drift ratio grows
#   with the link scale together with $\varepsilon_{\mathrm{rev}}$, with the transports held fixed.

# %% [markdown]
# ## Exercises
#
# The exercises use the objects of this notebook (`A_heads`, `M_heads`, `O_eff`, `A_eff`, `bond`, `link`,
# `O_consistent`, `drift_reading`, …) and the public `workbench.attention` API.

# %% [markdown]
# ### Exercise 10a.1 (compute)
#
# **Read the head weights back from the transport.**  §1 says that on every edge the effective transport is a
# convex combination $O^{\mathrm{eff}}_{ij} = \sum_hw_h(i,j)M_h$.  Treat the four maps `M_heads` as vectors in
# $\mathbb R^{D\times D} = \mathbb R^{36}$ and, for every edge, solve the least-squares problem
# $\min_w\lVert O^{\mathrm{eff}}_{ij} - \sum_hw_hM_h\rVert_F$ (`np.linalg.lstsq` on the $36\times4$ matrix whose columns
# are the flattened $M_h$).  Compare the recovered weights with $A^{(h)}_{ij}/\sum_gA^{(g)}_{ij}$ from `A_heads`.
#
# *What a correct answer shows:* the $36\times4$ matrix has full column rank (condition number of order 1), the
# least-squares residual and the difference from the attention weights are both at rounding ($\lesssim10^{-13}$),
# and the recovered weights are nonnegative and sum to 1 on every edge.  Explain why the weights are unique here
# although every single $M_h$ is singular (rank and linear independence are different questions), and why five
# heads in $D = 2$ could never be read back this way.
#
# **Answer in** `answer_10a_1`: a dict with keys `"weights"` (array of shape `(7, 7, 4)`: the recovered weight
# $w_h(i, j)$ of head $h$ on the edge $j \to i$ at `[i, j, h]`), `"condition"` (float: the condition number of the
# $36\times4$ matrix of flattened head maps) and `"residual"` (float: the largest entry of
# $\lvert\sum_hw_h(i,j)M_h - O^{\mathrm{eff}}_{ij}\rvert$ over all edges).  Use the layer of §1 as it is.

# %%
# your code here (A_heads, M_heads and O_eff are defined in §1)

# %% [markdown]
# ### Exercise 10a.2 (derive)
#
# **Where the drift lives.**  Write $L_{\mathrm{skew}}$ block by block.  With $\bar T_{ij} = A_{ij}O_{ij}^\top$ and
# $L^\sharp = \Pi^{-1}L_{\mathrm{mix}}^\top\Pi$, show on paper that the $(i, j)$ block of $L_{\mathrm{skew}}$ is
#
# $$(L_{\mathrm{skew}})_{ij} = \tfrac12\Bigl(\frac{\pi_j}{\pi_i}A_{ji}O_{ji} - A_{ij}O_{ij}^\top\Bigr),$$
#
# so the drift vanishes exactly when $\pi_iA_{ij}O_{ij}^\top = \pi_jA_{ji}O_{ji}$ on every pair — including $i = j$,
# where the condition reads $O_{ii} = O_{ii}^\top$ whenever $A_{ii} > 0$.  Conclude that a *reversible* walk whose
# self-loops carry a rotation that is not its own inverse has a drift, located on the diagonal blocks
# $\tfrac12A_{ii}(O_{ii} - O_{ii}^\top)$.  Check both statements numerically: the block formula against
# `mixing_generator(A_eff, O_eff).L_skew`, and the reversible walk `P_rev` with `O_consistent` whose diagonal
# transports you replace by random rotations.
#
# *What a correct answer shows:* the block formula matches `L_skew` to $10^{-15}$ (same arithmetic, a few
# ulps); for the modified field the off-diagonal blocks of $L_{\mathrm{skew}}$ vanish to rounding, the diagonal
# blocks equal $\tfrac12A_{ii}(O_{ii} - O_{ii}^\top)$, and the drift ratio of `drift_reading` is clearly nonzero
# (a few hundredths here: the self-loop weights $A_{ii}$ of `P_rev` are small).  Say why the effective transport of a
# multi-head layer has no reason to be symmetric on its self-loops.
#
# **Answer in** `answer_10a_2`: a dict with keys `"L_skew_formula"` (the $42\times42$ matrix assembled from your block
# formula for `A_eff`, `O_eff`, block $(i, j)$ in rows $6i, \dots, 6i+5$ and columns $6j, \dots, 6j+5$), `"loops"` (array
# `(7, 3, 3)`: the orthogonal matrices you put on the self-loops, `loops[i]` $= O_{ii}$), `"diagonal_blocks"` (array
# `(7, 3, 3)`: the diagonal blocks $(L_{\mathrm{skew}})_{ii}$ of `mixing_generator(P_rev, O_loops)`, where `O_loops` is
# `O_consistent` with your self-loops) and `"drift_ratio"` (float: `drift_reading(P_rev, O_loops)[0]`).

# %%
# your code here (ortho_group and mixing_generator are already imported)

# %% [markdown]
# ### Exercise 10a.3 (explore)
#
# **How does the drift switch on?**  With `bond`, `link` and `O_consistent` of §2, vary the link scale λ over a
# geometric grid from $10^{-3}$ to $10^{-1}$.  For each λ build the walk `softmax_rows(1.5 * (bond + lam * link))`,
# read the drift ratio $\rho(\lambda) = \lVert L_{\mathrm{skew}}\rVert_\pi/\lVert L_{\mathrm{mix}}\rVert_\pi$ with
# `drift_reading` and the detailed-balance residual $\varepsilon_{\mathrm{rev}}$ with `reversibility_residual`, and
# fit the slopes of $\log\rho$ and $\log\varepsilon_{\mathrm{rev}}$ against $\log\lambda$.
#
# *What a correct answer shows:* both slopes lie within 0.05 of 1 and the ratio $\rho/\varepsilon_{\mathrm{rev}}$ is
# nearly constant (it changes by
# less than 10 % over the two decades).  Interpret: the drift of a slightly nonreversible walk is first order in the
# antisymmetric part of the scores — there is no threshold — and with the transports held fixed the drift ratio is
# read off $\varepsilon_{\mathrm{rev}}$ up to a factor set by the transports and the bond.

# %%
# your code here
