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
# # Solutions — 01 The Baker–Campbell–Hausdorff series
#
# Worked answers to the exercises of notebook `01_baker_campbell_hausdorff.py`.  Every answer is
# computed and then asserted against an independent oracle; the comment on each assert names the
# oracle and says why the tolerance is what it is.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
import sympy as sp

from workbench.catalogue import fit_rate
from workbench.lie import bch, change_of_basis, symmetric_bch, witt_dimension

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(1)  # the notebook's seed: the same A0, B0
n = 4
A0, B0 = (m / np.linalg.norm(m, 2) for m in rng.standard_normal((2, n, n)))

# %% [markdown]
# ### Solution 01.1
#
# The truncated series is one element of the free Lie algebra; each basis writes it with other
# coefficients, but evaluating on matrices gives the same matrix, up to the rounding of a few
# dozen matrix products.  The truncation error is the neglected tail, about $\varepsilon^9$ times the
# size of the degree-9 coefficients, and does not depend on the basis either.  More precisely,
# $\log(e^{\varepsilon A}e^{\varepsilon B}) - \mathrm{BCH}_8 = Z_9 + Z_{10} + \dots$ with $Z_k = O(\varepsilon^k)$, so
# the truncation error *is* the degree-9 component $Z_9$ up to a relative $O(\varepsilon)$: the oracle is
# the engine's own $Z_9$, which the degree-8 evaluation never touches.

# %%
series = bch(8)
eps = 0.2
eA, eB = eps * A0, eps * B0
reference = scipy.linalg.logm(scipy.linalg.expm(eA) @ scipy.linalg.expm(eB)).real
values = {basis: series.evaluate(eA, eB, basis=basis) for basis in ("lyndon", "hall", "right-normed")}
counts = {basis: len(change_of_basis(series.coordinates, basis, 2)) for basis in values}
dimension = sum(witt_dimension(2, k) for k in range(1, 9))
first_neglected = bch(9).component(9).evaluate(eA, eB)  # Z_9, the degree-9 part alone
answer_01_1 = {
    "A0": A0,
    "B0": B0,
    "eps": eps,
    "values": values,
    "reference": reference,
    "counts": counts,
    "dimension": dimension,
    "first_neglected": first_neglected,
}

for basis, value in values.items():
    between = np.abs(value - values["lyndon"]).max()
    truncation = reference - value
    print(
        f"{basis:12s} nonzero {counts[basis]:3d} of {dimension}   vs Lyndon {between:.1e}   "
        f"vs logm {np.linalg.norm(truncation):.2e}   ‖error − Z_9‖ {np.linalg.norm(truncation - first_neglected):.1e}"
    )
    assert between < 1e-14  # oracle: the Lyndon evaluation; a few dozen products of norm-0.2 matrices
    assert counts[basis] <= dimension  # a coordinate vector cannot have more entries than the basis has elements
    # oracle: dense logm minus the engine's Z_9; what is left is Z_10 + ... (relative O(ε), about 4 % here)
    # plus logm's rounding (~1e-14), so 10 % of ‖Z_9‖ ≈ 1.3e-12 rejects any other truncation degree
    assert np.linalg.norm(truncation - first_neglected) < 0.1 * np.linalg.norm(first_neglected)
print(f"‖Z_9‖ = {np.linalg.norm(first_neglected):.2e}")
assert dimension == 71  # Witt's formula: 2 + 1 + 2 + 3 + 6 + 9 + 18 + 30

# %% [markdown]
# ### Solution 01.2
#
# With $X = e^Ae^B - 1 = (A + B) + (\tfrac12A^2 + AB + \tfrac12B^2) + \dots$, the degree-3 words are
#
# * in $X$: $\tfrac16A^3 + \tfrac12A^2B + \tfrac12AB^2 + \tfrac16B^3$;
# * in $X^2$ (degree 1 times degree 2, plus degree 2 times degree 1):
#   $A^3 + \tfrac32A^2B + ABA + \tfrac32AB^2 + \tfrac12BA^2 + BAB + \tfrac12B^2A + B^3$;
# * in $X^3 = (A + B)^3 + \dots$: all eight words with coefficient 1.
#
# Word by word, $X - \tfrac12X^2 + \tfrac13X^3$ gives $A^3$: $\tfrac16 - \tfrac12 + \tfrac13 = 0$;
# $A^2B$ and $AB^2$: $\tfrac12 - \tfrac34 + \tfrac13 = \tfrac1{12}$; $BA^2$ and $B^2A$:
# $-\tfrac14 + \tfrac13 = \tfrac1{12}$; $ABA$ and $BAB$: $-\tfrac12 + \tfrac13 = -\tfrac16$; $B^3$: 0.  So
#
# $$\tfrac1{12}(A^2B - 2ABA + BA^2 + AB^2 - 2BAB + B^2A) = \tfrac1{12}[A,[A,B]] + \tfrac1{12}[[A,B],B].$$
#
# A check that needs no algebra: for commuting $A = B = 1$ the degree-3 part of $\log(e\cdot e) = 2$
# must vanish, and indeed $\tfrac1{12}(1 - 2 + 1 + 1 - 2 + 1) = 0$.

# %%
A, B = sp.symbols("A B", commutative=False)
t = sp.Symbol("t")  # grading parameter: the degree-k part is the coefficient of t^k


def degree_part(expr, k):
    return sp.expand(expr).coeff(t, k)


X = sp.expand(
    sum((t * A) ** i / sp.factorial(i) for i in range(4)) * sum((t * B) ** j / sp.factorial(j) for j in range(4)) - 1
)
parts = {power: degree_part(X**power, 3) for power in (1, 2, 3)}
for power, words in parts.items():
    print(f"degree-3 words of X^{power}: {words}")
log_degree3 = sp.expand(parts[1] - parts[2] / 2 + parts[3] / 3)
claimed = sp.Rational(1, 12) * (A**2 * B - 2 * A * B * A + B * A**2 + A * B**2 - 2 * B * A * B + B**2 * A)
brackets = sp.Rational(1, 12) * (
    (A * (A * B - B * A) - (A * B - B * A) * A) + ((A * B - B * A) * B - B * (A * B - B * A))
)
print("degree 3 of log(e^A e^B):", log_degree3)
answer_01_2 = {"X1": parts[1], "X2": parts[2], "X3": parts[3], "log_degree3": log_degree3}
assert sp.expand(log_degree3 - claimed) == 0  # oracle: sympy's exact noncommutative expansion
assert sp.expand(claimed - brackets) == 0  # the word polynomial is the stated pair of brackets
assert sp.expand(bch(3).component(3).to_sympy() - claimed) == 0  # oracle: the engine, exact rationals

# %% [markdown]
# ### Solution 01.3
#
# By BCH, $e^{hA}e^{hB} = e^{h(A+B) + \frac{h^2}2[A,B] + O(h^3)}$, so the Lie splitting's one-step error
# is $\tfrac{h^2}2\lVert[A,B]\rVert + O(h^3)$: slope 2.  The symmetric series has no even terms, so
# $e^{hA/2}e^{hB}e^{hA/2} = e^{h(A+B) + h^3W_3 + O(h^5)}$ with
# $W_3 = -\tfrac1{24}[A,[A,B]] + \tfrac1{12}[[A,B],B]$: slope 3, constant $\lVert W_3\rVert$.  (For
# small $h$, $e^{Z + \delta} - e^Z \approx \delta$ because $e^Z \approx I$.)  Strang's extra
# exponential is free in practice — consecutive half steps merge — which is why it is the
# default splitting of geometric integration.

# %%
hs = np.geomspace(0.01, 0.2, 8)
exact = [scipy.linalg.expm(h * (A0 + B0)) for h in hs]
lie = [
    np.linalg.norm(scipy.linalg.expm(h * A0) @ scipy.linalg.expm(h * B0) - e) for h, e in zip(hs, exact, strict=True)
]
strang = [
    np.linalg.norm(scipy.linalg.expm(h * A0 / 2) @ scipy.linalg.expm(h * B0) @ scipy.linalg.expm(h * A0 / 2) - e)
    for h, e in zip(hs, exact, strict=True)
]
slope_lie, slope_strang = fit_rate(hs, lie), fit_rate(hs, strang)
half_commutator = np.linalg.norm(A0 @ B0 - B0 @ A0) / 2
W3 = np.linalg.norm(symmetric_bch(3).component(3).evaluate(A0, B0))
print(
    f"Lie:    slope {slope_lie:.3f}, error/h² at h = {hs[0]:g}: {lie[0] / hs[0] ** 2:.4f}, ‖[A,B]‖/2 = {half_commutator:.4f}"
)
print(f"Strang: slope {slope_strang:.3f}, error/h³ at h = {hs[0]:g}: {strang[0] / hs[0] ** 3:.4f}, ‖W₃‖ = {W3:.4f}")
# oracle: the BCH orders; h ≤ 0.2 keeps the O(h) relative corrections to the slopes small
assert abs(slope_lie - 2) < 0.1 and abs(slope_strang - 3) < 0.1
# oracle: the leading BCH terms ½[A,B] and W₃ evaluated by the engine.  Both constants carry relative corrections
# O(h): the next term of each exponent, and e^{Z+δ} − e^Z = δ + O(‖Z‖‖δ‖) with ‖Z‖ = h‖A + B‖ ≤ 2h.  At h = 0.01
# that is a few per cent at most (measured 0.1–0.3 %), hence 3 %
assert abs(lie[0] / hs[0] ** 2 / half_commutator - 1) < 0.03
assert abs(strang[0] / hs[0] ** 3 / W3 - 1) < 0.03

fig, ax = plt.subplots(figsize=(5.5, 3.4), layout="constrained")
ax.loglog(hs, lie, "o-", label=f"Lie $e^{{hA}}e^{{hB}}$, slope {slope_lie:.2f}")
ax.loglog(hs, strang, "s-", label=f"Strang $e^{{hA/2}}e^{{hB}}e^{{hA/2}}$, slope {slope_strang:.2f}")
ax.loglog(hs, half_commutator * hs**2, "k--", lw=1, label=r"$\frac{h^2}{2}\|[A,B]\|_F$")
ax.loglog(hs, W3 * hs**3, "k:", lw=1, label=r"$h^3\|W_3\|_F$")
ax.set_xlabel("step h (dimensionless)")
ax.set_ylabel(r"one-step error $\|\cdot - e^{h(A+B)}\|_F$")
ax.set_title("splitting errors are the first BCH terms left out")
ax.legend(fontsize=8)
plt.show()
