"""Banded exp-Markov attention against fused softmax on byte LMs at long contexts.

Modules
-------
_config             -- LongContextConfig: the settings, their checks, the presets quick, paper, gpu
_model              -- the model
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.long_context._config": ("LongContextConfig",),
    "workbench.experiments.long_context._model": (
        "LONG_CONTEXT_MIXERS",
        "CausalSoftmaxAttention",
        "LongContextLM",
        "saved_tensor_bytes",
    ),
    "workbench.experiments.long_context._report": (
        "crossover_context",
        "long_context_figure",
        "long_context_rows",
        "long_context_table",
    ),
    "workbench.experiments.long_context._run": ("new_models", "run_long_context"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
