"""The fuzz harness: every public function, one bad argument at a time.

A :class:`Case` is one valid call of a public function.  :func:`fuzz` replays it once per (parameter, bad
value), every other argument left valid, and records each outcome that breaks the boundary contract:

- a ``ValueError`` or ``TypeError`` whose message names the parameter is a correct refusal;
- a returned result is correct when every number in it is finite (a symbolic result: free of nan, zoo and
  ±oo);
- a numpy scalar or 0-d array where a Python number is valid, and a non-contiguous copy of an array, are not
  bad at all: they must be accepted, with the valid call's result;
- anything else is a finding: another exception type (``IndexError``, ``ZeroDivisionError``,
  ``RuntimeWarning`` escalated by the test configuration, ``MemoryError`` …), a refusal that does not name
  the parameter, a NaN or infinity in the result, or a call that runs past its time budget.

The bad values depend on the valid value's type (see :func:`bad_values`): for arrays NaN and infinite
entries, entries scaled to 1e300 ("huge entries": finite, but products overflow; 1e38 for float32 tensors),
an empty array, a 0-d array, an extra axis, a shape one short, wrong dtypes (strings, complex), float32, a
non-contiguous copy and a torch copy of numpy input (mixed libraries); for sizes and degrees −1, 0, 2.5,
NaN, a huge value and a string; for reals NaN, ±inf, −1, 0, 1e308 and a string.

:func:`wrong_kinds` is the second table, independent of the valid value's type: every parameter is also
given ``None``, a string, a bare object, a ragged list, a bool, an empty array, a dict and, where the valid
value is an array, a read-only view of it with 10⁹ rows and stride 0 (eight bytes of memory per column that
claim gigabytes: a routine must refuse it from its work estimate, not start on it).  ``fuzz(case,
values=wrong_kinds)`` replays a case with those; the accepted outcomes are the same.

Each call runs under a wall-clock budget (``SIGALRM``) and an address-space limit (``RLIMIT_AS``), so a
hang or a runaway allocation is a finding, not a frozen or killed test run; the library's memory budget
(:func:`workbench.memory.memory_limit`) is held to the same allowance, so a routine that estimates its work
refuses before the address-space limit is reached.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import resource
import signal
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse

from workbench.memory import memory_limit

try:
    import torch
except ImportError:  # the fuzz suite runs without torch; torch copies are then not tried
    torch = None

#: Seconds one call may take.  Valid calls in the tables take well under a second; a bad value that makes
#: a routine run 20 s has escaped its work budget.
CALL_SECONDS = 20
#: Bytes of address space one call may add.  A refusal costs nothing; a runaway allocation hits this limit
#: (MemoryError, reported as a finding) long before it exhausts the machine.
CALL_BYTES = 6 * 2**30
#: Replacements that are not bad at all: a numpy scalar or 0-d array where a Python number is valid, and a
#: non-contiguous copy of an array.  They must be accepted, with the valid call's result.
ACCEPTED = ("numpy scalar", "0-d array", "non-contiguous")


@dataclass(frozen=True)
class Case:
    """One valid call of a public function, and what the fuzzer may vary.

    Parameters
    ----------
    function : str
        Dotted public name, e.g. ``"workbench.lie.bch"``, or a method of a public class,
        ``"workbench.markov.MarkovOperator.spectrum"`` (then ``make`` passes the instance first; ``self`` is
        never fuzzed).
    make : callable
        Returns ``(args, kwargs)`` of a valid call (built lazily, fresh for every call, so a function that
        mutates its input cannot spoil the next call).
    fixed : dict
        Parameters not fuzzed, each with the reason (e.g. a flag, a callable, an object built by the library).
    aliases : dict
        Parameter → other words a message may use for it (e.g. ``{"x": ("points",)}``).
    finite : bool
        Whether every number in a result must be finite (False for a function whose correct answer can be
        infinite, such as a distance between disconnected vertices).
    """

    function: str
    make: Callable[[], tuple[tuple, dict]]
    fixed: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    finite: bool = True

    @property
    def id(self) -> str:
        return self.function.removeprefix("workbench.")

    def resolve(self) -> Callable:
        """The callable: a module-level name, or a method of a public class (``pkg.Class.method``)."""
        parts = self.function.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                target = importlib.import_module(".".join(parts[:cut]))
            except ModuleNotFoundError:
                continue
            for name in parts[cut:]:
                target = getattr(target, name)
            return target
        raise ValueError(f"function must be a dotted public name, got {self.function!r}")


class _Timeout(BaseException):
    """Raised by the alarm handler (a BaseException, so no ``except Exception`` in the library hides it)."""


@contextlib.contextmanager
def _budget(seconds: int, extra_bytes: int):
    def alarm(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + extra_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.alarm(seconds)
    try:
        with memory_limit(extra_bytes):  # the library's own estimates are held to the same allowance
            yield
    finally:
        signal.alarm(0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, previous)


def _address_space() -> int:
    with open("/proc/self/statm") as stream:
        pages = int(stream.read().split()[0])
    return pages * resource.getpagesize()


# ---- bad values -------------------------------------------------------------------------------------------


def _is_torch(x) -> bool:
    return torch is not None and isinstance(x, torch.Tensor)


def bad_values(value: Any) -> dict[str, Any]:
    """The bad (or merely unusual) replacements for one valid argument, keyed by a short label."""
    if isinstance(value, bool) or value is None or (callable(value) and not hasattr(value, "shape")):
        return {"a string": "x"} if value is not None and not isinstance(value, bool) else {}
    if isinstance(value, (int, np.integer)):
        return {
            "numpy scalar": np.int64(value),
            "0-d array": np.array(value),
            "-1": -1,
            "0": 0,
            "2.5": 2.5,
            "nan": float("nan"),
            "huge": 10**12,
            "a string": "3",
        }
    if isinstance(value, (float, np.floating)):
        return {
            "numpy scalar": np.float64(value),
            "0-d array": np.array(value),
            "nan": float("nan"),
            "inf": float("inf"),
            "-inf": float("-inf"),
            "-1.0": -1.0,
            "0.0": 0.0,
            "1e308": 1e308,
            "a string": "1.0",
        }
    if isinstance(value, str):
        return {"empty string": "", "unknown name": "no-such-choice", "an int": 3}
    if scipy.sparse.issparse(value):
        return _bad_sparse(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
        return _bad_numpy(value)
    if _is_torch(value) and value.is_floating_point():
        return _bad_torch(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float)) for v in value):
        return {
            "empty": type(value)(),
            "nan entry": type(value)([float("nan"), *value[1:]]),
            "a string entry": type(value)(["x", *value[1:]]),
        }
    return {"a string": "x"}


#: Rows of the stride-0 view in :func:`wrong_kinds`: 10⁹ rows of one point read as 8 GB per column.
HUGE_ROWS = 10**9


class _Object:
    """A bare object with no numeric meaning (its repr keeps refusal messages short)."""

    def __repr__(self) -> str:
        return "<object>"


def wrong_kinds(value: Any) -> dict[str, Any]:
    """Wrong kinds of value for any parameter, whatever the valid value's type.

    A kind the valid value already has is left out (``None`` where ``None`` is valid, a string where a string
    is); a bool is tried where the valid value is a number or an array, since ``True`` is an int to Python and
    a routine must either refuse it by name or answer as it would for ``1``.
    """
    out: dict[str, Any] = {}
    if value is not None:
        out["None"] = None
    if not isinstance(value, str):
        out["a string"] = "x"
    out["an object"] = _Object()
    out["a ragged list"] = [[1.0, 2.0], [3.0]]
    if not isinstance(value, bool):
        out["a bool"] = True
    if not (isinstance(value, np.ndarray) and value.size == 0):
        out["an empty array"] = np.zeros(0)
    out["a dict"] = {}
    array = value if isinstance(value, np.ndarray) else None
    if _is_torch(value):
        array = value.detach().cpu().numpy()
    if array is not None and array.ndim and array.size and array.dtype.kind in "fiub":
        row = np.ascontiguousarray(array[:1])
        view = np.lib.stride_tricks.as_strided(
            row, shape=(HUGE_ROWS, *array.shape[1:]), strides=(0, *row.strides[1:]), writeable=False
        )
        out["a 10⁹-row strided view"] = view
    return out


def _bad_numpy(x: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {}
    real = x.astype(float)
    if x.size:
        nan = real.copy()
        nan.flat[x.size // 2] = np.nan
        inf = real.copy()
        inf.flat[0] = np.inf
        out["nan entry"] = nan
        out["inf entry"] = inf
    out["empty"] = np.zeros((0, *x.shape[1:])) if x.ndim else np.zeros(0)
    if x.size and np.abs(real).max() > 0:
        out["huge entries"] = real * (1e300 / np.abs(real).max())
    if x.ndim:
        out["0-d"] = np.array(1.0)
        out["extra axis"] = np.stack([real, real])
        if x.shape[0] > 1:
            out["one row short"] = real[:-1]
    out["strings"] = np.full(x.shape, "a", dtype=object)
    out["complex"] = real + 1j
    out["float32"] = real.astype(np.float32)
    if x.ndim:
        out["non-contiguous"] = np.repeat(x, 2, axis=-1)[..., ::2]  # same dtype and values, strided
    if torch is not None:
        out["torch copy"] = torch.as_tensor(real)
    return out


def _bad_torch(x) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if x.numel():
        nan = x.clone()
        nan.view(-1)[x.numel() // 2] = float("nan")
        out["nan entry"] = nan
    out["empty"] = x.new_zeros((0, *x.shape[1:])) if x.ndim else x.new_zeros(0)
    if x.numel() and float(x.detach().abs().max()) > 0:
        top = 1e300 if x.dtype == torch.float64 else 1e38  # float32 holds at most 3.4e38
        out["huge entries"] = x.detach() * (top / float(x.detach().abs().max()))
    if x.ndim:
        out["0-d"] = x.new_tensor(1.0)
        out["extra axis"] = torch.stack([x, x])
        if x.shape[0] > 1:
            out["one row short"] = x[:-1]
    out["float32"] = x.to(torch.float32)
    out["numpy copy"] = x.detach().cpu().numpy().copy()
    return out


def _bad_sparse(x) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if x.nnz:
        nan = x.copy().astype(float)
        nan.data[0] = np.nan
        out["nan entry"] = nan
    out["empty"] = scipy.sparse.csr_array((0, 0))
    if x.shape[0] > 1:
        out["one row short"] = scipy.sparse.csr_array(x)[:-1]
    out["float32"] = x.astype(np.float32)
    return out


# ---- outcomes ---------------------------------------------------------------------------------------------


def _numbers(result: Any, depth: int = 0):
    """Every float array/scalar inside a result (dicts, sequences, dataclass-like objects one level deep)."""
    if depth > 4:
        return
    if isinstance(result, (float, np.floating, complex, np.complexfloating)):
        yield np.asarray(result)
    elif isinstance(result, np.ndarray) and result.dtype.kind in "fc":
        yield result
    elif _is_torch(result) and (result.is_floating_point() or result.is_complex()):
        yield result.detach().cpu().numpy()
    elif scipy.sparse.issparse(result) and result.dtype.kind in "fc":
        yield result.data
    elif _is_sympy(result):
        # A symbolic result is finite unless it holds nan, zoo or ±oo: report it as one number, finite or not.
        import sympy

        atoms = (sympy.nan, sympy.zoo, sympy.oo, -sympy.oo)
        yield np.asarray(np.inf if any(result.has(a) for a in atoms) else 0.0)
    elif isinstance(result, dict):
        for v in result.values():
            yield from _numbers(v, depth + 1)
    elif isinstance(result, (list, tuple)):
        for v in result:
            yield from _numbers(v, depth + 1)


def _is_sympy(x) -> bool:
    return (type(x).__module__ or "").startswith("sympy") and hasattr(x, "has")


def names_parameter(message: str, names: tuple[str, ...]) -> bool:
    """Whether a refusal's message names the parameter (as a word, possibly indexed: ``A[0]``, ``x entry``)."""
    return any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) for name in names)


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)


def fuzz(case: Case, values: Callable[[Any], dict[str, Any]] = bad_values) -> tuple[int, list[str]]:
    """Run every (parameter, bad value) call of ``case``; return the number of calls and the findings.

    ``values`` maps a valid argument to its bad replacements: :func:`bad_values` (chosen by the valid value's
    type, the default) or :func:`wrong_kinds` (every kind of wrong value).
    """
    function = case.resolve()
    signature = inspect.signature(function)
    args, kwargs = case.make()
    bound = signature.bind(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # AccuracyWarning and friends: a warning is an answer
        reference = function(*bound.args, **bound.kwargs)
    findings = []
    if case.finite and not all(np.isfinite(v).all() for v in _numbers(reference)):
        findings.append("the valid call itself returns a non-finite number")
    calls = 0
    for parameter in list(bound.arguments):
        kind = signature.parameters[parameter].kind
        if parameter in case.fixed or parameter in ("self", "cls") or kind == inspect.Parameter.VAR_KEYWORD:
            continue
        # A *args parameter is fuzzed one element at a time (``matrices[1] = nan entry``).
        slots = range(len(bound.arguments[parameter])) if kind == inspect.Parameter.VAR_POSITIONAL else [None]
        for slot in slots:
            valid = bound.arguments[parameter] if slot is None else bound.arguments[parameter][slot]
            for label, bad in values(valid).items():
                calls += 1
                args, kwargs = case.make()
                trial = signature.bind(*args, **kwargs)
                if slot is None:
                    trial.arguments[parameter] = bad
                else:
                    items = list(trial.arguments[parameter])
                    items[slot] = bad
                    trial.arguments[parameter] = tuple(items)
                problem = _outcome(case, function, trial, parameter, label, reference)
                if problem:
                    where = parameter if slot is None else f"{parameter}[{slot}]"
                    findings.append(f"{where} = {label}: {problem}")
    return calls, findings


def _outcome(case: Case, function, trial, parameter: str, label: str, reference) -> str | None:
    names = (parameter, *case.aliases.get(parameter, ()))
    try:
        with _budget(CALL_SECONDS, CALL_BYTES), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            result = function(*trial.args, **trial.kwargs)
    except _Timeout:
        return f"ran past {CALL_SECONDS} s"
    except (ValueError, TypeError) as exc:
        message = str(exc)
        if label in ACCEPTED:
            return f"refused a valid {label}: {message[:160]!r}"
        if names_parameter(message, names):
            return None
        return f"{type(exc).__name__} does not name {parameter!r}: {message[:160]!r}"
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        return f"{type(exc).__name__}: {str(exc)[:160]!r}"
    if case.finite:
        for v in _numbers(result):
            with np.errstate(invalid="ignore"):
                if not np.isfinite(v).all():
                    return "returned a non-finite number"
    if label in ACCEPTED:
        got, want = list(_numbers(result)), list(_numbers(reference))
        if len(got) == len(want) and not all(_same(g, w) for g, w in zip(got, want, strict=True)):
            return f"the {label} changed the result"
    return None


def public_callables(package: str) -> set[str]:
    """Dotted names of the functions and classes a package exports (constants and exceptions excluded)."""
    module = importlib.import_module(package)
    names = set()
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj):
            names.add(f"{package}.{name}")
    return names


def public_methods(package: str) -> set[str]:
    """Dotted names of the public methods (and class/static methods) of the classes a package exports.

    Properties, dunder methods and methods taking no argument but ``self`` are not included.
    """
    module = importlib.import_module(package)
    names = set()
    for name in module.__all__:
        cls = getattr(module, name)
        if not inspect.isclass(cls) or issubclass(cls, BaseException):
            continue
        for attribute, value in vars(cls).items():
            if attribute.startswith("_"):
                continue
            function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
            if not inspect.isfunction(function):
                continue
            parameters = [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
            if parameters:  # a method of no argument but self has nothing to fuzz
                names.add(f"{package}.{name}.{attribute}")
    return names


def run(case: Case, values: Callable[[Any], dict[str, Any]] = bad_values) -> None:
    """Assert that fuzzing ``case`` finds nothing (the message lists every finding)."""
    calls, findings = fuzz(case, values)
    assert calls > 0 or case.fixed, f"{case.id}: nothing was fuzzed"
    assert not findings, f"{case.id}: {len(findings)} of {calls} calls broke the contract:\n  " + "\n  ".join(findings)


__all__ = [
    "CALL_BYTES",
    "CALL_SECONDS",
    "HUGE_ROWS",
    "Case",
    "bad_values",
    "fuzz",
    "names_parameter",
    "public_callables",
    "public_methods",
    "run",
    "wrong_kinds",
]
