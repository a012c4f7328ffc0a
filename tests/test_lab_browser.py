"""`workbench lab` in a real browser: a double-click on a percent script in the file browser opens a notebook.

Headless Debian chromium driven by selenium through Debian's chromedriver.  Without chromium, chromedriver or
selenium the test is skipped with the reason, except under CI (the environment variable ``CI`` set), where a
missing browser is a failure: CI installs them (.ci/run).  Screenshots go to ``$WORKBENCH_SHOTS`` (default
/tmp/shots).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import time
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
    # The notebook view renders the cells in sight (a windowed list): a markdown cell and the code below it.
    wait_for(
        driver,
        lambda d: (
            len(d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-Cell")) > 1
            and d.find_elements(By.CSS_SELECTOR, ".jp-Notebook .jp-MarkdownCell .jp-RenderedMarkdown h1")
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
