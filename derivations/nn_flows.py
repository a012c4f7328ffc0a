r"""Structure by construction: Givens flows are orthogonal, commuting rotations are one exponential, SPD caps, symplecticity.

Source: Lie-Exponential Roadmap, "Structure by construction" and "GivensFlowMixer" / "SPD-MLP with Lipschitz
control" (the layers of :mod:`workbench.nn`).  Each guarantee is exact (to rounding) except the BCH defect of
non-commuting rotations, which is checked by its rate: second order in the angles.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
import sympy as sp

from workbench.backend import to_numpy
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim

from ._common import EPS, by_scale, exp_series_coefficient, relative_error


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
    x = torch.as_tensor(rng.standard_normal((5, 3, d)), device=device)
    defect = _orthogonality_defect(qt, w.apply(x), x)
    return Verification.from_residual(defect, 1e-13, d=d, planes=len(planes), batch=3)


def _orthogonality_defect(columns, images, x) -> float:
    r"""``max(max|WᴴW − I|, max|‖Wx‖/‖x‖ − 1|)`` from ``columns[..., c, :]`` = :math:`We_c` and ``images`` = :math:`Wx`.

    For real :math:`W`, :math:`W^{\mathsf H}W = W^\top W`; the conjugate keeps the criterion meaningful for a
    complex :math:`W` (an outside case).
    """
    gram = columns.conj() @ columns.mT
    eye = _eye_like(gram)
    norms = x.norm(dim=-1)
    return max(float((gram - eye).abs().max()), float(((images.norm(dim=-1) - norms) / norms).abs().max()))


def _eye_like(a):
    """The identity with the shape, dtype and device of the (square, batched) tensor ``a``."""
    import torch

    return torch.eye(a.shape[-1], dtype=a.dtype, device=a.device).expand_as(a)


def _givens_formula(d: int, planes, angles):
    r"""The dense product :math:`\prod_k G(i_k, j_k, \theta_k)` built from the statement's formula (torch, any dtype).

    :math:`G(i, j, \theta) = I + (\cos\theta - 1)(E_{ii} + E_{jj}) + \sin\theta\,(E_{ij} - E_{ji})`, evaluated as
    written: a complex :math:`\theta` or :math:`i = j` (outside cases) are not refused, unlike
    :func:`~workbench.nn.givens_product`.
    """
    import torch

    w = torch.eye(d, dtype=angles.dtype)
    for (i, j), theta in zip(planes, angles, strict=True):
        g = torch.eye(d, dtype=angles.dtype)
        g[i, i] += torch.cos(theta) - 1
        g[j, j] += torch.cos(theta) - 1
        g[i, j] += torch.sin(theta)
        g[j, i] -= torch.sin(theta)
        w = w @ g
    return w


def _outside_orthogonal(d: int, planes, angles, rng) -> Verification:
    """The identity's criterion (:func:`_orthogonality_defect`, tolerance 1e-13) on the formula's product."""
    import torch

    w = _givens_formula(d, planes, angles)
    x = torch.as_tensor(rng.standard_normal((5, d)), dtype=angles.dtype)
    return Verification.from_residual(_orthogonality_defect(w.mT, x @ w.mT, x), 1e-13, d=d, planes=len(planes))


def _outside_orthogonal_complex_angles(rng) -> Verification:
    """Outside real angles: imaginary angles θ_k = iφ_k, φ_k uniform in [−1, 1], on d = 8.

    A random matching and 8 random planes.  G(iφ) = [[cosh φ, i sinh φ], [−i sinh φ, cosh φ]] on its plane: Wᵀ W = I
    still holds (complex orthogonal), but G is Hermitian with eigenvalues e^{±φ}, not unitary, so ‖Wx‖ ≠ ‖x‖ and
    WᴴW ≠ I.  Measured residual 4.75 (with the test's seed) against the tolerance 1e-13, in 18 ms.
    """
    import torch

    from workbench.nn import random_planes

    d = 8
    planes = list(random_planes(d, 1, seed=int(rng.integers(2**31))))
    planes += [(int(i), int(j)) for i, j in rng.choice(d, size=(8, 2)) if i != j]
    angles = torch.as_tensor(1j * rng.uniform(-1.0, 1.0, len(planes)), dtype=torch.complex128)
    return _outside_orthogonal(d, planes, angles, rng)


def _outside_orthogonal_same_coordinate(rng) -> Verification:
    """Outside i_k ≠ j_k: one degenerate factor G(0, 0, 1) among random rotations, d = 8.

    The verification's setting (a random matching and random planes, angles uniform in [−π, π)) with the formula
    evaluated at i = j: G(0, 0, 1) = I + 2(cos 1 − 1)E₀₀ scales e₀ by 2 cos 1 − 1 ≈ 0.08.  Measured residual 0.994
    against the tolerance 1e-13, in 1 ms.
    """
    import torch

    from workbench.nn import random_planes

    d = 8
    planes = list(random_planes(d, 1, seed=int(rng.integers(2**31))))
    planes += [(int(i), int(j)) for i, j in rng.choice(d, size=(8, 2)) if i != j]
    angles = list(rng.uniform(-np.pi, np.pi, len(planes)))
    return _outside_orthogonal(d, [*planes, (0, 0)], torch.as_tensor([*angles, 1.0], dtype=torch.float64), rng)


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
            "equal planes commute too: G(0, 1, a) G(0, 1, b) = G(0, 1, a + b) = exp((a + b)(E₀₁ − E₁₀))",
            (_rotation(2, 0, 1, a) * _rotation(2, 0, 1, b)).applyfunc(lambda e: sp.simplify(sp.expand_trig(e))),
            _rotation(2, 0, 1, a + b).applyfunc(lambda e: sp.simplify(sp.expand_trig(e))),
            statement=r"G(i,j,a)\,G(i,j,b) = e^{aX}e^{bX} = e^{(a+b)X} = G(i,j,a+b)",
            because="aX and bX commute; (j, i) is the same plane with X ↦ −X",
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


def _exp_defect(w) -> float:
    """Relative Frobenius error of the product (dense and fast path) against ``scipy.linalg.expm`` of its generator."""
    import torch

    exact = scipy.linalg.expm(to_numpy(w.generator()))
    eye = torch.eye(w.d, dtype=torch.float64, device=w.angles.device)
    return max(relative_error(w.as_matrix(), exact), relative_error(w.apply(eye).mT, exact))


def _verify_exp_commuting(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: ``scipy.linalg.expm`` (Padé, Al-Mohy–Higham) of the generator A for one random perfect matching
    (pairwise disjoint planes) followed by two of its planes again, one of them reversed ((j, i) is the rotation by
    −θ in the same plane), at angles uniform in [−π, π); and, for a brick wall of min(d, 8) layers, the
    product of the stages' exponentials Π_s expm(B_s) (each stage disjoint).  Relative Frobenius error,
    tolerance 8·d·eps (1.4e-13 at d = 16, 1.7e-13 at d = 96 — measured 1.4e-14 and 2e-14: expm of a skew matrix
    of norm ~π√d is accurate to a few ulps, and each coordinate meets ≤ 2·layers rotations).
    """
    from workbench.nn import brick_planes, givens_product, random_planes

    torch, device = _torch(backend)
    d = by_scale(scale, 16, 96)
    planes = list(random_planes(d, 1, seed=int(rng.integers(2**31))))
    planes += [planes[0], planes[1][::-1]]  # equal planes commute too
    angles = torch.as_tensor(rng.uniform(-np.pi, np.pi, len(planes)), device=device)
    worst = _exp_defect(givens_product(angles, planes, d))
    eye = torch.eye(d, dtype=torch.float64, device=device)
    brick = brick_planes(d, min(d, 8))
    angles = torch.as_tensor(rng.uniform(-np.pi, np.pi, len(brick)), device=device)
    w = givens_product(angles, brick, d)
    staged = np.eye(d)
    for b in w.stage_generators():
        staged = staged @ scipy.linalg.expm(to_numpy(b))
    worst = max(worst, relative_error(w.apply(eye).mT, staged))
    return Verification.from_residual(worst, 8 * d * EPS, d=d, commuting=len(planes), brick=len(brick))


def _outside_exp_commuting(rng) -> Verification:
    """Outside disjoint-or-equal planes: a brick wall of 8 layers on d = 16, as one product against e^{A}.

    Neighbouring planes share a coordinate; angles uniform in [−π, π); criterion :func:`_exp_defect` with the
    identity's tolerance 8·d·eps = 2.8e-14.  The factors do not commute, so ΠG = e^{A + ½Σ[B_a, B_b] + …} ≠ e^{A}:
    measured relative error 1.38, in 40 ms.
    """
    import torch

    from workbench.nn import brick_planes, givens_product

    d = 16
    planes = brick_planes(d, 8)
    angles = torch.as_tensor(rng.uniform(-np.pi, np.pi, len(planes)), dtype=torch.float64)
    return Verification.from_residual(_exp_defect(givens_product(angles, planes, d)), 8 * d * EPS, d=d)


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
    return _bch_defect_check(rng, backend, by_scale(scale, 6, 24), [0.2, 0.1, 0.05, 0.025], 1e-3)


def _bch_defect_check(rng, backend, d: int, eps: list[float], eps_rho: float) -> Verification:
    """The check of :func:`_verify_bch_defect` with the slope fitted over ``eps`` and ρ measured at ``eps_rho``."""
    from workbench.nn import brick_planes, givens_product

    torch, device = _torch(backend)
    planes = brick_planes(d, 3)
    u = torch.as_tensor(rng.standard_normal(len(planes)), device=device)

    def defect(e: float) -> tuple[float, object]:
        w = givens_product(e * u, planes, d)
        return float(torch.linalg.norm(w.as_matrix() - torch.linalg.matrix_exp(w.generator()))), w

    errors = [defect(e)[0] for e in eps]
    slope = Verification.from_rate(eps, errors, expected=2.0, tolerance=0.1)
    small, w = defect(eps_rho)
    stages = w.stage_generators()
    bracket = sum(x @ y - y @ x for i, x in enumerate(stages) for y in stages[i + 1 :]) / 2
    rho = small / float(torch.linalg.norm(bracket))
    residual = max(slope.residual, 10.0 * abs(rho - 1.0))
    sizes = {"d": d, "planes": len(planes), "stages": len(stages), "rho": round(rho, 6), "rho_tolerance": 1e-2}
    return Verification(residual, 0.1, bool(residual <= 0.1), sizes, slope.rate, 2.0)


def _outside_bch_defect_large_angles(rng) -> Verification:
    """Outside small angles: the identity's check at ε ∈ {1.6, 3.2, 6.4, 12.8} (slope) and ε = 1 (ρ).

    d = 6, a brick wall of 3 layers, unit-variance angle directions u, instead of ε ∈ [0.025, 0.2] and 1e-3.  Both
    matrices are orthogonal, so the defect stays below 2√d and stops growing like ε²: measured slope 0.72 and
    ρ = 1.16 (residual max(|slope − 2|, 10|ρ − 1|) = 1.59 against the tolerance 0.1), in 30 ms.
    """
    return _bch_defect_check(rng, "torch:cpu", 6, [1.6, 3.2, 6.4, 12.8], 1.0)


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
    cases = (
        (ell + p, "cap binding, b(S) = ℓ + p"),
        (ell / (1 + p), "below the cap, b(S) = ℓ/(1 + p)"),
        (-p, "negative bound, b(S) = −p < 0"),
    )
    for bound, case in cases:
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
    # the form min(1, log L / b(S)) is wrong for b(S) < 0: S = diag(−1, −10), L = 2 (b = λ_max = −1)
    spectrum, log2 = (-1, -10), sp.log(2)
    flipped = sp.Min(1, log2 / spectrum[0])
    kept = log2 / sp.Max(spectrum[0], log2)
    steps += [
        claim(
            "S = diag(−1, −10), L = 2: min(1, log L / b(S)) = −log 2 < 0 flips the spectrum, ‖e^{cS}‖₂ = 2¹⁰ = 1024 > L",
            sp.Max(*(sp.exp(flipped * lam_i) for lam_i in spectrum)),
            1024,
            statement=r"c = \min\bigl(1, \tfrac{\log L}{b(S)}\bigr) = -\log 2:\ \lVert e^{cS}\rVert_2 = e^{10\log 2} = 1024 > L",
            because="for b(S) < 0 the ratio log L / b(S) is negative, so cS has eigenvalues −c·{1, 10} > 0",
        ),
        claim(
            "the same S with c = log L / max(b(S), log L) = 1: ‖e^{cS}‖₂ = e^{−1} ≤ L",
            sp.Max(*(sp.exp(kept * lam_i) for lam_i in spectrum)),
            sp.exp(-1),
            statement=r"c = \frac{\log L}{\max(b(S), \log L)} = 1:\ \lVert e^{cS}\rVert_2 = e^{-1} \le L",
            because="max(b(S), log L) ≥ log L > 0, so c ∈ (0, 1] for every bound, of either sign",
        ),
    ]
    return steps


def _statement_cap(bound: float, cap: float) -> float:
    r"""The statement's scale :math:`c = \log L / \max(b(S), \log L)` for a spectral bound ``bound`` = b(S).

    Below the cap (:math:`b(S) \le \log L`, a negative bound included) :math:`c = 1`; above it
    :math:`c = \log L / b(S) \in (0, 1)`.  (The form :math:`\min(1, \log L / b(S))` agrees only for
    :math:`b(S) > 0`: for :math:`b(S) < 0` it is negative and flips the spectrum.)

    Examples
    --------
    >>> _statement_cap(-1.0, 2.0), round(_statement_cap(2 * math.log(2.0), 2.0), 12)
    (1.0, 0.5)
    """
    log_cap = math.log(cap)
    return log_cap / max(bound, log_cap)


def _cap_defect(w, cap: float, ratio: float, *, attained: bool) -> float:
    r"""The residual of :math:`W \succ 0,\ \lVert W\rVert_2 \le L` (and :math:`= L` when ``attained``).

    ``max(0, ‖W‖₂/L − 1, ratio/L − 1, asymmetry)``, plus :math:`|\lVert W\rVert_2/L - 1|` when the exact bound
    must attain the cap; ``inf`` when :math:`W` is not positive definite.  :math:`\lVert W\rVert_2` from
    ``torch.linalg.matrix_norm(ord=2)`` (singular values), positivity from ``eigvalsh`` of the symmetric part,
    asymmetry :math:`\max|W - W^\top| / \max|W|`; ``ratio`` is the largest measured
    :math:`\lVert Wx - Wy\rVert / \lVert x - y\rVert`.
    """
    import torch

    if float(torch.linalg.eigvalsh(0.5 * (w + w.mT)).min()) <= 0.0:
        return np.inf
    top = float(torch.linalg.matrix_norm(w, ord=2)) / cap - 1.0
    asymmetry = float((w - w.mT).abs().max() / w.abs().max())
    return max(0.0, top, ratio / cap - 1.0, asymmetry, abs(top) if attained else 0.0)


def _verify_spd(rng, scale, backend) -> Verification:
    """Check the identity numerically: the layer against the statement, on both sides of the cap.

    Oracle: the statement's own scale c = log L / max(b(S), log L) (:func:`_statement_cap`) with b(S) from
    :func:`~workbench.nn.gershgorin_bound` or ``eigvalsh``, against the layer's generator S_L (relative
    Frobenius error of S_L − cS); then ``matrix_norm(ord=2)`` (SVD) of W = exp(S_L) gives ‖W‖₂ ≤ L, ``eigvalsh``
    gives W ≻ 0, and the ratio ‖Wx − Wy‖/‖x − y‖ ≤ L on random pairs through the layer's forward pass.  Caps
    L ∈ {1.5, 2, 10}, for both bounds (Gershgorin, eigvalsh) and two weights: M scaled ×5 so the cap binds
    (λ_max(S) ≈ 7 > log 10), and a negative definite M = −3I + 0.1·N(0, 1/d) whose bound b(S) < 0 (c = 1).
    With the exact bound and a binding cap it must also be attained, ‖W‖₂ = L, so a cap that over-shrinks
    (W = I, say) fails.  Residual: the worst of the generator error and :func:`_cap_defect`; tolerance 1e-12
    (matrix_exp, SVD and eigvalsh rounding relative to ‖W‖, measured ~1e-15).
    """
    from workbench.nn import SPDMap, gershgorin_bound

    torch, device = _torch(backend)
    d = by_scale(scale, 16, 128)
    worst = 0.0
    for bound in ("gershgorin", "eigvalsh"):
        for cap in (1.5, 2.0, 10.0):
            for weight in (
                5 * rng.standard_normal((d, d)),
                0.1 * rng.standard_normal((d, d)) - 3 * np.sqrt(d) * np.eye(d),
            ):
                layer = SPDMap(d, lipschitz=cap, bound=bound).to(dtype=torch.float64, device=device)
                with torch.no_grad():
                    layer.weight.copy_(torch.as_tensor(weight / np.sqrt(d), device=device))
                    S = 0.5 * (layer.weight + layer.weight.mT)
                    b = float(gershgorin_bound(S) if bound == "gershgorin" else torch.linalg.eigvalsh(S)[-1])
                    c = _statement_cap(b, cap)
                    generator = float(torch.linalg.norm(layer.generator() - c * S) / torch.linalg.norm(c * S))
                    x = torch.as_tensor(rng.standard_normal((64, d)), device=device)
                    y = torch.as_tensor(rng.standard_normal((64, d)), device=device)
                    ratio = float(((layer(x) - layer(y)).norm(dim=-1) / (x - y).norm(dim=-1)).max())
                    attained = bound == "eigvalsh" and b >= math.log(cap)
                    worst = max(worst, generator, _cap_defect(layer.matrix(), cap, ratio, attained=attained))
    return Verification.from_residual(worst, 1e-12, d=d, caps=3, bounds=2, weights=2)


def _outside_spd(rng, S, cap: float, bound: float) -> Verification:
    """The statement on ``S`` with cap ``L`` and spectral bound b(S) = ``bound``.

    W = e^{cS} with c = :func:`_statement_cap`, judged by :func:`_cap_defect` (tolerance 1e-12) with the Lipschitz
    ratio over 64 random pairs.
    """
    import torch

    c = _statement_cap(bound, cap)
    w = torch.linalg.matrix_exp(c * S)
    x, y = (torch.as_tensor(rng.standard_normal((64, S.shape[-1]))) for _ in range(2))
    ratio = float(((x - y) @ w.mT).norm(dim=-1).div((x - y).norm(dim=-1)).max())
    return Verification.from_residual(_cap_defect(w, cap, ratio, attained=False), 1e-12, d=S.shape[-1], c=c)


def _random_symmetric(rng, d: int = 16):
    """S = (M + Mᵀ)/2 with M = 5·N(0, 1/d), as in the verification (λ_max(S) ≈ 7)."""
    import torch

    m = torch.as_tensor(5 * rng.standard_normal((d, d)) / np.sqrt(d))
    return 0.5 * (m + m.mT)


def _outside_spd_not_symmetric(rng) -> Verification:
    """Outside S = Sᵀ: the Jordan block S = [[0, 10], [0, 0]], exact bound b(S) = λ_max(S) = 0, L = 2.

    c = 1 and W = e^{S} = [[1, 10], [0, 1]]: every eigenvalue of W is 1, yet W is not symmetric, not positive
    definite (its symmetric part [[1, 5], [5, 1]] has the eigenvalue −4) and ‖W‖₂ = 10.1 > L.  Measured residual
    inf (W ⊁ 0; ‖W‖₂/L − 1 alone is 4.05) against the tolerance 1e-12, in 1 ms.
    """
    import torch

    S = torch.tensor([[0.0, 10.0], [0.0, 0.0]], dtype=torch.float64)
    return _outside_spd(rng, S, 2.0, 0.0)


def _outside_spd_cap_below_one(rng) -> Verification:
    """Outside L > 1: L = ½ on the verification's kind of S (d = 16, λ_max(S) ≈ 7), Gershgorin bound.

    log L < 0, so c = log L / b(S) < 0 flips the spectrum and ‖W‖₂ = e^{c λ_min(S)} > 1 > L (no c > 0 could give
    ‖e^{cS}‖₂ < 1 either, with λ_max(S) > 0).  Measured c = −0.042 and residual 1.68 against the tolerance 1e-12,
    in 2 ms.
    """
    from workbench.nn import gershgorin_bound

    S = _random_symmetric(rng)
    return _outside_spd(rng, S, 0.5, float(gershgorin_bound(S)))


def _outside_spd_lower_bound(rng) -> Verification:
    """Outside b(S) ≥ λ_max(S): b(S) = λ_max(S)/2 on the verification's kind of S (d = 16), L = 2.

    An under-estimate, as the Rayleigh quotient of a few power-iteration steps is: the cap binds with
    c = 2 log L / λ_max(S), so ‖W‖₂ = L² = 4.  Measured residual 1.0 against the tolerance 1e-12, in 1 ms.
    """
    import torch

    S = _random_symmetric(rng)
    return _outside_spd(rng, S, 2.0, 0.5 * float(torch.linalg.eigvalsh(S)[-1]))


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
        worst = max(worst, _symplectic_defect(w, J))
    return Verification.from_residual(worst, 16 * d * EPS, d=d, draws=3)


def _symplectic_defect(w, J) -> float:
    """``max(‖WᵀJW − J‖_F / ‖W‖_F², |log|det W||, |sign det W − 1|)`` (``slogdet``)."""
    import torch

    form = float(torch.linalg.norm(w.mT @ J @ w - J)) / float(torch.linalg.norm(w)) ** 2
    sign, logdet = torch.linalg.slogdet(w)
    return max(form, abs(float(logdet)), abs(float(sign) - 1.0))


def _outside_symplectic_not_symmetric(rng) -> Verification:
    """Outside H = Hᵀ: H = M with M ~ N(0, 1/d) not symmetrised, d = 8, three draws, W = e^{JM}.

    JM is not Hamiltonian, so W does not keep the form, and det W = e^{tr JM} ≠ 1.  Same criterion
    (:func:`_symplectic_defect`) and tolerance (16·d·eps = 2.8e-14) as the identity: measured residual 2.0, in 2 ms.
    """
    import torch

    from workbench.nn import symplectic_form

    d = 8
    J = symplectic_form(d, dtype=torch.float64)
    worst = 0.0
    for _ in range(3):
        H = torch.as_tensor(rng.standard_normal((d, d)) / np.sqrt(d))
        worst = max(worst, _symplectic_defect(torch.linalg.matrix_exp(J @ H), J))
    return Verification.from_residual(worst, 16 * d * EPS, d=d, draws=3)


IDENTITIES = [
    Identity(
        name="nn.givens.orthogonal",
        area="nn",
        statement=r"W = \prod_k G(i_k, j_k, \theta_k):\ W^\top W = I,\ \det W = 1,\ \lVert Wx\rVert = \lVert x\rVert"
        r"\quad (\theta_k \in \mathbb R,\ i_k \ne j_k)",
        source="Lie-Exponential Roadmap: GivensFlowMixer, exact orthogonality; G(i, j, θ) [RECON]",
        derive=_derive_orthogonal,
        verify=_verify_orthogonal,
        backends=("torch",),
        hypotheses=(
            Hypothesis(
                "the angles θ_k are real",
                "imaginary angles θ_k = iφ_k, φ_k uniform in [−1, 1] (d = 8): G is complex orthogonal, not unitary",
                _outside_orthogonal_complex_angles,
            ),
            Hypothesis(
                "i_k ≠ j_k: each factor rotates a coordinate plane",
                "one factor G(0, 0, 1) = I + 2(cos 1 − 1)E₀₀ (the formula with i = j) among random rotations, d = 8",
                _outside_orthogonal_same_coordinate,
            ),
        ),
    ),
    Identity(
        name="nn.givens.exp_commuting",
        area="nn",
        statement=r"\{i_k, j_k\}\ \text{pairwise disjoint or equal} \Rightarrow \prod_k G(i_k, j_k, \theta_k)"
        r" = \exp\Bigl(\sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})\Bigr)",
        source="Lie-Exponential Roadmap: 'equivalent to exp(A) with A skew' (exact for commuting rotations)",
        derive=_derive_exp_commuting,
        verify=_verify_exp_commuting,
        backends=("torch",),
        hypotheses=(
            Hypothesis(
                "the planes {i_k, j_k} are pairwise disjoint or equal (so the generators commute)",
                "a brick wall of 8 layers on d = 16: neighbouring planes share a coordinate, angles uniform in [−π, π)",
                _outside_exp_commuting,
            ),
        ),
    ),
    Identity(
        name="nn.givens.bch_defect",
        area="nn",
        statement=r"\Bigl\lVert \prod_s e^{\varepsilon B_s} - e^{\varepsilon \sum_s B_s} \Bigr\rVert"
        r" = \tfrac{\varepsilon^2}{2}\Bigl\lVert \sum_{a<b} [B_a, B_b] \Bigr\rVert + O(\varepsilon^3)"
        r"\quad (\varepsilon \max_s \lVert B_s \rVert \ll 1)",
        source="Lie-Exponential Roadmap: BCH, exp(A)exp(B) = exp(A + B + ½[A,B] + …), for overlapping planes",
        derive=_derive_bch_defect,
        verify=_verify_bch_defect,
        backends=("torch",),
        asymptotic=True,
        hypotheses=(
            Hypothesis(
                "ε‖B_s‖ ≪ 1: small angles, the asymptotic regime (the fit spans ε ∈ [0.025, 0.2] with unit-variance "
                "angle directions, ρ is read at ε = 10⁻³)",
                "large angles: slope fitted over ε ∈ {1.6, 3.2, 6.4, 12.8}, ρ read at ε = 1 (d = 6, 3 brick layers)",
                _outside_bch_defect_large_angles,
            ),
        ),
    ),
    Identity(
        name="nn.spd.lipschitz",
        area="nn",
        statement=r"W = e^{cS},\ c = \frac{\log L}{\max\bigl(b(S), \log L\bigr)},\ b(S) \ge \lambda_{\max}(S)"
        r" \Rightarrow W \succ 0,\ \lVert W \rVert_2 \le L\quad (S = S^\top,\ L > 1)",
        source="Lie-Exponential Roadmap: SPD-MLP with Lipschitz control; Gershgorin certificate [RECON]",
        derive=_derive_spd,
        verify=_verify_spd,
        backends=("torch",),
        hypotheses=(
            Hypothesis(
                "S = Sᵀ (symmetric; the layer takes S = (M + Mᵀ)/2)",
                "S = [[0, 10], [0, 0]], a Jordan block, with b(S) = λ_max(S) = 0 and L = 2: W = [[1, 10], [0, 1]]",
                _outside_spd_not_symmetric,
            ),
            Hypothesis(
                "L > 1 (log L > 0)",
                "L = ½ on a random symmetric S with λ_max(S) ≈ 7 (d = 16), Gershgorin bound: c = log L / b(S) < 0",
                _outside_spd_cap_below_one,
            ),
            Hypothesis(
                "b(S) ≥ λ_max(S): an upper bound (Gershgorin, or the exact λ_max)",
                "b(S) = λ_max(S)/2, an under-estimate such as a Rayleigh quotient, on a random symmetric S (d = 16), "
                "L = 2: ‖W‖₂ = L²",
                _outside_spd_lower_bound,
            ),
        ),
    ),
    Identity(
        name="nn.symplectic.preserves_form",
        area="nn",
        statement=r"H = H^\top,\ W = e^{JH} \Rightarrow W^\top J W = J,\ \det W = 1",
        source="Lie-Exponential Roadmap: symplectic updates via Hamiltonian generators",
        derive=_derive_symplectic,
        verify=_verify_symplectic,
        backends=("torch",),
        hypotheses=(
            Hypothesis(
                "H = Hᵀ (so JH is Hamiltonian: (JH)ᵀJ + J(JH) = 0)",
                "H = M with M ~ N(0, 1/d) not symmetrised, d = 8, three draws",
                _outside_symplectic_not_symmetric,
            ),
        ),
    ),
]
