"""Identities from a user's own files (``--path``), and plugins that fail: reported by name, the rest still run.

The template ``examples/kac_return_time.py`` is the identity a new author copies; it is checked here through
``--path`` exactly as its docstring says to run it (Kac's formula, its oracle the stationary law from the
eigenvector).  A plugin that raises on import, registered by its own dist-info entry point, leaves the installed
catalogue readable: one line on stderr names it, and the exit status is 1.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.catalogue import CatalogueError, discover

ROOT = Path(__file__).parents[1]
TEMPLATE = ROOT / "examples" / "kac_return_time.py"
CATALOGUE = [identity.name for identity in discover()]


def run(*args, cwd=None, extra_path=None):
    env = dict(os.environ, COLUMNS="200")
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=600
    )


def test_the_template_checks_and_derives_from_its_file():
    out = run("check", "markov.kac", "--path", str(TEMPLATE), "--json")
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["passed"] is True and document["unloaded"] == []
    assert [(r["name"], r["backend"]) for r in document["results"]] == [
        ("markov.kac.return_time", "sympy"),
        ("markov.kac.return_time", "numpy"),
    ]
    derived = run("derive", "markov.kac.return_time", "--path", str(TEMPLATE))
    assert derived.returncode == 0, derived.stderr
    decided = [line for line in derived.stdout.splitlines() if line.startswith("✓ ")]
    assert len(decided) == 2 and "Theorem 1.7.7" in derived.stdout


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "kac.py").write_text(TEMPLATE.read_text(encoding="utf-8"), encoding="utf-8")
    # A helper beside it (imported by a neighbour, never read for identities) and a module without identities.
    (folder / "_shared.py").write_text("raise RuntimeError('a helper is not read for identities')\n")
    (folder / "notes.py").write_text("TITLE = 'no identities here'\n")
    (folder / "broken.py").write_text("import no_such_module_anywhere\n")
    return folder


def test_a_folder_is_read_file_by_file_and_a_broken_file_is_named_while_the_rest_load(tmp_path):
    out = run("list", "--json", "--path", str(_folder(tmp_path)), cwd=tmp_path)
    assert out.returncode == 1
    assert [row["name"] for row in json.loads(out.stdout)] == sorted([*CATALOGUE, "markov.kac.return_time"])
    (line,) = out.stderr.splitlines()
    assert line.startswith("workbench list: error: file ")
    assert "broken.py' failed to load: ModuleNotFoundError(\"No module named 'no_such_module_anywhere'\")" in line
    assert line.endswith("; its identities are left out")


def test_check_runs_the_identities_that_loaded_and_exits_one_for_the_file_that_did_not(tmp_path):
    out = run("check", "markov.kac", "--json", "--path", str(_folder(tmp_path)))
    assert out.returncode == 1
    document = json.loads(out.stdout)
    assert document["summary"] == {"total": 2, "passed": 2, "failed": 0}
    assert document["passed"] is False and len(document["unloaded"]) == 1 and "broken.py" in document["unloaded"][0]


def test_a_file_may_import_its_neighbours(tmp_path):
    (tmp_path / "helpers.py").write_text("SIZE = 5\n")
    (tmp_path / "uses_helper.py").write_text(
        TEMPLATE.read_text(encoding="utf-8").replace(
            "from workbench.catalogue import", "from helpers import SIZE  # noqa: F401\nfrom workbench.catalogue import"
        )
    )
    out = run("list", "--json", "--path", str(tmp_path / "uses_helper.py"))
    assert out.returncode == 0, out.stderr
    assert "markov.kac.return_time" in [row["name"] for row in json.loads(out.stdout)]


def test_a_plugin_that_fails_to_import_is_named_and_the_catalogue_still_lists(tmp_path):
    info = tmp_path / "broken_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[workbench.derivations]\nbroken = broken_plugin\n")
    (tmp_path / "broken_plugin.py").write_text("raise ImportError('the plugin is broken')\n")
    out = run("list", "--json", extra_path=tmp_path)
    assert out.returncode == 1
    assert [row["name"] for row in json.loads(out.stdout)] == CATALOGUE
    assert out.stderr.splitlines() == [
        "workbench list: error: entry point 'broken' (broken_plugin) in group 'workbench.derivations' failed to load: "
        "ImportError('the plugin is broken'); its identities are left out"
    ]


@pytest.mark.parametrize(
    ("name", "why"),
    [("nowhere.py", "(not found)"), ("notes.txt", ""), ("empty", "(no .py file)")],
)
def test_a_path_that_is_not_python_is_refused_in_one_line(tmp_path, name, why):
    (tmp_path / "notes.txt").write_text("text")
    (tmp_path / "empty").mkdir()
    out = run("check", "--path", str(tmp_path / name))
    assert out.returncode == 2 and out.stdout == ""
    expected = f"path must be a Python file (.py) or a folder of them, got {str(tmp_path / name)!r}"
    assert out.stderr == f"workbench check: error: {expected}{' ' + why if why else ''}\n"


def test_discover_raises_unless_asked_to_collect_failures(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise ValueError('no')\n")
    with pytest.raises(CatalogueError, match=r"file '.*broken\.py' failed to load: ValueError\('no'\)"):
        discover(paths=[broken])
    failures = []
    assert [i.name for i in discover(paths=[broken], failures=failures)] == CATALOGUE
    assert len(failures) == 1 and "broken.py' failed to load" in failures[0]


def test_a_file_named_alone_must_define_identities(tmp_path):
    lonely = tmp_path / "lonely.py"
    lonely.write_text("X = 1\n")
    with pytest.raises(CatalogueError, match="has no IDENTITIES sequence"):
        discover(paths=[lonely])


def test_the_authors_helpers_refuse_what_has_no_relative_error():
    from workbench.catalogue import by_scale, relative_error

    with pytest.raises(ValueError, match=r"exact must be finite and nonzero for a relative error, got norm 0\.0"):
        relative_error([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"approx must have the shape of exact \(2,\), got \(3,\)"):
        relative_error([1.0, 2.0, 3.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="scale"):
        by_scale("huge", 1, 2)
