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
# # 12 — The seed's experiments at workbench scale
#
# The paper's evidence is experimental (Attention Geometry §9, §11).  Two of its experiments are rerun
# here, small enough for a laptop CPU:
#
# 1. **Swiss SiT (Table 1).**  A one-layer flow transformer learns the Swiss roll under each of the four
#    operators (DMAP, DMTN, ATAP, ATTN) and both block orders.  The claim is that all eight generate equally
#    well while their attention transports differently: reversible for the exact-link operators, not for
#    the others.
# 2. **Induction (§11).**  Two-layer transformers on repeated random tokens under ATTN, DMTN and DMAP scores:
#    the loss plateau, the sharp drop, and the heads' entropy collapse.
#
# The notebook reads the paper-preset runs committed in `experiments/results/` (made by
# `workbench experiment NAME --preset paper`, about 9 minutes each on two cores).  It then reruns a few
# conditions live at the quick preset, to show that the structural facts hold for any weights.  The seed's
# protocols are lost (attention-geometry-math §A.11), so every choice is a reconstruction **[RECON]**.
# Compare orderings and ratios with the seed's numbers, not raw values.

# %%
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

from workbench.experiments import (
    SEED_TABLE1,
    InductionConfig,
    SwissSiTConfig,
    induction_table,
    run_induction,
    run_swiss_sit,
    swiss_sit_table,
)

torch.set_num_threads(1)  # small models: one thread is the fastest, and robust on a shared machine
RESULTS = Path("..") / "experiments" / "results"
sit = json.loads((RESULTS / "swiss-sit-paper" / "results.json").read_text())
print(swiss_sit_table(sit))

# %% [markdown]
# ## 1. Same fidelity, different transport
#
# The diagnostics are those of `workbench.attention` (notebook 08).  $d_{\mathrm{NN}}$ is the mean distance
# from a generated point to the nearest training point, divided here by the training set's own nearest-neighbour
# spacing.  $\varepsilon_{\mathrm{rev}} = \lVert\operatorname{diag}(\pi)\mathsf P - \mathsf P^\top\operatorname{diag}(\pi)\rVert_F /
# \lVert\operatorname{diag}(\pi)\mathsf P\rVert_F \in [0, \sqrt2]$ is the detailed-balance residual of the learned attention.

# %%
labels = [f"{r['operator']}\n{r['order']}" for r in sit["rows"]]
fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
axes[0].bar(labels, [r["d_nn_ratio"] for r in sit["rows"]], color="tab:blue")
axes[0].axhspan(*sit["fidelity_band"], color="tab:green", alpha=0.1, label="stated fidelity band")
axes[0].set_ylabel("d_NN / native spacing")
axes[0].legend(fontsize=8)
axes[1].bar(labels, [r["eps_rev"] for r in sit["rows"]], color="tab:red", label="ours (mean)")
axes[1].scatter(
    labels,
    [SEED_TABLE1[(r["operator"], r["order"])]["eps_rev"] for r in sit["rows"]],
    color="k",
    zorder=3,
    label="seed Table 1",
)
axes[1].axhline(np.sqrt(2), color="grey", ls=":", label="√2 (no reciprocal edges)")
axes[1].set_ylabel("ε_rev")
axes[1].legend(fontsize=8)
for ax in axes:
    ax.tick_params(axis="x", labelsize=7)
plt.tight_layout()
plt.show()
ratios = np.array([r["d_nn_ratio"] for r in sit["rows"]])
reversible = [r["eps_rev"] for r in sit["rows"] if r["operator"] in ("DMAP", "ATAP")]
circulating = [r["eps_rev"] for r in sit["rows"] if r["operator"] in ("DMTN", "ATTN")]
print(f"fidelity: d_NN/native in [{ratios.min():.2f}, {ratios.max():.2f}] for all eight conditions")
print(f"transport: ε_rev ≤ {max(reversible):.1e} (DMAP, ATAP) against ≥ {min(circulating):.2f} (DMTN, ATTN)")

# %% [markdown]
# The figure of the seed's Fig. 2: DMTN with FFN→MHSA, from noise ($\tau = 1$) to data ($\tau = 0$).

# %%
image = plt.imread(RESULTS / "swiss-sit-paper" / "samples.png")
plt.figure(figsize=(14, 2.8))
plt.imshow(image)
plt.axis("off")
plt.show()

# %% [markdown]
# ## 2. The structural facts hold for any weights
#
# The table's zeros are not luck.  The exact-link operators DMAP and ATAP are Doob transforms of symmetric
# kernels, so they are reversible and have no bilinear skew for *every* set of weights (notebook 09).  A
# quick-preset run trains for seconds, far from convergence, and the facts already hold:
# $\rho_{\mathrm{skew}} = 0$ exactly and $\varepsilon_{\mathrm{rev}}$ at rounding level.

# %%
live = run_swiss_sit(
    SwissSiTConfig.preset("quick", steps=40), operators=("DMAP", "ATAP", "ATTN"), orders=("mhsa-ffn",), progress=False
)
for row in live["rows"]:
    print(
        f"{row['operator']}: ε_rev = {row['eps_rev']:.2e}, ρ_skew = {row['rho_skew']:.3g}, e^H̄ = {row['eff_neighbours']:.1f}"
    )
assert all(live["checks"][k]["passed"] for k in ("rho_skew_zero_dmap_atap", "eps_rev_zero_dmap_atap"))

# %% [markdown]
# ## 3. Induction: a transition, and what it is made of
#
# Every run plateaus near $\log V$, then its repeated-half loss drops sharply.  `detect_phase_transition` marks
# the drop, and across it one head's attention entropy collapses.  The *shifted-period probe* asks whether
# that head matches content (induction) or only position.  It scores the final model on repeats of a different
# period, where "look back $T - 1$ tokens" is at chance $1/V$.

# %%
ind = json.loads((RESULTS / "induction-paper" / "results.json").read_text())
print(induction_table(ind))
fig, axes = plt.subplots(1, 2, figsize=(12, 3.6))
for run in ind["runs"]:
    if run["architecture"] != "attn-only":
        continue
    curves = run["curves"]
    layer, head = run["transition"]["head"]
    axes[0].plot(curves["steps"], curves["repeat_loss"], label=run["operator"])
    axes[1].plot(
        curves["steps"], np.array(curves["entropy"])[:, layer, head], label=f"{run['operator']} L{layer}H{head}"
    )
axes[0].axhline(np.log(ind["config"]["vocab_size"]), color="grey", ls=":", label="log V")
axes[0].set_ylabel("repeated-half loss (nats)")
axes[1].set_ylabel("entropy of the transition head (nats)")
for ax in axes:
    ax.set_xlabel("step")
    ax.set_xlim(0, 600)
    ax.legend(fontsize=8)
plt.tight_layout()
plt.show()
probe = [run["shifted_period_accuracy"] for run in ind["runs"]]
print(f"shifted-period accuracy: {min(probe):.3f}–{max(probe):.3f}; chance 1/V = {1 / ind['config']['vocab_size']:.3f}")

# %% [markdown]
# At this scale every transition is real and sharp, under all three operators, and every model reaches
# period-$T$ accuracy of about 1.  The probe, however, sits at chance: the circuits that formed copy from a fixed
# offset, which the task's fixed period allows.  DMAP's best head scores lower (about 0.42 against 0.7–0.9),
# as expected of an operator whose diagonal is always the largest logit.  The seed's lower DMTN induction
# accuracy (0.57 and 0.47 against 0.81 and 0.83, at 1.9B parameters) is not seen here.
#
# Training on **varying periods** (`--set min_period=8`, 10,000 steps) removes the shortcut.  The runs in
# `experiments/results/induction-varying-period/` then copy by content under all three operators: the probe is far
# above chance.  DMTN forms the cleanest induction head at its transition.  That is one seed per operator, so it
# is a measurement, not a ranking.

# %%
for op in ("ATTN", "DMTN", "DMAP"):
    varying = json.loads((RESULTS / "induction-varying-period" / op / "results.json").read_text())["runs"][0]
    head = varying["best_head"]
    print(
        f"{op}: period-T accuracy {varying['induction_accuracy']:.3f}, shifted-period {varying['shifted_period_accuracy']:.3f}, "
        f"transition at step {varying['transition']['step']:.0f}, best head L{head['layer']}H{head['head']} "
        f"induction score {head['induction_score']:.2f}"
    )

# %% [markdown]
# A live quick run shows the same thing in seconds: period-$T$ accuracy climbs while the probe stays near chance.

# %%
quick = run_induction(
    InductionConfig.preset("quick", steps=200), operators=("ATTN",), architectures=("attn-only",), progress=False
)
run = quick["runs"][0]
print(
    f"quick ATTN: period-T accuracy {run['induction_accuracy']:.2f}, shifted-period {run['shifted_period_accuracy']:.2f}"
)
assert quick["checks"]["all"]

# %% [markdown]
# ## Recap
#
# * All eight Swiss SiT conditions generate within 1.35–1.46× the native spacing.  Their transports differ:
#   $\varepsilon_{\mathrm{rev}}$ and $\rho_{\mathrm{skew}}$ are zero to rounding for DMAP/ATAP, and 0.14–0.64
#   (up to $\sqrt2$ for single operators) for DMTN/ATTN.  This is the seed's null-task claim, reproduced.
# * The induction phase transition (plateau, sharp drop, entropy collapse) appears under ATTN, DMTN and DMAP
#   alike.  A probe shows that with a fixed period the circuit is positional.  With varying periods and 5× the
#   budget, all three copy by content (probe 0.84–0.99), and DMTN forms the cleanest induction head.
