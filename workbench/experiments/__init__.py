"""Reproducible experiments of the seed paper, at workbench scale (torch; CPU or GPU).

swiss-sit   -- Attention Geometry §9, Table 1: a one-layer flow transformer on the Swiss roll under each of
               the four operators and both block orders, read with the attention diagnostics
induction   -- Attention Geometry §11: two-layer transformers on repeated random tokens under ATTN, DMTN
               and DMAP scores; the induction phase transition and the heads' entropy collapse

Each experiment has a frozen config with ``preset("quick")`` (minutes on two CPU cores; CI) and
``preset("paper")`` (the full scan), a ``run_*`` function returning a JSON-able record (and writing a run
directory), and a Markdown table beside the seed's numbers.  ``workbench experiment NAME`` drives them
(with one torch thread by default: these models are small, and two threads on a two-core machine that is
doing anything else run 5–15× slower than one).  Importing this package needs torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.experiments._induction import (
    ARCHITECTURES,
    INDUCTION_OPERATORS,
    InductionConfig,
    InductionTransformer,
    detect_phase_transition,
    run_induction,
    variable_period_tokens,
)
from workbench.experiments._induction import format_table as induction_table
from workbench.experiments._layers import OperatorAttention
from workbench.experiments._runs import run_directory, save_json
from workbench.experiments._swiss_sit import (
    SEED_TABLE1,
    SWISS_SIT_ORDERS,
    SwissSiT,
    SwissSiTConfig,
    run_swiss_sit,
    swiss_roll_points,
)
from workbench.experiments._swiss_sit import format_table as swiss_sit_table

__all__ = [
    "ARCHITECTURES",
    "EXPERIMENTS",
    "INDUCTION_OPERATORS",
    "SEED_TABLE1",
    "SWISS_SIT_ORDERS",
    "Experiment",
    "InductionConfig",
    "InductionTransformer",
    "OperatorAttention",
    "SwissSiT",
    "SwissSiTConfig",
    "detect_phase_transition",
    "induction_table",
    "run_directory",
    "run_induction",
    "run_swiss_sit",
    "save_json",
    "swiss_roll_points",
    "swiss_sit_table",
    "variable_period_tokens",
]


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: its config class, runner, table formatter and the run's selection axes.

    ``axes`` maps a keyword of ``run`` (e.g. ``"orders"``) to the values it accepts.
    """

    config: type
    run: Callable[..., dict]
    table: Callable[[dict], str]
    axes: dict[str, tuple[str, ...]]


#: The experiments ``workbench experiment NAME`` runs.
EXPERIMENTS: dict[str, Any] = {
    "swiss-sit": Experiment(
        SwissSiTConfig,
        run_swiss_sit,
        swiss_sit_table,
        {"operators": ("DMAP", "DMTN", "ATAP", "ATTN"), "orders": SWISS_SIT_ORDERS},
    ),
    "induction": Experiment(
        InductionConfig,
        run_induction,
        induction_table,
        {"operators": INDUCTION_OPERATORS, "architectures": ARCHITECTURES},
    ),
}
