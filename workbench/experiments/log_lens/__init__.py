"""``log-lens`` — the roadmap's log-lens dashboards of the induction task.

The induction experiment's models are trained again with snapshots: the commutator maps of
S_h = log(I + W_OV^h) beside the heads' circuits, and how both change at the induction transition.

Modules
-------
_config             -- LogLensConfig and its presets
_circuits           -- the heads' circuits: composition scores, rank correlation, the alignment test
_run                -- lens_of_maps, transition_statistics and run_log_lens (through induction's run_grid)
_report             -- the table, the sweep rows, the dashboards
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.log_lens._circuits": (
        "alignment_test",
        "change_statistics",
        "composition_scores",
        "head_circuits",
        "rank_correlation",
    ),
    "workbench.experiments.log_lens._config": ("LOG_LENS_OPERATORS", "LogLensConfig"),
    "workbench.experiments.log_lens._report": ("log_lens_rows", "log_lens_table", "save_dashboards"),
    "workbench.experiments.log_lens._run": ("lens_of_maps", "run_log_lens", "transition_statistics"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
