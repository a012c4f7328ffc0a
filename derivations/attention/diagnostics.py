r"""Attention Geometry's head diagnostics on heads whose values are known in closed form (uniform, shift, one-way cycle).

Source: Attention Geometry Table 1; Olsson et al. 2022 (previous-token heads).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.attention import (
    AttentionHead,
    effective_neighbours,
    previous_token_score,
    random_head,
    reversibility_residual,
    row_entropy,
    softmax_rows,
    uniform_entropy,
)
from workbench.backend import to_backend
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim

from .._common import by_scale
from ._shared import (
    SQRT2,
    N,
    context,
    gap,
    max_abs,
)

# ---- 8. diagnostics on closed-form heads ------------------------------------------------------------


def _derive_uniform_and_shift() -> list[Step]:
    uniform = [-sum(sp.Rational(1, r) * sp.log(sp.Rational(1, r)) for _ in range(r)) for r in range(1, N + 1)]
    cycle = sp.Matrix(N, N, lambda i, j: 1 if j == (i + 1) % N else 0)
    pi = sp.Matrix([[sp.Rational(1, N)] * N])
    flux = sp.diag(*pi) * cycle
    epsilon2 = sum(v**2 for v in flux - flux.T) / sum(v**2 for v in flux)
    F = sp.Matrix(N, N, lambda i, j: sp.Symbol(f"F{i}{j}", nonnegative=True))
    shift = sp.Matrix(N, N, lambda i, j: 1 if j == max(i - 1, 0) else 0)
    return [
        claim(
            "a uniform row over n = 3 keys has entropy log 3 (W_Q = 0: all logits vanish)",
            uniform[-1],
            sp.log(3),
            statement=r"H_i = -\sum_{j=1}^{n}\tfrac1n\log\tfrac1n = \log n",
            because="W_Q = 0 makes every logit 0, so each row of the softmax is uniform over the n keys",
        ),
        claim(
            "causal uniform rows: H_i = log(i + 1)",
            sp.Matrix(uniform),
            sp.Matrix([sp.log(i + 1) for i in range(N)]),
            statement=r"H_i = \log(i + 1)\quad(i = 0, \dots, n-1,\ \text{causal mask})",
            because="row i of a causal head with zero logits is uniform over the i + 1 visible keys",
        ),
        claim(
            "the hard shift head P_i,i−1 = 1 has previous-token score 1",
            sum(shift[i, i - 1] for i in range(1, N)) / (N - 1),
            1,
            statement=r"\frac{1}{n-1}\sum_{i=1}^{n-1}\mathsf P_{i,i-1} = 1\quad\text{for } \mathsf P_{ij} = \delta_{j,i-1}",
            because="every row past the first puts all its mass on the previous token",
        ),
        claim(
            "the one-way 3-cycle is stationary for the uniform π",
            pi * cycle,
            pi,
            statement=r"\pi^\top\mathsf C = \pi^\top,\quad \pi = \tfrac1n\mathbf 1,\ \mathsf C_{ij} = \delta_{j,i+1 \bmod n}",
            because="a permutation matrix is doubly stochastic, so the uniform law is stationary",
        ),
        claim(
            "its flux has no reciprocated edge, so ε_rev² = ‖F − Fᵀ‖²/‖F‖² = 2",
            epsilon2,
            2,
            statement=r"\mathsf F = \operatorname{diag}(\pi)\mathsf C,\quad \varepsilon_{\mathrm{rev}}^2 = \frac{\lVert\mathsf F - \mathsf F^\top\rVert_F^2}{\lVert\mathsf F\rVert_F^2} = 2",
            because="F and Fᵀ have disjoint supports (n ≥ 3), so ‖F − Fᵀ‖² = ‖F‖² + ‖Fᵀ‖² = 2‖F‖²",
        ),
        claim(
            "for any flux ‖F − Fᵀ‖² = 2‖F‖² − 2Σ F_ij F_ji ≤ 2‖F‖² (F ≥ 0), so ε_rev ≤ √2",
            sp.expand(sum(v**2 for v in F - F.T)),
            sp.expand(2 * sum(v**2 for v in F) - 2 * sum(F[i, j] * F[j, i] for i in range(N) for j in range(N))),
            statement=r"\lVert\mathsf F - \mathsf F^\top\rVert_F^2 = 2\lVert\mathsf F\rVert_F^2 - 2\sum_{ij}\mathsf F_{ij}\mathsf F_{ji} \le 2\lVert\mathsf F\rVert_F^2\quad(\mathsf F\ge0)",
            because="expand the square: ‖Fᵀ‖ = ‖F‖ and the cross term is Σ F_ij F_ji ≥ 0; so ε_rev ≤ √2, attained by the one-way cycle",
        ),
    ]


def _shift_head(n, backend):
    """A causal hard previous-token head: one-hot positions, q_i = 1000 e_i, k_j = e_{j+1}, β = 1.

    The logit of the previous token exceeds every other by 1000, so e^{−1000} underflows to 0 and the
    attention is the shift exactly (row 0 sees only itself).
    """
    X = to_backend(np.eye(n), backend)
    W_Q = to_backend(1000.0 * np.eye(n), backend)
    W_K = to_backend(np.eye(n, k=1), backend)  # row j → column j + 1
    return AttentionHead(W_Q, W_K, beta=1.0, causal=True), X


def _one_way_walk(rng, n, backend):
    """A random walk that reciprocates no edge: i → i + 1, i + 2, i + 3 (mod n) with random weights, n ≥ 7.

    Offsets in {1, 2, 3} never add up to n ≥ 7, so P_ij P_ji = 0 for all i, j (no self-loops); the offset 1 makes
    it irreducible, so π > 0, and the weights make π non-uniform (the walk is not doubly stochastic).
    """
    P = np.zeros((n, n))
    rows = np.arange(n)
    for offset, weight in zip((1, 2, 3), rng.uniform(0.2, 1.0, (3, n)), strict=True):
        P[rows, (rows + offset) % n] = weight
    return to_backend(P / P.sum(axis=1, keepdims=True), backend)


def _diagnostics_residual(P_uniform, P_causal, P_shift, P_cycle) -> float:
    n = int(P_uniform.shape[-1])
    residual = max_abs(row_entropy(P_uniform) - math.log(n))
    causal_reference = np.log(np.arange(1, n + 1))
    residual = max(
        residual, gap(row_entropy(P_causal), causal_reference), gap(uniform_entropy(n, True), causal_reference)
    )
    residual = max(residual, abs(previous_token_score(P_shift) - 1.0), abs(effective_neighbours(P_shift) - 1.0))
    return max(residual, abs(reversibility_residual(P_cycle) - SQRT2))


def _verify_uniform_and_shift(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: closed forms.  A head with W_Q = 0 has entropy log n per row (causal: log(i + 1)); a hard shift
    head (built from weights, see _shift_head) has previous-token score 1 and e^{H̄} = 1; the one-way cycle
    i → i + 1 and a random one-way walk (i → i + 1, i + 2, i + 3 with random weights, non-uniform π) have
    ε_rev = √2; random heads at β, 4β and 16β stay within ε_rev ≤ √2.

    Tolerance 1e-12 absolute: an entropy sums n terms of size log(n)/n (error ≲ n·ε·log n ≈ 3e-13 at
    n = 256); the shift head is exact (e^{−1000} = 0).
    """
    n, D, d_h = by_scale(scale, (8, 6, 3), (256, 32, 8))
    X = context(rng, n, D, backend)
    W_K = to_backend(rng.standard_normal((D, d_h)), backend)
    W_Q = to_backend(np.zeros((D, d_h)), backend)
    uniform = AttentionHead(W_Q, W_K).operator(X)
    causal = AttentionHead(W_Q, W_K, causal=True).operator(X)
    shift, positions = _shift_head(n, backend)
    cycle = to_backend(np.roll(np.eye(n), 1, axis=1), backend)
    residual = _diagnostics_residual(uniform, causal, shift.operator(positions), cycle)
    residual = max(residual, abs(reversibility_residual(_one_way_walk(rng, n, backend)) - SQRT2))
    head = random_head(rng, D, d_h, backend=backend)
    largest = max(reversibility_residual(softmax_rows(factor * head.logits(X))) for factor in (1.0, 4.0, 16.0))
    residual = max(residual, largest - SQRT2)
    return Verification.from_residual(residual, 1e-12, n=n, eps_rev_max=round(largest, 4))


# ---- outside the hypotheses ---------------------------------------------------------------------------


def _outside_causal_shift(rng) -> Verification:
    """ε_rev = √2 measured on the causal shift head, one-way on every edge but the self-loop of token 0.

    Every causal walk has P_00 = 1, a reciprocated edge; its walk drains to token 0, π = δ₀, the flux is the
    single entry F_00 = 1 and ε_rev = 0, though the head is as one-way as a head can be: ε_rev says nothing about
    a causal head.  Measured (numpy, n = 8): ε_rev = 0, residual |0 − √2| = 1.41 against the tolerance 1e-12.
    """
    n = 8
    uniform = np.full((n, n), 1.0 / n)
    causal = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    shift, positions = _shift_head(n, "numpy")
    P_shift = shift.operator(positions)
    residual = _diagnostics_residual(uniform, causal, P_shift, P_shift)
    return Verification.from_residual(residual, 1e-12, n=n, eps_rev=reversibility_residual(P_shift))


# ---- the catalogue ------------------------------------------------------------------------------------


IDENTITIES = [
    Identity(
        name="attention.diagnostics.uniform_and_shift",
        area="attention",
        statement=r"H_i(\text{uniform}) = \log n\ (\text{causal: }\log(i+1)),\ s_{\mathrm{prev}}(\text{shift}) = e^{\bar H}(\text{shift}) = 1,"
        r"\ \varepsilon_{\mathrm{rev}}(\text{one-way walk}) = \sqrt2 \ge \varepsilon_{\mathrm{rev}}"
        r"\ (\mathsf P_{ij}\mathsf P_{ji} = 0\ \forall i, j,\ \text{e.g. the one-way cycle})",
        source="Attention Geometry Table 1 [RECON ε_rev, e^{H̄}]; book/reference.md §A.10; ISA ML01 (uniform "
        "entropy); Olsson et al. 2022 (previous-token heads)",
        derive=_derive_uniform_and_shift,
        verify=_verify_uniform_and_shift,
        hypotheses=(
            Hypothesis(
                "for ε_rev = √2: the walk reciprocates no edge, self-loops included (P_ijP_ji = 0 for all i, j); "
                "every causal walk has P_00 = 1, drains to token 0 (π = δ₀) and has ε_rev = 0",
                "the causal hard shift head P_{i,i−1} = 1, P_00 = 1",
                _outside_causal_shift,
            ),
        ),
    ),
]
