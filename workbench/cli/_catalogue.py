"""The catalogue commands: ``list``, ``check``, ``derive`` (a Lie series or an identity's steps) and ``bench``."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from workbench.backend import available_backends
from workbench.catalogue import Result, discover, run_checks, run_outside_cases, select
from workbench.cli._common import (
    Interrupted,
    format_number,
    print_csv,
    print_json,
    rich_console,
    rich_escape,
    rich_table,
)

__all__ = []  # package-internal: the command line's index dispatches to cmd_list, cmd_check, cmd_derive, cmd_bench

if TYPE_CHECKING:
    from rich.table import Table


def _catalogue(args: argparse.Namespace) -> tuple[list, list[str]]:
    """The identities of the installed catalogue and of ``--path``, and the sources that failed to load.

    Each failed source (a plugin or file that raises on import) is reported on stderr in one line, and the other
    sources are still read: one broken plugin does not hide the rest of the catalogue.
    """
    failures: list[str] = []
    identities = discover(paths=args.path, failures=failures)
    for line in failures:
        print(f"workbench {args.command}: error: {line}; its identities are left out", file=sys.stderr)
    return identities, failures


def cmd_list(args: argparse.Namespace) -> int:
    found, failed = _catalogue(args)
    identities = select(found, area=args.area)
    if args.json:
        print_json([i.describe() for i in identities])
        return 1 if failed else 0
    if args.csv:  # lists (backends, hypotheses) as JSON cells
        print_csv([i.describe() for i in identities], columns=_LIST_COLUMNS)
        return 1 if failed else 0
    table = rich_table(title=f"workbench catalogue — {len(identities)} identities")
    for column in ("name", "area", "source", "statement"):
        table.add_column(column, overflow="fold")
    for identity in identities:
        table.add_row(*(rich_escape(x) for x in (identity.name, identity.area, identity.source, identity.statement)))
    rich_console().print(table)
    return 1 if failed else 0


#: The columns of ``list --csv``: the keys of :meth:`Identity.describe`, in its order.
_LIST_COLUMNS = ("name", "area", "source", "statement", "asymptotic", "backends", "hypotheses")
#: The columns of ``check --csv`` (the fields of :class:`Result`); the problem sizes follow as ``sizes.<name>``.
_CHECK_COLUMNS = tuple(f.name for f in dataclasses.fields(Result) if f.name != "sizes")


def _backends_for(device: str) -> list[str]:
    found = available_backends()
    if device == "cuda":
        if "torch:cuda" not in found:
            raise ValueError("--device cuda needs torch with a visible CUDA device; none was found")
        return ["torch:cuda"]
    return [b for b in found if b != "torch:cuda"]


#: The most processes ``check`` starts by default (each holds numpy, sympy and torch: ~0.3 GB).
MAX_DEFAULT_WORKERS = 8


def default_workers() -> int:
    """One process per CPU this process may run on, at most :data:`MAX_DEFAULT_WORKERS`."""
    import os

    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, MAX_DEFAULT_WORKERS))


def _run_with_progress(identities, args, backends, quiet: bool) -> list[Result]:
    if args.hypotheses:
        run, kwargs = run_outside_cases, dict(seed=args.seed)
        total = sum(h.outside is not None for i in identities for h in i.hypotheses)
    else:
        run = run_checks
        kwargs = dict(
            seed=args.seed,
            scale=args.scale,
            backends=backends,
            symbolic=not args.numeric_only,
            workers=args.workers or default_workers(),
        )
        total = sum(
            (0 if args.numeric_only else 1) + sum(b.split(":")[0] in i.backends for b in backends) for i in identities
        )
    if quiet:
        return run(identities, **kwargs)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=rich_console(stderr=True), transient=True) as bar:
        task = bar.add_task("checking", total=total)
        return run(identities, progress=lambda label: bar.update(task, advance=1, description=label), **kwargs)


def _format_sizes(sizes: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def _results_table(results: list[Result], args) -> Table:
    passed = sum(r.passed for r in results)
    if args.hypotheses:
        title = (
            f"workbench check --hypotheses — {passed}/{len(results)} outside cases fail as predicted (seed {args.seed})"
        )
    else:
        title = f"workbench check — {passed}/{len(results)} passed (seed {args.seed}, scale {args.scale})"
    table = rich_table(title=title)
    table.add_column("identity", overflow="fold")
    table.add_column("hypothesis" if args.hypotheses else "backend")
    table.add_column("sizes", overflow="fold")
    table.add_column("residual", justify="right")
    table.add_column("tolerance", justify="right")
    table.add_column("rate (expected)", justify="right")
    table.add_column("s", justify="right")
    table.add_column("status")
    for r in results:
        rate = "—" if r.rate is None else f"{r.rate:.3f} ({r.expected_rate:g})"
        if args.hypotheses:
            status = "[green]fails as predicted[/green]" if r.passed else "[bold red]HOLDS[/bold red]"
        else:
            status = "[green]pass[/green]" if r.passed else "[bold red]FAIL[/bold red]"
        table.add_row(
            rich_escape(r.name),
            r.backend,
            _format_sizes(r.sizes),
            format_number(r.residual),
            format_number(r.tolerance),
            rate,
            f"{r.seconds:.2f}",
            status,
        )
    return table


def cmd_check(args: argparse.Namespace) -> int:
    found, unloaded = _catalogue(args)
    identities = select(found, name=args.name, area=args.area)
    if args.hypotheses and (
        args.numeric_only or args.scale != "small" or args.device != "cpu" or args.workers is not None
    ):
        raise ValueError(
            "--hypotheses runs the outside cases at their own size on the CPU, one process: "
            "drop --numeric-only, --scale, --device and --workers"
        )
    backends = _backends_for(args.device)
    try:
        results = _run_with_progress(identities, args, backends, quiet=args.json or args.csv)
    except KeyboardInterrupt:
        raise Interrupted("no results were kept (check writes no files)") from None
    failed = [r for r in results if not r.passed]
    if args.json:
        document = {
            "seed": args.seed,
            "scale": args.scale,
            "backends": ["outside"]
            if args.hypotheses
            else (["sympy", *backends] if not args.numeric_only else backends),
            "passed": not failed and not unloaded,
            "summary": {"total": len(results), "passed": len(results) - len(failed), "failed": len(failed)},
            "results": [r.to_dict() for r in results],
            "unloaded": unloaded,
        }
        print_json(document)
        return 1 if failed or unloaded else 0
    if args.csv:  # the rows of the JSON document's results, NaN as an empty cell (to_dict spells it "nan")
        print_csv([dataclasses.asdict(r) for r in results], columns=_CHECK_COLUMNS)
        return 1 if failed or unloaded else 0
    console = rich_console()
    if args.hypotheses and not results:
        console.print("no outside case to run: the selected identities state no hypothesis that has one")
        return 1 if unloaded else 0
    console.print(_results_table(results, args))
    for r in failed:
        why = r.error or (f"residual {format_number(r.residual)} exceeds tolerance {format_number(r.tolerance)}")
        if args.hypotheses and r.residual is not None:
            why += f" (residual {format_number(r.residual)}, tolerance {format_number(r.tolerance)})"
        console.print(f"[bold red]FAIL[/bold red] {rich_escape(f'{r.name} [{r.backend}]: {why}')}")
    return 1 if failed or unloaded else 0


# The BCH family computed level by level (letters per name): streamed as JSON without building the series.
_LEVEL_SERIES = {"bch": 2, "bch3": 3}
# A run estimated at this many CPU seconds or more says so on stderr before it starts.
ANNOUNCE_SECONDS = 1.0


def _cmd_derive_series(args: argparse.Namespace) -> int:
    from workbench.lie import SERIES, bch_cost, write_bch_json, write_series_json

    degree = 5 if args.degree is None else args.degree
    if degree < 1:
        raise ValueError(f"--degree must be a positive integer, got {degree}")
    if args.name in _LEVEL_SERIES:  # the BCH family says what a long run will cost before it starts
        n_factors = _LEVEL_SERIES[args.name]
        cost = bch_cost(min(degree, 64), n_factors)
        if cost.seconds >= ANNOUNCE_SECONDS:
            print(
                f"{args.name} through degree {degree}: estimated {cost.seconds:.3g} s CPU, "
                f"{cost.bytes / 2**30:.3g} GiB peak",
                file=sys.stderr,
            )
        if args.format == "json" and args.basis == "lyndon":
            write_bch_json(sys.stdout, degree, n_factors)
            return 0
    series = SERIES[args.name](degree)
    if args.format == "json":
        write_series_json(sys.stdout, series, args.basis)
    elif args.format == "latex":
        print(series.to_latex(args.basis))
    else:
        print(series.to_text(args.basis))
    return 0


def cmd_derive(args: argparse.Namespace) -> int:
    from workbench.lie import SERIES

    if args.name in SERIES:
        if args.expand:
            raise ValueError("--expand applies to catalogue identities, not to series")
        return _cmd_derive_series(args)
    found, unloaded = _catalogue(args)
    matches = [i for i in found if i.name == args.name]
    if not matches:
        raise ValueError(
            f"name must be a series ({', '.join(SERIES)}) or a catalogue identity, got {args.name!r}; "
            "`workbench list` shows the catalogue"
        )
    if args.format == "json" or args.degree is not None or args.basis != "lyndon":
        raise ValueError("--format json, --degree and --basis apply to series, not to catalogue identities")
    if args.expand and args.format == "latex":
        raise ValueError("--expand applies to --format text; --format latex always prints the instance")
    identity = matches[0]
    steps = identity.derive()
    out = [f"{identity.name}  —  {identity.source}"]
    if args.format == "latex":
        out.append(f"\\[ {identity.statement} \\]")
        out.extend(_hypotheses_lines(identity, latex=True))
        for number, step in enumerate(steps, 1):
            out.extend(_derive_step_latex(number, step))
    else:
        out.append(f"statement: {identity.statement}")
        out.extend(_hypotheses_lines(identity, latex=False))
        for number, step in enumerate(steps, 1):
            out.extend(_derive_step_text(number, step, args.expand))
    print("\n".join(out))
    return 0 if all(s.holds is not False for s in steps) and not unloaded else 1


def _hypotheses_lines(identity, latex: bool) -> list[str]:
    """The identity's hypotheses, each with the case outside it where the statement fails."""
    if not identity.hypotheses:
        return ["hypotheses: none (holds for every input of the types its statement names)"]
    lines = ["hypotheses:" if not latex else "Hypotheses:"]
    for number, hypothesis in enumerate(identity.hypotheses, 1):
        lines.append(f"  H{number}. {hypothesis.text}")
        if hypothesis.outside is not None:
            lines.append(f"      outside it: {hypothesis.case} — the statement fails there (a test checks it)")
        else:
            lines.append(f"      no outside case: {hypothesis.reason}")
    return lines


def _derive_step_text(number: int, step, expand: bool) -> list[str]:
    """One step of ``workbench derive`` as text: statement, reason, and what sympy checked it on."""
    import sympy as sp

    from workbench.symbolic import describe_instance

    lines = [f"\n{step.mark} {number}. {step.text}"]
    if step.statement is None:  # an undocumented step: the expression is all there is to show
        return [*lines, _indent(sp.pretty(step.expr, use_unicode=True))]
    lines.append(f"   statement: {step.statement}")
    if step.because:
        lines.append(f"   because:   {step.because}")
    instance = describe_instance(step)
    if step.holds is None:
        lines.append(f"   {instance.replace('checked on', 'computed on')}" + ("" if expand else "; --expand shows it"))
    else:
        lines.append(f"   {instance}: {step.mark}")
    return [*lines, _indent(sp.pretty(step.expr, use_unicode=True))] if expand else lines


def _derive_step_latex(number: int, step) -> list[str]:
    import sympy as sp

    from workbench.symbolic import describe_instance

    mark = {None: r"$\cdot$", True: r"$\checkmark$", False: r"$\times$"}[step.holds]
    lines = [f"\n{mark} {number}. {step.text}"]
    if step.statement is not None:
        lines.append(f"\\[ {step.statement} \\]")
    if step.because:
        lines.append(f"because: {step.because}")
    lines.append(f"{describe_instance(step)}:" if step.statement is not None else "")
    lines.append(f"\\[ {sp.latex(step.expr)} \\]")
    return [line for line in lines if line]


def _indent(block: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line for line in block.splitlines())


def cmd_bench(args: argparse.Namespace) -> int:
    from importlib.metadata import entry_points

    found = {e.name: e for e in entry_points(group="workbench.benchmarks")}
    if args.name not in found:
        raise ValueError(f"name must be one of {', '.join(sorted(found))}, got {args.name!r}")
    given = {key: getattr(args, key) for key in _BENCH_OPTIONS if getattr(args, key) is not None}
    module = found[args.name].load()
    declared = tuple(getattr(module, "OPTIONS", ()))  # the run() keywords this benchmark takes
    for key in given:
        if key not in declared:
            takes = ", ".join(_BENCH_OPTIONS.get(k, k) for k in declared) or "no options"
            raise ValueError(f"{_BENCH_OPTIONS[key]} does not apply to the {args.name} benchmark (it takes {takes})")
    try:
        report = module.run(**given)
    except KeyboardInterrupt:
        raise Interrupted("no results were kept (bench writes no files)") from None
    # A report is one main table; a benchmark with several views adds them under "tables".
    parts = [report, *report.get("tables", [])]
    if args.json:
        print_json(report)
        return 0
    if args.csv:  # every table in one CSV: its title in the column "table", the union of the tables' columns
        print_csv(
            (
                {"table": part["title"], **dict(zip(part["columns"], row, strict=False))}
                for part in parts
                for row in part["rows"]
            ),
            columns=("table",),
        )
        return 0
    for part in parts:
        if not part["columns"]:  # e.g. a benchmark skipped by its environment toggle
            rich_console().print(
                rich_escape(part["title"]) + ("\n" + rich_escape(part["notes"]) if part.get("notes") else "")
            )
            continue
        table = rich_table(title=part["title"], caption=part.get("notes"))
        for column in part["columns"]:
            table.add_column(column, justify="right")
        for row in part["rows"]:
            table.add_row(*(rich_escape(str(x)) for x in row))
        rich_console().print(table)
    return 0


#: The bench options of the command line: run() keyword -> flag.  A benchmark declares those it takes in OPTIONS.
_BENCH_OPTIONS = {
    "max_degree": "--max-degree",
    "windows": "--windows",
    "threads": "--threads",
    "size": "--size",
    "device": "--device",
    "out": "--out",
}
