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
* Jupyter refuses to run as root without ``--allow-root``, which containers need.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from workbench.book import mathjax_dir

__all__ = ["LAB_DEFAULTS", "lab_command", "lab_settings_dir"]

#: The setting defaults the lab gets (JupyterLab plugin id → settings).
LAB_DEFAULTS = {
    "@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}
_MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
_NEEDS_LAB = "workbench lab needs JupyterLab: pip install 'attention-workbench[lab]'"


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
    if not given("--HTMLExporter.mathjax_url"):
        mathjax = mathjax_dir() / "MathJax.js"
        command.append(f"--HTMLExporter.mathjax_url={mathjax.as_uri()}?config={_MATHJAX_CONFIG}")
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not (given("--allow-root") or given("--ServerApp.allow_root")):
        command.append("--allow-root")
    return command + list(extra)
