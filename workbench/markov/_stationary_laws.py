r"""The stationary laws of a stack of chains (softmax heads of a layer, say), one GTH elimination for all.

References
----------
Grassmann, Taksar and Heyman (1985); O'Cinneide (1993): the elimination and its entrywise accuracy.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.backend import namespace
from workbench.markov._markov_operator import MarkovOperator
from workbench.markov._stationary import gth_stationary
from workbench.validation import as_array, check_in_range, check_row_stochastic

__all__ = ["stationary_laws"]


def stationary_laws(P, *, atol: float | None = None):
    r"""The stationary laws :math:`\pi^\top\mathsf P = \pi^\top` of a stack of dense stochastic matrices.

    A stack whose every transition is a normal positive number (softmax attention without a mask, say) is
    irreducible matrix by matrix, so each law is unique and one GTH elimination over the whole stack gives them
    all (the same arithmetic as one matrix at a time, without a Python loop per matrix).  Any other stack is read
    one matrix at a time by :attr:`MarkovOperator.stationary`, which also says why a law is not unique or not
    determined.

    Parameters
    ----------
    P : array, shape=[..., n, n]
        Row-stochastic (numpy or torch).
    atol : float, optional
        Row-sum tolerance (default that of :func:`workbench.validation.check_row_stochastic`).

    Returns
    -------
    array, shape=[..., n]

    Raises
    ------
    ValueError
        As :attr:`MarkovOperator.stationary`, naming the matrix of the stack.

    References
    ----------
    Grassmann, Taksar and Heyman (1985); O'Cinneide (1993).

    Examples
    --------
    >>> P = np.array([[[0.5, 0.5], [0.25, 0.75]], [[0.9, 0.1], [0.3, 0.7]]])
    >>> stationary_laws(P).round(6).tolist()
    [[0.333333, 0.666667], [0.75, 0.25]]
    """
    P = as_array("P", P, min_ndim=2)
    if atol is not None:
        atol = check_in_range("atol", atol, 0.0)
    try:
        check_row_stochastic("P", P, atol=atol)
    except ValueError as exc:  # with a tight atol, the tolerance is the knob to turn
        raise ValueError(f"{exc}" + ("" if atol is None else f" (row-sum tolerance atol = {atol:g})")) from None
    xp = namespace(P)
    lead, n = tuple(int(s) for s in P.shape[:-2]), int(P.shape[-1])
    flat = xp.reshape(P, (math.prod(lead), n, n))
    laws = None
    if n and bool(xp.all(flat >= xp.finfo(P.dtype).tiny)):  # every transition normal and positive
        laws = gth_stationary(flat)
    if laws is None:
        rows = []
        for k in range(int(flat.shape[0])):
            where = "P" if not lead else f"P[{', '.join(map(str, np.unravel_index(k, lead)))}]"
            try:
                rows.append(MarkovOperator(flat[k], atol=1e-10 if atol is None else atol).stationary)
            except ValueError as exc:
                raise ValueError(f"cannot compute the stationary law of {where}: {exc}") from exc
        laws = xp.stack(rows) if rows else xp.zeros((0, n), dtype=P.dtype)
    return xp.reshape(laws, (*lead, n))
