import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    assert ruff, "ruff is part of the test extra"
    out = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
