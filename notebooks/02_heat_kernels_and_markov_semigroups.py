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
# # 02 — Heat kernels and Markov semigroups, fast
#
# The heat semigroup $e^{-t\mathsf L}$ of a graph ($\mathsf L$ its Laplacian) and the Markov semigroup
# $e^{t\mathcal L}$ of a continuous-time chain are matrix exponentials of **sparse** generators.  Here
# $\mathcal L$ is the chain's generator, a matrix of jump rates: off-diagonal entries $\ge 0$ and rows
# summing to 0, such as $\mathcal L = \mathsf P - I$ for a row-stochastic $\mathsf P$, or $\mathcal L = -\mathsf L$
# for a graph with unit rates along its edges.  What one needs is almost never the matrix $e^{tA}$ but its
# action $e^{tA}v$ on a few vectors.  This notebook
#
# 1. measures why: the dense exponential of a sparse generator is dense, and at $n = 10^4$ it costs
#    gigabytes and minutes where one `expmv` costs milliseconds;
# 2. runs the four methods of `workbench.expmv.expmv` — Taylor, Krylov, Chebyshev,
#    uniformization — on one heat kernel with a closed form, the cycle graph;
# 3. plots achieved error against the number of products with $A$, and how that number grows
#    with $t$ ($\sqrt{t}$ for Chebyshev, $t$ for Taylor);
# 4. walks a time grid to watch heat spread;
# 5. checks that uniformization keeps probabilities probabilities, and introduces the stationary law,
#    reversibility and detailed balance that the later notebooks use;
# 6. makes the same call with torch tensors: dense, sparse CSR, float32.
#
# **Objectives.** After this notebook you can
#
# * explain, with measured numbers, why one computes $e^{tA}v$ and not $e^{tA}$ for a sparse $A$;
# * call `expmv` with each of its four methods, read its `info`, and check the result against a
#   closed-form heat kernel;
# * predict how the number of products grows with $t$ and with the accuracy for Chebyshev
#   ($\sqrt t$) and Taylor ($t$), and check it as a fitted exponent;
# * choose uniformization when nonnegativity and row sums must hold exactly, and say what it costs;
# * run the same call on torch tensors (dense, sparse CSR, float32) and read the float32 accuracy.
#
# **Prerequisites.** Notebook 00 (How to read this workbench), for Markov generators, the
# convention $\mathsf L = I - \mathsf P$ and rates fitted with `fit_rate`.  The matrix exponential,
# the graph Laplacian, the Poisson distribution, the spectral theorem for symmetric matrices and
# Gershgorin's theorem; finite Markov chains as the syllabus assumes them (stochastic matrices).  Modified
# Bessel functions, the four `expmv` methods, and the stationary law, reversibility and detailed balance of a
# chain (section 5) are introduced here; the Swiss roll of section 5 is only a test data set, studied in
# notebook 03.
#
# **Time.** About 75 minutes in class (section 6, the torch bridge, can be read at home); the code runs in
# about 20 s.

# %%
import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.special
import torch
from matplotlib.ticker import NullFormatter, ScalarFormatter

from workbench.catalogue import fit_rate
from workbench.expmv import AccuracyWarning, BandedMatrix, expmv
from workbench.markov import MarkovOperator, SwissRoll

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(2)
METHODS = ("taylor", "krylov", "chebyshev", "uniformization")
COLORS = dict(zip(METHODS, ("C0", "C1", "C2", "C3"), strict=True))


def ring_generator(n, *, closed=True):
    """The negative graph Laplacian −L of the cycle (closed) or path graph: rate 1 to each neighbour.

    Off-diagonal rates are ≥ 0 and rows sum to 0, so −L is also a Markov generator (ℒ = −L).
    """
    i = np.arange(n)
    right, left = (i + 1) % n, (i - 1) % n
    keep_right = np.ones(n, bool) if closed else i < n - 1
    keep_left = np.ones(n, bool) if closed else i > 0
    rows = np.r_[i[keep_right], i[keep_left]]
    cols = np.r_[right[keep_right], left[keep_left]]
    W = scipy.sparse.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    return (W - scipy.sparse.diags_array(W.sum(axis=1))).tocsr()


def point_mass(n, j):
    e = np.zeros(n)
    e[j] = 1.0
    return e


def timed(f, *args, **kwargs):
    """Call f and return (its result, seconds)."""
    start = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - start


# %% [markdown]
# ## 1. Why $e^{tA}v$ and not $e^{tA}$
#
# The path graph on $n$ vertices has a tridiagonal Laplacian: $3n - 2$ nonzeros.  Its heat kernel
# $e^{-t\mathsf L}$ has **every** entry positive (the graph is connected), and in floating point the
# entries above $10^{-16}$ fill a band that widens like $\sqrt t$ and soon covers the whole matrix.
# Storing the exponential throws the sparsity away.  (The path's Laplacian and its spectrum are
# the standard ones of spectral graph theory, {cite:p}`chung1997spectral`.)

# %%
n = 200
Q = ring_generator(n, closed=False)
fig, axes = plt.subplots(1, 3, figsize=(11, 3.6), layout="constrained")
axes[0].spy(Q, markersize=1)
axes[0].xaxis.tick_bottom()  # spy puts the column ticks on top, under the title
axes[0].set_title(f"sparsity of $-\\mathsf{{L}}$: {Q.nnz} nonzeros")
for ax, t in zip(axes[1:], (5.0, 500.0), strict=True):
    H = scipy.linalg.expm(t * Q.toarray())
    visible = np.mean(np.abs(H) > 1e-16)
    print(f"t = {t:5g}: exact zeros {np.sum(H == 0):6d}, entries > 1e-16: {100 * visible:5.1f}% of {n}²")
    image = ax.imshow(np.log10(np.maximum(np.abs(H), 1e-17)), vmin=-16, vmax=0, cmap="magma")
    ax.set_title(f"$\\log_{{10}}|e^{{-t\\mathsf{{L}}}}|$, t = {t:g}")
for ax in axes:
    ax.set_xlabel("column j")
    ax.set_ylabel("row i")
fig.colorbar(image, ax=axes[1:], shrink=0.8, label=r"$\log_{10}$ of the entry (floored at $10^{-17}$)")
plt.show()

# %% [markdown]
# And the cost: scipy's `expm` (scaling and squaring with a degree-13 Padé approximant,
# {cite:p}`higham2008functions`) does
# $O(n^3)$ work on dense $n\times n$ arrays and keeps several of them alive.  We time it at two
# sizes and extrapolate to $n = 10^4$ by $n^3$, rather than spend many minutes and gigabytes here.
# (Timings on a shared machine are noisy; the orders of magnitude are what matter.)

# %%
sizes = [400, 800] if SMALL else [1000, 2000]
scipy.linalg.expm(np.eye(50))  # warm up
seconds = []
for m in sizes:
    dense = (10.0 * ring_generator(m, closed=False)).toarray()
    seconds.append(min(timed(scipy.linalg.expm, dense)[1] for _ in range(2)))
    print(f"dense expm, n = {m:5d}: {seconds[-1] * 1e3:8.1f} ms, {dense.nbytes / 1e6:5.1f} MB per n×n array")
big = 10_000
predicted = seconds[-1] * (big / sizes[-1]) ** 3
print(f"n = {big}: ≈ {predicted / 60:.0f} min by n³ extrapolation, {8 * big**2 / 1e9:.1f} GB per n×n array")

# %% [markdown]
# One `expmv` at $n = 10^4$ with the same $t$, applied to a point mass: the result is a vector of
# 80 kB and the work is a few dozen sparse products.

# %%
Q_big = ring_generator(big, closed=False)
v = point_mass(big, big // 2)
(y, info), s = timed(expmv, Q_big, v, 10.0, return_info=True)
print(f"expmv, n = {big}: {s * 1e3:.1f} ms, {info['matvecs']} products with A, method {info['method']!r}")
print("   because:", info["reason"])
print(f"mass Σ y = {y.sum():.15f}, y ≥ 0: {bool((y >= 0).all())}, result {y.nbytes / 1e3:.0f} kB")

# %% [markdown]
# ## 2. Four methods on one heat kernel
#
# On the cycle graph $\mathbb Z/N$ with unit rates, $\mathsf L = 2I - S - S^\top$ and the walk's
# increments in $\pm1$ are independent Poisson processes, so the heat kernel is the difference of
# two Poisson variables wrapped around the cycle:
#
# $$\bigl(e^{-t\mathsf L}\bigr)_{ij} = \sum_{w\in\mathbb Z} e^{-2t}\, I_{\,j-i+wN}(2t),$$
#
# $I_k$ the modified Bessel function, one term per winding $w$.  `scipy.special.ive` is
# $I_k(x)e^{-x}$, exactly the weight needed, without overflow.
#
# The four methods, with their classical sources: truncated Taylor series with scaling
# ({cite:t}`almohy2011computing`), Krylov subspace projection ({cite:t}`saad1992analysis`,
# {cite:t}`hochbruck1997krylov`), the Chebyshev expansion of the exponential
# ({cite:t}`ezer1984chebyshev`; {cite:t}`trefethen2019approximation` for why it converges so fast),
# and uniformization, the Poisson randomisation of a Markov chain ({cite:t}`jensen1953markoff`).


# %%
def cycle_heat_kernel(N, t, source=0):
    """Column ``source`` of e^{−tL} on the cycle graph by its Bessel image sum (windings until negligible)."""
    d = (np.arange(N) - source) % N
    total = scipy.special.ive(d, 2 * t)
    w = 1
    while True:
        term = scipy.special.ive(d + w * N, 2 * t) + scipy.special.ive(d - w * N, 2 * t)
        total = total + term
        if term.max() <= 1e-20 * total.max():
            return total
        w += 1


N = 400 if SMALL else 4000
t = 20.0
A = ring_generator(N)  # −L of the cycle
exact = cycle_heat_kernel(N, t)
rows = []
for method in METHODS:
    (y, info), s = timed(expmv, A, point_mass(N, 0), t, method=method, return_info=True)
    error = np.linalg.norm(y - exact) / np.linalg.norm(exact)
    rows.append((method, info, error, y))
    print(f"{method:15s} products {info['matvecs']:4d}   relative error {error:.1e}   {s * 1e3:6.1f} ms")
assert max(error for _, _, error, _ in rows) < 1e-13

# %% [markdown]
# Each method reports its own diagnostics: the Chebyshev degree and the spectral interval
# (Gershgorin here: $[-4, 0]$), the Taylor degree $m$ and number of scaling steps $s$, the Krylov
# dimension and number of time steps, the uniformization rate $q$ and the Poisson window $[L, R]$.

# %%
wanted = {
    "taylor": ("degree", "steps", "shift", "norm_bound"),
    "krylov": ("krylov_dim", "steps", "process"),
    "chebyshev": ("degree", "interval", "interval_source"),
    "uniformization": ("rate", "left", "right"),
}
for method, info, _, _ in rows:
    print(f"{method:15s}", ", ".join(f"{key} = {info[key]}" for key in wanted[method]))

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6), layout="constrained")
j = np.arange(N)
left.semilogy(j, exact, "k-", lw=3, alpha=0.3, label="Bessel image sum")
for method, _, _, y in rows:
    left.semilogy(j, np.abs(y), ".", ms=2, color=COLORS[method], label=method)
    right.semilogy(j, np.maximum(np.abs(y - exact), 1e-20), ".", ms=2, color=COLORS[method], label=method)
left.set(xlabel="vertex j", ylabel=r"$|(e^{-t\mathsf{L}})_{j0}|$", title=f"cycle, N = {N}, t = {t:g}")
right.set(xlabel="vertex j", ylabel="absolute error", title="against the image sum (floored at 1e-20)")
left.legend(fontsize=8, markerscale=4)
plt.show()

# %% [markdown]
# Every contract is *normwise*: the error is small relative to $\lVert e^{tA}v\rVert$, and the
# absolute errors (right) sit at $10^{-16}$ and below everywhere.  Entries far below that level —
# the tail of the kernel, down to $10^{-130}$ here — are not promised digits, and the methods
# differ there (left, absolute values):
#
# * a Chebyshev polynomial of degree $K$ and a uniformization window ending at $R$ cannot reach
#   further than $K$ or $R$ edges from the source: beyond, their entries are exactly 0 (missing on
#   the log scale);
# * Taylor, shifted by $\mu = -2$, multiplies by $A + 2I$ — the nonnegative adjacency matrix — so
#   every term of its series is nonnegative and it follows the tail entry by entry;
# * Krylov's tail is rounding residue of both signs.

# %%
for method, _, _, y in rows:
    print(f"{method:15s} exact zeros {np.sum(y == 0):4d}   negative entries {np.sum(y < 0):4d}")

# %% [markdown]
# ## 3. Error against work
#
# The unit of work is one product $AX$ (`info["matvecs"]`): on a GPU or for a large sparse
# operator everything else is small change.  We sweep `tol` for each method and plot the error
# achieved against the closed form.
#
# What `tol` promises differs by method (each docstring states it): a rigorous truncation bound
# for Chebyshev, an a-posteriori estimate for Krylov, a *backward* error $\lVert t\Delta A\rVert \le
# \mathrm{tol}\cdot\lVert tA\rVert$ for Taylor (the Al-Mohy–Higham meaning, also scipy's), the
# neglected Poisson mass for uniformization.  Uniformization's bound is in the max-norm relative to
# the *input*; here the output's peak is much smaller than the input's, so at loose tolerances it
# warns that the result is less accurate relative to itself.  We count those warnings instead of
# printing them.

# %%
tols = np.geomspace(1e-2, 1e-14, 10)
print(f"{'':15s} tol     ", " ".join(f"{tol:.0e}" for tol in tols))
sweep = {}
for method in METHODS:
    points = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AccuracyWarning)
        for tol in tols:
            y, info = expmv(A, point_mass(N, 0), t, method=method, tol=tol, return_info=True)
            points.append((info["matvecs"], max(np.linalg.norm(y - exact) / np.linalg.norm(exact), 1e-17)))
    sweep[method] = np.array(points)
    products = " ".join(f"{int(c):5d}" for c in sweep[method][:, 0])
    print(f"{method:15s} products {products}   AccuracyWarnings: {len(caught)} of {len(tols)}")

fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for method, points in sweep.items():
    ax.loglog(points[:, 0], points[:, 1], "o-", ms=4, color=COLORS[method], label=method)
ax.set_xticks([20, 50, 100, 200])
ax.xaxis.set_major_formatter(ScalarFormatter())
ax.xaxis.set_minor_formatter(NullFormatter())
ax.set(xlabel="products with A (info['matvecs'])", ylabel="relative error vs closed form")
ax.set_title(f"cycle heat kernel, N = {N}, t = {t:g}, tol from 1e-2 to 1e-14")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# Chebyshev is the cheapest at every accuracy: for a symmetric operator with spectrum in an
# interval of width $w$, the Bessel coefficients $I_k(tw/2)$ decay once $k$ exceeds about
# $\sqrt{tw/2\,\cdot\,2\log(1/\mathrm{tol})}$, so the degree grows like $\sqrt{t\,w}$.  Taylor
# needs about $t\lVert A\rVert$ products — it cannot do better than the series of $e^{x}$ on a disc
# of radius $t\lVert A\rVert$ — and uniformization about $qt + O(\sqrt{qt})$ (the Poisson window).
# Krylov adapts to the spectrum and sits in between, paying per step for its basis.
#
# `method="auto"` picks Chebyshev for this operator: $-\mathsf L$ is symmetric, and the factor in
# this plot is the reason.  $-\mathsf L$ is also a Markov generator; when exact nonnegativity and
# row sums matter more than speed, `method="uniformization"` gives them by construction.
#
# One oddity shows at the loose end: Taylor's count is not monotone in `tol` (compare the first
# columns of the table).  Its $(m, s)$ selection minimises the planned cost $m\cdot s$, but each step stops early
# once the terms are negligible, which favours high degree and few steps; at loose `tol` the
# selection picks low degree and many steps, where early stopping saves little.
#
# The scaling with $t$, at a fixed `tol` = 1e-10:

# %%
times = np.geomspace(1, 1000 if SMALL else 10_000, 6)
counts = {method: [] for method in METHODS}
with warnings.catch_warnings(record=True) as caught:  # uniformization's max-norm caveat at large t, as above
    warnings.simplefilter("always", AccuracyWarning)
    for s in times:
        reference = cycle_heat_kernel(N, s)
        for method in METHODS:
            y, info = expmv(A, point_mass(N, 0), s, method=method, tol=1e-10, return_info=True)
            counts[method].append(info["matvecs"])
            assert np.linalg.norm(y - reference) / np.linalg.norm(reference) < 1e-7  # far inside every contract
for method in METHODS:
    rate = fit_rate(times[-4:], counts[method][-4:])
    print(f"{method:15s} products at t = {times[-1]:g}: {counts[method][-1]:6d}   fitted growth t^{rate:.2f}")
print(f"AccuracyWarnings: {len(caught)}")

fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
for method in METHODS:
    ax.loglog(times, counts[method], "o-", ms=4, color=COLORS[method], label=method)
ax.loglog(times, 10 * np.sqrt(times), "k:", label=r"$\propto\sqrt{t}$")
ax.loglog(times, 10 * times, "k--", label=r"$\propto t$")
ax.set(xlabel="time t (dimensionless)", ylabel="products with A", title="cycle heat kernel, tol = 1e-10")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 4. A grid of times: heat spreading
#
# Passing `t` as a 1-D array returns the results stacked on a new first axis.  The grid is walked
# **in order**, each step starting from the previous result ($e^{t_{k+1}A}v = e^{(t_{k+1}-t_k)A}
# e^{t_kA}v$), so it must be nondecreasing; `info["per_time"]` holds each step's own info.  Here the
# operator is the path-graph generator stored by its three diagonals (`BandedMatrix`): products
# run as one fused pass per diagonal.

# %%
n = 300 if SMALL else 3000
banded = BandedMatrix.from_scipy(ring_generator(n, closed=False))
grid = 4.0 ** np.arange(7) * (1 if SMALL else 100)
source = n // 5
profiles, info = expmv(banded, point_mass(n, source), grid, return_info=True)
print(
    f"shape {profiles.shape}, method {info['method']!r}, products per step:", [s["matvecs"] for s in info["per_time"]]
)
print(f"mass: max over the grid of |Σ y − 1| = {np.abs(profiles.sum(axis=1) - 1).max():.1e}")
one_shot = expmv(banded, point_mass(n, source), grid[-1])
print(f"grid's last row vs one call at t = {grid[-1]:g}: {np.abs(profiles[-1] - one_shot).max():.1e}")

fig, ax = plt.subplots(figsize=(6.5, 3.4), layout="constrained")
for s, profile in zip(grid, profiles, strict=True):
    ax.plot(profile, label=f"t = {s:g}")
ax.axhline(1 / n, color="k", ls=":", label="equilibrium 1/n")
ax.set(xlabel="vertex", ylabel="heat (probability)")
ax.set_title(rf"$e^{{-t\mathsf{{L}}}}\delta_{{{source}}}$ on the path, n = {n}")
ax.legend(fontsize=8, ncols=2)
plt.show()

# %% [markdown]
# ## 5. Uniformization keeps probabilities probabilities
#
# For a Markov generator $\mathcal L$ (rates $\ge 0$ off the diagonal, rows summing to 0) and
# $q \ge \max_i(-\mathcal L_{ii})$, $\mathsf P = I + \mathcal L/q$ is stochastic and
# $e^{t\mathcal L} = \sum_k e^{-qt}\frac{(qt)^k}{k!}\mathsf P^k$ is a convex combination of
# stochastic matrices ({cite:p}`jensen1953markoff`).  The module computes $\mathsf PX = X + (\mathcal LX - r\odot X)/q$ with
# $r = \mathcal L\mathbf 1$ as the kernel computes it, so that $\mathsf P\mathbf 1 = \mathbf 1$ bit
# for bit, and takes $q$ slightly larger than needed, so that rounding cannot make an entry of
# $\mathsf P X$ negative.  Then $e^{t\mathcal L}\mathbf 1 = \mathbf 1$ to a few units of roundoff and
# $f \ge 0 \Rightarrow e^{t\mathcal L}f \ge 0$.  Taylor and Krylov promise neither.
#
# **Stationary law and reversibility.**  A probability row vector $\pi$ is **stationary** for $\mathcal L$ if
# $\pi\mathcal L = 0$, equivalently $\pi e^{t\mathcal L} = \pi$ for every $t$; for $\mathcal L = \mathsf P - I$ this is
# $\pi\mathsf P = \pi$.  The chain is **reversible** with respect to $\pi$ if it satisfies **detailed balance**,
# $\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}$ for all $i, j$ (for rates, $\pi_i\mathcal L_{ij} = \pi_j\mathcal L_{ji}$): in
# equilibrium the probability flux from $i$ to $j$ equals the flux back.  Summing detailed balance over $i$ gives
# $\pi\mathsf P = \pi$, so a law in detailed balance is stationary; the converse fails — a walk around a cycle that
# turns one way more often than the other has the uniform stationary law but a net flux around the cycle
# (notebook 04 measures it).  A symmetric kernel $\mathsf K$ always gives a reversible walk: with the degree
# $q = \mathsf K\mathbf 1$, $\mathsf P = \operatorname{diag}(q)^{-1}\mathsf K$ and $\pi = q/\mathbf 1^\top q$, the flux
# $\pi_i\mathsf P_{ij} = \mathsf K_{ij}/\mathbf 1^\top q$ is symmetric.
#
# Two generators: the random walk of a kNN Gauss kernel on a Swiss roll, $\mathcal L = \mathsf P - I$
# from `MarkovOperator.from_points`, and a biased walk on a path with random rates (up to the right
# about three times faster than to the left).  Each is applied to a point mass (a column of
# $e^{t\mathcal L}$: transition probabilities into one state) and to the constant function $\mathbf 1$.

# %%
m = 1500 if SMALL else 15000
roll = MarkovOperator.from_points(SwissRoll().sample(m, seed=3), k=10)
walk = roll.negative_generator

up, down = 3 * rng.exponential(size=m - 1), rng.exponential(size=m - 1)
rates = scipy.sparse.diags_array([down, up], offsets=[-1, 1]).tocsr()
biased = (rates - scipy.sparse.diags_array(rates.sum(axis=1))).tocsr()

pi_roll = roll.stationary  # π ∝ degree: the kNN Gauss kernel is symmetric
flux = roll.P.multiply(pi_roll[:, None]).tocsr()  # π_i P_ij
print(
    f"kNN walk: ‖πP − π‖₁ = {np.abs(roll.P.T @ pi_roll - pi_roll).sum():.1e}, "
    f"max|π_i P_ij − π_j P_ji| = {abs(flux - flux.T).max():.1e} (π_i ~ {pi_roll.mean():.0e})"
)

for name, generator, s in (("kNN walk, Swiss roll", walk, 50.0), ("biased walk, path", biased, 50.0)):
    B = np.column_stack([point_mass(m, m // 2), np.ones(m)])
    print(f"{name}, n = {m}, t = {s:g}")
    for method in ("uniformization", "taylor", "krylov"):
        Y, info = expmv(generator, B, s, method=method, return_info=True)
        print(
            f"   {method:15s} products {info['matvecs']:5d}   min entry {Y[:, 0].min(): .2e}"
            f"   negative entries {np.sum(Y[:, 0] < 0):4d}   max|e^(tℒ)1 − 1| {np.abs(Y[:, 1] - 1).max():.1e}"
        )
        if method == "uniformization":
            assert Y.min() >= 0 and np.abs(Y[:, 1] - 1).max() <= 1e-15

# %% [markdown]
# What we observed when writing this (small scale): uniformization gives no negative entry and
# $e^{t\mathcal L}\mathbf 1 = \mathbf 1$ to $10^{-15}$ or better, exactly as promised.  Taylor and
# Krylov stay *accurate* — their row sums drift by $10^{-15}$ to $10^{-14}$, and their smallest
# entries agree with uniformization in magnitude — but nothing stops rounding from landing on the
# wrong side of zero: on the biased walk, Krylov (its Arnoldi basis mixes signs) returns entries
# of size $10^{-20}$ with a minus sign, as it did in the tail of the cycle's kernel (section 2), where
# the operator is symmetric and Arnoldi reduces to Lanczos.  Harmless for a heat profile, fatal for a
# logarithm or a sampler downstream.  The price of uniformization is $qt$ products, against the
# $\sqrt t$-like growth of Krylov and Chebyshev — section 3.
#
# Agreement between the methods on the Swiss-roll walk, for a smooth function:

# %%
f = np.cos(np.linspace(0, 6 * np.pi, m))
runs = {method: expmv(walk, f, 5.0, method=method, tol=1e-12) for method in ("uniformization", "taylor", "krylov")}
for method in ("taylor", "krylov"):
    gap = np.abs(runs[method] - runs["uniformization"]).max() / np.abs(runs["uniformization"]).max()
    print(f"{method:7s} vs uniformization: {gap:.1e}")

# %% [markdown]
# ## 6. The torch bridge
#
# Every method is written once against the array namespace of the block it is given, so the same
# call works on torch tensors: dense, or sparse CSR, in float64 or float32, and the result comes
# back in the input's library, dtype and device.  The code path is identical on CUDA (put the
# tensors there); the numbers printed below come from whatever device this runs on — the GPU
# was **not** measured on the machine this notebook was written on.
#
# The default `tol` is the unit roundoff of `B`'s dtype: $2^{-53}$ in float64, $2^{-24}$ in
# float32.  The operator and the block must share a dtype.

# %%
device = "cuda" if torch.cuda.is_available() else "cpu"
N = 400 if SMALL else 4000
t = 20.0
A = ring_generator(N)
exact = cycle_heat_kernel(N, t)
dense64 = torch.as_tensor(A.toarray(), device=device)
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    csr64 = dense64.to_sparse_csr()
    csr32 = csr64.to(torch.float32)
v64 = torch.as_tensor(point_mass(N, 0), device=device)

print(f"device: {device}")
for label, operator, vector in (
    ("dense float64", dense64, v64),
    ("CSR float64", csr64, v64),
    ("CSR float32", csr32, v64.float()),
):
    for method in ("chebyshev", "auto"):
        (y, info), s = timed(expmv, operator, vector, t, method=method, return_info=True)
        error = np.linalg.norm(y.double().cpu().numpy() - exact) / np.linalg.norm(exact)
        print(
            f"{label:14s} {info['method']:15s} → {type(y).__name__} {y.dtype!s:14s} tol {info['tol']:.1e}"
            f"   products {info['matvecs']:4d}   error {error:.1e}   {s * 1e3:6.1f} ms"
        )

# %% [markdown]
# In float32 the products carry about seven digits, and the error lands near $2^{-24}$ times a
# modest factor: the same contracts, in the other precision.  The numpy and torch paths agree to
# float64 rounding:

# %%
from_numpy = expmv(A, point_mass(N, 0), t, method="chebyshev")
from_torch = expmv(csr64, v64, t, method="chebyshev").cpu().numpy()
print(f"numpy vs torch CSR, Chebyshev: {np.abs(from_numpy - from_torch).max():.1e}")
assert np.abs(from_numpy - from_torch).max() < 1e-13  # same algorithm, same degree: rounding only

# %% [markdown]
# ## Concept checks
#
# **Check 1.** A sparse generator $A$ has $n = 10^5$ states and five nonzeros per row.  What can a laptop compute?
#
# (a) $e^{tA}$ as a dense matrix, then $e^{tA}v$ by one product.
# (b) $e^{tA}v$ directly, with a few dozen to a few hundred sparse products $AX$.
# (c) Both: the dense exponential is slower but fits in memory.
# (d) Neither: $e^{tA}v$ needs the eigen-decomposition of $A$.
#
# :::{dropdown} Answer
# (b).  $e^{tA}$ is dense (every entry is positive on a connected graph): $10^{10}$ entries, 80 GB in float64, and
# $O(n^3) = 10^{15}$ operations for scaling and squaring, so (a) and (c) fail.  `expmv` needs only products with
# $A$, each costing $5n$ operations, and no eigen-decomposition (d).
# :::
#
# **Check 2.** On the cycle ($-\mathsf L$ with spectrum in $[-4, 0]$) at a fixed `tol`, $t$ goes from 100 to 400.
# The Chebyshev degree is multiplied by about
#
# (a) 4 (b) 2 (c) 16 (d) 1
#
# :::{dropdown} Answer
# (b).  The Bessel coefficients $e^{-x}I_k(x)$, $x = tw/2$, are negligible once $k \gtrsim \sqrt{2x\log(1/\mathrm{tol})}$, so
# the degree grows like $\sqrt t$, and $\sqrt4 = 2$.  Taylor's count would grow like $t$ (a); (c) squares instead of
# taking a root; (d) would mean the cost did not depend on $t$ at all.
# :::
#
# **Check 3.** Why does uniformization return $e^{t\mathcal L}f \ge 0$ for every $f \ge 0$, while Taylor and Krylov
# may return entries of size $10^{-20}$ with a minus sign?
#
# (a) Uniformization works in higher precision.
# (b) It sums Poisson-weighted powers of the stochastic $\mathsf P = I + \mathcal L/q$: every term is a nonnegative
# combination of nonnegative vectors, so rounding cannot create a negative entry; Taylor sums powers of
# $\mathcal L$, whose terms have both signs.
# (c) It sets negative entries to zero at the end.
# (d) It uses more products, and more products mean smaller errors.
#
# :::{dropdown} Answer
# (b).  The sign is preserved by construction, term by term (with $q$ taken slightly large so that rounding cannot
# push an entry of $\mathsf PX$ below 0).  Nothing is clipped (c) — clipping would break $e^{t\mathcal L}\mathbf 1 = \mathbf 1$;
# all methods run in the input's precision (a); and the number of products (d) controls the truncation error,
# not the sign of rounding errors.
# :::
#
# **Check 4.** A walk on a cycle of 5 states steps forward with probability 0.7 and back with probability 0.3.
# Which is true?
#
# (a) $\pi$ is uniform and detailed balance holds.
# (b) $\pi$ is uniform, but detailed balance fails: $\pi_i\mathsf P_{i,i+1} = 0.14 \ne \pi_{i+1}\mathsf P_{i+1,i} = 0.06$.
# (c) $\pi$ is not uniform, because the walk prefers one direction.
# (d) There is no stationary law.
#
# :::{dropdown} Answer
# (b).  Every column of $\mathsf P$ sums to 1 as well as every row, so the uniform law is stationary (not (c));
# a finite irreducible chain always has one (not (d)).  But the flux $0.2\cdot0.7$ forward exceeds the flux
# $0.2\cdot0.3$ back on every edge: stationarity balances the total flux through each state, detailed balance the
# flux along each edge, and this chain is stationary without being reversible.
# :::

# %% [markdown]
# ## Recap
#
# * Never form $e^{tA}$ for a sparse $A$: it is dense, $O(n^2)$ memory and $O(n^3)$ time; $e^{tA}v$
#   costs a modest number of sparse products (measured: minutes by extrapolation against milliseconds).
# * `expmv(A, B, t, method=..., tol=..., return_info=True)` takes dense or sparse numpy/scipy/torch
#   operators, a vector or a block, one time or an increasing grid, and says what it did: method,
#   reason, products, diagnostics.  All four methods meet the cycle's Bessel image sum to $10^{-13}$.
# * On symmetric operators Chebyshev wins: its degree grows like $\sqrt{t\,w}$ against Taylor's
#   $t\lVert A\rVert$ (fitted exponents about 0.5 and 1).  Krylov needs only products, and adapts.
# * A time grid is walked in order; its last row equals a single call at the last time.
# * On Markov generators uniformization is the one that keeps probabilities exactly: nonnegative,
#   rows summing to 1 to $10^{-15}$ — at a cost linear in $qt$.
# * A law in detailed balance, $\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}$, is stationary; a symmetric kernel gives a
#   reversible walk with $\pi \propto$ degree (checked to rounding on the kNN walk); stationary does not imply reversible.
# * The same call runs on torch tensors — CPU here; the code path is the one CUDA takes; float32
#   results carry float32 accuracy.

# %% [markdown]
# ## Exercises
#
# Use the public API (`workbench.expmv.expmv`, `workbench.catalogue.fit_rate`), numpy/scipy and sympy;
# the helpers `ring_generator`, `point_mass` and `cycle_heat_kernel` defined above are yours to
# reuse.  Each exercise says what a correct answer shows, so you can check your own work first.

# %% [markdown]
# ### Exercise 02.1 (compute)
#
# The path graph has a closed-form heat kernel too.  Its Laplacian $\mathsf L$ on $n$ vertices has
# the eigenvalues $\lambda_k = 2 - 2\cos(\pi k/n)$ and the eigenvectors
# $\phi_k(j) = \cos\bigl(\pi k(j + \tfrac12)/n\bigr)$, $k = 0, \dots, n-1$ (the discrete cosine
# transform).  Check the eigen-pairs against `ring_generator(n, closed=False)` for $n = 300$, build
# $e^{-t\mathsf L}\delta_{60}$ from them at $t = 50$, and compare with `expmv` for each of the four
# methods.
#
# **What a correct answer shows:** $\lVert\mathsf L\phi_k - \lambda_k\phi_k\rVert$ is at rounding level
# for every $k$ (normalise the $\phi_k$ first); every method agrees with the spectral sum to a
# relative $10^{-13}$ or better in the 2-norm; and the heat's total mass is 1 because $\phi_0$ is
# constant and $\lambda_0 = 0$.
#
# **Answer in** `answer_02_1`: a dict with keys `"n"` (300), `"t"` (50.0), `"source"` (60), `"eigenvalues"` (the
# vector $(\lambda_k)_{k=0}^{n-1}$), `"eigenvectors"` (the $n\times n$ matrix whose column $k$ is the normalised $\phi_k$),
# `"eigen_residual"` (the float $\max_k\lVert\mathsf L\phi_k - \lambda_k\phi_k\rVert_{\max}$), `"spectral"` (the vector
# $e^{-t\mathsf L}\delta_{60}$ built from the eigen-pairs) and `"expmv"` (dict method name → the vector returned by
# `expmv` with that method, for `"taylor"`, `"krylov"`, `"chebyshev"`, `"uniformization"`).

# %%
# your code here

# %% [markdown]
# ### Exercise 02.2 (derive)
#
# On the infinite path $\mathbb Z$ with unit rates, the walk's displacement after time $t$ is
# $D = N_+ - N_-$, two independent Poisson($t$) counts.  On paper: (a) show that the generating
# function is $\mathbb E[z^D] = e^{t(z + 1/z - 2)}$ and, using
# $e^{\frac x2(z + 1/z)} = \sum_{k\in\mathbb Z}I_k(x)z^k$, that $P(D = k) = e^{-2t}I_k(2t)$ — the weight of
# the image sum of section 2; (b) derive $\mathbb E[D] = 0$ and $\mathbb E[D^2] = 2t$ from the
# generating function.  Check (b) with sympy (differentiate $G(z)$ at $z = 1$), then numerically
# twice: with `scipy.special.ive` summed over $k$, and with `expmv` on a cycle long enough that the
# heat never wraps around.
#
# **What a correct answer shows:** sympy returns exactly 0 and $2t$; $\sum_k e^{-2t}I_k(2t) = 1$ and
# $\sum_k k^2e^{-2t}I_k(2t) = 2t$ to about $10^{-12}$ relative; the `expmv` second moment on a
# cycle of 4000 vertices at $t = 50$ is $100$ to the same accuracy.  Explain why the variance
# grows linearly in $t$ while the number of Chebyshev products grows like $\sqrt t$.
#
# **Answer in** `answer_02_2`: a dict with keys `"mean"` and `"second_moment"` (sympy expressions for
# $\mathbb E[D]$ and $\mathbb E[D^2]$ in the symbol `t`, from the generating function), `"ive_sums"` (dict
# $t \mapsto$ the pair $(\sum_k e^{-2t}I_k(2t),\ \sum_k k^2e^{-2t}I_k(2t))$ of floats, for $t$ = 0.5, 5.0, 50.0),
# `"N"` (4000), `"t_expmv"` (50.0) and `"expmv_second_moment"` (the float $\sum_j d(j, 0)^2\,y_j$ for
# $y = e^{-t\mathsf L}\delta_0$ on the cycle, $d$ the distance along the cycle).

# %%
# your code here

# %% [markdown]
# ### Exercise 02.3 (explore)
#
# Section 3 claims that the Chebyshev degree grows like $\sqrt{t\,w\,\log(1/\mathrm{tol})}$.  Test
# the $\mathrm{tol}$ dependence: on the cycle of section 2 ($w = 4$), for $t = 10, 100, 1000$ and
# seven tolerances from $10^{-2}$ to $10^{-14}$, record `info["degree"]` of
# `expmv(..., method="chebyshev", tol=tol, return_info=True)`.  Fit, for each $t$, the slope of
# $\log(\text{degree})$ against $\log\log(1/\mathrm{tol})$, and compare each degree with the
# prediction $\sqrt{2x\log(1/\mathrm{tol})}$, $x = tw/2$, which comes from
# $I_k(x)e^{-x} \approx e^{-k^2/(2x)}/\sqrt{2\pi x}$ for $k \ll x$.
#
# **What a correct answer shows:** slopes near 1/2 (within 0.1), and the prediction within about
# 10 % of the measured degree at every $t$.  Interpret: going from $\mathrm{tol} = 10^{-2}$ to
# $10^{-14}$ multiplies $\log(1/\mathrm{tol})$ by 7 but the degree only by about $\sqrt7 \approx 2.6$ —
# accuracy is cheap for Chebyshev, and it is the time $t$ (through $\sqrt{tw}$) that costs.

# %%
# your code here
