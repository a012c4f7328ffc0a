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
# # Solutions — 06b Doob tilt and antisymmetric link
#
# Worked answers to the exercises of notebook `06b_doob_tilt_and_antisymmetric_link.py`.  Every answer is computed and
# then asserted against an independent oracle; the comment on each assert names the oracle and says why the
# tolerance is what it is.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.integrate
import scipy.special
import sympy as sp
from IPython.display import display

from workbench.catalogue import claim, fit_rate
from workbench.markov import MarkovOperator, doob_transform, gauss_kernel, stationary_current

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"


def ring(n):
    """N equally spaced angles, their points on the unit circle, and the wrapped steps θ_j − θ_i."""
    angles = 2 * np.pi * np.arange(n) / n
    steps = (angles[None, :] - angles[:, None] + np.pi) % (2 * np.pi) - np.pi
    return angles, np.column_stack([np.cos(angles), np.sin(angles)]), steps


def linked_walk(points, beta, tilt, link):
    """Row-normalised Gauss kernel times the destination tilt h_j and the antisymmetric link e^{b_ij}."""
    W = gauss_kernel(points, beta) * np.exp(link) * tilt[None, :]
    return MarkovOperator(W / W.sum(axis=1, keepdims=True))


def co_closed_link(angles, steps, c):
    """b_ij = B(θ̄_ij) sin(θ_j − θ_i) with B = c Z e^{2U}, U = cos θ + ½ sin 2θ, Z the node mean of e^{−2U}."""
    mid = angles[:, None] + steps / 2
    Z = np.mean(np.exp(-2 * (np.cos(angles) + 0.5 * np.sin(2 * angles))))
    return c * Z * np.exp(2 * (np.cos(mid) + 0.5 * np.sin(2 * mid))) * np.sin(steps)


# %% [markdown]
# ### Solution 06b.1
#
# **Kirchhoff.**  For an arc $\mathcal A$ of nodes, $\sum_{i\in\mathcal A}(J\mathbf 1)_i = \sum_{i\in\mathcal A, j\notin\mathcal A}J_{ij}$, because the pairs inside
# $\mathcal A$ cancel by antisymmetry; and $J\mathbf 1 = \pi - \pi\mathsf P = 0$.  The arc between two cuts exchanges current only
# across them, so what enters through one leaves through the other: $F$ is the same at every cut.
#
# **The co-closed value.**  From node $\theta$ a step $s$ has the weight $e^{-\beta s^2 + (B - U')s}$ to first order (the
# tilt $h_j = e^{-U(\theta + s)}$ contributes $-U's$), so its mean is $(B - U')/(2\beta)$ and its variance $1/(2\beta)$.  The
# Fokker–Planck current of the density ρ per step is $j = \rho(B - U')/(2\beta) - \rho'/(4\beta)$.  For $\rho = e^{-2U}/(2\pi Z)$ the
# $U'$ terms cancel and $j = \rho B/(2\beta)$; the co-closed $B = cZe^{2U}$ makes $\rho B = c/2\pi$, so $j = c/(4\pi\beta)$.
#
# **The constant link.**  With $B = c$, write $W = 2U - 2c\theta$: the stationary equation $j = $ const becomes
# $(\rho e^W)' = -4\beta j\,e^W$, and periodicity of ρ fixes $j$ (an integral, computed below).  The push drives mass out
# of the well ($\theta \approx 5\pi/6$) up the slope in front of the barrier top ($\theta \approx \pi/6$), where it piles up: π moves
# at order one (figure).  The same flux must still cross the barrier top, where ρ is smallest and a constant push
# carries little, so the barrier throttles the current to about 0.17 of the co-closed value — whose $B \propto e^{2U}$
# pushes hardest exactly there, and so needs no pile-up.

# %%
n_ring, c_link = 600, 0.2
angles, points, steps = ring(n_ring)
U = np.cos(angles) + 0.5 * np.sin(2 * angles)
tilt = np.exp(-U)

# the periodic Fokker–Planck solution for the constant link, on a fine grid (trapezoid error ~1e-8)
theta = np.linspace(0, 2 * np.pi, 40001)
W_fp = 2 * (np.cos(theta) + 0.5 * np.sin(2 * theta)) - 2 * c_link * theta
inner = scipy.integrate.cumulative_trapezoid(np.exp(W_fp), theta, initial=0)  # ∫₀^θ e^W
density = (inner[-1] / (1 - np.exp(-4 * np.pi * c_link)) - inner) * np.exp(-W_fp)  # ρ for 4βj = 1
mass = scipy.integrate.trapezoid(density, theta)
constant_ratio = np.pi / (c_link * mass)  # 4πβj/c for the normalised ρ
print(f"Fokker–Planck: constant link carries 4πβj/c = {constant_ratio:.4f} of the co-closed flux")


def cut_flux(J, m, n):
    """Net current from the N/4 nodes before node m to the N/4 nodes from m on."""
    before, after = (m - 1 - np.arange(n // 4)) % n, (m + np.arange(n // 4)) % n
    return J[np.ix_(before, after)].sum()


laws = {}
answer_06b_1 = {"flux": {"co-closed": {}, "constant": {}}, "ratio": {"co-closed": {}, "constant": {}}}  # filled below
for beta in (50.0, 200.0):
    for name, link in (("co-closed", co_closed_link(angles, steps, c_link)), ("constant", c_link * np.sin(steps))):
        op = linked_walk(points, beta, tilt, link)
        J = stationary_current(op.P, op.stationary)
        fluxes = np.array([cut_flux(J, m, n_ring) for m in (0, n_ring // 3, n_ring // 2)])
        ratio = fluxes[0] * 4 * np.pi * beta / c_link
        answer_06b_1["flux"][name][beta], answer_06b_1["ratio"][name][beta] = fluxes, ratio
        laws[beta, name] = op.stationary
        print(f"β = {beta:5g}, {name:9s}: F = {fluxes}, 4πβF/c = {ratio:.4f}")
        # oracle 1: Kirchhoff's law J1 = 0; the cut sums carry rounding of ~1e-16 per entry, so 1e-10 is generous
        assert np.ptp(fluxes) < 1e-10 * abs(fluxes[0])
        # oracle 2: the continuum flux (c/4πβ, resp. the periodic Fokker–Planck value); the kernel's continuum limit
        # has an O(1/β) bias, which is what the tolerance allows
        expected = 1.0 if name == "co-closed" else constant_ratio
        assert abs(ratio / expected - 1) < 1 / beta

fig, ax = plt.subplots(figsize=(5.8, 3.6), layout="constrained")
ax.plot(angles, laws[200.0, "co-closed"] * n_ring / (2 * np.pi), label=r"co-closed link, $\beta = 200$")
ax.plot(angles, laws[200.0, "constant"] * n_ring / (2 * np.pi), label=r"constant link, $\beta = 200$")
ax.plot(theta, density / mass, "k--", lw=1, label="constant link, Fokker–Planck")
ax.set_xlabel(r"node angle $\theta$ (rad)")
ax.set_ylabel(r"stationary density $N\pi_i/2\pi$ (per rad)")
ax.set_title("the constant link piles mass up in front of the barrier")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Solution 06b.2
#
# (1) $\pi_i\mathsf P_{h,ij} \propto h_i(\mathsf Kh)_i\cdot\mathsf K_{ij}h_j/(\mathsf Kh)_i = h_i\mathsf K_{ij}h_j$, symmetric in $(i, j)$
# because $\mathsf K$ is: detailed balance.  Summing over $i$: $\sum_i\pi_i\mathsf P_{h,ij} = \sum_i\pi_j\mathsf P_{h,ji} = \pi_j$ since
# $\mathsf P_h$ is row-stochastic — so π is stationary.
#
# (2) $\operatorname{rownorm}(\operatorname{diag}(q^{-\alpha})\mathsf K\operatorname{diag}(q^{-\alpha}))_{ij} =
# q_i^{-\alpha}\mathsf K_{ij}q_j^{-\alpha}/\sum_l q_i^{-\alpha}\mathsf K_{il}q_l^{-\alpha} = \mathsf K_{ij}h_j/(\mathsf Kh)_i$ with $h = q^{-\alpha}$:
# the source factor $q_i^{-\alpha}$ cancels.  So α-normalisation is a reversible reweighting at the destination only.

# %%
k00, k01, k02, k11, k12, k22 = sp.symbols("k_00 k_01 k_02 k_11 k_12 k_22", positive=True)
K_sym = sp.Matrix([[k00, k01, k02], [k01, k11, k12], [k02, k12, k22]])
h_sym = sp.Matrix(sp.symbols("h_0:3", positive=True))
Kh = K_sym * h_sym
P_sym = sp.diag(*[1 / v for v in Kh]) * K_sym * sp.diag(*h_sym)
pi_sym = sp.Matrix([h_sym[i] * Kh[i] for i in range(3)])
flux = sp.diag(*pi_sym) * P_sym
steps = [
    claim(
        "P_h is row-stochastic",
        P_sym * sp.ones(3, 1),
        sp.ones(3, 1),
        statement=r"\mathsf P_h\mathbf 1 = \mathbf 1",
        because="row i of 𝖪 diag(h) sums to (𝖪h)_i, the number it is divided by",
    ),
    claim(
        "detailed balance: diag(π)P_h − P_hᵀdiag(π) = 0",
        flux - flux.T,
        statement=r"\operatorname{diag}(\pi)\mathsf P_h = \mathsf P_h^\top\operatorname{diag}(\pi),\quad \pi_i = h_i(\mathsf Kh)_i",
        because="π_i P_{h,ij} = h_i 𝖪_ij h_j, symmetric in (i, j) because 𝖪 is",
    ),
    claim(
        "stationarity: πᵀP_h − πᵀ = 0",
        pi_sym.T * P_sym - pi_sym.T,
        statement=r"\pi^\top\mathsf P_h = \pi^\top",
        because="sum detailed balance over i and use P_h 1 = 1",
    ),
]
K = gauss_kernel(np.random.default_rng(0).standard_normal((50, 3)), 0.5)
q = K.sum(axis=1)
P_doob = {alpha: doob_transform(K, q**-alpha).P for alpha in (0.5, 1.0)}
gaps = {alpha: np.abs(P_doob[alpha] - MarkovOperator.from_kernel(K, alpha=alpha).P).max() for alpha in (0.5, 1.0)}
answer_06b_2 = {
    "P": P_sym,
    "pi": pi_sym,
    "balance": sp.simplify(flux - flux.T),
    "P_doob": P_doob,
    "gaps": gaps,
}
for step in steps:
    display(step)
    # oracle: sympy decides each matrix identity exactly, for all positive symbols
    assert step.holds is True

for alpha, gap in gaps.items():
    print(f"α = {alpha}: max |P_h(h = q^−α) − α-normalised P| = {gap:.1e}")
    # oracle: the identity of part (2); computed in another order the two would still agree to a few ulps of
    # entries of size ~1/50, well below 1e-14 (here they agree exactly: the library reweights at the destination)
    assert gap < 1e-14


# %% [markdown]
# ### Solution 06b.3
#
# **Untilted ring.**  The walk is circulant, so π is uniform and $\log(\mathsf A_{ij}/\mathsf A_{ji}) = \log(\mathsf P_{ij}/\mathsf P_{ji}) = 2c\sin s_{ij}$: the
# normalisations of the two rows are equal.  Then $\sigma = \tfrac12\sum_{ij}\tfrac1N(\mathsf P_{ij} - \mathsf P_{ji})\,2c\sin s_{ij} = 2c\,\mathbb E[\sin s]$, the
# two sums being equal after swapping $i$ and $j$.  A step has the weight $e^{-2\beta(1 - \cos s) + c\sin s} \propto e^{R\cos(s - \varphi)}$ with
# $R = \sqrt{4\beta^2 + c^2}$, $\sin\varphi = c/R$: a von Mises law, so $\mathbb E[\sin s] = \sin\varphi\,I_1(R)/I_0(R)$ and
# $\sigma = 2c^2I_1(R)/(R\,I_0(R)) \approx (c^2/\beta)(1 - 1/(4\beta))$ (the node sum equals the integral up to $e^{-O(N^2/\beta)}$).
#
# **Tilted ring.**  A steady current $j$ through a density ρ with diffusivity $D$ dissipates $\oint j^2/(\rho D)\,d\theta$.  Here
# $D = 1/(4\beta)$ (half the variance of a step), $j = c/(4\pi\beta)$ and $\rho = e^{-2U}/(2\pi Z)$ (Solution 06b.1), so
# $\sigma \approx (c^2/\beta)\,Z\,Z_+$ with $Z_+$ the mean of $e^{2U}$.  By Cauchy–Schwarz $Z Z_+ \ge 1$, with equality only for constant
# $U$: the same flux costs more where it must cross regions of small probability.  Reversible walks pay nothing and
# carry nothing.

# %%
n_ring = 400
angles, points, steps = ring(n_ring)


def entropy_production(op):
    """σ = ½ Σ J_ij log(A_ij/A_ji) over the pairs where both directions of the flux are positive."""
    A = op.stationary[:, None] * op.P
    both = (A > 0) & (A.T > 0)
    J = stationary_current(op.P, op.stationary)
    return 0.5 * np.sum(J[both] * np.log(A[both] / A.T[both]))


def von_mises(c, beta):
    """The closed form 2c² I₁(R)/(R I₀(R)), R = √(4β² + c²), with exponentially scaled Bessel functions."""
    R = np.hypot(2 * beta, c)
    return 2 * c**2 * scipy.special.i1e(R) / (R * scipy.special.i0e(R))


flat = np.ones(n_ring)
cs, betas = np.array([0.1, 0.2, 0.4, 0.8]), np.array([50.0, 100.0, 200.0, 400.0])
sigma_c = np.array([entropy_production(linked_walk(points, 100.0, flat, c * np.sin(steps))) for c in cs])
sigma_b = np.array([entropy_production(linked_walk(points, b, flat, 0.4 * np.sin(steps))) for b in betas])
slope_c, slope_b = fit_rate(cs, sigma_c), fit_rate(1 / betas, sigma_b)
print(f"σ at β = 100: {sigma_c}  slope in c {slope_c:.4f};  σ at c = 0.4: {sigma_b}  slope in 1/β {slope_b:.4f}")
# oracle 1: the von Mises closed form; both sides are double-precision sums of positive terms, so 1e-12 relative
closed = np.concatenate([von_mises(cs, 100.0), von_mises(0.4, betas)])
assert np.abs(np.concatenate([sigma_c, sigma_b]) / closed - 1).max() < 1e-12
# oracle 2: the exponents 2 and 1 of c²/β; the closed form's corrections tilt them by < 0.003 over these ranges
assert abs(slope_c - 2) < 0.01 and abs(slope_b - 1) < 0.01

U = np.cos(angles) + 0.5 * np.sin(2 * angles)
Z_Zplus = np.mean(np.exp(-2 * U)) * np.mean(np.exp(2 * U))
betas_tilted = np.array([50.0, 100.0, 200.0])
cost = np.array(
    [
        entropy_production(linked_walk(points, b, np.exp(-U), co_closed_link(angles, steps, 0.2))) * b / 0.2**2
        for b in betas_tilted
    ]
)
print(f"tilted ring, co-closed link: σβ/c² = {np.round(cost, 4)};  Z Z₊ = {Z_Zplus:.4f}")
# oracle 3: the continuum dissipation ∮ j²/(ρD) = c² Z Z₊/β, up to the O(1/β) bias of the kernel's continuum limit
assert np.all(np.abs(cost / Z_Zplus - 1) < 2 / betas_tilted) and Z_Zplus > 1

fig, ax = plt.subplots(figsize=(5.8, 3.6), layout="constrained")
ax.semilogx(betas, sigma_b * betas / 0.4**2, "o-", label=r"untilted ring, $c = 0.4$")
ax.semilogx(betas, von_mises(0.4, betas) * betas / 0.4**2, "k+", ms=9, label="von Mises closed form")
ax.semilogx(betas_tilted, cost, "s-", label=r"tilted ring, co-closed link, $c = 0.2$")
ax.axhline(Z_Zplus, color="C1", ls="--", lw=1, label=r"$Z Z_+$ (continuum)")
ax.axhline(1, color="C0", ls=":", lw=1, label=r"$1$ (continuum, $U = 0$)")
ax.set_xticks(betas, [f"{b:g}" for b in betas])
ax.minorticks_off()
ax.set_xlabel(r"inverse bandwidth $\beta$")
ax.set_ylabel(r"$\sigma\beta/c^2$ (dimensionless)")
ax.set_ylim(0, 9.5)
ax.legend(fontsize=8)
plt.show()
