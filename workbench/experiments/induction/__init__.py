"""Induction heads (Attention Geometry §11): two-layer transformers on repeated random tokens.

Modules
-------
_config             -- the frozen config and its presets
_model              -- the model
_phase_transition
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.induction._config": (
        "ARCHITECTURES",
        "INDUCTION_OPERATORS",
        "InductionConfig",
        "variable_period_tokens",
    ),
    "workbench.experiments.induction._model": ("InductionTransformer",),
    "workbench.experiments.induction._phase_transition": ("PhaseTransition", "detect_phase_transition"),
    "workbench.experiments.induction._report": ("PAPER_INDUCTION", "induction_rows", "induction_table"),
    "workbench.experiments.induction._run": (
        "attention_scores",
        "repeat_losses",
        "run_grid",
        "run_induction",
        "shifted_period_accuracy",
        "train_on_repeats",
    ),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
