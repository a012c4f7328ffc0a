"""``diagnose --corpus`` — a real model's heads read as operators on every window of a corpus (numpy).

Modules
-------
_diagnosis          -- diagnose_corpus: every window of a corpus through the model, each head and layer read
                       with the attention diagnostics, streamed into a resumable corpus run
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.corpus_diagnosis._diagnosis": ("diagnose_corpus",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
