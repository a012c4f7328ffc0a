r"""The architecture of a checkpoint, read from its ``config.json``: three families, every option named.

Families (row-vector residual stream :math:`x \in \mathbb R^{n\times D}`):

- **bert** (``model_type`` "bert"): post-LN encoder, :math:`h = \operatorname{LN}(x + \operatorname{MHA}(x))`,
  :math:`x' = \operatorname{LN}(h + \operatorname{FFN}(h))`; learned absolute positions and token types,
  exact (erf) GELU; bidirectional attention.
- **gpt2** (``model_type`` "gpt2"): pre-LN decoder, :math:`h = x + \operatorname{MHA}(\operatorname{LN}_1 x)`,
  :math:`x' = h + \operatorname{FFN}(\operatorname{LN}_2 h)`, a final LayerNorm ``ln_f``; learned positions;
  causal; fused ``c_attn``; Conv1D weights stored (in, out); tanh GELU ("gelu_new").
- **llama** (``model_type`` "llama", "qwen2", "mistral"): pre-RMSNorm decoder with rotary positions (RoPE,
  :mod:`workbench.models._rope`), grouped-query attention (``num_key_value_heads``), SwiGLU feed-forward
  :math:`(\operatorname{silu}(hW_g)\odot hW_u)W_d`, a final RMSNorm; qwen2 adds query/key/value biases.

Every option that changes the mathematics and is not implemented is refused with a ValueError naming the key
and its value (e.g. per-layer-type RoPE, longrope, Qwen3's query/key norms, which make the score a
non-bilinear function of the input).  Mistral's sliding window (and Qwen2's when ``use_sliding_window``) is
honoured by refusing inputs longer than the window: ``max_positions`` is capped at the window, where the
windowed and the full causal mask agree.

References
----------
J. Devlin et al., BERT (2019); A. Radford et al., GPT-2 (2019); H. Touvron et al., Llama (2023);
J. Su et al., RoFormer: rotary position embedding (2021); N. Shazeer, GLU variants (2020);
B. Zhang and R. Sennrich, RMSNorm (2019); J. Ainslie et al., GQA (2023).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workbench.validation import check_integer

__all__ = ["FAMILIES", "Architecture", "RopeSettings", "parse_architecture"]

#: model_type -> family
FAMILIES = {"bert": "bert", "gpt2": "gpt2", "llama": "llama", "qwen2": "llama", "mistral": "llama"}
ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn")
ACTIVATIONS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "silu", "swish")


@dataclass(frozen=True)
class RopeSettings:
    r"""Rotary-position settings: base :math:`\theta`, rotated width, scaling type and its parameters.

    Attributes
    ----------
    theta : float
        The base of the frequencies :math:`\omega_k = \theta^{-2k/r}`.
    rotary_dim : int
        :math:`r`, the number of rotated coordinates of each head (even; ``head_dim`` unless partial).
    rope_type : str
        One of "default", "linear", "dynamic", "llama3", "yarn".
    factor : float
        The scaling factor (1 for "default").
    parameters : tuple of (str, object)
        The remaining scaling parameters, sorted by key (``low_freq_factor``, ``beta_fast``...).
    max_position_embeddings : int
        The configuration's position count (used by "dynamic" and "yarn").
    """

    theta: float
    rotary_dim: int
    rope_type: str = "default"
    factor: float = 1.0
    parameters: tuple = ()
    max_position_embeddings: int = 2048

    def get(self, key: str, default=None):
        """A scaling parameter by key (``default`` when the settings do not name it)."""
        if not isinstance(key, str):
            raise TypeError(f"key must be a string naming a scaling parameter, got {type(key).__name__}")
        return dict(self.parameters).get(key, default)


@dataclass(frozen=True)
class Architecture:
    """A checkpoint's architecture, parsed and checked from ``config.json`` (see the module docstring).

    Attributes
    ----------
    family : str
        "bert", "gpt2" or "llama".
    model_type : str
        The configuration's ``model_type``.
    n_layers, n_heads, n_kv_heads, d_model, d_head, d_ff, vocab_size, max_position_embeddings : int
    norm : str
        "layernorm" or "rmsnorm".
    norm_eps : float
    activation : str
        The feed-forward activation (the configuration's name).
    causal, pre_norm : bool
    qkv_bias, o_bias, mlp_bias : bool
        Biases of the query/key/value projections, the output projection and the feed-forward.
    tie_embeddings : bool
    type_vocab_size : int
        Token types (bert; 0 otherwise).
    rope : RopeSettings or None
    attention_scale : float
        The inverse temperature β of every head (before the gpt2 per-layer division).
    scale_by_inverse_layer : bool
        gpt2's ``scale_attn_by_inverse_layer_idx``: layer ℓ (from 0) uses β/(ℓ+1).
    sliding_window : int or None
        Inputs longer than this are refused.
    bos_token_id, eos_token_id, pad_token_id : int or None
    """

    family: str
    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    d_ff: int
    vocab_size: int
    max_position_embeddings: int
    norm: str
    norm_eps: float
    activation: str
    causal: bool
    pre_norm: bool
    qkv_bias: bool
    o_bias: bool
    mlp_bias: bool
    tie_embeddings: bool
    type_vocab_size: int = 0
    rope: RopeSettings | None = None
    attention_scale: float = 1.0
    scale_by_inverse_layer: bool = False
    sliding_window: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    pad_token_id: int | None = None

    def beta(self, layer: int) -> float:
        """The inverse temperature of layer ``layer`` (0-based)."""
        layer = check_integer("layer", layer, 0, self.n_layers - 1)
        return self.attention_scale / (layer + 1) if self.scale_by_inverse_layer else self.attention_scale

    @property
    def position_limit(self) -> int:
        """The longest input the forward pass accepts (positions, capped at the sliding window)."""
        if self.sliding_window is None:
            return self.max_position_embeddings
        return min(self.max_position_embeddings, self.sliding_window)


def _refuse(key: str, value, why: str):
    raise ValueError(f"config.json {key} = {value!r} is not supported: {why}")


def _integer(config: dict, key: str, *alternatives: str, default=None) -> int:
    for name in (key, *alternatives):
        value = config.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"config.json {name} must be a positive integer, got {value!r}")
            return value
    if default is not None:
        return default
    raise ValueError(f"config.json lacks {key!r}, which a {config.get('model_type')} model needs")


def _token_id(config: dict, key: str) -> int | None:
    value = config.get(key)
    if isinstance(value, list):  # some configurations list several end tokens
        value = value[0] if value else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _positive(key: str, value, *, integer: bool = False) -> float | int:
    """``value`` as a positive finite number (an integer with ``integer``), or a refusal naming ``key``."""
    kind = "a positive integer" if integer else "a positive finite number"
    if isinstance(value, bool) or not isinstance(value, int | float) or (integer and not float(value).is_integer()):
        _refuse(key, value, f"it must be {kind}")
    if not math.isfinite(value) or value <= 0:
        _refuse(key, value, f"it must be {kind}")
    return int(value) if integer else float(value)


def _rope(config: dict, d_head: int, max_positions: int) -> RopeSettings:
    if isinstance(config.get("rope_parameters"), dict) and config.get("rope_scaling"):
        # transformers 5.25 lets the legacy rope_scaling override rope_parameters (and takes rope_theta from outside
        # both); that precedence has changed between versions, so a configuration holding both is ambiguous.
        _refuse(
            "rope_scaling",
            config["rope_scaling"],
            "config.json also holds rope_parameters, and which of the two a model uses depends on the transformers "
            "version; keep one of them",
        )
    if isinstance(config.get("rope_parameters"), dict):
        parameters = dict(config["rope_parameters"])
        if parameters and all(isinstance(v, dict) for v in parameters.values()):
            _refuse("rope_parameters", sorted(parameters), "RoPE settings per layer type are not read")
        key = "rope_parameters"
    else:
        parameters = dict(config.get("rope_scaling") or {})
        key = "rope_scaling"
    theta = _positive(f"{key}.rope_theta", parameters.pop("rope_theta", config.get("rope_theta", 10000.0)))
    rope_type = parameters.pop("rope_type", None) or parameters.pop("type", None) or "default"
    parameters.pop("type", None)
    if rope_type not in ROPE_TYPES:
        _refuse(f"{key}.rope_type", rope_type, f"the RoPE types read are {', '.join(ROPE_TYPES)}")
    partial = _positive(
        "partial_rotary_factor", parameters.pop("partial_rotary_factor", config.get("partial_rotary_factor", 1.0))
    )
    if partial != 1.0:
        # transformers' llama, qwen2 and mistral rotate the whole head with the default RoPE (its inverse
        # frequencies are computed from head_dim alone) and cannot apply a scaled RoPE narrower than the head:
        # reading a partial rotation would differ from the model's own forward pass.
        _refuse(
            "partial_rotary_factor",
            partial,
            f"transformers' {config.get('model_type')} rotates the whole head whatever it says (default RoPE) or "
            "fails (scaled RoPE), so the checkpoint's positions are ambiguous; remove it or set it to 1.0",
        )
    rotary_dim = int(d_head * partial)
    if rotary_dim < 2 or rotary_dim % 2 or rotary_dim > d_head:
        _refuse("partial_rotary_factor", partial, f"it gives {rotary_dim} rotated coordinates of {d_head}")
    if rope_type in ("llama3", "yarn"):
        # the trained length: a top-level original_max_position_embeddings wins, else the dict's, else the
        # configuration's max_position_embeddings (the precedence of transformers' standardisation)
        original = config.get("original_max_position_embeddings")
        parameters["original_max_position_embeddings"] = _positive(
            "original_max_position_embeddings",
            original or parameters.get("original_max_position_embeddings") or max_positions,
            integer=True,
        )
    factor = parameters.pop("factor", None)
    if rope_type == "default":
        factor = 1.0
    elif factor is None and rope_type == "yarn":
        factor = max_positions / float(parameters["original_max_position_embeddings"])
    elif factor is None:
        _refuse(f"{key}.factor", None, f"rope_type {rope_type!r} needs a scaling factor")
    factor = _positive(f"{key}.factor", factor)
    for name in ("low_freq_factor", "high_freq_factor", "attention_factor"):
        if parameters.get(name) is not None:
            parameters[name] = _positive(f"{key}.{name}", parameters[name])
    for name in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim"):  # 0 means "the default" (transformers' `or`)
        if parameters.get(name):
            parameters[name] = _positive(f"{key}.{name}", parameters[name])
    if rope_type == "dynamic" and rotary_dim == 2:
        _refuse(f"{key}.rope_type", rope_type, "dynamic scaling raises the base to r/(r − 2), undefined for r = 2")
    if rope_type == "llama3":
        for name in ("low_freq_factor", "high_freq_factor"):
            if parameters.get(name) is None:
                _refuse(f"{key}.{name}", None, "rope_type 'llama3' needs it")
        if not parameters["low_freq_factor"] < parameters["high_freq_factor"]:
            _refuse(f"{key}.low_freq_factor", parameters["low_freq_factor"], "it must be below high_freq_factor")
    return RopeSettings(
        theta=theta,
        rotary_dim=rotary_dim,
        rope_type=rope_type,
        factor=factor,
        parameters=tuple(sorted(parameters.items())),
        max_position_embeddings=max_positions,
    )


def _activation(key: str, value) -> str:
    if value not in ACTIVATIONS:
        _refuse(key, value, f"the activations read are {', '.join(ACTIVATIONS)}")
    return value


def parse_architecture(config: dict) -> Architecture:
    """The :class:`Architecture` of a ``config.json`` dictionary.

    Parameters
    ----------
    config : dict
        The parsed ``config.json`` (from a directory, or ``model.config.to_dict()``).

    Raises
    ------
    ValueError
        Unknown ``model_type``, or an option that changes the mathematics and is not implemented (the message
        names the key and its value).

    Examples
    --------
    >>> a = parse_architecture({"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "vocab_size": 50})
    >>> a.family, a.d_head, a.causal, a.pre_norm, a.d_ff
    ('gpt2', 8, True, True, 128)
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict (the parsed config.json), got {type(config).__name__}")
    model_type = config.get("model_type")
    if model_type == "qwen3":
        _refuse("model_type", model_type, "its per-head query/key RMSNorm makes the scores non-bilinear in the input")
    if model_type not in FAMILIES:
        _refuse("model_type", model_type, f"the model types read are {', '.join(FAMILIES)}")
    family = FAMILIES[model_type]
    common = {"family": family, "model_type": model_type}
    if family == "bert":
        return _bert(config, common)
    if family == "gpt2":
        return _gpt2(config, common)
    return _llama(config, common)


def _heads(d_model: int, n_heads: int, key: str) -> int:
    # the head width of a fused projection; a width n_heads does not divide is refused when the weights are
    # read (after their shapes are checked against the configuration, the more telling mismatch)
    return max(d_model // n_heads, 1)


def _bert(config: dict, common: dict) -> Architecture:
    if config.get("position_embedding_type", "absolute") != "absolute":
        _refuse("position_embedding_type", config["position_embedding_type"], "only absolute positions are read")
    if config.get("is_decoder"):
        _refuse("is_decoder", True, "only the bidirectional BERT encoder is read")
    d, H = _integer(config, "hidden_size"), _integer(config, "num_attention_heads")
    return Architecture(
        **common,
        n_layers=_integer(config, "num_hidden_layers"),
        n_heads=H,
        n_kv_heads=H,
        d_model=d,
        d_head=_heads(d, H, "num_attention_heads"),
        d_ff=_integer(config, "intermediate_size"),
        vocab_size=_integer(config, "vocab_size"),
        max_position_embeddings=_integer(config, "max_position_embeddings", default=512),
        norm="layernorm",
        norm_eps=float(config.get("layer_norm_eps", 1e-12)),
        activation=_activation("hidden_act", config.get("hidden_act", "gelu")),
        causal=False,
        pre_norm=False,
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
        tie_embeddings=bool(config.get("tie_word_embeddings", True)),
        type_vocab_size=_integer(config, "type_vocab_size", default=2),
        attention_scale=1.0 / math.sqrt(d // H),
        pad_token_id=_token_id(config, "pad_token_id"),
    )


def _gpt2(config: dict, common: dict) -> Architecture:
    if config.get("add_cross_attention"):
        _refuse("add_cross_attention", True, "cross-attention blocks are not read")
    d, H = _integer(config, "n_embd", "hidden_size"), _integer(config, "n_head", "num_attention_heads")
    d_head = _heads(d, H, "n_head")
    # reorder_and_upcast_attn only changes the floating-point order (scale before the product, float32): same maths
    return Architecture(
        **common,
        n_layers=_integer(config, "n_layer", "num_hidden_layers"),
        n_heads=H,
        n_kv_heads=H,
        d_model=d,
        d_head=d_head,
        d_ff=_integer(config, "n_inner", default=4 * d),
        vocab_size=_integer(config, "vocab_size"),
        max_position_embeddings=_integer(config, "n_positions", "max_position_embeddings", default=1024),
        norm="layernorm",
        norm_eps=float(config.get("layer_norm_epsilon", 1e-5)),
        activation=_activation("activation_function", config.get("activation_function", "gelu_new")),
        causal=True,
        pre_norm=True,
        qkv_bias=True,
        o_bias=True,
        mlp_bias=True,
        tie_embeddings=bool(config.get("tie_word_embeddings", True)),
        attention_scale=1.0 / math.sqrt(d_head) if config.get("scale_attn_weights", True) else 1.0,
        scale_by_inverse_layer=bool(config.get("scale_attn_by_inverse_layer_idx", False)),
        bos_token_id=_token_id(config, "bos_token_id"),
        eos_token_id=_token_id(config, "eos_token_id"),
        pad_token_id=_token_id(config, "pad_token_id"),
    )


#: config.json keys that only other families' configurations define, each changing what the model computes: a
#: checkpoint of one of them relabelled llama/qwen2/mistral keeps its tensor names (gemma's (1 + w) norms and √D
#: embedding scale live in the code, not in the tensors), so the configuration is what gives it away.
FOREIGN_KEYS = {
    "use_bidirectional_attention": "gemma",
    "hidden_activation": "gemma 2/3",
    "query_pre_attn_scalar": "gemma 2/3",
    "attn_logit_softcapping": "gemma 2/3",
    "final_logit_softcapping": "gemma 2/3",
    "clip_qkv": "olmo",
    "qk_layernorm": "stablelm",
    "use_parallel_residual": "stablelm / gpt_neox",
    "use_qk_norm": "cohere",
    "logit_scale": "cohere",
    "embedding_multiplier": "granite",
    "attention_multiplier": "granite",
    "residual_multiplier": "granite",
    "no_rope_layers": "smollm3",
}


def _llama(config: dict, common: dict) -> Architecture:
    model_type = common["model_type"]
    foreign = sorted(key for key in config if key in FOREIGN_KEYS)
    if foreign:
        key = foreign[0]
        _refuse(
            key,
            config[key],
            f"{model_type}'s configuration has no such key; {FOREIGN_KEYS[key]} configurations do, and that family "
            f"computes differently with the same tensor names (is model_type {model_type!r} the model's own?)",
        )
    d, H = _integer(config, "hidden_size"), _integer(config, "num_attention_heads")
    n_kv = _integer(config, "num_key_value_heads", default=H)
    if H % n_kv:
        _refuse("num_key_value_heads", n_kv, f"it must divide num_attention_heads = {H}")
    d_head = _integer(config, "head_dim", default=_heads(d, H, "num_attention_heads"))
    max_positions = _integer(config, "max_position_embeddings", default=2048)
    if model_type == "qwen2":
        qkv_bias, o_bias = True, False
        window = config.get("sliding_window") if config.get("use_sliding_window") else None
    else:
        qkv_bias = o_bias = bool(config.get("attention_bias", False))
        window = config.get("sliding_window") if model_type == "mistral" else None
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        _refuse("sliding_window", window, "it must be a positive integer or null")
    layer_types = set(config.get("layer_types") or ())
    if layer_types - {"full_attention"} and (window is None or layer_types - {"full_attention", "sliding_attention"}):
        _refuse("layer_types", sorted(layer_types), "only full (and windowed, with a sliding_window) attention is read")
    return Architecture(
        **common,
        n_layers=_integer(config, "num_hidden_layers"),
        n_heads=H,
        n_kv_heads=n_kv,
        d_model=d,
        d_head=d_head,
        d_ff=_integer(config, "intermediate_size"),
        vocab_size=_integer(config, "vocab_size"),
        max_position_embeddings=max_positions,
        norm="rmsnorm",
        norm_eps=float(config.get("rms_norm_eps", 1e-6)),
        activation=_activation("hidden_act", config.get("hidden_act", "silu")),
        causal=True,
        pre_norm=True,
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        mlp_bias=bool(config.get("mlp_bias", False)),
        tie_embeddings=bool(config.get("tie_word_embeddings", False)),
        rope=_rope(config, d_head, max_positions),
        attention_scale=1.0 / math.sqrt(d_head),
        sliding_window=window,
        bos_token_id=_token_id(config, "bos_token_id"),
        eos_token_id=_token_id(config, "eos_token_id"),
        pad_token_id=_token_id(config, "pad_token_id"),
    )
