"""`workbench lab` starts a real JupyterLab whose contents manager opens the percent scripts as notebooks."""

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


@pytest.mark.skipif(shutil.which("jupyter") is None, reason="JupyterLab (the lab extra) is not installed")
def test_lab_serves_the_course(tmp_path):
    course = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, course)
    port, token = _free_port(), "workbench-test"
    command = [
        sys.executable, "-m", "workbench", "lab", "--dir", str(course),
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
        "--allow-root", f"--ServerApp.runtime_dir={tmp_path / 'runtime'}",
    ]  # fmt: skip
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"), JUPYTER_DATA_DIR=str(tmp_path / "data"))
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/api/contents"
    try:
        listing = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and server.poll() is None:
            try:
                listing = _get(f"{base}?token={token}")
                break
            except OSError:
                time.sleep(0.5)
        assert listing is not None, "JupyterLab did not answer within 90 s"
        names = {item["name"] for item in listing["content"]}
        script = "00_how_to_read_this_workbench.py"
        assert script in names and script.replace(".py", ".ipynb") in names  # the paired twin was generated
        # jupytext's contents manager serves the percent script itself as a notebook.
        model = _get(f"{base}/{script}?type=notebook&token={token}")
        assert model["type"] == "notebook"
        assert model["content"]["cells"][0]["cell_type"] == "markdown"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
