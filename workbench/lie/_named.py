"""The named series of ``workbench derive``: ``SERIES[name](degree)`` is a :class:`~workbench.lie.LieSeries`."""

from __future__ import annotations

from workbench.lie._bch import bch, bch_many, commutator_log, hausdorff, symmetric_bch
from workbench.lie._free import check_degree
from workbench.lie._magnus import magnus
from workbench.lie._series import LieSeries
from workbench.lie._zassenhaus import zassenhaus

__all__ = ["SERIES"]


def _magnus_linear(degree: int) -> LieSeries:
    # `workbench derive magnus`: A(t) = A + tB (a single letter at degree 1).
    degree = check_degree(degree)
    return magnus(degree, 2 if degree >= 2 else 1)


#: The series of ``workbench derive SERIES``, by name: each a function of the degree.
SERIES = {
    "bch": bch,
    "symmetric-bch": symmetric_bch,
    "bch3": lambda degree: bch_many(3, degree),
    "commutator": commutator_log,
    "zassenhaus": zassenhaus,
    "hausdorff": hausdorff,
    "magnus": _magnus_linear,
}
