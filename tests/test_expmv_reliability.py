"""Reliability reproducers for ``workbench.expmv`` and scipy's own expm_multiply cases, run through ``expmv``.

Each test names the reproducer it pins (numbered as in the issue) and its oracle.  The scipy cases are
adapted (rewritten, not copied) from scipy/sparse/linalg/tests/test_expm_multiply.py: random matrices of
several sizes, time grids, and the dtype grid.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from workbench.expmv import AccuracyWarning, expmv, expmv_krylov
from workbench.expmv._linear import as_linear_map


def relerr(y, exact):
    return np.linalg.norm(y - exact) / np.linalg.norm(exact)


def wishart():
    g = np.random.default_rng(2024).standard_normal((50, 50))
    return -(g @ g.T) / np.sqrt(50)


# ---- reproducer 1: Chebyshev on an unproven (Lanczos) interval ---------------------------------------


@pytest.mark.parametrize("t", [10.0, 30.0])
@pytest.mark.parametrize("start", ["ones", "gaussian", "identity"])
def test_repro1_symmetric_large_t_never_runs_chebyshev_on_a_disproved_interval(t, start):
    # Reproducer 1: A = −GGᵀ/√50 (λ_max ≈ −2e-4 sits at a Marchenko–Pastur hard edge Lanczos undershoots);
    # t = 10 returned 4e176 (truth ≈ 0.5), t = 30 a false overflow error.  Oracle: scipy.linalg.expm
    # (Padé, ‖tA‖ ≤ 830, all eigenvalues ≤ 0 so e^{tA} is a contraction); tolerance 1e-11 relative:
    # rounding ~u·|t|·‖A‖ ≈ 1e-13 in either method, with a factor 100 of room.
    a = wishart()
    b = {"ones": np.ones(50), "gaussian": np.random.default_rng(1).standard_normal(50), "identity": np.eye(50)}[start]
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        y, info = expmv(a, b, t, return_info=True)
    assert relerr(y, scipy.linalg.expm(t * a) @ b) <= 1e-11
    # Either the Lanczos interval survived the growth check, or Krylov took over (and the info says so).
    assert info["interval_source"] in ("lanczos", "lanczos bound failed; krylov fallback")
    if info["interval_source"] != "lanczos":
        assert info["method"] == "krylov" and "fell back to krylov" in info["reason"]


# ---- reproducer 2: complex A ---------------------------------------------------------------------------


def test_repro2_complex_operator_gives_the_complex_value():
    # Reproducer 2: a complex LinearOperator with real B returned [1, 1] (imaginary part dropped), and complex
    # data was then refused.  Oracle: scipy.linalg.expm (dense Padé); 1e-14 relative (‖A‖ ≈ 2, a 2×2 problem:
    # rounding only, well inside the default tol u = 1.1e-16 times a few dozen products).
    dense = np.array([[1j, 1j], [0, 1j]])
    exact = scipy.linalg.expm(dense) @ np.ones(2)  # [-0.30 + 1.38j, 0.54 + 0.84j]
    for operator in (scipy.sparse.linalg.aslinearoperator(dense), dense, scipy.sparse.csr_array(dense)):
        for method in ("auto", "taylor", "krylov"):
            y = expmv(operator, np.ones(2), method=method)
            assert y.dtype == np.complex128
            assert relerr(y, exact) <= 1e-14


def test_repro2_real_declared_operator_with_a_complex_action_is_an_error_not_truncated():
    # Reproducer 2 (second half): an operator declared float64 whose action is complex would have its
    # imaginary part cast away.  It is caught at the first product, whatever the method.
    sneaky = scipy.sparse.linalg.LinearOperator((2, 2), matvec=lambda x: 1j * x, dtype=np.float64)
    for method in ("krylov", "taylor"):
        with pytest.raises(
            TypeError, match=r"A is declared real \(dtype float64\), but its action returned dtype complex128"
        ):
            expmv(sneaky, np.ones(2), method=method)
    # Declared complex, the same action is correct: e^{iI}[1, 1] = e^i [1, 1] (closed form; 1e-14 relative).
    honest = scipy.sparse.linalg.LinearOperator((2, 2), matvec=lambda x: 1j * x, dtype=np.complex128)
    np.testing.assert_allclose(expmv(honest, np.ones(2), method="krylov"), np.exp(1j) * np.ones(2), rtol=1e-14)


# ---- reproducer 3: grids of negative times -----------------------------------------------------------


def generator(n, seed):
    q = np.random.default_rng(seed).random((n, n)) * 3.0
    np.fill_diagonal(q, 0.0)
    return q - np.diag(q.sum(axis=1))


@pytest.mark.parametrize("n", [3, 12])
def test_repro3_negative_grid_is_walked_outwards_from_zero(n):
    # Reproducer 3: expmv(Q, B, [-5, 0])[1] walked 0 → −5 → 0 and came back off by up to 2.8e9×.
    # Oracle: e^{0·Q}B = B exactly; e^{−5Q}B by scipy.linalg.expm, 1e-8 relative (‖5Q‖ up to ~100 and
    # e^{−5Q} has norm up to e^{~200}: the problem's own condition, not the walk, sets this tolerance).
    q, b = generator(n, 5), np.random.default_rng(6).standard_normal(n)
    y = expmv(q, b, [-5.0, -1.0, 0.0, 0.5])
    np.testing.assert_array_equal(y[2], b)
    for k, t in enumerate([-5.0, -1.0, 0.0, 0.5]):
        assert relerr(y[k], scipy.linalg.expm(t * q) @ b) <= 1e-8


# ---- reproducer 4: Krylov norms -----------------------------------------------------------------------


@pytest.mark.parametrize("size", [1e-170, 1.0, 1e182])
def test_repro4_krylov_norms_are_scaled(size):
    # Reproducer 4: a rotation generator with B = [1e-170, 0] came back as B (norm underflow); a large
    # solution overflowed the estimate.  Oracle: closed form e^{tJ}e₁ = (cos t, −sin t); 1e-14 relative
    # (a 2×2 invariant space: exact up to rounding).
    a = scipy.sparse.linalg.aslinearoperator(np.array([[0.0, 1.0], [-1.0, 0.0]]))
    y, info = expmv(a, np.array([size, 0.0]), 1.0, return_info=True)
    np.testing.assert_allclose(y / size, [np.cos(1.0), -np.sin(1.0)], rtol=1e-14, atol=1e-15)
    assert info["matvecs"] <= 5


def test_repro4_growing_solution_takes_few_steps():
    # Reproducer 4 (growth): e^{diag(1, 420)} [1, 1] ≈ [e, 2.5e182] made the estimate infinite (1000 steps).
    # Oracle: closed form; Frobenius-relative 1e-10: the projected Hessenberg exponential at ‖τH‖ = 420 is
    # scaling-and-squaring in scipy.linalg.expm, which loses ~3 digits there (observed 1.4e-11).
    a = scipy.sparse.linalg.aslinearoperator(np.diag([1.0, 420.0]))
    y, info = expmv_krylov(as_linear_map(a), np.ones((2, 1)), 1.0)
    scale = np.exp(420.0)  # compare in units of the largest entry (a plain norm would overflow here)
    assert relerr(y[:, 0] / scale, np.exp([1.0, 420.0]) / scale) <= 1e-10 and info["steps"] <= 10


# ---- reproducer 5: huge non-normal operator ----------------------------------------------------------


@pytest.mark.parametrize("t", [1.0, 10.0])
def test_repro5_huge_nonnormal_operator_gets_the_right_answer(t):
    # Reproducer 5: Krylov on [[1, 1e17], [0, 1]] gave 100 % error at t = 1 and a false overflow at t = 10.
    # Oracle: closed form e^{tA} = e^t [[1, 1e17 t], [0, 1]] (= scipy.linalg.expm); 1e-12 relative
    # (Taylor with power-norm bounds, no cancellation: all terms are positive).
    j = np.array([[1.0, 1e17], [0.0, 1.0]])
    y, info = expmv(scipy.sparse.linalg.aslinearoperator(j), np.ones(2), t, return_info=True)
    np.testing.assert_allclose(y, np.exp(t) * np.array([1.0 + 1e17 * t, 1.0]), rtol=1e-12)
    assert info["method"] == "taylor" and "swamp a Krylov projection" in info["reason"]
    # Krylov itself refuses, saying what to change.
    with pytest.raises(ValueError, match=r"expmv_krylov cannot resolve exp\(tA\)B.*use method='taylor'"):
        expmv(scipy.sparse.linalg.aslinearoperator(j), np.ones(2), t, method="krylov")


# ---- reproducers 6 and 7: empty blocks, t = 0 ----------------------------------------------------------


@pytest.mark.parametrize("method", ["auto", "taylor", "krylov", "uniformization"])
def test_repro6_empty_block_gives_an_empty_result(method):
    # Reproducer 6: a [2, 0] block raised a BLAS error.  Oracle: e^{tA} applied to no columns is no columns.
    q = np.array([[-1.0, 1.0], [2.0, -2.0]])
    y = expmv(q, np.zeros((2, 0)), 1.5, method=method)
    assert y.shape == (2, 0)
    assert expmv(q, np.zeros((2, 0)), [0.0, 1.0]).shape == (2, 2, 0)


def test_repro7_time_zero_returns_a_copy():
    # Reproducer 7: at t = 0 the caller's B itself was returned.  Oracle: e^{0·A}B = B, as a new array.
    q, b = np.array([[-1.0, 1.0], [2.0, -2.0]]), np.ones(2)
    y = expmv(q, b, 0.0)
    assert y is not b and not np.shares_memory(y, b)
    np.testing.assert_array_equal(y, b)
    grid = expmv(q, b, [0.0, 0.0])
    grid[0, 0] = 5.0
    assert b[0] == 1.0


# ---- scipy's expm_multiply cases, through expmv -------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 10, 30])
@pytest.mark.parametrize("method", ["auto", "taylor", "krylov"])
def test_scipy_random_matrices_of_several_sizes(n, method):
    # scipy's random-matrix cases: A = randn/√n (several n), B a vector and a block.  Oracle:
    # scipy.linalg.expm; 1e-11 relative (‖A‖ ≈ 2: rounding only, well inside the default tol u).
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) / np.sqrt(n)
    for b in (rng.standard_normal(n), rng.standard_normal((n, 3))):
        y = expmv(a, b, 1.0, method=method)
        assert relerr(y, scipy.linalg.expm(a) @ b) <= 1e-11


@pytest.mark.parametrize(("start", "stop", "num"), [(0.1, 0.5, 5), (0.0, 10.0, 11), (-2.0, 2.0, 9), (2.0, 2.0, 3)])
def test_scipy_time_grids(start, stop, num):
    # scipy's interval cases (start, stop, num, endpoint=True), on a random 20×20 and a sparse operator.
    # Oracle: scipy.linalg.expm at each grid point; 1e-9 relative (‖tA‖ up to ~30, one walk per sign).
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 20)) / np.sqrt(20)
    b = rng.standard_normal((20, 2))
    grid = np.linspace(start, stop, num)
    for operator in (a, scipy.sparse.csr_array(a)):
        y = expmv(operator, b, grid)
        for k, t in enumerate(grid):
            assert relerr(y[k], scipy.linalg.expm(t * a) @ b) <= 1e-9


#: scipy's dtype grid (test_expm_multiply_dtype): integer, single, double, complex; longdouble is refused here.
SCIPY_DTYPES = (np.intc, np.int64, np.float32, np.float64, np.complex64, np.complex128)


def unit_of(dtype):
    return 2.0**-24 if np.dtype(dtype) in (np.float32, np.complex64) else 2.0**-53


@pytest.mark.parametrize("b_is_matrix", [False, True])
@pytest.mark.parametrize("dtype_b", SCIPY_DTYPES)
@pytest.mark.parametrize("dtype_a", SCIPY_DTYPES)
def test_scipy_dtype_grid(dtype_a, dtype_b, b_is_matrix):
    # scipy's dtype grid: A = inv(rand(7, 7)) (complex: inv(rand + i·rand)), B = 2·rand (complex: rand + i·rand),
    # one time and the grid linspace(0.1, 3.2, 13), dense and as a LinearOperator.  Oracle: scipy.linalg.expm
    # of the (already cast) data in complex128.  Tolerance 100·u·max(1, ‖tA‖₁), u of the result's dtype:
    # rounding in Taylor/Arnoldi grows like u‖tA‖ (observed at most 5·u·‖tA‖₁ here; ‖A‖₁ ≈ 20), so
    # single precision (float32, complex64) is looser by its u = 6e-8.
    rng = np.random.default_rng(1234)
    n, shape = 7, ((7, 3) if b_is_matrix else (7,))
    noise = 1j * rng.random((n, n)) if np.dtype(dtype_a).kind == "c" else 0.0
    a = scipy.linalg.inv(rng.random((n, n)) + noise).astype(dtype_a)
    b = 2.0 * rng.random(shape) if np.dtype(dtype_b).kind != "c" else rng.random(shape) + 1j * rng.random(shape)
    b = b.astype(dtype_b)
    expected = scipy.sparse.linalg.expm_multiply(a, b).dtype  # scipy's dtype rule, for explicit A
    grid = np.linspace(0.1, 3.2, 13)
    for operator in (a, scipy.sparse.linalg.aslinearoperator(a)):
        single = expmv(operator, b)
        stacked = expmv(operator, b, grid)
        assert single.dtype == stacked.dtype == expected
        for t, y in [(1.0, single), *zip(grid, stacked, strict=True)]:
            exact = scipy.linalg.expm(t * a.astype(np.complex128)) @ b
            scale = max(1.0, np.linalg.norm(t * a.astype(np.complex128), 1))
            assert relerr(y, exact) <= 100 * unit_of(y.dtype) * scale


def test_scipy_complex_case():
    # scipy's test_complex: A = [[i, i], [0, i]], B = [i, i].  Oracle: the closed form
    # e^{A} = e^{i}[[1, 1], [0, 1]], so e^{A}B = [i e^i + i·i e^i, i e^i]; 1e-14 relative (rounding only).
    a, b = np.array([[1j, 1j], [0, 1j]]), np.array([1j, 1j])
    exact = np.array([1j * np.exp(1j) + 1j * (1j * np.cos(1) - np.sin(1)), 1j * np.exp(1j)])
    for operator in (a, scipy.sparse.linalg.aslinearoperator(a), scipy.sparse.csr_array(a)):
        y = expmv(operator, b)
        assert y.dtype == np.complex128 and relerr(y, exact) <= 1e-14


@pytest.mark.parametrize(
    ("diagonal", "b"),
    [
        (np.arange(5), np.ones(5, dtype=int)),  # A and B integer
        (-1j * np.arange(5), np.ones(5, dtype=int)),  # A complex, B integer
        (np.arange(5), np.full(5, 1j)),  # A integer, B complex
    ],
)
def test_scipy_interval_dtype_cases(diagonal, b):
    # scipy's test_sparse_expm_multiply_interval_dtypes: a sparse diagonal A, the grid [0, 1], B a vector and
    # the identity block.  Oracle: the closed form e^{tD} = diag(e^{t d_i}); 1e-13 relative (a diagonal
    # operator, ‖A‖ = 4: rounding only).
    a = scipy.sparse.csr_array(np.diag(diagonal))
    y = expmv(a, b, [0.0, 1.0])
    np.testing.assert_allclose(y[-1], np.exp(diagonal) * b, rtol=1e-13)
    block = expmv(a, np.identity(5, dtype=b.dtype), [0.0, 1.0])
    np.testing.assert_allclose(np.diag(block[-1]) * b, np.exp(diagonal) * b, rtol=1e-13)
    assert y.dtype == block.dtype == np.result_type(a.dtype if a.dtype.kind != "i" else float, b.dtype, float)


# --- unbounded work and numpy scalars (the "unbounded work" and "valid input refused" lists) ----------


def test_tol_accepts_numpy_scalars_and_0d_arrays():
    # Reproducer: tol=np.float32(1e-6) was refused as "must be in (0, 1)".  Oracle: the same call with a float.
    Q = np.array([[-1.0, 1.0], [2.0, -2.0]])
    expected = expmv(Q, np.ones(2), 0.7, tol=1e-6)
    for tol in (np.float32(1e-6), np.float64(1e-6), np.array(1e-6)):
        np.testing.assert_array_equal(expmv(Q, np.ones(2), 0.7, tol=tol), expected)
    for bad in (True, "x", 0.0, 1.0):
        with pytest.raises(ValueError, match=r"tol must be in \(0, 1\), got"):
            expmv(Q, np.ones(2), 0.7, tol=bad)


def test_taylor_refuses_unbounded_work_before_it_starts():
    # Reproducers: expmv(..., 1e308, method="taylor") raised OverflowError from math.ceil(inf); a finite but huge
    # t·‖A‖ planned billions of products.  Both are refused before any product is formed.
    Q = np.array([[-1.0, 1.0], [2.0, -2.0]])
    with pytest.raises(ValueError, match=r"needs the norm bound \|t\|·‖A‖ to be finite, got inf"):
        expmv(Q, np.ones(2), 1e308, method="taylor")
    with pytest.raises(
        ValueError, match=r"expmv_taylor would need about 8\.\d+e\+09 products of A .* budget of 1e\+07"
    ):
        expmv(Q, np.ones(2), 1e9, method="taylor")


def test_uniformization_and_poisson_truncation_refuse_unbounded_work():
    # Reproducers: expmv(Q, B, 1e9) ran for hours; poisson_truncation(1e12) hung and (1e20) tried to allocate
    # 1.27 TiB.  The cost (≥ Λ = qt products; a window of ~2√(2Λ log(4/tol)) terms) is checked first.
    from workbench.expmv import poisson_truncation

    Q = np.array([[-1.0, 1.0], [2.0, -2.0]])
    with pytest.raises(
        ValueError,
        match=r"uniformization needs 2000001908 block products .* at least ⌊qt⌋ \+ 1\), more than max_matvecs = 10000000",
    ):
        expmv(Q, np.ones(2), 1e9)
    for mean in (1e12, 1e20):
        with pytest.raises(
            ValueError, match=r"poisson_truncation needs a window of about .* terms for mean = 1e\+(12|20)"
        ):
            poisson_truncation(mean)
    left, right, weights = poisson_truncation(1e9)  # within budget: still works (oracle: Σ weights = 1)
    assert left < 1e9 < right and abs(weights.sum() - 1.0) < 1e-12


def test_chebyshev_with_a_subnormal_block_scales_in_two_exact_halves():
    # Found by hypothesis: B = 2.2e-313 (subnormal) made the normalising factor 2^1038 overflow (OverflowError
    # from math.ldexp).  Oracle: scipy.linalg.expm; tolerance 1e-11 relative to the largest entry, since the
    # subnormal result ~9e-311 carries only ~40 significant bits.
    A = np.ones((6, 6))
    B = np.full((6, 2), 2.22507386e-313)
    reference = scipy.linalg.expm(A) @ B
    result = expmv(A, B, 1.0, method="chebyshev")
    assert np.abs(result - reference).max() <= 1e-11 * np.abs(reference).max()


def test_banded_generator_refuses_a_fractional_size():
    # Reproducer: banded_markov_generator(50, 2.5) rounded the bandwidth silently.
    from workbench.expmv import banded_markov_generator

    with pytest.raises(ValueError, match=r"bandwidth must be an integer, got 2\.5"):
        banded_markov_generator(50, 2.5)
    with pytest.raises(ValueError, match=r"n must be an integer, got 50\.5"):
        banded_markov_generator(50.5, 2)
    with pytest.raises(ValueError, match=r"n must be an integer, got True"):
        banded_markov_generator(True, 1)
    assert banded_markov_generator(np.int64(50), 2.0).offsets == banded_markov_generator(50, 2).offsets


# ---- huge t and huge A: a ValueError naming what to change, never a bare OverflowError ----------------------


def _huge_cases():
    import workbench.expmv as ex

    q, s, g = np.array([[-1.0, 1.0], [2.0, -2.0]]), np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([[0.5, 1.0], [0, 0.2]])
    ones = np.ones(2)
    cases = []
    for t in (1e308, 1e300, -1e308):
        for name, a in (("generator", q), ("symmetric", s), ("general", g), ("scalar", 3.0 * np.eye(2))):
            for method in ("auto", "taylor", "krylov", "chebyshev", "uniformization"):
                if not (name == "scalar" and t < 0):  # e^{-3e308}·B = 0 is the right answer there
                    cases.append(
                        (f"expmv-{name}-{method}-{t:g}", lambda a=a, m=method, t=t: ex.expmv(a, ones, t, method=m))
                    )
        operator = scipy.sparse.linalg.aslinearoperator(g)
        cases += [
            (f"expmv-operator-{t:g}", lambda t=t, o=operator: ex.expmv(o, ones, t)),
            (f"chebyshev_exp_coefficients-{t:g}", lambda t=t: ex.chebyshev_exp_coefficients(t, (0.0, 1.0))),
            (f"poisson_truncation-{t:g}", lambda t=t: ex.poisson_truncation(abs(t))),
            (f"expm_rank1-{t:g}", lambda t=t: ex.expm_rank1(ones, ones, t)),
            (f"expmv_rank1-{t:g}", lambda t=t: ex.expmv_rank1(ones, ones, ones, t)),
            (f"expmv_kronecker_sum-{t:g}", lambda t=t: ex.expmv_kronecker_sum(s, s, np.ones(4), t)),
            (f"kronecker-{t:g}", lambda t=t: ex.expmv(ex.KroneckerSum(s, s), np.ones(4), t)),
            (f"banded-{t:g}", lambda t=t: ex.expmv(ex.banded_markov_generator(10, 1, seed=0), np.ones(10), t)),
        ]
        if t > 0:
            cases.append((f"phi1-{t:g}", lambda t=t: ex.phi1(np.array([t]))))
    for name, a in (("generator", q), ("symmetric", s), ("general", g), ("scalar", 3.0 * np.eye(2))):
        for method in ("auto", "taylor", "krylov", "chebyshev", "uniformization"):
            cases.append(
                (f"expmv-1e300A-{name}-{method}", lambda a=a, m=method: ex.expmv(1e300 * a, ones, 1.0, method=m))
            )
        operator = scipy.sparse.linalg.aslinearoperator(1e300 * a)
        cases.append((f"expmv-1e300A-{name}-operator", lambda o=operator: ex.expmv(o, ones, 1.0)))
    cases += [
        ("expm_rank1-1e300u", lambda: ex.expm_rank1(1e300 * ones, ones)),
        ("expmv_kronecker_sum-1e300A", lambda: ex.expmv_kronecker_sum(1e300 * s, s, np.ones(4))),
    ]
    return cases


@pytest.mark.parametrize(("name", "call"), _huge_cases(), ids=[name for name, _ in _huge_cases()])
def test_huge_t_or_A_is_a_value_error(name, call):
    # Issue 17: t = 1e308, 1e300, -1e308 or A scaled by 1e300 raised OverflowError (math.ceil(inf), math.exp)
    # or returned inf.  Every public function of workbench.expmv now refuses with a ValueError whose message
    # names what to change (t, A, B, the interval or the factors).  Oracle: the result is beyond the float range
    # or the work beyond the budget, so no finite answer is right.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow notice on the way to the refusal
        with pytest.raises(
            ValueError, match=r"(?i)\bt\b|\bA\b|\bz\b|rescale|shorten|generator|symmetric|semigroup|mean"
        ):
            call()


def test_taylor_budget_applies_to_an_action_only_operator():
    # An operator with only matvec (no rmatvec, no entries): the 1-norm is a lower bound from 10 probes, and
    # the plan is still checked against MAX_PRODUCTS before any Taylor product.  Oracle: |t|·‖A‖₁ = 3e9
    # needs 55·⌈3e9/θ_55⌉ ≈ 1.67e10 products (θ_55 = 9.87 at u = 2⁻⁵³, Al-Mohy & Higham Table 3.1), over 1e7.
    from workbench.expmv._blocks import MAX_PRODUCTS

    calls = []

    def matvec(x):
        calls.append(1)
        return np.array([[-1.0, 1.0], [2.0, -2.0]]) @ x

    operator = scipy.sparse.linalg.LinearOperator((2, 2), matvec=matvec, dtype=np.float64)
    assert MAX_PRODUCTS == 10**7
    with pytest.raises(
        ValueError,
        match=r"expmv_taylor would need about 1\.67e\+10 products of A \(degree 55 × 3040\d+ steps.* budget of 1e\+07",
    ):
        expmv(operator, np.ones(2), 1e9, method="taylor")
    assert len(calls) <= 10  # only the norm probes ran
    # Within the budget the same operator gives e^{tQ}1 = 1 (oracle: Q1 = 0); 1e-13 absolute (rounding).
    np.testing.assert_allclose(expmv(operator, np.ones(2), 3.0, method="taylor"), np.ones(2), rtol=0, atol=1e-13)
