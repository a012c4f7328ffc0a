"""exp(tA)·B without forming exp(tA): one front door, five methods, structured operators and closed forms.

A and B may be real or complex, in single or double precision, numpy/scipy or torch (not mixed).  The
result dtype follows scipy.sparse.linalg.expm_multiply (numpy.result_type(A, B), integer A read as
float64; torch.promote_types for tensors), and the default tolerance is the unit roundoff of that dtype.
Complex A runs Taylor or Krylov (Arnoldi); Chebyshev needs a real spectrum, so only Hermitian A; a
skew-Hermitian A = -iH goes to Taylor, with the reason in the info.  A real A meets a complex B as
[Re B, Im B], so uniformization and Chebyshev stay available.  Results beyond the floating range and
plans beyond the work budget are ValueErrors that say what to change.

The front door
expmv                      -- e^{tA}B by uniformization, Chebyshev, Krylov, Taylor or Kronecker, chosen from A
METHODS                    -- the method names ``expmv`` accepts (name → module, function)
AccuracyWarning            -- a method could not meet the requested tolerance
LinearMap                  -- one view of dense / sparse / LinearOperator / torch / structured operators
as_linear_map              -- wrap an operator as a LinearMap

The methods, each returning (Y, info)
expmv_taylor               -- truncated Taylor series with scaling (Al-Mohy–Higham), the general case
expmv_krylov               -- Lanczos / Arnoldi with a-posteriori error control and time stepping
expmv_chebyshev            -- Chebyshev–Bessel series on a spectral interval of symmetric A
expmv_uniformization       -- Poisson mixture of stochastic powers of I + Q/q for a Markov generator Q
expmv_kronecker            -- e^{t(A⊕B)}B through the factors, for a KroneckerSum operator

Their constants
taylor_theta               -- θ_m of the Taylor backward-error bound, generated for any tolerance
chebyshev_exp_coefficients -- Chebyshev–Bessel coefficients of e^{tx} on [a, b] with a proven tail bound
ChebyshevExpansion         -- the truncated expansion: coefficients, log scale, tail bound, centre, half-width
poisson_truncation         -- Fox–Glynn cut-offs and Poisson weights in log space

Structured operators
BandedMatrix               -- a square matrix stored by diagonals (numpy or torch)
banded_markov_generator    -- a random banded Markov generator (benchmarks)
KroneckerSum               -- A ⊕ B = A⊗I + I⊗B without forming it
expmv_kronecker_sum        -- e^{t(A⊕B)} vec X = vec(e^{tA} X e^{tBᵀ})

Closed forms
phi1                       -- φ₁(z) = (eᶻ − 1)/z, accurate at z → 0
expm_rank1                 -- e^{t uvᵀ} = I + t φ₁(t vᵀu) uvᵀ
expmv_rank1                -- e^{t uvᵀ} B in O(nk), without forming the matrix
"""

from workbench.expmv._banded import BandedMatrix, banded_markov_generator
from workbench.expmv._chebyshev import ChebyshevExpansion, chebyshev_exp_coefficients, expmv_chebyshev
from workbench.expmv._expmv import METHODS, expmv
from workbench.expmv._kronecker import KroneckerSum, expmv_kronecker, expmv_kronecker_sum
from workbench.expmv._krylov import expmv_krylov
from workbench.expmv._linear import AccuracyWarning, LinearMap, as_linear_map
from workbench.expmv._structured import expm_rank1, expmv_rank1, phi1
from workbench.expmv._taylor import expmv_taylor
from workbench.expmv._taylor_theta import taylor_theta
from workbench.expmv._uniformization import expmv_uniformization, poisson_truncation

__all__ = [
    "METHODS",
    "AccuracyWarning",
    "BandedMatrix",
    "ChebyshevExpansion",
    "KroneckerSum",
    "LinearMap",
    "as_linear_map",
    "banded_markov_generator",
    "chebyshev_exp_coefficients",
    "expm_rank1",
    "expmv",
    "expmv_chebyshev",
    "expmv_kronecker",
    "expmv_kronecker_sum",
    "expmv_krylov",
    "expmv_rank1",
    "expmv_taylor",
    "expmv_uniformization",
    "phi1",
    "poisson_truncation",
    "taylor_theta",
]
