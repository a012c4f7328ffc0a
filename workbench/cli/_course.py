"""The course commands: ``lab``, ``book`` and ``course``.

lab     -- JupyterLab on the course notebooks
book    -- the course as a static site (build, serve), as one PDF (pdf) and as slides (slides)
course  -- a writable copy of the course (copy), a student copy (assign) and the grading of submissions (grade)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = []  # package-internal: the command line's index dispatches to cmd_lab, cmd_book and cmd_course


def _holds_course(folder: Path) -> bool:
    return (folder / "book" / "conf.py").is_file() and (folder / "notebooks").is_dir()


def _notebook_dir(requested: str | None) -> Path:
    from workbench.resources import course_root, is_installed

    if requested:
        path = Path(requested)
    elif (Path.cwd() / "notebooks").is_dir():
        path = Path.cwd() / "notebooks"
    elif not is_installed():
        path = course_root() / "notebooks"  # the checkout's
    else:  # the installed course belongs to the install: the lab edits a copy in the current folder
        from workbench.course import copy_course

        copy = Path.cwd() / "attention-workbench-course"
        if not _holds_course(copy):
            written = copy_course(copy)
            print(f"copied the course into {copy} ({len(written)} files): the lab edits this copy", file=sys.stderr)
        path = copy / "notebooks"
    if not path.is_dir():
        raise ValueError(f"--dir must be a folder of course notebooks, got {str(path)!r}")
    return path


def _course_dirs(requested: str | None) -> tuple[Path | None, Path | None]:
    """(book_dir, notebooks_dir) of ``--course DIR``, of the current folder if it holds a course, else (None, None)."""
    if requested is not None:
        folder = Path(requested)
        if not _holds_course(folder):
            raise ValueError(
                f"--course must be a folder holding book/conf.py and notebooks/ (a checkout or a `workbench course "
                f"copy`), got {requested!r}"
            )
    elif _holds_course(Path.cwd()):
        folder = Path.cwd()
    else:
        return None, None  # the checkout's, or the course installed with the package
    return folder / "book", folder / "notebooks"


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from workbench.lab import lab_command

    command = lab_command(_notebook_dir(args.dir), extra)
    print("running: " + " ".join(command), file=sys.stderr, flush=True)
    # Become the server (no wrapper process), so a signal to `workbench lab` reaches JupyterLab itself.
    os.execvp(command[0], command)
    return 0  # pragma: no cover - execvp does not return


def cmd_book(args: argparse.Namespace) -> int:
    from workbench.book import build, build_folder, pdf, serve, slides

    out = Path(args.out) if args.out else None
    book_dir, notebooks_dir = _course_dirs(getattr(args, "course", None))  # serve: the current folder's, if any
    if args.action == "serve":
        serve(out or build_folder(book_dir) / "html", port=args.port)
        return 0
    where = {"book_dir": book_dir, "notebooks_dir": notebooks_dir, "jobs": args.jobs}
    if args.action == "pdf":
        written = pdf(out, solutions=not args.without_solutions, **where)
        print(f"wrote the course to {written} ({written.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
        return 0
    if args.action == "slides":
        index = slides(out, **where)
        print(f"wrote one deck per session; the index is {index}", file=sys.stderr)
        return 0
    status = build(out, solutions=not args.without_solutions, api=not args.without_api, **where)
    if status != 0:
        print(f"workbench book: error: the site build failed (sphinx-build exit status {status})", file=sys.stderr)
        return 1
    print(f"built the site in {out or build_folder(book_dir) / 'html'}", file=sys.stderr)
    return 0


def cmd_course(args: argparse.Namespace) -> int:
    # workbench.course imports otter and nbformat only inside its functions; imported here, on demand, like them.
    from workbench import course

    if args.action == "copy":
        written = course.copy_course(Path(args.dir), force=args.force)
        print(f"wrote a copy of the course to {args.dir}: {len(written)} files (its README says what to run)")
        return 0
    if args.action == "assign":
        written = course.assign(Path(args.dir), force=args.force)
        notebooks = sum(1 for path in written if path.suffix == ".ipynb")
        print(f"wrote the student copy to {args.dir}: {notebooks} notebooks, {len(written)} files")
        return 0
    out = Path(args.out) if args.out else None
    rows = course.grade(Path(args.submissions), out=out)
    if out is not None:
        print(f"graded {len(rows)} submissions into {out}")
        return 0
    for row in rows:  # no CSV asked for: one line per submission on stdout
        print(f"{row.student}\t{row.notebook}\t{row.total:g}/{row.out_of:g}\t{row.status}")
    return 0
