"""The heads' subspaces of a real model or of the induction task.

Modules
-------
_study
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.head_subspaces._study": (
        "head_subspaces_table",
        "study_head_subspaces",
        "study_induction_subspaces",
    ),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
