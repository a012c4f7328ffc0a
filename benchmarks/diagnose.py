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
4. Families read through ``transformers`` (issue 36): a GPT-NeoX-shaped checkpoint of Pythia-160M's shape
   (``GPTNeoXForCausalLM``, 12 layers, 12 heads, width 768, rotary on a quarter of each head: 162M parameters)
   on one 64-token sequence, and a ViT-B/16-shaped one (``ViTModel``, 86M) on one 224×224 image (scikit-learn's
   ``china.jpg`` through ``ViTImageProcessor``): ``diagnose`` after loading, best of two after a first call
   (which reads the head geometry once).  Beside it the forward pass a user would otherwise run,
   ``transformers`` in float64 with ``output_attentions``, and ours (the same forward with the kernel capture).

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
OPTIONS = ("windows", "threads")

SENTENCE = "The quick brown fox jumps over the lazy dog."  # 12 word pieces with [CLS] and [SEP]
TARGETS = {"sentence": 1.0, "corpus": 600.0, "gpt2": 300.0, "neox": 2.0, "vit": 3.0}


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


def gpt2_checkpoint(folder: Path, size: str) -> Path:
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


def _family_checkpoints(folder: Path, size: str) -> tuple[Path, Path]:
    """A GPT-NeoX checkpoint of Pythia-160M's shape and a ViT-B/16 one (random, seed 0), or tiny ones for tests."""
    import torch
    import transformers

    small = {} if size == "full" else {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                       "intermediate_size": 128}  # fmt: skip
    torch.manual_seed(0)
    neox = transformers.GPTNeoXConfig(
        **({"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072} | small),
        vocab_size=50304, max_position_embeddings=2048, rotary_pct=0.25,
    )  # fmt: skip
    transformers.GPTNeoXForCausalLM(neox).save_pretrained(str(folder / "neox"))
    torch.manual_seed(0)
    transformers.ViTModel(transformers.ViTConfig(**small)).save_pretrained(str(folder / "vit"))
    transformers.ViTImageProcessor().save_pretrained(str(folder / "vit"))
    return folder / "neox", folder / "vit"


def _family_rows(folder: Path, size: str) -> list[list[str]]:
    import torch
    import transformers
    from sklearn.datasets import load_sample_image

    from workbench.models import diagnose_ids, diagnose_image, load_model, read_checkpoint

    neox_dir, vit_dir = _family_checkpoints(folder, size)
    image = load_sample_image("china.jpg")
    ids = np.random.default_rng(0).integers(10, 50000, 64)
    rows = []
    for label, directory, target, read in (
        ("GPT-NeoX", neox_dir, TARGETS["neox"], lambda m: diagnose_ids(m, ids, text="64 random tokens")),
        ("ViT-B/16", vit_dir, TARGETS["vit"], lambda m: diagnose_image(m, image)),
    ):
        start = time.perf_counter()
        model = load_model(directory)
        loading = time.perf_counter() - start
        start = time.perf_counter()
        read(model)  # the first call reads the head geometry (once per model)
        first = time.perf_counter() - start
        seconds = _best(lambda model=model, read=read: read(model), 2)
        checkpoint = read_checkpoint(directory)
        parameters = sum(int(np.prod(checkpoint.shape(name))) for name in checkpoint.names)
        if label == "ViT-B/16":  # the user's route: the checkpoint's own processor, as transformers loads it
            from PIL import Image

            processor = transformers.AutoImageProcessor.from_pretrained(str(directory))
            pixels = processor(images=Image.fromarray(image), return_tensors="pt")["pixel_values"].double()
            inputs = {"pixel_values": pixels}
            ours = _best(lambda model=model: model.trace_image(image), 2)
        else:
            inputs = {"input_ids": torch.as_tensor(ids)[None]}
            ours = _best(lambda model=model: model.trace_ids(ids), 2)
        loader = transformers.AutoModel
        reference = loader.from_pretrained(str(directory), dtype=torch.float64, attn_implementation="eager").eval()

        def forward(reference=reference, inputs=inputs):
            with torch.no_grad():
                return reference(**inputs, output_attentions=True).attentions

        theirs = _best(forward, 2)
        n = int(forward()[0].shape[-1])
        rows.append([
            f"{label}-shaped random ({parameters / 1e6:.0f}M parameters), one {'image' if 'ViT' in label else 'text'} "
            f"({n} tokens): diagnose after loading", f"{seconds:.2f} s", "—", f"≤ {target:g} s",
            "yes" if seconds <= target else "no",
            f"load + proof {loading:.1f} s, first call {first:.1f} s; forward: ours {ours:.2f} s, transformers "
            f"{theirs:.2f} s ({theirs / ours:.2f}×)",
        ])  # fmt: skip
    return rows


def run(
    windows: int = 1024,
    gpt2_windows: int = 64,
    threads: int = 1,
    gpt2_size: str = "124M",
    workers: int = 2,
    families: str | None = "full",
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
            folder = gpt2_checkpoint(Path(tmp) / "gpt2", gpt2_size)
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
        if families:
            import torch

            torch_threads = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                rows += _family_rows(Path(tmp) / "families", families)
            finally:
                torch.set_num_threads(torch_threads)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "title": "workbench diagnose: one sentence, a corpus through MiniLM, a GPT-2-sized model, families read "
        "through transformers (float64)",
        "columns": ["workload", "wall", "per window", "target", "met", "notes"],
        "rows": rows,
        "notes": (
            f"{platform.machine()}, {threads} BLAS thread(s), numpy {np.__version__}; best of 3 for the sentence; "
            f"process peak RSS {peak:.0f} MiB"
        ),
    }
