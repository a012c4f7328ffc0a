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

from derivations._common import by_scale
from workbench.catalogue import Identity, Step, Verification, claim


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
    structure = max(float(np.abs(P.sum(axis=-1) - 1.0).max()), max(0.0, -float(P.min())))
    worst = 0.0
    for b in range(batch):
        for h in range(heads):
            exact = scipy.linalg.expm(times[h] * generators[b, h])
            worst = max(worst, float(np.abs(P[b, h] - exact).max() / np.abs(exact).max()))
    return Verification.from_residual(max(structure, worst), 1e-12, n=n, heads=heads, batch=batch)


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
    norms = np.linalg.norm(P, ord=2, axis=(-2, -1))
    structure = max(
        float(np.abs(P - np.swapaxes(P, -1, -2)).max()),
        float(np.abs(P.sum(axis=-1) - 1.0).max()),
        float(np.abs(P.sum(axis=-2) - 1.0).max()),
        max(0.0, -float(P.min())),
        max(0.0, float(norms.max()) - 1.0),
    )
    worst = 0.0
    for b in range(batch):
        for h in range(heads):
            for s, t in enumerate(times[h]):
                exact = scipy.linalg.expm(t * generators[b, h])
                worst = max(worst, float(np.abs(P[b, h, s] - exact).max() / np.abs(exact).max()))
    return Verification.from_residual(max(structure, worst), 1e-12, n=n, heads=heads, scales=len(times[0]))


IDENTITIES = [
    Identity(
        name="nn.exp_markov.stochastic",
        area="nn",
        statement=r"P = e^{tQ(x)} \ge 0,\quad P\mathbf 1 = \mathbf 1\quad"
        r"(Q_{i,i+\delta} = \operatorname{softplus}(\cdot) \ge 0,\ Q\mathbf 1 = 0)",
        source="Lie-Exponential Roadmap: ExpMarkovAttention, structure by construction; uniformization",
        derive=_derive_stochastic,
        verify=_verify_stochastic,
        backends=("torch",),
    ),
    Identity(
        name="nn.heat_kernel.doubly_stochastic",
        area="nn",
        statement=r"P = e^{-tL(x)} = P^\top \ge 0,\quad P\mathbf 1 = \mathbf 1,\quad \lVert P\rVert_2 \le 1",
        source="Lie-Exponential Roadmap: heat-kernel attention, Q = −L the graph Laplacian",
        derive=_derive_doubly,
        verify=_verify_doubly,
        backends=("torch",),
    ),
]
