r"""Kernel-moment expansions: the generator limit of an α-normalised Gauss kernel and the Cauchy–Green metric.

The kernel throughout is :math:`K_\beta(x,y) = \exp(-\beta\,(y-x)^\top G\,(y-x))` with a constant metric
:math:`G` (symmetric positive definite, :math:`d\times d`), sampled with density :math:`q` (with respect to
:math:`d^dx`).  Its α-normalisation (Coifman–Lafon) is

.. math::

    K^{(\alpha)}_\beta(x,y) = \frac{K_\beta(x,y)}{q_\beta(x)^\alpha\,q_\beta(y)^\alpha}, \qquad
    q_\beta(x) = \int K_\beta(x,y)\,q(y)\,d^dy, \qquad
    (\mathcal P_\beta f)(x) = \frac{\int K^{(\alpha)}_\beta(x,y) f(y) q(y)\,d^dy}
                                   {\int K^{(\alpha)}_\beta(x,y) q(y)\,d^dy}.

Expanding :math:`f` and :math:`q` around :math:`x` and integrating against the Gaussian (its moments are
those of the covariance :math:`G^{-1}/(2\beta)`) gives

.. math::

    (\mathcal P_\beta f)(x) - f(x)
    = \frac{1}{4\beta}\Bigl[\Delta_G f + 2(1-\alpha)\langle\nabla\log q,\nabla f\rangle_G\Bigr] + O(\beta^{-2}),
    \qquad \Delta_G = G^{ab}\partial_a\partial_b,

so the paper's scaling gives :math:`\lim_{\beta\to\infty} 4\hbar\beta(I - \mathcal P_\beta)f
= -\hbar[\Delta_G f + 2(1-\alpha)\langle\nabla\log q,\nabla f\rangle_G]` for any constant :math:`\hbar`
(the factor 4 in :math:`4\hbar\beta` cancels the :math:`1/(4\beta)` above, leaving :math:`\hbar` in front).
The second moment :math:`2\hbar\beta\int\mathcal P_\beta(x,y)(y-x)^a(y-x)^b\,dy \to \hbar G^{ab}` is the
Cauchy–Green (co-)metric, estimated on samples by :func:`cauchy_green_estimator`.

Source: Attention Geometry §3 (Cauchy–Green) and §4 (generator limit :math:`4\hbar\beta(I-\mathcal P_\beta)`)
[SEED fragments]; the α-drift is [RECON, Coifman & Lafon 2006] (book/reference.md §A.3, §A.4).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import sympy as sp

from workbench.validation import (
    as_array,
    as_scalar,
    check_finite_output,
    check_in_range,
    check_integer,
    check_row_stochastic,
    is_sparse,
)

__all__ = ["KernelExpansion", "cauchy_green_estimator", "kernel_generator_expansion"]


class KernelExpansion(NamedTuple):
    r"""The result of :func:`kernel_generator_expansion`.

    Attributes
    ----------
    steps : list of workbench.catalogue.Step
        The derivation, every claimed equality decided by sympy.
    coefficients : list of sympy.Expr
        :math:`c_1, \dots, c_K` with :math:`(\mathcal P_\beta f)(x) - f(x) = \sum_k c_k\beta^{-k} + O(\beta^{-K-1})`.
    generator : sympy.Expr
        :math:`\lim 4\beta(I - \mathcal P_\beta)f = -4c_1` (multiply by ħ for the paper's :math:`4\hbar\beta`).
    symbols : dict
        ``x`` (coordinates), ``f``, ``q`` (applied functions), ``G`` (the metric matrix), ``alpha``, ``beta``.
    """

    steps: list
    coefficients: list
    generator: Any
    symbols: dict


def _metric(d: int, diagonal: bool) -> sp.Matrix:
    """A symbolic SPD metric: ``g`` in d = 1, else diagonal or general symmetric entries ``g_ab``."""
    if d == 1:
        return sp.Matrix([[sp.Symbol("g", positive=True)]])
    if diagonal:
        return sp.diag(*[sp.Symbol(f"g_{a}{a}", positive=True) for a in range(d)])
    return sp.Matrix(d, d, lambda a, b: sp.Symbol(f"g_{min(a, b)}{max(a, b)}", real=True))


def _heat_moment_operator(h, y, cometric, eps, order):
    r"""The Gaussian average :math:`\sum_{m\le K}\varepsilon^m\Delta_G^m h/(m!\,4^m)` (ε = 1/β), before setting y = x.

    This is :math:`Z^{-1}\int e^{-\beta u^\top G u} h(x+u)\,du` with the Taylor series of :math:`h`
    integrated term by term: by Isserlis' theorem the moments of the covariance :math:`G^{-1}/(2\beta)`
    assemble into powers of :math:`\Delta_G/(4\beta)` (checked against explicit moments in the steps).
    """
    parts = _series_coefficients(h, eps, order)
    out = sp.S(0)
    for j, term in enumerate(parts):
        # only Δ^m of the ε^j part with j + m <= order survives the truncation
        for m in range(order + 1 - j):
            out += eps ** (m + j) * term / (sp.factorial(m) * 4**m)
            if m < order - j:
                term = _laplacian(term, y, cometric)
    return out


def _laplacian(h, y, cometric):
    """Δ_G h = G^{ab} ∂_a ∂_b h for a constant co-metric."""
    d = len(y)
    return sp.Add(*[cometric[a, b] * sp.diff(h, y[a], y[b]) for a in range(d) for b in range(d) if cometric[a, b] != 0])


def _series_coefficients(expr, eps, order):
    """Coefficients of ε⁰ … ε^order of an expression polynomial in ε (after expansion)."""
    poly = sp.expand(expr)
    return [poly.coeff(eps, k) for k in range(order + 1)]


def _ratio_series(num, den, order):
    """Coefficients of (Σ n_k ε^k)/(Σ d_k ε^k) up to ε^order (long division of power series)."""
    out = []
    for k in range(order + 1):
        acc = num[k] - sum(out[j] * den[k - j] for j in range(k))
        out.append(sp.cancel(acc / den[0]))
    return out


def _taylor_moment_average(h, y, x, cometric, beta, degree):
    r"""Z⁻¹∫ e^{-β uᵀGu} T_degree[h](x+u) du from the moment generating function :math:`e^{t^\top G^{-1}t/(4\beta)}`.

    The mixed moment :math:`E[u^k] = \partial_t^k e^{t^\top G^{-1} t/(4\beta)}|_{t=0}`; the Taylor term
    :math:`\partial^k h(x)\,u^k/k!` integrates to :math:`\partial^k h(x)\,E[u^k]/k!`.
    """
    d = len(y)
    t = sp.symbols(f"t0:{d}")
    mgf = sp.exp(sum(t[a] * cometric[a, b] * t[b] for a in range(d) for b in range(d)) / (4 * beta))
    total = sp.S(0)
    for multi in _multi_indices(d, degree):
        moment = mgf
        for a, k in enumerate(multi):
            moment = sp.diff(moment, t[a], k)
        moment = moment.subs({ta: 0 for ta in t})
        if moment == 0:
            continue
        deriv = h
        for a, k in enumerate(multi):
            deriv = sp.diff(deriv, y[a], k)
        denom = sp.prod([sp.factorial(k) for k in multi])
        total += moment * deriv / denom
    return sp.expand(total.subs(dict(zip(y, x, strict=True))))


def _multi_indices(d, degree):
    if d == 1:
        return [(k,) for k in range(degree + 1)]
    return [(k, *rest) for k in range(degree + 1) for rest in _multi_indices(d - 1, degree - k)]


def kernel_generator_expansion(d=1, order=2, alpha=None, *, diagonal_metric=False, varying_metric=False):
    r"""Large-β expansion of the α-normalised Gauss-kernel Markov operator, derived with sympy.

    For :math:`K_\beta(x,y) = \exp(-\beta\,(y-x)^\top G\,(y-x))`, sampling density :math:`q` and
    :math:`\mathcal P_\beta` the row normalisation of :math:`K/(q_\beta(x)^\alpha q_\beta(y)^\alpha)`,

    .. math::

        (\mathcal P_\beta f)(x) - f(x) = \sum_{k=1}^{K} c_k\,\beta^{-k} + O(\beta^{-K-1}), \qquad
        c_1 = \tfrac14\bigl[\Delta_G f + 2(1-\alpha)\langle\nabla\log q,\nabla f\rangle_G\bigr],

    with :math:`\Delta_G f = G^{ab}\partial_a\partial_b f` and :math:`\langle u, v\rangle_G = G^{ab}u_a v_b`
    (:math:`G^{ab} = (G^{-1})_{ab}`).  Hence :math:`4\hbar\beta(I - \mathcal P_\beta)f \to -4\hbar c_1`.

    The derivation: (i) the Gaussian's moment generating function is :math:`e^{t^\top G^{-1}t/(4\beta)}`
    (completing the square); (ii) integrating a Taylor polynomial against it gives
    :math:`M_\beta h = \sum_m \Delta_G^m h/(m!\,(4\beta)^m)`; (iii) :math:`q_\beta \propto M_\beta q`, the
    common factor :math:`q_\beta(x)^{-\alpha}` cancels, and
    :math:`\mathcal P_\beta f = M_\beta[w f]/M_\beta[w]` with :math:`w = q\,(M_\beta q)^{-\alpha}`, expanded in
    :math:`1/\beta` by the binomial series of :math:`(1 + O(\beta^{-1}))^{-\alpha}` and power-series division.

    Parameters
    ----------
    d : int
        Dimension, 1 to 3 (sympy's cost grows quickly with ``d`` and ``order``).
    order : int
        Highest power :math:`K \ge 1` of :math:`1/\beta` kept (the first correction is ``order=2``).
    alpha : sympy expression or float, optional
        The normalisation exponent; a symbol ``alpha`` by default (0: graph Laplacian, ½: Fokker–Planck,
        1: Laplace–Beltrami).
    diagonal_metric : bool
        Use a diagonal symbolic :math:`G` (cheaper) instead of a general symmetric one (``d >= 2``).
    varying_metric : bool
        ``d = 1`` only: a position-dependent metric :math:`G(x)` (an applied function ``G(x)``), the kernel
        :math:`\exp(-\beta(\Phi(y) - \Phi(x))^2)` with :math:`\Phi' = \sqrt G` (the feature kernel
        :math:`\exp(-\beta\lVert F(y) - F(x)\rVert^2)` of a curve with :math:`\lvert F'\rvert^2 = G`, up to its
        chordal :math:`O(\lvert y - x\rvert^4)`, an :math:`O(\beta^{-2})` change of :math:`\mathcal P_\beta f - f`).
        The coefficients are then those of the arc-length coordinate :math:`s = \Phi(y) - \Phi(x)`, in which
        the kernel has the constant metric 1 and the density is :math:`\rho_G = q/\sqrt G`; so
        :math:`c_1 = \tfrac14[\Delta_G f + 2(1-\alpha)\langle\nabla\log\rho_G,\nabla f\rangle_G]` with
        :math:`\Delta_G` the Laplace–Beltrami operator (:func:`_varying_metric_expansion`).

    Returns
    -------
    KernelExpansion
        ``steps`` (claims decided by sympy), ``coefficients`` :math:`[c_1, \dots, c_K]`, ``generator``
        :math:`-4c_1`, and the ``symbols`` used.

    References
    ----------
    Coifman & Lafon (2006), Applied Comput. Harmon. Anal. 21, Theorem 2 and §2.5; Attention Geometry §4,
    :math:`4\hbar\beta(I-\mathcal P_\beta)` [SEED fragment], α-drift [RECON] (book/reference.md §A.4).

    Examples
    --------
    >>> import sympy as sp
    >>> exp = kernel_generator_expansion(d=1, order=1, alpha=1)
    >>> all(step.holds is not False for step in exp.steps)
    True
    >>> x, f, g = exp.symbols["x"][0], exp.symbols["f"], exp.symbols["G"][0, 0]
    >>> sp.simplify(exp.coefficients[0] - f.diff(x, 2) / (4 * g))   # α = 1: no drift, Laplace–Beltrami
    0
    >>> curved = kernel_generator_expansion(d=1, order=1, alpha=1, varying_metric=True)
    >>> G = curved.symbols["G"][0, 0]   # G(x): α = 1 gives the Laplace–Beltrami operator G^{-1/2}(G^{-1/2}f')'
    >>> sp.simplify(curved.generator + (f.diff(x) / sp.sqrt(G)).diff(x) / sp.sqrt(G))
    0
    """
    from workbench.symbolic import Step, claim

    d = check_integer("d", d, 1, 3)
    order = check_integer("order", order, 1, 4)
    if varying_metric and d != 1:
        raise ValueError(f"varying_metric needs d = 1 (the arc-length reduction), got d={d}")
    if alpha is None:
        alpha = sp.Symbol("alpha", real=True)
    else:
        try:
            alpha = sp.nsimplify(sp.sympify(as_scalar(alpha)))  # a 0-d array is a number, not an NDimArray
        except (sp.SympifyError, TypeError, AttributeError) as exc:
            raise TypeError(f"alpha must be a number or a sympy expression, got {type(alpha).__name__}") from exc
        if alpha.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise ValueError(f"alpha must be a finite exponent (0, 1/2, 1 or a symbol), got {alpha}")
    if varying_metric:
        return _varying_metric_expansion(order, alpha)
    beta, eps = sp.Symbol("beta", positive=True), sp.Symbol("epsilon", positive=True)
    x = sp.symbols(f"x0:{d}", real=True) if d > 1 else (sp.Symbol("x", real=True),)
    y = sp.symbols(f"y0:{d}", real=True) if d > 1 else (sp.Symbol("y", real=True),)
    G = _metric(d, diagonal_metric)
    cometric = G.inv()
    f_fun, q_fun = sp.Function("f"), sp.Function("q")
    steps = [
        Step(
            "kernel K_β(x, y) = exp(−β (y−x)ᵀ G (y−x)), constant SPD metric G",
            G,
            statement=(
                r"K_\beta(x,y) = e^{-\beta(y-x)^\top G(y-x)},\ G = G^\top \succ 0,\quad"
                r" (\mathcal P_\beta f)(x) = \frac{\int K^{(\alpha)}_\beta(x,y)f(y)q(y)\,dy}"
                r"{\int K^{(\alpha)}_\beta(x,y)q(y)\,dy}"
            ),
            because="the α-normalised Gauss kernel with a constant metric G, averaged against the sampling density q",
        )
    ]

    # (i) moment generating function by completing the square: −β uᵀGu + tᵀu = −β(u−μ)ᵀG(u−μ) + tᵀG⁻¹t/(4β).
    u, t = sp.Matrix(sp.symbols(f"u0:{d}", real=True)), sp.Matrix(sp.symbols(f"t0:{d}", real=True))
    mu = cometric * t / (2 * beta)
    steps.append(
        claim(
            "completing the square: −β uᵀGu + tᵀu = −β (u−μ)ᵀG(u−μ) + tᵀG⁻¹t/(4β), μ = G⁻¹t/(2β), so the "
            "moment generating function is exp(tᵀG⁻¹t/(4β)) (covariance G⁻¹/(2β))",
            (-beta * u.T * G * u + t.T * u)[0],
            (-beta * (u - mu).T * G * (u - mu) + t.T * cometric * t / (4 * beta))[0],
            statement=(
                r"-\beta u^\top Gu + t^\top u = -\beta(u-\mu)^\top G(u-\mu) + \frac{t^\top G^{-1}t}{4\beta},\quad"
                r" \mu = \frac{G^{-1}t}{2\beta},\quad \mathbb E\,e^{t^\top u} = e^{t^\top G^{-1}t/(4\beta)}"
            ),
            because=(
                "expand (u − μ)ᵀG(u − μ) with Gμ = t/(2β); the Gaussian integral of the shifted square "
                "does not depend on t"
            ),
        )
    )
    if d == 1:
        g, u1 = G[0, 0], u[0]
        z = sp.integrate(sp.exp(-beta * g * u1**2), (u1, -sp.oo, sp.oo))
        steps.append(
            claim(
                "d = 1 check by direct integration: 2β ∫u² K du / ∫K du = 1/g",
                2 * beta * sp.integrate(u1**2 * sp.exp(-beta * g * u1**2), (u1, -sp.oo, sp.oo)) / z,
                1 / g,
                statement=r"2\beta\,\frac{\int u^2e^{-\beta gu^2}du}{\int e^{-\beta gu^2}du} = \frac1g",
                because="the normalised weight is a normal law of variance 1/(2βg)",
            )
        )
    steps.append(
        claim(
            "Cauchy–Green: 2β E[u uᵀ] = G⁻¹ = G^{ab}",
            2
            * beta
            * sp.Matrix(
                d,
                d,
                lambda a, b: sp.diff(sp.exp((t.T * cometric * t)[0] / (4 * beta)), t[a], t[b]).subs(
                    {ta: 0 for ta in t}
                ),
            ),
            cometric,
            statement=r"2\beta\,\mathbb E[uu^\top] = 2\beta\,\partial_t^2\,e^{t^\top G^{-1}t/(4\beta)}\big|_{t=0}"
            r" = G^{-1} = G^{ab}",
            because="the Hessian at 0 of the moment generating function is the covariance G⁻¹/(2β)",
        )
    )

    # (ii) Taylor polynomial against the moments = truncated heat series Σ Δ_G^m/(m!(4β)^m).
    probe = sp.Function("h")(*y)
    degree = 2 * order + 1
    steps.append(
        claim(
            f"Gaussian average of the degree-{degree} Taylor polynomial of h: "
            f"Z⁻¹∫K h(x+u) du = Σ_(m≤{order}) Δ_G^m h(x)/(m!(4β)^m)",
            _taylor_moment_average(probe, y, x, cometric, beta, degree),
            sp.expand(_heat_moment_operator(probe, y, cometric, 1 / beta, order).subs(dict(zip(y, x, strict=True)))),
            statement=(
                r"Z^{-1}\!\int K_\beta(x,x+u)\,h(x+u)\,du"
                r" = \sum_{m\le M}\frac{\Delta_G^m h(x)}{m!\,(4\beta)^m} + O(\beta^{-M-1}),"
                r"\quad \Delta_G = G^{ab}\partial_a\partial_b"
            ),
            because=(
                "Isserlis: the Gaussian moments of order 2m pair up into (G⁻¹/(2β))^m, which sum the Taylor terms "
                "into powers of Δ_G/(4β), the heat series"
            ),
        )
    )

    # (iii) α-normalisation: q_β(y) ∝ Q(y) = M q(y) = q(y)(1 + ε R(y)); the q_β(x)^{-α} factor cancels.
    qy, fy = q_fun(*y), f_fun(*y)
    big_q = _heat_moment_operator(qy, y, cometric, eps, order)
    ratio = sp.expand((big_q - qy) / (eps * qy))  # R, a polynomial in ε
    binomial = sum(sp.binomial(-alpha, k) * (eps * ratio) ** k for k in range(order + 1))
    # w = q Q^{-α} = s·binomial with s = q^{1-α}.  P_β is linear in w in numerator and denominator, so each
    # term carries exactly one factor ∂^k s = s·R_k (R_k rational in q); replacing ∂^k s by R_k (s → 1)
    # keeps the ratio and avoids symbolic powers q^{1-α} (which make sympy's simplification slow).
    s_fun = sp.Function("s")
    weight = s_fun(*y) * binomial
    at_x = dict(zip(y, x, strict=True))
    qx_ = q_fun(*x)

    def log_derivative_ratio(multi):
        # ∂^multi (q^{1-α}) / q^{1-α}, by ∂_a(s R) = s((1-α) ∂_a log q · R + ∂_a R)
        r = sp.S(1)
        for a, k in enumerate(multi):
            for _ in range(k):
                r = sp.together((1 - alpha) * qx_.diff(x[a]) / qx_ * r + r.diff(x[a]))
        return r

    def averaged(h):
        coeffs = _series_coefficients(_heat_moment_operator(h, y, cometric, eps, order), eps, order)
        out = []
        for c in coeffs:
            c = c.subs(at_x).doit()
            table = {}
            for der in c.atoms(sp.Derivative):
                if der.expr.func == s_fun:
                    multi = [0] * d
                    for var, k in der.variable_count:
                        multi[x.index(var)] += k
                    table[der] = log_derivative_ratio(multi)
            out.append(sp.expand(c.xreplace(table).subs(s_fun(*x), 1)))
        return out

    num, den = averaged(sp.expand(weight * fy)), averaged(sp.expand(weight))
    series = _ratio_series(num, den, order)
    fx, qx = f_fun(*x), q_fun(*x)
    steps.append(
        claim(
            "zeroth order: P_β f(x) → f(x)",
            series[0],
            fx,
            statement=r"\lim_{\beta\to\infty}(\mathcal P_\beta f)(x) = f(x)",
            because="both averages of the ratio tend to their values at x, and the weights q_β^{−α} cancel",
        )
    )
    coefficients = [sp.factor(sp.cancel(c)) for c in series[1:]]
    grad_f = sp.Matrix([fx.diff(xa) for xa in x])
    grad_log_q = sp.Matrix([sp.log(qx).diff(xa) for xa in x])
    lap_f = sum(cometric[a, b] * fx.diff(x[a], x[b]) for a in range(d) for b in range(d))
    drift = (grad_log_q.T * cometric * grad_f)[0]
    c1 = (lap_f + 2 * (1 - alpha) * drift) / 4
    steps.append(
        claim(
            "first order: c₁ = ¼[Δ_G f + 2(1−α)⟨∇log q, ∇f⟩_G]  (coefficient of 1/β)",
            coefficients[0],
            c1,
            statement=(
                r"(\mathcal P_\beta f)(x) - f(x) = \frac{c_1}{\beta} + O(\beta^{-2}),\quad"
                r" c_1 = \tfrac14\big[\Delta_Gf + 2(1-\alpha)\langle\nabla\log q,\nabla f\rangle_G\big]"
            ),
            because=(
                "expand numerator and denominator to 1/β: the cross term ∇q·∇f/q survives "
                "with the weight q^{1−α} of the normalisation"
            ),
        )
    )
    generator = sp.expand(-4 * c1)
    steps.append(
        claim(
            "so 4β(I − P_β)f → −[Δ_G f + 2(1−α)⟨∇log q, ∇f⟩_G]; ×ħ for the paper's 4ħβ",
            -4 * coefficients[0],
            generator,
            statement=r"\lim_{\beta\to\infty}4\hbar\beta(\mathsf I - \mathcal P_\beta)f"
            r" = -\hbar\big[\Delta_Gf + 2(1-\alpha)\langle\nabla\log q,\nabla f\rangle_G\big]",
            because="multiply the first-order coefficient by −4; α = 1 removes the density drift (Coifman–Lafon)",
        )
    )
    for k, c in enumerate(coefficients[1:], start=2):
        steps.append(
            Step(
                f"correction: coefficient of β^-{k}",
                c,
                statement=r"c_k = [\beta^{-k}]\big((\mathcal P_\beta f)(x) - f(x)\big)",
                because=(
                    "the next coefficient of the same ratio of series, shown for reference (it sets the O(1/β) bias)"
                ),
            )
        )
    symbols = {"x": x, "f": fx, "q": qx, "G": G, "alpha": alpha, "beta": beta}
    return KernelExpansion(steps, coefficients, generator, symbols)


def _varying_metric_expansion(order, alpha):
    r"""The d = 1 expansion for a position-dependent metric :math:`G(x)`, by the arc-length substitution.

    With :math:`\Phi' = \sqrt G` and :math:`s = \Phi(y) - \Phi(x)` the kernel is :math:`e^{-\beta s^2}`, and
    :math:`q(y)\,dy = \rho_G\,ds` with :math:`\rho_G = q/\sqrt G`: the α-normalised operator, its degrees
    included, is exactly the constant-metric one (g = 1) in the coordinate :math:`s` with density
    :math:`\rho_G`.  Its coefficients are mapped back by the chain rule :math:`\partial_s = G^{-1/2}\partial_x`
    (applied to f and to :math:`\rho_G`), and :math:`\partial_s^2 = G^{-1/2}\partial_x G^{-1/2}\partial_x` is the
    Laplace–Beltrami operator of :math:`G` (Coifman & Lafon 2006, Theorem 2: the density in the drift is the one
    with respect to the Riemannian volume).
    """
    from workbench.continuum._riemann import RiemannianMetric
    from workbench.symbolic import Step, claim

    flat = kernel_generator_expansion(d=1, order=order, alpha=alpha)
    s_sym, g = flat.symbols["x"][0], flat.symbols["G"][0, 0]
    x = sp.Symbol("x", real=True)
    f_fun, q_fun, g_fun = sp.Function("f"), sp.Function("q"), sp.Function("G")
    fx, qx, gx = f_fun(x), q_fun(x), g_fun(x)
    rho = qx / sp.sqrt(gx)

    def d_s(h, k):
        """∂_s^k h = (G^{-1/2}∂_x)^k h."""
        for _ in range(k):
            h = h.diff(x) / sp.sqrt(gx)
        return h

    def to_x(expr):
        # the flat expansion reads f(s), q(s) and their s-derivatives, with g = 1 in the coordinate s
        # (one simultaneous xreplace: the flat coordinate s and x are both named x, so a second pass would
        # substitute inside the replacements)
        expr = expr.subs(g, 1)
        table = {f_fun(s_sym): fx, q_fun(s_sym): rho}
        for der in expr.atoms(sp.Derivative):
            k = der.derivative_count
            table[der] = d_s(fx, k) if der.expr.func == f_fun else d_s(rho, k)
        return expr.xreplace(table)

    coefficients = [sp.together(to_x(c)) for c in flat.coefficients]
    generator = sp.expand(to_x(flat.generator))
    metric = RiemannianMetric(sp.Matrix([[gx]]), (x,), sp.sqrt(gx))
    laplace_beltrami = metric.laplacian(fx)
    drift = metric.inner(metric.differential(sp.log(rho)), metric.differential(fx))
    beltrami_form = -(laplace_beltrami + 2 * (1 - alpha) * drift)
    constant = sp.Symbol("g", positive=True)
    old_form = -(fx.diff(x, 2) / gx + 2 * (1 - alpha) * sp.log(qx).diff(x) * fx.diff(x) / gx)
    steps = [
        Step(
            "kernel K_β(x, y) = exp(−β(Φ(y) − Φ(x))²), Φ' = √G(x): a position-dependent metric G(x) "
            "(the feature kernel exp(−β‖F(y) − F(x)‖²) of a curve with |F'|² = G, up to the chordal O(|y − x|⁴))",
            sp.Matrix([[gx]]),
            statement=r"K_\beta(x,y) = e^{-\beta(\Phi(y)-\Phi(x))^2},\quad \Phi' = \sqrt{G(x)},\quad"
            r" dV_G = \sqrt G\,dx,\quad \rho_G = \frac{q}{\sqrt G}",
            because="a 1-D metric is the square of the speed of a feature map; Φ is the arc length",
        ),
        claim(
            "arc length s = Φ(y) − Φ(x): ds/dy = √G, so the law q(y)dy is ρ_G(y)ds with ρ_G = q/√G, and the kernel "
            "is exp(−βs²) (metric 1)",
            qx / sp.sqrt(gx) * sp.sqrt(gx),
            qx,
            statement=r"q(y)\,dy = \rho_G(y)\,ds,\quad \rho_G = \frac{q}{\sqrt G},\quad K_\beta = e^{-\beta s^2}",
            because="change of variables; the degrees q_β and both integrals of P_β transform alike, so P_β is the "
            "constant-metric operator in s with density ρ_G (exactly, not only to leading order)",
        ),
        *flat.steps,
        Step(
            "map back to x by the chain rule ∂_s = G^{-1/2}∂_x (on f and on ρ_G)",
            generator,
            statement=r"\partial_s = G^{-1/2}\partial_x,\quad"
            r" \mathcal C f = -\big[\partial_s^2 f + 2(1-\alpha)\,\partial_s\log\rho_G\,\partial_s f\big]",
            because="the constant-metric generator (g = 1) of the previous steps, in the coordinate s",
        ),
        claim(
            "… which is −[Δ_G f + 2(1−α)⟨∇log ρ_G, ∇f⟩_G], Δ_G = G^{-1/2}∂_x(√G G^{-1}∂_x) the Laplace–Beltrami "
            "operator and ρ_G = q/√G the density with respect to dV_G",
            generator,
            beltrami_form,
            statement=r"\lim_{\beta\to\infty}4\beta(\mathsf I - \mathcal P_\beta)f"
            r" = -\big[\Delta_Gf + 2(1-\alpha)\langle\nabla\log\rho_G,\nabla f\rangle_G\big],\quad"
            r" \Delta_G = \frac1{\sqrt G}\partial_x\big(\sqrt G\,G^{-1}\partial_x\big)",
            because="G^{-1/2}∂_x(G^{-1/2}∂_x f) = (1/√G)∂_x(√G·G⁻¹∂_x f); Δ_G and ⟨·,·⟩_G from RiemannianMetric",
        ),
        claim(
            "constant G = g: Δ_G = g⁻¹∂², ρ_G ∝ q, and the constant-metric form returns",
            beltrami_form.subs(gx, constant).doit(),
            old_form.subs(gx, constant),
            statement=r"G \equiv g:\quad -\big[\Delta_Gf + 2(1-\alpha)\langle\nabla\log\rho_G,\nabla f\rangle_G\big]"
            r" = -\frac1g\big[f'' + 2(1-\alpha)(\log q)'f'\big]",
            because="∂_x√g = 0, so the Laplace–Beltrami operator is g⁻¹∂² and log ρ_G = log q − ½log g",
        ),
        claim(
            "varying G: the constant-metric form (g⁻¹∂², drift with q) misses by (3/2 − α)G'f'/G², O(1) wherever "
            "G' f' ≠ 0",
            beltrami_form - old_form,
            (sp.Rational(3, 2) - alpha) * gx.diff(x) * fx.diff(x) / gx**2,
            statement=r"\mathcal Cf + \Big[\frac{f''}G + 2(1-\alpha)\frac{q'f'}{qG}\Big]"
            r" = \Big(\frac32 - \alpha\Big)\frac{G'f'}{G^2}",
            because="Δ_G f = f''/G − G'f'/(2G²) and (log ρ_G)' = (log q)' − G'/(2G)",
        ),
    ]
    symbols = {"x": (x,), "f": fx, "q": qx, "G": sp.Matrix([[gx]]), "alpha": alpha, "beta": flat.symbols["beta"]}
    symbols["rho"] = rho
    return KernelExpansion(steps, coefficients, generator, symbols)


def _check_sparse_row_stochastic(coo, n, atol=1e-10):
    """The sparse counterpart of ``check_row_stochastic`` (same messages), without densifying."""
    if coo.nnz and not np.all(np.isfinite(coo.data)):
        raise ValueError("P must be finite, got non-finite entries")
    if coo.nnz and coo.data.min() < 0:
        raise ValueError(f"P must be nonnegative, got minimum entry {coo.data.min():.6g}")
    sums = np.bincount(coo.row, weights=coo.data, minlength=n)
    worst = int(np.argmax(np.abs(sums - 1.0)))
    if abs(sums[worst] - 1.0) > atol:
        raise ValueError(
            f"P must be row-stochastic (rows summing to 1 within {atol:g}), "
            f"got row {worst} summing to {sums[worst]:.6g}"
        )


def cauchy_green_estimator(points, P, beta):
    r"""Per-point second-moment tensor :math:`D_i = 2\beta\sum_j \mathsf P_{ij}(x_j - x_i)(x_j - x_i)^\top`.

    For a Markov operator built from :math:`K_\beta(x,y) = \exp(-\beta\,(y-x)^\top G\,(y-x))` on dense samples,
    :math:`D_i \to G^{-1}(x_i) = G^{ab}` as :math:`\beta\to\infty` (multiply by ħ for the paper's
    :math:`2\hbar\beta`: :math:`2\hbar\beta\,\mathrm{Cov} \to \hbar G^{ab}`); the factor 2 undoes the covariance
    :math:`G^{-1}/(2\beta)` of the Gaussian.  For a kernel on features :math:`F(x)`,
    :math:`\exp(-\beta\lVert F(y) - F(x)\rVert^2)`, the limit in :math:`x`-coordinates is
    :math:`(J_F^\top J_F)^{-1}` (the inverse right Cauchy–Green tensor), with bias :math:`O(1/\beta)`.

    Parameters
    ----------
    points : array, shape=[n, d]
        Coordinates :math:`x_i` in which the tensor is expressed.
    P : array or scipy.sparse matrix, shape=[n, n]
        Row-stochastic Markov operator.
    beta : float
        :math:`\beta > 0`.

    Returns
    -------
    numpy.ndarray, shape=[n, d, d]
        Symmetric positive semidefinite tensors :math:`D_i`.

    References
    ----------
    Attention Geometry §3, :math:`D^{ab} = \lim 2\hbar\beta\int\mathcal P_\beta(x,y)(y-x)^a(y-x)^b\,d\nu(y)`
    [SEED]; the discrete estimator is [RECON] (book/reference.md §A.3).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [-1.0]])
    >>> P = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> cauchy_green_estimator(x, P, 2.0)[:, 0, 0].tolist()   # 2·2·(¼·1 + ¼·1) = 2
    [2.0, 0.0, 0.0]
    """
    import scipy.sparse

    points = np.asarray(as_array("points", points, ndim=2))
    beta = check_in_range("beta", beta, 0.0, low_inclusive=False)
    n = points.shape[0]
    if is_sparse(P):
        coo = scipy.sparse.coo_array(P)
        if coo.shape != (n, n):
            raise ValueError(f"P must have shape ({n}, {n}) to match points, got {coo.shape}")
        _check_sparse_row_stochastic(coo, n)
        # edge-wise differences: no cancellation between Σ P x xᵀ and the mean
        diff = points[coo.col] - points[coo.row]
        out = np.zeros((n, points.shape[1], points.shape[1]))
        with np.errstate(over="ignore", invalid="ignore"):  # overflowing moments are refused, naming points
            np.add.at(out, coo.row, coo.data[:, None, None] * diff[:, :, None] * diff[:, None, :])
        return _scaled_by_two_beta(out, beta, points)
    P = np.asarray(as_array("P", P, ndim=2))
    if P.shape != (n, n):
        raise ValueError(f"P must have shape ({n}, {n}) to match points, got {P.shape}")
    check_row_stochastic("P", P)
    out = np.empty((n, points.shape[1], points.shape[1]))
    chunk = max(1, 2_000_000 // max(1, n * points.shape[1]))  # bound the [rows, n, d] difference block
    for start in range(0, n, chunk):
        rows = slice(start, start + chunk)
        diff = points[None, :, :] - points[rows, None, :]
        with np.errstate(over="ignore", invalid="ignore"):  # overflowing moments are refused, naming points
            out[rows] = np.einsum("ij,ija,ijb->iab", P[rows], diff, diff)
    return _scaled_by_two_beta(out, beta, points)


def _scaled_by_two_beta(moments, beta: float, points) -> np.ndarray:
    """``2β`` times the second moments, refused (naming ``points`` or ``beta``) where that leaves the double range."""
    check_finite_output("the second moments sum_j P_ij (x_j - x_i)(x_j - x_i)^T", moments, points=points)
    with np.errstate(over="ignore", invalid="ignore"):
        out = (2.0 * beta) * moments
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"beta is too large: 2 * beta * (second moments) overflows double precision, got beta={beta!r}"
        )
    return out
