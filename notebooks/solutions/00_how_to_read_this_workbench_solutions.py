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
# # Solutions — 00 How to read this workbench
#
# Worked answers to the exercises of notebook `00_how_to_read_this_workbench.py`.  Every answer
# is computed and then asserted against an independent oracle; the comment on each assert names
# the oracle and says why the tolerance is what it is.

# %%
import os

import matplotlib.pyplot as plt
import mpmath
import numpy as np
import scipy.linalg
import sympy as sp

from workbench.catalogue import discover, fit_rate, run_checks, select
from workbench.continuum import softmax_first_order, softmax_second_order
from workbench.expmv import phi1
from workbench.markov import softmax_operator

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(0)
EPS = np.finfo(float).eps

# %% [markdown]
# ### Solution 00.1
#
# With $J^\top = -J$ and $J^2 = -I$: $A^\top J + JA = S^\top J^\top J + J^2 S = S - S = 0$.  Then
# $\frac{d}{dt}\bigl(W^\top JW\bigr) = W^\top(A^\top J + JA)W = 0$ and $W(0) = I$, so $W^\top JW = J$
# for every $t$.  In floating point, products with $J$ only move entries and flip signs, so the
# first identity holds *exactly*; $W = e^{tA}$ itself is rounded, and an error $\delta W$ of
# relative size $u$ in $W$ shows up in $W^\top JW$ as about $2u\lVert W\rVert^2$.  That is why the
# fair residual divides by $\max\lvert W_{ij}\rvert^2$, as the catalogue does.
#
# The choice matters only once $W$ is large.  This $A$ has a real eigenvalue $\lambda \approx 0.52$, so
# $\max\lvert W_{ij}\rvert$ grows like $e^{\lambda t}$: about 1.6 at $t = 1$, 240 at $t = 10$, $3\cdot10^4$ at $t = 20$ and
# $3\cdot10^6$ at $t = 30$.  Divided by $\max\lvert W_{ij}\rvert^2$ the residual stays at a few $10^{-17}$ throughout; divided by
# $\max\lvert W_{ij}\rvert$ alone it is still of the order of $u\max\lvert W_{ij}\rvert$, which passes the tolerance
# $100\,n\,\varepsilon \approx 1.3\cdot10^{-13}$ at $t \le 10$ but exceeds it about 13-fold at $t = 20$ and 4600-fold at
# $t = 30$: an exact identity would be reported as failing.

# %%
half = 3
n = 2 * half
J = np.block([[np.zeros((half, half)), np.eye(half)], [-np.eye(half), np.zeros((half, half))]])
G = np.random.default_rng(1).standard_normal((n, n)) / np.sqrt(n)  # the exercise's G
S = (G + G.T) / 2  # exactly symmetric in floating point
A = J @ S
hamiltonian_residual = np.abs(A.T @ J + J @ A).max()
assert hamiltonian_residual == 0  # oracle: exact algebra (signed permutations)
tolerance = 100 * n * EPS  # the catalogue's tolerance for this identity
largest, residuals, relative_residuals = {}, {}, {}
for t in (1.0, 10.0, 20.0, 30.0):
    W = scipy.linalg.expm(t * A)
    residual = np.abs(W.T @ J @ W - J).max()
    relative = residual / np.abs(W).max() ** 2
    largest[t], residuals[t], relative_residuals[t] = np.abs(W).max(), residual, relative
    print(
        f"t = {t:2g}: max|W| = {largest[t]:9.3g}, residual {residual:.1e}, "
        f"/ max|W|² {relative:.1e}, / max|W| {residual / largest[t]:.1e}  (tolerance {tolerance:.1e})"
    )
    assert relative < tolerance  # oracle: the defining equation WᵀJW = J; rounding scales with ‖W‖²
# the lesson: dividing by max|W| alone is fair only while ‖W‖ is of order 1; at t = 30 it is far above tolerance
assert residuals[30.0] / largest[30.0] > 100 * tolerance
results = run_checks(select(discover(), name="structure.exp.hamiltonian_to_symplectic"), backends=("numpy",))
for r in results:
    print(f"catalogue {r.backend}: passed {r.passed}, residual {r.residual:.1e}, tolerance {r.tolerance:.1e}")
assert all(r.passed for r in results)
answer_00_1 = {
    "S": S,
    "A": A,
    "hamiltonian_residual": hamiltonian_residual,
    "max_W": largest,
    "residual": residuals,
    "relative": relative_residuals,
    "tolerance": tolerance,
}

# %% [markdown]
# ### Solution 00.2
#
# $e^{\beta S_j} = 1 + \beta S_j + O(\beta^2)$ and $\sum_l e^{\beta S_l} = N(1 + \beta\bar S) + O(\beta^2)$, so
#
# $$p_j = \frac{1 + \beta S_j}{N(1 + \beta\bar S)} + O(\beta^2) = \frac1N\bigl(1 + \beta S_j - \beta\bar S\bigr) + O(\beta^2).$$
#
# Adding $c$ to every score of the row multiplies numerator and denominator by $e^{\beta c}$:
# the softmax is unchanged *exactly*, and at first order $S_j - \bar S$ is unchanged too.  In
# matrix form the correction is $(\beta/N)\,S(I - N^{-1}\mathbf 1\mathbf 1^\top)$: right
# multiplication by the centring projector subtracts each row's mean.
#
# Numerically the first-order remainder must be the *next* term of the series, not merely small:
# `softmax_second_order` adds $\beta^2C_2$ with $C_2 = \frac1{2N}(\tilde S^{\odot2} - v\mathbf 1^\top)$
# ($\tilde S$ the row-centred scores, $v_i$ the row variances), so the remainder divided by that term
# must be $1 + O(\beta)$.

# %%
beta = sp.Symbol("beta")
scores = sp.symbols("S1:4")
N = len(scores)
denominator = sum(sp.exp(beta * s) for s in scores)
mean = sum(scores) / N
expansion = []
for j, s in enumerate(scores):
    first_order = sp.series(sp.exp(beta * s) / denominator, beta, 0, 2).removeO()
    claimed = sp.Rational(1, N) + beta / N * (s - mean)
    assert sp.simplify(first_order - claimed) == 0  # oracle: sympy's Taylor series, exact
    expansion.append(claimed)
    print(f"p_{j + 1} = {sp.expand(first_order)}")

b = 1e-4
M = rng.standard_normal((8, 8))
remainder = softmax_operator(M, b) - softmax_first_order(M, b)
second = softmax_second_order(M, b) - softmax_first_order(M, b)  # β²C₂, a closed form computed separately
gap = np.abs(remainder).max()
print(f"numeric gap at β = {b:g}: {gap:.1e} = {gap / b**2:.3f} β²")
# the gap is O(β²), not O(β): its coefficient is a row variance over 2N, of order 1 for standard-normal scores
assert 1e-2 * b**2 < gap < 10 * b**2
# oracle: the closed-form second-order term β²C₂; what is left is β³C₃ + rounding, with |C₃|/|C₂| at most of order
# max|S| ≈ 3, so the relative gap is ≲ 3β = 3e-4 (measured ~4e-5; the ~1e-17 rounding of entries is 1e-8 relative)
relative_to_second = np.abs(remainder - second).max() / np.abs(second).max()
assert relative_to_second < 1e-3
answer_00_2 = {
    "expansion": expansion,
    "M": M,
    "beta": b,
    "gap": gap,
    "relative_to_second": relative_to_second,
}

# %% [markdown]
# ### Solution 00.3
#
# Computing $e^z$ for tiny $z$ rounds the exact $1 + z + \dots$ to a double next to 1 with an
# absolute error of up to $u = 2^{-53}$.  The subtraction of 1 is exact (Sterbenz' lemma), so it
# keeps that absolute error; dividing by $z$ turns it into a relative error of order $u/z$.  The
# error is therefore $C z^{-1}$: slope $-1$ and $C \le u$.  `expm1` computes $e^z - 1$ directly,
# without ever forming the rounded $1 + z$, and keeps its relative error at a few $u$.

# %%
z = np.geomspace(1e-15, 1e-3, 200)
with mpmath.workdps(40):
    reference = np.array([float(mpmath.expm1(mpmath.mpf(x)) / mpmath.mpf(x)) for x in z])
naive_error = np.abs((np.exp(z) - 1) / z - reference) / reference
stable_error = np.abs(phi1(z) - reference) / reference
windows = naive_error.reshape(10, 20).max(axis=1)
z_windows = z.reshape(10, 20)[np.arange(10), naive_error.reshape(10, 20).argmax(axis=1)]
slope = fit_rate(z_windows, windows)
print(f"fitted slope of the naive error: {slope:.3f}; max z·error / u = {np.max(naive_error * z) / (EPS / 2):.2f}")
print(f"expm1 form: max relative error {stable_error.max():.1e} = {stable_error.max() / (EPS / 2):.1f} u")
assert abs(slope + 1) < 0.1  # oracle: the u/z cancellation model; window maxima scatter by a factor < 2
assert np.all(naive_error * z <= EPS)  # the error is bounded by u/z (u = EPS/2), with a factor 2 to spare
assert stable_error.max() < 8 * EPS  # expm1 and one division: a few units of roundoff

fig, ax = plt.subplots(figsize=(5.5, 3.3), layout="constrained")
ax.loglog(z, naive_error + 1e-18, ".", ms=3, label=r"naive $(e^z - 1)/z$")
ax.loglog(z_windows, windows, "o", label=f"window maxima, slope {slope:.2f}")
ax.loglog(z, EPS / 2 / z, "k--", label=r"$u/z$, $u = 2^{-53}$")
ax.loglog(z, stable_error + 1e-18, ".", ms=3, label=r"expm1$(z)/z$")
ax.set_xlabel(r"$z$ (dimensionless)")
ax.set_ylabel("relative error (floored at 1e-18)")
ax.set_title("catastrophic cancellation in $e^z - 1$")
ax.legend(fontsize=8)
plt.show()
