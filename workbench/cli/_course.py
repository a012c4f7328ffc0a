"""The course commands: ``lab`` (JupyterLab on the notebooks) and ``book`` (the course as a static site)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = []  # package-internal: the command line's index dispatches to cmd_lab and cmd_book


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
    from workbench.book import build, serve

    out = Path(args.out) if args.out else None
    if args.action == "serve":
        serve(out, port=args.port)
        return 0
    status = build(out, solutions=not args.without_solutions)
    if status != 0:
        print(f"workbench book: error: the site build failed (sphinx-build exit status {status})", file=sys.stderr)
        return 1
    print(f"built the site in {out or 'book/_build/html'}", file=sys.stderr)
    return 0
