"""Swiss SiT (Attention Geometry §9, Table 1): a one-block flow transformer on the Swiss roll.

Modules
-------
_config             -- the frozen config and its presets
_model              -- the model
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.swiss_sit._config": ("SWISS_SIT_ORDERS", "SwissSiTConfig", "swiss_roll_points"),
    "workbench.experiments.swiss_sit._model": ("SwissSiT",),
    "workbench.experiments.swiss_sit._report": ("PAPER_TABLE1", "swiss_sit_rows", "swiss_sit_table"),
    "workbench.experiments.swiss_sit._run": (
        "EPS_REV_TOLERANCE",
        "diagnose",
        "diagnostic_checks",
        "run_swiss_sit",
        "sample",
        "train_condition",
        "train_flow",
    ),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
