r"""Uniformization: :math:`e^{tQ}B` for a Markov generator :math:`Q` as a Poisson mixture of stochastic powers.

For a generator :math:`Q` (negative convention :math:`\mathcal L = P - I`: off-diagonal rates
:math:`Q_{ij} \ge 0`, rows summing to 0) and any rate :math:`q \ge \max_i(-Q_{ii})`, the matrix
:math:`P = I + Q/q` is row-stochastic and

.. math::

    e^{tQ} = e^{-qt}e^{qtP} = \sum_{k\ge0} \pi_k(qt)\, P^k, \qquad \pi_k(\Lambda) = e^{-\Lambda}\frac{\Lambda^k}{k!},

a convex combination of stochastic matrices (Jensen 1953).  Applied to functions (columns of
:math:`B`, right action :math:`(Pf)_i = \sum_j P_{ij}f_j`), nonnegative :math:`B` gives nonnegative
results and :math:`e^{tQ}\mathbf 1 = \mathbf 1`; this module keeps the first exactly in floating point
and the second to a few units of roundoff (see :func:`expmv_uniformization`).  The cost is one block
product per Poisson term, about :math:`qt + O(\sqrt{qt})`: cheap for moderate :math:`qt`, and linear in
:math:`qt` where Krylov or Chebyshev methods grow like :math:`\sqrt{qt}`.

References
----------
Lie-Exponential Roadmap: "Uniformization: pick :math:`\lambda \ge \max_i -Q_{ii}`; then
:math:`\exp(tQ) = e^{-\lambda t}\sum_{k\ge0}(\lambda t)^k/k!\,T^k` with :math:`T = I + Q/\lambda`";
"exact stochasticity".
A. Jensen, "Markoff chains as an aid in the study of Markoff processes", Skand. Aktuarietidskr. 36
(1953), 87–91.
B. L. Fox and P. W. Glynn, "Computing Poisson probabilities", Comm. ACM 31 (1988), 440–445 (truncation
points and weights computed from the mode).
"""

from __future__ import annotations

import math
import warnings

import array_api_compat
import numpy as np
import scipy.special

from workbench.backend import namespace, to_numpy, unit_roundoff
from workbench.expmv._blocks import MAX_PRODUCTS, as_block, axpy, finish, fresh_product
from workbench.expmv._linear import AccuracyWarning, LinearMap, as_linear_map
from workbench.validation import check_in_range

__all__ = ["expmv_uniformization", "poisson_truncation"]

#: Relative margin of the uniformization rate over max(-Q_ii): keeps every diagonal entry of P at least
#: this fraction positive, which makes P X ≥ 0 for X ≥ 0 survive rounding in rows with up to ~10⁹ entries
#: (float64).  For float32 the margin is 4096·u = 2^-12, covering rows with ~10³ entries.
RATE_MARGIN = 2.0**-20


def poisson_truncation(mean, tol=2.0**-53) -> tuple[int, int, np.ndarray]:
    r"""Fox–Glynn truncation points and normalised weights of the Poisson law :math:`\pi_k(\Lambda)`.

    Returns :math:`[L, R]` and :math:`w_k = \pi_k/\sum_{j=L}^{R}\pi_j`, :math:`k = L..R`, with the neglected
    mass :math:`\Pr(K < L) + \Pr(K > R) \le` ``tol`` (each tail :math:`\le` ``tol``/2), :math:`L` the
    largest and :math:`R` the smallest such points.  Tails come from the regularised incomplete gamma
    function (:func:`scipy.special.pdtr`, :func:`scipy.special.pdtrc`).  Weights are built outward from the
    mode :math:`m = \lfloor\Lambda\rfloor` in log space,

    .. math::

        \log\frac{\pi_k}{\pi_m} = -\sum_{j=m+1}^{k}\operatorname{log1p}\Big(\frac{j-\Lambda}{\Lambda}\Big)
        \quad (k > m),

    which never forms :math:`e^{-\Lambda}` or :math:`\Lambda^k/k!` (both overflow or underflow for large
    :math:`\Lambda`) and avoids the cancellation of :math:`-\Lambda + k\log\Lambda - \log k!`, which loses
    :math:`\log_{10}\Lambda` digits.  The relative error of each weight is a few :math:`u\cdot|\log w_k|`.

    Parameters
    ----------
    mean : float
        :math:`\Lambda \ge 0`.
    tol : float
        Neglected probability mass, in :math:`(0, 1)`.

    Returns
    -------
    left, right : int
    weights : numpy.ndarray, shape=[right - left + 1]
        Summing to 1 to rounding.

    References
    ----------
    Fox & Glynn (1988), §2–3.

    Examples
    --------
    >>> import numpy as np, scipy.stats
    >>> left, right, w = poisson_truncation(1000.0, 1e-12)
    >>> left, right
    (783, 1234)
    >>> ks = np.arange(left, right + 1)
    >>> pmf = scipy.stats.poisson.pmf(ks, 1000.0)
    >>> bool(np.allclose(w, pmf / pmf.sum(), rtol=1e-10, atol=0))
    True
    """
    mean = check_in_range("mean", mean, 0.0)
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if mean == 0.0:
        return 0, 0, np.ones(1)
    half = 0.5 * tol
    # Bernstein/Chernoff widths; the loop widens if they ever fall short.
    log_term = math.log(2.0 / half)
    width = math.sqrt(2.0 * mean * log_term) + log_term + 10.0
    while True:
        if 2.0 * width + 1.0 > MAX_PRODUCTS:
            raise ValueError(
                f"poisson_truncation needs a window of about {2.0 * width + 1.0:.3g} terms for mean = {mean:.6g}, "
                f"more than {MAX_PRODUCTS:.0e}; a Poisson mixture this wide is beyond what one call evaluates"
            )
        lo = max(0, math.floor(mean - width))
        hi = math.ceil(mean + width)
        ks = np.arange(lo, hi + 1)
        below = np.where(ks == 0, 0.0, scipy.special.pdtr(np.maximum(ks - 1, 0), mean))  # Pr(K < k)
        above = scipy.special.pdtrc(ks, mean)  # Pr(K > k)
        left_ok = np.nonzero(below <= half)[0]  # a prefix of the window (Pr(K < k) increases)
        right_ok = np.nonzero(above <= half)[0]  # a suffix
        # The largest L and the smallest R must lie strictly inside the window, else widen it.
        if left_ok.size and left_ok[-1] < len(ks) - 1 and right_ok.size and (right_ok[0] > 0 or lo == 0):
            break
        width *= 2.0
    left, right = int(ks[left_ok[-1]]), int(ks[right_ok[0]])
    mode = math.floor(mean)
    start, stop = min(left, mode), max(right, mode)
    steps = np.log1p((np.arange(start + 1, stop + 1) - mean) / mean)  # log(j/Λ), j = start+1..stop
    log_ratio = np.concatenate([[0.0], np.cumsum(-steps)])  # log π_k/π_start, k = start..stop
    log_ratio -= log_ratio[mode - start]  # relative to the mode (maximum), no overflow
    weights = np.exp(log_ratio[left - start : right - start + 1])
    weights /= math.fsum(weights)
    return left, right, weights


def _generator_problem(op: LinearMap, atol: float = 1e-10) -> str:
    """Say why ``op`` is not a Markov generator, naming an offending entry or row."""
    host = op.host_matrix()
    if host is None:
        return (
            f"A is a {op.kind} operator whose entries cannot be inspected; pass the matrix itself "
            "or a structured operator (BandedMatrix, KroneckerSum) that reports is_markov_generator()"
        )
    import scipy.sparse

    coo = scipy.sparse.coo_array(host)
    off = coo.row != coo.col
    scale = max(float(np.abs(coo.data).max()) if coo.nnz else 0.0, 1e-300)
    sums = np.asarray(host.sum(axis=1)).ravel()
    hint = ""
    negated_off = -coo.data[off]
    if (not negated_off.size or negated_off.min() >= -atol * scale) and np.abs(sums).max(initial=0.0) <= atol * scale:
        hint = "; -A is a generator: a positive generator L = I - P must be passed as Q = -L"
    if off.any() and coo.data[off].min() < -atol * scale:
        k = int(np.argmin(np.where(off, coo.data, np.inf)))
        return f"A has a negative off-diagonal rate A[{int(coo.row[k])}, {int(coo.col[k])}] = {coo.data[k]:.6g}{hint}"
    row = int(np.argmax(np.abs(sums)))
    return f"row {row} of A sums to {sums[row]:.6g}, not 0{hint}"


def _subtract_product(y, r, x):
    r""":math:`y \leftarrow y - r\odot x` in place (fused on torch)."""
    if array_api_compat.is_torch_array(y):
        y.addcmul_(r, x, value=-1.0)
    else:
        y -= r * x


def expmv_uniformization(op, B, t, *, tol=2.0**-53, max_matvecs=None):
    r"""Apply :math:`e^{tQ}` to a block :math:`B` for a Markov generator :math:`Q` by uniformization.

    .. math::

        e^{tQ}B \approx \sum_{k=L}^{R} w_k\, P^k B,\qquad P = I + Q/q,\quad
        q = (1 + \gamma)\max_i(-Q_{ii}),\quad w_k = \frac{\pi_k(qt)}{\sum_{j=L}^{R}\pi_j(qt)}

    with Fox–Glynn truncation points :math:`L, R` (:func:`poisson_truncation`, neglected Poisson mass
    :math:`\le` ``tol``/2).  Each :math:`P^k B` costs one block product.

    **Error contract** (column-wise maximum norm, the norm in which :math:`P` and :math:`e^{tQ}` are
    contractions): in exact arithmetic, for every column,

    .. math::

        \lVert y_j - e^{tQ}b_j\rVert_\infty \le 2\,\varepsilon_{\text{mass}}\,\lVert b_j\rVert_\infty
        \le \mathrm{tol}\,\lVert b_j\rVert_\infty,

    :math:`\varepsilon_{\text{mass}}` the neglected Poisson mass (``info["neglected_mass"]``; renormalising the
    kept weights at most doubles it).  Relative to the result this is the same bound divided by
    :math:`\lVert y_j\rVert_\infty/\lVert b_j\rVert_\infty`, which is 1 for nonnegative :math:`B` but small when
    :math:`b_j` is nearly orthogonal to the stationary law (the mean-zero part decays).
    ``info["error_estimate"]`` is :math:`\max_j (2\varepsilon_{\text{mass}} + u\sqrt{R+1})
    \lVert b_j\rVert_\infty/\lVert y_j\rVert_\infty` (rounding part heuristic); an
    :class:`~workbench.expmv._linear.AccuracyWarning` is raised when it exceeds :math:`\max(\mathrm{tol}, \sqrt u)`.

    **Exact structure in floating point.**  The product is formed in place as
    :math:`X \leftarrow X + q^{-1}(QX - r\odot X)` with :math:`r = Q\mathbf 1` computed once by the same kernel (so
    :math:`P\mathbf 1 = \mathbf 1` bit for bit when the kernel treats the columns of a block alike, as
    scipy's, numpy's and :class:`~workbench.expmv._banded.BandedMatrix`'s do), and the margin
    :math:`\gamma = 2^{-20}` in :math:`q` (:math:`2^{-12}` in float32) keeps every diagonal entry of :math:`P`
    positive by more than the rounding of a row product, so :math:`B \ge 0 \Rightarrow Y \ge 0` holds
    entrywise.  The weights sum to 1 within :math:`u`, and the sum is accumulated in blocks of
    :math:`\sqrt{R-L}` terms, so :math:`e^{tQ}\mathbf 1 = \mathbf 1` to a few :math:`u`, even for
    :math:`qt = 10^6`.

    **Cost.** :math:`R \approx qt + \sqrt{2qt\log(4/\mathrm{tol})}` block products — e.g. 1.0085·10⁶ for
    :math:`qt = 10^6` at the default tolerance.  Splitting :math:`e^{tQ} = (e^{tQ/s})^s` does not help (the
    total only grows); the Poisson weights themselves stay well conditioned at any :math:`qt` (they are
    built in log space from the mode), so no time stepping is needed.  For large :math:`qt` and a reversible
    chain, a Chebyshev or Krylov method on the symmetrised generator needs only :math:`O(\sqrt{qt})`
    products, at the price of exact positivity; ``max_matvecs`` turns a runaway cost into an error.

    Parameters
    ----------
    op : LinearMap or operator
        Markov generator :math:`Q` (negative convention: rates off the diagonal, rows summing to 0).
    B : array, shape=[n, k] or [n]
        Functions on the states (numpy or torch, any device).
    t : float
        Time, :math:`t \ge 0` (:math:`e^{tQ}` for :math:`t < 0` is not a Markov semigroup).
    tol : float
        Bound on :math:`2\varepsilon_{\text{mass}}`, in :math:`(0, 1)`.
    max_matvecs : int, optional
        Raise ``ValueError`` instead of running when more block products would be needed (default: the
        package budget of 10⁷, checked before anything runs).

    Returns
    -------
    Y : array
        :math:`\approx e^{tQ}B`, same shape, library, dtype and device as ``B``.
    info : dict
        ``method`` ("uniformization"), ``matvecs`` (block products, including the one for :math:`r`),
        ``rate`` q, ``poisson_mean`` qt, ``left`` L, ``right`` R, ``neglected_mass``, ``error_bound``
        (:math:`2\varepsilon_{\text{mass}}`, relative to :math:`\lVert b_j\rVert_\infty`), ``error_estimate``.

    Raises
    ------
    ValueError
        If :math:`Q` is not a Markov generator (the message names an offending entry or row), if
        :math:`t < 0`, or if ``max_matvecs`` would be exceeded.

    References
    ----------
    Jensen (1953); Fox & Glynn (1988); Lie-Exponential Roadmap, "Uniformization".

    Examples
    --------
    A two-state chain, where :math:`e^{tQ}` has a closed form:

    >>> import numpy as np
    >>> a, b, t = 2.0, 0.5, 1.3
    >>> Q = np.array([[-a, a], [b, -b]])
    >>> Y, info = expmv_uniformization(Q, np.eye(2), t)
    >>> exact = (np.array([[b, a], [b, a]]) + np.exp(-(a + b) * t) * np.array([[a, -a], [-b, b]])) / (a + b)
    >>> bool(np.allclose(Y, exact, rtol=0, atol=1e-15)), bool((Y >= 0).all())
    (True, True)
    """
    op = as_linear_map(op, "op")
    t = float(check_in_range("t", t))
    if t < 0:
        raise ValueError(
            f"t must be in [0, inf) for uniformization (e^(tQ) with t < 0 is not a Markov semigroup), got {t!r}"
        )
    tol = check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)
    if max_matvecs is not None:
        max_matvecs = int(check_in_range("max_matvecs", max_matvecs, 0))
    block, vector = as_block(op, B, op_name="op")
    xp = namespace(block)
    if op.is_complex:
        raise ValueError(
            "op must be real: expmv_uniformization needs a Markov generator Q with real rates; "
            f"A is complex (dtype {op.dtype}): "
            "use method='taylor' or 'krylov'"
        )
    if not op.is_markov_generator():
        raise ValueError(
            "op must be a Markov generator: expmv_uniformization needs a Markov generator Q "
            "(negative convention: off-diagonal rates >= 0, "
            f"rows summing to 0); {_generator_problem(op)}"
        )
    diagonal = op.diagonal()
    if diagonal is None:  # pragma: no cover - generators are explicit or structured
        raise ValueError("expmv_uniformization needs the diagonal of Q (op.diagonal() returned None)")
    top = float(np.max(-np.asarray(diagonal), initial=0.0))
    info = {"method": "uniformization", "matvecs": 0, "error_estimate": 0.0, "error_bound": 0.0}
    info.update(rate=0.0, poisson_mean=0.0, left=0, right=0, neglected_mass=0.0)
    if top <= 0.0 or t == 0.0:  # Q = 0 or t = 0: e^{tQ} = I
        return finish(xp, xp.asarray(block, copy=True), vector), info
    unit = unit_roundoff(block)
    rate = top * (1.0 + max(RATE_MARGIN, 4096.0 * unit))
    mean = rate * t
    budget = MAX_PRODUCTS if max_matvecs is None else max_matvecs
    if mean + 1 > budget:  # R > Λ: refuse before the (itself O(Λ)) truncation search
        raise ValueError(
            f"uniformization needs {math.floor(mean) + 1 if mean < 2.0**62 else f'{mean:.3g}'} block products for "
            f"qt = {mean:.6g} (q = {rate:.6g} from the diagonal of {op.name}, "
            f"t = {t:.6g}; at least ⌊qt⌋ + 1), more than max_matvecs = {budget}; use a Krylov or (for reversible "
            "chains) Chebyshev "
            "method, split the time interval, or raise max_matvecs"
        )
    left, right, weights = poisson_truncation(mean, 0.5 * tol)
    neglected = float((scipy.special.pdtr(left - 1, mean) if left > 0 else 0.0) + scipy.special.pdtrc(right, mean))
    info.update(rate=rate, poisson_mean=mean, left=left, right=right, neglected_mass=neglected)
    if right + 1 > budget:
        raise ValueError(
            f"uniformization needs {right + 1} block products for qt = {mean:.6g} (q = {rate:.6g}, t = {t:.6g}), "
            f"more than max_matvecs = {budget}; use a Krylov or (for reversible chains) Chebyshev method, "
            "or raise max_matvecs"
        )

    def product(x):
        return fresh_product(xp, op, x, block.dtype)  # the loop updates it in place

    row_sums = product(xp.ones_like(block))  # r = Q1 as the kernel computes it, column by column
    correct = bool(xp.any(row_sums != 0))  # exactly zero row sums need no correction (one sync)
    inverse_rate = 1.0 / rate
    chunk = max(1, math.isqrt(right - left + 1))
    total = xp.zeros_like(block)
    partial = float(weights[0]) * block if left == 0 else xp.zeros_like(block)
    kept = 1 if left == 0 else 0
    power = xp.asarray(block, copy=True)  # P^k B, updated in place
    for k in range(1, right + 1):
        step = product(power)  # Q X
        if correct:
            _subtract_product(step, row_sums, power)  # (Q - diag r) X, zero for X = 1 bit for bit
        axpy(power, inverse_rate, step)  # X <- X + (Q - diag r) X / q = P X
        if k >= left:
            axpy(partial, float(weights[k - left]), power)
            kept += 1
            if kept % chunk == 0:  # two-level summation: error ~ (chunk + R/chunk)·u, not R·u
                total += partial
                partial = xp.zeros_like(block)
    total += partial

    bound = 2.0 * neglected
    block_max = to_numpy(xp.max(xp.abs(block), axis=0)).astype(float)
    result_max = to_numpy(xp.max(xp.abs(total), axis=0)).astype(float)
    ratios = [
        bm / rm if rm > 0 else (math.inf if bm > 0 else 0.0) for bm, rm in zip(block_max, result_max, strict=True)
    ]
    estimate = (bound + unit * math.sqrt(right + 1)) * max(ratios, default=0.0)
    info.update(matvecs=right + 1, error_bound=bound, error_estimate=estimate)
    if estimate > max(tol, math.sqrt(unit)):
        warnings.warn(
            f"expmv_uniformization: a column of the result is {1 / max(ratios):.2g} times its input in max-norm "
            f"(the mean-zero part has decayed), so its relative accuracy is only about {estimate:.1g} (requested "
            f"tol {tol:.1g}); the bound ‖y_j - e^(tQ)b_j‖_∞ ≤ {bound + unit * math.sqrt(right + 1):.1g}·‖b_j‖_∞ "
            "holds. Subtract the stationary mean from B first" + (", or use float64" if unit > 2.0**-53 else ""),
            AccuracyWarning,
            stacklevel=2,
        )
    return finish(xp, total, vector), info
