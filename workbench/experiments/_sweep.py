r"""Sweeps: an experiment over a grid of settings × seeds, each (cell, seed) one task on Dask distributed.

A sweep runs one registered experiment (:data:`workbench.experiments.EXPERIMENTS`) on every cell of a grid of
config values (the cartesian product of ``grid``) and every seed.  Each task is a normal run directory
``OUT/<cell>/seed-<s>/`` (:class:`workbench.experiments.RunLog`: ``run.json``, ``config.json``, ``results.json``,
the table and figures), written by the experiment's own runner; the sweep reads each run's rows (the experiment's
``rows``: string values are a condition's keys, numbers its measurements) and gathers every measurement
:math:`m` over the seeds, per grid cell and condition, into

.. math::

    \bar m = \frac{1}{n} \sum_{s} m_s, \qquad
    \mathrm{sd} = \Big(\frac{1}{n - 1} \sum_{s} (m_s - \bar m)^2\Big)^{1/2},

over the :math:`n` seeds whose run defines :math:`m` (a ``None`` measurement is left out; sd is ``None`` for
:math:`n = 1`).

**Where the tasks run.**  By default on a :class:`distributed.LocalCluster` of ``workers`` single-threaded worker
processes (default one per CPU), each under a nanny that restarts it if it dies; with ``scheduler=
"tcp://HOST:PORT"`` on an existing Dask cluster (``dask scheduler`` on one host, ``dask worker`` on others), whose
workers must have the workbench installed and see ``OUT`` at the same path (a shared file system).  A task sets
its torch and BLAS threads to ``threads``.

**Resumable.**  ``OUT/sweep.json`` records the sweep's settings and, as each task ends, its status and rows
(atomic writes).  Running the same sweep on the same ``OUT`` again keeps the tasks whose run is complete (their
rows are read back from ``results.json``), continues unfinished ones from their finished conditions
(``resume=True``) and runs the rest; a sweep with other settings is refused there.  A worker killed mid-task
(SIGKILL, out of memory, a lost host) leaves its run directory marked ``"running"``: the scheduler gives the task
to another worker (up to ``distributed.scheduler.allowed-failures`` times, default 3), which resumes it there.

**Failures.**  A task that raises is retried ``retries`` times; if it still fails it is recorded as failed (with
its error) in ``sweep.json`` and the result, the other tasks run to the end, and the sweep's ``status`` is
``"failed"``.  Running the sweep again retries the failed tasks.

References
----------
M. Rocklin (2015), "Dask: parallel computation with blocked algorithms and task scheduling", Proc. 14th Python in
Science Conference, 130–136 (the distributed scheduler); the experiments' own references for what each run
measures.
"""

from __future__ import annotations

import inspect
import math
import os
import re
import secrets
import socket
import time
from collections.abc import Iterable
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from workbench.experiments._sweep_plan import plan_sweep, value_text
from workbench.experiments.common import (
    RUN_RECORD,
    RunFileError,
    jsonable,
    read_json_record,
    restore_floats,
    run_directory,
    save_json,
    save_text,
    table_rows,
)
from workbench.experiments.common import progress as _progress_bar
from workbench.validation import check_integer

__all__ = ["run_sweep", "sweep_table"]

#: The sweep's record in its directory, and the Markdown table written beside it.
SWEEP_RECORD = "sweep.json"
SWEEP_TABLE = "table.md"
#: The message when Dask distributed is not installed (it is the ``sweep`` extra).
MISSING_DISTRIBUTED = "workbench sweep needs dask distributed: pip install 'dask[distributed]'"
#: The settings that define a sweep: a sweep directory continues only a sweep with the same ones.
SPEC_KEYS = ("experiment", "preset", "grid", "seeds", "overrides", "selection")

_SCHEDULER_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})")
#: What to do about a task folder whose files were edited or damaged.
_TASK_REMEDY = "remove the task's folder to run the task again"


# ---- the cluster --------------------------------------------------------------------------------------------


def _check_scheduler(scheduler: Any) -> None:
    if scheduler is None:
        return
    if not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address string tcp://HOST:PORT, got {type(scheduler).__name__}")
    match = _SCHEDULER_ADDRESS.fullmatch(scheduler)
    if match is None or not 1 <= int(match.group(3)) <= 65535:
        raise ValueError(f"scheduler must be a Dask scheduler address tcp://HOST:PORT, got {scheduler!r}")


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(MISSING_DISTRIBUTED) from exc
    return distributed


# ---- a task: one run directory ------------------------------------------------------------------------------


def _task_state(folder: Path) -> str:
    """What the run directory of a task holds.

    ``"new"`` (nothing: also a path that is a file, which the runner then refuses), ``"complete"``, ``"unfinished"``
    (a run record whose status is running, interrupted or failed: resume it) or ``"orphan"`` (files but no run
    record: a run killed between writing ``config.json`` and ``run.json``, which is started again).
    """
    if folder.is_symlink():  # the runner would write (with force, replace files) wherever the link points
        raise ValueError(
            f"a sweep's task folder must be a folder of its own inside the sweep, got {str(folder)!r}, a symbolic "
            "link; remove the link and run the sweep again"
        )
    if not folder.is_dir() or not any(folder.iterdir()):
        return "new"
    record = folder / RUN_RECORD
    if not record.exists():
        return "orphan"
    # A record that is no run's (not JSON, no status) is refused here, in one line naming it, before any task runs.
    status = read_json_record(record, what="a run record", keys={"status": str}, remedy=_TASK_REMEDY)["status"]
    return "complete" if status == "complete" else "unfinished"


def _runner_default(parameters, axis: str, values: tuple[str, ...]) -> tuple[str, ...]:
    """The names a run selects on ``axis`` when not told (a str default is one name); the axis's values if none."""
    default = parameters[axis].default if axis in parameters else inspect.Parameter.empty
    if default is inspect.Parameter.empty or default is None:
        return values
    return (default,) if isinstance(default, str) else tuple(default)


def _complete_rows(experiment, name: str, folder: Path, config: dict, selection: dict) -> list[dict]:
    """The rows of the complete run in ``folder``, after checking it is the run the task asks for.

    Its ``run.json`` and ``results.json`` are refused (:class:`RunFileError`, naming the file) when they are not a
    run record and results the experiment's ``rows`` can read: edited or damaged since the run wrote them.
    """
    keys = {"experiment": str, "config": dict, "selection": {str: [str]}}
    record = read_json_record(folder / RUN_RECORD, what="a run record", keys=keys, remedy=_TASK_REMEDY)
    # An axis the sweep leaves open is run with the runner's own default, which need not be every value the axis
    # accepts (log-lens trains attn-only blocks unless asked for mlp ones): compare with what a new run records.
    defaults = inspect.signature(experiment.run).parameters
    chosen = {
        axis: list(selection[axis] if axis in selection else _runner_default(defaults, axis, values))
        for axis, values in experiment.axes.items()
    }
    recorded = record["selection"]
    if (
        record["experiment"] != name
        or record["config"] != config
        or any(recorded[axis] != chosen.get(axis) for axis in recorded)
    ):
        raise ValueError(
            f"out must hold this sweep's runs, got {str(folder)!r}, a complete run of {record['experiment']} "
            "with other settings or selection; choose another out"
        )
    results = folder / "results.json"
    what = f"the results of a complete {name} run"
    result = restore_floats(read_json_record(results, what=what, remedy=_TASK_REMEDY))
    return table_rows(results, result, experiment.rows, what=what, remedy=_TASK_REMEDY)


def _run_task(name: str, config: dict, selection: dict, folder: str, threads: int) -> dict:
    """Run (or continue, or read back) one task's run directory on a worker; its rows and wall seconds.

    Module-level so that a worker unpickles it by reference (``workbench.experiments._sweep._run_task``).
    """
    start = time.perf_counter()
    import torch
    from threadpoolctl import threadpool_limits

    from workbench.experiments._registry import EXPERIMENTS

    torch.set_num_threads(threads)
    experiment = EXPERIMENTS[name]
    path = Path(folder)
    state = _task_state(path)
    if state == "complete":  # finished before its worker died or reported: read it back
        rows = _complete_rows(experiment, name, path, config, selection)
    else:
        with threadpool_limits(threads):
            result = experiment.run(
                experiment.config.from_json(config),
                out=path,
                progress=False,
                force=state == "orphan",  # no run record: nothing to continue, start afresh
                resume=state == "unfinished",
                **selection,
            )
        rows = experiment.rows(result)
    source = {"complete": "kept", "unfinished": "resumed"}.get(state, "run")
    return {
        "rows": rows,
        "seconds": time.perf_counter() - start,
        "source": source,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


# ---- gathering ----------------------------------------------------------------------------------------------


def _measurement(name: str, field: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, Real):  # bools too: a fraction of seeds
        return float(value)
    raise TypeError(
        f"rows of {name} must hold strings (keys) and numbers or None (measurements), got {field}={value!r}"
    )


def _aggregate(name: str, tasks: list[dict]) -> list[dict]:
    """Mean, sd (ddof = 1) and n over seeds of every measurement, per grid cell and row keys, in plan order."""
    groups: dict[tuple, dict] = {}
    for task in tasks:
        if task["status"] != "complete":
            continue
        for row in task["rows"]:
            keys = {k: v for k, v in row.items() if isinstance(v, str)}
            group = groups.setdefault(
                (task["cell"], tuple(keys.items())),
                {"cell": task["cell"], "grid": task["grid"], "keys": keys, "seeds": [], "values": {}},
            )
            group["seeds"].append(task["seed"])
            for field, value in row.items():
                if not isinstance(value, str):
                    group["values"].setdefault(field, []).append(_measurement(name, field, value))
    cells = []
    for group in groups.values():
        measurements = {}
        for field, values in group.pop("values").items():
            present = np.array([v for v in values if v is not None], dtype=float)
            n = int(present.size)
            with np.errstate(invalid="ignore"):  # a non-finite seed gives a non-finite mean or sd, as it should
                mean = float(present.mean()) if n else None
                sd = float(present.std(ddof=1)) if n >= 2 else None
            measurements[field] = {"mean": mean, "sd": sd, "n": n}
        cells.append({**group, "measurements": measurements})
    return cells


# ---- the sweep ----------------------------------------------------------------------------------------------


def _sweep_directory(out, spec: dict) -> tuple[Path, dict | None]:
    """Create (or reopen) the sweep directory; the previous ``sweep.json`` when it continues a sweep."""
    folder = run_directory(f"sweep-{spec['experiment']}", spec["preset"], out).resolve()  # workers need it absolute
    record_path = folder / SWEEP_RECORD
    if not record_path.is_file():
        if any(folder.iterdir()):
            raise ValueError(
                f"out must be a new or empty directory, or a sweep's directory (one holding {SWEEP_RECORD}), got "
                f"{str(folder)!r}, which holds other files"
            )
        return folder, None
    previous = read_json_record(
        record_path,
        what="a sweep record (an object with a list of task objects)",
        keys={"tasks": [dict]},
        remedy="choose another out for a new sweep",
    )
    given = jsonable(spec)
    for key in SPEC_KEYS:
        if previous.get(key) != given[key]:
            recorded = previous.get(key)
            raise ValueError(
                f"{key} must be the one recorded in {str(record_path)!r} to continue that sweep, {recorded!r}, got "
                f"{given[key]!r}; choose another out for a different sweep"
            )
    return folder, previous


def _connect(distributed, scheduler: str | None, workers: int | None, threads: int):
    """A client of the existing cluster at ``scheduler``, or of a new LocalCluster (returned too, to close it)."""
    if scheduler is not None:
        try:
            return distributed.Client(scheduler), None
        except (OSError, TimeoutError) as exc:
            raise ValueError(
                f"scheduler must be the address of a running Dask scheduler, got {scheduler!r}, which did not "
                f"answer ({exc})"
            ) from None
    variables = {key: str(threads) for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    cluster = distributed.LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env=variables,
    )
    try:
        return distributed.Client(cluster), cluster
    except BaseException:
        cluster.close()
        raise


def run_sweep(
    name: str,
    *,
    preset: str = "quick",
    grid: dict[str, list] | None = None,
    seeds: Iterable[int] = (0,),
    overrides: dict[str, Any] | None = None,
    selection: dict[str, Iterable[str]] | None = None,
    out: str | Path | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    retries: int = 2,
    progress: bool = True,
    threads: int = 1,
) -> dict:
    r"""Run experiment ``name`` on every cell of ``grid`` × every seed, as tasks on Dask, and gather the seeds.

    The tasks are the cartesian product of the grid's cells and ``seeds``; task (cell, :math:`s`) runs
    ``EXPERIMENTS[name].run`` with the preset's config, ``overrides``, the cell's values and ``seed = s`` into its
    own run directory ``out/<cell>/seed-<s>/`` (``<cell>`` is ``field=value,...`` by field name, ``base`` without a
    grid).  Each measurement :math:`m` of the runs' rows is gathered per cell and row keys over the seeds into
    :math:`\bar m = \frac1n\sum_s m_s` and :math:`\mathrm{sd} = (\frac{1}{n-1}\sum_s (m_s-\bar m)^2)^{1/2}`
    (``None`` when :math:`n = 1`), with :math:`n` the seeds whose run defines :math:`m`.  See the module
    documentation for where tasks run, resuming and failures.

    Parameters
    ----------
    name : str
        A registered experiment (:data:`workbench.experiments.EXPERIMENTS`), e.g. ``"induction"``.
    preset : str
        The preset the tasks' configs start from (``"quick"`` or ``"paper"``).
    grid : dict, optional
        Config field → list of values; every combination is a cell.  Values are the fields' own types
        (``workbench sweep --grid`` converts its text as ``--set`` does); lists become tuples, as in
        ``config.json``.  ``seed`` is not allowed (``seeds`` sets it).
    seeds : sequence of int
        Distinct integers >= 0, the config's ``seed`` of each task.
    overrides : dict, optional
        Config field → value, the same for every task (not a field the grid varies, not ``seed``).
    selection : dict, optional
        The experiment's selection axes (``{"operators": ("ATTN", "DMTN")}``), passed to every run.
    out : str or Path, optional
        The sweep directory (default ``experiments/runs/sweep-<name>-<preset>-<UTC timestamp>``): new, empty, or
        one holding the ``sweep.json`` of this same sweep, which is then continued.  With ``scheduler``, every
        worker must see it at the same (absolute) path.
    scheduler : str, optional
        Address ``tcp://HOST:PORT`` of a running Dask scheduler to send the tasks to; default: a new
        :class:`distributed.LocalCluster` (closed at the end).
    workers : int, optional
        Worker processes of the LocalCluster (default :func:`os.cpu_count`), one thread each; not with
        ``scheduler`` (that cluster has its own workers).
    retries : int
        Times a task that raises is run again before it counts as failed (a worker that dies is not a retry:
        the scheduler reschedules its task, up to ``distributed.scheduler.allowed-failures`` times).
    progress : bool
        Show a progress bar over the tasks.
    threads : int
        torch intra-op and BLAS/OpenMP threads of each task (default 1: these models are small).

    Returns
    -------
    dict
        JSON-able, as written to ``out/sweep.json``: the settings (``experiment, preset, grid, seeds,
        overrides, selection``), ``status`` (``"complete"``, or ``"failed"`` if some task failed after its
        retries), ``failed`` (those tasks' ids), ``out``, ``tasks`` (per task ``id`` ``"<cell>/seed-<s>"``,
        ``cell``, ``grid``, ``seed``, ``config``, ``status`` complete/failed, ``source`` — ``"run"``,
        ``"resumed"`` from an unfinished run directory, or ``"kept"``, complete before this call — ``rows``,
        wall ``seconds``, ``error`` and the ``worker`` ``host:pid`` that ran it) and ``cells`` (per cell and
        row keys: ``cell``, ``grid``, ``keys``, ``seeds`` and ``measurements``, each ``{"mean", "sd", "n"}``).
        ``out/table.md`` holds :func:`sweep_table` of it.  A failed task does not raise: check ``status``.

    Raises
    ------
    ValueError
        An unknown experiment, preset, config field or selection axis; bad seeds, grid values or config values
        (the config's own checks); ``workers`` < 1, ``retries`` < 0, ``threads`` < 1; a malformed or silent
        ``scheduler``; ``workers`` with ``scheduler``; an ``out`` that holds other files or another sweep; a
        ``sweep.json``, or a task's ``run.json`` or complete ``results.json``, that was edited or damaged (refused
        before any task runs, naming the file).
    TypeError
        Arguments of the wrong type.
    ImportError
        Dask distributed is not installed (:data:`MISSING_DISTRIBUTED`).
    KeyboardInterrupt
        Passed on after ``sweep.json`` records the sweep as ``"interrupted"``; run it again to continue.

    References
    ----------
    M. Rocklin (2015), Proc. SciPy, 130–136 (Dask's scheduler); the experiment's own references.
    """
    from workbench.experiments._registry import EXPERIMENTS  # torch: only when a sweep runs

    spec, tasks = plan_sweep(EXPERIMENTS, name, preset, grid, seeds, overrides, selection)
    experiment = EXPERIMENTS[name]
    _check_scheduler(scheduler)
    if workers is not None:
        workers = check_integer("workers", workers, 1)
        if scheduler is not None:
            raise ValueError(
                f"workers must be None with a scheduler (its cluster has its own workers), got workers={workers}"
            )
    retries = check_integer("retries", retries, 0)
    threads = check_integer("threads", threads, 1)
    distributed = _import_distributed()
    folder, previous = _sweep_directory(out, spec)

    seconds_before = {
        t["id"]: t.get("seconds")
        for t in (previous or {}).get("tasks", [])
        if isinstance(t.get("id"), str) and isinstance(t.get("seconds"), Real)
    }
    record = {**jsonable(spec), "status": "running", "failed": [], "out": str(folder), "tasks": tasks, "cells": []}
    for task in tasks:
        task.update(status="pending", source=None, rows=None, seconds=None, error=None, worker=None)
        path = folder / task["id"]
        if _task_state(path) == "complete":
            try:
                rows = _complete_rows(experiment, name, path, task["config"], spec["selection"])
                task.update(status="complete", source="kept", rows=rows, seconds=seconds_before.get(task["id"]))
            except RunFileError:
                raise  # a task's files edited or damaged: refused before any task runs (a retry would not help)
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                task.update(status="failed", error=f"{type(exc).__name__}: {exc}")

    def save() -> None:
        record["failed"] = [t["id"] for t in tasks if t["status"] == "failed"]
        record["cells"] = _aggregate(name, tasks)
        save_json(folder / SWEEP_RECORD, record)

    save()
    pending = [t for t in tasks if t["status"] == "pending"]
    with _progress_bar(len(tasks), f"sweep {name}", progress) as bar:
        bar.update(len(tasks) - len(pending))
        if pending:
            client, cluster = _connect(distributed, scheduler, workers, threads)
            token = secrets.token_hex(4)
            try:
                futures = {
                    client.submit(
                        _run_task,
                        name,
                        task["config"],
                        spec["selection"],
                        str(folder / task["id"]),
                        threads,
                        key=f"sweep-{name}-{task['cell']}-seed-{task['seed']}-{token}",
                        pure=False,
                        retries=retries,
                    ): task
                    for task in pending
                }
                for future in distributed.as_completed(futures):
                    task = futures[future]
                    if future.status == "finished":
                        outcome = future.result()
                        task.update(
                            status="complete",
                            source=outcome["source"],
                            rows=restore_floats(jsonable(outcome["rows"])),
                            seconds=outcome["seconds"],
                            worker=outcome["worker"],
                        )
                    elif future.status == "error":
                        error = future.exception()
                        task.update(status="failed", error=f"{type(error).__name__}: {error}")
                    else:  # cancelled or lost (a scheduler restarted under us)
                        task.update(status="failed", error=f"the task was {future.status}")
                    save()
                    bar.update(1)
            except KeyboardInterrupt:
                record["status"] = "interrupted"
                save()
                raise
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    record["status"] = "failed" if any(t["status"] == "failed" for t in tasks) else "complete"
    save()
    save_text(folder / SWEEP_TABLE, sweep_table(record) + "\n")
    return restore_floats(jsonable(record))


# ---- the table ----------------------------------------------------------------------------------------------


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def _cell_text(text: str) -> str:
    return text.replace("|", "\\|")


def sweep_table(result: dict) -> str:
    r"""Markdown table of a sweep: one row per grid cell and row keys, each measurement as ``mean ± sd (n)``.

    The columns are the grid's fields, the rows' keys (e.g. operator) and the measurements, in the order they
    first appear; ``—`` marks an sd that one seed cannot give, or a measurement no seed defined.

    Parameters
    ----------
    result : dict
        The dict :func:`run_sweep` returns (or its ``sweep.json``).

    Returns
    -------
    str

    References
    ----------
    The estimators are the sample mean and the sample standard deviation with Bessel's correction (ddof = 1).

    Examples
    --------
    A hand-made result with two seeds in one cell: the mean and sd of 0.5 and 0.7 are 0.6 and √0.02 = 0.1414.

    >>> result = {"grid": {"d_model": [8, 16]}, "cells": [
    ...     {"grid": {"d_model": 8}, "keys": {"operator": "DMAP"},
    ...      "measurements": {"loss": {"mean": 0.6, "sd": 0.1414, "n": 2}, "step": {"mean": None, "sd": None, "n": 0}}},
    ...     {"grid": {"d_model": 16}, "keys": {"operator": "DMAP"},
    ...      "measurements": {"loss": {"mean": 0.4, "sd": None, "n": 1}, "step": {"mean": 25.0, "sd": None, "n": 1}}}]}
    >>> print(sweep_table(result))
    | d_model | operator | loss | step |
    |---|---|---|---|
    | 8 | DMAP | 0.6 ± 0.1414 (2) | — |
    | 16 | DMAP | 0.4 ± — (1) | 25 ± — (1) |
    """
    if not isinstance(result, dict) or not isinstance(result.get("cells"), list):
        raise TypeError("result must be the dict returned by run_sweep (with a 'cells' list)")
    fields = list(result.get("grid") or {})
    keys = list(dict.fromkeys(k for cell in result["cells"] for k in cell["keys"]))
    measured = list(dict.fromkeys(m for cell in result["cells"] for m in cell["measurements"]))
    header = [*fields, *keys, *measured]
    lines = ["| " + " | ".join(_cell_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    for cell in result["cells"]:
        entries = [value_text(cell["grid"][f]) if f in cell["grid"] else "—" for f in fields]
        entries += [cell["keys"].get(k, "—") for k in keys]
        for m in measured:
            stats = cell["measurements"].get(m)
            if stats is None or not stats["n"]:
                entries.append("—")
            else:
                mean, sd = restore_floats(stats["mean"]), restore_floats(stats["sd"])
                entries.append(f"{_number(mean)} ± {_number(sd)} ({stats['n']})")
        lines.append("| " + " | ".join(_cell_text(e) for e in entries) + " |")
    return "\n".join(lines)
