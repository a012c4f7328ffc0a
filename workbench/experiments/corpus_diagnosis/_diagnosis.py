"""``workbench diagnose --corpus``: every head of a model read as an operator on every window of a corpus.

The corpus (:func:`~workbench.models.read_corpus`: a file of one text per line, a folder of ``.txt`` files, or
``"shakespeare"``) is cut into windows of ``max_tokens`` tokens by the model's own tokenizer
(:func:`~workbench.models.corpus_windows`); each window is diagnosed (:func:`~workbench.models.diagnose_ids`)
and its report streamed to ``records.jsonl`` of the run directory (:func:`~workbench.experiments.common.run_corpus`:
resumable after an
interrupt), and the run ends with the per-layer table, mean ± sd over windows of every diagnostic.  The
circuit probe does not depend on the text, so it runs once per model, not once per window.
"""

from __future__ import annotations

from pathlib import Path

from workbench.experiments.common import CorpusRun, run_corpus
from workbench.models import Transformer, circuit_scores, corpus_windows, diagnose_ids, read_corpus
from workbench.validation import check_integer

__all__ = ["diagnose_corpus"]


def diagnose_corpus(
    model: Transformer,
    corpus,
    out,
    *,
    max_tokens: int = 64,
    limit: int | None = None,
    resume: bool = False,
    force: bool = False,
    progress: bool = True,
    model_name: str | None = None,
    workers: int = 1,
    order: str = "interleaved",
) -> CorpusRun:
    """Diagnose ``model`` on every window of ``corpus``, streamed to the run directory ``out``.

    Parameters
    ----------
    model : Transformer
        From :func:`~workbench.models.load_model` or :func:`~workbench.models.load_minilm`.
    corpus : str or Path
        A text file (one text per line), a folder of ``.txt`` files, or ``"shakespeare"``.
    out : str or Path
        The run directory (see :func:`~workbench.experiments.run_corpus`).
    max_tokens : int
        Tokens per window, the model's special tokens included.
    limit : int, optional
        Stop after this many windows.
    resume, force, progress
        As in :func:`~workbench.experiments.run_corpus`.
    model_name : str, optional
        The label of the records; default the model's name.
    workers : int
        Processes diagnosing windows in parallel (forked; each keeps the BLAS thread limit of this one).
    order : {"interleaved", "sequential"}
        The order of the windows (:func:`~workbench.models.corpus_windows`): by default the first window of every
        document, then the second of each, …, so that ``limit`` windows sample the whole corpus.

    Returns
    -------
    CorpusRun
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a workbench Transformer (from load_model), got {type(model).__name__}")
    max_tokens = check_integer("max_tokens", max_tokens, model.n_template + 2, model.max_positions)
    if limit is not None:
        limit = check_integer("limit", limit, 1)
    name = model.name if model_name is None else model_name
    documents = read_corpus(corpus)
    windows = corpus_windows(documents, model, max_tokens, limit, order=order)
    circuits = circuit_scores(model)

    def measure(window) -> dict:
        report = diagnose_ids(model, window.ids, special=window.special, model_name=name, circuits=circuits)
        record = report.to_dict()
        for key in ("text", "model", "truncated", "n_total", "unknown"):  # the run records the window itself
            record.pop(key)
        record.pop("head_geometry")  # the weights' reading, the same for every window (study head-subspaces)
        return record

    config = {
        "model": name,
        "model_dir": str(getattr(model, "path", "") or ""),
        "family": model.family,
        "corpus": str(corpus) if str(corpus) == "shakespeare" else str(Path(corpus).resolve()),
        "max_tokens": max_tokens,
        "limit": limit,
        "order": order,
    }
    if workers > 1 and model.backend != "numpy":
        raise ValueError(f"workers > 1 forks this process, which a torch model on {model.backend} cannot share; "
                         f"use workers=1, got workers={workers}")  # fmt: skip
    return run_corpus(windows, measure, out, config=config, resume=resume, force=force, progress=progress,
                      name="diagnose-corpus", workers=workers)  # fmt: skip
