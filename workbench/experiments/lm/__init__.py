"""Table 2 (Attention Geometry §11): byte-level causal language models under one operator's scores.

Modules
-------
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.lm._report": (
        "PAPER_TABLE2",
        "language_model_rows",
        "language_model_sweep_figure",
        "language_model_sweep_table",
        "language_model_table",
        "paired_difference",
    ),
    "workbench.experiments.lm._run": ("LanguageModelConfig", "byte_induction_probe", "new_model", "run_language_model"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
