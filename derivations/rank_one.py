r"""The rank-one exponential :math:`e^{uv^\top} = I + \varphi_1(v^\top u)\,uv^\top`.

Source: Lie-Exponential Roadmap, "rank-1 exponentials", with
:math:`\varphi_1(z) = (e^z - 1)/z`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from workbench.backend import matrix_exp, to_backend
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.expmv import expm_rank1, expmv_rank1

from ._common import by_scale, relative_error

ORDER = 4  # powers of uvᵀ checked symbolically


def _derive() -> list[Step]:
    n = 3
    u = sp.Matrix(sp.symbols(f"u0:{n}"))
    v = sp.Matrix(sp.symbols(f"v0:{n}"))
    z = sp.Symbol("z")
    outer = u * v.T
    dot = (v.T * u)[0, 0]
    steps = [
        Step(
            "rank-one matrix u vᵀ (3×3, symbolic)",
            outer,
            statement=r"\mathsf M = uv^\top,\quad u, v\in\mathbb R^N,\quad \mathsf M_{ab} = u_av_b",
            because="the rank-one matrix whose exponential has a closed form",
        )
    ]
    for k in range(2, ORDER + 1):
        steps.append(
            claim(
                f"(u vᵀ)^{k} = (vᵀu)^{k - 1} u vᵀ",
                (outer**k).applyfunc(sp.factor),
                dot ** (k - 1) * outer,
                statement=r"(uv^\top)^k = u\,(v^\top u)^{k-1}v^\top = (v^\top u)^{k-1}\,uv^\top\quad(k\ge1)",
                because="associativity: the k − 1 inner products vᵀu in u(vᵀu)(vᵀu)…vᵀ are scalars and move to the front",
            )
        )
    phi = (sp.exp(z) - 1) / z
    series = sp.series(phi, z, 0, ORDER).removeO()
    target = sum((z ** (k - 1) / sp.factorial(k) for k in range(1, ORDER + 1)), sp.Integer(0))
    steps.append(
        claim(
            "Σ_{k≥1} zᵏ⁻¹/k! is the Taylor series of φ₁(z) = (eᶻ−1)/z",
            series,
            target,
            statement=r"\varphi_1(z) = \frac{e^z - 1}{z} = \sum_{k\ge1}\frac{z^{k-1}}{k!},\quad\text{so}\quad e^{uv^\top} = \mathsf I + \sum_{k\ge1}\frac{(v^\top u)^{k-1}}{k!}uv^\top = \mathsf I + \varphi_1(v^\top u)\,uv^\top",
            because="divide the exponential series minus its constant term by z; the power rule turns the matrix series into this scalar series",
        )
    )
    steps.append(
        claim(
            "φ₁ is regular at 0: lim_{z→0} φ₁(z) = 1",
            sp.limit(phi, z, 0),
            1,
            statement=r"\lim_{z\to0}\varphi_1(z) = 1,\quad\text{so } e^{uv^\top} = \mathsf I + uv^\top \text{ when } v^\top u = 0",
            because="eᶻ − 1 = z + O(z²); the closed form needs no special case for orthogonal u, v",
        )
    )
    steps.extend(_general_steps())
    return steps


def _general_steps() -> list[Step]:
    """The power rule for any size n and any power k, and the summed series, with symbolic n, k."""
    n, k = sp.Symbol("n", integer=True, positive=True), sp.Symbol("k", integer=True, positive=True)
    a, b, c = sp.symbols("a b c", integer=True)
    u, v = sp.IndexedBase("u"), sp.IndexedBase("v")
    z, t = sp.symbols("z t")
    dot = sp.Sum(v[c] * u[c], (c, 0, n - 1))
    return [
        claim(
            "general N: induction step ((u vᵀ)^k u vᵀ)_ab = (vᵀu)^k u_a v_b, n and k symbolic",
            sp.Sum(dot ** (k - 1) * u[a] * v[c] * u[c] * v[b], (c, 0, n - 1)),
            dot**k * u[a] * v[b],
            statement=r"\sum_{c=0}^{n-1}(v^\top u)^{k-1}u_av_cu_cv_b = (v^\top u)^k u_av_b,\quad v^\top u = \sum_{c=0}^{n-1}v_cu_c,\ n, k\text{ symbolic}",
            because="(uvᵀ)^{k+1} = (uvᵀ)^k uvᵀ: the inner index c sums to one more factor vᵀu; sympy decides it for symbolic n and k, which with k = 1 proves the power rule for all k",
            general=True,
        ),
        claim(
            "general N: Σ_{k≥1} tᵏ zᵏ⁻¹/k! = (e^{tz} − 1)/z = t φ₁(tz), summed by sympy",
            sp.Sum(t**k * z ** (k - 1) / sp.factorial(k), (k, 1, sp.oo)).doit(),
            (sp.exp(t * z) - 1) / z,
            statement=r"\sum_{k=1}^{\infty}\frac{t^kz^{k-1}}{k!} = \frac{e^{tz} - 1}{z},\quad\text{so } e^{tuv^\top} = \mathsf I + \frac{e^{t\,v^\top u} - 1}{v^\top u}\,uv^\top",
            because="sympy sums the series in closed form for symbolic k; with the power rule this is the exponential for every N",
            general=True,
        ),
    ]


def _nearly_orthogonal(rng, n: int, dot: float) -> tuple[np.ndarray, np.ndarray]:
    # ‖u‖, ‖v‖ ≈ 1, so the dense oracle (relative error ~ eps·‖uvᵀ‖) stays at rounding level.
    u = rng.standard_normal(n) / np.sqrt(n)
    v = rng.standard_normal(n) / np.sqrt(n)
    v -= (v @ u) / (u @ u) * u  # now vᵀu = 0 up to rounding
    v += dot / (u @ u) * u
    return u, v


def _verify(rng, scale, backend) -> Verification:
    """Oracle: the dense Padé exponential of t·uvᵀ (scipy.linalg.expm / torch.linalg.matrix_exp).

    Cases: a generic pair, vᵀu = 1e-14 (where the naive (eᶻ−1)/z has lost every digit),
    exactly orthogonal u ⊥ v (nilpotent uvᵀ: e^{uvᵀ} = I + uvᵀ), and the matrix-free action
    on a block B.
    """
    n = by_scale(scale, 8, 256)
    errors = []
    pairs = [
        (rng.standard_normal(n) / np.sqrt(n), rng.standard_normal(n) / np.sqrt(n)),
        _nearly_orthogonal(rng, n, 1e-14),
        _nearly_orthogonal(rng, n, 0.0),
    ]
    t = 0.9
    for u_np, v_np in pairs:
        u, v = to_backend(u_np, backend), to_backend(v_np, backend)
        dense = matrix_exp(to_backend(t * np.outer(u_np, v_np), backend))
        errors.append(relative_error(expm_rank1(u, v, t), dense))
        b_np = rng.standard_normal((n, 3))
        b = to_backend(b_np, backend)
        errors.append(relative_error(expmv_rank1(u, v, b, t), dense @ b))
    # Relative Frobenius error of the dense oracle is ~ eps·‖t uvᵀ‖ ≈ eps here (torch: ~10× scipy's).
    return Verification.from_residual(max(errors), 1e-12, n=n, cases=len(errors))


IDENTITIES = [
    Identity(
        name="expmv.rank_one.closed_form",
        area="expmv",
        statement=r"e^{t\,uv^\top} = I + t\,\varphi_1(t\,v^\top u)\,uv^\top,"
        r"\quad \varphi_1(z) = \frac{e^z - 1}{z},\ \varphi_1(0) = 1",
        source="Lie-Exponential Roadmap, 'rank-1 exponentials'",
        derive=_derive,
        verify=_verify,
    ),
]
