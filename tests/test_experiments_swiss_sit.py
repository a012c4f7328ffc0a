"""Tests of the Swiss SiT experiment (Attention Geometry §9, Table 1; attention-geometry-math §A.10–A.12)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from workbench.attention import OPERATORS, native_spacing
from workbench.experiments import (
    PAPER_TABLE1,
    SWISS_SIT_ORDERS,
    SwissSiT,
    SwissSiTConfig,
    progress,
    run_swiss_sit,
    swiss_roll_points,
)
from workbench.experiments import swiss_sit_table as format_table
from workbench.experiments.swiss_sit import EPS_REV_TOLERANCE, train_condition

# A tiny configuration for the default (fast) tests: a few steps, 2 contexts of 16 points.
TINY = SwissSiTConfig.preset("quick", n_train=300, context=16, steps=8, batch=4, n_generate=32, euler_steps=5)


# --- data ---------------------------------------------------------------------------------------------------


def test_swiss_roll_points_standardised():
    """Oracle: the definition (centred, mean square 1); tolerance 1e-12 = float64 rounding of a mean over 2000."""
    x = swiss_roll_points(2000, seed=5, noise=0.3)
    assert x.shape == (2000, 2)
    assert np.abs(x.mean(axis=0)).max() < 1e-12
    assert abs(float((x**2).mean()) - 1.0) < 1e-12


def test_swiss_roll_points_is_the_xz_slice_of_the_roll():
    """Oracle: with noise 0, the points lie on the spiral r = t, i.e. |y| = t and atan2 consistent with t.

    Undoing the standardisation is not possible without the scale, so check the shape invariant instead: the
    ratio of the largest to the smallest radius about the raw centre equals t1/t0 = 3 (sklearn sheet, 1.5 turns),
    up to sampling (4000 points reach within 1% of both ends).
    """
    from workbench.markov import SwissRoll

    raw = SwissRoll(sampling="parameter").sample(4000, np.random.default_rng(1))[:, [0, 2]]
    x = swiss_roll_points(4000, seed=1, noise=0.0)
    centre = raw.mean(axis=0)
    scale = math.sqrt(float(((raw - centre) ** 2).mean()))
    np.testing.assert_allclose(x * scale + centre, raw, rtol=0, atol=1e-9)  # same points, affinely rescaled
    r = np.linalg.norm(raw, axis=1)
    assert 2.9 < r.max() / r.min() <= 3.0 + 1e-12


def test_swiss_roll_points_seeded():
    """Same seed → identical points (exact); another seed → different points."""
    np.testing.assert_array_equal(swiss_roll_points(50, seed=3), swiss_roll_points(50, seed=3))
    assert not np.array_equal(swiss_roll_points(50, seed=3), swiss_roll_points(50, seed=4))


def test_native_spacing_of_paper_data_is_as_documented():
    """Oracle: the value stated in the module docstring (≈ 0.017 for n=4000, seed 123, noise 0.5); 10% band."""
    cfg = SwissSiTConfig()
    spacing = native_spacing(swiss_roll_points(cfg.n_train, cfg.seed, cfg.noise))
    assert 0.015 < spacing < 0.019


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 1}, r"n must be an integer >= 2, got 1"),
        ({"n": 10, "noise": -0.1}, r"noise must be in \[0, inf\), got -0.1"),
    ],
)
def test_swiss_roll_points_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        swiss_roll_points(**kwargs)


# --- model --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("operator", OPERATORS)
@pytest.mark.parametrize("order", SWISS_SIT_ORDERS)
def test_model_shapes_and_row_stochastic_operators(operator, order):
    """Oracle: row sums of a softmax are 1; tolerance 1e-12 = float64 rounding of a 7-term sum."""
    torch.manual_seed(0)
    model = SwissSiT(operator, order, d_model=8, n_heads=2, ffn_mult=2).double()
    x, tau = torch.randn(3, 7, 2, dtype=torch.float64), torch.rand(3, dtype=torch.float64)
    with torch.no_grad():
        v, P = model(x, tau, return_operator=True)
    assert v.shape == (3, 7, 2)
    assert P.shape == (3, 2, 7, 7)
    assert bool((P >= 0).all())
    assert float((P.sum(-1) - 1).abs().max()) < 1e-12
    with torch.no_grad():
        torch.testing.assert_close(model.operators(x, tau), P, rtol=0, atol=0)


def test_model_is_permutation_equivariant():
    """Oracle: no positional encoding, so permuting the points permutes the velocities and P (float64, 1e-12)."""
    torch.manual_seed(1)
    model = SwissSiT("DMTN", "ffn-mhsa", d_model=8, n_heads=2).double()
    with torch.no_grad():  # make the gates non-zero so that attention matters
        model.ada[1].weight.normal_(0, 0.5)
        model.ada[1].bias.normal_(0, 0.5)
    x, tau = torch.randn(2, 6, 2, dtype=torch.float64), torch.rand(2, dtype=torch.float64)
    perm = torch.randperm(6)
    v, P = model(x, tau, return_operator=True)
    vp, Pp = model(x[:, perm], tau, return_operator=True)
    torch.testing.assert_close(vp, v[:, perm], rtol=0, atol=1e-12)
    torch.testing.assert_close(Pp, P[:, :, perm][:, :, :, perm], rtol=0, atol=1e-12)


def test_order_changes_the_function():
    """Same weights, other order → another function (once the gates are on); a difference > 1e-6 suffices."""
    torch.manual_seed(2)
    a = SwissSiT("ATTN", "ffn-mhsa", d_model=8, n_heads=2).double()
    with torch.no_grad():
        a.ada[1].bias.fill_(0.5)
    b = SwissSiT("ATTN", "mhsa-ffn", d_model=8, n_heads=2).double()
    b.load_state_dict(a.state_dict())
    x, tau = torch.randn(2, 5, 2, dtype=torch.float64), torch.rand(2, dtype=torch.float64)
    with torch.no_grad():
        assert float((a(x, tau) - b(x, tau)).abs().max()) > 1e-6


def test_gradient_reaches_every_parameter():
    """adaLN-Zero starts with closed gates; after two AdamW steps every parameter gets a non-zero gradient."""
    torch.manual_seed(3)
    model = SwissSiT("DMAP", "mhsa-ffn", d_model=8, n_heads=2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, tau, target = torch.randn(4, 6, 2), torch.rand(4), torch.randn(4, 6, 2)
    for _ in range(3):
        opt.zero_grad()
        loss = ((model(x, tau) - target) ** 2).mean()
        loss.backward()
        opt.step()
    for name, p in model.named_parameters():
        assert p.grad is not None and float(p.grad.abs().max()) > 0, name


def test_model_input_validation():
    model = SwissSiT("ATTN", "mhsa-ffn", d_model=8, n_heads=2)
    with pytest.raises(ValueError, match=r"x must have shape \[batch, points, 2\], got \(4, 3\)"):
        model(torch.randn(4, 3), torch.rand(4))
    with pytest.raises(ValueError, match=r"tau must have shape \[2\] \(one time per context\), got \(3,\)"):
        model(torch.randn(2, 3, 2), torch.rand(3))
    with pytest.raises(ValueError, match=r"order must be one of 'ffn-mhsa', 'mhsa-ffn', got 'ffn'"):
        SwissSiT("ATTN", "ffn")
    with pytest.raises(ValueError, match=r"operator must be one of"):
        SwissSiT("SOFT", "ffn-mhsa")


# --- training -----------------------------------------------------------------------------------------------


def test_ema_is_the_exponential_average_of_the_weights():
    """Oracle: the EMA recursion by hand. One step: ema = d·θ₀ + (1−d)·θ₁ (float32 lerp, atol 1e-6)."""
    cfg = dataclasses.replace(TINY, steps=1, ema=0.9)
    torch.manual_seed(cfg.seed)
    init = SwissSiT("ATTN", "mhsa-ffn", cfg.d_model, cfg.n_heads, cfg.ffn_mult).state_dict()
    train_t = torch.as_tensor(swiss_roll_points(cfg.n_train, cfg.seed, cfg.noise), dtype=torch.float32)
    with progress(1, "ema", enabled=False) as bar:
        model, ema, _ = train_condition("ATTN", "mhsa-ffn", cfg, train_t, bar)
    for name, p in model.state_dict().items():
        expected = 0.9 * init[name] + 0.1 * p
        torch.testing.assert_close(ema.state_dict()[name], expected, rtol=0, atol=1e-6)
    # ema = 0: the EMA copy is the trained model itself.
    with progress(1, "ema", enabled=False) as bar:
        model, ema, _ = train_condition("ATTN", "mhsa-ffn", dataclasses.replace(cfg, ema=0.0), train_t, bar)
    for name, p in model.state_dict().items():
        torch.testing.assert_close(ema.state_dict()[name], p, rtol=0, atol=0)


def test_same_seed_same_loss_and_samples():
    """Determinism: the same config reproduces loss and d_NN exactly; another seed does not."""
    kw = dict(operators=("DMTN",), orders=("ffn-mhsa",), progress=False)
    a = run_swiss_sit(TINY, **kw)["rows"][0]
    b = run_swiss_sit(TINY, **kw)["rows"][0]
    c = run_swiss_sit(dataclasses.replace(TINY, seed=7), **kw)["rows"][0]
    assert a["loss"] == b["loss"] and a["d_nn"] == b["d_nn"] and a["eps_rev"] == b["eps_rev"]
    assert a["loss"] != c["loss"]


def test_structural_facts_on_a_short_run():
    """The exact facts of §A.12 on barely trained weights.

    Oracles: ρ_skew(DMAP) = 0 exactly (the effective form is symmetric); ε_rev(DMAP) = 0 up to float64 rounding
    of P and π (EPS_REV_TOLERANCE = 1e-6, documented in the module); 0 ≤ ε_rev ≤ √2 (flux bound);
    1 ≤ e^{H̄} ≤ N (entropy bounds); DMTN is generically non-reversible (ε_rev > 1e-3, far above rounding).
    """
    res = run_swiss_sit(TINY, operators=("DMAP", "DMTN"), orders=("mhsa-ffn",), progress=False)
    rows = {r["operator"]: r for r in res["rows"]}
    assert rows["DMAP"]["rho_skew"] == 0.0
    assert rows["DMAP"]["eps_rev_max"] <= EPS_REV_TOLERANCE
    assert rows["DMTN"]["rho_skew"] > 0.0
    assert 1e-3 < rows["DMTN"]["eps_rev"] <= rows["DMTN"]["eps_rev_max"] <= math.sqrt(2)
    for r in res["rows"]:
        assert 1.0 <= r["eff_neighbours"] <= TINY.context
        assert r["parameters"] > 0 and r["loss"] > 0 and r["seconds"] > 0
        assert len(r["diagnostic_times_used"]) == len(TINY.diagnostic_times)
    checks = res["checks"]
    for name in (
        "rho_skew_zero_dmap_atap",
        "eps_rev_zero_dmap_atap",
        "eps_rev_at_most_sqrt2",
        "eff_neighbours_in_range",
    ):
        assert checks[name]["passed"] is True, name
    assert checks["d_nn_fidelity_band"]["meaningful"] is False  # not the paper preset
    assert res["experiment"] == "swiss-sit" and res["native_spacing"] > 0


def test_run_validation():
    with pytest.raises(ValueError, match=r"operators entry must be one of .*, got 'SOFT'"):
        run_swiss_sit(TINY, operators=("SOFT",), progress=False)
    with pytest.raises(ValueError, match=r"orders entry must be one of 'ffn-mhsa', 'mhsa-ffn', got 'x'"):
        run_swiss_sit(TINY, orders=("x",), progress=False)
    with pytest.raises(ValueError, match=r"operators must be a non-empty sequence"):
        run_swiss_sit(TINY, operators=(), progress=False)
    with pytest.raises(TypeError, match=r"config must be a SwissSiTConfig, got dict"):
        run_swiss_sit({}, progress=False)


# --- configuration, table -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"context": 1}, ValueError, r"context must be an integer >= 2, got 1"),
        ({"n_train": 50, "context": 64}, ValueError, r"context must be <= n_train=50, got 64"),
        ({"n_heads": 3}, ValueError, r"n_heads must divide d_model=64, got 3"),
        ({"steps": 0}, ValueError, r"steps must be an integer >= 1, got 0"),
        ({"steps": 2.5}, TypeError, r"steps must be an integer, got float"),
        ({"lr": 0.0}, ValueError, r"lr must be in \(0, inf\), got 0.0"),
        ({"ema": 1.0}, ValueError, r"ema must be in \[0, 1\), got 1.0"),
        ({"noise": -1.0}, ValueError, r"noise must be in \[0, inf\), got -1.0"),
        ({"n_generate": 100}, ValueError, r"n_generate must be a multiple of context=64, got 100"),
        ({"diagnostic_times": (0.5, 0.0)}, ValueError, r"diagnostic_times entry must be in \(0, 1\], got 0.0"),
        ({"diagnostic_times": [0.5]}, TypeError, r"diagnostic_times must be a non-empty tuple of floats"),
        ({"log_every": 0}, ValueError, r"log_every must be an integer >= 1, got 0"),
    ],
)
def test_config_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        SwissSiTConfig(**kwargs)


def test_presets():
    assert SwissSiTConfig.preset("paper") == SwissSiTConfig()
    assert SwissSiTConfig().preset_name() == "paper"
    assert SwissSiTConfig.preset("quick").preset_name() == "quick"
    assert TINY.preset_name() == "custom"
    quick, paper = SwissSiTConfig.preset("quick"), SwissSiTConfig.preset("paper")
    assert quick.steps < paper.steps and quick.context < paper.context
    assert (paper.n_train, paper.seed) == (4000, 123)  # the seed's training set and seed (§A.11)
    with pytest.raises(ValueError, match=r"name must be one of 'quick', 'paper', got 'huge'"):
        SwissSiTConfig.preset("huge")


def test_seed_table1_transcription():
    """Oracle: the published Table 1 (§A.12): 8 conditions, DMAP/ATAP skew exactly 0, ATTN MHSA→FFN ε_rev 1.414."""
    assert set(PAPER_TABLE1) == {(op, order) for op in OPERATORS for order in SWISS_SIT_ORDERS}
    assert all(PAPER_TABLE1[(op, o)]["rho_skew"] == 0 for op in ("DMAP", "ATAP") for o in SWISS_SIT_ORDERS)
    assert PAPER_TABLE1[("ATTN", "mhsa-ffn")] == {
        "d_nn": 0.0508,
        "eff_neighbours": 10.4,
        "eps_rev": 1.414,
        "rho_skew": 10.449,
    }
    assert PAPER_TABLE1[("DMAP", "mhsa-ffn")]["eff_neighbours"] == 1.14
    assert all(0.0494 <= row["d_nn"] <= 0.0512 for row in PAPER_TABLE1.values())


def test_format_table_layout():
    rows = [
        dict(operator=op, order=o, d_nn=0.02, d_nn_ratio=1.2, eff_neighbours=3.0, eps_rev=0.1, rho_skew=0.5)
        for op in ("DMAP", "ATTN")
        for o in SWISS_SIT_ORDERS
    ]
    text = format_table({"native_spacing": 0.0166, "rows": rows})
    lines = text.splitlines()
    assert lines[0].startswith("| Op | Order | d_NN")
    assert sum(line.startswith("| DMAP") or line.startswith("| ATTN") for line in lines) == 4
    assert "| ATTN | MHSA→FFN | 0.02 (1.2×) / 0.0508 | 3 / 10.4 | 0.1 / 1.41 | 0.5 / 10.4 |" in lines
    assert "Native spacing" in text and "0.0166" in text


# --- the full quick preset ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_quick_preset_writes_a_complete_run_directory(tmp_path):
    """All 8 conditions of the quick preset: files written, structural checks pass."""
    res = run_swiss_sit(SwissSiTConfig.preset("quick"), out=tmp_path / "run", progress=False)
    run = tmp_path / "run"
    for name in ("results.json", "config.json", "table.md", "samples.png", "grid.png"):
        assert (run / name).is_file(), name
    for op in OPERATORS:
        for order in SWISS_SIT_ORDERS:
            assert (run / f"{op}-{order}.pt").is_file()
    assert len(res["rows"]) == 8
    for name in (
        "rho_skew_zero_dmap_atap",
        "eps_rev_zero_dmap_atap",
        "eps_rev_at_most_sqrt2",
        "eff_neighbours_in_range",
    ):
        assert res["checks"][name]["passed"] is True, name
    assert (run / "table.md").read_text(encoding="utf-8") == format_table(res)
