r"""GivensFlowMixer as a drop-in token mixer: training stability and loss without LayerNorm in that branch.

The object is a small bidirectional transformer whose token-mixing branch is one of four maps, with the
same pre-LN GELU MLP branch after it (:class:`MaskedByteTransformer`):

.. math::

    h^{(0)} = E[t] + P_{\mathrm{pos}}, \qquad
    h \leftarrow h + B(h), \qquad h \leftarrow h + \mathrm{MLP}(\mathrm{LN}\,h), \qquad
    \mathrm{logits} = \mathrm{LN}(h^{(L)})\,W_U + b_U,

    B(h) = \begin{cases}
        W_g\,h_g & \text{givens: } W_g = \prod_k G(i_k, j_k, \theta_{g,k}) \in SO(n), \text{ no normaliser} \\
        W_g\,(\mathrm{LN}\,h)_g & \text{givens-ln: the same mixer behind a LayerNorm} \\
        \mathrm{MHSA}(\mathrm{LN}\,h) & \text{attention: bidirectional softmax attention} \\
        A_g\,h_g & \text{linear: } A_g \in \mathbb{R}^{n\times n} \text{ unconstrained, no normaliser}
    \end{cases}

where :math:`h_g \in \mathbb{R}^{n \times d/H}` is the :math:`g`-th of :math:`H` contiguous feature groups (one
per attention head: every condition has :math:`H` token-mixing matrices per layer) and
:math:`W_g` is a :class:`workbench.nn.GivensFlowMixer` with ``mix="tokens"`` (a full brick wall of
:math:`n(n-1)/2` planes, so every :math:`W_g \in SO(n)` is reachable).  Because :math:`W_g` is orthogonal,
:math:`\lVert W_g x\rVert = \lVert x\rVert` for every feature column :math:`x`: the branch can neither blow up
nor shrink the residual stream, which is why the roadmap expects it to tolerate larger learning rates, fewer
normalisers and shorter warm-ups.  The linear condition starts from exactly the givens condition's initial
matrices (:math:`A_g = W_g` at step 0): the two models are the same function at initialisation and differ only
in whether training keeps the matrices orthogonal.  By default both start at the identity (all angles 0,
``mixer_init="identity"``); ``"uniform"`` starts them at the library's uniform angles, a random rotation of the
positions.  Around the identity a brick wall is a locality prior: all its planes are neighbours
:math:`(i, i+1)`, each repeated about :math:`n/2` times, so the first gradient steps move only nearest-neighbour
mixing, about :math:`n/2` times faster than the same learning rate moves one entry of :math:`A_g`.

**An orthogonal token mixer cannot be causal**, so the task is masked, not next-byte, modelling.  *Lemma*: a
lower-triangular orthogonal :math:`Q` is diagonal with entries :math:`\pm 1`.  *Proof*: :math:`Q^\top = Q^{-1}`
is lower triangular (the inverse of an invertible lower-triangular matrix is) and upper triangular (the
transpose of a lower-triangular one), hence diagonal; then :math:`Q^\top Q = I` gives :math:`q_{ii}^2 = 1`.
:math:`\square` A causal orthogonal mixer would only flip signs of positions and move no information between
tokens.  So each training window of :math:`n` bytes of the Shakespeare corpus
(:func:`~workbench.experiments.common.shakespeare_bytes`) has a
fixed number :math:`k = \mathrm{round}(f n)` of positions (chosen uniformly; :math:`f` = ``mask_fraction``,
15 %) replaced by the id ``MASK_ID = 256`` (input vocabulary 257, output 256), and the model predicts the bytes
there from both sides.  The score is the **held-out masked bits per byte** on a fixed set :math:`\mathcal H` of
held-out windows and masks (:func:`masked_eval_set`, the same for every condition at one seed),

.. math::

    \mathrm{bpb} = \frac{1}{|\mathcal M| \ln 2} \sum_{(w, i) \in \mathcal M} -\ln p_\theta(x_{w,i} \mid
    \tilde x_w), \qquad \mathcal M = \{(w, i) : \text{position } i \text{ of window } w \text{ masked}\},

:math:`\log_2` of the masked-byte perplexity (:func:`masked_bpb`; a uniform prediction scores 8 exactly).

**Stability** is read over a grid of peak learning rates (and, optionally, warm-up lengths): per (condition,
learning rate, warm-up) the final held-out bpb; ``diverged`` (training stopped on a non-finite loss, gradient
or activation, or the mean training loss of the last ``spike_window`` steps is above the loss at step 0); the
number of loss spikes (:func:`count_spikes`: steps whose loss exceeds ``spike_factor`` × the median of the
``spike_window`` steps before); the largest and median gradient norm before clipping; and the curves.
Matched budget, paired by seed: every run at one seed reads the same training stream (:func:`training_stream`,
drawn once from ``numpy.random.default_rng([seed, 0])``), starts from the same embeddings, MLPs and read-out
(``torch.manual_seed(seed)``; the token-mixing branches are drawn after them), and is scored on the same held-out
windows and masks (``default_rng([seed, 1])``).  Optimisation: AdamW (betas 0.9, 0.95), linear warm-up then
cosine decay to a tenth of the peak, gradient-norm clipping.  The trained givens mixers are checked to be
orthogonal (:math:`\max\lvert W^\top W - I\rvert` and the column-norm defect, float64).  At the paper preset's
budget (400 steps of 64 windows: ~128 k masked bytes seen) the bpb compares how fast each branch learns, not
converged perplexities; the stability columns are what the roadmap's prediction is about.

References
----------
Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" and "Training stability & speed" [SEED]
(the prediction and the minimal experiment); G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed.,
§5.1.8 (Givens rotations) and §3.1 (inverses of triangular matrices); Devlin et al. (2019), "BERT", §3.1
(masked language modelling); Tolstikhin et al. (2021), "MLP-Mixer" (a learned token-mixing matrix shared across
channels); Vaswani et al. (2017) (multi-head attention).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from workbench.experiments.common import RunLog, Schedule, jsonable, shakespeare_bytes, train
from workbench.experiments.givens_mixer._config import GivensMixerConfig, masked_count
from workbench.experiments.givens_mixer._model import (
    MaskedBytes,
    MaskedByteTransformer,
    count_spikes,
    masked_bpb,
    masked_eval_set,
    training_stream,
)
from workbench.nn import GivensFlowMixer

__all__ = ["run_givens_mixer"]


# ---- training -------------------------------------------------------------------------------------------------


def _digest(arrays) -> str:
    """SHA-256 of the bytes of a sequence of arrays or tensors (a fingerprint: equal data, equal digest)."""
    h = hashlib.sha256()
    for a in arrays:
        a = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _orthogonality(mixers: list[GivensFlowMixer], n: int) -> tuple[float | None, float | None]:
    r""":math:`\max\lvert W^\top W - I\rvert` and the largest relative column-norm change, in float64."""
    if not mixers:
        return None, None
    eye = torch.eye(n, dtype=torch.float64)
    x = torch.randn(n, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    defect = norm = 0.0
    with torch.no_grad():
        for m in mixers:
            W = m(eye.to(m.angles.device)).cpu()  # token mixing of the identity: W I = W
            defect = max(defect, float((W.T @ W - eye).abs().max()))
            y = m(x.to(m.angles.device)).cpu()
            norm = max(norm, float(((y.norm(dim=0) - x.norm(dim=0)).abs() / x.norm(dim=0)).max()))
    return defect, norm


def _train(model, stream: MaskedBytes, held_curve: MaskedBytes, config, lr: float, warmup: int, label, progress):
    """The shared loop over the stream, guarded; per-step loss and gradient norm, the curve, why it stopped."""
    device = next(model.parameters()).device

    def loss_at(step: int) -> torch.Tensor:
        inputs, targets, mask = (torch.from_numpy(getattr(stream, f)[step]).to(device) for f in MaskedBytes.FIELDS)
        return F.cross_entropy(model(inputs)[mask], targets[mask])

    schedule = Schedule(
        config.steps, lr, config.weight_decay, config.grad_clip, config.log_every, warmup, betas=(0.9, 0.95)
    )
    run = train(
        model,
        schedule,
        loss_at,
        evaluate=lambda done: {"held_out_bpb": masked_bpb(model, held_curve)["bpb"]},
        label=label,
        progress=progress,
        guard=True,
    )
    curve = {
        "train_loss": run.losses,
        "grad_norm": run.grad_norms,
        "steps": run.curve["steps"],
        "held_out_bpb": run.curve.get("held_out_bpb", []),
    }
    return {"curve": curve, "stop": run.stop, "seconds": run.seconds, "updates": run.updates}


def _score(model, trained: dict, held: MaskedBytes, config, condition: str, lr: float, warmup: int) -> dict:
    losses, norms = trained["curve"]["train_loss"], trained["curve"]["grad_norm"]
    k = config.spike_window
    final = float(np.mean(losses[-k:])) if losses else math.nan
    scored = {"bpb": math.nan, "nats_per_byte": math.nan}
    if trained["stop"] is None:
        try:
            scored = masked_bpb(model, held)
        except FloatingPointError as exc:
            trained["stop"] = f"held-out scoring: {exc}"
    defect, norm = _orthogonality(model.givens_mixers(), config.context)
    finite = [v for v in norms if math.isfinite(v)]
    return {
        "condition": condition,
        "lr": lr,
        "warmup": warmup,
        "bpb": scored["bpb"],
        "nats_per_byte": scored["nats_per_byte"],
        "diverged": trained["stop"] is not None or not final <= losses[0],
        "stop_reason": trained["stop"],
        "updates": trained["updates"],
        "initial_loss": losses[0] if losses else math.nan,
        "final_loss": final,
        "spikes": count_spikes(losses, k, config.spike_factor),
        "grad_norm_max": max(finite) if finite else math.nan,
        "grad_norm_median": float(np.median(finite)) if finite else math.nan,
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "mixing_parameters": int(sum(p.numel() for p in model.mixing.parameters())),
        "seconds": trained["seconds"],
        "seconds_per_step": trained["seconds"] / max(1, trained["updates"]),
        "orthogonality_defect": defect,
        "norm_defect": norm,
        "curve": trained["curve"],
    }


def condition_name(condition: str, lr: float, warmup: int) -> str:
    """The run-directory name of one (condition, learning rate, warm-up): ``givens-lr0.003-warmup0``."""
    return f"{condition}-lr{lr:g}-warmup{warmup}"


# ---- the experiment ---------------------------------------------------------------------------------------------

#: Orthogonality of a trained Givens mixer, float64: n stages of rotations leave ~n × 1e-16; 1e-12 is the check.
ORTHOGONALITY_TOLERANCE = 1e-12
#: The figures a run directory holds.
FIGURES = ("lr_sweep.png", "curves.png")


def run_givens_mixer(
    config: GivensMixerConfig | None = None,
    *,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Train every (condition, learning rate, warm-up) of ``config`` on masked bytes; stability and held-out bpb.

    The training loss is the masked-byte cross-entropy of a batch,
    :math:`\mathcal L = -\frac{1}{|\mathcal M_b|}\sum_{(w,i)\in\mathcal M_b}\ln p_\theta(x_{w,i}\mid\tilde x_w)`.
    Each run is one condition of the run directory (resumable); see the module docstring for the measurements.

    Parameters
    ----------
    config : GivensMixerConfig, optional
        Defaults to the paper preset.
    out : path, optional
        Run directory: ``run.json``, ``config.json``, per run ``<condition>-lr<lr>-warmup<w>.pt`` and ``.json``,
        then ``results.json``, ``table.md``, ``lr_sweep.png`` and ``curves.png``.
    progress, force, resume : bool
        A progress bar; reuse a non-empty ``out``; continue an unfinished run in ``out``.

    Returns
    -------
    dict
        JSON-able ``{"experiment": "givens-mixer", "config", "data", "runs": [row], "checks"}``; a row holds
        ``condition, lr, warmup, bpb, diverged, stop_reason, spikes, grad_norm_max, grad_norm_median,
        initial_loss, final_loss, orthogonality_defect, norm_defect, seconds_per_step, curve`` and the
        fingerprints of its shared initial weights and of the data it read.  ``checks``: the trained givens
        mixers are orthogonal and norm-preserving (float64, to ``ORTHOGONALITY_TOLERANCE``), every run started
        from the same shared weights and read the same training stream and held-out masks, every run that did
        not diverge has a finite bpb.

    References
    ----------
    Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" and "Training stability & speed"
    [SEED].

    Examples
    --------
    >>> cfg = GivensMixerConfig.preset("quick", conditions=("givens", "linear"), lrs=(0.01,), warmups=(0,), steps=3,
    ...                                 spike_window=2, log_every=3)
    >>> result = run_givens_mixer(cfg, progress=False)
    >>> [(r["condition"], 0.0 < r["bpb"] < 9.0) for r in result["runs"]], result["checks"]["all"]
    ([('givens', True), ('linear', True)], True)
    """
    if config is None:
        config = GivensMixerConfig.preset("paper")
    if not isinstance(config, GivensMixerConfig):
        raise TypeError(f"config must be a GivensMixerConfig, got {type(config).__name__}")
    corpus = shakespeare_bytes(config.held_out_every)
    held = masked_eval_set(corpus, config.eval_windows, config.context, config.mask_fraction, config.seed)
    eighth = max(1, config.eval_windows // 8)
    held_curve = MaskedBytes(*(getattr(held, f)[:eighth] for f in MaskedBytes.FIELDS))
    plan = [(c, lr, w) for w in config.warmups for c in config.conditions for lr in config.lrs]
    names = [condition_name(*p) for p in plan]
    log = RunLog.open(
        out,
        experiment="givens-mixer",
        config=dataclasses.asdict(config),
        conditions=names,
        selection={},
        artefacts=frozenset({"results.json", "table.md", *FIGURES} | {n + s for n in names for s in (".pt", ".json")}),
        force=force,
        resume=resume,
    )
    stream = stream_digest = None
    held_digest = _digest(getattr(held, f) for f in MaskedBytes.FIELDS)
    with log:
        runs = []
        for (condition, lr, warmup), name in zip(plan, names, strict=True):
            row = log.finished(name)
            if row is None:
                if stream is None:
                    stream = training_stream(
                        corpus, config.steps, config.batch, config.context, config.mask_fraction, config.seed
                    )
                    stream_digest = _digest(getattr(stream, f) for f in MaskedBytes.FIELDS)
                torch.manual_seed(config.seed)
                model = MaskedByteTransformer(
                    condition, config.context, config.d_model, config.n_heads, config.n_layers, config.mixer_init
                )
                model = model.to(config.device)
                init_digest = _digest(model.shared_parameters().values())
                trained = _train(model, stream, held_curve, config, lr, warmup, f"givens-mixer {name}", progress)
                row = _score(model, trained, held, config, condition, lr, warmup)
                row.update(init_digest=init_digest, stream_digest=stream_digest, held_digest=held_digest)
                log.keep(name, jsonable(row), model.state_dict())
            runs.append(row)
        result = jsonable(
            {
                "experiment": "givens-mixer",
                "config": dataclasses.asdict(config),
                "data": {
                    "train_bytes": len(corpus.train),
                    "held_out_bytes": len(corpus.held_out),
                    "held_out_works": list(corpus.held_out_works),
                    "masked_per_window": masked_count(config.context, config.mask_fraction),
                    "held_out_masked_bytes": int(held.mask.sum()),
                },
                "runs": runs,
                "checks": _checks(runs),
            }
        )
        if log.path is not None:
            from workbench.experiments.givens_mixer._report import givens_mixer_table, save_figures

            log.write_results(result, givens_mixer_table(result))
            save_figures(result, log.path)
    return result


def _checks(runs: list[dict]) -> dict[str, Any]:
    givens = [r for r in runs if r["orthogonality_defect"] is not None]
    checks = {
        # Structural: a product of plane rotations is orthogonal for any angles, trained or not.
        "givens_orthogonal": all(r["orthogonality_defect"] < ORTHOGONALITY_TOLERANCE for r in givens)
        if givens
        else None,
        "givens_norm_preserving": all(r["norm_defect"] < ORTHOGONALITY_TOLERANCE for r in givens) if givens else None,
        # Matched budget: one seed, one set of shared initial weights, one training stream, one held-out set.
        "same_shared_initial_weights": len({r["init_digest"] for r in runs}) == 1,
        "same_training_stream": len({r["stream_digest"] for r in runs}) == 1,
        "same_held_out_masks": len({r["held_digest"] for r in runs}) == 1,
        "bpb_finite_unless_stopped": all(
            r["stop_reason"] is not None or (isinstance(r["bpb"], float) and math.isfinite(r["bpb"])) for r in runs
        ),
    }
    checks["all"] = all(v for v in checks.values() if v is not None)
    return checks
