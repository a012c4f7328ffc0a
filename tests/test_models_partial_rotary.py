"""``partial_rotary_factor`` in a Llama-family config.json: refused, because transformers does not honour it.

Oracle: transformers itself.  A Llama model whose configuration says ``partial_rotary_factor = 0.5`` computes the
same attention as the same weights with 1.0 (the default RoPE's frequencies come from head_dim alone), so a
partial rotation read from the file would differ from the model's own forward pass (the issue measured
max |ΔA| 0.95); the workbench refuses the checkpoint instead of disagreeing with it.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from checkpoints import llama, llama_config, reference_outputs, save  # noqa: E402

from workbench.models import load_model, parse_architecture  # noqa: E402


def test_transformers_rotates_the_whole_head_whatever_the_factor_says():
    ids = [1, 5, 9, 2, 7, 3, 8]
    whole = llama(llama_config())
    partial = llama(llama_config(partial_rotary_factor=0.5))
    partial.load_state_dict(whole.state_dict())
    _, expected = reference_outputs(whole, ids)
    _, got = reference_outputs(partial, ids)
    # Same weights, same arithmetic: equal to the last bit apart from the factor, which changes nothing.
    assert np.array_equal(expected, got)


@pytest.mark.parametrize("model_type", ["llama", "qwen2", "mistral"])
def test_a_partial_rotary_factor_is_refused_in_one_line(model_type):
    config = llama_config().to_dict() | {"model_type": model_type, "partial_rotary_factor": 0.5}
    with pytest.raises(
        ValueError,
        match=rf"^config.json partial_rotary_factor = 0.5 is not supported: transformers' {model_type} rotates the "
        r"whole head whatever it says \(default RoPE\) or fails \(scaled RoPE\), so the checkpoint's positions are "
        r"ambiguous; remove it or set it to 1.0$",
    ):
        parse_architecture(config)
    assert parse_architecture(config | {"partial_rotary_factor": 1.0}).rope.rotary_dim == 8


def test_a_saved_checkpoint_with_the_factor_is_refused(tmp_path):
    save(llama(llama_config(partial_rotary_factor=0.5)), tmp_path)
    with pytest.raises(ValueError, match=r"^config.json partial_rotary_factor = 0.5 is not supported"):
        load_model(tmp_path)
