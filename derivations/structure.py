r"""Structure by construction: the exponential maps a Lie algebra into its group.

Source: Lie-Exponential Roadmap, "structure by construction":
skew-symmetric ↦ orthogonal, symmetric ↦ SPD, Markov generator ↦ row-stochastic,
Hamiltonian ↦ symplectic.

Symbolic route (all four): a quadratic invariant :math:`W^\top G W = G` of
:math:`W(t) = e^{tA}` holds for all t iff every Taylor coefficient of
:math:`e^{tA^\top} G e^{tA} - G` vanishes; the first is :math:`A^\top G + GA`, and
sympy checks the first few on a generic symbolic element of the algebra.
"""

from __future__ import annotations

import array_api_compat
import numpy as np
import sympy as sp

from workbench.backend import matrix_exp, namespace, to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.markov import markov_semigroup

from ._common import EPS, as_float, by_scale, sandwich_coefficient

SERIES_ORDER = 4  # Taylor coefficients t¹…t⁴ are checked symbolically
BATCH = 4  # verify on a stack of matrices: the batched matrix_exp path is exercised too


def _symmetric(n: int, name: str) -> sp.Matrix:
    return sp.Matrix(n, n, lambda i, j: sp.Symbol(f"{name}{min(i, j)}{max(i, j)}", real=True))


def _skew(n: int, name: str) -> sp.Matrix:
    def entry(i, j):
        if i == j:
            return sp.Integer(0)
        s = sp.Symbol(f"{name}{min(i, j)}{max(i, j)}", real=True)
        return s if i < j else -s

    return sp.Matrix(n, n, entry)


def _invariant_steps(a: sp.Matrix, g: sp.Matrix, what: str, order: int = SERIES_ORDER) -> list[Step]:
    steps = [
        Step(
            f"generic element A of the algebra ({what})",
            a,
            statement=r"A\in\mathfrak g_G = \{A : A^\top G + GA = 0\},\quad W(t) = e^{tA}",
            because="a generic element of the Lie algebra that fixes the quadratic form G (G = I: skew-symmetric; G = J: Hamiltonian)",
        ),
        claim(
            "infinitesimal invariance Aᵀ G + G A = 0",
            (a.T * g + g * a).applyfunc(sp.expand),
            statement=r"A^\top G + GA = 0\quad\Longleftrightarrow\quad \tfrac{d}{dt}\big(W^\top GW\big)\big|_{t=0} = 0",
            because="the defining relation of the algebra, the t¹ coefficient of e^{tAᵀ}Ge^{tA} − G",
        ),
    ]
    for k in range(1, order + 1):
        steps.append(
            claim(
                f"coefficient of t^{k} in e^(tAᵀ) G e^(tA) vanishes",
                sandwich_coefficient(a.T, g, a, k),
                statement=r"[t^k]\,e^{tA^\top}Ge^{tA} = \sum_{j=0}^{k}\frac{(A^\top)^jGA^{k-j}}{j!\,(k-j)!} = 0\quad(k\ge1),\ \text{so } W^\top GW = G",
                because="AᵀG = −GA moves every Aᵀ through G, turning the sum into GA^k Σ_j (−1)^j/(j!(k−j)!) = GA^k(1 − 1)^k/k! = 0",
            )
        )
    return steps


def _general_size():
    m = sp.Symbol("m", integer=True, positive=True)
    return m, sp.MatrixSymbol("B", m, m)


def _derive_orthogonal() -> list[Step]:
    a = _skew(3, "a")
    m, b = _general_size()
    skew = b - b.T
    return [
        *_invariant_steps(a, sp.eye(3), "skew-symmetric 3×3, G = I"),
        claim(
            "general N: A = B − Bᵀ satisfies Aᵀ + A = 0, B an m×m matrix symbol",
            skew.T + skew,
            sp.ZeroMatrix(m, m),
            statement=r"(B - B^\top)^\top + (B - B^\top) = 0,\quad B\in\mathbb R^{m\times m},\ m\text{ symbolic}",
            because="every skew-symmetric A is B − Bᵀ; sympy decides the invariance AᵀI + IA = 0 on the matrix symbol",
            general=True,
        ),
    ]


def _derive_spd() -> list[Step]:
    # e^{A} = (e^{A/2})ᵀ e^{A/2} with e^{A/2} invertible ⇒ SPD.  Coefficientwise check.
    a = _symmetric(3, "a")
    half = a / 2
    steps = [
        Step(
            "generic symmetric A (3×3)",
            a,
            statement=r"A = A^\top\in\mathbb R^{N\times N},\quad e^{A} = (e^{A/2})^\top e^{A/2}",
            because="a generic symmetric matrix; e^{A/2} is invertible, so the product is positive definite",
        )
    ]
    for k in range(1, SERIES_ORDER + 1):
        lhs = sandwich_coefficient(half.T, sp.eye(3), half, k)
        rhs = (a**k / sp.factorial(k)).applyfunc(sp.expand)
        steps.append(
            claim(
                f"t^{k}: (e^(tA/2))ᵀ e^(tA/2) = e^(tA)",
                lhs,
                rhs,
                statement=r"[t^k]\,e^{tA^\top/2}e^{tA/2} = \sum_{j=0}^{k}\frac{A^jA^{k-j}}{2^kj!\,(k-j)!} = \frac{A^k}{k!}",
                because="Aᵀ = A commutes with A, and Σ_j C(k, j)/2^k = 1",
            )
        )
    steps.append(
        claim(
            "e^(tA) is symmetric: (A³)ᵀ = A³",
            (a**3).T,
            a**3,
            statement=r"(A^k)^\top = (A^\top)^k = A^k\ \Rightarrow\ (e^{tA})^\top = e^{tA}",
            because="transposition reverses products, and each factor is symmetric",
        )
    )
    _, b = _general_size()
    steps.append(
        claim(
            "general N: (Aᵏ)ᵀ = Aᵏ for A = B + Bᵀ, B an m×m matrix symbol, k = 5",
            ((b + b.T) ** 5).T,
            (b + b.T) ** 5,
            statement=r"\big((B + B^\top)^k\big)^\top = (B + B^\top)^k,\quad B\in\mathbb R^{m\times m},\ m\text{ symbolic}",
            because="sympy transposes the matrix power of an m×m matrix symbol and recognises (B + Bᵀ)ᵀ = B + Bᵀ; shown for k = 5",
            general=True,
        )
    )
    return steps


def _derive_stochastic() -> list[Step]:
    x = sp.symbols("q01 q02 q10 q12 q20 q21", nonnegative=True)
    q = sp.Matrix([[-(x[0] + x[1]), x[0], x[1]], [x[2], -(x[2] + x[3]), x[3]], [x[4], x[5], -(x[4] + x[5])]])
    one = sp.ones(3, 1)
    c = sp.Symbol("c", positive=True)
    steps = [
        Step(
            "generic 3-state generator Q (rates ≥ 0, rows sum 0)",
            q,
            statement=r"Q_{ij}\ge0\ (i\ne j),\quad Q\mathbf 1 = 0,\quad Q\in\mathbb R^{N\times N}",
            because="a Markov generator: nonnegative off-diagonal rates, each diagonal entry minus its row's rates",
        )
    ]
    for k in range(1, SERIES_ORDER + 1):
        steps.append(
            claim(
                f"Q^{k}·1 = 0: the t^{k} term of e^(tQ)1 vanishes",
                (q**k * one).applyfunc(sp.expand),
                statement=r"Q^k\mathbf 1 = Q^{k-1}(Q\mathbf 1) = 0\ (k\ge1)\ \Rightarrow\ e^{tQ}\mathbf 1 = \mathbf 1",
                because="every term of the exponential series beyond the identity kills the constant vector",
            )
        )
    # Positivity: e^{tQ} = e^{-ct} e^{t(Q + cI)}, and Q + cI ≥ 0 entrywise for c ≥ max|q_ii|.
    shifted = q + c * sp.eye(3)
    for k in range(1, SERIES_ORDER + 1):
        cauchy = sum(
            ((-c) ** j / sp.factorial(j) * shifted ** (k - j) / sp.factorial(k - j) for j in range(k + 1)),
            sp.zeros(3, 3),
        )
        steps.append(
            claim(
                f"t^{k}: e^(-ct)·e^(t(Q+cI)) = e^(tQ)",
                cauchy.applyfunc(sp.expand),
                (q**k / sp.factorial(k)).applyfunc(sp.expand),
                statement=r"e^{tQ} = e^{-ct}e^{t(Q + c\mathsf I)},\quad [t^k]:\ \sum_{j=0}^{k}\frac{(-c)^j(Q + c\mathsf I)^{k-j}}{j!\,(k-j)!} = \frac{Q^k}{k!}",
                because="cI commutes with Q; Q + cI ≥ 0 entrywise for c ≥ maxᵢ|Q_ii|, so e^{t(Q+cI)} ≥ 0 and hence e^{tQ} ≥ 0",
            )
        )
    a, b, t = sp.symbols("a b t", positive=True)
    two = sp.Matrix([[-a, a], [b, -b]])
    closed = sp.simplify((t * two).exp())
    steps.append(
        Step(
            "two states, closed form: entries b/(a+b) + a e^{-(a+b)t}/(a+b) ≥ 0 …",
            closed,
            statement=r"e^{tQ} = \frac{1}{a+b}\begin{pmatrix} b + ae^{-(a+b)t} & a - ae^{-(a+b)t}\\ b - be^{-(a+b)t} & a + be^{-(a+b)t}\end{pmatrix},\quad Q = \begin{pmatrix}-a & a\\ b & -b\end{pmatrix}",
            because="Q has eigenvalues 0 and −(a + b); every entry is visibly nonnegative for t ≥ 0",
        )
    )
    steps.append(
        claim(
            "two states: rows of e^(tQ) sum to 1",
            closed * sp.ones(2, 1),
            sp.ones(2, 1),
            statement=r"e^{tQ}\mathbf 1 = \mathbf 1",
            because="each row of the closed form sums to (a + b)/(a + b)",
        )
    )
    return steps


def _derive_symplectic() -> list[Step]:
    s = _symmetric(4, "s")
    j = sp.Matrix([[0, 0, 1, 0], [0, 0, 0, 1], [-1, 0, 0, 0], [0, -1, 0, 0]])
    a = j * s
    # Order 3 only: the 10-symbol 4×4 case grows quickly with k.
    m, b = _general_size()
    c, d = (sp.MatrixSymbol(name, m, m) for name in "CD")
    eye, zero = sp.Identity(m), sp.ZeroMatrix(m, m)
    j_blocks = sp.BlockMatrix([[zero, eye], [-eye, zero]])
    s_blocks = sp.BlockMatrix([[b + b.T, c], [c.T, d + d.T]])
    a_blocks = j_blocks * s_blocks
    return [
        *_invariant_steps(a, j, "Hamiltonian A = J S, S symmetric 4×4, G = J", order=3),
        claim(
            "general N: AᵀJ + JA = 0 for A = JS on ℝ^{2m}, S symmetric in m×m blocks, m symbolic",
            a_blocks.T * j_blocks + j_blocks * a_blocks,
            sp.ZeroMatrix(2 * m, 2 * m),
            statement=r"(JS)^\top J + J(JS) = S^\top J^\top J + J^2S = S - S = 0,\quad J = \begin{pmatrix}0 & \mathsf I_m\\ -\mathsf I_m & 0\end{pmatrix},\ S = S^\top,\ m\text{ symbolic}",
            because="JᵀJ = I and J² = −I; sympy multiplies the 2×2 blocks of m×m matrix symbols and gets zero",
            general=True,
        ),
    ]


def _standard_symplectic(half: int) -> np.ndarray:
    eye = np.eye(half)
    zero = np.zeros((half, half))
    return np.block([[zero, eye], [-eye, zero]])


def _verify_orthogonal(rng, scale, backend) -> Verification:
    n = by_scale(scale, 6, 128)
    g = rng.standard_normal((BATCH, n, n)) / np.sqrt(n)
    return _orthogonality_gap(g - np.swapaxes(g, -1, -2), backend)


def _orthogonality_gap(a_np: np.ndarray, backend: str = "numpy") -> Verification:
    """The gap max |WᵀW − I| for W = e^A over a stack of matrices A."""
    n = a_np.shape[-1]
    a = to_backend(a_np, backend)
    xp = namespace(a)
    w = matrix_exp(a)
    eye = xp.eye(n, dtype=w.dtype, device=array_api_compat.device(w))
    residual = as_float(xp.max(xp.abs(xp.matrix_transpose(w) @ w - eye)))
    # Padé scaling-and-squaring: backward error ~ n·eps per entry of WᵀW.
    return Verification.from_residual(residual, 50 * n * EPS, n=n, batch=BATCH)


def _verify_spd(rng, scale, backend) -> Verification:
    n = by_scale(scale, 6, 128)
    g = rng.standard_normal((BATCH, n, n)) / np.sqrt(n)
    return _spd_gap((g + np.swapaxes(g, -1, -2)) / 2, backend)


def _spd_gap(a_np: np.ndarray, backend: str = "numpy") -> Verification:
    """W = e^A positive definite: max(‖W − Wᴴ‖/‖W‖, spectral error of eig W against e^{eig A}) over a stack.

    ``Wᴴ`` is the conjugate transpose: positive definiteness of a complex matrix needs it Hermitian, and for
    real A it is the transpose.
    """
    n = a_np.shape[-1]
    a = to_backend(a_np, backend)
    xp = namespace(a)
    w = matrix_exp(a)
    adjoint = xp.conj(xp.matrix_transpose(w)) if xp.isdtype(w.dtype, "complex floating") else xp.matrix_transpose(w)
    symmetry = as_float(xp.max(xp.abs(w - adjoint))) / as_float(xp.max(xp.abs(w)))
    sym_w = (w + adjoint) / 2
    # Oracle: the spectral theorem, eig(e^A) = e^{eig(A)} (both sorted ascending).
    spectrum = xp.linalg.eigvalsh(sym_w)
    expected = xp.exp(xp.linalg.eigvalsh(a))
    if as_float(xp.min(spectrum)) <= 0:
        return Verification.from_residual(float("inf"), 0.0, n=n, batch=BATCH)
    spectral = as_float(xp.max(xp.abs(spectrum - expected) / expected))
    return Verification.from_residual(max(symmetry, spectral), 100 * n * EPS, n=n, batch=BATCH)


def _random_generator(rng, n: int) -> np.ndarray:
    rates = rng.exponential(size=(BATCH, n, n))
    rates *= 1 - np.eye(n)
    return rates - np.eye(n) * rates.sum(axis=-1, keepdims=True)


def _verify_stochastic(rng, scale, backend) -> Verification:
    n = by_scale(scale, 6, 128)
    return _stochastic_gap(markov_semigroup(to_backend(_random_generator(rng, n), backend), t=0.7))


def _stochastic_gap(p) -> Verification:
    """max(|row sum − 1|, −min entry) of a stack of matrices P (e^{tQ})."""
    xp = namespace(p)
    n = p.shape[-1]
    row_sums = as_float(xp.max(xp.abs(xp.sum(p, axis=-1) - 1.0)))
    negativity = max(0.0, -as_float(xp.min(p)))
    return Verification.from_residual(max(row_sums, negativity), 100 * n * EPS, n=n, batch=BATCH)


def _verify_symplectic(rng, scale, backend) -> Verification:
    half = by_scale(scale, 3, 64)
    n = 2 * half
    g = rng.standard_normal((BATCH, n, n)) / np.sqrt(n)
    s = (g + np.swapaxes(g, -1, -2)) / 2
    return _symplectic_gap(s, _standard_symplectic(half), backend)


def _symplectic_gap(s_np: np.ndarray, j_np: np.ndarray, backend: str = "numpy") -> Verification:
    """The gap max |WᵀJW − J| / max|W|² for W = e^{JS} over a stack of matrices S."""
    n = j_np.shape[-1]
    a = to_backend(j_np @ s_np, backend)
    j = to_backend(j_np, backend)
    xp = namespace(a)
    w = matrix_exp(a)
    gap = xp.matrix_transpose(w) @ j @ w - j
    # ‖W‖² sets the scale of rounding in WᵀJW, so the residual is relative to it.
    scale_w = as_float(xp.max(xp.abs(w))) ** 2
    residual = as_float(xp.max(xp.abs(gap))) / scale_w
    return Verification.from_residual(residual, 100 * n * EPS, n=n, batch=BATCH)


# ---- outside cases: each drops one hypothesis and measures the same gap --------------------------------

OUTSIDE_N = 6  # the small scale of the checks


def _gaussian_stack(rng) -> np.ndarray:
    return rng.standard_normal((BATCH, OUTSIDE_N, OUTSIDE_N)) / np.sqrt(OUTSIDE_N)


def _outside_not_skew(rng) -> Verification:
    """skew_to_orthogonal for A = (G − Gᵀ) + 0.05(G + Gᵀ): a skew matrix plus a small symmetric part.

    e^A then stretches along the symmetric part, so WᵀW ≈ e^{0.1(G + Gᵀ)} ≠ I: the gap came out 0.17
    against the tolerance 6.7e-14 when written (n = 6, a stack of 4), in 1 ms.
    """
    g = _gaussian_stack(rng)
    gt = np.swapaxes(g, -1, -2)
    return _orthogonality_gap(g - gt + 0.05 * (g + gt))


def _outside_not_symmetric(rng) -> Verification:
    """symmetric_to_spd for A = ½(G + Gᵀ) + 0.05(G − Gᵀ): a symmetric matrix plus a small skew part.

    e^A is then not symmetric: the gap came out 0.096 against the tolerance 1.3e-13 when written
    (n = 6, a stack of 4), in 1 ms.
    """
    g = _gaussian_stack(rng)
    gt = np.swapaxes(g, -1, -2)
    return _spd_gap((g + gt) / 2 + 0.05 * (g - gt))


def _outside_complex_symmetric(rng) -> Verification:
    """symmetric_to_spd for the complex symmetric A = iS (Aᵀ = A, S real symmetric): not a real matrix.

    e^{iS} is unitary with eigenvalues e^{iλ} on the unit circle, symmetric but not Hermitian, so not
    positive definite: the gap (Hermitian defect ‖W − Wᴴ‖/‖W‖ or spectral error) came out 0.71 against the tolerance
    1.3e-13 when written (n = 6, a stack of 4), in 1 ms.
    """
    g = _gaussian_stack(rng)
    return _spd_gap(0.2j * (g + np.swapaxes(g, -1, -2)))


def _outside_negative_rate(rng) -> Verification:
    """generator_to_stochastic with one negative off-diagonal rate, Q₀₁ = −1, the row still summing to 0.

    Rows of e^{tQ} still sum to 1, but (e^{tQ})₀₁ ≈ tQ₀₁ < 0: the gap (the most negative entry) came out 0.038
    against the tolerance 1.3e-13 when written (t = 0.7, n = 6, a stack of 4), in 1 ms.
    """
    q = _random_generator(rng, OUTSIDE_N)
    q[:, 0, 1] = -1.0
    q[:, 0, 0] = 0.0
    q[:, 0, 0] = -q[:, 0].sum(axis=-1)
    return _stochastic_gap(matrix_exp(0.7 * q))


def _outside_leaky_rows(rng) -> Verification:
    """generator_to_stochastic for Q − ½I: nonnegative rates whose rows sum to −½ (a killed chain).

    e^{tQ} stays nonnegative but loses mass, e^{tQ}1 = e^{−t/2}1: the gap came out 0.30 = 1 − e^{−0.35}
    against the tolerance 1.3e-13 when written (t = 0.7, n = 6, a stack of 4), in 1 ms.
    """
    return _stochastic_gap(matrix_exp(0.7 * (_random_generator(rng, OUTSIDE_N) - 0.5 * np.eye(OUTSIDE_N))))


def _outside_negative_time(rng) -> Verification:
    """generator_to_stochastic at t = −0.7: the same generators run backwards.

    Rows still sum to 1, but e^{−0.7Q} ≈ I − 0.7Q has negative off-diagonal entries: the gap came out
    1.1e3 against the tolerance 1.3e-13 when written (n = 6, a stack of 4), in 1 ms.
    """
    return _stochastic_gap(matrix_exp(-0.7 * _random_generator(rng, OUTSIDE_N)))


def _outside_s_not_symmetric(rng) -> Verification:
    """hamiltonian_to_symplectic for A = JG with G not symmetric.

    Then AᵀJ + JA = G − Gᵀ ≠ 0 and e^A leaves Sp(2m): the gap came out 0.40 against the tolerance
    1.3e-13 when written (n = 6, a stack of 4), in 1 ms.
    """
    return _symplectic_gap(_gaussian_stack(rng), _standard_symplectic(OUTSIDE_N // 2))


def _outside_nonstandard_j(rng) -> Verification:
    """hamiltonian_to_symplectic with the skew form J = (0 D; −D 0), D = diag(1, 2, 3), in place of J.

    J is skew but J² = −diag(D², D²) is not a multiple of I, so AᵀJ + JA = J²S − SJ² ≠ 0 for A = JS:
    the gap came out 1.7 against the tolerance 1.3e-13 when written (n = 6, a stack of 4), in 1 ms.
    """
    g = _gaussian_stack(rng)
    d = np.diag(np.arange(1.0, OUTSIDE_N // 2 + 1))
    zero = np.zeros_like(d)
    return _symplectic_gap((g + np.swapaxes(g, -1, -2)) / 2, np.block([[zero, d], [-d, zero]]))


SOURCE = "Lie-Exponential Roadmap, 'structure by construction'"

IDENTITIES = [
    Identity(
        name="structure.exp.skew_to_orthogonal",
        area="structure",
        statement=r"A^\top = -A \;\Rightarrow\; (e^{A})^\top e^{A} = I",
        source=SOURCE,
        derive=_derive_orthogonal,
        verify=_verify_orthogonal,
        hypotheses=(
            Hypothesis(
                "A is skew-symmetric, Aᵀ = −A (real or complex)",
                "A = (G − Gᵀ) + 0.05(G + Gᵀ), G Gaussian 6×6: a small symmetric part",
                _outside_not_skew,
            ),
        ),
    ),
    Identity(
        name="structure.exp.symmetric_to_spd",
        area="structure",
        statement=r"A^\top = A \in \mathbb R^{N\times N} \;\Rightarrow\; e^{A} = (e^{A/2})^\top e^{A/2} \succ 0,"
        r"\ \operatorname{spec} e^{A} = e^{\operatorname{spec} A}",
        source=SOURCE,
        derive=_derive_spd,
        verify=_verify_spd,
        hypotheses=(
            Hypothesis(
                "A is symmetric, Aᵀ = A",
                "A = ½(G + Gᵀ) + 0.05(G − Gᵀ), G Gaussian 6×6: a small skew part",
                _outside_not_symmetric,
            ),
            Hypothesis(
                "A is real (for complex A the condition is Hermitian, Aᴴ = A)",
                "A = iS with S real symmetric: complex symmetric, e^{iS} unitary",
                _outside_complex_symmetric,
            ),
        ),
    ),
    Identity(
        name="structure.exp.generator_to_stochastic",
        area="structure",
        statement=r"Q_{ij} \ge 0\ (i \ne j),\ Q\mathbf 1 = 0 \;\Rightarrow\; e^{tQ} \ge 0,"
        r"\ e^{tQ}\mathbf 1 = \mathbf 1\ (t \ge 0)",
        source=SOURCE,
        derive=_derive_stochastic,
        verify=_verify_stochastic,
        hypotheses=(
            Hypothesis(
                "nonnegative off-diagonal rates, Q_ij ≥ 0 (i ≠ j)",
                "one negative rate Q₀₁ = −1, row 0 still summing to 0",
                _outside_negative_rate,
            ),
            Hypothesis(
                "rows sum to zero, Q1 = 0 (no killing)",
                "Q − ½I: rates ≥ 0, rows summing to −½",
                _outside_leaky_rows,
            ),
            Hypothesis("t ≥ 0", "t = −0.7", _outside_negative_time),
        ),
    ),
    Identity(
        name="structure.exp.hamiltonian_to_symplectic",
        area="structure",
        statement=r"A = JS,\ S^\top = S,\ J = \begin{pmatrix}0 & I\\ -I & 0\end{pmatrix}"
        r" \;\Rightarrow\; (e^{A})^\top J e^{A} = J",
        source=SOURCE,
        derive=_derive_symplectic,
        verify=_verify_symplectic,
        hypotheses=(
            Hypothesis("S is symmetric, Sᵀ = S", "A = JG, G Gaussian 6×6 (not symmetric)", _outside_s_not_symmetric),
            Hypothesis(
                "J is the standard symplectic form (0 I; −I 0), or any J with Jᵀ = −J and J² = −I",
                "J = (0 D; −D 0), D = diag(1, 2, 3): skew, but J² is not −I",
                _outside_nonstandard_j,
            ),
        ),
    ),
]
