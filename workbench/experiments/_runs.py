"""Run directories, JSON records and progress bars shared by the experiments.

A run directory holds everything one invocation produced: ``config.json`` (the exact settings),
``results.json`` (every number the tables are made from), ``table.md`` and figures.  Its default location is
``experiments/runs/<experiment>-<preset>-<UTC timestamp>`` under the current directory, so repeated runs never
overwrite each other; ``workbench experiment --out DIR`` refuses a ``DIR`` that already holds files unless
``--force`` is given.  Records are written atomically (a temporary file, then :func:`os.replace`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm  # the terminal bar: no notebook-widget dependency

__all__ = ["jsonable", "progress", "run_directory", "save_json"]


def run_directory(experiment: str, preset: str, out: str | Path | None = None, *, require_empty: bool = False) -> Path:
    """Create and return the run directory (``out`` if given, else a fresh timestamped one).

    The directory is created if needed and proved writable (a probe file is written and removed) before it is
    returned, so a run that cannot keep its results fails before any compute, not after.

    Parameters
    ----------
    experiment, preset : str
        Name the default directory ``experiments/runs/<experiment>-<preset>-<UTC timestamp>``.
    out : str or Path, optional
        The run directory.
    require_empty : bool
        Refuse an existing directory that already holds files (a previous run's results and checkpoints
        would otherwise mix with the new ones).  ``workbench experiment`` sets it unless ``--force``.

    Raises
    ------
    ValueError
        ``out`` is an existing file, cannot be created or written, or is not empty under ``require_empty``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = run_directory("swiss-sit", "quick", Path(tmp) / "run")
    ...     _ = (path / "results.json").write_text("{}")
    ...     try:
    ...         run_directory("swiss-sit", "quick", path, require_empty=True)
    ...     except ValueError as exc:
    ...         refused = "already holds files" in str(exc)
    ...     path.is_dir(), refused
    (True, True)
    """
    if out is None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        out = Path("experiments") / "runs" / f"{experiment}-{preset}-{stamp}"
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"out must be a directory path, got an existing file {str(path)!r}")
    if require_empty and path.is_dir() and any(path.iterdir()):
        raise ValueError(
            f"out must be a new or empty directory, got {str(path)!r}, which already holds files (a previous "
            "run's results would mix with the new ones); choose another directory or pass --force to reuse it"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValueError(f"out must be a writable directory, got {str(path)!r} ({exc.strerror or exc})") from None
    return path


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


def save_json(path: str | Path, data: Any) -> Path:
    """Write ``jsonable(data)`` to ``path`` (indented, UTF-8) atomically and return the path.

    The document goes to a temporary file beside ``path`` that then replaces it (:func:`os.replace`), so an
    interrupted or failed write leaves the previous file intact, never a truncated one.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = save_json(Path(tmp) / "r.json", {"x": np.float64(0.5)})
    ...     json.loads(target.read_text()), sorted(p.name for p in Path(tmp).iterdir())
    ({'x': 0.5}, ['r.json'])
    """
    path = Path(path)
    text = json.dumps(jsonable(data), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    # os.open with mode 0o666 (not mkstemp's 0o600): the umask decides the final permissions, as for open().
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:  # any failure, KeyboardInterrupt included: no temporary file is left behind
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def progress(total: int, description: str, enabled: bool = True):
    """A tqdm progress bar over ``total`` steps (disabled: a no-op bar with the same interface)."""
    return tqdm(total=total, desc=description, disable=not enabled, leave=False, dynamic_ncols=True)
