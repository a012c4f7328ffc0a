r"""The log lens: principal logarithms of rotations and SPD maps, and the splits of a generator.

Source: Lie-Exponential Roadmap, "Log lens", "Log-Lens Diagnostics" and "Branch cuts/logs"
(:math:`S = \log W` for orthogonal maps with positive determinant or SPD maps, by a Schur principal log),
and the generator-field section (the compact/diagonal/nilpotent :math:`(K, H, N)` knobs exponentiated in the
fixed order :math:`\exp(K)\exp(H)\exp(N)`; the Cartan split).  The split formulas were lost in extraction
and are reconstructed as the Lie-algebra Iwasawa decomposition [RECON].  The functions checked are in
:mod:`workbench.lens`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import sympy as sp

from workbench.backend import to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.lens import cartan_split, iwasawa_split, principal_log

from ._common import EPS, by_scale, relative_error

#: Largest rotation angle drawn for SO(d): the principal log is ill-conditioned as |θ| → π.
MAX_ANGLE = 0.9 * np.pi


def _random_orthogonal(rng, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _random_rotation_generator(rng, d: int, angles: tuple[float, float] = (-MAX_ANGLE, MAX_ANGLE)) -> np.ndarray:
    """A skew A = Q (⊕_k θ_k J) Qᵀ with θ_k uniform in ``angles`` (default |θ_k| < 0.9π: log(e^A) = A)."""
    blocks = np.zeros((d, d))
    for k in range(d // 2):
        theta = rng.uniform(*angles)
        blocks[2 * k + 1, 2 * k], blocks[2 * k, 2 * k + 1] = theta, -theta
    q = _random_orthogonal(rng, d)
    a = q @ blocks @ q.T
    return (a - a.T) / 2


def _random_spd_generator(rng, d: int) -> np.ndarray:
    """A symmetric S with eigenvalues in [−2, 2], so e^S is SPD with condition number ≤ e⁴."""
    q = _random_orthogonal(rng, d)
    s = (q * rng.uniform(-2.0, 2.0, d)) @ q.T
    return (s + s.T) / 2


def _random_strip_generator(rng, d: int) -> np.ndarray:
    """A general real A (non-normal, neither skew nor symmetric) with ‖A‖₂ = 2, so spec A lies in |Im λ| ≤ 2 < π."""
    a = rng.standard_normal((d, d))
    return 2.0 * a / np.linalg.norm(a, 2)


def _mercator(x: np.ndarray, terms: int) -> np.ndarray:
    """The Mercator partial sum Σ_{k≤terms} (−1)^{k+1} X^k / k, summed by hand (an oracle independent of the lens)."""
    total, power = np.zeros_like(x), np.eye(x.shape[0])
    for k in range(1, terms + 1):
        power = power @ x
        total += (-1) ** (k + 1) * power / k
    return total


#: Mercator terms: the tail of the series at spectral radius 0.5 is ~0.5^K (times a polynomial for a Jordan-like X).
MERCATOR_TERMS = 160


def _log_of_exponential_error(a: np.ndarray, structure: float | None, backend: str) -> float:
    """Return max(‖log e^A − A‖, ‖e^{log e^A} − e^A‖) relative, log the lens's principal log.

    inf when ``structure`` is ±1 and log e^A is not exactly (skew-)symmetric: Sᵀ = structure·S bit for bit.
    """
    w = scipy.linalg.expm(a)
    s = principal_log(to_backend(w, backend))
    if structure is not None and not np.array_equal(s.T, structure * s):
        return np.inf
    return max(relative_error(s, a), relative_error(scipy.linalg.expm(s), w))


def _mercator_error(x: np.ndarray, backend: str) -> float:
    """For W = I + X: max(‖e^{log W} − W‖, ‖log W − Mercator(X)‖) relative (the series summed through 160 terms)."""
    w = np.eye(x.shape[0]) + x
    x = w - np.eye(x.shape[0])  # exact (Sterbenz): the X that W stores
    s = principal_log(to_backend(w, backend))
    return max(relative_error(scipy.linalg.expm(s), w), relative_error(_mercator(x, MERCATOR_TERMS), s))


def _near_identity_x(rng, d: int, radius: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Return two X with spectral radius ρ(X) = ``radius``.

    A random X with ‖X‖₂ = ``radius``, and a non-normal 6 x 6 upper-triangular X = radius·I + 1.5·(strict upper
    part of unit norm), ‖X‖₂ > 1 > ρ(X) (6 x 6 at every scale: its series has binomial transients that grow
    with d).
    """
    x = rng.standard_normal((d, d))
    upper = np.triu(rng.standard_normal((6, 6)), 1)
    return radius * x / np.linalg.norm(x, 2), radius * np.eye(6) + 1.5 * upper / np.linalg.norm(upper, 2)


# ---- nn.log_lens.principal_log ---------------------------------------------------------------


def _derive_principal_log() -> list[Step]:
    theta = sp.Symbol("theta", real=True)
    lam, x = sp.symbols("lambda x")
    a, b = sp.symbols("a b", positive=True)
    J = sp.Matrix([[0, -1], [1, 0]])
    R = sp.Matrix([[sp.cos(theta), -sp.sin(theta)], [sp.sin(theta), sp.cos(theta)]])
    exp_theta_j = (theta * J).exp().applyfunc(lambda e: sp.simplify(e.rewrite(sp.cos)))
    mercator = sum((-1) ** (k + 1) * x**k / k for k in range(1, 9))
    return [
        Step(
            "J = [[0, −1], [1, 0]], R(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]",
            R,
            statement=r"J = \begin{pmatrix}0&-1\\1&0\end{pmatrix},\quad R(\theta) = \begin{pmatrix}\cos\theta&-\sin\theta\\ \sin\theta&\cos\theta\end{pmatrix}",
            because="the generator of plane rotations and the rotation by θ",
        ),
        claim(
            "e^{θJ} = R(θ): θJ is a logarithm of the rotation",
            exp_theta_j,
            R,
            statement=r"e^{\theta J} = \cos\theta\,\mathsf I + \sin\theta\,J = R(\theta)",
            because="J² = −I splits the series into cosine and sine",
        ),
        claim(
            "θJ is skew-symmetric",
            (theta * J).T + theta * J,
            statement=r"(\theta J)^\top = -\theta J",
            because="Jᵀ = −J",
        ),
        claim(
            "the eigenvalues of θJ are ±iθ (det(λ − θJ) = λ² + θ²): inside the strip |Im λ| < π iff |θ| < π, "
            "so θJ is the principal log for |θ| < π",
            (lam * sp.eye(2) - theta * J).det(),
            lam**2 + theta**2,
            statement=r"\det(\lambda\mathsf I - \theta J) = \lambda^2 + \theta^2,\quad \operatorname{spec}\theta J = \{\pm i\theta\}\subset\{\lvert\operatorname{Im}\lambda\rvert < \pi\}\iff\lvert\theta\rvert<\pi",
            because="the principal logarithm is the one whose eigenvalues lie in the strip |Im λ| < π",
        ),
        claim(
            "SPD: exp(diag(log a, log b)) = diag(a, b) for a, b > 0 (log through the eigenvalues)",
            sp.diag(sp.log(a), sp.log(b)).exp(),
            sp.diag(a, b),
            statement=r"\exp\big(\operatorname{diag}(\log\lambda_i)\big) = \operatorname{diag}(\lambda_i),\quad \log(U\Lambda U^\top) = U\log\Lambda\,U^\top",
            because="an SPD matrix has a unique real symmetric logarithm, taken through its eigenvalues",
        ),
        claim(
            "near the identity: log(1 + x) = Σ_{k≥1} (−1)^{k+1} x^k / k (Mercator) through x^8",
            sp.series(sp.log(1 + x), x, 0, 9).removeO(),
            mercator,
            statement=r"\log(\mathsf I + X) = \sum_{k\ge1}\frac{(-1)^{k+1}}{k}X^k\quad(\rho(X) < 1,\ \text{e.g. } \lVert X\rVert < 1)",
            because="the Mercator series; a matrix power series converges where the spectral radius is below the scalar "
            "radius of convergence (Higham, Functions of Matrices, Thm 4.7); checked on the scalar Taylor polynomial "
            "through x⁸",
        ),
    ]


def _verify_principal_log(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: for W = e^A with A skew (angles |θ| < 0.9π), symmetric (eigenvalues in [−2, 2]) or general
    (non-normal, ‖A‖₂ = 2, so spec A lies in the strip |Im λ| < π) the principal log is A itself, so log W is
    compared with the generator it came from, and ``scipy.linalg.expm(log W)`` with W.  The structure must be
    exact: (S + Sᵀ) = 0 for rotations, S = Sᵀ for SPD, bit for bit.  Near the identity, W = I + X with
    ρ(X) = 0.5 (‖X‖₂ = 0.5, and a non-normal 6 x 6 X with ‖X‖₂ > 1), the round trip and the Mercator series
    summed by hand through 160 terms.  Tolerance 1e-12 relative (Frobenius): the logs are computed by
    orthogonal transformations (Schur, eigh) at a few ulps per entry, amplified by at most the condition
    number e⁴ ≈ 55 of the SPD maps; logm and the series of the non-normal X lose ~1e-14.
    """
    d = by_scale(scale, 6, 64)
    trials = by_scale(scale, 4, 8)
    worst = 0.0
    for _ in range(trials):
        for generator, structure in (
            (_random_rotation_generator, -1.0),
            (_random_spd_generator, 1.0),
            (_random_strip_generator, None),
        ):
            worst = max(worst, _log_of_exponential_error(generator(rng, d), structure, backend))
        for x in _near_identity_x(rng, d):
            worst = max(worst, _mercator_error(x, backend))
    return Verification.from_residual(worst, 1e-12, d=d, trials=trials)


def _outside_principal_log_strip(rng) -> Verification:
    """Outside "spec A in the strip |Im λ| < π": skew A with every rotation angle θ_k ∈ (1.1π, 1.9π).

    e^A is a rotation like any other, and its principal log is A with each θ_k replaced by θ_k − 2π (the
    log R(θ) = θJ of the statement becomes (θ − 2π)J): ‖log e^A − A‖/‖A‖ is O(1) while the round trip stays
    exact.  Same measurement as the check (d = 6, 4 maps).  Measured (catalogue seeds 0 / 7): 1.47 / 1.55
    against the tolerance 1e-12; 0.01 s.
    """
    worst = 0.0
    for _ in range(4):
        a = _random_rotation_generator(rng, 6, angles=(1.1 * np.pi, 1.9 * np.pi))
        worst = max(worst, _log_of_exponential_error(a, -1.0, "numpy"))
    return Verification.from_residual(worst, 1e-12, d=6, trials=4)


def _outside_principal_log_negative(rng) -> Verification:
    """Outside "no eigenvalue on (−∞, 0]": W = V diag(−2, λ₂…λ₆) V⁻¹, λ_k ∈ [0.5, 2], V = I + 0.3·(unit-norm random).

    One simple negative eigenvalue: W has no real logarithm at all.  The lens refuses it (``ValueError``: "no
    real principal logarithm"); the only real candidate a float pipeline has, the real part of the complex
    principal log (``scipy.linalg.logm``), misses W: the check's round trip ‖e^{log W} − W‖/‖W‖ is O(1).
    Measured (catalogue seeds 0 / 7): 1.31 / 1.10 against 1e-12; 0.01 s.
    """
    d = 6
    x = rng.standard_normal((d, d))
    v = np.eye(d) + 0.3 * x / np.linalg.norm(x, 2)
    w = v @ np.diag(np.concatenate([[-2.0], rng.uniform(0.5, 2.0, d - 1)])) @ np.linalg.inv(v)
    try:
        s = principal_log(w)
    except ValueError:  # refused, as it must be: measure the real part of the complex principal log instead
        s = np.real(scipy.linalg.logm(w))
    return Verification.from_residual(relative_error(scipy.linalg.expm(s), w), 1e-12, d=d)


def _outside_principal_log_series(rng) -> Verification:
    """Outside "ρ(W − I) < 1" (the Mercator series): W = I + X, X = V diag(1.5, λ₂…λ₆) V⁻¹, λ_k ∈ [0.1, 1].

    W's eigenvalues lie in [1.1, 2.5]: none on (−∞, 0], so its principal log exists and round-trips.  But
    ρ(X) = 1.5 and the partial sums of the series grow like 1.5^K/K: the check's ‖log W − Mercator_{160}(X)‖/‖log W‖ explodes.  Measured (catalogue seeds 0 / 7): 4.7e25 / 4.1e25 against
    1e-12; 0.01 s.
    """
    d = 6
    x = rng.standard_normal((d, d))
    v = np.eye(d) + 0.3 * x / np.linalg.norm(x, 2)
    x = v @ np.diag(np.concatenate([[1.5], rng.uniform(0.1, 1.0, d - 1)])) @ np.linalg.inv(v)
    return Verification.from_residual(_mercator_error(x, "numpy"), 1e-12, d=d)


# ---- nn.log_lens.iwasawa ---------------------------------------------------------------------


def _symbolic_iwasawa(a: sp.Matrix) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    """K = L − Lᵀ, H = diag(A), N = U + Lᵀ, with L, U the strictly lower and upper parts of A."""
    n = a.rows
    lower = sp.Matrix(n, n, lambda i, j: a[i, j] if i > j else 0)
    upper = sp.Matrix(n, n, lambda i, j: a[i, j] if i < j else 0)
    return lower - lower.T, sp.diag(*[a[i, i] for i in range(n)]), upper + lower.T


def _derive_iwasawa() -> list[Step]:
    n = 3
    a = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"a{i + 1}{j + 1}"))
    K, H, N = _symbolic_iwasawa(a)
    # Uniqueness: parts K' ∈ so(3), H' diagonal, N' strictly upper with K' + H' + N' = 0 must all vanish.
    k = sp.symbols("k1:4")
    h = sp.symbols("h1:4")
    m = sp.symbols("m1:4")
    K0 = sp.Matrix([[0, -k[0], -k[1]], [k[0], 0, -k[2]], [k[1], k[2], 0]])
    N0 = sp.Matrix([[0, m[0], m[1]], [0, 0, m[2]], [0, 0, 0]])
    (solution,) = sp.linsolve(list(K0 + sp.diag(*h) + N0), [*k, *h, *m])
    return [
        Step(
            "A = L + D + U (strictly lower, diagonal, strictly upper); K = L − Lᵀ, H = D, N = U + Lᵀ",
            (K, H, N),
            statement=r"A = L + D + U,\quad K = L - L^\top,\ H = D,\ N = U + L^\top",
            because="the additive Iwasawa split of gl(n) = so(n) ⊕ 𝔞 ⊕ 𝔫 from the triangular parts of A",
        ),
        claim(
            "K + H + N = A for a generic 3×3 A",
            K + H + N,
            a,
            statement=r"K + H + N = (L - L^\top) + D + (U + L^\top) = A",
            because="the Lᵀ terms cancel",
        ),
        claim(
            "K is skew-symmetric (K ∈ so(3))",
            K + K.T,
            statement=r"K + K^\top = (L - L^\top) + (L^\top - L) = 0",
            because="by construction",
        ),
        claim(
            "H is diagonal",
            H - sp.diag(*[H[i, i] for i in range(n)]),
            statement=r"H = \operatorname{diag}(A_{11},\dots,A_{nn})",
            because="H is the diagonal part D",
        ),
        claim(
            "N is strictly upper triangular (nilpotent: N³ = 0)",
            N**3,
            statement=r"N\ \text{strictly upper triangular}\ \Rightarrow\ N^n = 0",
            because="U and Lᵀ are both strictly upper triangular; each power pushes the support one diagonal up",
        ),
        claim(
            "N has no entries on or below the diagonal",
            sp.Matrix(n, n, lambda i, j: N[i, j] if i >= j else 0),
            statement=r"N_{ij} = 0\quad(i\ge j)",
            because="the support of U + Lᵀ",
        ),
        claim(
            "uniqueness: so(3) ⊕ a ⊕ n is direct (K' + H' + N' = 0 forces all nine coordinates to 0)",
            sp.Matrix(solution),
            sp.zeros(9, 1),
            statement=r"K' + H' + N' = 0,\ K'\in\mathfrak{so}(n),\ H'\in\mathfrak a,\ N'\in\mathfrak n\ \Rightarrow\ K' = H' = N' = 0",
            because="below the diagonal only K' lives, so K' = 0 by skew-symmetry; then the diagonal gives H' = 0 and N' = 0",
        ),
    ]


def _verify_iwasawa(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the sum K + H + N = A (relative Frobenius), membership of each part in its subspace (exact:
    skew, diagonal and strictly upper by construction, checked bit for bit) and uniqueness: the split of
    K₀ + H₀ + N₀ built from random parts returns those parts.  Tolerance 4ε relative: each entry of the sum
    is at most two roundings away from A's.
    """
    d = by_scale(scale, 8, 256)
    a = rng.standard_normal((d, d))
    split = iwasawa_split(to_backend(a, backend))
    K, H, N = split.K, split.H, split.N
    exact = (
        np.array_equal(K.T, -K)
        and np.array_equal(H, np.diag(np.diag(H)))
        and not np.any(np.tril(N))
        and np.array_equal(split.matrix, K + H + N)
    )
    if not exact:
        return Verification.from_residual(np.inf, 4 * EPS, d=d)
    residual = relative_error(K + H + N, a)
    lower = np.tril(rng.standard_normal((d, d)), -1)
    K0, H0, N0 = lower - lower.T, np.diag(rng.standard_normal(d)), np.triu(rng.standard_normal((d, d)), 1)
    again = iwasawa_split(to_backend(K0 + H0 + N0, backend))
    for part, truth in ((again.K, K0), (again.H, H0), (again.N, N0)):
        residual = max(residual, relative_error(part, truth))
    return Verification.from_residual(residual, 4 * EPS, d=d)


# ---- nn.log_lens.cartan ----------------------------------------------------------------------


def _derive_cartan() -> list[Step]:
    n = 3
    a = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"a{i + 1}{j + 1}"))
    K, P = (a - a.T) / 2, (a + a.T) / 2
    g_m = sp.Symbol("m", integer=True, positive=True)
    g_a = sp.MatrixSymbol("A", g_m, g_m)
    g_k, g_p = (g_a - g_a.T) / 2, (g_a + g_a.T) / 2
    return [
        Step(
            "K = (A − Aᵀ)/2, P = (A + Aᵀ)/2 for a generic 3×3 A",
            (K, P),
            statement=r"K = \tfrac12(A - A^\top)\in\mathfrak{so}(n),\quad P = \tfrac12(A + A^\top)\in\mathfrak p",
            because="the Cartan decomposition gl(n) = so(n) ⊕ symmetric matrices",
        ),
        claim("K + P = A", K + P, a, statement=r"K + P = A", because="the Aᵀ halves cancel"),
        claim(
            "K ∈ so(3), P symmetric",
            (K + K.T).col_join(P - P.T),
            statement=r"K^\top = -K,\quad P^\top = P",
            because="transposition swaps A and Aᵀ",
        ),
        claim(
            "orthogonal in the trace form: tr(KᵀP) = 0",
            (K.T * P).trace(),
            statement=r"\operatorname{tr}(K^\top P) = 0",
            because="tr(KP) = tr((KP)ᵀ) = tr(PᵀKᵀ) = −tr(PK) = −tr(KP), so tr(KᵀP) = −tr(KP) = 0",
        ),
        claim(
            "hence ‖A‖_F² = ‖K‖_F² + ‖P‖_F²",
            (a.T * a).trace(),
            (K.T * K).trace() + (P.T * P).trace(),
            statement=r"\lVert A\rVert_F^2 = \lVert K + P\rVert_F^2 = \lVert K\rVert_F^2 + \lVert P\rVert_F^2 + 2\operatorname{tr}(K^\top P) = \lVert K\rVert_F^2 + \lVert P\rVert_F^2",
            because="Pythagoras in the trace inner product",
        ),
        claim(
            "general N: K + P = A for an m×m matrix symbol A, m symbolic",
            g_k + g_p,
            g_a,
            statement=r"\tfrac12(A - A^\top) + \tfrac12(A + A^\top) = A,\quad A\in\mathbb R^{m\times m},\ m\text{ symbolic}",
            because="sympy adds the matrix-symbol expressions",
            general=True,
        ),
        claim(
            "general N: K ∈ so(m) and P symmetric, as one block row [K + Kᵀ, P − Pᵀ] = 0",
            sp.BlockMatrix([[g_k + g_k.T, g_p - g_p.T]]),
            sp.ZeroMatrix(g_m, 2 * g_m),
            statement=r"\big[K + K^\top,\ P - P^\top\big] = 0,\quad m\text{ symbolic}",
            because="sympy transposes (A ∓ Aᵀ)/2 on an m×m matrix symbol",
            general=True,
        ),
    ]


def _verify_cartan(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: K + P = A, K skew and P symmetric bit for bit, and |tr(KᵀP)| / (‖K‖_F‖P‖_F) = 0 (the cosine
    of the angle between the parts in the trace form).  Tolerance 1e-14: the trace is a sum of d² products
    whose exact value cancels to zero; rounding leaves ~√(d²) ε relative.
    """
    d = by_scale(scale, 8, 256)
    a = rng.standard_normal((d, d))
    split = cartan_split(to_backend(a, backend))
    K, P = split.K, split.P
    if not (np.array_equal(K.T, -K) and np.array_equal(P.T, P)):
        return Verification.from_residual(np.inf, 1e-14, d=d)
    cosine = abs(float(np.trace(K.T @ P))) / (np.linalg.norm(K) * np.linalg.norm(P))
    return Verification.from_residual(max(cosine, relative_error(K + P, a)), 1e-14, d=d)


# ---- nn.log_lens.product_form ----------------------------------------------------------------


def _derive_product_form() -> list[Step]:
    eps = sp.Symbol("epsilon")
    # A 2×2 example with all three parts present: K = [[0, −1], [1, 0]], H = diag(1, 2), N = [[0, 1], [0, 0]].
    K = sp.Matrix([[0, -1], [1, 0]])
    H = sp.diag(1, 2)
    N = sp.Matrix([[0, 1], [0, 0]])

    def exp_series(m: sp.Matrix, order: int) -> sp.Matrix:
        return sum(((eps * m) ** j / sp.factorial(j) for j in range(1, order + 1)), sp.eye(2))

    product = (exp_series(K, 2) * exp_series(H, 2) * exp_series(N, 2)).applyfunc(sp.expand)
    direct = exp_series(K + H + N, 2).applyfunc(sp.expand)
    bracket = (K * H - H * K + K * N - N * K + H * N - N * H) / 2
    second = (product - direct).applyfunc(lambda e: sp.expand(e).coeff(eps, 2))
    return [
        Step(
            "K ∈ so(2), H diagonal, N strictly upper; A = K + H + N",
            K + H + N,
            statement=r"A = K + H + N\in\mathfrak{so}(2)\oplus\mathfrak a\oplus\mathfrak n",
            because="an instance with all three Iwasawa parts present",
        ),
        claim(
            "e^{εK}e^{εH}e^{εN} − e^{εA} has no O(ε) term",
            (product - direct).applyfunc(lambda e: sp.expand(e).coeff(eps, 1)),
            statement=r"[\varepsilon]\big(e^{\varepsilon K}e^{\varepsilon H}e^{\varepsilon N} - e^{\varepsilon A}\big) = K + H + N - A = 0",
            because="both sides start I + εA",
        ),
        claim(
            "its ε² coefficient is ½([K,H] + [K,N] + [H,N]) (the degree-2 BCH term)",
            second,
            bracket,
            statement=r"[\varepsilon^2]\big(e^{\varepsilon K}e^{\varepsilon H}e^{\varepsilon N} - e^{\varepsilon A}\big) = \tfrac12\big([K,H] + [K,N] + [H,N]\big)",
            because="the three-factor BCH series at degree 2: ½Σ_{i<j}[X_i, X_j]",
        ),
        claim(
            "here ½([K,H] + [K,N] + [H,N]) = [[−1/2, −1], [−1/2, 1/2]] ≠ 0: the error is exactly second order",
            bracket,
            sp.Matrix([[-sp.Rational(1, 2), -1], [-sp.Rational(1, 2), sp.Rational(1, 2)]]),
            statement=r"\tfrac12\big([K,H] + [K,N] + [H,N]\big) = \begin{pmatrix}-\frac12 & -1\\ -\frac12 & \frac12\end{pmatrix}\ne0",
            because="evaluate the brackets on the instance: the product form is a second-order approximation, not exact",
        ),
    ]


def _verify_product_form(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: the rate.  ‖e^{εK}e^{εH}e^{εN} − e^{εA}‖_F = ε²‖½([K,H] + [K,N] + [H,N])‖_F + O(ε³) (BCH), so
    the fitted log-log slope over ε ∈ [10⁻³, 10⁻¹] must be 2; tolerance 0.05 (the O(ε³) term bends the
    fit by ~ε at the largest ε; rounding is 10⁻¹⁶ against errors ≥ 10⁻⁶).
    """
    d = by_scale(scale, 6, 64)
    a = rng.standard_normal((d, d)) / np.sqrt(d)
    return _product_form_rate(a, np.logspace(-3, -1, 5), backend)


def _product_form_rate(a: np.ndarray, epsilons: np.ndarray, backend: str) -> Verification:
    """Fitted slope of ‖e^{εK}e^{εH}e^{εN} − e^{εA}‖_F over ``epsilons`` (Iwasawa parts of A) against 2 ± 0.05."""
    errors = [iwasawa_split(to_backend(eps * a, backend)).product_error() for eps in epsilons]
    return Verification.from_rate(epsilons, errors, expected=2.0, tolerance=0.05, d=a.shape[0])


def _outside_product_form_large(rng) -> Verification:
    """Outside "ε → 0": the same random A (d = 6, entries N(0, 1/d)) at ε ∈ [10^0.5, 10^1.5] instead of [10⁻³, 10⁻¹].

    Far from the identity the product error grows like e^{ε·(spectral abscissae)}, no power of ε: the fitted
    slope is far above 2.  Measured (catalogue seeds 0 / 7): slope 15.8 / 17.8, residual 13.8 / 15.8 against the
    tolerance 0.05; 0.01 s.
    """
    return _product_form_rate(rng.standard_normal((6, 6)) / np.sqrt(6), np.logspace(0.5, 1.5, 5), "numpy")


def _outside_product_form_commuting(rng) -> Verification:
    """Outside "the parts do not commute": A = J ⊗ I₃ + cI₆ + I₂ ⊗ M, M strictly upper 3 x 3, c a random scalar.

    Its Iwasawa parts are K = J ⊗ I₃ (skew), H = cI₆, N = I₂ ⊗ M (strictly upper), all nonzero and pairwise
    commuting, so e^{εK}e^{εH}e^{εN} = e^{εA} exactly and the error is rounding (~1e-19 … 1e-17, about linear
    in ε), not ε²: the fitted slope misses 2.  Measured (catalogue seeds 0 / 7): slope 0.61 / −0.61, residual
    1.39 / 2.61 against 0.05 (rounding: slopes −0.6…1.3 over five seeds, never near 2); 0.01 s.
    """
    m = np.triu(rng.standard_normal((3, 3)), 1) / np.sqrt(3)
    j = np.array([[0.0, -1.0], [1.0, 0.0]])
    a = np.kron(j, np.eye(3)) + rng.standard_normal() * np.eye(6) + np.kron(np.eye(2), m)
    return _product_form_rate(a, np.logspace(-3, -1, 5), "numpy")


IDENTITIES = [
    Identity(
        name="nn.log_lens.principal_log",
        area="nn",
        statement=(
            r"\exp(\log W) = W\ (W\ \text{real, no eigenvalue on } (-\infty, 0]),\ "
            r"\log W = \textstyle\sum_{k\ge1}\frac{(-1)^{k+1}}{k}(W - I)^k\ (\rho(W - I) < 1);"
            r"\ \log e^{A} = A\ \text{for real } A,\ \operatorname{spec}A \subset \{|\operatorname{Im}\lambda| < \pi\}"
            r"\ (A \in \mathfrak{so}(d):\ |\theta_k| < \pi;\ A = A^\top:\ \text{always});"
            r"\quad \log R(\theta) = \theta J\ (|\theta| < \pi)"
        ),
        source=(
            "Lie-Exponential Roadmap, Log lens / Log-Lens Diagnostics / Branch cuts: principal log of "
            "orthogonal (det > 0) and SPD maps by a Schur log [SEED]; Higham, Functions of Matrices, Thm 1.31"
        ),
        derive=_derive_principal_log,
        verify=_verify_principal_log,
        hypotheses=(
            Hypothesis(
                "spec A inside the strip |Im λ| < π (A skew: every rotation angle |θ_k| < π; automatic for A = Aᵀ), "
                "so that A is the principal log of e^A",
                "A skew with every rotation angle θ_k ∈ (1.1π, 1.9π), d = 6",
                _outside_principal_log_strip,
            ),
            Hypothesis(
                "W has no eigenvalue on (−∞, 0]: only then does the principal log exist, and then it is real",
                "W = V diag(−2, λ₂…λ₆) V⁻¹ with λ_k ∈ [0.5, 2] (one negative eigenvalue: no real logarithm)",
                _outside_principal_log_negative,
            ),
            Hypothesis(
                "ρ(W − I) < 1 for the Mercator series (e.g. ‖W − I‖₂ < 1, W near the identity)",
                "W = I + X, X = V diag(1.5, λ₂…λ₆) V⁻¹, λ_k ∈ [0.1, 1]: ρ(X) = 1.5, W's eigenvalues in [1.1, 2.5]",
                _outside_principal_log_series,
            ),
        ),
    ),
    Identity(
        name="nn.log_lens.iwasawa",
        area="nn",
        statement=(
            r"A = K + H + N,\ K = L - L^\top \in \mathfrak{so}(d),\ H = \operatorname{diag}A,"
            r"\ N = U + L^\top \in \mathfrak n\ \text{(unique)}"
        ),
        source=(
            "Lie-Exponential Roadmap, compact/diagonal/nilpotent (K, H, N) generators [SEED]; split "
            "formulas lost in extraction, reconstructed as the Lie-algebra Iwasawa decomposition [RECON]"
        ),
        derive=_derive_iwasawa,
        verify=_verify_iwasawa,
    ),
    Identity(
        name="nn.log_lens.cartan",
        area="nn",
        statement=r"A = K + P,\ K = \tfrac12(A - A^\top),\ P = \tfrac12(A + A^\top),\ \operatorname{tr}(K^\top P) = 0",
        source="Lie-Exponential Roadmap, the Cartan split as control knobs [SEED]; gl(d) = so(d) ⊕ p",
        derive=_derive_cartan,
        verify=_verify_cartan,
    ),
    Identity(
        name="nn.log_lens.product_form",
        area="nn",
        statement=(
            r"\lVert e^{\varepsilon K}e^{\varepsilon H}e^{\varepsilon N} - e^{\varepsilon A}\rVert_F"
            r" = \varepsilon^2 \lVert\tfrac12([K,H] + [K,N] + [H,N])\rVert_F + O(\varepsilon^3)"
            r"\ \ (\varepsilon\to0;\ [K,H] + [K,N] + [H,N] \neq 0\text{: the order 2 is attained})"
        ),
        source=(
            "Lie-Exponential Roadmap, 'exponentiate in fixed order exp(K)exp(H)exp(N); errors vs. "
            "commutators' [SEED]; the degree-2 BCH term [DERIVED]"
        ),
        derive=_derive_product_form,
        verify=_verify_product_form,
        asymptotic=True,
        hypotheses=(
            Hypothesis(
                "ε → 0 (εA near 0: the product form is a second-order approximation only there)",
                "the same random A (d = 6) at ε ∈ [10^0.5, 10^1.5] instead of [10⁻³, 10⁻¹]",
                _outside_product_form_large,
            ),
            Hypothesis(
                "the parts do not commute: ½([K,H] + [K,N] + [H,N]) ≠ 0 (generic A); commuting parts fuse exactly",
                "A = J ⊗ I₃ + cI₆ + I₂ ⊗ M (M strictly upper): K, H, N nonzero and pairwise commuting",
                _outside_product_form_commuting,
            ),
        ),
    ),
]
