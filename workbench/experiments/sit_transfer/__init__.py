"""SiT transfer (Attention Geometry §10): the Swiss SiT moved between operators, weights kept.

Modules
-------
_config             -- the frozen config and its presets
_report             -- the Markdown table, the sweep rows, the figure
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.sit_transfer._config": ("PAPER_SECTION10", "SIT_TRANSFER_TARGETS", "SitTransferConfig"),
    "workbench.experiments.sit_transfer._report": ("MEASUREMENTS", "sit_transfer_rows", "sit_transfer_table"),
    "workbench.experiments.sit_transfer._run": ("project_model", "run_sit_transfer"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
