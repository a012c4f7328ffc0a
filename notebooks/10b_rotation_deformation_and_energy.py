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
# # 10b — Rotation, deformation and the connection energy
#
# Notebook 10a wrote multi-head attention as one step of a connection walk: on every edge $j \to i$ the feature
# row is carried by an effective transport $O^{\mathrm{eff}}_{ij}$, a mixture of the head maps.  Such a transport
# does two different things at once — it turns the feature vector and it stretches it — and only the first is
# what a connection in the geometric sense does.  This notebook separates the two (polar decomposition), measures
# how far real transports are from rotations ($\delta_{\mathrm{orth}}$, {cite:t}`connectionlaplacian` §7), and
# shows what orthogonality buys: the quadratic form of the generator becomes a Dirichlet energy, whose zeros are
# the parallel sections ([mathematical reference §B](reference.md)).  Notebooks 10c and 10d continue with
# curvature (holonomy) and a real encoder.
#
# **Objectives.**  After this notebook you can
# * factor a transport into a rotation and a deformation (polar decomposition), also for singular head maps,
#   and check the factors against `scipy.linalg.polar`;
# * read a measured $\delta_{\mathrm{orth}}$ against its rank floor $\sqrt{1/r - 1/d}$ and its random-map level
#   $d^{-1/2}$, and explain why a mixture of orthogonal head maps is not orthogonal;
# * state the three hypotheses of the identity $\langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)$ and
#   show that dropping any one leaves exactly the predicted gap;
# * build a flat connection by a change of frames and exhibit its parallel sections.
#
# **Prerequisites.**  Notebook 10a (Multi-head attention is a connection walk: $A_{\mathrm{eff}}$,
# $O^{\mathrm{eff}}$, the head weights $w_h(i,j)$, $L_{\mathrm{mix}}$ and the inner product $\langle\cdot,\cdot\rangle_\pi$),
# and the stationary law of a finite Markov chain, which the course assumes as background.  Maths: the SVD and the
# polar decomposition, Gram matrices and the Cauchy–Schwarz inequality, weighted inner products.
#
# **Time.**  About 45 minutes in class (§1 and §2); the code runs in about 20 s.
#
# **Sources.**  As in 10a, "reconstructed" marks a formula of the connection-Laplacian paper taken from the
# mathematical reference, and "derived" a consequence worked out in the workbench; every such statement is checked
# numerically below.
#
# **Conventions.**  Those of 10a: row vectors $X_i$, transports $O_{ij}$ of the edge $j \to i$ acting by right
# multiplication, `O.shape == (n, n, d, d)`, positive generators $L = I - T$.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
from scipy.stats import ortho_group

from workbench.attention import (
    connection_energy,
    connection_laplacian,
    effective_connection,
    gauge_transform,
    holonomy_deviation,
    orthogonality_deviation,
    polar_transports,
    propagate,
    random_multihead,
    softmax_rows,
    triangle_cycles,
)
from workbench.markov import MarkovOperator

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(10)


def pi_inner(pi, X, Y):
    """⟨X, Y⟩_π = Σ_i π_i ⟨X_i, Y_i⟩ for row-vector fields."""
    return float(np.sum(pi[:, None] * X * Y))


# %% [markdown]
# **The layer of notebook 10a.**  The same generator seed and the same draws rebuild the random multi-head layer
# of 10a §1 ($n = 7$ tokens, $D = 6$, four heads with value dimension 3, biases): its attention matrices
# $A^{(h)}$, head maps $M_h = W_V^hW_O^h$, effective connection $(A_{\mathrm{eff}}, O^{\mathrm{eff}})$ and the head
# weights $w_h(i,j) = A^{(h)}_{ij}/\sum_gA^{(g)}_{ij}$ of every edge.  The identity of 10a §1 is rechecked as a guard.

# %%
n, D, d_h, H = 7, 6, 3, 4
mha = random_multihead(rng, H, D, d_h, bias=True, scale=1.5 / np.sqrt(D))  # 1.5× the init scale: sharper heads
X = rng.standard_normal((n, D))
A_heads = mha.attention(X)
M_heads = mha.value_output_maps()
A_eff, O_eff = effective_connection(A_heads, M_heads)
weights = A_heads / A_heads.sum(axis=0)  # w_h(i, j)
m, d = 7, 3  # the small connections of §2
guard = np.abs(mha.linear_part(X) - H * propagate(A_eff, O_eff, X)).max()
print(f"Σ_h A^(h) X M_h − H 𝒯(A_eff, O_eff) X: residual {guard:.1e}")
assert guard < 1e-13

# %% [markdown]
# ## 1. Rotation and deformation; how orthogonal are the transports?
#
# **Polar decomposition** ([mathematical reference §B.4](reference.md#reference-b4); the paper does not fix the side of the
# factorisation, the workbench uses the right form).  From the SVD $O = U\Sigma V^\top$: $R = UV^\top \in O(d)$, $S = V\Sigma V^\top =
# (O^\top O)^{1/2} \succeq 0$, and in the row convention $X_jO_{ij} = (X_jR_{ij})S_{ij}$ — transport rigidly,
# then deform.  For a singular map (every $M_h$ here has rank $d_v = 3 < D$) the paper uses a partial isometry:
# $R^\top R$ is then the projector onto the range of $S$.

# %%
R, S = polar_transports(O_eff)
R_part, S_part = polar_transports(M_heads, partial=True)
projector = np.swapaxes(R_part, -1, -2) @ R_part
reference = [scipy.linalg.polar(O_eff[i, j], side="right") for i, j in ((0, 0), (2, 5), (6, 1))]  # independent
checks = {
    "R S − O_eff": np.abs(R @ S - O_eff).max(),
    "Rᵀ R − I": np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(D)).max(),
    "S − Sᵀ": np.abs(S - np.swapaxes(S, -1, -2)).max(),
    "−λ_min(S), clipped at 0": max(0.0, -np.linalg.eigvalsh(S).min()),
    "(R, S) − scipy.linalg.polar, 3 edges": max(
        max(np.abs(R[i, j] - r).max(), np.abs(S[i, j] - s).max())
        for (i, j), (r, s) in zip(((0, 0), (2, 5), (6, 1)), reference, strict=True)
    ),
    "heads: R S − M_h (partial isometry)": np.abs(R_part @ S_part - M_heads).max(),
    "heads: (RᵀR)² − RᵀR": np.abs(projector @ projector - projector).max(),
}
for name, residual in checks.items():
    print(f"{name:38s} residual {residual:.1e}")
print(f"heads: rank of RᵀR = {[round(np.trace(p)) for p in projector]}")
assert max(checks.values()) < 1e-12

# %% [markdown]
# **The orthogonality deviation** (Eq. (15) of {cite:t}`connectionlaplacian`, §7; [§B.6](reference.md#reference-b6)).  With
# $G = O^\top O$ and $\mu = \operatorname{tr}G/d$,
#
# $$\delta_{\mathrm{orth}} = \frac{\lVert G - \mu I_d\rVert_F}{\mu\,d},$$
#
# zero exactly for scaled-orthogonal $O = cQ$, and $\sqrt{1 - 1/d}$ for rank one.  To read a measured value
# one needs two reference levels (derived):
#
# * a map of rank $r$ has $\delta_{\mathrm{orth}} \ge \sqrt{1/r - 1/d}$ (Cauchy–Schwarz on the $r$ nonzero
#   eigenvalues of $G$: $\sum\lambda^2 \ge (\sum\lambda)^2/r$), with equality for a scaled partial isometry;
# * a square Gaussian map is already nearly scaled-orthogonal in high dimension, $\delta_{\mathrm{orth}}
#   \approx d^{-1/2}$ (for a Wishart $G$: $\mathbb E\lVert G - \mu I\rVert_F^2 \approx d^3$ against
#   $(\mu d)^2 = d^4$).

# %%
dims = np.array([4, 8, 16, 32, 64, 128, 256, 384] if SMALL else [4, 8, 16, 32, 64, 128, 256, 384, 768, 1024])
gaussian = np.array([np.mean([orthogonality_deviation(rng.standard_normal((k, k))) for _ in range(5)]) for k in dims])
rank = 32
low_rank = np.array(
    [
        orthogonality_deviation(rng.standard_normal((k, rank)) @ rng.standard_normal((rank, k)))
        for k in dims[dims > rank]
    ]
)
floor = np.sqrt(1 / rank - 1 / dims[dims > rank])
Q_big = ortho_group.rvs(16, random_state=3)
partial = Q_big[:, :8] @ Q_big[:, :8].T  # a rank-8 orthogonal projector in d = 16
print(f"scaled orthogonal 3.7·Q: δ = {orthogonality_deviation(3.7 * Q_big):.1e}")
print(
    f"rank one in d = 16: δ = {orthogonality_deviation(np.outer(Q_big[0], Q_big[1])):.6f}, √(1 − 1/16) = {np.sqrt(15 / 16):.6f}"
)
print(
    f"rank-8 projector in d = 16: δ = {orthogonality_deviation(partial):.6f}, floor √(1/8 − 1/16) = {np.sqrt(1 / 16):.6f}"
)
print("Gaussian d×d:  d·δ² =", np.round(dims * gaussian**2, 2), "(→ 1)")
print(f"rank-{rank} Gaussian product W_V W_O:  δ / floor =", np.round(low_rank / floor, 2))
assert orthogonality_deviation(3.7 * Q_big) < 1e-14
assert abs(orthogonality_deviation(np.outer(Q_big[0], Q_big[1])) - np.sqrt(15 / 16)) < 1e-14
assert abs(orthogonality_deviation(partial) - 0.25) < 1e-13 and np.all(low_rank >= floor)
assert np.all(np.abs(dims[3:] * gaussian[3:] ** 2 - 1) < 0.25)

# %% [markdown]
# A mixture of orthogonal maps is not orthogonal.  Give every head a scaled-orthogonal map $M_h = c_hQ_h$:
# each head has $\delta_{\mathrm{orth}} = 0$, yet $O^{\mathrm{eff}}_{ij} = \sum_hw_h(i,j)c_hQ_h$ is not, unless
# one head dominates the edge.  So $\delta_{\mathrm{orth}}$ of $O^{\mathrm{eff}}$ also measures how much the heads
# disagree on each edge.

# %%
M_orth = rng.uniform(0.5, 2.0, H)[:, None, None] * ortho_group.rvs(D, size=H, random_state=12)
_, O_orth = effective_connection(A_heads, M_orth)
per_edge = orthogonality_deviation(O_orth, return_edges=True).edges
per_head = [orthogonality_deviation(M) for M in M_orth]
print(f"per head: max δ = {max(per_head):.1e};  O_eff: δ per edge in [{per_edge.min():.3f}, {per_edge.max():.3f}]")
assert max(per_head) < 1e-14 and per_edge.min() > 0

fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), constrained_layout=True)
axes[0].loglog(dims, gaussian, "o", label=r"Gaussian $d\times d$")
axes[0].loglog(dims, dims**-0.5, "k--", lw=1, label=r"$d^{-1/2}$")
axes[0].loglog(dims[dims > rank], low_rank, "s", label=f"Gaussian product, rank {rank}")
axes[0].loglog(dims[dims > rank], floor, "k:", lw=1, label=rf"rank-{rank} floor $\sqrt{{1/{rank} - 1/d}}$")
axes[0].set_xlabel("dimension d")
axes[0].set_ylabel(r"$\delta_{\rm orth}$")
axes[0].set_title("reference levels (scaled orthogonal: 0)")
axes[0].legend(fontsize=8)
axes[1].plot(weights.max(axis=0).ravel(), per_edge.ravel(), "o", ms=4)
axes[1].set_xlabel(r"largest head weight $\max_h w_h(i,j)$ on the edge")
axes[1].set_ylabel(r"$\delta_{\rm orth}(O^{\rm eff}_{ij})$")
axes[1].set_title("orthogonal heads, mixed by attention")
plt.show()

# %% [markdown]
# ## 2. The connection Dirichlet energy
#
# $$\mathcal E_c(X) = \tfrac12\sum_{i,j}\pi_iA_{ij}\lVert X_i - X_jO_{ij}\rVert^2 \qquad\text{(Eq. (14), reconstructed)}.$$
#
# Expanding the square, $\langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)$ for every $X$ under three
# hypotheses (derived): $A$ row-stochastic, $\pi^\top A = \pi^\top$, and every active $O_{ij}$ orthogonal.
# Reversibility is not needed.  In general the difference is
# $\sum_i\pi_i(1 - \tfrac12r_i)\lVert X_i\rVert^2 - \tfrac12\sum_{ij}\pi_iA_{ij}\lVert X_jO_{ij}\rVert^2$ with
# $r = A\mathbf 1$ (the `connection_energy` docstring).  We test a nonreversible walk with independent
# random orthogonal transports, then drop one hypothesis at a time.

# %%
P_walk = softmax_rows(rng.standard_normal((m, m)) * 1.5)  # nonreversible
pi_walk = MarkovOperator(P_walk).stationary
O_rand = ortho_group.rvs(d, size=m * m, random_state=13).reshape(m, m, d, d)  # no O_ji = O_ijᵀ
O_skewed = O_rand * rng.uniform(0.5, 1.5, (m, m, 1, 1))  # scaled: not orthogonal
uniform = np.full(m, 1 / m)
samples = rng.standard_normal((200 if SMALL else 2000, m, d))


def quadratic_form(P, transports, pi, Z):
    return pi_inner(pi, Z, Z - propagate(P, transports, Z))  # ⟨Z, L_mix Z⟩_π with L_mix = I − T


def predicted_gap(P, transports, pi, Z):
    moved = np.einsum("jb,ijba->ija", Z, transports)  # X_j O_ij
    r = P.sum(axis=1)
    return np.sum(pi * (1 - r / 2) * (Z**2).sum(axis=1)) - 0.5 * np.sum(pi[:, None] * P * (moved**2).sum(axis=-1))


energy_cases = {
    "hypotheses hold": (P_walk, O_rand, pi_walk),
    "transports not orthogonal": (P_walk, O_skewed, pi_walk),
    "π not stationary (uniform)": (P_walk, O_rand, uniform),
}
pairs_of_values = {}
print(f"{'case':28s} {'max |⟨X,LX⟩_π − ℰ_c|':>22s} {'max |gap − formula|':>20s}")
for name, (P, transports, pi) in energy_cases.items():
    form = np.array([quadratic_form(P, transports, pi, Z) for Z in samples])
    energy = np.array([float(connection_energy(P, transports, Z, pi=pi)) for Z in samples])
    formula = np.array([predicted_gap(P, transports, pi, Z) for Z in samples])
    pairs_of_values[name] = (energy, form)
    print(f"{name:28s} {np.abs(form - energy).max():22.1e} {np.abs(form - energy - formula).max():20.1e}")
    assert np.abs(form - energy - formula).max() < 1e-12
held = pairs_of_values["hypotheses hold"]
assert np.abs(held[1] - held[0]).max() < 1e-13 and held[0].min() > 0
assert all(np.abs(f - e).max() > 1e-2 for name, (e, f) in pairs_of_values.items() if name != "hypotheses hold")

# %% [markdown]
# **Flat connections and parallel sections** ({cite:p}`connectionlaplacian`; [mathematical reference §B.2, §B.6](reference.md#reference-b2)).  A change of frame
# $X'_i = X_iV_i$ carries transports to $O'_{ij} = V_j^{-1}O_{ij}V_i$ (`gauge_transform`); applied to the
# identity it gives the flat connection $O_{ij} = V_j^{-1}V_i$.  Then $X_i = cV_i$ is a parallel section,
# $X_i = X_jO_{ij}$ on every edge: it is fixed by the walk, lies in the kernel of $L_{\mathrm{mix}} = I - T$ and
# has zero energy — for any invertible frames, orthogonal or not.  Transport around a closed loop telescopes to the
# identity, $O_{ki}O_{jk}O_{ij} = V_i^{-1}V_kV_k^{-1}V_jV_j^{-1}V_i = I$ (trivial holonomy, measured by
# `holonomy_deviation`; notebook 10c studies connections where it is not).

# %%
identity_field = np.broadcast_to(np.eye(d), (m, m, d, d)).copy()
for label, V in (
    ("GL(3) frames", rng.standard_normal((m, d, d))),
    ("O(3) frames", ortho_group.rvs(d, size=m, random_state=14)),
):
    O_flat = gauge_transform(identity_field, V)
    section = np.einsum("b,iba->ia", rng.standard_normal(d), V)  # X_i = c V_i
    L_flat = connection_laplacian(P_walk, O_flat)
    residuals = {
        "max |X_i − X_j O_ij|": np.abs(section[:, None, :] - np.einsum("jb,ijba->ija", section, O_flat)).max(),
        "|L_mix vec X|": np.abs(L_flat @ section.reshape(-1)).max(),
        "ℰ_c(X)": float(connection_energy(P_walk, O_flat, section)),
        "‖Hol − I‖ on triangles": holonomy_deviation(O_flat, triangle_cycles(m)).max(),
    }
    print(f"{label}: " + ", ".join(f"{k} = {v:.1e}" for k, v in residuals.items()))
    assert max(residuals.values()) < 1e-12

fig, ax = plt.subplots(figsize=(5, 4))
for name, (energy, form) in pairs_of_values.items():
    ax.plot(energy, form, "o", ms=3, alpha=0.6, label=name)
top = max(max(e.max(), f.max()) for e, f in pairs_of_values.values())
ax.plot([0, top], [0, top], "k--", lw=1)
ax.set_xlabel(r"$\mathcal{E}_c(X)$")
ax.set_ylabel(r"$\langle X, L_{\rm mix}X\rangle_\pi$")
ax.set_title(f"energy identity, {len(samples)} random X per case")
ax.legend(fontsize=8)
plt.show()


# %% [markdown]
# ## Concept checks
#
# **Check 1.**  What is $\delta_{\mathrm{orth}}$ of the transport $O = 2Q$, with $Q \in O(d)$?
#
# (a) 0  (b) 1  (c) $\sqrt{1 - 1/d}$  (d) about $d^{-1/2}$
#
# :::{dropdown} Answer
# (a).  $G = O^\top O = 4I$, so $\mu = 4$ and $G - \mu I = 0$: $\delta_{\mathrm{orth}}$ measures the distance to
# *scaled* orthogonal maps, and a uniform stretch costs nothing (its polar factor $S = 2I$ is a multiple of $I$).
# $\sqrt{1 - 1/d}$ (c) is the value at rank one, $d^{-1/2}$ (d) the level of a square Gaussian map, and 1 (b) is never
# attained for $d \ge 2$.
# :::
#
# **Check 2.**  Every head map is scaled orthogonal, $M_h = c_hQ_h$, yet $\delta_{\mathrm{orth}}(O^{\mathrm{eff}}_{ij})$
# is large on some edge.  What does that say about the edge?
#
# (a) one head carries almost all of its attention  (b) several heads with different rotations share it
# (c) the walk is nonreversible there  (d) the head maps are singular
#
# :::{dropdown} Answer
# (b).  $O^{\mathrm{eff}}_{ij} = \sum_hw_h(i,j)c_hQ_h$ is a scaled rotation when one weight dominates (a gives a small
# δ, as the right panel of §1 shows) and not when rotations about different axes are averaged.  Reversibility (c) is a
# property of the weights $\pi_iA_{ij}$, not of the transports, and the maps here are invertible (d).
# :::
#
# **Check 3.**  Which hypothesis is *not* needed for $\langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)$?
#
# (a) $A$ row-stochastic  (b) $\pi^\top A = \pi^\top$  (c) every active $O_{ij}$ orthogonal  (d) detailed balance
# $\pi_iA_{ij} = \pi_jA_{ji}$
#
# :::{dropdown} Answer
# (d).  Expanding the square, the cross terms give $\langle X, TX\rangle_\pi$ and the squares give
# $\tfrac12\sum_i\pi_ir_i\lVert X_i\rVert^2 + \tfrac12\sum_{ij}\pi_iA_{ij}\lVert X_jO_{ij}\rVert^2$; row sums $r_i = 1$ (a),
# stationarity (b) and $\lVert X_jO_{ij}\rVert = \lVert X_j\rVert$ (c) turn these into $\lVert X\rVert_\pi^2$.  Nothing
# pairs the edge $j \to i$ with $i \to j$, so the identity holds for nonreversible walks, as §2 checks: the antisymmetric
# part of $L_{\mathrm{mix}}$ drops out of a quadratic form anyway.
# :::
#
# **Check 4.**  Frames $V_i \in GL(d)$, not orthogonal, applied to the identity connection give $O_{ij} = V_j^{-1}V_i$.
# Which statement holds?
#
# (a) $X_i = cV_i$ is a parallel section and lies in the kernel of $L_{\mathrm{mix}}$
# (b) the connection is flat only if the $V_i$ are orthogonal  (c) its energy $\mathcal E_c$ of $X_i = cV_i$ is positive
# (d) its holonomy around a triangle $i \to k \to j \to i$ is $V_i^{-1}V_kV_j^{-1}V_i$
#
# :::{dropdown} Answer
# (a).  $X_jO_{ij} = cV_jV_j^{-1}V_i = cV_i = X_i$ on every edge, so the walk fixes $X$ and
# $L_{\mathrm{mix}}X = 0$; the energy is a sum of $\lVert X_i - X_jO_{ij}\rVert^2 = 0$ (c is wrong), for any invertible
# frames (b is wrong).  Around a loop the frames telescope, $O_{ki}O_{jk}O_{ij} = V_i^{-1}V_k\,V_k^{-1}V_j\,V_j^{-1}V_i = I$:
# the holonomy is trivial, not (d).
# :::

# %% [markdown]
# ## Recap
#
# * The polar split $O = RS$ (rotate, then deform) and the partial isometry of singular head maps agree with
#   `scipy.linalg.polar` to rounding; for a singular map $R^\top R$ is the projector onto the range of $S$.
# * $\delta_{\mathrm{orth}}$ vanishes for scaled-orthogonal maps and equals $\sqrt{1 - 1/d}$ at rank one; a rank-$r$
#   map sits above the floor $\sqrt{1/r - 1/d}$ (attained by a projector), and a square Gaussian map has
#   $d\,\delta_{\mathrm{orth}}^2 \to 1$, so these two levels are what a measured value is read against.
# * A mixture of orthogonal head maps is not orthogonal: $\delta_{\mathrm{orth}}(O^{\mathrm{eff}}_{ij})$ measures how
#   much the heads disagree on the edge and falls as one head dominates it.
# * $\langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)$ for row-stochastic walks, stationary π and orthogonal
#   transports, reversible or not; dropping one hypothesis leaves exactly the predicted gap (checked to $10^{-12}$).
# * A change of frames applied to the identity gives a flat connection: its parallel sections $X_i = cV_i$ lie in
#   the kernel of $L_{\mathrm{mix}}$, have zero energy and trivial holonomy on every triangle.

# %% [markdown]
# ## Exercises
#
# The exercises use the objects of this notebook (`P_walk`, `pi_walk`, `O_rand`, `samples`, `identity_field`,
# `predicted_gap`, …) and the public `workbench.attention` API.

# %% [markdown]
# ### Exercise 10b.1 (compute)
#
# **How many parallel sections does a connection have?**  Build a flat connection on the walk `P_walk` ($m = 7$
# tokens, $d = 3$) from random orthogonal frames, `gauge_transform(identity, V)` with
# `V = ortho_group.rvs(3, size=7, random_state=...)`, and compute the singular values of
# `connection_laplacian(P_walk, O_flat)`.  Do the same for the random orthogonal field `O_rand` of §2.
#
# *What a correct answer shows:* the flat connection has exactly $d = 3$ singular values below $10^{-12}$ and the
# fourth of order $0.1$–$1$: its kernel is the three-dimensional space $\{X_i = cV_i : c \in \mathbb R^{1\times 3}\}$
# (one parallel section per starting vector, because the token graph is connected).  The random connection has
# smallest singular value bounded away from zero (a few tenths): a generic connection has no parallel section.
# Explain why the kernel cannot be larger than $d$ on a connected graph.
#
# **Answer in** `answer_10b_1`: a dict with keys `"V"` (array `(7, 3, 3)`: your orthogonal frames), `"sv_flat"` (the 21
# singular values of `connection_laplacian(P_walk, O_flat)`, ascending), `"sv_rand"` (the 21 singular values of
# `connection_laplacian(P_walk, O_rand)`, ascending) and `"kernel_dim"` (int: the number of singular values of the flat
# connection below $10^{-12}$).

# %%
# your code here (ortho_group, gauge_transform and connection_laplacian are already imported)

# %% [markdown]
# ### Exercise 10b.2 (derive)
#
# **A mixture of two rotations.**  Let $Q_1, Q_2 \in SO(3)$ and $O = \tfrac12(Q_1 + Q_2)$, an edge on which two heads
# with orthogonal maps carry equal weight.  Write $Q_1^\top Q_2 = R$, a rotation by the angle φ about a unit axis $a$.
# On paper:
#
# 1. show $G = O^\top O = \tfrac14(2I + R + R^\top)$ and, from $R + R^\top = 2\cos\varphi\,I + 2(1 - \cos\varphi)\,aa^\top$,
#    that $G$ has the eigenvalue 1 along $a$ and $(1 + \cos\varphi)/2$ twice;
# 2. conclude that
#    $$\delta_{\mathrm{orth}}(O) = \frac{1 - \cos\varphi}{\sqrt6\,(2 + \cos\varphi)};$$
# 3. explain why the same mixture in $d = 2$ has $\delta_{\mathrm{orth}} = 0$ for every φ.
#
# Check step 2 with sympy (compute $\mu$ and $\lVert G - \mu I\rVert_F$ from the eigenvalues and simplify), and
# numerically with `orthogonality_deviation` on a grid of angles (build $R$ with `scipy.spatial.transform.Rotation`
# or by Rodrigues' formula).
#
# *What a correct answer shows:* sympy reduces the difference of the two expressions to 0; the numerical δ matches the
# formula to $10^{-14}$ on the whole grid; at $\varphi = \pi$ it reaches $\sqrt{2/3}$, the rank-one value
# $\sqrt{1 - 1/d}$ of §1, because $O$ is then a rank-one map.
#
# **Answer in** `answer_10b_2`: a dict with keys `"delta"` (your closed form of $\delta_{\mathrm{orth}}(O)$, a sympy
# expression in the symbol `phi` for φ), `"angles"` (array: the angles of your numerical grid, in radians, in
# $(0, \pi]$), `"numeric"` (array: `orthogonality_deviation` of the $d = 3$ mixture at those angles) and `"planar_max"`
# (float: the largest $\delta_{\mathrm{orth}}$ of the same mixture in $d = 2$ over your grid, φ = π left out).

# %%
import sympy as sp  # noqa: F401  (for the symbolic check)

# your code here

# %% [markdown]
# ### Exercise 10b.3 (explore)
#
# **Which part of a transport breaks the energy identity?**  Start from the orthogonal field `O_rand` on the walk
# `P_walk` with its stationary law `pi_walk`, where $\langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)$ holds,
# and perturb every transport in three ways, with a random antisymmetric $K_{ij}$ and a random symmetric $S_{ij}$
# per edge and a size η on a geometric grid from $10^{-4}$ to $10^{-1}$:
# (a) $O_{ij}e^{\eta K_{ij}}$ (`scipy.linalg.expm`), (b) $O_{ij}(I + \eta K_{ij})$, (c) $O_{ij}(I + \eta S_{ij})$.
# For each, measure the largest relative gap $\lvert\langle X, L_{\mathrm{mix}}X\rangle_\pi - \mathcal E_c(X)\rvert /
# \lVert X\rVert_\pi^2$ over the random fields `samples`, fit its slope against η on a log–log plot, and read the
# deformation factor $S$ of `polar_transports` for each perturbation.
#
# *What a correct answer shows:* (a) stays at rounding ($\sim10^{-15}$) for every η — it is still a rotation; (b)
# has slope 2 and (c) slope 1 (each within 0.05).  Explain with the polar decomposition of §1: only the deformation
# $S$ can open a gap, since the gap formula involves $O_{ij}O_{ij}^\top = RS^2R^\top$, which is $I$ exactly when
# $S = I$; for (b) $S = (I - \eta^2K^2)^{1/2}$ differs from $I$ at second order, for (c) at first order.  A first-order-accurate update of a rotation costs the
# identity only at second order.

# %%
# your code here (scipy.linalg, polar_transports and connection_energy are already imported)
