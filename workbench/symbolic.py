r"""Symbolic steps: what a derivation states, and each claimed equality decided by sympy.

A derivation (``Identity.derive`` in the catalogue, or a continuum expansion that shows its work) is a
list of :class:`Step` records; :func:`claim` makes one whose equality ``sympy.simplify(lhs - rhs) == 0``
decides.  This module sits in the base layer so that any package can show its steps without importing
the catalogue.

A step carries three things a reader needs: its general ``statement`` in LaTeX (for any size N, in index
or matrix notation), a one-line ``because`` (the reason it holds), and the ``expr`` sympy decided.  The
expression is usually a small *instance* of the statement (3×3 symbolic matrices); a step marked
``general=True`` was decided for general N (matrix symbols, indexed sums over a symbolic range, or a
symbolic dimension).  :class:`Derivation` is a list of steps that renders in a notebook.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Derivation", "Step", "claim", "derivation", "describe_instance"]

_MARK_TEXT = {None: "·", True: "✓", False: "✗"}
_MARK_LATEX = {None: r"$\cdot$", True: r"$\checkmark$", False: r"$\times$"}


@dataclass(frozen=True)
class Step:
    r"""One step of a symbolic derivation.

    Parameters
    ----------
    text : str
        What the step says, in words (a short title).
    expr : sympy expression or matrix
        What sympy decided (for a claim, ``Eq(lhs, rhs)``) or what the step computes.
    holds : bool or None
        ``None`` for a step that only states or computes something, ``True``/``False`` for a
        claimed equality decided by sympy.
    statement : str or None
        The step's general statement in LaTeX, for any N, e.g.
        ``r"\pi^\top\mathsf P = \pi^\top"``.
    because : str or None
        One line saying why it holds, in words and unicode.
    general : bool
        Whether ``expr`` is the general statement itself (decided for general N), not an instance.
    """

    text: str
    expr: Any
    holds: bool | None = None
    statement: str | None = None
    because: str | None = None
    general: bool = False

    @property
    def mark(self) -> str:
        """``✓`` (holds), ``✗`` (fails) or ``·`` (states or computes)."""
        return _MARK_TEXT[self.holds]

    def _repr_latex_(self) -> str:
        return _step_latex(self)

    def _repr_markdown_(self) -> str:
        return _step_markdown(self)


class Derivation(list):
    """A list of :class:`Step` records that renders as numbered steps in a notebook.

    It is a plain ``list`` otherwise: indexing, iteration and ``len`` work as on the steps.
    ``title`` (optional) heads the rendering.
    """

    def __init__(self, steps: Iterable[Step] = (), title: str | None = None):
        super().__init__(steps)
        self.title = title

    @property
    def holds(self) -> bool:
        """Whether no claimed step failed."""
        return all(step.holds is not False for step in self)

    def _repr_latex_(self) -> str:
        head = [f"\\textbf{{{_escape_dollars(self.title)}}}\n\n"] if self.title else []
        body = [f"{number}. " + _step_latex(step) for number, step in enumerate(self, 1)]
        return "".join(head) + "\n\n".join(body)

    def _repr_markdown_(self) -> str:
        head = [f"**{self.title}**\n"] if self.title else []
        body = [f"{number}. " + _step_markdown(step, indent="   ") for number, step in enumerate(self, 1)]
        return "\n".join(head + body)


def derivation(steps: Iterable[Step], title: str | None = None) -> Derivation:
    """Return ``steps`` as a :class:`Derivation` (a list that renders in a notebook)."""
    return steps if isinstance(steps, Derivation) and title is None else Derivation(steps, title)


def _escape_dollars(text: str) -> str:
    return text.replace("$", r"\$")


def _step_latex(step: Step) -> str:
    import sympy as sp

    parts = [f"{_MARK_LATEX[step.holds]} {_escape_dollars(step.text)}"]
    shown = step.statement if step.statement is not None else sp.latex(step.expr)
    parts.append(f"$${shown}$$")
    if step.because:
        parts.append(f"because: {_escape_dollars(step.because)}")
    if step.holds is not None:
        parts.append(f"({describe_instance(step)}: {_MARK_LATEX[step.holds]})")
    return "\n\n".join(parts)


def _step_markdown(step: Step, indent: str = "") -> str:
    import sympy as sp

    shown = step.statement if step.statement is not None else sp.latex(step.expr)
    lines = [f"{step.mark} {step.text}", "", f"{indent}$${shown}$$"]
    if step.because:
        lines += ["", f"{indent}*because:* {step.because}"]
    if step.holds is not None:
        lines += ["", f"{indent}{describe_instance(step)}: {step.mark}"]
    return "\n".join(lines) + "\n"


def _shape_words(obj: Any) -> str | None:
    import sympy as sp

    if isinstance(obj, sp.MatrixBase) or (isinstance(obj, sp.MatrixExpr) and obj.shape):
        rows, cols = obj.shape
        if not (isinstance(rows, (int, sp.Integer)) and isinstance(cols, (int, sp.Integer))):
            return None
        rows, cols = int(rows), int(cols)
        if cols == 1 and rows > 1:
            return f"{rows}-vectors"
        if rows == 1 and cols > 1:
            return f"1×{cols} row vectors"
        return f"{rows}×{cols} matrices"
    return None


def describe_instance(step: Step) -> str:
    """Say in words what sympy decided the step on, e.g. ``"checked on the symbolic instance (3×3 matrices)"``.

    A ``general`` step reads ``"proved for general N"``.
    """
    import sympy as sp

    if step.general:
        return "proved for general N"
    expr = step.expr
    sides = [expr.lhs, expr.rhs] if isinstance(expr, sp.Eq) else [expr]
    shapes = [s for s in (_shape_words(side) for side in sides) if s]
    if shapes:
        what = shapes[0]
    else:
        try:
            matrices = {_shape_words(m) for m in sp.sympify(expr).atoms(sp.MatrixBase)} - {None}
        except (TypeError, AttributeError, sp.SympifyError):
            matrices = set()
        basic = expr if isinstance(expr, sp.Basic) else None
        symbols = basic.free_symbols if basic is not None else set()
        if matrices:
            what = "scalar in " + ", ".join(sorted(matrices))
        elif symbols and any(not s.is_commutative for s in symbols):
            what = "noncommuting symbols, any associative algebra"
        elif symbols:
            what = f"scalar in {len(symbols)} symbol{'s' if len(symbols) != 1 else ''}"
        else:
            what = "exact values"
    return f"checked on the symbolic instance ({what})"


def _is_zero(expr: Any) -> bool:
    import sympy as sp

    if isinstance(expr, sp.MatrixBase):
        return all(_is_zero(entry) for entry in expr)
    if isinstance(expr, sp.MatrixExpr):  # matrix symbols: a symbolic dimension
        reduced = sp.block_collapse(expr.doit())
        if isinstance(reduced, sp.BlockMatrix):
            reduced = reduced.blocks
        if isinstance(reduced, sp.MatrixBase):
            return _is_zero(reduced)
        for normal_form in (sp.expand, sp.simplify):
            reduced = normal_form(reduced)
            if isinstance(reduced, sp.ZeroMatrix) or reduced == 0:
                return True
        return False
    return sp.simplify(sp.sympify(expr)) == 0


def claim(
    text: str,
    lhs: Any,
    rhs: Any = 0,
    *,
    statement: str | None = None,
    because: str | None = None,
    general: bool = False,
) -> Step:
    r"""Return a :class:`Step` claiming ``lhs == rhs``, decided by ``sympy.simplify(lhs - rhs) == 0``.

    Parameters
    ----------
    text : str
        What the step says, in words.
    lhs, rhs : sympy expression or matrix
        The two sides; ``rhs`` defaults to zero (a zero matrix when ``lhs`` is a matrix).
    statement : str, optional
        The general statement in LaTeX (for any N).
    because : str, optional
        One line saying why it holds.
    general : bool
        Pass ``True`` only when ``lhs`` and ``rhs`` are the general statement (matrix symbols, indexed
        sums over a symbolic range, a symbolic dimension), so that sympy's decision proves it for every N.

    Examples
    --------
    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> step = claim("Pythagoras", sp.sin(x) ** 2 + sp.cos(x) ** 2, 1, statement=r"\sin^2x + \cos^2x = 1")
    >>> step.holds, step.expr
    (True, Eq(sin(x)**2 + cos(x)**2, 1))
    """
    import sympy as sp

    if isinstance(lhs, sp.MatrixBase) and not isinstance(rhs, sp.MatrixBase):
        rhs = sp.zeros(*lhs.shape) if rhs == 0 else rhs
    shown = sp.Eq(lhs, rhs, evaluate=False)
    return Step(text, shown, _is_zero(lhs - rhs), statement=statement, because=because, general=general)
