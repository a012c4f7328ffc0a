"""Tests of the induction-head experiment (workbench.experiments.induction).

Oracles: exact structural facts (causal masking, DMAP symmetry ρ_skew = 0, score ranges), closed-form synthetic
loss curves with a known transition step, and bitwise reproducibility under a fixed seed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from workbench.attention import repeated_random_tokens
from workbench.experiments import (
    ARCHITECTURES,
    INDUCTION_OPERATORS,
    InductionConfig,
    InductionTransformer,
    detect_phase_transition,
    run_induction,
)
from workbench.experiments import induction_table as format_table

TINY = dict(vocab_size=8, half_length=4, d_model=8, n_heads=2, steps=6, batch=4, log_every=3, eval_batch=4)


def _model(operator: str, architecture: str, seed: int = 0) -> InductionTransformer:
    torch.manual_seed(seed)
    return InductionTransformer(12, 10, 16, 2, 2, operator, architecture)


# ---- data and model ---------------------------------------------------------------------------------


def test_data_shape_and_repetition():
    """Oracle: the definition t = (s, s) of length 2T."""
    cfg = InductionConfig(**TINY)
    tokens = repeated_random_tokens(np.random.default_rng(0), cfg.vocab_size, cfg.half_length, cfg.batch)
    assert tokens.shape == (cfg.batch, cfg.sequence_length)
    assert np.array_equal(tokens[:, cfg.half_length :], tokens[:, : cfg.half_length])
    assert tokens.min() >= 0 and tokens.max() < cfg.vocab_size


@pytest.mark.parametrize("architecture", ARCHITECTURES)
@pytest.mark.parametrize("operator", INDUCTION_OPERATORS)
def test_model_is_causal_exactly(operator, architecture):
    """Oracle: causal masking. Changing token k leaves the logits at positions < k bitwise unchanged
    (masked keys get weight exactly 0, so the earlier rows compute the same floating-point sums)."""
    model = _model(operator, architecture).eval()
    tokens = torch.randint(0, 12, (3, 10), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    k = 6
    changed[:, k] = (changed[:, k] + 5) % 12
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    assert torch.equal(a[:, :k], b[:, :k])
    assert not torch.equal(a[:, k:], b[:, k:])  # the change is seen from position k on


@pytest.mark.parametrize("operator", INDUCTION_OPERATORS)
def test_operators_row_stochastic_and_causal(operator):
    """Oracle: softmax rows sum to 1 (float32 rounding: tolerance 1e-5) and are exactly 0 above the diagonal."""
    model = _model(operator, "mlp")
    tokens = torch.randint(0, 12, (2, 10), generator=torch.Generator().manual_seed(2))
    ops = model.attention_operators(tokens)
    assert len(ops) == 2
    for P in ops:
        assert P.shape == (2, 2, 10, 10)
        assert torch.all(P >= 0)
        assert torch.allclose(P.sum(-1), torch.ones(2, 2, 10), atol=1e-5, rtol=0)
        assert torch.all(P.triu(1) == 0)


def test_dmap_heads_have_zero_skew_exactly():
    """Oracle: DMAP's form is symmetric by construction, so ρ_skew = 0 exactly (Attention Geometry §7)."""
    assert np.array_equal(_model("DMAP", "attn-only").skew_ratios(), np.zeros((2, 2)))
    assert np.all(_model("ATTN", "attn-only").skew_ratios() > 0)


def test_model_rejects_bad_tokens():
    model = _model("ATTN", "attn-only")
    with pytest.raises(ValueError, match=r"tokens must lie in \[0, 11\], got values in \[0, 12\]"):
        model(torch.tensor([[0, 12]]))
    with pytest.raises(TypeError, match="tokens must be an integer torch tensor"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match=r"tokens must have shape \[batch, n\] with 1 <= n <= 10, got \(1, 11\)"):
        model(torch.zeros(1, 11, dtype=torch.long))
    with pytest.raises(ValueError, match="architecture must be one of 'attn-only', 'mlp', got 'deep'"):
        InductionTransformer(12, 10, 16, 2, 2, "ATTN", "deep")


# ---- transition detection on synthetic curves -------------------------------------------------------

STEPS = np.arange(0, 2001, 25)
LOG_V = math.log(64)


def _sigmoid(center: float, width: float = 20.0) -> np.ndarray:
    return LOG_V / (1 + np.exp((STEPS - center) / width))


@pytest.mark.parametrize("center", [700.0, 1210.0])
def test_sigmoid_drop_is_detected_at_its_center(center):
    """Oracle: a logistic drop log V / (1 + e^{(τ - c)/w}) is steepest at τ = c; the detected step (midpoint of
    the steepest logged segment) is within one log interval (25 steps) of c."""
    found = detect_phase_transition(STEPS, _sigmoid(center), vocab_size=64)
    assert found.detected, found.reason
    assert abs(found.step - center) <= 25
    assert found.window[0] <= center <= found.window[1]
    assert found.loss_before - found.loss_after >= 0.4 * LOG_V
    assert found.reason == ""


def test_straight_line_and_flat_curve_are_not_detected():
    """Oracle: a line falling log V over the run needs 0.4 of the run to drop 0.4 log V > window 0.25; a flat
    curve never drops."""
    line = detect_phase_transition(STEPS, LOG_V * (1 - STEPS / STEPS[-1]), vocab_size=64)
    assert not line.detected and line.step is None and "window_fraction" in line.reason
    flat = detect_phase_transition(STEPS, np.full(STEPS.shape, LOG_V), vocab_size=64)
    assert not flat.detected and flat.window is None and "never falls" in flat.reason


def test_drop_at_start_is_not_from_a_plateau():
    """Oracle: a drop already under way at the first logged step has no plateau before it (condition 3)."""
    found = detect_phase_transition(STEPS, _sigmoid(-10.0), vocab_size=64, smooth=1)
    assert not found.detected


def test_noisy_sigmoid_is_detected():
    """Oracle: the sigmoid's center; noise of 0.05 nats (about 1% of log V) is averaged by the 5-point smoother,
    so the steepest segment stays within two log intervals (50 steps) of the center."""
    noisy = _sigmoid(1000.0, 40.0) + 0.05 * np.random.default_rng(0).standard_normal(STEPS.shape)
    found = detect_phase_transition(STEPS, noisy, vocab_size=64)
    assert found.detected and abs(found.step - 1000.0) <= 50


# Measured: repeated-half loss of the paper preset's ATTN attention-only model (steps 0..360 of a 400-step run, eval
# every 10 steps, one torch thread, 2026-11-29); the loss ramps off log 64 = 4.159 and collapses at 130-200.
MEASURED_STEPS = np.arange(0, 361, 10)
MEASURED_LOSS = np.array(
    [
        *(4.175, 4.155, 4.139, 4.104, 4.071, 4.041, 4.009, 3.963, 3.909, 3.839, 3.749, 3.618, 3.415, 3.19, 2.849),
        *(2.504, 2.066, 1.707, 1.381, 1.101, 0.895, 0.739, 0.644, 0.547, 0.46, 0.418, 0.407, 0.39, 0.378, 0.374),
        *(0.367, 0.362, 0.36, 0.363, 0.356, 0.356, 0.374),
    ]
)


def test_measured_attn_curve_is_detected():
    """Oracle: the recorded curve above, read by eye: the steepest fall lies between steps 130 and 180."""
    found = detect_phase_transition(MEASURED_STEPS, MEASURED_LOSS, vocab_size=64)
    assert found.detected, found.reason
    assert 130 <= found.step <= 180


def test_head_series_gate_the_detection():
    """Oracle: condition 4 by construction: a head whose score rises and entropy falls at the drop confirms it;
    the reversed series (score falls) vetoes it."""
    loss = _sigmoid(1000.0)
    rise = 1.0 - loss / LOG_V  # the head forms with the loss drop: the same sigmoid, rising 0 -> 1
    scores = np.zeros((STEPS.size, 2, 2))
    entropies = np.full((STEPS.size, 2, 2), 2.0)
    scores[:, 1, 0] = 0.1 + 0.8 * rise
    entropies[:, 1, 0] = 2.0 - 1.5 * rise
    found = detect_phase_transition(STEPS, loss, vocab_size=64, induction_scores=scores, entropies=entropies)
    assert found.detected and found.head == (1, 0)
    assert found.head_score_before < found.head_score_after
    assert found.head_entropy_after < found.head_entropy_before
    vetoed = detect_phase_transition(
        STEPS, loss, vocab_size=64, induction_scores=scores[::-1].copy(), entropies=entropies
    )
    assert not vetoed.detected and "induction score rises" in vetoed.reason


def test_detect_phase_transition_validation():
    with pytest.raises(ValueError, match=r"steps must be a 1-dimensional array of at least 3 logged steps"):
        detect_phase_transition([0, 1], [1.0, 0.5], vocab_size=4)
    with pytest.raises(ValueError, match=r"repeat_loss must have the shape of steps \(3,\), got \(2,\)"):
        detect_phase_transition([0, 1, 2], [1.0, 0.5], vocab_size=4)
    with pytest.raises(ValueError, match="steps must be strictly increasing"):
        detect_phase_transition([0, 2, 1], [1.0, 0.5, 0.2], vocab_size=4)
    with pytest.raises(ValueError, match="repeat_loss must be finite, got 1 non-finite"):
        detect_phase_transition([0, 1, 2], [1.0, np.nan, 0.2], vocab_size=4)
    with pytest.raises(ValueError, match="smooth must be an odd integer >= 1, got 4"):
        detect_phase_transition([0, 1, 2], [1.0, 0.5, 0.2], vocab_size=4, smooth=4)
    with pytest.raises(ValueError, match=r"drop_fraction must be in \(0, 1\], got 0.0"):
        detect_phase_transition([0, 1, 2], [1.0, 0.5, 0.2], vocab_size=4, drop_fraction=0.0)
    with pytest.raises(ValueError, match="induction_scores and entropies must be given together"):
        detect_phase_transition([0, 1, 2], [1.0, 0.5, 0.2], vocab_size=4, induction_scores=np.zeros((3, 1, 1)))
    with pytest.raises(ValueError, match=r"must have shape \[3, layers, heads\], got \(3, 1\) and \(3, 1\)"):
        detect_phase_transition(
            [0, 1, 2], [1.0, 0.5, 0.2], vocab_size=4, induction_scores=np.zeros((3, 1)), entropies=np.zeros((3, 1))
        )


# ---- config -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("steps", 0, ValueError, "steps must be an integer >= 1, got 0"),
        ("vocab_size", 1, ValueError, "vocab_size must be an integer >= 2, got 1"),
        ("n_heads", 3, ValueError, "n_heads must divide d_model, got d_model=8 and n_heads=3"),
        ("lr", 0.0, ValueError, r"lr must be in \(0, inf\), got 0.0"),
        ("weight_decay", -0.1, ValueError, r"weight_decay must be in \[0, inf\), got -0.1"),
        ("smooth", 2, ValueError, "smooth must be an odd integer >= 1, got 2"),
        ("grad_clip", 0.0, ValueError, r"grad_clip must be in \(0, inf\), got 0.0"),
        ("window_fraction", 1.5, ValueError, r"window_fraction must be in \(0, 1\], got 1.5"),
        ("batch", 2.0, TypeError, "batch must be an integer, got float"),
    ],
)
def test_config_validation(field, value, error, message):
    with pytest.raises(error, match=message):
        InductionConfig(**{**TINY, field: value})


def test_presets():
    quick, paper = InductionConfig.preset("quick"), InductionConfig.preset("paper")
    assert (quick.name, paper.name) == ("quick", "paper")
    assert (paper.vocab_size, paper.half_length, paper.d_model, paper.n_heads, paper.n_layers) == (64, 32, 64, 4, 2)
    assert InductionConfig.preset("quick", seed=3).seed == 3
    with pytest.raises(ValueError, match="name must be one of 'quick', 'paper', got 'full'"):
        InductionConfig.preset("full")


# ---- runs ---------------------------------------------------------------------------------------------


def test_tiny_run_structure_and_checks(tmp_path):
    """Oracle: structural facts that hold for any weights (DMAP ρ_skew = 0 exactly; e^H̄ ∈ [1, 2T]; scores in
    [0, 1]; causal operators) and the JSON record's shape; the run directory holds every artefact."""
    cfg = InductionConfig(**TINY)
    result = run_induction(cfg, operators=("DMAP",), architectures=("mlp",), out=tmp_path / "run", progress=False)
    assert result["experiment"] == "induction" and result["config"]["steps"] == 6
    assert result["checks"]["all"] and result["checks"]["dmap_skew_zero"] is True
    (run,) = result["runs"]
    assert (run["operator"], run["architecture"]) == ("DMAP", "mlp")
    assert run["rho_skew"] == [[0.0, 0.0], [0.0, 0.0]]
    assert run["curves"]["steps"] == [0, 3, 6]
    entropy = np.array(run["curves"]["entropy"])
    assert entropy.shape == (3, 2, 2)
    assert np.all(np.exp(entropy) >= 1) and np.all(np.exp(entropy) <= cfg.sequence_length)
    # uniform causal head: (1/n) log n! (closed form), an upper bound of the mean row entropy
    assert run["uniform_entropy"] == pytest.approx(math.lgamma(cfg.sequence_length + 1) / cfg.sequence_length)
    assert np.all(entropy <= run["uniform_entropy"] + 1e-6)
    for key in ("previous_token_score", "induction_score"):
        values = np.array(run["curves"][key])
        assert np.all((values >= 0) & (values <= 1))
    assert 0 <= run["induction_accuracy"] <= 1 and run["parameters"] > 0
    assert set(run["best_head"]) == {"layer", "head", "induction_score", "previous_token_score", "entropy"}
    assert set(run["transition"]) >= {"detected", "step", "loss_before", "loss_after", "window", "head"}
    json.dumps(result)  # JSON-able as returned
    out = tmp_path / "run"
    for name in ("config.json", "results.json", "table.md", "loss_curves.png", "induction_heads.png", "DMAP-mlp.pt"):
        assert (out / name).is_file(), name
    assert json.loads((out / "results.json").read_text())["runs"][0]["operator"] == "DMAP"


def test_runs_are_deterministic_and_matched():
    """Oracle: bitwise reproducibility under the same seed; matched budgets give every operator the same
    initial first-half loss (same init, same eval batch, nearly uniform prediction)."""
    cfg = InductionConfig(**TINY)
    a = run_induction(cfg, operators=("ATTN", "DMTN"), architectures=("attn-only",), progress=False)
    b = run_induction(cfg, operators=("ATTN", "DMTN"), architectures=("attn-only",), progress=False)
    for ra, rb in zip(a["runs"], b["runs"], strict=True):
        assert ra["curves"]["repeat_loss"] == rb["curves"]["repeat_loss"]
        assert ra["curves"]["induction_score"] == rb["curves"]["induction_score"]
    assert a["runs"][0]["parameters"] == a["runs"][1]["parameters"]


def test_run_validation():
    cfg = InductionConfig(**TINY)
    with pytest.raises(TypeError, match="config must be an InductionConfig, got dict"):
        run_induction(TINY)
    with pytest.raises(ValueError, match="operators must be one of 'ATTN', 'DMTN', 'DMAP', got 'ATAP'"):
        run_induction(cfg, operators=("ATAP",))
    with pytest.raises(ValueError, match="architectures must name at least one"):
        run_induction(cfg, architectures=())


def test_format_table():
    """Oracle: the seed's §11 induction numbers (attention-geometry-math §A.12) and "none" for no transition."""
    run = {
        "operator": "DMTN",
        "architecture": "attn-only",
        "final_repeat_loss": 3.9,
        "induction_accuracy": 0.05,
        "transition": {"detected": False, "step": None},
        "best_head": {"layer": 0, "head": 1, "induction_score": 0.07, "entropy": 2.5},
    }
    table = format_table({"runs": [run]})
    assert "| DMTN | attn-only | 3.900 | 0.050 | — | none | 0.070 (L0H1) | 2.500 |" in table  # no probe: "—"
    probed = format_table({"runs": [{**run, "shifted_period_accuracy": 0.0625}]})
    assert "| DMTN | attn-only | 3.900 | 0.050 | 0.062 | none |" in probed
    for number in ("0.8081", "0.5735", "0.8334", "0.4676"):
        assert number in table
    with pytest.raises(TypeError, match="results must be the dict returned by run_induction"):
        format_table([])


@pytest.mark.slow
def test_quick_preset_all_runs(tmp_path):
    """The full quick preset: 3 operators x 2 architectures, structural checks pass, run directory written."""
    result = run_induction(InductionConfig.preset("quick"), out=tmp_path / "quick", progress=False)
    assert len(result["runs"]) == 6 and result["checks"]["all"]
    table = (tmp_path / "quick" / "table.md").read_text()
    assert sum(line.startswith("| ") for line in table.splitlines()) == 7  # header + 6 runs


# ---- variable-period data and the shifted-period probe ------------------------------------------------


def test_variable_period_tokens_repeat_their_last_segment():
    from workbench.experiments import variable_period_tokens

    tokens, periods = variable_period_tokens(np.random.default_rng(3), 40, 10, 64, 3, 7, return_periods=True)
    assert tokens.shape == (64, 20) and tokens.dtype == np.int64
    assert periods.min() >= 3 and periods.max() <= 7 and len(set(periods.tolist())) > 1
    for row, p in zip(tokens, periods, strict=True):
        np.testing.assert_array_equal(row[20 - p :], row[20 - 2 * p : 20 - p])  # exact repeat of the segment
    with pytest.raises(ValueError, match="min_period must be an integer in \\[1, 10\\], got 11"):
        variable_period_tokens(np.random.default_rng(0), 40, 10, 2, 11)


class _Oracle(torch.nn.Module):
    """Predicts t_{i+1} by a rule on the tokens (one-hot logits): 'induction' or a fixed look-back."""

    def __init__(self, vocab_size, rule, offset=None):
        super().__init__()
        self.vocab_size, self.rule, self.offset = vocab_size, rule, offset

    def forward(self, tokens):
        B, n = tokens.shape
        guess = torch.zeros_like(tokens)
        for b in range(B):
            for i in range(n):
                if self.rule == "induction":  # the token after the latest earlier occurrence of t_i
                    earlier = [j for j in range(i) if tokens[b, j] == tokens[b, i]]
                    guess[b, i] = tokens[b, earlier[-1] + 1] if earlier else 0
                else:  # positional: copy from a fixed offset back
                    guess[b, i] = tokens[b, i - self.offset + 1] if i >= self.offset - 1 else 0
        return torch.nn.functional.one_hot(guess, self.vocab_size).double()


def test_shifted_period_probe_separates_induction_from_a_positional_copier():
    """Oracle: the induction rule scores ~1 on any period; 'look back T−1' scores near chance 1/V on periods ≤ T/2.

    Tolerances: segments drawn from V = 64 tokens repeat a token inside a segment with small probability, which
    can mislead the latest-occurrence rule (≥ 0.9 leaves room); chance is 1/64, so the copier stays < 0.1.
    """
    from workbench.experiments import shifted_period_accuracy

    cfg = InductionConfig.preset("quick", vocab_size=64, half_length=12, eval_batch=24)
    assert shifted_period_accuracy(_Oracle(64, "induction"), cfg) >= 0.9
    assert shifted_period_accuracy(_Oracle(64, "positional", offset=12), cfg) < 0.1
