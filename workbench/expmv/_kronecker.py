r"""Kronecker sums :math:`A \oplus B = A\otimes I + I\otimes B`, applied and exponentiated through their factors.

:class:`KroneckerSum` represents :math:`A \oplus B` — the generator of two independent processes, or the
Laplacian of a product graph such as a grid — without forming it, and :func:`expmv_kronecker_sum` uses
the exact factorisation :math:`e^{t(A\oplus B)} = e^{tA}\otimes e^{tB}`: each factor is exponentiated
densely when small, recursively when it is itself a Kronecker sum, and otherwise by
:func:`~workbench.expmv._chebyshev.expmv_chebyshev` or
:func:`~workbench.expmv._uniformization.expmv_uniformization`.  :func:`expmv_kronecker` is the same as a
method of the ``expmv`` front door.  :class:`KroneckerSum` implements the small operator protocol of
:mod:`workbench.expmv._linear`, so every ``expmv`` method accepts it too.

References
----------
Lie-Exponential Roadmap: "Kronecker-lifted exponential".
R. A. Horn and C. R. Johnson, *Topics in Matrix Analysis*, Cambridge (1991), §4.4 (Kronecker sums,
:math:`e^{A\oplus B} = e^{A}\otimes e^{B}`).
"""

from __future__ import annotations

import numpy as np

from workbench.backend import matrix_exp, namespace
from workbench.expmv._blocks import promote_block
from workbench.expmv._chebyshev import expmv_chebyshev
from workbench.expmv._linear import LinearMap, as_linear_map, as_operand, as_product_operand
from workbench.expmv._uniformization import expmv_uniformization
from workbench.validation import check_in_range, check_matching

__all__ = ["KroneckerSum", "expmv_kronecker", "expmv_kronecker_sum"]


class KroneckerSum:
    r"""The Kronecker sum :math:`A \oplus B = A\otimes I_m + I_n\otimes B` of square :math:`A` (n×n), :math:`B` (m×m).

    **Vectorisation (row-major).**  A vector of length :math:`nm` is a matrix :math:`X \in \mathbb R^{n\times m}`
    read row by row, :math:`v_{im + j} = X_{ij}` (numpy's ``X.reshape(n * m)``, C order).  Then
    :math:`(A\otimes B)\,\mathrm{vec}(X) = \mathrm{vec}(AXB^\top)`, hence

    .. math::

        (A\oplus B)\,\mathrm{vec}(X) = \mathrm{vec}(AX + XB^\top),\qquad
        e^{t(A\oplus B)}\,\mathrm{vec}(X) = \mathrm{vec}\big(e^{tA}\,X\,e^{tB^\top}\big)

    (the two terms commute, so :math:`e^{t(A\oplus B)} = e^{tA}\otimes e^{tB}`).  With this convention the
    Laplacian of the :math:`n\times m` grid, vertices :math:`(i, j)` in lexicographic order, is
    :math:`L_{P_n}\oplus L_{P_m}`.  A block :math:`V \in \mathbb R^{nm\times k}` is :math:`k` such vectors.
    Factors may be anything :func:`~workbench.expmv._linear.as_linear_map` accepts, including
    :class:`~workbench.expmv.BandedMatrix` and another :class:`KroneckerSum` (:math:`A\oplus B\oplus C`).

    Parameters
    ----------
    A, B : operator
        Square factors, of orders :math:`n` and :math:`m`.

    References
    ----------
    Horn & Johnson, *Topics in Matrix Analysis*, §4.4 and Theorem 4.4.5 (the vec identity).

    Examples
    --------
    >>> import numpy as np
    >>> A, B = np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [4.0, 0.0, 5.0]])
    >>> S = KroneckerSum(A, B)
    >>> dense = np.kron(A, np.eye(3)) + np.kron(np.eye(2), B)
    >>> v = np.arange(6.0)
    >>> bool(np.allclose(S.matmat(v), dense @ v)), S.shape
    (True, (6, 6))
    """

    def __init__(self, A, B):
        self.factors = (as_linear_map(A, "A"), as_linear_map(B, "B"))
        libraries = ["torch" if "torch" in f.namespace().__name__ else "numpy" for f in self.factors]
        if libraries[0] != libraries[1]:
            raise TypeError(
                f"A and B must live in one array library, got A in {libraries[0]} and B in {libraries[1]}; "
                "convert them to one library (workbench.backend.to_backend)"
            )
        n, m = (f.n for f in self.factors)
        self.shape = (n * m, n * m)
        self._cache: dict[str, object] = {}

    @property
    def n(self) -> int:
        """The order :math:`nm`."""
        return self.shape[0]

    @property
    def dtype(self):
        """The promoted element type of the factors."""
        a, b = self.factors
        return a.dtype if a.dtype == b.dtype else a.namespace().result_type(a.dtype, b.dtype)

    def namespace(self):
        """The array namespace of the products (that of the first factor)."""
        return self.factors[0].namespace()

    def matmat(self, v):
        r""":math:`(A\oplus B)V = \mathrm{vec}(AX + XB^\top)` for ``v`` of shape ``[nm, k]`` or ``[nm]``.

        ``v`` must be numeric and finite, in the array library of the factors; the product has the
        promoted dtype (:func:`~workbench.expmv._linear.result_dtype`).

        Raises
        ------
        TypeError
            For a non-numeric ``v`` or one in another array library than the factors.
        ValueError
            For a non-finite ``v``, or one whose shape is not ``[nm]`` or ``[nm, k]``.
        """
        as_map = LinearMap(self, "structured")
        v = as_product_operand(as_map, v, "v", "A ⊕ B")
        return self._matmat_unchecked(promote_block(as_map, v))

    def _matmat_unchecked(self, v):
        # The product for blocks the expmv methods built and checked (see workbench.expmv._linear).
        a, b = self.factors
        return _apply_factors(v, a.n, b.n, a._matmat, b._matmat, add=True)

    def __matmul__(self, v):
        return self.matmat(v)

    def diagonal(self):
        r"""The diagonal :math:`a_{ii} + b_{jj}` in row-major order (host numpy), or ``None`` if a factor has none."""
        da, db = (f.diagonal() for f in self.factors)
        if da is None or db is None:
            return None
        return np.add.outer(np.asarray(da, dtype=float), np.asarray(db, dtype=float)).reshape(-1)

    def one_norm(self) -> float:
        r""":math:`\lVert A\oplus B\rVert_1`, exact when both factors are explicit, else :math:`\lVert A\rVert_1 + \lVert B\rVert_1`.

        Column :math:`(j, l)` sums :math:`\sum_{i\ne j}|a_{ij}| + \sum_{p\ne l}|b_{pl}| + |a_{jj} + b_{ll}|`.
        """  # noqa: E501
        hosts = [f.host_matrix(strict=False) for f in self.factors]
        if any(h is None for h in hosts):
            return self.factors[0].one_norm() + self.factors[1].one_norm()
        parts = []
        for h in hosts:
            d = np.asarray(h.diagonal(), dtype=float)
            parts.append((np.asarray(abs(h).sum(axis=0), dtype=float).ravel() - np.abs(d), d))
        (off_a, da), (off_b, db) = parts
        return float((off_a[:, None] + off_b[None, :] + np.abs(da[:, None] + db[None, :])).max())

    def is_symmetric(self, rtol: float = 1e-12) -> bool:
        """Whether both factors are symmetric (then so is the sum; the converse holds too); ``rtol`` as theirs."""
        rtol = check_in_range("rtol", rtol, 0.0)
        return all(f.is_symmetric(rtol) for f in self.factors)

    def is_markov_generator(self, atol: float = 1e-10) -> bool:
        r"""Whether both factors are Markov generators (then :math:`A\oplus B` generates the product chain).

        Sufficient, not necessary: :math:`(A + cI)\oplus(B - cI)` is the same operator, so pass the factors
        with zero row sums.  ``atol`` is a finite number :math:`\ge 0`.
        """
        atol = check_in_range("atol", atol, 0.0)
        return all(f.is_markov_generator(atol) for f in self.factors)

    def gershgorin(self) -> tuple[float, float]:
        r"""Gershgorin bounds of :math:`A\oplus B`: row :math:`(i, j)` has centre :math:`a_{ii}+b_{jj}`, radius :math:`r_i + s_j`, so the bounds add."""  # noqa: E501
        (la, ha), (lb, hb) = (f.gershgorin() for f in self.factors)
        return la + lb, ha + hb

    def to_scipy(self):
        r""":math:`A\otimes I + I\otimes B` as a scipy CSR array (both factors must be explicit)."""
        import scipy.sparse

        hosts = [f.host_matrix(strict=False) for f in self.factors]
        if any(h is None for h in hosts):
            raise ValueError("to_scipy needs explicit factors (matrices, BandedMatrix or KroneckerSum)")
        n, m = (f.n for f in self.factors)
        return scipy.sparse.csr_array(
            scipy.sparse.kron(hosts[0], scipy.sparse.eye_array(m))
            + scipy.sparse.kron(scipy.sparse.eye_array(n), hosts[1])
        )

    def __repr__(self) -> str:
        return f"KroneckerSum({self.factors[0].n} × {self.factors[1].n})"


def _apply_factors(v, n: int, m: int, left, right, *, add: bool):
    r"""Apply ``left`` along the first and ``right`` along the second index of :math:`X` (row-major vec).

    ``add=True``: :math:`\mathrm{vec}(\text{left}(X) + \text{right}(X^\top)^\top)` (Kronecker sum);
    ``add=False``: the composition :math:`\text{right}` after :math:`\text{left}` (Kronecker product).
    """
    xp = namespace(v)
    vector = v.ndim == 1
    k = 1 if vector else int(v.shape[1])
    x = xp.reshape(v, (n, m * k))  # rows i, columns (j, c)
    first = left(x)
    source = x if add else first
    swapped = xp.reshape(xp.permute_dims(xp.reshape(source, (n, m, k)), (1, 0, 2)), (m, n * k))
    second = xp.permute_dims(xp.reshape(right(swapped), (m, n, k)), (1, 0, 2))
    out = xp.reshape(first, (n, m, k)) + second if add else second
    return xp.reshape(out, (n * m,) if vector else (n * m, k))


def _factor_exponential(op, t: float, x, *, dense_limit: int, tol: float, factor_expmv):
    r""":math:`e^{tF}X` for one factor :math:`F` and a block ``x`` ``[n_F, ·]``; returns (result, method, products)."""
    if isinstance(op.a, KroneckerSum):
        inner_a, inner_b = op.a.factors
        result, info = _kronecker_apply(
            inner_a, inner_b, x, t, dense_limit=dense_limit, tol=tol, factor_expmv=factor_expmv
        )
        return result, "kronecker-sum", info["matvecs"]
    if factor_expmv is not None:
        return factor_expmv(op.a, x, t), "factor_expmv", 0
    matrix = op.dense(x) if op.n <= dense_limit else None
    if matrix is not None:
        xp = namespace(x)
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = t * matrix
        if not bool(xp.all(xp.isfinite(scaled))):
            raise ValueError(
                f"t·F overflows {matrix.dtype} for a Kronecker factor F of order {op.n} (t = {t:g}, "
                f"‖F‖₁ = {op.one_norm():.3g}): e^(tF) is beyond the floating range; shorten t or rescale the factors"
            )
        try:
            exponential = matrix_exp(scaled)
        except ValueError:  # scaled is finite and square: only a non-finite e^(tF) is refused there
            raise ValueError(
                f"e^(tF) is not finite in {matrix.dtype} for the Kronecker factor F = {op.name} of order {op.n} "
                f"(t = {t:g}, ‖{op.name}‖₁ = {op.one_norm():.3g}): the exponential overflows or its scaling and "
                f"squaring loses it; shorten t or rescale {op.name}"
            ) from None
        return exponential @ x, "dense", 0
    if op.is_symmetric():
        result, info = expmv_chebyshev(op, x, t, tol=tol)
        return result, "chebyshev", info["matvecs"]
    if op.is_markov_generator() and t >= 0:
        result, info = expmv_uniformization(op, x, t, tol=tol)
        return result, "uniformization", info["matvecs"]
    raise ValueError(
        f"a Kronecker factor of order {op.n} exceeds dense_limit = {dense_limit} and is neither symmetric nor a "
        "Markov generator (with t >= 0); pass factor_expmv=callable(F, X, t) -> e^(tF)X, e.g. "
        "lambda F, X, t: workbench.expmv.expmv(F, X, t)"
    )


def _kronecker_apply(a, b, v, t, *, dense_limit, tol, factor_expmv):
    methods, products = [], 0

    def exp_factor(op):
        def apply(x):
            nonlocal products
            result, method, count = _factor_exponential(
                op, t, x, dense_limit=dense_limit, tol=tol, factor_expmv=factor_expmv
            )
            methods.append(method)
            products += count
            return result

        return apply

    result = _apply_factors(v, a.n, b.n, exp_factor(a), exp_factor(b), add=False)
    xp = namespace(result)
    if not bool(xp.all(xp.isfinite(result))):
        raise ValueError(
            f"exp(t(A⊕B))B is not finite in {result.dtype} (t = {t:g}, factor norms {a.one_norm():.3g} and "
            f"{b.one_norm():.3g}): it overflows, or a factor exponential failed at this scale; shorten t or "
            "rescale the factors or B"
        )
    return result, {"method": "kronecker-sum", "matvecs": products, "factor_methods": methods, "error_estimate": None}


def expmv_kronecker_sum(A, B, V, t=1.0, *, dense_limit=2048, tol=2.0**-53, factor_expmv=None):
    r"""Apply :math:`e^{t(A\oplus B)}` exactly through the factors: :math:`\mathrm{vec}(e^{tA}\,X\,e^{tB^\top})`.

    .. math::

        e^{t(A\oplus B)}\,\mathrm{vec}(X) = (e^{tA}\otimes e^{tB})\,\mathrm{vec}(X)
        = \mathrm{vec}\big(e^{tA}\,X\,(e^{tB})^\top\big)

    in the row-major convention of :class:`KroneckerSum` (:math:`v_{im+j} = X_{ij}`).  No approximation
    is made beyond the factor exponentials: for factors of order at most ``dense_limit`` (and explicit
    entries) a dense Padé exponential (:func:`~workbench.backend.matrix_exp`, :math:`O(n^3 + m^3)` once,
    then :math:`O(nm(n+m)k)`); a :class:`KroneckerSum` factor recursively (:math:`A\oplus B\oplus C`);
    larger factors with ``factor_expmv`` if given, else :func:`~workbench.expmv._chebyshev.expmv_chebyshev`
    (symmetric) or :func:`~workbench.expmv._uniformization.expmv_uniformization` (generator, :math:`t\ge0`),
    at ``tol``.  The error is then that of the factor method (dense: a few units of roundoff relative to
    :math:`\lVert e^{tA}\rVert\lVert e^{tB}\rVert\lVert X\rVert`).

    Parameters
    ----------
    A, B : operator
        Square factors of orders :math:`n`, :math:`m` (dense, sparse, :class:`~workbench.expmv.BandedMatrix`,
        :class:`KroneckerSum`).
    V : array, shape=[nm] or [nm, k]
        numpy or torch, real or complex; results in its library and device, in the dtype of
        ``result_type(A, B, V)``.
    t : float
        Real time.
    dense_limit : int
        Largest factor order exponentiated densely.
    tol : float
        Tolerance passed to the factor methods.
    factor_expmv : callable, optional
        ``factor_expmv(F, X, t) -> e^{tF}X`` for large factors (``F`` as given, ``X`` a block).

    Returns
    -------
    array
        Same shape as ``V``.

    References
    ----------
    Horn & Johnson, *Topics in Matrix Analysis*, Theorem 4.4.5 and §6.2 (:math:`e^{A\oplus B} = e^A\otimes e^B`).

    Examples
    --------
    Heat on a 4 × 3 grid, against the dense exponential of the grid Laplacian:

    >>> import numpy as np, scipy.linalg
    >>> def path(n):
    ...     return np.diag(np.r_[1.0, 2 * np.ones(n - 2), 1.0]) - np.eye(n, k=1) - np.eye(n, k=-1)
    >>> grid = np.kron(path(4), np.eye(3)) + np.kron(np.eye(4), path(3))
    >>> v = np.arange(12.0)
    >>> y = expmv_kronecker_sum(-path(4), -path(3), v, t=0.7)
    >>> bool(np.allclose(y, scipy.linalg.expm(-0.7 * grid) @ v, rtol=1e-13, atol=0))
    True
    """
    a, b = as_linear_map(A, "A"), as_linear_map(B, "B")
    t = check_in_range("t", t)
    dense_limit = int(check_in_range("dense_limit", dense_limit, 0))
    structured = as_linear_map(KroneckerSum(a, b))
    V = as_operand("V", V, keep_integers=True)
    if V.ndim not in (1, 2):
        raise ValueError(f"V must have shape [nm] or [nm, k], got shape {tuple(V.shape)}")
    check_matching("A ⊕ B columns", a.n * b.n, "V rows", V.shape[0])
    structured.check_operand(V, "A", "V")
    V = promote_block(structured, V)  # complex factors: complex V
    result, _ = _kronecker_apply(a, b, V, t, dense_limit=dense_limit, tol=tol, factor_expmv=factor_expmv)
    return result


def expmv_kronecker(op, B, t, *, tol=2.0**-53, dense_limit=2048, factor_expmv=None):
    r"""Method form of :func:`expmv_kronecker_sum` for a :class:`KroneckerSum` operator: returns ``(Y, info)``.

    ``info``: ``method`` ("kronecker-sum"), ``matvecs`` (block products spent by iterative factor methods;
    0 when the factors are exponentiated densely), ``factor_methods``, ``error_estimate`` (None: exact up
    to the factor exponentials).

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> A, B = np.array([[-1.0, 1.0], [0.5, -0.5]]), np.array([[-2.0, 2.0], [1.0, -1.0]])
    >>> Y, info = expmv_kronecker(KroneckerSum(A, B), np.eye(4), 0.3)
    >>> bool(np.allclose(Y, scipy.linalg.expm(0.3 * np.kron(A, np.eye(2)) + 0.3 * np.kron(np.eye(2), B)))), info["matvecs"]
    (True, 0)
    """  # noqa: E501
    structured = op.a if isinstance(op, LinearMap) else op
    if not isinstance(structured, KroneckerSum):
        raise TypeError(
            f"op must be a KroneckerSum: expmv_kronecker needs a KroneckerSum operator, got {type(structured).__name__}"
        )
    t = check_in_range("t", t)
    V = as_operand("B", B, keep_integers=True)
    if V.ndim not in (1, 2):
        raise ValueError(f"B must have shape [n] or [n, k], got shape {tuple(V.shape)}")
    check_matching("op columns", structured.n, "B rows", V.shape[0])
    as_linear_map(structured).check_operand(V, "op", "B")
    V = promote_block(as_linear_map(structured), V)
    a, b = structured.factors
    dense_limit = int(check_in_range("dense_limit", dense_limit, 0))
    return _kronecker_apply(a, b, V, t, dense_limit=dense_limit, tol=tol, factor_expmv=factor_expmv)
