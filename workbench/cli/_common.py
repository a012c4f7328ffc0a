"""What the commands of ``workbench`` share: rich tables and console, strict JSON, CSV, number formats, option checks.

Every command module imports these; this module imports no other module of the package.
"""

from __future__ import annotations

import csv
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
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


def resume_command(args, out) -> str:
    """The command that continues the run in ``out``: the one typed, ``--out``/``--force`` replaced by ``--resume``.

    A run continues only with the options that made it (corpus, lengths, limits, the model), so the interrupt
    message repeats them rather than saying ``--resume OUT`` alone, which would be refused.
    """
    import shlex

    typed, kept, skip = list(getattr(args, "argv", None) or []), [], False
    for token in typed:
        if skip:
            skip = False
        elif token in ("--out", "--resume"):
            skip = True
        elif token.startswith(("--out=", "--resume=")) or token == "--force":
            continue
        else:
            kept.append(token)
    return "workbench " + shlex.join([*kept, "--resume", str(out)])


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


def _flat(record: Mapping, prefix: str = "") -> dict:
    """``record`` with nested mappings spread into dotted keys (``{"a": {"b": 1}}`` -> ``{"a.b": 1}``)."""
    flat = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flat(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _csv_cell(value) -> str:
    """One CSV cell: numbers at full precision, ``true``/``false`` as in JSON, missing and NaN empty, lists as JSON."""
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a numpy scalar
        value = value.item()
    elif hasattr(value, "tolist"):  # a numpy array
        value = value.tolist()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same double ('inf' for infinity)
    if isinstance(value, (int, str)):
        return str(value)
    # a list (a curve, a matrix): one cell of compact strict JSON, so that the row stays one row
    return json.dumps(_strict(value), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def print_csv(rows: Iterable[Mapping], columns: Sequence[str] = ()) -> None:
    """Print ``rows`` as CSV on stdout: a header row, then one line per row (``--csv``).

    Nested mappings become dotted columns (``sizes.n``); the header is ``columns`` followed by every other key in
    the order it first appears, and a row without a column has an empty cell there.  Cells as :func:`_csv_cell`.

    Parameters
    ----------
    rows : iterable of mapping
        The records, e.g. those of a command's ``--json`` document.
    columns : sequence of str, optional
        The leading columns, present even when no row has them (an empty table keeps its header).

    Examples
    --------
    >>> print_csv([{"name": "a", "sizes": {"n": 4}, "residual": 1 / 3, "passed": True}, {"residual": float("nan")}])
    name,sizes.n,residual,passed
    a,4,0.3333333333333333,true
    ,,,
    """
    flat = [_flat(row) for row in rows]
    header = list(dict.fromkeys([*columns, *(key for row in flat for key in row)]))
    writer = csv.writer(sys.stdout, lineterminator="\n")  # "\n": stdout is text; "\r\n" would double on Windows
    writer.writerow(header)
    writer.writerows([_csv_cell(row.get(key)) for key in header] for row in flat)


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
