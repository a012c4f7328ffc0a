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
graph_weights              -- weighted adjacency of a networkx (di)graph, validated

Operators
MarkovOperator             -- P with π, P*, flux, current, ε_rev, spectrum, diffusion map, Nyström
Spectrum                   -- leading eigenpairs P ψ_k = μ_k ψ_k
doob_transform             -- P_h = diag(Kh)⁻¹ K diag(h), π ∝ h ⊙ Kh
markov_operator            -- P = diag(K1)⁻¹ K
softmax_operator           -- row softmax of βS, the Markov operator of exp⊙(βS)
markov_semigroup           -- P_t = e^{tℒ} for a generator ℒ (rates ≥ 0, rows sum 0)
reversible_stationary_law  -- π = K1 / 1ᵀK1 for symmetric K

Forms, cycles and currents
dirichlet_form             -- ½ Σ K_ij (f_i - f_j)(g_i - g_j)
beurling_deny_split        -- ℰ = local (d ≤ r) + jump (d > r) + killing
beurling_deny_scan         -- the split over a range of radii
killing_measure            -- κ_i = π_i (1 - Σ_j P_ij) of a sub-Markov operator
support_graph              -- the undirected graph of pairs with P_ij > 0 and P_ji > 0
cycle_basis                -- a fundamental cycle basis of the support
cycle_affinities           -- Σ log(P_ij / P_ji) around each cycle
kolmogorov_residual        -- max |affinity|: zero iff reversible (Kolmogorov criterion)
hodge_split                -- antisymmetric edge field = exact (φ_i - φ_j) + divergence-free
"""

from workbench.markov._bandwidth import BandwidthSweep, bandwidth_sweep, median_bandwidth
from workbench.markov._beurling_deny import BeurlingDenyParts, beurling_deny_scan, beurling_deny_split, killing_measure
from workbench.markov._cycles import (
    HodgeDecomposition,
    cycle_affinities,
    cycle_basis,
    hodge_split,
    kolmogorov_residual,
    support_graph,
)
from workbench.markov._dirichlet import dirichlet_form
from workbench.markov._graphs import graph_weights
from workbench.markov._kernels import alpha_normalize, gauss_kernel, gauss_kernel_sparse, squared_distances
from workbench.markov._markov_operator import MarkovOperator, Spectrum, doob_transform
from workbench.markov._operators import (
    markov_operator,
    reversible_stationary_law,
    softmax_operator,
)
from workbench.markov._samplers import Circle, FlatTorus, Interval, Sphere, SwissRoll
from workbench.markov._semigroup import markov_semigroup

__all__ = [
    "BandwidthSweep",
    "BeurlingDenyParts",
    "Circle",
    "FlatTorus",
    "HodgeDecomposition",
    "Interval",
    "MarkovOperator",
    "Spectrum",
    "Sphere",
    "SwissRoll",
    "alpha_normalize",
    "bandwidth_sweep",
    "beurling_deny_scan",
    "beurling_deny_split",
    "cycle_affinities",
    "cycle_basis",
    "dirichlet_form",
    "doob_transform",
    "gauss_kernel",
    "gauss_kernel_sparse",
    "graph_weights",
    "hodge_split",
    "killing_measure",
    "kolmogorov_residual",
    "markov_operator",
    "markov_semigroup",
    "median_bandwidth",
    "reversible_stationary_law",
    "softmax_operator",
    "squared_distances",
    "support_graph",
]
