r"""Generators as layers: exp-Markov attention is stochastic, heat-kernel attention doubly stochastic.

Source: Lie-Exponential Roadmap: "A Markov generator ⇒ exp(tA) is row-stochastic"; "ExpMarkovAttention
(global, normalized attention)"; "Heat-kernel attention ... P = exp(−tL)".  The layers of
:mod:`workbench.nn` build a banded generator from token content and apply :math:`e^{tQ}` by a
differentiable uniformization; the checks read the dense operator the layer returns and compare it with
``scipy.linalg.expm`` of the dense generator (Padé, an independent algorithm), and test the structure the
generator guarantees: :math:`P \ge 0`, :math:`P\mathbf 1 = \mathbf 1`, and for a symmetric generator
:math:`P = P^\top`, :math:`\mathbf 1^\top P = \mathbf 1^\top`, :math:`\lVert P\rVert_2 \le 1`.

Symbolic route: the two-state chain :math:`Q = \begin{pmatrix}-a & a\\ b & -b\end{pmatrix}` has the closed form
:math:`e^{tQ} = \frac{1}{a+b}\begin{pmatrix} b + ae^{-(a+b)t} & a - ae^{-(a+b)t} \\ b - be^{-(a+b)t} &
a + be^{-(a+b)t}\end{pmatrix}`; sympy checks it solves :math:`M' = QM`, :math:`M(0) = I` (which characterises
:math:`e^{tQ}`), that its rows sum to 1, the semigroup law, and, for :math:`a = b`, symmetry and unit column sums.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import sympy as sp

from workbench.catalogue import Hypothesis, Identity, Step, Verification, claim

from ._common import by_scale


def _two_state():
    a, b, t = sp.symbols("a b t", positive=True)
    decay = sp.exp(-(a + b) * t)
    q = sp.Matrix([[-a, a], [b, -b]])
    m = sp.Matrix([[b + a * decay, a - a * decay], [b - b * decay, a + b * decay]]) / (a + b)
    return a, b, t, q, m


def _derive_stochastic() -> list[Step]:
    _, _, t, q, m = _two_state()
    s = sp.Symbol("s", positive=True)
    ones = sp.Matrix([1, 1])
    return [
        Step(
            "two-state generator Q (rates a, b ≥ 0, rows summing to 0) and the candidate M(t)",
            sp.Tuple(q, m),
            statement=r"Q = \begin{pmatrix}-a & a\\ b & -b\end{pmatrix},\quad M(t) = \frac{1}{a+b}\begin{pmatrix} b + ae^{-(a+b)t} & a - ae^{-(a+b)t}\\ b - be^{-(a+b)t} & a + be^{-(a+b)t}\end{pmatrix}",
            because="the two-state Markov generator and a candidate closed form for its exponential",
        ),
        claim(
            "M solves M' = QM",
            m.diff(t) - q * m,
            statement=r"M'(t) = Q\,M(t)",
            because="differentiate entrywise: only the e^{−(a+b)t} terms move, and Q acts on them by −(a + b)",
        ),
        claim(
            "M(0) = I, so M(t) = e^{tQ}",
            m.subs(t, 0),
            sp.eye(2),
            statement=r"M(0) = \mathsf I\ \Rightarrow\ M(t) = e^{tQ}",
            because="the linear ODE M' = QM with M(0) = I has the unique solution e^{tQ}",
        ),
        claim(
            "rows of e^{tQ} sum to 1",
            m * ones,
            ones,
            statement=r"e^{tQ}\mathbf 1 = \mathbf 1",
            because="Q1 = 0, so every term of the series beyond I kills 1",
        ),
        claim(
            "semigroup: e^{sQ}e^{tQ} = e^{(s+t)Q}",
            (m.subs(t, s) * m).applyfunc(sp.simplify),
            m.subs(t, s + t),
            statement=r"e^{sQ}e^{tQ} = e^{(s+t)Q}",
            because="sQ and tQ commute",
        ),
        Step(
            "entries are ≥ 0 for a, b, t ≥ 0: b + a e^{-(a+b)t} > 0 and a(1 − e^{-(a+b)t}) ≥ 0",
            m,
            statement=r"e^{tQ}\ge0\ \text{entrywise}\quad(a, b, t\ge0)",
            because="each entry is b + ae^{−(a+b)t} > 0 or a(1 − e^{−(a+b)t}) ≥ 0 (and the same with a ↔ b), divided by a + b",
        ),
    ]


def _derive_doubly() -> list[Step]:
    a, b, t, _, m = _two_state()
    sym = m.subs(b, a)
    ones = sp.Matrix([[1, 1]])
    return [
        Step(
            "symmetric two-state generator −L (a = b): e^{−tL}",
            sym,
            statement=r"e^{-tL} = \tfrac12\begin{pmatrix}1 + e^{-2at} & 1 - e^{-2at}\\ 1 - e^{-2at} & 1 + e^{-2at}\end{pmatrix},\quad L = -Q\big|_{b=a}",
            because="the two-state closed form at equal rates",
        ),
        claim(
            "e^{−tL} is symmetric",
            sym - sym.T,
            statement=r"(e^{-tL})^\top = e^{-tL^\top} = e^{-tL}",
            because="L is symmetric",
        ),
        claim(
            "columns of e^{−tL} sum to 1 (doubly stochastic)",
            ones * sym,
            ones,
            statement=r"\mathbf 1^\top e^{-tL} = \mathbf 1^\top",
            because="symmetric and row-stochastic, hence doubly stochastic",
        ),
        claim(
            "(P − I)(P − e^{−2at}I) = 0: its eigenvalues are 1 and e^{−2at} ≤ 1, a contraction in ℓ²",
            ((sym - sp.eye(2)) * (sym - sp.exp(-2 * a * t) * sp.eye(2))).applyfunc(sp.simplify),
            statement=r"(\mathsf P - \mathsf I)(\mathsf P - e^{-2at}\mathsf I) = 0,\quad \operatorname{spec}\mathsf P = \{1, e^{-2at}\},\ \lVert\mathsf P\rVert_2 = 1",
            because="P = e^{−tL} is annihilated by its characteristic polynomial; a symmetric matrix with eigenvalues in [0, 1] is an ℓ² contraction",
        ),
    ]


def _torch_device(backend: str) -> str:
    return backend.split(":", 1)[1] if ":" in backend else "cpu"


def _verify_stochastic(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: the structure of a stochastic matrix (min entry ≥ 0, row sums − 1) and dense
    ``scipy.linalg.expm(t_h Q_h)`` (Padé) on the layer's own dense generator, every head and batch element.
    Rates are pushed up (bias 2, t = 2: λt ≈ 50 Poisson terms); tolerance 1e-12 relative: rounding
    accumulated over ~λt stochastic products, each a few units of roundoff.
    """
    import torch

    from workbench.nn import ExpMarkovAttention

    batch, n, d_model, heads = by_scale(scale, (2, 24, 16, 4), (4, 128, 64, 8))
    device = _torch_device(backend)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**31)))
        layer = ExpMarkovAttention(d_model, heads, offsets=(-4, -2, -1, 1, 2, 4), t_init=2.0)
    layer = layer.to(device=device, dtype=torch.float64)
    with torch.no_grad():
        layer.offset_bias.fill_(2.0)
        x = torch.as_tensor(rng.standard_normal((batch, n, d_model)), device=device)
        _, P = layer(x, return_operator=True)
        generators = layer.generator(x).dense()
        times = layer.times
    P, generators, times = P.cpu().numpy(), generators.cpu().numpy(), times.cpu().numpy()
    structure = _stochastic_defect(P)
    worst = 0.0
    for b in range(batch):
        for h in range(heads):
            exact = scipy.linalg.expm(times[h] * generators[b, h])
            worst = max(worst, float(np.abs(P[b, h] - exact).max() / np.abs(exact).max()))
    return Verification.from_residual(max(structure, worst), 1e-12, n=n, heads=heads, batch=batch)


def _stochastic_defect(P: np.ndarray) -> float:
    """``max(max|P1 − 1|, max(0, −min P))`` over the last two axes (row-stochastic: P ≥ 0, P1 = 1)."""
    return max(float(np.abs(P.sum(axis=-1) - 1.0).max()), max(0.0, -float(P.min())))


def _doubly_defect(P: np.ndarray) -> float:
    """``max(|P − Pᵀ|, |P1 − 1|, |1ᵀP − 1ᵀ|, max(0, −min P), max(0, ‖P‖₂ − 1))`` (entrywise maxima)."""
    norms = np.linalg.norm(P, ord=2, axis=(-2, -1))
    return max(
        float(np.abs(P - np.swapaxes(P, -1, -2)).max()),
        _stochastic_defect(P),
        float(np.abs(P.sum(axis=-2) - 1.0).max()),
        max(0.0, float(norms.max()) - 1.0),
    )


def _layer_generator(rng, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The dense generator of head 0, batch element 0, and its time(s), from the verification's layer (small).

    ``kind`` is ``"markov"`` (:class:`~workbench.nn.ExpMarkovAttention`, offset bias 2, t = 2: Q with Q1 = 0 and
    rates ≥ 0) or ``"heat"`` (:class:`~workbench.nn.HeatKernelAttention`, times 0.3, 2, 10: −L with L = D − W).
    """
    import torch

    from workbench.nn import ExpMarkovAttention, HeatKernelAttention

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**31)))
        if kind == "markov":
            layer = ExpMarkovAttention(16, 4, offsets=(-4, -2, -1, 1, 2, 4), t_init=2.0)
        else:
            layer = HeatKernelAttention(16, 4, times=(0.3, 2.0, 10.0), offsets=(1, 2, 4), mix="concat")
    layer = layer.to(dtype=torch.float64)
    with torch.no_grad():
        if kind == "markov":
            layer.offset_bias.fill_(2.0)
        x = torch.as_tensor(rng.standard_normal((1, 24, 16)))
        generator = layer.generator(x).dense()[0, 0].numpy()
        times = layer.times[0].numpy()
    return generator, np.atleast_1d(times)


def _with_diagonal(rates: np.ndarray) -> np.ndarray:
    """The generator with off-diagonal ``rates`` and the diagonal that makes its rows sum to 0."""
    q = rates - np.diag(np.diag(rates))
    return q - np.diag(q.sum(axis=1))


def _outside_stochastic(q: np.ndarray, t: float, **sizes) -> Verification:
    """P = ``scipy.linalg.expm(t q)`` judged by :func:`_stochastic_defect` with the identity's tolerance 1e-12."""
    return Verification.from_residual(_stochastic_defect(scipy.linalg.expm(t * q)), 1e-12, n=len(q), t=t, **sizes)


def _outside_stochastic_negative_rates(rng) -> Verification:
    """Outside Q_ij ≥ 0: the layer's generator with its offset +1 rates negated, rows re-balanced (Q1 = 0 kept).

    n = 24, t = 2 as in the verification.  The rows of e^{tQ} still sum to 1, but entries turn negative: measured
    min P = −0.69 (residual 0.69 against the tolerance 1e-12), in 10 ms (0.25 s with the first layer built).
    """
    q, t = _layer_generator(rng, "markov")
    rates = q - np.diag(np.diag(q))
    rates += np.diag(-2.0 * np.diag(rates, 1), 1)
    return _outside_stochastic(_with_diagonal(rates), float(t[0]))


def _outside_stochastic_killing(rng) -> Verification:
    """Outside Q1 = 0: the layer's generator with a killing rate κ = 1 at token 0 (Q1 = −e₀), n = 24, t = 2.

    Entries stay ≥ 0 but mass leaks out through token 0: measured max|P1 − 1| = 0.245 against the tolerance 1e-12,
    in 10 ms.
    """
    q, t = _layer_generator(rng, "markov")
    q[0, 0] -= 1.0
    return _outside_stochastic(q, float(t[0]), killing=1.0)


def _outside_stochastic_negative_time(rng) -> Verification:
    """Outside t ≥ 0: the layer's generator at t = −2 (the inverse of e^{2Q}), n = 24.

    Rows still sum to 1 in exact arithmetic, but e^{−2Q} has huge entries of both signs: measured min P = −1.7e17
    (the residual) against the tolerance 1e-12, in 10 ms.
    """
    q, t = _layer_generator(rng, "markov")
    return _outside_stochastic(q, -float(t[0]))


def _verify_doubly(rng, scale, backend) -> Verification:
    """Check the identity numerically.

    Oracles: symmetry, unit row and column sums, min entry ≥ 0 and spectral norm ≤ 1 of every
    e^{−t_{h,s}L_h} the layer returns (``mix='concat'``), and dense ``scipy.linalg.expm(−t L)`` (Padé) on the
    layer's own Laplacian.  Three scales t ∈ {0.3, 2, 10}; tolerance 1e-12: rounding over ~λt products.
    """
    import torch

    from workbench.nn import HeatKernelAttention

    batch, n, d_model, heads = by_scale(scale, (2, 24, 16, 4), (4, 128, 64, 8))
    device = _torch_device(backend)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**31)))
        layer = HeatKernelAttention(d_model, heads, times=(0.3, 2.0, 10.0), offsets=(1, 2, 4), mix="concat")
    layer = layer.to(device=device, dtype=torch.float64)
    with torch.no_grad():
        x = torch.as_tensor(rng.standard_normal((batch, n, d_model)), device=device)
        _, P = layer(x, return_operator=True)  # [B, H, S, n, n]
        generators = layer.generator(x).dense()
        times = layer.times
    P, generators, times = P.cpu().numpy(), generators.cpu().numpy(), times.cpu().numpy()
    structure = _doubly_defect(P)
    worst = 0.0
    for b in range(batch):
        for h in range(heads):
            for s, t in enumerate(times[h]):
                exact = scipy.linalg.expm(t * generators[b, h])
                worst = max(worst, float(np.abs(P[b, h, s] - exact).max() / np.abs(exact).max()))
    return Verification.from_residual(max(structure, worst), 1e-12, n=n, heads=heads, scales=len(times[0]))


def _outside_doubly(minus_l: np.ndarray, times, **sizes) -> Verification:
    """P = ``expm(t·minus_l)`` at each time, judged by :func:`_doubly_defect` with the identity's tolerance 1e-12."""
    P = np.stack([scipy.linalg.expm(t * minus_l) for t in times])
    return Verification.from_residual(_doubly_defect(P), 1e-12, n=len(minus_l), scales=len(times), **sizes)


def _laplacian(weights: np.ndarray) -> np.ndarray:
    """L = D − W for the off-diagonal weights (diagonal of ``weights`` ignored)."""
    w = weights - np.diag(np.diag(weights))
    return np.diag(w.sum(axis=1)) - w


def _outside_doubly_directed(rng) -> Verification:
    """Outside W = Wᵀ: the layer's weights with the upper triangle doubled (W_ij = 2W_ji for i < j), L = D − W.

    n = 24, t ∈ {0.3, 2, 10}.  L1 = 0 still, so P1 = 1, but P ≠ Pᵀ and 1ᵀP ≠ 1ᵀ: measured residual 4.8 (a column sum
    at t = 10; asymmetry 0.24, ‖P‖₂ = 1.7) against the tolerance 1e-12, in 15 ms.
    """
    minus_l, times = _layer_generator(rng, "heat")
    w = minus_l - np.diag(np.diag(minus_l))  # the weights W (off-diagonal of −L)
    return _outside_doubly(-_laplacian(w + np.triu(w, 1)), times)


def _outside_doubly_negative_weight(rng) -> Verification:
    """Outside W ≥ 0: the layer's weights with the edge (0, 1) set to w₀₁ = w₁₀ = −5 (symmetric), L = D − W.

    n = 24, t ∈ {0.3, 2, 10}.  L is no longer positive semidefinite (x = e₀ − e₁ gives xᵀLx < 0), so e^{−tL} grows
    and has negative entries: measured residual 1.8e36 (‖P‖₂ at t = 10; already at t = 0.3, min P = −5.7 and
    ‖P‖₂ = 12) against the tolerance 1e-12, in 15 ms.
    """
    minus_l, times = _layer_generator(rng, "heat")
    w = minus_l - np.diag(np.diag(minus_l))  # the weights W (off-diagonal of −L)
    w[0, 1] = w[1, 0] = -5.0
    return _outside_doubly(-_laplacian(w), times)


def _outside_doubly_negative_time(rng) -> Verification:
    """Outside t ≥ 0: the layer's Laplacian at t ∈ {−0.3, −2, −10}, n = 24.

    e^{+|t|L} is still symmetric with unit row sums, but has norm e^{|t|λ_max(L)} and negative entries: measured
    residual 1.8e31 (‖P‖₂ at t = −10; 8.7 at t = −0.3) against the tolerance 1e-12, in 10 ms.
    """
    minus_l, times = _layer_generator(rng, "heat")
    return _outside_doubly(minus_l, -times)


def _outside_doubly_potential(rng) -> Verification:
    """Outside L1 = 0: the layer's Laplacian plus a potential (killing) V = E₀₀ at token 0, n = 24, t ∈ {0.3, 2, 10}.

    L + V is symmetric positive semidefinite, so P stays symmetric, ≥ 0 and ‖P‖₂ ≤ 1, but P1 < 1: measured
    max|P1 − 1| = 0.58 (at t = 10) against the tolerance 1e-12, in 10 ms.
    """
    minus_l, times = _layer_generator(rng, "heat")
    minus_l[0, 0] -= 1.0
    return _outside_doubly(minus_l, times, potential=1.0)


IDENTITIES = [
    Identity(
        name="nn.exp_markov.stochastic",
        area="nn",
        statement=r"P = e^{tQ(x)} \ge 0,\quad P\mathbf 1 = \mathbf 1\quad"
        r"(Q_{i,i+\delta} = \operatorname{softplus}(\cdot) \ge 0,\ Q\mathbf 1 = 0,\ t \ge 0)",
        source="Lie-Exponential Roadmap: ExpMarkovAttention, structure by construction; uniformization",
        derive=_derive_stochastic,
        verify=_verify_stochastic,
        backends=("torch",),
        hypotheses=(
            Hypothesis(
                "Q_ij ≥ 0 for i ≠ j (the layer's rates are softplus values)",
                "the layer's generator (n = 24, t = 2) with its offset +1 rates negated, rows re-balanced (Q1 = 0)",
                _outside_stochastic_negative_rates,
            ),
            Hypothesis(
                "Q1 = 0: each diagonal entry is minus its row's rate sum (no killing)",
                "the layer's generator (n = 24, t = 2) with a killing rate 1 at token 0: Q1 = −e₀",
                _outside_stochastic_killing,
            ),
            Hypothesis(
                "t ≥ 0 (the layer's times are softplus values)",
                "the layer's generator (n = 24) at t = −2",
                _outside_stochastic_negative_time,
            ),
        ),
    ),
    Identity(
        name="nn.heat_kernel.doubly_stochastic",
        area="nn",
        statement=r"P = e^{-tL(x)} = P^\top \ge 0,\quad P\mathbf 1 = \mathbf 1,\quad \lVert P\rVert_2 \le 1"
        r"\quad (L = D - W,\ W = W^\top \ge 0,\ t \ge 0)",
        source="Lie-Exponential Roadmap: heat-kernel attention, Q = −L the graph Laplacian",
        derive=_derive_doubly,
        verify=_verify_doubly,
        backends=("torch",),
        hypotheses=(
            Hypothesis(
                "W = Wᵀ: symmetric weights (the layer sets W_{i,i+δ} = W_{i+δ,i})",
                "the layer's weights (n = 24, t ∈ {0.3, 2, 10}) with the upper triangle doubled",
                _outside_doubly_directed,
            ),
            Hypothesis(
                "W ≥ 0 (the layer's weights are softplus values)",
                "the layer's weights (n = 24, t ∈ {0.3, 2, 10}) with one edge w₀₁ = w₁₀ = −5",
                _outside_doubly_negative_weight,
            ),
            Hypothesis(
                "t ≥ 0 (the layer's times are softplus values)",
                "the layer's Laplacian (n = 24) at t ∈ {−0.3, −2, −10}",
                _outside_doubly_negative_time,
            ),
            Hypothesis(
                "L = D − W exactly, L1 = 0 (no potential or killing term)",
                "the layer's Laplacian (n = 24, t ∈ {0.3, 2, 10}) plus the potential V = E₀₀ at token 0",
                _outside_doubly_potential,
            ),
        ),
    ),
]
