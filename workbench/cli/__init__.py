"""The ``workbench`` command line: list, check, derive, bench, diagnose, study, experiment, sweep, lab, book, course.

The contract (names, options, exit codes, the ``--json`` documents) is the one in DESIGN.md; tests drive
:func:`main` directly and through a subprocess.  This package parses and checks the options and prints the
results; each command's work lives in the library module it calls.

main          -- run the command line on ``argv``; return the exit status (0, 1, 2 or 130)
entry         -- the ``workbench`` console script and ``python -m workbench``: :func:`main`, then exit

Where each command lives
========================
_parser       -- the argparse parser: every command and option, the whole contract in one place
_catalogue    -- list, check, derive, bench: the catalogue, the Lie series and the benchmarks
_models       -- diagnose, study: real models (one text or a corpus run; connection-walk, head-subspaces)
_experiments  -- experiment, sweep: config overrides (--steps, --seed, --set), --resume checks, --grid parsing
_course       -- lab, book, course: JupyterLab on the course notebooks, the course as a static site and a PDF,
                 a student copy of the course and the grading of submissions
_common       -- what the commands share: rich tables and console (imported only when drawn), strict JSON, CSV,
                 number formats, option checks, the interrupt a command raises on SIGINT

Imports run one way: ``_common`` imports no other module of the package, each command module imports only
``_common``, and ``_parser`` and this index import the command modules.  Heavy modules (rich, torch, the
models, the experiments) are imported inside the command that needs them: ``import workbench.cli`` stays
light, and a command that prints JSON does not import rich.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from workbench.catalogue import CatalogueError
from workbench.cli._catalogue import cmd_bench, cmd_check, cmd_derive, cmd_list
from workbench.cli._common import Interrupted
from workbench.cli._course import cmd_book, cmd_course, cmd_lab
from workbench.cli._experiments import cmd_experiment, cmd_sweep
from workbench.cli._models import cmd_diagnose, cmd_study
from workbench.cli._parser import build_parser
from workbench.memory import MAX_MEMORY_VARIABLE, parse_size

__all__ = ["DISTRIBUTION", "distributions_providing", "entry", "foreign_package", "main"]

# The distribution this command line belongs to (the PyPI name; the import name is ``workbench``).
DISTRIBUTION = "attention-workbench"

_COMMANDS = {
    "list": cmd_list,
    "check": cmd_check,
    "derive": cmd_derive,
    "bench": cmd_bench,
    "diagnose": cmd_diagnose,
    "study": cmd_study,
    "experiment": cmd_experiment,
    "sweep": cmd_sweep,
    "book": cmd_book,
    "course": cmd_course,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 ok, 1 a check failed (or a file could not be written), 2 bad usage, 130 interrupted (SIGINT); every
    error and an interrupt are one line on stderr, never a traceback.
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what was typed: an interrupt's resume command
    if extra and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.max_memory is not None:
            parse_size("--max-memory", args.max_memory)
            os.environ[MAX_MEMORY_VARIABLE] = args.max_memory  # inherited by kernels and subprocesses too
        if args.command == "lab":
            return cmd_lab(args, extra)  # the one command that passes unknown options on (to JupyterLab)
        return _COMMANDS[args.command](args)
    except (ValueError, TypeError, CatalogueError) as exc:
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        sys.stderr.close()
        return 0
    except Interrupted as exc:
        print(f"workbench {args.command}: interrupted; {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print(f"workbench {args.command}: interrupted before any result was written", file=sys.stderr)
        return 130
    except OSError as exc:  # the file system refused something the checks above could not foresee
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 1


def foreign_package() -> str | None:
    """One line when the imported ``workbench`` package is not this distribution's, else ``None``.

    The import name ``workbench`` is also taken by an unrelated project on PyPI; installing both writes one
    ``workbench/__init__.py`` over the other without a word.  This distribution's ``__init__`` carries the
    marker ``__distribution__``; when it is missing, the owners of the folder are looked up (a scan of the
    installed distributions, done only then) and named.
    """
    import workbench

    if getattr(workbench, "__distribution__", None) == DISTRIBUTION:
        return None
    folder = Path(workbench.__file__ or next(iter(workbench.__path__), "?")).parent
    others = sorted(set(distributions_providing("workbench")) - {DISTRIBUTION})
    who = f" (installed by {', '.join(others)})" if others else ""
    return (
        f"the package 'workbench' in {folder} is not {DISTRIBUTION}'s: another distribution's "
        f"workbench/__init__.py{who} was installed over it; uninstall the other project, then "
        f"`python -m pip install --force-reinstall --no-deps {DISTRIBUTION}`"
    )


def distributions_providing(name: str, path: list[str] | None = None) -> list[str]:
    """The names of the distributions installed in the folders ``path`` (default ``sys.path``) that hold ``name``.

    Read from each ``*.dist-info`` folder as pip reads it: ``top_level.txt`` where the build wrote one, else the
    first column of ``RECORD``; the name from ``METADATA``.
    """
    import csv
    from email.parser import HeaderParser

    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a top-level package name, got {name!r}")
    if path is not None and (
        not isinstance(path, (list, tuple)) or not all(isinstance(p, (str, os.PathLike)) for p in path)
    ):
        raise TypeError(f"path must be a list of folders (str or path-like), got {path!r}")
    found = []
    for entry in sys.path if path is None else path:
        folder = Path(entry or ".")
        try:
            infos = sorted(folder.glob("*.dist-info"))
        except OSError:
            continue
        for info in infos:
            try:
                if (info / "top_level.txt").is_file():
                    provides = name in (info / "top_level.txt").read_text(encoding="utf-8").split()
                else:  # wheels not built by setuptools carry no top_level.txt: read the file list
                    with open(info / "RECORD", encoding="utf-8", newline="") as record:
                        provides = any(row and row[0].split("/", 1)[0] == name for row in csv.reader(record))
                if provides:
                    metadata = HeaderParser().parsestr((info / "METADATA").read_text(encoding="utf-8"))
                    found.append(metadata.get("Name") or info.name.split("-", 1)[0])
            except OSError:  # a folder half written or removed: not an owner that can be named
                continue
    return found


def entry() -> None:
    """The ``workbench`` console script and ``python -m workbench``: :func:`main`, then exit with its status.

    An interrupted command leaves through ``os._exit(130)`` after flushing: CPython remembers a
    KeyboardInterrupt that once crossed a nested evaluation frame (torch runs some), and at exit kills
    itself with SIGINT even though :func:`main` handled it, so the status would read −2 instead of 130.
    """
    foreign = foreign_package()
    if foreign:
        print(f"workbench: warning: {foreign}", file=sys.stderr)
    code = main()
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)
