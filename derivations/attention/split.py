r"""The bond/link split of attention scores.

The exact split and the distance form, the bond as a Doob transform, exact link ⇔ Doob ⇔ reversible.

Source: Attention Geometry §4, §7, Table 4.  Each identity is derived on three tokens with symbolic scores and
measured on random heads through :mod:`workbench.attention`, on numpy and on torch.
"""

from __future__ import annotations

import math

import sympy as sp

from derivations._common import by_scale
from derivations.attention._shared import (
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
from workbench.attention import (
    bond_link_split,
    destination_tilt,
    distance_form_logits,
    exact_link,
    is_exact_link,
    link_holonomy,
    random_head,
    reversibility_residual,
    score_split,
    softmax_rows,
    triangle_cycles,
)
from workbench.backend import namespace, to_backend
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.markov import cycle_affinities, doob_transform, softmax_operator

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
    return [
        Step("a bilinear form M on D = 2 features, a context of 3 tokens x_i (rows)", m),
        claim("M = M_S + M_A with M_S = ½(M + Mᵀ), M_A = ½(M − Mᵀ)", m_s + m_a, m),
        claim(
            "𝒮 = X M_S Xᵀ is the symmetric part of the score 𝒲 = X M Xᵀ",
            (x * m_s * x.T).applyfunc(sp.expand),
            ((w_form + w_form.T) / 2).applyfunc(sp.expand),
        ),
        claim(
            "𝒜 = X M_A Xᵀ is its antisymmetric part",
            (x * m_a * x.T).applyfunc(sp.expand),
            ((w_form - w_form.T) / 2).applyfunc(sp.expand),
        ),
        Step("token form for any scores w_ij = q_i·k_j (biases allowed): 𝒮 = ½(𝒲 + 𝒲ᵀ), 𝒜 = ½(𝒲 − 𝒲ᵀ)", w),
        claim(
            "exp_⊙(β𝒲) = exp_⊙(β𝒮) ⊙ exp_⊙(β𝒜)",
            canonical(w.applyfunc(lambda v: sp.exp(beta * v))),
            canonical(sp.matrix_multiply_elementwise(exp_bond, exp_link)),
        ),
        claim(
            "with g_i = 𝒮_ii and d²_ij = g_i + g_j − 2𝒮_ij: β𝒲_ij = −(β/2)d²_ij + (β/2)g_i + (β/2)g_j + β𝒜_ij",
            distance_form.applyfunc(sp.expand),
            (beta * w).applyfunc(sp.expand),
        ),
        claim(
            "dropping the source term leaves ℓ_ij − β𝒲_ij = −(β/2)g_i, constant along row i",
            (dropped - beta * w).applyfunc(sp.expand),
            sp.Matrix(N, N, lambda i, j: -beta / 2 * g[i]).applyfunc(sp.expand),
        ),
        claim(
            "so the row softmax cancels it: rownorm exp_⊙(ℓ) = rownorm exp_⊙(β𝒲) = P",
            canonical(kept),
            canonical(head),
        ),
    ]


def _distance_form_residual(head, X) -> float:
    """Worst relative residual of the split and the distance form of ``head`` on the context ``X``."""
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
    if head.b_Q is None and head.b_K is None:
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
        Step("a symmetric bond 𝒮 on 3 tokens, g_i = 𝒮_ii, K_ij = exp(−(β/2)d²_ij), h_j = e^{βg_j/2}", kernel),
        claim(
            "K_ij h_j = e^{−βg_i/2} e^{β𝒮_ij}: the tilt restores the bond up to a row factor",
            canonical(sp.Matrix(N, N, lambda i, j: kernel[i, j] * h[j])),
            canonical(sp.Matrix(N, N, lambda i, j: sp.exp(-beta * g[i] / 2) * sp.exp(beta * s[i, j]))),
        ),
        claim(
            "diag(Kh)⁻¹ K diag(h) = rownorm exp_⊙(β𝒮): the bond operator is the Doob transform",
            canonical(doob),
            canonical(bond_operator),
        ),
        claim(
            "π_i = h_i (Kh)_i = Σ_j e^{β𝒮_ij} = Z_i: the stationary law is the row sum of exp_⊙(β𝒮)",
            canonical(pi),
            canonical(sp.Matrix(z)),
        ),
        claim(
            "π_i P_ij = e^{β𝒮_ij} is symmetric (detailed balance)",
            canonical(sp.diag(*z) * bond_operator),
            canonical(sp.diag(*z) * bond_operator).T,
        ),
    ]


def _doob_tilt_residual(split, beta) -> float:
    """Worst residual of rownorm exp(β𝒮) = Doob(exp(−(β/2)d²), e^{βg/2}) and π ∝ h ⊙ Kh ∝ exp(β𝒮)𝟏."""
    kernel, h = destination_tilt(split, beta)
    xp = namespace(kernel)
    bond, g = split.bond, split.potential
    op = doob_transform(kernel, h)
    bond_operator = softmax_operator(bond, beta)  # independent: row softmax of β𝒮
    residual = gap(op.P, bond_operator)
    residual = max(residual, max_abs(kernel - transpose(kernel)))
    residual = max(residual, gap(h, xp.exp(0.5 * beta * (g - xp.max(g)))))
    # π ∝ Z_i = Σ_j e^{β𝒮_ij} (one common shift keeps the exponentials finite)
    z = xp.sum(xp.exp(beta * (bond - xp.max(bond))), axis=1)
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
    return [
        Step("exact link 𝒜_ij = φ_i − φ_j on a symmetric bond 𝒮 (3 tokens)", head),
        claim(
            "rownorm exp_⊙(β(𝒮 + 𝒜)) = diag(Kh)⁻¹K diag(h), K = exp_⊙(β𝒮), h = e^{−βφ}",
            canonical(head),
            canonical(doob),
        ),
        claim("π = h ⊙ Kh satisfies detailed balance: diag(π)P is symmetric", canonical(flux), canonical(flux).T),
        claim(
            "free link: the affinity of 0→1→2→0 is 2β × the link holonomy (the Z_i telescope)",
            sp.expand(sp.expand_log(affinity, force=True)),
            2 * beta * holonomy_sum,
        ),
        claim(
            "zero holonomy on the triangle makes the link exact, 𝒜_ij = φ_i − φ_j with φ_i = 𝒜_i0",
            sp.Matrix(N, N, lambda i, j: a[i, j] - (potential[i] - potential[j])).subs(closed).applyfunc(sp.expand),
        ),
    ]


def _exact_link_residual(bond, link, phi, beta) -> float:
    """Residual of rownorm exp(β(𝒮 + 𝒜)) = Doob(exp(β𝒮), e^{−βφ}) and its reversibility (𝒜 claimed = φ_i − φ_j)."""
    xp = namespace(bond)
    head = softmax_rows(beta * (bond + link))
    # the constants e^{−β max 𝒮} and e^{β min φ} cancel in the Doob transform; they keep exp finite
    doob = doob_transform(xp.exp(beta * (bond - xp.max(bond))), xp.exp(-beta * (phi - xp.min(phi))))
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


# ---- the catalogue ------------------------------------------------------------------------------------

SOURCE_SPLIT = "Attention Geometry §7, Table 4 [SEED split, DERIVED distance form]; attention-geometry-math §A.7"

IDENTITIES = [
    Identity(
        name="attention.split.distance_form",
        area="attention",
        statement=r"M = M_S + M_A,\ \exp_\odot(\beta\mathcal W) = \exp_\odot(\beta\mathcal S)\odot\exp_\odot(\beta\mathcal A),"
        r"\ \beta\mathcal W_{ij} = -\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_i + \tfrac\beta2 g_j + \beta\mathcal A_{ij},"
        r"\ \operatorname{rownorm}\exp(-\tfrac\beta2 d^2_{ij} + \tfrac\beta2 g_j + \beta\mathcal A_{ij}) = \mathsf P",
        source=SOURCE_SPLIT + ' "Exact bond/link split", "Distance form with site potentials"',
        derive=_derive_distance_form,
        verify=_verify_distance_form,
    ),
    Identity(
        name="attention.split.doob_tilt",
        area="attention",
        statement=r"\operatorname{rownorm}\exp_\odot(\beta\mathcal S) = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K"
        r"\operatorname{diag}(h),\ \mathsf K_{ij} = e^{-\frac\beta2 d^2_{ij}},\ h = e^{\beta g/2},"
        r"\ \pi \propto h\odot\mathsf Kh = \exp_\odot(\beta\mathcal S)\mathbf 1",
        source='Attention Geometry §4, §7 [DERIVED]; attention-geometry-math §A.4 (Doob), §A.7 "Distance form with site potentials"',
        derive=_derive_doob_tilt,
        verify=_verify_doob_tilt,
    ),
    Identity(
        name="attention.link.exact_iff_reversible",
        area="attention",
        statement=r"\mathcal A_{ij} = \varphi_i - \varphi_j \Rightarrow \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))"
        r" = \mathsf P_{e^{-\beta\varphi}},\ \varepsilon_{\mathrm{rev}} = 0;\quad"
        r"\mathfrak A(\gamma) = 2\beta\oint_\gamma\mathcal A",
        source='Attention Geometry §7 [DERIVED]; attention-geometry-math §A.7 "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities"',
        derive=_derive_exact_iff_reversible,
        verify=_verify_exact_iff_reversible,
    ),
]
