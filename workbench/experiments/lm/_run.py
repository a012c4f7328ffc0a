r"""Table 2 at workbench scale: byte-level causal language models trained from scratch under one operator's scores.

Attention Geometry §11 trains three depth-12 nanochat decoders (about 200M parameters) from random
initialisation with ATTN, DMTN and DMAP pre-mask scores at a matched budget and reports held-out bits per byte:
ATTN 0.8471, DMTN 0.8492, DMAP 0.8621 (one seed each).  This module trains the same comparison small: a
pre-LN causal transformer (:class:`workbench.experiments.InductionTransformer` with its GELU MLP sublayer: token
and learned position embeddings, ``n_layers`` blocks, a linear read-out) whose heads use the operator's logits
(:class:`workbench.nn.OperatorAttention`), on the bytes of the Shakespeare corpus
(:func:`~workbench.experiments.common.shakespeare_bytes`, a held-out split by work), and measures

* **held-out bits per byte** (:func:`~workbench.experiments.common.held_out_bpb`): every byte of the first
``eval_bytes`` held-out bytes
  predicted once, from non-overlapping windows of ``context`` bytes,
  :func:`~workbench.experiments.common.bits_per_byte` of the summed loss;
* **the byte induction probe** (:func:`byte_induction_probe`): a segment of ``context / 2`` random lowercase
  letters repeated twice, top-1 accuracy on the repeat and each head's induction score
  (:func:`workbench.attention.induction_score`): does the model copy by content?

Matched budget, paired by seed: for one ``seed`` every operator starts from the same initial weights (the shapes
do not depend on the operator; ``torch.manual_seed(seed)``), reads the same training windows in the same order
(``numpy.random.default_rng([seed, 0])``) and is scored on the same held-out bytes and probe sequences, so the
difference of two operators' bpb at one seed is a paired measurement.  Optimisation: AdamW, linear warm-up then
cosine decay to a tenth of the peak learning rate, gradient-norm clipping.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Table 2 [SEED]; book/reference.md §A.7 [CODE] (the
operators' logits), §A.12 (Table 2 numbers); Olsson et al. (2022) (induction heads); Karpathy (2023), nanoGPT
(the byte-level Shakespeare language model as a benchmark task).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.attention import OPERATORS, induction_score
from workbench.experiments.common import (
    VOCAB,
    ByteCorpus,
    RunLog,
    held_out_bpb,
    jsonable,
    shakespeare_bytes,
    train_bytes,
)
from workbench.experiments.induction import InductionTransformer
from workbench.experiments.lm._config import LanguageModelConfig

__all__ = [
    "byte_induction_probe",
    "new_model",
    "run_language_model",
]

#: Probe segments are drawn from the lowercase letters, bytes a model trained on English text has seen.
_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8).astype(np.int64)


# ---- shared by the language-model experiments (this module and the sequential transfer) ---------------------


def new_model(config, operator: str) -> InductionTransformer:
    """The byte model of ``config`` with ``operator``'s scores, initialised from ``torch.manual_seed(seed)``."""
    torch.manual_seed(config.seed)
    return InductionTransformer(
        VOCAB, config.context, config.d_model, config.n_heads, config.n_layers, operator, "mlp"
    ).to(config.device)


@torch.no_grad()
def byte_induction_probe(model: InductionTransformer, context: int, seed: int, batch: int = 64) -> dict:
    r"""Induction on repeated random letters: top-1 accuracy on the repeat and each head's induction score.

    Sequences :math:`t = (s, s)` of :math:`T = c/2` random lowercase letters (:math:`c` the context) repeated
    once; position :math:`i \in [T, 2T-2]` must predict :math:`t_{i+1} = t_{i+1-T}`, which only a model that
    finds the earlier occurrence of :math:`t_i` and copies its successor can do better than the letter
    frequencies allow.  Each head's score is :func:`workbench.attention.induction_score` (mean attention from
    :math:`i` to :math:`i - T + 1`), averaged over the batch.

    Returns
    -------
    dict
        ``accuracy`` (float), ``scores`` (``[layers, heads]`` list) and ``best`` (the highest score).

    References
    ----------
    Olsson et al. (2022), "In-context learning and induction heads"; Attention Geometry §11, Table 3 [SEED]
    (induction accuracy).

    Examples
    --------
    >>> torch.manual_seed(0) and None
    >>> model = InductionTransformer(256, 16, 16, 2, 2, "DMTN", "mlp")
    >>> probe = byte_induction_probe(model, 16, seed=0, batch=8)
    >>> 0.0 <= probe["accuracy"] <= 1.0, np.shape(probe["scores"])
    (True, (2, 2))
    """
    T = context // 2
    rng = np.random.default_rng([seed, 3])
    segment = _LETTERS[rng.integers(0, len(_LETTERS), (batch, T))]
    tokens_np = np.concatenate([segment, segment], axis=1)
    device = next(model.parameters()).device
    training = model.training
    model.eval()
    logits, operators = model(torch.from_numpy(tokens_np).to(device), return_operators=True)
    if training:
        model.train()
    predicted = logits[:, T:-1].argmax(-1).cpu().numpy()
    accuracy = float((predicted == tokens_np[:, T + 1 :]).mean())
    scores = np.stack([np.asarray(induction_score(P.float().cpu().numpy(), tokens_np)).mean(axis=0) for P in operators])
    return {"accuracy": accuracy, "scores": scores.tolist(), "best": float(scores.max())}


# ---- the experiment ---------------------------------------------------------------------------------------


def run_language_model(
    config: LanguageModelConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Train one byte-level causal LM with ``config.operator``'s scores and score it on held-out text.

    The training loss is next-byte cross-entropy on random training windows,
    :math:`\mathcal L = -\frac1{c}\sum_{i<c}\ln p_\theta(x_{i+1}\mid x_{\le i})`; the result is the held-out
    bits per byte (:func:`~workbench.experiments.common.held_out_bpb` on ``eval_bytes`` bytes), the byte induction probe
    (:func:`byte_induction_probe`) and the heads' score skew :math:`\rho_{\mathrm{skew}}` (0 exactly for DMAP).
    One operator per run: a sweep over ``operator`` and ``seed`` (``workbench sweep lm --grid
    operator=ATTN,DMTN,DMAP --seeds 0-4``) gives Table 2 with paired differences
    (:func:`language_model_sweep_table`).

    Parameters
    ----------
    config : LanguageModelConfig, optional
        Defaults to the paper preset.
    out : path, optional
        Run directory (:class:`workbench.experiments.RunLog`): ``run.json``, ``config.json``, then
        ``<operator>.pt`` (the state dict) and ``<operator>.json``, ``results.json`` and ``table.md``.
    progress, force, resume : bool
        A progress bar; reuse a non-empty ``out`` (the files a run writes are removed first); continue an
        unfinished run in ``out`` (a finished model is read back, an unfinished one is trained again from its seed).

    Returns
    -------
    dict
        JSON-able ``{"experiment": "lm", "config", "corpus", "runs": [row], "checks"}``; the row holds
        ``operator, parameters, bpb, nats_per_byte, eval_bytes, induction_accuracy, induction_scores,
        best_induction_score, rho_skew, seconds, tokens_per_second, curve``.

    References
    ----------
    Attention Geometry §11, Table 2 [SEED]; book/reference.md §A.12.

    Examples
    --------
    >>> cfg = LanguageModelConfig.preset("quick", operator="DMAP", steps=2, log_every=1)
    >>> result = run_language_model(cfg, progress=False)
    >>> row = result["runs"][0]
    >>> row["operator"], 0.0 < row["bpb"] < 9.0, result["checks"]["all"]
    ('DMAP', True, True)
    """
    if config is None:
        config = LanguageModelConfig.preset("paper")
    if not isinstance(config, LanguageModelConfig):
        raise TypeError(f"config must be a LanguageModelConfig, got {type(config).__name__}")
    corpus = shakespeare_bytes(config.held_out_every)
    op = config.operator
    log = RunLog.open(
        out,
        experiment="lm",
        config=dataclasses.asdict(config),
        conditions=[op],
        selection={},
        artefacts=frozenset({"results.json", "table.md"} | {f"{o}{s}" for o in OPERATORS for s in (".pt", ".json")}),
        force=force,
        resume=resume,
    )
    with log:
        row = log.finished(op)
        if row is None:
            model = new_model(config, op)
            start = time.perf_counter()
            curve = train_bytes(
                model,
                corpus,
                config,
                config.steps,
                np.random.default_rng([config.seed, 0]),
                warmup=config.warmup,
                label=f"lm {op}",
                progress=progress,
                curve_bytes=max(config.context, config.eval_bytes // 8),
            )
            seconds = time.perf_counter() - start
            row = _row(model, corpus, config, curve, seconds)
            log.keep(op, row, model.state_dict())
        result = jsonable(
            {
                "experiment": "lm",
                "config": dataclasses.asdict(config),
                "corpus": {
                    "train_bytes": len(corpus.train),
                    "held_out_bytes": len(corpus.held_out),
                    "held_out_works": list(corpus.held_out_works),
                },
                "runs": [row],
                "checks": _checks(row),
            }
        )
        if log.path is not None:
            from workbench.experiments.lm._report import language_model_table

            log.write_results(result, language_model_table(result))
    return result


def _row(model: InductionTransformer, corpus: ByteCorpus, config, curve: dict, seconds: float) -> dict:
    scored = held_out_bpb(model, corpus, config.eval_bytes, config.context)
    probe = byte_induction_probe(model, config.context, config.seed)
    return {
        "operator": model.operator,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "bpb": scored["bpb"],
        "nats_per_byte": scored["nats_per_byte"],
        "eval_bytes": scored["bytes"],
        "induction_accuracy": probe["accuracy"],
        "induction_scores": probe["scores"],
        "best_induction_score": probe["best"],
        "rho_skew": model.skew_ratios().tolist(),
        "seconds": seconds,
        "tokens_per_second": config.steps * config.batch * config.context / seconds,
        "curve": curve,
    }


def _checks(row: dict) -> dict[str, Any]:
    rho = np.asarray(row["rho_skew"])
    checks = {
        # Structural: a DMAP head's effective form has no skew part, on any weights (exactly 0).
        "dmap_skew_zero": bool(np.all(rho == 0.0)) if row["operator"] == "DMAP" else None,
        "bpb_finite": bool(np.isfinite(row["bpb"]) and row["bpb"] > 0),
        "scores_in_unit_interval": bool(np.all(np.asarray(row["induction_scores"]) >= -1e-9))
        and bool(np.all(np.asarray(row["induction_scores"]) <= 1 + 1e-9)),
    }
    checks["all"] = all(v for v in checks.values() if v is not None)
    return checks
