"""Tests of the SiT transfer experiment (Attention Geometry §10 at workbench scale).

Oracles: the dense numpy operator of the attention package on the layer's own weights (the projection), the Swiss
SiT scan's own ATTN condition (the pretraining), a model built at the target corner with the same weights, the
uninterrupted run (resume), and the definitions (parameter counts, the structural zeros of DMAP).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from workbench.attention import OPERATORS, family_operator, parameter_count, project_head  # noqa: E402
from workbench.experiments import (  # noqa: E402
    PAPER_SECTION10,
    SIT_TRANSFER_TARGETS,
    SitTransferConfig,
    SwissSiT,
    SwissSiTConfig,
    project_model,
    run_sit_transfer,
    run_swiss_sit,
    sit_transfer_table,
)
from workbench.experiments.sit_transfer import MEASUREMENTS, sit_transfer_rows  # noqa: E402
from workbench.experiments.swiss_sit import EPS_REV_TOLERANCE  # noqa: E402

torch.set_num_threads(1)

# A tiny configuration: a few steps, 2 sampled contexts of 16 points, a held-out batch of 2 contexts.
TINY = SitTransferConfig.preset(
    "quick", n_train=300, context=16, steps=8, batch=4, n_generate=32, euler_steps=5, adapt_steps=3, heldout_contexts=2
)
STATES = [
    ("ATTN", "pretrained"),
    ("DMTN", "projected"),
    ("DMTN", "adapted"),
    ("DMAP", "projected"),
    ("DMAP", "adapted"),
]
WALL_CLOCK = ("seconds",)


@pytest.fixture(scope="module")
def tiny_run():
    return run_sit_transfer(TINY, progress=False)


def _model(operator="ATTN", seed=0):
    torch.manual_seed(seed)
    return SwissSiT(operator, "mhsa-ffn", d_model=8, n_heads=2, ffn_mult=2).double()


# --- the projection -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("operator", OPERATORS)
def test_projection_is_the_dense_corner_operator_on_the_layers_own_weights(operator):
    """Oracle: ``family_operator`` and ``project_head(W_Q, W_K, op)`` in numpy on the layer's own W_Q, W_K.

    Float64 throughout; the layer (torch linear maps, torch softmax) and the oracle (numpy products, the attention
    package's softmax) evaluate the same formula in a different order, so they differ by rounding of O(1) numbers
    over 8-term sums (~1e-15); 1e-12 leaves three orders of margin.  The logits agree up to a constant per row
    (the softmax's invariance): log P − ℓ is checked constant along rows to 1e-12 too (P entries here are ≳ 1e-2,
    so the log does not amplify rounding by more than ~1e2).
    """
    source = _model()
    projected = project_model(source, operator)
    X = torch.randn(2, 7, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 2.0
    P = projected.attn.attention(X).detach().numpy()  # [2, H, 7, 7]
    for h, (W_Q, W_K) in enumerate(source.attn.head_weights()):
        head = project_head(W_Q, W_K, operator)
        for b in range(2):
            x = X[b].numpy()
            oracle = family_operator(x @ W_Q, x @ W_K, operator)
            np.testing.assert_allclose(P[b, h], oracle, rtol=0, atol=1e-12)
            np.testing.assert_allclose(P[b, h], head.operator(x), rtol=0, atol=1e-12)
            gap = np.log(P[b, h]) - head.logits(x)
            assert np.ptp(gap, axis=1).max() < 1e-12
    if operator != "ATTN":  # not vacuous: the projection moves the operator away from the ATTN one
        assert np.abs(P - source.attn.attention(X).detach().numpy()).max() > 1e-3


@pytest.mark.parametrize("operator", ["DMTN", "DMAP"])
def test_projection_equals_a_model_built_at_the_corner_with_the_same_weights(operator):
    """Oracle: a SwissSiT constructed with ``operator`` and the source's state dict; outputs bitwise equal."""
    source = _model()
    projected = project_model(source, operator)
    native = SwissSiT(operator, "mhsa-ffn", d_model=8, n_heads=2, ffn_mult=2).double()
    native.load_state_dict(source.state_dict())
    x, tau = torch.randn(3, 6, 2, dtype=torch.float64), torch.rand(3, dtype=torch.float64)
    v_projected, P_projected = projected(x, tau, return_operator=True)
    v_native, P_native = native(x, tau, return_operator=True)
    assert torch.equal(v_projected, v_native) and torch.equal(P_projected, P_native)


def test_projection_keeps_every_weight_and_leaves_the_source_alone():
    source = _model().requires_grad_(False)
    before = {k: v.clone() for k, v in source.state_dict().items()}
    projected = project_model(source, "DMAP")
    assert projected is not source and projected.attn is not source.attn
    assert (projected.operator, projected.attn.operator) == ("DMAP", "DMAP")
    assert (source.operator, source.attn.operator) == ("ATTN", "ATTN")
    for name, value in source.state_dict().items():
        assert torch.equal(value, before[name])
        assert projected.state_dict()[name].numpy().tobytes() == value.numpy().tobytes()  # bit for bit
    assert not any(p.requires_grad for p in projected.parameters())  # flags copied as they were


def test_projection_validation():
    with pytest.raises(TypeError, match=r"model must be a torch.nn.Module holding OperatorAttention layers, got dict"):
        project_model({}, "DMAP")
    with pytest.raises(ValueError, match=r"operator must be one of .*, got 'SOFT'"):
        project_model(_model(), "SOFT")
    with pytest.raises(
        ValueError, match=r"model must hold at least one OperatorAttention layer, got a Linear with none"
    ):
        project_model(torch.nn.Linear(2, 2), "DMAP")


# --- a tiny run, end to end -------------------------------------------------------------------------------------


def test_a_tiny_run_has_every_state_and_its_structural_facts(tiny_run):
    """Oracles: ρ_skew(DMAP) = 0 exactly (symmetric effective form); ε_rev(DMAP) = 0 to float64 rounding of P and
    π (EPS_REV_TOLERANCE); e^{H̄} ∈ [1, N]; DMAP reads W_M alone (parameter_count: D·d_h per head)."""
    rows = tiny_run["rows"]
    assert [(r["target"], r["state"]) for r in rows] == STATES
    assert all(check["passed"] is True for check in tiny_run["checks"].values()), tiny_run["checks"]
    by = {(r["target"], r["state"]): r for r in rows}
    d_head = TINY.d_model // TINY.n_heads
    for (target, _), r in by.items():
        assert r["qk_parameters"] == TINY.n_heads * parameter_count(target, TINY.d_model, d_head)
        assert 1.0 <= r["eff_neighbours"] <= TINY.context
        assert r["heldout_loss"] > 0 and math.isfinite(r["heldout_loss"])
        if target == "DMAP":
            assert r["rho_skew"] == 0.0 and r["eps_rev_max"] <= EPS_REV_TOLERANCE
    assert by["DMAP", "adapted"]["qk_parameters"] * 2 == by["ATTN", "pretrained"]["qk_parameters"]
    assert by["DMTN", "projected"]["rho_skew"] > 0.0  # DMTN keeps a free link: not structurally zero
    # the budgets: projected states are not trained; DMAP adapts dmap_adapt_factor times as long as DMTN
    assert [r["steps"] for r in rows] == [TINY.steps, 0, TINY.adapt_steps, 0, 2 * TINY.adapt_steps]
    assert by["DMTN", "projected"]["train_loss"] is None and by["DMTN", "adapted"]["train_loss"] > 0
    assert by["DMTN", "projected"]["source"] == "ATTN pretrained"
    assert by["DMAP", "projected"]["source"] == "DMTN adapted"  # the paper's route: folded from the adapted DMTN
    assert all(by[t, "projected"]["weights_identical"] is True for t in SIT_TRANSFER_TARGETS)
    assert [d["target"] for d in tiny_run["direction"]] == ["DMTN", "DMAP"]
    assert tiny_run["direction"][1]["heldout_loss"][0] == by["DMTN", "adapted"]["heldout_loss"]


def test_the_pretrained_state_is_the_swiss_sit_attn_condition(tiny_run):
    """Oracle: the Swiss SiT scan's ATTN condition with the same settings (same training and sampling seeds)."""
    swiss_fields = {f.name for f in dataclasses.fields(SwissSiTConfig)}
    swiss = SwissSiTConfig(**{k: v for k, v in dataclasses.asdict(TINY).items() if k in swiss_fields})
    reference = run_swiss_sit(swiss, operators=("ATTN",), orders=(TINY.order,), progress=False)["rows"][0]
    pretrained = tiny_run["rows"][0]
    for key in ("d_nn", "d_nn_ratio", "eff_neighbours", "eps_rev", "eps_rev_max", "rho_skew"):
        assert pretrained[key] == reference[key], key


def test_dmap_from_attn_projects_the_pretrained_model_and_needs_no_dmtn(tiny_run):
    """The DMAP-only run (dmap_from='ATTN') folds the pretrained model itself, and its pretrained row is the full
    run's (each condition is seeded on its own, so the selection of targets does not change it)."""
    res = run_sit_transfer(dataclasses.replace(TINY, dmap_from="ATTN"), targets=("DMAP",), progress=False)
    assert [(r["target"], r["state"]) for r in res["rows"]] == [STATES[0], *STATES[3:]]
    assert res["rows"][1]["source"] == "ATTN pretrained"
    assert all(check["passed"] is True for check in res["checks"].values())
    for key in ("d_nn", "heldout_loss", "rho_skew"):
        assert res["rows"][0][key] == tiny_run["rows"][0][key]
    assert res["rows"][1]["rho_skew"] == 0.0


def test_resume_gives_the_rows_of_an_uninterrupted_run(tmp_path, monkeypatch, tiny_run):
    """Oracle: the uninterrupted run (``tiny_run``).  Interrupted during the DMAP adaptation, the resumed run
    rebuilds the DMAP source from the kept DMTN state dict; every field but ``seconds`` must match exactly
    (single-threaded CPU torch is deterministic, and JSON keeps doubles exactly)."""
    calls = []
    train_flow = _runner_module().train_flow

    def interrupt_the_second_adaptation(*args, **kwargs):
        calls.append(kwargs["steps"])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return train_flow(*args, **kwargs)

    monkeypatch.setattr(_runner_module(), "train_flow", interrupt_the_second_adaptation)
    with pytest.raises(KeyboardInterrupt):
        run_sit_transfer(TINY, out=tmp_path / "run", progress=False)
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["status"] == "interrupted" and record["done"] == ["ATTN", "DMTN"]
    assert record["conditions"] == ["ATTN", "DMTN", "DMAP"]
    monkeypatch.setattr(_runner_module(), "train_flow", train_flow)

    resumed = run_sit_transfer(TINY, out=tmp_path / "run", progress=False, resume=True)
    reference = run_sit_transfer(TINY, out=tmp_path / "reference", progress=False)

    def strip(rows):
        return [{k: v for k, v in r.items() if k not in WALL_CLOCK} for r in rows]

    assert strip(resumed["rows"]) == strip(reference["rows"]) == strip(tiny_run["rows"])
    assert resumed["checks"] == reference["checks"] and resumed["direction"] == reference["direction"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "complete"
    names = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "reference").iterdir())
    assert {"results.json", "table.md", "transfer.png", "ATTN.pt", "DMTN.pt", "DMAP.pt"} <= set(names)
    # the figure shows no wall-clock numbers: the samples redrawn from the kept state dicts give the same PNG
    assert (tmp_path / "run" / "transfer.png").read_bytes() == (tmp_path / "reference" / "transfer.png").read_bytes()


# --- validation, presets, table and rows ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"adapt_steps": 0}, ValueError, r"adapt_steps must be an integer >= 1, got 0"),
        ({"adapt_steps": 2.5}, TypeError, r"adapt_steps must be an integer, got float"),
        ({"dmap_adapt_factor": 0}, ValueError, r"dmap_adapt_factor must be an integer >= 1, got 0"),
        ({"dmap_from": "DMAP"}, ValueError, r"dmap_from must be one of 'DMTN', 'ATTN', got 'DMAP'"),
        ({"order": "mhsa"}, ValueError, r"order must be one of 'ffn-mhsa', 'mhsa-ffn', got 'mhsa'"),
        ({"heldout_contexts": 0}, ValueError, r"heldout_contexts must be an integer >= 1, got 0"),
        ({"n_train": 50, "context": 64}, ValueError, r"context must be <= n_train=50, got 64"),
        ({"n_generate": 100}, ValueError, r"n_generate must be a multiple of context=64, got 100"),
        ({"n_heads": 3}, ValueError, r"n_heads must divide d_model=64, got 3"),
    ],
)
def test_config_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        SitTransferConfig(**kwargs)


def test_run_validation():
    with pytest.raises(TypeError, match=r"config must be a SitTransferConfig, got SwissSiTConfig"):
        run_sit_transfer(SwissSiTConfig(), progress=False)
    with pytest.raises(ValueError, match=r"targets must be a non-empty sequence of DMTN, DMAP, got \(\)"):
        run_sit_transfer(TINY, targets=(), progress=False)
    with pytest.raises(ValueError, match=r"targets entry must be one of 'DMTN', 'DMAP', got 'ATTN'"):
        run_sit_transfer(TINY, targets=("ATTN",), progress=False)
    with pytest.raises(ValueError, match=r"targets must include DMTN when DMAP is folded from the adapted DMTN"):
        run_sit_transfer(TINY, targets="DMAP", progress=False)


def test_presets_and_the_swiss_sit_fields():
    """The first sixteen fields are the Swiss SiT's, with its defaults and its quick preset's values."""
    assert SitTransferConfig.preset("paper") == SitTransferConfig()
    assert SitTransferConfig().preset_name() == "paper" and TINY.preset_name() == "custom"
    swiss = [f.name for f in dataclasses.fields(SwissSiTConfig)]
    assert [f.name for f in dataclasses.fields(SitTransferConfig)][: len(swiss)] == swiss
    for preset in ("quick", "paper"):
        ours, theirs = SitTransferConfig.preset(preset), SwissSiTConfig.preset(preset)
        assert all(getattr(ours, k) == getattr(theirs, k) for k in swiss), preset
    paper = SitTransferConfig()
    assert paper.order == "mhsa-ffn" and paper.dmap_from == "DMTN"  # SiT's blocks; the paper's route
    assert paper.adapt_budget("DMAP") == 2 * paper.adapt_budget("DMTN")  # 80k against 40k in the paper


def test_paper_numbers_transcription():
    """Oracle: Attention Geometry §10 as transcribed in book/reference.md §A.12."""
    assert PAPER_SECTION10["ATTN", "pretrained"]["fid"] == 2.7650
    assert PAPER_SECTION10["DMTN", "adapted"]["fid"] == 2.9341
    assert PAPER_SECTION10["DMAP", "adapted"]["fid"] == 8.1210
    assert PAPER_SECTION10["DMAP", "adapted"]["adapt_steps"] == 2 * PAPER_SECTION10["DMTN", "adapted"]["adapt_steps"]
    assert sorted(PAPER_SECTION10) == sorted(STATES)


def test_table_lists_every_state_beside_the_paper_and_says_what_compares(tiny_run):
    text = sit_transfer_table(tiny_run)
    body = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| Target")]
    assert [tuple(cell.strip() for cell in line.split("|")[1:3]) for line in body] == [
        ("ATTN", "pretrained"),
        ("DMTN", "projected (from ATTN pretrained)"),
        ("DMTN", "adapted"),
        ("DMAP", "projected (from DMTN adapted)"),
        ("DMAP", "adapted"),
    ]
    assert "FID 2.7650 ± 0.1199" in body[0] and "FID 8.1210 ± 0.1914" in body[4] and "unusable" in body[1]
    assert "different measurements" in text and "direction" in text and "not of value" in text


def test_rows_for_a_sweep_are_flat_keys_and_numbers(tiny_run):
    rows = sit_transfer_rows(tiny_run)
    assert [(r["target"], r["state"]) for r in rows] == STATES
    for r in rows:
        assert list(r) == ["target", "state", *MEASUREMENTS]
        for key in MEASUREMENTS:
            value = r[key]
            if key == "train_loss" and r["state"] == "projected":
                assert value is None
            else:
                assert isinstance(value, (int, float)) and not isinstance(value, bool), (key, value)
                assert math.isfinite(value)


# --- the command line -----------------------------------------------------------------------------------------


def test_cli_runs_the_experiment_with_targets_and_refuses_them_elsewhere(tmp_path, capsys):
    from workbench.cli import main

    sets = ["--set", "n_train=300", "--set", "context=16", "--set", "n_generate=32", "--set", "euler_steps=5"]
    sets += ["--set", "adapt_steps=2", "--set", "heldout_contexts=2", "--set", "batch=4"]
    argv = ["experiment", "sit-transfer", "--targets", "DMTN", "--steps", "4", *sets, "--no-progress", "--json"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(r["target"], r["state"]) for r in document["rows"]] == STATES[:3]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["selection"] == {"targets": ["DMTN"]}
    assert main(["experiment", "swiss-sit", "--targets", "DMTN", "--out", str(tmp_path / "other")]) == 2
    assert "--targets does not apply to the swiss-sit experiment" in capsys.readouterr().err


def _runner_module():
    """The module of ``run_sit_transfer``, whose ``train_flow`` the interruption test replaces."""
    import inspect

    return inspect.getmodule(run_sit_transfer)
