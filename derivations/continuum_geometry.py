r"""Riemannian geometry of the continuum generator: the Bochner formula and the Witten–Girsanov structure.

Source: Attention Geometry §4 (Witten–Novikov–Girsanov) and §5 (Bakry–Émery I); book/reference.md
§A.4 [SEED generator 𝒞_𝒜 f = −ħΔ_G f + 2⟨𝒜, df⟩_G, DERIVED properties] and §A.5 [RECON, standard
Bakry–Émery].  Everything is computed in coordinates with :mod:`workbench.continuum`:

* ``continuum.bakry_emery.bochner`` — Γ and Γ₂ of ℒ = −𝒞_{dΦ} = ħΔ_G − 2⟨dΦ, d·⟩_G, computed from their
  definitions, equal Γ(f,g) = ħ⟨∇f,∇g⟩_G and the Bochner form
  Γ₂(f) = ħ²‖Hess f‖² + ħ²Ric(∇f,∇f) + 2ħ HessΦ(∇f,∇f) on flat ℝ², the round sphere and a surface of
  revolution; the Hessian identity of §A.5 on all three.
* ``continuum.witten.girsanov`` — divergence form, ground-state (Witten) conjugation and stationarity of
  μ = e^{−2Φ/ħ}dV_G for 𝒞_{dΦ}; a coexact drift keeps μ stationary and breaks μ-symmetry.

Scale: ħ is the scale of §A.3–§A.4; for a Gauss kernel K_β(x,y) = exp(−β(y−x)ᵀG(y−x)) the limit
4ħβ(I − 𝒫_β) → 𝒞 holds with ħ = 1/(4β).  Here ħ stays a free positive symbol: every identity is exact
in ħ, no kernel is sampled.

The discrete counterpart — Γ₂ of a Gauss-kernel operator on nodes of the sphere and of the flat torus
against this Bochner value, Ricci term included, as an O(1/β) rate — is
``continuum.kernel.bochner_gamma2`` in :mod:`derivations.continuum_kernel`.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.continuum import (
    RiemannianMetric,
    bakry_emery_gamma,
    bakry_emery_gamma2,
    bochner_gamma2,
    diffusion_generator,
    formal_adjoint,
    witten_generator,
    witten_potential,
)

from ._common import by_scale

HBAR = sp.Symbol("hbar", positive=True)
X, Y = sp.symbols("x y", real=True)
THETA, PHI_, RADIUS = sp.symbols("theta phi r", positive=True)
U = sp.Symbol("u", real=True)


def plane() -> RiemannianMetric:
    """Flat ℝ² (or the flat torus (ℝ/2πℤ)²) in Cartesian coordinates (x, y)."""
    return RiemannianMetric(sp.eye(2), (X, Y))


def sphere(radius=RADIUS) -> RiemannianMetric:
    """The round sphere of radius r: G = diag(r², r² sin²θ) on 0 < θ < π, √g = r² sin θ."""
    return RiemannianMetric(
        sp.diag(radius**2, radius**2 * sp.sin(THETA) ** 2), (THETA, PHI_), radius**2 * sp.sin(THETA)
    )


def revolution(profile=None) -> RiemannianMetric:
    """A surface of revolution du² + r(u)²dθ² (r > 0), √g = r(u); ``profile`` defaults to a symbolic r(u)."""
    r = sp.Function("r", positive=True)(U) if profile is None else profile
    return RiemannianMetric(sp.diag(1, r**2), (U, THETA), r)


def _generic(name, metric):
    return sp.Function(name)(*metric.coordinates)


def _zero(expr) -> sp.Expr:
    """Simplify after expanding (derivative products cancel term by term); trigsimp when simplify stalls.

    On the sphere, simplify leaves forms like sin 2θ·tan θ + cos 2θ − 1 that trigsimp recognises as 0.
    """
    expanded = sp.expand(expr)
    simplified = sp.simplify(expanded)
    return simplified if simplified == 0 else sp.expand(sp.trigsimp(expanded))


# ---- Bakry–Émery: Γ, Γ₂ and Bochner ----------------------------------------------------------------


def _bochner_steps(label: str, metric: RiemannianMetric, hessian_identity: bool) -> list[Step]:
    f, g, h, phi = (_generic(n, metric) for n in ("f", "g", "h", "Phi"))
    L = diffusion_generator(metric, phi, HBAR)
    steps = [
        claim(
            f"{label}: Γ(f,g) = ½[ℒ(fg) − fℒg − gℒf] = ħ⟨∇f,∇g⟩_G",
            _zero(bakry_emery_gamma(L, f, g)),
            _zero(HBAR * metric.inner(metric.differential(f), metric.differential(g))),
            statement=r"\Gamma(f,g) = \tfrac12\big[\mathcal L(fg) - f\mathcal Lg - g\mathcal Lf\big] = \hbar\langle\nabla f,\nabla g\rangle_G",
            because="the Leibniz rule Δ(fg) = fΔg + gΔf + 2⟨∇f,∇g⟩ leaves only the cross term; the first-order drift is a derivation and drops out",
        ),
        claim(
            f"{label}: Γ₂(f) = ½[ℒΓ(f,f) − 2Γ(f,ℒf)] = ħ²‖Hess f‖² + ħ²Ric(∇f,∇f) + 2ħ HessΦ(∇f,∇f)",
            _zero(bakry_emery_gamma2(L, f) - bochner_gamma2(metric, f, phi, HBAR)),
            statement=r"\Gamma_2(f) = \tfrac12\big[\mathcal L\Gamma(f,f) - 2\Gamma(f,\mathcal Lf)\big] = \hbar^2\lVert\operatorname{Hess}f\rVert^2 + \hbar^2\operatorname{Ric}(\nabla f,\nabla f) + 2\hbar\operatorname{Hess}\Phi(\nabla f,\nabla f)",
            because="Bochner's formula ½Δ|∇f|² = ‖Hess f‖² + ⟨∇f,∇Δf⟩ + Ric(∇f,∇f), plus the drift term of ℒ; sympy checks it with generic f, Φ on the metric",
        ),
    ]
    if hessian_identity:
        # Γ depends on Φ only through ħ⟨·,·⟩_G, so the identity is stated for the heat generator ħΔ_G.
        heat = diffusion_generator(metric, 0, HBAR)

        def gam(a, b):
            return bakry_emery_gamma(heat, a, b)

        lhs = gam(g, gam(f, h)) + gam(h, gam(f, g)) - gam(f, gam(g, h))
        rhs = 2 * HBAR**2 * metric.bilinear(metric.hessian(f), metric.gradient(g), metric.gradient(h))
        steps.append(
            claim(
                f"{label}: Γ(g,Γ(f,h)) + Γ(h,Γ(f,g)) − Γ(f,Γ(g,h)) = 2ħ² Hess f(∇g,∇h)",
                _zero(lhs - rhs),
                statement=r"\Gamma(g,\Gamma(f,h)) + \Gamma(h,\Gamma(f,g)) - \Gamma(f,\Gamma(g,h)) = 2\hbar^2\operatorname{Hess}f(\nabla g,\nabla h)",
                because="Γ = ħ⟨∇·,∇·⟩_G, and the Koszul formula expresses ∇²f(X, Y) through derivatives of inner products of gradients",
            )
        )
    return steps


def _derive_bochner() -> list[Step]:
    flat, round_, rev = plane(), sphere(), revolution()
    r_u = rev.volume_density
    steps = [
        Step(
            "ℒ = −𝒞_{dΦ}: ℒf = ħΔ_G f − 2⟨dΦ, df⟩_G, Δ_G f = g^{−1/2}∂_a(g^{1/2}G^{ab}∂_b f)",
            sp.Eq(sp.Symbol("ℒf"), HBAR * sp.Symbol("Δ_G f") - 2 * sp.Symbol("⟨dΦ,df⟩_G")),
            statement=r"\mathcal Lf = \hbar\Delta_Gf - 2\langle d\Phi, df\rangle_G,\quad \Delta_Gf = g^{-1/2}\partial_a\big(g^{1/2}G^{ab}\partial_bf\big)",
            because="the diffusion generator with potential Φ; Δ_G is the Laplace–Beltrami operator in coordinates",
        ),
        claim(
            "flat ℝ²: Ric = 0",
            flat.ricci,
            sp.zeros(2, 2),
            statement=r"G = \delta:\ \operatorname{Ric} = 0",
            because="all Christoffel symbols vanish",
        ),
        claim(
            "round sphere of radius r: Ric = G/r²",
            round_.ricci,
            round_.metric / RADIUS**2,
            statement=r"G = r^2(d\theta^2 + \sin^2\theta\,d\varphi^2):\ \operatorname{Ric} = \frac{1}{r^2}G",
            because="a surface has Ric = K·G, and the round sphere has Gaussian curvature K = 1/r²",
        ),
        claim(
            "surface of revolution du² + r(u)²dθ²: Ric = K G with Gaussian curvature K = −r''/r",
            rev.ricci,
            -sp.diff(r_u, U, 2) / r_u * rev.metric,
            statement=r"G = du^2 + r(u)^2d\theta^2:\ \operatorname{Ric} = KG,\quad K = -\frac{r''(u)}{r(u)}",
            because="the Jacobi equation for the geodesic spray of a warped product; r is a generic function",
        ),
    ]
    steps += _bochner_steps("flat ℝ²", flat, hessian_identity=True)
    steps += _bochner_steps("sphere", round_, hessian_identity=True)
    steps += _bochner_steps("surface of revolution", rev, hessian_identity=True)
    return steps


def _bochner_residual(metric: RiemannianMetric, points: np.ndarray, rng, n_functions: int) -> tuple[float, float]:
    """Max |Γ₂ − Bochner| relative to max |Γ₂| at ``points`` for random f, Φ; also the same without Ric.

    f and Φ are random combinations of polynomial and trigonometric monomials; their coefficients are
    symbols so one lambdified expression serves every draw.
    """
    a, b = metric.coordinates
    basis = [a * b, a**2 - b, sp.sin(a + 2 * b), sp.cos(2 * a - b), sp.exp(a / 2) * sp.cos(b)]
    cf = sp.symbols(f"c0:{len(basis)}", real=True)
    cp = sp.symbols(f"d0:{len(basis)}", real=True)
    f = sum(c * e for c, e in zip(cf, basis, strict=True))
    phi = sum(c * e for c, e in zip(cp, basis, strict=True))
    L = diffusion_generator(metric, phi, HBAR)
    gamma2 = bakry_emery_gamma2(L, f)
    args = (a, b, HBAR, *cf, *cp)
    g2 = sp.lambdify(args, gamma2, "numpy")
    full = sp.lambdify(args, bochner_gamma2(metric, f, phi, HBAR), "numpy")
    flat = sp.lambdify(args, bochner_gamma2(metric, f, phi, HBAR, ricci=False), "numpy")
    worst, worst_flat = 0.0, math.inf
    for _ in range(n_functions):
        hbar = rng.uniform(0.2, 1.0)
        coeffs = rng.standard_normal(2 * len(basis))
        exact = g2(points[:, 0], points[:, 1], hbar, *coeffs)
        scale = float(np.max(np.abs(exact)))
        worst = max(worst, float(np.max(np.abs(exact - full(points[:, 0], points[:, 1], hbar, *coeffs)))) / scale)
        miss = float(np.max(np.abs(exact - flat(points[:, 0], points[:, 1], hbar, *coeffs)))) / scale
        worst_flat = min(worst_flat, miss)
    return worst, worst_flat


def _verify_bochner(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: Γ₂ evaluated from its definition ½[ℒΓ(f,f) − 2Γ(f,ℒf)] (sympy differentiation, no
    simplification, lambdified) against the Bochner form at random points, for random f and Φ (random
    combinations of 5 polynomial/trigonometric/exponential functions) and random ħ ∈ [0.2, 1].

    Geometries: flat ℝ², the sphere of radius 1.3 (θ ∈ [0.4, π − 0.4], away from the coordinate poles
    where 1/sin θ amplifies rounding) and the torus of revolution r(u) = 2 + cos u (curvature of both
    signs).  Tolerance 1e-9 relative to max |Γ₂|: the definition sums a few hundred products of
    derivatives of size up to ~10³ times the result, so rounding alone reaches ~1e-12; 1e-9 leaves
    margin without admitting an O(1) error.  Negative control built in: dropping the Ricci term on the
    curved geometries must leave a residual above 1e-3, else the check fails.
    """
    n_points, n_functions = by_scale(scale, (200, 3), (5000, 20))
    worst = 0.0
    geometries = (
        (plane(), (-2.0, 2.0), (-2.0, 2.0), False),
        (sphere(sp.Rational(13, 10)), (0.4, math.pi - 0.4), (0.0, 2 * math.pi), True),
        (revolution(2 + sp.cos(U)), (0.0, 2 * math.pi), (0.0, 2 * math.pi), True),
    )
    for metric, (a0, a1), (b0, b1), curved in geometries:
        points = np.column_stack([rng.uniform(a0, a1, n_points), rng.uniform(b0, b1, n_points)])
        residual, without_ricci = _bochner_residual(metric, points, rng, n_functions)
        worst = max(worst, residual)
        if curved and without_ricci < 1e-3:
            worst = math.inf
    return Verification.from_residual(worst, 1e-9, points=n_points, functions=n_functions)


# ---- Witten–Girsanov ----------------------------------------------------------------------------

TORUS_PERIOD = 2 * sp.pi


def _coexact_drift(phi, psi, weighted: bool = True):
    """A^⊥ = e^{2Φ/ħ}(∂_yψ, −∂_xψ) on the flat torus: div(e^{−2Φ/ħ}A^⊥) = 0 for any periodic ψ.

    With ``weighted`` False the Gibbs weight is left out: (∂_yψ, −∂_xψ) is divergence-free for dx, not for μ.
    """
    weight = sp.exp(2 * phi / HBAR) if weighted else sp.Integer(1)
    return sp.Matrix([weight * sp.diff(psi, Y), -weight * sp.diff(psi, X)])


def _torus_antisymmetry(f, g, psi) -> sp.Expr:
    """∫_T² [g𝒞f − f𝒞g] dμ for A = dΦ + A^⊥: the Φ-free integral 2∫[(gf_x − fg_x)ψ_y − (gf_y − fg_y)ψ_x]dxdy."""
    integrand = 2 * (
        (g * sp.diff(f, X) - f * sp.diff(g, X)) * sp.diff(psi, Y)
        - (g * sp.diff(f, Y) - f * sp.diff(g, Y)) * sp.diff(psi, X)
    )
    return sp.integrate(integrand, (X, 0, TORUS_PERIOD), (Y, 0, TORUS_PERIOD))


def _witten_claims(label: str, metric: RiemannianMetric) -> list[Step]:
    f, u, phi = (_generic(n, metric) for n in ("f", "u", "Phi"))
    d_phi = metric.differential(phi)
    C = witten_generator(metric, d_phi, HBAR)
    gibbs = sp.exp(-2 * phi / HBAR)
    return [
        claim(
            f"{label} (a): 𝒞_{{dΦ}}f = −ħ e^{{2Φ/ħ}} div_G(e^{{−2Φ/ħ}}∇f)",
            _zero(C(f) + HBAR * sp.exp(2 * phi / HBAR) * metric.divergence(gibbs * metric.gradient(f))),
            statement=r"\mathcal C_{d\Phi}f = -\hbar\,e^{2\Phi/\hbar}\operatorname{div}_G\big(e^{-2\Phi/\hbar}\nabla f\big)",
            because="div(e^{−2Φ/ħ}∇f) = e^{−2Φ/ħ}(Δf − (2/ħ)⟨∇Φ,∇f⟩): the gradient drift is a weighted Laplacian",
        ),
        claim(
            f"{label} (b): e^{{−Φ/ħ}}𝒞_{{dΦ}}(e^{{Φ/ħ}}u) = −ħΔ_G u + (|dΦ|²_G/ħ − Δ_GΦ)u",
            _zero(
                sp.exp(-phi / HBAR) * C(sp.exp(phi / HBAR) * u)
                + HBAR * metric.laplacian(u)
                - witten_potential(metric, phi, HBAR) * u
            ),
            statement=r"e^{-\Phi/\hbar}\,\mathcal C_{d\Phi}\big(e^{\Phi/\hbar}u\big) = -\hbar\Delta_Gu + \Big(\frac{\lvert d\Phi\rvert_G^2}{\hbar} - \Delta_G\Phi\Big)u",
            because="the ground-state (Witten) conjugation: the first-order terms cancel and a Schrödinger potential remains",
        ),
        claim(
            f"{label} (c): 𝒞_{{dΦ}}^† (e^{{−2Φ/ħ}}√g) = 0, so μ = e^{{−2Φ/ħ}}dV_G is stationary",
            _zero(formal_adjoint(metric, d_phi, HBAR, gibbs * metric.volume_density)),
            statement=r"\mathcal C_{d\Phi}^\dagger\big(e^{-2\Phi/\hbar}\sqrt g\big) = 0\ \Rightarrow\ \mu = e^{-2\Phi/\hbar}dV_G \text{ is stationary}",
            because="by (a) 𝒞_{dΦ} is symmetric in L²(μ), so its formal adjoint kills the density of μ",
        ),
    ]


def _derive_girsanov() -> list[Step]:
    line_metric = sp.Function("G", positive=True)(X)
    line = RiemannianMetric([[line_metric]], (X,))
    steps = [
        Step(
            "𝒞_A f = −ħΔ_G f + 2⟨A, df⟩_G (positive convention; ℒ = −𝒞), A = dΦ + A^⊥",
            sp.Eq(sp.Symbol("𝒞_A f"), -HBAR * sp.Symbol("Δ_G f") + 2 * sp.Symbol("⟨A,df⟩_G")),
            statement=r"\mathcal C_Af = -\hbar\Delta_Gf + 2\langle A, df\rangle_G,\quad A = d\Phi + A^\perp,\ \mathcal L = -\mathcal C",
            because="the drift-diffusion operator in the positive convention, with the drift split into exact and coexact parts",
        )
    ]
    steps += _witten_claims("d = 1, G(x) symbolic", line)
    steps += _witten_claims("flat ℝ²", plane())
    steps += _witten_claims("sphere", sphere())
    # (d) the coexact drift on the flat torus (ℝ/2πℤ)².
    torus = plane()
    phi = sp.cos(X) / 2 + sp.sin(Y) / 3
    psi = sp.sin(X) * sp.sin(Y)
    perp = _coexact_drift(phi, psi)
    drift = torus.differential(phi) + perp
    gibbs = sp.exp(-2 * phi / HBAR)
    C = witten_generator(torus, drift, HBAR)
    f, g = sp.cos(X), sp.cos(Y)
    # g𝒞f − f𝒞g = (Φ-free part) + a divergence: the Witten part −ħ div(μ(g∇f − f∇g)) integrates to 0.
    current = gibbs * (g * torus.gradient(f) - f * torus.gradient(g))
    antisym_density = 2 * (
        (g * sp.diff(f, X) - f * sp.diff(g, X)) * sp.diff(psi, Y)
        - (g * sp.diff(f, Y) - f * sp.diff(g, Y)) * sp.diff(psi, X)
    )
    steps += [
        Step(
            "(d) flat torus: Φ = cos x/2 + sin y/3, ψ = sin x sin y, A^⊥ = e^{2Φ/ħ}(∂_yψ, −∂_xψ)",
            perp,
            statement=r"A^\perp = e^{2\Phi/\hbar}(\partial_y\psi, -\partial_x\psi)\ \text{on } \mathbb T^2,\quad \Phi = \tfrac12\cos x + \tfrac13\sin y,\ \psi = \sin x\sin y",
            because="a coexact drift built from a stream function ψ, weighted so that e^{−2Φ/ħ}A^⊥ is divergence-free",
        ),
        claim(
            "(d) div(e^{−2Φ/ħ}A^⊥) = 0",
            _zero(torus.divergence(gibbs * perp)),
            statement=r"\operatorname{div}\big(e^{-2\Phi/\hbar}A^\perp\big) = \partial_x\partial_y\psi - \partial_y\partial_x\psi = 0",
            because="mixed partial derivatives commute",
        ),
        claim(
            "(d) μ = e^{−2Φ/ħ}dx stays stationary: 𝒞_{dΦ+A^⊥}^† e^{−2Φ/ħ} = 0",
            _zero(formal_adjoint(torus, drift, HBAR, gibbs)),
            statement=r"\mathcal C_{d\Phi + A^\perp}^\dagger e^{-2\Phi/\hbar} = \mathcal C_{d\Phi}^\dagger e^{-2\Phi/\hbar} + 2\operatorname{div}\big(e^{-2\Phi/\hbar}A^\perp\big) = 0",
            because="the adjoint is linear in the drift, and each part kills the Gibbs density",
        ),
        claim(
            "(d) e^{−2Φ/ħ}(g𝒞f − f𝒞g) = 2⟨ψ-part⟩ − ħ div(e^{−2Φ/ħ}(g∇f − f∇g)), f = cos x, g = cos y",
            _zero(gibbs * (g * C(f) - f * C(g)) - antisym_density + HBAR * torus.divergence(current)),
            statement=r"e^{-2\Phi/\hbar}(g\,\mathcal Cf - f\,\mathcal Cg) = 2\big[(gf_x - fg_x)\psi_y - (gf_y - fg_y)\psi_x\big] - \hbar\operatorname{div}\big(e^{-2\Phi/\hbar}(g\nabla f - f\nabla g)\big)",
            because="the symmetric Witten part is a divergence; the coexact drift leaves the antisymmetric ψ-term",
        ),
        claim(
            "(d) ∫_T² g𝒞f dμ − ∫_T² f𝒞g dμ = 2∫[(gf_x − fg_x)ψ_y − (gf_y − fg_y)ψ_x] = −4π² ≠ 0",
            _torus_antisymmetry(f, g, psi),
            -4 * sp.pi**2,
            statement=r"\int_{\mathbb T^2}g\,\mathcal Cf\,d\mu - \int_{\mathbb T^2}f\,\mathcal Cg\,d\mu = -4\pi^2 \ne 0\quad(f = \cos x,\ g = \cos y)",
            because="the divergence integrates to 0 on the torus and the ψ-term integrates in closed form: the coexact drift makes 𝒞 non-self-adjoint",
        ),
    ]
    return steps


def _torus_grid(n):
    nodes = 2 * np.pi * np.arange(n) / n
    return np.meshgrid(nodes, nodes, indexing="ij")


def _verify_girsanov(rng, scale, backend) -> Verification:
    """Check the identity numerically on the flat torus (ℝ/2πℤ)².

    Oracles, for random Φ = a cos x + b sin y + c cos(x − y) (|a|, |b|, |c| ∈ [0.2, 0.5]), ħ ∈ [0.5, 1], random
    trigonometric f, u and ψ = sin x sin y:

    * (b) pointwise: e^{−Φ/ħ}𝒞_{dΦ}(e^{Φ/ħ}u) against −ħΔu + (|dΦ|²/ħ − ΔΦ)u on the n × n grid, relative
      to the max of the right side — rounding level.
    * (c) ∫𝒞_{A}f dμ = 0 for A = dΦ and A = dΦ + A^⊥, relative to ∫|𝒞f|dμ, by the trapezoid rule.
    * (d) ∫g𝒞f dμ − ∫f𝒞g dμ against the exact Φ-free value −4π² (f = cos x, g = cos y), relative.

    The integrands are analytic and 2π-periodic, so the trapezoid rule converges geometrically; with
    |2Φ/ħ| ≤ 6 the Fourier coefficients of e^{−2Φ/ħ} decay like I_k(6)/I_0(6) (below 1e-16 by k ≈ 30),
    so with n = 64 the aliasing error is below rounding.  Tolerance 1e-10: relative to ∫|𝒞f|dμ the
    rounding of an n²-term sum with weights varying by up to e¹² is ~1e-13 (measured ~1e-15), so 1e-10
    leaves margin without admitting a quadrature or sign error (the control below is ~O(1)).  Negative control: with the sign of Φ
    flipped in the density, (c) must fail by more than 1e-3.
    """
    n, draws = by_scale(scale, (64, 2), (256, 10))
    return _girsanov_check(rng, n, draws)


def _girsanov_check(rng, n: int, draws: int, *, weighted: bool = True) -> Verification:
    """Run the checks of ``_verify_girsanov`` on an n × n torus grid with ``draws`` random draws.

    ``weighted`` as in :func:`_coexact_drift` (False: the drift A^⊥ is divergence-free for dx but not for μ).
    """
    xs, ys = _torus_grid(n)
    a, b, c, hb = sp.symbols("a b c hb", real=True)
    phi = a * sp.cos(X) + b * sp.sin(Y) + c * sp.cos(X - Y)
    torus = plane()
    coeff = sp.symbols("k0:4", real=True)
    f = coeff[0] * sp.sin(X) + coeff[1] * sp.cos(2 * Y) + coeff[2] * sp.sin(X + Y) + coeff[3] * sp.cos(X) * sp.sin(Y)
    u = f.subs({coeff[0]: coeff[3], coeff[3]: coeff[0]}, simultaneous=True)  # a second, different function
    psi = sp.sin(X) * sp.sin(Y)
    d_phi = torus.differential(phi)
    perp = _coexact_drift(phi, psi, weighted)
    sub = {HBAR: hb}
    C_exact = witten_generator(torus, d_phi, HBAR)
    C_full = witten_generator(torus, d_phi + perp, HBAR)
    args = (X, Y, a, b, c, hb, *coeff)
    lhs_b = sp.lambdify(args, (sp.exp(-phi / HBAR) * C_exact(sp.exp(phi / HBAR) * u)).subs(sub), "numpy")
    rhs_b = sp.lambdify(args, (-HBAR * torus.laplacian(u) + witten_potential(torus, phi, HBAR) * u).subs(sub), "numpy")
    gen_exact = sp.lambdify(args, C_exact(f).subs(sub), "numpy")
    gen_full = sp.lambdify(args, C_full(f).subs(sub), "numpy")
    f_cos, g_cos = sp.cos(X), sp.cos(Y)
    antisym = sp.lambdify(args, (g_cos * C_full(f_cos) - f_cos * C_full(g_cos)).subs(sub), "numpy")
    density = sp.lambdify(args, sp.exp(-2 * phi / hb), "numpy")
    cell = (2 * np.pi / n) ** 2
    worst, control = 0.0, math.inf
    for _ in range(draws):
        # |a|, |b|, |c| ∈ [0.2, 0.5]: far enough from Φ = 0 that the sign-flip control is informative.
        strengths = rng.uniform(0.2, 0.5, 3) * rng.choice([-1.0, 1.0], 3)
        params = (*strengths, rng.uniform(0.5, 1.0), *rng.standard_normal(4))
        lhs, rhs = lhs_b(xs, ys, *params), rhs_b(xs, ys, *params)
        worst = max(worst, float(np.max(np.abs(lhs - rhs)) / np.max(np.abs(rhs))))
        mu = density(xs, ys, *params)
        for gen in (gen_exact, gen_full):
            values = gen(xs, ys, *params)
            worst = max(worst, abs(np.sum(values * mu)) / np.sum(np.abs(values) * mu))
        wrong = density(xs, ys, -params[0], -params[1], -params[2], *params[3:])
        values = gen_exact(xs, ys, *params)
        control = min(control, abs(np.sum(values * wrong)) / np.sum(np.abs(values) * wrong))
        measured = cell * np.sum(antisym(xs, ys, *params) * mu)
        worst = max(worst, abs(measured + 4 * np.pi**2) / (4 * np.pi**2))
    if control < 1e-3:
        worst = math.inf
    return Verification.from_residual(worst, 1e-10, grid=f"{n}²", draws=draws)


def outside_unweighted_coexact(rng) -> Verification:
    """The statement with a coexact drift that is divergence-free for dx but not for μ: A^⊥ = (∂_yψ, −∂_xψ).

    Same torus grid (64²), draws (2), Φ, ħ, f and ψ = sin x sin y as ``verify``, the Gibbs weight e^{2Φ/ħ} left
    out of A^⊥, so div(e^{−2Φ/ħ}A^⊥) = −(2/ħ)e^{−2Φ/ħ}⟨∇Φ, A^⊥⟩ ≠ 0.  Same criterion and tolerance (1e-10):
    the worst relative residual, here of ∫𝒞_{dΦ+A^⊥}f dμ = 0 (μ is no longer stationary) and of the
    antisymmetry value −4π².  Measured: residual 1.01 (10¹⁰ × the tolerance) in 0.6 s.
    """
    return _girsanov_check(rng, 64, 2, weighted=False)


IDENTITIES = [
    Identity(
        name="continuum.bakry_emery.bochner",
        area="continuum",
        statement=r"\mathcal L = \hbar\Delta_G - 2\langle d\Phi, d\cdot\rangle_G:\ \Gamma(f,g) = \hbar\langle\nabla f,\nabla g\rangle_G,"
        r"\ \Gamma_2(f) = \hbar^2\lVert\operatorname{Hess}f\rVert^2 + \hbar^2\operatorname{Ric}(\nabla f,\nabla f)"
        r" + 2\hbar\operatorname{Hess}\Phi(\nabla f,\nabla f)",
        source="Attention Geometry §5; book/reference.md §A.5 [RECON, standard Bakry–Émery; Hessian identity "
        "SEED fragment + DERIVED]",
        derive=_derive_bochner,
        verify=_verify_bochner,
        backends=("numpy",),
    ),
    Identity(
        name="continuum.witten.girsanov",
        area="continuum",
        statement=r"\mathcal C_{d\Phi}f = -\hbar e^{2\Phi/\hbar}\operatorname{div}_G(e^{-2\Phi/\hbar}\nabla f),"
        r"\ e^{-\Phi/\hbar}\mathcal C_{d\Phi}e^{\Phi/\hbar} = -\hbar\Delta_G + |d\Phi|^2_G/\hbar - \Delta_G\Phi,"
        r"\ \mu = e^{-2\Phi/\hbar}dV_G\ \text{stationary for}\ \mathcal C_{d\Phi + A^\perp}"
        r"\quad (\operatorname{div}_G(e^{-2\Phi/\hbar}A^\perp) = 0,\ M\ \text{closed})",
        source="Attention Geometry §4; book/reference.md §A.4 [SEED generator, DERIVED properties]",
        derive=_derive_girsanov,
        verify=_verify_girsanov,
        backends=("numpy",),
        hypotheses=(
            Hypothesis(
                "the coexact drift is divergence-free for the Gibbs measure, div_G(e^{−2Φ/ħ}A^⊥) = 0 (not merely "
                "for dV_G); the first two identities need nothing",
                "A^⊥ = (∂_yψ, −∂_xψ), ψ = sin x sin y, on the flat torus: div A^⊥ = 0 but div(e^{−2Φ/ħ}A^⊥) ≠ 0",
                outside_unweighted_coexact,
            ),
            Hypothesis(
                "M closed (compact, without boundary; here the flat torus)",
                reason="it fixes the setting in which 'stationary' is meant: on a manifold with boundary the "
                "generator needs a boundary condition, and the reflecting one (∂_n f = 0, A^⊥ tangent to ∂M) "
                "keeps μ stationary, so a case off it changes the operator rather than this hypothesis alone",
            ),
        ),
    ),
]
