"""``induction`` — Attention Geometry §11: two-layer transformers learning induction on repeated random tokens.

Each operator and architecture (attention only, or with an MLP) is trained by the shared loop on sequences
that repeat a random segment; the repeat loss, the heads' entropy and induction scores are logged, and the
phase transition is located.  ``lm``, ``transfer``, ``log-lens`` and the head-subspaces study build on it.

Modules
-------
_config             -- InductionConfig and its presets; variable_period_tokens (the training stream)
_model              -- InductionTransformer (the pre-LN transformer with an operator's heads)
_phase_transition   -- detect_phase_transition: where the repeat loss drops (PhaseTransition)
_run                -- repeat_losses, attention_scores, train_on_repeats, the operator × architecture driver
                       run_grid, run_induction, shifted_period_accuracy
_report             -- the table beside PAPER_INDUCTION, the sweep rows, the figures
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
