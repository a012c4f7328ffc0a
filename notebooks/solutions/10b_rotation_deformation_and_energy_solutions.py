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
# # Solutions — 10b Rotation, deformation and the connection energy
#
# Worked answers to the exercises of notebook `10b_rotation_deformation_and_energy`.  Each answer is computed and
# then asserted against an oracle: a dimension count, a closed form checked by sympy, the exact gap formula of the
# energy identity, or a fitted slope with a stated margin.  The objects the exercises use (`P_walk`, `pi_walk`, `O_rand`,
# `samples`) are rebuilt here exactly as the notebook builds them: the same generator (seed 10), the same draws in the
# same order (the draws of the notebook's §1 are repeated and discarded, to stay in step) and the same rotations
# (`random_state=13`), so every number below is the one a student gets from the notebook's objects.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg
import sympy as sp
from scipy.spatial.transform import Rotation
from scipy.stats import ortho_group

from workbench.attention import (
    connection_energy,
    connection_laplacian,
    gauge_transform,
    orthogonality_deviation,
    polar_transports,
    propagate,
    random_multihead,
    softmax_rows,
)
from workbench.markov import MarkovOperator

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(10)

# The draws of the notebook before §2, in its order: the layer of 10a, the Gaussian maps and the orthogonal heads of §1
n, D, d_h, H = 7, 6, 3, 4
random_multihead(rng, H, D, d_h, bias=True, scale=1.5 / np.sqrt(D))
rng.standard_normal((n, D))
dims = np.array([4, 8, 16, 32, 64, 128, 256, 384] if SMALL else [4, 8, 16, 32, 64, 128, 256, 384, 768, 1024])
for k in dims:
    for _ in range(5):
        rng.standard_normal((k, k))
for k in dims[dims > 32]:
    rng.standard_normal((k, 32)), rng.standard_normal((32, k))
rng.uniform(0.5, 2.0, H)

# The objects of §2 that the exercises use
m, d = 7, 3
P_walk = softmax_rows(rng.standard_normal((m, m)) * 1.5)  # a nonreversible walk, all entries positive
pi_walk = MarkovOperator(P_walk).stationary
O_rand = ortho_group.rvs(d, size=m * m, random_state=13).reshape(m, m, d, d)  # no O_ji = O_ijᵀ
rng.uniform(0.5, 1.5, (m, m, 1, 1))  # the scale factors of O_skewed
samples = rng.standard_normal((200 if SMALL else 2000, m, d))

# %% [markdown]
# ### Solution 10b.1
#
# A parallel section satisfies $X_i = X_jO_{ij}$ on every active edge, so it is fixed by the walk:
# $(\mathcal TX)_i = \sum_jA_{ij}X_jO_{ij} = \sum_jA_{ij}X_i = X_i$.  For the flat connection $O_{ij} = V_j^{-1}V_i$ the
# sections are $X_i = cV_i$, one for each $c \in \mathbb R^{1\times3}$: a three-dimensional kernel.  It cannot be
# larger.  With orthogonal frames every $O_{ij} = V_j^{-1}V_i$ is orthogonal, and `P_walk` is row-stochastic with its
# stationary law π: the three hypotheses of the energy identity of notebook 10b §2 hold.  So $L_{\mathrm{mix}}X = 0$
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
answer_10b_1 = {"V": V, "sv_flat": sv_flat, "sv_rand": sv_rand, "kernel_dim": int(np.sum(sv_flat < 1e-12))}
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
# ### Solution 10b.2
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

phi = sp.Symbol("phi", real=True)
delta_phi = (1 - sp.cos(phi)) / (sp.sqrt(6) * (2 + sp.cos(phi)))  # the closed form, as a function of the angle

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
answer_10b_2 = {"delta": delta_phi, "angles": angles, "numeric": numeric, "planar_max": max(planar)}
assert sp.simplify(delta_phi.subs(sp.cos(phi), c) - claimed) == 0  # the same formula as above, with cos φ = 1 − u
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
# ### Solution 10b.3
#
# With $A$ row-stochastic and $\pi^\top A = \pi^\top$, the gap formula of §2 reduces to
#
# $$\langle X, L_{\mathrm{mix}}X\rangle_\pi - \mathcal E_c(X) = \tfrac12\sum_{i,j}\pi_iA_{ij}
# \bigl(\lVert X_j\rVert^2 - X_jO_{ij}O_{ij}^\top X_j^\top\bigr),$$
#
# because $\sum_i\pi_iA_{ij} = \pi_j$.  With the polar factors $O = RS$ of §1, $OO^\top = RS^2R^\top$, which is $I$
# exactly when $S = I$: the rotation never opens a gap, the deformation does.
#
# * (a) $O_{ij}e^{\eta K_{ij}}$ is orthogonal ($e^{\eta K}$ is a rotation for antisymmetric $K$): $S = I$ and the gap
#   is zero for every η.
# * (b) $(I + \eta K)(I + \eta K)^\top = I - \eta^2K^2 = I + \eta^2KK^\top$, so $S = (I - \eta^2K^2)^{1/2} = I + O(\eta^2)$
#   and the gap is exactly $-\tfrac{\eta^2}2\sum_{ij}\pi_iA_{ij}\lVert X_jO_{ij}K_{ij}\rVert^2 \le 0$: slope 2.
# * (c) $(I + \eta S)(I + \eta S)^\top = I + 2\eta S + \eta^2S^2$: the gap starts at
#   $-\eta\sum_{ij}\pi_iA_{ij}X_jO_{ij}S_{ij}O_{ij}^\top X_j^\top$, generically nonzero: slope 1.
#
# So a first-order-accurate step along a rotation (the truncated exponential $I + \eta K$) keeps the energy identity
# to second order, while any symmetric stretch breaks it at first order.

# %%
K = rng.standard_normal((m, m, d, d))
K = (K - np.swapaxes(K, -1, -2)) / 2  # antisymmetric per edge
S_sym = rng.standard_normal((m, m, d, d))
S_sym = (S_sym + np.swapaxes(S_sym, -1, -2)) / 2  # symmetric per edge
norms = np.einsum("i,sia,sia->s", pi_walk, samples, samples)  # ‖X‖²_π


def gaps(transports):
    """⟨X, L_mix X⟩_π − ℰ_c(X) for every sample field, all samples at once (the sample axis s in einsum)."""
    moved = np.einsum("sjb,ijba->sija", samples, transports)  # X_j O_ij, for every sample
    form = np.einsum("i,sia->s", pi_walk, samples * (samples - np.einsum("ij,sija->sia", P_walk, moved)))
    energy = 0.5 * np.einsum("i,ij,sija->s", pi_walk, P_walk, (samples[:, :, None, :] - moved) ** 2)
    return form - energy


def gaps_one_by_one(transports, fields):
    """The same, sample by sample, with the library's propagate and connection_energy (the batched formula's oracle)."""
    form = np.array([np.sum(pi_walk[:, None] * Z * (Z - propagate(P_walk, transports, Z))) for Z in fields])
    energy = np.array([float(connection_energy(P_walk, transports, Z, pi=pi_walk)) for Z in fields])
    return form - energy


skewed = O_rand @ (np.eye(d) + 0.1 * S_sym)
batched_error = np.abs(gaps(skewed)[:5] - gaps_one_by_one(skewed, samples[:5])).max()
assert batched_error < 1e-13  # same sums in another order: rounding of O(1) quadratic forms


perturbations = {
    "(a) O exp(ηK)": lambda eta: O_rand @ np.array([[scipy.linalg.expm(eta * k) for k in row] for row in K]),
    "(b) O (I + ηK)": lambda eta: O_rand @ (np.eye(d) + eta * K),
    "(c) O (I + ηS)": lambda eta: O_rand @ (np.eye(d) + eta * S_sym),
}
etas = np.geomspace(1e-4, 1e-1, 7)
relative, slopes, deformation = {}, {}, {}
for label, perturb in perturbations.items():
    relative[label] = np.array([np.abs(gaps(perturb(eta)) / norms).max() for eta in etas])
    slopes[label] = np.polyfit(np.log(etas), np.log(relative[label]), 1)[0]
    _, S_polar = polar_transports(perturb(1e-2))
    deformation[label] = np.abs(S_polar - np.eye(d)).max()
    print(
        f"{label:22s} gaps {relative[label][0]:.1e} … {relative[label][-1]:.1e}; slope {slopes[label]:.3f}; "
        f"max |S − I| at η = 0.01: {deformation[label]:.1e}"
    )
label_a, label_b, label_c = perturbations
# Oracle (a): an exact rotation satisfies the identity; rounding of the O(1) quadratic forms, hence 1e-13.
assert relative[label_a].max() < 1e-13 and deformation[label_a] < 1e-13
# Oracle (b): the exact gap −η²/2 Σ π_i A_ij ‖X_j O_ij K_ij‖², to rounding relative to its size.
eta = 1e-2
predicted = np.array(
    [
        -0.5 * eta**2 * np.einsum("i,ij,ija->", pi_walk, P_walk, np.einsum("jb,ijbc,ijca->ija", Z, O_rand, K) ** 2)
        for Z in samples
    ]
)
exact_gap_error = np.abs(gaps(perturbations[label_b](eta)) - predicted).max() / np.abs(predicted).max()
print(f"(b): measured gap − closed form, relative: {exact_gap_error:.1e}")
assert exact_gap_error < 1e-8  # the gap ~1e-5 is a difference of O(1) terms: ~1e-16/1e-5 relative rounding
# Oracles (b), (c): fitted slopes 2 and 1; (b) is exactly quadratic, the O(η²) term bends (c) by ~1 % at η = 0.1.
assert abs(slopes[label_b] - 2) < 0.05 and abs(slopes[label_c] - 1) < 0.05
assert deformation[label_b] < 1e-3 < deformation[label_c]  # S − I is O(η²) for (b) and O(η) for (c)

mathtext = dict(zip(perturbations, [r"(a) $Oe^{\eta K}$", r"(b) $O(I + \eta K)$", r"(c) $O(I + \eta S)$"], strict=True))
fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
for label, values in relative.items():
    ax.loglog(etas, np.maximum(values, 1e-17), "o-", ms=4, label=f"{mathtext[label]}, slope {slopes[label]:.2f}")
ax.set_xlabel(r"perturbation size $\eta$ (dimensionless)")
ax.set_ylabel(r"max $|\langle X, L_{\rm mix}X\rangle_\pi - \mathcal{E}_c(X)| / \|X\|_\pi^2$")
ax.set_title("only the deformation breaks the energy identity")
ax.legend(fontsize=8)
plt.show()
