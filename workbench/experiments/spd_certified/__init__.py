"""SPD-MLPs with Lipschitz caps on scikit-learn's digits: certified radii.

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
    "workbench.experiments.spd_certified._config": ("SPDCertifiedConfig", "digits_split"),
    "workbench.experiments.spd_certified._model": ("CertifiableMLP", "certified_radius", "l2_attack"),
    "workbench.experiments.spd_certified._report": ("spd_certified_rows", "spd_certified_table"),
    "workbench.experiments.spd_certified._run": ("run_spd_certified",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
