"""``workbench sweep`` / :func:`run_sweep`: an experiment over a grid × seeds, as tasks on Dask distributed.

Every sweep here runs the real induction experiment at toy size (8 tokens, width 8–16, a few steps: the plumbing,
not what a model learns) on a real two-worker :class:`distributed.LocalCluster` shared by the module, so the
workers' imports are paid once.  Oracles: numpy's mean and ``std(ddof=1)`` over the per-task rows read straight
from each run's ``results.json``; for a resumed or killed task, the rows of an uninterrupted run of the same
config (the runs are seeded and single-threaded, so they agree exactly apart from the wall-clock ``seconds``).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("distributed")

import distributed

from workbench.cli import main
from workbench.experiments import EXPERIMENTS, induction_rows, run_sweep, sweep_table

#: A toy induction run: about a second per task on a warm worker.
TINY = {"vocab_size": 8, "half_length": 4, "n_heads": 2, "steps": 3, "batch": 4, "log_every": 1, "eval_batch": 4}
SELECTION = {"operators": ("DMAP",), "architectures": ("attn-only",)}
MEASUREMENTS = (
    "final_repeat_loss",
    "induction_accuracy",
    "shifted_period_accuracy",
    "transition_step",
    "best_head_induction_score",
    "seconds",
)


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def _sweep(out, scheduler, **kwargs):
    settings = dict(grid={"d_model": [8, 16]}, seeds=[0, 1], overrides=TINY, selection=SELECTION)
    return run_sweep("induction", **{**settings, **kwargs}, out=out, scheduler=scheduler, progress=False)


@pytest.fixture(scope="module")
def first_sweep(cluster, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweeps") / "grid"
    return out, _sweep(out, cluster.scheduler_address)


def _run_of(folder: Path) -> dict:
    """The one (operator, architecture) run a task's results.json holds, read without the sweep's code."""
    (run,) = json.loads((folder / "results.json").read_text())["runs"]
    return run


def _oracle_value(run: dict, measurement: str):
    transition = run["transition"] or {}
    return {
        "final_repeat_loss": run["final_repeat_loss"],
        "induction_accuracy": run["induction_accuracy"],
        "shifted_period_accuracy": run["shifted_period_accuracy"],
        "transition_step": transition.get("step") if transition.get("detected") else None,
        "best_head_induction_score": run["best_head"]["induction_score"],
        "seconds": run["seconds"],
    }[measurement]


def _without_seconds(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]


# ---- a sweep, gathered --------------------------------------------------------------------------------------


def test_two_cells_by_two_seeds_are_four_complete_runs_gathered_per_cell(first_sweep):
    out, result = first_sweep
    assert result["status"] == "complete" and result["failed"] == []
    assert [t["id"] for t in result["tasks"]] == [
        "d_model=8/seed-0",
        "d_model=8/seed-1",
        "d_model=16/seed-0",
        "d_model=16/seed-1",
    ]
    for task in result["tasks"]:
        record = json.loads((out / task["id"] / "run.json").read_text())
        assert task["status"] == "complete" and task["source"] == "run" and record["status"] == "complete"
        assert json.loads((out / task["id"] / "config.json").read_text())["d_model"] == task["grid"]["d_model"]
        assert json.loads((out / task["id"] / "config.json").read_text())["seed"] == task["seed"]
    assert [(c["cell"], c["grid"], c["keys"], c["seeds"]) for c in result["cells"]] == [
        ("d_model=8", {"d_model": 8}, {"operator": "DMAP", "architecture": "attn-only"}, [0, 1]),
        ("d_model=16", {"d_model": 16}, {"operator": "DMAP", "architecture": "attn-only"}, [0, 1]),
    ]
    # Oracle: numpy over the two seeds' values read from results.json.  Tolerance: the same two doubles under
    # the same formula; only the order of the summation may differ (rel 1e-12).
    for cell in result["cells"]:
        runs = [_run_of(out / cell["cell"] / f"seed-{s}") for s in (0, 1)]
        assert set(cell["measurements"]) == set(MEASUREMENTS)
        for measurement in MEASUREMENTS:
            values = [_oracle_value(run, measurement) for run in runs]
            present = np.array([v for v in values if v is not None], dtype=float)
            stats = cell["measurements"][measurement]
            assert stats["n"] == present.size
            if present.size == 0:
                assert stats["mean"] is None and stats["sd"] is None
            else:
                assert stats["mean"] == pytest.approx(present.mean(), rel=1e-12)
                expected_sd = present.std(ddof=1) if present.size == 2 else None
                assert stats["sd"] == (None if expected_sd is None else pytest.approx(expected_sd, rel=1e-12))
    assert result["cells"][0]["measurements"]["final_repeat_loss"]["sd"] > 0  # two seeds really differ


def test_the_record_and_table_on_disk_are_the_result(first_sweep):
    out, result = first_sweep
    record = json.loads((out / "sweep.json").read_text())
    assert record["cells"] == json.loads(json.dumps(result["cells"]))  # finite here: no "nan" spellings
    assert {k: record[k] for k in ("experiment", "preset", "grid", "seeds", "overrides", "selection")} == {
        "experiment": "induction",
        "preset": "quick",
        "grid": {"d_model": [8, 16]},
        "seeds": [0, 1],
        "overrides": TINY,
        "selection": {"operators": ["DMAP"], "architectures": ["attn-only"]},
    }
    table = (out / "table.md").read_text().splitlines()
    assert table == sweep_table(result).splitlines()
    assert table[0].startswith("| d_model | operator | architecture | final_repeat_loss |")
    loss = result["cells"][1]["measurements"]["final_repeat_loss"]
    assert table[3].startswith(f"| 16 | DMAP | attn-only | {loss['mean']:.4g} ± {loss['sd']:.4g} (2) |")


def test_a_rerun_keeps_complete_tasks_and_resumes_only_the_interrupted_one(cluster, first_sweep, tmp_path):
    source, first = first_sweep
    out = tmp_path / "grid"
    shutil.copytree(source, out)  # copy2: the mtimes come along
    broken = out / "d_model=16" / "seed-1"
    record = json.loads((broken / "run.json").read_text())
    record.update(status="interrupted", done=[])  # as a run stopped before its one condition finished
    (broken / "run.json").write_text(json.dumps(record))
    for name in ("results.json", "table.md", "DMAP-attn-only.pt", "DMAP-attn-only.json"):
        (broken / name).unlink()
    others = [out / t["id"] / "results.json" for t in first["tasks"] if t["id"] != "d_model=16/seed-1"]
    before = [path.stat().st_mtime_ns for path in others]

    again = _sweep(out, cluster.scheduler_address)

    assert again["status"] == "complete"
    assert [t["source"] for t in again["tasks"]] == ["kept", "kept", "kept", "resumed"]
    assert [path.stat().st_mtime_ns for path in others] == before  # untouched: not run again
    sessions = json.loads((broken / "run.json").read_text())["sessions"]
    assert len(sessions) == 2 and json.loads((broken / "run.json").read_text())["status"] == "complete"
    # Oracle: the first, uninterrupted sweep.  Seeded single-threaded runs: equal rows, wall-clock seconds aside.
    for task, previous in zip(again["tasks"], first["tasks"], strict=True):
        assert _without_seconds(task["rows"]) == _without_seconds(previous["rows"])
    for cell, previous in zip(again["cells"], first["cells"], strict=True):
        assert {k: v for k, v in cell["measurements"].items() if k != "seconds"} == {
            k: v for k, v in previous["measurements"].items() if k != "seconds"
        }


def test_a_task_folder_that_is_a_symlink_out_of_the_sweep_is_refused_and_its_target_untouched(
    cluster, first_sweep, tmp_path
):
    # Issue 40, finding 3: a task folder that is a link to an outside folder ran there with force and replaced its
    # files (config.json, results.json).  Now the sweep refuses it in one line before any task runs.
    source, _ = first_sweep
    out = tmp_path / "grid"
    shutil.copytree(source, out)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text("mine")
    task = out / "d_model=16" / "seed-1"
    shutil.rmtree(task)
    task.symlink_to(outside, target_is_directory=True)
    with pytest.raises(
        ValueError, match=r"task folder must be a folder of its own inside the sweep, got .*symbolic link"
    ):
        _sweep(out, cluster.scheduler_address)
    assert [p.name for p in outside.iterdir()] == ["config.json"] and (outside / "config.json").read_text() == "mine"


def test_a_complete_task_is_kept_when_an_open_axis_defaults_to_fewer_names_than_it_accepts(cluster, tmp_path):
    # log-lens accepts architectures attn-only and mlp but trains attn-only unless asked: a sweep that leaves the
    # axis open must recognise its own complete run on a rerun (it used to compare with both names and fail).
    # Oracle: the first sweep's rows, equal apart from the wall-clock seconds (a seeded single-threaded run).
    tiny = {
        "vocab_size": 8,
        "half_length": 4,
        "min_period": 4,
        "d_model": 8,
        "n_heads": 2,
        "steps": 4,
        "batch": 4,
        "log_every": 2,
        "eval_batch": 4,
    }
    settings = dict(seeds=[0], overrides=tiny, selection={"operators": ("ATTN",)}, progress=False)
    first = run_sweep("log-lens", **settings, out=tmp_path, scheduler=cluster.scheduler_address)
    again = run_sweep("log-lens", **settings, out=tmp_path, scheduler=cluster.scheduler_address)
    assert first["status"] == again["status"] == "complete"
    assert [t["source"] for t in again["tasks"]] == ["kept"]
    assert _without_seconds(again["tasks"][0]["rows"]) == _without_seconds(first["tasks"][0]["rows"])


def test_a_sweep_directory_refuses_other_settings_and_other_files(first_sweep, tmp_path):
    out, _ = first_sweep
    with pytest.raises(ValueError, match=r"grid must be the one recorded in .*sweep\.json.* to continue that sweep"):
        _sweep(out, None, grid={"d_model": [8]})
    with pytest.raises(ValueError, match=r"overrides must be the one recorded in"):
        _sweep(out, None, overrides={**TINY, "steps": 4})
    with pytest.raises(ValueError, match=r"preset must be the one recorded in"):
        _sweep(out, None, preset="paper", overrides={**TINY, "d_model": 8}, grid=None)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"out must be a new or empty directory, or a sweep's directory"):
        _sweep(tmp_path, None)


def _injected_failure(seed: int, counter: str):
    """Functions for ``client.run``: on each worker, make the induction runner raise for ``seed`` (counting the
    tries in the file ``counter``), and undo that.  Nested, so cloudpickle sends them by value: the workers need
    not import this test module.
    """

    def patch():
        import dataclasses
        from pathlib import Path

        from workbench.experiments import EXPERIMENTS

        original = EXPERIMENTS["induction"]

        def run(config, **kwargs):
            if config.seed == seed:
                # Counted outside the task folder: a file a run never writes would make the folder no run's, and
                # the rerun's force would then (rightly) refuse it.
                Path(kwargs["out"]).mkdir(parents=True, exist_ok=True)
                with open(counter, "a") as stream:
                    stream.write("1\n")
                raise RuntimeError(f"injected failure for seed {seed}")
            return original.run(config, **kwargs)

        # The registry is one dict: replacing its entry is what the sweep's workers look up.
        run.original = original
        EXPERIMENTS["induction"] = dataclasses.replace(original, run=run)

    def restore():
        from workbench.experiments import EXPERIMENTS

        EXPERIMENTS["induction"] = EXPERIMENTS["induction"].run.original

    return patch, restore


def test_a_task_failing_after_its_retries_is_recorded_and_the_others_finish(cluster, tmp_path, capsys):
    out = tmp_path / "failing"
    tiny = [item for key, value in TINY.items() for item in ("--set", f"{key}={value}")]
    argv = ["sweep", "induction", *tiny, "--seeds", "0,1", "--operator", "DMAP", "--architecture", "attn-only"]
    argv += ["--scheduler", cluster.scheduler_address, "--retries", "0", "--no-progress"]
    with distributed.Client(cluster.scheduler_address) as client:
        inject, restore = _injected_failure(1, str(tmp_path / "attempts"))
        client.run(inject)
        try:
            result = _sweep(out, cluster.scheduler_address, grid=None, retries=1)
            status = main([*argv, "--out", str(tmp_path / "cli")])
        finally:
            client.run(restore)
    assert result["status"] == "failed" and result["failed"] == ["base/seed-1"]
    good, bad = result["tasks"]
    assert good["status"] == "complete" and good["rows"][0]["operator"] == "DMAP"
    assert bad["status"] == "failed" and bad["error"] == "RuntimeError: injected failure for seed 1"
    assert (tmp_path / "attempts").read_text() == "1\n1\n1\n"  # the first try and one retry; the CLI's one try
    assert [c["seeds"] for c in result["cells"]] == [[0]]
    assert result["cells"][0]["measurements"]["final_repeat_loss"]["sd"] is None  # one seed: no sd
    assert json.loads((out / "sweep.json").read_text())["failed"] == ["base/seed-1"]
    assert status == 1
    assert capsys.readouterr().err.endswith(
        "workbench sweep: 1 of 2 tasks failed after 0 retries: base/seed-1 (RuntimeError: injected failure for "
        "seed 1); run the same command again to retry them\n"
    )

    again = _sweep(out, cluster.scheduler_address, grid=None, retries=1)  # the cause gone: a rerun retries it
    assert again["status"] == "complete" and [t["source"] for t in again["tasks"]] == ["kept", "run"]
    assert [c["seeds"] for c in again["cells"]] == [[0, 1]]


# ---- bad input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"name": "mnist"}, ValueError, r"name must be one of .*induction.*, got 'mnist'"),
        ({"preset": "huge"}, ValueError, r"preset must be one of 'quick', 'paper', got 'huge'"),
        (
            {"grid": {"width": [1, 2]}},
            ValueError,
            r"grid must be keyed by fields of InductionConfig .*got unknown field 'width'",
        ),
        ({"grid": {"seed": [1, 2]}}, ValueError, r"grid must not set seed \(the seeds parameter does\)"),
        ({"grid": {"d_model": []}}, ValueError, r"grid\['d_model'\] must be a non-empty list of values, got \[\]"),
        ({"grid": {"d_model": [8, 8]}}, ValueError, r"grid\['d_model'\] must not repeat a value, got \[8, 8\]"),
        ({"grid": {"d_model": 8}}, TypeError, r"grid\['d_model'\] must be a list of values, got 8"),
        ({"grid": {"d_model": [0, 8]}}, ValueError, r"d_model must be an integer >= 1, got 0"),
        ({"grid": {"d_model": [9]}}, ValueError, r"n_heads must divide d_model, got d_model=9 and n_heads=2"),
        ({"overrides": {"seed": 3}}, ValueError, r"overrides must not set seed"),
        (
            {"overrides": {"d_model": 8}, "grid": {"d_model": [8]}},
            ValueError,
            r"overrides must not set a field the grid varies",
        ),
        ({"seeds": []}, ValueError, r"seeds must be a non-empty sequence of distinct integers >= 0, got \[\]"),
        ({"seeds": [0, 0]}, ValueError, r"seeds must be a non-empty sequence of distinct integers >= 0, got \[0, 0\]"),
        ({"seeds": [-1]}, ValueError, r"seeds must be .* integers >= 0, got \[-1\]"),
        ({"seeds": "01"}, TypeError, r"seeds must be a non-empty sequence of distinct integers >= 0, got '01'"),
        ({"seeds": [0.5]}, TypeError, r"seeds must be .* got \[0.5\]"),
        (
            {"selection": {"orders": ("ffn-mhsa",)}},
            ValueError,
            r"selection must be keyed by axes of the induction experiment",
        ),
        (
            {"selection": {"operators": ("ATAP",)}},
            ValueError,
            r"selection\['operators'\] must hold names from ATTN, DMTN, DMAP, got 'ATAP'",
        ),
        ({"workers": 0}, ValueError, r"workers must be an integer >= 1, got 0"),
        ({"retries": -1}, ValueError, r"retries must be an integer >= 0, got -1"),
        ({"threads": 0}, ValueError, r"threads must be an integer >= 1, got 0"),
        (
            {"scheduler": "localhost:8786"},
            ValueError,
            r"scheduler must be a Dask scheduler address tcp://HOST:PORT, got 'localhost:8786'",
        ),
        ({"scheduler": "tcp://host:99999"}, ValueError, r"scheduler must be a Dask scheduler address"),
        ({"scheduler": "tcp://host:8786", "workers": 2}, ValueError, r"workers must be None with a scheduler"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_written(kwargs, error, message, tmp_path):
    settings = {"name": "induction", "overrides": TINY, "selection": SELECTION, **kwargs}
    with pytest.raises(error, match=message):
        run_sweep(settings.pop("name"), **settings, out=tmp_path / "sweep", progress=False)
    assert not (tmp_path / "sweep").exists()


def test_without_dask_distributed_the_message_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    with pytest.raises(ImportError, match=r"workbench sweep needs dask distributed: pip install 'dask\[distributed\]'"):
        run_sweep("induction", overrides=TINY, out=tmp_path / "sweep", progress=False)
    assert main(["sweep", "induction", "--out", str(tmp_path / "cli")]) == 2
    assert not (tmp_path / "cli").exists()


# ---- the command line ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mnist"], "name must be one of"),
        (["induction", "--preset", "huge"], "--preset must be one of quick, paper, got 'huge'"),
        (["induction", "--grid", "width=1,2"], "--grid must be FIELD=V1,V2,... with FIELD one of"),
        (["induction", "--grid", "d_model"], "--grid must be FIELD=V1,V2,... with FIELD one of"),
        (["induction", "--grid", "d_model=8", "--grid", "d_model=16"], "--grid must name each field once"),
        (["induction", "--grid", "seed=1,2"], "--grid seed=... does not apply: --seeds sets the seeds"),
        (["induction", "--grid", "d_model=0,8"], "d_model must be an integer >= 1, got 0"),
        (["induction", "--set", "seed=3"], "--set seed=3 does not apply: --seeds sets the seeds"),
        (["induction", "--set", "steps=0"], "steps must be an integer >= 1, got 0"),
        (["induction", "--seeds", "3-1"], "--seeds must be integers >= 0 as 0,1,2 or a range 0-4, got '3-1'"),
        (["induction", "--seeds", "a"], "--seeds must be integers >= 0"),
        (["induction", "--order", "ffn-mhsa"], "--order does not apply to the induction experiment"),
        (["induction", "--operators", "ATAP"], "--operator must be one of ATTN, DMTN, DMAP, got 'ATAP'"),
        (["induction", "--workers", "0"], "--workers must be an integer >= 1, got 0"),
        (["induction", "--retries", "-1"], "--retries must be an integer >= 0, got -1"),
        (["induction", "--threads", "0"], "--threads must be an integer >= 1, got 0"),
        (["induction", "--scheduler", "localhost:8786"], "scheduler must be a Dask scheduler address tcp://HOST:PORT"),
        (["induction", "--scheduler", "tcp://h:1", "--workers", "2"], "--workers does not apply with --scheduler"),
    ],
)
def test_bad_command_lines_exit_two_with_one_line(argv, message, capsys, tmp_path):
    assert main(["sweep", *argv, "--out", str(tmp_path / "sweep")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("workbench sweep: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "sweep").exists()


def test_the_command_runs_a_sweep_on_its_own_local_cluster(tmp_path):
    out = tmp_path / "cli"
    tiny = [item for key, value in TINY.items() for item in ("--set", f"{key}={value}")]
    argv = ["sweep", "induction", *tiny, "--grid", "d_model=8,16", "--seeds", "0-1", "--operator", "DMAP"]
    argv += ["--architecture", "attn-only", "--workers", "2", "--out", str(out), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "workbench", *argv], capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["status"] == "complete" and document["grid"] == {"d_model": [8, 16]}
    assert [t["id"] for t in document["tasks"]] == [
        "d_model=8/seed-0",
        "d_model=8/seed-1",
        "d_model=16/seed-0",
        "d_model=16/seed-1",
    ]
    assert [c["measurements"]["final_repeat_loss"]["n"] for c in document["cells"]] == [2, 2]
    assert json.loads((out / "sweep.json").read_text())["status"] == "complete"
    assert (out / "table.md").read_text().startswith("| d_model | operator | architecture |")


# ---- a worker killed mid-task -------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_worker_killed_mid_task_is_replaced_and_its_task_resumed(cluster, tmp_path):
    out = tmp_path / "killed"
    overrides = {**TINY, "d_model": 8, "steps": 600, "log_every": 50}  # a few seconds per task
    seeds = [0, 1, 2, 3]
    killed: dict = {}

    def executing(dask_worker):  # nested: sent to the workers by value
        return [str(ts.key) for ts in dask_worker.state.executing]

    def kill_a_busy_worker(client):
        pids = client.run(os.getpid)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for address, keys in client.run(executing).items():
                for key in keys:
                    seed = int(key.split("-seed-")[1].split("-")[0])
                    record = out / "base" / f"seed-{seed}" / "run.json"
                    if record.is_file() and json.loads(record.read_text())["status"] == "running":
                        time.sleep(0.3)  # into the training loop
                        os.kill(pids[address], signal.SIGKILL)
                        killed.update(seed=seed, pid=pids[address])
                        return
            time.sleep(0.05)

    with distributed.Client(cluster.scheduler_address) as client:
        killer = threading.Thread(target=kill_a_busy_worker, args=(client,))
        killer.start()
        try:
            result = run_sweep(
                "induction",
                seeds=seeds,
                overrides=overrides,
                selection=SELECTION,
                out=out,
                scheduler=cluster.scheduler_address,
                progress=False,
            )
        finally:
            killer.join()
        assert killed, "no task was seen running"
        client.wait_for_workers(2, timeout=60)  # the nanny brought the killed worker back
        assert killed["pid"] not in client.run(os.getpid).values()

    assert result["status"] == "complete" and [t["status"] for t in result["tasks"]] == ["complete"] * 4
    task = result["tasks"][seeds.index(killed["seed"])]
    assert task["source"] == "resumed"  # its directory said "running" when the task came back
    assert len(json.loads((out / task["id"] / "run.json").read_text())["sessions"]) == 2
    # Oracle: an uninterrupted run of the same config in this process (seeded; one torch thread, as a task).
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        experiment = EXPERIMENTS["induction"]
        config = experiment.config.preset("quick", **overrides, seed=killed["seed"])
        reference = induction_rows(experiment.run(config, out=None, progress=False, **SELECTION))
    finally:
        torch.set_num_threads(threads)
    assert _without_seconds(task["rows"]) == _without_seconds(reference)
