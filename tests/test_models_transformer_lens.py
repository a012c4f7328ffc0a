"""TransformerLens's ``TransformerBridge`` read by ``from_transformers`` (issue 36, item 6).

Oracle: the bridge's own ``hook_pattern`` of every layer (``run_with_cache``), booted in float64 on the same
checkpoint.  Tolerances: GPT-2 (the workbench's own forward pass) 1e-12 — the same float64 arithmetic in another
order (measured 1.8e-15); GPT-NeoX (run by transformers through HookedTransformer) 1e-6 — the bridge runs
transformers' code without mapping its float32 casts (rotary tables, softmax), so its float64 pattern is only
float32-accurate (measured 4.8e-8 off the all-float64 run).

TransformerLens 4.3 brings 316 MB of dependencies (wandb, pyarrow, datasets, accelerate), so the test extra does
not install it and this file skips without it: ``pip install transformer-lens==4.3.0`` to run it.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
bridge_module = pytest.importorskip("transformer_lens.model_bridge", reason="pip install transformer-lens==4.3.0")

from checkpoints import bpe, gpt2, randomise, save  # noqa: E402

from workbench.models import from_transformers  # noqa: E402

transformers.logging.set_verbosity_error()


def _neox(directory):
    config = transformers.GPTNeoXConfig(
        vocab_size=320, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
        max_position_embeddings=64,
    )  # fmt: skip
    save(randomise(transformers.GPTNeoXForCausalLM(config), 5), directory, bpe(bos=False))
    return directory


@pytest.mark.parametrize(("family", "tolerance"), [("gpt2", 1e-12), ("gpt_neox", 1e-6)])
def test_a_bridge_and_the_model_it_wraps_read_as_the_bridge_attends(tmp_path, family, tolerance):
    directory = save(gpt2(), tmp_path, bpe(bos=False)) if family == "gpt2" else _neox(tmp_path)
    hf = transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float64)
    bridge = bridge_module.TransformerBridge.boot_transformers(
        str(directory), hf_model=hf, device="cpu", dtype=torch.float64
    )
    ids = torch.arange(3, 15)[None]
    _, cache = bridge.run_with_cache(ids)
    patterns = np.stack([cache[f"blocks.{layer}.attn.hook_pattern"][0].numpy() for layer in range(2)])
    for model in (bridge, bridge.original_model):  # the wrapped model's keys carry ._original_component
        read = from_transformers(model)
        assert read.family == family
        assert np.max(np.abs(np.asarray(read.trace_ids(ids[0].numpy()).attention) - patterns)) <= tolerance
