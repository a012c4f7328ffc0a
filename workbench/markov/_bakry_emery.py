r"""Bakry–Émery calculus of jump rates: the carré du champ Γ, its iterate Γ₂ and the Hessian form.

Every Γ-calculus function here reads a matrix ``rates`` in the **jump-rates convention**: its
off-diagonal entries :math:`W_{ij} \ge 0` are the rates of jumps :math:`i \to j`, its diagonal is
ignored, and the negative generator is

.. math::

    (\mathcal L f)_i = \sum_{j \ne i} W_{ij}\,(f_j - f_i).

Passing a Markov operator :math:`\mathsf P` gives :math:`\mathcal L = \mathsf P - I` exactly (a
holding probability :math:`\mathsf P_{ii}` jumps nowhere); passing a weighted adjacency matrix gives
the unnormalised graph Laplacian :math:`\Delta f(x) = \sum_y w_{xy}(f(y) - f(x))`; passing
:math:`D^{-1}A` gives the normalised (random-walk) one.  ``rates`` may be a dense numpy array, a dense
torch tensor (computed in torch, on its device), or a :mod:`scipy.sparse` matrix (numpy only; every
sparse path is :math:`O(\mathrm{nnz})` and never densifies).

On top of :math:`\mathcal L` sit the carré du champ :math:`\Gamma`, its iterate :math:`\Gamma_2`
(Bakry–Émery) and the discrete Hessian form.  The flux of a Markov operator (stationary current,
circulation, Hatano–Nelson gauge) is the subject of :mod:`workbench.markov._currents`; the validated
jump rates are :class:`workbench.markov._jump_rates.JumpRates`.

Continuum scale.  For the Gauss kernel :math:`K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)` on a
uniform sample of flat space and :math:`\mathsf P_\beta = \operatorname{diag}(K\mathbf 1)^{-1}K`, a
jump has covariance :math:`I/(2\beta)`, so with :math:`\varepsilon = 1/(4\beta)`

.. math::

    \mathcal L \approx \varepsilon\,\Delta,\qquad
    \Gamma(f, g) \approx \varepsilon\,\nabla f\cdot\nabla g,\qquad
    \Gamma_2(f) \approx \varepsilon^2\,\lVert\operatorname{Hess} f\rVert^2,\qquad
    H(f)(g, h) \approx \varepsilon^2\,\operatorname{Hess} f(\nabla g, \nabla h),

each with a relative error :math:`O(1/\beta)` (on :math:`\mathbb R^d` the Gaussian step is exactly the
heat semigroup at time :math:`\varepsilon`, :math:`\mathsf P_\beta = e^{\varepsilon\Delta}`, so
:math:`\mathcal L = \varepsilon\Delta + \varepsilon^2\Delta^2/2 + \dots`).  This is the paper's
:math:`4\hbar\beta\,\Gamma_{\mathsf P_\beta} \to \hbar\langle\nabla f, \nabla g\rangle` at
:math:`\hbar = 1`; on a curved sample :math:`\Gamma_2` gains :math:`\varepsilon^2\operatorname{Ric}(\nabla f,
\nabla f)`.

References
----------
Attention Geometry §5 and §8; book/reference.md §A.5 (Γ, Γ₂, Hessian identity) [RECON, standard],
§A.8 [RECON].
D. Bakry, I. Gentil, M. Ledoux, *Analysis and Geometry of Markov Diffusion Operators*, Springer (2014),
§1.4 and §1.16 (Γ, Γ₂).
"""

from __future__ import annotations

import numpy as np

from workbench.markov._jump_rates import JumpRates
from workbench.validation import check_choice, check_finite_output

__all__ = ["carre_du_champ", "gamma2", "hessian_form"]


def _paired(rates: JumpRates, f, g, f_name="f", g_name="g"):
    f = rates.functions(f_name, f)
    if g is None:
        return f, f
    g = rates.functions(g_name, g)
    if tuple(f.shape) != tuple(g.shape):
        raise ValueError(f"{f_name} and {g_name} must have the same shape, got {tuple(f.shape)} and {tuple(g.shape)}")
    return f, g


def _negative_generator_apply(rates, f):
    r"""Negative generator :math:`(\mathcal L f)_i = \sum_{j\ne i} W_{ij}(f_j - f_i)` of jump rates.

    The diagonal of ``rates`` is ignored; for a Markov operator this is :math:`(\mathsf P - I)f`.
    ``f`` may be of shape [n] or [n, m] (column by column).
    """
    jump = JumpRates(rates)
    return jump.generator(jump.functions("f", f))


# --------------------------------------------------------------------------------------------------
# Γ, Γ₂ and the Hessian form
# --------------------------------------------------------------------------------------------------


def carre_du_champ(rates, f, g=None, *, form="edge"):
    r"""Carré du champ :math:`\Gamma(f,g)_i = \tfrac12 \sum_j W_{ij}(f_j - f_i)(g_j - g_i)` of jump rates.

    With the negative generator :math:`(\mathcal L f)_i = \sum_{j\ne i} W_{ij}(f_j - f_i)` (the
    jump-rates convention: off-diagonal ``rates`` are :math:`W_{ij} \ge 0`, the diagonal is ignored),

    .. math::

        \Gamma(f, g) = \tfrac12\bigl[\mathcal L(fg) - f\,\mathcal L g - g\,\mathcal L f\bigr]
                     = \tfrac12 \sum_j W_{ij}\,(f_j - f_i)(g_j - g_i).

    For a Markov operator :math:`\mathsf P` (so :math:`\mathcal L = \mathsf P - I`) this is the paper's
    :math:`\Gamma_{\mathsf L, i}(f, g)` with the positive generator :math:`\mathsf L = I - \mathsf P`.
    For the Gauss kernel :math:`K = \exp(-\beta\lVert x_i - x_j\rVert^2)` and
    :math:`\mathsf P_\beta = \operatorname{diag}(K\mathbf 1)^{-1}K` on a uniform sample,
    :math:`4\beta\,\Gamma(f, g) \to \nabla f\cdot\nabla g` with a relative error :math:`O(1/\beta)`.

    Parameters
    ----------
    rates : array or scipy.sparse matrix, shape=[n, n]
        Jump rates: finite, off-diagonal entries nonnegative, diagonal ignored.
    f, g : array, shape=[n] or [n, m]
        Functions on the vertices; ``g`` defaults to ``f`` and must have the shape of ``f``.  For
        shape [n, m] the form is taken column by column, :math:`\Gamma(f_{:,k}, g_{:,k})`.
    form : {'edge', 'operator'}
        ``'edge'`` sums over differences :math:`f_j - f_i` and stays accurate for smooth ``f``; the
        three-term ``'operator'`` form subtracts numbers of size :math:`f^2` to get one of size
        :math:`\Gamma`, so its relative error grows like :math:`4\beta` times the machine epsilon on the
        Gauss kernel (measured: 1e-11 at :math:`\beta = 10^4`, 5e-10 at :math:`10^6`).

    Returns
    -------
    array, shape of ``f``
        In the library of ``rates`` (numpy for scipy.sparse).

    References
    ----------
    Attention Geometry §5; book/reference.md §A.5 "Discrete carré du champ" [RECON; standard].
    Bakry, Gentil, Ledoux (2014), Definition 1.4.2.

    Examples
    --------
    The path 0 – 1 – 2 with unit rates, and :math:`f = (0, 1, 4)`: the middle vertex sees the
    differences :math:`-1` and :math:`3`, so :math:`\Gamma(f)_1 = \tfrac12(1 + 9) = 5`.

    >>> import numpy as np
    >>> W = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    >>> f = np.array([0.0, 1.0, 4.0])
    >>> carre_du_champ(W, f).tolist()
    [0.5, 5.0, 4.5]
    >>> np.allclose(carre_du_champ(W, f, form="operator"), carre_du_champ(W, f))
    True
    """
    check_choice("form", form, ("edge", "operator"))
    jump = JumpRates(rates)
    f, g = _paired(jump, f, g)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing form is refused just below
        out = jump.edge_form(f, g) if form == "edge" else jump.operator_form(f, g)
    return check_finite_output("carre_du_champ", out, **_named(rates=rates, f=f, g=g))


def _named(**inputs):
    # The inputs an overflow message names: each distinct array once (g defaults to f).
    seen: list = []
    out = {}
    for name, value in inputs.items():
        if not any(value is other for other in seen):
            seen.append(value)
            out[name] = value
    return out


def gamma2(rates, f, g=None):
    r"""Iterated carré du champ :math:`\Gamma_2(f,g) = \tfrac12[\mathcal L\Gamma(f,g) - \Gamma(f,\mathcal L g) - \Gamma(g,\mathcal L f)]`.

    :math:`\mathcal L` is the negative generator :math:`(\mathcal L f)_i = \sum_{j\ne i} W_{ij}(f_j - f_i)`
    of the jump rates (off-diagonal ``rates``; the diagonal is ignored; a Markov operator gives
    :math:`\mathcal L = \mathsf P - I`).  Every :math:`\Gamma` is taken in the edge form.  The value at
    a vertex :math:`x` depends on ``f`` and ``g`` only on the two-step ball around :math:`x`.

    Continuum scale: for the Gauss kernel :math:`\exp(-\beta\lVert x_i - x_j\rVert^2)` on a uniform
    sample of flat space, :math:`(4\beta)^2\,\Gamma_2(f) \to \lVert\operatorname{Hess} f\rVert^2`
    (Bochner's formula with zero Ricci curvature); a linear ``f`` has :math:`\Gamma_2(f) = 0` away from
    the boundary.

    Parameters
    ----------
    rates : array or scipy.sparse matrix, shape=[n, n]
        Jump rates: finite, off-diagonal entries nonnegative, diagonal ignored.
    f, g : array, shape=[n] or [n, m]
        ``g`` defaults to ``f``; shape [n, m] is taken column by column.

    Returns
    -------
    array, shape of ``f``

    References
    ----------
    Attention Geometry §5, §8; book/reference.md §A.5 "Γ₂ and curvature" [RECON; standard].
    Y. Lin, S.-T. Yau, "Ricci curvature and eigenvalue estimate on locally finite graphs",
    Math. Res. Lett. 17 (2010) 343.

    Examples
    --------
    On a long cycle with unit rates (the lattice :math:`\mathbb Z`), :math:`f(x) = x^2` has
    :math:`\Gamma(f)(x) = 4x^2 + 1` and :math:`\Delta f = 2`, so :math:`\Gamma_2(f) = \tfrac12\Delta\Gamma(f) = 4
    = (f'')^2`, the continuum value.

    >>> import numpy as np
    >>> n = 20
    >>> W = np.roll(np.eye(n), 1, axis=1) + np.roll(np.eye(n), -1, axis=1)
    >>> x = np.arange(n) - n // 2
    >>> gamma2(W, x**2.0)[5:15].tolist()
    [4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    """  # noqa: E501
    jump = JumpRates(rates)
    f, g = _paired(jump, f, g)
    # Γ₂ is quadratic in the rates: rates of 1e300 overflow it; refused just below, naming the inputs.
    with np.errstate(over="ignore", invalid="ignore"):
        lf = jump.generator(f)
        if g is f:
            out = 0.5 * jump.generator(jump.edge_form(f, f)) - jump.edge_form(f, lf)
        else:
            lg = jump.generator(g)
            out = 0.5 * (jump.generator(jump.edge_form(f, g)) - jump.edge_form(f, lg) - jump.edge_form(g, lf))
    return check_finite_output("gamma2", out, **_named(rates=rates, f=f, g=g))


def hessian_form(rates, f, g, h):
    r"""Discrete Hessian :math:`H(f)(g,h) = \tfrac12[\Gamma(g,\Gamma(f,h)) + \Gamma(h,\Gamma(f,g)) - \Gamma(f,\Gamma(g,h))]`.

    For a diffusion with :math:`\Gamma = \hbar\langle\nabla\cdot, \nabla\cdot\rangle` the paper's identity

    .. math::

        \Gamma(g, \Gamma(f, h)) + \Gamma(h, \Gamma(f, g)) - \Gamma(f, \Gamma(g, h))
            = 2\hbar^2 \operatorname{Hess} f(\nabla g, \nabla h)

    makes :math:`H(f)(g, h) = \hbar^2\operatorname{Hess} f(\nabla g, \nabla h)`, a coordinate-free
    Hessian.  Here :math:`\Gamma` is the carré du champ of jump rates (off-diagonal ``rates``, diagonal
    ignored, negative generator :math:`(\mathcal L f)_i = \sum_{j\ne i} W_{ij}(f_j - f_i)`).  For the
    Gauss kernel :math:`\exp(-\beta\lVert x_i - x_j\rVert^2)` on a uniform sample, :math:`\hbar` is
    :math:`1/(4\beta)`, so :math:`(4\beta)^2 H(f)(g, h) \to \operatorname{Hess} f(\nabla g, \nabla h)`
    with a relative error :math:`O(1/\beta)` [DERIVED].

    Parameters
    ----------
    rates : array or scipy.sparse matrix, shape=[n, n]
        Jump rates: finite, off-diagonal entries nonnegative, diagonal ignored.
    f, g, h : array, shape=[n] or [n, m]
        All three of one shape; shape [n, m] is taken column by column.

    Returns
    -------
    array, shape of ``f``

    References
    ----------
    Attention Geometry §5 (the Hessian identity); book/reference.md §A.5 [SEED fragment + DERIVED].
    Bakry, Gentil, Ledoux (2014), §C.5 (Hessian in Γ-calculus).

    Examples
    --------
    On the lattice :math:`\mathbb Z` (a long cycle, unit rates, :math:`\hbar = 1`), :math:`f = x^2`,
    :math:`g = h = x`: :math:`\operatorname{Hess} f(\nabla g, \nabla h) = f'' = 2`, and the discrete
    form returns it exactly away from the seam.

    >>> import numpy as np
    >>> n = 20
    >>> W = np.roll(np.eye(n), 1, axis=1) + np.roll(np.eye(n), -1, axis=1)
    >>> x = np.arange(n) - n // 2.0
    >>> hessian_form(W, x**2, x, x)[5:15].tolist()
    [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    """  # noqa: E501
    jump = JumpRates(rates)
    f, g = _paired(jump, f, g, "f", "g")
    f, h = _paired(jump, f, h, "f", "h")
    gamma = jump.edge_form
    # Quadratic in the rates, cubic in the functions: an overflow is refused just below, naming the inputs.
    with np.errstate(over="ignore", invalid="ignore"):
        out = 0.5 * (gamma(g, gamma(f, h)) + gamma(h, gamma(f, g)) - gamma(f, gamma(g, h)))
    return check_finite_output("hessian_form", out, **_named(rates=rates, f=f, g=g, h=h))
