r"""Magnus fusion of a linearised residual stack: replace :math:`L` layer matmuls by one exponential.

From the Lie-Exponential Roadmap ("MagnusBlock", "BCH/Magnus fusion micro-experiment"): a residual block
:math:`x \mapsto x + h A_\ell x` is the Euler step of :math:`\dot x = A(t) x`; its exact per-layer flow is
:math:`x \mapsto e^{h A_\ell} x` (:class:`ResidualStack`, :func:`residual_stack`).  The stack of :math:`L` such
layers is fused into one :math:`e^{\Omega}` by (a) the :math:`L`-factor BCH series of the layers
(:func:`workbench.experiments.fuse`) or (b) the Magnus series of the smooth generator :math:`A(t)` the layers
sample (:data:`FUSION_METHODS`); :func:`magnus_stack_table` measures both against the stack and the flow.

Conventions: :math:`[A, B] = AB - BA`; a stack applies layer 0 first, so its matrix is
:math:`e^{hA_{L-1}} \cdots e^{hA_0}` and the BCH letters (first letter leftmost) are the layers in reverse
order.  Everything here is numpy/scipy (float64); the benchmark ``benchmarks/bch_fusion.py`` times it.

References
----------
.. [1] Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)" and the "BCH/Magnus fusion
   micro-experiment" [SEED].
.. [2] S. Blanes, F. Casas, J. A. Oteo, J. Ros, "The Magnus expansion and some of its applications",
   *Phys. Rep.* 470 (2009), §2 (Magnus series), §3.4 (exponential midpoint rule, order 2).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.integrate
import scipy.linalg

from workbench.backend import to_numpy
from workbench.experiments.bch_fusion._fusion import MAX_ORDER, check_orders, fuse, square_matrices
from workbench.lie import magnus_omega
from workbench.validation import check_choice, check_finite, check_in_range, check_integer

__all__ = ["FUSION_METHODS", "ResidualStack", "magnus_stack_table", "residual_stack"]

#: Fusion routes of a residual stack: BCH of the layer factors, Magnus of the smooth generator A(t).
FUSION_METHODS = ("bch", "magnus")


@dataclass(frozen=True)
class ResidualStack:
    r"""A stack of :math:`L` linear residual layers sampling a smooth generator :math:`A(t) = \sum_j t^j X_j`.

    Model: the residual block :math:`x_{\ell+1} = x_\ell + h A_\ell x_\ell` is the Euler step of
    :math:`\dot x = A(t) x` on :math:`[0, T]`, :math:`h = T/L`; its exact per-layer flow, with the generator
    frozen at the layer's midpoint :math:`t_\ell = (\ell + \tfrac12) h`, is

    .. math::

        x_{\ell+1} = e^{h A_\ell} x_\ell, \quad A_\ell = A(t_\ell), \qquad
        P_{\text{stack}} = e^{h A_{L-1}} \cdots e^{h A_1} e^{h A_0},

    the exponential midpoint rule (global error :math:`O(h^2)` against the time-ordered exponential
    :math:`Y(T)`, :math:`\dot Y = A(t) Y`, :math:`Y(0) = I`).  Fusion replaces :math:`P_{\text{stack}}` by one
    :math:`e^{\Omega}` (:meth:`fused`).

    Parameters
    ----------
    coefficients : tuple of arrays, shape=[n, n]
        :math:`X_0, X_1, \dots` (at least one; square, one shape, finite; stored as numpy float64).
    n_layers : int
        :math:`L \ge 1`.
    horizon : float
        :math:`T > 0`, finite (the depth-time the stack covers).

    Raises
    ------
    ValueError
        On construction, for an empty, non-square, mixed-shape or non-finite ``coefficients``, ``n_layers < 1``
        or a ``horizon`` that is not a finite positive number (``TypeError`` for non-numbers).

    References
    ----------
    Lie-Exponential Roadmap, "Depth as time; residual as first order; exponential as exact flow" and
    "Magnus-style block generator: collapse many residual sublayers into one exact step" [SEED];
    Blanes–Casas–Oteo–Ros (2009), §3.4, exponential midpoint rule.

    Examples
    --------
    >>> import numpy as np
    >>> stack = residual_stack(n_layers=4, dim=3, horizon=0.2, seed=1)
    >>> x = np.ones((3, 2))
    >>> bool(np.allclose(stack.apply(x), stack.product() @ x, atol=1e-15))
    True
    """

    coefficients: tuple[np.ndarray, ...]
    n_layers: int
    horizon: float

    def __post_init__(self):
        arrays = square_matrices("coefficients", self.coefficients)
        coefficients = tuple(np.asarray(to_numpy(a), dtype=float) for a in arrays)
        for i, a in enumerate(coefficients):
            check_finite(f"coefficients[{i}]", a)
        object.__setattr__(self, "coefficients", coefficients)
        object.__setattr__(self, "n_layers", check_integer("n_layers", self.n_layers, 1))
        object.__setattr__(self, "horizon", check_in_range("horizon", self.horizon, 0.0, low_inclusive=False))

    @property
    def step(self) -> float:
        """The layer step :math:`h = T/L`."""
        return self.horizon / self.n_layers

    @property
    def times(self) -> np.ndarray:
        r"""Layer midpoints :math:`t_\ell = (\ell + \tfrac12) h`, shape [L]."""
        return (np.arange(self.n_layers) + 0.5) * self.step

    def generator_at(self, t: float) -> np.ndarray:
        r""":math:`A(t) = \sum_j t^j X_j`."""
        return sum(t**j * x for j, x in enumerate(self.coefficients))

    def generators(self) -> np.ndarray:
        r"""Layer generators :math:`A_\ell = A(t_\ell)`, shape [L, n, n]."""
        return np.stack([self.generator_at(t) for t in self.times])

    def layers(self) -> np.ndarray:
        r"""Layer matrices :math:`e^{h A_\ell}`, shape [L, n, n] (``scipy.linalg.expm``, batched)."""
        return scipy.linalg.expm(self.step * self.generators())

    def product(self) -> np.ndarray:
        r""":math:`P_{\text{stack}} = e^{h A_{L-1}} \cdots e^{h A_0}` (layer 0 acts first)."""
        return functools.reduce(lambda acc, layer: layer @ acc, self.layers(), np.eye(self.dim))

    def euler_product(self) -> np.ndarray:
        r"""The literal residual stack :math:`\prod_\ell (I + h A_\ell)`, later layers on the left."""
        eye = np.eye(self.dim)
        return functools.reduce(lambda acc, a: (eye + self.step * a) @ acc, self.generators(), eye)

    @property
    def dim(self) -> int:
        """Matrix size :math:`n`."""
        return int(self.coefficients[0].shape[0])

    def apply(self, x, layers: np.ndarray | None = None) -> np.ndarray:
        """Apply the stack layer by layer to columns ``x`` (shape [n, m]): :math:`L` matmuls."""
        layers = self.layers() if layers is None else layers
        for layer in layers:
            x = layer @ x
        return x

    def flow(self, rtol: float = 1e-13) -> np.ndarray:
        r"""The time-ordered exponential :math:`Y(T)` of :math:`\dot Y = A(t) Y` (``solve_ivp`` DOP853)."""
        n = self.dim

        def rhs(t, y):
            return (self.generator_at(t) @ y.reshape(n, n)).ravel()

        sol = scipy.integrate.solve_ivp(rhs, (0.0, self.horizon), np.eye(n).ravel(), method="DOP853", rtol=rtol,
                                        atol=rtol * 1e-2)  # fmt: skip
        return sol.y[:, -1].reshape(n, n)

    def fused(self, method: str, order: int) -> np.ndarray:
        r"""The fused generator :math:`\Omega` of the whole stack.

        ``method="bch"``: :math:`\Omega = \log(e^{hA_{L-1}} \cdots e^{hA_0})` truncated at degree ``order``
        (:func:`fuse` on the layers in reverse, letter ``A`` = last layer); at fixed :math:`L` the error
        against :math:`P_{\text{stack}}` is at most :math:`O(h^{\text{order}+1})`, and for smooth midpoint
        samples smaller: every bracket carries a difference :math:`A(t_i) - A(t_j) = O(h)`, and odd degrees lose
        a power by time symmetry (measured slopes 3, 5, 5, 7 for orders 1–4) [DERIVED].
        ``method="magnus"``: :math:`\Omega^{[p]}(T)` of the smooth :math:`A(t)`
        (:func:`workbench.lie.magnus_omega`, truncated at :math:`T^{p}`); it approximates :math:`Y(T)`
        to :math:`O(T^{p+1})`, hence :math:`P_{\text{stack}}` to :math:`O(h^{\min(p, 2) + 1})` at fixed :math:`L`.
        """
        check_choice("method", method, FUSION_METHODS)
        order = check_integer("order", order, 1, MAX_ORDER)
        if method == "bch":
            if self.n_layers > 12:
                raise ValueError(f"method 'bch' fuses at most 12 layers (series size), got n_layers={self.n_layers}")
            return fuse(list(self.step * self.generators())[::-1], order)
        return np.asarray(magnus_omega(list(self.coefficients), self.horizon, order))


def residual_stack(
    n_layers: int = 8, dim: int = 16, horizon: float = 0.5, n_terms: int = 3, seed: int = 0
) -> ResidualStack:
    r"""A random :class:`ResidualStack`: :math:`A(t) = \sum_j t^j X_j` with :math:`\lVert X_j \rVert_2 = 1`.

    :math:`X_j = G_j / \lVert G_j \rVert_2` for Gaussian :math:`G_j` (general, non-normal matrices, as a
    linearised residual branch would be), drawn from ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    n_layers : int
        :math:`L \ge 1`.
    dim : int
        :math:`n \ge 2`.
    horizon : float
        :math:`T \in (0, 2]`.  ``fused("magnus", p)`` warns (``RuntimeWarning``) when
        :math:`\int_0^T \lVert A \rVert_2 \ge \pi`, outside the Magnus convergence bound; :math:`T \le 1`
        stays inside for any ``n_terms`` (:math:`\int_0^1 \sum_j t^j \le 1 + \tfrac12 + \tfrac13 + \tfrac14`).
    n_terms : int
        Number of coefficients :math:`X_j`, in ``[1, 4]``.
    seed : int
        Random seed (>= 0).

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock: for a block with linearized generators
    :math:`A_1, \dots, A_r` … replace the block with one matmul :math:`W`" [SEED]; the polynomial
    :math:`A(t)` is our model of a smooth depth profile [RECON].

    Examples
    --------
    >>> stack = residual_stack(n_layers=6, dim=4, seed=0)
    >>> stack.generators().shape, round(stack.step, 4)
    ((6, 4, 4), 0.0833)
    """
    n_layers = check_integer("n_layers", n_layers, 1)
    dim = check_integer("dim", dim, 2)
    horizon = check_in_range("horizon", horizon, 0.0, 2.0, low_inclusive=False)
    n_terms = check_integer("n_terms", n_terms, 1, 4)
    seed = check_integer("seed", seed, 0)
    g = np.random.default_rng(seed).standard_normal((n_terms, dim, dim))
    coefficients = tuple(x / np.linalg.norm(x, 2) for x in g)
    return ResidualStack(coefficients, n_layers, horizon)


def _relative(approx: np.ndarray, exact: np.ndarray) -> float:
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


def magnus_stack_table(stack: ResidualStack, orders: Sequence[int] = (1, 2, 3, 4)) -> list[dict]:
    r"""Error of each fused stack against the exact stack and the continuous flow, per truncation order.

    Rows: the literal residual (Euler) stack :math:`\prod_\ell (I + hA_\ell)`; the exponential stack
    :math:`P_{\text{stack}}` itself; then, for each method of :meth:`ResidualStack.fused` and each order,
    :math:`e^{\Omega}`:

    .. math::

        \mathrm{err}_{\text{stack}} = \frac{\lVert M - P_{\text{stack}} \rVert_F}{\lVert P_{\text{stack}} \rVert_F},
        \qquad
        \mathrm{err}_{\text{flow}} = \frac{\lVert M - Y(T) \rVert_F}{\lVert Y(T) \rVert_F}.

    Applying :math:`M = e^{\Omega}` costs one matmul where the stack costs :math:`L`; the benchmark
    ``bch-fusion`` times both (this function does not time anything).

    Parameters
    ----------
    stack : ResidualStack
        The stack to fuse (e.g. :func:`residual_stack`).
    orders : sequence of int
        Truncation orders in ``[1, 6]``, distinct.

    Returns
    -------
    list of dict
        ``method`` (``"euler"``, ``"stack"``, ``"bch"``, ``"magnus"``), ``order`` (``None`` for the first
        two), ``matmuls`` (per application), ``error_stack``, ``error_flow``.

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock fusion on a trained model: measure latency/quality
    trade-off as a function of commutator truncation order" [SEED].

    Examples
    --------
    >>> rows = magnus_stack_table(residual_stack(n_layers=4, dim=4, horizon=0.2), orders=(1, 3))
    >>> [(r["method"], r["order"]) for r in rows]
    [('euler', None), ('stack', None), ('bch', 1), ('bch', 3), ('magnus', 1), ('magnus', 3)]
    >>> bool(rows[3]["error_stack"] < 1e-2 * rows[2]["error_stack"])  # BCH order 3 beats order 1
    True
    """
    if not isinstance(stack, ResidualStack):
        raise TypeError(f"stack must be a ResidualStack, got {type(stack).__name__}")
    orders = check_orders(orders)
    product, flow, euler = stack.product(), stack.flow(), stack.euler_product()
    rows = [
        {"method": "euler", "order": None, "matmuls": stack.n_layers,
         "error_stack": _relative(euler, product), "error_flow": _relative(euler, flow)},
        {"method": "stack", "order": None, "matmuls": stack.n_layers, "error_stack": 0.0,
         "error_flow": _relative(product, flow)},
    ]  # fmt: skip
    for method in FUSION_METHODS:
        for order in orders:
            fused = scipy.linalg.expm(stack.fused(method, order))
            rows.append({
                "method": method, "order": order, "matmuls": 1,
                "error_stack": _relative(fused, product), "error_flow": _relative(fused, flow),
            })  # fmt: skip
    return rows
