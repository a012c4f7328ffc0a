"""Execute every course notebook with a real Jupyter kernel, at small size."""

from pathlib import Path

import jupytext
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[1] / "notebooks").glob("*.py"))


def test_there_is_a_course():
    assert NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SCALE", "small")
    monkeypatch.delenv("MPLBACKEND", raising=False)  # let the kernel use its inline backend
    notebook = jupytext.read(path)
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [
        o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "error"
    ]
    assert errors == []
    images = [
        o
        for cell in notebook.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if "image/png" in o.get("data", {})
    ]
    assert images, "the notebook should show at least one plot"
