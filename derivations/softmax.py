r"""The small-β softmax expansion.

Source: Attention Geometry §A.9 [SEED]:
:math:`\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top
+ (\beta/N)\,S(I - N^{-1}\mathbf 1\mathbf 1^\top) + O(\beta^2)`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from workbench.backend import namespace, to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.continuum import softmax_first_order, softmax_second_order, softmax_series
from workbench.markov import softmax_operator

from ._common import as_float, by_scale

N_SYMBOLIC = 3


def _general_steps() -> list[Step]:
    """The β⁰ and β¹ coefficients, row sums and shift invariance of one softmax row, n symbolic."""
    n = sp.Symbol("n", integer=True, positive=True)
    i, j, k = sp.symbols("i j k", integer=True)
    s, g, beta = sp.IndexedBase("s"), sp.IndexedBase("g"), sp.Symbol("beta", positive=True)
    z = sp.Sum(sp.exp(beta * s[i, k]), (k, 0, n - 1))
    entry = sp.exp(beta * s[i, j]) / z
    shifted = sp.exp(beta * (s[i, j] + g[i])) / sp.Sum(sp.exp(beta * (s[i, k] + g[i])), (k, 0, n - 1))
    mean = sp.Sum(s[i, k], (k, 0, n - 1)) / n
    return [
        claim(
            "general N: each row of softmax_β(S) sums to 1, n symbolic",
            sp.Sum(sp.exp(beta * s[i, k]) / z, (k, 0, n - 1)),
            1,
            statement=r"\sum_{k=0}^{n-1}\frac{e^{\beta s_{ik}}}{Z_i} = 1,\quad Z_i = \sum_{k=0}^{n-1}e^{\beta s_{ik}},\ n\text{ symbolic}",
            because="Z_i does not depend on the summed index, so the sum is Z_i/Z_i; sympy decides it for symbolic n",
            general=True,
        ),
        claim(
            "general N: β⁰ coefficient, softmax_0(S)_ij = 1/n",
            entry.subs(beta, 0),
            1 / n,
            statement=r"\operatorname{softmax}_0(\mathsf S)_{ij} = \frac{1}{n},\quad n\text{ symbolic}",
            because="e^0 = 1 in every term, and a sum of n ones is n; sympy decides it for symbolic n",
            general=True,
        ),
        claim(
            "general N: β¹ coefficient, ∂_β softmax_β(S)_ij at 0 = (s_ij − n⁻¹Σ_k s_ik)/n",
            sp.diff(entry, beta).subs(beta, 0),
            (s[i, j] - mean) / n,
            statement=r"\partial_\beta\operatorname{softmax}_\beta(\mathsf S)_{ij}\big|_{\beta=0} = \frac1n\Big(s_{ij} - \frac1n\sum_{k=0}^{n-1}s_{ik}\Big),\quad n\text{ symbolic}",
            because="quotient rule at β = 0: (s_ij·n − Σ_k s_ik)/n²; sympy differentiates the symbolic sum and decides it",
            general=True,
        ),
        claim(
            "general N: a row shift s_ij + g_i leaves the row unchanged",
            shifted,
            entry,
            statement=r"\frac{e^{\beta(s_{ij} + g_i)}}{\sum_k e^{\beta(s_{ik} + g_i)}} = \frac{e^{\beta s_{ij}}}{\sum_k e^{\beta s_{ik}}},\quad n\text{ symbolic}",
            because="the common factor e^{βg_i} leaves the sum and cancels; sympy decides it for symbolic n",
            general=True,
        ),
    ]


def _derive() -> list[Step]:
    n = N_SYMBOLIC
    scores, (c0, c1, c2) = softmax_series(n, n, 2)
    centring = sp.eye(n) - sp.ones(n, n) / n
    potential = sp.Matrix(sp.symbols(f"g0:{n}"))
    return [
        Step(
            "symbolic scores S = (s_ij), N = 3",
            scores,
            statement=r"\operatorname{softmax}_\beta(\mathsf S)_{ij} = \frac{e^{\beta s_{ij}}}{\sum_k e^{\beta s_{ik}}} = \sum_{m\ge0}\beta^m(\mathsf C_m)_{ij},\quad \mathsf S\in\mathbb R^{N\times N}",
            because="the Taylor coefficients C_m in β of the row-normalised exponential, for fully symbolic scores",
        ),
        claim(
            "β⁰: C₀ = N⁻¹ 1 1ᵀ",
            c0,
            sp.ones(n, n) / n,
            statement=r"\mathsf C_0 = \operatorname{softmax}_0(\mathsf S) = N^{-1}\mathbf 1\mathbf 1^\top",
            because="at β = 0 every weight e^{0} = 1, so each row is uniform",
        ),
        claim(
            "β¹: C₁ = N⁻¹ S (I − N⁻¹ 1 1ᵀ)",
            c1,
            (scores * centring / n).applyfunc(sp.expand),
            statement=r"\mathsf C_1 = N^{-1}\mathsf S\,(\mathsf I - N^{-1}\mathbf 1\mathbf 1^\top),\quad (\mathsf C_1)_{ij} = N^{-1}\big(s_{ij} - N^{-1}\textstyle\sum_k s_{ik}\big)",
            because="∂_β(e^{βs_ij}/Z_i) at 0 is s_ij/N − (Σ_k s_ik)/N²: the row-centred score divided by N",
        ),
        claim(
            "a source potential g_i drops out at first order: (g1ᵀ)(I − N⁻¹11ᵀ) = 0",
            ((potential * sp.ones(1, n)) * centring).applyfunc(sp.expand),
            statement=r"(g\mathbf 1^\top)(\mathsf I - N^{-1}\mathbf 1\mathbf 1^\top) = g\mathbf 1^\top - g\,(\mathbf 1^\top\mathbf 1)\mathbf 1^\top/N = 0",
            because="a score g_i constant along row i is killed by the row-centring projector",
        ),
        claim(
            "C₁ and C₂ have zero row sums",
            (c1 * sp.ones(n, 1)).row_join(c2 * sp.ones(n, 1)),
            statement=r"\mathsf C_m\mathbf 1 = 0\quad (m \ge 1)",
            because="softmax_β(S)1 = 1 for every β, so every coefficient beyond C₀ has zero row sums",
        ),
        Step(
            "β²: the first neglected coefficient C₂ (entry 0,0)",
            c2[0, 0],
            statement=r"\operatorname{softmax}_\beta(\mathsf S) - \big(\mathsf C_0 + \beta\mathsf C_1\big) = \beta^2\mathsf C_2 + O(\beta^3)",
            because="the remainder of the first-order expansion is led by C₂ (shown: its (0,0) entry)",
        ),
        *_general_steps(),
    ]


FIRST_ORDER_BETAS = np.geomspace(1e-3, 1e-1, 8)
SECOND_ORDER_BETAS = np.geomspace(1e-2, 3e-1, 8)
SCORE_SCALE_OUTSIDE = 300.0  # unit-variance scores times this: row spread Δ ≈ 1400, βΔ ≫ 1 on the β window


def _remainder_rate(scores, betas, approximation, expected: float, tolerance: float) -> Verification:
    """Fitted exponent in β of ‖softmax_β(S) − approximation(S, β)‖_F against the exact (max-shifted) softmax."""
    xp = namespace(scores)
    errors = [as_float(xp.linalg.matrix_norm(softmax_operator(scores, b) - approximation(scores, b))) for b in betas]
    return Verification.from_rate(
        betas, errors, expected=expected, tolerance=tolerance, n=scores.shape[0], points=len(betas)
    )


def _verify(rng, scale, backend) -> Verification:
    """Oracle: the exact (max-shifted) softmax; the remainder must fall off like β², a fitted slope.

    β runs over 10⁻³…10⁻¹ (8 geometric points): large enough that the remainder ‖C₂‖β² ≈ 10⁻⁷
    stays far above rounding, small enough that the β³ term bends the slope by < 0.05.
    """
    n = by_scale(scale, 16, 512)
    scores = to_backend(rng.standard_normal((n, n)), backend)
    return _remainder_rate(scores, FIRST_ORDER_BETAS, softmax_first_order, 2.0, 0.05)


def outside_small_beta(rng) -> Verification:
    """First order outside the small-β regime: scores 300 × N(0, 1), 16 × 16, on the same β window.

    The largest row spread is Δ ≈ 1340, so βΔ runs from ≈ 1.3 to ≈ 130 over β ∈ [10⁻³, 10⁻¹], outside the series'
    radius of convergence (≥ π/Δ in β): the remainder saturates instead of falling like β².  Same
    criterion as ``verify`` (fitted exponent, expected 2, tolerance 0.05).  Measured: exponent 1.27
    (residual 0.73, 15 × the tolerance) in 0.002 s.
    """
    scores = SCORE_SCALE_OUTSIDE * rng.standard_normal((16, 16))
    return _remainder_rate(scores, FIRST_ORDER_BETAS, softmax_first_order, 2.0, 0.05)


def _derive_second_order() -> list[Step]:
    n = N_SYMBOLIC
    scores, (_, _, c2, c3) = softmax_series(n, n, 3)
    centred = (scores * (sp.eye(n) - sp.ones(n, n) / n)).applyfunc(sp.expand)
    variance = sp.Matrix([sum(centred[i, j] ** 2 for j in range(n)) / n for i in range(n)])
    closed = ((centred.applyfunc(lambda x: x**2) - variance * sp.ones(1, n)) / (2 * n)).applyfunc(sp.expand)
    return [
        Step(
            "row-centred scores S̃ = S(I − N⁻¹11ᵀ) and row variance v_i = N⁻¹ Σ_j S̃_ij²",
            variance,
            statement=r"\tilde{\mathsf S} = \mathsf S(\mathsf I - N^{-1}\mathbf 1\mathbf 1^\top),\quad v_i = N^{-1}\sum_j\tilde{\mathsf S}_{ij}^2",
            because="the row-centred scores and their row variances, the ingredients of the β² coefficient",
        ),
        claim(
            "β²: C₂ = (S̃^{∘2} − v1ᵀ)/(2N)",
            c2,
            closed,
            statement=r"\mathsf C_2 = \frac{\tilde{\mathsf S}^{\circ2} - v\mathbf 1^\top}{2N}",
            because="½∂²_β at 0 of e^{βs_ij}/Z_i is (s_ij − s̄_i)²/(2N) − (mean of (s_ik − s̄_i)²)/(2N): a centred second moment",
        ),
        claim(
            "C₂ and C₃ have zero row sums",
            (c2 * sp.ones(n, 1)).row_join(c3 * sp.ones(n, 1)),
            statement=r"\mathsf C_2\mathbf 1 = \mathsf C_3\mathbf 1 = 0",
            because="softmax_β(S)1 = 1 for every β, so all higher coefficients have zero row sums",
        ),
        Step(
            "β³: the first neglected coefficient C₃ (entry 0,0)",
            sp.factor(c3[0, 0]),
            statement=r"\operatorname{softmax}_\beta(\mathsf S) - \sum_{m\le2}\beta^m\mathsf C_m = \beta^3\mathsf C_3 + O(\beta^4)",
            because="the remainder of the second-order expansion is led by C₃ (shown: its (0,0) entry, factored)",
        ),
    ]


def _verify_second_order(rng, scale, backend) -> Verification:
    """Oracle: the exact softmax; the second-order remainder must fall off like β³, a fitted slope.

    β over 10⁻²…3·10⁻¹ (8 points): the remainder ‖C₃‖β³ ≥ 10⁻⁷ stays far above rounding, and the β⁴ term
    bends the slope by < 0.05 on unit-variance scores.
    """
    n = by_scale(scale, 16, 512)
    scores = to_backend(rng.standard_normal((n, n)), backend)
    return _remainder_rate(scores, SECOND_ORDER_BETAS, softmax_second_order, 3.0, 0.1)


def outside_small_beta_second_order(rng) -> Verification:
    """Second order outside the small-β regime: scores 300 × N(0, 1), 16 × 16, on the same β window.

    Largest row spread Δ ≈ 1430, so βΔ runs from ≈ 14 to ≈ 430 over β ∈ [10⁻², 3·10⁻¹]: far outside the radius of
    convergence, the remainder does not fall like β³.  Same criterion as ``verify`` (fitted exponent,
    expected 3, tolerance 0.1).  Measured: exponent 2.05 (residual 0.95, 9.5 × the tolerance) in 0.002 s.
    """
    scores = SCORE_SCALE_OUTSIDE * rng.standard_normal((16, 16))
    return _remainder_rate(scores, SECOND_ORDER_BETAS, softmax_second_order, 3.0, 0.1)


_SMALL_BETA_TEXT = (
    "β small against the score spread: βΔ ≪ 1, Δ = max_i (max_j s_ij − min_j s_ij) (the series in β converges "
    "for |β| < π/Δ at least, and its coefficients grow like Δ^m)"
)
_SMALL_BETA_CASE = "scores 300 × N(0, 1) (Δ ≈ 1400), N = 16, on the check's own β window"

IDENTITIES = [
    Identity(
        name="continuum.softmax.small_beta",
        area="continuum",
        statement=r"\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top"
        r" + \frac{\beta}{N} S\,(I - N^{-1}\mathbf 1\mathbf 1^\top) + O(\beta^2)"
        r"\quad (\beta\Delta \ll 1,\ \Delta = \max_i(\max_j s_{ij} - \min_j s_{ij}))",
        source="Attention Geometry §A.9 (small-β softmax) [SEED]",
        derive=_derive,
        verify=_verify,
        asymptotic=True,
        hypotheses=(Hypothesis(_SMALL_BETA_TEXT, _SMALL_BETA_CASE, outside_small_beta),),
    ),
    Identity(
        name="continuum.softmax.second_order",
        area="continuum",
        statement=r"\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top + \frac{\beta}{N}\tilde S"
        r" + \frac{\beta^2}{2N}\bigl(\tilde S^{\odot2} - v\mathbf 1^\top\bigr) + O(\beta^3),"
        r"\ \tilde S = S(I - N^{-1}\mathbf 1\mathbf 1^\top),\ v_i = N^{-1}\textstyle\sum_j\tilde S_{ij}^2"
        r"\quad (\beta\Delta \ll 1,\ \Delta = \max_i(\max_j s_{ij} - \min_j s_{ij}))",
        source="Attention Geometry §A.9 (first order) [SEED]; second order [DERIVED]",
        derive=_derive_second_order,
        verify=_verify_second_order,
        asymptotic=True,
        hypotheses=(Hypothesis(_SMALL_BETA_TEXT, _SMALL_BETA_CASE, outside_small_beta_second_order),),
    ),
]
