"""Reproducible experiments of the seed paper, at workbench scale (torch; CPU or GPU).

swiss-sit   -- Attention Geometry §9, Table 1: a one-layer flow transformer on the Swiss roll under each of
               the four operators and both block orders, read with the attention diagnostics
induction   -- Attention Geometry §11: two-layer transformers on repeated random tokens under ATTN, DMTN
               and DMAP scores; the induction phase transition and the heads' entropy collapse
bch-fusion  -- lie-exponential roadmap: fuse a product of exponentials into one exponential by BCH/Magnus;
               error against commutator norms, a `safe` flag, latency of a fused residual stack
               (numpy; run by ``workbench bench bch-fusion``)

Each experiment has a frozen config with ``preset("quick")`` (minutes on two CPU cores; CI) and
``preset("paper")`` (the full scan), a ``run_*`` function returning a JSON-able record (and writing a run
directory), and a Markdown table beside the seed's numbers.  ``workbench experiment NAME`` drives them
(with one torch thread by default: these models are small, and two threads on a two-core machine that is
doing anything else run 5–15× slower than one).  Names load on first use (PEP 562): the BCH fusion
experiment needs only numpy; the others need torch.
"""

from __future__ import annotations

import importlib

_MODULES = {
    "workbench.experiments._induction": (
        "ARCHITECTURES",
        "INDUCTION_OPERATORS",
        "InductionConfig",
        "InductionTransformer",
        "detect_phase_transition",
        "run_induction",
        "variable_period_tokens",
    ),
    "workbench.experiments._layers": ("OperatorAttention",),
    "workbench.experiments._runs": ("run_directory", "save_json"),
    "workbench.experiments._swiss_sit": (
        "SEED_TABLE1",
        "SWISS_SIT_ORDERS",
        "SwissSiT",
        "SwissSiTConfig",
        "run_swiss_sit",
        "swiss_roll_points",
    ),
    "workbench.experiments._registry": ("EXPERIMENTS", "Experiment"),
    "workbench.experiments._bch_fusion": (
        "ResidualStack",
        "fuse",
        "fusion_slopes",
        "fusion_table",
        "magnus_stack_table",
        "product_of_exponentials",
        "residual_stack",
    ),
}
_RENAMED = {
    "induction_table": ("workbench.experiments._induction", "format_table"),
    "swiss_sit_table": ("workbench.experiments._swiss_sit", "format_table"),
}
_WHERE = {name: (module, name) for module, names in _MODULES.items() for name in names} | _RENAMED

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'workbench.experiments' has no attribute {name!r}")
    module, attribute = _WHERE[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
