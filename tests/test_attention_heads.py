import math

import numpy as np
import pytest
import scipy.special
from conftest import HAS_TORCH

from workbench.attention import (
    AttentionHead,
    MultiHeadAttention,
    attention_mask,
    random_head,
    random_multihead,
    softmax_rows,
)
from workbench.backend import to_backend, to_numpy
from workbench.markov import MarkovOperator

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")


def dense_softmax(z, mask=None):
    # Dense reference: softmax over the admissible entries of each row, one row at a time with scipy.
    z = np.asarray(z, dtype=float)
    mask = np.ones(z.shape, bool) if mask is None else np.broadcast_to(mask, z.shape)
    out = np.zeros_like(z)
    for index in np.ndindex(z.shape[:-1]):
        keep = mask[index]
        out[index][keep] = scipy.special.softmax(z[index][keep])
    return out


def fused_reference(X, W_Q, W_K, W_V, W_O, H, b_Q=None, b_K=None, b_V=None, b_O=None, beta=None, causal=False):
    # Dense reference: the textbook concat-of-heads forward written as a plain loop with numpy slicing.
    n = X.shape[0]
    d_h, d_v = W_Q.shape[1] // H, W_V.shape[1] // H
    beta = 1 / math.sqrt(d_h) if beta is None else beta
    b_Q = np.zeros(H * d_h) if b_Q is None else b_Q
    b_K = np.zeros(H * d_h) if b_K is None else b_K
    b_V = np.zeros(H * d_v) if b_V is None else b_V
    heads = []
    for h in range(H):
        q_cols, v_cols = slice(h * d_h, (h + 1) * d_h), slice(h * d_v, (h + 1) * d_v)
        Q = X @ W_Q[:, q_cols] + b_Q[q_cols]
        K = X @ W_K[:, q_cols] + b_K[q_cols]
        V = X @ W_V[:, v_cols] + b_V[v_cols]
        z = beta * Q @ K.T
        if causal:
            z = np.where(np.tril(np.ones((n, n), bool)), z, -np.inf)
        A = np.exp(z - z.max(axis=1, keepdims=True))
        heads.append((A / A.sum(axis=1, keepdims=True)) @ V)
    out = np.concatenate(heads, axis=1) @ W_O
    return out if b_O is None else out + b_O


# ---- softmax_rows -------------------------------------------------------------------------------


def test_softmax_rows_matches_scipy_with_and_without_mask(rng):
    # Oracle: scipy.special.softmax on each row's admissible entries (independent implementation);
    # tolerance 1e-14 relative: a handful of roundings per entry.
    z = 3 * rng.standard_normal((2, 5, 7))
    mask = rng.random((5, 7)) < 0.6
    mask[:, 0] = True  # every row keeps a key
    np.testing.assert_allclose(softmax_rows(z), scipy.special.softmax(z, axis=-1), rtol=1e-14)
    P = softmax_rows(z, mask)
    np.testing.assert_allclose(P, dense_softmax(z, mask), rtol=1e-14, atol=0)
    assert np.all(P[:, ~mask] == 0.0)  # masked entries are exactly zero, not just small
    np.testing.assert_allclose(P.sum(axis=-1), 1.0, rtol=0, atol=1e-15)


def test_softmax_rows_batched_equals_loop(rng):
    # Oracle: the batch-shape contract f(stack) == stack(f); a per-batch mask (shape [..., n, m]) too. Exact.
    z = rng.standard_normal((3, 4, 4))
    mask = rng.random((3, 4, 4)) < 0.5
    mask[..., 1] = True
    stacked = softmax_rows(z, mask)
    for b in range(3):
        np.testing.assert_array_equal(stacked[b], softmax_rows(z[b], mask[b]))


def test_row_max_subtraction_keeps_huge_logits_finite():
    # Oracle: closed form, softmax is shift-invariant: [1e4, 1e4 - log 3] -> [3/4, 1/4]; a naive exp(1e4)
    # overflows to inf and gives NaN. Tolerance 1e-12: log 3 is represented next to 1e4 with absolute error
    # ~1e-12 (ulp of 1e4), which moves the ratio by that much.
    z = np.array([[1e4, 1e4 - math.log(3.0), -1e4], [1e4, 0.0, 1e4]])
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.isnan(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)).any()  # the naive route fails
    P = softmax_rows(z, np.array([[True, True, True], [True, True, True]]))
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P, [[0.75, 0.25, 0.0], [0.5, 0.0, 0.5]], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(softmax_rows(z), P, rtol=1e-12, atol=1e-300)


def test_masked_entries_may_hold_minus_inf_or_nan():
    # Oracle: closed form, the admissible pair [0, log 3] gives [1/4, 3/4]; masked junk is ignored.
    z = np.array([[0.0, math.log(3.0), -np.inf, np.nan]])
    P = softmax_rows(z, np.array([True, True, False, False]))
    np.testing.assert_allclose(P, [[0.25, 0.75, 0.0, 0.0]], rtol=1e-15)


def test_softmax_rows_numpy_equals_torch(rng, backend):
    # Oracle: the numpy route on the same float64 input; identical algorithm, so 1e-15 relative.
    z = rng.standard_normal((6, 6))
    mask = attention_mask(6, causal=True)
    P = softmax_rows(to_backend(z, backend), to_backend(mask, backend))
    assert type(P) is type(to_backend(z, backend))
    np.testing.assert_allclose(to_numpy(P), softmax_rows(z, mask), rtol=1e-15, atol=0)
    np.testing.assert_allclose(to_numpy(softmax_rows(to_backend(z, backend))), softmax_rows(z), rtol=1e-15, atol=0)


def test_softmax_rows_bad_input():
    z = np.zeros((4, 3))
    mask = np.ones((4, 3), bool)
    mask[3] = False
    with pytest.raises(ValueError, match=r"mask must leave at least one admissible key in every row; row 3 has none"):
        softmax_rows(z, mask)
    batch_mask = np.ones((2, 4, 3), bool)
    batch_mask[1, 2] = False
    with pytest.raises(ValueError, match=r"row 2 has none \(batch index \(1,\)\)"):
        softmax_rows(np.zeros((2, 4, 3)), batch_mask)
    bad = z.copy()
    bad[1, 2] = np.inf
    with pytest.raises(
        ValueError,
        match=r"logits must be finite at admissible entries \(mask True\), got 1 non-finite entry "
        r"\(first at index \(1, 2\)\)",
    ):
        softmax_rows(bad, np.ones((4, 3), bool))
    with pytest.raises(ValueError, match=r"logits must be finite, got 1 non-finite entry"):
        softmax_rows(bad)
    with pytest.raises(TypeError, match=r"mask must be a boolean array \(True = admissible key\), got float64"):
        softmax_rows(z, np.ones((4, 3)))
    with pytest.raises(
        ValueError, match=r"mask must be broadcastable to the logits shape \(4, 3\), got shape \(3, 3\)"
    ):
        softmax_rows(z, np.ones((3, 3), bool))
    with pytest.raises(ValueError, match=r"logits must have at least 2 dimensions, got shape \(3,\)"):
        softmax_rows(np.zeros(3), np.ones(3, bool))


@needs_torch
def test_softmax_rows_rejects_mixed_libraries():
    with pytest.raises(TypeError, match="inputs mix array libraries"):
        softmax_rows(to_backend(np.zeros((2, 2)), "torch:cpu"), np.ones((2, 2), bool))


# ---- attention_mask ---------------------------------------------------------------------------------


def test_attention_mask_closed_forms(backend):
    # Oracle: closed forms, causal = lower triangle (np.tril); padding masks the invalid keys and keeps the
    # diagonal of invalid queries (M_ij = C_ij ∧ (v_j ∨ i = j)). Exact (booleans).
    n = 5
    np.testing.assert_array_equal(attention_mask(n), np.ones((n, n), bool))
    np.testing.assert_array_equal(attention_mask(n, causal=True), np.tril(np.ones((n, n), bool)))
    valid = np.array([True, True, False, True, False])
    expected = np.array(
        [
            [1, 1, 0, 1, 0],
            [1, 1, 0, 1, 0],
            [1, 1, 1, 1, 0],
            [1, 1, 0, 1, 0],
            [1, 1, 0, 1, 1],
        ],
        bool,
    )
    M = attention_mask(n, valid=to_backend(valid, backend))
    assert type(M) is type(to_backend(valid, backend))
    np.testing.assert_array_equal(to_numpy(M), expected)
    np.testing.assert_array_equal(to_numpy(attention_mask(n, causal=True, valid=valid)), expected & np.tril(expected))
    assert to_numpy(attention_mask(n, causal=True, valid=~valid)).any(axis=1).all()  # no empty row


def test_padding_tokens_are_transient_under_a_full_mask(rng):
    # Oracle: an invalid token receives mass only from itself, so its stationary mass is 0 (to 1e-12: the
    # linear solve for π on a 6-state chain).
    head = random_head(rng, 4, 2)
    X = rng.standard_normal((6, 4))
    valid = np.array([True, True, True, True, False, False])
    op = head.markov(X, mask=attention_mask(6, valid=valid))
    np.testing.assert_allclose(op.P[:4, 4:], 0.0, atol=0)
    np.testing.assert_allclose(op.stationary[4:], 0.0, atol=1e-12)


def test_attention_mask_bad_input():
    with pytest.raises(ValueError, match=r"n must be an integer >= 1, got 0"):
        attention_mask(0)
    with pytest.raises(ValueError, match=r"valid must have shape \(n,\) = \(4,\), got \(3,\)"):
        attention_mask(4, valid=np.ones(3, bool))
    with pytest.raises(TypeError, match=r"valid must be a boolean array \(True = valid token\), got int64"):
        attention_mask(3, valid=np.ones(3, dtype=np.int64))
    with pytest.raises(TypeError, match=r"causal must be a bool, got str"):
        attention_mask(3, causal="yes")


# ---- one head ---------------------------------------------------------------------------------------


def head_reference(X, head, causal=False):
    # Dense reference: logits β (X W_Q + b_Q)(X W_K + b_K)ᵀ, masked row softmax, written out with numpy.
    Q = X @ head.W_Q + (0 if head.b_Q is None else head.b_Q)
    K = X @ head.W_K + (0 if head.b_K is None else head.b_K)
    return dense_softmax(head.beta * Q @ K.T, np.tril(np.ones((len(X),) * 2, bool)) if causal else None)


def test_head_operator_and_forward_match_the_dense_reference(rng):
    # Oracle: dense reference above; tolerance 1e-13 relative (a few dozen roundings per entry).
    head = random_head(rng, 8, 3, d_value=5, bias=True)
    X = rng.standard_normal((7, 8))
    P = head.operator(X)
    np.testing.assert_allclose(P, head_reference(X, head), rtol=1e-13)
    np.testing.assert_allclose(head(X), P @ (X @ head.W_V + head.b_V) @ head.W_O, rtol=1e-12, atol=1e-15)
    assert head.beta == 1 / math.sqrt(3) and (head.d_model, head.d_head, head.d_value) == (8, 3, 5)
    np.testing.assert_allclose(head.logits(X), head.beta * head.scores(X), rtol=0, atol=0)
    op = head.markov(X)
    assert isinstance(op, MarkovOperator)
    np.testing.assert_array_equal(op.P, P)


def test_bilinear_form_gives_the_scores_of_a_bias_free_head(rng):
    # Oracle: W = X M Xᵀ with M = W_Q W_Kᵀ (associativity); tolerance 1e-13 relative to the score scale.
    head = random_head(rng, 6, 2)
    X = rng.standard_normal((5, 6))
    M = head.bilinear_form()
    assert M.shape == (6, 6)
    np.testing.assert_allclose(head.scores(X), X @ M @ X.T, rtol=0, atol=1e-13 * np.abs(head.scores(X)).max())


@needs_torch
@pytest.mark.parametrize("causal", [False, True])
def test_head_matches_torch_scaled_dot_product_attention(rng, causal):
    # Oracle: torch.nn.functional.scaled_dot_product_attention (independent implementation; bool mask
    # True = take part, like ours); float64, tolerance 1e-12.
    import torch
    import torch.nn.functional as F

    head = random_head(rng, 8, 4, d_value=3, bias=True, causal=causal, beta=0.7)
    X = rng.standard_normal((6, 8))
    mask = rng.random((6, 6)) < 0.7
    np.fill_diagonal(mask, True)
    t = torch.from_numpy
    q, k, v = (t(X @ W + b) for W, b in ((head.W_Q, head.b_Q), (head.W_K, head.b_K), (head.W_V, head.b_V)))
    reference_mask = t(mask & np.tril(np.ones((6, 6), bool))) if causal else t(mask)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=reference_mask, scale=0.7).numpy() @ head.W_O
    np.testing.assert_allclose(head(X, mask=mask), reference, rtol=1e-12, atol=1e-14)
    if causal:
        unmasked = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7).numpy() @ head.W_O
        np.testing.assert_allclose(head(X), unmasked, rtol=1e-12, atol=1e-14)


def test_causal_rows_are_stochastic_with_zeros_above_the_diagonal(rng):
    # Oracle: definition of the causal mask; row sums to 1e-15 (one division per row), upper triangle exactly 0.
    head = random_head(rng, 5, 3, causal=True, scale=2.0)
    P = head.operator(rng.standard_normal((9, 5)))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert np.all(np.triu(P, 1) == 0.0)
    assert P[0, 0] == 1.0


def test_uniform_head_gives_the_uniform_walk(rng):
    # Oracle: closed form, W_Q = 0 makes every logit 0, so P = 1/n (causal: row i is uniform on j ≤ i,
    # 1/(i + 1)). Tolerance 1e-15: one division.
    n = 6
    W_K = rng.standard_normal((4, 2))
    X = rng.standard_normal((n, 4))
    np.testing.assert_allclose(AttentionHead(np.zeros((4, 2)), W_K).operator(X), np.full((n, n), 1 / n), rtol=1e-15)
    expected = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    np.testing.assert_allclose(AttentionHead(np.zeros((4, 2)), W_K, causal=True).operator(X), expected, rtol=1e-15)


def test_hard_shift_head_is_the_shift(rng):
    # Oracle: closed form. With one-hot positions X = I and M = W_Q W_Kᵀ = c·S, S_ij = [j = i − 1], the logit
    # c sits on the previous token, so P → the shift (off-target mass ≤ n e^{-c} = 8e^{-60} ≈ 7e-26; atol 1e-24).
    n, c = 8, 60.0
    shift = np.eye(n, k=-1)
    W_V, W_O = rng.standard_normal((n, 3)), rng.standard_normal((3, n))
    head = AttentionHead(c * shift, np.eye(n), W_V=W_V, W_O=W_O, beta=1.0, causal=True)
    X = np.eye(n)
    P = head.operator(X)
    target = shift.copy()
    target[0, 0] = 1.0  # token 0 has only itself under the causal mask
    np.testing.assert_allclose(P, target, rtol=0, atol=1e-24)
    values = X @ head.W_V @ head.W_O
    np.testing.assert_allclose(head(X)[1:], values[:-1], rtol=1e-14, atol=1e-24)  # output i = value of i − 1


@needs_torch
def test_head_numpy_equals_torch(rng, backend):
    # Oracle: the numpy route with the same seed (random_head draws on the host, then converts); 1e-13.
    seed = int(rng.integers(2**31))
    head = random_head(seed, 6, 3, bias=True, causal=True, backend=backend)
    reference = random_head(seed, 6, 3, bias=True, causal=True)
    X = rng.standard_normal((5, 6))
    out = head(to_backend(X, backend), mask=to_backend(attention_mask(5), backend))
    assert type(out) is type(to_backend(X, backend))
    np.testing.assert_allclose(to_numpy(out), reference(X), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(to_numpy(head.markov(to_backend(X, backend)).P), reference.operator(X), rtol=1e-13)


def test_head_bad_input(rng):
    W = rng.standard_normal((16, 4))
    with pytest.raises(ValueError, match=r"W_K must have shape \(16, 4\) like W_Q, got \(16, 5\)"):
        AttentionHead(W, rng.standard_normal((16, 5)))
    with pytest.raises(
        ValueError, match=r"W_V must have shape \(16, d_v\) to match W_Q of shape \(16, 4\), got \(12, 4\)"
    ):
        AttentionHead(W, W, W_V=np.zeros((12, 4)))
    with pytest.raises(
        ValueError, match=r"W_O must have shape \(3, 16\) to match W_V of shape \(16, 3\), got \(3, 12\)"
    ):
        AttentionHead(W, W, W_V=np.zeros((16, 3)), W_O=np.zeros((3, 12)))
    with pytest.raises(ValueError, match=r"b_Q must have shape \(4,\) to match W_Q of shape \(16, 4\), got \(5,\)"):
        AttentionHead(W, W, b_Q=np.zeros(5))
    with pytest.raises(ValueError, match=r"W_O needs W_V"):
        AttentionHead(W, W, W_O=np.zeros((4, 16)))
    with pytest.raises(ValueError, match=r"beta must be > 0, got -1.0"):
        AttentionHead(W, W, beta=-1.0)
    with pytest.raises(ValueError, match=r"beta must be > 0, got 0.0"):
        AttentionHead(W, W, beta=0)
    bad = W.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"W_Q must be finite, got 1 non-finite entry \(first at index \(2, 1\)\)"):
        AttentionHead(bad, W)
    head = AttentionHead(W, W)
    with pytest.raises(ValueError, match=r"X must have shape \(n, 16\), got \(5, 3\)"):
        head.operator(np.zeros((5, 3)))
    with pytest.raises(
        ValueError, match=r"the forward map P \(X W_V \+ b_V\) W_O needs W_V and W_O; this head has no W_V and W_O"
    ):
        head(np.zeros((5, 16)))
    with pytest.raises(ValueError, match=r"mask must leave at least one admissible key in every row; row 0 has none"):
        AttentionHead(W, W, causal=True).operator(np.zeros((3, 16)), mask=np.array([[False, True, True]] * 3))


# ---- multi-head attention -----------------------------------------------------------------------


def fused_weights(rng, D, H, d_h, d_v):
    s = 1 / math.sqrt(D)
    return (
        s * rng.standard_normal((D, H * d_h)),
        s * rng.standard_normal((D, H * d_h)),
        s * rng.standard_normal((D, H * d_v)),
        s * rng.standard_normal((H * d_v, D)),
    )


@pytest.mark.parametrize("causal", [False, True])
def test_fused_forward_equals_the_loop_over_heads(rng, causal):
    # Oracle: fused_reference, the concat-of-heads forward as a plain numpy loop; tolerance 1e-13 relative
    # (sums of a few dozen products, values of order 1).
    D, H, d_h, d_v = 12, 3, 4, 2
    W_Q, W_K, W_V, W_O = fused_weights(rng, D, H, d_h, d_v)
    b_Q, b_K, b_V, b_O = (rng.standard_normal(k) for k in (H * d_h, H * d_h, H * d_v, D))
    X = rng.standard_normal((7, D))
    mha = MultiHeadAttention.from_fused(W_Q, W_K, W_V, W_O, H, b_Q, b_K, b_V, b_O, causal=causal)
    reference = fused_reference(X, W_Q, W_K, W_V, W_O, H, b_Q, b_K, b_V, b_O, causal=causal)
    np.testing.assert_allclose(mha(X), reference, rtol=1e-13, atol=1e-14)
    assert (mha.n_heads, mha.d_model, mha.d_head, mha.d_value, mha.beta) == (H, D, d_h, d_v, 0.5)
    # The stacked heads are the column blocks of the fused matrices, and each head is an AttentionHead.
    np.testing.assert_array_equal(mha.W_K[2], W_K[:, 8:12])
    np.testing.assert_array_equal(mha.W_O[1], W_O[2:4])
    total = sum(mha.head(h)(X) for h in range(H)) + b_O
    np.testing.assert_allclose(total, reference, rtol=1e-13, atol=1e-14)
    A = mha.attention(X)
    for h in range(H):
        np.testing.assert_allclose(A[h], mha.head(h).operator(X), rtol=1e-15)
    if causal:
        assert np.all(np.triu(A, 1) == 0.0)
    np.testing.assert_allclose(A.sum(axis=-1), 1.0, rtol=0, atol=1e-15)


@needs_torch
@pytest.mark.parametrize("causal", [False, True])
def test_fused_forward_equals_torch_multihead_attention(rng, causal):
    # Oracle: torch.nn.MultiheadAttention with the same weights (independent implementation). torch stores
    # in_proj_weight as (3D, D) with y = x Wᵀ + b (column convention) and its bool attn_mask is True =
    # *forbidden*, the opposite of ours. float64; tolerance 1e-12.
    import torch

    D, H, n = 12, 3, 6
    torch_mha = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        torch_mha.in_proj_weight.copy_(torch.from_numpy(rng.standard_normal((3 * D, D)) / math.sqrt(D)))
        torch_mha.in_proj_bias.copy_(torch.from_numpy(rng.standard_normal(3 * D)))
        torch_mha.out_proj.bias.copy_(torch.from_numpy(rng.standard_normal(D)))
    W_in = torch_mha.in_proj_weight.detach().numpy()
    b_in = torch_mha.in_proj_bias.detach().numpy()
    mha = MultiHeadAttention.from_fused(
        W_in[:D].T,
        W_in[D : 2 * D].T,
        W_in[2 * D :].T,
        torch_mha.out_proj.weight.detach().numpy().T,
        H,
        b_Q=b_in[:D],
        b_K=b_in[D : 2 * D],
        b_V=b_in[2 * D :],
        b_O=torch_mha.out_proj.bias.detach().numpy(),
        causal=causal,
    )
    X = rng.standard_normal((n, D))
    forbidden = torch.from_numpy(np.triu(np.ones((n, n), bool), 1)) if causal else None
    x = torch.from_numpy(X)[None]
    with torch.no_grad():
        out, weights = torch_mha(x, x, x, attn_mask=forbidden, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(mha(X), out[0].numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mha.attention(X), weights[0].numpy(), rtol=1e-12, atol=1e-15)


def test_linear_part_and_the_bias_remainder(rng):
    # Oracles: (i) M_h = W_V^h W_O^h from a loop; (ii) without biases MHA = Σ_h A^(h) X M_h (associativity);
    # (iii) with biases MHA − linear part = 1(Σ_h b_V^h W_O^h + b_O), the same row for every token, because
    # each A^(h) is row-stochastic (closed form). Tolerance 1e-13 relative (values of order 1).
    mha = random_multihead(rng, 4, 10, 3, d_value=2, bias=True, causal=True)
    X = rng.standard_normal((8, 10))
    maps = mha.value_output_maps()
    for h in range(4):
        np.testing.assert_allclose(maps[h], mha.W_V[h] @ mha.W_O[h], rtol=1e-15)
    remainder = sum(mha.b_V[h] @ mha.W_O[h] for h in range(4)) + mha.b_O
    np.testing.assert_allclose(mha(X) - mha.linear_part(X), np.tile(remainder, (8, 1)), rtol=1e-12, atol=1e-13)
    bias_free = MultiHeadAttention(mha.W_Q, mha.W_K, mha.W_V, mha.W_O, b_Q=mha.b_Q, b_K=mha.b_K, causal=True)
    np.testing.assert_allclose(bias_free(X), bias_free.linear_part(X), rtol=1e-13, atol=1e-14)
    loop = sum(bias_free.attention(X)[h] @ X @ maps[h] for h in range(4))
    np.testing.assert_allclose(bias_free.linear_part(X), loop, rtol=1e-13, atol=1e-14)


def test_per_head_masks_broadcast_over_the_head_axis(rng):
    # Oracle: head h with its own mask, via AttentionHead; tolerance 1e-15 (same arithmetic).
    mha = random_multihead(rng, 2, 6, 3)
    X = rng.standard_normal((4, 6))
    masks = rng.random((2, 4, 4)) < 0.6
    masks[:, np.arange(4), np.arange(4)] = True
    A = mha.attention(X, mask=masks)
    for h in range(2):
        np.testing.assert_allclose(A[h], mha.head(h).operator(X, mask=masks[h]), rtol=1e-15)
        assert np.all(A[h][~masks[h]] == 0.0)


@needs_torch
def test_multihead_numpy_equals_torch(rng, backend):
    # Oracle: the numpy route with the same seed; 1e-13 relative.
    seed = int(rng.integers(2**31))
    mha = random_multihead(seed, 3, 6, 2, bias=True, causal=True, backend=backend)
    reference = random_multihead(seed, 3, 6, 2, bias=True, causal=True)
    X = rng.standard_normal((5, 6))
    Xb = to_backend(X, backend)
    np.testing.assert_allclose(to_numpy(mha(Xb)), reference(X), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(to_numpy(mha.linear_part(Xb)), reference.linear_part(X), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(to_numpy(mha.attention(Xb)), reference.attention(X), rtol=1e-13, atol=1e-16)
    fused = MultiHeadAttention.from_fused(*(to_backend(np.eye(6), backend) for _ in range(4)), 3)
    assert type(fused.W_Q) is type(Xb) and fused.W_Q.shape == (3, 6, 2)


def test_multihead_bad_input(rng):
    W = rng.standard_normal((2, 16, 4))
    with pytest.raises(ValueError, match=r"W_K must have shape \(2, 16, 4\) like W_Q, got \(2, 16, 5\)"):
        MultiHeadAttention(W, rng.standard_normal((2, 16, 5)), W, np.zeros((2, 4, 16)))
    with pytest.raises(
        ValueError, match=r"W_O must have shape \(2, 4, 16\) to match W_V of shape \(2, 16, 4\), got \(2, 4, 12\)"
    ):
        MultiHeadAttention(W, W, W, np.zeros((2, 4, 12)))
    with pytest.raises(
        ValueError, match=r"b_O must have shape \(16,\) to match W_Q of shape \(2, 16, 4\), got \(12,\)"
    ):
        MultiHeadAttention(W, W, W, np.zeros((2, 4, 16)), b_O=np.zeros(12))
    with pytest.raises(ValueError, match=r"beta must be > 0, got -1.0"):
        MultiHeadAttention(W, W, W, np.zeros((2, 4, 16)), beta=-1.0)
    fused = rng.standard_normal((16, 18))
    with pytest.raises(
        ValueError, match=r"W_Q must have a number of columns divisible by n_heads = 4, got shape \(16, 18\)"
    ):
        MultiHeadAttention.from_fused(fused, fused, np.zeros((16, 8)), np.zeros((8, 16)), 4)
    with pytest.raises(
        ValueError, match=r"W_O must have shape \(8, 16\) to match W_V of shape \(16, 8\), got \(16, 16\)"
    ):
        MultiHeadAttention.from_fused(fused, fused, np.zeros((16, 8)), np.zeros((16, 16)), 2)
    with pytest.raises(ValueError, match=r"W_K must have shape \(16, 18\) like W_Q, got \(16, 16\)"):
        MultiHeadAttention.from_fused(fused, np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((8, 16)), 2)
    bad = W.copy()
    bad[1, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"W_V must be finite, got 1 non-finite entry \(first at index \(1, 0, 0\)\)"):
        MultiHeadAttention(W, W, bad, np.zeros((2, 4, 16)))
    mha = MultiHeadAttention(W, W, W, np.zeros((2, 4, 16)))
    with pytest.raises(ValueError, match=r"X must have shape \(n, 16\), got \(5, 3\)"):
        mha(np.zeros((5, 3)))
    with pytest.raises(ValueError, match=r"h must be an integer in \[0, 1\], got 2"):
        mha.head(2)
    with pytest.raises(ValueError, match=r"n_heads must be an integer >= 1, got 0"):
        MultiHeadAttention.from_fused(fused, fused, fused, fused.T, 0)


# ---- random heads -------------------------------------------------------------------------------


def test_random_heads_have_the_standard_init_scale_and_are_reproducible():
    # Oracle: law of large numbers. 160 000 i.i.d. N(0, 1/D) entries: the sample std has relative standard
    # error 1/√(2N) ≈ 0.18%, so 1% is over five standard errors.
    head = random_head(7, 400, 400)
    for W in (head.W_Q, head.W_K, head.W_V, head.W_O):
        assert abs(W.std() * math.sqrt(400) - 1) < 0.01
    again = random_head(np.random.default_rng(7), 400, 400)
    np.testing.assert_array_equal(again.W_O, head.W_O)  # same seed, same draw order
    mha = random_multihead(8, 2, 6, 3, d_value=4, bias=True, scale=0.0)
    assert all(np.all(getattr(mha, name) == 0) for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"))
    assert mha.W_V.shape == (2, 6, 4) and mha.W_O.shape == (2, 4, 6)


def test_random_heads_bad_input():
    with pytest.raises(ValueError, match=r"backend must be one of 'numpy', 'torch:cpu', 'torch:cuda', got 'jax'"):
        random_head(0, 4, 2, backend="jax")
    with pytest.raises(ValueError, match=r"d_head must be an integer >= 1, got 0"):
        random_head(0, 4, 0)
    with pytest.raises(ValueError, match=r"scale must be in \[0, inf\), got -1.0"):
        random_multihead(0, 2, 4, 2, scale=-1.0)
    with pytest.raises(TypeError, match=r"rng must be a numpy Generator, an integer seed or None, got str"):
        random_head("seed", 4, 2)
    with pytest.raises(TypeError, match=r"bias must be a bool, got int"):
        random_multihead(0, 2, 4, 2, bias=1)
