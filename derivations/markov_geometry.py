r"""Geometry read off a Markov operator: Doob transforms, Γ and Γ₂, currents, cycles, curvature.

Source: Attention Geometry §2, §4, §5, §6, §7, §8 (book/reference.md §A.2, §A.4–A.8).  Each
identity is derived symbolically on a 3-state chain where sympy can, and checked numerically on
samples and graphs, dense and sparse.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import scipy.sparse
import sympy as sp

from workbench.backend import namespace, to_backend, to_numpy
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.markov import (
    MarkovOperator,
    SwissRoll,
    bakry_emery_curvature,
    beurling_deny_split,
    carre_du_champ,
    circulation,
    cycle_affinities,
    doob_transform,
    gamma2,
    gauge_gradients,
    gauss_kernel,
    gauss_kernel_sparse,
    hatano_nelson,
    hessian_form,
    hodge_split,
    kolmogorov_residual,
    softmax_operator,
    stationary_current,
)

from ._common import as_float, by_scale

N = 3  # states in the symbolic derivations


def _symmetric_kernel_symbols():
    return sp.Matrix(N, N, lambda i, j: sp.Symbol(f"K{min(i, j)}{max(i, j)}", positive=True))


def _stochastic_symbols():
    """A generic 3-state Markov operator: rows (p_i0, p_i1, 1 − p_i0 − p_i1)."""
    rows = []
    for i in range(N):
        a, b = sp.symbols(f"p{i}0 p{i}1", positive=True)
        rows.append([a, b, 1 - a - b])
    return sp.Matrix(rows)


def _head(rng, n, beta, exact_link=False):
    """P = rownorm exp(β(S + A)) with S symmetric, A antisymmetric (exact: A_ij = φ_i − φ_j)."""
    s = rng.standard_normal((n, n))
    if exact_link:
        phi = rng.standard_normal(n)
        a = phi[:, None] - phi[None, :]
    else:
        a = rng.standard_normal((n, n))
        a = (a - a.T) / 2
    return softmax_operator((s + s.T) / 2 + a, beta), a


def _indexed_symbols():
    """A symbolic size n, indices i, j, k, and indexed sums over 0 ≤ k < n (general-N proofs)."""
    n = sp.Symbol("n", integer=True, positive=True)
    i, j, k = sp.symbols("i j k", integer=True)
    return n, i, j, k


# ---- Doob transform -------------------------------------------------------------------------


def _derive_doob() -> list[Step]:
    k = _symmetric_kernel_symbols()
    h = sp.Matrix(sp.symbols(f"h0:{N}", positive=True))
    kh = k * h
    p_h = sp.diag(*kh).inv() * k * sp.diag(*h)
    pi = sp.Matrix([h[i] * kh[i] for i in range(N)])
    flux = sp.diag(*pi) * p_h
    gn, gi, gj, gk = _indexed_symbols()
    gx, gh = sp.IndexedBase("x"), sp.IndexedBase("h", positive=True)

    def g_kern(a, b):
        return sp.exp(-((gx[a] - gx[b]) ** 2))

    def g_ph(a, b):
        return g_kern(a, b) * gh[b] / sp.Sum(g_kern(a, gk) * gh[gk], (gk, 0, gn - 1))

    def g_pi(a):
        return gh[a] * sp.Sum(g_kern(a, gk) * gh[gk], (gk, 0, gn - 1))

    return [
        Step(
            "P_h = diag(Kh)⁻¹ K diag(h), K symmetric positive, h > 0",
            p_h,
            statement=r"\mathsf P_h = \operatorname{diag}(\mathsf Kh)^{-1}\,\mathsf K\,\operatorname{diag}(h),\quad (\mathsf P_h)_{ij} = \frac{\mathsf K_{ij}h_j}{(\mathsf Kh)_i},\quad \mathsf K = \mathsf K^\top > 0,\ h > 0",
            because="the Doob h-transform of the kernel K: reweight column j by h_j, then renormalise the rows",
        ),
        claim(
            "rows of P_h sum to 1",
            (p_h * sp.ones(N, 1)).applyfunc(sp.simplify),
            sp.ones(N, 1),
            statement=r"\mathsf P_h\mathbf 1 = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf Kh = \mathbf 1",
            because="Σ_j K_ij h_j = (Kh)_i is exactly the row normaliser",
        ),
        claim(
            "π^(h)_i P_h,ij = h_i K_ij h_j is symmetric (detailed balance)",
            flux.applyfunc(sp.simplify),
            flux.T.applyfunc(sp.simplify),
            statement=r"\pi^{(h)}_i(\mathsf P_h)_{ij} = h_i\mathsf K_{ij}h_j = \pi^{(h)}_j(\mathsf P_h)_{ji},\quad \pi^{(h)} = h\odot\mathsf Kh",
            because="h_i(Kh)_i · K_ij h_j/(Kh)_i = h_i K_ij h_j, symmetric because K is",
        ),
        claim(
            "so π^(h) ∝ h ⊙ Kh is stationary",
            (pi.T * p_h).applyfunc(sp.simplify),
            pi.T.applyfunc(sp.expand),
            statement=r"\pi^{(h)\top}\mathsf P_h = \pi^{(h)\top}",
            because="sum detailed balance over i: Σ_i π_i P_ij = Σ_i π_j P_ji = π_j (rows of P_h sum to 1)",
        ),
        claim(
            "general N: π^(h)_i P_h,ij is symmetric, K_ij = exp(−(x_i − x_j)²), n symbolic",
            g_pi(gi) * g_ph(gi, gj),
            g_pi(gj) * g_ph(gj, gi),
            statement=r"\pi^{(h)}_i(\mathsf P_h)_{ij} = \pi^{(h)}_j(\mathsf P_h)_{ji},\quad (\mathsf Kh)_i = \textstyle\sum_{k=0}^{n-1}\mathsf K_{ik}h_k,\ n\text{ symbolic}",
            because="the normaliser (Kh)_i cancels against π^(h)_i and K_ij = K_ji; sympy decides it with indexed sums over a symbolic n",
            general=True,
        ),
        claim(
            "general N: π^(h) = h ⊙ Kh is stationary, Σ_i π^(h)_i P_h,ij = h_j (Kh)_j, n symbolic",
            sp.Sum(g_pi(gi) * g_ph(gi, gj), (gi, 0, gn - 1)),
            gh[gj] * sp.Sum(g_kern(gj, gi) * gh[gi], (gi, 0, gn - 1)),
            statement=r"\sum_{i=0}^{n-1}\pi^{(h)}_i(\mathsf P_h)_{ij} = h_j\sum_{i=0}^{n-1}\mathsf K_{ji}h_i = \pi^{(h)}_j,\quad n\text{ symbolic}",
            because="each term is h_i K_ij h_j and K_ij = K_ji; sympy decides it as a symbolic sum",
            general=True,
        ),
    ]


def _verify_doob(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: detailed balance π_i P_ij = π_j P_ji and stationarity πP = π with π ∝ h ⊙ Kh.

    On a sampled Swiss roll with h = q^{-α} (α = ½, the Fokker–Planck normalisation) and a random
    h; tolerance 1e-13 relative (rounding in products of O(n) sums).
    """
    n = by_scale(scale, 300, 2000)
    kernel_np = _swiss_roll_kernel(rng, n)
    worst = _doob_residual(kernel_np, (kernel_np.sum(1) ** -0.5, rng.random(n) + 0.1), backend)
    return Verification.from_residual(worst, 1e-13, n=n)


def _swiss_roll_kernel(rng, n):
    points = SwissRoll().sample(n, seed=rng)
    return gauss_kernel(points, 1.0 / float(np.median(np.sum((points - points.mean(0)) ** 2, 1))))


def _doob_residual(kernel_np, hs, backend) -> float:
    """Worst relative breach of detailed balance, of πP = π and of op.stationary = π, π ∝ h ⊙ Kh, over ``hs``."""
    kernel = to_backend(kernel_np, backend)
    xp = namespace(kernel)
    worst = 0.0
    for h_np in hs:
        h = to_backend(h_np, backend)
        op = doob_transform(kernel, h)
        pi = h * (kernel @ h)
        pi = pi / xp.sum(pi)
        flux = pi[:, None] * op.P
        worst = max(
            worst,
            as_float(xp.max(xp.abs(flux - flux.T))) / as_float(xp.max(flux)),
            as_float(xp.max(xp.abs(pi @ op.P - pi))) / as_float(xp.max(pi)),
            as_float(xp.max(xp.abs(op.stationary - pi))) / as_float(xp.max(pi)),
        )
    return worst


def _outside_doob_asymmetric(rng) -> Verification:
    """K not symmetric: detailed balance and π ∝ h ⊙ Kh fail.

    The Swiss-roll Gauss kernel (n = 300) with every entry scaled by an independent factor in [1, 2], with h = q^{-1/2}
    and a random h as in the check.  Measured residual 0.46 against the tolerance 1e-13.
    """
    n = 300
    kernel_np = _swiss_roll_kernel(rng, n) * (1.0 + rng.random((n, n)))
    worst = _doob_residual(kernel_np, (kernel_np.sum(1) ** -0.5, rng.random(n) + 0.1), "numpy")
    return Verification.from_residual(worst, 1e-13, n=n)


# ---- carré du champ -------------------------------------------------------------------------


def _derive_gamma() -> list[Step]:
    p = _stochastic_symbols()
    f, g = sp.Matrix(sp.symbols(f"f0:{N}")), sp.Matrix(sp.symbols(f"g0:{N}"))
    gen = p - sp.eye(N)
    fg = sp.Matrix([f[i] * g[i] for i in range(N)])
    operator_form = [sp.Rational(1, 2) * ((gen * fg)[i] - f[i] * (gen * g)[i] - g[i] * (gen * f)[i]) for i in range(N)]
    edge_form = [sp.Rational(1, 2) * sum(p[i, j] * (f[j] - f[i]) * (g[j] - g[i]) for j in range(N)) for i in range(N)]
    gn, gi, gj, _ = _indexed_symbols()
    gp, gf, gg = sp.IndexedBase("P"), sp.IndexedBase("f"), sp.IndexedBase("g")

    def g_gen(h):
        return sp.Sum(gp[gi, gj] * (h(gj) - h(gi)), (gj, 0, gn - 1))

    return [
        Step(
            "a generic 3-state Markov operator P, negative generator ℒ = P − I",
            p,
            statement=r"\mathsf P\mathbf 1 = \mathbf 1,\quad \mathcal L = \mathsf P - \mathsf I,\quad (\mathcal L h)_i = \sum_j\mathsf P_{ij}(h_j - h_i)",
            because="the negative generator of a Markov operator; row sums 1 let ℒh be written as a sum of differences",
        ),
        claim(
            "Γ(f,g) = ½[ℒ(fg) − fℒg − gℒf] = ½ Σ_j P_ij (f_j − f_i)(g_j − g_i)",
            sp.Matrix(operator_form).applyfunc(sp.expand),
            sp.Matrix(edge_form).applyfunc(sp.expand),
            statement=r"\Gamma(f,g)_i = \tfrac12\big[\mathcal L(fg) - f\,\mathcal Lg - g\,\mathcal Lf\big]_i = \tfrac12\sum_j\mathsf P_{ij}(f_j - f_i)(g_j - g_i)",
            because="in each term P_ij[(f_jg_j − f_ig_i) − f_i(g_j − g_i) − g_i(f_j − f_i)] = P_ij(f_j − f_i)(g_j − g_i)",
        ),
        claim(
            "general N: the same identity with ℒh_i = Σ_j P_ij (h_j − h_i) over a symbolic n",
            sp.Rational(1, 2)
            * (g_gen(lambda a: gf[a] * gg[a]) - gf[gi] * g_gen(gg.__getitem__) - gg[gi] * g_gen(gf.__getitem__)),
            sp.Rational(1, 2) * sp.Sum(gp[gi, gj] * (gf[gj] - gf[gi]) * (gg[gj] - gg[gi]), (gj, 0, gn - 1)),
            statement=r"\tfrac12\Big[\sum_{j<n}\mathsf P_{ij}(f_jg_j - f_ig_i) - f_i\sum_{j<n}\mathsf P_{ij}(g_j - g_i) - g_i\sum_{j<n}\mathsf P_{ij}(f_j - f_i)\Big] = \tfrac12\sum_{j<n}\mathsf P_{ij}(f_j - f_i)(g_j - g_i),\ n\text{ symbolic}",
            because="the three sums share one index, so they combine term by term into the product of differences; sympy decides it for symbolic n",
            general=True,
        ),
    ]


def _verify_gamma(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the edge form against the operator form, dense against sparse, and Γ(f,f) ≥ 0.

    A 10-nearest-neighbour Swiss-roll kernel (α = 1); tolerance 1e-12 relative to max |Γ| (the
    operator form cancels O(‖f‖²) terms).  Γ(f,f) ≥ 0 must hold exactly in the edge form.
    """
    n = by_scale(scale, 500, 5000)
    points = SwissRoll().sample(n, seed=rng)
    op = MarkovOperator.from_points(points, 2.0, alpha=1.0, k=10)
    f, g = np.sin(points[:, 0]) + rng.standard_normal(n) * 0.1, points[:, 1] ** 2
    sparse_edge = carre_du_champ(op.P, f, g)
    dense_p = to_backend(op.P.toarray(), backend)
    fb, gb = to_backend(f, backend), to_backend(g, backend)
    dense_edge = to_numpy(carre_du_champ(dense_p, fb, gb))
    dense_operator = to_numpy(carre_du_champ(dense_p, fb, gb, form="operator"))
    scale_ = float(np.max(np.abs(sparse_edge)))
    residual = max(np.max(np.abs(dense_edge - sparse_edge)), np.max(np.abs(dense_operator - sparse_edge))) / scale_
    if float(np.min(carre_du_champ(op.P, f))) < 0.0:
        residual = math.inf
    return Verification.from_residual(residual, 1e-12, n=n, k=10)


def _gamma_outside_case(rng, transform) -> Verification:
    """The check's criterion on ``transform(P)``, with both forms written out as the statement reads them.

    P is the check's 10-nearest-neighbour Swiss-roll operator (n = 500); the operator form uses ℒ = P − I
    literally and the edge form ½Σ_j P_ij(f_j − f_i)(g_j − g_i), so nothing is read in the jump-rates convention
    (which ignores the diagonal and refuses negative rates).
    """
    n = 500
    points = SwissRoll().sample(n, seed=rng)
    p = transform(MarkovOperator.from_points(points, 2.0, alpha=1.0, k=10).P.toarray(), rng)
    f, g = np.sin(points[:, 0]) + rng.standard_normal(n) * 0.1, points[:, 1] ** 2
    generator = p - np.eye(n)
    operator = 0.5 * (generator @ (f * g) - f * (generator @ g) - g * (generator @ f))

    def edge(a, b):
        return 0.5 * np.sum(p * (a[None, :] - a[:, None]) * (b[None, :] - b[:, None]), axis=1)

    edge_fg = edge(f, g)
    residual = float(np.max(np.abs(operator - edge_fg)) / np.max(np.abs(edge_fg)))
    if float(np.min(edge(f, f))) < 0.0:
        residual = math.inf
    return Verification.from_residual(residual, 1e-12, n=n, k=10)


def _outside_gamma_killed(rng) -> Verification:
    """Rows that do not sum to 1: the operator form leaves the edge form.

    0.9·P, a walk killed at rate 0.1 per step, with ℒ = P − I: the operator form gains ½(1 − row sum)·f_i g_i
    = +½·0.1·f_i g_i.  Measured residual 14.6 against the tolerance 1e-12.
    """
    return _gamma_outside_case(rng, lambda p, rng: 0.9 * p)


def _outside_gamma_signed(rng) -> Verification:
    """Negative rates: Γ(f,f) ≥ 0 fails.

    1.5P − 0.5Q with Q a random permutation matrix, rows still summing to 1.  The two forms still agree (measured
    4.8e-16), but Γ(f,f) < 0 at 419 of 500 vertices (minimum −1.16), which the check scores as an infinite residual.
    """
    return _gamma_outside_case(rng, lambda p, rng: 1.5 * p - 0.5 * np.eye(p.shape[0])[rng.permutation(p.shape[0])])


# ---- continuum limits of Γ, Γ₂ and the Hessian form in the plane ------------------------------
#
# The nodes are quadrature nodes of a non-uniform density q on ℝ²: a disc lattice in the coordinates
# (F₁(s), F₂(t)), with F₁, F₂ the cumulative functions of q₁(s) = 1 + ε cos(s + 0.4) and q₂(t) = 1 + ε sin t,
# mapped back and rotated, (x, y) = R(s, t).  Its sample density is q(x, y) = q₁(s) q₂(t), so
# Hess log q = R diag((log q₁)″, (log q₂)″) Rᵀ in closed form.  The trapezoidal rule in the uniform
# coordinates is spectrally accurate for the Gauss kernel once the nodes resolve it.

FLAT_BETAS = (200.0, 400.0, 800.0, 1600.0, 3200.0)
FLAT_REACH = 4.0  # kernel cut at √β‖x − y‖ = 4: exp(−16) ≈ 1e-7, far below the O(1/β) bias fitted
FLAT_SPACING = 0.5  # lattice step in the uniform coordinates, in units of 1/√β (image step ≤ 0.67/√β)
FLAT_HALF = 24  # lattice disc radius in steps: holds the 2-ball of the centre and the degrees it reads
FLAT_EPS = 0.25  # density contrast: q₁, q₂ ∈ [0.75, 1.25]
FLAT_ANGLE = 0.5  # rotation R, so that Hess log q has off-diagonal entries
FLAT_CENTRE = (0.3, -0.2)  # (s, t) of the centre vertex
FLAT_ALPHAS = (0.0, 0.5)


def _flat_cdfs(eps):
    """The cumulative functions F₁, F₂ of q₁, q₂ with their derivatives (the densities)."""
    return (
        lambda s: (s + eps * np.sin(s + 0.4), 1 + eps * np.cos(s + 0.4)),
        lambda t: (t - eps * np.cos(t), 1 + eps * np.sin(t)),
    )


def _flat_hess_log_q(eps):
    """Hess log q at the centre x₀ = R(s₀, t₀), and x₀: (log qₖ)″ = qₖ″/qₖ − (qₖ′/qₖ)²."""
    s0, t0 = FLAT_CENTRE
    q1, dq1, ddq1 = 1 + eps * math.cos(s0 + 0.4), -eps * math.sin(s0 + 0.4), -eps * math.cos(s0 + 0.4)
    q2, dq2, ddq2 = 1 + eps * math.sin(t0), eps * math.cos(t0), -eps * math.sin(t0)
    c, s = math.cos(FLAT_ANGLE), math.sin(FLAT_ANGLE)
    rot = np.array([[c, -s], [s, c]])
    diagonal = np.diag([ddq1 / q1 - (dq1 / q1) ** 2, ddq2 / q2 - (dq2 / q2) ** 2])
    return rot @ diagonal @ rot.T, rot @ np.array([s0, t0]), rot


def _inverse_cdf(cdf, u):
    x = np.array(u, dtype=float)
    for _ in range(12):  # Newton; F′ ≥ 1 − ε, so it converges to rounding in a handful of steps
        value, slope = cdf(x)
        x = x - (value - u) / slope
    return x


def _flat_nodes(beta, *, eps=FLAT_EPS, spacing=FLAT_SPACING, layout="lattice", rng=None):
    """Nodes sampling q around x₀, and the index of x₀ among them.

    ``layout``: ``"lattice"`` (quadrature nodes of q), ``"edge"`` (the same lattice cut to t ≥ t₀, so x₀ lies on
    the edge of the sampled region) or ``"iid"`` (as many independent samples of q from the same region, plus x₀).
    """
    cdf_s, cdf_t = _flat_cdfs(eps)
    _, x0, rot = _flat_hess_log_q(eps)
    step = spacing / math.sqrt(beta)
    grid = np.arange(-FLAT_HALF, FLAT_HALF + 1)
    a, b = (x.ravel().astype(float) for x in np.meshgrid(grid, grid, indexing="ij"))
    keep = a * a + b * b <= FLAT_HALF**2
    if layout == "edge":
        keep &= b >= 0
    a, b = a[keep], b[keep]
    if layout == "iid":
        radius, angle = FLAT_HALF * np.sqrt(rng.random(a.size)), 2 * math.pi * rng.random(a.size)
        a, b = np.append(radius * np.cos(angle), 0.0), np.append(radius * np.sin(angle), 0.0)
    s = _inverse_cdf(cdf_s, cdf_s(FLAT_CENTRE[0])[0] + step * a)
    t = _inverse_cdf(cdf_t, cdf_t(FLAT_CENTRE[1])[0] + step * b)
    nodes = (rot @ np.vstack([s, t])).T
    return nodes, int(np.argmin(np.sum((nodes - x0) ** 2, axis=1)))


def _flat_errors(beta, nodes, centre, *, alphas=FLAT_ALPHAS, eps=FLAT_EPS):
    """Worst relative error of the four limits at x₀, over ``alphas``, at one β.

    (4β)Γ(f, g) against ∇f·∇g; (4β)²Γ₂(f) against ‖Hess f‖² − 2(1 − α) Hess log q(∇f, ∇f); (4β)²Γ₂(ℓ) of the
    linear ℓ = 2x − 3y against −2(1 − α) Hess log q(∇ℓ, ∇ℓ), relative to ‖∇ℓ‖²‖Hess log q‖; (4β)²H(f)(g, h)
    against Hess f(∇g, ∇h).  Only the rows of the 2-ball of x₀ enter Γ₂ and H there, so P is cut to it.
    """
    hess_log_q, x0, _ = _flat_hess_log_q(eps)
    kernel = gauss_kernel_sparse(nodes, beta, radius=FLAT_REACH / math.sqrt(beta))
    ball = np.flatnonzero(np.sum((nodes - nodes[centre]) ** 2, axis=1) <= (2 * FLAT_REACH) ** 2 / beta)
    at = int(np.flatnonzero(ball == centre)[0])
    x, y = nodes[ball, 0], nodes[ball, 1]
    f, g, h, line = np.sin(x) * np.cos(2 * y), np.exp(0.5 * x - y), x * y + np.cos(y), 2.0 * x - 3.0 * y
    u, v = x0
    grad_f = np.array([math.cos(u) * math.cos(2 * v), -2 * math.sin(u) * math.sin(2 * v)])
    hess_f = np.array(
        [
            [-math.sin(u) * math.cos(2 * v), -2 * math.cos(u) * math.sin(2 * v)],
            [-2 * math.cos(u) * math.sin(2 * v), -4 * math.sin(u) * math.cos(2 * v)],
        ]
    )
    grad_g, grad_h, grad_line = (
        math.exp(0.5 * u - v) * np.array([0.5, -1.0]),
        np.array([v, u - math.sin(v)]),
        np.array([2.0, -3.0]),
    )
    worst = 0.0
    for alpha in alphas:
        p = MarkovOperator.from_kernel(kernel, alpha).P[ball][:, ball]
        drift = -2 * (1 - alpha) * hess_log_q
        g2 = (4 * beta) ** 2 * gamma2(p, np.column_stack([f, line]))[at]
        exact_f = np.sum(hess_f * hess_f) + grad_f @ drift @ grad_f
        worst = max(
            worst,
            abs(4 * beta * carre_du_champ(p, f, g)[at] / (grad_f @ grad_g) - 1),
            abs(g2[0] / exact_f - 1),
            abs(g2[1] - grad_line @ drift @ grad_line) / (grad_line @ grad_line * np.linalg.norm(hess_log_q, 2)),
            abs((4 * beta) ** 2 * hessian_form(p, f, g, h)[at] / (grad_g @ hess_f @ grad_h) - 1),
        )
    return worst


def _flat_limit_check(
    *, spacing=FLAT_SPACING, layout="lattice", eps=FLAT_EPS, betas=FLAT_BETAS, alphas=FLAT_ALPHAS, rng=None
) -> Verification:
    """The fitted rate in 1/β of the worst error of the four limits (expected 1, tolerance 0.05)."""
    betas = np.array(betas)
    errors = []
    for beta in betas:
        nodes, centre = _flat_nodes(beta, eps=eps, spacing=spacing, layout=layout, rng=rng)
        errors.append(_flat_errors(beta, nodes, centre, alphas=alphas, eps=eps))
    return Verification.from_rate(
        1 / betas, errors, expected=1.0, tolerance=0.05, nodes=int(nodes.shape[0]), alphas=list(alphas)
    )


OUTSIDE_BETAS = (200.0, 800.0, 3200.0)  # an outside case fits its rate on three bandwidths, at α = 0


def _verify_flat_limits(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: flat ℝ² with ħ = 1/(4β), nodes of a non-uniform density q (quadrature nodes: a lattice mapped by the
    inverse cumulative function of q), P the α-normalised walk: 4βΓ(f,g) → ∇f·∇g, (4β)²Γ₂(f) → ‖Hess f‖² −
    2(1 − α) Hess log q(∇f, ∇f) (Bochner for ℒ = Δ + ∇V·∇, V = 2(1 − α) log q, Ric = 0) and
    (4β)²·½[Γ(g,Γ(f,h)) + Γ(h,Γ(f,g)) − Γ(f,Γ(g,h))] → Hess f(∇g,∇h), each with bias O(1/β).  A linear ℓ has
    Γ₂ → −2(1 − α) Hess log q(∇ℓ, ∇ℓ): the drift term alone.

    α ∈ {0, ½} (the drift terms differ), q₁, q₂ ∈ [0.75, 1.25] with Hess log q non-diagonal; the worst relative
    error of the four limits at the centre vertex, fitted slope 1 in 1/β over β = 200…3200, tolerance 0.05
    (measured slope 0.996, errors 0.045 … 0.0028).  The uniform-q limit ‖Hess f‖² misses here and does not decay:
    at β = 3200, α = 0, (4β)²Γ₂(f) = 2.3817 against 2.3778 (this limit) and 2.1199 (‖Hess f‖² alone).
    """
    return _flat_limit_check()


def _outside_flat_coarse(rng) -> Verification:
    """Nodes that do not resolve the kernel: the errors stay O(1).

    Lattice step 2/√β in the uniform coordinates (image step up to 2.7/√β), otherwise as in the check, at α = 0 and
    β = 200, 800, 3200.  The discrete operator is then self-similar in β: measured errors 0.937, 0.935, 0.935, fitted
    slope 0.001 against 1 (tolerance 0.05).
    """
    return _flat_limit_check(spacing=2.0, betas=OUTSIDE_BETAS, alphas=(0.0,))


def _outside_flat_iid(rng) -> Verification:
    """Independent samples of q instead of quadrature nodes: the Monte Carlo error grows with β.

    The same count (1793) of independent samples of q from the same region, x₀ added, at α = 0 and β = 200, 800,
    3200.  Measured errors 396, 1.1e3, 6.1e3 and slope −0.98 against 1 (tolerance 0.05); over seeds 0–3 the slope
    stayed ≤ −0.46.
    """
    return _flat_limit_check(layout="iid", rng=rng, betas=OUTSIDE_BETAS, alphas=(0.0,))


def _outside_flat_edge(rng) -> Verification:
    """x₀ on the edge of the sampled region: Γ₂ blows up.

    The quadrature lattice cut to t ≥ t₀, at α = 0 and β = 200, 800, 3200.  The one-sided kernel gives ℒ a
    first-order drift of size √ħ there, so (4β)²Γ₂ grows like β: measured errors 1.2e3, 4.7e3, 1.9e4, slope −1.0
    against 1 (tolerance 0.05).
    """
    return _flat_limit_check(layout="edge", betas=OUTSIDE_BETAS, alphas=(0.0,))


def _derive_flat_limits() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    u, v = sp.symbols("u v", real=True)
    a, b, c, d, e = sp.symbols("a b c d e", real=True)
    f = a * u + b * v + c * u**2 / 2 + d * u * v + e * v**2 / 2  # a quadratic around 0

    def gauss(expr):  # E over N(0, I/(2β)) of a polynomial in u, v: E[u^2k] = (2k − 1)!!/(2β)^k, odd moments 0
        terms = sp.Poly(sp.expand(expr), u, v).terms()
        return sum(
            coeff * sp.factorial2(i - 1) * sp.factorial2(j - 1) / (2 * beta) ** ((i + j) // 2)
            for (i, j), coeff in terms
            if i % 2 == 0 and j % 2 == 0
        )

    gamma_ff = gauss(f**2) / 2
    # the α-normalised walk on nodes of density q weighs a jump to u by w(u) = q(u)^{1−α} (1 + O(1/β)):
    # w is expanded to second order around 0, w(0) = w₀ > 0
    w0 = sp.Symbol("w0", positive=True)
    w1, w2, w11, w12, w22 = sp.symbols("w1 w2 w11 w12 w22", real=True)
    w = w0 + w1 * u + w2 * v + w11 * u**2 / 2 + w12 * u * v + w22 * v**2 / 2

    def mean(expr):  # the w-weighted Gauss mean: a rational function of β
        return gauss(expr * w) / gauss(w)

    generator = sp.limit(sp.cancel(4 * beta * mean(f)), beta, sp.oo)
    carre = sp.limit(sp.cancel(4 * beta * mean(f**2) / 2), beta, sp.oo)
    x, y = sp.symbols("x y", real=True)
    F, V = sp.Function("f")(x, y), sp.Function("V")(x, y)

    def grad(h):
        return sp.Matrix([h.diff(x), h.diff(y)])

    def gen(h):  # L = Δ + ∇V·∇
        return h.diff(x, 2) + h.diff(y, 2) + (grad(V).T * grad(h))[0]

    def gam(h, k):
        return (grad(h).T * grad(k))[0]

    hess_f, hess_v = sp.hessian(F, (x, y)), sp.hessian(V, (x, y))
    bochner = sp.Rational(1, 2) * (gen(gam(F, F)) - 2 * gam(F, gen(F)))
    return [
        Step(
            "Gauss kernel exp(−β|u|²) on ℝ², f a quadratic with ∇f(0) = (a, b), Hess f = [[c, d], [d, e]]",
            f,
            statement=r"\Gamma(f,f)(0) = \tfrac12\,\mathbb E_{u\sim\mathcal N(0,\frac1{2\beta}I_2)}\big[(f(u) - f(0))^2\big],\quad f(u) = \nabla f(0)\cdot u + \tfrac12 u^\top\operatorname{Hess}f\,u",
            because="on uniform nodes, P_β is averaging against the normalised Gauss weight e^{−β|u|²}, whose covariance is I/(2β)",
        ),
        claim(
            "Γ(f,f)(0) = ½ E[(f(u) − f(0))²] = |∇f|²/(4β) + (tr² Hess + 2‖Hess‖²)/(32β²)",
            sp.expand(sp.simplify(gamma_ff)),
            sp.expand((a**2 + b**2) / (4 * beta) + ((c + e) ** 2 + 2 * (c**2 + 2 * d**2 + e**2)) / (32 * beta**2)),
            statement=r"\Gamma(f,f)(0) = \frac{\lvert\nabla f\rvert^2}{4\beta} + \frac{(\operatorname{tr}\operatorname{Hess}f)^2 + 2\lVert\operatorname{Hess}f\rVert_F^2}{32\beta^2}",
            because="Gaussian moments E[u_a u_b] = δ_ab/(2β) and Isserlis for the fourth moments; odd moments vanish",
        ),
        Step(
            "nodes of density q, α-normalised walk: a jump to u is weighed by w(u) = q(u)^{1−α}(1 + O(1/β))",
            w,
            statement=r"\mathsf P^{(\alpha)}f(0) = \frac{\int e^{-\beta\lvert u\rvert^2}w(u)f(u)\,du}{\int e^{-\beta\lvert u\rvert^2}w(u)\,du},\quad w = q\cdot q_\beta^{-\alpha},\ q_\beta = \mathsf K\mathbf 1 \propto q\,(1 + O(\beta^{-1}))",
            because="a sum over nodes of density q is an integral against q du; the degree q_β of a node is q smoothed at scale 1/√β",
        ),
        claim(
            "4β(P^(α) − I)f(0) → Δf + 2∇log w·∇f = Δf + 2(1 − α)∇log q·∇f",
            generator,
            c + e + 2 * (a * w1 + b * w2) / w0,
            statement=r"4\beta\,(\mathsf P^{(\alpha)} - I)f \to \Delta f + 2\nabla\log w\cdot\nabla f = \Delta f + \nabla V\cdot\nabla f,\quad V = 2(1-\alpha)\log q",
            because="the first moment of the w-weighted Gauss step is ∇w/(2βw) + O(β⁻²), its second moment I/(2β) + O(β⁻²)",
        ),
        claim(
            "4βΓ(f,f)(0) → |∇f|² for every weight w: the drift leaves Γ (and the Hessian form, built from Γ) alone",
            carre,
            a**2 + b**2,
            statement=r"4\beta\,\Gamma_{\mathsf P^{(\alpha)}}(f,f) \to \lvert\nabla f\rvert^2\quad\text{for every } q,\ \alpha",
            because="(f(u) − f(0))² = (∇f·u)² + O(|u|³): only the second moment I/(2β) enters at order 1/β",
        ),
        claim(
            "Bochner with a drift, flat ℝ²: for L = Δ + ∇V·∇, Γ₂(f) = ½[LΓ(f,f) − 2Γ(f,Lf)] = ‖Hess f‖² − Hess V(∇f,∇f)",
            sp.expand(bochner),
            sp.expand(sum(hess_f[i, j] ** 2 for i in range(2) for j in range(2)) - (grad(F).T * hess_v * grad(F))[0]),
            statement=r"\mathcal L = \Delta + \nabla V\cdot\nabla:\quad \Gamma_2(f) = \tfrac12\big[\mathcal L\lvert\nabla f\rvert^2 - 2\nabla f\cdot\nabla\mathcal Lf\big] = \lVert\operatorname{Hess}f\rVert^2 - \operatorname{Hess}V(\nabla f,\nabla f)",
            because="½Δ|∇f|² − ∇f·∇Δf = ‖Hess f‖² (Ric = 0), and ½∇V·∇|∇f|² − ∇f·∇(∇V·∇f) = −Hess V(∇f,∇f)",
        ),
        Step(
            "so ħ = 1/(4β): 4βΓ → |∇f|², (4β)²Γ₂ → ‖Hess f‖² − 2(1 − α) Hess log q(∇f,∇f); uniform q or α = 1: ‖Hess f‖²",
            sp.Eq(sp.Symbol("hbar"), 1 / (4 * beta)),
            statement=r"\hbar = \frac1{4\beta}:\quad \hbar^{-1}\Gamma(f,f) \to \lvert\nabla f\rvert^2,\quad \hbar^{-2}\Gamma_2(f) \to \lVert\operatorname{Hess}f\rVert^2 - 2(1-\alpha)\operatorname{Hess}\log q(\nabla f,\nabla f)",
            because="ℒ = P − I ≈ ħ(Δ + ∇V·∇) and Γ ≈ ħ∇f·∇g, so Γ₂ ≈ ħ²Γ₂ of Δ + ∇V·∇ with V = 2(1 − α) log q",
        ),
    ]


# ---- currents and circulation ------------------------------------------------------------------


def _derive_current() -> list[Step]:
    p = _stochastic_symbols()
    pi = sp.Matrix(sp.symbols(f"pi0:{N}", positive=True))
    current = sp.diag(*pi) * p - p.T * sp.diag(*pi)
    stationarity = (pi.T * p - pi.T).T
    f, g = sp.Matrix(sp.symbols(f"f0:{N}")), sp.Matrix(sp.symbols(f"g0:{N}"))
    omega = (f.T * current * g)[0] / 2
    return [
        Step(
            "J = diag(π)P − Pᵀdiag(π)",
            current,
            statement=r"\mathsf J = \operatorname{diag}(\pi)\,\mathsf P - \mathsf P^\top\operatorname{diag}(\pi),\quad \mathsf J_{ij} = \pi_i\mathsf P_{ij} - \pi_j\mathsf P_{ji} = -\mathsf J_{ji}",
            because="the net probability current across each edge under the law π",
        ),
        claim(
            "(J1)_i = π_i − (πᵀP)_i, so J1 = 0 exactly when π is stationary",
            (current * sp.ones(N, 1)).applyfunc(sp.expand),
            (-stationarity).applyfunc(sp.expand),
            statement=r"(\mathsf J\mathbf 1)_i = \pi_i\sum_j\mathsf P_{ij} - \sum_j\pi_j\mathsf P_{ji} = \pi_i - (\pi^\top\mathsf P)_i",
            because="rows of P sum to 1; so J1 = 0 exactly when π is stationary",
        ),
        claim(
            "Ω_π(f,g) = ½ fᵀJg is antisymmetric",
            sp.expand(omega + (g.T * current * f)[0] / 2),
            0,
            statement=r"\Omega_\pi(f,g) = \tfrac12 f^\top\mathsf Jg = -\tfrac12 g^\top\mathsf Jf = -\Omega_\pi(g,f)",
            because="Jᵀ = −J, and a scalar equals its transpose",
        ),
    ]


def _verify_current(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: J1 = 0 at stationarity; Ω_π ≡ 0 for a reversible operator (a Doob transform of a
    symmetric kernel) and Ω_π ≠ 0 for a head with a free link; ⟨f, ½(P − P*)g⟩_π = Ω_π(f,g).

    Tolerance 1e-12 relative to max π for J1 and to ½Σ|A_ij f_i g_j| for Ω_π, and on ε_rev of the
    exact link: π comes from a linear solve (observed ≈ 3e-14 at n = 60).  The free link must have
    ε_rev > 0.01.
    """
    n = by_scale(scale, 60, 600)
    free, _ = _head(rng, n, beta=1.0)
    exact, _ = _head(rng, n, beta=1.0, exact_link=True)
    worst, smallest_free = 0.0, math.inf
    f, g = rng.standard_normal(n), rng.standard_normal(n)
    for p_np, reversible in ((free, False), (exact, True)):
        op = MarkovOperator(p_np)
        p, pi = to_backend(p_np, backend), to_backend(to_numpy(op.stationary), backend)
        current = to_numpy(stationary_current(p, pi))
        # (J1)_i = π_i − (πᵀP)_i: the stationarity residual of the solved π, relative to max π.
        worst = max(worst, float(np.max(np.abs(current.sum(1)))) / float(np.max(to_numpy(op.stationary))))
        omega = as_float(circulation(p, to_backend(f, backend), to_backend(g, backend), pi))
        via_adjoint = float(np.sum(op.stationary * f * ((op.P - op.adjoint) @ g)) / 2)
        size = 0.5 * float(np.sum(np.abs(to_numpy(op.flux)) * np.abs(f)[:, None] * np.abs(g)[None, :]))
        worst = max(worst, abs(omega - via_adjoint) / size)
        if reversible:
            worst = max(worst, abs(omega) / size, op.reversibility_residual)
        else:
            smallest_free = min(smallest_free, op.reversibility_residual)
    if smallest_free < 1e-2:  # the free link must be visibly non-reversible, else the check proves nothing
        worst = math.inf
    return Verification.from_residual(worst, 1e-12, n=n)


def _outside_current_not_stationary(rng) -> Verification:
    """π not stationary: J1 = π − πᵀP ≠ 0.

    The uniform law in place of the stationary law of a head with a free link (n = 60); Ω_π = ⟨f, ½(P − P*)g⟩_π
    still holds for any π > 0.  Measured residual max|J1|/max π = 0.45 against the tolerance 1e-12.
    """
    n = 60
    free, _ = _head(rng, n, beta=1.0)
    pi = np.full(n, 1.0 / n)
    current = to_numpy(stationary_current(free, pi))
    f, g = rng.standard_normal(n), rng.standard_normal(n)
    adjoint = (free.T * pi[None, :]) / pi[:, None]
    via_adjoint = float(np.sum(pi * f * ((free - adjoint) @ g)) / 2)
    size = 0.5 * float(np.sum(np.abs(pi[:, None] * free) * np.abs(f)[:, None] * np.abs(g)[None, :]))
    worst = max(
        float(np.max(np.abs(current.sum(1)))) / float(np.max(pi)),
        abs(as_float(circulation(free, f, g, pi)) - via_adjoint) / size,
    )
    return Verification.from_residual(worst, 1e-12, n=n)


# ---- cycles: affinities and the Kolmogorov criterion ---------------------------------------------


def _derive_affinity() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    s = sp.Matrix(N, N, lambda i, j: sp.Symbol(f"s{min(i, j)}{max(i, j)}", real=True))
    a = sp.Matrix(N, N, lambda i, j: 0 if i == j else (1 if i < j else -1) * sp.Symbol(f"a{min(i, j)}{max(i, j)}"))
    z = [sum(sp.exp(beta * (s[i, j] + a[i, j])) for j in range(N)) for i in range(N)]
    p = sp.Matrix(N, N, lambda i, j: sp.exp(beta * (s[i, j] + a[i, j])) / z[i])
    cycle = [0, 1, 2, 0]
    affinity = sum(sp.log(p[cycle[m], cycle[m + 1]] / p[cycle[m + 1], cycle[m]]) for m in range(3))
    return [
        Step(
            "head P = rownorm exp(β(S + A)), S symmetric (bond), A antisymmetric (link)",
            p,
            statement=r"\mathsf P_{ij} = \frac{e^{\beta(\mathsf S_{ij} + \mathsf A_{ij})}}{Z_i},\quad Z_i = \sum_k e^{\beta(\mathsf S_{ik} + \mathsf A_{ik})},\quad \mathsf S = \mathsf S^\top,\ \mathsf A = -\mathsf A^\top",
            because="a softmax head whose logits split into a symmetric bond part and an antisymmetric link part",
        ),
        claim(
            "affinity of the triangle 0→1→2→0 is 2β × the link holonomy: the Z_i telescope",
            sp.expand(sp.expand_log(affinity, force=True)),
            2 * beta * (a[0, 1] + a[1, 2] + a[2, 0]),
            statement=r"\mathfrak A(\gamma) = \sum_m\log\frac{\mathsf P_{i_mi_{m+1}}}{\mathsf P_{i_{m+1}i_m}} = \sum_m\big[2\beta\mathsf A_{i_mi_{m+1}} + \log Z_{i_{m+1}} - \log Z_{i_m}\big] = 2\beta\sum_m\mathsf A_{i_mi_{m+1}}",
            because="S cancels in each ratio, A_ji = −A_ij doubles, and the log Z terms telescope around the closed cycle",
        ),
    ]


def _verify_affinity(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: 𝔄(γ) = 2β Σ A along γ for a free link (book/reference.md §A.7 [DERIVED]); all affinities vanish
    (Kolmogorov) and detailed balance holds for an exact link.  Tolerance 1e-11: logs of ratios of
    O(1) probabilities summed over (n − 1)(n − 2)/2 triangles.
    """
    n = by_scale(scale, 20, 60)
    beta = 0.7
    p_free, a = _head(rng, n, beta)
    cycles = [(0, i, j, 0) for i in range(1, n) for j in range(i + 1, n)]  # the triangle basis of K_n
    holonomy = np.array([a[0, i] + a[i, j] + a[j, 0] for _, i, j, _ in cycles])
    residual = float(
        np.max(np.abs(to_numpy(cycle_affinities(to_backend(p_free, backend), cycles)) - 2 * beta * holonomy))
    )
    p_exact, _ = _head(rng, n, beta, exact_link=True)
    residual = max(residual, kolmogorov_residual(p_exact), MarkovOperator(p_exact).reversibility_residual)
    if kolmogorov_residual(p_free) < 1e-3:  # the criterion must also detect non-reversibility
        residual = math.inf
    return Verification.from_residual(residual, 1e-11, n=n, cycles=len(cycles))


def _outside_affinity_open(rng) -> Verification:
    """Open paths instead of cycles: the log Z_i no longer telescope.

    The paths 0 → i → j without the step back to 0, on the check's head (n = 20, β = 0.7): Σ log(P/Pᵀ) =
    2βΣA + log Z_0 − log Z_j.  Measured residual 1.5 against the tolerance 1e-11.
    """
    n, beta = 20, 0.7
    p, a = _head(rng, n, beta)
    paths = [(0, i, j) for i in range(1, n) for j in range(i + 1, n)]
    link = np.array([a[0, i] + a[i, j] for _, i, j in paths])
    residual = float(np.max(np.abs(cycle_affinities(p, paths) - 2 * beta * link)))
    return Verification.from_residual(residual, 1e-11, n=n, cycles=len(paths))


def _outside_affinity_row_temperatures(rng) -> Verification:
    """A temperature per row: S no longer cancels in P_ij/P_ji.

    P_ij ∝ exp(β_i(S + A)_ij) with β_i uniform in [0.4, 1.0], against 2βΣA with the mean β = 0.7, on the check's
    triangle basis (n = 20).  Measured residual 1.7 against the tolerance 1e-11.
    """
    n, beta = 20, 0.7
    s = rng.standard_normal((n, n))
    a = rng.standard_normal((n, n))
    a = (a - a.T) / 2
    rows = rng.uniform(0.4, 1.0, n)
    p = softmax_operator((rows / beta)[:, None] * ((s + s.T) / 2 + a), beta)
    cycles = [(0, i, j, 0) for i in range(1, n) for j in range(i + 1, n)]
    holonomy = np.array([a[0, i] + a[i, j] + a[j, 0] for _, i, j, _ in cycles])
    residual = float(np.max(np.abs(cycle_affinities(p, cycles) - 2 * beta * holonomy)))
    return Verification.from_residual(residual, 1e-11, n=n, cycles=len(cycles))


# ---- Hatano–Nelson gauge form and the D_K/D_Q identity [RECON] -------------------------------------


def _derive_gauge() -> list[Step]:
    abar, theta = sp.symbols("Abar theta", positive=True)
    fi, fj, gi, gj = sp.symbols("f_i f_j g_i g_j")
    dk = sp.sqrt(abar) * (sp.exp(-theta / 2) * fi - sp.exp(theta / 2) * fj)
    dq = sp.sqrt(abar) * (sp.exp(theta / 2) * gi - sp.exp(-theta / 2) * gj)
    dk_back = sp.sqrt(abar) * (sp.exp(theta / 2) * fj - sp.exp(-theta / 2) * fi)  # (D_K f)_ji, θ_ji = −θ
    dq_back = sp.sqrt(abar) * (sp.exp(-theta / 2) * gj - sp.exp(theta / 2) * gi)
    return [
        Step(
            "one bond {i, j}: Ā_ij = √(A_ij A_ji), θ_ij = ½ log(A_ij/A_ji), so A_ij = Ā e^θ, A_ji = Ā e^{−θ}",
            dk,
            statement=r"\mathsf A_{ij} = \bar{\mathsf A}_{ij}e^{\theta_{ij}},\ \bar{\mathsf A}_{ij} = \sqrt{\mathsf A_{ij}\mathsf A_{ji}},\ \theta_{ij} = \tfrac12\log\frac{\mathsf A_{ij}}{\mathsf A_{ji}} = -\theta_{ji};\quad (\mathsf D_Kf)_{ij} = \sqrt{\bar{\mathsf A}_{ij}}\,(e^{-\theta_{ij}/2}f_i - e^{\theta_{ij}/2}f_j)",
            because="every positive bond pair factors into a symmetric magnitude and an antisymmetric gauge angle",
        ),
        claim(
            "½[(D_Q g)_ij (D_K f)_ij + (D_Q g)_ji (D_K f)_ji] = Ā(g_i f_i + g_j f_j) − Ā e^θ g_i f_j − Ā e^{−θ} g_j f_i",
            sp.expand((dq * dk + dq_back * dk_back) / 2),
            sp.expand(abar * (gi * fi + gj * fj) - abar * sp.exp(theta) * gi * fj - abar * sp.exp(-theta) * gj * fi),
            statement=r"\tfrac12\sum_{ij}(\mathsf D_Qg)_{ij}(\mathsf D_Kf)_{ij} = g^\top\big[\operatorname{diag}(\bar{\mathsf A}\mathbf 1) - \bar{\mathsf A}\odot e^{\theta}\big]f",
            because="expand one bond in both orientations: the e^{±θ/2} factors cancel on the diagonal terms and combine to e^{±θ} on the cross terms",
        ),
        claim(
            "J_ij = A_ij − A_ji = 2Ā sinh θ",
            abar * sp.exp(theta) - abar * sp.exp(-theta),
            (2 * abar * sp.sinh(theta)).rewrite(sp.exp),
            statement=r"\mathsf J_{ij} = \mathsf A_{ij} - \mathsf A_{ji} = \bar{\mathsf A}_{ij}(e^{\theta_{ij}} - e^{-\theta_{ij}}) = 2\bar{\mathsf A}_{ij}\sinh\theta_{ij}",
            because="substitute A_ij = Āe^θ, A_ji = Āe^{−θ}",
        ),
    ]


def _verify_gauge(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: A = Ā ⊙ e^θ, J = 2Ā sinh θ, ½ D_Qᵀ D_K = diag(Ā1) − A = diag(π)L + diag(V) with
    V = Ā1 − π ≤ 0 (AM–GM), strictly negative somewhere for a free link.  Dense against sparse;
    tolerance 1e-13 relative to max A.
    """
    n = by_scale(scale, 40, 300)
    p_np, _ = _head(rng, n, beta=1.0)
    residual, scale_ = _gauge_residual(p_np, to_numpy(MarkovOperator(p_np).stationary), backend)
    return Verification.from_residual(residual / scale_, 1e-13, n=n)


def _gauge_residual(p_np, pi_np, backend):
    """The check's residual (infinite when V ≤ 0 fails or V is nowhere negative) and its scale max A."""
    n = p_np.shape[0]
    p, pi = to_backend(p_np, backend), to_backend(pi_np, backend)
    abar, theta = (to_numpy(x) for x in hatano_nelson(p, pi))
    flux = pi_np[:, None] * p_np
    scale_ = float(flux.max())
    residual = float(np.max(np.abs(abar * np.exp(theta) - flux)))
    residual = max(residual, float(np.max(np.abs(2 * abar * np.sinh(theta) - (flux - flux.T)))))
    d_k, d_q, _ = gauge_gradients(scipy.sparse.csr_array(p_np), pi_np)
    laplacian = (0.5 * (d_q.T @ d_k)).toarray()
    v = abar.sum(1) - pi_np
    residual = max(residual, float(np.max(np.abs(laplacian - (np.diag(abar.sum(1)) - flux)))))
    residual = max(residual, float(np.max(np.abs(laplacian - (pi_np[:, None] * (np.eye(n) - p_np) + np.diag(v))))))
    if v.max() > 1e-15 or v.min() > -1e-6:
        residual = math.inf
    return residual, scale_


def _outside_gauge_not_stationary(rng) -> Verification:
    """π not stationary: V = Ā1 − π ≤ 0 fails.

    A reversible head (exact link, n = 40) with the uniform law in place of its stationary law.  The two matrix
    identities hold for any π, but V ≤ 0 needs AM–GM and stationarity: measured max V = 0.032 > 0, which the check
    scores as an infinite residual.
    """
    n = 40
    p_np, _ = _head(rng, n, beta=1.0, exact_link=True)
    residual, scale_ = _gauge_residual(p_np, np.full(n, 1.0 / n), "numpy")
    return Verification.from_residual(residual / scale_, 1e-13, n=n)


# ---- Bakry–Émery curvature of graphs ---------------------------------------------------------------


def _curvature_cases(scale):
    sizes = by_scale(scale, (4, 6), (4, 6, 9, 12))
    cases = []
    for n in sizes:
        cases.append((f"K_{n}", nx.complete_graph(n), 1 + n / 2, (n + 2) / (2 * (n - 1))))
        cases.append((f"C_{n + 2}", nx.cycle_graph(n + 2), 0.0, 0.0))
        cases.append((f"Q_{n - 1}", nx.hypercube_graph(n - 1), 2.0, 2 / (n - 1)))
    return cases


def _verify_curvature(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: published Bakry–Émery curvatures K_∞ — unnormalised Laplacian: K_n 1 + n/2, C_n (n ≥ 5) 0,
    Q_d 2; normalised: (n + 2)/(2(n − 1)), 0, 2/d (Cushing–Liu–Peyerimhoff 2020; Klartag–Kozma–Ralli–Tetali
    2016).  Every vertex; tolerance 1e-10 (a small symmetric eigenproblem per vertex).
    """
    worst = 0.0
    for _, graph, unnormalised, normalised in _curvature_cases(scale):
        adjacency = nx.to_scipy_sparse_array(graph, format="csr", dtype=float)
        walk = scipy.sparse.diags_array(1 / adjacency.sum(axis=1)) @ adjacency
        for rates, expected in ((adjacency, unnormalised), (walk, normalised)):
            worst = max(worst, float(np.max(np.abs(to_numpy(bakry_emery_curvature(rates)) - expected))))
    return Verification.from_residual(worst, 1e-10, graphs=len(_curvature_cases(scale)))


def _outside_curvature_short_cycles(rng) -> Verification:
    """C₃ and C₄, the cycles below n = 5: K_∞ ≠ 0.

    Both Laplacians.  C₃ = K₃ and C₄ = Q₂, so the closed forms give 1 + 3/2 = 5/2 and 2 (normalised 5/4 and
    2/2 = 1); measured 2.5 and 2.0 to rounding (1.25, 1.0).  The residual is the smaller of the two graphs' worst
    errors, so both must fail: 2.0 against the tolerance 1e-10.
    """
    errors = {}
    for n in (3, 4):
        adjacency = nx.to_scipy_sparse_array(nx.cycle_graph(n), format="csr", dtype=float)
        walk = scipy.sparse.diags_array(1 / adjacency.sum(axis=1)) @ adjacency
        errors[f"C_{n}"] = max(float(np.max(np.abs(to_numpy(bakry_emery_curvature(r))))) for r in (adjacency, walk))
    return Verification.from_residual(min(errors.values()), 1e-10, **errors)


def _derive_curvature() -> list[Step]:
    n = sp.Symbol("n", positive=True, integer=True)
    return [
        Step(
            "K_∞(x) = largest K with Γ₂(f)(x) ≥ KΓ(f)(x) ∀f: a Schur complement over the 2-sphere, then a "
            "symmetric eigenproblem on the 1-sphere (Cushing–Liu–Peyerimhoff)",
            sp.Symbol("K_infinity"),
            statement=r"K_\infty(x) = \sup\{K : \Gamma_2(f)(x) \ge K\,\Gamma(f)(x)\ \forall f\}",
            because="Bakry–Émery curvature at a vertex; Γ₂ depends on f only on the 2-ball, so the sup is a finite eigenvalue problem",
        ),
        claim(
            "normalised K_n equals the unnormalised value divided by the degree n − 1, up to the 1/(n−1) shift",
            sp.simplify((1 + n / 2) / (n - 1)),
            sp.simplify((n + 2) / (2 * (n - 1))),
            statement=r"\frac{1 + n/2}{n - 1} = \frac{n + 2}{2(n - 1)}",
            because="the normalised walk P = D⁻¹A on K_n has all degrees n − 1, so Γ and Γ₂ scale by 1/(n−1) and 1/(n−1)²",
        ),
    ]


# ---- Hodge split and Beurling–Deny --------------------------------------------------------------------


def _derive_hodge() -> list[Step]:
    a = sp.Matrix(N, N, lambda i, j: 0 if i == j else (1 if i < j else -1) * sp.Symbol(f"a{min(i, j)}{max(i, j)}"))
    phi = sp.Matrix([sum(a[i, j] for j in range(N)) / N for i in range(N)])
    exact = sp.Matrix(N, N, lambda i, j: phi[i] - phi[j])
    coexact = a - exact
    x = sp.Matrix(sp.symbols(f"x0:{N}"))
    residual = sum((a[i, j] - (x[i] - x[j])) ** 2 for i in range(N) for j in range(N))
    normal = sp.Matrix([residual.diff(x[i]) for i in range(N)]).subs(dict(zip(x, phi, strict=True)))
    return [
        Step(
            "antisymmetric link a on the complete graph K_3, potential φ_i = (1/N) Σ_j a_ij",
            phi,
            statement=r"a_{ij} = -a_{ji}\ \text{on } K_N,\quad \varphi_i = \frac1N\sum_j a_{ij}",
            because="the candidate potential: the mean outgoing link at each vertex",
        ),
        claim(
            "φ solves the least-squares normal equations of Σ (a_ij − (φ_i − φ_j))²",
            normal.applyfunc(sp.expand),
            statement=r"\frac{\partial}{\partial x_k}\sum_{ij}\big(a_{ij} - (x_i - x_j)\big)^2\Big|_{x = \varphi} = -4\sum_j\big(a_{kj} - (\varphi_k - \varphi_j)\big) = 0",
            because="on K_N, Σ_j(φ_k − φ_j) = Nφ_k − Σ_j φ_j and Σ_j φ_j = (1/N)Σ_ij a_ij = 0, so the gradient is −4(Σ_j a_kj − Nφ_k) = 0",
        ),
        claim(
            "the coexact part a − (φ_i − φ_j) is divergence-free: row sums vanish",
            (coexact * sp.ones(N, 1)).applyfunc(sp.expand),
            statement=r"\sum_j a^\perp_{ij} = \sum_j a_{ij} - N\varphi_i + \sum_j\varphi_j = 0,\quad a^\perp_{ij} = a_{ij} - (\varphi_i - \varphi_j)",
            because="Σ_j a_ij = Nφ_i by definition and Σ_j φ_j = 0 by antisymmetry of a",
        ),
    ]


def _verify_hodge(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: on K_N the least-squares potential is φ_i = (1/N) Σ_j a_ij (book/reference.md §A.7) and the coexact
    part has zero row sums; on a random sparse graph the coexact part is divergence-free and
    orthogonal to the exact part.  Tolerance 1e-12 (a Laplacian solve).
    """
    n = by_scale(scale, 30, 200)
    a = rng.standard_normal((n, n))
    a = to_backend((a - a.T) / 2, backend)
    split = hodge_split(a)
    phi = to_numpy(split[0])
    a_np = to_numpy(a)
    residual = float(np.max(np.abs(phi - a_np.mean(axis=1))))
    residual = max(residual, float(np.max(np.abs(to_numpy(split[2]).sum(axis=1)))))
    graph = nx.random_regular_graph(4, n, seed=int(rng.integers(1 << 31)))
    w = nx.to_scipy_sparse_array(graph, format="csr", dtype=float)
    w.data = rng.random(w.nnz) + 0.5
    w = (w + w.T) / 2
    field = w.copy()
    field.data = rng.standard_normal(field.nnz)
    field = (field - field.T) / 2
    split = hodge_split(field, w)
    exact, coexact = (x.toarray() if scipy.sparse.issparse(x) else np.asarray(x) for x in split[1:3])
    wd = w.toarray()
    residual = max(
        residual, float(np.max(np.abs((wd * coexact).sum(axis=1)))), abs(float(np.sum(wd * exact * coexact)))
    )
    return Verification.from_residual(residual, 1e-12, n=n)


def _outside_hodge_weighted(rng) -> Verification:
    """A weighted complete graph: the potential is no longer the row mean.

    K_30 with symmetric weights w_ij uniform in [0.5, 1.5]; the weighted least-squares potential from hodge_split,
    its additive constant removed, against (1/N)Σ_j a_ij.  Measured residual 0.11 against the tolerance 1e-12.
    """
    n = 30
    a = rng.standard_normal((n, n))
    a = (a - a.T) / 2
    w = rng.uniform(0.5, 1.5, (n, n))
    w = np.triu(w, 1) + np.triu(w, 1).T
    phi = to_numpy(hodge_split(a, w)[0])
    residual = float(np.max(np.abs(phi - phi.mean() - a.mean(axis=1))))
    return Verification.from_residual(residual, 1e-12, n=n)


def _outside_hodge_not_antisymmetric(rng) -> Verification:
    """An a that is not antisymmetric: the row mean misses its potential.

    A standard normal matrix on K_30.  Its symmetric part is orthogonal to every gradient, so its least-squares
    potential is that of ½(a − aᵀ) (hodge_split refuses a itself), and the row mean misses it by
    (1/2N)Σ_j(a_ij + a_ji).  Measured residual 0.31 against the tolerance 1e-12.
    """
    n = 30
    a = rng.standard_normal((n, n))
    phi = to_numpy(hodge_split((a - a.T) / 2)[0])
    residual = float(np.max(np.abs(phi - a.mean(axis=1))))
    return Verification.from_residual(residual, 1e-12, n=n)


def _verify_beurling_deny(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: local + jump + killing = ℰ(f,f) = Σ p_i f_i (Lf)_i + Σ κ f² (the dense quadratic form),
    at every radius, on a Swiss-roll Gauss kernel; tolerance 1e-12 relative.
    """
    n = by_scale(scale, 300, 2000)
    points = SwissRoll().sample(n, seed=rng)
    kernel = gauss_kernel(points, 0.5)
    distances = np.sqrt(np.maximum(np.sum((points[:, None] - points[None]) ** 2, -1), 0.0))
    f = np.cos(points[:, 0]) + 0.1 * rng.standard_normal(n)
    killing = rng.random(n) * 0.01
    degree = kernel.sum(1)
    quadratic = float(np.sum(degree * f * (f - (kernel @ f) / degree)) + np.sum(killing * f * f))
    residual = 0.0
    for radius in (0.5, 2.0, 8.0):
        parts = beurling_deny_split(kernel, distances, radius, f, killing=killing)
        residual = max(residual, abs(parts.local + parts.jump + parts.killing - quadratic) / quadratic)
    return Verification.from_residual(residual, 1e-12, n=n, radii=3)


def _outside_beurling_deny_asymmetric(rng) -> Verification:
    """K not symmetric: the bond split misses ℰ.

    The check's Swiss-roll Gauss kernel (n = 300) with row i scaled by c_i uniform in [0.5, 1.5].  Then
    Σ p_i f_i(Lf)_i = Σ_ij K_ij f_i² − Σ_ij K_ij f_i f_j while the bond sum counts ½Σ_ij K_ij(f_i² + f_j²); the split
    is written out (beurling_deny_split refuses an asymmetric kernel).  Measured residual 0.030 against the
    tolerance 1e-12.
    """
    n = 300
    points = SwissRoll().sample(n, seed=rng)
    kernel = gauss_kernel(points, 0.5) * rng.uniform(0.5, 1.5, n)[:, None]
    distances = np.sqrt(np.maximum(np.sum((points[:, None] - points[None]) ** 2, -1), 0.0))
    f = np.cos(points[:, 0]) + 0.1 * rng.standard_normal(n)
    killing = rng.random(n) * 0.01
    degree = kernel.sum(1)
    quadratic = float(np.sum(degree * f * (f - (kernel @ f) / degree)) + np.sum(killing * f * f))
    bonds = 0.5 * kernel * (f[:, None] - f[None, :]) ** 2
    residual = 0.0
    for radius in (0.5, 2.0, 8.0):
        local, jump = float(np.sum(bonds[distances <= radius])), float(np.sum(bonds[distances > radius]))
        residual = max(residual, abs(local + jump + float(np.sum(killing * f * f)) - quadratic) / quadratic)
    return Verification.from_residual(residual, 1e-12, n=n, radii=3)


def _derive_beurling_deny() -> list[Step]:
    k = _symmetric_kernel_symbols()
    f = sp.Matrix(sp.symbols(f"f0:{N}"))
    kappa = sp.Matrix(sp.symbols(f"kappa0:{N}", nonnegative=True))
    p = k * sp.ones(N, 1)
    lf = f - sp.diag(*p).inv() * k * f
    quadratic = sum(p[i] * f[i] * lf[i] for i in range(N)) + sum(kappa[i] * f[i] ** 2 for i in range(N))
    bonds = sp.Rational(1, 2) * sum(k[i, j] * (f[i] - f[j]) ** 2 for i in range(N) for j in range(N))
    return [
        claim(
            "Σ p_i f_i (Lf)_i + Σ κ_i f_i² = ½ Σ K_ij (f_i − f_j)² + Σ κ_i f_i² (any split of the bonds by "
            "distance adds up)",
            sp.expand(sp.simplify(quadratic)),
            sp.expand(bonds + sum(kappa[i] * f[i] ** 2 for i in range(N))),
            statement=r"\sum_i\mathsf p_if_i(\mathsf Lf)_i + \sum_i\kappa_if_i^2 = \tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2 + \sum_i\kappa_if_i^2 = \mathcal E_{\mathrm{local}} + \mathcal E_{\mathrm{jump}} + \mathcal E_{\mathrm{kill}}",
            because="the edge form of the Dirichlet energy (K symmetric); the bond sum splits by d_ij ≤ r or > r, and the killing term is separate",
        ),
    ]


SOURCE_A5 = "Attention Geometry §5 [RECON, standard]; book/reference.md §A.5"

IDENTITIES = [
    Identity(
        name="markov.doob.reversible",
        area="markov",
        statement=r"\mathsf P_h = \operatorname{diag}(\mathsf Kh)^{-1}\mathsf K\operatorname{diag}(h)\ \text{is reversible with}"
        r"\ \pi^{(h)} \propto h\odot\mathsf Kh\quad(\mathsf K = \mathsf K^\top \ge 0,\ h > 0)",
        source="Attention Geometry §4 [SEED]; reversibility [DERIVED] (book/reference.md §A.4)",
        derive=_derive_doob,
        verify=_verify_doob,
        hypotheses=(
            Hypothesis(
                "K symmetric: K = Kᵀ",
                "the Swiss-roll Gauss kernel with each entry scaled by an independent factor in [1, 2]",
                _outside_doob_asymmetric,
            ),
            Hypothesis(
                "K ≥ 0 and h > 0 with Kh > 0",
                reason="what makes P_h a Markov operator (nonnegative rows summing to 1) and π^(h) a law; for a "
                "signed h the algebra π_iP_ij = h_iK_ijh_j still holds, so no case outside it breaks the formula",
            ),
        ),
    ),
    Identity(
        name="markov.gamma.two_forms",
        area="markov",
        statement=r"\Gamma(f,g)_i = \tfrac12[\mathcal L(fg) - f\mathcal Lg - g\mathcal Lf]_i"
        r" = \tfrac12\sum_j\mathsf P_{ij}(f_j - f_i)(g_j - g_i),\quad \Gamma(f,f) \ge 0"
        r"\quad(\mathcal L = \mathsf P - I,\ \mathsf P\mathbf 1 = \mathbf 1,\ \mathsf P_{ij} \ge 0)",
        source=SOURCE_A5,
        derive=_derive_gamma,
        verify=_verify_gamma,
        hypotheses=(
            Hypothesis(
                "rows of P sum to 1 (P1 = 1), with ℒ = P − I",
                "0.9·P, a walk killed at rate 0.1 per step, on the check's Swiss-roll operator",
                _outside_gamma_killed,
            ),
            Hypothesis(
                "P_ij ≥ 0 (needed for Γ(f,f) ≥ 0)",
                "1.5P − 0.5Q, Q a random permutation matrix: rows still sum to 1, some rates negative",
                _outside_gamma_signed,
            ),
        ),
    ),
    Identity(
        name="markov.bakry_emery.flat_limits",
        area="markov",
        statement=r"4\beta\Gamma(f,g) \to \nabla f\cdot\nabla g,\ (4\beta)^2\Gamma_2(f) \to \lVert\operatorname{Hess}f\rVert^2"
        r" - 2(1-\alpha)\operatorname{Hess}\log q(\nabla f,\nabla f),"
        r"\ \Gamma(g,\Gamma(f,h)) + \Gamma(h,\Gamma(f,g)) - \Gamma(f,\Gamma(g,h)) \to 2\hbar^2\operatorname{Hess}f(\nabla g,\nabla h)"
        r"\quad(\mathsf P = \mathsf P^{(\alpha)}\ \text{on quadrature nodes of a density } q > 0 \text{ on } \mathbb R^2"
        r"\ \text{resolving the kernel},\ x\ \text{interior})",
        source="Attention Geometry §5 [SEED fragment + DERIVED], ħ = 1/(4β); the drift term [DERIVED]; "
        "book/reference.md §A.5",
        derive=_derive_flat_limits,
        verify=_verify_flat_limits,
        asymptotic=True,
        backends=("numpy",),
        hypotheses=(
            Hypothesis(
                "the nodes resolve the kernel: spacing ≲ 0.6/√β as β → ∞",
                "a lattice step of 2/√β in the uniform coordinates (image step up to 2.7/√β), α = 0",
                _outside_flat_coarse,
            ),
            Hypothesis(
                "the nodes are quadrature nodes of q (a lattice mapped by the inverse cumulative function of q), "
                "not independent samples",
                "as many independent samples of q from the same region, x₀ added, α = 0",
                _outside_flat_iid,
            ),
            Hypothesis(
                "x is interior: its distance to the edge of the sampled region is ≫ 1/√β",
                "x₀ on the edge of the sampled region (the quadrature lattice cut to t ≥ t₀), α = 0",
                _outside_flat_edge,
            ),
            Hypothesis(
                "the nodes lie in flat ℝ² (Ric = 0); ∇ and Hess are Euclidean",
                reason="this fixes what ∇, Hess and Γ₂'s limit mean here; on a curved sample Γ₂ gains "
                "Ric(∇f, ∇f), the identity continuum.kernel.bochner_gamma2",
            ),
        ),
    ),
    Identity(
        name="markov.current.circulation",
        area="markov",
        statement=r"\mathsf J\mathbf 1 = 0,\quad \Omega_\pi(f,g) = \tfrac12 f^\top\mathsf Jg"
        r" = \langle f, \tfrac12(\mathsf P - \mathsf P^*)g\rangle_\pi,\quad \Omega_\pi \equiv 0 \iff \text{detailed balance}"
        r"\quad(\pi^\top\mathsf P = \pi^\top)",
        source="Attention Geometry §5, §7 [RECON defs, DERIVED identities]; book/reference.md §A.5, §A.7",
        derive=_derive_current,
        verify=_verify_current,
        hypotheses=(
            Hypothesis(
                "π is stationary: πᵀP = πᵀ (for J1 = 0)",
                "the uniform law in place of the stationary law of a head with a free link (n = 60)",
                _outside_current_not_stationary,
            ),
        ),
    ),
    Identity(
        name="markov.cycles.affinity",
        area="markov",
        statement=r"\mathfrak A(\gamma) = \sum_m\log\frac{\mathsf P_{i_mi_{m+1}}}{\mathsf P_{i_{m+1}i_m}}"
        r" = 2\beta\sum_m\mathcal A_{i_mi_{m+1}};\quad \mathfrak A \equiv 0 \iff \text{reversible}"
        r"\quad(\gamma\ \text{closed},\ \mathsf P = \operatorname{rownorm}e^{\beta(\mathsf S + \mathsf A)}\ \text{with one } \beta)",
        source="Attention Geometry §4, §7 [DERIVED]; Kolmogorov criterion; book/reference.md §A.7",
        derive=_derive_affinity,
        verify=_verify_affinity,
        hypotheses=(
            Hypothesis(
                "γ is closed: i_M = i_0 (the log Z_i telescope)",
                "the open paths 0 → i → j, without the step back to 0",
                _outside_affinity_open,
            ),
            Hypothesis(
                "one inverse temperature β for every row of the head",
                "P_ij ∝ exp(β_i(S + A)_ij) with β_i uniform in [0.4, 1.0], compared with 2β̄ΣA, β̄ = 0.7",
                _outside_affinity_row_temperatures,
            ),
        ),
    ),
    Identity(
        name="markov.gauge.hatano_nelson",
        area="markov",
        statement=r"\tfrac12\mathsf D_Q^\top\mathsf D_K = \operatorname{diag}(\bar{\mathsf A}\mathbf 1) - \bar{\mathsf A}\odot e^\theta"
        r" = \operatorname{diag}(\pi)\mathsf L + \operatorname{diag}(V),\ V \le 0\quad(\pi^\top\mathsf P = \pi^\top)",
        source="Attention Geometry §7 [SEED defs of D_K, D_Q; Ā, θ are a RECON]; book/reference.md §A.7",
        derive=_derive_gauge,
        verify=_verify_gauge,
        hypotheses=(
            Hypothesis(
                "π is stationary: πᵀP = πᵀ (for V ≤ 0)",
                "the uniform law in place of the stationary law of a reversible head (exact link, n = 40)",
                _outside_gauge_not_stationary,
            ),
            Hypothesis(
                "the support is symmetric: P_ij > 0 ⇔ P_ji > 0",
                reason="what makes Ā_ij = √(A_ij A_ji) and θ_ij = ½ log(A_ij/A_ji) defined; hatano_nelson refuses "
                "any other support",
            ),
        ),
    ),
    Identity(
        name="markov.curvature.graphs",
        area="markov",
        statement=r"K_\infty(K_n) = 1 + \tfrac n2,\ K_\infty(C_n) = 0\ (n \ge 5),\ K_\infty(Q_d) = 2\ "
        r"\text{(normalised: } \tfrac{n+2}{2(n-1)}, 0, \tfrac2d)",
        source="Attention Geometry §8 (Lin–Yau, Bauer et al.); Cushing–Liu–Peyerimhoff (2020) [published values]",
        derive=_derive_curvature,
        verify=_verify_curvature,
        backends=("numpy",),
        hypotheses=(
            Hypothesis(
                "n ≥ 5 for the cycle C_n",
                "C₃ and C₄ (C₃ = K₃: K_∞ = 5/2, C₄ = Q₂: K_∞ = 2; normalised 5/4 and 1)",
                _outside_curvature_short_cycles,
            ),
        ),
    ),
    Identity(
        name="markov.hodge.split",
        area="markov",
        statement=r"a_{ij} = (\varphi_i - \varphi_j) + a^\perp_{ij},\ \sum_j w_{ij}a^\perp_{ij} = 0;"
        r"\ \text{on } K_N:\ \varphi_i = \tfrac1N\sum_j a_{ij}\quad(a = -a^\top;\ K_N\ \text{unweighted})",
        source="Attention Geometry §7 [DERIVED]; book/reference.md §A.7",
        derive=_derive_hodge,
        verify=_verify_hodge,
        hypotheses=(
            Hypothesis(
                "a is antisymmetric: a_ij = −a_ji",
                "a standard normal matrix on K_30, its least-squares potential that of ½(a − aᵀ)",
                _outside_hodge_not_antisymmetric,
            ),
            Hypothesis(
                "for φ_i = (1/N)Σ_j a_ij: the complete graph with unit weights",
                "K_30 with symmetric weights w_ij uniform in [0.5, 1.5]",
                _outside_hodge_weighted,
            ),
        ),
    ),
    Identity(
        name="markov.beurling_deny.split",
        area="markov",
        statement=r"\mathcal E(f,f) = \tfrac12\sum_{d_{ij}\le r}\mathsf K_{ij}(f_i-f_j)^2"
        r" + \tfrac12\sum_{d_{ij}>r}\mathsf K_{ij}(f_i-f_j)^2 + \sum_i\kappa_if_i^2\quad(\mathsf K = \mathsf K^\top)",
        source="Attention Geometry §6 [mostly RECON]; book/reference.md §A.6",
        derive=_derive_beurling_deny,
        verify=_verify_beurling_deny,
        backends=("numpy",),
        hypotheses=(
            Hypothesis(
                "K symmetric: K = Kᵀ",
                "the Swiss-roll Gauss kernel with row i scaled by c_i uniform in [0.5, 1.5]",
                _outside_beurling_deny_asymmetric,
            ),
        ),
    ),
]
