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
# computed and then asserted against an oracle: the head weights read off the attention matrices, the generator
# computed by `mixing_generator`, or a fitted slope with a stated margin.  The objects of the notebook are rebuilt
# here exactly as the notebook builds them — the same generator (seed 10), the same draws in the same order (the
# causal layer of §1 and the test field `Y` of §2 are drawn and discarded, to stay in step), the same rotations
# (`random_state=11`) and the same helper functions — so every number below is the one a student gets from the
# notebook's objects.

# %%
import os

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import ortho_group

from workbench.attention import (
    effective_connection,
    mixing_generator,
    random_multihead,
    reversibility_residual,
    softmax_rows,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
rng = np.random.default_rng(10)


def pi_similar(matrix, pi, d):
    """Π^{1/2} L Π^{-1/2} with Π = diag(π) ⊗ I_d: the π-adjoint becomes the ordinary transpose."""
    s = np.sqrt(np.repeat(pi, d))
    return s[:, None] * matrix / s[None, :]


def inverse_consistent(Q):
    """Keep Q_ij for i > j, set O_ji = Q_ijᵀ and O_ii = I: transposed transports on reversed edges."""
    field = Q.copy()
    n, d = field.shape[0], field.shape[-1]
    for i in range(n):
        field[i, i] = np.eye(d)
        for j in range(i):
            field[j, i] = field[i, j].T
    return field


# The multi-head layer of §1 (n = 7 tokens, D = 6, four heads of value dimension 3), drawn as in the notebook
n, D, d_h, H = 7, 6, 3, 4
mha = random_multihead(rng, H, D, d_h, bias=True, scale=1.5 / np.sqrt(D))
X = rng.standard_normal((n, D))
A_heads = mha.attention(X)
M_heads = mha.value_output_maps()
A_eff, O_eff = effective_connection(A_heads, M_heads)
random_multihead(rng, H, D, d_h, causal=True)  # the causal layer of §1: drawn only to keep the generator in step
rng.standard_normal((n, D))  # the test field Y of §2, likewise

# The small connections of §2: a symmetric bond, an antisymmetric link, inverse-consistent orthogonal transports
m, d = 7, 3
bond = rng.standard_normal((m, m))
bond = (bond + bond.T) / 2
link = rng.standard_normal((m, m))
link = (link - link.T) / 2
Q = ortho_group.rvs(d, size=m * m, random_state=11).reshape(m, m, d, d)  # independent rotations (and reflections)
O_consistent = inverse_consistent(Q)  # O_ji = O_ijᵀ = O_ij⁻¹
P_rev, P_nonrev = softmax_rows(1.5 * bond), softmax_rows(1.5 * (bond + link))


def drift_reading(P, transports):
    """‖L_skew‖_π / ‖L_mix‖_π and the smallest eigenvalue of L_sym in ⟨·,·⟩_π."""
    g = mixing_generator(P, transports)
    width = transports.shape[-1]
    skew, full = pi_similar(g.L_skew, g.pi, width), pi_similar(g.L_mix, g.pi, width)
    sym = pi_similar(g.L_sym, g.pi, width)
    return np.linalg.norm(skew) / np.linalg.norm(full), np.linalg.eigvalsh((sym + sym.T) / 2).min()


# %% [markdown]
# ### Solution 10a.1
#
# Flatten each head map to a vector $m_h = \operatorname{vec}M_h \in \mathbb R^{36}$ and stack them as the columns of
# $\mathsf M \in \mathbb R^{36\times4}$.  The claim of §1 is $\operatorname{vec}O^{\mathrm{eff}}_{ij} = \mathsf M\,w(i,j)$, so
# $O^{\mathrm{eff}}_{ij}$ lies in the column space of $\mathsf M$ and least squares returns a zero residual.  The weights
# are unique exactly when the columns are linearly independent, i.e. $\mathsf M$ has full column rank.  That is a
# statement about the four maps as *vectors*: each $M_h = W_V^hW_O^h$ has rank 3 as a $6\times6$ matrix, but four
# generic points of $\mathbb R^{36}$ are independent.  With five heads in $D = 2$ the five vectors live in
# $\mathbb R^4$ and are always dependent: many weight vectors give the same transport, and attention cannot be read
# back from $O^{\mathrm{eff}}$ alone.

# %%
dictionary = M_heads.reshape(H, -1).T  # 36 × 4, column h = vec M_h
targets = O_eff.reshape(n * n, -1).T  # 36 × 49, column (i, j) = vec O_eff_ij
recovered, *_ = np.linalg.lstsq(dictionary, targets, rcond=None)
recovered = recovered.T.reshape(n, n, H)
attention_weights = np.moveaxis(A_heads / A_heads.sum(axis=0), 0, -1)  # w_h(i, j) from the attention matrices
condition = np.linalg.cond(dictionary)
fit_residual = np.abs(np.einsum("ijh,hab->ijab", recovered, M_heads) - O_eff).max()
weight_error = np.abs(recovered - attention_weights).max()
print(f"condition number of the dictionary: {condition:.2f}")
print(f"least-squares residual {fit_residual:.1e};  recovered − attention weights {weight_error:.1e}")
print(f"weights: min {recovered.min():.1e}, max |Σ_h w_h − 1| = {np.abs(recovered.sum(axis=-1) - 1).max():.1e}")
answer_10a_1 = {"weights": recovered, "condition": condition, "residual": fit_residual}
# Oracle: the head weights A^(h)_ij / Σ_g A^(g)_ij read directly off the attention matrices.  A least-squares solve
# with condition number O(1) is accurate to a few ulps times the condition number, hence 1e-13.
assert condition < 100 and fit_residual < 1e-13 and weight_error < 1e-13
assert recovered.min() > -1e-13 and np.abs(recovered.sum(axis=-1) - 1).max() < 1e-13

fig, ax = plt.subplots(figsize=(4.6, 4), layout="constrained")
ax.plot(attention_weights.ravel(), recovered.ravel(), "o", ms=3)
ax.plot([0, 1], [0, 1], "k--", lw=1)
ax.set_aspect("equal")
ax.set_xlabel(r"$w_h(i,j)$ from the attention matrices")
ax.set_ylabel(r"$w_h(i,j)$ recovered from $O^{\rm eff}_{ij}$")
ax.set_title("the heads are a dictionary of transports")
plt.show()

# %% [markdown]
# ### Solution 10a.2
#
# $L_{\mathrm{mix}} = I - \bar T$ with blocks $\bar T_{ij} = A_{ij}O_{ij}^\top$.  The $(i, j)$ block of a transpose is the
# transpose of the $(j, i)$ block, so $(\bar T^\top)_{ij} = (A_{ji}O_{ji}^\top)^\top = A_{ji}O_{ji}$, and conjugating by
# $\Pi = \operatorname{diag}(\pi)\otimes I_d$ multiplies block $(i, j)$ by $\pi_j/\pi_i$:
# $(L^\sharp)_{ij} = \delta_{ij}I - \tfrac{\pi_j}{\pi_i}A_{ji}O_{ji}$.  Hence
#
# $$(L_{\mathrm{skew}})_{ij} = \tfrac12\bigl((L_{\mathrm{mix}})_{ij} - (L^\sharp)_{ij}\bigr)
# = \tfrac12\Bigl(\frac{\pi_j}{\pi_i}A_{ji}O_{ji} - A_{ij}O_{ij}^\top\Bigr),$$
#
# the identity blocks cancelling.  It vanishes iff $\pi_iA_{ij}O_{ij}^\top = \pi_jA_{ji}O_{ji}$.  For $i = j$ this is
# $A_{ii}(O_{ii} - O_{ii}^\top) = 0$: whenever a token attends to itself, its self-transport must be symmetric.  A
# reversible walk with $O_{ji} = O_{ij}^\top$ off the diagonal satisfies every off-diagonal condition, so if a rotation
# $O_{ii} \ne O_{ii}^\top$ sits on a self-loop the drift is exactly the diagonal blocks $\tfrac12A_{ii}(O_{ii} - O_{ii}^\top)$.
# In multi-head attention $O^{\mathrm{eff}}_{ii} = \sum_hw_h(i,i)M_h$ and the head maps $W_V^hW_O^h$ are not symmetric,
# so even a reversible effective walk carries a drift on its self-loops.

# %%
g = mixing_generator(A_eff, O_eff)
pi = g.pi
O_reversed = np.swapaxes(O_eff, 0, 1)  # O_reversed[i, j] = O_ji
blocks = 0.5 * (
    (pi[None, :] / pi[:, None] * A_eff.T)[:, :, None, None] * O_reversed
    - A_eff[:, :, None, None] * np.swapaxes(O_eff, -1, -2)
)
L_skew_formula = blocks.transpose(0, 2, 1, 3).reshape(n * D, n * D)  # block (i, j) → rows i·D.., columns j·D..
formula_gap = np.abs(L_skew_formula - g.L_skew).max()
print(f"block formula − mixing_generator(...).L_skew: {formula_gap:.1e}")

# P_rev = softmax_rows(1.5 bond) of §2 is reversible: π_i ∝ Σ_j exp(1.5 bond_ij) gives π_i P_ij ∝ exp(1.5 bond_ij)
O_loops = O_consistent.copy()
loops = ortho_group.rvs(d, size=m, random_state=35)
O_loops[np.arange(m), np.arange(m)] = loops  # rotations on the self-loops, not symmetric
g_loops = mixing_generator(P_rev, O_loops)
skew_blocks = g_loops.L_skew.reshape(m, d, m, d).transpose(0, 2, 1, 3)  # skew_blocks[i, j] = block (i, j)
off = ~np.eye(m, dtype=bool)
diagonal_error = max(np.abs(skew_blocks[i, i] - 0.5 * P_rev[i, i] * (loops[i] - loops[i].T)).max() for i in range(m))
rho_loops, rho_consistent = drift_reading(P_rev, O_loops)[0], drift_reading(P_rev, O_consistent)[0]
print(f"ε_rev = {reversibility_residual(P_rev):.1e}; off-diagonal skew blocks {np.abs(skew_blocks[off]).max():.1e}")
print(f"diagonal blocks − ½A_ii(O_ii − O_iiᵀ): {diagonal_error:.1e}")
print(f"drift ratio: rotated self-loops {rho_loops:.3f}, identity self-loops {rho_consistent:.1e}")
answer_10a_2 = {
    "L_skew_formula": L_skew_formula,
    "loops": loops,
    "diagonal_blocks": skew_blocks[np.arange(m), np.arange(m)],
    "drift_ratio": rho_loops,
}
# Oracle: the library's L_skew, computed as ½(L − Π⁻¹LᵀΠ) on the full matrix; same arithmetic, a few ulps.
assert formula_gap < 1e-14
# Oracles: the closed-form diagonal blocks and exact zeros elsewhere, both at rounding (1e-14 for O(1) entries);
# the drift ratio with identity self-loops is the notebook's drift-free case.
assert np.abs(skew_blocks[off]).max() < 1e-14 and diagonal_error < 1e-14
assert 1e-2 < rho_loops < 0.5 and rho_consistent < 1e-13

fig, ax = plt.subplots(figsize=(4.8, 4), layout="constrained")
bound = np.abs(g_loops.L_skew).max()
image = ax.imshow(g_loops.L_skew, cmap="RdBu_r", vmin=-bound, vmax=bound)
ax.set_xticks(np.arange(m) * d + 1, range(m))
ax.set_yticks(np.arange(m) * d + 1, range(m))
ax.set_xlabel("key block j")
ax.set_ylabel("query block i")
ax.set_title(r"$L_{\rm skew}$: reversible walk, rotated self-loops")
fig.colorbar(image, ax=ax, shrink=0.8, label="entry (dimensionless)")
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
lams = np.geomspace(1e-3, 1e-1, 9 if SMALL else 25)
walks = [softmax_rows(1.5 * (bond + lam * link)) for lam in lams]
rho = np.array([drift_reading(P, O_consistent)[0] for P in walks])
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
    and drift_reading(softmax_rows(1.5 * bond), O_consistent)[0] < 1e-13
)

fig, ax = plt.subplots(figsize=(5, 3.4), layout="constrained")
ax.loglog(lams, rho, "o-", label=rf"$\rho$ (slope {slope_rho:.2f})")
ax.loglog(lams, eps, "s--", label=rf"$\varepsilon_{{\rm rev}}$ (slope {slope_eps:.2f})")
ax.set_xlabel(r"link scale $\lambda$ (dimensionless)")
ax.set_ylabel("reading (dimensionless)")
ax.set_title("the drift switches on linearly")
ax.legend(fontsize=8)
plt.show()
