r"""Attention heads as Markov operators: one head, and multi-head attention as a stack of heads.

A head with query and key maps :math:`W_Q, W_K \in \mathbb R^{D\times d_h}` reads a context
:math:`X \in \mathbb R^{n\times D}` (row-vector features: token :math:`i` is the row :math:`X_i`) through
queries :math:`q_i = X_i W_Q + b_Q` and keys :math:`k_j = X_j W_K + b_K`.  Its raw scores
:math:`W_{ij} = q_i\cdot k_j` (for a bias-free head :math:`W = X M X^\top` with the bilinear form
:math:`M = W_Q W_K^\top`) and an inverse temperature :math:`\beta > 0` (standard attention:
:math:`\beta = d_h^{-1/2}`) give the kernel :math:`\mathsf J = \exp_\odot(\beta W)` and the Markov operator

.. math::

    \mathsf P = \operatorname{diag}(\mathsf J\mathbf 1)^{-1}\mathsf J ,\qquad
    \mathsf P_{ij} = \frac{e^{\beta W_{ij}}}{\sum_l e^{\beta W_{il}}} ,

row-stochastic and acting on functions from the left, :math:`(\mathsf Pf)_i = \sum_j \mathsf P_{ij} f_j`;
its positive generator is :math:`\mathsf L = I - \mathsf P` and its negative one :math:`\mathcal L =
\mathsf P - I`.  A mask restricts each row to its admissible keys (True = key :math:`j` visible from query
:math:`i`; causal: :math:`j \le i`), with :math:`\mathsf P_{ij} = 0` exactly off the mask.

Multi-head attention stacks :math:`H` heads along a leading axis and sums their value-output maps
:math:`M_h = W_V^h W_O^h`:

.. math::

    \operatorname{MHA}(X) = \sum_{h=1}^H A^{(h)} (X W_V^h + \mathbf 1 b_V^h) W_O^h + \mathbf 1 b_O ,

whose bias-free part :math:`\sum_h A^{(h)} X M_h` is the one connection step of the connection-walk
identity.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §7; book/reference.md §A.7 ("Full head").
From Self-Attention to Connection Laplacian, Eq. (4); book/reference.md §B.3 [RECON].
A. Vaswani et al., "Attention is all you need", NeurIPS 2017 (scaled dot-product and multi-head attention).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.attention._head_checks import (
    admissible_mask,
    check_beta,
    check_context,
    check_flag,
    check_head_weights,
    check_shape,
    convert_weights,
    tokens_of,
)
from workbench.attention._overflow import check_overflow, overflow_ignored
from workbench.attention._softmax import softmax_rows
from workbench.attention._split_checks import scaled_logits
from workbench.backend import namespace
from workbench.markov import MarkovOperator
from workbench.validation import as_array, check_integer, shape_of

__all__ = ["AttentionHead", "MultiHeadAttention"]


class _Heads:
    r"""What a head and a stack of heads share: the one validation path, widths, projections and the softmax.

    A stack is a head with a leading head axis on every weight, so every shape below is read from the end
    (``W_Q.shape[-2:] = (D, d_h)``) and the projections broadcast over the head axis.  Subclasses are frozen
    dataclasses naming their weight fields in ``_WEIGHTS`` and saying whether they are ``_STACKED``.
    """

    _WEIGHTS = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V")
    _STACKED = False

    def __post_init__(self):
        w, d_h = check_head_weights({name: getattr(self, name) for name in self._WEIGHTS}, stacked=self._STACKED)
        for name, value in w.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "beta", check_beta(self.beta, d_h))
        object.__setattr__(self, "causal", check_flag("causal", self.causal))

    @property
    def d_model(self) -> int:
        """Model width :math:`D` (rows of :math:`W_Q`, of each head's for a stack)."""
        return int(self.W_Q.shape[-2])

    @property
    def d_head(self) -> int:
        """Query/key width :math:`d_h` per head (columns of :math:`W_Q`)."""
        return int(self.W_Q.shape[-1])

    @property
    def d_value(self) -> int | None:
        """Value width :math:`d_v` per head (columns of :math:`W_V`), or None without a value map."""
        return None if self.W_V is None else int(self.W_V.shape[-1])

    def _biases(self) -> tuple[str, ...]:
        return tuple(name for name in self._WEIGHTS if name.startswith("b_") and getattr(self, name) is not None)

    @staticmethod
    def _project(W, b, X):
        r"""Projections :math:`X W + \mathbf 1 b`, shape (n, width), or (H, n, width) for a stack."""
        projected = X @ W  # (n, D) @ (H, D, w) broadcasts to (H, n, w)
        return projected if b is None else projected + b[..., None, :]

    def _inputs(self, X, *names):
        """The context and the named weights that are set, name -> array (for an overflow message)."""
        return {"X": X, **{name: getattr(self, name) for name in names if getattr(self, name) is not None}}

    def _checked_projection(self, W_name, b_name, X):
        """:meth:`_project` of a validated context, refused naming X and the weights if it overflows."""
        with overflow_ignored():
            projected = self._project(getattr(self, W_name), getattr(self, b_name), X)
        return check_overflow(f"the projections X {W_name} + b", projected, self._inputs(X, W_name, b_name))

    def _logits(self, X):
        r"""Logits :math:`\beta\,QK^\top` of a raw context, refused naming X and the weights if they overflow."""
        X = check_context(X, self.d_model, self.W_Q)
        xp = namespace(X)
        with overflow_ignored():
            scores = self._project(self.W_Q, self.b_Q, X) @ xp.matrix_transpose(self._project(self.W_K, self.b_K, X))
        inputs = self._inputs(X, "W_Q", "W_K", "b_Q", "b_K")
        return scores, scaled_logits(self.beta, check_overflow("the scores q·k", scores, inputs))

    def _softmax(self, logits, mask):
        """The row softmax of ``logits`` on the user mask intersected with the causal mask when causal."""
        return softmax_rows(logits, admissible_mask(mask, logits, self.causal, tokens_of("X", logits)))


@dataclass(frozen=True, eq=False, repr=False)
class AttentionHead(_Heads):
    r"""One attention head: the weights, its scores, its Markov operator and its forward map.

    Row-vector convention: :math:`q_i = X_i W_Q + b_Q`, :math:`k_j = X_j W_K + b_K`, raw scores
    :math:`W_{ij} = q_i\cdot k_j`, logits :math:`\beta W`, and

    .. math::

        \mathsf P = \operatorname{rownorm}\exp_\odot(\beta W)\ (\text{on the mask}),\qquad
        \operatorname{head}(X) = \mathsf P\,(X W_V + \mathbf 1 b_V)\, W_O .

    :math:`\mathsf P` is row-stochastic and acts from the left; positive generator
    :math:`\mathsf L = I - \mathsf P`.

    Parameters
    ----------
    W_Q, W_K : array, shape=[D, d_h]
        Query and key maps (numpy or torch, finite).
    W_V : array, shape=[D, d_v], optional
        Value map.
    W_O : array, shape=[d_v, D], optional
        Output map (needs ``W_V``).
    b_Q, b_K : array, shape=[d_h], optional
        Query and key biases.
    b_V : array, shape=[d_v], optional
        Value bias (needs ``W_V``).
    beta : float, optional
        Inverse temperature :math:`\beta > 0`; default :math:`d_h^{-1/2}` (standard attention).
    causal : bool
        Mask keys :math:`j > i`.

    References
    ----------
    Attention Geometry §7; book/reference.md §A.7 ("Full head": :math:`\mathsf J =
    \exp_\odot(\beta\mathcal R M\mathcal R^\top)`, :math:`M = W_Q W_K^\top`, :math:`\beta = d_h^{-1/2}`).

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import random_head
    >>> rng = np.random.default_rng(0)
    >>> head = random_head(rng, 6, 3)
    >>> X = rng.standard_normal((4, 6))
    >>> z = (X @ head.W_Q) @ (X @ head.W_K).T / np.sqrt(3)  # the logits, written out
    >>> P_ref = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    >>> bool(np.allclose(head.operator(X), P_ref, rtol=1e-13, atol=0))
    True
    >>> bool(np.allclose(head(X), P_ref @ X @ head.W_V @ head.W_O, rtol=1e-12, atol=1e-15))
    True
    """

    W_Q: object
    W_K: object
    W_V: object = None
    W_O: object = None
    b_Q: object = None
    b_K: object = None
    b_V: object = None
    beta: float | None = None
    causal: bool = False

    def __repr__(self) -> str:
        biases = self._biases()
        return (
            f"AttentionHead(d_model={self.d_model}, d_head={self.d_head}, d_value={self.d_value}, "
            f"beta={self.beta:.6g}, causal={self.causal}, biases={biases})"
        )

    def queries(self, X):
        r"""Queries :math:`Q = X W_Q + \mathbf 1 b_Q`, shape (n, d_h)."""
        return self._checked_projection("W_Q", "b_Q", check_context(X, self.d_model, self.W_Q))

    def keys(self, X):
        r"""Keys :math:`K = X W_K + \mathbf 1 b_K`, shape (n, d_h)."""
        return self._checked_projection("W_K", "b_K", check_context(X, self.d_model, self.W_Q))

    def scores(self, X):
        r"""Raw (unscaled) scores :math:`W_{ij} = q_i\cdot k_j`, i.e. :math:`W = Q K^\top`, shape (n, n).

        Without biases :math:`W = X M X^\top` with :math:`M` = :meth:`bilinear_form`.  Scores that overflow
        float64 (finite inputs of size about :math:`10^{154}` or more) are refused naming X and the weights.
        """
        return self._logits(X)[0]

    def logits(self, X):
        r"""Logits :math:`\beta W_{ij} = \beta\, q_i\cdot k_j`, shape (n, n)."""
        return self._logits(X)[1]

    def operator(self, X, mask=None):
        r"""The head's Markov operator :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta W)` on the mask.

        Row-stochastic, acting from the left; positive generator :math:`\mathsf L = I - \mathsf P`.  ``mask``
        (bool, broadcastable to (n, n), True = admissible) is intersected with the causal mask when the head is
        causal; see :func:`softmax_rows`.

        Returns
        -------
        array, shape=[n, n]
        """
        return self._softmax(self.logits(X), mask)

    def markov(self, X, mask=None) -> MarkovOperator:
        r"""The operator :meth:`operator` wrapped as a :class:`workbench.markov.MarkovOperator`.

        It carries the stationary law :math:`\pi`, the flux :math:`\operatorname{diag}(\pi)\mathsf P`, the
        detailed-balance residual and the spectrum.
        """
        return MarkovOperator(self.operator(X, mask))

    def __call__(self, X, mask=None):
        r"""Forward map :math:`\mathsf P\,(X W_V + \mathbf 1 b_V)\, W_O`, shape (n, D)."""
        if self.W_V is None or self.W_O is None:
            missing = " and ".join(name for name in ("W_V", "W_O") if getattr(self, name) is None)
            raise ValueError(f"the forward map P (X W_V + b_V) W_O needs W_V and W_O; this head has no {missing}")
        P = self.operator(X, mask)
        return (P @ self._project(self.W_V, self.b_V, as_array("X", X, ndim=2))) @ self.W_O

    def bilinear_form(self):
        r"""The bilinear form :math:`M = W_Q W_K^\top` (D × D) of the bias-free scores, :math:`W = X M X^\top`.

        With biases the scores are affine in :math:`X` on each side:
        :math:`W = X M X^\top + X W_Q b_K^\top\mathbf 1^\top + \mathbf 1 b_Q W_K^\top X^\top + (b_Q\cdot b_K)
        \mathbf 1\mathbf 1^\top`; only the second term depends on the key, so only it changes :math:`\mathsf P`
        beyond :math:`M`.

        References
        ----------
        book/reference.md §A.7 ("Full head", :math:`M = W_Q W_K^\top`).
        """
        return self.W_Q @ namespace(self.W_K).matrix_transpose(self.W_K)


# ---- multi-head attention -------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class MultiHeadAttention(_Heads):
    r"""Multi-head attention with weights stacked along a leading head axis.

    .. math::

        \operatorname{MHA}(X) = \sum_{h=1}^H A^{(h)}(X W_V^h + \mathbf 1 b_V^h)\, W_O^h + \mathbf 1 b_O ,
        \qquad A^{(h)} = \operatorname{rownorm}\exp_\odot\!\big(\beta (X W_Q^h + \mathbf 1 b_Q^h)
        (X W_K^h + \mathbf 1 b_K^h)^\top\big)

    on the mask.  Each :math:`A^{(h)}` is row-stochastic (acts from the left; positive generator
    :math:`I - A^{(h)}`).  :math:`W_O^h` is the h-th row block of the fused output matrix.

    Parameters
    ----------
    W_Q, W_K : array, shape=[H, D, d_h]
    W_V : array, shape=[H, D, d_v]
    W_O : array, shape=[H, d_v, D]
    b_Q, b_K : array, shape=[H, d_h], optional
    b_V : array, shape=[H, d_v], optional
    b_O : array, shape=[D], optional
    beta : float, optional
        Inverse temperature :math:`\beta > 0`; default :math:`d_h^{-1/2}`.
    causal : bool
        Mask keys :math:`j > i` in every head.

    References
    ----------
    From Self-Attention to Connection Laplacian, Eq. (4); book/reference.md §B.3 [RECON].
    Vaswani et al. (2017) §3.2.2.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import random_multihead
    >>> rng = np.random.default_rng(1)
    >>> mha = random_multihead(rng, 3, 6, 2)
    >>> X = rng.standard_normal((5, 6))
    >>> loop = sum(mha.head(h)(X) for h in range(3))  # one head at a time
    >>> bool(np.allclose(mha(X), loop, rtol=1e-12, atol=1e-14))
    True
    >>> mha.attention(X).shape, mha.value_output_maps().shape
    ((3, 5, 5), (3, 6, 6))
    """

    W_Q: object
    W_K: object
    W_V: object
    W_O: object
    b_Q: object = None
    b_K: object = None
    b_V: object = None
    b_O: object = None
    beta: float | None = None
    causal: bool = False

    _WEIGHTS = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
    _STACKED = True

    def __repr__(self) -> str:
        biases = self._biases()
        return (
            f"MultiHeadAttention(n_heads={self.n_heads}, d_model={self.d_model}, d_head={self.d_head}, "
            f"d_value={self.d_value}, beta={self.beta:.6g}, causal={self.causal}, biases={biases})"
        )

    @classmethod
    def from_fused(
        cls,
        W_Q,
        W_K,
        W_V,
        W_O,
        n_heads,
        b_Q=None,
        b_K=None,
        b_V=None,
        b_O=None,
        beta=None,
        causal=False,
    ) -> MultiHeadAttention:
        r"""Split fused projection matrices (row-vector convention) into stacked heads.

        Head :math:`h` uses the columns :math:`h d_h : (h+1) d_h` of the fused :math:`W_Q, W_K` (D × H·d_h)
        and of their biases, the columns :math:`h d_v : (h+1) d_v` of :math:`W_V` (D × H·d_v), and the rows
        :math:`h d_v : (h+1) d_v` of :math:`W_O` (H·d_v × D):

        .. math::

            \operatorname{concat}_h\big(A^{(h)} V^{(h)}\big)\, W_O = \sum_h A^{(h)} V^{(h)} W_O^h .

        A torch ``nn.Linear`` stores the transpose (:math:`y = x W^\top + b`), so pass ``weight.T``.

        Parameters
        ----------
        W_Q, W_K : array, shape=[D, H·d_h]
        W_V : array, shape=[D, H·d_v]
        W_O : array, shape=[H·d_v, D]
        n_heads : int
            :math:`H`; must divide the column counts of :math:`W_Q` and :math:`W_V`.
        b_Q, b_K : array, shape=[H·d_h], optional
        b_V : array, shape=[H·d_v], optional
        b_O : array, shape=[D], optional
        beta, causal
            As in the class.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(2)
        >>> W_Q, W_K, W_V, W_O = (rng.standard_normal((4, 4)) for _ in range(4))
        >>> mha = MultiHeadAttention.from_fused(W_Q, W_K, W_V, W_O, n_heads=2)
        >>> bool((mha.W_Q[1] == W_Q[:, 2:4]).all() and (mha.W_O[1] == W_O[2:4, :]).all())
        True
        """
        H = check_integer("n_heads", n_heads, 1)
        names = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
        w = convert_weights(dict(zip(names, (W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O), strict=True)), names)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if w[name] is None:
                raise ValueError(f"{name} is required, got None")
        W_Q, W_V = w["W_Q"], w["W_V"]
        if W_Q.ndim != 2:
            raise ValueError(f"W_Q must be a 2-dimensional array (D, H·d_h), got shape {shape_of(W_Q)}")
        D, HQ = shape_of(W_Q)
        check_shape("W_K", w["W_K"], (D, HQ), ("W_Q", W_Q), like=True)
        check_shape("W_V", W_V, (D, None), ("W_Q", W_Q))
        HV = int(W_V.shape[1])
        check_shape("W_O", w["W_O"], (HV, D), ("W_V", W_V))
        for name, columns in (("W_Q", HQ), ("W_V", HV)):
            if columns % H:
                raise ValueError(
                    f"{name} must have a number of columns divisible by n_heads = {H}, got shape {shape_of(w[name])}"
                )
        for name, expected, ref in (("b_Q", (HQ,), "W_Q"), ("b_K", (HQ,), "W_K"), ("b_V", (HV,), "W_V")):
            if w[name] is not None:
                check_shape(name, w[name], expected, (ref, w[ref]))
        if w["b_O"] is not None:
            check_shape("b_O", w["b_O"], (D,), ("W_Q", W_Q))
        xp = namespace(W_Q)
        d_h, d_v = HQ // H, HV // H

        def columns(M, width):  # (D, H·w) -> (H, D, w): head h takes columns h·w:(h+1)·w
            return xp.permute_dims(xp.reshape(M, (D, H, width)), (1, 0, 2))

        def blocks(b, width):  # (H·w,) -> (H, w)
            return None if b is None else xp.reshape(b, (H, width))

        return cls(
            W_Q=columns(W_Q, d_h),
            W_K=columns(w["W_K"], d_h),
            W_V=columns(W_V, d_v),
            W_O=xp.reshape(w["W_O"], (H, d_v, D)),  # row blocks of W_O
            b_Q=blocks(w["b_Q"], d_h),
            b_K=blocks(w["b_K"], d_h),
            b_V=blocks(w["b_V"], d_v),
            b_O=w["b_O"],
            beta=beta,
            causal=causal,
        )

    @classmethod
    def from_heads(cls, heads, b_O=None) -> MultiHeadAttention:
        r"""Stack heads into multi-head attention: :math:`\sum_h \mathrm{head}_h(X) + \mathbf 1 b_O`.

        The inverse of :meth:`head`: the weights of the heads are stacked along a leading head axis.

        Parameters
        ----------
        heads : sequence of AttentionHead
            Nonempty; every head has :math:`W_V` and :math:`W_O`, all have the same widths, β and causality, and a
            bias is given in every head or in none.
        b_O : array, shape=[D], optional
            The output bias (not per head).

        Returns
        -------
        MultiHeadAttention

        Examples
        --------
        >>> import numpy as np
        >>> from workbench.attention import random_multihead
        >>> mha = random_multihead(np.random.default_rng(6), 3, 6, 2, bias=True)
        >>> rebuilt = MultiHeadAttention.from_heads([mha.head(h) for h in range(3)], b_O=mha.b_O)
        >>> X = np.random.default_rng(7).standard_normal((4, 6))
        >>> bool(np.array_equal(rebuilt(X), mha(X)))
        True
        """
        if isinstance(heads, (AttentionHead, str, bytes)) or not isinstance(heads, Sequence) or len(heads) == 0:
            raise TypeError(f"heads must be a nonempty sequence of AttentionHead, got {type(heads).__name__}")
        for h, head in enumerate(heads):
            if not isinstance(head, AttentionHead):
                raise TypeError(f"heads[{h}] must be an AttentionHead, got {type(head).__name__}")
        first = heads[0]
        for h, head in enumerate(heads):
            mine = (head.d_model, head.d_head, head.d_value, head.beta, head.causal)
            theirs = (first.d_model, first.d_head, first.d_value, first.beta, first.causal)
            if mine != theirs:
                raise ValueError(
                    "heads must share (d_model, d_head, d_value, beta, causal), "
                    f"got {theirs} in heads[0] and {mine} in heads[{h}]"
                )
        xp = namespace(*(head.W_Q for head in heads))

        def stacked(name):
            values = [getattr(head, name) for head in heads]
            missing = [h for h, value in enumerate(values) if value is None]
            if len(missing) == len(values):
                return None
            if missing:
                raise ValueError(f"{name} must be given in every head or in none, got None in heads {missing}")
            return xp.stack(values)

        weights = {name: stacked(name) for name in AttentionHead._WEIGHTS}
        return cls(**weights, b_O=b_O, beta=first.beta, causal=first.causal)

    @property
    def n_heads(self) -> int:
        """Number of heads :math:`H`."""
        return int(self.W_Q.shape[0])

    def head(self, h) -> AttentionHead:
        r"""Head :math:`h` as an :class:`AttentionHead` (same β and causality; :math:`b_O` is not per head)."""
        h = check_integer("h", h, 0, self.n_heads - 1)

        def pick(b):
            return None if b is None else b[h]

        return AttentionHead(
            self.W_Q[h],
            self.W_K[h],
            self.W_V[h],
            self.W_O[h],
            b_Q=pick(self.b_Q),
            b_K=pick(self.b_K),
            b_V=pick(self.b_V),
            beta=self.beta,
            causal=self.causal,
        )

    def attention(self, X, mask=None):
        r"""The attention stack :math:`A^{(h)}`, shape (H, n, n), each row-stochastic on the mask.

        ``mask`` is a bool array broadcastable to (H, n, n) (one (n, n) mask for all heads, or one per head),
        intersected with the causal mask when the module is causal.
        """
        return self._softmax(self._logits(X)[1], mask)

    def value_output_maps(self):
        r"""Value-output maps :math:`M_h = W_V^h W_O^h`, shape (H, D, D).

        References
        ----------
        From Self-Attention to Connection Laplacian, Eq. (4); book/reference.md §B.3 [RECON].
        """
        return self.W_V @ self.W_O

    def __call__(self, X, mask=None):
        r"""Forward map :math:`\sum_h A^{(h)}(X W_V^h + \mathbf 1 b_V^h) W_O^h + \mathbf 1 b_O`, shape (n, D)."""
        A = self.attention(X, mask)
        X = as_array("X", X, ndim=2)
        xp = namespace(X)
        out = xp.sum((A @ self._project(self.W_V, self.b_V, X)) @ self.W_O, axis=0)
        return out if self.b_O is None else out + self.b_O

    def linear_part(self, X, mask=None):
        r"""The bias-free part :math:`\sum_h A^{(h)} X M_h` with :math:`M_h = W_V^h W_O^h`, shape (n, D).

        This is the part the connection-walk identity concerns.  Because every :math:`A^{(h)}` is
        row-stochastic, :math:`A^{(h)}\mathbf 1 b_V^h = \mathbf 1 b_V^h`, so the remainder
        :math:`\operatorname{MHA}(X) - \sum_h A^{(h)} X M_h = \mathbf 1\big(\sum_h b_V^h W_O^h + b_O\big)` is the
        same row for every token, independent of :math:`X` and of the attention.

        References
        ----------
        From Self-Attention to Connection Laplacian, Eq. (4); book/reference.md §B.3 [RECON].
        """
        A = self.attention(X, mask)
        X = as_array("X", X, ndim=2)
        xp = namespace(X)
        return xp.sum(A @ (X @ self.value_output_maps()), axis=0)
