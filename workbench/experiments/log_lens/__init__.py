"""Log-lens dashboards on the induction task.

Modules
-------
_circuits
_config             -- the frozen config and its presets
_report             -- the Markdown table, the sweep rows, the figures
_run                -- the runner: trains, measures, writes the run directory
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
