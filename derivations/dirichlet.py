r"""The Dirichlet form of a Gauss kernel on a sampled point cloud (and of any symmetric kernel with positive degrees).

Source: Attention Geometry §2 [SEED] :math:`\mathcal E(f,f) = (\mathbf 1^\top\mathsf p)
\langle f|\mathsf L|f\rangle_\pi = (\mathbf 1^\top\mathsf p)\sum_k\lambda_k|c_k|^2`, and the edge form
:math:`\tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2` [DERIVED] (book/reference.md §A.2).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from workbench.backend import namespace, to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.markov import (
    dirichlet_form,
    gauss_kernel,
    markov_operator,
    reversible_stationary_law,
    squared_distances,
)

from ._common import as_float, by_scale

N_SYMBOLIC = 3


def _indexed_gauss_chain():
    """Gauss kernel K_ij = exp(−β(x_i − x_j)²) on n points, n symbolic, as indexed sums."""
    n = sp.Symbol("n", integer=True, positive=True)
    i, j, k = sp.symbols("i j k", integer=True)
    x, f = sp.IndexedBase("x"), sp.IndexedBase("f")
    beta, mass = sp.Symbol("beta", positive=True), sp.Symbol("m", positive=True)

    def kern(a, b):
        return sp.exp(-beta * (x[a] - x[b]) ** 2)

    def degree(a):
        return sp.Sum(kern(a, k), (k, 0, n - 1))

    def markov(a, b):
        return kern(a, b) / degree(a)

    return n, i, j, k, f, mass, kern, degree, markov


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
    gn, gi, gj, gk, gf, gm, gkern, gdeg, gmarkov = _indexed_gauss_chain()
    g_row = gf[gi] - sp.Sum(gmarkov(gi, gk) * gf[gk], (gk, 0, gn - 1))  # (Lf)_i
    g_pair = gkern(gi, gj) * gf[gi] * (gf[gi] - gf[gj])
    g_swapped = gkern(gj, gi) * gf[gj] * (gf[gj] - gf[gi])
    return [
        Step(
            "symmetric kernel K (3×3), degree p = K1, π = p/1ᵀp, L = I − P",
            k,
            statement=r"\mathsf K = \mathsf K^\top \in \mathbb R_{>0}^{N\times N},\quad \mathsf p = \mathsf K\mathbf 1,\quad \mathsf D = \operatorname{diag}\mathsf p,\quad \mathsf P = \mathsf D^{-1}\mathsf K,\quad \pi = \mathsf p/\mathbf 1^\top\mathsf p,\quad \mathsf L = \mathsf I - \mathsf P",
            because="the definitions: a symmetric positive kernel, its degrees, the row-normalised Markov operator and its generator",
        ),
        claim(
            "π is stationary: πᵀP = πᵀ",
            (pi.T * markov).applyfunc(sp.simplify),
            pi.T,
            statement=r"\pi^\top\mathsf P = \pi^\top,\quad \pi = \mathsf p/\mathbf 1^\top\mathsf p",
            because="πᵀP = pᵀD⁻¹K/1ᵀp = 1ᵀK/1ᵀp = (K1)ᵀ/1ᵀp = pᵀ/1ᵀp, using K = Kᵀ",
        ),
        claim(
            "detailed balance: π_i P_ij = π_j P_ji",
            (sp.diag(*pi) * markov).applyfunc(sp.simplify),
            (sp.diag(*pi) * markov).T.applyfunc(sp.simplify),
            statement=r"\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}\quad\Longleftrightarrow\quad \operatorname{diag}(\pi)\,\mathsf P = \mathsf K/\mathbf 1^\top\mathsf p = (\operatorname{diag}(\pi)\,\mathsf P)^\top",
            because="π_i P_ij = (p_i/1ᵀp)(K_ij/p_i) = K_ij/1ᵀp, which is symmetric in i, j",
        ),
        claim(
            "(1ᵀp)⟨f, Lf⟩_π = Σ_i p_i f_i (Lf)_i",
            quadratic,
            sum(p[i] * f[i] * lf[i] for i in range(n)),
            statement=r"(\mathbf 1^\top\mathsf p)\,\langle f, \mathsf L f\rangle_\pi = (\mathbf 1^\top\mathsf p)\sum_i \pi_i f_i(\mathsf L f)_i = \sum_i \mathsf p_i f_i (\mathsf L f)_i",
            because="the π-inner product weights entry i by π_i = p_i/1ᵀp, and 1ᵀp cancels the normalisation",
        ),
        claim(
            "(1ᵀp)⟨f, Lf⟩_π = ½ Σ_ij K_ij (f_i − f_j)²",
            sp.factor(sp.simplify(quadratic)),
            edge,
            statement=r"\sum_i \mathsf p_i f_i(\mathsf L f)_i = \sum_{ij}\mathsf K_{ij} f_i(f_i - f_j) = \tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2",
            because="p_i(Lf)_i = Σ_j K_ij (f_i − f_j); averaging the double sum with its i↔j relabelling (K symmetric) completes the square",
        ),
        claim(
            "general N: detailed balance of P = D⁻¹K for the Gauss kernel, n symbolic",
            (gdeg(gi) / gm) * gmarkov(gi, gj),
            (gdeg(gj) / gm) * gmarkov(gj, gi),
            statement=r"\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji},\quad \mathsf P_{ij} = \mathsf K_{ij}/\textstyle\sum_{k<n}\mathsf K_{ik},\ \mathsf K_{ij} = e^{-\beta(x_i - x_j)^2},\ n\text{ symbolic}",
            because="the degree p_i cancels and K_ij = K_ji because (x_i − x_j)² = (x_j − x_i)²; sympy decides it with indexed x_i over a symbolic n",
            general=True,
        ),
        claim(
            "general N: π is stationary, Σ_i π_i P_ij = π_j, n symbolic",
            sp.Sum((gdeg(gi) / gm) * gmarkov(gi, gj), (gi, 0, gn - 1)),
            sp.Sum(gkern(gj, gi), (gi, 0, gn - 1)) / gm,
            statement=r"\sum_{i=0}^{n-1}\pi_i\mathsf P_{ij} = \frac{1}{m}\sum_{i=0}^{n-1}\mathsf K_{ji} = \pi_j,\quad m = \mathbf 1^\top\mathsf p,\ n\text{ symbolic}",
            because="each term π_i P_ij = K_ij/m, and K_ij = K_ji turns the column sum into the degree p_j; sympy decides it as a symbolic sum",
            general=True,
        ),
        claim(
            "general N: row i of the quadratic form, p_i f_i (Lf)_i = Σ_k K_ik f_i (f_i − f_k)",
            gdeg(gi) * gf[gi] * g_row,
            sp.Sum(gkern(gi, gk) * gf[gi] * (gf[gi] - gf[gk]), (gk, 0, gn - 1)),
            statement=r"\mathsf p_i f_i(\mathsf L f)_i = \sum_{k=0}^{n-1}\mathsf K_{ik} f_i(f_i - f_k),\quad n\text{ symbolic}",
            because="(Lf)_i = f_i − Σ_k K_ik f_k/p_i and p_i = Σ_k K_ik; sympy decides it as a symbolic sum",
            general=True,
        ),
        claim(
            "general N: symmetrising the pair sum gives the edge form",
            sp.Rational(1, 2) * sp.Sum(g_pair + g_swapped, (gj, 0, gn - 1), (gi, 0, gn - 1)),
            sp.Rational(1, 2) * sp.Sum(gkern(gi, gj) * (gf[gi] - gf[gj]) ** 2, (gj, 0, gn - 1), (gi, 0, gn - 1)),
            statement=r"\tfrac12\sum_{ij}\big[\mathsf K_{ij}f_i(f_i - f_j) + \mathsf K_{ji}f_j(f_j - f_i)\big] = \tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2,\quad n\text{ symbolic}",
            because="the left side is Σ_ij K_ij f_i(f_i − f_j) averaged with its i↔j relabelling; with K_ij = K_ji the summand is K_ij(f_i − f_j)²",
            general=True,
        ),
    ]


def _swiss_roll(rng, n: int) -> np.ndarray:
    # Sampling density is nonuniform in the ambient coordinates, as in Attention Geometry's Figure 1.
    angle = 1.5 * np.pi * (1 + 2 * rng.random(n))
    height = 10 * rng.random(n)
    points = np.column_stack([angle * np.cos(angle), height, angle * np.sin(angle)])
    return (points + 0.05 * rng.standard_normal(points.shape)) / 10


def _routes(kernel, f, pi, xp, *, spectral: bool = True) -> tuple[float, float, float]:
    """ℰ(f,f) three ways: the edge sum, the quadratic form (1ᵀp)⟨f, (I − P)f⟩_π and the spectral sum.

    (a) ½Σ K_ij (f_i − f_j)² (``dirichlet_form``), (b) (1ᵀp) Σ_i π_i f_i (f − Pf)_i with P = D⁻¹K
    (``markov_operator``), (c) (1ᵀp) Σ_k λ_k c_k² from the eigenvectors of the symmetric conjugate
    D^{-1/2} K D^{-1/2}; (c) is only defined for a symmetric K and is NaN when ``spectral`` is False.
    """
    edge = as_float(dirichlet_form(kernel, f))
    degree = xp.sum(kernel, axis=-1)
    mass = xp.sum(degree)
    p_op = markov_operator(kernel)
    quadratic = as_float(mass * xp.sum(pi * f * (f - p_op @ f)))
    if not spectral:
        return edge, quadratic, float("nan")
    root = xp.sqrt(degree)
    mu, u = xp.linalg.eigh(kernel / (root[:, None] * root[None, :]))
    phi = u / root[:, None] * xp.sqrt(mass)  # π-orthonormal eigenfunctions of P
    c = xp.sum((pi * f)[:, None] * phi, axis=0)
    return edge, quadratic, as_float(mass * xp.sum((1.0 - mu) * c * c))


def _swiss_roll_data(rng, n: int):
    """Points on a noisy Swiss roll, the median-heuristic β and a rough test function f."""
    points = _swiss_roll(rng, n)
    d2 = squared_distances(points)
    beta = 1.0 / float(np.median(d2[np.triu_indices(n, 1)]))  # median heuristic (DMAE convention)
    f = np.sin(3 * points[:, 0]) + 0.1 * rng.standard_normal(n)
    return points, beta, f


def _tilt(points: np.ndarray) -> np.ndarray:
    """Destination weights q_j = e^{2x_j}, x the first coordinate (a key bias, as in an attention head)."""
    return np.exp(2 * points[:, 0])


def _verify(rng, scale, backend) -> Verification:
    """Compare three independent routes to ℰ(f,f) on a sampled Swiss roll, for two symmetric kernels.

    (a) the edge sum ½Σ K_ij (f_i − f_j)² (``dirichlet_form``),
    (b) the quadratic form (1ᵀp)⟨f, (I − P)f⟩_π, π from ``reversible_stationary_law``,
    (c) the spectral sum (1ᵀp) Σ_k λ_k c_k² from the symmetric conjugate D^{-1/2} K D^{-1/2}.
    Kernels: the Gauss kernel (median-heuristic β) and the symmetrised key-biased Gauss kernel
    ½(K Q + Q K), Q = diag(q), q_j = e^{2x_j}, on the first 300 points — symmetric with positive degrees but
    not a Gauss kernel, the generalised statement.  Tolerance 1e-10 relative: (b) and (c) lose a few digits to cancellation in
    f − Pf.
    """
    n = by_scale(scale, 300, 3000)
    points_np, beta, f_np = _swiss_roll_data(rng, n)
    points = to_backend(points_np, backend)
    f = to_backend(f_np, backend)
    xp = namespace(points)
    gauss = gauss_kernel(points, beta)
    m = min(n, 300)  # the second kernel on the first 300 points: it tests the algebra, which n does not change
    tilted = gauss[:m, :m] * to_backend(_tilt(points_np[:m]), backend)[None, :]
    residual = 0.0
    for kernel, g in ((gauss, f), (0.5 * (tilted + tilted.T), f[:m])):
        edge, quadratic, spectral = _routes(kernel, g, reversible_stationary_law(kernel), xp)
        residual = max(residual, abs(quadratic - edge) / abs(edge), abs(spectral - edge) / abs(edge))
    return Verification.from_residual(residual, 1e-10, n=n, beta=round(beta, 6))


def outside_asymmetric(rng) -> Verification:
    """The statement on a key-biased Gauss kernel K_ij = e^{−β‖x_i − x_j‖²} q_j, q_j = e^{2x_j}: not symmetric.

    Same Swiss roll (n = 300), f and median-heuristic β as ``verify``; π = p/1ᵀp, P = D⁻¹K as in the
    statement.  The spectral route needs a symmetric conjugate and is not defined, so the residual is the
    first equality's part of the same criterion, |(1ᵀp)⟨f, Lf⟩_π − ½Σ K_ij(f_i − f_j)²| / |edge|, against
    the same 1e-10: the two differ by ½Σ_ij K_ij(f_i² − f_j²), row sums against column sums.  Measured
    ≈ 0.1 (10⁹ × the tolerance) in 0.02 s.
    """
    n = 300
    points, beta, f = _swiss_roll_data(rng, n)
    kernel = gauss_kernel(points, beta) * _tilt(points)[None, :]
    degree = kernel.sum(axis=1)
    edge, quadratic, _ = _routes(kernel, f, degree / degree.sum(), np, spectral=False)
    return Verification.from_residual(abs(quadratic - edge) / abs(edge), 1e-10, n=n, beta=round(beta, 6))


IDENTITIES = [
    Identity(
        name="markov.dirichlet_form.gauss",
        area="markov",
        statement=r"\mathcal E(f,f) = (\mathbf 1^\top\mathsf p)\,\langle f, \mathsf L f\rangle_\pi"
        r" = (\mathbf 1^\top\mathsf p)\sum_k \lambda_k c_k^2"
        r" = \tfrac12\sum_{ij}\mathsf K_{ij}(f_i - f_j)^2"
        r"\quad (\mathsf K = \mathsf K^\top,\ \mathsf p = \mathsf K\mathbf 1 > 0;"
        r"\ \text{e.g. } \mathsf K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2})",
        source="Attention Geometry §2 [SEED]; edge form [DERIVED] (book/reference.md §A.2)",
        derive=_derive,
        verify=_verify,
        hypotheses=(
            Hypothesis(
                "K symmetric, K_ij = K_ji (any symmetric kernel, not only the Gauss kernel e^{−β‖x_i − x_j‖²})",
                "key-biased Gauss kernel K_ij = e^{−β‖x_i − x_j‖²} q_j, q_j = e^{2x_j}, on a sampled Swiss roll",
                outside_asymmetric,
            ),
            Hypothesis(
                "positive degrees p = K1 > 0",
                reason="p > 0 is what makes π = p/1ᵀp a law, ⟨·,·⟩_π an inner product and D^{±1/2} real: "
                "with a zero or negative degree the spectral side is undefined rather than different (the "
                "edge and quadratic sides still agree by algebra), so no case can show it false",
            ),
        ),
    ),
]
