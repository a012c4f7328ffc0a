r"""Exact Lie series: BCH and its relatives, Zassenhaus, Hausdorff.

All coefficients are exact ``Fraction``\ s.  The logarithm of a product of exponentials of
generators, :math:`\log(e^{s_1 X_{l_1}} \cdots e^{s_m X_{l_m}})`, is computed word by word: the
coefficient of a word :math:`w` is

.. math::

    \sum_{k \ge 1} \frac{(-1)^{k+1}}{k} \sum_{w = u_1 \cdots u_k} \prod_j E(u_j),

over factorisations of :math:`w` into nonempty blocks, where :math:`E(u)` is the coefficient of
:math:`u` in the product of exponentials (Goldberg 1956, generalised to any list of factors).  Only
the coefficients of *Lyndon* words are computed; since the Lyndon basis satisfies
:math:`P_w = w + (\text{larger words})`, they determine the Lyndon-basis coordinates by
forward substitution.  This avoids expanding :math:`\log(e^A e^B)` over all words.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache

from workbench.backend import namespace
from workbench.lie._bases import (
    Tree,
    change_of_basis,
    expand_tree,
    lyndon_coordinates,
    lyndon_tree,
    tree_degree,
    tree_letters,
    tree_to_string,
)
from workbench.lie._fast import (
    bch_even_degree,
    increasing_product_log_coefficients,
    lyndon_coordinates_from_values,
)
from workbench.lie._words import Word, lyndon_words
from workbench.validation import as_array, check_square

__all__ = [
    "LieSeries",
    "bch",
    "bch_many",
    "commutator_log",
    "hausdorff",
    "log_of_exponentials",
    "symmetric_bch",
    "zassenhaus",
]

NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
Factor = tuple[int, Fraction]


def _check_degree(degree) -> int:
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    return degree


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
        ``{Lyndon word: Fraction}``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import expm, logm
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

    def _h_power(self, tree: Tree) -> int | None:
        if self.letter_weights is None:
            return None
        return sum(self.letter_weights[i] for i in tree_letters(tree))

    def _label(self, tree: Tree, latex: bool = False) -> str:
        power = self._h_power(tree)
        text = tree_to_string(tree, NAMES[: self.n_letters])
        if power is None:
            return text
        h = "h" if power == 1 else (f"h^{{{power}}}" if latex else f"h^{power}")
        return f"{h} {text}"

    def terms(self, basis: str = "lyndon") -> list[tuple[Tree, Fraction]]:
        """``(bracket tree, coefficient)`` pairs in ``basis``, by degree, zero terms omitted."""
        return change_of_basis(self.coordinates, basis, self.n_letters)

    def component(self, degree: int) -> LieSeries:
        """The homogeneous part of the given degree (for Zassenhaus: the factor ``C_n``)."""
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
                {"bracket": tree_to_string(t, names), "coefficient": str(c), "degree": tree_degree(t)}
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
        out: dict[Word, Fraction] = defaultdict(Fraction)
        for w, c in self.coordinates.items():
            for u, a in expand_tree(lyndon_tree(w)):
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

    def evaluate(self, *matrices, basis: str = "lyndon"):
        """Evaluate on matrices ``shape=[..., n, n]`` (numpy or torch; batched), one per generator.

        Each bracket tree is evaluated once (shared subtrees are memoised) and the terms are summed
        with float coefficients.
        """
        if len(matrices) != self.n_letters:
            raise ValueError(f"matrices must be one per generator ({self.n_letters}), got {len(matrices)}")
        arrays = [as_array(f"matrices[{i}]", m) for i, m in enumerate(matrices)]
        xp = namespace(*arrays)
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
        for tree, c in self.terms(basis):
            total = total + float(c) * value(tree)
        return total


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


@cache
def _product_coefficient(word: Word, factors: tuple[Factor, ...]) -> Fraction:
    # Coefficient of `word` in e^{s_1 X_{l_1}} ⋯ e^{s_m X_{l_m}}: cover the word, left to right, by
    # (possibly empty) runs of each factor's letter, weight s^p/p! for a run of length p.
    weights = {0: Fraction(1)}
    n = len(word)
    for letter, scale in factors:
        nxt: dict[int, Fraction] = defaultdict(Fraction)
        for position, weight in weights.items():
            nxt[position] += weight
            run = 0
            while position + run < n and word[position + run] == letter:
                run += 1
                nxt[position + run] += weight * scale**run / math.factorial(run)
        weights = nxt
    return weights.get(n, Fraction(0))


def _log_coefficient(word: Word, factors: tuple[Factor, ...]) -> Fraction:
    # Σ_k (−1)^{k+1}/k Σ_{word = u_1⋯u_k} Π E(u_j), by dynamic programming over (position, k).
    n = len(word)
    blocks = {(i, j): _product_coefficient(word[i:j], factors) for i in range(n) for j in range(i + 1, n + 1)}
    ways = [[Fraction(0)] * (n + 1) for _ in range(n + 1)]  # ways[k][j]: prefix of length j in k blocks
    ways[0][0] = Fraction(1)
    for k in range(1, n + 1):
        for j in range(k, n + 1):
            total = Fraction(0)
            for i in range(k - 1, j):
                if ways[k - 1][i]:
                    b = blocks[(i, j)]
                    if b:
                        total += ways[k - 1][i] * b
            ways[k][j] = total
    return sum((Fraction((-1) ** (k + 1), k) * ways[k][n] for k in range(1, n + 1)), Fraction(0))


def log_of_exponentials(factors, degree: int, n_letters: int | None = None, name: str = "log") -> LieSeries:
    r"""Lyndon coordinates of :math:`\log(e^{s_1 X_{l_1}} \cdots e^{s_m X_{l_m}})` up to ``degree``.

    Parameters
    ----------
    factors : sequence of (int, Fraction)
        ``(letter, scale)`` for each exponential, left to right.
    degree : int
        Truncation degree (≥ 1).
    n_letters : int, optional
        Alphabet size (default: the largest letter used + 1).
    name : str
        Name recorded on the series.

    Examples
    --------
    >>> from fractions import Fraction
    >>> log_of_exponentials([(0, Fraction(1)), (1, Fraction(1))], 3).to_text()
    'A + B + 1/2 [A,B] + 1/12 [A,[A,B]] + 1/12 [[A,B],B]'
    """
    degree = _check_degree(degree)
    factors = tuple((int(letter), Fraction(scale)) for letter, scale in factors)
    if not factors:
        raise ValueError("factors must name at least one exponential, got none")
    used = max(letter for letter, _ in factors) + 1
    n_letters = used if n_letters is None else n_letters
    if min(letter for letter, _ in factors) < 0 or n_letters < used:
        raise ValueError(f"factor letters must lie in 0..{n_letters - 1}, got {[f[0] for f in factors]}")
    # Fast path: one exponential per generator, in alphabet order, unit scales (BCH, multi-factor BCH).
    increasing = factors == tuple((letter, Fraction(1)) for letter in range(n_letters))
    coordinates: dict[Word, Fraction] = {}
    for d in range(1, degree + 1):
        if increasing and n_letters == 2 and d % 2 == 0:
            coordinates.update(bch_even_degree(coordinates, d))
            continue
        if increasing:
            values = increasing_product_log_coefficients(n_letters, d)
        else:
            values = [_log_coefficient(w, factors) for w in lyndon_words(n_letters, d)]
        coordinates.update(lyndon_coordinates_from_values(n_letters, d, values))
    return LieSeries(name, n_letters, degree, coordinates)


def bch(degree: int) -> LieSeries:
    r"""Baker–Campbell–Hausdorff series :math:`\log(e^A e^B)` up to ``degree``, in the Lyndon basis.

    Examples
    --------
    >>> bch(2).to_text()
    'A + B + 1/2 [A,B]'
    """
    return log_of_exponentials([(0, 1), (1, 1)], degree, 2, "bch")


def symmetric_bch(degree: int) -> LieSeries:
    r"""Symmetric BCH series :math:`\log(e^{A/2} e^{B} e^{A/2})` (only odd degrees survive).

    Examples
    --------
    >>> symmetric_bch(3).to_text()
    'A + B - 1/24 [A,[A,B]] + 1/12 [[A,B],B]'
    """
    # e^W = e^{-A/2} e^Z e^{A/2} with Z = log(e^A e^B), so W = e^{-ad_{A/2}} Z; in the Lyndon basis
    # ad_A P_w = P_{Aw} (w ≠ A), so this is a relabelling of the BCH coefficients, exact at every degree.
    degree = _check_degree(degree)
    coordinates: dict[Word, Fraction] = {}
    for word, c in bch(degree).coordinates.items():
        top = 0 if word == (0,) else degree - len(word)
        for k in range(top + 1):
            key = (0,) * k + word
            coordinates[key] = coordinates.get(key, Fraction(0)) + Fraction((-1) ** k, 2**k * math.factorial(k)) * c
    return LieSeries("symmetric-bch", 2, degree, {w: c for w, c in coordinates.items() if c})


def bch_many(n_factors: int, degree: int) -> LieSeries:
    r"""Multi-factor BCH :math:`\log(e^{A_1} e^{A_2} \cdots e^{A_k})` with generators ``A, B, C, …``.

    Examples
    --------
    >>> bch_many(3, 2).to_text()
    'A + B + C + 1/2 [A,B] + 1/2 [A,C] + 1/2 [B,C]'
    """
    if isinstance(n_factors, bool) or not isinstance(n_factors, int) or not 2 <= n_factors <= len(NAMES):
        raise ValueError(f"n_factors must be an integer in [2, {len(NAMES)}], got {n_factors!r}")
    name = "bch" if n_factors == 2 else f"bch{n_factors}"
    return log_of_exponentials([(i, 1) for i in range(n_factors)], degree, n_factors, name)


def commutator_log(degree: int) -> LieSeries:
    r"""Group-commutator series :math:`\log(e^A e^B e^{-A} e^{-B}) = [A,B] + \dots`.

    Examples
    --------
    >>> commutator_log(3).to_text()
    '[A,B] + 1/2 [A,[A,B]] - 1/2 [[A,B],B]'
    """
    return log_of_exponentials([(0, 1), (1, 1), (0, -1), (1, -1)], degree, 2, "commutator")


def hausdorff(degree: int, form: str = "-A") -> LieSeries:
    r"""Hausdorff (adjoint) series of a conjugation, exact at every degree.

    ``form="-A"``: :math:`e^{-A} B e^{A} = \sum_k \frac{(-1)^k}{k!}\operatorname{ad}_A^k B`;
    ``form="+A"``: :math:`e^{A} B e^{-A} = \sum_k \frac{1}{k!}\operatorname{ad}_A^k B`, with
    :math:`\operatorname{ad}_A B = [A,B]`.  Sources disagree on which one is "the" Hausdorff series;
    both are provided and pinned by tests.  :math:`\operatorname{ad}_A^k B` is the Lyndon-basis
    element of the word :math:`A^kB`, so the coordinates need no solving.

    Examples
    --------
    >>> hausdorff(3).to_text()
    'B - [A,B] + 1/2 [A,[A,B]]'
    >>> hausdorff(3, form="+A").to_text()
    'B + [A,B] + 1/2 [A,[A,B]]'
    """
    degree = _check_degree(degree)
    if form not in ("-A", "+A"):
        raise ValueError(f"form must be '-A' (e^(-A) B e^A) or '+A' (e^A B e^(-A)), got {form!r}")
    sign = -1 if form == "-A" else 1
    coordinates = {(0,) * k + (1,): Fraction(sign**k, math.factorial(k)) for k in range(degree)}
    return LieSeries("hausdorff" if form == "-A" else "hausdorff+", 2, degree, coordinates)


# --- Zassenhaus: truncated arithmetic in the free associative algebra ------------------------------


def _truncated_product(x: dict, y: dict, degree: int) -> dict:
    out: dict[Word, Fraction] = defaultdict(Fraction)
    for u, a in x.items():
        room = degree - len(u)
        for v, b in y.items():
            if len(v) <= room:
                out[u + v] += a * b
    return {w: c for w, c in out.items() if c}


def _truncated_exp(x: dict, degree: int) -> dict:
    # x has no constant term, so x^k starts at degree k.
    total = {(): Fraction(1)}
    power = {(): Fraction(1)}
    for k in range(1, degree + 1):
        power = {w: c / k for w, c in _truncated_product(power, x, degree).items()}
        for w, c in power.items():
            total[w] = total.get(w, Fraction(0)) + c
    return {w: c for w, c in total.items() if c}


def _truncated_log(y: dict, degree: int) -> dict:
    z = {w: c for w, c in y.items() if w}  # y = 1 + z
    total: dict[Word, Fraction] = defaultdict(Fraction)
    power = {(): Fraction(1)}
    for k in range(1, degree + 1):
        power = _truncated_product(power, z, degree)
        for w, c in power.items():
            total[w] += Fraction((-1) ** (k + 1), k) * c
    return {w: c for w, c in total.items() if c}


def zassenhaus(degree: int) -> LieSeries:
    r"""Zassenhaus factors :math:`e^{A+B} = e^{A} e^{B} e^{C_2} e^{C_3} \cdots`, each :math:`C_n` homogeneous.

    The returned series holds :math:`C_n` as its degree-``n`` component (degree 1 holds ``A + B``);
    use :meth:`LieSeries.component`.  Recursion: :math:`R_1 = \log(e^{-B}e^{-A}e^{A+B})`,
    :math:`C_n = (R_{n-1})_n`, :math:`R_n = \log(e^{-C_n} e^{R_{n-1}})`, in truncated exact arithmetic
    over all words, which limits it to moderate degrees (≲ 10).

    Examples
    --------
    >>> zassenhaus(3).to_text()
    'A + B - 1/2 [A,B] + 1/6 [A,[A,B]] - 1/3 [[A,B],B]'
    """
    degree = _check_degree(degree)
    a, b = {(0,): Fraction(1)}, {(1,): Fraction(1)}
    product = _truncated_product(
        _truncated_product(
            _truncated_exp({(1,): Fraction(-1)}, degree), _truncated_exp({(0,): Fraction(-1)}, degree), degree
        ),
        _truncated_exp({(0,): Fraction(1), (1,): Fraction(1)}, degree),
        degree,
    )
    remainder = _truncated_log(product, degree)
    coordinates = {**lyndon_coordinates(a), **lyndon_coordinates(b)}
    for n in range(2, degree + 1):
        c_n = {w: c for w, c in remainder.items() if len(w) == n}
        coordinates.update(lyndon_coordinates(c_n))
        if n < degree:
            negative = {w: -c for w, c in c_n.items()}
            remainder = _truncated_log(
                _truncated_product(_truncated_exp(negative, degree), _truncated_exp(remainder, degree), degree),
                degree,
            )
    return LieSeries("zassenhaus", 2, degree, {w: c for w, c in coordinates.items() if c})


SERIES = {
    "bch": bch,
    "symmetric-bch": symmetric_bch,
    "bch3": lambda degree: bch_many(3, degree),
    "commutator": commutator_log,
    "zassenhaus": zassenhaus,
    "hausdorff": hausdorff,
}


def _magnus_linear(degree: int) -> LieSeries:
    from workbench.lie._magnus import magnus

    return magnus(degree, 2 if degree >= 2 else 1)


SERIES["magnus"] = _magnus_linear
