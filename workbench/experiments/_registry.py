"""The registry of experiments that ``workbench experiment NAME`` runs (imports torch)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.experiments.givens_mixer import (
    GivensMixerConfig,
    givens_mixer_rows,
    givens_mixer_table,
    run_givens_mixer,
)
from workbench.experiments.induction import (
    ARCHITECTURES,
    INDUCTION_OPERATORS,
    InductionConfig,
    induction_rows,
    induction_table,
    run_induction,
)
from workbench.experiments.lm import LanguageModelConfig, language_model_rows, language_model_table, run_language_model
from workbench.experiments.log_lens import (
    LOG_LENS_OPERATORS,
    LogLensConfig,
    log_lens_rows,
    log_lens_table,
    run_log_lens,
)
from workbench.experiments.long_context import (
    LongContextConfig,
    long_context_rows,
    long_context_table,
    run_long_context,
)
from workbench.experiments.magnus_fusion import (
    MagnusFusionConfig,
    magnus_fusion_rows,
    magnus_fusion_table,
    run_magnus_fusion,
)
from workbench.experiments.sit_transfer import (
    SIT_TRANSFER_TARGETS,
    SitTransferConfig,
    run_sit_transfer,
    sit_transfer_rows,
    sit_transfer_table,
)
from workbench.experiments.spd_certified import (
    SPDCertifiedConfig,
    run_spd_certified,
    spd_certified_rows,
    spd_certified_table,
)
from workbench.experiments.swiss_sit import (
    SWISS_SIT_ORDERS,
    SwissSiTConfig,
    run_swiss_sit,
    swiss_sit_rows,
    swiss_sit_table,
)
from workbench.experiments.transfer import TransferConfig, run_transfer, transfer_rows, transfer_table

__all__ = ["EXPERIMENTS", "Experiment"]


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: its config class, runner, table formatter and the run's selection axes.

    ``axes`` maps a keyword of ``run`` (e.g. ``"orders"``) to the values it accepts.  ``rows`` flattens a
    run's result into one flat dict per condition, for ``workbench sweep``: string values are the condition's
    keys (e.g. ``{"operator": "DMTN"}``), numbers its measurements (``None`` where a run defines none); a sweep
    gathers each measurement over seeds into mean ± sd per grid cell and key.
    """

    config: type
    run: Callable[..., dict]
    table: Callable[[dict], str]
    axes: dict[str, tuple[str, ...]]
    rows: Callable[[dict], list[dict]]


#: The experiments ``workbench experiment NAME`` runs.
EXPERIMENTS: dict[str, Any] = {
    "swiss-sit": Experiment(
        SwissSiTConfig,
        run_swiss_sit,
        swiss_sit_table,
        {"operators": ("DMAP", "DMTN", "ATAP", "ATTN"), "orders": SWISS_SIT_ORDERS},
        rows=swiss_sit_rows,
    ),
    "induction": Experiment(
        InductionConfig,
        run_induction,
        induction_table,
        {"operators": INDUCTION_OPERATORS, "architectures": ARCHITECTURES},
        rows=induction_rows,
    ),
    "sit-transfer": Experiment(
        SitTransferConfig,
        run_sit_transfer,
        sit_transfer_table,
        {"targets": SIT_TRANSFER_TARGETS},
        rows=sit_transfer_rows,
    ),
    "lm": Experiment(LanguageModelConfig, run_language_model, language_model_table, {}, rows=language_model_rows),
    "transfer": Experiment(TransferConfig, run_transfer, transfer_table, {}, rows=transfer_rows),
    "givens-mixer": Experiment(GivensMixerConfig, run_givens_mixer, givens_mixer_table, {}, rows=givens_mixer_rows),
    "log-lens": Experiment(
        LogLensConfig,
        run_log_lens,
        log_lens_table,
        {"operators": LOG_LENS_OPERATORS, "architectures": ARCHITECTURES},
        rows=log_lens_rows,
    ),
    "long-context": Experiment(LongContextConfig, run_long_context, long_context_table, {}, rows=long_context_rows),
    "magnus-fusion": Experiment(
        MagnusFusionConfig, run_magnus_fusion, magnus_fusion_table, {}, rows=magnus_fusion_rows
    ),
    "spd-certified": Experiment(
        SPDCertifiedConfig, run_spd_certified, spd_certified_table, {}, rows=spd_certified_rows
    ),
}
