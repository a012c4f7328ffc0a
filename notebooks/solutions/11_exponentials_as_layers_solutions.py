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
# # Solutions — 11 Exponentials as layers
#
# Worked answers to the exercises of notebook `11_exponentials_as_layers`.  The generator of §1 is rebuilt exactly as
# in the notebook (same random seeds), so the numbers agree with it.  Oracles: `scipy.linalg.expm` and the Poisson tail
# bound, sympy matrix algebra, and the spectral gap of the generator.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
import sympy as sp
import torch
from scipy.stats import poisson

from workbench.nn import ExpMarkovAttention, givens_generator, givens_product, multiscale_offsets

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
torch.set_num_threads(1)
torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
n, d_model, heads = 24, 16, 2
x = torch.randn(1, n, d_model)
layer = ExpMarkovAttention(d_model, heads, offsets=multiscale_offsets(2), t_init=1.0).double()
dense_q = layer.generator(x).dense()[0].detach().numpy()
times = layer.times.detach().numpy()
Q = dense_q[0]

# %% [markdown]
# ### Solution 11.1
#
# $P = I + Q/\lambda$ has nonnegative off-diagonal entries $Q_{ij}/\lambda$, diagonal $1 + Q_{ii}/\lambda \ge 0$ because
# $\lambda \ge -Q_{ii}$, and rows summing to $1 + 0 = 1$.  Since $tQ = \lambda t(P - I)$ and $I$ commutes with $P$,
# $e^{tQ} = e^{-\lambda t}e^{\lambda tP} = \sum_k e^{-\lambda t}\frac{(\lambda t)^k}{k!}P^k$.  Every $P^k$ is stochastic,
# so $\lVert P^k\rVert_\infty = 1$ and the truncation error obeys
# $\lVert e^{tQ} - S_K\rVert_\infty \le \sum_{k > K}e^{-\lambda t}(\lambda t)^k/k! = \Pr(N > K)$: a certificate computed
# without any reference.  The Poisson law has mean and variance $\lambda t$, so $K \approx \lambda t +
# c\sqrt{\lambda t}$; for a tail as small as $10^{-12}$ at $\lambda t \approx 10$ the skewed Poisson tail needs $c \approx 9$.

# %%
t = 2.0
rate = float(-np.diag(Q).min())
P = np.eye(n) + Q / rate
reference = scipy.linalg.expm(t * Q)
partial, power, errors, tails = np.zeros_like(Q), np.eye(n), [], []
for k in range(120):
    partial = partial + poisson.pmf(k, rate * t) * power
    power = power @ P
    errors.append(np.abs(partial - reference).sum(axis=1).max())  # ∞-norm: the largest row sum
    tails.append(poisson.sf(k, rate * t))  # Pr(N > k)
errors, tails = np.array(errors), np.array(tails)
K = int(np.argmax(errors < 1e-12))
answer_11_1 = {"Q": Q, "t": t, "rate": rate, "errors": errors, "tails": tails, "K": K}
print(
    f"λ = {rate:.3f}, λt = {rate * t:.2f}; P stochastic: min {P.min():.2e}, rows − 1 {np.abs(P.sum(1) - 1).max():.1e}"
)
print(f"smallest K with ‖S_K − expm‖_∞ < 1e-12: K = {K} = λt + {(K - rate * t) / np.sqrt(rate * t):.1f}·√(λt)")
assert P.min() >= 0 and np.abs(P.sum(axis=1) - 1).max() < 1e-14
# Oracle 1: the Poisson tail bounds the error for every K (plus a rounding floor of a few ulps of expm, 1e-14)
assert np.all(errors <= tails + 1e-14)
# Oracle 2: scipy's expm, to the tolerance asked
assert errors[K] < 1e-12 and 30 < K < 60

fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
ks = np.arange(errors.size)
ax.semilogy(ks, np.maximum(errors, 1e-17), "o", ms=3, label=r"$\|S_K - e^{tQ}\|_\infty$")
ax.semilogy(ks, np.maximum(tails, 1e-17), "k-", lw=1, label=r"Poisson tail $\Pr(N > K)$")
ax.axvline(K, color="grey", ls=":", lw=1, label=f"K = {K}")
ax.set_xlim(0, 80)
ax.set_ylim(1e-17, 2)
ax.set_xlabel("truncation K (terms)")
ax.set_ylabel("error (dimensionless)")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Solution 11.2
#
# To second order, $e^{\varepsilon aB_1}e^{\varepsilon bB_2} = I + \varepsilon(aB_1 + bB_2) + \tfrac12\varepsilon^2(a^2B_1^2 +
# 2abB_1B_2 + b^2B_2^2) + O(\varepsilon^3)$, while $e^{\varepsilon(aB_1 + bB_2)} = I + \varepsilon(aB_1 + bB_2) +
# \tfrac12\varepsilon^2(a^2B_1^2 + ab(B_1B_2 + B_2B_1) + b^2B_2^2) + O(\varepsilon^3)$.  The difference is
# $\tfrac12\varepsilon^2ab(B_1B_2 - B_2B_1)$.  With $E_{ij}E_{kl} = \delta_{jk}E_{il}$: $B_1B_2 = E_{01}E_{12} = E_{02}$
# and $B_2B_1 = E_{21}E_{10} = E_{20}$, so $[B_1, B_2] = E_{02} - E_{20}$, of Frobenius norm $\sqrt2$, and the defect is
# $\varepsilon^2|ab|/\sqrt2$.  It is the first BCH term $\tfrac12[X, Y]$ of $\log(e^Xe^Y)$, hence the slope 2 of §3;
# rotations on disjoint planes commute, every bracket vanishes and the product is exactly $e^{A}$.
#
# Why the ratio approaches 1 like $1 - O(\varepsilon^2)$ and not $1 - O(\varepsilon)$: write the defect as
# $\varepsilon^2D_2 + \varepsilon^3D_3 + O(\varepsilon^4)$ with $D_2 = \tfrac12ab[B_1, B_2]$.  Then
# $\lVert\cdot\rVert_F^2 = \varepsilon^4\lVert D_2\rVert^2 + 2\varepsilon^5\langle D_2, D_3\rangle_F + O(\varepsilon^6)$, and the ε⁵ term
# vanishes.  With $X = \varepsilon aB_1$, $Y = \varepsilon bB_2$ the third-order part of $e^Xe^Y - e^{X+Y}$ has the skew
# part $\tfrac1{12}([X, [X, Y]] + [Y, [Y, X]])$ (its symmetric part is orthogonal to the skew $D_2$ anyway), and for a
# skew $X$ the map $Z \mapsto [X, Z]$ is antisymmetric in the Frobenius inner product, so
# $\langle[X, Y], [X, [X, Y]]\rangle_F = 0$, and likewise for $Y$.  The first correction to the ratio is of relative
# order ε² — about $6\cdot10^{-4}$ at ε = 0.1 here.

# %%
eps, a, b = sp.symbols("epsilon a b", real=True)


def E(i, j):
    m = sp.zeros(3, 3)
    m[i, j] = 1
    return m


B1, B2 = E(0, 1) - E(1, 0), E(1, 2) - E(2, 1)


def exp_series(M, order=3):
    """Truncated exponential series I + M + M²/2 + M³/6 (enough for terms through ε²)."""
    return sum((M**k / sp.factorial(k) for k in range(1, order + 1)), sp.eye(3))


difference = (exp_series(eps * a * B1) * exp_series(eps * b * B2) - exp_series(eps * (a * B1 + b * B2))).applyfunc(
    sp.expand
)
second_order = difference.applyfunc(lambda entry: entry.coeff(eps, 2))
commutator = B1 * B2 - B2 * B1
print("[B1, B2] =", commutator.tolist())
print("ε² coefficient of the difference − (ab/2)[B1, B2] =", (second_order - a * b / 2 * commutator).tolist())

planes, weights = ((0, 1), (1, 2)), np.array([0.7, -1.3])
ratios = []
for scale in (1e-1, 1e-2, 1e-3):
    angles = torch.tensor(scale * weights)
    gap = givens_product(angles, planes, 3).as_matrix() - torch.linalg.matrix_exp(givens_generator(angles, planes, 3))
    ratios.append(float(torch.linalg.matrix_norm(gap)) / (scale**2 * abs(weights.prod()) / np.sqrt(2)))
answer_11_2 = {
    "commutator": commutator,
    "second_order": second_order,
    "weights": tuple(weights),
    "epsilons": (1e-1, 1e-2, 1e-3),
    "ratios": ratios,
}
# Oracle: exact matrix algebra; also the first-order part must vanish
assert commutator == E(0, 2) - E(2, 0)
assert (second_order - a * b / 2 * commutator) == sp.zeros(3, 3)
assert difference.applyfunc(lambda entry: entry.coeff(eps, 1)) == sp.zeros(3, 3)
print("‖W − e^A‖_F / (ε²|ab|/√2) at ε = 0.1, 0.01, 0.001:", np.round(ratios, 7))
print("(1 − ratio)/ε²:", np.round([(1 - r) / s**2 for r, s in zip(ratios, (1e-1, 1e-2, 1e-3), strict=True)], 4))
# Oracle: the leading term ε²|ab|/√2, with a relative correction of order ε² (derived above; it measures ≈ 0.06 ε²),
# so the margin 0.1·ε² — a hundredfold tighter per step.  At ε = 1e-3 the defect is ~1e-6 against rounding ~1e-16:
# the relative rounding error, ~1e-10, stays far below the margin 1e-7.
assert all(abs(r - 1) < 0.1 * s**2 for r, s in zip(ratios, (1e-1, 1e-2, 1e-3), strict=True))

# %% [markdown]
# ### Solution 11.3
#
# Write $e^{tQ} - \mathbf 1\pi^\top = \sum_{k\ge2}e^{t\lambda_k}v_k u_k^\top$ over the nonzero eigenvalues: for large $t$ the
# term with the largest real part, $\lambda_2 = -\gamma$, dominates, so $d(t) \approx Ce^{-\gamma t}$ and the slope of
# $\log d$ is $-\gamma$.  A head reaches the whole sequence (forgets where it started) once $t \gtrsim 1/\gamma$; with
# $t_h$ well below $1/\gamma$ it is local, well above it is global.  The untrained layer has $t_h = 1$ and
# $t_h\gamma \approx 0.24$: head 0 is local at initialisation, its $e^{tQ}$ reaching a few neighbours along the band.
# Training moves $t_h$ continuously (its gradient exists, §1); pushing it past $1/\gamma \approx 4$ would make the head
# global — the sense in which "the learned time sets the reach".

# %%
w, vl = scipy.linalg.eig(Q.T)
pi = np.real(vl[:, np.argmin(np.abs(w))])
pi = pi / pi.sum()
eigenvalues = np.sort(np.linalg.eigvals(Q).real)[::-1]
spectral_gap = -eigenvalues[1]
ts = np.linspace(5, 60, 12 if SMALL else 56)
distance = np.array([0.5 * np.abs(scipy.linalg.expm(s * Q) - pi).sum(axis=1).max() for s in ts])
rate_fit = np.polyfit(ts, np.log(distance), 1)[0]
print(f"gap γ = {spectral_gap:.4f} (1/γ = {1 / spectral_gap:.2f}); fitted slope {rate_fit:.4f}")
print(f"learned times t_h = {np.round(times, 3)}: t_h·γ = {np.round(times * spectral_gap, 3)}")
# Oracles: π is stationary (πᵀQ = 0 to rounding); the slope equals −γ within 2 % (the subleading modes decay
# at least 4× faster here, so over t ≥ 5 they bend the fit by much less than that)
assert np.abs(pi @ Q).max() < 1e-12 and pi.min() > 0
assert abs(rate_fit + spectral_gap) < 0.02 * spectral_gap

fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
ax.semilogy(ts, distance, "o", label="distance to stationarity d(t)")
ax.semilogy(ts, distance[0] * np.exp(-spectral_gap * (ts - ts[0])), "k--", lw=1, label=r"$\propto e^{-\gamma t}$")
ax.set_xlabel("time t (dimensionless)")
ax.set_ylabel("total variation (dimensionless)")
ax.legend(fontsize=8)
plt.show()
