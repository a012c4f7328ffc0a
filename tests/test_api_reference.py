"""The site's API reference (workbench/api_reference.py): which names get a page, the links, a real Sphinx build.

The whole site, read in a browser (every public name has a page; a sample's maths is typeset and its doctest shown),
is the slow test ``test_every_public_name_has_an_api_page_that_renders_its_maths_and_examples`` in test_book.py.
Here: the package list against the source tree, the pages written, the identity and notebook links, and a Sphinx
build (-W) of the reference of two small packages with the site's own conf.py.
"""

import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.api_reference import API_PACKAGES, api_pages, identity_api, public_objects, script_api
from workbench.catalogue import discover

ROOT = Path(__file__).resolve().parents[1]


def _modules_with_a_public_all() -> set[str]:
    """Every public module or package of workbench/ whose ``__all__`` names something (imported: nn and experiments
    build theirs lazily).  ``workbench`` itself exports only ``__version__``: no page."""
    found = set()
    for path in (ROOT / "workbench").rglob("*.py"):
        relative = path.relative_to(ROOT).with_suffix("").parts
        if any(part.startswith("_") and part != "__init__" for part in relative):
            continue  # private modules (and __main__): their names are exported by their package
        name = ".".join(relative[:-1] if relative[-1] == "__init__" else relative)
        if name != "workbench" and getattr(importlib.import_module(name), "__all__", None):
            found.add(name)
    return found


def test_every_module_with_public_names_is_documented():
    assert set(API_PACKAGES) == _modules_with_a_public_all()


def test_the_pages_name_every_public_name_once_with_its_directive(tmp_path):
    written = api_pages(tmp_path, packages=("workbench.rates", "workbench.resources"))
    objects = public_objects(("workbench.rates", "workbench.resources"))
    assert sorted(written) == sorted(
        ["api/index", "api/workbench.rates", "api/workbench.resources", *(f"api/{name}" for name in objects)]
    )
    assert ".. autofunction:: fit_rate" in (tmp_path / "api" / "workbench.rates.fit_rate.rst").read_text()
    assert (
        ".. autoexception:: CourseNotFound" in (tmp_path / "api" / "workbench.resources.CourseNotFound.rst").read_text()
    )
    assert ".. autodata:: COURSE_FILES" in (tmp_path / "api" / "workbench.resources.COURSE_FILES.rst").read_text()
    package = (tmp_path / "api" / "workbench.resources.rst").read_text()
    assert ".. autosummary::" in package and "   course_root" in package


def test_the_package_list_is_checked():
    with pytest.raises(TypeError, match=r"^packages must be a tuple of module names such as 'workbench.lie', got"):
        public_objects("workbench.lie")
    with pytest.raises(ValueError, match=r"^packages must name modules of workbench \(e.g. 'workbench.lie'\), got"):
        api_pages(Path("unused"), packages=("numpy",))


def test_every_identity_links_to_a_function_it_calls():
    objects = public_objects()
    identities = discover()
    links = {identity.name: identity_api(identity, objects) for identity in identities}
    assert all(links.values()), [name for name, names in links.items() if not names]
    # Oracle: the identity's module imports the function and its check calls it (read in derivations/lie.py).
    assert links["lie.bch.group_commutator"] == ["workbench.lie.commutator_log"]
    assert all(name in objects for names in links.values() for name in names)


def test_a_notebook_links_to_what_it_imports():
    names = script_api(ROOT / "notebooks" / "03_heat_on_a_swiss_roll.py")
    assert "workbench.markov.MarkovOperator" in names and "workbench.expmv.expmv" in names


HAVE_SPHINX = all(importlib.util.find_spec(m) is not None for m in ("sphinx", "myst_nb", "numpydoc"))


@pytest.mark.skipif(not HAVE_SPHINX, reason="the book extra (sphinx, myst-nb, numpydoc) is not installed")
def test_without_torch_the_reference_leaves_out_what_needs_it_and_says_so():
    # The `book` extra does not bring torch (a bare `pip install torch` is a multi-GB CUDA build): a site built
    # there documents everything else.  Oracle: the names recorded are exactly those public_objects cannot reach
    # once `import torch` fails (sys.modules['torch'] = None makes it raise ModuleNotFoundError, name 'torch').
    probe = """
import json, sys
sys.modules['torch'] = None
from workbench.api_reference import public_objects
missing = {}
found = public_objects(missing=missing)
try:
    public_objects(('workbench.nn',))
    raised = None
except ModuleNotFoundError as exc:
    raised = exc.name
print(json.dumps({'found': sorted(found), 'missing': missing, 'raised': raised}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["raised"] == "torch", "without a dict for missing, the missing dependency is raised"
    assert set(result["missing"].values()) == {"torch"}
    packages = {name.rpartition(".")[0] for name in result["missing"]}
    assert all(p == "workbench.nn" or p.split(".")[:2] == ["workbench", "experiments"] for p in packages), packages
    assert "workbench.markov.MarkovOperator" in result["found"] and "workbench.expmv.expmv" in result["found"]
    assert set(result["found"]) | set(result["missing"]) == set(public_objects())
    with pytest.raises(TypeError, match=r"^missing must be a dict to record the names left out, or None, got \[\]"):
        public_objects(missing=[])


def test_the_reference_of_two_packages_builds_with_warnings_as_errors(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy2(ROOT / "book" / "conf.py", source / "conf.py")
    shutil.copy2(ROOT / "book" / "references.bib", source / "references.bib")
    shutil.copytree(ROOT / "book" / "_static", source / "_static")
    (source / "index.md").write_text("# Fixture\n\n```{toctree}\napi/index\n```\n")
    api_pages(source, packages=("workbench.rates", "workbench.resources"))
    out = tmp_path / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", str(source), str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    page = (out / "api" / "workbench.rates.fit_rate.html").read_text()
    assert 'class="math' in page, "fit_rate's :math: roles are not maths nodes"
    assert "highlight-pycon" in page or 'class="doctest' in page, "fit_rate's examples are not shown"
    table = (out / "api" / "workbench.resources.html").read_text()
    assert 'href="workbench.resources.course_root.html' in table


def test_a_name_a_package_re_exports_has_one_page_where_it_is_defined(tmp_path):
    # experiments re-exports RunLog from experiments.common: one page (two would describe its methods twice, a
    # Sphinx warning), and the index links to it.
    pytest.importorskip("torch")
    written = api_pages(tmp_path, packages=("workbench.experiments.common", "workbench.experiments"))
    assert "api/workbench.experiments.common.RunLog" in written
    assert "api/workbench.experiments.RunLog" not in written
    index = (tmp_path / "api" / "workbench.experiments.rst").read_text()
    # A target of the package's own path (references to workbench.experiments.RunLog resolve), linking on.
    assert ".. py:class:: RunLog\n   :no-index-entry:\n\n   See :py:obj:`workbench.experiments.common.RunLog`." in index
    assert "   run_language_model" in index  # defined below the two packages given: documented in the index
