r"""Uniformization in torch: :math:`e^{tQ}X` for a Markov generator, differentiable in Q, t and X.

.. math::

    e^{tQ}X = \sum_{k\ge 0} \pi_k(\lambda t)\,P^kX, \qquad P = I + Q/\lambda, \qquad
    \pi_k(\Lambda) = e^{-\Lambda}\frac{\Lambda^k}{k!}, \qquad \lambda \ge \max_i(-Q_{ii}),

written entirely in differentiable torch operations (the :mod:`workbench.expmv` engine converts to numpy and
cannot carry gradients).  The Poisson cut-off is the engine's own
(:func:`workbench.expmv.poisson_truncation`), so the truncation rule is shared.

uniformized_action  -- e^{tQ}X by uniformization, differentiable in Q, t and X; batched, several t at once

References
----------
Lie-Exponential Roadmap, "Uniformization" [SEED].
A. Jensen, "Markoff chains as an aid in the study of Markoff processes", Skand. Aktuarietidskr. 36 (1953).
B. L. Fox and P. W. Glynn, "Computing Poisson probabilities", Comm. ACM 31 (1988), 440–445.
"""

from __future__ import annotations

import math
from numbers import Real

import torch

from workbench.backend import unit_roundoff
from workbench.expmv import poisson_truncation
from workbench.nn._banded_generator import BandedGenerator
from workbench.validation import as_scalar, check_finite, check_in_range, check_integer

__all__ = ["uniformized_action"]


#: Relative margin of the uniformization rate over max_i(-Q_ii), as in the expmv engine
#: (:data:`workbench.expmv._uniformization.RATE_MARGIN`): keeps every diagonal entry of P = I + Q/λ strictly
#: positive, so the stochastic powers stay nonnegative to rounding.
RATE_MARGIN = 2.0**-20

#: Default cap on the number of uniformization powers (:func:`uniformized_action` and both layers): it allows
#: :math:`\lambda t \lesssim 9.2\cdot10^3` at the default ``tol``.  Each power is a banded product kept for the
#: backward pass, so a huge :math:`\lambda t` (a 2-state chain with exit rate 2 at :math:`t = 10^6` needs
#: ~2·10^6 powers) fails fast with a ``ValueError`` instead of running for minutes or exhausting memory.
DEFAULT_MAX_TERMS = 10_000


def check_max_terms(max_terms):
    return None if max_terms is None else check_integer("max_terms", max_terms, 1)


def _as_generator(Q):
    """(BandedGenerator or None, dense tensor or None, batch shape, n) after checking Q is a generator."""
    if isinstance(Q, BandedGenerator):
        return Q, None, Q.batch_shape, Q.n
    if not isinstance(Q, torch.Tensor) or not Q.is_floating_point():
        raise TypeError(f"Q must be a BandedGenerator or a floating-point torch tensor, got {type(Q).__name__}")
    if Q.ndim < 2 or Q.shape[-1] != Q.shape[-2]:
        raise ValueError(f"Q must have shape [..., n, n] (square), got shape {tuple(Q.shape)}")
    q = Q.detach()
    n = q.shape[-1]
    scale = float(q.abs().max()) if q.numel() else 0.0
    # Row sums of an exact generator stored in float32 carry rounding ~n·u·scale (u = 2^-24): 1e-10 would
    # refuse them; the tolerance is the validation module's (1e-10, or 8·n·u where larger), times the scale.
    atol = max(1e-10, 8.0 * n * unit_roundoff(q)) * max(scale, 1.0)
    off = q - torch.diag_embed(torch.diagonal(q, dim1=-2, dim2=-1))
    sums = q.sum(dim=-1)
    if not bool(torch.isfinite(q).all()) or bool((off < -atol).any()) or bool((sums.abs() > atol * n).any()):
        raise ValueError(
            "Q must be a Markov generator (negative convention: off-diagonal entries >= 0, rows summing to 0), "
            f"got min off-diagonal {float(off.min()):.3g} and max |row sum| {float(sums.abs().max()):.3g}"
        )
    return None, Q, tuple(Q.shape[:-2]), n


def check_tol(tol) -> float:
    return check_in_range("tol", tol, 0.0, 1.0, low_inclusive=False, high_inclusive=False)


def uniformized_action(Q, X, t, *, rate=None, tol=None, max_terms=DEFAULT_MAX_TERMS):
    r"""The action :math:`e^{tQ}X` of a Markov semigroup by uniformization, differentiable in :math:`Q, t, X`.

    .. math::

        e^{tQ}X \approx \sum_{k=0}^{K} w_k\, P^k X, \qquad P = I + Q/\lambda, \qquad
        w_k = \frac{\pi_k(\lambda t)}{\sum_{j\le K}\pi_j(\lambda t)}, \qquad
        \log\pi_k(\Lambda) = -\Lambda + k\log\Lambda - \log\Gamma(k+1).

    :math:`\lambda \ge \max_i(-Q_{ii})` is detached from the graph: :math:`e^{tQ}` does not depend on it, so it
    is treated as a constant (per batch element; by default :math:`(1 + 2^{-20})\max_i(-Q_{ii})`, the margin
    keeping the diagonal of :math:`P` positive).  The weights are computed in log space with
    :func:`torch.lgamma`, so the gradient in :math:`t` flows through them; the cut-off :math:`K` is the right
    Fox–Glynn point of :func:`workbench.expmv.poisson_truncation` at the largest detached :math:`\lambda t`
    (neglected mass :math:`\le` ``tol``/2), the truncation rule of the expmv engine, and at least 1 (so the
    derivative in :math:`t` at :math:`t = 0` is :math:`QX`, not 0).  Renormalising the kept
    weights keeps :math:`e^{tQ}\mathbf 1 = \mathbf 1` to rounding, and every term is nonnegative for
    :math:`X \ge 0`, so the result is a stochastic average of :math:`X` to rounding.

    **Accuracy of the weights.**  :math:`-\Lambda + k\log\Lambda - \log k!` cancels terms of size
    :math:`\Lambda`, so each weight carries a relative error of a few :math:`u\Lambda` (measured against the engine's
    mode-centred weights: :math:`1.3\cdot10^{-13}` at :math:`\lambda t = 100`, :math:`1.3\cdot10^{-12}` at
    :math:`10^3`, :math:`1.5\cdot10^{-11}` at :math:`10^4`, float64).  The engine's recursion avoids this but is not
    differentiable in :math:`t`; for attention layers (:math:`\lambda t` of tens to hundreds) it is far below
    what training notices.

    The powers :math:`P^kX` do not depend on :math:`t`: several times (a trailing batch dimension of ``t``,
    e.g. ``[heads, scales]``) cost one sequence of powers.  No tensor that needs a gradient is edited in place.

    Parameters
    ----------
    Q : BandedGenerator or torch.Tensor, shape=[..., n, n]
        Markov generator (negative convention: off-diagonal rates :math:`\ge 0`, rows summing to 0); a
        :class:`BandedGenerator` is applied by shifted adds, a dense tensor by ``matmul``.
    X : torch.Tensor, shape=[..., n, d]
        Features (rows are states).
    t : float or torch.Tensor
        Times :math:`t \ge 0`, broadcastable against the batch shape of ``Q`` (e.g. one per head).
    rate : float, optional
        A uniformization rate :math:`\lambda \ge \max_i(-Q_{ii})` for every batch element.
    tol : float, optional
        Neglected Poisson mass, in :math:`(0, 1)`; default the unit roundoff of ``X``'s dtype
        (:math:`2^{-53}` for float64, :math:`2^{-24}` for float32): a smaller mass cannot show in the result.
    max_terms : int or None
        Raise ``ValueError`` (naming ``t``, :math:`\lambda t` and the cap) instead of running when more than this
        many powers would be needed; default :data:`DEFAULT_MAX_TERMS` = 10 000 (:math:`\lambda t \lesssim 9.2
        \cdot 10^3`).  ``None`` removes the cap (cost and memory then grow like :math:`\lambda t`).

    Returns
    -------
    torch.Tensor, shape=broadcast(Q batch, t, X batch) + [n, d]

    Raises
    ------
    ValueError
        ``Q`` not a generator, ``X`` or ``t`` not finite, ``t < 0``, ``rate`` below :math:`\max_i(-Q_{ii})`,
        shapes that do not match, or more than ``max_terms`` powers needed.
    TypeError
        ``Q`` or ``X`` not floating-point torch tensors.  Different floating dtypes are promoted
        (:func:`torch.promote_types`: float32 with float64 runs in float64), the rule of :func:`workbench.expmv.expmv`.

    References
    ----------
    Lie-Exponential Roadmap, "Uniformization: pick :math:`\lambda \ge \max_i -Q_{ii}`; then
    :math:`\exp(tQ) = e^{-\lambda t}\sum_{k\ge0}(\lambda t)^k/k!\,T^k` with :math:`T = I + Q/\lambda`" [SEED];
    Jensen (1953); Fox & Glynn (1988).

    Examples
    --------
    A two-state chain against its closed form, with the gradient in :math:`t` against :math:`Qe^{tQ}`:

    >>> import torch
    >>> a, b = 2.0, 0.5
    >>> Q = torch.tensor([[-a, a], [b, -b]], dtype=torch.float64)
    >>> t = torch.tensor(1.3, dtype=torch.float64, requires_grad=True)
    >>> P = uniformized_action(Q, torch.eye(2, dtype=torch.float64), t)
    >>> exact = torch.linalg.matrix_exp(1.3 * Q)
    >>> bool(torch.allclose(P, exact, rtol=0, atol=1e-15))
    True
    >>> P[0, 1].backward()
    >>> bool(torch.isclose(t.grad, (Q @ exact)[0, 1], rtol=1e-12))
    True
    """
    return generator_action(Q, X, t, rate=rate, tol=tol, max_terms=max_terms, generator_name="Q")


def generator_action(Q, X, t, *, rate, tol, max_terms, generator_name: str):
    """:func:`uniformized_action` for a caller whose parameter holding ``Q`` is called ``generator_name``.

    Package-internal (no ``__all__`` entry): :func:`workbench.nn.double_exponential` passes ``"generator"``, so
    a refusal caused by the size of the generator names the caller's parameter, not ``Q``.
    """
    banded, dense, q_batch, n = _as_generator(Q)
    if not isinstance(X, torch.Tensor) or not X.is_floating_point():
        raise TypeError(f"X must be a floating-point torch tensor of shape [..., n, d], got {type(X).__name__}")
    if X.ndim < 2 or X.shape[-2] != n:
        raise ValueError(f"X must have shape [..., n={n}, d], got shape {tuple(X.shape)}")
    q_dtype = banded.rates.dtype if banded is not None else dense.dtype
    if q_dtype != X.dtype:
        # The expmv engine's rule (torch.promote_types, as numpy.result_type for scipy's expm_multiply): a
        # float32 generator acting on float64 features runs in float64, differentiably through the casts.
        common = torch.promote_types(q_dtype, X.dtype)
        X = X.to(common)
        if banded is not None:
            banded = BandedGenerator(banded.offsets, banded.rates.to(common))
        else:
            dense = dense.to(common)
    check_finite("X", X.detach())
    if tol is None:
        tol = torch.finfo(X.dtype).eps / 2  # the unit roundoff of X's dtype (half precision included)
    tol = check_tol(tol)
    max_terms = check_max_terms(max_terms)
    dtype, device = X.dtype, X.device
    t = t if isinstance(t, torch.Tensor) else as_scalar(t)
    if isinstance(t, torch.Tensor):
        times = t.to(dtype=dtype, device=device)
    elif isinstance(t, Real) and not isinstance(t, bool):
        times = torch.tensor(float(t), dtype=dtype, device=device)
    else:
        raise TypeError(f"t must be a real number or a torch tensor, got {type(t).__name__}")
    t_host = times.detach()
    if not bool(torch.isfinite(t_host).all()) or bool((t_host < 0).any()):
        raise ValueError(
            "t must be finite and >= 0 (e^(tQ) with t < 0 is not a Markov semigroup), "
            f"got min {float(t_host.min()):.6g}"
        )
    try:
        weight_shape = torch.broadcast_shapes(q_batch, tuple(times.shape))
        torch.broadcast_shapes(weight_shape, tuple(X.shape[:-2]))
    except RuntimeError:
        raise ValueError(
            f"the batch shapes of Q {q_batch}, t {tuple(times.shape)} and X {tuple(X.shape[:-2])} do not broadcast"
        ) from None

    exit_rates = (banded.exit_rates() if banded is not None else -torch.diagonal(dense, dim1=-2, dim2=-1)).detach()
    top = exit_rates.amax(dim=-1).to(dtype) if n else torch.zeros(q_batch, dtype=dtype, device=device)
    if rate is not None:
        rate = check_in_range("rate", rate, 0.0, low_inclusive=False)
        if top.numel() and float(top.max()) > rate:
            raise ValueError(
                f"rate must be >= max_i(-Q_ii) = {float(top.max()):.6g} (the largest exit rate of Q), got {rate!r}"
            )
        lam = torch.full(q_batch, rate, dtype=dtype, device=device)
    else:
        lam = torch.where(top > 0, top * (1.0 + RATE_MARGIN), torch.ones((), dtype=dtype, device=device))
    mean = lam * times  # Λ = λt, differentiable in t only (λ is detached)
    peak = float(mean.detach().max()) if mean.numel() else 0.0

    at = int(mean.detach().argmax()) if mean.numel() else 0
    t_peak = float(times.detach().expand(mean.shape).reshape(-1)[at]) if mean.numel() else 0.0
    lam_peak = float(lam.detach().expand(mean.shape).reshape(-1)[at]) if mean.numel() else 0.0
    # By default λ comes from the exit rates of Q: the refusals then name Q as the operand to rescale.
    rate_of = "given rate" if rate is not None else f"from the exit rates of {generator_name}"

    def too_many(needed: str):
        return ValueError(
            f"uniformization needs {needed} powers for max λt = {peak:.6g} (t = {t_peak:.6g}, rate λ = "
            f"{lam_peak:.6g} {rate_of}), more than max_terms = {max_terms}; shorten t, lower the rate, "
            "or raise max_terms"
        )

    if not math.isfinite(peak):
        raise ValueError(
            f"λt overflows {dtype} (t = {t_peak:.6g}, rate λ = {lam_peak:.6g} {rate_of}); shorten t or lower the rate"
        )
    # The right Fox–Glynn point exceeds λt, so a cap below λt fails before the (itself O(λt)) truncation search.
    if max_terms is not None and peak + 1 > max_terms:
        raise too_many(f"at least {peak + 1:.6g}" if peak >= 1e15 else f"at least {math.floor(peak) + 1}")
    _, right, _ = poisson_truncation(peak, tol)
    right = max(right, 1)  # at λt = 0 the cut-off is 0; one more power carries the derivative Q X in t
    if max_terms is not None and right + 1 > max_terms:
        raise too_many(str(right + 1))
    # log π_k(Λ) in log space; Λ + tiny keeps log finite at t = 0 (then π_0 = 1, π_k = 0 to rounding).
    k = torch.arange(right + 1, dtype=dtype, device=device)
    safe = (mean + torch.finfo(dtype).tiny)[..., None]
    log_pi = -safe + k * torch.log(safe) - torch.lgamma(k + 1.0)
    weights = torch.softmax(log_pi, dim=-1)  # π_k / Σ_{j≤K} π_j, stable for any Λ

    def step(y):
        if banded is not None:
            return banded._stochastic_step(y, lam)
        return y + (dense @ y) / lam[..., None, None]

    power = X
    total = weights[..., 0, None, None] * power
    for j in range(1, right + 1):
        power = step(power)
        total = total + weights[..., j, None, None] * power
    return total
