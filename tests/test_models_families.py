"""Every family transformers runs through an attention kernel, read by HookedTransformer and checked against
transformers itself (issue 36).

Oracle: the checkpoint loaded again by ``transformers`` (``AutoModel.from_pretrained``, eager attention, float64),
run inside this file's own float64 mapping (every modelling module's ``torch.float32``/``torch.float`` and the
``Tensor.float`` method mean float64, the model built inside it so its rotary tables are float64 too) — written
here independently of ``workbench.models._capture``.  Tolerances: attention 1e-12 absolute and hidden states 1e-12
relative (both runs are the same float64 code; the margin is for summation order only).  Tiny random models:
width 32, 2 layers, 4 heads (2 key/value heads where the family has GQA), weights of size 0.3.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from checkpoints import bpe, randomise  # noqa: E402

from workbench.models import (  # noqa: E402
    AdapterProofError,
    diagnose_audio,
    diagnose_ids,
    diagnose_image,
    load_model,
    read_transformers,
)
from workbench.models._hooked import preprocess_image  # noqa: E402

transformers.logging.set_verbosity_error()

BASE = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, vocab_size=320,
    max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
)  # fmt: skip
GQA = dict(num_key_value_heads=2, head_dim=8)
VISION = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, image_size=32,
              patch_size=8)  # fmt: skip

# model_type → (config options, mechanisms every layer shows, mechanisms some layer shows)
TEXT_FAMILIES = {
    "gpt_neox": ({}, {"rotary"}, set()),
    "gemma": (GQA, {"rotary"}, set()),
    "gemma2": (GQA | {"sliding_window": 4}, {"rotary", "softcap"}, {"sliding_window"}),
    "gemma3_text": (GQA | {"sliding_window": 4}, {"rotary", "qk_norm"}, {"sliding_window"}),
    "phi": ({}, {"rotary"}, set()),
    "phi3": ({}, {"rotary"}, set()),
    "opt": ({"word_embed_proj_dim": 32, "ffn_dim": 48}, set(), set()),
    "gptj": ({"rotary_dim": 4, "n_positions": 64}, {"rotary"}, set()),
    "falcon": ({"num_kv_heads": 1, "multi_query": True}, {"rotary"}, set()),
    "qwen3": (GQA, {"rotary", "qk_norm"}, set()),
    "olmo": ({}, {"rotary"}, set()),
    "olmo2": ({}, {"rotary", "qk_norm"}, set()),
    "stablelm": ({"num_key_value_heads": 4}, {"rotary"}, set()),
    "starcoder2": (GQA, {"rotary"}, set()),
    "gpt_bigcode": ({"n_positions": 64}, set(), set()),
    "mixtral": (GQA | {"num_local_experts": 4, "num_experts_per_tok": 2}, {"rotary"}, set()),
    "smollm3": (GQA, set(), {"rotary"}),
    "roberta": ({"max_position_embeddings": 66}, set(), set()),
    "xlm-roberta": ({"max_position_embeddings": 66}, set(), set()),
    "distilbert": ({"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 48}, set(), set()),
    "electra": ({"embedding_size": 32}, set(), set()),
    "albert": ({"embedding_size": 16}, set(), set()),
    "modernbert": ({"cls_token_id": 1, "sep_token_id": 2, "global_attn_every_n_layers": 1}, {"rotary"}, set()),
    "t5": ({"d_model": 32, "d_kv": 8, "num_heads": 4, "num_layers": 2, "d_ff": 48}, set(), {"position_bias"}),
}
VISION_FAMILIES = {"vit": 1, "deit": 2, "clip_vision_model": 1}
GPT_NEO = {"attention_types": [[["global", "local"], 1]], "num_layers": 2, "window_size": 4}
# families whose attention transformers computes inside its module: read from the outputs (workbench.models._inline)
INLINE_FAMILIES = {
    "bloom": ({}, {"position_bias"}, set()),
    "gpt_neo": (GPT_NEO, set(), {"sliding_window"}),
    "mpnet": ({}, {"position_bias"}, set()),
    "deberta-v2": ({"relative_attention": False}, set(), set()),
}


class _Float64Torch:
    def __init__(self):
        self.float = self.float32 = torch.float64

    def __getattr__(self, name):
        return getattr(torch, name)


@contextlib.contextmanager
def float64_everywhere():
    """The reference's float64: every loaded modelling module's torch.float32 and Tensor.float mean float64."""
    names = [n for n in list(sys.modules) if n.startswith("transformers.models.") and ".modeling_" in n]
    names += ["transformers.modeling_rope_utils", "transformers.masking_utils"]
    modules = [importlib.import_module(n) for n in names if hasattr(sys.modules.get(n), "torch")]
    saved, method = [(m, m.torch) for m in modules], torch.Tensor.float
    try:
        for module in modules:
            module.torch = _Float64Torch()
        torch.Tensor.float = lambda self, *a, **k: self.to(torch.float64)
        with torch.no_grad():
            yield
    finally:
        torch.Tensor.float = method
        for module, original in saved:
            module.torch = original


def _tiny(model_type: str, options: dict, vision: bool = False):
    config = transformers.AutoConfig.for_model(model_type, **((VISION if vision else BASE) | options))
    model = transformers.AutoModel.from_config(config)
    return randomise(model, seed=3)


def _reference(directory, model_type: str):
    """transformers' own run of the saved checkpoint, built and run in float64 (the oracle)."""
    import transformers as t

    # the workbench's KernelCapture imports the modelling module first; import it here too so it is mapped
    loader = t.CLIPVisionModel if model_type == "clip_vision_model" else t.AutoModel
    with float64_everywhere():
        model = loader.from_pretrained(directory, dtype=torch.float64, attn_implementation="eager")
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    if getattr(model.config, "_experts_implementation", None) not in (None, "eager"):
        model.set_experts_implementation("eager")
    return model.eval()


def _run(model, **inputs):
    with float64_everywhere():
        out = model(**inputs, output_attentions=True, output_hidden_states=True, return_dict=True)
    return np.stack([a[0].numpy() for a in out.attentions]), np.stack([h[0].numpy() for h in out.hidden_states])


def _relative(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


ALL_TEXT = TEXT_FAMILIES | INLINE_FAMILIES


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    """model_type → checkpoint folder (tiny random model saved as safetensors, with a BPE tokenizer)."""
    folders = {}
    tokenizer = bpe(bos=False)
    for model_type, (options, _, _) in ALL_TEXT.items():
        folder = tmp_path_factory.mktemp(model_type)
        _tiny(model_type, options).save_pretrained(folder)
        tokenizer.save(str(folder / "tokenizer.json"))
        folders[model_type] = folder
    return folders


@pytest.mark.parametrize("model_type", sorted(ALL_TEXT))
def test_a_text_family_equals_transformers_and_its_operator_is_proven(families, model_type):
    model = load_model(families[model_type])
    assert type(model).__name__ == "HookedTransformer" and model.family == model_type
    ids = np.array([5, 17, 42, 9, 88, 120, 33, 7, 61, 250, 14, 3])
    trace = model.trace_ids(ids)
    reference = _reference(families[model_type], model_type)
    attention, hidden = _run(reference, input_ids=torch.as_tensor(ids)[None])
    assert np.max(np.abs(trace.attention - attention)) <= 1e-12
    assert _relative(trace.hidden_states, hidden) <= 1e-12
    # the proof at load: every step within its tolerance, the mechanisms the family has
    for layer in model.layers:
        if model_type in INLINE_FAMILIES:  # no kernel: the output projection and the score residual
            assert set(layer.proof) == {"output_input", "output", "score_residual"}
            assert max(layer.proof["output_input"], layer.proof["output"]) <= 1e-10
            assert layer.proof["score_residual"] <= 1e-9
        else:
            assert set(layer.proof) == {"values", "queries_keys", "attention", "output_input", "output"}
            assert layer.proof["attention"] <= 1e-12 and max(layer.proof.values()) <= 1e-10
    _, every, some = ALL_TEXT[model_type]
    found = [set(layer.mechanisms) for layer in model.layers]
    assert all(every <= f for f in found), found
    assert set().union(*found) - every <= some | {"sliding_window"} and some <= set().union(*found), found
    # causal decoders and bidirectional encoders as the mask says
    encoders = {"roberta", "xlm-roberta", "distilbert", "electra", "albert", "modernbert", "t5", "mpnet", "deberta-v2"}
    assert model.causal == (model_type not in encoders)
    # the diagnosis: every attention-based reading; the bilinear ones null where a mechanism breaks them
    report = diagnose_ids(model, ids[:10], text="probe").to_dict()
    head = report["heads"][0]
    assert head["entropy"] is not None and head["delta_orth"] is not None
    broken_form = {"qk_norm", "softcap"} & set(model.layers[0].mechanisms)
    broken_corner = {"softcap", "position_bias"} & set(model.layers[0].mechanisms)
    assert (head["rho_skew"] is None) == bool(broken_form)
    assert (head["corner"] is None) == bool(broken_corner)
    mechanisms = model.layers[0].mechanisms
    if broken_form:  # the reason is the mechanism's own sentence (q/k norms first, as diagnose picks)
        assert head["undefined"]["rho_skew"] == mechanisms["qk_norm" if "qk_norm" in broken_form else "softcap"]
    if broken_corner:
        assert head["undefined"]["corner"] == mechanisms["softcap" if "softcap" in broken_corner else "position_bias"]
    json.dumps(report)  # strict JSON


def test_a_falcon_with_alibi_reads_its_bias_as_a_position_bias(tmp_path):
    _tiny("falcon", {"alibi": True, "num_kv_heads": 1, "multi_query": True}).save_pretrained(tmp_path)
    model = load_model(tmp_path)
    assert all("position_bias" in layer.mechanisms and "rotary" not in layer.mechanisms for layer in model.layers)
    ids = np.arange(3, 15)
    attention, _ = _run(_reference(tmp_path, "falcon"), input_ids=torch.as_tensor(ids)[None])
    assert np.max(np.abs(model.trace_ids(ids).attention - attention)) <= 1e-12
    head = diagnose_ids(model, ids, text="probe").heads[0]
    # ALiBi is the bilinear form plus a position bias: the form's readings stay, the corners (βqkᵀ alone) go
    assert head.rho_skew is not None and head.corner is None
    assert "position bias" in head.undefined["corner"]


@pytest.mark.parametrize("model_type", sorted(VISION_FAMILIES))
def test_a_vision_family_reads_an_image_with_its_own_preprocessor(tmp_path, model_type):
    from sklearn.datasets import load_sample_image

    _tiny(model_type, {}, vision=True).save_pretrained(tmp_path)
    processor = transformers.CLIPImageProcessor if model_type.startswith("clip") else transformers.ViTImageProcessor
    options = {"size": {"shortest_edge": 32}, "crop_size": {"height": 32, "width": 32}} if model_type.startswith(
        "clip") else {"size": {"height": 32, "width": 32}}  # fmt: skip
    processor(**options).save_pretrained(tmp_path)
    model = load_model(tmp_path)
    image = load_sample_image("china.jpg")
    report = diagnose_image(model, image)
    extra = VISION_FAMILIES[model_type]
    assert report.tokens[:extra] == ["[CLS]", "[DIST]"][:extra] and report.tokens[extra] == "patch 0,0"
    assert len(report.tokens) == extra + 16 and report.tokens[-1] == "patch 3,3"
    assert report.content.tolist() == [False] * extra + [True] * 16
    head = report.heads[0]
    assert head.previous_token is None and "image" in head.undefined["previous_token"]
    # the oracle: transformers on the same pixels (its own processor, read back by transformers)
    pixels = preprocess_image(image, transformers.AutoImageProcessor.from_pretrained(tmp_path), model._model.config)
    attention, hidden = _run(_reference(tmp_path, model_type), pixel_values=torch.as_tensor(pixels))
    trace = model.trace_image(image)
    assert np.max(np.abs(trace.attention - attention)) <= 1e-12
    assert _relative(trace.hidden_states, hidden) <= 1e-12


def test_debertas_disentangled_attention_fails_the_proof_and_is_refused(tmp_path):
    # Its content-to-position and position-to-content terms make log A − βqkᵀ change with the content.
    _tiny("deberta-v2", {"relative_attention": True, "pos_att_type": ["p2c", "c2p"], "position_buckets": 16}
          ).save_pretrained(tmp_path)  # fmt: skip
    with pytest.raises(AdapterProofError, match=r"^deberta-v2 layer 0: the scores minus the bilinear form change with "
                       r"the input \(by .* between two probes\): a score term of the content \(DeBERTa's disentangled"):  # fmt: skip
        load_model(tmp_path)


def test_a_model_that_computes_something_its_weights_do_not_say_is_refused_at_load():
    # A forward hook adds 0.1 to layer 0's queries: the model's attention no longer follows from W_Q.
    model = _tiny("opt", TEXT_FAMILIES["opt"][0])
    model.decoder.layers[0].self_attn.q_proj.register_forward_hook(lambda m, i, o: o + 0.1)
    with pytest.raises(
        AdapterProofError, match=r"^opt layer 0: the queries and keys recomputed from the weights differ"
    ):
        read_transformers(model)


def test_from_transformers_reads_a_model_object_without_changing_it():
    from workbench.models import from_transformers

    model = _tiny("gpt_neox", {})
    before = {k: v.clone() for k, v in model.state_dict().items()}
    hooked = from_transformers(model)
    assert type(hooked).__name__ == "HookedTransformer" and next(model.parameters()).dtype == torch.float32
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_tensors_missing_or_unread_refuse_the_checkpoint_naming_them(tmp_path):
    from safetensors.numpy import load_file, save_file

    _tiny("gpt_neox", {}).save_pretrained(tmp_path)
    weights = load_file(tmp_path / "model.safetensors")
    save_file(weights | {"layers.0.attention.extra.weight": np.ones(3, np.float32)}, tmp_path / "model.safetensors",
              metadata={"format": "pt"})  # fmt: skip
    with pytest.raises(ValueError, match=r"holds tensors the model does not read: layers\.0\.attention\.extra\.weight"):
        load_model(tmp_path)
    weights.pop("layers.1.attention.dense.weight")
    save_file(weights, tmp_path / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"lacks tensors the model needs \(transformers would fill them with random"):
        load_model(tmp_path)


def test_a_gemma_checkpoint_relabelled_llama_is_refused_by_its_configuration(tmp_path):
    _tiny("gemma", GQA).save_pretrained(tmp_path)
    written = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(written | {"model_type": "llama"}))
    with pytest.raises(ValueError, match=r"^config\.json use_bidirectional_attention = .* llama's configuration has no "
                       r"such key; gemma configurations do"):  # fmt: skip
        load_model(tmp_path)


def test_the_command_line_diagnoses_a_text_family_and_an_image(families, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(families["gpt_neox"]), "--text",
         "the quick brown fox jumps over the lazy dog", "--json"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["causal"] is True and done.stderr == ""
    _tiny("vit", {}, vision=True).save_pretrained(tmp_path)
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(tmp_path), "--image", "sample:flower",
         "--csv"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("table,layer,head") and done.stderr == ""
    # an image file, and a folder of them
    from PIL import Image
    from sklearn.datasets import load_sample_image

    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ("china", "flower"):
        Image.fromarray(load_sample_image(f"{name}.jpg")).save(photos / f"{name}.jpg")
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(tmp_path), "--image",
         str(photos / "china.jpg"), "--json", "--plot", str(tmp_path / "vit.svg")], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["text"] == str(photos / "china.jpg") and report["tokens"][:2] == ["[CLS]", "patch 0,0"]
    assert "patch 3,3" in (tmp_path / "vit.svg").read_text()  # the heatmaps label the patches
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(tmp_path), "--images", str(photos),
         "--json"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert len(summary["images"]) == 2 and {row["n"] for row in summary["layers"] if row["field"] == "entropy"} == {2}
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(families["gpt_neox"]), "--image",
         "sample:flower"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "--image needs a vision model" in done.stderr


@pytest.mark.parametrize(("study", "family"), [("connection-walk", "gpt_neox"), ("head-subspaces", "roberta")])
def test_the_studies_read_a_family_run_by_transformers(families, tmp_path, study, family):
    # A decoder read through transformers (rotary, causal) and an encoder: the study runs and names the model.
    options = ["--windows", "3", "--no-progress", "--json"]
    options += ["--lengths", "16", "--sweep-windows", "2"] if study == "connection-walk" else ["--permutations", "99"]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "study", study, "--model-dir", str(families[family]), "--out",
         str(tmp_path / "run"), *options], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert family in (tmp_path / "run" / "results.json").read_text()


def test_a_corpus_run_with_two_workers_reads_a_family_run_by_transformers(families, tmp_path):
    # The parent ran torch (loading, the proof): forked workers must not wait on its thread pool (it hung).
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog and runs far away\n" * 4, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(families["gpt_neox"]), "--corpus",
         str(corpus), "--max-tokens", "8", "--limit", "4", "--workers", "2", "--out", str(tmp_path / "run"),
         "--json"], capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["windows"] == 4


def _tiny_whisper(directory):
    options = {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
               "decoder_attention_heads": 4, "encoder_ffn_dim": 48, "decoder_ffn_dim": 48, "max_source_positions": 16,
               "num_mel_bins": 8, "decoder_start_token_id": 1}  # fmt: skip
    _tiny("whisper", options).save_pretrained(directory)
    # 1 s windows of 32 frames (hop 500 at 16 kHz): two frames per encoder position, 16 positions of 62.5 ms
    transformers.WhisperFeatureExtractor(feature_size=8, chunk_length=1, hop_length=500).save_pretrained(directory)
    return directory


def test_whisper_reads_a_waveform_with_its_own_feature_extractor(tmp_path):
    model = load_model(_tiny_whisper(tmp_path))
    assert model.audio and not model.causal and model.n_layers == 2
    t = np.arange(12000) / 16000  # 0.75 s of a chirp: the last positions are padding
    wave = 0.5 * np.sin(2 * np.pi * (200 + 400 * t) * t)
    report = diagnose_audio(model, wave, 16000, label="chirp")
    assert report.tokens[:2] == ["t=0.00s", "t=0.06s"] and len(report.tokens) == 16
    assert report.content.tolist() == [True] * 12 + [False] * 4  # 12 × 62.5 ms = 0.75 s
    assert report.heads[0].induction is None and "audio" in report.heads[0].undefined["induction"]
    # the oracle: transformers' encoder on the same features (the extractor as transformers loads it)
    extractor = transformers.AutoFeatureExtractor.from_pretrained(tmp_path)
    features = extractor(wave.astype(np.float32), sampling_rate=16000, return_tensors="np")["input_features"]
    attention, hidden = _run(_reference(tmp_path, "whisper"), input_features=torch.as_tensor(features).double())
    trace = model.trace_audio(wave, 16000)
    assert np.max(np.abs(trace.attention - attention)) <= 1e-12
    assert _relative(trace.hidden_states, hidden) <= 1e-12
    # another rate is resampled to the extractor's (8 kHz → 16 kHz): the same positions
    assert len(model.trace_audio(wave[::2], 8000).tokens) == 16
    with pytest.raises(ValueError, match=r"^waveform must hold finite samples, got NaN or infinity$"):
        model.trace_audio(np.full(100, np.nan), 16000)


def test_the_command_line_reads_a_wav_file(tmp_path):
    from scipy.io import wavfile

    directory = _tiny_whisper(tmp_path / "whisper")
    samples = (8000 * np.sin(np.arange(16000) / 5)).astype(np.int16)
    wavfile.write(tmp_path / "tone.wav", 16000, samples)
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "diagnose", "--model-dir", str(directory), "--audio",
         str(tmp_path / "tone.wav"), "--json"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["text"] == str(tmp_path / "tone.wav") and report["tokens"][0] == "t=0.00s"
