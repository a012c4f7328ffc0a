r"""The masked row softmax and attention masks: row-stochastic operators on an admissible support.

A mask restricts each row to its admissible keys (True = key :math:`j` visible from query :math:`i`; causal:
:math:`j \le i`), with :math:`\mathsf P_{ij} = 0` exactly off the mask; the result is row-stochastic and acts
on functions from the left (positive generator :math:`\mathsf L = I - \mathsf P`).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §7; book/reference.md §A.7 ("Full head"), §B.6
(causal lower-triangular support, valid-token masks).
A. Vaswani et al., "Attention is all you need", NeurIPS 2017, §3.2.3.
"""

from __future__ import annotations

import math

import array_api_compat
import numpy as np

from workbench.attention._head_checks import check_flag, is_bool, validated_mask
from workbench.backend import host_array, namespace, to_numpy
from workbench.markov import softmax_operator
from workbench.memory import check_memory
from workbench.validation import as_array, check_integer, shape_of

__all__ = ["attention_mask", "softmax_rows"]


def check_rows_nonempty(admissible) -> None:
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
    Attention Geometry §7; book/reference.md §A.7 ("Full head"); workbench.markov.softmax_operator is
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
    mask = validated_mask(mask, raw)
    xp = namespace(logits=raw, mask=mask)
    admissible = xp.broadcast_to(mask, raw.shape)
    check_rows_nonempty(admissible)
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
    book/reference.md §B.6 (causal lower-triangular support, valid-token masks); Vaswani et al. (2017) §3.2.3.

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
    causal = check_flag("causal", causal)
    check_memory(f"an n×n boolean mask (n = {n})", float(n) * n)
    if valid is None:
        xp, device = namespace(np.empty(0)), None
    else:
        if isinstance(valid, (list, tuple)):
            valid = host_array("valid", valid)
        if not (isinstance(valid, np.ndarray) or array_api_compat.is_torch_array(valid)):
            raise TypeError(f"valid must be a boolean array (True = valid token), got {type(valid).__name__}")
        if not is_bool(valid):
            raise TypeError(f"valid must be a boolean array (True = valid token), got {valid.dtype}")
        xp = namespace(valid)
        if shape_of(valid) != (n,):
            raise ValueError(f"valid must have shape (n,) = ({n},), got {shape_of(valid)}")
        device = array_api_compat.device(valid)
    index = xp.arange(n, device=device)
    rows, cols = index[:, None], index[None, :]
    mask = cols <= rows if causal else xp.ones((n, n), dtype=xp.bool, device=device)
    if valid is not None:
        mask = mask & (valid[None, :] | (rows == cols))
    return mask
