r"""The rank-one exponential :math:`e^{uv^\top} = I + \varphi_1(v^\top u)\,uv^\top`.

Source: lie-exponential-roadmap (seed), "rank-1 exponentials", with
:math:`\varphi_1(z) = (e^z - 1)/z`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from derivations._common import by_scale, relative_error
from workbench.backend import matrix_exp, to_backend
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.expmv import expm_rank1, expmv_rank1

ORDER = 4  # powers of uvᵀ checked symbolically


def _derive() -> list[Step]:
    n = 3
    u = sp.Matrix(sp.symbols(f"u0:{n}"))
    v = sp.Matrix(sp.symbols(f"v0:{n}"))
    z = sp.Symbol("z")
    outer = u * v.T
    dot = (v.T * u)[0, 0]
    steps = [Step("rank-one matrix u vᵀ (3×3, symbolic)", outer)]
    for k in range(2, ORDER + 1):
        steps.append(
            claim(
                f"(u vᵀ)^{k} = (vᵀu)^{k - 1} u vᵀ",
                (outer**k).applyfunc(sp.factor),
                dot ** (k - 1) * outer,
            )
        )
    phi = (sp.exp(z) - 1) / z
    series = sp.series(phi, z, 0, ORDER).removeO()
    target = sum((z ** (k - 1) / sp.factorial(k) for k in range(1, ORDER + 1)), sp.Integer(0))
    steps.append(claim("Σ_{k≥1} zᵏ⁻¹/k! is the Taylor series of φ₁(z) = (eᶻ−1)/z", series, target))
    steps.append(claim("φ₁ is regular at 0: lim_{z→0} φ₁(z) = 1", sp.limit(phi, z, 0), 1))
    return steps


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
        source="lie-exponential-roadmap (seed), 'rank-1 exponentials'",
        derive=_derive,
        verify=_verify,
    ),
]
