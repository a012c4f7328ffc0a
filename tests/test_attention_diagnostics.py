"""Tests of the attention diagnostics: entropy, ε_rev, ρ_skew, d_NN, β sweeps, init variance, circuits."""

import math

import numpy as np
import pytest
import scipy.spatial
import scipy.stats

from workbench.attention import (
    BetaSweep,
    beta_sweep,
    effective_neighbours,
    induction_score,
    logit_variance_at_init,
    mean_entropy,
    native_spacing,
    nearest_target_distance,
    previous_token_score,
    repeated_random_tokens,
    reversibility_residual,
    row_entropy,
    score_skew_ratio,
    uniform_entropy,
)
from workbench.backend import to_backend, to_numpy

SQRT2 = math.sqrt(2.0)


def softmax(scores, mask=None):
    z = np.where(mask, scores, -np.inf) if mask is not None else scores
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))


def uniform_causal(n):
    return causal_mask(n) / np.arange(1, n + 1)[:, None]


def random_stochastic(rng, shape, density=1.0):
    weights = rng.random(shape) * (rng.random(shape) < density)
    n = shape[-1]
    # A self-loop (aperiodic) and a one-way cycle i → i+1 (irreducible): π is unique and positive.
    weights = weights + 0.1 * np.eye(n) + 0.05 * np.roll(np.eye(n), 1, axis=1)
    return weights / weights.sum(axis=-1, keepdims=True)


def harmonic(n):
    return sum(1.0 / k for k in range(1, n + 1))


def dense_stationary(P):
    # Oracle for π: the left Perron vector from a dense eigendecomposition of Pᵀ.
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    return pi / pi.sum()


# ---- entropy -----------------------------------------------------------------------------------


def test_row_entropy_matches_scipy_and_survives_exact_zeros(rng, backend):
    # Oracle: scipy.stats.entropy (an independent implementation with 0 log 0 = 0) row by row, on a causal
    # softmax with exact zeros above the diagonal; tolerance 1e-13 (sums of 12 rounded terms).
    n = 12
    P = softmax(rng.standard_normal((n, n)), causal_mask(n))
    H = to_numpy(row_entropy(to_backend(P, backend)))
    assert np.isfinite(H).all()
    np.testing.assert_allclose(H, [scipy.stats.entropy(row) for row in P], rtol=1e-13, atol=1e-15)
    assert H[0] == 0.0  # the first causal row is one-hot


def test_uniform_heads_hit_the_closed_form_entropy(backend):
    # Oracle: H_i = log n (full) and log(i+1) (causal) in closed form; tolerance 1e-14 relative
    # (rounding of n terms p log p with p = 1/(i+1)).
    n = 9
    full = to_backend(np.full((n, n), 1.0 / n), backend)
    np.testing.assert_allclose(to_numpy(row_entropy(full)), uniform_entropy(n), rtol=1e-14)
    causal = to_backend(uniform_causal(n), backend)
    np.testing.assert_allclose(to_numpy(row_entropy(causal)), uniform_entropy(n, causal=True), rtol=1e-14, atol=0)
    np.testing.assert_allclose(uniform_entropy(n, causal=True), np.log(np.arange(1, n + 1)), rtol=0)
    # The causal mean is (1/n) log n!, and e^{H̄} lies in [1, n].
    assert math.isclose(mean_entropy(causal), math.lgamma(n + 1) / n, rel_tol=1e-14)
    assert 1.0 <= effective_neighbours(causal) <= n


def test_mean_entropy_averages_rows_then_the_chosen_leading_axes(rng):
    # Oracle: numpy means of the per-row entropies taken by hand (batched ≡ loop); rounding only.
    P = random_stochastic(rng, (2, 3, 6, 6), density=0.5)
    per_row = np.stack([[row_entropy(P[a, b]) for b in range(3)] for a in range(2)])
    np.testing.assert_allclose(row_entropy(P), per_row, rtol=1e-15)
    np.testing.assert_allclose(mean_entropy(P, axis=()), per_row.mean(-1), rtol=1e-15)
    np.testing.assert_allclose(mean_entropy(P, axis=0), per_row.mean(-1).mean(0), rtol=1e-15)
    np.testing.assert_allclose(mean_entropy(P, axis=-1), per_row.mean(-1).mean(1), rtol=1e-15)
    assert isinstance(mean_entropy(P), float)
    assert math.isclose(mean_entropy(P), per_row.mean(), rel_tol=1e-15)
    assert math.isclose(mean_entropy(P, axis=(0, 1)), mean_entropy(P), rel_tol=1e-15)
    np.testing.assert_allclose(effective_neighbours(P, axis=()), np.exp(per_row.mean(-1)), rtol=1e-15)


def test_effective_neighbours_counts_keys(backend):
    # Oracles: 1 for hard heads (identity, shift), n for the uniform head, k for k evenly weighted keys
    # per row (a circulant band); tolerance 1e-14 (exp of a rounded log k).
    n = 8
    band = sum(np.roll(np.eye(n), s, axis=1) for s in range(3)) / 3
    stack = to_backend(np.stack([np.eye(n), np.roll(np.eye(n), 1, axis=1), np.full((n, n), 1 / n), band]), backend)
    np.testing.assert_allclose(to_numpy(effective_neighbours(stack, axis=())), [1, 1, n, 3], rtol=1e-14)


# ---- reversibility ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, 4, 7])
def test_one_way_cycle_is_maximally_nonreversible(n, backend):
    # Oracle: a shift permutation has F = P/n with F_ij F_ji = 0 everywhere, so ε_rev = √2 exactly;
    # tolerance 4 ulps (two rounded Frobenius norms and a quotient).
    shift = to_backend(np.roll(np.eye(n), 1, axis=1), backend)
    assert math.isclose(reversibility_residual(shift), SQRT2, rel_tol=4 * np.finfo(float).eps)


def test_bound_and_identity_on_random_chains(rng):
    # Oracle: ‖F - Fᵀ‖² = 2‖F‖² - 2 Σ F_ij F_ji computed directly from F = diag(π)P with π the dense Perron
    # vector; tolerance 1e-11 (a linear solve vs. an eigendecomposition for π on 15 states).
    for density in (1.0, 0.4, 0.15):
        P = random_stochastic(rng, (15, 15), density)
        F = dense_stationary(P)[:, None] * P
        identity = math.sqrt(max(2 * np.sum(F * F) - 2 * np.sum(F * F.T), 0.0)) / np.linalg.norm(F)
        eps = reversibility_residual(P)
        assert 0.0 <= eps <= SQRT2
        assert math.isclose(eps, identity, rel_tol=1e-11)


def test_residual_reaches_sqrt2_without_reciprocal_edges_and_not_with_them(rng):
    # Oracle: the identity ‖F - Fᵀ‖² = 2‖F‖² - 2ΣF_ijF_ji. A one-way cycle plus one-way chords (no pair
    # used in both directions, no self-loops) has Σ F_ij F_ji = 0, hence √2 to rounding (1e-14); adding
    # self-loops (reciprocal with themselves) makes the sum positive, hence strictly below √2.
    n = 9
    W = np.roll(np.eye(n), 1, axis=1)
    for i in range(n):
        for j in range(i + 2, n):
            if (i, j) != (0, n - 1) and rng.random() < 0.5:
                W[i, j] = rng.random()
    P = W / W.sum(1, keepdims=True)
    assert np.all(P * P.T == 0)
    assert math.isclose(reversibility_residual(P), SQRT2, rel_tol=1e-14)
    lazy = 0.5 * (P + np.eye(n))
    assert reversibility_residual(lazy) < SQRT2 - 0.01


def test_reversible_maps_give_zero(rng, backend):
    # Oracle: rownorm of a symmetric kernel satisfies detailed balance with π ∝ degrees; residual
    # is rounding only (1e-14).
    K = rng.random((10, 10))
    K = K + K.T
    P = to_backend(K / K.sum(1, keepdims=True), backend)
    assert reversibility_residual(P) < 1e-14


def test_causal_maps_are_absorbed_at_the_first_token(rng):
    # Oracle: a causal (lower-triangular) P has π = δ_0 in closed form (token 0 absorbs every walk), so the
    # flux is the single entry F_00 = 1 and ε_rev = 0 exactly; with uniform weights instead the residual is
    # the direct formula (rounding only, 1e-13).
    n = 6
    P = softmax(rng.standard_normal((n, n)), causal_mask(n))
    assert reversibility_residual(P) == 0.0
    e0 = np.eye(n)[0]
    assert reversibility_residual(P, pi=e0) == 0.0
    F = P / n
    direct = np.linalg.norm(F - F.T) / np.linalg.norm(F)
    assert math.isclose(reversibility_residual(P, pi=np.ones(n)), direct, rel_tol=1e-13)


def test_residual_of_a_stack_is_the_loop(rng, backend):
    # Oracle: batched ≡ loop; tolerance 1e-14 (identical arithmetic, per matrix).
    P = random_stochastic(rng, (2, 3, 7, 7), density=0.6)
    loop = np.array([[reversibility_residual(P[a, b]) for b in range(3)] for a in range(2)])
    stacked = reversibility_residual(to_backend(P, backend))
    assert tuple(stacked.shape) == (2, 3)
    np.testing.assert_allclose(to_numpy(stacked), loop, rtol=1e-12)


def test_residual_errors_name_the_matrix():
    block = np.zeros((4, 4))
    block[:2, :2] = block[2:, 2:] = 0.5  # two closed classes: π is not unique
    with pytest.raises(ValueError, match=r"cannot compute ε_rev of P\[1\]: the stationary law is not unique"):
        reversibility_residual(np.stack([np.full((4, 4), 0.25), block]))
    with pytest.raises(ValueError, match=r"pi must have shape P.shape\[:-1\] = \(4,\), got shape \(3,\)"):
        reversibility_residual(np.full((4, 4), 0.25), pi=np.ones(3))
    with pytest.raises(ValueError, match="pi must have a positive sum for P, got 0"):
        reversibility_residual(np.full((4, 4), 0.25), pi=np.zeros(4))


# ---- skew ratio ---------------------------------------------------------------------------------


def test_skew_ratio_closed_forms(rng, backend):
    # Oracles: ρ = 0 for symmetric M (DMAP/ATAP); ρ = c for M = S + cA‖S‖/‖A‖ by construction; inf for
    # an antisymmetric M. Tolerance 1e-14 (two rounded Frobenius norms).
    G = rng.standard_normal((6, 6))
    S, A = G + G.T, G - G.T
    M = np.stack([S, S + 0.37 * A * np.linalg.norm(S) / np.linalg.norm(A)])
    np.testing.assert_allclose(to_numpy(score_skew_ratio(to_backend(M, backend))), [0.0, 0.37], rtol=1e-14, atol=0)
    assert score_skew_ratio(A) == math.inf


def test_skew_ratio_is_about_one_at_random_init(rng):
    # Oracle: for independent Gaussian W_Q, W_K, ρ² = (‖M‖² - tr M²)/(‖M‖² + tr M²) with E tr M² / E‖M‖²
    # = 1/D, so ρ ≈ √((D-1)/(D+1)); the fluctuation of tr M²/‖M‖² is O(1/D) (a per-draw std of ρ ≈ 0.024
    # measured at D = 64), so the mean of 20 draws is within 0.02 (≈ 4 standard errors of 0.0053).
    D, d_h = 64, 16
    values = [score_skew_ratio(rng.standard_normal((D, d_h)) @ rng.standard_normal((D, d_h)).T) for _ in range(20)]
    assert abs(np.mean(values) - math.sqrt((D - 1) / (D + 1))) < 0.02


def test_skew_ratio_of_zero_is_an_error():
    with pytest.raises(ValueError, match="M must be a nonzero form"):
        score_skew_ratio(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="M must be a square matrix"):
        score_skew_ratio(np.zeros((3, 2)))


# ---- distances -----------------------------------------------------------------------------------


@pytest.mark.parametrize("reduce", ["mean", "median"])
def test_nearest_target_distance_matches_brute_force(rng, backend, reduce):
    # Oracle: scipy.spatial.distance.cdist (brute force, an independent algorithm) then min per row;
    # tolerance 1e-12 (the same Euclidean distances by two routes).
    train, generated = rng.random((200, 3)), rng.random((50, 3))
    brute = scipy.spatial.distance.cdist(generated, train).min(axis=1)
    expected = brute.mean() if reduce == "mean" else np.median(brute)
    got = nearest_target_distance(to_backend(generated, backend), to_backend(train, backend), reduce=reduce)
    assert math.isclose(got, expected, rel_tol=1e-12)
    pairwise = scipy.spatial.distance.cdist(train, train) + np.diag(np.full(200, np.inf))
    own = pairwise.min(axis=1)
    expected_own = own.mean() if reduce == "mean" else np.median(own)
    assert math.isclose(native_spacing(to_backend(train, backend), reduce=reduce), expected_own, rel_tol=1e-12)


def test_lattice_spacing_and_offset_samples():
    # Oracle: a square lattice of step h has native spacing h; samples shifted by δ < h/2 from lattice
    # points have d_NN = δ exactly (rounding of coordinates of size ~0.5: 1e-14 absolute).
    h, delta = 0.05, 0.01
    grid = np.stack(np.meshgrid(np.arange(10.0), np.arange(10.0)), axis=-1).reshape(-1, 2) * h
    assert math.isclose(native_spacing(grid), h, rel_tol=1e-12)
    assert math.isclose(nearest_target_distance(grid[::3] + np.array([delta, 0.0]), grid), delta, abs_tol=1e-14)
    assert native_spacing(np.vstack([grid, grid[:1]]), reduce="median") == pytest.approx(h, rel=1e-12)


def test_distance_errors():
    with pytest.raises(ValueError, match="generated columns and train columns must have matching sizes, got 3 and 2"):
        nearest_target_distance(np.zeros((4, 3)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="reduce must be one of 'mean', 'median', got 'max'"):
        nearest_target_distance(np.zeros((4, 2)), np.zeros((5, 2)), reduce="max")
    with pytest.raises(ValueError, match="reduce must be one of 'mean', 'median', got 'min'"):
        native_spacing(np.zeros((4, 2)), reduce="min")
    with pytest.raises(ValueError, match="train must hold at least 2 points, got 1"):
        native_spacing(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="generated must hold at least one point"):
        nearest_target_distance(np.zeros((0, 2)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="train must be a 2-dimensional array"):
        nearest_target_distance(np.zeros((4, 2)), np.zeros(5))


# ---- β sweep -------------------------------------------------------------------------------------


def test_entropy_is_nonincreasing_in_beta(rng, backend):
    # Oracle: dH_i/dβ = -β Var_P(s_i) ≤ 0 for every row, so the mean curve is nonincreasing; a rise of
    # at most 1e-13 is allowed (rounding of a log-sum-exp over 16 keys).
    scores = rng.standard_normal((3, 16, 16))
    betas = np.concatenate([[0.0], np.logspace(-2, 2, 40)])
    sweep = beta_sweep(to_backend(scores, backend), betas, mask=causal_mask(16))
    assert isinstance(sweep, BetaSweep)
    assert np.all(np.diff(sweep.mean_entropy) <= 1e-13)
    np.testing.assert_allclose(sweep.effective_neighbours, np.exp(sweep.mean_entropy), rtol=1e-15)


def test_entropy_slope_is_minus_beta_times_the_score_variance(rng):
    # Oracle: dH̄/dβ = -β mean_i Var_{P_i}(s_i) (closed form, variances from an independent numpy softmax),
    # against a central difference with step 1e-5: truncation O(h²) ~ 1e-10 plus rounding eps·H/h ~ 1e-10;
    # tolerance 1e-8 absolute.
    scores = rng.standard_normal((10, 10))
    h = 1e-5
    for beta in (0.3, 1.0, 2.5):
        curve = beta_sweep(scores, [beta - h, beta + h]).mean_entropy
        P = softmax(beta * scores)
        variance = np.sum(P * scores**2, axis=1) - np.sum(P * scores, axis=1) ** 2
        assert math.isclose((curve[1] - curve[0]) / (2 * h), -beta * variance.mean(), abs_tol=1e-8)


def test_beta_limits_uniform_and_argmax(rng, backend):
    # Oracles: at β = 0 the causal softmax is uniform on j ≤ i, so H̄ = (1/n) log n! (closed form, 1e-14);
    # with integer scores (gaps ≥ 1) and β = 60 the non-maximal keys weigh ≤ n e^{-60} ~ 1e-25, so H̄ equals
    # the argmax limit mean log(#ties), counted here directly, to 1e-20.
    n = 10
    scores = rng.integers(0, 4, (2, n, n)).astype(float)  # many ties
    mask = causal_mask(n)
    sweep = beta_sweep(to_backend(scores, backend), [0.0, 60.0], mask=mask)
    assert math.isclose(sweep.uniform_limit, math.lgamma(n + 1) / n, rel_tol=1e-14)
    assert math.isclose(sweep.mean_entropy[0], sweep.uniform_limit, rel_tol=1e-14)
    ties = [np.sum(row[: i + 1] == row[: i + 1].max()) for head in scores for i, row in enumerate(head)]
    assert math.isclose(sweep.argmax_limit, np.mean(np.log(ties)), rel_tol=1e-14)
    assert sweep.argmax_limit > 0  # the integer scores do tie
    assert math.isclose(sweep.mean_entropy[1], sweep.argmax_limit, abs_tol=1e-20)
    generic = beta_sweep(rng.standard_normal((n, n)), [0.0])
    assert generic.argmax_limit == 0.0 and math.isclose(generic.uniform_limit, math.log(n), rel_tol=1e-15)


def test_beta_sweep_matches_row_entropy_of_the_softmax(rng):
    # Oracle: row_entropy of an independent numpy softmax at each β; tolerance 1e-13 (p log p vs the
    # log-softmax route, both rounded).
    scores, mask = rng.standard_normal((7, 7)), causal_mask(7)
    betas = [0.5, 1.0, 3.0]
    curve = beta_sweep(scores, betas, mask=mask).mean_entropy
    np.testing.assert_allclose(curve, [mean_entropy(softmax(b * scores, mask)) for b in betas], rtol=1e-13)


def test_beta_sweep_errors():
    mask = causal_mask(5)
    mask[3] = False
    with pytest.raises(ValueError, match="mask must leave at least one admissible key in every row; row 3 has none"):
        beta_sweep(np.zeros((5, 5)), [1.0], mask=mask)
    with pytest.raises(TypeError, match="mask must be a boolean array"):
        beta_sweep(np.zeros((5, 5)), [1.0], mask=np.ones((5, 5)))
    with pytest.raises(ValueError, match=r"mask must have shape \[..., n, m\] broadcastable to scores \(5, 5\)"):
        beta_sweep(np.zeros((5, 5)), [1.0], mask=np.ones((4, 4), dtype=bool))
    with pytest.raises(ValueError, match="betas must be entrywise nonnegative, got minimum -1"):
        beta_sweep(np.zeros((5, 5)), [1.0, -1.0])
    with pytest.raises(ValueError, match="betas must hold at least one inverse temperature"):
        beta_sweep(np.zeros((5, 5)), [])


# ---- logit variance at initialisation ------------------------------------------------------------


def test_logit_variance_matches_d_head_and_the_scale_removes_it():
    # Oracle: Var(q_i·k_j) = tr(E[W_QᵀW_Q] E[W_KᵀW_K]) = d_h exactly for i ≠ j (closed form). Statistical
    # tolerance: 4 standard errors of the mean over 200 i.i.d. draws (the standard error is estimated from
    # the draws and itself checked to be below 3% of the prediction, so the test has power). The unscaled
    # variance grows ∝ d_h: a least-squares slope of log var against log d_h within 0.1 of 1 (the 3% errors
    # move the slope by ~0.02 over the factor-16 range).
    d_heads = (16, 64, 256)
    unscaled = []
    for d_head in d_heads:
        for scaled in (True, False):
            check = logit_variance_at_init(np.random.default_rng(d_head), 256, d_head, n_draws=200, scaled=scaled)
            assert check.predicted == (1.0 if scaled else d_head)
            assert check.standard_error / check.predicted < 0.03
            assert check.relative_error < 4 * check.standard_error / check.predicted
            if not scaled:
                unscaled.append(check.measured)
    slope = np.polyfit(np.log(d_heads), np.log(unscaled), 1)[0]
    assert abs(slope - 1.0) < 0.1


def test_logit_variance_errors():
    with pytest.raises(ValueError, match="n_tokens must be an integer >= 2, got 1"):
        logit_variance_at_init(0, 8, 4, n_tokens=1)
    with pytest.raises(TypeError, match="d_head must be an integer, got float"):
        logit_variance_at_init(0, 8, 4.0)


# ---- circuits ------------------------------------------------------------------------------------


def shift_head(n):
    # The hard previous-token head: A_{i,i-1} = 1, row 0 on itself.
    A = np.eye(n, k=-1)
    A[0, 0] = 1.0
    return A


def ideal_induction(T):
    # Rows of the first half spread uniformly over the past; row i ≥ T attends to i - T + 1 only.
    A = uniform_causal(2 * T)
    A[T:] = 0.0
    for i in range(T, 2 * T):
        A[i, i - T + 1] = 1.0
    return A


def test_previous_token_score_oracles(backend):
    # Oracles: the hard shift head scores 1 exactly; the uniform causal head scores
    # (1/(n-1)) Σ_{i=1}^{n-1} 1/(i+1) = (H_n - 1)/(n - 1) (closed form; 1e-14 relative).
    n = 11
    assert previous_token_score(to_backend(shift_head(n), backend)) == 1.0
    uniform = previous_token_score(to_backend(uniform_causal(n), backend))
    assert math.isclose(uniform, (harmonic(n) - 1) / (n - 1), rel_tol=1e-14)
    stacked = previous_token_score(to_backend(np.stack([shift_head(n), uniform_causal(n)]), backend))
    np.testing.assert_allclose(to_numpy(stacked), [1.0, uniform], rtol=1e-15)


def test_induction_score_oracles(rng, backend):
    # Oracles: the hand-built induction pattern scores 1 exactly; the uniform causal head scores
    # (1/T) Σ_{i=T}^{2T-1} 1/(i+1) = (H_{2T} - H_T)/T (closed form, 1e-14); the previous-token head scores 0
    # for T ≥ 3 (it attends to i - 1 ≠ i - T + 1).
    T = 6
    tokens = repeated_random_tokens(rng, vocab_size=1000, half_length=T)
    assert induction_score(to_backend(ideal_induction(T), backend), tokens) == 1.0
    uniform = induction_score(to_backend(uniform_causal(2 * T), backend), tokens[0])
    assert math.isclose(uniform, (harmonic(2 * T) - harmonic(T)) / T, rel_tol=1e-14)
    assert induction_score(shift_head(2 * T), tokens) == 0.0
    stack = np.stack([ideal_induction(T), shift_head(2 * T), uniform_causal(2 * T)])
    np.testing.assert_allclose(to_numpy(induction_score(to_backend(stack, backend), tokens)), [1.0, 0.0, uniform])


def test_repeated_random_tokens():
    # Oracle: the definition (second half = first half), the vocabulary range and reproducibility by seed.
    tokens = repeated_random_tokens(7, vocab_size=20, half_length=5, batch=3)
    assert tokens.shape == (3, 10) and tokens.dtype == np.int64
    np.testing.assert_array_equal(tokens[:, 5:], tokens[:, :5])
    assert tokens.min() >= 0 and tokens.max() < 20
    np.testing.assert_array_equal(tokens, repeated_random_tokens(7, vocab_size=20, half_length=5, batch=3))
    with pytest.raises(ValueError, match="half_length must be an integer >= 1, got 0"):
        repeated_random_tokens(0, 10, 0)


def test_circuit_score_errors():
    A = uniform_causal(6)
    with pytest.raises(ValueError, match=r"tokens must repeat their first half .*first mismatch at position 4: 8 != 2"):
        induction_score(A, np.array([1, 2, 3, 1, 8, 3]))
    with pytest.raises(ValueError, match=r"in sequence 1 first mismatch at position 5: 0 != 3"):
        induction_score(A, np.array([[1, 2, 3, 1, 2, 3], [1, 2, 3, 1, 2, 0]]))
    with pytest.raises(ValueError, match="tokens must have even length 2T"):
        induction_score(uniform_causal(5), np.arange(5))
    with pytest.raises(ValueError, match="tokens length and A size must have matching sizes, got 4 and 6"):
        induction_score(A, np.array([1, 2, 1, 2]))
    with pytest.raises(TypeError, match="tokens must be an integer array, got dtype float64"):
        induction_score(A, np.array([1.0, 2, 3, 1, 2, 3]))
    with pytest.raises(ValueError, match="A must have at least 2 tokens"):
        previous_token_score(np.ones((1, 1)))


# ---- validation of attention maps ---------------------------------------------------------------


@pytest.mark.parametrize(
    "function", [row_entropy, mean_entropy, effective_neighbours, reversibility_residual, previous_token_score]
)
def test_maps_must_be_row_stochastic(function):
    name = "A" if function is previous_token_score else "P"
    with pytest.raises(ValueError, match=rf"{name} must be row-stochastic .*got row 1 summing to 0.9"):
        function(np.array([[0.5, 0.5], [0.2, 0.7]]))
    with pytest.raises(ValueError, match=rf"{name} must be entrywise nonnegative, got minimum -0.5 at index \(0, 1\)"):
        function(np.array([[1.5, -0.5], [0.5, 0.5]]))
    with pytest.raises(ValueError, match=rf"{name} must be a square matrix"):
        function(np.full((2, 3), 1 / 3))


def test_float32_maps_pass_with_a_dtype_aware_tolerance(rng):
    # A float32 softmax has row sums off by ~n·eps32; the default tolerance scales with the dtype, and the
    # entropy agrees with the float64 value to float32 rounding (1e-5 relative).
    P = softmax(rng.standard_normal((64, 64)))
    H32 = row_entropy(P.astype(np.float32))
    assert H32.dtype == np.float32
    np.testing.assert_allclose(H32, row_entropy(P), rtol=1e-5)
    with pytest.raises(ValueError, match="axis must index the leading"):
        mean_entropy(P, axis=0)
