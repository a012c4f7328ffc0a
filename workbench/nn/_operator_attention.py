r"""Multi-head self-attention with the scores of any of the four operators (DMAP, DMTN, ATAP, ATTN).

The layer is ordinary multi-head attention except for one line: the logits of head :math:`h` are the
operator's logits :func:`workbench.attention.operator_logits` on that head's queries and keys,

.. math::

    \mathsf P^{(h)} = \operatorname{rownorm}\exp_\odot\bigl(\ell^{\mathrm{op}}(q^{(h)}, k^{(h)})\bigr),
    \qquad
    \mathrm{MHSA}(X) = \sum_h \mathsf P^{(h)} X W_V^{(h)} W_O^{(h)} + b_O,

with :math:`q^{(h)} = XW_Q^{(h)}`, :math:`k^{(h)} = XW_K^{(h)}` (row convention, :math:`W^{(h)} \in
\mathbb R^{D\times d_h}`) and :math:`\beta = 1/\sqrt{d_h}`.  The logits are
:func:`workbench.attention.family_logits_unchecked` at the operator's corner: the core of
:func:`workbench.attention.family_logits` without its boundary checks (a training step would spend a third of
its time validating tensors the layer made itself), so the layer and the attention package share one formula;
the tests hold this path to the attention package's own ``family_operator`` to 1e-12 in float64.  A trained
layer is read back with the same formulas the diagnostics use: :meth:`OperatorAttention.head_weights` returns
:math:`(W_Q^{(h)}, W_K^{(h)})` in that convention.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §7 (the four operators), §9 and §11 (the experiments);
book/reference.md §A.7 [CODE nanochat ``gpt.py``].
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from workbench.attention import CORNERS, OPERATORS, family_logits_unchecked, operator_skew_ratio
from workbench.nn._primitives import check_finite_result, check_layer_input, check_width
from workbench.validation import check_choice, check_finite, check_flag, check_integer

__all__ = ["OperatorAttention", "project_attention"]


class OperatorAttention(nn.Module):
    r"""Multi-head self-attention whose row-softmax logits are those of a chosen operator.

    .. math::

        \mathrm{MHSA}(X) = \sum_h \operatorname{rownorm}\exp_\odot\bigl(\ell^{\mathrm{op}}(XW_Q^{(h)},
        XW_K^{(h)})\bigr)\, X W_V^{(h)} W_O^{(h)} + b_O .

    Parameters
    ----------
    d_model : int
        Width :math:`D` of the residual stream.
    n_heads : int
        Number of heads; must divide ``d_model`` (head width :math:`d_h = D / H`).
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}
        The score geometry (:data:`workbench.attention.OPERATORS`).
    causal : bool
        Causal mask (query :math:`i` sees keys :math:`j \le i`).

    References
    ----------
    Attention Geometry §7, Table 4; book/reference.md §A.7.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> layer = OperatorAttention(8, 2, "DMAP")
    >>> x = torch.randn(3, 5, 8)
    >>> y, P = layer(x, return_operator=True)
    >>> tuple(y.shape), tuple(P.shape)
    ((3, 5, 8), (3, 2, 5, 5))
    >>> bool(torch.allclose(P.sum(-1), torch.ones(3, 2, 5)))  # row-stochastic
    True
    >>> bool(torch.allclose(P[0, 0].diagonal(), P[0, 0].max(dim=-1).values))  # DMAP: the self-bond is the largest
    True
    """

    def __init__(self, d_model: int, n_heads: int, operator: str = "ATTN", *, causal: bool = False):
        super().__init__()
        d_model = check_width("d_model", d_model, 1, matrices=4)
        n_heads = check_integer("n_heads", n_heads, 1)
        if d_model % n_heads:
            raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}")
        self.operator = check_choice("operator", operator, OPERATORS)
        self.causal = check_flag("causal", causal)
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.query = nn.Linear(d_model, d_model, bias=False)
        self.key = nn.Linear(d_model, d_model, bias=False)
        self.value = nn.Linear(d_model, d_model, bias=False)
        self.out = nn.Linear(d_model, d_model)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        batch, n, _ = x.shape
        return x.view(batch, n, self.n_heads, self.d_head).transpose(1, 2)  # [B, H, n, d_h]

    def _logits(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        # family_logits(q, k, b, a) of workbench.attention: its unchecked core, the same formula.
        b, a = CORNERS[self.operator]
        return family_logits_unchecked(q, k, b, a, 1.0 / math.sqrt(self.d_head))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        r"""The heads' Markov operators :math:`\mathsf P^{(h)}`, shape ``[B, H, n, n]``, rows summing to 1."""
        # Finite x near the float range overflows the logits (softmax then gives nan): refused naming x.
        P = self._operator(x)
        check_finite_result("the attention operator", P, x=x)
        return P

    def _operator(self, x: torch.Tensor) -> torch.Tensor:
        check_layer_input(x)
        if x.ndim != 3 or x.shape[-1] != self.query.in_features:
            raise ValueError(f"x must have shape [batch, tokens, {self.query.in_features}], got {tuple(x.shape)}")
        if x.dtype != self.query.weight.dtype:
            raise TypeError(
                f"x must have the dtype of the layer's weights ({self.query.weight.dtype}), got {x.dtype}; "
                "cast the layer (.double(), .float()) or x"
            )
        check_finite("x", x.detach())
        logits = self._logits(self._split(self.query(x)), self._split(self.key(x)))
        if self.causal:
            n = x.shape[1]
            future = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)
            logits = logits.masked_fill(future, -math.inf)  # exp(−∞) = 0: masked keys get exactly zero weight
        return torch.softmax(logits, dim=-1)

    def forward(self, x: torch.Tensor, return_operator: bool = False):
        return_operator = check_flag("return_operator", return_operator)
        P = self._operator(x)
        mixed = (P @ self._split(self.value(x))).transpose(1, 2).reshape(x.shape)
        y = self.out(mixed)
        # One check of the output: a nan in P (overflowed logits) or an overflowed value reaches y.
        check_finite_result("the layer output", y, x=x)
        return (y, P) if return_operator else y

    def head_weights(self) -> list[tuple[np.ndarray, np.ndarray]]:
        r"""Per head :math:`(W_Q^{(h)}, W_K^{(h)})`, each ``[D, d_h]`` in the row convention :math:`q = XW_Q`."""
        wq = self.query.weight.detach().cpu().double().numpy()
        wk = self.key.weight.detach().cpu().double().numpy()
        s = slice
        return [
            (wq[s(h * self.d_head, (h + 1) * self.d_head)].T, wk[s(h * self.d_head, (h + 1) * self.d_head)].T)
            for h in range(self.n_heads)
        ]

    def skew_ratios(self) -> np.ndarray:
        r"""Score skew ratio :math:`\rho_{\mathrm{skew}}` of each head's effective form.

        Exactly 0 for DMAP and ATAP (their link is exact, so the effective form has no skew part).
        """
        return np.array([operator_skew_ratio(wq, wk, self.operator) for wq, wk in self.head_weights()])


def project_attention(module: nn.Module, operator: str) -> int:
    r"""Project every :class:`OperatorAttention` in ``module`` onto a corner of the family, in place.

    The weights are kept and each head's logits become ``operator``'s: the weight-preserving substitution of
    Attention Geometry §10 (ATTN → DMTN by :math:`\mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top`, DMTN
    → DMAP by folding onto :math:`W_M`), head by head the projection
    :func:`workbench.attention.project_head` of its :meth:`OperatorAttention.head_weights`.  Nothing else in
    ``module`` changes, so a model can be projected, adapted and projected again (Attention Geometry §11,
    Table 3: ATTN → DMTN → ATTN → DMTN).

    Parameters
    ----------
    module : torch.nn.Module
        A model holding one or more :class:`OperatorAttention` layers.
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}

    Returns
    -------
    int
        How many attention layers were projected (a module with none is refused).

    References
    ----------
    Attention Geometry §10, §11 [SEED]; book/reference.md §A.7 "The four parameterisations" [CODE].

    Examples
    --------
    >>> import torch
    >>> from workbench.attention import project_head
    >>> torch.manual_seed(0) and None
    >>> layer = OperatorAttention(6, 2, "ATTN").double()
    >>> x = torch.randn(1, 4, 6, dtype=torch.float64)
    >>> project_attention(layer, "DMTN"), layer.operator
    (1, 'DMTN')
    >>> W_Q, W_K = layer.head_weights()[0]
    >>> oracle = project_head(W_Q, W_K, "DMTN").operator(x[0].numpy(), beta=1 / 3**0.5)
    >>> bool(torch.allclose(layer.attention(x)[0, 0], torch.from_numpy(oracle), atol=1e-12))
    True
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"module must be a torch.nn.Module, got {type(module).__name__}")
    operator = check_choice("operator", operator, OPERATORS)
    layers = [m for m in module.modules() if isinstance(m, OperatorAttention)]
    if not layers:
        raise ValueError(
            f"module must hold at least one OperatorAttention layer, got a {type(module).__name__} with none"
        )
    for layer in layers:
        layer.operator = operator
    return len(layers)
