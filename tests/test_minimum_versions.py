"""The minimum-version job pins exactly the floors pyproject.toml declares (so the job tests the promise)."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python ≥ 3.11; the job itself runs on any supported Python

ROOT = Path(__file__).resolve().parents[1]
# Extras whose floors are library promises; the lab and test extras are tools, resolved freely by the job.
LIBRARY_EXTRAS = ("torch", "models", "geometry")


def _floors() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in LIBRARY_EXTRAS:
        requirements += project["optional-dependencies"][extra]
    floors = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement.split(";")[0].strip())
        assert match, f"a library requirement must be NAME>=FLOOR, got {requirement!r}"
        floors[_normal(match[1])] = match[2]
    return floors


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / ".ci" / "minimum-versions.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[_normal(name)] = version
    return pins


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def test_every_library_floor_is_pinned_at_its_floor():
    floors, pins = _floors(), _pins()
    assert set(floors) <= set(pins), f"floors without a pin: {sorted(set(floors) - set(pins))}"
    wrong = {name: (floor, pins[name]) for name, floor in floors.items() if _release(floor) != _release(pins[name])}
    assert not wrong, f"pins that are not the floor (floor, pin): {wrong}"


def test_the_job_installs_the_pins_and_runs_the_default_suite():
    script = (ROOT / ".ci" / "minimum-versions").read_text()
    assert "-c .ci/minimum-versions.txt" in script
    assert re.search(r"python\" -m pytest\s*$", script.strip())
