import numpy as np
import pytest
from conftest import HAS_TORCH

from workbench.validation import (
    as_array,
    check_choice,
    check_finite,
    check_in_range,
    check_markov_generator,
    check_matching,
    check_row_stochastic,
    check_square,
    check_symmetric,
)


def test_as_array_converts_integers_and_keeps_floats():
    assert as_array("x", [[1, 2]]).dtype == np.float64
    f32 = np.ones(2, dtype=np.float32)
    assert as_array("x", f32).dtype == np.float32


def test_as_array_rejects_non_numeric_and_complex():
    with pytest.raises(TypeError, match=r"x must be a numeric array, got dtype <U1"):
        as_array("x", ["a"])
    with pytest.raises(TypeError, match=r"x must be real-valued, got dtype complex128"):
        as_array("x", np.ones(2, dtype=complex))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_entries_are_named(bad):
    with pytest.raises(ValueError, match=r"K must be finite, got 1 non-finite entry \(first at index \(0, 1\)\)"):
        check_finite("K", np.array([[1.0, bad], [0.0, 1.0]]))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_non_finite_torch_entries_are_named():
    import torch

    with pytest.raises(ValueError, match=r"f must be finite, got 2 non-finite entries \(first at index \(1,\)\)"):
        as_array("f", torch.tensor([0.0, float("nan"), float("inf")]))


def test_square():
    with pytest.raises(ValueError, match=r"A must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(3,\)"):
        check_square("A", np.ones(3))
    check_square("A", np.ones((2, 4, 4)))


def test_matching():
    with pytest.raises(ValueError, match=r"u and v must have matching sizes, got 3 and 2"):
        check_matching("u", 3, "v", 2)


def test_symmetric():
    check_symmetric("K", np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match=r"K must be symmetric, got max \|K - K\^T\| = 1"):
        check_symmetric("K", np.array([[1.0, 2.0], [1.0, 1.0]]))


def test_row_stochastic():
    check_row_stochastic("P", np.array([[0.5, 0.5], [1.0, 0.0]]))
    with pytest.raises(ValueError, match=r"P must be entrywise nonnegative, got minimum -0.5 at index \(0, 0\)"):
        check_row_stochastic("P", np.array([[-0.5, 1.5], [1.0, 0.0]]))
    with pytest.raises(
        ValueError, match=r"P must be row-stochastic \(rows summing to 1 within 1e-10\), got row 0 summing to 1.2"
    ):
        check_row_stochastic("P", np.array([[0.6, 0.6], [1.0, 0.0]]))


def test_generator_with_negative_off_diagonal_is_rejected():
    with pytest.raises(
        ValueError, match=r"Q must be a Markov generator with nonnegative off-diagonal entries, got Q\[0, 2\] = -0.25"
    ):
        check_markov_generator("Q", np.array([[0.25, 0.0, -0.25], [1.0, -1.0, 0.0], [0.0, 0.0, 0.0]]))


def test_generator_rows_must_sum_to_zero():
    check_markov_generator("Q", np.array([[-1.0, 1.0], [2.0, -2.0]]))
    with pytest.raises(
        ValueError, match=r"Q must be a Markov generator with rows summing to 0, got row 1 summing to 1"
    ):
        check_markov_generator("Q", np.array([[-1.0, 1.0], [2.0, -1.0]]))


def test_in_range_messages():
    assert check_in_range("beta", 2, 0.0) == 2.0
    with pytest.raises(ValueError, match=r"beta must be in \(0, inf\), got 0.0"):
        check_in_range("beta", 0.0, 0.0, low_inclusive=False)
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got nan"):
        check_in_range("alpha", float("nan"), 0.0, 1.0)
    with pytest.raises(TypeError, match=r"beta must be a real number, got str"):
        check_in_range("beta", "1", 0.0)


def test_choice():
    assert check_choice("scale", "small", ("small", "large")) == "small"
    with pytest.raises(ValueError, match=r"scale must be one of 'small', 'large', got 'medium'"):
        check_choice("scale", "medium", ("small", "large"))


# ---- the memory budget -----------------------------------------------------------------------------------


def test_parse_size_reads_decimal_and_binary_units():
    from workbench.memory import parse_size

    assert parse_size("s", "4GiB") == 4 * 2**30
    assert parse_size("s", "512 mb") == 512e6
    assert parse_size("s", "2e9") == 2e9
    assert parse_size("s", "1.5T") == 1.5e12
    assert parse_size("s", 2048) == 2048.0
    for bad in ("lots", "0", "-1GB", "1e999", "4 GiBs", ""):
        with pytest.raises(
            ValueError, match=rf"s must be a positive size in bytes such as 4GiB, 512MB or 2e9, got {bad!r}"
        ):
            parse_size("s", bad)
    with pytest.raises(TypeError, match="s must be a size in bytes"):
        parse_size("s", [1])


def test_memory_limit_and_the_environment_set_the_budget_of_every_estimate(monkeypatch):
    # Oracle: the refusal names the budget's source; a block that fits the budget is computed as before.
    from workbench.markov import gauss_kernel
    from workbench.memory import MAX_MEMORY_VARIABLE, memory_budget, memory_limit

    points = np.random.default_rng(0).standard_normal((400, 2))
    monkeypatch.delenv(MAX_MEMORY_VARIABLE, raising=False)
    assert memory_budget()[1] == "available memory"
    with (
        memory_limit("64KiB"),
        pytest.raises(ValueError, match=r"more than the budget of 6.1e-05 GiB \(set by memory_limit\)"),
    ):
        gauss_kernel(points, 1.0)
    monkeypatch.setenv(MAX_MEMORY_VARIABLE, "64KiB")
    with pytest.raises(ValueError, match=rf"\({MAX_MEMORY_VARIABLE}=64KiB\)"):
        gauss_kernel(points, 1.0)
    with memory_limit("1GiB"):  # the context wins over the environment
        assert gauss_kernel(points, 1.0).shape == (400, 400)
    monkeypatch.setenv(MAX_MEMORY_VARIABLE, "plenty")
    with pytest.raises(ValueError, match=f"{MAX_MEMORY_VARIABLE} must be a positive size"):
        gauss_kernel(points, 1.0)


def test_float32_copies_of_exact_generators_and_stochastic_matrices_pass_with_float32_tolerances():
    # Reproducer: a float32 copy of a valid generator was refused (row sums ~6e-8 > 1e-10).  The default
    # tolerance is 8·n·u of the dtype (u = 2^-24 for float32: the rounding bound of an n-term row sum), and
    # stays 1e-10 for float64.  A row off by 1e-3 is still refused in float32.
    from workbench.validation import check_markov_generator, check_row_stochastic

    rng = np.random.default_rng(7)
    rates = rng.random((40, 40))
    np.fill_diagonal(rates, 0.0)
    Q = rates - np.diag(rates.sum(axis=1))
    P = rates / rates.sum(axis=1, keepdims=True)
    Q32, P32 = Q.astype(np.float32), P.astype(np.float32)
    assert np.abs(Q32.sum(axis=1, dtype=np.float32)).max() > 1e-10  # the rounding the old check refused
    check_markov_generator("Q", Q32)
    check_row_stochastic("P", P32)
    broken = P32.copy()
    broken[3, 0] += 1e-3
    with pytest.raises(
        ValueError, match=r"P must be row-stochastic \(rows summing to 1 within 1.90735e-05\), got row 3"
    ):
        check_row_stochastic("P", broken)
    with pytest.raises(ValueError, match="within 1e-10"):
        check_row_stochastic("P", broken.astype(np.float64))
    if HAS_TORCH:
        import torch

        check_markov_generator("Q", torch.as_tensor(Q32))
        check_row_stochastic("P", torch.as_tensor(P32))


def test_numpy_scalars_and_0d_arrays_are_numbers_wherever_python_numbers_are():
    # Issue 17: "numpy scalar types and 0-d arrays are accepted wherever Python numbers are".  Oracle: the same
    # call with the Python number (the fuzz suite checks every int/float parameter of the library this way).
    from workbench.markov import Circle, gauss_kernel_sparse
    from workbench.validation import as_scalar, check_integer

    assert check_integer("m", np.array(30), np.int64(1), np.array(100)) == 30
    assert as_scalar(np.array(2.5)) == 2.5 and isinstance(as_scalar(np.float32(0.5)), float)
    with pytest.raises(TypeError, match="m must be an integer, got float"):
        check_integer("m", np.array(3.5), 1)
    points = Circle().sample(np.array(12), seed=np.array(3))
    assert np.array_equal(points, Circle().sample(12, seed=3))
    assert (gauss_kernel_sparse(points, 1.0, k=np.array(3)) != gauss_kernel_sparse(points, 1.0, k=3)).nnz == 0


def test_a_row_sum_close_to_one_is_shown_as_its_deviation():
    # A float32 softmax handed over in float64 (a `.double()` model whose attention is computed in float32): its
    # rows miss 1 by ~1e-8, past the float64 tolerance; six digits would print the sum as "1".
    from workbench.validation import check_row_stochastic

    P = np.full((4, 4), 0.25)
    P[2, 3] -= 2.98e-8
    with pytest.raises(ValueError, match=r"got row 2 summing to 1 − 2\.98e-08$"):
        check_row_stochastic("attention", P)
    P[2, 3] += 2 * 2.98e-8
    with pytest.raises(ValueError, match=r"got row 2 summing to 1 \+ 2\.98e-08$"):
        check_row_stochastic("attention", P)
    P[2, 3] = 0.5  # far from 1: the sum itself
    with pytest.raises(ValueError, match=r"got row 2 summing to 1\.25$"):
        check_row_stochastic("attention", P)
