"""The course site in a real browser: the syllabus table reads well at 1,400 px, and a concept check's answer folds.

A fixture course is built with `workbench book build` (workbench/book.py): two real notebooks whose first cell
has a paragraph after **Time.** (conventions, an outline), executed with their solutions; the first cell of
every other notebook of the course (markdown only, nothing to execute), so that every real syllabus row is
measured; and a small notebook with a concept check (``:::{dropdown} Answer``).  The site is read in headless
Debian chromium under selenium at a 1,400 × 900 window, after MathJax has typeset it.

Without chromium, chromedriver or selenium the tests are skipped with the reason, except under CI (the
environment variable ``CI`` set), where a missing browser is a failure (the rule of tests/test_lab_browser.py,
whose helpers are used).  Screenshots go to ``$WORKBENCH_SHOTS`` (default /tmp/shots).
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import shutil
import threading
from pathlib import Path

import pytest

from workbench import book

pytest.importorskip("jupytext")
ROOT = Path(__file__).resolve().parents[1]
HAVE_SPHINX = all(
    importlib.util.find_spec(m) is not None for m in ("sphinx", "myst_nb", "sphinx_book_theme", "sphinx_design")
)
# Two quick notebooks (about 10 s each) whose first cell goes on after **Time.**: a conventions paragraph in 06a,
# an outline of the notebook in 08.  Until the syllabus took one paragraph per label, those rows were pages tall.
EXECUTED = ("06a_drift_and_the_witten_laplacian", "08_reading_a_head")
WIDTH, HEIGHT = 1400, 900
# The tallest a syllabus row may be at that width: a row is one session's summary, read at a glance.
MAX_ROW = 400
CONCEPT_CHECK = """# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 99 — A concept check
#
# **Objectives.** Answer a concept check before unfolding its answer, and read a long formula that MathJax breaks
# at its relations: $\\sum_{i=1}^{n}\\sum_{j=1}^{n}\\mathsf P_{ij}f_jg_i = \\sum_{i=1}^{n}\\sum_{j=1}^{n}
# \\frac{\\mathsf K_{ij}}{\\sum_{k=1}^{n}\\mathsf K_{ik}}f_jg_i = \\sum_{i=1}^{n}\\sum_{j=1}^{n}\\mathsf P_{ij}f_jg_i$.
#
# **Prerequisites.** None; a formula it cannot break (one group) must scroll inside its cell:
# ${\\textstyle\\sum_{i=1}^{n}\\sum_{j=1}^{n}\\mathsf P_{ij}f_jg_i = \\sum_{i=1}^{n}\\sum_{j=1}^{n}\\mathsf K_{ij}f_jg_i
# / \\sum_{k=1}^{n}\\mathsf K_{ik} = \\sum_{i=1}^{n}\\pi_if_ig_i}$.
#
# **Time.** 5 minutes in class; nothing to run.
#
# Conventions: $\\mathsf P$ is row-stochastic.
#
# ## Concept check
#
# Do the rows of $\\mathsf P = D^{-1}K$ sum to one?
#
# :::{dropdown} Answer
# Yes: each row of $K$ is divided by its own sum, the folded-answer-marker.
# :::
"""


def _first_cell(script: Path) -> str:
    """The jupytext header and the first markdown cell of ``script``: a page with nothing to execute."""
    text = script.read_text(encoding="utf-8")
    start = text.index("# %% [markdown]")
    end = text.find("\n# %%", start + 1)
    return text[: end if end > 0 else len(text)] + "\n"


def _fixture_course(root: Path) -> Path:
    """The fixture course's notebooks folder under ``root`` (see the module docstring)."""
    notebooks = root / "notebooks"
    (notebooks / "solutions").mkdir(parents=True)
    shutil.copy2(ROOT / "notebooks" / "reference.md", notebooks / "reference.md")
    for script in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        if script.stem in EXECUTED:
            shutil.copy2(script, notebooks / script.name)
            solution = ROOT / "notebooks" / "solutions" / f"{script.stem}_solutions.py"
            if solution.is_file():
                shutil.copy2(solution, notebooks / "solutions" / solution.name)
        else:
            (notebooks / script.name).write_text(_first_cell(script), encoding="utf-8")
    (notebooks / "99_concept_check.py").write_text(CONCEPT_CHECK, encoding="utf-8")
    return notebooks


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The fixture course built and served on 127.0.0.1: (output folder, base URL)."""
    from test_lab_browser import need_browser

    need_browser()
    if not HAVE_SPHINX:
        pytest.skip("the book extra (sphinx, myst-nb, sphinx-design, …) is not installed")
    root = tmp_path_factory.mktemp("course")
    notebooks = _fixture_course(root)
    out = root / "_build" / "html"
    assert book.build(out, notebooks_dir=notebooks, api=False) == 0, (
        "the fixture site did not build (Sphinx's messages above)"
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield out, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _open_typeset(driver, url: str) -> None:
    """Load ``url`` and wait until MathJax has typeset it (the builder's own wait, book._TYPESET)."""
    from test_lab_browser import wait_for

    driver.get(url)
    wait_for(driver, lambda d: d.execute_script("return document.readyState") == "complete", 60, url)
    wait_for(driver, lambda d: d.execute_script(book._TYPESET), 120, f"typeset maths on {url}")


# Every row of the syllabus table and every cell: height, whether its content runs past its box (scrollWidth over
# clientWidth), for the header cells the number of lines their text takes (the distinct tops of its text's boxes),
# and the formulas cut off at the edge of their box.
_MEASURE = """
const table = document.querySelector('table.workbench-syllabus');
if (!table) { return null; }
const lines = (cell) => {
    const tops = new Set();
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) { if (r.width > 0) { tops.add(Math.round(r.top)); } }
    }
    return tops.size;
};
return JSON.stringify({
    table: table.getBoundingClientRect().width,
    window: window.innerWidth,
    rows: [...table.querySelectorAll('tbody tr')].map(tr => ({
        session: tr.cells[0].innerText.trim(),
        height: tr.getBoundingClientRect().height,
    })),
    cells: [...table.querySelectorAll('th, td')].map(c => ({
        text: c.innerText.trim().slice(0, 40),
        scroll: c.scrollWidth,
        client: c.clientWidth,
    })),
    header: [...table.querySelectorAll('thead th')].map(th => ({text: th.innerText.trim(), lines: lines(th)})),
    // A formula MathJax could not break is clipped to its box unless that box scrolls.
    clipped: [...table.querySelectorAll('td .MathJax')].filter(m => {
        const inner = m.querySelector('span.math') || m;
        return inner.scrollWidth > m.clientWidth + 1 && getComputedStyle(m).overflowX !== 'auto';
    }).map(m => m.closest('tr').cells[0].innerText.trim()),
});
"""


def test_the_syllabus_table_reads_at_1400_px(site):
    from test_lab_browser import chromium, screenshot, wait_for

    out, base = site
    with chromium(WIDTH, HEIGHT) as driver:
        _open_typeset(driver, base + "syllabus.html")
        wait_for(
            driver,
            lambda d: d.execute_script("return document.documentElement.dataset.workbenchMath === 'fitted'"),
            30,
            "the syllabus's wide formulas fitted (_static/workbench.js)",
        )
        found = json.loads(driver.execute_script(_MEASURE) or "null")
        wide = driver.execute_script("return document.querySelectorAll('.workbench-wide-math').length")
        driver.execute_script("document.querySelector('table.workbench-syllabus').scrollIntoView()")
        screenshot(driver, "book-syllabus-1400")
        errors = driver.execute_script("return document.querySelectorAll('.MathJax .merror').length")
    assert found is not None, "the syllabus has no session table"
    sessions = [s.number for s in map(book.session, sorted((out.parent / "_source" / "notebooks").glob("[0-9]*.py")))]
    assert [row["session"] for row in found["rows"]] == sessions
    assert errors == 0
    assert wide >= 1, "the fixture's wide formula (notebook 99) was not put on a line of its own"
    tall = [f"{row['session']}: {row['height']:.0f} px" for row in found["rows"] if row["height"] > MAX_ROW]
    assert not tall, f"syllabus rows taller than {MAX_ROW} px at a {WIDTH} px window: {tall}"
    overflowing = [f"{c['text']!r}: {c['scroll']} > {c['client']}" for c in found["cells"] if c["scroll"] > c["client"]]
    assert not overflowing, f"cells whose content runs past their box: {overflowing}"
    assert [h["text"] for h in found["header"]] == ["Session", "Notebook", "Objectives", "Prerequisites", "Time"]
    assert not found["clipped"], f"formulas cut at their box's edge in the rows of sessions {found['clipped']}"
    broken = [h["text"] for h in found["header"] if h["lines"] != 1]
    assert not broken, f"header cells on more than one line: {broken}"
    print(
        f"syllabus at {found['window']} px (table {found['table']:.0f} px): row heights "
        + ", ".join(f"{row['session']} {row['height']:.0f}" for row in found["rows"])
    )


def test_a_concept_check_answer_is_folded_until_clicked(site):
    from selenium.webdriver.common.by import By
    from test_lab_browser import chromium, screenshot

    _, base = site
    with chromium(WIDTH, HEIGHT) as driver:
        _open_typeset(driver, base + "notebooks/99_concept_check.html")
        dropdowns = driver.find_elements(By.CSS_SELECTOR, "details.sd-dropdown")
        assert len(dropdowns) == 1, "the concept check is not a sphinx-design dropdown"
        dropdown = dropdowns[0]
        summary = dropdown.find_element(By.TAG_NAME, "summary")
        assert summary.text.strip().startswith("Answer")
        assert dropdown.get_attribute("open") is None, "the answer is unfolded before any click"
        assert "folded-answer-marker" in dropdown.get_attribute("textContent")  # in the page, not shown
        assert "folded-answer-marker" not in driver.find_element(By.TAG_NAME, "article").text
        summary.click()
        assert dropdown.get_attribute("open") is not None
        assert "folded-answer-marker" in dropdown.text
        assert dropdown.find_elements(By.CSS_SELECTOR, ".MathJax"), "the answer's maths is not typeset"
        screenshot(driver, "book-concept-check-open")


def test_the_footer_names_both_licences_on_one_line(site):
    from selenium.webdriver.common.by import By
    from test_lab_browser import chromium

    _, base = site
    with chromium(WIDTH, HEIGHT) as driver:
        driver.get(base + "index.html")
        footer = driver.find_element(By.CSS_SELECTOR, "footer .workbench-licence")
        driver.execute_script("arguments[0].scrollIntoView()", footer)
        text = footer.text
        assert "the Attention Geometry Workbench authors" in text
        assert "MIT" in text and "CC BY 4.0" in text
        assert footer.size["height"] < 2 * float(footer.value_of_css_property("line-height").removesuffix("px"))


# -- the slides ----------------------------------------------------------------------------------------------------

# Reveal.js ready and MathJax (on a deck with maths) done typesetting it.
_DECK_READY = (
    "return !!(window.Reveal && Reveal.isReady() && (!document.querySelector('script[src*=\"MathJax.js\"]')"
    " || (window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0 && !MathJax.Hub.queue.running)))"
)
SLIDE_HEIGHT = 720  # revealjs_script_conf in workbench/book.py: every slide is laid out on 1280 × 720


def deck_overflows(driver, url: str) -> list[str]:
    """Open the deck at ``url``, visit every slide; the slides taller than the deck (or with broken maths/images)."""
    from test_lab_browser import wait_for

    driver.get(url)
    wait_for(driver, lambda d: d.execute_script(_DECK_READY), 60, f"the deck {url} and its maths")
    bad = []
    for index in range(driver.execute_script("return Reveal.getTotalSlides()")):
        driver.execute_script(f"Reveal.slide({index}, 0, 999)")
        height, title, errors, broken = driver.execute_script(
            "const s = Reveal.getCurrentSlide(); const h = s.querySelector('h1, h2');"
            "return [s.scrollHeight, h ? h.innerText : '', s.querySelectorAll('.MathJax .merror').length,"
            " [...s.querySelectorAll('img')].filter(i => !(i.complete && i.naturalWidth > 0)).length]"
        )
        if height > SLIDE_HEIGHT or errors or broken:
            bad.append(
                f"{url.rsplit('/', 1)[-1]} slide {index + 1} ({title}): {height} px, {errors} maths errors, "
                f"{broken} broken images"
            )
    return bad


def test_the_slides_fit_their_slides_and_a_check_reveals_its_answer_on_the_next_click(site):
    from test_lab_browser import chromium, screenshot

    out, _ = site
    slides = out.parent / "slides"  # beside the site: its execution cache serves the decks
    book.slides(slides, notebooks_dir=out.parents[1] / "notebooks")
    decks = sorted(p for p in slides.glob("[0-9]*.html"))
    assert [p.stem for p in decks] == sorted(p.stem for p in (out.parents[1] / "notebooks").glob("[0-9]*.py"))
    with chromium(1280, 720) as driver:
        bad = [line for deck in decks for line in deck_overflows(driver, deck.as_uri())]
        assert bad == [], bad
        deck = slides / f"{EXECUTED[0]}.html"
        driver.get(deck.as_uri() + "#/")
        from test_lab_browser import wait_for

        wait_for(driver, lambda d: d.execute_script(_DECK_READY), 60, "the deck")
        titles = driver.execute_script(
            "return [...document.querySelectorAll('.slides > section')].map("
            "s => (s.querySelector('h1, h2') || {}).innerText || '')"
        )
        check = next(i for i, t in enumerate(titles) if t.startswith("Check 1"))
        assert any(t.startswith("1.") for t in titles) and "Recap" in titles
        driver.execute_script(f"Reveal.slide({check}, 0, -1)")
        fragment = "return Reveal.getCurrentSlide().querySelector('.fragment').classList.contains('visible')"
        assert driver.execute_script(fragment) is False, "the answer shows before the click"
        screenshot(driver, "slides-check-question")
        driver.execute_script("Reveal.next()")
        assert driver.execute_script(fragment) is True, "the answer does not show on the next click"
        screenshot(driver, "slides-check-answer")
