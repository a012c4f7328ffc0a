r"""Diagnostics of attention operators: entropy, reversibility, spacing, temperature and circuits.

The numbers that Attention Geometry reads off a trained head (its Table 1) and the standard probes of
mechanistic interpretability, as functions of an attention map :math:`\mathsf P` (row-stochastic, acting
on functions from the left, :math:`(\mathsf P f)_i = \sum_j \mathsf P_{ij} f_j`; positive generator
:math:`\mathsf L = I - \mathsf P`), or of the raw scores before the softmax.

* Spread of a head: the row entropy :math:`H_i = -\sum_j \mathsf P_{ij}\log\mathsf P_{ij}`, its mean
  :math:`\bar H` and the effective neighbour count :math:`e^{\bar H} \in [1, n]`; the uniform (causal)
  head as the closed-form reference.
* Irreversibility: the detailed-balance residual :math:`\varepsilon_{\mathrm{rev}} \in [0, \sqrt2]`.
* Asymmetry of the score form: the skew ratio :math:`\rho_{\mathrm{skew}} = \lVert M_A\rVert_F /
  \lVert M_S\rVert_F`.
* Sample quality against a training set: the nearest-target distance :math:`d_{\mathrm{NN}}` and the
  training set's own spacing.
* Temperature: the entropy curve :math:`\beta \mapsto \bar H(\operatorname{softmax}(\beta S))` with its
  two limits (uniform at :math:`\beta \to 0`, argmax at :math:`\beta \to \infty`), and the logit variance
  at initialisation that motivates :math:`\beta = d_h^{-1/2}`.
* Circuits: previous-token and induction scores on repeated random token sequences.

The exact formulas of the paper's Table 1 metrics were not recovered; the ones here are reconstructions
consistent with every constraint in the seed ([RECON], attention-geometry-math §A.10).

Stacks of maps ``shape=[..., n, n]`` (e.g. ``(layers, heads, n, n)``) are accepted throughout; numpy
arrays and torch tensors alike.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; attention-geometry-math §A.10, §A.12 [RECON].
ISA ML01 seed (attention entropy per head; β regimes).
A. Vaswani et al., "Attention is all you need", NeurIPS 2017 (the :math:`1/\sqrt{d_h}` scale).
C. Olsson et al., "In-context learning and induction heads", Transformer Circuits Thread 2022.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.markov import MarkovOperator
from workbench.validation import (
    as_array,
    check_choice,
    check_integer,
    check_matching,
    check_nonnegative,
    check_row_stochastic,
    check_square,
)

__all__ = [
    "BetaSweep",
    "LogitVariance",
    "beta_sweep",
    "effective_neighbours",
    "induction_score",
    "logit_variance_at_init",
    "mean_entropy",
    "native_spacing",
    "nearest_target_distance",
    "previous_token_score",
    "repeated_random_tokens",
    "reversibility_residual",
    "row_entropy",
    "score_skew_ratio",
    "uniform_entropy",
]

#: The reductions accepted by the distance diagnostics.
REDUCTIONS = ("mean", "median")


# ---- validation helpers ----------------------------------------------------------------------


def _default_atol(x) -> float:
    """Row-sum tolerance: 1e-10, or n·eps of the dtype when that is larger (a float32 softmax row)."""
    eps = float(namespace(x).finfo(x.dtype).eps)
    return max(1e-10, int(x.shape[-1]) * eps)


def _stochastic(name: str, P, atol: float | None):
    """``P`` as a validated stack of row-stochastic matrices ``shape=[..., n, n]``."""
    P = as_array(name, P, min_ndim=2)
    check_square(name, P)
    check_row_stochastic(name, P, atol=_default_atol(P) if atol is None else atol)
    return P


def _scalar_or_array(x):
    """A 0-d result as a Python float; a stacked one as it is."""
    return float(x) if x.ndim == 0 else x


def _leading_mean(values, axis, name: str, shape: tuple[int, ...]):
    """Average ``values`` (the leading axes of an input of ``shape``) over ``axis`` (None: all of them)."""
    lead = values.ndim
    if axis is None:
        axes = tuple(range(lead))
    else:
        raw = (axis,) if isinstance(axis, Integral) else tuple(axis)
        axes = []
        for a in raw:
            if isinstance(a, bool) or not isinstance(a, Integral) or not -lead <= a < lead:
                raise ValueError(
                    f"axis must index the leading (stack) axes of {name}, which has {lead} of them "
                    f"(shape {shape}), got {axis!r}"
                )
            axes.append(int(a) % lead)
        if len(set(axes)) != len(axes):
            raise ValueError(f"axis must not repeat an axis, got {axis!r}")
        axes = tuple(axes)
    if axes:  # torch reads an empty axis tuple as "all axes"
        values = namespace(values).mean(values, axis=axes)
    return _scalar_or_array(values)


def _flat_stack(P):
    """``P`` viewed as ``(count, n, n)`` with the leading shape, for loops over a stack."""
    lead = tuple(int(s) for s in P.shape[:-2])
    n = int(P.shape[-1])
    return namespace(P).reshape(P, (math.prod(lead), n, n)), lead


# ---- entropy ---------------------------------------------------------------------------------


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
    ISA ML01 seed (attention entropy per query position); attention-geometry-math §A.10 (:math:`H_i`).

    Examples
    --------
    >>> import math, numpy as np
    >>> P = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    >>> H = row_entropy(P)
    >>> bool(np.allclose(H, [0.0, math.log(2), 1.5 * math.log(2)]))  # by hand: -Σ p log p
    True
    """
    P = _stochastic("P", P, atol)
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
    Attention Geometry Table 1 (:math:`e^{\bar H}`); attention-geometry-math §A.10 [RECON].

    Examples
    --------
    >>> import math, numpy as np
    >>> heads = np.stack([np.eye(4), np.full((4, 4), 0.25)])  # a hard head and a uniform one
    >>> mean_entropy(heads, axis=()).tolist() == [0.0, math.log(4)]
    True
    >>> math.isclose(mean_entropy(heads), math.log(4) / 2)
    True
    """
    P = _stochastic("P", P, atol)
    H = row_entropy(P, atol=math.inf)  # already validated
    xp = namespace(H)
    return _leading_mean(xp.mean(H, axis=-1), axis, "P", tuple(int(s) for s in P.shape))


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
    Attention Geometry Table 1 (:math:`e^{\bar H}`; 1.14 for DMAP MHSA→FFN); attention-geometry-math §A.10
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
    ISA ML01 seed (the β → 0 regime, :math:`H = \log n`); attention-geometry-math §A.10.

    Examples
    --------
    >>> import math
    >>> H = uniform_entropy(5, causal=True)
    >>> math.isclose(H.mean(), math.lgamma(6) / 5)  # (1/n) log n!
    True
    """
    n = check_integer("n", n, 1)
    if causal:
        return np.log(np.arange(1, n + 1, dtype=np.float64))
    return np.full(n, math.log(n))


# ---- reversibility and skew ------------------------------------------------------------------


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
    Attention Geometry Table 1 (:math:`\varepsilon_{\mathrm{rev}}`); attention-geometry-math §A.10 [RECON],
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
    P = _stochastic("P", P, atol)
    tol = _default_atol(P) if atol is None else atol
    flat, lead = _flat_stack(P)
    xp = namespace(P)
    if pi is not None:
        pi = as_array("pi", pi, min_ndim=1)
        namespace(P, pi)  # one array library per call
        if tuple(pi.shape) != tuple(P.shape[:-1]):
            raise ValueError(
                f"pi must have shape P.shape[:-1] = {tuple(int(s) for s in P.shape[:-1])}, "
                f"got shape {tuple(int(s) for s in pi.shape)}"
            )
        check_nonnegative("pi", pi)
        pi = xp.reshape(pi, (flat.shape[0], int(P.shape[-1])))
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
    Attention Geometry Table 1 (:math:`\rho_{\mathrm{skew}}`); attention-geometry-math §A.10 [RECON]
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
    Mt = xp.matrix_transpose(M)
    bond = xp.sqrt(xp.sum((0.5 * (M + Mt)) ** 2, axis=(-2, -1)))
    link = xp.sqrt(xp.sum((0.5 * (M - Mt)) ** 2, axis=(-2, -1)))
    if bool(xp.any((bond == 0) & (link == 0))):
        raise ValueError("M must be a nonzero form, got ‖M‖_F = 0 (ρ_skew = 0/0)")
    safe = xp.where(bond > 0, bond, xp.ones_like(bond))
    ratio = xp.where(bond > 0, link / safe, xp.full_like(bond, math.inf))
    return _scalar_or_array(ratio)


# ---- distances to a training set -------------------------------------------------------------


def _points(name: str, x):
    x = to_numpy(as_array(name, x, ndim=2))
    if x.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one point, got shape {x.shape}")
    return x


def _reduce(distances: np.ndarray, reduce: str) -> float:
    return float(np.mean(distances) if reduce == "mean" else np.median(distances))


def nearest_target_distance(generated, train, reduce: str = "mean") -> float:
    r"""Nearest-target distance :math:`d_{\mathrm{NN}}` of generated samples to a training set [RECON].

    .. math::

        d_{\mathrm{NN}} = \frac1M\sum_{m=1}^{M}\min_{r \in \text{train}}\lVert x_m - r\rVert_2

    (the median instead of the mean with ``reduce="median"``).  Compare it with :func:`native_spacing`:
    samples on the data manifold sit about one native spacing from their nearest training point; a value
    far below it means memorisation, far above it off-manifold samples.  Computed with a k-d tree
    (:class:`scipy.spatial.cKDTree`).

    Parameters
    ----------
    generated : array, shape=[M, D]
        Samples (numpy or torch; distances are computed on the host).
    train : array, shape=[N, D]
        Training points.
    reduce : {'mean', 'median'}
        How the :math:`M` nearest distances are summarised.

    Returns
    -------
    float

    References
    ----------
    Attention Geometry Table 1 (:math:`d_{\mathrm{NN}}`, 0.0494–0.0512 on 4000 training points);
    attention-geometry-math §A.10 [RECON] (mean or median not recovered).

    Examples
    --------
    >>> import numpy as np
    >>> train = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> nearest_target_distance(np.array([[0.0, 0.3], [0.9, 0.0]]), train)  # (0.3 + 0.1) / 2
    0.2
    """
    reduce = check_choice("reduce", reduce, REDUCTIONS)
    generated, train = _points("generated", generated), _points("train", train)
    check_matching("generated columns", generated.shape[1], "train columns", train.shape[1])
    from scipy.spatial import cKDTree

    distances, _ = cKDTree(train).query(generated, k=1)
    return _reduce(distances, reduce)


def native_spacing(train, reduce: str = "mean") -> float:
    r"""Native spacing of a point set: the distance from each point to its nearest *other* point.

    .. math::

        s = \frac1N\sum_{i=1}^{N}\min_{j \ne i}\lVert x_i - x_j\rVert_2

    (the median with ``reduce="median"``), the reference scale for :func:`nearest_target_distance`.
    Duplicated points have spacing 0.

    Parameters
    ----------
    train : array, shape=[N, D]
        At least two points.
    reduce : {'mean', 'median'}

    Returns
    -------
    float

    References
    ----------
    attention-geometry-math §A.10 [RECON] ("close to the native spacing").

    Examples
    --------
    >>> import numpy as np
    >>> grid = np.stack(np.meshgrid(np.arange(4.0), np.arange(3.0)), axis=-1).reshape(-1, 2) * 0.05
    >>> round(native_spacing(grid), 12)  # every lattice point has a neighbour at the lattice step
    0.05
    """
    reduce = check_choice("reduce", reduce, REDUCTIONS)
    train = _points("train", train)
    if train.shape[0] < 2:
        raise ValueError(f"train must hold at least 2 points, got {train.shape[0]}")
    from scipy.spatial import cKDTree

    distances, _ = cKDTree(train).query(train, k=2)
    # Column 0 is the point itself (distance 0); column 1 its nearest other point (0 for a duplicate).
    return _reduce(distances[:, 1], reduce)


# ---- temperature -----------------------------------------------------------------------------


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
        host = to_numpy(mask)
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
    ISA ML01 seed (the β regimes: uniform, mixture, argmax); attention-geometry-math §A.9 (small β),
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
    Vaswani et al. (2017) §3.2.1 (the dot-product variance argument); ISA ML01 seed (σ² ≈ d_head at
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
    generator = np.random.default_rng(rng)
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


# ---- circuits --------------------------------------------------------------------------------


def previous_token_score(A, *, atol: float | None = None):
    r"""Previous-token score: the mean attention from each token to the one before it.

    .. math::

        s_{\mathrm{prev}} = \frac{1}{n-1}\sum_{i=1}^{n-1}\mathsf A_{i,i-1} \in [0, 1],

    1 exactly for the hard shift head (:math:`\mathsf A_{i,i-1} = 1`); :math:`(H_n - 1)/(n - 1)` for the
    uniform causal head (:math:`H_n` the harmonic number).

    Parameters
    ----------
    A : array, shape=[..., n, n]
        Row-stochastic attention, ``n >= 2``.
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array
        A float for one map; an array ``shape=A.shape[:-2]`` for a stack.

    References
    ----------
    Olsson et al. (2022) and Elhage et al. (2021) (previous-token heads); ISA ML01 seed.

    Examples
    --------
    >>> import numpy as np
    >>> shift = np.eye(5, k=-1); shift[0, 0] = 1.0  # row 0 has no predecessor: it attends to itself
    >>> previous_token_score(shift)
    1.0
    """
    A = _stochastic("A", A, atol)
    n = int(A.shape[-1])
    if n < 2:
        raise ValueError(f"A must have at least 2 tokens for a previous-token score, got shape {tuple(A.shape)}")
    xp = namespace(A)
    rows = np.arange(1, n)
    return _scalar_or_array(xp.mean(A[..., rows, rows - 1], axis=-1))


def _repeated_half(tokens, n: int) -> int:
    """Check that ``tokens`` ([..., n], integers) repeat their first half; return the half length T."""
    host = to_numpy(tokens)
    if host.dtype.kind not in "iu":
        raise TypeError(f"tokens must be an integer array, got dtype {host.dtype}")
    if host.ndim == 0:
        raise ValueError("tokens must be a sequence of length 2T, got a scalar")
    check_matching("tokens length", host.shape[-1], "A size", n)
    if n % 2:
        raise ValueError(f"tokens must have even length 2T (a segment and its repeat), got length {n}")
    T = n // 2
    mismatch = host[..., T:] != host[..., :T]
    if mismatch.any():
        where = np.argwhere(mismatch)[0]
        k = int(where[-1])
        index = tuple(int(i) for i in where[:-1])
        row = host[index]
        prefix = f"in sequence {index[0] if len(index) == 1 else index} " if index else ""
        raise ValueError(
            f"tokens must repeat their first half (tokens[T:] == tokens[:T], T = {T}); {prefix}"
            f"first mismatch at position {T + k}: {int(row[T + k])} != {int(row[k])}"
        )
    return T


def induction_score(A, tokens, *, atol: float | None = None):
    r"""Induction score on a repeated sequence: attention to the token after the earlier occurrence.

    For tokens :math:`t` of length :math:`2T` with :math:`t_{T:} = t_{:T}`, the query at position
    :math:`i \ge T` holds the token seen at :math:`i - T`; an induction head attends to what came next
    there, the key :math:`i - T + 1`:

    .. math::

        s_{\mathrm{ind}} = \frac1T\sum_{i=T}^{2T-1}\mathsf A_{i,\,i-T+1} \in [0, 1].

    The score is positional; ``tokens`` fixes :math:`T` and certifies the repetition (a segment with
    repeated tokens of its own makes earlier occurrences ambiguous; draw it from a large vocabulary).

    Parameters
    ----------
    A : array, shape=[..., 2T, 2T]
        Row-stochastic attention.
    tokens : integer array, shape=[..., 2T]
        The sequence (or a batch of sequences) whose second half repeats the first, e.g. from
        :func:`repeated_random_tokens`.
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array
        A float for one map; an array ``shape=A.shape[:-2]`` for a stack.

    Raises
    ------
    ValueError
        If the tokens do not repeat their first half, or their length is not ``A``'s size.

    References
    ----------
    Olsson et al. (2022) (induction heads, repeated random tokens); Elhage et al. (2021); ISA ML01 seed.

    Examples
    --------
    >>> import numpy as np
    >>> tokens = np.array([7, 3, 9, 7, 3, 9])  # T = 3
    >>> A = np.eye(6)
    >>> A[3:] = 0.0; A[3, 1] = A[4, 2] = A[5, 3] = 1.0  # each repeat attends to its earlier successor
    >>> induction_score(A, tokens)
    1.0
    """
    A = _stochastic("A", A, atol)
    n = int(A.shape[-1])
    T = _repeated_half(tokens, n)
    rows = np.arange(T, 2 * T)
    return _scalar_or_array(namespace(A).mean(A[..., rows, rows - T + 1], axis=-1))


def repeated_random_tokens(rng=None, vocab_size: int = 1000, half_length: int = 32, batch: int = 1) -> np.ndarray:
    r"""Random token sequences whose second half repeats the first: the induction-head probe.

    .. math::

        t = (s_0, \dots, s_{T-1}, s_0, \dots, s_{T-1}), \qquad s_k \sim \operatorname{Uniform}\{0, \dots,
        V - 1\} \text{ i.i.d.}

    Parameters
    ----------
    rng : numpy.random.Generator or int or None
        Randomness (``np.random.default_rng(rng)``).
    vocab_size : int
        :math:`V \ge 1`.
    half_length : int
        :math:`T \ge 1`.
    batch : int
        Number of independent sequences.

    Returns
    -------
    numpy.ndarray of int64, shape=[batch, 2T]

    References
    ----------
    Olsson et al. (2022) (repeated random tokens as the induction test).

    Examples
    --------
    >>> t = repeated_random_tokens(0, vocab_size=50, half_length=4, batch=2)
    >>> t.shape, bool((t[:, 4:] == t[:, :4]).all())
    ((2, 8), True)
    """
    vocab_size = check_integer("vocab_size", vocab_size, 1)
    half_length = check_integer("half_length", half_length, 1)
    batch = check_integer("batch", batch, 1)
    segment = np.random.default_rng(rng).integers(0, vocab_size, size=(batch, half_length), dtype=np.int64)
    return np.concatenate([segment, segment], axis=1)
