"""The base of the experiments' frozen configs: presets, the preset name, and validation field by field.

Each experiment's settings (:class:`workbench.experiments.SwissSiTConfig`,
:class:`workbench.experiments.InductionConfig`) are a frozen dataclass deriving from :class:`ExperimentConfig`.
The base holds what they share: the ``preset(name, **overrides)`` constructor over the class's ``PRESETS``
table, ``preset_name()``, and the checks of the training fields every experiment has (``seed``, ``d_model``,
``n_heads``, ``steps``, ``batch``, ``lr``, ``weight_decay``, ``log_every``: :data:`TRAINING_CHECKS`).  The
fields themselves are declared by each experiment, in its own order and with its own defaults: the order is that
of ``config.json`` in a run directory and of the constructor's arguments, so a dataclass base holding them
(its fields come first) would change both.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9 and §11 [SEED] (the two experiments whose settings these
are); book/reference.md §A.11 [RECON] (the protocols).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, ClassVar

from workbench.validation import check_choice, check_in_range, check_integer

__all__ = [
    "TRAINING_CHECKS",
    "Check",
    "ExperimentConfig",
    "device_check",
    "eval_bytes_check",
    "even_context_check",
    "integer_check",
    "name_check",
    "range_check",
]

#: A field check: called as ``check(config, field_name, value)``; raises ``ValueError``/``TypeError``.
Check = Callable[[Any, str, Any], object]


def integer_check(low: int, high: int | None = None) -> Check:
    """The check ``check_integer(name, value, low, high)`` of one field."""
    return lambda config, name, value: check_integer(name, value, low, high)


def range_check(low: float, high: float | None = None, **inclusive: bool) -> Check:
    """The check ``check_in_range(name, value, low, high, **inclusive)`` of one field."""
    return lambda config, name, value: check_in_range(name, value, low, high, **inclusive)


def name_check(config, name: str, value) -> None:
    """The check of a config's ``name`` field (the preset it came from): a string."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def device_check(config, name: str, value) -> None:
    """The check of a ``device`` field: ``"cpu"`` or ``"cuda"``/``"cuda:N"`` (torch's device strings)."""
    if not isinstance(value, str) or not (value == "cpu" or re.fullmatch(r"cuda(:\d+)?", value)):
        raise ValueError(f"{name} must be 'cpu' or 'cuda[:N]', got {value!r}")


def even_context_check(config, name: str, value) -> None:
    """The check of a language model's ``context``: an even integer >= 4 (the induction probe repeats half)."""
    check_integer(name, value, 4)
    if value % 2:
        raise ValueError(f"{name} must be even (the induction probe repeats context / 2 bytes), got {value}")


def eval_bytes_check(config, name: str, value) -> None:
    """The check of a language model's ``eval_bytes``: an integer covering at least one window of ``context``."""
    integer_check(1)(config, name, value)
    if value < config.context:
        raise ValueError(f"{name} must be at least context={config.context}, got {value}")


def _check_heads(config, name: str, value) -> None:
    check_integer(name, value, 1)
    if config.d_model % value:
        raise ValueError(config.HEADS_MESSAGE.format(d_model=config.d_model, n_heads=value))


#: Checks of the training fields every experiment declares (``n_heads`` must also divide ``d_model``).
TRAINING_CHECKS: dict[str, Check] = {
    "seed": integer_check(0),
    "d_model": integer_check(1),
    "n_heads": _check_heads,
    "steps": integer_check(1),
    "batch": integer_check(1),
    "lr": range_check(0.0, low_inclusive=False),
    "weight_decay": range_check(0.0),
    "log_every": integer_check(1),
}


class ExperimentConfig:
    """Base of an experiment's frozen dataclass config: presets, the preset name, field validation.

    A subclass is a ``@dataclass(frozen=True)`` that declares its fields and sets two class attributes:
    ``PRESETS`` (preset name → field values that differ from the defaults) and ``CHECKS`` (field name → check,
    :data:`TRAINING_CHECKS` for the shared fields).  On construction every field is checked, in declaration
    order, so the first bad field is the one reported.  ``HEADS_MESSAGE`` is the message (a format string with
    ``d_model`` and ``n_heads``) when ``n_heads`` does not divide ``d_model``.  A subclass with a ``name`` field
    gets the preset's name in it from :meth:`preset`.

    References
    ----------
    Attention Geometry §9, §11 [SEED]; book/reference.md §A.11 [RECON].

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Toy(ExperimentConfig):
    ...     PRESETS = {"quick": {"steps": 5}, "paper": {}}
    ...     CHECKS = {"steps": TRAINING_CHECKS["steps"]}
    ...     steps: int = 100
    >>> Toy.preset("quick").steps, Toy.preset("quick").preset_name(), Toy(steps=7).preset_name()
    (5, 'quick', 'custom')
    >>> Toy(steps=0)
    Traceback (most recent call last):
        ...
    ValueError: steps must be an integer >= 1, got 0
    """

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {}
    CHECKS: ClassVar[dict[str, Check]] = {}
    HEADS_MESSAGE: ClassVar[str] = "n_heads must divide d_model={d_model}, got {n_heads}"

    def __post_init__(self):
        for field in dataclasses.fields(self):
            self.CHECKS[field.name](self, field.name, getattr(self, field.name))

    @classmethod
    def preset(cls, name: str, **overrides):
        """The settings of preset ``name`` (one of ``PRESETS``); keyword ``overrides`` replace single fields."""
        check_choice("name", name, tuple(cls.PRESETS))
        named = {"name": name} if "name" in {f.name for f in dataclasses.fields(cls)} else {}
        return cls(**{**cls.PRESETS[name], **named, **overrides})

    @classmethod
    def from_json(cls, record: dict[str, Any]):
        """The config a run directory's ``config.json`` records (its JSON lists become the fields' tuples).

        Raises ``ValueError`` if ``record`` does not hold exactly this class's fields (a config of another
        experiment, or of a version with other fields), and the fields' own errors for bad values.

        Examples
        --------
        >>> from dataclasses import asdict, dataclass
        >>> import json
        >>> @dataclass(frozen=True)
        ... class Toy(ExperimentConfig):
        ...     CHECKS = {"steps": TRAINING_CHECKS["steps"], "times": lambda config, name, value: None}
        ...     steps: int = 100
        ...     times: tuple = (0.5, 1.0)
        >>> Toy.from_json(json.loads(json.dumps(asdict(Toy(steps=3))))) == Toy(steps=3)
        True
        >>> Toy.from_json({"steps": 3})
        Traceback (most recent call last):
            ...
        ValueError: record must hold the fields of Toy, got one without times
        """
        if not isinstance(record, dict):
            raise TypeError(f"record must be a dict of {cls.__name__} fields, got {type(record).__name__}")
        fields = [f.name for f in dataclasses.fields(cls)]
        unknown = [k for k in record if k not in fields]
        missing = [k for k in fields if k not in record]
        if unknown or missing:
            parts = ([f"with unknown {', '.join(unknown)}"] if unknown else []) + (
                [f"without {', '.join(missing)}"] if missing else []
            )
            raise ValueError(f"record must hold the fields of {cls.__name__}, got one {' and '.join(parts)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in record.items()})

    def preset_name(self) -> str:
        """The preset this config is exactly (e.g. ``"quick"`` or ``"paper"``), else ``"custom"``."""
        for name in self.PRESETS:
            if self == type(self).preset(name):
                return name
        return "custom"
