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

from workbench.backend import to_backend, to_numpy
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.expmv import expmv

from ._common import by_scale, relative_error

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
    cases = []
    for method, kind in CASES:
        a_np = _matrix(rng, n, kind, 20.0)
        cases.append((method, a_np, rng.standard_normal((n, 2))))
    return _semigroup_gap(cases, backend)


def _semigroup_gap(cases, backend: str = "numpy") -> Verification:
    """Largest relative gap between e^{0.6A}(e^{0.4A}v) and e^{A}v over ``(method, A, v)`` cases."""
    worst = 0.0
    for method, a_np, v_np in cases:
        a, v = to_backend(a_np, backend), to_backend(v_np, backend)
        once = expmv(a, v, 1.0, method=method)
        twice = expmv(a, expmv(a, v, 0.4, method=method), 0.6, method=method)
        worst = max(worst, relative_error(twice, once))
    return Verification.from_residual(worst, 1e-11, n=cases[0][1].shape[0], methods=len(cases))


def _humped(rng, n: int = 30, coupling: float = 60.0) -> np.ndarray:
    """A strongly non-normal matrix: diagonal −(0…10) under a Gaussian upper triangle scaled by ``coupling``.

    Its eigenvalues are the diagonal, but ‖e^{τA}‖₂ climbs to ~10¹⁷ before the decay sets in (n = 30,
    coupling 60), so rounding in any product with e^{τA} is amplified by that hump.
    """
    return -np.diag(np.linspace(0.0, 10.0, n)) + coupling * np.triu(rng.standard_normal((n, n)), 1)


def _outside_semigroup_hump(rng) -> Verification:
    """The semigroup law, Taylor and Krylov, on a strongly non-normal A whose flow has a hump ‖e^{τA}‖ ~ 10¹⁷.

    Exact arithmetic would still give e^{0.6A}e^{0.4A}v = e^{A}v, but rounding, amplified by the hump,
    separates the two sides: the relative gap came out 2.3e-6 (from Krylov; Taylor stays near 1e-15) against
    the tolerance 1e-11 when written (n = 30), in 0.06 s.
    """
    a = _humped(rng)
    v = rng.standard_normal((a.shape[0], 2))
    return _semigroup_gap([("taylor", a, v), ("krylov", a, v)])


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
    return _uniformization_gap(q_np, rng.random((n, 3)), UNIFORMIZATION_T, _library(q_np, UNIFORMIZATION_T, backend))


UNIFORMIZATION_T = 500.0


def _library(q_np: np.ndarray, t: float, backend: str = "numpy"):
    """B ↦ e^{tQ}B by the library's uniformization (its own rate q = max_i(−Q_ii) and truncation)."""
    q = to_backend(q_np, backend)
    return lambda b: to_numpy(expmv(q, to_backend(b, backend), t, method="uniformization"))


def _uniformization_gap(q_np: np.ndarray, b_np: np.ndarray, t: float, apply) -> Verification:
    """max(|e^{tQ}1 − 1|, relative error of e^{tQ}B against dense expm, relative negativity of e^{tQ}B).

    ``apply(B)`` computes e^{tQ}B (the library, or :func:`_poisson_sum` with a chosen rate); the negativity
    is max(0, −min e^{tQ}B)/max|e^{tQ}B|, exactly 0 for a sum of nonnegative terms.
    """
    n = q_np.shape[0]
    row_sums = apply(np.ones((n, 1)))
    y = apply(b_np)
    exact = scipy.linalg.expm(t * q_np) @ b_np
    negativity = max(0.0, -float(np.min(y))) / float(np.max(np.abs(y)))
    residual = max(float(np.max(np.abs(row_sums - 1.0))), relative_error(y, exact), negativity)
    return Verification.from_residual(residual, 1e-12, n=n, t=t)


def _poisson_sum(q: np.ndarray, b: np.ndarray, t: float, rate: float) -> np.ndarray:
    r"""The uniformization series of the statement, summed term by term for any rate r > 0 and real t.

    .. math:: \sum_{k=0}^{K} e^{-rt}\frac{(rt)^k}{k!}\,(I + Q/r)^k B,

    the weights from their logarithms (no underflow of :math:`e^{-rt}`), K the first index past
    :math:`|rt| + 20\sqrt{|rt|} + 40` whose term is below :math:`2^{-53}` of the sum (so that growing terms,
    when I + Q/r is not stochastic, are not cut off while they matter).  The library's uniformization
    refuses what is not a Markov generator, t < 0 and rates below max_i(−Q_ii); this plain sum does not,
    so that the statement can be measured there.

    >>> q, b = np.array([[-1.0, 1.0], [2.0, -2.0]]), np.eye(2)
    >>> bool(np.allclose(_poisson_sum(q, b, 3.0, 2.0), scipy.linalg.expm(3.0 * q) @ b, rtol=0, atol=1e-14))
    True
    """
    mean = rate * t
    floor = abs(mean) + 20 * np.sqrt(abs(mean)) + 40
    x, total = np.array(b, dtype=float), np.zeros(np.shape(b))
    for k in range(100_000):
        sign = -1.0 if mean < 0 and k % 2 else 1.0
        term = sign * np.exp(-mean + k * np.log(abs(mean)) - scipy.special.gammaln(k + 1)) * x
        total += term
        if k >= floor and np.max(np.abs(term)) <= 2.0**-53 * np.max(np.abs(total)):
            break
        x = x + q @ x / rate
    return total


def _top_rate(q: np.ndarray) -> float:
    return float(np.max(-np.diag(q)))


def _indicator(n: int, state: int = 1) -> np.ndarray:
    """B = e_state in three columns: nonnegative, and e^{tQ}B ≈ B + tQB exposes the sign of the rates into it."""
    b = np.zeros((n, 3))
    b[state] = 1.0
    return b


def _outside_uniformization_negative_rate(rng) -> Verification:
    """The uniformization statement with one negative rate Q₀₁ = −0.5 (row 0 still summing to 0), t = 0.5.

    The series (summed directly, rate max_i(−Q_ii)) still equals e^{tQ} and rows still sum to 1, but
    I + Q/q has a negative entry and (e^{tQ}e₁)₀ ≈ tQ₀₁ < 0: the gap came out 0.29 against the
    tolerance 1e-12 when written (n = 60), in 4 ms.
    """
    q = _matrix(rng, 60, "markov", 1.0)
    q[0, 1] = -0.5
    q[0, 0] = 0.0
    q[0, 0] = -q[0].sum()
    t = 0.5
    return _uniformization_gap(q, _indicator(60), t, lambda b: _poisson_sum(q, b, t, _top_rate(q)))


def _outside_uniformization_leaky(rng) -> Verification:
    """The uniformization statement for Q − ½I: rates ≥ 0 but rows summing to −½ (a killed chain), t = 500.

    The series (summed directly) equals e^{tQ} and stays nonnegative, but e^{tQ}1 = e^{−250}1: the gap came
    out 1.0 against the tolerance 1e-12 when written (n = 60), in 0.04 s.
    """
    q = _matrix(rng, 60, "markov", 1.0) - 0.5 * np.eye(60)
    return _uniformization_gap(
        q, rng.random((60, 3)), UNIFORMIZATION_T, lambda b: _poisson_sum(q, b, UNIFORMIZATION_T, _top_rate(q))
    )


def _outside_uniformization_negative_time(rng) -> Verification:
    """The uniformization statement at t = −0.5 on a Markov generator.

    The Poisson weights e^{−qt}(qt)^k/k! alternate in sign; the sum (direct) still equals e^{tQ} with unit
    row sums, but e^{−0.5Q}e₁ ≈ e₁ − 0.5Qe₁ has negative entries: the gap came out 0.018 against the
    tolerance 1e-12 when written (n = 60), in 1 ms.
    """
    q = _matrix(rng, 60, "markov", 1.0)
    t = -0.5
    return _uniformization_gap(q, _indicator(60), t, lambda b: _poisson_sum(q, b, t, _top_rate(q)))


def _outside_uniformization_slow_rate(rng) -> Verification:
    """The uniformization statement with the rate q = max_i(−Q_ii)/4, below the diagonal, t = 100.

    I + Q/q then has diagonal entries down to −3: the series still sums to e^{tQ} in exact arithmetic,
    but it is no longer a mixture of stochastic matrices; its terms grow like ‖I + Q/q‖^k and cancel, and
    the rounding left over came out 5.5e-3 (relative) against the tolerance 1e-12 when written (n = 60),
    in 7 ms.
    """
    q = _matrix(rng, 60, "markov", 1.0)
    t = 100.0
    return _uniformization_gap(q, rng.random((60, 3)), t, lambda b: _poisson_sum(q, b, t, _top_rate(q) / 4))


def _outside_uniformization_signed_block(rng) -> Verification:
    """The uniformization statement (the library's uniformization, t = 500) on B ≤ 0 instead of B ≥ 0.

    e^{tQ} is stochastic, so e^{tQ}B ≤ 0: the negativity came out 1.0 against the tolerance 1e-12
    when written (n = 60), in 0.03 s.
    """
    q = _matrix(rng, 60, "markov", 1.0)
    return _uniformization_gap(q, -rng.random((60, 3)), UNIFORMIZATION_T, _library(q, UNIFORMIZATION_T))


def _verify_agree(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracle: dense ``scipy.linalg.expm(tA) @ B`` (Padé, Al-Mohy–Higham 2009), each method on its
    kind of matrix at ‖tA‖₁ ∈ {10⁻³, 1, 10²}; tolerance 1e-10 relative, room for the conditioning of the
    non-normal case (its flow has a hump ‖e^{τA}‖ up to ~10⁴ at ‖tA‖ = 10²); measured ~2e-14.
    """
    n = by_scale(scale, 50, 300)
    cases = []
    for method, kind in CASES:
        for norm in (1e-3, 1.0, 1e2):
            cases.append((method, _matrix(rng, n, kind, norm), rng.standard_normal((n, 3))))
    return _agreement_gap(cases, backend)


def _agreement_gap(cases, backend: str = "numpy") -> Verification:
    """Largest relative gap between ``expmv(A, B)`` and dense ``expm(A) @ B`` over ``(method, A, B)`` cases."""
    worst = 0.0
    for method, a_np, b_np in cases:
        got = expmv(to_backend(a_np, backend), to_backend(b_np, backend), 1.0, method=method)
        worst = max(worst, relative_error(got, scipy.linalg.expm(a_np) @ b_np))
    return Verification.from_residual(worst, 1e-10, n=cases[0][1].shape[0], cases=len(cases))


def _outside_agreement_hump(rng) -> Verification:
    """Taylor and Krylov against dense expm on a strongly non-normal A whose flow has a hump ‖e^{τA}‖ ~ 10¹⁷.

    The exponential is then ill-conditioned: the methods and the Padé oracle each carry rounding amplified
    by the hump, and they part: the relative gap came out 2.1e-4 against the tolerance 1e-10 when written
    (n = 30), in 0.05 s.
    """
    a = _humped(rng)
    b = rng.standard_normal((a.shape[0], 3))
    return _agreement_gap([("taylor", a, b), ("krylov", a, b)])


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


_METHOD_DOMAINS = Hypothesis(
    "each method on the operators it accepts: Chebyshev a symmetric A (a real spectrum on an interval), "
    "uniformization a Markov generator with t ≥ 0; Taylor and Krylov any square A",
    reason="the methods refuse any other A or t with a ValueError naming the failed property (Chebyshev also "
    "when its interval misses the spectrum), so outside there is no value to measure: this fixes which "
    "(method, A) pairs the statement names",
)

IDENTITIES = [
    Identity(
        name="expmv.semigroup",
        area="expmv",
        statement=r"e^{sA}\,(e^{tA}v) = e^{(s+t)A}v\ \text{(Taylor, Krylov, Chebyshev, uniformization;"
        r" no large transient } \sup_\tau\lVert e^{\tau A}\rVert)",
        source="Lie-Exponential Roadmap: exp(A)v methods; the semigroup law",
        derive=_derive_semigroup,
        verify=_verify_semigroup,
        hypotheses=(
            Hypothesis(
                "the flow has no large transient: sup_τ ‖e^{τA}‖₂ ≲ 10⁴ (normal or mildly non-normal A), so that "
                "rounding, amplified by it, stays below the tolerance",
                "A = −diag(0…10) + 60·(Gaussian strict upper triangle), n = 30: a hump ‖e^{τA}‖₂ ~ 10¹⁷",
                _outside_semigroup_hump,
            ),
            _METHOD_DOMAINS,
        ),
    ),
    Identity(
        name="expmv.uniformization.stochastic",
        area="expmv",
        statement=r"e^{tQ}B = \sum_k e^{-qt}\tfrac{(qt)^k}{k!}(I + Q/q)^kB \ge 0,\quad e^{tQ}\mathbf 1 = \mathbf 1"
        r"\quad (Q_{ij} \ge 0\ (i \ne j),\ Q\mathbf 1 = 0,\ q \ge \max_i(-Q_{ii}),\ t \ge 0,\ B \ge 0)",
        source="Lie-Exponential Roadmap: uniformization for Markov generators, structure by construction",
        derive=_derive_uniformization,
        verify=_verify_uniformization,
        hypotheses=(
            Hypothesis(
                "nonnegative off-diagonal rates, Q_ij ≥ 0 (i ≠ j)",
                "one negative rate Q₀₁ = −0.5 (row 0 still summing to 0), t = 0.5, B = e₁",
                _outside_uniformization_negative_rate,
            ),
            Hypothesis(
                "rows sum to zero, Q1 = 0",
                "Q − ½I: rates ≥ 0, rows summing to −½, t = 500",
                _outside_uniformization_leaky,
            ),
            Hypothesis("t ≥ 0", "t = −0.5, B = e₁", _outside_uniformization_negative_time),
            Hypothesis(
                "the uniformization rate q ≥ max_i(−Q_ii), so that I + Q/q is stochastic and no term cancels",
                "q = max_i(−Q_ii)/4 (diagonal of I + Q/q down to −3), t = 100",
                _outside_uniformization_slow_rate,
            ),
            Hypothesis("B ≥ 0 entrywise", "B ≤ 0 (−uniform entries), t = 500", _outside_uniformization_signed_block),
        ),
    ),
    Identity(
        name="expmv.methods.agree",
        area="expmv",
        statement=r"\text{each method} = \operatorname{expm}(tA)B\ \text{for } \lVert tA\rVert_1 \in \{10^{-3}, 1, 10^2\}"
        r"\ (\text{no large transient } \sup_\tau\lVert e^{\tau A}\rVert)",
        source="Al-Mohy–Higham (2011); Saad (1992); Tal-Ezer–Kosloff (1984) [dense Padé oracle]",
        derive=_derive_semigroup,
        verify=_verify_agree,
        hypotheses=(
            Hypothesis(
                "the exponential is well conditioned: the flow has no large transient, sup_τ ‖e^{τA}‖₂ ≲ 10⁴ "
                "(normal or mildly non-normal A)",
                "A = −diag(0…10) + 60·(Gaussian strict upper triangle), n = 30: a hump ‖e^{τA}‖₂ ~ 10¹⁷",
                _outside_agreement_hump,
            ),
            _METHOD_DOMAINS,
        ),
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
