r"""The gauge transformer's mixing step: the multiscale generator, the double exponential, the conjugation identity.

multiscale_generator  -- Q_{i,i+delta} = phi(c_{i,delta}), rows summing to 0 (a dense Markov generator)
double_exponential    -- y = T e^{t Q (x) I} T^{-1} v: transport in, Markov exponential, transport out
conjugated_generator  -- T (Q (x) I) T^{-1} = sum_ij Q_ij E_ij (x) R_{i<-j}, the generator of the double exponential

Conventions: those of :mod:`workbench.nn._transport` (edge :math:`\ell` carries :math:`e^{A_\ell}`, prefix
transports :math:`T_j = e^{A_{j-1}}\cdots e^{A_0}`, column vectors, position-major Kronecker lift).

References
----------
Lie-Exponential Roadmap, sections "gauge transformer", "double exponential", "Multiscale banded
synthesis" [SEED]; the frame convention [RECON].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from workbench.nn._banded_generator import BandedGenerator
from workbench.nn._frames import (
    check_matrices,
    check_same_dtype,
    check_same_frames,
    check_tensor,
    check_transports,
    expm,
    from_frame0,
    solve,
    to_frame0,
)
from workbench.nn._primitives import check_offsets
from workbench.nn._uniformization import DEFAULT_MAX_TERMS, generator_action
from workbench.validation import check_choice, check_finite, check_in_range

__all__ = ["conjugated_generator", "double_exponential", "multiscale_generator"]


# --- multiscale generator -------------------------------------------------------------------------------


def multiscale_generator(
    scores: torch.Tensor,
    offsets: Sequence[int],
    phi: Callable[[torch.Tensor], torch.Tensor] = torch.nn.functional.softplus,
) -> torch.Tensor:
    r"""The banded Markov generator built from transported compatibilities (negative convention, rows sum to 0).

    .. math::

        Q_{i,i+\delta} = \varphi(c_{i,\delta})\ (\delta \in \text{offsets},\ 0 \le i+\delta < n),\qquad
        Q_{ii} = -\sum_{\delta} Q_{i,i+\delta},

    all other entries zero; rates that would leave the chain are dropped, so every row sums to zero and
    :math:`e^{tQ}` is row-stochastic for :math:`t \ge 0`.  Built as
    ``BandedGenerator(offsets, phi(scores).mT).dense()`` (:class:`workbench.nn.BandedGenerator`,
    which stores rates as ``[..., K, n]``): the same banded construction as the exp-Markov layer.  For the
    banded :math:`O(n\,K\,d)`-per-power route, pass that ``BandedGenerator`` itself to
    :func:`double_exponential` with ``method="uniformization"``.

    Parameters
    ----------
    scores : torch.Tensor, shape=[..., n, K]
        :math:`c_{i,\delta}` (:func:`banded_transported_scores`), one column per offset.
    offsets : sequence of int
        The :math:`K` distinct nonzero offsets, :math:`|\delta| \le n-1`.
    phi : callable
        Applied to the whole ``scores`` tensor and must return nonnegative rates of the same shape (so a
        per-offset :math:`\varphi_\delta` acts along the last axis); default softplus.

    Returns
    -------
    torch.Tensor, shape=[..., n, n]
        Dense (differentiable); hand it to :func:`double_exponential`.

    References
    ----------
    Lie-Exponential Roadmap, "multiscale banded synthesis: :math:`(Q)_{i,i+\delta} =
    \phi_\delta(\langle q_i, R_{i\leftarrow i+\delta} k_{i+\delta}\rangle)`, :math:`(Q)_{ii} = -\sum_{\delta\ne0}
    (Q)_{i,i+\delta}`" [SEED].

    Examples
    --------
    >>> import torch
    >>> from workbench.nn import multiscale_offsets
    >>> c = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    >>> Q = multiscale_generator(c, multiscale_offsets(1))
    >>> bool(Q.sum(-1).abs().max() < 1e-14), bool((Q - torch.diag(torch.diagonal(Q)) >= 0).all())
    (True, True)
    >>> float(Q[0, 2]) == float(torch.nn.functional.softplus(c[0, 3]))  # offset +2 is the fourth column
    True
    """
    c = check_tensor("scores", scores, 2)
    n = c.shape[-2]
    if n < 2:
        raise ValueError(
            f"scores must have at least 2 positions (shape [..., n, len(offsets)]), got shape {tuple(c.shape)}"
        )
    deltas = check_offsets(offsets, n=n)
    if c.shape[-1] != len(deltas):
        raise ValueError(
            f"scores must have one column per offset (shape [..., n, {len(deltas)}]), got shape {tuple(c.shape)}"
        )
    if not callable(phi):
        raise TypeError(f"phi must be callable, got {type(phi).__name__}")
    rates = phi(c)
    if not isinstance(rates, torch.Tensor) or rates.shape != c.shape:
        got = tuple(rates.shape) if isinstance(rates, torch.Tensor) else type(rates).__name__
        raise ValueError(f"phi must return a tensor of the shape of scores {tuple(c.shape)}, got {got}")
    check_finite("phi(scores)", rates.detach())
    low = float(rates.detach().min())
    if low < 0:
        raise ValueError(f"phi must return nonnegative rates, got minimum {low:.6g}")
    # The banded generator of workbench.nn.BandedGenerator stores rates as [..., K, n]; scores are [..., n, K].
    return BandedGenerator(deltas, rates.mT).dense()


# --- double exponential -------------------------------------------------------------------------------


def double_exponential(
    generator: torch.Tensor | BandedGenerator,
    transports: torch.Tensor,
    values: torch.Tensor,
    t: float | torch.Tensor = 1.0,
    *,
    method: str = "dense",
    max_terms: int | None = DEFAULT_MAX_TERMS,
) -> torch.Tensor:
    r"""The double exponential: transport values to the shared frame, mix by :math:`e^{tQ}`, transport back.

    .. math::

        u_j = T_j^{-1} v_j,\qquad z = e^{tQ} u,\qquad y_i = T_i z_i
        \quad\Longleftrightarrow\quad
        \operatorname{vec} Y = \mathcal T\, e^{t\,Q\otimes I_d}\, \mathcal T^{-1} \operatorname{vec} V
        = \exp\!\big(t\,\mathcal T (Q\otimes I_d) \mathcal T^{-1}\big) \operatorname{vec} V,

    so :math:`y_i = \sum_j (e^{tQ})_{ij} R_{i\leftarrow j} v_j`.  With :math:`\mathcal T = \operatorname{diag}(T_j)`
    (module conventions); the roadmap's :math:`T^{-1} e^{tQ\otimes I} T V` is the same formula for its
    frame-to-shared transports :math:`T_j^{-1}` [RECON].  Covariant: under :func:`gauge_change`,
    :math:`y_i \mapsto S_i y_i`.  For a Markov generator :math:`Q` and :math:`t \ge 0`, :math:`e^{tQ}` is
    row-stochastic.

    The Kronecker lift never has to be formed: :math:`e^{tQ\otimes I_d}\operatorname{vec}U = \operatorname{vec}
    (e^{tQ}U)` for :math:`U = [u_0; \dots; u_{n-1}]` of shape ``[n, d]``, so the mixing step is one action of
    :math:`e^{tQ}` on the :math:`d` columns of :math:`U`.

    Parameters
    ----------
    generator : torch.Tensor, shape=[..., n, n], or BandedGenerator
        :math:`Q` (e.g. :func:`multiscale_generator`), a Markov generator for ``method="uniformization"``.  A
        :class:`~workbench.nn.BandedGenerator` is applied banded by ``"uniformization"`` and
        densified for the other methods.
    transports : torch.Tensor, shape=[..., n, d, d]
    values : torch.Tensor, shape=[..., n, d]
    t : float or torch.Tensor
        Time :math:`t \ge 0`; a tensor (learnable, broadcastable to the batch shape) is differentiated through.
    method : {'dense', 'uniformization', 'expmv'}
        ``'dense'``: ``torch.linalg.matrix_exp`` (differentiable; :math:`O(n^3)`, fine for :math:`n` up to a few
        hundred).  ``'uniformization'``: :func:`workbench.nn.uniformized_action` applied to
        :math:`U` (differentiable in :math:`Q`, :math:`t`, the transports and the values; about
        :math:`\lambda t` powers, each :math:`O(n\,w\,d)` for a ``BandedGenerator`` with :math:`w` offsets
        or :math:`O(n^2 d)` dense, plus :math:`O(n\,d^3)` for the transports).  ``'expmv'``:
        :func:`workbench.expmv.expmv` by uniformization (no gradient; float ``t``; a loop over the batch).
    max_terms : int or None
        Cap on the uniformization powers for ``method="uniformization"`` (see :func:`uniformized_action`).

    Returns
    -------
    torch.Tensor, shape=[..., n, d]

    References
    ----------
    Lie-Exponential Roadmap, "double exponential attention", "pullback :math:`Y_i = T_i^{-1} Z_i`",
    "output: :math:`Y_i=T_i^{-1}[P(TV)]_i`" [SEED]; the frame convention [RECON].

    Examples
    --------
    >>> import torch
    >>> from workbench.nn import prefix_transports, transport
    >>> g = torch.Generator().manual_seed(6)
    >>> T = prefix_transports(0.3 * torch.randn(4, 2, 2, dtype=torch.float64, generator=g))
    >>> Q = multiscale_generator(torch.randn(5, 2, dtype=torch.float64, generator=g), (-1, 1))
    >>> V = torch.randn(5, 2, dtype=torch.float64, generator=g)
    >>> Y = double_exponential(Q, T, V, 0.7)
    >>> P = torch.linalg.matrix_exp(0.7 * Q)
    >>> direct = sum(P[2, j] * transport(T, 2, j) @ V[j] for j in range(5))
    >>> bool(torch.allclose(Y[2], direct, atol=1e-13))
    True
    >>> bool(torch.allclose(double_exponential(Q, T, V, 0.7, method="uniformization"), Y, atol=1e-13))
    True
    """
    t_ = check_transports(transports)
    n = t_.shape[-3]
    check_choice("method", method, ("dense", "uniformization", "expmv"))
    banded = generator if isinstance(generator, BandedGenerator) else None
    if banded is not None:
        if banded.n != n:
            raise ValueError(f"generator must have n = {n} states to match transports, got n = {banded.n}")
        if method != "uniformization":
            generator, banded = banded.dense(), None
    if banded is None:
        q = check_matrices("generator", generator, 2)
        if q.shape[-1] != n:
            raise ValueError(
                f"generator must have shape [..., {n}, {n}] to match transports, got shape {tuple(q.shape)}"
            )
        check_same_dtype("generator", q, "transports", t_)
    v = check_tensor("values", values, 2)
    check_same_frames("values", v, t_)
    if isinstance(t, torch.Tensor):
        t = check_tensor("t", t, 0)
        if bool((t.detach() < 0).any()):
            raise ValueError(f"t must be >= 0, got minimum {float(t.detach().min()):.6g}")
        if method == "expmv":
            if t.ndim != 0:
                raise ValueError(f"t must be a scalar for method='expmv', got shape {tuple(t.shape)}")
            t = float(t.detach())
    else:
        t = check_in_range("t", t, 0.0)
    u = to_frame0(t_, v)
    if method == "dense":
        tq = t[..., None, None] * q if isinstance(t, torch.Tensor) else t * q
        z = expm(tq) @ u
    elif method == "uniformization":  # e^{tQ⊗I} vec(U) = vec(e^{tQ} U): one semigroup action on the d columns
        z = generator_action(
            banded if banded is not None else q,
            u,
            t,
            rate=None,
            tol=None,
            max_terms=max_terms,
            generator_name="generator",
        )
    else:
        from workbench.expmv import expmv  # numpy-backed engine: no autograd

        batch = torch.broadcast_shapes(q.shape[:-2], u.shape[:-2])
        qb = q.detach().expand(*batch, n, n).reshape(-1, n, n)
        ub = u.detach().expand(*batch, *u.shape[-2:]).reshape(-1, *u.shape[-2:])
        z = torch.stack([expmv(qi, ui, t, method="uniformization") for qi, ui in zip(qb, ub, strict=True)])
        z = z.reshape(*batch, *u.shape[-2:])
    return from_frame0(t_, z)


# --- conjugation identity ------------------------------------------------------------------------------------


def conjugated_generator(generator: torch.Tensor, transports: torch.Tensor) -> torch.Tensor:
    r"""The Kronecker-lifted generator conjugated by the transports, :math:`\mathcal T (Q\otimes I) \mathcal T^{-1}`.

    .. math::

        \mathcal T (Q\otimes I_d)\mathcal T^{-1} = \sum_{i,j} Q_{ij}\, E_{ij} \otimes T_i T_j^{-1}
        = \sum_{i\ne j} Q_{ij}\, E_{ij}\otimes R_{i\leftarrow j} + \sum_i Q_{ii}\, E_{ii}\otimes I_d,

    and, because conjugation commutes with the exponential (termwise in the power series),

    .. math:: \mathcal T e^{t\,Q\otimes I}\mathcal T^{-1} = \exp\!\big(t\,\mathcal T (Q\otimes I)\mathcal T^{-1}\big)

    exactly, for every invertible :math:`T_i` — commuting or not.  This is the effective single generator of the
    transport + mixing block (:func:`double_exponential`).  The roadmap's form, with blocks
    :math:`e^{-(\Phi_i-\Phi_j)}`, is this identity with :math:`T_i T_j^{-1}` replaced by the exponential of
    a difference; that replacement is exact only when the :math:`\Phi` commute (see :func:`twist_generator`).
    The roadmap's sum over :math:`i\ne j` omits the diagonal blocks :math:`Q_{ii} I_d`, which are part of the
    generator [RECON].

    Parameters
    ----------
    generator : torch.Tensor, shape=[..., n, n]
    transports : torch.Tensor, shape=[..., n, d, d]

    Returns
    -------
    torch.Tensor, shape=[..., n d, n d]
        Position-major blocks: block :math:`(i, j)` is rows :math:`id..id+d-1`, columns :math:`jd..jd+d-1`.

    References
    ----------
    Lie-Exponential Roadmap, "conjugation of sequence mixing by feature transports" and "BCH roles"
    [SEED]; the exact statement with :math:`T_iT_j^{-1}` blocks [RECON].

    Examples
    --------
    >>> import torch
    >>> from workbench.nn import prefix_transports
    >>> g = torch.Generator().manual_seed(7)
    >>> T = prefix_transports(0.3 * torch.randn(3, 2, 2, dtype=torch.float64, generator=g))
    >>> Q = multiscale_generator(torch.randn(4, 2, dtype=torch.float64, generator=g), (-1, 1))
    >>> V = torch.randn(4, 2, dtype=torch.float64, generator=g)
    >>> G = conjugated_generator(Q, T)
    >>> lhs = (torch.linalg.matrix_exp(0.5 * G) @ V.reshape(8)).reshape(4, 2)
    >>> bool(torch.allclose(lhs, double_exponential(Q, T, V, 0.5), atol=1e-13))
    True
    """
    t_ = check_transports(transports)
    n, d = t_.shape[-3], t_.shape[-1]
    q = check_matrices("generator", generator, 2)
    if q.shape[-1] != n:
        raise ValueError(f"generator must have shape [..., {n}, {n}] to match transports, got shape {tuple(q.shape)}")
    inverse = solve("transports", t_, torch.eye(d, dtype=t_.dtype, device=t_.device).expand_as(t_))
    twists = t_.unsqueeze(-3) @ inverse.unsqueeze(-4)  # [..., n, n, d, d]: T_i T_j^{-1}
    blocks = q[..., None, None] * twists
    batch = blocks.shape[:-4]
    return blocks.transpose(-3, -2).reshape(*batch, n * d, n * d)
