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
# # 11 — Exponentials as layers
#
# The Lie-exponential roadmap {cite:p}`lieroadmap` reads the matrix exponential as a compiler.  You write down a
# generator with a linear constraint, and its exponential has the matching invariant **exactly**, by
# construction rather than by a normalisation step:
#
# | generator | constraint | exponential | guarantee |
# |---|---|---|---|
# | Markov $Q$ | $Q_{ij} \ge 0$ off the diagonal, rows sum to 0 | $e^{tQ}$ | row-stochastic, nonnegative |
# | skew $A$ | $A^\top = -A$ | $e^{A}$ | orthogonal: norms preserved |
# | symmetric $S$ | $S^\top = S$ | $e^{S}$ | SPD, $\lVert e^S\rVert_2 = e^{\lambda_{\max}(S)}$ |
# | Hamiltonian $JH$ | $H^\top = H$ | $e^{JH}$ | symplectic: $W^\top J W = J$ |
#
# The notebook builds each pattern as a small torch layer (`workbench.nn`) and checks its guarantee numerically.
# Then it turns to the roadmap's *gauge transformer*: transports, the double exponential and curvature.
# It closes with what the Baker–Campbell–Hausdorff (BCH) formula says about stacks of exponentials: how far a stack
# can be fused into one exponential {cite:p}`magnus1954exponential,blanes2009magnus`, and how the commutators of a
# stack are read through the **log lens**.  Every check here is also a catalogue identity; `workbench check nn` runs
# all of them.
#
# **Objectives.**  After this notebook you can
#
# * explain why $e^{tQ}$ of a Markov generator is stochastic without a softmax, and compute it by uniformization
#   with a certified truncation;
# * build orthogonal, SPD (with a certified Lipschitz cap) and symplectic maps as exponentials, and check their
#   invariants to rounding;
# * check that transported attention scores are gauge invariant and the double exponential is gauge covariant;
# * predict the order of the error when a product of exponentials is replaced by a truncated BCH or Magnus series,
#   and measure it as a fitted slope;
# * read a stack of layers through the commutators of their logarithms.
#
# **Prerequisites.**  Notebook 01 (the Baker–Campbell–Hausdorff formula) and notebook 02 (heat kernels and Markov
# semigroups); notebooks 10a–10b for transports and changes of frame.  Maths: the matrix exponential and logarithm,
# eigenvalues of symmetric matrices, the Poisson distribution, orthogonal and symplectic groups; a little PyTorch
# (modules, autograd).
#
# **Time.**  About 75 minutes in class (sections 1–5; 6–7 as reading); the code runs in about 15 s at the default
# scale.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
import torch

from workbench.experiments import fusion_slopes, fusion_table, magnus_stack_table, residual_stack
from workbench.lens import (
    cartan_split,
    commutator_norms,
    iwasawa_split,
    log_lens,
    plot_commutator_heatmap,
    principal_log,
)
from workbench.nn import (
    ExpMarkovAttention,
    GivensFlowMixer,
    HeatKernelAttention,
    SPDMap,
    SymplecticMap,
    banded_transported_scores,
    bch_conjugation_error,
    brick_planes,
    curvature,
    double_exponential,
    gauge_change,
    givens_generator,
    givens_product,
    multiscale_generator,
    multiscale_offsets,
    prefix_transports,
    symplectic_form,
    transported_scores,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
torch.set_num_threads(1)  # small matrices: one thread is the fastest, and robust on a shared machine
torch.manual_seed(0)
rng = np.random.default_rng(0)
torch.set_default_dtype(torch.float64)

# %% [markdown]
# ## 1. Exp-Markov attention: stochastic by construction
#
# `ExpMarkovAttention` learns a banded generator from token content.  The rate from $i$ to $i+\delta$ is
# $Q_{i,i+\delta} = \operatorname{softplus}(a_\delta\langle q_i, k_{i+\delta}\rangle/\sqrt{d_h} + b_\delta)$,
# and $Q_{ii}$ is minus the row sum.  Each head then applies $e^{t_hQ_h}$ to its values, with a learned time
# $t_h$, by **uniformization**.  Write $P = I + Q/\lambda$ with $\lambda$ at least the largest exit rate.  Then
# $e^{tQ} = \sum_k e^{-\lambda t}\frac{(\lambda t)^k}{k!}P^k$, a Poisson mixture of stochastic matrices.  Every
# term is nonnegative and keeps the row sums at 1, so no softmax is needed.  The Poisson cut-off is the
# engine's (`workbench.expmv.poisson_truncation`), and gradients flow through $Q$, $t$ and the values.

# %%
n, d_model, heads = 24, 16, 2
x = torch.randn(1, n, d_model)
layer = ExpMarkovAttention(d_model, heads, offsets=multiscale_offsets(2), t_init=1.0).double()
with torch.no_grad():
    y, P = layer(x, return_operator=True)  # P: [batch, head, n, n], the dense e^{tQ} (small n only)
Q = layer.generator(x)  # the BandedGenerator of each head; .dense() is the n×n matrix
dense_q = Q.dense()[0].detach().numpy()
times = layer.times.detach().numpy()
oracle = np.stack([scipy.linalg.expm(t * q) for t, q in zip(times, dense_q, strict=True)])
print(f"row sums − 1: {float((P.sum(-1) - 1).abs().max()):.1e}   min entry: {float(P.min()):.1e}")
print(f"against scipy expm(t_h Q_h): {np.abs(P[0].detach().numpy() - oracle).max():.1e}")

fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), layout="constrained")
for ax, t in zip(axes, (0.3, 2.0, 12.0), strict=True):
    p = scipy.linalg.expm(t * dense_q[0])
    image = ax.imshow(p, cmap="viridis", vmin=0)  # each panel its own range: at large t the entries are ≈ 1/n
    ax.set_title(rf"head 0, $e^{{tQ}}$ at $t = {t}$")
    ax.set_xlabel("key j")
    fig.colorbar(image, ax=ax, shrink=0.8, label="transition probability")
axes[0].set_ylabel("query i")
fig.suptitle(r"the learned time sets the reach: multiscale band ($\pm1, \pm2, \pm4$), same generator")
plt.show()

# %% [markdown]
# The gradient is exact, not a surrogate.  `torch.autograd.gradcheck` compares it with finite differences of the
# same float64 layer, for the per-head time and for every parameter:

# %%
tiny = ExpMarkovAttention(4, 1, offsets=(-1, 1)).double()
x_tiny = torch.randn(1, 5, 4)
ok = torch.autograd.gradcheck(lambda inp: tiny(inp), (x_tiny.requires_grad_(),), fast_mode=True)
print("gradcheck through exp(tQ) X (input):", ok)
assert ok
loss = tiny(x_tiny).square().sum()
loss.backward()
print("∂loss/∂(raw time) per head:", tiny.raw_time.grad.numpy().round(6))

# %% [markdown]
# ## 2. Heat-kernel attention: symmetric, doubly stochastic, a contraction
#
# With a **symmetric** learned weight $W$ and $L = D - W$, the operator $e^{-tL}$ is symmetric with rows and
# columns summing to 1, and $\lVert e^{-tL}\rVert_2 \le 1$ since $L \succeq 0$.  `HeatKernelAttention` mixes
# several times per head (a multiscale diffusion) with learned softmax weights; a convex mixture keeps every one
# of the three properties.

# %%
heat = HeatKernelAttention(d_model, 2, times=(0.5, 2.0, 8.0), offsets=(1, 2)).double()
with torch.no_grad():
    _, P_heat = heat(x, return_operator=True)
P0 = P_heat[0, 0]
print(
    f"symmetry {float((P0 - P0.T).abs().max()):.1e}, rows−1 {float((P0.sum(0) - 1).abs().max()):.1e}, "
    f"columns−1 {float((P0.sum(1) - 1).abs().max()):.1e}, ‖P‖₂ = {float(torch.linalg.matrix_norm(P0, 2)):.6f}"
)
print("mixing weights per head:", heat.mixing_weights().detach().numpy().round(3))

# %% [markdown]
# ## 3. Givens flows: exactly orthogonal mixing
#
# A plane rotation is $G(i,j,\theta) = \exp(\theta(E_{ij} - E_{ji}))$.  A product of such rotations is
# orthogonal to rounding, and applying it costs one two-row update per rotation, with no $d\times d$ matrix.
# When the planes are pairwise disjoint the rotations commute, and the product is **exactly** $e^{A}$ for
# $A = \sum\theta_k(E_{i_kj_k} - E_{j_ki_k})$.  When the planes overlap they do not commute, and the product
# differs from $e^{A}$ by the BCH commutator term $\tfrac12\sum_{a<b}[B_a, B_b] + O(\theta^3)$: slope 2 in the
# angle scale.

# %%
d = 8
mixer = GivensFlowMixer(d, layers=d).double()
W = mixer.matrix().detach()
print(
    f"‖WᵀW − I‖_max = {float((W.T @ W - torch.eye(d)).abs().max()):.1e}  (brick wall, {len(brick_planes(d, d))} planes)"
)

disjoint = brick_planes(d, 1)  # (0,1), (2,3), ...: pairwise disjoint
angles = torch.tensor(rng.uniform(-np.pi, np.pi, len(disjoint)))
gap = givens_product(angles, disjoint, d).as_matrix() - torch.linalg.matrix_exp(givens_generator(angles, disjoint, d))
print(f"disjoint planes: ‖ΠG − e^A‖_max = {float(gap.abs().max()):.1e}")

overlapping = brick_planes(d, 3)
base = torch.tensor(rng.standard_normal(len(overlapping)))
scales = np.geomspace(1e-3, 1e-1, 7 if SMALL else 15)
defect = [
    float(
        torch.linalg.matrix_norm(
            givens_product(s * base, overlapping, d).as_matrix()
            - torch.linalg.matrix_exp(givens_generator(s * base, overlapping, d))
        )
    )
    for s in scales
]
slope = np.polyfit(np.log(scales), np.log(defect), 1)[0]
fig, ax = plt.subplots(figsize=(5, 3.6), layout="constrained")
ax.loglog(scales, defect, "o-", label=f"overlapping planes (slope {slope:.2f})")
ax.set_xlabel(r"angle scale $\varepsilon$ (rad)")
ax.set_ylabel(r"$\|\prod G - e^{A}\|_F$ (dimensionless)")
ax.legend(fontsize=8)
ax.set_title(r"commuting rotations fuse exactly; others at $O(\varepsilon^2)$")
plt.show()
assert float(gap.abs().max()) < 1e-13 and abs(slope - 2) < 0.05  # exact for disjoint planes; BCH slope 2

# %% [markdown]
# ## 4. SPD maps with a certified Lipschitz cap, and symplectic maps
#
# $e^{S}$ with $S$ symmetric is SPD with $\lVert e^S\rVert_2 = e^{\lambda_{\max}(S)}$.  `SPDMap(lipschitz=L)`
# scales $S$ so that an **upper** bound on $\lambda_{\max}$ (Gershgorin: $\max_i S_{ii} + \sum_{j\ne i}|S_{ij}|$)
# stays at or below $\log L$; that certifies $\lVert e^S x - e^S y\rVert \le L\lVert x-y\rVert$.  A Rayleigh
# quotient or a power iteration gives a *lower* bound, so it could not certify anything.  The Gershgorin bound
# is loose, so the actual norm sits below the cap.  `SymplecticMap` is $e^{JH}$ with $H$ symmetric.

# %%
for cap in (1.5, 2.0, 10.0):
    spd = SPDMap(16, lipschitz=cap).double()
    with torch.no_grad():
        spd.weight.mul_(5.0)  # large raw generator, so that the cap binds
    Wspd = spd.matrix().detach()
    eig = torch.linalg.eigvalsh(Wspd)
    print(f"cap L = {cap:>4}: λ_min = {float(eig.min()):.3f} > 0, ‖W‖₂ = {float(eig.max()):.3f} ≤ {cap}")
sym = SymplecticMap(6).double()
Ws = sym.matrix().detach()
J = symplectic_form(6)
print(
    f"symplectic: ‖WᵀJW − J‖_max = {float((Ws.T @ J @ Ws - J).abs().max()):.1e}, det W = {float(torch.linalg.det(Ws)):.12f}"
)

# %% [markdown]
# ## 5. Gauge transport: scores that do not depend on the choice of frames
#
# In the roadmap's gauge transformer every position carries its own basis.  A connection assigns a generator
# $A_\ell$ to each edge $\ell \to \ell+1$.  The prefix transports $T_j = e^{A_{j-1}}\cdots e^{A_0}$ come from an
# associative scan, and the transport from $j$ to $i$ is $R_{i\leftarrow j} = T_iT_j^{-1}$.  Scores compare a
# query with a *transported* key, $c_{ij} = \langle q_i, R_{i\leftarrow j}k_j\rangle$.
#
# Change every frame, $x_j \mapsto S_jx_j$.  Then $T_j \mapsto S_jT_jS_0^{-1}$, keys and values go to $S_jk_j$,
# and queries to $S_i^{-\top}q_i$; the scores do not change.  The mixing step is the double exponential
# $Y = \mathcal T e^{tQ\otimes I}\mathcal T^{-1}V$.  It moves the values into one shared frame, mixes them with
# a Markov exponential and moves them back, so $y_i \mapsto S_iy_i$.  The roadmap writes this with
# $T^{-1}\cdots T$; its $T_j$ is our $T_j^{-1}$.  Its score formula and its double exponential need opposite
# conventions, and the one used here, fixed by the workbench, makes both consistent.

# %%
n, d = 16, 3
gens = 0.3 * torch.randn(n - 1, d, d)
T = prefix_transports(gens)
q, k, v = torch.randn(n, d), torch.randn(n, d), torch.randn(n, d)
offsets = multiscale_offsets(2)
Qg = multiscale_generator(banded_transported_scores(q, k, T, offsets), offsets)
Y = double_exponential(Qg, T, v, 0.7)
S = torch.linalg.matrix_exp(0.5 * torch.randn(n, d, d))  # a random change of frames
T2, q2, k2, v2 = gauge_change(S, T, q, k, v)
Y2 = double_exponential(multiscale_generator(banded_transported_scores(q2, k2, T2, offsets), offsets), T2, v2, 0.7)
print(f"scores invariant: {float((transported_scores(q2, k2, T2) - transported_scores(q, k, T)).abs().max()):.1e}")
print(f"outputs covariant (S_i y_i): {float((Y2 - (S @ Y.unsqueeze(-1)).squeeze(-1)).abs().max()):.1e}")

# %% [markdown]
# ### Where BCH enters: the twist and the curvature
#
# If the frames are themselves exponentials, $T_i = e^{\Phi_i}$, the block coupling $j \to i$ is
# $e^{\Phi_i}e^{-\Phi_j}$.  That equals $e^{\Phi_i-\Phi_j}$ only when the $\Phi$ commute.  Otherwise BCH gives
# the correction $\log(e^{\Phi_i}e^{-\Phi_j}) = \Phi_i - \Phi_j - \tfrac12[\Phi_i,\Phi_j] + \dots$, and
# truncating it at degree $N$ leaves an error $O(\varepsilon^{N+1})$.  In the same way the discrete curvature
# $F_i = \log(e^{A_{i+1}}e^{A_i}e^{-A_{i+1}}e^{-A_i})$ is $[A_{i+1}, A_i]$ plus the BCH corrections of the
# group-commutator series (`workbench.lie.commutator_log`).  Truncated at degree $N$, the error has slope $N+1$.

# %%
eps = np.geomspace(0.02, 0.3, 6 if SMALL else 12)
phi_i, phi_j = torch.randn(4, 4), torch.randn(4, 4)
phi_i, phi_j = phi_i / torch.linalg.matrix_norm(phi_i, 2), phi_j / torch.linalg.matrix_norm(phi_j, 2)
base = torch.randn(2, 4, 4)
base = base / torch.linalg.matrix_norm(base, 2, keepdim=True).unsqueeze(-1).squeeze(-1)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8), layout="constrained")
for degree in (1, 2, 3, 4):
    err = [float(bch_conjugation_error(e * phi_i, e * phi_j, degree)) for e in eps]
    ax1.loglog(eps, err, "o-", label=f"BCH through {degree}: slope {np.polyfit(np.log(eps), np.log(err), 1)[0]:.2f}")
for degree in (2, 3, 4):
    err = []
    for e in eps:
        exact = curvature(e * base, degree=None)
        err.append(float(torch.linalg.matrix_norm(exact - curvature(e * base, degree=degree)).max()))
    ax2.loglog(eps, err, "s-", label=f"F through {degree}: slope {np.polyfit(np.log(eps), np.log(err), 1)[0]:.2f}")
ax1.set(
    xlabel=r"generator scale $\varepsilon$ (dimensionless)",
    ylabel=r"$\|e^{\Phi_i}e^{-\Phi_j} - \exp(\mathrm{BCH}_N)\|$",
    title="the twist of non-commuting frames",
)
ax2.set(
    xlabel=r"generator scale $\varepsilon$ (dimensionless)",
    ylabel=r"$\|F - \mathrm{commutator\_log}_N\|$",
    title="curvature vs its BCH series",
)
for ax in (ax1, ax2):
    ax.set_xticks([0.02, 0.05, 0.1, 0.2, 0.3], ["0.02", "0.05", "0.1", "0.2", "0.3"])
    ax.set_xticks([], minor=True)
    ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 6. Fusing a stack of exponentials
#
# A stack $e^{A_1}\cdots e^{A_k}$ equals $e^{\Omega}$ with $\Omega = \log(e^{A_1}\cdots e^{A_k})$, the
# multi-factor BCH series.  Truncating $\Omega$ at degree $N$ leaves an error of order $N+1$ in the size of the
# generators.  The roadmap's micro-experiment draws small skew generators and compares the product with
# $e^{\Omega_N}$ for several $N$.  It flags fusion as **safe** when the largest commutator is below $10^{-2}$
# and the second-order error is below $10^{-3}$.  The same table comes from `workbench bench bch-fusion`;
# `GAUGE_BCH_FUSION=0` skips it.

# %%
rows = fusion_table(n_generators=4, dim=8, scales=(1.0, 0.3, 0.1, 0.03, 0.01))
print(f"{'ε':>6} {'comm_max':>9} " + " ".join(f"{'err N=' + str(o):>10}" for o in (1, 2, 3, 4)) + "   safe")
for row in rows:
    errs = " ".join(f"{row['errors'][o]:>10.1e}" for o in (1, 2, 3, 4))
    print(f"{row['scale']:>6g} {row['comm_max']:>9.1e} {errs}   {row['safe']}")
print("fitted slopes (expect N+1):", {o: round(s, 2) for o, s in fusion_slopes(rows).items() if s is not None})

# %% [markdown]
# A linearised residual stack is a product of small exponentials too.  Fusing its $L$ layers replaces $L$
# matrix products by one.  The price is the truncation error, traded here against the order; the latencies are
# in `workbench bench bch-fusion` and `benchmarks/RESULTS.md`.

# %%
stack = residual_stack(n_layers=6, dim=8, horizon=0.5, seed=0)
for row in magnus_stack_table(stack, orders=(1, 2, 3, 4)):
    print(
        f"{row['method']:>7} order {row['order']}: {row['matmuls']} matmul(s), "
        f"error vs stack {row['error_stack']:.1e}, vs flow {row['error_flow']:.1e}"
    )

# %% [markdown]
# ## 7. The log lens: reading a stack through its generators
#
# For learned maps $W_\ell$ that have a principal logarithm, $S_\ell = \log W_\ell$ is the generator that reaches
# $W_\ell$ at $t=1$.  Two layers commute exactly when $[S_\ell, S_m] = 0$; those are candidates for fusion.  The
# commutator map $\lVert[S_\ell, S_m]\rVert_F$ shows where the non-commutativity lives.  The stack below has
# layers built from a shared set of commuting generators, except for two layers that add a random rotation.
# A map without a real logarithm (a reflection, $\det = -1$) is reported with its reason instead of crashing.

# %%
dim = 6
U = scipy.linalg.qr(rng.standard_normal((dim, dim)))[0]
layers = []
for ell in range(8):
    lam = rng.uniform(-1, 1, dim)  # commuting: all diagonal in the same basis U
    S_ell = U @ np.diag(lam) @ U.T
    if ell in (3, 6):
        K = rng.standard_normal((dim, dim))
        S_ell = S_ell + 0.8 * (K - K.T)
    layers.append(scipy.linalg.expm(S_ell))
layers.append(np.diag([-1.0] + [1.0] * (dim - 1)))  # a reflection: no real logarithm
report = log_lens(layers)
for entry in report.entries[-3:]:
    print(entry.index, entry.kind, entry.reason)
fig, ax = plt.subplots(figsize=(5.4, 4.4), layout="constrained")
plot_commutator_heatmap(report.commutators, ax=ax, title=r"$\|[S_\ell, S_m]\|_F$ across layers (blank: no log)")
ax.set_aspect("equal")
plt.show()
print("adjacent commutators along depth:", report.adjacent.round(3))
logs = [S for S in report.logs if S is not None]
assert np.allclose(commutator_norms(logs)[:-1, :-1][np.ix_([0, 1, 2], [0, 1, 2])], 0, atol=1e-12)  # commuting layers

# %% [markdown]
# Each generator splits further.  The Cartan split is $A = K + P$: skew (rotation) plus symmetric (gains),
# orthogonal in the trace form.  The Iwasawa split at the Lie-algebra level is $A = K + H + N$: skew, plus
# diagonal, plus strictly upper triangular (nilpotent).  This is the roadmap's "compact / diagonal / nilpotent"
# reading of a generator {cite:p}`knapp2002lie`.  $e^{K}e^{H}e^{N}$ differs from $e^{A}$ by commutators: for a small generator the
# defect is the degree-2 BCH term $\tfrac12([K,H] + [K,N] + [H,N])$, so their ratio tends to 1.

# %%
A = principal_log(layers[3])
cs, iw = cartan_split(A), iwasawa_split(A)
print("Cartan norms:", {k: round(v, 3) for k, v in cs.norms.items()})
print("Iwasawa norms:", {k: round(v, 3) for k, v in iw.norms.items()})
for scale in (1e-1, 1e-2, 1e-3):  # the product form's defect is the degree-2 BCH term, to leading order
    small = iwasawa_split(scale * A)
    print(
        f"ε = {scale:g}: ‖e^K e^H e^N − e^A‖_F / ‖½Σ[X_i, X_j]‖_F = {small.product_error() / small.bch_leading():.5f}"
    )

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  Exp-Markov attention applies $e^{tQ}$ with $Q_{ij} \ge 0$ off the diagonal and rows summing to 0.  Why
# is $e^{tQ}$ row-stochastic and nonnegative without any softmax?
#
# (a) Because $t$ is learned to keep the rows normalised.
# (b) Because $e^{tQ} = \sum_ke^{-\lambda t}\frac{(\lambda t)^k}{k!}P^k$ with $P = I + Q/\lambda$ stochastic: a Poisson
# mixture of stochastic matrices.
# (c) Because $Q$ is symmetric.
# (d) Because the uniformization is truncated at a certified $K$.
#
# :::{dropdown} Answer
# (b).  With $\lambda$ at least the largest exit rate, $P$ is nonnegative with unit row sums, so every $P^k$ is, and
# so is any convex combination of them.  (a) The property holds for every $t \ge 0$.  (c) $Q$ need not be
# symmetric: that is the heat-kernel case of §2.  (d) The truncation only approximates the sum; the exact sum is
# stochastic whatever $K$.
# :::
#
# **Check 2.**  `SPDMap(lipschitz=L)` scales its generator with a Gershgorin bound on $\lambda_{\max}(S)$.  Why not
# with a few steps of power iteration, which are closer to the true value?
#
# (a) Power iteration does not converge for symmetric matrices.
# (b) Power iteration gives a lower bound on $\lambda_{\max}$, which cannot certify $\lVert e^S\rVert_2 \le L$;
# Gershgorin gives an upper bound, which can.
# (c) Gershgorin is exact for symmetric matrices.
# (d) Power iteration would break the SPD property.
#
# :::{dropdown} Answer
# (b).  A Rayleigh quotient never exceeds $\lambda_{\max}$, so scaling with it could leave $\lambda_{\max} > \log L$.
# The price of the upper bound is looseness: the true norm sits below the cap.  (a) It converges (slowly when the top
# eigenvalues are close).  (c) Gershgorin is only a bound.  (d) $e^S$ is SPD for every symmetric $S$.
# :::
#
# **Check 3.**  Givens rotations on *overlapping* planes: $\lVert\prod G - e^A\rVert_F$ has slope 2 in the angle scale
# ε.  Where does the 2 come from?
#
# (a) From rounding errors, which grow like ε².
# (b) From the first BCH term: $\log(e^Xe^Y) = X + Y + \tfrac12[X, Y] + \dots$, and $[X, Y]$ is of order ε² when $X$
# and $Y$ are of order ε.
# (c) From the two rotations in each plane.
# (d) From the Frobenius norm, which squares the entries.
#
# :::{dropdown} Answer
# (b).  The product and $e^{X+Y}$ agree to first order; they differ by $\tfrac12[X, Y] + O(\varepsilon^3)$, whose norm
# is of order ε².  On disjoint planes the bracket vanishes and the product is exactly $e^A$.  (a) Rounding is
# $10^{-16}$, not ε².  (c) and (d) do not produce an order in ε.
# :::
#
# **Check 4.**  A stack $e^{A_1}\cdots e^{A_k}$ with generators of size ε is replaced by $e^{\Omega_N}$, the BCH series
# truncated at degree $N$.  How does the error behave?
#
# (a) Like $\varepsilon^{N+1}$: the first omitted terms are brackets of degree $N + 1$.
# (b) Like $\varepsilon^{N}$.
# (c) It is zero for $N \ge 2$.
# (d) Like $\varepsilon^{2N}$.
#
# :::{dropdown} Answer
# (a).  Every term of degree $m$ in the series is an $m$-fold bracket of generators of size ε, hence of size
# $\varepsilon^m$; dropping degrees above $N$ leaves $O(\varepsilon^{N+1})$, the slopes $N + 1$ of §6.  (b) would be
# the error of stopping one degree earlier.  (c) holds only when the generators commute.  (d) has no basis in the
# series.
# :::

# %% [markdown]
# ## Recap
#
# * Exp-Markov attention is row-stochastic and nonnegative by construction: the uniformized $e^{tQ}$ matches
#   `scipy.linalg.expm` to rounding, and `gradcheck` confirms exact gradients through the time and the generator.
# * Heat-kernel attention with a symmetric weight is symmetric, doubly stochastic and a contraction, for every
#   convex mixture of times.
# * Givens products are orthogonal to rounding; on disjoint planes they equal $e^{A}$ exactly, on overlapping planes
#   they differ by the BCH commutator term, a fitted slope 2 in the angle scale.
# * `SPDMap` certifies its Lipschitz cap with a Gershgorin *upper* bound on $\lambda_{\max}$; `SymplecticMap`
#   preserves $J$ to rounding.
# * Transported scores are gauge invariant and the double exponential is gauge covariant ($y_i \mapsto S_iy_i$), to
#   rounding; BCH truncations of the twist and of the curvature have error slopes $N + 1$.
# * Fusing a stack of exponentials into one: truncation at degree $N$ leaves an error of order $N + 1$ (fitted slopes
#   in the fusion table); the log lens finds the commuting layers and reports maps without a real logarithm.

# %% [markdown]
# ## Exercises
#
# Use the objects of this notebook (`dense_q`, `times`, …), `scipy.linalg.expm` as a reference where one is asked
# for, and the public `workbench.nn` API.

# %% [markdown]
# ### Exercise 11.1 (compute)
#
# **Uniformization by hand, with a certificate.**  Take the dense generator of head 0 of §1, `Q = dense_q[0]`, and
# $t = 2$.  Set $\lambda = \max_i(-Q_{ii})$ and $P = I + Q/\lambda$, and form the truncated Poisson sums
# $S_K = \sum_{k=0}^{K} e^{-\lambda t}\frac{(\lambda t)^k}{k!}P^k$ for $K = 0, 1, \dots$.  Find the smallest $K$ with
# $\lVert S_K - e^{tQ}\rVert_\infty < 10^{-12}$ (reference: `scipy.linalg.expm`), and compare the error at every $K$
# with the Poisson tail $\Pr(N > K)$, $N \sim \mathrm{Poisson}(\lambda t)$ (`scipy.stats.poisson.sf`).
#
# *What a correct answer shows:* $P$ is stochastic (nonnegative, rows sum to 1), every partial sum is nonnegative, and
# the error never exceeds the tail mass, because each $P^k$ has $\infty$-norm 1; so the tail is a certificate that
# needs no reference.  $K$ comes out a little above $\lambda t + c\sqrt{\lambda t}$ (about 40 here).
#
# **Answer in** `answer_11_1`: a dict with keys `"Q"` (the $24\times24$ generator you used), `"t"` (the time, 2.0),
# `"rate"` (your $\lambda$), `"errors"` (a 1-D array: entry $K$ is $\lVert S_K - e^{tQ}\rVert_\infty$, for
# $K = 0, 1, \dots$ at least up to your answer), `"tails"` (the matching array of $\Pr(N > K)$) and `"K"` (the
# smallest $K$ with an error below $10^{-12}$, an integer).

# %%
# your code here (scipy.stats.poisson gives the tail mass)

# %% [markdown]
# ### Exercise 11.2 (derive)
#
# **The second-order defect of two overlapping rotations.**  Let $B_1 = E_{01} - E_{10}$ and $B_2 = E_{12} - E_{21}$ in
# $\mathbb R^{3\times3}$ and $W(\varepsilon) = e^{\varepsilon aB_1}e^{\varepsilon bB_2}$ (the Givens product on the planes
# $(0, 1), (1, 2)$ with angles $\varepsilon a, \varepsilon b$).  On paper, expand both factors to second order and
# show
# $$W(\varepsilon) - e^{\varepsilon(aB_1 + bB_2)} = \tfrac12\varepsilon^2ab\,[B_1, B_2] + O(\varepsilon^3),
# \qquad [B_1, B_2] = E_{02} - E_{20},$$
# so that $\lVert W - e^{A}\rVert_F = \varepsilon^2|ab|/\sqrt2 + O(\varepsilon^3)$.  Check the expansion with sympy
# (series in ε of the two sides, or the commutator by matrix algebra), and numerically: the ratio of
# $\lVert$`givens_product(...).as_matrix()` − `matrix_exp(givens_generator(...))`$\rVert_F$ to
# $\varepsilon^2|ab|/\sqrt2$ for ε = $10^{-1}, 10^{-2}, 10^{-3}$.
#
# *What a correct answer shows:* sympy gives the commutator $E_{02} - E_{20}$ and a vanishing difference at order
# ε²; the numerical ratio tends to 1 like $1 - O(\varepsilon^2)$ (about $1 - 6\cdot10^{-4}$ at ε = 0.1, a hundred times
# closer at ε = 0.01).  Explain why the slope 2 of §3 is the first BCH term, why disjoint planes give no defect at all,
# and why the correction to the ratio is of order ε² rather than ε (hint: for a skew matrix $X$ the map
# $Z \mapsto [X, Z]$ is antisymmetric in the Frobenius inner product, so $\langle Z, [X, Z]\rangle_F = 0$).
#
# **Answer in** `answer_11_2`: a dict with keys `"commutator"` (the sympy $3\times3$ matrix $[B_1, B_2]$),
# `"second_order"` (the sympy $3\times3$ matrix of the coefficient of $\varepsilon^2$ in $W(\varepsilon) -
# e^{\varepsilon(aB_1 + bB_2)}$, in the symbols `a` and `b`), `"weights"` (the numbers $(a, b)$ of your numerical
# check), `"epsilons"` (the values of ε you used) and `"ratios"` (the matching ratios
# $\lVert W - e^{A}\rVert_F/(\varepsilon^2\lvert ab\rvert/\sqrt2)$).

# %%
# your code here (sympy for the symbolic check)

# %% [markdown]
# ### Exercise 11.3 (explore)
#
# **How long is the learned reach?**  For the generator `Q = dense_q[0]` of §1, compute its stationary law π (left
# null vector) and the distance to stationarity $d(t) = \max_i\tfrac12\sum_j|(e^{tQ})_{ij} - \pi_j|$ for $t$ from 5 to
# 60.  Fit the slope of $\log d(t)$ against $t$ and compare it with the spectral gap $\gamma = -\operatorname{Re}\lambda_2(Q)$
# (the second eigenvalue, largest real part after 0).
#
# *What a correct answer shows:* the fitted slope equals $-\gamma$ to within 2 %.  Interpret: a head reaches the whole
# sequence once $t \gtrsim 1/\gamma$; compare $1/\gamma$ with the times `times` of the two heads (the layer of §1 is
# untrained, so both still sit at `t_init = 1`).  Is head 0 local or global at that time, and how would training move
# $t_h$ to change that?

# %%
# your code here
