"""The Connection Laplacian's layerwise study of a real model.

Modules
-------
_study
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.connection_walk._study": ("connection_walk_table", "study_connection_walk", "trace_bytes"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
