r"""Banded exp-Markov attention against softmax attention as the context grows: quality, wall clock, memory.

The object is a causal attention layer whose operator is the exponential of a learned banded Markov generator,
:class:`workbench.nn.ExpMarkovAttention`: per head :math:`h` and layer :math:`\ell`,

.. math::

    Y_h = e^{t_\ell Q_h(x)}V_h = \sum_{k=0}^{K} \pi_k(\lambda t_\ell)\,(I + Q_h/\lambda)^k V_h,
    \qquad (Q_h)_{i,i-\delta} = \operatorname{softplus}\big(a_{h,\delta}\langle q_i, k_{i-\delta}\rangle/\sqrt{d_h}
    + b_{h,\delta}\big),\ \delta \in \{1, 2, 4, \dots, 2^L\},

with one learned time :math:`t_\ell` per layer (``time_per="layer"``; ``"head"`` gives one per head).  Each
:math:`e^{tQ}` is lower triangular and row-stochastic by construction, and a product :math:`(I + Q/\lambda)V`
costs :math:`O(n(L+1)d)`, so the layer costs :math:`O(K\,n\,(L+1)\,d)` — linear in the context :math:`n` for a
fixed band, against :math:`O(n^2 d)` for softmax attention
:math:`\operatorname{softmax}(QK^\top/\sqrt{d_h} + M_{\text{causal}})V`.  The roadmap proposes this as a
"principled linear-time surrogate to :math:`O(n^2)` attention while preserving probabilistic semantics".  The
number of powers :math:`K` is the right Fox–Glynn point of the Poisson law of mean :math:`\lambda t` (the
*reach*), :math:`\lambda` the largest exit rate of :math:`Q` in the batch, so it grows with the learned time and
the learned rates, not with :math:`n`.

The experiment trains the two mixers in the same pre-LN byte-level transformer (:class:`LongContextLM`: token
and learned position embeddings, blocks of mixer + GELU MLP, a final LayerNorm and read-out) on the Shakespeare
bytes, at every context :math:`n` of a list, and measures, for one seed:

* **quality** — held-out bits per byte at context :math:`n` after a matched budget: the same steps, the same
  ``tokens_per_step`` (``tokens_per_step / n`` windows a step), the same training windows, and the same initial
  weights wherever the shapes agree (every weight but the band's :math:`a, b, t`);
* **wall clock** — tokens per second of the mixers of all layers, forward and forward + backward, on the same
  held-out batch, one thread, warm-up then the median of repeats with the two mixers alternated, and their
  ratio; the baseline is the fused kernel a user would pick
  (:func:`torch.nn.functional.scaled_dot_product_attention` with ``is_causal=True``); the crossover context
  where the banded layer overtakes it (:func:`crossover_context`);
* **activation memory** — the bytes autograd saves for the backward pass of the mixers' forward
  (:func:`saved_tensor_bytes`, de-duplicated by storage), for both mixers and for the textbook softmax that
  materialises the :math:`n\times n` matrix; ``torch.cuda.max_memory_allocated`` of a forward + backward too
  on a GPU;
* **the learned operator** — per layer the learned :math:`t_\ell`, the rate :math:`\lambda`, the reach
  :math:`\lambda t_\ell`, the powers :math:`K`, the mean look-back :math:`\sum_j (i - j)(e^{tQ})_{ij}`; and as
  checks, :math:`e^{tQ}` row-stochastic, nonnegative and exactly lower triangular, equal to
  ``scipy.linalg.expm`` of the dense generator in float64, and the fused softmax equal to the explicit one.

References
----------
Lie-Exponential Roadmap, "ExpMarkovAttention (global, normalized attention)" and "Long-context efficiency"
[SEED] (banded :math:`e^{tQ}V` at :math:`O(k\cdot\mathrm{nnz}(Q)\cdot d)` per head; exact stochasticity;
tunable reach :math:`t`); "Multiscale banded synthesis" [SEED] (dyadic offsets).
A. Jensen (1953) and B. L. Fox & P. W. Glynn, Comm. ACM 31 (1988) (uniformization and its Poisson cut-off).
T. Dao et al., "FlashAttention", NeurIPS 2022 (the fused kernel, which keeps :math:`O(n)` activations).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg
import torch

from workbench.experiments.common import (
    VOCAB,
    ByteCorpus,
    RunLog,
    held_out_bpb,
    jsonable,
    shakespeare_bytes,
    train_bytes,
)
from workbench.experiments.long_context._config import LongContextConfig
from workbench.experiments.long_context._model import (
    LONG_CONTEXT_MIXERS,
    LongContextLM,
    saved_tensor_bytes,
)
from workbench.experiments.long_context._report import crossover_context, long_context_figure, long_context_table
from workbench.expmv import poisson_truncation
from workbench.nn import ExpMarkovAttention, uniformized_action

__all__ = ["new_models", "run_long_context"]

#: The margin of the layer's uniformization rate over the largest exit rate (as in :func:`uniformized_action`).
_RATE_MARGIN = 2.0**-20


# ---- the matched pair ----------------------------------------------------------------------------------


def new_models(config: LongContextConfig, context: int) -> dict[str, LongContextLM]:
    """Both models at ``context``: the softmax one from ``torch.manual_seed(seed)``, the other from its weights.

    Every parameter the two share is copied from the softmax model; the band's (``offset_scale`` = 1,
    ``offset_bias`` = 0, ``raw_time`` from ``t_init``) are deterministic, so one seed gives one matched pair.

    Examples
    --------
    >>> models = new_models(LongContextConfig.preset("quick"), 32)
    >>> soft, band = (dict(m.named_parameters()) for m in models.values())
    >>> all(torch.equal(soft[k], band[k]) for k in soft), len(band) - len(soft)
    (True, 6)
    """
    torch.manual_seed(config.seed)
    kw = dict(levels=config.levels, t_init=config.t_init, time_per=config.time_per)
    args = (VOCAB, context, config.d_model, config.n_heads, config.n_layers)
    softmax = LongContextLM(*args, "softmax", **kw)
    banded = LongContextLM(*args, "exp-markov", **kw)
    missing, unexpected = banded.load_state_dict(softmax.state_dict(), strict=False)
    band = {"offset_scale", "offset_bias", "raw_time"}
    if unexpected or any(k.rsplit(".", 1)[-1] not in band for k in missing):  # pragma: no cover - a layout change
        raise RuntimeError(f"the two models must share every weight but the band's, got {missing} and {unexpected}")
    return {"softmax": softmax.to(config.device), "exp-markov": banded.to(config.device)}


# ---- measurements ---------------------------------------------------------------------------------------


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _mixer_pass(mixers, inputs, *, explicit: bool):
    """Sum of every layer's mixer output (the explicit softmax on request)."""
    return sum((m.explicit(x) if explicit else m(x)).sum() for m, x in zip(mixers, inputs, strict=True))


def _time_mixers(cases: dict[str, tuple], config: LongContextConfig) -> dict[str, dict[str, float]]:
    """Median seconds of forward and forward + backward per case, the cases alternated repeat by repeat."""
    samples: dict[str, dict[str, list[float]]] = {k: {"forward": [], "forward_backward": []} for k in cases}
    names = list(cases)
    for repeat in range(config.timing_warmup + config.timing_repeats):
        for name in names if repeat % 2 == 0 else names[::-1]:  # alternate the order: drift hits both alike
            mixers, inputs, explicit = cases[name]
            _sync(config.device)
            start = time.perf_counter()
            with torch.no_grad():
                _mixer_pass(mixers, inputs, explicit=explicit)
            _sync(config.device)
            forward = time.perf_counter() - start
            for m in mixers:
                m.zero_grad(set_to_none=True)
            leaves = [x.detach().requires_grad_(True) for x in inputs]
            _sync(config.device)
            start = time.perf_counter()
            _mixer_pass(mixers, leaves, explicit=explicit).backward()
            _sync(config.device)
            both = time.perf_counter() - start
            if repeat >= config.timing_warmup:
                samples[name]["forward"].append(forward)
                samples[name]["forward_backward"].append(both)
    return {k: {p: statistics.median(v) for p, v in s.items()} for k, s in samples.items()}


def _memory(mixers, inputs, *, explicit: bool, device: str) -> dict[str, float | None]:
    """MiB saved for backward by the mixers' forward; on a GPU also the peak allocated by a forward + backward."""
    params = [p for m in mixers for p in m.parameters()]
    leaves = [x.detach().requires_grad_(True) for x in inputs]
    saved, _ = saved_tensor_bytes(lambda: _mixer_pass(mixers, leaves, explicit=explicit), exclude=params)
    peak = None
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        _mixer_pass(mixers, leaves, explicit=explicit).backward()
        torch.cuda.synchronize(device)
        peak = (torch.cuda.max_memory_allocated(device) - base) / 2**20
        for m in mixers:
            m.zero_grad(set_to_none=True)
    return {"saved_mib": saved / 2**20, "cuda_peak_mib": peak}


@torch.no_grad()
def _layer_diagnostics(model: LongContextLM, inputs, window: torch.Tensor) -> list[dict]:
    """Per exp-Markov layer: t, rate λ, reach λt, powers K, mean look-back; checks of the dense operator."""
    rows = []
    window_inputs = model.mixer_inputs(window)
    for block, x, xw in zip(model.blocks, inputs, window_inputs, strict=True):
        layer = block.mixer
        times = layer.times.detach().double().cpu()
        generator = layer.generator(x)
        exit_rates = generator.exit_rates().double()  # [B, H, n]
        lam = exit_rates.amax(dim=-1).cpu() * (1.0 + _RATE_MARGIN)  # [B, H]: the layer's λ per batch element
        reach = float((lam * times).max())  # the largest λt: it sets the cut-off of the whole forward
        powers = max(poisson_truncation(reach, torch.finfo(x.dtype).eps / 2)[1], 1)
        # Mean look-back Σ_j (i - j) (e^{tQ})_ij = i - (e^{tQ} pos)_i over the whole context: one more action.
        positions = torch.arange(x.shape[1], dtype=x.dtype, device=x.device)[:, None]
        reached = uniformized_action(generator, positions, layer.times.to(x.dtype), tol=layer.tol)
        _, P = layer(xw, return_operator=True)  # [1, H, w, w], the operator in the layer's own dtype
        double = _float64_copy(layer)
        _, P64 = double(xw.double().cpu(), return_operator=True)
        Q64 = double.generator(xw.double().cpu()).dense()[0].numpy()
        t64 = double.times.detach().numpy()
        dense = np.stack([scipy.linalg.expm(t64[h] * Q64[h]) for h in range(len(t64))])
        rows.append(
            {
                "t": times.tolist(),
                "rate_max": float(lam.max()),
                "rate_mean": float(lam.mean()),
                "reach": reach,
                "powers": int(powers),
                "mean_lookback": float((positions - reached).double().mean()),
                "row_sum_error": float((P.double().sum(-1) - 1).abs().max()),
                "min_entry": float(P.min()),
                "upper_triangle_zero": bool((P.triu(1) == 0).all()),
                "expm_error": float(np.abs(P64[0].numpy() - dense).max()),
            }
        )
    return rows


def _float64_copy(layer: ExpMarkovAttention) -> ExpMarkovAttention:
    copy = ExpMarkovAttention(
        layer.d_model, layer.n_heads, layer.offsets, causal=True, time_per=layer.time_per
    ).double()
    copy.load_state_dict({k: v.detach().double().cpu() for k, v in layer.state_dict().items()})
    return copy


def _measure_context(models: dict[str, LongContextLM], corpus: ByteCorpus, config, context: int) -> dict:
    """Timing, memory, operator diagnostics and checks of the two trained models at one context."""
    windows = config.tokens_per_step // context
    tokens = torch.from_numpy(corpus.windows("held_out", np.arange(windows) * context, context)).to(config.device)
    w = min(config.check_context, context)
    window = tokens[:1, :w]
    for model in models.values():
        model.eval()
    inputs = {k: m.mixer_inputs(tokens) for k, m in models.items()}
    mixers = {k: [b.mixer for b in m.blocks] for k, m in models.items()}
    cases = {k: (mixers[k], inputs[k], False) for k in LONG_CONTEXT_MIXERS}
    explicit = context <= config.explicit_max_context
    if explicit:
        cases["softmax-explicit"] = (mixers["softmax"], inputs["softmax"], True)
    seconds = _time_mixers(cases, config)
    memory = {k: _memory(*cases[k][:2], explicit=cases[k][2], device=config.device) for k in cases}
    layers = _layer_diagnostics(models["exp-markov"], inputs["exp-markov"], window)
    with torch.no_grad():
        xw = models["softmax"].mixer_inputs(window)
        agree = max(
            float((m(x) - m.explicit(x)).abs().max() / m.explicit(x).abs().max().clamp_min(1e-30))
            for m, x in zip(mixers["softmax"], xw, strict=True)
        )
    tokens_per_step = windows * context
    return {
        "context": context,
        "batch": windows,
        "seconds": seconds,
        "tokens_per_second": {k: {p: tokens_per_step / s for p, s in v.items()} for k, v in seconds.items()},
        "speed_ratio": {p: seconds["softmax"][p] / seconds["exp-markov"][p] for p in ("forward", "forward_backward")},
        "saved_mib": {k: v["saved_mib"] for k, v in memory.items()},
        "cuda_peak_mib": {k: v["cuda_peak_mib"] for k, v in memory.items()},
        "learned_t": [float(np.mean(layer["t"])) for layer in layers],
        "layers": layers,
        "softmax_explicit_agreement": agree,
    }


# ---- the experiment ---------------------------------------------------------------------------------------


def _condition(mixer: str, context: int) -> str:
    return f"{mixer}-{context}"


def _train(model: LongContextLM, corpus: ByteCorpus, config, context: int, progress: bool) -> dict:
    """AdamW on the seed's training windows (the lm experiment's loop), then held-out bpb at ``context``."""
    windows = config.tokens_per_step // context
    settings = types.SimpleNamespace(
        lr=config.lr,
        weight_decay=config.weight_decay,
        grad_clip=config.grad_clip,
        log_every=config.log_every,
        context=context,
        batch=windows,
        device=config.device,
    )
    start = time.perf_counter()
    curve = train_bytes(
        model,
        corpus,
        settings,
        config.steps,
        np.random.default_rng([config.seed, 0]),
        warmup=config.warmup,
        label=f"long-context {model.mixer} n={context}",
        progress=progress,
        curve_bytes=max(context, config.eval_bytes // 8),
    )
    seconds = time.perf_counter() - start
    scored = held_out_bpb(model, corpus, config.eval_bytes, context, batch=max(1, windows))
    return {
        "mixer": model.mixer,
        "context": context,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "bpb": scored["bpb"],
        "eval_bytes": scored["bytes"],
        "train_seconds": seconds,
        "learned_t": [t.tolist() for t in model.learned_times()],
        "curve": curve,
    }


def run_long_context(
    config: LongContextConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Train softmax and banded exp-Markov byte models at each context; time, weigh and check their mixers.

    At every context :math:`n` of ``config.contexts``: both models are trained at a matched budget
    (:func:`new_models`: the same initial weights and windows) and scored on held-out bytes; then, on one held-out
    batch of ``tokens_per_step`` bytes, every layer's mixer is timed (forward, forward + backward), its saved
    activations weighed (:func:`saved_tensor_bytes`), and the learned exp-Markov operators read and checked.
    The crossover context is :func:`crossover_context` of the time ratios.

    Parameters
    ----------
    config : LongContextConfig, optional
        Defaults to the paper preset.
    out : path, optional
        Run directory (:class:`workbench.experiments.RunLog`): per context ``<mixer>-<n>.pt``/``.json`` for the
        two models and ``measure-<n>.json``, then ``results.json``, ``table.md`` and ``figure.png``.
    progress, force, resume : bool
        A progress bar; replace the run in a non-empty ``out``; continue an unfinished run in ``out`` (trained
        models are read back; a context's measurements are taken again unless they were kept).

    Returns
    -------
    dict
        JSON-able ``{"experiment": "long-context", "config", "models": [row], "contexts": [row], "crossover",
        "checks"}``.

    References
    ----------
    Lie-Exponential Roadmap, "ExpMarkovAttention (global, normalized attention)", "Long-context efficiency"
    [SEED].

    Examples
    --------
    >>> cfg = LongContextConfig.preset("quick", contexts=(16,), steps=2, log_every=1, eval_bytes=64,
    ...                                tokens_per_step=32, check_context=16, timing_repeats=1, timing_warmup=0)
    >>> result = run_long_context(cfg, progress=False)
    >>> [r["mixer"] for r in result["models"]], result["checks"]["all"]
    (['softmax', 'exp-markov'], True)
    """
    if config is None:
        config = LongContextConfig.preset("paper")
    if not isinstance(config, LongContextConfig):
        raise TypeError(f"config must be a LongContextConfig, got {type(config).__name__}")
    corpus = shakespeare_bytes(config.held_out_every)
    if len(corpus.held_out) <= max(config.tokens_per_step, config.eval_bytes):
        raise ValueError(
            f"tokens_per_step and eval_bytes must be below the {len(corpus.held_out)} held-out bytes, got "
            f"{config.tokens_per_step} and {config.eval_bytes}"
        )
    conditions = [
        c for n in config.contexts for c in (*(_condition(m, n) for m in LONG_CONTEXT_MIXERS), f"measure-{n}")
    ]
    artefacts = {f"{c}{s}" for c in conditions for s in (".pt", ".json")}
    log = RunLog.open(
        out,
        experiment="long-context",
        config=dataclasses.asdict(config),
        conditions=conditions,
        selection={},
        artefacts=frozenset(artefacts | {"results.json", "table.md", "figure.png"}),
        force=force,
        resume=resume,
    )
    with log:
        model_rows, context_rows = [], []
        for n in config.contexts:
            models = new_models(config, n)
            for mixer, model in models.items():
                row = log.finished(_condition(mixer, n))
                if row is None:
                    row = _train(model, corpus, config, n, progress)
                    log.keep(_condition(mixer, n), row, model.state_dict())
                else:
                    log.load_state(_condition(mixer, n), model, map_location=config.device)
                model_rows.append(row)
            measured = log.finished(f"measure-{n}", state=False)
            if measured is None:
                measured = jsonable(_measure_context(models, corpus, config, n))
                log.keep(f"measure-{n}", measured)
            measured["bpb"] = {r["mixer"]: r["bpb"] for r in model_rows if r["context"] == n}
            context_rows.append(measured)
        ratios = {
            p: crossover_context(config.contexts, [1.0 / r["speed_ratio"][p] for r in context_rows])
            for p in ("forward", "forward_backward")
        }
        result = jsonable(
            {
                "experiment": "long-context",
                "config": dataclasses.asdict(config),
                "threads": torch.get_num_threads(),
                "models": model_rows,
                "contexts": context_rows,
                "crossover": ratios,
                "checks": _checks(model_rows, context_rows),
            }
        )
        if log.path is not None:
            log.write_results(result, long_context_table(result))
            import matplotlib.pyplot as plt

            plt.close(long_context_figure(result, log.path / "figure.png"))
    return result


def _checks(models: list[dict], contexts: list[dict]) -> dict[str, Any]:
    layers = [layer for row in contexts for layer in row["layers"]]
    checks = {
        "bpb_finite": all(math.isfinite(r["bpb"]) and r["bpb"] > 0 for r in models),
        # e^{tQ} of every trained layer: rows sum to 1 (float32, ~K roundings of a convex average), entries ≥ 0,
        # exactly nothing above the diagonal, and equal to scipy's expm of the dense float64 generator.
        "operator_row_stochastic": all(layer["row_sum_error"] <= 1e-5 for layer in layers),
        "operator_nonnegative": all(layer["min_entry"] >= 0.0 for layer in layers),
        "operator_causal": all(layer["upper_triangle_zero"] for layer in layers),
        "operator_matches_expm": all(layer["expm_error"] <= 1e-10 for layer in layers),
        "times_positive": all(t > 0 and math.isfinite(t) for row in contexts for t in row["learned_t"]),
        # the fused kernel computes the explicit formula (float32, different summation orders)
        "softmax_kernels_agree": all(row["softmax_explicit_agreement"] <= 1e-4 for row in contexts),
        "measurements_positive": all(s > 0 for row in contexts for v in row["seconds"].values() for s in v.values())
        and all(m > 0 for row in contexts for m in row["saved_mib"].values()),
    }
    checks["all"] = all(checks.values())
    return checks
