"""Run directories, JSON records and progress bars shared by the experiments.

A run directory holds everything one invocation produced: ``config.json`` (the exact settings),
``results.json`` (every number the tables are made from), ``table.md`` and figures.  Its default location is
``experiments/runs/<experiment>-<preset>-<UTC timestamp>`` under the current directory, so repeated runs never
overwrite each other.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm  # the terminal bar: no notebook-widget dependency

__all__ = ["jsonable", "progress", "run_directory", "save_json"]


def run_directory(experiment: str, preset: str, out: str | Path | None = None) -> Path:
    """Create and return the run directory (``out`` if given, else a fresh timestamped one).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = run_directory("swiss-sit", "quick", Path(tmp) / "run")
    ...     path.is_dir()
    True
    """
    if out is None:
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        out = Path("experiments") / "runs" / f"{experiment}-{preset}-{stamp}"
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"out must be a directory path, got an existing file {str(path)!r}")
    path.mkdir(parents=True, exist_ok=True)
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
    """Write ``jsonable(data)`` to ``path`` (indented, UTF-8) and return the path."""
    path = Path(path)
    path.write_text(json.dumps(jsonable(data), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def progress(total: int, description: str, enabled: bool = True):
    """A tqdm progress bar over ``total`` steps (disabled: a no-op bar with the same interface)."""
    return tqdm(total=total, desc=description, disable=not enabled, leave=False, dynamic_ncols=True)
