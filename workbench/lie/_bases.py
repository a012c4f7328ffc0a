"""Three bases of the free Lie algebra, built from bracket trees, and exact change of basis.

Elements of the free associative algebra are dicts ``{word: Fraction}`` and Lie monomials are bracket
trees (:mod:`workbench.lie._free`).  Three bases of the free Lie algebra are built from trees:

* **Lyndon** — ``P_w`` for Lyndon words ``w``, bracketed by the standard factorisation
  (``AAB -> [A,[A,B]]``, ``ABB -> [[A,B],B]``).  ``P_w = w + (lexicographically larger words)``, so
  any Lie polynomial is decomposed by repeatedly removing its smallest word (Reutenauer,
  *Free Lie Algebras*, §5.1; Melançon–Reutenauer).
* **Hall** — the classical basic commutators of M. Hall (1950): letters, then ``[t1, t2]`` with
  ``t1 > t2`` and, if ``t1 = [u, v]``, ``v ≤ t2``; ordered by degree, then by construction
  (``[B,A]``, ``[[B,A],A]``, ``[[B,A],B]``, …).
* **right-normed** — monomials ``[x1,[x2,[…,[x_{n-1},x_n]]]]``: right-normed monomials span the free
  Lie algebra, and in each multidegree we keep the lexicographically first words ``x1…xn`` whose
  monomials are linearly independent (exact elimination in Lyndon coordinates) until the block is
  spanned (``[A,[A,B]]``, ``[B,[A,B]]``, ``[A,[B,[A,B]]]``, …).  The choice is canonical and a basis by
  construction.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction
from functools import cache

from workbench.lie._budget import EXACT_UP_TO, basis_change_seconds, check_budget
from workbench.lie._fast import lyndon_coordinates_from_values
from workbench.lie._free import (
    MAX_EXPAND_DEGREE,
    ZERO,
    FreeElement,
    Tree,
    Word,
    add_scaled,
    check_element,
    check_integer,
    check_word,
    expand_tree_unchecked,
    multidegree,
    tree_degree,
    tree_letters,
)
from workbench.lie._words import (
    format_word,
    is_lyndon,
    lyndon_words,
    multidegree_blocks,
    standard_factorization_unchecked,
)

__all__ = ["BASES", "basis_trees", "change_of_basis", "lyndon_coordinates", "lyndon_tree"]

BASES = ("lyndon", "hall", "right-normed")


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


def _tree_coordinates(tree: Tree, n_letters: int) -> dict[Word, Fraction]:
    # Lyndon coordinates of a bracket monomial: its word coefficients on the Lyndon words of its degree,
    # then the engine's exact triangular solve (a tree is a Lie polynomial by construction).
    degree = tree_degree(tree)
    index = _lyndon_index(n_letters, degree)
    values = [ZERO] * len(index)
    for word, c in expand_tree_unchecked(tree):
        position = index.get(word)
        if position is not None:
            values[position] = Fraction(c)
    return lyndon_coordinates_from_values(n_letters, degree, values)


@cache
def _lyndon_index(n_letters: int, degree: int) -> dict[Word, int]:
    return {w: k for k, w in enumerate(lyndon_words(n_letters, degree))}


@cache
def _hall_trees(n_letters: int, degree: int) -> tuple[Tree, ...]:
    # Hall set up to `degree`, in Hall order (degree first, then construction order).
    ordered: list[Tree] = list(range(n_letters))
    by_degree: dict[int, list[Tree]] = {1: list(range(n_letters))}
    for n in range(2, degree + 1):
        position = {t: i for i, t in enumerate(ordered)}
        found = []
        for d1 in range(n - 1, 0, -1):
            for t1 in by_degree[d1]:
                for t2 in by_degree[n - d1]:
                    if position[t1] <= position[t2]:
                        continue
                    if not isinstance(t1, int) and position[t1[1]] > position[t2]:
                        continue
                    found.append((t1, t2))
        found.sort(key=lambda t: (position[t[0]], position[t[1]]))
        by_degree[n] = found
        ordered.extend(found)
    return tuple(ordered)


def _right_normed(letters: Word) -> Tree:
    tree: Tree = letters[-1]
    for letter in reversed(letters[:-1]):
        tree = (letter, tree)
    return tree


def _reduce(pivots: dict[Word, dict[Word, Fraction]], vector: dict[Word, Fraction]) -> dict[Word, Fraction]:
    # Gaussian elimination against rows keyed by their smallest (pivot) Lyndon word.
    vector = dict(vector)
    while vector:
        lead = min(vector)
        row = pivots.get(lead)
        if row is None:
            return vector
        add_scaled(vector, row.items(), -(vector[lead] / row[lead]))
    return vector


@cache
def _right_normed_trees(n_letters: int, degree: int) -> tuple[Tree, ...]:
    # For each multidegree, the lexicographically first right-normed monomials that are linearly
    # independent (exact elimination in Lyndon coordinates), until the block is spanned.
    from sympy.utilities.iterables import multiset_permutations

    blocks = {key: len(members) for key, members in multidegree_blocks(n_letters, degree)}
    chosen: list[Tree] = []
    for block in sorted(blocks, reverse=True):  # (n-1, 1) first: A-heavy blocks lead, as for Lyndon words
        letters = [letter for letter, count in enumerate(block) for _ in range(count)]
        pivots: dict[Word, dict[Word, Fraction]] = {}
        for candidate in multiset_permutations(letters):
            tree = _right_normed(tuple(candidate))
            reduced = _reduce(pivots, _tree_coordinates(tree, n_letters))
            if reduced:
                pivots[min(reduced)] = reduced
                chosen.append(tree)
                if len(pivots) == blocks[block]:
                    break
        if len(pivots) != blocks[block]:  # pragma: no cover - right-normed monomials always span
            raise AssertionError(f"right-normed monomials do not span the block {block}")
    return tuple(chosen)


def basis_trees(basis: str, n_letters: int, degree: int) -> tuple[Tree, ...]:
    """The basis elements of exact ``degree`` as bracket trees, in the basis order.

    Examples
    --------
    >>> from workbench.lie import tree_to_string
    >>> [tree_to_string(t) for t in basis_trees("hall", 2, 3)]
    ['[[B,A],A]', '[[B,A],B]']
    >>> [tree_to_string(t) for t in basis_trees("right-normed", 2, 3)]
    ['[A,[A,B]]', '[B,[A,B]]']

    The work is estimated first and refused past the package's budget: Hall ``degree ≤ 14`` and
    right-normed ``degree ≤ 13`` for two letters (11 and 10 for three), Lyndon as :func:`lyndon_words`.
    """
    if basis not in BASES:
        raise ValueError(f"basis must be one of {', '.join(map(repr, BASES))}, got {basis!r}")
    n_letters = check_integer("n_letters", n_letters, 1)
    degree = check_integer("degree", degree, 1)
    check_budget(
        "degree", degree, f"the {basis} basis on n_letters={n_letters} letters", basis_change_seconds, basis, n_letters
    )
    return _basis_trees(basis, n_letters, degree)


@cache
def _basis_trees(basis: str, n_letters: int, degree: int) -> tuple[Tree, ...]:
    if basis == "lyndon":
        return tuple(_lyndon_tree(w) for w in lyndon_words(n_letters, degree))
    if basis == "hall":
        return tuple(t for t in _hall_trees(n_letters, degree) if tree_degree(t) == degree)
    return _right_normed_trees(n_letters, degree)


@cache
def _coordinate_matrix(basis: str, n_letters: int, degree: int):
    # Per multidegree: (Lyndon words of the block, basis trees of the block, QQ matrix whose column i
    # holds the Lyndon coordinates of basis tree i).
    from sympy import ZZ
    from sympy.polys.matrices import DomainMatrix

    lyndon = lyndon_words(n_letters, degree)
    blocks: dict[tuple[int, ...], tuple[list[Word], list[Tree]]] = {
        key: ([lyndon[k] for k in members], []) for key, members in multidegree_blocks(n_letters, degree)
    }
    for tree in _basis_trees(basis, n_letters, degree):
        blocks[multidegree(tree_letters(tree), n_letters)][1].append(tree)
    out = {}
    for key, (words, trees) in blocks.items():
        columns = [_tree_coordinates(t, n_letters) for t in trees]
        # Integer entries: a bracket monomial has integer Lyndon coordinates (T is integral, unitriangular).
        rows = [[ZZ(int(col.get(w, 0))) for col in columns] for w in words]
        out[key] = (words, trees, DomainMatrix(rows, (len(words), len(trees)), ZZ))
    return out


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

    The keys must be Lyndon words over ``n_letters`` letters; their longest length is the degree that
    the basis change is budgeted for (as :func:`basis_trees`).
    """
    if basis not in BASES:
        raise ValueError(f"basis must be one of {', '.join(map(repr, BASES))}, got {basis!r}")
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
    if basis == "lyndon":
        return [(_lyndon_tree(w), c) for w, c in sorted(coordinates.items(), key=lambda x: (len(x[0]), x[0])) if c]
    from sympy import ZZ
    from sympy.polys.matrices import DomainMatrix

    by_degree: dict[int, dict[Word, Fraction]] = defaultdict(dict)
    for w, c in coordinates.items():
        if c:
            by_degree[len(w)][w] = c
    result: list[tuple[Tree, Fraction]] = []
    for degree in sorted(by_degree):
        order = {t: i for i, t in enumerate(_basis_trees(basis, n_letters, degree))}
        found: list[tuple[Tree, Fraction]] = []
        for words, trees, matrix in _coordinate_matrix(basis, n_letters, degree).values():
            target = [by_degree[degree].get(w, Fraction(0)) for w in words]
            if not any(target):
                continue
            # Fraction-free solve over ZZ (much faster than LU over QQ): M X = den·b with b = D·target.
            common = math.lcm(*(c.denominator for c in target))
            rhs = DomainMatrix([[ZZ(int(c * common))] for c in target], (len(words), 1), ZZ)
            numerators, den = matrix.solve_den(rhs)
            for tree, value in zip(trees, numerators.to_Matrix(), strict=True):
                if value:
                    found.append((tree, Fraction(int(value), int(den) * common)))
        result.extend(sorted(found, key=lambda x: order[x[0]]))
    return result
