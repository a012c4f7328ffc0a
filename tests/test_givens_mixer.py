"""The token-mixer stability experiment: masked bytes, the four branches, the measurements and the runner.

Oracles: the masked-byte bpb of uniform logits is log2(256) = 8 (closed form) and of a fixed unigram model the mean
-log2 q over the masked targets (numpy); the Givens branch against its dense matrix (float64 products of dense
plane rotations, an independent path) and the orthogonality of that matrix; the impossibility of a causal
orthogonal mixer against sympy's exact solution of L^T L = I for a symbolic lower-triangular L; the spike counter
against hand-counted synthetic curves; the matched budget against the streams and weights built directly.
"""

import hashlib
import json
import math

import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from workbench.experiments.common import ByteCorpus, shakespeare_bytes  # noqa: E402
from workbench.experiments.givens_mixer import (  # noqa: E402  # noqa: E402
    GIVENS_MIXER_CONDITIONS,
    MASK_ID,
    MIXER_INITS,
    GivensMixerConfig,
    MaskedByteTransformer,
    count_spikes,
    givens_mixer_rows,
    givens_mixer_table,
    mask_bytes,
    masked_bpb,
    masked_eval_set,
    run_givens_mixer,
    training_stream,
)

torch.set_num_threads(1)


def _corpus(n_train=4000, n_held=4000, seed=0):
    rng = np.random.default_rng(seed)
    return ByteCorpus(
        rng.integers(0, 256, n_train).astype(np.uint8), rng.integers(0, 256, n_held).astype(np.uint8), (), ()
    )


def _tiny(**overrides):
    settings = dict(lrs=(0.01,), warmups=(0,), steps=4, spike_window=2, log_every=2, eval_windows=8)
    return GivensMixerConfig.preset("quick", **{**settings, **overrides})


# ---- the score --------------------------------------------------------------------------------------------------


def test_uniform_logits_score_eight_bits_per_masked_byte():
    # Closed form: p = 1/256 at every masked byte, so bpb = log2 256 = 8; float64 sums of equal terms: 1e-12.
    held = masked_eval_set(_corpus(), 40, 32, 0.15, seed=3)
    got = masked_bpb(lambda x: torch.zeros(*x.shape, 256), held, batch=7)
    assert got["bytes"] == 40 * 5
    assert got["bpb"] == pytest.approx(8.0, rel=1e-12)


def test_only_masked_positions_are_scored():
    # Oracle: a model that copies its input with certainty at unmasked positions and is uniform at [MASK] scores
    # exactly the uniform 8 bits: the unmasked (perfectly predicted) positions do not enter the average.
    def copier(x):
        logits = torch.zeros(*x.shape, 256, dtype=torch.float64)
        seen = x < MASK_ID
        logits[seen] = 60.0 * torch.nn.functional.one_hot(x[seen], 256).double()
        return logits

    held = masked_eval_set(_corpus(), 16, 16, 0.25, seed=0)
    assert masked_bpb(copier, held)["bpb"] == pytest.approx(8.0, rel=1e-12)


def test_bpb_of_a_unigram_model_is_its_cross_entropy_on_the_masked_bytes():
    # Oracle: fixed logits log q predict every byte with q; bpb = mean of -log2 q over the masked targets (numpy).
    # float64 throughout: 1e-12.
    q = np.random.default_rng(1).dirichlet(np.ones(256))
    held = masked_eval_set(_corpus(), 30, 20, 0.2, seed=2)

    def unigram(x):
        return torch.from_numpy(np.log(q)).expand(*x.shape, 256)

    got = masked_bpb(unigram, held, batch=4)
    assert got["bpb"] == pytest.approx(-np.log2(q[held.targets[held.mask]]).mean(), rel=1e-12)


# ---- masks and the matched budget --------------------------------------------------------------------------------


def test_masks_hold_a_fixed_count_and_only_mask_ids():
    windows = np.random.default_rng(0).integers(0, 256, (50, 32))
    batch = mask_bytes(windows, 0.15, np.random.default_rng(4))
    assert (batch.mask.sum(axis=1) == 5).all()  # round(0.15 × 32) = 5 in every window
    assert (batch.inputs[batch.mask] == MASK_ID).all()
    assert (batch.inputs[~batch.mask] == windows[~batch.mask]).all()
    assert (batch.targets == windows).all()


def test_masks_and_windows_are_fixed_by_the_seed_alone():
    corpus = _corpus()
    a, b = training_stream(corpus, 5, 4, 16, 0.15, seed=7), training_stream(corpus, 5, 4, 16, 0.15, seed=7)
    c = training_stream(corpus, 5, 4, 16, 0.15, seed=8)
    for field in ("inputs", "targets", "mask"):
        assert (getattr(a, field) == getattr(b, field)).all()
    assert not (a.mask == c.mask).all()
    held_a, held_b = masked_eval_set(corpus, 10, 16, 0.15, 7), masked_eval_set(corpus, 10, 16, 0.15, 7)
    assert (held_a.mask == held_b.mask).all() and (held_a.targets == held_b.targets).all()


def test_every_condition_at_one_seed_reads_the_same_stream_and_held_out_masks():
    # Oracle: the SHA-256 of the stream and of the held-out set built directly with the run's seed; every row of
    # a run records the digest of what it read, so each must equal these.
    config = _tiny(steps=3)
    result = run_givens_mixer(config, progress=False)
    corpus = shakespeare_bytes(config.held_out_every)

    def digest(masked):
        h = hashlib.sha256()
        for field in ("inputs", "targets", "mask"):
            h.update(np.ascontiguousarray(getattr(masked, field)).tobytes())
        return h.hexdigest()

    stream = training_stream(corpus, config.steps, config.batch, config.context, config.mask_fraction, config.seed)
    held = masked_eval_set(corpus, config.eval_windows, config.context, config.mask_fraction, config.seed)
    assert [r["condition"] for r in result["runs"]] == list(GIVENS_MIXER_CONDITIONS)
    assert {r["stream_digest"] for r in result["runs"]} == {digest(stream)}
    assert {r["held_digest"] for r in result["runs"]} == {digest(held)}
    assert result["checks"]["all"]


@pytest.mark.parametrize("init", MIXER_INITS)
def test_shared_weights_agree_across_conditions_and_linear_starts_at_the_givens_matrices(init):
    models = {}
    for condition in GIVENS_MIXER_CONDITIONS:
        torch.manual_seed(5)
        models[condition] = MaskedByteTransformer(condition, 12, 8, 2, 2, init)
    reference = models["attention"].shared_parameters()
    for model in models.values():
        shared = model.shared_parameters()
        assert shared.keys() == reference.keys()
        assert all(torch.equal(shared[k], reference[k]) for k in shared)  # same draws: bitwise equal
    # Dense reference: the linear branch's A_g against the Givens mixers' dense matrices (float32 products of up to
    # 12 stages: 1e-6).
    givens = models["givens"].givens_mixers()
    linear = torch.cat([branch.weight for branch in models["linear"].mixing])
    dense = torch.stack([m.matrix() for m in givens])
    torch.testing.assert_close(linear, dense, rtol=0, atol=1e-6)
    if init == "identity":
        assert (dense == torch.eye(12)).all()
    else:
        assert (dense - torch.eye(12)).abs().max() > 0.1
    # Hence the two models are the same function at step 0 (float32 forward passes: 1e-5).
    tokens = torch.randint(0, MASK_ID + 1, (3, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(models["linear"](tokens), models["givens"](tokens), rtol=0, atol=1e-5)


# ---- orthogonality ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("init", MIXER_INITS)
def test_the_givens_branch_is_exactly_orthogonal_on_the_token_axis_after_training(init):
    # Dense reference: each mixer's matrix as a product of dense rotations (GivensFlowMixer.matrix), float64.
    # W^T W = I to 1e-12 (16 stages of rotations leave ~1e-15); the branch equals W_g h_g per group and keeps every
    # feature column's norm, to 1e-12.
    torch.manual_seed(0)
    model = MaskedByteTransformer("givens", 16, 12, 3, 2, init)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    tokens = torch.randint(0, MASK_ID + 1, (4, 16), generator=torch.Generator().manual_seed(1))
    before = [m.angles.detach().clone() for m in model.givens_mixers()]
    for _ in range(3):  # move the angles: the property must hold for trained angles, not just the initial ones
        optimizer.zero_grad()
        model(tokens).logsumexp(-1).mean().backward()
        optimizer.step()
    assert any(not torch.equal(b, m.angles) for b, m in zip(before, model.givens_mixers(), strict=True))
    model = model.double()
    eye = torch.eye(16, dtype=torch.float64)
    h = torch.randn(5, 16, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    for branch in model.mixing:
        dense = [m.matrix() for m in branch.mixers]
        for W in dense:
            assert (W.T @ W - eye).abs().max() < 1e-12
        with torch.no_grad():
            y = branch(h)
        expected = torch.cat([W @ part for W, part in zip(dense, h.chunk(3, dim=-1), strict=True)], dim=-1)
        torch.testing.assert_close(y, expected, rtol=0, atol=1e-12)
        torch.testing.assert_close(y.norm(dim=-2), h.norm(dim=-2), rtol=1e-12, atol=0)


def test_a_causal_orthogonal_matrix_is_a_diagonal_sign_matrix():
    # Exact oracle: sympy solves L^T L = I for a symbolic lower-triangular 3×3 L; the solutions are exactly the
    # 2^3 diagonal matrices with entries ±1, so no causal orthogonal mixer moves information between tokens.
    a, b, c, d, e, f = sp.symbols("a b c d e f", real=True)
    L = sp.Matrix([[a, 0, 0], [b, c, 0], [d, e, f]])
    solutions = sp.solve(list(L.T * L - sp.eye(3)), [a, b, c, d, e, f], dict=True)
    assert len(solutions) == 8
    diagonals = set()
    for s in solutions:
        Q = L.subs(s)
        assert Q == sp.diag(*Q.diagonal())
        diagonals.add(tuple(Q.diagonal()))
    assert diagonals == {(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)}
    # And a trained-or-not Givens mixer is indeed not causal: its strict upper triangle is not zero.
    torch.manual_seed(0)
    W = MaskedByteTransformer("givens", 8, 4, 1, 1, "uniform").givens_mixers()[0].matrix()
    assert W.triu(1).abs().max() > 0.1


# ---- stability measurements --------------------------------------------------------------------------------------


def test_spike_counter_on_synthetic_curves():
    # Closed form: on a flat curve (median 1) each step above 1.5 counts once, k = 4.
    flat = np.ones(40)
    curve = flat.copy()
    curve[[10, 25]] = 2.0  # two isolated spikes
    curve[[30, 31]] = 3.0  # a two-step spike: both steps count (the window's median is still 1)
    curve[2] = 9.0  # inside the first k steps: no full window, never counts
    curve[35] = 1.5  # exactly the threshold: not above it
    curve[37] = np.nan  # non-finite: reported as divergence, not as a spike
    assert count_spikes(curve, window=4, factor=1.5) == 4
    assert count_spikes(flat, window=4) == 0
    assert count_spikes(np.exp(-np.arange(100) / 20), window=10) == 0  # a decaying curve has none
    assert count_spikes(np.ones(3), window=4) == 0  # shorter than the window


def test_a_model_with_a_non_finite_residual_stream_refuses_to_go_on():
    torch.manual_seed(0)
    model = MaskedByteTransformer("givens", 8, 4, 1, 1)
    with torch.no_grad():
        model.embed.weight[3] = math.inf
    with pytest.raises(FloatingPointError, match=r"residual stream is not finite at the input of block 0"):
        model(torch.full((1, 8), 3))


def test_an_absurd_learning_rate_is_reported_as_diverged():
    # lr = 1e6 with Adam moves every weight by ~1e6 in one step: the loss either stops being finite (the run stops,
    # bpb NaN) or ends far above its start; either way the run is marked diverged and the checks still hold.
    result = run_givens_mixer(_tiny(conditions=("attention", "linear"), lrs=(1e6,), steps=3), progress=False)
    for row in result["runs"]:
        assert row["diverged"]
        assert row["stop_reason"] is not None or row["final_loss"] > row["initial_loss"]
        assert row["stop_reason"] is None or row["bpb"] == "nan"
    assert result["checks"]["all"]
    for row in givens_mixer_rows(result):  # a NaN stays a number in the rows (a string would be a sweep key)
        assert isinstance(row["bpb"], float) and (row["diverged"] == 1.0)
    assert givens_mixer_table(result).count("| yes") == len(result["runs"])  # stopped runs are rendered too


# ---- refusals ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: GivensMixerConfig(conditions=("givens", "mlp")),
            r"conditions must be one of 'givens', 'givens-ln', 'attention', 'linear', got 'mlp'",
        ),
        (lambda: GivensMixerConfig(conditions=()), r"conditions must be a non-empty tuple of distinct names, got \(\)"),
        (
            lambda: GivensMixerConfig(lrs=(0.01, 0.01)),
            r"lrs must be a non-empty tuple of distinct positive learning rates, got \(0.01, 0.01\)",
        ),
        (lambda: GivensMixerConfig(lrs=(0.01, -1.0)), r"lrs must be in \(0, inf\), got -1.0"),
        (lambda: GivensMixerConfig(warmups=(-5,)), r"warmups must be an integer >= 0, got -5"),
        (lambda: GivensMixerConfig(context=1), r"context must be an integer >= 2, got 1"),
        (
            lambda: GivensMixerConfig(mixer_init="orthogonal"),
            r"mixer_init must be one of 'identity', 'uniform', got 'orthogonal'",
        ),
        (
            lambda: GivensMixerConfig(context=8, mask_fraction=0.05),
            r"mask_fraction must mask 1 to 7 positions of a window of context=8 bytes, got 0.05 \(0 positions\)",
        ),
        (lambda: GivensMixerConfig(mask_fraction=1.0), r"mask_fraction must be in \(0, 1\), got 1.0"),
        (lambda: GivensMixerConfig(steps=10, spike_window=10), r"spike_window must be smaller than steps=10, got 10"),
        (lambda: GivensMixerConfig(spike_factor=1.0), r"spike_factor must be in \(1, inf\), got 1.0"),
        (lambda: GivensMixerConfig(d_model=66), r"n_heads must divide d_model, got d_model=66 and n_heads=4"),
        (lambda: GivensMixerConfig(device="tpu"), r"device must be 'cpu' or 'cuda\[:N\]', got 'tpu'"),
        (
            lambda: masked_eval_set(_corpus(n_held=100), 7, 16, 0.15, 0),
            r"windows must fit in the 100 held-out bytes at context=16 \(at most 6\), got 7",
        ),
        (
            lambda: mask_bytes(np.zeros((2, 4), np.int64), 0.1, np.random.default_rng(0)),
            r"fraction must mask between 1 and n - 1 = 3 positions of a window, got 0.1",
        ),
        (lambda: MaskedByteTransformer("ffn", 8, 4, 1, 1), r"condition must be one of 'givens', .*, got 'ffn'"),
        (
            lambda: MaskedByteTransformer("givens", 8, 4, 1, 1)(torch.zeros(2, 7, dtype=torch.long)),
            r"tokens must have shape \[batch, 8\], got \(2, 7\)",
        ),
        (
            lambda: MaskedByteTransformer("linear", 8, 4, 1, 1)(torch.full((1, 8), 257)),
            r"tokens must lie in \[0, 256\], got values in \[257, 257\]",
        ),
        (lambda: run_givens_mixer({"steps": 3}), r"config must be a GivensMixerConfig, got dict"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


# ---- the run directory, resuming, rows and table -----------------------------------------------------------------


def test_a_run_directory_resumes_to_the_same_rows(tmp_path):
    # Oracle: the uninterrupted run.  Every condition is seeded on its own, so a resumed run retrains the forgotten
    # condition to the same numbers (same arithmetic on one thread: 1e-12).
    config = _tiny(conditions=("givens", "linear"), steps=3)
    whole = run_givens_mixer(config, out=tmp_path / "whole", progress=False)
    names = {p.name for p in (tmp_path / "whole").iterdir()}
    assert {"results.json", "table.md", "lr_sweep.png", "curves.png", "givens-lr0.01-warmup0.pt"} <= names
    cut = tmp_path / "cut"
    run_givens_mixer(config, out=cut, progress=False)
    record = json.loads((cut / "run.json").read_text())
    record.update(status="interrupted", done=["givens-lr0.01-warmup0"])
    (cut / "run.json").write_text(json.dumps(record))
    for suffix in (".json", ".pt"):
        (cut / f"linear-lr0.01-warmup0{suffix}").unlink()
    resumed = run_givens_mixer(config, out=cut, progress=False, resume=True)
    for a, b in zip(whole["runs"], resumed["runs"], strict=True):
        for key in ("bpb", "final_loss", "grad_norm_max", "spikes"):
            assert b[key] == pytest.approx(a[key], rel=1e-12, abs=0)
        assert b["curve"]["train_loss"] == pytest.approx(a["curve"]["train_loss"], rel=1e-12, abs=0)
    assert resumed["checks"]["all"]


def test_rows_hold_keys_and_numbers_and_the_table_marks_the_best_lr():
    runs = [
        {"condition": c, "lr": lr, "warmup": 0, "bpb": bpb, "diverged": d, "stop_reason": None, "spikes": 1,
         "grad_norm_max": 3.0, "grad_norm_median": 1.0, "final_loss": 2.0, "seconds_per_step": 0.1}
        for c, lr, bpb, d in (("givens", 1e-3, 3.2, False), ("givens", 1e-2, 3.0, False), ("givens", 3e-2, 2.5, True))
    ]  # fmt: skip
    rows = givens_mixer_rows({"runs": runs})
    assert [r["lr"] for r in rows] == ["0.001", "0.01", "0.03"]
    assert [r["best_lr"] for r in rows] == [0.0, 1.0, 0.0]  # the diverged 2.5 is not eligible
    for row in rows:
        assert all(isinstance(v, str) for k, v in row.items() if k in ("condition", "lr", "warmup"))
        assert all(isinstance(v, (int, float)) for k, v in row.items() if k not in ("condition", "lr", "warmup"))
    table = givens_mixer_table({"runs": runs})
    assert "| 0 | givens | 0.01 | **3.0000** | no |" in table
    assert "| 0 | givens | 0.01 | 3.0000 | 2 of 3 | 0.2000 | — |" in table


def test_the_quick_preset_end_to_end(tmp_path):  # ~3-7 s on one core: not marked slow
    config = GivensMixerConfig.preset("quick")
    result = run_givens_mixer(config, out=tmp_path / "run", progress=False)
    assert len(result["runs"]) == len(config.conditions) * len(config.lrs) * len(config.warmups)
    assert result["checks"]["all"], result["checks"]
    for row in result["runs"]:
        assert row["stop_reason"] is None and 0.0 < row["bpb"] < 9.0
        assert (row["orthogonality_defect"] is None) == (not row["condition"].startswith("givens"))
    assert len(givens_mixer_rows(result)) == len(result["runs"])
