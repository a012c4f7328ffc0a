r"""Multi-head attention as a connection walk: one connection step, its energy, the ring with holonomy.

Source: "From Self-Attention to Connection Laplacian" §3–§6.  Derived on two tokens with symbolic 2×2
transports, measured on random multi-head layers.
"""

# The connection-walk papers name the transport field O; the helpers below keep the symbol.
# ruff: noqa: E741

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from workbench.attention import (
    block_operator,
    connection_energy,
    connection_laplacian,
    connection_step,
    cycle_connection,
    effective_connection,
    gauge_transform,
    holonomy,
    mixing_generator,
    propagate,
    random_multihead,
    reversibility_residual,
)
from workbench.backend import namespace, to_backend, to_numpy
from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim
from workbench.markov import MarkovOperator

from .._common import by_scale, relative_error
from ._shared import (
    context,
    gap,
    max_abs,
)

# ---- 5. multi-head attention is one connection step ----------------------------------------------


def _derive_mha_step() -> list[Step]:
    n, d, H = 2, 2, 2
    a = [sp.Matrix(n, n, lambda i, j, h=h: sp.Symbol(f"a{h}_{i}{j}", positive=True)) for h in range(H)]
    M = [sp.Matrix(d, d, lambda r, c, h=h: sp.Symbol(f"M{h}_{r}{c}", real=True)) for h in range(H)]
    X = sp.Matrix(n, d, lambda i, r: sp.Symbol(f"x{i}{r}", real=True))
    fill = sp.Matrix(d, d, lambda r, c: sp.Symbol(f"F{r}{c}", real=True))

    def effective(heads, inactive=()):
        a_eff = sum(heads, sp.zeros(n, n)) / H
        o_eff = {}
        for i in range(n):
            for j in range(n):
                total = sum(heads[h][i, j] for h in range(H))
                o_eff[i, j] = (
                    fill
                    if (i, j) in inactive
                    else sum((heads[h][i, j] * M[h] for h in range(H)), sp.zeros(d, d)) / total
                )
        return a_eff, o_eff

    def walk(a_eff, o_eff):
        return sp.Matrix.vstack(
            *[sum((a_eff[i, j] * X[j, :] * o_eff[i, j] for j in range(n)), sp.zeros(1, d)) for i in range(n)]
        )

    def vec_r(Y):
        return Y.reshape(Y.rows * Y.cols, 1)

    def blocks(a_eff, o_eff):
        return sp.Matrix(sp.BlockMatrix([[a_eff[i, j] * o_eff[i, j].T for j in range(n)] for i in range(n)]))

    mha = sum((a[h] * X * M[h] for h in range(H)), sp.zeros(n, d))
    a_eff, o_eff = effective(a)
    causal = [heads.subs({heads[0, 1]: 0}) for heads in a]
    c_eff, c_o = effective(causal, inactive={(0, 1)})
    mha_causal = sum((causal[h] * X * M[h] for h in range(H)), sp.zeros(n, d))
    kron = sum((sp.kronecker_product(a[h], M[h].T) for h in range(H)), sp.zeros(n * d, n * d))
    return [
        Step(
            "2 heads on 2 tokens, d = 2: A^(h) > 0, value-output maps M_h, O^eff_ij = Σ_h A^(h)_ij M_h / Σ_h A^(h)_ij",
            o_eff[0, 1],
            statement=r"\mathsf A^{\mathrm{eff}} = \frac1H\sum_h\mathsf A^{(h)},\quad \mathsf O^{\mathrm{eff}}_{ij} = \frac{\sum_h\mathsf A^{(h)}_{ij}\mathsf M_h}{\sum_h\mathsf A^{(h)}_{ij}},\quad \mathsf M_h = W_V^hW_O^h",
            because="the effective connection of a multi-head layer: averaged weights and, per edge, the weight-averaged value-output map",
        ),
        claim(
            "MHA(X) = Σ_h A^(h) X M_h = H·𝒯(A_eff, O^eff)X",
            (H * walk(a_eff, o_eff)).applyfunc(sp.cancel),
            mha.applyfunc(sp.expand),
            statement=r"\mathrm{MHA}(X)_i = \sum_h\sum_j\mathsf A^{(h)}_{ij}X_j\mathsf M_h = H\sum_j\mathsf A^{\mathrm{eff}}_{ij}X_j\mathsf O^{\mathrm{eff}}_{ij} = H\,\mathcal T(\mathsf A^{\mathrm{eff}},\mathsf O^{\mathrm{eff}})X",
            because="H·A^eff_ij·O^eff_ij = Σ_h A^(h)_ij M_h: the normaliser Σ_h A^(h)_ij cancels edge by edge",
        ),
        claim(
            "with a causal mask (A^(h)_01 = 0 in every head) the inactive transport is free (F) and it still holds",
            (H * walk(c_eff, c_o)).applyfunc(sp.cancel),
            mha_causal.applyfunc(sp.expand),
            statement=r"\mathsf A^{\mathrm{eff}}_{ij} = 0\ \Rightarrow\ \text{the term } \mathsf A^{\mathrm{eff}}_{ij}X_j\mathsf O_{ij} \text{ vanishes for any } \mathsf O_{ij}",
            because="an edge no head attends to carries weight zero, so its transport can be anything (here the free symbol F)",
        ),
        claim(
            "block form: T_ij = A_ij O_ijᵀ gives vec_r(𝒯X) = T vec_r(X)",
            (blocks(a_eff, o_eff) * vec_r(X)).applyfunc(sp.cancel),
            vec_r(walk(a_eff, o_eff)).applyfunc(sp.cancel),
            statement=r"\operatorname{vec}_r(\mathcal TX) = \mathsf T\operatorname{vec}_r(X),\quad \mathsf T_{ij} = \mathsf A_{ij}\mathsf O_{ij}^\top\in\mathbb R^{d\times d}",
            because="row i of 𝒯X is Σ_j A_ij X_j O_ij, whose transpose is Σ_j A_ij O_ijᵀ X_jᵀ",
        ),
        claim(
            "H·T(A_eff, O^eff) = Σ_h A^(h) ⊗ M_hᵀ",
            (H * blocks(a_eff, o_eff)).applyfunc(sp.cancel),
            kron.applyfunc(sp.expand),
            statement=r"H\,\mathsf T(\mathsf A^{\mathrm{eff}},\mathsf O^{\mathrm{eff}}) = \sum_h\mathsf A^{(h)}\otimes\mathsf M_h^\top",
            because="block (i, j) of A ⊗ Mᵀ is A_ij Mᵀ, and the effective blocks sum the heads' blocks",
        ),
    ]


def _mha_step_residual(A_heads, M_heads, X, reference) -> float:
    """Relative residual of H·𝒯(A_eff, O^eff)X against ``reference`` = MHA(X), and of the block form."""
    H = int(A_heads.shape[0])
    A_eff, O_eff = effective_connection(A_heads, M_heads)
    step = H * propagate(A_eff, O_eff, X)
    residual = max(relative_error(step, reference), relative_error(connection_step(A_heads, X, M_heads), reference))
    T = block_operator(A_eff, O_eff)
    vec = namespace(X).reshape(X, (-1,))  # row stacking vec_r
    residual = max(residual, relative_error(T @ vec, namespace(X).reshape(step, (-1,)) / H))
    A_host, M_host = to_numpy(A_heads), to_numpy(M_heads)
    kron = sum(np.kron(A_host[h], M_host[h].T) for h in range(H))  # T_MHA from its definition, on the host
    return max(residual, relative_error(H * to_numpy(T), kron))


def _head_loop(mha, X):
    """Σ_h A^(h) X W_V^h W_O^h head by head, on the host in float64 (the oracle)."""
    A = to_numpy(mha.attention(X))
    Xh, W_V, W_O = to_numpy(X), to_numpy(mha.W_V), to_numpy(mha.W_O)
    return sum(A[h] @ (Xh @ W_V[h]) @ W_O[h] for h in range(mha.n_heads))


def _verify_mha_step(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the head-by-head loop Σ_h A^(h)(XW_V^h)W_O^h on the host (no fused maps, no effective
    connection) for MHA(X), MultiHeadAttention.linear_part and connection_step; Σ_h A^(h) ⊗ M_hᵀ (numpy.kron)
    for the block matrix.  Full and causal heads; with biases, MHA(X) − H·𝒯X must be the constant row
    Σ_h b_V^h W_O^h + b_O.

    Tolerance 1e-12 relative (Frobenius): sums of H products of O(1) matrices (observed ≈ 1e-16).
    """
    n, D, H, d_h = by_scale(scale, (6, 8, 2, 4), (32, 32, 4, 8))
    X = context(rng, n, D, backend)
    worst = 0.0
    for causal in (False, True):
        mha = random_multihead(rng, H, D, d_h, causal=causal, backend=backend)
        reference = _head_loop(mha, X)
        worst = max(worst, _mha_step_residual(mha.attention(X), mha.value_output_maps(), X, reference))
        worst = max(worst, relative_error(mha(X), reference), relative_error(mha.linear_part(X), reference))
    biased = random_multihead(rng, H, D, d_h, bias=True, backend=backend)
    A_eff, O_eff = effective_connection(biased.attention(X), biased.value_output_maps())
    offset = to_numpy(biased(X)) - H * to_numpy(propagate(A_eff, O_eff, X))
    b_V, W_O = to_numpy(biased.b_V), to_numpy(biased.W_O)
    row = sum(b_V[h] @ W_O[h] for h in range(H)) + to_numpy(biased.b_O)
    worst = max(worst, relative_error(offset, np.broadcast_to(row, offset.shape)))
    return Verification.from_residual(worst, 1e-12, n=n, D=D, heads=H)


# ---- 6. the connection energy is the quadratic form of the generator --------------------------------


def _plane_rotation(name):
    """A rotation [[c, s], [−s, c]] of the plane with symbols (c, s); orthogonal on the circle c² + s² = 1."""
    c, s = sp.symbols(f"c_{name} s_{name}", real=True)
    return sp.Matrix([[c, s], [-s, c]]), (c, s)


def _on_circles(expr, circles):
    """The remainder of a polynomial modulo every c² + s² − 1 (lex order, s first: a Gröbner basis)."""
    gens = [s for _, s in circles] + [c for c, _ in circles]
    _, remainder = sp.reduced(sp.expand(expr), [c**2 + s**2 - 1 for c, s in circles], *gens, order="lex")
    return remainder


def _derive_energy() -> list[Step]:
    n, d = 2, 2
    X = sp.Matrix(n, d, lambda i, r: sp.Symbol(f"x{i}{r}", real=True))

    def form_minus_energy(A, O, pi, Y=X):
        T = sp.Matrix(sp.BlockMatrix([[A[i, j] * O[i, j].T for j in range(n)] for i in range(n)]))
        y = Y.reshape(n * d, 1)
        weights = sp.diag(*[pi[i] for i in range(n) for _ in range(d)])
        form = (y.T * weights * (sp.eye(n * d) - T) * y)[0]
        return form - energy(A, O, pi, Y)

    def energy(A, O, pi, Y):
        gaps = [sum(v**2 for v in Y[i, :] - Y[j, :] * O[i, j]) for i in range(n) for j in range(n)]
        return sum(pi[i] * A[i, j] * gaps[i * n + j] for i in range(n) for j in range(n)) / 2

    A = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"A{i}{j}", nonnegative=True))
    O = {
        (i, j): sp.Matrix(d, d, lambda r, c, i=i, j=j: sp.Symbol(f"O{i}{j}_{r}{c}", real=True))
        for i in range(n)
        for j in range(n)
    }
    pi = sp.symbols(f"pi0:{n}", positive=True)
    rows = [sum(A[i, j] for j in range(n)) for i in range(n)]
    remainder = (
        sum(pi[i] * (1 - rows[i] / 2) * sum(v**2 for v in X[i, :]) for i in range(n))
        - sum(pi[i] * A[i, j] * sum(v**2 for v in X[j, :] * O[i, j]) for i in range(n) for j in range(n)) / 2
    )
    p = [sp.symbols(f"p{i}0 p{i}1", nonnegative=True) for i in range(3)]
    three = sp.Matrix([[p[i][0], p[i][1], 1 - p[i][0] - p[i][1]] for i in range(3)])  # a generic Markov operator
    pi3 = sp.Matrix([sp.symbols("pi0:3", positive=True)])
    norms = sp.symbols("nx0:3", nonnegative=True)  # ‖X_j‖² = ‖X_j O_ij‖²
    general_gap = (
        sum(pi3[i] * norms[i] / 2 for i in range(3))
        - sum(pi3[i] * three[i, j] * norms[j] for i in range(3) for j in range(3)) / 2
    )
    flow = pi3 * three
    stationarity_gap = sum((pi3[j] - flow[j]) * norms[j] for j in range(3)) / 2
    a, b = sp.symbols("a b", positive=True)
    stochastic = sp.Matrix([[1 - a, a], [b, 1 - b]])
    rotations, circles = {}, []
    for i in range(n):
        for j in range(n):
            rotations[i, j], circle = _plane_rotation(f"{i}{j}")
            circles.append(circle)
    frames, frame_circles = zip(*(_plane_rotation(f"V{i}") for i in range(n)), strict=True)
    flat = {(i, j): frames[j].T * frames[i] for i in range(n) for j in range(n)}  # V_j⁻¹ V_i for V orthogonal
    section = sp.Matrix.vstack(*[sp.Matrix(1, d, sp.symbols("k0:2", real=True)) * frames[i] for i in range(n)])
    return [
        Step(
            "2 tokens, d = 2: ⟨X, (I − T)X⟩_π versus ℰ_c(X) = ½ Σ π_i A_ij ‖X_i − X_j O_ij‖²",
            A,
            statement=r"\langle X, (\mathsf I - \mathsf T)X\rangle_\pi\ \text{vs}\ \mathcal E_c(X) = \tfrac12\sum_{ij}\pi_i\mathsf A_{ij}\lVert X_i - X_j\mathsf O_{ij}\rVert^2",
            because="the quadratic form of the connection Laplacian against the connection Dirichlet energy",
        ),
        claim(
            "for any A, O, π the gap is Σ_i π_i(1 − r_i/2)‖X_i‖² − ½ Σ π_i A_ij ‖X_j O_ij‖², r = A𝟏",
            sp.expand(form_minus_energy(A, O, pi)),
            sp.expand(remainder),
            statement=r"\langle X, (\mathsf I - \mathsf T)X\rangle_\pi - \mathcal E_c(X) = \sum_i\pi_i\big(1 - \tfrac{r_i}2\big)\lVert X_i\rVert^2 - \tfrac12\sum_{ij}\pi_i\mathsf A_{ij}\lVert X_j\mathsf O_{ij}\rVert^2,\quad r = \mathsf A\mathbf 1",
            because="expand the squares in ℰ_c: the cross terms π_i A_ij X_i·X_jO_ij match those of the form and cancel",
        ),
        claim(
            "a rotation is an isometry, ‖x R‖² = ‖x‖² (c² + s² = 1), so an orthogonal O_ij drops out of ‖X_j O_ij‖²",
            _on_circles(sum(v**2 for v in X[0, :] * rotations[0, 1]) - sum(v**2 for v in X[0, :]), circles),
            statement=r"\lVert xR\rVert^2 = xRR^\top x^\top = \lVert x\rVert^2\quad(R^\top R = \mathsf I)",
            because="RRᵀ = I; for the plane rotation this is c² + s² = 1",
        ),
        claim(
            "3 tokens, A row-stochastic (r = 𝟏), isometric O: the gap is ½ Σ_j (π − πᵀA)_j ‖X_j‖², zero iff π is "
            "stationary (no reversibility needed)",
            sp.expand(general_gap),
            sp.expand(stationarity_gap),
            statement=r"\mathsf A\mathbf 1 = \mathbf 1,\ \lVert X_j\mathsf O_{ij}\rVert = \lVert X_j\rVert:\quad \text{gap} = \tfrac12\sum_j\big(\pi - \pi^\top\mathsf A\big)_j\lVert X_j\rVert^2",
            because="with r_i = 1 the first sum is ½Σ π_i‖X_i‖² and the second ½Σ_j (πᵀA)_j‖X_j‖²",
        ),
        claim(
            "check on 2 tokens, A = [[1 − a, a], [b, 1 − b]]: π = (b, a) is stationary",
            sp.Matrix([[b, a]]) * stochastic,
            sp.Matrix([[b, a]]),
            statement=r"(b, a)\begin{pmatrix}1-a & a\\ b & 1-b\end{pmatrix} = (b, a)",
            because="the flux a·b leaving state 0 equals the flux b·a entering it",
        ),
        claim(
            "with rotations O_ij (c² + s² = 1 on every edge) the gap vanishes: ⟨X, L_mix X⟩_π = ℰ_c(X)",
            _on_circles(form_minus_energy(stochastic, rotations, (b, a)), circles),
            statement=r"\pi^\top\mathsf A = \pi^\top,\ \mathsf O_{ij}\in O(d):\quad \langle X, \mathsf L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)",
            because="the gap of the previous steps vanishes for a stationary π and isometric transports",
        ),
        claim(
            "flat connection O_ij = V_j⁻¹V_i (V_i rotations) and parallel section X_i = kV_i: ℰ_c = 0",
            _on_circles(energy(stochastic, flat, (b, a), section), frame_circles),
            statement=r"\mathsf O_{ij} = V_j^{-1}V_i,\ X_i = kV_i\ \Rightarrow\ X_j\mathsf O_{ij} = kV_jV_j^{-1}V_i = X_i,\ \mathcal E_c(X) = 0",
            because="a pure-gauge connection transports the section kV_j exactly onto kV_i, so every edge term is zero",
        ),
        claim(
            "and nowhere else when the walk is irreducible: with O = I, ℰ_c = ab‖X_0 − X_1‖², zero iff X_0 = X_1 for "
            "a, b > 0; a causal walk (a = 0) has π = (b, 0) and ℰ_c ≡ 0",
            sp.expand(energy(stochastic, {(i, j): sp.eye(d) for i in range(n) for j in range(n)}, (b, a), X)),
            sp.expand(a * b * sum(v**2 for v in X[0, :] - X[1, :])),
            statement=r"\mathsf O_{ij} = I:\quad \mathcal E_c(X) = ab\,\lVert X_0 - X_1\rVert^2\quad(\pi = (b, a))",
            because="only the two cross edges carry a gap, each with flux ab; at a = 0 (token 0 attends to itself "
            "only) the stationary law is δ₀ and the energy sees token 0 alone",
        ),
    ]


def _random_orthogonal(rng, count, d):
    """Haar-distributed orthogonal matrices: QR of Gaussians with the sign of R's diagonal fixed."""
    q, r = np.linalg.qr(rng.standard_normal((count, d, d)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[:, None, :]


def _energy_residual(A, O, X, pi=None) -> float:
    """|⟨X, L_mix X⟩_π − ℰ_c(X)| and |⟨X, L_sym X⟩_π − ℰ_c(X)| relative to ⟨X, X⟩_π (π: stationary by default).

    Where π vanishes somewhere (a causal walk: π = δ₀) the π-adjoint, hence L_sym, does not exist; then only the
    L_mix form is measured.
    """
    xp = namespace(X)
    if pi is None:
        pi = MarkovOperator(A).stationary
    positive = float(xp.min(pi)) > 0.0
    n, d = (int(s) for s in X.shape)
    x = xp.reshape(X, (-1,))
    weight = xp.reshape(xp.broadcast_to(pi[:, None], (n, d)), (n * d,))
    norm = float(xp.sum(weight * x * x))
    energy = float(connection_energy(A, O, X, pi))
    form = float(xp.sum(weight * x * (connection_laplacian(A, O) @ x)))
    residual = abs(form - energy)
    if positive:
        gen = mixing_generator(A, O, pi)
        residual = max(residual, abs(float(xp.sum(weight * x * (gen.L_sym @ x))) - energy))
    return residual / norm


def _energy_form_matrix(A, O, pi) -> np.ndarray:
    """The symmetric nd × nd matrix S of ℰ_c, ℰ_c(X) = vec_r(X)ᵀ S vec_r(X), on the host.

    ‖X_i − X_jO_ij‖² = X_iX_iᵀ − 2X_iO_ijᵀX_jᵀ + X_jO_ijO_ijᵀX_jᵀ, weighted by ½π_iA_ij and summed.
    """
    A, O, pi = (np.asarray(to_numpy(v), dtype=np.float64) for v in (A, O, pi))
    n, d = A.shape[0], O.shape[-1]
    w = 0.5 * pi[:, None] * A
    S = np.zeros((n, d, n, d))
    S[np.arange(n), :, np.arange(n), :] += w.sum(axis=1)[:, None, None] * np.eye(d)
    S[np.arange(n), :, np.arange(n), :] += np.einsum("ij,ijab,ijcb->jac", w, O, O)
    cross = np.einsum("ij,ijba->iajb", w, O)  # block (i, j): −w_ij O_ijᵀ
    S -= cross + cross.transpose(2, 3, 0, 1)
    return S.reshape(n * d, n * d)


def _parallel_kernel_defect(A, flat, pi) -> float:
    """0 when ℰ_c of the flat connection vanishes exactly on the d-dimensional parallel sections, else 1.

    The nullity of the energy form S (eigenvalues ≤ 1e-8·max π; S ≤ 2 max π) must be d: ℰ_c(X) = 0 ⇔ X_i = cV_i.
    """
    S = _energy_form_matrix(A, flat, pi)
    d = int(flat.shape[-1])
    nullity = int(np.sum(np.linalg.eigvalsh(S) <= 1e-8 * float(np.max(to_numpy(pi)))))
    return 0.0 if nullity == d else 1.0


def _energy_statement(A, O, X, V, c, pi=None) -> float:
    """The whole statement, with ℰ_c vanishing on the parallel sections and nowhere else.

    The form identity; ℰ_c = 0 and L X = 0 on the parallel section X_i = cV_i of the flat connection
    O_ij = V_j⁻¹V_i; and ℰ_c = 0 on nothing else (nullity d).
    """
    residual = _energy_residual(A, O, X, pi)
    xp = namespace(A)
    n, d = int(A.shape[0]), int(V.shape[-1])
    identity = xp.broadcast_to(xp.eye(d, dtype=A.dtype), (n, n, d, d))
    flat = gauge_transform(identity, V)  # O_ij = V_j⁻¹ V_i
    section = xp.reshape(c @ V, (n, d))  # X_i = c V_i
    scale_ = float(xp.sum(section**2))
    if pi is None:
        pi = MarkovOperator(A).stationary
    residual = max(residual, float(connection_energy(A, flat, section, pi)) / scale_)
    L = connection_laplacian(A, flat)
    residual = max(residual, max_abs(L @ xp.reshape(section, (-1,))) / math.sqrt(scale_))
    return max(residual, _parallel_kernel_defect(A, flat, pi))


def _verify_energy(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the quadratic form ⟨X, L_mix X⟩_π of the dense generator (mixing_generator) against the edge sum
    ℰ_c (connection_energy), for a random nonreversible row-stochastic A, its stationary π and Haar-random
    orthogonal transports; ℰ_c = 0 and L_mix X = 0 on a parallel section of a flat connection
    (gauge_transform of the identity), and nowhere else: the energy form (assembled edge by edge on the host) has
    nullity exactly d there (its (d + 1)-th eigenvalue is ≳ 1e-3·max π, far above the cut 1e-8·max π).  Controls: scaling the transports by 1.1 (no longer isometric) must
    break the identity by > 1e-3 and A must be nonreversible (ε_rev > 0.05), else the check fails.

    Tolerance 1e-12 relative to ⟨X, X⟩_π: sums of n²d products (observed ≈ 1e-16).
    """
    n, d = by_scale(scale, (6, 3), (40, 8))
    A_np = rng.random((n, n)) ** 3  # skewed weights: a visibly nonreversible walk
    A_np /= A_np.sum(axis=1, keepdims=True)
    A = to_backend(A_np, backend)
    O = to_backend(_random_orthogonal(rng, n * n, d).reshape(n, n, d, d), backend)
    X = context(rng, n, d, backend)
    V = to_backend(_random_orthogonal(rng, n, d), backend)
    c = to_backend(rng.standard_normal((1, d)), backend)
    residual = _energy_statement(A, O, X, V, c)
    if _energy_residual(A, 1.1 * O, X) < 1e-3 or reversibility_residual(A) < 0.05:
        residual = math.inf  # the hypotheses must matter, and the walk must not be reversible
    return Verification.from_residual(residual, 1e-12, n=n, d=d)


def _outside_energy_case(rng, A_np, O_np=None, X_np=None, pi=None) -> Verification:
    """The energy statement (_energy_statement) on given weights, with Haar transports and a random field by default."""
    n, d = int(A_np.shape[0]), 3
    O = _random_orthogonal(rng, n * n, d).reshape(n, n, d, d) if O_np is None else O_np
    X = rng.standard_normal((n, d)) if X_np is None else X_np
    V, c = _random_orthogonal(rng, n, d), rng.standard_normal((1, d))
    return Verification.from_residual(_energy_statement(A_np, O, X, V, c, pi), 1e-12, n=n, d=d)


def _skewed_walk(rng, n=6):
    A = rng.random((n, n)) ** 3
    return A / A.sum(axis=1, keepdims=True)


def _outside_energy_not_stochastic(rng) -> Verification:
    """Weights with πᵀA' = πᵀ but A'𝟏 ≠ 𝟏: half the largest flux π_bA_bk moved from row b to row a (column k).

    π stays a left fixed vector, the transports stay orthogonal, only the row sums change (r_b = 1 − c/π_b,
    r_a = 1 + c/π_a); the form then differs from ℰ_c by ½Σπ_i(1 − r_i)‖X_i‖² = ½c(‖X_b‖² − ‖X_a‖²), with X_a = 0
    here.  Measured (numpy, n = 6, d = 3): residual 0.12 against the tolerance 1e-12.
    """
    A = _skewed_walk(rng)
    pi = MarkovOperator(A).stationary
    flux = pi[:, None] * A
    b, k = np.unravel_index(np.argmax(flux), flux.shape)
    a = (b + 1) % A.shape[0]
    moved = 0.5 * flux[b, k]
    A[b, k] -= moved / pi[b]
    A[a, k] += moved / pi[a]
    X = rng.standard_normal((A.shape[0], 3))
    X[a] = 0.0
    return _outside_energy_case(rng, A, X_np=X, pi=pi)


def _outside_energy_not_stationary(rng) -> Verification:
    """The uniform law in place of the stationary one, on a skewed nonreversible walk.

    Measured (numpy, n = 6, d = 3): residual 0.12 (the gap ½Σ_j(π − πᵀA)_j‖X_j‖² relative to ⟨X, X⟩_π) against
    the tolerance 1e-12.
    """
    A = _skewed_walk(rng)
    return _outside_energy_case(rng, A, pi=np.full(A.shape[0], 1.0 / A.shape[0]))


def _outside_energy_not_orthogonal(rng) -> Verification:
    """Transports 1.1·Q with Q Haar orthogonal (scaled isometries): ‖X_jO_ij‖² = 1.21‖X_j‖² no longer drops out.

    Measured (numpy, n = 6, d = 3): residual 0.10 against the tolerance 1e-12.
    """
    A = _skewed_walk(rng)
    O = 1.1 * _random_orthogonal(rng, A.shape[0] ** 2, 3).reshape(A.shape[0], A.shape[0], 3, 3)
    return _outside_energy_case(rng, A, O_np=O)


def _outside_energy_causal(rng) -> Verification:
    """A causal walk (lower-triangular A, row-normalised): it drains to token 0, π = δ₀.

    The form identity survives (the L_mix half; L_sym does not exist for π = δ₀), but ℰ_c(X) = ½‖X_0 − X_0O_00‖²
    sees token 0 only: on the flat connection it vanishes on every field, not just the parallel sections (nullity
    nd = 18 instead of d = 3).  Measured (numpy, n = 6, d = 3): residual 1 (the kernel defect) against the tolerance
    1e-12.
    """
    A = np.tril(rng.random((6, 6)) + 0.1)
    return _outside_energy_case(rng, A / A.sum(axis=1, keepdims=True))


# ---- 7. the ring with holonomy: closed-form spectrum and gauge invariance ----------------------------


def _ring_spectrum(n, theta) -> np.ndarray:
    k = np.arange(n)
    return np.sort(np.concatenate([2 - 2 * np.cos((2 * np.pi * k + s * theta) / n) for s in (1.0, -1.0)]))


def _ring_spectrum_residual(L, n, theta) -> float:
    """The largest |eig(L) − {2 − 2cos((2πk ± θ)/n)}| for a symmetric ring Laplacian ``L``."""
    return float(np.max(np.abs(np.linalg.eigvalsh(to_numpy(L)) - _ring_spectrum(n, theta))))


def _power_traces(M, d):
    """tr(Mᵏ), k = 1..d: they fix the spectrum of a d×d matrix (Newton's identities)."""
    xp = namespace(M)
    power, traces = M, []
    for _ in range(d):
        traces.append(float(xp.sum(xp.linalg.diagonal(power))))
        power = power @ M
    return np.array(traces)


def _random_frames(rng, count, d):
    """Random invertible, non-orthogonal frames U diag(σ) Wᵀ with U, W Haar and σ ∈ [½, 2]: cond(V) ≤ 4."""
    sigma = np.exp(rng.uniform(-math.log(2.0), math.log(2.0), (count, 1, d)))
    return (_random_orthogonal(rng, count, d) * sigma) @ _random_orthogonal(rng, count, d)


def _holonomy_trace_gap(O, other, cycles) -> float:
    """Worst relative difference of tr(Holᵏ), k = 1..d, between two transport fields, over ``cycles``."""
    d = int(O.shape[-1])
    worst = 0.0
    for cycle in cycles:
        before, after = holonomy(O, cycle), holonomy(other, cycle)
        size = max_abs(before)
        scale_ = np.array([max(size**k, 1e-300) * d ** (k - 1) for k in range(1, d + 1)])
        worst = max(worst, float(np.max(np.abs(_power_traces(after, d) - _power_traces(before, d)) / scale_)))
    return worst


def _derive_holonomy() -> list[Step]:
    n = 3
    theta = sp.Symbol("theta", real=True)
    c, s = sp.symbols("c s", real=True)  # cos(θ/n), sin(θ/n): every claim is linear in them
    rotation = sp.Matrix([[c, s], [-s, c]])
    inverse = sp.Matrix([[c, -s], [s, c]])
    T = sp.zeros(2 * n, 2 * n)
    for m in range(n):
        nxt = (m + 1) % n
        T[2 * nxt : 2 * nxt + 2, 2 * m : 2 * m + 2] = rotation.T  # block A_ij O_ijᵀ, O[m+1, m] = R(θ/n)
        T[2 * m : 2 * m + 2, 2 * nxt : 2 * nxt + 2] = inverse.T
    L = 2 * sp.eye(2 * n) - T
    steps = [
        Step(
            "ring C_3, uniform gauge: O[m+1, m] = R(θ/3), L = 2I − T (unnormalised)",
            L,
            statement=r"\mathsf L = 2\mathsf I - \mathsf T,\quad \mathsf T_{m+1,m} = R(\theta/n)^\top,\ \mathsf T_{m,m+1} = R(\theta/n)\ \text{on } C_n",
            because="the unnormalised connection Laplacian of a ring whose total holonomy is the rotation by θ",
        )
    ]
    for k in range(n):
        omega = sp.exp(2 * sp.pi * sp.I * k / n)
        for sign, u in ((1, sp.Matrix([[1, sp.I]])), (-1, sp.Matrix([[1, -sp.I]]))):
            x = sp.Matrix.vstack(*[omega**m * u for m in range(n)]).reshape(2 * n, 1)
            eigenvalue = 2 - 2 * sp.expand_trig(sp.cos(2 * sp.pi * k / n + sign * sp.Symbol("phi")))
            eigenvalue = eigenvalue.subs({sp.cos(sp.Symbol("phi")): c, sp.sin(sp.Symbol("phi")): s})
            steps.append(
                claim(
                    f"Fourier mode k = {k} times u = (1, {'i' if sign > 0 else '−i'}): "
                    f"eigenvalue 2 − 2cos((2π·{k} {'+' if sign > 0 else '−'} θ)/3)",
                    (L * x).applyfunc(lambda v: sp.expand(sp.expand_complex(v))),
                    (eigenvalue * x).applyfunc(lambda v: sp.expand(sp.expand_complex(v))),
                    statement=r"\mathsf L\,(\omega^m u)_m = \big(2 - 2\cos\tfrac{2\pi k \pm \theta}{n}\big)(\omega^m u)_m,\quad \omega = e^{2\pi ik/n},\ u = (1, \pm i)",
                    because="u = (1, ±i) diagonalises every plane rotation, R(φ)ᵀu = e^{±iφ}u, so each block reduces to a scalar ring with a phase",
                )
            )
    k, size = sp.symbols("k n", integer=True, positive=True)
    steps.append(
        claim(
            "θ ↦ θ + 2π maps the eigenvalue of k to that of k + 1 (mod n): the spectrum depends on θ mod 2π",
            2 - 2 * sp.cos((2 * sp.pi * k + theta + 2 * sp.pi) / size),
            2 - 2 * sp.cos((2 * sp.pi * (k + 1) + theta) / size),
            statement=r"2 - 2\cos\frac{2\pi k + \theta + 2\pi}{n} = 2 - 2\cos\frac{2\pi(k+1) + \theta}{n}",
            because="shifting θ by 2π relabels the Fourier modes k → k + 1; n and k are symbolic",
            general=True,
        )
    )
    # Noncommutative symbols: the frames cancel pairwise, V_j V_j⁻¹ = 1, for transports of any size d.
    V = sp.symbols("V0:3", commutative=False)
    O = {edge: sp.Symbol(f"O{edge[0]}{edge[1]}", commutative=False) for edge in ((1, 0), (2, 1), (0, 2))}
    moved = {(i, j): V[j] ** -1 * O[i, j] * V[i] for (i, j) in O}
    frame, hol = sp.Matrix(2, 2, sp.symbols("W0:4")), sp.Matrix(2, 2, sp.symbols("H0:4"))
    conjugate = frame.inv() * hol * frame
    steps += [
        claim(
            "gauge O'_ij = V_j⁻¹ O_ij V_i conjugates the holonomy of 0→1→2→0: Hol' = V_0⁻¹ Hol V_0",
            moved[1, 0] * moved[2, 1] * moved[0, 2],
            V[0] ** -1 * O[1, 0] * O[2, 1] * O[0, 2] * V[0],
            statement=r"\mathsf O'_{ij} = V_j^{-1}\mathsf O_{ij}V_i:\quad \mathsf O'_{10}\mathsf O'_{21}\mathsf O'_{02} = V_0^{-1}\,\mathsf O_{10}\mathsf O_{21}\mathsf O_{02}\,V_0",
            because="the inner frames cancel pairwise, V_iV_i⁻¹ = I; sympy decides it with noncommuting symbols (transports of any size d)",
            general=True,
        ),
        claim(
            "so its spectrum is gauge invariant (d = 2: trace and determinant of W⁻¹HW)",
            sp.Matrix([sp.cancel(conjugate.trace()), sp.cancel(conjugate.det())]),
            sp.Matrix([hol.trace(), hol.det()]),
            statement=r"\operatorname{spec}(V_0^{-1}\operatorname{Hol}V_0) = \operatorname{spec}\operatorname{Hol}",
            because="similar matrices share their characteristic polynomial; for d = 2 that is the trace and the determinant",
        ),
    ]
    return steps


def _verify_holonomy(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the closed-form ring spectrum {2 − 2cos((2πk ± θ)/n)} (discrete Aharonov–Bohm ring) for the
    one-edge and the uniform gauge, at θ and θ + 2π, and Hol = R(θ) around the ring; gauge invariance of
    tr(Holᵏ), k = 1..d (Newton's identities: the whole spectrum) under random invertible frames V, on the
    ring and on a random (non-orthogonal) connection of the complete graph.

    Tolerance 1e-11: a symmetric eigenproblem of size 2n (≈ 1e-14 at n = 100), and holonomies that are products
    of up to n = 100 transports with frames of cond(V) ≤ 4 (rounding ≲ n·ε·cond(V)² ≈ 4e-13; observed ≈ 1e-14).
    Random Gaussian frames are avoided on purpose: their occasional cond(V) ~ 1e3 makes the rounding, not the
    identity, the measured quantity.
    """
    n = by_scale(scale, 7, 100)
    residual = 0.0
    for theta in (0.7, 0.7 + 2 * np.pi, -2.1, np.pi):
        for uniform in (False, True):
            A_np, O_np = cycle_connection(n, theta, uniform=uniform)
            A, O = to_backend(A_np, backend), to_backend(O_np, backend)
            residual = max(residual, _ring_spectrum_residual(connection_laplacian(A, O, kind="unnormalized"), n, theta))
            ring = (*range(n), 0)
            rotation = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
            residual = max(residual, gap(holonomy(O, ring), rotation))
            V = to_backend(_random_frames(rng, n, 2), backend)
            residual = max(residual, _holonomy_trace_gap(O, gauge_transform(O, V), [ring]))
    m, d = by_scale(scale, (5, 3), (12, 6))
    O = to_backend(rng.standard_normal((m, m, d, d)) / math.sqrt(d), backend)
    V = to_backend(_random_frames(rng, m, d), backend)
    cycles = [(0, i, j, 0) for i, j in ((1, 2), (2, 4), (3, 1))] + [(*range(m), 0)]
    residual = max(residual, _holonomy_trace_gap(O, gauge_transform(O, V), cycles))
    return Verification.from_residual(residual, 1e-11, n=n, thetas=4)


def _outside_mha_biases(rng) -> Verification:
    """MHA(X) = H·𝒯(A_eff, O^eff)X on a layer with value and output biases b_V, b_O.

    The attention weights and the transports are unchanged, but MHA(X) carries the constant row
    Σ_h b_V^hW_O^h + b_O that no connection step produces.  Measured (numpy, n = 6, D = 8, H = 2): residual 0.87
    relative (Frobenius) against the tolerance 1e-12.
    """
    n, D, H, d_h = 6, 8, 2, 4
    X = context(rng, n, D, "numpy")
    mha = random_multihead(rng, H, D, d_h, bias=True)
    A_eff, O_eff = effective_connection(mha.attention(X), mha.value_output_maps())
    residual = relative_error(to_numpy(mha(X)), H * to_numpy(propagate(A_eff, O_eff, X)))
    return Verification.from_residual(residual, 1e-12, n=n, D=D, heads=H, biases=True)


def _outside_ring_weights(rng) -> Verification:
    """The ring spectrum with unequal edge weights (1 and 2 alternating, n = 7), L = D − T unnormalised.

    The Fourier modes no longer diagonalise L.  Measured (numpy, n = 7, θ = 0.7): residual 1.9 (largest eigenvalue
    gap) against the tolerance 1e-11.
    """
    n, theta = 7, 0.7
    A, O = cycle_connection(n, theta, weights=1.0 + (np.arange(n) % 2))
    L = connection_laplacian(A, O, kind="unnormalized")
    return Verification.from_residual(_ring_spectrum_residual(L, n, theta), 1e-11, n=n, weights="1, 2 alternating")


def _outside_ring_scaled(rng) -> Verification:
    """The ring with scaled rotations 1.1·R (and 1.1·Rᵀ back): transports that are not orthogonal.

    T scales by 1.1, so the spectrum is 2 − 2.2cos((2πk ± θ)/n).  Measured (numpy, n = 7, θ = 0.7): residual 0.2
    against the tolerance 1e-11.
    """
    n, theta = 7, 0.7
    A, O = cycle_connection(n, theta)
    L = connection_laplacian(A, 1.1 * O, kind="unnormalized")
    return Verification.from_residual(_ring_spectrum_residual(L, n, theta), 1e-11, n=n, scale=1.1)


# ---- the catalogue ------------------------------------------------------------------------------------

SOURCE_CONNECTION = "From Self-Attention to Connection Laplacian §3–§5 [RECON of the displays]; book/reference.md §B"
IRREDUCIBLE = (
    "A irreducible, so π > 0; a causal walk drains to token 0 (π = δ₀): L_sym does not exist and ℰ_c sees token 0 only"
)

IDENTITIES = [
    Identity(
        name="attention.connection.mha_step",
        area="attention",
        statement=r"\operatorname{MHA}(X) = \sum_h A^{(h)}XM_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X,"
        r"\ \operatorname{vec}^r(\mathcal T X) = T(A, O)\operatorname{vec}^r(X),\ H\,T(A_{\mathrm{eff}}, O^{\mathrm{eff}}) = \sum_h A^{(h)}\otimes M_h^\top"
        r"\ (b_V = b_O = 0)",
        source=SOURCE_CONNECTION + ".2–§B.3, Eqs. (4), (8)–(10)",
        derive=_derive_mha_step,
        verify=_verify_mha_step,
        hypotheses=(
            Hypothesis(
                "no value or output biases (b_V = b_O = 0); with them MHA(X) − H𝒯X is the constant row "
                "Σ_h b_V^hW_O^h + b_O",
                "a random layer with b_Q, b_K, b_V, b_O",
                _outside_mha_biases,
            ),
        ),
    ),
    Identity(
        name="attention.connection.energy",
        area="attention",
        statement=r"\langle X, L_{\mathrm{mix}}X\rangle_\pi = \langle X, L_{\mathrm{sym}}X\rangle_\pi = \mathcal E_c(X)"
        r" = \tfrac12\sum_{ij}\pi_iA_{ij}\lVert X_i - X_jO_{ij}\rVert^2,\ \mathcal E_c(X) = 0 \Leftrightarrow X\ \text{parallel}"
        r"\ (A\mathbf 1 = \mathbf 1,\ \pi^\top A = \pi^\top,\ O_{ij}\in O(d),\ A\ \text{irreducible: }\pi > 0)",
        source=SOURCE_CONNECTION + ".4, Eq. (14) [RECON energy, DERIVED identity and hypotheses]",
        derive=_derive_energy,
        verify=_verify_energy,
        hypotheses=(
            Hypothesis(
                "A row-stochastic (A𝟏 = 𝟏)",
                "πᵀA' = πᵀ but A'𝟏 ≠ 𝟏: half the largest flux moved between two rows of one column",
                _outside_energy_not_stochastic,
            ),
            Hypothesis(
                "π stationary (πᵀA = πᵀ); reversibility is not needed",
                "the uniform law on a skewed nonreversible walk",
                _outside_energy_not_stationary,
            ),
            Hypothesis(
                "O_ij orthogonal (isometries)",
                "transports 1.1·Q, Q Haar orthogonal",
                _outside_energy_not_orthogonal,
            ),
            Hypothesis(IRREDUCIBLE, "a causal (lower-triangular) walk on 6 tokens", _outside_energy_causal),
        ),
    ),
    Identity(
        name="attention.connection.holonomy",
        area="attention",
        statement=r"\operatorname{spec}(2I - T)_{C_n,\theta} = \{2 - 2\cos\tfrac{2\pi k\pm\theta}{n}\},\ "
        r"\mathrm{Hol}(V_j^{-1}O_{ij}V_i) = V_{i_0}^{-1}\mathrm{Hol}(O)V_{i_0}\ (\text{ring: unit weights, }O_{ij}\in SO(2),"
        r"\ O_{ji} = O_{ij}^\top)",
        source="Discrete Aharonov–Bohm ring (Kenyon 2011; Singer–Wu 2012) [DERIVED oracle]; From Self-Attention to "
        "Connection Laplacian §6 [RECON]; book/reference.md §B.2, §B.6",
        derive=_derive_holonomy,
        verify=_verify_holonomy,
        hypotheses=(
            Hypothesis(
                "for the ring spectrum: equal (unit) weights on the ring's edges; the gauge law holds for any O",
                "C_7 with edge weights 1, 2 alternating",
                _outside_ring_weights,
            ),
            Hypothesis(
                "for the ring spectrum: orthogonal transports, plane rotations with O_ji = O_ijᵀ",
                "C_7 with scaled rotations 1.1·R(φ)",
                _outside_ring_scaled,
            ),
        ),
    ),
]
