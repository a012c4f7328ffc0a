"""The parts every experiment shares, below all of them.

Modules
-------
_config             -- ExperimentConfig (presets, field checks in declaration order, from_json) and the checks
                       the configs share (TRAINING_CHECKS, integer_check, device_check, ...)
_files              -- atomic writes and JSON records: atomic_write, save_json, save_text, jsonable, restore_floats
_run_files          -- the readers of a run's files: records and states checked before use, SHA-256 digests,
                       RunFileError
_runs               -- run directories and RunLog (run.json: status, conditions done, resume), committed_results,
                       the progress bar
_corpus_runs        -- a model read over every window of a corpus, streamed to records.jsonl and resumable
_corpus             -- the Shakespeare bytes split by work (ByteCorpus) and bits per byte
_training           -- the one training loop (train, Schedule: AdamW, warm-up and cosine decay, clipping, a logged
                       curve, a guard against non-finite steps); byte windows and held-out bits per byte
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.common._config": (
        "TRAINING_CHECKS",
        "Check",
        "ExperimentConfig",
        "device_check",
        "eval_bytes_check",
        "even_context_check",
        "integer_check",
        "name_check",
        "range_check",
    ),
    "workbench.experiments.common._corpus": ("ByteCorpus", "bits_per_byte", "shakespeare_bytes"),
    "workbench.experiments.common._corpus_runs": (
        "CorpusRun",
        "aggregate_layers",
        "layers_table",
        "read_records",
        "run_corpus",
        "strict_json",
    ),
    "workbench.experiments.common._files": ("atomic_write", "jsonable", "restore_floats", "save_json", "save_text"),
    "workbench.experiments.common._run_files": (
        "RUN_RECORD",
        "RunFileError",
        "check_digest",
        "load_state",
        "read_json_record",
        "table_rows",
    ),
    "workbench.experiments.common._runs": (
        "RUN_STATUSES",
        "RunLog",
        "committed_results",
        "progress",
        "resumable_run",
        "run_directory",
    ),
    "workbench.experiments.common._training": (
        "VOCAB",
        "Schedule",
        "Training",
        "held_out_bpb",
        "learning_rate",
        "next_byte_loss",
        "train",
        "train_bytes",
        "training_windows",
    ),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
