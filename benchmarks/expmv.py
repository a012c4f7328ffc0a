"""exp(tA)·B at scale: the workbench's ``expmv`` against ``scipy.sparse.linalg.expm_multiply``.

Both run in this process on the same operator and block (4 columns); each is timed once at the
large sizes (best of 3 below n = 10⁵), after one untimed warm-up call of ours at a small size.  Every
row reports the relative difference of the two answers, so a fast wrong answer cannot pass, and the
number of block products with A ours used (scipy does not report its count).  Cases, from the issue:

* heat kernels e^{−tL} of the path and 2-D grid graph Laplacians (symmetric, large ‖tL‖): Chebyshev;
* random-walk generators Q = P − I of kNN graphs of sampled points: uniformization;
* banded Markov generators stored by diagonals (16 off-diagonals): uniformization on the diagonals;
* a general non-normal sparse matrix: Taylor (Al-Mohy–Higham), the same algorithm as scipy's;
* every class again at t ∈ {0.1, 1} (``SMALL_T``), where estimating costs more than it saves, best of 3.

Run: ``workbench bench expmv``.  Sizes: ``SIZES`` (module default) or ``run(sizes=...)``.
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np
import scipy
import scipy.sparse
import scipy.sparse.linalg

from workbench.expmv import expmv

#: The ``run`` keywords ``workbench bench`` may pass: this benchmark takes no command-line options.
OPTIONS = ()

SIZES = (10_000, 100_000, 1_000_000)
COLUMNS = 4
#: The small times of every operator class (the large-t rows above are the issue-21 targets).
SMALL_T = (0.1, 1.0)


def _seconds(fn, repeat: int):
    best, value = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def path_laplacian(n: int) -> scipy.sparse.csr_array:
    """L = D − A of the path graph on n vertices."""
    off = np.ones(n - 1)
    degree = np.concatenate([[1.0], 2 * np.ones(n - 2), [1.0]])
    return scipy.sparse.diags_array([-off, degree, -off], offsets=[-1, 0, 1], format="csr")


def grid_laplacian(side: int) -> scipy.sparse.csr_array:
    """The 2-D grid Laplacian L ⊕ L on side² vertices."""
    path = path_laplacian(side)
    eye = scipy.sparse.eye_array(side, format="csr")
    return (scipy.sparse.kron(path, eye) + scipy.sparse.kron(eye, path)).tocsr()


def knn_generator(n: int, seed: int = 0) -> scipy.sparse.csr_array:
    """Q = P − I of the Gauss-kernel random walk on a 10-NN graph of a sampled Swiss roll."""
    from workbench.markov import MarkovOperator, SwissRoll

    points = SwissRoll().sample(n, seed=seed)
    op = MarkovOperator.from_points(points, k=10)
    return (op.P - scipy.sparse.eye_array(n, format="csr")).tocsr()


def nonnormal(n: int, seed: int = 0) -> scipy.sparse.csr_array:
    """A sparse non-normal matrix: a random sparse part plus a strong upper bidiagonal shear."""
    rng = np.random.default_rng(seed)
    a = scipy.sparse.random_array((n, n), density=5 / n, rng=rng, format="csr")
    a = a - scipy.sparse.diags_array(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0)
    return (a + scipy.sparse.diags_array(2 * np.ones(n - 1), offsets=1)).tocsr()


def _cases(sizes):
    from workbench.expmv import banded_markov_generator

    for n in sizes:
        yield "path heat e^{−tL}", n, 200.0, lambda n=n: -path_laplacian(n), {}
    for n in sizes:
        side = round(np.sqrt(n))
        yield "grid heat e^{−tL}", side * side, 50.0, lambda side=side: -grid_laplacian(side), {}
    for n in sizes[:2]:
        yield "kNN random walk e^{tQ}", n, 10.0, lambda n=n: knn_generator(n), {}
    for n in sizes:
        yield "banded Markov e^{tQ}", n, 10.0, lambda n=n: banded_markov_generator(n, 8, seed=0), {"banded": True}
    for n in sizes[:2]:
        yield "non-normal, general", n, 1.0, lambda n=n: nonnormal(n), {}
    # small t (issue 38): where a spectral estimate or a norm estimate costs more than the products it saves; cheap,
    # so best of 3 at every size
    for t in SMALL_T:
        for n in sizes[:2]:
            yield "path heat e^{−tL}", n, t, lambda n=n: -path_laplacian(n), {"repeat": 3}
        for n in sizes if t == 1.0 else sizes[:2]:  # the 10⁶ grid at t = 1, the case
            side = round(np.sqrt(n))
            yield "grid heat e^{−tL}", side * side, t, lambda side=side: -grid_laplacian(side), {"repeat": 3}
        for n in sizes[:2]:
            yield "kNN random walk e^{tQ}", n, t, lambda n=n: knn_generator(n), {"repeat": 3}
            yield (
                "banded Markov e^{tQ}", n, t, lambda n=n: banded_markov_generator(n, 8, seed=0),
                {"banded": True, "repeat": 3},
            )  # fmt: skip
            if t != 1.0:
                yield "non-normal, general", n, t, lambda n=n: nonnormal(n), {"repeat": 3}


def run(sizes=None) -> dict:
    sizes = tuple(sizes or [int(s) for s in os.environ.get("WORKBENCH_EXPMV_SIZES", "").split(",") if s] or SIZES)
    rng = np.random.default_rng(0)
    expmv(-path_laplacian(100), np.ones((100, COLUMNS)), 1.0)  # warm-up: imports and first-call costs
    rows = []
    for name, n, t, build, flags in _cases(sizes):
        a = build()
        b = rng.standard_normal((n, COLUMNS))
        repeat = flags.get("repeat", 3 if n < 100_000 else 1)
        ours_time, (ours, info) = _seconds(lambda a=a, b=b, t=t: expmv(a, b, t, return_info=True), repeat)
        scipy_matrix = a.to_scipy() if flags.get("banded") else a
        theirs_time, theirs = _seconds(
            lambda m=scipy_matrix, b=b, t=t: scipy.sparse.linalg.expm_multiply(t * m, b), repeat
        )
        difference = np.linalg.norm(ours - theirs) / np.linalg.norm(theirs)
        rows.append([
            name, f"{n:,}", f"{t:g}", info["method"], f"{info['matvecs']}", f"{ours_time:.2f}",
            f"{theirs_time:.2f}", f"{theirs_time / ours_time:.1f}×", f"{difference:.1e}",
        ])  # fmt: skip
    return {
        "title": f"exp(tA)·B, {COLUMNS} columns: workbench expmv vs scipy expm_multiply",
        "columns": ["operator", "n", "t", "method", "matvecs", "expmv s", "scipy s", "scipy/expmv", "rel diff"],
        "rows": rows,
        "notes": f"{platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, scipy {scipy.__version__}; "
        "one process, best of 3 below n = 10⁵ else one run; GPU: see RESULTS.md",
    }
