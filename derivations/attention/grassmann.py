r"""Heads as points of a Grassmannian: the gauge moves no subspace, and the Grassmannian has dimension k(n − k).

Source: ISA ML01 (a head as a point of a Grassmannian); Björck & Golub (1973) and Knyazev & Argentati (2002)
(principal angles and their sine route); Edelman, Arias & Smith (1998) §2.5 (the tangent space of the
Grassmannian); book/reference.md §C.1–§C.4.  The gauge is derived with matrix symbols (any size) and on a
4-dimensional example with symbolic 2×2 gauges; the dimension from the exact Jacobian of Y ↦ YY⁺ for
(n, k) = (3, 1) and (4, 2).  Both are measured through :mod:`workbench.attention` on numpy and on torch.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.attention import grassmann_dimension, principal_angles, projection_differential, subspace_basis
from workbench.backend import namespace, to_backend, to_numpy
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim

from .._common import by_scale, relative_error
from ._shared import transpose

# ---- 1. the gauge moves no subspace -------------------------------------------------------------------


def _projection(W: sp.Matrix) -> sp.Matrix:
    """P(W) = W(WᵀW)⁻¹Wᵀ, entry by entry cancelled (rational functions of the gauge symbols)."""
    return (W * (W.T * W).inv() * W.T).applyfunc(sp.cancel)


def _cosine_matrix(W1: sp.Matrix, W2: sp.Matrix) -> sp.Matrix:
    """M = (W₁ᵀW₁)⁻¹W₁ᵀP(W₂)W₁, similar to (Q₁ᵀQ₂)(Q₁ᵀQ₂)ᵀ: its eigenvalues are the cos²θ_i."""
    return ((W1.T * W1).inv() * W1.T * _projection(W2) * W1).applyfunc(sp.cancel)


def _gauge_symbols(name: str) -> sp.Matrix:
    return sp.Matrix(2, 2, sp.symbols(f"{name}_0:4", real=True))


def _derive_gauge_invariance() -> list[Step]:
    n, k = sp.symbols("n k", integer=True, positive=True)
    W, W_Q, W_K = (sp.MatrixSymbol(name, n, k) for name in ("W", "W_Q", "W_K"))
    X = sp.MatrixSymbol("X", sp.Symbol("N", integer=True, positive=True), n)
    G, gram = sp.MatrixSymbol("G", k, k), sp.MatrixSymbol("A", k, k)
    V, P2 = sp.MatrixSymbol("W_1", n, k), sp.MatrixSymbol("P_2", n, n)
    inverse = G.inv() * (W.T * W).inv() * G.inv().T  # ((WG)ᵀWG)⁻¹, by the first step
    # col W₁ = span(e₀, e₁); col W₂ = span(e₀, (3e₁ + 4e₂)/5): principal angles 0 and arccos(3/5)
    W1 = sp.Matrix([[1, 1], [0, 2], [0, 0], [0, 0]])
    W2 = sp.Matrix([[2, 1], [0, 3], [0, 4], [0, 0]])
    G1, G2 = _gauge_symbols("g"), _gauge_symbols("h")
    moved = _cosine_matrix(W1 * G1, W2 * G2)
    return [
        claim(
            "for invertible G and A = WᵀW: (GᵀAG)⁻¹ = G⁻¹A⁻¹G⁻ᵀ",
            (G.T * gram * G) * (G.inv() * gram.inv() * G.inv().T),
            sp.Identity(k),
            statement=r"(G^\top AG)\,(G^{-1}A^{-1}G^{-\top}) = I_k",
            because="the factors cancel from the inside out, GG⁻¹ = I, AA⁻¹ = I, GᵀG⁻ᵀ = I; matrix symbols of any size k",
            general=True,
        ),
        claim(
            "so the projection onto col(WG) is that onto col W: P(WG) = P(W)",
            (W * G) * inverse * (W * G).T,
            W * (W.T * W).inv() * W.T,
            statement=r"P(WG) = WG\big((WG)^\top WG\big)^{-1}(WG)^\top = WGG^{-1}(W^\top W)^{-1}G^{-\top}G^\top W^\top"
            r" = P(W)",
            because="P(W) depends on W only through its column space, which right multiplication by an invertible G "
            "does not change; matrix symbols, any n and k",
            general=True,
        ),
        claim(
            "n = 4, k = 2, a symbolic gauge G = (g_ij), det G ≠ 0: P(W₁G) = P(W₁) and P(W₁G⁻ᵀ) = P(W₁) entry by entry",
            sp.Matrix.hstack(_projection(W1 * G1), _projection(W1 * G1.inv().T)),
            sp.Matrix.hstack(_projection(W1), _projection(W1)),
            statement=r"P(W_1G) = P(W_1G^{-\top}) = P(W_1)\quad(G \in GL_2)",
            because="the same cancellation, done on explicit rational functions of the four entries of G",
        ),
        claim(
            "M = (W₁ᵀW₁)⁻¹W₁ᵀP(W₂)W₁ has trace 1 + 9/25 and determinant 9/25: cos²θ = {1, 9/25}, θ = (0, arccos 3/5)",
            sp.Matrix([_cosine_matrix(W1, W2).trace(), _cosine_matrix(W1, W2).det()]),
            sp.Matrix([1 + sp.Rational(9, 25), sp.Rational(9, 25)]),
            statement=r"M_{12} = (W_1^\top W_1)^{-1}W_1^\top P_2W_1 = R_1^{-1}(Q_1^\top Q_2)(Q_1^\top Q_2)^\top R_1,"
            r"\quad \operatorname{spec}M_{12} = \{\cos^2\theta_i\}",
            because="with W₁ = Q₁R₁ (QR), M is similar to (Q₁ᵀQ₂)(Q₁ᵀQ₂)ᵀ, whose eigenvalues are the squared singular "
            "values of Q₁ᵀQ₂, the cos²θ_i (Björck–Golub 1973); here e₀ is shared and (3e₁ + 4e₂)/5 makes cos θ = 3/5 "
            "with e₁",
        ),
        claim(
            "with gauges G₁ = (g_ij), G₂ = (h_ij) on both sides the trace and determinant of M are unchanged",
            sp.Matrix([sp.cancel(moved.trace()), sp.cancel(moved.det())]),
            sp.Matrix([1 + sp.Rational(9, 25), sp.Rational(9, 25)]),
            statement=r"\operatorname{spec}M(W_1G_1, W_2G_2) = \operatorname{spec}M(W_1, W_2):\ "
            r"\theta(W_1G_1, W_2G_2) = \theta(W_1, W_2)",
            because="a 2×2 spectrum is fixed by trace and determinant; P(W₂G₂) = P(W₂) and M(W₁G₁, ·) = G₁⁻¹MG₁ "
            "(next step)",
        ),
        claim(
            "in general M(W₁G₁, W₂G₂) = G₁⁻¹ M(W₁, W₂) G₁ (P₂ = P(W₂G₂) = P(W₂))",
            inverse.subs(W, V) * (V * G).T * P2 * V * G,
            G.inv() * (V.T * V).inv() * V.T * P2 * V * G,
            statement=r"M(W_1G_1, W_2G_2) = G_1^{-1}(W_1^\top W_1)^{-1}G_1^{-\top}G_1^\top W_1^\top P_2W_1G_1"
            r" = G_1^{-1}M(W_1, W_2)\,G_1",
            because="similar matrices share their spectrum, so every principal angle is gauge invariant; matrix symbols",
            general=True,
        ),
        claim(
            "the head's gauge W_Q ↦ W_QG, W_K ↦ W_KG⁻ᵀ keeps the scores: (XW_QG)(XW_KG⁻ᵀ)ᵀ = XW_QW_KᵀXᵀ",
            (X * W_Q * G) * (X * W_K * G.inv().T).T,
            X * W_Q * W_K.T * X.T,
            statement=r"(XW_QG)(XW_KG^{-\top})^\top = XW_QGG^{-1}W_K^\top X^\top = XW_QW_K^\top X^\top",
            because="(G⁻ᵀ)ᵀ = G⁻¹ cancels G; with P(W_QG) = P(W_Q) and P(W_KG⁻ᵀ) = P(W_K) the head's point on "
            "Gr(d_h, D) is a property of the head, not of its parameters; matrix symbols",
            general=True,
        ),
    ]


def _random_orthogonal(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diagonal(r))


def _conditioned(rng, d, condition=10.0):
    """A random invertible Q₁ diag(s) Q₂ with s ∈ [1, condition], both ends attained: cond₂ = ``condition``."""
    s = np.exp(rng.uniform(0.0, math.log(condition), d))
    s[0], s[-1] = 1.0, condition
    return (_random_orthogonal(rng, d) * s) @ _random_orthogonal(rng, d)


def _small_angle_error(rng, n, p, delta, backend) -> tuple[float, float]:
    """Relative error of the largest angle between two gauged p-planes that differ by ``delta`` in one direction.

    Also returns what the cosine route, arccos of the smallest singular value of Q₁ᵀQ₂, gives for the same pair.
    """
    Q, _ = np.linalg.qr(rng.standard_normal((n, p + 1)))
    Q1, Q2 = Q[:, :p], Q[:, :p].copy()
    Q2[:, -1] = math.cos(delta) * Q[:, p - 1] + math.sin(delta) * Q[:, p]
    W1 = to_backend(Q1 @ _conditioned(rng, p), backend)
    W2 = to_backend(Q2 @ _conditioned(rng, p), backend)
    theta = to_numpy(principal_angles(W1, W2))
    cosine = math.acos(min(1.0, float(np.linalg.svd(Q1.T @ Q2, compute_uv=False)[-1])))
    return abs(float(theta[-1]) - delta) / delta, abs(cosine - delta) / delta


def _verify_gauge_invariance(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the principal angles of the ungauged pair (col W₁, col W₂) for random Gaussian W₁ ∈ ℝ^{n×p},
    W₂ ∈ ℝ^{n×q} (equal and unequal p, q), against those of (col W₁G₁, col W₂G₂) with G_i = Q diag(s) Q',
    s ∈ [1, 10] (cond G = 10); zero angles between col W_Q and col W_QG and between col W_K and col W_KG⁻ᵀ; the
    scores XW_QW_KᵀXᵀ of the ungauged head.  Control: two planes at a known angle δ = 1e-8 along one direction,
    gauged; their largest computed angle must be δ to a relative 1e-4, else the check fails.  The sine route
    of principal_angles gets it to ≈ 1e-8 relative; arccos of the computed cosine, reported as cosine_route,
    errs by 50–200 % (cos δ = 1 − 5e-17 is below the rounding of a singular value near 1).

    Tolerance 1e-12 absolute in the angles and relative (Frobenius) in the scores: an orthonormal basis of col WG
    is accurate to about n·ε·cond(WG) with cond(WG) ≤ cond(W)·10 ≈ 1e2, i.e. ≈ 1e-13 at n = 64 (observed ≈ 1e-15);
    the scores multiply by G and G⁻¹, error ≈ cond(G)·ε ≈ 2e-15.
    """
    n, shapes, tokens = by_scale(scale, (10, ((3, 3), (2, 4)), 6), (64, ((8, 8), (8, 12)), 32))
    worst = 0.0
    for p, q in shapes:
        W1, W2 = rng.standard_normal((n, p)), rng.standard_normal((n, q))
        G1, G2 = _conditioned(rng, p), _conditioned(rng, q)
        before = principal_angles(to_backend(W1, backend), to_backend(W2, backend))
        after = principal_angles(to_backend(W1 @ G1, backend), to_backend(W2 @ G2, backend))
        worst = max(worst, float(np.max(np.abs(to_numpy(after) - to_numpy(before)))))
    d_h = shapes[0][0]
    X = to_backend(rng.standard_normal((tokens, n)), backend)
    W_Q, W_K = (to_backend(rng.standard_normal((n, d_h)), backend) for _ in range(2))
    G = to_backend(_conditioned(rng, d_h), backend)
    xp = namespace(G)
    G_inv_T = transpose(xp.linalg.inv(G))
    scores = (X @ W_Q) @ transpose(X @ W_K)
    gauged = (X @ (W_Q @ G)) @ transpose(X @ (W_K @ G_inv_T))
    worst = max(worst, relative_error(gauged, scores))
    for W, moved in ((W_Q, W_Q @ G), (W_K, W_K @ G_inv_T)):
        worst = max(worst, float(np.max(to_numpy(principal_angles(W, moved)))))
    small, cosine_route = _small_angle_error(rng, n, d_h, 1e-8, backend)
    if small > 1e-4:
        worst = math.inf  # the small-angle control: 1e-8 must be resolved, not rounded to 0
    return Verification.from_residual(
        worst, 1e-12, n=n, pairs=len(shapes), small_angle_rel=float(f"{small:.2g}"), cosine_route=round(cosine_route, 3)
    )


# ---- 2. the dimension of the Grassmannian -----------------------------------------------------------------


def _row_vec(M: sp.Matrix) -> sp.Matrix:
    return M.reshape(M.rows * M.cols, 1)


def _exact_jacobian(point: sp.Matrix) -> sp.Matrix:
    """The Jacobian of vec P(Y) in vec Y (both row-major) at ``point``, by sympy differentiation."""
    n, k = point.shape
    Y = sp.Matrix(n, k, lambda i, a: sp.Symbol(f"y{i}{a}", real=True))
    P = Y * (Y.T * Y).inv() * Y.T
    J = _row_vec(P).jacobian(_row_vec(Y))
    values = dict(zip(_row_vec(Y), _row_vec(point), strict=True))
    return J.subs(values).applyfunc(sp.cancel)


def _formula_jacobian(point: sp.Matrix) -> sp.Matrix:
    """The closed form (I − P) dY Y⁺ + ((I − P) dY Y⁺)ᵀ as an exact n² × nk matrix (projection_differential's)."""
    n, k = point.shape
    pinv = (point.T * point).inv() * point.T
    C = sp.eye(n) - point * pinv
    return sp.Matrix(
        n * n,
        n * k,
        lambda r, c: C[r // n, c // k] * pinv[c % k, r % n] + C[r % n, c // k] * pinv[c % k, r // n],
    )


# Generic full-rank points with small integer entries.
_POINTS = {
    (3, 1): sp.Matrix([[1], [2], [-2]]),
    (4, 2): sp.Matrix([[1, 0], [2, 1], [0, 3], [1, -1]]),
}


def _derive_dimension() -> list[Step]:
    n, k = sp.symbols("n k", integer=True, positive=True)
    steps = [
        claim(
            "count: nk entries of Y minus k² gauge directions YB",
            n * k - k**2,
            k * (n - k),
            statement=r"\dim\mathrm{Gr}(k, n) = \dim\mathbb R^{n\times k}_* - \dim GL_k = nk - k^2 = k(n - k)",
            because="Gr(k, n) is the quotient of the full-rank n×k matrices by Y ~ YB, B ∈ GL_k (Edelman–Arias–Smith "
            "1998 §2.5); the map Y ↦ P(Y) = YY⁺ is constant on the orbits",
            general=True,
        )
    ]
    for (rows, cols), point in _POINTS.items():
        J = _exact_jacobian(point)
        B = sp.Matrix(cols, cols, lambda a, b: sp.Symbol(f"b{a}{b}", real=True))
        orbit = sp.Matrix.hstack(
            *[
                _row_vec(point * sp.Matrix(cols, cols, lambda a, b, e=e, c=cols: int(a * c + b == e)))
                for e in range(cols**2)
            ]
        )
        size = f"(n, k) = ({rows}, {cols})"
        steps += [
            claim(
                f"{size}: sympy's Jacobian of vec P(Y) at the integer point Y₀ is the closed form (I − P)dY Y⁺ + transpose",
                J,
                _formula_jacobian(point),
                statement=r"dP = (I - P)\,dY\,Y^+ + \big((I - P)\,dY\,Y^+\big)^\top,\quad Y^+ = (Y^\top Y)^{-1}Y^\top",
                because="differentiate P = Y(YᵀY)⁻¹Yᵀ: d(YᵀY)⁻¹ = −(YᵀY)⁻¹(dYᵀY + YᵀdY)(YᵀY)⁻¹, and the terms "
                "regroup into (I − P)dY Y⁺ and its transpose",
            ),
            claim(
                f"{size}: its exact rank is k(n − k) = {grassmann_dimension(rows, cols)}",
                sp.Integer(J.rank()),
                cols * (rows - cols),
                statement=r"\operatorname{rank} dP_{Y} = k(n - k)\quad(Y \text{ of full rank})",
                because="the image is the tangent space {(I − P)ZP + PZᵀ(I − P)} of the embedded Grassmannian at P, "
                "whose elements are determined by the (n − k)×k block (I − P)ZP in adapted bases",
            ),
            claim(
                f"{size}: the k² = {cols**2} directions YB (B symbolic) are in the kernel: J vec(Y₀B) = 0",
                (J * _row_vec(point * B)).applyfunc(sp.expand),
                statement=r"dP[YB] = (I - P)YBY^+ + (\cdots)^\top = 0\quad\text{since } (I - P)Y = 0",
                because="moving Y within its orbit Y ↦ Y(I + tB) does not move its column space",
            ),
            claim(
                f"{size}: and they span a k² = {cols**2}-dimensional space, so the kernel is exactly {{YB}}",
                sp.Integer(orbit.rank()),
                sp.Integer(rows * cols - J.rank()),
                statement=r"\ker dP_Y = \{YB : B \in \mathbb R^{k\times k}\},\quad \dim = k^2 = nk - k(n - k)",
                because="B ↦ YB is injective for full-rank Y, and the kernel has dimension nk − rank = k²",
            ),
        ]
    return steps


def _projection_on(Y):
    """P(Y) = Y (YᵀY)⁻¹ Yᵀ on Y's backend (the oracle; independent of the library), real or complex Y."""
    xp = namespace(Y)
    return Y @ xp.linalg.solve(transpose(Y) @ Y, transpose(Y))


#: The complex step: far below √ε, since nothing is subtracted (only the O(h²) truncation is left, ≈ 1e-60).
_STEP = 1e-30


def _complex_step(Y, backend: str) -> np.ndarray:
    """∂ vec P/∂ Y_e = Im P(Y + ih E_e)/h for each entry e of Y (row-major), on Y's backend, returned on the host.

    P is a rational function of the entries of Y, real on real Y, so P(Y + ihE) = P(Y) + ih dP[E] + O(h²) with
    the transpose (not the conjugate transpose) in (YᵀY)⁻¹: the imaginary part is the derivative to rounding.
    """
    n, k = (int(s) for s in Y.shape)
    columns = []
    for e in range(n * k):
        step = np.zeros((n, k))
        step.flat[e] = 1.0
        E = to_backend(step, backend)
        columns.append(np.imag(to_numpy(_projection_on(Y + 1j * _STEP * E))).reshape(-1) / _STEP)
    return np.stack(columns, axis=1)


def _verify_dimension(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the complex-step derivative Im P(Y + ihE)/h, h = 1e-30, of P(Y) = Y(YᵀY)⁻¹Yᵀ (computed on the
    backend in complex128 by a linear solve, not by the library; Squire & Trapp 1998) against
    projection_differential(Y), relative in the Frobenius norm; the numerical rank of projection_differential(Y),
    the number of singular values above 1e-8 times the largest, against grassmann_dimension(n, k); and
    J·vec(YB) = 0 for a random B, relative to ‖J‖‖YB‖.  Y is Gaussian n×k with n ≥ 3k (well conditioned).
    Residual: the largest relative error, or 1 if a rank is wrong.  The sizes report the singular-value gap,
    σ_r/σ_1 against σ_{r+1}/σ_1 (observed ≈ 0.5 against ≈ 1e-15), and, for comparison, the error of central
    differences at h = 1e-5 (≈ 1e-10: O(h²) truncation plus O(ε/h) cancellation).

    Tolerance 1e-12: the complex step subtracts nothing, so its error is the rounding of the solve, ≈
    cond(YᵀY)·ε ≈ 1e-14 for these Y (observed ≈ 1e-15); the kernel residual is a sum of nk products (≈ 1e-16).
    """
    shapes = by_scale(scale, ((6, 2), (8, 3)), ((16, 4), (24, 6)))
    worst, low_gap, high_gap, central = 0.0, 1.0, 0.0, 0.0
    for n, k in shapes:
        Y_host = rng.standard_normal((n, k))
        Y = to_backend(Y_host, backend)
        J = projection_differential(Y)
        worst = max(worst, relative_error(_complex_step(Y, backend), J))
        central = max(central, relative_error(_central_difference(Y_host, 1e-5), J))
        s = np.linalg.svd(J, compute_uv=False)
        rank = int(np.sum(s > 1e-8 * s[0]))
        if rank != grassmann_dimension(n, k):
            worst = max(worst, 1.0)
        low_gap, high_gap = min(low_gap, s[rank - 1] / s[0]), max(high_gap, s[rank] / s[0])
        YB = (Y_host @ rng.standard_normal((k, k))).reshape(-1)
        worst = max(worst, float(np.linalg.norm(J @ YB) / (np.linalg.norm(J, 2) * np.linalg.norm(YB))))
    return Verification.from_residual(
        worst,
        1e-12,
        shapes=str(list(shapes)),
        sigma_r=float(f"{low_gap:.2g}"),
        sigma_r_plus_1=float(f"{high_gap:.2g}"),
        central_difference=float(f"{central:.2g}"),
    )


def _central_difference(Y: np.ndarray, h: float) -> np.ndarray:
    """(P(Y + hE) − P(Y − hE))/2h for each entry, on the host: the classical difference, for comparison only."""
    columns = []
    for e in range(Y.size):
        step = np.zeros(Y.shape)
        step.flat[e] = h
        columns.append((_projection_on(Y + step) - _projection_on(Y - step)).reshape(-1) / (2 * h))
    return np.stack(columns, axis=1)


# ---- outside the hypotheses ---------------------------------------------------------------------------


def _outside_singular_gauge(rng) -> Verification:
    """The gauge law with a singular G (rank p − 1), G⁻¹ read as the pseudo-inverse G⁺.

    col W₁G is a (p − 1)-plane inside col W₁, so the angle lists differ in length (residual 1, as for a wrong rank),
    and the scores (XW_QG)(XW_K(G⁺)ᵀ)ᵀ = XW_QGG⁺W_KᵀXᵀ lose the part of M along the kernel of G.  Measured (numpy,
    n = 10, p = 3): residual 1 (one angle fewer; the scores alone are off by 0.39 relative) against the tolerance
    1e-12.
    """
    n, p, tokens = 10, 3, 6
    W1, W2 = rng.standard_normal((n, p)), rng.standard_normal((n, p))
    G = _conditioned(rng, p)
    G -= np.outer(G @ (v := rng.standard_normal(p)), v) / (v @ v)  # kill the direction v: rank p − 1
    before = principal_angles(W1, W2)
    after = principal_angles(subspace_basis(W1 @ G).basis, W2)
    worst = 1.0 if after.shape != before.shape else float(np.max(np.abs(after - before)))
    X = rng.standard_normal((tokens, n))
    W_Q, W_K = rng.standard_normal((n, p)), rng.standard_normal((n, p))
    scores = relative_error((X @ W_Q @ G) @ (X @ W_K @ np.linalg.pinv(G).T).T, X @ W_Q @ W_K.T @ X.T)
    return Verification.from_residual(max(worst, scores), 1e-12, n=n, p=p, rank_G=p - 1, scores=round(scores, 3))


# ---- the catalogue ------------------------------------------------------------------------------------

IDENTITIES = [
    Identity(
        name="attention.grassmann.gauge_invariance",
        area="attention",
        statement=r"\theta(\operatorname{col}W_1G_1, \operatorname{col}W_2G_2) = \theta(\operatorname{col}W_1, "
        r"\operatorname{col}W_2)\ (G_i\in GL),\quad (XW_QG)(XW_KG^{-\top})^\top = XW_QW_K^\top X^\top",
        source="ISA ML01 (heads as points of a Grassmannian) [DERIVED gauge invariance]; Björck & Golub (1973) "
        "(cos θ = σ(Q₁ᵀQ₂)); Knyazev & Argentati (2002) (small angles from sines); book/reference.md §C.1, §C.4",
        derive=_derive_gauge_invariance,
        verify=_verify_gauge_invariance,
        hypotheses=(
            Hypothesis(
                "G_i invertible (G ∈ GL): a singular G shrinks col WG",
                "a gauge G of rank p − 1 (G⁻¹ read as the pseudo-inverse)",
                _outside_singular_gauge,
            ),
        ),
    ),
    Identity(
        name="attention.grassmann.dimension",
        area="attention",
        statement=r"\dim\mathrm{Gr}(k, n) = k(n - k) = \operatorname{rank} d(YY^+)_Y,\quad "
        r"\ker d(YY^+)_Y = \{YB : B \in \mathbb R^{k\times k}\}\ (Y\in\mathbb R^{n\times k}\text{ of full rank})",
        source="Edelman, Arias & Smith (1998) §2.5 (the Grassmannian as a quotient, its tangent space) "
        "[DERIVED rank of the differential]; book/reference.md §C.1",
        derive=_derive_dimension,
        verify=_verify_dimension,
        hypotheses=(
            Hypothesis(
                "Y of full column rank (a point of Gr(k, n))",
                reason="a rank-deficient Y represents no point of Gr(k, n): YᵀY is singular, and Y ↦ YY⁺ is not even "
                "continuous there (the pseudo-inverse jumps), so there is no differential whose rank could be measured",
            ),
        ),
    ),
]
