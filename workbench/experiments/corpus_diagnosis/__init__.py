"""A real model's heads read as operators on every window of a corpus.

Modules
-------
_diagnosis
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.corpus_diagnosis._diagnosis": ("diagnose_corpus",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
