"""Gauge transport on a sequence (workbench.nn: _transport, _double_exponential, _twist, _curvature) and its catalogue (derivations.nn_gauge).

Oracles, named per test: the sequential path-ordered product of ``torch.linalg.matrix_exp`` factors (scan),
explicit loops over positions with :func:`transport` (scores, double exponential), the dense Kronecker lift
``kron(Q, I)`` conjugated by ``torch.block_diag`` (conjugation identity), ``scipy.linalg.logm`` (curvature),
closed forms for commuting / nilpotent generators, and ``torch.autograd.gradcheck`` (central differences) for
gradients.  Float64 throughout; tolerances are stated with their reason at each assertion.
"""

import itertools

import numpy as np
import pytest
import scipy.linalg
import torch

from workbench.derivations.nn_gauge import IDENTITIES
from workbench.lens import principal_log
from workbench.lie import bch
from workbench.nn import (
    BandedGenerator,
    banded_transported_scores,
    bch_conjugation_error,
    conjugated_generator,
    curvature,
    double_exponential,
    gauge_change,
    holonomy,
    multiscale_generator,
    multiscale_offsets,
    prefix_transports,
    transport,
    transported_scores,
    twist_generator,
    twisted_generator,
)

F64 = torch.float64


def _randn(gen, *shape, scale=1.0):
    return scale * torch.randn(*shape, dtype=F64, generator=gen)


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(20261129)


def _sequential(generators):
    """Oracle for the scan: T_0 = I, T_{j+1} = e^{A_j} T_j, one matmul at a time."""
    d = generators.shape[-1]
    out = [torch.eye(d, dtype=generators.dtype).expand(*generators.shape[:-3], d, d)]
    for j in range(generators.shape[-3]):
        out.append(torch.linalg.matrix_exp(generators[..., j, :, :]) @ out[-1])
    return torch.stack(out, dim=-3)


def _rel(a, b):
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


# --- 1. prefix transports -------------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 13])
def test_scan_matches_the_sequential_product(gen, m):
    # Oracle: the sequential product.  Tolerance 1e-13 relative: the scan reassociates ≤ ⌈log2 m⌉ products of
    # well-conditioned factors (‖A‖ ≈ 0.4), a few ulps each.
    a = _randn(gen, 2, 3, m, 4, 4, scale=0.2)
    t = prefix_transports(a)
    assert t.shape == (2, 3, m + 1, 4, 4)
    assert torch.equal(t[..., 0, :, :], torch.eye(4, dtype=F64).expand(2, 3, 4, 4))  # T_0 = I exactly
    assert _rel(t, _sequential(a)) < 1e-13


def test_batched_scan_equals_a_loop_over_the_batch(gen):
    # Oracle: the unbatched call per element; identical arithmetic, so agreement to 1e-15 relative.
    a = _randn(gen, 3, 6, 3, 3, scale=0.3)
    stacked = torch.stack([prefix_transports(x) for x in a])
    assert _rel(prefix_transports(a), stacked) < 1e-15


def test_transport_composes_exactly_and_is_the_edge_exponential_on_an_edge(gen):
    # Oracles: R_{j+1←j} = e^{A_j} (closed form) and the path-ordered product e^{A_4} e^{A_3} e^{A_2} for R_{5←2};
    # R_{i←k} R_{k←j} = R_{i←j}.  Tolerance 1e-13: a solve with κ(T) ≈ 3 at unit roundoff.
    a = _randn(gen, 6, 3, 3, scale=0.3)
    t = prefix_transports(a)
    assert _rel(transport(t, 3, 2), torch.linalg.matrix_exp(a[2])) < 1e-13
    path = torch.linalg.matrix_exp(a[4]) @ torch.linalg.matrix_exp(a[3]) @ torch.linalg.matrix_exp(a[2])
    assert _rel(transport(t, 5, 2), path) < 1e-13
    assert _rel(transport(t, 1, 4) @ transport(t, 4, 6), transport(t, 1, 6)) < 1e-13
    assert _rel(transport(t, 2, 5), torch.linalg.inv(path)) < 1e-13


def test_orthogonal_connection_gives_orthogonal_transports(gen):
    # Closed form: skew generators exponentiate to rotations, and products of rotations are rotations.
    # Tolerance 1e-13 on TᵀT − I: 7 products at unit roundoff.
    x = _randn(gen, 7, 4, 4)
    t = prefix_transports(x - x.transpose(-1, -2))
    assert float((t.transpose(-1, -2) @ t - torch.eye(4, dtype=F64)).abs().max()) < 1e-13


def test_scan_gradients(gen):
    # Oracle: central differences (gradcheck, float64, default tolerances); m = 5 exercises two doubling rounds.
    a = _randn(gen, 5, 2, 2, scale=0.3).requires_grad_()
    assert torch.autograd.gradcheck(prefix_transports, (a,))


# --- 2. transported scores ------------------------------------------------------------------------------------


def test_dense_scores_match_an_explicit_loop(gen):
    # Oracle: c_ij = q_i · R_{i←j} k_j with R from transport(); tolerance 1e-12 relative (κ(T) ≲ 10).
    n, d = 7, 3
    t = prefix_transports(_randn(gen, n - 1, d, d, scale=0.3))
    q, k = _randn(gen, n, d), _randn(gen, n, d)
    loop = torch.tensor([[float(q[i] @ transport(t, i, j) @ k[j]) for j in range(n)] for i in range(n)], dtype=F64)
    assert _rel(transported_scores(q, k, t), loop) < 1e-12


def test_banded_scores_are_the_dense_scores_at_the_offsets(gen):
    # Oracle: the dense scores read at (i, i + δ); entries off the chain are exactly 0.  Tolerance 1e-13
    # absolute: the same dot products summed in a different order.
    n, d = 11, 3
    t = prefix_transports(_randn(gen, 2, n - 1, d, d, scale=0.3))
    q, k = _randn(gen, 2, n, d), _randn(gen, 2, n, d)
    offsets = multiscale_offsets(2)
    band = banded_transported_scores(q, k, t, offsets)
    dense = transported_scores(q, k, t)
    assert band.shape == (2, n, len(offsets))
    for column, delta in enumerate(offsets):
        for i in range(n):
            expected = dense[:, i, i + delta] if 0 <= i + delta < n else torch.zeros(2, dtype=F64)
            assert float((band[:, i, column] - expected).abs().max()) < 1e-13


def test_multiscale_offsets():
    assert multiscale_offsets(0) == (-1, 1)
    assert multiscale_offsets(3) == (-8, -4, -2, -1, 1, 2, 4, 8)


def test_scores_are_gauge_invariant_and_the_double_exponential_covariant(gen):
    # Oracle: the same quantities after a random non-orthogonal gauge S_j = e^{0.5 X_j}; tolerance 1e-12
    # relative (solves with κ(S), κ(T) ≲ 10²).  Negative control: treating queries as vectors (q ↦ S q) breaks
    # invariance by O(1), so the test has power.
    n, d = 9, 3
    t = prefix_transports(_randn(gen, n - 1, d, d, scale=0.3))
    q, k, v = _randn(gen, n, d), _randn(gen, n, d), _randn(gen, n, d)
    s = torch.linalg.matrix_exp(_randn(gen, n, d, d, scale=0.5))
    t2, q2, k2, v2 = gauge_change(s, t, q, k, v)
    assert _rel(transported_scores(q2, k2, t2), transported_scores(q, k, t)) < 1e-12
    offsets = multiscale_offsets(1)
    band = banded_transported_scores(q, k, t, offsets)
    assert _rel(banded_transported_scores(q2, k2, t2, offsets), band) < 1e-12
    mixing = multiscale_generator(band, offsets)
    y, y2 = double_exponential(mixing, t, v, 0.8), double_exponential(mixing, t2, v2, 0.8)
    assert _rel(y2, (s @ y.unsqueeze(-1)).squeeze(-1)) < 1e-12
    wrong_q = (s @ q.unsqueeze(-1)).squeeze(-1)
    assert _rel(transported_scores(wrong_q, k2, t2), transported_scores(q, k, t)) > 1e-2


def test_gauge_change_of_the_connection_matches_the_gauge_change_of_the_transports(gen):
    # Oracle: regauge each edge, e^{A'_ℓ} = S_{ℓ+1} e^{A_ℓ} S_ℓ⁻¹ (A' by scipy logm, near identity), rescan, and
    # compare with S_j T_j S_0⁻¹.  Tolerance 1e-11 relative: logm and expm round-trips at κ ≲ 10.
    n, d = 6, 3
    a = _randn(gen, n - 1, d, d, scale=0.2)
    s = torch.linalg.matrix_exp(_randn(gen, n, d, d, scale=0.1))
    edges = s[1:] @ torch.linalg.matrix_exp(a) @ torch.linalg.inv(s[:-1])
    a2 = torch.from_numpy(np.stack([np.real(scipy.linalg.logm(e)) for e in edges.numpy()]))
    t2, *_ = gauge_change(s, prefix_transports(a))
    assert _rel(prefix_transports(a2), t2) < 1e-11


# --- 3. multiscale generator ----------------------------------------------------------------------------------


def test_multiscale_generator_is_a_markov_generator_with_the_given_rates(gen):
    # Oracle: a hand-built loop Q[i, i+δ] = softplus(c[i, δ]) for on-chain i + δ; rows sum to 0 to 1e-14
    # (one subtraction of a sum of ≤ 6 positive rates of size ≲ 3).
    n = 9
    offsets = multiscale_offsets(1)
    c = _randn(gen, n, len(offsets))
    q = multiscale_generator(c, offsets)
    manual = torch.zeros(n, n, dtype=F64)
    for i in range(n):
        for column, delta in enumerate(offsets):
            if 0 <= i + delta < n:
                manual[i, i + delta] = torch.nn.functional.softplus(c[i, column])
        manual[i, i] = -manual[i].sum()
    assert float((q - manual).abs().max()) < 1e-14
    assert float(q.sum(-1).abs().max()) < 1e-14
    off = q - torch.diag(torch.diagonal(q))
    assert bool((off >= 0).all())
    # e^{tQ} is row-stochastic (oracle: rows of a stochastic matrix sum to 1; 1e-13 for a dense expm)
    p = torch.linalg.matrix_exp(2.0 * q)
    assert float((p.sum(-1) - 1).abs().max()) < 1e-13 and float(p.min()) > -1e-15


def test_multiscale_generator_is_the_banded_generator_of_the_exp_markov_layer(gen):
    # Oracle: BandedGenerator(offsets, softplus(c).mT).dense() of workbench.nn, the layer's own
    # construction (layout [..., K, n] vs scores [..., n, K]); exact equality (the same operations), batched.
    offsets = (-2, -1, 1, 3)
    c = _randn(gen, 2, 7, len(offsets))
    banded = BandedGenerator(offsets, torch.nn.functional.softplus(c).mT)
    assert torch.equal(multiscale_generator(c, offsets), banded.dense())


def test_multiscale_generator_accepts_a_custom_phi_and_rejects_negative_rates(gen):
    c = _randn(gen, 5, 2)
    q = multiscale_generator(c, (-1, 1), phi=torch.exp)
    assert float(q[2, 3]) == float(torch.exp(c[2, 1]))  # closed form, no arithmetic between
    with pytest.raises(ValueError, match=r"phi must return nonnegative rates, got minimum -"):
        multiscale_generator(c, (-1, 1), phi=lambda x: x)
    with pytest.raises(ValueError, match=r"scores must have one column per offset \(shape \[\.\.\., n, 3\]\)"):
        multiscale_generator(c, (-1, 1, 2))
    with pytest.raises(TypeError, match="phi must be callable, got int"):
        multiscale_generator(c, (-1, 1), phi=3)


# --- 4. double exponential --------------------------------------------------------------------------------------


def test_double_exponential_matches_the_explicit_kronecker_formula(gen):
    # Oracle: 𝒯 expm(t Q⊗I) 𝒯⁻¹ vec V with dense block_diag and kron; tolerance 1e-12 relative (two dense
    # exponentials of a norm-≈5 matrix and solves with κ(T) ≲ 10).
    n, d = 6, 2
    t = prefix_transports(_randn(gen, n - 1, d, d, scale=0.4))
    q = multiscale_generator(_randn(gen, n, 4), multiscale_offsets(1))
    v = _randn(gen, n, d)
    big_t = torch.block_diag(*t)
    oracle = big_t @ torch.linalg.matrix_exp(0.6 * torch.kron(q, torch.eye(d, dtype=F64)))
    oracle = (oracle @ torch.linalg.solve(big_t, v.reshape(-1))).reshape(n, d)
    assert _rel(double_exponential(q, t, v, 0.6), oracle) < 1e-12


def test_double_exponential_with_trivial_transports_is_markov_mixing(gen):
    # Oracle: T = I reduces it to expm(tQ) V; a constant V is preserved (row-stochastic); tolerance 1e-13.
    n, d = 7, 3
    t = prefix_transports(torch.zeros(n - 1, d, d, dtype=F64))
    q = multiscale_generator(_randn(gen, n, 2), (-1, 1))
    v = _randn(gen, n, d)
    assert _rel(double_exponential(q, t, v, 1.5), torch.linalg.matrix_exp(1.5 * q) @ v) < 1e-13
    ones = torch.ones(n, d, dtype=F64)
    assert float((double_exponential(q, t, ones, 1.5) - 1).abs().max()) < 1e-13


def test_double_exponential_batched_and_with_a_tensor_time(gen):
    # Oracle: the unbatched call per element with the matching time; tolerance 1e-14 relative (same arithmetic).
    b, n, d = 3, 5, 2
    t = prefix_transports(_randn(gen, b, n - 1, d, d, scale=0.3))
    q = multiscale_generator(_randn(gen, b, n, 2), (-1, 1))
    v = _randn(gen, b, n, d)
    times = torch.tensor([0.1, 0.5, 2.0], dtype=F64)
    loop = torch.stack([double_exponential(q[i], t[i], v[i], float(times[i])) for i in range(b)])
    assert _rel(double_exponential(q, t, v, times), loop) < 1e-14


def test_double_exponential_expmv_route_agrees_with_dense(gen):
    # Oracle: the dense route; the uniformization engine meets unit roundoff, tolerance 1e-12 relative.
    n, d = 10, 3
    t = prefix_transports(_randn(gen, 2, n - 1, d, d, scale=0.3))
    q = multiscale_generator(_randn(gen, 2, n, 4), multiscale_offsets(1))
    v = _randn(gen, 2, n, d)
    dense = double_exponential(q, t, v, 1.3)
    assert _rel(double_exponential(q, t, v, 1.3, method="expmv"), dense) < 1e-12


def test_double_exponential_uniformization_route_agrees_with_dense(gen):
    # Oracle: the dense route (torch.linalg.matrix_exp of tQ).  e^{tQ⊗I}vec(U) = vec(e^{tQ}U), so the route is
    # uniformized_action(Q, U, t); tolerance 1e-12 relative (~λt ≈ 15 stochastic products at u each, κ(T) ≲ 10).
    # The BandedGenerator input (banded shifted adds, O(n·w·d) per power) gives the same result; batched, with a
    # tensor time per batch element.
    b, n, d = 2, 10, 3
    offsets = multiscale_offsets(1)
    t = prefix_transports(_randn(gen, b, n - 1, d, d, scale=0.3))
    c = _randn(gen, b, n, len(offsets))
    q = multiscale_generator(c, offsets)
    v = _randn(gen, b, n, d)
    times = torch.tensor([0.4, 1.3], dtype=F64)
    dense = double_exponential(q, t, v, times)
    assert _rel(double_exponential(q, t, v, times, method="uniformization"), dense) < 1e-12
    banded = BandedGenerator(offsets, torch.nn.functional.softplus(c).mT)
    assert _rel(double_exponential(banded, t, v, times, method="uniformization"), dense) < 1e-12
    assert _rel(double_exponential(banded, t, v, times), dense) < 1e-14  # densified: the same dense route
    with pytest.raises(ValueError, match=r"uniformization needs .* powers .* more than max_terms = 2"):
        double_exponential(q, t, v, times, method="uniformization", max_terms=2)
    with pytest.raises(ValueError, match=r"generator must have n = 10 states to match transports, got n = 9"):
        double_exponential(BandedGenerator(offsets, banded.rates[..., :9]), t, v, method="uniformization")


def test_double_exponential_uniformization_gradients(gen):
    # Oracle: central differences (gradcheck, float64 default tolerances, full Jacobian) through scan, banded
    # scores, the BandedGenerator of the scores and the uniformization route with a learnable time.
    n, d = 4, 2
    offsets = (-1, 1, 2)
    a = _randn(gen, n - 1, d, d, scale=0.3).requires_grad_()
    q, k, v = (_randn(gen, n, d).requires_grad_() for _ in range(3))
    time = torch.tensor(0.7, dtype=F64, requires_grad=True)

    def block(a, q, k, v, time):
        transports = prefix_transports(a)
        scores = banded_transported_scores(q, k, transports, offsets)
        generator = BandedGenerator(offsets, torch.nn.functional.softplus(scores).mT)
        return double_exponential(generator, transports, v, time, method="uniformization")

    assert torch.autograd.gradcheck(block, (a, q, k, v, time))


def test_double_exponential_gradients(gen):
    # Oracle: central differences (gradcheck, float64 default tolerances) through the whole gauge block: scan,
    # banded transported scores, softplus generator, double exponential with a learnable time.
    n, d = 4, 2
    a = _randn(gen, n - 1, d, d, scale=0.3).requires_grad_()
    q, k, v = (_randn(gen, n, d).requires_grad_() for _ in range(3))
    time = torch.tensor(0.7, dtype=F64, requires_grad=True)

    def block(a, q, k, v, time):
        transports = prefix_transports(a)
        scores = banded_transported_scores(q, k, transports, (-2, -1, 1, 2))
        return double_exponential(multiscale_generator(scores, (-2, -1, 1, 2)), transports, v, time)

    assert torch.autograd.gradcheck(block, (a, q, k, v, time))


# --- 5. conjugation identity and BCH ------------------------------------------------------------------------


def test_conjugated_generator_blocks_and_exponential(gen):
    # Oracles: block (i, j) = Q_ij T_i T_j⁻¹ (diagonal blocks Q_ii I exactly up to rounding); equality with the
    # dense 𝒯(Q⊗I)𝒯⁻¹; exp(t·G) vec V equals the double exponential.  Tolerance 1e-12 relative (κ(T) ≲ 10).
    n, d = 5, 3
    t = prefix_transports(_randn(gen, n - 1, d, d, scale=0.3))
    q = multiscale_generator(_randn(gen, n, 2), (-1, 1))
    g = conjugated_generator(q, t)
    assert g.shape == (n * d, n * d)
    for i in range(n):
        for j in range(n):
            block = g[i * d : (i + 1) * d, j * d : (j + 1) * d]
            assert float((block - q[i, j] * transport(t, i, j)).abs().max()) < 1e-12
    big_t = torch.block_diag(*t)
    dense = big_t @ torch.kron(q, torch.eye(d, dtype=F64)) @ torch.linalg.inv(big_t)
    assert _rel(g, dense) < 1e-12
    v = _randn(gen, n, d)
    via_g = (torch.linalg.matrix_exp(0.9 * g) @ v.reshape(-1)).reshape(n, d)
    assert _rel(via_g, double_exponential(q, t, v, 0.9)) < 1e-12


def test_conjugation_needs_no_markov_generator_and_no_special_transport(gen):
    # nn.gauge.conjugation is unconditional: similarity by 𝒯 = diag(T_j) commutes with the exponential for any real
    # Q and any invertible T_j.  Oracle: the dense 𝒯 e^{tQ⊗I} 𝒯⁻¹ against exp(t·conjugated_generator) with a Q that
    # has negative off-diagonal entries and nonzero row sums, and T_j far from orthogonal (κ ≈ 10²).
    # Tolerance 1e-11 relative: dense exponentials and inverses at unit roundoff, amplified by κ(𝒯)².
    n, d = 4, 3
    q = _randn(gen, n, n)
    t = torch.linalg.matrix_exp(_randn(gen, n, d, d, scale=0.8))
    big_t = torch.block_diag(*t)
    lhs = big_t @ torch.linalg.matrix_exp(0.7 * torch.kron(q, torch.eye(d, dtype=F64))) @ torch.linalg.inv(big_t)
    assert _rel(torch.linalg.matrix_exp(0.7 * conjugated_generator(q, t)), lhs) < 1e-11


def test_the_asymptotic_gauge_identities_state_small_generators_and_genericity():
    # Each hypothesis of the two rate identities is tested outside (tests/test_hypotheses.py runs every outside case);
    # here: which identities carry hypotheses, and that the statements say them.
    by_name = {identity.name: identity for identity in IDENTITIES}
    assert by_name["nn.gauge.conjugation"].hypotheses == () and by_name["nn.gauge.covariance"].hypotheses == ()
    for name in ("nn.gauge.conjugation_bch_order", "nn.gauge.curvature_bch"):
        identity = by_name[name]
        assert [h.outside is not None for h in identity.hypotheses] == [True, True]
        assert r"\varepsilon\to0" in identity.statement and r"\neq0" in identity.statement
        for number, hypothesis in enumerate(identity.hypotheses):
            outcome = hypothesis.outside(np.random.default_rng(number))
            assert not outcome.passed and outcome.residual > 5 * outcome.tolerance, (name, number, outcome)


def test_twist_is_exact_for_commuting_phi_and_bch_exact_for_heisenberg(gen):
    # Closed forms: commuting (diagonal) Φ give e^{Φ_i}e^{−Φ_j} = e^{Φ_i−Φ_j}; in the Heisenberg algebra BCH stops
    # at degree 2.  Tolerances 1e-15 / 1e-14 absolute: a few roundings on entries of size ≲ 1.
    diag = torch.diag_embed(_randn(gen, 2, 4, scale=0.5))
    assert float(bch_conjugation_error(diag[0], diag[1], 1)) < 1e-15
    h = torch.zeros(2, 3, 3, dtype=F64)
    h[:, 0, 1], h[:, 1, 2], h[:, 0, 2] = _randn(gen, 3, 2)
    assert float(bch_conjugation_error(h[0], h[1], 2)) < 1e-14
    assert float(bch_conjugation_error(h[0], h[1], 1)) > 1e-3  # they do not commute: degree 1 is not enough


def test_twist_generator_degree_two_is_the_hand_formula(gen):
    # Closed form: BCH(Φ_i, −Φ_j) through degree 2 = Φ_i − Φ_j − ½[Φ_i, Φ_j]; tolerance 1e-15 absolute.
    a, b = _randn(gen, 2, 3, 3, scale=0.2)
    hand = a - b - 0.5 * (a @ b - b @ a)
    assert float((twist_generator(a, b, 2) - hand).abs().max()) < 1e-15
    assert float((twist_generator(a, b, 3) - bch(3).evaluate(a, -b)).abs().max()) == 0.0  # same engine call


def test_twisted_generator_is_exact_for_commuting_phi_and_has_the_bch_order_otherwise(gen):
    # Oracles: (i) commuting (diagonal) Φ: the seed's e^{Φ_i−Φ_j} blocks equal the exact conjugated generator,
    # 1e-14 absolute (entries ≲ 5); (ii) generic Φ = ε·(unit norm): exp(t·G_N) vec V against the exact double
    # exponential with T = e^{Φ}; fitted slope N + 1 within 0.15 (measured within ~0.1 over seeds).
    n, d = 5, 3
    q = multiscale_generator(_randn(gen, n, 2), (-1, 1))
    commuting = torch.diag_embed(_randn(gen, n, d, scale=0.5))
    exact = conjugated_generator(q, torch.linalg.matrix_exp(commuting))
    assert float((twisted_generator(q, commuting, 1) - exact).abs().max()) < 1e-14
    base = _randn(gen, n, d, d)
    base = base / torch.linalg.matrix_norm(base, 2)[:, None, None]
    v = _randn(gen, n, d)
    eps = np.geomspace(0.03, 0.25, 6)
    for degree in (1, 2, 3):
        errors = []
        for e in eps:
            phi = e * base
            y = double_exponential(q, torch.linalg.matrix_exp(phi), v, 0.5).reshape(-1)
            approx = torch.linalg.matrix_exp(0.5 * twisted_generator(q, phi, degree)) @ v.reshape(-1)
            errors.append(float(torch.linalg.norm(y - approx)))
        slope = np.polyfit(np.log(eps), np.log(errors), 1)[0]
        assert abs(slope - (degree + 1)) < 0.15, (degree, slope)


@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_twist_error_order(degree):
    # Oracle: exact twist from matrix_exp; fitted log-log slope of the error in ε must be N + 1 within 0.15
    # (the next order bends the top of the ε range; measured within ~0.06).
    rng = np.random.default_rng(3)
    base = torch.from_numpy(rng.standard_normal((2, 4, 4)))
    eps = np.geomspace(0.05, 0.4, 6)
    errors = [float(bch_conjugation_error(e * base[0], e * base[1], degree)) for e in eps]
    slope = np.polyfit(np.log(eps), np.log(errors), 1)[0]
    assert abs(slope - (degree + 1)) < 0.15, slope


# --- 6. curvature ----------------------------------------------------------------------------------------------


def test_curvature_principal_log_against_the_series(gen):
    # Oracle: scipy logm (principal log) on each group commutator, compared to the engine's commutator_log(N):
    # the error falls by ≥ 10x per extra degree at ‖A‖ ≈ 0.05 (it is O(ε^{N+1})).
    a = _randn(gen, 2, 5, 3, 3, scale=0.03)
    f = curvature(a)
    assert f.shape == (2, 4, 3, 3)
    errors = [float((f - curvature(a, degree=n)).abs().max()) for n in (2, 3, 4, 5)]
    assert all(e1 > 10 * e2 for e1, e2 in itertools.pairwise(errors)), errors
    leading = a[..., 1:, :, :] @ a[..., :-1, :, :] - a[..., :-1, :, :] @ a[..., 1:, :, :]
    assert float((curvature(a, degree=2) - leading).abs().max()) < 1e-16  # degree 2 is [A_{i+1}, A_i] exactly


def test_curvature_matches_a_direct_logm(gen):
    # Oracle: scipy.linalg.logm of expm(A1) expm(A0) expm(−A1) expm(−A0) computed with scipy; 1e-12 relative.
    a = _randn(gen, 2, 3, 3, scale=0.4)
    e = [scipy.linalg.expm(x) for x in a.numpy()]
    direct = np.real(scipy.linalg.logm(e[1] @ e[0] @ np.linalg.inv(e[1]) @ np.linalg.inv(e[0])))
    assert np.linalg.norm(curvature(a)[0].numpy() - direct) / np.linalg.norm(direct) < 1e-12


def test_curvature_series_gradients(gen):
    # Oracle: central differences through the engine's torch evaluation.
    a = _randn(gen, 3, 2, 2, scale=0.3).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: curvature(x, degree=3), (a,))


def test_flat_connection_has_zero_curvature_and_trivial_holonomy(gen):
    # Closed form: an abelian pure gauge S_ℓ = e^{σ_ℓ X} gives commuting edges A_ℓ = (σ_{ℓ+1} − σ_ℓ) X, so F = 0
    # and H = I; tolerance 1e-14 absolute (expm of commuting matrices multiplied in either order).
    x = _randn(gen, 3, 3, scale=0.5)
    sigma = torch.cumsum(_randn(gen, 7), 0)
    a = (sigma[1:] - sigma[:-1])[:, None, None] * x
    assert float(curvature(a).abs().max()) < 1e-14
    assert float((holonomy(a, 0, 6) - torch.eye(3, dtype=F64)).abs().max()) < 1e-14


def test_generic_connection_is_curved(gen):
    # A generic pair does not commute: F ≈ [A_{i+1}, A_i] is of order ε² ≈ 0.1 here, far above rounding.
    a = _randn(gen, 4, 3, 3, scale=0.3)
    assert float(curvature(a).abs().max()) > 1e-2
    assert float((holonomy(a, 0, 4) - torch.eye(3, dtype=F64)).abs().max()) > 1e-2


# --- 7. holonomy -------------------------------------------------------------------------------------------------


def test_two_step_holonomy_is_the_exponential_of_the_curvature(gen):
    # Oracle: matrix_exp(F_a) with F_a from logm; tolerance 1e-12 (a logm/expm round trip).
    a = _randn(gen, 5, 3, 3, scale=0.3)
    f = curvature(a)
    for start in range(4):
        assert _rel(holonomy(a, start, start + 2), torch.linalg.matrix_exp(f[start])) < 1e-12


def test_holonomy_against_a_second_transport_is_trivial_for_pure_gauge_and_covariant(gen):
    # Oracles: (i) a pure-gauge connection e^{A_ℓ} = S_{ℓ+1}S_ℓ⁻¹ with the cached coarse transport C = S_b S_a⁻¹
    # gives H = I (tolerance 1e-12: logm round trips); (ii) the first-order fused cache C = e^{ΣA} gives
    # H ≈ e^{½Σ_{ℓ>ℓ'}[A_ℓ, A_ℓ']} ≠ I; (iii) under a gauge change H ↦ S_b H S_b⁻¹ (1e-11 relative, logm).
    m, d = 5, 3
    s = torch.linalg.matrix_exp(_randn(gen, m + 1, d, d, scale=0.15))
    edges = s[1:] @ torch.linalg.inv(s[:-1])
    a = torch.from_numpy(np.stack([np.real(scipy.linalg.logm(e)) for e in edges.numpy()]))
    coarse = s[4] @ torch.linalg.inv(s[1])
    assert float((holonomy(a, 1, 4, coarse) - torch.eye(d, dtype=F64)).abs().max()) < 1e-12

    generic = _randn(gen, m, d, d, scale=0.3)
    fused = torch.linalg.matrix_exp(generic[1:4].sum(0))
    h = holonomy(generic, 1, 4, fused)
    assert float((h - torch.eye(d, dtype=F64)).abs().max()) > 1e-2
    g2 = torch.linalg.matrix_exp(_randn(gen, m + 1, d, d, scale=0.1))
    new_edges = g2[1:] @ torch.linalg.matrix_exp(generic) @ torch.linalg.inv(g2[:-1])
    new_a = torch.from_numpy(np.stack([np.real(scipy.linalg.logm(e)) for e in new_edges.numpy()]))
    new_fused = g2[4] @ fused @ torch.linalg.inv(g2[1])
    assert _rel(holonomy(new_a, 1, 4, new_fused), g2[4] @ h @ torch.linalg.inv(g2[4])) < 1e-11


# --- validation -----------------------------------------------------------------------------------------------


def test_validation_messages(gen):
    a = _randn(gen, 3, 2, 2)
    t = prefix_transports(0.1 * a)
    q = _randn(gen, 4, 2)
    with pytest.raises(TypeError, match="generators must be a torch tensor, got ndarray"):
        prefix_transports(np.zeros((3, 2, 2)))
    with pytest.raises(TypeError, match=r"generators must be a real floating tensor, got dtype torch\.int64"):
        prefix_transports(torch.zeros(3, 2, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match=r"generators must hold square matrices \(shape \[\.\.\., d, d\]\), got shape"):
        prefix_transports(torch.zeros(3, 2, 3, dtype=F64))
    with pytest.raises(ValueError, match=r"generators must hold at least one edge .* got shape \(0, 2, 2\)"):
        prefix_transports(torch.zeros(0, 2, 2, dtype=F64))
    with pytest.raises(ValueError, match="generators must be finite, got 1 non-finite entry"):
        prefix_transports(torch.tensor([[[0.0, float("nan")], [0.0, 0.0]]], dtype=F64))
    with pytest.raises(ValueError, match=r"i must be an integer in \[0, 3\], got 4"):
        transport(t, 4, 0)
    with pytest.raises(ValueError, match=r"keys must have shape \[\.\.\., 4, 2\] to match transports"):
        transported_scores(q, _randn(gen, 3, 2), t)
    with pytest.raises(ValueError, match=r"offsets must be nonzero integers with \|delta\| <= n - 1 = 3, got 4"):
        banded_transported_scores(q, q, t, (1, 4))
    # one offsets validator for the package (workbench.nn._primitives.check_offsets): ValueError for bad values,
    # TypeError for something that is not a sequence of integers
    with pytest.raises(
        ValueError, match=r"offsets must be a non-empty sequence of distinct nonzero integers, got \(1, 1\)"
    ):
        banded_transported_scores(q, q, t, (1, 1))
    with pytest.raises(
        ValueError, match=r"offsets must be a non-empty sequence of distinct nonzero integers, got \(\)"
    ):
        banded_transported_scores(q, q, t, ())
    with pytest.raises(TypeError, match=r"offsets must hold integers, got 1.0 in \(1.0, -1\)"):
        multiscale_generator(_randn(gen, 4, 2), (1.0, -1))
    with pytest.raises(TypeError, match=r"offsets must be a non-empty sequence of distinct nonzero integers, got 2"):
        multiscale_generator(_randn(gen, 4, 1), 2)
    with pytest.raises(ValueError, match=r"offsets must be nonzero integers with \|delta\| <= n - 1 = 3, got -5"):
        multiscale_generator(_randn(gen, 4, 2), (1, -5))
    with pytest.raises(ValueError, match=r"levels must be an integer in \[0, 62\], got -1"):
        multiscale_offsets(-1)
    gen_q = multiscale_generator(_randn(gen, 4, 2), (-1, 1))
    with pytest.raises(ValueError, match=r"t must be in \[0, inf\), got -1.0"):
        double_exponential(gen_q, t, q, -1.0)
    with pytest.raises(ValueError, match=r"t must be >= 0, got minimum -0\.5"):
        double_exponential(gen_q, t, q, torch.tensor(-0.5, dtype=F64))
    with pytest.raises(ValueError, match="method must be one of 'dense', 'uniformization', 'expmv', got 'pade'"):
        double_exponential(gen_q, t, q, 1.0, method="pade")
    with pytest.raises(ValueError, match=r"generator must have shape \[\.\.\., 4, 4\] to match transports"):
        conjugated_generator(torch.zeros(3, 3, dtype=F64), t)
    with pytest.raises(ValueError, match=r"generator must have shape \[\.\.\., 3, 3\] to match phis"):
        twisted_generator(torch.zeros(4, 4, dtype=F64), a)
    with pytest.raises(ValueError, match=r"degree must be an integer in \[1, 10\], got 0"):
        twist_generator(a[0], a[1], 0)
    with pytest.raises(ValueError, match=r"generators must hold at least two edges .* got shape \(1, 2, 2\)"):
        curvature(a[:1])
    with pytest.raises(ValueError, match=r"stop must be an integer in \[2, 3\], got 1"):
        holonomy(a, 1, 1)
    # R_x(π) R_z(π/2) R_x(−π) R_z(−π/2) = R_z(−π): eigenvalue −1 (twice), no real principal logarithm
    lx = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]], dtype=F64)
    lz = torch.tensor([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=F64)
    # curvature uses the log lens's principal_log, so it refuses exactly when the log lens does, and says why
    with pytest.raises(ValueError, match=r"group commutator at edge \(0,\) has no real principal logarithm \(") as info:
        curvature(torch.stack([np.pi / 2 * lz, np.pi * lx]))
    with pytest.raises(ValueError) as lens:
        principal_log(scipy.linalg.expm(-np.pi * lz.numpy()))
    assert str(info.value.__cause__) == str(lens.value)
    assert "use a truncated series (degree=N)" in str(info.value)


def test_overflow_and_singular_transports_are_value_errors(gen):
    """Review 3.5/3.7: matrix_exp overflow in the scan and singular transports / gauges raise a ValueError that
    names the argument (and, for the overflow, the largest generator norm), not a silent inf or a raw
    torch LinAlgError."""
    big = _randn(gen, 3, 2, 2, scale=0.1)
    big[1, 0, 0] = 800.0  # e^800 > float64 max ≈ e^709.8: matrix_exp overflows
    norm = float(torch.linalg.matrix_norm(big).max())
    with pytest.raises(
        ValueError, match=rf"generators are too large: .* \(largest Frobenius norm of a generator {norm:.6g}\)"
    ):
        prefix_transports(big)
    n, d = 4, 2
    singular = prefix_transports(_randn(gen, n - 1, d, d, scale=0.3)).clone()
    singular[2] = torch.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=F64)  # rank 1
    q, v = _randn(gen, n, d), _randn(gen, n, d)
    mixing = multiscale_generator(_randn(gen, n, 2), (-1, 1))
    invertible = r"transports must be invertible, got a singular matrix"
    with pytest.raises(ValueError, match=invertible):
        transport(singular, 0, 2)
    for method in ("dense", "uniformization", "expmv"):
        with pytest.raises(ValueError, match=invertible):
            double_exponential(mixing, singular, v, 0.5, method=method)
    with pytest.raises(ValueError, match=invertible):
        transported_scores(q, q, singular)
    with pytest.raises(ValueError, match=invertible):
        conjugated_generator(mixing, singular)
    with pytest.raises(ValueError, match=r"gauge must be invertible, got a singular matrix"):
        gauge_change(singular, prefix_transports(_randn(gen, n - 1, d, d)), q)
    with pytest.raises(ValueError, match=r"second must be invertible, got a singular matrix"):
        holonomy(_randn(gen, 3, d, d, scale=0.3), 0, 2, second=torch.zeros(d, d, dtype=F64))


# --- catalogue -------------------------------------------------------------------------------------------------

NAMES = [identity.name for identity in IDENTITIES]


def test_catalogue_names_and_metadata():
    assert NAMES == [
        "nn.gauge.conjugation",
        "nn.gauge.conjugation_bch_order",
        "nn.gauge.curvature_bch",
        "nn.gauge.covariance",
    ]
    for identity in IDENTITIES:
        assert identity.area == "nn" and identity.backends == ("torch",)
        assert "[RECON]" in identity.source and identity.statement
    assert [i.asymptotic for i in IDENTITIES] == [False, True, True, False]


@pytest.mark.parametrize("identity", IDENTITIES, ids=NAMES)
def test_every_claimed_step_holds(identity):
    claims = [step for step in identity.derive() if step.holds is not None]
    assert claims and all(step.holds for step in claims), [s.text for s in claims if not s.holds]


@pytest.mark.parametrize("identity", IDENTITIES, ids=NAMES)
def test_every_check_passes_at_small_scale(identity):
    result = identity.verify(np.random.default_rng(0), "small", "torch:cpu")
    assert result.passed, (result.residual, result.tolerance, result.rate, result.sizes)
    if identity.asymptotic:
        assert result.rate is not None and result.tolerance == 0.15
    else:
        assert result.residual <= result.tolerance <= 1e-12
