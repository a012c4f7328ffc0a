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
# # 01 — The Baker–Campbell–Hausdorff series
#
# Stacked exponentials are the workbench's basic object: a residual stack of generator layers is a
# product $e^{A_1} e^{A_2} \cdots$, and BCH is the "compiler" that fuses it into one exponential.
# This notebook goes from expanding $\log(e^A e^B)$ by hand to the exact engine, explains why the
# answer lives in commutators (Lyndon words), checks the truncation error as a **rate**, and ends
# with the Zassenhaus, symmetric and Magnus forms.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.integrate
import scipy.linalg
import sympy as sp

from workbench.catalogue import fit_rate
from workbench.lie import (
    basis_trees,
    bch,
    format_word,
    lyndon_words,
    magnus,
    magnus_omega,
    symmetric_bch,
    tree_to_string,
    witt_dimension,
    zassenhaus,
)

SMALL = os.environ.get("WORKBENCH_SCALE", "small") == "small"
rng = np.random.default_rng(1)

# %% [markdown]
# ## By hand: degree 2
#
# With noncommuting symbols, $e^A e^B = 1 + (A + B) + (\tfrac12A^2 + AB + \tfrac12B^2) + \dots$ and
# $\log(1 + X) = X - X^2/2 + \dots$.  At degree two, the squares cancel and what is left is a
# commutator:

# %%
A, B = sp.symbols("A B", commutative=False)
X1 = A + B  # degree-1 part of e^A e^B − 1
X2 = A**2 / 2 + A * B + B**2 / 2  # degree-2 part
print("degree 2 of log(e^A e^B):", sp.expand(X2 - X1**2 / 2), " = ½[A,B]")

# %% [markdown]
# Doing this to higher degree in sympy is slow (the naive expansion takes seconds at degree 6 and
# grows ~3× per degree; `workbench bench bch` measures it), and the answer comes out in *words*
# ($AAB$, $ABA$, …) rather than in commutators.  The engine works in a basis of the free Lie
# algebra instead.

# %%
print(bch(5).to_text())

# %% [markdown]
# ## Why Lyndon words
#
# Dynkin–Specht–Wever says every homogeneous term of the BCH series is a Lie polynomial, so it has
# coordinates in a basis of the free Lie algebra.  One basis is indexed by **Lyndon words** — words
# strictly smaller than all their rotations — bracketed by their standard factorisation.  Their
# number per degree is Witt's formula:

# %%
for n in range(1, 7):
    words = [format_word(w) for w in lyndon_words(2, n)]
    print(n, witt_dimension(2, n), words[:6])
print([tree_to_string(t) for t in basis_trees("lyndon", 2, 4)])
print([tree_to_string(t) for t in basis_trees("hall", 2, 4)])
print([tree_to_string(t) for t in basis_trees("right-normed", 2, 4)])

# %% [markdown]
# Because each Lyndon basis element $P_w$ expands to $w$ plus *larger* words, the Lyndon-basis
# coordinates are read off the coefficients of Lyndon words alone, by forward substitution: the
# engine never expands $\log(e^A e^B)$ over all $2^n$ words.  The coefficient of
# $\operatorname{ad}_A^{n-1}B$ is $B_{n-1}/(n-1)!$ (Bernoulli numbers, $B_1 = +\tfrac12$):

# %%
series = bch(10)
print([str(series.coordinates.get((0,) * k + (1,), 0)) for k in range(1, 10)])
print([str(sp.bernoulli(k) / sp.factorial(k)) for k in range(1, 10)])
print("nonzero per degree:", series.nonzero_per_degree())

# %% [markdown]
# ## Even degrees for free, and the engine at scale
#
# The symmetric series $W = \log(e^{A/2}e^Be^{A/2})$ has only odd terms, because inverting the palindromic
# product gives $W(-A,-B) = -W(A,B)$.  It is conjugate to BCH: $e^W = e^{-A/2}e^Ze^{A/2}$, so
# $W = e^{-\operatorname{ad}_{A/2}}Z$.  Its even part vanishes, so each even-degree term of $Z$ follows from
# the lower ones:
#
# $$Z_n = -\sum_{k\ge1}\frac{(-1/2)^k}{k!}\operatorname{ad}_A^kZ_{n-k}\qquad(n\text{ even}).$$
#
# In the Lyndon basis $\operatorname{ad}_A P_w = P_{Aw}$, so this is a relabelling of coefficients, with no
# expansion at all.  The engine therefore solves only the odd degrees.  The complete degree-20 series
# (111,013 basis elements, 76,760 nonzero) takes about 5 s on two cores; `workbench bench bch --max-degree 20`
# measures it.

# %%
import time

from workbench.lie import bch_even_degree

print("symmetric BCH, nonzero per degree:", symmetric_bch(8).nonzero_per_degree())
z = bch(7).coordinates
print("Z_8 by relabelling == engine:", bch_even_degree(z, 8) == bch(8).component(8).coordinates)
start = time.perf_counter()
big = bch(16)
print(f"bch(16): {sum(big.nonzero_per_degree())} nonzero coefficients in {time.perf_counter() - start:.2f} s")

# %% [markdown]
# ## Truncation error as a rate
#
# Truncated at degree $N$ and evaluated on matrices of size ε, the error against
# `scipy.linalg.logm(expm(A) @ expm(B))` must fall like $\varepsilon^{N+1}$.

# %%
n = 4
A0, B0 = (m / np.linalg.norm(m, 2) for m in rng.standard_normal((2, n, n)))
eps = np.geomspace(0.05, 0.4, 6)
fig, ax = plt.subplots(figsize=(5.5, 3.5))
for degree in (2, 3, 4, 5, 6):
    truncated = bch(degree)
    errors = [
        np.linalg.norm(
            truncated.evaluate(e * A0, e * B0)
            - scipy.linalg.logm(scipy.linalg.expm(e * A0) @ scipy.linalg.expm(e * B0))
        )
        for e in eps
    ]
    slope = fit_rate(eps, errors)
    ax.loglog(eps, errors, "o-", label=f"N = {degree}: slope {slope:.2f}")
    assert abs(slope - (degree + 1)) < 0.2
ax.set_xlabel("ε")
ax.set_ylabel("‖truncated BCH − logm‖")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Zassenhaus and the symmetric form
#
# Zassenhaus splits the other way, $e^{A+B} = e^A e^B e^{C_2} e^{C_3}\cdots$; the symmetric
# (Strang) composition $\log(e^{A/2}e^Be^{A/2})$ has only odd-degree terms, which is why Strang
# splitting is second order.

# %%
z = zassenhaus(5)
for k in range(2, 6):
    print(f"C_{k} =", z.component(k).to_text())
print("symmetric:", symmetric_bch(5).to_text())
print("nonzero per degree:", symmetric_bch(8).nonzero_per_degree())

# %% [markdown]
# ## Magnus: a time-dependent generator
#
# For $Y' = A(t)Y$ with $A(t) = A + tB$, the Magnus exponent $\Omega(h)$ is again a Lie series,
# with powers of the step $h$.  We compare $e^{\Omega(h)}$ with an adaptive Runge–Kutta solution.

# %%
print("Ω(h) =", magnus(5).to_text(), "   (a word of weight k carries h^k)")
X0, X1 = (m / 3 for m in rng.standard_normal((2, 3, 3)))


def reference(h):
    rhs = lambda t, y: ((X0 + t * X1) @ y.reshape(3, 3)).ravel()  # noqa: E731
    sol = scipy.integrate.solve_ivp(rhs, (0, h), np.eye(3).ravel(), method="DOP853", rtol=1e-13, atol=1e-15)
    return sol.y[:, -1].reshape(3, 3)


hs = np.geomspace(0.05, 0.3, 5 if SMALL else 10)
for order in (2, 4, 6):
    errors = [np.linalg.norm(scipy.linalg.expm(magnus_omega([X0, X1], h, order)) - reference(h)) for h in hs]
    print(f"order {order}: error slope {fit_rate(hs, errors):.2f}")

# %% [markdown]
# ## Recap
#
# * The BCH series lives in the free Lie algebra; the engine computes its exact coordinates in the
#   Lyndon, Hall or right-normed basis (`workbench derive bch --degree 8 --basis hall`).
# * Every series is checked against a dense oracle as a **rate**: truncation at degree $N$ leaves
#   an $\varepsilon^{N+1}$ error.
# * Zassenhaus, the symmetric BCH and Magnus use the same machinery; `workbench check --area lie`
#   runs all of their identities.
