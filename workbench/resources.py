"""Where the course lives: the repository's checkout, or the copy the wheel ships inside the package.

The course (notebooks, worked solutions, graders, the site's sources, the committed experiment results the notebooks
read, and the licences) is laid out the same way in both places, so every path below the root is the same::

    notebooks/  notebooks/solutions/  notebooks/grading/  book/  experiments/results/  LICENSE  LICENSE-CONTENT.md

In a checkout (an editable install, or the tests) the root is the repository.  A wheel has no repository beside the
package: the build (``setup.py``) copies the course into ``workbench/_course``, a read-only part of the install;
``workbench course copy DIR`` gives a writable copy.

course_root     -- the folder that holds the course (checkout first, then the installed copy)
course_files    -- every file of the course under a root, as relative paths
is_installed    -- whether that folder is the installed, read-only copy
COURSE_FILES    -- what the course consists of (the build's list and the copy's)
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["COURSE_FILES", "CourseNotFound", "course_files", "course_root", "is_installed"]

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent
_INSTALLED = _PACKAGE / "_course"

# The course, relative to its root: (path, glob patterns of the files taken; "" for the file itself).  Of the
# committed experiment runs, the files the notebooks, solutions and graders open (found by running 10e and 12-14
# with an audit hook on open: every run's results.json and sweep.json, and one figure) and the runs' READMEs and
# tables: 17 MB of the 39 MB; the per-head records and the figures of the reports stay in the repository.
COURSE_FILES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("LICENSE", ("",)),
    ("LICENSE-CONTENT.md", ("",)),
    ("CITATION.cff", ("",)),
    ("notebooks", ("*.py", "reference.md", "jupytext.toml")),
    ("notebooks/solutions", ("*.py",)),
    ("notebooks/grading", ("**/*.py",)),
    ("book", ("conf.py", "*.md", "references.bib")),
    ("book/_static", ("**/*",)),
    ("experiments/results", ("**/results.json", "**/sweep.json", "**/*.md", "swiss-sit-paper/samples.png")),
)


class CourseNotFound(FileNotFoundError):
    """Neither a checkout nor the installed copy holds the course (a broken or partial install)."""


def _holds_course(root: Path) -> bool:
    return (root / "notebooks").is_dir() and (root / "book" / "conf.py").is_file()


def course_root() -> Path:
    """The folder that holds the course: the repository in a checkout, else the copy installed with the package.

    Examples
    --------
    >>> (course_root() / "book" / "conf.py").is_file()
    True
    """
    for root in (_CHECKOUT, _INSTALLED):
        if _holds_course(root):
            return root
    raise CourseNotFound(
        f"the course is neither beside the package ({_CHECKOUT}) nor installed with it ({_INSTALLED}): reinstall "
        "attention-workbench from a wheel or an sdist, or work in a clone of the repository"
    )


def course_files(root: Path | None = None) -> list[Path]:
    """Every file of the course under ``root`` (default :func:`course_root`), relative to it, sorted.

    The wheel's build (``setup.py``) and ``workbench course copy`` both take exactly these files.

    Examples
    --------
    >>> files = course_files()
    >>> Path("book/conf.py") in files and Path("experiments/results/induction-paper/results.json") in files
    True
    """
    root = Path(root) if root is not None else course_root()
    found = set()
    for folder, patterns in COURSE_FILES:
        for pattern in patterns:
            for path in [root / folder] if pattern == "" else (root / folder).glob(pattern):
                if path.is_file():  # notebooks/reference.md is a link in the repository: it counts as its text
                    found.add(path.relative_to(root))
    return sorted(found)


def is_installed() -> bool:
    """Whether the course in use is the read-only copy installed with the package (not a checkout)."""
    return course_root() == _INSTALLED
