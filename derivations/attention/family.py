r"""DMAP, DMTN, ATAP and ATTN as the corners of one family of attention operators.

Source: Attention Geometry §7, §10, Tables 1 and 4.  Derived on three tokens, measured on random heads.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.attention import (
    OPERATORS,
    effective_form,
    family_operator,
    operator_logits,
    operator_skew_ratio,
    reversibility_residual,
    softmax_rows,
)
from workbench.backend import namespace, to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.markov import softmax_operator

from .._common import by_scale
from ._shared import (
    SPREAD,
    SQRT2,
    N,
    context,
    gap,
    max_abs,
    transpose,
)

# ---- 4. the four corners ----------------------------------------------------------------------------


def _derive_corners() -> list[Step]:
    q = [sp.Matrix(1, 2, sp.symbols(f"q{i}_0:2", real=True)) for i in range(N)]
    k = [sp.Matrix(1, 2, sp.symbols(f"k{i}_0:2", real=True)) for i in range(N)]
    m = [(q[i] + k[i]) / sp.sqrt(2) for i in range(N)]
    nn = [(q[i] - k[i]) / sp.sqrt(2) for i in range(N)]

    def dot(u, v):
        return (u * v.T)[0]

    def logits(b, a):
        g = [dot(m[i], m[i]) / 2 - b * dot(nn[i], nn[i]) / 2 for i in range(N)]
        return sp.Matrix(
            N,
            N,
            lambda i, j: (
                dot(m[i], m[j]) / 2
                - b * dot(nn[i], nn[j]) / 2
                + a * (dot(q[i], k[j]) - dot(k[i], q[j])) / 2
                + (1 - a) * (g[i] - g[j]) / 2
            ),
        ).applyfunc(sp.expand)

    scores = sp.Matrix(N, N, lambda i, j: dot(q[i], k[j]))
    g_attn = [dot(q[i], k[i]) for i in range(N)]
    bond = (scores + scores.T) / 2
    d2 = sp.Matrix(N, N, lambda i, j: g_attn[i] + g_attn[j] - 2 * bond[i, j])
    dmap, atap, dmtn = logits(0, 0), logits(1, 0), logits(0, 1)
    dmap_shape = sp.Matrix(N, N, lambda i, j: -dot(m[i] - m[j], m[i] - m[j]) / 4)
    dmap_rest = (dmap - dmap_shape).applyfunc(sp.expand)
    atap_rest = (atap + d2 / 2).applyfunc(sp.expand)
    wq = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"Q{a}{b}", real=True))
    wk = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"K{a}{b}", real=True))
    w_m, w_n = (wq + wk) / sp.sqrt(2), (wq - wk) / sp.sqrt(2)
    M = wq * wk.T
    d, r = sp.symbols("d r", integer=True, positive=True)
    g_q, g_k = sp.MatrixSymbol("W_Q", d, r), sp.MatrixSymbol("W_K", d, r)
    g_m, g_n, g_qk = (g_q + g_k) / sp.sqrt(2), (g_q - g_k) / sp.sqrt(2), g_q * g_k.T
    return [
        Step(
            "ℓ(b, a) on 3 tokens, q_i, k_i ∈ ℝ², m = (q + k)/√2, n = (q − k)/√2 (β factored out)",
            logits(1, 1),
            statement=r"\ell_{ij}(b,a) = \tfrac12 m_i\!\cdot\! m_j - \tfrac b2 n_i\!\cdot\! n_j + \tfrac a2(q_i\!\cdot\! k_j - k_i\!\cdot\! q_j) + \tfrac{1-a}2(g_i - g_j),\ m = \tfrac{q+k}{\sqrt2},\ n = \tfrac{q-k}{\sqrt2},\ g_i = \tfrac12\lVert m_i\rVert^2 - \tfrac b2\lVert n_i\rVert^2",
            because="the two-parameter family: b weighs the n-part of the bond, a the antisymmetric link (a = 1) against a gradient of potentials (a = 0)",
        ),
        claim(
            "ATTN (1, 1): ℓ_ij = q_i·k_j exactly",
            logits(1, 1),
            scores.applyfunc(sp.expand),
            statement=r"\ell_{ij}(1,1) = \tfrac12(m_i\!\cdot\! m_j - n_i\!\cdot\! n_j) + \tfrac12(q_i\!\cdot\! k_j - k_i\!\cdot\! q_j) = q_i\!\cdot\! k_j",
            because="m_i·m_j − n_i·n_j = q_i·k_j + k_i·q_j (polarisation), and the link adds the antisymmetric half",
        ),
        claim(
            "DMAP (0, 0): ℓ_ij + ¼‖m_i − m_j‖² = ½‖m_i‖², a row constant",
            dmap_rest,
            sp.Matrix(N, N, lambda i, j: sp.expand(dot(m[i], m[i]) / 2)),
            statement=r"\ell_{ij}(0,0) + \tfrac14\lVert m_i - m_j\rVert^2 = \tfrac12\lVert m_i\rVert^2",
            because="½m_i·m_j = ¼(‖m_i‖² + ‖m_j‖² − ‖m_i − m_j‖²), and the potential term (g_i − g_j)/2 with g = ½‖m‖² turns ‖m_j‖² into ‖m_i‖²",
        ),
        claim(
            "ATAP (1, 0): ℓ_ij + ½d²_ij = g_i = q_i·k_i, a row constant",
            atap_rest,
            sp.Matrix(N, N, lambda i, j: sp.expand(g_attn[i])),
            statement=r"\ell_{ij}(1,0) + \tfrac12 d^2_{ij} = q_i\!\cdot\! k_i,\quad d^2_{ij} = q_i\!\cdot\! k_i + q_j\!\cdot\! k_j - (q_i\!\cdot\! k_j + k_i\!\cdot\! q_j)",
            because="the bond ½(q_i·k_j + k_i·q_j) = ½(g_i + g_j − d²_ij), and the potential difference (g_i − g_j)/2 leaves g_i",
        ),
        Step(
            "so DMAP = softmax(−(β/4)‖m_i − m_j‖²) and ATAP = softmax(−(β/2)d²): symmetric kernels, reversible",
            dmap_shape,
            statement=r"\mathsf P^{\mathrm{DMAP}} = \operatorname{softmax}\big(-\tfrac\beta4\lVert m_i - m_j\rVert^2\big),\quad \mathsf P^{\mathrm{ATAP}} = \operatorname{softmax}\big(-\tfrac\beta2 d^2_{ij}\big)",
            because="softmax ignores a row constant, and both remaining logits are symmetric in i, j, so both operators are D⁻¹K with K symmetric: reversible",
        ),
        claim(
            "DMTN (0, 1): ℓ − ℓᵀ = q_i·k_j − k_i·q_j, the free link survives",
            (dmtn - dmtn.T).applyfunc(sp.expand),
            (scores - scores.T).applyfunc(sp.expand),
            statement=r"\ell_{ij}(0,1) - \ell_{ji}(0,1) = q_i\!\cdot\! k_j - k_i\!\cdot\! q_j",
            because="the bond parts are symmetric and cancel; only the link term is antisymmetric, and it is kept whole",
        ),
        claim(
            "parameter level: M_S = ½W_MW_Mᵀ − ½W_NW_Nᵀ",
            (w_m * w_m.T / 2 - w_n * w_n.T / 2).applyfunc(sp.expand),
            ((M + M.T) / 2).applyfunc(sp.expand),
            statement=r"\tfrac12 W_MW_M^\top - \tfrac12 W_NW_N^\top = \tfrac12(W_QW_K^\top + W_KW_Q^\top) = \mathsf M_S,\quad W_{M,N} = \tfrac{W_Q \pm W_K}{\sqrt2}",
            because="(Q + K)(Q + K)ᵀ − (Q − K)(Q − K)ᵀ = 2(QKᵀ + KQᵀ)",
        ),
        claim(
            "𝒲^DMTN = ½W_MW_Mᵀ + M_A = M + ½W_NW_Nᵀ",
            (w_m * w_m.T / 2 + (M - M.T) / 2).applyfunc(sp.expand),
            (M + w_n * w_n.T / 2).applyfunc(sp.expand),
            statement=r"\mathcal W^{\mathrm{DMTN}} = \tfrac12 W_MW_M^\top + \mathsf M_A = \mathsf M + \tfrac12 W_NW_N^\top,\quad \mathsf M = W_QW_K^\top,\ \mathsf M_A = \tfrac12(\mathsf M - \mathsf M^\top)",
            because="½W_MW_Mᵀ = M_S + ½W_NW_Nᵀ by the previous step, and M_S + M_A = M",
        ),
        claim(
            "general N: M_S = ½W_MW_Mᵀ − ½W_NW_Nᵀ for d×r matrix symbols W_Q, W_K",
            g_m * g_m.T / 2 - g_n * g_n.T / 2,
            (g_qk + g_qk.T) / 2,
            statement=r"\tfrac12 W_MW_M^\top - \tfrac12 W_NW_N^\top = \tfrac12(W_QW_K^\top + W_KW_Q^\top),\quad W_Q, W_K\in\mathbb R^{d\times r},\ d, r\text{ symbolic}",
            because="sympy expands the products of d×r matrix symbols; the QQᵀ and KKᵀ terms cancel",
            general=True,
        ),
        claim(
            "general N: 𝒲^DMTN = ½W_MW_Mᵀ + M_A = M + ½W_NW_Nᵀ for d×r matrix symbols",
            g_m * g_m.T / 2 + (g_qk - g_qk.T) / 2,
            g_qk + g_n * g_n.T / 2,
            statement=r"\tfrac12 W_MW_M^\top + \tfrac12(\mathsf M - \mathsf M^\top) = \mathsf M + \tfrac12 W_NW_N^\top,\quad d, r\text{ symbolic}",
            because="sympy expands both sides with d×r matrix symbols; the difference is ½(QKᵀ + KQᵀ) − ½(QKᵀ + KQᵀ) = 0",
            general=True,
        ),
    ]


def _corner_residual(X, W_Q, W_K, beta, b_Q=None, b_K=None, mask=None) -> tuple[float, dict]:
    """Worst residual of the corner formulas on a context, and ε_rev of each corner's operator.

    Optional query/key biases (q = XW_Q + b_Q, k = XW_K + b_K) and a boolean key ``mask`` (True = admissible,
    applied to every operator and to its closed form alike) serve the outside cases of the hypotheses.
    """
    xp = namespace(X)
    q, k = X @ W_Q, X @ W_K
    q, k = (q if b_Q is None else q + b_Q), (k if b_K is None else k + b_K)

    def kernel(logits):  # the closed-form operator, independent of family_operator
        return softmax_operator(logits, beta) if mask is None else softmax_rows(beta * logits, mask)

    residual = 0.0
    if not bool(xp.all(operator_logits(q, k, "ATTN", beta=beta) == beta * (q @ transpose(k)))):
        residual = math.inf  # the ATTN corner is β q·k bit for bit
    m = (q + k) / SQRT2
    squared_m = xp.sum((m[:, None, :] - m[None, :, :]) ** 2, axis=-1)
    residual = max(residual, gap(family_operator(q, k, "DMAP", beta=beta, mask=mask), kernel(-squared_m / 4)))
    g = xp.sum(q * k, axis=1)
    d2 = g[:, None] + g[None, :] - (q @ transpose(k) + k @ transpose(q))
    residual = max(residual, gap(family_operator(q, k, "ATAP", beta=beta, mask=mask), kernel(-d2 / 2)))
    W_N = (W_Q - W_K) / SQRT2
    dmtn_form = W_Q @ transpose(W_K) + 0.5 * W_N @ transpose(W_N)
    S_op, A_op = effective_form(W_Q, W_K, "DMTN")
    residual = max(residual, gap(S_op + A_op, dmtn_form) / max_abs(dmtn_form))
    dmtn_logits = beta * (X @ dmtn_form @ transpose(X))
    residual = max(residual, gap(operator_logits(q, k, "DMTN", beta=beta), dmtn_logits) / max_abs(dmtn_logits))
    epsilon = {name: reversibility_residual(family_operator(q, k, name, beta=beta, mask=mask)) for name in OPERATORS}
    return residual, epsilon


def _verify_corners(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the closed-form kernels softmax(−(β/4)‖m_i − m_j‖²) (DMAP) and softmax(−(β/2)d²) (ATAP)
    computed from q, k directly; β q·k bit for bit (ATTN); X(M + ½W_NW_Nᵀ)Xᵀ (DMTN); ε_rev = 0 for the exact
    link corners and ρ_skew = 0.0 exactly for them.  DMTN and ATTN must be visibly nonreversible
    (ε_rev > 0.05) and have ρ_skew > 0, else the check fails.

    Tolerance 1e-12 relative (probabilities, or max |form|); ε_rev with π from a linear solve ≈ 1e-15.
    """
    n, D, d_h = by_scale(scale, (24, 8, 4), (300, 64, 16))
    X = context(rng, n, D, backend, spread=SPREAD)
    W_Q, W_K = (to_backend(rng.standard_normal((D, d_h)) / math.sqrt(D), backend) for _ in range(2))
    beta = 1.0 / math.sqrt(d_h)
    residual, epsilon = _corner_residual(X, W_Q, W_K, beta)
    residual = max(residual, epsilon["DMAP"], epsilon["ATAP"])
    skew = {name: operator_skew_ratio(W_Q, W_K, name) for name in OPERATORS}
    if skew["DMAP"] != 0.0 or skew["ATAP"] != 0.0 or min(skew["DMTN"], skew["ATTN"]) <= 0.0:
        residual = math.inf
    if min(epsilon["DMTN"], epsilon["ATTN"]) < 0.05:
        residual = math.inf  # the free-link corners must be visibly nonreversible
    eps = {f"eps_rev_{name}": round(epsilon[name], 4) for name in ("DMTN", "ATTN")}
    return Verification.from_residual(residual, 1e-12, n=n, D=D, d_h=d_h, **eps)


# ---- outside the hypotheses ---------------------------------------------------------------------------


def _outside_context(rng):
    n, D, d_h = 24, 8, 4
    X = context(rng, n, D, "numpy", spread=SPREAD)
    W_Q, W_K = (rng.standard_normal((D, d_h)) / math.sqrt(D) for _ in range(2))
    return X, W_Q, W_K, 1.0 / math.sqrt(d_h)


def _outside_corners_biases(rng) -> Verification:
    """The corner formulas and ε_rev = 0 for DMAP, ATAP on q = XW_Q + b_Q, k = XW_K + b_K (affine scores).

    The operators built from q, k keep their closed forms, but the DMTN logits are no longer X(M + ½W_NW_Nᵀ)Xᵀ: the
    biases add terms that no D×D form carries.  Measured (numpy, n = 24, D = 8, d_h = 4, biases of size 1):
    residual 4.1 relative to max |logit| against the tolerance 1e-12.
    """
    X, W_Q, W_K, beta = _outside_context(rng)
    b_Q, b_K = rng.standard_normal(W_Q.shape[1]), rng.standard_normal(W_K.shape[1])
    residual, epsilon = _corner_residual(X, W_Q, W_K, beta, b_Q, b_K)
    residual = max(residual, epsilon["DMAP"], epsilon["ATAP"])
    return Verification.from_residual(residual, 1e-12, n=int(X.shape[0]), biases=True)


def _outside_corners_asymmetric_mask(rng) -> Verification:
    """The four corners under the key mask j ≤ i + 1 (one look-ahead): irreducible, not symmetric.

    The masked DMAP and ATAP are still row-normalised symmetric kernels, but restricted to a support that is not
    symmetric, so they are no longer reversible: ε_rev > 0.  (A causal mask, j ≤ i, would give ε_rev = 0 vacuously:
    its walk drains to token 0, π = δ₀.)  Measured (numpy, n = 24): residual 0.46
    (ε_rev of ATAP; of DMAP 0.41) against the tolerance 1e-12.
    """
    X, W_Q, W_K, beta = _outside_context(rng)
    n = int(X.shape[0])
    residual, epsilon = _corner_residual(X, W_Q, W_K, beta, mask=np.tril(np.ones((n, n), dtype=bool), k=1))
    residual = max(residual, epsilon["DMAP"], epsilon["ATAP"])
    return Verification.from_residual(residual, 1e-12, n=n, mask="j <= i + 1", eps_rev_DMAP=round(epsilon["DMAP"], 4))


# ---- the catalogue ------------------------------------------------------------------------------------


IDENTITIES = [
    Identity(
        name="attention.family.corners",
        area="attention",
        statement=r"\ell^{\mathrm{ATTN}} = \beta q_i\cdot k_j,\ \mathsf P^{\mathrm{DMAP}} = \operatorname{softmax}(-\tfrac\beta4\lVert m_i - m_j\rVert^2),"
        r"\ \mathsf P^{\mathrm{ATAP}} = \operatorname{softmax}(-\tfrac\beta2 d^2),\ \mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top;"
        r"\ \varepsilon_{\mathrm{rev}} = \rho_{\mathrm{skew}} = 0\ \text{for DMAP, ATAP}"
        r"\ (q = XW_Q,\ k = XW_K;\ \text{no mask, or a symmetric one})",
        source="Attention Geometry §7, §10, Tables 1 and 4 [RECON: the corner formulas follow the author's code "
        "(the nanochat parameterisation), which the project could not see; DERIVED corollaries]; "
        'book/reference.md §A.7 "The four parameterisations", §A.10 (ε_rev, ρ_skew) [RECON]',
        derive=_derive_corners,
        verify=_verify_corners,
        hypotheses=(
            Hypothesis(
                "bilinear scores: q = XW_Q, k = XW_K with no biases (the DMTN form M + ½W_NW_Nᵀ is a form on X)",
                "q = XW_Q + b_Q, k = XW_K + b_K with Gaussian biases",
                _outside_corners_biases,
            ),
            Hypothesis(
                "a symmetric support (no mask, or a symmetric one) for ε_rev = 0 of DMAP and ATAP; under a causal "
                "mask ε_rev = 0 holds vacuously (π = δ₀)",
                "the key mask j ≤ i + 1 (irreducible, not symmetric)",
                _outside_corners_asymmetric_mask,
            ),
        ),
    ),
]
