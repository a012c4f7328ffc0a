r"""The bond/link split of attention scores.

The exact split and the distance form, the bond as a Doob transform, exact link ⇔ Doob ⇔ reversible.

Source: Attention Geometry §4, §7, Table 4.  Each identity is derived on three tokens with symbolic scores and
measured on random heads through :mod:`workbench.attention`, on numpy and on torch.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.attention import (
    bond_link_split,
    destination_tilt,
    distance_form_logits,
    exact_link,
    is_exact_link,
    link_holonomy,
    link_potential,
    random_head,
    reversibility_residual,
    score_split,
    softmax_rows,
    triangle_cycles,
)
from workbench.backend import namespace, to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.markov import cycle_affinities, doob_transform, softmax_operator

from .._common import by_scale
from ._shared import (
    SPREAD,
    N,
    canonical,
    context,
    gap,
    max_abs,
    rownorm,
    score_symbols,
    symmetric_symbols,
    transpose,
)

# ---- 1. the exact split and the distance form --------------------------------------------------


def _derive_distance_form() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    m = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"M{a}{b}", real=True))
    x = sp.Matrix(N, 2, lambda i, a: sp.Symbol(f"x{i}{a}", real=True))
    m_s, m_a = (m + m.T) / 2, (m - m.T) / 2
    w_form = x * m * x.T
    w = score_symbols()
    bond, link = (w + w.T) / 2, (w - w.T) / 2
    g = [bond[i, i] for i in range(N)]
    d2 = sp.Matrix(N, N, lambda i, j: g[i] + g[j] - 2 * bond[i, j])
    distance_form = sp.Matrix(
        N, N, lambda i, j: -beta / 2 * d2[i, j] + beta / 2 * g[i] + beta / 2 * g[j] + beta * link[i, j]
    )
    dropped = sp.Matrix(N, N, lambda i, j: -beta / 2 * d2[i, j] + beta / 2 * g[j] + beta * link[i, j])
    exp_bond, exp_link = bond.applyfunc(lambda v: sp.exp(beta * v)), link.applyfunc(lambda v: sp.exp(beta * v))
    head = rownorm(w.applyfunc(lambda v: sp.exp(beta * v)))
    kept = rownorm(dropped.applyfunc(sp.exp))
    n_tokens, n_features = sp.symbols("n D", integer=True, positive=True)
    g_x, g_m = sp.MatrixSymbol("X", n_tokens, n_features), sp.MatrixSymbol("M", n_features, n_features)
    return [
        Step(
            "a bilinear form M on D = 2 features, a context of 3 tokens x_i (rows)",
            m,
            statement=r"\mathcal W = X\mathsf MX^\top,\quad X\in\mathbb R^{N\times D}\ (\text{tokens as rows}),\ \mathsf M = W_QW_K^\top\in\mathbb R^{D\times D}",
            because="a head without biases scores token pairs with one bilinear form M",
        ),
        claim(
            "M = M_S + M_A with M_S = ½(M + Mᵀ), M_A = ½(M − Mᵀ)",
            m_s + m_a,
            m,
            statement=r"\mathsf M = \mathsf M_S + \mathsf M_A,\quad \mathsf M_S = \tfrac12(\mathsf M + \mathsf M^\top),\ \mathsf M_A = \tfrac12(\mathsf M - \mathsf M^\top)",
            because="every square matrix is the sum of its symmetric and antisymmetric parts",
        ),
        claim(
            "𝒮 = X M_S Xᵀ is the symmetric part of the score 𝒲 = X M Xᵀ",
            (x * m_s * x.T).applyfunc(sp.expand),
            ((w_form + w_form.T) / 2).applyfunc(sp.expand),
            statement=r"\mathcal S = X\mathsf M_SX^\top = \tfrac12(\mathcal W + \mathcal W^\top)",
            because="(XMXᵀ)ᵀ = XMᵀXᵀ, so the congruence by X carries the symmetric part of M to that of 𝒲",
        ),
        claim(
            "𝒜 = X M_A Xᵀ is its antisymmetric part",
            (x * m_a * x.T).applyfunc(sp.expand),
            ((w_form - w_form.T) / 2).applyfunc(sp.expand),
            statement=r"\mathcal A = X\mathsf M_AX^\top = \tfrac12(\mathcal W - \mathcal W^\top)",
            because="the same congruence carries the antisymmetric part",
        ),
        Step(
            "token form for any scores w_ij = q_i·k_j (biases allowed): 𝒮 = ½(𝒲 + 𝒲ᵀ), 𝒜 = ½(𝒲 − 𝒲ᵀ)",
            w,
            statement=r"\mathcal S = \tfrac12(\mathcal W + \mathcal W^\top),\quad \mathcal A = \tfrac12(\mathcal W - \mathcal W^\top),\quad \mathcal W_{ij} = q_i\!\cdot\! k_j",
            because="the split needs only the score matrix, so it also covers heads with biases",
        ),
        claim(
            "exp_⊙(β𝒲) = exp_⊙(β𝒮) ⊙ exp_⊙(β𝒜)",
            canonical(w.applyfunc(lambda v: sp.exp(beta * v))),
            canonical(sp.matrix_multiply_elementwise(exp_bond, exp_link)),
            statement=r"e^{\beta\mathcal W_{ij}} = e^{\beta\mathcal S_{ij}}\,e^{\beta\mathcal A_{ij}}",
            because="𝒲 = 𝒮 + 𝒜 entrywise and e^{a+b} = e^a e^b",
        ),
        claim(
            "with g_i = 𝒮_ii and d²_ij = g_i + g_j − 2𝒮_ij: β𝒲_ij = −(β/2)d²_ij + (β/2)g_i + (β/2)g_j + β𝒜_ij",
            distance_form.applyfunc(sp.expand),
            (beta * w).applyfunc(sp.expand),
            statement=r"\beta\mathcal W_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_i + \tfrac\beta2 g_j + \beta\mathcal A_{ij},\quad g_i = \mathcal S_{ii},\ d^2_{ij} = g_i + g_j - 2\mathcal S_{ij}",
            because="polarisation: 𝒮_ij = ½(g_i + g_j − d²_ij)",
        ),
        claim(
            "dropping the source term leaves ℓ_ij − β𝒲_ij = −(β/2)g_i, constant along row i",
            (dropped - beta * w).applyfunc(sp.expand),
            sp.Matrix(N, N, lambda i, j: -beta / 2 * g[i]).applyfunc(sp.expand),
            statement=r"\ell_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_j + \beta\mathcal A_{ij} = \beta\mathcal W_{ij} - \tfrac\beta2 g_i",
            because="the dropped term (β/2)g_i depends on the query i only",
        ),
        claim(
            "so the row softmax cancels it: rownorm exp_⊙(ℓ) = rownorm exp_⊙(β𝒲) = P",
            canonical(kept),
            canonical(head),
            statement=r"\operatorname{softmax}_j(\ell_{ij}) = \operatorname{softmax}_j(\beta\mathcal W_{ij}) = \mathsf P_{ij}",
            because="a row constant multiplies numerator and row sum by the same e^{−βg_i/2}",
        ),
        claim(
            "general N: X M_S Xᵀ = ½(𝒲 + 𝒲ᵀ) for an n×D matrix symbol X and a D×D matrix symbol M",
            g_x * ((g_m + g_m.T) / 2) * g_x.T,
            (g_x * g_m * g_x.T + (g_x * g_m * g_x.T).T) / 2,
            statement=r"X\,\tfrac12(\mathsf M + \mathsf M^\top)X^\top = \tfrac12\big(X\mathsf MX^\top + (X\mathsf MX^\top)^\top\big),\quad X\in\mathbb R^{n\times D},\ n, D\text{ symbolic}",
            because="sympy transposes the product of matrix symbols, (XMXᵀ)ᵀ = XMᵀXᵀ, and expands",
            general=True,
        ),
        claim(
            "general N: X M_A Xᵀ = ½(𝒲 − 𝒲ᵀ), same matrix symbols",
            g_x * ((g_m - g_m.T) / 2) * g_x.T,
            (g_x * g_m * g_x.T - (g_x * g_m * g_x.T).T) / 2,
            statement=r"X\,\tfrac12(\mathsf M - \mathsf M^\top)X^\top = \tfrac12\big(X\mathsf MX^\top - (X\mathsf MX^\top)^\top\big),\quad n, D\text{ symbolic}",
            because="the same transposition with the opposite sign",
            general=True,
        ),
    ]


def _distance_form_residual(head, X, bilinear=None) -> float:
    """Worst relative residual of the split and the distance form of ``head`` on the context ``X``.

    ``bilinear`` (default: when the head has no query/key biases) adds the parameter level 𝒮 = XM_SXᵀ,
    𝒜 = XM_AXᵀ with M = W_QW_Kᵀ.
    """
    beta = head.beta
    scores = head.scores(X)
    split = score_split(X, head.W_Q, head.W_K, head.b_Q, head.b_K)
    xp = namespace(scores)
    size = max_abs(scores)
    bond, link, g, d2 = split
    residual = gap(bond + link, scores) / size
    # exactness of the symmetry: both parts are built from 𝒲 and 𝒲ᵀ
    residual = max(residual, max_abs(bond - transpose(bond)) + max_abs(link + transpose(link)))
    factorised = xp.exp(beta * bond) * xp.exp(beta * link) / xp.exp(beta * scores)
    residual = max(residual, max_abs(factorised - 1.0))
    distance = -0.5 * beta * d2 + 0.5 * beta * g[:, None] + 0.5 * beta * g[None, :] + beta * link
    residual = max(residual, gap(distance, beta * scores) / (beta * size))
    # the head's own P (softmax of β q·k) against the distance form with the source dropped
    residual = max(residual, gap(softmax_rows(distance_form_logits(split, beta)), head.operator(X)))
    if bilinear is None:
        bilinear = head.b_Q is None and head.b_K is None
    if bilinear:
        M = head.bilinear_form()
        M_S, M_A = bond_link_split(M)
        residual = max(residual, gap(M_S + M_A, M) / max_abs(M))
        residual = max(residual, gap(X @ M_S @ transpose(X), bond) / size, gap(X @ M_A @ transpose(X), link) / size)
    return residual


def _verify_distance_form(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the head's own scores q_i·k_j and its own Markov operator softmax(βq·k) (AttentionHead), the
    bilinear form X M Xᵀ, and elementwise exp(a + b) = exp(a)exp(b); on a head without biases and one with
    b_Q, b_K, b_V (the token form covers affine scores).

    Tolerance 1e-12: every residual is relative to max |𝒲| (or a probability); d² = g_i + g_j − 2𝒮_ij and the
    row softmax round at a few ulps of the largest logit (observed ≈ 1e-15).
    """
    n, D, d_h = by_scale(scale, (12, 8, 4), (400, 64, 16))
    X = context(rng, n, D, backend, spread=2.0)
    worst = 0.0
    for bias in (False, True):
        head = random_head(rng, D, d_h, bias=bias, backend=backend)
        worst = max(worst, _distance_form_residual(head, X))
    return Verification.from_residual(worst, 1e-12, n=n, D=D, d_h=d_h)


# ---- 2. the bond as a Doob transform -------------------------------------------------------------


def _derive_doob_tilt() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    s = symmetric_symbols("s")
    g = [s[i, i] for i in range(N)]
    d2 = sp.Matrix(N, N, lambda i, j: g[i] + g[j] - 2 * s[i, j])
    kernel = d2.applyfunc(lambda v: sp.exp(-beta * v / 2))
    h = sp.Matrix([sp.exp(beta * g[i] / 2) for i in range(N)])
    kh = kernel * h
    doob = sp.diag(*kh).inv() * kernel * sp.diag(*h)
    z = [sum(sp.exp(beta * s[i, j]) for j in range(N)) for i in range(N)]
    bond_operator = sp.Matrix(N, N, lambda i, j: sp.exp(beta * s[i, j]) / z[i])
    pi = sp.Matrix([h[i] * kh[i] for i in range(N)])
    return [
        Step(
            "a symmetric bond 𝒮 on 3 tokens, g_i = 𝒮_ii, K_ij = exp(−(β/2)d²_ij), h_j = e^{βg_j/2}",
            kernel,
            statement=r"\mathsf K_{ij} = e^{-\frac\beta2 d^2_{ij}} = \mathsf K_{ji},\quad h_j = e^{\beta g_j/2},\quad g_i = \mathcal S_{ii}",
            because="the symmetric distance kernel of the bond and the destination tilt h",
        ),
        claim(
            "K_ij h_j = e^{−βg_i/2} e^{β𝒮_ij}: the tilt restores the bond up to a row factor",
            canonical(sp.Matrix(N, N, lambda i, j: kernel[i, j] * h[j])),
            canonical(sp.Matrix(N, N, lambda i, j: sp.exp(-beta * g[i] / 2) * sp.exp(beta * s[i, j]))),
            statement=r"\mathsf K_{ij}h_j = e^{-\frac\beta2(g_i + g_j - 2\mathcal S_{ij})}e^{\frac\beta2 g_j} = e^{-\beta g_i/2}e^{\beta\mathcal S_{ij}}",
            because="the tilt cancels the g_j half of the distance, leaving a factor that depends on the row only",
        ),
        claim(
            "diag(Kh)⁻¹ K diag(h) = rownorm exp_⊙(β𝒮): the bond operator is the Doob transform",
            canonical(doob),
            canonical(bond_operator),
            statement=r"\operatorname{diag}(\mathsf Kh)^{-1}\mathsf K\operatorname{diag}(h) = \operatorname{rownorm}\,e^{\beta\mathcal S}",
            because="the row factor e^{−βg_i/2} cancels in the row normalisation",
        ),
        claim(
            "π_i = h_i (Kh)_i = Σ_j e^{β𝒮_ij} = Z_i: the stationary law is the row sum of exp_⊙(β𝒮)",
            canonical(pi),
            canonical(sp.Matrix(z)),
            statement=r"\pi_i = h_i(\mathsf Kh)_i = e^{\beta g_i/2}e^{-\beta g_i/2}\sum_j e^{\beta\mathcal S_{ij}} = Z_i",
            because="the Doob stationary law h ⊙ Kh; the tilt and its row factor cancel",
        ),
        claim(
            "π_i P_ij = e^{β𝒮_ij} is symmetric (detailed balance)",
            canonical(sp.diag(*z) * bond_operator),
            canonical(sp.diag(*z) * bond_operator).T,
            statement=r"Z_i\mathsf P_{ij} = e^{\beta\mathcal S_{ij}} = Z_j\mathsf P_{ji}",
            because="P_ij = e^{β𝒮_ij}/Z_i and 𝒮 is symmetric",
        ),
    ]


def _doob_tilt_residual(split, beta, mask=None) -> float:
    """Worst residual of rownorm exp(β𝒮) = Doob(exp(−(β/2)d²), e^{βg/2}) and π ∝ h ⊙ Kh ∝ exp(β𝒮)𝟏.

    With a boolean ``mask`` (True = admissible key) every object is restricted to it: the kernel K ⊙ mask, the
    masked row softmax, Z_i = Σ_j mask_ij e^{β𝒮_ij} (for the outside case of the full-support hypothesis).
    """
    kernel, h = destination_tilt(split, beta)
    xp = namespace(kernel)
    bond, g = split.bond, split.potential
    ones = xp.ones_like(bond) if mask is None else xp.astype(mask, bond.dtype)
    kernel = kernel * ones
    op = doob_transform(kernel, h)
    # independent: row softmax of β𝒮
    bond_operator = softmax_operator(bond, beta) if mask is None else softmax_rows(beta * bond, mask)
    residual = gap(op.P, bond_operator)
    residual = max(residual, max_abs(kernel - transpose(kernel)))
    residual = max(residual, gap(h, xp.exp(0.5 * beta * (g - xp.max(g)))))
    # π ∝ Z_i = Σ_j e^{β𝒮_ij} (one common shift keeps the exponentials finite)
    z = xp.sum(ones * xp.exp(beta * (bond - xp.max(bond))), axis=1)
    pi_rows = z / xp.sum(z)
    pi_tilt = h * (kernel @ h)
    pi_tilt = pi_tilt / xp.sum(pi_tilt)
    top = max_abs(pi_rows)
    residual = max(residual, gap(pi_tilt, pi_rows) / top, gap(op.stationary, pi_rows) / top)
    residual = max(residual, gap(pi_rows @ bond_operator, pi_rows) / top)  # stationarity
    return max(residual, reversibility_residual(bond_operator, pi_rows))


def _verify_doob_tilt(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the row softmax of β𝒮 (softmax_operator, no kernel or tilt involved), the row sums
    Z_i = Σ_j e^{β𝒮_ij} as the stationary law (checked by πP = π and detailed balance), on an indefinite
    bond (random head, negative pseudo-distances allowed) with and without biases.

    Tolerance 1e-12 relative (max π or probabilities): the tilt and the kernel are exponentials of O(β|𝒮|)
    numbers; observed ≈ 1e-15.
    """
    n, D, d_h = by_scale(scale, (12, 8, 4), (400, 64, 16))
    X = context(rng, n, D, backend, spread=2.0)
    worst = 0.0
    for bias in (False, True):
        head = random_head(rng, D, d_h, bias=bias, backend=backend)
        split = score_split(X, head.W_Q, head.W_K, head.b_Q, head.b_K)
        worst = max(worst, _doob_tilt_residual(split, head.beta))
    return Verification.from_residual(worst, 1e-12, n=n, D=D, d_h=d_h)


# ---- 3. exact link ⇔ Doob ⇔ reversible; affinity = 2β × holonomy ---------------------------------


def _derive_exact_iff_reversible() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    s = symmetric_symbols("s")
    phi = sp.Matrix(sp.symbols(f"phi0:{N}", real=True))
    kernel = s.applyfunc(lambda v: sp.exp(beta * v))
    h = phi.applyfunc(lambda v: sp.exp(-beta * v))
    kh = kernel * h
    doob = sp.diag(*kh).inv() * kernel * sp.diag(*h)
    head = rownorm(sp.Matrix(N, N, lambda i, j: sp.exp(beta * (s[i, j] + phi[i] - phi[j]))))
    pi = sp.Matrix([h[i] * kh[i] for i in range(N)])
    flux = sp.diag(*pi) * doob
    a = sp.Matrix(N, N, lambda i, j: 0 if i == j else (1 if i < j else -1) * sp.Symbol(f"a{min(i, j)}{max(i, j)}"))
    z = [sum(sp.exp(beta * (s[i, j] + a[i, j])) for j in range(N)) for i in range(N)]
    free = sp.Matrix(N, N, lambda i, j: sp.exp(beta * (s[i, j] + a[i, j])) / z[i])
    cycle = [0, 1, 2, 0]
    affinity = sum(sp.log(free[cycle[m], cycle[m + 1]] / free[cycle[m + 1], cycle[m]]) for m in range(3))
    holonomy_sum = a[0, 1] + a[1, 2] + a[2, 0]
    # Kolmogorov on K_3: zero holonomy leaves one free link value, and then the link is exact with φ_i = 𝒜_i0.
    closed = {sp.Symbol("a12"): -a[0, 1] - a[2, 0]}
    potential = [a[i, 0] for i in range(N)]
    gn = sp.Symbol("n", integer=True, positive=True)
    gi, gj, gk = sp.symbols("i j k", integer=True)
    gs, gphi = sp.IndexedBase("s"), sp.IndexedBase("phi")
    return [
        Step(
            "exact link 𝒜_ij = φ_i − φ_j on a symmetric bond 𝒮 (3 tokens)",
            head,
            statement=r"\mathsf P_{ij} = \operatorname{softmax}_j\,\beta(\mathcal S_{ij} + \varphi_i - \varphi_j),\quad \mathcal S = \mathcal S^\top",
            because="a head whose link is a gradient of a potential φ",
        ),
        claim(
            "rownorm exp_⊙(β(𝒮 + 𝒜)) = diag(Kh)⁻¹K diag(h), K = exp_⊙(β𝒮), h = e^{−βφ}",
            canonical(head),
            canonical(doob),
            statement=r"\operatorname{rownorm}\,e^{\beta(\mathcal S + \mathcal A)} = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K\operatorname{diag}(h),\quad \mathsf K = e^{\beta\mathcal S},\ h = e^{-\beta\varphi}",
            because="e^{β(𝒮_ij + φ_i − φ_j)} = e^{βφ_i}K_ij h_j, and e^{βφ_i} is a row constant",
        ),
        claim(
            "π = h ⊙ Kh satisfies detailed balance: diag(π)P is symmetric",
            canonical(flux),
            canonical(flux).T,
            statement=r"\pi_i\mathsf P_{ij} = h_i\mathsf K_{ij}h_j = \pi_j\mathsf P_{ji},\quad \pi = h\odot\mathsf Kh",
            because="a Doob transform of a symmetric kernel is reversible",
        ),
        claim(
            "free link: the affinity of 0→1→2→0 is 2β × the link holonomy (the Z_i telescope)",
            sp.expand(sp.expand_log(affinity, force=True)),
            2 * beta * holonomy_sum,
            statement=r"\mathfrak A(\gamma) = \sum_m\log\frac{\mathsf P_{i_mi_{m+1}}}{\mathsf P_{i_{m+1}i_m}} = 2\beta\sum_m\mathcal A_{i_mi_{m+1}}",
            because="𝒮 cancels in each ratio, 𝒜 doubles by antisymmetry, and the log Z_i telescope around the cycle",
        ),
        claim(
            "zero holonomy on the triangle makes the link exact, 𝒜_ij = φ_i − φ_j with φ_i = 𝒜_i0",
            sp.Matrix(N, N, lambda i, j: a[i, j] - (potential[i] - potential[j])).subs(closed).applyfunc(sp.expand),
            statement=r"\sum_{\text{triangles}}\mathcal A = 0\ \Rightarrow\ \mathcal A_{ij} = \varphi_i - \varphi_j,\ \varphi_i = \mathcal A_{i0}",
            because="with 𝒜₁₂ = −𝒜₀₁ − 𝒜₂₀: 𝒜_i0 − 𝒜_j0 = 𝒜_i0 + 𝒜_0j = 𝒜_ij on every edge (Kolmogorov criterion)",
        ),
        claim(
            "general N: softmax_j β(𝒮_ij + φ_i − φ_j) = K_ij h_j / Σ_k K_ik h_k over a symbolic n",
            sp.exp(beta * (gs[gi, gj] + gphi[gi] - gphi[gj]))
            / sp.Sum(sp.exp(beta * (gs[gi, gk] + gphi[gi] - gphi[gk])), (gk, 0, gn - 1)),
            sp.exp(beta * gs[gi, gj])
            * sp.exp(-beta * gphi[gj])
            / sp.Sum(sp.exp(beta * gs[gi, gk]) * sp.exp(-beta * gphi[gk]), (gk, 0, gn - 1)),
            statement=r"\frac{e^{\beta(\mathcal S_{ij} + \varphi_i - \varphi_j)}}{\sum_{k<n}e^{\beta(\mathcal S_{ik} + \varphi_i - \varphi_k)}} = \frac{\mathsf K_{ij}h_j}{\sum_{k<n}\mathsf K_{ik}h_k},\quad n\text{ symbolic}",
            because="e^{βφ_i} leaves the sum and cancels; sympy decides it for a symbolic number of tokens",
            general=True,
        ),
    ]


def _exact_link_residual(bond, link, phi, beta, mask=None) -> float:
    """Residual of rownorm exp(β(𝒮 + 𝒜)) = Doob(exp(β𝒮), e^{−βφ}) and its reversibility (𝒜 claimed = φ_i − φ_j).

    With a boolean ``mask`` (True = admissible key) the head and the kernel are both restricted to it.
    """
    xp = namespace(bond)
    head = softmax_rows(beta * (bond + link), mask)
    ones = xp.ones_like(bond) if mask is None else xp.astype(mask, bond.dtype)
    # the constants e^{−β max 𝒮} and e^{β min φ} cancel in the Doob transform; they keep exp finite
    doob = doob_transform(ones * xp.exp(beta * (bond - xp.max(bond))), xp.exp(-beta * (phi - xp.min(phi))))
    return max(gap(head, doob.P), reversibility_residual(head))


def _verify_exact_iff_reversible(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the Doob transform of the bond kernel (workbench.markov.doob_transform) and ε_rev = 0 for an
    exact link; Schnakenberg affinities of the head's own P (cycle_affinities, logs of P_ij/P_ji) against
    2β × the link holonomy on the triangle basis of K_n.  The free link of a random head must be visibly
    nonreversible (ε_rev > 0.05) and is_exact_link must tell the two apart, else the check fails.

    Tolerance 1e-11: ε_rev uses π from a linear solve (≈ 1e-15), the affinities are logs of ratios of
    O(1/n) probabilities summed over (n − 1)(n − 2)/2 triangles (≈ 1e-13 at n = 120).
    """
    n, D, d_h = by_scale(scale, (24, 8, 4), (120, 32, 8))
    X = context(rng, n, D, backend, spread=SPREAD)
    head = random_head(rng, D, d_h, backend=backend)
    beta = head.beta
    split = score_split(X, head.W_Q, head.W_K)
    phi = to_backend(rng.standard_normal(n), backend)
    exact = exact_link(phi)
    residual = _exact_link_residual(split.bond, exact, phi, beta)
    cycles = triangle_cycles(n)
    residual = max(residual, max_abs(link_holonomy(exact, cycles)) / max_abs(exact))
    free = head.operator(X)
    affinity = cycle_affinities(free, cycles)
    residual = max(residual, gap(affinity, 2 * beta * link_holonomy(split.link, cycles)))
    epsilon_free = reversibility_residual(free)
    if epsilon_free < 0.05 or not is_exact_link(exact) or is_exact_link(split.link):
        residual = math.inf  # the criterion must separate exact from free links, else it proves nothing
    return Verification.from_residual(residual, 1e-11, n=n, cycles=len(cycles), eps_rev_free=round(epsilon_free, 4))


# ---- outside the hypotheses: the statements measured where a hypothesis fails -------------------------


def _small_context(rng, spread):
    n, D, d_h = 12, 8, 4
    return context(rng, n, D, "numpy", spread=spread), D, d_h


def _outside_distance_form_biases(rng) -> Verification:
    """𝒮 = XM_SXᵀ, 𝒜 = XM_AXᵀ on a head with query/key biases (scores affine, not bilinear, in X).

    The token split 𝒮 = ½(𝒲 + 𝒲ᵀ), the factorisation and the distance form still hold (they need only 𝒲); the
    parameter level does not: XM_SXᵀ misses the bias terms XW_Qb_Kᵀ𝟏ᵀ + 𝟏b_QW_KᵀXᵀ + (b_Q·b_K)𝟏𝟏ᵀ.  Measured
    (numpy, n = 12, D = 8, d_h = 4): residual 0.27 relative to max |𝒲| against the tolerance 1e-12.
    """
    X, D, d_h = _small_context(rng, 2.0)
    head = random_head(rng, D, d_h, bias=True)
    residual = _distance_form_residual(head, X, bilinear=True)
    return Verification.from_residual(residual, 1e-12, n=int(X.shape[0]), D=D, d_h=d_h, biases=True)


def _outside_doob_tilt_asymmetric(rng) -> Verification:
    """The Doob form with the full score 𝒲 = 𝒮 + 𝒜 in place of the symmetric bond 𝒮 (g_i = 𝒲_ii, d² from 𝒲).

    The tilt still reproduces rownorm exp(β𝒲), but K = exp(−(β/2)d²) is no longer symmetric and π ∝ exp(β𝒲)𝟏 is
    not stationary (the free link makes the walk nonreversible).  Measured (numpy, n = 12, D = 8): residual 1.4
    (kernel asymmetry and stationarity) against the tolerance 1e-12.
    """
    X, D, d_h = _small_context(rng, 2.0)
    head = random_head(rng, D, d_h)
    split = score_split(X, head.W_Q, head.W_K)
    scores = split.bond + split.link
    g = np.diagonal(scores).copy()
    free = split._replace(
        bond=scores, link=0.0 * scores, potential=g, squared_distance=g[:, None] + g[None, :] - 2.0 * scores
    )
    residual = _doob_tilt_residual(free, head.beta)
    return Verification.from_residual(residual, 1e-12, n=int(X.shape[0]), D=D, d_h=d_h)


def _outside_doob_tilt_causal(rng) -> Verification:
    """The bond of a causal head: rownorm(exp(β𝒮) ⊙ C), C_ij = [j ≤ i].

    The masked kernel K ⊙ C is not symmetric, and the walk drains to token 0: its stationary law is δ₀, not
    h ⊙ (K ⊙ C)h > 0.  Measured (numpy, n = 12, D = 8): residual 1.9 (π = δ₀ against a law spread over all
    tokens, and K ⊙ C asymmetric) against the tolerance 1e-12.
    """
    X, D, d_h = _small_context(rng, 2.0)
    head = random_head(rng, D, d_h)
    split = score_split(X, head.W_Q, head.W_K)
    n = int(X.shape[0])
    residual = _doob_tilt_residual(split, head.beta, mask=np.tril(np.ones((n, n), dtype=bool)))
    return Verification.from_residual(residual, 1e-12, n=n, D=D, d_h=d_h, mask="causal")


def _exact_context(rng):
    n, D, d_h = 24, 8, 4
    X = context(rng, n, D, "numpy", spread=SPREAD)
    head = random_head(rng, D, d_h)
    return X, head, score_split(X, head.W_Q, head.W_K)


def _outside_exact_free_link(rng) -> Verification:
    """A free link (the head's own 𝒜, whose holonomy is nonzero) against the Doob transform of its best potential.

    φ is the least-squares potential of 𝒜 (link_potential); the coexact remainder makes the head differ from
    Doob(exp(β𝒮), e^{−βφ}) and makes it nonreversible.  Measured (numpy, n = 24, D = 8): residual 0.27 (ε_rev of
    the head, and the Doob gap) against the tolerance 1e-11.
    """
    X, head, split = _exact_context(rng)
    residual = _exact_link_residual(split.bond, split.link, link_potential(split.link), head.beta)
    return Verification.from_residual(residual, 1e-11, n=int(X.shape[0]), link="free")


def _outside_exact_asymmetric_mask(rng) -> Verification:
    """An exact link under the mask j ≤ i + 1 (one look-ahead): a support that is not symmetric but irreducible.

    The masked head is still the Doob transform of the masked kernel exp(β𝒮) ⊙ C, but that kernel is not
    symmetric, so the walk is not reversible: ε_rev > 0.  (A causal mask, j ≤ i, would not do: its walk drains to
    token 0, π = δ₀, and ε_rev = 0 holds vacuously.)  Measured (numpy, n = 24, D = 8): residual 0.64 (ε_rev)
    against the tolerance 1e-11.
    """
    X, head, split = _exact_context(rng)
    n = int(X.shape[0])
    phi = rng.standard_normal(n)
    mask = np.tril(np.ones((n, n), dtype=bool), k=1)
    residual = _exact_link_residual(split.bond, exact_link(phi), phi, head.beta, mask=mask)
    return Verification.from_residual(residual, 1e-11, n=n, mask="j <= i + 1")


BILINEAR = Hypothesis(
    "bilinear scores 𝒲 = XMXᵀ (no query/key biases) for 𝒮 = XM_SXᵀ, 𝒜 = XM_AXᵀ; the token split "
    "𝒮 = ½(𝒲 + 𝒲ᵀ) and the distance form hold for any score matrix",
    "a head with b_Q, b_K (scores affine in X)",
    _outside_distance_form_biases,
)

# ---- the catalogue ------------------------------------------------------------------------------------

SOURCE_SPLIT = "Attention Geometry §7, Table 4 [SEED split, DERIVED distance form]; book/reference.md §A.7"

IDENTITIES = [
    Identity(
        name="attention.split.distance_form",
        area="attention",
        statement=r"M = M_S + M_A,\ \exp_\odot(\beta\mathcal W) = \exp_\odot(\beta\mathcal S)\odot\exp_\odot(\beta\mathcal A),"
        r"\ \beta\mathcal W_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_i + \tfrac\beta2 g_j + \beta\mathcal A_{ij},"
        r"\ \operatorname{rownorm}\exp(-\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_j + \beta\mathcal A_{ij}) = \mathsf P,"
        r"\ \mathcal S = XM_SX^\top,\ \mathcal A = XM_AX^\top\ (\text{bilinear scores: no } b_Q, b_K)",
        source=SOURCE_SPLIT + ' "Exact bond/link split", "Distance form with site potentials"',
        derive=_derive_distance_form,
        verify=_verify_distance_form,
        hypotheses=(BILINEAR,),
    ),
    Identity(
        name="attention.split.doob_tilt",
        area="attention",
        statement=r"\operatorname{rownorm}\exp_\odot(\beta\mathcal S) = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K"
        r"\operatorname{diag}(h),\ \mathsf K_{ij} = e^{-\frac\beta2 d^2_{ij}},\ h = e^{\beta g/2},"
        r"\ \pi \propto h\odot\mathsf Kh = \exp_\odot(\beta\mathcal S)\mathbf 1\ (\mathcal S = \mathcal S^\top,"
        r"\ \text{no mask})",
        source='Attention Geometry §4, §7 [DERIVED]; book/reference.md §A.4 (Doob), §A.7 "Distance form with site potentials"',
        derive=_derive_doob_tilt,
        verify=_verify_doob_tilt,
        hypotheses=(
            Hypothesis(
                "𝒮 symmetric: the bond ½(𝒲 + 𝒲ᵀ), not the score 𝒲 (else K is not symmetric and π is not h ⊙ Kh)",
                "the full score 𝒲 = 𝒮 + 𝒜 of a random head in place of 𝒮",
                _outside_doob_tilt_asymmetric,
            ),
            Hypothesis(
                "every key admissible (no mask, or a symmetric one), so the stationary law h ⊙ Kh is positive; "
                "a causal walk drains to token 0 and has π = δ₀",
                "the causal bond operator rownorm(exp(β𝒮) ⊙ [j ≤ i])",
                _outside_doob_tilt_causal,
            ),
        ),
    ),
    Identity(
        name="attention.link.exact_iff_reversible",
        area="attention",
        statement=r"\mathcal A_{ij} = \varphi_i - \varphi_j \Rightarrow \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))"
        r" = \mathsf P_{e^{-\beta\varphi}},\ \varepsilon_{\mathrm{rev}} = 0;\quad"
        r"\mathfrak A(\gamma) = 2\beta\oint_\gamma\mathcal A\ (\text{no mask, or a symmetric one})",
        source='Attention Geometry §7 [DERIVED]; book/reference.md §A.7 "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities"',
        derive=_derive_exact_iff_reversible,
        verify=_verify_exact_iff_reversible,
        hypotheses=(
            Hypothesis(
                "𝒜 exact: 𝒜_ij = φ_i − φ_j (zero holonomy on every cycle)",
                "the free link of a random head, against the Doob transform of its least-squares potential",
                _outside_exact_free_link,
            ),
            Hypothesis(
                "a symmetric support (no mask, or a symmetric one); under a causal mask the walk drains to token 0, "
                "π = δ₀, and ε_rev = 0 holds vacuously, saying nothing",
                "an exact link under the mask j ≤ i + 1 (irreducible, not symmetric)",
                _outside_exact_asymmetric_mask,
            ),
        ),
    ),
]
