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
=====
softmax_rows                 -- row softmax on a boolean mask, stable; masked entries exactly 0
attention_mask               -- causal and/or valid-token mask (True = admissible key)
AttentionHead                -- one head: queries, keys, scores, logits, Markov operator, forward P(XW_V + b_V)W_O
MultiHeadAttention           -- stacked heads: from_fused, from_heads, head(h), attention (H, n, n), M_h = W_V^h W_O^h
random_head                  -- a Gaussian head at standard initialisation (σ = 1/√D)
random_multihead             -- Gaussian multi-head attention at standard initialisation (σ = 1/√D)

The exact bond/link split (Attention Geometry §7)
=================================================
bond_link_split              -- M = M_S + M_A, symmetric bond and antisymmetric link of a bilinear form
ScoreSplit                   -- bond 𝒮, link 𝒜, site potential g = diag 𝒮 and squared distance d² of a score
token_split                  -- the ScoreSplit of the scores q_i·k_j of queries and keys
score_split                  -- the ScoreSplit of a head (W_Q, W_K, biases) on a context X
distance_form_logits         -- βW_ij = -(β/2)d²_ij + (β/2)g_i + (β/2)g_j + β𝒜_ij, source term dropped
DestinationTilt              -- the kernel exp(-(β/2)d²) and the tilt h = e^{βg/2}
destination_tilt             -- rownorm exp(β𝒮) = Doob transform of exp(-(β/2)d²) by h = e^{βg/2}
exact_link                   -- the exact link 𝒜_ij = φ_i - φ_j of a potential φ
link_potential               -- the least-squares potential φ_i = (1/N) Σ_j 𝒜_ij of a link
LinkHodgeSplit               -- a link as its exact and coexact parts
link_hodge_split             -- the Hodge split of a link (link = exact + coexact)
triangle_cycles              -- the triangles (0, i, j, 0): a cycle basis of the complete graph on n tokens
link_holonomy                -- Σ 𝒜 around cycles (affinity = 2β × holonomy)
is_exact_link                -- whether a link is exact, 𝒜_ij = φ_i - φ_j (to a relative tolerance)

The four operators DMAP, DMTN, ATAP, ATTN (Attention Geometry §7, §9)
=====================================================================
OPERATORS                    -- the names ("DMAP", "DMTN", "ATAP", "ATTN")
CORNERS                      -- the corner (b, a) of each operator
family_logits                -- logits of the (b, a) member of the family on queries and keys
family_logits_unchecked      -- the same logits without the boundary checks (the core the torch layers call)
operator_logits              -- family_logits at a named corner
family_operator              -- the Markov operator rownorm exp(ℓ) of a family member, on a mask
effective_form               -- (M_S^op, M_A^op) of a corner
operator_skew_ratio          -- ρ_skew of a corner's effective form [RECON]
parameter_count              -- query/key weights each corner needs (DMAP: half)
bond_inertia                 -- Sylvester inertia of a bond: positive, negative and zero eigenvalues
negative_mass                -- share ‖M_S⁻‖_F / ‖M_S‖_F ∈ [0, 1] of a bond in its negative sector
BondReading                  -- a bond read from its factors: spectrum, inertia, negative share
bond_reading                 -- the bond of (W_Q, W_K) from a 2d_h × 2d_h core, never the D × D matrix
CornerHead                   -- a head read at a corner: its weights W_M, W_N, logits and operator
project_head                 -- the CornerHead of (W_Q, W_K) at a corner
corner_distances             -- how far a head's attention moves when it is projected onto each corner
token_corner_distances       -- the same distances from the queries and keys themselves (rotary heads too)
nearest_corner               -- which corner a head is closest to (a workbench rule)

Diagnostics (Attention Geometry Table 1, §A.10 [RECON]; ISA ML01)
=================================================================
row_entropy                  -- H_i = -Σ_j P_ij log P_ij
mean_entropy                 -- H̄, the mean row entropy (over a stack's leading axes too)
effective_neighbours         -- e^{H̄} ∈ [1, n]
uniform_entropy              -- log n, or log(i+1) per row for a causal head
reversibility_residual       -- ε_rev = ‖diag(π)P - Pᵀdiag(π)‖_F / ‖diag(π)P‖_F ≤ √2
score_skew_ratio             -- ρ_skew = ‖M_A‖_F / ‖M_S‖_F of a bilinear form
nearest_target_distance      -- d_NN of generated samples to a training set
native_spacing               -- the training set's own nearest-neighbour spacing
BetaSweep                    -- the entropy curve of beta_sweep and its two limits
beta_sweep                   -- mean row entropy from β → 0 (uniform) to β → ∞ (argmax)
LogitVariance                -- measured and predicted Var(q·k), with its standard error
logit_variance_at_init       -- Var(q·k) = d_h at standard init, 1 after scaling by 1/√d_h
previous_token_score         -- mean attention from each token to the one before it
induction_score              -- attention to the token after the earlier occurrence, on a repeated sequence
repeated_random_tokens       -- random token sequences whose second half repeats the first (the induction probe)

The connection walk (From Self-Attention to Connection Laplacian, [RECON] displays)
===================================================================================
propagate                    -- one step 𝒯(A, O)X of the connection walk
block_operator               -- its block matrix T(A, O) ∈ ℝ^{nd×nd}
connection_laplacian         -- I - T (random walk) or D ⊗ I - T (unnormalised)
effective_connection         -- A_eff, O_eff with MHA(X) = H·𝒯(A_eff, O_eff)X
connection_step              -- Σ_h A^(h) X M_h, head by head
geometric_drift              -- d_A = 1 - cos(A_eff^{ℓ+1}, A_eff^ℓ)
MixingGenerator              -- L_mix, its π-adjoint, L_sym and L_skew
mixing_generator             -- L_mix = L_sym + L_skew under ⟨·,·⟩_π
connection_energy            -- ℰ_c(X) = ½ Σ π_i A_ij ‖X_i - X_j O_ij‖²
effective_connection_energy  -- ℰ_c of the effective walk and transport, from the heads
factored_connection_energy   -- the same from the factors W_V^h, W_O^h (the D × D maps never formed)
polar_transports             -- O = R S, R orthogonal, S = (OᵀO)^{1/2}
OrthogonalityDeviation       -- δ_orth: the weighted mean and the per-edge values
orthogonality_deviation      -- δ_orth (Eq. 15)
EffectiveTransportGram       -- δ_orth and the mean Gram matrix of O_eff
effective_transport_gram     -- δ_orth and mean Gram of O_eff from the heads, without the n²d² array
factored_transport_gram      -- the same from the factors W_V^h, W_O^h (the D × D maps never formed)
TransportForm                -- a layer's transport Gram as a quadratic form in the head weights, read once
transport_form               -- the TransportForm of the factors (then .gram(A_heads) per attention pattern)
factored_orthogonality_deviation -- δ_orth of each M_h = W_V^h W_O^h from its factors
gauge_transform              -- O'_ij = V_j⁻¹ O_ij V_i
holonomy                     -- transport around a closed walk
holonomy_deviation           -- ‖Hol - I‖_F/√d per cycle (optionally scale removed)
loop_defect                  -- mean scale-free holonomy defect of O_eff around triangles of consecutive tokens
factored_loop_defect         -- the same from the factors W_V, W_O (trace route; dense where cheaper or near flat)
loop_defect_operations       -- what factored_loop_defect costs on a number of triangles (for a budget)
cycle_connection             -- the ring oracle: spectrum 2 - 2cos((2πk ± θ)/n)

Heads as points of a Grassmannian (ISA ML01)
============================================
Subspace                     -- an orthonormal basis of a column space and its numerical rank
subspace_basis               -- the Subspace of col W (SVD, rank by a relative threshold)
principal_angles             -- θ₁ ≤ … ≤ θ_m between two column spaces (sines for small angles)
GRASSMANN_METRICS            -- the distances: geodesic, chordal, projection, procrustes, spectral, fubini-study
distance_from_angles         -- a Grassmannian distance from the angles
grassmann_distance           -- the distance between two column spaces
grassmann_dimension          -- dim Gr(k, n) = k(n - k)
projection_differential      -- the Jacobian of Y ↦ Y Y⁺ (its rank is k(n - k))
random_subspaces             -- Haar-uniform k-planes of ℝⁿ (QR of Gaussian matrices)
random_principal_angles      -- the angles between independent uniform planes
WachterLaw                   -- the limit law of their squared cosines (support, density, mean)
HEAD_MAPS                    -- ("Q", "K", "V", "O")
HeadSubspaces                -- the four subspaces of every head, with ranks
head_subspaces               -- col W_Q^h, col W_K^h, col W_V^h, col W_O^hᵀ of a MultiHeadAttention
head_subspace_angles         -- the principal angles between every pair of heads
head_subspace_distances      -- the head-by-head distance matrix of one kind of subspace
SubspaceNull                 -- distances between random planes: quantiles, share below a distance
subspace_null                -- the random-subspace null of a (D, d_h) (Monte Carlo, cached)
attention_pattern_distance   -- mean total variation between heads' attention, head by head
RankCorrelation              -- Spearman ρ, permutation p-value, pairs
mantel_test                  -- ρ between two distance matrices with a (stratified) Mantel test
"""

from workbench.attention._circuits import induction_score, previous_token_score, repeated_random_tokens
from workbench.attention._corners import (
    CornerHead,
    corner_distances,
    nearest_corner,
    project_head,
    token_corner_distances,
)
from workbench.attention._effective import connection_step, effective_connection, geometric_drift
from workbench.attention._entropy import effective_neighbours, mean_entropy, row_entropy, uniform_entropy
from workbench.attention._family import family_logits, family_logits_unchecked, family_operator, operator_logits
from workbench.attention._forms import (
    BondReading,
    bond_inertia,
    bond_reading,
    effective_form,
    negative_mass,
    operator_skew_ratio,
    parameter_count,
)
from workbench.attention._grassmann import (
    GRASSMANN_METRICS,
    Subspace,
    WachterLaw,
    distance_from_angles,
    grassmann_dimension,
    grassmann_distance,
    principal_angles,
    projection_differential,
    random_principal_angles,
    random_subspaces,
    subspace_basis,
)
from workbench.attention._head_subspaces import (
    HEAD_MAPS,
    HeadSubspaces,
    RankCorrelation,
    SubspaceNull,
    attention_pattern_distance,
    head_subspace_angles,
    head_subspace_distances,
    head_subspaces,
    mantel_test,
    subspace_null,
)
from workbench.attention._heads import AttentionHead, MultiHeadAttention
from workbench.attention._holonomy import (
    factored_loop_defect,
    gauge_transform,
    holonomy,
    holonomy_deviation,
    loop_defect,
    loop_defect_operations,
)
from workbench.attention._links import (
    LinkHodgeSplit,
    exact_link,
    is_exact_link,
    link_hodge_split,
    link_holonomy,
    link_potential,
    triangle_cycles,
)
from workbench.attention._mixing import (
    MixingGenerator,
    connection_energy,
    effective_connection_energy,
    factored_connection_energy,
    mixing_generator,
)
from workbench.attention._operators import CORNERS, OPERATORS
from workbench.attention._polar import (
    EffectiveTransportGram,
    OrthogonalityDeviation,
    TransportForm,
    effective_transport_gram,
    factored_orthogonality_deviation,
    factored_transport_gram,
    orthogonality_deviation,
    polar_transports,
    transport_form,
)
from workbench.attention._random_heads import random_head, random_multihead
from workbench.attention._reversibility import reversibility_residual, score_skew_ratio
from workbench.attention._softmax import attention_mask, softmax_rows
from workbench.attention._spacing import native_spacing, nearest_target_distance
from workbench.attention._split import (
    DestinationTilt,
    ScoreSplit,
    bond_link_split,
    destination_tilt,
    distance_form_logits,
    score_split,
    token_split,
)
from workbench.attention._temperature import BetaSweep, LogitVariance, beta_sweep, logit_variance_at_init
from workbench.attention._twisted_ring import cycle_connection
from workbench.attention._walk import block_operator, connection_laplacian, propagate

__all__ = [
    "CORNERS",
    "GRASSMANN_METRICS",
    "HEAD_MAPS",
    "OPERATORS",
    "AttentionHead",
    "BetaSweep",
    "BondReading",
    "CornerHead",
    "DestinationTilt",
    "EffectiveTransportGram",
    "HeadSubspaces",
    "LinkHodgeSplit",
    "LogitVariance",
    "MixingGenerator",
    "MultiHeadAttention",
    "OrthogonalityDeviation",
    "RankCorrelation",
    "ScoreSplit",
    "Subspace",
    "SubspaceNull",
    "TransportForm",
    "WachterLaw",
    "attention_mask",
    "attention_pattern_distance",
    "beta_sweep",
    "block_operator",
    "bond_inertia",
    "bond_link_split",
    "bond_reading",
    "connection_energy",
    "connection_laplacian",
    "connection_step",
    "corner_distances",
    "cycle_connection",
    "destination_tilt",
    "distance_form_logits",
    "distance_from_angles",
    "effective_connection",
    "effective_connection_energy",
    "effective_form",
    "effective_neighbours",
    "effective_transport_gram",
    "exact_link",
    "factored_connection_energy",
    "factored_loop_defect",
    "factored_orthogonality_deviation",
    "factored_transport_gram",
    "family_logits",
    "family_logits_unchecked",
    "family_operator",
    "gauge_transform",
    "geometric_drift",
    "grassmann_dimension",
    "grassmann_distance",
    "head_subspace_angles",
    "head_subspace_distances",
    "head_subspaces",
    "holonomy",
    "holonomy_deviation",
    "induction_score",
    "is_exact_link",
    "link_hodge_split",
    "link_holonomy",
    "link_potential",
    "logit_variance_at_init",
    "loop_defect",
    "loop_defect_operations",
    "mantel_test",
    "mean_entropy",
    "mixing_generator",
    "native_spacing",
    "nearest_corner",
    "nearest_target_distance",
    "negative_mass",
    "operator_logits",
    "operator_skew_ratio",
    "orthogonality_deviation",
    "parameter_count",
    "polar_transports",
    "previous_token_score",
    "principal_angles",
    "project_head",
    "projection_differential",
    "propagate",
    "random_head",
    "random_multihead",
    "random_principal_angles",
    "random_subspaces",
    "repeated_random_tokens",
    "reversibility_residual",
    "row_entropy",
    "score_skew_ratio",
    "score_split",
    "softmax_rows",
    "subspace_basis",
    "subspace_null",
    "token_corner_distances",
    "token_split",
    "transport_form",
    "triangle_cycles",
    "uniform_entropy",
]
