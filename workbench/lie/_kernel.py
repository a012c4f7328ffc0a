"""The compiled Lyndon kernel (``_lyndon_kernel.c``, built by ``pip install``), or ``None`` where it is absent.

Without it the engine runs its numpy programme and Python-integer solve: the same results, slower (the
budgets switch to that path's time model).  ``WORKBENCH_LIE_KERNEL=0`` switches it off for one process,
which is how ``workbench bench bch`` measures the engine's previous version beside the current one.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = []

#: The environment variable that switches the kernel off (``0``) for the processes that see it.
KERNEL_VARIABLE = "WORKBENCH_LIE_KERNEL"


def load_kernel() -> ModuleType | None:
    """The kernel module, or ``None`` when it is not built or ``WORKBENCH_LIE_KERNEL=0``."""
    if os.environ.get(KERNEL_VARIABLE, "").strip() == "0":
        return None
    try:  # by name: `from workbench.lie import …` would import the package from inside it
        return importlib.import_module("workbench.lie._lyndon_kernel")
    except ImportError:  # pragma: no cover - a source checkout that was never built
        return None


kernel = load_kernel()
