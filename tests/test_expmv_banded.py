import networkx as nx
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from workbench.backend import to_backend, to_numpy
from workbench.expmv._banded import BandedMatrix, banded_markov_generator
from workbench.expmv._kronecker import KroneckerSum, expmv_kronecker, expmv_kronecker_sum
from workbench.expmv._linear import as_linear_map


def path_laplacian(n):
    main = np.r_[1.0, 2.0 * np.ones(n - 2), 1.0]
    return scipy.sparse.diags([-np.ones(n - 1), main, -np.ones(n - 1)], [-1, 0, 1], format="csr")


def random_banded(rng, n, offsets):
    """A scipy DIA matrix with random entries on the given diagonals (the independent reference)."""
    data = rng.standard_normal((len(offsets), n))
    return scipy.sparse.dia_array((data, offsets), shape=(n, n))


# ---- BandedMatrix ---------------------------------------------------------------------------------


def test_row_alignment_is_pinned():
    # diagonals[r, i] = A[i, i + offsets[r]]; the |o| padding entries are ignored (zeroed).
    a = BandedMatrix([1, -2], np.array([[1.0, 2.0, 3.0, 99.0], [99.0, 99.0, 4.0, 5.0]]))
    expected = np.zeros((4, 4))
    expected[0, 1], expected[1, 2], expected[2, 3] = 1.0, 2.0, 3.0
    expected[2, 0], expected[3, 1] = 4.0, 5.0
    np.testing.assert_array_equal(a.to_scipy().toarray(), expected)
    assert a.offsets == (-2, 1)  # sorted on construction
    np.testing.assert_array_equal(a.diagonals, [[0.0, 0.0, 4.0, 5.0], [1.0, 2.0, 3.0, 0.0]])


def test_matmat_matches_scipy_dia_and_csr(rng, backend):
    # Oracle: scipy's own DIA→CSR conversion and CSR product (an independent kernel). Exact-order
    # differences only: 1e-14 relative.
    offsets = [-7, -1, 0, 2, 5]
    reference = random_banded(rng, 200, offsets)
    banded = BandedMatrix.from_scipy(reference)
    if backend != "numpy":
        banded = BandedMatrix(banded.offsets, to_backend(banded.diagonals, backend))
    x = rng.standard_normal((200, 3))
    expected = scipy.sparse.csr_array(reference) @ x
    got = banded.matmat(to_backend(x, backend))
    np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(to_numpy(banded @ to_backend(x[:, 1], backend)), expected[:, 1], rtol=1e-14, atol=1e-14)


def test_torch_float32_matmat():
    torch = pytest.importorskip("torch")
    # Oracle: the float64 numpy product; float32 rounding over ≤ 5 terms → 1e-6 relative.
    rng = np.random.default_rng(3)
    reference = random_banded(rng, 100, [-3, 0, 1])
    banded = BandedMatrix.from_scipy(reference)
    x = rng.standard_normal((100, 2))
    b32 = BandedMatrix(banded.offsets, torch.as_tensor(banded.diagonals, dtype=torch.float32))
    got = b32.matmat(torch.as_tensor(x, dtype=torch.float32))
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), reference @ x, rtol=1e-5, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    offsets=st.sets(st.integers(-11, 11), min_size=1, max_size=5),
    data=st.data(),
)
def test_matmat_property_against_dense(n, offsets, data):
    # Oracle: the dense matrix assembled entry by entry from the row-aligned definition.
    offsets = sorted(o for o in offsets if abs(o) < n) or [0]
    diagonals = data.draw(arrays(np.float64, (len(offsets), n), elements=st.floats(-3, 3)))
    a = BandedMatrix(offsets, diagonals)
    dense = np.zeros((n, n))
    for r, o in enumerate(offsets):
        for i in range(n):
            if 0 <= i + o < n:
                dense[i, i + o] = diagonals[r, i]
    x = data.draw(arrays(np.float64, (n, 2), elements=st.floats(-3, 3)))
    np.testing.assert_allclose(a.matmat(x), dense @ x, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(BandedMatrix.from_scipy(scipy.sparse.csr_array(dense)).to_scipy().toarray(), dense)
    # Facts against the dense matrix.
    assert a.one_norm() == pytest.approx(np.abs(dense).sum(axis=0).max(), rel=1e-14, abs=1e-14)
    radius = np.abs(dense).sum(axis=1) - np.abs(np.diag(dense))
    assert a.gershgorin() == pytest.approx((np.min(np.diag(dense) - radius), np.max(np.diag(dense) + radius)))
    gap = np.abs(dense - dense.T).max(initial=0.0)
    assert a.is_symmetric() == bool(gap <= 1e-12 * max(np.abs(dense).max(initial=0.0), 1e-300))  # same rtol
    np.testing.assert_array_equal(to_numpy(a.diagonal()), np.diag(dense))


def test_from_scipy_handles_short_data_and_coo_duplicates():
    # scipy DIA may store fewer than n columns; COO may repeat an entry (they add). Oracle: toarray().
    dia = scipy.sparse.dia_array((np.array([[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]]), [0, 1]), shape=(5, 5))
    np.testing.assert_array_equal(BandedMatrix.from_scipy(dia).to_scipy().toarray(), dia.toarray())
    coo = scipy.sparse.coo_array((np.array([1.0, 2.0, 4.0]), (np.array([0, 0, 2]), np.array([1, 1, 0]))), shape=(3, 3))
    np.testing.assert_array_equal(BandedMatrix.from_scipy(coo).to_scipy().toarray(), coo.toarray())
    with pytest.raises(TypeError, match=r"matrix must be a scipy sparse matrix, got ndarray"):
        BandedMatrix.from_scipy(np.eye(3))
    with pytest.raises(ValueError, match=r"matrix must be a square matrix \(shape \[n, n\]\), got shape \(2, 3\)"):
        BandedMatrix.from_scipy(scipy.sparse.csr_array(np.ones((2, 3))))


def test_facts_and_linear_map_wrapping():
    lap = BandedMatrix.from_scipy(path_laplacian(30))
    op = as_linear_map(lap)
    assert op.kind == "structured" and op.n == 30
    assert op.is_symmetric() and op.gershgorin() == (0.0, 4.0) and op.one_norm() == 4.0
    assert not op.is_markov_generator()  # the positive Laplacian: off-diagonal entries are −1
    assert as_linear_map(BandedMatrix(lap.offsets, -lap.diagonals)).is_markov_generator()
    upper = BandedMatrix([0, 1], np.ones((2, 4)))
    assert not upper.is_symmetric()
    np.testing.assert_array_equal(BandedMatrix([1], np.ones((1, 3))).diagonal(), np.zeros(3))


def test_banded_markov_generator():
    q = banded_markov_generator(500, 8, seed=11)
    assert q.offsets == tuple(range(-8, 9)) and q.is_markov_generator()
    dense = q.to_scipy().toarray()
    off = dense - np.diag(np.diag(dense))
    assert off.min() >= 0 and (np.abs(np.triu(dense, 9)) + np.abs(np.tril(dense, -9))).max() == 0
    assert np.count_nonzero(off[100]) == 16  # an interior row has all 16 rates, each softplus > 0
    np.testing.assert_allclose(dense.sum(axis=1), 0.0, atol=1e-13)
    np.testing.assert_array_equal(
        banded_markov_generator(50, 2, seed=1).diagonals, banded_markov_generator(50, 2, seed=1).diagonals
    )
    with pytest.raises(ValueError, match=r"bandwidth must be in \[1, 4\], got 5"):
        banded_markov_generator(5, 5)
    with pytest.raises(ValueError, match=r"n must be in \[2, inf\), got 1"):
        banded_markov_generator(1, 1)


def test_banded_bad_input():
    with pytest.raises(ValueError, match=r"offsets and diagonals rows must have matching sizes, got 1 and 2"):
        BandedMatrix([0], np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"offsets must be distinct, got \[0, 0\]"):
        BandedMatrix([0, 0], np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"offsets must satisfy \|offset\| < n = 3, got -3"):
        BandedMatrix([0, -3], np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"diagonals must be finite"):
        BandedMatrix([0], np.array([[1.0, np.nan]]))
    with pytest.raises(TypeError, match=r"offsets must be a sequence of integers"):
        BandedMatrix(["a"], np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"A columns and x rows must have matching sizes, got 3 and 2"):
        BandedMatrix([0], np.ones((1, 3))).matmat(np.ones((2, 1)))
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        BandedMatrix([0], torch.ones((1, 3), dtype=torch.float64)).matmat(np.ones((3, 1)))


# ---- Kronecker sums --------------------------------------------------------------------------------


def test_vec_convention_and_matmat(rng, backend):
    # Oracle: the explicit Kronecker sum kron(A, I) + kron(I, B) and the identity (A⊕B)vec X = vec(AX + XBᵀ),
    # row-major vec (v[i·m + j] = X[i, j]).
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((3, 3))
    s = KroneckerSum(to_backend(a, backend), to_backend(b, backend))
    x = rng.standard_normal((4, 3))
    dense = np.kron(a, np.eye(3)) + np.kron(np.eye(4), b)
    got = to_numpy(s.matmat(to_backend(x.reshape(-1), backend)))
    np.testing.assert_allclose(got, (a @ x + x @ b.T).reshape(-1), rtol=1e-13, atol=1e-14)
    v = rng.standard_normal((12, 5))
    np.testing.assert_allclose(to_numpy(s @ to_backend(v, backend)), dense @ v, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(KroneckerSum(a, b).to_scipy().toarray(), dense, rtol=0, atol=0)


def test_grid_laplacian_is_a_kronecker_sum_of_paths():
    # Oracle: networkx's Laplacian of the 7 × 5 grid with vertices (i, j) in lexicographic order.
    grid = nx.grid_2d_graph(7, 5)
    lap = nx.laplacian_matrix(grid, nodelist=sorted(grid.nodes())).toarray()
    s = KroneckerSum(path_laplacian(7), BandedMatrix.from_scipy(path_laplacian(5)))
    np.testing.assert_array_equal(s.to_scipy().toarray(), lap)
    assert s.gershgorin() == (0.0, 8.0) and s.one_norm() == np.abs(lap).sum(axis=0).max()
    assert s.is_symmetric() and not s.is_markov_generator()
    np.testing.assert_array_equal(s.diagonal(), np.diag(lap))
    assert KroneckerSum(-path_laplacian(7), -path_laplacian(5)).is_markov_generator()


def test_kronecker_facts_against_dense(rng):
    # Oracle: the dense Kronecker sum (one-norm, Gershgorin); factors with diagonals of both signs.
    a, b = rng.standard_normal((5, 5)), rng.standard_normal((4, 4))
    dense = np.kron(a, np.eye(4)) + np.kron(np.eye(5), b)
    s = KroneckerSum(a, scipy.sparse.csr_array(b))
    assert s.one_norm() == pytest.approx(np.abs(dense).sum(axis=0).max(), rel=1e-14)
    radius = np.abs(dense).sum(axis=1) - np.abs(np.diag(dense))
    lo, hi = s.gershgorin()
    assert lo == pytest.approx(np.min(np.diag(dense) - radius)) and hi == pytest.approx(np.max(np.diag(dense) + radius))
    assert s.dtype == np.float64 and s.shape == (20, 20)


@pytest.mark.parametrize("t", [-0.8, 0.3, 2.0])
def test_exponential_identity_against_dense_expm(rng, backend, t):
    # Oracle: scipy.linalg.expm of the explicit 20 × 20 Kronecker sum (non-normal factors, both signs of t).
    a, b = rng.standard_normal((5, 5)), rng.standard_normal((4, 4))
    dense = np.kron(a, np.eye(4)) + np.kron(np.eye(5), b)
    v = rng.standard_normal((20, 3))
    y = expmv_kronecker_sum(to_backend(a, backend), to_backend(b, backend), to_backend(v, backend), t)
    reference = scipy.linalg.expm(t * dense) @ v
    np.testing.assert_allclose(to_numpy(y), reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())
    y1 = expmv_kronecker_sum(a, b, v[:, 0], t)
    assert y1.shape == (20,)


def test_grid_heat_through_chebyshev_factors_and_three_factors():
    # Oracle: dense expm of the grid Laplacian. dense_limit=0 forces the factor exponentials through
    # expmv_chebyshev (symmetric factors), so the identity and the method agree to 1e-12.
    grid = nx.grid_2d_graph(6, 5)
    lap = nx.laplacian_matrix(grid, nodelist=sorted(grid.nodes())).toarray().astype(float)
    v = np.random.default_rng(4).standard_normal((30, 2))
    reference = scipy.linalg.expm(-3.0 * lap) @ v
    got = expmv_kronecker_sum(-path_laplacian(6), -path_laplacian(5), v, 3.0, dense_limit=0)
    np.testing.assert_allclose(got, reference, rtol=1e-12, atol=1e-12 * np.abs(reference).max())
    # Three factors: (A ⊕ B) ⊕ C is the 3 × 4 × 2 grid, the Cartesian product of paths (oracle: networkx,
    # vertices ((i, j), k) in lexicographic order).
    cube = nx.cartesian_product(nx.cartesian_product(nx.path_graph(3), nx.path_graph(4)), nx.path_graph(2))
    nodes = sorted(cube.nodes())
    lap3 = nx.laplacian_matrix(cube, nodelist=nodes).toarray().astype(float)
    inner = KroneckerSum(-path_laplacian(3), -path_laplacian(4))
    w = np.random.default_rng(5).standard_normal((24, 2))
    got = expmv_kronecker_sum(inner, -path_laplacian(2), w, 0.9)
    np.testing.assert_allclose(got, scipy.linalg.expm(-0.9 * lap3) @ w, rtol=1e-12, atol=1e-14)


def test_large_factor_dispatch_uniformization_and_custom():
    # A product of two independent chains: generator Q1 ⊕ Q2; oracle: dense expm of the Kronecker sum.
    q1 = banded_markov_generator(6, 2, seed=1)
    q2 = banded_markov_generator(5, 1, seed=2)
    dense = np.kron(q1.to_scipy().toarray(), np.eye(5)) + np.kron(np.eye(6), q2.to_scipy().toarray())
    v = np.random.default_rng(6).random((30, 2))
    reference = scipy.linalg.expm(1.5 * dense) @ v
    y, info = expmv_kronecker(KroneckerSum(q1, q2), v, 1.5, dense_limit=0)
    np.testing.assert_allclose(y, reference, rtol=1e-12)
    assert info["factor_methods"] == ["uniformization", "uniformization"] and info["matvecs"] > 0
    calls = []

    def factor_expmv(f, x, t):
        calls.append(f.shape)
        return scipy.linalg.expm(t * f.to_scipy().toarray()) @ x

    y = expmv_kronecker_sum(q1, q2, v, 1.5, dense_limit=0, factor_expmv=factor_expmv)
    np.testing.assert_allclose(y, reference, rtol=1e-12)
    assert calls == [(6, 6), (5, 5)]
    # The whole sum is itself a structured generator: uniformization on it agrees (independent route).
    from workbench.expmv._uniformization import expmv_uniformization

    y_u, _ = expmv_uniformization(KroneckerSum(q1, q2), v, 1.5)
    np.testing.assert_allclose(y_u, reference, rtol=1e-12)


def test_kronecker_bad_input(rng):
    a = rng.standard_normal((3, 3))
    with pytest.raises(ValueError, match=r"A ⊕ B columns and V rows must have matching sizes, got 9 and 8"):
        expmv_kronecker_sum(a, a, np.ones(8), 1.0)
    with pytest.raises(ValueError, match=r"B must be a square matrix \(shape \[n, n\]\), got shape \(3, 2\)"):
        KroneckerSum(a, np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"exceeds dense_limit = 0 and is neither symmetric nor a Markov generator"):
        expmv_kronecker_sum(a, a, np.ones(9), 1.0, dense_limit=0)
    with pytest.raises(TypeError, match=r"expmv_kronecker needs a KroneckerSum operator, got ndarray"):
        expmv_kronecker(a, np.ones(3), 1.0)
    with pytest.raises(ValueError, match=r"V must have shape \[nm\] or \[nm, k\], got shape \(9, 1, 1\)"):
        expmv_kronecker_sum(a, a, np.ones((9, 1, 1)), 1.0)
