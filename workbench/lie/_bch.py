r"""Logarithms of products of exponentials: BCH, symmetric and multi-factor BCH, group commutator; Hausdorff.

All coefficients are exact ``Fraction``\ s.  The logarithm of a product of exponentials of
generators, :math:`\log(e^{s_1 X_{l_1}} \cdots e^{s_m X_{l_m}})`, is computed word by word: the
coefficient of a word :math:`w` is

.. math::

    \sum_{k \ge 1} \frac{(-1)^{k+1}}{k} \sum_{w = u_1 \cdots u_k} \prod_j E(u_j),

over factorisations of :math:`w` into nonempty blocks, where :math:`E(u)` is the coefficient of
:math:`u` in the product of exponentials (Goldberg 1956, generalised to any list of factors).  Only
the coefficients of *Lyndon* words are computed; since the Lyndon basis satisfies
:math:`P_w = w + (\text{larger words})`, they determine the Lyndon-basis coordinates by
forward substitution.  This avoids expanding :math:`\log(e^A e^B)` over all words.

The Hausdorff (adjoint) series of a conjugation, :math:`e^{\mp A} B e^{\pm A}`, needs no solve at all
(its terms are the Lyndon elements :math:`\operatorname{ad}_A^k B`) and lives here with its relatives.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from fractions import Fraction
from functools import cache, partial
from typing import NamedTuple

from workbench.lie._budget import (
    EXACT_UP_TO,
    ceiling,
    check_budget,
    check_memory_budget,
    generic_log_seconds,
    hausdorff_seconds,
    increasing_log_bytes,
    increasing_log_seconds,
    lyndon_words_seconds,
    python_increasing_log_seconds,
)
from workbench.lie._free import NAMES, Word, as_integer, check_degree, check_integer
from workbench.lie._levels import (
    KERNEL_MAX_DEGREE,
    Level,
    bch_even_level,
    kernel_available,
    kernel_increasing_log_level,
)
from workbench.lie._series import DeferredCoordinates, LieSeries

# workbench.lie._fast (numpy) and the word lists are imported where the Python-integer path or a general product
# of exponentials needs them: `from workbench.lie import bch` on the compiled kernel imports no numpy.

__all__ = ["Cost", "bch", "bch_cost", "bch_many", "commutator_log", "hausdorff", "log_of_exponentials", "symmetric_bch"]

Factor = tuple[int, Fraction]


@cache
def _product_coefficient(word: Word, factors: tuple[Factor, ...]) -> Fraction:
    # Coefficient of `word` in e^{s_1 X_{l_1}} ⋯ e^{s_m X_{l_m}}: cover the word, left to right, by
    # (possibly empty) runs of each factor's letter, weight s^p/p! for a run of length p.
    weights = {0: Fraction(1)}
    n = len(word)
    for letter, scale in factors:
        nxt: dict[int, Fraction] = defaultdict(Fraction)
        for position, weight in weights.items():
            nxt[position] += weight
            run = 0
            while position + run < n and word[position + run] == letter:
                run += 1
                nxt[position + run] += weight * scale**run / math.factorial(run)
        weights = nxt
    return weights.get(n, Fraction(0))


def _log_coefficient(word: Word, factors: tuple[Factor, ...]) -> Fraction:
    # Σ_k (−1)^{k+1}/k Σ_{word = u_1⋯u_k} Π E(u_j), by dynamic programming over (position, k).
    n = len(word)
    blocks = {(i, j): _product_coefficient(word[i:j], factors) for i in range(n) for j in range(i + 1, n + 1)}
    ways = [[Fraction(0)] * (n + 1) for _ in range(n + 1)]  # ways[k][j]: prefix of length j in k blocks
    ways[0][0] = Fraction(1)
    for k in range(1, n + 1):
        for j in range(k, n + 1):
            total = Fraction(0)
            for i in range(k - 1, j):
                if ways[k - 1][i]:
                    b = blocks[(i, j)]
                    if b:
                        total += ways[k - 1][i] * b
            ways[k][j] = total
    return sum((Fraction((-1) ** (k + 1), k) * ways[k][n] for k in range(1, n + 1)), Fraction(0))


def _check_factors(factors) -> tuple[Factor, ...]:
    # (letter, scale) pairs: letter a nonnegative integer, scale an exact rational (never a float).
    if isinstance(factors, str | bytes) or not hasattr(factors, "__iter__"):
        raise TypeError(f"factors must be a sequence of (letter, scale) pairs, got {factors!r}")
    checked = []
    for i, pair in enumerate(factors):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"factors[{i}] must be a (letter, scale) pair, got {pair!r}")
        letter = check_integer(f"factors[{i}] letter", pair[0], 0, len(NAMES) - 1)
        scale = pair[1] if as_integer(pair[1]) is None else as_integer(pair[1])
        if isinstance(scale, bool) or not isinstance(scale, int | Fraction):
            raise TypeError(f"factors[{i}] scale must be an exact rational (int or Fraction), got {pair[1]!r}")
        checked.append((letter, Fraction(scale)))
    if not checked:
        raise ValueError("factors must name at least one exponential, got none")
    return tuple(checked)


def log_of_exponentials(factors, degree: int, n_letters: int | None = None, name: str = "log") -> LieSeries:
    r"""Lyndon coordinates of :math:`\log(e^{s_1 X_{l_1}} \cdots e^{s_m X_{l_m}})` up to ``degree``.

    Parameters
    ----------
    factors : sequence of (int, Fraction)
        ``(letter, scale)`` for each exponential, left to right.
    degree : int
        Truncation degree (≥ 1).  The work is estimated first and refused past the package's budget
        (:mod:`workbench.lie._budget`): for one exponential per letter in alphabet order (the BCH
        family, on the compiled kernel) the largest degree whose peak-memory estimate fits the memory
        budget, at most 26 on two letters, 16 on three, 12 on four (:func:`bch_cost`); for four general
        factors on two letters (the group commutator) ``degree ≤ 16`` (10 s of estimated work).
    n_letters : int, optional
        Alphabet size, at most 26 (default: the largest letter used + 1).
    name : str
        Name recorded on the series.

    Examples
    --------
    >>> from fractions import Fraction
    >>> log_of_exponentials([(0, Fraction(1)), (1, Fraction(1))], 3).to_text()
    'A + B + 1/2 [A,B] + 1/12 [A,[A,B]] + 1/12 [[A,B],B]'
    """
    degree = check_degree(degree)
    factors = _check_factors(factors)
    used = max(letter for letter, _ in factors) + 1
    n_letters = used if n_letters is None else check_integer("n_letters", n_letters, 1, len(NAMES))
    if n_letters < used:
        raise ValueError(f"factor letters must lie in 0..{n_letters - 1}, got {[f[0] for f in factors]}")
    # Fast path: one exponential per generator, in alphabet order, unit scales (BCH, multi-factor BCH).
    increasing = factors == tuple((letter, Fraction(1)) for letter in range(n_letters))
    if increasing:
        check_increasing_log(degree, n_letters, name)
    else:
        check_budget("degree", degree, name, generic_log_seconds, n_letters, len(factors))
    if increasing:  # kept as exact integer levels; the {word: Fraction} dict is built when it is first read
        levels = tuple(increasing_log_levels(n_letters, degree))
        deferred = DeferredCoordinates(partial(levels_coordinates, n_letters, levels))
        return LieSeries(name, n_letters, degree, deferred, factors=factors)
    coordinates: dict[Word, Fraction] = {}
    from workbench.lie._fast import lyndon_coordinates_from_values
    from workbench.lie._words import lyndon_words

    for d in range(1, degree + 1):
        values = [_log_coefficient(w, factors) for w in lyndon_words(n_letters, d)]
        coordinates.update(lyndon_coordinates_from_values(n_letters, d, values))
    return LieSeries(name, n_letters, degree, coordinates, factors=factors)


class Cost(NamedTuple):
    """An estimate made before a computation starts: CPU seconds and peak memory (bytes) of the whole process."""

    seconds: float
    bytes: float


def bch_cost(degree: int, n_factors: int = 2) -> Cost:
    """What :func:`bch` (``n_factors = 2``) or :func:`bch_many` will cost, estimated before any work.

    The models are fitted to fresh-process runs on the reference machine (2 cores, Python start-up included;
    :mod:`workbench.lie._budget`); the ceiling of ``degree`` is the largest whose memory estimate fits the
    memory budget (:func:`workbench.memory.memory_budget`).  ``workbench derive`` prints this before it starts.

    Examples
    --------
    >>> cost = bch_cost(20)
    >>> 0.1 < cost.seconds < 5 and 10e6 < cost.bytes < 100e6
    True
    """
    degree = check_integer("degree", degree, 1, EXACT_UP_TO)  # the estimates are exact only up to here
    n_factors = check_integer("n_factors", n_factors, 2, len(NAMES))
    if kernel_available():
        return Cost(increasing_log_seconds(n_factors, degree), increasing_log_bytes(n_factors, degree))
    return Cost(python_increasing_log_seconds(n_factors, degree), increasing_log_bytes(n_factors, degree))


def check_increasing_log(degree: int, n_letters: int, name: str) -> int:
    """The budget of :func:`increasing_log_levels`: memory where the kernel is built, time where it is not.

    With the kernel the ceiling is the largest degree whose peak-memory estimate fits the memory budget
    (:func:`~workbench.memory.memory_budget`), and at most the Lyndon words' own ceiling
    (:func:`~workbench.lie.lyndon_words`) and the kernel's :data:`~workbench.lie._levels.KERNEL_MAX_DEGREE`.
    """
    if not kernel_available():
        return check_budget("degree", degree, name, python_increasing_log_seconds, n_letters)
    top = min(ceiling(lyndon_words_seconds, n_letters), KERNEL_MAX_DEGREE)
    return check_memory_budget("degree", degree, name, increasing_log_bytes, increasing_log_seconds, n_letters, top=top)


def increasing_log_levels(n_letters: int, degree: int) -> Iterator[Level]:
    r"""The degrees of :math:`\log(e^{X_0} \cdots e^{X_{r-1}})` one at a time, as exact integer levels (unchecked).

    Odd degrees (every degree for three letters or more) are solved from their Goldberg coefficients; for two
    letters the even degrees are relabelled from the lower ones.  Only the levels are kept, a few bytes per term,
    so a consumer that writes each level out (the streaming JSON of ``workbench derive``) holds no Fractions.
    """
    levels: list[Level] = []
    for d in range(1, degree + 1):
        if n_letters == 2 and d % 2 == 0:
            level = bch_even_level(levels, d)
        else:
            level = kernel_increasing_log_level(n_letters, d)
            if level is None:  # no kernel, or a number past its 128 bits: the same level in Python integers
                from workbench.lie._fast import increasing_product_log_numerators, solve_level

                level = solve_level(n_letters, d, *increasing_product_log_numerators(n_letters, d))
        if n_letters == 2:
            levels.append(level)
        yield level


def levels_coordinates(n_letters: int, levels: tuple[Level, ...]) -> dict[Word, Fraction]:
    """The ``{Lyndon word: Fraction}`` dict of a series held as levels (one per degree, increasing)."""
    coordinates: dict[Word, Fraction] = {}
    for level in levels:
        coordinates.update(level.coordinates(n_letters))
    return coordinates


def bch(degree: int) -> LieSeries:
    r"""Baker–Campbell–Hausdorff series :math:`\log(e^A e^B)` up to ``degree``, in the Lyndon basis.

    The degree is held to a memory ceiling (:func:`bch_cost` estimates time and peak memory first): on the
    reference machine (2 cores) ``bch(20)`` takes 0.28 s and 24 MB as a whole process, ``bch(22)`` 1.8 s and
    47 MB, ``bch(24)`` 26 s and 143 MB; at most 26.  The series holds exact integer levels; its
    ``{word: Fraction}`` dict is built when :attr:`~workbench.lie.LieSeries.coordinates` is first read
    (``bch(20)``: about 0.15 s and 25 MB more).

    Examples
    --------
    >>> bch(2).to_text()
    'A + B + 1/2 [A,B]'
    """
    return log_of_exponentials([(0, 1), (1, 1)], degree, 2, "bch")


def symmetric_bch(degree: int) -> LieSeries:
    r"""Symmetric BCH series :math:`\log(e^{A/2} e^{B} e^{A/2})` (only odd degrees survive).

    Examples
    --------
    >>> symmetric_bch(3).to_text()
    'A + B - 1/24 [A,[A,B]] + 1/12 [[A,B],B]'
    """
    # e^W = e^{-A/2} e^Z e^{A/2} with Z = log(e^A e^B), so W = e^{-ad_{A/2}} Z; in the Lyndon basis
    # ad_A P_w = P_{Aw} (w ≠ A), so this is a relabelling of the BCH coefficients, exact at every degree.
    degree = check_degree(degree)
    coordinates: dict[Word, Fraction] = {}
    for word, c in bch(degree).coordinates.items():
        top = 0 if word == (0,) else degree - len(word)
        for k in range(top + 1):
            key = (0,) * k + word
            coordinates[key] = coordinates.get(key, Fraction(0)) + Fraction((-1) ** k, 2**k * math.factorial(k)) * c
    factors = ((0, Fraction(1, 2)), (1, Fraction(1)), (0, Fraction(1, 2)))
    return LieSeries("symmetric-bch", 2, degree, {w: c for w, c in coordinates.items() if c}, factors=factors)


def bch_many(n_factors: int, degree: int) -> LieSeries:
    r"""Multi-factor BCH :math:`\log(e^{A_1} e^{A_2} \cdots e^{A_k})` with generators ``A, B, C, …``.

    ``degree`` is budgeted as in :func:`log_of_exponentials` (``≤ 20`` for 2 factors, 12 for 3, 10 for 4).

    Examples
    --------
    >>> bch_many(3, 2).to_text()
    'A + B + C + 1/2 [A,B] + 1/2 [A,C] + 1/2 [B,C]'
    """
    n_factors = check_integer("n_factors", n_factors, 2, len(NAMES))
    name = "bch" if n_factors == 2 else f"bch{n_factors}"
    return log_of_exponentials([(i, 1) for i in range(n_factors)], degree, n_factors, name)


def commutator_log(degree: int) -> LieSeries:
    r"""Group-commutator series :math:`\log(e^A e^B e^{-A} e^{-B}) = [A,B] + \dots` (``degree ≤ 16``).

    Examples
    --------
    >>> commutator_log(3).to_text()
    '[A,B] + 1/2 [A,[A,B]] - 1/2 [[A,B],B]'
    """
    return log_of_exponentials([(0, 1), (1, 1), (0, -1), (1, -1)], degree, 2, "commutator")


def hausdorff(degree: int, form: str = "-A") -> LieSeries:
    r"""Hausdorff (adjoint) series of a conjugation, exact at every degree.

    ``form="-A"``: :math:`e^{-A} B e^{A} = \sum_k \frac{(-1)^k}{k!}\operatorname{ad}_A^k B`;
    ``form="+A"``: :math:`e^{A} B e^{-A} = \sum_k \frac{1}{k!}\operatorname{ad}_A^k B`, with
    :math:`\operatorname{ad}_A B = [A,B]`.  Sources disagree on which one is "the" Hausdorff series;
    both are provided and pinned by tests.  :math:`\operatorname{ad}_A^k B` is the Lyndon-basis
    element of the word :math:`A^kB`, so the coordinates need no solving.  ``degree ≤ 64``, the
    package's largest degree (the estimated work, :math:`k^2` per term, is far inside the budget).

    Examples
    --------
    >>> hausdorff(3).to_text()
    'B - [A,B] + 1/2 [A,[A,B]]'
    >>> hausdorff(3, form="+A").to_text()
    'B + [A,B] + 1/2 [A,[A,B]]'
    """
    degree = check_budget("degree", check_degree(degree), "hausdorff", hausdorff_seconds)
    if form not in ("-A", "+A"):
        raise ValueError(f"form must be '-A' (e^(-A) B e^A) or '+A' (e^A B e^(-A)), got {form!r}")
    sign = -1 if form == "-A" else 1
    coordinates = {(0,) * k + (1,): Fraction(sign**k, math.factorial(k)) for k in range(degree)}
    return LieSeries("hausdorff" if form == "-A" else "hausdorff+", 2, degree, coordinates)
