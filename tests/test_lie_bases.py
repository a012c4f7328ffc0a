"""The classical Hall basis and Chibrikov's right-normed basis against published tables and exact checks.

Oracles: (1) the BCH series to degree 5 as printed by H. Hofstätter's ``bch`` program (its user manual,
arXiv:2102.06570, §5 "basis": ``basis=2`` classical Hall, ``basis=1`` Chibrikov), term by term and in
order; Casas–Murua's numbering E1…E14 of the Hall basis through degree 5.  (2) Expanding a basis series
into words gives exactly the words of the Lyndon series.  (3) Each basis has the Witt dimension in every
multidegree (Witt's formula refined by letter content, computed here independently) and is a basis of the
free Lie ring: its matrix of word coefficients on the Lyndon words has determinant ±1 (exact integers).
(4) The Hall set satisfies Hall's conditions and is complete; at degree ≤ 14 it differs from the
previous (row-major) Hall order in 150 of 2,538 trees, the issue's measurement.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from sympy import ZZ
from sympy.polys.matrices import DomainMatrix

from workbench.lie import BASES, _bases, basis_trees, bch, bch_many, change_of_basis, tree_to_string
from workbench.lie._bases import chibrikov_word
from workbench.lie._free import expand_tree_unchecked, tree_letters
from workbench.lie._words import lyndon_words

HOFSTATTER_HALL = (
    "+1/1*A+1/1*B-1/2*[B,A]+1/12*[[B,A],A]-1/12*[[B,A],B]+1/24*[[[B,A],A],B]-1/720*[[[[B,A],A],A],A]"
    "-1/180*[[[[B,A],A],A],B]+1/180*[[[[B,A],A],B],B]+1/720*[[[[B,A],B],B],B]-1/120*[[[B,A],A],[B,A]]"
    "-1/360*[[[B,A],B],[B,A]]"
)
HOFSTATTER_CHIBRIKOV = (
    "+1/1*A+1/1*B-1/2*[B,A]-1/12*[A,[B,A]]+1/12*[B,[B,A]]+1/24*[B,[A,[B,A]]]+1/720*[A,[A,[A,[B,A]]]]"
    "-1/360*[B,[A,[A,[B,A]]]]+1/120*[A,[B,[A,[B,A]]]]-1/120*[B,[B,[A,[B,A]]]]+1/360*[A,[B,[B,[B,A]]]]"
    "-1/720*[B,[B,[B,[B,A]]]]"
)


def bch_program_text(terms) -> str:
    # The output format of Hofstätter's bch: sign, numerator/denominator, '*', the bracket.
    return "".join(f"{'+' if c > 0 else '-'}{abs(c.numerator)}/{c.denominator}*{tree_to_string(t)}" for t, c in terms)


# --- oracle 1: the published tables -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("basis", "printed"), [("hall", HOFSTATTER_HALL), ("chibrikov", HOFSTATTER_CHIBRIKOV)], ids=["hall", "chibrikov"]
)
def test_bch_to_degree_5_matches_the_bch_program_term_by_term(basis, printed):
    assert bch_program_text(bch(5).terms(basis)) == printed


def test_right_normed_is_another_name_for_chibrikov():
    assert "right-normed" in BASES and "chibrikov" in BASES
    assert bch_program_text(bch(5).terms("right-normed")) == HOFSTATTER_CHIBRIKOV
    for d in range(1, 9):
        assert basis_trees("right-normed", 2, d) == basis_trees("chibrikov", 2, d)


def test_hall_basis_follows_the_casas_murua_numbering():
    # Casas–Murua (2009): E1 = X, E2 = Y, E3 = [Y,X], E4 = [E3,X], E5 = [E3,Y], E6 = [E4,E1], E7 = [E4,E2],
    # E8 = [E5,E2], E9 = [E6,E1], E10 = [E6,E2], E11 = [E7,E2], E12 = [E8,E2], E13 = [E4,E3], E14 = [E5,E3].
    e = [None, 0, 1]
    for left, right in [(2, 1), (3, 1), (3, 2), (4, 1), (4, 2), (5, 2), (6, 1), (6, 2), (7, 2), (8, 2), (4, 3), (5, 3)]:
        e.append((e[left], e[right]))
    listed = [t for d in range(1, 6) for t in basis_trees("hall", 2, d)]
    assert listed == e[1:]


def test_chibrikov_words_of_the_published_table():
    # The degree ≤ 5 monomials printed by bch (basis=1), each for the Lyndon word of the same position.
    expected = {
        "AB": "BA", "AAB": "ABA", "ABB": "BBA", "AAAB": "AABA", "AABB": "BABA", "ABBB": "BBBA",
        "AAAAB": "AAABA", "AAABB": "BAABA", "AABAB": "ABABA", "AABBB": "BBABA", "ABABB": "ABBBA", "ABBBB": "BBBBA",
    }  # fmt: skip
    for word, image in expected.items():
        assert chibrikov_word(tuple("AB".index(ch) for ch in word)) == tuple("AB".index(ch) for ch in image)


# --- oracle 3: Witt dimension per multidegree and exact independence ------------------------------------


def witt_by_content(content: tuple[int, ...]) -> int:
    # Lyndon words (= free Lie algebra dimension) with a given letter content: (1/k) Σ_{g | gcd} μ(g) multinomial.
    k = sum(content)
    total = 0
    for g in range(1, math.gcd(*content) + 1):
        if math.gcd(*content) % g == 0:
            parts = [c // g for c in content]
            total += int(sp.mobius(g)) * math.factorial(k // g) // math.prod(math.factorial(c) for c in parts)
    return total // k


def lyndon_word_matrices(trees, n_letters: int, degree: int):
    # Per letter content: the integer matrix (t, u) of Lyndon-word coefficients u of the trees t.
    words_by_content, trees_by_content = defaultdict(list), defaultdict(list)
    for w in lyndon_words(n_letters, degree):
        words_by_content[tuple(w.count(x) for x in range(n_letters))].append(w)
    for t in trees:
        letters = tree_letters(t)
        trees_by_content[tuple(letters.count(x) for x in range(n_letters))].append(t)
    assert set(trees_by_content) == set(words_by_content)
    for content, words in words_by_content.items():
        position = {w: i for i, w in enumerate(words)}
        block = trees_by_content[content]
        rows = [[0] * len(words) for _ in block]
        for i, t in enumerate(block):
            for w, c in expand_tree_unchecked(t):
                if w in position:
                    rows[i][position[w]] += c
        yield content, block, rows


def check_basis(basis: str, n_letters: int, degree: int):
    trees = basis_trees(basis, n_letters, degree)
    assert len(set(trees)) == len(trees)
    for content, block, rows in lyndon_word_matrices(trees, n_letters, degree):
        assert len(block) == witt_by_content(content)
        # Lyndon words index a basis of the dual of the block (Reutenauer, Thm 5.1), so det = ±1 says
        # the trees are a basis of the free Lie ring in this multidegree.
        assert DomainMatrix([[ZZ(v) for v in row] for row in rows], (len(rows), len(rows)), ZZ).det() in (1, -1)


@pytest.mark.parametrize("basis", ["hall", "chibrikov"])
@pytest.mark.parametrize(("n_letters", "top"), [(2, 12), (3, 7), (4, 5)])
def test_bases_have_the_witt_dimension_per_multidegree_and_are_independent(basis, n_letters, top):
    for degree in range(1, top + 1):
        check_basis(basis, n_letters, degree)


@pytest.mark.slow
@pytest.mark.parametrize("basis", ["hall", "chibrikov"])
def test_bases_are_independent_at_degree_14(basis):
    check_basis(basis, 2, 14)


def test_chibrikov_monomials_are_right_normed_rearrangements_of_their_lyndon_words():
    for n_letters, top in [(2, 12), (3, 7)]:
        for degree in range(2, top + 1):
            for w, t in zip(lyndon_words(n_letters, degree), basis_trees("chibrikov", n_letters, degree), strict=True):
                letters = tree_letters(t)
                assert sorted(letters) == sorted(w) and letters[-1] == w[0]
                node = t
                while not isinstance(node, int):
                    assert isinstance(node[0], int)  # right-normed: every left factor is a letter
                    node = node[1]


def test_chibrikov_matrix_has_unit_leading_minors():
    # Hofstätter's manual: the matrix of Lyndon-word coefficients of the Chibrikov monomials (both in
    # Lyndon order) has all leading principal minors ±1, hence an integer LU with ±1 pivots.
    for n_letters, top in [(2, 10), (3, 6)]:
        for degree in range(2, top + 1):
            for _, _, rows in lyndon_word_matrices(basis_trees("chibrikov", n_letters, degree), n_letters, degree):
                for k in range(1, len(rows) + 1):
                    minor = DomainMatrix([[ZZ(rows[j][i]) for j in range(k)] for i in range(k)], (k, k), ZZ)
                    assert minor.det() in (1, -1)


# --- oracle 2: the basis series expands to the Lyndon series' words -----------------------------------


def expanded(terms) -> dict:
    out = defaultdict(Fraction)
    for tree, c in terms:
        for w, a in expand_tree_unchecked(tree):
            out[w] += c * a
    return {w: c for w, c in out.items() if c}


def check_words(series, basis: str):
    assert expanded(series.terms(basis)) == expanded(series.terms("lyndon"))


@pytest.mark.parametrize("basis", ["hall", "chibrikov"])
def test_basis_series_expand_to_the_lyndon_series_words(basis):
    check_words(bch(12), basis)
    check_words(bch_many(3, 7), basis)


@pytest.mark.slow
@pytest.mark.parametrize("basis", ["hall", "chibrikov"])
def test_basis_series_expand_to_the_lyndon_series_words_at_degree_14(basis):
    check_words(bch(14), basis)


def test_change_of_basis_of_single_lyndon_elements():
    # Every Lyndon basis element, rewritten in each basis, expands back to itself (degree ≤ 8, two letters).
    for degree in range(1, 9):
        for w in lyndon_words(2, degree):
            for basis in ("hall", "chibrikov"):
                assert expanded(change_of_basis({w: Fraction(1)}, basis, 2)) == expanded(
                    change_of_basis({w: Fraction(1)}, "lyndon", 2)
                )


# --- oracle 4: Hall's conditions, and the difference from the previous order ----------------------------


def hall_conditions(n_letters: int, top: int):
    listed = [t for d in range(1, top + 1) for t in basis_trees("hall", n_letters, d)]
    index = {t: i for i, t in enumerate(listed)}
    degree = {t: len(tree_letters(t)) for t in listed}
    assert listed[:n_letters] == list(range(n_letters))
    for t in listed[n_letters:]:
        t1, t2 = t
        assert index[t1] > index[t2]  # t1 > t2
        if not isinstance(t1, int):
            assert index[t1[1]] <= index[t2]  # t1 = [u, v] ⇒ v ≤ t2
    # Complete: every pair meeting the conditions within the degree range is listed, degree by degree
    # and by (index of t2, index of t1).
    by_degree = defaultdict(list)
    for t in listed:
        by_degree[degree[t]].append(t)
    for n in range(2, top + 1):
        wanted = sorted(
            (
                (t1, t2)
                for d1 in range(1, n)
                for t1 in by_degree[d1]
                for t2 in by_degree[n - d1]
                if index[t1] > index[t2] and (isinstance(t1, int) or index[t1[1]] <= index[t2])
            ),
            key=lambda t: (index[t[1]], index[t[0]]),
        )
        assert by_degree[n] == wanted


def test_hall_set_satisfies_the_hall_conditions():
    hall_conditions(2, 10)
    hall_conditions(3, 6)


def row_major_hall(n_letters: int, top: int) -> list:
    # The package's previous Hall order: the same conditions, elements of a degree sorted by (t1, t2).
    ordered = list(range(n_letters))
    by_degree = {1: list(range(n_letters))}
    for n in range(2, top + 1):
        position = {t: i for i, t in enumerate(ordered)}
        found = [
            (t1, t2)
            for d1 in range(n - 1, 0, -1)
            for t1 in by_degree[d1]
            for t2 in by_degree[n - d1]
            if position[t1] > position[t2] and (isinstance(t1, int) or position[t1[1]] <= position[t2])
        ]
        found.sort(key=lambda t: (position[t[0]], position[t[1]]))
        by_degree[n] = found
        ordered.extend(found)
    return ordered


def test_previous_hall_order_agrees_below_degree_10():
    for d in range(1, 10):
        assert set(basis_trees("hall", 2, d)) == {t for t in row_major_hall(2, d) if len(tree_letters(t)) == d}


@pytest.mark.slow
def test_classical_hall_differs_from_the_previous_order_in_150_of_2538_trees():
    classical = [t for d in range(1, 15) for t in basis_trees("hall", 2, d)]
    previous = set(row_major_hall(2, 14))
    assert len(classical) == len(previous) == 2538
    assert sum(t not in previous for t in classical) == 150
    hall_conditions(2, 14)


# --- the exact solvers ------------------------------------------------------------------------------------


def test_unit_pivot_lu_is_exact_past_int64_and_refuses_matrices_without_unit_pivots():
    # Oracle: M = L U with L = [[1, 0], [2^31, 1]], U = [[1, 2^31], [0, 1]] (entries near 2^62: the
    # elimination leaves int64 for Python integers); [[2, 3], [3, 5]] is unimodular but has no ±1 entry.
    big = 2**31
    matrix = np.array([[1, big], [big, big * big + 1]], dtype=np.int64)
    factors = _bases._unimodular_lu(matrix)
    assert factors is not None
    x = _bases._lu_solve(factors, np.array([3, 3 * big + 5], dtype=object))
    assert [int(v) for v in x] == [3 - 5 * big, 5]  # M x = b, checked by hand
    assert _bases._unimodular_lu(np.array([[2, 3], [3, 5]])) is None
    assert _bases._dense_solve(np.array([[2, 3], [3, 5]]), np.array([1, 2], dtype=object)) == [-1, 1]


def test_unit_pivot_lu_exchanges_rows_and_columns_when_the_diagonal_is_not_a_unit():
    matrix = np.array([[2, 1, 0], [1, 0, 0], [0, 3, 1]], dtype=np.int64)  # det = -1
    rhs = np.array([4, 1, 7], dtype=object)
    x = _bases._lu_solve(_bases._unimodular_lu(matrix), rhs)
    assert (matrix.astype(object).dot(x) == rhs).all()
