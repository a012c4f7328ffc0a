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
# # 04 — Geometry without coordinates
#
# A Markov operator knows the geometry of its samples without being told any coordinates: the
# carré du champ $\Gamma$ is the co-metric, its iterate $\Gamma_2$ carries curvature, and for a
# non-reversible operator the circulation $\Omega_\pi$ measures what detailed balance leaves out.  These are
# the objects of the "Bakry–Émery I" and "Courrège" sections of {cite:t}`candanedo2026attention` (§5, §7), in the
# Γ-calculus of {cite:t}`bakry2014analysis`; the formulas, with their tags, are collected in the
# [mathematical reference §A.5, §A.7 and §A.8](reference.md#reference-a5).  This notebook
#
# 1. recovers a metric from $\Gamma$ — a linear anisotropic map and a curved saddle surface;
# 2. computes the exact Bakry–Émery curvature of graphs against published values, and says what it
#    does (and does not) show on sampled surfaces;
# 3. takes a non-reversible, attention-like operator apart: current, circulation, cycle affinities,
#    the Hodge split of its link, the Hatano–Nelson gauge form and the $\mathsf D_K, \mathsf D_Q$ identity;
# 4. splits the Dirichlet form into a local and a jump part over a range of radii (Beurling–Deny).
#
# **Objectives.**  After this notebook you can
#
# * estimate a co-metric $g^{ab}$ from $4\beta\,\Gamma(x^a, x^b)$ of a Gauss-kernel walk, and say why the kernel's
#   self-loop must be removed first;
# * compute the exact Bakry–Émery curvature $K_\infty$ of a graph, check it against published values, and explain
#   why it does not separate a sampled sphere from a torus;
# * compute the stationary current, $\Omega_\pi$ and the cycle affinities of a non-reversible head, and show that
#   the exact part of its link is a Doob transform while the coexact part carries all the circulation;
# * split a Dirichlet form into local and jump parts over a radius, and predict the jump fraction of the Gauss
#   kernel from a Gaussian tail.
#
# **Prerequisites.**  Notebook 00 (§3 the small-β softmax, §4 the Dirichlet form of a Gauss kernel), notebook 02
# (§5: row-stochastic $\mathsf P$, the stationary law π, reversibility and detailed balance
# $\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}$ — the finite Markov chains the syllabus assumes) and notebook 03 (Heat on a
# Swiss roll: Gauss kernels on sampled points, kNN graphs, local bandwidths).  Maths: gradients and metrics in a
# chart (the pull-back $F^\top F$), eigenvalues of symmetric matrices, the Sherman–Morrison formula, graphs and
# cycle bases, the incomplete Gamma function; Ricci curvature and Bochner's formula are quoted, not derived.  The
# Γ-calculus, the Bakry–Émery curvature, the π-adjoint and the current, the Doob transform, cycle affinities, the
# Hodge split of a link and the Beurling–Deny split are introduced here.
#
# **Time.**  Two sessions of about 75 minutes: sections 1–2 (Γ and curvature) in the first, sections 3–4
# (circulation and Beurling–Deny) in the second; the code runs in about 15 s.
#
# **Conventions.**  $\mathsf P$ is row-stochastic and acts on functions from the left; $\mathsf L = I - \mathsf P$
# is the positive generator and $\mathcal L = \mathsf P - I$ the negative one.  The Γ-calculus
# functions read a matrix of **jump rates** $W$ (off-diagonal entries; the diagonal is ignored), with
# $(\mathcal Lf)_i = \sum_{j\ne i}W_{ij}(f_j - f_i)$: passing $\mathsf P$ gives $\mathcal L = \mathsf P - I$,
# passing an adjacency matrix the unnormalised graph Laplacian.  Tags [SEED] (printed in the paper's available
# text), [DERIVED] (worked out and checked) and [RECON] (a reconstruction) are those of the mathematical reference.

# %%
import os

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import scipy.sparse
import scipy.special
from scipy.spatial import cKDTree

from workbench.markov import (
    FlatTorus,
    MarkovOperator,
    Sphere,
    bakry_emery_curvature,
    beurling_deny_scan,
    carre_du_champ,
    circulation,
    cycle_affinities,
    cycle_basis,
    doob_transform,
    gamma2,
    gauge_gradients,
    gauss_kernel_sparse,
    hatano_nelson,
    hodge_split,
    kolmogorov_residual,
    squared_distances,
    stationary_current,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(4)


def random_walk(K):
    """The Markov operator of a symmetric kernel with its diagonal removed (no self-loops)."""
    K = scipy.sparse.csr_array(K)
    return MarkovOperator.from_kernel((K - scipy.sparse.diags_array(K.diagonal())).tocsr()).P


# %% [markdown]
# ## 1. Γ recovers the metric
#
# For the Gauss kernel $\mathsf K_{ij} = e^{-\beta\lVert y_i - y_j\rVert^2}$ (β the inverse bandwidth, no
# factor 2 or 4), a step of $\mathsf P = \operatorname{diag}(\mathsf K\mathbf 1)^{-1}\mathsf K$ has
# covariance $I/(2\beta)$, so
#
# $$4\beta\,\Gamma(f, g) = 4\beta\cdot\tfrac12\sum_j \mathsf P_{ij}(f_j - f_i)(g_j - g_i) \;\to\; \langle\nabla f, \nabla g\rangle$$
#
# (the `carre_du_champ` docstring; it is the limit $4\hbar\beta\,\Gamma \to \hbar\,\mathcal G^{ab}\partial_af\partial_bg$ of
# {cite:t}`candanedo2026attention`, §5, at $\hbar = 1$ — [mathematical reference §A.5](reference.md#reference-a5)).  Applied to coordinate functions $f = x^a$, $g = x^b$ of *another* chart, it returns
# the co-metric $g^{ab}$ in that chart — without ever differentiating.
#
# **A linear map.**  Sample $x$ uniformly in a square, embed $y = Fx$ and build the kernel on $y$ only.
# The metric pulled back to the $x$ chart is the right Cauchy–Green tensor $F^\top F$, so the co-metric
# is $(F^\top F)^{-1} = JJ^\top$ with $J = F^{-1}$ the Jacobian of the chart map $y \mapsto x$.  Two
# details of the estimator: the kernel is truncated at radius $\sqrt{10/\beta}$, which drops a fraction
# $\approx 11e^{-10} \approx 5\cdot10^{-4}$ of the second moment, and its unit diagonal is removed — a
# self-loop of weight $1/\deg_i$ would shrink $\Gamma$ by that fraction.

# %%
n_flat = 6000 if SMALL else 30000
beta_flat = 150.0 if SMALL else 600.0
x = rng.uniform(-1, 1, (n_flat, 2))
F = np.array([[2.0, 0.6], [0.0, 0.7]])
y = x @ F.T
P_flat = random_walk(gauss_kernel_sparse(y, beta_flat, radius=np.sqrt(10 / beta_flat)))
cometric = np.array([[4 * beta_flat * carre_du_champ(P_flat, x[:, a], x[:, b]) for b in range(2)] for a in range(2)])
inside = np.all(np.abs(x) < 0.7, axis=1)  # one kernel reach away from the boundary
estimate = cometric[:, :, inside].mean(axis=-1)
jacobian = np.linalg.inv(F)  # J, the Jacobian of y ↦ x
print("4β Γ(xᵃ, xᵇ), mean over the interior:\n", estimate.round(4))
print("J Jᵀ = (Fᵀ F)⁻¹:\n", (jacobian @ jacobian.T).round(4))
relative = np.abs(estimate - jacobian @ jacobian.T).max() / np.abs(jacobian @ jacobian.T).max()
print(f"max relative deviation {relative:.1e}")
assert relative < 0.02

# %% [markdown]
# The pointwise estimates scatter (each is a local average over a few dozen neighbours); the mean is
# within 2 %.  As ellipses $\{G^{1/2}u : \lVert u\rVert = 1\}$ in the $x$ chart:

# %%
u = np.linspace(0, 2 * np.pi, 100)
circle = np.stack([np.cos(u), np.sin(u)])
fig, ax = plt.subplots(figsize=(4.5, 4.3), layout="constrained")
for k in rng.choice(np.flatnonzero(inside), 40, replace=False):
    w, v = np.linalg.eigh(cometric[:, :, k])
    ellipse = v @ (np.sqrt(np.clip(w, 0, None))[:, None] * circle) * 0.05
    ax.plot(x[k, 0] + ellipse[0], x[k, 1] + ellipse[1], color="C0", lw=0.6)
w, v = np.linalg.eigh(jacobian @ jacobian.T)
for centre in ((-0.9, 0.9), (0.9, -0.9)):
    ellipse = v @ (np.sqrt(w)[:, None] * circle) * 0.05
    ax.plot(centre[0] + ellipse[0], centre[1] + ellipse[1], "k", lw=2)
ax.set_aspect("equal")
ax.set_xlabel(r"$x^1$ (dimensionless)")
ax.set_ylabel(r"$x^2$ (dimensionless)")
ax.set_title("$4\\beta\\,\\Gamma(x^a, x^b)$ at sample points (blue)\nvs the exact co-metric $JJ^\\top$ (black)")
plt.show()

# %% [markdown]
# **A curved surface.**  The saddle $z = \phi(x) = c\,(x_1^2 - x_2^2)$ over the same square, $c = 0.8$.
# Its metric in the chart $x$ is $g = I + \nabla\phi\nabla\phi^\top$, and the co-metric
# (Sherman–Morrison) is
#
# $$g^{ab} = \delta^{ab} - \frac{\partial_a\phi\,\partial_b\phi}{1 + \lVert\nabla\phi\rVert^2},$$
#
# which varies from the identity at the centre to strongly anisotropic at the corners.  The samples
# are uniform in $x$, not in area; that changes the drift of $\mathcal L$ but not $\Gamma$ at leading order.

# %%
c = 0.8
surface = np.column_stack([x, c * (x[:, 0] ** 2 - x[:, 1] ** 2)])
beta_surf = 400.0 if SMALL else 1600.0
P_surf = random_walk(gauss_kernel_sparse(surface, beta_surf, radius=np.sqrt(10 / beta_surf)))
grad = np.stack([2 * c * x[:, 0], -2 * c * x[:, 1]])
exact = np.eye(2)[:, :, None] - grad[:, None, :] * grad[None, :, :] / (1 + (grad**2).sum(axis=0))
cometric = np.array([[4 * beta_surf * carre_du_champ(P_surf, x[:, a], x[:, b]) for b in range(2)] for a in range(2)])
inside = np.all(np.abs(x) < 0.8, axis=1)

fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
for ax, (a, b) in zip(axes, ((0, 0), (0, 1), (1, 1)), strict=True):
    truth, guess = exact[a, b, inside], cometric[a, b, inside]
    ax.plot(truth, guess, ".", ms=1, color="lightgrey")
    edges = np.quantile(truth, np.linspace(0, 1, 11))  # ten bins of equal count
    which = np.digitize(truth, edges[1:-1])
    means = np.array([[truth[which == m].mean(), guess[which == m].mean()] for m in range(10)])
    ax.plot(*means.T, "o", color="C3", label="binned mean")
    ax.plot(edges, edges, "k--", lw=1, label="estimate = exact")
    ax.set_xlabel(rf"exact $g^{{{a + 1}{b + 1}}}$")
    ax.set_ylabel(rf"$4\beta\,\Gamma(x^{a + 1}, x^{b + 1})$")
    print(f"g^{a + 1}{b + 1}: max |binned mean − exact| = {np.abs(means[:, 1] - means[:, 0]).max():.3f}")
    assert np.abs(means[:, 1] - means[:, 0]).max() < 0.06
axes[0].legend(fontsize=8)
fig.suptitle(r"co-metric of the saddle $z = c\,(x_1^2 - x_2^2)$ from $\Gamma$ alone")
plt.tight_layout()
plt.show()

# %% [markdown]
# The binned means follow the diagonal to within 0.06 (the $O(1/\beta)$ bias of a curved surface plus
# sampling noise); the grey cloud is the pointwise noise of a local average over about
# $2\pi\rho/\beta \approx 24$ effective neighbours at the default scale.  Here $\rho = 6000/4 = 1500$ is the number of
# samples per unit area of the chart (6000 points in the square $[-1, 1]^2$ of area 4; near its centre the saddle
# is nearly flat), and for a Gauss kernel on a uniform sample of density ρ in the plane the effective number of neighbours
# $(\sum_j\mathsf K_{ij})^2/\sum_j\mathsf K_{ij}^2$ is $(\rho\pi/\beta)^2/(\rho\pi/(2\beta)) = 2\pi\rho/\beta$.
#
# ## 2. Γ₂ and curvature
#
# $\Gamma_2(f) = \tfrac12[\mathcal L\Gamma(f,f) - 2\Gamma(f, \mathcal Lf)]$, and Bochner's formula
# $\Gamma_2(f) = \lVert\operatorname{Hess}f\rVert^2 + \operatorname{Ric}(\nabla f, \nabla f)$ for the
# Laplacian suggests the definition: a vertex $x$ has **Bakry–Émery curvature** $\ge K$ if
# $\Gamma_2(f)(x) \ge K\,\Gamma(f)(x)$ for every $f$.  `bakry_emery_curvature` computes the largest such
# $K = K_\infty(x)$ exactly, as the smallest eigenvalue of a local matrix on the two-ball.
#
# Published values ({cite:t}`klartag2016discrete`; {cite:t}`cushing2020bakry`): the complete graph
# $K_m$ has $1 + m/2$ for the unnormalised Laplacian (rates = adjacency) and $(m+2)/(2(m-1))$ for the
# normalised one (rates = $D^{-1}A$); cycles of length ≥ 5 are flat; the hypercube $Q_d$ has $2$ and
# $2/d$.  For the unnormalised Laplacian the curvature of a Cartesian product is the minimum of the
# factors' curvatures — $Q_d = K_2^{\,d}$ has $1 + 2/2 = 2$ — which we also check on two more products.

# %%
graphs = [(f"K_{m}", nx.complete_graph(m), 1 + m / 2, (m + 2) / (2 * (m - 1))) for m in (3, 4, 5, 8)]
graphs += [(f"C_{m}", nx.cycle_graph(m), 0.0, 0.0) for m in (5, 6, 9)]
graphs += [(f"Q_{d}", nx.hypercube_graph(d), 2.0, 2 / d) for d in (2, 3, 4, 5)]
graphs += [("C_6 × C_7", nx.cartesian_product(nx.cycle_graph(6), nx.cycle_graph(7)), 0.0, None)]
graphs += [("K_3 × K_4", nx.cartesian_product(nx.complete_graph(3), nx.complete_graph(4)), min(2.5, 3.0), None)]
print(f"{'graph':10s} {'unnormalised':>13s} {'published':>10s} {'normalised':>11s} {'published':>10s}")
worst = 0.0
for name, graph, plain, normalised in graphs:
    A = nx.to_numpy_array(graph)
    k_plain, k_norm = bakry_emery_curvature(A), bakry_emery_curvature(A / A.sum(axis=1, keepdims=True))
    assert np.ptp(k_plain) < 1e-12  # vertex-transitive: one value per graph
    worst = max(worst, abs(k_plain[0] - plain))
    shown = "" if normalised is None else f"{k_norm[0]:11.6f} {normalised:10.6f}"
    if normalised is not None:
        worst = max(worst, abs(k_norm[0] - normalised))
    print(f"{name:10s} {k_plain[0]:13.6f} {plain:10.6f} {shown}")
print(f"max |computed − published| = {worst:.1e}")
assert worst < 1e-12

# %% [markdown]
# The definition, checked directly: on $Q_3$ (unnormalised, $K_\infty = 2$) the ratio
# $\Gamma_2(f)/\Gamma(f)$ at a vertex, over thousands of random functions, never drops below 2.

# %%
A_cube = nx.to_numpy_array(nx.hypercube_graph(3))
f_random = rng.standard_normal((8, 5000))
ratio = gamma2(A_cube, f_random)[0] / carre_du_champ(A_cube, f_random)[0]
print(f"min over 5000 random f of Γ₂(f)/Γ(f) at vertex 0: {ratio.min():.4f} (K_∞ = 2)")
assert ratio.min() >= 2 - 1e-12

# %% [markdown]
# **Sampled surfaces.**  Does $K_\infty$ on a kNN graph see the curvature of the surface it samples?
# We take the same number of points per unit area on a unit sphere (Ric = 1), a flat torus of the
# same area (Ric = 0) and a saddle $z = 0.3(x_1^2 - x_2^2)$ (Gauss curvature $-0.36$ at its centre),
# the same $k$, and a kernel whose length is a fixed fraction of the kNN radius.  In the continuum,
# $\Gamma \approx \lVert\nabla f\rVert^2/(4\beta)$ and
# $\Gamma_2 \approx (\lVert\operatorname{Hess} f\rVert^2 + \operatorname{Ric}(\nabla f, \nabla f))/(4\beta)^2$, so
# curvature would enter $K_\infty$ only at the size $\operatorname{Ric}/(4\beta)$.

# %%
n_surf, k_surf = (3000, 15) if SMALL else (12000, 15)
side = np.sqrt(4 * np.pi)  # flat torus with the sphere's area 4π
grid = rng.uniform(-side / 2, side / 2, (n_surf, 2))
clouds = {
    "sphere (Ric = 1)": Sphere(2).sample(n_surf, seed=1),
    "flat torus (Ric = 0)": FlatTorus(2, side=side).sample(n_surf, seed=1),
    "saddle (Ric < 0)": np.column_stack([grid, 0.3 * (grid[:, 0] ** 2 - grid[:, 1] ** 2)]),
}
curvature, betas, kernels = {}, {}, {}
for name, cloud in clouds.items():
    reach = np.median(cKDTree(cloud).query(cloud, k=k_surf + 1)[0][:, -1])
    betas[name] = 3 / reach**2  # the kernel decays to e^{-3} at the median k-th neighbour
    kernels[name] = gauss_kernel_sparse(cloud, betas[name], k=k_surf)
    curvature[name] = bakry_emery_curvature(random_walk(kernels[name]))
    if name.startswith("saddle"):  # the saddle has a boundary: keep vertices two kernel reaches inside
        curvature[name] = curvature[name][np.all(np.abs(grid) < side / 2 - 2 * reach, axis=1)]
    quartiles = np.percentile(curvature[name], [25, 50, 75])
    print(f"{name:22s} K_∞ quartiles {np.round(quartiles, 3)}; Ricci scale 1/(4β) = {0.25 / betas[name]:.4f}")

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
for name, values in curvature.items():
    ax.hist(values, bins=60, range=(-1, 0.5), histtype="step", density=True, label=name)
ax.axvline(1 / (4 * betas["sphere (Ric = 1)"]), color="k", ls="--", lw=1, label=r"sphere, $\mathrm{Ric}/(4\beta)$")
ax.set_xlabel(r"Bakry–Émery curvature $K_\infty(x)$ of the kNN random walk")
ax.set_ylabel("density of vertices")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# Honestly: the three histograms are the same (the saddle's boundary vertices are left out).
# $K_\infty(x)$ is an infimum over *all* functions on the two-ball, and on an irregular graph the
# minimiser is a rough function that oscillates from neighbour to neighbour; the value reflects the
# combinatorics of the sample (mostly negative, of the order of the jump rates), while the Ricci term
# is two orders of magnitude smaller.
#
# Restricting to a smooth test function does not rescue it at this size.  For $f = x_3$ on the unit
# sphere, Bochner gives $\Gamma_2/\Gamma = (1 + f^2)/(4\beta(1 - f^2))$ (with $\operatorname{Hess}f = -f\,g$
# and $\operatorname{Ric} = g$).  The sampled ratio is positive but far larger: it is of the size
# $1/n_{\mathrm{eff}}$, with $n_{\mathrm{eff}} = (\sum_j\mathsf K_{ij})^2/\sum_j\mathsf K_{ij}^2$ the effective
# number of neighbours — a sampling-noise bias of $\Gamma_2$.  It does not shrink as $n$ grows at fixed
# $k$, only as $k$ grows, and it has to fall well below $\operatorname{Ric}/(4\beta)$ before a sphere
# could be told from a torus this way.

# %%
print(f"{'n':>6s} {'k':>3s}  median Γ₂/Γ  Bochner  1/n_eff")
for size, neighbours in ((n_surf, k_surf), (4 * n_surf, k_surf), (n_surf, 3 * k_surf)):
    sphere = Sphere(2).sample(size, seed=2)
    reach = np.median(cKDTree(sphere).query(sphere, k=neighbours + 1)[0][:, -1])
    beta_sphere = 3 / reach**2
    K_sphere = gauss_kernel_sparse(sphere, beta_sphere, k=neighbours)
    K_sphere = K_sphere - scipy.sparse.diags_array(K_sphere.diagonal())
    walk = random_walk(K_sphere)
    smooth = sphere[:, 2]  # the height, restricted to the sphere
    ratio = gamma2(walk, smooth) / carre_du_champ(walk, smooth)
    bochner = (1 + smooth**2) / (4 * beta_sphere * (1 - smooth**2))
    n_eff = np.asarray(K_sphere.sum(axis=1)).ravel() ** 2 / np.asarray(K_sphere.multiply(K_sphere).sum(axis=1)).ravel()
    equator = np.abs(smooth) < 0.5
    medians = [np.median(values[equator]) for values in (ratio, bochner, 1 / n_eff)]
    print(f"{size:6d} {neighbours:3d}  {medians[0]:11.3f}  {medians[1]:7.4f}  {medians[2]:7.3f}")
    assert 0.5 < np.median(ratio[equator] * n_eff[equator]) < 2 and medians[0] > 5 * medians[1]

# %% [markdown]
# Exact discrete curvature is meaningful for graphs with structure (the table above); as a pointwise
# probe of the Ricci curvature of sampled manifolds it needs many more neighbours per point than
# this.
#
# ## 3. Ω_π: the circulation of a non-reversible chain
#
# With the $\pi$-adjoint $\mathsf P^* = \operatorname{diag}(\pi)^{-1}\mathsf P^\top\operatorname{diag}(\pi)$,
# the flux $\mathsf A = \operatorname{diag}(\pi)\mathsf P$ and the current $J = \mathsf A - \mathsf A^\top$,
#
# $$\Omega_\pi(f, g) = \langle f, \tfrac12(\mathsf P - \mathsf P^*)g\rangle_\pi = \tfrac12\sum_{ij}J_{ij}f_ig_j,$$
#
# antisymmetric, and zero iff detailed balance holds.  **A biased ring** first, where everything has
# a closed form: $n$ states, a step forward with probability $p$ and back with $q = 1 - p$.  Then
# $\pi$ is uniform, every edge carries the current $(p - q)/n$, the residual is
# $\varepsilon_{\mathrm{rev}} = \lVert J\rVert_F/\lVert\mathsf A\rVert_F = \sqrt2|p - q|/\sqrt{p^2 + q^2}$,
# the affinity of the ring is $n\log(p/q)$, and
# $\Omega_\pi(\cos\tfrac{2\pi i}{n}, \sin\tfrac{2\pi i}{n}) = \tfrac12(p - q)\sin\tfrac{2\pi}{n}$.

# %%
n_ring, p = 7, 0.7
q = 1 - p
P_ring = p * np.roll(np.eye(n_ring), 1, axis=1) + q * np.roll(np.eye(n_ring), -1, axis=1)
ring = MarkovOperator(P_ring)
J_ring = stationary_current(P_ring, ring.stationary)
angle = 2 * np.pi * np.arange(n_ring) / n_ring
checks = {
    "π − uniform": np.abs(ring.stationary - 1 / n_ring).max(),
    "J_(i,i+1) − (p − q)/n": np.abs(np.diag(np.roll(J_ring, -1, axis=1)) - (p - q) / n_ring).max(),
    "ε_rev − √2|p−q|/√(p²+q²)": abs(ring.reversibility_residual - np.sqrt(2) * abs(p - q) / np.hypot(p, q)),
    "affinity − n log(p/q)": abs(abs(cycle_affinities(P_ring)[0]) - n_ring * np.log(p / q)),
    "Ω_π(cos, sin) − (p−q) sin(2π/n)/2": abs(
        circulation(P_ring, np.cos(angle), np.sin(angle), ring.stationary) - (p - q) * np.sin(2 * np.pi / n_ring) / 2
    ),
}
for name, residual in checks.items():
    print(f"{name:36s} residual {residual:.1e}")
assert max(checks.values()) < 1e-13

# %% [markdown]
# **An attention-like head.**  $\mathsf P = \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))$
# with a random symmetric bond $\mathcal S$ and a random antisymmetric link $\mathcal A$ on $N$ tokens
# ({cite:t}`candanedo2026attention`, §7; [mathematical reference §A.7](reference.md#reference-a7)).  Its stationary law comes from a linear solve; we check that $J$ has
# zero row sums (stationarity), that $\Omega_\pi$ is antisymmetric and equals
# $\langle f, \tfrac12(\mathsf P - \mathsf P^*)g\rangle_\pi$.

# %%
N, beta = 8, 1.5
B = rng.standard_normal((N, N))
S = (B + B.T) / 2
C = rng.standard_normal((N, N))
A_link = (C - C.T) / 2


def head(bond, link):
    """rownorm exp(β(𝒮 + 𝒜)): the Markov operator of an attention head with bond 𝒮 and link 𝒜."""
    W = np.exp(beta * (bond + link))
    return W / W.sum(axis=1, keepdims=True)


P = head(S, A_link)
op = MarkovOperator(P)
pi = op.stationary
J = stationary_current(P, pi)
f, g = rng.standard_normal((2, N))
omega = circulation(P, f, g, pi)
print(f"ε_rev = {op.reversibility_residual:.3f}   max |J 1| = {np.abs(J.sum(axis=1)).max():.1e}")
print(f"Ω_π(f,g) = {omega:+.6f},  Ω_π(g,f) = {circulation(P, g, f, pi):+.6f}")
via_adjoint = np.sum(pi * f * (0.5 * (P - op.adjoint) @ g))
print(f"⟨f, ½(P − P*)g⟩_π = {via_adjoint:+.6f}   ½ fᵀJg = {0.5 * f @ J @ g:+.6f}")
assert abs(omega + circulation(P, g, f, pi)) < 1e-14 and abs(omega - via_adjoint) < 1e-14
assert np.abs(J.sum(axis=1)).max() < 1e-14

# %% [markdown]
# **Cycle affinities are twice the holonomy of the link.**  Around a cycle the row partition functions
# telescope and the bond cancels: $\mathfrak A(\gamma) = \sum\log(\mathsf P_{i_mi_{m+1}}/\mathsf P_{i_{m+1}i_m})
# = 2\beta\sum_m\mathcal A_{i_mi_{m+1}}$ — the Schnakenberg affinity {cite:p}`schnakenberg1976network`, which vanishes on
# every cycle exactly when the chain is reversible (Kolmogorov's criterion {cite:p}`kolmogorov1936theorie`).  The support is the complete graph, whose fundamental cycle basis
# has $(N-1)(N-2)/2$ cycles.

# %%
cycles = cycle_basis(P)
affinities = cycle_affinities(P, cycles)
holonomy = np.array([sum(A_link[cyc[m], cyc[m + 1]] for m in range(len(cyc) - 1)) for cyc in cycles])
gap = np.abs(affinities - 2 * beta * holonomy).max()
print(f"{len(cycles)} cycles (expected {(N - 1) * (N - 2) // 2}); max |𝔄(γ) − 2β·hol(γ)| = {gap:.1e}")
assert len(cycles) == (N - 1) * (N - 2) // 2 and gap < 1e-12

# %% [markdown]
# **The Hodge split of the link.**  $\mathcal A = (\varphi_i - \varphi_j) + \mathcal A^\perp$, with $\varphi$
# the least-squares potential {cite:p}`lim2020hodge` ($\varphi_i = \tfrac1N\sum_j\mathcal A_{ij}$ on the complete graph) and
# $\mathcal A^\perp$ divergence-free.  The **exact** part is a Doob transform: with only
# $\varphi_i - \varphi_j$ as link, the row factor $e^{\beta\varphi_i}$ cancels in the normalisation and
# $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + d\varphi)) = \mathsf P_h$ for $\mathsf K = \exp_\odot(\beta\mathcal S)$,
# $h = e^{-\beta\varphi}$ — reversible.  Here $\mathsf P_h = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K\operatorname{diag}(h)$ is
# the **Doob transform** of $\mathsf K$ by $h > 0$ (reweight each destination $j$ by $h_j$, then normalise the rows;
# notebook 06b studies it): for symmetric $\mathsf K$ the flux $\propto h_i\mathsf K_{ij}h_j$ is symmetric, so $\mathsf P_h$ is
# in detailed balance.  The **coexact** part carries every cycle affinity.

# %%
phi, exact_link, coexact_link = hodge_split(A_link)
P_exact, P_coexact = head(S, exact_link), head(S, coexact_link)
doob = doob_transform(np.exp(beta * S), np.exp(-beta * phi))
print(f"φ − row means of 𝒜:                      {np.abs(phi - A_link.mean(axis=1)).max():.1e}")
print(f"max |𝒜^⊥ 1| (divergence-free):            {np.abs(coexact_link.sum(axis=1)).max():.1e}")
print(f"exact-link head − Doob transform P_h:    {np.abs(P_exact - doob.P).max():.1e}")
eps_exact = MarkovOperator(P_exact).reversibility_residual
print(f"exact-link head: ε_rev = {eps_exact:.1e}, Kolmogorov residual = {kolmogorov_residual(P_exact):.1e}")
print(f"coexact head: max |𝔄 − 𝔄(full head)| =    {np.abs(cycle_affinities(P_coexact, cycles) - affinities).max():.1e}")
assert np.abs(P_exact - doob.P).max() < 1e-14 and kolmogorov_residual(P_exact) < 1e-13
assert np.abs(cycle_affinities(P_coexact, cycles) - affinities).max() < 1e-12

# %% [markdown]
# Scaling each part of the link by $\lambda$ shows the same thing as a curve: irreversibility grows
# with the coexact part and not at all with the exact one.

# %%
scales = np.linspace(0, 2, 21)
fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
links = (
    (r"full link $\mathcal{A}$", A_link),
    (r"exact part $d\varphi$", exact_link),
    (r"coexact part $\mathcal{A}^\perp$", coexact_link),
)
for name, link in links:
    residuals = [MarkovOperator(head(S, lam * link)).reversibility_residual for lam in scales]
    ax.plot(scales, residuals, "o-", ms=3, label=name)
ax.set_xlabel(r"link scale $\lambda$  (P = rownorm exp($\beta(\mathcal{S} + \lambda\cdot$link)))")
ax.set_ylabel(r"$\varepsilon_{\mathrm{rev}} = \Vert\mathsf{A} - \mathsf{A}^\top\Vert_F\,/\,\Vert\mathsf{A}\Vert_F$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# **Hatano–Nelson.**  The flux factorises as $\mathsf A = \bar{\mathsf A}\odot e^\theta$ with the symmetric
# bond flux $\bar{\mathsf A}_{ij} = \sqrt{\mathsf A_{ij}\mathsf A_{ji}}$ and the antisymmetric imaginary gauge
# field $\theta_{ij} = \tfrac12\log(\mathsf A_{ij}/\mathsf A_{ji})$ ([RECON], after {cite:t}`hatano1996localization`); then $J = 2\bar{\mathsf A}\sinh\theta$,
# and $\theta = \beta\mathcal A + \tfrac12(u_i - u_j)$ with $u = \log(\pi/Z)$, $Z_i = \sum_j e^{\beta(\mathcal S + \mathcal A)_{ij}}$:
# the link plus a gauge term, so its cycle sums are half the affinities.

# %%
A_bar, theta = hatano_nelson(P, pi)
Z = np.exp(beta * (S + A_link)).sum(axis=1)
gauge = np.log(pi / Z)
cycle_sums = np.array([sum(theta[cyc[m], cyc[m + 1]] for m in range(len(cyc) - 1)) for cyc in cycles])
checks = {
    "Ā ⊙ e^θ − diag(π)P": np.abs(A_bar * np.exp(theta) - pi[:, None] * P).max(),
    "2 Ā sinh θ − J": np.abs(2 * A_bar * np.sinh(theta) - J).max(),
    "θ − (β𝒜 + (u_i − u_j)/2)": np.abs(theta - (beta * A_link + (gauge[:, None] - gauge[None, :]) / 2)).max(),
    "Σ_γ θ − 𝔄(γ)/2": np.abs(cycle_sums - affinities / 2).max(),
}
for name, residual in checks.items():
    print(f"{name:28s} residual {residual:.1e}")
assert max(checks.values()) < 1e-12

# %% [markdown]
# **The $\mathsf D_K, \mathsf D_Q$ identity.**  The gauge gradients of {cite:t}`candanedo2026attention` (§7; the
# definitions are [SEED], the $\bar{\mathsf A}$ and θ inside them the [RECON] above)
# $(\mathsf D_Kf)_{ij} = \bar{\mathsf A}_{ij}^{1/2}(e^{-\theta_{ij}/2}f_i - e^{\theta_{ij}/2}f_j)$ and
# $(\mathsf D_Qg)_{ij} = \bar{\mathsf A}_{ij}^{1/2}(e^{\theta_{ij}/2}g_i - e^{-\theta_{ij}/2}g_j)$ satisfy
#
# $$\tfrac12\mathsf D_Q^\top\mathsf D_K = \operatorname{diag}(\bar{\mathsf A}\mathbf 1) - \mathsf A
#   = \operatorname{diag}(\pi)\mathsf L + \operatorname{diag}(V), \qquad V_i = \sum_j\bar{\mathsf A}_{ij} - \pi_i \le 0,$$
#
# (AM–GM), with $V = 0$ exactly when $\mathsf P$ is reversible — we compare the head with its
# exact-link (Doob) version.

# %%
potentials = {}
for name, matrix in (("head", P), ("exact-link head", P_exact)):
    law = MarkovOperator(matrix).stationary
    D_K, D_Q, edges = gauge_gradients(matrix, law)
    lhs = 0.5 * (D_Q.T @ D_K).toarray()
    bond, _ = hatano_nelson(matrix, law)
    V = potentials[name] = bond.sum(axis=1) - law
    rhs = np.diag(law) @ (np.eye(N) - matrix) + np.diag(V)
    gap = np.abs(lhs - rhs).max()
    print(f"{name:16s} max |½D_QᵀD_K − diag(π)L − diag(V)| = {gap:.1e},  V in [{V.min():.1e}, {V.max():.1e}]")
    assert gap < 1e-14 and V.max() <= 1e-14
assert potentials["head"].max() < 0 and np.abs(potentials["exact-link head"]).max() < 1e-14

# %% [markdown]
# ## 4. Beurling–Deny: local and jump parts of ℰ
#
# For a symmetric kernel $\mathcal E(f,f) = \tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2$, and a radius $r$
# splits the bonds into local ($d_{ij}\le r$, the diffusion part) and remote ($d_{ij} > r$, the jump
# part) — the finite analogue of the Beurling–Deny decomposition {cite:p}`fukushima2011dirichlet` [RECON: the paper's
# finite formulas are not available; [mathematical reference §A.6](reference.md#reference-a6)].  For the Gauss kernel on a dense sample of an
# $m$-dimensional manifold and smooth $f$, a bond of length $\rho$ carries energy
# $\propto e^{-\beta\rho^2}\rho^2\rho^{m-1}$, so at $r = c/\sqrt\beta$ the jump fraction tends to the
# Gaussian tail $\Gamma(\tfrac m2 + 1, c^2)/\Gamma(\tfrac m2 + 1)$ — the Gauss kernel has **no jump part**
# in the limit.  A heavy-tailed kernel, here $(1 + \beta d^2)^{-2}$ with energy $\propto 1/\rho$ per unit
# length in 2-D, keeps a large jump fraction at every radius.

# %%
n_bd = 1500 if SMALL else 4000
beta_bd = 400.0
points = rng.uniform(0, 1, (n_bd, 2))
d2 = squared_distances(points)
distances = np.sqrt(d2)
f_bd = np.sin(2 * np.pi * points[:, 0]) * np.cos(np.pi * points[:, 1])
c_grid = np.linspace(0, 4, 41)
radii = c_grid / np.sqrt(beta_bd)
gauss = beurling_deny_scan(np.exp(-beta_bd * d2), distances, radii, f_bd)
heavy = beurling_deny_scan((1 + beta_bd * d2) ** -2.0, distances, radii, f_bd)
for name, parts in (("Gauss", gauss), ("heavy tail", heavy)):
    gap = np.abs(parts.local + parts.jump + parts.killing - parts.total).max() / parts.total[0]
    print(f"{name:10s} max |local + jump + killing − ℰ| / ℰ = {gap:.1e}")
    assert gap < 1e-12
tail = scipy.special.gammaincc(2, c_grid**2)  # m = 2: Γ(2, c²)/Γ(2)
deviation = np.abs(gauss.jump / gauss.total - tail).max()
print(f"Gauss: max |jump fraction − Gaussian tail| = {deviation:.3f}")
print(f"heavy tail: jump fraction {heavy.jump[-1] / heavy.total[-1]:.0%} at c = 4")
assert deviation < 0.03

fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
ax.plot(c_grid, gauss.jump / gauss.total, "o", ms=3, label="Gauss kernel: jump / ℰ")
ax.plot(c_grid, tail, "k--", lw=1, label=r"Gaussian tail $\Gamma(2, c^2)$")
ax.plot(c_grid, heavy.jump / heavy.total, "s", ms=3, label="(1 + βd²)⁻²: jump / ℰ")
ax.set_xlabel(r"radius in kernel units, $c = r\sqrt{\beta}$")
ax.set_ylabel(r"jump fraction of $\mathcal{E}(f, f)$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.** Why must the kernel's unit diagonal be removed before $4\beta\,\Gamma(x^a, x^b)$ is read as the co-metric?
#
# (a) With the diagonal, Γ can be negative.
# (b) The self-loop has weight $1/\deg_i$ in $\mathsf P$ and contributes the increment $f_i - f_i = 0$, so it takes that
# fraction of probability away from the real neighbours and shrinks Γ by it.
# (c) With the diagonal, $\mathsf P$ is no longer row-stochastic.
# (d) The diagonal changes the stationary law but not Γ.
#
# :::{dropdown} Answer
# (b).  $\Gamma(f, f)_i = \tfrac12\sum_j\mathsf P_{ij}(f_j - f_i)^2$ is an average over one step, and a step that stays put adds
# nothing to it while still counting in the normalisation.  Γ is a sum of squares with nonnegative weights, so
# never negative (a); $\mathsf P$ stays stochastic (c); and the self-loop does change Γ, which is the point (d).
# :::
#
# **Check 2.** On kNN graphs of a sampled sphere and of a flat torus, the Bakry–Émery curvatures $K_\infty(x)$ have the
# same distribution.  Why?
#
# (a) The sphere and the torus have the same Ricci curvature.
# (b) $K_\infty(x)$ is an infimum over all functions on the two-ball; its minimiser oscillates from neighbour to
# neighbour, and the value reflects the sample's combinatorics, of the size of the jump rates, while the Ricci
# term enters only at the size $\mathrm{Ric}/(4\beta)$, two orders of magnitude smaller.
# (c) The kernel is too wide to see the surface.
# (d) `bakry_emery_curvature` is only exact on vertex-transitive graphs.
#
# :::{dropdown} Answer
# (b).  Bochner's formula connects $\Gamma_2$ to Ricci curvature for *smooth* functions; the discrete infimum is
# dominated by rough ones, and even a smooth $f$ sees a $1/n_{\mathrm{eff}}$ sampling bias far above $\mathrm{Ric}/(4\beta)$.
# The surfaces differ in curvature (1 against 0, not (a)); the kernel is local, a fixed fraction of the kNN radius
# (c); and the computation is exact on every graph — the table of published values only uses transitive ones (d).
# :::
#
# **Check 3.** For a *reversible* chain, the circulation $\Omega_\pi(f, g) = \langle f, \tfrac12(\mathsf P - \mathsf P^*)g\rangle_\pi$ is
#
# (a) the Dirichlet form $\mathcal E(f, g)$;
# (b) zero for all $f, g$;
# (c) antisymmetric and nonzero for some $f, g$;
# (d) equal to $\langle f, \mathsf Pg\rangle_\pi$.
#
# :::{dropdown} Answer
# (b).  Detailed balance $\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}$ says exactly that $\mathsf P$ is self-adjoint in
# $\langle\cdot,\cdot\rangle_\pi$, $\mathsf P^* = \mathsf P$, so the current $J$ and with it $\Omega_\pi$ vanish.  The Dirichlet form (a)
# is built from the symmetric part $I - \tfrac12(\mathsf P + \mathsf P^*)$; (c) describes a non-reversible chain; and (d)
# is the full bilinear form, not its antisymmetric part.
# :::
#
# **Check 4.** A head $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))$ gets an extra gradient link
# $\varphi_i - \varphi_j$ added to $\mathcal A$.  What changes?
#
# (a) Nothing at all: the row normalisation removes it.
# (b) $\mathsf P$ changes by a Doob transform, but every cycle affinity stays the same, so the irreversibility is
# unchanged in kind: a reversible head stays reversible.
# (c) Each cycle affinity changes by $2\beta$ times the sum of $\varphi$ around the cycle.
# (d) The head becomes irreversible.
#
# :::{dropdown} Answer
# (b).  Around a cycle $\sum_m(\varphi_{i_m} - \varphi_{i_{m+1}})$ telescopes to 0, so the affinities $2\beta\cdot$holonomy are
# unchanged (not (c), and not (d), by Kolmogorov's criterion); but the destination weights $e^{-\beta\varphi_j}$ do
# survive the row normalisation — only the row factor $e^{\beta\varphi_i}$ cancels — so $\mathsf P$ does change (a).
# :::
#
# **Check 5.** On a dense 2-D sample, which fraction of the Gauss kernel's energy $\mathcal E(f, f)$ lies in bonds longer
# than $r = 2/\sqrt\beta$, and what happens to the fraction beyond a *fixed* radius $r$ as $\beta \to \infty$?
#
# (a) About 9 %; it tends to 0.
# (b) About 9 %; it stays at 9 %.
# (c) About 50 %; it tends to 0.
# (d) 0 at every β.
#
# :::{dropdown} Answer
# (a).  The tail is $\Gamma(2, c^2) = (1 + c^2)e^{-c^2} = 5e^{-4} \approx 0.09$ at $c = r\sqrt\beta = 2$.  At a fixed $r$,
# $c = r\sqrt\beta \to \infty$ and the fraction vanishes: the Gauss kernel has no jump part in the limit (not (b)).
# (c) overestimates the tail by a factor 5, and (d) confuses the limit with finite β.
# :::

# %% [markdown]
# ## Recap
#
# * $4\beta\,\Gamma(x^a, x^b)$ of the Gauss-kernel walk is the co-metric in any chart — $JJ^\top = (F^\top F)^{-1}$ for a
#   linear map (interior mean within 2 %), $\delta^{ab} - \partial_a\phi\,\partial_b\phi/(1 + \lVert\nabla\phi\rVert^2)$ on a
#   saddle (binned means within 0.06 of Sherman–Morrison's closed form) — once the kernel's self-loop is removed.
# * The exact Bakry–Émery curvature reproduces the published values for complete graphs, cycles and hypercubes,
#   and the product rule, to $10^{-12}$; the definition $\Gamma_2 \ge K_\infty\Gamma$ holds over 5000 random functions.
# * On kNN graphs of sampled surfaces $K_\infty$ is dominated by rough test functions, and even a smooth $f$ sees
#   a $1/n_{\mathrm{eff}}$ sampling bias of $\Gamma_2$ far above the Bochner value: a sphere is not told from a torus at
#   these sizes.
# * For the biased ring every quantity has a closed form — uniform π, current $(p - q)/n$, $\varepsilon_{\mathrm{rev}}$,
#   affinity $n\log(p/q)$, $\Omega_\pi(\cos, \sin)$ — and all match to $10^{-13}$.
# * A head $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))$ has cycle affinities $2\beta\cdot$holonomy of its
#   link (to $10^{-12}$); the exact part of the link is a Doob transform (reversible: Kolmogorov residual at
#   rounding), the coexact part carries every affinity.
# * Hatano–Nelson's $\mathsf A = \bar{\mathsf A}\odot e^\theta$ and the identity $\tfrac12\mathsf D_Q^\top\mathsf D_K =
#   \operatorname{diag}(\pi)\mathsf L + \operatorname{diag}(V)$ hold to rounding, with $V \le 0$ vanishing only for the
#   reversible (exact-link) head.
# * The Gauss kernel's Dirichlet form is local: its jump fraction at $r = c/\sqrt\beta$ follows the Gaussian tail
#   $\Gamma(2, c^2)$ within 0.03, while a heavy-tailed kernel keeps a third of its energy in jumps at $c = 4$.

# %% [markdown]
# ## Exercises
#
# Three exercises, from a computation with the tools above, through a derivation on paper that sympy or the
# numbers confirm, to an exploration that asks for an interpretation.  Each says what a correct answer shows.

# %% [markdown]
# ### Exercise 04.1 (compute)
#
# Compute the Bakry–Émery curvature $K_\infty$ of the cycles $C_n$, $n = 3, \dots, 10$, with `bakry_emery_curvature`,
# for the unnormalised Laplacian (rates = the adjacency matrix of `networkx.cycle_graph(n)`) and for the
# normalised one (rates $= D^{-1}A$).  Tabulate both.
#
# **What a correct answer shows:** one value per graph (the cycle is vertex-transitive), equal to the published
# ones to $10^{-12}$: $C_3 = K_3$ gives $5/2$ and $5/4$, $C_4 = Q_2$ gives $2$ and $1$, and every $C_n$ with $n \ge 5$
# gives $0$ for both.  Explain the jump from positive to flat in terms of the two-ball of a vertex: for $n \le 4$ two
# neighbours of a vertex are adjacent or share a second common neighbour, for $n \ge 5$ the two-ball is a path.
#
# **Answer in** `answer_04_1`: a dict with keys `"unnormalised"` and `"normalised"`, each a dict $n \mapsto$ the array of
# length $n$ returned by `bakry_emery_curvature` (the curvature at every vertex of $C_n$), for $n = 3, \dots, 10$:
# rates = the adjacency matrix for `"unnormalised"`, rates $= D^{-1}A$ for `"normalised"`.

# %%
import networkx as nx

from workbench.markov import bakry_emery_curvature

cycles_to_test = {n: nx.to_numpy_array(nx.cycle_graph(n)) for n in range(3, 11)}  # adjacency matrices
# your code here (bakry_emery_curvature of A and of A / A.sum(axis=1, keepdims=True))

# %% [markdown]
# ### Exercise 04.2 (derive)
#
# Section 4 used the jump fraction of the Gauss kernel in dimension $m = 2$.  On paper: for a smooth $f$ on a dense
# sample of an $m$-dimensional domain, the energy of the bonds of length $\rho$ is proportional to
# $e^{-\beta\rho^2}\rho^2\rho^{m-1}$ (kernel × squared increment × area of the sphere of radius ρ).  With $s = \rho\sqrt\beta$,
# show that the fraction beyond $r = c/\sqrt\beta$ is
#
# $$\frac{\int_c^\infty e^{-s^2}s^{m+1}\,ds}{\int_0^\infty e^{-s^2}s^{m+1}\,ds} = \frac{\Gamma(\tfrac m2 + 1, c^2)}{\Gamma(\tfrac m2 + 1)},$$
#
# and that it equals $(1 + c^2)e^{-c^2}$ for $m = 2$ and $\operatorname{erfc}(c) + \tfrac{2c}{\sqrt\pi}e^{-c^2}$ for $m = 1$.  Check
# both closed forms with sympy, then check the $m = 1$ prediction on 1500 uniform points of $[0, 1]$ at β = 400
# with $f = \sin 2\pi x$ (`squared_distances`, `beurling_deny_scan`), as section 4 did in the square, at the
# radii $r = c/\sqrt\beta$ for the 41 values `c_grid = np.linspace(0, 4, 41)`.
#
# *Hint:* sympy writes the $m = 1$ integral with `erf`, and `sp.simplify` may not see that
# $1 - \operatorname{erf}(c) - \operatorname{erfc}(c) = 0$.  Rewrite the difference in terms of `erf` before simplifying:
# `sp.simplify((ratio - closed_form).rewrite(sp.erf))`.
#
# **What a correct answer shows:** sympy reduces both ratios to your closed forms (their difference simplifies to
# 0); on the points, the measured jump fraction follows $\operatorname{erfc}(c) + \tfrac{2c}{\sqrt\pi}e^{-c^2}$ within 0.03
# for $c \in [0, 4]$ — the deviation is sampling noise and the boundary, not a jump part.
#
# **Answer in** `answer_04_2`: a dict with keys `"closed_forms"` (dict $m \mapsto$ your closed form of the jump
# fraction as a sympy expression in the symbol `c`, for $m$ = 1 and 2), `"points"` (the array `points_1d` of shape
# (1500, 1)), `"beta"` (400.0), `"c_grid"` (the 41 values of $c$), `"measured"` (the measured jump fractions
# `jump / total` at $r = c/\sqrt\beta$, one per value of $c$) and `"predicted"` (the $m = 1$ closed form evaluated on
# `c_grid`).

# %%
import numpy as np
import sympy as sp

s, c = sp.symbols("s c", positive=True)
points_1d = np.random.default_rng(0).uniform(0, 1, (1500, 1))
# your code here (useful: squared_distances, beurling_deny_scan from workbench.markov)

# %% [markdown]
# ### Exercise 04.3 (explore)
#
# How does the irreversibility of an attention head depend on its inverse temperature?  Take the bond $\mathcal S$
# and link $\mathcal A$ of section 3 (or fresh random ones, $N = 8$) and compute $\varepsilon_{\mathrm{rev}}$ of
# $\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))$ (`MarkovOperator(...).reversibility_residual`) for 25
# values of β from $10^{-3}$ to $30$, log-spaced.  Plot it on log–log axes and fit the slope over the six smallest β
# (`workbench.catalogue.fit_rate`).
#
# **What a correct answer shows:** slope $1.00 \pm 0.02$ at small β, then a plateau at or below $\sqrt2$ at large β.
# Interpret both ends: at small β the softmax is linear in the score ([mathematical reference §A.9](reference.md#reference-a9): the first-order
# term is $(\beta/N)$ times the row-centred score), so its antisymmetric part — and $\varepsilon_{\mathrm{rev}}$ — grows like β;
# at large β each row concentrates on its largest score, and $\varepsilon_{\mathrm{rev}} \le \sqrt2$ with equality only when no
# edge is reciprocated (each token's favourite does not favour it back).

# %%
import numpy as np

from workbench.markov import MarkovOperator

betas_explore = np.geomspace(1e-3, 30, 25)
# your code here
