r"""Truncated Taylor series with scaling for :math:`e^{tA}B`: the Al-Mohy–Higham algorithm.

With :math:`T_m(x) = \sum_{k=0}^m x^k/k!` and an integer :math:`s \ge 1`,

.. math::

    e^{tA}B = e^{t\mu}\,\bigl(e^{t(A-\mu I)/s}\bigr)^s B
    \approx e^{t\mu}\,T_m\!\bigl(t(A-\mu I)/s\bigr)^s B ,

evaluated by :math:`s` steps of :math:`m` block products each, never forming a matrix.  The degree
:math:`m` and the number of steps :math:`s` come from a *backward* error bound: on the set where
it is defined,

.. math::

    e^{-X}T_m(X) = e^{h_{m+1}(X)}, \qquad
    h_{m+1}(x) = \log\bigl(e^{-x}T_m(x)\bigr) = \sum_{k\ge m+1} c_k x^k ,

so with :math:`X = t(A-\mu I)/s`, :math:`T_m(X)^s = e^{sX + \Delta A}` with :math:`\Delta A =
s\,h_{m+1}(X)`, a perturbation that commutes with :math:`A`.  With :math:`\tilde h_{m+1}(x) =
\sum_k |c_k| x^k`,

.. math::

    \frac{\lVert \Delta A\rVert}{\lVert sX\rVert} \le \frac{\tilde h_{m+1}(\theta)}{\theta} \le \mathrm{tol}
    \quad\text{whenever}\quad \lVert X\rVert \le \theta \le \theta_m ,

where :math:`\theta_m` is the largest :math:`\theta` with :math:`\tilde h_{m+1}(\theta)/\theta \le
\mathrm{tol}` (:func:`~workbench.expmv.taylor_theta`).  The cost is :math:`m s` products; the pair minimising
:math:`m\lceil\alpha/\theta_m\rceil` is chosen (Al-Mohy & Higham 2011, §3, Code Fragment 3.1), with
:math:`\alpha` the sharpest cheap bound on the norm:

* symmetric :math:`A`: the 2-norm, bounded by the half-width of the Gershgorin interval after the
  shift to its midpoint, or by :math:`\lVert (A-\mu I)^p\rVert_1^{1/p} \ge \rho(A-\mu I)` when that
  is smaller (``h(X)`` is symmetric with eigenvalues :math:`h(\lambda_i)`, so :math:`\lVert
  h(X)\rVert_2 \le \tilde h(\rho(X))` for every degree);
* otherwise the 1-norm of :math:`A - \mu I` with :math:`\mu = \operatorname{trace}(A)/n`, sharpened
  (when :math:`\lVert A\rVert_1` is large enough to pay for it, the paper's (3.13)) by
  :math:`\alpha_p = \max(d_p, d_{p+1})`, :math:`d_p = \lVert A^p\rVert_1^{1/p}`
  (:math:`\lVert h(X)\rVert \le \tilde h(\alpha_p(X))` when :math:`m+1 \ge p(p-1)`: Al-Mohy & Higham
  2009, Theorem 4.2).

References
----------
A. H. Al-Mohy and N. J. Higham, "Computing the action of the matrix exponential, with an application
to exponential integrators", SIAM J. Sci. Comput. 33(2) (2011) 488–511, §3: the backward error
analysis, Table 3.1 of :math:`\theta_m`, Code Fragment 3.1 with the test (3.13), Algorithm 3.2 with
its early termination.  A. H. Al-Mohy and N. J. Higham, "A new scaling and squaring algorithm for the
matrix exponential", SIAM J. Matrix Anal. Appl. 31(3) (2009) 970–989, Theorem 4.2 (the
:math:`\alpha_p` bounds).  N. J. Higham and F. Tisseur, SIAM J. Matrix Anal. Appl. 21 (2000) 1185–1201
(Algorithm 2.4, the block 1-norm estimator, written here in the array namespace).
"""

from __future__ import annotations

import cmath
import functools
import math
from contextlib import nullcontext

import array_api_compat
import numpy as np

from workbench.backend import like, namespace, to_numpy, unit_roundoff
from workbench.expmv._blocks import MAX_PRODUCTS, as_block, finish
from workbench.expmv._linear import LinearMap, as_linear_map
from workbench.expmv._taylor_theta import theta_table
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = ["expmv_taylor"]


#: log of the largest float64: e^x overflows past it.
_LOG_MAX = math.log(np.finfo(np.float64).max)

#: Largest explicit operator for which :math:`\lVert A^p\rVert_1` is computed from exact dense powers
#: (cost :math:`p_{\max} n^3`, below one Taylor step's worth of products for such n).
_EXACT_POWER_MAX_N = 128


# ---- facts about A: shift, norm bound, power norms ------------------------------------------------------


def _shift_and_norm(op: LinearMap, shift: bool) -> tuple[complex, float, str]:
    r"""Return ``(mu, bound, kind)``: a shift and a bound on :math:`\lVert A - \mu I\rVert`.

    ``kind`` is ``"2-norm"`` for symmetric (Hermitian) :math:`A` (the Gershgorin half-width about the
    interval's midpoint: a bound on the spectral radius of :math:`A - \mu I`, which is its 2-norm) and
    ``"1-norm"`` otherwise (:math:`\mu = \operatorname{trace}(A)/n` when the diagonal is known and the
    shift lowers the exact 1-norm; complex for complex :math:`A`).
    """
    columns, diag = op.abs_column_sums_and_diagonal()
    if not op.surely_asymmetric() and (op.exactly_symmetric() or op.is_symmetric()):
        if columns is None:
            lo, hi = op.gershgorin()
        else:  # column sums are row sums here: the Gershgorin radii without another pass
            radius = columns - np.abs(diag)
            lo, hi = float(np.min(diag.real - radius)), float(np.max(diag.real + radius))
        mu = 0.5 * (lo + hi) if shift else 0.0
        return mu, max(hi - mu, mu - lo, 0.0), "2-norm"
    if columns is None:
        return 0.0, op.one_norm(), "1-norm"
    plain = float(columns.max())
    if shift:
        trace = complex(diag.sum()) if op.is_complex else float(diag.sum())
        mu = trace / op.n
        shifted = float((columns - np.abs(diag) + np.abs(diag - mu)).max())
        if shifted < plain:
            return mu, shifted, "1-norm"
    return 0.0, plain, "1-norm"


class _Shifted:
    r"""Block products with :math:`A - \mu I` (and, where available, its transpose), counted.

    For scipy sparse :math:`A` the shifted matrix is formed once (O(nnz)), which saves the extra
    pass over the block that :math:`AX - \mu X` costs at every product.
    """

    def __init__(self, op: LinearMap, mu: float):
        self.op, self.mu, self.products = op, mu, 0
        self.matrix = None
        if op.scipy_matrix is not None and mu != 0.0:
            import scipy.sparse

            matrix = op.scipy_matrix
            self.matrix = (matrix - mu * scipy.sparse.eye_array(op.n, format="csr", dtype=matrix.dtype)).tocsr()
        # Products that certainly return a new array may be scaled in place.
        self.fresh = op.explicit() or mu != 0.0

    def matmat(self, x):
        self.products += 1
        if self.matrix is not None:
            return self.matrix @ x
        y = self.op._matmat(x)
        return y - self.mu * x if self.mu != 0.0 else y

    @functools.cached_property
    def adjoint(self):
        r"""A function computing :math:`A^* X` (:math:`A^\top X` if real), or ``None`` when the operator offers none."""
        return self.op.transpose_action()

    def rmatmat(self, x):
        self.products += 1
        y = self.adjoint(x)
        return y - self.mu.conjugate() * x if self.mu != 0.0 else y


def _one_norm_estimate(shifted: _Shifted, p: int, reference, *, columns: int = 2, itmax: int = 5) -> float:
    r"""Estimate :math:`\lVert (A-\mu I)^p\rVert_1` by the block 1-norm power method.

    Higham & Tisseur (2000), Algorithm 2.4 with ``t = columns``, less its test for parallel columns;
    a lower bound, almost always within a factor 3 and usually exact.  Runs in ``reference``'s namespace
    and device; the starting block is seeded, so the estimate is reproducible.
    """
    xp = namespace(reference)
    n = shifted.op.n
    columns = min(columns, n)
    start = np.ones((n, columns))
    start[:, 1:] = np.random.default_rng(0).choice([-1.0, 1.0], size=(n, columns - 1))
    x = like(start / n, reference)
    estimate, best, used, index = 0.0, None, set(), None
    for it in range(itmax):
        y = x
        for _ in range(p):
            y = shifted.matmat(y)
        norms = to_numpy(xp.sum(xp.abs(y), axis=0))
        j = int(np.argmax(norms))
        if it > 0 and norms[j] <= estimate:
            break
        estimate = float(norms[j])
        if it > 0:
            best = index[j]
        if "complex" in str(y.dtype):  # sign(y) = y/|y| (Higham & Tisseur 2000, §2, complex case)
            size = xp.abs(y)
            z = xp.where(size > 0, y / xp.where(size > 0, size, xp.ones_like(size)), xp.ones_like(y))
        else:
            z = xp.where(y >= 0, xp.ones_like(y), -xp.ones_like(y))
        for _ in range(p):
            z = shifted.rmatmat(z)
        h = to_numpy(xp.max(xp.abs(z), axis=1))
        if it > 0 and h.max() <= h[best]:
            break
        index = [i for i in _largest_first(h, columns + len(used)).tolist() if i not in used][:columns]
        if not index:
            break
        used.update(index)
        unit = np.zeros((n, len(index)))
        unit[index, np.arange(len(index))] = 1.0
        x = like(unit, reference)
    return estimate


def _largest_first(h: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` of ``np.argsort(-h, kind="stable")`` (largest first, ties by index) without sorting all of h.

    At n = 10⁵ the whole stable sort and a Python pass over it took a fifth of a Taylor run's time.
    """
    n = h.size
    if k >= n:
        return np.argsort(-h, kind="stable")
    kth = np.partition(h, n - k)[n - k]  # the k-th largest value
    above = np.flatnonzero(h > kth)
    ties = np.flatnonzero(h == kth)[: k - above.size]  # the lowest indices among the ties, as the stable sort
    chosen = np.concatenate([above, ties])
    return chosen[np.lexsort((chosen, -h[chosen]))]


def _power_norms(shifted: _Shifted, powers, how: str, reference) -> dict[int, float]:
    r"""Return :math:`\{p: d_p\}`, :math:`d_p = \lVert (A-\mu I)^p\rVert_1^{1/p}`, for ``p`` in ``powers``.

    ``how="exact"`` multiplies dense float64 host copies (small explicit operators);
    ``"estimate"`` runs :func:`_one_norm_estimate` (block products, counted by ``shifted``).
    """
    if how == "exact":
        op = shifted.op
        m = op.host_dense() - shifted.mu * np.eye(op.n)
        power, out = m, {}
        # Entries near 1e300 overflow the powers: an infinite (or NaN) d_p bounds nothing, and is reported as
        # inf, so that the caller's min(·, |t|·‖A‖₁) falls back on the 1-norm.
        with np.errstate(over="ignore", invalid="ignore"):
            for p in range(2, max(powers) + 1):
                power = power @ m
                if p in powers:
                    value = float(np.abs(power).sum(axis=0).max())
                    out[p] = value ** (1.0 / p) if math.isfinite(value) else math.inf
        return out
    return {p: _one_norm_estimate(shifted, p, reference) ** (1.0 / p) for p in powers}


def _select_degree(alpha: dict[int, float], theta: np.ndarray, m_max: int, name: str = "A") -> tuple[int, int, int]:
    r"""Minimise :math:`m\lceil\alpha_p/\theta_m\rceil` over :math:`p` and :math:`m \ge p(p-1)-1`.

    Returns ``(m, s, p)``; ties go to the smaller degree (fewer products when terminating early).
    """
    best = None
    for p, a in alpha.items():
        if not math.isfinite(a):
            raise ValueError(
                f"exp(tA)B needs the norm bound |t|·‖{name}‖ to be finite, got {a:g}; rescale {name} or t (the "
                f"work, about |t|·‖{name}‖/θ_m products of {name}, would be unbounded)"
            )
        for m in range(max(1, p * (p - 1) - 1), m_max + 1):
            ratio = a / float(theta[m - 1])  # a Python float: inf, without a warning, for |t|·‖A‖ near 1e308
            steps = max(math.ceil(ratio), 1) if ratio <= 2.0**62 else ratio
            cost = m * steps
            if best is None or cost < best[0]:
                best = (cost, m, steps, p)
    return best[1], best[2], best[3]


# ---- the method -------------------------------------------------------------------------------------


def _inf_norm(xp, x) -> float:
    """The matrix ∞-norm (largest row sum) of a block, the norm Algorithm 3.2 tests."""
    return float(xp.max(xp.sum(xp.abs(x), axis=1)))


def _max_abs(xp, x) -> float:
    """The ∞-norm of a single column."""
    return float(xp.max(xp.abs(x)))


def expmv_taylor(
    op,
    B,
    t: float,
    *,
    tol: float = 2.0**-53,
    m_max: int = 55,
    p_max: int = 8,
    shift: bool = True,
    power_norms: str = "auto",
    error: str = "backward",
):
    r"""Apply :math:`e^{tA}` to a block by truncated Taylor series with scaling (Al-Mohy & Higham 2011).

    Computes :math:`F = e^{t\mu}\,T_m(t(A-\mu I)/s)^s B` by :math:`s` steps of at most :math:`m`
    block products each, the pair :math:`(m, s)` minimising :math:`ms` subject to the backward-error
    bound below; each step stops early once two consecutive terms are below ``tol`` times the
    partial sum (the paper's Algorithm 3.2).

    **Error contract.**  With ``error="backward"`` (the paper's, and scipy's, meaning of ``tol``), in
    exact arithmetic the result is :math:`e^{t(A+\Delta A)}B` for a :math:`\Delta A` that commutes with
    :math:`A` and satisfies :math:`\lVert t\Delta A\rVert \le \mathrm{tol}\cdot\alpha`, where
    :math:`\alpha` is the bound on :math:`\lVert t(A-\mu I)\rVert` used (``info["norm_bound"]``).
    (:math:`s\tilde h_{m+1}(\alpha/s) \le \mathrm{tol}\cdot\alpha` since :math:`\alpha/s \le \theta_m`).
    Because :math:`\Delta A` commutes with :math:`A`, the forward error obeys

    .. math::

        \lVert \hat Y - e^{tA}B\rVert = \lVert (e^{t\Delta A} - I)\,e^{tA}B\rVert
        \le (e^{\mathrm{tol}\,\alpha} - 1)\,\lVert e^{tA}B\rVert ,

    in the Frobenius norm of the block when :math:`A` is symmetric (``norm_kind="2-norm"``), and
    column by column in the 1-norm otherwise; the factor is ``info["error_estimate"]``.
    ``error="forward"`` shrinks the backward tolerance to :math:`\log(1+\mathrm{tol})/\alpha`, which
    makes that a-priori bound at most ``tol`` (a few per cent more products at ``tol`` = 2⁻⁵³; more as
    :math:`\alpha` grows).  Not covered: rounding errors (of order :math:`u\,\alpha` for the usual
    dissipative problems), the early termination (a heuristic, as in the paper), and the
    :math:`\alpha_p` taken from the 1-norm *estimator* (a lower bound on the true :math:`d_p`).
    ``tol`` below the unit roundoff of ``B``'s dtype is raised to it (``info["tol"]``).

    Parameters
    ----------
    op : LinearMap or operator
        The operator :math:`A`: a :class:`~workbench.expmv.LinearMap` or anything
        :func:`~workbench.expmv.as_linear_map` accepts.
    B : array, shape=[n] or [n, k]
        numpy or torch (any device), real or complex, single or double precision; the products run in
        its library (complex when :math:`A` is).
    t : float
        Real time, of either sign.
    tol : float
        Relative backward error per unit norm (see the contract), in (0, 1).
    m_max, p_max : int
        Largest Taylor degree (1–100) and largest power :math:`p` in the :math:`\alpha_p` bounds
        (1–20, lowered to the largest :math:`p` with :math:`p(p-1) - 1 \le m_{\max}`); the paper's 55 and 8.
    shift : bool
        Shift by :math:`\mu` (trace/n, or the Gershgorin midpoint for symmetric :math:`A`) when it does
        not increase the norm; :math:`e^{tA}B = e^{t\mu}e^{t(A-\mu I)}B`.
    power_norms : {'auto', 'exact', 'estimate', 'off'}
        How to get :math:`d_p = \lVert (A-\mu I)^p\rVert_1^{1/p}`, :math:`p \le p_{\max}+1` (for
        symmetric :math:`A` only :math:`d_{p_{\max}+1}` unless exact): ``'auto'`` only when the
        paper's test (3.13), :math:`\alpha > 4\theta_{m_{\max}} p_{\max}(p_{\max}+3)/(m_{\max}k)`,
        says they can pay off, then exactly from dense powers for explicit operators with
        :math:`n \le 128` and otherwise by the block 1-norm estimator (needs products with
        :math:`A^\top`: explicit operators, LinearOperators with ``rmatmat``, symmetric structured
        ones; else ``'off'``); ``'exact'`` and ``'estimate'`` force one way (``'exact'`` needs an
        explicit operator with :math:`n \le 1024`); ``'off'`` uses the plain bound only.
    error : {'backward', 'forward'}
        What ``tol`` bounds (see the contract).

    Returns
    -------
    Y : array, shape=[n, k]
        :math:`\approx e^{tA}B`, in ``B``'s library, dtype and device.
    info : dict
        ``method`` ('taylor'), ``matvecs`` (block products with :math:`A`, those of the norm estimator
        included), ``norm_matvecs`` (the estimator's share), ``error_estimate`` (the a-priori forward
        bound above), ``backward_error_bound`` (:math:`\mathrm{tol}\cdot\alpha`), ``degree`` (m),
        ``steps`` (s), ``p``, ``shift`` (μ), ``norm_bound`` (α), ``norm_kind``, ``power_norms``
        (how α was obtained), ``tol`` (the backward tolerance used).

    Raises
    ------
    ValueError
        If :math:`e^{tA}B` (or the factor :math:`e^{t\mu}`) is beyond the floating range of the dtype.
    ValueError
        If the plan needs more than :data:`MAX_PRODUCTS` (10⁷) block products (or :math:`|t|\lVert A\rVert` is
        not finite): the work is refused before it starts.

    References
    ----------
    Al-Mohy & Higham (2011), Algorithm 3.2 and Code Fragment 3.1; see the module docstring.

    Examples
    --------
    The 2×2 Jordan block: :math:`e^{t[[\lambda,1],[0,\lambda]]} = e^{\lambda t}[[1,t],[0,1]]`.

    >>> import numpy as np
    >>> from workbench.expmv import as_linear_map
    >>> A = np.array([[-0.5, 1.0], [0.0, -0.5]])
    >>> y, info = expmv_taylor(as_linear_map(A), np.eye(2), 3.0)
    >>> exact = np.exp(-1.5) * np.array([[1.0, 3.0], [0.0, 1.0]])
    >>> bool(np.allclose(y, exact, rtol=1e-15, atol=1e-16)), info["matvecs"] <= info["degree"] * info["steps"]
    (True, True)
    """
    op = as_linear_map(op, "op")
    B, vector = as_block(op, B, op_name="op")  # finite, [n, k], promoted: complex A makes the block complex
    xp = namespace(B)
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    m_max = check_integer("m_max", m_max, 1, 100)
    p_max = check_integer("p_max", p_max, 1, 20)
    while p_max > 1 and p_max * (p_max - 1) - 1 > m_max:
        p_max -= 1  # α_p needs a degree m ≥ p(p-1) - 1
    check_choice("power_norms", power_norms, ("auto", "exact", "estimate", "off"))
    check_choice("error", error, ("backward", "forward"))
    t = check_in_range("t", t)
    if power_norms == "exact" and not (op.explicit() and op.n <= 1024):
        raise ValueError(
            f"power_norms='exact' needs an explicit operator with n <= 1024, got a {op.kind} operator with n = {op.n}"
        )
    tol = max(tol, unit_roundoff(B))
    n, k = int(B.shape[0]), int(B.shape[1])
    info = {
        "method": "taylor",
        "matvecs": 0,
        "norm_matvecs": 0,
        "error_estimate": 0.0,
        "backward_error_bound": 0.0,
        "degree": 0,
        "steps": 0,
        "p": 1,
        "shift": 0.0,
        "norm_bound": 0.0,
        "norm_kind": "1-norm",
        "power_norms": "off",
        "tol": tol,
    }
    if t == 0.0 or n == 0 or k == 0:
        return finish(xp, xp.asarray(B, copy=True), vector), info

    mu, bound, kind = _shift_and_norm(op, shift)
    alpha1 = abs(t) * bound
    info.update(shift=mu, norm_kind=kind, norm_bound=alpha1)
    if error == "forward" and alpha1 > 0:
        tol = min(tol, math.log1p(tol) / alpha1)
        info["tol"] = tol
    theta = np.array(theta_table(tol, m_max))

    # Degree and steps (Code Fragment 3.1).
    shifted = _Shifted(op, mu)
    if alpha1 == 0.0:
        m, s, p, alpha = 0, 1, 1, 0.0
    else:
        how = power_norms
        if how == "auto":
            worth_it = alpha1 > 4.0 * theta[m_max - 1] * p_max * (p_max + 3) / (m_max * k)
            small = op.explicit() and op.n <= _EXACT_POWER_MAX_N
            how = "off" if not worth_it else ("exact" if small else "estimate")
        if how == "estimate" and shifted.adjoint is None:
            how = "off"
        alphas = {1: alpha1}
        if how != "off" and p_max >= 2:
            if kind == "2-norm":
                # Symmetric: ρ(X) ≤ ‖X^p‖^{1/p} for every p and the 2-norm bound needs only ρ, for any m;
                # the highest power is usually the sharpest, so estimate only that one.
                powers = range(2, p_max + 2) if how == "exact" else [p_max + 1]
                d = _power_norms(shifted, list(powers), how, B)
                alphas = {1: min(alpha1, *(abs(t) * v for v in d.values()))}
            else:
                d = _power_norms(shifted, list(range(2, p_max + 2)), how, B)
                for q in range(2, p_max + 1):
                    alphas[q] = min(abs(t) * max(d[q], d[q + 1]), alpha1)
        info.update(power_norms=how, norm_matvecs=shifted.products)
        m, s, p = _select_degree(alphas, theta, m_max, op.name)
        if m * s > MAX_PRODUCTS:
            raise ValueError(
                f"expmv_taylor would need about {m * s:.3g} products of {op.name} (degree {m} × {s} steps for "
                f"|t|·‖{op.name}‖ ≈ {alphas[p]:.3g}), more than the budget of {MAX_PRODUCTS:.0e}; shorten t (or "
                f"rescale {op.name}), split the time interval, or use a method suited to the operator "
                "(uniformization for Markov generators, Chebyshev for symmetric A)"
            )
        alpha = alphas[p]
        backward = tol * alpha  # ≥ s·h̃(α/s), since α/s ≤ θ_m
        info.update(norm_bound=alpha, backward_error_bound=backward, error_estimate=math.expm1(backward))

    # Algorithm 3.2: s steps of the truncated series, each ending with the factor e^{tμ/s}.
    growth = t * mu.real / s  # log |e^{tμ/s}|
    if not growth <= _LOG_MAX:
        raise ValueError(
            f"exp(tA)B overflows: the shift factor exp(t*mu/s) has |exp(t*mu/s)| = exp({growth:.6g}) (t = {t:g}, "
            f"mu = {mu:.6g}, the mean of {op.name}'s diagonal); rescale {op.name} or t (the result is beyond the "
            "floating range)"
        )
    eta = cmath.exp(t * mu / s) if isinstance(mu, complex) else math.exp(t * mu / s)
    f = xp.asarray(B, copy=True)
    norm = _inf_norm if k > 1 else _max_abs
    guard = np.errstate(over="ignore", invalid="ignore") if array_api_compat.is_numpy_namespace(xp) else nullcontext()
    with guard:
        for _ in range(s):
            v = f
            c1 = norm(xp, v)
            f_bound = c1  # an upper bound on ‖F‖∞, grown by the triangle inequality
            for j in range(1, m + 1):
                w = shifted.matmat(v)
                scale = t / (s * j)
                if shifted.fresh:
                    w *= scale
                    v = w
                else:
                    v = w * scale
                c2 = norm(xp, v)
                f += v
                f_bound += c2
                # ‖F‖ is needed only when the cheap upper bound lets the test pass.
                if c1 + c2 <= tol * f_bound and c1 + c2 <= tol * norm(xp, f):
                    break
                c1 = c2
            if eta != 1.0:
                f *= eta
    info.update(matvecs=shifted.products, degree=m, steps=s, p=p)
    if not bool(xp.all(xp.isfinite(f))):
        raise ValueError(
            f"exp(tA)B overflows the {f.dtype} range (t = {t:g}, bound on ||t({op.name} - mu I)|| = {alpha1:.3g}); "
            f"rescale B or {op.name}, or shorten t"
        )
    return finish(xp, f, vector), info
