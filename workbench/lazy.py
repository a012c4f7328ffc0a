"""Lazy package exports (PEP 562): a package's names load from their modules on first use.

``workbench.nn`` and ``workbench.experiments`` keep torch out of ``import workbench``: their index names every
export and the private module it lives in, and only the first use of a name imports that module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]], namespace: MutableMapping[str, object]
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """Return ``(__all__, __getattr__, __dir__)`` for a package whose names load on first use.

    Parameters
    ----------
    package : str
        The package's name (for the ``AttributeError`` message).
    modules : mapping
        ``{module name: (exported names, ...)}``.
    namespace : dict
        The package's ``globals()``: a loaded name is stored there, so later uses skip ``__getattr__``.

    Examples
    --------
    >>> space = {}
    >>> names, getattr_, dir_ = lazy_exports("demo", {"math": ("tau",)}, space)
    >>> names, round(getattr_("tau"), 4), "tau" in space
    (['tau'], 6.2832, True)
    >>> getattr_("pi")
    Traceback (most recent call last):
        ...
    AttributeError: module 'demo' has no attribute 'pi'
    """
    where = {name: module for module, names in modules.items() for name in names}
    exported = sorted(where)

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exported))

    return exported, __getattr__, __dir__
