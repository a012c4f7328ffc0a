"""Table 3 (Attention Geometry §11): one model carried ATTN → target → ATTN → target.

Modules
-------
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.transfer._report": (
        "PAPER_TABLE3",
        "transfer_rows",
        "transfer_sweep_figure",
        "transfer_sweep_table",
        "transfer_table",
    ),
    "workbench.experiments.transfer._run": ("TRANSFER_TASKS", "TransferConfig", "run_transfer"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
