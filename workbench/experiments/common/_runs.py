"""Run directories, their run record (``run.json``, :class:`RunLog`) and progress bars shared by the experiments.

A run directory holds everything one invocation produced:

* ``run.json``, the run record (:class:`RunLog`), written when the run starts and rewritten as it goes: its
  ``status`` (``"running"``, ``"interrupted"``, ``"failed"`` or ``"complete"``), the planned ``conditions`` and
  those ``done``, the ``selection``, the ``config`` and the library versions of every session.  Only a run that
  wrote all its results says ``"complete"``; a process killed without a chance to react (SIGKILL, power loss)
  leaves ``"running"``;
* ``config.json``, the exact settings, written at the start;
* per finished condition ``<condition>.pt`` (its state dict) and ``<condition>.json`` (its row of results):
  enough to skip the condition when the run is resumed;
* when the run ends, ``results.json`` (every number the tables are made from), ``table.md`` and figures.

The default location is ``experiments/runs/<experiment>-<preset>-<UTC timestamp>`` under the current directory,
so repeated runs never overwrite each other.  A directory that already holds files is refused unless the run
is told what to do with it: ``force`` (``workbench experiment --force``) first removes the files a run of the
experiment writes and leaves every other file as it is; ``resume`` (``--resume DIR``) continues the run recorded
there, skipping its finished conditions.  Every file is written atomically (a temporary file beside it, then
:func:`os.replace`: :mod:`workbench.experiments.common._files`), so an interrupt or a failed write never leaves a
truncated file.

Every file read back from a run (on a resume, a forced rerun, a sweep's continuation, a transfer's ``pretrained``
run) goes through the readers of :mod:`workbench.experiments.common._run_files`: a file that was edited or damaged is
refused with one ``RunFileError`` (a ``ValueError``) that names the file, what it must be and what was found, never
a traceback.  ``run.json`` records the SHA-256 of every kept condition's files (``"sha256"``), so a row or a state
dict changed after it was kept is refused too, before it is read.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import re
import sys
import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm  # the terminal bar: no notebook-widget dependency

from workbench.experiments.common._files import atomic_write, jsonable, restore_floats, save_json, save_text
from workbench.experiments.common._run_files import (
    RUN_RECORD,
    RunFileError,
    check_digest,
    file_sha256,
    json_excerpt,
    load_state,
    not_a_file,
    read_json_record,
    run_file_error,
)
from workbench.resources import course_root

__all__ = [
    "RUN_STATUSES",
    "RunLog",
    "committed_results",
    "progress",
    "resumable_run",
    "run_directory",
]

#: The states of a run in its ``run.json``; only ``"complete"`` means every result was written.
RUN_STATUSES = ("running", "interrupted", "failed", "complete")

CONFIG_RECORD = "config.json"
#: The keys every run record holds, with what each holds (a type spec of ``json_record_problem``).
RUN_RECORD_KEYS = {
    "experiment": str,
    "status": str,
    "conditions": [str],
    "done": [str],
    "selection": {str: [str]},
    "config": dict,
}
#: Keys a run record may hold, checked when present: older records lack them.
RUN_RECORD_OPTIONAL = {"sessions": [dict], "sha256": {str: str}}


def committed_results(name: str | None = None) -> Path:
    """The folder of committed experiment results (``experiments/results`` of the course), or one run in it.

    Notebooks read the paper-preset results committed with the repository through this, so that they run from any
    working directory: the folder is the checkout's, or the copy installed with the package
    (:func:`workbench.resources.course_root`), never one relative to the current directory.

    Parameters
    ----------
    name : str, optional
        One experiment's folder in it (e.g. ``"induction-paper"``); it must exist.

    Raises
    ------
    FileNotFoundError
        naming the folder looked for, when the checkout has no committed results (an installed package without
        the repository) or no folder ``name``.

    Examples
    --------
    >>> committed_results().name
    'results'
    >>> (committed_results("induction-paper") / "results.json").is_file()
    True
    """
    root = course_root() / "experiments" / "results"
    if not root.is_dir():
        raise FileNotFoundError(
            f"no committed experiment results at {root}: they ship with the repository and the wheel (reinstall, "
            "clone the repository, or pass the folder of your own run instead)"
        )
    if name is None:
        return root
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be the name of one results folder (e.g. 'induction-paper'), got {name!r}")
    folder = root / name
    if not folder.is_dir():
        known = ", ".join(sorted(p.name for p in root.iterdir() if p.is_dir()))
        raise FileNotFoundError(f"no committed results named {name!r} in {root} (there are: {known})")
    return folder


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
        would otherwise mix with the new ones).  The runners refuse such a directory themselves
        (:meth:`RunLog.open`) unless told to replace the run there (``force``) or to continue it (``resume``).

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
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
        out = Path("experiments") / "runs" / f"{experiment}-{preset}-{stamp}"
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"out must be a directory path, got an existing file {str(path)!r}")
    if require_empty and path.is_dir() and any(path.iterdir()):
        raise ValueError(_occupied_message(path))
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValueError(f"out must be a writable directory, got {str(path)!r} ({exc.strerror or exc})") from None
    return path


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _versions() -> dict[str, str]:
    """The versions that decide a run's numbers: this package, python, numpy and (when loaded) torch."""
    try:
        workbench = importlib.metadata.version("attention-workbench")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        workbench = "unknown"
    versions = {"workbench": workbench, "python": platform.python_version(), "numpy": np.__version__}
    if "torch" in sys.modules:
        versions["torch"] = sys.modules["torch"].__version__
    return versions


def read_run_record(folder: str | Path, option: str | None = None, *, remedy: str | None = None) -> dict:
    """The run record ``run.json`` of the run directory ``folder``, checked key by key (:class:`RunFileError`).

    It must hold :data:`RUN_RECORD_KEYS` with their types and a ``status`` of :data:`RUN_STATUSES`; ``sessions``
    and ``sha256``, when present, must be a list of objects and an object of strings.
    """
    path = Path(folder) / RUN_RECORD
    what = "a run record"
    record = read_json_record(
        path, what=what, keys=RUN_RECORD_KEYS, optional=RUN_RECORD_OPTIONAL, option=option, remedy=remedy
    )
    if record["status"] not in RUN_STATUSES:
        shown, statuses = json_excerpt(record["status"]), ", ".join(RUN_STATUSES)
        found = f"an object whose 'status' is {shown} where one of {statuses} is expected"
        raise run_file_error(path, what, found, option=option, remedy=remedy)
    return record


def resumable_run(path: str | Path, option: str = "out") -> dict:
    """The run record of the unfinished run in ``path``, with ``config`` read from its ``config.json``.

    Parameters
    ----------
    path : str or Path
        A run directory.
    option : str
        The name of the parameter or option that gave ``path``, for the error messages (``"--resume"``).

    Raises
    ------
    ValueError
        ``path`` is not a run directory (missing, a file, no ``run.json``, no ``config.json`` or one that disagrees
        with the record), or its run is complete (nothing to resume).
    RunFileError
        ``run.json`` or ``config.json`` is not what a run writes (not JSON, not UTF-8, a key missing or holding
        another type, an unknown status): a ``ValueError`` naming the file, what it must be and what it holds.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     try:
    ...         resumable_run(tmp, "--resume")
    ...     except ValueError as exc:
    ...         print(str(exc).replace(tmp, "TMP"))
    --resume must be a run directory (one holding run.json), got 'TMP'; runs written before run records existed
    cannot be resumed
    """
    folder = Path(path)
    if not folder.is_dir():
        which = "an existing file" if folder.exists() else "a path that does not exist"
        raise ValueError(f"{option} must be a run directory, got {which}, {str(folder)!r}")
    if not (folder / RUN_RECORD).is_file():
        raise ValueError(
            f"{option} must be a run directory (one holding {RUN_RECORD}), got {str(folder)!r}; runs written "
            "before run records existed cannot be resumed"
        )
    record = read_run_record(folder, option)
    if record["status"] == "complete":
        raise ValueError(
            f"{option} must be an unfinished run, got {str(folder)!r}, which is complete: nothing to resume"
        )
    if not (folder / CONFIG_RECORD).is_file():
        raise ValueError(f"{option} must be a run directory with its {CONFIG_RECORD}, got {str(folder)!r}")
    config = read_json_record(folder / CONFIG_RECORD, what="the run's settings (an object)", option=option)
    if config != record["config"]:
        raise ValueError(
            f"{option} must be a run directory whose {CONFIG_RECORD} is the one its run started with, got "
            f"{str(folder)!r}, where it differs from the config in {RUN_RECORD}"
        )
    return record


def _temporary_of(name: str) -> str | None:
    """The target of an :func:`atomic_write` temporary file name ``.<name>.<pid>.<hex>.tmp``, else ``None``."""
    match = re.fullmatch(r"\.(.+)\.\d+\.[0-9a-f]{8}\.tmp", name)
    return match.group(1) if match else None


def _remove_artefacts(folder: Path, artefacts: set[str]) -> None:
    """Delete the files named in ``artefacts`` (and their leftover temporary files); keep everything else."""
    for entry in folder.iterdir():
        # A symbolic link named like a run file is removed itself (unlink never follows it), dangling or not: a
        # writer would otherwise create or overwrite its target outside the run.
        named = entry.name in artefacts or _temporary_of(entry.name) in artefacts
        if named and (entry.is_symlink() or entry.is_file()):
            entry.unlink()


class RunLog:
    """The record of one run in its directory: ``run.json``, ``config.json`` and the finished conditions.

    Open it with :meth:`open` and run the experiment inside ``with log:``.  Leaving the block normally marks
    the run ``"complete"`` (so write the results inside it); a ``KeyboardInterrupt`` marks it ``"interrupted"``
    and any other exception ``"failed"`` (with the error), and the exception goes on.  Each finished condition is
    kept with :meth:`keep` (its state dict, then its row, then ``run.json``: a condition counts as done only once
    all three are on disk); :meth:`finished` gives a resumed run the row of a condition to skip.  A log opened
    without a directory (``out=None``) keeps nothing and finds nothing.

    Attributes
    ----------
    path : Path or None
        The run directory.
    record : dict
        The contents of ``run.json``.

    Examples
    --------
    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plan = dict(experiment="toy", config={"steps": 2}, conditions=["a", "b"], selection={}, artefacts=set())
    ...     try:
    ...         with RunLog.open(Path(tmp) / "run", **plan) as log:
    ...             log.keep("a", {"loss": 0.5})
    ...             raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         pass
    ...     first = resumable_run(Path(tmp) / "run")
    ...     with RunLog.open(Path(tmp) / "run", resume=True, **plan) as log:
    ...         rows = [log.finished("a", state=False), log.finished("b", state=False)]
    ...     status = json.loads((Path(tmp) / "run" / "run.json").read_text())["status"]
    >>> first["status"], first["done"], rows, status
    ('interrupted', ['a'], [{'loss': 0.5}, None], 'complete')
    """

    def __init__(self, path: Path | None, record: dict):
        self.path = path
        self.record = record

    @classmethod
    def open(
        cls,
        out: str | Path | None,
        *,
        experiment: str,
        config: Any,
        conditions: Iterable[str],
        selection: dict[str, Iterable[str]],
        artefacts: Iterable[str],
        force: bool = False,
        resume: bool = False,
    ) -> RunLog:
        """Start (or, with ``resume``, continue) the run of ``experiment`` in the directory ``out``.

        Parameters
        ----------
        out : str, Path or None
            The run directory; ``None`` gives a log that keeps nothing.
        experiment : str
            The experiment's name (``"swiss-sit"``).
        config : dataclass or dict
            The run's settings, written to ``config.json``.
        conditions : iterable of str
            The conditions the run will go through, in order (each names its ``.pt``/``.json`` files).
        selection : dict
            The run's selection (``{"operators": (...), "orders": (...)}``), recorded and compared on resume.
        artefacts : iterable of str
            Every file name a run of this experiment can write; ``force`` removes these, and only these.
        force : bool
            Reuse a non-empty ``out``: remove its ``artefacts`` first (a symbolic link named like one is removed
            itself, never followed), leave other files as they are.  A directory whose ``run.json`` records another
            experiment is refused (its files are not in ``artefacts``), and so is one without a ``run.json`` that
            holds anything a run does not write (a model's folder is not a run to replace).
        resume : bool
            Continue the unfinished run in ``out`` (:func:`resumable_run`); its experiment, ``config`` and
            ``selection`` must be the ones given.

        Raises
        ------
        ValueError
            ``out`` holds files and neither ``force`` nor ``resume`` is given; with ``resume``, ``out`` is not an
            unfinished run of the same experiment, settings and selection; ``out`` cannot be created or written.

        Warns
        -----
        RuntimeWarning
            A resumed run whose recorded versions (workbench, python, numpy, torch) differ from the running ones:
            the conditions run now may not match those of an uninterrupted run.
        """
        config_json = jsonable(config)
        selection_json = jsonable({k: tuple(v) for k, v in selection.items()})
        conditions = list(conditions)
        if out is None and resume:
            raise ValueError("out must be the run directory to resume, got None")
        if out is None:
            return cls(None, {"experiment": experiment, "status": "running", "conditions": conditions, "done": []})
        if force and resume:
            raise ValueError("force and resume exclude each other: force replaces the run in out, resume continues it")
        folder = Path(out)
        session = {"started": _now(), "versions": _versions()}
        if resume:
            record = resumable_run(folder)
            _check_same_run(record, folder, experiment, config_json, selection_json)
            folder = run_directory(experiment, "", folder)  # proves it still writable
            before = record["sessions"][-1].get("versions") if record.get("sessions") else None
            if before is not None and before != session["versions"]:
                warnings.warn(
                    f"resuming the run in {str(folder)!r} started with {before}, now {session['versions']}: the "
                    "conditions run now may differ from those of an uninterrupted run",
                    RuntimeWarning,
                    stacklevel=2,
                )
            record.update(status="running", error=None, updated=session["started"])
            record.setdefault("sessions", []).append(session)
        else:
            if folder.is_dir() and any(folder.iterdir()):
                if not force:
                    raise ValueError(_occupied_message(folder))
                known = set(artefacts) | {RUN_RECORD, CONFIG_RECORD}
                previous = _recorded(folder, "experiment")
                if previous not in (None, experiment):
                    raise ValueError(
                        f"out must hold a run of {experiment} to replace it with force, got {str(folder)!r}, a run "
                        f"of {previous}, whose files a {experiment} run does not know; choose another directory"
                    )
                if previous is None:
                    # No run record: force may only clear a start that died before writing it (nothing but this
                    # experiment's own files); a folder of other things (a model's config.json) is not a run.
                    foreign = sorted(
                        entry.name
                        for entry in folder.iterdir()
                        if entry.name not in known and _temporary_of(entry.name) not in known
                    )
                    if foreign:
                        shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
                        raise ValueError(
                            f"out must hold a run of {experiment} (its {RUN_RECORD}) to replace it with force, got "
                            f"{str(folder)!r}, which holds no run record and files no run writes ({shown}); choose "
                            "another directory"
                        )
                _remove_artefacts(folder, known)
            folder = run_directory(experiment, "", folder)
            record = {
                "experiment": experiment,
                "status": "running",
                "conditions": conditions,
                "done": [],
                "selection": selection_json,
                "config": config_json,
                "error": None,
                "started": session["started"],
                "updated": session["started"],
                "sessions": [session],
                "sha256": {},
            }
            save_json(folder / CONFIG_RECORD, config_json)
        log = cls(folder, record)
        log._save()
        return log

    def finished(self, condition: str, *, state: bool = True) -> dict | None:
        """The row kept for ``condition`` by an earlier session of this run, or ``None`` (run it).

        With ``state`` (conditions kept with a state dict) its ``.pt`` must be on disk too.  A condition listed
        as done whose files are gone is run again (the conditions are seeded one by one, so running it again
        gives the same row).

        Raises
        ------
        RunFileError
            A file of the condition is a directory, its row is not a JSON object, or a file's SHA-256 differs
            from the one ``run.json`` recorded when it was kept (it was edited or damaged since).
        """
        if self.path is None or condition not in self.record["done"]:
            return None
        row_file = self.path / f"{condition}.json"
        files = {row_file: f"the row this run kept for {condition}"}
        if state:
            files[self.state_path(condition)] = f"the state dict this run kept for {condition}"
        remedy = f"delete it to run {condition} again, or replace the run with --force (force=True)"
        for file, what in files.items():
            if file.exists() and not file.is_file():
                raise run_file_error(file, what, not_a_file(file), remedy=remedy)
        if not all(file.is_file() for file in files):
            return None
        row = read_json_record(row_file, what=f"{files[row_file]} (an object)", remedy=remedy)
        for file, what in files.items():
            check_digest(file, self.record, what=what, remedy=remedy)
        return restore_floats(row)

    def load_state(self, condition: str, model, *, map_location=None) -> dict:
        """Load the state dict kept for ``condition`` into ``model`` (:func:`load_state`: refused if tampered)."""
        return load_state(
            self.state_path(condition),
            model,
            what=f"the state dict this run kept for {condition}",
            map_location=map_location,
        )

    def state_path(self, condition: str) -> Path:
        """Where the state dict of ``condition`` is kept (``<condition>.pt``)."""
        if self.path is None:
            raise ValueError("state_path needs a run directory, got a log opened with out=None")
        return self.path / f"{condition}.pt"

    def keep(self, condition: str, row: dict, state_dict: dict | None = None) -> None:
        """Keep a finished condition: its ``state_dict`` (``torch.save``), its ``row`` (JSON), then mark it done.

        ``run.json`` records the SHA-256 of both files, which :meth:`finished` checks before reading them back.
        """
        if self.path is None:
            return
        digests = self.record.setdefault("sha256", {})
        if state_dict is not None:
            import torch  # only the experiments that have state dicts need torch

            with atomic_write(self.state_path(condition)) as temporary:
                torch.save(state_dict, temporary)
                digest = file_sha256(temporary)
            digests[self.state_path(condition).name] = digest
        row_file = save_json(self.path / f"{condition}.json", row)
        digests[row_file.name] = file_sha256(row_file)
        if condition not in self.record["done"]:
            self.record["done"].append(condition)
        self._save()

    def write_results(self, result: dict, table: str) -> None:
        """Write a finished run's ``results.json`` (``result``) and ``table.md`` (``table``, one final newline).

        ``result`` then gains ``"out"``, the run directory (not in the file: the record does not name the folder it
        was moved to).  Without a run directory nothing is written.
        """
        if self.path is None:
            return
        save_json(self.path / "results.json", result)
        save_text(self.path / "table.md", table.rstrip("\n") + "\n")
        result["out"] = str(self.path)

    def _save(self) -> None:
        if self.path is not None:
            self.record["updated"] = _now()
            save_json(self.path / RUN_RECORD, self.record)

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if kind is None:
            self.record["status"] = "complete"
        elif issubclass(kind, Exception):
            self.record.update(status="failed", error=f"{kind.__name__}: {error}")
        else:  # KeyboardInterrupt, SystemExit
            self.record["status"] = "interrupted"
        try:
            self._save()
        except OSError:
            if kind is None:
                raise
            # the run's own exception says more than a failure to record it
        return False


def _check_same_run(record: dict, folder: Path, experiment: str, config: dict, selection: dict) -> None:
    """Refuse to resume ``record`` with a different experiment, config or selection (the rows would not match)."""
    if record["experiment"] != experiment:
        raise ValueError(
            f"out must hold a run of {experiment} to resume it, got {str(folder)!r}, a run of {record['experiment']}"
        )
    if record["config"] != config:
        fields = [k for k in config if record["config"].get(k) != config[k]]
        fields += [k for k in record["config"] if k not in config]
        changes = ", ".join(f"{k}={record['config'].get(k)!r} recorded, {config.get(k)!r} given" for k in fields)
        raise ValueError(f"config must be the one recorded in {str(folder / CONFIG_RECORD)!r} to resume it: {changes}")
    for axis in sorted(set(selection) | set(record["selection"])):
        if record["selection"].get(axis) != selection.get(axis):
            raise ValueError(
                f"{axis} must be the selection recorded in {str(folder / RUN_RECORD)!r} to resume it, "
                f"{record['selection'].get(axis)}, got {selection.get(axis)}"
            )


def _recorded(folder: Path, key: str) -> str | None:
    """The string ``key`` of the ``run.json`` in ``folder``, or ``None`` when there is none (or it is unreadable)."""
    try:
        value = read_json_record(folder / RUN_RECORD, what="a run record").get(key)
    except RunFileError:
        return None
    return value if isinstance(value, str) else None


def _occupied_message(folder: Path) -> str:
    """Why a non-empty ``out`` is refused, and the three ways on."""
    what = "a previous run's results would mix with the new ones"
    status = _recorded(folder, "status")
    if status in RUN_STATUSES:
        what = f"{'an' if status[0] in 'aeiou' else 'a'} {status} run"
    return (
        f"out must be a new or empty directory, got {str(folder)!r}, which already holds files ({what}); choose "
        "another directory, pass --force to replace that run (force=True: the files a run writes are removed, "
        "other files are kept) or --resume DIR to continue it (resume=True)"
    )


def progress(total: int, description: str, enabled: bool = True):
    """A tqdm progress bar over ``total`` steps (disabled: a no-op bar with the same interface)."""
    return tqdm(total=total, desc=description, disable=not enabled, leave=False, dynamic_ncols=True)
