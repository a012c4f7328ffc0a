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
# # 00 — How to read this workbench
#
# Every claim in the workbench exists three times: as a **statement** with its source, as a
# **symbolic derivation** that sympy checks step by step, and as a **numeric verification** on
# sampled data.  This notebook shows the three faces on the first four identities of the
# catalogue:
#
# 1. the exponential maps a Lie algebra into its group (orthogonal, SPD, stochastic, symplectic);
# 2. the rank-one exponential $e^{uv^\top} = I + \varphi_1(v^\top u)\,uv^\top$;
# 3. the small-β softmax expansion, checked as a **rate**;
# 4. the Dirichlet form of a Gauss kernel on a sampled point cloud.
#
# At the end you will know what `workbench check` prints and why each row passes.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg

from workbench.catalogue import discover, fit_rate, run_checks
from workbench.continuum import softmax_first_order
from workbench.expmv import expm_rank1, phi1
from workbench.markov import (
    dirichlet_form,
    gauss_kernel,
    markov_operator,
    markov_semigroup,
    reversible_stationary_law,
    softmax_operator,
)

SMALL = os.environ.get("WORKBENCH_SCALE", "small") == "small"
rng = np.random.default_rng(0)

# %% [markdown]
# ## What an identity is
#
# The catalogue is discovered through the entry-point group `workbench.derivations`; the
# repository's own `derivations/` package registers itself there exactly as a course of yours
# could.  Each record carries a name, an area, a LaTeX statement and a source.

# %%
catalogue = discover()
for identity in catalogue:
    print(f"{identity.name:42s} {identity.area:10s} {identity.source}")

# %% [markdown]
# `derive()` returns the steps of the symbolic derivation.  Steps marked ✓ are equalities that
# sympy has decided; a single ✗ makes the identity fail.

# %%
rank_one = next(i for i in catalogue if i.name == "expmv.rank_one.closed_form")
for step in rank_one.derive():
    mark = {None: "·", True: "✓", False: "✗"}[step.holds]
    print(mark, step.text)

# %% [markdown]
# ## How `workbench check` works
#
# `workbench check` runs every identity once symbolically (backend `sympy`) and once per numeric
# backend: numpy always, torch when it is installed.  Each numeric check returns a residual and
# the tolerance it must meet — or, for an asymptotic identity, a fitted rate and the rate it must
# match.  Here is the same run from Python:

# %%
results = run_checks(catalogue, seed=0, scale="small", backends=("numpy",))
for r in results:
    if r.rate is not None:
        shown = f"rate {r.rate:.3f} (expected {r.expected_rate:g})"
    else:
        shown = f"residual {r.residual:.2e}"
    print(f"{'pass' if r.passed else 'FAIL'}  {r.backend:6s} {r.name:42s} {shown}  ≤ {r.tolerance:.1e}")
assert all(r.passed for r in results)

# %% [markdown]
# ## 1. Structure by construction
#
# If $A^\top G + GA = 0$ then $W(t) = e^{tA}$ keeps the quadratic form: $W^\top G W = G$.
# With $G = I$ this is "skew ↦ orthogonal", with $G = J$ "Hamiltonian ↦ symplectic".  A Markov
# generator $Q$ (off-diagonal rates ≥ 0, rows summing to 0) exponentiates to a row-stochastic
# matrix.

# %%
n = 6
g = rng.standard_normal((n, n)) / np.sqrt(n)
W = scipy.linalg.expm(g - g.T)
print("‖WᵀW − I‖ =", np.abs(W.T @ W - np.eye(n)).max())

rates = rng.exponential(size=(n, n)) * (1 - np.eye(n))
Q = rates - np.diag(rates.sum(axis=1))
P = markov_semigroup(Q, t=0.5)  # validates Q as a generator, then exponentiates
print("row sums of e^{Q/2}:", P.sum(axis=1).round(15), " min entry:", P.min())

# %% [markdown]
# ## 2. The rank-one exponential
#
# Since $(uv^\top)^k = (v^\top u)^{k-1}uv^\top$, the whole series collapses to
# $\varphi_1(z) = (e^z - 1)/z$.  The formula must survive $v^\top u \to 0$: the naive quotient
# loses every digit there, while `phi1` (evaluated as `expm1(z)/z`) does not.

# %%
u, v = rng.standard_normal(n), rng.standard_normal(n)
print("‖closed form − dense expm‖ =", np.abs(expm_rank1(u, v) - scipy.linalg.expm(np.outer(u, v))).max())

z = np.geomspace(1e-17, 1e-1, 60)
naive = (np.exp(z) - 1) / z
exact = z / 2 + z**2 / 6 + z**3 / 24 + z**4 / 120  # φ₁(z) − 1, from the Taylor series
fig, ax = plt.subplots(figsize=(5, 3))
ax.loglog(z, np.abs(naive - 1 - exact) / (1 + exact) + 1e-18, label="(eᶻ − 1)/z")
ax.loglog(z, np.abs(phi1(z) - 1 - exact) / (1 + exact) + 1e-18, label="phi1 (expm1)")
ax.set_xlabel("z = vᵀu")
ax.set_ylabel("relative error")
ax.legend()
plt.show()

# %% [markdown]
# ## 3. Small-β softmax, checked as a rate
#
# $\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top + (\beta/N)\,S(I - N^{-1}\mathbf 1\mathbf 1^\top) + O(\beta^2)$.
# An asymptotic claim is not checked at one β but as the **slope** of the remainder on a log–log
# plot: it must be 2.

# %%
N = 16 if SMALL else 256
S = rng.standard_normal((N, N))
betas = np.geomspace(1e-3, 1e-1, 8)
errors = [np.linalg.norm(softmax_operator(S, b) - softmax_first_order(S, b)) for b in betas]
slope = fit_rate(betas, errors)
print(f"fitted slope {slope:.4f} (expected 2)")
assert abs(slope - 2) < 0.05

fig, ax = plt.subplots(figsize=(5, 3))
ax.loglog(betas, errors, "o-", label=f"remainder, slope {slope:.3f}")
ax.loglog(betas, errors[0] * (betas / betas[0]) ** 2, "k--", label="β²")
ax.set_xlabel("β")
ax.set_ylabel("‖softmax − first order‖_F")
ax.legend()
plt.show()

# %% [markdown]
# ## 4. The Dirichlet form on a point cloud
#
# For a Gauss kernel $K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}$ (β is the *inverse bandwidth*:
# no factor 2 or 4 inside the exponent), degree $\mathsf p = K\mathbf 1$, stationary law
# $\pi = \mathsf p/\mathbf 1^\top\mathsf p$ and $\mathsf L = I - \mathsf P$:
# $\mathcal E(f,f) = (\mathbf 1^\top\mathsf p)\langle f, \mathsf L f\rangle_\pi = \tfrac12\sum_{ij}K_{ij}(f_i - f_j)^2$.

# %%
m = 200 if SMALL else 2000
theta = rng.uniform(0, 2 * np.pi, m)
X = np.column_stack([np.cos(theta), np.sin(theta)]) + 0.05 * rng.standard_normal((m, 2))
K = gauss_kernel(X, beta=10.0)
f = np.cos(2 * theta)
pi = reversible_stationary_law(K)
mass = K.sum()
quadratic = mass * np.sum(pi * f * (f - markov_operator(K) @ f))
edge = dirichlet_form(K, f)
print(f"edge sum {edge:.12f}\nquadratic {quadratic:.12f}\nrelative gap {abs(edge - quadratic) / edge:.1e}")

# %% [markdown]
# ## Recap
#
# * An identity = statement + source + `derive()` (sympy-checked steps) + `verify()` (a residual
#   against a tolerance, or a fitted rate against its expected value).
# * `workbench check` runs them all and exits 1 if anything fails; `--json` gives the same as one
#   document; `workbench derive NAME` prints the steps.
# * Structure by construction, the rank-one exponential, the small-β softmax and the Dirichlet
#   form are the first four; the later notebooks follow the derivations of the seed papers.
