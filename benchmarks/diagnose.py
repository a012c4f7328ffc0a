"""`workbench diagnose` at the issue's three workloads: one sentence, a corpus through MiniLM, a GPT-2-sized model.

1. One 12-token sentence through all-MiniLM-L6-v2: the diagnostics after loading (``diagnose``: the forward
   pass, the circuit probe and every per-head and per-layer reading), best of three.  Beside it, the forward
   pass alone, ours (numpy float64) and the one a user would otherwise run, ``transformers``' ``BertModel``
   in float64 with ``output_attentions`` on the same weights (eager attention), with their largest attention
   difference so a fast wrong answer cannot pass.
2. ``windows`` windows × 64 tokens of the Shakespeare corpus through MiniLM (``diagnose_corpus``: tokenizing,
   windowing, diagnosing, streaming the records to a run directory, the layer table): wall seconds, with
   ``workers`` processes (2: the two cores of the target machine).
3. A GPT-2-shaped checkpoint of 124M parameters (``GPT2Config()``: 12 layers, 12 heads, width 768), randomly
   initialised by ``transformers`` (seed 0) and saved to a temporary folder, ``gpt2_windows`` windows × 64
   tokens of the same corpus: wall seconds after loading.

BLAS threads are capped at ``threads`` (default 1; the CLI's default) with threadpoolctl.  Targets (issue 19):
1 s, 600 s and 300 s.  Run: ``workbench bench diagnose [--windows N]``.
"""

from __future__ import annotations

import platform
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

#: The ``run`` keywords ``workbench bench`` may pass.
OPTIONS = ("windows",)

SENTENCE = "The quick brown fox jumps over the lazy dog."  # 12 word pieces with [CLS] and [SEP]
TARGETS = {"sentence": 1.0, "corpus": 600.0, "gpt2": 300.0}


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _transformers_forward(model_dir: Path, ids: np.ndarray):
    import torch
    import transformers

    reference = transformers.BertModel.from_pretrained(str(model_dir), attn_implementation="eager").double().eval()

    def forward():
        with torch.no_grad():
            return reference(torch.tensor(ids)[None], output_attentions=True).attentions

    return forward


def _gpt2_checkpoint(folder: Path, size: str) -> Path:
    """A randomly initialised GPT-2 checkpoint with MiniLM's tokenizer (any tokenizer.json serves the windows)."""
    import shutil

    import torch
    import transformers

    from workbench.models import minilm_path

    torch.manual_seed(0)
    config = transformers.GPT2Config() if size == "124M" else transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4)
    model = transformers.GPT2Model(config)
    model.save_pretrained(str(folder), safe_serialization=True)
    shutil.copy(minilm_path() / "tokenizer.json", folder / "tokenizer.json")
    return folder


def run(
    windows: int = 1024, gpt2_windows: int = 64, threads: int = 1, gpt2_size: str = "124M", workers: int = 2
) -> dict:
    from threadpoolctl import threadpool_limits

    from workbench.experiments import diagnose_corpus
    from workbench.models import diagnose, load_minilm, load_model, minilm_path, read_checkpoint

    rows = []
    with threadpool_limits(limits=threads), tempfile.TemporaryDirectory() as tmp:
        model = load_minilm()
        diagnose(model, SENTENCE)  # warm: first calls import scipy, matplotlib-free paths
        seconds = _best(lambda: diagnose(model, SENTENCE), 3)
        ids = model.tokenize(SENTENCE).ids
        ours = _best(lambda: model.trace_ids(ids), 5)
        theirs_forward = _transformers_forward(minilm_path(), ids)
        theirs = _best(theirs_forward, 5)
        difference = float(
            np.abs(np.stack([a[0].numpy() for a in theirs_forward()]) - model.trace_ids(ids).attention).max()
        )
        rows.append([
            "MiniLM, 1 sentence (12 tokens): diagnose", f"{seconds:.2f} s", "—", f"≤ {TARGETS['sentence']:g} s",
            "yes" if seconds <= TARGETS["sentence"] else "no",
            f"forward: ours {1e3 * ours:.1f} ms, transformers {1e3 * theirs:.1f} ms ({theirs / ours:.1f}×); "
            f"max |ΔA| {difference:.1e}",
        ])  # fmt: skip
        if windows:
            start = time.perf_counter()
            result = diagnose_corpus(
                model, "shakespeare", Path(tmp) / "corpus", limit=windows, progress=False, workers=workers
            )
            total = time.perf_counter() - start
            target = TARGETS["corpus"] * windows / 1024
            rows.append([
                f"MiniLM, Shakespeare, {result.n_records} windows × 64 tokens", f"{total:.1f} s",
                f"{total / result.n_records:.3f} s", f"≤ {target:g} s", "yes" if total <= target else "no",
                f"{workers} worker processes × {threads} BLAS thread; circuit probe once; records streamed",
            ])  # fmt: skip
        if gpt2_windows:
            folder = _gpt2_checkpoint(Path(tmp) / "gpt2", gpt2_size)
            gpt2 = load_model(folder)
            checkpoint = read_checkpoint(folder)
            parameters = sum(int(np.prod(checkpoint.shape(name))) for name in checkpoint.names)
            start = time.perf_counter()
            result = diagnose_corpus(
                gpt2, "shakespeare", Path(tmp) / "gpt2-run", limit=gpt2_windows, progress=False, workers=workers
            )
            total = time.perf_counter() - start
            target = TARGETS["gpt2"] * gpt2_windows / 64
            rows.append([
                f"GPT-2 random ({parameters / 1e6:.0f}M parameters), {result.n_records} windows × 64 tokens",
                f"{total:.1f} s", f"{total / result.n_records:.3f} s", f"≤ {target:g} s",
                "yes" if total <= target else "no", "causal: ε_rev, energy and loops undefined (null, with the reason)",
            ])  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "title": "workbench diagnose: one sentence, a corpus through MiniLM, a GPT-2-sized model (numpy float64)",
        "columns": ["workload", "wall", "per window", "target", "met", "notes"],
        "rows": rows,
        "notes": (
            f"{platform.machine()}, {threads} BLAS thread(s), numpy {np.__version__}; best of 3 for the sentence; "
            f"process peak RSS {peak:.0f} MiB"
        ),
    }
