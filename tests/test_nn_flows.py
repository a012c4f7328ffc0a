"""Givens flows, SPD maps and symplectic maps (workbench.nn: _givens, _spd, _symplectic) and their catalogue identities.

Oracles: hand-built dense rotation matrices, ``scipy.linalg.expm`` (Padé) of the generators,
``torch.linalg.eigvalsh`` for spectra, the symplectic form itself, the BCH rate law (fitted slopes), and
``torch.autograd.gradcheck`` (finite differences) for gradients.  Everything in float64.
"""

import math

import numpy as np
import pytest
import scipy.linalg
import torch
from torch.func import functional_call

from workbench.catalogue import fit_rate
from workbench.derivations.nn_flows import IDENTITIES
from workbench.lie import bch_many
from workbench.nn import (
    GivensFlowMixer,
    GivensProduct,
    SPDMap,
    SymplecticMap,
    brick_planes,
    gershgorin_bound,
    givens_generator,
    givens_product,
    random_planes,
    symplectic_form,
)

F64 = torch.float64
EPS = float(np.finfo(np.float64).eps)


def dense_rotation(d, i, j, theta):
    """The plane rotation written out by hand (numpy): G_ii = G_jj = cos, G_ij = sin, G_ji = -sin."""
    g = np.eye(d)
    g[i, i] = g[j, j] = math.cos(theta)
    g[i, j], g[j, i] = math.sin(theta), -math.sin(theta)
    return g


def angles_of(rng, m, *batch, scale=math.pi):
    return torch.as_tensor(rng.uniform(-scale, scale, (*batch, m)), dtype=F64)


# ---- planes ------------------------------------------------------------------------------------------------


def test_brick_planes_layout():
    # The pattern is pinned: even layers (0,1),(2,3),...; odd layers (1,2),(3,4),...; d layers give dim SO(d).
    assert brick_planes(5, 3) == ((0, 1), (2, 3), (1, 2), (3, 4), (0, 1), (2, 3))
    assert brick_planes(2, 3) == ((0, 1), (0, 1))  # odd layers of d = 2 are empty
    for d in (4, 7):
        assert len(brick_planes(d, d)) == d * (d - 1) // 2


def test_random_planes_are_seeded_matchings():
    planes = random_planes(7, 4, seed=3)
    assert planes == random_planes(7, 4, seed=3)
    assert len(planes) == 4 * 3
    for layer in range(4):
        touched = [c for pair in planes[3 * layer : 3 * layer + 3] for c in pair]
        assert len(set(touched)) == 6  # each layer is a matching: pairwise disjoint planes
    assert all(i < j for i, j in planes)


# ---- givens_product ----------------------------------------------------------------------------------------


def test_product_matches_hand_built_rotations():
    # Oracle: the product of hand-built dense rotations (numpy), left to right; planes overlap and
    # include a reversed pair (3, 1).  Rounding only: 1e-14 absolute on entries of size <= 1.
    rng = np.random.default_rng(0)
    planes = [(0, 1), (1, 2), (3, 1), (0, 4), (2, 3), (0, 1)]
    angles = angles_of(rng, len(planes))
    expected = np.eye(5)
    for (i, j), theta in zip(planes, angles.tolist(), strict=True):
        expected = expected @ dense_rotation(5, i, j, theta)
    w = givens_product(angles, planes, 5)
    np.testing.assert_allclose(w.as_matrix().numpy(), expected, atol=1e-14)
    x = torch.as_tensor(rng.standard_normal((4, 5)), dtype=F64)
    np.testing.assert_allclose(w.apply(x).numpy(), x.numpy() @ expected.T, atol=1e-14)
    np.testing.assert_allclose(w(x).numpy(), w.apply(x).numpy(), atol=0)


def test_single_rotation_is_the_exponential_of_its_generator():
    # Oracle: scipy.linalg.expm of θ(E_ij − E_ji); also for i > j.  Tolerance 1e-15 (one 2×2 block).
    for i, j, theta in ((0, 2, 2.5), (2, 0, -1.0), (1, 3, 0.3)):
        generator = givens_generator(torch.tensor([theta], dtype=F64), [(i, j)], 4).numpy()
        np.testing.assert_allclose(scipy.linalg.expm(generator), dense_rotation(4, i, j, theta), atol=1e-15)


def test_generator_is_the_sum_of_plane_generators():
    # Oracle: the definition entry by entry; repeated planes add.
    angles = torch.tensor([[0.5, -1.0, 2.0]], dtype=F64)
    a = givens_generator(angles, [(0, 1), (1, 2), (0, 1)], 3)[0]
    expected = torch.tensor([[0.0, 2.5, 0.0], [-2.5, 0.0, -1.0], [0.0, 1.0, 0.0]], dtype=F64)
    assert torch.equal(a, expected)
    assert torch.equal(a, -a.mT)


def test_batched_equals_loop_and_broadcasts():
    # Oracle: the same product built one angle set at a time.  Angles [3, m] with x [5, 1, d] broadcast to
    # [5, 3, d].  Same arithmetic, so 1e-15.
    rng = np.random.default_rng(1)
    planes = brick_planes(6, 4)
    angles = angles_of(rng, len(planes), 3)
    x = torch.as_tensor(rng.standard_normal((5, 1, 6)), dtype=F64)
    got = givens_product(angles, planes, 6).apply(x)
    assert got.shape == (5, 3, 6)
    for b in range(3):
        single = givens_product(angles[b], planes, 6)
        np.testing.assert_allclose(got[:, b].numpy(), single.apply(x[:, 0]).numpy(), atol=1e-15)
        np.testing.assert_allclose(
            givens_product(angles, planes, 6).as_matrix()[b].numpy(), single.as_matrix().numpy(), atol=1e-15
        )


def test_transpose_is_the_inverse():
    # Oracle: W^T W x = x and the dense transpose.  Tolerance 1e-14 (two products of m rotations).
    rng = np.random.default_rng(2)
    planes = (*random_planes(9, 5, seed=0), (0, 8), (8, 3))
    w = givens_product(angles_of(rng, len(planes)), planes, 9)
    x = torch.as_tensor(rng.standard_normal((3, 9)), dtype=F64)
    np.testing.assert_allclose(w.apply(w.apply(x), transpose=True).numpy(), x.numpy(), atol=1e-14)
    np.testing.assert_allclose(w.apply(x, transpose=True).numpy(), x.numpy() @ w.as_matrix().numpy(), atol=1e-14)


@pytest.mark.parametrize("d", [8, 16, 33])
def test_product_is_exactly_orthogonal(d):
    # Guarantee: Q^T Q = I to 1e-14 in float64 and ‖Qx‖ = ‖x‖ to 1e-14 relative; angles anywhere in [−π, π),
    # d layers of random matchings (d²/2 rotations).  Each coordinate meets ~d rotations of a few ulps each.
    rng = np.random.default_rng(d)
    planes = random_planes(d, d, seed=d)
    w = givens_product(angles_of(rng, len(planes)), planes, d)
    q = w.as_matrix()
    assert float((q.mT @ q - torch.eye(d, dtype=F64)).abs().max()) < 1e-14
    x = torch.as_tensor(rng.standard_normal((50, d)), dtype=F64)
    rel = (w.apply(x).norm(dim=-1) - x.norm(dim=-1)) / x.norm(dim=-1)
    assert float(rel.abs().max()) < 1e-14
    assert abs(float(torch.linalg.det(q)) - 1.0) < 1e-13  # SO(d), not just O(d)


def test_disjoint_planes_equal_expm_of_generator():
    # Oracle: scipy.linalg.expm (Padé) of A = Σ θ_k (E_ij − E_ji) for pairwise disjoint planes at large angles
    # (not a small-angle statement).  Relative Frobenius error 1e-14: the rotations commute, so equality is
    # exact in exact arithmetic; what remains is expm's rounding (~1e-15).
    rng = np.random.default_rng(4)
    for planes, d in (([(0, 3), (1, 5), (2, 4)], 6), (random_planes(12, 1, seed=1), 12), (brick_planes(9, 1), 9)):
        angles = angles_of(rng, len(planes), 2)  # batched
        w = givens_product(angles, planes, d)
        a = w.generator().numpy()
        for b in range(2):
            exact = scipy.linalg.expm(a[b])
            got = w.as_matrix()[b].numpy()
            assert np.linalg.norm(got - exact) / np.linalg.norm(exact) < 1e-14
        assert w.n_stages == 1


def test_stages_factor_the_product_exactly():
    # Oracle: Π_s expm(B_s) (scipy) over the stages of disjoint planes; Σ_s B_s = A.  Relative 1e-14.
    rng = np.random.default_rng(5)
    planes = brick_planes(7, 5)
    w = givens_product(angles_of(rng, len(planes)), planes, 7)
    stages = w.stage_generators()
    assert len(stages) == w.n_stages == 5
    product = np.eye(7)
    for b in stages:
        product = product @ scipy.linalg.expm(b.numpy())
    assert np.linalg.norm(w.as_matrix().numpy() - product) / np.linalg.norm(product) < 1e-14
    np.testing.assert_allclose(sum(stages).numpy(), w.generator().numpy(), atol=1e-15)


def test_overlapping_planes_differ_from_expm_at_second_order():
    # Oracle: BCH.  With angles εu on overlapping planes, ‖ΠG − e^A‖ = (ε²/2)‖Σ_{a<b}[B_a, B_b]‖ + O(ε³):
    # nonzero, fitted slope 2 ± 0.1 over ε ∈ [0.025, 0.2] (the cubic term bends the fit by ~ε).  Replacing A by
    # the engine's degree-2 and degree-3 multi-factor BCH of the stages raises the slope to 3 and 4 (± 0.15).
    rng = np.random.default_rng(6)
    d = 6
    planes = brick_planes(d, 3)
    u = torch.as_tensor(rng.standard_normal(len(planes)), dtype=F64)
    eps = [0.2, 0.1, 0.05, 0.025]
    errors = {1: [], 2: [], 3: []}
    for e in eps:
        w = givens_product(e * u, planes, d)
        q, stages = w.as_matrix(), w.stage_generators()
        errors[1].append(float(torch.linalg.norm(q - torch.linalg.matrix_exp(w.generator()))))
        for degree in (2, 3):
            omega = bch_many(len(stages), degree).evaluate(*stages)
            errors[degree].append(float(torch.linalg.norm(q - torch.linalg.matrix_exp(omega))))
    assert errors[1][0] > 1e-3  # a real defect, not rounding
    assert abs(fit_rate(eps, errors[1]) - 2.0) < 0.1
    assert abs(fit_rate(eps, errors[2]) - 3.0) < 0.15
    assert abs(fit_rate(eps, errors[3]) - 4.0) < 0.15
    # the leading term itself: ΠG − e^A ≈ ½ Σ_{a<b} [B_a, B_b] at ε = 0.025, to O(ε³) relative ~ ε
    w = givens_product(0.025 * u, planes, d)
    b = w.stage_generators()
    half = 0.5 * sum(b[i] @ b[j] - b[j] @ b[i] for i in range(len(b)) for j in range(i + 1, len(b)))
    defect = w.as_matrix() - torch.linalg.matrix_exp(w.generator())
    assert float(torch.linalg.norm(defect - half) / torch.linalg.norm(half)) < 0.1


def test_givens_gradcheck():
    # Oracle: finite differences (gradcheck, float64, default tolerances) for angles and x, overlapping planes.
    rng = np.random.default_rng(7)
    planes = [(0, 1), (1, 2), (2, 3), (0, 1), (3, 0)]
    angles = angles_of(rng, len(planes), 2).requires_grad_()
    x = torch.as_tensor(rng.standard_normal((2, 4)), dtype=F64).requires_grad_()
    assert torch.autograd.gradcheck(lambda a, v: givens_product(a, planes, 4).apply(v), (angles, x))
    assert torch.autograd.gradcheck(lambda a, v: givens_product(a, planes, 4).apply(v, transpose=True), (angles, x))
    assert torch.autograd.gradcheck(lambda a: givens_product(a, planes, 4).as_matrix(), (angles,))


def test_givens_validation_messages():
    angles = torch.zeros(2, dtype=F64)
    with pytest.raises(ValueError, match=r"d must be an integer >= 2, got 1"):
        givens_product(angles, [(0, 1), (1, 0)], 1)
    with pytest.raises(ValueError, match=r"planes must hold coordinates in \[0, 3\], got \(0, 4\) at position 1"):
        givens_product(angles, [(0, 1), (0, 4)], 4)
    with pytest.raises(ValueError, match=r"planes must pair two different coordinates, got \(2, 2\) at position 0"):
        givens_product(angles, [(2, 2), (0, 1)], 4)
    with pytest.raises(ValueError, match=r"planes must be an integer array of shape \[m, 2\] with m >= 1, got shape"):
        givens_product(angles, [0, 1, 2], 4)
    with pytest.raises(TypeError, match=r"planes must be an integer array of shape \[m, 2\], got dtype float64"):
        givens_product(angles, [(0.0, 1.0), (1.0, 2.0)], 4)
    with pytest.raises(
        ValueError, match=r"angles must have last dimension 2 \(one angle per plane\), got shape \(3,\)"
    ):
        givens_product(torch.zeros(3), [(0, 1), (1, 2)], 4)
    with pytest.raises(TypeError, match=r"angles must be a real floating tensor, got dtype torch.int64"):
        givens_generator(torch.zeros(2, dtype=torch.long), [(0, 1), (1, 2)], 4)
    w = givens_product(angles, [(0, 1), (1, 2)], 4)
    with pytest.raises(ValueError, match=r"x must have last dimension 4, got shape \(2, 3\)"):
        w.apply(torch.zeros(2, 3))
    with pytest.raises(TypeError, match=r"x must be a torch tensor, got ndarray"):
        w.apply(np.zeros(4))
    with pytest.raises(ValueError, match=r"layers must be an integer >= 1, got 0"):
        brick_planes(4, 0)
    with pytest.raises(TypeError, match=r"x must be a floating-point \(or complex\) tensor, got dtype torch.int64"):
        w.apply(torch.ones(2, 4, dtype=torch.long))


def test_givens_rejects_non_finite_angles():
    # A NaN/inf angle would propagate silently through cos/sin into every rotated coordinate.
    planes = [(0, 1), (1, 2)]
    with pytest.raises(ValueError, match=r"angles must be finite, got 1 non-finite entry \(first at index \(1,\)\)"):
        givens_product(torch.tensor([0.1, float("nan")], dtype=F64), planes, 3)
    with pytest.raises(ValueError, match=r"angles must be finite, got 1 non-finite entry \(first at index \(0, 0\)\)"):
        GivensProduct(torch.tensor([[float("inf"), 0.2]], dtype=F64), tuple(planes), 3)
    with pytest.raises(ValueError, match=r"angles must be finite, got 2 non-finite entries"):
        givens_generator([float("nan"), float("-inf")], planes, 3)
    mixer = GivensFlowMixer(3, layers=1).double()
    with torch.no_grad():
        mixer.angles[0] = float("nan")
    with pytest.raises(ValueError, match=r"angles must be finite, got 1 non-finite entry \(first at index \(0,\)\)"):
        mixer(torch.ones(2, 3, dtype=F64))


# ---- GivensFlowMixer ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["brick", "random"])
def test_mixer_features_is_orthogonal(pattern):
    # Guarantee: Q^T Q = I to 1e-14 (float64) and ‖y‖ = ‖x‖ per sample to 1e-14 relative; y = x Q^T.
    torch.manual_seed(0)
    mixer = GivensFlowMixer(16, planes=pattern).double()
    q = mixer.matrix().detach()
    assert float((q.mT @ q - torch.eye(16, dtype=F64)).abs().max()) < 1e-14
    x = torch.randn(3, 7, 16, dtype=F64)
    y = mixer(x).detach()
    assert float(((y.norm(dim=-1) - x.norm(dim=-1)) / x.norm(dim=-1)).abs().max()) < 1e-14
    np.testing.assert_allclose(y.numpy(), (x @ q.mT).numpy(), atol=1e-14)
    np.testing.assert_allclose(mixer(mixer(x), inverse=True).detach().numpy(), x.numpy(), atol=1e-14)


def test_mixer_tokens_mixes_the_sequence_axis():
    # Oracle: y = Q x along the token axis for every feature column (einsum with the dense Q); each sample's
    # Frobenius norm preserved to 1e-14 relative.
    torch.manual_seed(1)
    mixer = GivensFlowMixer(6, layers=4, mix="tokens").double()
    q = mixer.matrix().detach()
    x = torch.randn(2, 6, 5, dtype=F64)
    y = mixer(x).detach()
    np.testing.assert_allclose(y.numpy(), torch.einsum("ij,bjf->bif", q, x).numpy(), atol=1e-14)
    rel = (y.flatten(1).norm(dim=-1) - x.flatten(1).norm(dim=-1)) / x.flatten(1).norm(dim=-1)
    assert float(rel.abs().max()) < 1e-14
    np.testing.assert_allclose(mixer(y, inverse=True).detach().numpy(), x.numpy(), atol=1e-14)


def test_mixer_follows_input_dtype():
    # float32 parameters applied to float64 input: the angles are cast, the rotations built in float64, so the
    # map is orthogonal to float64 rounding (1e-14), not float32's.
    torch.manual_seed(2)
    mixer = GivensFlowMixer(8)
    x = torch.randn(4, 8, dtype=F64)
    y = mixer(x).detach()
    assert y.dtype == F64
    assert float(((y.norm(dim=-1) - x.norm(dim=-1)) / x.norm(dim=-1)).abs().max()) < 1e-14
    assert mixer(x.float()).dtype == torch.float32


def test_mixer_zero_angles_is_identity_and_generator_is_skew():
    mixer = GivensFlowMixer(5).double()
    a = mixer.generator().detach()
    assert torch.equal(a, -a.mT)
    with torch.no_grad():
        mixer.angles.zero_()
    x = torch.randn(2, 5, dtype=F64)
    assert torch.equal(mixer(x), x)


def test_mixer_gradcheck():
    # Oracle: finite differences (gradcheck, float64) through both mixing modes, wrt angles and input.
    torch.manual_seed(3)
    for mix, shape in (("features", (2, 5)), ("tokens", (2, 5, 3))):
        mixer = GivensFlowMixer(5, layers=3, mix=mix).double()
        angles = mixer.angles.detach().clone().requires_grad_()
        x = torch.randn(*shape, dtype=F64, requires_grad=True)
        assert torch.autograd.gradcheck(lambda a, v, m=mixer: functional_call(m, {"angles": a}, (v,)), (angles, x))


def test_mixer_validation_messages():
    with pytest.raises(ValueError, match=r"planes must be one of 'brick', 'random', got 'diagonal'"):
        GivensFlowMixer(4, planes="diagonal")
    with pytest.raises(ValueError, match=r"mix must be one of 'features', 'tokens', got 'heads'"):
        GivensFlowMixer(4, mix="heads")
    with pytest.raises(ValueError, match=r"d must be an integer >= 2, got 1"):
        GivensFlowMixer(1)
    with pytest.raises(ValueError, match=r"x must have shape \[\.\.\., 4\] \(features mixed\), got \(2, 5\)"):
        GivensFlowMixer(4)(torch.zeros(2, 5))
    with pytest.raises(ValueError, match=r"x must have shape \[\.\.\., 4, features\] \(tokens mixed\), got \(4,\)"):
        GivensFlowMixer(4, mix="tokens")(torch.zeros(4))


# ---- SPD maps ----------------------------------------------------------------------------------------------


def test_gershgorin_bound_is_an_upper_bound():
    # Oracle: torch.linalg.eigvalsh.  Bound >= λ_max on a batch of random symmetric matrices; equality for
    # diagonal S and for [[a, b], [b, a]] (to 1e-15).
    rng = np.random.default_rng(8)
    m = torch.as_tensor(rng.standard_normal((20, 6, 6)), dtype=F64)
    s = m + m.mT
    assert bool((gershgorin_bound(s) >= torch.linalg.eigvalsh(s)[..., -1] - 1e-12).all())
    diag = torch.diag(torch.tensor([-1.0, 3.0, 0.5], dtype=F64))
    assert float(gershgorin_bound(diag)) == 3.0
    ab = torch.tensor([[0.3, -1.2], [-1.2, 0.3]], dtype=F64)
    assert abs(float(gershgorin_bound(ab) - torch.linalg.eigvalsh(ab)[-1])) < 1e-15


def test_spd_uncapped_is_expm_of_symmetric_part():
    # Oracle: scipy.linalg.expm((M + Mᵀ)/2); relative 1e-13; eigenvalues > 0 (SPD).
    torch.manual_seed(4)
    layer = SPDMap(7).double()
    m = layer.weight.detach().numpy()
    exact = scipy.linalg.expm(0.5 * (m + m.T))
    w = layer.matrix().detach().numpy()
    assert np.linalg.norm(w - exact) / np.linalg.norm(exact) < 1e-13
    assert np.allclose(w, w.T, rtol=0, atol=1e-14)
    assert float(np.linalg.eigvalsh(w).min()) > 0
    x = torch.randn(3, 7, dtype=F64)
    np.testing.assert_allclose(layer(x).detach().numpy(), x.numpy() @ exact, atol=1e-13)


@pytest.mark.parametrize("bound", ["gershgorin", "eigvalsh"])
@pytest.mark.parametrize("cap", [1.5, 4.0])
def test_spd_lipschitz_cap(bound, cap):
    # Guarantee: ‖W‖₂ = λ_max(W) ≤ L (eigvalsh oracle) and ‖Wx − Wy‖ ≤ L‖x − y‖ on random pairs, both to
    # L·(1 + 1e-12) (matrix_exp rounding); W SPD.  With the exact bound the cap is attained (λ_max = L to
    # 1e-12); Gershgorin certifies lipschitz_bound() ≥ ‖W‖₂ and lipschitz_bound() = L when the cap binds.
    torch.manual_seed(5)
    layer = SPDMap(12, lipschitz=cap, bound=bound).double()
    with torch.no_grad():
        layer.weight.mul_(6.0)  # the uncapped spectrum is far past log L
    w = layer.matrix().detach()
    eigenvalues = torch.linalg.eigvalsh(w)
    assert float(eigenvalues.min()) > 0
    assert float(eigenvalues.max()) <= cap * (1 + 1e-12)
    x, y = torch.randn(200, 12, dtype=F64), torch.randn(200, 12, dtype=F64)
    ratio = ((layer(x) - layer(y)).norm(dim=-1) / (x - y).norm(dim=-1)).detach()
    assert float(ratio.max()) <= cap * (1 + 1e-12)
    assert float(eigenvalues.max()) * (1 - 1e-12) <= layer.lipschitz_bound() <= cap * (1 + 1e-12)
    assert layer.lipschitz_bound() == pytest.approx(cap, rel=1e-12)
    if bound == "eigvalsh":
        assert float(eigenvalues.max()) == pytest.approx(cap, rel=1e-12)


def test_spd_cap_inactive_below_the_bound():
    # If b(S) ≤ log L the cap changes nothing: W equals the uncapped exp(S) exactly (scale factor is 1).
    torch.manual_seed(6)
    capped, free = SPDMap(5, lipschitz=1e6).double(), SPDMap(5).double()
    with torch.no_grad():
        free.weight.copy_(capped.weight)
    assert torch.equal(capped.matrix(), free.matrix())


@pytest.mark.parametrize("bound", ["gershgorin", "eigvalsh"])
def test_spd_gradcheck(bound):
    # Oracle: finite differences (gradcheck, float64) wrt M and x, cap binding (the scale depends on M).
    torch.manual_seed(7)
    layer = SPDMap(4, lipschitz=1.5, bound=bound).double()
    weight = (3.0 * layer.weight.detach()).requires_grad_()
    x = torch.randn(2, 4, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda w, v: functional_call(layer, {"weight": w}, (v,)), (weight, x))


def test_spd_validation_messages():
    with pytest.raises(ValueError, match=r"lipschitz must be in \(1, inf\), got 0.5"):
        SPDMap(3, lipschitz=0.5)
    with pytest.raises(ValueError, match=r"lipschitz must be in \(1, inf\), got 1.0"):
        SPDMap(3, lipschitz=1.0)
    with pytest.raises(ValueError, match=r"bound must be one of 'gershgorin', 'eigvalsh', got 'power'"):
        SPDMap(3, bound="power")
    with pytest.raises(ValueError, match=r"x must have last dimension 3, got shape \(2, 4\)"):
        SPDMap(3)(torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"S must have shape \[\.\.\., d, d\] with d >= 1, got \(2, 3\)"):
        gershgorin_bound(torch.zeros(2, 3))


def test_gershgorin_rejects_empty_and_non_finite():
    # A 0×0 S has no eigenvalue to bound (amax of nothing); a NaN/inf entry would give a meaningless bound.
    with pytest.raises(ValueError, match=r"S must have shape \[\.\.\., d, d\] with d >= 1, got \(0, 0\)"):
        gershgorin_bound(torch.zeros(0, 0))
    with pytest.raises(ValueError, match=r"S must be finite, got 1 non-finite entry \(first at index \(0, 1\)\)"):
        gershgorin_bound(torch.tensor([[1.0, float("nan")], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"S must be finite, got 3 non-finite entries \(first at index \(1, 0, 0\)\)"):
        gershgorin_bound(torch.stack([torch.eye(2), torch.full((2, 2), float("inf")).triu()]))


# ---- symplectic maps ---------------------------------------------------------------------------------------


def test_symplectic_form():
    J = symplectic_form(4, dtype=F64)
    assert torch.equal(J.mT, -J)
    assert torch.equal(J @ J, -torch.eye(4, dtype=F64))
    assert J[0, 2] == 1 and J[2, 0] == -1


@pytest.mark.parametrize("d", [2, 6, 16])
def test_symplectic_preserves_the_form(d):
    # Guarantee: WᵀJW = J to 1e-14·‖W‖_F² (rounding of W scales with its size) and det W = 1 to 16·d·eps
    # (slogdet sums d rounded logs); y = x Wᵀ; W = expm(JH) against scipy (relative 1e-13).
    torch.manual_seed(d)
    layer = SymplecticMap(d).double()
    w = layer.matrix().detach()
    J = symplectic_form(d, dtype=F64)
    assert float(torch.linalg.norm(w.mT @ J @ w - J)) < 1e-14 * float(torch.linalg.norm(w)) ** 2
    sign, logdet = torch.linalg.slogdet(w)
    assert float(sign) == 1.0 and abs(float(logdet)) < 16 * d * EPS
    m = layer.weight.detach().numpy()
    exact = scipy.linalg.expm(J.numpy() @ (0.5 * (m + m.T)))
    assert np.linalg.norm(w.numpy() - exact) / np.linalg.norm(exact) < 1e-13
    x = torch.randn(3, d, dtype=F64)
    np.testing.assert_allclose(layer(x).detach().numpy(), x.numpy() @ exact.T, atol=1e-12)


def test_symplectic_gradcheck():
    # Oracle: finite differences (gradcheck, float64) wrt M and x.
    torch.manual_seed(9)
    layer = SymplecticMap(4).double()
    weight = layer.weight.detach().clone().requires_grad_()
    x = torch.randn(2, 4, dtype=F64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda w, v: functional_call(layer, {"weight": w}, (v,)), (weight, x))


def test_symplectic_validation_messages():
    with pytest.raises(ValueError, match=r"d must be an even integer >= 2, got 3"):
        SymplecticMap(3)
    with pytest.raises(ValueError, match=r"d must be an even integer >= 2, got 5"):
        symplectic_form(5)
    with pytest.raises(ValueError, match=r"x must have last dimension 4, got shape \(3,\)"):
        SymplecticMap(4)(torch.zeros(3))
    with pytest.raises(TypeError, match=r"x must be a torch tensor, got list"):
        SymplecticMap(4)([0.0] * 4)


# ---- input validation of the layers ------------------------------------------------------------------------

LAYERS = {
    "givens": lambda: GivensFlowMixer(4, layers=2).double(),
    "givens-tokens": lambda: GivensFlowMixer(4, layers=2, mix="tokens").double(),
    "spd": lambda: SPDMap(4, lipschitz=2.0).double(),
    "symplectic": lambda: SymplecticMap(4).double(),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layers_reject_non_floating_and_non_finite_x(name):
    # Integer x used to fail deep inside torch (matmul dtype mismatch / scatter); complex x is not a real map's
    # input; NaN/inf x used to pass through silently.  Each now raises naming x and what it got.
    layer = LAYERS[name]()
    with pytest.raises(TypeError, match=r"x must be a real floating-point tensor, got dtype torch.int64"):
        layer(torch.ones(2, 4, 4, dtype=torch.long))
    with pytest.raises(TypeError, match=r"x must be a real floating-point tensor, got dtype torch.complex128"):
        layer(torch.ones(2, 4, 4, dtype=torch.complex128))
    x = torch.ones(2, 4, 4, dtype=F64)  # [..., 4] for features, [..., 4, features] for tokens
    x[1, 2, 3] = float("nan")
    with pytest.raises(ValueError, match=r"x must be finite, got 1 non-finite entry \(first at index \(1, 2, 3\)\)"):
        layer(x)
    with pytest.raises(TypeError, match=r"x must be a torch tensor, got list"):
        layer([[0.0] * 4])


@pytest.mark.parametrize("name", ["spd", "symplectic"])
def test_exponential_layers_follow_float32_and_reject_half_precision(name):
    # The layers follow the input's dtype (parameters cast): a float64 layer on float32 x returns float32 and
    # agrees with the float64 map to float32 rounding (oracle: the float64 output, tolerance 1e-5 relative).
    # Half precision is refused: matrix_exp in float16 loses W (the symplectic map returned NaN before).
    torch.manual_seed(11)
    layer = LAYERS[name]()
    x = torch.randn(5, 4, dtype=F64)
    with torch.no_grad():
        y32, y64 = layer(x.float()), layer(x)
    assert y32.dtype == torch.float32
    assert float((y32.double() - y64).norm() / y64.norm()) < 1e-5
    for dtype in (torch.float16, torch.bfloat16):
        with pytest.raises(TypeError, match=rf"x must have dtype torch.float32 or torch.float64 .*got dtype {dtype}"):
            layer(x.to(dtype))


# ---- catalogue identities ----------------------------------------------------------------------------------


def test_identity_names():
    assert [i.name for i in IDENTITIES] == [
        "nn.givens.orthogonal",
        "nn.givens.exp_commuting",
        "nn.givens.bch_defect",
        "nn.spd.lipschitz",
        "nn.symplectic.preserves_form",
    ]
    assert {i.area for i in IDENTITIES} == {"nn"}


def test_spd_identity_catches_an_over_shrinking_cap(monkeypatch):
    # Mutation check of nn.spd.lipschitz: a spectral bound twice too large still gives ‖W‖₂ ≤ L, but the cap is
    # no longer attained for bound='eigvalsh' (λ_max(W) = √L), which the verification must now reject.
    from workbench.nn import _spd as _flows

    spd = next(i for i in IDENTITIES if i.name == "nn.spd.lipschitz")
    assert spd.verify(np.random.default_rng(0), "small", "torch:cpu").passed
    original = _flows.SPDMap._spectral_bound
    monkeypatch.setattr(_flows.SPDMap, "_spectral_bound", lambda self, S: 2.0 * original(self, S))
    outcome = spd.verify(np.random.default_rng(0), "small", "torch:cpu")
    assert not outcome.passed and outcome.residual > 0.1, outcome


def test_spd_cap_with_a_negative_spectral_bound(monkeypatch):
    # Issue 37, item 2.  Oracle: the closed form of a diagonal S = diag(−1, −10): ‖e^{cS}‖₂ = max(e^{−c}, e^{−10c}).
    # The former statement's cap c = min(1, log L / b(S)) with b(S) = λ_max(S) = −1 < 0 is c = −log 2: it flips the
    # spectrum, ‖e^{cS}‖₂ = e^{10 log 2} = 1024 > L = 2.  The statement as now written, c = log L / max(b(S), log L),
    # gives c = 1, and so does the layer (both bounds): ‖W‖₂ = e^{−1} ≤ L.  Tolerance 1e-12 relative (expm rounding).
    import workbench.derivations.nn_flows as flows

    cap, spectrum = 2.0, torch.tensor([-1.0, -10.0], dtype=F64)
    S, b = torch.diag(spectrum), float(spectrum.max())

    def norm(c):
        return float(torch.linalg.matrix_norm(torch.linalg.matrix_exp(c * S), ord=2))

    flipped = min(1.0, math.log(cap) / b)
    assert flipped == pytest.approx(-math.log(2.0), rel=1e-15)
    assert norm(flipped) == pytest.approx(1024.0, rel=1e-12) and norm(flipped) > cap
    assert flows._statement_cap(b, cap) == 1.0 and norm(flows._statement_cap(b, cap)) == pytest.approx(math.exp(-1))
    for bound in ("gershgorin", "eigvalsh"):
        layer = SPDMap(2, lipschitz=cap, bound=bound).double()
        with torch.no_grad():
            layer.weight.copy_(S)
        assert torch.equal(layer.generator(), S)
        assert float(torch.linalg.matrix_norm(layer.matrix().detach(), ord=2)) == pytest.approx(math.exp(-1), rel=1e-12)
    # the statement states the corrected cap and its hypotheses
    spd = next(i for i in IDENTITIES if i.name == "nn.spd.lipschitz")
    assert r"c = \frac{\log L}{\max\bigl(b(S), \log L\bigr)}" in spd.statement and r"\min" not in spd.statement
    assert r"S = S^\top" in spd.statement and "L > 1" in spd.statement
    # the identity's check compares the layer with the statement's cap, on a weight with b(S) < 0 too: with the
    # former cap in place of the statement's it must fail (the layer keeps c = 1 where that cap is negative)
    assert spd.verify(np.random.default_rng(0), "small", "torch:cpu").passed
    monkeypatch.setattr(flows, "_statement_cap", lambda bound, cap: min(1.0, math.log(cap) / bound))
    outcome = spd.verify(np.random.default_rng(0), "small", "torch:cpu")
    assert not outcome.passed and outcome.residual > 1.0, outcome


def test_bch_defect_identity_checks_the_constant(monkeypatch):
    # nn.givens.bch_defect now checks ρ = defect / ‖½Σ_{a<b}[B_a, B_b]‖ → 1 besides the slope: doubling the stage
    # generators used for the bracket (the slope is untouched) gives ρ = ¼ and must fail.
    defect = next(i for i in IDENTITIES if i.name == "nn.givens.bch_defect")
    outcome = defect.verify(np.random.default_rng(0), "small", "torch:cpu")
    assert outcome.passed and abs(outcome.sizes["rho"] - 1.0) < 1e-2 and abs(outcome.rate - 2.0) < 0.1
    original = GivensProduct.stage_generators
    monkeypatch.setattr(GivensProduct, "stage_generators", lambda self: [2.0 * b for b in original(self)])
    outcome = defect.verify(np.random.default_rng(0), "small", "torch:cpu")
    assert not outcome.passed and outcome.sizes["rho"] == pytest.approx(0.25, rel=1e-2), outcome


def test_spd_derivation_claims_have_content():
    # The Gershgorin, norm and cap steps are sympy claims (decided, not asserted) and all hold.
    from workbench.derivations.nn_flows import _derive_spd

    steps = _derive_spd()
    claims = [s.text for s in steps if s.holds is not None]
    for key in ("Gershgorin", "‖e^{cS}‖₂", "cap binding", "below the cap", "cap is attained"):
        assert any(key in text for text in claims), key
    assert all(s.holds for s in steps if s.holds is not None)


@pytest.mark.parametrize("identity", IDENTITIES, ids=lambda i: i.name)
def test_identity_derives_and_verifies(identity):
    # Every sympy claim holds, and the numeric check passes at small scale on torch (its own tolerance).
    steps = identity.derive()
    claims = [s for s in steps if s.holds is not None]
    assert claims and all(s.holds for s in claims), [s.text for s in claims if not s.holds]
    outcome = identity.verify(np.random.default_rng(0), "small", "torch:cpu")
    assert outcome.passed, outcome
