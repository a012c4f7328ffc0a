"""``transfer`` — Table 3 of Attention Geometry §11: one model carried ATTN → target → ATTN → target.

The model is trained under ATTN, projected into the target operator's corner with its weights kept, adapted,
carried back and forth again (budgets 3 : 1 : 1), and measured right after each projection and each adaptation,
on the byte language model (the ``lm`` experiment's) or on the induction task (the ``induction`` experiment's).

Modules
-------
_config             -- TransferConfig: the task, the target, the stages' budgets, the model; STAGES, TRANSFER_TASKS
_run                -- run_transfer: the two tasks (training with the shared loop, measuring) and the stages
_report             -- the table beside the paper's, the sweep table and figure
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.transfer._config": ("STAGES", "TRANSFER_TASKS", "TransferConfig"),
    "workbench.experiments.transfer._report": (
        "PAPER_TABLE3",
        "transfer_rows",
        "transfer_sweep_figure",
        "transfer_sweep_table",
        "transfer_table",
    ),
    "workbench.experiments.transfer._run": ("run_transfer",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
