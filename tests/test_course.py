"""The teacher's commands: ``workbench course assign`` (a student copy with no solution) and ``course grade``.

A fixture course of one notebook with a compute exercise (graded) and an explore exercise (not graded) is assigned,
answered right, wrong, with an error, with an endless loop and not at all, and graded by otter-grader in real
kernels: the CSV must give each its points and status.  The real course's grading (every reference solution full
marks, every planted wrong answer caught) is ``tests/test_course_grading.py``.
"""

import csv
import json

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from workbench.course import assign, grade, graded_exercises, points

NOTEBOOK = """\
# %% [markdown]
# # 01 — A tiny session
#
# **Objectives.** Compute a mean.
#
# **Prerequisites.** None.
#
# **Time.** 5 minutes in class; the code runs in 1 s.

# %%
import numpy as np

rng = np.random.default_rng(1)

# %% [markdown]
# ## Exercises
#
# ### Exercise 01.1 (compute)
#
# Draw 10 standard normal numbers and compute their sample variance (divide by n − 1).
#
# **Answer in** `answer_01_1`: a dict with keys `"x"` (the 10 numbers) and `"variance"`.

# %%
# your code here

# %% [markdown]
# ### Exercise 01.2 (explore)
#
# Repeat with 1000 numbers.

# %%
# your code here
"""

TESTS = """\
import numpy as np
from otter.test_files import test_case

OK_FORMAT = False
name = "01.1"
points = 2


@test_case(points=1)
def test_keys(answer_01_1):
    assert isinstance(answer_01_1, dict) and {"x", "variance"} <= set(answer_01_1), "keys 'x' and 'variance'"


@test_case(points=1)
def test_variance(answer_01_1):
    x = np.asarray(answer_01_1["x"], dtype=float)
    # oracle: numpy's unbiased variance of the student's own sample; 1e-12 relative covers any summation order
    assert abs(answer_01_1["variance"] - x.var(ddof=1)) <= 1e-12 * x.var(ddof=1), "divide by n - 1 (ddof=1)"
"""

RIGHT = "x = rng.standard_normal(10)\nanswer_01_1 = {'x': x, 'variance': x.var(ddof=1)}"
WRONG = "x = rng.standard_normal(10)\nanswer_01_1 = {'x': x, 'variance': x.var()}"  # ddof = 0
ERROR = "x = rng.standard_normal(10)\nraise RuntimeError('a student error')"
ENDLESS = "while True:\n    pass"


@pytest.fixture
def course(tmp_path):
    folder = tmp_path / "course"
    (folder / "grading" / "01_tiny").mkdir(parents=True)
    (folder / "solutions").mkdir()
    (folder / "01_tiny.py").write_text(NOTEBOOK)
    (folder / "grading" / "01_tiny" / "01.1.py").write_text(TESTS)
    (folder / "solutions" / "01_tiny_solutions.py").write_text(NOTEBOOK.replace("# your code here", RIGHT, 1))
    (folder / "reference.md").write_text("# Reference\n")
    return folder


def _answered(student_copy, code):
    """The student copy's notebook with its first 'your code here' cell replaced by ``code``."""
    notebook = nbformat.read(student_copy / "01_tiny.ipynb", as_version=4)
    cell = next(c for c in notebook.cells if c.source.strip() == "# your code here")
    cell.source = code
    return notebook


def test_graded_exercises_and_points(course):
    assert graded_exercises(course) == {"01_tiny": ["01.1"]}
    assert points("01_tiny", "01.1", notebooks_dir=course) == 2.0
    with pytest.raises(ValueError, match=r"no tests for exercise '01.2' of '01_tiny'"):
        points("01_tiny", "01.2", notebooks_dir=course)


def test_assign_writes_a_student_copy_without_solutions(course, tmp_path):
    dest = tmp_path / "class"
    written = assign(dest, notebooks_dir=course)
    names = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert names == [
        ".workbench-course-copy",
        "01_tiny.ipynb",
        "LICENSE",
        "LICENSE-CONTENT.md",
        "README.md",
        "reference.md",
        "tests/01_tiny/01.1.py",
    ]
    assert set(written) == {dest / n for n in names if not n.startswith(".")}
    cells = nbformat.read(dest / "01_tiny.ipynb", as_version=4).cells
    sources = [c.source for c in cells]
    # the grader loads after the first code cell; the graded exercise is followed by its check, the explore one not
    assert sources[2].startswith("import otter") and 'tests_dir="tests/01_tiny"' in sources[2]
    assert sources.count('grader.check("01.1")') == 1
    assert sources.index('grader.check("01.1")') == sources.index("# your code here") + 1
    assert not any("01.2" in s for s in sources if s.startswith("grader"))
    assert all(not c.get("outputs") for c in cells if c.cell_type == "code")


def test_assign_refuses_a_folder_it_did_not_write(course, tmp_path):
    dest = tmp_path / "class"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep me")
    with pytest.raises(ValueError, match=r"exists and is not empty; --force replaces a copy"):
        assign(dest, notebooks_dir=course)
    with pytest.raises(ValueError, match=r"was not written by workbench course assign"):
        assign(dest, notebooks_dir=course, force=True)
    assert (dest / "mine.txt").read_text() == "keep me"
    other = tmp_path / "again"
    assign(other, notebooks_dir=course)
    assign(other, notebooks_dir=course, force=True)  # an earlier copy is replaced
    assert (other / "01_tiny.ipynb").is_file()


def test_grader_check_gives_feedback_in_the_student_copy(course, tmp_path):
    dest = tmp_path / "class"
    assign(dest, notebooks_dir=course)
    notebook = _answered(dest, WRONG)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(dest)}}).execute()
    check = next(c for c in notebook.cells if c.source == 'grader.check("01.1")')
    shown = json.dumps(check.outputs)
    assert "01.1" in shown and "divide by n - 1" in shown  # otter names the failing case with the test's message


def test_grade_writes_one_csv_row_per_submission(course, tmp_path):
    dest = tmp_path / "class"
    assign(dest, notebooks_dir=course)
    submitted = tmp_path / "submitted"
    for student, code in (("alice", RIGHT), ("carol", ERROR)):
        (submitted / student).mkdir(parents=True)
        nbformat.write(_answered(dest, code), submitted / student / "01_tiny.ipynb")
    nbformat.write(_answered(dest, WRONG), submitted / "bob_01_tiny.ipynb")
    (submitted / "dan").mkdir()
    jupytext.write(
        jupytext.reads(NOTEBOOK.replace("# your code here", RIGHT, 1), fmt="py:percent"),
        submitted / "dan" / "01_tiny.py",
    )  # a percent script, as `workbench lab` saves one
    (submitted / "notes.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()))
    out = tmp_path / "grades.csv"
    rows = grade(submitted, out, notebooks_dir=course, workers=2)
    by = {r.student: r for r in rows}
    assert set(by) == {"alice", "bob", "carol", "dan", "notes"}
    assert (by["alice"].total, by["alice"].out_of, by["alice"].status) == (2.0, 2.0, "graded")
    assert (by["dan"].total, by["dan"].status) == (2.0, "graded")
    assert (by["bob"].total, by["bob"].out_of) == (1.0, 2.0)  # ddof = 0: keys right, variance wrong
    assert any("divide by n - 1" in m for m in by["bob"].messages["01.1"])
    assert (by["carol"].total, by["carol"].status) == (0.0, "graded")  # the error costs the answer, not the run
    assert by["notes"].status == "not a course notebook"
    table = list(csv.DictReader(out.open()))
    assert [r["student"] for r in table] == [r.student for r in rows]
    assert table[0].keys() == {"student", "notebook", "file", "01.1", "total", "possible", "status", "seconds"}
    assert {r["student"]: r["01.1"] for r in table} == {
        "alice": "2.0",
        "bob": "1.0",
        "carol": "0.0",
        "dan": "2.0",
        "notes": "",
    }


def test_grade_stops_an_endless_submission_and_its_kernel(course, tmp_path):
    dest = tmp_path / "class"
    assign(dest, notebooks_dir=course)
    (tmp_path / "submitted" / "erin").mkdir(parents=True)
    nbformat.write(_answered(dest, ENDLESS), tmp_path / "submitted" / "erin" / "01_tiny.ipynb")
    (tmp_path / "submitted" / "fay").mkdir()
    nbformat.write(_answered(dest, RIGHT), tmp_path / "submitted" / "fay" / "01_tiny.ipynb")
    # One worker: the endless submission's worker is killed and a fresh one grades the next submission.
    row, after = grade(tmp_path / "submitted", notebooks_dir=course, timeout=15, workers=1)
    assert (row.status, row.total, row.out_of) == ("timed out after 15 s", 0.0, 2.0)
    assert row.seconds >= 15
    assert (after.student, after.status, after.total) == ("fay", "graded", 2.0)
    # the kernel that ran the loop was stopped with the grading process (its session): nothing runs the loop now
    import subprocess

    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    assert str(tmp_path) not in listing


def test_grade_refuses_bad_input_by_name(course, tmp_path):
    with pytest.raises(ValueError, match=r"submissions must be a folder of submitted notebooks, got '.*nowhere'"):
        grade(tmp_path / "nowhere", notebooks_dir=course)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"submissions holds no notebook \(\.ipynb or \.py\)"):
        grade(tmp_path / "empty", notebooks_dir=course)
    with pytest.raises(ValueError, match=r"timeout must be a positive number of seconds, got 0"):
        grade(tmp_path / "empty", notebooks_dir=course, timeout=0)
