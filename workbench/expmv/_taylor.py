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
\mathrm{tol}` (:func:`taylor_theta`).  The cost is :math:`m s` products; the pair minimising
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

import functools
import math
from contextlib import nullcontext

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.expmv._linear import LinearMap
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = ["expmv_taylor", "taylor_theta"]

#: Terms of the series of :math:`\tilde h_{m+1}(\theta)/\theta` summed beyond the first; 400 terms move
#: no θ_m (m ≤ 55) by more than 1e-6 relative for tol ≤ 1e-3, 1e-4 at tol = 1e-2 (as tol → 1, θ_m nears
#: the radius of convergence of the series and the bound stops meaning anything).
_SERIES_TERMS = 150

#: Largest explicit operator for which :math:`\lVert A^p\rVert_1` is computed from exact dense powers
#: (cost :math:`p_{\max} n^3`, below one Taylor step's worth of products for such n).
_EXACT_POWER_MAX_N = 128


# ---- the constants θ_m -----------------------------------------------------------------------------

#: θ_1..θ_55 for tol = 2⁻⁵³ and 2⁻²⁴ (the unit roundoffs of float64 and float32), as printed by
#: ``_theta_generated(tol, 55)``; stored so the common call does not regenerate them (0.15 s), and
#: checked against the generator and against the paper's Table 3.1 by tests/test_expmv_taylor.py.
# fmt: off
_THETA_DOUBLE = (
    2.2204460492503185e-16, 2.5809568029717706e-08, 1.3863478661191198e-05, 0.0003397168839976967,
    0.0024008763578872733, 0.009065656407595098, 0.023844555325002747, 0.04991228871115316,
    0.08957760203223344, 0.14418297616143783, 0.21423580684517105, 0.2996158913811578, 0.3997775336316794,
    0.5139146936124296, 0.64108352330412, 0.7802874256626583, 0.9305328460786575, 1.0908637192900363,
    1.2603810606426389, 1.4382525968043363, 1.6237159502358216, 1.816077816215086, 2.0147107809446143,
    2.2190488693650887, 2.428582524442827, 2.642853457459436, 2.861449633934264, 3.084000544989164,
    3.310172839890271, 3.5396663487436886, 3.7722104956817497, 4.007561086118041, 4.245497442579695,
    4.485819859447369, 4.728347345793539, 4.9729156261919805, 5.219375371084057, 5.467590630524545,
    5.7174374475720136, 5.96880263004185, 6.221582661689889, 6.475682736079982, 6.731015898381024,
    6.987502282130628, 7.245068429597952, 7.503646685788863, 7.763174657377985, 8.023594728939981,
    8.284853629803916, 8.546902045684934, 8.80969426997132, 9.073187890176142, 9.337343505612017,
    9.602124472826555, 9.867496675753403,
)

_THETA_SINGLE = (
    1.192092800768788e-07, 0.0005978858893805241, 0.011233864735286724, 0.05116619363445091,
    0.1308487164599471, 0.2495289322846698, 0.40145824235104827, 0.5800524627688768, 0.7795113374358033,
    0.995184079000446, 1.2234795424241431, 1.4616615072090346, 1.707648529608702, 1.959850585959898,
    2.217044394974721, 2.478280877521973, 2.7428171126987806, 3.010066362817637, 3.279561212635999,
    3.5509262147064953, 3.823857425450967, 4.098106972191505, 4.373471311840502, 4.649782224100756,
    4.92689984375591, 5.204707228012358, 5.4831060876586335, 5.76201340844777, 6.0413587581925725,
    6.321082126301962, 6.601132179501166, 6.88146484520972, 7.162042154487765, 7.442831291936597,
    7.723803811553994, 8.004934986436286, 8.286203267002167, 8.567589827662578, 8.849078185923952,
    9.130653881090101, 9.412304202219415, 9.69401795696301, 9.975785274470676, 10.257597436797493,
    10.53944673424217, 10.821326340852155, 11.103230206980689, 11.385152966309137, 11.6670898551788,
    11.949036642428972, 12.230989568228129, 12.51294529062442, 12.794900838739464, 13.076853571694238,
    13.358801142493068,
)
# fmt: on


@functools.cache
def _log_abs_coefficients(m: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Exponents :math:`k` and :math:`\log|c_k|` of :math:`h_{m+1}(x) = \sum_{k>m} c_k x^k`, exactly.

    :math:`f = \log T_m` satisfies :math:`f' T_m = T_m'`; with the integers :math:`F_k = k!\,f_k` this
    is :math:`F_k = k!\,g_k - \sum_{j} \binom{k-1}{j-1} F_j g_{k-j}(k-j)!`.  :math:`f` agrees with
    :math:`x` up to degree :math:`m` (so :math:`c_k = f_k` for :math:`k > m`), :math:`F_{m+1} = -1`, and
    for :math:`k \ge m+2`, :math:`F_k = -\sum_{j=\max(m+1,k-m)}^{k-1} \binom{k-1}{j-1} F_j` — integer
    arithmetic, exact (in floating point the factorials leave the exponent range past :math:`k = 170`).
    """
    top = m + 1 + _SERIES_TERMS
    big = {m + 1: -1}
    for k in range(m + 2, top + 1):
        big[k] = -sum(math.comb(k - 1, j - 1) * big[j] for j in range(max(m + 1, k - m), k))
    ks = np.arange(m + 1, top + 1)
    logs = np.array([math.log(abs(big[k])) - math.lgamma(k + 1) if big[k] else -np.inf for k in ks.tolist()])
    keep = np.isfinite(logs)
    return ks[keep], logs[keep]


def _theta_cached(tol: float, m_max: int) -> tuple[float, ...]:
    stored = {2.0**-53: _THETA_DOUBLE, 2.0**-24: _THETA_SINGLE}.get(tol)
    if stored is not None and m_max <= len(stored):
        return stored[:m_max]
    return _theta_generated(tol, m_max)


@functools.lru_cache(maxsize=64)
def _theta_generated(tol: float, m_max: int) -> tuple[float, ...]:
    rows = [_log_abs_coefficients(m) for m in range(1, m_max + 1)]
    width = max(len(ks) for ks, _ in rows)
    ks = np.ones((m_max, width))
    logs = np.full((m_max, width), -np.inf)
    for i, (k, lc) in enumerate(rows):
        ks[i, : len(k)] = k
        logs[i, : len(k)] = lc
    target = math.log(tol)
    # θ ↦ h̃(θ)/θ is increasing: bisect on log θ for all m at once; keep the side that meets tol.
    lo = np.full(m_max, math.log(1e-300))
    hi = np.full(m_max, math.log(1e3))
    for _ in range(120):
        mid = 0.5 * (lo + hi)
        above = np.logaddexp.reduce(logs + (ks - 1.0) * mid[:, None], axis=1) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return tuple(float(v) for v in np.exp(lo))


def taylor_theta(tol: float = 2.0**-53, m_max: int = 55) -> np.ndarray:
    r"""The constants :math:`\theta_1, \dots, \theta_{m_{\max}}` of the Taylor backward-error bound.

    :math:`\theta_m` is the largest :math:`\theta` with

    .. math::

        \frac{\tilde h_{m+1}(\theta)}{\theta} = \sum_{k \ge m+1} |c_k|\,\theta^{k-1} \le \mathrm{tol},
        \qquad \sum_{k\ge m+1} c_k x^k = \log\bigl(e^{-x}\textstyle\sum_{j=0}^m x^j/j!\bigr),

    so that one Taylor step of degree :math:`m` on :math:`X` with :math:`\lVert X\rVert \le \theta_m`
    is exactly :math:`e^{X+E}` with :math:`\lVert E\rVert \le \mathrm{tol}\,\lVert X\rVert`.  The
    coefficients are computed exactly (integers, see ``_log_abs_coefficients``), the series is summed
    to 150 terms beyond its first, and the root is found by bisection; values are cached per ``tol``.

    Parameters
    ----------
    tol : float
        The relative backward error allowed, in (0, 1).
    m_max : int
        Largest degree, 1 to 100.

    Returns
    -------
    numpy.ndarray, shape=[m_max]
        ``out[m - 1]`` is :math:`\theta_m`.

    References
    ----------
    Al-Mohy & Higham (2011), §3 and Table 3.1.

    Examples
    --------
    For :math:`m = 1`, :math:`\tilde h_2(\theta)/\theta = (-\log(1-\theta)-\theta)/\theta
    = \theta/2 + \theta^2/3 + \dots`, so :math:`\theta_1 = 2\,\mathrm{tol}` to first order:

    >>> float(taylor_theta(2.0**-53)[0] / 2.0**-52)
    1.0
    >>> round(float(taylor_theta(2.0**-53)[54]), 1)  # Table 3.1: θ_55 = 9.9 in double precision
    9.9
    """
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    m_max = check_integer("m_max", m_max, 1, 100)
    return np.array(_theta_cached(tol, m_max))


# ---- facts about A: shift, norm bound, power norms ------------------------------------------------------


def _unit_roundoff(b) -> float:
    return 2.0**-24 if "float32" in str(b.dtype) else 2.0**-53


def _host_dense(op: LinearMap) -> np.ndarray:
    """A float64 numpy copy of an explicit operator (small n only)."""
    if op.kind == "dense":
        return np.asarray(to_numpy(op.a), dtype=np.float64)
    if op.kind == "scipy-sparse":
        return op.a.toarray().astype(np.float64)
    return np.asarray(to_numpy(op.a.to_dense()), dtype=np.float64)


def _column_sums_and_diagonal(op: LinearMap):
    r"""Column sums of :math:`|A|` and the diagonal, as host float64 vectors (explicit operators only).

    One pass over the stored entries: the exact :math:`\lVert A - \mu I\rVert_1` for every shift
    follows, :math:`\max_j \bigl(\sum_i |a_{ij}| - |a_{jj}| + |a_{jj} - \mu|\bigr)`.
    """
    if op.kind == "dense":
        xp = namespace(op.a)
        columns = to_numpy(xp.sum(xp.abs(op.a), axis=0))
        diag = to_numpy(xp.linalg.diagonal(op.a))
    elif op.kind in ("scipy-sparse", "torch-sparse"):
        host = (op.a if op.kind == "scipy-sparse" else op._host_sparse()).tocsr()
        columns = np.bincount(host.indices, weights=np.abs(host.data), minlength=op.n)
        diag = host.diagonal()
    else:
        return None, None
    return np.asarray(columns, dtype=np.float64), np.asarray(diag, dtype=np.float64)


def _surely_asymmetric(op: LinearMap) -> bool:
    r"""A cheap look that settles most non-symmetric explicit operators before the full test.

    :meth:`LinearMap.is_symmetric` asks :math:`|a_{ij} - a_{ji}| \le r\max|a|` (:math:`r = 10^{-12}`).
    Dense: row 0 against column 0, :math:`O(n)`.  Sparse: that test implies
    :math:`|\sum_j a_{ij} - \sum_j a_{ji}| \le r\max|a|\,(\text{nnz of row } i + \text{of column } i)`,
    checked in one pass over the entries instead of forming :math:`A - A^\top`.
    """
    rtol = 1e-12
    if op.n == 0:
        return False
    if op.kind == "dense":
        xp = namespace(op.a)
        gap = float(xp.max(xp.abs(op.a[0, :] - op.a[:, 0])))
        return gap > rtol * op.one_norm()
    if op.kind in ("scipy-sparse", "torch-sparse"):
        host = (op.a if op.kind == "scipy-sparse" else op._host_sparse()).tocsr()
        if host.nnz == 0:
            return False
        rows = np.repeat(np.arange(op.n), np.diff(host.indptr))
        gap = np.abs(np.bincount(rows, host.data, op.n) - np.bincount(host.indices, host.data, op.n))
        counts = np.diff(host.indptr) + np.bincount(host.indices, minlength=op.n)
        return bool(np.any(gap > rtol * np.abs(host.data).max() * counts))
    return False


def _exactly_symmetric(op: LinearMap) -> bool:
    r"""Dense :math:`A = A^\top` entry for entry: one comparison pass, the common case ((X + Xᵀ)/2 is exact)."""
    if op.kind != "dense":
        return False
    xp = namespace(op.a)
    return bool(xp.all(op.a == xp.matrix_transpose(op.a)))


def _shift_and_norm(op: LinearMap, shift: bool) -> tuple[float, float, str]:
    r"""Return ``(mu, bound, kind)``: a shift and a bound on :math:`\lVert A - \mu I\rVert`.

    ``kind`` is ``"2-norm"`` for symmetric :math:`A` (the Gershgorin half-width about the interval's
    midpoint: a bound on the spectral radius of :math:`A - \mu I`, which is its 2-norm) and
    ``"1-norm"`` otherwise (:math:`\mu = \operatorname{trace}(A)/n` when the diagonal is known and the
    shift lowers the exact 1-norm).
    """
    columns, diag = _column_sums_and_diagonal(op)
    if not _surely_asymmetric(op) and (_exactly_symmetric(op) or op.is_symmetric()):
        if columns is None:
            lo, hi = op.gershgorin()
        else:  # column sums are row sums here: the Gershgorin radii without another pass
            radius = columns - np.abs(diag)
            lo, hi = float(np.min(diag - radius)), float(np.max(diag + radius))
        mu = 0.5 * (lo + hi) if shift else 0.0
        return mu, max(hi - mu, mu - lo, 0.0), "2-norm"
    if columns is None:
        return 0.0, op.one_norm(), "1-norm"
    plain = float(columns.max())
    if shift:
        mu = float(diag.sum()) / op.n
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
        if op.kind == "scipy-sparse" and mu != 0.0:
            import scipy.sparse

            self.matrix = (op.a - mu * scipy.sparse.eye_array(op.n, format="csr", dtype=op.a.dtype)).tocsr()
        # Products that certainly return a new array may be scaled in place.
        self.fresh = op.explicit() or mu != 0.0

    def matmat(self, x):
        self.products += 1
        if self.matrix is not None:
            return self.matrix @ x
        y = self.op.matmat(x)
        return y - self.mu * x if self.mu != 0.0 else y

    @functools.cached_property
    def adjoint(self):
        r"""A function computing :math:`A^\top X`, or ``None`` when the operator offers none."""
        op = self.op
        if op.kind == "dense":
            a_t = namespace(op.a).matrix_transpose(op.a)
            return lambda x: a_t @ x
        if op.kind == "scipy-sparse":
            a_t = op.a.T.tocsr()
            return lambda x: a_t @ x
        if op.kind == "torch-sparse":
            a_t = op.a.t()
            return lambda x: a_t @ x
        if op.kind == "linear-operator" and getattr(op.a, "rmatmat", None) is not None:
            return op.a.rmatmat
        if op.is_symmetric():
            return op.matmat
        return None

    def rmatmat(self, x):
        self.products += 1
        y = self.adjoint(x)
        return y - self.mu * x if self.mu != 0.0 else y


def _one_norm_estimate(shifted: _Shifted, p: int, like, *, columns: int = 2, itmax: int = 5) -> float:
    r"""Estimate :math:`\lVert (A-\mu I)^p\rVert_1` by the block 1-norm power method.

    Higham & Tisseur (2000), Algorithm 2.4 with ``t = columns``, less its test for parallel columns;
    a lower bound, almost always within a factor 3 and usually exact.  Runs in ``like``'s namespace
    and device; the starting block is seeded, so the estimate is reproducible.
    """
    xp = namespace(like)
    n = shifted.op.n
    columns = min(columns, n)
    start = np.ones((n, columns))
    start[:, 1:] = np.random.default_rng(0).choice([-1.0, 1.0], size=(n, columns - 1))
    x = _like(like, start / n)
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
        z = xp.where(y >= 0, xp.ones_like(y), -xp.ones_like(y))
        for _ in range(p):
            z = shifted.rmatmat(z)
        h = to_numpy(xp.max(xp.abs(z), axis=1))
        if it > 0 and h.max() <= h[best]:
            break
        index = [int(i) for i in np.argsort(-h, kind="stable") if int(i) not in used][:columns]
        if not index:
            break
        used.update(index)
        unit = np.zeros((n, len(index)))
        unit[index, np.arange(len(index))] = 1.0
        x = _like(like, unit)
    return estimate


def _like(like, x: np.ndarray):
    """``x`` (host float64) in the library, dtype and device of ``like``."""
    if array_api_compat.is_torch_array(like):
        import torch

        return torch.as_tensor(x, dtype=like.dtype, device=like.device)
    return x.astype(like.dtype, copy=False)


def _power_norms(shifted: _Shifted, powers, how: str, like) -> dict[int, float]:
    r"""Return :math:`\{p: d_p\}`, :math:`d_p = \lVert (A-\mu I)^p\rVert_1^{1/p}`, for ``p`` in ``powers``.

    ``how="exact"`` multiplies dense float64 host copies (small explicit operators);
    ``"estimate"`` runs :func:`_one_norm_estimate` (block products, counted by ``shifted``).
    """
    if how == "exact":
        op = shifted.op
        m = _host_dense(op) - shifted.mu * np.eye(op.n)
        power, out = m, {}
        for p in range(2, max(powers) + 1):
            power = power @ m
            if p in powers:
                out[p] = float(np.abs(power).sum(axis=0).max()) ** (1.0 / p)
        return out
    return {p: _one_norm_estimate(shifted, p, like) ** (1.0 / p) for p in powers}


def _select_degree(alpha: dict[int, float], theta: np.ndarray, m_max: int) -> tuple[int, int, int]:
    r"""Minimise :math:`m\lceil\alpha_p/\theta_m\rceil` over :math:`p` and :math:`m \ge p(p-1)-1`.

    Returns ``(m, s, p)``; ties go to the smaller degree (fewer products when terminating early).
    """
    best = None
    for p, a in alpha.items():
        for m in range(max(1, p * (p - 1) - 1), m_max + 1):
            steps = max(math.ceil(a / theta[m - 1]), 1)
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
    op: LinearMap,
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
    op : LinearMap
        The operator :math:`A` (:func:`~workbench.expmv._linear.as_linear_map`).
    B : array, shape=[n, k]
        numpy or torch (any device), float64 or float32; the products run in its library.
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
    OverflowError
        If :math:`e^{tA}B` (or the factor :math:`e^{t\mu}`) is beyond the floating range.

    References
    ----------
    Al-Mohy & Higham (2011), Algorithm 3.2 and Code Fragment 3.1; see the module docstring.

    Examples
    --------
    The 2×2 Jordan block: :math:`e^{t[[\lambda,1],[0,\lambda]]} = e^{\lambda t}[[1,t],[0,1]]`.

    >>> import numpy as np
    >>> from workbench.expmv._linear import as_linear_map
    >>> A = np.array([[-0.5, 1.0], [0.0, -0.5]])
    >>> y, info = expmv_taylor(as_linear_map(A), np.eye(2), 3.0)
    >>> exact = np.exp(-1.5) * np.array([[1.0, 3.0], [0.0, 1.0]])
    >>> bool(np.allclose(y, exact, rtol=1e-15, atol=1e-16)), info["matvecs"] <= info["degree"] * info["steps"]
    (True, True)
    """
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
    tol = max(tol, _unit_roundoff(B))
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
        return xp.asarray(B, copy=True), info

    mu, bound, kind = _shift_and_norm(op, shift)
    alpha1 = abs(t) * bound
    info.update(shift=mu, norm_kind=kind, norm_bound=alpha1)
    if error == "forward" and alpha1 > 0:
        tol = min(tol, math.log1p(tol) / alpha1)
        info["tol"] = tol
    theta = np.array(_theta_cached(tol, m_max))

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
        m, s, p = _select_degree(alphas, theta, m_max)
        alpha = alphas[p]
        backward = tol * alpha  # ≥ s·h̃(α/s), since α/s ≤ θ_m
        info.update(norm_bound=alpha, backward_error_bound=backward, error_estimate=math.expm1(backward))

    # Algorithm 3.2: s steps of the truncated series, each ending with the factor e^{tμ/s}.
    try:
        eta = math.exp(t * mu / s)
    except OverflowError:
        raise OverflowError(
            f"exp(tA)B overflows: the shift factor exp(t*mu/s) has t*mu/s = {t * mu / s:.6g}; "
            "rescale A or t (the result is beyond the floating range)"
        ) from None
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
        raise OverflowError(
            f"exp(tA)B overflows the {f.dtype} range (t = {t:g}, bound on ||t(A - mu I)|| = {alpha1:.3g}); "
            "rescale B or shorten t"
        )
    return f, info
