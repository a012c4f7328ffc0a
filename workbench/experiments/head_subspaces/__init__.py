"""``study head-subspaces`` — the heads of a real model, or of the induction task, as points of a Grassmannian.

Modules
-------
_study              -- study_head_subspaces (a checkpoint's Q/K/V/O subspaces, distances, the Mantel test against
                       the attention patterns), study_induction_subspaces (the trained induction models' heads
                       and the K-composition of their circuit, over seeds), head_subspaces_table
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
