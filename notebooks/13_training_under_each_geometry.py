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
# # 13 — Training under each geometry: seeds, intervals and transfers
#
# Notebook 12 reran the experiments of {cite:t}`candanedo2026attention` whose claims are about *structure*: which
# walks are reversible, when an induction head forms.  This notebook reruns the three whose claims are about
# *quality*, and each stands on one seed in the paper:
#
# 1. **Table 2.**  Language models trained from scratch with ATTN, DMTN and DMAP scores at a matched budget; the
#    paper reports held-out bits per byte 0.8471 / 0.8492 / 0.8621 at about 200M parameters.
# 2. **Table 3.**  One model carried ATTN → DMTN → ATTN → DMTN with 3 : 1 : 1 adaptation; the paper reads that
#    induction (0.81 → 0.57 → 0.83 → 0.47) is more sensitive to the score geometry than the loss.
# 3. **§10.**  A trained ATTN flow transformer moved into DMTN, then DMAP, *with its weights kept*: a mess without
#    training, clean again after adaptation, and DMAP worse than DMTN.
#
# The runs are small (a 0.87 M-parameter byte model on the Shakespeare corpus, the two-layer induction model, the
# Swiss SiT), every condition has three to five seeds, and every difference comes with an interval.  They were made
# by `workbench sweep` (tasks on Dask {cite:p}`rocklin2015dask`) on a two-core machine and are committed in
# `experiments/results/` (the commands and wall times are in each folder's README).  The last section reruns a
# transfer live at the quick preset.
#
# **Objectives.**  After this notebook you can
#
# * compute bits per byte exactly from a model's summed loss, and read it against the baselines a byte model must
#   beat (8 bits for a uniform guess, the unigram entropy);
# * state a paired difference between two training recipes with a Student-$t$ interval over seeds, and say when an
#   interval decides a claim and when it cannot;
# * explain why projecting a trained head onto another corner of the family keeps its weights and changes only its
#   logits, and measure what the projection costs before and after adaptation;
# * say, claim by claim, which of the paper's findings the small-scale runs support, contradict, or leave undecided.
#
# **Prerequisites.**  Notebook 09 (the four corners DMAP, DMTN, ATAP, ATTN) and notebook 12 (the experiments'
# diagnostics; the induction probe).  Maths: cross-entropy and logarithms in two bases, the Student-$t$
# distribution, paired versus unpaired comparisons.
#
# **Time.**  About 60 minutes in class (section 5 as reading); the code runs in about 15 s at the default scale.

# %%
import json
import os

import matplotlib.pyplot as plt
import numpy as np
import torch

from workbench.experiments import (
    PAPER_TABLE2,
    PAPER_TABLE3,
    TransferConfig,
    committed_results,
    language_model_sweep_figure,
    language_model_sweep_table,
    paired_difference,
    run_transfer,
    shakespeare_bytes,
    sweep_table,
    transfer_sweep_figure,
    transfer_sweep_table,
)

SCALE = os.environ.get("WORKBENCH_SCALE", "small")
if SCALE not in ("small", "large"):
    raise ValueError(f"WORKBENCH_SCALE must be 'small' or 'large', got {SCALE!r}")
SMALL = SCALE == "small"
torch.set_num_threads(1)
RESULTS = committed_results()  # experiments/results of the checkout, from any working directory


def sweep(name: str) -> dict:
    """A committed sweep's record: settings, every task's rows, the cells' mean ± sd."""
    return json.loads((RESULTS / name / "sweep.json").read_text())


# %% [markdown]
# ## 1. Bits per byte, and what a byte model must beat
#
# A byte-level model predicts each byte $x_t$ of the held-out text from the bytes before it.  Its summed loss in
# nats, divided by the number of predicted bytes and by $\ln 2$, is its **bits per byte** {cite:p}`shannon1951prediction`:
# $$\mathrm{bpb} = \frac{\sum_t -\ln p_\theta(x_t\mid x_{<t})}{N_{\mathrm{bytes}}\ln 2}.$$
# With a tokenizer, $N_{\mathrm{tokens}} \neq N_{\mathrm{bytes}}$ and the loss per token must be rescaled by
# tokens per byte (Exercise 13.2); here tokens *are* bytes.  Two baselines frame the numbers: a uniform guess over
# 256 bytes costs exactly 8 bits, and a model that ignores context and predicts the training text's byte frequencies
# $q$ costs the cross-entropy $-\sum_b p_b\log_2 q_b$ of the held-out frequencies $p$ against $q$.  The held-out text
# is whole works (every tenth play or poem by name), never seen in training.

# %%
corpus = shakespeare_bytes()
q = np.bincount(corpus.train, minlength=256) + 1.0  # add-one: every byte gets a probability
q /= q.sum()
p = np.bincount(corpus.held_out, minlength=256) / len(corpus.held_out)
unigram_bpb = float(-(p * np.log2(q)).sum())
entropy_bpb = float(-(p[p > 0] * np.log2(p[p > 0])).sum())
print(f"held-out works: {', '.join(corpus.held_out_works)}")
print(f"train {len(corpus.train):,} bytes, held-out {len(corpus.held_out):,} bytes")
print(f"uniform: 8 bpb;  unigram of the training text: {unigram_bpb:.3f} bpb;  held-out byte entropy {entropy_bpb:.3f}")
assert entropy_bpb <= unigram_bpb < 8.0  # Gibbs: cross-entropy ≥ entropy

# %% [markdown]
# ## 2. Table 2 over seeds
#
# Three models per seed, one per operator, share everything but the logits: the initial weights (same shapes, same
# seed), the training windows in the same order, the learning-rate schedule, and the held-out bytes they are scored on
# (the first 131,072).  So at one seed the difference of two operators' bpb is a **paired** measurement, and the
# seed-to-seed spread of the models cancels in it.  Over $n$ seeds the paired differences $d_s$ give the interval
# $$\bar d \pm t_{0.975,\,n-1}\,s_d/\sqrt n .$$

# %%
lm = sweep("lm-table2")
print(language_model_sweep_table(lm))
runs = {
    (t["grid"]["operator"], t["seed"]): json.loads((RESULTS / "lm-table2" / t["id"] / "results.json").read_text())
    for t in lm["tasks"]
    if t["status"] == "complete"  # the committed runs (a sweep lists its pending tasks too)
}
language_model_sweep_figure(lm, runs)
plt.show()

# %% [markdown]
# How to read it.  An interval that excludes 0 detects a difference at this scale; one that contains 0 does not
# decide it.  The paper's two claims are an ordering (ATTN ≤ DMTN ≤ DMAP in bpb) and a size (DMTN within about
# 0.002 of ATTN, DMAP 0.015 behind).  The next cell states, from the committed numbers, which of them the seeds
# decide.  Remember the scale: these byte models are far from converged (compare the bpb with the unigram baseline of
# section 1 and the paper's 0.85), so the differences measured here are those of early training.

# %%

per_seed: dict[str, dict[int, float]] = {}
for t in lm["tasks"]:
    for row in t.get("rows") or ():
        per_seed.setdefault(row["operator"], {})[t["seed"]] = row["bpb"]
for a, b in (("DMTN", "ATTN"), ("DMAP", "ATTN"), ("DMAP", "DMTN")):
    d = paired_difference(per_seed.get(a, {}), per_seed.get(b, {}))
    if d["n"] < 2:  # an interval needs two paired seeds
        print(f"{a} − {b}: {d['n']} paired seed(s) committed, no interval")
        continue
    verdict = (
        "cannot decide the sign"
        if d["low"] <= 0 <= d["high"]
        else f"{a} is {'worse' if d['mean'] > 0 else 'better'} than {b}"
    )
    paper = PAPER_TABLE2[a] - PAPER_TABLE2[b]
    print(
        f"{a} − {b}: {d['mean']:+.4f} [{d['low']:+.4f}, {d['high']:+.4f}] over {d['n']} seeds → {verdict}"
        f"  (paper {paper:+.4f})"
    )

# %% [markdown]
# ## 3. Table 3: one model through ATTN → DMTN → ATTN → DMTN
#
# The paper's sequence is not an ablation: one model is projected and adapted four times.  The projection keeps every
# weight and changes the logits only (`workbench.nn.project_attention`; for a head it is
# `workbench.attention.project_head`): ATTN's bond $\tfrac12\langle m_i, m_j\rangle - \tfrac12\langle n_i, n_j\rangle$
# loses its negative sector, and its free link stays.  Each state is measured twice: right after the projection, and
# after the adaptation (3 : 1 : 1 as in the paper).  The committed sweep runs it on the varying-period induction task,
# where an induction circuit forms at this size (notebook 12); `workbench experiment transfer --preset paper` runs the
# same sequence on the byte model of Table 2 (with `--set pretrained=DIR` its $A_0$ is the Table-2 ATTN model).

# %%
induction_transfer = sweep("transfer-induction")
print(transfer_sweep_table(induction_transfer))
transfer_sweep_figure(induction_transfer)
plt.show()
print("paper:", {state: values for state, values in PAPER_TABLE3.items()})

# %% [markdown]
# How to read it.  The paper's claim is a contrast between two columns: across the four states the loss barely moves
# while induction drops at every DMTN state and recovers at every ATTN state.  The next cell measures both, per seed,
# as the change from each state to the next, and right after each projection.


# %%
def swings(result: dict, field: str) -> dict[str, float]:
    """Mean over seeds of field(state) − field(A0) for each state after A0."""
    rows = [t["rows"] for t in result["tasks"] if t.get("rows")]
    states = [r["state"] for r in rows[0]]
    return {s: float(np.mean([r[i][field] - r[0][field] for r in rows])) for i, s in enumerate(states) if i}


for field in ("repeat_loss", "induction_accuracy", "shifted_period_accuracy", "best_induction_score"):
    print(f"{field:>24} − A0:", {s: round(v, 3) for s, v in swings(induction_transfer, field).items()})

# %% [markdown]
# The same sequence on the byte model of Table 2 (A0 is that model, 400 steps; then 240 / 80 / 80 steps).  Here the
# paper's two columns are held-out bits per byte and the byte induction probe on repeated random letters.

# %%
lm_transfer = sweep("transfer-lm")
print(transfer_sweep_table(lm_transfer))
for field in ("bpb", "induction_accuracy", "best_induction_score"):
    print(f"{field:>24} − A0:", {s: round(v, 3) for s, v in swings(lm_transfer, field).items()})

# %% [markdown]
# How to read it.  A 400-step byte model is still early in training: every adaptation lowers its bits per byte
# whatever the geometry, so "the loss barely moves" cannot be read off these states, and the induction probe stays
# at or below a uniform guess among the 26 letters (1/26 ≈ 0.04) in every state — there is no induction circuit to
# lose.  What the byte model does show is the price of a projection on a language model: the bits per byte jump right
# after each switch and are recovered within the next adaptation.

# %% [markdown]
# ## 4. §10: a trained flow transformer moved into DMTN and DMAP
#
# The Swiss SiT of notebook 12, trained with ATTN, is projected into DMTN and sampled with no training, then adapted;
# the adapted DMTN is folded into DMAP (its logits read $W_M = (W_Q + W_K)/\sqrt2$ only: half the query–key weights)
# and adapted twice as long, as in the paper.  The paper measures FID on ImageNet; here the measurements are
# $d_{\mathrm{NN}}$ against the native spacing, the flow-matching loss on a fixed held-out batch, and the transport
# diagnostics.  They compare in direction, not in value.

# %%
sit = sweep("sit-transfer")
print(sweep_table(sit))

# %% [markdown]
# How to read it: per target, the held-out flow-matching loss and $d_{\mathrm{NN}}$ ratio right after the projection
# ("a mess" in the paper) and after adaptation ("clean again"), against the pretrained ATTN model of the same seed.

# %%
sit_rows = [t["rows"] for t in sit["tasks"] if t.get("rows")]
for target in ("DMTN", "DMAP"):
    for field in ("heldout_loss", "d_nn_ratio"):
        base = [next(r[field] for r in rows if r["target"] == "ATTN") for rows in sit_rows]
        moved = {
            state: np.mean(
                [
                    next(r[field] for r in rows if (r["target"], r["state"]) == (target, state)) - b
                    for rows, b in zip(sit_rows, base, strict=True)
                ]
            )
            for state in ("projected", "adapted")
        }
        print(
            f"{target} {field:>12} − ATTN: projected {moved['projected']:+.4f}, adapted {moved['adapted']:+.4f}"
            f"  ({len(sit_rows)} seeds)"
        )

# %% [markdown]
# ## 5. A transfer live, and the exact facts behind it
#
# A quick transfer on the induction task runs in seconds.  Whatever it learns, two facts hold exactly: the DMAP
# states have $\rho_{\mathrm{skew}} = 0$ (the exact link has no skew part, notebook 09), and a projection changes no
# weight, so projecting ATTN → DMTN → ATTN with no training in between gives back the ATTN model.

# %%
quick = TransferConfig.preset("quick", task="induction", target="DMAP", pretrain_steps=300 if SMALL else 1500)
live = run_transfer(quick, progress=False)
for s in live["states"]:
    print(f"{s['state']:>13}  {s['operator']}  repeat loss {s['repeat_loss']:.3f}  ρ_skew {s['rho_skew']:.3f}")
assert all(s["rho_skew"] == 0.0 for s in live["states"] if s["operator"] == "DMAP")
assert live["checks"]["all"]
before, after = live["states"][0], live["states"][1]
print(f"projection cost on the repeat loss: {after['repeat_loss'] - before['repeat_loss']:+.3f} nats")
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot([s["repeat_loss"] for s in live["states"]], "o-")
ax.set_xticks(range(len(live["states"])), [s["state"].replace(":projected", "\nproj.") for s in live["states"]])
ax.set_ylabel("repeat-half loss")
plt.show()

# %% [markdown]
# ## Concept checks
#
# **Check 1.**  A model with a tokenizer reports a held-out loss of 2.0 nats per token, and its tokens cover 4 bytes
# on average.  What is its bits per byte?
#
# (a) $2.0/\ln 2 \approx 2.89$.
# (b) $2.0/(4\ln 2) \approx 0.72$.
# (c) $2.0\cdot4/\ln 2 \approx 11.5$.
# (d) $2.0/4 = 0.5$.
#
# :::{dropdown} Answer
# (b).  The summed loss is $2.0\,N_{\mathrm{tok}}$ nats over $4N_{\mathrm{tok}}$ bytes, so $0.5$ nats per byte, and
# dividing by $\ln 2$ turns nats into bits.  (a) is bits per *token*.  (c) multiplies where it should divide.  (d)
# forgets the change of base from nats to bits.
# :::
#
# **Check 2.**  Over five paired seeds, DMTN − ATTN is +0.038 bpb with a 95 % interval of about [−0.03, +0.10].  What
# can you conclude about the paper's claim that DMTN is within 0.002 of ATTN?
#
# (a) It is refuted: the mean is twenty times larger.
# (b) It is confirmed: the interval contains 0.
# (c) The seeds cannot decide it: the interval contains the paper's +0.002 and differences twenty times larger.
# (d) Nothing, since the models are not converged.
#
# :::{dropdown} Answer
# (c).  An interval that contains 0 does not decide the sign, and this one also contains both sizes in dispute.  (a)
# reads the mean without its uncertainty.  (b) confuses "not detected" with "shown to be absent".  (d) is too strong:
# the runs decide other things, e.g. that DMAP is worse at this scale (interval [+0.21, +0.26]).
# :::
#
# **Check 3.**  When does the paired interval of $b^{\mathrm{DMAP}} - b^{\mathrm{ATTN}}$ have a smaller standard error
# than Welch's interval of the difference of means, over the same seeds?
#
# (a) Always: pairing removes noise.
# (b) Exactly when the two operators' bpb are positively correlated across seeds.
# (c) Only when the two operators have equal variances.
# (d) Never with fewer than ten seeds.
#
# :::{dropdown} Answer
# (b).  $\operatorname{Var}(a - b) = \operatorname{Var}a + \operatorname{Var}b - 2\operatorname{Cov}(a, b)$: the pairing
# gains exactly the covariance, and loses it when the covariance is negative (DMTN − ATTN here).  (a) ignores the
# sign of the covariance.  (c) Equal variances matter for the pooled interval, not for this comparison.  (d) The
# identity holds for any number of seeds.
# :::
#
# **Check 4.**  A trained ATTN model is projected to DMTN and straight back to ATTN, with no training in between.
# What comes out?
#
# (a) The original model, bit for bit: a projection changes how the logits are formed, never a weight.
# (b) A model close to the original, up to rounding.
# (c) A model with the negative sector of the bond removed for good.
# (d) A DMAP model.
#
# :::{dropdown} Answer
# (a).  `project_attention` writes the corner of each attention layer and keeps every weight, so switching back
# restores the ATTN logits exactly (`torch.equal` holds).  (b) understates it: no arithmetic is done on the weights,
# so there is no rounding.  (c) would be true only if the projection rewrote the weights.  (d) DMAP also drops the
# free link; nothing here switches to it.
# :::

# %% [markdown]
# ## Recap
#
# * Bits per byte are exact for a byte model: summed nats over the predicted bytes, divided by $N\ln 2$.  The
#   held-out Shakespeare text costs 8 bits uniform and 4.70 bits under the training text's byte frequencies; the
#   0.87 M-parameter models reach about 3.3 after 400 steps, far from the paper's 0.85: early training.
# * Table 2: over five paired seeds DMTN − ATTN is +0.038 bpb with a 95% interval of about [−0.03, +0.10] — the
#   seeds cannot decide the sign, which is consistent with the paper's +0.002 and with a difference twenty times
#   larger.  DMAP over the same five seeds: 0.24 bpb behind ATTN, interval [+0.21, +0.26] — the paper's direction,
#   at about fifteen times its size.
# * Table 3 on the induction task (three seeds): a projection alone wrecks the model (repeat loss +2.6 to +3.0
#   nats, induction accuracy −0.5) — here the loss moves with induction, not apart from it.  After the short
#   adaptations the loss is back within 0.1–0.15 nats, and what stays behind at the DMTN states is content-based
#   copying: the shifted-period probe is 0.11–0.14 below A0 at M1 and M2 and back at A1, the paper's "induction is
#   more sensitive than the loss", in direction.
# * Table 3 on the byte model (three seeds): each projection costs +0.25 to +0.6 bits per byte at once, and each
#   adaptation wins it back and more (3.34 at A0, 2.94 at M2: the model is still learning); the byte induction probe
#   stays at chance in every state, so the paper's induction column cannot be read at this size.
# * §10: projecting the trained Swiss SiT into DMTN or DMAP without training raises the held-out flow-matching loss by
#   4–6% and $d_{\mathrm{NN}}$ by 1.6–2 native spacings — visibly distorted samples, not the paper's unusable ones —
#   and adaptation repairs both.  DMAP, with half the query–key weights and twice the steps, ends no worse than
#   DMTN: the paper's "DMAP worse" is not reproduced at this scale.
# * Projections keep weights: the DMAP states have $\rho_{\mathrm{skew}} = 0$ exactly, and a round trip
#   ATTN → DMTN → ATTN returns the model unchanged.

# %% [markdown]
# ## Exercises
#
# Use the committed sweeps in `experiments/results/` (read as in the notebook), `held_out_bpb`, `ByteCorpus`,
# `shakespeare_bytes` and `run_transfer` from `workbench.experiments`, and `project_attention` from `workbench.nn`.

# %% [markdown]
# ### Exercise 13.1 (compute)
#
# **Paired or not.**  From the committed sweep (`committed_results("lm-table2") / "sweep.json"`, read as in section 2)
# collect each seed's held-out bpb of ATTN and of DMAP.  Compute (a) the paired Student-$t$ 95% interval of DMAP −
# ATTN, (b) the unpaired Welch interval of the difference of means, (c) a paired bootstrap percentile interval
# (10,000 resamples of the seeds), and the correlation across seeds of DMAP's bpb with ATTN's.  Then do the same for
# DMTN − ATTN.
#
# *What a correct answer shows:* (a) equals the interval in the table of section 2 (to the printed digits) and
# `scipy.stats.ttest_rel(...).confidence_interval()`.  (b) Welch's standard error exceeds the paired one exactly when
# the two operators' bpb are positively correlated across seeds (the pairing cancels what they share), while its
# $t$-quantile, with more degrees of freedom, is smaller.  So pairing is not a gain by itself: here DMAP − ATTN
# (correlation about +0.5) gets a *wider* Welch interval, DMTN − ATTN (correlation about −0.1) a *narrower* one.
# (c) With five seeds the percentile bootstrap is *narrower* than (a): it has no $t$-quantile ($t_{0.975,4} \approx
# 2.78$ against 1.96) and its resampled means spread with the divisor $n$ instead of $n - 1$.  For DMTN − ATTN it
# excludes 0 where (a) does not.  Which of the paper's two differences does each interval decide, and which interval
# would you trust with five seeds?
#
# **Answer in** `answer_13_1`: a dict with keys `"seeds"` (the sorted list of seeds paired), `"bpb"` (a dict mapping
# `"ATTN"`, `"DMTN"`, `"DMAP"` to the 1-D array of held-out bpb in the order of `"seeds"`), `"correlation"` (a dict
# mapping `"DMTN"` and `"DMAP"` to the Pearson correlation across seeds of that operator's bpb with ATTN's), and
# `"paired"`, `"welch"`, `"bootstrap"` (each a dict mapping `"DMTN"` and `"DMAP"` to the 95 % interval
# `(low, high)` of that operator's bpb minus ATTN's, by method (a), (b), (c)).

# %%
# your code here

# %% [markdown]
# ### Exercise 13.2 (derive)
#
# **Bits per byte when tokens are not bytes.**  A model with a tokenizer reports a mean loss $\bar\ell$ in nats per
# token over $N_{\mathrm{tok}}$ tokens covering $N_{\mathrm{bytes}}$ bytes.  Show that
# $\mathrm{bpb} = \bar\ell\, N_{\mathrm{tok}} / (N_{\mathrm{bytes}} \ln 2)$, that a model predicting every byte
# with the fixed distribution $q$ has $\mathrm{bpb} = -\frac1N\sum_t \log_2 q(x_t)$, and that this is at least the
# empirical entropy of the bytes it predicts (Gibbs' inequality).  Check the second statement numerically with
# `held_out_bpb` on a model whose logits are $\log q$ everywhere, on the first 65,536 held-out bytes.
#
# *What a correct answer shows:* `held_out_bpb` of the constant model equals the numpy value of
# $-\frac1N\sum_t\log_2 q(x_t)$ over exactly the predicted bytes to $10^{-12}$, and lies above their empirical
# entropy; the unigram baseline of section 1 is the same number computed from byte counts.
#
# **Answer in** `answer_13_2`: a dict with keys `"q"` (the 256 add-one byte frequencies of the training text),
# `"predicted"` (the 1-D array of the held-out bytes that `held_out_bpb` scores, in order), `"bpb"` (what
# `held_out_bpb` returns for the constant model, a float), `"direct"` (your numpy value of
# $-\frac1N\sum_t\log_2 q(x_t)$ over those bytes) and `"entropy"` (the empirical entropy of those bytes, in bits).

# %%
# your code here

# %% [markdown]
# ### Exercise 13.3 (compute)
#
# **What a projection costs, seed by seed.**  From the committed §10 sweep (`sit-transfer`, read as in section 4),
# compute for every complete seed the jump of the held-out flow-matching loss right after each projection, measured
# from the model that was projected: for DMTN, `DMTN:projected` minus the pretrained ATTN model; for DMAP,
# `DMAP:projected` minus the adapted DMTN model (DMAP is folded from it).  Compute also what is left after adaptation,
# `adapted` minus the pretrained ATTN model, for each target, and the paired Student-$t$ 95 % interval of the jumps'
# difference DMAP − DMTN over seeds.
#
# *What a correct answer shows:* every projection costs 2–11 % of the loss (0.03–0.16 nats), and after adaptation
# both targets end within 0.003 nats of the pretrained ATTN model (slightly below it).  Neither jump is the larger in
# every seed: DMAP's is larger in seeds 0 and 2, DMTN's is more than twice DMAP's in seed 1, and the interval of the
# difference contains 0.  "Dropping the free link as well costs more" is not what three seeds of this run show; which
# readings of §10 (the loss, $d_{\mathrm{NN}}$) would you need before claiming an order?
#
# **Answer in** `answer_13_3`: a dict with keys `"seeds"` (the sorted list of complete seeds), `"jump"` (a dict
# mapping `"DMTN"` and `"DMAP"` to the 1-D array of jumps in the order of `"seeds"`), `"left"` (the same for
# adapted minus pretrained ATTN) and `"interval"` (the tuple `(low, high)` of the paired 95 % interval of
# `jump["DMAP"] − jump["DMTN"]`).

# %%
# your code here

# %% [markdown]
# ### Exercise 13.4 (explore)
#
# **A projection live.**  Train the quick induction transfer (`TransferConfig.preset("quick", task="induction",
# pretrain_steps=...)`) for target DMTN and for target DMAP, for a few seeds and two pretraining budgets.  Record the
# jump of the repeat-half loss right after the first projection ($M_1$:projected − $A_0$) and what is left after the
# adaptation ($M_1 - A_0$).  Then check, with `project_attention` on a trained model, that ATTN → DMTN → ATTN with no
# training in between returns outputs equal to the original, bit for bit.
#
# *What a correct answer shows:* the round trip is exact (the projection changes logits, never weights).  After 40
# or 120 pretraining steps the jumps are at most a few hundredths of a nat, and nearly equal for the two targets: a
# model that has learned little has little to lose, so these runs cannot order the targets.  The jump grows with the
# pretraining budget; try 400 steps.  Does an order of the two targets appear then, does the quick adaptation recover
# the jump, and how far is it from the 3 nats that the 4,000-step models of the committed induction sweep (section 3)
# lose?

# %%
# your code here
