"""exp(tA)·B without forming exp(tA): one front door, four methods, structured closed forms.

expmv        -- e^{tA}B by uniformization, Chebyshev, Krylov or Taylor, chosen from the structure of A
METHODS      -- the method names ``expmv`` accepts
AccuracyWarning -- a method could not meet the requested tolerance
LinearMap    -- one view of dense / sparse / LinearOperator / torch / structured operators
as_linear_map -- wrap an operator as a LinearMap
expmv_taylor, expmv_krylov, expmv_chebyshev, expmv_uniformization -- the methods, (Y, info) on a LinearMap
taylor_theta -- θ_m of the Taylor backward-error bound, generated for any tolerance
chebyshev_exp_coefficients -- Chebyshev–Bessel coefficients of e^{tx} on [a, b] with a proven tail bound
poisson_truncation -- Fox–Glynn cut-offs and Poisson weights in log space
BandedMatrix -- a square matrix stored by diagonals (numpy or torch), a structured operator
banded_markov_generator -- a random banded Markov generator (benchmarks)
KroneckerSum -- A ⊕ B = A⊗I + I⊗B without forming it
expmv_kronecker_sum -- e^{t(A⊕B)} vec X = vec(e^{tA} X e^{tBᵀ})
phi1         -- φ₁(z) = (eᶻ − 1)/z, accurate at z → 0
expm_rank1   -- e^{t uvᵀ} = I + t φ₁(t vᵀu) uvᵀ
expmv_rank1  -- e^{t uvᵀ} B in O(nk), without forming the matrix
"""

from workbench.expmv._banded import BandedMatrix, KroneckerSum, banded_markov_generator, expmv_kronecker_sum
from workbench.expmv._chebyshev import chebyshev_exp_coefficients, expmv_chebyshev
from workbench.expmv._expmv import METHODS, expmv
from workbench.expmv._krylov import expmv_krylov
from workbench.expmv._linear import AccuracyWarning, LinearMap, as_linear_map
from workbench.expmv._structured import expm_rank1, expmv_rank1, phi1
from workbench.expmv._taylor import expmv_taylor, taylor_theta
from workbench.expmv._uniformization import expmv_uniformization, poisson_truncation

__all__ = [
    "METHODS",
    "AccuracyWarning",
    "BandedMatrix",
    "KroneckerSum",
    "LinearMap",
    "as_linear_map",
    "banded_markov_generator",
    "chebyshev_exp_coefficients",
    "expm_rank1",
    "expmv",
    "expmv_chebyshev",
    "expmv_kronecker_sum",
    "expmv_krylov",
    "expmv_rank1",
    "expmv_taylor",
    "expmv_uniformization",
    "phi1",
    "poisson_truncation",
    "taylor_theta",
]
