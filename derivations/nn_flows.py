r"""Structure by construction: Givens flows are orthogonal, commuting rotations are one exponential, SPD caps, symplecticity.

Source: Lie-Exponential Roadmap, "Structure by construction" and "GivensFlowMixer" / "SPD-MLP with Lipschitz
control" (the layers of :mod:`workbench.nn`).  Each guarantee is exact (to rounding) except the BCH defect of
non-commuting rotations, which is checked by its rate: second order in the angles.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import sympy as sp

from derivations._common import EPS, by_scale, exp_series_coefficient, relative_error
from workbench.backend import to_numpy
from workbench.catalogue import Identity, Step, Verification, claim


def _torch(backend: str):
    import torch

    device = backend.split(":", 1)[1] if ":" in backend else "cpu"
    return torch, device


# ---- sympy helpers -----------------------------------------------------------------------------------------


def _unit(d: int, i: int, j: int) -> sp.Matrix:
    r""":math:`E_{ij} - E_{ji}` in :math:`\mathbb R^{d\times d}`."""
    return sp.Matrix(d, d, lambda r, c: 1 if (r, c) == (i, j) else (-1 if (r, c) == (j, i) else 0))


def _rotation(d: int, i: int, j: int, theta) -> sp.Matrix:
    r""":math:`G(i, j, \theta) = I + (\cos\theta - 1)(E_{ii} + E_{jj}) + \sin\theta (E_{ij} - E_{ji})`."""
    k = _unit(d, i, j)
    return sp.eye(d) - (sp.cos(theta) - 1) * k**2 + sp.sin(theta) * k


def _trig(m: sp.Matrix) -> sp.Matrix:
    """Rewrite complex exponentials (from ``Matrix.exp``) as cos/sin and simplify."""
    return m.applyfunc(lambda e: sp.simplify(sp.expand_complex(e.rewrite(sp.cos))))


# ---- nn.givens.orthogonal ----------------------------------------------------------------------------------


def _derive_orthogonal() -> list[Step]:
    theta, alpha, beta = sp.symbols("theta alpha beta", real=True)
    g = _rotation(2, 0, 1, theta)
    product = _rotation(3, 0, 1, alpha) * _rotation(3, 1, 2, beta)
    return [
        Step(
            "G(θ) = I + (cos θ − 1)(E₀₀ + E₁₁) + sin θ (E₀₁ − E₁₀) on the (0, 1) plane",
            g,
            statement=r"G(i,j,\theta) = \mathsf I + (\cos\theta - 1)(E_{ii} + E_{jj}) + \sin\theta\,(E_{ij} - E_{ji})",
            because="a Givens rotation by θ in the (i, j) coordinate plane",
        ),
        claim(
            "G(θ) = exp(θ(E₀₁ − E₁₀))",
            g,
            _trig((theta * _unit(2, 0, 1)).exp()),
            statement=r"G(i,j,\theta) = \exp\big(\theta(E_{ij} - E_{ji})\big)",
            because="X = E_ij − E_ji satisfies X³ = −X, so e^{θX} = I + sin θ X + (1 − cos θ)X², and X² = −(E_ii + E_jj)",
        ),
        claim(
            "G(θ)ᵀG(θ) = I",
            (g.T * g).applyfunc(sp.simplify),
            sp.eye(2),
            statement=r"G^\top G = \mathsf I",
            because="the exponential of a skew-symmetric matrix is orthogonal; here cos² + sin² = 1",
        ),
        claim(
            "det G(θ) = 1",
            sp.simplify(g.det()),
            1,
            statement=r"\det G = e^{\operatorname{tr}\theta(E_{ij} - E_{ji})} = 1",
            because="the generator is traceless",
        ),
        claim(
            "overlapping planes in R³: (G(0, 1, α) G(1, 2, β))ᵀ (G(0, 1, α) G(1, 2, β)) = I",
            (product.T * product).applyfunc(sp.simplify),
            sp.eye(3),
            statement=r"(G_1G_2)^\top G_1G_2 = G_2^\top(G_1^\top G_1)G_2 = \mathsf I",
            because="orthogonal matrices form a group, whether or not the planes overlap",
        ),
    ]


def _verify_orthogonal(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: QᵀQ = I and ‖Qx‖ = ‖x‖, Q from the fast indexed path (applied to the identity) for random matchings
    plus random overlapping planes at angles uniform in [−π, π), three angle sets at once (batched).  float64.
    Tolerance 1e-13: each coordinate meets O(d) rotations, each orthogonal to a few ulps (measured ~1e-15).
    """
    from workbench.nn import givens_product, random_planes

    torch, device = _torch(backend)
    d = by_scale(scale, 32, 256)
    planes = list(random_planes(d, d // 2, seed=int(rng.integers(2**31))))
    extra = rng.choice(d, size=(d, 2))
    planes += [(int(i), int(j)) for i, j in extra if i != j]
    angles = torch.as_tensor(rng.uniform(-np.pi, np.pi, (3, len(planes))), device=device)
    w = givens_product(angles, planes, d)
    eye = torch.eye(d, dtype=torch.float64, device=device)
    qt = w.apply(eye[:, None, :].expand(d, 3, d)).transpose(0, 1)  # [3, d(columns), d]: row c is W e_c
    gram_defect = float((qt @ qt.mT - eye).abs().max())
    x = torch.as_tensor(rng.standard_normal((5, 3, d)), device=device)
    norms = x.norm(dim=-1)
    norm_defect = float(((w.apply(x).norm(dim=-1) - norms) / norms).abs().max())
    return Verification.from_residual(max(gram_defect, norm_defect), 1e-13, d=d, planes=len(planes), batch=3)


# ---- nn.givens.exp_commuting -------------------------------------------------------------------------------


def _derive_exp_commuting() -> list[Step]:
    a, b = sp.symbols("a b", real=True)
    generator = a * _unit(4, 0, 1) + b * _unit(4, 2, 3)
    product = _rotation(4, 0, 1, a) * _rotation(4, 2, 3, b)
    return [
        Step(
            "A = a(E₀₁ − E₁₀) + b(E₂₃ − E₃₂): disjoint planes, block diagonal",
            generator,
            statement=r"A = a(E_{01} - E_{10}) + b(E_{23} - E_{32}),\ \text{block diagonal}",
            because="a skew-symmetric generator supported on two disjoint coordinate planes",
        ),
        claim(
            "[a(E₀₁ − E₁₀), b(E₂₃ − E₃₂)] = 0 (disjoint planes commute)",
            _commutator(a, b),
            sp.zeros(4, 4),
            statement=r"\big[a(E_{01} - E_{10}),\ b(E_{23} - E_{32})\big] = 0",
            because="E_ij E_kl = δ_jk E_il vanishes when the index sets {0, 1} and {2, 3} are disjoint",
        ),
        claim(
            "G(0, 1, a) G(2, 3, b) = exp(A)",
            product,
            _trig(generator.exp()),
            statement=r"G(0,1,a)\,G(2,3,b) = e^{X}e^{Y} = e^{X+Y} = e^{A}",
            because="commuting generators: e^Xe^Y = e^{X+Y}",
        ),
    ]


def _commutator(a, b) -> sp.Matrix:
    x, y = a * _unit(4, 0, 1), b * _unit(4, 2, 3)
    return x * y - y * x


def _verify_exp_commuting(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: ``scipy.linalg.expm`` (Padé, Al-Mohy–Higham) of the generator A for one random perfect matching
    (pairwise disjoint planes) at angles uniform in [−π, π); and, for a brick wall of min(d, 8) layers, the
    product of the stages' exponentials Π_s expm(B_s) (each stage disjoint).  Relative Frobenius error,
    tolerance 8·d·eps (1.4e-13 at d = 16, 1.7e-13 at d = 96 — measured 1.4e-14 and 2e-14: expm of a skew matrix
    of norm ~π√d is accurate to a few ulps, and each coordinate meets ≤ 2·layers rotations).
    """
    from workbench.nn import brick_planes, givens_product, random_planes

    torch, device = _torch(backend)
    d = by_scale(scale, 16, 96)
    worst = 0.0
    planes = random_planes(d, 1, seed=int(rng.integers(2**31)))
    angles = torch.as_tensor(rng.uniform(-np.pi, np.pi, len(planes)), device=device)
    w = givens_product(angles, planes, d)
    exact = scipy.linalg.expm(to_numpy(w.generator()))
    worst = max(worst, relative_error(w.as_matrix(), exact))
    eye = torch.eye(d, dtype=torch.float64, device=device)
    worst = max(worst, relative_error(w.apply(eye).mT, exact))  # the fast path: rows W e_c, transposed
    brick = brick_planes(d, min(d, 8))
    angles = torch.as_tensor(rng.uniform(-np.pi, np.pi, len(brick)), device=device)
    w = givens_product(angles, brick, d)
    staged = np.eye(d)
    for b in w.stage_generators():
        staged = staged @ scipy.linalg.expm(to_numpy(b))
    worst = max(worst, relative_error(w.apply(eye).mT, staged))
    return Verification.from_residual(worst, 8 * d * EPS, d=d, disjoint=len(planes), brick=len(brick))


# ---- nn.givens.bch_defect ----------------------------------------------------------------------------------


def _derive_bch_defect() -> list[Step]:
    alpha, beta = sp.symbols("alpha beta", real=True)
    x, y = alpha * _unit(3, 0, 1), beta * _unit(3, 1, 2)  # overlapping planes (0, 1) and (1, 2)
    second_product = sum(
        (exp_series_coefficient(x, k) * exp_series_coefficient(y, 2 - k) for k in range(3)), sp.zeros(3, 3)
    )
    second_exp = exp_series_coefficient(x + y, 2)
    commutator = x * y - y * x
    return [
        Step(
            "X = α(E₀₁ − E₁₀), Y = β(E₁₂ − E₂₁): planes sharing coordinate 1",
            commutator,
            statement=r"X = \alpha(E_{01} - E_{10}),\ Y = \beta(E_{12} - E_{21}),\quad [X,Y] = \alpha\beta(E_{02} - E_{20})",
            because="two rotation generators whose planes share the coordinate 1",
        ),
        claim(
            "[X, Y] ≠ 0: the entry (0, 2) of [X, Y] is αβ",
            commutator[0, 2],
            alpha * beta,
            statement=r"[X,Y]_{02} = \alpha\beta \ne 0",
            because="XY has (E₀₁)(E₁₂) = E₀₂, and YX contributes nothing at (0, 2)",
        ),
        claim(
            "t² coefficient of e^{tX}e^{tY} − e^{t(X+Y)} is ½[X, Y] (so the defect is O(ε²), BCH)",
            (second_product - second_exp).applyfunc(sp.expand),
            (commutator / 2).applyfunc(sp.expand),
            statement=r"[t^2]\big(e^{tX}e^{tY} - e^{t(X+Y)}\big) = \tfrac12[X,Y]",
            because="½X² + XY + ½Y² − ½(X + Y)² = ½(XY − YX)",
        ),
    ]


def _verify_bch_defect(rng, scale, backend) -> Verification:
    """Check the identity numerically: the slope and the constant.

    Oracle: the BCH law log(e^{B_1}⋯e^{B_s}) = Σ B_s + ½Σ_{a<b}[B_a, B_b] + O(ε³), so the defect
    ‖ΠG − e^{A}‖_F of a brick wall with angles εu is ∝ ε²: fitted log-log slope over ε ∈ [0.025, 0.2],
    expected 2, tolerance 0.1 (the O(ε³) term bends the fit by ~ε).  Dense product vs ``torch.linalg.matrix_exp``.

    Constant: ρ = ‖ΠG − e^{A}‖_F / ‖½Σ_{a<b}[B_a, B_b]‖_F → 1 at ε = 1e-3, the stage generators B_s from
    :meth:`GivensProduct.stage_generators` and the brackets formed directly.  ρ − 1 = O(ε) at worst; measured
    −1e-7 at ε = 1e-3 (it falls like ε² here: the ε³ part of the defect is nearly orthogonal to the bracket);
    the defect (~1e-6) is a difference of entries of size ~1, so rounding adds ~1e-10.  Tolerance 1e-2: a
    bracket without its ½ (or a defect of the wrong order) gives |ρ − 1| ≥ ½.  The reported residual is max(|slope − 2|, 10·|ρ − 1|), so it
    is at most the slope's tolerance 0.1 exactly when both checks pass.
    """
    from workbench.nn import brick_planes, givens_product

    torch, device = _torch(backend)
    d = by_scale(scale, 6, 24)
    planes = brick_planes(d, 3)
    u = torch.as_tensor(rng.standard_normal(len(planes)), device=device)

    def defect(e: float) -> tuple[float, object]:
        w = givens_product(e * u, planes, d)
        return float(torch.linalg.norm(w.as_matrix() - torch.linalg.matrix_exp(w.generator()))), w

    eps = [0.2, 0.1, 0.05, 0.025]
    errors = [defect(e)[0] for e in eps]
    slope = Verification.from_rate(eps, errors, expected=2.0, tolerance=0.1)
    small, w = defect(1e-3)
    stages = w.stage_generators()
    bracket = sum(x @ y - y @ x for i, x in enumerate(stages) for y in stages[i + 1 :]) / 2
    rho = small / float(torch.linalg.norm(bracket))
    residual = max(slope.residual, 10.0 * abs(rho - 1.0))
    sizes = {"d": d, "planes": len(planes), "stages": len(stages), "rho": round(rho, 6), "rho_tolerance": 1e-2}
    return Verification(residual, 0.1, bool(residual <= 0.1), sizes, slope.rate, 2.0)


# ---- nn.spd.lipschitz --------------------------------------------------------------------------------------


def _derive_spd() -> list[Step]:
    a = sp.Symbol("a", real=True)
    b, c, s = sp.symbols("b c s", positive=True)
    ell, p = sp.symbols("ell p", positive=True)  # ℓ = log L > 0 (L > 1); p > 0 a margin
    q = sp.Symbol("q", nonnegative=True)  # the bound's slack: b(S) = λ_max(S) + q
    lam = sp.Symbol("lambda")
    S = sp.Matrix([[a, b], [b, a]])
    w = S.exp().applyfunc(sp.simplify)
    closed = sp.exp(a) * sp.Matrix([[sp.cosh(b), sp.sinh(b)], [sp.sinh(b), sp.cosh(b)]])
    gershgorin = sp.Max(*(S[i, i] + sum(sp.Abs(S[i, j]) for j in range(2) if j != i) for i in range(2)))
    lam_max = sp.Max(*sp.roots(S.charpoly(lam).as_expr(), lam))  # largest root of det(λI − S)
    wc = (c * S).exp().applyfunc(sp.simplify)
    gram = (wc.T * wc).applyfunc(sp.simplify)
    gram_roots = sp.roots(sp.factor((gram - lam * sp.eye(2)).det()), lam)  # e^{2c(a ± b)}
    # ‖W‖₂² = λ_max(WᵀW); exp is increasing, so compare the logarithms of the (positive) roots
    norm = sp.exp(sp.Max(*(sp.expand_log(sp.log(sp.powsimp(r)), force=True) for r in gram_roots)) / 2)
    steps = [
        Step(
            "S = [[a, b], [b, a]], b > 0 (symmetric)",
            S,
            statement=r"S = \begin{pmatrix}a & b\\ b & a\end{pmatrix},\ b > 0",
            because="a symmetric 2×2 instance with eigenvalues a ± b",
        ),
        claim(
            "exp(S) = e^a [[cosh b, sinh b], [sinh b, cosh b]]",
            w,
            closed.applyfunc(lambda e: e.rewrite(sp.exp)),
            statement=r"e^{S} = e^{a}\begin{pmatrix}\cosh b & \sinh b\\ \sinh b & \cosh b\end{pmatrix}",
            because="S = aI + bσ with σ² = I; aI commutes and e^{bσ} = cosh b I + sinh b σ",
        ),
        claim(
            "the eigenvalues of exp(S) are e^{a+b} > 0 and e^{a−b} > 0 (SPD)",
            sp.factor(sp.simplify((closed - lam * sp.eye(2)).det().rewrite(sp.exp))),
            sp.factor((lam - sp.exp(a + b)) * (lam - sp.exp(a - b))),
            statement=r"\operatorname{spec}e^{S} = e^{\operatorname{spec}S} = \{e^{a+b}, e^{a-b}\}\subset(0,\infty)",
            because="the spectral mapping theorem; positive eigenvalues and symmetry make e^S SPD",
        ),
        claim(
            "Gershgorin max_i(S_ii + Σ_{j≠i}|S_ij|), from the entries, equals λ_max(S), the largest root of "
            "det(λI − S) (the bound is tight here)",
            gershgorin,
            lam_max,
            statement=r"\lambda_{\max}(S)\le\max_i\Big(S_{ii} + \sum_{j\ne i}\lvert S_{ij}\rvert\Big),\ \text{with equality for } S = \begin{pmatrix}a&b\\b&a\end{pmatrix}",
            because="every eigenvalue lies in a Gershgorin disc; here the top eigenvector (1, 1) makes the bound tight",
        ),
        claim(
            "c > 0: ‖e^{cS}‖₂ = √λ_max((e^{cS})ᵀe^{cS}) = e^{c·λ_max(S)} (Gram eigenvalues e^{2c(a±b)})",
            norm,
            sp.exp(c * lam_max),
            statement=r"\lVert e^{cS}\rVert_2 = \sqrt{\lambda_{\max}\big((e^{cS})^\top e^{cS}\big)} = e^{c\,\lambda_{\max}(S)}\quad(S = S^\top,\ c > 0)",
            because="(e^{cS})ᵀe^{cS} = e^{2cS} has eigenvalues e^{2cλ}, and exp is increasing",
        ),
        claim(
            "scaling (s > 0): det(sS − s·λ_max(S)·I) = 0, so s·λ_max(S) is an eigenvalue of sS (the largest)",
            sp.simplify((s * S - s * lam_max * sp.eye(2)).det()),
            0,
            statement=r"\lambda_{\max}(sS) = s\,\lambda_{\max}(S)\quad(s > 0)",
            because="scaling by s > 0 scales every eigenvalue and keeps their order",
        ),
    ]
    # the cap c = ℓ / max(b(S), ℓ) with any bound b(S) = λ_max + q ≥ λ_max: cλ_max ≤ ℓ, i.e. e^{cλ_max} ≤ L
    for bound, case in ((ell + p, "cap binding, b(S) = ℓ + p"), (ell / (1 + p), "below the cap, b(S) = ℓ/(1 + p)")):
        gap = sp.factor(sp.simplify(ell - ell / sp.Max(bound, ell) * (bound - q)))
        steps.append(
            claim(
                f"{case}, λ_max = b(S) − q: max(log L − cλ_max, 0) = log L − cλ_max = {gap} (sympy decides the sign "
                "from p, ℓ > 0, q ≥ 0), so ‖W‖₂ = e^{cλ_max} ≤ L",
                sp.Max(gap, 0),
                gap,
                statement=r"c = \frac{\log L}{\max(b(S), \log L)},\ b(S)\ge\lambda_{\max}(S)\ \Rightarrow\ c\,\lambda_{\max}(S)\le\log L,\ \lVert e^{cS}\rVert_2\le L",
                because="if b(S) ≥ log L then cλ_max = log L·λ_max/b(S) ≤ log L; otherwise c = 1 and λ_max ≤ b(S) < log L",
            )
        )
        if case.startswith("cap binding"):
            steps.append(
                claim(
                    "exact bound (q = 0, bound='eigvalsh'): the cap is attained, cλ_max = log L",
                    gap.subs(q, 0),
                    statement=r"b(S) = \lambda_{\max}(S) \ge \log L\ \Rightarrow\ c\,\lambda_{\max}(S) = \log L",
                    because="with the exact bound the cap is attained: ‖e^{cS}‖₂ = L",
                )
            )
    return steps


def _verify_spd(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: ``torch.linalg.eigvalsh`` of W = exp(S_L) (an independent symmetric eigensolver) gives
    ‖W‖₂ = λ_max(W) ≤ L and λ_min(W) > 0; and the ratio ‖Wx − Wy‖/‖x − y‖ ≤ L on random pairs.  Caps
    L ∈ {1.5, 2, 10} with M scaled ×5 so the cap binds (λ_max(S) ≈ 7 > log 10), for both bounds (Gershgorin,
    eigvalsh).  With the exact bound (eigvalsh) the cap must also be attained, λ_max(W) = L, so a cap that
    over-shrinks (W = I, say) fails.  Residual: max(0, ratio/L − 1, λ_max(W)/L − 1) and, for eigvalsh,
    |λ_max(W)/L − 1|; tolerance 1e-12 (matrix_exp and eigvalsh rounding relative to ‖W‖, measured ~1e-15).
    """
    from workbench.nn import SPDMap

    torch, device = _torch(backend)
    d = by_scale(scale, 16, 128)
    worst = 0.0
    for bound in ("gershgorin", "eigvalsh"):
        for cap in (1.5, 2.0, 10.0):
            layer = SPDMap(d, lipschitz=cap, bound=bound).to(dtype=torch.float64, device=device)
            with torch.no_grad():
                layer.weight.copy_(torch.as_tensor(5 * rng.standard_normal((d, d)) / np.sqrt(d), device=device))
                eigenvalues = torch.linalg.eigvalsh(layer.matrix())
                x = torch.as_tensor(rng.standard_normal((64, d)), device=device)
                y = torch.as_tensor(rng.standard_normal((64, d)), device=device)
                ratio = float(((layer(x) - layer(y)).norm(dim=-1) / (x - y).norm(dim=-1)).max())
            if float(eigenvalues.min()) <= 0.0:
                return Verification.from_residual(np.inf, 1e-12, d=d)
            top = float(eigenvalues.max()) / cap - 1.0
            worst = max(worst, top, ratio / cap - 1.0, abs(top) if bound == "eigvalsh" else 0.0)
    return Verification.from_residual(max(worst, 0.0), 1e-12, d=d, caps=3, bounds=2)


# ---- nn.symplectic.preserves_form --------------------------------------------------------------------------


def _derive_symplectic() -> list[Step]:
    h = sp.Symbol("h", real=True)
    J2 = sp.Matrix([[0, 1], [-1, 0]])
    w = _trig((J2 * h).exp())
    symbols = sp.symbols("h0:10", real=True)
    entries = iter(symbols)
    H = sp.zeros(4, 4)
    for i in range(4):
        for j in range(i, 4):
            H[i, j] = H[j, i] = next(entries)
    J4 = sp.Matrix(sp.BlockMatrix([[sp.zeros(2), sp.eye(2)], [-sp.eye(2), sp.zeros(2)]]))
    return [
        claim(
            "d = 2, H = h·I: exp(JH) is the rotation [[cos h, sin h], [−sin h, cos h]]",
            w,
            _rotation(2, 0, 1, h),
            statement=r"J = \begin{pmatrix}0&1\\-1&0\end{pmatrix},\ H = h\mathsf I:\ e^{JH} = \begin{pmatrix}\cos h & \sin h\\ -\sin h & \cos h\end{pmatrix}",
            because="J² = −I, so e^{hJ} = cos h I + sin h J",
        ),
        claim(
            "det exp(JH) = 1",
            sp.simplify(w.det()),
            1,
            statement=r"\det e^{JH} = e^{\operatorname{tr}JH} = 1",
            because="tr J = 0 for H = hI",
        ),
        claim(
            "exp(JH)ᵀ J exp(JH) = J",
            (w.T * J2 * w).applyfunc(sp.simplify),
            J2,
            statement=r"(e^{JH})^\top Je^{JH} = J",
            because="JH is Hamiltonian, so its exponential is symplectic",
        ),
        claim(
            "d = 4, H symmetric: (JH)ᵀJ + J(JH) = 0 (JH Hamiltonian)",
            (J4 * H).T * J4 + J4 * (J4 * H),
            statement=r"(JH)^\top J + J(JH) = HJ^\top J + J^2H = H - H = 0\quad(H = H^\top)",
            because="JᵀJ = I and J² = −I",
        ),
        claim(
            "tr(JH) = 0, so det exp(JH) = e^{tr JH} = 1",
            (J4 * H).trace(),
            0,
            statement=r"\operatorname{tr}(JH) = 0\ \Rightarrow\ \det e^{JH} = e^{\operatorname{tr}JH} = 1",
            because="tr(JH) = tr((JH)ᵀ) = tr(HJᵀ) = −tr(HJ) = −tr(JH)",
        ),
    ]


def _verify_symplectic(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: the form itself, ‖WᵀJW − J‖_F / ‖W‖_F² (rounding of W scales with ‖W‖²), and |log det W|
    from ``slogdet``.  H = (M + Mᵀ)/2 with M ~ N(0, 1/d); three draws.  Tolerance 16·d·eps (2.8e-14 at d = 8,
    2.3e-13 at d = 64): log det is a sum of d rounded logarithms of LU pivots (measured 3.5e-15 and 6.5e-14);
    the form defect itself is ~4e-16.
    """
    from workbench.nn import SymplecticMap, symplectic_form

    torch, device = _torch(backend)
    d = by_scale(scale, 8, 64)
    J = symplectic_form(d, dtype=torch.float64, device=device)
    worst = 0.0
    for _ in range(3):
        layer = SymplecticMap(d).to(dtype=torch.float64, device=device)
        with torch.no_grad():
            layer.weight.copy_(torch.as_tensor(rng.standard_normal((d, d)) / np.sqrt(d), device=device))
            w = layer.matrix()
            form = float(torch.linalg.norm(w.mT @ J @ w - J)) / float(torch.linalg.norm(w)) ** 2
            sign, logdet = torch.linalg.slogdet(w)
        worst = max(worst, form, abs(float(logdet)), abs(float(sign) - 1.0))
    return Verification.from_residual(worst, 16 * d * EPS, d=d, draws=3)


IDENTITIES = [
    Identity(
        name="nn.givens.orthogonal",
        area="nn",
        statement=r"W = \prod_k G(i_k, j_k, \theta_k):\ W^\top W = I,\ \det W = 1,\ \lVert Wx\rVert = \lVert x\rVert",
        source="Lie-Exponential Roadmap: GivensFlowMixer, exact orthogonality; G(i, j, θ) [RECON]",
        derive=_derive_orthogonal,
        verify=_verify_orthogonal,
        backends=("torch",),
    ),
    Identity(
        name="nn.givens.exp_commuting",
        area="nn",
        statement=r"\{i_k, j_k\}\ \text{pairwise disjoint} \Rightarrow \prod_k G(i_k, j_k, \theta_k)"
        r" = \exp\Bigl(\sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})\Bigr)",
        source="Lie-Exponential Roadmap: 'equivalent to exp(A) with A skew' (exact for commuting rotations)",
        derive=_derive_exp_commuting,
        verify=_verify_exp_commuting,
        backends=("torch",),
    ),
    Identity(
        name="nn.givens.bch_defect",
        area="nn",
        statement=r"\Bigl\lVert \prod_s e^{\varepsilon B_s} - e^{\varepsilon \sum_s B_s} \Bigr\rVert"
        r" = \tfrac{\varepsilon^2}{2}\Bigl\lVert \sum_{a<b} [B_a, B_b] \Bigr\rVert + O(\varepsilon^3)",
        source="Lie-Exponential Roadmap: BCH, exp(A)exp(B) = exp(A + B + ½[A,B] + …), for overlapping planes",
        derive=_derive_bch_defect,
        verify=_verify_bch_defect,
        backends=("torch",),
        asymptotic=True,
    ),
    Identity(
        name="nn.spd.lipschitz",
        area="nn",
        statement=r"W = e^{cS},\ c = \min\bigl(1, \log L / b(S)\bigr),\ b(S) \ge \lambda_{\max}(S)"
        r" \Rightarrow W \succ 0,\ \lVert W \rVert_2 \le L",
        source="Lie-Exponential Roadmap: SPD-MLP with Lipschitz control; Gershgorin certificate [RECON]",
        derive=_derive_spd,
        verify=_verify_spd,
        backends=("torch",),
    ),
    Identity(
        name="nn.symplectic.preserves_form",
        area="nn",
        statement=r"H = H^\top,\ W = e^{JH} \Rightarrow W^\top J W = J,\ \det W = 1",
        source="Lie-Exponential Roadmap: symplectic updates via Hamiltonian generators",
        derive=_derive_symplectic,
        verify=_verify_symplectic,
        backends=("torch",),
    ),
]
