"""Atomic file writes and JSON records: every file a run directory holds is written through these.

:func:`atomic_write` writes beside the target and replaces it only when the block ends cleanly, so an interrupt or
a failed write never leaves a truncated file; :func:`jsonable` and :func:`restore_floats` carry records (numpy,
dataclasses, non-finite floats) to JSON and back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["atomic_write", "jsonable", "restore_floats", "save_json", "save_text"]


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays, dataclasses, tuples and paths turned into JSON types.

    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no such numbers).

    Examples
    --------
    >>> import numpy as np
    >>> jsonable({"a": np.float64(0.5), "b": np.arange(2), "c": (1, float("inf"))})
    {'a': 0.5, 'b': [0, 1], 'c': [1, 'inf']}
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


@contextlib.contextmanager
def atomic_write(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends cleanly the file written there replaces ``path``.

    The temporary file is created empty with mode ``0o666`` (the umask decides the final permissions, as for
    :func:`open`) and named ``.<name>.<pid>.<random>.tmp``.  If the block raises (any exception,
    ``KeyboardInterrupt`` included) or the replace fails, the temporary file is removed and ``path`` keeps its
    previous contents, never a truncated file.  Writers that infer a format from the file name (matplotlib's
    ``savefig``) need the format given explicitly.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = Path(tmp) / "table.md"
    ...     with atomic_write(target) as temporary:
    ...         _ = temporary.write_text("| a |")
    ...     try:
    ...         with atomic_write(target) as temporary:
    ...             _ = temporary.write_text("half a")
    ...             raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         pass
    ...     target.read_text(), sorted(p.name for p in Path(tmp).iterdir())
    ('| a |', ['table.md'])
    """
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:  # any failure, KeyboardInterrupt included: no temporary file is left behind
        temporary.unlink(missing_ok=True)
        raise


def save_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_write`) and return the path."""
    path = Path(path)
    with atomic_write(path) as temporary, open(temporary, "w", encoding="utf-8") as stream:
        stream.write(text)
    return path


def save_json(path: str | Path, data: Any) -> Path:
    """Write ``jsonable(data)`` to ``path`` (indented, UTF-8) atomically and return the path.

    The document goes to a temporary file beside ``path`` that then replaces it (:func:`atomic_write`), so an
    interrupted or failed write leaves the previous file intact, never a truncated one.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = save_json(Path(tmp) / "r.json", {"x": np.float64(0.5)})
    ...     json.loads(target.read_text()), sorted(p.name for p in Path(tmp).iterdir())
    ({'x': 0.5}, ['r.json'])
    """
    return save_text(path, json.dumps(jsonable(data), indent=1, ensure_ascii=False, allow_nan=False) + "\n")


def restore_floats(value: Any) -> Any:
    """Undo :func:`jsonable`'s spelling of non-finite floats: ``"nan"``, ``"inf"``, ``"-inf"`` become floats again.

    A record read back from JSON then holds the same numbers as the one that was written (finite floats survive
    JSON exactly: :mod:`json` writes the shortest repr that reads back to the same double).

    Examples
    --------
    >>> restore_floats({"loss": ["nan", 0.5], "step": "inf", "operator": "DMAP"})
    {'loss': [nan, 0.5], 'step': inf, 'operator': 'DMAP'}
    """
    if isinstance(value, dict):
        return {k: restore_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restore_floats(v) for v in value]
    if value in ("nan", "inf", "-inf"):
        return float(value)
    return value
