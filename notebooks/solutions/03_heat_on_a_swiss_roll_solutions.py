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
# # Solutions — 03 Heat on a Swiss roll
#
# Worked answers to the exercises of notebook `03_heat_on_a_swiss_roll.py`.  Every answer is
# computed and then asserted against an independent oracle; the comment on each assert names the
# oracle and says why the tolerance is what it is.  The set-up repeats the notebook's: the same
# samples, the same local bandwidth.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.integrate
import scipy.sparse
import sympy as sp
from matplotlib.ticker import NullFormatter

from workbench.markov import MarkovOperator, SwissRoll, bandwidth_sweep, gauss_kernel_sparse

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
n = 4000 if SMALL else 16000
k = 40

roll = SwissRoll(sampling="parameter")
X = roll.sample(n, seed=0)
s, h = roll.intrinsic_coordinates(X).T
ell, H = roll.arc_length, roll.height
rho = roll.density(X)
beta = bandwidth_sweep(X, k=k, seed=0).beta
interior = (s > 10) & (s < ell - 10) & (h > 4) & (h < 17)
print(f"n = {n}, β = {beta:.3f}")

# %% [markdown]
# ### Solution 03.1
#
# For a symmetric kernel, $\pi_i\mathsf P_{ij} = \frac{q_i}{\sum q}\cdot\frac{\mathsf K_{ij}}{q_i} = \frac{\mathsf K_{ij}}{\sum q}$
# is symmetric in $i, j$: detailed balance, and summing over $i$ gives $(\pi\mathsf P)_j = \pi_j$.  No
# eigenproblem is needed.  The α-normalised kernel $\mathsf K^{(1)}$ is symmetric too, so the same
# argument gives $\pi \propto \mathsf K^{(1)}\mathbf 1$.

# %%
K = gauss_kernel_sparse(X, beta, k=k)
q = np.asarray(K.sum(axis=1)).ravel()
inverse = scipy.sparse.diags_array(1 / q)
K1 = (inverse @ K @ inverse).tocsr()
by_hand = {0.0: q / q.sum(), 1.0: np.asarray(K1.sum(axis=1)).ravel() / K1.sum()}
gaps, stationarity, balance = {}, {}, {}
for alpha, pi_hand in by_hand.items():
    op = MarkovOperator.from_points(X, beta, alpha=alpha, k=k)
    P = op.P.tocsr()
    gaps[alpha] = np.abs(op.stationary - pi_hand).max()
    stationarity[alpha] = np.abs(P.T @ pi_hand - pi_hand).sum()
    flux = (scipy.sparse.diags_array(pi_hand) @ P).tocsr()
    balance[alpha] = abs(flux - flux.T).max()
    print(
        f"α = {alpha:g}: |π − by hand| {gaps[alpha]:.1e}, ‖πP − π‖₁ {stationarity[alpha]:.1e}, "
        f"max|π_i P_ij − π_j P_ji| {balance[alpha]:.1e} (π ~ {pi_hand.mean():.1e})"
    )
answer_03_1 = {"K": K, "pi": by_hand, "stationarity": stationarity, "balance": balance}

for alpha in by_hand:
    # oracle: the closed-form degree law; entries ~1e-4 summed over ≤ 2k terms: rounding ~1e-19 each
    assert gaps[alpha] < 1e-15 and stationarity[alpha] < 1e-13 and balance[alpha] < 1e-16

# %% [markdown]
# ### Solution 03.2
#
# (a) $c'(t) = (\cos t - t\sin t,\ \sin t + t\cos t)$, so $\lvert c'\rvert^2 = 1 + t^2$ (the cross terms
# cancel), and $\frac{d}{dt}\tfrac12\bigl(t\sqrt{1+t^2} + \operatorname{arsinh}t\bigr) = \tfrac12\bigl(\sqrt{1+t^2} + \tfrac{t^2}{\sqrt{1+t^2}} + \tfrac1{\sqrt{1+t^2}}\bigr) = \sqrt{1+t^2}$.
#
# (b) The area element of the sheet is $dA = ds\,dh = \sqrt{1+t^2}\,dt\,dh$, and the sampling
# density in $(t, h)$ is $1/((t_1 - t_0)H)$, so with respect to area
# $\rho = 1/\bigl((t_1 - t_0)H\sqrt{1+t^2}\bigr)$: densest on the inner turn.  The ratio inner/outer is
# $\sqrt{1 + t_1^2}/\sqrt{1 + t_0^2} = \sqrt{1 + 81\pi^2/4}/\sqrt{1 + 9\pi^2/4} \approx 2.94$.  The
# density of the arc length alone is $\rho H$, so a bin $[a, b]$ of $s$ holds the fraction
# $(t(b) - t(a))/(t_1 - t_0)$ of the samples.

# %%
t, t0, t1 = sp.symbols("t t_0 t_1", positive=True)
curve = sp.Matrix([t * sp.cos(t), t * sp.sin(t)])
speed2 = sp.simplify(curve.diff(t).dot(curve.diff(t)))
arc = (t * sp.sqrt(1 + t**2) + sp.asinh(t)) / 2
ell_exact = float(arc.subs(t, 9 * sp.pi / 2) - arc.subs(t, 3 * sp.pi / 2))
# an oracle that does not use the closed form: adaptive quadrature of the speed √(1 + t²) over [t₀, t₁]
ell_quad, quad_error = scipy.integrate.quad(lambda x: np.sqrt(1 + x * x), 3 * np.pi / 2, 9 * np.pi / 2, epsabs=1e-13)
ratio = float((sp.sqrt(1 + t1**2) / sp.sqrt(1 + t0**2)).subs({t0: 3 * sp.pi / 2, t1: 9 * sp.pi / 2}))
# the histogram of s against the predicted bin fractions (t from s by the library's inverse)
edges = np.linspace(0, ell, 19)
t_edges = roll.parameter_from_arc_length(edges)
expected = n * np.diff(t_edges) / (roll.t_end - roll.t_start)
observed = np.histogram(s, bins=edges)[0]
z_scores = (observed - expected) / np.sqrt(expected)
answer_03_2 = {
    "speed_squared": speed2,
    "arc_length": arc,
    "ell": ell_exact,
    "ell_quad": ell_quad,
    "ratio": ratio,
    "s": s,
    "edges": edges,
    "observed": observed,
    "expected": expected,
}

print(f"ℓ = {ell_exact:.12f} (sympy), {ell:.12f} (roll.arc_length)")
print(f"ℓ = {ell_quad:.12f} (quadrature of the speed, error estimate {quad_error:.0e})")
print(f"predicted max/min density {ratio:.4f}; sampled {rho.max() / rho.min():.4f}")
print(f"bins: max |observed − expected| / √expected = {np.abs(z_scores).max():.2f}")
assert sp.simplify(speed2 - (1 + t**2)) == 0  # oracle: sympy, exact
assert sp.simplify(sp.diff(arc, t) - sp.sqrt(1 + t**2)) == 0
assert abs(ell_exact - ell) < 1e-12  # the library evaluates the same closed form: rounding only
assert abs(ell_quad - ell) < 1e-10  # Gauss–Kronrod on a smooth integrand: error ≪ 1e-10 on a value of 89
# the sampled ratio cannot exceed the edge ratio; and it falls short of it only if no sample lies in the outer 0.5 %
# of [t₀, t₁] at one end (probability 0.995ⁿ ≈ e⁻²⁰), where log ρ changes by at most t/(1 + t²)·Δt < 1 % per end
assert rho.max() / rho.min() <= ratio + 1e-12 and rho.max() / rho.min() > 0.98 * ratio
assert np.abs(z_scores).max() < 4  # oracle: Poisson counts; 18 bins, a 4σ excursion has probability ~1e-3

fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
ax.stairs(observed / (n * np.diff(edges)), edges, label="sampled arc lengths")
centres = (edges[1:] + edges[:-1]) / 2
ax.plot(centres, expected / (n * np.diff(edges)), "k--", label=r"predicted $\rho H = 1/((t_1 - t_0)\sqrt{1+t^2})$")
ax.set_xlabel("arc length s (inner → outer turn)")
ax.set_ylabel("density of s (per unit length)")
ax.set_title("uniform in the parameter is not uniform in area")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Solution 03.3
#
# With the unit diagonal the degree is $1 + c\rho$, where $c\rho \approx n\rho\pi/\beta$ is the
# kernel density estimate; its log-slope in $\rho$ is $c\rho/(1 + c\rho) = (m - 1)/m$ at the median
# degree $m$.  This explains the unit-diagonal slopes for β at and above the sweep's value.  At the
# small-β end the Gaussian has not decayed by the $k$-th neighbour: the truncation to $k$
# neighbours — a *density-adaptive* radius — caps the degree near the same value everywhere and
# flattens $\pi$ for both diagonals.  At the large-β end only one or two neighbours lie within
# reach: the unit diagonal dominates the degree (slope $\to 0$), and without it the density
# estimate from so few neighbours is noisy and its log is biased (slope overshoots 1).  The
# local bandwidth chosen by the sweep is the compromise between the two failures.

# %%
factors = np.array([0.25, 0.5, 1, 2, 4, 8])
rows = []
for factor in factors:
    b = factor * beta
    degree = np.asarray(gauss_kernel_sparse(X, b, k=k).sum(axis=1)).ravel()
    m = np.median(degree[interior])
    slope_unit, slope_zero = (
        np.polyfit(
            np.log(rho[interior]),
            np.log(MarkovOperator.from_points(X, b, k=k, zero_diagonal=zero).stationary[interior]),
            1,
        )[0]
        for zero in (False, True)
    )
    rows.append((m, slope_unit, slope_zero))
    print(
        f"β = {factor:4g} × sweep: median degree {m:5.2f}, slope unit diagonal {slope_unit:+.3f} "
        f"(predicted (m−1)/m = {(m - 1) / m:.3f}), K_ii = 0 {slope_zero:+.3f}"
    )
m, slope_unit, slope_zero = np.array(rows).T
at_or_above = factors >= 1
# oracle: the degree model 1 + cρ; it neglects the noise of the density estimate, hence 0.06
assert np.all(np.abs(slope_unit - (m - 1) / m)[at_or_above] < 0.06)
assert abs(slope_zero[2] - 1) < 0.1  # at the sweep's β the zero-diagonal slope is 1 (the KDE model of the notebook)
assert slope_zero[0] < 0.8 and slope_zero[-1] > 1.2  # and leaves it at both ends

fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
ax.semilogx(factors, slope_zero, "o-", color="C3", label=r"$K_{ii} = 0$")
ax.semilogx(factors, slope_unit, "s-", color="C0", label="unit diagonal")
ax.semilogx(factors, (m - 1) / m, "k--", lw=1, label=r"$(m - 1)/m$, m = median degree")
ax.axhline(1, color="grey", lw=0.8, ls=":")
ax.axvline(1, color="grey", lw=0.8, ls=":")
ax.set_xticks(factors, [f"{f:g}" for f in factors])
ax.xaxis.set_minor_formatter(NullFormatter())  # the default minor labels collide with these
ax.set_xlabel("β / (sweep's β)")
ax.set_ylabel(r"slope of $\log\pi$ against $\log\rho$")
ax.set_title("the equilibrium sees the density only at a local bandwidth")
ax.legend(fontsize=8)
plt.show()
