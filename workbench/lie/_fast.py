r"""Vectorised exact kernels for the Lie-series engine (numpy integer arithmetic).

Two steps dominate the cost of a series in the Lyndon basis, and both are done here for all Lyndon
words of one degree at once:

1. **Word coefficients** of :math:`\log(e^{X_0} e^{X_1} \cdots e^{X_{r-1}})` on Lyndon words
   (Goldberg's segmentation sum).  Scaling by :math:`j!` makes the dynamic programme integral:
   :math:`V_k[j] = \sum_{i<j} V_{k-1}[i]\binom{j}{i}\binom{j-i}{c_0,\dots,c_{r-1}}` over blocks
   :math:`u_{i..j}` that are nondecreasing (of the form :math:`X_0^{c_0}\cdots X_{r-1}^{c_{r-1}}`), and the
   coefficient is :math:`\frac{1}{n!}\sum_k \frac{(-1)^{k+1}}{k} V_k[n]`.
2. **The unitriangular matrix** :math:`T_{uw} = (P_w, u)` over Lyndon words :math:`u, w` of degree
   :math:`n`, by the bracket recursion on standard factorisations evaluated at every offset of every
   target word: :math:`(P_{xy}, s) = (P_x, s_{<|x|})(P_y, s_{\ge|x|}) - (P_y, s_{<|y|})(P_x, s_{\ge|y|})`.
   Its entries are integers (bracket expansions have integer coefficients).

Lyndon coordinates then follow from an exact forward substitution with Python integers over the
common denominator :math:`n!\,\operatorname{lcm}(1..n)`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import scipy.sparse

from workbench.lie._bases import multidegree
from workbench.lie._words import Word, lyndon_words, standard_factorization

__all__ = [
    "bch_even_degree",
    "increasing_product_log_coefficients",
    "lyndon_coordinates_from_values",
    "lyndon_triangular_blocks",
]

CHUNK = 512  # target words per vectorised batch (bounds the level arrays to ~100 MB at degree 19)


@cache
def _word_array(n_letters: int, degree: int) -> np.ndarray:
    words = lyndon_words(n_letters, degree)
    return np.array(words, dtype=np.int64).reshape(len(words), degree)


@cache
def _run_polynomial(counts: tuple[int, ...]) -> tuple[int, ...]:
    # s!·Σ_{segmentations of X_0^{c_0}⋯X_{r−1}^{c_{r−1}} into k blocks} Π_blocks 1/Π c_b!, as the
    # coefficients of x^k (integers: each term is a multinomial coefficient).
    s = sum(counts)
    word = [letter for letter, c in enumerate(counts) for _ in range(c)]
    ways = [[Fraction(0)] * (s + 1) for _ in range(s + 1)]  # ways[j][k]: prefix of length j in k blocks
    ways[0][0] = Fraction(1)
    for j in range(1, s + 1):
        for i in range(j):
            block = word[i:j]
            weight = Fraction(1, math.prod(math.factorial(block.count(a)) for a in set(block)))
            for k in range(i + 1):
                if ways[i][k]:
                    ways[j][k + 1] += ways[i][k] * weight
    return tuple(int(c * math.factorial(s)) for c in ways[s])


def _multiply(p: list[int], q: tuple[int, ...]) -> list[int]:
    out = [0] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        if a:
            for j, b in enumerate(q):
                if b:
                    out[i + j] += a * b
    return out


def increasing_product_log_coefficients(n_letters: int, degree: int) -> list[Fraction]:
    r"""Coefficients of the Lyndon words of ``degree`` in ``log(e^{X_0} ⋯ e^{X_{r-1}})``, in Lyndon order.

    A block of a segmentation has a nonzero coefficient in :math:`e^{X_0}\cdots e^{X_{r-1}} - 1` only if
    it is nondecreasing, so blocks never cross a descent of the word: the segmentations of ``u`` are
    independent segmentations of its maximal nondecreasing runs, and the generating polynomial in the
    number of blocks is the product of one polynomial per run.  The coefficient therefore depends only
    on the *multiset* of the runs' letter counts; words are grouped by it (7,510 groups for the 52,377
    Lyndon words of degree 20) and each group costs one product of small integer polynomials.

    Examples
    --------
    >>> [str(c) for c in increasing_product_log_coefficients(2, 3)]  # AAB, ABB in log(e^A e^B)
    ['1/12', '1/12']
    """
    words = _word_array(n_letters, degree)
    m, n = words.shape
    run_id = np.zeros((m, n), dtype=np.int64)
    run_id[:, 1:] = np.cumsum(words[:, :-1] > words[:, 1:], axis=1)
    radix = n + 1  # a run's letter counts, as one mixed-radix integer per (word, run)
    code = np.zeros(m * n, dtype=np.int64)
    np.add.at(code, (np.arange(m)[:, None] * n + run_id).ravel(), (radix**words).ravel())
    keys, inverse = np.unique(np.sort(code.reshape(m, n), axis=1), axis=0, return_inverse=True)
    lcm = math.lcm(*range(1, n + 1))
    by_key = []
    for key in keys.tolist():
        poly, denominator = [1], 1
        for c in key:
            if c:
                counts = tuple((c // radix**a) % radix for a in range(n_letters))
                poly = _multiply(poly, _run_polynomial(counts))
                denominator *= math.factorial(sum(counts))
        numerator = sum((1 if k % 2 else -1) * (lcm // k) * a for k, a in enumerate(poly) if k and a)
        by_key.append(Fraction(numerator, lcm * denominator))  # Σ_k (−1)^{k+1}/k · [x^k] Π_runs
    return [by_key[i] for i in inverse.ravel().tolist()]


def bch_even_degree(lower: dict[Word, Fraction], degree: int) -> dict[Word, Fraction]:
    r"""The degree-``degree`` (even) BCH terms from the lower-degree ones, without any word coefficients.

    :math:`Z = \log(e^A e^B)` and the symmetric series :math:`W = \log(e^{A/2} e^B e^{A/2})` are
    conjugate, :math:`e^W = e^{-A/2} e^Z e^{A/2}`, so :math:`W = e^{-\operatorname{ad}_{A/2}} Z`; and
    :math:`W` has no even-degree terms (:math:`W(-A,-B) = -W(A,B)`, from inverting the palindromic
    product).  Hence for even :math:`n`

    .. math:: Z_n = -\sum_{k=1}^{n-1} \frac{(-1/2)^k}{k!}\,\operatorname{ad}_A^k Z_{n-k},

    and in the Lyndon basis :math:`\operatorname{ad}_A P_w = P_{Aw}` for every Lyndon :math:`w \ne A`
    (``Aw`` is Lyndon with standard factorisation ``(A, w)``), so the right side is a relabelling.

    ``lower`` holds the Lyndon coordinates of :math:`Z_1, …, Z_{n-1}` (words over ``{0, 1}``).

    Examples
    --------
    >>> from fractions import Fraction
    >>> bch_even_degree({(0,): Fraction(1), (1,): Fraction(1)}, 2)  # ½[A,B]
    {(0, 1): Fraction(1, 2)}
    """
    out: dict[Word, Fraction] = {}
    for word, c in lower.items():
        k = degree - len(word)
        if k >= 1 and word != (0,):
            key = (0,) * k + word
            out[key] = out.get(key, Fraction(0)) - Fraction((-1) ** k, 2**k * math.factorial(k)) * c
    return {w: c for w, c in out.items() if c}


@cache
def _factor_plan(n_letters: int, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # For every Lyndon word of this length (≥ 2): the length of the left factor of its standard
    # factorisation and the positions of both factors among the Lyndon words of their own lengths.
    factors = [standard_factorization(v) for v in lyndon_words(n_letters, length)]
    left_len = np.array([len(x) for x, _ in factors])
    left_pos = np.array([_position(n_letters, x) for x, _ in factors])
    right_pos = np.array([_position(n_letters, y) for _, y in factors])
    return left_len, left_pos, right_pos


@cache
def lyndon_triangular_blocks(n_letters: int, degree: int) -> tuple[tuple[np.ndarray, scipy.sparse.csr_array], ...]:
    """``T[u, w] = (P_w, u)`` over the Lyndon words of ``degree``, as its diagonal blocks.

    Returns ``(members, block)`` pairs: ``members`` are positions in Lyndon order of the words of one
    multidegree, and ``block[a, b] = (P_{members[b]}, members[a])``, a sparse (CSR, int32) lower
    unitriangular matrix.  int32 is exact: a bracket monomial of degree ``n`` has coefficients summing
    to at most ``2^{n−1}`` in absolute value.

    Only the Lyndon words reachable from the block's members by standard factorisation are carried at
    each level (at degree 19 that halves the work against all words of fitting multidegree).

    Examples
    --------
    >>> [block.toarray().tolist() for _, block in lyndon_triangular_blocks(2, 4)]  # AAAB | AABB | ABBB
    [[[1]], [[1]], [[1]]]
    >>> lyndon_triangular_blocks(2, 5)[1][1].toarray().tolist()  # rows AAABB, AABAB: (P_AAABB, AABAB) = −2
    [[1, 0], [-2, 1]]
    """
    words = lyndon_words(n_letters, degree)
    n = degree
    targets_all = _word_array(n_letters, degree)
    plans = {ell: _factor_plan(n_letters, ell) for ell in range(2, n + 1)}
    letters = np.array([v[0] for v in lyndon_words(n_letters, 1)])
    blocks: dict[tuple[int, ...], list[int]] = {}
    for k, w in enumerate(words):
        blocks.setdefault(multidegree(w, n_letters), []).append(k)
    result = []
    for members in blocks.values():
        # Top-down: the words each level must carry, closed under standard factorisation.
        needed = {ell: [] for ell in range(1, n + 1)}
        needed[n] = [np.array(members)]
        for ell in range(n, 1, -1):
            here = needed[ell] = np.unique(np.concatenate(needed[ell])) if needed[ell] else np.zeros(0, int)
            left_len, left_pos, right_pos = plans[ell]
            lengths = left_len[here]
            for p in np.unique(lengths):
                chosen = here[lengths == p]
                needed[int(p)].append(left_pos[chosen])
                needed[ell - int(p)].append(right_pos[chosen])
        needed[1] = np.unique(np.concatenate(needed[1])) if needed[1] else np.zeros(0, int)
        local = {}
        for ell in range(1, n + 1):
            local[ell] = np.full(len(lyndon_words(n_letters, ell)), -1)
            local[ell][needed[ell]] = np.arange(len(needed[ell]))
        plan = {}
        for ell in range(2, n + 1):
            left_len, left_pos, right_pos = plans[ell]
            lengths = left_len[needed[ell]]
            plan[ell] = []
            for p in np.unique(lengths):
                out = np.flatnonzero(lengths == p)
                chosen = needed[ell][out]
                p = int(p)
                plan[ell].append((p, out, local[p][left_pos[chosen]], local[ell - p][right_pos[chosen]]))
        columns = local[n][np.array(members)]
        first_letters = letters[needed[1]]
        pieces = []
        # Layout [word v, offset, target]: gathering a factor's rows copies contiguous (offset × target) slabs.
        for start in range(0, len(members), CHUNK):
            rows = members[start : start + CHUNK]
            chunk = targets_all[rows].T  # [position, target]
            levels = {1: (first_letters[:, None, None] == chunk[None, :, :]).astype(np.int32)}
            for ell in range(2, n + 1):
                span = n - ell + 1
                level = np.empty((len(needed[ell]), span, len(rows)), dtype=np.int32)
                for p, out, xs, ys in plan[ell]:
                    q = ell - p
                    fx, fy = levels[p][xs], levels[q][ys]
                    level[out] = fx[:, 0:span] * fy[:, p : p + span] - fy[:, 0:span] * fx[:, q : q + span]
                levels[ell] = level
            pieces.append(scipy.sparse.csr_array(levels[n][columns, 0, :].T))
        result.append((np.array(members), scipy.sparse.vstack(pieces, format="csr")))
    return tuple(result)


@cache
def _positions(n_letters: int, length: int) -> dict[Word, int]:
    return {w: k for k, w in enumerate(lyndon_words(n_letters, length))}


def _position(n_letters: int, word: Word) -> int:
    return _positions(n_letters, len(word))[word]


def lyndon_coordinates_from_values(n_letters: int, degree: int, values: list[Fraction]) -> dict[Word, Fraction]:
    """Solve ``T c = z`` exactly for the Lyndon coordinates ``c`` of a Lie polynomial of one degree.

    ``values`` are its coefficients on the Lyndon words of ``degree`` (Lyndon order).  Each diagonal
    block of ``T`` is lower unitriangular, so forward substitution with Python integers over the common
    denominator is exact.

    Examples
    --------
    >>> from fractions import Fraction
    >>> lyndon_coordinates_from_values(2, 2, [Fraction(1, 2)])  # ½ AB + … = ½ [A,B]
    {(0, 1): Fraction(1, 2)}
    """
    words = lyndon_words(n_letters, degree)
    if not any(values):
        return {}
    denominator = math.lcm(*(v.denominator for v in values))
    scaled = [v.numerator * (denominator // v.denominator) for v in values]
    coordinates: dict[Word, Fraction] = {}
    for members, block in lyndon_triangular_blocks(n_letters, degree):
        solution = [0] * len(members)  # Python integers: exact, unbounded
        indptr, indices, data = block.indptr, block.indices, block.data.tolist()
        for a, position in enumerate(members.tolist()):
            total = scaled[position]
            for k in range(indptr[a], indptr[a + 1]):
                b = indices[k]
                if b < a and solution[b]:
                    total -= data[k] * solution[b]
            solution[a] = total  # block[a, a] = 1
            if total:
                coordinates[words[position]] = Fraction(total, denominator)
    return coordinates
