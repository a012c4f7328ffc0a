r"""The MagnusBlock fusion experiment's model: a byte-level causal LM whose blocks carry linear generator sublayers.

Each block of :class:`GeneratorLM` is pre-LN causal softmax attention, then a stack of :math:`r` **generator
sublayers**, then (optionally) a GELU MLP:

.. math::

    x \leftarrow x + \mathrm{Attn}(\mathrm{LN}\,x), \qquad
    x \leftarrow x\, e^{A_1} e^{A_2} \cdots e^{A_r}, \qquad
    x \leftarrow x + \mathrm{MLP}(\mathrm{LN}\,x),

with free :math:`A_i \in \mathbb{R}^{d \times d}` (row-vector features, so sublayer :math:`i` multiplies on the
right and the stack's matrix is :math:`\Pi = e^{A_1} \cdots e^{A_r}`, first factor leftmost, the order of
:func:`workbench.experiments.fuse`).  A sublayer is the exact flow of the linear residual branch
:math:`x \mapsto x + x A_i`; these are the block's *linearised sublayers* that the roadmap's MagnusBlock collapses
into one matmul :math:`W \approx e^{\Omega}` (:func:`fused_matrix`), and the quantity its training budget bounds is
the block's commutator sum (:func:`commutator_sum`, :func:`commutator_penalty`, :func:`budget_schedule`):

.. math::

    C = \sum_{i<j} \lVert [A_i, A_j] \rVert_F, \qquad
    \text{penalty} = \mu \sum_{\text{blocks}} \max(0,\ C - \tau_t).

At inference a block's sublayers are replaced by a tuple of precomputed matrices (:meth:`GeneratorLM.set_maps`):
the :math:`r` factors :math:`e^{A_i}` (unfused), one fused :math:`W` (fused), or none (skipped: the bound on
what any fusion can save).  :func:`fusion_wall_clock` times the three in one run.

References
----------
.. [1] Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)": linearised generators :math:`A_1, \dots, A_r`,
   :math:`\Omega_1 = \sum_i A_i`, :math:`\Omega_2 = \tfrac12 \sum_{i<j} [A_i, A_j]`, a commutator budget
   :math:`\sum_{i<j} \lVert [A_i, A_j] \rVert \le \tau` (annealed), one matmul :math:`W` at inference [SEED].
.. [2] A. Vaswani et al., "Attention is all you need", NeurIPS 2017, §3.5 (sinusoidal position encoding).
.. [3] P. C. Moan, J. Niesen, "Convergence of the Magnus series", *Found. Comput. Math.* 8 (2008) 291–301: the
   Magnus series of :math:`\dot Y = A(t) Y` converges when :math:`\int_0^T \lVert A(t) \rVert_2\,dt < \pi`; for the
   piecewise-constant :math:`A(t)` whose flow is :math:`e^{A_r} \cdots e^{A_1}`, when
   :math:`\sum_i \lVert A_i \rVert_2 < \pi` (the multi-factor BCH series is that Magnus series).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
import scipy.linalg
import torch
from torch import nn
from torch.nn import functional as F

from workbench.experiments.bch_fusion import MAX_ORDER, fuse, product_of_exponentials, square_matrices
from workbench.validation import check_finite_output, check_in_range, check_integer

__all__ = [
    "GeneratorLM",
    "budget_schedule",
    "commutator_penalty",
    "commutator_sum",
    "decode_flop_share",
    "exponential_maps",
    "fused_maps",
    "fused_matrix",
    "fusion_wall_clock",
]

#: The fusion route that multiplies the exact factors: :math:`W = e^{A_1} \cdots e^{A_r}`.
EXACT = "exact"


def sinusoidal_positions(length: int, dim: int, dtype=torch.float32, device="cpu") -> torch.Tensor:
    r"""Vaswani et al.'s fixed encoding :math:`p_{t,2k} = \sin(t/10^{4 \cdot 2k/d})`, :math:`p_{t,2k+1} = \cos(\cdot)`.

    No learned table, so a model trained on windows of ``context`` bytes runs (and is timed) at any length.
    """
    t = torch.arange(length, dtype=torch.float64, device=device)[:, None]
    frequencies = torch.exp(-math.log(1e4) * torch.arange(0, dim, 2, dtype=torch.float64, device=device) / dim)
    table = torch.zeros(length, dim, dtype=torch.float64, device=device)
    table[:, 0::2] = torch.sin(t * frequencies)
    table[:, 1::2] = torch.cos(t * frequencies)
    return table.to(dtype)


def commutator_sum(generators: torch.Tensor) -> torch.Tensor:
    r"""The commutator sum :math:`C = \sum_{i<j} \lVert [A_i, A_j] \rVert_F` of a stack of generators.

    .. math::

        C(A_1, \dots, A_r) = \sum_{1 \le i < j \le r} \lVert A_i A_j - A_j A_i \rVert_F

    Differentiable (its gradient at commuting generators is taken as 0, torch's subgradient of the norm at 0).

    Parameters
    ----------
    generators : torch.Tensor, shape=[..., r, n, n]
        :math:`r \ge 2` square generators (a batch of stacks over the leading axes).

    Returns
    -------
    torch.Tensor, shape=[...]
        :math:`C` per stack.

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)": the budget
    :math:`\sum_{i<j} \lVert [A_i, A_j] \rVert \le \tau` [SEED].

    Examples
    --------
    With :math:`E = E_{12}`, :math:`F = E_{21}`, :math:`H = \mathrm{diag}(1, -1)`: :math:`[E, F] = H`,
    :math:`[E, H] = -2E`, :math:`[F, H] = 2F`, so :math:`C = \sqrt2 + 2 + 2`.

    >>> import torch
    >>> e, f = torch.tensor([[0.0, 1.0], [0.0, 0.0]]), torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    >>> h = e @ f - f @ e
    >>> round(float(commutator_sum(torch.stack([e, f, h]))), 6), round(4 + 2**0.5, 6)
    (5.414214, 5.414214)
    """
    if not isinstance(generators, torch.Tensor) or generators.ndim < 3 or generators.shape[-3] < 2:
        shape = tuple(generators.shape) if isinstance(generators, torch.Tensor) else type(generators).__name__
        raise ValueError(f"generators must be a tensor of shape [..., r, n, n] with r >= 2, got {shape}")
    if generators.shape[-1] != generators.shape[-2]:
        raise ValueError(f"generators must be square matrices, got shape {tuple(generators.shape)}")
    i, j = torch.triu_indices(generators.shape[-3], generators.shape[-3], 1, device=generators.device)
    a, b = generators[..., i, :, :], generators[..., j, :, :]
    return torch.linalg.matrix_norm(a @ b - b @ a).sum(-1)


def commutator_penalty(generators: torch.Tensor, tau: float, weight: float) -> torch.Tensor:
    r"""The hinge penalty of a commutator budget: :math:`\mu \sum_b \max(0, C_b - \tau)`.

    .. math::

        \mathcal{P} = \mu \sum_{b} \max\bigl(0,\ C(A^{(b)}_1, \dots, A^{(b)}_r) - \tau\bigr)

    over the stacks :math:`b` (the model's blocks), :math:`C` from :func:`commutator_sum`.  Zero (with zero
    gradient) while every block is within budget; slope :math:`\mu` per unit of excess beyond it.

    Parameters
    ----------
    generators : torch.Tensor, shape=[..., r, n, n]
        The stacks (e.g. ``[n_layers, r, d, d]``).
    tau : float
        The budget :math:`\tau \ge 0` (the value at this step, :func:`budget_schedule`).
    weight : float
        :math:`\mu > 0`.

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)": train with a commutator budget
    :math:`\sum_{i<j} \lVert [A_i, A_j] \rVert \le \tau` [SEED]; the hinge form is ours [RECON].

    Examples
    --------
    >>> import torch
    >>> a = torch.zeros(2, 2, 2)
    >>> a[0, 0, 1] = a[1, 1, 0] = 1.0  # [E12, E21] = diag(1, -1), C = sqrt(2)
    >>> round(float(commutator_penalty(a, tau=1.0, weight=2.0)), 6), float(commutator_penalty(a, 2.0, 2.0))
    (0.828427, 0.0)
    """
    tau = check_in_range("tau", tau, 0.0)
    weight = check_in_range("weight", weight, 0.0, low_inclusive=False)
    return weight * torch.relu(commutator_sum(generators) - tau).sum()


def budget_schedule(step: int, steps: int, tau: float, factor: float, fraction: float) -> float:
    r"""The annealed budget :math:`\tau_t`: geometric from :math:`\kappa\tau` down to :math:`\tau`, then held.

    .. math::

        \tau_t = \tau\, \kappa^{\max(0,\ 1 - t / (a S))}

    for step :math:`t` of :math:`S`, :math:`\kappa` = ``factor`` :math:`\ge 1` (1: a constant budget) and
    :math:`a` = ``fraction`` :math:`\in (0, 1]` of the steps spent annealing.

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)": "anneal :math:`\tau`" [SEED]; the geometric
    schedule is ours [RECON].

    Examples
    --------
    >>> [round(budget_schedule(t, 100, 0.1, 100.0, 0.5), 6) for t in (0, 25, 50, 99)]
    [10.0, 1.0, 0.1, 0.1]
    """
    steps = check_integer("steps", steps, 1)
    step = check_integer("step", step, 0, steps)
    tau = check_in_range("tau", tau, 0.0)
    factor = check_in_range("factor", factor, 1.0)
    fraction = check_in_range("fraction", fraction, 0.0, 1.0, low_inclusive=False)
    return tau * factor ** max(0.0, 1.0 - step / (fraction * steps))


def fused_matrix(generators, order) -> np.ndarray:
    r"""One matrix for the stack :math:`e^{A_1} \cdots e^{A_r}`: :math:`e^{\Omega_N}`, the exact product, or :math:`I`.

    .. math::

        W_N = \exp(\Omega_N), \quad \Omega_N = \log(e^{A_1} \cdots e^{A_r}) \text{ truncated at degree } N
        \ (\Omega_1 = \textstyle\sum_i A_i,\ \Omega_2 = \Omega_1 + \tfrac12 \sum_{i<j} [A_i, A_j], \dots),

        W_{\text{exact}} = e^{A_1} \cdots e^{A_r}, \qquad W_0 = I .

    The truncation is the exact multi-factor BCH series (:func:`workbench.experiments.fuse`); its error against
    :math:`W_{\text{exact}}` is :math:`O(\varepsilon^{N+1})` for generators of size :math:`\varepsilon`, and the
    series converges when :math:`\sum_i \lVert A_i \rVert_2 < \pi` (Moan–Niesen).  Both routes cost one matmul at
    inference; the exact product costs nothing in accuracy.

    Parameters
    ----------
    generators : sequence of arrays, shape=[n, n]
        :math:`A_1, \dots, A_r` (numpy or torch; computed in float64 on the host).
    order : int or "exact"
        :math:`N \in [0, 6]` (0: the identity, the sublayers dropped) or ``"exact"``.

    Returns
    -------
    numpy.ndarray, shape=[n, n]
        :math:`W`, float64.

    Raises
    ------
    ValueError
        A bad ``order``; a :math:`W` that overflows float64 (a diverging truncation of large generators).

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)": :math:`W \approx \exp(\Omega_1 + \Omega_2)`
    [SEED]; Moan & Niesen (2008) (convergence).

    Examples
    --------
    Commuting generators (polynomials in one matrix): every order is exact.

    >>> import numpy as np
    >>> m = np.random.default_rng(0).standard_normal((4, 4)) / 4
    >>> stack = [0.5 * m, m @ m, np.eye(4) - m]
    >>> exact = fused_matrix(stack, "exact")
    >>> [bool(np.linalg.norm(fused_matrix(stack, n) - exact) < 1e-12 * np.linalg.norm(exact)) for n in (1, 2, 4)]
    [True, True, True]
    """
    arrays = [np.asarray(a.detach().cpu() if isinstance(a, torch.Tensor) else a, dtype=float) for a in generators]
    arrays = square_matrices("generators", arrays)
    if order == EXACT:
        return product_of_exponentials(arrays)
    if isinstance(order, str):
        raise ValueError(f"order must be an integer in [0, {MAX_ORDER}] or 'exact', got {order!r}")
    order = check_integer("order", order, 0, MAX_ORDER)
    if order == 0:
        return np.eye(arrays[0].shape[0])
    omega = fuse(arrays, order)
    with np.errstate(over="ignore", invalid="ignore"):
        w = scipy.linalg.expm(omega)
    return check_finite_output(f"exp(Omega_{order})", w, Omega=omega)


class GeneratorBlock(nn.Module):
    """One block: pre-LN causal attention, ``r`` generator sublayers ``x ↦ x e^{A_i}``, an optional GELU MLP."""

    def __init__(self, d_model: int, n_heads: int, n_generators: int, mlp: bool, init_scale: float):
        super().__init__()
        self.n_heads = n_heads
        self.ln_attn = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        # Entries N(0, init_scale²/d): ‖A_i‖_2 ≈ 2·init_scale (a near-identity e^{A_i} at the start).
        self.generators = nn.Parameter(init_scale / math.sqrt(d_model) * torch.randn(n_generators, d_model, d_model))
        self.ln_mlp = nn.LayerNorm(d_model) if mlp else None
        self.mlp = (
            nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)) if mlp else None
        )
        self.maps: tuple[torch.Tensor, ...] | None = None

    def _heads(self, y: torch.Tensor):
        batch, n, d = y.shape
        return self.qkv(y).view(batch, n, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)

    def _rest(self, x: torch.Tensor) -> torch.Tensor:
        # Training: e^{A_i} from torch.linalg.matrix_exp, differentiable; inference: the maps set on the block.
        for m in torch.linalg.matrix_exp(self.generators) if self.maps is None else self.maps:
            x = x @ m
        if self.mlp is not None:
            x = x + self.mlp(self.ln_mlp(x))
        return x

    def forward(self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        q, k, v = self._heads(self.ln_attn(x))
        if cache is not None:
            cache[0][:, :, : x.shape[1]] = k
            cache[1][:, :, : x.shape[1]] = v
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self._rest(x + self.out(z.transpose(1, 2).flatten(2)))

    def step(self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor], position: int) -> torch.Tensor:
        q, k, v = self._heads(self.ln_attn(x))
        cache[0][:, :, position] = k[:, :, 0]
        cache[1][:, :, position] = v[:, :, 0]
        z = F.scaled_dot_product_attention(q, cache[0][:, :, : position + 1], cache[1][:, :, : position + 1])
        return self._rest(x + self.out(z.transpose(1, 2).flatten(2)))


class GeneratorLM(nn.Module):
    r"""Byte-level causal LM whose blocks carry :math:`r` linear generator sublayers :math:`x \mapsto x e^{A_i}`.

    Token embedding plus the fixed sinusoidal position encoding, ``n_layers`` :class:`GeneratorBlock` s, a final
    LayerNorm and a linear read-out.  :meth:`forward` maps ``[B, n]`` byte ids to ``[B, n, vocab]`` logits;
    :meth:`new_cache`, :meth:`prefill` and :meth:`step` decode one token at a time against a key/value cache.

    Parameters
    ----------
    vocab, d_model, n_heads, n_layers : int
        Vocabulary, width (even), heads (dividing it), blocks.
    n_generators : int
        :math:`r \ge 2` sublayers per block.
    mlp : bool
        Whether each block ends with the GELU MLP (width ``4 d``).
    init_scale : float
        Generators start with entries :math:`\mathcal N(0, s^2/d)`, so :math:`\lVert A_i \rVert_2 \approx 2s`.

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)" [SEED]; Vaswani et al. (2017), §3.5.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> model = GeneratorLM(256, 16, 2, 2, 3).double()
    >>> tokens = torch.randint(0, 256, (2, 8))
    >>> cache = model.new_cache(2, 8)
    >>> logits = model.prefill(tokens[:, :7], cache)
    >>> last = model.step(tokens[:, 7], cache, 7)  # one new token against the cache
    >>> bool(torch.allclose(last, model(tokens)[:, 7], atol=1e-12))
    True
    """

    def __init__(
        self, vocab: int, d_model: int, n_heads: int, n_layers: int, n_generators: int, mlp: bool = True,
        init_scale: float = 0.05,
    ):  # fmt: skip
        super().__init__()
        if d_model % 2 or d_model % n_heads:
            raise ValueError(f"d_model must be even and divisible by n_heads={n_heads}, got {d_model}")
        check_integer("n_generators", n_generators, 2, 26)
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(
            GeneratorBlock(d_model, n_heads, n_generators, mlp, init_scale) for _ in range(n_layers)
        )
        self.ln_out = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, vocab)

    @property
    def d_model(self) -> int:
        return self.embed.embedding_dim

    def generators(self) -> torch.Tensor:
        """The generators of every block, shape ``[n_layers, r, d, d]`` (differentiable)."""
        return torch.stack([b.generators for b in self.blocks])

    def set_maps(self, maps: Sequence[Sequence[torch.Tensor]] | None) -> None:
        """Replace each block's sublayers by its tuple of matrices (applied in order); ``None``: the generators."""
        if maps is not None and len(maps) != len(self.blocks):
            raise ValueError(f"maps must hold one tuple of matrices per block ({len(self.blocks)}), got {len(maps)}")
        for i, block in enumerate(self.blocks):
            block.maps = None if maps is None else tuple(maps[i])

    def forward(self, tokens: torch.Tensor, caches=None) -> torch.Tensor:
        n = tokens.shape[1]
        x = self.embed(tokens) + sinusoidal_positions(n, self.d_model, self.embed.weight.dtype, tokens.device)
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches["layers"][i])
        return self.readout(self.ln_out(x))

    def new_cache(self, batch: int, length: int) -> dict:
        """Empty key/value buffers for ``length`` positions, and the position table (allocated once)."""
        weight = self.embed.weight
        heads = self.blocks[0].n_heads
        shape = (batch, heads, length, self.d_model // heads)
        layers = [(weight.new_zeros(shape), weight.new_zeros(shape)) for _ in self.blocks]
        return {"layers": layers, "positions": sinusoidal_positions(length, self.d_model, weight.dtype, weight.device)}

    def prefill(self, tokens: torch.Tensor, cache: dict) -> torch.Tensor:
        """The logits of ``tokens`` (positions ``0 … n-1``), keeping their keys and values in ``cache``."""
        return self(tokens, cache)

    def step(self, token: torch.Tensor, cache: dict, position: int) -> torch.Tensor:
        """Logits ``[B, vocab]`` of one new token at ``position``, attending to the cached positions before it."""
        x = self.embed(token)[:, None] + cache["positions"][position]
        for block, layer_cache in zip(self.blocks, cache["layers"], strict=True):
            x = block.step(x, layer_cache, position)
        return self.readout(self.ln_out(x))[:, 0]


def exponential_maps(model: GeneratorLM) -> list[tuple[torch.Tensor, ...]]:
    """Each block's factors :math:`e^{A_i}` as the model computes them in training (``torch.linalg.matrix_exp``)."""
    with torch.no_grad():
        return [tuple(torch.linalg.matrix_exp(b.generators.detach())) for b in model.blocks]


def fused_maps(model: GeneratorLM, order) -> list[tuple[torch.Tensor, ...]]:
    """Each block's one-matrix fusion :func:`fused_matrix` (``order``), in the model's dtype and device."""
    weight = model.embed.weight
    return [
        (torch.from_numpy(fused_matrix(b.generators.detach(), order)).to(weight.dtype).to(weight.device),)
        for b in model.blocks
    ]


def _timed_rounds(calls: dict[str, Callable[[], object]], repeats: int, warmup: int) -> dict[str, list[float]]:
    """Wall times (s) of each call in ``repeats`` rounds, interleaved (rotating order) so drift hits all alike."""
    for _ in range(warmup):
        for call in calls.values():
            call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for rep in range(repeats):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
    return times


@contextlib.contextmanager
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@torch.inference_mode()
def fusion_wall_clock(model: GeneratorLM, context: int, batch: int = 1, repeats: int = 11, warmup: int = 2) -> dict:
    r"""Wall clock of the model with its sublayers unfused (:math:`r` matmuls), fused (one) and skipped (none).

    Two workloads, each timed in all three variants in the same run (one torch thread, ``warmup`` rounds, then
    ``repeats`` rounds, each timing the three one after the other in a rotating order): **forward**, the whole
    model on ``[batch, context]`` bytes (prefill); **decode**, one incremental step of a new token against a
    key/value cache of ``context`` positions (ten times as many rounds: a step is short and its time noisier).
    With :math:`t_u, t_f, t_s` the times of one round, the ratios are medians over the rounds (a pair timed back
    to back shares the machine's state at that moment):

    .. math::

        \text{speed-up} = \operatorname{med}(t_u / t_f), \qquad \text{saving} = 1 - \operatorname{med}(t_f / t_u),
        \qquad \text{bound} = 1 - \operatorname{med}(t_s / t_u)

    (the bound is the share of :math:`t_u` spent in the sublayers: no fusion saves more, Amdahl's limit).

    Timing depends on the shapes only; the fused variant uses the exact product.

    Parameters
    ----------
    model : GeneratorLM
    context, batch, repeats, warmup : int
        Sequence / cache length, streams, timed rounds (forward; decode gets ``10 × repeats``), untimed rounds.

    Returns
    -------
    dict
        ``{"forward": {...}, "decode": {...}}``, each with ``unfused``, ``fused``, ``skipped`` (median seconds),
        ``speedup``, ``speedup_skipped`` (:math:`\operatorname{med}(t_u/t_s)`), ``saving``, ``bound`` and
        ``samples`` (every round's seconds, per variant); plus ``context``, ``batch``, ``repeats``, ``threads`` (1).

    References
    ----------
    Lie-Exponential Roadmap, "MagnusBlock (collapse sublayers)": "20–40% wall-clock savings on long context
    decoding" [SEED]; G. M. Amdahl, AFIPS Conf. Proc. 30 (1967) 483–485 (the bound).

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> timing = fusion_wall_clock(GeneratorLM(256, 16, 2, 2, 3), context=32, repeats=3)
    >>> sorted(timing["decode"]), len(timing["decode"]["samples"]["fused"])
    (['bound', 'fused', 'samples', 'saving', 'skipped', 'speedup', 'speedup_skipped', 'unfused'], 30)
    """
    if not isinstance(model, GeneratorLM):
        raise TypeError(f"model must be a GeneratorLM, got {type(model).__name__}")
    context = check_integer("context", context, 1)
    batch = check_integer("batch", batch, 1)
    repeats = check_integer("repeats", repeats, 1)
    warmup = check_integer("warmup", warmup, 0)
    variants = {
        "unfused": exponential_maps(model),
        "fused": fused_maps(model, EXACT),
        "skipped": [()] * len(model.blocks),
    }
    device = model.embed.weight.device
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, model.embed.num_embeddings, (batch, context + 1), generator=generator).to(device)
    training = model.training
    model.eval()
    result: dict = {"context": context, "batch": batch, "repeats": repeats, "threads": 1}
    try:
        with _one_thread():
            model.set_maps(variants["unfused"])
            cache = model.new_cache(batch, context + 1)
            model.prefill(tokens[:, :context], cache)

            def call(name: str, work: Callable[[], object]) -> Callable[[], object]:
                def run() -> object:
                    model.set_maps(variants[name])
                    out = work()
                    if device.type == "cuda":
                        torch.cuda.synchronize(device)
                    return out

                return run

            workloads = {
                "forward": lambda: model(tokens[:, :context]),
                "decode": lambda: model.step(tokens[:, context], cache, context),
            }
            for workload, work in workloads.items():
                rounds = repeats if workload == "forward" else 10 * repeats
                samples = _timed_rounds({name: call(name, work) for name in variants}, rounds, warmup)
                unfused, fused, skipped = (np.asarray(samples[name]) for name in variants)
                result[workload] = {
                    **{name: statistics.median(values) for name, values in samples.items()},
                    "speedup": float(np.median(unfused / fused)),
                    "speedup_skipped": float(np.median(unfused / skipped)),
                    "saving": float(1.0 - np.median(fused / unfused)),
                    "bound": float(1.0 - np.median(skipped / unfused)),
                    "samples": samples,
                }
    finally:
        model.set_maps(None)
        model.train(training)
    return result


def decode_flop_share(
    d_model: int, n_layers: int, n_generators: int, mlp: bool, vocab: int, context: int, target: float = 0.2
) -> dict:
    r"""Multiply-adds of one decoding step, and the share fusion removes, at cache length :math:`n`.

    Per block: projections :math:`4d^2`, sublayers :math:`r d^2`, MLP :math:`8d^2` (if any), attention over the
    cache :math:`2nd`; once: the read-out :math:`Vd`.  Fusion leaves one sublayer matmul, so

    .. math::

        s(n) = \frac{L (r - 1) d^2}{L\,\bigl((4 + r + 8 m) d^2 + 2 n d\bigr) + V d},

    which falls like :math:`1/n`; ``context_at_target`` is the largest :math:`n` with :math:`s(n) \ge` ``target``
    (``None`` if there is none: that saving is out of reach at any context).

    Examples
    --------
    The experiment's paper model (d = 128, 4 blocks, r = 4) at a 1024-byte cache, without and with the MLP:

    >>> plain = decode_flop_share(128, 4, 4, False, 256, 1024)
    >>> round(plain["saving"], 3), plain["context_at_target"]
    (0.122, 416)
    >>> with_mlp = decode_flop_share(128, 4, 4, True, 256, 1024)
    >>> round(with_mlp["saving"], 3), with_mlp["context_at_target"]  # 18 % at most, even with an empty cache
    (0.092, None)
    """
    d, L, r = d_model, n_layers, n_generators
    fixed = L * (4 + r + 8 * bool(mlp)) * d * d + vocab * d
    removable = L * (r - 1) * d * d

    def saving(n: int) -> float:
        return removable / (fixed + L * 2 * n * d)

    target = check_in_range("target", target, 0.0, 1.0, low_inclusive=False)
    largest = math.floor((removable / target - fixed) / (2 * L * d))  # then settle the rounding at the boundary
    while largest >= 0 and saving(largest) < target:
        largest -= 1
    while saving(largest + 1) >= target:
        largest += 1
    total = fixed + L * 2 * context * d
    return {
        "saving": saving(context),
        "sublayer_share": L * r * d * d / total,
        "context_at_target": largest if largest >= 0 else None,
    }
