"""exp(tA)·B: closed forms for structured matrices (the general methods come later).

phi1         -- φ₁(z) = (eᶻ − 1)/z, accurate at z → 0
expm_rank1   -- e^{t uvᵀ} = I + t φ₁(t vᵀu) uvᵀ
expmv_rank1  -- e^{t uvᵀ} B in O(nk), without forming the matrix
"""

from workbench.expmv._structured import expm_rank1, expmv_rank1, phi1

__all__ = ["expm_rank1", "expmv_rank1", "phi1"]
