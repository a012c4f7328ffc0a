"""Teaching the course: a student copy with no solution in it, and the grading of submitted notebooks.

The grader is otter-grader.  Each graded exercise ``NN.k`` of notebook ``STEM`` has a test file
``notebooks/grading/STEM/NN.k.py`` in otter's exception-based format: ordinary Python functions that receive the
student's ``answer_NN_k`` (a dict the exercise text names) and recompute its oracle from the student's own inputs.
Otter was chosen over nbgrader because its tests are plain functions of the answer (like the solutions' asserts),
it grades a notebook in a real kernel without Docker or a gradebook database (``otter.api.grade_submission``), and
the same tests give students feedback in the notebook (``grader.check("NN.k")``); nbgrader needs one master
notebook per assignment with the solution inside it, a course directory layout and a database.

:func:`copy_course` writes the teacher's writable copy of the whole course (from a wheel install, the course
lives read-only inside the package).  :func:`assign` writes the student copy: every notebook as ``.ipynb`` with a
``grader.check`` cell after each graded exercise, the tests, the reference, and nothing from
``notebooks/solutions``.  :func:`grade` grades a folder of submitted notebooks (on worker processes, each submission
in a fresh kernel with a time limit) into one CSV row per submission.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from workbench.resources import course_files, course_root
from workbench.validation import check_integer

__all__ = ["GradeRow", "assign", "autograder", "copy_course", "grade", "graded_exercises", "points", "write_csv"]

_MARKER = ".workbench-course-copy"
_EXERCISE = re.compile(r"^### Exercise (\d+[a-z]?\.\d+) \((compute|derive|explore)\)", re.MULTILINE)
_QUESTION = re.compile(r"^\d+[a-z]?\.\d+$")
_STEM = re.compile(r"^\d+[a-z]?_\w+$")


def _course(notebooks_dir: Path | None) -> Path:
    folder = Path(notebooks_dir) if notebooks_dir is not None else course_root() / "notebooks"
    if not folder.is_dir():
        raise ValueError(f"notebooks_dir must be the folder of the course notebooks, got {str(folder)!r}")
    return folder


def _notebooks(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if _STEM.match(p.stem))


def graded_exercises(notebooks_dir: Path | None = None) -> dict[str, list[str]]:
    """The graded exercises by notebook stem: ``{"00_how_to_read_this_workbench": ["00.1", "00.2"], …}``.

    An exercise is graded when ``notebooks/grading/STEM/NN.k.py`` holds its tests.
    """
    folder = _course(notebooks_dir) / "grading"
    graded = {}
    for stem in sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        questions = sorted(p.stem for p in (folder / stem).glob("*.py") if _QUESTION.match(p.stem))
        if questions:
            graded[stem] = sorted(questions, key=lambda q: int(q.split(".")[1]))
    return graded


def points(stem: str, question: str, *, notebooks_dir: Path | None = None) -> float:
    """The points exercise ``question`` of notebook ``stem`` is worth (its test file's ``points``; 1 if unset)."""
    test = _course(notebooks_dir) / "grading" / stem / f"{question}.py"
    if not test.is_file():
        raise ValueError(f"no tests for exercise {question!r} of {stem!r}: {test} is missing")
    found = re.search(r"^points\s*=\s*([0-9.]+)\s*$", test.read_text(encoding="utf-8"), re.MULTILINE)
    return float(found[1]) if found else 1.0


def _fresh(dest: Path, force: bool, command: str = "assign") -> None:
    if dest.exists():
        if not dest.is_dir():
            raise ValueError(f"dest must be a folder to create, got the file {str(dest)!r}")
        if any(dest.iterdir()):
            if not (force and (dest / _MARKER).exists()):
                hint = (
                    " (it was not written by workbench course assign or copy)" if force else "; --force replaces a copy"
                )
                raise ValueError(f"dest {str(dest)!r} exists and is not empty{hint}")
            shutil.rmtree(dest)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / _MARKER).write_text(f"written by workbench course {command}; replaced by --force\n")


_COPY_README = """# Attention Geometry Workbench: the course

A writable copy of the course as it ships with the package (attention-workbench {version}):

    notebooks/            the notebooks (jupytext percent scripts), reference.md beside them
    notebooks/solutions/  the worked solutions
    notebooks/grading/    the tests of every graded exercise (otter-grader)
    book/                 the site's sources (syllabus, bibliography, Sphinx configuration)
    experiments/results/  the committed experiment runs notebooks 12-14 read

From this folder: `workbench lab` opens the notebooks in JupyterLab, `workbench book build` builds the site into
book/_build/html, and `workbench course assign STUDENTS` writes the student copy (no solutions).  The notebooks
read the committed runs installed with the package, so editing experiments/results here changes nothing they show.

The code is MIT-licensed (`LICENSE`) and the content CC BY 4.0 (`LICENSE-CONTENT.md`); cite it with CITATION.cff.
"""


def copy_course(dest: Path, *, force: bool = False) -> list[Path]:
    """Write a writable copy of the whole course into ``dest``; return the files written.

    The course is :func:`workbench.resources.course_files` under :func:`workbench.resources.course_root`: the
    repository in a checkout, the copy installed with the package otherwise (which belongs to the install and is not
    to be edited in place).  ``dest`` gets a README saying what is where and what to run.

    Raises
    ------
    ValueError
        ``dest`` exists and is not empty (``force=True`` replaces an earlier copy made by ``workbench course``,
        nothing else).
    """
    from workbench import __version__

    root = course_root()
    dest = Path(dest)
    _fresh(dest, force, "copy")
    written = []
    for relative in course_files(root):  # notebooks/reference.md is a link in the repository: its text is copied
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / relative, dest / relative)
        written.append(dest / relative)
    (dest / "README.md").write_text(_COPY_README.format(version=__version__), encoding="utf-8")
    written.append(dest / "README.md")
    return written


_STUDENT_README = """# {title}: the student copy

Open the notebooks in JupyterLab (`jupyter lab` in this folder, or `workbench lab --dir .`).  Each graded
exercise ends with a cell `grader.check("NN.k")`: run it to see which checks your answer passes, with a
message for each one it does not.  The exercise text says which variable holds your answer (`answer_NN_k`).
Checks that pass are a good sign, not a proof: the grader runs the same checks on your submitted notebook.

Submit each notebook as the `.ipynb` file it is (keep its name).  The mathematical reference is
`reference.md`.  The content is licensed CC BY 4.0 and the code MIT (`LICENSE-CONTENT.md`, `LICENSE`).
"""


def assign(dest: Path, *, notebooks_dir: Path | None = None, force: bool = False) -> list[Path]:
    """Write the student copy of the course into ``dest``; return the files written.

    ``dest`` gets every notebook as ``STEM.ipynb`` (no outputs) with, after the notebook's first code cell, one
    that loads the grader (``grader = otter.Notebook(tests_dir="tests/STEM")``) and, after the code cell of each
    graded exercise, ``grader.check("NN.k")``; the tests under ``tests/STEM/``; ``reference.md``; a README for the
    students; and the licences.  No solution is copied, and the copy is checked for one before returning.

    Raises
    ------
    ValueError
        ``dest`` exists and is not empty (``force=True`` replaces an earlier copy made by this function, nothing
        else), or a graded exercise has no code cell in its notebook.
    """
    import jupytext
    import nbformat

    course = _course(notebooks_dir)
    dest = Path(dest)
    graded = graded_exercises(course)
    _fresh(dest, force)
    written = []
    for script in _notebooks(course):
        notebook = jupytext.read(script, fmt="py:percent")
        questions = graded.get(script.stem, [])
        cells, pending, loaded = [], None, False
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                if pending is not None:
                    cells.append(nbformat.v4.new_code_cell(f'grader.check("{pending}")'))
                    pending = None
                found = _EXERCISE.search(cell.source)
                if found and found[1] in questions:
                    pending = found[1]
            cells.append(cell)
            if cell.cell_type == "code" and not loaded:
                loaded = True
                loader = (
                    f'import otter  # checks the exercises\n\ngrader = otter.Notebook(tests_dir="tests/{script.stem}")'
                )
                cells.append(nbformat.v4.new_code_cell(loader))
        if pending is not None:
            cells.append(nbformat.v4.new_code_cell(f'grader.check("{pending}")'))
        checked = {
            c.source.split('"')[1] for c in cells if c.cell_type == "code" and c.source.startswith("grader.check")
        }
        if missing := sorted(set(questions) - checked):
            raise ValueError(f"{script.name}: the graded exercise(s) {', '.join(missing)} have no exercise heading")
        notebook.cells = cells
        notebook.metadata.pop("jupytext", None)
        target = dest / f"{script.stem}.ipynb"
        nbformat.write(notebook, target)
        written.append(target)
        if questions:
            tests = dest / "tests" / script.stem
            tests.mkdir(parents=True)
            for question in questions:
                shutil.copy2(course / "grading" / script.stem / f"{question}.py", tests / f"{question}.py")
                written.append(tests / f"{question}.py")
    for name, source in (
        ("reference.md", course / "reference.md"),
        ("LICENSE", course_root() / "LICENSE"),
        ("LICENSE-CONTENT.md", course_root() / "LICENSE-CONTENT.md"),
    ):
        if source.is_file():
            shutil.copy2(source, dest / name)
            written.append(dest / name)
    (dest / "README.md").write_text(_STUDENT_README.format(title="Attention Geometry Workbench"))
    written.append(dest / "README.md")
    leaked = [
        p
        for p in dest.rglob("*")
        if "solution" in p.name.lower() or (p.suffix == ".ipynb" and "### Solution" in p.read_text())
    ]
    if leaked:  # pragma: no cover - a guard on this function's own output
        raise RuntimeError(f"the student copy holds a solution: {leaked}")
    return written


def autograder(stem: str, target: Path, *, notebooks_dir: Path | None = None) -> Path:
    """Otter's autograder zip for notebook ``stem`` (its tests, no requirements to install), written to ``target``."""
    folder = _course(notebooks_dir) / "grading" / stem
    if not folder.is_dir():
        raise ValueError(f"stem must name a notebook with graded exercises (notebooks/grading/STEM), got {stem!r}")
    target = Path(target)
    with zipfile.ZipFile(target, "w") as archive:
        for test in sorted(folder.glob("*.py")):
            archive.write(test, f"tests/{test.name}")
        # Otter's defaults, spelled out: no PDF, no requirements, debug off (a student's error fails its tests only).
        archive.writestr("otter_config.json", json.dumps({"lang": "python"}))
    return target


@dataclass
class GradeRow:
    """One graded submission: who, which notebook, the points per exercise, and how grading went."""

    student: str
    notebook: str
    file: str
    scores: dict[str, float] = field(default_factory=dict)
    possible: dict[str, float] = field(default_factory=dict)
    status: str = "graded"
    seconds: float = 0.0
    messages: dict[str, list[str]] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """The points scored over every graded exercise of the notebook."""
        return float(sum(self.scores.values()))

    @property
    def out_of(self) -> float:
        """The points possible."""
        return float(sum(self.possible.values()))


def _identify(path: Path, root: Path, stems: list[str]) -> tuple[str | None, str]:
    """(notebook stem, student) of submission ``path``: the longest stem in its name; the rest names the student."""
    name = path.stem.removesuffix("_solutions")
    matches = [s for s in stems if s in name] or [s for s in stems if name.startswith(s.split("_")[0] + "_")]
    stem = max(matches, key=len) if matches else None
    rest = name.replace(stem, "") if stem else name
    parts = [*path.relative_to(root).parent.parts, rest.strip("_-. ")]
    return stem, "/".join(p for p in parts if p) or path.stem


def _grade_one(archive: str, submission: str, result: str) -> None:
    """Grade one submission with otter (in this process) and write the scores as JSON, atomically."""
    from otter.api import grade_submission

    path = os.environ.get("PATH", "")
    try:
        results = grade_submission(submission, archive, quiet=True).to_dict()
        scores = {
            q: {
                "score": float(r["score"]),
                "possible": float(r["possible"]),
                "messages": [t["message"] for t in r["test_case_results"] if not t["passed"]],
            }
            for q, r in results.items()
        }
    except Exception as exc:  # the row says why; the worker goes on with the next submission
        lines = [line for line in str(exc).splitlines() if line.strip()]
        scores = {"error": f"{type(exc).__name__}: {lines[-1] if lines else ''}"}
    finally:
        os.environ["PATH"] = path  # otter's runner prepends a conda folder on every call
    partial = Path(result).with_suffix(".partial")
    partial.write_text(json.dumps(scores))
    partial.replace(result)


def _serve() -> None:
    """A grading worker: read tab-separated ``ARCHIVE SUBMISSION RESULT`` lines from stdin and grade each in turn.

    One worker grades many submissions, so otter (several seconds of imports) is loaded once per worker rather
    than once per submission; each submission still runs in a fresh kernel of its own.
    """
    import otter.api  # noqa: F401  (loaded before the first submission's clock starts)

    Path(sys.argv[2]).touch()  # ready
    for line in sys.stdin:
        if line.strip():
            _grade_one(*line.rstrip("\n").split("\t"))


def grade(
    submissions: Path,
    out: Path | None = None,
    *,
    notebooks_dir: Path | None = None,
    workers: int | None = None,
    timeout: float = 600.0,
    progress: Callable[[GradeRow], None] | None = None,
) -> list[GradeRow]:
    """Grade every submitted notebook under ``submissions`` (``.ipynb`` or percent ``.py``); write a CSV to ``out``.

    The notebook a file answers is the course stem in its name (``alice/03_heat_on_a_swiss_roll.ipynb``,
    ``bob_03_heat_on_a_swiss_roll.ipynb``); the rest of its path names the student.  Each submission is executed
    in a fresh kernel by otter on one of ``workers`` worker processes (default the CPU count; each loads otter
    once) and stopped after ``timeout`` seconds (its worker is killed with the kernel; a fresh one takes the next).
    The CSV has one row per submission: student, notebook, file, the points of each exercise ``NN.k`` of the
    course, total, possible, status (``graded``, ``timed out``, ``not a course notebook``, ``failed: …``) and
    seconds.  Rows come in path order, ``progress`` is called with each row as it finishes.
    """
    submissions = Path(submissions)
    if not submissions.is_dir():
        raise ValueError(f"submissions must be a folder of submitted notebooks, got {str(submissions)!r}")
    workers = check_integer("workers", workers, 1) if workers is not None else max(1, os.cpu_count() or 1)
    if not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    course = _course(notebooks_dir)
    graded = graded_exercises(course)
    stems = [p.stem for p in _notebooks(course)]
    files = sorted(
        p
        for p in submissions.rglob("*")
        if p.suffix in (".ipynb", ".py") and p.is_file() and ".ipynb_checkpoints" not in p.parts
    )
    if not files:
        raise ValueError(f"submissions holds no notebook (.ipynb or .py) under {str(submissions)!r}")
    rows, jobs = [], []
    with tempfile.TemporaryDirectory(prefix="workbench-grade-") as tmp:
        work = Path(tmp)
        archives: dict[str, Path] = {}
        for index, path in enumerate(files):
            stem, student = _identify(path, submissions, stems)
            row = GradeRow(student=student, notebook=stem or "", file=str(path.relative_to(submissions)))
            rows.append(row)
            if stem is None or stem not in graded:
                row.status = "not a course notebook" if stem is None else "no graded exercise"
                continue
            if stem not in archives:
                archives[stem] = autograder(stem, work / f"{stem}.zip", notebooks_dir=course)
            folder = work / f"submission-{index}"
            folder.mkdir()
            notebook = folder / f"{stem}.ipynb"
            if path.suffix == ".py":
                import jupytext

                jupytext.write(jupytext.read(path, fmt="py:percent"), notebook)
            else:
                shutil.copy2(path, notebook)
            row.possible = {q: points(stem, q, notebooks_dir=course) for q in graded[stem]}
            jobs.append((row, archives[stem], notebook, folder / "result.json"))
        _run(jobs, workers, timeout, progress)
    if out is not None:
        write_csv(rows, out, [q for stem in graded for q in graded[stem]])
    return rows


_STARTUP = 120.0  # seconds a fresh worker may take to load otter before its first submission's clock runs


class _Worker:
    """A grading worker process (:func:`_serve`) in a session of its own, its output in a log file."""

    def __init__(self, folder: Path, number: int) -> None:
        self.log = folder / f"worker-{number}.log"  # a file, not a pipe: otter and the kernel talk a lot
        self.ready = folder / f"worker-{number}.ready"
        env = dict(os.environ)
        env.pop("MPLBACKEND", None)
        with self.log.open("w") as log:
            # A session of its own: a timeout stops the kernel otter started too (an endless loop runs there).
            self.process = subprocess.Popen(
                [sys.executable, "-m", "workbench.course", "--serve", str(self.ready)],
                cwd=folder,
                env=env,
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                text=True,
            )
        self.job = None
        self.start, self.offset, self.waiting = 0.0, 0, True

    def give(self, job) -> None:
        """Send one job (row, archive, notebook, result) to the worker."""
        _row, archive, notebook, result = job
        self.job, self.start, self.offset = job, time.monotonic(), self.log.stat().st_size
        self.waiting = not self.ready.exists()  # a fresh worker: the clock starts once otter is loaded
        self.process.stdin.write(f"{archive}\t{notebook}\t{result}\n")
        self.process.stdin.flush()

    def last_line(self) -> str:
        """The last meaningful line the worker wrote since its job began (why it died)."""
        with self.log.open("rb") as handle:
            handle.seek(self.offset)
            text = handle.read().decode(errors="replace")
        lines = [line for line in text.splitlines() if line.strip() and "WARNING" not in line]
        return lines[-1] if lines else f"exit status {self.process.returncode}"

    def stop(self, kill: bool = False) -> None:
        """Close the worker's input (it exits) or kill its whole session (the kernel with it)."""
        if kill:
            os.killpg(self.process.pid, signal.SIGKILL)
        else:
            self.process.stdin.close()
        self.process.wait()


def _run(jobs, workers: int, timeout: float, progress) -> None:
    """Grade ``jobs`` on ``workers`` worker processes; a submission past ``timeout`` seconds has its worker killed."""
    pending, pool, spawned = list(jobs), [], 0
    folder = Path(jobs[0][2]).parents[1] if jobs else None
    try:
        while pending or any(w.job for w in pool):
            pool = [w for w in pool if w.job is not None or w.process.poll() is None]  # an idle worker that died
            for worker in pool:
                if worker.job is None and pending:
                    worker.give(pending.pop(0))
            while pending and len(pool) < workers:
                pool.append(_Worker(folder, spawned))
                spawned += 1
                pool[-1].give(pending.pop(0))
            time.sleep(0.2)
            for worker in list(pool):
                if worker.job is None:
                    continue
                row, _archive, _notebook, result = worker.job
                if worker.waiting and worker.ready.exists():
                    worker.waiting, worker.start = False, time.monotonic()
                # A worker still loading otter gets a start-up allowance on top of the submission's time.
                elapsed = time.monotonic() - worker.start - (_STARTUP if worker.waiting else 0.0)
                done, dead = result.is_file(), worker.process.poll() is not None
                if not (done or dead or elapsed >= timeout):
                    continue
                row.seconds = round(elapsed, 1)
                if done:
                    scores = json.loads(result.read_text())
                    if "error" in scores:
                        row.status = f"failed: {scores['error']}"
                    for question, r in scores.items() if "error" not in scores else ():
                        row.scores[question] = r["score"]
                        row.possible[question] = r["possible"]
                        row.messages[question] = r["messages"]
                    worker.job = None
                else:  # timed out or died: this worker is done for; the next job gets a fresh one
                    if not dead:
                        worker.stop(kill=True)
                        row.status = f"timed out after {timeout:g} s"
                    else:
                        row.status = "failed: " + worker.last_line()
                    pool.remove(worker)
                if progress is not None:
                    progress(row)
    finally:
        for worker in pool:
            worker.stop(kill=worker.job is not None)


def write_csv(rows: list[GradeRow], out: Path, questions: list[str]) -> Path:
    """Write ``rows`` as CSV: student, notebook, file, one column per exercise, total, possible, status, seconds."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "notebook", "file", *questions, "total", "possible", "status", "seconds"])
        for row in rows:
            cells = [row.scores.get(q, "") if q in row.possible else "" for q in questions]
            writer.writerow(
                [row.student, row.notebook, row.file, *cells, row.total, row.out_of, row.status, row.seconds]
            )
    return out


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:  # a grading worker of :func:`grade`
    _serve()
