"""The log lens: principal logarithms, generator spectra, commutator maps and the Cartan/Iwasawa/JC splits.

Oracles: the generator a test map was built from (for W = e^A with A skew, angles |θ| < π, or A symmetric,
the principal log is A itself); ``scipy.linalg.expm`` for round trips; the Mercator series summed by hand
near the identity; closed forms for 2×2 examples; exact subspace membership (bit for bit) for the splits;
the degree-2 BCH term for the product forms; sympy's exact arithmetic for Jordan–Chevalley.
"""

import json
import math

import numpy as np
import pytest
import scipy.linalg
import sympy as sp

from workbench.backend import to_backend
from workbench.catalogue import fit_rate
from workbench.derivations.nn_log_lens import IDENTITIES
from workbench.lens import (
    adjacent_commutators,
    cartan_split,
    classify_map,
    commutator_norms,
    generator_spectrum,
    iwasawa_split,
    jordan_chevalley,
    log_lens,
    plot_commutator_heatmap,
    principal_log,
)

torch = pytest.importorskip("torch")


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def random_orthogonal(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def rotation_generator(rng, d, max_angle=0.9 * np.pi):
    blocks = np.zeros((d, d))
    for k in range(d // 2):
        theta = rng.uniform(-max_angle, max_angle)
        blocks[2 * k + 1, 2 * k], blocks[2 * k, 2 * k + 1] = theta, -theta
    q = random_orthogonal(rng, d)
    a = q @ blocks @ q.T
    return (a - a.T) / 2


def spd_generator(rng, d, spread=3.0):
    q = random_orthogonal(rng, d)
    s = (q * rng.uniform(-spread, spread, d)) @ q.T
    return (s + s.T) / 2


def rotation_with_angles(rng, angles):
    d = 2 * len(angles) + 1
    blocks = np.zeros((d, d))
    for k, theta in enumerate(angles):
        blocks[2 * k + 1, 2 * k], blocks[2 * k, 2 * k + 1] = theta, -theta
    q = random_orthogonal(rng, d)
    return q @ scipy.linalg.expm(blocks) @ q.T


# ---- principal_log: round trips --------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3, 5, 8, 17])
def test_rotation_log_recovers_its_generator(rng, d):
    """Oracle: W = e^A with A skew and angles |θ| < 0.9π, so log W = A.

    Tolerance 1e-12 relative: Schur form and atan2 are backward stable (a few ulps per angle); the log
    near |θ| = 0.9π is amplified by at most 1/(π − |θ|) ≈ 3.
    """
    a = rotation_generator(rng, d)
    w = scipy.linalg.expm(a)
    s = principal_log(w)
    assert s.dtype == np.float64
    assert np.array_equal(s.T, -s)  # exactly skew-symmetric
    assert rel(s, a) < 1e-12
    assert rel(scipy.linalg.expm(s), w) < 1e-12
    assert classify_map(w) == "orthogonal"
    assert np.array_equal(principal_log(w, "orthogonal"), s)


@pytest.mark.parametrize("d", [1, 2, 6, 20])
def test_spd_log_recovers_its_generator(rng, d):
    """Oracle: W = e^S with S symmetric (eigenvalues in [−3, 3]), so log W = S; expm round trip.

    Tolerance 1e-12 relative: eigh is backward stable; the condition number of W is at most e⁶ ≈ 400.
    """
    s_true = spd_generator(rng, d)
    w = scipy.linalg.expm(s_true)
    w = (w + w.T) / 2
    s = principal_log(w)
    assert np.array_equal(s, s.T)  # exactly symmetric
    assert rel(s, s_true) < 1e-12
    assert rel(scipy.linalg.expm(s), w) < 1e-12
    assert classify_map(w) == "spd"


@pytest.mark.parametrize("radius", [1e-8, 1e-3, 0.3, 0.6, 0.95])  # 0.95: the logm branch
def test_near_identity_log_matches_the_mercator_series(rng, radius):
    """Oracle: the Mercator series Σ_{k≤K} (−1)^{k+1} X^k / k summed by hand, X = W − I, ‖X‖₂ = radius,
    with K chosen so the tail radius^K / K is below 1e-17; and the expm round trip.

    Tolerance 1e-12 relative: both are accurate to a few ulps times ‖X‖/(1 − ‖X‖).  (scipy's logm alone
    loses ~1e-12 relative at ‖X‖ = 1e-3 and ~1e-7 at 1e-8, which is why ‖X‖ ≤ 0.9 uses quadrature.)
    """
    d = 6
    x = rng.standard_normal((d, d))
    x *= radius / np.linalg.norm(x, 2)
    w = np.eye(d) + x
    x = w - np.eye(d)  # exact (Sterbenz): the X that W actually stores, not the one rounded into it
    terms = (math.ceil(math.log(1e-17) / math.log(radius))) + 1
    series = np.zeros((d, d))
    power = np.eye(d)
    for k in range(1, terms + 1):
        power = power @ x
        series += (-1) ** (k + 1) * power / k
    s = principal_log(w, "near-identity")
    assert rel(s, series) < 1e-12
    assert rel(scipy.linalg.expm(s), w) < 1e-12
    assert classify_map(w) == "near-identity"
    assert np.array_equal(principal_log(w), s)


def test_general_map_without_negative_eigenvalues_round_trips(rng):
    """Oracle: expm round trip for a non-normal map with spectrum in the right half plane, ‖W − I‖₂ > 1.

    Tolerance 1e-12 relative: logm (inverse scaling and squaring) is accurate to ~κ ε, κ ~ 10² here.
    """
    w = 3 * np.eye(4) + np.triu(rng.standard_normal((4, 4)), 1)
    assert classify_map(w) == "general"
    assert rel(scipy.linalg.expm(principal_log(w)), w) < 1e-12


def test_two_by_two_rotation_log_is_theta_j():
    """Oracle: log R(θ) = θJ for |θ| < π (closed form), at angles up to 3.1; tolerance 1e-14 absolute
    (atan2 of exact-ish cos/sin)."""
    for theta in (-3.1, -1.0, 0.0, 0.5, 3.1):
        r = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        assert np.max(np.abs(principal_log(r) - theta * np.array([[0.0, -1.0], [1.0, 0.0]]))) < 1e-14


def test_torch_input_gives_float64_numpy(rng):
    """Oracle: the float64 numpy result on the same map; float32 weights need tol ≈ 1e-6 and then agree to
    float32 accuracy (tolerance 1e-5 relative: ~10 ulps of float32 through the log)."""
    a = rotation_generator(rng, 5, max_angle=2.0)
    w = scipy.linalg.expm(a)
    s64 = principal_log(torch.tensor(w, dtype=torch.float64))
    assert isinstance(s64, np.ndarray) and s64.dtype == np.float64
    assert np.array_equal(s64, principal_log(w))
    w32 = torch.tensor(w, dtype=torch.float32, requires_grad=True)
    with pytest.raises(ValueError, match="must be orthogonal"):
        principal_log(w32, "orthogonal")  # float32 rounding exceeds the default tol = 1e-10
    s32 = principal_log(w32, "orthogonal", tol=1e-6)
    assert s32.dtype == np.float64 and np.array_equal(s32.T, -s32)
    assert rel(s32, a) < 1e-5


# ---- principal_log: where no principal logarithm exists ---------------------------------------


def test_det_minus_one_has_no_real_log():
    with pytest.raises(ValueError, match=r"^no real logarithm: det = -1 "):
        principal_log(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match=r"no real logarithm: det = -1"):
        principal_log(np.array([[0.0, 1.0], [1.0, 0.0]]), "orthogonal")


def test_eigenvalue_minus_one_makes_the_log_not_unique(rng):
    with pytest.raises(ValueError, match=r"principal log not unique: W has eigenvalue -1 \(rotation angle π\)"):
        principal_log(np.diag([-1.0, -1.0, 1.0]))
    w = rotation_with_angles(rng, [np.pi, 0.4])  # a half turn hidden by a random change of basis
    with pytest.raises(ValueError, match="principal log not unique"):
        principal_log(w)
    # just inside the branch cut the log exists and is the one with angle 3.14
    w = rotation_with_angles(rng, [3.14, 0.4])
    assert rel(scipy.linalg.expm(principal_log(w)), w) < 1e-12


def test_negative_and_zero_eigenvalues_have_no_principal_log():
    w = np.array([[2.0, 1.0, 0.0], [0.0, -0.5, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match=r"^no real principal logarithm: eigenvalue -0\.5 on the negative real axis$"):
        principal_log(w)
    with pytest.raises(ValueError, match=r"no principal logarithm: W is singular"):
        principal_log(np.array([[1.0, 1.0], [0.0, 0.0]]))
    symmetric_indefinite = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    with pytest.raises(ValueError, match=r"eigenvalue -1 on the negative real axis"):
        principal_log(symmetric_indefinite)


def test_explicit_kind_is_checked_not_assumed():
    with pytest.raises(ValueError, match=r"W must be symmetric for kind='spd', got max \|W - W\^T\| = 1"):
        principal_log(np.array([[2.0, 1.0], [0.0, 2.0]]), "spd")
    with pytest.raises(ValueError, match=r"W must be positive definite for kind='spd', got eigenvalue -1 <= 0"):
        principal_log(np.array([[1.0, 2.0], [2.0, 1.0]]), "spd")
    with pytest.raises(ValueError, match=r"W must be orthogonal for kind='orthogonal', got max \|W\^T W - I\| = 3"):
        principal_log(2 * np.eye(2), "orthogonal")
    with pytest.raises(ValueError, match=r"kind='near-identity' needs \|\|W - I\|\|_2 < 1 .*, got 2$"):
        principal_log(3 * np.eye(2), "near-identity")


def test_input_validation_messages():
    with pytest.raises(ValueError, match=r"W must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(2, 3\)"):
        principal_log(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"W must be finite, got 1 non-finite entry \(first at index \(0, 1\)\)"):
        principal_log(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"W must be a single square matrix \(2-dimensional\), got shape \(2, 2, 2\)"):
        principal_log(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match=r"kind must be one of 'auto', 'orthogonal', 'spd', 'near-identity', got 'qr'"):
        principal_log(np.eye(2), "qr")
    with pytest.raises(ValueError, match=r"tol must be in \(0, inf\), got 0\.0"):
        principal_log(np.eye(2), tol=0.0)
    with pytest.raises(TypeError, match=r"tol must be a real number, got str"):
        classify_map(np.eye(2), tol="small")
    with pytest.raises(TypeError, match=r"W must be real-valued"):
        principal_log(np.eye(2) * (1 + 1j))


# ---- spectra ---------------------------------------------------------------------------------


def test_spectrum_splits_log_gains_and_frequencies():
    """Oracle: closed forms — [[a, −ω], [ω, a]] has eigenvalues a ± iω; a skew generator has zero log-gains
    (snapped exactly), a symmetric one zero frequencies and eigenvalues = eigvalsh (tolerance 1e-14)."""
    spectrum = generator_spectrum(np.array([[0.5, -2.0], [2.0, 0.5]]))
    assert np.max(np.abs(spectrum.eigenvalues - [0.5 + 2j, 0.5 - 2j])) < 1e-14
    assert spectrum.log_gains.tolist() == [0.5, 0.5]
    assert float(spectrum.spectral_abscissa) == 0.5 and float(spectrum.max_frequency) == pytest.approx(2.0, rel=1e-15)
    rng = np.random.default_rng(1)
    skew = rotation_generator(rng, 6)
    spectrum = generator_spectrum(skew)
    assert not np.any(spectrum.log_gains)
    assert np.all(np.diff(spectrum.frequencies) <= 0)  # sorted: decreasing imaginary part among equal gains
    sym = spd_generator(rng, 5)
    spectrum = generator_spectrum(sym)
    assert not np.any(spectrum.frequencies)
    assert np.max(np.abs(spectrum.log_gains - np.linalg.eigvalsh(sym)[::-1])) < 1e-14


def test_spectrum_of_a_stack_equals_the_loop(rng):
    """Oracle: batched ≡ loop (bit for bit: the same LAPACK call per matrix)."""
    stack = rng.standard_normal((3, 2, 4, 4))
    batched = generator_spectrum(torch.tensor(stack))
    assert batched.eigenvalues.shape == (3, 2, 4) and batched.spectral_abscissa.shape == (3, 2)
    for i in range(3):
        for j in range(2):
            assert np.array_equal(batched.eigenvalues[i, j], generator_spectrum(stack[i, j]).eigenvalues)


def test_spectrum_validation():
    with pytest.raises(ValueError, match=r"S must have at least 2 dimensions, got shape \(3,\)"):
        generator_spectrum(np.ones(3))
    with pytest.raises(ValueError, match=r"S must be a square matrix"):
        generator_spectrum(np.ones((2, 3)))


# ---- commutators -----------------------------------------------------------------------------


def test_commutator_map_is_symmetric_with_zero_diagonal(rng):
    """Oracle: the definition ‖S_ℓS_m − S_mS_ℓ‖_F computed directly; H symmetric with an exact zero
    diagonal; normalised entries obey Böttcher–Wenzel ‖[X,Y]‖_F ≤ √2‖X‖_F‖Y‖_F."""
    gens = [rng.standard_normal((5, 5)) for _ in range(4)]
    H = commutator_norms(gens)
    assert np.array_equal(H, H.T) and not np.any(np.diag(H))
    for i in range(4):
        for j in range(4):
            assert H[i, j] == pytest.approx(np.linalg.norm(gens[i] @ gens[j] - gens[j] @ gens[i]), rel=1e-14)
    normalised = commutator_norms(np.stack(gens), normalize=True)
    assert np.all(normalised <= math.sqrt(2))
    norms = [np.linalg.norm(g) for g in gens]
    assert normalised[0, 1] == pytest.approx(H[0, 1] / (norms[0] * norms[1]), rel=1e-14)
    assert np.array_equal(adjacent_commutators(gens), np.diag(H, 1))
    assert np.array_equal(adjacent_commutators(gens, normalize=True), np.diag(normalised, 1))


def test_simultaneously_diagonal_generators_commute(rng):
    """Oracle: Q D_ℓ Qᵀ share eigenvectors, so every commutator vanishes; tolerance 1e-14 relative to
    ‖S_ℓ‖‖S_m‖ (rounding of the products)."""
    q = random_orthogonal(rng, 6)
    gens = [q @ np.diag(rng.standard_normal(6)) @ q.T for _ in range(4)]
    assert np.max(commutator_norms(gens, normalize=True)) < 1e-14
    assert np.max(adjacent_commutators([torch.tensor(g) for g in gens], normalize=True)) < 1e-14
    zero = commutator_norms([np.zeros((2, 2)), np.eye(2)], normalize=True)  # 0/0 := 0
    assert not np.any(zero)


def test_commutator_validation():
    with pytest.raises(ValueError, match=r"generators\[0\] and generators\[1\] must have matching sizes, got 2 and 3"):
        commutator_norms([np.eye(2), np.eye(3)])
    with pytest.raises(ValueError, match=r"generators must hold at least one matrix, got 0"):
        adjacent_commutators([])
    with pytest.raises(ValueError, match=r"generators must be a 3-dimensional array, got shape \(2, 2\)"):
        commutator_norms(np.eye(2))
    with pytest.raises(ValueError, match=r"generators\[1\] must be finite"):
        commutator_norms([np.eye(2), np.full((2, 2), np.inf)])


def test_heatmap_has_labels_and_a_colorbar():
    import matplotlib.pyplot as plt

    H = np.array([[0.0, 1.0, np.nan], [1.0, 0.0, np.nan], [np.nan, np.nan, np.nan]])
    ax = plot_commutator_heatmap(H, labels=["a", "b", "c"], title="t")
    assert ax.get_xlabel() == "layer m" and ax.get_ylabel() == "layer ℓ" and ax.get_title() == "t"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert len(ax.figure.axes) == 2  # heatmap + colorbar
    _, given = plt.subplots()
    assert plot_commutator_heatmap(np.zeros((2, 2)), ax=given) is given
    plt.close("all")
    with pytest.raises(ValueError, match=r"H must be entrywise nonnegative, got minimum -1"):
        plot_commutator_heatmap(-np.eye(2))
    with pytest.raises(ValueError, match=r"labels and H must have matching sizes, got 1 and 2"):
        plot_commutator_heatmap(np.zeros((2, 2)), labels=["x"])
    with pytest.raises(ValueError, match=r"H must be a square matrix"):
        plot_commutator_heatmap(np.zeros((2, 3)))


# ---- splits ----------------------------------------------------------------------------------


def test_cartan_parts_sum_to_a_and_are_trace_orthogonal(rng):
    """Oracle: K + P = A exactly ((a−b)/2 + (a+b)/2 loses nothing for these magnitudes up to 1 ulp),
    K skew and P symmetric bit for bit, tr(KᵀP) = 0 to 1e-14 relative (cancelling sum of d² products),
    Pythagoras ‖A‖² = ‖K‖² + ‖P‖² to 1e-14."""
    a = rng.standard_normal((7, 7))
    split = cartan_split(torch.tensor(a))
    assert np.array_equal(split.K.T, -split.K) and np.array_equal(split.P.T, split.P)
    assert rel(split.K + split.P, a) < 1e-15
    assert abs(np.trace(split.K.T @ split.P)) < 1e-14 * np.linalg.norm(split.K) * np.linalg.norm(split.P)
    norms = split.norms
    assert norms["K"] ** 2 + norms["P"] ** 2 == pytest.approx(np.linalg.norm(a) ** 2, rel=1e-14)


def test_iwasawa_parts_live_in_their_subspaces_and_are_unique(rng):
    """Oracles: membership bit for bit (skew, diagonal, strictly upper); the sum is A to 2 ulps; and
    uniqueness: splitting K₀ + H₀ + N₀ built from random parts returns those parts (to 2 ulps)."""
    a = rng.standard_normal((6, 6))
    split = iwasawa_split(a)
    assert np.array_equal(split.K.T, -split.K)
    assert np.array_equal(split.H, np.diag(np.diag(split.H)))
    assert not np.any(np.tril(split.N))
    assert rel(split.K + split.H + split.N, a) < 4 * np.finfo(float).eps
    lower = np.tril(rng.standard_normal((6, 6)), -1)
    parts = (lower - lower.T, np.diag(rng.standard_normal(6)), np.triu(rng.standard_normal((6, 6)), 1))
    again = iwasawa_split(sum(parts))
    for got, truth in zip(again.parts, parts, strict=True):
        assert np.max(np.abs(got - truth)) <= 4 * np.finfo(float).eps * np.max(np.abs(truth))


@pytest.mark.parametrize("split_of", [cartan_split, iwasawa_split], ids=["cartan", "iwasawa"])
def test_product_form_error_is_the_bch_commutator_term(rng, split_of):
    """Oracle: BCH, ‖e^{εX₁}⋯e^{εX_k} − e^{εA}‖_F = ε²‖½Σ_{i<j}[X_i, X_j]‖_F + O(ε³): fitted slope 2
    (tolerance 0.05) and error / (bch_leading) → 1 (tolerance 2e-3 at ε = 10⁻³, the O(ε) correction)."""
    a = rng.standard_normal((5, 5)) / math.sqrt(5)
    epsilons = [1e-1, 1e-2, 1e-3]
    splits = [split_of(eps * a) for eps in epsilons]
    errors = [s.product_error() for s in splits]
    assert fit_rate(epsilons, errors) == pytest.approx(2.0, abs=0.05)
    assert errors[-1] / splits[-1].bch_leading() == pytest.approx(1.0, abs=2e-3)


def test_commuting_parts_fuse_exactly():
    """Oracle: a diagonal A has K = N = 0 (and P = A), so the product form is e^A: error 0 to 1e-15."""
    a = np.diag([0.3, -1.0, 2.0])
    for split in (iwasawa_split(a), cartan_split(a)):
        assert split.bch_leading() == 0.0
        assert split.product_error() < 1e-15 * np.linalg.norm(scipy.linalg.expm(a))


def test_split_validation():
    with pytest.raises(ValueError, match=r"A must be a square matrix"):
        iwasawa_split(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"A must be finite"):
        cartan_split(np.array([[np.nan]]))


def test_jordan_chevalley_exact():
    """Oracle: sympy exact arithmetic — D + N = A, [D, N] = 0, N nilpotent (N^d = 0), D diagonalisable;
    a diagonalisable A has N = 0."""
    a = sp.Matrix([[3, 1, 0], [0, 3, 0], [1, 0, 2]])
    split = jordan_chevalley(a)
    assert split.D + split.N == a
    assert (split.D * split.N - split.N * split.D).is_zero_matrix
    assert (split.N**3).is_zero_matrix and not split.N.is_zero_matrix
    assert split.D.is_diagonalizable()
    assert jordan_chevalley(np.array([[1.0, 2.0], [2.0, 1.0]])).N.is_zero_matrix
    half = jordan_chevalley([[0.5, 0.1], [0, 0.5]])  # floats read as their shortest decimal
    assert half.N == sp.Matrix([[0, sp.Rational(1, 10)], [0, 0]])


def test_jordan_chevalley_validation():
    with pytest.raises(ValueError, match=r"A must be a square matrix \(shape \[\.\.\., n, n\]\), got shape \(1, 2\)"):
        jordan_chevalley([[1, 2]])
    with pytest.raises(ValueError, match=r"A must be at most 6x6 for the exact Jordan–Chevalley split, got 7x7"):
        jordan_chevalley(np.eye(7))
    with pytest.raises(TypeError, match=r"A must have integer, rational or finite float entries, got str"):
        jordan_chevalley([["a", 1], [0, 1]])
    with pytest.raises(TypeError, match=r"finite float entries, got float"):
        jordan_chevalley([[np.nan, 1], [0, 1]])
    with pytest.raises(ValueError, match=r"A must be a square matrix of numbers, got rows of unequal length"):
        jordan_chevalley([[1, 2], [3]])
    with pytest.raises(TypeError, match=r"A must be a square matrix of numbers, got int"):
        jordan_chevalley(3)


# ---- the report ------------------------------------------------------------------------------


def test_log_lens_never_raises_on_mixed_input(rng):
    """Every kind of map in one list: the report carries a kind or a reason per map, NaN commutators where
    a log is missing, and the adjacent norm of the two valid neighbours equals the direct commutator
    (oracle: commutator_norms on their logs, bit for bit)."""
    rotation = scipy.linalg.expm(rotation_generator(rng, 3))
    spd = scipy.linalg.expm(spd_generator(rng, 3))
    spd = (spd + spd.T) / 2
    near = np.eye(3) + 0.1 * rng.standard_normal((3, 3))
    weights = [
        rotation,
        torch.tensor(spd),
        near,
        np.diag([1.0, 1.0, -1.0]),  # det -1
        np.diag([-1.0, -1.0, 1.0]),  # angle π
        np.array([[2.0, 1.0, 0.0], [0.0, -0.5, 0.0], [0.0, 0.0, 1.0]]),  # negative eigenvalue
        np.ones((2, 3)),  # not square
        np.full((3, 3), np.nan),  # not finite
        [[1.0, 2.0], [3.0]],  # ragged
        "not a matrix",
        np.eye(2) * 2.0,  # a valid map of another size
    ]
    report = log_lens(weights)
    kinds = [entry.kind for entry in report.entries]
    assert kinds == ["orthogonal", "spd", "near-identity", None, None, None, None, None, None, None, "spd"]
    reasons = [entry.reason for entry in report.entries]
    assert reasons[:3] == [None, None, None] and reasons[-1] is None
    assert reasons[3].startswith("no real logarithm: det = -1")
    assert reasons[4].startswith("principal log not unique")
    assert reasons[5] == "no real principal logarithm: eigenvalue -0.5 on the negative real axis"
    assert reasons[6].startswith("weights[6] must be a square matrix")
    assert reasons[7].startswith("weights[7] must be finite")
    assert reasons[8].startswith("weights[8] must be a numeric array")
    assert reasons[9].startswith("weights[9] must be a numeric array")
    direct = commutator_norms(report.logs[:3])
    assert np.array_equal(report.commutators[:3, :3], direct)
    assert np.array_equal(report.adjacent[:2], np.diag(direct, 1))
    assert np.all(np.isnan(report.adjacent[2:]))
    assert np.isnan(report.commutators[3, 3]) and report.commutators[10, 10] == 0.0
    assert np.isnan(report.commutators[0, 10])  # sizes differ
    first = report.entries[0]
    assert first.log_norm == pytest.approx(np.linalg.norm(first.log), rel=1e-15)
    assert first.spectral_abscissa == 0.0  # a rotation has no log-gain
    assert set(first.cartan) == {"K", "P"} and first.cartan["P"] < 1e-15
    assert set(first.iwasawa) == {"K", "H", "N"}
    assert report.entries[6].shape == (2, 3) and report.entries[8].shape == ()
    json.dumps(report.rows())  # JSON-ready (NaN allowed by the json module)


def test_log_lens_accepts_a_stack_and_a_kind(rng):
    stack = np.stack([scipy.linalg.expm(rotation_generator(rng, 4)) for _ in range(3)])
    report = log_lens(torch.tensor(stack), kind="orthogonal")
    assert [entry.kind for entry in report.entries] == ["orthogonal"] * 3
    assert report.adjacent.shape == (2,) and np.all(np.isfinite(report.adjacent))
    forced = log_lens([np.diag([2.0, 3.0])], kind="orthogonal")
    assert forced.entries[0].reason.startswith("W must be orthogonal for kind='orthogonal'")
    assert forced.adjacent.shape == (0,)


def test_log_lens_validation():
    with pytest.raises(TypeError, match=r"weights must be a sequence of square matrices or a stack .*, got int"):
        log_lens(3)
    with pytest.raises(ValueError, match=r"weights must hold at least one matrix, got 0"):
        log_lens([])
    with pytest.raises(ValueError, match=r"kind must be one of"):
        log_lens([np.eye(2)], kind="schur")
    with pytest.raises(ValueError, match=r"tol must be in \(0, inf\), got -1\.0"):
        log_lens([np.eye(2)], tol=-1.0)


# ---- the catalogue ---------------------------------------------------------------------------

NAMES = [identity.name for identity in IDENTITIES]


def test_identity_records():
    assert NAMES == [
        "nn.log_lens.principal_log",
        "nn.log_lens.iwasawa",
        "nn.log_lens.cartan",
        "nn.log_lens.product_form",
    ]
    for identity in IDENTITIES:
        assert identity.area == "nn"
        assert any(tag in identity.source for tag in ("[SEED", "[RECON", "[DERIVED", "[CODE"))
    assert [identity.asymptotic for identity in IDENTITIES] == [False, False, False, True]


@pytest.mark.parametrize("identity", IDENTITIES, ids=NAMES)
def test_every_claimed_step_holds(identity):
    claims = [step for step in identity.derive() if step.holds is not None]
    assert claims, "derive() must claim at least one equality"
    assert all(step.holds for step in claims), [step.text for step in claims if not step.holds]


@pytest.mark.parametrize("identity", IDENTITIES, ids=NAMES)
def test_every_check_passes_at_small_scale(identity, backend):
    result = identity.verify(np.random.default_rng(0), "small", backend)
    assert result.passed, (result.residual, result.tolerance, result.sizes)


def test_the_principal_log_statement_is_checked_beyond_rotations_and_spd_maps(rng):
    """The generalised statement: log e^A = A for any real A with spectrum in the strip |Im λ| < π (not only skew
    or symmetric A), and the Mercator series for ρ(W − I) < 1 even where ‖W − I‖₂ > 1.

    Oracles: the generator A itself (a non-normal A with ‖A‖₂ = 2 < π) and the Mercator series summed by hand
    through 160 terms for X = 0.5·I + 1.5·(unit-norm strictly upper part), ρ(X) = 0.5 < 1 < ‖X‖₂.  Tolerance
    1e-12 relative, as in the check; measured ~1e-14.
    """
    from workbench.derivations.nn_log_lens import _log_of_exponential_error, _mercator_error, _near_identity_x

    a = rng.standard_normal((6, 6))
    a *= 2.0 / np.linalg.norm(a, 2)
    assert classify_map(scipy.linalg.expm(a)) == "general"
    assert _log_of_exponential_error(a, None, "numpy") < 1e-12
    _, x = _near_identity_x(rng, 6)
    assert max(abs(np.linalg.eigvals(x))) == pytest.approx(0.5) and np.linalg.norm(x, 2) > 1.0
    assert _mercator_error(x, "numpy") < 1e-12
    statement = IDENTITIES[0].statement
    assert (
        r"(-\infty, 0]" in statement
        and r"\rho(W - I) < 1" in statement
        and r"|\operatorname{Im}\lambda| < \pi" in statement
    )


def test_hypotheses_of_the_log_lens_catalogue():
    """The two splits hold for every real square matrix (no hypotheses); the log and the product form state theirs,
    each with an outside case where the check fails by a wide margin (all cases also run in test_hypotheses.py)."""
    by_name = {identity.name: identity for identity in IDENTITIES}
    assert by_name["nn.log_lens.iwasawa"].hypotheses == () and by_name["nn.log_lens.cartan"].hypotheses == ()
    for name, count in (("nn.log_lens.principal_log", 3), ("nn.log_lens.product_form", 2)):
        hypotheses = by_name[name].hypotheses
        assert len(hypotheses) == count and all(h.outside is not None for h in hypotheses)
        for number, hypothesis in enumerate(hypotheses):
            outcome = hypothesis.outside(np.random.default_rng(number))
            assert not outcome.passed and outcome.residual > 5 * outcome.tolerance, (name, number, outcome)


def test_checks_have_power(rng):
    """Negative control: a rotation log with one angle shifted by 2π (a non-principal log) is a valid
    logarithm but fails the principal-log oracle by orders of magnitude."""
    theta = 2.0
    w = scipy.linalg.expm(np.array([[0.0, -theta], [theta, 0.0]]))
    wrong = (theta - 2 * np.pi) * np.array([[0.0, -1.0], [1.0, 0.0]])
    assert rel(scipy.linalg.expm(wrong), w) < 1e-13  # still a logarithm
    assert rel(principal_log(to_backend(w, "numpy")), wrong) > 1.0


# ---- the package ------------------------------------------------------------------------------


def test_bch_leading_term_is_the_degree_two_part_of_bch_many(rng):
    """The lens writes ½Σ_{i<j}[X_i, X_j] out (it sits below workbench.lie); oracle: the degree-2 component of
    workbench.lie.bch_many evaluated on the same parts, bit for bit (same terms, same order of summation)."""
    from workbench.lens._splits import _bch_degree2
    from workbench.lie import bch_many

    for factors in (2, 3):
        parts = tuple(rng.standard_normal((4, 4)) for _ in range(factors))
        assert np.array_equal(_bch_degree2(parts), bch_many(factors, 2).component(2).evaluate(*parts))


@pytest.mark.parametrize("package", ["workbench.lens", "workbench.nn"])
def test_the_package_index_names_exactly_its_exports(package):
    """The one-line-per-name index of the package docstring (``name[, name] -- summary``) against ``__all__``."""
    import importlib
    import re

    module = importlib.import_module(package)
    indexed = []
    for line in module.__doc__.splitlines():
        match = re.match(r"^(\w+(?:, \w+)*)\s+-- ", line)
        if match:
            indexed.extend(match.group(1).split(", "))
    assert len(indexed) == len(set(indexed)), "a name is indexed twice"
    assert set(indexed) == set(module.__all__)
