"""``magnus-fusion`` — the Lie-Exponential Roadmap's MagnusBlock: fusing a block's generator sublayers.

A byte-level language model whose blocks carry ``r`` linear generator sublayers :math:`e^{A_i}` is trained with
and without a commutator budget; each block's sublayers are then fused into one matrix (BCH orders 1–4, the
exact product) and the fusions are scored: Δbpb, logits error, wall clock and the Amdahl bound.

Modules
-------
_config             -- MagnusFusionConfig: the model, the budgets and their annealing, the fusion orders, timing
_model              -- GeneratorLM, the commutator penalty and budget schedule, fused matrices, fusion timing
_run                -- run_magnus_fusion: train each budget with the shared loop, fuse, score, write the run
_report             -- the table, the sweep rows, the figure
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.magnus_fusion._config": (
        "FLOAT32_LOGITS_TOLERANCE",
        "MAX_BUDGETS",
        "MagnusFusionConfig",
        "budget_label",
    ),
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
    "workbench.experiments.magnus_fusion._run": ("run_magnus_fusion",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
