"""OperatorAttention (workbench.nn): multi-head self-attention with DMAP/DMTN/ATAP/ATTN logits.

Oracles: torch's own ``nn.MultiheadAttention`` for the ATTN corner (same weights, float64: agreement to
1e-12, a few roundings of O(1) sums); the attention layer's numpy ``family_operator`` on the layer's head
weights for every corner (the same formula evaluated by a second backend, float64: 1e-12); the structural
facts DMAP/ATAP reversible and skew-free for any weights.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from workbench.attention import OPERATORS, family_operator, reversibility_residual  # noqa: E402
from workbench.nn import OperatorAttention  # noqa: E402


def _layer(operator, causal=False, seed=0, d_model=12, n_heads=3):
    torch.manual_seed(seed)
    return OperatorAttention(d_model, n_heads, operator, causal=causal).double()


@pytest.mark.parametrize("causal", [False, True])
def test_attn_corner_is_torch_multihead_attention(causal):
    layer = _layer("ATTN", causal=causal)
    reference = torch.nn.MultiheadAttention(12, 3, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        reference.in_proj_weight.copy_(torch.cat([layer.query.weight, layer.key.weight, layer.value.weight]))
        reference.in_proj_bias.zero_()
        reference.out_proj.weight.copy_(layer.out.weight)
        reference.out_proj.bias.copy_(layer.out.bias)
    x = torch.randn(2, 7, 12, dtype=torch.float64)
    mask = torch.ones(7, 7, dtype=torch.bool).triu(1) if causal else None  # torch: True = NOT allowed
    expected, expected_P = reference(x, x, x, attn_mask=mask, average_attn_weights=False)
    y, P = layer(x, return_operator=True)
    assert torch.allclose(y, expected, rtol=0, atol=1e-12)
    assert torch.allclose(P, expected_P, rtol=0, atol=1e-12)
    if causal:
        assert torch.all(P.triu(1) == 0)  # masked keys are exactly zero, not small


@pytest.mark.parametrize("operator", OPERATORS)
def test_operators_match_the_numpy_family_on_the_head_weights(operator):
    layer = _layer(operator, seed=1)
    x = torch.randn(1, 6, 12, dtype=torch.float64)
    P = layer.attention(x)[0].detach().numpy()
    X = x[0].numpy()
    for h, (W_Q, W_K) in enumerate(layer.head_weights()):
        expected = family_operator(X @ W_Q, X @ W_K, operator, beta=1 / math.sqrt(layer.d_head))
        np.testing.assert_allclose(P[h], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("operator", OPERATORS)
def test_exact_link_corners_are_reversible_and_skew_free(operator):
    layer = _layer(operator, seed=2)
    P = layer.attention(torch.randn(3, 8, 12, dtype=torch.float64)).detach().numpy()
    residual = max(reversibility_residual(P[b, h]) for b in range(3) for h in range(3))
    ratios = layer.skew_ratios()
    if operator in ("DMAP", "ATAP"):
        assert residual < 1e-12  # Doob transform of a symmetric kernel: detailed balance up to rounding
        assert np.all(ratios == 0.0)  # no bilinear skew at all: exactly zero
    else:
        assert residual > 1e-2 and np.all(ratios > 0.1)  # a free link breaks detailed balance generically
    assert residual <= math.sqrt(2) + 1e-12


def test_dmap_self_bond_is_the_largest_logit():
    # DMAP logits are -β/4‖m_i − m_j‖² up to a row constant: the diagonal maximises every row.
    P = _layer("DMAP", seed=3).attention(torch.randn(2, 9, 12, dtype=torch.float64)).detach()
    assert torch.all(P.diagonal(dim1=-2, dim2=-1) >= P.max(dim=-1).values - 1e-15)


@pytest.mark.parametrize("operator", OPERATORS)
def test_gradients_reach_every_weight(operator):
    layer = _layer(operator, seed=4, d_model=4, n_heads=2)
    x = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda z: layer(z), (x,))  # analytic vs finite-difference Jacobian
    layer(torch.randn(2, 5, 4, dtype=torch.float64)).pow(2).sum().backward()
    grads = {name: p.grad for name, p in layer.named_parameters()}
    assert all(g is not None for g in grads.values())
    if operator != "DMAP":
        assert grads["key.weight"].abs().sum() > 0  # DMAP depends on q + k only, still both receive gradient


def test_validation_messages():
    with pytest.raises(ValueError, match="n_heads must divide d_model, got d_model=10 and n_heads=3"):
        OperatorAttention(10, 3)
    with pytest.raises(ValueError, match="operator"):
        OperatorAttention(8, 2, "SOFTMAX")
    with pytest.raises(ValueError, match=r"x must have shape \[batch, tokens, 8\], got \(3, 8\)"):
        OperatorAttention(8, 2)(torch.randn(3, 8))
