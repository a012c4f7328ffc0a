"""The course as a static HTML site: ``workbench book build`` and ``workbench book serve``.

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
    notebooks/          the course's percent scripts, and reference.md (book/reference.md) beside them
    notebooks/solutions the worked solutions (left out with ``--without-solutions``)
    experiments         a link to the repository's experiments/ (committed results some notebooks read)
    _static/mathjax     the MathJax subset the pages load

Then ``sphinx-build -W --keep-going``: a warning (a missing reference, a bad cross-reference, a notebook that
fails) fails the build.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from workbench.catalogue import discover

__all__ = [
    "LABELS",
    "BookError",
    "Session",
    "build",
    "catalogue_page",
    "copy_mathjax",
    "mathjax_dir",
    "serve",
    "session",
    "stage",
    "syllabus_table",
]

ROOT = Path(__file__).resolve().parents[1]
LABELS = ("Objectives", "Prerequisites", "Time")
SCALES = ("small", "large")
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


def session(path: Path) -> Session:
    """The session of notebook ``path``: number, title, and the three labelled parts of its first cell.

    The first markdown cell opens with ``# NN — Title`` and carries the bold labels ``**Objectives.**``,
    ``**Prerequisites.**`` and ``**Time.**``, each followed by its text (up to the next label).

    Raises
    ------
    BookError
        naming the notebook, when the title or a label is missing.
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
        parts[label] = first[found.end() : end].strip()
        if not parts[label]:
            raise BookError(f"{path.name}: the label **{label}.** has no text after it")
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
    """The session table (MyST ``list-table``) of ``sessions``, for a page beside the folder ``folder``."""
    lines = [
        "```{list-table}",
        ":header-rows: 1",
        ":widths: 8 17 36 26 13",
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
    lines.append("```")
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


def catalogue_page(identities=None) -> str:
    """The catalogue page: every identity (name, area, source, statement as display maths), by area."""
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


def _fresh(folder: Path, marker: str = _MARKER, what: str = "staged") -> None:
    """Empty ``folder`` for the builder: refuse one that holds files the builder did not write there."""
    if folder.exists():
        if not folder.is_dir() or (any(folder.iterdir()) and not (folder / marker).exists()):
            raise BookError(f"{folder} exists and was not {what} by workbench book build; move it away first")
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
) -> list[Session]:
    """Stage the site's Sphinx source tree in ``source`` (emptied first); return the sessions in order.

    ``book_dir`` holds conf.py, index.md, syllabus.md, reference.md, bibliography.md, references.bib (and
    optionally _static/); ``notebooks_dir`` the course's percent scripts and their ``solutions/``.  Defaults: the
    repository's book/ and notebooks/.
    """
    book_dir = Path(book_dir or ROOT / "book")
    notebooks_dir = Path(notebooks_dir or ROOT / "notebooks")
    for name in ("conf.py", "index.md", "syllabus.md", "reference.md", "bibliography.md", "references.bib"):
        _require(book_dir / name, f"book/{name}")
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
    shutil.copy2(book_dir / "reference.md", course / "reference.md")
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
    (source / "catalogue.md").write_text(catalogue_page(identities), encoding="utf-8")

    def toctree(caption: str, entries: list[str]) -> str:
        return "\n".join(["", "```{toctree}", f":caption: {caption}", ":maxdepth: 1", "", *entries, "```", ""])

    index = (book_dir / "index.md").read_text(encoding="utf-8").rstrip() + "\n"
    index += toctree("Course", ["syllabus", *(f"notebooks/{p.stem}" for p in scripts)])
    index += toctree("Reference", ["notebooks/reference", "catalogue", "bibliography"])
    if answers:
        index += toctree("Solutions", [f"notebooks/solutions/{p.stem}" for p in answers])
    (source / "index.md").write_text(index, encoding="utf-8")
    return sessions


def _scale() -> str:
    scale = os.environ.get("WORKBENCH_SCALE", "small")
    if scale not in SCALES:
        raise BookError(f"WORKBENCH_SCALE must be 'small' or 'large', got {scale!r}")
    return scale


def build(
    out: Path | None = None,
    *,
    solutions: bool = True,
    book_dir: Path | None = None,
    notebooks_dir: Path | None = None,
    identities=None,
) -> int:
    """Build the site into ``out`` (default book/_build/html); return sphinx-build's exit status.

    The staged source, the doctrees and the notebook execution cache go beside ``out`` (its parent folder).
    Notebooks execute at ``WORKBENCH_SCALE`` (``small`` unless set); Sphinx's messages go to stderr.
    """
    out = Path(out or (Path(book_dir or ROOT / "book") / "_build" / "html")).resolve()
    env = dict(os.environ, WORKBENCH_SCALE=_scale())
    env.pop("MPLBACKEND", None)  # the kernels' inline backend puts the figures in the pages
    work = out.parent
    source = work / "_source"
    stage(source, book_dir=book_dir, notebooks_dir=notebooks_dir, solutions=solutions, identities=identities)
    # A fresh output folder: no page of a renamed or removed notebook survives from an earlier build.  (The
    # execution cache and the doctrees beside it keep a rebuild quick.)
    _fresh(out, _SITE_MARKER, "built")
    command = [
        # -E: a fresh environment every build (the staged tree is new each time, and a saved environment goes
        # stale when references.bib changes); the notebooks' execution cache is what keeps a rebuild quick.
        sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q", "-E",
        "-d", str(work / "doctrees"),
        "-D", f"nb_execution_cache_path={work / '.jupyter_cache'}",
        str(source), str(out),
    ]  # fmt: skip
    return subprocess.run(command, env=env, check=False).returncode


def serve(out: Path | None = None, port: int = 8000) -> None:
    """Serve the built site in ``out`` on http://127.0.0.1:PORT/ until interrupted."""
    out = Path(out or ROOT / "book" / "_build" / "html")
    if not (out / "index.html").is_file():
        raise BookError(f"no built site in {out}: run `workbench book build` first")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(out))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving {out} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
