"""The parts every experiment shares: config base, run directories, corpus runs, byte corpus, training loop.

Modules
-------
_config             -- ExperimentConfig and the field checks the configs share
_corpus             -- the Shakespeare bytes, split by work, and bits per byte
_corpus_runs        -- a model read over every window of a corpus, streamed to records.jsonl, resumable
_files              -- atomic writes, JSON records (jsonable, save_json, restore_floats), text files
_run_files          -- the readers of a run's files: records, states, digests, one refusal type
_runs               -- run directories, RunLog (run.json), resumable runs, the progress bar
_training           -- the one training loop (AdamW, warm-up, logging, guards); byte windows, held-out bpb
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
