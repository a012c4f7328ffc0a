"""The commands on real models: ``diagnose`` (a text, or a corpus run) and ``study`` (connection-walk, head-subspaces).

The models, corpora and their readings live in :mod:`workbench.models` and :mod:`workbench.experiments`; this
module checks the options (before any model is loaded or run directory made) and prints the tables.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli._common import (
    Interrupted,
    format_number,
    positive,
    print_csv,
    print_json,
    resume_command,
    rich_console,
    rich_table,
    seed_list,
)

__all__ = []  # package-internal: the command line's index dispatches to cmd_diagnose and cmd_study

if TYPE_CHECKING:
    from rich.table import Table


MODELS = ("minilm",)

# The diagnose tables: one (header, cell) pair per column, the cell read from a layer or head record.
_LAYER_COLUMNS = (
    ("layer", lambda r: str(r.layer)),
    ("H̄", lambda r: format_number(r.entropy)),
    ("mean e^H̄_h", lambda r: format_number(r.mean_effective_neighbours)),
    ("e^(mean H̄_h)", lambda r: format_number(r.effective_neighbours_of_mean_entropy)),
    ("ε_rev(A_eff)", lambda r: format_number(r.eps_rev)),
    ("ε_rev content", lambda r: format_number(r.eps_rev_content)),
    ("ρ_skew", lambda r: format_number(r.rho_skew)),
    ("δ_orth", lambda r: format_number(r.delta_orth)),
    ("d_A→next", lambda r: format_number(r.drift)),
    ("‖A_eff‖_F", lambda r: format_number(r.a_eff_norm)),
    ("Ḡ diag/off", lambda r: format_number(r.gram_diagonal_ratio)),
    ("ℰ_c/‖X‖²_π", lambda r: format_number(r.energy_ratio)),
    ("loop defect", lambda r: format_number(r.loop_inconsistency)),
    ("ρ(QK, attn)", lambda r: format_number(r.subspace_rho)),
    ("corners", lambda r: " ".join(f"{k}:{v}" for k, v in r.corners.items() if v)),
)
_HEAD_COLUMNS = (
    ("layer", lambda r: str(r.layer)),
    ("head", lambda r: str(r.head)),
    ("H̄", lambda r: format_number(r.entropy)),
    ("e^H̄", lambda r: format_number(r.effective_neighbours)),
    ("ε_rev", lambda r: format_number(r.eps_rev)),
    ("ρ_skew", lambda r: format_number(r.rho_skew)),
    ("δ_orth(M_h)", lambda r: format_number(r.delta_orth)),
    ("inertia", lambda r: "—" if r.inertia is None else "/".join(str(c) for c in r.inertia)),
    ("neg. mass", lambda r: format_number(r.negative_mass)),
    ("prev-tok", lambda r: format_number(r.previous_token)),
    ("induction", lambda r: format_number(r.induction)),
    (
        "nearest corner (TV)",
        lambda r: "—" if r.corner is None else f"{r.nearest_constrained} ({r.corner_distance:.2f})",
    ),
    ("reads as", lambda r: r.corner or "—"),
)


def _add_columns(table: Table, columns, records) -> None:
    """Fill ``table`` with one right-justified column per ``(header, cell)`` and one row per record."""
    for header, _ in columns:
        table.add_column(header, justify="right")
    for record in records:
        table.add_row(*(cell(record) for _, cell in columns))


def cmd_diagnose(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits

    if args.model not in MODELS:
        raise ValueError(f"--model must be one of {', '.join(MODELS)}, got {args.model!r}")
    inputs = {
        "--text": args.text,
        "--corpus": args.corpus,
        "--image": args.image,
        "--images": args.images,
        "--audio": args.audio,
    }
    if sum(v is not None for v in inputs.values()) != 1:
        raise ValueError(
            "give exactly one of --text TEXT (one text), --corpus FILE|DIR|shakespeare (a corpus), --image FILE (one "
            "image), --images DIR (a folder of images) and --audio WAV (one recording)"
        )
    if args.images is not None and args.plot:
        raise ValueError("--plot draws one input's heatmaps: give --image, or drop --plot")
    corpus_only = {"--out": args.out, "--resume": args.resume}
    if args.images is None:  # --limit counts a corpus's windows or a folder's images
        corpus_only["--limit"] = args.limit
    if args.workers != 1:
        corpus_only["--workers"] = args.workers
    if args.corpus is None and (any(v is not None for v in corpus_only.values()) or args.force):
        given = [k for k, v in corpus_only.items() if v is not None] + (["--force"] if args.force else [])
        raise ValueError(f"{', '.join(given)} apply to a corpus run: give --corpus, or drop them")
    if args.corpus is not None and args.plot:
        raise ValueError("--plot draws one text's heatmaps: give --text, or drop --plot")
    if args.plot:  # before the model runs: a bad path must not cost the computation
        _check_plot_path(args.plot)
    threads = positive(args.threads, "--threads")
    with threadpool_limits(limits=threads):
        model = _load_model(args)
        if args.corpus is not None:
            return _diagnose_corpus(model, args)
        if args.images is not None:
            return _diagnose_images(model, args)
        import warnings

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if args.text is not None:
                report = _diagnose_text(model, args)
            elif args.audio is not None:
                report = _diagnose_audio(model, args.audio)
            else:
                report = _diagnose_image(model, args.image, args)
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
    """The model of ``--model-dir`` (a checkpoint folder of any family read), else the shipped MiniLM."""
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


#: scikit-learn's two sample photographs (offline: they ship in its wheel), as ``--image sample:NAME``.
SAMPLE_IMAGES = ("china", "flower")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")


def _image(spec: str):
    """A file path, or ``sample:china`` / ``sample:flower`` as an array."""
    if spec.startswith("sample:"):
        name = spec.removeprefix("sample:")
        if name not in SAMPLE_IMAGES:
            raise ValueError(f"--image sample:NAME must name one of {', '.join(SAMPLE_IMAGES)}, got {spec!r}")
        from sklearn.datasets import load_sample_image

        return load_sample_image(f"{name}.jpg")
    if not Path(spec).is_file():
        raise ValueError(f"--image must be an image file or sample:china / sample:flower, got {spec!r}")
    return spec


def _vision(model, option: str):
    if not getattr(model, "vision", False):
        raise ValueError(
            f"{option} needs a vision model (vit, deit, clip's vision tower …) in --model-dir, got "
            f"{getattr(model, 'family', 'a text model')} (give --text or --corpus)"
        )
    return model


def _diagnose_image(model, spec: str, args: argparse.Namespace):
    from workbench.models import diagnose_image

    image = _image(spec)
    report = diagnose_image(_vision(model, "--image"), image)
    return report if isinstance(image, str) else replace(report, text=spec)


def _diagnose_audio(model, path: str):
    """A .wav file (any rate, mono or the mean of its channels; integer samples scaled to [-1, 1])."""
    import numpy as np
    from scipy.io import wavfile

    from workbench.models import diagnose_audio

    if not getattr(model, "audio", False):
        raise ValueError(
            f"--audio needs an audio encoder (whisper) in --model-dir, got {getattr(model, 'family', 'a text model')}"
        )
    try:
        rate, samples = wavfile.read(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--audio must be a readable .wav file, got {path!r} ({exc})") from None
    samples = np.asarray(samples)
    if samples.dtype.kind in "iu":
        info = np.iinfo(samples.dtype)
        samples = (samples.astype(np.float64) - (info.max + info.min + 1) / 2) / ((info.max - info.min + 1) / 2)
    if samples.ndim == 2:
        samples = samples.mean(axis=1)
    return diagnose_audio(model, samples, int(rate), label=path)


#: The layer readings averaged over a folder of images (numbers only; None where undefined for an image).
IMAGE_FIELDS = (
    "entropy",
    "mean_effective_neighbours",
    "eps_rev",
    "eps_rev_content",
    "rho_skew",
    "delta_orth",
    "drift",
    "a_eff_norm",
    "energy_ratio",
    "loop_inconsistency",
)


def _diagnose_images(model, args: argparse.Namespace) -> int:
    from workbench.models import diagnose_image

    _vision(model, "--images")
    folder = Path(args.images)
    if not folder.is_dir():
        raise ValueError(f"--images must be a folder of images, got {args.images!r}")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if args.limit is not None:
        files = files[: positive(args.limit, "--limit")]
    if not files:
        raise ValueError(f"--images: {args.images!r} holds no image file ({', '.join(IMAGE_SUFFIXES)})")
    reports = [diagnose_image(model, path) for path in files]
    rows = []
    for layer in range(len(reports[0].layers)):
        for name in IMAGE_FIELDS:
            values = [getattr(r.layers[layer], name) for r in reports]
            values = [v for v in values if v is not None]
            mean = float(sum(values) / len(values)) if values else None
            rows.append({"layer": layer, "field": name, "mean": mean, "n": len(values)})
    if args.json:
        print_json({"model": model.name, "images": [str(p) for p in files], "layers": rows}, indent=1)
    elif args.csv:
        print_csv(({"table": "layers", **row} for row in rows), columns=("table", "layer", "field"))
    else:
        console = rich_console()
        table = rich_table(title=f"{model.name}: per-layer means over {len(files)} images of {args.images}")
        table.add_column("layer", justify="right")
        for name in IMAGE_FIELDS:
            table.add_column(name, justify="right")
        for layer in range(len(reports[0].layers)):
            cells = [format_number(row["mean"]) for row in rows if row["layer"] == layer]
            table.add_row(str(layer), *cells)
        console.print(table)
    return 0


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
            progress=not args.no_progress and not (args.json or args.csv),
            workers=positive(args.workers, "--workers"),
            order=args.order,
        )
    except KeyboardInterrupt:
        raise Interrupted(f"the windows measured so far are kept; continue with: {resume_command(args, out)}") from None
    if args.json:
        print_json({"run": str(run.path), "windows": run.n_records, "layers": run.layers}, indent=1)
    elif args.csv:  # the summary rows of layers.json: one per layer and field (mean, sd, n over the windows)
        print_csv(({"table": "layers", **row} for row in run.layers), columns=("table", "layer", "field"))
    else:
        print(run.table)
        print(f"\n{run.n_records} windows ({run.n_measured} measured now); run directory: {run.path}")
    return 0


#: The formats ``--plot`` writes, chosen by the file's suffix: a raster for screens, vectors for papers.
PLOT_FORMATS = ("png", "svg", "pdf")


def _check_plot_path(plot: str) -> None:
    """Refuse a ``--plot`` path not ending in .png, .svg or .pdf, or whose folder cannot take a file."""
    path = Path(plot)
    if path.suffix.lstrip(".").lower() not in PLOT_FORMATS:
        raise ValueError(
            f"--plot must be a file name ending in one of {', '.join('.' + f for f in PLOT_FORMATS)}, got {plot!r}"
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
        print_json(report.to_dict())
        return
    if args.csv:  # the two tables of the JSON document, in one CSV with a column naming each row's table
        document = report.to_dict()
        print_csv(
            ({"table": table, **row} for table in ("layers", "heads") for row in document[table]),
            columns=("table", "layer", "head"),
        )
        return
    console = rich_console()
    label = report.model if args.model_dir else args.model
    console.print(f"{label}: {len(report.tokens)} tokens {' '.join(report.tokens)}")
    layers = rich_table(
        title="per layer (effective walk A_eff, effective transport O_eff; pairs of non-special tokens)"
    )
    _add_columns(layers, _LAYER_COLUMNS, report.layers)
    console.print(layers)
    heads = rich_table(
        title="per head (inertia +/−/0 of the bias-augmented bond: generically (d_h, d_h, ·) when W_Q ≠ W_K, "
        "so read the negative mass)"
    )
    _add_columns(heads, _HEAD_COLUMNS, report.heads)
    console.print(heads)
    if args.plot:
        console.print(f"figure written to {args.plot}")


def _check_corpus(corpus: str) -> None:
    """A corpus that cannot be read is a usage error (exit 2), found before any run directory is made."""
    from workbench.models import read_corpus

    try:
        read_corpus(corpus)
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise ValueError(f"--corpus: {exc}") from exc


STUDIES = ("connection-walk", "head-subspaces")


def cmd_study(args: argparse.Namespace) -> int:
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
    from workbench.experiments import (
        connection_walk_table,
        jsonable,
        restore_floats,
        run_directory,
        study_connection_walk,
    )

    with threadpool_limits(limits=positive(args.threads, "--threads")):
        models = _study_models(args)
        out = Path(args.resume or args.out or run_directory(args.name, "-".join(m.name for m in models)))
        try:
            result = study_connection_walk(
                models,
                corpus=args.corpus,
                windows=positive(args.windows, "--windows"),
                max_tokens=args.max_tokens,
                lengths=lengths,
                sweep_windows=positive(args.sweep_windows, "--sweep-windows"),
                seed=args.seed,
                out=out,
                progress=not args.no_progress and not (args.json or args.csv),
                force=args.force,
                resume=args.resume is not None,
            )
        except KeyboardInterrupt:
            raise Interrupted(
                f"the models finished so far are kept; continue with: {resume_command(args, out)}"
            ) from None
    if args.json:
        print_json(jsonable(result), indent=1)
    elif args.csv:
        rows = _connection_walk_rows(restore_floats(jsonable(result)))  # JSON types; NaN a float (an empty cell)
        print_csv(rows, columns=("table", "model", "layer", "length"))
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


def _study_head_subspaces(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits

    from workbench.experiments import head_subspaces_table, run_directory, study_head_subspaces

    if args.resume is not None:
        raise ValueError("--resume applies to connection-walk; head-subspaces reruns in minutes")
    permutations = positive(args.permutations, "--permutations")
    with threadpool_limits(limits=positive(args.threads, "--threads")):
        if args.induction is not None:
            from workbench.experiments import InductionConfig, study_induction_subspaces

            if args.model_dirs:
                raise ValueError("give --induction PRESET (trained induction models) or --model-dir, not both")
            config = InductionConfig.preset(args.induction)
            out = Path(args.out or run_directory("head-subspaces-induction", args.induction))
            result = study_induction_subspaces(
                config,
                seeds=seed_list(args.seeds),
                permutations=permutations,
                out=out,
                progress=not args.no_progress and not (args.json or args.csv),
            )
        else:
            models = _study_models(args)
            out = Path(args.out or run_directory(args.name, "-".join(m.name for m in models)))
            result = study_head_subspaces(
                models,
                corpus=args.corpus,
                windows=positive(args.windows, "--windows"),
                max_tokens=args.max_tokens,
                permutations=permutations,
                seed=args.seed,
                out=out,
                progress=not args.no_progress and not (args.json or args.csv),
            )
    if args.json:
        print_json(result, indent=1)
    elif args.csv:
        print_csv(_head_subspaces_rows(result), columns=("table", "model", "layer"))
    else:
        print(head_subspaces_table(result))
        print(f"\nrun directory: {out}")
    return 0


def _model_row(record: dict, model: str, rows: tuple[str, ...]) -> dict:
    """A study's record of one model without its lists of rows: the row of the CSV table ``models``."""
    return {"table": "models", "model": model, **{key: value for key, value in record.items() if key not in rows}}


def _connection_walk_rows(document: dict):
    """The CSV rows of ``study connection-walk``: per model, its layers, the sweep's lengths, the skipped lengths.

    Table ``layers``: mean, sd and n of each metric per layer; ``sweep``: per context length, the layer means;
    ``sweep_layers``: per length and layer; ``skipped``: the lengths not run, with the reason; ``models``: one row
    per model (its settings and null).  The per-window arrays stay in ``results.json``.
    """
    for record in document["models"]:
        model = record["label"]
        yield from ({"table": "layers", "model": model, **layer} for layer in record["layers"])
        for entry in record["sweep"]["lengths"]:
            at = {"model": model, "length": entry["length"], "windows": entry["windows"]}
            yield {"table": "sweep", **at, **entry["layer_mean"]}
            yield from ({"table": "sweep_layers", **at, **layer} for layer in entry["layers"])
        yield from ({"table": "skipped", "model": model, **entry} for entry in record["sweep"]["skipped"])
    for record in document["models"]:  # last: the readings' columns come first in the header
        yield _model_row(record, record["label"], ("layers", "per_window", "sweep"))


def _head_subspaces_rows(document: dict):
    """The CSV rows of ``study head-subspaces``: per model and layer (``--induction``: per seed).

    Table ``layers``: the subspace summaries, the data-aware null and the Mantel tests of one layer (the distance
    matrices as JSON cells); ``pooled_within_layers`` and ``model_wide``: the pooled tests, in the same ``tests.*``
    columns; ``models``: one row per model (its sizes and random null).  ``--induction``: table ``seeds``.
    """
    if document.get("study") == "head-subspaces-induction":
        yield from ({"table": "seeds", **record} for record in document["seeds"])
        return
    pooled = ("pooled_within_layers", "model_wide")
    for record in document["models"]:
        model = record["model"]
        yield from ({"table": "layers", "model": model, **layer} for layer in record["layers"])
        yield from ({"table": key, "model": model, "tests": record[key]} for key in pooled)
    for record in document["models"]:  # last: the readings' columns come first in the header
        yield _model_row(record, record["model"], ("layers", *pooled))


def _lengths(text: str) -> tuple[int, ...]:
    """``--lengths 16,32,64``: context lengths, positive integers."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise ValueError(f"--lengths must be comma-separated positive integers such as 16,32,64, got {text!r}")
    return values
