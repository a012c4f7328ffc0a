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

from workbench.lie._fast import lyndon_coordinates_from_values
from workbench.lie._free import (
    ZERO,
    FreeElement,
    Tree,
    Word,
    add_scaled,
    expand_tree,
    multidegree,
    tree_degree,
    tree_letters,
)
from workbench.lie._words import format_word, is_lyndon, lyndon_words, multidegree_blocks, standard_factorization

__all__ = ["BASES", "basis_trees", "change_of_basis", "lyndon_coordinates", "lyndon_tree"]

BASES = ("lyndon", "hall", "right-normed")


@cache
def lyndon_tree(word: Word) -> Tree:
    """Standard bracketing ``P_w`` of a Lyndon word.

    Examples
    --------
    >>> from workbench.lie import tree_to_string
    >>> tree_to_string(lyndon_tree((0, 0, 1))), tree_to_string(lyndon_tree((0, 1, 1)))
    ('[A,[A,B]]', '[[A,B],B]')
    """
    if len(word) == 1:
        return word[0]
    u, v = standard_factorization(word)
    return (lyndon_tree(u), lyndon_tree(v))


def lyndon_coordinates(element: FreeElement) -> dict[Word, Fraction]:
    """Decompose a Lie polynomial (given as words) in the Lyndon basis.

    Repeatedly removes the smallest word ``w`` (which must be Lyndon) with ``c_w P_w``.

    Raises
    ------
    ValueError
        If ``element`` is not a Lie polynomial.

    Examples
    --------
    >>> coords = lyndon_coordinates(dict(expand_tree(((0, 1), 0))))  # [[A,B],A] = -[A,[A,B]]
    >>> {format_word(w): int(c) for w, c in coords.items()}
    {'AAB': -1}
    """
    remaining = {w: Fraction(c) for w, c in element.items() if c}
    coordinates: dict[Word, Fraction] = {}
    while remaining:
        w = min(remaining)
        if not is_lyndon(w):
            raise ValueError(
                f"element must be a Lie polynomial, but its smallest word {format_word(w)!r} is not Lyndon"
            )
        c = remaining[w]
        coordinates[w] = c
        add_scaled(remaining, expand_tree(lyndon_tree(w)), -c)
    return coordinates


def _tree_coordinates(tree: Tree, n_letters: int) -> dict[Word, Fraction]:
    # Lyndon coordinates of a bracket monomial: its word coefficients on the Lyndon words of its degree,
    # then the engine's exact triangular solve (a tree is a Lie polynomial by construction).
    degree = tree_degree(tree)
    index = _lyndon_index(n_letters, degree)
    values = [ZERO] * len(index)
    for word, c in expand_tree(tree):
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


@cache
def basis_trees(basis: str, n_letters: int, degree: int) -> tuple[Tree, ...]:
    """The basis elements of exact ``degree`` as bracket trees, in the basis order.

    Examples
    --------
    >>> from workbench.lie import tree_to_string
    >>> [tree_to_string(t) for t in basis_trees("hall", 2, 3)]
    ['[[B,A],A]', '[[B,A],B]']
    >>> [tree_to_string(t) for t in basis_trees("right-normed", 2, 3)]
    ['[A,[A,B]]', '[B,[A,B]]']
    """
    if basis == "lyndon":
        return tuple(lyndon_tree(w) for w in lyndon_words(n_letters, degree))
    if basis == "hall":
        return tuple(t for t in _hall_trees(n_letters, degree) if tree_degree(t) == degree)
    if basis == "right-normed":
        return _right_normed_trees(n_letters, degree)
    raise ValueError(f"basis must be one of {', '.join(map(repr, BASES))}, got {basis!r}")


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
    for tree in basis_trees(basis, n_letters, degree):
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
    """
    if basis not in BASES:
        raise ValueError(f"basis must be one of {', '.join(map(repr, BASES))}, got {basis!r}")
    if basis == "lyndon":
        return [(lyndon_tree(w), c) for w, c in sorted(coordinates.items(), key=lambda x: (len(x[0]), x[0])) if c]
    from sympy import ZZ
    from sympy.polys.matrices import DomainMatrix

    by_degree: dict[int, dict[Word, Fraction]] = defaultdict(dict)
    for w, c in coordinates.items():
        if c:
            by_degree[len(w)][w] = c
    result: list[tuple[Tree, Fraction]] = []
    for degree in sorted(by_degree):
        order = {t: i for i, t in enumerate(basis_trees(basis, n_letters, degree))}
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
