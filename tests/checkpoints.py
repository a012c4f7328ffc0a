"""Tiny random checkpoints written by ``transformers`` at test time, and its float64 reference (shared test helpers).

Used by ``test_models_checkpoints.py`` (the forward pass against ``transformers``) and ``test_models_diagnose.py``
(the diagnostics against quantities recomputed from ``transformers``' attentions).  Models: GPT-2, BERT and the
Llama family (Llama with grouped-query attention and RoPE scalings, Qwen2, Mistral), of width 32, 2 layers and
4 heads, weights of size 0.3 (sharper attention than the default initialisation); tokenizers: byte-level BPEs
trained here with ``tokenizers`` on a few sentences (one with a BOS template).

``transformers`` computes a few pieces in float32 even in a float64 model (the RoPE frequencies and cos/sin,
RMSNorm's normalisation, the Llama-family softmax: explicit ``torch.float``/``torch.float32`` casts).  Inside
:func:`float64_transformers` those modules see a ``torch`` whose ``float``/``float32`` is float64, so every
operation of the reference runs in float64; nothing else of ``transformers`` changes.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

WIDTH, LAYERS, HEADS = 32, 2, 4
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a literal special token in a text is only text",
    "attention heads read the residual stream as a walk on tokens",
    "the dog sleeps and the fox runs over the hills and far away",
] * 20

_FLOAT_MODULES = (
    "transformers.modeling_rope_utils",
    "transformers.models.llama.modeling_llama",
    "transformers.models.qwen2.modeling_qwen2",
    "transformers.models.mistral.modeling_mistral",
)


class _Float64Torch:
    """``torch`` with ``float`` and ``float32`` meaning float64 (for the reference's explicit casts only)."""

    float = torch.float64
    float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


@contextlib.contextmanager
def float64_transformers():
    """Run the Llama-family reference fully in float64 (see the module docstring)."""
    modules = [importlib.import_module(name) for name in _FLOAT_MODULES if importlib.util.find_spec(name)]
    saved = [module.torch for module in modules]
    try:
        for module in modules:
            module.torch = _Float64Torch()
        yield
    finally:
        for module, original in zip(modules, saved, strict=True):
            module.torch = original


def randomise(model, seed: int):
    """Weights far from the near-uniform attention of the default initialisation (a sharper oracle)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=generator, dtype=torch.float64).to(p.dtype)
            if "norm" in name.lower() or ".ln" in name or name.startswith("ln"):
                p.copy_(1.0 + 0.2 * noise if name.endswith("weight") else 0.1 * noise)
            elif name.endswith("bias"):
                p.copy_(0.2 * noise)
            else:
                p.copy_(0.3 * noise)
    return model.eval()


def bpe(bos: bool):
    """A byte-level BPE of 300 tokens trained on :data:`CORPUS`; with ``bos`` a ``<s> $A`` template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>"] + (["<s>"] if bos else [])
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    if bos:
        bos_id = tokenizer.token_to_id("<s>")
        tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", bos_id)])
    else:
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    return tokenizer


def reference_outputs(model, ids):
    """``transformers``' hidden states [L+1, n, D] and attentions [L, H, n, n] on one sequence of ids."""
    with torch.no_grad():
        out = model(torch.as_tensor(ids)[None], output_attentions=True, output_hidden_states=True)
    hidden = np.stack([h[0].numpy() for h in out.hidden_states])
    attention = np.stack([a[0].numpy() for a in out.attentions])
    return hidden, attention


def save(model, directory, tokenizer=None, dtype=None, **kwargs):
    """``save_pretrained`` as safetensors (optionally cast to ``dtype``), with ``tokenizer.json`` beside it."""
    if dtype is not None:
        model = model.to(dtype)
    model.save_pretrained(directory, safe_serialization=True, **kwargs)
    if tokenizer is not None:
        tokenizer.save(str(directory / "tokenizer.json"))
    return directory


def gpt2(seed=0, **options):
    """A random ``GPT2LMHeadModel``: 320 tokens, width 32, 2 layers, 4 heads, 64 positions, eager attention."""
    config = transformers.GPT2Config(
        vocab_size=320, n_embd=WIDTH, n_layer=LAYERS, n_head=HEADS, n_positions=64, attn_implementation="eager",
        bos_token_id=0, eos_token_id=0, **options,
    )  # fmt: skip
    return randomise(transformers.GPT2LMHeadModel(config), seed)


def llama_config(cls=transformers.LlamaConfig, rope=None, **options):
    """A Llama-family configuration: 4 query heads sharing 2 key/value heads (GQA), d_head 8, 64 positions."""
    rope = rope or {"rope_type": "default", "rope_theta": 10000.0}
    return cls(
        vocab_size=320, hidden_size=WIDTH, intermediate_size=48, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        num_key_value_heads=2, max_position_embeddings=64, rope_parameters=rope, attn_implementation="eager",
        bos_token_id=1, eos_token_id=0, **options,
    )  # fmt: skip


def llama(config, seed=1, cls=transformers.LlamaForCausalLM):
    """A random model of ``config`` (built in float64 mode, so its RoPE buffers are exact)."""
    with float64_transformers():
        return randomise(cls(config), seed)


def gpt2_and_corpus(tmp_path_factory):
    """A random 2-layer, 4-head GPT-2 on disk (seed 41, its BPE tokenizer) and a two-line corpus: (folder, file)."""
    directory = save(gpt2(seed=41), tmp_path_factory.mktemp("gpt2"), bpe(bos=False))
    corpus = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    sentences = ["the quick brown fox jumps over the lazy dog", "attention heads read the residual stream"]
    corpus.write_text("\n".join(" and ".join([s] * 3) for s in sentences) + "\n", encoding="utf-8")
    return directory, corpus
