"""``spd-certified`` — the roadmap's SPD-MLPs e^{S} with Lipschitz caps, certified on scikit-learn's digits.

Capped SPD-MLPs and a dense MLP certified post hoc are trained on the digits; the certified ℓ2 radius of each
prediction is set against accuracy, and checked by targeted attacks.

Modules
-------
_config             -- SPDCertifiedConfig and its presets; digits_split
_model              -- CertifiableMLP, certified_radius, l2_attack
_run                -- run_spd_certified (train, certify, attack, compare)
_report             -- the table, the sweep rows, the figure
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
