"""A masked byte transformer whose token mixing is a Givens flow.

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
    "workbench.experiments.givens_mixer._config": ("GIVENS_MIXER_CONDITIONS", "MIXER_INITS", "GivensMixerConfig"),
    "workbench.experiments.givens_mixer._model": (
        "MASK_ID",
        "MaskedByteTransformer",
        "MaskedBytes",
        "count_spikes",
        "mask_bytes",
        "masked_bpb",
        "masked_eval_set",
        "training_stream",
    ),
    "workbench.experiments.givens_mixer._report": ("givens_mixer_figures", "givens_mixer_rows", "givens_mixer_table"),
    "workbench.experiments.givens_mixer._run": ("run_givens_mixer",),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
