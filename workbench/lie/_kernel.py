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
    except ImportError:  # installed where no C compiler was found, or a source tree that was never built
        _warn_missing_kernel()
        return None


def _warn_missing_kernel() -> None:
    """Say once (at the engine's import) what an install without the compiled kernel costs."""
    import warnings

    from workbench.lie._budget import ceiling, python_increasing_log_seconds

    warnings.warn(
        "workbench.lie: the compiled Lyndon kernel is not built (no C compiler when the package was installed), "
        "so the Lie engine runs its Python-integer path: the same results, but bch stops at degree "
        f"{ceiling(python_increasing_log_seconds, 2)} (up to 26 with the kernel, as memory allows) and degree 20 "
        "takes about 5x the CPU time (`workbench bench bch`, column 'without kernel'); install a C compiler "
        "(e.g. Debian's gcc) and reinstall to build it, or set "
        f"{KERNEL_VARIABLE}=0 to choose the Python path without this message",
        UserWarning,
        stacklevel=2,
    )


kernel = load_kernel()
