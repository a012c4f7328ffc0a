"""Continuum limits and asymptotic expansions (symbolic, with numeric counterparts).

softmax_first_order  -- N⁻¹11ᵀ + (β/N) S (I − N⁻¹11ᵀ), the small-β softmax
softmax_second_order -- + β² (S̃^{∘2} − v1ᵀ)/(2N), S̃ the row-centred scores, v their row variance
softmax_series       -- sympy Taylor coefficients C_k of softmax_β(S) in β
"""

from workbench.continuum._softmax import softmax_first_order, softmax_second_order, softmax_series

__all__ = ["softmax_first_order", "softmax_second_order", "softmax_series"]
