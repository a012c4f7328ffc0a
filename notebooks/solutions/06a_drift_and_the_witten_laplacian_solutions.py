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
# # Solutions — 06a Drift and the Witten Laplacian
#
# Worked answers to the exercises of notebook `06a_drift_and_the_witten_laplacian.py`.  Every answer is computed and
# then asserted against an independent oracle; the comment on each assert names the oracle and says why the
# tolerance is what it is.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
import sympy as sp
from IPython.display import display

from workbench.catalogue import claim
from workbench.continuum import RiemannianMetric, witten_potential

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
x = sp.Symbol("x", real=True)
line = RiemannianMetric([[1]], (x,))
double_well = (x**2 - 1) ** 2 / 4


def witten_levels(potential, hbar, half_width, size, count):
    """Lowest eigenpairs of −ħ d²/dx² + V on a uniform grid with Dirichlet ends (three-point Laplacian)."""
    V = sp.lambdify(x, witten_potential(line, potential, hbar), "numpy")
    grid = np.linspace(-half_width, half_width, size + 2)[1:-1]
    dx = grid[1] - grid[0]
    values, vectors = scipy.linalg.eigh_tridiagonal(
        2 * hbar / dx**2 + V(grid), np.full(size - 1, -hbar / dx**2), select="i", select_range=(0, count - 1)
    )
    return grid, values, vectors


# %% [markdown]
# ### Solution 06a.1
#
# With $\Phi' = x^3 - x$ and $\Phi'' = 3x^2 - 1$, the Witten potential is $V = (x^3 - x)^2/\hbar - (3x^2 - 1)$.  The ground
# state of $H = -\hbar\,d^2/dx^2 + V$ is $u_0 = e^{-\Phi/\hbar}$ with eigenvalue 0 (section 2: it is the image of the constant
# function, which $\mathcal C_{d\Phi}$ annihilates).  The discrete $H$ has an $O(\Delta x^2)$ consistency error, so its lowest
# eigenvalue is $0$ up to about $\Delta x^2\cdot\lVert u_0''''\rVert/12 \sim 10^{-5}$ here.
#
# The next eigenvalue, about $0.85$, is far below the $4 = 2\Phi''(\pm 1)$ of one harmonic well: the first excited state
# is (nearly) $u_0$ with opposite signs in the two wells, and the only cost of that sign change is the small amplitude
# of $u_0$ at the barrier — the slow mode is the hopping between wells.

# %%
V_double = sp.expand(witten_potential(line, double_well, 1))
print("V =", V_double)
grid, levels, modes = witten_levels(double_well, 1.0, 4.0, 2000, 4)
ground = np.exp(-((grid**2 - 1) ** 2) / 4)
ground /= np.linalg.norm(ground)
mode0 = modes[:, 0] * np.sign(modes[:, 0] @ ground)
answer_06a_1 = {"V": V_double, "grid": grid, "eigenvalues": levels, "ground_state": mode0}
print(f"lowest eigenvalues: {np.round(levels, 6)}")
print(f"max |u₀ − e^(−Φ/ħ)/‖·‖| = {np.abs(mode0 - ground).max():.1e}")
# oracle: the exact ground state (eigenvalue 0, eigenfunction e^{−Φ/ħ}); the tolerances are the O(Δx²)
# discretisation error, Δx = 0.004 here, with a factor of ten to spare
assert abs(levels[0]) < 1e-4 and np.abs(mode0 - ground).max() < 1e-5
assert 0.8 < levels[1] < 0.9 and levels[1] < 4  # the tunnelling gap is well below the single-well value 4

fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
ax.plot(grid, sp.lambdify(x, double_well)(grid), "k", lw=1, label=r"$\Phi = (x^2 - 1)^2/4$")
for n in range(2):
    shape = modes[:, n] / np.abs(modes[:, n]).max()
    ax.plot(grid, shape, label=rf"mode $n = {n}$, $\lambda_{n} = {round(levels[n], 3) + 0.0:.3f}$")
ax.plot(grid[::60], ground[::60] / ground.max(), "o", ms=3, color="C0", label=r"$e^{-\Phi/\hbar}$ (normalised)")
ax.set_xlim(-2.5, 2.5)
ax.set_ylim(-1.2, 1.6)
ax.set_xlabel(r"$x$ (dimensionless, $\hbar = 1$)")
ax.set_ylabel(r"modes (scaled to max 1) and $\Phi$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Solution 06a.2
#
# (1) $Qu = \sqrt\hbar\,u' + \Phi'u/\sqrt\hbar$, and
# $Q^*(Qu) = -\sqrt\hbar\bigl(\sqrt\hbar\,u'' + (\Phi''u + \Phi'u')/\sqrt\hbar\bigr) + (\Phi'/\sqrt\hbar)\bigl(\sqrt\hbar\,u' + \Phi'u/\sqrt\hbar\bigr)
# = -\hbar u'' + (\Phi'^2/\hbar - \Phi'')u$: the two $\Phi'u'$ terms cancel, as the drift terms did in section 2.  In fact
# $Q = \sqrt\hbar\,e^{-\Phi/\hbar}\,\tfrac{d}{dx}\,e^{\Phi/\hbar}$ is the ground-state conjugate of the gradient, so $Q^*Q$ is the conjugate of
# $\mathcal C_{d\Phi}$, and $Qe^{-\Phi/\hbar} = \sqrt\hbar\,e^{-\Phi/\hbar}(1)' = 0$.  Then $\langle u, Hu\rangle = \lVert Qu\rVert^2 \ge 0$.
#
# (2) $Q^*$ has the opposite sign of the derivative, so $QQ^* = -\hbar\,d^2/dx^2 + \Phi'^2/\hbar + \Phi''$: the sign of $\Phi''$
# flips.  If $Q^*Qu = \lambda u$ with $\lambda \ne 0$, then $Qu \ne 0$ (else $\lambda u = 0$) and $QQ^*(Qu) = Q(\lambda u) = \lambda\,Qu$; in the
# other direction $Q^*$ maps eigenfunctions of $QQ^*$ to eigenfunctions of $Q^*Q$.  So the nonzero spectra agree.  A zero
# mode of $QQ^*$ would satisfy $Q^*w = 0$, i.e. $w \propto e^{+\Phi/\hbar}$, which grows at infinity for a confining Φ and is
# no eigenfunction: the lowest level of the partner is the gap $\lambda_1$ of $H$.
#
# (3) For $\Phi = x^2/2$: $\Phi'' = 1$, so $QQ^* = Q^*Q + 2$.  If $Hu = \lambda u$ then $H(Qu) = (QQ^* - 2)Qu = (\lambda - 2)Qu$:
# $Q$ lowers a level by 2 until it reaches the kernel $e^{-x^2/2\hbar}$ at level 0, so the levels are $0, 2, 4, \dots$ — the
# ladder of the oscillator, without Hermite polynomials.

# %%
hbar = sp.Symbol("hbar", positive=True)
Phi, u = sp.Function("Phi")(x), sp.Function("u")(x)


def Q(w, potential=Phi):
    """√ħ w′ + Φ′w/√ħ."""
    return sp.sqrt(hbar) * w.diff(x) + potential.diff(x) * w / sp.sqrt(hbar)


def Q_adjoint(w, potential=Phi):
    """−√ħ w′ + Φ′w/√ħ, the formal L²(dx) adjoint of Q."""
    return -sp.sqrt(hbar) * w.diff(x) + potential.diff(x) * w / sp.sqrt(hbar)


well = x**2 / 2
steps = [
    claim(
        "Q*Q u = −ħu'' + Vu",
        sp.expand(Q_adjoint(Q(u))),
        sp.expand(-hbar * u.diff(x, 2) + witten_potential(line, Phi, hbar) * u),
        statement=r"Q^*Q = -\hbar\,\frac{d^2}{dx^2} + \frac{\Phi'^2}{\hbar} - \Phi''",
        because="the Φ′u′ terms of −√ħ(Qu)′ and (Φ′/√ħ)Qu cancel; what is left is the Witten potential",
    ),
    claim(
        "Q e^{−Φ/ħ} = 0",
        sp.simplify(Q(sp.exp(-Phi / hbar))),
        statement=r"Q\,e^{-\Phi/\hbar} = 0",
        because="Q = √ħ e^{−Φ/ħ} (d/dx) e^{Φ/ħ}, and it differentiates the constant 1",
    ),
    claim(
        "QQ* u = −ħu'' + (Φ'²/ħ + Φ'')u",
        sp.expand(Q(Q_adjoint(u))),
        sp.expand(-hbar * u.diff(x, 2) + (Phi.diff(x) ** 2 / hbar + Phi.diff(x, 2)) * u),
        statement=r"QQ^* = -\hbar\,\frac{d^2}{dx^2} + \frac{\Phi'^2}{\hbar} + \Phi''",
        because="the same cancellation, with the derivative of Φ′ now entering with a + sign",
    ),
    claim(
        "harmonic well: QQ* − Q*Q = 2",
        sp.expand(Q(Q_adjoint(u, well), well) - Q_adjoint(Q(u, well), well)),
        2 * u,
        statement=r"\Phi = \tfrac{x^2}{2}:\quad [Q, Q^*] = 2\Phi'' = 2",
        because="the two orderings differ by 2Φ″u, and Φ″ = 1",
    ),
]
for step in steps:
    display(step)
    # oracle: sympy decides each identity exactly, for an arbitrary potential Φ(x) and function u(x)
    assert step.holds is True

partner = sp.lambdify(x, double_well.diff(x) ** 2 + double_well.diff(x, 2), "numpy")
grid, levels_H, _ = witten_levels(double_well, 1.0, 4.0, 2000, 5)
dx = grid[1] - grid[0]
levels_partner = scipy.linalg.eigh_tridiagonal(
    2 / dx**2 + partner(grid), np.full(grid.size - 1, -1 / dx**2), eigvals_only=True, select="i", select_range=(0, 4)
)
answer_06a_2 = {
    "QstarQ": sp.expand(Q_adjoint(Q(u))),
    "QQstar": sp.expand(Q(Q_adjoint(u))),
    "Q_ground": sp.simplify(Q(sp.exp(-Phi / hbar))),
    "commutator_well": sp.expand(Q(Q_adjoint(u, well), well) - Q_adjoint(Q(u, well), well)),
    "levels_H": levels_H,
    "levels_partner": levels_partner,
}
print(f"H:       {np.round(levels_H, 5)}")
print(f"partner: {np.round(levels_partner, 5)}")
print(f"max |λ_(n+1)(H) − λ_n(QQ*)|, n < 4: {np.abs(levels_H[1:] - levels_partner[:4]).max():.1e}")
# oracle: the isospectrality of part (2), exact for the operators; the two discretisations each carry their own
# O(Δx²) error (Δx = 0.004, about 1e-4 on these levels), so 1e-3 leaves a factor of ten
assert np.abs(levels_H[1:] - levels_partner[:4]).max() < 1e-3
assert levels_partner[0] > 0.8  # no zero mode: e^{+Φ/ħ} is not normalisable

# %% [markdown]
# ### Solution 06a.3
#
# The Gibbs law $e^{-2\Phi/\hbar}$ is a Boltzmann law $e^{-\Phi/T}$ at temperature $T = \hbar/2$; the process
# $dX = -2\Phi'(X)\,dt + \sqrt{2\hbar}\,dW$ is overdamped Langevin dynamics in the potential $U = 2\Phi$ with noise $\varepsilon = \hbar$.
# The Eyring–Kramers formula gives each well-to-well rate as $\frac{\sqrt{U''(\pm1)\,|U''(0)|}}{2\pi}e^{-\Delta U/\varepsilon}$ with
# $U''(\pm 1) = 4$, $U''(0) = -2$, $\Delta U = 1/2$, and the gap of a symmetric two-well system is the sum of the two
# rates: $\lambda_1 \approx \frac{2\sqrt 8}{2\pi}e^{-1/(2\hbar)} = \frac{2\sqrt2}{\pi}e^{-1/(2\hbar)}$.  So $\log\lambda_1$ against $1/\hbar$ is a line
# of slope $-\Delta U = -2\Delta\Phi = -1/2$.  The measured ratio to the formula sits about 10 % below 1 and creeps back
# towards 1 as ħ shrinks (the first correction is $O(\hbar)$); at the largest ħ the barrier is too low for the
# asymptotics and the ratio is no longer monotone.

# %%
hbars = np.array([0.3, 0.2, 0.15, 0.12, 0.1, 0.08])
gaps = []
for hb in hbars:
    _, values, _ = witten_levels(double_well, hb, 3.0, 3000, 2)
    gaps.append(values[1] - values[0])
gaps = np.array(gaps)
slope, intercept = np.polyfit(1 / hbars, np.log(gaps), 1)
kramers = 2 * np.sqrt(2) / np.pi * np.exp(-1 / (2 * hbars))
print(f"gaps λ₁ − λ₀: {np.array2string(gaps, formatter={'float': '{:.3e}'.format})}")
print(f"fitted slope of log gap against 1/ħ: {slope:.4f}  (−2ΔΦ = −0.5)")
print(f"gap / Eyring–Kramers: {np.round(gaps / kramers, 3)}")
# oracle 1: the Arrhenius exponent −2ΔΦ = −1/2; the O(ħ) prefactor correction tilts a fit over this range by
# a few thousandths, so 0.03 is a safe margin
assert abs(slope + 0.5) < 0.03
# oracle 2: the Eyring–Kramers prefactor 2√2/π, to within its O(ħ) correction (≤ 15 % for ħ ≤ 0.3)
assert np.all(np.abs(gaps / kramers - 1) < 0.15)

fig, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
ax.semilogy(1 / hbars, gaps, "o", label=r"finite differences: $\lambda_1 - \lambda_0$")
ax.semilogy(1 / hbars, kramers, "k--", lw=1, label=r"Eyring–Kramers $(2\sqrt{2}/\pi)\,e^{-1/(2\hbar)}$")
ax.set_xlabel(r"$1/\hbar$")
ax.set_ylabel("spectral gap (dimensionless)")
ax.set_title(f"Arrhenius law: fitted slope {slope:.3f}")
ax.legend(fontsize=8)
plt.show()
