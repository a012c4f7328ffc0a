"""The identity catalogue: records, discovery and the check runner.

An :class:`Identity` states one mathematical fact three ways: a LaTeX
``statement`` with its ``source``, a symbolic ``derive()`` that returns the
steps of the derivation (each claimed equality is decided by sympy), and a
numeric ``verify(rng, scale, backend)`` that measures the identity on sampled
data and returns a :class:`Verification`.  Asymptotic identities (truncated
series, continuum limits) verify a fitted *rate* against its expected value
instead of a single residual.

Identities are discovered through the entry-point group
``workbench.derivations``: each entry names a module with an ``IDENTITIES``
sequence (or a callable returning one).  The repository's own
``derivations`` package registers itself this way, as an outside course would.

:func:`run_checks` runs every selected identity once symbolically (backend
``"sympy"``) and once per numeric backend (``"numpy"``, ``"torch:cpu"``,
``"torch:cuda"``) and returns structured :class:`Result` records.
"""

from __future__ import annotations

import math
import multiprocessing
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from workbench.backend import to_numpy
from workbench.rates import fit_rate
from workbench.symbolic import Derivation, Step, claim
from workbench.validation import check_choice, check_integer

__all__ = [
    "ENTRY_POINT_GROUP",
    "SCALES",
    "CatalogueError",
    "Derivation",
    "Hypothesis",
    "Identity",
    "Result",
    "Step",
    "Verification",
    "as_float",
    "by_scale",
    "claim",
    "discover",
    "fit_rate",
    "relative_error",
    "run_checks",
    "run_outside_cases",
    "select",
]

ENTRY_POINT_GROUP = "workbench.derivations"
SCALES = ("small", "large")


# -- helpers for identity authors (the repository's derivations use them as an outside course would) ---------


def by_scale(scale: str, small, large):
    """The problem size for ``scale``: ``small`` at ``"small"``, ``large`` at ``"large"``.

    Examples
    --------
    >>> by_scale("large", 64, 1024)
    1024
    """
    check_choice("scale", scale, SCALES)
    return small if scale == "small" else large


def as_float(x) -> float:
    """A backend scalar (numpy, Python or 0-d torch, on any device) as a Python float.

    Examples
    --------
    >>> as_float(np.float32(0.5))
    0.5
    """
    return float(to_numpy(x))


def relative_error(approx, exact) -> float:
    """The relative Frobenius error ‖approx − exact‖ / ‖exact‖, computed on the host (complex values too).

    Examples
    --------
    >>> relative_error(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    0.70710678
    """
    a, e = (np.asarray(to_numpy(x)) for x in (approx, exact))
    if a.shape != e.shape:
        raise ValueError(f"approx must have the shape of exact {e.shape}, got {a.shape}")
    scale = float(np.linalg.norm(e))
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"exact must be finite and nonzero for a relative error, got norm {scale!r}")
    return float(np.linalg.norm(a - e) / scale)


class CatalogueError(RuntimeError):
    """A derivation module could not be loaded or declared an invalid identity."""


@dataclass(frozen=True)
class Verification:
    """The outcome of one numeric verification.

    For a plain identity ``residual`` is the measured discrepancy (relative unless the
    identity says otherwise) and ``tolerance`` its allowed size.  For an asymptotic identity
    ``rate`` is the fitted slope, ``expected_rate`` its predicted value, and ``residual`` is
    ``|rate - expected_rate|``.

    Examples
    --------
    >>> Verification.from_residual(1e-15, 1e-12, n=4).passed
    True
    >>> Verification.from_rate([0.1, 0.01], [1e-2, 1e-4], expected=2.0, tolerance=0.05).rate
    2.0
    """

    residual: float
    tolerance: float
    passed: bool
    sizes: dict[str, Any] = field(default_factory=dict)
    rate: float | None = None
    expected_rate: float | None = None

    @classmethod
    def from_residual(cls, residual: float, tolerance: float, **sizes: Any) -> Verification:
        """Pass when ``residual <= tolerance``; a NaN residual fails."""
        residual = float(residual)
        return cls(residual, float(tolerance), bool(residual <= tolerance), sizes)

    @classmethod
    def from_rate(
        cls,
        parameters: Sequence[float],
        errors: Sequence[float],
        expected: float,
        tolerance: float,
        **sizes: Any,
    ) -> Verification:
        """Fit the rate of ``errors`` in ``parameters``; pass when within ``tolerance`` of ``expected``."""
        rate = fit_rate(parameters, errors)
        residual = abs(rate - expected)
        return cls(residual, float(tolerance), bool(residual <= tolerance), sizes, rate, expected)


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of an identity, with a case outside it where the statement fails.

    A hypothesis is tested, not decoration: ``outside(rng)`` measures the identity's own statement on
    a case that violates this hypothesis (and only this one) and returns the :class:`Verification`,
    which must *fail* — its residual above its tolerance.  The test suite runs every outside case and
    asserts exactly that, so a hypothesis that is not needed shows up as an outside case that passes.

    Parameters
    ----------
    text : str
        The hypothesis in words and unicode maths, e.g. ``"the nodes sample a density q > 0 (any q)"``.
    case : str
        The outside case in words, e.g. ``"C₄: the cycle on 4 vertices (n < 5)"``.  Empty when there is
        none (then ``reason`` says why).
    outside : callable or None
        ``outside(rng) -> Verification`` on the outside case; ``None`` when the hypothesis only fixes
        what the statement's symbols mean (a type, a definition), so that no outside case can be posed.
    reason : str
        Why there is no outside case; required when ``outside`` is ``None``.

    Examples
    --------
    >>> h = Hypothesis("n ≥ 5", "C₄ (n = 4)", lambda rng: Verification.from_residual(2.0, 1e-12, n=4))
    >>> outcome = h.outside(None)
    >>> outcome.passed, outcome.residual > outcome.tolerance
    (False, True)
    """

    text: str
    case: str = ""
    outside: Callable[[np.random.Generator], Verification] | None = None
    reason: str = ""

    def __post_init__(self):
        """Refuse a hypothesis with neither an outside case nor a reason for having none."""
        if not isinstance(self.text, str) or not self.text.strip():
            raise CatalogueError(f"Hypothesis text must be a non-empty string, got {self.text!r}")
        if self.outside is None and not self.reason.strip():
            raise CatalogueError(f"hypothesis {self.text!r} has no outside case: give `outside` or a `reason`")
        if self.outside is not None and not self.case.strip():
            raise CatalogueError(f"hypothesis {self.text!r} has an outside check: describe it in `case`")

    def describe(self) -> dict[str, str]:
        """The JSON-ready form shown by ``workbench list --json``."""
        out = {"text": self.text}
        out.update({"outside": self.case} if self.outside is not None else {"no_outside_case": self.reason})
        return out


def _as_derivation(derive: Callable[[], list[Step]], name: str) -> Derivation:
    steps = derive()
    return Derivation(steps, title=steps.title if isinstance(steps, Derivation) and steps.title else name)


@dataclass(frozen=True)
class Identity:
    """A catalogued identity: statement, source, symbolic derivation and numeric check.

    Parameters
    ----------
    name : str
        Dotted name, e.g. ``"markov.dirichlet_form.gauss"``.
    area : str
        The area it belongs to (``"structure"``, ``"markov"``, ``"continuum"``...).
    statement : str
        The identity in LaTeX.
    source : str
        Where it comes from (paper section and equation, or ``[RECON]``/``[DERIVED]``).
    derive : callable
        ``derive() -> list[Step]``; every claimed step must hold.  The record wraps it so that
        ``identity.derive()`` returns a :class:`~workbench.symbolic.Derivation` (a list of the steps
        that renders in a notebook).
    verify : callable
        ``verify(rng, scale, backend) -> Verification``.
    backends : tuple of str
        Numeric backend families it supports: ``"numpy"`` and/or ``"torch"``.
    asymptotic : bool
        Whether ``verify`` checks a rate rather than a residual.
    hypotheses : tuple of Hypothesis
        What the statement assumes (sampling law, metric, reversibility, sizes, bandwidth regime,
        convergence radius, …), each with a case outside it where the statement fails.  Empty only
        for an identity that holds for every input of the types its statement names.
    """

    name: str
    area: str
    statement: str
    source: str
    derive: Callable[[], list[Step]]
    verify: Callable[[np.random.Generator, str, str], Verification]
    backends: tuple[str, ...] = ("numpy", "torch")
    asymptotic: bool = False
    hypotheses: tuple[Hypothesis, ...] = ()

    def __post_init__(self):
        """Wrap ``derive`` so that it returns a :class:`~workbench.symbolic.Derivation`; check the hypotheses."""
        object.__setattr__(self, "hypotheses", tuple(self.hypotheses))
        for item in self.hypotheses:
            if not isinstance(item, Hypothesis):
                raise CatalogueError(
                    f"{self.name}: hypotheses must be workbench.catalogue.Hypothesis records, got {type(item).__name__}"
                )
        if not (isinstance(self.derive, partial) and self.derive.func is _as_derivation):
            object.__setattr__(self, "derive", partial(_as_derivation, self.derive, self.name))

    def describe(self) -> dict[str, Any]:
        """Return the JSON-ready description used by ``workbench list``."""
        return {
            "name": self.name,
            "area": self.area,
            "source": self.source,
            "statement": self.statement,
            "asymptotic": self.asymptotic,
            "backends": list(self.backends),
            "hypotheses": [h.describe() for h in self.hypotheses],
        }


@dataclass(frozen=True)
class Result:
    """One row of a check run: an identity on one backend."""

    name: str
    area: str
    backend: str
    passed: bool
    residual: float | None = None
    tolerance: float | None = None
    rate: float | None = None
    expected_rate: float | None = None
    sizes: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; non-finite floats become strings so the document stays valid JSON."""

        def clean(x):
            if isinstance(x, float) and not math.isfinite(x):
                return str(x)
            return x

        return {k: clean(v) for k, v in self.__dict__.items()}


def _identities_of(loaded: Any, origin: str) -> list[Identity]:
    if isinstance(loaded, ModuleType):
        if not hasattr(loaded, "IDENTITIES"):
            raise CatalogueError(f"{origin}: module {loaded.__name__} has no IDENTITIES sequence")
        found = loaded.IDENTITIES
    elif callable(loaded):
        found = loaded()
    else:
        found = loaded
    found = list(found)
    for item in found:
        if not isinstance(item, Identity):
            raise CatalogueError(f"{origin}: expected workbench.catalogue.Identity records, got {type(item).__name__}")
    return found


def _load_file(path: Path) -> ModuleType:
    """Import the Python file ``path`` as a module of its own (its folder on ``sys.path`` while it loads)."""
    import importlib.util
    import sys

    name = f"workbench_user_identities_{zlib.crc32(str(path).encode()):08x}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a source loader
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    sys.path.insert(0, str(path.parent))  # so that the file can import its neighbours (helpers beside it)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        sys.path.remove(str(path.parent))
    return module


def _path_sources(path: str | Path) -> list[tuple[str, Callable[[], Any]]]:
    """``(origin, load)`` for each identity file named by ``path``: the file, or a folder's ``*.py`` files.

    In a folder, files whose name starts with ``_`` are helpers and are not read for identities, and a module
    without ``IDENTITIES`` is skipped; a file named on its own must have them.
    """
    given = Path(path).expanduser()
    if given.is_file():
        if given.suffix != ".py":
            raise ValueError(f"path must be a Python file (.py) or a folder of them, got {str(path)!r}")
        files, required = [given], True
    elif given.is_dir():
        files, required = sorted(f for f in given.glob("*.py") if not f.name.startswith("_")), False
        if not files:
            raise ValueError(f"path must be a Python file (.py) or a folder of them, got {str(path)!r} (no .py file)")
    else:
        raise ValueError(f"path must be a Python file (.py) or a folder of them, got {str(path)!r} (not found)")
    sources = []
    for file in files:
        resolved = file.resolve()

        def load(resolved=resolved, required=required):
            module = _load_file(resolved)
            return module if required or hasattr(module, "IDENTITIES") else []

        sources.append((f"file {str(file)!r}", load))
    return sources


def discover(
    group: str = ENTRY_POINT_GROUP,
    *,
    paths: Sequence[str | Path] = (),
    failures: list[str] | None = None,
) -> list[Identity]:
    """Load every identity registered under the entry-point ``group``, and those in ``paths``, sorted by name.

    ``paths`` names Python files, or folders of them, that define ``IDENTITIES`` with no packaging (the command
    line's ``--path``): each file is imported as a module of its own.  A source that fails to load (an entry point
    or a file that raises on import, or that holds something other than :class:`Identity` records) raises
    :class:`CatalogueError`, unless ``failures`` is a list: then one line naming the source and its error is
    appended to it, and the other sources are still read.

    Raises
    ------
    CatalogueError
        If a source fails to load (and ``failures`` is None), or two identities share a name.
    ValueError
        If a path is neither a ``.py`` file nor a folder holding one.

    Examples
    --------
    >>> names = [identity.name for identity in discover()]
    >>> "markov.dirichlet_form.gauss" in names
    True
    """
    from importlib.metadata import entry_points  # here, not at import: `workbench derive` never needs it

    sources = [
        (f"entry point {entry.name!r} ({entry.value}) in group {group!r}", entry.load)
        for entry in sorted(entry_points(group=group), key=lambda e: e.name)
    ]
    for path in paths:
        sources.extend(_path_sources(path))
    identities: dict[str, Identity] = {}
    for origin, load in sources:
        try:
            found = _identities_of(load(), origin)
        except Exception as exc:
            error = exc if isinstance(exc, CatalogueError) else CatalogueError(f"{origin} failed to load: {exc!r}")
            if failures is None:
                raise error from exc
            failures.append(str(error))
            continue
        for identity in found:
            if identity.name in identities:
                raise CatalogueError(f"{origin}: identity name {identity.name!r} is registered twice")
            identities[identity.name] = identity
    return [identities[name] for name in sorted(identities)]


def select(identities: Iterable[Identity], name: str | None = None, area: str | None = None) -> list[Identity]:
    """Filter by exact name, dotted name prefix (``"markov"`` matches ``"markov.x"``) and area.

    Raises
    ------
    ValueError
        If the filter matches nothing; the message lists what exists.

    Examples
    --------
    >>> sorted({i.area for i in select(discover(), name="structure")})
    ['structure']
    """
    identities = list(identities)
    chosen = identities
    if area is not None:
        chosen = [i for i in chosen if i.area == area]
        if not chosen:
            areas = sorted({i.area for i in identities})
            raise ValueError(f"area must be one of {', '.join(areas)}, got {area!r}")
    if name is not None:
        chosen = [i for i in chosen if i.name == name or i.name.startswith(name + ".")]
        if not chosen:
            raise ValueError(
                f"name must be an identity or a dotted prefix of one, got {name!r}; "
                "`workbench list` shows the catalogue"
            )
    return chosen


def _rng_for(seed: int, name: str) -> np.random.Generator:
    # Each identity gets its own stream, independent of run order and equal on every backend.
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _run_symbolic(identity: Identity) -> Result:
    start = time.perf_counter()
    try:
        steps = identity.derive()
        claims = [s for s in steps if s.holds is not None]
        failed = [s.text for s in claims if not s.holds]
        passed = bool(claims) and not failed
        error = None
        if not claims:
            error = "derive() claimed no equality"
        elif failed:
            error = "symbolic claims failed: " + "; ".join(failed)
        return Result(
            identity.name,
            identity.area,
            "sympy",
            passed,
            residual=float(len(failed)),
            tolerance=0.0,
            sizes={"claims": len(claims)},
            seconds=time.perf_counter() - start,
            error=error,
        )
    except Exception as exc:
        return Result(
            identity.name,
            identity.area,
            "sympy",
            False,
            seconds=time.perf_counter() - start,
            error=_describe(exc),
        )


def _describe(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" (at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _run_numeric(identity: Identity, seed: int, scale: str, backend: str) -> Result:
    start = time.perf_counter()
    try:
        outcome = identity.verify(_rng_for(seed, identity.name), scale, backend)
        if not isinstance(outcome, Verification):
            raise CatalogueError(f"verify() must return a Verification, got {type(outcome).__name__}")
        return Result(
            identity.name,
            identity.area,
            backend,
            outcome.passed,
            residual=outcome.residual,
            tolerance=outcome.tolerance,
            rate=outcome.rate,
            expected_rate=outcome.expected_rate,
            sizes=dict(outcome.sizes),
            seconds=time.perf_counter() - start,
        )
    except Exception as exc:
        return Result(
            identity.name,
            identity.area,
            backend,
            False,
            seconds=time.perf_counter() - start,
            error=_describe(exc),
        )


def _identity_list(identities: Iterable[Identity]) -> list[Identity]:
    """``identities`` as a list, refusing a string, a single record or a non-record item by name."""
    if isinstance(identities, (str, Identity)):
        shown = f"the string {identities!r}" if isinstance(identities, str) else "one Identity"
        raise TypeError(
            f"identities must be an iterable of Identity records, e.g. select(discover(), area=...), got {shown}"
        )
    identities = list(identities)
    for i, identity in enumerate(identities):
        if not isinstance(identity, Identity):
            raise TypeError(f"identities[{i}] must be an Identity, got {type(identity).__name__}")
    return identities


def run_checks(
    identities: Iterable[Identity],
    *,
    seed: int = 0,
    scale: str = "small",
    backends: Sequence[str] = ("numpy",),
    symbolic: bool = True,
    progress: Callable[[str], None] | None = None,
    workers: int = 1,
) -> list[Result]:
    """Run the symbolic derivation and the numeric verifications of ``identities``.

    Parameters
    ----------
    identities : iterable of Identity
    seed : int
        Seed of the per-identity random streams.
    scale : {'small', 'large'}
        Problem sizes handed to ``verify``.
    backends : sequence of str
        Numeric backends (see :data:`workbench.backend.BACKENDS`); an identity is run
        on those whose family (``"numpy"``/``"torch"``) it lists.
    symbolic : bool
        Whether to also run ``derive()`` and decide its claims (backend ``"sympy"``).
    progress : callable, optional
        Called with a label after each task, for progress display (in the order tasks finish).
    workers : int
        Processes running the tasks (each row is independent: its own random stream, seeded by the identity's
        name, so the numbers do not depend on the split).  The rows come back in the order of a serial run.  Forked
        from this process, each with one BLAS and one torch thread; a run on ``torch:cuda`` runs serially (CUDA does
        not survive a fork), as does a platform without fork.

    Returns
    -------
    list of Result
        A failing check, or one that raised, is a ``Result`` with ``passed=False``; the
        runner itself never raises for a broken identity (a worker process that dies fails its row, naming it).

    Examples
    --------
    >>> results = run_checks(select(discover(), name="expmv.rank_one"), seed=1)
    >>> [(r.backend, r.passed) for r in results]
    [('sympy', True), ('numpy', True)]
    """
    check_choice("scale", scale, SCALES)
    seed = check_integer("seed", seed, 0)
    workers = check_integer("workers", workers, 1)
    tasks = []
    for identity in _identity_list(identities):
        if symbolic:
            tasks.append((identity, "sympy"))
        tasks += [(identity, b) for b in backends if b.split(":", 1)[0] in identity.backends]
    run = partial(_run_task, seed=seed, scale=scale)
    serial = workers == 1 or len(tasks) < 2 or any(b.startswith("torch:cuda") for b in backends)
    if serial or "fork" not in multiprocessing.get_all_start_methods():
        results = []
        for task in tasks:
            results.append(run(task))
            if progress:
                progress(f"{task[0].name} [{task[1]}]")
        return results
    return _run_forked(tasks, run, min(workers, len(tasks)), progress)


def _run_task(task: tuple[Identity, str], seed: int, scale: str) -> Result:
    identity, kind = task
    return _run_symbolic(identity) if kind == "sympy" else _run_numeric(identity, seed, scale, kind)


#: What the forked workers of :func:`_run_forked` run: set before the fork, read by index in the children.
_FORKED: tuple[list, Callable] | None = None


def _one_thread_each() -> None:
    """In a forked worker: one BLAS thread and one torch thread.

    The workers are the parallelism; and a torch thread pool inherited through fork would wait forever.
    """
    import sys

    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _task_in_worker(index: int) -> Result:
    tasks, run = _FORKED
    return run(tasks[index])


def _run_forked(tasks: list, run: Callable, workers: int, progress) -> list[Result]:
    """The tasks' results in their order, from ``workers`` forked processes (the longest-running first)."""
    global _FORKED
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    results: list[Result | None] = [None] * len(tasks)
    _FORKED = (tasks, run)
    context = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_one_thread_each) as pool:
            futures = {pool.submit(_task_in_worker, i): i for i in _heaviest_first(tasks)}
            for future in as_completed(futures):
                index = futures[future]
                identity, kind = tasks[index]
                try:
                    results[index] = future.result()
                except BrokenProcessPool as exc:  # a worker died (killed, out of memory): its row fails, named
                    results[index] = Result(identity.name, identity.area, kind, False, error=f"worker died: {exc}")
                if progress:
                    progress(f"{identity.name} [{kind}]")
    finally:
        _FORKED = None
    return results


#: Areas whose rows take seconds (symbolic limits, curvature operators): started first, so that two workers finish
#: together instead of one waiting on the last long row.
_HEAVY_AREAS = ("continuum",)


def _heaviest_first(tasks: list) -> list[int]:
    return sorted(range(len(tasks)), key=lambda i: (tasks[i][0].area not in _HEAVY_AREAS, i))


def run_outside_cases(
    identities: Iterable[Identity],
    *,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[Result]:
    """Run every hypothesis's outside case: the statement measured where that hypothesis fails.

    A row passes when the statement **fails** there as predicted (its residual above its tolerance, a NaN
    residual does not count); a row that fails says the hypothesis may not be needed, or the case does not
    leave it.  Hypotheses without an outside case (definitions) give no row.  The backend column reads
    ``outside H<k>``, k numbering the identity's hypotheses from 1.

    Examples
    --------
    >>> rows = run_outside_cases(select(discover(), name="markov.curvature.graphs"))
    >>> all(r.passed for r in rows) and all(r.residual > r.tolerance for r in rows)
    True
    """
    seed = check_integer("seed", seed, 0)
    results = []
    for identity in _identity_list(identities):
        for number, hypothesis in enumerate(identity.hypotheses, 1):
            if hypothesis.outside is None:
                continue
            label = f"outside H{number}"
            rng = np.random.default_rng([seed, zlib.crc32(f"{identity.name}/{number}".encode())])
            start = time.perf_counter()
            try:
                outcome = hypothesis.outside(rng)
                if not isinstance(outcome, Verification):
                    raise CatalogueError(f"outside() must return a Verification, got {type(outcome).__name__}")
                as_predicted = (not outcome.passed) and bool(outcome.residual > outcome.tolerance)
                results.append(
                    Result(
                        identity.name,
                        identity.area,
                        label,
                        as_predicted,
                        residual=outcome.residual,
                        tolerance=outcome.tolerance,
                        rate=outcome.rate,
                        expected_rate=outcome.expected_rate,
                        sizes={"case": hypothesis.case, **outcome.sizes},
                        seconds=time.perf_counter() - start,
                        error=None if as_predicted else f"the statement holds outside: {hypothesis.case}",
                    )
                )
            except Exception as exc:
                results.append(
                    Result(
                        identity.name,
                        identity.area,
                        label,
                        False,
                        sizes={"case": hypothesis.case},
                        seconds=time.perf_counter() - start,
                        error=_describe(exc),
                    )
                )
            if progress:
                progress(f"{identity.name} [{label}]")
    return results
