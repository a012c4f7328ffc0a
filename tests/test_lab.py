"""`workbench lab` starts a real JupyterLab that opens the percent scripts as notebooks, and writes no twin.

Checked through the server's REST API: the contents manager serves a script as a notebook and saves edits into
the script (no ``.ipynb`` appears); the settings the command prepares make jupytext's notebook view the default
viewer of Python files; an HTML export loads the bundled MathJax, not a CDN.  The browser side (a double-click
in the file browser opens a notebook) is tests/test_lab_browser.py.
"""

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"
SCRIPT = "00_how_to_read_this_workbench.py"


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
    """Run `workbench lab` on a copy of the course; yield (course folder, base URL, token, jupyter data dir).

    Every Jupyter folder (config, data, runtime, user settings, workspaces) is under ``tmp_path``.
    """
    if shutil.which("jupyter") is None:
        pytest.skip("JupyterLab (the lab extra) is not installed")
    course = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, course, ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
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
