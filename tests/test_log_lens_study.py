"""The log-lens study: head circuits, composition scores, the lens reading, rank statistics and the experiment.

Oracles: a head's OV and QK circuits against the same maps computed by calling the model's own ``nn.Linear``
layers on the identity (a second computation, float64: agreement to rounding, 1e-12); a head's actual output
against ``P diag(1/σ) X W_OV + 1 βᵀ W_V W_O`` with the LayerNorm statistics computed by hand; composition scores
of rank-one circuits against their closed form, a cosine; the lens' logarithm against ``scipy.linalg.expm``;
commuting maps (polynomials in one matrix) against a zero commutator; Spearman's ρ against
``scipy.stats.spearmanr``; the relabelling p-value against exact counts; the change statistics against step and
ramp functions in closed form.
"""

import json
import math

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

torch = pytest.importorskip("torch")

from workbench.experiments import InductionTransformer  # noqa: E402
from workbench.experiments.log_lens import (  # noqa: E402
    LogLensConfig,
    alignment_test,
    change_statistics,
    composition_scores,
    head_circuits,
    log_lens_rows,
    log_lens_table,
    rank_correlation,
    run_log_lens,
)
from workbench.lens import log_lens  # noqa: E402

torch.set_num_threads(1)

TINY = dict(
    vocab_size=8, half_length=4, min_period=2, d_model=8, n_heads=2, steps=4, batch=4, log_every=2, eval_batch=4
)


def _model(seed=0, d_model=12, n_heads=3, operator="ATTN"):
    torch.manual_seed(seed)
    model = InductionTransformer(10, 8, d_model, n_heads, 2, operator).double()
    with torch.no_grad():  # a trained-looking LayerNorm (γ ≠ 1, β ≠ 0), so that folding is exercised
        for block in model.blocks:
            block.norm_attention.weight.uniform_(0.5, 1.5)
            block.norm_attention.bias.normal_(0.0, 0.3)
    return model


# ---- head circuits ---------------------------------------------------------------------------------------------


def test_circuits_are_the_products_of_the_layers_own_maps():
    # Second computation: the layers' nn.Linear maps applied to the identity (rows e_i), one head's block kept.
    model = _model()
    W_OV, W_QK = head_circuits(model, fold_layer_norm=False)
    D, H = 12, 3
    dh = D // H
    eye = torch.eye(D, dtype=torch.float64)
    for layer, block in enumerate(model.blocks):
        attention = block.attention
        with torch.no_grad():
            values, queries, keys = attention.value(eye), attention.query(eye), attention.key(eye)
            for h in range(H):
                head = torch.zeros_like(values)
                head[:, h * dh : (h + 1) * dh] = values[:, h * dh : (h + 1) * dh]
                ov = (attention.out(head) - attention.out.bias).numpy()  # row i: e_i W_V^h W_O^h
                qk = (queries[:, h * dh : (h + 1) * dh] @ keys[:, h * dh : (h + 1) * dh].T).numpy()
                np.testing.assert_allclose(W_OV[layer, h], ov, rtol=0, atol=1e-12)  # float64: rounding only
                np.testing.assert_allclose(W_QK[layer, h], qk, rtol=0, atol=1e-12)
                assert np.linalg.matrix_rank(W_OV[layer, h]) == dh  # rank d_h: no logarithm of W_OV itself


def test_a_heads_output_is_attention_times_the_folded_ov_circuit():
    # Oracle: y_h = P^h diag(1/σ) X W_OV^h + 1 βᵀ W_V^h W_O^h with the LayerNorm's σ computed by hand; the module's
    # forward with every other head's output columns (and b_O) zeroed.  float64 throughout: 1e-12 (rounding).
    model = _model(seed=1)
    W_OV, _ = head_circuits(model)
    bare, _ = head_circuits(model, fold_layer_norm=False)
    tokens = torch.randint(0, 10, (1, 8))
    X = (model.embed(tokens) + model.position(torch.arange(8)))[0].detach()
    block = model.blocks[0]
    norm = block.norm_attention
    sigma = torch.sqrt(X.var(-1, unbiased=False) + norm.eps).numpy()
    beta = norm.bias.detach().numpy()
    with torch.no_grad():
        P = block.attention.attention(norm(X[None]))[0].numpy()  # [H, n, n]
        full = block.attention(norm(X[None]))[0].numpy()
    dh = block.attention.d_head
    total = np.zeros_like(full)
    for h in range(3):
        layer = InductionTransformer(10, 8, 12, 3, 2, "ATTN").double().blocks[0].attention
        layer.load_state_dict(block.attention.state_dict())
        with torch.no_grad():
            keep = torch.zeros(12, dtype=torch.bool)
            keep[h * dh : (h + 1) * dh] = True
            layer.out.weight[:, ~keep] = 0.0
            layer.out.bias.zero_()
            actual = layer(norm(X[None]))[0].numpy()
        expected = P[h] @ (X.numpy() / sigma[:, None]) @ W_OV[0, h] + beta @ bare[0, h]
        np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-12)
        total += expected
    np.testing.assert_allclose(full, total + block.attention.out.bias.detach().numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("operator", ["ATTN", "DMTN"])
def test_attention_is_the_softmax_of_the_folded_qk_circuit(operator):
    # Oracle: with u = LN(x) = x F / σ + b, the logits β u_i 𝒲 u_jᵀ are, up to terms constant in j (which softmax
    # drops), β (U W_QK Uᵀ)_ij + β (b 𝒲 Fᵀ Uᵀ)_j with U = diag(1/σ) X, W_QK = F 𝒲 Fᵀ and 𝒲 the operator's
    # effective form (unfolded circuit).  The module's causal operator must equal that softmax; float64: 1e-12.
    model = _model(seed=4, operator=operator)
    _, W_QK = head_circuits(model)
    _, bare = head_circuits(model, fold_layer_norm=False)
    tokens = torch.randint(0, 10, (1, 8))
    X = (model.embed(tokens) + model.position(torch.arange(8)))[0].detach()
    block = model.blocks[0]
    norm = block.norm_attention
    with torch.no_grad():
        P = block.attention.attention(norm(X[None]))[0].numpy()
    sigma = torch.sqrt(X.var(-1, unbiased=False) + norm.eps).numpy()
    U = X.numpy() / sigma[:, None]
    gamma, b = norm.weight.detach().numpy(), norm.bias.detach().numpy()
    F = (np.eye(12) - 1 / 12) * gamma[None, :]
    future = np.triu(np.ones((8, 8), dtype=bool), 1)
    for h in range(3):
        logits = (U @ W_QK[0, h] @ U.T + (b @ bare[0, h] @ F.T @ U.T)[None, :]) / math.sqrt(4)
        logits[future] = -np.inf
        expected = np.exp(logits - logits.max(axis=1, keepdims=True))
        np.testing.assert_allclose(P[h], expected / expected.sum(axis=1, keepdims=True), rtol=0, atol=1e-12)


def test_circuits_refuse_an_operator_whose_logits_are_not_bilinear():
    with pytest.raises(ValueError, match=r"model.operator must be one of \('ATTN', 'DMTN'\).*got 'DMAP'"):
        head_circuits(_model(operator="DMAP"))


# ---- composition scores ------------------------------------------------------------------------------------


def test_rank_one_compositions_are_cosines():
    # Closed form: W_OV = u vᵀ (reads u, writes v), W_QK = p rᵀ (queries read p, keys read r) give
    # K = |cos(v, r)|, Q = |cos(v, p)|, V(a, b) = |cos(v_a, u_b)|.  Tolerance 1e-14: a few roundings of O(1) numbers.
    rng = np.random.default_rng(0)
    u, v, p, r, u2, v2 = rng.standard_normal((6, 7))
    cos = lambda x, y: abs(x @ y) / np.linalg.norm(x) / np.linalg.norm(y)  # noqa: E731
    scores = composition_scores([np.outer(u, v)], [np.outer(p, r)], [np.outer(u2, v2)])
    assert scores["K"][0, 0] == pytest.approx(cos(v, r), abs=1e-14)
    assert scores["Q"][0, 0] == pytest.approx(cos(v, p), abs=1e-14)
    assert scores["V"][0, 0] == pytest.approx(cos(v, u2), abs=1e-14)
    aligned = composition_scores([np.outer(u, r)], [np.outer(p, 3 * r)], [np.outer(u, v)])
    assert aligned["K"][0, 0] == pytest.approx(1.0, abs=1e-14)


def test_a_write_orthogonal_to_what_the_keys_read_composes_to_zero():
    # Exact zero: W_OV writes into span(e_0, e_1); the keys of W_QK read span(e_2, e_3); the queries read e_0.
    rng = np.random.default_rng(1)
    D = 6
    W_OV = np.zeros((D, D))
    W_OV[:, :2] = rng.standard_normal((D, 2))
    W_QK = np.zeros((D, D))
    W_QK[:1, 2:4] = rng.standard_normal((1, 2))
    scores = composition_scores(W_OV[None], W_QK[None], W_OV[None])
    assert scores["K"][0, 0] == 0.0
    assert scores["Q"][0, 0] > 0.1  # the write lands where the queries read
    # Scale-free and bounded (‖AB‖_F <= ‖A‖_F ‖B‖_F) on general matrices.
    A, B, C = rng.standard_normal((3, 4, D, D))
    first, scaled = composition_scores(A, B, C), composition_scores(5 * A, 0.1 * B, 2 * C)
    for kind in "KQV":
        assert np.all((first[kind] >= 0) & (first[kind] <= 1))
        np.testing.assert_allclose(first[kind], scaled[kind], rtol=1e-13)  # only rounding of the rescaling


def test_composition_scores_refuse_mismatched_stacks():
    with pytest.raises(ValueError, match=r"reader_qk and reader_ov must have shape \[H_b, D, D\]"):
        composition_scores(np.zeros((2, 3, 3)), np.zeros((2, 4, 4)), np.zeros((2, 4, 4)))
    with pytest.raises(ValueError, match=r"writer_ov must be a non-empty stack of square matrices"):
        composition_scores(np.zeros((3, 3)), np.zeros((2, 3, 3)), np.zeros((2, 3, 3)))


# ---- the lens reading ------------------------------------------------------------------------------------------


def test_the_lens_logarithm_exponentiates_back_to_the_residual_update_map():
    # Oracle: scipy.linalg.expm(log M) = M for M = I + W_OV of each head.  Relative 1e-10: logm and expm each lose
    # a few ulps times the condition of M (‖W_OV‖_2 < 1 here, so M is well conditioned).
    W_OV, _ = head_circuits(_model(seed=2))
    maps = [np.eye(12) + W for W in W_OV.reshape(-1, 12, 12)]
    report = log_lens(maps)
    for entry, M in zip(report.entries, maps, strict=True):
        assert entry.log is not None, entry.reason
        assert np.linalg.norm(scipy.linalg.expm(entry.log) - M) <= 1e-10 * np.linalg.norm(M)


def test_commuting_head_maps_have_zero_commutator():
    # Oracle: two polynomials in one matrix commute, and so do their principal logs (functions of the same matrix):
    # ‖[S_a, S_b]‖_F = 0 up to rounding (1e-13 · ‖S_a‖‖S_b‖); a third, generic map does not commute.
    from workbench.experiments.log_lens import lens_of_maps

    rng = np.random.default_rng(3)
    A = 0.2 * rng.standard_normal((6, 6))
    other = 0.2 * rng.standard_normal((6, 6))
    lens = lens_of_maps([np.eye(6) + A, np.eye(6) + 2 * A + A @ A, np.eye(6) + other])
    H, norms = lens["commutator"], lens["log_norm"]
    assert H[0, 1] <= 1e-13 * norms[0] * norms[1]
    assert H[0, 2] > 1e-3
    assert np.all(np.diag(H) == 0) and np.array_equal(H, H.T)
    assert lens["commutator_normalized"][0, 1] <= 1e-13
    assert lens["expm_residual"] <= 1e-12


def test_a_head_without_a_logarithm_is_reported_not_raised():
    # W_OV with eigenvalue -3 makes I + W_OV have eigenvalue -2: no real principal log; its commutators are NaN.
    from workbench.experiments.log_lens import lens_of_maps

    bad = np.diag([-3.0, 0.5, 0.0])
    lens = lens_of_maps([np.eye(3) + bad, np.eye(3) + np.diag([0.1, 0.2, 0.3])])
    assert lens["reason"][0] == "no real principal logarithm: eigenvalue -2 on the negative real axis"
    assert math.isnan(lens["commutator"][0, 1]) and math.isnan(lens["commutator_normalized"][0, 1])


# ---- rank statistics -------------------------------------------------------------------------------------


def test_rank_correlation_matches_scipy_with_ties():
    # Second algorithm: scipy.stats.spearmanr (ties averaged the same way).  1e-12: a Pearson on ranks either way.
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = rng.integers(0, 5, 16).astype(float)  # ties
        y = x + rng.standard_normal(16)
        assert rank_correlation(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic, abs=1e-12)
    with pytest.raises(ValueError, match=r"x must not be constant \(Spearman's rho is undefined\)"):
        rank_correlation(np.ones(4), np.arange(4.0))
    with pytest.raises(ValueError, match=r"x and y must be 1-dimensional of equal length >= 3"):
        rank_correlation([1.0, 2.0], [2.0, 1.0])


def test_alignment_p_value_counts_relabellings():
    # Exact count: A = B generic 3 x 3 -> only the identity of the 3!·3! = 36 relabellings reaches |ρ| = 1.
    rng = np.random.default_rng(5)
    A = rng.standard_normal((3, 3))
    exact = alignment_test(A, A)
    assert exact["rho"] == 1.0 and exact["exact"] and exact["relabellings"] == 36
    assert exact["p_value"] == pytest.approx(1 / 36, abs=1e-15)
    # NaN pairs are left out, and ρ is scipy's on the rest.
    B = A + 0.5 * rng.standard_normal((3, 3))
    holes = A.copy()
    holes[0, 2] = np.nan
    partial = alignment_test(holes, B)
    mask = np.isfinite(holes)
    assert partial["pairs"] == 8
    assert partial["rho"] == pytest.approx(scipy.stats.spearmanr(A[mask], B[mask]).statistic, abs=1e-12)
    # Beyond 40,320 relabellings (3!·9! here): the identity plus `permutations` random draws.
    wide = rng.standard_normal((3, 9))
    sampled = alignment_test(wide, wide, permutations=199, seed=1)
    assert not sampled["exact"] and sampled["relabellings"] == 200
    assert sampled["p_value"] == pytest.approx(1 / 200, abs=1e-15)  # generic: no random relabelling gives |ρ| = 1
    with pytest.raises(ValueError, match=r"A and B must be matrices of one shape"):
        alignment_test(np.zeros((2, 3)), np.zeros((3, 2)))


def test_change_statistics_closed_forms():
    steps = np.arange(0.0, 201.0, 10.0)  # span 200
    # A jump between steps 90 and 100, window (80, 120): all the change in a fifth of the time, c = 200/40 = 5.
    jump = np.where(steps < 95, 1.0, 3.0)
    stats = change_statistics(steps, jump, (80.0, 120.0))
    assert stats["spike_step"] == 95.0 and stats["spike_rate"] == pytest.approx(0.2)
    assert stats["concentration"] == pytest.approx(5.0, rel=1e-14)
    assert stats["window_change"] == pytest.approx(2.0)
    # A steady ramp: c = 1 for any window on the grid; a tent peaks at its apex.
    assert change_statistics(steps, 3 * steps + 1, (40.0, 160.0))["concentration"] == pytest.approx(1.0, rel=1e-14)
    tent = -np.abs(steps - 70.0)
    assert change_statistics(steps, tent)["peak_step"] == 70.0
    # A series constant inside the window: c = 0; constant everywhere: undefined (None).
    assert change_statistics(steps, jump, (120.0, 200.0))["concentration"] == 0.0
    assert change_statistics(steps, np.ones_like(steps), (40.0, 60.0))["concentration"] is None
    # Smoothing a jump spreads it but keeps its centre: the steepest interval still straddles the jump.
    assert abs(change_statistics(steps, jump, smooth=3)["spike_step"] - 95.0) <= 10.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: change_statistics([0, 1, 2], [0.0, math.nan, 1.0]), r"values must be finite, got 1 non-finite"),
        (lambda: change_statistics([0, 2, 1], [0.0, 1.0, 2.0]), r"steps must be strictly increasing"),
        (lambda: change_statistics([0, 1, 2], [0.0, 1.0, 2.0], (1.5, 1.0)), r"window must be \(start, end\)"),
        (lambda: change_statistics([0, 1, 2], [0.0, 1.0, 2.0], (0.0, 3.0)), r"window must be"),
        (lambda: change_statistics([0, 1, 2], [0.0, 1.0, 2.0], smooth=2), r"smooth must be an odd integer >= 1"),
        (lambda: LogLensConfig(min_period=33), r"min_period must be an integer in \[1, 32\], got 33"),
        (lambda: LogLensConfig(min_period=0), r"min_period must be an integer in \[1, 32\], got 0"),
        (lambda: LogLensConfig(steps=10, log_every=6), r"log_every must be an integer in \[1, 5\], got 6"),
        (lambda: LogLensConfig(d_model=30), r"n_heads must divide d_model, got d_model=30 and n_heads=4"),
        (lambda: LogLensConfig(smooth=4), r"smooth must be an odd integer >= 1, got 4"),
        (lambda: LogLensConfig.preset("huge"), r"name must be one of 'quick', 'paper', got 'huge'"),
        (lambda: run_log_lens(LogLensConfig(**TINY), architectures=("rnn",)), r"architectures must be one of"),
        (lambda: run_log_lens(LogLensConfig(**TINY), architectures=()), r"architectures must name at least one"),
        (lambda: run_log_lens({"steps": 3}), r"config must be a LogLensConfig, got dict"),
        (lambda: run_log_lens(LogLensConfig(**TINY), operators=("DMAP",)), r"operators must be one of 'ATTN', 'DMTN'"),
    ],
)
def test_bad_settings_are_refused_with_the_parameter_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_presets_and_the_induction_task_they_share():
    quick, paper = LogLensConfig.preset("quick"), LogLensConfig.preset("paper")
    assert quick.preset_name() == "quick" and paper.preset_name() == "paper" and paper == LogLensConfig(name="paper")
    task = paper.induction_config()
    assert (task.n_layers, task.min_period, task.vocab_size, task.half_length) == (2, 8, 64, 32)


# ---- the experiment ----------------------------------------------------------------------------------------


def test_a_tiny_run_is_consistent_and_its_rows_are_flat(tmp_path):
    # Invariants of the record: the pair's curves are the history's entries at the pair, ranks lie in range, the
    # rows hold one string key and numbers; the run directory holds the table and one dashboard per model.
    config = LogLensConfig(**TINY)
    run_dir = tmp_path / "run"
    result = run_log_lens(config, operators=("ATTN",), architectures=("attn-only", "mlp"), progress=False, out=run_dir)
    result = json.loads(json.dumps(result))
    assert result["checks"]["all"]
    assert [(run["operator"], run["architecture"]) for run in result["runs"]] == [
        ("ATTN", "attn-only"),
        ("ATTN", "mlp"),
    ]
    run = result["runs"][0]
    prev, ind = run["pair"]["previous_token_head"][1], run["pair"]["induction_head"][1]
    H = config.n_heads
    history = np.array(run["history"]["commutator"], dtype=float)
    np.testing.assert_array_equal(np.array(run["curves"]["pair_commutator"], dtype=float), history[:, prev, H + ind])
    assert run["curves"]["steps"] == [0, 2, 4]
    assert 1 <= run["pair"]["k_composition_rank"] <= H * H
    rows = log_lens_rows(result)
    assert [k for k, v in rows[0].items() if isinstance(v, str)] == ["operator", "architecture"]
    assert log_lens_table(result).count("| ATTN |") == 2
    written = {p.name for p in run_dir.iterdir()}
    assert written >= {"results.json", "table.md", "dashboard-ATTN-attn-only.png", "dashboard-ATTN-mlp.png"}


@pytest.mark.parametrize("operator", ["ATTN", "DMTN"])
def test_the_training_trajectory_is_the_induction_experiments(operator):
    # Second computation: run_induction on the same task (the LogLensConfig's induction_config) draws the same
    # initial weights, batches and eval batch and takes the same optimiser steps; the snapshots consume no random
    # numbers, so every logged loss agrees exactly (same operations in the same order, one thread).
    from workbench.experiments import run_induction

    config = LogLensConfig(**TINY)
    ours = run_log_lens(config, operators=(operator,), progress=False)["runs"][0]["curves"]
    theirs = run_induction(
        config.induction_config(), operators=(operator,), architectures=("attn-only",), progress=False
    )
    curves = theirs["runs"][0]["curves"]
    assert ours["steps"] == curves["steps"]
    for key in ("repeat_loss", "first_half_loss", "induction_accuracy"):
        assert ours[key] == curves[key], key
    np.testing.assert_array_equal(ours["induction_score"], curves["induction_score"])


def test_spike_statistics_are_read_against_the_transition():
    # Closed form: a pair curve that jumps between steps 40 and 50, a transition at 45 with window (40, 60) over a
    # span of 100: spike at 45, lag 0, concentration 100/20 = 5.  A curve undefined at two snapshots is read on the
    # rest; one defined at fewer than three is reported undefined.
    from workbench.experiments.log_lens import transition_statistics

    steps = list(range(0, 101, 10))
    curve = [0.0 if t < 45 else 1.0 for t in steps]
    transition = {"detected": True, "step": 45.0, "window": [40.0, 60.0]}
    stats = transition_statistics(steps, curve, transition, smooth=1)
    assert (stats["spike_step"], stats["lag"], stats["concentration"]) == (45.0, 0.0, 5.0)
    holes = curve.copy()
    holes[0] = holes[10] = math.nan
    assert transition_statistics(steps, holes, transition, smooth=1)["snapshots_without_log"] == 2
    assert "undefined" in transition_statistics(steps, [math.nan] * 9 + [1.0, 2.0], transition, smooth=1)
    assert (
        transition_statistics(steps, curve, {"detected": False, "step": None, "window": None}, smooth=3)["lag"] is None
    )


def test_an_interrupted_run_resumes_to_the_same_record(tmp_path):
    # Invariant: each model is one RunLog condition, seeded on its own, so a run cut after its first model and
    # resumed gives the uninterrupted records (the finished one read back, the other retrained identically: one
    # thread, same operations), except the wall-clock seconds.
    config = LogLensConfig(**TINY)
    whole = json.loads(json.dumps(run_log_lens(config, progress=False, out=tmp_path / "whole")))
    cut = tmp_path / "cut"
    run_log_lens(config, progress=False, out=cut)
    record = json.loads((cut / "run.json").read_text())
    record.update(status="interrupted", done=["ATTN-attn-only"])
    (cut / "run.json").write_text(json.dumps(record))
    (cut / "DMTN-attn-only.json").unlink()
    resumed = json.loads(json.dumps(run_log_lens(config, progress=False, out=cut, resume=True)))
    for before, after in zip(whole["runs"], resumed["runs"], strict=True):
        for key in ("curves", "history", "pair", "alignment", "spikes", "transition", "checks"):
            assert before[key] == after[key], key


@pytest.mark.slow
def test_the_quick_preset_runs_end_to_end(tmp_path):
    # What `workbench experiment log-lens --preset quick` runs: both operators, attention-only.
    result = run_log_lens(LogLensConfig.preset("quick"), progress=False, out=tmp_path)
    assert result["checks"]["all"]
    assert [(run["operator"], run["architecture"]) for run in result["runs"]] == [
        ("ATTN", "attn-only"), ("DMTN", "attn-only"),
    ]  # fmt: skip
    assert all(run["transition"]["detected"] for run in result["runs"])  # the fixed period of the quick preset
    assert len(log_lens_rows(result)) == 2
    assert (tmp_path / "dashboard-DMTN-attn-only.png").is_file()
