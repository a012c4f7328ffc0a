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
# # 03 — Heat on a Swiss roll
#
# Figure 1 of *Attention Geometry* ({cite:p}`candanedo2026attention`) shows a point mass $e_i$
# pushed forward by a Markov operator, $e_i\mathsf P^t$: the heat spreads **along the Swiss-roll
# sheet**, and the equilibrium $\pi$ is visibly **nonuniform** ([mathematical reference §A.2](reference.md#reference-a2)).
# Attention is such a Markov operator on the tokens, so this picture is the paper's first lesson:
# the walk sees the geometry of the data, not of the ambient space.  This notebook rebuilds the
# figure from samples and then checks what it claims:
#
# 1. the kernel scale — the median rule of the author's public implementation, and why a local
#    scale is needed here;
# 2. heat $e_i\mathsf P^t$ in 3-D and in the unrolled coordinates: it follows the sheet, not the
#    ambient distance;
# 3. the equilibrium $\pi$ against the sampling density, for the α = 0 and α = 1 normalisations;
# 4. the diffusion map, which unrolls the roll, and its Nyström extension to new points;
# 5. the low spectrum $4\beta(1-\mu_k)$ against the Neumann spectrum of the flat rectangle.
#
# **Objectives.** After this notebook you can
#
# * build the Gauss-kernel Markov operator of a point cloud with a local bandwidth, and say why
#   the median rule fails on the Swiss roll;
# * show, with a number, that heat follows the sheet and not the ambient distance;
# * predict the stationary law from the degree for α = 0 and α = 1, and check it as a fitted slope
#   of $\log\pi$ against $\log\rho$;
# * compute the heat semigroup $e^{t\mathcal L}$ with `workbench.expmv.expmv` and check it against
#   the Poisson average of the discrete steps;
# * read the diffusion map and the low spectrum against the Neumann rectangle, and name the
#   finite-size biases.
#
# **Prerequisites.** Notebook 00 (How to read this workbench: the Gauss kernel and its inverse bandwidth β)
# and notebook 02 (Heat kernels and Markov semigroups, fast: `expmv`, and in its section 5 the stationary law,
# reversibility and detailed balance).  Arc length of a plane curve, change of variables for densities, the
# Laplacian with Neumann conditions on a rectangle and its eigenfunctions.  The α-normalisation, the diffusion
# map and the Nyström extension are introduced here; the Laplace–Beltrami operator is only named, and
# developed in notebook 05.
#
# **Time.** About 75 minutes in class (the last two sections, the low spectrum and Nyström, can be read at
# home); the code runs in about 15 s.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse
from matplotlib.ticker import NullFormatter, ScalarFormatter
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist
from scipy.stats import poisson

from workbench.expmv import expmv
from workbench.markov import (
    MarkovOperator,
    SwissRoll,
    bandwidth_sweep,
    gauss_kernel_sparse,
    median_bandwidth,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
n = 4000 if SMALL else 16000
k = 40  # neighbours of the sparse kernel


def roll_axes(fig, *position, title=""):
    """A 3-D axis looking down the roll's axis at an angle, so that the inner turns stay visible."""
    ax = fig.add_subplot(*position, projection="3d")
    ax.view_init(elev=55, azim=-100)
    ax.set(xticks=[], yticks=[], zticks=[], title=title)
    return ax


def unrolled_axes(ax, *, ylabel=True):
    """Label a panel drawn in the unrolled coordinates (s, h), with equal scales on both axes."""
    ax.set_aspect("equal")  # the sheet is isometric to this rectangle: a round blob must look round
    ax.set_xlabel("arc length s (length units)")
    if ylabel:
        ax.set_ylabel("height h")
    return ax


# %% [markdown]
# ## The sheet and its unrolled coordinates
#
# `SwissRoll` is the sheet $X(t, h) = (t\cos t,\ h,\ t\sin t)$ of `sklearn.datasets.make_swiss_roll`.
# With the arc length $s(t)$ of the spiral, $(s, h) \mapsto X$ is an isometry from the rectangle
# $[0, \ell]\times[0, H]$ onto the sheet, so `intrinsic_coordinates` *unrolls* it exactly and the
# geodesic distance on the sheet is the Euclidean distance in $(s, h)$.
#
# We sample **uniformly in the parameter** $t$ (`sampling="parameter"`), as `make_swiss_roll` and
# the paper's figure do.  That is not uniform in area: the density with respect to area is
# $\rho \propto 1/\sqrt{1 + t^2}$, about three times larger on the inner turn than on the outer one.

# %%
roll = SwissRoll(sampling="parameter")
X = roll.sample(n, seed=0)
s, h = roll.intrinsic_coordinates(X).T
ell, H = roll.arc_length, roll.height
rho = roll.density(X)
print(f"n = {n}, rectangle ℓ × H = {ell:.2f} × {H:.0f}, density max/min = {rho.max() / rho.min():.2f}")

fig = plt.figure(figsize=(12, 3.6), layout="constrained")
ax = roll_axes(fig, 1, 2, 1, title=r"samples $(t\cos t,\ h,\ t\sin t)$")
ax.scatter(X[:, 0], X[:, 2], X[:, 1], c=s, s=2, cmap="viridis")
ax = unrolled_axes(fig.add_subplot(1, 2, 2))
points = ax.scatter(s, h, c=s, s=2, cmap="viridis")
ax.set_title("the same points, unrolled")
fig.colorbar(points, ax=ax, shrink=0.5, label="arc length s (colour of both panels)")
plt.show()

# %% [markdown]
# The isometry is checked on nearby pairs: a chord of length $d$ on a curve of radius $R$ is shorter
# than its arc by a relative $d^2/(24R^2)$, which is below $3\cdot10^{-3}$ for $d \le 1$ and
# $R \ge t_0 = 3\pi/2$.

# %%
pairs = np.argwhere(np.triu(cdist(X[:1000], X[:1000]) < 1.0, 1))
ambient = np.linalg.norm(X[pairs[:, 0]] - X[pairs[:, 1]], axis=1)
intrinsic = np.hypot(s[pairs[:, 0]] - s[pairs[:, 1]], h[pairs[:, 0]] - h[pairs[:, 1]])
gap = np.max((intrinsic - ambient) / intrinsic)
print(f"{len(pairs)} pairs closer than 1: max relative (arc − chord)/arc = {gap:.1e}")
assert 0 <= gap < 3e-3

# %% [markdown]
# ## The kernel and its scale
#
# Throughout, $\mathsf K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}$: β is the inverse bandwidth, with
# no factor 2 or 4 in the exponent, so $1/\sqrt\beta$ is the kernel's length scale and, on functions,
# $4\beta(I - \mathsf P)f \to -\Delta f - 2(1 - \alpha)\nabla\log\rho\cdot\nabla f$ for the α-normalised kernel of
# the equilibrium section below: a Laplacian, plus for α = 0 a drift up the density gradient that α = 1 removes
# ({cite:p}`coifman2006diffusion`, {cite:p}`belkin2008towards`).  The author's public implementation takes the
# **median rule** $\beta = 1/\operatorname{median}_{i<j}\lVert x_i - x_j\rVert^2$.  On the Swiss roll
# that is a *global* scale: its length $1/\sqrt\beta$ is larger than the gap $2\pi$ between two
# turns, so a dense kernel would join the turns almost as strongly as neighbours on the sheet.

# %%
beta_median = median_bandwidth(X, seed=0)
print(f"median rule: β = {beta_median:.4g}, length 1/√β = {beta_median**-0.5:.1f}; gap between turns 2π = 6.28")
print(f"kernel weight across one turn, exp(−β (2π)²) = {np.exp(-beta_median * (2 * np.pi) ** 2):.2f}")

K_median = gauss_kernel_sparse(X, beta_median, k=k)
print(f"on the {k}-nearest-neighbour graph the weights lie in [{K_median.data.min():.2f}, 1]")

# %% [markdown]
# Restricting the kernel to the $k$ nearest neighbours keeps it on the sheet, but at the median
# scale every weight in a neighbourhood is close to 1: the operator is essentially the *unweighted*
# kNN random walk, and the Gaussian — which is what ties $\mathsf P$ to the Laplacian at the rate
# $4\beta$ — plays no role.  We will see below that this operator's $\pi$ does not see the density
# and its $4\beta(1-\mu_k)$ is off by more than an order of magnitude.
#
# A local scale comes from the kernel-sum sweep (`bandwidth_sweep`): $S(\beta) = \sum_{ij}\mathsf K_{ij}$
# grows like $\beta^{-d/2}$ where the kernel is local but sees many neighbours, and the sweep returns
# the β of steepest growth together with the dimension estimate $d$.  At that scale the truncation
# at $k$ neighbours costs little: the kernel has decayed by the $k$-th neighbour.

# %%
sweep = bandwidth_sweep(X, k=k, seed=0)
beta = sweep.beta
print(f"sweep: β = {beta:.3f} (length {beta**-0.5:.2f}), dimension estimate {sweep.dimension:.2f} (true 2)")
print(f"kernel weight across one turn, exp(−β (2π)²) = {np.exp(-beta * (2 * np.pi) ** 2):.1e}")
reach = cKDTree(X).query(X, k=k + 1)[0][:, -1]  # distance to the k-th neighbour
cut = np.exp(-beta * reach**2)
print(f"kernel weight at the k-th neighbour: median {np.median(cut):.1e}, largest {cut.max():.1e}")
op = MarkovOperator.from_points(X, beta, k=k)  # α = 0: the graph random walk of the Gauss kernel
print(f"P: {op.n} states, {op.P.nnz / op.n:.0f} entries per row, reversible: {op.is_reversible}")

# %% [markdown]
# ## Heat spreads along the sheet
#
# A point mass $e_i$ at the centre of the rectangle, pushed forward by the chain: the row vector
# $\mu_t = e_i\mathsf P^t$ (computed as $\mu_{t+1} = \mathsf P^\top\mu_t$).  Each $\mu_t$ is a
# probability vector, and it tends to the stationary law $\pi$; we print the total-variation
# distance $\tfrac12\lVert\mu_t - \pi\rVert_1$.

# %%
source = int(np.argmin((s - ell / 2) ** 2 + (h - H / 2) ** 2))
times = (20, 200, 2000)
pi = op.stationary
transpose = op.P.T.tocsr()
mu = np.zeros(n)
mu[source] = 1.0
heat = {}
for t in range(1, max(times) + 1):
    mu = transpose @ mu
    if t in times:
        heat[t] = mu.copy()
for t in times:
    mass, distance = heat[t].sum(), 0.5 * np.abs(heat[t] - pi).sum()
    print(f"t = {t:5d}: total mass − 1 = {mass - 1:+.1e}, min = {heat[t].min():.1e}, TV to π = {distance:.3f}")
    assert abs(mass - 1) < 1e-12 and heat[t].min() >= 0

# %%
panels = [*(rf"$e_i\mathsf{{P}}^{{t}}$, t = {t}" for t in times), r"$\pi$ ($t \to \infty$)"]
fields = [*(heat[t] for t in times), pi]
fig = plt.figure(figsize=(14, 3.4), layout="constrained")
for col, (title, values) in enumerate(zip(panels, fields, strict=True)):
    order = np.argsort(values)  # hot points drawn last
    ax = roll_axes(fig, 1, 4, col + 1, title=title)
    points = ax.scatter(X[order, 0], X[order, 2], X[order, 1], c=values[order], s=2, cmap="inferno")
    ax.scatter(*X[source, [0, 2, 1]], c="cyan", s=30, marker="x")
    fig.colorbar(points, ax=ax, shrink=0.6, pad=0.0, label="probability per sample")
fig.suptitle(r"heat $e_i\mathsf{P}^t$ on the roll (the cyan cross is the source $i$)")
plt.show()

fig, axes = plt.subplots(4, 1, figsize=(10, 9.5), sharex=True, layout="constrained")
for ax, title, values in zip(axes, panels, fields, strict=True):
    order = np.argsort(values)
    points = ax.scatter(s[order], h[order], c=values[order], s=3, cmap="inferno")
    ax.plot(s[source], h[source], "cx")
    unrolled_axes(ax)
    if ax is not axes[-1]:
        ax.set_xlabel("")  # the panels share the s axis
    ax.set_title(title)
    fig.colorbar(points, ax=ax, label="probability\nper sample")
fig.suptitle("the same heat on the unrolled sheet, at equal scales in s and h")
plt.show()

# %% [markdown]
# In the unrolled coordinates the heat is a round blob that widens like $\sqrt t$: the chain diffuses
# in the intrinsic geometry.  The decisive check is a set of points that are **close in the ambient
# space but far on the sheet** — the next turn of the roll, about $2\pi$ away through the air but a
# whole turn away along the sheet.  We compare the heat relative to equilibrium, $\mu_t/\pi$, on
# points within ambient distance 8 of the source, split by their distance on the sheet.

# %%
ambient = np.linalg.norm(X - X[source], axis=1)
on_sheet = np.hypot(s - s[source], h - h[source])
near = (ambient < 8) & (on_sheet < 8)
far = (ambient < 8) & (on_sheet > 30)
print(f"{near.sum()} points near on the sheet; {far.sum()} near in space but ≥ {on_sheet[far].min():.0f} away on it")
for t in times[:2]:
    warm, cold = (heat[t] / pi)[near].mean(), (heat[t] / pi)[far].max()
    print(f"t = {t:4d}: mean μ/π sheet-near {warm:.2f}, max μ/π sheet-far {cold:.1e}, ratio {cold / warm:.1e}")
    assert cold < 1e-5 * warm

fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
t = times[1]
sc = ax.scatter(ambient[ambient < 15], heat[t][ambient < 15] + 1e-30, c=on_sheet[ambient < 15], s=4, cmap="viridis")
ax.set_yscale("log")
ax.set_ylim(1e-20, 1)
ax.set_xlabel("ambient distance to the source (length units)")
ax.set_ylabel(rf"heat $e_i\mathsf{{P}}^t$, t = {t}")
fig.colorbar(sc, label="distance on the sheet (length units)")
ax.set_title("same ambient distance, different sheet distance")
plt.show()

# %% [markdown]
# The upper branch is the sheet around the source; the lower one, at ambient distance ≈ 6–8, is the
# next turn, cold by more than five orders of magnitude.
#
# **Continuous time.**  The heat semigroup $e^{t\mathcal L}$, $\mathcal L = \mathsf P - I$, is the
# Poisson average of the discrete steps, $e_i e^{t\mathcal L} = \sum_m e^{-t}\tfrac{t^m}{m!}\,e_i\mathsf P^m$.
# We compute it with the workbench's engine `workbench.expmv.expmv` (notebook 02), applied to the
# sparse transpose $\mathcal L^\top$ because the heat is a *row* vector, $e_ie^{t\mathcal L} = (e^{t\mathcal L^\top}e_i)^\top$,
# and check the Poisson identity against the discrete iterates.  $\mathcal L^\top$ has columns, not
# rows, summing to 0, so it is not a Markov generator and uniformization does not apply;
# `method="auto"` says what it chose instead.

# %%
t_cont = 100.0
generator_T = (op.P - scipy.sparse.eye_array(n)).T.tocsr()
point_mass = np.zeros(n)
point_mass[source] = 1.0
continuous, info = expmv(generator_T, point_mass, t_cont, return_info=True)
print(f"expmv: method {info['method']!r}, {info['matvecs']} sparse products — {info['reason']}")
mu, poisson_sum = point_mass.copy(), poisson.pmf(0, t_cont) * point_mass
for m in range(1, 400):  # Poisson(100) tail beyond 400 is below 1e-60
    mu = transpose @ mu
    poisson_sum += poisson.pmf(m, t_cont) * mu
gap = np.abs(continuous - poisson_sum).max()
print(
    f"max |e_i exp(tℒ) − Σ Poisson(m; t) e_i Pᵐ| = {gap:.1e} at t = {t_cont:g}, mass − 1 = {continuous.sum() - 1:+.1e}"
)
assert gap < 1e-12

# %% [markdown]
# ## The equilibrium and the sampling density
#
# For a symmetric kernel, $\pi \propto \mathsf K\mathbf 1$ (the degree), exactly.  For α = 0 the
# degree is a kernel density estimate, $\sum_j\mathsf K_{ij} \approx n\rho(x_i)(\pi/\beta)^{d/2}$, so
# $\pi_i \propto \rho(x_i)$: the equilibrium is hot on the dense inner turn — that is the nonuniform
# $\pi$ of the paper's figure.  The α = 1 normalisation of {cite:t}`coifman2006diffusion`,
# $\mathsf K^{(\alpha)} = \operatorname{diag}(q)^{-\alpha}\mathsf K\operatorname{diag}(q)^{-\alpha}$ with
# $q = \mathsf K\mathbf 1$, divides the density out twice:
# then $\pi_i \propto 1/\rho(x_i)$, so the stationary *measure* $\sum_i\pi_i\delta_{x_i}$, whose density
# with respect to area is $\pi_i\cdot n\rho(x_i)$, becomes uniform — the Riemannian area, the
# reversible measure of the Laplace–Beltrami operator.  (For α = 0 that measure has density $\rho^2$.)
#
# We fit the slope of $\log\pi$ against $\log\rho$ away from the boundary, where the degree is
# halved.  One more detail matters at this sample size: the kernel has a **unit diagonal**
# $\mathsf K_{ii} = 1$, and with only a handful of neighbours inside the kernel's reach that
# constant 1 is a sizeable part of the degree, which flattens the slope.  The author's public
# implementation zeros the diagonal (here `zero_diagonal=True`); we show both.

# %%
interior = (s > 10) & (s < ell - 10) & (h > 4) & (h < 17)
K = gauss_kernel_sparse(X, beta, k=k)
print(f"median degree Σ_j K_ij: {np.median(K.sum(axis=1)):.1f}, of which the diagonal contributes 1")
cases = {
    "median β, kNN, α = 0": MarkovOperator.from_points(X, beta_median, k=k),
    "α = 0": op,
    "α = 1": MarkovOperator.from_points(X, beta, alpha=1.0, k=k),
    "α = 0, K_ii = 0": MarkovOperator.from_points(X, beta, alpha=0.0, k=k, zero_diagonal=True),
    "α = 1, K_ii = 0": MarkovOperator.from_points(X, beta, alpha=1.0, k=k, zero_diagonal=True),
}
slopes = {}
for name, case in cases.items():
    slopes[name] = np.polyfit(np.log(rho[interior]), np.log(case.stationary[interior]), 1)[0]
    print(f"{name:22s} slope of log π against log ρ: {slopes[name]:+.3f}")
assert abs(slopes["median β, kNN, α = 0"]) < 0.1  # the kNN walk at the median scale does not see ρ
assert abs(slopes["α = 0, K_ii = 0"] - 1) < 0.1 and abs(slopes["α = 1, K_ii = 0"] + 1) < 0.1

# %%
fig = plt.figure(figsize=(14, 4.2), layout="constrained")
ax = roll_axes(fig, 1, 3, 1, title=r"$\pi$, α = 0: hot on the dense inner turn")
points = ax.scatter(X[:, 0], X[:, 2], X[:, 1], c=op.stationary, s=2, cmap="inferno")
fig.colorbar(points, ax=ax, shrink=0.6, label=r"$\pi_i$ (probability)")
ax = fig.add_subplot(1, 3, 2)
edges = np.geomspace(rho[interior].min(), rho[interior].max(), 12)
centres = np.sqrt(edges[1:] * edges[:-1])
which = np.digitize(rho[interior], edges[1:-1])
for name, colour in (("median β, kNN, α = 0", "grey"), ("α = 0, K_ii = 0", "C3"), ("α = 1, K_ii = 0", "C0")):
    values = cases[name].stationary[interior]
    binned = [np.mean(values[which == b]) / values.mean() for b in range(len(centres))]
    ax.loglog(centres, binned, "o-", color=colour, label=f"{name}: slope {slopes[name]:+.2f}")
r0 = np.exp(np.log(rho[interior]).mean())
ax.loglog(centres, centres / r0, "k--", lw=1, label="slopes ±1")
ax.loglog(centres, r0 / centres, "k--", lw=1)
for axis in (ax.xaxis, ax.yaxis):
    axis.set_major_formatter(ScalarFormatter())
    axis.set_minor_formatter(NullFormatter())
ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
ax.set_xticks([4e-4, 5e-4, 6e-4, 7e-4])
ax.set_yticks([0.7, 0.8, 0.9, 1.0, 1.2, 1.4])
ax.set_ylim(0.62, 2.4)  # room for the legend above the curves
ax.set_xlabel(r"sampling density $\rho$ (per unit area)")
ax.set_ylabel(r"$\pi$ / mean $\pi$ (binned by $\rho$)")
ax.legend(fontsize=8, loc="upper center")
ax = fig.add_subplot(1, 3, 3)
bins = np.linspace(10, ell - 10, 16)
which = np.digitize(s[interior], bins)
for name, colour in (("α = 0, K_ii = 0", "C3"), ("α = 1, K_ii = 0", "C0")):
    measure = cases[name].stationary * n * rho  # density of Σ π_i δ_{x_i} with respect to area
    values = measure[interior] / measure[interior].mean()
    ax.plot(bins[1:], [values[which == b].mean() for b in range(1, len(bins))], "o-", color=colour, label=name)
ax.set_xlabel("arc length s (inner → outer turn)")
ax.set_ylabel("stationary measure per area (normalised)")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## The diffusion map unrolls the roll
#
# With α = 1 the generator tends to the Laplace–Beltrami operator of the sheet, i.e. of the flat
# rectangle with Neumann conditions, whose eigenfunctions are $\cos(\pi m s/\ell)\cos(\pi j h/H)$.
# Since $\ell > 4H$, the first four nonconstant modes run *along* the roll, $\psi_m \approx \cos(\pi m s/\ell)$:
# the diffusion coordinates $\Psi_t = (\mu_1^t\psi_1, \mu_2^t\psi_2)$ are functions of the arc length
# alone, and $\psi_1$ is monotone in it — the roll is unrolled.

# %%
op_lb = cases["α = 1"]
Psi = op_lb.diffusion_map(2, t=1)
fig, axes = plt.subplots(1, 3, figsize=(14, 3.6), layout="constrained")
for m, ax in zip((1, 2), axes[:2], strict=True):
    corr = abs(np.corrcoef(Psi[:, m - 1], np.cos(np.pi * m * s / ell))[0, 1])
    print(f"|corr(ψ_{m}, cos({m}πs/ℓ))| = {corr:.4f}")
    assert corr > 0.99
    points = ax.scatter(s, Psi[:, m - 1], c=h, s=2, cmap="coolwarm")
    ax.set_xlabel("arc length s")
    ax.set_ylabel(rf"$\mu_{m}\psi_{m}$ (dimensionless)")
    ax.set_title(rf"$\psi_{m} \approx \pm\cos({m if m > 1 else ''}\pi s/\ell)$")
fig.colorbar(points, ax=axes[:2], shrink=0.9, label="height h")
points = axes[2].scatter(Psi[:, 0], Psi[:, 1], c=s, s=2, cmap="viridis")
axes[2].set_aspect("equal")  # a map: both diffusion coordinates in the same units
axes[2].set_xlabel(r"$\Psi_1 = \mu_1\psi_1$")
axes[2].set_ylabel(r"$\Psi_2 = \mu_2\psi_2$")
axes[2].set_title(r"diffusion map $(\Psi_1, \Psi_2)$")
fig.colorbar(points, ax=axes[2], shrink=0.9, label="arc length s")
plt.show()

# %% [markdown]
# ## The low spectrum against the Neumann rectangle
#
# $4\beta(1 - \mu_k) \to \lambda_k = (\pi m/\ell)^2 + (\pi j/H)^2$ (`SwissRoll.spectrum`) as $n\to\infty$
# and then $\beta\to\infty$ at a suitable joint rate ({cite:p}`belkin2008towards`, {cite:p}`hein2007graph`).
# At finite size there are several biases, and we show them rather than tune them away:
#
# * **bandwidth**: the expansion $4\beta(I - \mathsf P) = -\Delta + O(1/\beta)$ holds in the interior; at the
#   free boundary the kernel sees only half a neighbourhood, and the Neumann condition emerges only
#   in the limit, through a boundary layer as wide as the kernel;
# * **the unit diagonal**: a self-loop of weight $1/\deg_i$ makes the walk lazy, and shrinks every
#   $1-\mu_k$ by roughly that fraction (here about 20 %);
# * **the scale**: at the median β the Gaussian is flat on the kNN graph and the factor 4β is
#   meaningless;
# * modes 4 and 5, $(m, j) = (4, 0)$ and $(0, 1)$, are 13 % apart, and the discrete operator mixes them.

# %%
count = 10
exact = roll.spectrum(count + 1)[1:]
spectra = {}
for name in ("α = 1", "α = 1, K_ii = 0", "median β, kNN, α = 0"):
    scale = beta_median if name.startswith("median") else beta
    spectra[name] = 4 * scale * (1 - cases[name].spectrum(count + 1).values[1:])
    print(f"{name:22s} 4β(1 − μ_k)/λ_k, k = 1..5:", np.round(spectra[name][:5] / exact[:5], 3))
ratio = spectra["α = 1, K_ii = 0"][:3] / exact[:3]
assert np.all(np.abs(ratio - 1) < 0.05)

fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
modes = np.arange(1, count + 1)
ax.plot(modes, exact, "ks-", label=r"Neumann rectangle $(\pi m/\ell)^2 + (\pi j/H)^2$")
ax.plot(modes, spectra["α = 1, K_ii = 0"], "o-", label=r"α = 1, $K_{ii} = 0$")
ax.plot(modes, spectra["α = 1"], "^-", label="α = 1, unit diagonal")
ax.plot(modes, spectra["median β, kNN, α = 0"], "v-", color="grey", label="median β on the kNN graph")
ax.set_yscale("log")
ax.set_xlabel("mode k")
ax.set_ylabel(r"$4\beta(1 - \mu_k)$ (per length²)")
ax.legend(fontsize=8)
ax.set_title(f"n = {n}, β = {beta:.2f}")
plt.show()

# %% [markdown]
# ## Nyström: the map at new points
#
# The eigenvectors live on the samples.  At a new point $x$ the eigen-equation itself extends them:
# $\psi_k(x) = \mu_k^{-1}\sum_j\mathsf P(x, x_j)\psi_k(j)$, with $\mathsf P(x,\cdot)$ the same
# α-normalised kernel row against the training points: the Nyström extension, the standard way to
# evaluate kernel eigenfunctions off the sample ({cite:p}`coifman2006geometric`).  At a training point this reproduces
# $\psi_k$ exactly; at new points it should follow the same profile $\cos(\pi s/\ell)$ as well as the
# training points do.

# %%
X_new = roll.sample(500, seed=1)
s_new = roll.intrinsic_coordinates(X_new)[:, 0]
Psi_new = op_lb.nystrom(X_new, 2, t=1)
exactness = np.abs(op_lb.nystrom(X[:200], 2, t=1) - Psi[:200]).max()
print(f"at training points: max |Nyström − diffusion map| = {exactness:.1e}")
assert exactness < 1e-10

profile = np.cos(np.pi * s / ell)
amplitude = (profile @ Psi[:, 0]) / (profile @ profile)  # least-squares fit Ψ₁ ≈ a cos(πs/ℓ)
rms_train = np.sqrt(np.mean((Psi[:, 0] - amplitude * profile) ** 2))
rms_new = np.sqrt(np.mean((Psi_new[:, 0] - amplitude * np.cos(np.pi * s_new / ell)) ** 2))
print(f"rms distance to a·cos(πs/ℓ): training {rms_train:.2e}, new points {rms_new:.2e} (|a| = {abs(amplitude):.2f})")
assert rms_new < 1.5 * rms_train

fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
ax.plot(s, Psi[:, 0], ".", ms=1, color="lightgrey", label="training points")
ax.plot(s_new, Psi_new[:, 0], ".", ms=3, color="C1", label="Nyström, new points")
grid = np.linspace(0, ell, 200)
ax.plot(grid, amplitude * np.cos(np.pi * grid / ell), "k--", lw=1, label=r"$a\,\cos(\pi s/\ell)$")
ax.set_xlabel("arc length s")
ax.set_ylabel(r"$\mu_1\psi_1$ (dimensionless)")
ax.set_title("Nyström extension of the first diffusion coordinate")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.** Why does the median rule $\beta = 1/\operatorname{median}_{i<j}\lVert x_i - x_j\rVert^2$ fail on the Swiss roll?
#
# (a) The median is too expensive to compute on 4000 points.
# (b) It is a global scale: its length $1/\sqrt\beta$ exceeds the gap $2\pi$ between turns, so a dense kernel joins
# the turns, and on a kNN graph every weight is close to 1 — the Gaussian, and with it the clock $4\beta$, plays
# no role.
# (c) It makes β so large that every point is isolated.
# (d) It ignores the sampling density, which only α = 1 can correct.
#
# :::{dropdown} Answer
# (b).  The kernel must be local on the scale of the sheet's geometry; the median of all pairwise distances
# is a scale of the whole roll.  (c) is the opposite failure (a β far too large); (d) confuses the bandwidth with
# the density normalisation, which is a separate choice.
# :::
#
# **Check 2.** Two points lie at ambient distance 7 from the heat source: one on the same sheet, 7 away along it;
# one on the next turn, more than 30 away along the sheet.  After 200 steps of the walk with the sweep's β,
#
# (a) both hold about the same heat, since the kernel only sees ambient distances;
# (b) the point on the next turn holds many orders of magnitude less heat relative to $\pi$;
# (c) the point on the next turn holds more, because the turns are closer through the air;
# (d) both hold exactly $\pi_i$, because 200 steps reach equilibrium.
#
# :::{dropdown} Answer
# (b).  The kernel's length $1/\sqrt\beta$ is far below the gap $2\pi$, so one step never jumps between turns and
# heat can only travel along the sheet, where the next turn is 30 away.  The kernel does see ambient distances
# (a), but only short ones; (c) would need steps across the gap; and the notebook measured a total-variation
# distance far from 0 at $t = 200$ (d).
# :::
#
# **Check 3.** For the α = 1 kernel the stationary law is $\pi_i \propto 1/\rho(x_i)$.  What is then uniform?
#
# (a) $\pi$ itself.
# (b) The stationary measure $\sum_i\pi_i\delta_{x_i}$, whose density with respect to area is $\pi_i\cdot n\rho(x_i)$.
# (c) The sampling density $\rho$.
# (d) The degree $\mathsf K\mathbf 1$.
#
# :::{dropdown} Answer
# (b).  Each sample carries the mass $\pi_i$, and there are about $n\rho$ samples per unit area, so the measure has
# density $\pi\cdot n\rho \propto 1$: the Riemannian area, the reversible measure of the Laplace–Beltrami operator.
# $\pi$ itself (a) is largest where samples are sparse; ρ (c) is fixed by the sampling and is $\approx 3\times$ larger
# on the inner turn; the degree of the α = 0 kernel (d) is a density estimate, proportional to ρ.
# :::
#
# **Check 4.** The kernel's unit diagonal adds a self-loop of weight $\theta_i = 1/\deg_i$ to each state.  What does it
# do to the spectral estimate $4\beta(1 - \mu_k)$?
#
# (a) Nothing: a self-loop does not move the walk.
# (b) It shrinks every $1 - \mu_k$ by roughly the fraction θ: the walk is lazy, $\mathsf P \approx (1 - \theta)\mathsf P' + \theta I$.
# (c) It doubles every $1 - \mu_k$.
# (d) It makes the $\mu_k$ complex.
#
# :::{dropdown} Answer
# (b).  With a uniform θ, $\mathsf P = (1 - \theta)\mathsf P' + \theta I$ has eigenvalues $(1 - \theta)\mu'_k + \theta$, so
# $1 - \mu_k = (1 - \theta)(1 - \mu'_k)$: a clock running slow by θ (about 20 % here).  The self-loop is exactly what
# (a) says it is not — time spent standing still; (c) has the sign of the effect wrong; and the kernel stays
# symmetric, so the spectrum stays real (d).
# :::

# %% [markdown]
# ## Recap
#
# * The sheet unrolls isometrically onto a rectangle (chord and arc agree to $3\cdot10^{-3}$ on
#   pairs closer than 1), so its geometry is known in closed form and every claim has an oracle.
# * With $\mathsf K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}$ and a *local* β, heat $e_i\mathsf P^t$ is a
#   blob in the unrolled coordinates: it follows the sheet, and the next turn — close through the
#   air — stays cold by more than five orders of magnitude.
# * The median rule is a global scale: on the roll it would bridge the turns, and on a kNN graph it
#   turns the kernel into the unweighted walk, which sees neither the density nor the clock $4\beta$.
# * $\pi \propto$ degree $\propto \rho$ for α = 0 (the nonuniform equilibrium of Figure 1 of
#   {cite:t}`candanedo2026attention`);
#   α = 1 makes the stationary measure the area.  The unit diagonal of the kernel flattens both
#   at small degree.
# * The heat semigroup from `expmv` equals the Poisson average of the discrete steps to $10^{-12}$.
# * The α = 1 diffusion map unrolls the roll, $\psi_m \approx \cos(\pi m s/\ell)$; Nyström extends it to
#   new points as accurately as it fits the old ones; $4\beta(1-\mu_k)$ approaches the Neumann
#   spectrum of the rectangle once the self-loop is removed.

# %% [markdown]
# ## Exercises
#
# Use the public API (`workbench.markov`, `workbench.expmv`, `workbench.catalogue.fit_rate`),
# numpy/scipy and sympy; the arrays of this notebook (`X`, `s`, `h`, `rho`, `beta`, `k`, `interior`)
# are yours to reuse.  Each exercise says what a correct answer shows, so you can check your own work first.

# %% [markdown]
# ### Exercise 03.1 (compute)
#
# Rebuild the two stationary laws **by hand** from the sparse kernel `K = gauss_kernel_sparse(X, beta, k=k)`
# and compare them with `MarkovOperator.from_points(X, beta, alpha=..., k=k).stationary`:
# for α = 0, $\pi = \mathsf K\mathbf 1/\mathbf 1^\top\mathsf K\mathbf 1$; for α = 1, with $q = \mathsf K\mathbf 1$ and
# $\mathsf K^{(1)} = \operatorname{diag}(q)^{-1}\mathsf K\operatorname{diag}(q)^{-1}$, $\pi \propto \mathsf K^{(1)}\mathbf 1$.
# Then check stationarity $\lVert\pi\mathsf P - \pi\rVert_1$ and detailed balance
# $\max_{ij}\lvert\pi_i\mathsf P_{ij} - \pi_j\mathsf P_{ji}\rvert$ on the sparse matrices.
#
# **What a correct answer shows:** all four residuals are at rounding level (below $10^{-15}$ for
# entries of size $\sim 10^{-4}$); explain why a *symmetric* kernel makes the degree stationary
# without solving any eigenproblem (detailed balance: $\pi_i\mathsf P_{ij} = \mathsf K_{ij}/\sum\mathsf K$).
#
# **Answer in** `answer_03_1`: a dict with keys `"K"` (the sparse kernel `gauss_kernel_sparse(X, beta, k=k)`),
# `"pi"` (dict α → your stationary law by hand, a vector of length $n$, for α = 0.0 and 1.0),
# `"stationarity"` (dict α → the float $\lVert\pi\mathsf P - \pi\rVert_1$, with $\mathsf P$ the operator's `P` for that α)
# and `"balance"` (dict α → the float $\max_{ij}\lvert\pi_i\mathsf P_{ij} - \pi_j\mathsf P_{ji}\rvert$).

# %%
# your code here

# %% [markdown]
# ### Exercise 03.2 (derive)
#
# On paper: (a) for the spiral $c(t) = (t\cos t, t\sin t)$ show $\lvert c'(t)\rvert = \sqrt{1 + t^2}$, and
# that $s(t) = \tfrac12\bigl(t\sqrt{1+t^2} + \operatorname{arsinh}t\bigr)$ is its arc length; (b) if $t$ is
# uniform on $[t_0, t_1]$ and $h$ uniform on $[0, H]$, show that the density with respect to area is
# $\rho = 1/\bigl((t_1 - t_0)H\sqrt{1 + t^2}\bigr)$, and compute the ratio of the densities on the
# inner and outer edges, $\sqrt{1 + t_1^2}/\sqrt{1 + t_0^2}$, for $t_0 = 3\pi/2$, $t_1 = 9\pi/2$.  Check
# (a) with sympy (differentiate $s$, and compare $\ell = s(t_1) - s(t_0)$ with `roll.arc_length` and with a
# numerical quadrature of $\sqrt{1 + t^2}$, `scipy.integrate.quad`), and (b) with `roll.density` and with a
# histogram of the sampled arc lengths $s$ against the predicted density of $s$, $\rho\cdot H$ (the
# expected fraction of samples in a bin $[a, b]$ of $s$ is $(t(b) - t(a))/(t_1 - t_0)$, and
# `roll.parameter_from_arc_length` gives $t(s)$).
#
# **What a correct answer shows:** sympy simplifies $s'(t) - \sqrt{1 + t^2}$ to 0; $\ell$ agrees
# with `roll.arc_length` to $10^{-12}$ and with the quadrature to $10^{-10}$; the ratio is about 2.94 and bounds
# `rho.max() / rho.min()`;
# the histogram follows the predicted density within its sampling noise (a few per cent per bin).
#
# **Answer in** `answer_03_2`: a dict with keys `"speed_squared"` (the sympy expression $\lvert c'(t)\rvert^2$ in the
# symbol `t`), `"arc_length"` (the sympy expression $s(t)$), `"ell"` (the float $\ell = s(t_1) - s(t_0)$ from the
# closed form), `"ell_quad"` (the float $\ell$ from `scipy.integrate.quad`), `"ratio"` (the float inner/outer density
# ratio), `"s"` (the sampled arc lengths of this notebook), `"edges"` (your bin edges, from 0 to ℓ), `"observed"`
# (the counts `np.histogram(s, bins=edges)[0]`) and `"expected"` (the predicted count of each bin).

# %%
# your code here

# %% [markdown]
# ### Exercise 03.3 (explore)
#
# The bandwidth matters.  For β = `beta` times 1/4, 1/2, 1, 2, 4 and 8, build the α = 0 operator
# with the unit diagonal and with `zero_diagonal=True`, fit the slope of $\log\pi$ against
# $\log\rho$ on the `interior` points as above, and record the median degree $m$ of
# `gauss_kernel_sparse(X, b, k=k)`.  Plot both slopes against β.  Predict the unit-diagonal slope
# from $m$ alone: if the degree is $1 + c\rho$ with $c\rho \approx m - 1$, then
# $d\log(1 + c\rho)/d\log\rho = (m - 1)/m$.  Interpret both ends of the range.
#
# **What a correct answer shows:** the zero-diagonal slope is closest to 1 near the sweep's β and
# departs from it at both ends; the unit-diagonal slope follows $(m-1)/m$ within about 0.06 for
# β at or above the sweep's value.  At small β the kernel no longer decays by the $k$-th neighbour
# and the kNN truncation (which adapts to the density) flattens $\pi$; at large β only a few
# neighbours lie within reach, the unit diagonal dominates the degree, and the density estimate
# gets noisy — the local bandwidth of the sweep sits between the two failures.

# %%
# your code here
