"""JupyterLab on the course: the command ``workbench lab`` runs, and the settings it gives the lab.

The percent scripts in ``notebooks/`` are the notebooks: jupytext's contents manager opens each ``.py`` as a
notebook and saves edits into the script itself (``notebooks/jupytext.toml`` pairs nothing, so no ``.ipynb``
twin is written).  What the lab needs besides, the command line sets here rather than the user:

* a double-click opens a percent script as a notebook.  JupyterLab reads setting defaults ("overrides") from
  its application settings folder only, so the lab gets a workbench-owned copy of that folder, in the Jupyter
  data dir, holding the files of the real one (nothing of the user's is lost) and one more default: jupytext's
  notebook view for Python files.  The same default turns off the prompt about fetching Jupyter news from the
  web (a classroom may be offline, and the prompt covers the notebook).  Settings the user saves in the lab
  still win over every default;
* "Save and Export Notebook As → HTML" loads MathJax from a CDN unless told otherwise: the export is pointed at
  the MathJax 2.7 that jupyter-server-mathjax installs (the same copy the course site bundles, a file URL, since
  the page may be opened later from disk when no server runs);
* the course's citations.  jupyterlab-myst renders the notebooks' MyST (cross-references, dropdowns, maths) but
  resolves no ``{cite:p}``/``{cite:t}``: it reads no BibTeX file, no ``myst.yml`` and no frontmatter
  ``bibliography:``, and shows every key as a "Citation Not Found" warning.  The lab therefore gets one more
  extension, the workbench's own (``lab_extension.js``, a prebuilt extension with no build step), in a
  workbench-owned labextensions folder of the Jupyter data dir, with the course's ``references.bib`` read into
  ``citations.json`` beside it at every start (the .bib stays the one source).  The extension prints each
  citation as the site does (sphinxcontrib-bibtex's author-year style), as a link that opens a Bibliography
  panel at its entry;
* raw files (``/files/...``, the address jupyterlab-myst gives a link to a file) are served through the contents
  manager, as the notebooks themselves are, rather than by Jupyter's default static handler, which refuses a
  symbolic link whose target is outside the lab's folder (403): ``notebooks/reference.md`` is one, to
  ``book/reference.md``;
* Jupyter refuses to run as root without ``--allow-root``, which containers need.

Links to the mathematical reference need nothing more: ``notebooks/reference.md`` sits beside the notebooks, and a
link ``reference.md#reference-a7`` opens it in JupyterLab's Markdown viewer (rendered by jupyterlab-myst, whose
``(reference-a7)=`` label becomes the section's id), scrolled to the section by the extension above, while the
site's myst-parser resolves the same link against the document's labels.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Sequence
from html import escape as html_escape
from pathlib import Path

from workbench.book import mathjax_dir
from workbench.resources import course_root

__all__ = ["LAB_DEFAULTS", "lab_command", "lab_extensions_dir", "lab_settings_dir"]

#: The setting defaults the lab gets (JupyterLab plugin id → settings).
LAB_DEFAULTS = {
    "@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}
_MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
_NEEDS_LAB = "workbench lab needs JupyterLab: pip install 'attention-workbench[lab]'"
#: The workbench's JupyterLab extension: its name (the folder it is installed under) and its source.
EXTENSION_NAME = "attention-workbench-course"
_EXTENSION_SOURCE = Path(__file__).with_name("lab_extension.js")
# Raw files (/files/...) served through the contents manager, as the notebooks are (see the module docstring).
_FILES_HANDLER = "jupyter_server.files.handlers.FilesHandler"


def lab_settings_dir() -> Path:
    """Rebuild the workbench's copy of JupyterLab's application settings folder, with :data:`LAB_DEFAULTS`."""
    try:
        from jupyter_core.paths import jupyter_data_dir
        from jupyterlab.commands import get_app_dir
    except ImportError as exc:  # pragma: no cover - the lab extra brings it
        raise ValueError(_NEEDS_LAB) from exc

    app_dir = Path(get_app_dir())
    ours = Path(jupyter_data_dir()) / "workbench" / "lab"
    settings = ours / "settings"
    if settings.exists():
        shutil.rmtree(settings)  # the workbench's own copy, rebuilt on every start
    if (app_dir / "settings").is_dir():
        shutil.copytree(app_dir / "settings", settings)
    (settings / "overrides.d").mkdir(parents=True, exist_ok=True)
    # overrides.d/*.json apply before the folder's overrides.json, so an administrator's overrides.json wins.
    (settings / "overrides.d" / "attention-workbench.json").write_text(json.dumps(LAB_DEFAULTS, indent=2) + "\n")
    # JupyterLab also reads <settings>/../static/package.json (the built application's extension metadata).
    static = ours / "static"
    if static.is_symlink():
        static.unlink()
    if (app_dir / "static").is_dir() and not static.exists():
        static.symlink_to(app_dir / "static", target_is_directory=True)
    return settings


def _bibfile(folder: Path) -> Path | None:
    """The course's BibTeX file: beside the notebooks, else in the book/ folder next to them, else the course's."""
    folder = Path(folder).resolve()
    for candidate in (folder, folder.parent / "book", course_root() / "book"):
        candidate = candidate / "references.bib"
        if candidate.is_file():
            return candidate
    return None


def _author_year(entry) -> tuple[str, bool, str]:
    """(authors, et al., year) of a citation as sphinxcontrib-bibtex's author-year style prints it.

    One name is its last name, two are joined by "and", three or more are the first and "et al."; the editors
    stand in for missing authors, the title for missing names, and "n.d." for a missing year.
    """
    from pybtex.backends.plaintext import Backend
    from pybtex.richtext import Text

    people = entry.persons.get("author") or entry.persons.get("editor") or []
    text = Backend()  # an instance, not render_as("text") (see _citations)

    def last(person) -> str:
        return Text.from_latex(" ".join(person.last_names)).render(text)

    if not people:
        authors = Text.from_latex(entry.fields.get("title", entry.key)).render(text)
    elif len(people) == 2:
        authors = f"{last(people[0])} and {last(people[1])}"
    else:
        authors = last(people[0])
    year = entry.fields.get("year", "n.d.")
    return authors, len(people) > 2, year


def _citations(bibfile: Path | None) -> dict:
    """The bibliography as the lab's extension reads it: every entry, numbered and formatted as on the site.

    pybtex's "plain" style, the site's (``bibtex_default_style``), sorts and formats the entries; the numbers are
    those of the site's bibliography page (all entries, in that order).  An ``error`` says why there are none.
    pybtex is called with backend instances throughout: ``render_as(name)`` looks its backend up among all installed
    entry points on every call, which takes minutes over a whole bibliography.
    """
    if bibfile is None:
        return {"entries": [], "error": "no references.bib beside the notebooks or in book/"}
    try:
        from pybtex.backends import html, plaintext
        from pybtex.database import parse_file
        from pybtex.exceptions import PybtexError
        from pybtex.style.formatting.plain import Style
    except ImportError:
        return {"entries": [], "error": "citations need pybtex: pip install pybtex"}
    bibliography = parse_file(str(bibfile), bib_format="bibtex")
    style, as_html, as_text = Style(), html.Backend(), plaintext.Backend()
    entries = []
    for number, entry in enumerate(style.sort(bibliography.entries.values()), start=1):
        authors, etal, year = _author_year(entry)
        try:
            text = style.format_entry(str(number), entry).text
            plain, rich = text.render(as_text), text.render(as_html)
        except PybtexError as exc:  # an incomplete entry (the site's build fails on it) still gets a line here
            plain = f"{authors}. {year}. (This entry cannot be formatted: {exc}.)"
            rich = html_escape(plain)
        entries.append(
            {
                "key": entry.key,
                "number": number,
                "author": authors,
                "etal": etal,
                "year": year,
                "text": plain,
                "html": rich,
            }
        )
    return {"source": f"Every entry of {bibfile.name}, numbered as on the course site.", "entries": entries}


def lab_extensions_dir(bibfile: Path | None = None) -> Path:
    """Rebuild the workbench's labextensions folder: its extension, with ``bibfile``'s entries as citations.json.

    The folder (in the Jupyter data dir) holds one prebuilt extension, :data:`EXTENSION_NAME`: ``package.json``,
    the script ``lab_extension.js`` under a name that carries its hash (so a browser never runs a cached older
    copy), and ``citations.json`` from :func:`_citations`.
    """
    try:
        from jupyter_core.paths import jupyter_data_dir
    except ImportError as exc:  # pragma: no cover - the lab extra brings it
        raise ValueError(_NEEDS_LAB) from exc

    folder = Path(jupyter_data_dir()) / "workbench" / "lab" / "labextensions"
    extension = folder / EXTENSION_NAME
    if extension.exists():
        shutil.rmtree(extension)  # the workbench's own copy, rebuilt on every start
    (extension / "static").mkdir(parents=True)
    script = _EXTENSION_SOURCE.read_bytes()
    entry = f"static/remoteEntry.{hashlib.sha256(script).hexdigest()[:16]}.js"
    (extension / entry).write_bytes(script)
    citations = _citations(bibfile)
    (extension / "static" / "citations.json").write_text(json.dumps(citations, ensure_ascii=False) + "\n")
    package = {
        "name": EXTENSION_NAME,
        "version": "1.0.0",  # the extension's own (JupyterLab requires one); the file name carries the content's hash
        "description": "The course's citations and bibliography in JupyterLab (workbench lab).",
        "jupyterlab": {"extension": True, "_build": {"load": entry, "extension": "./extension"}},
    }
    (extension / "package.json").write_text(json.dumps(package, indent=2) + "\n")
    return folder


def lab_command(folder: Path, extra: Sequence[str] = ()) -> list[str]:
    """The ``jupyter lab`` command line on ``folder``, with the course's settings; ``extra`` goes last.

    An option the user passes in ``extra`` (``--LabApp.app_settings_dir``, ``--HTMLExporter.mathjax_url``,
    ``--allow-root``) replaces the one this would add.
    """
    if shutil.which("jupyter") is None:
        raise ValueError(_NEEDS_LAB)
    try:
        import jupytext  # noqa: F401 - its contents manager serves the percent scripts as notebooks
    except ImportError as exc:  # pragma: no cover - the lab extra brings it
        raise ValueError("workbench lab needs jupytext: pip install 'attention-workbench[lab]'") from exc

    def given(option: str) -> bool:
        return any(arg == option or arg.startswith(option + "=") for arg in extra)

    command = ["jupyter", "lab", f"--ServerApp.root_dir={Path(folder).resolve()}"]
    if not given("--LabApp.app_settings_dir"):
        command.append(f"--LabApp.app_settings_dir={lab_settings_dir()}")
    if _EXTENSION_SOURCE.is_file():
        extensions = lab_extensions_dir(_bibfile(folder))
        error = json.loads((extensions / EXTENSION_NAME / "static" / "citations.json").read_text()).get("error")
        if error:
            print(f"workbench lab: citations will show as keys ({error})", file=sys.stderr)
        # A list option given twice accumulates, so the user's own extra labextensions paths still apply.
        command.append(f"--LabApp.extra_labextensions_path={extensions}")
    else:  # an installation without the package's data file
        print(f"workbench lab: citations will show as keys ({_EXTENSION_SOURCE} is missing)", file=sys.stderr)
    if not given("--ContentsManager.files_handler_class"):
        command.append(f"--ContentsManager.files_handler_class={_FILES_HANDLER}")
    if not given("--HTMLExporter.mathjax_url"):
        mathjax = mathjax_dir() / "MathJax.js"
        command.append(f"--HTMLExporter.mathjax_url={mathjax.as_uri()}?config={_MATHJAX_CONFIG}")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not (given("--allow-root") or given("--ServerApp.allow_root")):
        command.append("--allow-root")
    return command + list(extra)
