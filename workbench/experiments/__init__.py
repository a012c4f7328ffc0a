"""Reproducible experiments of Attention Geometry, at workbench scale (torch; CPU or GPU).

swiss-sit   -- Attention Geometry §9, Table 1: a one-layer flow transformer on the Swiss roll under each of
               the four operators and both block orders, read with the attention diagnostics
sit-transfer -- Attention Geometry §10: that flow transformer trained with ATTN, moved into DMTN and DMAP with
               its weights kept (no training), then adapted; every state sampled and read
lm          -- Attention Geometry §11, Table 2: byte-level causal language models on Shakespeare trained from
               scratch under ATTN, DMTN or DMAP scores; held-out bits per byte and the induction probe
transfer    -- Attention Geometry §11, Table 3: one model carried ATTN → DMTN → ATTN → DMTN, adapted 3 : 1 : 1,
               measured right after each projection and after each adaptation (language model or induction task)
induction   -- Attention Geometry §11: two-layer transformers on repeated random tokens under ATTN, DMTN
               and DMAP scores; the induction phase transition and the heads' entropy collapse
givens-mixer -- Lie-Exponential Roadmap: a bidirectional byte transformer on masked Shakespeare whose token mixing is a
               GivensFlowMixer (no LayerNorm, or behind one), softmax attention or a learned n×n matrix; masked bpb,
               divergence, spikes, gradient norms over a learning-rate × warm-up grid
log-lens    -- Lie-Exponential Roadmap: log-lens dashboards; commutator maps of S_h = log(I + W_OV^h) beside the
               heads' circuits on the induction task, and their change at the induction transition
long-context -- Lie-Exponential Roadmap: banded exp-Markov attention (t learned per layer) against fused softmax
               on byte LMs at contexts 256–4096: held-out bpb, tokens/s ratios and crossover, saved activations
magnus-fusion -- Lie-Exponential Roadmap, MagnusBlock: a byte-level LM whose blocks carry r linear generator
               sublayers e^{A_i}, trained with and without a commutator budget; each block's sublayers fused into
               one matmul (BCH orders 1–4, the exact product); Δbpb, logits error, wall clock and Amdahl bound
spd-certified -- Lie-Exponential Roadmap: SPD-MLPs e^{S} with Lipschitz caps on scikit-learn's digits; certified
               ℓ2 radius against accuracy beside a dense MLP certified post hoc, checked by attacks
bch-fusion  -- Lie-Exponential Roadmap: fuse a product of exponentials into one exponential by BCH/Magnus;
               error against commutator norms, a `safe` flag, latency of a fused residual stack
               (numpy; run by ``workbench bench bch-fusion``)
diagnose --corpus, study connection-walk
            -- a real model's heads read as operators on every window of a corpus, streamed and resumable;
               Connection Laplacian's layerwise study with its null model and context-length sweep (numpy)

Each experiment has a frozen config with ``preset("quick")`` (minutes on two CPU cores; CI) and
``preset("paper")`` (the full scan), a ``run_*`` function returning a JSON-able record (and writing a run
directory that records, as it goes, which conditions are done, so an interrupted run can be resumed), and a
Markdown table beside the paper's numbers.  ``workbench experiment NAME`` drives them
(with one torch thread by default: these models are small, and two threads on a two-core machine that is
doing anything else run 5–15× slower than one).  Names load on first use (PEP 562): the BCH fusion
experiment, the configs, the transition criterion, the tables and the run records need only numpy; the
models and runners need torch.

Layout
------
One subpackage per experiment (``workbench.experiments.<name>``, the command's name with ``_``), each holding
what the experiment is made of: ``_config`` (its frozen settings and presets), ``_model`` (the model, where it
has its own), ``_run`` (train, measure, write the run directory) and ``_report`` (the table beside the paper's
numbers, the flat rows a sweep gathers, figures).  What they share is in ``common``: :class:`ExperimentConfig`,
run directories and :class:`RunLog`, the readers of a run's files, streamed corpus runs, the byte corpus, and the
one training loop (``common.train``: AdamW with warm-up and cosine decay, gradient clipping, a logged curve,
held-out bits per byte, a guard against non-finite steps) that every trained model runs.  Above them,
``_registry`` names the experiments for ``workbench experiment`` and the sweep runs them over grids.  To add an
experiment: a subpackage with those modules, an entry in the registry, and its unit in the table of
``tests/test_architecture.py``.  This index re-exports the names a user calls; each subpackage exports its own.

Running experiments
-------------------
EXPERIMENTS             -- the experiments ``workbench experiment NAME`` runs, by name
Experiment              -- a registered experiment: config class, runner, table formatter, selection axes
ExperimentConfig        -- base of the frozen configs: ``preset(name)``, ``preset_name()``, field checks
committed_results       -- the committed results folder experiments/results (or one run in it), from anywhere
run_directory           -- create the run directory (given, or experiments/runs/NAME-PRESET-TIMESTAMP)
RunLog                  -- a run's run.json: status, conditions done, config, versions; keeps finished conditions
RUN_STATUSES            -- the states of a run: running, interrupted, failed, complete
resumable_run           -- the record of the unfinished run in a directory (refuses complete and non-run dirs)
atomic_write            -- a temporary path that replaces the target file when the block ends cleanly
save_json               -- write a JSON-able record (indented, UTF-8) to a file, atomically
save_text               -- write a text file, atomically
jsonable                -- a value with numpy scalars/arrays, dataclasses, tuples, paths as JSON types
restore_floats          -- a record read back from JSON with "nan"/"inf"/"-inf" as floats again
progress                -- a tqdm progress bar (or a no-op bar with the same interface)
run_sweep               -- `workbench sweep`: an experiment over a grid of settings × seeds, one run directory per
                           task on Dask distributed (LocalCluster or a scheduler), resumable; mean ± sd per cell
sweep_table             -- the Markdown table of a sweep, one row per cell and condition

Swiss SiT (Attention Geometry §9, Table 1)
------------------------------------------
SwissSiTConfig          -- settings of the Swiss SiT scan (presets quick, paper)
SWISS_SIT_ORDERS        -- the block orders, ffn-mhsa and mhsa-ffn
swiss_roll_points       -- n points of the noisy 2-D Swiss roll, standardised
SwissSiT                -- one-block flow transformer on sets of 2-D points, one operator's attention
run_swiss_sit           -- train, sample and diagnose the model for each (operator, order) condition
swiss_sit_table         -- Markdown table of a run in the layout of the paper's Table 1
swiss_sit_rows          -- one flat row per (operator, order) condition (for a sweep)
PAPER_TABLE1             -- Attention Geometry's Table 1, keyed by (operator, order)

SiT transfer (Attention Geometry §10)
-------------------------------------
SitTransferConfig       -- settings of the transfer: the Swiss SiT fields, block order, adaptation budgets
SIT_TRANSFER_TARGETS    -- the operators a pretrained ATTN model is moved into, DMTN then DMAP
project_model           -- a copy of a model with every head read at one corner of the family, weights kept
run_sit_transfer        -- pretrain ATTN, project into DMTN and DMAP (no training), adapt; read every state
sit_transfer_table      -- Markdown table of the states beside the paper's §10 FIDs (directions, not values)
PAPER_SECTION10         -- Attention Geometry's §10 FIDs and readings, keyed by (target, state)

Induction heads (Attention Geometry §11)
----------------------------------------
InductionConfig         -- settings of the induction experiment (presets quick, paper)
INDUCTION_OPERATORS     -- the score geometries compared, ATTN, DMTN, DMAP
ARCHITECTURES           -- the block types, attn-only and mlp
variable_period_tokens  -- sequences ending in a random segment repeated twice, of random length
InductionTransformer    -- small causal transformer whose heads use one operator's scores
detect_phase_transition -- the plateau-then-drop criterion on a repeated-half loss curve
PhaseTransition         -- what detect_phase_transition found (step, window, head, reason)
shifted_period_accuracy -- top-1 accuracy on periods other than the training one (the positional-shortcut probe)
run_induction           -- train one model per (operator, architecture) with matched budgets and read them
induction_table         -- Markdown table of the runs beside the paper's §11 accuracies
induction_rows          -- one flat row per (operator, architecture) run (for a sweep)
PAPER_INDUCTION          -- Attention Geometry's §11 depth-32 sequence (stage, operator, induction accuracy)

Language models from scratch and the sequential transfer (Attention Geometry §11, Tables 2 and 3)
-------------------------------------------------------------------------------------------------
ByteCorpus              -- training and held-out text as bytes, split by work
shakespeare_bytes       -- the Shakespeare corpus as bytes, every k-th work held out
bits_per_byte           -- summed nats over predicted bytes → bits per byte
LanguageModelConfig     -- settings of one byte-level causal LM under one operator (presets quick, paper, gpu)
run_language_model      -- train one LM and score it: held-out bpb, the byte induction probe, ρ_skew
held_out_bpb            -- bits per byte on the first held-out bytes, each predicted once
byte_induction_probe    -- repeated random letters: accuracy on the repeat, each head's induction score
language_model_table    -- Markdown table of one run beside the paper's Table 2
language_model_rows     -- one flat row per trained model (for a sweep)
language_model_sweep_table -- Table 2 over seeds: bpb mean ± sd, paired differences to ATTN with 95% intervals
language_model_sweep_figure -- Table 2 as a figure: bpb per seed and operator, the mean training curves
paired_difference       -- mean and Student-t interval of paired differences over seeds
PAPER_TABLE2            -- Attention Geometry's Table 2 (held-out bpb per operator)
TransferConfig          -- settings of one ATTN → DMTN → ATTN → DMTN transfer (task shakespeare or induction)
TRANSFER_TASKS          -- the tasks a transfer runs on
run_transfer            -- carry one model through the four states, measured after each projection and adaptation
transfer_table          -- Markdown table of one transfer's states beside the paper's Table 3
transfer_rows           -- one flat row per state (for a sweep)
transfer_sweep_table    -- Table 3 over seeds: each state's measurements as mean ± sd
transfer_sweep_figure   -- Table 3 as a figure: each measurement across the states, a line per seed
PAPER_TABLE3            -- Attention Geometry's Table 3 (operator, bpb, induction accuracy per state)

A corpus at a time (numpy)
--------------------------
run_corpus              -- measure every window of a corpus, one strict-JSON line per window, resumable
CorpusRun               -- what run_corpus did: directory, windows recorded and measured, the layer summary
read_records            -- the complete records of a run's records.jsonl (a cut-off last line dropped)
aggregate_layers        -- per layer, mean ± sd (and count) over windows of every numeric field
layers_table            -- the Markdown table of aggregate_layers
strict_json             -- a record with NaN/±inf as null, numpy as Python: what records.jsonl holds
diagnose_corpus         -- `workbench diagnose --corpus`: diagnose_ids on every window, circuits once
study_connection_walk   -- `workbench study connection-walk`: layerwise d_A, ‖A_eff‖_F, δ_orth with a null model,
                           the context-length sweep, Figure-2 panels, several models side by side
connection_walk_table   -- the Markdown tables of a study
study_head_subspaces    -- `workbench study head-subspaces`: heads as Grassmannian points (Q/K/V/O/QK distances
                           against a random null) and Spearman ρ with attention-pattern distance over a corpus
study_induction_subspaces -- the same on trained induction models, with the K-composition of the circuit
head_subspaces_table    -- the Markdown tables of both

BCH/Magnus fusion (Lie-Exponential Roadmap)
-------------------------------------------
fuse                    -- Ω_N = log(e^{A_1}⋯e^{A_k}) truncated at degree N (multi-factor BCH)
product_of_exponentials -- the exact product e^{A_1}⋯e^{A_k}, first factor leftmost
commutator_summary      -- largest and mean pairwise commutator norm ‖[A_i, A_j]‖_F
fusion_table            -- BCH fusion error per truncation order against the commutator norms, with a safe flag
fusion_slopes           -- fitted log-log slope of each order's error against the scale (expect N + 1)
ResidualStack           -- L linear residual layers sampling A(t) = Σ_j t^j X_j, with their exact flows
residual_stack          -- a random ResidualStack with unit-norm coefficients
FUSION_METHODS          -- the fusion routes of a stack, bch and magnus
magnus_stack_table      -- error of each fused stack against the exact stack and the continuous flow

GivensFlowMixer as a token mixer (Lie-Exponential Roadmap)
-----------------------------------------------------------
GivensMixerConfig       -- settings (presets quick, paper): conditions, lrs, warmups, mixer_init, mask_fraction, ...
GIVENS_MIXER_CONDITIONS -- the branches: givens, givens-ln, attention, linear
MIXER_INITS             -- how the Givens/linear mixers start: identity, uniform
MASK_ID                 -- the input id of a masked byte (256)
MaskedBytes             -- windows of bytes with their masks (inputs, targets, mask)
mask_bytes              -- mask round(f n) positions of each window with MASK_ID
training_stream         -- every training batch of a run, drawn once from the seed (shared by all conditions)
masked_eval_set         -- the held-out windows and masks every condition is scored on
masked_bpb              -- bits per masked byte
count_spikes            -- steps whose loss exceeds c × the median of the previous k
MaskedByteTransformer   -- the model, with one of the four token-mixing branches
run_givens_mixer        -- train every (condition, lr, warm-up), score and check the runs
givens_mixer_table      -- Markdown: every run (best lr in bold) and the per-condition stability summary
givens_mixer_rows       -- one flat row per (condition, lr, warm-up) (for a sweep)
givens_mixer_figures    -- bpb against lr per condition; curves at the largest lr

Log-lens dashboards (Lie-Exponential Roadmap)
---------------------------------------------
LogLensConfig           -- settings: varying-period induction task, two-layer models, snapshot schedule
LOG_LENS_OPERATORS      -- the score geometries read, ATTN and DMTN (logits bilinear in the tokens)
run_log_lens            -- train with snapshots; commutator maps of the heads beside their known circuits
head_circuits           -- every head's LayerNorm-folded W_OV and W_QK
composition_scores      -- K-, Q- and V-composition of every (writer, reader) head pair
rank_correlation        -- Spearman's ρ (ranks with ties averaged, then Pearson)
alignment_test          -- ρ between two head-pair matrices, p-value from relabelling the heads
change_statistics       -- steepest change, peak, and the share of a curve's change inside a window
log_lens_table          -- Markdown table: the circuit pair, ρ(commutator, composition), ranks, spikes
log_lens_rows           -- one flat row per (operator, architecture) model, for a sweep
save_dashboards         -- the dashboard figure of every model of a run

Long-context exp-Markov attention (Lie-Exponential Roadmap)
-----------------------------------------------------------
LongContextConfig       -- settings of the long-context comparison (presets quick, paper, gpu)
LONG_CONTEXT_MIXERS     -- the mixers compared, softmax and exp-markov
LongContextLM           -- pre-LN byte transformer whose mixer is softmax or banded exp-Markov attention
CausalSoftmaxAttention  -- causal softmax attention by the fused kernel (explicit n×n form on request)
run_long_context        -- train both mixers at each context; time, weigh and check their mixers
saved_tensor_bytes      -- bytes autograd saves for backward during a call, each storage once
crossover_context       -- the context where a banded/dense time ratio drops below 1 for good (log-log)
long_context_table      -- Markdown table per context: bpb, speed ratios, saved MiB, learned t; crossovers
long_context_rows       -- one flat row per (context, mixer) and per crossover (for a sweep)
long_context_figure     -- time vs context (log-log), bpb vs context, saved MiB vs context

MagnusBlock fusion of a trained model (Lie-Exponential Roadmap)
---------------------------------------------------------------
MagnusFusionConfig      -- settings: model, budgets τ (None = no budget), orders, timing sizes (presets quick, paper)
run_magnus_fusion       -- train one model per budget, fuse each block's sublayers at every order, score and time them
GeneratorLM             -- byte-level causal LM: attention, r generator sublayers x ↦ x e^{A_i}, GELU MLP a block
commutator_sum          -- C = Σ_{i<j} ‖[A_i, A_j]‖_F of a stack of generators (differentiable)
commutator_penalty      -- the budget's hinge penalty μ Σ_b max(0, C_b − τ)
budget_schedule         -- the annealed budget τ_t = τ κ^{max(0, 1 − t/(aS))}
fused_matrix            -- one matrix for e^{A_1}⋯e^{A_r}: exp(Ω_N), the exact product, or I
fusion_wall_clock       -- wall clock unfused / fused / skipped: paired speed-ups and the Amdahl bound
decode_flop_share       -- multiply-adds of a decoding step: the share fusion removes at a cache length
magnus_fusion_table     -- Markdown: budget × fusion quality and speed-up; per-budget commutators; timing
magnus_fusion_rows      -- one flat row per budget × fusion (for a sweep)
magnus_fusion_figure    -- |Δbpb| and logits error against the order per budget (log y); the speed-ups

SPD-MLPs with Lipschitz caps (Lie-Exponential Roadmap)
------------------------------------------------------
SPDCertifiedConfig      -- settings: SPD caps, ε grid, attack budget, optional Lipschitz-margin training
digits_split            -- scikit-learn's digits, fixed stratified split (1,347 / 450), features / 16
CertifiableMLP          -- two ReLU layers (SPD e^{S} or dense) and a read-out, with certified layer norms
certified_radius        -- min_j (f_y − f_j) / (‖v_y − v_j‖ Λ): the ℓ2 radius the Lipschitz bound certifies
l2_attack               -- targeted ℓ2 PGD with restarts: which predictions a perturbation in the ball changes
run_spd_certified       -- train capped SPD-MLPs and a dense baseline; certified vs attacked accuracy per ε
spd_certified_table     -- Markdown table of a run (accuracy, radii, bounds, certified/attacked per ε)
spd_certified_rows      -- one flat row per model (for a sweep)
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.bch_fusion": (
        "commutator_summary",
        "fuse",
        "FUSION_METHODS",
        "fusion_slopes",
        "fusion_table",
        "magnus_stack_table",
        "product_of_exponentials",
        "residual_stack",
        "ResidualStack",
    ),
    "workbench.experiments.common": (
        "aggregate_layers",
        "atomic_write",
        "bits_per_byte",
        "ByteCorpus",
        "committed_results",
        "CorpusRun",
        "ExperimentConfig",
        "held_out_bpb",
        "jsonable",
        "layers_table",
        "progress",
        "read_records",
        "restore_floats",
        "resumable_run",
        "run_corpus",
        "run_directory",
        "RUN_STATUSES",
        "RunLog",
        "save_json",
        "save_text",
        "shakespeare_bytes",
        "strict_json",
    ),
    "workbench.experiments.connection_walk": (
        "connection_walk_table",
        "study_connection_walk",
    ),
    "workbench.experiments.corpus_diagnosis": ("diagnose_corpus",),
    "workbench.experiments.givens_mixer": (
        "count_spikes",
        "GIVENS_MIXER_CONDITIONS",
        "givens_mixer_figures",
        "givens_mixer_rows",
        "givens_mixer_table",
        "GivensMixerConfig",
        "mask_bytes",
        "MASK_ID",
        "masked_bpb",
        "masked_eval_set",
        "MaskedBytes",
        "MaskedByteTransformer",
        "MIXER_INITS",
        "run_givens_mixer",
        "training_stream",
    ),
    "workbench.experiments.head_subspaces": (
        "head_subspaces_table",
        "study_head_subspaces",
        "study_induction_subspaces",
    ),
    "workbench.experiments.induction": (
        "ARCHITECTURES",
        "detect_phase_transition",
        "INDUCTION_OPERATORS",
        "induction_rows",
        "induction_table",
        "InductionConfig",
        "InductionTransformer",
        "PAPER_INDUCTION",
        "PhaseTransition",
        "run_induction",
        "shifted_period_accuracy",
        "variable_period_tokens",
    ),
    "workbench.experiments.lm": (
        "byte_induction_probe",
        "language_model_rows",
        "language_model_sweep_figure",
        "language_model_sweep_table",
        "language_model_table",
        "LanguageModelConfig",
        "paired_difference",
        "PAPER_TABLE2",
        "run_language_model",
    ),
    "workbench.experiments.log_lens": (
        "alignment_test",
        "change_statistics",
        "composition_scores",
        "head_circuits",
        "LOG_LENS_OPERATORS",
        "log_lens_rows",
        "log_lens_table",
        "LogLensConfig",
        "rank_correlation",
        "run_log_lens",
        "save_dashboards",
    ),
    "workbench.experiments.long_context": (
        "CausalSoftmaxAttention",
        "crossover_context",
        "long_context_figure",
        "LONG_CONTEXT_MIXERS",
        "long_context_rows",
        "long_context_table",
        "LongContextConfig",
        "LongContextLM",
        "run_long_context",
        "saved_tensor_bytes",
    ),
    "workbench.experiments.magnus_fusion": (
        "budget_schedule",
        "commutator_penalty",
        "commutator_sum",
        "decode_flop_share",
        "fused_matrix",
        "fusion_wall_clock",
        "GeneratorLM",
        "magnus_fusion_figure",
        "magnus_fusion_rows",
        "magnus_fusion_table",
        "MagnusFusionConfig",
        "run_magnus_fusion",
    ),
    "workbench.experiments.sit_transfer": (
        "PAPER_SECTION10",
        "project_model",
        "run_sit_transfer",
        "sit_transfer_table",
        "SIT_TRANSFER_TARGETS",
        "SitTransferConfig",
    ),
    "workbench.experiments.spd_certified": (
        "CertifiableMLP",
        "certified_radius",
        "digits_split",
        "l2_attack",
        "run_spd_certified",
        "spd_certified_rows",
        "spd_certified_table",
        "SPDCertifiedConfig",
    ),
    "workbench.experiments.swiss_sit": (
        "PAPER_TABLE1",
        "run_swiss_sit",
        "swiss_roll_points",
        "SWISS_SIT_ORDERS",
        "swiss_sit_rows",
        "swiss_sit_table",
        "SwissSiT",
        "SwissSiTConfig",
    ),
    "workbench.experiments.transfer": (
        "PAPER_TABLE3",
        "run_transfer",
        "transfer_rows",
        "transfer_sweep_figure",
        "transfer_sweep_table",
        "transfer_table",
        "TRANSFER_TASKS",
        "TransferConfig",
    ),
    "workbench.experiments._registry": (
        "Experiment",
        "EXPERIMENTS",
    ),
    "workbench.experiments._sweep": (
        "run_sweep",
        "sweep_table",
    ),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
