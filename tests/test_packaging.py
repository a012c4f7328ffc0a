"""The package as others install it: one top-level name, the catalogue found from any folder, a clash named.

The repository keeps ``derivations/`` and ``benchmarks/`` at its root; they install as ``workbench.derivations``
and ``workbench.benchmarks`` (``[tool.setuptools]`` in ``pyproject.toml``), so that a user's own folders of those
names shadow nothing.  The import name ``workbench`` is also an unrelated PyPI project's; when that project's
``workbench/__init__.py`` is installed over this one, the command line says so in one line.

The wheel test (slow) builds the wheel, reads its top-level names, installs it in a fresh virtual environment and
runs the command line from a folder that holds ``derivations/`` and ``benchmarks/`` packages of its own.
"""

import json
import os
import subprocess
import sys
import textwrap
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import workbench
from workbench.catalogue import discover
from workbench.cli import DISTRIBUTION, distributions_providing, foreign_package

ROOT = Path(__file__).parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# Where each installed package's folder lies in the repository.
MAPPED = {"workbench": "workbench", "workbench.derivations": "derivations", "workbench.benchmarks": "benchmarks"}


def _packages_on_disk() -> set[str]:
    found = set()
    for name, folder in MAPPED.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            if folder == "workbench" and relative and relative[0] in {"derivations", "benchmarks"}:
                continue
            found.add(".".join((name, *relative)))
    return found


def test_the_package_list_holds_every_folder_of_the_three_trees_under_workbench():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert listed == _packages_on_disk(), "add the new package to [tool.setuptools] packages in pyproject.toml"
    assert {name.split(".")[0] for name in listed} == {"workbench"}
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {
        "workbench.derivations": "derivations",
        "workbench.benchmarks": "benchmarks",
    }


def test_every_entry_point_and_script_names_a_module_under_workbench():
    points = PYPROJECT["project"]["entry-points"]
    values = [v for group in points.values() for v in group.values()] + list(PYPROJECT["project"]["scripts"].values())
    assert values and all(v.startswith("workbench.") for v in values), values
    assert set(PYPROJECT["project"]["scripts"]) == {"workbench", DISTRIBUTION}


def test_every_module_of_the_catalogue_and_the_benchmarks_is_registered():
    # Entry points live in the installed metadata: a module added to derivations/ needs its line in pyproject.toml
    # and `python -m pip install --no-deps -e .` (README, "Writing your own identities").
    for folder, group in (("derivations", "workbench.derivations"), ("benchmarks", "workbench.benchmarks")):
        modules = {
            f"workbench.{folder}.{p.stem if p.suffix else p.name}"
            for p in (ROOT / folder).iterdir()
            if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").exists())
        }
        registered = set(PYPROJECT["project"]["entry-points"][group].values())
        assert modules == registered, f"{group}: unregistered {sorted(modules - registered)}"


def test_the_catalogue_is_the_same_from_a_folder_with_its_own_derivations_and_benchmarks(tmp_path):
    # A research project with generic folder names: importing either would fail loudly.
    for name in ("derivations", "benchmarks"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the user project\\'s own {name}')\n")
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "list", "--json"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    names = [row["name"] for row in json.loads(done.stdout)]
    assert names == [identity.name for identity in discover()]
    assert done.stderr == ""


def test_a_foreign_init_is_named_in_one_line(monkeypatch):
    assert foreign_package() is None
    monkeypatch.delattr(workbench, "__distribution__")
    line = foreign_package()
    assert line is not None and "\n" not in line
    assert line.startswith(f"the package 'workbench' in {Path(workbench.__file__).parent} is not {DISTRIBUTION}'s")
    assert f"--force-reinstall --no-deps {DISTRIBUTION}" in line


def _dist_info(site: Path, name: str, files: list[str], top_level: str | None = None):
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    if top_level is not None:
        (info / "top_level.txt").write_text(top_level)


def test_the_owners_of_a_top_level_name_are_read_from_top_level_txt_or_the_file_list(tmp_path):
    _dist_info(tmp_path, "other-workbench", ["workbench/__init__.py", "workbench/core.py"])  # no top_level.txt
    _dist_info(tmp_path, "setuptools-built", ["x/__init__.py"], top_level="workbench\n")
    _dist_info(tmp_path, "unrelated", ["workbenchy/__init__.py", "notes/workbench"])
    assert sorted(distributions_providing("workbench", path=[str(tmp_path)])) == ["other-workbench", "setuptools-built"]
    assert distributions_providing("workbench", path=[str(tmp_path / "nowhere")]) == []
    with pytest.raises(TypeError, match=r"^path must be a list of folders \(str or path-like\), got '/tmp'$"):
        distributions_providing("workbench", path="/tmp")
    with pytest.raises(ValueError, match=r"^name must be a top-level package name, got 'a/b'$"):
        distributions_providing("a/b")


# -- the wheel, installed as a user installs it (slow) --------------------------------------------------------

FOREIGN = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=77"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "other-workbench"
        version = "1.0"

        [tool.setuptools]
        packages = ["workbench"]
    """,
    "workbench/__init__.py": '"""Another project that chose the same import name."""\n',
}


def _run(command, **kwargs):
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{command} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_package_that_works_from_any_folder(tmp_path):
    wheels = tmp_path / "wheels"
    build = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(wheels), str(ROOT)])
    log = build.stdout + build.stderr
    assert "Deprecat" not in log, [line for line in log.splitlines() if "Deprecat" in line]
    (wheel,) = wheels.glob("attention_workbench-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith((".dist-info", ".data"))}
        top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
        assert tops == {"workbench"}, tops
        assert archive.read(top_level).decode().split() == ["workbench"]
        assert "workbench/derivations/lie.py" in names and "workbench/benchmarks/bch.py" in names
        licence = [n for n in names if "/licenses/" in n]
        assert {Path(n).name for n in licence} == {"LICENSE", "LICENSE-CONTENT.md"}, licence

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)])
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    installed = {p.name for p in Path(site).iterdir()} - {"__pycache__"}
    ours = {p for p in installed if p.startswith("attention_workbench") or p == "workbench"}
    assert ours == {"workbench", next(p for p in installed if p.startswith("attention_workbench-"))}

    project = tmp_path / "project"
    for name in ("derivations", "benchmarks"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"raise ImportError('the user project\\'s own {name}')\n")
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    workbench_command = str(env_dir / "bin" / "workbench")
    listed = json.loads(_run([workbench_command, "list", "--json"], cwd=project, env=env).stdout)
    assert [row["name"] for row in listed] == [identity.name for identity in discover()]
    checked = _run([workbench_command, "check", "structure", "--json"], cwd=project, env=env)
    assert json.loads(checked.stdout)["passed"] is True and checked.stderr == ""
    derived = _run([workbench_command, "derive", "bch", "--degree", "3", "--format", "json"], cwd=project, env=env)
    assert derived.stdout.strip()

    # The course travels in the wheel: found installed, its committed results readable from any folder.
    probe = (
        "from workbench.resources import course_root, is_installed; from workbench.experiments import "
        "committed_results; print(is_installed(), course_root().name, (committed_results('induction-paper') / "
        "'results.json').is_file())"
    )
    assert _run([python, "-c", probe], cwd=project, env=env).stdout.split() == ["True", "_course", "True"]
    # `workbench lab` from an empty folder edits a copy, never the install.
    empty = tmp_path / "empty"
    empty.mkdir()
    lab_dir = "from workbench.cli._course import _notebook_dir; print(_notebook_dir(None))"
    opened = _run([python, "-c", lab_dir], cwd=empty, env=env)
    assert opened.stdout.strip() == str(empty / "attention-workbench-course" / "notebooks")
    assert "copied the course into" in opened.stderr and (empty / "attention-workbench-course" / "README.md").is_file()
    # A writable copy, cut down to one notebook and its solution, builds as a site from its own folder.
    _run([workbench_command, "course", "copy", "course"], cwd=project, env=env)
    copy = project / "course"
    for script in [*copy.glob("notebooks/*.py"), *copy.glob("notebooks/solutions/*.py")]:
        if not script.name.startswith("00_"):
            script.unlink()
    _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"{wheel}[book]"])
    built = _run([workbench_command, "book", "build", "--jobs", "1"], cwd=copy, env=env)
    html = copy / "book" / "_build" / "html"
    assert f"built the site in {html}" in built.stderr
    assert (html / "notebooks" / "00_how_to_read_this_workbench.html").is_file()
    assert (html / "notebooks" / "solutions" / "00_how_to_read_this_workbench_solutions.html").is_file()
    assert not list((Path(site) / "workbench" / "_course").rglob("_build")), "a build wrote into the install"

    # The documented manylinux build (README): auditwheel repairs the wheel to a manylinux tag.
    repaired = tmp_path / "wheelhouse"
    _run(
        [
            sys.executable,
            "-m",
            "auditwheel",
            "repair",
            "--plat",
            "manylinux_2_17_x86_64",
            "-w",
            str(repaired),
            str(wheel),
        ]
    )
    (manylinux,) = repaired.glob("*.whl")
    assert "manylinux_2_17_x86_64" in manylinux.name, manylinux.name

    # The unrelated project that shares the import name, installed afterwards, writes its __init__ over ours.
    foreign = tmp_path / "foreign"
    for name, text in FOREIGN.items():
        (foreign / name).parent.mkdir(parents=True, exist_ok=True)
        (foreign / name).write_text(textwrap.dedent(text))
    _run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(foreign)])
    clash = _run([str(env_dir / "bin" / DISTRIBUTION), "list", "--json"], cwd=project, env=env)
    assert json.loads(clash.stdout)
    (line,) = clash.stderr.splitlines()
    assert (
        line.startswith("workbench: warning: the package 'workbench' in ") and "(installed by other-workbench)" in line
    )
