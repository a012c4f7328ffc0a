r"""The model and data of the token-mixer stability experiment: masked bytes and a small bidirectional transformer.

:class:`MaskedByteTransformer` is the transformer of :func:`workbench.experiments.run_givens_mixer` with one of
four token-mixing branches (a Givens mixer without or with a LayerNorm, softmax attention, an unconstrained
learned matrix); :func:`mask_bytes`, :func:`training_stream` and :func:`masked_eval_set` make its masked-byte
data, :func:`masked_bpb` scores it, :func:`count_spikes` reads a loss curve.

References
----------
Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" [SEED]; Devlin et al. (2019), "BERT",
§3.1 (masked language modelling); Tolstikhin et al. (2021), "MLP-Mixer" (a learned token-mixing matrix shared
across channels); Vaswani et al. (2017) (multi-head attention).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workbench.experiments.common import ByteCorpus, bits_per_byte
from workbench.experiments.givens_mixer._config import GIVENS_MIXER_CONDITIONS, MIXER_INITS, masked_count
from workbench.nn import GivensFlowMixer
from workbench.validation import check_choice, check_in_range, check_integer

__all__ = [
    "MASK_ID",
    "MaskedByteTransformer",
    "MaskedBytes",
    "count_spikes",
    "mask_bytes",
    "masked_bpb",
    "masked_eval_set",
    "training_stream",
]

#: The input id of a masked position (the bytes are 0-255).
MASK_ID = 256
_OUT_VOCAB = 256

# ---- masked bytes -------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class MaskedBytes:
    """Windows of bytes with some positions masked.

    Attributes
    ----------
    inputs : numpy.ndarray
        ``int64``, shape ``[..., n]``: the bytes, with ``MASK_ID`` at the masked positions (the model's input).
    targets : numpy.ndarray
        ``int64``, the original bytes.
    mask : numpy.ndarray
        ``bool``, the masked positions (the ones scored).
    """

    FIELDS: ClassVar[tuple[str, ...]] = ("inputs", "targets", "mask")

    inputs: np.ndarray
    targets: np.ndarray
    mask: np.ndarray


def mask_bytes(windows: np.ndarray, fraction: float, rng: np.random.Generator) -> MaskedBytes:
    r"""Mask :math:`k = \mathrm{round}(f n)` positions of each window, chosen uniformly without replacement.

    Every masked position reads ``MASK_ID`` (no random or kept tokens: every masked byte must be inferred from
    its context).  One ``rng.random`` draw of the windows' shape decides the masks: the positions of the
    :math:`k` smallest draws of a row are masked.

    Parameters
    ----------
    windows : numpy.ndarray
        Integer bytes, shape ``[B, n]``.
    fraction : float
        :math:`f \in (0, 1)`, with :math:`1 \le k \le n - 1`.
    rng : numpy.random.Generator

    Returns
    -------
    MaskedBytes

    References
    ----------
    Devlin et al. (2019), "BERT", §3.1 (masked language modelling; here without the 80/10/10 replacement).

    Examples
    --------
    >>> batch = mask_bytes(np.arange(20).reshape(2, 10), 0.3, np.random.default_rng(0))
    >>> batch.mask.sum(axis=1).tolist(), bool((batch.inputs[batch.mask] == MASK_ID).all())
    ([3, 3], True)
    >>> bool((batch.inputs[~batch.mask] == batch.targets[~batch.mask]).all())
    True
    """
    windows = np.asarray(windows)
    if windows.ndim != 2 or not np.issubdtype(windows.dtype, np.integer):
        raise ValueError(f"windows must be a 2-D integer array [batch, n], got shape {windows.shape}, {windows.dtype}")
    n = windows.shape[1]
    k = masked_count(n, check_in_range("fraction", fraction, 0.0, 1.0, low_inclusive=False, high_inclusive=False))
    if not 1 <= k <= n - 1:
        raise ValueError(f"fraction must mask between 1 and n - 1 = {n - 1} positions of a window, got {fraction}")
    chosen = np.argsort(rng.random(windows.shape), axis=1, kind="stable")[:, :k]
    mask = np.zeros(windows.shape, dtype=bool)
    np.put_along_axis(mask, chosen, True, axis=1)
    targets = windows.astype(np.int64)
    return MaskedBytes(np.where(mask, MASK_ID, targets), targets, mask)


def training_stream(
    corpus: ByteCorpus, steps: int, batch: int, context: int, fraction: float, seed: int
) -> MaskedBytes:
    """Every training batch of a run, drawn once: shape ``[steps, batch, context]``, the same for all conditions.

    Step by step from ``numpy.random.default_rng([seed, 0])``: ``batch`` window starts uniform over the training
    text, then the batch's masks (:func:`mask_bytes`).

    Examples
    --------
    >>> corpus = ByteCorpus(np.arange(200, dtype=np.uint8), np.zeros(1, np.uint8), (), ())
    >>> a, b = training_stream(corpus, 6, 8, 16, 0.15, seed=0), training_stream(corpus, 6, 8, 16, 0.15, seed=0)
    >>> a.inputs.shape, bool((a.inputs == b.inputs).all() and (a.mask == b.mask).all())
    ((6, 8, 16), True)
    """
    steps, batch = check_integer("steps", steps, 1), check_integer("batch", batch, 1)
    rng = np.random.default_rng([seed, 0])
    high = len(corpus.train) - context + 1
    if high < 1:
        raise ValueError(f"corpus.train must hold at least context={context} bytes, got {len(corpus.train)}")
    batches = []
    for _ in range(steps):
        windows = corpus.windows("train", rng.integers(0, high, batch), context)
        batches.append(mask_bytes(windows, fraction, rng))
    return MaskedBytes(*(np.stack([getattr(b, f) for b in batches]) for f in MaskedBytes.FIELDS))


def masked_eval_set(corpus: ByteCorpus, windows: int, context: int, fraction: float, seed: int) -> MaskedBytes:
    """The held-out windows and masks every condition is scored on: ``windows`` consecutive held-out windows.

    Windows start every ``context`` bytes from the start of the held-out text; their masks come from
    ``numpy.random.default_rng([seed, 1])`` (:func:`mask_bytes`), so they are fixed by the seed alone.

    Examples
    --------
    >>> corpus = ByteCorpus(np.zeros(1, np.uint8), np.arange(100, dtype=np.uint8), (), ())
    >>> held = masked_eval_set(corpus, 3, 16, 0.25, seed=0)
    >>> held.targets[:, 0].tolist(), held.mask.sum().item()
    ([0, 16, 32], 12)
    """
    windows = check_integer("windows", windows, 1)
    if windows * context > len(corpus.held_out):
        raise ValueError(
            f"windows must fit in the {len(corpus.held_out)} held-out bytes at context={context} "
            f"(at most {len(corpus.held_out) // context}), got {windows}"
        )
    starts = np.arange(windows) * context
    return mask_bytes(corpus.windows("held_out", starts, context), fraction, np.random.default_rng([seed, 1]))


@torch.no_grad()
def masked_bpb(model, held: MaskedBytes, batch: int = 64) -> dict:
    r"""Bits per masked byte of ``model`` on ``held``: :math:`\sum_{\mathcal M} -\ln p / (|\mathcal M| \ln 2)`.

    Parameters
    ----------
    model : callable
        Maps ``[B, n]`` input ids (``MASK_ID`` at masked positions) to ``[B, n, 256]`` logits.
    held : MaskedBytes
        From :func:`masked_eval_set`.
    batch : int
        Windows a forward pass (memory only).

    Returns
    -------
    dict
        ``bpb``, ``nats_per_byte`` and ``bytes`` (:math:`|\mathcal M|`); the loss is summed in float64.

    References
    ----------
    Shannon (1951) (bits per character); Devlin et al. (2019), §3.1.

    Examples
    --------
    A model whose logits are all equal gives every byte probability 1/256: exactly 8 bits per byte.

    >>> corpus = ByteCorpus(np.zeros(1, np.uint8), np.arange(256, dtype=np.uint8), (), ())
    >>> held = masked_eval_set(corpus, 8, 32, 0.15, seed=0)
    >>> masked_bpb(lambda x: torch.zeros(*x.shape, 256), held)
    {'bpb': 8.0, 'nats_per_byte': 5.545177444479562, 'bytes': 40}
    """
    training = getattr(model, "training", False)
    if training:
        model.eval()
    device = next(iter(model.parameters())).device if isinstance(model, nn.Module) else "cpu"
    nats, count = 0.0, int(held.mask.sum())
    for lo in range(0, len(held.inputs), batch):
        inputs = torch.from_numpy(held.inputs[lo : lo + batch]).to(device)
        mask = torch.from_numpy(held.mask[lo : lo + batch]).to(device)
        targets = torch.from_numpy(held.targets[lo : lo + batch]).to(device)
        nats += float(F.cross_entropy(model(inputs)[mask].double(), targets[mask], reduction="sum"))
    if training:
        model.train()
    return {"bpb": bits_per_byte(nats, count), "nats_per_byte": nats / count, "bytes": count}


def count_spikes(losses, window: int, factor: float = 1.5) -> int:
    r"""Steps whose loss exceeds ``factor`` × the median of the ``window`` losses before them.

    .. math::

        \#\{t \ge k : \ell_t > c\cdot\operatorname{median}(\ell_{t-k}, \dots, \ell_{t-1})\}

    Each step above the threshold counts (a spike lasting three steps counts three); the first :math:`k` steps
    have no full window and never count; a non-finite loss never counts (divergence is reported apart).

    Examples
    --------
    >>> count_spikes([1.0] * 10 + [2.0] + [1.0] * 5, window=4)
    1
    >>> count_spikes(np.exp(-np.arange(50) / 10), window=5)  # a decreasing curve has none
    0
    """
    window = check_integer("window", window, 1)
    losses = np.asarray(losses, dtype=float)
    if len(losses) <= window:
        return 0
    medians = np.median(np.lib.stride_tricks.sliding_window_view(losses[:-1], window), axis=1)
    with np.errstate(invalid="ignore"):
        return int(np.sum(losses[window:] > factor * medians))


# ---- the model ------------------------------------------------------------------------------------------------


def _groups(x: torch.Tensor, groups: int) -> tuple[torch.Tensor, ...]:
    return x.chunk(groups, dim=-1)


def _mixer(context: int, init: str) -> GivensFlowMixer:
    """A token-mixing :class:`GivensFlowMixer` (it always draws its uniform angles: the RNG use is the same)."""
    mixer = GivensFlowMixer(context, mix="tokens")
    if init == "identity":
        nn.init.zeros_(mixer.angles)
    return mixer


class _GivensBranch(nn.Module):
    """``W_g h_g`` per feature group (``norm``: ``W_g (LN h)_g``), one :class:`GivensFlowMixer` per group."""

    def __init__(self, context: int, d_model: int, groups: int, norm: bool, init: str):
        super().__init__()
        self.norm = nn.LayerNorm(d_model) if norm else None
        self.mixers = nn.ModuleList(_mixer(context, init) for _ in range(groups))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x if self.norm is None else self.norm(x)
        return torch.cat([m(part) for m, part in zip(self.mixers, _groups(h, len(self.mixers)), strict=True)], -1)


class _LinearBranch(nn.Module):
    """``A_g h_g`` per feature group, ``A_g`` unconstrained, initialised at a Givens mixer's matrix."""

    def __init__(self, context: int, d_model: int, groups: int, init: str):
        super().__init__()
        # Drawn exactly as _GivensBranch draws its mixers: A_g = W_g at step 0.
        with torch.no_grad():  # W_g I = W_g by the mixer's own two-row updates
            start = [_mixer(context, init)(torch.eye(context)) for _ in range(groups)]
        self.weight = nn.Parameter(torch.stack(start))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        g = self.weight.shape[0]
        return torch.einsum("gij,bjgf->bigf", self.weight, x.reshape(b, n, g, d // g)).reshape(b, n, d)


class _AttentionBranch(nn.Module):
    """``MHSA(LN h)``: bidirectional softmax attention (no mask), ``n_heads`` heads."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.norm = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, n, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class MaskedByteTransformer(nn.Module):
    r"""A small bidirectional transformer on masked bytes with one of four token-mixing branches.

    .. math::

        h^{(0)} = E[t] + P_{\mathrm{pos}}, \quad h \leftarrow h + B(h), \quad
        h \leftarrow h + W_2\,\mathrm{GELU}(W_1\,\mathrm{LN}\,h), \quad
        \mathrm{logits} = \mathrm{LN}(h^{(L)})\,W_U + b_U,

    with :math:`B` the condition's branch (module docstring).  The embeddings, MLPs, final norm and read-out are
    created first and the branches last, so under one ``torch.manual_seed`` every condition starts from the same
    shared weights, and ``givens``, ``givens-ln`` and ``linear`` from the same token-mixing matrices.

    Parameters
    ----------
    condition : {'givens', 'givens-ln', 'attention', 'linear'}
    context, d_model, n_heads, n_layers : int
        Window length :math:`n` (inputs must have exactly this length: the mixers are :math:`n\times n`), width,
        heads / feature groups (dividing ``d_model``), blocks.
    mixer_init : {'identity', 'uniform'}
        Start of the Givens and linear mixers: :math:`W_g = A_g = I` (all angles 0), or the library's default
        angles, uniform in :math:`[-\pi, \pi)` (a random rotation of the positions).

    References
    ----------
    Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" [SEED]; Tolstikhin et al. (2021)
    (token-mixing shared across channels); Vaswani et al. (2017).

    Examples
    --------
    >>> torch.manual_seed(0) and None
    >>> model = MaskedByteTransformer("givens", 8, 8, 2, 1)
    >>> tuple(model(torch.randint(0, 257, (3, 8))).shape), len(model.givens_mixers())
    ((3, 8, 256), 2)
    >>> bool((model.givens_mixers()[0].matrix() == torch.eye(8)).all())  # the identity at step 0
    True
    >>> W = MaskedByteTransformer("givens", 8, 8, 2, 1, "uniform").givens_mixers()[0].matrix().double()
    >>> bool((W.T @ W - torch.eye(8, dtype=W.dtype)).abs().max() < 1e-5)
    True
    """

    def __init__(
        self, condition: str, context: int, d_model: int, n_heads: int, n_layers: int, mixer_init: str = "identity"
    ):
        super().__init__()
        self.condition = check_choice("condition", condition, GIVENS_MIXER_CONDITIONS)
        self.mixer_init = check_choice("mixer_init", mixer_init, MIXER_INITS)
        self.context = check_integer("context", context, 2)
        check_integer("n_layers", n_layers, 1)
        if check_integer("d_model", d_model, 1) % check_integer("n_heads", n_heads, 1):
            raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}")
        self.embed = nn.Embedding(MASK_ID + 1, d_model)
        self.position = nn.Embedding(context, d_model)
        self.mlp_norms = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        self.mlps = nn.ModuleList(
            nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
            for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, _OUT_VOCAB)
        for weight in (self.embed.weight, self.position.weight, self.readout.weight):
            nn.init.normal_(weight, std=0.02)  # near-uniform first prediction: loss ≈ ln 256 at step 0
        self.mixing = nn.ModuleList(self._branch(context, d_model, n_heads) for _ in range(n_layers))

    def _branch(self, context: int, d_model: int, n_heads: int) -> nn.Module:
        if self.condition == "attention":
            return _AttentionBranch(d_model, n_heads)
        if self.condition == "linear":
            return _LinearBranch(context, d_model, n_heads, self.mixer_init)
        return _GivensBranch(context, d_model, n_heads, self.condition == "givens-ln", self.mixer_init)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, n, 256]`` of ``[B, n]`` input ids in ``[0, 256]``.

        Raises ``FloatingPointError`` when the residual stream stops being finite (a diverged model).
        """
        if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32):
            raise TypeError(f"tokens must be an integer torch tensor, got {getattr(tokens, 'dtype', type(tokens))}")
        if tokens.ndim != 2 or tokens.shape[1] != self.context:
            raise ValueError(f"tokens must have shape [batch, {self.context}], got {tuple(tokens.shape)}")
        if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) > MASK_ID):
            raise ValueError(
                f"tokens must lie in [0, {MASK_ID}], got values in [{int(tokens.min())}, {int(tokens.max())}]"
            )
        x = self.embed(tokens) + self.position.weight
        for layer, (mix, norm, mlp) in enumerate(zip(self.mixing, self.mlp_norms, self.mlps, strict=True)):
            if not bool(torch.isfinite(x).all()):
                raise FloatingPointError(f"the residual stream is not finite at the input of block {layer}")
            x = x + mix(x)
            x = x + mlp(norm(x))
        return self.readout(self.norm(x))

    def givens_mixers(self) -> list[GivensFlowMixer]:
        """Every :class:`GivensFlowMixer` of the model, layer by layer (empty for attention and linear)."""
        return [m for branch in self.mixing if isinstance(branch, _GivensBranch) for m in branch.mixers]

    def shared_parameters(self) -> dict[str, torch.Tensor]:
        """The parameters every condition has (everything but the token-mixing branches), by name."""
        return {k: v for k, v in self.named_parameters() if not k.startswith("mixing.")}
