r"""Attention heads as Markov operators: masked row softmax, one head, multi-head attention.

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
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §7; attention-geometry-math §A.7 ("Full head").
From Self-Attention to Connection Laplacian, Eq. (4); attention-geometry-math §B.3 [RECON].
A. Vaswani et al., "Attention is all you need", NeurIPS 2017 (scaled dot-product and multi-head attention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_backend, to_numpy
from workbench.markov import MarkovOperator, softmax_operator
from workbench.validation import as_array, check_choice, check_in_range, check_integer, shape_of

__all__ = [
    "AttentionHead",
    "MultiHeadAttention",
    "attention_mask",
    "random_head",
    "random_multihead",
    "softmax_rows",
]


# ---- masks and the masked row softmax --------------------------------------------------------------


def _is_bool(x) -> bool:
    if array_api_compat.is_torch_array(x):
        import torch

        return x.dtype == torch.bool
    return x.dtype == np.bool_


def _validated_mask(mask, like):
    """Return ``mask`` as a boolean array of ``like``'s library, checked broadcastable to ``like.shape``."""
    if isinstance(mask, (list, tuple)):
        mask = np.asarray(mask)
    namespace(like, mask)  # one array library per call (TypeError on mixing)
    if not hasattr(mask, "dtype") or not _is_bool(mask):
        kind = getattr(mask, "dtype", type(mask).__name__)
        raise TypeError(f"mask must be a boolean array (True = admissible key), got {kind}")
    target = shape_of(like)
    try:
        joint = np.broadcast_shapes(shape_of(mask), target)
    except ValueError:
        joint = None
    if joint != target:
        raise ValueError(f"mask must be broadcastable to the logits shape {target}, got shape {shape_of(mask)}")
    return mask


def _check_rows_nonempty(admissible) -> None:
    xp = namespace(admissible)
    empty = ~xp.any(admissible, axis=-1)
    if bool(xp.any(empty)):
        where = np.argwhere(np.asarray(to_numpy(empty)))[0]
        row = int(where[-1])
        batch = f" (batch index {tuple(int(b) for b in where[:-1])})" if where.size > 1 else ""
        raise ValueError(f"mask must leave at least one admissible key in every row; row {row} has none{batch}")


def softmax_rows(logits, mask=None):
    r"""Row softmax of ``logits`` restricted to a mask, computed stably.

    .. math::

        \mathsf P_{ij} = \frac{\mathbb 1[M_{ij}]\, e^{z_{ij} - m_i}}{\sum_l \mathbb 1[M_{il}]\, e^{z_{il} - m_i}},
        \qquad m_i = \max_{l:\,M_{il}} z_{il} .

    Subtracting the row maximum :math:`m_i` over admissible entries changes nothing mathematically and keeps
    every exponent :math:`\le 0`, so logits of any finite size neither overflow nor lose the row.  The result
    is the Markov operator of :math:`\exp_\odot(z)` on the admissible support: row-stochastic, acting from the
    left; positive generator :math:`\mathsf L = I - \mathsf P`.

    Parameters
    ----------
    logits : array, shape=[..., n, m]
        Logits :math:`z`; must be finite wherever the mask is True (masked entries may hold anything,
        including ``-inf`` or NaN, and are ignored).
    mask : bool array, shape broadcastable to [..., n, m], optional
        True = admissible (key :math:`j` visible from query :math:`i`).  Same array library as ``logits``.

    Returns
    -------
    array, shape=[..., n, m]
        Row-stochastic, with :math:`\mathsf P_{ij} = 0` exactly where the mask is False.

    Raises
    ------
    ValueError
        If a row has no admissible entry, if an admissible logit is not finite, or if the mask does not
        broadcast to the logits.
    TypeError
        If the mask is not boolean, or the two mix numpy and torch.

    References
    ----------
    Attention Geometry §7; attention-geometry-math §A.7 ("Full head"); workbench.markov.softmax_operator is
    the unmasked case.

    Examples
    --------
    >>> import numpy as np
    >>> z = np.array([[0.0, np.log(3.0), 5.0], [1.0, 2.0, 3.0]])
    >>> mask = np.array([[True, True, False], [True, True, True]])
    >>> P = softmax_rows(z, mask)
    >>> P[0].round(12).tolist()  # e^0 : e^{log 3} = 1 : 3 on the two admissible keys
    [0.25, 0.75, 0.0]
    >>> bool(np.allclose(P[1], np.exp(z[1]) / np.exp(z[1]).sum(), rtol=1e-15, atol=0))
    True
    """
    if mask is None:
        logits = as_array("logits", logits, min_ndim=2)
        if logits.shape[-1] == 0:
            raise ValueError(f"logits must have at least one column (key), got shape {shape_of(logits)}")
        return softmax_operator(logits)
    raw = logits
    if not array_api_compat.is_torch_array(raw):
        try:
            raw = np.asarray(raw)
        except (ValueError, TypeError) as exc:
            raise TypeError(f"logits must be a numeric array, got {type(logits).__name__}") from exc
    if raw.ndim < 2:
        raise ValueError(f"logits must have at least 2 dimensions, got shape {shape_of(raw)}")
    mask = _validated_mask(mask, raw)
    xp = namespace(raw, mask)
    admissible = xp.broadcast_to(mask, raw.shape)
    _check_rows_nonempty(admissible)
    try:
        bad = admissible & ~xp.isfinite(raw)
    except TypeError:  # a non-numeric dtype: as_array below says so
        bad = None
    if bad is not None and bool(xp.any(bad)):
        count = int(xp.sum(xp.astype(bad, xp.int64)))
        first = tuple(int(i) for i in np.argwhere(np.asarray(to_numpy(bad)))[0])
        plural = "entry" if count == 1 else "entries"
        raise ValueError(
            f"logits must be finite at admissible entries (mask True), got {count} non-finite {plural} "
            f"(first at index {first})"
        )
    # Masked entries are zeroed before conversion (they may hold -inf or NaN) and set to -inf after it.
    logits = as_array("logits", xp.where(admissible, raw, xp.zeros_like(raw)), min_ndim=2)
    neg_inf = xp.asarray(-math.inf, dtype=logits.dtype, device=array_api_compat.device(logits))
    z = xp.where(admissible, logits, neg_inf)
    z = z - xp.max(z, axis=-1, keepdims=True)  # finite: every row has an admissible, finite entry
    weights = xp.exp(z)  # exactly 0 where masked: exp(-inf) = 0
    return weights / xp.sum(weights, axis=-1, keepdims=True)


def attention_mask(n, *, causal=False, valid=None):
    r"""Boolean attention mask (True = admissible key), causal and/or with padding.

    .. math::

        M_{ij} = C_{ij} \wedge (v_j \vee i = j),\qquad C_{ij} = [\, j \le i\,] \text{ if causal, else } 1 .

    Keys :math:`j` of invalid tokens (:math:`v_j` False, e.g. padding) are masked for every query.  The query
    row of an invalid token keeps its own diagonal entry, so no row is ever empty and the softmax stays
    defined; such a token only receives mass from itself, so under a full (non-causal) mask it is a
    transient state of the walk and carries no stationary mass.

    Parameters
    ----------
    n : int
        Number of tokens, at least 1.
    causal : bool
        Restrict query :math:`i` to keys :math:`j \le i`.
    valid : bool array, shape=[n], optional
        Valid tokens; numpy or torch.  The mask is returned in the same library (numpy otherwise).

    Returns
    -------
    bool array, shape=[n, n]

    References
    ----------
    attention-geometry-math §B.6 (causal lower-triangular support, valid-token masks); Vaswani et al. (2017) §3.2.3.

    Examples
    --------
    >>> import numpy as np
    >>> M = attention_mask(3, causal=True, valid=np.array([True, False, True]))
    >>> M.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 0, 1]]
    >>> bool((M == (np.tril(np.ones((3, 3), bool)) & (np.array([1, 0, 1], bool) | np.eye(3, dtype=bool)))).all())
    True
    """
    n = check_integer("n", n, 1)
    causal = _check_flag("causal", causal)
    if valid is None:
        xp, device = namespace(np.empty(0)), None
    else:
        if isinstance(valid, (list, tuple)):
            valid = np.asarray(valid)
        xp = namespace(valid)
        if not hasattr(valid, "dtype") or not _is_bool(valid):
            raise TypeError(f"valid must be a boolean array (True = valid token), got {valid.dtype}")
        if shape_of(valid) != (n,):
            raise ValueError(f"valid must have shape ({n},), got {shape_of(valid)}")
        device = array_api_compat.device(valid)
    index = xp.arange(n, device=device)
    rows, cols = index[:, None], index[None, :]
    mask = cols <= rows if causal else xp.ones((n, n), dtype=xp.bool, device=device)
    if valid is not None:
        mask = mask & (valid[None, :] | (rows == cols))
    return mask


# ---- shape checks with messages naming both parameters ---------------------------------------------


def _check_shape(name, array, expected, reference=None, *, like=False):
    """Raise unless ``array`` has ``expected`` shape (entries ``None`` are free, printed by their symbol)."""
    shape = shape_of(array)
    ok = len(shape) == len(expected) and all(e is None or s == e for s, e in zip(shape, expected, strict=False))
    if ok:
        return
    entries = ["d_v" if e is None else str(e) for e in expected]
    printed = f"({entries[0]},)" if len(entries) == 1 else "(" + ", ".join(entries) + ")"
    if reference is None:
        raise ValueError(f"{name} must have shape {printed}, got {shape}")
    ref_name, ref = reference
    if like:
        raise ValueError(f"{name} must have shape {printed} like {ref_name}, got {shape}")
    raise ValueError(f"{name} must have shape {printed} to match {ref_name} of shape {shape_of(ref)}, got {shape}")


def _check_beta(beta, d_head):
    if beta is None:
        return 1.0 / math.sqrt(d_head)
    if isinstance(beta, bool) or not isinstance(beta, Real):
        if hasattr(beta, "shape") and tuple(beta.shape) == ():
            beta = float(beta)
        else:
            raise TypeError(f"beta must be a real number, got {type(beta).__name__}")
    beta = float(beta)
    if math.isnan(beta) or beta <= 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if math.isinf(beta):
        raise ValueError(f"beta must be finite, got {beta!r}")
    return beta


def _check_flag(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _causal_mask(n, like):
    r"""The causal mask :math:`j \le i`, shape (n, n), in the library and on the device of ``like``."""
    xp = namespace(like)
    index = xp.arange(n, device=array_api_compat.device(like))
    return index[None, :] <= index[:, None]


def _weights(fields, names):
    """Convert the given weight fields with ``as_array`` (finite, floating) and check one array library."""
    converted = {}
    for name in names:
        value = fields[name]
        converted[name] = None if value is None else as_array(name, value)
    namespace(*(v for v in converted.values() if v is not None))  # TypeError if numpy and torch are mixed
    return converted


def _context(X, d_model, reference):
    """Validate the context ``X``: a 2-D array with ``d_model`` columns and at least one row."""
    X = as_array("X", X, ndim=2)
    namespace(X, reference)  # TypeError if X and the weights mix numpy and torch
    n, width = shape_of(X)
    if width != d_model:
        raise ValueError(f"X must have shape (n, {d_model}), got {(n, width)}")
    if n == 0:
        raise ValueError(f"X must have at least one row (token), got shape {(n, width)}")
    return X


def _admissible(mask, logits, causal):
    r"""The user mask (validated against ``logits``) combined with the causal mask :math:`j \le i`."""
    if mask is not None:
        mask = _validated_mask(mask, logits)
    if causal:
        causal_mask = _causal_mask(int(logits.shape[-1]), logits)
        mask = causal_mask if mask is None else mask & causal_mask
    return mask


# ---- one head ---------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class AttentionHead:
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
    Attention Geometry §7; attention-geometry-math §A.7 ("Full head": :math:`\mathsf J =
    \exp_\odot(\beta\mathcal R M\mathcal R^\top)`, :math:`M = W_Q W_K^\top`, :math:`\beta = d_h^{-1/2}`).

    Examples
    --------
    >>> import numpy as np
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

    def __post_init__(self):
        names = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V")
        w = _weights({name: getattr(self, name) for name in names}, names)
        W_Q = w["W_Q"]
        if W_Q.ndim != 2 or 0 in shape_of(W_Q):
            raise ValueError(f"W_Q must be a nonempty 2-dimensional array (D, d_h), got shape {shape_of(W_Q)}")
        D, d_h = shape_of(W_Q)
        _check_shape("W_K", w["W_K"], (D, d_h), ("W_Q", W_Q), like=True)
        if w["W_V"] is not None:
            _check_shape("W_V", w["W_V"], (D, None), ("W_Q", W_Q))
            if w["W_V"].shape[1] == 0:
                raise ValueError(f"W_V must have at least one column (d_v >= 1), got shape {shape_of(w['W_V'])}")
        for name in ("W_O", "b_V"):
            if w[name] is not None and w["W_V"] is None:
                raise ValueError(f"{name} needs W_V (it acts on the values X W_V), got W_V=None")
        d_v = None if w["W_V"] is None else int(w["W_V"].shape[1])
        if w["W_O"] is not None:
            _check_shape("W_O", w["W_O"], (d_v, D), ("W_V", w["W_V"]))
        if w["b_Q"] is not None:
            _check_shape("b_Q", w["b_Q"], (d_h,), ("W_Q", W_Q))
        if w["b_K"] is not None:
            _check_shape("b_K", w["b_K"], (d_h,), ("W_K", w["W_K"]))
        if w["b_V"] is not None:
            _check_shape("b_V", w["b_V"], (d_v,), ("W_V", w["W_V"]))
        for name, value in w.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "beta", _check_beta(self.beta, d_h))
        object.__setattr__(self, "causal", _check_flag("causal", self.causal))

    def __repr__(self) -> str:
        biases = tuple(name for name in ("b_Q", "b_K", "b_V") if getattr(self, name) is not None)
        return (
            f"AttentionHead(d_model={self.d_model}, d_head={self.d_head}, d_value={self.d_value}, "
            f"beta={self.beta:.6g}, causal={self.causal}, biases={biases})"
        )

    @property
    def d_model(self) -> int:
        """Model width :math:`D` (rows of :math:`W_Q`)."""
        return int(self.W_Q.shape[0])

    @property
    def d_head(self) -> int:
        """Query/key width :math:`d_h` (columns of :math:`W_Q`)."""
        return int(self.W_Q.shape[1])

    @property
    def d_value(self) -> int | None:
        """Value width :math:`d_v` (columns of :math:`W_V`), or None without a value map."""
        return None if self.W_V is None else int(self.W_V.shape[1])

    def queries(self, X):
        r"""Queries :math:`Q = X W_Q + \mathbf 1 b_Q`, shape (n, d_h)."""
        X = _context(X, self.d_model, self.W_Q)
        Q = X @ self.W_Q
        return Q if self.b_Q is None else Q + self.b_Q

    def keys(self, X):
        r"""Keys :math:`K = X W_K + \mathbf 1 b_K`, shape (n, d_h)."""
        X = _context(X, self.d_model, self.W_Q)
        K = X @ self.W_K
        return K if self.b_K is None else K + self.b_K

    def scores(self, X):
        r"""Raw (unscaled) scores :math:`W_{ij} = q_i\cdot k_j`, i.e. :math:`W = Q K^\top`, shape (n, n).

        Without biases :math:`W = X M X^\top` with :math:`M` = :meth:`bilinear_form`.
        """
        xp = namespace(self.W_Q)
        return self.queries(X) @ xp.matrix_transpose(self.keys(X))

    def logits(self, X):
        r"""Logits :math:`\beta W_{ij} = \beta\, q_i\cdot k_j`, shape (n, n)."""
        return self.beta * self.scores(X)

    def operator(self, X, mask=None):
        r"""The head's Markov operator :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta W)` on the mask.

        Row-stochastic, acting from the left; positive generator :math:`\mathsf L = I - \mathsf P`.  ``mask``
        (bool, broadcastable to (n, n), True = admissible) is intersected with the causal mask when the head is
        causal; see :func:`softmax_rows`.

        Returns
        -------
        array, shape=[n, n]
        """
        logits = self.logits(X)
        return softmax_rows(logits, _admissible(mask, logits, self.causal))

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
        values = as_array("X", X, ndim=2) @ self.W_V
        if self.b_V is not None:
            values = values + self.b_V
        return (P @ values) @ self.W_O

    def bilinear_form(self):
        r"""The bilinear form :math:`M = W_Q W_K^\top` (D × D) of the bias-free scores, :math:`W = X M X^\top`.

        With biases the scores are affine in :math:`X` on each side:
        :math:`W = X M X^\top + X W_Q b_K^\top\mathbf 1^\top + \mathbf 1 b_Q W_K^\top X^\top + (b_Q\cdot b_K)
        \mathbf 1\mathbf 1^\top`; only the second term depends on the key, so only it changes :math:`\mathsf P`
        beyond :math:`M`.

        References
        ----------
        attention-geometry-math §A.7 ("Full head", :math:`M = W_Q W_K^\top`).
        """
        return self.W_Q @ namespace(self.W_K).matrix_transpose(self.W_K)


# ---- multi-head attention -------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class MultiHeadAttention:
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
    From Self-Attention to Connection Laplacian, Eq. (4); attention-geometry-math §B.3 [RECON].
    Vaswani et al. (2017) §3.2.2.

    Examples
    --------
    >>> import numpy as np
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

    def __post_init__(self):
        names = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
        w = _weights({name: getattr(self, name) for name in names}, names)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if w[name] is None:
                raise ValueError(f"{name} is required, got None")
        W_Q, W_V = w["W_Q"], w["W_V"]
        if W_Q.ndim != 3 or 0 in shape_of(W_Q):
            raise ValueError(f"W_Q must be a nonempty 3-dimensional array (H, D, d_h), got shape {shape_of(W_Q)}")
        H, D, d_h = shape_of(W_Q)
        _check_shape("W_K", w["W_K"], (H, D, d_h), ("W_Q", W_Q), like=True)
        _check_shape("W_V", W_V, (H, D, None), ("W_Q", W_Q))
        d_v = int(W_V.shape[2])
        if d_v == 0:
            raise ValueError(f"W_V must have d_v >= 1, got shape {shape_of(W_V)}")
        _check_shape("W_O", w["W_O"], (H, d_v, D), ("W_V", W_V))
        for name, expected, ref in (
            ("b_Q", (H, d_h), "W_Q"),
            ("b_K", (H, d_h), "W_K"),
            ("b_V", (H, d_v), "W_V"),
            ("b_O", (D,), "W_Q"),
        ):
            if w[name] is not None:
                _check_shape(name, w[name], expected, (ref, w[ref]))
        for name, value in w.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "beta", _check_beta(self.beta, d_h))
        object.__setattr__(self, "causal", _check_flag("causal", self.causal))

    def __repr__(self) -> str:
        biases = tuple(name for name in ("b_Q", "b_K", "b_V", "b_O") if getattr(self, name) is not None)
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
        w = _weights(dict(zip(names, (W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O), strict=True)), names)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if w[name] is None:
                raise ValueError(f"{name} is required, got None")
        W_Q, W_V = w["W_Q"], w["W_V"]
        if W_Q.ndim != 2:
            raise ValueError(f"W_Q must be a 2-dimensional array (D, H·d_h), got shape {shape_of(W_Q)}")
        D, HQ = shape_of(W_Q)
        _check_shape("W_K", w["W_K"], (D, HQ), ("W_Q", W_Q), like=True)
        _check_shape("W_V", W_V, (D, None), ("W_Q", W_Q))
        HV = int(W_V.shape[1])
        _check_shape("W_O", w["W_O"], (HV, D), ("W_V", W_V))
        for name, columns in (("W_Q", HQ), ("W_V", HV)):
            if columns % H:
                raise ValueError(
                    f"{name} must have a number of columns divisible by n_heads = {H}, got shape {shape_of(w[name])}"
                )
        for name, expected, ref in (("b_Q", (HQ,), "W_Q"), ("b_K", (HQ,), "W_K"), ("b_V", (HV,), "W_V")):
            if w[name] is not None:
                _check_shape(name, w[name], expected, (ref, w[ref]))
        if w["b_O"] is not None:
            _check_shape("b_O", w["b_O"], (D,), ("W_Q", W_Q))
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

    @property
    def n_heads(self) -> int:
        """Number of heads :math:`H`."""
        return int(self.W_Q.shape[0])

    @property
    def d_model(self) -> int:
        """Model width :math:`D`."""
        return int(self.W_Q.shape[1])

    @property
    def d_head(self) -> int:
        """Query/key width :math:`d_h` per head."""
        return int(self.W_Q.shape[2])

    @property
    def d_value(self) -> int:
        """Value width :math:`d_v` per head."""
        return int(self.W_V.shape[2])

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

    def _stack(self, W, b, X):
        r"""Per-head projections :math:`X W^h + \mathbf 1 b^h`, shape (H, n, width)."""
        projected = X @ W  # (n, D) @ (H, D, w) broadcasts to (H, n, w)
        return projected if b is None else projected + b[:, None, :]

    def attention(self, X, mask=None):
        r"""The attention stack :math:`A^{(h)}`, shape (H, n, n), each row-stochastic on the mask.

        ``mask`` is a bool array broadcastable to (H, n, n) (one (n, n) mask for all heads, or one per head),
        intersected with the causal mask when the module is causal.
        """
        X = _context(X, self.d_model, self.W_Q)
        xp = namespace(X)
        Q = self._stack(self.W_Q, self.b_Q, X)
        K = self._stack(self.W_K, self.b_K, X)
        logits = self.beta * (Q @ xp.matrix_transpose(K))
        return softmax_rows(logits, _admissible(mask, logits, self.causal))

    def value_output_maps(self):
        r"""Value-output maps :math:`M_h = W_V^h W_O^h`, shape (H, D, D).

        References
        ----------
        From Self-Attention to Connection Laplacian, Eq. (4); attention-geometry-math §B.3 [RECON].
        """
        return self.W_V @ self.W_O

    def __call__(self, X, mask=None):
        r"""Forward map :math:`\sum_h A^{(h)}(X W_V^h + \mathbf 1 b_V^h) W_O^h + \mathbf 1 b_O`, shape (n, D)."""
        A = self.attention(X, mask)
        X = as_array("X", X, ndim=2)
        xp = namespace(X)
        out = xp.sum((A @ self._stack(self.W_V, self.b_V, X)) @ self.W_O, axis=0)
        return out if self.b_O is None else out + self.b_O

    def linear_part(self, X, mask=None):
        r"""The bias-free part :math:`\sum_h A^{(h)} X M_h` with :math:`M_h = W_V^h W_O^h`, shape (n, D).

        This is the part the connection-walk identity concerns.  Because every :math:`A^{(h)}` is
        row-stochastic, :math:`A^{(h)}\mathbf 1 b_V^h = \mathbf 1 b_V^h`, so the remainder
        :math:`\operatorname{MHA}(X) - \sum_h A^{(h)} X M_h = \mathbf 1\big(\sum_h b_V^h W_O^h + b_O\big)` is the
        same row for every token, independent of :math:`X` and of the attention.

        References
        ----------
        From Self-Attention to Connection Laplacian, Eq. (4); attention-geometry-math §B.3 [RECON].
        """
        A = self.attention(X, mask)
        X = as_array("X", X, ndim=2)
        xp = namespace(X)
        return xp.sum(A @ (X @ self.value_output_maps()), axis=0)


# ---- random heads for tests, notebooks and catalogue checks ----------------------------------------


def _generator(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator, an integer seed or None, got {type(rng).__name__}")


def _draw_scale(scale, d_model):
    if scale is None:
        return 1.0 / math.sqrt(d_model)
    return check_in_range("scale", scale, 0.0)


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
    rng = _generator(rng)
    d_model = check_integer("d_model", d_model, 1)
    d_head = check_integer("d_head", d_head, 1)
    d_value = d_head if d_value is None else check_integer("d_value", d_value, 1)
    sigma = _draw_scale(scale, d_model)
    bias = _check_flag("bias", bias)
    check_choice("backend", backend, ("numpy", "torch:cpu", "torch:cuda"))
    shapes = {
        "W_Q": (d_model, d_head),
        "W_K": (d_model, d_head),
        "W_V": (d_model, d_value),
        "W_O": (d_value, d_model),
    }
    if bias:
        shapes |= {"b_Q": (d_head,), "b_K": (d_head,), "b_V": (d_value,)}
    weights = {name: to_backend(sigma * rng.standard_normal(shape), backend) for name, shape in shapes.items()}
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
    rng = _generator(rng)
    H = check_integer("n_heads", n_heads, 1)
    d_model = check_integer("d_model", d_model, 1)
    d_head = check_integer("d_head", d_head, 1)
    d_value = d_head if d_value is None else check_integer("d_value", d_value, 1)
    sigma = _draw_scale(scale, d_model)
    bias = _check_flag("bias", bias)
    check_choice("backend", backend, ("numpy", "torch:cpu", "torch:cuda"))
    shapes = {
        "W_Q": (H, d_model, d_head),
        "W_K": (H, d_model, d_head),
        "W_V": (H, d_model, d_value),
        "W_O": (H, d_value, d_model),
    }
    if bias:
        shapes |= {"b_Q": (H, d_head), "b_K": (H, d_head), "b_V": (H, d_value), "b_O": (d_model,)}
    weights = {name: to_backend(sigma * rng.standard_normal(shape), backend) for name, shape in shapes.items()}
    return MultiHeadAttention(**weights, beta=beta, causal=causal)
