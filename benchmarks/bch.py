"""BCH in the Lyndon basis: the workbench's engine beside H. Hofstätter's C program ``bch`` (the fastest known).

Every measurement is a whole process started fresh and measured from outside by GNU ``time`` (CPU = user +
system seconds, peak = maximum resident set), Python start-up and imports included, so the C program and the
Python package are measured the same way; rows alternate between the programs and each cell is the median of
``runs`` runs.  Columns:

- **workbench**: ``python -c "from workbench.lie import bch; bch(d)"`` (the series holds exact integer levels; its
  ``{word: Fraction}`` dict is built when ``.coordinates`` is first read);
- **with .coordinates**: the same call that also reads ``bch(d).coordinates`` (every Fraction and key tuple made),
  as a ratio to the call;
- **CLI**: ``workbench derive bch --degree d --format json`` to ``/dev/null`` (the streamed JSON document), as a
  ratio to the Python call (issue target ≤ 1.1×);
- **without kernel**: the same call with ``WORKBENCH_LIE_KERNEL=0`` (the numpy programme and Python-integer solve,
  the previous version's algorithm for the solve), through degree 20;
- **Hofstätter**: ``$WORKBENCH_BCH_PROGRAM N=d`` when that variable names a built copy of
  github.com/HaraldHofstaetter/BCH (``make``, gcc -O3); otherwise the figures measured on this machine class for
  issue 20 are shown instead, marked "issue".

Correctness is checked in the same run: at degree 20 the series' SHA-256 over its sorted (word, coefficient) pairs
must equal the one of the previous engine, which equalled Hofstätter's program term for term.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

#: The ``run`` keywords ``workbench bench bch`` accepts (``--max-degree``).
OPTIONS = ("max_degree",)

#: The degrees of the table (those ≤ ``max_degree``); a smaller ``max_degree`` measures that degree alone.
DEGREES = (16, 18, 20, 22, 24)
MAX_DEGREE = 24

#: The environment variable naming a built copy of Hofstätter's ``bch`` program.
PROGRAM_VARIABLE = "WORKBENCH_BCH_PROGRAM"

#: Issue 20's measurements on this machine class (2 cores; three alternating runs, medians): CPU s, peak MB.
ISSUE_HOFSTATTER = {16: (0.033, 2.5), 18: (0.082, 4.1), 20: (0.47, 9.3), 22: (4.4, 27), 24: (63, 98)}
ISSUE_PREVIOUS = {16: (0.63, 65 * 1.048576), 18: (1.02, 112 * 1.048576), 20: (4.0, 381 * 1.048576)}
ISSUE_PREVIOUS[22] = (34.0, 2436 * 1.048576)  # the previous engine; not rerun here (minutes, gigabytes)

#: SHA-256 of bch(20)'s sorted (word, coefficient) pairs: the previous engine, equal to Hofstätter's program.
BCH20_SHA256 = "11097a14efaf82462d6232492927c73a3dcf256ab3a01eb04374f666b7678550"

_FINGERPRINT = (
    "import hashlib; from workbench.lie import bch; s = bch(20); "
    "items = sorted((''.join('AB'[i] for i in w), str(c)) for w, c in s.coordinates.items()); "
    "print(hashlib.sha256(repr(items).encode()).hexdigest())"
)


def measure(argv: list[str], env: dict | None = None, limit: float = 1200.0) -> tuple[float, float] | None:
    """CPU seconds (user + system) and peak resident MB of one fresh process, by GNU time; ``None`` past ``limit``."""
    timer = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        try:
            subprocess.run(
                [timer, "-f", "%U %S %M", "-o", report.name, *argv],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=limit,
                check=True,
            )
        except subprocess.TimeoutExpired:
            return None
        user, system, kib = report.read().split()[-3:]
    return float(user) + float(system), float(kib) / 1024


def _environment(**extra) -> dict:
    # BLAS capped at one thread; the kernel switch only where a row asks for it.
    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_LIE_KERNEL"}
    return env | {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"} | extra


def _median(values: list) -> tuple[float, float] | None:
    if any(v is None for v in values):
        return None
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def _cell(value: tuple[float, float] | None) -> str:
    return "> limit" if value is None else f"{value[0]:.3g} / {value[1]:.0f}"


def run(max_degree: int = 22, runs: int = 3, limit: float = 1200.0) -> dict:
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or not 2 <= max_degree <= MAX_DEGREE:
        raise ValueError(f"max_degree must be an integer in [2, {MAX_DEGREE}], got {max_degree!r}")
    if shutil.which("time") is None and not os.path.exists("/usr/bin/time"):
        raise RuntimeError("the bch benchmark measures whole processes with GNU time (Debian package `time`)")
    program = os.environ.get(PROGRAM_VARIABLE, "").strip() or None
    if program is not None and not os.access(program, os.X_OK):
        raise ValueError(f"{PROGRAM_VARIABLE} must name an executable built copy of Hofstätter's bch, got {program!r}")
    degrees = [d for d in DEGREES if d <= max_degree] or [max_degree]
    python = sys.executable
    script = shutil.which("workbench")  # the console script users run; `python -m workbench` where it is absent
    workbench = [script] if script else [python, "-m", "workbench"]
    rows = []
    for degree in degrees:
        ours, cli, previous, theirs, read = [], [], [], [], []
        call = [python, "-c", f"from workbench.lie import bch; bch({degree})"]
        reading = [python, "-c", f"from workbench.lie import bch; bch({degree}).coordinates"]
        derive = [*workbench, "derive", "bch", "--degree", str(degree), "--format", "json"]
        for _ in range(runs):  # alternating, so that a slow spell of the machine is shared
            ours.append(measure(call, _environment(), limit))
            read.append(measure(reading, _environment(), limit))
            cli.append(measure(derive, _environment(), limit))
            if degree <= 20:
                previous.append(measure(call, _environment(WORKBENCH_LIE_KERNEL="0"), limit))
            if program is not None:
                theirs.append(measure([program, f"N={degree}"], _environment(), limit))
        ours_m, cli_m, read_m = _median(ours), _median(cli), _median(read)
        previous_m = _median(previous) if previous else ISSUE_PREVIOUS.get(degree)
        reference = _median(theirs) if program else ISSUE_HOFSTATTER.get(degree)
        source = "measured" if program else "issue"
        ratio = f"{ours_m[0] / reference[0]:.2f}×" if ours_m and reference and reference[0] > 0 else "—"
        mem_ratio = f"{ours_m[1] / reference[1]:.1f}×" if ours_m and reference and reference[1] > 0 else "—"
        cli_ratio = f"{cli_m[0] / ours_m[0]:.2f}×" if ours_m and cli_m else "—"
        read_ratio = f"{read_m[0] / ours_m[0]:.2f}×" if ours_m and read_m else "—"
        prev_label = "—" if previous_m is None else _cell(previous_m) + ("" if previous else " (issue)")
        rows.append([
            degree,
            _cell(ours_m),
            f"{_cell(reference)} ({source})" if reference else "—",
            ratio,
            mem_ratio,
            f"{_cell(cli_m)} = {cli_ratio}",
            prev_label,
            f"{_cell(read_m)} = {read_ratio}",
        ])  # fmt: skip
    check = "not run (degree 20 not in the table)"
    if 20 in degrees:
        digest = subprocess.run([python, "-c", _FINGERPRINT], capture_output=True, text=True, check=True).stdout
        check = "equal" if digest.strip() == BCH20_SHA256 else f"DIFFERENT ({digest.strip()[:16]}…)"
    return {
        "title": "BCH log(e^A e^B), Lyndon basis, whole process: workbench vs Hofstätter's bch (CPU s / peak MB)",
        "columns": [
            "degree",
            "workbench",
            "Hofstätter bch",
            "CPU ratio",
            "memory ratio",
            "CLI json (÷ Python call)",
            "without kernel",
            "with .coordinates (÷ call)",
        ],
        "rows": rows,
        "notes": (
            f"{platform.machine()}, {os.cpu_count()} cores; medians of {runs} alternating runs, GNU time; "
            f"bch(20) against the pinned table: {check}"
        ),
    }
