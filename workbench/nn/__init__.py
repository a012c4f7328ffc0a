"""Torch layers built from generators: the exponential map as a design pattern, with its guarantees.

Exponentials of a constrained generator inherit an exact invariant: a Markov generator gives a stochastic
matrix, a skew one an orthogonal matrix, a symmetric one an SPD matrix, a Hamiltonian one a symplectic
matrix (Lie-Exponential Roadmap).  Each layer here is a small ``torch.nn.Module`` whose guarantee is
a catalogue identity (area ``nn``).  The log lens that reads learned maps through their logarithms is the
numpy package :mod:`workbench.lens`.

Exp-Markov and heat-kernel attention
====================================
BandedGenerator              -- a banded Markov generator stored by its rates: Q X by shifted adds, or the dense Q
banded_generator             -- softplus rates at the given offsets, rows summing to 0, nothing across the ends
symmetric_banded_generator   -- -L = W - D for a symmetric banded weight W (the heat-kernel generator)
multiscale_offsets           -- ±1, ±2, ±4, ..., ±2^levels (or the negative half, for a causal band)
uniformized_action           -- differentiable e^{tQ}X in torch ops (the engine's Poisson cut-off)
ExpMarkovAttention           -- e^{tQ}V for a learned banded Markov generator Q (uniformization, learnable t)
HeatKernelAttention          -- e^{-tL}V for a learned graph Laplacian, several t per head

Givens flows, SPD and symplectic maps
=====================================
brick_planes                 -- layers of disjoint neighbour pairs, alternating (0,1),(2,3),... and (1,2),(3,4),...
random_planes                -- one random perfect matching of the coordinates per layer (seeded)
GivensProduct                -- a product of plane rotations: apply, transpose, dense matrix, stage generators
givens_product               -- the product of the rotations of given angles on given planes
givens_generator             -- the skew generator sum_k theta_k (E_{i_k j_k} - E_{j_k i_k}) of those rotations
GivensFlowMixer              -- exactly orthogonal token or feature mixing by products of plane rotations
gershgorin_bound             -- max_i (S_ii + sum_{j != i} |S_ij|) >= lambda_max(S), differentiable almost everywhere
SPDMap                       -- exp(S), S symmetric, with a certified Lipschitz cap (Gershgorin bound)
symplectic_form              -- the standard form J = [[0, I_n], [-I_n, 0]], d = 2n
SymplecticMap                -- exp(JH), H symmetric: preserves the symplectic form J

Gauge transport
===============
prefix_transports            -- T_0 = I, T_j = e^{A_{j-1}} T_{j-1}, by an associative scan
transport                    -- R_{i<-j} = T_i T_j^{-1}
gauge_change                 -- transports, queries, keys and values after x_j -> S_j x_j
transported_scores           -- c_ij = <q_i, T_i T_j^{-1} k_j>, all pairs
banded_transported_scores    -- c_{i,delta} at the given offsets only
multiscale_generator         -- Q_{i,i+delta} = phi(c_{i,delta}), rows summing to 0 (the gauge transformer's Q)
double_exponential           -- y = T e^{t Q (x) I} T^{-1} v: transport in, Markov exponential, transport out
conjugated_generator         -- T (Q (x) I) T^{-1} = sum_ij Q_ij E_ij (x) R_{i<-j}, exactly
twist_generator              -- BCH_N(Phi_i, -Phi_j), the degree-N truncation of log(e^{Phi_i} e^{-Phi_j})
bch_conjugation_error        -- ||e^{Phi_i} e^{-Phi_j} - exp(BCH_N(Phi_i, -Phi_j))||_F = O(eps^{N+1})
twisted_generator            -- sum_ij Q_ij E_ij (x) exp(BCH_N(Phi_i, -Phi_j)), the BCH-twisted generator
curvature                    -- F_i = log(e^{A_{i+1}} e^{A_i} e^{-A_{i+1}} e^{-A_i}), principal log or truncated series
holonomy                     -- H = R_{b<-a} C^{-1}: a segment's transport against a second one (or reversed order)

Operator attention
==================
OperatorAttention            -- multi-head self-attention whose logits are DMAP, DMTN, ATAP or ATTN (family_logits)
project_attention            -- every OperatorAttention of a model projected onto a corner, weights kept (§10)

Names load on first use (PEP 562), so ``import workbench.nn`` works without torch; the layers need torch.
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.nn._banded_generator": (
        "BandedGenerator",
        "banded_generator",
        "multiscale_offsets",
        "symmetric_banded_generator",
    ),
    "workbench.nn._uniformization": ("uniformized_action",),
    "workbench.nn._exp_markov": ("ExpMarkovAttention", "HeatKernelAttention"),
    "workbench.nn._planes": ("brick_planes", "random_planes"),
    "workbench.nn._givens": ("GivensFlowMixer", "GivensProduct", "givens_generator", "givens_product"),
    "workbench.nn._spd": ("SPDMap", "gershgorin_bound"),
    "workbench.nn._symplectic": ("SymplecticMap", "symplectic_form"),
    "workbench.nn._transport": (
        "banded_transported_scores",
        "gauge_change",
        "prefix_transports",
        "transport",
        "transported_scores",
    ),
    "workbench.nn._double_exponential": ("conjugated_generator", "double_exponential", "multiscale_generator"),
    "workbench.nn._twist": ("bch_conjugation_error", "twist_generator", "twisted_generator"),
    "workbench.nn._curvature": ("curvature", "holonomy"),
    "workbench.nn._operator_attention": ("OperatorAttention", "project_attention"),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
