r"""The SiT transfer: a trained ATTN flow transformer moved into DMTN and DMAP without training, then adapted.

Attention Geometry §10 takes the pretrained diffusion transformer SiT-XL/2 (ATTN attention), substitutes the DMTN
form of every head with the weights unchanged (the samples become unusable), adapts it with AdamW (FID 2.93
against 2.77 for the untouched model), then folds it onto the distance form DMAP, which reads only half of the
query–key weights (unusable again, and FID 8.12 after twice as long an adaptation).  This module runs the same
route at workbench scale, on the Swiss SiT of §9 (:func:`workbench.experiments.run_swiss_sit`):

1. **Pretrain.**  The Swiss SiT with ATTN heads, trained from the seed exactly as the Swiss SiT scan trains its
   ATTN condition; its EMA model is the state ``ATTN pretrained``.
2. **Project.**  :func:`project_model`: the same weights read at the target's corner of the operator family,
   :math:`\ell^{\mathrm{op}}(XW_Q, XW_K)` (:func:`workbench.attention.project_head`).  For DMTN this is
   Attention Geometry's substitution :math:`\mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top`; for DMAP the
   logits :math:`-\tfrac\beta4\lVert m_i - m_j\rVert^2` read :math:`W_M = (W_Q + W_K)/\sqrt2` alone.  DMTN is
   projected from the pretrained model; DMAP from the adapted DMTN model (the paper's route,
   ``dmap_from="DMTN"``) or from the pretrained model (``dmap_from="ATTN"``).  State ``projected``.
3. **Adapt.**  AdamW and an EMA of the weights from the projected weights, with the loss of the pretraining
   (:func:`workbench.experiments.swiss_sit.train_flow`), for ``adapt_steps`` steps (DMTN) or
   ``dmap_adapt_factor * adapt_steps`` (DMAP; the paper's 80k against 40k).  State ``adapted``.

Every state is sampled with the same noise (float64 Euler steps) and read with the Swiss SiT diagnostics
(:math:`d_{\mathrm{NN}}` and its ratio to the native spacing, :math:`e^{\bar H}`, :math:`\varepsilon_{\mathrm{rev}}`,
:math:`\rho_{\mathrm{skew}}`), and its flow-matching loss is measured on one fixed held-out batch: fresh points of
the same roll (a separate draw, standardised by its own mean and scale), fixed noise and the stratified times
:math:`\tau_b = (b + \tfrac12)/B`, the same batch for every state, so that "unusable" and "repaired" are read as
one number on one scale.  FID on ImageNet and :math:`d_{\mathrm{NN}}` on a 2-D Swiss roll are different
measurements of different models: the comparison with the paper is of direction, not of value.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §10, Figures 4 and 5 [SEED]; book/reference.md §A.7 "The four
parameterisations" [CODE] (the substitution and the DMAP corollary), §A.10 (diagnostics) [RECON], §A.11 (the
Swiss SiT protocol) [SEED + RECON], §A.12 (the §10 numbers and the adaptation's optimiser) [SEED + CODE].
"""

from __future__ import annotations

import copy
import dataclasses
import time
from pathlib import Path

import numpy as np
import torch

from workbench.attention import OPERATORS, native_spacing, parameter_count
from workbench.experiments.common import RunLog, jsonable
from workbench.experiments.common import progress as _progress_bar
from workbench.experiments.sit_transfer._config import PAPER_SECTION10, SIT_TRANSFER_TARGETS, SitTransferConfig
from workbench.experiments.sit_transfer._report import save_figure, sit_transfer_table
from workbench.experiments.swiss_sit import (
    EPS_REV_TOLERANCE,
    SwissSiT,
    diagnose,
    diagnostic_checks,
    sample,
    swiss_roll_points,
    train_condition,
    train_flow,
)
from workbench.nn import OperatorAttention, project_attention
from workbench.validation import check_choice

__all__ = ["project_model", "run_sit_transfer"]

#: The states of the route, in order; the pretrained ATTN model is the one ``pretrained`` row (target ATTN).
STATES = ("pretrained", "projected", "adapted")

#: Every file a SiT transfer run can write into its run directory (``force`` removes these, and only these).
ARTEFACTS = frozenset(
    {"results.json", "table.md", "transfer.png"}
    | {f"{name}{suffix}" for name in ("ATTN", *SIT_TRANSFER_TARGETS) for suffix in (".pt", ".json")}
)

#: Seed offsets of the random streams, from ``config.seed``: the pretraining uses the seed itself (as the Swiss SiT
#: scan), the sampling noise ``seed + 1`` (as the Swiss SiT scan; the same noise for every state), the batches of
#: both adaptations ``seed + 2`` (the same batches: only the operator and the budget differ) and the held-out batch
#: ``seed + 3``.
SAMPLING_OFFSET, ADAPT_OFFSET, HELDOUT_OFFSET = 1, 2, 3


def project_model(model: torch.nn.Module, operator: str) -> torch.nn.Module:
    r"""A copy of ``model`` whose every attention head is read at the corner ``operator``; the weights unchanged.

    Every :class:`workbench.nn.OperatorAttention` layer of the deep copy takes the operator ``operator``
    (:func:`workbench.nn.project_attention`, which projects a model in place), so head :math:`h` has the logits

    .. math::

        \ell^{\mathrm{op}}_{ij} = \ell_{ij}(b, a) \text{ at } (b, a) = \mathtt{CORNERS[op]}, \quad
        q = XW_Q^{(h)},\ k = XW_K^{(h)},

    the logits of :func:`workbench.attention.project_head` ``(W_Q, W_K, operator)``: the weight-preserving
    projection onto a corner of the operator family, before any re-adaptation.  ATTN → DMTN drops the negative
    bond sector, :math:`\mathcal W^{\mathrm{DMTN}} = M + \tfrac12W_NW_N^\top`; any model → DMAP keeps only
    :math:`W_M = (W_Q + W_K)/\sqrt2` in the logits.  A string ``operator`` attribute of ``model`` itself (the label
    :class:`workbench.experiments.SwissSiT` and :class:`workbench.experiments.InductionTransformer` carry) is
    switched too.  ``model`` is left as it is; the copy's parameters, buffers and ``requires_grad`` flags are
    equal to ``model``'s bit for bit.

    Parameters
    ----------
    model : torch.nn.Module
        A model holding at least one :class:`workbench.nn.OperatorAttention` layer.
    operator : {'DMAP', 'DMTN', 'ATAP', 'ATTN'}

    Returns
    -------
    torch.nn.Module
        The projected copy.

    Raises
    ------
    TypeError
        ``model`` is not a ``torch.nn.Module``.
    ValueError
        ``operator`` is not one of the four, or ``model`` holds no ``OperatorAttention`` layer.

    References
    ----------
    Attention Geometry §10 (the substitution into a pretrained SiT-XL/2) [SEED]; book/reference.md §A.7 "The four
    parameterisations" [CODE].

    Examples
    --------
    The projected layer's operator is the dense :func:`~workbench.attention.project_head` operator on the layer's
    own :math:`W_Q, W_K` (float64; agreement to rounding):

    >>> import numpy as np, torch
    >>> from workbench.attention import project_head
    >>> from workbench.experiments import SwissSiT
    >>> _ = torch.manual_seed(0)
    >>> attn = SwissSiT("ATTN", "mhsa-ffn", d_model=8, n_heads=2).double()
    >>> dmap = project_model(attn, "DMAP")
    >>> dmap.operator, dmap.attn.operator, attn.attn.operator
    ('DMAP', 'DMAP', 'ATTN')
    >>> all(torch.equal(a, b) for a, b in zip(attn.state_dict().values(), dmap.state_dict().values()))
    True
    >>> X = torch.randn(1, 5, 8, dtype=torch.float64)
    >>> P = dmap.attn.attention(X)[0, 1].detach().numpy()  # head 1
    >>> W_Q, W_K = dmap.attn.head_weights()[1]
    >>> bool(np.abs(P - project_head(W_Q, W_K, "DMAP").operator(X[0].numpy())).max() < 1e-12)
    True
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module holding OperatorAttention layers, got {type(model).__name__}")
    operator = check_choice("operator", operator, OPERATORS)
    if not any(isinstance(m, OperatorAttention) for m in model.modules()):
        raise ValueError(
            f"model must hold at least one OperatorAttention layer, got a {type(model).__name__} with none"
        )
    projected = copy.deepcopy(model)
    project_attention(projected, operator)  # each layer's logits read CORNERS[layer.operator]: nothing else changes
    if isinstance(getattr(projected, "operator", None), str):
        projected.operator = operator
    return projected


def _same_bits(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    """Whether the state dicts of ``a`` and ``b`` hold the same names, dtypes, shapes and bytes."""
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(
        sa[k].dtype == sb[k].dtype
        and sa[k].shape == sb[k].shape
        and sa[k].cpu().numpy().tobytes() == sb[k].cpu().numpy().tobytes()
        for k in sa
    )


def _qk_parameters(model: torch.nn.Module) -> int:
    """Query–key weights the model's logits read: per head :func:`workbench.attention.parameter_count`."""
    return sum(
        m.n_heads * parameter_count(m.operator, m.query.in_features, m.d_head)
        for m in model.modules()
        if isinstance(m, OperatorAttention)
    )


def _heldout_batch(config: SitTransferConfig) -> dict[str, torch.Tensor]:
    """The fixed held-out batch (float64): fresh roll points, noise and stratified times (see the module)."""
    n = config.heldout_contexts * config.context
    points = swiss_roll_points(n, config.seed + HELDOUT_OFFSET, config.noise)  # a draw separate from the training set
    x0 = torch.as_tensor(points, dtype=torch.float64).reshape(config.heldout_contexts, config.context, 2)
    gen = torch.Generator().manual_seed(config.seed + HELDOUT_OFFSET)
    eps = torch.randn(x0.shape, generator=gen, dtype=torch.float64)
    tau = (torch.arange(config.heldout_contexts, dtype=torch.float64) + 0.5) / config.heldout_contexts
    return {"x0": x0, "eps": eps, "tau": tau}


@torch.no_grad()
def _heldout_loss(model: SwissSiT, batch: dict[str, torch.Tensor]) -> float:
    r"""Flow-matching loss :math:`\operatorname{mean}\lVert v(x_\tau, \tau) - (\varepsilon - x_0)\rVert^2`, float64."""
    model64 = copy.deepcopy(model).double().eval()
    x0, eps, tau = batch["x0"], batch["eps"], batch["tau"]
    x_tau = (1.0 - tau[:, None, None]) * x0 + tau[:, None, None] * eps
    return float(torch.mean((model64(x_tau, tau) - (eps - x0)) ** 2))


def _state(target, state, model, config, data, steps, train_loss, start) -> tuple[dict, np.ndarray]:
    """Sample and diagnose one state of the route: its row and its samples."""
    train, spacing, heldout = data
    sampled = sample(model, config, (), torch.Generator().manual_seed(config.seed + SAMPLING_OFFSET))
    row = {"target": target, "state": state, **diagnose(model, sampled, train, spacing)}
    row.update(
        heldout_loss=_heldout_loss(model, heldout),
        train_loss=train_loss,
        qk_parameters=_qk_parameters(model),
        steps=steps,
        diagnostic_times_used=sampled["diagnostic_times_used"],
        seconds=time.perf_counter() - start,
    )
    return row, sampled["samples"]


def _tail_mean(losses: list[float]) -> float:
    return float(np.mean(losses[-max(1, len(losses) // 10) :]))


def _empty_model(config: SitTransferConfig, operator: str) -> SwissSiT:
    model = SwissSiT(operator, config.order, config.d_model, config.n_heads, config.ffn_mult)
    return model.requires_grad_(False)


def run_sit_transfer(
    config: SitTransferConfig | None = None,
    *,
    targets=SIT_TRANSFER_TARGETS,
    out: str | Path | None = None,
    progress: bool = True,
    force: bool = False,
    resume: bool = False,
) -> dict:
    r"""Pretrain the ATTN Swiss SiT, move it into each target operator without training, then adapt it.

    Per state (ATTN pretrained; per target, projected and adapted) the samples of its EMA model are read with the
    Swiss SiT diagnostics and the held-out flow-matching loss

    .. math::

        \mathcal L_{\mathrm{held\,out}} = \frac1{B N}\sum_{b,i}\bigl\lVert v_\theta(x_{\tau_b}, \tau_b)_i
        - (\varepsilon_{b,i} - x_{0,b,i})\bigr\rVert^2, \qquad \tau_b = \frac{b + \frac12}{B},

    on one fixed batch (:math:`B` = ``heldout_contexts``), with the query–key weights the state's logits read
    (:func:`workbench.attention.parameter_count`: DMAP half of ATTN's).  The protocol is in the module docstring.

    Parameters
    ----------
    config : SitTransferConfig, optional
        Defaults to the paper preset.
    targets : sequence of str
        Subset of ``("DMTN", "DMAP")``, run in that order.  With ``config.dmap_from == "DMTN"`` (the paper's route)
        DMAP needs DMTN.
    out : path, optional
        Run directory (:class:`workbench.experiments.RunLog`) with the conditions ``ATTN`` (the pretrained EMA
        state dict and row) and one per target (the adapted EMA state dict; the projected and adapted rows),
        then ``results.json``, ``table.md`` and ``transfer.png`` (each target's samples before, after the
        projection and after the adaptation).  An ``out`` that already holds files is refused unless ``force``
        or ``resume``.
    progress : bool
        Show a progress bar per training.
    force : bool
        Reuse a non-empty ``out``: the files a SiT transfer run writes are removed first, other files are kept.
    resume : bool
        Continue the unfinished run in ``out`` (same ``config`` and ``targets``): a finished condition's rows are
        read back and its models rebuilt from the kept state dicts (a projection is a function of its source's
        weights), so the rows equal those of an uninterrupted run except the wall-clock ``seconds``.

    Returns
    -------
    dict
        JSON-able: ``experiment``, ``preset``, ``config``, ``targets``, ``native_spacing``, ``rows`` (one dict per
        state: target, state, d_nn, d_nn_ratio, eff_neighbours, eps_rev, eps_rev_max, rho_skew, heldout_loss,
        train_loss (``None`` when projected), qk_parameters, steps, diagnostic_times_used, seconds; projected rows
        also ``source`` and ``weights_identical``), ``direction`` (per target: the held-out loss and
        :math:`d_{\mathrm{NN}}` ratio of source, projected and adapted state, whether the projection raised and the
        adaptation lowered the loss, and the adapted loss minus the pretrained one), ``paper`` (:data:`PAPER_SECTION10`)
        and ``checks`` (structural facts, each with ``passed`` and the values).

    References
    ----------
    Attention Geometry §10 [SEED]; book/reference.md §A.7 [CODE], §A.10–§A.12.

    Examples
    --------
    >>> cfg = SitTransferConfig.preset("quick", steps=3, adapt_steps=2, n_generate=32, euler_steps=2)
    >>> res = run_sit_transfer(cfg, progress=False)
    >>> [(r["target"], r["state"]) for r in res["rows"]]  # doctest: +NORMALIZE_WHITESPACE
    [('ATTN', 'pretrained'), ('DMTN', 'projected'), ('DMTN', 'adapted'),
     ('DMAP', 'projected'), ('DMAP', 'adapted')]
    >>> all(check["passed"] for check in res["checks"].values())
    True
    >>> [r["qk_parameters"] for r in res["rows"]]  # DMAP reads W_M alone: half of the query–key weights
    [512, 512, 512, 256, 256]
    """
    config = SitTransferConfig() if config is None else config
    if not isinstance(config, SitTransferConfig):
        raise TypeError(f"config must be a SitTransferConfig, got {type(config).__name__}")
    targets = tuple([targets] if isinstance(targets, str) else targets)
    if not targets:
        raise ValueError("targets must be a non-empty sequence of DMTN, DMAP, got ()")
    for target in targets:
        check_choice("targets entry", target, SIT_TRANSFER_TARGETS)
    selection = tuple(dict.fromkeys(targets))  # as given (recorded, and compared on resume)
    targets = tuple(t for t in SIT_TRANSFER_TARGETS if t in targets)  # run in the route's order, each once
    if "DMAP" in targets and config.dmap_from == "DMTN" and "DMTN" not in targets:
        raise ValueError(
            "targets must include DMTN when DMAP is folded from the adapted DMTN model (dmap_from='DMTN', the "
            "paper's route), got ('DMAP',); add DMTN or set dmap_from='ATTN'"
        )

    train = swiss_roll_points(config.n_train, config.seed, config.noise)
    spacing = native_spacing(train)
    data = (train, spacing, _heldout_batch(config))
    train_t = torch.as_tensor(train, dtype=torch.float32)
    log = RunLog.open(
        out,
        experiment="sit-transfer",
        config=dataclasses.asdict(config),
        conditions=["ATTN", *targets],
        selection={"targets": selection},
        artefacts=ARTEFACTS,
        force=force,
        resume=resume,
    )
    with log:
        rows, samples, models = [], {}, {}
        kept = log.finished("ATTN")
        if kept is None:
            start = time.perf_counter()
            with _progress_bar(config.steps, "ATTN pretrain", progress) as bar:
                _, ema, losses = train_condition("ATTN", config.order, config, train_t, bar)
            row, samples["ATTN", "pretrained"] = _state(
                "ATTN", "pretrained", ema, config, data, config.steps, _tail_mean(losses), start
            )
            log.keep("ATTN", {"rows": [row]}, ema.state_dict())
            kept = {"rows": [row]}
        else:  # kept by an earlier session: its EMA weights and the sampling seed give the same samples
            ema = _empty_model(config, "ATTN")
            log.load_state("ATTN", ema)
            samples["ATTN", "pretrained"] = _resample(ema, config)
        rows += kept["rows"]
        models["ATTN"] = ema

        for target in targets:
            source_name = config.dmap_from if target == "DMAP" else "ATTN"
            source = models[source_name]
            projected = project_model(source, target)
            kept = log.finished(target)
            if kept is None:
                start = time.perf_counter()
                row_p, samples[target, "projected"] = _state(
                    target, "projected", projected, config, data, 0, None, start
                )
                row_p.update(source=_source_label(source_name), weights_identical=_same_bits(source, projected))
                start = time.perf_counter()
                steps = config.adapt_budget(target)
                trainable = project_model(source, target).requires_grad_(True)
                with _progress_bar(steps, f"{target} adapt", progress) as bar:
                    _, ema, losses = train_flow(
                        trainable, config, train_t, bar, steps=steps, seed=config.seed + ADAPT_OFFSET
                    )
                row_a, samples[target, "adapted"] = _state(
                    target, "adapted", ema, config, data, steps, _tail_mean(losses), start
                )
                log.keep(target, {"rows": [row_p, row_a]}, ema.state_dict())
                kept = {"rows": [row_p, row_a]}
            else:
                ema = _empty_model(config, target)
                log.load_state(target, ema)
                samples[target, "projected"] = _resample(projected, config)
                samples[target, "adapted"] = _resample(ema, config)
            rows += kept["rows"]
            models[target] = ema

        results = _results(config, targets, spacing, rows)
        if log.path is not None:
            log.write_results(results, sit_transfer_table(results))
            save_figure(log.path / "transfer.png", train, config, targets, rows, samples)
    return jsonable(results)


def _resample(model: SwissSiT, config: SitTransferConfig) -> np.ndarray:
    return sample(model, config, (), torch.Generator().manual_seed(config.seed + SAMPLING_OFFSET))["samples"]


def _source_label(name: str) -> str:
    return "ATTN pretrained" if name == "ATTN" else f"{name} adapted"


def _direction(rows: list[dict], targets: tuple[str, ...], config: SitTransferConfig) -> list[dict]:
    """Per target: held-out loss and d_NN ratio of its source, projection and adaptation.

    With the adapted state's held-out loss minus the pretrained ATTN model's (the paper's FID gaps: DMTN +0.17,
    DMAP +5.36).
    """
    by = {(r["target"], r["state"]): r for r in rows}
    found = []
    for target in targets:
        source = by["ATTN", "pretrained"] if target == "DMTN" or config.dmap_from == "ATTN" else by["DMTN", "adapted"]
        projected, adapted = by[target, "projected"], by[target, "adapted"]
        trio = (source, projected, adapted)
        found.append(
            {
                "target": target,
                "source": projected["source"],
                "heldout_loss": [r["heldout_loss"] for r in trio],
                "d_nn_ratio": [r["d_nn_ratio"] for r in trio],
                "projection_raises_loss": projected["heldout_loss"] > source["heldout_loss"],
                "adaptation_lowers_loss": adapted["heldout_loss"] < projected["heldout_loss"],
                "adapted_minus_pretrained": adapted["heldout_loss"] - by["ATTN", "pretrained"]["heldout_loss"],
            }
        )
    return found


def _checks(rows: list[dict], config: SitTransferConfig) -> dict:
    dmap = [r for r in rows if r["target"] == "DMAP"]
    projected = [r for r in rows if r["state"] == "projected"]
    attn = next(r for r in rows if r["target"] == "ATTN")

    def key(r):
        return f"{r['target']} {r['state']}"

    return {
        "projection_keeps_weights": {
            "passed": all(r["weights_identical"] is True for r in projected),
            "values": {key(r): r["weights_identical"] for r in projected},
            "note": "the projected model's state dict equals its source's, byte for byte",
        },
        **diagnostic_checks(rows, dmap, config.context, key, "dmap"),
        "dmap_half_qk_parameters": {
            "passed": all(2 * r["qk_parameters"] == attn["qk_parameters"] for r in dmap),
            "values": {key(r): r["qk_parameters"] for r in [attn, *dmap]},
        },
    }


def _results(config: SitTransferConfig, targets: tuple[str, ...], spacing: float, rows: list[dict]) -> dict:
    return {
        "experiment": "sit-transfer",
        "preset": config.preset_name(),
        "config": dataclasses.asdict(config),
        "targets": list(targets),
        "native_spacing": spacing,
        "eps_rev_tolerance": EPS_REV_TOLERANCE,
        "rows": rows,
        "direction": _direction(rows, targets, config),
        "paper": [{"target": t, "state": s, **v} for (t, s), v in PAPER_SECTION10.items()],
        "checks": _checks(rows, config),
    }
