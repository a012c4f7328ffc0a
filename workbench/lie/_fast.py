r"""The exact engine of the Lie series: word coefficients on Lyndon words, then the unitriangular solve.

Three steps give :math:`\log(e^{X_0} \cdots e^{X_{r-1}})` in the Lyndon basis, one degree at a time:

1. **Word coefficients** on the Lyndon words (Goldberg's segmentation sum).  Blocks of a segmentation
   never cross a descent, so the sum factorises over the maximal nondecreasing runs of the word and
   depends only on the multiset of their letter counts: one product of small integer polynomials per
   multiset, shared along sorted prefixes, as integers over one denominator
   (:func:`increasing_product_log_numerators`).
2. **The unitriangular system** :math:`z_u = \sum_w (P_w, u)\,c_w` over the Lyndon words of one multidegree,
   its entries by the bracket recursion on standard factorisations,
   :math:`(P_{xy}, s) = (P_x, s_{<|x|})(P_y, s_{\ge|x|}) - (P_y, s_{<|y|})(P_x, s_{\ge|y|})`, run as one
   shared straight-line programme over the reachable ``(word, offset)`` nodes.
3. **Exact forward substitution** over the common denominator (:func:`solve_level`).

All three run in the compiled kernel (``_lyndon_kernel.c``) where it is built, a whole degree per call and no
numpy (:mod:`workbench.lie._levels`): step 1 word by word, the product of the runs' polynomials shared with the
previous word's runs; steps 2 and 3 per target word on only the prefix of the programme its columns need, eight
targets per vector, the blocks of a degree on threads; 128-bit integers with overflow checks throughout.  Where the
kernel is not built (or reports an overflow) the same numbers come from here: step 1 by the multiset groups above,
and the system solved with the programme vectorised over targets with numpy (:func:`lyndon_triangular_blocks`,
also the tests' oracle for the kernel) and forward substitution in Python integers.  A degree is carried as a
:class:`Level` (positions, integer numerators, one denominator), a few bytes per term; Fractions are made only for
the caller.

For two letters the even BCH degrees need none of this (:func:`bch_even_level`).  The ideas (a programme
shared per multidegree, columns ``A^k y`` read as ``y`` at offset ``k``, the prefix each target needs, even
degrees from the symmetric series, integer arithmetic over a common denominator) follow H. Hofstätter's ``bch``
program (github.com/HaraldHofstaetter/BCH; user manual arXiv:2102.06570); the code, in numpy and in C, is ours.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from functools import cache

import numpy as np

from workbench.lie._budget import EXACT_UP_TO
from workbench.lie._free import Word, check_element, check_integer
from workbench.lie._kernel import kernel as _kernel  # None: every solve in Python integers (same result)
from workbench.lie._levels import (
    KERNEL_MAX_DEGREE,
    KERNEL_MAX_LETTERS,
    PARALLEL_FROM,
    Level,
    bch_even_level,
    solver_threads,
)
from workbench.lie._words import lyndon_word_array, lyndon_words, multidegree_blocks

# The public tool is the even-degree relabelling; the three engine steps are package-internal helpers
# (their arguments are positions in Lyndon order, not Lie elements).
__all__ = ["bch_even_degree"]

MASK64 = 2**64 - 1


CHUNK = 512  # target words per batch: the node values are [nodes, CHUNK] int32 (~27 MB at degree 19)


@cache
def _word_array(n_letters: int, degree: int) -> np.ndarray:
    # int64 copy for the numpy programme of the Python-integer path (the kernel reads the uint8 array)
    return lyndon_word_array(n_letters, degree).astype(np.int64)


@cache
def _run_polynomial(counts: tuple[int, ...]) -> tuple[int, ...]:
    # s!·Σ_{segmentations of X_0^{c_0}⋯X_{r−1}^{c_{r−1}} into k blocks} Π_blocks 1/Π c_b!, as the
    # coefficients of x^k.  ways[j][k] carries the factor j!, so every step multiplies by the integer
    # j!/(i!·Π c_b!) = C(j, i)·multinomial(block counts).
    s = sum(counts)
    word = [letter for letter, c in enumerate(counts) for _ in range(c)]
    ways = [[0] * (s + 1) for _ in range(s + 1)]
    ways[0][0] = 1
    for j in range(1, s + 1):
        for i in range(j):
            block = word[i:j]
            weight = math.comb(j, i) * math.factorial(j - i)
            for letter in set(block):
                weight //= math.factorial(block.count(letter))
            for k in range(i + 1):
                if ways[i][k]:
                    ways[j][k + 1] += ways[i][k] * weight
    return tuple(ways[s])


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
    numerators, denominator = increasing_product_log_numerators(n_letters, degree)
    return [Fraction(int(v), denominator) for v in numerators]


def increasing_product_log_numerators(n_letters: int, degree: int) -> tuple[np.ndarray, int]:
    """:func:`increasing_product_log_coefficients` as integer numerators (an object array) over one denominator."""
    words = lyndon_word_array(n_letters, degree).astype(np.int64)
    m, n = words.shape
    # A nondecreasing run is determined by its letter counts, and conversely; it is coded by its letters
    # (letter + 1, base r + 1, first letter least significant), exact in int64 within the package's budget.
    descent = np.zeros((m, n), dtype=bool)
    descent[:, 1:] = words[:, :-1] > words[:, 1:]
    run_id = np.cumsum(descent, axis=1)
    position = np.arange(n) - np.maximum.accumulate(np.where(descent | (np.arange(n) == 0), np.arange(n), 0), axis=1)
    base = n_letters + 1
    if base**n >= 2**62:  # pragma: no cover - past every budget of the package
        raise ValueError(f"degree {n} on {n_letters} letters is past the run coding of the engine")
    code = np.zeros(m * n, dtype=np.int64)
    np.add.at(code, (np.arange(m)[:, None] * n + run_id).ravel(), ((words + 1) * base**position).ravel())
    # Words with the same multiset of runs form one group: sort each word's run codes, then number the
    # distinct rows column by column (dense ids keep every combined key inside int64).
    dense = np.unique(code, return_inverse=True)[1].reshape(m, n)
    dense.sort(axis=1)
    group = np.zeros(m, dtype=np.int64)
    for column in dense.T:
        group = np.unique(group * (int(dense.max()) + 1) + column, return_inverse=True)[1].ravel()
    representative = np.zeros(group.max() + 1, dtype=np.int64)
    representative[group] = np.arange(m)  # any word of the group
    lcm = math.lcm(*range(1, n + 1))
    rows = np.sort(code.reshape(m, n)[representative], axis=1)
    order = np.lexsort(rows.T[::-1])  # rows in lexicographic order share prefixes of their products
    numerators, denominators = [None] * len(rows), [None] * len(rows)
    prefix: list[int] = []  # the run codes of the previous row, and the products of its prefixes
    products: list[tuple[list[int], int]] = [([1], 1)]
    for index in order.tolist():
        row = [c for c in rows[index].tolist() if c]
        shared = 0
        while shared < min(len(row), len(prefix)) and row[shared] == prefix[shared]:
            shared += 1
        del products[shared + 1 :]
        for c in row[shared:]:
            counts = [0] * n_letters
            while c:
                c, letter = divmod(c, base)
                counts[letter - 1] += 1
            poly, denominator = products[-1]
            products.append(
                (_multiply(poly, _run_polynomial(tuple(counts))), denominator * math.factorial(sum(counts)))
            )
        prefix = row
        poly, denominator = products[-1]
        # Σ_k (−1)^{k+1}/k · [x^k] Π_runs, over lcm(1..n) · Π_runs (Σ counts)!
        numerators[index] = sum((1 if k % 2 else -1) * (lcm // k) * a for k, a in enumerate(poly) if k and a)
        denominators[index] = lcm * denominator
    common = math.lcm(*denominators)
    scaled = np.array([a * (common // d) for a, d in zip(numerators, denominators, strict=True)], dtype=object)
    g = math.gcd(common, *scaled.tolist())
    return scaled[group] // g, common // g


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
    degree = check_integer("degree", degree, 2, EXACT_UP_TO, expected=f"an even integer in [2, {EXACT_UP_TO}]")
    if degree % 2:
        raise ValueError(
            f"degree must be an even integer in [2, {EXACT_UP_TO}] (odd degrees need the solve), got {degree}"
        )
    return bch_even_degree_unchecked(check_element("lower", lower, 2), degree)


def bch_even_degree_unchecked(lower: dict[Word, Fraction], degree: int) -> dict[Word, Fraction]:
    """:func:`bch_even_degree` on coordinates the package built (no boundary checks)."""
    levels = [Level.from_coordinates(2, d, lower) for d in range(1, degree)]
    return bch_even_level(levels, degree).coordinates(2)


@cache
def _codes(n_letters: int, length: int) -> dict[int, int]:
    # Lyndon words of this length as base-r integers (first letter most significant) -> Lyndon position.
    words = _word_array(n_letters, length)
    codes = words @ (n_letters ** np.arange(length - 1, -1, -1, dtype=np.int64))
    return {int(c): k for k, c in enumerate(codes)}


@cache
def _factor_plan(n_letters: int, length: int) -> tuple[list[int], list[int], list[int]]:
    # For every Lyndon word of this length (≥ 2): the length of the left factor of its standard
    # factorisation and the positions of both factors among the Lyndon words of their own lengths.
    # The right factor is the longest proper Lyndon suffix, found by integer-code lookups.
    left_len, left_pos, right_pos = [], [], []
    tables = [None] + [_codes(n_letters, ell) for ell in range(1, length)]
    for code in _codes(n_letters, length):
        for p in range(1, length):
            modulus = n_letters ** (length - p)
            suffix = tables[length - p].get(code % modulus)
            if suffix is not None:
                left_len.append(p)
                left_pos.append(tables[p][code // modulus])
                right_pos.append(suffix)
                break
    return left_len, left_pos, right_pos


def _evaluation_program(n_letters: int, degree: int, core_len: np.ndarray, core_pos: np.ndarray, core_off: np.ndarray):
    r"""The straight-line programme that evaluates ``(P_v, s[o:o+|v|])`` for the requested cores.

    Nodes are Lyndon words read at an offset of the target word, closed under the bracket recursion
    :math:`(P_{xy}, s) = (P_x, s_{\le p})(P_y, s_{>p}) - (P_y, s_{\le q})(P_x, s_{>q})` and shared between
    all the cores of a block; built top-down one length at a time with array operations.  Returns, per
    length, the nodes' Lyndon positions and offsets; the four children of every composite node as
    global node indices (nodes numbered by increasing length); and the global index of every core.
    """
    stride = degree + 1  # a node of one length is the integer key position·stride + offset
    wanted = {ell: [] for ell in range(1, degree + 1)}
    for ell in range(1, degree + 1):
        chosen = core_len == ell
        wanted[ell].append(core_pos[chosen] * stride + core_off[chosen])
    keys, kids = {}, {}
    for ell in range(degree, 1, -1):
        here = keys[ell] = np.unique(np.concatenate(wanted[ell]))
        left_len, left_pos, right_pos = (np.asarray(a) for a in _factor_plan(n_letters, ell))
        pos, off = here // stride, here % stride
        p = left_len[pos]
        q, x, y = ell - p, left_pos[pos], right_pos[pos]
        kids[ell] = (p, x * stride + off, q, y * stride + off + p, q, y * stride + off, p, x * stride + off + q)
        for length, key in zip(kids[ell][0::2], kids[ell][1::2], strict=True):
            for m in np.unique(length):
                wanted[int(m)].append(key[length == m])
    keys[1] = np.unique(np.concatenate(wanted[1]))
    first = np.cumsum([0] + [len(keys[ell]) for ell in range(1, degree + 1)])  # global index of each length
    children = np.zeros((first[-1], 4), dtype=np.int64)
    for ell in range(2, degree + 1):
        for j in range(4):
            length, key = kids[ell][2 * j], kids[ell][2 * j + 1]
            index = np.empty(len(key), dtype=np.int64)
            for m in np.unique(length):
                chosen = length == m
                index[chosen] = first[m - 1] + np.searchsorted(keys[int(m)], key[chosen])
            children[first[ell - 1] : first[ell], j] = index
    core_index = np.empty(len(core_len), dtype=np.int64)
    for m in np.unique(core_len):
        chosen = core_len == m
        core_index[chosen] = first[m - 1] + np.searchsorted(keys[int(m)], core_pos[chosen] * stride + core_off[chosen])
    leaf_letter, leaf_offset = keys[1] // stride, keys[1] % stride
    return first, children, core_index, leaf_letter, leaf_offset


@cache
def lyndon_triangular_blocks(n_letters: int, degree: int) -> tuple[tuple[np.ndarray, object], ...]:
    r"""``T[u, w] = (P_w, u)`` over the Lyndon words of ``degree``, as its diagonal blocks.

    Returns ``(members, block)`` pairs: ``members`` are positions in Lyndon order of the words of one
    multidegree, and ``block[a, b] = (P_{members[b]}, members[a])``, a sparse (CSR, int32) lower
    unitriangular matrix.  int32 is exact: a bracket monomial of degree ``n`` has coefficients summing
    to at most ``2^{n−1}`` in absolute value.

    Two facts keep the work small.  (i) Let ``m`` be the smallest letter of the block; every target
    ``u`` starts with ``m`` and does not end with it, so for ``w = m·y`` (standard factorisation)
    :math:`(P_{my}, u_{o:}) = (P_y, u_{o+1:})` on every suffix, and a column ``w = m^k y`` is the
    *core* ``y`` read at offset ``k``, masked to targets with at least ``k`` leading ``m``.  (ii) The
    cores are evaluated by one shared straight-line programme over ``(word, offset)`` nodes (only the
    offsets the recursion reaches), run for a batch of targets at once.  At degree 19 the largest block
    needs 13,457 nodes per target, against 30k ``(word, offset)`` pairs for all offsets.

    Examples
    --------
    >>> [block.toarray().tolist() for _, block in lyndon_triangular_blocks(2, 4)]  # AAAB | AABB | ABBB
    [[[1]], [[1]], [[1]]]
    >>> lyndon_triangular_blocks(2, 5)[1][1].toarray().tolist()  # rows AAABB, AABAB: (P_AAABB, AABAB) = −2
    [[1, 0], [-2, 1]]
    """
    from scipy.sparse import csr_array  # only the Python-integer path reads T itself

    words = lyndon_words(n_letters, degree)
    n = degree
    targets_all = _word_array(n_letters, degree)
    result = []
    for _, block_members in multidegree_blocks(n_letters, degree):
        members = list(block_members)
        smallest = words[members[0]][0]
        core_len, core_pos, strips = [], [], []
        for position in members:
            length, pos, k = n, position, 0
            while length > 1:
                left_len, left_pos, right_pos = _factor_plan(n_letters, length)
                if left_len[pos] != 1 or left_pos[pos] != smallest:
                    break
                length, pos, k = length - 1, right_pos[pos], k + 1
            core_len.append(length)
            core_pos.append(pos)
            strips.append(k)
        strips = np.array(strips)
        first, children, core_index, leaf_letter, leaf_offset = _evaluation_program(
            n_letters, n, np.array(core_len), np.array(core_pos), strips
        )
        rows, cols, data = [], [], []
        for start in range(0, len(members), CHUNK):
            stop = min(start + CHUNK, len(members))
            targets = targets_all[members[start:stop]]
            lead = np.argmax(targets != smallest, axis=1)  # leading copies of the smallest letter
            values = np.empty((first[-1], stop - start), dtype=np.int32)
            values[: first[1]] = targets.T[leaf_offset] == leaf_letter[:, None]
            for length in range(2, n + 1):
                lo, hi = first[length - 1], first[length]
                c = children[lo:hi]
                values[lo:hi] = values[c[:, 0]] * values[c[:, 1]] - values[c[:, 2]] * values[c[:, 3]]
            # Lower triangle only: columns up to the last target of the batch.
            block = values[core_index[:stop]].T * (lead[:, None] >= strips[None, :stop])
            r, c = np.nonzero(block)
            rows.append(r + start)
            cols.append(c)
            data.append(block[r, c])
        shape = (len(members), len(members))
        matrix = csr_array((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape)
        result.append((np.array(members), matrix))
    return tuple(result)


def lyndon_coordinates_from_values(n_letters: int, degree: int, values: list[Fraction]) -> dict[Word, Fraction]:
    """Solve ``T c = z`` exactly for the Lyndon coordinates ``c`` of a Lie polynomial of one degree.

    ``values`` are its coefficients on the Lyndon words of ``degree`` (Lyndon order).  Each diagonal
    block of ``T`` is lower unitriangular, so forward substitution in integers over the common
    denominator is exact: in the compiled kernel (128-bit integers, overflow checked) where it is built
    and the numbers fit, otherwise with Python integers.

    Examples
    --------
    >>> from fractions import Fraction
    >>> lyndon_coordinates_from_values(2, 2, [Fraction(1, 2)])  # ½ AB + … = ½ [A,B]
    {(0, 1): Fraction(1, 2)}
    """
    if not any(values):
        return {}
    denominator = math.lcm(*(v.denominator for v in values))
    scaled = np.array([v.numerator * (denominator // v.denominator) for v in values], dtype=object)
    return lyndon_coordinates_from_numerators(n_letters, degree, scaled, denominator)


def lyndon_coordinates_from_numerators(
    n_letters: int, degree: int, numerators: np.ndarray, denominator: int
) -> dict[Word, Fraction]:
    """:func:`lyndon_coordinates_from_values` for values ``numerators / denominator`` (an object array of ints)."""
    return solve_level(n_letters, degree, numerators, denominator).coordinates(n_letters)


def solve_level(n_letters: int, degree: int, numerators: np.ndarray, denominator: int) -> Level:
    """The Lyndon coordinates (a :class:`Level`) of the Lie polynomial with word values ``numerators / denominator``."""
    solution = np.zeros(len(numerators), dtype=object)
    if numerators.any():
        blocks = [np.asarray(members) for _, members in multidegree_blocks(n_letters, degree)]
        blocks = [m for m in blocks if numerators[m].any()]  # a zero right side has the zero solution
        workers = min(solver_threads(), len(blocks)) if _kernel is not None and len(numerators) >= PARALLEL_FROM else 1
        if workers > 1:  # the kernel releases the GIL: blocks are independent, largest first
            blocks.sort(key=len, reverse=True)
            with ThreadPoolExecutor(workers) as pool:
                solved = pool.map(lambda m: _solve_block(n_letters, degree, m, numerators[m]), blocks)
                for members, values in zip(blocks, solved, strict=True):
                    solution[members] = values
        else:
            for members in blocks:
                solution[members] = _solve_block(n_letters, degree, members, numerators[members])
    return Level.from_solution(degree, solution, denominator)


def _solve_block(n_letters: int, degree: int, members: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    # One multidegree block: the compiled kernel when it is built and the numbers fit in 128 bits (it
    # reports an overflow instead of wrapping), otherwise exact forward substitution in Python integers.
    if _kernel is not None and degree <= KERNEL_MAX_DEGREE and n_letters <= KERNEL_MAX_LETTERS.get(degree, 0):
        if max(abs(int(v)) for v in rhs).bit_length() < 127:
            words = np.ascontiguousarray(lyndon_word_array(n_letters, degree)[members])
            hi, lo = (rhs >> 64).astype(np.int64), (rhs & MASK64).astype(np.uint64)
            out_hi, out_lo = np.empty_like(hi), np.empty_like(lo)
            status, _ = _kernel.solve_block(degree, n_letters, words, hi, lo, out_hi, out_lo)
            if status == 1:
                raise MemoryError(f"the Lyndon kernel ran out of memory at degree {degree}")
            if status == 0:
                return (out_hi.astype(object) << 64) + out_lo.astype(object)
            # status 2: a 128-bit overflow; the Python-integer solve below is exact at any size
    return _solve_block_python(n_letters, degree, members, rhs)


def _solve_block_python(n_letters: int, degree: int, members: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    block = _block_matrix(n_letters, degree, int(members[0]))
    indptr, indices, data = block.indptr, block.indices, block.data.astype(object)
    solution = np.zeros(len(members), dtype=object)  # Python integers: exact, unbounded
    first = int(np.flatnonzero(rhs)[0])
    for a in range(first, len(members)):  # rows above the first nonzero stay zero
        lo, hi = indptr[a], indptr[a + 1] - 1  # the last entry of row a is the diagonal 1
        solution[a] = rhs[a] - np.dot(data[lo:hi], solution[indices[lo:hi]]) if hi > lo else rhs[a]
    return solution


def _block_matrix(n_letters: int, degree: int, first_member: int):
    for members, block in lyndon_triangular_blocks(n_letters, degree):
        if members[0] == first_member:
            return block
    raise AssertionError(f"no multidegree block starts at {first_member}")  # pragma: no cover
