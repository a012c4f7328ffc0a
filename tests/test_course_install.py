"""The syllabus's install runs the whole course: a fresh virtual environment, exactly the syllabus's lines, then
every solution graded by that environment's ``workbench course grade`` (full marks each) and every notebook
executed by that environment's kernel, both from a folder that is not ``notebooks/``.

Slow: one install shared by the two cases (~1.5–3 min with a warm pip cache), then the 21 graded solutions (CI runs
this case) and the 21 notebooks (about two minutes more), two at a time.
"""

import csv
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).parents[1]
SYLLABUS = ROOT / "book" / "syllabus.md"


def install_lines() -> list[str]:
    """The install commands of the syllabus: the first bash block of "How to run the course"."""
    text = SYLLABUS.read_text(encoding="utf-8")
    section = text[text.index("## How to run the course") :]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)[1]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_the_syllabus_installs_with_pip_only():
    lines = install_lines()
    assert lines and all(line.startswith("python -m pip install ") for line in lines), lines
    assert any("'.[course]'" in line and "'torch==2.13.0'" in line for line in lines), lines


EXECUTE = textwrap.dedent(
    """
    import sys, time
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path

    import jupytext
    from nbclient import NotebookClient

    paths, cwd = [Path(p) for p in sys.argv[2:]], sys.argv[1]

    def run(path):
        notebook = jupytext.read(path)
        start = time.perf_counter()
        try:
            NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": cwd}}).execute()
        except Exception as exc:
            return f"FAIL {path.name}: {type(exc).__name__}: {str(exc).splitlines()[-1] if str(exc) else ''}"
        return f"ok {path.name} {time.perf_counter() - start:.1f} s"

    with ProcessPoolExecutor(2) as pool:
        for line in pool.map(run, paths):
            print(line, flush=True)
    """
)


@pytest.fixture(scope="module")
def syllabus_venv(tmp_path_factory):
    """A fresh virtual environment made by exactly the syllabus's install lines, shared by the tests of this module.

    Returns ``(venv, env, elsewhere)``: the environment's folder, the process environment that puts it first on
    ``PATH`` (with no user-level Jupyter kernels or settings), and a working folder that is not ``notebooks/``.
    """
    root = tmp_path_factory.mktemp("course")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # No user-level Jupyter kernels or settings: the kernel must be the venv's own.
    env = dict(os.environ, JUPYTER_DATA_DIR=str(root / "jupyter"), JUPYTER_CONFIG_DIR=str(root / "jcfg"))
    env.pop("MPLBACKEND", None)
    env.pop("WORKBENCH_SCALE", None)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    for line in install_lines():
        words = shlex.split(line)
        assert words[0] == "python"
        done = subprocess.run([str(python), *words[1:]], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    elsewhere = root / "elsewhere"  # not notebooks/: the course must run from any working directory
    elsewhere.mkdir()
    return venv, env, elsewhere


COURSE = ROOT / "notebooks"
PATHS = sorted(COURSE.glob("[0-9]*.py"))


@pytest.mark.slow
def test_a_fresh_venv_with_the_syllabus_install_grades_every_solution(syllabus_venv, tmp_path):
    # The solutions, graded as a teacher grades (the venv's `workbench course grade`): each runs in a fresh kernel
    # of the venv in a folder of its own, and each reference solution earns full marks.  CI runs this case: the
    # solutions import what the notebooks import (test_the_course_extra_installs_every_package... checks that
    # statically, in seconds), and the default suite runs every notebook in the development environment.
    venv, env, elsewhere = syllabus_venv
    submitted = tmp_path / "submitted" / "reference"
    submitted.mkdir(parents=True)
    for path in PATHS:
        solution = COURSE / "solutions" / f"{path.stem}_solutions.py"
        jupytext.write(jupytext.read(solution, fmt="py:percent"), submitted / f"{path.stem}.ipynb")
    grades = tmp_path / "grades.csv"
    done = subprocess.run(
        [str(venv / "bin" / "workbench"), "course", "grade", str(submitted.parent), "--out", str(grades)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    rows = list(csv.DictReader(grades.open(encoding="utf-8")))
    print("\n".join(f"{r['notebook']} {r['total']}/{r['possible']} {r['status']} {r['seconds']} s" for r in rows))
    assert sorted(r["notebook"] for r in rows) == [p.stem for p in PATHS]
    short = [(r["notebook"], r["status"], r["total"], r["possible"]) for r in rows]
    assert all(s == "graded" and float(t) == float(o) > 0 for _, s, t, o in short), short


@pytest.mark.slow
def test_a_fresh_venv_with_the_syllabus_install_runs_every_notebook(syllabus_venv):
    # Every student notebook executed by the venv's own kernel, from a folder that is not notebooks/ (about two
    # minutes more on two cores; run it with the case above when the install lines or the course change).
    venv, env, elsewhere = syllabus_venv
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", EXECUTE, str(elsewhere), *map(str, PATHS)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    print(done.stdout)
    failures = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert done.returncode == 0 and not failures, failures or done.stderr[-4000:]
    assert len([line for line in done.stdout.splitlines() if line.startswith("ok ")]) == len(PATHS)


def _imported_top_levels(paths) -> set[str]:
    import ast

    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def _requirement_closure(distribution: str, extras: set[str]) -> set[str]:
    """The distributions ``distribution[extras]`` installs, read from the installed metadata (names normalised)."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [(distribution, frozenset(extras))]
    while todo:
        name, wanted = todo.pop()
        key = canonicalize_name(name)
        if (key, wanted) in seen:
            continue
        seen.add((key, wanted))
        try:
            requirements = requires(name) or []
        except PackageNotFoundError:
            continue
        for text in requirements:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in wanted or {""}):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return {name for name, _ in seen}


def test_the_course_extra_installs_every_package_the_notebooks_and_the_library_import():
    # The fresh-venv test above proves this end to end (slowly); this one names the missing package in seconds.
    from importlib.metadata import packages_distributions

    from packaging.utils import canonicalize_name

    sources = [*(ROOT / "notebooks").glob("[0-9]*.py"), *(ROOT / "notebooks" / "solutions").glob("*.py")]
    sources += [p for p in (ROOT / "workbench").rglob("*.py") if "sweep" not in p.name]  # sweeps: the sweep extra
    closure = _requirement_closure("attention-workbench", {"course"})
    # The syllabus's other lines install the weights and the corpus by name (with --no-deps).
    for line in install_lines():
        closure |= {
            canonicalize_name(re.split(r"[=<>!~]", word)[0]) for word in shlex.split(line)[4:] if word[0].isalpha()
        }
    providers = packages_distributions()
    missing = {}
    # qdldl and pypardiso (the sparse extra) are accelerators the library imports only where they are installed;
    # without them the sparse spectrum factorises with SuperLU (tests/test_sparse_spectrum.py), so the course does
    # not need them.
    optional = {"qdldl", "pypardiso"}
    for module in sorted(_imported_top_levels(sources) - set(sys.stdlib_module_names) - {"workbench"} - optional):
        distributions = {canonicalize_name(d) for d in providers.get(module, [])}
        if distributions and not distributions & closure:
            missing[module] = sorted(distributions)
    assert not missing, f"imported but not installed by the course extra: {missing}"
