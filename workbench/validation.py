"""Checks at the public boundary.

Every public function validates its inputs here, so a mistake surfaces as a
``ValueError`` or ``TypeError`` whose message names the parameter, what was
expected and what was received, instead of a crash deep inside numpy or a
silent NaN.  The checks work on numpy arrays and torch tensors alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import array_api_compat
import numpy as np

from workbench.backend import check_view_size, distinct_entries, host_array, namespace, unit_roundoff

__all__ = [
    "as_array",
    "as_scalar",
    "as_sparse",
    "check_choice",
    "check_finite",
    "check_finite_output",
    "check_finite_result",
    "check_flag",
    "check_in_range",
    "check_integer",
    "check_markov_generator",
    "check_matching",
    "check_nonnegative",
    "check_row_stochastic",
    "check_square",
    "check_symmetric",
    "is_sparse",
    "shape_of",
]


def shape_of(x, name: str = "x") -> tuple[int, ...]:
    """The shape of a numpy array, torch tensor or scipy sparse matrix as a tuple of Python ints.

    Anything without a shape is a ``TypeError`` naming ``name`` (the parameter it was passed as).

    Examples
    --------
    >>> shape_of(np.zeros((2, 3)))
    (2, 3)
    >>> shape_of([[1.0]], "P")
    Traceback (most recent call last):
        ...
    TypeError: P must be an array (numpy, torch or scipy sparse), got list
    """
    shape = getattr(x, "shape", None)
    if not isinstance(shape, tuple) and type(shape).__name__ != "Size":  # torch.Size is a tuple subclass too
        raise TypeError(f"{name} must be an array (numpy, torch or scipy sparse), got {type(x).__name__}")
    return tuple(int(s) for s in shape)


def as_array(name: str, x: Any, *, ndim: int | None = None, min_ndim: int | None = None):
    """Return ``x`` as a floating array of the library it came in (lists become numpy).

    Parameters
    ----------
    name : str
        The parameter name used in error messages.
    x : array_like
        numpy array, torch tensor, or a (nested) list of numbers.
    ndim, min_ndim : int, optional
        Required exact or minimum number of dimensions.

    Raises
    ------
    TypeError
        If ``x`` is not numeric.
    ValueError
        If ``x`` has the wrong number of dimensions, or is not finite.

    Examples
    --------
    >>> as_array("f", [1, 2]).dtype
    dtype('float64')
    >>> as_array("f", [1, 2], ndim=2)
    Traceback (most recent call last):
        ...
    ValueError: f must be a 2-dimensional array, got shape (2,)
    """
    if ndim is not None:
        check_integer("ndim", ndim, 0, 64)
    if min_ndim is not None:
        check_integer("min_ndim", min_ndim, 0, 64)
    _refuse_graphs_and_sparse_tensors(name, x)
    namespace(**{name: x})  # rejects foreign array libraries, naming the parameter
    if array_api_compat.is_torch_array(x):
        if x.is_complex():
            raise TypeError(f"{name} must be real-valued, got dtype {x.dtype}")
        check_view_size(name, x)
        if not x.is_floating_point():
            x = x.double()
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as exc:
            raise TypeError(f"{name} must be a numeric array, got {type(x).__name__}") from exc
        check_view_size(name, arr)
        if arr.dtype.kind in "iub":
            arr = arr.astype(np.float64)
        elif arr.dtype.kind == "c":
            raise TypeError(f"{name} must be real-valued, got dtype {arr.dtype}")
        elif arr.dtype.kind != "f":
            raise TypeError(f"{name} must be a numeric array, got dtype {arr.dtype}")
        x = arr
    shape = shape_of(x)
    if ndim is not None and len(shape) != ndim:
        raise ValueError(f"{name} must be a {ndim}-dimensional array, got shape {shape}")
    if min_ndim is not None and len(shape) < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {shape}")
    check_finite(name, x)
    return x


def _refuse_graphs_and_sparse_tensors(name: str, x: Any) -> None:
    """One-line refusals of the containers a researcher passes where a dense array is meant."""
    module = type(x).__module__
    if module.startswith("networkx"):
        raise TypeError(
            f"{name} must be an array, got a networkx {type(x).__name__}; convert it with "
            "W, nodes = workbench.markov.graph_weights(graph) (a sparse weight matrix and its vertex order) or "
            "MarkovOperator.from_networkx(graph)"
        )
    if array_api_compat.is_torch_array(x) and str(x.layout) != "torch.strided":
        raise TypeError(
            f"{name} must be a dense torch tensor here, got layout {x.layout}; pass x.to_dense(), or a scipy "
            "sparse matrix where the function takes one (kernels, generators, expmv)"
        )
    if is_sparse(x):
        raise TypeError(
            f"{name} must be a dense array here, got a scipy sparse {type(x).__name__}; pass x.toarray() "
            "(functions that take sparse input say so in their documentation)"
        )


def is_sparse(x) -> bool:
    """Return whether ``x`` is a scipy sparse matrix or array (without importing scipy.sparse).

    Examples
    --------
    >>> import numpy as np, scipy.sparse
    >>> is_sparse(scipy.sparse.eye(2)), is_sparse(np.eye(2))
    (True, False)
    """
    module = type(x).__module__
    return module.startswith("scipy.sparse") and not module.startswith("scipy.sparse.linalg")


def as_sparse(name: str, x, *, keep_zeros: bool = False):
    """Return a scipy sparse matrix as a private float64 CSR array with finite stored entries.

    Duplicate entries are summed and indices sorted.  Explicit zeros are dropped, so ``.data`` holds
    the support, unless ``keep_zeros`` (a stored zero can carry meaning, e.g. a zero distance).

    Examples
    --------
    >>> import numpy as np, scipy.sparse
    >>> as_sparse("K", scipy.sparse.coo_array(([1.0, np.inf], ([0, 1], [0, 1])))).nnz
    Traceback (most recent call last):
        ...
    ValueError: K must be finite, got 1 non-finite entry (first at index (1, 1))
    """
    keep_zeros = check_flag("keep_zeros", keep_zeros)
    import scipy.sparse

    if not is_sparse(x):
        raise TypeError(f"{name} must be a scipy sparse matrix, got {type(x).__name__}")
    if x.dtype.kind == "c":
        raise TypeError(f"{name} must be real-valued, got dtype {x.dtype}")
    csr = scipy.sparse.csr_array(x, dtype=np.float64, copy=True)
    csr.sum_duplicates()
    csr.sort_indices()
    bad = ~np.isfinite(csr.data)
    if bad.any():
        rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
        first = int(np.argmax(bad))
        count = int(bad.sum())
        plural = "entry" if count == 1 else "entries"
        raise ValueError(
            f"{name} must be finite, got {count} non-finite {plural} "
            f"(first at index ({int(rows[first])}, {int(csr.indices[first])}))"
        )
    if not keep_zeros:
        csr.eliminate_zeros()
    return csr


def check_finite(name: str, x) -> None:
    """Raise ``ValueError`` if ``x`` holds NaN or infinity, saying how many and where.

    Examples
    --------
    >>> import numpy as np
    >>> check_finite("K", np.array([1.0, np.nan]))
    Traceback (most recent call last):
        ...
    ValueError: K must be finite, got 1 non-finite entry (first at index (1,))
    """
    xp = namespace(**{name: x})
    _check_numeric(name, x)
    check_view_size(name, x)
    x = distinct_entries(x)  # a repeated view holds its distinct entries once: checking them is exact
    bad = ~xp.isfinite(x)
    count = int(xp.count_nonzero(bad))
    if count:
        first = tuple(int(i) for i in np.argwhere(np.asarray(_to_host(bad)))[0])
        plural = "entry" if count == 1 else "entries"
        raise ValueError(f"{name} must be finite, got {count} non-finite {plural} (first at index {first})")


def _size(x) -> int:
    return math.prod(int(s) for s in x.shape)


def _check_numeric(name: str, x, *, real: bool = False) -> None:
    # The dtype of a checked array: numbers (real ones where ``real``), never strings or objects.
    if array_api_compat.is_torch_array(x):
        kind = "c" if x.is_complex() else "f"
    else:
        kind = host_array(name, x).dtype.kind if not is_sparse(x) else x.dtype.kind
    if kind not in "fiubc":
        raise TypeError(f"{name} must be a numeric array, got dtype {getattr(x, 'dtype', type(x).__name__)}")
    if real and kind == "c":
        raise TypeError(f"{name} must be real-valued, got dtype {x.dtype}")


def _check_tolerance(name: str, value) -> float:
    return check_in_range(name, value, 0.0)


#: The row-sum tolerance of the stochastic and generator checks in double precision.
ROW_SUM_ATOL = 1e-10


def _row_sum_tolerance(atol, x) -> float:
    """``atol`` if given; else :data:`ROW_SUM_ATOL`, or :math:`8nu` where the dtype's roundoff makes that larger.

    A row sum of :math:`n` entries carries a rounding error up to about :math:`nu` times the row's size, so a
    float32 copy of an exact generator (:math:`u = 2^{-24}`) has row sums of order 1e-7, which 1e-10 refuses.
    """
    if atol is not None:
        return _check_tolerance("atol", atol)
    n = int(x.shape[-1]) if getattr(x, "ndim", 0) else 1
    return max(ROW_SUM_ATOL, 8.0 * n * unit_roundoff(x))


def _generator_ok(x, atol: float) -> bool:
    xp = namespace(x)
    n = int(x.shape[-1])
    diagonal = xp.eye(n, dtype=xp.bool, device=array_api_compat.device(x))
    off = xp.where(diagonal, xp.zeros_like(x), x)
    scale = max(1.0, float(xp.max(xp.abs(x))))
    return float(xp.min(off)) >= -atol and float(xp.max(xp.abs(xp.sum(x, axis=-1)))) <= atol * scale


def _to_host(x):
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    return x


def check_square(name: str, x) -> None:
    """Raise ``ValueError`` unless ``x`` has ``shape=[..., n, n]``.

    Examples
    --------
    >>> import numpy as np
    >>> check_square("A", np.ones((2, 3)))
    Traceback (most recent call last):
        ...
    ValueError: A must be a square matrix (shape [..., n, n]), got shape (2, 3)
    """
    shape = shape_of(x, name)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{name} must be a square matrix (shape [..., n, n]), got shape {shape}")


def check_matching(name_a: str, size_a: int, name_b: str, size_b: int) -> None:
    """Raise ``ValueError`` unless two dimensions that must agree do agree.

    Examples
    --------
    >>> check_matching("u", 3, "v", 4)
    Traceback (most recent call last):
        ...
    ValueError: u and v must have matching sizes, got 3 and 4
    """
    size_a, size_b = _as_size(name_a, size_a), _as_size(name_b, size_b)
    if size_a != size_b:
        raise ValueError(f"{name_a} and {name_b} must have matching sizes, got {int(size_a)} and {int(size_b)}")


def _as_size(name: str, size) -> int:
    size = as_scalar(size)
    if isinstance(size, bool) or not isinstance(size, Integral):
        if isinstance(size, Real) and float(size).is_integer():
            return int(size)
        raise TypeError(f"the size of {name} must be an integer, got {size!r}")
    return int(size)


def check_nonnegative(name: str, x) -> None:
    """Raise ``ValueError`` if any entry of ``x`` is negative, naming the most negative.

    Examples
    --------
    >>> import numpy as np
    >>> check_nonnegative("K", np.array([[1.0, -0.5]]))
    Traceback (most recent call last):
        ...
    ValueError: K must be entrywise nonnegative, got minimum -0.5 at index (0, 1)
    """
    shape_of(x, name)
    _check_numeric(name, x, real=True)
    if is_sparse(x):
        coo = x.tocoo()
        if coo.nnz and coo.data.min() < 0:
            k = int(np.argmin(coo.data))
            raise ValueError(
                f"{name} must be entrywise nonnegative, got minimum {coo.data[k]:.6g} "
                f"at index ({int(coo.row[k])}, {int(coo.col[k])})"
            )
        return
    check_view_size(name, x)
    x = distinct_entries(x)
    if _size(x) == 0 or float(namespace(**{name: x}).min(x)) >= 0:  # device-side pass; host only to explain
        return
    host = np.asarray(_to_host(x))
    if host.size and host.min() < 0:
        index = tuple(int(i) for i in np.unravel_index(np.argmin(host), host.shape))
        raise ValueError(f"{name} must be entrywise nonnegative, got minimum {host.min():.6g} at index {index}")


def check_symmetric(name: str, x, *, rtol: float = 1e-12) -> None:
    """Raise ``ValueError`` unless ``x`` equals its transpose up to ``rtol`` (relative, max-norm).

    Examples
    --------
    >>> import numpy as np
    >>> check_symmetric("K", np.array([[1.0, 2.0], [0.0, 1.0]]))
    Traceback (most recent call last):
        ...
    ValueError: K must be symmetric, got max |K - K^T| = 2 (relative 1)
    """
    check_square(name, x)
    _check_numeric(name, x)
    rtol = _check_tolerance("rtol", rtol)
    if _size(x) == 0:
        return
    if is_sparse(x):
        difference = abs(x - x.T)
        gap = float(difference.max()) if difference.nnz else 0.0
        scale = float(abs(x).max()) if x.nnz else 0.0
    else:
        xp = namespace(**{name: x})
        with np.errstate(invalid="ignore"):  # inf - inf: refused just below, by name
            gap = float(xp.max(xp.abs(x - xp.matrix_transpose(x))))
        scale = float(xp.max(xp.abs(x)))
    if not (math.isfinite(gap) and math.isfinite(scale)):
        check_finite(name, x.data if is_sparse(x) else x)
    if gap > rtol * max(scale, np.finfo(float).tiny):
        raise ValueError(
            f"{name} must be symmetric, got max |{name} - {name}^T| = {gap:.6g} "
            f"(relative {gap / max(scale, np.finfo(float).tiny):.6g})"
        )


def check_row_stochastic(name: str, x, *, atol: float | None = None) -> None:
    """Raise ``ValueError`` unless ``x`` is square, nonnegative and has unit row sums.

    The row sums must be 1 within ``atol`` (default: 1e-10, or :math:`8nu` for a dtype of unit roundoff
    :math:`u` where that is larger: float32 allows about 4.8e-7 times :math:`n`).

    Examples
    --------
    >>> import numpy as np
    >>> check_row_stochastic("P", np.array([[0.5, 0.5], [0.2, 0.7]]))
    Traceback (most recent call last):
        ...
    ValueError: P must be row-stochastic (rows summing to 1 within 1e-10), got row 1 summing to 0.9
    >>> check_row_stochastic("P", np.array([[1.0 - 2.98e-8, 2e-12], [0.5, 0.5]]))
    Traceback (most recent call last):
        ...
    ValueError: P must be row-stochastic (rows summing to 1 within 1e-10), got row 0 summing to 1 − 2.98e-08
    """
    check_square(name, x)
    atol = _row_sum_tolerance(atol, x)
    check_finite(name, x.data if is_sparse(x) else x)  # NaN compares false with every bound: refuse it first
    check_nonnegative(name, x)
    xp = namespace(**{name: x})
    if _size(x) == 0 or float(xp.max(xp.abs(xp.sum(x, axis=-1) - 1.0))) <= atol:
        return
    host = np.asarray(_to_host(x))
    sums = host.sum(axis=-1)
    worst = np.unravel_index(np.argmax(np.abs(sums - 1.0)), sums.shape)
    if abs(sums[worst] - 1.0) > atol:
        row = worst[-1] if len(worst) == 1 else tuple(int(i) for i in worst)
        deviation = float(sums[worst] - 1.0)
        # A sum within 1e-3 of 1 prints as 1 ± its deviation: six digits would round 1 − 2.98e-08 to "1".
        total = (
            f"1 {'+' if deviation > 0 else '−'} {abs(deviation):.3g}" if abs(deviation) < 1e-3 else f"{sums[worst]:.6g}"
        )
        raise ValueError(
            f"{name} must be row-stochastic (rows summing to 1 within {atol:g}), got row {row} summing to {total}"
        )


def check_markov_generator(name: str, x, *, atol: float | None = None) -> None:
    r"""Raise ``ValueError`` unless ``x`` is a Markov generator (negative convention, :math:`\mathcal L = P - I`).

    A generator has nonnegative off-diagonal rates and rows summing to zero, within ``atol`` times the largest
    entry's size (default ``atol``: 1e-10, or :math:`8nu` for a dtype of unit roundoff :math:`u` where that is
    larger, as for float32).

    Examples
    --------
    >>> import numpy as np
    >>> check_markov_generator("Q", np.array([[-1.0, 1.0], [-0.5, 0.5]]))
    Traceback (most recent call last):
        ...
    ValueError: Q must be a Markov generator with nonnegative off-diagonal entries, got Q[1, 0] = -0.5
    """
    check_square(name, x)
    atol = _row_sum_tolerance(atol, x)
    _check_numeric(name, x, real=True)
    check_finite(name, x.data if is_sparse(x) else x)  # NaN compares false with every bound: refuse it first
    if _size(x) and _generator_ok(x, atol):  # device-side pass; host only to explain a failure
        return
    host = np.asarray(_to_host(x), dtype=float)
    n = host.shape[-1]
    off = np.where(np.eye(n, dtype=bool), 0.0, host)
    if off.size and off.min() < -atol:
        index = tuple(int(i) for i in np.unravel_index(np.argmin(off), off.shape))
        raise ValueError(
            f"{name} must be a Markov generator with nonnegative off-diagonal entries, "
            f"got {name}[{', '.join(map(str, index))}] = {off[index]:.6g}"
        )
    sums = host.sum(axis=-1)
    worst = np.unravel_index(np.argmax(np.abs(sums)), sums.shape)
    scale = max(1.0, float(np.max(np.abs(host)))) if host.size else 1.0
    if abs(sums[worst]) > atol * scale:
        row = worst[-1] if len(worst) == 1 else tuple(int(i) for i in worst)
        raise ValueError(
            f"{name} must be a Markov generator with rows summing to 0, got row {row} summing to {sums[worst]:.6g}"
        )


def check_in_range(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a float after checking it is a finite real number in the range.

    Examples
    --------
    >>> check_in_range("beta", 0.5, 0.0)
    0.5
    >>> check_in_range("beta", -1.0, 0.0)
    Traceback (most recent call last):
        ...
    ValueError: beta must be in [0, inf), got -1.0
    """
    value, low, high = as_scalar(value), as_scalar(low), as_scalar(high)
    low_inclusive = check_flag("low_inclusive", low_inclusive)
    high_inclusive = check_flag("high_inclusive", high_inclusive)
    if isinstance(value, bool) or not isinstance(value, Real):
        if hasattr(value, "shape") and tuple(value.shape) == ():
            value = float(value)
        else:
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    empty = _check_interval(name, low, high, low_inclusive, high_inclusive)
    lo = "(-inf" if low is None else ("[" if low_inclusive else "(") + f"{low:g}"
    hi = "inf)" if high is None else f"{high:g}" + ("]" if high_inclusive else ")")
    interval = f"{lo}, {hi}"
    too_low = low is not None and (value < low or (not low_inclusive and value == low))
    too_high = high is not None and (value > high or (not high_inclusive and value == high))
    if not math.isfinite(value) or too_low or too_high or empty:
        note = " (an empty interval: check low and high)" if empty else ""
        raise ValueError(f"{name} must be in {interval}{note}, got {value!r}")
    return value


def _check_interval(name: str, low, high, low_inclusive: bool, high_inclusive: bool) -> bool:
    # The bounds a caller gives must be real and not NaN; returns whether the interval they bound is empty.
    for bound, given in (("low", low), ("high", high)):
        if given is not None and (isinstance(given, bool) or not isinstance(given, Real) or math.isnan(given)):
            raise TypeError(f"{bound} must be a real number or None (the bound for {name}), got {given!r}")
    lowest = -math.inf if low is None else float(low)
    highest = math.inf if high is None else float(high)
    closed = (low is None or low_inclusive) and (high is None or high_inclusive)
    return lowest > highest or (lowest == highest and not closed) or lowest == math.inf or highest == -math.inf


def as_scalar(value: Any) -> Any:
    """``value`` itself, or the Python number a 0-d numpy array or a one-element torch tensor of numbers holds.

    Wherever a Python number is accepted, so are ``np.array(4)`` and ``torch.tensor(0.5)``: they are numbers
    to a user, and the checks below then see an ``int``/``float``.  Anything else is returned unchanged (and
    refused by the check that follows, with its own message).

    Examples
    --------
    >>> import numpy as np
    >>> as_scalar(np.array(4)), as_scalar(np.float32(0.5)), as_scalar("x")
    (4, 0.5, 'x')
    """
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return value.item()
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    if array_api_compat.is_torch_array(value) and value.ndim == 0 and not value.is_complex():
        return value.item()
    return value


def check_integer(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int after checking it is an integer (not a bool) in ``[low, high]``.

    Raises ``TypeError`` for a non-integer and ``ValueError`` for one out of range.

    Examples
    --------
    >>> check_integer("m", 30, 1, 100)
    30
    >>> check_integer("k", 0, 1)
    Traceback (most recent call last):
        ...
    ValueError: k must be an integer >= 1, got 0
    """
    low, high, value = as_scalar(low), as_scalar(high), as_scalar(value)
    for bound, given in (("low", low), ("high", high)):
        if (given is not None or bound == "low") and (isinstance(given, bool) or not isinstance(given, Integral)):
            raise TypeError(f"{bound} must be an integer (the bound for {name}), got {given!r}")
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        expected = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
        empty = " (an empty range: low > high)" if high is not None and high < low else ""
        raise ValueError(f"{name} must be {expected}{empty}, got {value!r}")
    return int(value)


def check_choice(name: str, value: Any, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``; otherwise raise ``ValueError`` listing them.

    Examples
    --------
    >>> check_choice("scale", "huge", ("small", "large"))
    Traceback (most recent call last):
        ...
    ValueError: scale must be one of 'small', 'large', got 'huge'
    """
    if isinstance(choices, str | bytes) or not isinstance(choices, Iterable) or _is_array_like(choices):
        raise TypeError(f"choices must be a collection of the values allowed for {name}, got {choices!r}")
    choices = tuple(choices)
    if not choices:
        raise ValueError(f"choices must hold at least one value allowed for {name}, got none")
    if not any(_is_choice(value, choice) for choice in choices):
        listed = ", ".join(repr(c) for c in choices)
        shown = repr(value) if not _is_array_like(value) else f"an array of shape {shape_of(value)}"
        raise ValueError(f"{name} must be one of {listed}, got {shown}")
    return value


def _is_array_like(x) -> bool:
    return isinstance(x, np.ndarray) or array_api_compat.is_torch_array(x)


def _is_choice(value, choice) -> bool:
    # ``value in choices`` would compare an array elementwise ("the truth value of an array is ambiguous").
    if _is_array_like(value) or _is_array_like(choice):
        return False
    try:
        return bool(value == choice)
    except (TypeError, ValueError):
        return False


def check_flag(name: str, value: Any) -> bool:
    """Return ``value`` as a bool after checking it is one (``True``, ``False``, a numpy bool or a 0-d bool array).

    A flag given a string, a number or an array is a ``TypeError``: ``if flag:`` would read ``"no"`` as true and
    an empty array as an error of numpy's that names no parameter.

    Examples
    --------
    >>> check_flag("causal", np.True_)
    True
    >>> check_flag("causal", "no")
    Traceback (most recent call last):
        ...
    TypeError: causal must be True or False, got str
    """
    value = as_scalar(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return value


def check_finite_result(what: str, value: float, **inputs: Any) -> float:
    """Return ``value`` if finite; otherwise a ``ValueError`` naming the inputs that overflowed it.

    For closed-form scalars whose inputs are each valid but whose result leaves the double range: the
    caller gets the reason, never a silent ``inf``/``nan``.

    Examples
    --------
    >>> check_finite_result("rate", 2.0, beta=1.0)
    2.0
    >>> check_finite_result("rate", float("inf"), beta=1e308)
    Traceback (most recent call last):
        ...
    ValueError: rate is not finite in double precision for beta=1e+308 (got inf); use smaller inputs
    """
    value = as_scalar(value)
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{what} must be a real number, got {type(value).__name__}")
    if math.isfinite(value):
        return value
    shown = ", ".join(f"{k}={v!r}" if not isinstance(v, float) else f"{k}={v:g}" for k, v in inputs.items())
    raise ValueError(f"{what} is not finite in double precision for {shown} (got {value!r}); use smaller inputs")


def _magnitude(name: str, x) -> str:
    # How an input shows in an overflow message: a scalar by its value, an array by its largest finite |entry|.
    if isinstance(x, Real) and not isinstance(x, bool):
        return f"{name} = {float(x):g}"
    try:
        host = np.abs(np.asarray(_to_host(x.data if is_sparse(x) else x)))
    except (TypeError, ValueError):
        return f"{name} = {x!r}"
    if host.dtype.kind not in "fiubc":
        return f"{name} = {x!r}"
    finite = host[np.isfinite(host)]
    return f"{name} (max |entry| {float(finite.max()):.3g})" if finite.size else f"{name} (no finite entry)"


def check_finite_output(what: str, x, **inputs: Any):
    """Return the computed array ``x`` if every entry is finite; otherwise a ``ValueError`` naming ``inputs``.

    The array counterpart of :func:`check_finite_result`: one check of a public function's result, for
    inputs that are each finite but whose products or squares leave the floating-point range (an entry of
    1e300 squared).  The message names every input with its size (an array by its largest ``|entry|``, a
    scalar by its value), so the caller learns which argument to rescale, never a silent ``inf``/``nan``.

    Examples
    --------
    >>> import numpy as np
    >>> f = np.array([1.0, 1e300])
    >>> check_finite_output("f**2", f[:1] ** 2, f=f[:1])
    array([1.])
    >>> with np.errstate(over="ignore"):
    ...     check_finite_output("f**2", f**2, f=f, beta=0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    ValueError: f**2 overflows float64 (1 non-finite entry, ...) for f (max |entry| 1e+300), beta = 0.5; use ...
    """
    xp = namespace(**{what: x})
    _check_numeric(what, x)
    check_view_size(what, x)
    values = x.data if is_sparse(x) else distinct_entries(x)
    bad = ~xp.isfinite(values)
    count = int(xp.count_nonzero(bad))
    if not count:
        return x
    first = tuple(int(i) for i in np.argwhere(np.asarray(_to_host(bad)))[0])
    where = "first stored entry" if is_sparse(x) else "first at index"
    plural = "entry" if count == 1 else "entries"
    dtype = str(values.dtype).rsplit(".", 1)[-1]
    shown = ", ".join(_magnitude(name, value) for name, value in inputs.items())
    raise ValueError(
        f"{what} overflows {dtype} ({count} non-finite {plural}, {where} {first}) for {shown}; use smaller inputs"
    )
