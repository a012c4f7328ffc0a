r"""Settings of the SiT transfer experiment, and the numbers of Attention Geometry §10 it is read beside.

The experiment (:func:`workbench.experiments.run_sit_transfer`) trains the Swiss SiT with ATTN attention, moves
it into DMTN and DMAP by changing the operator of its heads with the weights kept (no training), and adapts the
moved model; :class:`SitTransferConfig` holds every setting and :data:`PAPER_SECTION10` the paper's results for
the same three steps on ImageNet.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §10, Figures 4 and 5 [SEED]; book/reference.md §A.7 "The four
parameterisations" (the substitution) [CODE], §A.11 (the Swiss SiT protocol) [RECON], §A.12 (the §10 numbers)
[SEED + CODE].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.experiments.common import Check, integer_check
from workbench.experiments.swiss_sit import SWISS_SIT_ORDERS, SwissSiTConfig
from workbench.validation import check_choice

__all__ = ["PAPER_SECTION10", "SIT_TRANSFER_TARGETS", "SitTransferConfig"]

#: The operators a pretrained ATTN model is moved into, in the order the paper moves it (DMTN, then DMAP).
SIT_TRANSFER_TARGETS = ("DMTN", "DMAP")

#: Attention Geometry §10 on ImageNet 256 (SiT-XL/2; FID-50k, classifier-free guidance 1.5, 50 Euler steps; "±"
#: a bootstrap 95% half-width), transcribed from book/reference.md §A.12 [SEED + CODE]; keyed by
#: ``(target, state)`` as the rows of :func:`workbench.experiments.run_sit_transfer`.  The projected states have
#: no FID: the paper shows their samples, unusable before adaptation (Figures 4 and 5, left) [SEED].
PAPER_SECTION10: dict[tuple[str, str], dict[str, Any]] = {
    ("ATTN", "pretrained"): {"fid": 2.7650, "half_width": 0.1199, "note": "SiT-XL/2, unmodified"},
    ("DMTN", "projected"): {"note": "substituted, no training: unusable samples (Figure 4, left)"},
    ("DMTN", "adapted"): {"fid": 2.9341, "half_width": 0.1111, "adapt_steps": 40_000, "note": "adapted 40k steps"},
    ("DMAP", "projected"): {"note": "folded from the adapted DMTN: unusable samples (Figure 5, left)"},
    ("DMAP", "adapted"): {
        "fid": 8.1210,
        "half_width": 0.1914,
        "adapt_steps": 80_000,
        "note": "adapted 80k more steps, with half the query–key weights",
    },
}

_PRESETS: dict[str, dict[str, Any]] = {
    # The Swiss SiT quick preset, with short adaptations and a small held-out batch: seconds on one core.
    "quick": {**SwissSiTConfig.PRESETS["quick"], "adapt_steps": 60, "heldout_contexts": 8},
    "paper": {},
}


def _check_order(config, name: str, value) -> None:
    check_choice(name, value, SWISS_SIT_ORDERS)


def _check_dmap_from(config, name: str, value) -> None:
    check_choice(name, value, ("DMTN", "ATTN"))


@dataclass(frozen=True)
class SitTransferConfig(SwissSiTConfig):
    r"""Settings of the SiT transfer experiment; the defaults are the ``"paper"`` preset.

    The first sixteen fields are those of :class:`~workbench.experiments.swiss_sit.SwissSiTConfig`, inherited (the
    pretraining, sampling and
    diagnostics of the Swiss SiT, with its defaults), so the pretrained ATTN model is the Swiss SiT's ATTN
    condition of the same settings.  The others set the transfer.

    Parameters
    ----------
    n_train, seed, noise, context, d_model, n_heads, ffn_mult, steps, batch, lr, weight_decay, ema, euler_steps,
    n_generate, diagnostic_times, log_every
        As in :class:`~workbench.experiments.swiss_sit.SwissSiTConfig`; ``steps`` is the pretraining budget, and
        ``lr``, ``weight_decay``, ``ema``
        and ``batch`` also hold for the adaptations (as the paper adapted with AdamW at constant learning rate).
    order : {'mhsa-ffn', 'ffn-mhsa'}
        Block order of the model; SiT's own blocks run attention first (MHSA→FFN).
    adapt_steps : int
        AdamW steps adapting the DMTN model after its projection.  The EMA starts at the projected weights, which
        keep a weight :math:`\text{ema}^{\text{steps}}` in it (:math:`0.998^{1000} \approx 0.14` for DMTN,
        :math:`0.998^{2000} \approx 0.02` for DMAP in the paper preset).
    dmap_adapt_factor : int
        The DMAP model adapts for ``dmap_adapt_factor * adapt_steps`` steps (the paper: 80k against 40k, so 2).
    dmap_from : {'DMTN', 'ATTN'}
        What the DMAP model is folded from: ``"DMTN"``, the adapted DMTN model (the paper's route: ATTN → DMTN
        → DMAP), or ``"ATTN"``, the pretrained model directly.
    heldout_contexts : int
        Contexts of the held-out batch on which every state's flow-matching loss is measured.

    References
    ----------
    Attention Geometry §10 [SEED: the route, the 1 : 2 adaptation budgets]; book/reference.md §A.11 [RECON: the
    Swiss SiT protocol], §A.12 [CODE: AdamW, constant learning rate].

    Examples
    --------
    ``preset("quick")`` runs the pretraining and both transfers in seconds; ``preset("paper")`` in about two and
    a half minutes on one CPU core (3000 pretraining and 1000 + 2000 adaptation steps, five sampled states):

    >>> cfg = SitTransferConfig.preset("quick")
    >>> cfg.order, cfg.adapt_steps * cfg.dmap_adapt_factor, cfg.preset_name()
    ('mhsa-ffn', 120, 'quick')
    >>> SitTransferConfig(dmap_from="DMAP")
    Traceback (most recent call last):
        ...
    ValueError: dmap_from must be one of 'DMTN', 'ATTN', got 'DMAP'
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = _PRESETS
    CHECKS: ClassVar[dict[str, Check]] = {
        **SwissSiTConfig.CHECKS,
        "order": _check_order,
        "adapt_steps": integer_check(1),
        "dmap_adapt_factor": integer_check(1),
        "dmap_from": _check_dmap_from,
        "heldout_contexts": integer_check(1),
    }

    order: str = "mhsa-ffn"
    adapt_steps: int = 1000
    dmap_adapt_factor: int = 2
    dmap_from: str = "DMTN"
    heldout_contexts: int = 64

    def adapt_budget(self, target: str) -> int:
        """AdamW steps of the adaptation of ``target`` (``"DMTN"`` or ``"DMAP"``)."""
        check_choice("target", target, SIT_TRANSFER_TARGETS)
        return self.adapt_steps * (self.dmap_adapt_factor if target == "DMAP" else 1)
