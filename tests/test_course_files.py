"""The course as files that travel: what the wheel ships (workbench.resources), `workbench course copy`, `--course`.

A wheel install has no repository beside the package, so the build copies the course into ``workbench/_course``;
the slow wheel test in tests/test_packaging.py installs a real wheel and runs the course from it.  These tests pin
the file list (every committed run a notebook, solution or grader opens is in it), the writable copy and the
command line's choice of course folder.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.course import copy_course
from workbench.resources import course_files, course_root, is_installed

ROOT = Path(__file__).resolve().parents[1]
# How the course's texts name a committed run: committed_results("NAME") (optionally / "FILE"), and the helpers of
# notebooks 13 and 14 that read NAME/sweep.json and NAME/<task>/results.json.
_RUN = re.compile(r'(?:committed_results|sweep|runs|rows|first_run|best_bpb)\("([a-z0-9-]+)"\)')
_FILE = re.compile(r'committed_results\("([a-z0-9-]+)"\)\s*/\s*"([^"]+)"')


def _course_texts() -> list[Path]:
    notebooks = ROOT / "notebooks"
    return sorted([*notebooks.glob("*.py"), *notebooks.glob("solutions/*.py"), *notebooks.glob("grading/**/*.py")])


def test_in_a_checkout_the_course_is_the_repository():
    assert course_root() == ROOT and not is_installed()


def test_every_committed_run_a_notebook_opens_ships_with_the_course():
    shipped = {path.as_posix() for path in course_files()}
    runs, files = set(), set()
    for text in map(Path.read_text, _course_texts()):
        runs.update(_RUN.findall(text))
        files.update(f"experiments/results/{run}/{name}" for run, name in _FILE.findall(text))
    # The oracle is the repository: each named run exists there (a typo would make this test vacuous).
    assert runs and all((ROOT / "experiments" / "results" / run).is_dir() for run in runs), sorted(runs)
    for run in sorted(runs):
        prefix = f"experiments/results/{run}/"
        assert any(p.startswith(prefix) and p.endswith(("results.json", "sweep.json")) for p in shipped), run
        # every run's own records: all of its results.json and sweep.json files, as committed
        committed = {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / "experiments" / "results" / run).rglob("*.json")
            if p.name in {"results.json", "sweep.json"}
        }
        assert committed <= shipped, sorted(committed - shipped)[:3]
    assert files and files <= shipped, sorted(files - shipped)


def test_every_notebook_solution_grader_and_site_source_ships():
    shipped = set(course_files())
    tracked = subprocess.run(
        ["git", "ls-files", "notebooks", "book"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    expected = {Path(p) for p in tracked if Path(p).suffix in {".py", ".md", ".bib", ".toml"} or "_static" in p}
    assert expected and expected <= shipped, sorted(expected - shipped)[:5]
    assert {Path("LICENSE"), Path("LICENSE-CONTENT.md"), Path("CITATION.cff")} <= shipped


def test_the_copy_is_a_whole_writable_course_with_a_readme(tmp_path):
    dest = tmp_path / "course"
    written = copy_course(dest)
    assert sorted(p.relative_to(dest) for p in written if p != dest / "README.md") == course_files()
    # The mathematical reference is a link in the repository and a file of the same text in the copy.
    reference = dest / "notebooks" / "reference.md"
    assert not reference.is_symlink()
    assert reference.read_text() == (ROOT / "book" / "reference.md").read_text()
    readme = (dest / "README.md").read_text()
    for command in ("workbench lab", "workbench book build", "workbench course assign"):
        assert command in readme
    (dest / "notebooks" / "00_how_to_read_this_workbench.py").write_text("# edited\n")  # writable
    with pytest.raises(ValueError, match=r"exists and is not empty; --force replaces a copy$"):
        copy_course(dest)
    copy_course(dest, force=True)
    assert (dest / "notebooks" / "00_how_to_read_this_workbench.py").read_text() != "# edited\n"
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"not empty \(it was not written by workbench course assign or copy\)$"):
        copy_course(mine, force=True)
    assert (mine / "notes.txt").read_text() == "mine"


def _workbench(*args, cwd):
    return subprocess.run([sys.executable, "-m", "workbench", *args], cwd=cwd, capture_output=True, text=True)


def test_course_copy_on_the_command_line(tmp_path):
    done = _workbench("course", "copy", "c", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote a copy of the course to c: {len(course_files()) + 1} files")
    assert (tmp_path / "c" / "book" / "conf.py").is_file()


def test_book_refuses_a_course_folder_without_a_course(tmp_path):
    done = _workbench("book", "build", "--course", str(tmp_path), cwd=tmp_path)
    assert done.returncode != 0 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith(
        "--course must be a folder holding book/conf.py and notebooks/ (a checkout or a `workbench course copy`), "
        f"got {str(tmp_path)!r}"
    )


def test_a_build_of_the_installed_course_goes_to_the_current_folder(tmp_path, monkeypatch):
    from workbench import book

    installed = tmp_path / "site-packages" / "workbench" / "_course"
    (installed / "book").mkdir(parents=True)
    monkeypatch.setattr(book, "course_root", lambda: installed)
    monkeypatch.setattr(book, "is_installed", lambda: True)
    monkeypatch.chdir(tmp_path)
    assert book.build_folder() == tmp_path / "_build"  # never inside the install
    assert book.build_folder(tmp_path / "copy" / "book") == tmp_path / "copy" / "book" / "_build"
