r"""Principal angles, Grassmannian distances, random subspaces and the head-subspace study, against oracles.

Oracles:

- ``scipy.linalg.subspace_angles`` (an independent implementation, one pair at a time, descending) for
  :func:`principal_angles` on every shape regime, and a Python loop over the batch for the batched and broadcast
  calls (``f(stack(xs)) == stack([f(x) for x in xs])``);
- closed forms: equal, orthogonal and partly shared subspaces, and a plane turned by a known angle :math:`t` in a
  2-plane down to :math:`t = 10^{-12}`, where arccos of the cosine alone returns 0;
- the gauge :math:`W \mapsto WG` (and :math:`W_Q \mapsto W_QG`, :math:`W_K \mapsto W_KG^{-\top}` for a head),
  which moves no subspace and no score;
- dense matrix formulas for every distance of ``GRASSMANN_METRICS``: :math:`\lVert P_1 - P_2\rVert_F`, its
  :math:`2^{-1/2}` multiple, :math:`\lVert P_1 - P_2\rVert_2`, ``scipy.linalg.orthogonal_procrustes``,
  :math:`\arccos\lvert\det Q_1^\top Q_2\rvert` and the norm of the Grassmann logarithm (Edelman, Arias & Smith
  1998, §2.5.1); the metric axioms on seeded random triples;
- central finite differences of :math:`P(Y) = YY^+` for :func:`projection_differential`, and its rank
  :math:`k(n-k)` from the singular values;
- exact laws of random subspaces: :math:`\cos^2\theta \sim \mathrm{Beta}(l/2, (n-l)/2)` for a random line
  (``scipy.stats.kstest``), the exact mean :math:`\max(k, l)/n` of the squared cosines, Haar invariance (two-sample
  KS); Wachter's law: total mass and mean by quadrature against the closed form :math:`\beta`, and a Monte Carlo
  sample against its CDF with a convergence rate in :math:`n`;
- numpy against torch for :func:`head_subspaces`; a pair loop with scipy for :func:`head_subspace_distances`;
- a loop over rows and heads for :func:`attention_pattern_distance`, and the closed form :math:`1 - 1/n` of a
  delta head against a uniform one;
- ``scipy.stats.spearmanr`` and an enumeration of all relabellings with ``itertools.permutations`` for
  :func:`mantel_test` (exact p-values, also within strata).

Every random input is seeded, so each statistical assertion is deterministic; the thresholds are loose enough
that a different BLAS or LAPACK (a different last bit of every number) cannot flip them.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.stats
from scipy.integrate import quad

from workbench.attention import (
    GRASSMANN_METRICS,
    MultiHeadAttention,
    Subspace,
    WachterLaw,
    attention_pattern_distance,
    distance_from_angles,
    grassmann_dimension,
    grassmann_distance,
    head_subspace_angles,
    head_subspace_distances,
    head_subspaces,
    mantel_test,
    principal_angles,
    projection_differential,
    random_multihead,
    random_principal_angles,
    random_subspaces,
    subspace_basis,
    subspace_null,
)

EPS = float(np.finfo(np.float64).eps)

#: principal_angles against scipy.linalg.subspace_angles on well-conditioned Gaussian bases (condition numbers of
#: a few units): both are backward stable, so each angle agrees to a few hundred ulps of π/2; 1e-12 leaves ~10×.
ATOL_ANGLES = 1e-12


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


def _projection(Q):
    return Q @ Q.T


def _orth(A):
    return np.linalg.qr(A)[0]


def _scipy_angles(A, B):
    """Ascending principal angles from scipy (which returns them descending)."""
    return np.sort(scipy.linalg.subspace_angles(A, B))


# ---------------------------------------------------------------------------------------------------------------
# 1. principal_angles against scipy; batches and broadcasting
# ---------------------------------------------------------------------------------------------------------------

SHAPES = {"p < q": (9, 2, 5), "p > q": (9, 5, 2), "p = q": (8, 3, 3), "p + q > n": (6, 4, 4), "n = p": (5, 5, 2)}


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_principal_angles_are_scipys_subspace_angles(rng, shape):
    n, p, q = shape
    for _ in range(5):
        A, B = rng.standard_normal((n, p)), rng.standard_normal((n, q))
        theta = principal_angles(A, B)
        assert theta.shape == (min(p, q),)
        assert np.all(np.diff(theta) >= 0)  # ascending
        assert np.all((theta >= 0) & (theta <= np.pi / 2))
        # p + q > n: the planes share a (p + q − n)-plane, whose angles are 0; scipy returns some of them as
        # 1.5e-8 ≈ arccos(1 − eps/2) (read from a cosine), so those are checked against the closed form, the rest
        # against scipy
        shared = max(0, p + q - n)
        assert np.all(theta[:shared] < 1e-14)  # sines of rounding, ~n·eps
        # oracle: scipy.linalg.subspace_angles; tolerance ATOL_ANGLES (both backward stable, see its comment)
        np.testing.assert_allclose(theta[shared:], _scipy_angles(A, B)[shared:], rtol=0, atol=ATOL_ANGLES)
        # orthonormal=True on orthonormal bases is the same computation minus one SVD each
        np.testing.assert_allclose(principal_angles(_orth(A), _orth(B), orthonormal=True), theta, atol=ATOL_ANGLES)
    if p == n:  # the whole space contains every subspace: all angles 0 (rounding of the sines only, ~n·eps)
        assert np.max(theta) < 1e-14


def test_p_plus_q_beyond_n_forces_zero_angles(rng):
    """Two 4-planes of R^6 share at least a 2-plane: the two smallest angles are 0 (sines ~eps, hence < 1e-14)."""
    theta = principal_angles(rng.standard_normal((6, 4)), rng.standard_normal((6, 4)))
    assert np.max(theta[:2]) < 1e-14
    assert np.min(theta[2:]) > 1e-3  # generic otherwise


def test_a_batch_is_a_loop_over_the_batch(rng):
    A, B = rng.standard_normal((4, 3, 7, 3)), rng.standard_normal((4, 3, 7, 2))
    batched = principal_angles(A, B)
    looped = np.stack([np.stack([principal_angles(a, b) for a, b in zip(A[i], B[i], strict=True)]) for i in range(4)])
    assert batched.shape == (4, 3, 2)
    # the same LAPACK routines run per matrix; 1e-13 allows a different blocking of the batched call only
    np.testing.assert_allclose(batched, looped, rtol=0, atol=1e-13)
    distances = grassmann_distance(A, B, "chordal")
    assert distances.shape == (4, 3)
    looped = [[float(grassmann_distance(a, b, "chordal")) for a, b in zip(A[i], B[i], strict=True)] for i in range(4)]
    np.testing.assert_allclose(distances, looped, rtol=0, atol=1e-13)  # the same, through sin and a norm


def test_a_batch_mixing_near_and_far_pairs(rng):
    """Pairs with a small angle (sine route) and pairs without (cosine only) in one broadcast call."""
    n = 40
    A = rng.standard_normal((4, 1, n, 3))
    B = rng.standard_normal((1, 3, n, 3))  # random 3-planes of R^40: every angle far above π/4
    near = A[None, :2, 0] + 1e-6 * rng.standard_normal((1, 2, n, 3))  # perturbed copies of heads 0 and 1
    B = np.concatenate([B, near], axis=1)
    theta = principal_angles(A, B)  # [4, 5, 3]; pairs (0, 3) and (1, 4) have tiny angles
    assert theta.shape == (4, 5, 3)
    assert theta[0, 3].max() < 1e-5 and theta[1, 4].max() < 1e-5
    for a in range(4):
        for b in range(5):
            # oracle: the call on the single pair (it takes the sine route iff that pair has an angle below π/4);
            # the same LAPACK calls, 1e-13 for a different blocking of the batch
            np.testing.assert_allclose(theta[a, b], principal_angles(A[a, 0], B[0, b]), rtol=0, atol=1e-13)
    # the tiny angles keep their relative accuracy inside the batch (sine route): against scipy, relative 1e-6
    np.testing.assert_allclose(theta[0, 3], _scipy_angles(A[0, 0], B[0, 3]), rtol=1e-6, atol=1e-15)


def test_float32_angles_track_float64(rng):
    A, B = rng.standard_normal((9, 3)), rng.standard_normal((9, 4))
    theta32 = principal_angles(A.astype(np.float32), B.astype(np.float32))
    assert theta32.dtype == np.float32
    # float32 rounding (eps 1.2e-7) of well-conditioned bases: ~1e-6 absolute; 2e-5 leaves a margin of ~10
    np.testing.assert_allclose(theta32, principal_angles(A, B), rtol=0, atol=2e-5)


def test_broadcasting_pairs_every_head_with_every_head(rng):
    H1, H2, n = 3, 4, 10
    A, B = rng.standard_normal((H1, 1, n, 3)), rng.standard_normal((1, H2, n, 2))
    theta = principal_angles(A, B)
    assert theta.shape == (H1, H2, 2)
    for a in range(H1):
        for b in range(H2):
            # oracle: scipy, one pair at a time; tolerance ATOL_ANGLES
            np.testing.assert_allclose(theta[a, b], _scipy_angles(A[a, 0], B[0, b]), rtol=0, atol=ATOL_ANGLES)


def test_torch_inputs_give_the_numpy_angles(rng):
    torch = pytest.importorskip("torch")
    A, B = rng.standard_normal((2, 8, 3)), rng.standard_normal((2, 8, 4))
    theta = principal_angles(torch.from_numpy(A), torch.from_numpy(B))
    assert isinstance(theta, torch.Tensor)
    # two LAPACK front ends on the same float64 data: agreement to rounding (ATOL_ANGLES)
    np.testing.assert_allclose(theta.numpy(), principal_angles(A, B), rtol=0, atol=ATOL_ANGLES)
    s = subspace_basis(torch.from_numpy(A[0] @ rng.standard_normal((3, 5))))
    assert isinstance(s.basis, torch.Tensor) and (s.rank, s.columns) == (3, 5)
    np.testing.assert_allclose(_projection(s.basis.numpy()), _projection(_orth(A[0])), rtol=0, atol=1e-13)


def test_principal_angles_refusals(rng):
    with pytest.raises(ValueError, match="the same number of rows"):
        principal_angles(rng.standard_normal((5, 2)), rng.standard_normal((6, 2)))
    with pytest.raises(ValueError, match="linearly independent columns, got numerical rank 1 < 2"):
        principal_angles(np.ones((5, 2)), rng.standard_normal((5, 2)))
    with pytest.raises(ValueError, match="B must have linearly independent columns"):
        principal_angles(rng.standard_normal((5, 2)), np.zeros((5, 1)))
    with pytest.raises(ValueError, match="must be a non-empty matrix or stack of matrices"):
        principal_angles(np.zeros((5, 0)), rng.standard_normal((5, 2)))
    with pytest.raises(ValueError, match=r"A must have at least 2 dimensions, got shape \(5,\)"):
        principal_angles(np.ones(5), np.ones((5, 1)))


# ---------------------------------------------------------------------------------------------------------------
# 2. Closed forms
# ---------------------------------------------------------------------------------------------------------------


def test_equal_and_orthogonal_subspaces(rng):
    e = np.eye(6)
    # equal planes: the sines are exactly 0 for the coordinate basis; for a random basis they are rounding (~eps)
    assert principal_angles(e[:, :3], e[:, :3]).tolist() == [0.0, 0.0, 0.0]
    W = rng.standard_normal((6, 3))
    assert np.max(principal_angles(W, W @ rng.standard_normal((3, 3)))) < 1e-13  # ~cond·eps, cond of order 10
    # orthogonal planes: cosines are exactly 0, arccos(0) = π/2 up to its last bit
    np.testing.assert_allclose(principal_angles(e[:, :2], e[:, 2:5]), [np.pi / 2] * 2, rtol=0, atol=1e-15)
    Q = scipy.stats.ortho_group.rvs(6, random_state=1)  # the same, in a random orthonormal frame
    np.testing.assert_allclose(principal_angles(Q[:, :2], Q[:, 2:5]), [np.pi / 2] * 2, rtol=0, atol=1e-14)


def test_one_shared_direction_and_a_known_angle():
    e = np.eye(5)
    # both sides of the switch between the sine and cosine routes (cos²θ = 1/2 at π/4), and next to π/2
    for t in (0.3, math.pi / 4 - 1e-9, math.pi / 4, math.pi / 4 + 1e-9, 1.0, 1.5, math.pi / 2 - 1e-10):
        B = np.stack([e[:, 0], math.cos(t) * e[:, 1] + math.sin(t) * e[:, 2]], axis=1)
        # closed form [0, t]; the input holds cos t, sin t rounded, so the angle is t to a few ulps
        np.testing.assert_allclose(principal_angles(e[:, :2], B), [0.0, t], rtol=1e-14, atol=1e-15)
    # a line at 45° to a 3-space, different dimensions: one angle, π/4
    line = (e[:, 0] + e[:, 3])[:, None]
    np.testing.assert_allclose(principal_angles(e[:, :3], line), [np.pi / 4], rtol=1e-14)
    np.testing.assert_allclose(principal_angles(line, e[:, :3]), [np.pi / 4], rtol=1e-14)


@pytest.mark.parametrize("t", [1e-4, 1e-9, 1e-12])
@pytest.mark.parametrize("orthonormal", [True, False])
def test_tiny_angles_come_from_sines(t, orthonormal):
    e = np.eye(4)
    A = e[:, :2]
    B = np.stack([e[:, 0], math.cos(t) * e[:, 1] + math.sin(t) * e[:, 2]], axis=1)
    theta = principal_angles(A, B, orthonormal=orthonormal)
    # the sine route reads t from sin t (exact to rounding): relative 1e-6 is generous (a few ulps are expected).
    # With orthonormal=False an SVD first re-orthonormalises the columns; here it keeps the exact zeros of these
    # coordinate inputs, but in general its forward error is ~eps absolute, hence the extra 4·eps allowed there
    assert theta[0] == pytest.approx(0.0, abs=1e-15)
    assert abs(theta[1] - t) <= 1e-6 * t + (0 if orthonormal else 4 * EPS)
    # the naive route, arccos of the cosines: cos t rounds to 1 - t²/2, which is 1 for t < 1.5e-8
    naive = np.sort(np.arccos(np.clip(np.linalg.svd(A.T @ B, compute_uv=False), 0.0, 1.0)))
    if t < 1e-8:
        assert naive[1] == 0.0 or abs(naive[1] - t) > 0.5 * t
    else:  # at 1e-4 the cosine still carries ~8 digits of t²: arccos is right to about 1e-8 relative only
        assert abs(naive[1] - t) < 1e-6 * t


@pytest.mark.parametrize("t", [1e-9, 1e-12])
def test_tiny_angles_in_a_random_frame_are_accurate_to_eps(t):
    """The same pair turned by random orthogonal maps: the angle keeps an absolute accuracy of a few eps."""
    e = np.eye(6)
    for seed in range(5):
        R = scipy.stats.ortho_group.rvs(6, random_state=seed)
        A = R @ e[:, :2]
        B = R @ np.stack([e[:, 0], math.cos(t) * e[:, 1] + math.sin(t) * e[:, 2]], axis=1)
        for orthonormal in (True, False):
            theta = principal_angles(A, B, orthonormal=orthonormal)
            # the rotated inputs carry rounding of ~eps per entry, so the angles do too; 2e-15 ≈ 9 eps of margin
            assert abs(theta[0]) < 2e-15 and abs(theta[1] - t) < 2e-15
        # the naive route's cosines are 1 − O(eps): arccos returns 0 or some multiple of √eps ≈ 1.5e-8
        naive = np.sort(np.arccos(np.clip(np.linalg.svd(A.T @ B, compute_uv=False), 0.0, 1.0)))
        assert naive[1] == 0.0 or abs(naive[1] - t) > 0.5 * t


# ---------------------------------------------------------------------------------------------------------------
# 3. Gauge invariance
# ---------------------------------------------------------------------------------------------------------------


def _conditioned(rng, k, cond):
    """A random k×k matrix with singular values log-spaced from 1 to 1/cond."""
    U, V = scipy.stats.ortho_group.rvs(k, random_state=rng), scipy.stats.ortho_group.rvs(k, random_state=rng)
    return U @ np.diag(np.logspace(0, -math.log10(cond), k)) @ V.T


@pytest.mark.parametrize("cond", [10.0, 1e6])
def test_the_gauge_W_to_WG_moves_no_angle(rng, cond):
    n, p, q = 12, 4, 3
    W, B = rng.standard_normal((n, p)), rng.standard_normal((n, q))
    G = _conditioned(rng, p, cond)
    kappa = np.linalg.cond(W @ G)
    # the orthonormal basis of WG is perturbed by ~κ(WG)·eps (the SVD's forward error on the column space);
    # 100·κ·eps is that bound with a margin for the small constants of n and p
    tol = 100 * kappa * EPS
    np.testing.assert_allclose(principal_angles(W @ G, B), principal_angles(W, B), rtol=0, atol=tol)
    assert np.max(principal_angles(W, W @ G)) < tol
    for metric in GRASSMANN_METRICS:  # each distance is at most √2·‖θ‖₂ ≤ √(2q)·max θ for these tiny angles
        assert float(grassmann_distance(W, W @ G, metric)) < math.sqrt(2 * p) * tol


@pytest.mark.parametrize("cond", [10.0, 1e6])
def test_the_head_gauge_leaves_scores_and_subspaces(rng, cond):
    H, D, d = 3, 16, 4
    mha = random_multihead(rng, H, D, d)
    G = np.stack([_conditioned(rng, d, cond) for _ in range(H)])
    G_inv_T = np.swapaxes(np.linalg.inv(G), -1, -2)
    gauged = MultiHeadAttention(mha.W_Q @ G, mha.W_K @ G_inv_T, mha.W_V, mha.W_O)
    X = rng.standard_normal((6, D))
    for h in range(H):
        before, after = mha.head(h).scores(X), gauged.head(h).scores(X)
        # X W_Q G G⁻¹ W_Kᵀ Xᵀ: the product G G⁻¹ is I to ~κ(G)·eps; 100·κ·eps relative to the scale of the scores
        np.testing.assert_allclose(after, before, rtol=0, atol=100 * cond * EPS * np.abs(before).max())
    s0, s1 = head_subspaces(mha), head_subspaces(gauged)
    assert s1.deficient == [] and s1.ranks == s0.ranks
    # bases of W G against those of W: the column spaces agree to ~κ(W_Q G)·eps ≤ 100·cond·eps (κ(W_Q) ≈ 3)
    tol = 1000 * cond * EPS
    for name in ("Q", "K"):
        for h in range(H):
            assert np.max(principal_angles(s0.bases[name][h], s1.bases[name][h], orthonormal=True)) < tol
        np.testing.assert_allclose(
            head_subspace_distances(s1, name), head_subspace_distances(s0, name), rtol=0, atol=2 * tol
        )
    for name in ("V", "O"):  # untouched maps: identical input, identical output
        np.testing.assert_array_equal(head_subspace_distances(s1, name), head_subspace_distances(s0, name))


# ---------------------------------------------------------------------------------------------------------------
# 4. Distances
# ---------------------------------------------------------------------------------------------------------------


def _grassmann_log(Q1, Q2):
    """The tangent vector at col Q1 pointing to col Q2 (Edelman, Arias & Smith 1998, §2.5.1): U atan(Σ) Vᵀ."""
    M = Q1.T @ Q2
    U, s, Vt = np.linalg.svd((Q2 - Q1 @ M) @ np.linalg.inv(M), full_matrices=False)
    return U @ np.diag(np.arctan(s)) @ Vt


def _dense_distance(Q1, Q2, metric):
    """Every distance from matrices, not from angles (equal dimensions)."""
    P = _projection(Q1) - _projection(Q2)
    if metric == "geodesic":
        return np.linalg.norm(_grassmann_log(Q1, Q2))
    if metric == "chordal":
        return np.linalg.norm(P) / math.sqrt(2)
    if metric == "projection":
        return np.linalg.norm(P)
    if metric == "spectral":
        return np.linalg.norm(P, 2)
    if metric == "procrustes":  # min over orthogonal R of ‖Q1 R − Q2‖_F is the two-sided min over U, V
        R, _ = scipy.linalg.orthogonal_procrustes(Q1, Q2)
        return np.linalg.norm(Q1 @ R - Q2)
    assert metric == "fubini-study"
    return math.acos(min(1.0, abs(np.linalg.det(Q1.T @ Q2))))


@pytest.mark.parametrize("metric", GRASSMANN_METRICS)
def test_every_distance_is_its_dense_formula(rng, metric):
    for n, k in [(7, 3), (10, 2), (5, 1)]:
        for _ in range(4):
            Q1, Q2 = _orth(rng.standard_normal((n, k))), _orth(rng.standard_normal((n, k)))
            d = float(grassmann_distance(Q1, Q2, metric))
            # oracle: a dense matrix formula; all are well conditioned away from coincident subspaces (random
            # planes here), so 1e-11 relative covers the rounding of norms, determinants and SVDs of order 1
            assert d == pytest.approx(_dense_distance(Q1, Q2, metric), rel=1e-11, abs=1e-13)
            # symmetric
            assert float(grassmann_distance(Q2, Q1, metric)) == pytest.approx(d, rel=1e-12, abs=1e-14)
    # geodesic also from scipy's angles (a second oracle, no logarithm)
    if metric == "geodesic":
        A, B = rng.standard_normal((9, 4)), rng.standard_normal((9, 4))
        assert float(grassmann_distance(A, B)) == pytest.approx(np.linalg.norm(_scipy_angles(A, B)), rel=1e-12)


def test_distances_between_subspaces_of_different_dimensions(rng):
    """Ye & Lim's convention: the m = min(p, q) angles; the chordal distance is then ‖sin θ‖ from scipy's angles."""
    A, B = rng.standard_normal((9, 2)), rng.standard_normal((9, 5))
    theta = _scipy_angles(A, B)
    assert float(grassmann_distance(A, B, "chordal")) == pytest.approx(np.linalg.norm(np.sin(theta)), rel=1e-11)
    assert float(grassmann_distance(A, B, "spectral")) == pytest.approx(np.sin(theta.max()), rel=1e-11)
    # a subspace of a larger one is at distance 0 from it (sines of rounding only)
    assert float(grassmann_distance(B[:, :2], B)) < 1e-13


@pytest.mark.parametrize("metric", GRASSMANN_METRICS)
def test_the_triangle_inequality_on_random_triples(rng, metric):
    """Each is a metric on Gr(k, n); seeded triples, near and far (a base point and two small perturbations)."""
    for trial in range(150):
        n, k = (4, 2) if trial % 2 else (6, 3)
        Y = rng.standard_normal((3, n, k))
        if trial % 3 == 0:
            Y[1:] = Y[0] + 0.05 * rng.standard_normal((2, n, k))
        d = [float(grassmann_distance(Y[i], Y[j], metric)) for i, j in ((0, 1), (1, 2), (0, 2))]
        # slack 1e-12: each distance is computed to ~1e-14 absolute, so only rounding-level violations are allowed
        assert d[2] <= d[0] + d[1] + 1e-12
        assert d[0] <= d[1] + d[2] + 1e-12 and d[1] <= d[0] + d[2] + 1e-12


MAXIMA = {  # the value at m orthogonal directions (all θ = π/2), as a function of m
    "geodesic": lambda m: math.sqrt(m) * math.pi / 2,
    "chordal": lambda m: math.sqrt(m),
    "projection": lambda m: math.sqrt(2 * m),
    "procrustes": lambda m: math.sqrt(2 * m),
    "spectral": lambda m: 1.0,
    "fubini-study": lambda m: math.pi / 2,
}


@pytest.mark.parametrize("metric", GRASSMANN_METRICS)
def test_metric_ranges_and_their_maxima(rng, metric):
    m = 3
    theta = random_principal_angles(8, m, samples=200, seed=5)
    d = distance_from_angles(theta, metric)
    assert d.shape == (200,)
    # each is increasing in every θ_i, so the value at θ = π/2 bounds it; 1e-12 for the rounding of the maximum
    assert np.all(d >= 0) and np.all(d <= MAXIMA[metric](m) + 1e-12)
    assert float(distance_from_angles(np.full(m, np.pi / 2), metric)) == pytest.approx(MAXIMA[metric](m), rel=1e-15)
    assert float(distance_from_angles(np.zeros(m), metric)) == 0.0


def test_fubini_study_keeps_its_digits_for_tiny_angles():
    """arccos Π cos θ would return 0 for θ = 1e-9; the distance is ‖θ‖ to first order (relative θ² error)."""
    theta = np.array([1e-9, 2e-9])
    assert float(distance_from_angles(theta, "fubini-study")) == pytest.approx(math.sqrt(5) * 1e-9, rel=1e-6)


def test_distance_refusals():
    with pytest.raises(ValueError, match="metric must be one of"):
        distance_from_angles(np.zeros(2), "cosine")
    with pytest.raises(ValueError, match="metric must be one of"):
        grassmann_distance(np.eye(3)[:, :1], np.eye(3)[:, 1:2], "euclid")
    with pytest.raises(ValueError, match=r"principal angles in \[0, π/2\]"):
        distance_from_angles(np.array([0.1, 2.0]))
    with pytest.raises(ValueError, match=r"principal angles in \[0, π/2\]"):
        distance_from_angles(np.array([-0.1]))


# ---------------------------------------------------------------------------------------------------------------
# 5. subspace_basis
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "p", "r"), [(8, 5, 2), (6, 6, 3), (7, 3, 1), (5, 4, 4)])
def test_subspace_basis_finds_the_rank_and_spans_the_column_space(rng, n, p, r):
    A = rng.standard_normal((n, r))
    W = A @ rng.standard_normal((r, p))  # rank r exactly in exact arithmetic
    # the rounding residue of the product leaves σ_{r+1} ≲ 0.2 · max(n, p)·eps·σ_1 (worst of 1,500 draws of these
    # shapes), so the default threshold separates it from σ_r = O(1) with a margin of 5 or more
    s = subspace_basis(W)
    assert isinstance(s, Subspace)
    assert (s.rank, s.columns, s.deficient) == (r, p, r < p)
    assert s.basis.shape == (n, r) and s.singular_values.shape == (min(n, p),)
    # orthonormal to rounding, and the projection onto col W is A A⁺ (both well conditioned: 1e-13 absolute)
    np.testing.assert_allclose(s.basis.T @ s.basis, np.eye(r), rtol=0, atol=1e-13)
    np.testing.assert_allclose(_projection(s.basis), A @ np.linalg.pinv(A), rtol=0, atol=1e-13)


def test_subspace_basis_rtol_decides_the_rank(rng):
    U = _orth(rng.standard_normal((6, 3)))
    V = _orth(rng.standard_normal((3, 3)))
    W = U @ np.diag([1.0, 1e-3, 1e-9]) @ V.T
    assert subspace_basis(W).rank == 3  # default 6·eps ≈ 1.3e-15 keeps 1e-9
    assert subspace_basis(W, rtol=1e-6).rank == 2
    assert subspace_basis(W, rtol=1e-2).rank == 1
    assert subspace_basis(W, rtol=0).rank == 3  # strictly above 0
    assert subspace_basis(W, rtol=0.5).rank == 1  # the largest singular value always counts


def test_subspace_basis_refusals():
    with pytest.raises(ValueError, match=r"W must have at least one row and one column, got shape \(0, 3\)"):
        subspace_basis(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="W must be nonzero to span a subspace, got a zero matrix of shape"):
        subspace_basis(np.zeros((4, 2)))
    for bad in (1.0, -0.1, np.nan):
        with pytest.raises(ValueError, match=r"rtol must be in \[0, 1\)"):
            subspace_basis(np.eye(3), rtol=bad)
    for bad, kind in ((True, "bool"), ("1e-8", "str")):
        with pytest.raises(TypeError, match=f"rtol must be a real number, got {kind}"):
            subspace_basis(np.eye(3), rtol=bad)
    with pytest.raises(ValueError, match="W must be a 2-dimensional array"):
        subspace_basis(np.ones((2, 3, 3)))
    with pytest.raises(ValueError, match="W must be finite"):
        subspace_basis(np.array([[1.0, np.nan]]))


# ---------------------------------------------------------------------------------------------------------------
# 6. grassmann_dimension and projection_differential
# ---------------------------------------------------------------------------------------------------------------


def test_grassmann_dimension():
    assert [grassmann_dimension(n, k) for n, k in [(384, 32), (5, 2), (4, 0), (4, 4), (1, 1)]] == [11264, 6, 0, 0, 0]
    with pytest.raises(ValueError, match=r"k must be an integer in \[0, 3\]"):
        grassmann_dimension(3, 4)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        grassmann_dimension(0, 0)


def _P(Y):
    return Y @ np.linalg.pinv(Y)


@pytest.mark.parametrize(("n", "k"), [(5, 2), (6, 3), (7, 1), (4, 3)])
def test_projection_differential_is_the_finite_difference_jacobian(rng, n, k):
    Y = rng.standard_normal((n, k))
    J = projection_differential(Y)
    assert J.shape == (n * n, n * k)
    h = 1e-5
    fd = np.empty_like(J)
    for col in range(n * k):
        E = np.zeros(n * k)
        E[col] = h
        E = E.reshape(n, k)  # row-major vec of Y
        fd[:, col] = ((_P(Y + E) - _P(Y - E)) / (2 * h)).ravel()  # row-major vec of P
    # central differences: truncation h²·‖P'''‖ ~ 1e-10 plus rounding eps/h ~ 1e-11 (P of order 1, κ(Y) small);
    # relative 1e-8 of ‖J‖ is ~100× above both
    assert np.linalg.norm(fd - J) <= 1e-8 * np.linalg.norm(J)


@pytest.mark.parametrize(("n", "k"), [(5, 2), (6, 3), (7, 1), (8, 4)])
def test_projection_differential_has_rank_k_times_n_minus_k(rng, n, k):
    Y = rng.standard_normal((n, k))
    J = projection_differential(Y)
    s = np.linalg.svd(J, compute_uv=False)
    dim = grassmann_dimension(n, k)
    # a clean gap: the dim-th singular value is O(1) (κ(Y) small), the next ones are rounding (1e-15·‖J‖ scale;
    # 1e-12 leaves a margin), so the numerical rank is unambiguous
    assert s[dim - 1] > 1e-2 * s[0]
    assert s[dim] < 1e-12 * s[0]
    assert int(np.linalg.matrix_rank(J)) == dim
    # its kernel holds the gauge directions dY = Y B (P depends on col Y only)
    for _ in range(3):
        dY = Y @ rng.standard_normal((k, k))
        assert np.linalg.norm(J @ dY.ravel()) < 1e-13 * np.linalg.norm(J, 2) * np.linalg.norm(dY)


def test_projection_differential_refuses_dependent_columns():
    with pytest.raises(ValueError, match="Y must have linearly independent columns"):
        projection_differential(np.ones((4, 2)))


# ---------------------------------------------------------------------------------------------------------------
# 7. Random subspaces
# ---------------------------------------------------------------------------------------------------------------

#: KS p-value threshold of the exact laws.  With a fixed seed each test is deterministic; under the null the
#: p-value is uniform, so 1e-3 rejects a correct implementation for one seed in a thousand (checked: it passes),
#: and a different BLAS changes samples in their last bits only, far too little to move the statistic across it.
KS_P = 1e-3


def test_random_subspaces_are_orthonormal_bases():
    Q = random_subspaces(9, 3, samples=5, seed=0)
    assert Q.shape == (5, 9, 3)
    np.testing.assert_allclose(np.swapaxes(Q, -1, -2) @ Q, np.broadcast_to(np.eye(3), (5, 3, 3)), atol=1e-14)
    np.testing.assert_array_equal(random_subspaces(9, 3, samples=5, seed=0), Q)  # seeded
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 9\]"):
        random_subspaces(9, 10)
    with pytest.raises(ValueError, match="over the budget"):
        random_subspaces(2**14, 2**10, samples=16)


@pytest.mark.parametrize(("n", "l"), [(10, 3), (7, 1), (20, 12)])
def test_a_random_line_has_beta_distributed_cos_squared(n, l):  # noqa: E741
    law = scipy.stats.beta(l / 2, (n - l) / 2)
    # against a fixed l-plane (the first l coordinates)
    lines = random_subspaces(n, 1, samples=3000, seed=11)
    fixed = np.eye(n)[:, :l]
    cos2 = np.cos(principal_angles(lines, fixed[None], orthonormal=True)[:, 0]) ** 2
    assert scipy.stats.kstest(cos2, law.cdf).pvalue > KS_P
    # against a random l-plane
    cos2 = np.cos(random_principal_angles(n, 1, l, samples=3000, seed=12)[:, 0]) ** 2
    assert scipy.stats.kstest(cos2, law.cdf).pvalue > KS_P


@pytest.mark.parametrize(("n", "k", "l"), [(12, 3, 5), (20, 4, 4), (9, 6, 2)])
def test_the_mean_squared_cosine_is_max_k_l_over_n(n, k, l):  # noqa: E741
    theta = random_principal_angles(n, k, l, samples=2000, seed=3)
    per_pair = np.mean(np.cos(theta) ** 2, axis=-1)
    se = per_pair.std(ddof=1) / math.sqrt(per_pair.size)
    # E tr P1P2 = kl/n exactly, over min(k, l) angles; 5 standard errors (estimated from the sample)
    assert abs(per_pair.mean() - max(k, l) / n) < 5 * se


@pytest.mark.parametrize(("n", "k", "l"), [(20, 3, 5), (12, 5, 2)])
def test_the_jacobi_sampler_has_the_law_of_principal_angles_of_random_subspaces(n, k, l):  # noqa: E741
    """random_principal_angles (eigenvalues of an l × l Jacobi matrix) against principal_angles of two Haar planes."""
    jacobi = random_principal_angles(n, k, l, samples=3000, seed=31)
    first, second = random_subspaces(n, k, samples=3000, seed=32), random_subspaces(n, l, samples=3000, seed=33)
    direct = principal_angles(first, second, orthonormal=True)
    assert jacobi.shape == direct.shape == (3000, min(k, l))
    for i in range(min(k, l)):  # each ordered angle: two-sample KS, threshold KS_P
        assert scipy.stats.ks_2samp(jacobi[:, i], direct[:, i]).pvalue > KS_P


def test_the_jacobi_sampler_with_k_plus_l_beyond_n():
    """Two random 4-planes of R^6 share a 2-plane: the sampler reads those angles from cosines of 1 − O(eps), so
    they are 0 to √(rounding) only (≲ 3e-7 over these 2,000 draws; 1e-5 allows a κ(G)·eps 1000× larger)."""
    theta = random_principal_angles(6, 4, 4, samples=2000, seed=1)
    assert np.max(theta[:, :2]) < 1e-5
    assert np.min(theta[:, 2:]) > 1e-4  # the others are generic


def test_the_law_of_angles_is_invariant_under_an_orthogonal_map():
    n, k = 10, 3
    R = scipy.stats.ortho_group.rvs(n, random_state=4)
    E = np.eye(n)[:, :k]
    plain = principal_angles(random_subspaces(n, k, samples=2000, seed=21), E[None], orthonormal=True)
    turned = principal_angles(R @ random_subspaces(n, k, samples=2000, seed=22), E[None], orthonormal=True)
    for i in range(k):  # each ordered angle has the same law (two-sample KS, threshold KS_P)
        assert scipy.stats.ks_2samp(plain[:, i], turned[:, i]).pvalue > KS_P
    # and, deterministically, turning both subspaces changes no angle (the function is O(n)-invariant)
    A, B = random_subspaces(n, k, samples=3, seed=1), random_subspaces(n, 4, samples=3, seed=2)
    np.testing.assert_allclose(principal_angles(R @ A, R @ B), principal_angles(A, B), rtol=0, atol=ATOL_ANGLES)


# ---------------------------------------------------------------------------------------------------------------
# 8. WachterLaw
# ---------------------------------------------------------------------------------------------------------------

LAWS = [(384, 32, 32), (100, 10, 30), (50, 20, 30), (40, 7, 5), (12, 6, 6)]


@pytest.mark.parametrize(("n", "p", "q"), LAWS)
def test_wachter_density_mass_mean_and_support(n, p, q):
    law = WachterLaw(n, p, q)
    a, b = min(p, q) / n, max(p, q) / n
    assert law.ratios == (a, b)
    low, high = law.support
    # closed form of the edges, expanded: α + β − 2αβ ± 2√(αβ(1−α)(1−β)) (rounding of a few terms: 1e-14)
    centre, half = a + b - 2 * a * b, 2 * math.sqrt(a * b * (1 - a) * (1 - b))
    assert low == pytest.approx(centre - half, abs=1e-14)
    assert high == pytest.approx(centre + half, rel=1e-14)
    assert 0 <= low < high <= 1
    # quadrature of a density with square-root (or 1/√x at λ₋ = 0) endpoints: 1e-8 is far above its error
    assert quad(law.pdf, low, high, limit=200)[0] == pytest.approx(1.0, abs=1e-8)
    assert law.mean() == pytest.approx(b, abs=1e-8)  # closed form: the mean is β
    assert float(law.pdf(low - 1e-3)) == 0.0 and float(law.pdf(high + 1e-3)) == 0.0
    grid = np.linspace(low, high, 25)
    F = np.array([law.cdf(x) for x in grid])
    assert F[0] == 0.0 and F[-1] == 1.0 and law.cdf(high + 1) == 1.0 and law.cdf(low - 1) == 0.0
    assert np.all(np.diff(F) > 0)  # strictly increasing on the support (the density is positive inside)


def test_wachter_closed_values():
    law = WachterLaw(384, 32, 32)
    assert law.support[1] == pytest.approx(11 / 36, rel=1e-15)  # α = β = 1/12: λ₊ = 4α(1 − α)
    assert math.degrees(law.smallest_angle()) == pytest.approx(math.degrees(math.acos(math.sqrt(11 / 36))))
    assert WachterLaw(10, 7, 3).ratios == (0.3, 0.7)  # p ≤ q arranged
    assert WachterLaw(10, 5, 5).support[1] == pytest.approx(1.0, rel=1e-15)  # α + β = 1 reaches 1
    with pytest.raises(ValueError, match=r"p \+ q must be at most n .* got p=6, q=5, n=10"):
        WachterLaw(10, 6, 5)
    with pytest.raises(ValueError, match=r"p must be an integer in \[1, 10\]"):
        WachterLaw(10, 0, 5)


def _ks_bounds(x, law, m=150):
    """Lower and upper bounds of sup |F_emp − F| from F at m sample quantiles (F and F_emp both monotone)."""
    x = np.sort(x)
    low, high = law.support
    g = np.clip(np.quantile(x, np.linspace(0, 1, m)), low, high)
    F = np.array([law.cdf(v) for v in g])
    E = np.searchsorted(x, g, side="right") / x.size
    g = np.r_[min(x[0], low) - 1, g, max(x[-1], high) + 1]
    F, E = np.r_[0.0, F, 1.0], np.r_[0.0, E, 1.0]
    lower = np.max(np.abs(E - F))
    # between consecutive points g_j < g_{j+1} both functions are monotone, which bounds the gap by the corners
    upper = max(np.max(E[1:] - F[:-1]), np.max(F[1:] - E[:-1]))
    return lower, upper


def test_random_cosines_follow_wachter_and_converge():
    """Squared cosines of random head-sized planes at α = β = 1/12 against the limit CDF, n = 48 … 384.

    The KS distance at finite n is a finite-size bias (bulk O(1/n), edge fluctuations on a window ~n^{-2/3})
    plus the sampling error of ~24,000 pooled values (~0.006 typical); 0.05 at n = 384 is well above both.
    The distance falls as n grows (fixed seed: a deterministic rate check; the fitted slope is about −0.8).
    """
    sizes, distances = [48, 96, 192, 384], []
    for n in sizes:
        k = n // 12
        x = np.cos(random_principal_angles(n, k, samples=24000 // k, seed=7)).ravel() ** 2
        lower, upper = _ks_bounds(x, WachterLaw(n, k, k))
        assert upper - lower < 0.02  # the bounds are tight enough to read a rate from
        distances.append(lower)
    assert upper < 0.05  # n = 384, p = q = 32, 750 pairs
    slope = np.polyfit(np.log(sizes), np.log(distances), 1)[0]
    assert slope < -0.3
    assert distances[-1] < distances[0] / 2


def test_random_cosines_of_unequal_planes_follow_wachter():
    """α = 1/12 ≠ β = 5/12 (λ₋ > 0, the asymmetric form of the density): 6,000 pooled squared cosines.

    Sampling error ~0.011 typical for 6,000 values, finite-size bias of order 1/n; 0.04 leaves a margin of ~3.
    """
    n, p, q = 240, 20, 100
    x = np.cos(random_principal_angles(n, p, q, samples=300, seed=8)).ravel() ** 2
    lower, upper = _ks_bounds(x, WachterLaw(n, p, q))
    assert upper < 0.04
    assert lower <= upper


# ---------------------------------------------------------------------------------------------------------------
# 9. head_subspaces
# ---------------------------------------------------------------------------------------------------------------


def test_head_subspaces_shapes_and_ranks(rng):
    mha = random_multihead(rng, 4, 16, 4, d_value=6)
    s = head_subspaces(mha)
    assert (s.n_heads, s.d_model, s.d_head, s.dimension, s.deficient) == (4, 16, 4, 48, [])
    assert s.widths == {"Q": 4, "K": 4, "V": 6, "O": 6}
    assert s.ranks == {"Q": (4,) * 4, "K": (4,) * 4, "V": (6,) * 4, "O": (6,) * 4}
    for name, width in s.widths.items():
        for h in range(4):
            Q = s.bases[name][h]
            assert Q.shape == (16, width)
            np.testing.assert_allclose(Q.T @ Q, np.eye(width), rtol=0, atol=1e-13)  # orthonormal to rounding
    # O is the row space of W_O: the same projection as the column space of W_Oᵀ, and as its own pinv formula
    for h in range(4):
        W_Ot = mha.W_O[h].T
        np.testing.assert_allclose(_projection(s.bases["O"][h]), W_Ot @ np.linalg.pinv(W_Ot), rtol=0, atol=1e-13)
        np.testing.assert_allclose(
            _projection(s.bases["O"][h]), _projection(subspace_basis(W_Ot).basis), rtol=0, atol=1e-13
        )
        np.testing.assert_allclose(
            _projection(s.bases["Q"][h]), _projection(subspace_basis(mha.W_Q[h]).basis), rtol=0, atol=1e-13
        )


def test_head_subspaces_reports_rank_deficient_maps(rng):
    mha = random_multihead(rng, 3, 12, 4)
    W_Q, W_V = mha.W_Q.copy(), mha.W_V.copy()
    W_Q[1][:, 3] = W_Q[1][:, 0]  # two equal columns: rank 3
    W_V[2][:, 1] = 0.0  # a zero column: rank 3
    W_V[2][:, 2] = 2 * W_V[2][:, 0]  # and a multiple: rank 2
    s = head_subspaces(MultiHeadAttention(W_Q, mha.W_K, W_V, mha.W_O))
    assert s.ranks["Q"] == (4, 3, 4) and s.ranks["V"] == (4, 4, 2)
    assert s.deficient == [("Q", 1, 3), ("V", 2, 2)]
    assert s.bases["Q"][1].shape == (12, 3)
    # the deficient basis spans col W_Q[1] (projection of its independent columns, 1e-13 as above)
    W = W_Q[1][:, :3]
    np.testing.assert_allclose(_projection(s.bases["Q"][1]), W @ np.linalg.pinv(W), rtol=0, atol=1e-13)
    # rtol is passed through: the ranks are subspace_basis's at that threshold (σ_i > 0.5·σ_1 keeps fewer)
    loose = head_subspaces(mha, rtol=0.5).ranks["Q"]
    assert loose == tuple(subspace_basis(W, rtol=0.5).rank for W in mha.W_Q)
    assert all(1 <= r <= 4 for r in loose)


def test_head_subspaces_of_torch_weights_are_the_numpy_ones():
    pytest.importorskip("torch")
    numpy_mha = random_multihead(np.random.default_rng(9), 3, 10, 3)
    torch_mha = random_multihead(np.random.default_rng(9), 3, 10, 3, backend="torch:cpu")
    s0, s1 = head_subspaces(numpy_mha), head_subspaces(torch_mha)
    assert s1.ranks == s0.ranks
    for name in ("Q", "K", "V", "O"):
        for h in range(3):
            assert isinstance(s1.bases[name][h], np.ndarray)
            # the same float64 weights (one seeded draw order), read on the host: the same projections to rounding
            np.testing.assert_allclose(
                _projection(s1.bases[name][h]), _projection(s0.bases[name][h]), rtol=0, atol=1e-14
            )


def test_head_subspaces_refusals(rng):
    mha = random_multihead(rng, 2, 8, 2)
    with pytest.raises(TypeError, match="attention must be a MultiHeadAttention, got AttentionHead"):
        head_subspaces(mha.head(0))
    with pytest.raises(TypeError, match=r"subspaces must be a HeadSubspaces \(from head_subspaces\), got dict"):
        head_subspace_angles({"Q": ()})
    with pytest.raises(TypeError, match="subspaces must be a HeadSubspaces"):
        head_subspace_distances(mha)
    s = head_subspaces(mha)
    with pytest.raises(ValueError, match="map must be one of"):
        head_subspace_distances(s, "W")
    with pytest.raises(ValueError, match="metric must be one of"):
        head_subspace_distances(s, "Q", "cosine")


# ---------------------------------------------------------------------------------------------------------------
# 10. head_subspace_distances
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["geodesic", "chordal", "spectral"])
def test_head_subspace_distances_are_a_pair_loop_with_scipy(rng, metric):
    mha = random_multihead(rng, 5, 20, 4)
    s = head_subspaces(mha)
    for name in ("Q", "O"):
        D = head_subspace_distances(s, name, metric)
        assert D.shape == (5, 5)
        np.testing.assert_array_equal(D, D.T)
        assert np.all(np.diag(D) == 0)
        weights = mha.W_Q if name == "Q" else np.swapaxes(mha.W_O, -1, -2)
        for a in range(5):
            for b in range(5):
                if a != b:
                    theta = _scipy_angles(weights[a], weights[b])
                    # oracle: scipy's angles fed to the closed form; ATOL_ANGLES propagated through a norm
                    assert D[a, b] == pytest.approx(float(distance_from_angles(theta, metric)), abs=10 * ATOL_ANGLES)
    angles = head_subspace_angles(s, "Q")
    assert max(float(np.max(angles[h][h])) for h in range(5)) < 1e-12  # a subspace with itself: rounding only


def test_heads_sharing_a_query_map_sit_at_distance_zero(rng):
    mha = random_multihead(rng, 4, 16, 4)
    W_Q = mha.W_Q.copy()
    W_Q[2] = W_Q[0] @ _conditioned(rng, 4, 10.0)  # the same query subspace, another parameterisation
    W_Q[3] = W_Q[1]
    D = head_subspace_distances(head_subspaces(MultiHeadAttention(W_Q, mha.W_K, mha.W_V, mha.W_O)))
    assert D[0, 2] < 1e-13 and D[1, 3] < 1e-14  # sines of rounding, times κ(G) = 10 for the first
    assert min(D[0, 1], D[0, 3], D[1, 2], D[2, 3]) > 0.5  # independent heads are far apart


def test_head_subspace_distances_with_mixed_ranks_use_the_pair_path(rng):
    mha = random_multihead(rng, 3, 10, 3)
    W_Q = mha.W_Q.copy()
    W_Q[1][:, 2] = W_Q[1][:, 0] + W_Q[1][:, 1]  # rank 2 among rank-3 heads
    s = head_subspaces(MultiHeadAttention(W_Q, mha.W_K, mha.W_V, mha.W_O))
    assert s.ranks["Q"] == (3, 2, 3)
    angles = head_subspace_angles(s)
    assert [len(angles[0][b]) for b in range(3)] == [3, 2, 3]
    D = head_subspace_distances(s)
    for a, b in ((0, 1), (0, 2), (1, 2)):
        theta = _scipy_angles(s.bases["Q"][a], s.bases["Q"][b])
        assert D[a, b] == pytest.approx(np.linalg.norm(theta), abs=10 * ATOL_ANGLES)  # oracle: scipy


# ---------------------------------------------------------------------------------------------------------------
# 11. subspace_null
# ---------------------------------------------------------------------------------------------------------------


def test_subspace_null_is_cached_and_ordered():
    null = subspace_null(24, 3, samples=300, seed=2)
    assert subspace_null(24, 3, samples=300, seed=2) is null  # cached: the same object
    assert subspace_null(24, 3, samples=300, seed=3) is not null
    assert null.distances.shape == null.median_angles.shape == null.smallest_angles.shape == (300,)
    assert not null.distances.flags.writeable and not null.smallest_angles.flags.writeable
    assert np.all(null.smallest_angles <= null.median_angles)
    # the distances are the geodesic distances of the same seeded draw
    theta = random_principal_angles(24, 3, samples=300, seed=2)
    np.testing.assert_array_equal(null.distances, distance_from_angles(theta, "geodesic"))
    qs = [null.quantile(q) for q in (0.01, 0.05, 0.5, 0.95, 0.99)]
    assert qs == sorted(qs) and qs[2] == null.median
    grid = np.linspace(0, 3, 61)
    frac = null.fraction_below(grid)
    assert np.all(np.diff(frac) >= 0) and np.all((frac > 0) & (frac <= 1))
    assert float(null.fraction_below(-1.0)) == 1 / 301 and float(null.fraction_below(np.inf)) == 1.0
    # (1 + #{d_s ≤ d})/(1 + S) at a sample point: counted by hand
    d = float(np.sort(null.distances)[14])
    assert float(null.fraction_below(d)) == (1 + np.sum(null.distances <= d)) / 301


def test_subspace_null_refusals():
    with pytest.raises(ValueError, match=r"k must be an integer in \[1, 7\]"):
        subspace_null(8, 8)
    with pytest.raises(ValueError, match=r"samples must be an integer in \[1, 4096\]"):
        subspace_null(8, 2, samples=5000)
    with pytest.raises(ValueError, match="metric must be one of"):
        subspace_null(8, 2, metric="cosine")
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        subspace_null(8, 2, seed=-1)
    with pytest.raises(ValueError, match="n must be an integer >= 2"):
        subspace_null(1, 1)


# ---------------------------------------------------------------------------------------------------------------
# 12. attention_pattern_distance
# ---------------------------------------------------------------------------------------------------------------


def _random_attention(rng, shape):
    A = rng.random(shape) ** 3
    return A / A.sum(axis=-1, keepdims=True)


def _tv_loop(A, rows=None):
    """Mean over windows and rows of the total variation between two heads' rows, by loops."""
    A = A.reshape(-1, *A.shape[-3:])
    W, H, n, _ = A.shape
    rows = np.arange(n) if rows is None else np.flatnonzero(rows)
    T = np.zeros((H, H))
    for a in range(H):
        for b in range(H):
            T[a, b] = np.mean([0.5 * np.abs(A[w, a, i] - A[w, b, i]).sum() for w in range(W) for i in rows])
    return T


def test_a_delta_head_against_a_uniform_head():
    for n in (2, 5, 9):
        T = attention_pattern_distance(np.stack([np.eye(n), np.full((n, n), 1 / n)]))
        # closed form: each row is ½(|1 − 1/n| + (n − 1)/n) = 1 − 1/n (rounding of a sum of n terms)
        assert T[0, 1] == pytest.approx(1 - 1 / n, rel=1e-14) and T[0, 0] == 0.0


def test_attention_pattern_distance_is_a_pseudometric_and_the_loop(rng):
    A = _random_attention(rng, (4, 6, 7, 7))  # 4 windows, 6 heads
    T = attention_pattern_distance(A)
    np.testing.assert_array_equal(T, T.T)
    assert np.all(np.diag(T) == 0) and np.all((T >= 0) & (T <= 1))
    # oracle: the loop; sums of n bounded terms, 1e-14 absolute
    np.testing.assert_allclose(T, _tv_loop(A), rtol=0, atol=1e-14)
    # leading window axis: the mean of the per-window matrices
    np.testing.assert_allclose(T, np.mean([attention_pattern_distance(a) for a in A], axis=0), rtol=0, atol=1e-14)
    H = 6
    for a, b, c in itertools.permutations(range(H), 3):  # TV is a metric; a mean of metrics is a pseudometric
        assert T[a, c] <= T[a, b] + T[b, c] + 1e-14
    rows = np.array([False, True, True, False, True, True, False])
    np.testing.assert_allclose(attention_pattern_distance(A, rows=rows), _tv_loop(A, rows), rtol=0, atol=1e-14)
    # more leading axes are windows too
    np.testing.assert_allclose(attention_pattern_distance(A.reshape(2, 2, 6, 7, 7)), T, rtol=0, atol=1e-14)


def test_attention_pattern_distance_refusals(rng):
    A = _random_attention(rng, (3, 5, 5))
    with pytest.raises(ValueError, match="A must hold square attention matrices"):
        attention_pattern_distance(_random_attention(rng, (3, 5, 4)))
    with pytest.raises(ValueError, match=r"rows must be a boolean array of shape \(5,\), got int64"):
        attention_pattern_distance(A, rows=np.array([0, 1, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"rows must be a boolean array of shape \(5,\)"):
        attention_pattern_distance(A, rows=np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="rows must select at least one query position"):
        attention_pattern_distance(A, rows=np.zeros(5, dtype=bool))
    with pytest.raises(ValueError, match=r"A must have at least 3 dimensions, got shape \(3, 3\)"):
        attention_pattern_distance(np.eye(3))


# ---------------------------------------------------------------------------------------------------------------
# 13. mantel_test
# ---------------------------------------------------------------------------------------------------------------


def _distance_matrix(rng, h, decimals=None):
    x = rng.standard_normal((h, 2))
    D = np.linalg.norm(x[:, None] - x[None], axis=-1)
    return D if decimals is None else np.round(D, decimals)


def _exact_counts(D1, D2, groups):
    """ρ and every relabelled ρ_π (π permuting within each group), by enumeration with itertools."""
    h = D1.shape[0]
    labels = np.empty(h, dtype=int)
    for s, g in enumerate(groups):
        labels[list(g)] = s
    r, c = np.triu_indices(h, 1)
    keep = labels[r] == labels[c]
    r, c = r[keep], c[keep]
    rho = scipy.stats.spearmanr(D1[r, c], D2[r, c]).statistic
    values = []
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        perm = np.arange(h)
        for g, image in zip(groups, parts, strict=True):
            perm[list(g)] = image
        values.append(scipy.stats.spearmanr(D1[r, c], D2[perm[r], perm[c]]).statistic)
    return rho, np.array(values), r.size


#: Relabellings that tie ρ exactly (automorphisms) differ from it by rounding only; 1e-12 counts them as ties,
#: as scipy.stats.permutation_test does with its relative tolerance of 100 eps.
TIE = 1e-12


@pytest.mark.parametrize("decimals", [None, 1])  # continuous distances, and rounded ones with ties
def test_mantel_rho_is_spearman_and_the_exact_p_value_is_a_count(rng, decimals):
    for h in (4, 5, 6):
        D1, D2 = _distance_matrix(rng, h, decimals), _distance_matrix(rng, h, decimals)
        rho, null, pairs = _exact_counts(D1, D2, [tuple(range(h))])
        for alternative in ("greater", "less", "two-sided"):
            result = mantel_test(D1, D2, permutations=999, alternative=alternative)
            assert (result.pairs, result.permutations, result.exact) == (pairs, math.factorial(h), True)
            # oracle: scipy.stats.spearmanr on the upper-triangle pairs (ties averaged by both); 1e-12 for rounding
            assert result.rho == pytest.approx(rho, abs=1e-12)
            greater = np.mean(null >= rho - TIE)
            less = np.mean(null <= rho + TIE)
            expected = {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}
            # an exact p-value is a count over h! relabellings: exact up to the rounding of the division
            assert result.p_value == pytest.approx(expected[alternative], rel=1e-12)
            assert result.alternative == alternative


def test_a_monotone_transform_has_rho_one(rng):
    D = _distance_matrix(rng, 7)
    result = mantel_test(D, np.exp(D) - 1, permutations=999)
    assert result.rho == pytest.approx(1.0, abs=1e-12)
    assert not result.exact and result.permutations == 999
    # (1 + #{ρ_π ≥ 1})/(1 + 999): only the identity (and automorphisms) reach ρ = 1, and 999 draws from 7! = 5040
    # relabellings hit it a few times at most (with this seed once: 2/1000)
    assert result.p_value in {k / 1000 for k in range(1, 6)}
    assert mantel_test(D, -D + D.max(), permutations=999, alternative="less").rho == pytest.approx(-1.0, abs=1e-12)


def test_independent_matrices_give_uniform_p_values():
    """Under independence p is (nearly) uniform: over 50 seeded draws, P(p < 0.05) ≈ 0.05; 0.2 is loose."""
    rng = np.random.default_rng(77)
    p = [mantel_test(_distance_matrix(rng, 8), _distance_matrix(rng, 8), permutations=199).p_value for _ in range(50)]
    assert np.mean(np.array(p) < 0.05) < 0.2
    assert 0.3 < np.median(p) < 0.7  # the median of a uniform law is 1/2


def test_strata_keep_within_stratum_pairs_and_permutations(rng):
    strata = ["a", "a", "a", "b", "b", "b"]
    D1, D2 = _distance_matrix(rng, 6), _distance_matrix(rng, 6)
    groups = [(0, 1, 2), (3, 4, 5)]
    rho, null, pairs = _exact_counts(D1, D2, groups)
    result = mantel_test(D1, D2, strata=strata, permutations=999)
    assert pairs == 3 + 3  # the oracle keeps the within-stratum pairs only
    assert (result.pairs, result.permutations, result.exact) == (pairs, 3 * 2 * 3 * 2, True)  # Π h_s!
    assert result.rho == pytest.approx(rho, abs=1e-12)  # oracle: spearmanr on the within-stratum pairs
    assert result.p_value == pytest.approx(np.mean(null >= rho - TIE), rel=1e-12)  # oracle: the enumeration
    # between-stratum entries do not enter: replacing them changes nothing
    D2b = D2.copy()
    D2b[:3, 3:] = rng.random((3, 3))
    D2b[3:, :3] = D2b[:3, 3:].T
    other = mantel_test(D1, D2b, strata=strata, permutations=999)
    assert (other.rho, other.p_value) == (result.rho, result.p_value)
    # a singleton stratum contributes no pair and no permutation
    single = mantel_test(D1[:5, :5], D2[:5, :5], strata=[0, 0, 0, 0, 1], permutations=999)
    assert (single.pairs, single.permutations, single.exact) == (6, 24, True)
    # random relabellings within strata (4! · 4! = 576 > 199): ρ is the same, p a multiple of 1/200 near the exact
    D1, D2 = _distance_matrix(rng, 8), _distance_matrix(rng, 8)
    groups = [(0, 1, 2, 3), (4, 5, 6, 7)]
    rho, null, _ = _exact_counts(D1, D2, groups)
    sampled = mantel_test(D1, D2, strata=[0] * 4 + [1] * 4, permutations=199, seed=3)
    assert (sampled.pairs, sampled.permutations, sampled.exact) == (12, 199, False)
    assert sampled.rho == pytest.approx(rho, abs=1e-12)
    # the Monte Carlo p-value has standard error ≤ 0.5/√199 ≈ 0.035; 5 of them, deterministic with the seed
    assert abs(sampled.p_value - np.mean(null >= rho - TIE)) < 0.18


def test_strata_of_unequal_sizes(rng):
    D1, D2 = _distance_matrix(rng, 7), _distance_matrix(rng, 7)
    groups = [(0, 1, 2), (3, 4, 5, 6)]
    rho, null, _ = _exact_counts(D1, D2, groups)
    result = mantel_test(D1, D2, strata=[0, 0, 0, 1, 1, 1, 1], permutations=999)
    assert (result.pairs, result.permutations, result.exact) == (3 + 6, 3 * 2 * 24, True)  # Π h_s!
    assert result.rho == pytest.approx(rho, abs=1e-12)
    assert result.p_value == pytest.approx(np.mean(null >= rho - TIE), rel=1e-12)  # oracle: the enumeration


def test_mantel_refusals(rng):
    D = _distance_matrix(rng, 5)
    with pytest.raises(ValueError, match=r"D1 and D2 must have the same shape, got \(5, 5\) and \(4, 4\)"):
        mantel_test(D, D[:4, :4])
    asym = D.copy()
    asym[0, 1] += 1.0
    with pytest.raises(ValueError, match="D2 must be symmetric"):
        mantel_test(D, asym)
    with pytest.raises(ValueError, match="D1 must be a square distance matrix"):
        mantel_test(D[:4], D)
    with pytest.raises(ValueError, match=r"at least 3 pairs of heads \(within strata\), got 1"):
        mantel_test(D[:2, :2], D[:2, :2])
    with pytest.raises(ValueError, match=r"at least 3 pairs of heads \(within strata\), got 2"):
        mantel_test(D[:4, :4], D[:4, :4], strata=[0, 0, 1, 1])
    constant = np.ones((5, 5)) - np.eye(5)
    with pytest.raises(ValueError, match="must take at least two distinct values"):
        mantel_test(D, constant)
    with pytest.raises(ValueError, match="alternative must be one of"):
        mantel_test(D, D, alternative="bigger")
    with pytest.raises(ValueError, match=r"strata must give one label per head \(5\), got shape \(4,\)"):
        mantel_test(D, D, strata=[0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"permutations must be an integer in \[99, 1000000\]"):
        mantel_test(D, D, permutations=10)


def test_a_constant_first_matrix_is_refused_with_the_message(rng):
    with pytest.raises(ValueError, match="must take at least two distinct values"):
        mantel_test(np.ones((5, 5)) - np.eye(5), _distance_matrix(rng, 5))
