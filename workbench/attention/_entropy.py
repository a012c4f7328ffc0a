r"""The spread of a head: row entropy, its mean, the effective neighbour count and the uniform reference.

For an attention map :math:`\mathsf P` (row-stochastic, acting on functions from the left; positive generator
:math:`\mathsf L = I - \mathsf P`): :math:`H_i = -\sum_j \mathsf P_{ij}\log\mathsf P_{ij}`, its mean
:math:`\bar H` and :math:`e^{\bar H} \in [1, n]`; the uniform (causal) head is the closed-form reference.
Stacks of maps ``shape=[..., n, n]`` (e.g. ``(layers, heads, n, n)``) are accepted throughout; numpy
arrays and torch tensors alike.

The exact formulas of the paper's Table 1 metrics were not recovered; the ones here are reconstructions
consistent with every constraint in the paper ([RECON], book/reference.md §A.10).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; book/reference.md §A.10, §A.12 [RECON].
ISA ML01 (attention entropy per head).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.attention._stochastic_checks import check_stochastic, leading_mean
from workbench.backend import namespace
from workbench.memory import check_memory
from workbench.validation import check_flag, check_integer

__all__ = [
    "effective_neighbours",
    "mean_entropy",
    "row_entropy",
    "uniform_entropy",
]


def row_entropy(P, *, atol: float | None = None):
    r"""Shannon entropy of each row of an attention map, with :math:`0\log 0 = 0`.

    .. math::

        H_i = -\sum_j \mathsf P_{ij}\log\mathsf P_{ij}, \qquad 0 \le H_i \le \log\#\{j : \mathsf P_{ij} > 0\}.

    :math:`H_i = 0` for a hard head (one key per query); :math:`H_i = \log n` for a uniform row.  Exact
    zeros (masked keys, e.g. a causal mask) contribute nothing, so no NaN arises.

    Parameters
    ----------
    P : array, shape=[..., n, n]
        Row-stochastic and nonnegative (numpy or torch), e.g. a stack ``(layers, heads, n, n)``.
    atol : float, optional
        Row-sum tolerance; default :math:`\max(10^{-10}, n\,\varepsilon_{\mathrm{dtype}})`, so float32
        attention maps of a real model pass.

    Returns
    -------
    array, shape=[..., n]
        Natural-log entropies, in the library of ``P``.

    References
    ----------
    ISA ML01 (attention entropy per query position); book/reference.md §A.10 (:math:`H_i`).

    Examples
    --------
    >>> import math, numpy as np
    >>> P = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    >>> H = row_entropy(P)
    >>> bool(np.allclose(H, [0.0, math.log(2), 1.5 * math.log(2)]))  # by hand: -Σ p log p
    True
    """
    return _row_entropy(check_stochastic("P", P, atol))


def _row_entropy(P):
    """:func:`row_entropy` of a validated ``P``."""
    xp = namespace(P)
    # log is taken only where P > 0: the 0·log 0 = 0 convention, without a NaN from 0·(−inf).
    log_p = xp.log(xp.where(P > 0, P, xp.ones_like(P)))
    return -xp.sum(P * log_p, axis=-1) + 0.0  # + 0.0 turns −0.0 of a hard row into 0.0


def mean_entropy(P, axis=None, *, atol: float | None = None):
    r"""Mean row entropy :math:`\bar H`: over query rows, then over the leading (stack) axes in ``axis``.

    .. math::

        \bar H = \frac1n\sum_{i=1}^{n} H_i, \qquad H_i = -\sum_j \mathsf P_{ij}\log\mathsf P_{ij},

    averaged further over heads, layers or contexts when ``P`` is a stack.  Every row weighs the same.

    Parameters
    ----------
    P : array, shape=[..., n, n]
        Row-stochastic (see :func:`row_entropy`).
    axis : None, int or tuple of int
        Leading axes of ``P`` (indices into ``P.shape[:-2]``) to average over after the rows; ``None``
        averages over all of them, ``()`` keeps them (one value per head, say).
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array
        A float when everything is averaged; otherwise an array of the kept leading axes.

    References
    ----------
    Attention Geometry Table 1 (:math:`e^{\bar H}`); book/reference.md §A.10 [RECON].

    Examples
    --------
    >>> import math, numpy as np
    >>> heads = np.stack([np.eye(4), np.full((4, 4), 0.25)])  # a hard head and a uniform one
    >>> mean_entropy(heads, axis=()).tolist() == [0.0, math.log(4)]
    True
    >>> math.isclose(mean_entropy(heads), math.log(4) / 2)
    True
    """
    P = check_stochastic("P", P, atol)
    if int(P.shape[-1]) == 0:
        raise ValueError(f"P must have at least one row (query), got shape {tuple(int(s) for s in P.shape)}")
    H = _row_entropy(P)
    xp = namespace(H)
    return leading_mean(xp.mean(H, axis=-1), axis, "P", tuple(int(s) for s in P.shape))


def effective_neighbours(P, axis=None, *, atol: float | None = None):
    r"""Effective neighbour count :math:`e^{\bar H} \in [1, n]` of an attention map [RECON].

    .. math::

        N_{\mathrm{eff}} = \exp\bar H, \qquad \bar H = \operatorname{mean}_{\text{stack}}\,\frac1n\sum_i H_i,

    the exponential of the mean row entropy (mean over query rows first, then over the leading axes in
    ``axis``; see :func:`mean_entropy`).  It counts keys: 1 for a hard (identity-like or shift) head, ``n``
    for a uniform one, :math:`k` for a head spread evenly over :math:`k` keys per row.

    Parameters
    ----------
    P : array, shape=[..., n, n]
        Row-stochastic.
    axis : None, int or tuple of int
        Leading axes averaged in :math:`\bar H` (``None``: all; ``()``: one count per matrix).
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array

    References
    ----------
    Attention Geometry Table 1 (:math:`e^{\bar H}`; 1.14 for DMAP MHSA→FFN); book/reference.md §A.10
    [RECON]: the exact averaging of the paper was not recovered; the mean over rows, then over heads and
    contexts, is the reconstruction.

    Examples
    --------
    >>> import numpy as np
    >>> band = (np.eye(6) + np.roll(np.eye(6), 1, axis=1) + np.roll(np.eye(6), 2, axis=1)) / 3
    >>> round(effective_neighbours(band), 12)  # three equally weighted keys per row
    3.0
    """
    value = mean_entropy(P, axis, atol=atol)
    return math.exp(value) if isinstance(value, float) else namespace(value).exp(value)


def uniform_entropy(n: int, causal: bool = False) -> np.ndarray:
    r"""Row entropies of the uniform head, in closed form.

    .. math::

        H_i = \log n \quad\text{(full)}, \qquad H_i = \log(i + 1) \quad\text{(causal, } i = 0,\dots,n-1),

    the maximum entropy each row can reach under its mask (keys :math:`j \le i` when causal).  The causal
    mean is :math:`\frac1n\log n!`.

    Parameters
    ----------
    n : int
        Number of tokens, ``n >= 1``.
    causal : bool
        Whether row ``i`` sees only the keys ``j <= i``.

    Returns
    -------
    numpy.ndarray, shape=[n]

    References
    ----------
    ISA ML01 (the β → 0 regime, :math:`H = \log n`); book/reference.md §A.10.

    Examples
    --------
    >>> import math
    >>> H = uniform_entropy(5, causal=True)
    >>> math.isclose(H.mean(), math.lgamma(6) / 5)  # (1/n) log n!
    True
    """
    n = check_integer("n", n, 1)
    causal = check_flag("causal", causal)
    check_memory(f"n = {n} row entropies", 8.0 * n)
    if causal:
        return np.log(np.arange(1, n + 1, dtype=np.float64))
    return np.full(n, math.log(n))
