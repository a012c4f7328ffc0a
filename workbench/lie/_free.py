"""The free associative algebra over exact fractions, and bracket trees: the primitives of ``lie``.

A word is a tuple of letter indices ``0, 1, 2, ...`` (displayed ``A, B, C, ...``).  An element of the
free associative algebra is a dict ``{word: Fraction}`` (exact, never floats; zero coefficients are
dropped).  A Lie monomial is a *bracket tree*: a letter index, or a pair ``(left, right)`` meaning
``[left, right] = left·right − right·left`` (Reutenauer, *Free Lie Algebras*, §0.2).

Every other module of the package imports from this one and this one imports none of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from fractions import Fraction
from functools import cache

__all__ = ["Tree", "bracket", "expand_tree", "tree_degree", "tree_to_string"]

Word = tuple[int, ...]
Tree = int | tuple["Tree", "Tree"]
FreeElement = dict[Word, Fraction]

NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ZERO = Fraction(0)


def check_degree(degree) -> int:
    """Boundary check of a truncation degree: a positive integer (``bool`` refused)."""
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    return degree


def multidegree(word: Word, n_letters: int) -> tuple[int, ...]:
    """How many times each letter occurs in ``word``.

    Examples
    --------
    >>> multidegree((0, 1, 1), 2)
    (1, 2)
    """
    counts = [0] * n_letters
    for letter in word:
        counts[letter] += 1
    return tuple(counts)


def add_scaled(target: dict, terms: Iterable[tuple[Word, object]], scale) -> dict:
    """``target += scale · terms`` in place (terms as ``(word, coefficient)`` pairs), dropping zeros."""
    for w, c in terms:
        value = target.get(w, ZERO) + scale * c
        if value:
            target[w] = value
        else:
            target.pop(w, None)
    return target


def commutator_into(out: defaultdict, x: Iterable[tuple[Word, object]], y: Iterable[tuple[Word, object]]) -> dict:
    """``out + (xy − yx)`` for ``(word, coefficient)`` pairs, zeros dropped.

    The unchecked core of :func:`bracket` (Fractions) and :func:`expand_tree` (integers).
    """
    y = tuple(y)
    for u, a in x:
        for v, b in y:
            out[u + v] += a * b
            out[v + u] -= a * b
    return {w: c for w, c in out.items() if c}


def bracket(x: FreeElement, y: FreeElement) -> FreeElement:
    """Commutator ``[x, y] = xy − yx`` in the free associative algebra.

    Examples
    --------
    >>> from fractions import Fraction
    >>> sorted(bracket({(0,): Fraction(1)}, {(1,): Fraction(1)}).items())
    [((0, 1), Fraction(1, 1)), ((1, 0), Fraction(-1, 1))]
    """
    return commutator_into(defaultdict(Fraction), x.items(), y.items())


def tree_degree(tree: Tree) -> int:
    """Number of letters in a bracket tree.

    Examples
    --------
    >>> tree_degree(((0, 1), 1))
    3
    """
    return 1 if isinstance(tree, int) else tree_degree(tree[0]) + tree_degree(tree[1])


def tree_letters(tree: Tree) -> Word:
    """Letters of a tree read left to right."""
    return (tree,) if isinstance(tree, int) else tree_letters(tree[0]) + tree_letters(tree[1])


@cache
def expand_tree(tree: Tree) -> tuple[tuple[Word, int], ...]:
    """Expand a bracket tree into words with integer coefficients (memoised, hence a tuple).

    Examples
    --------
    >>> from workbench.lie import format_word
    >>> [(format_word(w), c) for w, c in expand_tree((0, (0, 1)))]
    [('AAB', 1), ('ABA', -2), ('BAA', 1)]
    """
    if isinstance(tree, int):
        return (((tree,), 1),)
    return tuple(sorted(commutator_into(defaultdict(int), expand_tree(tree[0]), expand_tree(tree[1])).items()))


def tree_to_string(tree: Tree, names: str = NAMES) -> str:
    """Render ``[A,[A,B]]`` (no spaces, the JSON contract's form).

    Examples
    --------
    >>> tree_to_string(((0, 1), 1))
    '[[A,B],B]'
    """
    if isinstance(tree, int):
        return names[tree]
    return f"[{tree_to_string(tree[0], names)},{tree_to_string(tree[1], names)}]"
