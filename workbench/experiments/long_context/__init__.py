"""``long-context`` — the roadmap's banded exp-Markov attention against fused softmax on byte LMs.

Byte language models with banded exp-Markov attention (its time t learned per layer) and with softmax are
trained by the shared loop at contexts 256–4096 and compared: held-out bits per byte, tokens per second and
their crossover, the activations each saves for the backward pass.

Modules
-------
_config             -- LongContextConfig: the model, the contexts, the training budget, timing; presets
_model              -- LongContextLM, CausalSoftmaxAttention, the mixers, saved_tensor_bytes
_run                -- new_models and run_long_context (train, score, time, write the run)
_report             -- the table, the crossover context, the sweep rows, the figure
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.long_context._config": ("LongContextConfig",),
    "workbench.experiments.long_context._model": (
        "LONG_CONTEXT_MIXERS",
        "CausalSoftmaxAttention",
        "LongContextLM",
        "saved_tensor_bytes",
    ),
    "workbench.experiments.long_context._report": (
        "crossover_context",
        "long_context_figure",
        "long_context_rows",
        "long_context_table",
    ),
    "workbench.experiments.long_context._run": ("new_models", "run_long_context"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
