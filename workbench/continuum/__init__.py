"""Continuum limits and asymptotic expansions (symbolic, with numeric counterparts).

softmax_first_order  -- N⁻¹11ᵀ + (β/N) S (I − N⁻¹11ᵀ), the small-β softmax
softmax_second_order -- + β² (S̃^{∘2} − v1ᵀ)/(2N), S̃ the row-centred scores, v their row variance
softmax_series       -- sympy Taylor coefficients C_k of softmax_β(S) in β

Kernel moments (Attention Geometry §3, §4; Coifman–Lafon)
kernel_generator_expansion -- P_β f − f = Σ_k c_k β⁻ᵏ for K_β = exp(−β(y−x)ᵀG(y−x)), α-normalised:
                              4β(I − P_β)f → −[Δ_G f + 2(1−α)⟨∇log q, ∇f⟩_G], and c₂
KernelExpansion      -- its steps, coefficients, generator
cauchy_green_estimator -- D_i = 2β Σ_j P_ij (x_j − x_i)(x_j − x_i)ᵀ → G⁻¹ (features: (J_FᵀJ_F)⁻¹)

Sampled Bakry–Émery calculus (Attention Geometry §5, §8)
kernel_calculus_at   -- ℒ_β f = 4β(P_β − I)f, Γ_β, Γ₂,β of the weighted Gauss kernel at chosen nodes (local
                        sparse rows): → Δf, |∇f|², ‖Hess f‖² + Ric(∇f,∇f) with bias O(1/β)
KernelCalculus       -- its result: ℒ_β f, Γ_β(f), Γ₂,β(f) at the targets
sphere_product_quadrature, torus_lattice -- weighted node sets of S² and of the flat torus

Nonlocal limits (Attention Geometry §6–§8: Beurling–Deny, Courrège, Varadhan)
circle_log_heat_kernel, sphere_log_heat_kernel -- log p_t of ħΔ on S¹ (images / Fourier) and S² (Legendre, mpmath)
varadhan_remainder   -- −4ħt log p_t − d² − 2mħt log(4πħt) → 0 as t → 0
diffusive_jump_rate  -- λ_β = 4ħβ(β/π)^{m/2}: the Gauss jump rate whose local energy → ħ∫|∇f|²
JumpKernel, circle_jump_kernel -- Gauss + remote jump form with killing on the circle grid (for beurling_deny_split)
circle_courrege_operator -- 4ħβ(I − P_β) (tilted by e^{−Φ/ħ}) + remote jumps + killing → the Courrège generator

Riemannian geometry in coordinates (sympy; Attention Geometry §4, §5)
RiemannianMetric     -- G_ab(x): inverse, √g, Christoffel, Riemann, Ricci, Δ_G, ∇, Hess, ‖Hess f‖²
diffusion_generator  -- ℒf = ħΔ_G f − 2⟨dΦ, df⟩_G (the Bakry–Émery sign; ℒ = −𝒞_{dΦ})
witten_generator     -- 𝒞_A f = −ħΔ_G f + 2⟨A, df⟩_G (Attention Geometry's positive convention)
bakry_emery_gamma    -- Γ(f,g) = ½[ℒ(fg) − fℒg − gℒf]
bakry_emery_gamma2   -- Γ₂(f) = ½[ℒΓ(f,f) − 2Γ(f,ℒf)]
bochner_gamma2       -- ħ²‖Hess f‖² + ħ²Ric(∇f,∇f) + 2ħ HessΦ(∇f,∇f)
witten_potential     -- |dΦ|²_G/ħ − Δ_GΦ (ground-state conjugation e^{−Φ/ħ}𝒞e^{Φ/ħ} = −ħΔ_G + it)
formal_adjoint       -- the Lebesgue adjoint 𝒞_A^†ρ (stationarity of μ = e^{−2Φ/ħ}√g)
"""

from workbench.continuum._kernel_calculus import (
    KernelCalculus,
    kernel_calculus_at,
    sphere_product_quadrature,
    torus_lattice,
)
from workbench.continuum._kernel_moments import KernelExpansion, cauchy_green_estimator, kernel_generator_expansion
from workbench.continuum._nonlocal import (
    JumpKernel,
    circle_courrege_operator,
    circle_jump_kernel,
    circle_log_heat_kernel,
    diffusive_jump_rate,
    sphere_log_heat_kernel,
    varadhan_remainder,
)
from workbench.continuum._riemann import (
    RiemannianMetric,
    bakry_emery_gamma,
    bakry_emery_gamma2,
    bochner_gamma2,
    diffusion_generator,
    formal_adjoint,
    witten_generator,
    witten_potential,
)
from workbench.continuum._softmax import softmax_first_order, softmax_second_order, softmax_series

__all__ = [
    "JumpKernel",
    "KernelCalculus",
    "KernelExpansion",
    "RiemannianMetric",
    "bakry_emery_gamma",
    "bakry_emery_gamma2",
    "bochner_gamma2",
    "cauchy_green_estimator",
    "circle_courrege_operator",
    "circle_jump_kernel",
    "circle_log_heat_kernel",
    "diffusion_generator",
    "diffusive_jump_rate",
    "formal_adjoint",
    "kernel_calculus_at",
    "kernel_generator_expansion",
    "softmax_first_order",
    "softmax_second_order",
    "softmax_series",
    "sphere_log_heat_kernel",
    "sphere_product_quadrature",
    "torus_lattice",
    "varadhan_remainder",
    "witten_generator",
    "witten_potential",
]
