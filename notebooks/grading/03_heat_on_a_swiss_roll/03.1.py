"""Tests of exercise 03.1: the stationary laws of the α = 0 and α = 1 walks, by hand from the kernel."""

import numpy as np
import scipy.sparse
from otter.test_files import test_case

OK_FORMAT = False
name = "03.1"
points = 5


def _walks(K):
    """(π, P) for α = 0 and α = 1 from a symmetric kernel K, built here from the definitions."""
    K = scipy.sparse.csr_array(K)
    q = np.asarray(K.sum(axis=1)).ravel()
    inverse = scipy.sparse.diags_array(1 / q)
    K1 = (inverse @ K @ inverse).tocsr()  # diag(q)^-1 K diag(q)^-1
    walks = {}
    for alpha, kernel in ((0.0, K), (1.0, K1)):
        degree = np.asarray(kernel.sum(axis=1)).ravel()
        walks[alpha] = (degree / degree.sum(), (scipy.sparse.diags_array(1 / degree) @ kernel).tocsr())
    return walks


@test_case(points=1)
def test_keys(answer_03_1):
    keys = {"K", "pi", "stationarity", "balance"}
    assert isinstance(answer_03_1, dict), "answer_03_1 should be a dict"
    missing = keys - set(answer_03_1)
    assert not missing, f"answer_03_1 lacks the keys {sorted(missing)}"
    for key in ("pi", "stationarity", "balance"):
        got = {float(a) for a in answer_03_1[key]}
        assert got == {0.0, 1.0}, f"answer_03_1[{key!r}] should have the keys α = 0.0 and 1.0, got {sorted(got)}"
    K = scipy.sparse.csr_array(answer_03_1["K"])
    assert abs(K - K.T).max() == 0, "K should be the symmetric sparse kernel gauss_kernel_sparse(X, beta, k=k)"


@test_case(points=1)
def test_pi_alpha0(answer_03_1):
    expected, _ = _walks(answer_03_1["K"])[0.0]
    got = np.asarray(answer_03_1["pi"][0.0], float)
    # oracle: π = K1/1ᵀK1 from the definition; entries ~1e-4, rounding ~1e-19
    assert got.shape == expected.shape and np.abs(got - expected).max() < 1e-12 * expected.max(), (
        "for α = 0, π should be the degree K1 divided by its sum 1ᵀK1"
    )


@test_case(points=1)
def test_pi_alpha1(answer_03_1):
    expected, _ = _walks(answer_03_1["K"])[1.0]
    got = np.asarray(answer_03_1["pi"][1.0], float)
    assert got.shape == expected.shape and np.abs(got - expected).max() < 1e-12 * expected.max(), (
        "for α = 1, π should be K⁽¹⁾1 normalised to sum 1, with K⁽¹⁾ = diag(q)⁻¹ K diag(q)⁻¹ (both sides), q = K1"
    )


@test_case(points=1)
def test_pi_is_stationary(answer_03_1):
    for alpha, (_, P) in _walks(answer_03_1["K"]).items():
        pi = np.asarray(answer_03_1["pi"][alpha], float)
        # oracle: stationarity πP = π of the student's π under the walk built here; rounding ~1e-19 per entry
        residual = np.abs(P.T @ pi - pi).sum()
        assert residual < 1e-12, f"for α = {alpha:g} your π is not stationary: ‖πP − π‖₁ = {residual:.1e}"


@test_case(points=1)
def test_reported_residuals(answer_03_1):
    for alpha in (0.0, 1.0):
        stationarity, balance = answer_03_1["stationarity"][alpha], answer_03_1["balance"][alpha]
        # both vanish exactly in exact arithmetic (detailed balance of a symmetric kernel); in floating point they are
        # sums of ~1e-19 rounding errors, so anything above 1e-13 means a wrong formula, e.g. P π instead of πP
        assert 0 <= stationarity < 1e-13, (
            f"for α = {alpha:g}, ‖πP − π‖₁ = {stationarity:.1e} should be at rounding level: πP is the row vector "
            "π times P, i.e. P.T @ π"
        )
        assert 0 <= balance < 1e-13, (
            f"for α = {alpha:g}, max|π_i P_ij − π_j P_ji| = {balance:.1e} should be at rounding level: "
            "compare diag(π) P with its transpose"
        )
