"""The registry of experiments that ``workbench experiment NAME`` runs (imports torch)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.experiments._induction import run_induction
from workbench.experiments._induction_config import ARCHITECTURES, INDUCTION_OPERATORS, InductionConfig
from workbench.experiments._induction_report import induction_table
from workbench.experiments._swiss_sit import run_swiss_sit
from workbench.experiments._swiss_sit_config import SWISS_SIT_ORDERS, SwissSiTConfig
from workbench.experiments._swiss_sit_report import swiss_sit_table

__all__ = ["EXPERIMENTS", "Experiment"]


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
