r"""The log lens of a list of learned maps: one entry per map, and the commutator map across them.

log_lens       -- logarithm (or the reason there is none), spectrum and split norms per map; commutators
LensEntry      -- one map of the report (``row()`` gives a JSON-ready summary)
LogLensReport  -- the entries, the commutator map and its superdiagonal

References
----------
Lie-Exponential Roadmap, "Log-Lens Diagnostics": periodically compute :math:`S_\ell = \log W_\ell`,
track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert` and the spectrum of :math:`S_\ell`; "Log-lens dashboards" [SEED].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from workbench.backend import check_view_size
from workbench.lens._logarithm import KINDS, classify_map_core, principal_log_core
from workbench.lens._primitives import DEFAULT_TOL, as_matrix, check_tol, commutator
from workbench.lens._spectrum import generator_spectrum
from workbench.lens._splits import cartan_split, iwasawa_split
from workbench.validation import check_choice

__all__ = ["LensEntry", "LogLensReport", "log_lens"]


@dataclass(frozen=True, eq=False)
class LensEntry:
    r"""One map of a :class:`LogLensReport`.

    Attributes
    ----------
    index : int
        Position in the input list.
    shape : tuple of int
        Shape of the map as given.
    kind : str or None
        The logarithm used (see :func:`classify_map`), or ``None`` when there is none.
    reason : str or None
        Why no principal logarithm was computed (the ``ValueError``/``TypeError`` message), else ``None``.
    log : numpy.ndarray or None
        :math:`S = \log W`.
    log_norm, spectral_abscissa, max_frequency : float
        :math:`\lVert S\rVert_F`, :math:`\max\operatorname{Re}\lambda(S)`, :math:`\max|\operatorname{Im}
        \lambda(S)|` (NaN without a log).
    cartan, iwasawa : dict
        Frobenius norms of the parts of :math:`S` (``{"K", "P"}``, ``{"K", "H", "N"}``); empty without a log.

    References
    ----------
    Lie-Exponential Roadmap, "Log-Lens Diagnostics" [SEED]; see :func:`log_lens`.

    Examples
    --------
    >>> import numpy as np
    >>> entry = log_lens([np.diag([np.e, 1.0])]).entries[0]  # log = diag(1, 0)
    >>> entry.kind, entry.log_norm, entry.spectral_abscissa, entry.row()["iwasawa_H"]
    ('spd', 1.0, 1.0, 1.0)
    """

    index: int
    shape: tuple[int, ...]
    kind: str | None
    reason: str | None
    log: np.ndarray | None = None
    log_norm: float = math.nan
    spectral_abscissa: float = math.nan
    max_frequency: float = math.nan
    cartan: dict = field(default_factory=dict)
    iwasawa: dict = field(default_factory=dict)

    def row(self) -> dict:
        """JSON-ready summary (no matrices)."""
        return {
            "index": self.index,
            "shape": list(self.shape),
            "kind": self.kind,
            "reason": self.reason,
            "log_norm": self.log_norm,
            "spectral_abscissa": self.spectral_abscissa,
            "max_frequency": self.max_frequency,
            **{f"cartan_{k}": v for k, v in self.cartan.items()},
            **{f"iwasawa_{k}": v for k, v in self.iwasawa.items()},
        }


@dataclass(frozen=True, eq=False)
class LogLensReport:
    r"""The log lens of a list of learned maps.

    Attributes
    ----------
    entries : tuple of LensEntry
        One per map, in order.
    adjacent : numpy.ndarray, shape=[L - 1]
        :math:`\lVert[S_\ell, S_{\ell+1}]\rVert_F`; NaN where a log is missing or the sizes differ.
    commutators : numpy.ndarray, shape=[L, L]
        :math:`\lVert[S_\ell, S_m]\rVert_F` with the same NaN convention (zero diagonal where a log exists);
        ready for :func:`plot_commutator_heatmap`.

    References
    ----------
    Lie-Exponential Roadmap, "Log-lens dashboards" [SEED]; see :func:`log_lens`.

    Examples
    --------
    >>> import numpy as np
    >>> report = log_lens([np.eye(2), np.array([[0.0, 0.0], [1.0, 1.0]])])  # the second map is singular
    >>> report.rows()[1]["reason"]
    'no principal logarithm: W is singular (an eigenvalue of modulus 0)'
    >>> report.logs[1] is None, bool(np.isnan(report.adjacent[0]))
    (True, True)
    """

    entries: tuple[LensEntry, ...]
    adjacent: np.ndarray
    commutators: np.ndarray

    @property
    def logs(self) -> list[np.ndarray | None]:
        """The logarithms, ``None`` where there is none."""
        return [entry.log for entry in self.entries]

    def rows(self) -> list[dict]:
        """JSON-ready rows, one per map."""
        return [entry.row() for entry in self.entries]


def _entry(index: int, W, kind: str, tol: float) -> LensEntry:
    try:
        shape = tuple(int(s) for s in W.shape) if hasattr(W, "shape") else tuple(np.shape(W))
    except ValueError:  # a ragged list
        shape = ()
    try:
        matrix = as_matrix(f"weights[{index}]", W)
        used = classify_map_core(matrix, tol) if kind == "auto" else kind
        S = principal_log_core(matrix, used, tol)
    except (ValueError, TypeError) as exc:
        return LensEntry(index, shape, None, str(exc))
    spectrum = generator_spectrum(S)
    lam_ok = S.size > 0
    return LensEntry(
        index,
        shape,
        used,
        None,
        S,
        float(np.linalg.norm(S)),
        float(spectrum.spectral_abscissa) if lam_ok else math.nan,
        float(spectrum.max_frequency) if lam_ok else math.nan,
        cartan_split(S).norms,
        iwasawa_split(S).norms,
    )


def log_lens(weights, *, kind: str = "auto", tol: float = DEFAULT_TOL) -> LogLensReport:
    r"""Read a list of learned linear maps through their principal logarithms.

    For each map :math:`W_\ell`: the logarithm :math:`S_\ell = \log W_\ell` (:func:`principal_log`) or the
    reason there is none, :math:`\lVert S_\ell\rVert_F`, the spectral abscissa and top frequency of
    :math:`S_\ell` (:func:`generator_spectrum`), and the norms of its Cartan and Iwasawa parts; across the
    maps, the commutator map and its superdiagonal

    .. math::

        H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F, \qquad c_\ell = H_{\ell,\ell+1}.

    Never raises on an individual map (non-square, non-finite, without a real principal log): that entry
    carries the message and its commutators are NaN.

    Parameters
    ----------
    weights : sequence of array_like, or array shape=[L, d, d]
        Square maps (numpy, torch or lists; sizes may differ).
    kind : {"auto", "orthogonal", "spd", "near-identity"}
        Structure to use for every map (``"auto"`` classifies each one).
    tol : float, optional
        Structural tolerance, > 0 (see :func:`principal_log`).

    Returns
    -------
    LogLensReport

    Raises
    ------
    TypeError
        If ``weights`` is not a sequence or a stack.
    ValueError
        If ``weights`` is empty, or ``kind`` / ``tol`` is invalid.

    References
    ----------
    Lie-Exponential Roadmap, "Log-Lens Diagnostics": periodically compute :math:`S_\ell = \log W_\ell`,
    track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert` and the spectrum of :math:`S_\ell`; "Log-lens dashboards"
    [SEED].

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> rotation = scipy.linalg.expm(np.array([[0.0, -0.3], [0.3, 0.0]]))
    >>> report = log_lens([rotation, np.diag([2.0, 0.5]), -np.eye(2) * 0.5])
    >>> [entry.kind for entry in report.entries]
    ['orthogonal', 'spd', None]
    >>> report.entries[2].reason
    'no real principal logarithm: eigenvalue -0.5 on the negative real axis'
    >>> # ‖[0.3 J, diag(log 2, -log 2)]‖_F = 0.6 √2 log 2 by hand; no log for the third map
    >>> c = report.adjacent
    >>> bool(np.isclose(c[0], 0.6 * np.sqrt(2) * np.log(2), rtol=1e-13)), bool(np.isnan(c[1]))
    (True, True)
    """
    check_choice("kind", kind, KINDS)
    tol = check_tol(tol)
    if isinstance(weights, (list, tuple)):
        items = list(weights)
    elif hasattr(weights, "shape") and len(weights.shape) == 3:
        check_view_size("weights", weights)  # a repeated view of L maps costs L logarithms: held to the budget
        items = [weights[i] for i in range(int(weights.shape[0]))]
    else:
        raise TypeError(
            f"weights must be a sequence of square matrices or a stack shape=[L, d, d], got {type(weights).__name__}"
        )
    if not items:
        raise ValueError("weights must hold at least one matrix, got 0")
    entries = tuple(_entry(i, W, kind, tol) for i, W in enumerate(items))
    count = len(entries)
    H = np.full((count, count), np.nan)
    for i, a in enumerate(entries):
        for j in range(i, count):
            b = entries[j]
            if a.log is not None and b.log is not None and a.log.shape == b.log.shape:
                H[i, j] = H[j, i] = 0.0 if i == j else float(np.linalg.norm(commutator(a.log, b.log)))
    adjacent = np.array([H[i, i + 1] for i in range(count - 1)])
    return LogLensReport(entries, adjacent, H)
