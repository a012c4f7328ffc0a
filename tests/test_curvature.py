import importlib.util
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.optimize
import scipy.sparse

from workbench.backend import to_backend, to_numpy
from workbench.markov._bakry_emery import carre_du_champ, gamma2
from workbench.markov._curvature import bakry_emery_curvature, ollivier_ricci

needs_pot = pytest.mark.skipif(importlib.util.find_spec("ot") is None, reason="POT (import ot) not installed")


def adjacency(graph):
    return nx.to_numpy_array(graph, nodelist=sorted(graph.nodes))


def random_rates(rng, n=9, density=0.35):
    """Weighted, non-symmetric rates with a random diagonal (ignored) and no isolated vertex."""
    W = rng.random((n, n)) * (rng.random((n, n)) < density)
    W[np.arange(n), (np.arange(n) + 1) % n] += 0.5  # a directed ring: every vertex has a rate out
    np.fill_diagonal(W, rng.random(n))
    return W


def local_forms(W):
    """Q[x]_ij = Γ₂(e_i, e_j)(x) and B[x]_ij = Γ(e_i, e_j)(x) for every x, from the public Γ, Γ₂.

    All n² pairs of basis vectors go in as columns of one [n, n²] pair (the sparse path is vectorised
    over columns).  No locality and no Schur complement are used.
    """
    n = W.shape[0]
    E = np.eye(n)
    F, G = np.repeat(E, n, axis=1), np.tile(E, n)  # column i·n + j holds (e_i, e_j)
    sparse = scipy.sparse.csr_array(W)
    return gamma2(sparse, F, G).reshape(n, n, n), carre_du_champ(sparse, F, G).reshape(n, n, n)


def curvature_by_bisection(W, x, forms=None):
    """Independent route: the largest K with Q − K B ⪰ 0, bisected on dense eigenvalues.

    f(x) = 0 is imposed by dropping coordinate x (both forms are invariant under f ↦ f + c), and
    coordinates where both forms vanish identically (vertices beyond the two-ball) are dropped, as
    they decouple.
    """
    Qs, Bs = local_forms(W) if forms is None else forms
    Q, B = Qs[x], Bs[x]
    n = W.shape[0]
    keep = [i for i in range(n) if i != x and (np.any(Q[i] != 0) or np.any(B[i] != 0))]
    Q, B = Q[np.ix_(keep, keep)], B[np.ix_(keep, keep)]
    hi = min(Q[i, i] / B[i, i] for i in range(len(keep)) if B[i, i] > 0)  # a Rayleigh quotient bounds K
    lo = hi - 1.0
    while np.linalg.eigvalsh(Q - lo * B)[0] < 0:
        lo -= 2 * (hi - lo)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.linalg.eigvalsh(Q - mid * B)[0] >= 0 else (lo, mid)
    return lo


# --------------------------------------------------------------------------------------------------
# Bakry–Émery curvature: published values
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4, 5, 8, 12])
def test_complete_graph(n):
    # Published: K_n has K_∞ = 1 + n/2 for the unnormalised Laplacian (Klartag–Kozma–Ralli–Tetali 2016;
    # Cushing–Liu–Peyerimhoff 2020); for D⁻¹A every rate is 1/(n−1), and K scales with the rates, so
    # (n+2)/(2(n−1)).  Rounding of a small eigenproblem: 1e-12.
    A = adjacency(nx.complete_graph(n))
    np.testing.assert_allclose(bakry_emery_curvature(A), 1 + n / 2, rtol=1e-12)
    np.testing.assert_allclose(bakry_emery_curvature(A / (n - 1)), (n + 2) / (2 * (n - 1)), rtol=1e-12)


@pytest.mark.parametrize("n", [5, 6, 7, 10])
def test_cycle_is_flat(n):
    # Published: C_n, n ≥ 5, has K_∞ = 0 (Lin–Yau 2010; Cushing–Liu–Peyerimhoff 2020), for both
    # Laplacians.  C_3 = K_3 (5/2) and C_4 = Q_2 (2) are the exceptions.  Absolute 1e-12.
    A = adjacency(nx.cycle_graph(n))
    np.testing.assert_allclose(bakry_emery_curvature(A), 0.0, atol=1e-12)
    np.testing.assert_allclose(bakry_emery_curvature(A / 2), 0.0, atol=1e-12)
    np.testing.assert_allclose(bakry_emery_curvature(adjacency(nx.cycle_graph(3))), 2.5, rtol=1e-12)
    np.testing.assert_allclose(bakry_emery_curvature(adjacency(nx.cycle_graph(4))), 2.0, rtol=1e-12)


def test_curvature_identity_needs_n_at_least_5_for_the_cycle():
    # `markov.curvature.graphs` (issue 37, item 4): K_∞(C_n) = 0 only for n ≥ 5.  Oracle, closed forms: C₃ = K₃ has
    # 1 + 3/2 = 5/2 (normalised (3 + 2)/(2·2) = 5/4) and C₄ = Q₂ has 2 (normalised 2/2 = 1).  The statement and the
    # reference say n ≥ 5, the check uses only cycles with n ≥ 5, and the outside case measures C₃ and C₄.
    from pathlib import Path

    from workbench.catalogue import discover, select
    from workbench.derivations import markov_geometry as mg

    for n, unnormalised, normalised in ((3, 2.5, 1.25), (4, 2.0, 1.0)):
        A = adjacency(nx.cycle_graph(n))
        np.testing.assert_allclose(bakry_emery_curvature(A), unnormalised, rtol=1e-12)
        np.testing.assert_allclose(bakry_emery_curvature(A / A.sum(1, keepdims=True)), normalised, rtol=1e-12)
    (identity,) = select(discover(), name="markov.curvature.graphs")
    assert r"K_\infty(C_n) = 0\ (n \ge 5)" in identity.statement
    (hypothesis,) = identity.hypotheses
    assert hypothesis.text == "n ≥ 5 for the cycle C_n"
    outcome = hypothesis.outside(np.random.default_rng(0))
    assert outcome.sizes == pytest.approx({"C_3": 2.5, "C_4": 2.0}, rel=1e-12)
    assert not outcome.passed and outcome.residual == pytest.approx(2.0, rel=1e-12)
    assert all(g.number_of_nodes() >= 5 for name, g, *_ in mg._curvature_cases("large") if name.startswith("C_"))
    reference = (Path(__file__).parents[1] / "book" / "reference.md").read_text()
    assert "$C_n$ with $n \\ge 5$" in reference


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_hypercube(d):
    # Published: Q_d has K_∞ = 2 (unnormalised; Klartag–Kozma–Ralli–Tetali 2016) and 2/d normalised.
    A = adjacency(nx.hypercube_graph(d))
    np.testing.assert_allclose(bakry_emery_curvature(scipy.sparse.csr_array(A)), 2.0, rtol=1e-12)
    np.testing.assert_allclose(bakry_emery_curvature(A / d), 2.0 / d, rtol=1e-12)


def test_cartesian_product_takes_the_minimum():
    # Published: K_∞ of a Cartesian product is the minimum of the factors' (Cushing–Liu–Peyerimhoff
    # 2020, unnormalised Laplacian); flat tori are the special case C_m × C_m.  1e-12.
    for left, right, expected in [
        (nx.complete_graph(3), nx.complete_graph(4), 2.5),
        (nx.complete_graph(4), nx.cycle_graph(6), 0.0),
        (nx.cycle_graph(4), nx.complete_graph(3), 2.0),
        (nx.cycle_graph(5), nx.cycle_graph(6), 0.0),
    ]:
        A = adjacency(nx.cartesian_product(left, right))
        np.testing.assert_allclose(bakry_emery_curvature(A), expected, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# Bakry–Émery curvature: against a brute-force route, laws, backends
# --------------------------------------------------------------------------------------------------


def test_matches_bisection_on_the_full_forms(rng):
    # Oracle: `curvature_by_bisection` (global forms from gamma2, PSD bisection, no Schur complement),
    # on weighted non-symmetric rates with a diagonal.  Bisection resolves ~1e-13; tolerance 1e-9.
    for _ in range(3):
        W = random_rates(rng)
        forms = local_forms(W)
        expected = [curvature_by_bisection(W, x, forms) for x in range(W.shape[0])]
        np.testing.assert_allclose(bakry_emery_curvature(W), expected, rtol=1e-9, atol=1e-9)


def test_curvature_dimension_inequality_holds_and_is_sharp_for_random_functions(rng):
    # Oracle: the definition.  For 500 random f, Γ₂(f)(x) ≥ K Γ(f)(x) (rounding slack 1e-12·scale),
    # and no margin is left: K + 1e-6 breaks it for some f built from the bisection oracle's forms.
    W = random_rates(rng, n=8, density=0.5)
    K = bakry_emery_curvature(W)
    F = rng.standard_normal((8, 500))
    g2, g1 = gamma2(W, F), carre_du_champ(W, F)
    slack = 1e-12 * (np.abs(g2) + np.abs(K[:, None] * g1))
    assert np.all(g2 - K[:, None] * g1 >= -slack)
    # Sharpness: the minimiser of Γ₂ − (K + δ)Γ over f is a negative direction.
    x, n = 3, W.shape[0]
    Qs, Bs = local_forms(W)
    Q, B = Qs[x], Bs[x]
    keep = [i for i in range(n) if i != x]
    values, vectors = np.linalg.eigh((Q - (K[x] + 1e-6) * B)[np.ix_(keep, keep)])
    assert values[0] < 0
    f = np.zeros(n)
    f[keep] = vectors[:, 0]
    assert gamma2(W, f)[x] < (K[x] + 1e-6) * carre_du_champ(W, f)[x]


def test_scaling_diagonal_and_markov_operator(rng):
    # Laws: K(cW) = cK(W) (Γ scales by c, Γ₂ by c²); the diagonal is ignored; the Markov operator
    # D⁻¹A with holding probabilities has the curvature of D⁻¹A.  Rounding: 1e-12.
    W = random_rates(rng)
    K = bakry_emery_curvature(W)
    np.testing.assert_allclose(bakry_emery_curvature(3.5 * W), 3.5 * K, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bakry_emery_curvature(W + np.diag(rng.random(9) * 10)), K, rtol=1e-12, atol=1e-12)
    A = adjacency(nx.petersen_graph())
    lazy = 0.5 * np.eye(10) + 0.5 * A / 3
    np.testing.assert_allclose(bakry_emery_curvature(lazy), 0.5 * bakry_emery_curvature(A / 3), rtol=1e-12)


def test_dense_sparse_torch_and_vertex_selection_agree(rng, backend):
    # Oracle: the dense numpy result; every route assembles the same sums (1e-12).
    W = random_rates(rng, n=12, density=0.3)
    K = bakry_emery_curvature(W)
    np.testing.assert_allclose(bakry_emery_curvature(scipy.sparse.csr_array(W)), K, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(bakry_emery_curvature(to_backend(W, backend))), K, rtol=1e-12, atol=1e-12)
    picked = bakry_emery_curvature(scipy.sparse.coo_matrix(W), vertices=[5, 0, 5, 11])
    np.testing.assert_allclose(picked, K[[5, 0, 5, 11]], rtol=1e-12, atol=1e-12)
    single = bakry_emery_curvature(W, vertices=np.int64(7))
    assert single.shape == ()
    np.testing.assert_allclose(single, K[7], rtol=1e-12)


def test_symmetric_knn_graph_matches_bisection_on_some_vertices(rng):
    # Oracle: the bisection route on a 60-vertex symmetric kNN graph (k = 5; heterogeneous degrees,
    # so several batch sizes are exercised); 1e-9 as above.
    points = rng.standard_normal((60, 2))
    distances = np.linalg.norm(points[:, None] - points[None], axis=-1)
    nearest = np.argsort(distances, axis=1)[:, 1:6]
    A = np.zeros((60, 60))
    A[np.repeat(np.arange(60), 5), nearest.ravel()] = 1.0
    A = np.maximum(A, A.T)
    K = bakry_emery_curvature(scipy.sparse.csr_array(A))
    forms = local_forms(A)
    for x in (0, 17, 42):
        np.testing.assert_allclose(K[x], curvature_by_bisection(A, x, forms), rtol=1e-9, atol=1e-9)


def test_bakry_emery_curvature_rejects_bad_input():
    A = adjacency(nx.path_graph(3))
    with pytest.raises(ValueError, match=r"vertices must be in \[0, 2\], got 3"):
        bakry_emery_curvature(A, vertices=[0, 3])
    with pytest.raises(TypeError, match=r"vertices must be an integer or a 1-dimensional integer array, got float64"):
        bakry_emery_curvature(A, vertices=[0.5])
    isolated = np.zeros((3, 3))
    isolated[0, 1] = isolated[1, 0] = 1.0
    with pytest.raises(
        ValueError, match=r"rates must have jump rates out of every requested vertex, got none out of vertex 2"
    ):
        bakry_emery_curvature(isolated)
    np.testing.assert_allclose(bakry_emery_curvature(isolated, vertices=[0, 1]), [2.0, 2.0])  # K_2 = Q_1
    bad = A.copy()
    bad[0, 1] = -1.0
    with pytest.raises(ValueError, match=r"rates must have nonnegative off-diagonal entries"):
        bakry_emery_curvature(bad)
    with pytest.raises(ValueError, match=r"rates must be a square matrix"):
        bakry_emery_curvature(np.ones((2, 3)))


# --------------------------------------------------------------------------------------------------
# Ollivier–Ricci curvature
# --------------------------------------------------------------------------------------------------


def transport_by_linear_programming(W, x, y, idleness):
    """Independent W₁: scipy's HiGHS LP on the full vertex set, networkx BFS distances."""
    n = W.shape[0]
    off = W - np.diag(np.diag(W))

    def law(v):
        m = (1 - idleness) * off[v] / off[v].sum()
        m[v] += idleness
        return m

    graph = nx.from_numpy_array(((off + off.T) > 0).astype(float))
    lengths = dict(nx.all_pairs_shortest_path_length(graph))
    cost = np.array([[lengths[i].get(j, np.inf) for j in range(n)] for i in range(n)])
    a, b = law(x), law(y)
    rows = np.kron(np.eye(n), np.ones(n))
    cols = np.kron(np.ones(n), np.eye(n))
    result = scipy.optimize.linprog(
        cost.ravel(), A_eq=np.vstack([rows, cols]), b_eq=np.concatenate([a, b]), method="highs"
    )
    return 1 - result.fun / cost[x, y]


@needs_pot
@pytest.mark.parametrize("n", [3, 4, 6])
@pytest.mark.parametrize("idleness", [0.0, 0.25, 0.5])
def test_ollivier_complete_graph(n, idleness):
    # Closed form [derived; idleness 0 gives (n−2)/(n−1), Jost–Liu 2014]: m_x − m_y puts
    # α − (1−α)/(n−1) on x and the opposite on y, at distance 1, so κ = 1 − |α − (1−α)/(n−1)|.
    # Exact LP: 1e-12.
    A = adjacency(nx.complete_graph(n))
    edges, kappa = ollivier_ricci(A, idleness=idleness)
    assert edges.shape == (n * (n - 1) // 2, 2)
    np.testing.assert_allclose(kappa, 1 - abs(idleness - (1 - idleness) / (n - 1)), rtol=1e-12)


@needs_pot
@pytest.mark.parametrize("n", [6, 7, 10])
def test_ollivier_cycle_is_flat(n):
    # Published: κ = 0 on C_n, n ≥ 6, for every idleness (Lin–Lu–Yau 2011; Jost–Liu 2014).
    A = adjacency(nx.cycle_graph(n))
    for idleness in (0.0, 0.5):
        _, kappa = ollivier_ricci(scipy.sparse.csr_array(A), idleness=idleness)
        np.testing.assert_allclose(kappa, 0.0, atol=1e-12)


@needs_pot
@pytest.mark.parametrize("d", [2, 3, 4])
def test_ollivier_lazy_hypercube(d):
    # Published: the lazy walk (stay with probability ½) on {0,1}^d has κ = 1/d (Ollivier 2009, Example 8).
    A = adjacency(nx.hypercube_graph(d))
    _, kappa = ollivier_ricci(A, idleness=0.5)
    np.testing.assert_allclose(kappa, 1.0 / d, rtol=1e-12)


@needs_pot
def test_ollivier_matches_linear_programming(rng, backend):
    # Oracle: `transport_by_linear_programming` (HiGHS LP on all vertices, networkx BFS distances), on
    # weighted non-symmetric rates, adjacent and non-adjacent pairs.  LP optimality tolerance: 1e-8.
    W = random_rates(rng, n=10, density=0.2)
    pairs = np.array([[0, 1], [2, 7], [4, 9], [3, 8]])
    for idleness in (0.0, 0.3):
        edges, kappa = ollivier_ricci(to_backend(W, backend), edges=pairs, idleness=idleness)
        np.testing.assert_array_equal(edges, pairs)
        expected = [transport_by_linear_programming(W, x, y, idleness) for x, y in pairs]
        np.testing.assert_allclose(kappa, expected, rtol=1e-8, atol=1e-8)


@needs_pot
def test_ollivier_default_edges_are_the_upper_support_in_row_major_order(rng):
    # Oracle: np.argwhere of the strict upper triangle of the symmetrised support (the documented order).
    W = random_rates(rng, n=8, density=0.3)
    support = (W + W.T > 0) & ~np.eye(8, dtype=bool)
    edges, _ = ollivier_ricci(scipy.sparse.csr_array(W))
    np.testing.assert_array_equal(edges, np.argwhere(np.triu(support, 1)))


def test_ollivier_needs_pot(monkeypatch):
    # The lazy import names the PyPI package when POT is missing.
    monkeypatch.setitem(sys.modules, "ot", None)  # import ot now raises ImportError
    with pytest.raises(ImportError, match=r"install the PyPI package `POT`"):
        ollivier_ricci(adjacency(nx.cycle_graph(6)))


@needs_pot
def test_ollivier_rejects_bad_input():
    A = adjacency(nx.path_graph(4))
    with pytest.raises(ValueError, match=r"idleness must be in \[0, 1\], got 1.5"):
        ollivier_ricci(A, idleness=1.5)
    with pytest.raises(ValueError, match=r"edges must have shape \[E, 2\], got shape \(3,\)"):
        ollivier_ricci(A, edges=[0, 1, 2])
    with pytest.raises(TypeError, match=r"edges must hold integer vertex indices, got dtype float64"):
        ollivier_ricci(A, edges=[[0.0, 1.0]])
    with pytest.raises(ValueError, match=r"edges must hold vertices in \[0, 3\], got 4"):
        ollivier_ricci(A, edges=[[0, 4]])
    with pytest.raises(ValueError, match=r"edges must join two distinct vertices, got \(2, 2\)"):
        ollivier_ricci(A, edges=[[2, 2]])
    split = np.zeros((4, 4))
    split[0, 1] = split[1, 0] = split[2, 3] = split[3, 2] = 1.0
    with pytest.raises(ValueError, match=r"edges must join vertices of one connected component, got \(0, 2\)"):
        ollivier_ricci(split, edges=[[0, 2]])
    isolated = A.copy()
    isolated[3, 2] = 0.0  # vertex 3 receives a rate but has none out
    with pytest.raises(ValueError, match=r"got none out of vertex 3"):
        ollivier_ricci(isolated, edges=[[2, 3]])
