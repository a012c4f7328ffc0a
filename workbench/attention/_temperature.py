r"""Temperature: the entropy curve β ↦ H̄(softmax(βS)) and the logit variance at initialisation.

The mean row entropy from :math:`\beta \to 0` (uniform) to :math:`\beta \to \infty` (argmax), and the
variance :math:`\operatorname{Var}(q\cdot k) = d_h` at standard initialisation that motivates
:math:`\beta = d_h^{-1/2}`.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; book/reference.md §A.10, §A.12 [RECON].
ISA ML01 (β regimes).
A. Vaswani et al., "Attention is all you need", NeurIPS 2017 (the :math:`1/\sqrt{d_h}` scale).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import array_api_compat
import numpy as np

from workbench.attention._head_checks import check_flag, check_rng
from workbench.backend import check_view_size, host_array, namespace, to_numpy
from workbench.memory import check_memory
from workbench.validation import as_array, check_integer, check_nonnegative

__all__ = [
    "BetaSweep",
    "LogitVariance",
    "beta_sweep",
    "logit_variance_at_init",
]


@dataclass(frozen=True)
class BetaSweep:
    r"""The entropy curve :math:`\beta \mapsto \bar H(\beta)` of :func:`beta_sweep` and its two limits.

    Attributes
    ----------
    betas : numpy.ndarray, shape=[m]
        The inverse temperatures.
    mean_entropy : numpy.ndarray, shape=[m]
        :math:`\bar H(\beta)`, the mean row entropy of :math:`\operatorname{softmax}(\beta S)` under the mask.
    uniform_limit : float
        :math:`\lim_{\beta\to0}\bar H = \operatorname{mean}_i \log\#\{\text{admissible keys of row } i\}`.
    argmax_limit : float
        :math:`\lim_{\beta\to\infty}\bar H = \operatorname{mean}_i \log(\text{multiplicity of the row
        maximum})`; 0 without ties.
    """

    betas: np.ndarray
    mean_entropy: np.ndarray
    uniform_limit: float
    argmax_limit: float

    @property
    def effective_neighbours(self) -> np.ndarray:
        r""":math:`e^{\bar H(\beta)}`, the effective neighbour count along the curve."""
        return np.exp(self.mean_entropy)


def _admissible(mask, scores):
    """The mask as a boolean array of the scores' library and shape, with every row nonempty."""
    shape = tuple(int(s) for s in scores.shape)
    if mask is None:
        host = np.ones(shape[-2:], dtype=bool)
    else:
        check_view_size("mask", mask)
        host = host_array("mask", mask)
        if host.dtype != np.bool_:
            raise TypeError(f"mask must be a boolean array (True = admissible key), got dtype {host.dtype}")
        if host.ndim < 2:
            raise ValueError(f"mask must have shape [..., n, m] broadcastable to scores {shape}, got {host.shape}")
        empty = ~host.any(axis=-1)
        if empty.any():
            first = np.argwhere(empty)[0]
            row = int(first[0]) if first.size == 1 else tuple(int(i) for i in first)
            raise ValueError(f"mask must leave at least one admissible key in every row; row {row} has none")
    try:
        host = np.broadcast_to(host, shape)
    except ValueError:
        raise ValueError(
            f"mask must have shape [..., n, m] broadcastable to scores {shape}, got {host.shape}"
        ) from None
    xp = namespace(scores)
    return host, xp.asarray(np.ascontiguousarray(host), device=array_api_compat.device(scores))


def _masked_entropy(scores, admissible, beta: float):
    """Row entropies of softmax(β·scores) on the admissible keys, through a stable log-softmax."""
    xp = namespace(scores)
    logits = xp.where(admissible, beta * scores, xp.full_like(scores, -math.inf))
    shifted = logits - xp.max(logits, axis=-1, keepdims=True)  # every row has a finite maximum
    log_p = shifted - xp.log(xp.sum(xp.exp(shifted), axis=-1, keepdims=True))
    p = xp.exp(log_p)
    # Masked keys have p = 0 exactly; a zero in place of their −inf log keeps 0·log 0 = 0 without NaN.
    log_p = xp.where(admissible, log_p, xp.zeros_like(log_p))
    return -xp.sum(p * log_p, axis=-1)


def beta_sweep(scores, betas, mask=None) -> BetaSweep:
    r"""Mean row entropy of :math:`\operatorname{softmax}(\beta S)` along a sweep of inverse temperatures.

    .. math::

        \mathsf P^{(\beta)}_{ij} = \frac{e^{\beta S_{ij}}\,[j \text{ admissible}]}{\sum_l e^{\beta S_{il}}
        [l \text{ admissible}]}, \qquad \bar H(\beta) = \operatorname{mean}_i H_i(\mathsf P^{(\beta)}),

    averaged over the query rows and every leading (stack) axis.  Each row's entropy is nonincreasing in
    :math:`\beta \ge 0`: with :math:`H_i = \log Z_i - \beta\,\mathbb E_{\mathsf P_i}[S_i]`,

    .. math::

        \frac{dH_i}{d\beta} = -\beta\,\operatorname{Var}_{\mathsf P^{(\beta)}_{i\cdot}}(S_{i\cdot}) \le 0,

    from the uniform limit :math:`\log\#\{\text{admissible keys}\}` at :math:`\beta = 0` (maximal
    entropy; ``log(i+1)`` for row :math:`i` of a causal mask) down to the argmax limit
    :math:`\log(\text{multiplicity of the row maximum})` as :math:`\beta \to \infty` (0 without ties).
    Standard attention sits at :math:`\beta = 1/\sqrt{d_h}` between the two.

    Parameters
    ----------
    scores : array, shape=[..., n, m]
        Finite raw scores :math:`S` (numpy or torch).
    betas : array_like, shape=[k]
        Inverse temperatures, :math:`\beta \ge 0`.
    mask : boolean array, shape=[..., n, m], optional
        True = admissible key, broadcastable to ``scores``; every row needs one admissible key.

    Returns
    -------
    BetaSweep
        Host (numpy) arrays: ``betas``, ``mean_entropy``, and the floats ``uniform_limit``,
        ``argmax_limit``.

    References
    ----------
    ISA ML01 (the β regimes: uniform, mixture, argmax); book/reference.md §A.9 (small β),
    §A.10.

    Examples
    --------
    >>> import math, numpy as np
    >>> causal = np.tril(np.ones((4, 4), dtype=bool))
    >>> sweep = beta_sweep(np.arange(16.0).reshape(4, 4), [0.0, 1.0, 50.0], mask=causal)
    >>> math.isclose(sweep.mean_entropy[0], math.lgamma(5) / 4)  # β = 0: mean of log(i+1)
    True
    >>> bool(np.all(np.diff(sweep.mean_entropy) <= 0)), sweep.argmax_limit
    (True, 0.0)
    """
    scores = as_array("scores", scores, min_ndim=2)
    betas = to_numpy(as_array("betas", betas, ndim=1))
    if betas.size == 0:
        raise ValueError("betas must hold at least one inverse temperature, got an empty array")
    check_nonnegative("betas", betas)
    host_mask, admissible = _admissible(mask, scores)
    xp = namespace(scores)
    curve = np.array([float(xp.mean(_masked_entropy(scores, admissible, float(b)))) for b in betas])
    host = to_numpy(scores)
    counts = host_mask.sum(axis=-1)
    row_max = np.max(np.where(host_mask, host, -np.inf), axis=-1, keepdims=True)
    ties = np.sum(host_mask & (host == row_max), axis=-1)
    return BetaSweep(
        betas=betas.copy(),
        mean_entropy=curve,
        uniform_limit=float(np.mean(np.log(counts))),
        argmax_limit=float(np.mean(np.log(ties))),
    )


@dataclass(frozen=True)
class LogitVariance:
    r"""Measured against predicted variance of attention logits at initialisation (:func:`logit_variance_at_init`).

    Attributes
    ----------
    measured : float
        The mean over draws of the per-draw mean square of the off-diagonal logits (their mean is 0).
    predicted : float
        :math:`d_h` unscaled, 1 scaled by :math:`1/\sqrt{d_h}`.
    standard_error : float
        Standard deviation of the per-draw values over :math:`\sqrt{\text{draws}}` (the draws are i.i.d.;
        logits within one draw are not).
    d_model, d_head, n_tokens, n_draws : int
    scaled : bool
    """

    measured: float
    predicted: float
    standard_error: float
    d_model: int
    d_head: int
    n_tokens: int
    n_draws: int
    scaled: bool

    @property
    def relative_error(self) -> float:
        r""":math:`|\text{measured} - \text{predicted}| / \text{predicted}`."""
        return abs(self.measured - self.predicted) / self.predicted

    @property
    def z_score(self) -> float:
        """(measured − predicted) / standard_error."""
        return (self.measured - self.predicted) / self.standard_error


def logit_variance_at_init(
    rng=None, d_model: int = 64, d_head: int = 16, *, n_tokens: int = 32, n_draws: int = 200, scaled: bool = True
) -> LogitVariance:
    r"""Monte Carlo variance of attention logits under the standard initialisation, with its prediction.

    Draw token features :math:`X_i \sim N(0, I_D)` and weights :math:`(W_Q)_{da}, (W_K)_{da} \sim
    N(0, 1/D)`, all independent; :math:`q_i = X_iW_Q`, :math:`k_j = X_jW_K`.  For :math:`i \ne j`

    .. math::

        \mathbb E[q_i\cdot k_j] = 0, \qquad \operatorname{Var}(q_i\cdot k_j) =
        \operatorname{tr}\big(\mathbb E[W_Q^\top W_Q]\,\mathbb E[W_K^\top W_K]\big) = d_h

    exactly (independent of :math:`D`), so the logits :math:`q_i\cdot k_j/\sqrt{d_h}` have unit variance:
    the :math:`\beta = 1/\sqrt{d_h}` of standard attention keeps the softmax away from its saturated
    (argmax) regime at any head width.  The diagonal :math:`i = j` has variance :math:`d_h(1 + 2/D)`
    (fourth Gaussian moments) and is left out of the measurement.

    Parameters
    ----------
    rng : numpy.random.Generator or int or None
        Randomness (``np.random.default_rng(rng)``).
    d_model, d_head : int
        Model width :math:`D` and head width :math:`d_h`.
    n_tokens : int
        Tokens per draw (``>= 2``); each draw contributes its ``n(n-1)`` off-diagonal logits.
    n_draws : int
        Independent draws of :math:`(X, W_Q, W_K)` (``>= 2``, for the standard error).
    scaled : bool
        Whether the logits carry the factor :math:`1/\sqrt{d_h}`.

    Returns
    -------
    LogitVariance

    References
    ----------
    Vaswani et al. (2017) §3.2.1 (the dot-product variance argument); ISA ML01 (σ² ≈ d_head at
    initialisation, β = 1/√d_head).

    Examples
    --------
    >>> check = logit_variance_at_init(0, d_model=32, d_head=8, n_draws=100)
    >>> check.predicted, abs(check.z_score) < 4  # within four standard errors of the prediction
    (1.0, True)
    """
    d_model = check_integer("d_model", d_model, 1)
    d_head = check_integer("d_head", d_head, 1)
    n_tokens = check_integer("n_tokens", n_tokens, 2)
    n_draws = check_integer("n_draws", n_draws, 2)
    check_flag("scaled", scaled)
    generator = check_rng("rng", rng)
    check_memory(
        f"one draw (n_tokens = {n_tokens}, d_model = {d_model}, d_head = {d_head}) and n_draws = {n_draws} results",
        8.0 * (n_tokens * d_model + 2 * d_model * d_head + 2 * n_tokens * d_head + 2 * n_tokens**2 + n_draws),
    )
    scale = 1.0 / math.sqrt(d_head) if scaled else 1.0
    off_diagonal = ~np.eye(n_tokens, dtype=bool)
    per_draw = np.empty(n_draws)
    weight_std = 1.0 / math.sqrt(d_model)
    for r in range(n_draws):
        X = generator.standard_normal((n_tokens, d_model))
        W_Q = generator.normal(0.0, weight_std, (d_model, d_head))
        W_K = generator.normal(0.0, weight_std, (d_model, d_head))
        logits = scale * (X @ W_Q) @ (X @ W_K).T
        per_draw[r] = np.mean(logits[off_diagonal] ** 2)  # second moment about the known mean 0
    return LogitVariance(
        measured=float(per_draw.mean()),
        predicted=1.0 if scaled else float(d_head),
        standard_error=float(per_draw.std(ddof=1) / math.sqrt(n_draws)),
        d_model=d_model,
        d_head=d_head,
        n_tokens=n_tokens,
        n_draws=n_draws,
        scaled=bool(scaled),
    )
