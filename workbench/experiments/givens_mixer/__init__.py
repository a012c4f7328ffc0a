"""``givens-mixer`` — the roadmap's Givens flow as a transformer's token mixing, on masked bytes.

A bidirectional byte transformer on masked Shakespeare mixes tokens by a GivensFlowMixer (with or without a
LayerNorm), softmax attention or a learned n×n matrix, over a learning-rate × warm-up grid; the shared loop's
guard records divergence, and the run reports masked bits per byte, loss spikes and gradient norms.

Modules
-------
_config             -- GivensMixerConfig, the conditions and the mixers' initialisations
_model              -- MaskedByteTransformer, the masked training stream and held-out set, masked_bpb,
                       count_spikes
_run                -- run_givens_mixer (every condition, learning rate and warm-up; orthogonality checked)
_report             -- the table, the sweep rows, the figures
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
