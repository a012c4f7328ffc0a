"""Byte-level language models (Table 2) and the sequential transfer (Table 3): corpus, bpb, probe, projection, runs.

Oracles: the corpus split against the works read directly (every work in exactly one split); bits per byte
against the closed form of a fixed unigram model computed with numpy; the induction probe against a hand-built
perfect copier (accuracy 1, score 1); the projection of a trained model against
:func:`workbench.attention.family_operator` on each head's own weights (dense float64); a resumed transfer
against the uninterrupted one (same seeds, one thread: equal to 1e-12, far below the ~1e-7 a change of the
float32 arithmetic would leave).
"""

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from workbench.attention import family_operator  # noqa: E402
from workbench.experiments import (  # noqa: E402
    ByteCorpus,
    InductionTransformer,
    LanguageModelConfig,
    TransferConfig,
    bits_per_byte,
    byte_induction_probe,
    held_out_bpb,
    language_model_sweep_table,
    run_language_model,
    run_transfer,
    shakespeare_bytes,
    transfer_rows,
)
from workbench.models import read_corpus  # noqa: E402
from workbench.nn import project_attention  # noqa: E402

torch.set_num_threads(1)


def test_the_split_is_by_work_and_loses_nothing():
    corpus = shakespeare_bytes(10)
    works = sorted(read_corpus("shakespeare"), key=lambda d: d.name)
    assert set(corpus.train_works).isdisjoint(corpus.held_out_works)
    assert sorted(corpus.train_works + corpus.held_out_works) == [d.name for d in works]
    assert corpus.held_out_works == tuple(d.name for i, d in enumerate(works) if i % 10 == 9)
    # Every byte of every work is in its split: the lengths add up to the works plus the two-byte separators.
    for names, text in ((corpus.train_works, corpus.train), (corpus.held_out_works, corpus.held_out)):
        chosen = [d for d in works if d.name in names]
        assert len(text) == sum(len(d.text.strip().encode("utf-8")) for d in chosen) + 2 * (len(chosen) - 1)


def test_bits_per_byte_of_a_unigram_model_is_its_cross_entropy():
    # Oracle: a model with fixed logits log q predicts every byte with q; its bpb is −Σ log2 q(x_t) / N over the
    # predicted bytes x_1 … x_{Wc}, computed directly with numpy.  float64 logits: agreement to 1e-12.
    rng = np.random.default_rng(0)
    held = rng.integers(0, 256, 1000).astype(np.uint8)
    q = rng.dirichlet(np.ones(256))

    def model(x):
        return torch.from_numpy(np.log(q)).expand(*x.shape, 256)

    corpus = ByteCorpus(np.zeros(1, np.uint8), held, (), ())
    got = held_out_bpb(model, corpus, 700, 64, batch=3)
    windows = 700 // 64
    predicted = held[1 : 1 + windows * 64]
    assert got["bytes"] == windows * 64
    assert got["bpb"] == pytest.approx(-np.log2(q[predicted]).mean(), rel=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bits_per_byte(1.0, 0), "n_bytes must be an integer >= 1, got 0"),
        (lambda: bits_per_byte(math.nan, 3), "nats must be a finite number >= 0, got nan"),
        (lambda: LanguageModelConfig(context=33), "context must be even"),
        (lambda: LanguageModelConfig(eval_bytes=64), "eval_bytes must be at least context=128, got 64"),
        (lambda: LanguageModelConfig(device="tpu"), "device must be 'cpu' or 'cuda\\[:N\\]', got 'tpu'"),
        (lambda: LanguageModelConfig(d_model=130), "n_heads must divide d_model, got d_model=130 and n_heads=4"),
        (lambda: TransferConfig(task="wiki"), "task must be one of 'shakespeare', 'induction', got 'wiki'"),
        (lambda: TransferConfig(adapt_steps=(3, 1)), "adapt_steps must be three step counts"),
        (lambda: TransferConfig(min_period=40), "min_period must be at most half_length=32, got 40"),
        (
            lambda: held_out_bpb(None, ByteCorpus(np.zeros(1, np.uint8), np.zeros(9, np.uint8), (), ()), 8, 16),
            "n_bytes must cover at least one window of context=16",
        ),
    ],
)
def test_bad_settings_are_refused_with_the_parameter_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


class _Copier(torch.nn.Module):
    """A perfect induction circuit by hand: position i ≥ T attends to i − T + 1 and predicts its token."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))

    def forward(self, tokens, return_operators=False):
        B, n = tokens.shape
        T = n // 2
        logits = torch.zeros(B, n, 256)
        A = torch.tril(torch.ones(n, n)) / torch.arange(1, n + 1)[:, None]  # uniform causal before the repeat
        for i in range(T, n - 1):
            logits[:, i, :].scatter_(1, tokens[:, i - T + 1 : i - T + 2], 1.0)
            A[i] = 0.0
            A[i, i - T + 1] = 1.0
        A[n - 1] = 0.0
        A[n - 1, T] = 1.0  # the last query (i = 2T − 1) attends to i − T + 1 = T
        return (logits, [A.expand(B, 1, n, n)]) if return_operators else logits


def test_the_induction_probe_scores_a_perfect_copier_one():
    probe = byte_induction_probe(_Copier(), 16, seed=3, batch=5)
    assert probe["accuracy"] == 1.0
    assert probe["scores"] == [[1.0]] and probe["best"] == 1.0


def test_projection_of_a_model_is_each_heads_corner_operator():
    torch.manual_seed(1)
    model = InductionTransformer(256, 12, 16, 2, 2, "ATTN", "mlp").double()
    tokens = torch.randint(0, 256, (1, 12))
    x = model.embed(tokens) + model.position(torch.arange(12))
    for operator in ("DMTN", "DMAP", "ATTN"):
        assert project_attention(model, operator) == 2
        block = model.blocks[0]
        layer = block.attention
        P = layer.attention(block.norm_attention(x))[0].detach().numpy()
        X = block.norm_attention(x)[0].detach().numpy()
        for h, (W_Q, W_K) in enumerate(layer.head_weights()):
            # Oracle: the family's dense operator on this head's own queries and keys, bidirectional here
            # (the causal mask is applied after the logits, so the rows differ by the mask only).
            causal = np.tril(np.ones((12, 12), dtype=bool))
            oracle = family_operator(X @ W_Q, X @ W_K, operator, beta=1 / math.sqrt(8), mask=causal)
            np.testing.assert_allclose(P[h], oracle, atol=1e-12)  # float64 end to end: rounding only
    with pytest.raises(ValueError, match="operator must be one of"):
        project_attention(model, "softmax")
    with pytest.raises(ValueError, match="module must hold at least one OperatorAttention layer"):
        project_attention(torch.nn.Linear(2, 2), "DMTN")


def test_one_seed_gives_every_operator_the_same_start():
    from workbench.experiments.lm import new_model

    cfg = LanguageModelConfig.preset("quick")
    states = [new_model(cfg, op).state_dict() for op in ("ATTN", "DMTN", "DMAP")]
    for other in states[1:]:
        assert all(torch.equal(states[0][k], other[k]) for k in states[0])


def test_a_quick_language_model_run(tmp_path):
    cfg = LanguageModelConfig.preset("quick", operator="DMAP", steps=6, log_every=3)
    result = run_language_model(cfg, out=tmp_path / "run", progress=False)
    row = result["runs"][0]
    assert result["checks"]["all"] and result["checks"]["dmap_skew_zero"]
    assert row["curve"]["steps"] == [3, 6]
    assert 0.0 < row["bpb"] < 8.5  # an almost untrained model: near the 8 bits of a uniform guess
    assert json.loads((tmp_path / "run" / "results.json").read_text())["runs"][0]["bpb"] == row["bpb"]
    assert (tmp_path / "run" / "DMAP.pt").exists()


def test_table2_pairs_seeds_and_reports_the_interval():
    tasks = [
        {"seed": s, "rows": [{"operator": op, "bpb": b + d, "induction_accuracy": 0.0}]}
        for s, d in enumerate((0.0, 0.02, -0.01, 0.03))
        for op, b in (("ATTN", 2.0), ("DMTN", 2.01))
    ]
    line = language_model_sweep_table({"tasks": tasks}).splitlines()[3]
    # The paired differences are exactly 0.01 at every seed: the interval collapses onto it.
    assert line.startswith("| DMTN | 2.0200 ± 0.0183 (4) | +0.0100 [+0.0100, +0.0100] |")


def _quick_transfer(**kw):
    return TransferConfig.preset("quick", task="induction", pretrain_steps=4, adapt_steps=(3, 1, 1), **kw)


def test_transfer_states_and_projection_without_training():
    result = run_transfer(_quick_transfer(target="DMAP"), progress=False)
    states = result["states"]
    assert [s["state"] for s in states] == ["A0", "M1:projected", "M1", "A1:projected", "A1", "M2:projected", "M2"]
    assert [s["operator"] for s in states] == ["ATTN", "DMAP", "DMAP", "ATTN", "ATTN", "DMAP", "DMAP"]
    assert [s["steps"] for s in states] == [4, 4, 7, 7, 8, 8, 9]
    assert all(s["rho_skew"] == 0.0 for s in states if s["operator"] == "DMAP")
    assert result["checks"]["all"]
    rows = transfer_rows(result)
    assert set(rows[0]) == {
        "state",
        "operator",
        "steps",
        "repeat_loss",
        "induction_accuracy",
        "shifted_period_accuracy",
        "best_induction_score",
        "rho_skew",
    }


def test_a_resumed_transfer_equals_the_uninterrupted_one(tmp_path):
    config = _quick_transfer()
    whole = run_transfer(config, out=tmp_path / "whole", progress=False)
    cut = tmp_path / "cut"
    run_transfer(config, out=cut, progress=False)
    # Interrupt it after M1: forget A1 and M2 as an interrupted run would not have kept them.
    record = json.loads((cut / "run.json").read_text())
    record.update(status="interrupted", done=["A0", "M1"])
    (cut / "run.json").write_text(json.dumps(record))
    for stage in ("A1", "M2"):
        (cut / f"{stage}.json").unlink()
        (cut / f"{stage}.pt").unlink()
    resumed = run_transfer(config, out=cut, progress=False, resume=True)
    for a, b in zip(whole["states"], resumed["states"], strict=True):
        assert a.keys() == b.keys()
        for key in a.keys() - {"seconds", "curve"}:
            if isinstance(a[key], str):
                assert b[key] == a[key]
            else:
                np.testing.assert_allclose(b[key], a[key], rtol=1e-12, atol=0)


def test_a_pretrained_lm_run_is_the_transfers_a0(tmp_path):
    # Oracle: the transfer that trains its own A0.  The lm run with the same settings is the same computation
    # (same seed, windows and schedule), so every state of the transfer that loads it agrees to 1e-12.
    lm = LanguageModelConfig.preset("quick", operator="ATTN", steps=6, log_every=3)
    run_language_model(lm, out=tmp_path / "lm-0", progress=False)
    settings = dict(pretrain_steps=6, adapt_steps=(2, 1, 1), warmup=5, log_every=3)
    own = run_transfer(TransferConfig.preset("quick", **settings), progress=False)
    loaded = run_transfer(
        TransferConfig.preset("quick", pretrained=str(tmp_path / "lm-{seed}"), **settings), progress=False
    )
    assert loaded["states"][0]["pretrained"] == str(tmp_path / "lm-0")
    for a, b in zip(own["states"], loaded["states"], strict=True):
        assert a["state"] == b["state"]
        np.testing.assert_allclose(b["bpb"], a["bpb"], rtol=1e-12, atol=0)
        np.testing.assert_allclose(b["induction_scores"], a["induction_scores"], rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match=r"pretrained must be trained as this transfer's A0, got .* with steps=6"):
        run_transfer(TransferConfig.preset("quick", pretrained=str(tmp_path / "lm-{seed}")), progress=False)
    with pytest.raises(ValueError, match="pretrained applies to the shakespeare task only"):
        TransferConfig(task="induction", pretrained="x")


@pytest.mark.parametrize("template", ["lm-{0}", "lm-{seed.__class__}", "lm-{seed:>999999999}", "lm-{missing}"])
def test_pretrained_is_a_path_with_only_seed_replaced(tmp_path, template):
    # Issue 40, finding 9: `pretrained` went through str.format (a KeyError traceback, a MemoryError from a huge
    # field width, attribute lookups on the seed).  Now only {seed} is replaced; the rest is the path as written,
    # and a path that is no lm run gets the usual one-line refusal naming it.
    folder = str(tmp_path / template)
    with pytest.raises(ValueError, match="pretrained must be the run directory of a finished lm run, got") as refusal:
        run_transfer(TransferConfig.preset("quick", pretrained=folder), progress=False)
    assert template in str(refusal.value)
