import json
from fractions import Fraction
from itertools import pairwise, product

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import sympy as sp
from conftest import HAS_TORCH
from hypothesis import given, settings
from hypothesis import strategies as st

import workbench.derivations.lie as lie_identities
from workbench.backend import to_backend, to_numpy
from workbench.cli import main
from workbench.lie import (
    BASES,
    basis_trees,
    bch,
    bch_many,
    change_of_basis,
    commutator_log,
    expand_tree,
    format_word,
    hausdorff,
    is_lyndon,
    log_of_exponentials,
    lyndon_coordinates,
    lyndon_factorization,
    lyndon_tree,
    lyndon_words,
    magnus,
    magnus_integrals,
    magnus_omega,
    standard_factorization,
    symmetric_bch,
    tree_to_string,
    witt_dimension,
    zassenhaus,
)
from workbench.lie._free import bracket

OEIS_A001037 = [2, 1, 2, 3, 6, 9, 18, 30, 56, 99, 186, 335, 630, 1161, 2182]  # binary Lyndon words


def test_lyndon_counts_match_oeis_and_witt():
    counts = [len(lyndon_words(2, n)) for n in range(1, 16)]
    assert counts == OEIS_A001037
    assert counts == [witt_dimension(2, n) for n in range(1, 16)]
    assert [len(lyndon_words(3, n)) for n in range(1, 6)] == [3, 3, 8, 18, 48]  # OEIS A027376


def _is_lyndon_by_rotations(word):
    # The definition, independent of Duval: strictly smaller than every proper rotation.
    return all(word < word[i:] + word[:i] for i in range(1, len(word)))


def test_lyndon_words_agree_with_brute_force():
    for letters, top in ((2, 10), (3, 6)):
        for n in range(1, top + 1):
            words = list(product(range(letters), repeat=n))
            brute = sorted(w for w in words if _is_lyndon_by_rotations(w))
            assert list(lyndon_words(letters, n)) == brute
            assert [w for w in words if is_lyndon(w)] == [w for w in words if _is_lyndon_by_rotations(w)]


def test_standard_factorization_is_the_longest_lyndon_suffix():
    for n in range(2, 11):
        for w in lyndon_words(2, n):
            longest = next(i for i in range(1, n) if _is_lyndon_by_rotations(w[i:]))
            assert standard_factorization(w) == (w[:longest], w[longest:])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=1, max_size=14))
def test_chen_fox_lyndon_factorization(word):
    factors = lyndon_factorization(tuple(word))
    assert sum(factors, ()) == tuple(word)
    assert all(is_lyndon(f) for f in factors)
    assert all(factors[i] >= factors[i + 1] for i in range(len(factors) - 1))


def test_standard_factorization_properties():
    for n in range(2, 10):
        for w in lyndon_words(2, n):
            u, v = standard_factorization(w)
            assert u + v == w and is_lyndon(u) and is_lyndon(v) and u < v
            assert not any(is_lyndon(w[i:]) for i in range(1, len(u)))  # v is the longest Lyndon suffix


def test_standard_bracketing_follows_the_contract():
    assert tree_to_string(lyndon_tree((0, 0, 1))) == "[A,[A,B]]"
    assert tree_to_string(lyndon_tree((0, 1, 1))) == "[[A,B],B]"


def _random_lie(draw_coefficients, trees):
    out: dict = {}
    for tree, c in zip(trees, draw_coefficients, strict=False):
        for w, a in expand_tree(tree):
            out[w] = out.get(w, Fraction(0)) + Fraction(c) * a
    return {w: c for w, c in out.items() if c}


lie_elements = st.lists(st.integers(-3, 3), min_size=1, max_size=5).map(
    lambda cs: _random_lie(cs, [lyndon_tree(w) for n in (1, 2, 3) for w in lyndon_words(2, n)])
)


@settings(max_examples=40, deadline=None)
@given(lie_elements, lie_elements, lie_elements)
def test_bracket_laws(x, y, z):
    # Antisymmetry and Jacobi in the free associative algebra (exact arithmetic: equality, not tolerance).
    xy, yx = bracket(x, y), bracket(y, x)
    assert all(xy.get(w, 0) + yx.get(w, 0) == 0 for w in set(xy) | set(yx))
    total: dict = {}
    for part in (bracket(x, bracket(y, z)), bracket(y, bracket(z, x)), bracket(z, bracket(x, y))):
        for w, c in part.items():
            total[w] = total.get(w, 0) + c
    assert all(c == 0 for c in total.values())


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([w for n in range(1, 5) for w in lyndon_words(2, n)]),
       st.sampled_from([w for n in range(1, 5) for w in lyndon_words(2, n)]))  # fmt: skip
def test_bracket_of_basis_elements_stays_in_the_span(u, v):
    element = bracket(dict(expand_tree(lyndon_tree(u))), dict(expand_tree(lyndon_tree(v))))
    coords = lyndon_coordinates(element)  # raises if not a Lie polynomial
    rebuilt: dict = {}
    for w, c in coords.items():
        for word, a in expand_tree(lyndon_tree(w)):
            rebuilt[word] = rebuilt.get(word, 0) + c * a
    assert {w: c for w, c in rebuilt.items() if c} == element


def test_non_lie_polynomial_is_rejected():
    with pytest.raises(ValueError, match=r"element must be a Lie polynomial, but its smallest word 'BA' is not Lyndon"):
        lyndon_coordinates({(1, 0): Fraction(1)})


@pytest.mark.parametrize("basis", BASES)
def test_every_basis_has_witt_many_elements_and_round_trips(basis):
    series = bch(7)
    for d in range(1, 8):
        assert len(basis_trees(basis, 2, d)) == witt_dimension(2, d)
    terms = change_of_basis(series.coordinates, basis, 2)
    expanded: dict = {}
    for tree, c in terms:  # oracle: expand to words and compare with the Lyndon expansion
        for w, a in expand_tree(tree):
            expanded[w] = expanded.get(w, 0) + c * a
    assert {w: c for w, c in expanded.items() if c} == series.to_words()


def test_hall_and_right_normed_low_degrees():
    assert [tree_to_string(t) for t in basis_trees("hall", 2, 3)] == ["[[B,A],A]", "[[B,A],B]"]
    assert [tree_to_string(t) for t in basis_trees("right-normed", 2, 4)] == [
        "[A,[A,[B,A]]]",
        "[B,[A,[B,A]]]",
        "[B,[B,[B,A]]]",
    ]  # fmt: skip  (Chibrikov's basis)


PUBLISHED_BCH_5 = (
    "A + B + 1/2 [A,B] + 1/12 [A,[A,B]] + 1/12 [[A,B],B] + 1/24 [A,[[A,B],B]] - 1/720 [A,[A,[A,[A,B]]]]"
    " + 1/180 [A,[A,[[A,B],B]]] + 1/360 [[A,[A,B]],[A,B]] + 1/180 [A,[[[A,B],B],B]] + 1/120 [[A,B],[[A,B],B]]"
    " - 1/720 [[[[A,B],B],B],B]"
)


def test_bch_matches_published_degree_5_table():
    assert bch(5).to_text() == PUBLISHED_BCH_5


def test_bch_ad_coefficients_are_bernoulli_numbers():
    series = bch(12)
    for k in range(1, 12):
        expected = Fraction(sp.bernoulli(k) / sp.factorial(k))  # sympy uses B₁ = +1/2
        assert series.coordinates.get((0,) * k + (1,), Fraction(0)) == expected


def test_bch_nonzero_counts_match_published():
    assert bch(10).nonzero_per_degree() == [2, 1, 2, 1, 6, 5, 18, 17, 55, 55]


def test_bch_symmetry_relation():
    # log(e^A e^B) = −log(e^{−B} e^{−A}): with A ↔ B swapped and signs flipped, degree d gets (−1)^{d+1}.
    z = bch(7).to_words()
    w = log_of_exponentials([(1, -1), (0, -1)], 7, 2).to_words()
    assert z == {word: -c for word, c in w.items()}


def test_symmetric_bch_even_degrees_vanish():
    counts = symmetric_bch(8).nonzero_per_degree()
    assert counts[1] == counts[3] == counts[5] == counts[7] == 0 and counts[2] > 0


def test_zassenhaus_low_factors_and_ad_closed_form():
    z = zassenhaus(6)
    assert z.component(2).to_text() == "-1/2 [A,B]"
    assert z.component(3).to_text() == "1/6 [A,[A,B]] - 1/3 [[A,B],B]"
    for n in range(2, 7):
        assert z.coordinates[(0,) * (n - 1) + (1,)] == Fraction((-1) ** (n + 1), int(sp.factorial(n)))


def test_hausdorff_both_sign_conventions_against_expm(rng):
    # Oracle: dense conjugation. e^{-A} B e^{A} ('-A') and e^{A} B e^{-A} ('+A') must not be confused.
    a = 0.01 * rng.standard_normal((5, 5))  # ‖2·ad_A‖⁹/9! ≈ 1e-15: truncation below rounding
    b = rng.standard_normal((5, 5))
    for form, exact in (
        ("-A", scipy.linalg.expm(-a) @ b @ scipy.linalg.expm(a)),
        ("+A", scipy.linalg.expm(a) @ b @ scipy.linalg.expm(-a)),
    ):
        np.testing.assert_allclose(hausdorff(9, form).evaluate(a, b), exact, rtol=0, atol=1e-13)


@pytest.mark.parametrize(
    ("series", "factors"),
    [(bch(6), lambda a, b: [a, b]), (commutator_log(6), lambda a, b: [a, b, -a, -b])],
)
def test_series_against_logm(series, factors, rng):
    # Oracle: scipy logm(expm·expm); at ε = 0.005 the omitted degree-7 terms are ~1e-15.
    a, b = (0.005 * rng.standard_normal((4, 4)) for _ in range(2))
    product = np.eye(4)
    for f in factors(a, b):
        product = product @ scipy.linalg.expm(f)
    np.testing.assert_allclose(series.evaluate(a, b), np.real(scipy.linalg.logm(product)), rtol=0, atol=1e-13)


def test_evaluation_is_batched(rng, backend):
    a = rng.standard_normal((3, 4, 4)) * 0.1
    b = rng.standard_normal((3, 4, 4)) * 0.1
    series = bch(4)
    batched = to_numpy(series.evaluate(to_backend(a, backend), to_backend(b, backend)))
    looped = np.stack([series.evaluate(x, y) for x, y in zip(a, b, strict=True)])
    np.testing.assert_allclose(batched, looped, rtol=1e-14, atol=1e-16)


def test_three_factor_series_reduces_to_bch():
    three = bch_many(3, 5).coordinates
    assert {w: c for w, c in three.items() if 2 not in w} == bch(5).coordinates


def test_renderers_and_json_contract():
    series = bch(3)
    assert series.to_latex() == r"A + B + \frac{1}{2} [A,B] + \frac{1}{12} [A,[A,B]] + \frac{1}{12} [[A,B],B]"
    doc = series.to_json()
    assert doc["series"] == "bch" and doc["degree"] == 3 and doc["basis"] == "lyndon"
    assert doc["terms"][2] == {"bracket": "[A,B]", "coefficient": "1/2", "degree": 2}
    A, B = sp.symbols("A B", commutative=False)
    assert sp.expand(bch(2).to_sympy() - (A + B + (A * B - B * A) / 2)) == 0


def test_bad_input():
    with pytest.raises(ValueError, match=r"degree must be a positive integer, got 0"):
        bch(0)
    with pytest.raises(ValueError, match=r"degree must be a positive integer, got 2.5"):
        zassenhaus(2.5)
    with pytest.raises(
        ValueError, match=r"basis must be one of 'lyndon', 'hall', 'chibrikov', 'right-normed', got 'foo'"
    ):
        bch(2).terms("foo")
    with pytest.raises(ValueError, match=r"n_factors must be an integer in \[2, 26\], got 1"):
        bch_many(1, 3)
    with pytest.raises(ValueError, match=r"form must be '-A' \(e\^\(-A\) B e\^A\) or '\+A'"):
        hausdorff(3, form="A")
    with pytest.raises(ValueError, match=r"matrices must be one per generator \(2\), got 1"):
        bch(2).evaluate(np.eye(2))
    with pytest.raises(ValueError, match=r"matrices\[1\] must be a square matrix"):
        bch(2).evaluate(np.eye(2), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"matrices must share one shape, got \(2, 2\) for matrices\[0\] and \(3, 3\)"):
        bch(2).evaluate(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match=r"matrices\[0\] must be finite"):
        bch(2).evaluate(np.full((2, 2), np.nan), np.eye(2))
    with pytest.raises(ValueError, match=r"word must be a Lyndon word of length ≥ 2, got 'BA'"):
        standard_factorization((1, 0))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_mixed_libraries_in_evaluation():
    import torch

    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        bch(2).evaluate(np.eye(2), torch.eye(2, dtype=torch.float64))


def test_cli_series_json_contract(capsys):
    assert main(["derive", "bch", "--degree", "3", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [t["bracket"] for t in doc["terms"]] == ["A", "B", "[A,B]", "[A,[A,B]]", "[[A,B],B]"]
    assert [t["coefficient"] for t in doc["terms"]] == ["1", "1", "1/2", "1/12", "1/12"]


def test_cli_series_in_other_bases(capsys):
    assert main(["derive", "zassenhaus", "--degree", "3", "--basis", "hall"]) == 0
    assert capsys.readouterr().out.strip() == "A + B + 1/2 [B,A] + 1/6 [[B,A],A] + 1/3 [[B,A],B]"
    assert main(["derive", "bch3", "--degree", "2", "--basis", "right-normed"]) == 0
    assert capsys.readouterr().out.strip() == "A + B + C - 1/2 [B,A] - 1/2 [C,A] - 1/2 [C,B]"


def test_cli_series_bad_degree(capsys):
    assert main(["derive", "bch", "--degree", "0"]) == 2
    assert "--degree must be a positive integer, got 0" in capsys.readouterr().err


def test_format_word():
    assert format_word((0, 1, 2)) == "ABC"


def test_magnus_linear_generator_low_terms():
    # Ω(h) for A(t) = A + tB: hA + h²/2 B − h³/12 [A,B] (the Ω₂ integral done by hand), then h⁵ terms.
    assert magnus(5).to_text() == "h A + 1/2 h^2 B - 1/12 h^3 [A,B] + 1/240 h^5 [[A,B],B] + 1/720 h^5 [A,[A,[A,B]]]"
    assert [t["h_power"] for t in magnus(3).to_json()["terms"]] == [1, 2, 3]


def test_magnus_commuting_generator_is_the_integral(rng):
    # A(t) = (1 + t + t²) M: all commutators vanish, Ω(h) = (h + h²/2 + h³/3) M exactly.
    m = rng.standard_normal((4, 4)) * 0.3
    omega = magnus_omega([m, m, m], 0.7, order=6)
    np.testing.assert_allclose(omega, (0.7 + 0.7**2 / 2 + 0.7**3 / 3) * m, rtol=1e-14, atol=1e-15)


def test_magnus_against_ode_solver(rng):
    # Oracle: DOP853 at rtol 1e-13; order-6 truncation at h = 0.1 leaves ~h⁷ ≈ 1e-7 · small constants.
    x0, x1 = rng.standard_normal((3, 3)) / 3, rng.standard_normal((3, 3)) / 3
    h = 0.1
    sol = scipy.integrate.solve_ivp(
        lambda t, y: ((x0 + t * x1) @ y.reshape(3, 3)).ravel(), (0, h), np.eye(3).ravel(),
        method="DOP853", rtol=1e-13, atol=1e-15,
    )  # fmt: skip
    y = sol.y[:, -1].reshape(3, 3)
    np.testing.assert_allclose(scipy.linalg.expm(magnus_omega([x0, x1], h, 6)), y, rtol=0, atol=1e-10)


def test_magnus_warns_outside_convergence_domain():
    with pytest.warns(RuntimeWarning, match=r"∫₀\^h ‖A\(t\)‖₂ dt = 4 ≥ π: outside the guaranteed convergence domain"):
        magnus_omega([2 * np.eye(2)], 2.0, order=3)


def test_magnus_bad_input():
    with pytest.raises(ValueError, match=r"h must be in \[0, inf\), got -1.0"):
        magnus_omega([np.eye(2)], -1.0)
    with pytest.raises(ValueError, match=r"coefficients must share one shape, got \(2, 2\) and \(3, 3\)"):
        magnus_omega([np.eye(2), np.eye(3)], 0.1)
    with pytest.raises(ValueError, match=r"n_terms must be an integer in \[1, order=3\], got 4"):
        magnus(3, 4)
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 4\]"):
        magnus_integrals(5)


def test_bch_closed_form_when_bracket_is_proportional(rng):
    # [X, Y] = sY (the affine group): log(e^X e^Y) = X + s/(1 − e^{−s}) Y in closed form, whose Taylor
    # coefficients are the B_n/n! of the ad_X^n Y terms; the degree-N truncation misses O(s^N).
    s = 0.3
    x = np.diag([s, 0.0])
    y = np.array([[0.0, 0.7], [0.0, 0.0]])
    exact = x + s / (1 - np.exp(-s)) * y
    errors = [np.abs(bch(n).evaluate(x, y) - exact).max() for n in (2, 4, 6, 8)]
    assert errors[-1] < 1e-9
    assert all(later < earlier * 0.2 for earlier, later in pairwise(errors))


@pytest.mark.parametrize(
    ("factors", "engine"),
    [
        ([(0, 1), (1, 1)], lambda d: bch(d)),
        ([(0, Fraction(1, 2)), (1, 1), (0, Fraction(1, 2))], lambda d: symmetric_bch(d)),
        ([(0, 1), (1, 1), (0, -1), (1, -1)], lambda d: commutator_log(d)),
    ],
)
def test_engine_against_full_word_expansion(factors, engine):
    # Independent algorithm: expand log(Π e^{s X}) over *all* words in truncated exact arithmetic, then
    # decompose by repeatedly removing the smallest word (Lyndon triangularity); the engine instead
    # uses Goldberg coefficients of Lyndon words only and a vectorised triangular solve.
    from free_algebra_reference import exp, log, product

    degree = 7
    total = {(): Fraction(1)}
    for letter, scale in factors:
        total = product(total, exp({(letter,): Fraction(scale)}, degree), degree)
    words = log(total, degree)
    assert lyndon_coordinates(words) == engine(degree).coordinates


@pytest.mark.parametrize(("n_letters", "degree"), [(2, 9), (3, 6), (4, 4)])
def test_triangular_blocks_against_bracket_expansion(n_letters, degree):
    # Oracle: T[u, w] = (P_w, u) read off the full word expansion of the standard bracketing of w
    # (workbench.lie.expand_tree), independent of the engine's shared evaluation programme and
    # of its "core" shortcut for columns m^k·y.  Exact integers, so equality.
    from workbench.lie._fast import lyndon_triangular_blocks
    from workbench.lie._free import expand_tree

    words = lyndon_words(n_letters, degree)
    for members, block in lyndon_triangular_blocks(n_letters, degree):
        dense = block.toarray()
        for b, column in enumerate(members):
            expansion = dict(expand_tree(lyndon_tree(words[column])))
            expected = [expansion.get(words[row], 0) for row in members]
            assert dense[:, b].tolist() == expected


@pytest.mark.parametrize(("n_letters", "degree"), [(2, 10), (3, 6), (4, 5)])
def test_run_multiset_coefficients_against_segmentation_sum(n_letters, degree):
    # Oracle: the generic Goldberg dynamic programme over all blocks of each word (_log_coefficient,
    # the path for arbitrary factor lists); the fast path groups words by the multiset of their runs.
    from workbench.lie._bch import _log_coefficient
    from workbench.lie._fast import increasing_product_log_coefficients

    factors = tuple((letter, Fraction(1)) for letter in range(n_letters))
    expected = [_log_coefficient(w, factors) for w in lyndon_words(n_letters, degree)]
    assert increasing_product_log_coefficients(n_letters, degree) == expected


def test_even_bch_degrees_from_the_lower_ones_equal_the_direct_solve():
    # Oracle: the word coefficients of the even degree solved against T directly (what the engine does
    # at odd degrees), against the relabelling Z_n = −Σ_k (−1/2)^k/k! ad_A^k Z_{n−k}.  Exact.
    from workbench.lie._fast import (
        bch_even_degree,
        increasing_product_log_coefficients,
        lyndon_coordinates_from_values,
    )

    series = bch(13)
    for degree in range(2, 14, 2):
        lower = {w: c for w, c in series.coordinates.items() if len(w) < degree}
        direct = lyndon_coordinates_from_values(2, degree, increasing_product_log_coefficients(2, degree))
        assert bch_even_degree(lower, degree) == direct


@pytest.mark.slow
def test_bch_degree_20_matches_the_published_counts():
    # Published: 111,013 Lyndon-basis elements up to degree 20, 76,760 of them with nonzero BCH
    # coefficient; per degree 2, 1, 2, 1, 6, 5, 18, 17, 55, 55, 186, 185, 630, 629, 2181, 2181, 7710,
    # 7709, 27594, 27593.
    series = bch(20)
    counts = series.nonzero_per_degree()
    assert counts[-6:] == [2181, 2181, 7710, 7709, 27594, 27593]
    assert sum(counts) == 76760
    assert sum(len(lyndon_words(2, d)) for d in range(1, 21)) == 111013
    # Closed form: the coefficient of ad_A^{n−1}B (Lyndon word A^{n−1}B) is B_{n−1}/(n−1)!.
    assert series.coordinates[(0,) * 18 + (1,)] == Fraction(43867, 798 * int(sp.factorial(18)))
    assert (0,) * 19 + (1,) not in series.coordinates  # B_19 = 0


def test_symmetric_bch_relabelling_equals_the_generic_path():
    # Oracle: the generic path (Goldberg coefficients of log(e^{A/2} e^B e^{A/2}) word by word, then the
    # triangular solve); the engine instead relabels BCH by W = e^{−ad_{A/2}} Z.  Exact rationals.
    from workbench.lie._bch import log_of_exponentials

    generic = log_of_exponentials([(0, Fraction(1, 2)), (1, 1), (0, Fraction(1, 2))], 9, 2, "symmetric-bch")
    assert symmetric_bch(9).coordinates == generic.coordinates


def _catalogued(name):
    return next(identity for identity in lie_identities.IDENTITIES if identity.name == name)


def test_heisenberg_identity_is_the_exponential_form_past_the_principal_logarithm():
    # The statement is e^A e^B = e^{A + B + ½[A,B]} whenever [A,B] is central, with no condition on the spectrum.
    # The check's pairs carry rotations by α + β > π beside a Heisenberg pair: there the exponential form holds
    # and the former log form fails (the principal logarithm, scipy's logm, wraps the rotation by 2π).
    identity = _catalogued("lie.bch.heisenberg")
    for seed in range(5):
        outcome = identity.verify(np.random.default_rng(seed), "small", "numpy")
        assert outcome.passed and outcome.sizes["angle_sum"] > np.pi, outcome
        a, b = lie_identities._central_commutator_pair(np.random.default_rng(seed))
        principal = np.real(scipy.linalg.logm(scipy.linalg.expm(a) @ scipy.linalg.expm(b)))
        assert np.linalg.norm(bch(2).evaluate(a, b, check_convergence=False) - principal) > 0.1 * np.linalg.norm(
            principal
        )


def test_magnus_nilpotent_closed_form_for_any_heisenberg_pair_against_the_ode_solver():
    # The statement covers every A, B in 𝔥₃, not only E₁₂, E₂₃.  Oracle: an adaptive 8th-order Runge–Kutta
    # solution (rtol 1e-13); tolerance 1e-10 relative for its accumulated error at h ≤ 3.
    rng = np.random.default_rng(4)
    for _ in range(5):
        a, b = np.zeros((3, 3)), np.zeros((3, 3))
        a[0, 1], a[1, 2], a[0, 2] = rng.standard_normal(3)
        b[0, 1], b[1, 2], b[0, 2] = rng.standard_normal(3)
        h = float(rng.uniform(0.5, 3.0))
        ode = lie_identities._ivp_solution(a, b, h=h)
        closed = np.array(lie_identities._heisenberg_flow(a, b, h), dtype=float)
        assert np.abs(closed - ode).max() < 1e-10 * np.abs(ode).max()
    identity = _catalogued("lie.magnus.nilpotent")
    for seed in range(5):
        outcome = identity.verify(np.random.default_rng(seed), "small", "numpy")
        assert outcome.passed and outcome.sizes["n"] == 3, outcome


def _scaled(rng, n: int, norm: float) -> np.ndarray:
    m = rng.standard_normal((n, n))
    return norm * m / np.linalg.norm(m, 2)


def test_evaluate_warns_outside_the_guaranteed_convergence_domain(rng):
    # Moan & Niesen (2008): the Magnus series converges for ∫‖A‖₂ < π; log(Π e^{c_i X_i}) is the Magnus series of
    # the piecewise-constant A = c_i X_i on unit intervals, so the bound reads Σ|c_i|‖X_i‖₂ < π.
    a, b = _scaled(rng, 4, 1.7), _scaled(rng, 4, 1.5)  # s = 3.2 ≥ π
    with pytest.warns(RuntimeWarning, match=r"^bch: Σ\|c\|·‖X‖₂ = 3\.2 ≥ π over the factors of e\^\{1·A\}e\^\{1·B\}"):
        bch(4).evaluate(a, b)
    with pytest.warns(
        RuntimeWarning, match=r"symmetric-bch: Σ\|c\|·‖X‖₂ = 3\.2 ≥ π .* e\^\{1/2·A\}e\^\{1·B\}e\^\{1/2·A\}"
    ):
        symmetric_bch(3).evaluate(a, b)
    with pytest.warns(RuntimeWarning, match=r"commutator: Σ\|c\|·‖X‖₂ = 6\.4 ≥ π"):
        commutator_log(2).evaluate(a, b)
    # Below the bound (s = ½·1.7 + 1.4 + ½·1.7 = 3.1 for the symmetric series): no warning (the suite
    # turns warnings into errors); a homogeneous part is not a logarithm and is never checked; the check can be off.
    symmetric_bch(3).evaluate(a, _scaled(rng, 4, 1.4))
    bch(4).evaluate(0.5 * a, 0.5 * b)
    bch(4).component(2).evaluate(a, b)
    bch(4).evaluate(a, b, check_convergence=False)
    with pytest.raises(TypeError, match=r"^check_convergence must be True or False, got 'no'$"):
        bch(2).evaluate(a, b, check_convergence="no")


def test_evaluate_warns_with_the_spectral_norm_of_the_largest_batch_member(rng):
    a = np.stack([_scaled(rng, 3, 0.5), _scaled(rng, 3, 2.5)])
    b = np.stack([_scaled(rng, 3, 0.5), _scaled(rng, 3, 0.7)])
    with pytest.warns(RuntimeWarning, match=r"Σ\|c\|·‖X‖₂ = 3\.2 ≥ π"):
        bch(3).evaluate(a, b)
