"""The three factorisations behind the sparse spectrum: SuperLU, and from the ``sparse`` extra QDLDL's LDLᵀ and Intel
MKL's PARDISO.

Oracles: dense ``eigh`` of the same symmetric conjugate, and each factorisation against another.  CI installs the
``sparse`` extra (``.[all]``), so the QDLDL and PARDISO cases run there; on a machine without it (PARDISO: not x86-64)
they skip.
"""

import os

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

from workbench.markov import MarkovOperator, SwissRoll
from workbench.markov import _sparse_spectrum as spectrum_module
from workbench.markov._sparse_spectrum import FACTOR_VARIABLE, PARDISO_MIN_STATES, sparse_factorisation, top_eigenpairs

needs_pardiso = pytest.mark.skipif(not spectrum_module.pardiso_available(), reason="the sparse extra (pypardiso)")
needs_qdldl = pytest.mark.skipif(not spectrum_module.qdldl_available(), reason="the sparse extra (qdldl)")


def _conjugate(op):
    """The symmetric conjugate Π^{1/2} P Π^{-1/2} of a reversible kNN operator, sparse, and √π."""
    root = np.sqrt(np.asarray(op.stationary))
    s = scipy.sparse.diags_array(root) @ op.P @ scipy.sparse.diags_array(1.0 / root)
    return scipy.sparse.csr_array(0.5 * (s + s.T)), root


@pytest.mark.parametrize(
    "factor", ["superlu", pytest.param("qdldl", marks=needs_qdldl), pytest.param("pardiso", marks=needs_pardiso)]
)
def test_each_factorisation_finds_the_dense_top_eigenpairs(factor):
    # A 15-NN Swiss roll of 1,500 points clusters its ten top eigenvalues within 3e-3 of 1, the case shift-invert
    # is for.  Tolerances: eigenvalues 1e-12 (Lanczos stops at 1e-10 relative on (σ − μ)⁻¹ ≥ 10³, i.e. ≤ 1e-13 on μ;
    # the dense oracle is exact to ~1e-15), eigenvector spans 1e-8 (gaps ~1e-4 between the top eigenvalues).
    op = MarkovOperator.from_points(SwissRoll().sample(1500, seed=3), k=15)
    s, root = _conjugate(op)
    values, vectors = top_eigenpairs(s, 10, root, factor=factor)
    dense_values, dense_vectors = scipy.linalg.eigh(s.toarray(), subset_by_index=[1490, 1499])
    np.testing.assert_allclose(np.sort(values), dense_values, rtol=0, atol=1e-12)
    assert np.linalg.svd(vectors.T @ dense_vectors, compute_uv=False).min() > 1 - 1e-8


@needs_pardiso
def test_pardiso_is_chosen_from_its_size_on_and_agrees_with_superlu_there(monkeypatch):
    # At PARDISO_MIN_STATES the spectrum goes through PARDISO; the oracle is SuperLU's factorisation of the same
    # operator.  Tolerance 1e-12 on eigenvalues (both Lanczos runs stop at 1e-10 relative on (σ − μ)⁻¹ ≥ 10³).
    monkeypatch.delenv(FACTOR_VARIABLE, raising=False)
    below = "qdldl" if spectrum_module.qdldl_available() else "superlu"
    assert (
        sparse_factorisation(PARDISO_MIN_STATES) == "pardiso" and sparse_factorisation(PARDISO_MIN_STATES - 1) == below
    )
    op = MarkovOperator.from_points(SwissRoll().sample(PARDISO_MIN_STATES, seed=0), k=15)
    ours = op.spectrum(10)
    s, root = _conjugate(op)
    theirs, _ = top_eigenpairs(s, 10, root, factor="superlu")
    np.testing.assert_allclose(np.asarray(ours.values), np.sort(theirs)[::-1], rtol=0, atol=1e-12)
    assert np.isclose(ours.values[0], 1.0, rtol=0, atol=1e-13) and np.all(np.diff(np.asarray(ours.values)) <= 0)


@needs_pardiso
def test_the_blas_threads_are_given_back_after_a_pardiso_spectrum():
    # Between PARDISO's solves the BLAS libraries run on one thread; afterwards each has its threads again.
    from threadpoolctl import threadpool_info

    op = MarkovOperator.from_points(SwissRoll().sample(1500, seed=1), k=15)
    s, root = _conjugate(op)
    top_eigenpairs(s, 3, root, factor="pardiso")  # loads MKL, so "before" lists it too
    before = {(pool["filepath"], pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas"}
    top_eigenpairs(s, 3, root, factor="pardiso")
    after = {(pool["filepath"], pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas"}
    assert after == before


@needs_pardiso
def test_a_matrix_past_the_shift_is_refused_by_name():
    # σI − S must be definite; a diagonal entry 2 > σ makes PARDISO meet a non-positive pivot.
    s = scipy.sparse.csr_array(scipy.sparse.diags_array([np.r_[2.0, np.zeros(99)]], offsets=[0]))
    s = s + scipy.sparse.diags_array([np.full(99, 0.1), np.full(99, 0.1)], offsets=[1, -1])
    with pytest.raises(ValueError, match=r"σI − S must be positive definite .*PARDISO stopped with error -4"):
        top_eigenpairs(scipy.sparse.csr_array(s), 2, np.ones(100), factor="pardiso")


def test_the_environment_chooses_the_factorisation_and_a_bad_choice_is_refused(monkeypatch):
    monkeypatch.setenv(FACTOR_VARIABLE, "superlu")
    assert sparse_factorisation(10**6) == "superlu"
    monkeypatch.setenv(FACTOR_VARIABLE, "umfpack")
    with pytest.raises(
        ValueError, match=r"^WORKBENCH_SPARSE_FACTOR must be one of superlu, qdldl, pardiso, got 'umfpack'$"
    ):
        sparse_factorisation(10)
    monkeypatch.setenv(FACTOR_VARIABLE, "pardiso")
    monkeypatch.setattr(spectrum_module, "pardiso_available", lambda: False)
    with pytest.raises(ValueError, match=r"^WORKBENCH_SPARSE_FACTOR=pardiso needs pypardiso \(pip install"):
        sparse_factorisation(10)
    monkeypatch.setenv(FACTOR_VARIABLE, "qdldl")
    monkeypatch.setattr(spectrum_module, "qdldl_available", lambda: False)
    with pytest.raises(ValueError, match=r"^WORKBENCH_SPARSE_FACTOR=qdldl needs qdldl \(pip install"):
        sparse_factorisation(10)
    monkeypatch.delenv(FACTOR_VARIABLE)
    assert sparse_factorisation(10**6) == "superlu"  # without the sparse extra every size takes SuperLU
    monkeypatch.setattr(spectrum_module, "qdldl_available", lambda: True)
    assert sparse_factorisation(10**6) == "qdldl"  # without pypardiso (not x86-64) every size takes QDLDL
    with pytest.raises(ValueError, match=r"^n must be an integer >= 1, got 0$"):
        sparse_factorisation(0)


@needs_qdldl
def test_qdldl_refuses_a_singular_shifted_matrix_by_name():
    # s with the eigenvalue σ itself: σI − S has a zero pivot, which QDLDL reports; the spectrum names the cause.
    diagonal = np.r_[spectrum_module.SHIFT, np.full(99, 0.5)]
    s = scipy.sparse.csr_array(scipy.sparse.diags_array(diagonal))
    with pytest.raises(ValueError, match=r"^the shifted matrix σI − S must be positive definite .*QDLDL stopped"):
        top_eigenpairs(s, 2, np.ones(100), factor="qdldl")


@needs_qdldl
def test_qdldl_that_cannot_be_imported_falls_back_to_superlu_with_a_warning(monkeypatch):
    # An import that fails (a None entry in sys.modules makes ``import qdldl`` raise ImportError, as a broken install
    # would).  Oracle: SuperLU's eigenvalues of the same matrix, to the last bit (the same factorisation runs).
    import sys

    monkeypatch.setitem(sys.modules, "qdldl", None)
    _assert_falls_back_to_superlu("qdldl", seed=4)


@needs_pardiso
def test_pardiso_gives_its_factor_back_after_each_spectrum():
    # PARDISO's factors live in MKL's memory, which pypardiso does not free when its solver is collected; each spectrum
    # frees them on the way out.  Oracle: the resident set over five more spectra of a 3·10⁴-state operator.  Kept,
    # the factors would add ~28 MiB a call (142 MiB over five, measured); freed, the resident set moves by the
    # allocator's noise (22 MiB measured).  70 MiB lies between the two with room on either side.
    op = MarkovOperator.from_points(SwissRoll().sample(30_000, seed=0), k=15)
    s, root = _conjugate(op)

    def resident_mib():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    top_eigenpairs(s, 3, root, factor="pardiso")
    first = resident_mib()
    for _ in range(5):
        top_eigenpairs(s, 3, root, factor="pardiso")
    assert resident_mib() - first < 70.0


@needs_pardiso
def test_pypardiso_without_a_loadable_mkl_falls_back_to_superlu_with_a_warning(monkeypatch):
    # A real broken install: MKL's runtime named where no library is, and pypardiso imported afresh (it loads MKL at
    # import).  Oracle: SuperLU's eigenvalues of the same matrix, to the last bit (the same factorisation runs).
    import sys

    for name in [name for name in sys.modules if name == "pypardiso" or name.startswith("pypardiso.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setenv("PYPARDISO_MKL_RT", "/nonexistent/libmkl_rt.so.2")
    _assert_falls_back_to_superlu("pardiso", seed=2)


def _assert_falls_back_to_superlu(factor, seed):
    """``factor`` that cannot load warns and gives SuperLU's eigenvalues to the last bit (the same factorisation runs)."""
    op = MarkovOperator.from_points(SwissRoll().sample(1500, seed=seed), k=15)
    s, root = _conjugate(op)
    with pytest.warns(
        RuntimeWarning, match=rf"^{factor} is unavailable \(.*\); the sparse spectrum factorises with SuperLU"
    ):
        values, _ = top_eigenpairs(s, 5, root, factor=factor)
    expected, _ = top_eigenpairs(s, 5, root, factor="superlu")
    np.testing.assert_array_equal(np.sort(values), np.sort(expected))
