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
# product $e^{A_1} e^{A_2} \cdots$, and BCH is the "compiler" that fuses it into one exponential
# ({cite:p}`lieroadmap`).  This notebook goes from expanding $\log(e^A e^B)$ by hand to the exact
# engine, explains why the answer lives in commutators (Lyndon words), checks the truncation error
# as a **rate**, and ends with the Zassenhaus, symmetric and Magnus forms.
#
# **Objectives.** After this notebook you can
#
# * expand $\log(e^Ae^B)$ by hand to degree 3 and recognise the commutators in the result;
# * explain why Lyndon words index a basis of the free Lie algebra, and count them with Witt's formula;
# * compute the BCH series to a given degree with `workbench.lie.bch` and evaluate it on matrices;
# * check a truncated series against a dense `logm` oracle as a **rate** $\varepsilon^{N+1}$;
# * relate the symmetric BCH series to Strang splitting, and the Magnus series to a time-dependent
#   linear ODE.
#
# **Prerequisites.** Notebook 00 (How to read this workbench: identities, and asymptotic claims checked as
# fitted rates with `fit_rate`).  The matrix exponential and logarithm, commutators $[A, B] = AB - BA$, power
# series in noncommuting variables, a first look at Bernoulli numbers, the Möbius function $\mu$ (in Witt's
# formula), and the order of a one-step ODE method such as Runge–Kutta (in the Magnus section).  Lie
# polynomials, Lyndon words and the splitting methods are introduced here.
#
# **Time.** About 75 minutes in class (the two sections on the engine at scale and on the published tables
# can be read at home); the code runs in about 5 s.

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
import scipy.integrate
import scipy.linalg
import sympy as sp
from matplotlib.ticker import NullFormatter, ScalarFormatter

from workbench.catalogue import fit_rate
from workbench.lie import (
    basis_trees,
    bch,
    bch_cost,
    bch_even_degree,
    format_word,
    lyndon_words,
    magnus,
    magnus_omega,
    symmetric_bch,
    tree_to_string,
    witt_dimension,
    zassenhaus,
)
from workbench.memory import memory_limit

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
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
# The BCH theorem (Baker, Campbell, Hausdorff; Dynkin gave the explicit formula) says that every homogeneous term
# of $\log(e^Ae^B)$ is a **Lie polynomial** — a linear combination of iterated commutators of $A$ and $B$ — so it has
# coordinates in a basis of the free Lie algebra ({cite:t}`reutenauer1993free`).  Whether a given polynomial is
# Lie is decided by the Dynkin–Specht–Wever lemma: a homogeneous $p$ of degree $n$ is a Lie polynomial if and only
# if the left-normed bracketing $x_1x_2\cdots x_n \mapsto [\dots[[x_1, x_2], x_3], \dots, x_n]$, extended linearly,
# sends $p$ to $n\,p$.  One basis is
# indexed by **Lyndon words** — words strictly smaller than all their rotations — bracketed by
# their standard factorisation; the classical Hall basis ({cite:t}`hall1950basis`, in the order and
# orientation of the published tables of {cite:t}`casas2009efficient`) and Chibrikov's right-normed basis
# ({cite:t}`chibrikov2006right`) are others.  The number of basis elements per degree is Witt's formula,
# $\dim = \frac1n\sum_{d\mid n}\mu(d)\,2^{n/d}$ on two letters:

# %%
for n in range(1, 7):
    words = [format_word(w) for w in lyndon_words(2, n)]
    print(n, witt_dimension(2, n), words[:6])
print([tree_to_string(t) for t in basis_trees("lyndon", 2, 4)])
print([tree_to_string(t) for t in basis_trees("hall", 2, 4)])
print([tree_to_string(t) for t in basis_trees("chibrikov", 2, 4)])

# %% [markdown]
# Because each Lyndon basis element $P_w$ expands to $w$ plus *larger* words, the Lyndon-basis
# coordinates are read off the coefficients of Lyndon words alone, by forward substitution: the
# engine never expands $\log(e^A e^B)$ over all $2^n$ words.  This is the approach of
# {cite:t}`hofstatter2020bch`; {cite:t}`casas2009efficient` had computed the series to degree 20, in
# the Hall and Lyndon bases, with a different algorithm.  The coefficient of
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
# expansion at all.  The engine therefore solves only the odd degrees, in a compiled kernel that evaluates the
# entries $(P_w, u)$ by the bracket recursion for eight target words at a time and substitutes forward in
# 128-bit integers.  The complete degree-20 series (111,013 basis elements, 76,760 nonzero) takes 0.8 s and
# 86 MB as a whole process on two cores, degree 24 35 s and 0.83 GB; `workbench bench bch --max-degree 24`
# measures it beside Hofstätter's C program.

# %%
print("symmetric BCH, nonzero per degree:", symmetric_bch(8).nonzero_per_degree())
z = bch(7).coordinates
print("Z_8 by relabelling == engine:", bch_even_degree(z, 8) == bch(8).component(8).coordinates)
start = time.perf_counter()
big = bch(16)
print(f"bch(16): {sum(big.nonzero_per_degree())} nonzero coefficients in {time.perf_counter() - start:.2f} s")

# %% [markdown]
# ## The published tables, and what a degree costs
#
# Published tables of the series use the classical Hall basis, in the order and orientation of
# {cite:t}`casas2009efficient` (generators first, then $[B,A]$, $[[B,A],A]$, $[[B,A],B]$, …: each element
# $[t_1, t_2]$ with $t_1$ later than $t_2$, listed by its right factor), or Chibrikov's right-normed basis
# {cite:p}`chibrikov2006right`, brackets $[x_1,[x_2,[\dots,[x_{n-1},x_n]]]]$.  Hofstätter's user manual
# {cite:p}`hofstatter2020bch` prints the series to degree 5 in both; the engine's terms are those, in that order:

# %%
HALL_5 = [  # Hofstätter's manual, basis=2: (bracket, coefficient), in basis order
    ("A", "1"), ("B", "1"), ("[B,A]", "-1/2"), ("[[B,A],A]", "1/12"), ("[[B,A],B]", "-1/12"),
    ("[[[B,A],A],B]", "1/24"), ("[[[[B,A],A],A],A]", "-1/720"), ("[[[[B,A],A],A],B]", "-1/180"),
    ("[[[[B,A],A],B],B]", "1/180"), ("[[[[B,A],B],B],B]", "1/720"), ("[[[B,A],A],[B,A]]", "-1/120"),
    ("[[[B,A],B],[B,A]]", "-1/360"),
]  # fmt: skip
CHIBRIKOV_5 = [  # basis=1
    ("A", "1"), ("B", "1"), ("[B,A]", "-1/2"), ("[A,[B,A]]", "-1/12"), ("[B,[B,A]]", "1/12"),
    ("[B,[A,[B,A]]]", "1/24"), ("[A,[A,[A,[B,A]]]]", "1/720"), ("[B,[A,[A,[B,A]]]]", "-1/360"),
    ("[A,[B,[A,[B,A]]]]", "1/120"), ("[B,[B,[A,[B,A]]]]", "-1/120"), ("[A,[B,[B,[B,A]]]]", "1/360"),
    ("[B,[B,[B,[B,A]]]]", "-1/720"),
]  # fmt: skip
for basis, table in (("hall", HALL_5), ("chibrikov", CHIBRIKOV_5)):
    terms = [(tree_to_string(t), str(c)) for t, c in bch(5).terms(basis)]
    print(f"{basis:9s} equals the printed table: {terms == table}")
    assert terms == table

# %% [markdown]
# Past degree 20 the work is in the Lyndon solve: for each multidegree the engine's compiled kernel evaluates
# the integer entries $(P_w, u)$ by the bracket recursion and substitutes forward in 128-bit integers.  What
# limits a run is memory (every coefficient becomes an exact Fraction), so the degree ceiling is the largest
# degree whose estimated peak fits the memory budget; `bch_cost` gives both estimates before any work, and
# `workbench derive bch --degree 24` prints them before it starts.

# %%
for degree in (20, 22, 24, 26):
    cost = bch_cost(degree)
    print(f"bch({degree}): about {cost.seconds:7.1f} s CPU and {cost.bytes / 2**30:5.2f} GiB peak")
with memory_limit("500MiB"):  # a smaller machine, or a budget set with WORKBENCH_MAX_MEMORY / --max-memory
    try:
        bch(23)
    except ValueError as refusal:
        print("refused before any work:", refusal)

# %% [markdown]
# ## Truncation error as a rate
#
# Truncated at degree $N$ and evaluated on matrices of size ε, the error against
# `scipy.linalg.logm(expm(A) @ expm(B))` must fall like $\varepsilon^{N+1}$: the first neglected
# term is homogeneous of degree $N + 1$, and for small ε the tail is dominated by it.  (The series
# converges absolutely for $\lVert A\rVert + \lVert B\rVert < \log 2$, and in fact on a larger domain
# that contains all the sizes used here: {cite:p}`blanes2009magnus`, {cite:p}`casas2009efficient`.)

# %%
n = 4
A0, B0 = (m / np.linalg.norm(m, 2) for m in rng.standard_normal((2, n, n)))
eps = np.geomspace(0.05, 0.4, 6)
fig, ax = plt.subplots(figsize=(5.5, 3.5), layout="constrained")
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
ax.set_xticks([0.05, 0.1, 0.2, 0.4])
ax.xaxis.set_major_formatter(ScalarFormatter())
ax.xaxis.set_minor_formatter(NullFormatter())  # the default minor labels 3×10⁻¹, 4×10⁻¹ collide
ax.set_xlabel(r"size $\varepsilon = \|A\|_2 = \|B\|_2$ (dimensionless)")
ax.set_ylabel(
    r"$\|\mathrm{BCH}_N(\varepsilon A_0, \varepsilon B_0) - \log(e^{\varepsilon A_0}e^{\varepsilon B_0})\|_F$"
)
ax.set_title(r"truncation error falls like $\varepsilon^{N+1}$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Zassenhaus and the symmetric form
#
# Zassenhaus splits the other way, $e^{A+B} = e^A e^B e^{C_2} e^{C_3}\cdots$ ({cite:p}`casas2012zassenhaus`);
# the symmetric (Strang) composition $\log(e^{A/2}e^Be^{A/2})$ has only odd-degree terms, which is
# why Strang splitting is second order ({cite:p}`hairer2006geometric`).

# %%
z = zassenhaus(5)
for k in range(2, 6):
    print(f"C_{k} =", z.component(k).to_text())
print("symmetric:", symmetric_bch(5).to_text())
print("nonzero per degree:", symmetric_bch(8).nonzero_per_degree())

# %% [markdown]
# ## Magnus: a time-dependent generator
#
# For $Y' = A(t)Y$ with $A(t) = A + tB$, the Magnus exponent $\Omega(h)$, $Y(h) = e^{\Omega(h)}$, is
# again a Lie series, with powers of the step $h$ ({cite:t}`magnus1954exponential`;
# {cite:p}`blanes2009magnus`, {cite:p}`iserles2000lie`).  We compare $e^{\Omega(h)}$ with an
# adaptive Runge–Kutta integration: a method of order $p$ has a one-step error $O(h^{p+1})$.

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
    slope = fit_rate(hs, errors)
    print(f"order {order}: one-step error slope {slope:.2f} (expected {order + 1})")
    assert abs(slope - (order + 1)) < 0.2

# %% [markdown]
# ## Concept checks
#
# **Check 1.** Which of these homogeneous polynomials of degree 2 in the noncommuting $A, B$ is a Lie polynomial?
#
# (a) $AB + BA$ (b) $AB - BA$ (c) $A^2 - B^2$ (d) $AB$
#
# :::{dropdown} Answer
# (b), which is $[A, B]$.  The Dynkin–Specht–Wever test confirms it: the left-normed bracketing sends $AB - BA$ to
# $[A,B] - [B,A] = 2(AB - BA)$, i.e. to $n\,p$ with $n = 2$.  It sends $AB + BA$ to $[A,B] + [B,A] = 0$, $A^2 - B^2$ to
# $[A,A] - [B,B] = 0$ and $AB$ to $AB - BA \ne 2AB$: none of these is $2p$, so none is Lie.  This is why the squares
# had to cancel in the degree-2 computation at the top of the notebook.
# :::
#
# **Check 2.** The BCH series truncated at degree $N = 4$ is evaluated on $\varepsilon A_0, \varepsilon B_0$ with
# $\varepsilon$ small.  Halving $\varepsilon$ divides the error against `logm(expm(εA0) @ expm(εB0))` by about
#
# (a) 2 (b) 16 (c) 32 (d) 4
#
# :::{dropdown} Answer
# (c).  The first neglected term $Z_5$ is homogeneous of degree 5, so the error is $\varepsilon^5\lVert Z_5(A_0, B_0)\rVert$
# plus higher order, and $2^5 = 32$.  (b) would be the error of a degree-3 truncation; (a) and (d) confuse the
# error with the size of the terms kept.
# :::
#
# **Check 3.** Why does $W = \log(e^{A/2}e^Be^{A/2})$ have no terms of even degree?
#
# (a) Because $A$ and $B$ commute at even degrees.
# (b) Because the product is palindromic: its inverse $e^{-A/2}e^{-B}e^{-A/2}$ is the same product at $(-A, -B)$, so
# $W(-A, -B) = -W(A, B)$, and a series with that symmetry is odd.
# (c) Because there are no Lyndon words of even length.
# (d) Because the Bernoulli numbers of odd index $\ge 3$ vanish.
#
# :::{dropdown} Answer
# (b).  A homogeneous term of degree $k$ picks up $(-1)^k$ under $(A, B) \mapsto (-A, -B)$, so only odd $k$ survive
# $W(-A,-B) = -W(A,B)$.  (a) is meaningless, (c) is false ($AB$, $AABB$ are Lyndon), and (d) explains zeros in the
# coefficients of $\operatorname{ad}_A^{n-1}B$ in $Z$, which has even terms: $\tfrac12[A,B]$ is one.
# :::
#
# **Check 4.** How many Lyndon words of length 4 are there on the two letters $A < B$?
#
# (a) 3 (b) 4 (c) 6 (d) 16
#
# :::{dropdown} Answer
# (a): $AAAB$, $AABB$, $ABBB$.  Witt's formula gives $\frac14(\mu(1)2^4 + \mu(2)2^2 + \mu(4)2^1) = \frac14(16 - 4) = 3$.
# $ABAB$ is not Lyndon (it equals its rotation by two letters), nor are words such as $ABBA$ or $BAAA$ (a rotation
# is smaller); 16 counts all words and 6 the words with two of each letter.
# :::

# %% [markdown]
# ## Recap
#
# * By hand, $\log(e^Ae^B) = A + B + \tfrac12[A,B] + \dots$: the squares cancel and only commutators
#   survive (sympy's noncommutative expansion is the oracle at degree 2).
# * The BCH series lives in the free Lie algebra; the engine computes its exact rational
#   coordinates in the Lyndon, Hall or Chibrikov basis (`workbench derive bch --degree 8 --basis hall`),
#   and the coefficients of $\operatorname{ad}_A^{n-1}B$ match $B_{n-1}/(n-1)!$.
# * Even degrees follow from odd ones by a relabelling (the symmetric series has no even terms);
#   the relabelled $Z_8$ equals the engine's exactly.
# * In the classical Hall and Chibrikov bases the degree-5 terms equal the published tables term for term;
#   a degree's cost (time, peak memory) is estimated before it starts, and memory sets the ceiling.
# * Every series is checked against a dense oracle as a **rate**: truncation at degree $N$ leaves
#   an $\varepsilon^{N+1}$ error against `logm(expm(A) @ expm(B))` (fitted slopes within 0.2).
# * Zassenhaus, the symmetric BCH and Magnus use the same machinery; the Magnus exponent of order
#   $p$ has a one-step error $h^{p+1}$ against an adaptive Runge–Kutta integration.
# * `workbench check --area lie` runs all of their catalogue identities.

# %% [markdown]
# ## Exercises
#
# Use only the public API (`workbench.lie`, `workbench.catalogue.fit_rate`), numpy/scipy and
# sympy.  Each exercise says what a correct answer shows, so you can check your own work first.

# %% [markdown]
# ### Exercise 01.1 (compute)
#
# A Lie polynomial does not depend on the basis you write it in.  Take `series = bch(8)` and the
# matrices `A0, B0` of the truncation section, scaled to $\varepsilon = 0.2$.  Evaluate the series
# with `series.evaluate(eA, eB, basis=b)` for the three bases `"lyndon"`, `"hall"` and
# `"right-normed"`, compare the three matrices with each other and with
# `scipy.linalg.logm(expm(eA) @ expm(eB))`, and count the nonzero coefficients of the degree-8
# series in each basis with `change_of_basis(series.coordinates, b, 2)` (import it from `workbench.lie`).
# Compare the counts with the total number of basis elements up to degree 8, $\sum_{k\le8}$
# `witt_dimension(2, k)`.  Finally
# evaluate the first neglected term, `bch(9).component(9).evaluate(eA, eB)`, and compare it with the
# truncation error `logm(...) - series.evaluate(eA, eB)`.
#
# **What a correct answer shows:** the three evaluations agree to rounding ($\sim10^{-16}$, many
# orders below the truncation error), and all three differ from `logm` by the same $\sim10^{-11}$,
# which is the neglected degree-9 term, $\varepsilon^9$ times a modest constant: subtracting it
# leaves a remainder a few per cent of its size (the degree-10 term, one more factor ε); the
# coefficient counts differ between bases (the series is sparser in some), while the dimension,
# 71, does not.
#
# **Answer in** `answer_01_1`: a dict with keys `"A0"`, `"B0"` (the 4×4 matrices of the truncation section,
# unscaled), `"eps"` (the float 0.2), `"values"` (dict basis name → the 4×4 matrix `series.evaluate(eA, eB, basis=b)`,
# for `"lyndon"`, `"hall"`, `"right-normed"`), `"reference"` (the 4×4 real matrix `logm(expm(eA) @ expm(eB))`),
# `"counts"` (dict basis name → the int number of nonzero coefficients of the degree-8 series in that basis),
# `"dimension"` (the int $\sum_{k\le8}$ `witt_dimension(2, k)`) and `"first_neglected"` (the 4×4 matrix
# `bch(9).component(9).evaluate(eA, eB)`).

# %%
# your code here

# %% [markdown]
# ### Exercise 01.2 (derive)
#
# On paper, extend the degree-2 computation at the top of this notebook to **degree 3**: collect
# the degree-3 words of $X = e^Ae^B - 1$, $X^2$ and $X^3$, combine them as
# $X - X^2/2 + X^3/3$, and show that the result is
# $\tfrac1{12}[A,[A,B]] + \tfrac1{12}[[A,B],B]$ (expand the brackets into words to compare).
# Then check each of your three word lists with sympy's noncommutative symbols, and the final
# answer against `bch(3).component(3).to_sympy()`.
#
# **What a correct answer shows:** the word polynomial $\tfrac1{12}(A^2B - 2ABA + BA^2 + AB^2 - 2BAB + B^2A)$;
# sympy's expansion minus yours is exactly 0, and so is the difference with the engine's degree-3
# component.  Note which words cancel: $A^3$ and $B^3$ drop out, as they must for a Lie polynomial.
#
# **Answer in** `answer_01_2`: a dict with keys `"X1"`, `"X2"`, `"X3"` (sympy expressions in the noncommutative
# symbols `A`, `B`: the degree-3 words of $X$, $X^2$ and $X^3$, with their coefficients) and `"log_degree3"` (the
# sympy expression $X - X^2/2 + X^3/3$ restricted to degree 3, expanded into words).

# %%
# your code here (noncommutative symbols: `A, B = sp.symbols("A B", commutative=False)`)

# %% [markdown]
# ### Exercise 01.3 (explore)
#
# Splitting methods approximate $e^{h(A+B)}$ by products of $e^{hA}$ and $e^{hB}$.  For the matrices
# `A0, B0` above, compute the one-step errors of the **Lie** splitting $e^{hA}e^{hB}$ and of the
# **Strang** splitting $e^{hA/2}e^{hB}e^{hA/2}$ against `expm(h (A0 + B0))` for $h$ from 0.01 to 0.2,
# and fit both slopes with `fit_rate`.  Then predict the constants: by BCH the Lie product is
# $e^{h(A+B) + \frac{h^2}2[A,B] + \dots}$, and by the symmetric series the Strang product is
# $e^{h(A+B) + h^3 W_3 + \dots}$ with $W_3$ the degree-3 part of `symmetric_bch(3)`, evaluated on the
# matrices as `symmetric_bch(3).component(3).evaluate(A0, B0)`; compare the
# fitted error$/h^p$ at the smallest $h$ with $\lVert\tfrac12[A,B]\rVert_F$ and $\lVert W_3\rVert_F$.
#
# **What a correct answer shows:** slopes 2 and 3 (within 0.1); the constants agree with the
# leading BCH terms to within a few per cent at $h = 0.01$.  Interpret: the missing even-degree
# terms of the symmetric series buy one order of accuracy for the price of one more exponential,
# and the error of either method is the first commutator term BCH leaves behind.

# %%
# your code here
