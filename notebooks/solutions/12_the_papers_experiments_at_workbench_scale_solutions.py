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
# # Solutions — 12 The papers' experiments at workbench scale
#
# Worked answers to the exercises of notebook `12_the_papers_experiments_at_workbench_scale`.  Oracles: detailed balance in
# closed form, the value $\sqrt2$, a sympy identity, and the scaling law $e^{\bar H} \propto \beta^{-d/2}$ as a fitted
# slope with a stated margin.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp

from workbench.attention import effective_neighbours, native_spacing, reversibility_residual, softmax_rows
from workbench.experiments import swiss_roll_points

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(12)

# %% [markdown]
# ### Solution 12.1
#
# (a) $\mathsf P_{ij} = e^{S_{ij}}/r_i$ with $r_i = \sum_ke^{S_{ik}}$; then $\pi_i \propto r_i$ is stationary and
# $\pi_i\mathsf P_{ij} \propto e^{S_{ij}}$ is symmetric: detailed balance holds exactly, and $\varepsilon_{\mathrm{rev}}$ is
# rounding.  (b) The directed cycle has $\pi$ uniform and $F = \tfrac1nC$ with $C$ the cyclic shift; $C$ and $C^\top$ have
# disjoint supports (for $n \ge 3$), so $\lVert F - F^\top\rVert_F^2 = 2\lVert F\rVert_F^2$ and $\varepsilon_{\mathrm{rev}} =
# \sqrt2$.  (c) The mixtures have both reciprocal and one-way mass and lie in between.  Table 1 reports 1.414 for ATTN
# MHSA→FFN: that learned walk is, to three digits, a walk without any reciprocal edge — every step is one-way, like the
# cycle.

# %%
n = 6
S = rng.standard_normal((n, n))
S = (S + S.T) / 2
P_sym = softmax_rows(S)
cycle = np.roll(np.eye(n), 1, axis=1)  # i → i + 1 mod n
pi = np.exp(S).sum(axis=1)
pi = pi / pi.sum()
mixtures = {s: reversibility_residual((1 - s) * P_sym + s * cycle) for s in (0.1, 0.3, 0.5, 0.7, 0.9)}
answer_12_1 = {
    "S": S,
    "eps_symmetric": reversibility_residual(P_sym),
    "eps_cycle": reversibility_residual(cycle),
    "mixtures": mixtures,
}
print(
    f"(a) ε_rev = {reversibility_residual(P_sym):.1e};  (b) ε_rev − √2 = {reversibility_residual(cycle) - np.sqrt(2):.1e}"
)
print("(c)", {s: round(v, 4) for s, v in mixtures.items()})
# Oracles: the closed-form stationary law (π P = π and detailed balance, to a few ulps of entries of size ~1/n),
# the value √2 (a ratio of two Frobenius norms: a few ulps), strict bounds
assert np.abs(pi @ P_sym - pi).max() < 1e-15 and np.abs(pi[:, None] * P_sym - (pi[:, None] * P_sym).T).max() < 1e-15
assert reversibility_residual(P_sym) < 1e-14 and abs(reversibility_residual(cycle) - np.sqrt(2)) < 1e-14
assert all(0 < v < np.sqrt(2) for v in mixtures.values())

# %% [markdown]
# ### Solution 12.2
#
# Expand: $\lVert F - F^\top\rVert_F^2 = \sum_{ij}(F_{ij} - F_{ji})^2 = \sum_{ij}F_{ij}^2 + \sum_{ij}F_{ji}^2 - 2\sum_{ij}F_{ij}F_{ji}
# = 2\lVert F\rVert_F^2 - 2\sum_{ij}F_{ij}F_{ji}$.  With $F \ge 0$ the last sum is nonnegative, so
# $\varepsilon_{\mathrm{rev}}^2 \le 2$; and $\varepsilon_{\mathrm{rev}} \ge 0$ as a ratio of norms.
# Equality $\varepsilon_{\mathrm{rev}} = \sqrt2$ holds iff $F_{ij}F_{ji} = 0$ for all $i, j$: no reciprocal edges and,
# taking $i = j$, no self-loops ($F_{ii}^2 = 0$).  Equality at 0 is detailed balance, $F = F^\top$.

# %%
F = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"F{i}{j}", nonnegative=True))
lhs = sum((F[i, j] - F[j, i]) ** 2 for i in range(3) for j in range(3))
rhs = 2 * sum(F[i, j] ** 2 for i in range(3) for j in range(3)) - 2 * sum(
    F[i, j] * F[j, i] for i in range(3) for j in range(3)
)
print("sympy: lhs − rhs =", sp.expand(lhs - rhs))
assert sp.expand(lhs - rhs) == 0  # Oracle: exact symbolic algebra


def rhs_identity(F):
    """The right-hand side 2‖F‖_F² − 2 Σ_ij F_ij F_ji of the identity, for a numpy array F."""
    return 2 * np.sum(F**2) - 2 * np.sum(F * F.T)


samples = [rng.random((5, 5)) ** 6 for _ in range(200 if SMALL else 2000)]  # positive (irreducible), lopsided
walks = np.array([M / M.sum(axis=1, keepdims=True) for M in samples])  # rows normalised: walks
values = [reversibility_residual(P) for P in walks]
one_way = np.triu(np.ones((5, 5)), 1)  # edges i → j for j > i only: no reciprocal edge, no self-loop
one_way[0, 4], one_way[4, 0] = 0.0, 1.0  # close the loop 4 → 0 (not 0 → 4): irreducible, π unique
one_way = one_way / one_way.sum(axis=1, keepdims=True)
reciprocal = one_way.copy()
reciprocal[1, 0] = 0.5  # one reciprocal edge 0 ↔ 1
reciprocal = reciprocal / reciprocal.sum(axis=1, keepdims=True)
answer_12_2 = {
    "rhs": rhs_identity,
    "samples": walks,
    "values": np.array(values),
    "one_way": one_way,
    "reciprocal": reciprocal,
}
identity_gap = max(abs(rhs_identity(F) - np.linalg.norm(F - F.T) ** 2) / np.sum(F**2) for F in samples[:20])
print(f"numeric identity on 20 nonnegative matrices: largest relative gap {identity_gap:.1e}")
assert identity_gap < 1e-13  # Oracle: the left-hand side computed directly; sums of ~25 terms round to ~1e-16
print(f"random walks: max ε_rev = {max(values):.4f} ≤ √2 = {np.sqrt(2):.4f}")
print(
    f"one-way walk ε_rev = {reversibility_residual(one_way):.6f}; with one reciprocal edge {reversibility_residual(reciprocal):.6f}"
)
# Oracles: the bound (rounding margin 1e-12) and the equality case
assert max(values) <= np.sqrt(2) + 1e-12
assert (
    abs(reversibility_residual(one_way) - np.sqrt(2)) < 1e-12 and reversibility_residual(reciprocal) < np.sqrt(2) - 1e-3
)

# %% [markdown]
# ### Solution 12.3
#
# A row of $\mathsf P_\beta$ is a Gaussian of variance $1/(2\beta)$ per direction restricted to the data: on a
# $d$-dimensional set with density ρ its entropy is $\tfrac d2\log(\pi e/\beta) - \log\rho + o(1)$, so $e^{\bar H} \propto
# \beta^{-d/2}$ as long as the width is much larger than the spacing $h$ (else $e^{\bar H} \to 1$) and much smaller than the
# curvature radius and the extent of the set (else $e^{\bar H} \to n$).  The clean roll is a curve: slope $-1/2$.  The
# noisy roll is a band of finite width: once the Gaussian width drops towards the band's width, the walk sees two
# dimensions, and the slope steepens towards −1.  A Table 1 value near 1 (DMAP MHSA→FFN: 1.14) means a width below the
# spacing: the layer has learned an almost deterministic, identity-like walk.

# %%


def slope_of_neighbours(points, window):
    d2 = ((points[:, None] - points[None]) ** 2).sum(axis=-1)
    h = native_spacing(points)
    betas = np.geomspace(*window, 9) / h**2
    counts = np.array([effective_neighbours(softmax_rows(-beta * d2)) for beta in betas])
    return np.polyfit(np.log(betas), np.log(counts), 1)[0], betas * h**2, counts


size = 1500 if SMALL else 3000
clean_slope, grid, clean = slope_of_neighbours(swiss_roll_points(size, seed=0, noise=0.0), (0.003, 0.1))
noisy_slope, _, noisy = slope_of_neighbours(swiss_roll_points(size, seed=0, noise=0.5), (0.003, 0.1))
print(f"slope of log e^H̄ against log β: clean roll {clean_slope:.3f}, noisy roll {noisy_slope:.3f}")
# Oracle: the scaling law e^H̄ ∝ β^(−d/2) with d = 1; the window is finite (spacing and curvature corrections),
# hence the margin 0.05.  The noisy roll must be steeper than the curve's −1/2 by a clear margin.
assert abs(clean_slope + 0.5) < 0.05 and noisy_slope < -0.55

fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
ax.loglog(grid, clean, "o-", label=f"clean roll (curve): slope {clean_slope:.2f}")
ax.loglog(grid, noisy, "s-", label=f"noisy roll (band): slope {noisy_slope:.2f}")
ax.set_xlabel(r"$\beta h^2$ (dimensionless)")
ax.set_ylabel(r"$e^{\bar H}$ (effective neighbours)")
ax.set_xticks([0.003, 0.01, 0.03, 0.1], ["0.003", "0.01", "0.03", "0.1"])
ax.set_xticks([], minor=True)
ax.legend(fontsize=8)
plt.show()
