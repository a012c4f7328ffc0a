"""The course site: `workbench book build` (workbench/book.py) on fixture courses, and on the real course (slow).

Fast cases build a one-notebook course in a temporary folder: the session labels are extracted (a missing one is
an error naming the notebook), the catalogue page holds every identity of ``workbench list``, MathJax is bundled
and no page loads a script, stylesheet or font from the web, ``--without-solutions`` leaves the solutions out,
and a bad cross-reference fails the build.  The slow case builds the real course and reads it in headless
chromium: maths typeset, every image loaded, every internal link resolving.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import unicodedata
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from workbench import book
from workbench.catalogue import discover

pytest.importorskip("jupytext")
ROOT = Path(__file__).resolve().parents[1]
HAVE_SPHINX = all(importlib.util.find_spec(m) is not None for m in ("sphinx", "myst_nb", "sphinx_book_theme"))
needs_sphinx = pytest.mark.skipif(not HAVE_SPHINX, reason="the book extra (sphinx, myst-nb, …) is not installed")

HEADER = """# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
"""
NOTEBOOK = (
    HEADER
    + """
# %% [markdown]
# # 00 — A first session
#
# Why rows of $P = D^{-1}K$ sum to one.
#
# **Objectives.** After this notebook you can
# - compute $P = D^{-1}K$;
# - read the [mathematical reference](reference.md).
#
# **Prerequisites.** Eigenvalues of symmetric matrices.
#
# **Time.** About 10 minutes in class.

# %%
import matplotlib.pyplot as plt
import numpy as np

fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
ax.plot(np.arange(5), np.arange(5) ** 2)
ax.set_xlabel("$x$")
plt.show()

# %% [markdown]
# Rows sum to one {cite:p}`coifman2006diffusion`:
#
# $$\\sum_j P_{ij} = 1.$$
"""
)
SOLUTION = (
    HEADER
    + """
# %% [markdown]
# # Solutions — 00 A first session
#
# ### Solution 00.1
#
# The sum is $1 + 1 = 2$.

# %%
assert 1 + 1 == 2
"""
)
REFERENCE = """# Mathematical reference

## A.1 Setting

The Gauss kernel $K_{ij} = e^{-\\beta\\lVert x_i - x_j\\rVert^2}$ {cite:p}`coifman2006diffusion`.
"""
BIB = """@article{coifman2006diffusion,
  author = {Coifman, Ronald R. and Lafon, St{\\'e}phane},
  title = {Diffusion maps},
  journal = {Applied and Computational Harmonic Analysis},
  volume = {21}, number = {1}, pages = {5--30}, year = {2006},
}
"""


def _course(root: Path, notebook: str = NOTEBOOK, solution: str | None = SOLUTION) -> tuple[Path, Path]:
    """A fixture course under ``root``: (book folder, notebooks folder)."""
    book_dir, notebooks = root / "book", root / "notebooks"
    book_dir.mkdir(parents=True)
    for name in ("conf.py", "index.md", "syllabus.md", "bibliography.md"):
        shutil.copy2(ROOT / "book" / name, book_dir / name)
    shutil.copytree(ROOT / "book" / "_static", book_dir / "_static")
    (book_dir / "references.bib").write_text(BIB)
    notebooks.mkdir()
    (notebooks / "reference.md").write_text(REFERENCE)
    (notebooks / "00_first.py").write_text(notebook)
    if solution is not None:
        (notebooks / "solutions").mkdir()
        (notebooks / "solutions" / "00_first_solutions.py").write_text(solution)
    return book_dir, notebooks


# -- the session labels ------------------------------------------------------------------------------------------


def test_the_session_labels_are_extracted(tmp_path):
    _, notebooks = _course(tmp_path)
    s = book.session(notebooks / "00_first.py")
    assert (s.number, s.title) == ("00", "A first session")
    assert s.objectives.startswith("After this notebook you can") and "- compute $P = D^{-1}K$;" in s.objectives
    assert "**" not in s.objectives and "Prerequisites" not in s.objectives
    assert s.prerequisites == "Eigenvalues of symmetric matrices."
    assert s.time == "About 10 minutes in class."


@pytest.mark.parametrize("label", book.LABELS)
def test_a_missing_label_is_an_error_naming_the_notebook(tmp_path, label):
    _, notebooks = _course(tmp_path, NOTEBOOK.replace(f"**{label}.**", f"{label}:"))
    with pytest.raises(book.BookError, match=rf"00_first\.py: .*lacks the label\(s\) \*\*{label}\.\*\*"):
        book.session(notebooks / "00_first.py")
    # Staging reports it too, before it writes anything.
    with pytest.raises(book.BookError, match=r"00_first\.py"):
        book.stage(tmp_path / "src", book_dir=tmp_path / "book", notebooks_dir=notebooks, api=False)
    assert not (tmp_path / "src").exists()


def test_a_missing_title_is_an_error(tmp_path):
    _, notebooks = _course(tmp_path, NOTEBOOK.replace("# # 00 — A first session", "# A first session"))
    with pytest.raises(book.BookError, match=r"00_first\.py: .*title '# NN — Title'"):
        book.session(notebooks / "00_first.py")


def _first_cell(objectives: str, after_time: str = "", time: str = "About 10 minutes in class.") -> str:
    """A notebook whose first cell carries ``objectives``, and ``after_time`` in the same cell after the time."""
    return HEADER + (
        "\n# %% [markdown]\n# # 00 — A first session\n#\n"
        + "".join(f"# {line}".rstrip() + "\n" for line in f"**Objectives.** {objectives}".splitlines())
        + "#\n# **Prerequisites.** None.\n#\n"
        + "".join(f"# {line}".rstrip() + "\n" for line in f"**Time.** {time}\n{after_time}".splitlines())
    )


def test_a_label_takes_its_paragraph_not_the_conventions_after_it(tmp_path):
    # The first cell goes on after the time, as the course's do: conventions, then an outline.  The syllabus
    # row keeps the time alone (before this rule it took the rest of the cell, 1,649 characters for notebook 07).
    after = (
        "\nConventions: $\\mathsf P$ is row-stochastic; $L = I - \\mathsf P$ is the positive generator.\n"
        "\nThis notebook\n\n1. splits the energy;\n2. checks the rate.\n"
    )
    _, notebooks = _course(tmp_path, _first_cell("After this notebook you can compute $P$.", after))
    s = book.session(notebooks / "00_first.py")
    assert s.time == "About 10 minutes in class."
    assert s.objectives == "After this notebook you can compute $P$."
    assert s.prerequisites == "None."


def test_a_paragraph_that_introduces_a_list_keeps_the_list(tmp_path):
    # "After this notebook you can", a blank line, then the bullets (loose, with a continuation line): one block.
    objectives = (
        "After this notebook you can\n\n* compute $P = D^{-1}K$ and say why its rows sum to one,\n"
        "  with a sentence that runs on;\n\n* read the reference.\n\nA paragraph after the list."
    )
    _, notebooks = _course(tmp_path, _first_cell(objectives))
    s = book.session(notebooks / "00_first.py")
    assert s.objectives == (
        "After this notebook you can\n\n* compute $P = D^{-1}K$ and say why its rows sum to one,\n"
        "  with a sentence that runs on;\n\n* read the reference."
    )
    assert book._paragraph("1. one\n2. two\n\nafter") == "1. one\n2. two"


def test_a_long_time_is_refused_naming_the_notebook(tmp_path):
    time = "About 60 minutes in class; " + "the code runs quickly, " * 10
    assert len(time) > book.TIME_LIMIT
    _, notebooks = _course(tmp_path, _first_cell("You can compute $P$.", time=time))
    with pytest.raises(book.BookError, match=rf"00_first\.py: the \*\*Time\.\*\* paragraph is {len(time.strip())} "):
        book.session(notebooks / "00_first.py")
    with pytest.raises(book.BookError, match=r"00_first\.py"):
        book.stage(tmp_path / "src", book_dir=tmp_path / "book", notebooks_dir=notebooks, api=False)


def test_every_notebook_of_the_course_has_its_session_labels():
    # The real course: the site build stages every notebook, and stops at the first one whose first cell it
    # cannot read (a missing label, or a time longer than TIME_LIMIT).
    scripts = sorted((ROOT / "notebooks").glob("[0-9]*.py"))
    assert scripts
    problems = []
    for script in scripts:
        try:
            book.session(script)
        except book.BookError as exc:
            problems.append(str(exc))
    assert not problems, "\n".join(problems)


def test_the_syllabus_table_has_a_row_per_session_with_links_into_the_notebooks(tmp_path):
    _, notebooks = _course(tmp_path)
    table = book.syllabus_table([book.session(notebooks / "00_first.py")])
    assert table.startswith(":::{container} workbench-syllabus-wrap\n```{list-table}")
    assert table.rstrip().endswith("```\n:::")
    assert f":widths: {' '.join(map(str, book.SYLLABUS_WIDTHS))}" in table
    assert "* - 00" in table and "{doc}`A first session <notebooks/00_first>`" in table
    # A relative link of the notebook's cell now starts from the syllabus page, one folder up.
    assert "(notebooks/reference.md)" in table


# -- the generated pages and the staged tree ---------------------------------------------------------------------


def test_the_catalogue_page_lists_every_identity_with_its_statement_as_display_maths():
    identities = discover()
    page = book.catalogue_page(identities)
    assert page.count("```{math}") == len(identities)
    for identity in identities:
        assert f"### `{identity.name}`" in page
        assert identity.statement.strip() in page
    assert {f"## {i.area}" for i in identities} <= set(page.splitlines())


def test_markdown_in_a_source_is_literal():
    assert book._escape("a_b *c* [d](e) $x$") == r"a\_b \*c\* \[d\]\(e\) \$x\$"


@pytest.mark.parametrize("solutions", [True, False], ids=["with-solutions", "without-solutions"])
def test_staging_puts_the_pages_mathjax_and_optionally_the_solutions_in_place(tmp_path, solutions):
    book_dir, notebooks = _course(tmp_path)
    source = tmp_path / "_source"
    sessions = book.stage(source, book_dir=book_dir, notebooks_dir=notebooks, api=False, solutions=solutions)
    assert [s.number for s in sessions] == ["00"]
    for page in ("index.md", "syllabus.md", "catalogue.md", "bibliography.md", "notebooks/reference.md"):
        assert (source / page).is_file(), page
    assert (source / "notebooks" / "00_first.py").is_file()
    assert (source / "_static" / "mathjax" / "MathJax.js").is_file()
    assert (source / "_static" / "mathjax" / "config" / f"{book.MATHJAX_CONFIG}.js").is_file()
    index = (source / "index.md").read_text()
    index = index[index.index("```{toctree}") :]  # the table of contents, after the hand-written welcome
    assert index.index("syllabus") < index.index("notebooks/00_first") < index.index("notebooks/reference")
    assert index.index("notebooks/reference") < index.index("catalogue") < index.index("bibliography")
    assert ("notebooks/solutions/00_first_solutions" in index) is solutions
    assert (source / "notebooks" / "solutions").exists() is solutions
    assert "## Sessions" in (source / "syllabus.md").read_text()


def test_staging_refuses_a_folder_it_did_not_stage(tmp_path):
    book_dir, notebooks = _course(tmp_path)
    (tmp_path / "_source").mkdir()
    (tmp_path / "_source" / "mine.txt").write_text("a user's file")
    with pytest.raises(book.BookError, match="was not staged by workbench book build"):
        book.stage(tmp_path / "_source", book_dir=book_dir, notebooks_dir=notebooks, api=False)
    assert (tmp_path / "_source" / "mine.txt").exists()


def test_the_build_refuses_an_output_folder_it_did_not_build(tmp_path):
    book_dir, notebooks = _course(tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    (out / "notes.txt").write_text("a user's file")
    with pytest.raises(book.BookError, match="was not built by workbench book build"):
        book.build(out, book_dir=book_dir, notebooks_dir=notebooks, api=False)
    assert (out / "notes.txt").exists()


@pytest.mark.parametrize(
    ("folder", "name", "message"),
    [("book", "syllabus.md", r"book/syllabus\.md"), ("notebooks", "reference.md", r"notebooks/reference\.md")],
)
def test_a_missing_book_file_is_an_error(tmp_path, folder, name, message):
    book_dir, notebooks = _course(tmp_path)
    (tmp_path / folder / name).unlink()
    with pytest.raises(book.BookError, match=message):
        book.stage(tmp_path / "_source", book_dir=book_dir, notebooks_dir=notebooks, api=False)
    assert not (tmp_path / "_source").exists()


def test_the_reference_is_staged_beside_the_notebooks_from_the_notebooks_folder(tmp_path):
    # The site takes the reference from the notebooks' folder, where JupyterLab resolves the notebooks' links to it
    # (in the repository notebooks/reference.md is a link to book/reference.md).
    assert (ROOT / "notebooks" / "reference.md").is_file()
    book_dir, notebooks = _course(tmp_path)
    book.stage(tmp_path / "_source", book_dir=book_dir, notebooks_dir=notebooks, api=False)
    assert (tmp_path / "_source" / "notebooks" / "reference.md").read_text() == REFERENCE


def test_an_unknown_scale_is_refused(tmp_path, monkeypatch):
    book_dir, notebooks = _course(tmp_path)
    monkeypatch.setenv("WORKBENCH_SCALE", "huge")
    with pytest.raises(book.BookError, match="WORKBENCH_SCALE must be 'small' or 'large', got 'huge'"):
        book.build(tmp_path / "out" / "html", book_dir=book_dir, notebooks_dir=notebooks, api=False)


# -- a real build of a fixture course ----------------------------------------------------------------------------


class _Tags(HTMLParser):
    """Every (tag, attributes) of a page."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _tags(page: Path) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.tags


def _remote_assets(site: Path) -> list[str]:
    """Every script, stylesheet, font or image a page of ``site`` would fetch from the web."""
    found = []
    for page in site.rglob("*.html"):
        for tag, attrs in _tags(page):
            url = attrs.get("src") if tag in ("script", "img", "iframe") else None
            if tag == "link" and set((attrs.get("rel") or "").split()) & {"stylesheet", "preload", "icon", "font"}:
                url = attrs.get("href")
            if url and re.match(r"^(https?:)?//", url):
                found.append(f"{page.relative_to(site)}: <{tag}> {url}")
    for style in site.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", style.read_text(errors="replace")):
            found.append(f"{style.relative_to(site)}: url({url})")
        for url in re.findall(
            r"@import\s+(?:url\()?['\"]?((?:https?:)?//[^)'\"; ]+)", style.read_text(errors="replace")
        ):
            found.append(f"{style.relative_to(site)}: @import {url}")
    return found


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    """The fixture course built with its solutions: the output folder."""
    if not HAVE_SPHINX:
        pytest.skip("the book extra (sphinx, myst-nb, …) is not installed")
    root = tmp_path_factory.mktemp("course")
    book_dir, notebooks = _course(root)
    out = root / "_build" / "html"
    assert book.build(out, book_dir=book_dir, notebooks_dir=notebooks, api=False) == 0
    return out


@needs_sphinx
def test_the_fixture_course_builds_with_its_pages_figure_and_solutions(fixture_site):
    for page in ("index", "syllabus", "catalogue", "bibliography", "notebooks/reference", "notebooks/00_first"):
        assert (fixture_site / f"{page}.html").is_file(), page
    assert (fixture_site / "notebooks" / "solutions" / "00_first_solutions.html").is_file()
    notebook = (fixture_site / "notebooks" / "00_first.html").read_text()
    images = [a["src"] for tag, a in _tags(fixture_site / "notebooks" / "00_first.html") if tag == "img"]
    assert images, "the executed notebook's figure is not in its page"
    assert all((fixture_site / "notebooks" / src).resolve().is_file() for src in images)
    assert "Coifman" in notebook  # the citation resolved against the bibliography
    syllabus = (fixture_site / "syllabus.html").read_text()
    assert "A first session" in syllabus and "Eigenvalues of symmetric matrices." in syllabus


@needs_sphinx
def test_every_page_names_the_copyright_holder_and_both_licences_in_one_footer_line(fixture_site):
    for page in ("index.html", "notebooks/00_first.html"):
        lines = [line for line in (fixture_site / page).read_text().splitlines() if 'class="workbench-licence"' in line]
        assert len(lines) == 1, page
        assert "the Attention Geometry Workbench authors" in lines[0]
        assert "MIT licence (LICENSE)" in lines[0] and "CC BY 4.0 (LICENSE-CONTENT.md)" in lines[0]


@needs_sphinx
def test_mathjax_is_bundled_and_nothing_is_fetched_from_the_web(fixture_site):
    assert (fixture_site / "_static" / "mathjax" / "MathJax.js").is_file()
    fonts = list((fixture_site / "_static" / "mathjax" / "fonts" / "HTML-CSS" / "STIX-Web" / "woff").glob("*.woff"))
    assert fonts, "the web fonts of the HTML-CSS output are not bundled"
    scripts = [a.get("src", "") for tag, a in _tags(fixture_site / "notebooks" / "00_first.html") if tag == "script"]
    assert any(src.startswith("../_static/mathjax/MathJax.js?config=") for src in scripts), scripts
    assert _remote_assets(fixture_site) == []
    # The MathJax subset stays small (the package ships 12 MB).
    size = sum(p.stat().st_size for p in (fixture_site / "_static" / "mathjax").rglob("*") if p.is_file())
    assert size < 4_000_000, size
    # No link to a code host in the page chrome.
    assert "github.com" not in (fixture_site / "index.html").read_text()


@needs_sphinx
def test_without_solutions_the_site_has_no_solutions_part(tmp_path):
    # Markdown cells only: nothing to execute, so the build is quick.
    book_dir, notebooks = _course(tmp_path, NOTEBOOK.split("# %%\nimport")[0])
    out = tmp_path / "_build" / "html"
    assert book.build(out, solutions=False, book_dir=book_dir, notebooks_dir=notebooks, api=False) == 0
    assert not (out / "notebooks" / "solutions").exists()
    assert "Solutions" not in (out / "index.html").read_text()


@pytest.mark.skipif(importlib.util.find_spec("sphinx_revealjs") is None, reason="sphinx-revealjs is not installed")
@needs_sphinx
def test_the_slides_are_one_offline_deck_per_session_with_its_figure_and_references(tmp_path):
    # The fixture notebook with its figure and citation under a numbered section, as the course's notebooks have.
    notebook = NOTEBOOK.replace(
        "# %%\nimport", "# %% [markdown]\n# ## 1. Rows\n#\n# See {cite:t}`coifman2006diffusion`.\n\n# %%\nimport"
    )
    book_dir, notebooks = _course(tmp_path, notebook)
    out = tmp_path / "_build" / "slides"
    index = book.slides(out, book_dir=book_dir, notebooks_dir=notebooks)
    assert index == out / "index.html" and (out / "00_first.html").is_file()
    assert "00 — A first session" in index.read_text()
    deck = (out / "00_first.html").read_text()
    scripts = [a.get("src", "") for tag, a in _tags(out / "00_first.html") if tag == "script"]
    assert "_static/revealjs/dist/reveal.js" in scripts and (out / "_static/revealjs/dist/reveal.js").is_file()
    assert any(src.startswith("_static/mathjax/MathJax.js?config=") for src in scripts), scripts
    assert _remote_assets(out) == []
    images = [a["src"] for tag, a in _tags(out / "00_first.html") if tag == "img"]
    assert len(images) == 1 and (out / images[0]).is_file()  # the section's figure, from the executed notebook
    assert "Coifman" in deck and "References" in deck  # the deck's own list of works
    assert "CC BY 4.0" in deck  # the licence under the title


@needs_sphinx
def test_a_bad_cross_reference_fails_the_build(tmp_path, capfd):
    broken = NOTEBOOK.split("# %%\nimport")[0] + "\n# %% [markdown]\n# See {doc}`no_such_page`.\n"
    book_dir, notebooks = _course(tmp_path, broken, solution=None)
    assert book.build(tmp_path / "_build" / "html", book_dir=book_dir, notebooks_dir=notebooks, api=False) != 0
    assert "no_such_page" in capfd.readouterr().err


# -- executing the notebooks in parallel ---------------------------------------------------------------------------


def _logging_notebook(number: str, log: Path, word: str) -> str:
    """A notebook that appends ``word`` with its start and end times to ``log``, sleeping in between, and prints it."""
    return (
        NOTEBOOK.split("# %%\nimport")[0].replace("00 — A first session", f"{number} — Session {word}")
        + "\n# %%\nimport time\n\nstart = time.time()\ntime.sleep(3)\n"
        + f"with open({str(log)!r}, 'a') as f:\n    f.write(f'{word} {{start}} {{time.time()}}\\n')\n"
        + f"print('printed by {word}')\n"
    )


@needs_sphinx
def test_notebooks_run_at_once_and_only_once_and_a_rebuild_runs_none(tmp_path):
    log = tmp_path / "runs.log"
    book_dir, notebooks = _course(tmp_path, _logging_notebook("00", log, "first"), solution=None)
    (notebooks / "01_second.py").write_text(_logging_notebook("01", log, "second"))
    out = tmp_path / "_build" / "html"
    assert book.build(out, book_dir=book_dir, notebooks_dir=notebooks, api=False, jobs=2) == 0
    runs = {word: (float(a), float(b)) for word, a, b in map(str.split, log.read_text().splitlines())}
    assert sorted(runs) == ["first", "second"], log.read_text()  # run before Sphinx, and not again by myst-nb
    (a0, a1), (b0, b1) = runs["first"], runs["second"]
    assert a0 < b1 and b0 < a1, f"the two notebooks did not run at the same time: {runs}"
    assert "printed by second" in (out / "notebooks" / "01_second.html").read_text()  # the cached outputs
    # Nothing changed: the rebuild runs no notebook, and still has their outputs.
    assert book.build(out, book_dir=book_dir, notebooks_dir=notebooks, api=False, jobs=2) == 0
    assert len(log.read_text().splitlines()) == 2
    assert "printed by first" in (out / "notebooks" / "00_first.html").read_text()


def test_a_failing_notebook_stops_the_build_naming_it(tmp_path, capfd):
    broken = NOTEBOOK.split("# %%\nimport")[0] + "\n# %%\nraise ValueError('a planted failure')\n"
    book_dir, notebooks = _course(tmp_path, broken)
    out = tmp_path / "_build" / "html"
    with pytest.raises(
        book.BookError, match=r"1 notebook\(s\) failed to execute \(tracebacks above\): notebooks/00_first\.py$"
    ):
        book.build(out, book_dir=book_dir, notebooks_dir=notebooks, api=False)
    assert "a planted failure" in capfd.readouterr().err
    assert not out.exists(), "Sphinx ran after a notebook failed"


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True])
def test_the_number_of_jobs_is_checked(tmp_path, jobs):
    book_dir, notebooks = _course(tmp_path)
    with pytest.raises(book.BookError, match=rf"jobs must be an integer >= 1 .*, got {jobs!r}"):
        book.build(tmp_path / "out" / "html", book_dir=book_dir, notebooks_dir=notebooks, api=False, jobs=jobs)


# -- the whole course as one PDF ---------------------------------------------------------------------------------

# A code line far longer than an A4 page is wide; its last word must be printed, on a wrapped line.
LONG_LINE = "words = " + " + ".join(f"'word{i:02d}'" for i in range(30)) + "  # TAILOFTHELONGLINE"


def _pdf_text(path: Path) -> str:
    """The text of the PDF ``path`` (pypdf, else poppler's pdftotext), or skip saying neither is installed.

    NFKC-normalised: the printed fonts set "fi" as one ligature glyph.
    """
    if importlib.util.find_spec("pypdf") is not None:
        import pypdf

        text = "\n".join(page.extract_text() for page in pypdf.PdfReader(path).pages)
    elif shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
    else:
        pytest.skip(
            "reading the PDF's text needs pypdf (pip install pypdf) or pdftotext (apt-get install poppler-utils)"
        )
    return unicodedata.normalize("NFKC", text)


@needs_sphinx
def test_the_course_prints_to_one_pdf_with_its_maths_and_long_code_lines_wrapped(tmp_path):
    from test_lab_browser import need_browser

    need_browser()
    notebook = NOTEBOOK.replace("plt.show()", f"plt.show()\n{LONG_LINE}")
    assert len(LONG_LINE) > 200
    book_dir, notebooks = _course(tmp_path, notebook)
    written = book.pdf(tmp_path / "course.pdf", book_dir=book_dir, notebooks_dir=notebooks)
    assert written == tmp_path / "course.pdf" and written.read_bytes().startswith(b"%PDF-")
    text = _pdf_text(written)
    for expected in ("A first session", "Solution 00.1", "Catalogue of identities", "Diffusion maps"):
        assert expected in text, expected
    assert "TAILOFTHELONGLINE" in text.replace("\n", "").replace(" ", ""), "the long code line was cut"
    assert "\\sum" not in text and "$$" not in text, "maths left as TeX"


def test_the_pdf_name_must_end_in_pdf(tmp_path):
    book_dir, notebooks = _course(tmp_path)
    with pytest.raises(book.BookError, match=r"must end in \.pdf, got .*course\.html"):
        book.pdf(tmp_path / "course.html", book_dir=book_dir, notebooks_dir=notebooks)


# -- the command line --------------------------------------------------------------------------------------------


def _workbench(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "workbench", *args], capture_output=True, text=True, **kwargs)


def test_book_serve_without_a_built_site_is_a_one_line_error(tmp_path):
    out = _workbench("book", "serve", "--out", str(tmp_path / "nothing"), timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().startswith("workbench book: error: no built site in") and "\n" not in out.stderr.strip()


def test_book_build_refuses_an_unknown_scale(tmp_path):
    env = dict(os.environ, WORKBENCH_SCALE="medium")
    out = _workbench("book", "build", "--out", str(tmp_path / "html"), env=env, timeout=60)
    assert out.returncode == 2
    assert "WORKBENCH_SCALE must be 'small' or 'large', got 'medium'" in out.stderr


@needs_sphinx
def test_book_serve_serves_the_site_on_localhost_and_prints_its_url(fixture_site):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "workbench", "book", "serve", "--out", str(fixture_site), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line, line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/syllabus.html", timeout=10) as response:
            assert response.status == 200 and b"A first session" in response.read()
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_course_assign_writes_the_student_copy_and_says_how_many_notebooks(tmp_path):
    out = _workbench("course", "assign", str(tmp_path / "class"), timeout=300)
    assert out.returncode == 0, out.stderr
    count = len(list((ROOT / "notebooks").glob("[0-9]*.py")))
    assert f"{count} notebooks" in out.stdout
    assert len(list((tmp_path / "class").glob("*.ipynb"))) == count


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("course", "grade", "no-such-folder"), "submissions must be a folder of submitted notebooks"),
        (("course", "assign", "{full}"), "exists and is not empty"),
    ],
    ids=["grade-missing-folder", "assign-into-a-full-folder"],
)
def test_course_errors_are_one_line_with_status_2(tmp_path, args, message):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("a teacher's file")
    args = [a.replace("{full}", str(tmp_path / "full")) for a in args]
    out = _workbench(*args, cwd=tmp_path, timeout=120)
    assert out.returncode == 2
    line = out.stderr.strip()
    assert line.startswith("workbench course: error: ") and message in line and "\n" not in line, out.stderr


def test_book_build_refuses_a_jobs_count_below_one(tmp_path):
    out = _workbench("book", "build", "--jobs", "0", "--out", str(tmp_path / "html"), timeout=60)
    assert out.returncode == 2 and "--jobs: must be an integer >= 1, got '0'" in out.stderr


# -- the real course, read in a browser (slow) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def served_course(tmp_path_factory):
    """The real course built into a temporary folder and served on 127.0.0.1: (output folder, base URL)."""
    if not HAVE_SPHINX:
        pytest.skip("the book extra (sphinx, myst-nb, …) is not installed")
    out = tmp_path_factory.mktemp("site") / "_build" / "html"
    assert book.build(out) == 0, "the course site did not build (Sphinx's messages are above)"
    handler = functools.partial(_QuietHandler, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def _pages(out: Path) -> list[str]:
    notebooks = sorted(p for p in (out / "notebooks").glob("[0-9]*.html"))
    return ["syllabus.html", *(f"notebooks/{p.name}" for p in notebooks[:1] + notebooks[-1:]), "bibliography.html"]


_VISIBLE_TEXT = """
const clone = document.querySelector('article') || document.body;
const copy = clone.cloneNode(true);
copy.querySelectorAll('script, style, pre, code, .MathJax_Preview, .MathJax, .MathJax_Display, mjx-container,'
    + ' .highlight, .output, .cell_output').forEach(e => e.remove());
return copy.innerText;
"""


@pytest.mark.slow
def test_the_course_site_reads_well_in_a_browser(served_course):
    from test_lab_browser import chromium, screenshot, wait_for

    out, base = served_course
    with chromium(1280, 1000) as driver:
        for page in _pages(out):
            driver.get(base + page)
            wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", 60, page)
            has_maths = driver.execute_script("return document.querySelectorAll('.math').length") > 0
            if has_maths:
                wait_for(
                    driver,
                    lambda d: d.execute_script(
                        "return window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 &&"
                        " document.querySelectorAll('.MathJax, .MathJax_Display, mjx-container').length > 0"
                    ),
                    60,
                    f"typeset maths on {page}",
                )
                assert driver.execute_script("return document.querySelectorAll('.MathJax .merror').length") == 0, page
            text = driver.execute_script(_VISIBLE_TEXT)
            raw = re.findall(r"\$[^$\n]{1,80}\$|\\\(|\\\[", text)
            assert not raw, f"{page}: maths left as raw TeX: {raw[:5]}"
            broken = driver.execute_script(
                "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
            )
            assert broken == [], f"{page}: images that did not load: {broken}"
            for href in driver.execute_script(
                "return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))"
            ):
                _assert_resolves(out, page, href)
            screenshot(driver, "book-" + page.replace("/", "-").removesuffix(".html"), full_page=True)
            driver.set_window_size(1280, 1000)


@pytest.mark.slow
def test_every_public_name_has_an_api_page_that_renders_its_maths_and_examples(served_course):
    from test_lab_browser import chromium, wait_for

    from workbench.api_reference import identity_api, public_objects, script_api

    out, base = served_course
    objects = public_objects()
    missing = [name for name in objects if not (out / "api" / f"{name}.html").is_file()]
    assert not missing, f"{len(missing)} public names have no API page: {missing[:5]}"
    # The index of each package links every name of its package.
    for package in {name.rpartition(".")[0] for name in objects}:
        links = {(a.get("href") or "").split("#")[0] for tag, a in _tags(out / "api" / f"{package}.html") if tag == "a"}
        names = [n for n in objects if n.rpartition(".")[0] == package]
        assert {f"{n}.html" for n in names} <= links, package
    # The catalogue links each identity to its functions' pages; a notebook ends with the names it imports.
    catalogue = {a.get("href") for tag, a in _tags(out / "catalogue.html") if tag == "a"}
    identity = next(i for i in discover() if i.name == "lie.bch.group_commutator")
    assert identity_api(identity) == ["workbench.lie.commutator_log"]
    assert any(h and h.startswith("api/workbench.lie.commutator_log.html") for h in catalogue)
    script = ROOT / "notebooks" / "03_heat_on_a_swiss_roll.py"
    notebook = {a.get("href") for tag, a in _tags(out / "notebooks" / f"{script.stem}.html") if tag == "a"}
    for name in script_api(script):
        assert any(h and h.startswith(f"../api/{name}.html") for h in notebook), name

    # A sample, read in the browser: the maths of MarkovOperator.from_points typeset, its doctest shown.
    page = "api/workbench.markov.MarkovOperator.html"
    with chromium(1280, 1000) as driver:
        driver.get(base + page)
        wait_for(
            driver,
            lambda d: d.execute_script(
                "return window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 &&"
                " document.querySelectorAll('.MathJax, .MathJax_Display').length > 0"
            ),
            60,
            f"typeset maths on {page}",
        )
        assert driver.execute_script("return document.querySelectorAll('.MathJax .merror').length") == 0
        method = "dt[id='workbench.markov.MarkovOperator.from_points']"
        typeset = driver.execute_script(
            f"return document.querySelector(\"{method}\").parentElement.querySelectorAll('.MathJax').length"
        )
        assert typeset > 0, "from_points' formulas are not typeset"
        text = driver.execute_script(_VISIBLE_TEXT)
        assert ":math:" not in text and "\\mathsf" not in text, "maths left as raw markup"
        examples = driver.execute_script(
            "return [...document.querySelectorAll('div.highlight-pycon pre, div.doctest pre')].map(e => e.innerText)"
        )
        assert any(">>> op = MarkovOperator.from_points(" in e for e in examples), examples[:2]


def _assert_resolves(out: Path, page: str, href: str) -> None:
    """An internal link of ``page`` (no scheme) names an existing file, and an existing anchor where it gives one."""
    parsed = urllib.parse.urlsplit(href)
    if parsed.scheme or href.startswith("//"):
        return
    target = (out / page).parent / urllib.parse.unquote(parsed.path) if parsed.path else out / page
    target = target.resolve()
    if target.is_dir():
        target = target / "index.html"
    assert target.is_file(), f"{page}: link {href!r} names no file"
    if parsed.fragment and target.suffix == ".html":
        ids = {a.get("id") for _, a in _tags(target)} | {a.get("name") for _, a in _tags(target)}
        assert urllib.parse.unquote(parsed.fragment) in ids, f"{page}: link {href!r} names no anchor"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("sphinx_revealjs") is None, reason="sphinx-revealjs is not installed")
def test_every_slide_of_the_course_fits_its_slide(served_course):
    from test_book_browser import deck_overflows
    from test_lab_browser import chromium

    out, _ = served_course
    slides = out.parent / "slides"  # beside the site: its execution cache serves the decks, nothing runs again
    book.slides(slides)
    decks = sorted(slides.glob("[0-9]*.html"))
    assert [p.stem for p in decks] == sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9]*.py"))
    with chromium(1280, 720) as driver:
        bad = [line for deck in decks for line in deck_overflows(driver, deck.as_uri())]
    assert bad == [], bad


# ---- book serve against a hostile folder or request (issue 40, finding 10) ------------------------------------


@pytest.fixture
def hostile_site(tmp_path):
    """A served folder with a page, a link out of it, a folder without index.html; and the server's port."""
    site, secret = tmp_path / "site", tmp_path / "secret.txt"
    (site / "notes").mkdir(parents=True)
    (site / "index.html").write_text("<p>the course</p>")
    (site / "notes" / "a.txt").write_text("a note")
    secret.write_text("outside the site")
    (site / "leak.txt").symlink_to(secret)
    (site / "inside.html").symlink_to(site / "index.html")  # a link within the site is served
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [sys.executable, "-m", "workbench", "book", "serve", "--out", str(site), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert f"http://127.0.0.1:{port}/" in server.stdout.readline()
        yield port
    finally:
        server.terminate()
        server.wait(timeout=20)


def _get(port, path, host=None):
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=host is not None)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_book_serve_serves_only_the_sites_own_files(hostile_site):
    # Before: the link out of the site was followed (200, the outside file) and a folder was listed.
    assert _get(hostile_site, "/index.html") == (200, b"<p>the course</p>")
    assert _get(hostile_site, "/inside.html") == (200, b"<p>the course</p>")
    assert _get(hostile_site, "/notes/a.txt") == (200, b"a note")
    status, body = _get(hostile_site, "/leak.txt")
    assert status == 404 and b"outside the site" not in body
    status, body = _get(hostile_site, "/notes/")
    assert status == 404 and b"a.txt" not in body  # no listing
    assert _get(hostile_site, "/../secret.txt")[0] == 404


def test_book_serve_answers_only_to_this_machines_names(hostile_site):
    # Before: any Host was answered, so a page elsewhere could read the site through DNS rebinding.
    assert _get(hostile_site, "/index.html", host=f"localhost:{hostile_site}")[0] == 200
    assert _get(hostile_site, "/index.html", host="127.0.0.1")[0] == 200
    status, body = _get(hostile_site, "/index.html", host=f"attacker.example:{hostile_site}")
    assert status == 421 and b"the course" not in body


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_book_serve_refuses_a_port_out_of_range_in_one_line(tmp_path, port):
    # Before: --port 70000 ended in an OverflowError traceback.
    (tmp_path / "index.html").write_text("<p>x</p>")
    out = _workbench("book", "serve", "--out", str(tmp_path), "--port", port, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == f"workbench book: error: port must be an integer in [0, 65535], got {port}"
