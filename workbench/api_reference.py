"""The API reference of the site: one page per public name, grouped by package, generated from the docstrings.

Sphinx's autodoc renders each page and numpydoc reads the docstrings' sections (Parameters, Returns, Examples, …);
the maths in ``:math:`` roles is typeset by the site's MathJax and the doctests are shown as examples.  The pages
are written here (autosummary's generator would need templates to say the same), one directive each; the package
pages carry the package's docstring, an index in plain text, as written.

The catalogue page links each identity to the public functions its check and derivation call
(:func:`identity_api`), and each course notebook ends with links to the public names it imports
(:func:`script_api`).

API_PACKAGES    -- the documented modules and packages, in the layer order
public_objects  -- every public name (dotted) and its object
api_pages       -- write the reference's pages under a folder
identity_api    -- the public names an identity's check and derivation use
script_api      -- the public names a script imports from workbench
"""

from __future__ import annotations

import ast
import dis
import functools
import importlib
import inspect
import types
from pathlib import Path

__all__ = ["API_PACKAGES", "api_pages", "identity_api", "public_objects", "script_api"]

# The layer order of DESIGN.md, bottom to top: a name exported by two packages is documented under the lower one.
API_PACKAGES = (
    "workbench.backend",
    "workbench.validation",
    "workbench.memory",
    "workbench.rates",
    "workbench.symbolic",
    "workbench.lazy",
    "workbench.resources",
    "workbench.lie",
    "workbench.expmv",
    "workbench.markov",
    "workbench.continuum",
    "workbench.lens",
    "workbench.attention",
    "workbench.models",
    "workbench.nn",
    "workbench.experiments.common",
    "workbench.experiments.bch_fusion",
    "workbench.experiments.swiss_sit",
    "workbench.experiments.sit_transfer",
    "workbench.experiments.induction",
    "workbench.experiments.lm",
    "workbench.experiments.transfer",
    "workbench.experiments.long_context",
    "workbench.experiments.givens_mixer",
    "workbench.experiments.log_lens",
    "workbench.experiments.magnus_fusion",
    "workbench.experiments.spd_certified",
    "workbench.experiments.corpus_diagnosis",
    "workbench.experiments.connection_walk",
    "workbench.experiments.head_subspaces",
    "workbench.experiments",
    "workbench.catalogue",
    "workbench.slides",
    "workbench.book",
    "workbench.api_reference",
    "workbench.lab",
    "workbench.course",
    "workbench.cli",
)
_FOLDER = "api"
# Not linked from an identity: every check uses them (arrays and their conversions, validation, the catalogue's
# records, sympy steps); the mathematics of the backend (matrix_exp, unit_roundoff) is linked.
_PLUMBING = {"workbench.validation", "workbench.memory", "workbench.symbolic", "workbench.lazy", "workbench.catalogue"}
_PLUMBING_NAMES = {f"workbench.backend.{name}" for name in ("like", "namespace", "to_backend", "to_numpy")}


def _checked(packages) -> tuple[str, ...]:
    if isinstance(packages, str) or not isinstance(packages, (tuple, list)):
        raise TypeError(f"packages must be a tuple of module names such as 'workbench.lie', got {packages!r}")
    for package in packages:
        if not isinstance(package, str) or package.split(".")[0] != "workbench":
            raise ValueError(f"packages must name modules of workbench (e.g. 'workbench.lie'), got {package!r}")
    return tuple(packages)


def public_objects(packages: tuple[str, ...] = API_PACKAGES, *, missing: dict | None = None) -> dict[str, object]:
    """Every public name of ``packages`` (their ``__all__``), dotted, with its object; lower layers first.

    A name whose module needs an optional dependency that is not installed (torch for ``workbench.nn``) raises
    its ``ModuleNotFoundError``; with a dict as ``missing`` it is left out and recorded there instead, dotted name
    → the missing module (a site built where torch is absent documents the rest and says what it left out).

    Examples
    --------
    >>> objects = public_objects()
    >>> objects["workbench.markov.MarkovOperator"].__name__
    'MarkovOperator'
    """
    if missing is not None and not isinstance(missing, dict):
        raise TypeError(f"missing must be a dict to record the names left out, or None, got {missing!r}")
    found: dict[str, object] = {}
    for package in _checked(packages):
        module = importlib.import_module(package)
        for name in module.__all__:
            try:
                found[f"{package}.{name}"] = getattr(module, name)
            except ModuleNotFoundError as exc:
                # Only a third-party module that is absent; a missing module of the workbench itself is a defect.
                if missing is None or not exc.name or exc.name.split(".")[0] == "workbench":
                    raise
                missing[f"{package}.{name}"] = exc.name
    return found


def _documenter(obj) -> str:
    if inspect.isclass(obj):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    if inspect.isroutine(obj) or isinstance(obj, functools.partial):
        return "autofunction"
    return "autodata"


def _title(text: str) -> list[str]:
    return [text, "=" * len(text), ""]


def api_pages(folder: Path, packages: tuple[str, ...] = API_PACKAGES, objects: dict | None = None) -> list[str]:
    """Write the API reference of ``packages`` under ``folder/api``: an index, a page per package and per public name.

    ``objects`` (:func:`public_objects`, default: all of ``packages``) are the names documented.  Returns the
    documents written (Sphinx docnames, e.g. ``"api/workbench.markov.MarkovOperator"``).
    """
    packages = _checked(packages)
    root = Path(folder) / _FOLDER
    root.mkdir(parents=True, exist_ok=True)
    objects = public_objects(packages) if objects is None else objects
    written = []

    def write(docname: str, lines: list[str]) -> None:
        path = root / f"{docname}.rst"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(f"{_FOLDER}/{docname}")

    documented = []
    # A name a package re-exports from a lower one (experiments from its subpackages) has its page there only:
    # two pages of one class would describe its members twice.
    pages: dict[tuple[str, int], str] = {}
    for package in packages:
        names = sorted(dotted.rpartition(".")[2] for dotted in objects if dotted.rpartition(".")[0] == package)
        again = [n for n in names if (n, id(objects[f"{package}.{n}"])) in pages]
        names = [n for n in names if n not in again]
        if not names and not again:
            continue
        documented.append(package)
        module = importlib.import_module(package)
        # The package docstring is an index in plain text (name -- summary, aligned): shown as written.
        doc = inspect.cleandoc(module.__doc__ or "").splitlines()
        lines = [*_title(package), f".. module:: {package}", "", doc[0] if doc else "", ""]
        if len(doc) > 2:
            lines += [".. code-block:: text", "", *(f"   {line}" for line in doc[2:]), ""]
        lines += [f".. currentmodule:: {package}", ""]
        if names:
            lines += [".. autosummary::", "", *(f"   {n}" for n in names), ""]
        if again:
            # A bare target per name, so a reference to this package's path still resolves; it links on.
            lines += ["Also exported here, each documented in the package that defines it:", ""]
            for n in again:
                obj = objects[f"{package}.{n}"]
                kind = _documenter(obj).removeprefix("auto")
                lines += [f".. py:{kind}:: {n}", "   :no-index-entry:", ""]
                lines += [f"   See :py:obj:`{pages[(n, id(obj))]}`.", ""]
        write(package, lines)
        for name in names:
            pages[(name, id(objects[f"{package}.{name}"]))] = f"{package}.{name}"
            obj = objects[f"{package}.{name}"]
            directive = _documenter(obj)
            # :orphan: the page is reached from its package's table and from cross-references, not from a toctree:
            # in the sidebar, 550 names would make every page of the site 100 KB heavier.
            page = [":orphan:", "", *_title(f"{package}.{name}"), f".. currentmodule:: {package}", ""]
            page += [f".. {directive}:: {name}"]
            if directive == "autoclass":
                page += ["   :members:", "   :show-inheritance:"]
            elif directive == "autodata":
                page += ["   :annotation:"]  # the value can be long (a table of settings): the docstring says it
            write(f"{package}.{name}", page)
    index = [
        *_title("API reference"),
        "Every public name of the library, one page each, generated from its docstring; grouped by package in the "
        "layer order (a package uses only the packages above it).",
        "",
        ".. toctree::",
        "   :maxdepth: 1",
        "",
        *(f"   {package}" for package in documented),
    ]
    write("index", index)
    return written


def _code_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def _imported_in(code: types.CodeType) -> set[str]:
    """``module.name`` of every ``from module import name`` in ``code`` and the functions nested in it."""
    found, module = set(), None
    for instruction in dis.get_instructions(code):
        if instruction.opname == "IMPORT_NAME":
            module = instruction.argval
        elif instruction.opname == "IMPORT_FROM" and module:
            found.add(f"{module}.{instruction.argval}")
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _imported_in(const)
    return found


def identity_api(identity, objects: dict[str, object] | None = None) -> list[str]:
    """The public names (dotted) that an identity's check and derivation call, directly or through helpers.

    The functions are followed through the identity's own module: a module-level helper they call is read too, so a
    check written as ``verify → _sample → MarkovOperator.from_points`` links to ``MarkovOperator``.

    Examples
    --------
    >>> from workbench.catalogue import discover
    >>> identity = next(i for i in discover() if i.name == "lie.bch.group_commutator")
    >>> identity_api(identity)
    ['workbench.lie.commutator_log']
    """
    objects = public_objects() if objects is None else objects
    by_id = {}
    for dotted, obj in objects.items():  # lower layers first: the first name is the documented one
        if dotted.rpartition(".")[0] not in _PLUMBING and dotted not in _PLUMBING_NAMES:
            by_id.setdefault(id(obj), dotted)
    found, seen = set(), set()
    pending = [identity.verify, identity.derive]
    while pending:
        function = pending.pop()
        while hasattr(function, "func"):  # functools.partial: its function and its arguments
            pending.extend(a for a in function.args if callable(a))
            function = function.func
        code = getattr(function, "__code__", None)
        if code is None or code in seen:
            continue
        seen.add(code)
        namespace = getattr(function, "__globals__", {})
        for dotted in _imported_in(code):  # `from workbench.nn import fuse` inside the function
            if dotted in objects and id(objects[dotted]) in by_id:
                found.add(by_id[id(objects[dotted])])
        for name in _code_names(code):
            value = namespace.get(name)
            if value is None:
                continue
            if id(value) in by_id:
                found.add(by_id[id(value)])
            elif inspect.isfunction(value) and value.__module__ == function.__module__:
                pending.append(value)  # a helper of the same module
    return sorted(found)


def script_api(path: Path, objects: dict[str, object] | None = None) -> list[str]:
    r"""The public names (dotted, as documented) that a Python script imports from ``workbench``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     script = Path(folder) / "s.py"
    ...     _ = script.write_text("from workbench.lie import bch, LieSeries as L\nimport numpy as np\n")
    ...     script_api(script)
    ['workbench.lie.LieSeries', 'workbench.lie.bch']
    """
    objects = public_objects() if objects is None else objects
    by_id = {}
    for dotted, obj in objects.items():
        by_id.setdefault(id(obj), dotted)
    found = set()
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "workbench":
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if dotted in objects:
                    found.add(by_id[id(objects[dotted])])
    return sorted(found)
