r"""The front door: :math:`e^{tA}B` by the method the structure of :math:`A` allows.

``expmv`` never forms :math:`e^{tA}`; it applies it to a block of vectors with one of

* ``"uniformization"`` — Markov generators (rows sum to 0, rates ≥ 0), :math:`t \ge 0`: a Poisson
  mixture of powers of the stochastic :math:`I + A/q`, so probabilities stay probabilities;
* ``"chebyshev"`` — symmetric :math:`A` with a spectral interval: Bessel-weighted Chebyshev series;
* ``"krylov"`` — Lanczos (symmetric) or Arnoldi with a-posteriori error control and time stepping;
* ``"taylor"`` — truncated Taylor with scaling, the Al-Mohy–Higham selection (the general case);
* ``"kronecker"`` — Kronecker sums :math:`A \oplus B`: :math:`e^{tA}\otimes e^{tB}` applied through the factors;

and picks one (``method="auto"``) from what it can prove about :math:`A`.

References
----------
Lie-Exponential Roadmap: "never form dense exp(A); only exp(A)v".
A. H. Al-Mohy and N. J. Higham, SIAM J. Sci. Comput. 33 (2011) 488–511.
"""

from __future__ import annotations

import importlib
import math
from numbers import Real

import numpy as np

from workbench.backend import check_view_size, host_array, namespace, unit_roundoff
from workbench.expmv._blocks import join_complex, promote_block, split_complex
from workbench.expmv._kronecker import KroneckerSum
from workbench.expmv._linear import LinearMap, as_linear_map, as_operand, result_dtype
from workbench.validation import check_choice, check_flag, check_matching

__all__ = ["METHODS", "expmv"]

#: method name → (module, function); imported on first use.
METHODS = {
    "taylor": ("workbench.expmv._taylor", "expmv_taylor"),
    "krylov": ("workbench.expmv._krylov", "expmv_krylov"),
    "chebyshev": ("workbench.expmv._chebyshev", "expmv_chebyshev"),
    "uniformization": ("workbench.expmv._uniformization", "expmv_uniformization"),
    "kronecker": ("workbench.expmv._kronecker", "expmv_kronecker"),
}


def _real_dtype(dtype):
    """The real dtype of a complex one (numpy or torch)."""
    if isinstance(dtype, np.dtype):
        return np.finfo(dtype).dtype
    import torch

    return torch.empty(0, dtype=dtype).real.dtype


def _method(name: str):
    module, function = METHODS[name]
    return getattr(importlib.import_module(module), function)


def choose_method(op: LinearMap, times, unit: float = 2.0**-53) -> tuple[str, str]:
    r"""Return ``(method, reason)`` for ``method="auto"``.

    Symmetric operators go to Chebyshev, symmetric Markov generators (heat kernels e^{−tL}) included:
    its degree grows like √(t·width) where uniformization needs ≈ qt products (172 against 580 for
    the path Laplacian at t = 200), and its error is within ``tol`` in norm, but nonnegativity then
    holds only to rounding.  Non-symmetric generators go to uniformization, whose results are
    nonnegative with exact row sums by construction; pass ``method="uniformization"`` to get that
    guarantee for a symmetric generator too.  An operator known only through its action goes to Krylov,
    unless rounding in the projection, about :math:`u\,|t|\,\lVert A\rVert_1`, would cost half the
    digits or more while products with :math:`A^\top` are available: then Taylor, whose power-norm
    bounds :math:`\lVert A^p\rVert_1^{1/p}` stay moderate for a huge non-normal part (``[[1, 1e17], [0, 1]]``).
    """
    if isinstance(op.a, KroneckerSum):
        return "kronecker", "A is a Kronecker sum: e^{t(A⊕B)} = e^{tA} ⊗ e^{tB} on the factors"
    if op.is_symmetric():
        if op.is_complex:
            return "chebyshev", "A is Hermitian (real spectrum): Chebyshev series on its spectral interval"
        return "chebyshev", "A is symmetric: Chebyshev series on its spectral interval"
    if op.is_markov_generator() and min(times) >= 0:
        return "uniformization", "A is a Markov generator and t ≥ 0: a Poisson mixture of stochastic powers"
    if op.action_only:
        rounding = unit * max(abs(v) for v in times) * op.one_norm()
        if rounding > math.sqrt(unit) and op.transpose_action() is not None:
            return "taylor", (
                f"A is only known through its action, but u·|t|·‖A‖₁ = {rounding:.2g} would swamp a Krylov "
                "projection: truncated Taylor with power-norm bounds ‖A^p‖^(1/p)"
            )
        return "krylov", "A is only known through its action: Arnoldi with a-posteriori error control"
    if op.is_complex and _is_skew_hermitian(op):
        return "taylor", (
            "A is skew-Hermitian (A = −iH, a unitary flow): its spectrum is imaginary, so Chebyshev on a real "
            "interval does not apply (a Chebyshev series on H with complex coefficients is not implemented); "
            "truncated Taylor with Al-Mohy–Higham scaling"
        )
    return "taylor", "general A: truncated Taylor with Al-Mohy–Higham scaling"


def _is_skew_hermitian(op: LinearMap) -> bool:
    """Whether :math:`iA` is Hermitian, i.e. :math:`A^* = -A` (explicit operators only)."""
    host = op.host_matrix(strict=False)
    if host is None:
        return False
    return as_linear_map(1j * host).is_symmetric()


def _as_times(t) -> np.ndarray:
    """``t`` (a real number or a grid: numpy, torch, a list) as a float64 numpy array; complex or text is refused."""
    check_view_size("t", t)  # a stride-0 grid is copied below at its full size
    raw = host_array("t", t)
    if raw.dtype == object and all(isinstance(v, Real) and not isinstance(v, bool) for v in raw.flat):
        raw = raw.astype(float)  # Fractions, Decimals-as-Real and other number types
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"t must be a real number or a 1-D grid of real numbers, got {t!r} (dtype {raw.dtype})")
    return raw.astype(float)


def expmv(A, B, t=1.0, *, method: str = "auto", tol: float | None = None, return_info: bool = False, **options):
    r"""The action :math:`e^{tA}B` of the matrix exponential, without forming :math:`e^{tA}`.

    Parameters
    ----------
    A : array, scipy sparse, LinearOperator, torch tensor (dense or sparse) or structured, shape=[n, n]
        The operator, real or complex.  numpy/scipy operators need numpy ``B``; torch operators need
        torch ``B`` (mixing the two is a ``TypeError``).
    B : array, shape=[n] or [n, k]
        A vector or a block of columns, real or complex.
    t : float or 1-D array
        A time, or a nondecreasing grid of times (then the result is stacked along a new first axis;
        the grid is walked outwards from 0, negative times backwards and the others forwards, each step
        reusing the result next nearer to 0; a time 0 gives a copy of ``B``).
    method : {'auto', 'taylor', 'krylov', 'chebyshev', 'uniformization', 'kronecker'}
        ``'auto'`` chooses from what :math:`A` is (see :func:`choose_method`) and says why in the info.
    tol : float, optional
        Target relative accuracy (default: the unit roundoff of ``B``'s dtype).  What each method
        guarantees is stated in its docstring; a method that cannot meet it warns
        (:class:`~workbench.expmv.AccuracyWarning`).
    return_info : bool
        Also return a dict: ``method``, ``reason``, ``matvecs`` (block products with A) and the
        method's own diagnostics (for a grid: a list of them under ``per_time``).
    **options
        Passed to the method (e.g. ``interval=(a, b)`` for Chebyshev, ``m`` for Krylov).

    Returns
    -------
    array, or (array, dict)
        The result lives in ``B``'s library and device.

    Notes
    -----
    **Dtypes.**  The result has dtype ``numpy.result_type(A, B)`` after integer and bool entries of
    :math:`A` are read as float64 — the rule of :func:`scipy.sparse.linalg.expm_multiply` for dense and
    sparse :math:`A`: float32 with float32 (or bool, int8, int16, float16) stays float32, float32 with
    float64 or int32 becomes float64, and a complex side gives a complex result.  torch tensors follow
    :func:`torch.promote_types` instead.  A ``LinearOperator`` counts with its declared ``dtype`` (scipy
    computes every LinearOperator in double precision).  float16 is computed in float32; extended
    precision (``longdouble``) is refused, since the methods would only carry double precision.  The
    default ``tol`` is the unit roundoff of the result's dtype (:math:`2^{-24}` for float32 and
    complex64), and a single-precision problem is computed in single precision, sparse ones included.

    **Complex data.**  Complex :math:`A` runs Taylor or Krylov (Arnoldi), or Chebyshev when :math:`A` is
    Hermitian (then "symmetric" means :math:`A = A^*` throughout); a skew-Hermitian :math:`A = -iH`
    (Schrödinger flows) goes to Taylor, and the reason says why.  A real :math:`A` with a complex
    :math:`B` is applied to :math:`[\operatorname{Re}B,\ \operatorname{Im}B]` in real arithmetic, so that
    uniformization and Chebyshev stay available.

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> A = np.array([[-1.0, 1.0], [2.0, -2.0]])  # a Markov generator
    >>> y, info = expmv(A, np.ones(2), t=3.0, return_info=True)
    >>> info["method"], bool(np.allclose(y, 1.0))   # probabilities stay probabilities
    ('uniformization', True)
    >>> bool(np.allclose(expmv(A, np.eye(2)[:, 0], t=0.5, method="taylor"), scipy.linalg.expm(0.5 * A)[:, 0]))
    True
    """
    op = as_linear_map(A)
    vector = False
    b = as_operand("B", B, keep_integers=True)
    if b.ndim == 0:
        raise ValueError(f"B must be a vector or a block of columns (shape [n] or [n, k]), got shape {tuple(b.shape)}")
    if b.ndim == 1:
        vector = True
        b = b[:, None]
    elif b.ndim != 2:
        raise ValueError(f"B must be a vector or a block of columns (shape [n] or [n, k]), got shape {tuple(b.shape)}")
    check_matching("A", op.n, "B rows", b.shape[0])
    op.check_operand(b)
    # One compute dtype for A and B (result_dtype); a real A meets a complex B as [Re B, Im B].
    dtype = result_dtype(op, b)
    split = None
    if op.is_complex or "complex" not in str(dtype):
        op = op.astype(dtype)
        b = promote_block(op, b)
    else:
        real = _real_dtype(dtype)
        op = op.astype(real)
        b = promote_block(op, namespace(b).astype(b, dtype))
        split = int(b.shape[1])
        b = split_complex(namespace(b), b)
    times = np.atleast_1d(_as_times(t))
    if times.ndim != 1 or times.size == 0 or not np.all(np.isfinite(times)):
        raise ValueError(f"t must be a finite real number or a non-empty 1-D grid of them, got {t!r}")
    if np.any(np.diff(times) < 0):
        raise ValueError(f"a grid of times must be nondecreasing (it is walked step by step), got {times.tolist()}")
    if tol is None:
        tol = unit_roundoff(b)
    elif isinstance(tol, (bool, np.bool_)) or not (
        isinstance(tol, Real) or (getattr(tol, "shape", None) == () and getattr(tol, "dtype", None) is not None)
    ):
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    elif not 0.0 < float(tol) < 1.0:  # numpy scalars and 0-d arrays are numbers too
        raise ValueError(f"tol must be in (0, 1), got {tol!r}")
    check_choice("method", method, ("auto", *METHODS))
    return_info = check_flag("return_info", return_info)
    reason = "requested"
    if method == "auto":
        method, reason = choose_method(op, times.tolist(), unit_roundoff(b))
    run = _method(method)

    xp = namespace(b)
    grid = times.tolist()
    results, infos = [None] * len(grid), [None] * len(grid)
    empty = b.shape[0] * b.shape[1] == 0  # nothing to multiply: e^{tA} applied to an empty block
    # Walk outwards from t = 0 (where the result is B itself): the negative times backwards in time, the
    # others forwards, each step reusing the result nearest 0.  Walking [-5, 0] from -5 back to 0 would
    # return e^{5A}(e^{-5A}B) with the rounding of both steps amplified, not B (reproducer 3).
    negative = [i for i, target in enumerate(grid) if target < 0.0][::-1]
    forward = [i for i, target in enumerate(grid) if target >= 0.0]
    for chain in (negative, forward):
        current, now = b, 0.0
        for i in chain:
            step, now = grid[i] - now, grid[i]
            info = {"matvecs": 0}
            if step != 0.0 and not empty:
                current, info = run(op, current, step, tol=float(tol), **options)
            elif current is b:  # e^{0·A}B = B: hand back a copy, never the caller's object
                current = xp.asarray(b, copy=True)
            infos[i] = info
            results[i] = current
    if split is not None:
        results = [join_complex(xp, r, split) for r in results]
    if vector:
        results = [r[:, 0] for r in results]
    out = results[0] if np.ndim(t) == 0 else xp.stack(results, axis=0)
    if not return_info:
        return out
    summary = {
        "method": method,
        "reason": reason,
        "matvecs": int(sum(i.get("matvecs", 0) for i in infos)),
        "tol": float(tol),
    }
    if np.ndim(t) == 0:
        if infos[0].get("fallback_from") == method:  # the chosen method handed over (it says why)
            summary["method"] = infos[0]["method"]
            summary["reason"] = f"{reason}; {method} fell back to {infos[0]['method']}: {infos[0]['fallback_reason']}"
        summary.update({k: v for k, v in infos[0].items() if k not in summary})
    else:
        summary["per_time"] = infos
    if summary.get("error_estimate") is not None:
        summary["error_estimate"] = float(summary["error_estimate"])
    return out, summary
