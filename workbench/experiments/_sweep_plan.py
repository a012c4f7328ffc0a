"""The plan of a sweep: its settings checked, its grid cells named, and every task's config built and checked.

:func:`plan_sweep` turns what :func:`workbench.experiments.run_sweep` was given into the settings ``sweep.json``
records and the list of tasks, one per (grid cell, seed), before anything runs; :func:`value_text` writes a grid
value as cell names and the sweep's table show it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Iterable, Mapping
from numbers import Integral
from typing import Any

import numpy as np

from workbench.experiments.common import jsonable
from workbench.validation import check_choice

__all__ = []  # nothing the package exports: run_sweep and sweep_table use plan_sweep and value_text

_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._=,+\-\[\]]")
_MAX_CELL_NAME = 200


def _plain(value: Any) -> Any:
    """A config value as the config holds it: numpy scalars as Python numbers, lists as tuples (as ``from_json``)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, list):
        value = tuple(_plain(v) for v in value)
    return value


def _check_fields(parameter: str, given: Any, fields: list[str], config_name: str) -> dict:
    """``given`` (a mapping of config fields, or ``None``) as a dict; unknown fields and ``seed`` refused."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise TypeError(f"{parameter} must be a dict keyed by {config_name} fields, got {type(given).__name__}")
    for field in given:
        if field not in fields:
            raise ValueError(
                f"{parameter} must be keyed by fields of {config_name} ({', '.join(fields)}), got unknown field "
                f"{field!r}"
            )
        if field == "seed":
            raise ValueError(f"{parameter} must not set seed (the seeds parameter does), got {parameter}['seed']")
    return dict(given)


def _check_grid(grid: Any, fields: list[str], config_name: str) -> dict[str, list]:
    checked = {}
    for field, values in _check_fields("grid", grid, fields, config_name).items():
        if isinstance(values, np.ndarray):
            values = values.tolist()
        if not isinstance(values, (list, tuple, range)):
            raise TypeError(f"grid[{field!r}] must be a list of values, got {values!r}")
        values = [_plain(v) for v in values]
        if not values:
            raise ValueError(f"grid[{field!r}] must be a non-empty list of values, got []")
        if len({json.dumps(jsonable(v), sort_keys=True) for v in values}) != len(values):
            raise ValueError(f"grid[{field!r}] must not repeat a value, got {values!r}")
        checked[field] = values
    return checked


def _check_seeds(seeds: Any) -> list[int]:
    message = f"seeds must be a non-empty sequence of distinct integers >= 0, got {seeds!r}"
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise TypeError(message)
    seeds = [_plain(s) for s in seeds]
    if any(isinstance(s, bool) or not isinstance(s, Integral) for s in seeds):
        raise TypeError(message)
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(message)
    return [int(s) for s in seeds]


def _check_selection(selection: Any, axes: dict[str, tuple[str, ...]], name: str) -> dict[str, tuple[str, ...]]:
    if selection is None:
        return {}
    if not isinstance(selection, Mapping):
        raise TypeError(f"selection must be a dict of {name} axes to names, got {type(selection).__name__}")
    checked = {}
    for axis, values in selection.items():
        if axis not in axes:
            raise ValueError(
                f"selection must be keyed by axes of the {name} experiment ({', '.join(axes)}), got {axis!r}"
            )
        values = (values,) if isinstance(values, str) else tuple(values)
        if not values:
            raise ValueError(f"selection[{axis!r}] must name at least one of {', '.join(axes[axis])}, got none")
        for value in values:
            if value not in axes[axis]:
                raise ValueError(f"selection[{axis!r}] must hold names from {', '.join(axes[axis])}, got {value!r}")
        checked[axis] = tuple(dict.fromkeys(values))
    return checked


def value_text(value: Any) -> str:
    """A grid value as written in a cell's name and the table: strings bare, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(jsonable(value), separators=(",", ":"))


def _cell_name(cell: dict[str, Any]) -> str:
    """The directory name of a grid cell: ``field=value`` by field name, comma-joined; ``base`` without a grid."""
    if not cell:
        return "base"
    text = ",".join(f"{field}={value_text(cell[field])}" for field in sorted(cell))
    return _UNSAFE_IN_NAME.sub("_", text)


def plan_sweep(experiments: dict, name: Any, preset: Any, grid, seeds, overrides, selection) -> tuple[dict, list[dict]]:
    """The sweep's settings (as recorded in ``sweep.json``) and its tasks, every task's config built and checked."""
    if not isinstance(name, str) or name not in experiments:
        raise ValueError(f"name must be one of {', '.join(experiments)}, got {name!r}")
    experiment = experiments[name]
    config_class = experiment.config
    check_choice("preset", preset, tuple(config_class.PRESETS))
    fields = [f.name for f in dataclasses.fields(config_class)]
    if "seed" not in fields:  # pragma: no cover - every registered experiment is seeded
        raise ValueError(f"name must be a seeded experiment (a config with a seed field), got {name!r}")
    grid = _check_grid(grid, fields, config_class.__name__)
    overrides = {k: _plain(v) for k, v in _check_fields("overrides", overrides, fields, config_class.__name__).items()}
    for field in overrides:
        if field in grid:
            raise ValueError(f"overrides must not set a field the grid varies, got {field!r} in both")
    seeds = _check_seeds(seeds)
    selection = _check_selection(selection, experiment.axes, name)

    cells = [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]
    names = [_cell_name(cell) for cell in cells]
    for cell_name in names:
        if len(cell_name) > _MAX_CELL_NAME:
            raise ValueError(
                f"grid values must give directory names of at most {_MAX_CELL_NAME} characters, got {cell_name!r}"
            )
        if names.count(cell_name) > 1:
            raise ValueError(f"grid values must give distinct directory names, got two cells named {cell_name!r}")
    base = config_class.preset(preset)
    tasks = []
    for cell, cell_name in zip(cells, names, strict=True):
        for seed in seeds:
            config = dataclasses.replace(base, **overrides, **cell, seed=seed)  # the fields' own checks run again
            tasks.append(
                {
                    "id": f"{cell_name}/seed-{seed}",
                    "cell": cell_name,
                    "grid": cell,
                    "seed": seed,
                    "config": jsonable(dataclasses.asdict(config)),
                }
            )
    spec = {
        "experiment": name,
        "preset": preset,
        "grid": grid,
        "seeds": seeds,
        "overrides": overrides,
        "selection": selection,
    }
    return spec, tasks
