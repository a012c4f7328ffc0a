r"""The top of the spectrum of a large sparse reversible Markov operator, by shift-invert Lanczos.

The eigenvalues of a diffusion operator cluster at 1 (a kNN graph of :math:`10^5` points has ten of them
within :math:`3\cdot10^{-4}` of 1), where plain Lanczos needs thousands of steps; shift-invert at
:math:`\sigma = 1 + 10^{-6}` spreads them apart, and about 35 solves with :math:`S - \sigma I` find ten
pairs (Ericsson & Ruhe, *Math. Comp.* 35 (1980)).  The solves are the whole cost, so how
:math:`S - \sigma I` is factorised decides the speed:

* :math:`S = \Pi^{1/2}\mathsf P\Pi^{-1/2}` has its spectrum in :math:`[-1, 1]`, so :math:`S - \sigma I` is
  negative definite with every eigenvalue at most :math:`1 - \sigma = -10^{-6}`.  Gaussian elimination
  without pivoting is backward stable on a definite matrix (Higham, *Accuracy and Stability of
  Numerical Algorithms*, 2nd ed., §10.1), so the factorisation may keep the symmetric structure.
* scipy's ``eigsh(sigma=…)`` factorises with SuperLU's default column ordering (COLAMD) and partial
  pivoting, which ignore the symmetry: on the Swiss-roll kNN graph of :math:`10^5` points the factors
  hold :math:`3.3\cdot10^7` entries and take 4 s.  A symmetric minimum-degree ordering of
  :math:`S + S^\top` with the diagonal as pivots (SuperLU's symmetric mode) gives :math:`1.5\cdot10^7`
  entries in 1.2 s, and each solve costs half as much.
* Where the ``sparse`` extra is installed, below :data:`PARDISO_MIN_STATES` states, the factorisation is QDLDL's
  :math:`LDL^\top` of the upper triangle of :math:`\sigma I - S` after an approximate-minimum-degree ordering (through
  ``qdldl``): SuperLU's symmetric mode still keeps both triangles and pivots column by column, so it factorises in
  twice the time and solves a third slower (at :math:`10^4` Swiss-roll points 25–28 ms and 0.8 ms a solve, against
  50 ms and 1.05 ms; ``benchmarks/RESULTS.md``).  Without pivoting :math:`LDL^\top` is stable on a definite matrix
  for the same reason as above.
* From :data:`PARDISO_MIN_STATES` states on, where the ``sparse`` extra is installed (x86-64), the
  factorisation is Intel MKL's PARDISO (through ``pypardiso``): a supernodal Cholesky of the definite
  :math:`\sigma I - S` ordered by nested dissection (METIS), which stores the lower factor only and
  factorises and solves on every core.  At :math:`10^5` Swiss-roll points on two cores it factorises in
  0.6 s and solves in 9 ms against SuperLU's 1.1 s and 26 ms (``benchmarks/RESULTS.md``).  Below that
  size loading MKL costs more than it saves.  ``WORKBENCH_SPARSE_FACTOR=superlu`` (or ``qdldl``, ``pardiso``)
  chooses for one process.

Package-internal but for :func:`sparse_factorisation`: :meth:`MarkovOperator.spectrum` calls
:func:`top_eigenpairs`.

References
----------
T. Ericsson, A. Ruhe, The spectral transformation Lanczos method for the numerical solution of large
sparse generalized symmetric eigenvalue problems, Math. Comp. 35 (1980) 1251–1268.
J. W. Demmel, J. R. Gilbert, X. S. Li, SuperLU Users' Guide (1999, updated with the library), the options
``SymmetricMode``, ``DiagPivotThresh`` and the MMD ordering of AᵀA + A.
O. Schenk, K. Gärtner, Solving unsymmetric sparse systems of linear equations with PARDISO, Future
Generation Computer Systems 20 (2004) 475–487; Intel oneMKL Developer Reference, ``pardiso`` (``mtype`` 2,
``iparm`` 1 and 2).
P. R. Amestoy, T. A. Davis, I. S. Duff, An approximate minimum degree ordering algorithm, SIAM J. Matrix Anal. Appl.
17 (1996) 886–905; B. Stellato, G. Banjac, P. Goulart, A. Bemporad, S. Boyd, OSQP: an operator splitting solver for
quadratic programs, Math. Program. Comput. 12 (2020) 637–672 (QDLDL, its LDLᵀ factorisation).
book/reference.md §A.7.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from workbench.validation import check_integer

__all__ = ["sparse_factorisation"]

#: The shift: just above the top eigenvalue 1, so the top of the spectrum is mapped far apart.
SHIFT = 1.0 + 1e-6

#: Lanczos' tolerance (relative to each Ritz value of the inverse): eigenvalues agree with dense ``eigh`` to
#: ~1e-15 and eigenvectors to ~1e-10, with ~20 % fewer solves than machine precision would take.
TOLERANCE = 1e-10


#: From this many states on, PARDISO (when installed) factorises.  Whole ``from_points(…, k=15).spectrum(10)`` runs
#: on the Swiss roll, 2 cores, best of three (SuperLU / QDLDL / PARDISO): 10⁴ 0.134 / 0.118 / 0.143 s (loading MKL
#: and the nested-dissection analysis cost more than they save); 2·10⁴ 0.32 / 0.26 / 0.27 s; 3·10⁴ 0.50 / 0.39 /
#: 0.41 s; 5·10⁴ 1.05 / 0.84 / 0.68 s; 10⁵ 2.6 / 2.5 / 1.5 s.
PARDISO_MIN_STATES = 30_000

#: The environment variable that picks the factorisation for one process: ``superlu``, ``qdldl`` or ``pardiso``.
FACTOR_VARIABLE = "WORKBENCH_SPARSE_FACTOR"

FACTORS = ("superlu", "qdldl", "pardiso")


def pardiso_available() -> bool:
    """Whether ``pypardiso`` can be imported (the ``sparse`` extra; MKL is loaded only when it factorises)."""
    import importlib.util

    return importlib.util.find_spec("pypardiso") is not None


def qdldl_available() -> bool:
    """Whether ``qdldl`` can be imported (the ``sparse`` extra, on every platform)."""
    import importlib.util

    return importlib.util.find_spec("qdldl") is not None


#: What each factorisation needs, for :func:`sparse_factorisation`'s refusal.
_NEEDS = {
    "qdldl": "qdldl (pip install 'attention-workbench[sparse]')",
    "pardiso": "pypardiso (pip install 'attention-workbench[sparse]', x86-64 only)",
}


def sparse_factorisation(n: int) -> str:
    """Which factorisation :meth:`MarkovOperator.spectrum` uses for the shifted matrix of a sparse ``n``-state operator.

    Where the ``sparse`` extra is installed: ``'pardiso'`` from :data:`PARDISO_MIN_STATES` states on (x86-64, where
    ``pypardiso`` installs), ``'qdldl'`` below (or on every size without ``pypardiso``).  Without the extra,
    ``'superlu'``.  The environment variable ``WORKBENCH_SPARSE_FACTOR`` (``superlu``, ``qdldl`` or ``pardiso``)
    overrides the choice for one process.  All three find the same eigenpairs (to ~1e-15 on the values).

    Examples
    --------
    >>> sparse_factorisation(1000) in ("superlu", "qdldl")
    True
    """
    import os

    n = check_integer("n", n, 1)

    available = {"superlu": True, "qdldl": qdldl_available(), "pardiso": pardiso_available()}
    choice = os.environ.get(FACTOR_VARIABLE, "").strip().lower()
    if choice and choice not in FACTORS:
        raise ValueError(f"{FACTOR_VARIABLE} must be one of {', '.join(FACTORS)}, got {choice!r}")
    if choice and not available[choice]:
        raise ValueError(f"{FACTOR_VARIABLE}={choice} needs {_NEEDS[choice]}")
    if choice:
        return choice
    if n >= PARDISO_MIN_STATES and available["pardiso"]:
        return "pardiso"
    return "qdldl" if available["qdldl"] else "superlu"


def _import_pypardiso():
    """``pypardiso``, told where the ``mkl`` package put MKL's runtime library.

    Left to itself, ``pypardiso`` looks for ``libmkl_rt`` with ``ctypes.util.find_library`` (a subprocess) and
    then a recursive search of the interpreter's ``lib`` folder, twice (one solver at import, one per use):
    0.75 s in an environment with torch installed, more than PARDISO saves below a few ·10⁵ states.  The
    ``mkl`` wheel lists the library among its files, so it is found in under a millisecond.
    """
    import importlib.metadata
    import os

    if "PYPARDISO_MKL_RT" not in os.environ:
        try:
            files = importlib.metadata.files("mkl") or []
        except importlib.metadata.PackageNotFoundError:
            files = []
        found = [str(f.locate()) for f in files if f.name.startswith("libmkl_rt.so")]
        if found:
            os.environ["PYPARDISO_MKL_RT"] = os.path.realpath(found[0])
    import pypardiso

    return pypardiso


def _import_qdldl():
    import qdldl

    return qdldl


@contextlib.contextmanager
def shifted_inverse(s, factor: str):
    """A function ``b ↦ (S − σI)⁻¹ b`` from one factorisation of the definite ``σI − S`` by ``factor``.

    A context: PARDISO keeps its factors in MKL's own memory, which its Python object does not release when it is
    collected, so they are freed on leaving (otherwise each spectrum of 10⁵ states would keep ~100 MB).
    """
    import scipy.sparse as sp

    n = s.shape[0]
    loaded = None  # PARDISO's solver (it loads MKL's runtime as it is made) or the qdldl module
    try:
        if factor == "pardiso":
            loaded = _import_pypardiso().PyPardisoSolver(mtype=2)
        elif factor == "qdldl":
            loaded = _import_qdldl()
    except (ImportError, OSError) as exc:  # installed but not loadable (pypardiso: MKL's runtime missing or broken)
        warnings.warn(
            f"{factor} is unavailable ({exc}); the sparse spectrum factorises with SuperLU instead (the same "
            f"eigenpairs, slower). Reinstall the sparse extra, or set {FACTOR_VARIABLE}=superlu to choose SuperLU",
            RuntimeWarning,
            stacklevel=5,  # the caller of MarkovOperator.spectrum
        )
        factor = "superlu"
    if factor == "pardiso":
        solver = loaded
        # The upper triangle of the positive definite σI − S in CSR (mtype 2: real symmetric positive definite).
        definite = sp.triu(SHIFT * sp.identity(n, format="csr", dtype=s.dtype) - s, format="csr")
        solver.set_iparm(1, 1)  # our own settings below; the rest zero: no scaling, matching or refinement
        solver.set_iparm(2, 3)  # nested dissection (METIS), computed in parallel
        from pypardiso.pardiso_wrapper import PyPardisoError

        try:
            try:
                solver.factorize(definite)
            except PyPardisoError as exc:  # -4: a zero pivot: σI − S not definite (s's spectrum reaches past σ)
                raise ValueError(
                    f"the shifted matrix σI − S must be positive definite (the spectrum of s in [-1, 1]); PARDISO "
                    f"stopped with error {exc.value}"
                ) from None
            yield lambda b: -solver.solve(definite, b)
        finally:
            solver.free_memory(everything=True)
    elif factor == "qdldl":
        # The upper triangle of σI − S in CSC; qdldl orders it by AMD and factorises P(σI − S)Pᵀ = LDLᵀ.
        definite = sp.triu(SHIFT * sp.identity(n, format="csc", dtype=s.dtype) - s, format="csc")
        try:
            ldl = loaded.Solver(definite, upper=True)
        except RuntimeError as exc:  # a zero pivot: σI − S singular (s has the eigenvalue σ)
            raise ValueError(
                f"the shifted matrix σI − S must be positive definite (the spectrum of s in [-1, 1]); QDLDL "
                f"stopped: {exc}"
            ) from None
        yield lambda b: -ldl.solve(b)
    else:
        from scipy.sparse.linalg import splu

        shifted = sp.csc_matrix(s - SHIFT * sp.identity(n, format="csc", dtype=s.dtype))
        # Symmetric mode: a minimum-degree ordering of AᵀA + A applied to rows and columns alike, the diagonal
        # taken as pivot (threshold 0: never a row exchange, which would break the symmetric fill).
        yield splu(shifted, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True}).solve


def top_eigenpairs(s, count: int, v0: np.ndarray, factor: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""The ``count`` largest eigenpairs of a sparse symmetric ``s`` with spectrum in :math:`[-1, 1]`.

    ``v0`` starts Lanczos (the known top eigenvector :math:`\sqrt\pi` is a good start).  ``factor`` is
    ``'superlu'``, ``'qdldl'``, ``'pardiso'`` or ``None`` (:func:`sparse_factorisation`).  Returns ``(values,
    vectors)`` in no particular order, as ``eigsh`` does.
    """
    from scipy.sparse.linalg import LinearOperator, eigsh

    n = s.shape[0]
    from threadpoolctl import threadpool_limits

    factor = sparse_factorisation(n) if factor is None else factor
    # With PARDISO on every core, the BLAS libraries' own threads in ARPACK's orthogonalisation (products with ~20
    # columns) fight PARDISO's OpenMP threads for the cores: at 10⁵ states eigsh took 0.9–1.15 s instead of 0.5 s.
    # One BLAS thread between the solves (PARDISO's solves keep their threads: 9 ms each either way).
    blas = threadpool_limits(limits=1, user_api="blas") if factor == "pardiso" else contextlib.nullcontext()
    with shifted_inverse(s, factor) as solve, blas:
        inverse = LinearOperator((n, n), matvec=solve, dtype=s.dtype)
        return eigsh(s, k=count, sigma=SHIFT, which="LM", v0=v0, tol=TOLERANCE, OPinv=inverse)
