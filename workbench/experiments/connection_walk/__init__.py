"""``study connection-walk`` — the Connection Laplacian's layerwise study of a real model (numpy).

Every window of a corpus read layer by layer as a connection walk, beside a null model and over context lengths.

Modules
-------
_report             -- the metrics' names and labels, the Markdown tables, the figures
_study              -- the study: every window read per layer, the null model, the context-length sweep
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.connection_walk._report": ("connection_walk_table",),
    "workbench.experiments.connection_walk._study": ("study_connection_walk", "trace_bytes"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
