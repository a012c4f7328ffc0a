"""The architecture as a test: imports run one way, private names stay home, layers keep their order.

The import graph is read from the source with :mod:`ast` (every ``import`` statement, at module level or
inside a function: a lazy import is still a dependency).  Three rules, each checked over the whole tree:

1. **No circles.**  The module graph of ``workbench`` (a package's ``__init__`` counts as a module that
   depends on what it imports) has no strongly connected component larger than one module.
2. **Private names stay home.**  No module imports another module's ``_name``; a private module
   ``P._m`` is imported only from inside the package ``P``.  ``derivations/``, ``benchmarks/`` and the
   notebooks are users of the library: they see public names only.
3. **Layers in order.**  :data:`LAYERS` below is the one statement of the layer order (DESIGN.md and the
   README's layout describe it in words): each unit may import only the units it lists.

A fourth test is scipy's public-API check in small: every package's ``__all__`` is exactly the union of
its private modules' ``__all__``, and every name in it resolves.
"""

from __future__ import annotations

import ast
import importlib
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = ("workbench", "derivations", "benchmarks")

# The layer order, bottom to top.  A unit is a subpackage of ``workbench`` or one of its top-level
# modules; "base" is the set of base modules every layer may use.  Each unit lists the units it may import.
BASE = {"backend", "validation", "memory", "rates", "symbolic", "lazy", "resources"}
LAYERS: dict[str, set[str]] = {
    "base": set(),
    "lie": {"base"},
    "expmv": {"base"},
    "markov": {"base"},
    "continuum": {"base", "markov"},
    "lens": {"base"},
    "attention": {"base", "markov", "expmv"},
    # Real checkpoints on disk read into the workbench's own forward pass, and the diagnosis of their heads.
    "models": {"base", "markov", "attention"},
    "nn": {"base", "lie", "expmv", "attention", "lens"},
    "experiments": {"base", "lie", "expmv", "markov", "continuum", "attention", "models", "nn", "lens"},
    "catalogue": {"base"},
    "cli": {
        "workbench",
        "base",
        "catalogue",
        "lie",
        "expmv",
        "markov",
        "continuum",
        "attention",
        "models",
        "lens",
        "nn",
        "experiments",
        "book",
        "lab",
        "course",
    },
    # The lab command line and settings (JupyterLab on the course); it reuses the site's MathJax.
    "lab": {"base", "book"},
    # The course site builder: top layer (only cli and lab import it); it reads the catalogue for its page.
    "book": {"base", "catalogue", "slides", "api_reference"},
    # The site's API reference: one page per public name (it imports every package by name, at build time).
    "api_reference": {"base"},
    # A notebook read as a slide deck (text only; book builds the decks).
    "slides": {"base"},
    # Teaching: the student copy and the grading of submissions (otter-grader); top layer, only cli imports it.
    "course": {"base", "workbench"},  # workbench: the version named in a course copy's README
    "__main__": {"cli"},
    # ``workbench`` itself only carries the version (from ``_version``, written by the build); cli reads it.
    "workbench": {"_version"},
    "_version": set(),
}

# Inside ``experiments``: one subpackage per experiment, the shared parts in ``common``, and above them the
# registry and the sweep that drive experiments by name.  Each unit lists the units of ``experiments`` it may
# import (an experiment builds on another's model or settings only where its paper does).
EXPERIMENT_LAYERS: dict[str, set[str]] = {
    "common": set(),
    "bch_fusion": {"common"},
    "swiss_sit": {"common"},
    "sit_transfer": {"common", "swiss_sit"},  # the Swiss SiT carried between operators
    "induction": {"common"},
    "lm": {"common", "induction"},  # the induction experiment's transformer, read on bytes
    "transfer": {"common", "lm", "induction"},  # its two tasks are those two experiments'
    "long_context": {"common", "lm"},
    "givens_mixer": {"common"},
    "log_lens": {"common", "induction"},  # the induction task, read through the log lens
    "magnus_fusion": {"common", "lm", "bch_fusion"},
    "spd_certified": {"common"},
    "corpus_diagnosis": {"common"},
    "connection_walk": {"common"},
    "head_subspaces": {"common", "induction"},
    "_registry": {
        "common",
        "swiss_sit",
        "sit_transfer",
        "induction",
        "lm",
        "transfer",
        "long_context",
        "givens_mixer",
        "log_lens",
        "magnus_fusion",
        "spd_certified",
    },
    "_sweep": {"common", "_registry", "_sweep_plan"},
    "_sweep_plan": {"common"},  # the sweep's settings checked and its tasks built
}


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules(root: Path = ROOT, tops=CODE) -> dict[str, Path]:
    return {_module_name(p, root): p for top in tops for p in (root / top).rglob("*.py")}


def _imports(module: str, source: str, is_package: bool, known: set[str]):
    """Yield ``(line, target module, imported name or None)`` for each first-party import."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module
            targets = [
                (f"{origin}.{alias.name}", None) if f"{origin}.{alias.name}" in known else (origin, alias.name)
                for alias in node.names
            ]
        else:
            continue
        for target, name in targets:
            if target.split(".")[0] not in CODE:
                continue
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            yield node.lineno, target, name


def import_graph(root: Path = ROOT, tops=CODE):
    """The first-party import graph: ``{module: {(line, target, name), ...}}``."""
    modules = _modules(root, tops)
    known = set(modules)
    return {
        module: set(_imports(module, path.read_text(), path.name == "__init__.py", known))
        for module, path in modules.items()
    }


def circles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iteratively)."""
    edges = {m: sorted({t for _, t, _ in imports if t in graph and t != m}) for m, imports in graph.items()}
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def private_imports(graph) -> list[str]:
    """Imports of another module's private name, or of a private module from outside its package."""
    bad = []
    for module, imports in graph.items():
        for line, target, name in sorted(imports, key=lambda x: (x[0], x[1], x[2] or "")):
            if name is not None and name.startswith("_") and not name.startswith("__") and target != module:
                bad.append(f"{module}:{line} imports private name {name} from {target}")
            parts = target.split(".")
            for i, part in enumerate(parts):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:i])
                    if not (module == owner or module.startswith(owner + ".")):
                        bad.append(f"{module}:{line} imports private module {target} from outside {owner}")
                    break
    return bad


def unit_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "workbench":
        return None
    if len(parts) == 1:
        return "workbench"
    return "base" if parts[1] in BASE else parts[1]


def layer_crossings(graph) -> list[str]:
    bad = []
    for module, imports in graph.items():
        unit = unit_of(module)
        if unit is None:
            continue
        if unit not in LAYERS:
            bad.append(f"{module} belongs to no layer: add its unit {unit!r} to LAYERS")
            continue
        for line, target, _ in imports:
            other = unit_of(target)
            if other is not None and other != unit and other not in LAYERS[unit]:
                bad.append(f"{module}:{line} ({unit}) imports {target} ({other}), which {unit} may not use")
    return bad


def experiment_crossings(graph) -> list[str]:
    """Imports between the units of ``experiments`` that :data:`EXPERIMENT_LAYERS` does not list."""
    bad = []
    for module, imports in graph.items():
        parts = module.split(".")
        if parts[:2] != ["workbench", "experiments"] or len(parts) < 3:
            continue
        unit = parts[2]
        if unit not in EXPERIMENT_LAYERS:
            bad.append(f"{module} belongs to no unit of experiments: add {unit!r} to EXPERIMENT_LAYERS")
            continue
        for line, target, _ in imports:
            other = target.split(".")
            if other[:2] == ["workbench", "experiments"] and len(other) > 2 and other[2] != unit:
                if other[2] not in EXPERIMENT_LAYERS[unit]:
                    bad.append(f"{module}:{line} ({unit}) imports {target}, which {unit} may not use")
    return bad


def notebook_private_imports(root: Path = ROOT) -> list[str]:
    bad = []
    for path in sorted((root / "notebooks").glob("*.py")):
        for line, target, name in _imports("notebooks", path.read_text(), False, set(_modules(root))):
            if any(p.startswith("_") and not p.startswith("__") for p in target.split(".")) or (
                name and name.startswith("_")
            ):
                bad.append(f"{path.name}:{line} imports {target}{'.' + name if name else ''}")
    return bad


def test_the_import_graph_has_no_circle():
    assert circles(import_graph()) == []


def test_no_module_imports_a_private_name_of_another():
    assert private_imports(import_graph()) == []


def test_imports_follow_the_layer_order():
    assert layer_crossings(import_graph()) == []


def test_experiments_import_each_other_in_the_layer_order():
    assert experiment_crossings(import_graph()) == []
    units = {p.name for p in (ROOT / "workbench" / "experiments").iterdir() if (p / "__init__.py").exists()}
    assert units <= set(EXPERIMENT_LAYERS), sorted(units - set(EXPERIMENT_LAYERS))


def test_notebooks_import_only_public_names():
    assert notebook_private_imports() == []


def test_every_unit_below_is_in_the_table():
    # The table itself is a DAG: a unit may use only units that do not (transitively) use it.
    seen, order = set(), []

    def visit(unit, path=()):
        assert unit not in path, f"LAYERS has a circle: {' -> '.join((*path, unit))}"
        if unit in seen:
            return
        for other in sorted(LAYERS[unit]):
            visit(other, (*path, unit))
        seen.add(unit)
        order.append(unit)

    for unit in LAYERS:
        visit(unit)
    packages = {p.name for p in (ROOT / "workbench").iterdir() if (p / "__init__.py").exists()}
    assert packages <= set(LAYERS)


# -- the guards catch what they are meant to catch (each rule shown failing on a small tree) --------------


def _tree(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return import_graph(tmp_path, ("workbench",))


def test_a_deliberate_circle_is_found(tmp_path):
    graph = _tree(
        tmp_path,
        {
            "workbench/__init__.py": "",
            "workbench/lie/__init__.py": "from workbench.lie._a import f\n",
            "workbench/lie/_a.py": "def f():\n    from workbench.lie._b import g\n    return g()\n",
            "workbench/lie/_b.py": "from workbench.lie._a import f\n",
        },
    )
    assert circles(graph) == [["workbench.lie._a", "workbench.lie._b"]]


def test_a_private_name_across_modules_is_found(tmp_path):
    graph = _tree(
        tmp_path,
        {
            "workbench/__init__.py": "",
            "workbench/markov/__init__.py": "",
            "workbench/markov/_a.py": "_helper = 1\n",
            "workbench/markov/_b.py": "from ._a import _helper\n",
            "workbench/attention/__init__.py": "",
            "workbench/attention/_c.py": "from workbench.markov._a import x\n",
        },
    )
    assert private_imports(graph) == [
        "workbench.attention._c:1 imports private module workbench.markov._a from outside workbench.markov",
        "workbench.markov._b:1 imports private name _helper from workbench.markov._a",
    ]


def test_a_layer_crossing_is_found(tmp_path):
    graph = _tree(
        tmp_path,
        {
            "workbench/__init__.py": "",
            "workbench/catalogue.py": "",
            "workbench/markov/__init__.py": "import workbench.catalogue\n",
        },
    )
    assert layer_crossings(graph) == [
        "workbench.markov:1 (markov) imports workbench.catalogue (catalogue), which markov may not use"
    ]


def test_an_experiment_importing_one_it_may_not_use_is_found(tmp_path):
    graph = _tree(
        tmp_path,
        {
            "workbench/__init__.py": "",
            "workbench/experiments/__init__.py": "",
            "workbench/experiments/lm/__init__.py": "",
            "workbench/experiments/lm/_run.py": "from workbench.experiments.common import train\n",
            "workbench/experiments/common/__init__.py": "",
            "workbench/experiments/swiss_sit/__init__.py": "from workbench.experiments.lm import new_model\n",
            "workbench/experiments/attic/__init__.py": "",
        },
    )
    assert experiment_crossings(graph) == [
        "workbench.experiments.attic belongs to no unit of experiments: add 'attic' to EXPERIMENT_LAYERS",
        "workbench.experiments.swiss_sit:1 (swiss_sit) imports workbench.experiments.lm, which swiss_sit may not use",
    ]


# -- the public API (scipy's test_public_api.py in small) ----------------------------------------------


def _packages():
    """Every package below ``workbench``, subpackages too (``experiments.lm``), as dotted names."""
    return sorted(
        ".".join(p.parent.relative_to(ROOT / "workbench").parts)
        for p in (ROOT / "workbench").rglob("__init__.py")
        if p.parent != ROOT / "workbench"
    )


def _subpackages(package: str) -> list[str]:
    return [p for p in _packages() if p.startswith(package + ".") and p.count(".") == package.count(".") + 1]


def _module_exports(package: str) -> dict[str, set[str]]:
    """``__all__`` of each private module of a package, read from the source (no import needed)."""
    exports = {}
    for path in sorted((ROOT / "workbench" / package.replace(".", "/")).glob("_*.py")):
        if path.name == "__init__.py":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                exports[path.stem] = set(ast.literal_eval(node.value))
        assert path.stem in exports, f"workbench/{package}/{path.name} has no __all__"
    return exports


def _defined_in_index(package: str) -> set[str]:
    """Public names the package ``__init__`` defines itself (a registry such as ``lie.SERIES``)."""
    body = ast.parse((ROOT / "workbench" / package.replace(".", "/") / "__init__.py").read_text()).body
    names = set()
    for node in body:
        targets = node.targets if isinstance(node, ast.Assign) else [node] if isinstance(node, ast.FunctionDef) else []
        for target in targets:
            name = getattr(target, "id", getattr(target, "name", ""))
            if name and not name.startswith("_"):
                names.add(name)
    return names


@pytest.mark.parametrize("package", _packages())
def test_a_package_exports_exactly_its_modules_names(package):
    module = importlib.import_module(f"workbench.{package}")
    exported = set(module.__all__)
    own = set().union(*_module_exports(package).values()) | _defined_in_index(package)
    subpackages = _subpackages(package)
    if subpackages:
        # A package of subpackages (experiments) re-exports a chosen part of theirs: every name it adds
        # to its own modules' comes from one of them.
        below = set().union(*(importlib.import_module(f"workbench.{p}").__all__ for p in subpackages))
        assert exported - own <= below, f"workbench.{package} exports names no module of it defines: " + str(
            sorted(exported - own - below)
        )
        own |= exported & below
    assert exported == own, (
        f"workbench.{package}.__all__ differs from its modules' __all__: "
        f"missing {sorted(own - exported)}, extra {sorted(exported - own)}"
    )
    assert len(module.__all__) == len(exported), f"workbench.{package}.__all__ repeats a name"


@pytest.mark.parametrize("package", _packages())
def test_every_exported_name_resolves(package):
    if package.split(".")[0] in {"nn", "experiments"}:
        pytest.importorskip("torch")
    module = importlib.import_module(f"workbench.{package}")
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_the_base_modules_export_what_they_define():
    for name in sorted(BASE):
        module = importlib.import_module(f"workbench.{name}")
        for exported in module.__all__:
            value = getattr(module, exported)
            if callable(value):
                assert value.__module__ == module.__name__, exported
