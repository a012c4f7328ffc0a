# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Solutions — 13 Training under each geometry
#
# Worked answers to the exercises of notebook `13_training_under_each_geometry`.  Oracles: scipy's paired $t$-test
# interval and the table's own interval; the closed form of a constant model's bits per byte computed with numpy, and
# Gibbs' inequality; the exact round trip of a projection (bitwise equal outputs).

# %%
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
from scipy import stats

from workbench.experiments import (
    ByteCorpus,
    InductionTransformer,
    TransferConfig,
    held_out_bpb,
    language_model_sweep_table,
    run_transfer,
    shakespeare_bytes,
)
from workbench.nn import project_attention

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
torch.set_num_threads(1)
RESULTS = Path("..") / ".." / "experiments" / "results"
if not RESULTS.is_dir():  # run from notebooks/ rather than notebooks/solutions/
    RESULTS = Path("..") / "experiments" / "results"

# %% [markdown]
# ### Solution 13.1
#
# The paired interval uses the differences $d_s = b^{\mathrm{DMAP}}_s - b^{\mathrm{ATTN}}_s$ only; Welch's uses the two
# samples as if independent, so its standard error carries the seed-to-seed spread of each operator, which the
# pairing cancels when the seeds move together.  The bootstrap resamples the seeds with replacement.

# %%
lm = json.loads((RESULTS / "lm-table2" / "sweep.json").read_text())
bpb: dict[str, dict[int, float]] = {}
for task in lm["tasks"]:
    for row in task["rows"] or ():  # a pending task has no rows
        bpb.setdefault(row["operator"], {})[task["seed"]] = row["bpb"]
seeds = sorted(bpb["ATTN"])
rng = np.random.default_rng(13)
table = language_model_sweep_table(lm)
for op in [o for o in ("DMTN", "DMAP") if len(set(bpb.get(o, {})) & set(seeds)) >= 2]:  # an interval needs 2
    paired_seeds = sorted(set(bpb[op]) & set(seeds))
    a = np.array([bpb[op][s] for s in paired_seeds])
    b = np.array([bpb["ATTN"][s] for s in paired_seeds])
    d = a - b
    half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    paired = (d.mean() - half, d.mean() + half)
    oracle = stats.ttest_rel(a, b).confidence_interval(0.95)
    welch = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    boot = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(10_000)]
    print(
        f"{op} − ATTN: mean {d.mean():+.4f}; paired t [{paired[0]:+.4f}, {paired[1]:+.4f}]; "
        f"Welch [{welch.low:+.4f}, {welch.high:+.4f}]; bootstrap [{np.percentile(boot, 2.5):+.4f}, "
        f"{np.percentile(boot, 97.5):+.4f}]"
    )
    # Oracles: scipy's paired interval (float rounding only), and the table's printed interval (4 decimals).
    assert np.allclose(paired, (oracle.low, oracle.high), rtol=0, atol=1e-12)
    assert f"[{paired[0]:+.4f}, {paired[1]:+.4f}]" in table
    print(f"  paper Δ: {0.8621 - 0.8471 if op == 'DMAP' else 0.8492 - 0.8471:+.4f}")

# %% [markdown]
# ### Solution 13.2
#
# $N_{\mathrm{tok}}\bar\ell$ is the summed loss in nats over the text, and it is the same sum whatever unit the text is
# cut into; dividing by the bytes and by $\ln 2$ (nats → bits) gives bits per byte.  A constant model pays
# $-\ln q(x_t)$ for byte $x_t$, so its bpb is $-\frac1N\sum_t\log_2 q(x_t) = -\sum_b \hat p_b\log_2 q_b$ with $\hat p$
# the empirical frequencies of the predicted bytes; Gibbs' inequality
# $-\sum_b\hat p_b\log q_b \ge -\sum_b\hat p_b\log\hat p_b$ (equality iff $q = \hat p$) bounds it below by their
# entropy.

# %%
corpus = shakespeare_bytes()
q = np.bincount(corpus.train, minlength=256) + 1.0
q /= q.sum()


def constant(tokens):
    return torch.from_numpy(np.log(q)).expand(*tokens.shape, 256)


context, n = 128, 65_536
scored = held_out_bpb(constant, corpus, n, context)
predicted = corpus.held_out[1 : 1 + (n // context) * context]
direct = float(-np.log2(q[predicted]).mean())
freq = np.bincount(predicted, minlength=256) / len(predicted)
entropy = float(-(freq[freq > 0] * np.log2(freq[freq > 0])).sum())
print(f"held_out_bpb {scored['bpb']:.6f}, closed form {direct:.6f}, empirical entropy {entropy:.6f}")
assert abs(scored["bpb"] - direct) < 1e-12  # float64 logits: summation order only
assert entropy <= scored["bpb"]
toy = ByteCorpus(np.zeros(1, np.uint8), np.arange(200, dtype=np.uint8), (), ())
assert held_out_bpb(lambda x: torch.zeros(*x.shape, 256), toy, 128, 32)["bpb"] == 8.0  # uniform: 8 bits exactly

# %% [markdown]
# ### Solution 13.3
#
# The projection writes one attribute (the corner) of each attention layer and no weight, so the round trip is the
# identity on the model's function.  The jumps come from what each corner drops: DMTN drops the negative sector of the
# bond, DMAP drops it and the free link too.

# %%
torch.manual_seed(0)
model = InductionTransformer(16, 16, 32, 2, 2, "ATTN", "attn-only")
tokens = torch.randint(0, 16, (4, 16))
before = model(tokens)
project_attention(model, "DMTN")
moved = model(tokens)
project_attention(model, "ATTN")
assert torch.equal(model(tokens), before)  # bit for bit
assert not torch.equal(moved, before)

budgets = (40, 120) if SMALL else (100, 400)
jumps = {}
for target in ("DMTN", "DMAP"):
    for steps in budgets:
        for seed in (0, 1):
            cfg = TransferConfig.preset("quick", task="induction", target=target, pretrain_steps=steps, seed=seed)
            states = {s["state"]: s for s in run_transfer(cfg, progress=False)["states"]}
            jumps[(target, steps, seed)] = (
                states["M1:projected"]["repeat_loss"] - states["A0"]["repeat_loss"],
                states["M1"]["repeat_loss"] - states["A0"]["repeat_loss"],
            )
for key, (jump, left) in jumps.items():
    print(f"{key}: projection jump {jump:+.3f}, after adaptation {left:+.3f}")
fig, ax = plt.subplots(figsize=(6, 3))
for target, marker in (("DMTN", "o"), ("DMAP", "s")):
    xs = [k[1] for k in jumps if k[0] == target]
    ax.plot(xs, [jumps[k][0] for k in jumps if k[0] == target], marker, label=f"{target}: jump")
ax.set_xlabel("pretraining steps")
ax.set_ylabel("repeat loss jump (nats)")
ax.legend()
plt.show()
mean_jump = {t: np.mean([v[0] for k, v in jumps.items() if k[0] == t]) for t in ("DMTN", "DMAP")}
print("mean jump:", mean_jump)
assert all(np.isfinite(v).all() for v in jumps.values())
