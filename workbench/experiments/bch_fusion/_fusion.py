r"""BCH fusion micro-experiment: collapse a product of small exponentials into one exponential.

From the Lie-Exponential Roadmap ("Fusion at inference", "BCH/Magnus fusion micro-experiment"):
draw :math:`k` small skew-symmetric generators :math:`A_1, \dots, A_k` at scale :math:`\varepsilon`, form the
exact product :math:`\Pi = e^{A_1} e^{A_2} \cdots e^{A_k}` and compare it with :math:`e^{\Omega_N}`, where
:math:`\Omega_N` is the multi-factor BCH series :math:`\log(e^{A_1}\cdots e^{A_k})` truncated at degree
:math:`N` (:math:`N = 1` is the plain sum; :func:`fuse`, :func:`fusion_table`).  The relative Frobenius error
falls like :math:`\varepsilon^{N+1}` (:func:`fusion_slopes`); at first order it is led by the pairwise
commutators,

.. math::

    e^{\sum_i A_i} - \Pi = -\tfrac12 \sum_{i<j} [A_i, A_j] + O(\varepsilon^3),

which is the roadmap's "fusion is safe when commutators are small" made quantitative.  The Magnus fusion of a
residual stack, which fuses with :func:`fuse` too, is :mod:`workbench.experiments.bch_fusion._stack`.

Conventions: :math:`[A, B] = AB - BA`; products are written left to right with the **first letter
leftmost**: ``bch_many(k, N)`` evaluated on ``(A_1, …, A_k)`` is :math:`\log(e^{A_1}\cdots e^{A_k})`
(letters ``A, B, C, …``).  Everything here is numpy/scipy (float64); the benchmark ``benchmarks/bch_fusion.py``
times it.

References
----------
.. [1] Lie-Exponential Roadmap, "Fusion at inference" and the "BCH/Magnus fusion micro-experiment"
   (safe flag: ``comm_max < 1e-2`` and second-order error ``< 1e-3``) [SEED].
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np
import scipy.linalg

from workbench.backend import to_numpy
from workbench.lie import bch_many
from workbench.rates import fit_rate
from workbench.validation import as_array, check_in_range, check_integer, check_square

__all__ = [
    "MAX_ORDER",
    "check_orders",
    "commutator_summary",
    "fuse",
    "fusion_slopes",
    "fusion_table",
    "product_of_exponentials",
    "square_matrices",
]

#: Highest BCH / Magnus truncation order accepted (cost of the exact series grows quickly past it).
MAX_ORDER = 6
#: Errors at or below this are treated as rounding in :func:`fusion_slopes` (float64, norms ~ 1).
ROUNDING_FLOOR = 1e-13


@functools.cache
def _bch_series(n_factors: int, order: int):
    return bch_many(n_factors, order)


def square_matrices(name: str, generators) -> list:
    if isinstance(generators, (str, bytes)) or not isinstance(generators, Sequence) or not len(generators):
        raise ValueError(f"{name} must be a non-empty sequence of square matrices, got {type(generators).__name__}")
    arrays = [as_array(f"{name}[{i}]", g, ndim=2) for i, g in enumerate(generators)]
    for i, a in enumerate(arrays):
        check_square(f"{name}[{i}]", a)
        if tuple(a.shape) != tuple(arrays[0].shape):
            raise ValueError(f"{name} must share one shape, got {tuple(arrays[0].shape)} and {tuple(a.shape)}")
    return arrays


def fuse(generators, order: int):
    r"""The fused generator :math:`\Omega_N`: :math:`\log(e^{A_1} \cdots e^{A_k})` truncated at degree ``order``.

    .. math::

        \Omega_N = \sum_i A_i + \tfrac12 \sum_{i<j} [A_i, A_j] + \dots \quad (\text{terms of degree} \le N)

    from the exact multi-factor BCH series :func:`workbench.lie.bch_many` (letter ``A`` is ``generators[0]``,
    the leftmost factor).  ``order=1`` is the sum.

    Parameters
    ----------
    generators : sequence of arrays, shape=[n, n]
        :math:`A_1, \dots, A_k` (numpy or torch), :math:`1 \le k \le 26`.
    order : int
        Truncation degree :math:`N`, in ``[1, 6]``.

    Returns
    -------
    array, shape=[n, n]
        :math:`\Omega_N`, in the generators' library.

    References
    ----------
    Lie-Exponential Roadmap, "Fusion at inference": :math:`\Omega \approx \sum A_i + \tfrac12
    \sum_{i<j}[A_i, A_j] + \cdots` [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import expm, logm
    >>> rng = np.random.default_rng(0)
    >>> a, b, c = (0.01 * rng.standard_normal((3, 3)) for _ in range(3))
    >>> omega = fuse([a, b, c], 4)
    >>> exact = logm(expm(a) @ expm(b) @ expm(c))
    >>> bool(np.linalg.norm(omega - exact) < 1e-9)  # omitted terms: degree 5, ‖A_i‖_F ≈ 0.02
    True
    """
    order = check_integer("order", order, 1, MAX_ORDER)
    arrays = square_matrices("generators", generators)
    if len(arrays) > 26:
        raise ValueError(f"generators must hold at most 26 matrices (letters A..Z), got {len(arrays)}")
    if len(arrays) == 1:
        return arrays[0]  # log(e^A) = A
    # No convergence warning here: fusion's error is what fusion_table measures and its safe flag judges.
    return _bch_series(len(arrays), order).evaluate(*arrays, check_convergence=False)


def product_of_exponentials(generators) -> np.ndarray:
    r"""The exact product :math:`\Pi = e^{A_1} e^{A_2} \cdots e^{A_k}` (first factor leftmost), dense.

    Each factor is ``scipy.linalg.expm`` (Padé with scaling and squaring, Al-Mohy–Higham 2009).

    Parameters
    ----------
    generators : sequence of arrays, shape=[n, n]
        :math:`A_1, \dots, A_k` (numpy; torch tensors are moved to the host).

    References
    ----------
    Lie-Exponential Roadmap, "BCH/Magnus fusion micro-experiment": the product of exponentials
    the fused :math:`e^\Omega` is compared with [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> product = product_of_exponentials([0.3 * a, 0.4 * a])  # commuting: e^{0.7 a}, a rotation
    >>> bool(np.allclose(product, [[np.cos(0.7), np.sin(0.7)], [-np.sin(0.7), np.cos(0.7)]], atol=1e-15))
    True
    """
    arrays = [np.asarray(to_numpy(a), dtype=float) for a in square_matrices("generators", generators)]
    out = np.eye(arrays[0].shape[0])
    for a in arrays:
        out = out @ scipy.linalg.expm(a)
    return out


def commutator_summary(generators) -> tuple[float, float]:
    r"""Largest and mean pairwise commutator norm :math:`\lVert [A_i, A_j] \rVert_F` over :math:`i < j`.

    .. math::

        c_{\max} = \max_{i<j} \lVert A_i A_j - A_j A_i \rVert_F, \qquad
        c_{\text{mean}} = \binom{k}{2}^{-1} \sum_{i<j} \lVert [A_i, A_j] \rVert_F

    Parameters
    ----------
    generators : sequence of arrays, shape=[n, n]
        At least two matrices (numpy; torch tensors are moved to the host).

    References
    ----------
    Lie-Exponential Roadmap, "Curriculum on non-commutativity" and the fusion micro-experiment's
    ``comm_max`` [SEED].

    See Also
    --------
    workbench.lens.commutator_norms : the full matrix :math:`\lVert [S_\ell, S_m] \rVert_F` (log lens); this
        function summarises its strict upper triangle.

    Examples
    --------
    >>> import numpy as np
    >>> e12, e21 = np.eye(2, k=1), np.eye(2, k=-1)
    >>> commutator_summary([e12, e21, np.eye(2)])  # [E12, E21] = diag(1, -1); I commutes with all
    (1.4142135623730951, 0.47140452079103173)
    """
    arrays = [np.asarray(to_numpy(a), dtype=float) for a in square_matrices("generators", generators)]
    if len(arrays) < 2:
        raise ValueError(f"generators must hold at least 2 matrices for a commutator, got {len(arrays)}")
    norms = [
        float(np.linalg.norm(arrays[i] @ arrays[j] - arrays[j] @ arrays[i]))
        for i in range(len(arrays))
        for j in range(i + 1, len(arrays))
    ]
    return max(norms), float(np.mean(norms))


def _unit_skew(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """``count`` skew-symmetric matrices (M − Mᵀ)/‖M − Mᵀ‖_F with Gaussian M, shape [count, dim, dim]."""
    m = rng.standard_normal((count, dim, dim))
    skew = m - np.swapaxes(m, -1, -2)
    return skew / np.linalg.norm(skew, axis=(-2, -1), keepdims=True)


def check_orders(orders) -> tuple[int, ...]:
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Sequence) or not len(orders):
        raise ValueError(f"orders must be a non-empty sequence of integers in [1, {MAX_ORDER}], got {orders!r}")
    checked = tuple(check_integer(f"orders[{i}]", n, 1, MAX_ORDER) for i, n in enumerate(orders))
    if len(set(checked)) != len(checked):
        raise ValueError(f"orders must be distinct, got {tuple(orders)!r}")
    return checked


def _check_scales(name: str, scales, high: float) -> tuple[float, ...]:
    if isinstance(scales, (str, bytes)) or not isinstance(scales, Sequence) or not len(scales):
        raise ValueError(f"{name} must be a non-empty sequence of numbers in (0, {high:g}], got {scales!r}")
    return tuple(check_in_range(f"{name}[{i}]", s, 0.0, high, low_inclusive=False) for i, s in enumerate(scales))


def fusion_table(
    n_generators: int = 4,
    dim: int = 8,
    scales: Sequence[float] = (1e-1, 3e-2, 1e-2, 3e-3),
    orders: Sequence[int] = (1, 2, 3, 4),
    seed: int = 0,
    comm_threshold: float = 1e-2,
    err_threshold: float = 1e-3,
) -> list[dict]:
    r"""BCH fusion of :math:`k` small skew-symmetric exponentials: error per truncation order vs commutators.

    For each scale :math:`\varepsilon`, :math:`A_i = \varepsilon B_i` with fixed
    :math:`B_i = (M_i - M_i^\top)/\lVert M_i - M_i^\top \rVert_F` (Gaussian :math:`M_i`, drawn once from
    ``seed``, so only the scale changes along the table and :math:`\lVert A_i \rVert_F = \varepsilon`).
    With :math:`\Pi = e^{A_1} \cdots e^{A_k}` and :math:`\Omega_N` from :func:`fuse`:

    .. math::

        \mathrm{err}_N = \frac{\lVert e^{\Omega_N} - \Pi \rVert_F}{\lVert \Pi \rVert_F} = O(\varepsilon^{N+1}),
        \qquad
        \rho = \frac{\mathrm{err}_1 \lVert \Pi \rVert_F}{\lVert \tfrac12 \sum_{i<j} [A_i, A_j] \rVert_F}
        = 1 + O(\varepsilon),

        \text{safe} = \bigl(c_{\max} < \text{comm\_threshold}\bigr) \wedge
        \bigl(\mathrm{err}_2 < \text{err\_threshold}\bigr).

    Parameters
    ----------
    n_generators : int
        :math:`k`, in ``[2, 8]``.
    dim : int
        Matrix size :math:`n \ge 2`.
    scales : sequence of float
        The scales :math:`\varepsilon \in (0, 1]`.
    orders : sequence of int
        Truncation degrees :math:`N` in ``[1, 6]``, distinct (``err_2`` for the safe flag is computed
        whether or not 2 is listed).
    seed : int
        Seed of the ``numpy.random.Generator`` drawing :math:`M_i`.
    comm_threshold, err_threshold : float
        The safe-flag thresholds (> 0); the roadmap's defaults are ``1e-2`` and ``1e-3``.

    Returns
    -------
    list of dict
        One row per scale: ``scale``, ``comm_max``, ``comm_mean`` (:func:`commutator_summary`),
        ``bracket_norm`` (:math:`\lVert \tfrac12 \sum_{i<j}[A_i, A_j] \rVert_F`), ``errors``
        (``{N: err_N}``), ``err_2``, ``leading_ratio`` (:math:`\rho`; ``inf`` if every commutator vanishes)
        and ``safe``.

    References
    ----------
    Lie-Exponential Roadmap, "BCH/Magnus fusion micro-experiment": draw small skew generators,
    compare :math:`\prod_i \exp(A_i)` with :math:`\exp(\Omega)` for first- and second-order BCH, report the
    relative Frobenius error against commutator norms, flag safe fusion [SEED].  The higher orders and the
    leading constant :math:`\rho \to 1` are [DERIVED] from the BCH series.

    Examples
    --------
    >>> rows = fusion_table(n_generators=3, dim=4, scales=(1e-2, 1e-3), orders=(1, 2))
    >>> [row["safe"] for row in rows]
    [True, True]
    >>> e1, e2 = (rows[1]["errors"][n] for n in (1, 2))
    >>> bool(e2 < 1e-3 * e1)  # one more order of ε = 1e-3
    True
    >>> bool(abs(rows[1]["leading_ratio"] - 1) < 1e-2)  # err_1 is ½Σ[A_i, A_j] to O(ε)
    True
    """
    n_generators = check_integer("n_generators", n_generators, 2, 8)
    dim = check_integer("dim", dim, 2)
    scales = _check_scales("scales", scales, 1.0)
    orders = check_orders(orders)
    seed = check_integer("seed", seed, 0)
    comm_threshold = check_in_range("comm_threshold", comm_threshold, 0.0, low_inclusive=False)
    err_threshold = check_in_range("err_threshold", err_threshold, 0.0, low_inclusive=False)
    base = _unit_skew(np.random.default_rng(seed), n_generators, dim)
    rows = []
    for eps in scales:
        generators = list(eps * base)
        product = product_of_exponentials(generators)
        size = np.linalg.norm(product)

        def error(order: int, generators=generators, product=product, size=size) -> float:
            return float(np.linalg.norm(scipy.linalg.expm(fuse(generators, order)) - product) / size)

        errors = {n: error(n) for n in orders}
        err_2 = errors[2] if 2 in orders else error(2)
        err_1 = errors[1] if 1 in orders else error(1)
        comm_max, comm_mean = commutator_summary(generators)
        bracket = 0.5 * sum(
            a @ b - b @ a for i, a in enumerate(generators) for b in generators[i + 1 :]
        )  # ½ Σ_{i<j} [A_i, A_j]
        bracket_norm = float(np.linalg.norm(bracket))
        rows.append({
            "scale": float(eps),
            "comm_max": comm_max,
            "comm_mean": comm_mean,
            "bracket_norm": bracket_norm,
            "errors": errors,
            "err_2": err_2,
            "leading_ratio": float(err_1 * size / bracket_norm) if bracket_norm > 0 else float("inf"),
            "safe": bool(comm_max < comm_threshold and err_2 < err_threshold),
        })  # fmt: skip
    return rows


def _check_rows(rows: Sequence) -> None:
    """Check that every row has a positive ``scale`` and an ``errors`` mapping with the first row's orders."""
    orders = None
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or "scale" not in row or "errors" not in row:
            got = sorted(map(str, row)) if isinstance(row, Mapping) else type(row).__name__
            raise ValueError(f"rows[{i}] must be a fusion_table row with keys 'scale' and 'errors', got {got}")
        check_in_range(f"rows[{i}]['scale']", row["scale"], 0.0, low_inclusive=False)
        errors = row["errors"]
        if not isinstance(errors, Mapping) or not errors:
            raise ValueError(f"rows[{i}]['errors'] must be a non-empty mapping order -> error, got {errors!r}")
        if orders is None:
            orders = set(errors)
        elif set(errors) != orders:
            raise ValueError(
                f"rows[{i}]['errors'] must have the orders of rows[0], {sorted(orders)}, got {sorted(errors)}"
            )
        for order, value in errors.items():
            check_in_range(f"rows[{i}]['errors'][{order!r}]", value, 0.0)


def fusion_slopes(rows: Sequence[dict], floor: float = ROUNDING_FLOOR) -> dict[int, float | None]:
    r"""Fitted log-log slope of :math:`\mathrm{err}_N` against :math:`\varepsilon`, per order (expect :math:`N+1`).

    .. math::

        \mathrm{err}_N \approx C_N \varepsilon^{p_N}, \qquad
        p_N = \text{least-squares slope of } \log \mathrm{err}_N \text{ on } \log \varepsilon

    Errors at or below ``floor`` are rounding, not truncation, and are left out of the fit; an order with
    fewer than two points above it gets ``None``.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`fusion_table`: mappings with a ``scale`` > 0 and ``errors`` (``{N: err_N}``, finite,
        >= 0, the same orders in every row); anything else raises a ``ValueError`` naming the row.
    floor : float
        Rounding floor (> 0), default ``1e-13``.

    References
    ----------
    Lie-Exponential Roadmap, "Fusion at inference: controllable approximation based on commutator
    norms" [SEED]; the slope :math:`N + 1` is the degree of the first omitted BCH term [DERIVED].

    Examples
    --------
    >>> slopes = fusion_slopes(fusion_table(n_generators=2, dim=4, orders=(1, 2)))
    >>> [round(slopes[n]) for n in (1, 2)]
    [2, 3]
    """
    floor = check_in_range("floor", floor, 0.0, low_inclusive=False)
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or not len(rows):
        raise ValueError(f"rows must be a non-empty sequence of fusion_table rows, got {rows!r}")
    _check_rows(rows)
    slopes: dict[int, float | None] = {}
    for order in rows[0]["errors"]:
        points = [(row["scale"], row["errors"][order]) for row in rows if row["errors"][order] > floor]
        slopes[order] = fit_rate(*zip(*points, strict=True)) if len(points) >= 2 else None
    return slopes
