r"""Spectra of Markov operators on samples and graphs, against their continuum and closed forms.

Source: Attention Geometry §2–4 [SEED]: :math:`4\hbar\beta(I - \mathsf P_\beta) \to \mathcal C`, and
with Coifman–Lafon normalisation :math:`\mathcal C f = -\hbar[\Delta f + 2(1-\alpha)\langle\nabla\log q,
\nabla f\rangle]` [RECON] (book/reference.md §A.2, §A.4).  Kernel scale throughout:
:math:`\mathsf K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}` (ħ = 1).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import scipy.linalg
import sympy as sp

from derivations._common import by_scale
from workbench.catalogue import Identity, Step, Verification, claim, fit_rate
from workbench.markov import Circle, MarkovOperator, Sphere, gauss_kernel


def _derive_scale() -> list[Step]:
    s, beta = sp.symbols("s beta", positive=True)
    x = sp.Symbol("x", real=True)
    f = sp.Function("f")
    weight = sp.exp(-beta * s**2)
    mass = sp.integrate(weight, (s, -sp.oo, sp.oo))
    second = sp.integrate(s**2 * weight, (s, -sp.oo, sp.oo)) / mass
    fourth = sp.integrate(s**4 * weight, (s, -sp.oo, sp.oo)) / mass
    taylor = sum(f(x).diff(x, k) * s**k / sp.factorial(k) for k in range(1, 5))
    averaged = sum(
        sp.integrate(sp.expand(taylor).coeff(s, k) * s**k * weight, (s, -sp.oo, sp.oo)) / mass for k in range(1, 5)
    )
    return [
        Step(
            "Gauss kernel K(x, x+s) = exp(−βs²) in one tangent direction (ħ = 1)",
            weight,
            statement=r"(\mathsf P_\beta f)(x) = \frac{\int f(x+s)\,e^{-\beta s^2}\,ds}{\int e^{-\beta s^2}\,ds},\quad \hbar = 1",
            because="in the continuum limit the Markov operator of the Gauss kernel averages f against a normalised Gaussian in the tangent direction",
        ),
        claim(
            "second moment ∫s²K / ∫K = 1/(2β)",
            sp.simplify(second),
            1 / (2 * beta),
            statement=r"\frac{\int s^2e^{-\beta s^2}ds}{\int e^{-\beta s^2}ds} = \frac{1}{2\beta}",
            because="the weight is a centred normal density of variance 1/(2β)",
        ),
        claim(
            "fourth moment ∫s⁴K / ∫K = 3/(4β²)",
            sp.simplify(fourth),
            sp.Rational(3, 4) / beta**2,
            statement=r"\frac{\int s^4e^{-\beta s^2}ds}{\int e^{-\beta s^2}ds} = 3\Big(\frac{1}{2\beta}\Big)^2 = \frac{3}{4\beta^2}",
            because="the fourth moment of a normal law is 3σ⁴",
        ),
        claim(
            "(P_β f − f)(x) = f''/(4β) + f''''/(32β²) + O(β⁻³): odd moments vanish",
            sp.simplify(averaged),
            f(x).diff(x, 2) / (4 * beta) + f(x).diff(x, 4) / (32 * beta**2),
            statement=r"(\mathsf P_\beta f - f)(x) = \sum_{k\ge1}\frac{f^{(k)}(x)}{k!}\,\mathbb E[s^k] = \frac{f''(x)}{4\beta} + \frac{f''''(x)}{32\beta^2} + O(\beta^{-3})",
            because="Taylor-expand f(x + s) and average term by term: odd moments vanish, E[s²]/2! = 1/(4β), E[s⁴]/4! = 1/(32β²)",
        ),
        claim(
            "so 4β(I − P_β) → −Δ, and on the unit circle 4β(1 − μ_k) = k² − k⁴/(8β) + …",
            sp.simplify(-4 * beta * averaged.subs(f(x).diff(x, 4), f(x)).subs(f(x).diff(x, 2), -f(x)) / f(x)),
            1 - 1 / (8 * beta),
            statement=r"4\beta(\mathsf I - \mathsf P_\beta) = -\Delta - \frac{\Delta^2}{8\beta} + \dots,\quad f = e^{ik\theta}:\ 4\beta(1 - \mu_k) = k^2 - \frac{k^4}{8\beta} + O(\beta^{-2})",
            because="multiply the expansion by −4β; on the unit circle the Fourier mode has f'' = −k²f and f'''' = k⁴f (checked at k = 1)",
        ),
    ]


def _circle_grid(n: int) -> np.ndarray:
    theta = 2 * np.pi * np.arange(n) / n
    return np.column_stack([np.cos(theta), np.sin(theta)])


def _verify_circle_bandwidth(rng, scale, backend) -> Verification:
    """Oracle: −Δ on the unit circle has eigenvalues k² (k = 1, 2, each twice).

    n equally spaced points make the kernel sums spectrally accurate quadratures, so only the
    bandwidth bias is left: 4β(1 − μ_k) − k² = −k⁴/(8β) + O(β⁻²), a slope of 1 in 1/β (tolerance
    0.05: the β⁻² term bends the fit by < 0.01 over β = 25…400).
    """
    n = by_scale(scale, 800, 3000)
    betas = np.array([25.0, 50.0, 100.0, 200.0, 400.0])
    exact = Circle().spectrum(5)[1:]
    errors = []
    for beta in betas:
        mu = MarkovOperator.from_points(_circle_grid(n), beta, alpha=1.0).spectrum(5).values
        errors.append(float(np.max(np.abs(4 * beta * (1 - mu[1:]) - exact) / exact)))
    return Verification.from_rate(1 / betas, errors, expected=1.0, tolerance=0.05, n=n, beta_max=400)


def _cluster_errors(manifold, beta, multiplicities, sizes, repeats, rng):
    """RMS error of each eigenvalue cluster's mean and RMS spread within clusters, per sample size."""
    count = sum(multiplicities)
    exact = manifold.kernel_spectrum(beta, count + 1)[1:]
    mean_errors, spreads = [], []
    for n in sizes:
        squared_mean, variance = [], []
        for _ in range(repeats):
            kernel = gauss_kernel(manifold.sample(n, seed=rng), beta)
            np.fill_diagonal(kernel, 0.0)  # the self-weight adds an O(1/n) bias unrelated to sampling
            mu = MarkovOperator.from_kernel(kernel, alpha=1.0).spectrum(count + 1).values[1:]
            start = 0
            for m in multiplicities:
                cluster = mu[start : start + m]
                squared_mean.append((cluster.mean() - exact[start]) ** 2)
                variance.append(cluster.var())
                start += m
        mean_errors.append(math.sqrt(float(np.mean(squared_mean))))
        spreads.append(math.sqrt(float(np.mean(variance))))
    return mean_errors, spreads


def _verify_sampled(manifold, beta, multiplicities):
    def verify(rng, scale, backend) -> Verification:
        """Oracle: the exact eigenvalues of the continuum operator P_β (Funk–Hecke, Bessel ratios).

        On a homogeneous space the addition theorem Σ_m φ_m(x)² = const kills the linear (n^{-1/2})
        term of each cluster's mean eigenvalue, so the mean converges like n^{-1}, while the cluster
        splits at the Monte-Carlo rate n^{-1/2}.  Both slopes are fitted: the spread against −½
        (tolerance 0.15) and the mean against −1 (tolerance 0.3: O(n^{-3/2}) terms at these n).  Measured
        over seeds 1–7 with 24 repetitions: spread −0.51…−0.59, mean −1.03…−1.15 (circle and sphere).
        """
        sizes = by_scale(scale, [50, 100, 200, 400, 800], [100, 200, 400, 800, 1600, 3200])
        repeats = by_scale(scale, 24, 24)
        mean_errors, spreads = _cluster_errors(manifold, beta, multiplicities, sizes, repeats, rng)
        spread_rate, mean_rate = fit_rate(sizes, spreads), fit_rate(sizes, mean_errors)
        residual = abs(spread_rate + 0.5)
        passed = residual <= 0.15 and abs(mean_rate + 1.0) <= 0.3
        return Verification(
            residual, 0.15, passed, {"repeats": repeats, "beta": beta, "mean_rate": round(mean_rate, 3)},
            spread_rate, -0.5,
        )  # fmt: skip

    return verify


def _verify_sphere_kernel(rng, scale, backend) -> Verification:
    """Oracle: −Δ on S^d has eigenvalues l(l + d − 1); the exact kernel eigenvalues must approach them at rate 1/β.

    Checked for d = 1, 2, 3 and l = 1, 2 on the Funk–Hecke formula μ_l = I_{l+(d−1)/2}(2β)/I_{(d−1)/2}(2β)
    (tolerance 0.02 on the slope: the β⁻² term over β = 10²…10⁴).
    """
    betas = np.geomspace(1e2, 1e4, 6)
    slopes = []
    for d in (1, 2, 3):
        sphere = Sphere(dim=d)
        count = int(np.sum(sphere.spectrum(60) <= 2 * (d + 1)))  # l = 0, 1, 2 with multiplicities
        laplace = sphere.spectrum(count)
        errors = []
        for beta in betas:
            mu = sphere.kernel_spectrum(beta, count)
            errors.append(float(np.max(np.abs(4 * beta * (1 - mu[1:]) - laplace[1:]) / laplace[1:])))
        slopes.append(fit_rate(1 / betas, errors))
    worst = max(slopes, key=lambda r: abs(r - 1.0))
    return Verification(abs(worst - 1.0), 0.02, abs(worst - 1.0) <= 0.02, {"dimensions": "1, 2, 3"}, worst, 1.0)


# ---- density bias: α = 1 removes it, α = 0 does not ------------------------------------------

DENSITY_AMPLITUDE = 0.5


def _quantile_angles(n: int, amplitude: float) -> np.ndarray:
    """Angles θ_i = F⁻¹((i + ½)/n) for the density (1 + a cos θ)/2π (Newton on θ + a sin θ = 2πu)."""
    u = 2 * np.pi * (np.arange(n) + 0.5) / n
    theta = u.copy()
    for _ in range(60):
        theta -= (theta + amplitude * np.sin(theta) - u) / (1 + amplitude * np.cos(theta))
    return theta


def drift_laplacian_spectrum(amplitude: float, alpha: float, count: int, modes: int = 32) -> np.ndarray:
    r"""Eigenvalues of :math:`-[f'' + 2(1-\alpha)(\log q)'f']` on the unit circle, :math:`q \propto 1 + a\cos\theta`.

    The operator is :math:`-q^{-2(1-\alpha)}(q^{2(1-\alpha)}f')'`, self-adjoint in
    :math:`L^2(q^{2(1-\alpha)}d\theta)`: a Fourier–Galerkin generalised eigenproblem
    :math:`\int w f'g' = \lambda\int w fg` (trapezoid quadrature, exact for these trigonometric products).
    """
    grid = 8 * modes
    theta = 2 * np.pi * np.arange(grid) / grid
    weight = (1 + amplitude * np.cos(theta)) ** (2 * (1 - alpha))
    k = np.arange(1, modes + 1)
    basis = np.column_stack([np.ones(grid), np.cos(np.outer(theta, k)), np.sin(np.outer(theta, k))])
    slope = np.column_stack([np.zeros(grid), -k * np.sin(np.outer(theta, k)), k * np.cos(np.outer(theta, k))])
    stiffness = (slope * weight[:, None]).T @ slope / grid
    mass = (basis * weight[:, None]).T @ basis / grid
    return scipy.linalg.eigh(stiffness, mass, eigvals_only=True)[:count]


def _verify_density_bias(rng, scale, backend) -> Verification:
    """Oracles: α = 1 → k² (Laplace–Beltrami); α = 0 → the drift operator's spectrum (Fourier–Galerkin).

    Quantile points of the density 1 + ½cos θ make the kernel sums spectrally accurate, so each
    error falls like 1/β (tolerance 0.05 on each slope).  The check also requires the α = 0
    spectrum to stay away from k² (the density bias α = 1 removes): gap > 10× the last α = 1 error.
    """
    n = by_scale(scale, 1000, 3000)
    betas = np.array([25.0, 50.0, 100.0, 200.0])
    points = np.column_stack([np.cos(t := _quantile_angles(n, DENSITY_AMPLITUDE)), np.sin(t)])
    slopes, gap, last = [], 0.0, 0.0
    for alpha in (1.0, 0.0):
        limit = drift_laplacian_spectrum(DENSITY_AMPLITUDE, alpha, 5)[1:]
        errors, gaps = [], []
        for beta in betas:
            mu = MarkovOperator.from_points(points, beta, alpha=alpha).spectrum(5).values
            rescaled = 4 * beta * (1 - mu[1:])
            errors.append(float(np.max(np.abs(rescaled - limit) / limit)))
            gaps.append(float(np.max(np.abs(rescaled - Circle().spectrum(5)[1:]) / Circle().spectrum(5)[1:])))
        slopes.append(fit_rate(1 / betas, errors))
        if alpha == 1.0:
            last = errors[-1]
        else:
            gap = gaps[-1]
    residual = max(abs(s - 1.0) for s in slopes)
    passed = residual <= 0.05 and gap > 10 * last
    return Verification(
        residual, 0.05, passed, {"n": n, "alpha0_gap_from_k2": round(gap, 3), "alpha1_error": f"{last:.1e}"},
        slopes[0], 1.0,
    )  # fmt: skip


# ---- graphs -----------------------------------------------------------------------------------


def _graph_cases(scale):
    """(graph, unnormalised Laplacian spectrum, random-walk spectrum) as closed forms in n."""
    m = by_scale(scale, 1, 3)
    d = 3 + m
    return [
        (
            nx.path_graph(9 * m),
            lambda n: [2 - 2 * math.cos(math.pi * k / n) for k in range(n)],
            lambda n: [1 - math.cos(math.pi * k / (n - 1)) for k in range(n)],
        ),
        (
            nx.cycle_graph(12 * m),
            lambda n: [2 - 2 * math.cos(2 * math.pi * k / n) for k in range(n)],
            lambda n: [1 - math.cos(2 * math.pi * k / n) for k in range(n)],
        ),
        (
            nx.hypercube_graph(d),
            lambda n: [2 * bin(v).count("1") for v in range(n)],
            lambda n: [2 * bin(v).count("1") / d for v in range(n)],
        ),
        (nx.complete_graph(7 * m), lambda n: [0] + [n] * (n - 1), lambda n: [0] + [n / (n - 1)] * (n - 1)),
    ]


def _verify_graphs(rng, scale, backend) -> Verification:
    """Oracles: closed-form spectra of the unnormalised Laplacian D − A and of the random walk I − D⁻¹A.

    Path P_n: 2 − 2cos(πk/n) and 1 − cos(πk/(n − 1)); cycle C_n: 2 − 2cos(2πk/n) and half of it;
    hypercube Q_d: 2j and 2j/d (j = Hamming weight); complete K_n: n and n/(n − 1), each besides 0.
    Tolerance 1e-12: eigh rounding on matrices of norm ≤ 2n.
    """
    worst = 0.0
    for graph, laplacian, walk in _graph_cases(scale):
        n = graph.number_of_nodes()
        unnormalised = np.linalg.eigvalsh(nx.laplacian_matrix(graph).toarray().astype(float))
        worst = max(worst, float(np.max(np.abs(unnormalised - np.sort(laplacian(n))))))
        walk_values = np.sort(1 - MarkovOperator.from_networkx(graph).spectrum(n).values)
        worst = max(worst, float(np.max(np.abs(walk_values - np.sort(walk(n))))))
    return Verification.from_residual(worst, 1e-12, graphs=4)


def _derive_graphs() -> list[Step]:
    n, k, j = sp.symbols("n k j", positive=True, integer=True)
    theta = 2 * sp.pi * k / n
    mode = sp.exp(sp.I * theta * j)
    walk = (mode.subs(j, j + 1) + mode.subs(j, j - 1)) / 2
    return [
        Step(
            "cycle C_n: the walk P averages the two neighbours; Fourier mode e^{iθj}, θ = 2πk/n",
            mode,
            statement=r"(\mathsf Pf)_j = \tfrac12(f_{j+1} + f_{j-1})\ \text{on } C_n,\quad f_j = e^{i\theta j},\ \theta = 2\pi k/n",
            because="the simple random walk on the n-cycle; its eigenvectors are the discrete Fourier modes",
        ),
        claim(
            "P e^{iθj} = cos θ · e^{iθj}",
            sp.simplify((walk / mode).rewrite(sp.cos)),
            sp.cos(theta),
            statement=r"\tfrac12\big(e^{i\theta(j+1)} + e^{i\theta(j-1)}\big) = \cos\theta\;e^{i\theta j},\quad \mu_k = \cos\frac{2\pi k}{n}",
            because="factor out e^{iθj}: ½(e^{iθ} + e^{−iθ}) = cos θ; n, k and j are symbolic",
            general=True,
        ),
        claim(
            "unnormalised Laplacian (D − A) on C_n: 2 − 2cos θ = 4 sin²(θ/2)",
            sp.expand_trig(2 - 2 * sp.cos(theta)),
            sp.expand_trig(4 * sp.sin(theta / 2) ** 2),
            statement=r"\lambda_k(\mathsf D - \mathsf A) = 2 - 2\cos\frac{2\pi k}{n} = 4\sin^2\frac{\pi k}{n}",
            because="D − A = 2(I − P) on the 2-regular cycle; the half-angle formula; n and k symbolic",
            general=True,
        ),
    ]


IDENTITIES = [
    Identity(
        name="markov.spectrum.circle.bandwidth",
        area="markov",
        statement=r"4\beta\,(1 - \mu_k(\mathsf P_\beta^{(\alpha=1)})) = k^2 + O(\beta^{-1})\ \text{on } S^1",
        source="Attention Geometry §2, §4 [SEED limit 4ħβ(I − P_β) → 𝒞]; book/reference.md §A.4",
        derive=_derive_scale,
        verify=_verify_circle_bandwidth,
        asymptotic=True,
        backends=("numpy",),
    ),
    Identity(
        name="markov.spectrum.circle.samples",
        area="markov",
        statement=r"\hat\mu_{k,\pm} = I_k(2\beta)/I_0(2\beta) + O(n^{-1/2})\ \text{(spread)},"
        r"\ \tfrac12(\hat\mu_{k,+} + \hat\mu_{k,-}) = I_k/I_0 + O(n^{-1})\ \text{on uniform samples of } S^1",
        source="Funk–Hecke for the Gauss kernel on S¹ [DERIVED]; Monte-Carlo rate (Koltchinskii–Giné 2000)",
        derive=_derive_scale,
        verify=_verify_sampled(Circle(), 3.0, (2, 2)),
        asymptotic=True,
        backends=("numpy",),
    ),
    Identity(
        name="markov.spectrum.sphere.samples",
        area="markov",
        statement=r"\text{clusters of } 2l+1\ \hat\mu\text{'s around } \mu_l = I_{l+1/2}(2\beta)/I_{1/2}(2\beta):"
        r"\ \text{spread } O(n^{-1/2}),\ \text{mean } \mu_l + O(n^{-1})\ \text{on uniform samples of } S^2",
        source="Funk–Hecke for the Gauss kernel on S² (Minh–Niyogi–Yao 2006) [DERIVED]",
        derive=_derive_scale,
        verify=_verify_sampled(Sphere(dim=2), 3.0, (3, 5)),
        asymptotic=True,
        backends=("numpy",),
    ),
    Identity(
        name="markov.spectrum.sphere.bandwidth",
        area="markov",
        statement=r"4\beta\,(1 - \mu_l) = l(l+d-1) + O(\beta^{-1})\ \text{on } S^d,\ d = 1, 2, 3",
        source="Attention Geometry §4 [SEED limit]; Funk–Hecke [DERIVED]",
        derive=_derive_scale,
        verify=_verify_sphere_kernel,
        asymptotic=True,
        backends=("numpy",),
    ),
    Identity(
        name="markov.spectrum.density_bias",
        area="markov",
        statement=r"4\beta(I - \mathsf P^{(\alpha)}_\beta) \to -[\Delta + 2(1-\alpha)\langle\nabla\log q,\nabla\,\cdot\rangle]"
        r"\ \text{on } S^1,\ q \propto 1 + \tfrac12\cos\theta",
        source="Attention Geometry §4 [RECON, Coifman–Lafon]; book/reference.md §A.4",
        derive=_derive_scale,
        verify=_verify_density_bias,
        asymptotic=True,
        backends=("numpy",),
    ),
    Identity(
        name="markov.spectrum.graphs",
        area="markov",
        statement=r"\operatorname{spec}(D - A),\ \operatorname{spec}(I - D^{-1}A)\ \text{of paths, cycles, hypercubes, "
        r"complete graphs in closed form}",
        source="Chung, Spectral Graph Theory (1997) §1.2 [closed forms]",
        derive=_derive_graphs,
        verify=_verify_graphs,
        backends=("numpy",),
    ),
]
