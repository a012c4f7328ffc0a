"""The ``workbench`` command line: list, check, derive, bench, diagnose, study, experiment, sweep, lab, book.

The contract (names, options, exit codes, the ``--json`` documents) is the one in DESIGN.md;
tests drive :func:`main` directly and through a subprocess.

One subject, the parsing and dispatch of ten commands, kept in one module (about 1,270 lines) so that the
whole command-line contract reads in one place; each command's work lives in the library module it calls.
It is at the size where it should become a package (shared helpers, then one module per group of commands:
catalogue, real models, experiments, course); the ``experiment`` and ``sweep`` commands (their config
overrides, ``--resume`` checks and grid parsing) and the ``diagnose``/``study`` tables are the parts to move out
first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import __version__
from workbench.backend import available_backends
from workbench.catalogue import SCALES, CatalogueError, Result, discover, run_checks, select
from workbench.memory import MAX_MEMORY_VARIABLE, parse_size

__all__ = ["main"]


if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# rich is imported where a table or progress bar is drawn: a command that prints JSON (derive, bench --json)
# does not pay for it.


def _table(**kwargs) -> Table:
    from rich.table import Table

    return Table(**kwargs)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _console(stderr: bool = False) -> Console:
    # Off a terminal rich falls back to 80 columns and folds every cell; tables read better wide.
    from rich.console import Console

    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "160"))
    return Console(stderr=stderr, width=width, soft_wrap=False, highlight=False)


class _Interrupted(Exception):
    """SIGINT during a command; the message says what was kept."""


def _strict(value):
    """``value`` with every non-finite float (numpy's too) replaced by ``None``: JSON has no NaN or inf."""
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _print_json(document, indent: int = 2) -> None:
    """Print ``document`` as one strict JSON document (RFC 8259: ``NaN``/``Infinity`` become ``null``)."""
    print(json.dumps(_strict(document), indent=indent, ensure_ascii=False, allow_nan=False))


def _seed(text: str) -> int:
    """The argparse type of ``--seed``: numpy seeds are non-negative integers."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def _format_number(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _format_sizes(sizes: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sizes.items())


def _cmd_list(args: argparse.Namespace) -> int:
    identities = select(discover(), area=args.area)
    if args.json:
        _print_json([i.describe() for i in identities])
        return 0
    table = _table(title=f"workbench catalogue — {len(identities)} identities")
    for column in ("name", "area", "source", "statement"):
        table.add_column(column, overflow="fold")
    for identity in identities:
        table.add_row(*(_escape(x) for x in (identity.name, identity.area, identity.source, identity.statement)))
    _console().print(table)
    return 0


def _backends_for(device: str) -> list[str]:
    found = available_backends()
    if device == "cuda":
        if "torch:cuda" not in found:
            raise ValueError("--device cuda needs torch with a visible CUDA device; none was found")
        return ["torch:cuda"]
    return [b for b in found if b != "torch:cuda"]


def _run_with_progress(identities, args, backends, quiet: bool) -> list[Result]:
    kwargs = dict(seed=args.seed, scale=args.scale, backends=backends, symbolic=not args.numeric_only)
    total = sum(
        (0 if args.numeric_only else 1) + sum(b.split(":")[0] in i.backends for b in backends) for i in identities
    )
    if quiet:
        return run_checks(identities, **kwargs)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=_console(stderr=True), transient=True) as bar:
        task = bar.add_task("checking", total=total)
        return run_checks(
            identities,
            progress=lambda label: bar.update(task, advance=1, description=label),
            **kwargs,
        )


def _results_table(results: list[Result], args) -> Table:
    passed = sum(r.passed for r in results)
    table = _table(title=f"workbench check — {passed}/{len(results)} passed (seed {args.seed}, scale {args.scale})")
    table.add_column("identity", overflow="fold")
    table.add_column("backend")
    table.add_column("sizes", overflow="fold")
    table.add_column("residual", justify="right")
    table.add_column("tolerance", justify="right")
    table.add_column("rate (expected)", justify="right")
    table.add_column("s", justify="right")
    table.add_column("status")
    for r in results:
        rate = "—" if r.rate is None else f"{r.rate:.3f} ({r.expected_rate:g})"
        status = "[green]pass[/green]" if r.passed else "[bold red]FAIL[/bold red]"
        table.add_row(
            _escape(r.name),
            r.backend,
            _format_sizes(r.sizes),
            _format_number(r.residual),
            _format_number(r.tolerance),
            rate,
            f"{r.seconds:.2f}",
            status,
        )
    return table


def _cmd_check(args: argparse.Namespace) -> int:
    identities = select(discover(), name=args.name, area=args.area)
    backends = _backends_for(args.device)
    try:
        results = _run_with_progress(identities, args, backends, quiet=args.json)
    except KeyboardInterrupt:
        raise _Interrupted("no results were kept (check writes no files)") from None
    failed = [r for r in results if not r.passed]
    if args.json:
        document = {
            "seed": args.seed,
            "scale": args.scale,
            "backends": ["sympy", *backends] if not args.numeric_only else backends,
            "passed": not failed,
            "summary": {"total": len(results), "passed": len(results) - len(failed), "failed": len(failed)},
            "results": [r.to_dict() for r in results],
        }
        _print_json(document)
        return 1 if failed else 0
    console = _console()
    console.print(_results_table(results, args))
    for r in failed:
        why = r.error or (f"residual {_format_number(r.residual)} exceeds tolerance {_format_number(r.tolerance)}")
        console.print(f"[bold red]FAIL[/bold red] {_escape(f'{r.name} [{r.backend}]: {why}')}")
    return 1 if failed else 0


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


def _cmd_derive(args: argparse.Namespace) -> int:
    from workbench.lie import SERIES

    if args.name in SERIES:
        if args.expand:
            raise ValueError("--expand applies to catalogue identities, not to series")
        return _cmd_derive_series(args)
    matches = [i for i in discover() if i.name == args.name]
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
        for number, step in enumerate(steps, 1):
            out.extend(_derive_step_latex(number, step))
    else:
        out.append(f"statement: {identity.statement}")
        for number, step in enumerate(steps, 1):
            out.extend(_derive_step_text(number, step, args.expand))
    print("\n".join(out))
    return 0 if all(s.holds is not False for s in steps) else 1


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


def _cmd_bench(args: argparse.Namespace) -> int:
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
        raise _Interrupted("no results were kept (bench writes no files)") from None
    if args.json:
        _print_json(report)
        return 0
    # A report is one main table; a benchmark with several views adds them under "tables".
    for part in [report, *report.get("tables", [])]:
        if not part["columns"]:  # e.g. a benchmark skipped by its environment toggle
            _console().print(_escape(part["title"]) + ("\n" + _escape(part["notes"]) if part.get("notes") else ""))
            continue
        table = _table(title=part["title"], caption=part.get("notes"))
        for column in part["columns"]:
            table.add_column(column, justify="right")
        for row in part["rows"]:
            table.add_row(*(_escape(str(x)) for x in row))
        _console().print(table)
    return 0


#: The bench options of the command line: run() keyword -> flag.  A benchmark declares those it takes in OPTIONS.
_BENCH_OPTIONS = {"max_degree": "--max-degree", "windows": "--windows"}

MODELS = ("minilm",)

# The diagnose tables: one (header, cell) pair per column, the cell read from a layer or head record.
_LAYER_COLUMNS = (
    ("layer", lambda r: str(r.layer)),
    ("H̄", lambda r: _format_number(r.entropy)),
    ("mean e^H̄_h", lambda r: _format_number(r.mean_effective_neighbours)),
    ("e^(mean H̄_h)", lambda r: _format_number(r.effective_neighbours_of_mean_entropy)),
    ("ε_rev(A_eff)", lambda r: _format_number(r.eps_rev)),
    ("ε_rev content", lambda r: _format_number(r.eps_rev_content)),
    ("ρ_skew", lambda r: _format_number(r.rho_skew)),
    ("δ_orth", lambda r: _format_number(r.delta_orth)),
    ("d_A→next", lambda r: _format_number(r.drift)),
    ("‖A_eff‖_F", lambda r: _format_number(r.a_eff_norm)),
    ("Ḡ diag/off", lambda r: _format_number(r.gram_diagonal_ratio)),
    ("ℰ_c/‖X‖²_π", lambda r: _format_number(r.energy_ratio)),
    ("loop defect", lambda r: _format_number(r.loop_inconsistency)),
    ("ρ(QK, attn)", lambda r: _format_number(r.subspace_rho)),
    ("corners", lambda r: " ".join(f"{k}:{v}" for k, v in r.corners.items() if v)),
)
_HEAD_COLUMNS = (
    ("layer", lambda r: str(r.layer)),
    ("head", lambda r: str(r.head)),
    ("H̄", lambda r: _format_number(r.entropy)),
    ("e^H̄", lambda r: _format_number(r.effective_neighbours)),
    ("ε_rev", lambda r: _format_number(r.eps_rev)),
    ("ρ_skew", lambda r: _format_number(r.rho_skew)),
    ("δ_orth(M_h)", lambda r: _format_number(r.delta_orth)),
    ("inertia", lambda r: "/".join(str(c) for c in r.inertia)),
    ("neg. mass", lambda r: _format_number(r.negative_mass)),
    ("prev-tok", lambda r: _format_number(r.previous_token)),
    ("induction", lambda r: _format_number(r.induction)),
    ("nearest corner (TV)", lambda r: f"{r.nearest_constrained} ({r.corner_distance:.2f})"),
    ("reads as", lambda r: r.corner),
)


def _add_columns(table: Table, columns, records) -> None:
    """Fill ``table`` with one right-justified column per ``(header, cell)`` and one row per record."""
    for header, _ in columns:
        table.add_column(header, justify="right")
    for record in records:
        table.add_row(*(cell(record) for _, cell in columns))


def _cmd_diagnose(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits

    if args.model not in MODELS:
        raise ValueError(f"--model must be one of {', '.join(MODELS)}, got {args.model!r}")
    if (args.text is None) == (args.corpus is None):
        raise ValueError("give exactly one of --text TEXT (one text) and --corpus FILE|DIR|shakespeare (a corpus)")
    corpus_only = {"--out": args.out, "--resume": args.resume, "--limit": args.limit}
    if args.workers != 1:
        corpus_only["--workers"] = args.workers
    if args.text is not None and (any(v is not None for v in corpus_only.values()) or args.force):
        given = [k for k, v in corpus_only.items() if v is not None] + (["--force"] if args.force else [])
        raise ValueError(f"{', '.join(given)} apply to a corpus run: give --corpus, or drop them")
    if args.corpus is not None and args.plot:
        raise ValueError("--plot draws one text's heatmaps: give --text, or drop --plot")
    if args.plot:  # before the model runs: a bad path must not cost the computation
        _check_plot_path(args.plot)
    threads = _positive(args.threads, "--threads")
    with threadpool_limits(limits=threads):
        model = _load_model(args)
        if args.corpus is not None:
            return _diagnose_corpus(model, args)
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = _diagnose_text(model, args)
    for warning in caught:  # the input was cut, or had unknown tokens: say so plainly, keep the report
        print(f"workbench diagnose: warning: {warning.message}", file=sys.stderr)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        try:
            from workbench.models import plot_diagnosis

            plot_diagnosis(report, args.plot)
        except OSError as exc:  # e.g. the disk filled up after the check: say so, keep the report
            _print_diagnosis(report, args)
            print(f"workbench diagnose: error: --plot {args.plot!r} could not be written: {exc}", file=sys.stderr)
            return 1
    _print_diagnosis(report, args)
    return 0


def _load_model(args: argparse.Namespace):
    """The model of ``--model-dir`` (any BERT/GPT-2/Llama checkpoint folder), else the shipped MiniLM."""
    from workbench.models import load_minilm, load_model

    try:
        model = load_model(args.model_dir) if args.model_dir else load_minilm()
    except (ModuleNotFoundError, FileNotFoundError) as exc:  # missing weights: a usage error, not a crash
        raise ValueError(str(exc)) from exc
    if args.device == "cpu":
        return model
    from workbench.backend import available_backends

    if "torch:cuda" not in available_backends():
        raise ValueError("--device cuda needs torch with a CUDA GPU, and none is available here; use --device cpu")
    return model.to_backend("torch:cuda")  # the forward pass on the GPU in float64; the readings stay on the host


def _diagnose_text(model, args: argparse.Namespace):
    from workbench.models import diagnose

    label = args.model if not args.model_dir else None
    return diagnose(model, args.text, model_name=label, max_tokens=args.max_tokens)


def _diagnose_corpus(model, args: argparse.Namespace) -> int:
    from workbench.experiments import diagnose_corpus, run_directory

    if args.resume is not None and args.out is not None:
        raise ValueError("give --resume RUN (continue that run) or --out RUN (a new run), not both")
    _check_corpus(args.corpus)  # before a run directory is made for it
    out = Path(args.resume or args.out or run_directory("diagnose", model.name))
    try:
        run = diagnose_corpus(
            model,
            args.corpus,
            out,
            max_tokens=args.max_tokens or 64,
            limit=args.limit,
            resume=args.resume is not None,
            force=args.force,
            progress=not args.no_progress and not args.json,
            workers=_positive(args.workers, "--workers"),
            order=args.order,
        )
    except KeyboardInterrupt:
        raise _Interrupted(f"the windows measured so far are kept; continue with --resume {out}") from None
    if args.json:
        _print_json({"run": str(run.path), "windows": run.n_records, "layers": run.layers}, indent=1)
    else:
        print(run.table)
        print(f"\n{run.n_records} windows ({run.n_measured} measured now); run directory: {run.path}")
    return 0


STUDIES = ("connection-walk", "head-subspaces")


def _cmd_study(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits

    if args.name not in STUDIES:
        raise ValueError(f"name must be one of {', '.join(STUDIES)}, got {args.name!r}")
    if args.name == "head-subspaces":
        return _study_head_subspaces(args)
    if args.induction is not None:
        raise ValueError("--induction applies to the head-subspaces study")
    lengths = _lengths(args.lengths)
    if args.resume is not None and args.out is not None:
        raise ValueError("give --resume RUN (continue that run) or --out RUN (a new run), not both")
    from workbench.experiments import connection_walk_table, jsonable, run_directory, study_connection_walk

    with threadpool_limits(limits=_positive(args.threads, "--threads")):
        models = _study_models(args)
        out = Path(args.resume or args.out or run_directory(args.name, "-".join(m.name for m in models)))
        try:
            result = study_connection_walk(
                models,
                corpus=args.corpus,
                windows=_positive(args.windows, "--windows"),
                max_tokens=args.max_tokens,
                lengths=lengths,
                sweep_windows=_positive(args.sweep_windows, "--sweep-windows"),
                seed=args.seed,
                out=out,
                progress=not args.no_progress and not args.json,
                force=args.force,
                resume=args.resume is not None,
            )
        except KeyboardInterrupt:
            raise _Interrupted(f"the models finished so far are kept; continue with --resume {out}") from None
    if args.json:
        _print_json(jsonable(result), indent=1)
    else:
        print(connection_walk_table(result))
        print(f"\nrun directory: {out}")
    return 0


def _study_models(args: argparse.Namespace) -> list:
    """The models a study reads (``--model-dir`` folders, default MiniLM), its corpus checked before any run dir."""
    from workbench.models import load_minilm, load_model

    try:
        models = [load_model(folder) for folder in args.model_dirs] if args.model_dirs else [load_minilm()]
    except (ModuleNotFoundError, FileNotFoundError) as exc:  # missing weights: a usage error, not a crash
        raise ValueError(str(exc)) from exc
    _check_corpus(args.corpus)
    return models


def _seed_list(text: str) -> list[int]:
    """``--seeds 0,1,2`` or ``--seeds 0-4``."""
    try:
        if "-" in text:
            low, high = (int(part) for part in text.split("-", 1))
            seeds = list(range(low, high + 1))
        else:
            seeds = [int(part) for part in text.split(",")]
    except ValueError:
        seeds = []
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds must be integers >= 0 as 0,1,2 or a range 0-4, got {text!r}")
    return seeds


def _study_head_subspaces(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits

    from workbench.experiments import head_subspaces_table, run_directory, study_head_subspaces

    if args.resume is not None:
        raise ValueError("--resume applies to connection-walk; head-subspaces reruns in minutes")
    permutations = _positive(args.permutations, "--permutations")
    with threadpool_limits(limits=_positive(args.threads, "--threads")):
        if args.induction is not None:
            from workbench.experiments import InductionConfig, study_induction_subspaces

            if args.model_dirs:
                raise ValueError("give --induction PRESET (trained induction models) or --model-dir, not both")
            config = InductionConfig.preset(args.induction)
            out = Path(args.out or run_directory("head-subspaces-induction", args.induction))
            result = study_induction_subspaces(
                config,
                seeds=_seed_list(args.seeds),
                permutations=permutations,
                out=out,
                progress=not args.no_progress and not args.json,
            )
        else:
            models = _study_models(args)
            out = Path(args.out or run_directory(args.name, "-".join(m.name for m in models)))
            result = study_head_subspaces(
                models,
                corpus=args.corpus,
                windows=_positive(args.windows, "--windows"),
                max_tokens=args.max_tokens,
                permutations=permutations,
                seed=args.seed,
                out=out,
                progress=not args.no_progress and not args.json,
            )
    if args.json:
        _print_json(result, indent=1)
    else:
        print(head_subspaces_table(result))
        print(f"\nrun directory: {out}")
    return 0


def _check_corpus(corpus: str) -> None:
    """A corpus that cannot be read is a usage error (exit 2), found before any run directory is made."""
    from workbench.models import read_corpus

    try:
        read_corpus(corpus)
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise ValueError(f"--corpus: {exc}") from exc


def _lengths(text: str) -> tuple[int, ...]:
    """``--lengths 16,32,64``: context lengths, positive integers."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise ValueError(f"--lengths must be comma-separated positive integers such as 16,32,64, got {text!r}")
    return values


def _check_plot_path(plot: str) -> None:
    """Refuse a ``--plot`` path whose format matplotlib cannot write or whose folder cannot take a file."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    formats = FigureCanvasAgg(Figure()).get_supported_filetypes()
    path = Path(plot)
    suffix = path.suffix.lstrip(".").lower()
    if suffix not in formats:
        raise ValueError(
            f"--plot must be a file name ending in one of {', '.join('.' + f for f in sorted(formats))}, got {plot!r}"
        )
    folder = path.parent
    if path.is_dir() or not folder.is_dir():
        raise ValueError(f"--plot must be a file in an existing folder, got {plot!r}")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ValueError(f"--plot must be in a writable folder, got {plot!r} ({exc.strerror or exc})") from None


def _print_diagnosis(report, args: argparse.Namespace) -> None:
    if args.json:
        _print_json(report.to_dict())
        return
    console = _console()
    console.print(f"{args.model}: {len(report.tokens)} tokens {' '.join(report.tokens)}")
    layers = _table(title="per layer (effective walk A_eff, effective transport O_eff; pairs of non-special tokens)")
    _add_columns(layers, _LAYER_COLUMNS, report.layers)
    console.print(layers)
    heads = _table(
        title="per head (inertia +/−/0 of the bias-augmented bond: generically (d_h, d_h, ·) when W_Q ≠ W_K, "
        "so read the negative mass)"
    )
    _add_columns(heads, _HEAD_COLUMNS, report.heads)
    console.print(heads)
    if args.plot:
        console.print(f"figure written to {args.plot}")


def _notebook_dir(requested: str | None) -> Path:
    if requested:
        path = Path(requested)
    else:
        here = Path.cwd() / "notebooks"
        path = here if here.is_dir() else Path(__file__).resolve().parents[1] / "notebooks"
    if not path.is_dir():
        raise ValueError(f"--dir must be a folder of course notebooks, got {str(path)!r}")
    return path


_AXIS_OPTIONS = {
    "operators": "--operator",
    "orders": "--order",
    "architectures": "--architecture",
    "targets": "--targets",
}


def _experiment_config(args: argparse.Namespace, base):
    """The config the options ask for, from ``base`` (a config), and the option that set each changed field."""
    import dataclasses

    overrides = {key: getattr(args, key) for key in ("steps", "seed") if getattr(args, key) is not None}
    sources = {key: f"--{key} {value}" for key, value in overrides.items()}
    fields = {f.name for f in dataclasses.fields(base)}
    for key in overrides:
        if key not in fields:
            raise ValueError(f"--{key} does not apply to this experiment (no {key} field); use --set FIELD=VALUE")
    for item in args.set or ():
        key, sep, text = item.partition("=")
        if not sep or key not in fields:
            raise ValueError(f"--set must be FIELD=VALUE with FIELD one of {', '.join(sorted(fields))}, got {item!r}")
        try:
            overrides[key] = json.loads(text)  # numbers, null, lists; anything else stays a string
        except json.JSONDecodeError:
            overrides[key] = text
        if isinstance(overrides[key], list):
            overrides[key] = tuple(overrides[key])
        sources[key] = f"--set {item}"
    return (dataclasses.replace(base, **overrides) if overrides else base), sources


def _experiment_selection(args: argparse.Namespace, experiment) -> dict:
    selection = {}
    for axis, option in _AXIS_OPTIONS.items():
        chosen = getattr(args, axis)
        if not chosen:
            continue
        if axis not in experiment.axes:
            raise ValueError(f"{option} does not apply to the {args.name} experiment")
        allowed = experiment.axes[axis]
        for value in chosen:
            if value not in allowed:
                raise ValueError(f"{option} must be one of {', '.join(allowed)}, got {value!r}")
        selection[axis] = tuple(dict.fromkeys(chosen))
    return selection


def _resumed_run(args: argparse.Namespace, experiment):
    """The config and selection of the run ``--resume DIR`` continues; options may repeat them, not change them."""
    from workbench.experiments import resumable_run

    for option, given in (("--out", args.out), ("--force", args.force)):
        if given:
            raise ValueError(f"{option} does not apply with --resume, which continues the run in its own directory")
    record = resumable_run(args.resume, "--resume")
    where = f"the run in {args.resume!r}"
    if record["experiment"] != args.name:
        raise ValueError(f"name must be the experiment of {where}, {record['experiment']}, got {args.name!r}")
    recorded = experiment.config.from_json(record["config"])
    base = experiment.config.preset(args.preset) if args.preset is not None else recorded
    requested, sources = _experiment_config(args, base)
    changed = [k for k in record["config"] if getattr(requested, k) != getattr(recorded, k)]
    if changed:
        option = sources.get(changed[0], f"--preset {args.preset}")
        fields = ", ".join(f"{k}={getattr(recorded, k)!r}" for k in changed[:3]) + (", ..." if changed[3:] else "")
        raise ValueError(
            f"{option} conflicts with {where}, recorded with {fields}; --resume continues a run with its own "
            "settings (drop the option, or start a new run)"
        )
    selection = {axis: tuple(values) for axis, values in record["selection"].items()}
    for axis, chosen in _experiment_selection(args, experiment).items():
        if chosen != selection.get(axis):
            raise ValueError(
                f"{_AXIS_OPTIONS[axis]} {' '.join(chosen)} conflicts with {where}, which runs {axis} "
                f"{', '.join(selection.get(axis, ()))}; --resume continues a run with its own selection"
            )
    return recorded, selection


def _interrupted_run(out: Path, name: str) -> str:
    """One line: what the interrupted run kept in ``out`` and how to continue it."""
    try:
        record = json.loads((out / "run.json").read_text(encoding="utf-8"))
        done, planned, status = record["done"], record["conditions"], record["status"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"the run directory {out} keeps nothing (the run had not started)"
    return (
        f"the run directory {out} keeps {len(done)} of {len(planned)} conditions"
        + (f" ({', '.join(done)}: each a .pt state dict and a .json row)" if done else "")
        + f" and is marked {status} in run.json; continue it with: workbench experiment {name} --resume {out}"
    )


def _cmd_experiment(args: argparse.Namespace) -> int:
    try:
        from workbench.experiments import EXPERIMENTS
    except ImportError as exc:  # torch missing: say what to install
        raise ValueError(f"experiments need torch (pip install 'torch==2.13.0'): {exc}") from exc

    if args.name not in EXPERIMENTS:
        raise ValueError(f"name must be one of {', '.join(EXPERIMENTS)}, got {args.name!r}")
    experiment = EXPERIMENTS[args.name]
    if args.preset is not None and args.preset not in experiment.config.PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(experiment.config.PRESETS)}, got {args.preset!r}")
    if args.resume is not None:
        config, selection = _resumed_run(args, experiment)
    else:
        config, _ = _experiment_config(args, experiment.config.preset(args.preset or "quick"))
        selection = _experiment_selection(args, experiment)
    from workbench.experiments import jsonable, run_directory

    if args.threads is not None:
        import torch

        torch.set_num_threads(_positive(args.threads, "--threads"))
    if args.resume is not None:
        out = Path(args.resume)
    elif args.out is not None:
        out = Path(args.out)  # the runner creates it, or refuses it if it holds files and --force is not given
    else:
        out = run_directory(args.name, args.preset or "quick")
    try:
        results = experiment.run(
            config,
            out=out,
            progress=not args.no_progress and not args.json,
            force=args.force,
            resume=args.resume is not None,
            **selection,
        )
    except KeyboardInterrupt:
        raise _Interrupted(_interrupted_run(out, args.name)) from None
    if args.json:
        _print_json(jsonable(results), indent=1)
    else:
        print(experiment.table(results))
        print(f"\nrun directory: {out}")
    failed = [name for name, check in results.get("checks", {}).items() if not _check_passed(check)]
    if failed:
        print(f"workbench experiment: structural checks failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _positive(value: int, option: str) -> int:
    if value < 1:
        raise ValueError(f"{option} must be an integer >= 1, got {value}")
    return value


def _check_passed(check) -> bool:
    """A check is a bool, or a dict with a boolean ``passed``.

    Informational entries (``passed: None``, or ``meaningful: False`` such as the fidelity band of a barely
    trained quick-preset model) never fail the run.
    """
    if isinstance(check, dict):
        return check.get("passed") is not False or check.get("meaningful") is False
    return check is not False


def _grid_values(text: str) -> list:
    """``V1,V2,...`` of ``--grid FIELD=V1,V2,...`` as values, each read as ``--set`` reads its value.

    The whole text is read as one JSON list first (so ``[0.1,0.5],[0.2]`` gives two lists); failing that, each
    comma-separated part is JSON (numbers, null) or else a string.  Lists become tuples, as in ``config.json``.
    """
    try:
        values = json.loads(f"[{text}]")
    except json.JSONDecodeError:
        values = []
        for part in text.split(","):
            try:
                values.append(json.loads(part))
            except json.JSONDecodeError:
                values.append(part)
    return [tuple(v) if isinstance(v, list) else v for v in values]


def _sweep_grid(items: Sequence[str], config_class) -> dict:
    """The ``--grid FIELD=V1,V2,...`` options as a grid dict (field → values), fields checked by name."""
    import dataclasses

    fields = [f.name for f in dataclasses.fields(config_class)]
    grid: dict[str, list] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if key == "seed":
            raise ValueError("--grid seed=... does not apply: --seeds sets the seeds of a sweep")
        if not sep or key not in fields or not text:
            raise ValueError(
                f"--grid must be FIELD=V1,V2,... with FIELD one of {', '.join(sorted(fields))}, got {item!r}"
            )
        if key in grid:
            raise ValueError(f"--grid must name each field once, got {key} twice")
        grid[key] = _grid_values(text)
    return grid


def _interrupted_sweep(out: Path) -> str:
    """One line: what the interrupted sweep kept in ``out`` and how to continue it."""
    try:
        tasks = json.loads((out / "sweep.json").read_text(encoding="utf-8"))["tasks"]
        done = sum(task["status"] == "complete" for task in tasks)
    except (OSError, ValueError, KeyError, TypeError):
        return f"the sweep directory {out} keeps nothing (the sweep had not started)"
    return (
        f"the sweep directory {out} keeps {done} of {len(tasks)} tasks complete (each a run directory); continue "
        f"it by running the same command with --out {out}"
    )


def _cmd_sweep(args: argparse.Namespace) -> int:
    try:
        from workbench.experiments import EXPERIMENTS
    except ImportError as exc:  # torch missing: say what to install
        raise ValueError(f"experiments need torch (pip install 'torch==2.13.0'): {exc}") from exc
    from workbench.experiments import run_directory, run_sweep, sweep_table

    if args.name not in EXPERIMENTS:
        raise ValueError(f"name must be one of {', '.join(EXPERIMENTS)}, got {args.name!r}")
    experiment = EXPERIMENTS[args.name]
    preset = args.preset or "quick"
    if preset not in experiment.config.PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(experiment.config.PRESETS)}, got {preset!r}")
    config, sources = _experiment_config(args, experiment.config.preset(preset))
    if "seed" in sources:
        raise ValueError(f"{sources['seed']} does not apply: --seeds sets the seeds of a sweep")
    overrides = {key: getattr(config, key) for key in sources}
    grid = _sweep_grid(args.grid or (), experiment.config)
    seeds = _seed_list(args.seeds)
    selection = _experiment_selection(args, experiment)
    _positive(args.threads, "--threads")
    if args.workers is not None:
        _positive(args.workers, "--workers")
        if args.scheduler is not None:
            raise ValueError("--workers does not apply with --scheduler, whose cluster has its own workers")
    if args.retries < 0:
        raise ValueError(f"--retries must be an integer >= 0, got {args.retries}")
    created = args.out is None
    out = run_directory(f"sweep-{args.name}", preset) if created else Path(args.out)
    try:
        result = run_sweep(
            args.name,
            preset=preset,
            grid=grid,
            seeds=seeds,
            overrides=overrides,
            selection=selection,
            out=out,
            scheduler=args.scheduler,
            workers=args.workers,
            retries=args.retries,
            progress=not args.no_progress and not args.json,
            threads=args.threads,
        )
    except (ImportError, ValueError, TypeError) as exc:  # refused before any task ran: no empty default folder
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        if isinstance(exc, ImportError):
            raise ValueError(str(exc)) from None
        raise
    except KeyboardInterrupt:
        raise _Interrupted(_interrupted_sweep(out)) from None
    if args.json:
        _print_json(result, indent=1)
    else:
        print(sweep_table(result))
        print(f"\nsweep directory: {out}")
    if result["status"] == "failed":
        failed = [task for task in result["tasks"] if task["status"] == "failed"]
        listed = "; ".join(f"{task['id']} ({task['error']})" for task in failed)
        print(
            f"workbench sweep: {len(failed)} of {len(result['tasks'])} tasks failed after {args.retries} retries: "
            f"{listed}; run the same command again to retry them",
            file=sys.stderr,
        )
        return 1
    return 0


def _cmd_lab(args: argparse.Namespace, extra: Sequence[str]) -> int:
    from workbench.lab import lab_command

    command = lab_command(_notebook_dir(args.dir), extra)
    print("running: " + " ".join(command), file=sys.stderr, flush=True)
    # Become the server (no wrapper process), so a signal to `workbench lab` reaches JupyterLab itself.
    os.execvp(command[0], command)
    return 0  # pragma: no cover - execvp does not return


def _cmd_book(args: argparse.Namespace) -> int:
    from workbench.book import build, serve

    out = Path(args.out) if args.out else None
    if args.action == "serve":
        serve(out, port=args.port)
        return 0
    status = build(out, solutions=not args.without_solutions)
    if status != 0:
        print(f"workbench book: error: the site build failed (sphinx-build exit status {status})", file=sys.stderr)
        return 1
    print(f"built the site in {out or 'book/_build/html'}", file=sys.stderr)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Attention Geometry Workbench: derive identities symbolically, check them numerically.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="the memory budget of every estimate (e.g. 4GiB, 512MB; default: the available memory): work "
        "estimated to need more is refused before it starts (sets WORKBENCH_MAX_MEMORY for the command)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_list = sub.add_parser("list", help="the identity catalogue")
    p_list.add_argument("--area", help="only this area")
    p_list.add_argument("--json", action="store_true", help="one JSON document on stdout")

    p_check = sub.add_parser("check", help="run the verifications; exit 1 if any fails")
    p_check.add_argument("name", nargs="?", help="an identity name or dotted prefix")
    p_check.add_argument("--area", help="only this area")
    p_check.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p_check.add_argument("--seed", type=_seed, default=0, help="random seed, an integer >= 0 (default 0)")
    p_check.add_argument("--scale", choices=SCALES, default="small", help="problem sizes")
    p_check.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu: numpy (+ torch on CPU when installed); cuda: torch on the GPU",
    )
    p_check.add_argument("--numeric-only", action="store_true", help="skip the symbolic derivations")

    p_derive = sub.add_parser("derive", help="a Lie series to a degree, or the symbolic steps of an identity")
    p_derive.add_argument(
        "name", help="bch, symmetric-bch, bch3, commutator, zassenhaus, hausdorff, or a catalogue identity"
    )
    p_derive.add_argument("--degree", type=int, help="series: truncation degree (default 5)")
    p_derive.add_argument(
        "--basis",
        choices=("lyndon", "hall", "chibrikov", "right-normed"),
        default="lyndon",
        help="lyndon; hall: the classical Hall basis of Casas–Murua's tables; chibrikov (= right-normed)",
    )
    p_derive.add_argument("--format", choices=("text", "latex", "json"), default="text")
    p_derive.add_argument(
        "--expand", action="store_true", help="identity: also print each step's symbolic instance in full"
    )

    p_bench = sub.add_parser("bench", help="a benchmark, as a side-by-side ratio table")
    p_bench.add_argument(
        "name", help="bch, bch-fusion, exp-markov, rank1, diffusion-map, expmv, transport-gram, diagnose"
    )
    p_bench.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p_bench.add_argument("--max-degree", type=int, help="bch: highest degree (default 12)")
    p_bench.add_argument("--windows", type=int, help="diagnose: corpus windows through MiniLM (default 1024)")

    p_diagnose = sub.add_parser("diagnose", help="attention-operator diagnostics of a real model, per layer and head")
    p_diagnose.add_argument("--model", default="minilm", help="the shipped model (minilm: all-MiniLM-L6-v2)")
    p_diagnose.add_argument(
        "--model-dir", help="a checkpoint folder (config.json, *.safetensors, tokenizer.json): BERT, GPT-2, Llama"
    )
    p_diagnose.add_argument("--text", help="one text to run the model on")
    p_diagnose.add_argument("--corpus", help="a text file (one text per line), a folder of .txt files, or shakespeare")
    p_diagnose.add_argument(
        "--max-tokens", type=int, help="corpus: tokens per window (default 64); text: cut longer input (default all)"
    )
    p_diagnose.add_argument("--limit", type=int, help="corpus: stop after this many windows")
    p_diagnose.add_argument(
        "--order",
        choices=("interleaved", "sequential"),
        default="interleaved",
        help="corpus: windows across the documents in turn (default), or document after document",
    )
    p_diagnose.add_argument("--out", help="corpus: the run directory (default experiments/runs/diagnose-…)")
    p_diagnose.add_argument("--resume", metavar="RUN", help="corpus: continue the interrupted run in RUN")
    p_diagnose.add_argument("--force", action="store_true", help="corpus: replace the run files in --out")
    p_diagnose.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    p_diagnose.add_argument(
        "--workers", type=int, default=1, help="corpus: processes diagnosing windows in parallel (default 1)"
    )
    p_diagnose.add_argument(
        "--device", choices=("cpu", "cuda"), default="cpu", help="where the forward pass runs (cuda: torch, float64)"
    )
    p_diagnose.add_argument("--no-progress", action="store_true", help="corpus: no progress bar")
    p_diagnose.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p_diagnose.add_argument(
        "--plot", help="text: heatmaps of A_eff, the mean transport Gram and the heads' QK subspace distances, here"
    )

    p_study = sub.add_parser(
        "study", help="a study of real models (connection-walk, head-subspaces), results + figures in a run dir"
    )
    p_study.add_argument("name", help="connection-walk or head-subspaces")
    p_study.add_argument(
        "--model-dir", dest="model_dirs", action="append", help="a checkpoint folder (repeatable; default MiniLM)"
    )
    p_study.add_argument("--corpus", default="shakespeare", help="a text file, a folder of .txt files, or shakespeare")
    p_study.add_argument("--windows", type=int, default=64, help="windows for the layer curves (default 64)")
    p_study.add_argument("--max-tokens", type=int, default=64, help="tokens per window (default 64)")
    p_study.add_argument(
        "--lengths",
        default="16,32,64,128,256,512,1024",
        help="context lengths of the sweep (as far as positions allow)",
    )
    p_study.add_argument("--sweep-windows", type=int, default=8, help="windows per sweep length (default 8)")
    p_study.add_argument("--seed", type=_seed, default=0, help="seed of the null model's maps")
    p_study.add_argument("--out", help="the run directory (default experiments/runs/connection-walk-…)")
    p_study.add_argument("--resume", metavar="RUN", help="continue the interrupted run in RUN")
    p_study.add_argument("--force", action="store_true", help="replace the run files in --out")
    p_study.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    p_study.add_argument(
        "--permutations", type=int, default=9999, help="head-subspaces: Mantel relabellings per test (default 9999)"
    )
    p_study.add_argument(
        "--induction",
        choices=("quick", "paper"),
        help="head-subspaces: train ATTN induction models at this preset instead of reading --model-dir",
    )
    p_study.add_argument("--seeds", default="0-2", help="head-subspaces --induction: seeds, 0,1,2 or 0-4 (default 0-2)")
    p_study.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_study.add_argument("--json", action="store_true", help="one JSON document on stdout")

    p_experiment = sub.add_parser("experiment", help="a reproducible experiment (results + figures in a run dir)")
    p_experiment.add_argument(
        "name",
        help="swiss-sit, sit-transfer, induction, lm, transfer (the seed's tables); long-context, givens-mixer, "
        "magnus-fusion, spd-certified, log-lens (the roadmap's predictions)",
    )
    p_experiment.add_argument(
        "--preset", help="sizes: quick (default) or paper; lm and long-context also gpu (sized for a GPU)"
    )
    p_experiment.add_argument("--operator", dest="operators", action="append", help="only this operator (repeatable)")
    p_experiment.add_argument("--order", dest="orders", action="append", help="swiss-sit: ffn-mhsa or mhsa-ffn")
    p_experiment.add_argument(
        "--architecture", dest="architectures", action="append", help="induction: attn-only or mlp"
    )
    p_experiment.add_argument(
        "--targets", dest="targets", action="append", help="sit-transfer: DMTN or DMAP (repeatable; default both)"
    )
    p_experiment.add_argument("--steps", type=int, help="training steps (overrides the preset)")
    p_experiment.add_argument("--seed", type=_seed, help="random seed, an integer >= 0 (overrides the preset)")
    p_experiment.add_argument(
        "--set", action="append", metavar="FIELD=VALUE", help="override any config field (repeatable; JSON values)"
    )
    p_experiment.add_argument(
        "--out",
        help="run directory (default experiments/runs/NAME-PRESET-TIMESTAMP); an existing one must be empty",
    )
    p_experiment.add_argument(
        "--force",
        action="store_true",
        help="replace the run in a non-empty --out: the files a run writes (run.json, config.json, results.json, "
        "table.md, figures, CONDITION.pt/.json) are removed first; other files are left as they are",
    )
    p_experiment.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the unfinished run in DIR (its run.json says interrupted, failed or running): finished "
        "conditions are kept, the rest run with the settings in DIR/config.json; the results equal an "
        "uninterrupted run's (wall-clock seconds aside)",
    )
    p_experiment.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p_experiment.add_argument("--no-progress", action="store_true", help="no progress bars")
    p_experiment.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads (default 1: fastest for these small models and safe on a shared machine)",
    )

    p_sweep = sub.add_parser(
        "sweep", help="an experiment over a grid of settings × seeds, as tasks on Dask (resumable)"
    )
    p_sweep.add_argument("name", help="an experiment of `workbench experiment` (swiss-sit, induction, ...)")
    p_sweep.add_argument("--preset", help="the preset every task starts from: quick (default), paper, ...")
    p_sweep.add_argument(
        "--grid",
        action="append",
        metavar="FIELD=V1,V2",
        help="vary a config field over these values (repeatable: the cells are every combination; values as --set)",
    )
    p_sweep.add_argument("--seeds", default="0", help="the seeds of every cell: 0,2,5 or a range 0-4 (default 0)")
    p_sweep.add_argument(
        "--set", action="append", metavar="FIELD=VALUE", help="a config field for every task (repeatable; JSON values)"
    )
    for axis, option in _AXIS_OPTIONS.items():
        names = dict.fromkeys((option, f"--{axis}"))  # --operator and --operators alike
        p_sweep.add_argument(
            *names, dest=axis, action="append", metavar="NAME", help=f"only this value of {axis} (repeatable)"
        )
    p_sweep.add_argument(
        "--out",
        help="the sweep directory (default experiments/runs/sweep-NAME-PRESET-TIMESTAMP); the same sweep again on "
        "the same --out keeps complete tasks, continues unfinished ones and retries failed ones",
    )
    p_sweep.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="send the tasks to this running Dask scheduler (default: a local cluster of --workers processes)",
    )
    p_sweep.add_argument("--workers", type=int, help="worker processes of the local cluster (default: one per CPU)")
    p_sweep.add_argument(
        "--retries", type=int, default=2, help="times a failing task is run again before it counts as failed"
    )
    p_sweep.add_argument("--threads", type=int, default=1, help="torch and BLAS threads of each task (default 1)")
    p_sweep.add_argument("--json", action="store_true", help="one JSON document on stdout")
    p_sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_sweep.set_defaults(steps=None, seed=None)  # _experiment_config reads them; a sweep sets them with --set/--seeds

    p_lab = sub.add_parser(
        "lab",
        help="JupyterLab on the course notebooks: a double-click opens a .py percent script as a notebook and "
        "saving writes the .py (no .ipynb twin); extra args go to jupyter lab (--allow-root is added as root)",
    )
    p_lab.add_argument("--dir", help="the notebooks folder (default: ./notebooks)")

    p_book = sub.add_parser("book", help="the course as a static HTML site (Sphinx + myst-nb, offline)")
    book_sub = p_book.add_subparsers(dest="action", required=True)
    p_build = book_sub.add_parser("build", help="execute the notebooks and build the site (warnings are errors)")
    p_build.add_argument("--out", help="the output folder (default book/_build/html)")
    p_build.add_argument("--without-solutions", action="store_true", help="leave the Solutions part out")
    p_serve = book_sub.add_parser("serve", help="serve the built site on 127.0.0.1")
    p_serve.add_argument("--out", help="the built site (default book/_build/html)")
    p_serve.add_argument("--port", type=int, default=8000, help="the port (default 8000)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 ok, 1 a check failed (or a file could not be written), 2 bad usage, 130 interrupted (SIGINT); every
    error and an interrupt are one line on stderr, never a traceback.
    """
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.max_memory is not None:
            parse_size("--max-memory", args.max_memory)
            os.environ[MAX_MEMORY_VARIABLE] = args.max_memory  # inherited by kernels and subprocesses too
        if args.command == "list":
            return _cmd_list(args)
        if args.command == "check":
            return _cmd_check(args)
        if args.command == "derive":
            return _cmd_derive(args)
        if args.command == "bench":
            return _cmd_bench(args)
        if args.command == "diagnose":
            return _cmd_diagnose(args)
        if args.command == "experiment":
            return _cmd_experiment(args)
        if args.command == "sweep":
            return _cmd_sweep(args)
        if args.command == "study":
            return _cmd_study(args)
        if args.command == "book":
            return _cmd_book(args)
        return _cmd_lab(args, extra)
    except (ValueError, TypeError, CatalogueError) as exc:
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        sys.stderr.close()
        return 0
    except _Interrupted as exc:
        print(f"workbench {args.command}: interrupted; {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print(f"workbench {args.command}: interrupted before any result was written", file=sys.stderr)
        return 130
    except OSError as exc:  # the file system refused something the checks above could not foresee
        print(f"workbench {args.command}: error: {exc}", file=sys.stderr)
        return 1


def entry() -> None:
    """The ``workbench`` console script and ``python -m workbench``: :func:`main`, then exit with its status.

    An interrupted command leaves through ``os._exit(130)`` after flushing: CPython remembers a
    KeyboardInterrupt that once crossed a nested evaluation frame (torch runs some), and at exit kills
    itself with SIGINT even though :func:`main` handled it, so the status would read −2 instead of 130.
    """
    code = main()
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(code)
