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
# # 10c — Holonomy on the twisted ring
#
# Notebook 10a wrote multi-head attention as one step of a connection walk: a Markov walk $A_{\mathrm{eff}}$ whose
# steps transport the features by $O^{\mathrm{eff}}_{ij}$; notebook 10b built flat connections out of a change of
# frames.  A connection can also be *curved*: transporting a vector around a closed loop need not bring it back.
# This notebook measures that curvature — the holonomy — on an oracle whose spectrum is known in closed form, and
# proves what a change of frames can and cannot change ({cite:t}`connectionlaplacian` §6;
# [mathematical reference §B.6](reference.md#reference-b6)).  Notebook 10d then reads a real encoder with these instruments.
#
# **Objectives.**  After this notebook you can
# * compute the holonomy of a connection around a loop and the spectrum of the connection Laplacian of a twisted
#   ring, and compare it with $2 - 2\cos((2\pi k \pm \theta)/n)$;
# * explain why a nontrivial holonomy leaves no parallel section (the bottom eigenvalue lifts off zero);
# * explain spectral flow: why the spectrum returns to itself after a full twist while the eigenvectors do not;
# * say which holonomy quantities are gauge invariant (its spectrum, the Laplacian spectrum) and which are not
#   (the matrix, $\lVert\mathrm{Hol} - I\rVert_F$), and check it numerically.
#
# **Prerequisites.**  Notebook 10a (Multi-head attention is a connection walk: transports $O_{ij}$ on the edges, the
# block operator $T(A, O)$ and the generator $I - T$) and notebook 10b (Rotation, deformation and the connection
# energy: the change of frames `gauge_transform`, flat connections, parallel sections and `connection_laplacian`).
# Maths: eigenvalues of circulant matrices, rotations of the plane and their complex eigenvectors, similarity
# transformations.
#
# **Time.**  About 30 minutes in class; the code runs in about 15 s.
#
# **Conventions.**  Those of 10a: row vectors, $O_{ij}$ on the oriented edge $j \to i$ acting by
# $X_j \mapsto X_jO_{ij}$, positive generators.  "Reconstructed" marks a formula of the connection-Laplacian paper that
# the mathematical reference reconstructs; each is checked numerically here.
#
# **What we use from 10a and 10b.**  The block operator $T(A, O)_{ij} = A_{ij}O_{ij}^\top$ with
# $\operatorname{vec}^r(\mathcal T(A,O)X) = T(A,O)\operatorname{vec}^r(X)$, and the connection Laplacian built from it
# (10a); the change of frames $O'_{ij} = V_j^{-1}O_{ij}V_i$ (`gauge_transform`), which makes a flat connection out of
# the identity (10b).

# %%
import os

import matplotlib.pyplot as plt
import numpy as np

from workbench.attention import (
    connection_laplacian,
    cycle_connection,
    gauge_transform,
    holonomy,
    holonomy_deviation,
    triangle_cycles,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(10)

# %% [markdown]
# ## 1. The twisted ring and its spectrum
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
# ## 2. Gauge invariance: what a change of frames can change
#
# Under $O'_{ij} = V_j^{-1}O_{ij}V_i$ the holonomy at the base point is conjugated,
# $\mathrm{Hol}' = V_{i_0}^{-1}\,\mathrm{Hol}\,V_{i_0}$ (the inner frames cancel), so its spectrum is invariant,
# while the matrix and the deviation $\lVert\mathrm{Hol} - I\rVert_F/\sqrt d$ are not (unless the frames are
# orthogonal) ([mathematical reference §B.6](reference.md#reference-b6), reconstructed).  The block operator changes by a
# block-diagonal similarity, so the spectrum of the connection Laplacian is gauge invariant too (it stops being
# symmetric, so we use a general eigensolver).
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
ax.set_xlabel(r"Re $\lambda$ (dimensionless)")
ax.set_ylabel(r"Im $\lambda$ (dimensionless)")
ax.set_aspect("equal")
ax.set_title("holonomy eigenvalues on triangles")
ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  On the ring $C_6$, what is the smallest eigenvalue of $2I - T$ at the twist θ = 2π?
#
# (a) 0  (b) $2 - 2\cos(2\pi/6)$, the bottom eigenvalue moved up one branch  (c) $2 - 2\cos(\pi/6)$
# (d) it depends on where the twist sits
#
# :::{dropdown} Answer
# (a).  The holonomy is $R(2\pi) = I$, so the connection is flat again and has parallel sections; in the closed form,
# $\lambda_{k,\pm}(2\pi) = 2 - 2\cos(2\pi(k \pm 1)/6)$ is the θ = 0 spectrum with $k$ relabelled — spectral flow
# returns the spectrum to itself while each branch has moved to its neighbour's place, so (b) mistakes the relabelling
# for a change.  (c) is the value at θ = π, and (d) is excluded by gauge invariance.
# :::
#
# **Check 2.**  Frames $V_i \in GL(2)$, not orthogonal, are applied to the twisted ring.  Which quantity is unchanged?
#
# (a) the matrix $\mathrm{Hol}$ at the base point  (b) $\lVert\mathrm{Hol} - I\rVert_F/\sqrt2$
# (c) the eigenvalues $e^{\pm i\theta}$ of $\mathrm{Hol}$  (d) the transport on each edge
#
# :::{dropdown} Answer
# (c).  The inner frames cancel around the loop and $\mathrm{Hol}' = V_{i_0}^{-1}\,\mathrm{Hol}\,V_{i_0}$: a similarity,
# which keeps the eigenvalues and changes the matrix (a) and its distance to $I$ (b) unless $V_{i_0}$ is orthogonal.
# The edge transports (d) are what the change of frames changes.
# :::
#
# **Check 3.**  Why does a connection with holonomy $R(\theta)$, $\theta \notin 2\pi\mathbb Z$, have no parallel section?
#
# (a) a parallel section would satisfy $X_0 = X_0\,\mathrm{Hol}$, and $R(\theta)$ has no eigenvalue 1
# (b) the transports are rotations, and rotations have no fixed vectors  (c) the ring is not simply connected
# (d) the unnormalised Laplacian is not stochastic
#
# :::{dropdown} Answer
# (a).  Following $X_i = X_jO_{ij}$ once around the loop brings $X_0$ back as $X_0\,\mathrm{Hol}$, so a nonzero section
# needs a fixed vector of the holonomy.  Each single rotation (b) is harmless — the flat connections of 10b are made of
# them — and the loop (c) only matters through its holonomy: at θ = 2π the same ring has parallel sections.  (d) is
# irrelevant: the kernel of $2I - T$ is the space of parallel sections whatever the normalisation.
# :::
#
# **Check 4.**  At θ = 0, why is every eigenvalue of $2I - T$ on $C_n$ at least double?
#
# (a) all transports are the identity, so $2I - T = (2I - A)\otimes I_2$: two copies of the scalar ring Laplacian
# (b) the ring is bipartite  (c) the symmetry $k \leftrightarrow n - k$ of $\cos(2\pi k/n)$  (d) rounding
#
# :::{dropdown} Answer
# (a).  With $O_{ij} = I$ each coordinate of the feature row diffuses on its own, so each eigenvalue of the scalar
# ring appears once per coordinate, the bottom one 0 included.  (c) is a second pairing, inside the scalar spectrum
# ($k = 0$, and $k = n/2$ for even $n$, have no partner), which is why most eigenvalues are four-fold at θ = 0; (b)
# fails for odd $n$, where every eigenvalue is still double; and the degeneracy is exact, not a rounding effect (d).
# :::

# %% [markdown]
# ## Recap
#
# * The twisted ring reproduces $2 - 2\cos((2\pi k \pm \theta)/n)$ to rounding for every twist; any nontrivial
#   holonomy lifts the bottom eigenvalue to $2 - 2\cos(\theta/n) > 0$, so no parallel section survives.
# * Spectral flow: after a full twist $\theta \to \theta + 2\pi$ the spectrum returns to itself while each branch has
#   moved to its neighbour's place.
# * Where the twist sits does not matter: all of it on one edge or spread evenly over the ring gives the same
#   spectrum to $10^{-13}$, because the two connections differ by a change of frames.
# * Under a change of frames the holonomy is conjugated by the frame at the base point: its eigenvalues
#   ($e^{\pm i\theta}$ on the ring) and the connection-Laplacian spectrum are invariant to $10^{-10}$, while
#   $\lVert\mathrm{Hol} - I\rVert_F$ changes unless the frames are orthogonal.
# * The same holds loop by loop on a random connection in $d = 3$: the holonomy spectra of all triangles of the
#   complete graph on six tokens are unchanged by random GL(3) frames, to $10^{-10}$ relative.

# %% [markdown]
# ## Exercises
#
# Use `cycle_connection`, `connection_laplacian` and `holonomy`.
# %% [markdown]
# ### Exercise 10c.1 (compute)
#
# **Degeneracy at half a turn.**  On the ring with $n = 8$, compute the holonomy of the loop $0 \to 1 \to \dots \to 7
# \to 0$ and the four smallest eigenvalues of $2I - T$ (`kind="unnormalized"`) at θ = π and at θ = 0.9π.
#
# *What a correct answer shows:* the holonomy is the rotation $R(\theta)$ to $10^{-14}$.  At θ = 0.9π the four values
# form two pairs, $2 - 2\cos(0.9\pi/8)$ twice and $2 - 2\cos(1.1\pi/8)$ twice; at θ = π all four agree to $10^{-14}$
# with $2 - 2\cos(\pi/8)$.  Explain both degeneracies from the closed form: why is every eigenvalue at least double
# (pair $(k, +)$ with $(n - k, -)$), and which branches cross at θ = π?
#
# **Answer in** `answer_10c_1`: a dict with keys `"holonomy"` (a dict `{"pi": …, "0.9pi": …}` of 2×2 arrays: the
# holonomy of the loop $0 \to 1 \to \dots \to 7 \to 0$ at θ = π and at θ = 0.9π) and `"smallest"` (a dict with the same
# keys: arrays of the four smallest eigenvalues of $2I - T$, ascending).

# %%
# your code here

# %% [markdown]
# ### Exercise 10c.2 (derive)
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
#
# **Answer in** `answer_10c_2`: a dict with keys `"phase"` (a sympy expression in the symbol `alpha`: the coefficient
# $c$ in $(Lf)_j = 2f_j - c\,f_{j-1} - \bar c\,f_{j+1}$ on the field $X_j = f_j\,(1, i)$), `"eigenvalue_plus"` and
# `"eigenvalue_minus"` (sympy expressions in the symbols `k`, `theta`, `n`: the eigenvalue of the eigenvector
# $X_j = e^{2\pi ikj/n}(1, i)$, respectively $e^{2\pi ikj/n}(1, -i)$) and `"residual"` (float: your largest
# $\lVert(2I - T)v - \lambda v\rVert$).

# %%
import sympy as sp  # noqa: F401  (for the symbolic check)

# your code here

# %% [markdown]
# ### Exercise 10c.3 (explore)
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
