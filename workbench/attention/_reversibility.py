r"""Irreversibility of a head and asymmetry of its score form: the residual ε_rev and the skew ratio ρ_skew.

The detailed-balance residual :math:`\varepsilon_{\mathrm{rev}} \in [0, \sqrt2]` of a row-stochastic map and
the skew ratio :math:`\rho_{\mathrm{skew}} = \lVert M_A\rVert_F / \lVert M_S\rVert_F` of a bilinear form.
Stacks of maps ``shape=[..., n, n]`` (e.g. ``(layers, heads, n, n)``) are accepted throughout; numpy
arrays and torch tensors alike.

The exact formulas of the paper's Table 1 metrics were not recovered; the ones here are reconstructions
consistent with every constraint in the paper ([RECON], book/reference.md §A.10).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; book/reference.md §A.10, §A.12 [RECON].
"""

from __future__ import annotations

import math

import array_api_compat
import numpy as np

from workbench.attention._overflow import binary_scale
from workbench.attention._stochastic_checks import check_stochastic, default_atol, flat_stack, scalar_or_array
from workbench.backend import namespace
from workbench.markov import MarkovOperator, stationary_laws
from workbench.validation import as_array, check_nonnegative, check_square

__all__ = ["reversibility_residual", "score_skew_ratio"]


def reversibility_residual(P, pi=None, *, atol: float | None = None):
    r"""Detailed-balance residual :math:`\varepsilon_{\mathrm{rev}}` of an attention map [RECON].

    .. math::

        \varepsilon_{\mathrm{rev}} = \frac{\lVert \operatorname{diag}(\pi)\mathsf P - \mathsf P^\top
        \operatorname{diag}(\pi)\rVert_F}{\lVert\operatorname{diag}(\pi)\mathsf P\rVert_F}
        \in [0, \sqrt2],

    with :math:`\pi` the stationary law (:math:`\pi^\top\mathsf P = \pi^\top`).  It vanishes iff detailed
    balance holds on the support of :math:`\pi`.  The bound: the flux :math:`F = \operatorname{diag}(\pi)
    \mathsf P` is nonnegative, so

    .. math::

        \lVert F - F^\top\rVert_F^2 = 2\lVert F\rVert_F^2 - 2\sum_{ij}F_{ij}F_{ji} \le 2\lVert F\rVert_F^2,

    with equality iff no edge is reciprocated (:math:`F_{ij}F_{ji} = 0` for all :math:`i, j`, self-loops
    included), e.g. a one-way cycle.  The paper's ATTN head reaches 1.414.

    A causal (lower-triangular) map has :math:`\pi = \delta_0`: every walk is absorbed at the first token,
    the flux is the single entry :math:`F_{00} = 1`, and :math:`\varepsilon_{\mathrm{rev}} = 0`.  Pass
    another ``pi`` to weigh the rows differently.

    Parameters
    ----------
    P : array, shape=[..., n, n]
        Row-stochastic; a stack is handled matrix by matrix.
    pi : array, shape=[..., n], optional
        Nonnegative weights with a positive sum (normalised here), one vector per matrix.  By default the
        stationary law of each matrix (:attr:`workbench.markov.MarkovOperator.stationary`), which must be
        unique (one closed class).  Any nonnegative ``pi`` keeps the bound; only the stationary law makes
        zero mean detailed balance.
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array
        A float for one matrix; an array ``shape=P.shape[:-2]`` for a stack.

    Raises
    ------
    ValueError
        If the stationary law of a matrix is not unique (then pass ``pi``).

    References
    ----------
    Attention Geometry Table 1 (:math:`\varepsilon_{\mathrm{rev}}`); book/reference.md §A.10 [RECON],
    §B.4 (the symmetrisability test of :math:`A_{\mathrm{eff}}`).

    Examples
    --------
    >>> import math, numpy as np
    >>> cycle = np.roll(np.eye(4), 1, axis=1)  # i → i+1 (mod 4): no edge is reciprocated
    >>> math.isclose(reversibility_residual(cycle), math.sqrt(2))
    True
    >>> K = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 1.0], [0.5, 1.0, 1.0]])  # symmetric kernel: reversible
    >>> reversibility_residual(K / K.sum(1, keepdims=True)) < 1e-15
    True
    """
    P = check_stochastic("P", P, atol)
    tol = default_atol(P) if atol is None else atol
    flat, lead = flat_stack(P)
    xp = namespace(P)
    if pi is not None:
        pi = as_array("pi", pi, min_ndim=1)
        namespace(P=P, pi=pi)  # one array library per call
        if tuple(pi.shape) != tuple(P.shape[:-1]):
            raise ValueError(
                f"pi must have shape P.shape[:-1] = {tuple(int(s) for s in P.shape[:-1])}, "
                f"got shape {tuple(int(s) for s in pi.shape)}"
            )
        check_nonnegative("pi", pi)
        pi = xp.reshape(pi, (flat.shape[0], int(P.shape[-1])))
    elif lead and bool(xp.all(flat > 0)):  # a positive stack: every law unique, one elimination for all
        pi = stationary_laws(flat, atol=tol)
    values = []
    for k in range(int(flat.shape[0])):
        where = "P" if not lead else f"P[{', '.join(map(str, np.unravel_index(k, lead)))}]"
        weights = None
        if pi is not None:
            weights = pi[k]
            if float(xp.sum(weights)) <= 0.0:
                raise ValueError(f"pi must have a positive sum for {where}, got 0")
        operator = MarkovOperator(flat[k], stationary=weights, atol=tol)
        try:
            values.append(operator.reversibility_residual)
        except ValueError as exc:  # non-unique stationary law: say which matrix, and what to do
            raise ValueError(f"cannot compute ε_rev of {where}: {exc}; or pass pi explicitly") from exc
    if not lead:
        return values[0]
    return xp.reshape(xp.asarray(values, dtype=P.dtype, device=array_api_compat.device(P)), lead)


def score_skew_ratio(M):
    r"""Skew ratio :math:`\rho_{\mathrm{skew}}` of a bilinear score form [RECON].

    .. math::

        \rho_{\mathrm{skew}} = \frac{\lVert M_A\rVert_F}{\lVert M_S\rVert_F}, \qquad
        M_S = \tfrac12(M + M^\top),\quad M_A = \tfrac12(M - M^\top),

    the size of the link (antisymmetric, current-carrying) part of :math:`M = W_Q W_K^\top` against the
    bond (symmetric) part.  Zero for a symmetric form (DMAP, ATAP); about 1 for independent Gaussian
    :math:`W_Q, W_K` (:math:`\mathbb E\,\rho^2 \approx (D-1)/(D+1)`); ``inf`` for a purely antisymmetric
    form.  For one of the four operators pass its *effective* form :math:`M_S^{\mathrm{op}} +
    M_A^{\mathrm{op}}`.

    Parameters
    ----------
    M : array, shape=[..., D, D]
        Real, nonzero.

    Returns
    -------
    float or array
        A float for one form; an array ``shape=M.shape[:-2]`` for a stack.

    References
    ----------
    Attention Geometry Table 1 (:math:`\rho_{\mathrm{skew}}`); book/reference.md §A.10 [RECON]
    (the v1 "R ratio"), §A.12 (≈ 1 at random init).

    Examples
    --------
    >>> import math, numpy as np
    >>> S, A = np.array([[2.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> math.isclose(score_skew_ratio(S + A), math.sqrt(2) / 2)  # ‖A‖ = √2, ‖S‖ = 2
    True
    """
    M = as_array("M", M, min_ndim=2)
    check_square("M", M)
    xp = namespace(M)
    M = M / binary_scale(M, axis=(-2, -1))  # the ratio is scale-free; a power-of-two scale is exact
    Mt = xp.matrix_transpose(M)
    bond = xp.sqrt(xp.sum((0.5 * (M + Mt)) ** 2, axis=(-2, -1)))
    link = xp.sqrt(xp.sum((0.5 * (M - Mt)) ** 2, axis=(-2, -1)))
    if bool(xp.any((bond == 0) & (link == 0))):
        raise ValueError("M must be a nonzero form, got ‖M‖_F = 0 (ρ_skew = 0/0)")
    safe = xp.where(bond > 0, bond, xp.ones_like(bond))
    ratio = xp.where(bond > 0, link / safe, xp.full_like(bond, math.inf))
    return scalar_or_array(ratio)
