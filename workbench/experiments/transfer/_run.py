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
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from workbench.attention import induction_score, repeated_random_tokens
from workbench.experiments.common import (
    RUN_RECORD,
    TRAINING_CHECKS,
    Check,
    ExperimentConfig,
    RunLog,
    Schedule,
    check_digest,
    device_check,
    even_context_check,
    held_out_bpb,
    integer_check,
    jsonable,
    load_state,
    name_check,
    range_check,
    read_json_record,
    save_json,
    save_text,
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
from workbench.nn import project_attention
from workbench.validation import check_choice

__all__ = ["TRANSFER_TASKS", "TransferConfig", "run_transfer"]

#: The tasks a transfer runs on.
TRANSFER_TASKS = ("shakespeare", "induction")
#: The paper's states and the corner of each (the target replaces DMTN).
STAGES = ("A0", "M1", "A1", "M2")


def _check_choice_of(allowed):
    return lambda config, name, value: check_choice(name, value, allowed)


def _check_adapt_steps(config, name: str, value) -> None:
    if not isinstance(value, tuple) or len(value) != 3:
        raise ValueError(f"adapt_steps must be three step counts (M1, A1, M2), got {value!r}")
    for v in value:
        integer_check(1)(config, name, v)


def _check_pretrained(config, name: str, value) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not value:
        raise TypeError(f"pretrained must be a run directory (a str), got {value!r}")
    if config.task != "shakespeare":
        raise ValueError(f"pretrained applies to the shakespeare task only, got task={config.task!r}")


def _check_min_period(config, name: str, value) -> None:
    integer_check(1)(config, name, value)
    if value > config.half_length:
        raise ValueError(f"min_period must be at most half_length={config.half_length}, got {value}")


_PRESETS: dict[str, dict[str, Any]] = {
    "quick": dict(
        context=32,
        d_model=32,
        n_heads=2,
        n_layers=2,
        batch=8,
        pretrain_steps=20,
        adapt_steps=(6, 2, 2),
        warmup=2,
        log_every=10,
        eval_bytes=4096,
        vocab_size=16,
        half_length=8,
        min_period=4,
        eval_batch=16,
    ),
    # The shakespeare task: the Table-2 paper model (0.87 M parameters), A0 with the Table-2 budget, then
    # 240 / 80 / 80 adaptation steps.  The induction task (--set task=induction) reads the vocab/half_length/
    # min_period fields: the widths of the varying-period induction run, 4,000 + 1,500 / 500 / 500 steps.
    "paper": dict(),
}


@dataclasses.dataclass(frozen=True)
class TransferConfig(ExperimentConfig):
    r"""Settings of one sequential transfer ATTN → target → ATTN → target (Table 3 at workbench scale).

    Parameters
    ----------
    seed : int
        Initial weights, training stream, evaluation batches.
    task : {'shakespeare', 'induction'}
        The byte language model on the Shakespeare corpus, or the varying-period induction task.
    target : {'DMTN', 'DMAP'}
        The corner of the M stages (the paper's is DMTN).
    pretrain_steps : int
        Steps of :math:`A_0` (ATTN from scratch).  ``None`` takes the task's default: 400 (shakespeare, the
        Table-2 budget) or 4,000 (induction).
    pretrained : str, optional
        Shakespeare task: the run directory of a finished ``workbench experiment lm`` ATTN run (for example a
        task of the Table-2 sweep) whose model is :math:`A_0`, instead of training it here; ``{seed}`` in it is
        replaced by ``seed`` (nothing else: other braces are part of the path).
        Its settings must be this transfer's (seed, widths, ``pretrain_steps``, batch,
        learning rate, warm-up, …): then it is the very model :math:`A_0` would be, and the adaptations read the
        training windows after the ones it read.
    adapt_steps : tuple of int
        Adaptation steps of :math:`M_1, A_1, M_2` (the paper's ratio is 3 : 1 : 1).  ``None``: (240, 80, 80)
        for shakespeare, (1500, 500, 500) for induction.
    d_model, n_heads, n_layers, batch, lr, weight_decay, grad_clip, log_every : as in the language model
        ``None`` for ``d_model`` takes the task's width (128 for shakespeare, 64 for induction), and ``None`` for
        ``n_layers`` its depth (4 and 2).
    warmup : int
        Linear warm-up steps of every stage's learning rate (then cosine decay to a tenth; shakespeare only, the
        induction task trains at a constant rate as its experiment does).
    context, eval_bytes, held_out_every : int
        Shakespeare task: bytes a model reads, held-out bytes scored, the held-out split.
    vocab_size, half_length, min_period, eval_batch : int
        Induction task: :math:`V`, :math:`T`, the shortest training period, the eval batch.
    device, name : str

    Examples
    --------
    >>> cfg = TransferConfig.preset("paper")
    >>> cfg.steps_of("A0"), cfg.steps_of("M1"), cfg.width
    (400, 240, 128)
    >>> TransferConfig(task="induction").adaptation
    (1500, 500, 500)
    >>> TransferConfig(target="ATAP")
    Traceback (most recent call last):
        ...
    ValueError: target must be one of 'DMTN', 'DMAP', got 'ATAP'
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide the width, got d_model={d_model} and n_heads={n_heads}"
    CHECKS: ClassVar[dict[str, Check]] = {
        "seed": TRAINING_CHECKS["seed"],
        "task": _check_choice_of(TRANSFER_TASKS),
        "target": _check_choice_of(("DMTN", "DMAP")),
        "pretrain_steps": lambda c, n, v: v is None or integer_check(1)(c, n, v),
        "pretrained": _check_pretrained,
        "adapt_steps": lambda c, n, v: v is None or _check_adapt_steps(c, n, v),
        "d_model": lambda c, n, v: v is None or integer_check(1)(c, n, v),
        "n_heads": lambda c, n, v: _check_heads(c, n, v),
        "n_layers": lambda c, n, v: v is None or integer_check(1)(c, n, v),
        "batch": TRAINING_CHECKS["batch"],
        "lr": lambda c, n, v: v is None or TRAINING_CHECKS["lr"](c, n, v),
        "warmup": integer_check(0),
        "weight_decay": TRAINING_CHECKS["weight_decay"],
        "grad_clip": range_check(0.0, low_inclusive=False),
        "log_every": TRAINING_CHECKS["log_every"],
        "context": even_context_check,
        "eval_bytes": integer_check(1),
        "held_out_every": integer_check(2),
        "vocab_size": integer_check(2),
        "half_length": integer_check(2),
        "min_period": _check_min_period,
        "eval_batch": integer_check(1),
        "device": device_check,
        "name": name_check,
    }

    seed: int = 0
    task: str = "shakespeare"
    target: str = "DMTN"
    pretrain_steps: int | None = None
    pretrained: str | None = None
    adapt_steps: tuple | None = None
    d_model: int | None = None
    n_heads: int = 4
    n_layers: int | None = None
    batch: int = 32
    lr: float | None = None
    warmup: int = 40
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    log_every: int = 50
    context: int = 128
    eval_bytes: int = 65536
    held_out_every: int = 10
    vocab_size: int = 64
    half_length: int = 32
    min_period: int = 8
    eval_batch: int = 64
    device: str = "cpu"
    name: str = "custom"

    # -- the task's defaults for the fields left None ------------------------------------------------------
    @property
    def width(self) -> int:
        """``d_model``, or the task's width."""
        return self.d_model or (128 if self.task == "shakespeare" else 64)

    @property
    def depth(self) -> int:
        """``n_layers``, or the task's depth."""
        return self.n_layers or (4 if self.task == "shakespeare" else 2)

    @property
    def adaptation(self) -> tuple[int, int, int]:
        """``adapt_steps``, or the task's 3 : 1 : 1 budget."""
        return self.adapt_steps or ((240, 80, 80) if self.task == "shakespeare" else (1500, 500, 500))

    @property
    def peak_lr(self) -> float:
        """``lr``, or the task's learning rate (3e-3 shakespeare, 1e-3 induction)."""
        return self.lr or (3e-3 if self.task == "shakespeare" else 1e-3)

    def steps_of(self, stage: str) -> int:
        """Training steps of a stage: ``pretrain_steps`` for A0, else its share of the adaptation."""
        if stage == "A0":
            return self.pretrain_steps or (400 if self.task == "shakespeare" else 4000)
        return self.adaptation[STAGES.index(stage) - 1]

    def corner(self, stage: str) -> str:
        """The operator of a stage: ATTN for the A stages, the target for the M stages."""
        return "ATTN" if stage.startswith("A") else self.target


def _check_heads(config, name, value) -> None:
    integer_check(1)(config, name, value)
    if config.width % value:
        raise ValueError(config.HEADS_MESSAGE.format(d_model=config.width, n_heads=value))


# ---- the two tasks ----------------------------------------------------------------------------------------


def _settings(config: TransferConfig) -> SimpleNamespace:
    """The language-model training settings a stage reads (what ``train_bytes`` takes from a config)."""
    return SimpleNamespace(
        seed=config.seed,
        context=config.context,
        d_model=config.width,
        n_heads=config.n_heads,
        n_layers=config.depth,
        batch=config.batch,
        lr=config.peak_lr,
        weight_decay=config.weight_decay,
        grad_clip=config.grad_clip,
        log_every=config.log_every,
        device=config.device,
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
            seed=config.seed,
            vocab_size=config.vocab_size,
            half_length=config.half_length,
            d_model=config.width,
            n_heads=config.n_heads,
            n_layers=config.depth,
            batch=config.batch,
            lr=config.peak_lr,
            weight_decay=config.weight_decay,
            grad_clip=config.grad_clip,
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

            save_json(log.path / "results.json", result)
            save_text(log.path / "table.md", transfer_table(result) + "\n")
            result["out"] = str(log.path)
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
