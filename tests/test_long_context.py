"""The long-context experiment: banded exp-Markov attention against softmax attention as the context grows.

Oracles: ``scipy.linalg.expm`` of the dense generator (Padé, an independent algorithm) for the learned
operator, with its structure (row sums, signs, exact zeros above the diagonal); closed forms for the bytes a
matrix product saves for its backward pass and for the crossover of two power laws; exact polynomial laws of the
saved bytes in the context (affine for the banded layer at fixed rates and for the fused kernel, quadratic for
the explicit softmax), with the fitted log-log slopes of :func:`workbench.rates.fit_rate`; the explicit softmax
formula in float64 for the fused kernel; a resumed run against the uninterrupted one (same seeds, one thread).
No test times anything: the wall-clock numbers are measured by the experiment, never asserted.
"""

import json
import math

import numpy as np
import pytest
import scipy.linalg

torch = pytest.importorskip("torch")

from workbench.experiments import (  # noqa: E402
    CausalSoftmaxAttention,
    LongContextConfig,
    LongContextLM,
    run_long_context,
    saved_tensor_bytes,
)
from workbench.experiments.long_context import (  # noqa: E402
    crossover_context,
    long_context_figure,
    long_context_rows,
    long_context_table,
    new_models,
)
from workbench.nn import ExpMarkovAttention  # noqa: E402
from workbench.rates import fit_rate  # noqa: E402

torch.set_num_threads(1)
F64 = torch.float64


def _tiny(**kw):
    """A run of seconds: two contexts, two steps, one timed repeat."""
    settings = dict(
        contexts=(16, 32),
        d_model=16,
        n_heads=2,
        levels=1,
        steps=2,
        warmup=1,
        log_every=1,
        tokens_per_step=64,
        eval_bytes=128,
        check_context=16,
        timing_repeats=1,
        timing_warmup=0,
        explicit_max_context=16,
    )
    return LongContextConfig.preset("quick", **{**settings, **kw})


# ---- the learned operator -------------------------------------------------------------------------------


def test_the_exp_markov_mixer_is_stochastic_causal_and_the_exponential_of_its_generator():
    """Oracles: scipy.linalg.expm(t Q) of the layer's own dense generator, float64 (1e-12 relative: ~K = 20
    stochastic products, each a few units of roundoff); rows of e^{tQ} sum to 1 within 1e-13 and no entry is
    negative (a convex average, exactly so for nonnegative inputs); exact zeros above the diagonal (no rate to a
    later position).  One time per layer: every head reads the same t."""
    torch.manual_seed(3)
    model = LongContextLM(256, 24, 16, 2, 2, "exp-markov", levels=2, t_init=1.7, time_per="layer").double()
    tokens = torch.randint(0, 256, (2, 24))
    for layer, x in zip((b.mixer for b in model.blocks), model.mixer_inputs(tokens), strict=True):
        with torch.no_grad():
            _, P = layer(x, return_operator=True)
            Q = layer.generator(x).dense().numpy()
            t = layer.times.numpy()
        assert tuple(layer.raw_time.shape) == (1,) and t[0] == t[1]
        assert bool((P.triu(1) == 0).all())
        assert float(P.min()) >= 0.0 and float((P.sum(-1) - 1).abs().max()) < 1e-13
        for b in range(2):
            for h in range(2):
                dense = scipy.linalg.expm(t[h] * Q[b, h])
                assert np.abs(P[b, h].numpy() - dense).max() <= 1e-12 * np.abs(dense).max()


def test_the_fused_softmax_kernel_computes_the_explicit_formula():
    """Oracle: softmax(QKᵀ/√d_h + causal mask) V formed explicitly, float64 (1e-12 relative: the fused kernel
    sums in another order).  The explicit operator is row-stochastic and lower triangular (exact zeros: exp(-inf))."""
    torch.manual_seed(4)
    layer = CausalSoftmaxAttention(16, 4).double()
    x = torch.randn(3, 20, 16, dtype=F64)
    with torch.no_grad():
        fused, explicit, P = layer(x), layer.explicit(x), layer.operator(x)
    assert float((fused - explicit).abs().max()) <= 1e-12 * float(explicit.abs().max())
    assert bool((P.triu(1) == 0).all()) and float((P.sum(-1) - 1).abs().max()) < 1e-14


def test_both_models_start_from_the_same_weights_but_the_band():
    """Invariant: every parameter the two models share is equal bit for bit; only the band's a, b, t differ."""
    models = new_models(_tiny(), 16)
    soft, band = (dict(m.named_parameters()) for m in models.values())
    assert set(soft) < set(band)
    assert {k.rsplit(".", 1)[-1] for k in set(band) - set(soft)} == {"offset_scale", "offset_bias", "raw_time"}
    assert all(torch.equal(soft[k], band[k]) for k in soft)


# ---- memory ---------------------------------------------------------------------------------------------


def test_saved_bytes_of_a_product_are_its_two_factors():
    """Closed form: A @ B saves A and B for its backward, (m k + k n) x 8 bytes in float64 (exact integers).
    A * A saves one storage twice: counted once.  Excluding B leaves A's bytes only.  A transposed view of A
    shares its storage: still m k x 8 bytes."""
    a = torch.randn(3, 4, dtype=F64, requires_grad=True)
    b = torch.randn(4, 5, dtype=F64, requires_grad=True)
    assert saved_tensor_bytes(lambda: a @ b)[0] == (3 * 4 + 4 * 5) * 8
    assert saved_tensor_bytes(lambda: a * a)[0] == 3 * 4 * 8
    assert saved_tensor_bytes(lambda: a @ b, exclude=[b])[0] == 3 * 4 * 8
    assert saved_tensor_bytes(lambda: a.T * a.T)[0] == 3 * 4 * 8
    with torch.no_grad():
        assert saved_tensor_bytes(lambda: a @ b)[0] == 0  # nothing is saved without a graph


def test_explicit_softmax_saves_n_squared_while_the_banded_and_fused_layers_save_n():
    """Oracles: exact polynomial laws of the saved bytes S(n) at n, 2n, 4n, 8n (integers, so exact equality).
    The banded layer at fixed rates (a = 0: every rate softplus(b) = ln 2, so λ and the powers K do not change
    with n) saves tensors of n or n + const rows: S is affine, S(4n) - S(2n) = 2 (S(2n) - S(n)).  The fused
    kernel keeps O(n) (q, k, v, output, log-sum-exp): S(2n) = 2 S(n).  The explicit softmax keeps the n×n
    matrices: S = αn² + βn + γ, so D₃ - 6D₂ + 8D₁ = 0 for the successive differences, with α > 0.  The fitted
    slopes (:func:`fit_rate`, last two sizes): ≥ 1.95 for the explicit layer (the n² term dominates),
    within 1 ± 0.01 for the other two."""
    torch.manual_seed(5)
    soft = CausalSoftmaxAttention(8, 2)
    band = ExpMarkovAttention(8, 2, (-1, -2, -4), causal=True)
    with torch.no_grad():
        band.offset_scale.zero_()
    params = [*soft.parameters(), *band.parameters()]
    sizes = (128, 256, 512, 1024)
    saved = {"fused": [], "explicit": [], "banded": []}
    for n in sizes:
        x = torch.randn(1, n, 8, requires_grad=True)
        saved["fused"].append(saved_tensor_bytes(lambda: soft(x), exclude=params)[0])  # noqa: B023
        saved["explicit"].append(saved_tensor_bytes(lambda: soft.explicit(x), exclude=params)[0])  # noqa: B023
        saved["banded"].append(saved_tensor_bytes(lambda: band(x), exclude=params)[0])  # noqa: B023
    d = {k: np.diff(v) for k, v in saved.items()}
    assert all(d["banded"][i + 1] == 2 * d["banded"][i] for i in range(2))
    assert all(saved["fused"][i + 1] == 2 * saved["fused"][i] for i in range(3))
    assert d["explicit"][2] - 6 * d["explicit"][1] + 8 * d["explicit"][0] == 0
    assert d["explicit"][1] - 2 * d["explicit"][0] > 0  # 6 α n² with n = 128
    assert fit_rate(sizes[-2:], saved["explicit"][-2:]) >= 1.95
    for k in ("fused", "banded"):
        assert abs(fit_rate(sizes[-2:], saved[k][-2:]) - 1.0) <= 0.01


# ---- the crossover --------------------------------------------------------------------------------------


def test_crossover_of_two_power_laws_is_their_closed_form():
    """Closed form: dense a n² against banded b n cross at n* = b / a; the log-log interpolation is exact for
    power laws (1e-12 relative: a log, an exp and a few products)."""
    n = [256, 512, 1024, 2048, 4096]
    for a, b in ((1e-9, 7e-7), (2e-9, 5.3e-6), (1e-8, 1.1e-5)):
        ratio = [(b * c) / (a * c * c) for c in n]
        crossing = crossover_context(n, ratio)
        assert crossing["status"] == "crossed"
        assert math.isclose(crossing["context"], b / a, rel_tol=1e-12)
    # Between measured points the interpolation is linear in (log n, log r): r = 2 at 256, 1/2 at 1024 → 512.
    assert math.isclose(crossover_context([256, 1024], [2.0, 0.5])["context"], 512.0, rel_tol=1e-12)
    # The last crossing counts (the banded layer must stay ahead): 1.1 at 1024, 0.5 at 2048.
    late = crossover_context([256, 512, 1024, 2048], [2.0, 0.9, 1.1, 0.5])
    assert late["status"] == "crossed" and 1024 < late["context"] < 2048
    assert crossover_context(n, [0.9] * 5) == {"context": None, "status": "ahead from the start", "range": [256, 4096]}
    assert crossover_context(n, [3, 2, 1.5, 1.2, 1.01])["status"] == "not reached"


@pytest.mark.parametrize(
    ("contexts", "ratios", "message"),
    [
        ([256, 256], [1.0, 1.0], r"contexts must be strictly increasing positive numbers, got \[256, 256\]"),
        ([256, 512], [1.0], r"ratios must be 2 positive finite numbers \(one per context\), got \[1.0\]"),
        ([256, 512], [1.0, -1.0], r"ratios must be 2 positive finite numbers"),
        ([256, 512], [1.0, math.nan], r"ratios must be 2 positive finite numbers"),
    ],
)
def test_crossover_refuses_bad_measurements(contexts, ratios, message):
    with pytest.raises(ValueError, match=message):
        crossover_context(contexts, ratios)


# ---- configuration --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "error", "message"),
    [
        (dict(contexts=(512, 256)), ValueError, r"contexts must be strictly increasing, got \(512, 256\)"),
        (dict(contexts=[256]), TypeError, r"contexts must be a non-empty tuple of integers, got \[256\]"),
        (dict(contexts=()), TypeError, r"contexts must be a non-empty tuple of integers, got \(\)"),
        (dict(contexts=(1, 4)), ValueError, r"contexts must be an integer >= 2, got 1"),
        (
            dict(contexts=(256, 512), tokens_per_step=768),
            ValueError,
            r"tokens_per_step must be a multiple of every context \(whole windows\), got 768, not a multiple of 512",
        ),
        (dict(eval_bytes=100), ValueError, r"eval_bytes must be at least the largest context 4096, got 100"),
        (dict(time_per="token"), ValueError, r"time_per must be one of 'layer', 'head', got 'token'"),
        (dict(levels=17), ValueError, r"levels must be an integer in \[0, 16\], got 17"),
        (dict(d_model=66), ValueError, r"n_heads must divide d_model, got d_model=66 and n_heads=4"),
        (dict(device="tpu"), ValueError, r"device must be 'cpu' or 'cuda\[:N\]', got 'tpu'"),
        (dict(t_init=0.0), ValueError, r"t_init must be in \(0, 1e\+06\], got 0.0"),
    ],
)
def test_bad_settings_are_refused_with_the_parameter_named(settings, error, message):
    with pytest.raises(error, match=message):
        LongContextConfig(**settings)


def test_presets_are_valid_and_sized_as_documented():
    """Invariant: each preset builds, the quick one is small, and every context divides its tokens per step."""
    for name in ("quick", "paper", "gpu"):
        cfg = LongContextConfig.preset(name)
        assert cfg.preset_name() == name
        assert all(cfg.tokens_per_step % n == 0 for n in cfg.contexts)
    assert LongContextConfig.preset("paper").contexts == (256, 512, 1024, 2048, 4096)
    assert max(LongContextConfig.preset("gpu").contexts) == 16384
    assert LongContextConfig.preset("gpu").device == "cuda"
    assert LongContextConfig.preset("paper").time_per == "layer"


# ---- the run --------------------------------------------------------------------------------------------


def test_a_tiny_run_writes_its_record_table_and_figure(tmp_path):
    """Invariants of a run: every check holds, one learned t per layer (heads equal with time_per='layer'),
    powers K ≥ the reach λt (the Poisson cut-off lies right of its mean), the rows flat (strings and numbers),
    and the record on disk equal to the one returned."""
    result = run_long_context(_tiny(), out=tmp_path / "run", progress=False)
    assert result["checks"]["all"], result["checks"]
    assert [(r["mixer"], r["context"]) for r in result["models"]] == [
        ("softmax", 16),
        ("exp-markov", 16),
        ("softmax", 32),
        ("exp-markov", 32),
    ]
    for row in result["contexts"]:
        assert len(row["learned_t"]) == 2 and len(row["layers"]) == 2
        for layer in row["layers"]:
            assert layer["t"][0] == layer["t"][1]
            assert layer["powers"] >= layer["reach"] > 0
            assert 0 <= layer["mean_lookback"] < row["context"]
        explicit = {"softmax-explicit"} if row["context"] <= 16 else set()  # explicit_max_context = 16
        assert set(row["saved_mib"]) == {"softmax", "exp-markov"} | explicit
        assert row["bpb"]["softmax"] > 0 and row["bpb"]["exp-markov"] > 0
    assert result["crossover"]["forward"]["range"] == [16, 32]
    for row in long_context_rows(result):
        assert all(isinstance(v, str) or v is None or isinstance(v, int | float) for v in row.values())
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert on_disk["models"][1]["bpb"] == result["models"][1]["bpb"]
    assert (tmp_path / "run" / "figure.png").stat().st_size > 0
    assert "| 16 |" in (tmp_path / "run" / "table.md").read_text()
    assert long_context_table(result).splitlines()[-1].startswith("Banded exp-Markov overtakes fused softmax")
    long_context_figure(result)


def test_a_resumed_run_equals_the_uninterrupted_one(tmp_path):
    """Oracle: the uninterrupted run.  The second context's models are forgotten as an interrupted run would
    not have kept them; the resumed run trains them again from the same seed and windows (one thread): bpb,
    learned times and the operator's reach agree to 1e-12 relative (float32 arithmetic repeated in the same
    order; a real change would move them by ~1e-7 or more).  Timings are measured again, never compared."""
    config = _tiny(contexts=(16, 32))
    whole = run_long_context(config, out=tmp_path / "whole", progress=False)
    cut = tmp_path / "cut"
    run_long_context(config, out=cut, progress=False)
    record = json.loads((cut / "run.json").read_text())
    record.update(status="interrupted", done=["softmax-16", "exp-markov-16", "measure-16"])
    (cut / "run.json").write_text(json.dumps(record))
    for name in ("softmax-32", "exp-markov-32"):
        (cut / f"{name}.pt").unlink()
        (cut / f"{name}.json").unlink()
    (cut / "measure-32.json").unlink()
    resumed = run_long_context(config, out=cut, progress=False, resume=True)
    for a, b in zip(whole["models"], resumed["models"], strict=True):
        np.testing.assert_allclose(b["bpb"], a["bpb"], rtol=1e-12, atol=0)
        np.testing.assert_allclose(b["curve"]["train_loss"], a["curve"]["train_loss"], rtol=1e-12, atol=0)
    for a, b in zip(whole["contexts"], resumed["contexts"], strict=True):
        np.testing.assert_allclose(b["learned_t"], a["learned_t"], rtol=1e-12, atol=0)
        np.testing.assert_allclose(
            [layer["reach"] for layer in b["layers"]], [layer["reach"] for layer in a["layers"]], rtol=1e-12, atol=0
        )
    assert resumed["checks"]["all"]


@pytest.mark.slow
def test_the_quick_preset_end_to_end(tmp_path):
    """Invariant: the CI preset runs through every code path with every check holding."""
    result = run_long_context(LongContextConfig.preset("quick"), out=tmp_path / "quick", progress=False)
    assert result["checks"]["all"], result["checks"]
    assert [row["context"] for row in result["contexts"]] == [32, 64]
    assert all("softmax-explicit" in row["saved_mib"] for row in result["contexts"])
