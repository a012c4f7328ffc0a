"""The compiled Lyndon kernel, the engine's integer levels, the memory ceiling and the streaming JSON.

Oracles: the Python-integer forward substitution against T from the numpy programme (itself checked against the
full bracket expansion in test_lie.py), Duval's generation in Python, the word-by-word standard factorisation,
``json.dumps`` of ``LieSeries.to_json``, and, at degree 20, the series of the engine's previous version, which
equalled H. Hofstätter's C program ``bch`` term for term (pinned by its SHA-256).  All exact: equality.
"""

import hashlib
import io
import json
import math
import random
import shutil
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from workbench import lie
from workbench.cli import main
from workbench.lie import _fast, _levels, _words
from workbench.lie._bch import check_increasing_log, increasing_log_levels
from workbench.lie._stream import level_terms, lyndon_brackets, series_terms
from workbench.memory import memory_limit


@pytest.mark.skipif(
    not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")), reason="no C compiler: the engine runs its Python path"
)
def test_the_kernel_is_built():
    # `pip install` builds it (setup.py); the extension is optional so that a machine without a compiler still
    # installs, and this test is what makes a silently failed build visible where a compiler exists (CI).
    assert _levels.kernel_available()


def _random_values(rng, n_letters, degree, bits=8):
    return [
        Fraction(rng.randint(-(2**bits), 2**bits), rng.choice([1, 2, 3, 7, 720]))
        for _ in lie.lyndon_words(n_letters, degree)
    ]


@pytest.mark.parametrize(("n_letters", "degrees"), [(2, range(1, 15)), (3, range(1, 9)), (4, range(1, 7)), (7, (5,))])
def test_kernel_solve_equals_the_python_integer_solve(monkeypatch, n_letters, degrees):
    # Oracle: forward substitution with Python integers against T from the numpy programme (independent of the
    # C programme, its hash table, its core shortcut and its lane batching).  Exact: equality.
    rng = random.Random(n_letters)
    for degree in degrees:
        values = _random_values(rng, n_letters, degree)
        fast = _fast.lyndon_coordinates_from_values(n_letters, degree, values)
        monkeypatch.setattr(_fast, "_kernel", None)
        reference = _fast.lyndon_coordinates_from_values(n_letters, degree, values)
        monkeypatch.undo()
        assert fast == reference, (n_letters, degree)


def test_blocks_on_threads_equal_blocks_in_turn(monkeypatch):
    # The kernel releases the GIL and degrees of ≥ PARALLEL_FROM words solve their blocks on threads; the result
    # must not depend on it.  Exact: equality.
    rng = random.Random(5)
    values = _random_values(rng, 2, 13)
    monkeypatch.setattr(_fast, "solver_threads", lambda: 1)
    serial = _fast.lyndon_coordinates_from_values(2, 13, values)
    monkeypatch.setattr(_fast, "solver_threads", lambda: 3)
    monkeypatch.setattr(_fast, "PARALLEL_FROM", 0)
    assert _fast.lyndon_coordinates_from_values(2, 13, values) == serial


def test_solver_threads_respect_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert _fast.solver_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "lots")  # not a count: the CPUs this process may use
    assert _fast.solver_threads() >= 1


def test_a_128_bit_overflow_falls_back_to_python_integers(monkeypatch):
    # Right sides near 2^125 overflow the kernel's accumulator (status 2) or do not fit at all (≥ 2^127); both
    # must give the exact Python-integer result, never a wrapped one.
    from workbench.lie import _lyndon_kernel

    degree = 9
    members = np.asarray(_words.multidegree_blocks(2, degree)[3][1])
    words = np.ascontiguousarray(_words.lyndon_word_array(2, degree)[members])
    big = np.array([2**125 - k for k in range(len(members))], dtype=object)
    hi, lo = (big >> 64).astype(np.int64), (big & _fast.MASK64).astype(np.uint64)
    status, nodes = _lyndon_kernel.solve_block(degree, 2, words, hi, lo, np.empty_like(hi), np.empty_like(lo))
    assert status == 2 and nodes > 0
    for top in (2**125, 2**130):
        rng = random.Random(top)
        numerators = np.array([top - rng.randint(0, 99) for _ in lie.lyndon_words(2, degree)], dtype=object)
        fast = _fast.solve_level(2, degree, numerators, 3)
        monkeypatch.setattr(_fast, "_kernel", None)
        reference = _fast.solve_level(2, degree, numerators, 3)
        monkeypatch.undo()
        assert fast.coordinates(2) == reference.coordinates(2)


def test_the_kernel_refuses_inconsistent_buffers():
    from workbench.lie import _lyndon_kernel

    words = np.zeros((2, 3), dtype=np.uint8)
    hi, lo = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.uint64)
    assert _lyndon_kernel.solve_block(4, 2, words, hi, lo, hi.copy(), lo.copy())[0] == 3  # 2×3 words, degree 4
    assert _lyndon_kernel.solve_block(40, 2, words, hi, lo, hi.copy(), lo.copy())[0] == 3  # past int32 values
    letters = np.array([[0, 0, 5], [0, 1, 1]], dtype=np.uint8)  # a letter past n_letters
    assert _lyndon_kernel.solve_block(3, 2, letters, hi, lo, hi.copy(), lo.copy())[0] == 3
    assert _lyndon_kernel.goldberg_rhs(4, 2, words, hi, lo)[0] == 3  # 2×3 words, degree 4
    assert _lyndon_kernel.goldberg_rhs(3, 2, letters, hi, lo)[0] == 3
    with pytest.raises(ValueError, match="a letter past n_letters"):
        _lyndon_kernel.level_blocks(3, 2, letters)
    order, starts = _lyndon_kernel.level_blocks(3, 2, words)
    args = (words, hi, lo, hi.copy(), lo.copy(), order, starts)
    assert _lyndon_kernel.solve_level(3, 2, *args, 0, 1) == 0  # zero right sides: the zero solution
    assert _lyndon_kernel.solve_level(4, 2, *args, 0, 1) == 3
    assert _lyndon_kernel.solve_level(3, 2, *args, 0, 0) == 3  # no parts
    bad_order = np.array([0, 7], dtype=np.int32)  # a position past the words
    assert _lyndon_kernel.solve_level(3, 2, words, hi, lo, hi.copy(), lo.copy(), bad_order, starts, 0, 1) == 3
    with pytest.raises(ValueError, match="positive denominator"):
        _lyndon_kernel.level_terms(hi, lo, 0, 0)
    with pytest.raises(ValueError, match="a selected position past the lower words"):
        _lyndon_kernel.prefixed_positions(3, words, 3, words, np.array([5], dtype=np.int64), 0)
    with pytest.raises(ValueError, match="more words than room"):
        _lyndon_kernel.lyndon_words(2, 10, 5)
    with pytest.raises(ValueError, match=r"n_letters in \[1, 255\]"):
        _lyndon_kernel.lyndon_words(0, 10, 5)


def _python_level(n_letters, degree, monkeypatch):
    # The level from the Python run groups and the Python-integer solve (no kernel anywhere): the oracle.
    monkeypatch.setattr(_fast, "_kernel", None)
    try:
        return _fast.solve_level(n_letters, degree, *_fast.increasing_product_log_numerators(n_letters, degree))
    finally:
        monkeypatch.undo()


@pytest.mark.skipif(not _levels.kernel_available(), reason="no compiled kernel")
@pytest.mark.parametrize(("n_letters", "top"), [(2, 19), (3, 9), (4, 6), (7, 4)])
def test_goldberg_right_sides_in_c_equal_the_python_run_groups(n_letters, top):
    # Oracle: the run-group products in Python integers (increasing_product_log_numerators, itself checked against
    # the word-by-word Goldberg sum in test_lie.py).  The same numerators over the same reduced denominator: equality.
    for degree in range(1, top + 1):
        hi, lo, denominator = _levels.increasing_log_rhs(n_letters, degree)
        numerators, expected = _fast.increasing_product_log_numerators(n_letters, degree)
        assert denominator == expected, (n_letters, degree)
        assert [(a << 64) + b for a, b in zip(hi, lo, strict=True)] == numerators.tolist(), (n_letters, degree)


@pytest.mark.skipif(not _levels.kernel_available(), reason="no compiled kernel")
@pytest.mark.parametrize(("n_letters", "top"), [(2, 15), (3, 8), (4, 6), (7, 4)])
def test_a_whole_level_in_the_kernel_equals_the_python_integer_path(monkeypatch, n_letters, top):
    # Oracle: the Python run groups solved by forward substitution in Python integers against T from the numpy
    # programme.  The kernel's level (right sides, blocks, solves, gcd) must be the same level: equality.
    for degree in range(1, top + 1):
        level = _levels.kernel_increasing_log_level(n_letters, degree)
        expected = _python_level(n_letters, degree, monkeypatch)
        assert (list(level.positions), list(level.numerators), level.denominator) == (
            list(expected.positions),
            list(expected.numerators),
            expected.denominator,
        ), (n_letters, degree)


@pytest.mark.skipif(not _levels.kernel_available(), reason="no compiled kernel")
def test_a_level_on_threads_equals_the_level_on_one(monkeypatch):
    # The blocks of a degree are shared round-robin between threads (the kernel releases the GIL); the level must
    # not depend on how many.  Exact: equality.
    monkeypatch.setattr(_levels, "solver_threads", lambda: 1)
    serial = [_levels.kernel_increasing_log_level(n, d) for n, d in ((2, 13), (3, 8))]
    monkeypatch.setattr(_levels, "solver_threads", lambda: 3)
    monkeypatch.setattr(_levels, "PARALLEL_FROM", 0)
    assert [_levels.kernel_increasing_log_level(n, d) for n, d in ((2, 13), (3, 8))] == serial


def test_even_degrees_by_relabelling_equal_the_solve(monkeypatch):
    # Oracle: the even degrees of log(e^A e^B) solved from Goldberg's coefficients like the odd ones (the Python
    # path, no kernel), against the relabelling of the lower degrees (with the kernel's search where it is built,
    # and with Python's dict lookup).  Exact: equality.
    lower = [_python_level(2, d, monkeypatch) for d in range(1, 16)]
    for degree in range(2, 17, 2):
        expected = _python_level(2, degree, monkeypatch)
        assert _levels.bch_even_level(lower[: degree - 1], degree) == expected, degree
        monkeypatch.setattr(_levels, "_kernel", None)
        assert _levels.bch_even_level(lower[: degree - 1], degree) == expected, degree
        monkeypatch.undo()


def test_levels_hold_numerators_past_64_bits_as_python_ints():
    # A level keeps its numerators in an int64 array where they fit and as Python ints where they do not; the
    # kernel's level_terms does the same.  Oracle: the integers put in.
    from array import array

    big = [3 * 2**70, -(2**64) + 1, 5]
    level = _levels.Level.from_lists(7, [1, 4, 6], big, 2**80)
    assert type(level.numerators) is list and level.numerators == [3 * 2**70, -(2**64) + 1, 5]
    small = _levels.Level.from_lists(7, [1, 4, 6], [6, 0, -9], 12)  # a zero dropped, reduced by 3
    assert type(small.numerators) is array and list(small.positions) == [1, 6]
    assert (list(small.numerators), small.denominator) == ([2, -3], 4)
    if _levels.kernel_available():
        values = [0, 2**100 + 5, -(2**90) * 3, 9]
        hi = array("q", [v >> 64 for v in values])
        lo = array("Q", [v & (2**64 - 1) for v in values])
        positions, numerators, denominator = _levels._kernel.level_terms(hi, lo, 0, 3)
        assert (array("q", positions).tolist(), numerators, denominator) == (
            [1, 2, 3],
            [(2**100 + 5) // 3, -(2**90), 3],
            1,
        )


def test_right_sides_the_kernel_cannot_hold_take_the_python_path(monkeypatch):
    # A kernel that reports an overflow (status 2) or bad input (3) for the right sides or the solve: the level is
    # then the Python path's, and bch the same series.  Oracle: the levels and the series made without the stub.
    expected_levels = {d: _python_level(3, d, monkeypatch) for d in range(1, 8)}
    expected = lie.bch_many(3, 7)
    kernel = _levels._kernel

    class Refusing:
        def __init__(self, where, status):
            self.where, self.status = where, status

        def __getattr__(self, name):
            return getattr(kernel, name)

        def goldberg_rhs(self, *args):
            return (self.status, 0, 0) if self.where == "rhs" else kernel.goldberg_rhs(*args)

        def solve_level(self, *args):
            return self.status if self.where == "solve" else kernel.solve_level(*args)

    if kernel is None:
        pytest.skip("no compiled kernel")
    for where in ("rhs", "solve"):
        for status in (2, 3):
            monkeypatch.setattr(_levels, "_kernel", Refusing(where, status))
            assert _levels.kernel_increasing_log_level(3, 5) is None
            assert (_levels.increasing_log_rhs(3, 5) is None) == (where == "rhs")
            assert lie.bch_many(3, 7) == expected
            assert all(level == expected_levels[level.degree] for level in increasing_log_levels(3, 7))
            monkeypatch.undo()


@pytest.mark.skipif(not _levels.kernel_available(), reason="without the kernel the engine's Python path uses numpy")
def test_bch_on_the_kernel_imports_no_numpy_scipy_or_sympy():
    # The measured call of `workbench bench bch` is a whole process: its imports are part of the cost.  Oracle:
    # sys.modules of a fresh interpreter after bch(12) and after reading its coordinates.
    code = (
        "import sys; from workbench.lie import bch; s = bch(12); n = len(s.coordinates); "
        "print(n, *sorted(m for m in ('numpy', 'scipy', 'sympy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(len(lie.bch(12).coordinates))]


def test_a_series_held_as_levels_reads_as_its_dict():
    # bch keeps integer levels and builds {word: Fraction} on the first read of .coordinates; the series must be
    # indistinguishable from one made with the dict.  Oracle: the levels' own coordinates, and an eager LieSeries.
    import dataclasses
    import pickle

    from workbench.lie._series import DeferredCoordinates

    series = lie.bch(9)
    assert isinstance(vars(series)["_coordinates"], DeferredCoordinates)  # nothing built yet
    expected = {}
    for level in increasing_log_levels(2, 9):
        expected.update(level.coordinates(2))
    eager = lie.LieSeries("bch", 2, 9, expected, factors=series.factors)
    assert type(series.coordinates) is dict and series.coordinates == expected
    assert vars(series)["_coordinates"] is series.coordinates  # built once, then kept
    assert series == eager and repr(series) == repr(eager) and lie.bch(9) == eager
    assert pickle.loads(pickle.dumps(lie.bch(9))) == eager
    assert dataclasses.replace(lie.bch(9), name="x").coordinates == expected
    assert [f.name for f in dataclasses.fields(series)] == [f.name for f in dataclasses.fields(eager)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        series.coordinates = {}


@pytest.mark.parametrize(("n_letters", "top"), [(1, 3), (2, 14), (3, 8), (26, 3)])
def test_lyndon_words_in_c_equal_duvals_generation_in_python(n_letters, top):
    for degree in range(1, top + 1):
        expected = _words._duval_generation(n_letters, degree)
        assert _words.lyndon_word_array(n_letters, degree).tolist() == [list(w) for w in expected]


@pytest.mark.parametrize(("n_letters", "degree"), [(2, 2), (2, 13), (3, 7), (5, 5)])
def test_vectorised_standard_factorisations_equal_the_word_by_word_ones(monkeypatch, n_letters, degree):
    for limit in (None, 1):  # None: the int64 codes; 1: forces the word-by-word branch
        _words.standard_factor_positions.cache_clear()
        if limit is not None:
            monkeypatch.setattr(_words, "CODE_LIMIT", limit)
        left_len, left, right = _words.standard_factor_positions(n_letters, degree)
        for k, w in enumerate(lie.lyndon_words(n_letters, degree)):
            u, v = lie.standard_factorization(w)
            assert (left_len[k], lie.lyndon_words(n_letters, len(u))[left[k]]) == (len(u), u)
            assert lie.lyndon_words(n_letters, len(v))[right[k]] == v
        monkeypatch.undo()
    _words.standard_factor_positions.cache_clear()


def test_lyndon_brackets_equal_the_tree_renderer():
    for degree in range(1, 11):
        assert lyndon_brackets(2, degree) == tuple(
            lie.tree_to_string(lie.lyndon_tree(w)) for w in lie.lyndon_words(2, degree)
        )


def test_levels_hold_the_series_exactly():
    # Oracle: the series' own coordinates; a level is positions, integer numerators and one reduced denominator.
    series = lie.bch(12)
    for level in increasing_log_levels(2, 12):
        assert level.coordinates(2) == series.component(level.degree).coordinates
        assert np.all(np.diff(level.positions) > 0) and all(v != 0 for v in level.numerators)
        assert math.gcd(level.denominator, *level.numerators) == 1


# --- the ceiling: memory, estimated before any work -------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "budget", "pattern"),
    [
        (
            lambda: lie.bch(26),
            "500MiB",
            r"degree must be at most 25 for bch \(memory budget 0\.488 GiB, set by memory_limit\), got 26: "
            r"estimated 0\.\d+ GiB and \d+\.?\d* s$",
        ),
        (
            lambda: lie.bch(1000),
            "8GiB",
            r"degree must be at most 26 for bch \(past it the Lyndon word lists alone exceed the work budget\), "
            r"got 1000: estimated 0\.\d+ GiB and \d+ s already at degree=26",
        ),
        (lambda: lie.bch_many(3, 10**9), "8GiB", r"degree must be at most 16 for bch3 .*got 1000000000"),
        (lambda: lie.bch_many(4, 40), "8GiB", r"degree must be at most 12 for bch4 .*got 40"),
        (lambda: lie.bch_many(4, 12), "128MiB", r"degree must be at most 11 for bch4 \(memory budget 0\.125 GiB"),
        (lambda: lie.symmetric_bch(27), "8GiB", r"degree must be at most 26 for bch"),
        (lambda: lie.SERIES["bch3"](10**9), "8GiB", r"degree must be at most 16 for bch3"),
    ],
)
def test_the_bch_family_is_refused_past_its_memory_ceiling(call, budget, pattern):
    # Oracle: the message names the parameter, the ceiling, the budget and both estimates (exact text).
    with memory_limit(budget), pytest.raises(ValueError, match=pattern):
        call()


def test_the_memory_ceiling_admits_what_fits():
    with memory_limit("500MiB"):
        assert check_increasing_log(22, 2, "bch") == 22
    with memory_limit("4GiB"):
        assert check_increasing_log(24, 2, "bch") == 24  # the degree 24 in ≤ 4 GiB


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_the_estimates_bound_a_measured_run():
    # Oracle: a fresh interpreter's CPU time and peak resident set for bch(18) (RSS is the whole process, as the
    # model).  Factor-2 bounds: the model is fitted within ±16 % on the reference machine, other machines differ.
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec from the (large) pytest parent.
    code = (
        "import resource; from workbench.lie import bch; bch(18); r = resource.getrusage(resource.RUSAGE_SELF); "
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
        "print(int(hwm) * 1024, r.ru_utime + r.ru_stime)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    peak, seconds = float(out[0]), float(out[1])
    cost = lie.bch_cost(18)
    assert 0.5 < cost.bytes / peak < 2.0
    assert seconds < 4 * cost.seconds  # time varies more across machines; only a gross misestimate fails
    assert lie.bch_cost(24).bytes < 4 * 2**30
    with pytest.raises(ValueError, match=r"degree must be an integer in \[1, 64\], got 65"):
        lie.bch_cost(65)


# --- streaming JSON ------------------------------------------------------------------------------------------


def _document(series, basis="lyndon"):
    return json.dumps(series.to_json(basis), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize(
    ("argv", "series", "basis"),
    [
        (["derive", "bch", "--degree", "12", "--format", "json"], lambda: lie.bch(12), "lyndon"),
        (["derive", "bch3", "--degree", "6", "--format", "json"], lambda: lie.bch_many(3, 6), "lyndon"),
        (["derive", "bch", "--degree", "1", "--format", "json"], lambda: lie.bch(1), "lyndon"),
        (["derive", "bch", "--degree", "8", "--format", "json", "--basis", "hall"], lambda: lie.bch(8), "hall"),
        (["derive", "zassenhaus", "--degree", "6", "--format", "json"], lambda: lie.zassenhaus(6), "lyndon"),
        (["derive", "magnus", "--degree", "5", "--format", "json"], lambda: lie.SERIES["magnus"](5), "lyndon"),
        (["derive", "commutator", "--degree", "6", "--format", "json"], lambda: lie.commutator_log(6), "lyndon"),
    ],
)
def test_streamed_json_is_the_document_byte_for_byte(capsys, argv, series, basis):
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out == _document(series(), basis)
    assert captured.err == ""  # quick runs print no estimate


def test_an_empty_series_streams_an_empty_list():
    out = io.StringIO()
    zero = lie.LieSeries("zero", 2, 3, {})
    lie.write_series_json(out, zero)
    assert out.getvalue() == _document(zero)


def test_write_bch_json_is_the_document():
    for degree, n_factors in ((1, 2), (9, 2), (5, 3), (4, 4)):
        out = io.StringIO()
        lie.write_bch_json(out, degree, n_factors)
        assert out.getvalue() == _document(lie.bch_many(n_factors, degree))


def test_level_terms_and_series_terms_agree():
    series = lie.bch(10)
    streamed = [text for level in increasing_log_levels(2, 10) for text in level_terms(2, level)]
    assert streamed == list(series_terms(series, "lyndon"))


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda: lie.write_series_json(None, lie.bch(2)), TypeError, r"out must be a writable text stream"),
        (lambda: lie.write_series_json(io.StringIO(), {}), TypeError, r"series must be a LieSeries .*got dict"),
        (lambda: lie.write_series_json(io.StringIO(), lie.bch(2), "x"), ValueError, r"basis must be one of"),
        (lambda: lie.write_bch_json(io.StringIO(), 0), ValueError, r"degree must be a positive integer, got 0"),
        (lambda: lie.write_bch_json(io.StringIO(), 5, 1), ValueError, r"n_factors must be an integer in \[2, 26\]"),
        (lambda: lie.write_bch_json("out", 5), TypeError, r"out must be a writable text stream .*got str"),
    ],
)
def test_the_writers_refuse_bad_input(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_write_bch_json_is_held_to_the_memory_ceiling():
    out = io.StringIO()
    with memory_limit("100MiB"), pytest.raises(ValueError, match=r"degree must be at most 23 for bch \(memory"):
        lie.write_bch_json(out, 24)
    assert out.getvalue() == ""  # refused before anything is written


def test_a_long_run_prints_its_estimate_first(capsys, monkeypatch):
    # A run estimated past ANNOUNCE_SECONDS (1 s: bch from 21 on) prints its estimate on stderr before the work
    # starts; stdout stays the JSON document.  The threshold is lowered here so that the test stays quick; it lives
    # in the module of the catalogue commands, where `derive` reads it.
    from workbench.cli import _catalogue

    monkeypatch.setattr(_catalogue, "ANNOUNCE_SECONDS", 0.01)
    assert main(["derive", "bch", "--degree", "12", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("bch through degree 12: estimated 0.") and "GiB peak" in captured.err
    assert json.loads(captured.out)["degree"] == 12


# --- the published tables, at the engine's scale (slow) --------------------------------------------------------


def _fingerprint(series) -> str:
    items = sorted(("".join("ABCDEFG"[i] for i in w), str(c)) for w, c in series.coordinates.items())
    return hashlib.sha256(repr(items).encode()).hexdigest()


@pytest.mark.slow
def test_bch_20_equals_the_previous_engine_and_hofstatters_program():
    # The previous engine's degree-20 series equalled Hofstätter's `bch` (C, github.com/HaraldHofstaetter/BCH,
    # the Casas–Murua table) term for term; its SHA-256 over the sorted (word, coefficient) pairs is pinned here.
    # Also symmetric BCH (15), log(e^A e^B e^C) (10) and the group commutator (12), pinned the same way.
    assert _fingerprint(lie.bch(20)) == "11097a14efaf82462d6232492927c73a3dcf256ab3a01eb04374f666b7678550"
    assert _fingerprint(lie.symmetric_bch(15)) == "8775f415df45f927e1b69a7faa5219ef2222eacb0b66291f8e56f4f0dbd0db5c"
    assert _fingerprint(lie.bch_many(3, 10)) == "1d031e8c62635a47528b542410177f28f34b47541f9967765890cc52359131a8"
    assert _fingerprint(lie.commutator_log(12)) == "9a77a7ed9dde5dc78ac4579ad8db8cc45d2867e36fcd8dfdb20653ef1ed4cd3a"


@pytest.mark.slow
def test_bch_22_matches_the_published_counts_and_the_bernoulli_closed_form():
    # Published nonzero counts per degree (D. Bar-Natan's list, MathOverflow 116137; Hofstätter's tables):
    # …, 27594, 27593, 99857, 99857 for degrees 19–22.  Closed form: [A^{n−1}B] = B_{n−1}/(n−1)!.
    import sympy as sp

    series = lie.bch(22)
    assert series.nonzero_per_degree()[-4:] == [27594, 27593, 99857, 99857]
    for n in (21, 22):
        expected = Fraction(sp.bernoulli(n - 1) / sp.factorial(n - 1))
        assert series.coordinates.get((0,) * (n - 1) + (1,), Fraction(0)) == expected


@pytest.mark.slow
def test_kernel_and_python_paths_agree_at_degree_17_on_the_bch_series(monkeypatch):
    fast = lie.bch(17)
    monkeypatch.setattr(_fast, "_kernel", None)
    monkeypatch.setattr(_levels, "_kernel", None)
    monkeypatch.setattr(_words, "_kernel", None)
    _words.lyndon_word_bytes.cache_clear()
    _words.lyndon_word_array.cache_clear()
    try:
        assert lie.bch(17).coordinates == fast.coordinates
    finally:
        monkeypatch.undo()
        _words.lyndon_word_bytes.cache_clear()
        _words.lyndon_word_array.cache_clear()


_BLOCK_KERNEL = """
import sys, warnings
warnings.simplefilter("default")
class NoKernel:  # as an install without a C compiler: the extension module is absent
    def find_spec(self, name, path=None, target=None):
        if name == "workbench.lie._lyndon_kernel":
            raise ImportError("no compiled kernel")
sys.meta_path.insert(0, NoKernel())
import workbench.lie, workbench.lie._levels
from workbench.lie import bch
print(workbench.lie._levels.kernel_available(), len(bch(6).coordinates))
"""


def test_an_install_without_the_kernel_says_once_what_it_costs():
    import os

    from workbench.lie import bch

    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_LIE_KERNEL"}
    done = subprocess.run([sys.executable, "-c", _BLOCK_KERNEL], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", str(len(bch(6).coordinates))]  # the Python path, the same series
    lines = [line for line in done.stderr.splitlines() if "UserWarning" in line]
    assert len(lines) == 1, done.stderr
    assert "the compiled Lyndon kernel is not built (no C compiler when the package was installed)" in lines[0]
    assert "bch stops at degree 20 (up to 26 with the kernel, as memory allows)" in lines[0]
    # Switched off on purpose (WORKBENCH_LIE_KERNEL=0, as `workbench bench bch` does): no message.
    quiet = subprocess.run(
        [sys.executable, "-c", _BLOCK_KERNEL], capture_output=True, text=True, env={**env, "WORKBENCH_LIE_KERNEL": "0"}
    )
    assert quiet.returncode == 0 and "UserWarning" not in quiet.stderr
