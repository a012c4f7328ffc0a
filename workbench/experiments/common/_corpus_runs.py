"""A measurement over a corpus, one window at a time: streamed to JSON lines, resumable, summarised per layer.

:func:`run_corpus` applies a ``measure`` (a function of one window, e.g. the attention diagnostics of a model)
to every window of a corpus and keeps, in its run directory:

* ``run.json``, the run record of :class:`~workbench.experiments.RunLog` (status ``running``, ``interrupted``,
  ``failed`` or ``complete``, the error of a failed run, the ``config``, the library versions of every session)
  with ``counts``: the windows planned (``null`` when the windows cannot be counted), those recorded, those
  measured in this session and those kept from earlier ones;
* ``config.json``, the settings the run started with (model, corpus, ``max_tokens``, ``limit``, …: what the
  caller passes as ``config``);
* ``records.jsonl``, one JSON object per window, written and flushed as soon as the window is measured: the
  window's ``index``, ``document``, ``start`` (its first token in the document), ``n_tokens`` and ``text``,
  then what ``measure`` returned.  Strict JSON: a non-finite number (NaN, ±inf) is written ``null``, so every
  line reads with any JSON parser;
* at the end, ``layers.json`` and ``layers.md``: per layer, the mean ± sd over the windows of every numeric
  field of the records' ``"layers"`` lists (:func:`aggregate_layers`, :func:`layers_table`).

A run killed at any point resumes (``resume=True``) where it stopped: the complete lines of ``records.jsonl``
are kept (a last line cut short by the kill is dropped), their windows are skipped (and checked to be the same
windows: same document, same first token, same length) and the rest are appended.  Only a run with the same
``config`` is resumed; a different one is refused with the fields that differ.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Sized
from pathlib import Path
from typing import Any

import numpy as np

from workbench.experiments.common._files import jsonable, save_json, save_text
from workbench.experiments.common._run_files import RunFileError, json_record_problem
from workbench.experiments.common._runs import RunLog
from workbench.experiments.common._runs import progress as progress_bar
from workbench.validation import check_integer

__all__ = ["CorpusRun", "aggregate_layers", "layers_table", "read_records", "run_corpus", "strict_json"]

RECORDS = "records.jsonl"
LAYERS_JSON = "layers.json"
LAYERS_MD = "layers.md"
_ARTEFACTS = (RECORDS, LAYERS_JSON, LAYERS_MD)
# The fields every record starts with, taken from its window.
_WINDOW_FIELDS = ("index", "document", "start", "n_tokens", "text")
# The fields a resumed run compares with its windows, and their types.
_IDENTITY = {"index": int, "document": str, "start": int, "n_tokens": int}


@dataclasses.dataclass(frozen=True)
class CorpusRun:
    """What :func:`run_corpus` did.

    Attributes
    ----------
    path : Path
        The run directory.
    n_records : int
        Windows recorded in ``records.jsonl`` (all sessions).
    n_measured : int
        Windows measured in this session (the others were kept from an interrupted session).
    layers : list of dict
        The per-layer summary rows (:func:`aggregate_layers`), also in ``layers.json``.
    table : str
        The Markdown table of ``layers.md`` (:func:`layers_table`).
    """

    path: Path
    n_records: int
    n_measured: int
    layers: list[dict]
    table: str


def strict_json(value: Any) -> Any:
    """``value`` as JSON types, with every non-finite float (NaN, ±inf; numpy ones too) turned into ``None``.

    Unlike :func:`~workbench.experiments.jsonable`, which spells them ``"nan"``/``"inf"``, the result always
    passes ``json.dumps(..., allow_nan=False)`` and a string ``"nan"`` (a token, say) stays a string.

    Examples
    --------
    >>> strict_json({"a": np.float64("nan"), "b": np.array([1.0, np.inf]), "c": ("nan", 2)})
    {'a': None, 'b': [1.0, None], 'c': ['nan', 2]}
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return strict_json(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return strict_json(value.tolist())
    if isinstance(value, np.generic):
        return strict_json(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return jsonable(value)


def _line(record: dict) -> str:
    return json.dumps(strict_json(record), ensure_ascii=False, allow_nan=False) + "\n"


def _records_file(path: str | Path) -> Path:
    path = Path(path)
    return path / RECORDS if path.is_dir() else path


def _complete_records(file: Path, identity: bool = False) -> tuple[list[dict], int]:
    """The records of the complete lines of ``file`` and the byte length they take (a cut last line excluded).

    Each must be an object with an integer ``index``; with ``identity`` (a resumed run, which compares them with
    its windows) also the window's ``document``, ``start`` and ``n_tokens`` (:data:`_IDENTITY`).
    """
    data = file.read_bytes()
    end = data.rfind(b"\n") + 1  # a last line without its newline was cut short by a kill
    records = []
    for number, raw in enumerate(data[:end].splitlines(), start=1):
        try:
            record = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
            raise RunFileError(
                f"{RECORDS} must hold one JSON object per line, got line {number} of {str(file)!r} unreadable "
                f"({error}); it was not written by run_corpus, or was edited"
            ) from None
        problem = json_record_problem(record, dict, keys=_IDENTITY if identity else {"index": int})
        if problem is not None:
            raise RunFileError(
                f"{RECORDS} must hold one window record per line (an object with an integer 'index'"
                + (", a string 'document' and integers 'start', 'n_tokens'" if identity else "")
                + f"), got line {number} of {str(file)!r}: {problem}"
            )
        records.append(record)
    return records, end


def read_records(path: str | Path) -> list[dict]:
    """The window records of a run: ``records.jsonl`` of the run directory ``path`` (or that file itself).

    A last line without its line break (the process was killed while writing it) is left out.  The records are
    strict JSON, so a number that was not finite reads as ``None``.

    Raises
    ------
    FileNotFoundError
        There is no such file.
    ValueError
        A complete line is not a JSON record with an integer ``index``.
    """
    file = _records_file(path)
    if not file.is_file():
        raise FileNotFoundError(f"records not found: {str(file)!r} does not exist")
    return _complete_records(file)[0]


def _window_fields(window) -> dict:
    try:
        return {
            "index": int(window.index),
            "document": str(window.document),
            "start": int(window.start),
            "n_tokens": len(window.ids),
            "text": str(window.text),
        }
    except AttributeError as error:
        raise TypeError(
            f"windows must yield windows with index, document, start, ids and text (corpus_windows), got a "
            f"{type(window).__name__} ({error})"
        ) from None


def run_corpus(
    windows: Iterable,
    measure: Callable[[Any], dict],
    out: str | Path,
    *,
    config: dict,
    resume: bool = False,
    force: bool = False,
    progress: bool = True,
    name: str = "corpus",
    workers: int = 1,
) -> CorpusRun:
    """Measure every window, streaming one JSON record per window to ``out/records.jsonl``; summarise per layer.

    Parameters
    ----------
    windows : iterable of Window
        The windows (``workbench.models.corpus_windows``): anything with ``index``, ``document``, ``start``,
        ``ids`` and ``text``.  With ``len()``, or a ``count()`` method (``corpus_windows``), the progress bar and
        ``run.json`` know how many are planned.
    measure : callable
        ``measure(window) -> dict``, JSON-ready (numpy numbers and arrays are fine; NaN and ±inf are written
        ``null``).  Its ``"layers"`` entry, a list with one dict of numbers per layer, is what the summary reads.
        Its keys must differ from the window fields ``index``, ``document``, ``start``, ``n_tokens``, ``text``.
    out : str or Path
        The run directory (created if needed; a non-empty one needs ``force`` or ``resume``).
    config : dict
        The run's settings (model name, corpus, ``max_tokens``, ``limit``, …), written to ``config.json`` and
        ``run.json``; a resumed run must be given the same.
    resume : bool
        Continue the unfinished run in ``out``: keep its complete records, measure the windows it lacks.
    force : bool
        Replace the run in ``out`` (its run files are removed; other files stay).
    progress : bool
        Show a progress bar (the project's :func:`~workbench.experiments.progress`).
    name : str
        The run's experiment name in ``run.json`` (a directory holding a run of another name is refused).
    workers : int
        Processes measuring windows in parallel (forked from this one, so ``measure`` and what it holds are
        shared, not pickled; BLAS thread limits are inherited).  The records are written in window order, the
        same lines as with one worker.

    Returns
    -------
    CorpusRun

    Raises
    ------
    ValueError
        ``out`` holds files and neither ``resume`` nor ``force`` is given; with ``resume``, ``out`` is not an
        unfinished run of ``name`` with this ``config`` (the message names the fields that differ), or its
        records are not those of these windows (the corpus or the tokenizer changed); a file of the run that was
        edited or damaged (``run.json``, ``config.json``, a line of ``records.jsonl`` that is no window record) is
        refused naming the file (a ``RunFileError``, which is a ``ValueError``).
    TypeError
        ``measure`` returned something other than a dict, or a dict with a window field among its keys.
    KeyboardInterrupt
        Passed on after ``run.json`` says ``"interrupted"``; any other exception from ``measure`` is passed on
        after ``run.json`` says ``"failed"`` with the error.
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict of the run's settings, got {type(config).__name__}")
    if out is None:
        raise ValueError("out must be the run directory (the records are streamed there), got None")
    if not callable(measure):
        raise TypeError(f"measure must be a function of one window, got {type(measure).__name__}")
    workers = check_integer("workers", workers, 1, os.cpu_count() or 1)
    if workers > 1 and "fork" not in multiprocessing.get_all_start_methods():
        raise ValueError(f"workers > 1 needs the fork start method, which this platform lacks; got workers={workers}")
    if isinstance(windows, Sized):
        total = len(windows)
    elif callable(getattr(windows, "count", None)):
        total = windows.count()  # the windows of corpus_windows count themselves
    else:
        total = None
    if resume and out is not None and (Path(out) / RECORDS).is_symlink():
        # Resuming truncates and appends to the records: through a link, to a file outside the run.
        raise ValueError(
            f"out must be a run directory whose {RECORDS} is a file of its own to resume it, got {str(out)!r}, where "
            f"{RECORDS} is a symbolic link; remove the link (or start the run afresh with force)"
        )
    log = RunLog.open(
        out,
        experiment=name,
        config=config,
        conditions=(),
        selection={},
        artefacts=_ARTEFACTS,
        force=force,
        resume=resume,
    )
    path = log.path
    file = path / RECORDS
    if resume and file.exists() and not file.is_file():
        raise RunFileError(f"{RECORDS} must be the file of the run's records, got {str(file)!r}, a directory")
    kept: dict[int, dict] = {}
    if resume and file.is_file():
        records, end = _complete_records(file, identity=True)
        if end < file.stat().st_size:
            os.truncate(file, end)  # drop the line a killed process left unfinished
        kept = {record["index"]: {k: record[k] for k in _IDENTITY} for record in records}
    elif not resume:
        file.write_bytes(b"")
    counts = {"windows": total, "records": len(kept), "measured": 0, "kept": len(kept)}
    log.record["counts"] = counts
    log._save()  # the record says how many windows are planned and kept before the first is measured
    # O_NOFOLLOW: a link put in place since the check above is refused by the system, not followed.
    descriptor = os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with (
        log,
        open(descriptor, "a", encoding="utf-8") as stream,
        progress_bar(total, f"{name} windows", progress) as bar,
    ):
        if kept:
            bar.update(len(kept))
        seen = set()
        pending = []
        for window in windows:
            fields = _window_fields(window)
            index = fields["index"]
            seen.add(index)
            if index in kept:
                identity = {k: fields[k] for k in _WINDOW_FIELDS[:4]}
                if kept[index] != identity:
                    raise ValueError(
                        f"windows must be those of the run in {str(path)!r} to resume it, got window {index} = "
                        f"{identity}, where {RECORDS} holds {kept[index]}: the corpus or the tokenizer changed; "
                        "start a new run"
                    )
                continue
            if workers == 1:  # measured as the windows come: nothing is held in memory
                _write(stream, fields, measure(window), counts, bar)
            else:
                pending.append((fields, window))
        for fields, measured in _in_parallel(measure, pending, workers):
            _write(stream, fields, measured, counts, bar)
        missing = sorted(set(kept) - seen)
        if missing:
            raise ValueError(
                f"windows must be those of the run in {str(path)!r} to resume it, got none for the recorded windows "
                f"{missing[:5]}{' …' if len(missing) > 5 else ''}: the corpus or the tokenizer changed; start a new run"
            )
        stream.close()
        records = read_records(file)
        rows = aggregate_layers(records)
        table = layers_table(rows)
        save_json(path / LAYERS_JSON, strict_json({"records": len(records), "rows": rows}))
        save_text(path / LAYERS_MD, table)
        counts["windows"] = counts["windows"] if counts["windows"] is not None else len(records)
    return CorpusRun(path, counts["records"], counts["measured"], rows, table)


def _write(stream, fields: dict, measured, counts: dict, bar) -> None:
    """One record line, flushed at once, after checking what ``measure`` returned."""
    if not isinstance(measured, dict):
        raise TypeError(f"measure must return a dict, got {type(measured).__name__} for window {fields['index']}")
    clash = sorted(set(measured) & set(_WINDOW_FIELDS))
    if clash:
        raise TypeError(f"measure must not return the window fields {clash} (run_corpus adds them)")
    stream.write(_line({**fields, **measured}))
    stream.flush()
    counts["records"] += 1
    counts["measured"] += 1
    bar.update(1)


_MEASURE: Callable | None = None  # the measure of the run in progress, inherited by forked workers


def _measure_in_worker(window):
    return _MEASURE(window)


def _single_threaded_torch() -> None:
    """In a forked worker: torch on the calling thread only.

    A parent that has run torch (a model read through transformers) leaves an intra-op thread pool that does not
    survive fork: the worker's first parallel torch operation waits on it forever (a 6-window run with two
    workers hung).  One thread per worker is also what the workers are for.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _in_parallel(measure: Callable, pending: list, workers: int):
    """``(fields, measure(window))`` of the pending windows, in order, from ``workers`` forked processes."""
    global _MEASURE
    if not pending:
        return
    _MEASURE = measure
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_single_threaded_torch) as pool:
            results = pool.imap(_measure_in_worker, [window for _, window in pending], chunksize=1)
            for (fields, _), measured in zip(pending, results, strict=True):
                yield fields, measured
    finally:
        _MEASURE = None


def _numbers(layer: dict) -> Iterable[tuple[str, float | None]]:
    """The numeric fields of one layer's dict: numbers and ``None`` as they are, dicts of numbers flattened."""
    for key, value in layer.items():
        if key == "layer":
            continue
        if isinstance(value, dict):
            for sub, number in value.items():
                if number is None or isinstance(number, (int, float)):
                    yield f"{key}.{sub}", number
        elif value is None or isinstance(value, (int, float)):
            yield key, value


def aggregate_layers(records: Iterable[dict]) -> list[dict]:
    """Per layer and per numeric field of the records' ``"layers"``: the mean, the sd (ddof = 1) and n.

    Parameters
    ----------
    records : iterable of dict
        Window records (:func:`read_records`); each one's ``"layers"`` is a list of dicts, one per layer.

    Returns
    -------
    list of dict
        One row per (layer, field), in layer order and then in the order the fields first appear:
        ``{"layer", "field", "n", "mean", "sd"}``.  ``n`` counts the windows whose value is a finite number;
        ``None`` (a NaN written as null) and missing values are not counted.  ``mean`` is ``None`` when
        ``n = 0``, ``sd`` when ``n < 2``.  Booleans count as 0/1 (their mean is the share that is true).  A
        field holding a dict of numbers (counts by kind, say) is read as one field per key, ``"field.key"``
        (its sum over the windows is ``mean · n``).  Strings, lists and the key ``"layer"`` are skipped.

    Examples
    --------
    >>> records = [{"layers": [{"h": 1.0, "kind": "a"}, {"h": None}]}, {"layers": [{"h": 3.0}, {"h": 2.0}]}]
    >>> [(r["layer"], r["field"], r["n"], r["mean"], r["sd"]) for r in aggregate_layers(records)]
    [(0, 'h', 2, 2.0, 1.4142135623730951), (1, 'h', 1, 2.0, None)]
    """
    values: list[dict[str, list[float]]] = []
    for record in records:
        layers = record.get("layers") if isinstance(record, dict) else None
        if not isinstance(layers, list):
            continue
        for number, layer in enumerate(layers):
            if not isinstance(layer, dict):
                continue
            while len(values) <= number:
                values.append({})
            for field, value in _numbers(layer):
                column = values[number].setdefault(field, [])
                if value is not None and math.isfinite(value):
                    column.append(float(value))
    rows = []
    for number, fields in enumerate(values):
        for field, column in fields.items():
            n = len(column)
            data = np.asarray(column)
            mean = float(data.mean()) if n else None
            sd = float(data.std(ddof=1)) if n > 1 else None
            rows.append({"layer": number, "field": field, "n": n, "mean": mean, "sd": sd})
    return rows


def _number(value: float) -> str:
    return f"{value:.4g}"


def layers_table(rows: list[dict]) -> str:
    """A Markdown table of :func:`aggregate_layers` rows: one line per layer, one column per field, "mean ± sd".

    A cell is ``mean ± sd`` (4 significant digits), ``mean`` alone when one window has the value, ``—`` when none
    has; ``(n=k)`` follows when fewer windows than the layer's most have it (the others were null).

    Examples
    --------
    >>> print(layers_table([{"layer": 0, "field": "h", "n": 2, "mean": 2.0, "sd": 1.5}]))
    | layer | n | h |
    |---|---|---|
    | 0 | 2 | 2 ± 1.5 |
    <BLANKLINE>
    """
    fields = list(dict.fromkeys(row["field"] for row in rows))
    layers = sorted({row["layer"] for row in rows})
    cells = {(row["layer"], row["field"]): row for row in rows}
    lines = ["| layer | n |" + "".join(f" {field} |" for field in fields), "|---|---|" + "---|" * len(fields)]
    for layer in layers:
        present = [cells[layer, f] for f in fields if (layer, f) in cells]
        most = max((row["n"] for row in present), default=0)
        line = [str(layer), str(most)]
        for field in fields:
            row = cells.get((layer, field))
            if row is None or row["n"] == 0:
                line.append("—")
                continue
            cell = _number(row["mean"]) if row["sd"] is None else f"{_number(row['mean'])} ± {_number(row['sd'])}"
            if row["n"] < most:
                cell += f" (n={row['n']})"
            line.append(cell)
        lines.append("| " + " | ".join(line) + " |")
    return "\n".join(lines) + "\n"
