"""exp(tA)·B without forming exp(tA): one front door, four methods, structured closed forms.

expmv        -- e^{tA}B by uniformization, Chebyshev, Krylov or Taylor, chosen from the structure of A
METHODS      -- the method names ``expmv`` accepts
AccuracyWarning -- a method could not meet the requested tolerance
LinearMap    -- one view of dense / sparse / LinearOperator / torch / structured operators
as_linear_map -- wrap an operator as a LinearMap
phi1         -- φ₁(z) = (eᶻ − 1)/z, accurate at z → 0
expm_rank1   -- e^{t uvᵀ} = I + t φ₁(t vᵀu) uvᵀ
expmv_rank1  -- e^{t uvᵀ} B in O(nk), without forming the matrix
"""

from workbench.expmv._expmv import METHODS, expmv
from workbench.expmv._linear import AccuracyWarning, LinearMap, as_linear_map
from workbench.expmv._structured import expm_rank1, expmv_rank1, phi1

__all__ = ["METHODS", "AccuracyWarning", "LinearMap", "as_linear_map", "expm_rank1", "expmv", "expmv_rank1", "phi1"]
