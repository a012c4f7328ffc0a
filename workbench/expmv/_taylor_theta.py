r"""The constants :math:`\theta_m` of the Taylor backward-error bound, generated for any tolerance.

For a Taylor step of degree :math:`m`, :math:`e^{-X}T_m(X) = e^{h_{m+1}(X)}` with
:math:`h_{m+1}(x) = \log\bigl(e^{-x}T_m(x)\bigr) = \sum_{k\ge m+1} c_k x^k`, and :math:`\theta_m` is the
largest :math:`\theta` with :math:`\tilde h_{m+1}(\theta)/\theta = \sum_k |c_k|\theta^{k-1} \le \mathrm{tol}`
(:func:`taylor_theta`).  The coefficients are exact integers divided by factorials; the two tables used
by default (the unit roundoffs of float64 and float32) are stored, and a test regenerates them.
:func:`~workbench.expmv._taylor.expmv_taylor` reads them through :func:`theta_table`.

References
----------
A. H. Al-Mohy and N. J. Higham, "Computing the action of the matrix exponential, with an application
to exponential integrators", SIAM J. Sci. Comput. 33(2) (2011) 488–511, §3: the backward error
analysis and Table 3.1 of :math:`\theta_m`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from workbench.validation import check_in_range, check_integer

__all__ = ["taylor_theta"]

#: Terms of the series of :math:`\tilde h_{m+1}(\theta)/\theta` summed beyond the first; 150 terms move
#: no θ_m (m ≤ 55) by more than 1e-6 relative for tol ≤ 1e-3, 1e-4 at tol = 1e-2 (as tol → 1, θ_m nears
#: the radius of convergence of the series and the bound stops meaning anything).
_SERIES_TERMS = 150

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


def theta_table(tol: float, m_max: int) -> tuple[float, ...]:
    """θ_1..θ_{m_max} for ``tol``: the stored table when there is one, else generated (unchecked core)."""
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
    return np.array(theta_table(tol, m_max))
