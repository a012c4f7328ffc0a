r"""The Dirichlet form of a Gauss kernel on a sampled point cloud.

Source: Attention Geometry §2 [SEED] :math:`\mathcal E(f,f) = (\mathbf 1^\top\mathsf p)
\langle f|\mathsf L|f\rangle_\pi = (\mathbf 1^\top\mathsf p)\sum_k\lambda_k|c_k|^2`, and the edge form
:math:`\tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2` [DERIVED] (attention-geometry-math §A.2).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from derivations._common import as_float, by_scale
from workbench.backend import namespace, to_backend
from workbench.catalogue import Identity, Step, Verification, claim
from workbench.markov import (
    dirichlet_form,
    gauss_kernel,
    markov_operator,
    reversible_stationary_law,
    squared_distances,
)

N_SYMBOLIC = 3


def _derive() -> list[Step]:
    n = N_SYMBOLIC
    k = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"K{min(i, j)}{max(i, j)}", positive=True))
    f = sp.Matrix(sp.symbols(f"f0:{n}"))
    p = k * sp.ones(n, 1)
    mass = sum(p)
    pi = p / mass
    markov = sp.diag(*p).inv() * k
    generator = sp.eye(n) - markov
    lf = generator * f
    quadratic = mass * sum(pi[i] * f[i] * lf[i] for i in range(n))
    edge = sp.Rational(1, 2) * sum(k[i, j] * (f[i] - f[j]) ** 2 for i in range(n) for j in range(n))
    return [
        Step("symmetric kernel K (3×3), degree p = K1, π = p/1ᵀp, L = I − P", k),
        claim("π is stationary: πᵀP = πᵀ", (pi.T * markov).applyfunc(sp.simplify), pi.T),
        claim(
            "detailed balance: π_i P_ij = π_j P_ji",
            (sp.diag(*pi) * markov).applyfunc(sp.simplify),
            (sp.diag(*pi) * markov).T.applyfunc(sp.simplify),
        ),
        claim(
            "(1ᵀp)⟨f, Lf⟩_π = Σ_i p_i f_i (Lf)_i",
            quadratic,
            sum(p[i] * f[i] * lf[i] for i in range(n)),
        ),
        claim("(1ᵀp)⟨f, Lf⟩_π = ½ Σ_ij K_ij (f_i − f_j)²", sp.factor(sp.simplify(quadratic)), edge),
    ]


def _swiss_roll(rng, n: int) -> np.ndarray:
    # Sampling density is nonuniform in the ambient coordinates, as in the seed's Figure 1.
    angle = 1.5 * np.pi * (1 + 2 * rng.random(n))
    height = 10 * rng.random(n)
    points = np.column_stack([angle * np.cos(angle), height, angle * np.sin(angle)])
    return (points + 0.05 * rng.standard_normal(points.shape)) / 10


def _verify(rng, scale, backend) -> Verification:
    """Compare three independent routes to ℰ(f,f) on a sampled Swiss roll.

    (a) the edge sum ½Σ K_ij (f_i − f_j)² (``dirichlet_form``),
    (b) the quadratic form (1ᵀp)⟨f, (I − P)f⟩_π,
    (c) the spectral sum (1ᵀp) Σ_k λ_k c_k² from the symmetric conjugate D^{-1/2} K D^{-1/2}.
    Tolerance 1e-10 relative: (b) and (c) lose a few digits to cancellation in f − Pf.
    """
    n = by_scale(scale, 300, 3000)
    points_np = _swiss_roll(rng, n)
    d2 = squared_distances(points_np)
    beta = 1.0 / float(np.median(d2[np.triu_indices(n, 1)]))  # median heuristic (DMAE convention)
    points = to_backend(points_np, backend)
    xp = namespace(points)
    kernel = gauss_kernel(points, beta)
    f = to_backend(np.sin(3 * points_np[:, 0]) + 0.1 * rng.standard_normal(n), backend)
    edge = as_float(dirichlet_form(kernel, f))

    degree = xp.sum(kernel, axis=-1)
    mass = xp.sum(degree)
    pi = reversible_stationary_law(kernel)
    p_op = markov_operator(kernel)
    quadratic = as_float(mass * xp.sum(pi * f * (f - p_op @ f)))

    root = xp.sqrt(degree)
    mu, u = xp.linalg.eigh(kernel / (root[:, None] * root[None, :]))
    phi = u / root[:, None] * xp.sqrt(mass)  # π-orthonormal eigenfunctions of P
    c = xp.sum((pi * f)[:, None] * phi, axis=0)
    spectral = as_float(mass * xp.sum((1.0 - mu) * c * c))

    residual = max(abs(quadratic - edge), abs(spectral - edge)) / abs(edge)
    return Verification.from_residual(residual, 1e-10, n=n, beta=round(beta, 6))


IDENTITIES = [
    Identity(
        name="markov.dirichlet_form.gauss",
        area="markov",
        statement=r"\mathcal E(f,f) = (\mathbf 1^\top\mathsf p)\,\langle f, \mathsf L f\rangle_\pi"
        r" = (\mathbf 1^\top\mathsf p)\sum_k \lambda_k c_k^2"
        r" = \tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2,"
        r"\quad \mathsf K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}",
        source="Attention Geometry §2 [SEED]; edge form [DERIVED] (attention-geometry-math §A.2)",
        derive=_derive,
        verify=_verify,
    ),
]
