"""Words over an ordered alphabet and Lyndon words.

A word is a tuple of letter indices ``0, 1, 2, ...`` (displayed ``A, B, C, ...``); the alphabet
order is the index order, so ``A < B < C`` and words compare lexicographically as tuples (a proper
prefix is smaller).
"""

from __future__ import annotations

from functools import cache

from workbench.lie._budget import MAX_WITT_BITS, check_budget, lyndon_count, lyndon_words_seconds, witt_bits
from workbench.lie._free import NAMES, Word, check_integer, check_word
from workbench.lie._kernel import kernel as _kernel  # None: Duval's generation in Python

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
    if not isinstance(names, str) or not names:
        raise TypeError(f"names must be a nonempty string of letter names, got {names!r}")
    return "".join(names[i] for i in check_word("word", word, len(names)))


def is_lyndon(word: Word) -> bool:
    """Whether ``word`` is strictly smaller than each of its proper rotations (a Lyndon word).

    Equivalently, its Chen–Fox–Lyndon factorisation has a single factor (checked in linear time).

    Examples
    --------
    >>> is_lyndon((0, 0, 1)), is_lyndon((0, 1, 0)), is_lyndon((0, 1, 0, 1))
    (True, False, False)
    """
    word = check_word("word", word)
    return len(word) > 0 and len(_duval(word)) == 1


def lyndon_factorization(word: Word) -> list[Word]:
    """Chen–Fox–Lyndon factorisation ``w = l₁ l₂ … l_k`` with ``l₁ ≥ l₂ ≥ … ≥ l_k`` Lyndon.

    Duval's algorithm (Duval 1983), linear time.

    Examples
    --------
    >>> [format_word(f) for f in lyndon_factorization((1, 0, 1, 0, 0, 1))]
    ['B', 'AB', 'AAB']
    """
    return _duval(check_word("word", word))


def _duval(word: Word) -> list[Word]:
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


def lyndon_words(n_letters: int, degree: int) -> tuple[Word, ...]:
    r"""All Lyndon words of length ``degree`` over ``n_letters`` letters, in lexicographic order.

    Duval's generation algorithm (each word from its predecessor), keeping those of exact length; there
    are :math:`\frac1n \sum_{d \mid n} \mu(d) r^{n/d}` of them (:func:`witt_dimension`).

    The work (every Lyndon word of length ≤ ``degree`` is visited, the result is kept in memory) is
    estimated first and refused past the package's budget: for two letters ``degree ≤ 26``, for three
    ``≤ 16``, for 26 letters ``≤ 5`` (see :mod:`workbench.lie._budget`).

    Examples
    --------
    >>> [format_word(w) for w in lyndon_words(2, 4)]
    ['AAAB', 'AABB', 'ABBB']
    >>> len(lyndon_words(2, 10)) == witt_dimension(2, 10) == 99
    True
    """
    n_letters = check_integer("n_letters", n_letters, 1)
    degree = check_integer("degree", degree, 1)
    check_budget("degree", degree, f"lyndon_words on n_letters={n_letters} letters", lyndon_words_seconds, n_letters)
    return _lyndon_words(n_letters, degree)


@cache
def _lyndon_words(n_letters: int, degree: int) -> tuple[Word, ...]:
    if n_letters <= 256:
        words = lyndon_word_bytes(n_letters, degree)
        return tuple(tuple(words[k : k + degree]) for k in range(0, len(words), degree))
    return tuple(_duval_generation(n_letters, degree))


@cache
def lyndon_word_bytes(n_letters: int, degree: int) -> bytes:
    """The Lyndon words of ``degree`` (≤ 256 letters), ``degree`` bytes each, in order (unchecked; no numpy)."""
    if _kernel is not None and n_letters <= 255 and degree <= 255:
        return _kernel.lyndon_words(n_letters, degree, lyndon_count(n_letters, degree))
    return bytes(letter for word in _duval_generation(n_letters, degree) for letter in word)


@cache
def lyndon_word_array(n_letters: int, degree: int):
    """The Lyndon words of ``degree`` as a read-only ``uint8`` array ``[count, degree]`` (unchecked; the engine's)."""
    import numpy as np

    if n_letters <= 256:
        return np.frombuffer(lyndon_word_bytes(n_letters, degree), dtype=np.uint8).reshape(-1, degree)
    words = np.array(_duval_generation(n_letters, degree), dtype=np.int64).reshape(-1, degree)
    words.flags.writeable = False
    return words


def _duval_generation(n_letters: int, degree: int) -> list[Word]:
    # Duval's generation: each prenecklace from its predecessor, keeping the words of exact length.
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
    return found


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
    word = check_word("word", word)
    if len(word) < 2 or len(_duval(word)) != 1:
        shown = "".join(NAMES[i] for i in word) if all(i < len(NAMES) for i in word) else word
        raise ValueError(f"word must be a Lyndon word of length ≥ 2, got {shown!r}")
    return standard_factorization_unchecked(word)


@cache
def standard_factorization_unchecked(word: Word) -> tuple[Word, Word]:
    """The unchecked core of :func:`standard_factorization` (Lyndon words built by the package)."""
    # The longest proper Lyndon suffix of a Lyndon word is its lexicographically smallest proper suffix.
    start = min(range(1, len(word)), key=lambda i: word[i:])
    return word[:start], word[start:]


#: Words are coded as integers (:func:`word_codes`) only while ``(n_letters + 1)^degree`` stays below this.
CODE_LIMIT = 2**62


def word_codes(words, n_letters: int):
    """Words of one length (rows of ``words``) as integers, base ``n_letters + 1`` with letter ``l`` as ``l + 1``.

    At one length the codes increase with the words; the caller keeps ``(n_letters + 1)^length < 2^63``.
    """
    import numpy as np

    base = n_letters + 1
    length = words.shape[1]
    return (words.astype(np.int64) + 1) @ (base ** np.arange(length - 1, -1, -1, dtype=np.int64))


@cache
def standard_factor_positions(n_letters: int, degree: int):
    """Standard factorisations ``w = uv`` of the Lyndon words of ``degree`` (≥ 2), vectorised (unchecked).

    Returns ``(len(u), position of u, position of v)`` per word, positions among the Lyndon words of their own
    lengths.  ``v`` is the smallest proper suffix: suffixes are compared as codes aligned at the left edge and
    padded with zeros (letters are coded from 1, so a proper prefix is smaller, as in the word order).
    """
    import numpy as np

    words = lyndon_word_array(n_letters, degree)
    base = n_letters + 1
    if base**degree >= CODE_LIMIT:  # past exact int64 codes: the word-by-word factorisation
        pairs = [standard_factorization_unchecked(w) for w in lyndon_words(n_letters, degree)]
        left_len = np.array([len(u) for u, _ in pairs], dtype=np.int64)
        index = {ell: {w: k for k, w in enumerate(lyndon_words(n_letters, ell))} for ell in range(1, degree)}
        left = np.array([index[len(u)][u] for u, _ in pairs], dtype=np.int64)
        right = np.array([index[len(v)][v] for _, v in pairs], dtype=np.int64)
        return left_len, left, right
    padded = np.stack(
        [word_codes(words[:, degree - q :], n_letters) * base ** (degree - q) for q in range(1, degree)], axis=1
    )
    right_len = 1 + np.argmin(padded, axis=1)
    left_len = degree - right_len
    left, right = np.empty(len(words), dtype=np.int64), np.empty(len(words), dtype=np.int64)
    for ell in np.unique(left_len).tolist():
        rows = np.flatnonzero(left_len == ell)
        for length, cut, out in ((ell, slice(0, ell), left), (degree - ell, slice(ell, degree), right)):
            codes = word_codes(lyndon_word_array(n_letters, length), n_letters)
            out[rows] = np.searchsorted(codes, word_codes(words[rows][:, cut], n_letters))
    return left_len, left, right


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
    import numpy as np

    words = lyndon_word_array(n_letters, degree)
    counts = np.stack([(words == letter).sum(axis=1) for letter in range(n_letters)], axis=1)
    keys, first, inverse = np.unique(counts, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")  # positions grouped by block, Lyndon order inside each
    bounds = np.cumsum(np.bincount(inverse, minlength=len(keys)))
    groups = np.split(order, bounds[:-1])
    return tuple(
        (tuple(keys[g].tolist()), tuple(groups[g].tolist())) for g in np.argsort(first)
    )  # blocks in the order of their first word


def witt_dimension(n_letters: int, degree: int) -> int:
    r"""Dimension of the degree-``n`` part of the free Lie algebra on ``r`` letters (Witt's formula).

    .. math:: \dim L_n = \frac1n \sum_{d \mid n} \mu(d)\, r^{n/d},

    which is also the number of Lyndon words of length ``n`` (OEIS A001037 for ``r = 2``).

    Examples
    --------
    >>> [witt_dimension(2, n) for n in range(1, 11)]
    [2, 1, 2, 3, 6, 9, 18, 30, 56, 99]

    The sum runs over the divisors of ``n`` (found in :math:`O(\sqrt n)` steps); its cost is the big
    integer :math:`r^n`, refused past ``MAX_WITT_BITS`` (:math:`2^{22}`) bits, e.g. ``degree ≤ 4,194,304``
    for two letters.
    """
    n_letters = check_integer("n_letters", n_letters, 1)
    degree = check_integer("degree", degree, 1)
    bits = witt_bits(n_letters, degree)
    if bits > MAX_WITT_BITS:
        raise ValueError(
            f"degree must keep n_letters**degree within {MAX_WITT_BITS} bits for witt_dimension "
            f"(degree <= {int(MAX_WITT_BITS / (bits / degree))} for n_letters={n_letters}), got {degree!r}: "
            f"{bits:.3g} bits"
        )
    return lyndon_count(n_letters, degree)
