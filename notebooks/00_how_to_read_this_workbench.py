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
# sampled data.  A claim you can only read is a claim you have to trust; a claim with all three
# faces can be re-derived, re-run at another size and broken on purpose.  This notebook shows the
# three faces on the first four identities of the catalogue:
#
# 1. the exponential maps a Lie algebra into its group (orthogonal, SPD, stochastic, symplectic);
# 2. the rank-one exponential $e^{uv^\top} = I + \varphi_1(v^\top u)\,uv^\top$;
# 3. the small-β softmax expansion, checked as a **rate**;
# 4. the Dirichlet form of a Gauss kernel on a sampled point cloud.
#
# **Objectives.** After this notebook you can
#
# * list the catalogue, read an identity's statement and source, and print its symbolic steps;
# * run the checks of one area from Python or with `workbench check --area AREA`, and read a
#   residual against its tolerance;
# * tell an exact identity (checked by a residual) from an asymptotic one (checked by a fitted rate);
# * read an identity's hypotheses, and see its statement fail on a case outside each of them;
# * explain why $\varphi_1(z) = (e^z - 1)/z$ must be evaluated as `expm1(z)/z` near $z = 0$;
# * verify the edge form of the Dirichlet form of a Gauss kernel on your own point cloud.
#
# **Prerequisites.** No earlier notebook.  Linear algebra (matrix exponential, eigenvalues of
# symmetric matrices), Taylor series, floating-point arithmetic at the level of "a double carries
# about 16 digits", and finite Markov chains (stochastic matrices, stationary law) as the syllabus
# assumes them.  The rest — generators, the softmax, the Gauss kernel, the Dirichlet form — is
# defined where it is used; the Bakry–Émery curvature quoted in the hypotheses section is only
# named here and defined in notebook 04.
#
# **Time.** About 50 minutes in class (the hypotheses section can be read at home); the code runs in
# about 20 s.

# %%
import os

import matplotlib.pyplot as plt
import mpmath
import numpy as np
import scipy.linalg

from workbench.catalogue import discover, fit_rate, run_checks, run_outside_cases, select
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

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(0)


def show(results):
    """Print one line per check: pass/FAIL, backend, name, and the residual or rate against its bound."""
    for r in results:
        if r.rate is not None:
            shown = f"rate {r.rate:.3f} (expected {r.expected_rate:g})"
        else:
            shown = f"residual {r.residual:.2e}"
        print(f"{'pass' if r.passed else 'FAIL'}  {r.backend:6s} {r.name:42s} {shown}  ≤ {r.tolerance:.1e}")


# %% [markdown]
# ## What an identity is
#
# The catalogue is discovered through the entry-point group `workbench.derivations`; the
# repository's own `derivations/` package registers itself there exactly as a course of yours
# could.  Each record carries a name, an area, a LaTeX statement and a source.  The sources name
# the papers and the course's [mathematical reference](reference.md) by section.

# %%
catalogue = discover()
print(f"{len(catalogue)} identities in {len({i.area for i in catalogue})} areas")
for identity in catalogue:
    print(f"{identity.name:42s} {identity.area:10s} {identity.source}")

# %% [markdown]
# `derive()` returns the steps of the symbolic derivation.  Steps marked ✓ are equalities that
# sympy has decided; a single ✗ makes the identity fail.  (`workbench derive NAME` prints the same.)

# %%
rank_one = select(catalogue, name="expmv.rank_one.closed_form")[0]
print(rank_one.statement)
for step in rank_one.derive():
    mark = {None: "·", True: "✓", False: "✗"}[step.holds]
    print(mark, step.text)

# %% [markdown]
# Each step also carries its **general statement** (for any size N), a one-line **reason**, and what sympy
# decided it on: a symbolic instance (e.g. 3×3 matrices of symbols) or, where sympy can do it, general N
# (matrix symbols, indexed sums over a symbolic n).  Displayed as the last value of a cell, the derivation renders
# as mathematics:

# %%
rank_one.derive()

# %% [markdown]
# ## How `workbench check` works
#
# `workbench check` runs every identity once symbolically (backend `sympy`) and once per numeric
# backend: numpy always, torch when it is installed.  Each numeric check returns a residual and
# the tolerance it must meet — or, for an asymptotic identity, a fitted rate and the rate it must
# match.  Running the whole catalogue takes a minute or two, so here we run one **area**, the
# four `structure` identities of section 1; `workbench check --area structure` is the same run
# from the command line, and a bare `workbench check` runs all of them.

# %%
results = run_checks(select(catalogue, area="structure"), seed=0, scale="small", backends=("numpy",))
show(results)
assert all(r.passed for r in results)

# %% [markdown]
# ## Hypotheses are tested, not decoration
#
# A statement is only as true as its hypotheses.  Each identity lists them (`identity.hypotheses`, also shown by
# `workbench derive NAME` and on the catalogue page), and each hypothesis comes with a **case outside it**: the
# same check, run where that hypothesis fails.  There the statement must fail by more than its tolerance — if it
# did not, the hypothesis would not be needed.  The Bakry–Émery curvature of the cycle $C_n$ (a discrete analogue
# of a lower bound on Ricci curvature, defined in notebook 04) is $0$, for instance, only from $n = 5$ on: the
# 2-ball of a vertex of $C_3$ or $C_4$ closes up on itself.

# %%
cycle = select(catalogue, name="markov.curvature.graphs")[0]
for number, hypothesis in enumerate(cycle.hypotheses, 1):
    print(f"H{number}. {hypothesis.text}\n    outside it: {hypothesis.case}")
outside = run_outside_cases([cycle])
for r in outside:
    verdict = "fails as predicted" if r.passed else "HOLDS outside: the hypothesis is not needed"
    print(f"{r.backend}: residual {r.residual:.2e} > tolerance {r.tolerance:.1e} — {verdict}")
assert all(r.passed and r.residual > r.tolerance for r in outside)  # a passing row: the statement fails outside

# %% [markdown]
# `workbench check --hypotheses` runs every outside case of the catalogue the same way (each row passes when the
# statement fails there as predicted).

# %% [markdown]
# ## 1. Structure by construction
#
# If $A^\top G + GA = 0$ then $W(t) = e^{tA}$ keeps the quadratic form: $W^\top G W = G$, because
# $\frac{d}{dt}(W^\top GW) = W^\top(A^\top G + GA)W = 0$.  With $G = I$ this is "skew ↦ orthogonal",
# with $G = J$ "Hamiltonian ↦ symplectic".  A Markov generator $Q$ (off-diagonal rates ≥ 0, rows
# summing to 0) exponentiates to a row-stochastic matrix.  The structure is not imposed after the
# fact by a projection; it follows from the generator's algebra ({cite:p}`lieroadmap`;
# {cite:p}`higham2008functions` for the matrix exponential itself).

# %%
n = 6
g = rng.standard_normal((n, n)) / np.sqrt(n)
W = scipy.linalg.expm(g - g.T)
print("‖WᵀW − I‖ =", np.abs(W.T @ W - np.eye(n)).max())

rates = rng.exponential(size=(n, n)) * (1 - np.eye(n))
Q = rates - np.diag(rates.sum(axis=1))
P = markov_semigroup(Q, t=0.5)  # validates Q as a generator, then exponentiates
print("row sums of exp(Q/2):", P.sum(axis=1).round(15), " min entry:", P.min())

# %% [markdown]
# ## 2. The rank-one exponential
#
# Since $(uv^\top)^k = (v^\top u)^{k-1}uv^\top$, the whole series collapses to
# $\varphi_1(z) = (e^z - 1)/z$ ({cite:p}`lieroadmap`, "rank-1 exponentials").  The formula must
# survive $v^\top u \to 0$: the naive quotient loses every digit there, while `phi1` (evaluated as
# `expm1(z)/z`) does not.  The reference curve is computed with 40 significant digits by `mpmath`.

# %%
u, v = rng.standard_normal(n), rng.standard_normal(n)
print("‖closed form − dense expm‖ =", np.abs(expm_rank1(u, v) - scipy.linalg.expm(np.outer(u, v))).max())
run = run_checks(select(catalogue, name="expmv.rank_one.closed_form"), backends=("numpy",))
show(run)

z = np.geomspace(1e-17, 1e-1, 60)
with mpmath.workdps(40):
    reference = np.array([float(mpmath.expm1(mpmath.mpf(x)) / mpmath.mpf(x)) for x in z])
naive = (np.exp(z) - 1) / z
fig, ax = plt.subplots(figsize=(5.5, 3.3), layout="constrained")
ax.loglog(z, np.abs(naive - reference) / reference + 1e-18, label=r"naive $(e^z - 1)/z$")
ax.loglog(z, np.abs(phi1(z) - reference) / reference + 1e-18, label=r"phi1, i.e. expm1$(z)/z$")
ax.axhline(np.finfo(float).eps / 2, color="k", ls=":", label=r"unit roundoff $2^{-53}$")
ax.set_xlabel(r"$z = v^\top u$ (dimensionless)")
ax.set_ylabel(r"relative error of $\varphi_1(z)$")
ax.set_title(r"$\varphi_1$ near $z = 0$ (errors floored at $10^{-18}$)")
ax.legend(fontsize=8)
plt.show()
assert np.max(np.abs(phi1(z) - reference) / reference) < 1e-15

# %% [markdown]
# ## 3. Small-β softmax, checked as a rate
#
# $\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top + (\beta/N)\,S(I - N^{-1}\mathbf 1\mathbf 1^\top) + O(\beta^2)$
# ({cite:p}`candanedo2026attention`; [mathematical reference §A.9](reference.md#reference-a9)).  At high
# temperature attention averages uniformly, and the first correction sees only the *row-centred*
# scores.  An asymptotic claim is not checked at one β but as the **slope** of the remainder on a
# log–log plot: it must be 2.

# %%
N = 16 if SMALL else 256
S = rng.standard_normal((N, N))
betas = np.geomspace(1e-3, 1e-1, 8)
errors = [np.linalg.norm(softmax_operator(S, b) - softmax_first_order(S, b)) for b in betas]
slope = fit_rate(betas, errors)
print(f"fitted slope {slope:.4f} (expected 2)")
assert abs(slope - 2) < 0.05
show(run_checks(select(catalogue, name="continuum.softmax.small_beta"), backends=("numpy",)))

fig, ax = plt.subplots(figsize=(5.5, 3.3), layout="constrained")
ax.loglog(betas, errors, "o-", label=f"remainder, slope {slope:.3f}")
ax.loglog(betas, errors[0] * (betas / betas[0]) ** 2, "k--", label=r"$\propto\beta^2$")
ax.set_xlabel(r"inverse temperature $\beta$ (dimensionless)")
ax.set_ylabel(r"$\|\mathrm{softmax}_\beta(S) - \mathrm{first\ order}\|_F$")
ax.set_title(f"small-β softmax, N = {N}")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## 4. The Dirichlet form on a point cloud
#
# For a Gauss kernel $K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}$ (β is the *inverse bandwidth*:
# no factor 2 or 4 inside the exponent), degree $\mathsf p = K\mathbf 1$, stationary law
# $\pi = \mathsf p/\mathbf 1^\top\mathsf p$ and $\mathsf L = I - \mathsf P$:
# $\mathcal E(f,f) = (\mathbf 1^\top\mathsf p)\langle f, \mathsf L f\rangle_\pi = \tfrac12\sum_{ij}K_{ij}(f_i - f_j)^2$
# ({cite:p}`candanedo2026attention` §2; [mathematical reference §A.2](reference.md#reference-a2); the
# continuous theory is {cite:t}`fukushima2011dirichlet`).  The right-hand side is a sum of squares,
# so $\mathsf L$ is positive semidefinite in $\langle\cdot,\cdot\rangle_\pi$: that is why its
# eigenvalues can be read as frequencies.

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
# oracle: the edge sum (m² nonnegative terms, relative error ~ m·u); the quadratic form subtracts two sums of
# size ~ mass·max f², so it loses a few digits to cancellation: 1e-12 relative leaves room for both
assert abs(edge - quadratic) <= 1e-12 * edge
show(run_checks(select(catalogue, name="markov.dirichlet_form.gauss"), backends=("numpy",)))

# %% [markdown]
# ## Concept checks
#
# **Check 1.** The check of the exact identity $W^\top JW = J$ for a symplectic $W = e^{tA}$ returns the max-norm
# residual $2\cdot10^{-3}$ at a $t$ where $\max_{ij}\lvert W_{ij}\rvert \approx 3\cdot10^6$.  What do you conclude?
#
# (a) The identity fails for large $t$.
# (b) Nothing is wrong: the entries of $W^\top JW$ are of size $\sim10^{13}$, and $2\cdot10^{-3}/10^{13}$ is a rounding error.
# (c) `scipy.linalg.expm` cannot be trusted beyond $t \approx 10$.
# (d) The tolerance should be raised to $10^{-2}$ for this identity.
#
# :::{dropdown} Answer
# (b).  Each entry of $W^\top JW$ is a sum of products of entries of size $\max\lvert W_{ij}\rvert$, so rounding
# leaves errors of a few $u\max\lvert W_{ij}\rvert^2 \approx 10^{-16}\cdot10^{13}$; divided by $\max\lvert W_{ij}\rvert^2$ the
# residual is $\sim 2\cdot10^{-16}$, at rounding level.  (a) and (c) read an absolute number without its scale;
# (d) would let real failures of size $10^{-3}$ pass at $t = 1$, where $W$ is of order 1.
# :::
#
# **Check 2.** The small-β softmax expansion is checked by a fitted slope (2) rather than by one residual below
# a tolerance.  Why?
#
# (a) The softmax is computed in single precision.
# (b) At a fixed β the remainder is $C\beta^2$ with a constant $C$ the statement does not give, so no fixed
# tolerance separates right from wrong; the exponent 2 is what the statement claims.
# (c) sympy cannot expand the softmax.
# (d) The remainder is exactly 0 in exact arithmetic.
#
# :::{dropdown} Answer
# (b).  An asymptotic identity says how fast the remainder vanishes, not how small it is at a given β: a slope
# of 1 would reveal a wrong first-order term even where the remainder is tiny.  (a) is false (everything is
# float64), (c) is false (notebook exercise 00.2 does it), and (d) contradicts the $O(\beta^2)$ term itself.
# :::
#
# **Check 3.** `run_outside_cases` runs an identity where one of its hypotheses fails.  When does such a row
# *pass*?
#
# (a) When the statement still holds within its tolerance.
# (b) When the statement fails by more than its tolerance.
# (c) When sympy proves the hypothesis false.
# (d) When the residual is NaN.
#
# :::{dropdown} Answer
# (b).  The case outside a hypothesis exists to show that the hypothesis is needed: if the statement held there
# too (a), the hypothesis would be decoration.  Nothing symbolic is decided in these rows (c), and a NaN (d) is
# a failure of the computation, never a pass.
# :::
#
# **Check 4.** Why is $e^{tQ}$ row-stochastic for a Markov generator $Q$ (off-diagonal rates $\ge 0$, rows
# summing to 0), for every $t \ge 0$?
#
# (a) Because `markov_semigroup` normalises the rows after exponentiating.
# (b) With $q = \max_i(-Q_{ii})$, $e^{tQ} = e^{-qt}e^{t(Q + qI)}$ and $Q + qI \ge 0$ entrywise, so $e^{tQ} \ge 0$;
# and $Q\mathbf 1 = 0$ gives $e^{tQ}\mathbf 1 = \mathbf 1$.
# (c) Because $Q$ is symmetric.
# (d) Only for $t$ small enough that $I + tQ \ge 0$.
#
# :::{dropdown} Answer
# (b).  Both properties follow from the generator's algebra, which is the point of "structure by construction":
# nothing is projected afterwards (a).  $Q$ need not be symmetric (c) — the row sums, not the column sums,
# vanish — and the argument works for all $t \ge 0$, not only where the first-order approximation is
# nonnegative (d).
# :::

# %% [markdown]
# ## Recap
#
# * An identity = statement + source + `derive()` (sympy-checked steps) + `verify()` (a residual
#   against a tolerance, or a fitted rate against its expected value).
# * `workbench check --area AREA` runs one area (here `structure`, four identities, all passing);
#   a bare `workbench check` runs the whole catalogue and exits 1 if anything fails; `--json` gives
#   the same as one document; `workbench derive NAME` prints the steps.
# * Every hypothesis is tested: on a case outside it the statement fails (`run_outside_cases`,
#   `workbench check --hypotheses`); $K_\infty(C_n) = 0$ needs $n \ge 5$.
# * Structure by construction: skew ↦ orthogonal and generator ↦ stochastic hold to rounding,
#   checked against the defining equations $W^\top W = I$, $P\mathbf 1 = \mathbf 1$, $P \ge 0$.
# * The rank-one exponential matches dense `expm` to rounding, and only the `expm1` form of
#   $\varphi_1$ keeps full relative accuracy near $z = 0$ (oracle: 40-digit `mpmath`).
# * The small-β softmax is checked as a rate: the remainder's fitted slope is 2.
# * The Dirichlet form's quadratic and edge forms agree to $10^{-12}$ relative on a noisy circle.
# * The later notebooks follow the derivations of the two papers, {cite:t}`candanedo2026attention`
#   and {cite:t}`connectionlaplacian`, in the same three faces.

# %% [markdown]
# ## Exercises
#
# Use only the public API shown above (`workbench.catalogue`, `workbench.markov`,
# `workbench.continuum`, `workbench.expmv`).  Each exercise says what a correct answer shows,
# so you can check your own work before you compare it with the worked answers.

# %% [markdown]
# ### Exercise 00.1 (compute)
#
# Section 1 checked the orthogonal and stochastic cases by hand.  Do the **symplectic** one: with
# $J = \begin{pmatrix}0 & I_3\\ -I_3 & 0\end{pmatrix}$ and the symmetric $6\times6$ matrix $S = (G + G^\top)/2$,
# `G = np.random.default_rng(1).standard_normal((6, 6)) / np.sqrt(6)`, form the Hamiltonian matrix $A = JS$,
# check $A^\top J + JA = 0$, and compute the residual $\lVert W^\top J W - J\rVert_{\max}$ for $W = e^{tA}$ at
# $t = 1, 10, 20, 30$.  Normalise each residual twice — divided by $\max_{ij}\lvert W_{ij}\rvert^2$, as the
# catalogue does, and divided by $\max_{ij}\lvert W_{ij}\rvert$ — and compare both with the catalogue's
# tolerance $100\,n\,\varepsilon$ ($n = 6$, ε = `np.finfo(float).eps`).  Then run the catalogue identity
# `structure.exp.hamiltonian_to_symplectic`.
#
# **What a correct answer shows:** $A^\top J + JA = S - S$ vanishes exactly in floating point
# (multiplying by $J$ only permutes entries and flips signs); $A$ has a real eigenvalue near 0.5, so
# $\max\lvert W_{ij}\rvert$ grows from about 1.6 at $t = 1$ to about $3\cdot10^6$ at $t = 30$, and the residual
# grows with it, like a few units of $10^{-16}$ times $\max\lvert W_{ij}\rvert^2$.  Divided by
# $\max\lvert W_{ij}\rvert^2$ it stays far below the tolerance at every $t$; divided by $\max\lvert W_{ij}\rvert$ it
# passes at $t \le 10$ and exceeds the tolerance by one to four orders of magnitude at $t = 20$ and 30.
# Explain why the residual is not exactly 0 although the identity is exact, and why dividing by
# $\lVert W\rVert^2$ is the fair comparison.
#
# **Answer in** `answer_00_1`: a dict with keys `"S"` (your symmetric 6×6 matrix), `"A"` (the 6×6 Hamiltonian
# matrix $JS$), `"hamiltonian_residual"` (the float $\max\lvert A^\top J + JA\rvert$), `"max_W"` (dict $t \mapsto
# \max_{ij}\lvert W_{ij}\rvert$, for the floats $t$ = 1.0, 10.0, 20.0, 30.0), `"residual"` (dict $t \mapsto
# \lVert W^\top JW - J\rVert_{\max}$), `"relative"` (dict $t \mapsto$ the residual divided by $\max_{ij}\lvert W_{ij}\rvert^2$)
# and `"tolerance"` (the float $100\,n\,\varepsilon$).

# %%
# your code here

# %% [markdown]
# ### Exercise 00.2 (derive)
#
# On paper, expand one row of $\operatorname{softmax}_\beta(S)$, $p_j(\beta) = e^{\beta S_j}/\sum_l e^{\beta S_l}$,
# to first order in β, and show $p_j = \frac1N + \frac\beta N\bigl(S_j - \bar S\bigr) + O(\beta^2)$ with
# $\bar S = \frac1N\sum_l S_l$.  Explain in one sentence why adding the same constant to every score
# of a row changes nothing at this order (and at every order).  Then check your expansion with
# sympy for $N = 3$ symbolic scores (`sympy.series` in β), and numerically: for a random $8\times8$
# standard-normal score matrix `M`, compare `softmax_operator(M, 1e-4)` with `softmax_first_order(M, 1e-4)`
# (both from the imports above), and the gap with the next term of the series,
# `softmax_second_order(M, 1e-4) - softmax_first_order(M, 1e-4)` (from `workbench.continuum`).
#
# **What a correct answer shows:** sympy's first-order coefficient minus yours simplifies to 0; the
# numeric gap is of order $\beta^2$ (a few $10^{-9}$), not of order β, and it *is* the second-order
# term: the two agree to a relative $O(\beta)$, far below $10^{-3}$.
#
# **Answer in** `answer_00_2`: a dict with keys `"expansion"` (a list of three sympy expressions, your
# first-order expansions of $p_1, p_2, p_3$ in the symbols `S1, S2, S3` and `beta`), `"M"` (your 8×8 score matrix),
# `"beta"` (the float 1e-4), `"gap"` (the float $\max_{ij}\lvert$`softmax_operator(M, beta)` − `softmax_first_order(M, beta)`$\rvert$)
# and `"relative_to_second"` (the float $\max\lvert R - T_2\rvert/\max\lvert T_2\rvert$, with $R$ that remainder and
# $T_2$ = `softmax_second_order(M, beta) - softmax_first_order(M, beta)`).

# %%
# your code here (sympy: `import sympy as sp`; scores `sp.symbols("S1:4")`, `beta = sp.Symbol("beta")`)

# %% [markdown]
# ### Exercise 00.3 (explore)
#
# Section 2 showed that the naive $(e^z - 1)/z$ fails near 0.  Measure **how** it fails: for
# $z$ on a log grid from $10^{-15}$ to $10^{-3}$, compute its relative error against the `mpmath`
# reference and fit the slope of the error on a log–log scale with `fit_rate`.  Because
# individual rounding errors scatter, fit the *largest* error in each of about ten windows of the
# grid.  Interpret the slope and the intercept: where does the lost accuracy come from, and why
# does `expm1` not suffer from it?
#
# **What a correct answer shows:** a slope of $-1$ (within about 0.1), and errors of at most about
# $u/z$ with $u = 2^{-53}$: computing $e^z$ rounds it to a double next to 1 with an absolute
# error of up to $u$; the subtraction of 1 is exact but keeps that absolute error, and dividing by
# $z$ makes it a relative error of order $u/z$ (catastrophic cancellation).  `expm1` never forms
# $1 + z$, so its relative error stays at a few $u$.

# %%
# your code here
