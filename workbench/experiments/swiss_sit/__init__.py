"""``swiss-sit`` — Table 1 of Attention Geometry §9: a one-block flow transformer on the Swiss roll.

For each operator (DMAP, DMTN, ATAP, ATTN) and block order the model is trained by flow matching on sets of
2-D points, sampled, and read with the attention diagnostics (entropy, reversibility, skew, spacing).

Modules
-------
_config             -- SwissSiTConfig and its presets; the block orders; swiss_roll_points
_model              -- SwissSiT: the flow transformer, one operator's attention
_run                -- train_flow, sample, diagnose and run_swiss_sit; the structural checks sit_transfer shares
_report             -- the table in the paper's layout, the sweep rows, PAPER_TABLE1
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
