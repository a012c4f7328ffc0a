"""The ``experiment`` and ``sweep`` commands: config overrides, ``--resume`` checks and ``--grid`` parsing.

A config starts from a preset; ``--steps``, ``--seed`` and ``--set FIELD=VALUE`` change its fields, and the
axis options (``--operator``, ``--order``, ...) select conditions.  ``--resume`` continues a run with the
settings it recorded and refuses an option that would change them; a sweep crosses ``--grid`` values with
``--seeds`` and runs each cell as a task (:func:`workbench.experiments.run_sweep`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from workbench.cli._common import Interrupted, positive, print_csv, print_json, seed_list

__all__ = []  # package-internal: the index dispatches to cmd_experiment, cmd_sweep; the parser reads AXIS_OPTIONS


AXIS_OPTIONS = {
    "operators": "--operator",
    "orders": "--order",
    "architectures": "--architecture",
    "targets": "--targets",
}


def _experiment_config(args: argparse.Namespace, base):
    """The config the options ask for, from ``base`` (a config), and the option that set each changed field."""
    import dataclasses

    overrides = {key: getattr(args, key) for key in ("steps", "seed") if getattr(args, key) is not None}
    sources = {key: f"--{key} {value}" for key, value in overrides.items()}
    fields = {f.name for f in dataclasses.fields(base)}
    for key in overrides:
        if key not in fields:
            raise ValueError(f"--{key} does not apply to this experiment (no {key} field); use --set FIELD=VALUE")
    for item in args.set or ():
        key, sep, text = item.partition("=")
        if not sep or key not in fields:
            raise ValueError(f"--set must be FIELD=VALUE with FIELD one of {', '.join(sorted(fields))}, got {item!r}")
        overrides[key] = _option_json("--set", item, text, default=text)  # numbers, null, lists; else a string
        if isinstance(overrides[key], list):
            overrides[key] = tuple(overrides[key])
        sources[key] = f"--set {item}"
    return (dataclasses.replace(base, **overrides) if overrides else base), sources


def _experiment_selection(args: argparse.Namespace, experiment) -> dict:
    selection = {}
    for axis, option in AXIS_OPTIONS.items():
        chosen = getattr(args, axis)
        if not chosen:
            continue
        if axis not in experiment.axes:
            raise ValueError(f"{option} does not apply to the {args.name} experiment")
        allowed = experiment.axes[axis]
        for value in chosen:
            if value not in allowed:
                raise ValueError(f"{option} must be one of {', '.join(allowed)}, got {value!r}")
        selection[axis] = tuple(dict.fromkeys(chosen))
    return selection


def _resumed_run(args: argparse.Namespace, experiment):
    """The config and selection of the run ``--resume DIR`` continues; options may repeat them, not change them."""
    from workbench.experiments import resumable_run

    for option, given in (("--out", args.out), ("--force", args.force)):
        if given:
            raise ValueError(f"{option} does not apply with --resume, which continues the run in its own directory")
    record = resumable_run(args.resume, "--resume")
    where = f"the run in {args.resume!r}"
    if record["experiment"] != args.name:
        raise ValueError(f"name must be the experiment of {where}, {record['experiment']}, got {args.name!r}")
    try:
        recorded = experiment.config.from_json(record["config"])
    except (ValueError, TypeError) as exc:  # a config edited in both run.json and config.json
        where_file = str(Path(args.resume) / "run.json")
        raise ValueError(
            f"{where_file!r} must record the settings of a {args.name} run, got a config that is not one ({exc})"
        ) from None
    base = experiment.config.preset(args.preset) if args.preset is not None else recorded
    requested, sources = _experiment_config(args, base)
    changed = [k for k in record["config"] if getattr(requested, k) != getattr(recorded, k)]
    if changed:
        option = sources.get(changed[0], f"--preset {args.preset}")
        fields = ", ".join(f"{k}={getattr(recorded, k)!r}" for k in changed[:3]) + (", ..." if changed[3:] else "")
        raise ValueError(
            f"{option} conflicts with {where}, recorded with {fields}; --resume continues a run with its own "
            "settings (drop the option, or start a new run)"
        )
    selection = {axis: tuple(values) for axis, values in record["selection"].items()}
    for axis, chosen in _experiment_selection(args, experiment).items():
        if chosen != selection.get(axis):
            raise ValueError(
                f"{AXIS_OPTIONS[axis]} {' '.join(chosen)} conflicts with {where}, which runs {axis} "
                f"{', '.join(selection.get(axis, ()))}; --resume continues a run with its own selection"
            )
    return recorded, selection


def _interrupted_run(out: Path, name: str) -> str:
    """One line: what the interrupted run kept in ``out`` and how to continue it."""
    try:
        record = json.loads((out / "run.json").read_text(encoding="utf-8"))
        done, planned, status = record["done"], record["conditions"], record["status"]
        kept = f" ({', '.join(done)}: each a .pt state dict and a .json row)" if done else ""
        count = f"{len(done)} of {len(planned)}"
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):  # none, or not a run record
        return f"the run directory {out} keeps nothing (the run had not started)"
    return (
        f"the run directory {out} keeps {count} conditions{kept} and is marked {status} in run.json; continue it "
        f"with: workbench experiment {name} --resume {out}"
    )


def _experiment(args: argparse.Namespace):
    """The experiment ``NAME`` of ``workbench experiment`` and ``workbench sweep``, its ``--preset`` checked."""
    try:
        from workbench.experiments import EXPERIMENTS
    except ImportError as exc:  # torch missing: say what to install
        raise ValueError(f"experiments need torch (pip install 'torch==2.13.0'): {exc}") from exc

    if args.name not in EXPERIMENTS:
        raise ValueError(f"name must be one of {', '.join(EXPERIMENTS)}, got {args.name!r}")
    experiment = EXPERIMENTS[args.name]
    if args.preset is not None and args.preset not in experiment.config.PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(experiment.config.PRESETS)}, got {args.preset!r}")
    return experiment


def cmd_experiment(args: argparse.Namespace) -> int:
    experiment = _experiment(args)
    if args.resume is not None:
        config, selection = _resumed_run(args, experiment)
    else:
        config, _ = _experiment_config(args, experiment.config.preset(args.preset or "quick"))
        selection = _experiment_selection(args, experiment)
    from workbench.experiments import jsonable, run_directory

    if args.threads is not None:
        import torch

        torch.set_num_threads(positive(args.threads, "--threads"))
    if args.resume is not None:
        out = Path(args.resume)
    elif args.out is not None:
        out = Path(args.out)  # the runner creates it, or refuses it if it holds files and --force is not given
    else:
        out = run_directory(args.name, args.preset or "quick")
    try:
        results = experiment.run(
            config,
            out=out,
            progress=not args.no_progress and not (args.json or args.csv),
            force=args.force,
            resume=args.resume is not None,
            **selection,
        )
    except KeyboardInterrupt:
        raise Interrupted(_interrupted_run(out, args.name)) from None
    if args.json:
        print_json(jsonable(results), indent=1)
    elif args.csv:  # one row per condition: its keys and measurements, as a sweep gathers them
        print_csv(experiment.rows(results))
    else:
        print(experiment.table(results))
        print(f"\nrun directory: {out}")
    failed = [name for name, check in results.get("checks", {}).items() if not _check_passed(check)]
    if failed:
        print(f"workbench experiment: structural checks failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _check_passed(check) -> bool:
    """A check is a bool, or a dict with a boolean ``passed``.

    Informational entries (``passed: None``, or ``meaningful: False`` such as the fidelity band of a barely
    trained quick-preset model) never fail the run.
    """
    if isinstance(check, dict):
        return check.get("passed") is not False or check.get("meaningful") is False
    return check is not False


def _grid_values(text: str) -> list:
    """``V1,V2,...`` of ``--grid FIELD=V1,V2,...`` as values, each read as ``--set`` reads its value.

    The whole text is read as one JSON list first (so ``[0.1,0.5],[0.2]`` gives two lists); failing that, each
    comma-separated part is JSON (numbers, null) or else a string.  Lists become tuples, as in ``config.json``.
    """
    values = _option_json("--grid", text, f"[{text}]", default=None)
    if values is None:
        values = [_option_json("--grid", text, part, default=part) for part in text.split(",")]
    return [tuple(v) if isinstance(v, list) else v for v in values]


def _option_json(option: str, item: str, text: str, *, default):
    """``text`` read as JSON, or ``default`` where it is not JSON; JSON nested past Python's depth is refused."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return default
    except RecursionError:  # e.g. 100,000 '[': json gives up with a RecursionError, not a JSONDecodeError
        raise ValueError(f"{option} {item[:40]}… nests lists too deeply to read; give a flat value") from None


def _sweep_grid(items: Sequence[str], config_class) -> dict:
    """The ``--grid FIELD=V1,V2,...`` options as a grid dict (field → values), fields checked by name."""
    import dataclasses

    fields = [f.name for f in dataclasses.fields(config_class)]
    grid: dict[str, list] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if key == "seed":
            raise ValueError("--grid seed=... does not apply: --seeds sets the seeds of a sweep")
        if not sep or key not in fields or not text:
            raise ValueError(
                f"--grid must be FIELD=V1,V2,... with FIELD one of {', '.join(sorted(fields))}, got {item!r}"
            )
        if key in grid:
            raise ValueError(f"--grid must name each field once, got {key} twice")
        grid[key] = _grid_values(text)
    return grid


def _interrupted_sweep(out: Path) -> str:
    """One line: what the interrupted sweep kept in ``out`` and how to continue it."""
    try:
        tasks = json.loads((out / "sweep.json").read_text(encoding="utf-8"))["tasks"]
        done, total = sum(task["status"] == "complete" for task in tasks), len(tasks)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):  # none, or not a sweep's
        return f"the sweep directory {out} keeps nothing (the sweep had not started)"
    return (
        f"the sweep directory {out} keeps {done} of {total} tasks complete (each a run directory); continue "
        f"it by running the same command with --out {out}"
    )


def cmd_sweep(args: argparse.Namespace) -> int:
    experiment = _experiment(args)
    from workbench.experiments import run_directory, run_sweep, sweep_table

    preset = args.preset or "quick"
    config, sources = _experiment_config(args, experiment.config.preset(preset))
    if "seed" in sources:
        raise ValueError(f"{sources['seed']} does not apply: --seeds sets the seeds of a sweep")
    overrides = {key: getattr(config, key) for key in sources}
    grid = _sweep_grid(args.grid or (), experiment.config)
    seeds = seed_list(args.seeds)
    selection = _experiment_selection(args, experiment)
    positive(args.threads, "--threads")
    if args.workers is not None:
        positive(args.workers, "--workers")
        if args.scheduler is not None:
            raise ValueError("--workers does not apply with --scheduler, whose cluster has its own workers")
    if args.retries < 0:
        raise ValueError(f"--retries must be an integer >= 0, got {args.retries}")
    created = args.out is None
    out = run_directory(f"sweep-{args.name}", preset) if created else Path(args.out)
    try:
        result = run_sweep(
            args.name,
            preset=preset,
            grid=grid,
            seeds=seeds,
            overrides=overrides,
            selection=selection,
            out=out,
            scheduler=args.scheduler,
            workers=args.workers,
            retries=args.retries,
            progress=not args.no_progress and not (args.json or args.csv),
            threads=args.threads,
        )
    except (ImportError, ValueError, TypeError) as exc:  # refused before any task ran: no empty default folder
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        if isinstance(exc, ImportError):
            raise ValueError(str(exc)) from None
        raise
    except KeyboardInterrupt:
        raise Interrupted(_interrupted_sweep(out)) from None
    if args.json:
        print_json(result, indent=1)
    elif args.csv:  # the rows of the sweep table: a cell's grid values and keys, each measurement's mean, sd and n
        print_csv(result["cells"], columns=("cell", *(f"grid.{field}" for field in result["grid"])))
    else:
        print(sweep_table(result))
        print(f"\nsweep directory: {out}")
    if result["status"] == "failed":
        failed = [task for task in result["tasks"] if task["status"] == "failed"]
        listed = "; ".join(f"{task['id']} ({task['error']})" for task in failed)
        print(
            f"workbench sweep: {len(failed)} of {len(result['tasks'])} tasks failed after {args.retries} retries: "
            f"{listed}; run the same command again to retry them",
            file=sys.stderr,
        )
        return 1
    return 0
