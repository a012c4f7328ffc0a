r"""A truncated Lie series held by its exact Lyndon-basis coordinates: renderers and matrix evaluation.

:class:`LieSeries` is what every series of the package returns (BCH and its relatives, Zassenhaus,
Hausdorff, Magnus).  Its terms are read in any of the three bases (Lyndon, Hall, right-normed; see
:mod:`workbench.lie._bases`), rendered as text, LaTeX, the JSON contract of DESIGN.md, or a sympy
expression in noncommutative symbols, and evaluated on numpy or torch matrices.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction

from workbench.lie._free import (
    NAMES,
    Tree,
    Word,
    check_integer,
    expand_tree_unchecked,
    tree_degree,
    tree_letters,
    tree_to_string_unchecked,
)

# numpy, the backend, the validation helpers and the bases are imported where they are used: a series made by
# `bch` (and its whole process) needs none of them until it is read in another basis or evaluated.

__all__ = ["LieSeries"]


class DeferredCoordinates:
    """Coordinates not built yet (package-internal): ``build()`` returns the ``{word: Fraction}`` dict.

    The BCH family holds its result as exact integer levels (a few bytes per term) and passes one of these
    instead of the dict; :attr:`LieSeries.coordinates` builds the dict on its first read and keeps it.
    """

    __slots__ = ("build",)

    def __init__(self, build):
        self.build = build


class _CoordinatesField:
    # The `coordinates` field of LieSeries: the dict, or a DeferredCoordinates built into the dict on first read.
    # The generated __init__ and __eq__ reach it by name, so a series behaves as if the dict had been passed.

    def __get__(self, series, owner=None):
        if series is None:
            raise AttributeError("coordinates")
        value = series.__dict__["_coordinates"]
        if isinstance(value, DeferredCoordinates):
            value = series.__dict__["_coordinates"] = value.build()
        return value

    def __set__(self, series, value):
        series.__dict__["_coordinates"] = value


@dataclass(frozen=True)
class LieSeries:
    """A truncated Lie series, stored by its exact Lyndon-basis coordinates.

    Attributes
    ----------
    name : str
        What the series is (``"bch"``, ``"zassenhaus"``...).
    n_letters : int
        Number of generators (``A, B, C...``).
    degree : int
        Truncation degree: every term of degree ≤ ``degree`` is exact and present.
    coordinates : dict
        ``{Lyndon word: Fraction}``.  The BCH family keeps its exact integer levels instead and builds this dict
        on its first read (then keeps it); the series behaves as if the dict had been passed.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import expm, logm
    >>> from workbench.lie import bch
    >>> series = bch(6)
    >>> series.terms("hall")[2]  # (tree, coefficient): ½[A,B] = −½[B,A]
    ((1, 0), Fraction(-1, 2))
    >>> A, B = 0.01 * np.eye(2, k=1), 0.01 * np.eye(2, k=-1)
    >>> bool(np.allclose(series.evaluate(A, B), logm(expm(A) @ expm(B)), atol=1e-15))
    True
    """

    name: str
    n_letters: int
    degree: int
    coordinates: dict[Word, Fraction] = field(repr=False)
    letter_weights: tuple[int, ...] | None = None  # Magnus: X_j carries h^{j+1}
    # A logarithm of exponentials log(∏ e^{c_i X_{l_i}}): the factors (l_i, c_i), for the convergence check.
    factors: tuple[tuple[int, Fraction], ...] | None = field(default=None, compare=False, repr=False)

    def _h_power(self, tree: Tree) -> int | None:
        if self.letter_weights is None:
            return None
        return sum(self.letter_weights[i] for i in tree_letters(tree))

    def _label(self, tree: Tree, latex: bool = False) -> str:
        power = self._h_power(tree)
        text = tree_to_string_unchecked(tree, NAMES[: self.n_letters])
        if power is None:
            return text
        h = "h" if power == 1 else (f"h^{{{power}}}" if latex else f"h^{power}")
        return f"{h} {text}"

    def terms(self, basis: str = "lyndon") -> list[tuple[Tree, Fraction]]:
        """``(bracket tree, coefficient)`` pairs in ``basis``, by degree, zero terms omitted.

        A change to the Hall or Chibrikov (right-normed) basis is budgeted as :func:`~workbench.lie.basis_trees`
        (for two letters: Hall through degree 15, Chibrikov through 16).
        """
        from workbench.lie._bases import BASES, change_of_basis_unchecked
        from workbench.validation import check_choice

        check_choice("basis", basis, BASES)
        return change_of_basis_unchecked(self.coordinates, basis, self.n_letters)

    def component(self, degree: int) -> LieSeries:
        """The homogeneous part of the given degree (for Zassenhaus: the factor ``C_n``)."""
        degree = check_integer("degree", degree, 1)
        part = {w: c for w, c in self.coordinates.items() if len(w) == degree}
        return LieSeries(f"{self.name}[{degree}]", self.n_letters, self.degree, part, self.letter_weights)

    def nonzero_per_degree(self) -> list[int]:
        """Number of nonzero Lyndon-basis coefficients in degrees ``1..degree``."""
        counts = [0] * self.degree
        for w, c in self.coordinates.items():
            if c:
                counts[len(w) - 1] += 1
        return counts

    def to_json(self, basis: str = "lyndon") -> dict:
        """The DESIGN.md contract: series, degree, basis, terms (bracket, coefficient, degree)."""
        names = NAMES[: self.n_letters]
        return {
            "series": self.name,
            "degree": self.degree,
            "basis": basis,
            "generators": list(names),
            "terms": [
                {"bracket": tree_to_string_unchecked(t, names), "coefficient": str(c), "degree": tree_degree(t)}
                | ({} if self.letter_weights is None else {"h_power": self._h_power(t)})
                for t, c in self.terms(basis)
            ],
        }

    def to_text(self, basis: str = "lyndon") -> str:
        """Plain text, e.g. ``A + B + 1/2 [A,B] + 1/12 [A,[A,B]] + …``."""
        return _render(self.terms(basis), lambda c: str(abs(c)), self._label, "0")

    def to_latex(self, basis: str = "lyndon") -> str:
        r"""LaTeX with our own bracket printer (arguments are never reordered), e.g. ``\frac{1}{2}[A,B]``."""

        def coefficient(c: Fraction) -> str:
            c = abs(c)
            return str(c.numerator) if c.denominator == 1 else rf"\frac{{{c.numerator}}}{{{c.denominator}}}"

        return _render(self.terms(basis), coefficient, lambda t: self._label(t, latex=True), "0")

    def to_words(self) -> dict[Word, Fraction]:
        """The series expanded in the free associative algebra (all words)."""
        from workbench.lie._bases import lyndon_tree

        out: dict[Word, Fraction] = defaultdict(Fraction)
        for w, c in self.coordinates.items():
            for u, a in expand_tree_unchecked(lyndon_tree(w)):
                out[u] += c * a
        return {u: c for u, c in out.items() if c}

    def to_sympy(self):
        """The expanded series as a sympy expression in noncommutative symbols ``A, B, …``."""
        import sympy as sp

        symbols = sp.symbols(" ".join(NAMES[: self.n_letters]), commutative=False, seq=True)
        total = sp.Integer(0)
        for word, c in sorted(self.to_words().items()):
            total += sp.Rational(c.numerator, c.denominator) * sp.Mul(*(symbols[i] for i in word))
        return total

    def evaluate(self, *matrices, basis: str = "lyndon", check_convergence: bool = True):
        r"""Evaluate on matrices ``shape=[..., n, n]`` (numpy or torch; batched), one per generator.

        Each bracket tree is evaluated once (shared subtrees are memoised) and the terms are summed
        with float coefficients.

        For a logarithm of exponentials :math:`\log\prod_i e^{c_iX_{l_i}}` (BCH, multi-factor BCH, symmetric
        BCH, the group commutator) a ``RuntimeWarning`` says when :math:`s = \sum_i |c_i|\,\lVert X_{l_i}\rVert_2
        \ge \pi`.  Below it the series grouped by degree converges absolutely to that logarithm: it is the Magnus
        series of the piecewise-constant :math:`A(t)` equal to :math:`c_iX_{l_i}` on the i-th of unit intervals
        (its degree-n term is the Magnus term :math:`\Omega_n`), and :math:`\int\lVert A\rVert_2 = s < \pi` is
        Moan and Niesen's (2008) sufficient condition.  Beyond it nothing is guaranteed and a truncation may
        approximate nothing.  ``check_convergence=False`` skips the check (a caller that knows its matrices generate
        a nilpotent algebra, where the series terminates, or that measures the error itself).
        """
        import numpy as np

        from workbench.backend import namespace
        from workbench.validation import as_array, check_finite_output, check_square

        if len(matrices) != self.n_letters:
            raise ValueError(f"matrices must be one per generator ({self.n_letters}), got {len(matrices)}")
        if not isinstance(check_convergence, bool):
            raise TypeError(f"check_convergence must be True or False, got {check_convergence!r}")
        arrays = [as_array(f"matrices[{i}]", m) for i, m in enumerate(matrices)]
        xp = namespace(**{f"matrices[{i}]": a for i, a in enumerate(arrays)})
        for i, m in enumerate(arrays):
            check_square(f"matrices[{i}]", m)
            if tuple(m.shape) != tuple(arrays[0].shape):
                raise ValueError(
                    f"matrices must share one shape, got {tuple(arrays[0].shape)} for matrices[0] "
                    f"and {tuple(m.shape)} for matrices[{i}]"
                )
        cache: dict[Tree, object] = {}

        def value(tree: Tree):
            if tree not in cache:
                if isinstance(tree, int):
                    cache[tree] = arrays[tree]
                else:
                    left, right = value(tree[0]), value(tree[1])
                    cache[tree] = left @ right - right @ left
            return cache[tree]

        total = xp.zeros_like(arrays[0])
        # A degree-k bracket grows like the k-th power of the entries: matrices near 1e300 overflow it, and
        # the sum is refused just below (naming the matrices) rather than returned as inf or nan.
        with np.errstate(over="ignore", invalid="ignore"):
            for tree, c in self.terms(basis):
                total = total + float(c) * value(tree)
        named = {f"matrices[{i}]": a for i, a in enumerate(arrays)}
        total = check_finite_output(f"the Lie series evaluated at the matrices (degree {self.degree})", total, **named)
        if self.factors is not None and check_convergence:  # after the overflow refusal, which says more
            self._warn_outside_convergence(arrays)
        return total

    def _warn_outside_convergence(self, arrays) -> None:
        import numpy as np

        from workbench.backend import to_numpy

        norms = [float(np.max(np.linalg.norm(to_numpy(a), 2, axis=(-2, -1)), initial=0.0)) for a in arrays]
        total = sum(abs(float(c)) * norms[letter] for letter, c in self.factors)
        if total >= math.pi:
            product = "".join(f"e^{{{c}·{NAMES[letter]}}}" for letter, c in self.factors)
            warnings.warn(
                f"{self.name}: Σ|c|·‖X‖₂ = {total:.4g} ≥ π over the factors of {product}: outside the guaranteed "
                "convergence domain of the series (Moan & Niesen 2008, for the Magnus series of the product), so "
                "the truncation may approximate nothing; scale the matrices down or compare with a dense logm",
                RuntimeWarning,
                stacklevel=2,
            )

    def __getstate__(self):
        # pickled with its dict of coordinates (a deferred build may hold what cannot be pickled)
        return {**self.__dict__, "_coordinates": self.coordinates}


# After the dataclass is made: its field `coordinates` (required, not in the repr) keeps its generated __init__,
# __eq__ and fields(); only the storage goes through the descriptor.
LieSeries.coordinates = _CoordinatesField()


def _render(terms, coefficient, bracket, zero: str) -> str:
    pieces = []
    for tree, c in terms:
        sign = "-" if c < 0 else "+"
        magnitude = "" if abs(c) == 1 else coefficient(c) + " "
        pieces.append((sign, f"{magnitude}{bracket(tree)}"))
    if not pieces:
        return zero
    first_sign, first = pieces[0]
    text = ("-" if first_sign == "-" else "") + first
    return text + "".join(f" {s} {p}" for s, p in pieces[1:])
