"""``lm`` — Table 2 of Attention Geometry §11: a byte-level causal language model under one operator's scores.

``workbench experiment lm`` trains one model (the induction experiment's transformer, with its MLP sublayer) on
the Shakespeare bytes with ATTN, DMTN, DMAP or ATAP logits, and reports held-out bits per byte and the byte
induction probe; a sweep over operator and seed gives Table 2 with paired differences.

Modules
-------
_config             -- LanguageModelConfig: the model, the training budget, the presets quick, paper and gpu
_run                -- new_model, byte_induction_probe and run_language_model (train, score, write the run)
_report             -- the table beside the paper's, the sweep's paired differences and learning curves
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.lm._config": ("LanguageModelConfig",),
    "workbench.experiments.lm._report": (
        "PAPER_TABLE2",
        "language_model_rows",
        "language_model_sweep_figure",
        "language_model_sweep_table",
        "language_model_table",
        "paired_difference",
    ),
    "workbench.experiments.lm._run": ("byte_induction_probe", "new_model", "run_language_model"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
