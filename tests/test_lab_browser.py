"""`workbench lab` in a real browser: a double-click on a percent script in the file browser opens a notebook, and
the notebooks' MyST renders as on the course site (citations, links into the mathematical reference, dropdowns).

Headless Debian chromium driven by selenium through Debian's chromedriver.  Without chromium, chromedriver or
selenium the test is skipped with the reason, except under CI (the environment variable ``CI`` set), where a
missing browser is a failure: CI installs them (.ci/run).  Screenshots go to ``$WORKBENCH_SHOTS`` (default
/tmp/shots).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from test_lab import SCRIPT, running_lab

SHOTS = Path(os.environ.get("WORKBENCH_SHOTS", "/tmp/shots"))


def _missing() -> str | None:
    """Why no browser test can run here, or None."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (the test extra brings it)"
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser")):
        return "chromium is not installed (apt-get install chromium)"
    if shutil.which("chromedriver") is None:
        return "chromedriver is not installed (apt-get install chromium-driver)"
    return None


def need_browser() -> None:
    """Skip the calling test when no browser can run, or fail under CI, which must have one."""
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900):
    """A headless chromium under selenium (Debian's chromium and chromedriver)."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver, name: str, full_page: bool = False) -> Path:
    """Save what the browser shows as ``SHOTS/name.png`` (the whole page when ``full_page``)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    if full_page:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(int(height) + 100, 8000))
    path = SHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def wait_for(driver, condition, timeout: float = 30.0, what: str = "the page"):
    """Poll ``condition(driver)`` until it is truthy; return its value, or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition(driver)
        if value:
            return value
        time.sleep(0.25)
    screenshot(driver, "timeout")
    pytest.fail(f"{what} did not appear within {timeout:.0f} s (screenshot: {SHOTS / 'timeout.png'})")


@pytest.fixture(scope="module")
def lab_in_chromium(tmp_path_factory):
    """A running `workbench lab` and a headless chromium: ((course, base URL, token, data dir), driver)."""
    need_browser()
    with running_lab(tmp_path_factory.mktemp("lab")) as lab, chromium() as driver:
        yield lab, driver


def test_a_double_click_opens_a_percent_script_as_a_notebook(lab_in_chromium):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    (course, base, token, _), driver = lab_in_chromium
    driver.get(f"{base}/lab?token={token}")

    def item(d):
        for e in d.find_elements(By.CSS_SELECTOR, ".jp-DirListing-item .jp-DirListing-itemText"):
            if e.text.strip() == SCRIPT and e.is_displayed():
                return e
        return None

    entry = wait_for(driver, item, 60, f"{SCRIPT} in the file browser")
    screenshot(driver, "lab-file-browser")
    ActionChains(driver).double_click(entry).perform()
    # The notebook view renders the cells in sight (a windowed list): a markdown cell and the code below it.  The
    # markdown is rendered by jupyterlab-myst (a div.myst; the first cell's title becomes its frontmatter title).
    wait_for(
        driver,
        lambda d: (
            len(d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")) > 1
            and d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-MarkdownCell .myst h1")
        ),
        30,
        "a notebook panel with its rendered title",
    )
    screenshot(driver, "lab-notebook-open")
    assert not driver.find_elements(By.CSS_SELECTOR, ".jp-FileEditor"), "opened in the text editor"
    tab = driver.find_element(By.CSS_SELECTOR, "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")
    assert tab.text == SCRIPT
    assert not list(course.glob("*.ipynb")), "opening the script wrote a .ipynb twin"
    # No toast asks to fetch Jupyter news from the web over the notebook (the lab's defaults turn it off).
    toasts = " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".Toastify__toast"))
    assert "news" not in toasts.lower(), toasts


def test_an_html_export_renders_its_maths_offline_from_disk(lab_in_chromium, tmp_path):
    # "Save and Export Notebook As → HTML" is the server's nbconvert handler; the page is saved and opened later.
    (_, base, token, _), driver = lab_in_chromium
    with urllib.request.urlopen(f"{base}/nbconvert/html/{SCRIPT}?download=true&token={token}", timeout=60) as r:
        page = tmp_path / "export.html"
        page.write_bytes(r.read())
    driver.get(page.as_uri())
    rendered = wait_for(
        driver,
        lambda d: d.execute_script("return document.querySelectorAll('.MathJax, .MathJax_Display').length"),
        30,
        "typeset maths in the exported page",
    )
    screenshot(driver, "lab-export-from-disk")
    assert rendered > 0
    errors = driver.execute_script("return document.querySelectorAll('.MathJax .merror, .MathJax_Error').length")
    assert errors == 0


# A notebook of the course's MyST constructs, written into the lab's copy of the course: the citation forms, a link
# to the reference and one to a labelled section of it, and a concept check's answer dropdown.  (The course's own
# notebooks are checked link by link without a browser in tests/test_lab.py.)
MYST_CHECK = "lab_myst_check.py"
_MYST_CHECK_TEXT = """\
# ---
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

# %% [markdown]
# # MyST in the lab
#
# Cited {cite:p}`candanedo2026attention`, after {cite:t}`coifman2006diffusion`; two at once
# {cite:p}`coifman2006diffusion,candanedo2026attention`.  The [mathematical reference](reference.md), and its
# [§A.7](reference.md#reference-a7).
#
# :::{dropdown} Answer
# The answer.
# :::

# %%
1 + 1
"""


def _script(driver, source: str, *args):
    return driver.execute_script(source, *args)


def test_citations_reference_links_and_dropdowns_render_as_on_the_site(lab_in_chromium):
    (course, base, token, _), driver = lab_in_chromium
    (course / MYST_CHECK).write_text(_MYST_CHECK_TEXT)
    driver.get(f"{base}/lab/tree/{MYST_CHECK}?token={token}")
    panel = "#jp-main-dock-panel .jp-NotebookPanel:not(.lm-mod-hidden)"

    # Citations: the site's author-year text (sphinxcontrib-bibtex), never the raw role nor jupyterlab-myst's
    # "Citation Not Found" warning.
    cites = wait_for(
        driver,
        lambda d: (
            (
                texts := _script(
                    d, f"return [...document.querySelectorAll('{panel} .workbench-cite')].map(e => e.textContent)"
                )
            )
            and len(texts) == 3
            and texts
        ),
        60,
        "the notebook's citations, resolved",
    )
    screenshot(driver, "lab-myst-notebook")
    assert cites == ["[Candanedo, 2026]", "Coifman and Lafon [2006]", "[Coifman and Lafon, 2006, Candanedo, 2026]"]
    shown = _script(driver, f"return document.querySelector('{panel} .jp-MarkdownCell').innerText")
    assert "{cite:" not in shown and "Citation Not Found" not in shown, shown
    warnings = _script(
        driver,
        "return [...document.querySelectorAll('span[title=\"Citation Not Found\"]')].filter(e => e.offsetParent).length",
    )
    assert warnings == 0
    entries = json.loads(
        urllib.request.urlopen(
            f"{base}/lab/extensions/attention-workbench-course/static/citations.json", timeout=30
        ).read()
    )["entries"]
    titles = {e["key"]: e["text"] for e in entries}
    cite_links = _script(
        driver, f"return [...document.querySelectorAll('{panel} .workbench-cite a')].map(a => [a.dataset.key, a.title])"
    )
    assert cite_links and all(title == titles[key] for key, title in cite_links), cite_links

    # The concept check's answer: a closed dropdown that opens on a click.
    dropdown = f"document.querySelector('{panel} details.myst-dropdown')"
    assert _script(driver, f"return {dropdown}.querySelector('summary').textContent").strip() == "Answer"
    assert not _script(driver, f"return {dropdown}.open")
    _script(driver, f"{dropdown}.querySelector('summary').click()")
    wait_for(driver, lambda d: _script(d, f"return {dropdown}.open"), 10, "the opened dropdown")
    assert "The answer." in _script(driver, f"return {dropdown}.innerText")

    # No link gives a 404: a link to a file points at the server's copy of it, a citation at a bibliography entry.
    hrefs = _script(
        driver, f"return [...document.querySelectorAll('{panel} .jp-MarkdownCell a[href]')].map(a => a.href)"
    )
    for href in hrefs:
        url = urllib.parse.urlsplit(href)
        if url.fragment.startswith("workbench-bibliography-"):
            assert url.fragment.removeprefix("workbench-bibliography-") in titles, href
            continue
        assert url.path.startswith("/files/"), f"a link that opens nothing in the lab: {href}"
        query = urllib.parse.urlencode({"token": token})
        try:
            with urllib.request.urlopen(f"{base}{url.path}?{query}", timeout=30) as response:
                assert response.status == 200, href
        except urllib.error.HTTPError as error:
            pytest.fail(f"the link {href} answers {error.code} {error.reason}")
    assert any(urllib.parse.urlsplit(h).fragment == "reference-a7" for h in hrefs), hrefs

    # §A.7 opens the reference in the Markdown viewer, scrolled to the section.  jupyterlab-myst points a link at
    # the server's file (and hands its clicks to the lab) a moment after it renders it; click once it has, and
    # check that the click did not leave the page (a page load would open reference.md at its top).
    section_link = f"[...document.querySelectorAll('{panel} a')].find(a => a.textContent === '§A.7')"
    wait_for(driver, lambda d: "/files/" in _script(d, f"return {section_link}.href"), 10, "the §A.7 link, resolved")
    _script(driver, f"window.workbenchTestPage = true; {section_link}.click()")
    viewer = "#jp-main-dock-panel .jp-MarkdownViewer:not(.lm-mod-hidden)"

    def section_in_view(d):
        return _script(
            d,
            f"""const view = document.querySelector('{viewer}');
            const target = view && view.querySelector('#reference-a7');
            if (!target) return null;
            const v = view.getBoundingClientRect(), t = target.getBoundingClientRect();
            return t.top >= v.top - 10 && t.top < v.top + 100 && target.textContent;""",
        )

    # reference.md is long (jupyterlab-myst takes seconds to render it): a generous limit, which only a failure uses.
    wait_for(driver, section_in_view, 60, "reference.md scrolled to §A.7")
    assert _script(driver, "return window.workbenchTestPage === true"), "the link loaded a new page"
    time.sleep(1)
    heading = section_in_view(driver)  # still there once the document has settled
    screenshot(driver, "lab-reference-section")
    assert heading and heading.startswith("A.7"), heading
    tab = driver.find_element("css selector", "#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")
    assert tab.text == "reference.md"
    # The reference's own citations resolve too; one opens the Bibliography panel at its entry.
    wait_for(
        driver,
        lambda d: _script(d, f"return document.querySelector('{viewer} .workbench-cite a')"),
        30,
        "a citation in reference.md",
    )
    key = _script(
        driver, f"const a = document.querySelector('{viewer} .workbench-cite a'); a.click(); return a.dataset.key"
    )

    def entry_in_view(d):
        return _script(
            d,
            """const view = document.querySelector('#workbench-bibliography');
            const entry = view && view.querySelector('.workbench-target');
            if (!entry) return null;
            const v = view.getBoundingClientRect(), e = entry.getBoundingClientRect();
            return e.top >= v.top && e.bottom <= v.bottom && entry.dataset.key;""",
        )

    assert wait_for(driver, entry_in_view, 20, "the bibliography entry, in view") == key
    screenshot(driver, "lab-bibliography")
