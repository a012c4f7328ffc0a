"""The argparse parser of ``workbench``: every command and option, the whole command-line contract in one place."""

from __future__ import annotations

import argparse

import workbench
from workbench.catalogue import SCALES
from workbench.cli._experiments import AXIS_OPTIONS

__all__ = []  # package-internal: main() parses with build_parser()


def _seed(text: str) -> int:
    """The argparse type of ``--seed``: numpy seeds are non-negative integers."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def _jobs(text: str) -> int:
    """The argparse type of ``--jobs``: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``workbench`` and its eleven commands (:func:`workbench.cli.main` parses with it)."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Attention Geometry Workbench: derive identities symbolically, check them numerically.",
    )
    # getattr: another project's workbench/__init__.py installed over ours has no version (entry() says so).
    version = getattr(workbench, "__version__", "unknown")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version}")
    parser.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="the memory budget of every estimate (e.g. 4GiB, 512MB; default: the available memory): work "
        "estimated to need more is refused before it starts (sets WORKBENCH_MAX_MEMORY for the command)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def output_options(command, rows: str):
        # One group: argparse itself refuses --json with --csv, in one line naming both.
        output = command.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", help="one JSON document on stdout")
        output.add_argument(
            "--csv",
            action="store_true",
            help=f"the table as CSV on stdout instead ({rows}; numbers at full precision, nested fields as dotted "
            "columns, missing values empty)",
        )

    def path_option(command):
        command.add_argument(
            "--path",
            action="append",
            default=[],
            metavar="FILE_OR_DIR",
            help="also read identities from this Python file, or from every .py file of this folder (no packaging "
            "needed; repeatable)",
        )

    p_list = sub.add_parser("list", help="the identity catalogue")
    p_list.add_argument("--area", help="only this area")
    output_options(p_list, "one row per identity")
    path_option(p_list)

    p_check = sub.add_parser("check", help="run the verifications; exit 1 if any fails")
    p_check.add_argument("name", nargs="?", help="an identity name or dotted prefix")
    p_check.add_argument("--area", help="only this area")
    output_options(p_check, "one row per identity and backend")
    p_check.add_argument("--seed", type=_seed, default=0, help="random seed, an integer >= 0 (default 0)")
    p_check.add_argument("--scale", choices=SCALES, default="small", help="problem sizes")
    p_check.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu: numpy (+ torch on CPU when installed); cuda: torch on the GPU",
    )
    p_check.add_argument("--numeric-only", action="store_true", help="skip the symbolic derivations")
    p_check.add_argument(
        "--workers",
        type=_jobs,
        help="processes running the rows, an integer >= 1 (default: one per CPU, at most 8; the rows print in the "
        "same order whatever the number)",
    )
    p_check.add_argument(
        "--hypotheses",
        action="store_true",
        help="run each hypothesis's outside case instead: a row passes when the statement fails there as predicted",
    )
    path_option(p_check)

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
    path_option(p_derive)

    p_bench = sub.add_parser("bench", help="a benchmark, as a side-by-side ratio table")
    p_bench.add_argument(
        "name",
        help="bch, bch-fusion, exp-markov, rank1, diffusion-map, expmv, transport-gram, diagnose, subspaces, gpu",
    )
    output_options(p_bench, "one row per benchmark row; column table: the table's title")
    p_bench.add_argument("--max-degree", type=int, help="bch: highest degree (default 12)")
    p_bench.add_argument("--windows", type=int, help="diagnose: corpus windows through MiniLM (default 1024)")
    p_bench.add_argument("--threads", type=int, help="diagnose: BLAS and torch threads (default 1)")
    p_bench.add_argument("--size", choices=("full", "tiny"), help="gpu: problem sizes (default full; tiny: seconds)")
    p_bench.add_argument("--device", choices=("cuda", "cpu"), help="gpu: where the torch paths run (default cuda)")
    p_bench.add_argument("--out", help="gpu: a folder to write gpu.json and gpu.md (a section for RESULTS.md) into")

    p_diagnose = sub.add_parser("diagnose", help="attention-operator diagnostics of a real model, per layer and head")
    p_diagnose.add_argument("--model", default="minilm", help="the shipped model (minilm: all-MiniLM-L6-v2)")
    p_diagnose.add_argument(
        "--model-dir",
        help="a checkpoint folder (config.json, *.safetensors, tokenizer.json or preprocessor_config.json) of any "
        "family read (bert, gpt2, llama in the workbench's forward pass; gpt_neox, gemma, vit, … through transformers)",
    )
    p_diagnose.add_argument("--text", help="one text to run the model on")
    p_diagnose.add_argument("--corpus", help="a text file (one text per line), a folder of .txt files, or shakespeare")
    p_diagnose.add_argument(
        "--image",
        help="one image for a vision model (a file, or sample:china / sample:flower, scikit-learn's two photographs)",
    )
    p_diagnose.add_argument("--images", metavar="DIR", help="a folder of images for a vision model: per-layer means")
    p_diagnose.add_argument("--audio", metavar="WAV", help="one .wav file for an audio encoder (whisper)")
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
    output_options(
        p_diagnose, "--text: one row per layer and per head, column table: layers or heads; --corpus: one per layer"
    )
    p_diagnose.add_argument(
        "--plot",
        metavar="FILE",
        help="text: heatmaps of A_eff, the mean transport Gram and the heads' QK subspace distances, written to FILE "
        "(.png, .svg or .pdf: the format follows the suffix)",
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
    output_options(
        p_study,
        "one row per model and layer, column table: layers, sweep (connection-walk: per context length), ...; "
        "head-subspaces --induction: one row per seed",
    )

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
    output_options(p_experiment, "one row per condition: the rows a sweep gathers")
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
    for axis, option in AXIS_OPTIONS.items():
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
    output_options(p_sweep, "one row per grid cell and key: each measurement's mean, sd and n")
    p_sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    p_sweep.set_defaults(steps=None, seed=None)  # _experiment_config reads them; a sweep sets them with --set/--seeds

    p_lab = sub.add_parser(
        "lab",
        help="JupyterLab on the course notebooks: a double-click opens a .py percent script as a notebook and "
        "saving writes the .py (no .ipynb twin); extra args go to jupyter lab (--allow-root is added as root)",
    )
    p_lab.add_argument(
        "--dir",
        help="the notebooks folder (default: ./notebooks, else the checkout's; from a wheel install with no "
        "./notebooks, a writable copy of the course is made in ./attention-workbench-course first)",
    )

    p_book = sub.add_parser(
        "book", help="the course as a static HTML site (Sphinx + myst-nb, offline), a PDF, or slides"
    )
    book_sub = p_book.add_subparsers(dest="action", required=True)
    p_build = book_sub.add_parser("build", help="execute the notebooks and build the site (warnings are errors)")
    p_build.add_argument(
        "--out",
        help="the output folder (default COURSE/book/_build/html; ./_build/html for the "
        "course installed with the package)",
    )
    p_build.add_argument("--without-solutions", action="store_true", help="leave the Solutions part out")
    p_build.add_argument(
        "--without-api",
        action="store_true",
        help="leave the API reference out (a quicker rebuild: autodoc reads every public name, ~2.5 min on 2 cores)",
    )
    p_pdf = book_sub.add_parser(
        "pdf", help="the whole course as one PDF: a single-page build printed by headless chromium"
    )
    p_pdf.add_argument("--out", metavar="FILE", help="the PDF (default book/_build/course.pdf)")
    p_pdf.add_argument(
        "--without-solutions", action="store_true", help="leave the Solutions part and the concept checks' answers out"
    )
    p_slides = book_sub.add_parser(
        "slides", help="one reveal.js deck per session (offline: reveal.js and MathJax bundled)"
    )
    p_slides.add_argument("--out", help="the output folder (default book/_build/slides)")
    for p_run in (p_build, p_pdf, p_slides):
        p_run.add_argument(
            "--jobs", type=_jobs, help="notebooks executed at once (default: one per CPU); unchanged ones are cached"
        )
        p_run.add_argument(
            "--course",
            metavar="DIR",
            help="a course folder holding book/ and notebooks/ (a checkout, or a `workbench course copy`); default: "
            "the current folder if it holds one, else the checkout's or the installed course",
        )
    p_serve = book_sub.add_parser("serve", help="serve the built site on 127.0.0.1")
    p_serve.add_argument("--out", help="the built site (default book/_build/html)")
    p_serve.add_argument("--port", type=int, default=8000, help="the port (default 8000)")

    p_course = sub.add_parser("course", help="teach the course: a student copy, and grading submitted notebooks")
    course_sub = p_course.add_subparsers(dest="action", required=True)
    p_assign = course_sub.add_parser(
        "assign", help="write the student copy (notebooks with grader checks, no solutions) into DIR"
    )
    p_assign.add_argument("dir", metavar="DIR", help="the folder of the student copy (must be new or empty)")
    p_assign.add_argument("--force", action="store_true", help="replace a student copy written there before")
    p_copy = course_sub.add_parser(
        "copy", help="write a writable copy of the whole course (notebooks, solutions, graders, site sources) into DIR"
    )
    p_copy.add_argument("dir", metavar="DIR", help="the folder of the copy (must be new or empty)")
    p_copy.add_argument("--force", action="store_true", help="replace a copy written there before")
    p_grade = course_sub.add_parser("grade", help="grade the submitted notebooks under SUBMISSIONS")
    p_grade.add_argument("submissions", metavar="SUBMISSIONS", help="the folder of submitted notebooks")
    p_grade.add_argument("--out", metavar="CSV", help="write one row per submission to this CSV file")
    return parser
