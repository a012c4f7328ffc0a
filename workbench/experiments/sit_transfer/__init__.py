"""``sit-transfer`` — Attention Geometry §10: the Swiss SiT moved between operators with its weights kept.

A flow transformer trained under ATTN is projected into DMTN and DMAP (no training), then adapted; every state
is sampled and read as in ``swiss-sit``, beside the paper's §10 FIDs (directions, not values).

Modules
-------
_config             -- SitTransferConfig (the Swiss SiT's fields, the block order, the adaptation budgets)
_run                -- project_model and run_sit_transfer (pretrain, project, adapt, read every state)
_report             -- the table beside PAPER_SECTION10, the sweep rows, the figure
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.sit_transfer._config": ("PAPER_SECTION10", "SIT_TRANSFER_TARGETS", "SitTransferConfig"),
    "workbench.experiments.sit_transfer._report": ("MEASUREMENTS", "sit_transfer_rows", "sit_transfer_table"),
    "workbench.experiments.sit_transfer._run": ("project_model", "run_sit_transfer"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
