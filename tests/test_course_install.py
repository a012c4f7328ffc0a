"""The syllabus's install runs the whole course: a fresh virtual environment, exactly the syllabus's lines, then
every notebook and every solution executed by that environment's kernel from a folder that is not ``notebooks/``.

Slow (a full install: ~2–4 min with a warm pip cache, then the 42 notebooks two at a time).
"""

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

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


@pytest.mark.slow
def test_a_fresh_venv_with_the_syllabus_install_runs_every_notebook_and_solution(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # No user-level Jupyter kernels or settings: the kernel must be the venv's own.
    env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "jupyter"), JUPYTER_CONFIG_DIR=str(tmp_path / "jcfg"))
    env.pop("MPLBACKEND", None)
    env.pop("WORKBENCH_SCALE", None)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    for line in install_lines():
        words = shlex.split(line)
        assert words[0] == "python"
        done = subprocess.run([str(python), *words[1:]], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    course = ROOT / "notebooks"
    paths = sorted(course.glob("[0-9]*.py")) + sorted((course / "solutions").glob("*_solutions.py"))
    elsewhere = tmp_path / "elsewhere"  # not notebooks/: every notebook must run from any working directory
    elsewhere.mkdir()
    done = subprocess.run(
        [str(python), "-c", EXECUTE, str(elsewhere), *map(str, paths)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    print(done.stdout)
    failures = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert done.returncode == 0 and not failures, failures or done.stderr[-4000:]
    assert len([line for line in done.stdout.splitlines() if line.startswith("ok ")]) == len(paths)
