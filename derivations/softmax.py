r"""The small-β softmax expansion.

Source: Attention Geometry §A.9 [SEED]:
:math:`\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top
+ (\beta/N)\,S(I - N^{-1}\mathbf 1\mathbf 1^\top) + O(\beta^2)`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from derivations._common import as_float, by_scale
from workbench.backend import namespace, to_backend
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.continuum import softmax_first_order, softmax_second_order, softmax_series
from workbench.markov import softmax_operator

N_SYMBOLIC = 3


def _derive() -> list[Step]:
    n = N_SYMBOLIC
    scores, (c0, c1, c2) = softmax_series(n, n, 2)
    centring = sp.eye(n) - sp.ones(n, n) / n
    potential = sp.Matrix(sp.symbols(f"g0:{n}"))
    return [
        Step("symbolic scores S = (s_ij), N = 3", scores),
        claim("β⁰: C₀ = N⁻¹ 1 1ᵀ", c0, sp.ones(n, n) / n),
        claim("β¹: C₁ = N⁻¹ S (I − N⁻¹ 1 1ᵀ)", c1, (scores * centring / n).applyfunc(sp.expand)),
        claim(
            "a source potential g_i drops out at first order: (g1ᵀ)(I − N⁻¹11ᵀ) = 0",
            ((potential * sp.ones(1, n)) * centring).applyfunc(sp.expand),
        ),
        claim("C₁ and C₂ have zero row sums", (c1 * sp.ones(n, 1)).row_join(c2 * sp.ones(n, 1))),
        Step("β²: the first neglected coefficient C₂ (entry 0,0)", c2[0, 0]),
    ]


def _verify(rng, scale, backend) -> Verification:
    """Oracle: the exact (max-shifted) softmax; the remainder must fall off like β², a fitted slope.

    β runs over 10⁻³…10⁻¹ (8 geometric points): large enough that the remainder ‖C₂‖β² ≈ 10⁻⁷
    stays far above rounding, small enough that the β³ term bends the slope by < 0.05.
    """
    n = by_scale(scale, 16, 512)
    scores = to_backend(rng.standard_normal((n, n)), backend)
    xp = namespace(scores)
    betas = np.geomspace(1e-3, 1e-1, 8)
    errors = [
        as_float(xp.linalg.matrix_norm(softmax_operator(scores, b) - softmax_first_order(scores, b))) for b in betas
    ]
    return Verification.from_rate(betas, errors, expected=2.0, tolerance=0.05, n=n, points=len(betas))


def _derive_second_order() -> list[Step]:
    n = N_SYMBOLIC
    scores, (_, _, c2, c3) = softmax_series(n, n, 3)
    centred = (scores * (sp.eye(n) - sp.ones(n, n) / n)).applyfunc(sp.expand)
    variance = sp.Matrix([sum(centred[i, j] ** 2 for j in range(n)) / n for i in range(n)])
    closed = ((centred.applyfunc(lambda x: x**2) - variance * sp.ones(1, n)) / (2 * n)).applyfunc(sp.expand)
    return [
        Step("row-centred scores S̃ = S(I − N⁻¹11ᵀ) and row variance v_i = N⁻¹ Σ_j S̃_ij²", variance),
        claim("β²: C₂ = (S̃^{∘2} − v1ᵀ)/(2N)", c2, closed),
        claim("C₂ and C₃ have zero row sums", (c2 * sp.ones(n, 1)).row_join(c3 * sp.ones(n, 1))),
        Step("β³: the first neglected coefficient C₃ (entry 0,0)", sp.factor(c3[0, 0])),
    ]


def _verify_second_order(rng, scale, backend) -> Verification:
    """Oracle: the exact softmax; the second-order remainder must fall off like β³, a fitted slope.

    β over 10⁻²…3·10⁻¹ (8 points): the remainder ‖C₃‖β³ ≥ 10⁻⁷ stays far above rounding, and the β⁴ term
    bends the slope by < 0.05 on unit-variance scores.
    """
    n = by_scale(scale, 16, 512)
    scores = to_backend(rng.standard_normal((n, n)), backend)
    xp = namespace(scores)
    betas = np.geomspace(1e-2, 3e-1, 8)
    errors = [
        as_float(xp.linalg.matrix_norm(softmax_operator(scores, b) - softmax_second_order(scores, b))) for b in betas
    ]
    return Verification.from_rate(betas, errors, expected=3.0, tolerance=0.1, n=n, points=len(betas))


IDENTITIES = [
    Identity(
        name="continuum.softmax.small_beta",
        area="continuum",
        statement=r"\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top"
        r" + \frac{\beta}{N} S\,(I - N^{-1}\mathbf 1\mathbf 1^\top) + O(\beta^2)",
        source="Attention Geometry §A.9 (small-β softmax) [SEED]",
        derive=_derive,
        verify=_verify,
        asymptotic=True,
    ),
    Identity(
        name="continuum.softmax.second_order",
        area="continuum",
        statement=r"\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top + \frac{\beta}{N}\tilde S"
        r" + \frac{\beta^2}{2N}\bigl(\tilde S^{\odot2} - v\mathbf 1^\top\bigr) + O(\beta^3),"
        r"\ \tilde S = S(I - N^{-1}\mathbf 1\mathbf 1^\top),\ v_i = N^{-1}\textstyle\sum_j\tilde S_{ij}^2",
        source="Attention Geometry §A.9 (first order) [SEED]; second order [DERIVED]",
        derive=_derive_second_order,
        verify=_verify_second_order,
        asymptotic=True,
    ),
]
