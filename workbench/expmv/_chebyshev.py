r"""Chebyshev expansion of :math:`e^{tA}B` for symmetric :math:`A` with spectrum in :math:`[a, b]`.

On :math:`[a, b]` write :math:`x = c + h y` with centre :math:`c = (a+b)/2`, half-width
:math:`h = (b-a)/2` and :math:`y \in [-1, 1]`.  The Jacobi–Anger expansion
:math:`e^{\tau y} = I_0(\tau) + 2\sum_{k\ge1} I_k(\tau)\,T_k(y)` with :math:`\tau = th` gives

.. math::

    e^{tA}B = \sum_{k\ge0} c_k\, T_k(\hat A)\,B, \qquad
    \hat A = \frac{2A - (a+b)I}{b-a}, \qquad
    c_k = (2-\delta_{k0})\, e^{tc}\, I_k(th),

evaluated with the three-term recurrence :math:`T_{k+1}(\hat A)B = 2\hat A\,T_k(\hat A)B - T_{k-1}(\hat A)B`,
one block product per degree.  The coefficients are formed from the exponentially scaled Bessel function
:math:`\mathrm{ive}_k(|\tau|) = I_k(|\tau|)e^{-|\tau|}` (:func:`scipy.special.ive`), so that
:math:`c_k = M\,\tilde c_k` with :math:`M = e^{tc + |\tau|} = \max_{x\in[a,b]} e^{tx}` and
:math:`|\tilde c_k| \le 2`: nothing overflows before the single final scaling by :math:`M`.

Because :math:`I_k(\tau)e^{-|\tau|} \approx e^{-k^2/(2|\tau|)}/\sqrt{2\pi|\tau|}` for :math:`k \ll |\tau|`,
the degree grows like :math:`\sqrt{|\tau|\log(1/\mathrm{tol})}`, against :math:`\sim|\tau|` products for
Taylor methods (``scipy.sparse.linalg.expm_multiply``): this is where the speed on stiff heat kernels
:math:`e^{-tL}` comes from (Hochbruck & Lubich 1997, Theorem 2).

References
----------
Lie-Exponential Roadmap: "compute :math:`Pv = \exp(tQ)v` via Krylov/Chebyshev approximations".
M. Hochbruck and C. Lubich, "On Krylov subspace approximations to the matrix exponential operator",
SIAM J. Numer. Anal. 34 (1997), 1911–1925 (Chebyshev degree :math:`\sim\sqrt{\tau}`).
H. Tal-Ezer and R. Kosloff, "An accurate and efficient scheme for propagating the time dependent
Schrödinger equation", J. Chem. Phys. 81 (1984), 3967 (the Chebyshev–Bessel propagator).
K. V. Thiruvenkatachar and T. S. Nanjundiah, "Inequalities concerning Bessel functions and orthogonal
polynomials", Proc. Indian Acad. Sci. A 33 (1951), 373–384 (Turán inequality
:math:`I_\nu^2 > I_{\nu-1}I_{\nu+1}`, used for the rigorous tail bound).
Y. Zhou and R.-C. Li, "Bounding the spectrum of large Hermitian matrices", Linear Algebra Appl. 435
(2011), 480–493 (Lanczos bounds on the extreme eigenvalues).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import array_api_compat
import numpy as np
import scipy.special

from workbench.backend import namespace, to_numpy, unit_roundoff
from workbench.expmv._banded import BandedMatrix
from workbench.expmv._blocks import MAX_PRODUCTS, as_block, axpy, finish, fresh_product, scale_by_power_of_two
from workbench.expmv._krylov import expmv_krylov
from workbench.expmv._linear import AccuracyWarning, LinearMap, as_linear_map
from workbench.validation import as_array, check_flag, check_in_range

__all__ = ["ChebyshevExpansion", "chebyshev_exp_coefficients", "expmv_chebyshev"]

#: log of the largest float64 (math.exp overflows past it).
_LOG_MAX = math.log(np.finfo(np.float64).max)
#: Most Lanczos steps used by ``interval="lanczos"`` (it stops once the extreme Ritz values have settled).
LANCZOS_STEPS = 64
#: Check ``‖T_k(Â)B‖_F ≤ ‖B‖_F`` every this many degrees (one host sync each).
GROWTH_CHECK_EVERY = 16


class _ExpansionFields(NamedTuple):
    coefficients: np.ndarray
    log_scale: float
    tail_bound: float
    center: float
    half_width: float


class ChebyshevExpansion(_ExpansionFields):
    r"""Truncated Chebyshev expansion :math:`e^{tx} \approx e^{\ell}\sum_{k=0}^{K}\tilde c_k T_k((x-c)/h)` on :math:`[c-h, c+h]`.

    Attributes
    ----------
    coefficients : numpy.ndarray, shape=[K + 1]
        :math:`\tilde c_k = (2 - \delta_{k0})\,\mathrm{sign}(\tau)^k\,\mathrm{ive}_k(|\tau|)`, :math:`\tau = th`.
    log_scale : float
        :math:`\ell = tc + |\tau| = \log\max_{x\in[c-h, c+h]} e^{tx}`.
    tail_bound : float
        :math:`\sum_{k>K}|\tilde c_k|`, a bound on :math:`\max_{[c-h,c+h]}|e^{tx} - \text{expansion}|/e^{\ell}`
        (rigorous up to the ~1e-14 relative accuracy of :func:`scipy.special.ive`).
    center, half_width : float
        :math:`c` and :math:`h` (:math:`h > 0`).

    Every field is checked on construction (finite numbers, :math:`\tilde c` a non-empty 1-D array,
    tail bound :math:`\ge 0`, :math:`h > 0`): an expansion with a NaN would evaluate to NaN silently.
    """  # noqa: E501

    __slots__ = ()

    def __new__(cls, coefficients, log_scale, tail_bound, center, half_width):
        coefficients = np.array(to_numpy(as_array("coefficients", coefficients, ndim=1)), dtype=np.float64)
        if coefficients.size == 0:
            raise ValueError("coefficients must hold at least one Chebyshev coefficient, got an empty array")
        return super().__new__(
            cls,
            coefficients,
            check_in_range("log_scale", log_scale),
            check_in_range("tail_bound", tail_bound, 0.0),
            check_in_range("center", center),
            check_in_range("half_width", half_width, 0.0, low_inclusive=False),
        )


def _bessel_degree(tau_abs: float, target: float) -> tuple[np.ndarray, float]:
    r"""Smallest :math:`K` with :math:`\sum_{k>K} 2\,\mathrm{ive}_k(|\tau|) \le` ``target``.

    Returns the values :math:`\mathrm{ive}_k(|\tau|)`, :math:`k = 0..K`, and the tail bound at :math:`K`.
    The tail beyond the last computed order :math:`N` is bounded with the Turán inequality: the ratio
    :math:`r_\nu = I_{\nu+1}/I_\nu` decreases in :math:`\nu`, so
    :math:`\sum_{k>N} I_k \le I_{N+1}/(1 - r_N)`.
    """
    if tau_abs == 0.0:
        return np.ones(1), 0.0
    log_inv = math.log(max(1.0 / target, 2.0))
    # Gaussian profile e^{-k²/(2|τ|)} for k ≪ |τ| and super-geometric decay past |τ| suggest this start.
    estimate = math.sqrt(2.0 * tau_abs * (log_inv + 8.0)) + log_inv + 32
    if not estimate <= MAX_PRODUCTS:  # one block product per degree: refuse before allocating the terms
        raise ValueError(
            f"a Chebyshev expansion of exp(tx) needs about {estimate:.3g} terms for |t|·(b - a)/2 = {tau_abs:.6g}, "
            f"more than {MAX_PRODUCTS:.0e}; shorten t or narrow the interval"
        )
    count = math.ceil(estimate)
    while True:
        values = scipy.special.ive(np.arange(count + 2), tau_abs)
        last, after = values[count], values[count + 1]
        remainder = 0.0 if after == 0.0 else 2.0 * after / (1.0 - after / last)
        # tails[K] = Σ_{K<k≤N} 2 ive_k + remainder, for K = 0..N.
        tails = np.concatenate([np.cumsum(2.0 * values[count:0:-1])[::-1], [0.0]]) + remainder
        good = np.nonzero(tails <= target)[0]
        if good.size:
            degree = int(good[0])
            return values[: degree + 1], float(tails[degree])
        count *= 2


def chebyshev_exp_coefficients(t, interval, tol=2.0**-53) -> ChebyshevExpansion:
    r"""Chebyshev coefficients of :math:`x \mapsto e^{tx}` on ``interval``, truncated at a proven tolerance.

    .. math::

        e^{tx} = e^{\ell}\sum_{k\ge0}\tilde c_k\,T_k\!\Big(\frac{x-c}{h}\Big),\qquad
        \tilde c_k = (2-\delta_{k0})\,\mathrm{sign}(\tau)^k\,I_k(|\tau|)\,e^{-|\tau|},\qquad
        \ell = tc + |\tau|,\ \tau = th,

    truncated at the smallest degree :math:`K` with :math:`\sum_{k>K}|\tilde c_k| \le` ``tol``, so that
    :math:`\max_{x\in[a,b]}|e^{tx} - e^{\ell}\sum_{k\le K}\tilde c_k T_k| \le \mathrm{tol}\cdot\max_{[a,b]}e^{tx}`
    (Jacobi–Anger expansion; :math:`|T_k| \le 1` on :math:`[-1, 1]`).

    Parameters
    ----------
    t : float
        Real time (either sign).
    interval : tuple of float
        :math:`(a, b)` with :math:`a < b`.
    tol : float
        Truncation tolerance relative to :math:`\max_{[a,b]} e^{tx}`, in :math:`(0, 1)`.

    Returns
    -------
    ChebyshevExpansion

    References
    ----------
    Abramowitz & Stegun 9.6.34 (Jacobi–Anger: :math:`e^{z\cos\theta} = I_0(z) + 2\sum_k I_k(z)\cos k\theta`).

    Examples
    --------
    Compare with the exponential itself on a grid, using numpy's independent Chebyshev evaluator:

    >>> import numpy as np
    >>> e = chebyshev_exp_coefficients(-3.0, (0.0, 4.0), tol=1e-15)
    >>> x = np.linspace(0.0, 4.0, 101)
    >>> approx = np.exp(e.log_scale) * np.polynomial.chebyshev.chebval((x - e.center) / e.half_width, e.coefficients)
    >>> bool(np.max(np.abs(approx - np.exp(-3.0 * x))) < 1e-14)
    True
    """
    t = check_in_range("t", t)
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    a, b = _check_interval(interval)
    center, half_width = 0.5 * (a + b), 0.5 * (b - a)
    tau = t * half_width
    values, tail = _bessel_degree(abs(tau), tol)
    coefficients = 2.0 * values
    coefficients[0] = values[0]
    if tau < 0:
        coefficients[1::2] *= -1.0  # I_k(-x) = (-1)^k I_k(x)
    return ChebyshevExpansion(coefficients, t * center + abs(tau), tail, center, half_width)


def _check_interval(interval) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise ValueError(f"interval must be a pair (a, b) of real numbers with a < b, got {interval!r}") from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"interval must be a pair (a, b) of finite real numbers with a < b, got ({a!r}, {b!r})")
    return a, b


def _is_complex(x) -> bool:
    return "complex" in str(x.dtype)


def _inner(xp, x, y):
    r"""The inner product :math:`x^*y` of two columns, as a Python number (complex for complex data)."""
    value = xp.sum(xp.conj(x) * y) if _is_complex(x) else xp.sum(x * y)
    return complex(value) if _is_complex(x) else float(value)


def _lanczos_interval(op: LinearMap, like, steps: int, t: float) -> tuple[tuple[float, float], int]:
    r"""An enclosure of the spectrum from at most ``steps`` Lanczos steps, intersected with Gershgorin.

    Ritz values :math:`\theta` lie inside the spectrum, and each has an eigenvalue within its residual
    norm :math:`\beta_m|e_m^\top s|`; the extreme Ritz values widened by their residuals (Zhou & Li 2011)
    enclose the spectrum once the extreme eigenvalues are found, which for a random start is what
    Lanczos does first.  It stops early once the residual at the end where :math:`e^{tx}` is largest is
    below :math:`0.05/|t|` (it inflates :math:`\max e^{tx}` by at most :math:`e^{0.05}`; the other end
    only costs terms).  Small problems (:math:`n\,m \le 2^{22}`) are fully reorthogonalised; large ones
    run the plain three-term recurrence, whose extreme Ritz values are unaffected by the loss of
    orthogonality (Paige) and which costs :math:`O(n)` memory per step.  This is not a proof that no
    eigenvalue lies beyond, hence the growth check in :func:`expmv_chebyshev`.
    """
    xp = namespace(like)
    n = op.n
    steps = max(1, min(steps, n))
    full = n * steps <= 2**22
    start = np.random.default_rng(0).standard_normal((n, 1))
    v = xp.asarray(start, dtype=like.dtype, device=array_api_compat.device(like))
    basis = [v / xp.linalg.vector_norm(v)]
    alphas, betas = [], []

    def enclosure(beta):
        m = len(alphas)
        tridiagonal = np.diag(alphas) + np.diag(betas[: m - 1], 1) + np.diag(betas[: m - 1], -1)
        ritz, vectors = np.linalg.eigh(tridiagonal)
        residual = beta * np.abs(vectors[-1, [0, -1]])
        growing_side = residual[1] if t > 0 else residual[0]
        return float(ritz[0] - residual[0]), float(ritz[-1] + residual[1]), float(growing_side)

    for step in range(steps):
        current = basis[-1]
        w = xp.astype(op._matmat(current), like.dtype)
        alphas.append(_inner(xp, current, w).real)  # real for Hermitian A
        if full:
            stacked = xp.concat(basis, axis=1)
            adjoint = xp.matrix_transpose(xp.conj(stacked) if _is_complex(like) else stacked)
            for _ in range(2):  # twice is enough (Kahan–Parlett)
                w = w - stacked @ (adjoint @ w)
        else:
            w = w - alphas[-1] * current - (betas[-1] * basis[-2] if betas else 0.0)
            w = w - _inner(xp, current, w) * current  # local reorthogonalisation
        beta = float(xp.linalg.vector_norm(w))
        if (full and len(basis) == n) or beta <= 1e-12 * max(abs(alphas[-1]), 1e-300):
            lo, hi, _ = enclosure(0.0)  # invariant subspace: the Ritz values are eigenvalues
            break
        lo, hi, residual = enclosure(beta)
        if step >= 7 and abs(t) * residual <= 0.05:
            break
        betas.append(beta)
        basis.append(w / beta)
        if not full:
            basis = basis[-2:]
    g_lo, g_hi = op.gershgorin()
    if not (math.isfinite(lo) and math.isfinite(hi)):  # the recurrence overflowed (entries near the float range)
        lo, hi = g_lo, g_hi
    lo, hi = max(lo, g_lo), min(hi, g_hi)
    if not lo < hi:
        pad = max(abs(lo), abs(hi), 1.0) * 1e-12
        lo, hi = lo - pad, hi + pad
    return (lo, hi), len(alphas)


def _gershgorin_is_tight(op: LinearMap, like, t: float, bounds) -> bool:
    r"""Whether a Rayleigh quotient certifies the Gershgorin end where :math:`e^{tx}` is largest.

    :math:`R(v) = v^\top Av/v^\top v` lies in :math:`[\lambda_{\min}, \lambda_{\max}]`; if the constant or
    the alternating vector has :math:`|t|\,|g - R(v)| \le 1` at that end :math:`g`, then
    :math:`\max e^{tx}` is within a factor :math:`e` of :math:`\lVert e^{tA}\rVert` and nothing is gained
    by looking further.  This is exact for graph Laplacians and generators (:math:`R(\mathbf 1) = 0`) and
    for bipartite ones at the other end (alternating signs).  One block product of two columns.
    """
    xp = namespace(like)
    n = op.n
    probes = np.ones((n, 2))
    probes[1::2, 1] = -1.0
    probes = xp.asarray(probes, dtype=like.dtype, device=array_api_compat.device(like))
    quotients = np.real(to_numpy(xp.sum(probes * xp.astype(op._matmat(probes), like.dtype), axis=0))) / n
    end = bounds[1] if t > 0 else bounds[0]
    return bool(abs(t) * float(np.min(np.abs(end - quotients))) <= 1.0)


def _spectral_interval(op: LinearMap, like, interval, t: float):
    """Interval, how it was obtained, and the block products spent on it."""
    if interval is None or (isinstance(interval, str) and interval in ("auto", "gershgorin")):
        bounds = tuple(float(v) for v in op.gershgorin())
        if interval == "gershgorin" or bounds[0] == bounds[1]:
            return bounds, "gershgorin", 0
        if _gershgorin_is_tight(op, like, t, bounds):
            return bounds, "gershgorin", 1
        lanczos, spent = _lanczos_interval(op, like, LANCZOS_STEPS, t)
        return lanczos, "lanczos", 1 + spent
    if isinstance(interval, str):
        if interval != "lanczos":
            raise ValueError(
                f"interval must be None, 'auto', 'gershgorin', 'lanczos' or a pair (a, b), got {interval!r}"
            )
        bounds, spent = _lanczos_interval(op, like, LANCZOS_STEPS, t)
        return bounds, "lanczos", spent
    return _check_interval(interval), "given", 0


class _SpectrumEscape(Exception):
    def __init__(self, degree: int, ratio: float):
        super().__init__(degree, ratio)
        self.degree, self.ratio = degree, ratio


def _shifted_product(op: LinearMap, center: float, scale: float, like):
    r"""The map :math:`X \mapsto s\,(A - cI)X` in ``like``'s dtype.

    For scipy sparse and banded :math:`A` the shifted, scaled matrix is formed once
    (:math:`O(\mathrm{nnz})`), which saves two passes over the block per product; otherwise the shift is
    applied after each product.
    """
    xp = namespace(like)
    if isinstance(op.a, BandedMatrix) and op.a.namespace() is xp:
        banded = op.a
        diagonals = xp.astype(banded.diagonals * scale, like.dtype)
        offsets = list(banded.offsets)
        if 0 not in offsets:
            offsets.append(0)
            diagonals = xp.concat([diagonals, xp.zeros_like(diagonals[:1, :])], axis=0)
        main = offsets.index(0)
        diagonals[main, :] = diagonals[main, :] - center * scale
        shifted = BandedMatrix(offsets, diagonals)
        return shifted._matmat_unchecked
    if op.scipy_matrix is not None and isinstance(like, np.ndarray):
        import scipy.sparse

        shifted = (op.scipy_matrix - center * scipy.sparse.eye_array(op.n, format="csr")) * scale
        shifted = scipy.sparse.csr_array(shifted).astype(like.dtype)
        return lambda x: shifted @ x

    def product(x):
        y = fresh_product(xp, op, x, like.dtype)  # the recurrence updates it in place
        if center != 0.0:
            axpy(y, -center, x)
        y *= scale
        return y

    return product


def _chebyshev_sum(op, b, expansion_for, tol, unit):
    r"""Run the recurrence; extend the degree once the size of the result is known.

    Returns the scaled sum :math:`S = \sum_{k\le K}\tilde c_k T_k(\hat A)B`, the final expansion, the
    number of block products and :math:`\lVert B\rVert_F`.
    """
    xp = namespace(b)
    norm_b = float(xp.linalg.vector_norm(b))
    expansion = expansion_for(tol)
    two_a_hat = _shifted_product(op, expansion.center, 2.0 / expansion.half_width, b)  # X ↦ 2ÂX
    total = float(expansion.coefficients[0]) * b
    previous, current = b, None
    degree, matvecs = 0, 0

    def advance(coefficients, stop):
        nonlocal previous, current, degree, matvecs, total
        while degree < stop:
            product = two_a_hat(previous if current is None else current)
            matvecs += 1
            if current is None:  # T_1 = Â B
                product *= 0.5
            else:  # T_{k+1} = 2 Â T_k - T_{k-1}
                product -= previous
                previous = current
            current = product
            degree += 1
            axpy(total, float(coefficients[degree]), current)
            if degree % GROWTH_CHECK_EVERY == 0 or degree == stop:
                # |T_k| ≤ 1 on [-1, 1]: growth means the interval misses part of the spectrum.
                ratio = float(xp.linalg.vector_norm(current)) / norm_b
                if not ratio <= 1.0 + 1e-6 + 16.0 * degree * unit:
                    raise _SpectrumEscape(degree, ratio)

    advance(expansion.coefficients, len(expansion.coefficients) - 1)
    # A posteriori: the truncation was set against M‖B‖_F; rescale the target to ‖Y‖_F, but never
    # below the rounding floor (pointless: the recurrence itself commits errors of order u·M‖B‖).
    rho = float(xp.linalg.vector_norm(total)) / norm_b
    target = max(tol * rho, unit / 8.0)
    if expansion.tail_bound > target:
        expansion = expansion_for(min(target, tol))
        advance(expansion.coefficients, len(expansion.coefficients) - 1)
    return total, expansion, matvecs, norm_b


def expmv_chebyshev(op, B, t, *, tol=2.0**-53, interval=None, assume_symmetric=False):
    r"""Apply :math:`e^{tA}` to a block :math:`B` by a Chebyshev expansion on a spectral interval of symmetric :math:`A`.

    .. math::

        e^{tA}B \approx e^{\ell}\sum_{k=0}^{K}\tilde c_k\,T_k(\hat A)B,\qquad
        \hat A = \frac{2A-(a+b)I}{b-a},\quad
        \tilde c_k = (2-\delta_{k0})\,\mathrm{sign}(\tau)^k\,I_k(|\tau|)e^{-|\tau|},\quad
        \tau = t\,\frac{b-a}{2},\ \ell = t\,\frac{a+b}{2} + |\tau|

    (see :func:`chebyshev_exp_coefficients`).  One block product :math:`AX` per degree.

    **Error contract.**  Write :math:`M = \max_{x\in[a,b]} e^{tx} = e^{\ell}` (:math:`e^{tb}` for
    :math:`t > 0`, :math:`e^{ta}` for :math:`t < 0`) and :math:`\rho = \lVert Y\rVert_F / (M\lVert B\rVert_F)`.
    If the spectrum of :math:`A` lies in :math:`[a, b]`, then in exact arithmetic

    .. math::

        \lVert Y - e^{tA}B\rVert_F \le \varepsilon_K\, M\,\lVert B\rVert_F,\qquad
        \varepsilon_K = \sum_{k>K}|\tilde c_k|,

    (``info["truncation_bound"]``, rigorous).  :math:`K` is first chosen with :math:`\varepsilon_K \le`
    ``tol`` (the absolute contract in units of :math:`M\lVert B\rVert_F`), then raised once the result
    is known so that :math:`\varepsilon_K \le \max(\mathrm{tol}\cdot\rho,\ u/8)`: the relative contract
    :math:`\lVert Y - e^{tA}B\rVert_F \le \mathrm{tol}\,\lVert Y\rVert_F` holds for the truncation whenever
    :math:`\mathrm{tol}\cdot\rho \ge u/8` (:math:`u` the unit roundoff of ``B``'s dtype).  Rounding in the
    recurrence adds about :math:`u\sqrt{K}\,M\lVert B\rVert_F` (heuristic, observed; up to
    :math:`uK` in the worst case).  ``info["error_estimate"]`` is
    :math:`(\varepsilon_K + u\sqrt{K+1})/\rho`, the estimated relative error.  For heat kernels
    :math:`e^{-tL}`, :math:`L \ge 0`, :math:`M \approx 1` and :math:`\rho` is small when :math:`B` is
    nearly orthogonal to the slow modes: the result is then accurate relative to :math:`\lVert B\rVert_F`,
    not to itself.  The same happens when the interval reaches far beyond the spectrum on the side where
    :math:`e^{tx}` is largest (:math:`M` grows by :math:`e^{|t|\Delta}`; loose Gershgorin bounds of a
    general symmetric matrix would, hence the default ``interval="auto"``).  An
    :class:`~workbench.expmv._linear.AccuracyWarning` is raised when the estimate exceeds
    :math:`\max(\mathrm{tol}, \sqrt u)`, i.e. when rounding has cost half the digits.

    **The interval.**  Gershgorin bounds (``op.gershgorin()``) are rigorous for explicit and structured
    operators (for a ``LinearOperator`` they are :math:`\pm` an estimated 1-norm), and exact at the growing
    end for graph Laplacians and Markov generators, but can be loose by a factor ~2 for a general symmetric
    matrix.  The default ``"auto"`` keeps them when a Rayleigh quotient (of the constant or the alternating
    vector; one product of two columns) comes within :math:`1/|t|` of the end where :math:`e^{tx}` is
    largest, and otherwise tightens them with Lanczos (below).  A given interval is the caller's promise.
    A wider interval is still correct, at the price of more terms (and a larger :math:`M` if it is wider
    at the growing end).  A too-narrow interval is detected when it matters:
    :math:`\lVert T_k(\hat A)B\rVert_F \le \lVert B\rVert_F` must hold on :math:`[-1, 1]`, and is checked
    every 16 degrees and at the end; growth raises ``ValueError`` (given interval); for a Lanczos interval,
    which is a hypothesis until this check, it falls back to Gershgorin bounds when a Rayleigh quotient
    certifies their growing end (as above), and otherwise to :func:`~workbench.expmv.expmv_krylov`
    (Lanczos time stepping, no interval needed; ``info["method"]`` is then ``"krylov"`` and
    ``info["fallback_from"]`` ``"chebyshev"``): Chebyshev never runs on an interval whose growing end is
    neither certified nor survived by the check.  An eigenvalue a distance :math:`\delta` outside, in a direction
    :math:`B` barely touches, can escape the check; the series still converges there, and that component's
    error is about :math:`\varepsilon_K\cosh(K\operatorname{arccosh}(1+\delta/h))` — small unless
    :math:`K\sqrt{2\delta/h} \gg 1`, which is when the check fires for any visible component.

    Parameters
    ----------
    op : LinearMap or operator
        Symmetric :math:`A`, or Hermitian (:math:`A = A^*`) when complex: the expansion needs a real
        spectrum, so a skew-Hermitian :math:`A = -iH` is refused (use Taylor or Krylov for it; a series on
        :math:`H` with complex coefficients is not implemented).  Anything
        :func:`~workbench.expmv._linear.as_linear_map` accepts.
    B : array, shape=[n, k] or [n]
        numpy or torch (any device), real or complex; products are computed in its library, in the
        result dtype of :math:`A` and :math:`B`.
    t : float
        Real time; :math:`t < 0` is meaningful (e.g. :math:`e^{|t|L}`, growing).
    tol : float
        Truncation tolerance (see the contract), in :math:`(0, 1)`.
    interval : None or 'auto', 'gershgorin', 'lanczos', or (a, b)
        Spectral interval: ``"auto"`` (default, see above); Gershgorin bounds; up to 64 single-vector
        Lanczos steps, extreme Ritz values widened by their residuals (Zhou–Li) and intersected with
        Gershgorin; or a given pair.  Products spent here are counted in ``matvecs``.
    assume_symmetric : bool
        Trust the caller that :math:`A` is symmetric (for a ``LinearOperator``, which cannot be checked).

    Returns
    -------
    Y : array
        :math:`\approx e^{tA}B`, same shape, library, dtype and device as ``B``.
    info : dict
        ``method`` ("chebyshev"), ``matvecs`` (products, including those spent on the interval), ``degree`` K,
        ``interval`` (a, b), ``interval_source`` ("gershgorin", "lanczos", "given"), ``log_scale``
        (:math:`\log M`), ``truncation_bound`` (:math:`\varepsilon_K`), ``error_estimate``.

    Raises
    ------
    ValueError
        If :math:`A` is not symmetric, the interval is malformed or misses the spectrum, or
        :math:`e^{tA}B` overflows the dtype.

    References
    ----------
    Tal-Ezer & Kosloff (1984); Hochbruck & Lubich (1997), Theorem 2; Abramowitz & Stegun 9.6.34.

    Examples
    --------
    The heat kernel of the path graph against scipy's dense exponential:

    >>> import numpy as np, scipy.linalg, scipy.sparse
    >>> n = 50
    >>> L = scipy.sparse.diags([-np.ones(n - 1), np.r_[1.0, 2 * np.ones(n - 2), 1.0], -np.ones(n - 1)], [-1, 0, 1])
    >>> B = np.eye(n)[:, :2]
    >>> Y, info = expmv_chebyshev(-L, B, 30.0)
    >>> bool(np.allclose(Y, scipy.linalg.expm(-30.0 * L.toarray()) @ B, rtol=0, atol=1e-13)), info["interval"]
    (True, (-4.0, 0.0))
    """  # noqa: E501
    op = as_linear_map(op, "op")
    t = check_in_range("t", t)
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    assume_symmetric = check_flag("assume_symmetric", assume_symmetric)
    block, vector = as_block(op, B, op_name="op")
    xp = namespace(block)
    if not (assume_symmetric or op.is_symmetric()):
        if op.is_complex:
            raise ValueError(
                "op must be Hermitian: expmv_chebyshev needs a Hermitian A (real spectrum); "
                "this complex A is not Hermitian "
                f"(kind {op.kind!r}; a skew-Hermitian A = -iH has an imaginary spectrum: use method='taylor' or "
                "'krylov'; pass assume_symmetric=True for a LinearOperator known to be Hermitian)"
            )
        raise ValueError(
            "op must be symmetric: expmv_chebyshev needs a symmetric A (real spectrum); A is not symmetric "
            f"(kind {op.kind!r}; pass assume_symmetric=True for a LinearOperator known to be symmetric)"
        )
    info = {"method": "chebyshev", "matvecs": 0, "degree": 0, "error_estimate": 0.0, "truncation_bound": 0.0}
    info.update(interval=None, interval_source="not needed", log_scale=0.0)
    unit = unit_roundoff(block)
    peak = float(xp.max(xp.abs(block))) if block.shape[0] * block.shape[1] else 0.0
    if t == 0.0 or peak == 0.0:  # e^{0}B = B; e^{tA}0 = 0
        return finish(xp, xp.asarray(block, copy=True), vector), info
    bounds, source, spent = _spectral_interval(op, block, interval, t)
    info.update(interval=bounds, interval_source=source, matvecs=spent)
    a, b = bounds
    if a == b:  # Gershgorin a = b means A = aI exactly
        info["log_scale"] = t * a
        result = block * math.exp(t * a) if t * a <= _LOG_MAX else None
        if result is None or not bool(xp.all(xp.isfinite(result))):
            raise ValueError(
                f"exp(tA)B overflows {block.dtype}: A = {a:.6g}·I and t = {t:g} give exp({t * a:.6g}); "
                "shorten t or rescale A or B"
            )
        return finish(xp, result, vector), info
    # Work with B / 2^e, |entries| ≤ 1 (exact), so that norms neither underflow nor overflow; 2^e goes
    # into the final scaling together with e^ℓ.
    exponent = math.frexp(peak)[1]
    original = block
    block = scale_by_power_of_two(block, -exponent)  # a subnormal B needs 2^E beyond the range: two halves

    def expansion_for(target, bounds=bounds):
        try:
            return chebyshev_exp_coefficients(t, bounds, target)
        except ValueError as exc:  # too many terms: say which operator's spectrum set the interval
            raise ValueError(
                f"{exc}; the interval ({a:.6g}, {b:.6g}) ({source}) bounds the spectrum of {op.name}, "
                f"so rescale {op.name} or shorten t"
            ) from None

    try:
        total, expansion, matvecs, norm_b = _chebyshev_sum(op, block, expansion_for, tol, unit)
    except _SpectrumEscape as escape:
        if source != "lanczos":
            raise ValueError(
                f"interval ({a:.6g}, {b:.6g}) does not contain the spectrum of A: ‖T_k(Â)B‖_F grew to "
                f"{escape.ratio:.3g}·‖B‖_F at degree {escape.degree} (Chebyshev polynomials are bounded by 1 "
                "on [-1, 1]); widen the interval, or pass interval=None for Gershgorin bounds"
            ) from None
        info["matvecs"] += escape.degree
        bounds = tuple(float(v) for v in op.gershgorin())
        info["matvecs"] += 1
        if not _gershgorin_is_tight(op, block, t, bounds):
            # The Lanczos interval is disproved and the Gershgorin one is not certified at the end where
            # e^{tx} is largest: Chebyshev on it would scale by M = e^{t·g} ≫ ‖e^{tA}‖ and return rounding
            # noise (reproducer: −GGᵀ/√50, t = 10 gave 1e176 for 0.84).  Lanczos time stepping needs no
            # interval; its error is controlled a posteriori.
            return _krylov_fallback(op, original, vector, t, tol, info, escape)
        info.update(interval=bounds, interval_source="gershgorin (lanczos bound failed)")

        def expansion_for(target, bounds=bounds):
            return chebyshev_exp_coefficients(t, bounds, target)

        total, expansion, matvecs, norm_b = _chebyshev_sum(op, block, expansion_for, tol, unit)

    degree = len(expansion.coefficients) - 1
    norm_s = float(xp.linalg.vector_norm(total))
    rho = norm_s / norm_b
    estimate = (expansion.tail_bound + unit * math.sqrt(degree + 1)) / rho if rho > 0 else math.inf
    info.update(
        matvecs=info["matvecs"] + matvecs,
        degree=degree,
        log_scale=expansion.log_scale,
        truncation_bound=expansion.tail_bound,
        error_estimate=estimate,
    )
    result = _rescale(xp, total, expansion.log_scale, exponent, norm_s, block.dtype)
    if estimate > max(tol, math.sqrt(unit)):
        warnings.warn(
            f"expmv_chebyshev: the result is {rho:.2g} times max_[a,b] e^(tx)·‖B‖_F, so rounding limits its "
            f"relative accuracy to about {estimate:.1g} (requested tol {tol:.1g}); the absolute bound "
            f"‖Y - e^(tA)B‖_F ≲ {expansion.tail_bound + unit * math.sqrt(degree + 1):.1g}·e^({expansion.log_scale:.4g})"
            "·‖B‖_F holds. For relative accuracy, tighten the interval towards the spectrum (interval='lanczos' "
            "or the exact (λ_min, λ_max)), use float64, or use a Krylov method",
            AccuracyWarning,
            stacklevel=2,
        )
    return finish(xp, result, vector), info


def _krylov_fallback(op, block, vector, t, tol, info, escape):
    r"""Finish with :func:`~workbench.expmv.expmv_krylov` (Lanczos) after a disproved spectral interval."""
    xp = namespace(block)
    y, krylov = expmv_krylov(op, block, t, tol=tol, lanczos=True)
    info.update({key: value for key, value in krylov.items() if key not in ("matvecs", "method")})
    info.update(
        method="krylov",
        fallback_from="chebyshev",
        matvecs=info["matvecs"] + krylov["matvecs"],
        interval_source="lanczos bound failed; krylov fallback",
        fallback_reason=(
            f"the Lanczos interval missed the spectrum (‖T_k(Â)B‖_F grew to {escape.ratio:.3g}·‖B‖_F at degree "
            f"{escape.degree}) and the Gershgorin bound is not certified at the growing end"
        ),
    )
    return finish(xp, y, vector), info


def _rescale(xp, total, log_scale, exponent, norm_total, dtype):
    r"""Multiply by :math:`e^{\ell}\,2^{e}` without overflowing an intermediate factor."""
    largest = math.log(float(xp.finfo(dtype).max))
    log_norm = log_scale + exponent * math.log(2.0) + (math.log(norm_total) if norm_total > 0 else -math.inf)
    if log_norm > largest:
        raise ValueError(
            f"exp(tA)B overflows {dtype}: log ‖exp(tA)B‖_F ≈ {log_norm:.6g} exceeds {largest:.6g}; "
            "reduce t or rescale B"
        )
    if abs(log_scale) < largest - 60.0:  # the usual case: e^ℓ in range, the power of two applied exactly
        return scale_by_power_of_two(total * math.exp(log_scale), exponent)
    combined = 0.5 * (log_scale + exponent * math.log(2.0))  # extreme scales: one factor, in two halves
    return (total * math.exp(combined)) * math.exp(combined)
