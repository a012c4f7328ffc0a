"""Symbolic steps: what a derivation states, and each claimed equality decided by sympy.

A derivation (``Identity.derive`` in the catalogue, or a continuum expansion that shows its work) is a
list of :class:`Step` records; :func:`claim` makes one whose equality ``sympy.simplify(lhs - rhs) == 0``
decides.  This module sits in the base layer so that any package can show its steps without importing
the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Step", "claim"]


@dataclass(frozen=True)
class Step:
    """One step of a symbolic derivation.

    ``holds`` is ``None`` for a step that only states or computes something, and
    ``True``/``False`` for a claimed equality decided by sympy.
    """

    text: str
    expr: Any
    holds: bool | None = None


def _is_zero(expr: Any) -> bool:
    import sympy as sp

    if isinstance(expr, sp.MatrixBase):
        return all(_is_zero(entry) for entry in expr)
    return sp.simplify(sp.sympify(expr)) == 0


def claim(text: str, lhs: Any, rhs: Any = 0) -> Step:
    """Return a :class:`Step` claiming ``lhs == rhs``, decided by ``sympy.simplify(lhs - rhs) == 0``.

    Parameters
    ----------
    text : str
        What the step says, in words.
    lhs, rhs : sympy expression or matrix
        The two sides; ``rhs`` defaults to zero (a zero matrix when ``lhs`` is a matrix).

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> step = claim("Pythagoras", sp.sin(x) ** 2 + sp.cos(x) ** 2, 1)
    >>> step.holds, step.expr
    (True, Eq(sin(x)**2 + cos(x)**2, 1))
    """
    import sympy as sp

    if isinstance(lhs, sp.MatrixBase) and not isinstance(rhs, sp.MatrixBase):
        rhs = sp.zeros(*lhs.shape) if rhs == 0 else rhs
    shown = sp.Eq(lhs, rhs, evaluate=False)
    return Step(text, shown, _is_zero(lhs - rhs))
