"""MagnusBlock language models and the fusion of their generator sublayers.

Modules
-------
_model              -- the model
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.magnus_fusion._model": (
        "GeneratorLM",
        "budget_schedule",
        "commutator_penalty",
        "commutator_sum",
        "decode_flop_share",
        "exponential_maps",
        "fused_maps",
        "fused_matrix",
        "fusion_wall_clock",
    ),
    "workbench.experiments.magnus_fusion._report": (
        "magnus_fusion_figure",
        "magnus_fusion_rows",
        "magnus_fusion_table",
    ),
    "workbench.experiments.magnus_fusion._run": ("MagnusFusionConfig", "run_magnus_fusion"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
