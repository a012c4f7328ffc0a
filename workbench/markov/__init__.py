r"""Markov geometry on samples and graphs.

Conventions: Markov operators are row-stochastic and act on functions from the left,
:math:`(\mathsf P f)_i = \sum_j \mathsf P_{ij} f_j`; the positive generator is :math:`\mathsf L = I - \mathsf P`
and the negative one :math:`\mathcal L = \mathsf P - I`.  Kernels are :math:`e^{-\beta\lVert x - y\rVert^2}`.

Samples with known geometry
Circle, Sphere, FlatTorus, Interval, SwissRoll -- seeded samplers with exact Laplace–Beltrami spectra

Kernels and bandwidths
gauss_kernel               -- K_ij = exp(-β‖x_i - x_j‖²), dense
gauss_kernel_sparse        -- the same on k nearest neighbours or within a radius (scipy sparse)
squared_distances          -- pairwise ‖x_i - x_j‖² from coordinate differences
alpha_normalize            -- Coifman–Lafon K^(α) = diag(q)^-α K diag(q)^-α, q = K1
median_bandwidth           -- β = 1/median d²_ij
bandwidth_sweep            -- Berry–Giannakis–Harlim sweep: β and the intrinsic dimension
BandwidthSweep             -- its result: the β grid, kernel sums, slopes, chosen β and dimension
graph_weights              -- weighted adjacency of a networkx (di)graph, validated

Operators
MarkovOperator             -- P with π, P*, flux, current, ε_rev, spectrum, diffusion map, Nyström
Spectrum                   -- leading eigenpairs P ψ_k = μ_k ψ_k
sparse_factorisation       -- which factorisation (SuperLU, QDLDL or MKL's PARDISO) a large sparse spectrum uses
DegenerateBandwidthWarning -- a dense kernel of from_points so wide that its walk sees the ambient space
doob_transform             -- P_h = diag(Kh)⁻¹ K diag(h), π ∝ h ⊙ Kh
markov_operator            -- P = diag(K1)⁻¹ K
softmax_operator           -- row softmax of βS, the Markov operator of exp⊙(βS)
markov_semigroup           -- P_t = e^{tℒ} for a generator ℒ (rates ≥ 0, rows sum 0)
reversible_stationary_law  -- π = K1 / 1ᵀK1 for symmetric K
stationary_laws            -- π of each matrix of a stack (one GTH elimination for positive stacks)

Forms, cycles and currents
dirichlet_form             -- ½ Σ K_ij (f_i - f_j)(g_i - g_j)
beurling_deny_split        -- ℰ = local (d ≤ r) + jump (d > r) + killing
beurling_deny_scan         -- the split over a range of radii
BeurlingDenyParts          -- local, jump, killing and total parts of ℰ(f,f)
killing_measure            -- κ_i = π_i (1 - Σ_j P_ij) of a sub-Markov operator
support_graph              -- the undirected graph of pairs with P_ij > 0 and P_ji > 0
cycle_basis                -- a fundamental cycle basis of the support
cycle_affinities           -- Σ log(P_ij / P_ji) around each cycle
kolmogorov_residual        -- max |affinity|: zero iff reversible (Kolmogorov criterion)
cycle_edges                -- the oriented steps of a list of cycles, concatenated, and each cycle's offset
segment_sums               -- sums over consecutive segments (the cycle sums of an edge field)
hodge_split                -- antisymmetric edge field = exact (φ_i - φ_j) + divergence-free
HodgeDecomposition         -- its result: potential φ, exact and coexact parts

Bakry–Émery calculus and curvature (functions of jump rates W: ℒf_i = Σ_j W_ij (f_j - f_i))
carre_du_champ             -- Γ(f,g)_i = ½ Σ_j W_ij (f_j - f_i)(g_j - g_i)
gamma2                     -- Γ₂(f,g) = ½[ℒΓ(f,g) - Γ(f,ℒg) - Γ(g,ℒf)]
hessian_form               -- ½[Γ(g,Γ(f,h)) + Γ(h,Γ(f,g)) - Γ(f,Γ(g,h))] → ħ² Hess f(∇g,∇h)
bakry_emery_curvature      -- exact K_∞(x): largest K with Γ₂(f)(x) ≥ K Γ(f)(x)
ollivier_ricci             -- κ(x,y) = 1 - W₁(m_x, m_y)/d(x,y) (POT)

Stationary currents and the Hatano–Nelson gauge (functions of P and a law π, flux A = diag(π)P)
stationary_current         -- J = diag(π)P - Pᵀdiag(π)
circulation                -- Ω_π(f,g) = ½ Σ J_ij f_i g_j
hatano_nelson              -- flux A = Ā ⊙ e^θ, Ā = √(A ⊙ Aᵀ), θ = ½ log(A/Aᵀ)
gauge_gradients            -- D_K, D_Q with ½ D_Qᵀ D_K = diag(Ā1) - A   [RECON]
GaugeGradients             -- its result: D_K, D_Q and the oriented edges indexing their rows
"""

from workbench.markov._bakry_emery import carre_du_champ, gamma2, hessian_form
from workbench.markov._bandwidth import BandwidthSweep, DegenerateBandwidthWarning, bandwidth_sweep, median_bandwidth
from workbench.markov._beurling_deny import BeurlingDenyParts, beurling_deny_scan, beurling_deny_split, killing_measure
from workbench.markov._currents import GaugeGradients, circulation, gauge_gradients, hatano_nelson, stationary_current
from workbench.markov._curvature import bakry_emery_curvature, ollivier_ricci
from workbench.markov._cycles import (
    cycle_affinities,
    cycle_basis,
    cycle_edges,
    kolmogorov_residual,
    segment_sums,
    support_graph,
)
from workbench.markov._dirichlet import dirichlet_form
from workbench.markov._doob import doob_transform
from workbench.markov._graphs import graph_weights
from workbench.markov._hodge import HodgeDecomposition, hodge_split
from workbench.markov._kernels import alpha_normalize, gauss_kernel, gauss_kernel_sparse, squared_distances
from workbench.markov._markov_operator import MarkovOperator, Spectrum
from workbench.markov._operators import (
    markov_operator,
    reversible_stationary_law,
    softmax_operator,
)
from workbench.markov._samplers import Circle, FlatTorus, Interval, Sphere
from workbench.markov._semigroup import markov_semigroup
from workbench.markov._sparse_spectrum import sparse_factorisation
from workbench.markov._stationary_laws import stationary_laws
from workbench.markov._swiss_roll import SwissRoll

__all__ = [
    "BandwidthSweep",
    "BeurlingDenyParts",
    "Circle",
    "DegenerateBandwidthWarning",
    "FlatTorus",
    "GaugeGradients",
    "HodgeDecomposition",
    "Interval",
    "MarkovOperator",
    "Spectrum",
    "Sphere",
    "SwissRoll",
    "alpha_normalize",
    "bakry_emery_curvature",
    "bandwidth_sweep",
    "beurling_deny_scan",
    "beurling_deny_split",
    "carre_du_champ",
    "circulation",
    "cycle_affinities",
    "cycle_basis",
    "cycle_edges",
    "dirichlet_form",
    "doob_transform",
    "gamma2",
    "gauge_gradients",
    "gauss_kernel",
    "gauss_kernel_sparse",
    "graph_weights",
    "hatano_nelson",
    "hessian_form",
    "hodge_split",
    "killing_measure",
    "kolmogorov_residual",
    "markov_operator",
    "markov_semigroup",
    "median_bandwidth",
    "ollivier_ricci",
    "reversible_stationary_law",
    "segment_sums",
    "softmax_operator",
    "sparse_factorisation",
    "squared_distances",
    "stationary_current",
    "stationary_laws",
    "support_graph",
]
