import numpy as np
import pytest
import scipy.sparse as sp
import scipy.special
from conftest import HAS_TORCH
from scipy.spatial import cKDTree

from workbench.backend import to_backend, to_numpy
from workbench.markov import dirichlet_form, gauss_kernel, markov_operator, squared_distances
from workbench.markov._beurling_deny import (
    BeurlingDenyParts,
    beurling_deny_scan,
    beurling_deny_split,
    killing_measure,
)


def _cloud(rng, n=30, beta=1.5):
    x = rng.standard_normal((n, 2))
    d = np.sqrt(squared_distances(x))
    return x, d, gauss_kernel(x, beta)  # K_ij = exp(−β‖x_i − x_j‖²)


def test_split_sums_to_the_dense_quadratic_forms(rng, backend):
    # Oracles (three routes to ℰ): fᵀ(diag(p) − K + diag(κ))f; Σ p_i f_i ((I − P)f)_i + Σ κ f²;
    # dirichlet_form + Σ κ f².  Tolerance: sums of ~450 positive terms of size O(1), plus the cancellation
    # of the quadratic-form route (relative 1e-12).
    x, d, k = _cloud(rng)
    f = np.sin(x[:, 0]) + x[:, 1] ** 2
    kappa = rng.uniform(0.0, 0.3, x.shape[0])
    p = k.sum(axis=1)
    routes = [
        f @ (np.diag(p) - k + np.diag(kappa)) @ f,
        np.sum(p * f * (f - markov_operator(k) @ f)) + np.sum(kappa * f * f),
        float(dirichlet_form(k, f)) + np.sum(kappa * f * f),
    ]
    args = [to_backend(a, backend) for a in (k, d)]
    for radius in (0.0, 0.3, 1.0, 100.0):
        parts = beurling_deny_split(*args, radius, to_backend(f, backend), killing=to_backend(kappa, backend))
        assert isinstance(parts, BeurlingDenyParts) and isinstance(parts.local, float)
        for route in routes:
            np.testing.assert_allclose(parts.local + parts.jump + parts.killing, route, rtol=1e-12)
            np.testing.assert_allclose(parts.total, route, rtol=1e-12)
        np.testing.assert_allclose(parts.killing, np.sum(kappa * f * f), rtol=1e-14)
    # The extreme radii: r = 0 leaves no local bond (distinct points); r ≥ max d leaves no jump.
    assert beurling_deny_split(k, d, 0.0, f).local == 0.0
    assert beurling_deny_split(k, d, d.max(), f).jump == 0.0


def test_split_is_a_bond_sum_by_hand():
    # Oracle: three points on a line, bonds listed by hand (lengths 1, 2, 3).
    x = np.array([0.0, 1.0, 3.0])
    d = np.abs(x[:, None] - x[None, :])
    k = np.exp(-0.5 * d**2)  # K_ij = exp(−β d²), β = 1/2
    f = np.array([1.0, -1.0, 2.0])
    bonds = {1.0: k[0, 1] * 4.0, 2.0: k[1, 2] * 9.0, 3.0: k[0, 2] * 1.0}
    parts = beurling_deny_split(k, d, 2.0, f, killing=np.array([0.0, 1.0, 0.5]))
    np.testing.assert_allclose(parts.local, bonds[1.0] + bonds[2.0], rtol=1e-15)  # d ≤ r is local (ties too)
    np.testing.assert_allclose(parts.jump, bonds[3.0], rtol=1e-15)
    np.testing.assert_allclose(parts.killing, 1.0 + 2.0, rtol=1e-15)


def test_scan_is_monotone_with_a_constant_total(rng, backend):
    # Laws: local(r) nondecreasing and jump(r) nonincreasing (prefix/suffix sums of nonnegative bond
    # energies, exact in floating point); total and killing constant; the split at each r equals the scan.
    _, d, k = _cloud(rng, n=40)
    f = rng.standard_normal(40)
    kappa = rng.uniform(0.0, 1.0, 40)
    radii = np.linspace(0.0, 1.2 * d.max(), 25)
    k_b, d_b, f_b, kappa_b = (to_backend(a, backend) for a in (k, d, f, kappa))
    scan = beurling_deny_scan(k_b, d_b, radii, f_b, killing=kappa_b)
    local, jump, killing, total = (to_numpy(getattr(scan, name)) for name in ("local", "jump", "killing", "total"))
    assert local.shape == jump.shape == killing.shape == total.shape == radii.shape
    assert np.all(np.diff(local) >= 0.0) and np.all(np.diff(jump) <= 0.0)
    assert np.all(total == total[0]) and np.all(killing == killing[0])
    assert local[0] == 0.0 and jump[-1] == 0.0
    np.testing.assert_allclose(local + jump + killing, total, rtol=1e-13)  # two summation orders
    for r, loc, jmp in zip(radii[::6], local[::6], jump[::6], strict=True):
        split = beurling_deny_split(k, d, r, f, killing=kappa)
        np.testing.assert_allclose([split.local, split.jump], [loc, jmp], rtol=1e-14, atol=1e-300)


def test_gauss_kernel_jump_part_is_a_gaussian_tail(rng):
    # Oracle: on a dense sample of the unit circle (dimension m = 1) with K = exp(−β d²) and smooth f, the
    # bond energy at length ρ scales as e^{−βρ²}ρ²·ρ^{m−1}, so the jump fraction at r = c/√β tends to the
    # upper regularised incomplete gamma Γ(m/2 + 1, c²)/Γ(m/2 + 1).  Measured agreement at N = 1000,
    # β = 400 is 0.1–1.4% for c ≤ 2 and 2.2% at c = 2.5 (sampling noise and curvature, O(1/√β)); tolerance
    # 6%, and 10% on the far tail c = 2.5 where few bonds remain.  The fraction decays strictly with c: a longer radius turns jumps into bonds.
    theta = rng.uniform(0.0, 2 * np.pi, 1000)
    x = np.column_stack([np.cos(theta), np.sin(theta)])
    beta = 400.0
    d = np.sqrt(squared_distances(x))
    k = np.exp(-beta * d**2)
    f = x[:, 0] + 0.5 * x[:, 1]
    c = np.array([0.5, 1.0, 1.5, 2.0, 2.5])
    scan = beurling_deny_scan(k, d, c / np.sqrt(beta), f)
    fraction = scan.jump / scan.total
    tail = scipy.special.gammaincc(1.5, c**2)
    np.testing.assert_allclose(fraction[:4], tail[:4], rtol=0.06)
    np.testing.assert_allclose(fraction[4], tail[4], rtol=0.10)
    assert np.all(np.diff(fraction) < 0.0)
    assert fraction[3] < 0.06  # at r = 2/√β the jump part is a small fraction


def test_dense_equals_sparse_on_a_truncated_kernel(rng):
    # Dense ≡ sparse on the same radius-truncated Gauss kernel (the sparse distances come from a k-d tree).
    x = rng.uniform(0.0, 3.0, (200, 2))
    beta, cutoff = 2.0, 1.0
    distances = sp.csr_array(cKDTree(x).sparse_distance_matrix(cKDTree(x), cutoff))
    kernel = distances.copy()
    kernel.data = np.exp(-beta * kernel.data**2)
    dense_d = np.sqrt(squared_distances(x))
    dense_k = np.where(dense_d <= cutoff, np.exp(-beta * dense_d**2), 0.0)
    f = np.cos(x[:, 0]) * x[:, 1]
    kappa = rng.uniform(0.0, 0.1, 200)
    radii = np.array([0.0, 0.2, 0.5, 0.9])
    sparse_scan = beurling_deny_scan(kernel, distances, radii, f, killing=kappa)
    dense_scan = beurling_deny_scan(dense_k, dense_d, radii, f, killing=kappa)
    for name in ("local", "jump", "killing", "total"):
        # Same bonds summed in a different order: rounding only.
        np.testing.assert_allclose(getattr(sparse_scan, name), getattr(dense_scan, name), rtol=1e-12)
    mixed = beurling_deny_split(kernel, dense_d, 0.5, f, killing=kappa)  # sparse kernel, dense distances
    np.testing.assert_allclose(mixed.jump, dense_scan.jump[2], rtol=1e-12)


def test_killing_measure_closed_form_and_the_submarkov_identity(rng, backend):
    # Closed form: P = diag(p + κ₀)⁻¹ K is sub-Markov and reversible w.r.t. π ∝ p + κ₀, with killing
    # κ = π(1 − P1) = κ₀/Z.  Identity (oracle: the dense quadratic form):
    # ⟨f, (I − P)f⟩_π = ½ Σ π_i P_ij (f_i − f_j)² + Σ κ_i f_i².
    _, d, k = _cloud(rng, n=25)
    np.fill_diagonal(k, 0.0)
    kappa0 = rng.uniform(0.0, 2.0, 25)
    mass = k.sum(axis=1) + kappa0
    p = k / mass[:, None]
    pi = mass / mass.sum()
    kappa = to_numpy(killing_measure(to_backend(p, backend), to_backend(pi, backend)))
    np.testing.assert_allclose(kappa, kappa0 / mass.sum(), rtol=1e-13, atol=1e-17)
    f = rng.standard_normal(25)
    quadratic = np.sum(pi * f * (f - p @ f))
    parts = beurling_deny_split(pi[:, None] * p, d, 0.5, f, killing=kappa)
    np.testing.assert_allclose(parts.total, quadratic, rtol=1e-12)
    np.testing.assert_allclose(parts.local + parts.jump + parts.killing, quadratic, rtol=1e-12)
    np.testing.assert_allclose(killing_measure(sp.csr_array(p), pi), kappa, rtol=1e-14, atol=1e-18)


def test_killing_measure_of_a_markov_operator_is_zero(rng):
    # Row-stochastic P kills nothing; rounding above 1 within tol is clipped, never a negative κ.
    _, _, k = _cloud(rng, n=10)
    pi = k.sum(axis=1) / k.sum()
    kappa = killing_measure(markov_operator(k), pi)
    assert np.all(kappa >= 0.0)
    np.testing.assert_allclose(kappa, 0.0, atol=1e-16)


def test_beurling_deny_rejects_bad_input():
    d = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    k = np.exp(-(d**2))
    f = np.ones(3)
    with pytest.raises(ValueError, match=r"kernel must be symmetric, got max \|kernel - kernel\^T\|"):
        beurling_deny_split(k + np.triu(k, 1), d, 1.0, f)
    with pytest.raises(ValueError, match=r"kernel must be symmetric"):
        beurling_deny_split(sp.csr_array(k + np.triu(k, 1)), d, 1.0, f)
    with pytest.raises(ValueError, match=r"kernel must be entrywise nonnegative, got minimum -1 at index \(0, 1\)"):
        beurling_deny_split(np.where(d == 1.0, -1.0, k), d, 1.0, f)
    with pytest.raises(ValueError, match=r"distances must be entrywise nonnegative"):
        beurling_deny_split(k, -d, 1.0, f)
    with pytest.raises(ValueError, match=r"distances must be symmetric"):
        beurling_deny_split(k, d + np.triu(d, 1), 1.0, f)
    with pytest.raises(ValueError, match=r"radius must be in \[0, inf\), got -0.5"):
        beurling_deny_split(k, d, -0.5, f)
    with pytest.raises(ValueError, match=r"radii must be entrywise nonnegative, got minimum -1 at index \(1,\)"):
        beurling_deny_scan(k, d, [0.5, -1.0], f)
    with pytest.raises(ValueError, match=r"kernel and distances must have the same shape, got \(3, 3\) and \(2, 2\)"):
        beurling_deny_split(k, d[:2, :2], 1.0, f)
    with pytest.raises(ValueError, match=r"kernel rows and f must have matching sizes, got 3 and 4"):
        beurling_deny_split(k, d, 1.0, np.ones(4))
    with pytest.raises(ValueError, match=r"kernel rows and killing must have matching sizes, got 3 and 2"):
        beurling_deny_split(k, d, 1.0, f, killing=np.ones(2))
    with pytest.raises(ValueError, match=r"killing must be entrywise nonnegative, got minimum -0.1 at index \(2,\)"):
        beurling_deny_split(k, d, 1.0, f, killing=np.array([0.0, 0.0, -0.1]))
    with pytest.raises(ValueError, match=r"kernel must be a square matrix"):
        beurling_deny_split(np.ones((3, 2)), d, 1.0, f)
    with pytest.raises(ValueError, match=r"f must be finite"):
        beurling_deny_split(k, d, 1.0, np.array([0.0, np.inf, 1.0]))
    sparse_d = sp.csr_array(np.where(d == 2.0, 0.0, d))  # the bond (0, 2) has no stored distance
    with pytest.raises(
        ValueError, match=r"distances must store an entry wherever kernel is positive, got kernel\[0, 2\] = 0.0183"
    ):
        beurling_deny_split(sp.csr_array(k), sparse_d, 1.0, f)


def test_killing_measure_rejects_bad_input():
    p = np.array([[0.2, 0.3], [0.3, 0.2]])
    message = r"P must be sub-stochastic \(rows summing to at most 1 within tol=1e-10\), got row 1 summing to 1.3"
    with pytest.raises(ValueError, match=message):
        killing_measure(np.array([[0.2, 0.3], [0.3, 1.0]]), np.ones(2))
    with pytest.raises(ValueError, match=r"P must be reversible with respect to pi"):
        killing_measure(p, np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"P must be reversible with respect to pi"):
        killing_measure(sp.csr_array(p), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"pi must be entrywise nonnegative"):
        killing_measure(p, np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match=r"P rows and pi must have matching sizes, got 2 and 3"):
        killing_measure(p, np.ones(3))
    with pytest.raises(ValueError, match=r"P must be entrywise nonnegative"):
        killing_measure(-p, np.ones(2))


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_beurling_deny_rejects_mixed_libraries():
    import torch

    d = np.array([[0.0, 1.0], [1.0, 0.0]])
    with pytest.raises(TypeError, match=r"inputs mix array libraries"):
        beurling_deny_split(np.exp(-d), torch.as_tensor(d), 1.0, np.ones(2))
    with pytest.raises(TypeError, match=r"must be numpy arrays when kernel or distances is sparse"):
        beurling_deny_split(sp.csr_array(np.exp(-d)), sp.csr_array(d), 1.0, torch.ones(2, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"pi must be a numpy array when P is sparse"):
        killing_measure(sp.csr_array(np.eye(2)), torch.ones(2, dtype=torch.float64))
