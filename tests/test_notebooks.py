"""The course: every notebook and every solution executed by a real Jupyter kernel, and the shape a teacher relies on.

Each student notebook opens with objectives, prerequisites and time, ends with a recap and at least three
exercises (compute, derive, explore), never contains a solution, and imports public names only. Each exercise has
a worked solution in ``notebooks/solutions/``, which asserts its answer against an oracle; the suite executes them
all. Every notebook runs in at most 60 s of wall time at the default scale; the times are printed at the end of the
run (``NOTEBOOK_TIMES``).
"""

import re
import time
from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

COURSE = Path(__file__).parents[1] / "notebooks"
NOTEBOOKS = sorted(COURSE.glob("*.py"))
SOLUTIONS = sorted((COURSE / "solutions").glob("*_solutions.py"))
# The course promises a class session of at most a minute of computing per notebook at the default scale.
BUDGET_S = 60.0
# Filled by the execution tests, printed by ``pytest_terminal_summary`` in conftest.py.
NOTEBOOK_TIMES: dict[str, float] = {}

EXERCISE = re.compile(r"^### Exercise (\d+[a-z]?)\.(\d+) \((compute|derive|explore)\)", re.MULTILINE)
SOLUTION = re.compile(r"^### Solution (\d+[a-z]?)\.(\d+)", re.MULTILINE)
PRIVATE_IMPORT = re.compile(r"^\s*(from|import)\s+workbench(\.\w+)*\._\w+", re.MULTILINE)


def _markdown(path: Path) -> list[str]:
    return [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "markdown"]


def _code(path: Path) -> str:
    return "\n".join(cell.source for cell in jupytext.read(path).cells if cell.cell_type == "code")


def _execute(path: Path, monkeypatch) -> tuple[object, float]:
    monkeypatch.delenv("WORKBENCH_SCALE", raising=False)  # the default scale, as a student gets it
    monkeypatch.delenv("MPLBACKEND", raising=False)  # let the kernel use its inline backend
    notebook = jupytext.read(path)
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    NOTEBOOK_TIMES[str(path.relative_to(COURSE))] = seconds
    errors = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"
    ]
    assert errors == []
    return notebook, seconds


def _images(notebook) -> list:
    return [
        o
        for cell in notebook.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if "image/png" in o.get("data", {})
    ]


def _solution_of(path: Path) -> Path:
    return COURSE / "solutions" / f"{path.stem}_solutions.py"


def test_there_is_a_course():
    assert len(NOTEBOOKS) >= 13, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_within_its_budget(path, monkeypatch):
    notebook, seconds = _execute(path, monkeypatch)
    assert _images(notebook), "the notebook should show at least one plot"
    assert seconds <= BUDGET_S, f"{path.name} took {seconds:.1f} s at the default scale (budget {BUDGET_S:.0f} s)"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_executes_and_checks_its_answers(path, monkeypatch):
    # Each solution asserts its answers against an oracle, so executing it without an error is the check.
    assert re.search(r"^\s*assert\b", _code(path), re.MULTILINE), f"{path.name} asserts nothing"
    _, seconds = _execute(path, monkeypatch)
    assert seconds <= BUDGET_S, f"{path.name} took {seconds:.1f} s (budget {BUDGET_S:.0f} s)"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_opens_with_objectives_prerequisites_and_time(path):
    first = _markdown(path)[0]
    assert first.startswith("# "), f"{path.name}: the first cell should carry the title"
    for label in ("**Objectives.**", "**Prerequisites.**", "**Time.**"):
        assert label in first, f"{path.name}: the first cell lacks {label}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_time_is_a_time(path):
    # the syllabus table shows the first paragraph after **Time.**: minutes of class and of code, nothing else
    first = _markdown(path)[0]
    time_text = first.split("**Time.**", 1)[1].strip().split("\n\n", 1)[0]
    assert len(time_text) <= 200, f"{path.name}: Time runs {len(time_text)} characters: {time_text[:80]}…"
    assert re.search(r"\bmin", time_text) and re.search(r"\b(s|seconds?|min(utes?)?)\b", time_text), time_text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_concept_checks_with_answers_before_the_recap(path):
    cells = _markdown(path)
    start = next(i for i, c in enumerate(cells) if c.startswith("## Concept checks"))
    recap = next(i for i, c in enumerate(cells) if c.startswith("## Recap"))
    assert start < recap, f"{path.name}: the concept checks come before the recap"
    text = "\n".join(cells[start:recap])
    checks = re.findall(r"^\*\*Check (\d+)\.\*\*", text, re.MULTILINE)
    answers = re.findall(r"^:::\{dropdown\} Answer\n(.+?)^:::$", text, re.MULTILINE | re.DOTALL)
    assert 3 <= len(checks) <= 5, f"{path.name}: {len(checks)} concept checks (3 to 5 expected)"
    assert checks == [str(k) for k in range(1, len(checks) + 1)], checks
    assert len(answers) == len(checks), f"{path.name}: {len(answers)} answers for {len(checks)} checks"
    # an answer names the right option and explains it (not just a letter)
    assert all(re.match(r"\s*\*?\*?\(?[a-d]\)", a) and len(a.split()) >= 15 for a in answers), answers


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_ends_with_a_recap_and_graded_exercises(path):
    cells = _markdown(path)
    text = "\n".join(cells)
    assert any(c.startswith("## Recap") for c in cells), f"{path.name}: no '## Recap' cell"
    assert any(c.startswith("## Exercises") for c in cells), f"{path.name}: no '## Exercises' cell"
    exercises = EXERCISE.findall(text)
    number = path.name.split("_")[0]
    assert len(exercises) >= 3, f"{path.name}: {len(exercises)} exercises, at least 3 expected"
    assert {n for n, _, _ in exercises} == {number}, f"{path.name}: exercises numbered {exercises}"
    assert {kind for _, _, kind in exercises} == {"compute", "derive", "explore"}, exercises
    assert not re.search(r"^#+ .*\bSolutions?\b", text, re.MULTILINE), f"{path.name} contains a solution heading"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_exercise_has_a_worked_solution(path):
    solution = _solution_of(path)
    assert solution.exists(), f"{path.name}: no solution notebook {solution.relative_to(COURSE)}"
    asked = {(n, k) for n, k, _ in EXERCISE.findall("\n".join(_markdown(path)))}
    answered = set(SOLUTION.findall("\n".join(_markdown(solution))))
    assert asked <= answered, f"{solution.name} lacks solutions {sorted(asked - answered)}"


def test_every_solution_belongs_to_a_notebook():
    stems = {p.stem for p in NOTEBOOKS}
    assert {p.stem.removesuffix("_solutions") for p in SOLUTIONS} <= stems


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: p.name)
def test_notebooks_use_public_names_and_the_documented_scale(path):
    code = _code(path)
    assert not PRIVATE_IMPORT.search(code), f"{path.name} imports a private module: {PRIVATE_IMPORT.search(code)[0]}"
    if "WORKBENCH_SCALE" in code:
        assert "WORKBENCH_SCALE must be" in code, f"{path.name} reads WORKBENCH_SCALE without refusing bad values"
