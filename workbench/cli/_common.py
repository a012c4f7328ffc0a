"""What the commands of ``workbench`` share: rich tables and console, strict JSON, number formats, option checks.

Every command module imports these; this module imports no other module of the package.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import TYPE_CHECKING

__all__ = []  # package-internal: the command modules read these

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# rich is imported where a table or progress bar is drawn: a command that prints JSON (derive, bench --json)
# does not pay for it.


def rich_table(**kwargs) -> Table:
    """A :class:`rich.table.Table` (rich imported here, on first use)."""
    from rich.table import Table

    return Table(**kwargs)


def rich_escape(text: str) -> str:
    """``text`` with rich markup escaped, so that square brackets in it print as they are."""
    from rich.markup import escape

    return escape(text)


def rich_console(stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr), 160 columns wide (or ``$COLUMNS``) off a terminal."""
    # Off a terminal rich falls back to 80 columns and folds every cell; tables read better wide.
    from rich.console import Console

    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width, soft_wrap=False, highlight=False)


class Interrupted(Exception):
    """SIGINT during a command; the message says what was kept."""


def _strict(value):
    """``value`` with every non-finite float (numpy's too) replaced by ``None``: JSON has no NaN or inf."""
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def print_json(document, indent: int = 2) -> None:
    """Print ``document`` as one strict JSON document (RFC 8259: ``NaN``/``Infinity`` become ``null``)."""
    print(json.dumps(_strict(document), indent=indent, ensure_ascii=False, allow_nan=False))


def format_number(x: float | None) -> str:
    """A table cell: three significant digits, scientific below 1e-3, ``—`` for a missing value."""
    if x is None:
        return "—"
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def positive(value: int, option: str) -> int:
    """``value`` of ``option`` if it is at least 1, else a ``ValueError`` naming the option."""
    if value < 1:
        raise ValueError(f"{option} must be an integer >= 1, got {value}")
    return value


def seed_list(text: str) -> list[int]:
    """``--seeds 0,1,2`` or ``--seeds 0-4``."""
    try:
        if "-" in text:
            low, high = (int(part) for part in text.split("-", 1))
            seeds = list(range(low, high + 1))
        else:
            seeds = [int(part) for part in text.split(",")]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds must be integers >= 0 as 0,1,2 or a range 0-4, got {text!r}")
    return seeds
