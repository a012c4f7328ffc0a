"""The experiments' one training loop (workbench.experiments.common.train) and its byte-model helpers.

Oracles: an AdamW loop written out by hand with torch's optimiser (a second, independent statement of the same
steps: it must give the same weights and curve); the closed form of the warm-up/cosine rate; a loss that turns
NaN at a known step (the guard must stop there and say so).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from workbench.experiments.common import (  # noqa: E402
    ByteCorpus,
    Schedule,
    held_out_bpb,
    learning_rate,
    next_byte_loss,
    train,
    train_bytes,
    training_windows,
)


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = torch.from_numpy(rng.standard_normal((64, 5)))
    y = x @ torch.arange(1.0, 6.0, dtype=torch.float64) + 0.1 * torch.from_numpy(rng.standard_normal(64))
    return x, y


def _model():
    torch.manual_seed(0)
    return nn.Linear(5, 1).double()


def test_the_loop_takes_the_steps_a_hand_written_adamw_loop_takes():
    # Oracle: the same schedule written out with torch.optim.AdamW directly.  Both run the same float64
    # operations in the same order on this machine, so the weights agree to rounding (1e-12 relative allows
    # for nothing more than a reordering inside BLAS).
    x, y = _data()
    schedule = Schedule(steps=30, lr=0.05, weight_decay=0.01, grad_clip=0.5, log_every=10, warmup=5, betas=(0.9, 0.95))
    batches = np.random.default_rng(1).integers(0, 64, (30, 16))

    model = _model()
    run = train(model, schedule, lambda step: ((model(x[batches[step]])[:, 0] - y[batches[step]]) ** 2).mean())

    reference = _model()
    optimizer = torch.optim.AdamW(reference.parameters(), lr=0.05, weight_decay=0.01, betas=(0.9, 0.95))
    losses = []
    for step in range(30):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, 30, 0.05, 5)
        loss = ((reference(x[batches[step]])[:, 0] - y[batches[step]]) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
        optimizer.step()
        losses.append(loss.item())

    for mine, theirs in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(mine, theirs, rtol=1e-12, atol=0.0)
    np.testing.assert_allclose(run.losses, losses, rtol=1e-12)
    assert run.curve["steps"] == [10, 20, 30]
    np.testing.assert_allclose(run.curve["train_loss"], [np.mean(losses[i : i + 10]) for i in (0, 10, 20)], rtol=1e-12)
    assert run.updates == 30 and run.stop is None and len(run.grad_norms) == 30 and run.seconds > 0


def test_the_rate_warms_up_linearly_then_decays_by_a_cosine_to_a_tenth():
    # Closed form: lr (s+1)/w during warm-up; lr (0.1 + 0.45 (1 + cos(pi (s-w)/(S-w)))) after.
    peak, steps, warmup = 2.0, 50, 10
    for s in range(steps + 1):
        expected = (
            peak * (s + 1) / warmup
            if s < warmup
            else peak * (0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, (s - warmup) / (steps - warmup)))))
        )
        assert learning_rate(s, steps, peak, warmup) == pytest.approx(expected, rel=1e-15)
    assert Schedule(10, 0.3, 0.0, 1.0, 5).rate(7) == 0.3  # no warm-up given: a constant rate


def test_the_guard_stops_at_the_first_non_finite_loss_and_says_where():
    x, y = _data()

    def poisoned(model):
        # The mean-square loss, NaN at step 7.
        return lambda step: ((model(x)[:, 0] - y) ** 2).mean() * (math.nan if step == 7 else 1.0)

    schedule = Schedule(steps=20, lr=0.01, weight_decay=0.0, grad_clip=1.0, log_every=5)
    guarded = _model()
    run = train(guarded, schedule, poisoned(guarded), guard=True)
    assert run.stop == "step 7: the training loss is not finite (nan)"
    assert run.updates == 7 and len(run.losses) == 7 and run.curve["steps"] == [5]
    assert all(torch.isfinite(p).all() for p in guarded.parameters())

    unguarded = _model()
    run = train(unguarded, schedule, poisoned(unguarded))
    assert run.stop is None and run.updates == 20  # without the guard the NaN step is taken and poisons the weights
    assert not all(torch.isfinite(p).all() for p in unguarded.parameters())


def test_a_floating_point_error_in_an_evaluation_stops_a_guarded_run():
    x, y = _data()
    model = _model()

    def evaluate(done):
        if done == 10:
            raise FloatingPointError("the held-out loss overflowed")
        return {"score": float(done)}

    schedule = Schedule(steps=20, lr=0.01, weight_decay=0.0, grad_clip=1.0, log_every=5)
    run = train(model, schedule, lambda step: ((model(x)[:, 0] - y) ** 2).mean(), evaluate=evaluate, guard=True)
    assert run.stop == "step 10: the held-out loss overflowed"
    assert run.curve == {"steps": [5], "train_loss": [pytest.approx(np.mean(run.losses[:5]))], "score": [5.0]}
    with pytest.raises(FloatingPointError, match="overflowed"):
        train(_model(), schedule, lambda step: ((model(x)[:, 0] - y) ** 2).mean(), evaluate=evaluate)


def test_named_terms_are_summed_and_logged_apart_and_a_first_log_comes_before_any_step():
    x, y = _data()
    model = _model()
    terms = lambda step: {  # noqa: E731
        "train_loss": ((model(x)[:, 0] - y) ** 2).mean(),
        "penalty": 0.5 * model.weight.square().sum(),
    }
    schedule = Schedule(steps=6, lr=0.01, weight_decay=0.0, grad_clip=10.0, log_every=3)
    run = train(model, schedule, terms, evaluate=lambda done: {"done": done}, logged="last", evaluate_first=True)
    assert run.curve["steps"] == [0, 3, 6] and run.curve["done"] == [0, 3, 6]
    assert math.isnan(run.curve["train_loss"][0]) and math.isnan(run.curve["penalty"][0])
    assert run.curve["train_loss"][1:] == [run.losses[2], run.losses[5]]  # "last": the logged step's own value
    with pytest.raises(ValueError, match=r"^logged must be 'mean' or 'last', got 'median'$"):
        train(model, schedule, terms, logged="median")


def test_byte_models_train_on_random_windows_and_are_scored_on_every_held_out_byte_once():
    corpus = ByteCorpus(
        np.frombuffer(b"abcdefgh" * 64, dtype=np.uint8), np.frombuffer(b"abcdefgh" * 16, dtype=np.uint8), (), ()
    )
    windows = training_windows(corpus, np.random.default_rng(0), 4, 8, "cpu")
    assert windows.shape == (4, 9) and windows.dtype == torch.int64
    # Every window is a run of the periodic text: each byte is followed by the next letter.
    assert torch.all((windows[:, 1:] - 97) == (windows[:, :-1] - 97 + 1) % 8)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(256, 16), nn.Linear(16, 256))
    before = held_out_bpb(model, corpus, 64, 8)["bpb"]
    settings = SimpleNamespace(context=8, batch=8, lr=0.05, weight_decay=0.0, grad_clip=1.0, log_every=20, device="cpu")
    curve = train_bytes(
        model, corpus, settings, 60, np.random.default_rng(0), warmup=5, label="t", progress=False, curve_bytes=64
    )
    assert curve["steps"] == [20, 40, 60] and len(curve["held_out_bpb"]) == 3
    # A bigram model of a periodic text learns it: far below the untrained model's bits per byte.
    assert curve["held_out_bpb"][-1] < 0.25 * before
    assert held_out_bpb(model, corpus, 64, 8)["bytes"] == 64
    assert next_byte_loss(model, windows).ndim == 0


def test_bad_settings_are_refused_by_name():
    with pytest.raises(ValueError, match=r"^steps must be an integer >= 1, got 0$"):
        Schedule(steps=0, lr=0.1, weight_decay=0.0, grad_clip=1.0, log_every=1)
    with pytest.raises(ValueError, match=r"^lr must be"):
        Schedule(steps=1, lr=0.0, weight_decay=0.0, grad_clip=1.0, log_every=1)
    with pytest.raises(ValueError, match=r"^warmup must be an integer >= 0, got -1$"):
        Schedule(steps=1, lr=0.1, weight_decay=0.0, grad_clip=1.0, log_every=1, warmup=-1)
    model = _model()
    with pytest.raises(TypeError, match=r"^schedule must be a Schedule, got dict$"):
        train(model, {"steps": 3}, lambda step: model.weight.sum())
    schedule = Schedule(steps=1, lr=0.1, weight_decay=0.0, grad_clip=1.0, log_every=1)
    with pytest.raises(TypeError, match=r"^loss_at must be a function of the step, got Tensor$"):
        train(model, schedule, model.weight.sum())


def test_a_failed_first_evaluation_stops_a_guarded_run_before_any_step():
    model = _model()
    x, y = _data()

    def evaluate(done):
        raise FloatingPointError("no held-out score")

    schedule = Schedule(steps=7, lr=0.01, weight_decay=0.0, grad_clip=1.0, log_every=3)
    loss = lambda step: ((model(x)[:, 0] - y) ** 2).mean()  # noqa: E731
    run = train(model, schedule, loss, evaluate=evaluate, evaluate_first=True, guard=True)
    assert (run.stop, run.updates, run.curve) == ("step 0: no held-out score", 0, {"steps": []})


def test_every_curve_has_one_entry_per_log_and_a_term_cannot_share_a_measurement_s_name():
    model = _model()
    x, y = _data()
    loss = lambda step: ((model(x)[:, 0] - y) ** 2).mean()  # noqa: E731
    schedule = Schedule(steps=6, lr=0.01, weight_decay=0.0, grad_clip=1.0, log_every=2)
    # A measurement logged only at the first log: NaN after, so its entries stay aligned with the steps.
    run = train(model, schedule, loss, evaluate=lambda done: {"early": 1.0} if done == 2 else {})
    assert run.curve["steps"] == [2, 4, 6]
    assert run.curve["early"][0] == 1.0 and all(math.isnan(v) for v in run.curve["early"][1:])
    with pytest.raises(ValueError, match=r"^evaluate must not return a training term's name, got \['train_loss'\]$"):
        train(model, schedule, loss, evaluate=lambda done: {"train_loss": 0.0})
