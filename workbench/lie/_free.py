"""The free associative algebra over exact fractions, and bracket trees: the primitives of ``lie``.

A word is a tuple of letter indices ``0, 1, 2, ...`` (displayed ``A, B, C, ...``).  An element of the
free associative algebra is a dict ``{word: Fraction}`` (exact, never floats; zero coefficients are
dropped).  A Lie monomial is a *bracket tree*: a letter index, or a pair ``(left, right)`` meaning
``[left, right] = left·right − right·left`` (Reutenauer, *Free Lie Algebras*, §0.2).

Every other module of the package imports from this one and this one imports none of them.
"""

from __future__ import annotations

import operator
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from fractions import Fraction
from functools import cache
from numbers import Rational

__all__ = ["Tree", "bracket", "expand_tree", "tree_degree", "tree_to_string"]

Word = tuple[int, ...]
Tree = int | tuple["Tree", "Tree"]
FreeElement = dict[Word, Fraction]

NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ZERO = Fraction(0)


# Bracket trees deeper than this are refused: the renderers recurse once per level, and every basis
# element of a supported degree (at most 64) is far shallower.
MAX_TREE_DEPTH = 500


def as_integer(value) -> int | None:
    """``value`` as a Python int if it is an integer (int, numpy integer scalar, 0-d integer array), else None.

    ``bool`` and numpy booleans are not integers here.
    """
    if isinstance(value, bool):
        return None
    np = sys.modules.get("numpy")  # a numpy value exists only once numpy is imported: no import here
    if np is not None and (
        isinstance(value, np.bool_) or (isinstance(value, np.ndarray) and (value.dtype.kind not in "iu" or value.ndim))
    ):
        return None
    try:
        return int(operator.index(value))
    except TypeError:
        return None


def check_integer(name: str, value, low: int, high: int | None = None, expected: str | None = None) -> int:
    """Boundary check of an integer parameter in ``[low, high]``; ``ValueError`` naming parameter and value.

    Python ints, numpy integer scalars and 0-d integer arrays are accepted; bools and floats are not.
    """
    number = as_integer(value)
    if number is None or number < low or (high is not None and number > high):
        if expected is None:
            expected = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return number


def check_degree(degree, name: str = "degree") -> int:
    """Boundary check of a truncation degree: a positive integer (``bool`` refused, numpy integers accepted)."""
    return check_integer(name, degree, 1, expected="a positive integer")


def check_word(name: str, word, n_letters: int | None = None) -> Word:
    """Boundary check of a word: a sequence of letter indices ``0 ≤ i < n_letters``, returned as a tuple."""
    if isinstance(word, str | bytes) or not hasattr(word, "__iter__"):
        raise TypeError(f"{name} must be a sequence of letter indices (0 for A, 1 for B, ...), got {word!r}")
    letters = []
    for i, letter in enumerate(word):
        number = as_integer(letter)
        if number is None or number < 0 or (n_letters is not None and number >= n_letters):
            top = "" if n_letters is None else f" < {n_letters}"
            raise ValueError(f"{name}[{i}] must be a letter index, an integer >= 0{top}, got {letter!r}")
        letters.append(number)
    return tuple(letters)


def check_element(name: str, element, n_letters: int | None = None) -> dict[Word, Fraction]:
    """Boundary check of an element ``{word: rational coefficient}`` of the free associative algebra."""
    if not isinstance(element, Mapping):
        raise TypeError(f"{name} must be a dict {{word: coefficient}}, got {type(element).__name__}")
    out: dict[Word, Fraction] = {}
    for word, c in element.items():
        key = check_word(f"{name} key", word, n_letters)
        number = as_integer(c)
        if number is not None:
            c = number
        if isinstance(c, bool) or not isinstance(c, Rational):
            raise TypeError(
                f"{name}[{word!r}] must be an exact rational (int or Fraction; lie/ never uses floats), got {c!r}"
            )
        out[key] = out.get(key, ZERO) + Fraction(c)
    return {w: c for w, c in out.items() if c}


def check_tree(name: str, tree, n_letters: int | None = None) -> int:
    """Boundary check of a bracket tree (iterative, depth ≤ :data:`MAX_TREE_DEPTH`); returns its degree."""
    degree, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TREE_DEPTH:
            raise ValueError(f"{name} must have bracket depth at most {MAX_TREE_DEPTH}, got a deeper tree")
        number = as_integer(node)
        if number is not None:
            if number < 0 or (n_letters is not None and number >= n_letters):
                top = "" if n_letters is None else f" and < {n_letters}"
                raise ValueError(f"{name} letters must be integers >= 0{top}, got {node!r}")
            degree += 1
        elif isinstance(node, tuple) and len(node) == 2:
            stack.extend([(node[1], depth + 1), (node[0], depth + 1)])
        else:
            raise TypeError(f"{name} must be a letter index (int >= 0) or a pair (left, right) of trees, got {node!r}")
    return degree


def normalize_tree(tree) -> Tree:
    """A checked tree with numpy integer letters replaced by Python ints (hashable, cache-friendly)."""
    number = as_integer(tree)
    if number is not None:
        return number
    return (normalize_tree(tree[0]), normalize_tree(tree[1]))


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
    r"""Commutator ``[x, y] = xy − yx`` in the free associative algebra.

    .. math:: [x, y] = \sum_{u, v} x_u y_v\,(uv - vu).

    ``x`` and ``y`` are dicts ``{word: coefficient}`` with exact rational coefficients.

    Examples
    --------
    >>> from fractions import Fraction
    >>> sorted(bracket({(0,): Fraction(1)}, {(1,): Fraction(1)}).items())
    [((0, 1), Fraction(1, 1)), ((1, 0), Fraction(-1, 1))]
    """
    x, y = check_element("x", x), check_element("y", y)
    return commutator_into(defaultdict(Fraction), x.items(), y.items())


def tree_degree(tree: Tree) -> int:
    """Number of letters in a bracket tree.

    Examples
    --------
    >>> tree_degree(((0, 1), 1))
    3
    """
    return check_tree("tree", tree)


def tree_letters(tree: Tree) -> Word:
    """Letters of a tree read left to right."""
    return (tree,) if isinstance(tree, int) else tree_letters(tree[0]) + tree_letters(tree[1])


# Expanding a tree of degree d yields at most 2^(d−1) words; at ~1 µs per word and letter (measured:
# a degree-18 Lyndon element, 5,406 words, 9 ms) trees past degree 19 are refused (2^19·20 µs ≈ 10 s).
MAX_EXPAND_DEGREE = 19


def expand_tree(tree: Tree) -> tuple[tuple[Word, int], ...]:
    """Expand a bracket tree into words with integer coefficients (memoised, hence a tuple).

    Trees of degree above ``MAX_EXPAND_DEGREE`` (19) are refused: the expansion has up to
    :math:`2^{d-1}` words.

    Examples
    --------
    >>> from workbench.lie import format_word
    >>> [(format_word(w), c) for w, c in expand_tree((0, (0, 1)))]
    [('AAB', 1), ('ABA', -2), ('BAA', 1)]
    """
    degree = check_tree("tree", tree)
    if degree > MAX_EXPAND_DEGREE:
        raise ValueError(
            f"tree must have degree at most {MAX_EXPAND_DEGREE} to be expanded (up to 2^(d-1) words), "
            f"got degree {degree}"
        )
    return expand_tree_unchecked(normalize_tree(tree))


@cache
def expand_tree_unchecked(tree: Tree) -> tuple[tuple[Word, int], ...]:
    """The unchecked core of :func:`expand_tree` (trees built by the package)."""
    if isinstance(tree, int):
        return (((tree,), 1),)
    left, right = expand_tree_unchecked(tree[0]), expand_tree_unchecked(tree[1])
    return tuple(sorted(commutator_into(defaultdict(int), left, right).items()))


def tree_to_string(tree: Tree, names: str = NAMES) -> str:
    """Render ``[A,[A,B]]`` (no spaces, the JSON contract's form).

    Examples
    --------
    >>> tree_to_string(((0, 1), 1))
    '[[A,B],B]'
    """
    if not isinstance(names, str) or not names:
        raise TypeError(f"names must be a nonempty string of letter names, got {names!r}")
    check_tree("tree", tree, len(names))
    return tree_to_string_unchecked(normalize_tree(tree), names)


def tree_to_string_unchecked(tree: Tree, names: str = NAMES) -> str:
    """The unchecked core of :func:`tree_to_string` (trees built by the package)."""
    if isinstance(tree, int):
        return names[tree]
    return f"[{tree_to_string_unchecked(tree[0], names)},{tree_to_string_unchecked(tree[1], names)}]"
