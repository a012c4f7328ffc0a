"""The course as a static HTML site and as one PDF: ``workbench book build``, ``serve`` and ``pdf``.

The site is built by Sphinx with myst-nb (the notebooks, read as jupytext percent scripts and executed during
the build, so their figures are in the pages) and sphinx-book-theme.  Jupyter Book 2 / mystmd would be the
obvious choice, but they fetch their page templates from the web at build time and so cannot build offline;
this stack builds with no network at all, and MathJax 2.7 is bundled into the site from the
``jupyter_server_mathjax`` package, so the pages render their maths offline too.

The build stages a source tree (``OUT/../_source``) that mirrors the repository around the notebooks, so a
notebook finds ``../experiments`` exactly as it does in the lab::

    index.md            book/index.md + the generated table of contents
    syllabus.md         book/syllabus.md + the session table generated from each notebook's first cell
    catalogue.md        generated: every identity of ``workbench list``
    bibliography.md     book/bibliography.md (``{bibliography}`` over book/references.bib)
    notebooks/          the course's percent scripts and the mathematical reference, reference.md, beside them,
                        both from the notebooks' folder (in the repository notebooks/reference.md is a link to
                        book/reference.md), so the notebooks' links to it resolve in JupyterLab as on the site
    notebooks/solutions the worked solutions (left out with ``--without-solutions``)
    experiments         a link to the course's experiments/ (committed results some notebooks read)
    _static/mathjax     the MathJax subset the pages load

Then the notebooks that the execution cache (``OUT/../.jupyter_cache``, myst-nb's jupyter-cache) lacks are
executed in parallel, one kernel per CPU by default (:func:`execute`): a failing notebook stops the build with
an error naming it.  Then ``sphinx-build -W --keep-going``, which finds every notebook executed in the cache: a
warning (a missing reference, a bad cross-reference) fails the build.

``workbench book pdf`` builds the same staged source as one page (Sphinx's ``singlehtml``) and prints it with the
headless chromium the browser tests use, once MathJax has typeset it (:func:`pdf`).

One subject, the course as a document (about 1,000 lines, over the project's 700): staging, parallel execution,
the site, its print, the slides and serving the site share the staged tree and its checks.  The API reference's
pages already live in workbench/api_reference.py; the next splits are the parallel executor (:func:`execute` and
its workers) and the local server (:func:`serve` and its handler) into modules of their own, left for a session
that can re-run the slow site tests around them.
"""

from __future__ import annotations

import concurrent.futures
import functools
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.api_reference import api_pages, identity_api, public_objects, script_api
from workbench.catalogue import discover
from workbench.resources import course_root, is_installed

__all__ = [
    "LABELS",
    "TIME_LIMIT",
    "BookError",
    "Execution",
    "Session",
    "build",
    "build_folder",
    "catalogue_page",
    "copy_mathjax",
    "execute",
    "mathjax_dir",
    "pdf",
    "print_pdf",
    "serve",
    "session",
    "slides",
    "stage",
    "syllabus_table",
]


def _book(book_dir: Path | None) -> Path:
    return Path(book_dir) if book_dir is not None else course_root() / "book"


def build_folder(book_dir: Path | None = None) -> Path:
    """Where the builds go by default: ``_build`` beside the book's sources, or ``./_build`` for the installed course.

    The course installed with the package is read-only (it belongs to the install), so a build of it goes to the
    current directory; a checkout's or a copy's builds go to its ``book/_build``.

    Examples
    --------
    >>> build_folder(Path("my-course/book")).as_posix()
    'my-course/book/_build'
    """
    book = _book(book_dir)
    if is_installed() and book.resolve() == (course_root() / "book").resolve():
        return Path.cwd() / "_build"
    return book / "_build"


LABELS = ("Objectives", "Prerequisites", "Time")
# The longest **Time.** text the syllabus takes: one sentence such as "75 minutes in class; the code runs in about
# 15 s" is about 50 characters; a paragraph of conventions is ten times that and makes a syllabus row pages tall.
TIME_LIMIT = 200
# Relative widths of the syllabus columns: session, notebook, objectives, prerequisites, time.  The session column
# is just wide enough for its header on one line; objectives (a sentence and four or five bullets) and
# prerequisites (a paragraph) share the rest, which keeps every row of the course under 400 px at a 1,400 px window.
SYLLABUS_WIDTHS = (7, 12, 38, 33, 10)
SCALES = ("small", "large")
# Seconds a cell may run before its notebook fails (conf.py's nb_execution_timeout; the builder passes this one).
EXECUTION_TIMEOUT = 300
# Seconds the PDF printer waits for the page to load, for MathJax, and for chromium's print.
PRINT_TIMEOUT = 1800
# MathJax 2.7 as jupyter_server_mathjax ships it, cut to what the pages use: the combined TeX + HTML-CSS
# configuration, the TeX input, the HTML-CSS output with its STIX-Web font data, the woff fonts of that output
# only, and the small extensions TeX may autoload (the 3.7 MB accessibility bundle stays out).
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full"
_MATHJAX_PARTS = (
    "LICENSE",
    "MathJax.js",
    f"config/{MATHJAX_CONFIG}.js",
    "config/Safe.js",
    "jax/input/TeX",
    "jax/element",
    "jax/output/HTML-CSS",
    "fonts/HTML-CSS/STIX-Web",
    "extensions/*.js",
    "extensions/TeX",
    "extensions/HTML-CSS",
    "extensions/a11y/accessibility-menu.js",
)
_MARKER = ".workbench-book-source"
_SITE_MARKER = ".workbench-book-site"
_TITLE = re.compile(r"^#\s+(?P<number>\d+[a-z]?)\s*[—–-]\s*(?P<title>.+?)\s*$")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[*+-]|\d{1,3}[.)])\s")
_LINK = re.compile(r"\]\((?!#|/|[a-zA-Z][a-zA-Z0-9+.-]*:)([^)\s]+)\)")


class BookError(ValueError):
    """The course cannot be staged: a file is missing or a notebook lacks what the site needs."""


@dataclass(frozen=True)
class Session:
    """One class session: a notebook and what its first markdown cell says about it."""

    path: Path
    number: str
    title: str
    objectives: str
    prerequisites: str
    time: str


def _read_notebook(path: Path):
    try:
        import jupytext
    except ImportError as exc:  # pragma: no cover - the book and lab extras bring it
        raise BookError("the course site needs jupytext: pip install 'attention-workbench[book]'") from exc
    return jupytext.read(path, fmt="py:percent")


def _paragraph(text: str) -> str:
    """The first block of ``text``: its opening paragraph and any list that follows it directly.

    A label's text is one paragraph ("**Time.** About 60 minutes in class.") or a paragraph that introduces a
    list ("**Objectives.** After this notebook you can" and its bullets); a blank line followed by anything
    else (a "Conventions" paragraph, a new section) ends it.
    """
    lines = text.strip("\n").splitlines()
    kept: list[str] = []
    in_list = False
    for i, line in enumerate(lines):
        if not line.strip():
            following = next((x for x in lines[i + 1 :] if x.strip()), None)
            if following is None or not (_LIST_ITEM.match(following) or (in_list and following[:1].isspace())):
                break
            kept.append(line)
            continue
        in_list = in_list or bool(_LIST_ITEM.match(line))
        kept.append(line)
    return "\n".join(kept).strip()


def session(path: Path) -> Session:
    """The session of notebook ``path``: number, title, and the three labelled parts of its first cell.

    The first markdown cell opens with ``# NN — Title`` and carries the bold labels ``**Objectives.**``,
    ``**Prerequisites.**`` and ``**Time.**``.  Each label's text is the paragraph it opens (with a list that
    follows that paragraph directly): it ends at the next label or at the end of the paragraph, so a
    conventions paragraph after ``**Time.**`` stays in the notebook and out of the syllabus.

    Raises
    ------
    BookError
        naming the notebook, when the title or a label is missing, a label has no text, or the time is longer
        than :data:`TIME_LIMIT` characters (it belongs in one short sentence; the rest in its own paragraph).
    """
    path = Path(path)
    markdown = [c.source for c in _read_notebook(path).cells if c.cell_type == "markdown"]
    if not markdown:
        raise BookError(f"{path.name}: no markdown cell (the first one carries the title and the session labels)")
    first = markdown[0]
    heading = _TITLE.match(first.splitlines()[0]) if first.strip() else None
    if heading is None:
        raise BookError(f"{path.name}: the first markdown cell should open with the title '# NN — Title'")
    marks = {}
    for label in LABELS:
        found = re.search(rf"\*\*{label}\.\*\*", first)
        if found is None:
            missing = ", ".join(f"**{x}.**" for x in LABELS if f"**{x}.**" not in first)
            raise BookError(f"{path.name}: the first markdown cell lacks the label(s) {missing}")
        marks[label] = found
    ends = sorted(m.start() for m in marks.values())
    parts = {}
    for label, found in marks.items():
        end = min((e for e in ends if e > found.start()), default=len(first))
        parts[label] = _paragraph(first[found.end() : end])
        if not parts[label]:
            raise BookError(f"{path.name}: the label **{label}.** has no text after it")
    if len(parts["Time"]) > TIME_LIMIT:
        raise BookError(
            f"{path.name}: the **Time.** paragraph is {len(parts['Time'])} characters long, over {TIME_LIMIT}: "
            "keep it to one short sentence (e.g. '75 minutes in class; the code runs in about 15 s') and put "
            "anything else in a paragraph of its own after a blank line"
        )
    return Session(
        path=path,
        number=heading["number"],
        title=heading["title"],
        objectives=parts["Objectives"],
        prerequisites=parts["Prerequisites"],
        time=parts["Time"],
    )


def _relink(text: str, prefix: str) -> str:
    """``text`` with every relative Markdown link target prefixed by ``prefix`` (the cell moves folder)."""
    return _LINK.sub(lambda m: f"]({prefix}{m[1]})", text)


def _cell(text: str) -> list[str]:
    lines = text.splitlines() or [""]
    return [f"  - {lines[0]}", *(f"    {line}" if line.strip() else "" for line in lines[1:])]


def syllabus_table(sessions: list[Session], folder: str = "notebooks") -> str:
    """The session table (MyST ``list-table``) of ``sessions``, for a page beside the folder ``folder``.

    The table sits in a container that book/_static/workbench.css widens into the page's right margin on a wide
    screen (five columns of prose need the room) and that sets the rest of its layout.
    """
    lines = [
        ":::{container} workbench-syllabus-wrap",
        "```{list-table}",
        ":header-rows: 1",
        f":widths: {' '.join(str(w) for w in SYLLABUS_WIDTHS)}",
        ":class: workbench-syllabus",
        "",
        "* - Session",
        "  - Notebook",
        "  - Objectives",
        "  - Prerequisites",
        "  - Time",
    ]
    for s in sessions:
        link = f"{{doc}}`{s.title} <{folder}/{s.path.stem}>`"
        lines.append(f"* - {s.number}")
        lines.extend(_cell(link))
        for text in (s.objectives, s.prerequisites, s.time):
            lines.extend(_cell(_relink(text, f"{folder}/")))
    lines += ["```", ":::"]
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    """``text`` as literal Markdown (no emphasis, link, maths or role)."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|$~])", r"\\\1", text)


def _hypotheses_block(identity) -> list[str]:
    """The identity's hypotheses as a list, each with its outside case (where the statement fails)."""
    if not identity.hypotheses:
        return ["**Hypotheses.** None: it holds for every input of the types its statement names.", ""]
    lines = ["**Hypotheses** (each with a case outside it where the statement fails, run by the tests):", ""]
    for hypothesis in identity.hypotheses:
        tail = (
            f" *Outside:* {_escape(hypothesis.case)}."
            if hypothesis.outside is not None
            else f" *No outside case:* {_escape(hypothesis.reason)}"
        )
        lines.append(f"- {_escape(hypothesis.text)}.{tail}")
    return [*lines, ""]


def _api_links(names: list[str]) -> str:
    return ", ".join(f"{{py:obj}}`~{name}`" for name in names)


def _append_api_cell(script: Path, names: list[str]) -> None:
    if names:
        text = script.read_text(encoding="utf-8").rstrip("\n")
        cell = f"# %% [markdown]\n# **In the API reference.** This notebook imports {_api_links(names)}.\n"
        script.write_text(f"{text}\n\n{cell}", encoding="utf-8")  # markdown only: the execution cache still holds


def catalogue_page(identities=None, objects: dict | None = None) -> str:
    """The catalogue page: every identity (name, area, source, statement as display maths), by area.

    With ``objects`` (:func:`workbench.api_reference.public_objects`), each identity links to the API pages of the
    public functions its check and derivation call.
    """
    identities = list(discover() if identities is None else identities)
    areas: dict[str, list] = {}
    for identity in identities:
        areas.setdefault(identity.area, []).append(identity)
    lines = [
        "# Catalogue of identities",
        "",
        f"The {len(identities)} identities the workbench derives and checks, by area: the content of "
        "`workbench list`.  Each is checked by `workbench check NAME` and its derivation is printed by "
        "`workbench derive NAME`, which lists its hypotheses too.",
        "",
    ]
    for area in sorted(areas):
        lines += [f"## {area}", ""]
        for identity in sorted(areas[area], key=lambda i: i.name):
            lines += [
                f"### `{identity.name}`",
                "",
                f"**Source.** {_escape(identity.source)}",
                "",
                "```{math}",
                identity.statement.strip(),
                "```",
                "",
                *_hypotheses_block(identity),
            ]
            if objects is not None and (names := identity_api(identity, objects)):
                lines += [f"**Uses.** {_api_links(names)}", ""]
    return "\n".join(lines)


def mathjax_dir() -> Path:
    """The MathJax 2.7 folder the ``jupyter_server_mathjax`` package ships (its ``static`` folder)."""
    try:
        import jupyter_server_mathjax
    except ImportError as exc:
        raise BookError(
            "the bundled MathJax comes from jupyter-server-mathjax: pip install 'attention-workbench[book]' (or [lab])"
        ) from exc
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def copy_mathjax(target: Path) -> Path:
    """Copy the MathJax subset the site uses into ``target``; return ``target``."""
    source = mathjax_dir()
    for part in _MATHJAX_PARTS:
        matches = sorted(source.glob(part))
        if not matches:
            raise BookError(f"jupyter_server_mathjax lacks MathJax's {part} (looked in {source})")
        for found in matches:
            destination = target / found.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            if found.is_dir():
                shutil.copytree(found, destination, dirs_exist_ok=True)
            else:
                shutil.copy2(found, destination)
    return target


def _notebooks(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if p.name[:1].isdigit())


def _require(path: Path, what: str) -> Path:
    if not path.is_file():
        raise BookError(f"the course site needs {what}: {path} is missing")
    return path


def _fresh_check(folder: Path, marker: str = _MARKER, what: str = "staged") -> None:
    """Refuse ``folder`` when it holds files the builder did not write there."""
    if not folder.is_dir() or (any(folder.iterdir()) and not (folder / marker).exists()):
        raise BookError(f"{folder} exists and was not {what} by workbench book build; move it away first")


def _fresh(folder: Path, marker: str = _MARKER, what: str = "staged") -> None:
    """Empty ``folder`` for the builder: refuse one that holds files the builder did not write there."""
    if folder.exists():
        _fresh_check(folder, marker, what)
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / marker).write_text(f"{what} by workbench book build; replaced on every build\n")


def stage(
    source: Path,
    *,
    book_dir: Path | None = None,
    notebooks_dir: Path | None = None,
    solutions: bool = True,
    identities=None,
    api: bool = True,
) -> list[Session]:
    """Stage the site's Sphinx source tree in ``source`` (emptied first); return the sessions in order.

    ``api=True`` adds the API reference (one page per public name, :func:`workbench.api_reference.api_pages`),
    links each catalogue identity to the functions it uses and ends each notebook with the names it imports.

    ``book_dir`` holds conf.py, index.md, syllabus.md, bibliography.md, references.bib (and optionally
    _static/); ``notebooks_dir`` the course's percent scripts, the mathematical reference ``reference.md`` (staged
    beside them, as notebooks/reference.md; in the repository a link to book/reference.md) and the worked
    solutions in ``solutions/``.  Defaults: the repository's book/ and notebooks/.
    """
    book_dir = _book(book_dir)
    notebooks_dir = Path(notebooks_dir or course_root() / "notebooks")
    for name in ("conf.py", "index.md", "syllabus.md", "bibliography.md", "references.bib"):
        _require(book_dir / name, f"book/{name}")
    _require(notebooks_dir / "reference.md", "the mathematical reference notebooks/reference.md")
    scripts = _notebooks(notebooks_dir)
    if not scripts:
        raise BookError(f"no course notebook (NN_name.py) in {notebooks_dir}")
    sessions, problems = [], []
    for script in scripts:  # every notebook checked before anything is written; all problems reported at once
        try:
            sessions.append(session(script))
        except BookError as exc:
            problems.append(str(exc))
    if problems:
        raise BookError("; ".join(problems))
    source = Path(source)
    _fresh(source)
    for name in ("conf.py", "bibliography.md", "references.bib"):
        shutil.copy2(book_dir / name, source / name)
    if (book_dir / "_static").is_dir():
        shutil.copytree(book_dir / "_static", source / "_static")
    copy_mathjax(source / "_static" / "mathjax")
    course = source / "notebooks"
    course.mkdir()
    for script in scripts:
        shutil.copy2(script, course / script.name)
    shutil.copy2(notebooks_dir / "reference.md", course / "reference.md")
    answers = sorted((notebooks_dir / "solutions").glob("*_solutions.py")) if solutions else []
    if answers:
        (course / "solutions").mkdir()
        for script in answers:
            shutil.copy2(script, course / "solutions" / script.name)
    experiments = notebooks_dir.resolve().parent / "experiments"
    if experiments.is_dir():  # the notebooks read committed results as ../experiments/results
        (source / "experiments").symlink_to(experiments, target_is_directory=True)

    syllabus = (book_dir / "syllabus.md").read_text(encoding="utf-8").rstrip()
    syllabus += "\n\n## Sessions\n\nGenerated from the first cell of each notebook.\n\n" + syllabus_table(sessions)
    (source / "syllabus.md").write_text(syllabus, encoding="utf-8")
    missing: dict[str, str] = {}
    objects = public_objects(missing=missing) if api else None
    if missing:  # e.g. the book extra without torch: the reference documents the rest and says what it left out
        absent = sorted(set(missing.values()))
        packages = sorted({dotted.rpartition(".")[0] for dotted in missing})
        print(
            f"workbench book: warning: the API reference leaves out {len(missing)} names of {', '.join(packages)}: "
            f"they need {', '.join(absent)}, not installed here",
            file=sys.stderr,
        )
    (source / "catalogue.md").write_text(catalogue_page(identities, objects), encoding="utf-8")
    if api:
        api_pages(source, objects=objects)
        for script in scripts:  # the site's copy ends with links to the API pages of what the notebook imports
            _append_api_cell(course / script.name, script_api(script, objects))

    def toctree(caption: str, entries: list[str]) -> str:
        return "\n".join(["", "```{toctree}", f":caption: {caption}", ":maxdepth: 1", "", *entries, "```", ""])

    index = (book_dir / "index.md").read_text(encoding="utf-8").rstrip() + "\n"
    index += toctree("Course", ["syllabus", *(f"notebooks/{p.stem}" for p in scripts)])
    index += toctree("Reference", ["notebooks/reference", "catalogue", *(["api/index"] if api else []), "bibliography"])
    if answers:
        index += toctree("Solutions", [f"notebooks/solutions/{p.stem}" for p in answers])
    (source / "index.md").write_text(index, encoding="utf-8")
    return sessions


def _scale() -> str:
    scale = os.environ.get("WORKBENCH_SCALE", "small")
    if scale not in SCALES:
        raise BookError(f"WORKBENCH_SCALE must be 'small' or 'large', got {scale!r}")
    return scale


def _jobs(jobs: int | None) -> int:
    if jobs is None:
        return os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise BookError(f"jobs must be an integer >= 1 (notebooks executed at once), got {jobs!r}")
    return jobs


@dataclass(frozen=True)
class Execution:
    """One staged notebook's execution: ``seconds`` it took (its earlier run's, when ``cached``), or its ``error``."""

    path: Path
    seconds: float | None
    cached: bool
    error: str | None = None


def _kernel_environment(jobs: int) -> dict[str, str]:
    """What the kernels run with: the scale, the inline figure backend, and a fair share of the cores each."""
    env = dict(os.environ, WORKBENCH_SCALE=_scale())
    env.pop("MPLBACKEND", None)  # the kernels' inline backend puts the figures in the pages
    share = str(max(1, (os.cpu_count() or 1) // jobs))
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(variable, share)  # jobs kernels with a BLAS pool of every core each would thrash
    return env


def _execute_one(path: Path, timeout: int, env: dict[str, str]):
    """Run the notebook ``path`` in its folder, as myst-nb would: (executed notebook or None, seconds, error)."""
    from nbclient import NotebookClient

    notebook = _read_notebook(path)
    # As myst-nb's runner (jupyter-cache's single_nb_execution): a notebook's own execution metadata wins.
    own = notebook.metadata.get("execution", {})
    client = NotebookClient(
        notebook,
        timeout=own.get("timeout", timeout),
        allow_errors=own.get("allow_errors", False),
        record_timing=False,  # timings in the cells' metadata would change the hash the cache matches on
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute(env=env)  # the kernel's environment (start_kernel's env): scale, backend, threads
    except Exception as exc:  # a failing cell (its source and traceback), a timeout, a dead kernel
        return None, time.perf_counter() - start, str(exc) or repr(exc)
    return notebook, time.perf_counter() - start, None


def execute(source: Path, cache: Path, *, jobs: int | None = None, timeout: int = EXECUTION_TIMEOUT):
    """Execute the staged notebooks of ``source`` that myst-nb's cache ``cache`` lacks, ``jobs`` at a time.

    myst-nb (``nb_execution_mode = "cache"``) runs notebooks one after the other as Sphinx reads them; here they
    run in parallel first, each in its own folder and kernel as myst-nb would run it, and go into the same
    jupyter-cache, keyed by the hash of their code cells, so Sphinx then finds every one executed.  A notebook
    whose code has not changed since an earlier build is not run again.

    Returns one :class:`Execution` per notebook, in the staged order; raises :class:`BookError` naming every
    notebook that failed (their tracebacks go to stderr first).
    """
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn
    from tqdm import tqdm

    jobs = _jobs(jobs)
    source = Path(source)
    store = get_cache(str(cache))
    paths = sorted((source / "notebooks").rglob("*.py"))
    done: dict[Path, Execution] = {}
    pending = []
    for path in paths:
        notebook = _read_notebook(path)
        try:
            record = store.match_cache_notebook(notebook)
        except KeyError:
            if any(cell.cell_type == "code" for cell in notebook.cells):
                pending.append(path)
                continue
            # Nothing to run: cached as it is, without starting a kernel (myst-nb would start one).
            bundle = CacheBundleIn(notebook, str(path), data={"execution_seconds": 0.0})
            store.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
            done[path] = Execution(path, 0.0, cached=False)
        else:
            done[path] = Execution(path, record.data.get("execution_seconds"), cached=True)
    if pending:
        # Threads suffice: each notebook runs in its own kernel process, and a thread only waits on it.
        env = _kernel_environment(jobs)
        with (
            concurrent.futures.ThreadPoolExecutor(min(jobs, len(pending))) as pool,
            tqdm(total=len(pending), desc=f"executing notebooks ({jobs} at a time)", unit="nb", file=sys.stderr) as bar,
        ):
            futures = {pool.submit(_execute_one, path, timeout, env): path for path in pending}
            try:
                for future in concurrent.futures.as_completed(futures):
                    path = futures[future]
                    notebook, seconds, error = future.result()
                    if error is None:  # written by this thread only: one writer of the cache's database
                        bundle = CacheBundleIn(notebook, str(path), data={"execution_seconds": seconds})
                        store.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
                    done[path] = Execution(path, seconds, cached=False, error=error)
                    verb = "FAILED after" if error else "executed in"
                    bar.write(f"{verb} {seconds:.1f} s: {path.relative_to(source)}", file=sys.stderr)
                    bar.update()
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    executions = [done[path] for path in paths]
    failed = [e for e in executions if e.error is not None]
    if failed:
        for e in failed:
            print(f"\n{e.path.relative_to(source)} failed:\n{e.error}", file=sys.stderr)
        names = ", ".join(str(e.path.relative_to(source)) for e in failed)
        raise BookError(f"{len(failed)} notebook(s) failed to execute (tracebacks above): {names}")
    return executions


def _sphinx(builder: str, source: Path, out: Path, work: Path, jobs: int, tags: tuple[str, ...] = ()) -> int:
    """sphinx-build ``builder`` from the staged ``source`` into ``out``: its exit status (messages on stderr)."""
    command = [
        # -E: a fresh environment every build (the staged tree is new each time, and a saved environment goes
        # stale when references.bib changes); the notebooks' execution cache is what keeps a rebuild quick.
        sys.executable, "-m", "sphinx", "-b", builder, "-W", "--keep-going", "-q", "-E", "-j", str(jobs),
        "-d", str(work / f"doctrees-{builder}"),
        "-D", f"nb_execution_cache_path={work / '.jupyter_cache'}",
        "-D", f"nb_execution_timeout={EXECUTION_TIMEOUT}",
        *(f"-t{tag}" for tag in tags),
        str(source), str(out),
    ]  # fmt: skip
    return subprocess.run(command, env=_kernel_environment(jobs), check=False).returncode


def _prepare(work: Path, *, solutions: bool, book_dir, notebooks_dir, identities, jobs: int, api: bool = False) -> Path:
    """Stage the source in ``work/_source`` and execute what the cache lacks: the staged folder."""
    source = work / "_source"
    stage(source, book_dir=book_dir, notebooks_dir=notebooks_dir, solutions=solutions, identities=identities, api=api)
    execute(source, work / ".jupyter_cache", jobs=jobs)
    return source


def build(
    out: Path | None = None,
    *,
    solutions: bool = True,
    book_dir: Path | None = None,
    notebooks_dir: Path | None = None,
    identities=None,
    jobs: int | None = None,
    api: bool = True,
) -> int:
    """Build the site into ``out`` (default book/_build/html); return sphinx-build's exit status.

    ``api=True``: with the API reference (:func:`stage`), which adds about a minute and a half to a cold build on two
    cores (autodoc reads every public name); ``False`` for a quick build of the course alone.

    The staged source, the doctrees and the notebook execution cache go beside ``out`` (its parent folder).
    Notebooks execute at ``WORKBENCH_SCALE`` (``small`` unless set), ``jobs`` at a time (default: one per CPU),
    before Sphinx reads them (:func:`execute`); a notebook that fails raises :class:`BookError` naming it.
    Sphinx's messages go to stderr.
    """
    jobs = _jobs(jobs)
    _scale()
    out = Path(out or build_folder(book_dir) / "html").resolve()
    work = out.parent
    if out.exists():
        _fresh_check(out, _SITE_MARKER, "built")
    source = _prepare(
        work,
        solutions=solutions,
        book_dir=book_dir,
        notebooks_dir=notebooks_dir,
        identities=identities,
        jobs=jobs,
        api=api,
    )
    # A fresh output folder: no page of a renamed or removed notebook survives from an earlier build.  (The
    # execution cache and the doctrees beside it keep a rebuild quick.)
    _fresh(out, _SITE_MARKER, "built")
    return _sphinx("html", source, out, work, jobs)


# Waits until MathJax 2.7 has typeset the page (or the page has no MathJax): a flag set by a callback queued
# behind everything MathJax has queued so far.
_TYPESET = """
if (!window.MathJax || !MathJax.Hub) { return !document.querySelector('script[src*="MathJax.js"]'); }
if (window.__workbenchTypeset === undefined) {
    window.__workbenchTypeset = false;
    MathJax.Hub.Queue(function () { window.__workbenchTypeset = true; });
}
return window.__workbenchTypeset;
"""


def _chromium():
    """A headless Debian chromium under selenium (chromedriver), or a BookError saying what to install."""
    chromium_binary = shutil.which("chromium") or shutil.which("chromium-browser")
    missing = [
        what
        for what, present in (
            ("selenium (pip install selenium)", importlib.util.find_spec("selenium") is not None),
            ("chromium (apt-get install chromium)", chromium_binary is not None),
            ("chromedriver (apt-get install chromium-driver)", shutil.which("chromedriver") is not None),
        )
        if not present
    ]
    if missing:
        raise BookError("printing the course needs a headless chromium; install " + ", ".join(missing))
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium_binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.add_argument("--window-size=1200,1600")
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.command_executor.client_config.timeout = PRINT_TIMEOUT  # printing a whole course takes a while
    driver.set_page_load_timeout(PRINT_TIMEOUT)
    driver.set_script_timeout(PRINT_TIMEOUT)
    return driver


def print_pdf(page: Path, out: Path, *, open_answers: bool = True) -> Path:
    """Print the HTML ``page`` (served from its folder on 127.0.0.1) to the PDF ``out`` with headless chromium.

    The page is printed once MathJax has typeset it; the site's print styles (book/_static/workbench.css) wrap
    long code lines instead of cutting them.  ``open_answers`` opens the concept checks' answer dropdowns so the
    answers are printed (closed, only their "Answer" line is).
    """
    import base64

    page = Path(page).resolve()
    handler = functools.partial(_QuietHandler, directory=str(page.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = None
    try:
        driver = _chromium()
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/{page.name}")
        deadline = time.monotonic() + PRINT_TIMEOUT
        while not driver.execute_script(_TYPESET):
            if time.monotonic() > deadline:
                raise BookError(f"MathJax did not finish typesetting {page} within {PRINT_TIMEOUT} s")
            time.sleep(0.5)
        if open_answers:
            driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; });")
        # Chromium's own print (DevTools' Page.printToPDF): WebDriver's print command gives up after the renderer
        # is silent for 10 s, and a whole course takes longer to lay out on paper.
        printed = driver.execute_cdp_cmd(
            "Page.printToPDF",
            {
                "paperWidth": 8.27,  # A4, in inches
                "paperHeight": 11.69,
                "marginTop": 0.6,
                "marginBottom": 0.7,
                "marginLeft": 0.6,
                "marginRight": 0.6,
                "printBackground": True,
                "displayHeaderFooter": True,
                "headerTemplate": "<div></div>",
                "footerTemplate": (
                    '<div style="font-size: 8px; width: 100%; text-align: center; color: #555;">'
                    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
                ),
            },
        )
        pdf = base64.b64decode(printed["data"])
    finally:
        if driver is not None:
            driver.quit()
        server.shutdown()
        server.server_close()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(pdf)
    return out


def pdf(
    out: Path | None = None,
    *,
    solutions: bool = True,
    book_dir: Path | None = None,
    notebooks_dir: Path | None = None,
    identities=None,
    jobs: int | None = None,
) -> Path:
    """The whole course as one PDF ``out`` (default book/_build/course.pdf): return its path.

    The course is built as one HTML page (Sphinx's ``singlehtml`` builder, in book/_build/singlehtml beside the
    site's staged source and execution cache, which it shares with :func:`build`), then printed by headless
    chromium once its maths is typeset (:func:`print_pdf`).  Without ``solutions`` the solutions part is left
    out and the concept checks' answers stay folded.

    Raises
    ------
    BookError
        when a notebook fails, the single-page build fails, or no chromium/selenium is installed.
    """
    jobs = _jobs(jobs)
    _scale()
    work = build_folder(book_dir).resolve()
    out = Path(out or work / "course.pdf").resolve()
    if out.suffix.lower() != ".pdf":
        raise BookError(f"the PDF's name must end in .pdf, got {str(out)!r}")
    single = work / "singlehtml"
    if single.exists():
        _fresh_check(single, _SITE_MARKER, "built")
    source = _prepare(
        work, solutions=solutions, book_dir=book_dir, notebooks_dir=notebooks_dir, identities=identities, jobs=jobs
    )
    _fresh(single, _SITE_MARKER, "built")
    # The workbench_print tag: MathJax without its slow passes (book/conf.py), for a page with every formula.
    status = _sphinx("singlehtml", source, single, work, jobs, tags=("workbench_print",))
    if status != 0:
        raise BookError(f"the single-page build failed (sphinx-build exit status {status}; its messages are above)")
    return print_pdf(single / "index.html", out, open_answers=solutions)


SLIDES_THEME = "white"
# The decks' Sphinx configuration (sphinx-revealjs ships reveal.js; MathJax is the site's bundled subset).
SLIDES_CONF = """\
project = "Attention Geometry Workbench"
author = "the Attention Geometry Workbench authors"
copyright = "2026, the Attention Geometry Workbench authors"
extensions = ["myst_parser", "sphinx_revealjs", "sphinxcontrib.bibtex"]
exclude_patterns = ["conf.py"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_dmath_double_inline = True
suppress_warnings = ["myst.header"]
bibtex_bibfiles = ["references.bib"]
bibtex_reference_style = "author_year"
bibtex_default_style = "plain"
revealjs_html_theme = "revealjs-simple"
revealjs_style_theme = "{theme}"
revealjs_static_path = ["_static"]
revealjs_css_files = ["slides.css"]
revealjs_script_conf = {"width": 1280, "height": 720, "hash": True, "slideNumber": "c/t", "transition": "none"}
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
    "messageStyle": "none",
}
"""
# Figures fit beside the text on a 1280 × 720 slide; long prose is set a little smaller than reveal.js's 40 px.
SLIDES_CSS = """\
.reveal { font-size: 30px; }
.reveal h1 { font-size: 1.7em; }
.reveal h2 { font-size: 1.25em; }
.reveal h1, .reveal h2 { text-transform: none; }
.reveal section img { max-width: 95%; object-fit: contain; margin: 0.2em auto; border: 0; box-shadow: none; }
.reveal table { font-size: 0.42em; }
.reveal .workbench-dense { font-size: 0.8em; }
.reveal .workbench-references { font-size: 0.45em; column-count: 2; column-gap: 2em; text-align: left; }
.reveal .workbench-references p { margin: 0.2em 0; }
.reveal .math { font-size: 0.95em; }
.reveal section p, .reveal section li { text-align: left; }
.reveal p.workbench-licence { font-size: 0.5em; color: #555; text-align: center; }
"""
_SLIDES_MARKER = ".workbench-slides-source"
_LICENCE_LINE = (
    "© 2026 the Attention Geometry Workbench authors; these slides are CC BY 4.0 (LICENSE-CONTENT.md), "
    "the course's code MIT (LICENSE)."
)


def slides(
    out: Path | None = None,
    *,
    book_dir: Path | None = None,
    notebooks_dir: Path | None = None,
    identities=None,
    jobs: int | None = None,
) -> Path:
    """Every session as a reveal.js deck in ``out`` (default book/_build/slides): return its index page.

    The notebooks are staged and executed as for the site, sharing its execution cache beside ``out`` (after
    ``workbench book build`` with the default folders nothing runs again).  Each deck is made from its executed
    notebook by :func:`workbench.slides.deck`; Sphinx's ``revealjs`` builder (sphinx-revealjs, which ships
    reveal.js) writes one page per session with the bundled MathJax, so the decks open offline, from the file
    system or any static host.

    Raises
    ------
    BookError
        when a notebook fails, sphinx-revealjs is not installed, or the build fails.
    """
    from workbench.slides import deck

    if importlib.util.find_spec("sphinx_revealjs") is None:
        raise BookError("the slides need sphinx-revealjs: pip install 'attention-workbench[book]'")
    jobs = _jobs(jobs)
    _scale()
    out = Path(out or build_folder(book_dir) / "slides").resolve()
    work = out.parent  # as for the site: the staged source and the execution cache go beside the output
    if out.exists():
        _fresh_check(out, _SITE_MARKER, "built")
    source = _prepare(
        work, solutions=False, book_dir=book_dir, notebooks_dir=notebooks_dir, identities=identities, jobs=jobs
    )
    from jupyter_cache import get_cache

    store = get_cache(str(work / ".jupyter_cache"))
    decks = work / "_slides_source"
    _fresh(decks, _SLIDES_MARKER)
    (decks / "conf.py").write_text(SLIDES_CONF.replace("{theme}", SLIDES_THEME), encoding="utf-8")
    shutil.copy2(source / "references.bib", decks / "references.bib")
    copy_mathjax(decks / "_static" / "mathjax")
    (decks / "_static" / "slides.css").write_text(SLIDES_CSS, encoding="utf-8")
    (decks / "figures").mkdir()

    def figure(name: str, png: bytes) -> str:
        (decks / "figures" / name).write_bytes(png)
        return f"figures/{name}"

    stems = []
    for path in _notebooks(source / "notebooks"):
        _, executed = store.merge_match_into_notebook(_read_notebook(path))
        text = deck(executed, path.stem, figure)
        title, rest = text.split("\n", 1)
        # The licence under each title (the content licence covers the slides).
        (decks / f"{path.stem}.md").write_text(
            f"{title}\n{rest}".replace("\n## ", f'\n<p class="workbench-licence">{_LICENCE_LINE}</p>\n\n## ', 1),
            encoding="utf-8",
        )
        stems.append((path.stem, title.lstrip("# ")))
    index = ["# Slides of the course", "", "One deck per session (arrow keys move, Esc shows every slide).", ""]
    index += [f"* [{title}]({stem}.md)" for stem, title in stems]
    index += ["", f'<p class="workbench-licence">{_LICENCE_LINE}</p>', "", "```{toctree}", ":hidden:", ""]
    index += [stem for stem, _ in stems] + ["```", ""]
    (decks / "index.md").write_text("\n".join(index), encoding="utf-8")
    _fresh(out, _SITE_MARKER, "built")
    command = [
        # One process: sphinx-revealjs is not safe for parallel reading (and the decks are quick to write).
        sys.executable, "-m", "sphinx", "-b", "revealjs", "-W", "--keep-going", "-q", "-E",
        "-d", str(work / "doctrees-revealjs"), str(decks), str(out),
    ]  # fmt: skip
    status = subprocess.run(command, check=False).returncode
    if status != 0:
        raise BookError(f"the slides' build failed (sphinx-build exit status {status}; its messages are above)")
    # reveal.js ships every theme; some load web fonts from the web.  The decks use one, which loads nothing.
    for theme in (out / "_static" / "revealjs" / "dist" / "theme").glob("*.css"):
        if theme.name != f"{SLIDES_THEME}.css":
            theme.unlink()
    return out / "index.html"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


#: The names a browser on this machine sends in ``Host`` for the server on 127.0.0.1 (any other name is a page
#: elsewhere reaching the server through DNS rebinding, and is refused).
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files of the built site and nothing else.

    ``SimpleHTTPRequestHandler`` already blocks ``..`` in the path; on top of it: a file reached through a symbolic
    link that leads out of the site is not served, a folder without ``index.html`` is a 404 (no listings), and a
    request whose ``Host`` is not this machine's own name (127.0.0.1, localhost, [::1], with or without the port) is
    refused with 421.
    """

    def _local_host(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name in _LOCAL_HOSTS

    def send_head(self):
        if not self._local_host():
            self.send_error(421, "Misdirected Request: this server answers only to 127.0.0.1 and localhost")
            return None
        root = Path(self.directory).resolve()
        target = Path(self.translate_path(self.path)).resolve()
        if not target.is_relative_to(root):
            self.send_error(404, "File not found")
            return None
        return super().send_head()

    def list_directory(self, path):
        self.send_error(404, "File not found")
        return None

    def log_message(self, format, *args):
        pass


def serve(out: Path | None = None, port: int = 8000) -> None:
    """Serve the built site in ``out`` on http://127.0.0.1:PORT/ until interrupted (``port`` 0: any free port).

    Only on the loopback interface, only the site's own files (:class:`_SiteHandler`).
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise BookError(f"port must be an integer in [0, 65535], got {port!r}")
    out = Path(out or build_folder() / "html")
    if not (out / "index.html").is_file():
        raise BookError(f"no built site in {out}: run `workbench book build` first")
    handler = functools.partial(_SiteHandler, directory=str(out))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as error:
        raise BookError(
            f"cannot serve on 127.0.0.1:{port} ({error.strerror or error}); choose another --port"
        ) from None
    with server:
        print(f"serving {out} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
