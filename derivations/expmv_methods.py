r"""exp(tA)·B by four methods: semigroup, stochasticity, agreement, closed forms.

Source: Lie-Exponential Roadmap: "never form dense exp(A); only exp(A)v" (Krylov, Chebyshev,
uniformization for Markov generators).  The methods are checked against each other, against dense
``scipy.linalg.expm`` and against the Bessel image sum of the heat kernel on a cycle.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.special
import sympy as sp

from derivations._common import by_scale, relative_error
from workbench.backend import to_backend, to_numpy
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.expmv import expmv

#: (method, kind of A it applies to)
CASES = (("taylor", "general"), ("krylov", "general"), ("chebyshev", "symmetric"), ("uniformization", "markov"))


def _matrix(rng, n: int, kind: str, norm: float) -> np.ndarray:
    """A random matrix of the given kind with ‖A‖₁ ≈ norm."""
    if kind == "symmetric":
        a = rng.standard_normal((n, n))
        a = a + a.T
    elif kind == "markov":
        a = rng.random((n, n)) * (rng.random((n, n)) < 0.3)
        np.fill_diagonal(a, 0.0)
        a -= np.diag(a.sum(axis=1))
    else:
        a = rng.standard_normal((n, n)) + 3 * np.triu(rng.standard_normal((n, n)), 1)  # non-normal
    return a * (norm / np.abs(a).sum(axis=0).max())


def _derive_semigroup() -> list[Step]:
    s, t, a, b, c = sp.symbols("s t a b c")
    m = sp.Matrix([[a, b], [0, c]])
    return [
        Step(
            "A = [[a, b], [0, c]] (upper triangular, a ≠ c)",
            m,
            statement=r"A = \begin{pmatrix} a & b\\ 0 & c\end{pmatrix},\quad a\ne c",
            because="a non-normal 2×2 instance whose exponential sympy writes in closed form",
        ),
        claim(
            "e^{sA} e^{tA} = e^{(s+t)A}",
            ((s * m).exp() * (t * m).exp()).applyfunc(sp.simplify),
            ((s + t) * m).exp().applyfunc(sp.simplify),
            statement=r"e^{sA}e^{tA} = e^{(s+t)A}\quad\text{for every square } A",
            because="sA and tA commute, so the Cauchy product of the two series is the series of e^{(s+t)A}",
        ),
    ]


def _verify_semigroup(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: the semigroup law e^{sA}(e^{tA}v) = e^{(s+t)A}v, each method on the matrices it applies to.

    ‖(s+t)A‖₁ = 20 (several scaling steps); tolerance 1e-11 relative: two applications at unit
    roundoff, amplified by the conditioning of the non-normal case (κ ~ 10²).
    """
    n = by_scale(scale, 60, 400)
    worst = 0.0
    for method, kind in CASES:
        a_np = _matrix(rng, n, kind, 20.0)
        a, v = to_backend(a_np, backend), to_backend(rng.standard_normal((n, 2)), backend)
        once = expmv(a, v, 1.0, method=method)
        twice = expmv(a, expmv(a, v, 0.4, method=method), 0.6, method=method)
        worst = max(worst, relative_error(twice, once))
    return Verification.from_residual(worst, 1e-11, n=n, methods=len(CASES))


def _derive_uniformization() -> list[Step]:
    q, t, k = sp.symbols("q t k", positive=True)
    x = sp.Symbol("x")  # stands for an eigenvalue of P = I + Q/q
    poisson = sp.exp(-q * t) * sp.Sum((q * t * x) ** k / sp.factorial(k), (k, 0, sp.oo))
    return [
        Step(
            "P = I + Q/q is stochastic when q ≥ max_i (−Q_ii); on an eigenvector, P ↦ x",
            poisson,
            statement=r"\mathsf P = \mathsf I + Q/q\ge0,\ \mathsf P\mathbf 1 = \mathbf 1\quad (q\ge\max_i(-Q_{ii})),\qquad e^{-qt}\sum_{k\ge0}\frac{(qt)^k}{k!}\mathsf P^k",
            because="uniformisation: Q = q(P − I) with P a stochastic matrix; on an eigenvector of P with eigenvalue x the series becomes scalar",
        ),
        claim(
            "e^{−qt} Σ_k (qt)^k/k! P^k = e^{qt(P − I)} = e^{tQ}",
            sp.simplify(poisson.doit()),
            sp.exp(q * t * (x - 1)),
            statement=r"e^{-qt}\sum_{k\ge0}\frac{(qt)^k}{k!}\mathsf P^k = e^{-qt}e^{qt\mathsf P} = e^{qt(\mathsf P - \mathsf I)} = e^{tQ}",
            because="the series is e^{qtP}, and e^{−qt I} commutes with it; sympy sums the scalar series with symbolic k",
        ),
        claim(
            "the Poisson weights sum to 1",
            sp.simplify(poisson.doit().subs(x, 1)),
            1,
            statement=r"\sum_{k\ge0}e^{-qt}\frac{(qt)^k}{k!} = 1",
            because="the Poisson(qt) law is a probability distribution; so e^{tQ} is a convex combination of the stochastic Pᵏ",
        ),
    ]


def _verify_uniformization(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: e^{tQ}1 = 1 and e^{tQ}B ≥ 0 for B ≥ 0 (a convex combination of stochastic powers);
    agreement with dense expm.  Stiff: ‖tQ‖₁ = 500.  Tolerance 1e-12: rounding accumulated over
    ~qt products of stochastic matrices.
    """
    n = by_scale(scale, 60, 400)
    q_np = _matrix(rng, n, "markov", 1.0)
    q = to_backend(q_np, backend)
    ones = to_backend(np.ones((n, 1)), backend)
    b_np = rng.random((n, 3))
    t = 500.0
    row_sums = to_numpy(expmv(q, ones, t, method="uniformization"))
    y = to_numpy(expmv(q, to_backend(b_np, backend), t, method="uniformization"))
    exact = scipy.linalg.expm(t * q_np) @ b_np
    residual = max(float(np.max(np.abs(row_sums - 1.0))), relative_error(y, exact))
    if float(np.min(y)) < 0.0:
        residual = np.inf
    return Verification.from_residual(residual, 1e-12, n=n, t=t)


def _verify_agree(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: dense ``scipy.linalg.expm(tA) @ B`` (Padé, Al-Mohy–Higham 2009), each method on its
    kind of matrix at ‖tA‖₁ ∈ {10⁻³, 1, 10²}; tolerance 1e-10 relative (the non-normal case loses ~5
    digits of the 16 to conditioning at ‖tA‖ = 10²; the others agree to ~1e-13).
    """
    n = by_scale(scale, 50, 300)
    worst = 0.0
    for method, kind in CASES:
        for norm in (1e-3, 1.0, 1e2):
            a_np = _matrix(rng, n, kind, norm)
            b_np = rng.standard_normal((n, 3))
            got = expmv(to_backend(a_np, backend), to_backend(b_np, backend), 1.0, method=method)
            worst = max(worst, relative_error(got, scipy.linalg.expm(a_np) @ b_np))
    return Verification.from_residual(worst, 1e-10, n=n, cases=3 * len(CASES))


def _derive_bessel() -> list[Step]:
    z, x = sp.symbols("z x")
    order = 6
    generating = sp.besseli(0, z) + 2 * sum(sp.besseli(k, z) * sp.chebyshevt(k, x) for k in range(1, order + 1))
    return [
        Step(
            "Chebyshev expansion of e^{zx} on [−1, 1] (Jacobi–Anger)",
            generating,
            statement=r"e^{zx} = I_0(z) + 2\sum_{k\ge1}I_k(z)\,T_k(x),\quad x\in[-1,1]",
            because="Jacobi–Anger: with x = cos θ, e^{z cos θ} has Fourier coefficients I_k(z), and cos kθ = T_k(x)",
        ),
        claim(
            f"I₀(z) + 2Σ_k I_k(z)T_k(x) = e^{{zx}} through z^{order}",
            sp.series(generating, z, 0, order + 1).removeO().expand(),
            sp.series(sp.exp(z * x), z, 0, order + 1).removeO().expand(),
            statement=r"[z^m]\Big(I_0(z) + 2\sum_{k=1}^{6}I_k(z)T_k(x)\Big) = \frac{x^m}{m!}\quad(m\le6)",
            because="I_k(z) = O(z^k), so the terms k ≤ 6 determine every coefficient through z⁶; sympy compares the Taylor polynomials",
        ),
    ]


def _verify_cycle_heat(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: the heat kernel of the cycle C_n, (e^{−tL})_{ij} = Σ_w e^{−2t} I_{j−i+wn}(2t) (images over
    windings w), L = 2I − A the unnormalised Laplacian.  Chebyshev (interval [0, 4]) and Krylov at t up
    to 200 (‖tL‖ = 800); tolerance 1e-12 absolute on entries of size ≤ 1.
    """
    n = by_scale(scale, 64, 1024)
    laplacian = 2 * np.eye(n) - np.roll(np.eye(n), 1, axis=1) - np.roll(np.eye(n), -1, axis=1)
    e0 = np.zeros((n, 1))
    e0[0] = 1.0
    worst = 0.0
    offsets = np.arange(n)
    for t in (0.5, 20.0, 200.0):
        windings = np.arange(-3, 4)[:, None] * n
        exact = np.sum(scipy.special.ive(offsets[None, :] + windings, 2 * t), axis=0)  # e^{−2t} I_k(2t)
        for method, extra in (("chebyshev", {"interval": (-4.0, 0.0)}), ("krylov", {})):
            got = to_numpy(expmv(to_backend(-laplacian, backend), to_backend(e0, backend), t, method=method, **extra))
            worst = max(worst, float(np.max(np.abs(got[:, 0] - exact))))
    return Verification.from_residual(worst, 1e-12, n=n, t_max=200)


IDENTITIES = [
    Identity(
        name="expmv.semigroup",
        area="expmv",
        statement=r"e^{sA}\,(e^{tA}v) = e^{(s+t)A}v\ \text{(Taylor, Krylov, Chebyshev, uniformization)}",
        source="Lie-Exponential Roadmap: exp(A)v methods; the semigroup law",
        derive=_derive_semigroup,
        verify=_verify_semigroup,
    ),
    Identity(
        name="expmv.uniformization.stochastic",
        area="expmv",
        statement=r"e^{tQ}B = \sum_k e^{-qt}\tfrac{(qt)^k}{k!}(I + Q/q)^kB \ge 0,\quad e^{tQ}\mathbf 1 = \mathbf 1",
        source="Lie-Exponential Roadmap: uniformization for Markov generators, structure by construction",
        derive=_derive_uniformization,
        verify=_verify_uniformization,
    ),
    Identity(
        name="expmv.methods.agree",
        area="expmv",
        statement=r"\text{each method} = \operatorname{expm}(tA)B\ \text{for } \lVert tA\rVert_1 \in \{10^{-3}, 1, 10^2\}",
        source="Al-Mohy–Higham (2011); Saad (1992); Tal-Ezer–Kosloff (1984) [dense Padé oracle]",
        derive=_derive_semigroup,
        verify=_verify_agree,
    ),
    Identity(
        name="expmv.heat.cycle",
        area="expmv",
        statement=r"(e^{-tL_{C_n}})_{0j} = \sum_{w\in\mathbb Z} e^{-2t} I_{j+wn}(2t)",
        source="heat kernel of the cycle by images [closed form]; Jacobi–Anger expansion (Abramowitz & Stegun 9.6.34)",
        derive=_derive_bessel,
        verify=_verify_cycle_heat,
    ),
]
