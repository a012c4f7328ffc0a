"""Every tensor of a checkpoint is accounted for: a tensor the forward pass does not read refuses the checkpoint.

The case the issue found: a qwen3 checkpoint relabelled ``llama`` in config.json was read with its per-head q/k
RMSNorm ignored (max |ΔA| 0.99).  Task heads and saved buffers (``UNREAD_TENSORS``) are the documented exceptions.
"""

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from checkpoints import llama, llama_config, save  # noqa: E402

from workbench.models import load_model  # noqa: E402
from workbench.models._transformer import UNREAD_TENSORS  # noqa: E402


def test_a_qwen3_checkpoint_relabelled_llama_is_refused_naming_its_qk_norms(tmp_path):
    config = llama_config(cls=transformers.Qwen3Config, head_dim=8)
    save(llama(config, cls=transformers.Qwen3ForCausalLM), tmp_path)
    written = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(written | {"model_type": "llama"}))
    with pytest.raises(
        ValueError,
        match=r"holds tensors the llama forward pass does not read: model\.layers\.0\.self_attn\.k_norm\.weight, "
        r"model\.layers\.0\.self_attn\.q_norm\.weight, model\.layers\.1\.self_attn\.k_norm\.weight, "
        r"model\.layers\.1\.self_attn\.q_norm\.weight; they change what the model computes, so it is not read \(is "
        r"config\.json's model_type the model's own\?\)$",
    ):
        load_model(tmp_path)


def test_the_lm_head_and_saved_buffers_are_the_documented_exceptions(tmp_path):
    for name in ("lm_head.weight", "cls.predictions.bias", "pooler.dense.weight", "model.layers.0.self_attn.rotary_emb.inv_freq",
                 "h.0.attn.masked_bias", "embeddings.position_ids"):  # fmt: skip
        assert UNREAD_TENSORS.search(name), name
    assert not UNREAD_TENSORS.search("model.layers.0.self_attn.q_norm.weight")
    save(llama(llama_config()), tmp_path)  # holds lm_head.weight: read
    assert load_model(tmp_path).architecture.model_type == "llama"
