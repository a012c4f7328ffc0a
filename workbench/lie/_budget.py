r"""Work budgets of the exact engine: cost estimates per series and the degree ceilings they imply.

Every entry point whose work grows with a degree estimates that work before it starts and refuses, with
a ``ValueError`` naming the parameter, the ceiling and the estimate, past :data:`BUDGET_SECONDS` of
estimated work on the reference machine.  Each estimate is a count of the engine's elementary steps
(from Witt's formula and its refinement by multidegree) times a per-step cost measured on the reference
machine (2026-12-01, AMD EPYC, 2 cores, fresh interpreter, ``OMP_NUM_THREADS=1``); the measured
wall times are listed at each model.  The ceiling of a series is the largest degree whose estimate fits
the budget; since every estimate grows with the degree, the ceiling is found by counting up from 1.

The counts use the number of Lyndon words of length ``k`` with letter content ``c``
(Witt's formula refined by multidegree),

.. math:: \ell(c) = \frac1k \sum_{g \mid \gcd(c)} \mu(g) \binom{k/g}{c/g},

and the engine's triangular solve touches about :math:`\sum_c \ell(c)^2` entries in degree ``k``,
approximated by :math:`\frac{1}{k^2}\sum_c \binom{k}{c}^2 = \frac{k!^2}{k^2}[x^k]\bigl(\sum_j x^j/j!^2\bigr)^r`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

# Package-internal: the budgets are documented at each public function that they limit.
__all__ = []

# The budget: 10 s of estimated work on the reference machine, the target the issue set for the
# degree-20 BCH series (benchmarks/RESULTS.md: bch(20) in 4.5 s, target 10 s).
BUDGET_SECONDS = 10.0
# No degree parameter of the package goes past 64, whatever its estimate: the estimates are evaluated
# exactly only up to here (their counts grow like r^k), and bracket trees of depth ≤ 64 keep every
# recursive renderer far inside Python's recursion limit.
EXACT_UP_TO = 64
# Witt's formula is closed-form; its cost is the big integer r^d, refused past 2^22 bits (0.2 s).
MAX_WITT_BITS = 2**22


def mobius(n: int) -> int:
    """Möbius function μ(n) by trial division."""
    result, p, m = 1, 2, n
    while p * p <= m:
        if m % p == 0:
            m //= p
            if m % p == 0:
                return 0
            result = -result
        p += 1
    return -result if m > 1 else result


def divisors(n: int) -> list[int]:
    """The divisors of ``n`` in increasing order, in O(√n) steps."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def lyndon_count(n_letters: int, degree: int) -> int:
    r"""Number of Lyndon words of length ``degree`` on ``n_letters`` letters (Witt's formula), exact."""
    total = sum(mobius(d) * n_letters ** (degree // d) for d in divisors(degree))
    return total // degree


@cache
def _squared_multinomials(n_letters: int, degree: int) -> int:
    # Σ_c multinomial(degree; c)² over contents c of `degree` letters: degree!² [x^degree] (Σ_j x^j/j!²)^r.
    base = [Fraction(1, math.factorial(j) ** 2) for j in range(degree + 1)]
    power = [Fraction(1)] + [Fraction(0)] * degree
    for _ in range(n_letters):
        power = [sum((power[i] * base[k - i] for i in range(k + 1)), Fraction(0)) for k in range(degree + 1)]
    return int(power[degree] * math.factorial(degree) ** 2)


def _solve_steps(n_letters: int, k: int) -> float:
    # Entries the exact triangular solve touches in degree k: Σ_blocks ℓ(c)² ≈ Σ_c multinomial² / k².
    return _squared_multinomials(n_letters, k) / k**2


# --- cost models: seconds of estimated work for a degree (parameters fixed) -------------------------


def increasing_log_seconds(n_letters: int, degree: int) -> float:
    """``log(e^{X_0} ⋯ e^{X_{r-1}})`` by the fast path (BCH, multi-factor BCH, symmetric BCH).

    Steps: the triangular solve of every solved degree (for two letters even degrees are a relabelling)
    plus ``k`` per Lyndon word for the word coefficients.  Measured: bch(19) 3.9 s, bch(20) 4.5 s,
    bch(21) > 30 s; bch_many(3, 12) 2.7 s, (3, 13) 12.6 s; bch_many(4, 9) 1.8 s, (4, 10) 7.5 s.
    """
    steps = 0.0
    for k in range(1, degree + 1):
        if n_letters == 2 and k % 2 == 0:
            continue
        steps += _solve_steps(n_letters, k) + k * lyndon_count(n_letters, k)
    return 4.0e-8 * steps


def generic_log_seconds(n_letters: int, n_factors: int, degree: int) -> float:
    """``log`` of a general product of ``m`` exponentials: Goldberg's sum per Lyndon word, then the solve.

    Steps: ``m k³`` per Lyndon word of length ``k`` (the segmentation table) plus the solve.
    Measured (commutator_log, m = 4): degree 12 0.34 s, 14 1.35 s, 16 5.6 s, 17 12.7 s.
    """
    steps = sum(n_factors * k**3 * lyndon_count(n_letters, k) for k in range(1, degree + 1))
    solve = sum(_solve_steps(n_letters, k) for k in range(2, degree + 1))
    return 4.4e-8 * steps + 4.0e-8 * solve


def zassenhaus_seconds(degree: int) -> float:
    """Zassenhaus in the free algebra: truncated products of elements over all ``2^{k+1}`` words.

    Steps: ``(2^{d+1})²`` word pairs per truncated product, ``d`` products per degree.
    Measured: degree 8 0.13 s, 9 0.53 s, 10 2.2 s, 11 9.5 s.
    """
    return 5.2e-8 * degree * 4 ** (degree + 1)


@cache
def _weighted_words(n_terms: int, order: int) -> int:
    # Words in letters X_0..X_{n-1} of weight wt(X_j) = j + 1 and total weight 1..order.
    count = [1] + [0] * order
    for w in range(1, order + 1):
        count[w] = sum(count[w - j] for j in range(1, min(n_terms, w) + 1))
    return sum(count[1:])


def magnus_seconds(n_terms: int, order: int) -> float:
    """Magnus by the Bernoulli recursion in the free algebra: brackets of elements over ``N`` words.

    Steps: ``N²`` word pairs, ``N`` the number of words of weight ≤ order, at 2.6 µs × √n_terms per pair
    (fitted: more letters, longer brackets).  Measured, with the 0.15 s sympy import: (n_terms = 2)
    order 12 0.91 s, 13 2.1 s, 14 8.2 s, 15 18 s; (n_terms = order) order 8 0.59 s, 9 2.5 s.
    """
    return 2.6e-6 * math.sqrt(n_terms) * _weighted_words(n_terms, order) ** 2


def hausdorff_seconds(degree: int) -> float:
    """Hausdorff: ``degree`` terms ``ad_A^k B``, each rendered by factorising ``A^kB`` (``k²`` steps).

    Measured (series and its text): degree 500 0.13 s, 900 0.78 s.
    """
    return 1.1e-9 * degree**3


def basis_change_seconds(basis: str, n_letters: int, degree: int) -> float:
    """Hall or right-normed coordinates through ``degree``: every basis tree expanded (``2^{k-1}`` words).

    Measured (``bch(d).terms(basis)``): Hall 12 0.46 s, 14 2.5 s, 15 11.9 s; right-normed 10 0.81 s,
    12 3.2 s, 13 9.2 s.  The Lyndon basis needs no change and is free.
    """
    if basis == "lyndon":
        return 0.0
    per_step = 1.65e-8 if basis == "hall" else 2.16e-7
    return per_step * sum(lyndon_count(n_letters, k) * 2 ** (k - 1) * k for k in range(1, degree + 1))


def lyndon_words_seconds(n_letters: int, degree: int) -> float:
    """Duval's generation visits every Lyndon word of length ≤ ``degree``; the result holds ``ℓ_d`` tuples.

    Measured (two letters): degree 24 0.71 s and 222 MB, 26 2.7 s and 731 MB.  The memory,
    ``(56 + 8d)`` bytes per kept word, is charged at 10 s per GB (the 1 GB memory target of the issue).
    """
    visited = sum(lyndon_count(n_letters, k) for k in range(1, degree + 1))
    memory_gb = lyndon_count(n_letters, degree) * (56 + 8 * degree) / 1e9
    return 5.0e-7 * visited + 10.0 * memory_gb


def witt_bits(n_letters: int, degree: int) -> float:
    """Witt's formula: the big integer ``r^d`` (``d log₂ r`` bits) dominates its cost.

    Measured: 3^(10^6) (1.6 Mbit) 0.045 s, 26^(10^6) (4.7 Mbit) 0.23 s, 3^(10^7) (16 Mbit) 1.8 s;
    hence :data:`MAX_WITT_BITS`.
    """
    return degree * math.log2(max(n_letters, 2))


# --- ceilings ---------------------------------------------------------------------------------------


@cache
def ceiling(model, *params) -> int:
    """The largest degree ``d ≤ EXACT_UP_TO`` with ``model(*params, d)`` within :data:`BUDGET_SECONDS` (0: none)."""
    best = 0
    for d in range(1, EXACT_UP_TO + 1):
        if model(*params, d) > BUDGET_SECONDS:
            break
        best = d
    return best


def check_budget(name: str, value: int, what: str, model, *params) -> int:
    """Refuse ``value`` past the ceiling of ``model``, naming the parameter, the ceiling and the estimate."""
    top = ceiling(model, *params)
    if value <= top:
        return value
    at = min(value, EXACT_UP_TO)
    seconds = model(*params, at)
    if seconds <= BUDGET_SECONDS:  # within budget but past the absolute ceiling
        raise ValueError(
            f"{name} must be at most {EXACT_UP_TO} for {what} (the package's largest degree), got {value!r}"
        )
    bound = "" if at == value else f" already at {name}={at}"
    raise ValueError(
        f"{name} must be at most {top} for {what} (work budget {BUDGET_SECONDS:g} s on the reference machine), "
        f"got {value!r}: estimated {seconds:.3g} s{bound}"
    )
