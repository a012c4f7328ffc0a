"""The memory budget every work estimate is held to, and the check that refuses work past it.

Kept apart from :mod:`workbench.validation` (which re-exports these names beside its other boundary checks)
because it is its own subject: where the budget comes from (:func:`memory_limit`, ``WORKBENCH_MAX_MEMORY``,
the available memory), how sizes are written (:func:`parse_size`), and the refusal (:func:`check_memory`).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
from collections.abc import Iterator
from numbers import Real
from typing import Any

__all__ = [
    "MAX_MEMORY_VARIABLE",
    "available_memory",
    "check_memory",
    "memory_budget",
    "memory_limit",
    "parse_size",
]


def available_memory() -> int | None:
    """Bytes of memory the kernel reports available (``MemAvailable`` of ``/proc/meminfo``); ``None`` elsewhere."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


#: The environment variable that sets the memory budget of every estimate: bytes, or a size such as ``4GiB``.
#: ``workbench --max-memory SIZE`` sets it for one command (and the processes it starts).
MAX_MEMORY_VARIABLE = "WORKBENCH_MAX_MEMORY"

_UNITS = {"": 1, "B": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "KI": 2**10, "MI": 2**20, "GI": 2**30}
_UNITS["TI"] = 2**40
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([KMGT]I?)?B?\s*", re.IGNORECASE)
_limit: contextvars.ContextVar[float | None] = contextvars.ContextVar("workbench_memory_limit", default=None)


def parse_size(name: str, size: Any) -> float:
    """Bytes in ``size``: a positive number of bytes, or a string such as ``"512MiB"``, ``"4 GB"``, ``"2e9"``.

    Units: B, K/KB, M/MB, G/GB, T/TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024), any case.

    Examples
    --------
    >>> parse_size("size", "4GiB"), parse_size("size", "1.5 GB"), parse_size("size", 2048)
    (4294967296.0, 1500000000.0, 2048.0)
    >>> parse_size("--max-memory", "lots")
    Traceback (most recent call last):
        ...
    ValueError: --max-memory must be a positive size in bytes such as 4GiB, 512MB or 2e9, got 'lots'
    """
    if isinstance(size, str):
        match = _SIZE.fullmatch(size)
        value = float(match[1]) * _UNITS[(match[2] or "").upper()] if match else math.nan
    elif isinstance(size, Real) and not isinstance(size, bool):
        value = float(size)
    else:
        raise TypeError(f"{name} must be a size in bytes (a number or a string such as 4GiB), got {size!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive size in bytes such as 4GiB, 512MB or 2e9, got {size!r}")
    return value


def memory_budget() -> tuple[float | None, str]:
    """The budget every memory estimate is held to, and where it comes from.

    In order: an enclosing :func:`memory_limit`; the environment variable :data:`MAX_MEMORY_VARIABLE`
    (``WORKBENCH_MAX_MEMORY``); the memory the kernel reports available.  ``(None, …)`` when none is known.

    Examples
    --------
    >>> with memory_limit("1GiB"):
    ...     memory_budget()
    (1073741824.0, 'set by memory_limit')
    """
    limit = _limit.get()
    if limit is not None:
        return limit, "set by memory_limit"
    text = os.environ.get(MAX_MEMORY_VARIABLE, "").strip()
    if text:
        return parse_size(MAX_MEMORY_VARIABLE, text), f"{MAX_MEMORY_VARIABLE}={text}"
    return available_memory(), "available memory"


def memory_limit(size: Any) -> contextlib.AbstractContextManager[float]:
    """Hold every memory estimate inside the ``with`` block to ``size`` (bytes, or a string such as ``"2GiB"``).

    The library's refusals ("… needs about 7.5e+03 GiB, more than the budget …") then use this budget instead
    of the available memory: lower it to keep a shared machine responsive, raise it where swap or a later
    release of memory makes more usable.  Context-local (threads and asyncio tasks each see their own).

    Examples
    --------
    >>> with memory_limit("1MiB"):
    ...     check_memory("a 1000×1000 kernel", 8e6)
    Traceback (most recent call last):
        ...
    ValueError: a 1000×1000 kernel needs about 0.0075 GiB, more than the budget of 0.000977 GiB (set by memory_limit)
    """
    return _hold_limit(parse_size("size", size))  # parsed now: a bad size fails at the call, not at `with`


@contextlib.contextmanager
def _hold_limit(limit: float) -> Iterator[float]:
    token = _limit.set(limit)
    try:
        yield limit
    finally:
        _limit.reset(token)


def check_memory(what: str, nbytes: float, hint: str = "", budget: float | None = None) -> None:
    """Refuse work whose estimated memory ``nbytes`` exceeds ``budget`` (default: :func:`memory_budget`).

    The estimate is made before anything is allocated, so a too-large request is a ``ValueError`` that says
    what it would have needed, not a ``MemoryError`` (or a swapping machine) halfway through.  The default
    budget is the available memory, changed by :func:`memory_limit` or ``WORKBENCH_MAX_MEMORY``.

    Examples
    --------
    >>> check_memory("a 10×10 float64 matrix", 800)
    >>> check_memory("an n×n kernel (n = 1000000)", 8e12, "use a sparse kernel", budget=2**30)
    Traceback (most recent call last):
        ...
    ValueError: an n×n kernel (n = 1000000) needs about 7.5e+03 GiB, more than the budget of 1 GiB; use a sparse kernel
    """
    nbytes, budget = (v.item() if getattr(v, "ndim", None) == 0 else v for v in (nbytes, budget))  # 0-d arrays
    for label, given in (("nbytes", nbytes), ("budget", budget)):
        absent = given is None and label == "budget"  # no budget given: the default one
        if not absent and (isinstance(given, bool) or not isinstance(given, Real) or math.isnan(given)):
            raise TypeError(f"{label} must be a real number of bytes (for {what}), got {given!r}")
    if budget is None:
        budget, origin = memory_budget()
        if budget is None:
            return
        source = f" ({origin})"
    else:
        source = ""
    if nbytes > budget:
        advice = f"; {hint}" if hint else ""
        raise ValueError(
            f"{what} needs about {nbytes / 2**30:.2g} GiB, more than the budget of {budget / 2**30:.3g} GiB{source}"
            f"{advice}"
        )
