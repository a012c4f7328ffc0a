r"""One degree of a Lie series as exact integers, and the compiled kernel's path to it (no numpy, no Fractions).

A :class:`Level` is the engine's working form of one degree: the positions (in Lyndon order) of the nonzero
Lyndon-basis coordinates, their integer numerators and one denominator.  For
:math:`\log(e^{X_0} \cdots e^{X_{r-1}})` the compiled kernel makes a whole level
(:func:`kernel_increasing_log_level`): Goldberg's coefficients on the Lyndon words as 128-bit integers over one
denominator, the multidegree blocks, their unitriangular solves (on threads) and the reduction by the gcd, with
Python objects only for the level's nonzero numerators.  For two letters the even degrees are relabelled from
the lower ones (:func:`bch_even_level`).  Where the kernel is not built, or a number does not fit its 128 bits,
the caller takes :mod:`workbench.lie._fast`'s numpy and Python-integer path, which gives the same levels.

Nothing here imports numpy: ``from workbench.lie import bch`` costs the interpreter, this package's pure-Python
modules and the kernel (:func:`workbench.lie.bch`'s whole-process figures in ``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import math
import os
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from workbench.lie._free import Word
from workbench.lie._kernel import kernel as _kernel  # None: every level from workbench.lie._fast's Python path
from workbench.lie._words import lyndon_word_bytes, lyndon_words

# Package-internal: a level is the engine's working form; the public results are LieSeries.
__all__ = []

#: The kernel's limits: node values are int32 (|(P_v, s)| ≤ 2^(n−1)), and a word is one 64-bit code with
#: ⌈log₂(letters + 1)⌉ bits per letter.
KERNEL_MAX_DEGREE = 31
KERNEL_MAX_LETTERS = {d: min(2 ** (64 // d) - 1, 255) for d in range(1, KERNEL_MAX_DEGREE + 1)}

#: Degrees with at least this many Lyndon words solve their multidegree blocks on several threads.
PARALLEL_FROM = 20_000


def kernel_available() -> bool:
    """Whether the compiled kernel is built (``pip install`` builds it; without it the Python path is used)."""
    return _kernel is not None


def solver_threads() -> int:
    """Threads the kernel's blocks may use: the CPUs this process may run on, at most ``OMP_NUM_THREADS``."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    cap = os.environ.get("OMP_NUM_THREADS", "").strip()
    return max(1, min(cpus, int(cap))) if cap.isdigit() and int(cap) > 0 else cpus


def compact(values: list[int]):
    """``values`` as an ``array('q')`` (8 bytes each) when every one fits in 64 bits, else the list itself."""
    try:
        return array("q", values)
    except OverflowError:
        return values


@dataclass(frozen=True)
class Level:
    """One degree of a Lie series in the Lyndon basis, held as exact integers (the engine's working form).

    ``positions`` (an increasing ``array('q')``) index ``lyndon_words(n_letters, degree)``; the coordinate of the
    word at ``positions[i]`` is ``numerators[i] / denominator``: ints, none zero, the fraction reduced (the gcd of
    the denominator and all numerators is 1), held as an ``array('q')`` where they fit in 64 bits (every BCH
    level of the package's degrees does) and as a list of Python ints otherwise.  :meth:`coordinates` builds the
    ``{word: Fraction}`` dict.
    """

    degree: int
    positions: array
    numerators: Sequence[int]
    denominator: int

    @classmethod
    def from_lists(cls, degree: int, positions: list[int], numerators: list[int], denominator: int) -> Level:
        """The level of ``numerators[i] / denominator`` at ``positions[i]`` (increasing; zeros dropped, reduced)."""
        if not all(numerators):
            kept = [i for i, v in enumerate(numerators) if v]
            positions, numerators = [positions[i] for i in kept], [numerators[i] for i in kept]
        g = math.gcd(denominator, *numerators)
        if g != 1:
            numerators = [v // g for v in numerators]
        return cls(degree, array("q", positions), compact(numerators), denominator // g)

    @classmethod
    def from_solution(cls, degree: int, solution, denominator: int) -> Level:
        """The level of a numerator for every Lyndon word of the degree (a sequence of ints) over ``denominator``."""
        values = [int(v) for v in solution]
        positions = [k for k, v in enumerate(values) if v]
        return cls.from_lists(degree, positions, [values[k] for k in positions], denominator)

    @classmethod
    def from_coordinates(cls, n_letters: int, degree: int, coordinates: dict[Word, Fraction]) -> Level:
        """The level of the degree-``degree`` terms of a ``{Lyndon word: Fraction}`` dict."""
        index = {w: k for k, w in enumerate(lyndon_words(n_letters, degree))}
        terms = sorted((index[w], c) for w, c in coordinates.items() if len(w) == degree and c)
        denominator = math.lcm(*(c.denominator for _, c in terms))
        scaled = [c.numerator * (denominator // c.denominator) for _, c in terms]
        return cls.from_lists(degree, [k for k, _ in terms], scaled, denominator)

    def coordinates(self, n_letters: int) -> dict[Word, Fraction]:
        """The ``{Lyndon word: Fraction}`` dict of the level's terms (keys only for the nonzero ones)."""
        words, n, d = lyndon_word_bytes(n_letters, self.degree), self.degree, self.denominator
        pairs = zip(self.positions, self.numerators, strict=True)
        return {tuple(words[k * n : k * n + n]): Fraction(v, d) for k, v in pairs}


def increasing_log_rhs(n_letters: int, degree: int) -> tuple[array, array, int] | None:
    """Goldberg's coefficients of the Lyndon words of ``degree`` in ``log(e^{X_0} ⋯ e^{X_{r-1}})``, by the kernel.

    Returns ``(hi, lo, denominator)``: 128-bit numerators ``hi·2⁶⁴ + lo`` (``array('q')``, ``array('Q')``) in
    Lyndon order over one denominator, the fraction reduced; the same numbers as the Python run groups of
    :func:`workbench.lie._fast.increasing_product_log_numerators`.  The kernel runs the segmentation sum of each
    word as the product of its runs' integer polynomials, shared with the previous word's runs.  ``None`` where
    the kernel is not built or a number does not fit in 128 bits.
    """
    if _kernel is None or degree > KERNEL_MAX_DEGREE or n_letters > 255:
        return None
    words = lyndon_word_bytes(n_letters, degree)
    m = len(words) // degree
    hi, lo = array("q", bytes(8 * m)), array("Q", bytes(8 * m))
    status, denominator_hi, denominator_lo = _kernel.goldberg_rhs(degree, n_letters, words, hi, lo)
    if status == 1:
        raise MemoryError(f"the Lyndon kernel ran out of memory at degree {degree}")
    if status:
        return None
    return hi, lo, (denominator_hi << 64) + denominator_lo


def kernel_increasing_log_level(n_letters: int, degree: int) -> Level | None:
    r"""Degree ``degree`` of :math:`\log(e^{X_0} \cdots e^{X_{r-1}})` made by the kernel alone (``None``: not here).

    The right sides (:func:`increasing_log_rhs`), the multidegree blocks (largest first), their solves (the blocks
    shared round-robin between :func:`solver_threads` threads from :data:`PARALLEL_FROM` words on) and the reduced
    nonzero terms all stay in the kernel's buffers.  ``None`` where the kernel is not built, the degree or alphabet
    is past its limits, or a 128-bit overflow was reported (the caller then solves in Python integers).
    """
    if _kernel is None or degree > KERNEL_MAX_DEGREE or n_letters > KERNEL_MAX_LETTERS.get(degree, 0):
        return None
    rhs = increasing_log_rhs(n_letters, degree)
    if rhs is None:
        return None
    hi, lo, denominator = rhs
    words = lyndon_word_bytes(n_letters, degree)
    m = len(hi)
    order, starts = _kernel.level_blocks(degree, n_letters, words)
    out_hi, out_lo = array("q", bytes(8 * m)), array("Q", bytes(8 * m))
    parts = min(solver_threads(), len(starts) // 4 - 1) if m >= PARALLEL_FROM else 1
    statuses = [0] * max(parts, 1)

    def solve(part: int) -> None:  # the kernel releases the GIL: the parts run in parallel
        statuses[part] = _kernel.solve_level(
            degree, n_letters, words, hi, lo, out_hi, out_lo, order, starts, part, parts
        )

    if parts > 1:
        import threading

        helpers = [threading.Thread(target=solve, args=(part,)) for part in range(1, parts)]
        for thread in helpers:
            thread.start()
        solve(0)
        for thread in helpers:
            thread.join()
    else:
        solve(0)
    if 1 in statuses:
        raise MemoryError(f"the Lyndon kernel ran out of memory at degree {degree}")
    if any(statuses):  # status 2: a 128-bit overflow; the Python-integer solve is exact at any size
        return None
    positions, numerators, reduced = _kernel.level_terms(out_hi, out_lo, denominator >> 64, denominator & (2**64 - 1))
    return Level(
        degree, array("q", positions), array("q", numerators) if isinstance(numerators, bytes) else numerators, reduced
    )


def bch_even_level(lower: list[Level], degree: int) -> Level:
    r"""The even degree ``degree`` of :math:`Z = \log(e^A e^B)` from ``lower[d − 1]`` = :math:`Z_d`, ``d < degree``.

    :math:`Z_n = -\sum_{k=1}^{n-1} \frac{(-1/2)^k}{k!}\,\operatorname{ad}_A^k Z_{n-k}` for even :math:`n`
    (:func:`workbench.lie.bch_even_degree` gives the reason), and :math:`\operatorname{ad}_A P_w = P_{Aw}`
    for every Lyndon :math:`w \ne A`: a relabelling of the lower terms to the words :math:`A^k w`, found
    among the Lyndon words of ``degree`` (by the kernel's binary search where it is built); exact integers
    over one denominator.
    """
    parts = []
    for level in lower:
        positions, numerators = level.positions, level.numerators
        if level.degree == 1:  # ad_A A = 0: the word A (position 0) is not relabelled
            kept = [i for i, k in enumerate(positions) if k != 0]
            positions, numerators = array("q", [positions[i] for i in kept]), [numerators[i] for i in kept]
        if len(positions):
            k = degree - level.degree
            targets = _prefixed_positions(degree, level.degree, positions)
            parts.append((k, targets, numerators, level.denominator * 2**k * math.factorial(k)))
    if not parts:
        return Level(degree, array("q"), array("q"), 1)
    denominator = math.lcm(*(d for *_, d in parts))
    solution = [0] * (len(lyndon_word_bytes(2, degree)) // degree)  # dense: a pointer per word until filled
    for k, targets, numerators, d in parts:
        scale = (denominator // d) * (1 if k % 2 else -1)  # −(−1)^k · (denominator / d)
        for target, v in zip(targets, numerators, strict=True):
            solution[target] += scale * v
    positions = [k for k, v in enumerate(solution) if v]
    numerators = [solution[k] for k in positions]
    del solution
    return Level.from_lists(degree, positions, numerators, denominator)


def _prefixed_positions(degree: int, lower_degree: int, positions: array) -> Sequence[int]:
    # The positions of A^k w (k = degree − |w|) among the Lyndon words of degree, for the lower words w at positions.
    if _kernel is not None:
        found = array("q")
        found.frombytes(
            _kernel.prefixed_positions(
                degree, lyndon_word_bytes(2, degree), lower_degree, lyndon_word_bytes(2, lower_degree), positions, 0
            )
        )
        if -1 in found:  # pragma: no cover - A^k w is Lyndon for every Lyndon w ≠ A
            raise AssertionError(f"a relabelled word of degree {lower_degree} is not Lyndon at degree {degree}")
        return found
    index = {w: k for k, w in enumerate(lyndon_words(2, degree))}
    lower = lyndon_words(2, lower_degree)
    prefix = (0,) * (degree - lower_degree)
    return [index[prefix + lower[k]] for k in positions]
