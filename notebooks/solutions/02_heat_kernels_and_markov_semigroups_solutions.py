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
# # Solutions — 02 Heat kernels and Markov semigroups, fast
#
# Worked answers to the exercises of notebook `02_heat_kernels_and_markov_semigroups.py`.  Every
# answer is computed and then asserted against an independent oracle; the comment on each assert
# names the oracle and says why the tolerance is what it is.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse
import scipy.special
import sympy as sp
from matplotlib.ticker import NullFormatter, ScalarFormatter

from workbench.catalogue import fit_rate
from workbench.expmv import expmv

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
METHODS = ("taylor", "krylov", "chebyshev", "uniformization")


def ring_generator(n, *, closed=True):
    """−L of the cycle (closed) or path graph, rate 1 to each neighbour (as in the notebook)."""
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


# %% [markdown]
# ### Solution 02.1
#
# For an interior vertex, $(\mathsf L\phi_k)(j) = 2\phi_k(j) - \phi_k(j-1) - \phi_k(j+1) = (2 - 2\cos\theta)\phi_k(j)$
# with $\theta = \pi k/n$, by the sum formula for cosines.  At the ends the Neumann-like rows
# $\phi_k(0) - \phi_k(1)$ hold because the cosine is symmetric about $j = -\tfrac12$ and
# $j = n - \tfrac12$: the "ghost" values equal the boundary ones.  The eigenvectors are orthogonal
# (a symmetric matrix with distinct eigenvalues), so after normalisation
# $e^{-t\mathsf L}\delta_s = \sum_k e^{-t\lambda_k}\phi_k\,\phi_k(s)$.

# %%
n, t, s = 300, 50.0, 60
Q = ring_generator(n, closed=False)
k = np.arange(n)
lam = 2 - 2 * np.cos(np.pi * k / n)
Phi = np.cos(np.pi * np.outer(np.arange(n) + 0.5, k) / n)
Phi /= np.linalg.norm(Phi, axis=0)
eigen_residual = np.abs(Q @ Phi + Phi * lam).max()
exact = Phi @ (np.exp(-t * lam) * Phi[s])
heat = {method: expmv(Q, point_mass(n, s), t, method=method) for method in METHODS}
answer_02_1 = {
    "n": n,
    "t": t,
    "source": s,
    "eigenvalues": lam,
    "eigenvectors": Phi,
    "eigen_residual": eigen_residual,
    "spectral": exact,
    "expmv": heat,
}

print(f"max_k ‖Lφ_k − λ_kφ_k‖_max = {eigen_residual:.1e}")
assert eigen_residual < 1e-13  # oracle: the analytic eigen-pairs; cos of arguments up to 300π loses ~3 digits
assert abs(exact.sum() - 1) < 1e-12  # mass: only φ₀ (constant, λ₀ = 0) has a nonzero sum
for method, y in heat.items():
    error = np.linalg.norm(y - exact) / np.linalg.norm(exact)
    print(f"{method:15s} relative error against the spectral sum {error:.1e}")
    assert error < 1e-13  # oracle: the DCT spectral sum (dense, rounding ~1e-15); default tol is 2^-53

# %% [markdown]
# ### Solution 02.2
#
# (a) $N_\pm$ are independent Poisson($t$), $\mathbb E[z^{N_+}] = e^{t(z-1)}$ and $\mathbb E[z^{-N_-}] = e^{t(1/z-1)}$,
# so $\mathbb E[z^D] = e^{t(z + 1/z - 2)} = e^{-2t}\sum_k I_k(2t)z^k$, and the coefficient of $z^k$ is
# $P(D = k) = e^{-2t}I_k(2t)$ — exactly `ive(k, 2t)`.  Wrapping $\mathbb Z$ onto $\mathbb Z/N$ adds
# the windings of section 2.
#
# (b) With $G(z) = \mathbb E[z^D]$: $\mathbb E[D] = G'(1) = t(1 - 1) = 0$ and
# $\mathbb E[D^2] = (z\partial_z)^2G\big|_{z=1} = G''(1) + G'(1) = 2t$.  (Or: $\operatorname{Var}D = \operatorname{Var}N_+ + \operatorname{Var}N_- = 2t$.)
#
# The variance grows like $t$ — diffusion — so the heat's width grows like $\sqrt t$; the kernel
# is negligible beyond a few widths, and a polynomial in $A$ of degree $K$ reaches exactly $K$
# edges.  That is the combinatorial reason why a degree $\propto\sqrt t$ suffices for Chebyshev.

# %%
z, tt = sp.symbols("z t", positive=True)
G = sp.exp(tt * (z + 1 / z - 2))
mean = sp.simplify(sp.diff(G, z).subs(z, 1))
second = sp.simplify((z * sp.diff(z * sp.diff(G, z), z)).subs(z, 1))
print(f"E[D] = {mean}, E[D²] = {second}")

sums = {}
for t in (0.5, 5.0, 50.0):
    k = np.arange(-3000, 3001)
    weights = scipy.special.ive(k, 2 * t)
    sums[t] = (weights.sum(), (k**2 * weights).sum())
    print(f"t = {t:4g}: Σ weights − 1 = {sums[t][0] - 1:+.1e}, Σ k² weights / 2t − 1 = {sums[t][1] / (2 * t) - 1:+.1e}")

N, t = 4000, 50.0
y = expmv(ring_generator(N), point_mass(N, 0), t)
distance = np.minimum(np.arange(N), N - np.arange(N))  # no wrap-around: the heat at distance 2000 is ~1e-600
moment = np.sum(distance**2 * y)
print(f"expmv on the cycle of {N}: second moment {moment:.12f} (2t = {2 * t:g})")
answer_02_2 = {
    "mean": mean,
    "second_moment": second,
    "ive_sums": sums,
    "N": N,
    "t_expmv": t,
    "expmv_second_moment": moment,
}

assert mean == 0 and sp.simplify(second - 2 * tt) == 0  # oracle: sympy, exact
for t, (total, second_moment) in sums.items():
    # oracle: (b); ive to ~1e-15 each
    assert abs(total - 1) < 1e-12 and abs(second_moment / (2 * t) - 1) < 1e-12
assert abs(moment / (2 * answer_02_2["t_expmv"]) - 1) < 1e-12  # oracle: (b); a normwise 2^-53 result

# %% [markdown]
# ### Solution 02.3
#
# For $x = tw/2$ large and $k \ll x$, $I_k(x)e^{-x} \approx e^{-k^2/(2x)}/\sqrt{2\pi x}$, so the
# coefficients fall below $\mathrm{tol}$ once $k^2 > 2x\log(1/\mathrm{tol})$: degree
# $K \approx \sqrt{2x\log(1/\mathrm{tol})} = \sqrt{tw\log(1/\mathrm{tol})}$.  On log–log axes against
# $\log(1/\mathrm{tol})$ that is a slope of 1/2, and the level grows like $\sqrt t$.  The measured
# slopes sit at $0.5 \pm 0.05$; the prefactor $1/\sqrt{2\pi x}$ and the method's own safety margin
# account for the few per cent of difference.  Tolerance is cheap: $10^{12}$ more accuracy for
# $\sqrt7$ more products.

# %%
N = 400
A = ring_generator(N)
tols = np.geomspace(1e-2, 1e-14, 7)
logs = np.log(1 / tols)
fig, ax = plt.subplots(figsize=(7, 3.6), layout="constrained")
for t, colour in zip((10.0, 100.0, 1000.0), ("C0", "C1", "C2"), strict=True):
    degrees = []
    for tol in tols:
        y, info = expmv(A, point_mass(N, 0), t, method="chebyshev", tol=tol, return_info=True)
        degrees.append(info["degree"])
    degrees = np.array(degrees)
    predicted = np.sqrt(2 * (t * 4 / 2) * logs)
    slope = fit_rate(logs, degrees)
    worst = np.max(np.abs(degrees / predicted - 1))
    print(f"t = {t:6g}: degrees {degrees.tolist()}, slope {slope:.3f}, max |measured/predicted − 1| = {worst:.2f}")
    assert abs(slope - 0.5) < 0.1  # oracle: the Gaussian decay of I_k(x)e^{-x}; finite-x corrections
    assert worst < 0.12  # the prediction ignores the prefactor and the method's safety margin
    ax.loglog(logs, degrees, "o", color=colour, label=f"t = {t:g}, slope {slope:.2f}")
    ax.loglog(logs, predicted, "--", color=colour, lw=1)
ax.plot([], [], "k--", lw=1, label=r"prediction $\sqrt{tw\log(1/\mathrm{tol})}$")
for axis in (ax.xaxis, ax.yaxis):
    axis.set_major_formatter(ScalarFormatter())
    axis.set_minor_formatter(NullFormatter())
ax.set_xticks([5, 10, 20, 30])
ax.set_yticks([15, 30, 60, 120, 240, 360])
ax.set_xlabel(r"$\log(1/\mathrm{tol})$ (dimensionless)")
ax.set_ylabel("Chebyshev degree")
ax.set_title("cycle, w = 4: degree against the requested accuracy")
ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
plt.show()
