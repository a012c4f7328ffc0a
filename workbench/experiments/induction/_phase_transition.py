r"""The induction phase transition: a plateau-then-drop criterion on a repeated-half loss curve.

A model learning induction on repeated random tokens sits on the :math:`\log V` plateau of the repeated-half
loss, then falls abruptly while its induction head's attention entropy collapses (Olsson et al. 2022; ISA
ML01 calls it the :math:`\beta^*` snap).  :func:`detect_phase_transition` states that shape as a numeric
criterion (this workbench's [RECON]) and :class:`PhaseTransition` records what it found; the induction
experiment (:func:`workbench.experiments.run_induction`) reads every run's curve with it.

References
----------
Olsson et al. (2022), "In-context learning and induction heads" (the plateau-then-drop of the in-context loss);
ISA ML01 (entropy drop at the induction snap); Attention Geometry (Candanedo, arXiv 2604.09560) §11 [SEED].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.validation import check_in_range, check_integer

__all__ = ["PhaseTransition", "detect_phase_transition"]


def check_smooth(smooth) -> int:
    """``smooth`` as an int after checking it is an odd integer >= 1 (a centred moving-average width)."""
    smooth = check_integer("smooth", smooth, 1)
    if smooth % 2 == 0:
        raise ValueError(f"smooth must be an odd integer >= 1, got {smooth}")
    return smooth


@dataclass(frozen=True)
class PhaseTransition:
    r"""The outcome of :func:`detect_phase_transition` (steps are training steps; losses are smoothed).

    ``window`` is :math:`(\tau_i, \tau_j)`; ``head`` is ``(layer, head)`` with the largest final induction score
    (None without per-head series); ``reason`` names the failed condition (``""`` when detected).

    References
    ----------
    This workbench's [RECON] criterion (see :func:`detect_phase_transition`).

    Examples
    --------
    >>> PhaseTransition(False, None, None, None, None, reason="flat").detected
    False
    """

    detected: bool
    step: float | None
    loss_before: float | None
    loss_after: float | None
    window: tuple[float, float] | None
    head: tuple[int, int] | None = None
    head_entropy_before: float | None = None
    head_entropy_after: float | None = None
    head_score_before: float | None = None
    head_score_after: float | None = None
    reason: str = ""


def _smooth(values: np.ndarray, width: int) -> np.ndarray:
    """Centred moving average; near the ends the window shrinks to the points that exist."""
    if width == 1:
        return values.copy()
    kernel = np.ones(width)
    sums = np.convolve(values, kernel, mode="same")
    counts = np.convolve(np.ones_like(values), kernel, mode="same")
    return sums / counts


def detect_phase_transition(
    steps,
    repeat_loss,
    *,
    vocab_size: int,
    induction_scores=None,
    entropies=None,
    smooth: int = 5,
    plateau_fraction: float = 0.8,
    drop_fraction: float = 0.4,
    window_fraction: float = 0.25,
) -> PhaseTransition:
    r"""Detect the induction phase transition in a repeated-half loss curve.

    Let :math:`s_k` be the repeated-half loss at the logged steps :math:`\tau_k`, smoothed by a centred moving
    average of ``smooth`` points, :math:`\ell_0 = \log V` the loss of a uniform guess, and
    :math:`S = \tau_{\mathrm{last}} - \tau_0` the logged span.  The curve has a transition when all of these hold:

    1. *steepest drop*: :math:`k^* = \arg\min_k (s_{k+1} - s_k)/(\tau_{k+1} - \tau_k)`; the transition step is
       the midpoint :math:`(\tau_{k^*} + \tau_{k^*+1})/2`;
    2. *sharp*: the window :math:`[\tau_i, \tau_j]` is the shortest one with :math:`i \le k^* < j` over which the
       loss falls by at least :math:`\delta\,\ell_0` (:math:`\delta` = ``drop_fraction``), and its length is
       :math:`\tau_j - \tau_i \le w\,S` (:math:`w` = ``window_fraction``);
    3. *from a plateau*: at least two of the points :math:`s_0, \dots, s_i` before the window lie at or above
       :math:`p\,\ell_0` (:math:`p` = ``plateau_fraction``): the run sat near the :math:`\log V` plateau before
       the drop (the loss may already be sliding when the steepest window begins);
    4. *an induction head forms* (only when per-head series are given): the head with the largest final
       induction score has a higher score and a lower mean entropy at :math:`\tau_j` than at :math:`\tau_i`.

    A straight descent of the whole :math:`\ell_0` over the run needs :math:`\delta S` steps to fall
    :math:`\delta\ell_0`, so it is rejected whenever :math:`w < \delta` (the defaults).

    Parameters
    ----------
    steps : array_like, shape=[K]
        Strictly increasing logged steps, ``K >= 3``.
    repeat_loss : array_like, shape=[K]
        Finite repeated-half losses (nats).
    vocab_size : int
        :math:`V \ge 2`.
    induction_scores, entropies : array_like, shape=[K, layers, heads], optional
        Per-head induction score and mean row entropy at the logged steps (both or neither).
    smooth : int
        Odd moving-average width in points.
    plateau_fraction, drop_fraction, window_fraction : float
        :math:`p \in [0, 1]`, :math:`\delta \in (0, 1]`, :math:`w \in (0, 1]`.

    Returns
    -------
    PhaseTransition
        ``detected``, ``step``, smoothed ``loss_before`` / ``loss_after`` at the window ends, ``window``, the
        head and its entropy/score at the window ends (at the first/last logged step when nothing is
        detected), and ``reason`` (which condition failed, or ``""``).

    References
    ----------
    Olsson et al. (2022) (the plateau-then-drop of the in-context loss); ISA ML01 (abrupt entropy drop at the
    induction snap); Attention Geometry §11 [SEED]. The numeric criterion is this workbench's [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> steps = np.arange(0, 1001, 20)
    >>> loss = np.log(50) / (1 + np.exp((steps - 600) / 15))  # a sigmoid drop at step 600
    >>> found = detect_phase_transition(steps, loss, vocab_size=50)
    >>> found.detected, abs(found.step - 600) <= 20
    (True, True)
    >>> detect_phase_transition(steps, np.log(50) * (1 - steps / 1000), vocab_size=50).detected  # a line
    False
    """
    vocab_size = check_integer("vocab_size", vocab_size, 2)
    smooth = check_smooth(smooth)
    p = check_in_range("plateau_fraction", plateau_fraction, 0.0, 1.0)
    delta = check_in_range("drop_fraction", drop_fraction, 0.0, 1.0, low_inclusive=False)
    w = check_in_range("window_fraction", window_fraction, 0.0, 1.0, low_inclusive=False)
    tau = np.asarray(steps, dtype=np.float64)
    loss = np.asarray(repeat_loss, dtype=np.float64)
    if tau.ndim != 1 or tau.size < 3:
        raise ValueError(f"steps must be a 1-dimensional array of at least 3 logged steps, got shape {tau.shape}")
    if loss.shape != tau.shape:
        raise ValueError(f"repeat_loss must have the shape of steps {tau.shape}, got {loss.shape}")
    if not np.all(np.diff(tau) > 0):
        raise ValueError("steps must be strictly increasing")
    if not np.all(np.isfinite(loss)):
        raise ValueError(f"repeat_loss must be finite, got {int((~np.isfinite(loss)).sum())} non-finite values")
    if (induction_scores is None) != (entropies is None):
        raise ValueError("induction_scores and entropies must be given together (both or neither)")
    scores = ent = None
    if induction_scores is not None:
        scores = np.asarray(induction_scores, dtype=np.float64)
        ent = np.asarray(entropies, dtype=np.float64)
        if scores.ndim != 3 or scores.shape[0] != tau.size or ent.shape != scores.shape:
            raise ValueError(
                f"induction_scores and entropies must have shape [{tau.size}, layers, heads], "
                f"got {scores.shape} and {ent.shape}"
            )

    ell0 = math.log(vocab_size)
    s = _smooth(loss, smooth)
    slopes = np.diff(s) / np.diff(tau)
    k = int(np.argmin(slopes))
    step = float(0.5 * (tau[k] + tau[k + 1]))
    # shortest window [i, j] with i <= k < j and s[i] - s[j] >= delta * ell0
    best = None
    for i in range(k + 1):
        later = np.nonzero(s[k + 1 :] <= s[i] - delta * ell0)[0]
        if later.size:
            j = k + 1 + int(later[0])
            if best is None or tau[j] - tau[i] < tau[best[1]] - tau[best[0]]:
                best = (i, j)
    reason = ""
    if best is None:
        reason = f"the loss never falls by drop_fraction * log V = {delta * ell0:.3g} across the steepest drop"
        i, j = 0, tau.size - 1
    else:
        i, j = best
        if tau[j] - tau[i] > w * (tau[-1] - tau[0]):
            reason = f"the drop takes {tau[j] - tau[i]:g} steps > window_fraction * span = {w * (tau[-1] - tau[0]):g}"
        elif np.count_nonzero(s[: i + 1] >= p * ell0) < 2:
            reason = "the drop does not start from a plateau near log V"

    head = None
    head_values: dict[str, float | None] = dict.fromkeys(
        ("head_entropy_before", "head_entropy_after", "head_score_before", "head_score_after")
    )
    if scores is not None:
        flat = int(np.argmax(scores[-1]))
        layer, h = divmod(flat, scores.shape[2])
        head = (layer, h)
        head_values = {
            "head_entropy_before": float(ent[i, layer, h]),
            "head_entropy_after": float(ent[j, layer, h]),
            "head_score_before": float(scores[i, layer, h]),
            "head_score_after": float(scores[j, layer, h]),
        }
        if not reason and not (
            head_values["head_score_after"] > head_values["head_score_before"]
            and head_values["head_entropy_after"] < head_values["head_entropy_before"]
        ):
            reason = "no head's induction score rises while its entropy falls across the window"
    detected = not reason
    return PhaseTransition(
        detected=detected,
        step=step if detected else None,
        loss_before=float(s[i]) if best is not None else None,
        loss_after=float(s[j]) if best is not None else None,
        window=(float(tau[i]), float(tau[j])) if best is not None else None,
        head=head,
        reason=reason,
        **head_values,
    )
