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

from derivations._common import as_float, by_scale
from workbench.backend import namespace, to_backend, to_numpy
from workbench.catalogue import Identity, Step, Verification, claim
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
    points = SwissRoll().sample(n, seed=rng)
    kernel_np = gauss_kernel(points, 1.0 / float(np.median(np.sum((points - points.mean(0)) ** 2, 1))))
    kernel = to_backend(kernel_np, backend)
    xp = namespace(kernel)
    worst = 0.0
    for h_np in (kernel_np.sum(1) ** -0.5, rng.random(n) + 0.1):
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


# ---- continuum limits of Γ, Γ₂ and the Hessian form in the plane ------------------------------

REACH = 8  # lattice units; exp(-0.36·64) ≈ 1e-10 truncates the Gauss kernel


def _verify_flat_limits(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: flat ℝ² with ħ = 1/(4β): 4βΓ(f,g) → ∇f·∇g, (4β)²Γ₂(f) → ‖Hess f‖² (Ric = 0) and
    (4β)²·½[Γ(g,Γ(f,h)) + Γ(h,Γ(f,g)) − Γ(f,Γ(g,h))] → Hess f(∇g,∇h), each with bias O(1/β).

    A square lattice of spacing 0.6/√β (spectrally accurate Gauss quadrature), the worst relative
    error of the three at one interior vertex; fitted slope 1 in 1/β, tolerance 0.05.  A linear
    function must have Γ₂ = 0 to rounding at every β (relative to Γ², below 1e-8).
    """
    betas = np.array([200.0, 400.0, 800.0, 1600.0, 3200.0])
    half = 2 * REACH + 1
    grid = np.arange(-half, half + 1)
    a, b = (x.ravel() for x in np.meshgrid(grid, grid, indexing="ij"))
    centre = int(np.flatnonzero((a == 0) & (b == 0))[0])
    x0 = np.array([0.3, -0.2])
    errors = []
    for beta in betas:
        h = 0.6 / math.sqrt(beta)
        x, y = x0[0] + h * a, x0[1] + h * b
        kernel = gauss_kernel_sparse(np.column_stack([x, y]), beta, radius=REACH * h * 1.0001)
        p = MarkovOperator.from_kernel(kernel).P
        f, g, hh = np.sin(x) * np.cos(2 * y), np.exp(0.5 * x - y), x * y + np.cos(y)
        grad_f = np.array([math.cos(x0[0]) * math.cos(2 * x0[1]), -2 * math.sin(x0[0]) * math.sin(2 * x0[1])])
        hess_f = np.array(
            [
                [-math.sin(x0[0]) * math.cos(2 * x0[1]), -2 * math.cos(x0[0]) * math.sin(2 * x0[1])],
                [-2 * math.cos(x0[0]) * math.sin(2 * x0[1]), -4 * math.sin(x0[0]) * math.cos(2 * x0[1])],
            ]
        )
        grad_g = math.exp(0.5 * x0[0] - x0[1]) * np.array([0.5, -1.0])
        grad_h = np.array([x0[1], x0[0] - math.sin(x0[1])])
        exact = (grad_f @ grad_g, np.sum(hess_f * hess_f), grad_g @ hess_f @ grad_h)
        got = (
            4 * beta * carre_du_champ(p, f, g)[centre],
            (4 * beta) ** 2 * gamma2(p, f)[centre],
            (4 * beta) ** 2 * hessian_form(p, f, g, hh)[centre],
        )
        errors.append(max(abs(u - v) / abs(v) for u, v in zip(got, exact, strict=True)))
        linear = 2.0 * x - 3.0 * y  # zero Hessian and no curvature: Γ₂ vanishes up to rounding
        flat = (4 * beta) ** 2 * gamma2(p, linear)[centre] / (4 * beta * carre_du_champ(p, linear)[centre]) ** 2
        if abs(flat) > 1e-8:
            errors[-1] = math.inf
    return Verification.from_rate(1 / betas, errors, expected=1.0, tolerance=0.05, lattice=f"{grid.size}²")


def _derive_flat_limits() -> list[Step]:
    beta = sp.Symbol("beta", positive=True)
    u, v = sp.symbols("u v", real=True)
    weight = sp.exp(-beta * (u**2 + v**2))
    mass = sp.integrate(weight, (u, -sp.oo, sp.oo), (v, -sp.oo, sp.oo))
    a, b, c, d, e = sp.symbols("a b c d e", real=True)
    f = a * u + b * v + c * u**2 / 2 + d * u * v + e * v**2 / 2  # a quadratic around 0
    gamma_ff = sp.integrate(f**2 * weight, (u, -sp.oo, sp.oo), (v, -sp.oo, sp.oo)) / mass / 2
    return [
        Step(
            "Gauss kernel exp(−β|u|²) on ℝ², f a quadratic with ∇f(0) = (a, b), Hess f = [[c, d], [d, e]]",
            f,
            statement=r"\Gamma(f,f)(0) = \tfrac12\,\mathbb E_{u\sim\mathcal N(0,\frac1{2\beta}I_2)}\big[(f(u) - f(0))^2\big],\quad f(u) = \nabla f(0)\cdot u + \tfrac12 u^\top\operatorname{Hess}f\,u",
            because="in the continuum, P_β is averaging against the normalised Gauss weight e^{−β|u|²}, whose covariance is I/(2β)",
        ),
        claim(
            "Γ(f,f)(0) = ½ E[(f(u) − f(0))²] = |∇f|²/(4β) + (tr² Hess + 2‖Hess‖²)/(32β²)",
            sp.expand(sp.simplify(gamma_ff)),
            sp.expand((a**2 + b**2) / (4 * beta) + ((c + e) ** 2 + 2 * (c**2 + 2 * d**2 + e**2)) / (32 * beta**2)),
            statement=r"\Gamma(f,f)(0) = \frac{\lvert\nabla f\rvert^2}{4\beta} + \frac{(\operatorname{tr}\operatorname{Hess}f)^2 + 2\lVert\operatorname{Hess}f\rVert_F^2}{32\beta^2}",
            because="Gaussian moments E[u_a u_b] = δ_ab/(2β) and Isserlis for the fourth moments; odd moments vanish",
        ),
        Step(
            "so ħ = 1/(4β): 4βΓ → |∇f|², and (4β)²Γ₂ → ‖Hess f‖² + Ric(∇f,∇f) with Ric = 0 (flat)",
            sp.Eq(sp.Symbol("hbar"), 1 / (4 * beta)),
            statement=r"\hbar = \frac1{4\beta}:\quad \hbar^{-1}\Gamma(f,f) \to \lvert\nabla f\rvert^2,\quad \hbar^{-2}\Gamma_2(f) \to \lVert\operatorname{Hess}f\rVert^2 + \operatorname{Ric}(\nabla f,\nabla f),\ \operatorname{Ric} = 0",
            because="the leading term of 4βΓ is |∇f|²; the Bochner formula on flat ℝ² has no Ricci term",
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
    op = MarkovOperator(p_np)
    pi_np = to_numpy(op.stationary)
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
        r"\ \pi^{(h)} \propto h\odot\mathsf Kh",
        source="Attention Geometry §4 [SEED]; reversibility [DERIVED] (book/reference.md §A.4)",
        derive=_derive_doob,
        verify=_verify_doob,
    ),
    Identity(
        name="markov.gamma.two_forms",
        area="markov",
        statement=r"\Gamma(f,g)_i = \tfrac12[\mathcal L(fg) - f\mathcal Lg - g\mathcal Lf]_i"
        r" = \tfrac12\sum_j\mathsf P_{ij}(f_j - f_i)(g_j - g_i),\quad \Gamma(f,f) \ge 0",
        source=SOURCE_A5,
        derive=_derive_gamma,
        verify=_verify_gamma,
    ),
    Identity(
        name="markov.bakry_emery.flat_limits",
        area="markov",
        statement=r"4\beta\Gamma(f,g) \to \nabla f\cdot\nabla g,\ (4\beta)^2\Gamma_2(f) \to \lVert\operatorname{Hess}f\rVert^2,"
        r"\ \Gamma(g,\Gamma(f,h)) + \Gamma(h,\Gamma(f,g)) - \Gamma(f,\Gamma(g,h)) \to 2\hbar^2\operatorname{Hess}f(\nabla g,\nabla h)",
        source="Attention Geometry §5 [SEED fragment + DERIVED], ħ = 1/(4β); book/reference.md §A.5",
        derive=_derive_flat_limits,
        verify=_verify_flat_limits,
        asymptotic=True,
        backends=("numpy",),
    ),
    Identity(
        name="markov.current.circulation",
        area="markov",
        statement=r"\mathsf J\mathbf 1 = 0,\quad \Omega_\pi(f,g) = \tfrac12 f^\top\mathsf Jg"
        r" = \langle f, \tfrac12(\mathsf P - \mathsf P^*)g\rangle_\pi,\quad \Omega_\pi \equiv 0 \iff \text{detailed balance}",
        source="Attention Geometry §5, §7 [RECON defs, DERIVED identities]; book/reference.md §A.5, §A.7",
        derive=_derive_current,
        verify=_verify_current,
    ),
    Identity(
        name="markov.cycles.affinity",
        area="markov",
        statement=r"\mathfrak A(\gamma) = \sum_m\log\frac{\mathsf P_{i_mi_{m+1}}}{\mathsf P_{i_{m+1}i_m}}"
        r" = 2\beta\sum_m\mathcal A_{i_mi_{m+1}};\quad \mathfrak A \equiv 0 \iff \text{reversible}",
        source="Attention Geometry §4, §7 [DERIVED]; Kolmogorov criterion; book/reference.md §A.7",
        derive=_derive_affinity,
        verify=_verify_affinity,
    ),
    Identity(
        name="markov.gauge.hatano_nelson",
        area="markov",
        statement=r"\tfrac12\mathsf D_Q^\top\mathsf D_K = \operatorname{diag}(\bar{\mathsf A}\mathbf 1) - \bar{\mathsf A}\odot e^\theta"
        r" = \operatorname{diag}(\pi)\mathsf L + \operatorname{diag}(V),\ V \le 0",
        source="Attention Geometry §7 [SEED defs of D_K, D_Q; Ā, θ are a RECON]; book/reference.md §A.7",
        derive=_derive_gauge,
        verify=_verify_gauge,
    ),
    Identity(
        name="markov.curvature.graphs",
        area="markov",
        statement=r"K_\infty(K_n) = 1 + \tfrac n2,\ K_\infty(C_n) = 0,\ K_\infty(Q_d) = 2\ "
        r"\text{(normalised: } \tfrac{n+2}{2(n-1)}, 0, \tfrac2d)",
        source="Attention Geometry §8 (Lin–Yau, Bauer et al.); Cushing–Liu–Peyerimhoff (2020) [published values]",
        derive=_derive_curvature,
        verify=_verify_curvature,
        backends=("numpy",),
    ),
    Identity(
        name="markov.hodge.split",
        area="markov",
        statement=r"a_{ij} = (\varphi_i - \varphi_j) + a^\perp_{ij},\ \sum_j w_{ij}a^\perp_{ij} = 0;"
        r"\ \text{on } K_N:\ \varphi_i = \tfrac1N\sum_j a_{ij}",
        source="Attention Geometry §7 [DERIVED]; book/reference.md §A.7",
        derive=_derive_hodge,
        verify=_verify_hodge,
    ),
    Identity(
        name="markov.beurling_deny.split",
        area="markov",
        statement=r"\mathcal E(f,f) = \tfrac12\sum_{d_{ij}\le r}\mathsf K_{ij}(f_i-f_j)^2"
        r" + \tfrac12\sum_{d_{ij}>r}\mathsf K_{ij}(f_i-f_j)^2 + \sum_i\kappa_if_i^2",
        source="Attention Geometry §6 [mostly RECON]; book/reference.md §A.6",
        derive=_derive_beurling_deny,
        verify=_verify_beurling_deny,
        backends=("numpy",),
    ),
]
