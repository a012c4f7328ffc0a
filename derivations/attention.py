r"""Attention as an operator: the bond/link split, the four operators, the connection walk, diagnostics.

Source: Attention Geometry §4, §7, §9–§10, Table 1 and Table 4 (attention-geometry-math §A.7, §A.10) and
"From Self-Attention to Connection Laplacian" §3–§6 (attention-geometry-math §B.2–§B.6).  Each identity is
derived symbolically on a small case (three tokens with symbolic scores; two tokens with symbolic 2×2
transports for the connection walk) and measured numerically on random heads through
:mod:`workbench.attention`, on numpy and on torch.
"""

# The connection-walk papers name the transport field O; the helpers below keep the symbol.
# ruff: noqa: E741

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from derivations._common import by_scale, relative_error
from workbench.attention import (
    OPERATORS,
    AttentionHead,
    block_operator,
    bond_link_split,
    connection_energy,
    connection_laplacian,
    connection_step,
    cycle_connection,
    destination_tilt,
    distance_form_logits,
    effective_connection,
    effective_form,
    effective_neighbours,
    exact_link,
    family_operator,
    gauge_transform,
    holonomy,
    is_exact_link,
    link_holonomy,
    mixing_generator,
    operator_logits,
    operator_skew_ratio,
    previous_token_score,
    propagate,
    random_head,
    random_multihead,
    reversibility_residual,
    row_entropy,
    score_split,
    softmax_rows,
    triangle_cycles,
    uniform_entropy,
)
from workbench.backend import namespace, to_backend, to_numpy
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.markov import cycle_affinities, doob_transform, softmax_operator

N = 3  # tokens in the symbolic derivations of the split and the family
SQRT2 = math.sqrt(2.0)
# Token spread for the ε_rev checks: logits of order 1/4 keep π spread over the tokens.  Peaked logits make π
# sit on one self-attending token, whose symmetric self-loop then dominates the flux and drives ε_rev of a free
# link towards 0 (at spread 1 and n = 16, ε_rev(DMTN) fell to 7e-4 in 2000 draws; at 0.5 and n = 24 its minimum
# was 0.12).
SPREAD = 0.5


# ---- small shared helpers --------------------------------------------------------------------


def _max_abs(x) -> float:
    return float(np.max(np.abs(to_numpy(x))))


def _gap(a, b) -> float:
    """The largest entry of |a − b|, on the host."""
    return float(np.max(np.abs(to_numpy(a) - to_numpy(b))))


def _transpose(x):
    return namespace(x).matrix_transpose(x)


def _score_symbols():
    """A generic 3×3 score matrix w_ij = q_i·k_j (no symmetry assumed: biases are included)."""
    return sp.Matrix(N, N, lambda i, j: sp.Symbol(f"w{i}{j}", real=True))


def _symmetric_symbols(prefix):
    return sp.Matrix(N, N, lambda i, j: sp.Symbol(f"{prefix}{min(i, j)}{max(i, j)}", real=True))


def _canonical(expr):
    """A normal form for rational functions of exponentials: exp(a + b) is split into exp(a)exp(b), then cancelled."""
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(_canonical)
    return sp.cancel(sp.expand(expr))


def _rownorm(kernel: sp.Matrix) -> sp.Matrix:
    sums = [sum(kernel[i, j] for j in range(kernel.cols)) for i in range(kernel.rows)]
    return sp.Matrix(kernel.rows, kernel.cols, lambda i, j: kernel[i, j] / sums[i])


def _context(rng, n, D, backend, spread=1.0):
    return to_backend(spread * rng.standard_normal((n, D)), backend)


# ---- 1. the exact split and the distance form --------------------------------------------------


def _derive_distance_form() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    m = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"M{a}{b}", real=True))
    x = sp.Matrix(N, 2, lambda i, a: sp.Symbol(f"x{i}{a}", real=True))
    m_s, m_a = (m + m.T) / 2, (m - m.T) / 2
    w_form = x * m * x.T
    w = _score_symbols()
    bond, link = (w + w.T) / 2, (w - w.T) / 2
    g = [bond[i, i] for i in range(N)]
    d2 = sp.Matrix(N, N, lambda i, j: g[i] + g[j] - 2 * bond[i, j])
    distance_form = sp.Matrix(
        N, N, lambda i, j: -beta / 2 * d2[i, j] + beta / 2 * g[i] + beta / 2 * g[j] + beta * link[i, j]
    )
    dropped = sp.Matrix(N, N, lambda i, j: -beta / 2 * d2[i, j] + beta / 2 * g[j] + beta * link[i, j])
    exp_bond, exp_link = bond.applyfunc(lambda v: sp.exp(beta * v)), link.applyfunc(lambda v: sp.exp(beta * v))
    head = _rownorm(w.applyfunc(lambda v: sp.exp(beta * v)))
    kept = _rownorm(dropped.applyfunc(sp.exp))
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
            _canonical(w.applyfunc(lambda v: sp.exp(beta * v))),
            _canonical(sp.matrix_multiply_elementwise(exp_bond, exp_link)),
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
            _canonical(kept),
            _canonical(head),
        ),
    ]


def _distance_form_residual(head, X) -> float:
    """Worst relative residual of the split and the distance form of ``head`` on the context ``X``."""
    beta = head.beta
    scores = head.scores(X)
    split = score_split(X, head.W_Q, head.W_K, head.b_Q, head.b_K)
    xp = namespace(scores)
    size = _max_abs(scores)
    bond, link, g, d2 = split
    residual = _gap(bond + link, scores) / size
    # exactness of the symmetry: both parts are built from 𝒲 and 𝒲ᵀ
    residual = max(residual, _max_abs(bond - _transpose(bond)) + _max_abs(link + _transpose(link)))
    factorised = xp.exp(beta * bond) * xp.exp(beta * link) / xp.exp(beta * scores)
    residual = max(residual, _max_abs(factorised - 1.0))
    distance = -0.5 * beta * d2 + 0.5 * beta * g[:, None] + 0.5 * beta * g[None, :] + beta * link
    residual = max(residual, _gap(distance, beta * scores) / (beta * size))
    # the head's own P (softmax of β q·k) against the distance form with the source dropped
    residual = max(residual, _gap(softmax_rows(distance_form_logits(split, beta)), head.operator(X)))
    if head.b_Q is None and head.b_K is None:
        M = head.bilinear_form()
        M_S, M_A = bond_link_split(M)
        residual = max(residual, _gap(M_S + M_A, M) / _max_abs(M))
        residual = max(residual, _gap(X @ M_S @ _transpose(X), bond) / size, _gap(X @ M_A @ _transpose(X), link) / size)
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
    X = _context(rng, n, D, backend, spread=2.0)
    worst = 0.0
    for bias in (False, True):
        head = random_head(rng, D, d_h, bias=bias, backend=backend)
        worst = max(worst, _distance_form_residual(head, X))
    return Verification.from_residual(worst, 1e-12, n=n, D=D, d_h=d_h)


# ---- 2. the bond as a Doob transform -------------------------------------------------------------


def _derive_doob_tilt() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    s = _symmetric_symbols("s")
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
            _canonical(sp.Matrix(N, N, lambda i, j: kernel[i, j] * h[j])),
            _canonical(sp.Matrix(N, N, lambda i, j: sp.exp(-beta * g[i] / 2) * sp.exp(beta * s[i, j]))),
        ),
        claim(
            "diag(Kh)⁻¹ K diag(h) = rownorm exp_⊙(β𝒮): the bond operator is the Doob transform",
            _canonical(doob),
            _canonical(bond_operator),
        ),
        claim(
            "π_i = h_i (Kh)_i = Σ_j e^{β𝒮_ij} = Z_i: the stationary law is the row sum of exp_⊙(β𝒮)",
            _canonical(pi),
            _canonical(sp.Matrix(z)),
        ),
        claim(
            "π_i P_ij = e^{β𝒮_ij} is symmetric (detailed balance)",
            _canonical(sp.diag(*z) * bond_operator),
            _canonical(sp.diag(*z) * bond_operator).T,
        ),
    ]


def _doob_tilt_residual(split, beta) -> float:
    """Worst residual of rownorm exp(β𝒮) = Doob(exp(−(β/2)d²), e^{βg/2}) and π ∝ h ⊙ Kh ∝ exp(β𝒮)𝟏."""
    kernel, h = destination_tilt(split, beta)
    xp = namespace(kernel)
    bond, g = split.bond, split.potential
    op = doob_transform(kernel, h)
    bond_operator = softmax_operator(bond, beta)  # independent: row softmax of β𝒮
    residual = _gap(op.P, bond_operator)
    residual = max(residual, _max_abs(kernel - _transpose(kernel)))
    residual = max(residual, _gap(h, xp.exp(0.5 * beta * (g - xp.max(g)))))
    # π ∝ Z_i = Σ_j e^{β𝒮_ij} (one common shift keeps the exponentials finite)
    z = xp.sum(xp.exp(beta * (bond - xp.max(bond))), axis=1)
    pi_rows = z / xp.sum(z)
    pi_tilt = h * (kernel @ h)
    pi_tilt = pi_tilt / xp.sum(pi_tilt)
    top = _max_abs(pi_rows)
    residual = max(residual, _gap(pi_tilt, pi_rows) / top, _gap(op.stationary, pi_rows) / top)
    residual = max(residual, _gap(pi_rows @ bond_operator, pi_rows) / top)  # stationarity
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
    X = _context(rng, n, D, backend, spread=2.0)
    worst = 0.0
    for bias in (False, True):
        head = random_head(rng, D, d_h, bias=bias, backend=backend)
        split = score_split(X, head.W_Q, head.W_K, head.b_Q, head.b_K)
        worst = max(worst, _doob_tilt_residual(split, head.beta))
    return Verification.from_residual(worst, 1e-12, n=n, D=D, d_h=d_h)


# ---- 3. exact link ⇔ Doob ⇔ reversible; affinity = 2β × holonomy ---------------------------------


def _derive_exact_iff_reversible() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    s = _symmetric_symbols("s")
    phi = sp.Matrix(sp.symbols(f"phi0:{N}", real=True))
    kernel = s.applyfunc(lambda v: sp.exp(beta * v))
    h = phi.applyfunc(lambda v: sp.exp(-beta * v))
    kh = kernel * h
    doob = sp.diag(*kh).inv() * kernel * sp.diag(*h)
    head = _rownorm(sp.Matrix(N, N, lambda i, j: sp.exp(beta * (s[i, j] + phi[i] - phi[j]))))
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
            _canonical(head),
            _canonical(doob),
        ),
        claim("π = h ⊙ Kh satisfies detailed balance: diag(π)P is symmetric", _canonical(flux), _canonical(flux).T),
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
    return max(_gap(head, doob.P), reversibility_residual(head))


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
    X = _context(rng, n, D, backend, spread=SPREAD)
    head = random_head(rng, D, d_h, backend=backend)
    beta = head.beta
    split = score_split(X, head.W_Q, head.W_K)
    phi = to_backend(rng.standard_normal(n), backend)
    exact = exact_link(phi)
    residual = _exact_link_residual(split.bond, exact, phi, beta)
    cycles = triangle_cycles(n)
    residual = max(residual, _max_abs(link_holonomy(exact, cycles)) / _max_abs(exact))
    free = head.operator(X)
    affinity = cycle_affinities(free, cycles)
    residual = max(residual, _gap(affinity, 2 * beta * link_holonomy(split.link, cycles)))
    epsilon_free = reversibility_residual(free)
    if epsilon_free < 0.05 or not is_exact_link(exact) or is_exact_link(split.link):
        residual = math.inf  # the criterion must separate exact from free links, else it proves nothing
    return Verification.from_residual(residual, 1e-11, n=n, cycles=len(cycles), eps_rev_free=round(epsilon_free, 4))


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
    return [
        Step("ℓ(b, a) on 3 tokens, q_i, k_i ∈ ℝ², m = (q + k)/√2, n = (q − k)/√2 (β factored out)", logits(1, 1)),
        claim("ATTN (1, 1): ℓ_ij = q_i·k_j exactly", logits(1, 1), scores.applyfunc(sp.expand)),
        claim(
            "DMAP (0, 0): ℓ_ij + ¼‖m_i − m_j‖² = ½‖m_i‖², a row constant",
            dmap_rest,
            sp.Matrix(N, N, lambda i, j: sp.expand(dot(m[i], m[i]) / 2)),
        ),
        claim(
            "ATAP (1, 0): ℓ_ij + ½d²_ij = g_i = q_i·k_i, a row constant",
            atap_rest,
            sp.Matrix(N, N, lambda i, j: sp.expand(g_attn[i])),
        ),
        Step(
            "so DMAP = softmax(−(β/4)‖m_i − m_j‖²) and ATAP = softmax(−(β/2)d²): symmetric kernels, reversible",
            dmap_shape,
        ),
        claim(
            "DMTN (0, 1): ℓ − ℓᵀ = q_i·k_j − k_i·q_j, the free link survives",
            (dmtn - dmtn.T).applyfunc(sp.expand),
            (scores - scores.T).applyfunc(sp.expand),
        ),
        claim(
            "parameter level: M_S = ½W_MW_Mᵀ − ½W_NW_Nᵀ",
            (w_m * w_m.T / 2 - w_n * w_n.T / 2).applyfunc(sp.expand),
            ((M + M.T) / 2).applyfunc(sp.expand),
        ),
        claim(
            "𝒲^DMTN = ½W_MW_Mᵀ + M_A = M + ½W_NW_Nᵀ",
            (w_m * w_m.T / 2 + (M - M.T) / 2).applyfunc(sp.expand),
            (M + w_n * w_n.T / 2).applyfunc(sp.expand),
        ),
    ]


def _corner_residual(X, W_Q, W_K, beta) -> tuple[float, dict]:
    """Worst residual of the corner formulas on a context, and ε_rev of each corner's operator."""
    xp = namespace(X)
    q, k = X @ W_Q, X @ W_K
    residual = 0.0
    if not bool(xp.all(operator_logits(q, k, "ATTN", beta=beta) == beta * (q @ _transpose(k)))):
        residual = math.inf  # the ATTN corner is β q·k bit for bit
    m = (q + k) / SQRT2
    squared_m = xp.sum((m[:, None, :] - m[None, :, :]) ** 2, axis=-1)
    residual = max(residual, _gap(family_operator(q, k, "DMAP", beta=beta), softmax_operator(-squared_m / 4, beta)))
    g = xp.sum(q * k, axis=1)
    d2 = g[:, None] + g[None, :] - (q @ _transpose(k) + k @ _transpose(q))
    residual = max(residual, _gap(family_operator(q, k, "ATAP", beta=beta), softmax_operator(-d2 / 2, beta)))
    W_N = (W_Q - W_K) / SQRT2
    dmtn_form = W_Q @ _transpose(W_K) + 0.5 * W_N @ _transpose(W_N)
    S_op, A_op = effective_form(W_Q, W_K, "DMTN")
    residual = max(residual, _gap(S_op + A_op, dmtn_form) / _max_abs(dmtn_form))
    dmtn_logits = beta * (X @ dmtn_form @ _transpose(X))
    residual = max(residual, _gap(operator_logits(q, k, "DMTN", beta=beta), dmtn_logits) / _max_abs(dmtn_logits))
    epsilon = {name: reversibility_residual(family_operator(q, k, name, beta=beta)) for name in OPERATORS}
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
    X = _context(rng, n, D, backend, spread=SPREAD)
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


# ---- 5. multi-head attention is one connection step ----------------------------------------------


def _derive_mha_step() -> list[Step]:
    n, d, H = 2, 2, 2
    a = [sp.Matrix(n, n, lambda i, j, h=h: sp.Symbol(f"a{h}_{i}{j}", positive=True)) for h in range(H)]
    M = [sp.Matrix(d, d, lambda r, c, h=h: sp.Symbol(f"M{h}_{r}{c}", real=True)) for h in range(H)]
    X = sp.Matrix(n, d, lambda i, r: sp.Symbol(f"x{i}{r}", real=True))
    fill = sp.Matrix(d, d, lambda r, c: sp.Symbol(f"F{r}{c}", real=True))

    def effective(heads, inactive=()):
        a_eff = sum(heads, sp.zeros(n, n)) / H
        o_eff = {}
        for i in range(n):
            for j in range(n):
                total = sum(heads[h][i, j] for h in range(H))
                o_eff[i, j] = (
                    fill
                    if (i, j) in inactive
                    else sum((heads[h][i, j] * M[h] for h in range(H)), sp.zeros(d, d)) / total
                )
        return a_eff, o_eff

    def walk(a_eff, o_eff):
        return sp.Matrix.vstack(
            *[sum((a_eff[i, j] * X[j, :] * o_eff[i, j] for j in range(n)), sp.zeros(1, d)) for i in range(n)]
        )

    def vec_r(Y):
        return Y.reshape(Y.rows * Y.cols, 1)

    def blocks(a_eff, o_eff):
        return sp.Matrix(sp.BlockMatrix([[a_eff[i, j] * o_eff[i, j].T for j in range(n)] for i in range(n)]))

    mha = sum((a[h] * X * M[h] for h in range(H)), sp.zeros(n, d))
    a_eff, o_eff = effective(a)
    causal = [heads.subs({heads[0, 1]: 0}) for heads in a]
    c_eff, c_o = effective(causal, inactive={(0, 1)})
    mha_causal = sum((causal[h] * X * M[h] for h in range(H)), sp.zeros(n, d))
    kron = sum((sp.kronecker_product(a[h], M[h].T) for h in range(H)), sp.zeros(n * d, n * d))
    return [
        Step(
            "2 heads on 2 tokens, d = 2: A^(h) > 0, value-output maps M_h, O^eff_ij = Σ_h A^(h)_ij M_h / Σ_h A^(h)_ij",
            o_eff[0, 1],
        ),
        claim(
            "MHA(X) = Σ_h A^(h) X M_h = H·𝒯(A_eff, O^eff)X",
            (H * walk(a_eff, o_eff)).applyfunc(sp.cancel),
            mha.applyfunc(sp.expand),
        ),
        claim(
            "with a causal mask (A^(h)_01 = 0 in every head) the inactive transport is free (F) and it still holds",
            (H * walk(c_eff, c_o)).applyfunc(sp.cancel),
            mha_causal.applyfunc(sp.expand),
        ),
        claim(
            "block form: T_ij = A_ij O_ijᵀ gives vec_r(𝒯X) = T vec_r(X)",
            (blocks(a_eff, o_eff) * vec_r(X)).applyfunc(sp.cancel),
            vec_r(walk(a_eff, o_eff)).applyfunc(sp.cancel),
        ),
        claim(
            "H·T(A_eff, O^eff) = Σ_h A^(h) ⊗ M_hᵀ",
            (H * blocks(a_eff, o_eff)).applyfunc(sp.cancel),
            kron.applyfunc(sp.expand),
        ),
    ]


def _mha_step_residual(A_heads, M_heads, X, reference) -> float:
    """Relative residual of H·𝒯(A_eff, O^eff)X against ``reference`` = MHA(X), and of the block form."""
    H = int(A_heads.shape[0])
    A_eff, O_eff = effective_connection(A_heads, M_heads)
    step = H * propagate(A_eff, O_eff, X)
    residual = max(relative_error(step, reference), relative_error(connection_step(A_heads, X, M_heads), reference))
    T = block_operator(A_eff, O_eff)
    vec = namespace(X).reshape(X, (-1,))  # row stacking vec_r
    residual = max(residual, relative_error(T @ vec, namespace(X).reshape(step, (-1,)) / H))
    A_host, M_host = to_numpy(A_heads), to_numpy(M_heads)
    kron = sum(np.kron(A_host[h], M_host[h].T) for h in range(H))  # T_MHA from its definition, on the host
    return max(residual, relative_error(H * to_numpy(T), kron))


def _head_loop(mha, X):
    """Σ_h A^(h) X W_V^h W_O^h head by head, on the host in float64 (the oracle)."""
    A = to_numpy(mha.attention(X))
    Xh, W_V, W_O = to_numpy(X), to_numpy(mha.W_V), to_numpy(mha.W_O)
    return sum(A[h] @ (Xh @ W_V[h]) @ W_O[h] for h in range(mha.n_heads))


def _verify_mha_step(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the head-by-head loop Σ_h A^(h)(XW_V^h)W_O^h on the host (no fused maps, no effective
    connection) for MHA(X), MultiHeadAttention.linear_part and connection_step; Σ_h A^(h) ⊗ M_hᵀ (numpy.kron)
    for the block matrix.  Full and causal heads; with biases, MHA(X) − H·𝒯X must be the constant row
    Σ_h b_V^h W_O^h + b_O.

    Tolerance 1e-12 relative (Frobenius): sums of H products of O(1) matrices (observed ≈ 1e-16).
    """
    n, D, H, d_h = by_scale(scale, (6, 8, 2, 4), (32, 32, 4, 8))
    X = _context(rng, n, D, backend)
    worst = 0.0
    for causal in (False, True):
        mha = random_multihead(rng, H, D, d_h, causal=causal, backend=backend)
        reference = _head_loop(mha, X)
        worst = max(worst, _mha_step_residual(mha.attention(X), mha.value_output_maps(), X, reference))
        worst = max(worst, relative_error(mha(X), reference), relative_error(mha.linear_part(X), reference))
    biased = random_multihead(rng, H, D, d_h, bias=True, backend=backend)
    A_eff, O_eff = effective_connection(biased.attention(X), biased.value_output_maps())
    offset = to_numpy(biased(X)) - H * to_numpy(propagate(A_eff, O_eff, X))
    b_V, W_O = to_numpy(biased.b_V), to_numpy(biased.W_O)
    row = sum(b_V[h] @ W_O[h] for h in range(H)) + to_numpy(biased.b_O)
    worst = max(worst, relative_error(offset, np.broadcast_to(row, offset.shape)))
    return Verification.from_residual(worst, 1e-12, n=n, D=D, heads=H)


# ---- 6. the connection energy is the quadratic form of the generator --------------------------------


def _plane_rotation(name):
    """A rotation [[c, s], [−s, c]] of the plane with symbols (c, s); orthogonal on the circle c² + s² = 1."""
    c, s = sp.symbols(f"c_{name} s_{name}", real=True)
    return sp.Matrix([[c, s], [-s, c]]), (c, s)


def _on_circles(expr, circles):
    """The remainder of a polynomial modulo every c² + s² − 1 (lex order, s first: a Gröbner basis)."""
    gens = [s for _, s in circles] + [c for c, _ in circles]
    _, remainder = sp.reduced(sp.expand(expr), [c**2 + s**2 - 1 for c, s in circles], *gens, order="lex")
    return remainder


def _derive_energy() -> list[Step]:
    n, d = 2, 2
    X = sp.Matrix(n, d, lambda i, r: sp.Symbol(f"x{i}{r}", real=True))

    def form_minus_energy(A, O, pi, Y=X):
        T = sp.Matrix(sp.BlockMatrix([[A[i, j] * O[i, j].T for j in range(n)] for i in range(n)]))
        y = Y.reshape(n * d, 1)
        weights = sp.diag(*[pi[i] for i in range(n) for _ in range(d)])
        form = (y.T * weights * (sp.eye(n * d) - T) * y)[0]
        return form - energy(A, O, pi, Y)

    def energy(A, O, pi, Y):
        gaps = [sum(v**2 for v in Y[i, :] - Y[j, :] * O[i, j]) for i in range(n) for j in range(n)]
        return sum(pi[i] * A[i, j] * gaps[i * n + j] for i in range(n) for j in range(n)) / 2

    A = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"A{i}{j}", nonnegative=True))
    O = {
        (i, j): sp.Matrix(d, d, lambda r, c, i=i, j=j: sp.Symbol(f"O{i}{j}_{r}{c}", real=True))
        for i in range(n)
        for j in range(n)
    }
    pi = sp.symbols(f"pi0:{n}", positive=True)
    rows = [sum(A[i, j] for j in range(n)) for i in range(n)]
    remainder = (
        sum(pi[i] * (1 - rows[i] / 2) * sum(v**2 for v in X[i, :]) for i in range(n))
        - sum(pi[i] * A[i, j] * sum(v**2 for v in X[j, :] * O[i, j]) for i in range(n) for j in range(n)) / 2
    )
    p = [sp.symbols(f"p{i}0 p{i}1", nonnegative=True) for i in range(3)]
    three = sp.Matrix([[p[i][0], p[i][1], 1 - p[i][0] - p[i][1]] for i in range(3)])  # a generic Markov operator
    pi3 = sp.Matrix([sp.symbols("pi0:3", positive=True)])
    norms = sp.symbols("nx0:3", nonnegative=True)  # ‖X_j‖² = ‖X_j O_ij‖²
    general_gap = (
        sum(pi3[i] * norms[i] / 2 for i in range(3))
        - sum(pi3[i] * three[i, j] * norms[j] for i in range(3) for j in range(3)) / 2
    )
    flow = pi3 * three
    stationarity_gap = sum((pi3[j] - flow[j]) * norms[j] for j in range(3)) / 2
    a, b = sp.symbols("a b", positive=True)
    stochastic = sp.Matrix([[1 - a, a], [b, 1 - b]])
    rotations, circles = {}, []
    for i in range(n):
        for j in range(n):
            rotations[i, j], circle = _plane_rotation(f"{i}{j}")
            circles.append(circle)
    frames, frame_circles = zip(*(_plane_rotation(f"V{i}") for i in range(n)), strict=True)
    flat = {(i, j): frames[j].T * frames[i] for i in range(n) for j in range(n)}  # V_j⁻¹ V_i for V orthogonal
    section = sp.Matrix.vstack(*[sp.Matrix(1, d, sp.symbols("k0:2", real=True)) * frames[i] for i in range(n)])
    return [
        Step("2 tokens, d = 2: ⟨X, (I − T)X⟩_π versus ℰ_c(X) = ½ Σ π_i A_ij ‖X_i − X_j O_ij‖²", A),
        claim(
            "for any A, O, π the gap is Σ_i π_i(1 − r_i/2)‖X_i‖² − ½ Σ π_i A_ij ‖X_j O_ij‖², r = A𝟏",
            sp.expand(form_minus_energy(A, O, pi)),
            sp.expand(remainder),
        ),
        claim(
            "a rotation is an isometry, ‖x R‖² = ‖x‖² (c² + s² = 1), so an orthogonal O_ij drops out of ‖X_j O_ij‖²",
            _on_circles(sum(v**2 for v in X[0, :] * rotations[0, 1]) - sum(v**2 for v in X[0, :]), circles),
        ),
        claim(
            "3 tokens, A row-stochastic (r = 𝟏), isometric O: the gap is ½ Σ_j (π − πᵀA)_j ‖X_j‖², zero iff π is "
            "stationary (no reversibility needed)",
            sp.expand(general_gap),
            sp.expand(stationarity_gap),
        ),
        claim(
            "check on 2 tokens, A = [[1 − a, a], [b, 1 − b]]: π = (b, a) is stationary",
            sp.Matrix([[b, a]]) * stochastic,
            sp.Matrix([[b, a]]),
        ),
        claim(
            "with rotations O_ij (c² + s² = 1 on every edge) the gap vanishes: ⟨X, L_mix X⟩_π = ℰ_c(X)",
            _on_circles(form_minus_energy(stochastic, rotations, (b, a)), circles),
        ),
        claim(
            "flat connection O_ij = V_j⁻¹V_i (V_i rotations) and parallel section X_i = kV_i: ℰ_c = 0",
            _on_circles(energy(stochastic, flat, (b, a), section), frame_circles),
        ),
    ]


def _random_orthogonal(rng, count, d):
    """Haar-distributed orthogonal matrices: QR of Gaussians with the sign of R's diagonal fixed."""
    q, r = np.linalg.qr(rng.standard_normal((count, d, d)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[:, None, :]


def _energy_residual(A, O, X, pi=None) -> float:
    """|⟨X, L_mix X⟩_π − ℰ_c(X)| and |⟨X, L_sym X⟩_π − ℰ_c(X)| relative to ⟨X, X⟩_π (π: stationary by default)."""
    gen = mixing_generator(A, O, pi)
    xp = namespace(X)
    n, d = (int(s) for s in X.shape)
    x = xp.reshape(X, (-1,))
    weight = xp.reshape(xp.broadcast_to(gen.pi[:, None], (n, d)), (n * d,))
    norm = float(xp.sum(weight * x * x))
    energy = float(connection_energy(A, O, X, gen.pi))
    form = float(xp.sum(weight * x * (gen.L_mix @ x)))
    form_sym = float(xp.sum(weight * x * (gen.L_sym @ x)))
    return max(abs(form - energy), abs(form_sym - energy)) / norm


def _verify_energy(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the quadratic form ⟨X, L_mix X⟩_π of the dense generator (mixing_generator) against the edge sum
    ℰ_c (connection_energy), for a random nonreversible row-stochastic A, its stationary π and Haar-random
    orthogonal transports; ℰ_c = 0 and L_mix X = 0 on a parallel section of a flat connection
    (gauge_transform of the identity).  Controls: scaling the transports by 1.1 (no longer isometric) must
    break the identity by > 1e-3 and A must be nonreversible (ε_rev > 0.05), else the check fails.

    Tolerance 1e-12 relative to ⟨X, X⟩_π: sums of n²d products (observed ≈ 1e-16).
    """
    n, d = by_scale(scale, (6, 3), (40, 8))
    A_np = rng.random((n, n)) ** 3  # skewed weights: a visibly nonreversible walk
    A_np /= A_np.sum(axis=1, keepdims=True)
    A = to_backend(A_np, backend)
    O = to_backend(_random_orthogonal(rng, n * n, d).reshape(n, n, d, d), backend)
    X = _context(rng, n, d, backend)
    residual = _energy_residual(A, O, X)
    V = to_backend(_random_orthogonal(rng, n, d), backend)
    xp = namespace(A)
    identity = xp.broadcast_to(xp.eye(d, dtype=A.dtype), (n, n, d, d))
    flat = gauge_transform(identity, V)  # O_ij = V_j⁻¹ V_i
    c = to_backend(rng.standard_normal((1, d)), backend)
    section = xp.reshape(c @ V, (n, d))  # X_i = c V_i
    scale_ = float(xp.sum(section**2))
    residual = max(residual, float(connection_energy(A, flat, section)) / scale_)
    L = connection_laplacian(A, flat)
    residual = max(residual, _max_abs(L @ xp.reshape(section, (-1,))) / math.sqrt(scale_))
    if _energy_residual(A, 1.1 * O, X) < 1e-3 or reversibility_residual(A) < 0.05:
        residual = math.inf  # the hypotheses must matter, and the walk must not be reversible
    return Verification.from_residual(residual, 1e-12, n=n, d=d)


# ---- 7. the ring with holonomy: closed-form spectrum and gauge invariance ----------------------------


def _ring_spectrum(n, theta) -> np.ndarray:
    k = np.arange(n)
    return np.sort(np.concatenate([2 - 2 * np.cos((2 * np.pi * k + s * theta) / n) for s in (1.0, -1.0)]))


def _ring_spectrum_residual(L, n, theta) -> float:
    """The largest |eig(L) − {2 − 2cos((2πk ± θ)/n)}| for a symmetric ring Laplacian ``L``."""
    return float(np.max(np.abs(np.linalg.eigvalsh(to_numpy(L)) - _ring_spectrum(n, theta))))


def _power_traces(M, d):
    """tr(Mᵏ), k = 1..d: they fix the spectrum of a d×d matrix (Newton's identities)."""
    xp = namespace(M)
    power, traces = M, []
    for _ in range(d):
        traces.append(float(xp.sum(xp.linalg.diagonal(power))))
        power = power @ M
    return np.array(traces)


def _random_frames(rng, count, d):
    """Random invertible, non-orthogonal frames U diag(σ) Wᵀ with U, W Haar and σ ∈ [½, 2]: cond(V) ≤ 4."""
    sigma = np.exp(rng.uniform(-math.log(2.0), math.log(2.0), (count, 1, d)))
    return (_random_orthogonal(rng, count, d) * sigma) @ _random_orthogonal(rng, count, d)


def _holonomy_trace_gap(O, other, cycles) -> float:
    """Worst relative difference of tr(Holᵏ), k = 1..d, between two transport fields, over ``cycles``."""
    d = int(O.shape[-1])
    worst = 0.0
    for cycle in cycles:
        before, after = holonomy(O, cycle), holonomy(other, cycle)
        size = _max_abs(before)
        scale_ = np.array([max(size**k, 1e-300) * d ** (k - 1) for k in range(1, d + 1)])
        worst = max(worst, float(np.max(np.abs(_power_traces(after, d) - _power_traces(before, d)) / scale_)))
    return worst


def _derive_holonomy() -> list[Step]:
    n = 3
    theta = sp.Symbol("theta", real=True)
    c, s = sp.symbols("c s", real=True)  # cos(θ/n), sin(θ/n): every claim is linear in them
    rotation = sp.Matrix([[c, s], [-s, c]])
    inverse = sp.Matrix([[c, -s], [s, c]])
    T = sp.zeros(2 * n, 2 * n)
    for m in range(n):
        nxt = (m + 1) % n
        T[2 * nxt : 2 * nxt + 2, 2 * m : 2 * m + 2] = rotation.T  # block A_ij O_ijᵀ, O[m+1, m] = R(θ/n)
        T[2 * m : 2 * m + 2, 2 * nxt : 2 * nxt + 2] = inverse.T
    L = 2 * sp.eye(2 * n) - T
    steps = [Step("ring C_3, uniform gauge: O[m+1, m] = R(θ/3), L = 2I − T (unnormalised)", L)]
    for k in range(n):
        omega = sp.exp(2 * sp.pi * sp.I * k / n)
        for sign, u in ((1, sp.Matrix([[1, sp.I]])), (-1, sp.Matrix([[1, -sp.I]]))):
            x = sp.Matrix.vstack(*[omega**m * u for m in range(n)]).reshape(2 * n, 1)
            eigenvalue = 2 - 2 * sp.expand_trig(sp.cos(2 * sp.pi * k / n + sign * sp.Symbol("phi")))
            eigenvalue = eigenvalue.subs({sp.cos(sp.Symbol("phi")): c, sp.sin(sp.Symbol("phi")): s})
            steps.append(
                claim(
                    f"Fourier mode k = {k} times u = (1, {'i' if sign > 0 else '−i'}): "
                    f"eigenvalue 2 − 2cos((2π·{k} {'+' if sign > 0 else '−'} θ)/3)",
                    (L * x).applyfunc(lambda v: sp.expand(sp.expand_complex(v))),
                    (eigenvalue * x).applyfunc(lambda v: sp.expand(sp.expand_complex(v))),
                )
            )
    k, size = sp.symbols("k n", integer=True, positive=True)
    steps.append(
        claim(
            "θ ↦ θ + 2π maps the eigenvalue of k to that of k + 1 (mod n): the spectrum depends on θ mod 2π",
            2 - 2 * sp.cos((2 * sp.pi * k + theta + 2 * sp.pi) / size),
            2 - 2 * sp.cos((2 * sp.pi * (k + 1) + theta) / size),
        )
    )
    # Noncommutative symbols: the frames cancel pairwise, V_j V_j⁻¹ = 1, for transports of any size d.
    V = sp.symbols("V0:3", commutative=False)
    O = {edge: sp.Symbol(f"O{edge[0]}{edge[1]}", commutative=False) for edge in ((1, 0), (2, 1), (0, 2))}
    moved = {(i, j): V[j] ** -1 * O[i, j] * V[i] for (i, j) in O}
    frame, hol = sp.Matrix(2, 2, sp.symbols("W0:4")), sp.Matrix(2, 2, sp.symbols("H0:4"))
    conjugate = frame.inv() * hol * frame
    steps += [
        claim(
            "gauge O'_ij = V_j⁻¹ O_ij V_i conjugates the holonomy of 0→1→2→0: Hol' = V_0⁻¹ Hol V_0",
            moved[1, 0] * moved[2, 1] * moved[0, 2],
            V[0] ** -1 * O[1, 0] * O[2, 1] * O[0, 2] * V[0],
        ),
        claim(
            "so its spectrum is gauge invariant (d = 2: trace and determinant of W⁻¹HW)",
            sp.Matrix([sp.cancel(conjugate.trace()), sp.cancel(conjugate.det())]),
            sp.Matrix([hol.trace(), hol.det()]),
        ),
    ]
    return steps


def _verify_holonomy(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the closed-form ring spectrum {2 − 2cos((2πk ± θ)/n)} (discrete Aharonov–Bohm ring) for the
    one-edge and the uniform gauge, at θ and θ + 2π, and Hol = R(θ) around the ring; gauge invariance of
    tr(Holᵏ), k = 1..d (Newton's identities: the whole spectrum) under random invertible frames V, on the
    ring and on a random (non-orthogonal) connection of the complete graph.

    Tolerance 1e-11: a symmetric eigenproblem of size 2n (≈ 1e-14 at n = 100), and holonomies that are products
    of up to n = 100 transports with frames of cond(V) ≤ 4 (rounding ≲ n·ε·cond(V)² ≈ 4e-13; observed ≈ 1e-14).
    Random Gaussian frames are avoided on purpose: their occasional cond(V) ~ 1e3 makes the rounding, not the
    identity, the measured quantity.
    """
    n = by_scale(scale, 7, 100)
    residual = 0.0
    for theta in (0.7, 0.7 + 2 * np.pi, -2.1, np.pi):
        for uniform in (False, True):
            A_np, O_np = cycle_connection(n, theta, uniform=uniform)
            A, O = to_backend(A_np, backend), to_backend(O_np, backend)
            residual = max(residual, _ring_spectrum_residual(connection_laplacian(A, O, kind="unnormalized"), n, theta))
            ring = (*range(n), 0)
            rotation = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
            residual = max(residual, _gap(holonomy(O, ring), rotation))
            V = to_backend(_random_frames(rng, n, 2), backend)
            residual = max(residual, _holonomy_trace_gap(O, gauge_transform(O, V), [ring]))
    m, d = by_scale(scale, (5, 3), (12, 6))
    O = to_backend(rng.standard_normal((m, m, d, d)) / math.sqrt(d), backend)
    V = to_backend(_random_frames(rng, m, d), backend)
    cycles = [(0, i, j, 0) for i, j in ((1, 2), (2, 4), (3, 1))] + [(*range(m), 0)]
    residual = max(residual, _holonomy_trace_gap(O, gauge_transform(O, V), cycles))
    return Verification.from_residual(residual, 1e-11, n=n, thetas=4)


# ---- 8. diagnostics on closed-form heads ------------------------------------------------------------


def _derive_uniform_and_shift() -> list[Step]:
    uniform = [-sum(sp.Rational(1, r) * sp.log(sp.Rational(1, r)) for _ in range(r)) for r in range(1, N + 1)]
    cycle = sp.Matrix(N, N, lambda i, j: 1 if j == (i + 1) % N else 0)
    pi = sp.Matrix([[sp.Rational(1, N)] * N])
    flux = sp.diag(*pi) * cycle
    epsilon2 = sum(v**2 for v in flux - flux.T) / sum(v**2 for v in flux)
    F = sp.Matrix(N, N, lambda i, j: sp.Symbol(f"F{i}{j}", nonnegative=True))
    shift = sp.Matrix(N, N, lambda i, j: 1 if j == max(i - 1, 0) else 0)
    return [
        claim("a uniform row over n = 3 keys has entropy log 3 (W_Q = 0: all logits vanish)", uniform[-1], sp.log(3)),
        claim(
            "causal uniform rows: H_i = log(i + 1)", sp.Matrix(uniform), sp.Matrix([sp.log(i + 1) for i in range(N)])
        ),
        claim(
            "the hard shift head P_i,i−1 = 1 has previous-token score 1",
            sum(shift[i, i - 1] for i in range(1, N)) / (N - 1),
            1,
        ),
        claim("the one-way 3-cycle is stationary for the uniform π", pi * cycle, pi),
        claim("its flux has no reciprocated edge, so ε_rev² = ‖F − Fᵀ‖²/‖F‖² = 2", epsilon2, 2),
        claim(
            "for any flux ‖F − Fᵀ‖² = 2‖F‖² − 2Σ F_ij F_ji ≤ 2‖F‖² (F ≥ 0), so ε_rev ≤ √2",
            sp.expand(sum(v**2 for v in F - F.T)),
            sp.expand(2 * sum(v**2 for v in F) - 2 * sum(F[i, j] * F[j, i] for i in range(N) for j in range(N))),
        ),
    ]


def _shift_head(n, backend):
    """A causal hard previous-token head: one-hot positions, q_i = 1000 e_i, k_j = e_{j+1}, β = 1.

    The logit of the previous token exceeds every other by 1000, so e^{−1000} underflows to 0 and the
    attention is the shift exactly (row 0 sees only itself).
    """
    X = to_backend(np.eye(n), backend)
    W_Q = to_backend(1000.0 * np.eye(n), backend)
    W_K = to_backend(np.eye(n, k=1), backend)  # row j → column j + 1
    return AttentionHead(W_Q, W_K, beta=1.0, causal=True), X


def _diagnostics_residual(P_uniform, P_causal, P_shift, P_cycle) -> float:
    n = int(P_uniform.shape[-1])
    residual = _max_abs(row_entropy(P_uniform) - math.log(n))
    causal_reference = np.log(np.arange(1, n + 1))
    residual = max(
        residual, _gap(row_entropy(P_causal), causal_reference), _gap(uniform_entropy(n, True), causal_reference)
    )
    residual = max(residual, abs(previous_token_score(P_shift) - 1.0), abs(effective_neighbours(P_shift) - 1.0))
    return max(residual, abs(reversibility_residual(P_cycle) - SQRT2))


def _verify_uniform_and_shift(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: closed forms.  A head with W_Q = 0 has entropy log n per row (causal: log(i + 1)); a hard shift
    head (built from weights, see _shift_head) has previous-token score 1 and e^{H̄} = 1; the one-way cycle
    i → i + 1 has ε_rev = √2; random heads at β, 4β and 16β stay within ε_rev ≤ √2.

    Tolerance 1e-12 absolute: an entropy sums n terms of size log(n)/n (error ≲ n·ε·log n ≈ 3e-13 at
    n = 256); the shift head is exact (e^{−1000} = 0).
    """
    n, D, d_h = by_scale(scale, (8, 6, 3), (256, 32, 8))
    X = _context(rng, n, D, backend)
    W_K = to_backend(rng.standard_normal((D, d_h)), backend)
    W_Q = to_backend(np.zeros((D, d_h)), backend)
    uniform = AttentionHead(W_Q, W_K).operator(X)
    causal = AttentionHead(W_Q, W_K, causal=True).operator(X)
    shift, positions = _shift_head(n, backend)
    cycle = to_backend(np.roll(np.eye(n), 1, axis=1), backend)
    residual = _diagnostics_residual(uniform, causal, shift.operator(positions), cycle)
    head = random_head(rng, D, d_h, backend=backend)
    largest = max(reversibility_residual(softmax_rows(factor * head.logits(X))) for factor in (1.0, 4.0, 16.0))
    residual = max(residual, largest - SQRT2)
    return Verification.from_residual(residual, 1e-12, n=n, eps_rev_max=round(largest, 4))


# ---- the catalogue ------------------------------------------------------------------------------------

SOURCE_SPLIT = "Attention Geometry §7, Table 4 [SEED split, DERIVED distance form]; attention-geometry-math §A.7"
SOURCE_CONNECTION = (
    "From Self-Attention to Connection Laplacian §3–§5 [RECON of the displays]; attention-geometry-math §B"
)

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
    Identity(
        name="attention.family.corners",
        area="attention",
        statement=r"\ell^{\mathrm{ATTN}} = \beta q_i\cdot k_j,\ \mathsf P^{\mathrm{DMAP}} = \operatorname{softmax}(-\tfrac\beta4\lVert m_i - m_j\rVert^2),"
        r"\ \mathsf P^{\mathrm{ATAP}} = \operatorname{softmax}(-\tfrac\beta2 d^2),\ \mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top;"
        r"\ \varepsilon_{\mathrm{rev}} = \rho_{\mathrm{skew}} = 0\ \text{for DMAP, ATAP}",
        source="Attention Geometry §7, §10, Tables 1 and 4 [CODE nanochat parameterisation, DERIVED corollaries]; "
        'attention-geometry-math §A.7 "The four parameterisations", §A.10 (ε_rev, ρ_skew) [RECON]',
        derive=_derive_corners,
        verify=_verify_corners,
    ),
    Identity(
        name="attention.connection.mha_step",
        area="attention",
        statement=r"\operatorname{MHA}(X) = \sum_h A^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X,"
        r"\ \operatorname{vec}^r(\mathcal T X) = T(A, O)\operatorname{vec}^r(X),\ H\,T(A_{\mathrm{eff}}, O^{\mathrm{eff}}) = \sum_h A^{(h)}\otimes M_h^\top",
        source=SOURCE_CONNECTION + ".2–§B.3, Eqs. (4), (8)–(10)",
        derive=_derive_mha_step,
        verify=_verify_mha_step,
    ),
    Identity(
        name="attention.connection.energy",
        area="attention",
        statement=r"\langle X, L_{\mathrm{mix}}X\rangle_\pi = \langle X, L_{\mathrm{sym}}X\rangle_\pi = \mathcal E_c(X)"
        r" = \tfrac12\sum_{ij}\pi_iA_{ij}\lVert X_i - X_jO_{ij}\rVert^2\ (A\mathbf 1 = \mathbf 1,\ \pi^\top A = \pi^\top,\ O_{ij}\in O(d))",
        source=SOURCE_CONNECTION + ".4, Eq. (14) [RECON energy, DERIVED identity and hypotheses]",
        derive=_derive_energy,
        verify=_verify_energy,
    ),
    Identity(
        name="attention.connection.holonomy",
        area="attention",
        statement=r"\operatorname{spec}(2I - T)_{C_n,\theta} = \{2 - 2\cos\tfrac{2\pi k\pm\theta}{n}\},\ "
        r"\mathrm{Hol}(V_j^{-1}O_{ij}V_i) = V_{i_0}^{-1}\mathrm{Hol}(O)V_{i_0}",
        source="Discrete Aharonov–Bohm ring (Kenyon 2011; Singer–Wu 2012) [DERIVED oracle]; From Self-Attention to "
        "Connection Laplacian §6 [RECON]; attention-geometry-math §B.2, §B.6",
        derive=_derive_holonomy,
        verify=_verify_holonomy,
    ),
    Identity(
        name="attention.diagnostics.uniform_and_shift",
        area="attention",
        statement=r"H_i(\text{uniform}) = \log n\ (\text{causal: }\log(i+1)),\ s_{\mathrm{prev}}(\text{shift}) = e^{\bar H}(\text{shift}) = 1,"
        r"\ \varepsilon_{\mathrm{rev}}(\text{one-way cycle}) = \sqrt2 \ge \varepsilon_{\mathrm{rev}}",
        source="Attention Geometry Table 1 [RECON ε_rev, e^{H̄}]; attention-geometry-math §A.10; ISA ML01 seed (uniform "
        "entropy); Olsson et al. 2022 (previous-token heads)",
        derive=_derive_uniform_and_shift,
        verify=_verify_uniform_and_shift,
    ),
]
