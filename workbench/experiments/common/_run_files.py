"""Reading a run's files back: one refusal, naming the file, for a file that was edited or damaged.

A run directory (:mod:`workbench.experiments.common._runs`) is the user's to edit, and disks damage files.  What the
workbench reads back from one (on a resume, a forced rerun, a sweep's continuation, a transfer's ``pretrained``
run) goes through the two readers here, never through ``json.loads`` or ``torch.load`` at the call site:

* :func:`read_json_record` reads a JSON file and checks its type and keys (type specs as
  ``json_record_problem``);
* :func:`load_state` reads a ``.pt`` state dict with ``torch.load(..., weights_only=True)`` and checks it against
  the model it is loaded into;
* :func:`table_rows` turns a complete run's results into its table rows, refusing what the experiment cannot read;
* :func:`check_digest` compares a kept file with the SHA-256 its run record holds (:func:`file_sha256`).

Each refuses with a :class:`RunFileError` (a ``ValueError``: the command line prints it as one line, exit 2) whose
message names the file, what it must be and what was found: not UTF-8, not JSON, cut short, nested too deeply, a
list where an object is expected, a key missing or of another type, bytes torch cannot read, a state dict for other
shapes.  Never a traceback.
"""

from __future__ import annotations

import hashlib
import json
from numbers import Real
from pathlib import Path
from typing import Any

__all__ = ["RUN_RECORD", "RunFileError", "check_digest", "load_state", "read_json_record", "table_rows"]

#: The run record of a run directory (written by :class:`workbench.experiments.RunLog`).
RUN_RECORD = "run.json"


class RunFileError(ValueError):
    """A file read back from a run directory is not what a run writes there (it was edited or damaged).

    A ``ValueError``, so the command line prints it as one line (``workbench COMMAND: error: ...``, exit 2).  The
    message names the file, what it must be and what was found.
    """


def run_file_error(path: Path, what: str, found: str, *, option: str | None = None, remedy: str | None = None):
    """The :class:`RunFileError` for the file ``path``, which must be ``what`` and is ``found``.

    With ``option`` (the parameter or option that named the run directory, e.g. ``"--resume"``) the message starts
    with it: ``--resume must be a run directory with a readable run.json (a run record), got '.../run.json': ...``.
    """
    if option is None:
        message = f"{str(path)!r} must be {what}, got {found}"
    else:
        message = f"{option} must be a run directory with a readable {path.name} ({what}), got {str(path)!r}: {found}"
    return RunFileError(message + (f"; {remedy}" if remedy else ""))


def _kind(value: Any) -> str:
    """The JSON type of ``value`` in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    for types, words in ((dict, "an object"), (list, "a list"), (str, "a string"), ((int, float), "a number")):
        if isinstance(value, types):
            return words
    return f"a {type(value).__name__}"


def json_excerpt(value: Any, limit: int = 60) -> str:
    """``value`` as compact JSON, cut to about ``limit`` characters (for a message)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_PLURAL = {dict: "objects", list: "lists", str: "strings", int: "integers", float: "numbers", bool: "booleans"}
_SINGULAR = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
}


def _expected(spec, plural: bool = False) -> str:
    """A type spec in words: ``str`` "a string", ``[str]`` "a list of strings", ``{str: [str]}`` "an object of ..."."""
    if isinstance(spec, list):
        return ("lists" if plural else "a list") + f" of {_expected(spec[0], True)}"
    if isinstance(spec, dict):
        return ("objects" if plural else "an object") + f" of {_expected(next(iter(spec.values())), True)}"
    if isinstance(spec, tuple):
        return " or ".join(_expected(s, plural) for s in spec)
    return (_PLURAL if plural else _SINGULAR)[spec]


def _matches(value: Any, spec) -> bool:
    """Whether the JSON ``value`` has the type ``spec`` (see ``json_record_problem``); a bool is no number."""
    if isinstance(spec, list):
        return isinstance(value, list) and all(_matches(v, spec[0]) for v in value)
    if isinstance(spec, dict):
        inner = next(iter(spec.values()))
        return isinstance(value, dict) and all(_matches(v, inner) for v in value.values())
    if isinstance(spec, tuple):
        return any(_matches(value, s) for s in spec)
    if spec in (int, float) and isinstance(value, bool):
        return False
    return isinstance(value, (int, float) if spec is float else spec)


def json_record_problem(value: Any, expect=dict, keys: dict | None = None, optional: dict | None = None) -> str | None:
    """What is wrong with the JSON ``value`` as a record of type ``expect`` with ``keys``, or ``None``.

    A type spec is a type (``dict``, ``list``, ``str``, ``int``, ``float``: a number, ``bool``), a tuple of specs
    (any of them), ``[spec]`` (a list of such values) or ``{str: spec}`` (an object of such values).  ``keys`` maps
    the keys the record must hold to their specs, ``optional`` those it may hold.

    Examples
    --------
    >>> json_record_problem([1, 2]), json_record_problem({"status": 3}, keys={"status": str, "done": [str]})
    ('a list ([1, 2])', "an object without 'done'")
    >>> json_record_problem({"done": [3]}, keys={"done": [str]})
    "an object whose 'done' is [3] (a list) where a list of strings is expected"
    """
    if not _matches(value, expect):
        return f"{_kind(value)} ({json_excerpt(value)})"
    if not isinstance(value, dict):
        return None
    missing = [key for key in keys or {} if key not in value]
    if missing:
        return "an object without " + ", ".join(repr(key) for key in missing)
    for key, spec in {**(keys or {}), **{k: v for k, v in (optional or {}).items() if k in value}}.items():
        if not _matches(value[key], spec):
            return (
                f"an object whose {key!r} is {json_excerpt(value[key])} ({_kind(value[key])}) where {_expected(spec)} "
                "is expected"
            )
    return None


def not_a_file(path: Path) -> str:
    """What ``path`` is when it is not a regular file, in words: a directory, a special file, or nothing."""
    if path.is_dir():
        return "a directory"
    return "a special file, not a regular one" if path.exists() else "no such file"


def read_json_record(
    path: str | Path,
    *,
    what: str,
    expect=dict,
    keys: dict | None = None,
    optional: dict | None = None,
    option: str | None = None,
    remedy: str | None = None,
) -> Any:
    """The JSON document in the run file ``path``, checked to be ``what``; a :class:`RunFileError` otherwise.

    Refused, with a message naming the file, ``what`` it must be and what it holds: a missing or unreadable file,
    a directory, bytes that are not UTF-8, text that is not JSON (or JSON cut short, or nested too deeply to read),
    a value not of type ``expect``, a record without one of ``keys`` or with a key of another type (type specs as
    ``json_record_problem``).

    Parameters
    ----------
    path : str or Path
        The file (``run.json``, ``config.json``, a condition's row, ``sweep.json``, ``results.json``).
    what : str
        What the file must be, in words (``"a run record"``).
    expect, keys, optional
        The type of the document, the keys it must hold and those it may hold, with their types.
    option : str, optional
        The option or parameter that named the run directory (``"--resume"``), to start the message with.
    remedy : str, optional
        What the user can do, appended to the message.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "run.json").write_text('{"status": 3}')
    ...     try:
    ...         read_json_record(Path(tmp) / "run.json", what="a run record", keys={"status": str})
    ...     except RunFileError as exc:
    ...         print(str(exc).replace(tmp, "TMP"))
    'TMP/run.json' must be a run record, got an object whose 'status' is 3 (a number) where a string is expected
    """
    path = Path(path)

    def refuse(found: str) -> RunFileError:
        return run_file_error(path, what, found, option=option, remedy=remedy)

    if not path.is_file():
        raise refuse(not_a_file(path))
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise refuse(f"a file that cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise refuse(
            f"bytes that are not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})"
        ) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg}: line {exc.lineno} column {exc.colno}"
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        raise refuse(f"JSON cut short ({where})" if cut else f"text that is not JSON ({where})") from None
    except RecursionError:
        raise refuse("JSON nested too deeply to read") from None
    problem = json_record_problem(value, expect, keys, optional)
    if problem is not None:
        raise refuse(problem)
    return value


def table_rows(path: Path, result: Any, rows, *, what: str, remedy: str | None = None) -> list[dict]:
    """``rows(result)``, the table rows an experiment makes of the results read from ``path``, each checked.

    A result the experiment's ``rows`` cannot read, or a row holding anything but keys (strings) and measurements
    (numbers or null), is a :class:`RunFileError` naming ``path``: the file was edited since the run wrote it.
    """
    try:
        table = rows(result)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        found = f"an object the experiment's rows cannot read ({type(exc).__name__}: {exc})"
        raise run_file_error(path, what, found, remedy=remedy) from None
    for row in table:
        odd = {k: v for k, v in row.items() if not (v is None or isinstance(v, (str, Real)))}
        if odd:
            field, value = next(iter(odd.items()))
            found = f"a row whose {field} is {value!r}, neither a key (a string) nor a measurement (a number or null)"
            raise run_file_error(path, what, found, remedy=remedy)
    return table


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of the file ``path``, in hex."""
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def check_digest(path: Path, record: dict, *, what: str, remedy: str | None = None) -> None:
    """Refuse the kept file ``path`` if the run ``record`` holds its SHA-256 and the file's differs.

    ``what`` says what the file is, for the message.  A record without digests (a run written before they were
    kept) checks nothing.
    """
    recorded = (record.get("sha256") or {}).get(path.name)
    if recorded is not None and path.is_file() and file_sha256(path) != recorded:  # not a file: the reader refuses it
        raise run_file_error(
            path,
            f"{what} (its SHA-256 is recorded in {RUN_RECORD})",
            "a file with other contents: it was edited or damaged after the run wrote it",
            remedy=remedy,
        )


def _first_sentence(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(str(exc).split()).split(". ")[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _listed(names: list[str], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def load_state(path: str | Path, model=None, *, what: str = "a state dict saved by torch.save", map_location=None):
    """The state dict in ``path`` (``torch.load(..., weights_only=True)``), loaded into ``model`` if one is given.

    Refused with a :class:`RunFileError` naming the file: not a file (a directory, missing), bytes torch cannot
    read (``UnpicklingError``, ``RuntimeError``, ... for random or cut bytes), anything but a dict of tensors, and,
    with ``model``, a state dict with keys missing, unknown keys or tensors of other shapes than the model's.
    ``weights_only=True``: a pickle that would run code is refused by torch, never executed.

    Parameters
    ----------
    path : str or Path
        A ``.pt`` file written by ``torch.save(model.state_dict(), path)``.
    model : torch.nn.Module, optional
        The model to load it into (``load_state_dict``, strict).
    what : str
        What the file must be, in words, for the message.
    map_location
        As for ``torch.load``.

    Returns
    -------
    dict
        The state dict.
    """
    import torch  # only the experiments with state dicts need torch

    path = Path(path)
    if not path.is_file():
        raise run_file_error(path, what, not_a_file(path))
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as exc:  # hostile bytes: torch raises UnpicklingError, RuntimeError, EOFError, ValueError, ...
        raise run_file_error(
            path, what, f"a file torch.load cannot read ({type(exc).__name__}: {_first_sentence(exc)})"
        ) from None
    if not isinstance(state, dict):
        raise run_file_error(path, what, f"a saved {type(state).__name__}, not a dict of tensors")
    odd = [repr(key) for key, value in state.items() if not (isinstance(key, str) and isinstance(value, torch.Tensor))]
    if odd:
        raise run_file_error(path, what, f"a dict whose entries {_listed(odd)} are not named tensors")
    if model is not None:
        expected = model.state_dict()
        missing = [key for key in expected if key not in state]
        unknown = [key for key in state if key not in expected]
        shapes = [
            f"{key} {list(state[key].shape)} (the model's is {list(expected[key].shape)})"
            for key in expected
            if key in state and state[key].shape != expected[key].shape
        ]
        problems = [
            f"{words} {_listed(names)}"
            for words, names in (("without", missing), ("with unknown keys", unknown), ("with the shapes", shapes))
            if names
        ]
        if problems:
            raise run_file_error(path, what, "a state dict " + " and ".join(problems) + " for this model")
        try:
            model.load_state_dict(state)
        except RuntimeError as exc:
            raise run_file_error(path, what, f"a state dict the model refuses ({_first_sentence(exc)})") from None
    return state
