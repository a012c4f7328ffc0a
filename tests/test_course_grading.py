"""The course's grading: every compute and derive exercise is graded, and the grader tells right from wrong.

Default run: the shape (each compute/derive exercise names its answer ``answer_NN_k``, has otter tests and a
solution that defines the answer; the planted wrong answers are well formed and cover the kinds a teacher sees;
the student copy of the real course holds no solution).  Slow run: every reference solution is graded by
``workbench.course.grade`` exactly as a teacher grades a class and must score full marks, and every planted wrong
answer (a plausible mistake applied to a scratch copy of a solution) must lose points on its exercise.
"""

import re
import tomllib
from collections import Counter
from pathlib import Path

import jupytext
import nbformat
import pytest

from workbench.course import assign, grade, graded_exercises

COURSE = Path(__file__).parents[1] / "notebooks"
PLANTED = Path(__file__).parent / "planted"
NOTEBOOKS = sorted(p for p in COURSE.glob("*.py") if p.name[:1].isdigit())
EXERCISE = re.compile(r"^### Exercise (\d+[a-z]?\.\d+) \((compute|derive|explore)\)", re.MULTILINE)
# The kinds of wrong answer the course review planted (issue 34), each of which the tests must catch somewhere.
REVIEW_KINDS = {
    "sign flip",
    "missing factor 2",
    "missing ½",
    "wrong normalisation",
    "swapped arguments",
    "ddof",
    "wrong interval",
    "swapped targets",
}


def _text(path: Path) -> str:
    return "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")


def _graded_in_text(path: Path) -> list[str]:
    return [n for n, kind in EXERCISE.findall(_text(path)) if kind in ("compute", "derive")]


def _planted(stem: str) -> list[dict]:
    path = PLANTED / f"{stem}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))["planted"] if path.exists() else []


def _solution(stem: str) -> Path:
    return COURSE / "solutions" / f"{stem}_solutions.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_compute_and_derive_exercise_is_graded(path):
    asked = _graded_in_text(path)
    assert asked, f"{path.name} has no compute or derive exercise"
    assert graded_exercises(COURSE).get(path.stem) == asked, f"{path.name}: tests in notebooks/grading/{path.stem}/"
    text, solution = _text(path), _solution(path.stem).read_text(encoding="utf-8")
    for question in asked:
        name = "answer_" + question.replace(".", "_")
        assert f"`{name}`" in text, f"{path.name}: exercise {question} does not name its answer {name}"
        assert re.search(rf"^{name}\s*=", solution, re.MULTILINE), f"{path.stem}_solutions.py never defines {name}"
        tests = (COURSE / "grading" / path.stem / f"{question}.py").read_text(encoding="utf-8")
        assert f'name = "{question}"' in tests and "def test_" in tests and name in tests


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_planted_answers_are_well_formed(path):
    solution = _solution(path.stem).read_text(encoding="utf-8")
    graded = set(graded_exercises(COURSE).get(path.stem, []))
    for planted in _planted(path.stem):
        assert planted["exercise"] in graded, planted
        assert solution.count(planted["old"]) == 1, f"'old' must occur once in the solution: {planted['description']}"
        assert planted["new"] != planted["old"] and planted["kind"] and planted["description"]


def test_the_planted_answers_cover_the_course_and_the_reviewed_kinds():
    planted = [p for path in NOTEBOOKS for p in _planted(path.stem)]
    assert len(planted) >= 46, len(planted)  # the review's 16 and 30 more (issue 34)
    kinds = Counter(p["kind"] for p in planted)
    assert REVIEW_KINDS <= set(kinds), sorted(REVIEW_KINDS - set(kinds))
    assert {path.stem for path in NOTEBOOKS} == {path.stem for path in NOTEBOOKS if _planted(path.stem)}


def test_the_student_copy_of_the_course_holds_no_solution(tmp_path):
    assign(tmp_path / "class")
    files = [p for p in (tmp_path / "class").rglob("*") if p.is_file()]
    assert not [p for p in files if "solution" in p.name.lower()]
    notebooks = sorted(p for p in files if p.suffix == ".ipynb")
    assert [p.stem for p in notebooks] == [p.stem for p in NOTEBOOKS]
    graded = graded_exercises(COURSE)
    for notebook in notebooks:
        sources = [c.source for c in nbformat.read(notebook, as_version=4).cells]
        assert not any(re.search(r"^#+ .*\bSolutions?\b", s, re.MULTILINE) for s in sources), notebook.name
        checks = [s for s in sources if s.startswith("grader.check(")]
        assert checks == [f'grader.check("{q}")' for q in graded[notebook.stem]], notebook.name


def _rounds(stem: str) -> list[list[dict]]:
    """The planted answers of ``stem`` in rounds: one per exercise per round, so each round is one submission."""
    queue = list(_planted(stem))
    rounds = []
    while queue:
        taken, seen = [], set()
        for planted in list(queue):
            if planted["exercise"] not in seen:
                seen.add(planted["exercise"])
                taken.append(planted)
                queue.remove(planted)
        rounds.append(taken)
    return rounds


@pytest.mark.slow
def test_every_planted_answer_fails(tmp_path):
    # The reference solutions earn full marks in tests/test_course_install.py (graded in the syllabus's fresh
    # install); here each round of planted answers (one per exercise) is one submission of the solution.
    submitted, expected = tmp_path / "submitted", {}
    for path in NOTEBOOKS:
        solution = _solution(path.stem).read_text(encoding="utf-8")
        for number, planted in enumerate(_rounds(path.stem)):
            text = solution
            for p in planted:
                text = text.replace(p["old"], p["new"])
            student = f"planted-{number}"
            (submitted / student).mkdir(parents=True, exist_ok=True)
            jupytext.write(jupytext.reads(text, fmt="py:percent"), submitted / student / f"{path.stem}.ipynb")
            expected[(student, path.stem)] = planted
    rows = grade(submitted, tmp_path / "grades.csv", timeout=300)
    assert all(r.status == "graded" for r in rows), [(r.student, r.notebook, r.status) for r in rows]
    assert len(rows) == len(expected)
    passed = []
    for row in rows:
        for planted in expected[(row.student, row.notebook)]:
            question = planted["exercise"]
            if row.scores.get(question, 0.0) >= row.possible[question]:
                passed.append(f"{row.notebook} {question}: {planted['description']}")
    count = sum(len(v) for v in expected.values())
    print(f"{count} planted wrong answers in {len(expected)} submissions; {len(passed)} passed")
    assert not passed, f"planted wrong answers that got full marks: {passed}"


def _tracks() -> dict[str, str]:
    """Notebook number → "core" or "optional", from the syllabus's table of weeks."""
    syllabus = (Path(__file__).parents[1] / "book" / "syllabus.md").read_text(encoding="utf-8")
    table = syllabus[syllabus.index("| Week | Core | Optional |") :].split("\n\n")[0].splitlines()[2:]
    tracks = {}
    for row in table:
        _, _week, core, optional, _ = row.split("|")
        for track, cell in (("core", core), ("optional", optional)):
            for number in re.findall(r"(?:^|;)\s*(\d\d[a-e]?) ", cell):
                tracks[number] = track
    return tracks


def test_the_tracks_hold_every_notebook_once_and_core_prerequisites_are_core():
    tracks = _tracks()
    numbers = [p.name.split("_")[0] for p in NOTEBOOKS]
    assert sorted(tracks) == sorted(numbers)
    for path in NOTEBOOKS:
        first = _text(path).split("**Prerequisites.**", 1)[1]
        prerequisites = first.split("\n\n", 1)[0]
        needed = set(re.findall(r"\b(\d\d[a-e]?)\b", prerequisites)) & set(numbers)
        if tracks[path.name.split("_")[0]] == "core":
            assert {n for n in needed if tracks[n] != "core"} == set(), f"{path.name} (core) needs {needed}"
