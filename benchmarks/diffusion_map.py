r"""Sparse kNN diffusion maps on the Swiss roll: the workbench against scipy by hand, datafold and scikit-learn.

Each pipeline goes from the same points to the 10 leading eigenpairs of a Markov operator on the same
sparse graph, timed whole (neighbour search, kernel, normalisation, eigensolve; imports and loading the
points excluded), each run in a fresh interpreter with one time limit for all, best of two runs with the
pipelines taking turns (this machine is shared: a drifting load then weighs on all of them alike).  Each
run also records the peak memory it adds (the resident set's high-water mark after the pipeline minus
the one before it).  Settings shared by every pipeline:

* points: ``SwissRoll().sample(n, seed=0)`` (uniform in area, the sheet of ``make_swiss_roll``);
* graph: the union of the k = 15 nearest-neighbour relations (j among the k nearest of i, or i among
  those of j), found with a k-d tree;
* kernel: :math:`K_{ij} = e^{-\beta\lVert x_i - x_j\rVert^2}` on that graph, with
  :math:`1/\beta` the median squared distance to the 15th neighbour (so :math:`K \approx e^{-1}` at the
  kNN radius);
* normalisation: α = 0, :math:`\mathsf P = \operatorname{diag}(K\mathbf 1)^{-1}K`: the only
  Coifman–Lafon α that scikit-learn's normalised-Laplacian embedding has;
* 10 eigenpairs, by shift-invert Lanczos in all four (scipy's ``eigsh`` on the symmetric conjugate:
  shift :math:`1 + 10^{-6}` in the workbench and by hand, 1.1 in datafold, :math:`-10^{-5}` on the
  normalised Laplacian in scikit-learn).  They differ in how they factorise the shifted matrix: the
  workbench with a symmetric fill-reducing ordering and the diagonal as pivots (the shifted matrix is
  definite) — where the ``sparse`` extra is installed QDLDL's LDLᵀ (approximate minimum degree, one
  triangle) below 3·10⁴ states and MKL's PARDISO (nested dissection, a Cholesky factor, on every core) from
  there on, SuperLU's symmetric mode without it — the others with SuperLU's defaults inside ``eigsh``
  (COLAMD and partial pivoting).

The pipelines, and what "agreement" means for each:

``workbench``
    ``MarkovOperator.from_points(points, beta, alpha=0, k=15).spectrum(10)``.  Check: the continuum
    limit; the Swiss roll is isometric to a flat rectangle, so :math:`(1-\mu_k)/(1-\mu_1)` should
    approach the Neumann ratios :math:`\lambda_k/\lambda_1` (``SwissRoll.spectrum``).
``scipy by hand``
    What a user writes with scipy alone: ``cKDTree`` for the neighbours, the union graph and kernel as
    above, :math:`D^{-1/2}KD^{-1/2}`, then ``eigsh(sigma=1 + 1e-6, v0=√d, tol=1e-10)`` — the call the
    workbench itself made before it factorised on its own.  Same operator: agreement as for datafold.
``datafold``
    ``DiffusionMaps(GaussianKernel(epsilon, distance=...), n_eigenpairs=10, alpha=0)``.  datafold's
    Gauss kernel is :math:`e^{-D/(2\varepsilon)}` with :math:`D` the squared distance (datafold 2.0.2,
    ``pcfold/kernels.py``), so :math:`\varepsilon = 1/(2\beta)`.  datafold has no symmetric kNN graph
    (its kNN backend is one-sided, its sparse symmetric ones are radius graphs), so it is handed a
    :class:`DistanceAlgorithm` that builds the union kNN graph above; kernel, normalisation and
    eigensolver are datafold's.  Same operator, so agreement is :math:`\max_k|\mu_k - \mu_k^{df}|`
    over the 10 eigenvalues, and the sine of the largest principal angle between the two
    eigenvector spans (in the :math:`\pi`-weighted inner product).
``scikit-learn``
    ``kneighbors_graph`` (union-symmetrised), the rbf values :math:`e^{-\gamma d^2}` with
    :math:`\gamma = \beta`, then ``SpectralEmbedding(n_components=9, affinity="precomputed")``
    (it drops the constant vector, so it solves for the same 10 eigenpairs).  scikit-learn's graph
    Laplacian ignores the diagonal of the affinity, so it diagonalises the operator of the kernel
    with :math:`K_{ii} = 0` instead of 1 (same graph, same cost), and it returns eigenvectors only.
    Agreement is against the workbench's eigenpairs of that self-loop-free kernel (computed outside
    the timing): :math:`\max_k|\mu_k - \tilde\mu_k|` with :math:`\tilde\mu_k = \psi_k^\top K\psi_k /
    \psi_k^\top D\psi_k` the Rayleigh quotients of scikit-learn's vectors, and the largest principal
    angle between the spans of :math:`\psi_1, \dots, \psi_9`.

datafold pins ``numpy<1.27`` and ``scipy<1.12`` while the workbench needs scipy's sparse-array
constructors (scipy ≥ 1.12), so they cannot share an interpreter: the datafold pipeline runs in the
interpreter named by the environment variable ``WORKBENCH_DATAFOLD_PYTHON`` (or in this one, if it
has datafold), reading the points from a ``.npy`` file.  Without either its row says "not installed".

The last row times the exact Bakry–Émery curvature (Γ₂ against Γ) at every vertex of the
10⁴-vertex kNN Markov operator, ``bakry_emery_curvature(op.P)``, the operator built outside the timing.

Run: ``workbench bench diffusion-map`` (``WORKBENCH_DATAFOLD_PYTHON=/path/to/venv/bin/python`` for
the datafold column).  Target (issue 38): at least 3× scikit-learn at 10⁴ and 10⁵ points, ahead of
datafold, the same eigenvalues (max |Δμ| ≤ 1e-10), peak memory no higher than scipy by hand.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

from ._timing import timed_in_fresh_process

#: The ``run`` keywords ``workbench bench`` may pass: this benchmark takes no command-line options.
OPTIONS = ()

SIZES = (10_000, 100_000)
NEIGHBOURS = 15
EIGENPAIRS = 10
ALPHA = 0.0
SEED = 0
CURVATURE_SIZE = 10_000
LIMIT = 150.0  # seconds, the same for every pipeline
REPEATS = 2  # best of: this machine is shared, and one measurement drifts by ±15 %
DATAFOLD_PYTHON = "WORKBENCH_DATAFOLD_PYTHON"
DATAFOLD_MISSING = "not installed (pip install datafold; it pins numpy<1.27)"
SKLEARN_MISSING = "not installed (pip install scikit-learn)"

_REPOSITORY = Path(__file__).resolve().parents[1]


# ---- the pipelines, each run in a fresh interpreter ------------------------------------------------


def _high_water_mib() -> float:
    """The process's peak resident set so far, MiB (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def workbench_pipeline(path: str, beta: float, k: int, alpha: float, count: int, factor: str | None = None) -> dict:
    """The workbench's pipeline; ``factor`` forces its factorisation (``WORKBENCH_SPARSE_FACTOR``) in this child."""
    from workbench.markov import MarkovOperator, sparse_factorisation

    if factor is not None:
        os.environ["WORKBENCH_SPARSE_FACTOR"] = factor
    points = np.load(path)
    before = _high_water_mib()
    start = time.perf_counter()
    op = MarkovOperator.from_points(points, beta, alpha=alpha, k=k)
    spectrum = op.spectrum(count)
    seconds = time.perf_counter() - start
    values, vectors = np.asarray(spectrum.values), np.asarray(spectrum.vectors)
    peak = _high_water_mib() - before
    return {
        "seconds": seconds,
        "peak": peak,
        "values": values,
        "vectors": vectors,
        "stationary": np.asarray(op.stationary),
        "factor": sparse_factorisation(points.shape[0]),
    }


def scipy_pipeline(path: str, beta: float, k: int, count: int) -> dict:
    """The same operator by hand with scipy: the graph, the kernel, and ``eigsh``'s own shift-invert."""
    import scipy.sparse
    from scipy.sparse.linalg import eigsh
    from scipy.spatial import cKDTree

    points = np.load(path)
    before = _high_water_mib()
    start = time.perf_counter()
    n = points.shape[0]
    _, index = cKDTree(points).query(points, k=k + 1, workers=-1)  # self first: no duplicate points
    rows, cols = np.repeat(np.arange(n), k), index[:, 1:].ravel()
    diff = points[rows] - points[cols]
    weights = scipy.sparse.csr_array((np.exp(-beta * np.einsum("ij,ij->i", diff, diff)), (rows, cols)), shape=(n, n))
    kernel = weights.maximum(weights.T) + scipy.sparse.eye_array(n, format="csr")  # union graph, K_ii = 1
    degree = np.asarray(kernel.sum(axis=1)).ravel()
    root = scipy.sparse.diags_array(1.0 / np.sqrt(degree))
    symmetric = (root @ kernel @ root).tocsc()
    # The call the workbench made before its own factorisation: the same shift, start and tolerance.
    values, u = eigsh(symmetric, k=count, sigma=1.0 + 1e-6, which="LM", v0=np.sqrt(degree), tol=1e-10)
    seconds = time.perf_counter() - start
    order = np.argsort(values)[::-1]
    vectors = u[:, order] / np.sqrt(degree / degree.sum())[:, None]
    peak = _high_water_mib() - before
    return {"seconds": seconds, "peak": peak, "values": values[order], "vectors": vectors}


def sklearn_pipeline(path: str, gamma: float, k: int, count: int) -> dict:
    import sklearn
    from sklearn.manifold import SpectralEmbedding
    from sklearn.neighbors import kneighbors_graph

    points = np.load(path)
    before = _high_water_mib()
    start = time.perf_counter()
    graph = kneighbors_graph(points, k, mode="distance", n_jobs=-1)
    affinity = graph.maximum(graph.T).tocsr()  # union of the kNN relations, as the workbench's graph
    affinity.data = np.exp(-gamma * affinity.data**2)  # sklearn's rbf convention exp(−γ d²), γ = β
    model = SpectralEmbedding(n_components=count - 1, affinity="precomputed", random_state=0)
    embedding = model.fit(affinity).embedding_
    seconds = time.perf_counter() - start
    peak = _high_water_mib() - before
    # Not timed: the Rayleigh quotients on the pencil scikit-learn solved (its Laplacian drops the diagonal).
    affinity.setdiag(0.0)
    degree = np.asarray(affinity.sum(axis=1)).ravel()
    numerator = np.einsum("ik,ik->k", embedding, affinity @ embedding)
    quotients = numerator / np.einsum("ik,i,ik->k", embedding, degree, embedding)
    edges, version = affinity.count_nonzero(), sklearn.__version__
    return {
        "seconds": seconds, "peak": peak, "values": quotients, "vectors": embedding, "edges": edges, "version": version,
    }  # fmt: skip


def curvature_pipeline(path: str, beta: float, k: int) -> dict:
    from workbench.markov import MarkovOperator, bakry_emery_curvature

    op = MarkovOperator.from_points(np.load(path), beta, k=k)
    before = _high_water_mib()
    start = time.perf_counter()
    curvature = bakry_emery_curvature(op.P)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "peak": _high_water_mib() - before,
        "quantiles": np.quantile(curvature, [0.0, 0.5, 1.0]),
    }


def _datafold_child(points_path: str, out_path: str, k: int, epsilon: float, alpha: float, count: int) -> None:
    """The datafold pipeline; runs as ``python -m benchmarks.diffusion_map datafold ...`` in datafold's env."""
    import datafold
    import scipy.sparse
    from datafold.dynfold import DiffusionMaps
    from datafold.pcfold import GaussianKernel
    from datafold.pcfold.distance import DistanceAlgorithm
    from scipy.spatial import cKDTree

    class UnionNearestNeighbours(DistanceAlgorithm):
        """Squared distances on the union kNN graph, with the zero diagonal stored (datafold's convention)."""

        name = "union_knn"

        def __init__(self, k):
            self.neighbours = k
            super().__init__(metric="sqeuclidean", is_symmetric=True, k=k)

        def __call__(self, X, Y=None):
            if Y is not None:
                raise NotImplementedError("only the pairwise (fit) case is needed here")
            n = X.shape[0]
            _, index = cKDTree(X).query(X, k=self.neighbours + 1, workers=-1)  # self first: no duplicate points
            rows = np.repeat(np.arange(n), self.neighbours)
            pattern = scipy.sparse.coo_matrix((np.ones(rows.size), (rows, index[:, 1:].ravel())), shape=(n, n))
            pattern = (pattern.tocsr() + pattern.T.tocsr()).tocoo()
            diff = X[pattern.row] - X[pattern.col]
            rows = np.concatenate([pattern.row, np.arange(n)])
            cols = np.concatenate([pattern.col, np.arange(n)])
            values = np.concatenate([np.einsum("ij,ij->i", diff, diff), np.zeros(n)])
            distance = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(n, n))
            distance.sort_indices()
            return distance

    points = np.load(points_path)
    before = _high_water_mib()
    start = time.perf_counter()
    kernel = GaussianKernel(epsilon=epsilon, distance=UnionNearestNeighbours(k))
    dmap = DiffusionMaps(kernel, n_eigenpairs=count, alpha=alpha).fit(points)
    seconds = time.perf_counter() - start
    peak = _high_water_mib() - before
    vectors = np.asarray(dmap.eigenvectors_)
    np.savez(
        out_path, seconds=seconds, peak=peak, values=dmap.eigenvalues_, vectors=vectors, version=datafold.__version__
    )


def _datafold_interpreter() -> str | None:
    if importlib.util.find_spec("datafold") is not None:
        return sys.executable
    return os.environ.get(DATAFOLD_PYTHON) or None


def _run_datafold(python: str, points_path: str, beta: float, limit: float) -> dict | str:
    out_path = str(Path(points_path).with_suffix(".datafold.npz"))
    epsilon = 1.0 / (2.0 * beta)  # datafold: exp(−d²/(2ε)) = exp(−β d²)
    command = [python, "-m", "benchmarks.diffusion_map", "datafold", points_path, out_path]
    command += [str(NEIGHBOURS), repr(epsilon), repr(ALPHA), str(EIGENPAIRS)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_REPOSITORY), os.environ.get("PYTHONPATH")]))}
    try:
        done = subprocess.run(command, cwd=_REPOSITORY, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return f"> {limit:g}"
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"failed: {lines[-1] if lines else f'exit code {done.returncode}'}"
    with np.load(out_path) as result:
        return {name: result[name][()] for name in ("seconds", "peak", "values", "vectors", "version")}


# ---- comparisons ------------------------------------------------------------------------------------


def _median_inverse_bandwidth(points: np.ndarray, k: int) -> float:
    """β = 1 / median of the squared distance to the k-th neighbour."""
    from scipy.spatial import cKDTree

    distance, _ = cKDTree(points).query(points, k=k + 1, workers=-1)
    return float(1.0 / np.median(distance[:, -1] ** 2))


def _largest_angle_sine(a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> float:
    r"""sin of the largest principal angle between span(a) and span(b) in :math:`\langle f, g\rangle = \sum w f g`.

    Computed as :math:`\lVert(I - Q_aQ_a^\top)Q_b\rVert_2` (no cancellation for small angles).
    """
    root = np.sqrt(weight)[:, None]
    qa, _ = np.linalg.qr(root * a)
    qb, _ = np.linalg.qr(root * b)
    return float(np.linalg.norm(qb - qa @ (qa.T @ qb), 2))


def _self_loop_free_reference(points: np.ndarray, beta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The workbench's eigenpairs, degrees and edge count for the kernel scikit-learn diagonalises (K_ii = 0)."""
    import scipy.sparse

    from workbench.markov import MarkovOperator, gauss_kernel_sparse

    kernel = gauss_kernel_sparse(points, beta, k=NEIGHBOURS)
    kernel = kernel - scipy.sparse.eye_array(kernel.shape[0], format="csr")
    kernel.eliminate_zeros()
    spectrum = MarkovOperator.from_kernel(kernel, alpha=0.0).spectrum(EIGENPAIRS)
    degree = np.asarray(kernel.sum(axis=1)).ravel()
    return np.asarray(spectrum.values), np.asarray(spectrum.vectors), degree, kernel.nnz


def _neumann_deviation(values: np.ndarray) -> float:
    """max_k |(1 − μ_k)/(1 − μ₁) ÷ (λ_k/λ₁) − 1| against the Swiss roll's Neumann spectrum."""
    from workbench.markov import SwissRoll

    laplacian = SwissRoll().spectrum(values.shape[0])
    gap = 1.0 - values
    return float(np.max(np.abs((gap[1:] / gap[1]) / (laplacian[1:] / laplacian[1]) - 1.0)))


def _timed(target, args, limit: float) -> dict | str:
    try:
        outcome = timed_in_fresh_process(target, args, limit)
    except RuntimeError as exc:
        return f"failed: {exc}"
    return f"> {limit:g}" if outcome is None else outcome[1]


def _best_of(measure, repeats: int) -> dict | str:
    """The fastest of ``repeats`` measurements; a failure or a time-out is returned at once."""
    best = None
    for _ in range(repeats):
        result = measure()
        if not isinstance(result, dict):
            return result
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    return best


def _ratio(theirs, ours) -> str:
    if isinstance(theirs, dict) and isinstance(ours, dict):
        return f"{theirs['seconds'] / ours['seconds']:.2f}×"
    return "—"


def _seconds(result) -> str:
    return f"{result['seconds']:.2f}" if isinstance(result, dict) else result


def _interleaved_best_of(measures: dict, repeats: int) -> dict:
    """The fastest of ``repeats`` runs of each measurement, the pipelines taking turns within each round.

    Taking turns puts every pipeline under the same load when the machine's load drifts; a failure or a
    time-out is kept and that pipeline is not run again.
    """
    best = {}
    for _ in range(repeats):
        for name, measure in measures.items():
            if name in best and not isinstance(best[name], dict):
                continue
            result = measure()
            if not isinstance(result, dict) or name not in best or result["seconds"] < best[name]["seconds"]:
                best[name] = result
    return best


def _peak(result) -> str:
    return f"{result['peak']:.0f}" if isinstance(result, dict) else "—"


def _rows_for_size(n: int, directory: str, limit: float, repeats: int, datafold_python: str | None) -> list[list]:
    from workbench.markov import SwissRoll

    points = SwissRoll().sample(n, seed=SEED)
    path = str(Path(directory) / f"swiss_roll_{n}.npy")
    np.save(path, points)
    beta = _median_inverse_bandwidth(points, NEIGHBOURS)

    measures = {
        "workbench": partial(_timed, workbench_pipeline, (path, beta, NEIGHBOURS, ALPHA, EIGENPAIRS), limit),
        "scipy": partial(_timed, scipy_pipeline, (path, beta, NEIGHBOURS, EIGENPAIRS), limit),
    }
    from workbench.markov import sparse_factorisation

    if sparse_factorisation(n) != "superlu":  # the same pipeline on SuperLU: what the sparse extra brings, in this run
        measures["superlu"] = partial(
            _timed, workbench_pipeline, (path, beta, NEIGHBOURS, ALPHA, EIGENPAIRS, "superlu"), limit
        )
    if datafold_python is not None:
        measures["datafold"] = partial(_run_datafold, datafold_python, path, beta, limit)
    has_sklearn = importlib.util.find_spec("sklearn") is not None
    if has_sklearn:
        measures["sklearn"] = partial(_timed, sklearn_pipeline, (path, beta, NEIGHBOURS, EIGENPAIRS), limit)
    best = _interleaved_best_of(measures, repeats)

    ours = best["workbench"]
    if isinstance(ours, dict):
        ours_values, ours_vectors = ours["values"], ours["vectors"]  # μ descending, π-orthonormal ψ
        check = (
            f"β = {beta:.4g}; μ₁ = {ours_values[1]:.6f}, μ₉ = {ours_values[-1]:.6f}; "
            f"(1−μ_k)/(1−μ₁) vs Neumann λ_k/λ₁: {100 * _neumann_deviation(ours_values):.1f}%"
        )
    else:
        check = f"β = {beta:.4g}"
    label = f"workbench MarkovOperator ({ours['factor']})" if isinstance(ours, dict) else "workbench MarkovOperator"
    rows = [[n, label, _seconds(ours), _peak(ours), "—", "—", "—", check]]

    def same_operator(theirs):
        """max |Δμ| and the largest angle against the workbench's eigenpairs of the same operator."""
        if not (isinstance(theirs, dict) and isinstance(ours, dict)):
            return "—", "—"
        values, vectors = theirs["values"], theirs["vectors"]
        order = np.argsort(values)[::-1]
        delta = np.max(np.abs(ours_values - values[order]))
        angle = _largest_angle_sine(ours_vectors, vectors[:, order], ours["stationary"])
        return f"{delta:.1e}", f"{angle:.1e}"

    if "superlu" in best:
        theirs = best["superlu"]
        delta, angle = same_operator(theirs)
        rows.append([
            n, "workbench MarkovOperator (superlu)", _seconds(theirs), _peak(theirs), _ratio(theirs, ours), delta,
            angle, "same pipeline, WORKBENCH_SPARSE_FACTOR=superlu",
        ])  # fmt: skip

    # scipy by hand: the same operator with eigsh's own shift-invert factorisation
    theirs = best["scipy"]
    delta, angle = same_operator(theirs)
    rows.append([
        n, "scipy by hand (eigsh, its own splu)", _seconds(theirs), _peak(theirs), _ratio(theirs, ours), delta, angle,
        "same operator; σ = 1 + 1e-6, tol 1e-10",
    ])  # fmt: skip

    # datafold: same operator, eigenvalues compared directly
    if datafold_python is None:
        rows.append([n, "datafold DiffusionMaps", DATAFOLD_MISSING, "—", "—", "—", "—", ""])
    else:
        theirs = best["datafold"]
        delta, angle = same_operator(theirs)
        check = f"datafold {theirs['version']}; ε = 1/(2β)" if isinstance(theirs, dict) else "ε = 1/(2β)"
        rows.append([
            n, "datafold DiffusionMaps", _seconds(theirs), _peak(theirs), _ratio(theirs, ours), delta, angle, check,
        ])  # fmt: skip

    # scikit-learn: the self-loop-free operator, eigenvalues by Rayleigh quotients
    if not has_sklearn:
        rows.append([n, "scikit-learn SpectralEmbedding", SKLEARN_MISSING, "—", "—", "—", "—", ""])
    else:
        theirs = best["sklearn"]
        delta = angle = "—"
        check = "γ = β; K_ii = 0 (its Laplacian drops the diagonal)"
        if isinstance(theirs, dict):
            check = f"scikit-learn {theirs['version']}; {check}"
            values, vectors, degree, edges = _self_loop_free_reference(points, beta)
            order = np.argsort(theirs["values"])[::-1]
            delta = f"{np.max(np.abs(values[1:] - theirs['values'][order])):.1e}"
            angle = f"{_largest_angle_sine(vectors[:, 1:], theirs['vectors'], degree):.1e}"
            same = "same graph" if theirs["edges"] == edges else f"graph differs: {theirs['edges']} vs {edges} edges"
            check += f"; {same}"
        rows.append([
            n, "scikit-learn SpectralEmbedding", _seconds(theirs), _peak(theirs), _ratio(theirs, ours), delta, angle,
            check,
        ])  # fmt: skip
    return rows


def _curvature_row(n: int, directory: str, limit: float, repeats: int) -> list:
    label = "Bakry–Émery curvature K∞, all vertices"
    try:
        from workbench.markov import bakry_emery_curvature  # noqa: F401  (only: is it there yet?)
    except ImportError:
        return [n, label, "not available (workbench.markov)", "—", "—", "—", "—", ""]
    from workbench.markov import SwissRoll

    points = SwissRoll().sample(n, seed=SEED)
    path = str(Path(directory) / f"swiss_roll_{n}_curvature.npy")
    np.save(path, points)
    beta = _median_inverse_bandwidth(points, NEIGHBOURS)
    result = _best_of(partial(_timed, curvature_pipeline, (path, beta, NEIGHBOURS), limit), repeats)
    check = "rates = P of the kNN operator (ℒ = P − I)"
    if isinstance(result, dict):
        low, median, high = result["quantiles"]
        check += f"; min {low:.3f}, median {median:.3f}, max {high:.3f}"
    return [n, label, _seconds(result), _peak(result), "—", "—", "—", check]


def run(sizes=SIZES, curvature_size: int | None = CURVATURE_SIZE, limit: float = LIMIT, repeats: int = REPEATS) -> dict:
    datafold_python = _datafold_interpreter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-diffusion-map-") as directory:
        for n in sizes:
            rows += _rows_for_size(int(n), directory, limit, repeats, datafold_python)
        if curvature_size:
            rows.append(_curvature_row(int(curvature_size), directory, limit, repeats))
    import scipy

    absent = f"absent (set {DATAFOLD_PYTHON} to a Python that has it)"
    where = {None: absent, sys.executable: "this Python"}.get(datafold_python, datafold_python)
    return {
        "title": (
            f"Sparse kNN diffusion map, Swiss roll, {EIGENPAIRS} eigenpairs "
            f"(k = {NEIGHBOURS}, α = {ALPHA:g}): workbench vs scipy by hand, datafold and scikit-learn"
        ),
        "columns": ["n", "pipeline", "seconds", "peak MiB", "baseline/workbench", "max |Δμ|", "sin ∠(spans)", "check"],
        "rows": rows,
        "notes": (
            f"{platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, scipy {scipy.__version__}; "
            f"whole pipelines (points → eigenpairs), best of {repeats} runs taking turns, each in a fresh "
            f"interpreter with a {limit:g} s limit; peak MiB = the resident set's high-water mark added by the "
            "pipeline (after imports and loading the points); "
            f"datafold: {where}"
        ),
    }


if __name__ == "__main__":
    if sys.argv[1:2] != ["datafold"] or len(sys.argv) != 8:
        raise SystemExit("usage: python -m benchmarks.diffusion_map datafold POINTS.npy OUT.npz K EPSILON ALPHA COUNT")
    points_path, out_path, k, epsilon, alpha, count = sys.argv[2:]
    _datafold_child(points_path, out_path, int(k), float(epsilon), float(alpha), int(count))
