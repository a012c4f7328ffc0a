r"""Three bases of the free Lie algebra, built from bracket trees, and exact change of basis.

Elements of the free associative algebra are dicts ``{word: Fraction}`` and Lie monomials are bracket
trees (:mod:`workbench.lie._free`).  Letters are ordered ``A < B < …``.  The bases, by name
(:data:`BASES`):

* ``"lyndon"`` — ``P_w`` for the Lyndon words ``w``, bracketed by the standard factorisation
  (``AAB -> [A,[A,B]]``, ``ABB -> [[A,B],B]``), in Lyndon order within each degree.
  ``P_w = w + (lexicographically larger words)``, so any Lie polynomial is decomposed by repeatedly
  removing its smallest word (Reutenauer, *Free Lie Algebras* (1993), §5.1).
* ``"hall"`` — the classical Hall basis of basic commutators (M. Hall, 1950) in the ordering and
  orientation of the published tables (Casas–Murua (2009), the numbering ``E1 = A``, ``E2 = B``,
  ``E3 = [B,A]``, ``E4 = [[B,A],A]``, ``E5 = [[B,A],B]``, ``E6 = [E4,A]``, …; H. Hofstätter's ``bch``
  program, ``basis=2``).  The elements are built degree by degree and numbered in that order: the
  letters first, then the elements of degree ``n`` are the ``[t1, t2]`` of total degree ``n`` with
  ``t1 > t2`` in the numbering so far and, if ``t1 = [u, v]``, ``v ≤ t2``; within a degree they are
  numbered by the index of the *right* factor ``t2`` first, then by that of ``t1``.
* ``"chibrikov"`` — the right-normed basis of E. S. Chibrikov (2006): every Lyndon word ``w`` is
  mapped to a right-normed monomial ``[x1,[x2,[…,[x_{n−1},x_n]]]]`` whose letters ``x1…xn`` are a
  rearrangement of ``w``, and these monomials, listed in the Lyndon order of their words, form a basis
  (``AB -> [B,A]``, ``AAB -> [A,[B,A]]``, ``AABB -> [B,[A,[B,A]]]``; ``basis=1`` of Hofstätter's
  ``bch``).  The map, as we implement it: let ``a`` be the smallest letter of ``w``.  If ``a``
  occurs once, ``w = a u`` and the monomial is ``w`` reversed, ``[u_m,[…,[u_1,a]]]``.  Otherwise let
  ``v`` be the (possibly empty) word between the first two ``a`` of ``w``, and cut ``w`` into pieces,
  each starting at an ``a``: from the current ``a`` take the repeats ``a v`` as long as another ``a``
  follows each of them, then the next ``a`` and the shortest prefix of the ``a``-free run after it that
  is lexicographically larger than ``v``; that is one new letter, and the rest of the run stays as old
  letters.  The new letters, ordered lexicographically as words, make ``w`` a Lyndon word ``w'`` with
  fewer copies of its smallest letter; map ``w'`` recursively, replace each of its letters by its word
  except the last one, which is the first piece ``a v z`` and is written ``z · reverse(v) · a``.  The
  monomials' matrix of coefficients on the Lyndon words has an integer LU factorisation with ``±1``
  pivots (Hofstätter (2021), the ``bch`` manual), so the change of basis is two exact triangular solves.
* ``"right-normed"`` — another name for ``"chibrikov"``: it is the right-normed basis of the
  literature and of the ``bch`` program.  The package's earlier right-normed basis (in each
  multidegree, the lexicographically first independent right-normed monomials) is dropped: it is no
  published basis, it depended on an enumeration order of our choosing, its construction needed a dense
  elimination, and nothing in the package relied on its particular elements.

Change of basis (:func:`change_of_basis`), per multidegree block: the coefficients ``z`` of the element
on the Lyndon words come from its Lyndon coordinates through the engine's unitriangular matrix
``T[u, w] = (P_w, u)``; the basis monomials' coefficients on the same words form an integer matrix ``M``
(their expansions, as vectorised integer word codes); and the coordinates solve ``M x = z``.  Both bases
are bases of the free Lie ring over the integers (Hall (1950); for Chibrikov's, the ``±1`` pivots show
it), so ``det M = ±1``; ``M`` is factorised once, ``P M Q = L U`` with integer triangular factors and
``±1`` pivots (row and column exchanges are needed for the Hall matrices only, and only when a diagonal
entry is not ``±1``), and every change is two exact substitutions in Python integers over the common
denominator of ``z``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from functools import cache

import numpy as np

from workbench.lie._budget import EXACT_UP_TO, basis_change_seconds, check_budget
from workbench.lie._fast import lyndon_triangular_blocks
from workbench.lie._free import (
    MAX_EXPAND_DEGREE,
    FreeElement,
    Tree,
    Word,
    add_scaled,
    check_element,
    check_integer,
    check_word,
    expand_tree_unchecked,
    tree_letters,
)
from workbench.lie._words import (
    format_word,
    is_lyndon,
    lyndon_words,
    multidegree_blocks,
    standard_factorization_unchecked,
)
from workbench.validation import check_choice

# chibrikov_word is imported from this module (the package re-exports the names listed here).
__all__ = ["BASES", "basis_trees", "change_of_basis", "lyndon_coordinates", "lyndon_tree"]

#: Every accepted basis name; ``"right-normed"`` is another name for ``"chibrikov"``.
BASES = ("lyndon", "hall", "chibrikov", "right-normed")
_ALIASES = {"right-normed": "chibrikov"}


def lyndon_tree(word: Word) -> Tree:
    """Standard bracketing ``P_w`` of a Lyndon word (length at most 64, the package's largest degree).

    Examples
    --------
    >>> from workbench.lie import tree_to_string
    >>> tree_to_string(lyndon_tree((0, 0, 1))), tree_to_string(lyndon_tree((0, 1, 1)))
    ('[A,[A,B]]', '[[A,B],B]')
    """
    word = check_word("word", word)
    if not 1 <= len(word) <= EXACT_UP_TO or not is_lyndon(word):
        raise ValueError(f"word must be a Lyndon word of length 1 to {EXACT_UP_TO}, got {word!r}")
    return _lyndon_tree(word)


@cache
def _lyndon_tree(word: Word) -> Tree:
    if len(word) == 1:
        return word[0]
    u, v = standard_factorization_unchecked(word)
    return (_lyndon_tree(u), _lyndon_tree(v))


def lyndon_coordinates(element: FreeElement) -> dict[Word, Fraction]:
    """Decompose a Lie polynomial (given as words) in the Lyndon basis.

    Repeatedly removes the smallest word ``w`` (which must be Lyndon) with ``c_w P_w``.

    Raises
    ------
    ValueError
        If ``element`` is not a Lie polynomial.

    Examples
    --------
    >>> from workbench.lie import expand_tree
    >>> coords = lyndon_coordinates(dict(expand_tree(((0, 1), 0))))  # [[A,B],A] = -[A,[A,B]]
    >>> {format_word(w): int(c) for w, c in coords.items()}
    {'AAB': -1}
    """
    remaining = check_element("element", element)
    longest = max((len(w) for w in remaining), default=0)
    if longest > MAX_EXPAND_DEGREE:
        raise ValueError(
            f"element must have words of length at most {MAX_EXPAND_DEGREE} (each step expands a Lyndon "
            f"element into up to 2^(d-1) words), got a word of length {longest}"
        )
    return lyndon_coordinates_unchecked(remaining)


def lyndon_coordinates_unchecked(remaining: dict[Word, Fraction]) -> dict[Word, Fraction]:
    """The unchecked core of :func:`lyndon_coordinates` (elements built by the package; consumed)."""
    coordinates: dict[Word, Fraction] = {}
    while remaining:
        w = min(remaining)
        if not is_lyndon(w):
            raise ValueError(
                f"element must be a Lie polynomial, but its smallest word {format_word(w)!r} is not Lyndon"
            )
        c = remaining[w]
        coordinates[w] = c
        add_scaled(remaining, expand_tree_unchecked(_lyndon_tree(w)), -c)
    return coordinates


@cache
def _lyndon_index(n_letters: int, degree: int) -> dict[Word, int]:
    return {w: k for k, w in enumerate(lyndon_words(n_letters, degree))}


@cache
def _hall_levels(n_letters: int, degree: int) -> tuple[tuple[Tree, ...], ...]:
    # The classical Hall set by degree: levels[k - 1] holds the elements of degree k, in Hall order.
    if degree == 1:
        return (tuple(range(n_letters)),)
    levels = _hall_levels(n_letters, degree - 1)
    position = {t: i for i, t in enumerate(t for level in levels for t in level)}
    found = []
    for d2 in range(1, degree // 2 + 1):  # t1 > t2 forces deg t1 ≥ deg t2
        for t2 in levels[d2 - 1]:
            for t1 in levels[degree - d2 - 1]:
                if position[t1] > position[t2] and (isinstance(t1, int) or position[t1[1]] <= position[t2]):
                    found.append((t1, t2))
    found.sort(key=lambda t: (position[t[1]], position[t[0]]))  # the right factor first
    return (*levels, tuple(found))


def chibrikov_word(word: Word) -> Word:
    """The letters ``x1…xn`` of Chibrikov's right-normed monomial ``[x1,[x2,[…,x_n]]]`` for a Lyndon word.

    The map is described in the module docstring (E. S. Chibrikov (2006); Hofstätter's ``bch``,
    ``basis=1``); the result is a rearrangement of ``word`` ending with its smallest letter.

    Examples
    --------
    >>> from workbench.lie import format_word
    >>> [format_word(chibrikov_word(w)) for w in [(0, 1), (0, 0, 1, 1), (0, 0, 0, 1, 1), (0, 0, 1, 0, 1)]]
    ['BA', 'BABA', 'BAABA', 'ABABA']
    """
    word = check_word("word", word)
    if not 1 <= len(word) <= EXACT_UP_TO or not is_lyndon(word):
        raise ValueError(f"word must be a Lyndon word of length 1 to {EXACT_UP_TO}, got {word!r}")
    return _chibrikov_word(word)


@cache
def _chibrikov_word(word: tuple[int, ...]) -> tuple[int, ...]:
    # `word` is Lyndon over integer letters (ranks); see the module docstring for the construction.
    a = word[0]
    if word.count(a) == 1:
        return word[::-1]
    n = len(word)
    second = word.index(a, 1)
    v = word[1:second]
    period = (a, *v)
    pieces: list[tuple[int, ...]] = []  # the new word: new letters and single old letters, as words
    pos = 0
    while pos < n:
        start = pos
        while pos + len(period) < n and word[pos + len(period)] == a and word[pos : pos + len(period)] == period:
            pos += len(period)
        end = pos + 1
        while end < n and word[end] != a:
            end += 1
        run = word[pos + 1 : end]
        cut = next((j for j in range(1, len(run) + 1) if run[:j] > v), None)
        if cut is None:  # pragma: no cover - impossible for a Lyndon word
            raise AssertionError(f"no prefix of the run after position {pos} exceeds v in {word!r}")
        pieces.append(word[start : pos + 1 + cut])
        pieces.extend((x,) for x in run[cut:])
        pos = end
    letters = sorted(set(pieces))  # the new alphabet, ordered lexicographically as words
    rank = {piece: i for i, piece in enumerate(letters)}
    inner = _chibrikov_word(tuple(rank[p] for p in pieces))
    first = letters[inner[-1]]  # the first piece, a v z
    head = tuple(x for i in inner[:-1] for x in letters[i])
    return head + first[len(period) :] + v[::-1] + (a,)


def _right_normed(letters: Word) -> Tree:
    tree: Tree = letters[-1]
    for letter in reversed(letters[:-1]):
        tree = (letter, tree)
    return tree


def basis_trees(basis: str, n_letters: int, degree: int) -> tuple[Tree, ...]:
    """The basis elements of exact ``degree`` as bracket trees, in the basis order.

    ``basis`` is one of :data:`BASES` (the module docstring defines them).

    Examples
    --------
    >>> from workbench.lie import tree_to_string
    >>> [tree_to_string(t) for t in basis_trees("hall", 2, 4)]
    ['[[[B,A],A],A]', '[[[B,A],A],B]', '[[[B,A],B],B]']
    >>> [tree_to_string(t) for t in basis_trees("chibrikov", 2, 4)]
    ['[A,[A,[B,A]]]', '[B,[A,[B,A]]]', '[B,[B,[B,A]]]']

    The work is estimated first and refused past the package's budget: Hall ``degree ≤ 15`` and
    Chibrikov ``degree ≤ 16`` for two letters (10 and 11 for three letters, 8 and 9 for four), Lyndon
    as :func:`lyndon_words`.
    """
    check_choice("basis", basis, BASES)
    n_letters = check_integer("n_letters", n_letters, 1)
    degree = check_integer("degree", degree, 1)
    check_budget(
        "degree", degree, f"the {basis} basis on n_letters={n_letters} letters", basis_change_seconds, basis, n_letters
    )
    return _basis_trees(_ALIASES.get(basis, basis), n_letters, degree)


@cache
def _basis_trees(basis: str, n_letters: int, degree: int) -> tuple[Tree, ...]:
    if basis == "lyndon":
        return tuple(_lyndon_tree(w) for w in lyndon_words(n_letters, degree))
    if basis == "hall":
        return _hall_levels(n_letters, degree)[-1]
    return tuple(_right_normed(_chibrikov_word(w)) for w in lyndon_words(n_letters, degree))


# --- change of basis: the monomials' word coefficients on the Lyndon words, then an exact solve ----------
#
# In one multidegree block let z_u be the coefficient of the Lyndon word u in a Lie element and
# M[u, b] = (b, u) that of u in the basis monomial b.  The Lyndon words index a basis of the block's dual
# (Reutenauer (1993), Theorem 5.1: T[u, w] = (P_w, u) is unitriangular), so the coordinates x of the
# element in the basis solve M x = z, and z = T λ from its Lyndon coordinates λ.

# Expansion codes held at once: a monomial of degree n has 2^(n-1) signed words.
_EXPANSION_CHUNK = 1 << 22
# int64 elimination is used while every updated entry provably stays below this bound.
_INT64_SAFE = 1 << 62


def _word_codes(words: np.ndarray, base: int) -> np.ndarray:
    # Words of one length as base-`base` integers: lexicographic order = numeric order.
    codes = np.zeros(len(words), dtype=np.int64)
    for column in words.T:
        codes = codes * base + column
    return codes


def _accumulate(out: np.ndarray, codes: np.ndarray, signs: np.ndarray, columns: np.ndarray, targets: np.ndarray):
    # out[i, j] += Σ signs over the expansion words of column j equal to targets[i] (targets sorted).
    rows, width = out.shape
    where = np.minimum(np.searchsorted(targets, codes), rows - 1)
    hit = targets[where] == codes
    out += (
        np.bincount(where[hit] * width + columns[hit], weights=signs[hit], minlength=rows * width)
        .astype(np.int64)
        .reshape(rows, width)
    )


def _right_normed_coefficients(letters: np.ndarray, targets: np.ndarray, base: int) -> np.ndarray:
    """``M[i, j]`` = coefficient of the word coded ``targets[i]`` in ``[x1,[…,x_n]]``, ``x = letters[j]``.

    ``[x1, R] = x1 R − R x1``: the expansion words are built from ``x_n`` outwards, each letter put in
    front (sign +) or at the back (sign −), as integer codes, for a batch of monomials at once.
    """
    m, n = letters.shape
    out = np.zeros((len(targets), m), dtype=np.int64)
    step = max(1, _EXPANSION_CHUNK >> (n - 1))
    for lo in range(0, m, step):
        chunk = letters[lo : lo + step].astype(np.int64)
        codes, signs = chunk[:, n - 1 :], np.ones((len(chunk), 1), dtype=np.int64)
        for i in range(n - 2, -1, -1):
            x = chunk[:, i : i + 1]
            codes = np.concatenate([x * base ** (n - 1 - i) + codes, codes * base + x], axis=1)
            signs = np.concatenate([signs, -signs], axis=1)
        columns = np.repeat(np.arange(lo, lo + len(chunk)), codes.shape[1])
        _accumulate(out, codes.ravel(), signs.ravel(), columns, targets)
    return out


def _tree_codes(tree: Tree, base: int) -> tuple[np.ndarray, np.ndarray, int]:
    # All signed expansion words of a bracket tree as codes: [x, y] = xy − yx.  (codes, signs, degree)
    if isinstance(tree, int):
        return np.array([tree], dtype=np.int64), np.ones(1, dtype=np.int64), 1
    left, left_signs, p = _tree_codes(tree[0], base)
    right, right_signs, q = _tree_codes(tree[1], base)
    front = (left[:, None] * base**q + right[None, :]).ravel()
    back = (right[:, None] * base**p + left[None, :]).ravel()
    signs = np.outer(left_signs, right_signs).ravel()
    return np.concatenate([front, back]), np.concatenate([signs, -signs]), p + q


def _tree_coefficients(trees: tuple[Tree, ...], targets: np.ndarray, base: int) -> np.ndarray:
    # As _right_normed_coefficients, for arbitrary trees (one expansion per tree).
    out = np.zeros((len(targets), len(trees)), dtype=np.int64)
    for j, tree in enumerate(trees):
        codes, signs, _ = _tree_codes(tree, base)
        _accumulate(out, codes, signs, np.full(len(codes), j), targets)
    return out


def _unimodular_lu(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``M[rows][:, cols] = L U`` with every pivot ``±1``: ``(rows, cols, packed factors)``.

    The factors are packed (unit ``L`` below the diagonal, ``U`` on and above) and integral; ``None``
    when no ``±1`` is left to pivot on.  Rows and columns are exchanged only when the diagonal entry is
    not ``±1`` (the Chibrikov matrices never need one: Hofstätter (2021)).  The elimination runs in
    int64 while a running bound on the updated entries stays below 2^62, then in Python integers.
    """
    a = matrix.astype(np.int64)
    m = len(a)
    rows, cols = np.arange(m), np.arange(m)
    bound = int(np.abs(a).max(initial=0))  # bounds every entry not yet final
    for k in range(m):
        if abs(int(a[k, k])) != 1:
            units = np.argwhere(np.abs(a[k:, k:]) == 1)
            if not len(units):
                return None
            r, c = k + int(units[0][0]), k + int(units[0][1])
            a[[k, r]] = a[[r, k]]
            a[:, [k, c]] = a[:, [c, k]]
            rows[[k, r]] = rows[[r, k]]
            cols[[k, c]] = cols[[c, k]]
        pivot = int(a[k, k])
        if k + 1 == m:
            break
        a[k + 1 :, k] *= pivot  # the multipliers a_ik / pivot
        column, row = a[k + 1 :, k], a[k, k + 1 :]
        if a.dtype != object:
            step = int(np.abs(column).max()) * int(np.abs(row).max())
            bound += step
            if bound >= _INT64_SAFE:  # recompute the bound exactly before giving up on int64
                bound = int(np.abs(a[k + 1 :, k + 1 :]).max()) + step
            if bound >= _INT64_SAFE:
                a = a.astype(object)
                column, row = a[k + 1 :, k], a[k, k + 1 :]
        a[k + 1 :, k + 1 :] -= np.multiply.outer(column, row)
    return rows, cols, a.astype(object)


def _lu_solve(factors: tuple[np.ndarray, np.ndarray, np.ndarray], rhs: np.ndarray) -> np.ndarray:
    # Exact forward and back substitution (Python integers); the pivots are ±1, so no division.
    rows, cols, lu = factors
    m = len(lu)
    y = rhs[rows].astype(object)
    for i in range(1, m):
        y[i] -= lu[i, :i].dot(y[:i])
    for i in range(m - 1, -1, -1):
        y[i] = (y[i] - lu[i, i + 1 :].dot(y[i + 1 :])) * lu[i, i]
    x = np.empty(m, dtype=object)
    x[cols] = y
    return x


def _dense_solve(matrix: np.ndarray, rhs: np.ndarray) -> list[Fraction]:
    # The fallback for a block without ±1 pivots: fraction-free solve over ZZ (sympy), M X = den·b.
    from sympy import ZZ
    from sympy.polys.matrices import DomainMatrix

    m = len(matrix)
    a = DomainMatrix([[ZZ(int(v)) for v in row] for row in matrix], (m, m), ZZ)
    b = DomainMatrix([[ZZ(int(v))] for v in rhs], (m, 1), ZZ)
    numerators, den = a.solve_den(b)
    return [Fraction(int(v), int(den)) for v in numerators.to_Matrix()]


@cache
def _basis_blocks(basis: str, n_letters: int, degree: int):
    # Per multidegree block, in the order of multidegree_blocks: (basis order of each element, trees,
    # solver) with solver ("lu", the ±1-pivot factors of M) or ("dense", M).
    from workbench.lie._words import lyndon_word_array

    words = np.asarray(lyndon_word_array(n_letters, degree), dtype=np.int64)
    lyndon = lyndon_words(n_letters, degree)
    blocks = multidegree_blocks(n_letters, degree)
    if basis == "hall":
        slot = {key: i for i, (key, _) in enumerate(blocks)}
        grouped: list[list[tuple[int, Tree]]] = [[] for _ in blocks]
        for order, tree in enumerate(_basis_trees("hall", n_letters, degree)):
            letters = tree_letters(tree)
            grouped[slot[tuple(letters.count(x) for x in range(n_letters))]].append((order, tree))
    out = []
    for i, (_, members) in enumerate(blocks):
        members = np.asarray(members)
        targets = _word_codes(words[members], n_letters)
        if basis == "chibrikov":
            rearranged = np.array([_chibrikov_word(lyndon[k]) for k in members], dtype=np.int64)
            orders = tuple(int(k) for k in members)
            trees = tuple(_right_normed(tuple(int(x) for x in row)) for row in rearranged)
            matrix = _right_normed_coefficients(rearranged, targets, n_letters)
        else:
            orders, trees = (tuple(column) for column in zip(*grouped[i], strict=True))
            matrix = _tree_coefficients(trees, targets, n_letters)
        lu = _unimodular_lu(matrix)
        solver = ("lu", lu) if lu is not None else ("dense", matrix)  # no block met so far needs "dense"
        out.append((orders, trees, solver))
    return tuple(out)


def _change_in_degree(
    coordinates: dict[Word, Fraction], basis: str, n_letters: int, degree: int
) -> list[tuple[Tree, Fraction]]:
    # z = T λ per block (T: the engine's unitriangular blocks, exact in Python integers), then M x = z.
    import scipy.sparse

    index = _lyndon_index(n_letters, degree)
    common = math.lcm(*(c.denominator for c in coordinates.values()))
    numerators = np.zeros(len(index), dtype=object)
    for w, c in coordinates.items():
        numerators[index[w]] = c.numerator * (common // c.denominator)
    found: list[tuple[int, Tree, Fraction]] = []
    triangular = lyndon_triangular_blocks(n_letters, degree)
    for (members, t_block), (orders, trees, (kind, solver)) in zip(
        triangular, _basis_blocks(basis, n_letters, degree), strict=True
    ):
        lam = numerators[members]
        if not lam.any():
            continue
        t_block = scipy.sparse.csr_array(t_block)
        z = np.add.reduceat(t_block.data.astype(object) * lam[t_block.indices], t_block.indptr[:-1])
        x = _lu_solve(solver, z) if kind == "lu" else _dense_solve(solver, z)
        for order, tree, value in zip(orders, trees, x, strict=True):
            if value:
                found.append((order, tree, Fraction(value) / common))
    return [(tree, c) for _, tree, c in sorted(found, key=lambda item: item[0])]


def change_of_basis(coordinates: dict[Word, Fraction], basis: str, n_letters: int) -> list[tuple[Tree, Fraction]]:
    """Express a Lie element given in Lyndon coordinates in ``basis``, exactly.

    Returns ``(tree, coefficient)`` pairs in basis order (degree, then the basis's own order), zero
    coefficients omitted.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from workbench.lie import tree_to_string
    >>> [(tree_to_string(t), c) for t, c in change_of_basis({(0, 1): Fraction(1)}, "hall", 2)]
    [('[B,A]', Fraction(-1, 1))]
    >>> [(tree_to_string(t), c) for t, c in change_of_basis({(0, 0, 1): Fraction(1)}, "chibrikov", 2)]
    [('[A,[B,A]]', Fraction(-1, 1))]

    The keys must be Lyndon words over ``n_letters`` letters; their longest length is the degree that
    the basis change is budgeted for (as :func:`basis_trees`).
    """
    check_choice("basis", basis, BASES)
    n_letters = check_integer("n_letters", n_letters, 1)
    coordinates = check_element("coordinates", coordinates, n_letters)
    for w in coordinates:
        if len(w) > EXACT_UP_TO or not is_lyndon(w):
            raise ValueError(f"coordinates keys must be Lyndon words of length at most {EXACT_UP_TO}, got {w!r}")
    return change_of_basis_unchecked(coordinates, basis, n_letters)


def change_of_basis_unchecked(coordinates: dict[Word, Fraction], basis: str, n_letters: int):
    """:func:`change_of_basis` for coordinates built by the package (the budget is still checked)."""
    top = max((len(w) for w in coordinates), default=0)
    if top:
        check_budget(
            "degree", top, f"the {basis} basis on n_letters={n_letters} letters", basis_change_seconds, basis, n_letters
        )
    basis = _ALIASES.get(basis, basis)
    if basis == "lyndon":
        return [(_lyndon_tree(w), c) for w, c in sorted(coordinates.items(), key=lambda x: (len(x[0]), x[0])) if c]
    by_degree: dict[int, dict[Word, Fraction]] = defaultdict(dict)
    for w, c in coordinates.items():
        if c:
            by_degree[len(w)][w] = c
    result: list[tuple[Tree, Fraction]] = []
    for degree in sorted(by_degree):
        result.extend(_change_in_degree(by_degree[degree], basis, n_letters, degree))
    return result
