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

from workbench.lie._bases import multidegree
from workbench.lie._words import Word, lyndon_words, standard_factorization

__all__ = ["increasing_product_log_coefficients", "lyndon_coordinates_from_values", "lyndon_triangular_blocks"]

INT64_SAFE_DEGREE = 17  # V_k[n] ≤ ordered Bell number × n!-scale; int64 holds it through n = 17
CHUNK = 256  # target words per vectorised batch (bounds memory to ~100 MB at degree 18)


@cache
def _word_array(n_letters: int, degree: int) -> np.ndarray:
    words = lyndon_words(n_letters, degree)
    return np.array(words, dtype=np.int64).reshape(len(words), degree)


def increasing_product_log_coefficients(n_letters: int, degree: int) -> list[Fraction]:
    """Coefficients of the Lyndon words of ``degree`` in ``log(e^{X_0} ⋯ e^{X_{r-1}})``, in Lyndon order.

    Examples
    --------
    >>> [str(c) for c in increasing_product_log_coefficients(2, 3)]  # AAB, ABB in log(e^A e^B)
    ['1/12', '1/12']
    """
    words = _word_array(n_letters, degree)
    m, n = words.shape
    dtype = np.int64 if n <= INT64_SAFE_DEGREE else object
    # descents[t] = 1 where u[t] > u[t+1]; a block u[i:j] is admissible iff it has no descent inside.
    descent = np.zeros((m, n), dtype=np.int64)
    descent[:, 1:] = np.cumsum(words[:, :-1] > words[:, 1:], axis=1)
    counts = np.zeros((m, n_letters, n + 1), dtype=np.int64)
    for letter in range(n_letters):
        counts[:, letter, 1:] = np.cumsum(words == letter, axis=1)
    factorial = [math.factorial(k) for k in range(n + 1)]
    factorial_arr = np.array(factorial, dtype=object if dtype is object else np.int64)

    # weight[i][j]: C(j, i) · multinomial(j − i; letter counts of u[i:j]) on admissible blocks, else 0.
    weight = {}
    for j in range(1, n + 1):
        for i in range(j):
            admissible = descent[:, j - 1] == descent[:, i]
            denominator = np.ones(m, dtype=dtype)
            for letter in range(n_letters):
                denominator = denominator * factorial_arr[counts[:, letter, j] - counts[:, letter, i]]
            w = (factorial[j] // factorial[i]) // denominator  # = C(j,i)·(j−i)!/Π c! (exact division)
            weight[i, j] = np.where(admissible, w, 0).astype(dtype)
    previous = np.zeros((n + 1, m), dtype=dtype)
    previous[0] = 1
    lcm = math.lcm(*range(1, n + 1))
    numerator = [0] * m
    for k in range(1, n + 1):
        current = np.zeros((n + 1, m), dtype=dtype)
        for j in range(k, n + 1):
            total = np.zeros(m, dtype=dtype)
            for i in range(k - 1, j):
                total = total + previous[i] * weight[i, j]
            current[j] = total
        sign = 1 if k % 2 else -1
        top = current[n]
        for index in range(m):
            value = int(top[index])
            if value:
                numerator[index] += sign * (lcm // k) * value
        previous = current
    denominator_total = lcm * factorial[n]
    return [Fraction(v, denominator_total) for v in numerator]


@cache
def lyndon_triangular_blocks(n_letters: int, degree: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """``T[u, w] = (P_w, u)`` over the Lyndon words of ``degree``, as its diagonal blocks.

    Returns ``(members, block)`` pairs: ``members`` are positions in Lyndon order of the words of one
    multidegree, and ``block[a, b] = (P_{members[b]}, members[a])`` (int32: a bracket monomial of degree
    ``n`` has coefficients summing to at most ``2^{n−1}`` in absolute value, so int32 is exact below
    degree 31).  Each block is lower unitriangular.

    Examples
    --------
    >>> [block.tolist() for _, block in lyndon_triangular_blocks(2, 4)]  # AAAB | AABB | ABBB
    [[[1]], [[1]], [[1]]]

    At level ``ℓ`` only
    the Lyndon words ``v`` whose letter counts fit inside a length-``ℓ`` factor of the block's targets
    are carried (``c(u) − (n − ℓ) ≤ c(v) ≤ c(u)``), a set closed under standard factorisation.
    """
    words = lyndon_words(n_letters, degree)
    n = degree
    targets_all = _word_array(n_letters, degree)
    # Global plan, once per degree: for every Lyndon word v of length ℓ ≥ 2, the length p of the left
    # factor of its standard factorisation and the positions of both factors in their own levels.
    by_length = {ell: lyndon_words(n_letters, ell) for ell in range(1, n + 1)}
    counts = {
        ell: np.array([multidegree(v, n_letters) for v in by_length[ell]]).reshape(-1, n_letters) for ell in by_length
    }
    left_len, left_pos, right_pos = {}, {}, {}
    for ell in range(2, n + 1):
        factors = [standard_factorization(v) for v in by_length[ell]]
        left_len[ell] = np.array([len(x) for x, _ in factors])
        left_pos[ell] = np.array([_position(n_letters, x) for x, _ in factors])
        right_pos[ell] = np.array([_position(n_letters, y) for _, y in factors])
    letters = np.array([v[0] for v in by_length[1]])
    blocks: dict[tuple[int, ...], list[int]] = {}
    for k, w in enumerate(words):
        blocks.setdefault(multidegree(w, n_letters), []).append(k)
    result = []
    for block, members in blocks.items():
        target_counts = np.array(block)
        allowed, local = {}, {}
        for ell in range(1, n + 1):
            c = counts[ell]
            allowed[ell] = np.flatnonzero(np.all((c <= target_counts) & (c >= target_counts - (n - ell)), axis=1))
            local[ell] = np.full(len(by_length[ell]), -1)
            local[ell][allowed[ell]] = np.arange(len(allowed[ell]))
        plan = {}
        for ell in range(2, n + 1):
            lengths = left_len[ell][allowed[ell]]
            plan[ell] = []
            for p in np.unique(lengths):
                out = np.flatnonzero(lengths == p)
                chosen = allowed[ell][out]
                p = int(p)
                plan[ell].append((p, out, local[p][left_pos[ell][chosen]], local[ell - p][right_pos[ell][chosen]]))
        columns = local[n][np.array(members)]
        matrix = np.zeros((len(members), len(members)), dtype=np.int32)
        first_letters = letters[allowed[1]]
        for start in range(0, len(members), CHUNK):
            rows = members[start : start + CHUNK]
            chunk = targets_all[rows]
            size = len(rows)
            levels = {1: (chunk[:, None, :] == first_letters[None, :, None]).astype(np.int32)}
            for ell in range(2, n + 1):
                span = n - ell + 1
                level = np.zeros((size, len(allowed[ell]), span), dtype=np.int32)
                for p, out, xs, ys in plan[ell]:
                    q = ell - p
                    fx, fy = levels[p], levels[q]
                    level[:, out, :] = (
                        fx[:, xs, 0:span] * fy[:, ys, p : p + span] - fy[:, ys, 0:span] * fx[:, xs, q : q + span]
                    )
                levels[ell] = level
            matrix[start : start + size] = levels[n][:, columns, 0]
        result.append((np.array(members), matrix))
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
        solution = np.zeros(len(members), dtype=object)  # Python integers: exact, unbounded
        for a, position in enumerate(members):
            nonzero = np.flatnonzero(block[a, :a])
            total = scaled[position] - int(np.dot(block[a, nonzero].astype(object), solution[nonzero]))
            solution[a] = total  # block[a, a] = 1
            if total:
                coordinates[words[position]] = Fraction(total, denominator)
    return coordinates
