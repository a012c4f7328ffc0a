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
# # Solutions — 10a Multi-head attention is a connection walk
#
# Worked answers to the exercises of notebook `10a_multihead_attention_is_a_connection_walk`.  Each answer is
# computed and then asserted against an oracle: a dimension count, a closed form checked by sympy, or a fitted
# slope with a stated margin.  The objects of the notebook are rebuilt here with their own random generator, so
# the numbers differ slightly from the notebook's; the statements do not.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import sympy as sp
from scipy.spatial.transform import Rotation
from scipy.stats import ortho_group

from workbench.attention import (
    connection_laplacian,
    gauge_transform,
    mixing_generator,
    orthogonality_deviation,
    reversibility_residual,
    softmax_rows,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(1010)
m, d = 7, 3
P_walk = softmax_rows(rng.standard_normal((m, m)) * 1.5)  # a nonreversible walk, all entries positive
O_rand = ortho_group.rvs(d, size=m * m, random_state=31).reshape(m, m, d, d)

# %% [markdown]
# ### Solution 10a.1
#
# A parallel section satisfies $X_i = X_jO_{ij}$ on every active edge, so it is fixed by the walk:
# $(\mathcal TX)_i = \sum_jA_{ij}X_jO_{ij} = \sum_jA_{ij}X_i = X_i$.  For the flat connection $O_{ij} = V_j^{-1}V_i$ the
# sections are $X_i = cV_i$, one for each $c \in \mathbb R^{1\times3}$: a three-dimensional kernel.  It cannot be
# larger.  With orthogonal frames every $O_{ij} = V_j^{-1}V_i$ is orthogonal, and `P_walk` is row-stochastic with its
# stationary law π: the three hypotheses of the energy identity of notebook 10a §4 hold.  So $L_{\mathrm{mix}}X = 0$
# gives $0 = \langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X) = \tfrac12\sum_{ij}\pi_iA_{ij}\lVert X_i - X_jO_{ij}\rVert^2$,
# and since every $\pi_iA_{ij} > 0$ (a softmax walk), $X_i = X_jO_{ij}$ on every edge: $X$ is fixed by its value
# $X_0 \in \mathbb R^{1\times d}$ at one token (on any connected graph, by walking along a path).  The kernel therefore
# has dimension at most $d$ — the discrete analogue of "a parallel section is fixed by its initial value".  For a
# generic connection, transporting $X_0$ around a loop does not bring it back (the holonomy has no eigenvalue 1), so
# no nonzero $X_0$ is consistent and the kernel is trivial.

# %%
V = ortho_group.rvs(d, size=m, random_state=32)
identity_field = np.broadcast_to(np.eye(d), (m, m, d, d)).copy()
O_flat = gauge_transform(identity_field, V)
sv_flat = np.linalg.svd(connection_laplacian(P_walk, O_flat), compute_uv=False)[::-1]  # ascending
sv_rand = np.linalg.svd(connection_laplacian(P_walk, O_rand), compute_uv=False)[::-1]
print("flat connection, smallest singular values:", np.array2string(sv_flat[:5], precision=2))
print("random connection, smallest singular values:", np.array2string(sv_rand[:5], precision=2))
# Oracle 1: the dimension count d.  Rounding of a 21×21 dense SVD is ~1e-15, so 1e-12 separates zero from nonzero.
assert np.sum(sv_flat < 1e-12) == d and sv_flat[d] > 0.05
assert sv_rand[0] > 0.05
# Oracle 2: the kernel is spanned by the sections X_i = c V_i (rows e_k V_i for the three unit vectors e_k).
_, _, vt = np.linalg.svd(connection_laplacian(P_walk, O_flat))
kernel = vt[-d:].T  # orthonormal basis of the numerical kernel
sections = np.stack([np.einsum("b,iba->ia", e, V).reshape(-1) for e in np.eye(d)], axis=1)
projection_gap = np.abs(sections - kernel @ (kernel.T @ sections)).max()
print(f"sections minus their projection on the kernel: {projection_gap:.1e}")
assert projection_gap < 1e-12  # dense SVD subspaces are accurate to ~1e-15 when the gap is O(0.1)

fig, ax = plt.subplots(figsize=(5, 3.4), layout="constrained")
ax.semilogy(np.arange(1, sv_flat.size + 1), np.maximum(sv_flat, 1e-17), "o", label="flat connection")
ax.semilogy(np.arange(1, sv_rand.size + 1), sv_rand, "s", mfc="none", label="random orthogonal connection")
ax.axhline(1e-12, color="grey", ls=":", lw=1, label="threshold $10^{-12}$")
ax.set_xlabel("index (ascending)")
ax.set_ylabel("singular value of $L_{\\rm mix}$ (dimensionless)")
ax.set_title("parallel sections = kernel of $L_{\\rm mix}$")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Solution 10a.2
#
# 1. $G = \tfrac14(Q_1 + Q_2)^\top(Q_1 + Q_2) = \tfrac14(Q_1^\top Q_1 + Q_2^\top Q_2 + Q_1^\top Q_2 + Q_2^\top Q_1)
#    = \tfrac14(2I + R + R^\top)$.  By Rodrigues' formula $R = \cos\varphi\,I + \sin\varphi\,[a]_\times +
#    (1 - \cos\varphi)\,aa^\top$, and the skew part cancels in $R + R^\top$.  So $G = \tfrac{1 + \cos\varphi}{2}I +
#    \tfrac{1 - \cos\varphi}{2}aa^\top$: eigenvalue 1 on $a$, $(1 + \cos\varphi)/2$ on the plane $a^\perp$.
# 2. $\mu = \operatorname{tr}G/3 = (2 + \cos\varphi)/3$; the deviations from μ are $(1 - \cos\varphi)/3$ once and
#    $-(1 - \cos\varphi)/6$ twice, so $\lVert G - \mu I\rVert_F^2 = (1 - \cos\varphi)^2(\tfrac19 + \tfrac2{36}) =
#    (1 - \cos\varphi)^2/6$ and $\delta = \lVert G - \mu I\rVert_F/(3\mu) = (1 - \cos\varphi)/(\sqrt6(2 + \cos\varphi))$.
# 3. In $d = 2$ the rotations commute and $R + R^\top = 2\cos\varphi\,I$: $G = \tfrac{1 + \cos\varphi}2I$ is a multiple
#    of the identity, so $O$ is a scaled rotation ($\delta = 0$).  Equivalently, $\{aI + bJ\}$ is the field of complex
#    numbers and sums of rotations are again conformal.  From $d = 3$ on, rotations about different axes do not
#    commute, and their average shrinks the plane orthogonal to the axis of $Q_1^\top Q_2$ more than the axis.

# %%
u = sp.symbols("u", nonnegative=True)  # u = 1 − cos φ ∈ [0, 2]
c = 1 - u
eigenvalues = [sp.Integer(1), (1 + c) / 2, (1 + c) / 2]
mu = sum(eigenvalues) / 3
frobenius = sp.sqrt(sum((e - mu) ** 2 for e in eigenvalues))
claimed = (1 - c) / (sp.sqrt(6) * (2 + c))
difference = sp.simplify(frobenius / (3 * mu) - claimed)
print("sympy: δ from the eigenvalues − claimed formula =", difference)
# Oracle: exact symbolic algebra; writing c = 1 − u with u ≥ 0 lets sympy take sqrt(u²) = u.
assert difference == 0

angles = np.linspace(0.05, np.pi, 40)
axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
Q1 = ortho_group.rvs(3, random_state=33)
Q1 = Q1 * np.sign(np.linalg.det(Q1))  # in SO(3)
numeric = np.array(
    [orthogonality_deviation(0.5 * (Q1 + Q1 @ Rotation.from_rotvec(a * axis).as_matrix())) for a in angles]
)
formula = (1 - np.cos(angles)) / (np.sqrt(6) * (2 + np.cos(angles)))
planar = [
    orthogonality_deviation(0.5 * (np.eye(2) + np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])))
    for a in angles[:-1]  # at φ = π the planar mixture is the zero map, and δ is undefined
]
print(f"max |δ − formula| on {angles.size} angles: {np.abs(numeric - formula).max():.1e};  δ(π) = {numeric[-1]:.6f}")
print(f"d = 2: max δ of the mixture = {max(planar):.1e}")
# Oracles: the closed form (rounding of a 3×3 Gram matrix, a few ulps: 1e-14), the rank-one value √(2/3) at φ = π
assert np.abs(numeric - formula).max() < 1e-14
assert abs(numeric[-1] - np.sqrt(2 / 3)) < 1e-14 and max(planar) < 1e-14

fig, ax = plt.subplots(figsize=(5, 3.4), layout="constrained")
ax.plot(angles, formula, "k-", lw=1, label=r"$(1 - \cos\varphi)/(\sqrt{6}(2 + \cos\varphi))$")
ax.plot(angles[::3], numeric[::3], "o", label="orthogonality_deviation, d = 3")
ax.plot(angles[:-1:3], planar[::3], "s", label="same mixture, d = 2")
ax.set_xlabel(r"relative angle $\varphi$ (rad)")
ax.set_ylabel(r"$\delta_{\rm orth}$ (dimensionless)")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ### Solution 10a.3
#
# For $\lambda$ small, $\operatorname{diag}(\pi)\mathsf P$ is the symmetric matrix of the reversible walk plus a
# first-order antisymmetric correction proportional to $\lambda\,(\mathcal A \odot e^{\beta\mathcal S})$, so
# $\varepsilon_{\mathrm{rev}} = c_1\lambda + O(\lambda^2)$.  With $O_{ji} = O_{ij}^\top$ fixed, the π-skew part of
# $\bar T$ is built from the same antisymmetric correction, blockwise multiplied by the transports, so
# $\rho = c_2\lambda + O(\lambda^2)$ too.  Both slopes are 1: there is no threshold, the drift is linear response to
# the link, and $\rho/\varepsilon_{\mathrm{rev}} \to c_2/c_1$, a constant fixed by the transports and the bond.

# %%
bond = rng.standard_normal((m, m))
bond = (bond + bond.T) / 2
link = rng.standard_normal((m, m))
link = (link - link.T) / 2
Q = ortho_group.rvs(d, size=m * m, random_state=34).reshape(m, m, d, d)
O_consistent = Q.copy()
for i in range(m):
    O_consistent[i, i] = np.eye(d)
    for j in range(i):
        O_consistent[j, i] = Q[i, j].T  # O_ji = O_ijᵀ


def drift_ratio(P, transports):
    """‖L_skew‖_π / ‖L_mix‖_π, with ‖L‖_π = ‖Π^{1/2} L Π^{-1/2}‖_F."""
    g = mixing_generator(P, transports)
    s = np.sqrt(np.repeat(g.pi, transports.shape[-1]))
    return np.linalg.norm(s[:, None] * g.L_skew / s) / np.linalg.norm(s[:, None] * g.L_mix / s)


lams = np.geomspace(1e-3, 1e-1, 9 if SMALL else 25)
walks = [softmax_rows(1.5 * (bond + lam * link)) for lam in lams]
rho = np.array([drift_ratio(P, O_consistent) for P in walks])
eps = np.array([reversibility_residual(P) for P in walks])
slope_rho = np.polyfit(np.log(lams), np.log(rho), 1)[0]
slope_eps = np.polyfit(np.log(lams), np.log(eps), 1)[0]
ratio = rho / eps
print(f"slopes: drift ratio {slope_rho:.3f}, ε_rev {slope_eps:.3f}; ρ/ε_rev from {ratio[0]:.3f} to {ratio[-1]:.3f}")
# Oracle: first-order perturbation theory predicts slope 1; the O(λ²) terms bend the fit by a few percent at λ = 0.1,
# hence the margin 0.05.  The ratio should vary by less than 10 % over two decades.
assert abs(slope_rho - 1) < 0.05 and abs(slope_eps - 1) < 0.05
assert ratio.max() / ratio.min() < 1.1
# At λ = 0 the walk is reversible (ε_rev at rounding) and the drift is zero with O_ji = O_ijᵀ
assert (
    reversibility_residual(softmax_rows(1.5 * bond)) < 1e-13
    and drift_ratio(softmax_rows(1.5 * bond), O_consistent) < 1e-13
)

fig, ax = plt.subplots(figsize=(5, 3.4), layout="constrained")
ax.loglog(lams, rho, "o-", label=rf"$\rho$ (slope {slope_rho:.2f})")
ax.loglog(lams, eps, "s--", label=rf"$\varepsilon_{{\rm rev}}$ (slope {slope_eps:.2f})")
ax.set_xlabel(r"link scale $\lambda$ (dimensionless)")
ax.set_ylabel("reading (dimensionless)")
ax.set_title("the drift switches on linearly")
ax.legend(fontsize=8)
plt.show()
