r"""Work budgets of the exact engine: cost estimates per series and the degree ceilings they imply.

Every entry point whose work grows with a degree estimates that work before it starts and refuses, with
a ``ValueError`` naming the parameter, the ceiling and the estimate, past :data:`BUDGET_SECONDS` of
estimated work on the reference machine, or, for the BCH family on the compiled kernel, past the memory
budget (:func:`increasing_log_bytes` against :func:`workbench.memory.memory_budget`; its time is estimated
and reported, not limited).  Each estimate is a count of the engine's elementary steps
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
    """``log(e^{X_0} ⋯ e^{X_{r-1}})`` by the compiled kernel (BCH, multi-factor BCH): CPU seconds, whole process.

    Fitted (relative least squares) to fresh-process runs on the reference machine (2026-12-05, Intel Xeon,
    2 cores, ``OMP_NUM_THREADS=1``, GNU time), Python start-up included: ``r·k`` per Lyndon word of each solved
    degree ``k`` (Goldberg's right sides) and ``k·Σ_c ℓ(c)²`` per solved degree (the kernel's programme runs
    and forward substitution); the ``{word: Fraction}`` dict is built only when it is read.  Within ±12 % from
    one second on, ±40 % below.  Measured: bch(20) 0.28 s, bch(22) 1.8 s, bch(24) 26 s; bch_many(3, 14) 4.1 s;
    bch_many(4, 11) 2.1 s; bch_many(8, 7) 0.98 s; bch_many(26, 4) 0.84 s.
    """
    solved_words = solve = 0.0
    for k in range(1, degree + 1):
        if n_letters == 2 and k % 2 == 0:
            continue
        solved_words += n_letters * k * lyndon_count(n_letters, k)
        solve += k * _solve_steps(n_letters, k)
    return 0.071 + 5.7e-8 * solved_words + 5.7e-11 * solve


def increasing_log_bytes(n_letters: int, degree: int) -> float:
    """Peak memory (bytes, whole process) of :func:`increasing_log_seconds`'s computation, with a 15 % margin.

    Fitted to the same runs (peak resident set, within ±8 %): 17 MB of interpreter, package and kernel (no
    numpy), 52 B per Lyndon word up to ``degree`` and 1.3 B per letter of them (the levels' positions and
    numerators, the word lists), and 0.04 B per letter of the largest solved degree (its right sides and
    programme).  Measured: bch(20) 24 MB, bch(22) 47 MB, bch(24) 143 MB; bch_many(3, 14) 51 MB;
    bch_many(4, 11) 52 MB.
    """
    words = letters = largest = 0.0
    for k in range(1, degree + 1):
        count = lyndon_count(n_letters, k)
        words += count
        letters += k * count
        if not (n_letters == 2 and k % 2 == 0):
            largest = max(largest, k * count)
    return 1.15 * (1.7e7 + 52 * words + 1.3 * letters + 0.04 * largest)


def python_increasing_log_seconds(n_letters: int, degree: int) -> float:
    """:func:`increasing_log_seconds` where the kernel is not built: the solve in Python integers.

    Steps: the triangular solve of every solved degree (for two letters even degrees are a relabelling)
    plus ``k`` per Lyndon word for the word coefficients.  Measured (before the kernel): bch(19) 3.9 s,
    bch(20) 4.5 s, bch(21) > 30 s; bch_many(3, 12) 2.7 s, (3, 13) 12.6 s; bch_many(4, 9) 1.8 s, (4, 10) 7.5 s.
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


def zassenhaus_seconds(degree: int, kernel: bool = True) -> float:
    r"""Zassenhaus by dense word vectors modulo primes, then the exact Lyndon solve of every degree.

    Steps per prime: multiplying by :math:`e^{C_n}` updates every degree ``m ≥ n`` with ``⌊m/n⌋`` outer
    products of ``2^m`` entries, :math:`\sum_{n<d}\sum_{n \le m \le d} \lfloor m/n \rfloor 2^m`
    (``int64`` multiply-adds, reduced every seventh term: about 6 ns each).  Primes: the proven bound on
    ``2·D_n·max|C_n|`` is about :math:`1.55\log_2 d! + 6` bits (this count of primes equals the one the
    bounds give at every degree through 30, and exceeds it by one at some degrees up to 40), in primes
    of 30 bits, plus one check prime.  The solve: the entries of the triangular blocks of every degree,
    2 ns each in the compiled kernel; without it (``kernel=False``) 12 ns each plus 2.5 µs per letter of
    the Lyndon words (the Python programme that builds the blocks).  Measured (fresh interpreter, the
    call alone; add 0.08 s for the import; the machine shared, so ±40 %): with the kernel degree 14
    0.07 s, 16 0.15–0.18 s, 18 0.6–0.7 s, 20 3.4–5.0 s (solve 1.0–1.2 s), 21 8.2–8.4 s (solve 2.8 s),
    estimate for 22 24 s; without it 16 0.58 s, 18 2.1 s, 19 5.3 s, 20 15.8 s.
    """
    steps = sum((m // n) * 2**m for n in range(2, degree) for m in range(n, degree + 1))
    bits = 1.55 * math.lgamma(degree + 1) / math.log(2) + 6
    primes = math.ceil(bits / 30) + 1
    solve = sum(_solve_steps(2, k) for k in range(2, degree + 1))
    if kernel:
        return 6.0e-9 * primes * steps + 2.0e-9 * solve
    letters = sum(k * lyndon_count(2, k) for k in range(2, degree + 1))
    return 6.0e-9 * primes * steps + 1.2e-8 * solve + 2.5e-6 * letters


@cache
def _weighted_words(n_terms: int, order: int) -> tuple[int, int]:
    # Words in letters X_0..X_{n-1} of weight wt(X_j) = j + 1 and total weight 1..order, counted twice:
    # (i) Σ L² over all of them, L the length (a Lyndon word, about 1/L of them, costs about L³ steps in
    # the segmentation sum); (ii) Σ L·ℓ(|S|, L) over the letter sets S (≥ 2 letters, weight ≤ order) and
    # the lengths L they reach: the Lyndon words of |S| letters listed and solved per (S, L).
    count = [[1]] + [[0] * (w + 1) for w in range(1, order + 1)]  # count[w][L]
    for w in range(1, order + 1):
        for j in range(min(n_terms, w)):
            for length, c in enumerate(count[w - j - 1]):
                if c:
                    count[w][length + 1] += c
    segmentation = sum(c * length**2 for w in range(1, order + 1) for length, c in enumerate(count[w]))
    # Letter sets by (size, smallest letter, weight), from subsets of the letters above each one.
    above, sets = {(0, 0): 1}, {}
    for j in range(n_terms - 1, -1, -1):
        grown = dict(above)
        for (size, weight), c in above.items():
            if weight + j + 1 <= order:
                if size:
                    sets[(size + 1, j, weight + j + 1)] = sets.get((size + 1, j, weight + j + 1), 0) + c
                grown[(size + 1, weight + j + 1)] = grown.get((size + 1, weight + j + 1), 0) + c
        above = grown
    engine = 0
    for (size, smallest, weight), c in sets.items():
        longest = size + (order - weight) // (smallest + 1)  # the other letters repeated as the smallest
        engine += c * sum(length * lyndon_count(size, length) for length in range(size, longest + 1))
    return segmentation, engine


def magnus_seconds(n_terms: int, order: int, kernel: bool = True) -> float:
    """Magnus from the closed word coefficients of the time-ordered exponential, on Lyndon words only.

    Two parts (:func:`_weighted_words`): the segmentation sum of ``log Y`` on every Lyndon word of
    weight ≤ order (``L³`` integer steps for length ``L``, 70 ns each), and, for every letter set ``S``
    and length ``L`` it reaches, the Lyndon words of ``|S|`` letters and length ``L`` listed and handed
    to the engine's solve (``L·ℓ(|S|, L)`` steps at 0.3 µs: all multidegrees of that alphabet, not only
    the few of weight ≤ order, which is what limits three and more letters).  Without the compiled
    kernel (``kernel=False``) the engine also builds every triangular block of each ``(|S|, L)``
    reached, as the fallback of :func:`zassenhaus_seconds` (12 ns per entry of Σ_c ℓ(c)² there is
    30 ns here, for alphabets of 2 to 5 letters, plus 2.5 µs per letter; conservative for two letters).
    Fitted (relative least squares) on the reference machine; measured (fresh interpreter, the call
    alone; add 0.08 s for the import; the machine shared, so up to ±50 %): with the kernel
    (n_terms = 2) order 12 0.01 s, 16 0.06 s, 20 0.43–0.57 s, 22 1.8–2.2 s, 24 7.6–8.0 s;
    (n_terms = 3) order 16 1.0 s, 17 2.5–3.0 s, 18 5.5–8.4 s; (n_terms = 4) order 16 1.9–2.1 s,
    17 3.9–6.3 s; (n_terms = order) 12 0.11 s, 14 0.38 s, 16 2.2–2.5 s, 17 4.2–7.0 s, 18 15 s.
    Without it: (n_terms = order) 12 0.75 s, 14 1.7 s, 15 5.4 s; (n_terms = 2) 20 1.9 s, 22 12 s;
    (n_terms = 3) 14 1.1 s, 16 18 s.
    """
    segmentation, engine = _weighted_words(n_terms, order)
    seconds = 7.0e-8 * segmentation + 3.0e-7 * engine
    if not kernel:  # (a sum past 10⁶ s is not refined further: it only has to exceed the budget)
        for size in range(2, n_terms + 1):
            if size * (size + 1) // 2 > order or seconds > 1e6:
                break
            for length in range(size, order - size * (size - 1) // 2 + 1):  # letters 0..size-1, the rest A
                seconds += 3.0e-8 * _solve_steps(size, length) + 2.5e-6 * length * lyndon_count(size, length)
                if seconds > 1e6:
                    break
    return seconds


def hausdorff_seconds(degree: int) -> float:
    """Hausdorff: ``degree`` terms ``ad_A^k B``, each rendered by factorising ``A^kB`` (``k²`` steps).

    Measured (series and its text): degree 500 0.13 s, 900 0.78 s.
    """
    return 1.1e-9 * degree**3


def basis_change_seconds(basis: str, n_letters: int, degree: int) -> float:
    r"""Hall or Chibrikov coordinates through ``degree``: the monomials' word coefficients, then the solve.

    Steps, summed over the degrees ``k ≤ degree``: one per basis element (its tree and its coefficient,
    in Python), ``k·2^{k−1}`` per element (its expansion into integer word codes), and
    :math:`\sum_c \ell(c)^3` for the ``±1``-pivot LU of the multidegree blocks, with
    :math:`\ell(c) \approx \binom{k}{c}/k` as in the module docstring, in floating point.  Measured
    (``bch(d).terms(basis)``, fresh interpreter, ``OMP_NUM_THREADS=1``, CPU time of the call; the wall
    time on the shared machine was up to about 1.5× more): Chibrikov 10 0.19 s, 12 0.28 s, 13 0.45 s,
    14 0.83 s, 15 2.3 s, 16 7.8 s, three letters (``bch_many``) 10 1.2 s, 11 7.2 s, four letters 8 1.2 s,
    9 7.0 s; Hall 10 0.18 s, 12 0.31 s, 13 0.46 s, 14 0.93 s, 15 2.7 s, 16 9.8 s, three letters 9 1.1 s,
    10 3.8 s, four letters 8 2.5 s (Hall 16 is estimated at 10.5 s and refused: 13 s of wall time there).
    ``"right-normed"`` is Chibrikov's basis; the Lyndon basis needs no change and is free.
    """
    if basis == "lyndon":
        return 0.0
    import numpy as np

    def real(count: int) -> float:  # counts past the float range make the estimate infinite
        return float(count) if count < 10**300 else math.inf

    elements = real(sum(lyndon_count(n_letters, k) for k in range(1, degree + 1)))
    expansion = real(sum(lyndon_count(n_letters, k) * 2 ** (k - 1) * k for k in range(1, degree + 1)))
    # Σ_c multinomial(k; c)³ / k³ = k!³/k³ [x^k] (Σ_j x^j/j!³)^r, by repeated squaring of the series.
    with np.errstate(over="ignore", invalid="ignore"):
        base = np.array([math.exp(-3 * math.lgamma(j + 1)) for j in range(degree + 1)])
        power, factor, r = np.zeros(degree + 1), base, n_letters
        power[0] = 1.0
        while r:
            if r & 1:
                power = np.convolve(power, factor)[: degree + 1]
            factor, r = np.convolve(factor, factor)[: degree + 1], r >> 1
        cubes = [power[k] * math.exp(3 * math.lgamma(k + 1) - 3 * math.log(k)) for k in range(2, degree + 1)]
    elimination = float(sum(cubes))
    if math.isnan(elimination):
        elimination = math.inf
    per_element, per_word, per_entry = (2.6e-4, 1.6e-9, 2.0e-9) if basis == "hall" else (1.2e-4, 2.6e-9, 5.0e-10)
    return per_element * elements + per_word * expansion + per_entry * elimination


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


def _largest_within(model, params: tuple, limit: float, top: int) -> int:
    # Every estimate grows with the degree: count up and stop at the first degree past the limit.
    best = 0
    for d in range(1, top + 1):
        if model(*params, d) > limit:
            break
        best = d
    return best


@cache
def ceiling(model, *params) -> int:
    """The largest degree ``d ≤ EXACT_UP_TO`` with ``model(*params, d)`` within :data:`BUDGET_SECONDS` (0: none)."""
    return _largest_within(model, params, BUDGET_SECONDS, EXACT_UP_TO)


def memory_ceiling(bytes_model, *params, budget: float, top: int = EXACT_UP_TO) -> int:
    """The largest degree ``d ≤ top`` with ``bytes_model(*params, d)`` within ``budget`` bytes (0: none)."""
    return _largest_within(bytes_model, params, budget, top)


def check_memory_budget(name: str, value: int, what: str, bytes_model, seconds_model, *params, top: int) -> int:
    """Refuse ``value`` past the memory ceiling of ``bytes_model`` (or past ``top``), naming both estimates.

    ``top`` is the degree past which the Lyndon word lists themselves exceed the work budget.

    The budget is :func:`workbench.memory.memory_budget`: ``memory_limit``, ``WORKBENCH_MAX_MEMORY``, or the
    memory the kernel reports available.  Time is not limited here: it is reported (``workbench derive`` prints
    both estimates before it starts).
    """
    from workbench.memory import memory_budget

    budget, origin = memory_budget()
    ceiling_ = top if budget is None else memory_ceiling(bytes_model, *params, budget=budget, top=top)
    if value <= ceiling_:
        return value
    at = min(value, top)
    gib, seconds = bytes_model(*params, at) / 2**30, seconds_model(*params, at)
    if ceiling_ == top:
        reason = "past it the Lyndon word lists alone exceed the work budget"
    else:
        reason = f"memory budget {budget / 2**30:.3g} GiB, {origin}"
    bound = "" if at == value else f" already at {name}={at}"
    raise ValueError(
        f"{name} must be at most {ceiling_} for {what} ({reason}), got {value!r}: estimated {gib:.3g} GiB and "
        f"{seconds:.3g} s{bound}"
    )


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
