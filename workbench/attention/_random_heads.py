r"""Random attention heads at standard initialisation, for tests, notebooks and catalogue checks.

Every weight entry is i.i.d. :math:`\mathcal N(0, \sigma^2)` with :math:`\sigma = D^{-1/2}` by default, drawn
in a fixed order so that a seed reproduces the head on every backend.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §7; book/reference.md §A.7 ("Full head").
From Self-Attention to Connection Laplacian, Eq. (4); book/reference.md §B.3 [RECON].
A. Vaswani et al., "Attention is all you need", NeurIPS 2017 (scaled dot-product and multi-head attention).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.attention._head_checks import check_flag, check_rng
from workbench.attention._heads import AttentionHead, MultiHeadAttention
from workbench.backend import to_backend
from workbench.memory import check_memory
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = ["random_head", "random_multihead"]


def _draw_scale(scale, d_model):
    if scale is None:
        return 1.0 / math.sqrt(d_model)
    return check_in_range("scale", scale, 0.0)


def _gaussian_weights(rng, lead, d_model, d_head, d_value, scale, bias, backend):
    r"""Checked sizes, then iid :math:`\mathcal N(0, \sigma^2)` weights of a head (``lead=()``) or a stack (``(H,)``).

    The draw order is fixed: :math:`W_Q, W_K, W_V, W_O`, then :math:`b_Q, b_K, b_V` (and :math:`b_O` for a stack).
    """
    d_model = check_integer("d_model", d_model, 1)
    d_head = check_integer("d_head", d_head, 1)
    d_value = d_head if d_value is None else check_integer("d_value", d_value, 1)
    sigma = _draw_scale(scale, d_model)
    bias = check_flag("bias", bias)
    check_choice("backend", backend, ("numpy", "torch:cpu", "torch:cuda"))
    shapes = {
        "W_Q": (*lead, d_model, d_head),
        "W_K": (*lead, d_model, d_head),
        "W_V": (*lead, d_model, d_value),
        "W_O": (*lead, d_value, d_model),
    }
    if bias:
        shapes |= {"b_Q": (*lead, d_head), "b_K": (*lead, d_head), "b_V": (*lead, d_value)}
        if lead:
            shapes["b_O"] = (d_model,)
    heads = f"n_heads = {lead[0]}, " if lead else ""
    check_memory(
        f"the weights ({heads}d_model = {d_model}, d_head = {d_head}, d_value = {d_value})",
        8.0 * sum(math.prod(shape) for shape in shapes.values()),
    )
    weights = {}
    for name, shape in shapes.items():
        with np.errstate(over="ignore"):
            drawn = sigma * rng.standard_normal(shape)
        if not np.isfinite(drawn).all():
            raise ValueError(f"scale must keep the Gaussian weights finite in float64, got scale={sigma:g}")
        weights[name] = to_backend(drawn, backend)
    return weights


def random_head(
    rng,
    d_model,
    d_head,
    *,
    d_value=None,
    scale=None,
    bias=False,
    causal=False,
    beta=None,
    backend="numpy",
) -> AttentionHead:
    r"""A head with i.i.d. Gaussian weights :math:`\mathcal N(0, \sigma^2)`, :math:`\sigma = D^{-1/2}` by default.

    The draw order is fixed (:math:`W_Q, W_K, W_V, W_O`, then :math:`b_Q, b_K, b_V`), so a seed reproduces
    the head on every backend.

    Parameters
    ----------
    rng : numpy.random.Generator, int or None
        Source of randomness (an int or None seeds ``numpy.random.default_rng``).
    d_model, d_head : int
        :math:`D` and :math:`d_h`.
    d_value : int, optional
        :math:`d_v`; default :math:`d_h`.
    scale : float, optional
        Standard deviation :math:`\sigma \ge 0` of every entry; default :math:`D^{-1/2}` (standard init).
    bias : bool
        Also draw :math:`b_Q, b_K, b_V` with the same :math:`\sigma` (zero biases are the usual init; nonzero
        ones exercise the affine paths).
    causal, beta
        As in :class:`AttentionHead`.
    backend : {'numpy', 'torch:cpu', 'torch:cuda'}
        Array library and device of the weights (float64).

    Returns
    -------
    AttentionHead

    Examples
    --------
    >>> import numpy as np
    >>> head = random_head(np.random.default_rng(3), 400, 400)
    >>> round(float(head.W_Q.std() * np.sqrt(400)), 2)  # σ = 1/√D
    1.0
    >>> head.d_value, head.beta == 1 / 20
    (400, True)
    """
    rng = check_rng("rng", rng)
    weights = _gaussian_weights(rng, (), d_model, d_head, d_value, scale, bias, backend)
    return AttentionHead(**weights, beta=beta, causal=causal)


def random_multihead(
    rng,
    n_heads,
    d_model,
    d_head,
    *,
    d_value=None,
    scale=None,
    bias=False,
    causal=False,
    beta=None,
    backend="numpy",
) -> MultiHeadAttention:
    r"""Multi-head attention with i.i.d. Gaussian weights, :math:`\sigma = D^{-1/2}` by default.

    The draw order is fixed (stacked :math:`W_Q, W_K, W_V, W_O`, then :math:`b_Q, b_K, b_V, b_O`).

    Parameters
    ----------
    rng : numpy.random.Generator, int or None
        Source of randomness.
    n_heads, d_model, d_head : int
        :math:`H`, :math:`D`, :math:`d_h`.
    d_value : int, optional
        :math:`d_v`; default :math:`d_h`.
    scale : float, optional
        Standard deviation :math:`\sigma \ge 0`; default :math:`D^{-1/2}`.
    bias : bool
        Also draw :math:`b_Q, b_K, b_V, b_O` with the same :math:`\sigma`.
    causal, beta
        As in :class:`MultiHeadAttention`.
    backend : {'numpy', 'torch:cpu', 'torch:cuda'}
        Array library and device of the weights (float64).

    Returns
    -------
    MultiHeadAttention

    Examples
    --------
    >>> import numpy as np
    >>> mha = random_multihead(np.random.default_rng(4), 2, 8, 4, bias=True)
    >>> mha.W_O.shape, mha.b_O.shape
    ((2, 4, 8), (8,))
    >>> X = np.random.default_rng(5).standard_normal((3, 8))
    >>> bool(np.allclose(mha.attention(X).sum(axis=-1), 1.0, rtol=0, atol=1e-15))  # row-stochastic
    True
    """
    rng = check_rng("rng", rng)
    H = check_integer("n_heads", n_heads, 1)
    weights = _gaussian_weights(rng, (H,), d_model, d_head, d_value, scale, bias, backend)
    return MultiHeadAttention(**weights, beta=beta, causal=causal)
