"""Fitted rates: the slope that an asymptotic claim is checked by.

An error that behaves like :math:`C h^p` is checked by the least-squares slope of ``log(error)`` against
``log(h)``, never by one residual.  The catalogue's ``Verification.from_rate`` and the experiments use
the same fit, so it lives in the base layer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["fit_rate"]


def fit_rate(parameters: Sequence[float], errors: Sequence[float]) -> float:
    """Least-squares slope of ``log(error)`` against ``log(parameter)``.

    An error behaving like :math:`C h^p` gives slope :math:`p`.

    Examples
    --------
    >>> round(fit_rate([0.1, 0.01, 0.001], [3e-2, 3e-4, 3e-6]), 12)
    2.0
    """
    h, e = _as_floats("parameters", parameters), _as_floats("errors", errors)
    usable = h.size >= 2 and h.shape == e.shape and np.all(h > 0) and np.all(e > 0)
    if not usable or not (np.all(np.isfinite(h)) and np.all(np.isfinite(e))):
        raise ValueError(
            "fit_rate needs at least two positive parameters and positive errors, "
            f"got parameters {list(parameters)} and errors {list(errors)}"
        )
    slope, _ = np.polyfit(np.log(h), np.log(e), 1)
    return float(slope)


def _as_floats(name: str, values) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a sequence of real numbers, got {values!r}") from exc
    if array.ndim != 1:  # None and True convert to 0-d arrays; a table of rows is not a sequence of numbers
        raise TypeError(f"{name} must be a sequence of real numbers, got {values!r}")
    return array
