r"""Table 3 at workbench scale: one model carried through ATTN → DMTN → ATTN → DMTN, adapting each stage.

Attention Geometry §11 takes a pretrained depth-32 model (about 1.9B parameters) through four states, adapting
the last three for 3,000, 1,000 and 1,000 steps: :math:`A_0` ATTN (bpb 0.7650, induction 0.8081) → :math:`M_1`
DMTN (0.6657, 0.5735) → :math:`A_1` ATTN (0.6619, 0.8334) → :math:`M_2` DMTN (0.6690, 0.4676), and reads: induction
is more sensitive to the score geometry than the loss.  Here one small model goes through the same sequence:

1. :math:`A_0`: train from its seed with ATTN scores for ``pretrain_steps``;
2. for each later stage, project the model onto the stage's corner with the weights kept
   (:func:`workbench.nn.project_attention`, the exact projection :func:`workbench.attention.project_head`
   head by head; ``target`` chooses DMTN, as in the paper, or the distance-form DMAP), measure it *right after the
   projection*, adapt it with AdamW for ``adapt_steps`` (3 : 1 : 1 as in the paper), and measure it again.

Two tasks:

* ``"shakespeare"`` — the byte-level language model of Table 2 (:mod:`workbench.experiments.lm`):
  held-out bits per byte, the byte induction probe (repeated random letters) and each head's induction score;
* ``"induction"`` — the varying-period induction task (:func:`workbench.experiments.variable_period_tokens`),
  where induction forms reliably at this size: repeat-half loss and accuracy on period :math:`T`, the
  shifted-period probe (:func:`workbench.experiments.shifted_period_accuracy`, which a positional shortcut fails)
  and each head's induction score.

The states are sequential, not independent matched-budget ablations (the paper says the same of its Table 3).

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §10 (the weight-preserving substitution), §11, Table 3 [SEED];
book/reference.md §A.7 [CODE], §A.12 (Table 3 numbers); Olsson et al. (2022).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workbench.attention import induction_score, repeated_random_tokens
from workbench.experiments.common import (
    RUN_RECORD,
    RunLog,
    Schedule,
    check_digest,
    held_out_bpb,
    jsonable,
    load_state,
    read_json_record,
    shakespeare_bytes,
    train,
    train_bytes,
)
from workbench.experiments.induction import (
    InductionConfig,
    InductionTransformer,
    shifted_period_accuracy,
    variable_period_tokens,
)
from workbench.experiments.lm import byte_induction_probe, new_model
from workbench.experiments.transfer._config import STAGES, TransferConfig
from workbench.nn import project_attention

__all__ = ["run_transfer"]

# ---- the two tasks ----------------------------------------------------------------------------------------


def _model_and_training(config: TransferConfig) -> dict:
    """The fields of a transfer's config under the names the lm and induction configs give them."""
    return dict(
        seed=config.seed,
        d_model=config.width,
        n_heads=config.n_heads,
        n_layers=config.depth,
        batch=config.batch,
        lr=config.peak_lr,
        weight_decay=config.weight_decay,
        grad_clip=config.grad_clip,
    )


def _settings(config: TransferConfig) -> SimpleNamespace:
    """The language-model training settings a stage reads (what ``train_bytes`` takes from a config)."""
    return SimpleNamespace(
        **_model_and_training(config), context=config.context, log_every=config.log_every, device=config.device
    )


class _ShakespeareTask:
    def __init__(self, config: TransferConfig):
        self.config, self.settings = config, _settings(config)
        self.corpus = shakespeare_bytes(config.held_out_every)
        self.data = np.random.default_rng([config.seed, 0])

    def model(self) -> InductionTransformer:
        return new_model(self.settings, "ATTN")

    def train(self, model, steps: int, label: str, progress: bool, first: bool) -> dict:
        return train_bytes(
            model,
            self.corpus,
            self.settings,
            steps,
            self.data,
            # A0 warms up as the lm experiment does (so a pretrained lm run is the same model); the adaptations
            # warm up for at most a tenth of their steps.
            warmup=self.config.warmup if first else min(self.config.warmup, steps // 10),
            label=label,
            progress=progress,
            curve_bytes=max(self.config.context, self.config.eval_bytes // 8),
        )

    def measure(self, model) -> dict:
        scored = held_out_bpb(model, self.corpus, self.config.eval_bytes, self.config.context)
        probe = byte_induction_probe(model, self.config.context, self.config.seed)
        return {
            "bpb": scored["bpb"],
            "induction_accuracy": probe["accuracy"],
            "induction_scores": probe["scores"],
            "best_induction_score": probe["best"],
        }


class _InductionTask:
    def __init__(self, config: TransferConfig):
        self.config = config
        self.induction = InductionConfig(
            **_model_and_training(config),
            vocab_size=config.vocab_size,
            half_length=config.half_length,
            eval_batch=config.eval_batch,
            min_period=config.min_period,
        )
        self.data = np.random.default_rng([config.seed, 0])
        self.eval_np = repeated_random_tokens(
            np.random.default_rng([config.seed, 1]), config.vocab_size, config.half_length, config.eval_batch
        )

    def model(self) -> InductionTransformer:
        c = self.config
        torch.manual_seed(c.seed)
        return InductionTransformer(
            c.vocab_size, 2 * c.half_length, c.width, c.n_heads, c.depth, "ATTN", "attn-only"
        ).to(c.device)

    def train(self, model, steps: int, label: str, progress: bool, first: bool) -> dict:
        c = self.config

        def loss_at(step: int) -> torch.Tensor:
            tokens = variable_period_tokens(self.data, c.vocab_size, c.half_length, c.batch, c.min_period)
            tokens = torch.from_numpy(tokens).to(c.device)
            return F.cross_entropy(model(tokens)[:, :-1].reshape(-1, c.vocab_size), tokens[:, 1:].reshape(-1))

        schedule = Schedule(steps, c.peak_lr, c.weight_decay, c.grad_clip, c.log_every)
        return train(model, schedule, loss_at, label=label, progress=progress).curve

    @torch.no_grad()
    def measure(self, model) -> dict:
        T = self.config.half_length
        model.eval()
        tokens = torch.from_numpy(self.eval_np).to(self.config.device)
        logits, operators = model(tokens, return_operators=True)
        repeat = F.cross_entropy(logits[:, T:-1].transpose(1, 2), tokens[:, T + 1 :])
        accuracy = (logits[:, T:-1].argmax(-1) == tokens[:, T + 1 :]).double().mean()
        # float32 operators: the diagnostics' row-sum tolerance follows the dtype.
        scores = np.stack(
            [np.asarray(induction_score(P.float().cpu().numpy(), self.eval_np)).mean(axis=0) for P in operators]
        )
        model.train()
        return {
            "repeat_loss": float(repeat),
            "induction_accuracy": float(accuracy),
            "shifted_period_accuracy": shifted_period_accuracy(model, self.induction),
            "induction_scores": scores.tolist(),
            "best_induction_score": float(scores.max()),
        }


# ---- the experiment ---------------------------------------------------------------------------------------


def run_transfer(
    config: TransferConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Carry one model through ATTN → target → ATTN → target, measuring it after each projection and adaptation.

    States, in order: ``A0`` (ATTN trained from scratch), then for ``M1``, ``A1``, ``M2``: ``<stage>:projected``
    (the previous state's weights, the stage's corner, no training) and ``<stage>`` (adapted).  The model of each
    adapted state is kept in the run directory, so a resumed run continues from the last finished stage.

    Returns
    -------
    dict
        JSON-able ``{"experiment": "transfer", "config", "states": [...], "checks"}``; each state holds
        ``state, stage, operator, steps`` (training steps so far), ``rho_skew`` (mean over heads), the task's
        measurements (shakespeare: ``bpb``; induction: ``repeat_loss``, ``shifted_period_accuracy``; both:
        ``induction_accuracy``, ``induction_scores`` [layers, heads], ``best_induction_score``), ``seconds``.

    References
    ----------
    Attention Geometry §10, §11, Table 3 [SEED]; book/reference.md §A.12.

    Examples
    --------
    >>> cfg = TransferConfig.preset("quick", task="induction", target="DMAP", pretrain_steps=3, adapt_steps=(3, 1, 1))
    >>> result = run_transfer(cfg, progress=False)
    >>> [s["state"] for s in result["states"]]
    ['A0', 'M1:projected', 'M1', 'A1:projected', 'A1', 'M2:projected', 'M2']
    >>> [s["operator"] for s in result["states"]][1:3], result["checks"]["all"]
    (['DMAP', 'DMAP'], True)
    """
    if config is None:
        config = TransferConfig.preset("paper")
    if not isinstance(config, TransferConfig):
        raise TypeError(f"config must be a TransferConfig, got {type(config).__name__}")
    task = _ShakespeareTask(config) if config.task == "shakespeare" else _InductionTask(config)
    log = RunLog.open(
        out,
        experiment="transfer",
        config=dataclasses.asdict(config),
        conditions=list(STAGES),
        selection={},
        artefacts=frozenset({"results.json", "table.md"} | {f"{s}{x}" for s in STAGES for x in (".pt", ".json")}),
        force=force,
        resume=resume,
    )
    with log:
        model = task.model()
        states: list[dict] = []
        steps_so_far = 0
        for stage in STAGES:
            kept = log.finished(stage)
            steps = config.steps_of(stage)
            if stage != "A0":
                project_attention(model, config.corner(stage))
            if kept is None and stage == "A0" and config.pretrained is not None:
                # A0 is the Table-2 model of this seed: the same model this loop would train (checked settings).
                _load_pretrained(config, model)
                _advance(task, config, steps)
                record = _state(task, model, config, stage, stage, steps, 0.0)
                record["pretrained"] = str(_pretrained_folder(config))
                log.keep(stage, {"states": [record]}, model.state_dict())
                states.append(record)
            elif kept is not None:
                # The stage's records, and its adapted weights to continue from (the data stream is advanced
                # by the steps it took, so the later stages read the windows an uninterrupted run reads).
                log.load_state(stage, model, map_location=config.device)
                _advance(task, config, steps)
                states.extend(kept["states"])
            else:
                start = time.perf_counter()
                record = []
                if stage != "A0":
                    record.append(_state(task, model, config, f"{stage}:projected", stage, steps_so_far, 0.0))
                curve = task.train(model, steps, f"transfer {stage} {config.corner(stage)}", progress, stage == "A0")
                record.append(
                    _state(task, model, config, stage, stage, steps_so_far + steps, time.perf_counter() - start)
                )
                record[-1]["curve"] = curve
                log.keep(stage, {"states": record}, model.state_dict())
                states.extend(record)
            steps_so_far += steps
        result = jsonable(
            {
                "experiment": "transfer",
                "config": dataclasses.asdict(config),
                "states": states,
                "checks": _checks(states, config),
            }
        )
        if log.path is not None:
            from workbench.experiments.transfer._report import transfer_table

            log.write_results(result, transfer_table(result))
    return result


#: The settings of an lm run that must equal a transfer's for its ATTN model to be the transfer's A0.
_PRETRAINED_FIELDS = {
    "seed": lambda c: c.seed,
    "operator": lambda c: "ATTN",
    "context": lambda c: c.context,
    "d_model": lambda c: c.width,
    "n_heads": lambda c: c.n_heads,
    "n_layers": lambda c: c.depth,
    "steps": lambda c: c.steps_of("A0"),
    "batch": lambda c: c.batch,
    "lr": lambda c: c.peak_lr,
    "warmup": lambda c: c.warmup,
    "weight_decay": lambda c: c.weight_decay,
    "grad_clip": lambda c: c.grad_clip,
    "held_out_every": lambda c: c.held_out_every,
}


def _pretrained_folder(config: TransferConfig) -> Path:
    """``config.pretrained`` with ``{seed}`` replaced by the seed; every other character is taken as it is.

    Not :meth:`str.format`: a path is data, and format fields would read attributes of the seed
    (``{seed.__class__}``), fail on other names (``{0}``, a KeyError) or allocate a field width of gigabytes.
    """
    return Path(config.pretrained.replace("{seed}", str(config.seed)))


def _load_pretrained(config: TransferConfig, model: nn.Module) -> None:
    """Load the ATTN model of the finished lm run ``config.pretrained`` into ``model``, its settings checked to be A0's.

    Its ``run.json`` and ``ATTN.pt`` are read as a resumed run's are: a file that was edited or damaged is refused
    in one line naming it (:func:`~workbench.experiments.common.read_json_record`, ``load_state``).
    """
    folder = _pretrained_folder(config)
    if not (folder / RUN_RECORD).exists():
        raise ValueError(
            f"pretrained must be the run directory of a finished lm run, got {str(folder)!r}, which holds no "
            f"{RUN_RECORD}"
        )
    keys = {"experiment": str, "status": str, "done": [str], "config": dict}
    record = read_json_record(
        folder / RUN_RECORD, what="the run record of a finished lm run", keys=keys, option="pretrained"
    )
    if record["experiment"] != "lm" or record["status"] != "complete" or record["done"] != ["ATTN"]:
        raise ValueError(
            f"pretrained must be the run directory of a finished lm run of ATTN, got {str(folder)!r}: a "
            f"{record.get('status')} run of {record.get('experiment')} with {record.get('done')} done"
        )
    recorded = record["config"]
    for field, wanted in _PRETRAINED_FIELDS.items():
        if recorded.get(field) != wanted(config):
            raise ValueError(
                f"pretrained must be trained as this transfer's A0, got {str(folder)!r} with {field}="
                f"{recorded.get(field)!r} where the transfer has {wanted(config)!r}"
            )
    what = "the state dict of that lm run's ATTN model"
    check_digest(folder / "ATTN.pt", record, what=what, remedy="train that lm run again")
    load_state(folder / "ATTN.pt", model, what=what, map_location=config.device)


def _advance(task, config: TransferConfig, steps: int) -> None:
    """Draw, and discard, the training batches ``steps`` steps of a stage would have drawn."""
    for _ in range(steps):
        if config.task == "shakespeare":
            task.data.integers(0, len(task.corpus.train) - config.context - 1, config.batch)
        else:
            variable_period_tokens(task.data, config.vocab_size, config.half_length, config.batch, config.min_period)


def _state(task, model, config, state: str, stage: str, steps: int, seconds: float) -> dict:
    rho = model.skew_ratios()
    return {
        "state": state,
        "stage": stage,
        "operator": config.corner(stage),
        "steps": steps,
        "rho_skew": float(np.mean(rho)),
        **task.measure(model),
        "seconds": seconds,
    }


def _checks(states: list[dict], config: TransferConfig) -> dict[str, Any]:
    rho_dmap = [s["rho_skew"] for s in states if s["operator"] == "DMAP"]
    scores = np.concatenate([np.ravel(s["induction_scores"]) for s in states])
    checks = {
        # Structural: the DMAP corner's effective form has no skew part, whatever the weights (exactly 0).
        "dmap_skew_zero": all(r == 0.0 for r in rho_dmap) if rho_dmap else None,
        "scores_in_unit_interval": bool(np.all((scores >= -1e-9) & (scores <= 1 + 1e-9))),
        "finite": bool(all(np.isfinite(s.get("bpb", s.get("repeat_loss"))) for s in states)),
    }
    checks["all"] = all(v for v in checks.values() if v is not None)
    return checks
