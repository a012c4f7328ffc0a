"""`workbench lab` starts a real JupyterLab that opens the percent scripts as notebooks, and writes no twin.

Checked through the server's REST API: the contents manager serves a script as a notebook and saves edits into
the script (no ``.ipynb`` appears); the settings the command prepares make jupytext's notebook view the default
viewer of Python files; an HTML export loads the bundled MathJax, not a CDN; the lab loads the workbench's own
extension with the course's bibliography.  Without a server: every link in the notebooks names a file the lab
serves and a label that file defines, every citation key is in references.bib, and citations are printed as the
site prints them.  The browser side (a double-click in the file browser opens a notebook; citations, links and
dropdowns as the reader sees them) is tests/test_lab_browser.py.
"""

import contextlib
import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SCRIPT = "00_how_to_read_this_workbench.py"
EXTENSION = "attention-workbench-course"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, data=None, method="GET"):
    body = None if data is None else json.dumps(data).encode()
    request = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read()


def _get(url: str):
    return json.loads(_request(url))


@contextlib.contextmanager
def running_lab(tmp_path: Path, extra: tuple[str, ...] = ()):
    """Run `workbench lab` on a copy of the course and the book; yield (course folder, base URL, token, data dir).

    Every Jupyter folder (config, data, runtime, user settings, workspaces) is under ``tmp_path``.
    """
    if shutil.which("jupyter") is None:
        pytest.skip("JupyterLab (the lab extra) is not installed")
    # The repository's layout: notebooks/ (its links kept: notebooks/reference.md may be one, into book/) beside book/.
    course = tmp_path / "notebooks"
    ignore = shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "_build")
    shutil.copytree(NOTEBOOKS, course, symlinks=True, ignore=ignore)
    shutil.copytree(NOTEBOOKS.parent / "book", tmp_path / "book", symlinks=True, ignore=ignore)
    port, token = _free_port(), "workbench-test"
    # No --allow-root: the command adds it when it runs as root.
    command = [
        sys.executable, "-m", "workbench", "lab", "--dir", str(course),
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
        f"--ServerApp.runtime_dir={tmp_path / 'runtime'}", *extra,
    ]  # fmt: skip
    data = tmp_path / "data"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_DATA_DIR=str(data))
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp_path / "user-settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path / "workspaces")
    with open(tmp_path / "lab.log", "wb") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    _get(f"{base}/api/contents?token={token}")
                    break
                except OSError:
                    time.sleep(0.5)
            else:
                pytest.fail(f"JupyterLab did not answer within 90 s:\n{(tmp_path / 'lab.log').read_text()}")
            yield course, base, token, data
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory.mktemp("lab")) as running:
        yield running


def test_a_script_opens_and_saves_as_a_notebook_without_a_twin(lab):
    course, base, token, _ = lab
    listing = _get(f"{base}/api/contents?token={token}")
    assert SCRIPT in {item["name"] for item in listing["content"]}
    model = _get(f"{base}/api/contents/{SCRIPT}?type=notebook&token={token}")
    assert model["type"] == "notebook"
    assert model["content"]["cells"][0]["cell_type"] == "markdown"
    # Saving an edit writes the percent script itself.
    notebook = model["content"]
    notebook["cells"][0]["source"] += "\n\nAn edit made in the lab."
    _request(f"{base}/api/contents/{SCRIPT}?token={token}", {"type": "notebook", "content": notebook}, "PUT")
    script = (course / SCRIPT).read_text()
    assert "# An edit made in the lab." in script and script.startswith("# ---\n# jupyter:")
    assert "# %% [markdown]" in script  # still a percent script
    names = {item["name"] for item in _get(f"{base}/api/contents?token={token}")["content"]}
    assert not [n for n in names if n.endswith(".ipynb")], names
    assert not list(course.glob("*.ipynb"))


def test_python_files_open_with_the_jupytext_notebook_viewer(lab):
    _, base, token, data = lab
    plugin = _get(f"{base}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={token}")
    default = plugin["schema"]["properties"]["defaultViewers"]["default"]
    assert default.get("python") == "Jupytext Notebook", default
    # The override lives in a workbench-owned folder of the Jupyter data dir, not in the user's settings.
    assert (data / "workbench" / "lab" / "settings" / "overrides.d" / "attention-workbench.json").is_file()


def test_html_export_loads_the_bundled_mathjax(lab):
    _, base, token, _ = lab
    html = _request(f"{base}/nbconvert/html/{SCRIPT}?download=true&token={token}").decode()
    mathjax = [line for line in html.splitlines() if "MathJax.js" in line and "<script" in line]
    assert mathjax and all("file://" in line for line in mathjax), mathjax
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax" not in html


def test_the_lab_loads_the_course_extension_with_every_bibliography_entry(lab):
    _, base, token, data = lab
    page = _request(f"{base}/lab?token={token}").decode()
    config = json.loads(
        re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)[1]
    )
    extension = next(e for e in config["federated_extensions"] if e["name"] == EXTENSION)
    assert _request(f"{base}/lab/extensions/{EXTENSION}/{extension['load']}?token={token}").startswith(b"/*")
    served = json.loads(_request(f"{base}/lab/extensions/{EXTENSION}/static/citations.json?token={token}"))
    written = json.loads(
        (data / "workbench" / "lab" / "labextensions" / EXTENSION / "static" / "citations.json").read_text()
    )
    assert served == written and "error" not in served
    # Oracle: the BibTeX file itself, read as text (one entry per "@type{key,").
    bib = (Path(__file__).parents[1] / "book" / "references.bib").read_text(encoding="utf-8")
    keys = re.findall(r"^@\w+\{([^,\s]+),", bib, re.M)
    assert [e["number"] for e in served["entries"]] == list(range(1, len(keys) + 1))
    assert sorted(e["key"] for e in served["entries"]) == sorted(keys)


# ---- without a server -------------------------------------------------------------------------------------------

_CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
_LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
_LABEL = re.compile(r"^\(([^()\s]+)\)=\s*$", re.M)
_NOT_PROSE = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`", re.S)  # maths and code, where [x](y) is not a link


@functools.cache
def _course_markdown() -> list[tuple[Path, str]]:
    """(path, Markdown text) for the Markdown cells of each notebook and solution, and each Markdown page beside them."""
    jupytext = pytest.importorskip("jupytext")
    pages = []
    for script in sorted([*NOTEBOOKS.glob("*.py"), *NOTEBOOKS.glob("solutions/*.py")]):
        notebook = jupytext.read(script, fmt="py:percent")
        pages.append((script, "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")))
    pages += [(page, page.read_text(encoding="utf-8")) for page in sorted(NOTEBOOKS.glob("*.md"))]
    return pages


def test_every_link_in_the_course_opens_a_file_the_lab_serves_at_a_label_it_defines():
    # The lab's root is notebooks/: a link works there when its file is inside that folder, and its #label is a
    # MyST label "(label)=" of that file (jupyterlab-myst gives the labelled section that id; the site's
    # myst-parser resolves the same link against the same labels).  A bare #label would have to be in the notebook.
    labels = {}
    dead = []
    for path, text in _course_markdown():
        for target in _LINK.findall(_NOT_PROSE.sub("", text)):
            if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # a URL (https:, mailto:, doi:), not a file of the course
            file, _, label = target.partition("#")
            # Not resolved: a symbolic link in notebooks/ is a file of the lab wherever it points.
            linked = Path(os.path.normpath(path.parent / file)) if file else path
            if not linked.is_file() or not linked.is_relative_to(NOTEBOOKS):
                dead.append(f"{path.name}: {target} (no such file in notebooks/)")
                continue
            if label:
                if linked not in labels:
                    labels[linked] = set(_LABEL.findall(linked.read_text(encoding="utf-8")))
                if label not in labels[linked]:
                    dead.append(f"{path.name}: {target} (no label ({label})= in {linked.name})")
    assert not dead, "links that open nothing in the lab:\n" + "\n".join(dead)


def test_every_citation_of_the_course_is_in_the_bibliography():
    bib = (Path(__file__).parents[1] / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,\s]+),", bib, re.M))
    cited = {
        (path.name, key.strip())
        for path, text in _course_markdown()
        for group in _CITE.findall(text)
        for key in group.split(",")
    }
    assert cited, "no citation found: the pattern no longer matches the course's roles"
    assert not {c for c in cited if c[1] not in keys}


_TINY_BIB = """\
@book{zed1999,
  author = {Zed, Anna},
  title = {Last by author},
  year = {1999},
}
@article{abel2001,
  author = {Abel, Niels and G{\\'e}rard, Paul},
  title = {Two authors},
  journal = {J.},
  year = {2001},
}
@misc{untitled,
  title = {A Preprint with {No} Authors},
  note = {No year either.},
}
@book{three2010,
  author = {Three, One and Two, Other and Last, Third},
  title = {Three authors},
  year = {2010},
}
@book{handbook1964,
  editor = {Abramowitz, Milton and Stegun, Irene},
  title = {Handbook},
  publisher = {Dover},
  year = {1964},
}
@book{incomplete2020,
  author = {Solo, Han},
  title = {A book without its publisher},
  year = {2020},
}
"""


def test_citations_are_printed_as_the_site_prints_them(tmp_path, monkeypatch):
    # Oracle: the site's sphinxcontrib-bibtex author-year style ({cite:p} -> "[Abel and Gérard, 2001]",
    # {cite:t} -> "Three et al. [2010]", editors for a book without authors, the title and "n.d." for a preprint
    # without names or year), and its bibliography's order (pybtex "plain": author, year, title; no names first).
    pytest.importorskip("pybtex")
    from workbench.lab import EXTENSION_NAME, lab_extensions_dir

    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "references.bib").write_text(_TINY_BIB, encoding="utf-8")
    folder = lab_extensions_dir(tmp_path / "references.bib")
    citations = json.loads((folder / EXTENSION_NAME / "static" / "citations.json").read_text())
    entries = {e["key"]: e for e in citations["entries"]}
    printed = {k: (e["author"], e["etal"], e["year"]) for k, e in entries.items()}
    assert printed == {
        "zed1999": ("Zed", False, "1999"),
        "abel2001": ("Abel and Gérard", False, "2001"),
        "untitled": ("A Preprint with No Authors", False, "n.d."),
        "three2010": ("Three", True, "2010"),
        "handbook1964": ("Abramowitz and Stegun", False, "1964"),
        "incomplete2020": ("Solo", False, "2020"),
    }
    order = [e["key"] for e in citations["entries"]]
    assert order == ["untitled", "abel2001", "handbook1964", "incomplete2020", "three2010", "zed1999"]
    # An entry pybtex cannot format (the site's build fails on it) still resolves in the lab, and says why.
    assert "missing publisher" in entries["incomplete2020"]["text"]
    assert entries["abel2001"]["text"].startswith("Niels Abel and Paul Gérard. Two authors. J., 2001.")
    package = json.loads((folder / EXTENSION_NAME / "package.json").read_text())
    assert (folder / EXTENSION_NAME / package["jupyterlab"]["_build"]["load"]).is_file()


def test_without_pybtex_the_lab_starts_and_says_citations_show_as_keys(tmp_path, monkeypatch, capsys):
    if shutil.which("jupyter") is None:
        pytest.skip("JupyterLab (the lab extra) is not installed")
    from workbench.lab import lab_command

    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setitem(sys.modules, "pybtex.database", None)  # import pybtex.database raises ImportError
    command = lab_command(NOTEBOOKS)
    assert any(arg.startswith("--LabApp.extra_labextensions_path=") for arg in command)
    assert "citations will show as keys (citations need pybtex" in capsys.readouterr().err
