"""Tests of workbench.nn (_uniformization, _banded_generator, _exp_markov): differentiable uniformization, banded generators, exp-Markov and heat-kernel
attention.

Oracles: dense ``scipy.linalg.expm`` (Padé, an independent algorithm), the expmv engine's uniformization
(``workbench.expmv.expmv(..., method="uniformization")``, the numpy reference), the dense generator for the
shifted-add path, the semigroup law, the structure of stochastic matrices, and ``torch.autograd.gradcheck``
(central finite differences) for gradients.  Tolerances: 1e-12 relative in float64 for anything that goes
through ~λt stochastic products (each a few units of roundoff), 1e-14 for a single banded product (a sum of at
most 2w+1 terms), exact where the construction is exact (zeros outside the band, t = 0).
"""

import math
import re

import numpy as np
import pytest
import scipy.linalg
import torch

from workbench.attention import row_entropy
from workbench.derivations.nn_markov import IDENTITIES
from workbench.expmv import expmv
from workbench.nn import (
    BandedGenerator,
    ExpMarkovAttention,
    HeatKernelAttention,
    banded_generator,
    multiscale_offsets,
    symmetric_banded_generator,
    uniformized_action,
)

F64 = torch.float64


def gen_torch(seed):
    return torch.Generator().manual_seed(seed)


def random_banded(seed, n=9, offsets=(-2, -1, 1, 3), batch=(), spread=1.0):
    """softplus rates with logits ~ N(0, spread²)."""
    g = gen_torch(seed)
    logits = spread * torch.randn((*batch, len(offsets), n), generator=g, dtype=F64)
    return banded_generator(logits, offsets)


def rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / np.abs(b).max())


# ---- banded generator ----------------------------------------------------------------------------


def test_dense_and_shifted_add_paths_agree():
    """Oracle: the dense generator built by diag_embed.  Tolerance 1e-14: each row of QX sums ≤ 5 terms."""
    gen = random_banded(0, batch=(2, 3))
    x = torch.randn(2, 3, 9, 4, generator=gen_torch(1), dtype=F64)
    assert rel(gen.matmul(x), gen.dense() @ x) < 1e-14
    P_banded = uniformized_action(gen, x, 0.8)
    P_dense = uniformized_action(gen.dense(), x, 0.8)
    assert rel(P_banded, P_dense) < 1e-13  # same series, different summation order of each product


def test_generator_structure_rows_sum_to_zero_and_no_crossing_of_ends():
    """Oracle: the definition.  Off-diagonals ≥ 0, rows sum to 0 (1e-15: one sum), zero outside the band and
    exactly zero for rates that would cross the sequence ends (no wrap-around)."""
    offsets = (-2, 1, 3)
    gen = banded_generator(torch.full((3, 6), 5.0, dtype=F64), offsets)
    Q = gen.dense()
    off = Q - torch.diag_embed(torch.diagonal(Q))
    assert bool((off >= 0).all())
    assert float(Q.sum(-1).abs().max()) < 1e-15
    band = torch.zeros(6, 6, dtype=torch.bool)
    for o in offsets:
        band |= torch.ones(6, 6, dtype=torch.bool).triu(o) & ~torch.ones(6, 6, dtype=torch.bool).triu(o + 1)
    assert bool((off[~band] == 0).all())
    # the rates that would leave the sequence are stored as exact zeros
    assert float(gen.rates[2, 3:].abs().max()) == 0.0 and float(gen.rates[0, :2].abs().max()) == 0.0
    assert float(gen.rates[1, 5]) == 0.0
    # an offset longer than the sequence contributes nothing
    far = banded_generator(torch.zeros(2, 4, dtype=F64), (-1, 7))
    assert float(far.rates[1].abs().max()) == 0.0


def test_symmetric_banded_generator_is_a_symmetric_generator():
    """Oracle: the definition -L = W - D with W symmetric.  Exact symmetry (the same softplus value is
    placed twice); row sums 0 to 1e-15."""
    g = symmetric_banded_generator(torch.randn(2, 3, 8, generator=gen_torch(2), dtype=F64), (1, 3, 4))
    Q = g.dense()
    assert bool(torch.equal(Q, Q.mT))
    assert float(Q.sum(-1).abs().max()) < 1e-15


def test_multiscale_offsets():
    """Oracle: the dyadic list written out."""
    assert multiscale_offsets(3) == (-8, -4, -2, -1, 1, 2, 4, 8)
    assert multiscale_offsets(0, causal=True) == (-1,)


def test_to_banded_matrix_round_trip():
    """Oracle: the dense generator; the engine's BandedMatrix stores the same entries (exact copy)."""
    gen = random_banded(3)
    assert np.array_equal(gen.to_banded_matrix().to_scipy().toarray(), gen.dense().numpy())


# ---- uniformized_action --------------------------------------------------------------------------


@pytest.mark.parametrize("t", [1e-9, 0.3, 4.0, 60.0])
def test_uniformized_action_matches_scipy_expm_and_the_expmv_engine(t):
    """Oracles: dense ``scipy.linalg.expm(tQ) @ X`` and ``expmv(..., method="uniformization")``.
    Tolerance 1e-12 relative: ~λt stochastic products in float64 (λt up to ~300 here)."""
    gen = random_banded(4, n=12, spread=1.5)
    x = torch.randn(12, 3, generator=gen_torch(5), dtype=F64)
    got = uniformized_action(gen, x, t)
    exact = scipy.linalg.expm(t * gen.dense().numpy()) @ x.numpy()
    engine = expmv(gen.to_banded_matrix(), x, t, method="uniformization")
    assert rel(got, exact) < 1e-12
    assert rel(got, engine) < 1e-12
    assert rel(uniformized_action(gen.dense(), x, t), exact) < 1e-12


def test_result_is_row_stochastic_and_nonnegative():
    """Oracle: the structure of e^{tQ} (Jensen).  P = e^{tQ}I: min entry ≥ 0 exactly (every term of the
    series is a sum of nonnegative products) and rows sum to 1 within 1e-13 (≈ λt products of u each)."""
    gen = random_banded(6, n=16, spread=2.0, batch=(3,))
    for t in (0.01, 1.0, 25.0):
        P = uniformized_action(gen, torch.eye(16, dtype=F64), t)
        assert float(P.min()) >= 0.0
        assert float((P.sum(-1) - 1).abs().max()) < 1e-13


def test_semigroup_law():
    """Oracle: e^{sQ}e^{tQ}X = e^{(s+t)Q}X.  Tolerance 1e-13 relative (two series, each ~1e-15)."""
    gen = random_banded(7, n=10)
    x = torch.randn(10, 2, generator=gen_torch(8), dtype=F64)
    twice = uniformized_action(gen, uniformized_action(gen, x, 0.7), 1.9)
    assert rel(twice, uniformized_action(gen, x, 2.6)) < 1e-13


def test_t_to_zero_gives_identity_and_the_generator():
    """Oracles: e^{0Q} = I exactly; (e^{tQ} - I)/t → Q with error O(t‖Q‖²) (t = 1e-7: below 1e-6); the
    gradient in t at t = 0 is QX (1e-12 relative)."""
    gen = random_banded(9, n=8)
    x = torch.randn(8, 3, generator=gen_torch(10), dtype=F64)
    assert bool(torch.equal(uniformized_action(gen, x, 0.0), x))
    t = 1e-7
    eye = torch.eye(8, dtype=F64)
    assert float(((uniformized_action(gen, eye, t) - eye) / t - gen.dense()).abs().max()) < 1e-6
    t0 = torch.zeros((), dtype=F64, requires_grad=True)
    w = torch.randn(8, 3, generator=gen_torch(11), dtype=F64)
    (uniformized_action(gen, x, t0) * w).sum().backward()
    assert abs(float(t0.grad) - float((gen.matmul(x) * w).sum())) < 1e-12 * float(gen.matmul(x).abs().sum())


def test_batched_equals_loop_and_per_head_times():
    """Oracle: one call per (batch, head) element.  rates [B, H, m, n], t [H] (per head): the batched cut-off
    is the largest over the batch, so the loop differs by truncation (≤ 2^-53) and rounding: 1e-14."""
    gen = random_banded(12, n=7, batch=(2, 3))
    x = torch.randn(2, 3, 7, 4, generator=gen_torch(13), dtype=F64)
    times = torch.tensor([0.2, 1.0, 3.5], dtype=F64)
    out = uniformized_action(gen, x, times)
    assert out.shape == (2, 3, 7, 4)
    for b in range(2):
        for h in range(3):
            one = BandedGenerator(gen.offsets, gen.rates[b, h])
            assert rel(out[b, h], uniformized_action(one, x[b, h], float(times[h]))) < 1e-14


def test_several_times_share_the_powers():
    """Oracle: separate calls per time.  Q batch [H, 1] with t [H, S] gives [H, S, n, d]; 1e-14 (truncation
    at the largest λt, rounding)."""
    gen = random_banded(14, n=6, batch=(2, 1))
    x = torch.randn(6, 2, generator=gen_torch(15), dtype=F64)
    times = torch.tensor([[0.1, 1.0, 5.0], [0.5, 2.0, 8.0]], dtype=F64)
    out = uniformized_action(gen, x, times)
    assert out.shape == (2, 3, 6, 2)
    for h in range(2):
        one = BandedGenerator(gen.offsets, gen.rates[h, 0])
        for s in range(3):
            assert rel(out[h, s], uniformized_action(one, x, float(times[h, s]))) < 1e-14


def test_gradcheck_banded_logits_time_and_features():
    """Oracle: central finite differences (torch.autograd.gradcheck, float64, default tolerances)."""
    logits = torch.randn(3, 5, generator=gen_torch(16), dtype=F64, requires_grad=True)
    t = torch.tensor([0.4, 1.7], dtype=F64, requires_grad=True)
    x = torch.randn(5, 2, generator=gen_torch(17), dtype=F64, requires_grad=True)

    def f(lg, tt, xx):
        return uniformized_action(banded_generator(lg, (-1, 1, 2)), xx, tt)

    assert torch.autograd.gradcheck(f, (logits, t, x))


def test_gradcheck_dense_generator_parameters():
    """Oracle: gradcheck on Q(W) = softplus(W) off the diagonal, minus row sums on it (dense path)."""
    w = torch.randn(4, 4, generator=gen_torch(18), dtype=F64, requires_grad=True)
    t = torch.tensor(0.9, dtype=F64, requires_grad=True)
    x = torch.randn(4, 3, generator=gen_torch(19), dtype=F64)
    off = 1.0 - torch.eye(4, dtype=F64)

    def f(ww, tt):
        rates = torch.nn.functional.softplus(ww) * off
        return uniformized_action(rates - torch.diag_embed(rates.sum(-1)), x, tt)

    assert torch.autograd.gradcheck(f, (w, t))


def test_float32_follows_the_input():
    """Oracle: the float64 result; float32 agrees to 1e-5 (u₃₂ ≈ 6e-8 times ~λt products) and keeps dtype."""
    gen = random_banded(20, n=8)
    x = torch.randn(8, 3, generator=gen_torch(21), dtype=F64)
    g32 = BandedGenerator(gen.offsets, gen.rates.float())
    y32 = uniformized_action(g32, x.float(), 1.5)
    assert y32.dtype == torch.float32
    assert rel(y32.double(), uniformized_action(gen, x, 1.5)) < 1e-5


# ---- layers -------------------------------------------------------------------------------------


def exp_markov_layer(seed=0, **kw):
    torch.manual_seed(seed)
    return ExpMarkovAttention(8, 2, **kw).double()


def test_exp_markov_attention_operator_is_stochastic_and_matches_expm():
    """Oracles: structure (P ≥ 0, P1 = 1 within 1e-13) and ``scipy.linalg.expm(t_h Q_h)`` of the layer's own
    dense generator (1e-12 relative); the output equals out_proj(concat_h P_h V_h) (dense reference, 1e-13)."""
    layer = exp_markov_layer(offsets=(-2, -1, 1, 2), t_init=1.5)
    x = torch.randn(3, 7, 8, generator=gen_torch(22), dtype=F64)
    with torch.no_grad():
        y, P = layer(x, return_operator=True)
        Q = layer.generator(x).dense()
        times = layer.times
        v = layer.v_proj(x).reshape(3, 7, 2, 4).transpose(1, 2)
        ref = layer.out_proj((P @ v).transpose(1, 2).reshape(3, 7, 8))
    assert y.shape == (3, 7, 8) and P.shape == (3, 2, 7, 7)
    assert float(P.min()) >= 0.0 and float((P.sum(-1) - 1).abs().max()) < 1e-13
    for b in range(3):
        for h in range(2):
            assert rel(P[b, h], scipy.linalg.expm(float(times[h]) * Q[b, h].numpy())) < 1e-12
    assert rel(y, ref) < 1e-13
    H = row_entropy(P)  # the diagnostics of workbench.attention read the operator
    assert H.shape == (3, 2, 7) and float(H.min()) >= 0.0


def test_exp_markov_attention_times_and_initialisation():
    """Oracle: softplus(softplus⁻¹(t_init)) = t_init; 1e-7 because the raw parameter is created in float32
    (torch's default dtype) before ``.double()``."""
    layer = exp_markov_layer(t_init=0.25)
    assert float((layer.times.detach() - 0.25).abs().max()) < 1e-7
    assert layer.offsets == multiscale_offsets(2)


def test_causal_exp_markov_attention():
    """Oracles: P lower triangular exactly (no rate to a later position); outputs at positions < j move by at
    most 1e-14 relative (to max |y|) when token j changes: the uniformization rate λ = max exit rate and the
    Poisson cut-off see every row, but e^{tQ} does not depend on λ, so only the rounding of ~K ≈ 20 stochastic
    products (a few K·u ≈ 1e-15) and the neglected mass (≤ tol = 2^-53) differ.  Measured ≈ 4e-16."""
    layer = exp_markov_layer(causal=True)
    assert all(o < 0 for o in layer.offsets)
    x = torch.randn(2, 9, 8, generator=gen_torch(23), dtype=F64)
    with torch.no_grad():
        y, P = layer(x, return_operator=True)
        x2 = x.clone()
        x2[:, 6] += 3.0
        y2 = layer(x2)
    assert bool((P.triu(1) == 0).all())
    assert float((y[:, :6] - y2[:, :6]).abs().max()) < 1e-14 * float(y[:, :6].abs().max())
    assert float((y[:, 6:] - y2[:, 6:]).abs().max()) > 1e-3  # the change does reach later positions


def test_one_time_per_layer_is_the_per_head_layer_with_equal_times():
    """Oracle: a per-head layer with the same weights and every τ_h equal to the shared τ (a second
    construction of the same operator).  The forward is the same arithmetic on the same numbers: equal exactly.
    The shared τ's gradient is the sum of the per-head τ_h gradients (chain rule through the expansion): 1e-14
    relative, the rounding of a sum of two float64 numbers taken in another order."""
    torch.manual_seed(5)
    shared = ExpMarkovAttention(8, 2, causal=True, t_init=0.7, time_per="layer").double()
    per_head = ExpMarkovAttention(8, 2, causal=True, t_init=0.7).double()
    state = {k: v for k, v in shared.state_dict().items() if k != "raw_time"}
    per_head.load_state_dict({**state, "raw_time": shared.raw_time.detach().expand(2).clone()})
    assert tuple(shared.raw_time.shape) == (1,) and tuple(per_head.raw_time.shape) == (2,)
    assert shared.time_per == "layer" and per_head.time_per == "head"
    times = shared.times.detach()
    assert tuple(times.shape) == (2,) and float(times[0]) == float(times[1])
    x = torch.randn(2, 7, 8, generator=gen_torch(30), dtype=F64)
    y_shared, y_head = shared(x), per_head(x)
    assert torch.equal(y_shared, y_head)
    y_shared.square().sum().backward()
    y_head.square().sum().backward()
    expected = per_head.raw_time.grad.sum()
    assert abs(float(shared.raw_time.grad[0] - expected)) <= 1e-14 * abs(float(expected))
    with pytest.raises(ValueError, match=r"time_per must be one of 'head', 'layer', got 'token'"):
        ExpMarkovAttention(8, 2, time_per="token")


@pytest.mark.parametrize("fast", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_gradcheck_exp_markov_layer_parameters(fast):
    """Oracle: gradcheck on every parameter and the input of a tiny layer (d=4, H=2, n=4, float64).  The
    default run uses gradcheck's fast mode (random directional derivatives against finite differences along the
    same directions); the full Jacobian comparison runs with ``-m slow``."""
    torch.manual_seed(1)
    layer = ExpMarkovAttention(4, 2, offsets=(-1, 1, 2), t_init=0.8).double()
    names = list(dict(layer.named_parameters()))
    x = torch.randn(2, 4, 4, generator=gen_torch(24), dtype=F64, requires_grad=True)
    params = tuple(p.detach().clone().requires_grad_(True) for p in layer.parameters())

    def f(xx, *ps):
        return torch.func.functional_call(layer, dict(zip(names, ps, strict=True)), (xx,))

    assert torch.autograd.gradcheck(f, (x, *params), fast_mode=fast)


def test_heat_kernel_attention_is_symmetric_doubly_stochastic_contraction():
    """Oracles: P = Pᵀ, P1 = 1, 1ᵀP = 1, P ≥ 0, ‖P‖₂ ≤ 1 (1e-13: rounding over ~λt products) per scale
    (mix='concat'), and ``scipy.linalg.expm(-t L)`` of the layer's own Laplacian (1e-12 relative)."""
    torch.manual_seed(2)
    layer = HeatKernelAttention(8, 2, times=(0.2, 1.0, 6.0), offsets=(1, 2), mix="concat").double()
    x = torch.randn(2, 6, 8, generator=gen_torch(25), dtype=F64)
    with torch.no_grad():
        y, P = layer(x, return_operator=True)
        Q = layer.generator(x).dense()
        times = layer.times
    assert y.shape == (2, 6, 8) and P.shape == (2, 2, 3, 6, 6)
    assert float((P - P.mT).abs().max()) < 1e-13
    assert float((P.sum(-1) - 1).abs().max()) < 1e-13 and float((P.sum(-2) - 1).abs().max()) < 1e-13
    assert float(P.min()) >= 0.0
    assert float(torch.linalg.matrix_norm(P, ord=2).max()) <= 1.0 + 1e-13
    for b in range(2):
        for h in range(2):
            for s in range(3):
                assert rel(P[b, h, s], scipy.linalg.expm(float(times[h, s]) * Q[b, h].numpy())) < 1e-12


def test_heat_kernel_learned_mix_is_the_convex_combination():
    """Oracle: Σ_s α_{h,s} e^{-t_{h,s} L_h} from the concat-free path, with α = softmax(ρ) (1e-13); the mixture
    of symmetric doubly stochastic matrices stays symmetric doubly stochastic (1e-13)."""
    torch.manual_seed(3)
    layer = HeatKernelAttention(8, 2, times=(0.5, 3.0)).double()
    with torch.no_grad():
        layer.mix_logits.copy_(torch.tensor([[0.3, -1.0], [2.0, 0.0]]))
    x = torch.randn(2, 5, 8, generator=gen_torch(26), dtype=F64)
    with torch.no_grad():
        _, P = layer(x, return_operator=True)
        Q = layer.generator(x).dense()
        alpha, times = layer.mixing_weights(), layer.times
    assert float((alpha.sum(-1) - 1).abs().max()) < 1e-15
    for b in range(2):
        for h in range(2):
            exact = sum(float(alpha[h, s]) * scipy.linalg.expm(float(times[h, s]) * Q[b, h].numpy()) for s in range(2))
            assert rel(P[b, h], exact) < 1e-12
    assert float((P - P.mT).abs().max()) < 1e-13 and float((P.sum(-2) - 1).abs().max()) < 1e-13


@pytest.mark.parametrize("fast", [True, pytest.param(False, marks=pytest.mark.slow)])
@pytest.mark.parametrize("mix", ["learned", "concat"])
def test_gradcheck_heat_kernel_layer_parameters(mix, fast):
    """Oracle: gradcheck on every parameter (times, mixing logits, band maps, projections) and the input; fast
    mode (random directional derivatives) by default, the full Jacobian with ``-m slow``."""
    torch.manual_seed(4)
    layer = HeatKernelAttention(4, 2, times=(0.3, 1.2), offsets=(1, 2), mix=mix).double()
    names = list(dict(layer.named_parameters()))
    x = torch.randn(1, 4, 4, generator=gen_torch(27), dtype=F64, requires_grad=True)
    params = tuple(p.detach().clone().requires_grad_(True) for p in layer.parameters())

    def f(xx, *ps):
        return torch.func.functional_call(layer, dict(zip(names, ps, strict=True)), (xx,))

    assert torch.autograd.gradcheck(f, (x, *params), fast_mode=fast)


def test_layers_follow_float32():
    """Oracle: dtype of the output equals the input's; float32 operator rows sum to 1 within 1e-5."""
    torch.manual_seed(5)
    x = torch.randn(2, 6, 8)
    with torch.no_grad():
        y, P = ExpMarkovAttention(8, 2)(x, return_operator=True)
    assert y.dtype == torch.float32 and float((P.sum(-1) - 1).abs().max()) < 1e-5
    with torch.no_grad():
        y, P = HeatKernelAttention(8, 4)(x, return_operator=True)
    assert y.dtype == torch.float32 and float((P.sum(-1) - 1).abs().max()) < 1e-5


# ---- errors --------------------------------------------------------------------------------------


def test_layer_validation_messages():
    with pytest.raises(ValueError, match=r"d_model must be divisible by n_heads, got d_model=10, n_heads=3"):
        ExpMarkovAttention(10, 3)
    with pytest.raises(ValueError, match=r"offsets must be a non-empty sequence of distinct nonzero integers"):
        ExpMarkovAttention(8, 2, offsets=(0, 1))
    with pytest.raises(ValueError, match=r"distinct nonzero integers, got \(1, 1\)"):
        ExpMarkovAttention(8, 2, offsets=(1, 1))
    with pytest.raises(TypeError, match=r"offsets must hold integers, got 1.5 in \(1.5,\)"):
        ExpMarkovAttention(8, 2, offsets=(1.5,))
    with pytest.raises(TypeError, match=r"offsets must be a non-empty sequence of distinct nonzero integers, got 3"):
        ExpMarkovAttention(8, 2, offsets=3)
    with pytest.raises(ValueError, match=r"distinct nonzero integers, got \(\)"):
        ExpMarkovAttention(8, 2, offsets=())
    with pytest.raises(ValueError, match=r"offsets must all be negative when causal=True .* got \[-1, 2\]"):
        ExpMarkovAttention(8, 2, offsets=(-1, 2), causal=True)
    with pytest.raises(ValueError, match=r"t_init must be in \(0, 3.40282e\+38\], got 0.0"):
        ExpMarkovAttention(8, 2, t_init=0.0)
    with pytest.raises(ValueError, match=r"times must be a non-empty sequence of positive numbers, got \(1.0, -2.0\)"):
        HeatKernelAttention(8, 2, times=(1.0, -2.0))
    with pytest.raises(ValueError, match=r"times must be a non-empty sequence of positive numbers, got \(\)"):
        HeatKernelAttention(8, 2, times=())
    with pytest.raises(ValueError, match=r"offsets must be positive distances of the symmetric band, got \[1, -2\]"):
        HeatKernelAttention(8, 2, offsets=(1, -2))
    with pytest.raises(ValueError, match=r"mix must be one of 'learned', 'concat', got 'sum'"):
        HeatKernelAttention(8, 2, mix="sum")
    layer = ExpMarkovAttention(8, 2)
    with pytest.raises(ValueError, match=r"x must have shape \[batch, n, d_model=8\], got shape \(2, 5, 7\)"):
        layer(torch.randn(2, 5, 7))
    with pytest.raises(ValueError, match=r"x must have shape \[batch, n, d_model=8\], got shape \(5, 8\)"):
        HeatKernelAttention(8, 2)(torch.randn(5, 8))
    with pytest.raises(TypeError, match=r"x must be a torch tensor"):
        layer(np.zeros((2, 5, 8)))
    with pytest.raises(ValueError, match=r"max_terms must be an integer >= 1, got 0"):
        ExpMarkovAttention(8, 2, max_terms=0)
    with pytest.raises(TypeError, match=r"max_terms must be an integer, got float"):
        HeatKernelAttention(8, 2, max_terms=10.5)


def test_layers_name_x_for_non_finite_and_mismatched_inputs():
    """Review 3.2/3.6: a non-finite x is reported as ``x`` (not as the rates it would poison), and a float32 x
    fed to a float64 layer (or an integer x) is a TypeError naming x and both dtypes, not a raw torch error."""
    for layer in (ExpMarkovAttention(8, 2).double(), HeatKernelAttention(8, 2).double()):
        x = torch.randn(2, 5, 8, generator=gen_torch(40), dtype=F64)
        x[1, 3, 2] = float("nan")
        with pytest.raises(
            ValueError, match=r"x must be finite, got 1 non-finite entry \(first at index \(1, 3, 2\)\)"
        ):
            layer(x)
        x[1, 3, 2] = float("inf")
        with pytest.raises(ValueError, match=r"x must be finite, got 1 non-finite entry"):
            layer.generator(x)
        with pytest.raises(
            TypeError, match=r"x must have the layer's dtype torch.float64, got x of dtype torch.float32"
        ):
            layer(torch.randn(2, 5, 8))
        with pytest.raises(TypeError, match=r"x must be a floating-point tensor, got dtype torch.int64"):
            layer(torch.ones(2, 5, 8, dtype=torch.int64))


def test_default_cap_on_poisson_terms_fails_fast_for_huge_lambda_t():
    """Review 3.1: a 2-state chain at t = 1e6 (≈ 2e6 powers without a cap) and 1e9 (an 8 GB weight vector)
    raises at once under the default cap of 10 000 powers, naming t, λt and the cap.  Oracle: λ = (1 + 2^-20)·2
    (the largest exit rate), so λt is known in closed form; the message prints it to 6 significant digits.
    No timing assertion (tests are never timed): a run without the cap would not finish in the suite."""
    Q = torch.tensor([[-2.0, 2.0], [0.5, -0.5]], dtype=F64)
    x = torch.eye(2, dtype=F64)
    lam = 2.0 * (1.0 + 2.0**-20)
    for t in (1e6, 1e9):
        match = re.escape(f"uniformization needs at least {math.floor(lam * t) + 1} powers for max λt = {lam * t:.6g} ")
        with pytest.raises(
            ValueError,
            match=match
            + re.escape(f"(t = {t:.6g}, rate λ = {lam:.6g} from the exit rates of Q), more than max_terms = 10000"),
        ):
            uniformized_action(Q, x, t)
    # below the cap it runs (λt ≈ 9 000 needs ≈ 9 800 powers, the Fox–Glynn right point; the cap allows λt ≲ 9 193)
    P = uniformized_action(Q, x, 4500.0)
    assert float((P.sum(-1) - 1).abs().max()) < 1e-11  # ~10^4 products of u each
    # the layers pass their own cap through: t_init = 50 with max exit rate ≥ 6·softplus(·) needs > 5 powers
    layer = ExpMarkovAttention(8, 2, offsets=(-1, 1), t_init=50.0, max_terms=5).double()
    with pytest.raises(
        ValueError,
        match=r"uniformization needs .* powers .* \(t = 50, rate λ = [0-9.]+ from the exit rates of Q\), more than max_terms = 5",
    ):
        layer(torch.randn(1, 4, 8, generator=gen_torch(41), dtype=F64))
    heat = HeatKernelAttention(8, 2, times=(50.0,), max_terms=5).double()
    with pytest.raises(ValueError, match=r"more than max_terms = 5"):
        heat(torch.randn(1, 4, 8, generator=gen_torch(42), dtype=F64))


def test_uniformized_action_validation_messages():
    gen = random_banded(30, n=5)
    x = torch.ones(5, 2, dtype=F64)
    with pytest.raises(
        ValueError, match=r"t must be finite and >= 0 \(e\^\(tQ\) with t < 0 is not a Markov semigroup\)"
    ):
        uniformized_action(gen, x, -0.1)
    with pytest.raises(ValueError, match=r"X must have shape \[..., n=5, d\], got shape \(4, 2\)"):
        uniformized_action(gen, torch.ones(4, 2, dtype=F64), 1.0)
    bad = torch.tensor([[-1.0, 2.0], [1.0, -1.0]], dtype=F64)
    with pytest.raises(ValueError, match=r"Q must be a Markov generator .* max \|row sum\| 1"):
        uniformized_action(bad, torch.ones(2, 1, dtype=F64), 1.0)
    negative = torch.tensor([[1.0, -1.0], [1.0, -1.0]], dtype=F64)
    with pytest.raises(ValueError, match=r"Q must be a Markov generator .* min off-diagonal -1"):
        uniformized_action(negative, torch.ones(2, 1, dtype=F64), 1.0)
    with pytest.raises(ValueError, match=r"Q must have shape \[..., n, n\] \(square\), got shape \(2, 3\)"):
        uniformized_action(torch.zeros(2, 3, dtype=F64), x, 1.0)
    with pytest.raises(ValueError, match=r"rate must be >= max_i\(-Q_ii\)"):
        uniformized_action(gen, x, 1.0, rate=1e-3)
    with pytest.raises(
        ValueError, match=r"uniformization needs (at least )?\d+ powers for max λt = .* more than max_terms = 3"
    ):
        uniformized_action(gen, x, 50.0, max_terms=3)
    with pytest.raises(
        ValueError,
        match=r"uniformization needs 2 powers for max λt = 0 \(t = 0, rate λ = [0-9.]+ from the exit rates of Q\), more than max_terms = 1",
    ):
        uniformized_action(gen, x, 0.0, max_terms=1)  # past the λt pre-check, caught at the Fox–Glynn point
    with pytest.raises(ValueError, match=r"X must be finite, got 1 non-finite entry \(first at index \(2, 1\)\)"):
        uniformized_action(
            gen, x.index_put((torch.tensor(2), torch.tensor(1)), torch.tensor(float("nan"), dtype=F64)), 1.0
        )
    with pytest.raises(ValueError, match=r"the batch shapes of Q \(2,\), t \(3,\) and X \(\) do not broadcast"):
        uniformized_action(random_banded(31, n=5, batch=(2,)), x, torch.ones(3, dtype=F64))
    with pytest.raises(TypeError, match=r"Q must be a BandedGenerator or a floating-point torch tensor, got ndarray"):
        uniformized_action(np.zeros((2, 2)), x, 1.0)
    with pytest.raises(ValueError, match=r"rates must be finite and >= 0"):
        BandedGenerator((1,), -torch.ones(1, 4, dtype=F64))
    with pytest.raises(ValueError, match=r"rates must have shape \[..., len\(offsets\)=2, n\], got shape \(1, 4\)"):
        BandedGenerator((1, -1), torch.ones(1, 4, dtype=F64))
    with pytest.raises(ValueError, match=r"offsets must all be negative when causal=True"):
        banded_generator(torch.zeros(1, 4), (1,), causal=True)


def test_explicit_rate_gives_the_same_semigroup():
    """Oracle: e^{tQ} does not depend on the uniformization rate (λ = 3 max exit rate vs default): 1e-13."""
    gen = random_banded(32, n=6)
    x = torch.randn(6, 2, generator=gen_torch(33), dtype=F64)
    big = 3.0 * float(gen.exit_rates().max())
    assert rel(uniformized_action(gen, x, 1.1, rate=big), uniformized_action(gen, x, 1.1)) < 1e-13


# ---- catalogue -----------------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES, ids=lambda i: i.name)
def test_catalogue_identities(identity):
    """Every claimed symbolic step holds (sympy) and the small numeric check passes on torch:cpu."""
    assert identity.area == "nn" and identity.name.startswith("nn.")
    steps = identity.derive()
    assert any(step.holds is not None for step in steps)
    assert all(step.holds is not False for step in steps)
    assert identity.verify(np.random.default_rng(0), "small", "torch:cpu").passed


def test_default_tol_is_the_unit_roundoff_of_the_input_dtype():
    # Oracle: the same call with the unit roundoff passed explicitly (2^-24 for float32, 2^-53 for float64)
    # gives bitwise the same result; the float32 result agrees with float64 to float32 precision.
    q = torch.tensor([[-2.0, 2.0], [1.0, -1.0]], dtype=torch.float64)
    x = torch.tensor([[1.0], [3.0]], dtype=torch.float64)
    for dtype, roundoff in ((torch.float32, 2.0**-24), (torch.float64, 2.0**-53)):
        default = uniformized_action(q.to(dtype), x.to(dtype), 3.0)
        explicit = uniformized_action(q.to(dtype), x.to(dtype), 3.0, tol=roundoff)
        assert torch.equal(default, explicit)
    exact = uniformized_action(q, x, 3.0)
    assert torch.allclose(uniformized_action(q.float(), x.float(), 3.0).double(), exact, rtol=1e-6, atol=0)


def test_uniformized_action_accepts_a_float32_copy_of_an_exact_generator():
    # Reproducer (issue 17): a float32 copy of a valid generator was refused (row sums 2.4e-7 > 1e-10).
    # Oracle: scipy.linalg.expm of the float64 generator; tolerance 1e-5 (float32 rounding over ~20 terms).

    from workbench.nn import uniformized_action

    rng = np.random.default_rng(0)
    rates = rng.random((6, 6))
    np.fill_diagonal(rates, 0.0)
    Q = rates - np.diag(rates.sum(axis=1))
    X = rng.standard_normal((6, 2))
    got = uniformized_action(torch.tensor(Q, dtype=torch.float32), torch.tensor(X, dtype=torch.float32), 1.0)
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), scipy.linalg.expm(Q) @ X, rtol=0, atol=1e-5)
    broken = torch.tensor(Q, dtype=torch.float32)
    broken[2, 0] += 1e-2
    with pytest.raises(ValueError, match="Q must be a Markov generator"):
        uniformized_action(broken, torch.tensor(X, dtype=torch.float32), 1.0)


def test_mixed_precisions_are_promoted_as_expmv_promotes_them():
    # Issue 40: a float32 generator with float64 features was refused though expmv's dtype rule
    # (torch.promote_types) runs the pair in float64.  Oracle: the same call with the generator cast to float64
    # by hand, the same operations on the same numbers; 1e-14 relative leaves room for a BLAS that splits
    # the products differently between calls.
    # Rates that are multiples of 1/8 make the float32 row sums exact, so the float64 cast is a generator too.
    torch.manual_seed(0)
    dense = torch.randint(0, 9, (5, 5)).to(torch.float32) / 8
    dense.fill_diagonal_(0.0)
    dense = dense - torch.diag(dense.sum(dim=-1))
    x = torch.rand(5, 2, dtype=F64)
    q = dense.clone().requires_grad_(True)
    y = uniformized_action(q, x, 0.7)
    want = uniformized_action(dense.double(), x, 0.7)
    assert y.dtype == F64
    torch.testing.assert_close(y, want, rtol=1e-14, atol=0.0)
    y.sum().backward()
    assert q.grad is not None and q.grad.dtype == torch.float32 and bool(torch.isfinite(q.grad).all())
    banded = random_banded(31, n=5)
    rates = torch.round(banded.rates * 8).float() / 8
    got = uniformized_action(BandedGenerator(banded.offsets, rates), x, 0.7)
    want = uniformized_action(BandedGenerator(banded.offsets, rates.double()), x, 0.7)
    torch.testing.assert_close(got, want, rtol=1e-14, atol=0.0)
    assert uniformized_action(banded, x.float(), 0.7).dtype == F64
