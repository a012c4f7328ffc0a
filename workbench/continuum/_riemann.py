r"""A small symbolic Riemannian toolkit in coordinates, and the diffusion generators built on it.

A metric is given in coordinates :math:`x = (x^1, \dots, x^d)` as a symmetric sympy matrix
:math:`G_{ab}(x)`.  From it this module computes, with sympy, the co-metric :math:`G^{ab}`, the volume
density :math:`\sqrt g = \sqrt{\det G}`, the Christoffel symbols, gradient, divergence,
Laplace–Beltrami operator, covariant Hessian, the Riemann and Ricci tensors, and the two operators of
book/reference.md §A.4–§A.5:

* the Witten/Girsanov generator (positive convention, Attention Geometry's)
  :math:`\mathcal C_A f = -\hbar\Delta_G f + 2\langle A, df\rangle_G` for a drift 1-form :math:`A`;
* the negative generator :math:`\mathcal L = -\mathcal C_{d\Phi}`, that is
  :math:`\mathcal L f = \hbar\Delta_G f - 2\langle d\Phi, df\rangle_G`, which is the sign Bakry–Émery's
  :math:`\Gamma` and :math:`\Gamma_2` are written with.

Sign conventions, stated once: :math:`\Delta_G f = g^{-1/2}\partial_a(g^{1/2}G^{ab}\partial_b f)` is
*negative* semi-definite; :math:`\Gamma^c_{ab} = \tfrac12 G^{cd}(\partial_a G_{db} + \partial_b G_{da} -
\partial_d G_{ab})`; :math:`R^a{}_{bcd} = \partial_c\Gamma^a_{db} - \partial_d\Gamma^a_{cb} +
\Gamma^a_{ce}\Gamma^e_{db} - \Gamma^a_{de}\Gamma^e_{cb}` and :math:`\operatorname{Ric}_{bd} = R^a{}_{bad}`,
so the round sphere of radius :math:`r` has :math:`\operatorname{Ric} = G/r^2`.  The scale ħ is the one
of book/reference.md §A.3–§A.4: a Gauss kernel :math:`K_\beta(x, y) = \exp(-\beta(y-x)^\top G(y-x))`
gives :math:`4\hbar\beta(I - \mathcal P_\beta) \to \mathcal C` with :math:`\hbar = 1/(4\beta)` for the plain
Laplacian limit :math:`4\beta(I - \mathcal P_\beta) f \to -\Delta_G f`.

Source: Attention Geometry §4 (Witten–Novikov–Girsanov) and §5 (Bakry–Émery I); book/reference.md
§A.4 [SEED generator, DERIVED properties] and §A.5 [RECON, standard Bakry–Émery].  The Riemannian
formulas are the textbook ones (do Carmo, *Riemannian Geometry*, ch. 2–4; Bakry, Gentil & Ledoux,
*Analysis and Geometry of Markov Diffusion Operators*, §1.16 and §C.5 for the Bochner formula).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property

import sympy as sp

from workbench.validation import as_scalar, check_flag

__all__ = [
    "RiemannianMetric",
    "bakry_emery_gamma",
    "bakry_emery_gamma2",
    "bochner_gamma2",
    "diffusion_generator",
    "formal_adjoint",
    "witten_generator",
    "witten_potential",
]


def _as_metric_matrix(metric) -> sp.Matrix:
    try:
        matrix = sp.Matrix(metric)
    except (TypeError, ValueError, sp.SympifyError) as exc:
        raise TypeError(f"metric must be a sympy Matrix (or nested list) of expressions, got {metric!r}") from exc
    if matrix.rows != matrix.cols or matrix.rows == 0:
        raise ValueError(f"metric must be a non-empty square matrix, got shape {matrix.shape}")
    for a in range(matrix.rows):
        for b in range(a + 1, matrix.cols):
            if sp.simplify(matrix[a, b] - matrix[b, a]) != 0:
                raise ValueError(
                    f"metric must be symmetric, got G[{a},{b}] = {matrix[a, b]} and G[{b},{a}] = {matrix[b, a]}"
                )
    return matrix


def _as_coordinates(coordinates, dimension: int) -> tuple[sp.Symbol, ...]:
    if isinstance(coordinates, str | bytes | dict) or not isinstance(coordinates, Iterable):
        raise TypeError(
            f"coordinates must be a sequence of {dimension} sympy Symbols, got {type(coordinates).__name__}: "
            f"{coordinates!r}"
        )
    coords = tuple(coordinates)
    if not all(isinstance(c, sp.Symbol) for c in coords):
        raise TypeError(f"coordinates must be sympy Symbols, got {coords}")
    if len(set(coords)) != len(coords):
        raise ValueError(f"coordinates must be distinct symbols, got {coords}")
    if len(coords) != dimension:
        raise ValueError(
            f"coordinates must have one symbol per row of the metric ({dimension}), got {len(coords)}: {coords}"
        )
    return coords


def _scalar_expression(name: str, value, coordinates: Sequence[sp.Symbol] = ()) -> sp.Expr:
    """``value`` as a finite scalar sympy expression, or a ``TypeError``/``ValueError`` naming ``name``.

    A string is parsed, its names of ``coordinates`` standing for those symbols; anything else goes through
    ``sympify(strict=True)``, so None, a bool (sympy's ``true``), a list, a dict or an array is refused.
    """
    try:
        if isinstance(value, str):
            expr = sp.sympify(value, locals={str(c): c for c in coordinates})
        else:
            expr = sp.sympify(value, strict=True)
    except (TypeError, ValueError, SyntaxError, sp.SympifyError) as exc:
        raise TypeError(f"{name} must be a sympy expression (or a number), got {value!r}") from exc
    if not isinstance(expr, sp.Expr) or isinstance(expr, sp.MatrixBase):
        raise TypeError(f"{name} must be a scalar sympy expression, got {type(value).__name__}: {value!r}")
    if expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"{name} must be a finite expression (no nan, oo or zoo), got {expr}")
    return expr


def _tidy(expr) -> sp.Expr:
    """Expand and cancel to one fraction: keeps the sin θ cos θ forms that later cancellations need.

    ``sp.simplify`` would rewrite sin θ cos θ as sin 2θ/2 and cos/sin as 1/tan, which later sums of
    tensor components then fail to cancel.
    """
    return sp.cancel(sp.expand(expr))


class RiemannianMetric:
    r"""A Riemannian metric :math:`G_{ab}(x)` in coordinates, with its derived tensors and operators.

    Parameters
    ----------
    metric : sympy.Matrix or nested list, shape=[d, d]
        Symmetric, nondegenerate matrix of expressions in ``coordinates``.
    coordinates : sequence of sympy.Symbol, length d
        The coordinate symbols :math:`x^1, \dots, x^d`.
    volume_density : sympy expression, optional
        :math:`\sqrt g = \sqrt{\det G}` on the chart (default ``sqrt(det G)``).  Pass it where the
        branch of the root depends on the chart, e.g. :math:`r^2\sin\theta` for the sphere on
        :math:`0 < \theta < \pi`; it must square to :math:`\det G`.

    Raises
    ------
    ValueError
        If the metric is not square, not symmetric, degenerate, or the number of coordinates differs
        from its size.
    TypeError
        If the coordinates are not sympy Symbols.

    Notes
    -----
    Tensors are returned as nested lists indexed in the order written: ``christoffel[c][a][b]`` is
    :math:`\Gamma^c_{ab}`, ``riemann[a][b][c][d]`` is :math:`R^a{}_{bcd}`.  Tensor components (Christoffel
    symbols, curvature) are expanded and cancelled to one fraction; operators return unsimplified
    expressions so a caller decides what to simplify.

    References
    ----------
    do Carmo, *Riemannian Geometry*, ch. 2 and 4 (Levi-Civita connection, curvature); the volume
    density :math:`dV_G = \sqrt{\det G}\,d^dx` of book/reference.md §A.3 [SEED].

    Examples
    --------
    The round sphere of radius r in spherical coordinates has Ric = G/r² and Δ cos θ = −2cos θ/r²:

    >>> import sympy as sp
    >>> th, ph, r = sp.symbols("theta phi r", positive=True)
    >>> sphere = RiemannianMetric(sp.diag(r**2, r**2 * sp.sin(th) ** 2), (th, ph), r**2 * sp.sin(th))
    >>> sp.simplify(sphere.ricci - sphere.metric / r**2) == sp.zeros(2, 2)
    True
    >>> sp.simplify(sphere.laplacian(sp.cos(th)))
    -2*cos(theta)/r**2
    """

    def __init__(self, metric, coordinates: Sequence[sp.Symbol], volume_density=None):
        self.metric = _as_metric_matrix(metric)
        self.coordinates = _as_coordinates(coordinates, self.metric.rows)
        self.dimension = self.metric.rows
        self.determinant = sp.simplify(self.metric.det())
        if self.determinant == 0:
            raise ValueError(f"metric must be nondegenerate, got det G = {self.determinant}")
        if volume_density is None:
            self.volume_density = sp.sqrt(self.determinant)
        else:
            # sympy cannot take |sin θ| = sin θ on the chart 0 < θ < π; the caller supplies the branch.
            self.volume_density = _scalar_expression("volume_density", volume_density, self.coordinates)
            if sp.simplify(self.volume_density**2 - self.determinant) != 0:
                raise ValueError(f"volume_density must square to det G = {self.determinant}, got {self.volume_density}")

    def __repr__(self) -> str:
        return f"RiemannianMetric({self.metric}, {self.coordinates})"

    # ---- the metric and its first derivatives ---------------------------------------------------

    @cached_property
    def inverse(self) -> sp.Matrix:
        r"""The co-metric :math:`G^{ab}`, the inverse matrix of :math:`G_{ab}`."""
        return self.metric.inv().applyfunc(sp.simplify)

    @cached_property
    def christoffel(self) -> list[list[list[sp.Expr]]]:
        r"""Christoffel symbols :math:`\Gamma^c_{ab} = \tfrac12 G^{cd}(\partial_a G_{db} + \partial_b G_{da} - \partial_d G_{ab})`."""  # noqa: E501
        x, g, ginv, n = self.coordinates, self.metric, self.inverse, self.dimension
        return [
            [
                [
                    _tidy(
                        sum(
                            ginv[c, d] * (sp.diff(g[d, b], x[a]) + sp.diff(g[d, a], x[b]) - sp.diff(g[a, b], x[d]))
                            for d in range(n)
                        )
                        / 2
                    )
                    for b in range(n)
                ]
                for a in range(n)
            ]
            for c in range(n)
        ]

    # ---- curvature ------------------------------------------------------------------------------

    @cached_property
    def riemann(self) -> list[list[list[list[sp.Expr]]]]:
        r"""Riemann tensor :math:`R^a{}_{bcd} = \partial_c\Gamma^a_{db} - \partial_d\Gamma^a_{cb} + \Gamma^a_{ce}\Gamma^e_{db} - \Gamma^a_{de}\Gamma^e_{cb}`."""  # noqa: E501
        x, gam, n = self.coordinates, self.christoffel, self.dimension

        def component(a, b, c, d):
            value = sp.diff(gam[a][d][b], x[c]) - sp.diff(gam[a][c][b], x[d])
            value += sum(gam[a][c][e] * gam[e][d][b] - gam[a][d][e] * gam[e][c][b] for e in range(n))
            return _tidy(value)

        return [[[[component(a, b, c, d) for d in range(n)] for c in range(n)] for b in range(n)] for a in range(n)]

    @cached_property
    def ricci(self) -> sp.Matrix:
        r"""Ricci tensor :math:`\operatorname{Ric}_{bd} = R^a{}_{bad}` (positive on the round sphere)."""
        n, riem = self.dimension, self.riemann
        return sp.Matrix(n, n, lambda b, d: _tidy(sum(riem[a][b][a][d] for a in range(n))))

    @cached_property
    def scalar_curvature(self) -> sp.Expr:
        r"""Scalar curvature :math:`R = G^{ab}\operatorname{Ric}_{ab}` (twice the Gaussian curvature in d = 2)."""
        n = self.dimension
        return _tidy(sum(self.inverse[a, b] * self.ricci[a, b] for a in range(n) for b in range(n)))

    # ---- operators on functions -----------------------------------------------------------------

    def differential(self, f) -> sp.Matrix:
        r"""The covector :math:`(df)_a = \partial_a f` as a column.

        ``f`` is a sympy expression, a number, or a string in which the names of the coordinates stand for
        the coordinate symbols (``"x**2*y"`` is :math:`x^2y` in the coordinates ``x, y``); the same holds for
        the function arguments of every operator below.
        """
        f = self._scalar("f", f)
        return sp.Matrix([sp.diff(f, xa) for xa in self.coordinates])

    def gradient(self, f) -> sp.Matrix:
        r"""The vector :math:`(\nabla f)^a = G^{ab}\partial_b f` as a column."""
        return self.inverse * self.differential(self._scalar("f", f))

    def inner(self, alpha, beta) -> sp.Expr:
        r"""Co-metric pairing :math:`\langle\alpha,\beta\rangle_G = G^{ab}\alpha_a\beta_b` of two covectors."""
        alpha, beta = self._covector("alpha", alpha), self._covector("beta", beta)
        return (alpha.T * self.inverse * beta)[0, 0]

    def divergence(self, vector) -> sp.Expr:
        r"""Riemannian divergence :math:`\operatorname{div}_G X = g^{-1/2}\partial_a(g^{1/2}X^a)` of a vector field."""
        vector = self._covector("vector", vector)
        root = self.volume_density
        return sum(sp.diff(root * vector[a], xa) for a, xa in enumerate(self.coordinates)) / root

    def laplacian(self, f) -> sp.Expr:
        r"""Laplace–Beltrami :math:`\Delta_G f = g^{-1/2}\partial_a(g^{1/2}G^{ab}\partial_b f)` (negative semi-definite)."""  # noqa: E501
        return self.divergence(self.gradient(self._scalar("f", f)))

    def hessian(self, f) -> sp.Matrix:
        r"""Covariant Hessian :math:`(\operatorname{Hess} f)_{ab} = \partial_a\partial_b f - \Gamma^c_{ab}\partial_c f`."""  # noqa: E501
        x, gam, n = self.coordinates, self.christoffel, self.dimension
        f = self._scalar("f", f)
        df = self.differential(f)
        return sp.Matrix(n, n, lambda a, b: sp.diff(f, x[a], x[b]) - sum(gam[c][a][b] * df[c] for c in range(n)))

    def hessian_norm2(self, f) -> sp.Expr:
        r""":math:`\lVert\operatorname{Hess} f\rVert^2_G = G^{ac}G^{bd}H_{ab}H_{cd}`."""
        h, ginv = self.hessian(self._scalar("f", f)), self.inverse
        return (ginv * h * ginv * h.T).trace()

    def bilinear(self, tensor: sp.Matrix, u: sp.Matrix, v: sp.Matrix) -> sp.Expr:
        r"""A covariant 2-tensor on two vectors, :math:`T(u, v) = T_{ab}u^a v^b`.

        ``tensor`` is a d×d sympy Matrix or nested list, ``u`` and ``v`` sequences of d components.
        """
        tensor = self._matrix("tensor", tensor, (self.dimension, self.dimension))
        u, v = self._covector("u", u), self._covector("v", v)
        return (u.T * tensor * v)[0, 0]

    def _scalar(self, name, value) -> sp.Expr:
        """``value`` as a finite scalar sympy expression; in a string the coordinate names mean the coordinates."""
        return _scalar_expression(name, value, self.coordinates)

    def _matrix(self, name, value, shape) -> sp.Matrix:
        """``value`` as a sympy Matrix of ``shape`` with finite scalar entries (strings as in :meth:`_scalar`)."""
        expected = f"{shape[0]}×{shape[1]}" if shape[1] != 1 else f"a sequence of {shape[0]}"
        if isinstance(value, str | bytes) or not hasattr(value, "__len__"):
            raise TypeError(f"{name} must be {expected} sympy expressions, got {value!r}")
        if isinstance(value, list | tuple):
            value = [
                [self._scalar(f"{name}[{i}][{j}]", e) for j, e in enumerate(row)]
                if isinstance(row, list | tuple)
                else self._scalar(f"{name}[{i}]", row)
                for i, row in enumerate(value)
            ]
        try:
            matrix = sp.Matrix(value)
        except (TypeError, ValueError, sp.SympifyError) as exc:
            raise TypeError(f"{name} must be {expected} sympy expressions, got {value!r}") from exc
        if matrix.shape != tuple(shape):
            if shape[1] == 1:
                raise ValueError(
                    f"{name} must have {shape[0]} components (one per coordinate), got shape {matrix.shape}"
                )
            raise ValueError(
                f"{name} must have shape {tuple(shape)} (a row and a column per coordinate), got shape {matrix.shape}"
            )
        for index, entry in enumerate(matrix):
            self._scalar(f"{name}[{index}]", entry)
        return matrix

    def _covector(self, name, value) -> sp.Matrix:
        if isinstance(value, str | bytes):
            raise TypeError(f"{name} must be a sequence of {self.dimension} sympy expressions, got {value!r}")
        return self._matrix(name, value, (self.dimension, 1))


def _hbar(hbar):
    hbar = as_scalar(hbar)
    try:
        value = sp.sympify(hbar)
    except (sp.SympifyError, TypeError, ValueError) as exc:
        raise TypeError(f"hbar must be a positive real scale, got {hbar!r}") from exc
    if not isinstance(value, sp.Expr) or isinstance(value, sp.MatrixBase):
        raise TypeError(f"hbar must be a positive real scale (a number or a sympy expression), got {hbar!r}")
    if value.has(sp.nan, sp.zoo) or value.is_finite is False:
        raise ValueError(f"hbar must be a finite positive real scale, got {hbar}")
    if value.is_positive is False or value.is_real is False:
        raise ValueError(f"hbar must be a positive real scale, got {hbar}")
    return value


def witten_generator(metric: RiemannianMetric, one_form, hbar) -> Callable[[sp.Expr], sp.Expr]:
    r"""The Witten/Girsanov generator :math:`\mathcal C_A f = -\hbar\Delta_G f + 2\langle A, df\rangle_G`.

    Positive convention (Attention Geometry's): :math:`\mathcal C_A = \lim 4\hbar\beta(I - \mathcal P_\beta)` is
    nonnegative on its symmetric part.  The drift :math:`A = d\Phi + A^\perp` is a 1-form (covector).

    Parameters
    ----------
    metric : RiemannianMetric
    one_form : sequence of sympy expressions, length d
        Components :math:`A_a` of the drift 1-form.
    hbar : sympy expression or number
        The scale ħ (:math:`= 1/(4\beta)` for the Gauss kernel :math:`\exp(-\beta(y-x)^\top G(y-x))`).

    Returns
    -------
    callable
        ``f -> C_A f`` as an unsimplified sympy expression.

    References
    ----------
    Attention Geometry §4; book/reference.md §A.4, "Witten/Girsanov generator" [SEED].

    Examples
    --------
    On the line with A = dΦ, Φ = x²/2 and ħ = 1 this is the Ornstein–Uhlenbeck generator −f'' + 2x f':

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> line = RiemannianMetric([[1]], (x,))
    >>> C = witten_generator(line, [x], 1)
    >>> sp.expand(C(x**2))
    4*x**2 - 2
    """
    hbar = _hbar(hbar)
    drift = metric._covector("one_form", one_form)

    def generator(f):
        f = metric._scalar("f", f)
        return -hbar * metric.laplacian(f) + 2 * metric.inner(drift, metric.differential(f))

    return generator


def diffusion_generator(metric: RiemannianMetric, potential, hbar) -> Callable[[sp.Expr], sp.Expr]:
    r"""The negative generator :math:`\mathcal L f = \hbar\Delta_G f - 2\langle d\Phi, df\rangle_G = -\mathcal C_{d\Phi} f`.

    Bakry–Émery's :math:`\Gamma` and :math:`\Gamma_2` are written with this sign (book/reference.md §A.5
    "With ℒ = −𝒞").  It is symmetric in :math:`L^2(e^{-2\Phi/\hbar}dV_G)` and has that measure invariant.

    Parameters
    ----------
    metric : RiemannianMetric
    potential : sympy expression
        The potential Φ (use 0 for the plain heat semigroup).
    hbar : sympy expression or number
        The scale ħ.

    Returns
    -------
    callable
        ``f -> ℒ f``.

    References
    ----------
    book/reference.md §A.4 (exact case 𝒜 = dΦ) [DERIVED] and §A.5 [RECON].

    Examples
    --------
    >>> import sympy as sp
    >>> x, y = sp.symbols("x y", real=True)
    >>> plane = RiemannianMetric(sp.eye(2), (x, y))
    >>> L = diffusion_generator(plane, (x**2 + y**2) / 2, sp.Rational(1, 2))
    >>> sp.expand(L(x * y))
    -4*x*y
    """  # noqa: E501
    potential = metric._scalar("potential", potential)
    positive = witten_generator(metric, metric.differential(potential), hbar)
    return lambda f: -positive(f)


def bakry_emery_gamma(generator: Callable, f, g) -> sp.Expr:
    r"""Carré du champ :math:`\Gamma(f, g) = \tfrac12[\mathcal L(fg) - f\mathcal Lg - g\mathcal Lf]` of a negative generator.

    Parameters
    ----------
    generator : callable
        ``f -> ℒ f`` for a *negative* generator (e.g. :func:`diffusion_generator`).
    f, g : sympy expressions

    References
    ----------
    book/reference.md §A.5 [RECON, standard]; Bakry, Gentil & Ledoux §1.4.

    Examples
    --------
    Γ = ħ⟨∇f, ∇g⟩ for ℒ = ħΔ on the line:

    >>> import sympy as sp
    >>> x, h = sp.symbols("x hbar", positive=True)
    >>> L = diffusion_generator(RiemannianMetric([[1]], (x,)), 0, h)
    >>> sp.simplify(bakry_emery_gamma(L, x**2, sp.sin(x)))
    2*hbar*x*cos(x)
    """  # noqa: E501
    f, g = _scalar_expression("f", f), _scalar_expression("g", g)
    return (generator(f * g) - f * generator(g) - g * generator(f)) / 2


def bakry_emery_gamma2(generator: Callable, f) -> sp.Expr:
    r""":math:`\Gamma_2(f) = \tfrac12[\mathcal L\Gamma(f, f) - 2\Gamma(f, \mathcal Lf)]` of a negative generator.

    References
    ----------
    book/reference.md §A.5 "Γ₂ and curvature" [RECON, standard Bakry–Émery].

    Examples
    --------
    On flat ℝ with ℒ = ħΔ, Γ₂(f) = ħ²(f'')²:

    >>> import sympy as sp
    >>> x, h = sp.symbols("x hbar", positive=True)
    >>> L = diffusion_generator(RiemannianMetric([[1]], (x,)), 0, h)
    >>> sp.factor(sp.simplify(bakry_emery_gamma2(L, x**3)))
    36*hbar**2*x**2
    """
    f = _scalar_expression("f", f)
    return generator(bakry_emery_gamma(generator, f, f)) / 2 - bakry_emery_gamma(generator, f, generator(f))


def bochner_gamma2(metric: RiemannianMetric, f, potential, hbar, *, ricci: bool = True) -> sp.Expr:
    r"""The Bochner form :math:`\hbar^2\lVert\operatorname{Hess}f\rVert^2 + \hbar^2\operatorname{Ric}(\nabla f,\nabla f) + 2\hbar\operatorname{Hess}\Phi(\nabla f,\nabla f)`.

    Equal to :math:`\Gamma_2(f)` of :math:`\mathcal L = \hbar\Delta_G - 2\langle d\Phi, d\cdot\rangle_G`
    (Bochner–Lichnerowicz plus the drift term); the Bakry–Émery Ricci tensor is
    :math:`\operatorname{Ric} + (2/\hbar)\operatorname{Hess}\Phi`.

    Parameters
    ----------
    metric : RiemannianMetric
    f, potential : sympy expressions
    hbar : sympy expression or number
    ricci : bool
        Include the Ricci term (``False`` gives the flat-space formula, a negative control).

    References
    ----------
    book/reference.md §A.5 "For 𝒞 = 𝒞_{dΦ}" [RECON]; Bakry, Gentil & Ledoux §C.5.

    Examples
    --------
    >>> import sympy as sp
    >>> x, h = sp.symbols("x hbar", positive=True)
    >>> line = RiemannianMetric([[1]], (x,))
    >>> bochner_gamma2(line, x**3, 0, h)
    36*hbar**2*x**2
    """  # noqa: E501
    ricci = check_flag("ricci", ricci)
    hbar = _hbar(hbar)
    f, potential = metric._scalar("f", f), metric._scalar("potential", potential)
    grad = metric.gradient(f)
    value = hbar**2 * metric.hessian_norm2(f) + 2 * hbar * metric.bilinear(metric.hessian(potential), grad, grad)
    if ricci:
        value += hbar**2 * metric.bilinear(metric.ricci, grad, grad)
    return value


def witten_potential(metric: RiemannianMetric, potential, hbar) -> sp.Expr:
    r"""The Witten potential :math:`V = |d\Phi|^2_G/\hbar - \Delta_G\Phi`.

    Ground-state conjugation turns :math:`\mathcal C_{d\Phi}` into a Schrödinger operator:
    :math:`e^{-\Phi/\hbar}\mathcal C_{d\Phi}(e^{\Phi/\hbar}u) = -\hbar\Delta_G u + Vu`.

    References
    ----------
    book/reference.md §A.4 "Conjugating gives the Witten Laplacian" [DERIVED].

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> witten_potential(RiemannianMetric([[1]], (x,)), x**2 / 2, 1)
    x**2 - 1
    """
    hbar = _hbar(hbar)
    potential = metric._scalar("potential", potential)
    d_phi = metric.differential(potential)
    return metric.inner(d_phi, d_phi) / hbar - metric.laplacian(potential)


def formal_adjoint(metric: RiemannianMetric, one_form, hbar, density) -> sp.Expr:
    r"""Formal (Lebesgue :math:`d^dx`) adjoint of :math:`\mathcal C_A` applied to a density ρ.

    Writing :math:`\mathcal C_A f = a^{ab}\partial_a\partial_b f + b^b\partial_b f` with
    :math:`a^{ab} = -\hbar G^{ab}` and :math:`b^b = -\hbar g^{-1/2}\partial_a(g^{1/2}G^{ab}) + 2G^{ab}A_a`,
    this is :math:`\mathcal C_A^\dagger\rho = \partial_a\partial_b(a^{ab}\rho) - \partial_b(b^b\rho)`, so
    :math:`\int(\mathcal C_A f)\rho\,d^dx = \int f\,\mathcal C_A^\dagger\rho\,d^dx` for compactly supported
    or periodic f; a density with :math:`\mathcal C_A^\dagger\rho = 0` is stationary.

    References
    ----------
    book/reference.md §A.4 ("μ = e^{−2Φ/ħ}dV_G, the stationary law") [DERIVED].

    Examples
    --------
    The Gibbs density e^{−x²} is stationary for the Ornstein–Uhlenbeck generator (Φ = x²/2, ħ = 1):

    >>> import sympy as sp
    >>> x = sp.Symbol("x", real=True)
    >>> sp.simplify(formal_adjoint(RiemannianMetric([[1]], (x,)), [x], 1, sp.exp(-(x**2))))
    0
    """
    hbar = _hbar(hbar)
    drift = metric._covector("one_form", one_form)
    x, ginv, root, n = metric.coordinates, metric.inverse, metric.volume_density, metric.dimension
    rho = metric._scalar("density", density)
    second = -hbar * ginv
    first = [
        -hbar * sum(sp.diff(root * ginv[a, b], x[a]) for a in range(n)) / root
        + 2 * sum(ginv[a, b] * drift[a] for a in range(n))
        for b in range(n)
    ]
    value = sum(sp.diff(second[a, b] * rho, x[a], x[b]) for a in range(n) for b in range(n))
    return value - sum(sp.diff(first[b] * rho, x[b]) for b in range(n))
