r"""Magnus expansion of :math:`Y' = A(t)Y`, :math:`Y(0) = I`: :math:`Y(t) = e^{\Omega(t)}`.

The terms follow the Bernoulli recursion (Klarsfeld–Oteo 1989; Blanes, Casas, Oteo & Ros,
*Phys. Rep.* 470 (2009), eqs. 43–44), with :math:`B_1 = -\tfrac12`:

.. math::

    \Omega_1 = \int_0^t A,\qquad
    \Omega_n = \sum_{j=1}^{n-1} \frac{B_j}{j!} \int_0^t S_n^{(j)}(\tau)\,d\tau,

    S_n^{(1)} = [\Omega_{n-1}, A],\quad
    S_n^{(j)} = \sum_{m=1}^{n-j} [\Omega_m, S_{n-m}^{(j-1)}]\ (2 \le j \le n-1).

Two realisations:

* :func:`magnus_integrals` — the recursion above for an abstract noncommutative :math:`A(t)`, each
  :math:`\Omega_n` as sympy nested integrals over the time simplex (unevaluated; substitute a
  concrete ``A`` and call ``doit()``);
* :func:`magnus` — the exact specialisation to polynomial generators
  :math:`A(t) = \sum_j t^j X_j` on :math:`[0, h]`: every word :math:`w` in the letters
  :math:`X_j` carries the power :math:`h^{\mathrm{wt}(w)}` with :math:`\mathrm{wt}(X_j) = j + 1`, so
  :math:`\Omega(h)` is a Lie series with exact rational coefficients.  It does not run the
  recursion: the time-ordered exponential :math:`Y(h)` has closed word coefficients (iterated
  integrals of monomials), and :math:`\Omega = \log Y` is read off word by word on the Lyndon words
  only (see :func:`magnus`).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from functools import cache, partial

import numpy as np

from workbench.backend import check_view_size, namespace, to_numpy
from workbench.lie._budget import check_budget, magnus_seconds
from workbench.lie._fast import lyndon_coordinates_from_values
from workbench.lie._free import check_degree, check_integer
from workbench.lie._levels import kernel_available
from workbench.lie._series import LieSeries
from workbench.lie._words import lyndon_words
from workbench.validation import as_array, check_in_range, check_square

__all__ = ["integrate_noncommutative", "magnus", "magnus_integrals", "magnus_omega"]

# The budget where the engine's compiled kernel is not built (its Python-integer solve is slower).
_PYTHON_BUDGET = partial(magnus_seconds, kernel=False)


def _bernoulli(j: int) -> Fraction:
    import sympy as sp

    value = sp.bernoulli(j)
    if j == 1:  # the recursion uses B₁ = −1/2; sympy ≥ 1.12 returns +1/2
        value = -abs(value)
    return Fraction(int(value.p), int(value.q))


@cache
def _lyndon_array(n_letters: int, length: int) -> np.ndarray:
    return np.array(lyndon_words(n_letters, length), dtype=np.int64).reshape(-1, length)


def _letter_sets(n_terms: int, order: int) -> list[tuple[int, ...]]:
    # Sets of letters X_j (j < n_terms) whose weights j + 1 sum to at most `order`, each increasing.
    found: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], weight: int) -> None:
        start = prefix[-1] + 1 if prefix else 0
        for j in range(start, n_terms):
            if weight + j + 1 > order:
                break
            found.append((*prefix, j))
            extend((*prefix, j), weight + j + 1)

    extend((), 0)
    return found


def _log_coefficient(word: tuple[int, ...], scale: int) -> Fraction:
    r"""Coefficient of ``word`` (letters ``j`` of weight ``j + 1``) in :math:`\Omega(1) = \log Y(1)`.

    A block ``u`` has the coefficient :math:`Y_u = 1/\prod_{s} \mathrm{wt}(u_{s:})` in :math:`Y(1)` (one
    factor per suffix), so a segmentation into blocks carries one factor :math:`1/\mathrm{wt}` per
    position: the weight from that position to the end of its block.  With ``scale`` a common multiple
    of every weight, the dynamic programme over (prefix, number of blocks) runs in integers
    (numerators over ``scale^n``) and Goldberg's sum :math:`\sum_k (-1)^{k+1}/k` closes it.
    """
    n = len(word)
    prefix = [0]
    for letter in word:
        prefix.append(prefix[-1] + letter + 1)
    # block[i][j] = scale^{j-i} · Y_{word[i:j]}, an integer
    block = [[0] * (n + 1) for _ in range(n + 1)]
    for j in range(1, n + 1):
        value = 1
        for i in range(j - 1, -1, -1):
            value *= scale // (prefix[j] - prefix[i])
            block[i][j] = value
    ways = [1] + [0] * n  # ways[j]: prefixes of length j cut into k blocks, scaled by scale^j
    total = Fraction(0)
    for k in range(1, n + 1):
        ways = [0] * k + [sum(ways[i] * block[i][j] for i in range(k - 1, j)) for j in range(k, n + 1)]
        total += Fraction((-1) ** (k + 1) * ways[n], k)
    return total / scale**n


def magnus(order: int, n_terms: int = 2) -> LieSeries:
    r"""Exact Magnus exponent :math:`\Omega(h)` for :math:`A(t) = \sum_{j<k} t^j X_j` through :math:`h^{\text{order}}`.

    The generators are named ``A, B, C, …`` for :math:`X_0, X_1, X_2, …` (so ``A(t) = A + tB`` for
    ``n_terms=2``).  Coordinates are the coefficients at :math:`h = 1`; the term of a word of weight
    :math:`k` carries :math:`h^k` (shown by the renderers, ``h_power`` in JSON).  ``evaluate`` works at
    :math:`h = 1`; :func:`magnus_omega` evaluates at any :math:`h` by scaling :math:`X_j \to h^{j+1} X_j`.

    Method.  :math:`Y(h)` solves :math:`Y' = A(t)Y`, :math:`Y(0) = I`, so it is the time-ordered series
    :math:`\sum_k \int_{h > t_1 > \dots > t_k > 0} A(t_1)\cdots A(t_k)`: the word
    :math:`X_{j_1}\cdots X_{j_k}` has the coefficient
    :math:`h^{\mathrm{wt}}/\prod_{i=1}^k \mathrm{wt}(X_{j_i}\cdots X_{j_k})` (the integral of a
    monomial over the simplex, innermost variable first).  :math:`\Omega = \log Y` is then read off on
    each Lyndon word of weight ≤ ``order`` by the segmentation (Goldberg) sum over its blocks, and the
    engine's exact triangular solve turns those values into Lyndon coordinates, one letter set and
    length at a time (a block of one multidegree only involves its own letters, relabelled
    ``0, 1, …`` in order).  The segmentation sums run on the Lyndon words of weight ≤ ``order`` only
    (746 for ``order = n_terms = 12``) instead of brackets over all words.  The result equals the Bernoulli
    recursion of Klarsfeld–Oteo (1989) and Blanes, Casas, Oteo & Ros (2009) truncated at the same
    weight.

    The work is estimated first and refused past the package's budget (:mod:`workbench.lie._budget`):
    ``order ≤ 24`` for ``n_terms = 2``, 18 for 3, 17 for 4 or more (``magnus(12, 12)`` takes about
    0.1 s, ``magnus(17, 17)`` 4–7 s); where the engine's compiled kernel is not built, 20 for
    ``n_terms = 2`` and 15 for 3 or more (``magnus(12, 12)`` then takes 0.75 s).

    Examples
    --------
    >>> magnus(3).to_text()
    'h A + 1/2 h^2 B - 1/12 h^3 [A,B]'
    """
    order = check_degree(order, "order")
    n_terms = check_integer("n_terms", n_terms, 1, order, expected=f"an integer in [1, order={order}]")
    if kernel_available():
        check_budget("order", order, f"magnus with n_terms={n_terms}", magnus_seconds, n_terms)
    else:
        check_budget("order", order, f"magnus with n_terms={n_terms} (no compiled kernel)", _PYTHON_BUDGET, n_terms)
    scale = math.lcm(*range(1, order + 1))
    coordinates: dict[tuple[int, ...], Fraction] = {}
    for letters in _letter_sets(n_terms, order):
        r = len(letters)
        if r == 1:  # a single letter X_j: its only Lyndon word is X_j itself, with ∫₀¹ t^j dt
            coordinates[letters] = Fraction(1, letters[0] + 1)
            continue
        spare = order - sum(j + 1 for j in letters)  # weight left for repeated letters
        mapping = np.array(letters, dtype=np.int64)
        for length in range(r, r + spare // (letters[0] + 1) + 1):
            words = _lyndon_array(r, length)
            uses_all = np.all([(words == i).any(axis=1) for i in range(r)], axis=0)
            chosen = np.nonzero(uses_all & ((mapping[words] + 1).sum(axis=1) <= order))[0]
            if not len(chosen):
                continue
            values = [Fraction(0)] * len(words)
            for position in chosen.tolist():
                values[position] = _log_coefficient(tuple(mapping[words[position]].tolist()), scale)
            for word, c in lyndon_coordinates_from_values(r, length, values).items():
                coordinates[tuple(letters[i] for i in word)] = c
    return LieSeries("magnus", n_terms, order, coordinates, tuple(range(1, n_terms + 1)))


def magnus_omega(coefficients, h, order: int = 4):
    r"""Numeric :math:`\Omega(h)` for :math:`A(t) = \sum_j t^j X_j`, truncated at :math:`h^{\text{order}}`.

    Warns (``RuntimeWarning``) when :math:`\int_0^h \lVert A(t)\rVert_2\,dt \ge \pi`, outside the
    guaranteed convergence domain of the Magnus series (Moan & Niesen 2008).

    Parameters
    ----------
    coefficients : sequence of arrays, shape=[n, n]
        :math:`X_0, X_1, …` (numpy or torch).
    h : float
        Step length, :math:`h \ge 0`, finite, and small enough that the terms stay in float64 range:
        with :math:`M = \sum_j h^{j+1}\lVert X_j\rVert_F/(j+1) \ge \int_0^h \lVert A\rVert_F`, a term of
        degree :math:`k` is bounded by :math:`(2M)^k`, and :math:`(2M)^{\text{order}} > 10^{300}` is
        refused (far outside the convergence domain anyway).
    order : int
        Truncation order in :math:`h` (budgeted as :func:`magnus`).

    Examples
    --------
    >>> import numpy as np
    >>> E12, E23 = np.eye(3, k=1) * [[1], [0], [0]], np.eye(3, k=1) * [[0], [1], [0]]
    >>> omega = magnus_omega([E12, E23], h=2.0, order=3)  # exact: [E12, E23] = E13 is central
    >>> omega.tolist()
    [[0.0, 2.0, -0.6666666666666666], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    """
    h = check_in_range("h", h, 0.0)
    if (
        isinstance(coefficients, str | bytes)
        or not hasattr(coefficients, "__iter__")
        or len(getattr(coefficients, "shape", (0,))) == 0
    ):
        raise TypeError(f"coefficients must be a sequence of matrices X_0, X_1, ..., got {type(coefficients).__name__}")
    check_view_size("coefficients", coefficients)  # a repeated view of K matrices costs K conversions
    matrices = [as_array(f"coefficients[{j}]", x) for j, x in enumerate(coefficients)]
    if not matrices:
        raise ValueError("coefficients must hold at least one matrix X_0, got none")
    namespace(*matrices)
    for j, m in enumerate(matrices):
        check_square(f"coefficients[{j}]", m)
        if tuple(m.shape) != tuple(matrices[0].shape):
            raise ValueError(f"coefficients must share one shape, got {tuple(matrices[0].shape)} and {tuple(m.shape)}")
    order = check_degree(order, "order")
    series = magnus(order, len(matrices)) if len(matrices) <= order else magnus(order, order)
    _check_step(matrices[: series.n_letters], h, order)
    _warn_outside_convergence(matrices, h)
    scaled = [h ** (j + 1) * m for j, m in enumerate(matrices[: series.n_letters])]
    return series.evaluate(*scaled)


def _check_step(matrices, h: float, order: int) -> None:
    # log10 of M = Σ_j h^{j+1} ‖X_j‖_F / (j+1), in logarithms so that no power of h overflows.
    if h == 0.0:
        return
    logs, largest = [], 0.0
    for j, m in enumerate(matrices):
        host = np.abs(np.asarray(to_numpy(m), dtype=np.float64))
        # ‖X_j‖_F as s·‖X_j/s‖_F with s = max |entry|: entries near 1e300 must not overflow their squares.
        scale = float(host.max()) if host.size else 0.0
        if scale > 0.0:
            norm = scale * float(np.max(np.sqrt(np.sum((host / scale) ** 2, axis=(-2, -1)))))
            largest = max(largest, norm)
            logs.append((j + 1) * math.log10(h) + math.log10(norm) - math.log10(j + 1))
    if not logs:
        return
    top = max(logs)
    log_m = top + math.log10(sum(10.0 ** (v - top) for v in logs))
    if order * (log_m + math.log10(2.0)) > 300.0:
        raise ValueError(
            f"h must keep the order-{order} Magnus terms within float64 range ((2M)^order <= 1e300 with "
            f"M = sum_j h^(j+1) ||X_j||_F / (j+1) = 10^{log_m:.4g}, from coefficients of ||X_j||_F up to "
            f"{largest:.3g}), got {h!r}; shorten h (or rescale the coefficients) or split the interval"
        )


def _warn_outside_convergence(matrices, h: float) -> None:
    from scipy.integrate import quad

    host = [to_numpy(m) for m in matrices]
    if host[0].ndim != 2:
        return  # batched input: the bound is checked per matrix by the caller if needed

    def norm(t):
        return np.linalg.norm(sum(t**j * m for j, m in enumerate(host)), 2)

    integral, _ = quad(norm, 0.0, h, limit=200)
    if integral >= np.pi:
        warnings.warn(
            f"∫₀^h ‖A(t)‖₂ dt = {integral:.4g} ≥ π: outside the guaranteed convergence domain of the "
            "Magnus series; shorten h or split the interval",
            RuntimeWarning,
            stacklevel=3,
        )


def magnus_integrals(n: int):
    r"""The Magnus term :math:`\Omega_n(t)` for an abstract noncommutative :math:`A(t)`, as sympy integrals.

    Returns ``(expression, A, t)``: ``A`` is the undefined noncommutative sympy function and ``t`` the
    upper limit.  Substitute a concrete ``A`` (``expression.replace(A, ...)``) and evaluate with
    :func:`integrate_noncommutative` (sympy's own ``doit`` cannot integrate noncommutative integrands).

    Examples
    --------
    >>> import sympy as sp
    >>> omega2, A, t = magnus_integrals(2)
    >>> X, Y = sp.symbols("X Y", commutative=False)
    >>> s = sp.Symbol("s")
    >>> concrete = integrate_noncommutative(omega2.replace(A, sp.Lambda(s, X + s * Y)))
    >>> sp.expand(concrete - (-t**3 / 12) * (X * Y - Y * X))
    0
    """
    import sympy as sp

    n = check_integer("n", n, 1, 4, expected="an integer in [1, 4] (nested integrals grow fast)")
    A = sp.Function("A", commutative=False)
    t = sp.Symbol("t", positive=True)
    counter = iter(range(1, 10_000))

    def fresh():
        return sp.Symbol(f"tau{next(counter)}", positive=True)

    def comm(x, y):
        return sp.expand(x * y - y * x)

    def omega(k, upper):
        s = fresh()
        if k == 1:
            return sp.Integral(A(s), (s, 0, upper))
        total = sp.Integer(0)
        for j in range(1, k):
            integrand = S(k, j, s)
            if integrand != 0:
                b = _bernoulli(j)
                weight = sp.Rational(b.numerator, b.denominator) / sp.factorial(j)
                total += weight * sp.Integral(integrand, (s, 0, upper))
        return total

    def S(k, j, s):
        if j == 1:
            return comm(omega(k - 1, s), A(s))
        total = sp.Integer(0)
        for m in range(1, k - j + 1):
            total += comm(omega(m, s), S(k - m, j - 1, s))
        return total

    return omega(n, t), A, t


def integrate_noncommutative(expr):
    """Evaluate every ``Integral`` in ``expr`` whose integrand is polynomial in noncommutative symbols.

    Each term of the expanded integrand is split into its commutative factor (integrated by sympy) and
    its noncommutative factor (constant in the integration variable), innermost integrals first.

    Examples
    --------
    >>> import sympy as sp
    >>> s, X = sp.Symbol("s"), sp.Symbol("X", commutative=False)
    >>> integrate_noncommutative(sp.Integral(s * X, (s, 0, 2)))
    2*X
    """
    import sympy as sp

    if not isinstance(expr, sp.Basic):
        raise TypeError(f"expr must be a sympy expression, got {type(expr).__name__}")

    def evaluate(node):
        if not node.args:
            return node
        node = node.func(*[evaluate(arg) for arg in node.args]) if not isinstance(node, sp.Integral) else node
        if isinstance(node, sp.Integral):
            integrand = sp.expand(evaluate(node.function))
            for limits in node.limits:
                variable, low, high = limits
                total = sp.Integer(0)
                for term in sp.Add.make_args(integrand):
                    commutative, noncommutative = term.args_cnc()
                    total += sp.integrate(sp.Mul(*commutative), (variable, low, high)) * sp.Mul(*noncommutative)
                integrand = sp.expand(total)
            return integrand
        return node

    return sp.expand(evaluate(expr))
