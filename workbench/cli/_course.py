"""The course commands: ``lab``, ``book`` and ``course``.

lab     -- JupyterLab on the course notebooks
book    -- the course as a static site (build, serve), as one PDF (pdf) and as slides (slides)
course  -- a student copy of the course (assign) and the grading of submitted notebooks (grade)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = []  # package-internal: the command line's index dispatches to cmd_lab, cmd_book and cmd_course


def _notebook_dir(requested: str | None) -> Path:
    if requested:
        path = Path(requested)
    else:
        here = Path.cwd() / "notebooks"  # else the checkout's own: this file is workbench/cli/_course.py
        path = here if here.is_dir() else Path(__file__).resolve().parents[2] / "notebooks"
    if not path.is_dir():
        raise ValueError(f"--dir must be a folder of course notebooks, got {str(path)!r}")
    return path


def cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from workbench.lab import lab_command

    command = lab_command(_notebook_dir(args.dir), extra)
    print("running: " + " ".join(command), file=sys.stderr, flush=True)
    # Become the server (no wrapper process), so a signal to `workbench lab` reaches JupyterLab itself.
    os.execvp(command[0], command)
    return 0  # pragma: no cover - execvp does not return


def cmd_book(args: argparse.Namespace) -> int:
    from workbench.book import build, pdf, serve, slides

    out = Path(args.out) if args.out else None
    if args.action == "serve":
        serve(out, port=args.port)
        return 0
    if args.action == "pdf":
        written = pdf(out, solutions=not args.without_solutions, jobs=args.jobs)
        print(f"wrote the course to {written} ({written.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
        return 0
    if args.action == "slides":
        index = slides(out, jobs=args.jobs)
        print(f"wrote one deck per session; the index is {index}", file=sys.stderr)
        return 0
    status = build(out, solutions=not args.without_solutions, jobs=args.jobs)
    if status != 0:
        print(f"workbench book: error: the site build failed (sphinx-build exit status {status})", file=sys.stderr)
        return 1
    print(f"built the site in {out or 'book/_build/html'}", file=sys.stderr)
    return 0


def cmd_course(args: argparse.Namespace) -> int:
    # workbench.course imports otter and nbformat only inside its functions; imported here, on demand, like them.
    from workbench import course

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
