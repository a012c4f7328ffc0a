r"""Markov geometry on samples: kernels, Markov operators, stationary laws, Dirichlet forms.

Conventions: Markov operators are row-stochastic and act on functions from the left; the positive
generator is :math:`\mathsf L = I - \mathsf P`.

gauss_kernel               -- K_ij = exp(-β‖x_i - x_j‖²)
squared_distances          -- pairwise ‖x_i - x_j‖² from coordinate differences
markov_operator            -- P = diag(K1)⁻¹ K
softmax_operator           -- row softmax of βS, the Markov operator of exp⊙(βS)
markov_semigroup           -- P_t = e^{tℒ} for a generator ℒ (rates ≥ 0, rows sum 0)
reversible_stationary_law  -- π = K1 / 1ᵀK1 for symmetric K
dirichlet_form             -- ½ Σ K_ij (f_i - f_j)(g_i - g_j)
"""

from workbench.markov._dirichlet import dirichlet_form
from workbench.markov._kernels import gauss_kernel, squared_distances
from workbench.markov._operators import (
    markov_operator,
    reversible_stationary_law,
    softmax_operator,
)
from workbench.markov._semigroup import markov_semigroup

__all__ = [
    "dirichlet_form",
    "gauss_kernel",
    "markov_operator",
    "markov_semigroup",
    "reversible_stationary_law",
    "softmax_operator",
    "squared_distances",
]
