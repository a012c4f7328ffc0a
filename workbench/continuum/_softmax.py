"""The small-β expansion of softmax attention."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from workbench.backend import namespace
from workbench.validation import as_array, as_scalar, check_finite_output, check_finite_result, check_in_range

__all__ = ["softmax_first_order", "softmax_second_order", "softmax_series"]


def softmax_first_order(scores, beta):
    r"""First-order small-β softmax, :math:`N^{-1}\mathbf 1\mathbf 1^\top + (\beta/N)\,S\,(I - N^{-1}\mathbf 1\mathbf 1^\top)`.

    Only the row-centred score :math:`S(I - N^{-1}\mathbf 1\mathbf 1^\top)` (each row minus its mean)
    enters at first order, so a row-constant (source) potential drops out.  The remainder
    :math:`\operatorname{softmax}_\beta(S) - ` this is :math:`O(\beta^2)`.

    Parameters
    ----------
    scores : array, shape=[..., n, N]
        Attention scores; :math:`N` is the number of keys.
    beta : float
        Inverse temperature, :math:`\beta \ge 0`.

    Returns
    -------
    array, shape=[..., n, N]
        Rows sum to one (exactly, in exact arithmetic) but entries may be negative for large β.

    References
    ----------
    Attention Geometry §A.9 (small-β expansion) [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[1.0, 3.0]])
    >>> softmax_first_order(S, 0.1).tolist()
    [[0.45, 0.55]]
    """  # noqa: E501
    scores = as_array("scores", scores, min_ndim=2)
    beta = check_in_range("beta", beta, 0.0)
    xp = namespace(scores)
    n_keys = scores.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing result is refused just below
        centred = scores - xp.mean(scores, axis=-1, keepdims=True)
        result = 1.0 / n_keys + (beta / n_keys) * centred
    return check_finite_output("softmax_first_order", result, scores=scores, beta=beta)


def softmax_second_order(scores, beta):
    r"""Second-order small-β softmax: the first-order form plus :math:`\beta^2 C_2`.

    With the row-centred scores :math:`\tilde S = S(I - N^{-1}\mathbf 1\mathbf 1^\top)` and the row variance
    :math:`v_i = N^{-1}\sum_j \tilde S_{ij}^2`,

    .. math::

        C_2 = \frac1{2N}\bigl(\tilde S^{\odot 2} - v\,\mathbf 1^\top\bigr),

    so :math:`\operatorname{softmax}_\beta(S) = N^{-1}\mathbf 1\mathbf 1^\top + \beta N^{-1}\tilde S + \beta^2 C_2
    + O(\beta^3)`.  Like the first order, it depends on the scores only through their row-centred part (a
    source potential still drops out); the rows of :math:`C_2` sum to zero.  Derivation: expand
    :math:`e^{\beta s_{ij}}` and :math:`(\sum_l e^{\beta s_{il}})^{-1}` to second order; checked against
    :func:`softmax_series` by sympy in ``continuum.softmax.second_order``.

    Parameters
    ----------
    scores : array, shape=[..., n, N]
    beta : float
        Inverse temperature, :math:`\beta \ge 0`.

    Returns
    -------
    array, shape=[..., n, N]

    References
    ----------
    Attention Geometry §A.9 (first order) [SEED]; the second order is [DERIVED] here.

    Examples
    --------
    >>> import numpy as np
    >>> S = np.array([[0.0, 1.0, 3.0]])
    >>> exact = np.exp(1e-2 * S) / np.exp(1e-2 * S).sum()
    >>> float(np.abs(softmax_first_order(S, 1e-2) - exact).max())  # O(β²) remainder  # doctest: +ELLIPSIS
    2.40...e-05
    >>> float(np.abs(softmax_second_order(S, 1e-2) - exact).max())  # O(β³) remainder  # doctest: +ELLIPSIS
    2.17...e-07
    """
    scores = as_array("scores", scores, min_ndim=2)
    beta = check_in_range("beta", beta, 0.0)
    xp = namespace(scores)
    n_keys = scores.shape[-1]
    beta_squared = check_finite_result("beta**2", beta * beta, beta=beta)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing result is refused just below
        centred = scores - xp.mean(scores, axis=-1, keepdims=True)
        variance = xp.mean(centred * centred, axis=-1, keepdims=True)
        second = (centred * centred - variance) / (2 * n_keys)
        result = 1.0 / n_keys + (beta / n_keys) * centred + beta_squared * second
    return check_finite_output("softmax_second_order", result, scores=scores, beta=beta)


def softmax_series(n_queries, n_keys, order, symbol="s"):
    r"""Taylor coefficients of :math:`\operatorname{softmax}_\beta(S)` in β, derived with sympy.

    Returns the matrices :math:`C_0, \dots, C_{K}` with
    :math:`\operatorname{softmax}_\beta(S) = \sum_{k\le K} \beta^k C_k + O(\beta^{K+1})` for a fully
    symbolic score matrix :math:`S = (s_{ij})`.  Each row is expanded as
    :math:`e^{\beta s_{ij}} \cdot (\sum_l e^{\beta s_{il}})^{-1}`, both factors as truncated series.

    Parameters
    ----------
    n_queries, n_keys : int
        Shape of the symbolic score matrix, at most 4 × 6.
    order : int
        Highest power :math:`K` of β kept, at most 3.  The symbolic work grows fast with ``n_keys`` and
        ``order`` (measured per row, 2 cores: 6 keys at order 3 2.9 s, 8 keys 22 s; 4 keys at order 4
        6.3 s, at order 5 77 s), so larger requests are refused before any work.
    symbol : str
        Prefix of the score symbols (``s_{ij}`` by default).

    Returns
    -------
    scores : sympy.Matrix
        The symbolic score matrix.
    coefficients : list of sympy.Matrix
        :math:`C_0, \dots, C_K`.

    Examples
    --------
    >>> S, C = softmax_series(1, 2, 1)
    >>> C[0]
    Matrix([[1/2, 1/2]])
    >>> C[1]
    Matrix([[s_00/4 - s_01/4, -s_00/4 + s_01/4]])
    """
    import sympy as sp

    checked = {}
    for name, value, low, high in (("n_queries", n_queries, 1, 4), ("n_keys", n_keys, 1, 6), ("order", order, 0, 3)):
        value = as_scalar(value)  # numpy integers and 0-d arrays are integers too
        if isinstance(value, bool) or not isinstance(value, Integral):
            raise TypeError(f"{name} must be an integer, got {value!r}")
        if value < low:
            kind = "a positive" if low == 1 else "a nonnegative"
            raise ValueError(f"{name} must be {kind} integer, got {value!r}")
        if value > high:
            raise ValueError(f"{name} must be at most {high} (the symbolic expansion grows fast), got {value!r}")
        checked[name] = int(value)
    n_queries, n_keys, order = checked["n_queries"], checked["n_keys"], checked["order"]
    if not isinstance(symbol, str) or not symbol.isidentifier():
        raise ValueError(f"symbol must be a name prefix such as 's', got {symbol!r}")
    beta = sp.Symbol("beta")
    scores = sp.Matrix(n_queries, n_keys, lambda i, j: sp.Symbol(f"{symbol}_{i}{j}"))

    def truncate(expr):
        poly = sp.Poly(sp.expand(expr), beta)
        return sum((c * beta**m for (m,), c in poly.terms() if m <= order), sp.Integer(0))

    def exp_series(x):
        return sum((x**k * beta**k / sp.factorial(k) for k in range(order + 1)), sp.Integer(0))

    rows = []
    for i in range(n_queries):
        numerators = [exp_series(scores[i, j]) for j in range(n_keys)]
        # 1/Σ = (1/N)·1/(1 + u) with u = Σ/N − 1 = O(β): a geometric series to order K.
        u = truncate(sum(numerators) / n_keys - 1)
        inverse = sum(((-u) ** k for k in range(order + 1)), sp.Integer(0)) / n_keys
        inverse = truncate(inverse)
        rows.append([truncate(num * inverse) for num in numerators])
    full = sp.Matrix(rows)
    coefficients = [full.applyfunc(lambda e, k=k: sp.expand(e).coeff(beta, k)) for k in range(order + 1)]
    return scores, coefficients
