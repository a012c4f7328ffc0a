"""Words over an ordered alphabet and Lyndon words.

A word is a tuple of letter indices ``0, 1, 2, ...`` (displayed ``A, B, C, ...``); the alphabet
order is the index order, so ``A < B < C`` and words compare lexicographically as tuples (a proper
prefix is smaller).
"""

from __future__ import annotations

from functools import cache

from workbench.lie._free import NAMES, Word, multidegree

__all__ = [
    "format_word",
    "is_lyndon",
    "lyndon_factorization",
    "lyndon_words",
    "standard_factorization",
    "witt_dimension",
]


def format_word(word: Word, names: str = NAMES) -> str:
    """Return ``word`` with letters named, e.g. ``(0, 0, 1) -> 'AAB'``.

    Examples
    --------
    >>> format_word((0, 1, 1))
    'ABB'
    """
    return "".join(names[i] for i in word)


def is_lyndon(word: Word) -> bool:
    """Whether ``word`` is strictly smaller than each of its proper rotations (a Lyndon word).

    Equivalently, its Chen–Fox–Lyndon factorisation has a single factor (checked in linear time).

    Examples
    --------
    >>> is_lyndon((0, 0, 1)), is_lyndon((0, 1, 0)), is_lyndon((0, 1, 0, 1))
    (True, False, False)
    """
    return len(word) > 0 and len(lyndon_factorization(word)) == 1


def lyndon_factorization(word: Word) -> list[Word]:
    """Chen–Fox–Lyndon factorisation ``w = l₁ l₂ … l_k`` with ``l₁ ≥ l₂ ≥ … ≥ l_k`` Lyndon.

    Duval's algorithm (Duval 1983), linear time.

    Examples
    --------
    >>> [format_word(f) for f in lyndon_factorization((1, 0, 1, 0, 0, 1))]
    ['B', 'AB', 'AAB']
    """
    factors, i, n = [], 0, len(word)
    while i < n:
        j, k = i + 1, i
        while j < n and word[k] <= word[j]:
            k = i if word[k] < word[j] else k + 1
            j += 1
        while i <= k:
            factors.append(word[i : i + j - k])
            i += j - k
    return factors


@cache
def lyndon_words(n_letters: int, degree: int) -> tuple[Word, ...]:
    """All Lyndon words of length ``degree`` over ``n_letters`` letters, in lexicographic order.

    Duval's generation algorithm (each word from its predecessor), keeping those of exact length.

    Examples
    --------
    >>> [format_word(w) for w in lyndon_words(2, 4)]
    ['AAAB', 'AABB', 'ABBB']
    """
    if n_letters < 1 or degree < 1:
        raise ValueError(f"n_letters and degree must be positive integers, got n_letters={n_letters}, degree={degree}")
    found = []
    w = [0]
    while w:
        if len(w) == degree:
            found.append(tuple(w))
        m = len(w)
        while len(w) < degree:
            w.append(w[len(w) - m])
        while w and w[-1] == n_letters - 1:
            w.pop()
        if w:
            w[-1] += 1
    return tuple(found)


@cache
def standard_factorization(word: Word) -> tuple[Word, Word]:
    """Standard factorisation ``w = uv`` of a Lyndon word: ``v`` is its longest proper Lyndon suffix.

    Then ``u`` is Lyndon too and ``u < v``; the Lyndon basis element is ``P_w = [P_u, P_v]``.

    Examples
    --------
    >>> [format_word(x) for x in standard_factorization((0, 0, 1, 0, 1))]  # ABAB is not Lyndon
    ['AAB', 'AB']
    >>> [format_word(x) for x in standard_factorization((0, 1, 1))]
    ['AB', 'B']
    """
    if len(word) < 2 or not is_lyndon(word):
        raise ValueError(f"word must be a Lyndon word of length ≥ 2, got {format_word(word)!r}")
    # The longest proper Lyndon suffix of a Lyndon word is its lexicographically smallest proper suffix.
    start = min(range(1, len(word)), key=lambda i: word[i:])
    return word[:start], word[start:]


@cache
def multidegree_blocks(n_letters: int, degree: int) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """The Lyndon words of ``degree`` grouped by multidegree: ``(multidegree, positions in Lyndon order)``.

    Blocks come in the order of their first word; the bases and the triangular matrix of the engine are
    block diagonal in this grouping.

    Examples
    --------
    >>> multidegree_blocks(2, 4)  # AAAB | AABB | ABBB
    (((3, 1), (0,)), ((2, 2), (1,)), ((1, 3), (2,)))
    """
    blocks: dict[tuple[int, ...], list[int]] = {}
    for k, w in enumerate(lyndon_words(n_letters, degree)):
        blocks.setdefault(multidegree(w, n_letters), []).append(k)
    return tuple((key, tuple(members)) for key, members in blocks.items())


def mobius(n: int) -> int:
    """Möbius function μ(n).

    Examples
    --------
    >>> [mobius(n) for n in range(1, 11)]
    [1, -1, -1, 0, -1, 1, -1, 0, 0, 1]
    """
    result, p, m = 1, 2, n
    while p * p <= m:
        if m % p == 0:
            m //= p
            if m % p == 0:
                return 0
            result = -result
        p += 1
    return -result if m > 1 else result


def witt_dimension(n_letters: int, degree: int) -> int:
    r"""Dimension of the degree-``n`` part of the free Lie algebra on ``r`` letters (Witt's formula).

    .. math:: \dim L_n = \frac1n \sum_{d \mid n} \mu(d)\, r^{n/d},

    which is also the number of Lyndon words of length ``n`` (OEIS A001037 for ``r = 2``).

    Examples
    --------
    >>> [witt_dimension(2, n) for n in range(1, 11)]
    [2, 1, 2, 3, 6, 9, 18, 30, 56, 99]
    """
    total = sum(mobius(d) * n_letters ** (degree // d) for d in range(1, degree + 1) if degree % d == 0)
    return total // degree
