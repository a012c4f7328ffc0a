r"""One call that reads every head of an encoder as an operator: the ``workbench diagnose`` report.

Per head (layer :math:`\ell`, head :math:`h`, on the layer's actual input :math:`X^\ell`):

- mean row entropy :math:`\bar H` and the effective neighbour count :math:`e^{\bar H}` [RECON §A.10];
- the detailed-balance residual :math:`\varepsilon_{\mathrm{rev}}` of its Markov operator [RECON §A.10];
- the score skew ratio :math:`\rho_{\mathrm{skew}} = \lVert\tilde M_A\rVert_F/\lVert\tilde M_S\rVert_F` of its
  bilinear form.  With query/key biases the scores are :math:`q_i\cdot k_j = \tilde x_i\tilde M\tilde x_j^\top`
  on augmented rows :math:`\tilde x = (x, 1)`, :math:`\tilde M = \tilde W_Q\tilde W_K^\top`,
  :math:`\tilde W = \binom{W}{b}`, so the split is exact with biases too;
- the inertia of the bond :math:`\tilde M_S` (its definiteness: DMAP/DMTN need a definite bond);
- :math:`\delta_{\mathrm{orth}}` of its value-output map :math:`M_h = W_V^hW_O^h` [SEED Eq. (15)];
- previous-token and induction scores on a repeated random token sequence (:func:`circuit_scores`);
- the nearest of the three constrained corners DMAP, DMTN, ATAP, with its mean row total-variation
  distance; the head is called by that corner when the distance is at most 0.1, and ATTN otherwise (the
  rule of :func:`~workbench.attention.nearest_corner`, a workbench choice).

Per layer: the same entropy, :math:`\varepsilon_{\mathrm{rev}}` of the effective walk :math:`A_{\mathrm{eff}}`
(on all tokens, and among the non-special tokens with rows renormalised: in an encoder the ``[CLS]``/``[SEP]``
sinks carry most of :math:`\pi` and hide the current of the rest),
:math:`\delta_{\mathrm{orth}}` of the effective transports (weighted by :math:`A_{\mathrm{eff}}` over pairs of
non-special tokens), the drift :math:`d_A` to the next layer on the same pairs [SEED §B.6],
:math:`\lVert A_{\mathrm{eff}}\rVert_F` (all pairs, sinks included), the loop inconsistency (scale-free
holonomy defect of :math:`O^{\mathrm{eff}}` around triangles of consecutive tokens [RECON §B.6]), the diagonal
dominance of the mean transport Gram matrix (Connection Laplacian's Figure 2(b) reading) and the connection-energy ratio
:math:`\mathcal E_c(X)/\sum_i\pi_i\lVert X_i\rVert^2`.

References
----------
Attention Geometry §7, §9 (Table 1); "From Self-Attention to Connection Laplacian" §7 (metrics);
book/reference.md §A.7, §A.10, §B.6.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from workbench.attention._circuits import induction_score, previous_token_score
from workbench.attention._corners import corner_distances
from workbench.attention._effective import geometric_drift
from workbench.attention._entropy import mean_entropy
from workbench.attention._forms import factored_bond_eigenvalues, spectrum_inertia, spectrum_negative_mass
from workbench.attention._heads import MultiHeadAttention
from workbench.attention._mixing import effective_connection_energy
from workbench.attention._operators import OPERATORS
from workbench.attention._overflow import binary_scale
from workbench.attention._polar import factored_orthogonality_deviation, factored_transport_gram
from workbench.attention._pretrained import BertEncoder
from workbench.attention._reversibility import reversibility_residual, score_skew_ratio
from workbench.validation import check_integer

__all__ = ["Diagnosis", "HeadReading", "LayerReading", "circuit_scores", "diagnose", "plot_diagnosis"]

CORNER_TOLERANCE = 0.1  # the default of nearest_corner: projecting may move ≤ 10% of a row's mass
BOND_RTOL = 1e-10  # the default of bond_inertia: |λ| ≤ 1e-10·max|λ| counts as zero


def _check_model(model) -> BertEncoder:
    if not isinstance(model, BertEncoder):
        raise TypeError(f"model must be a BertEncoder (from load_minilm), got {type(model).__name__}")
    return model


@dataclass(frozen=True)
class HeadReading:
    """The operator reading of one head (see the module docstring for each quantity)."""

    layer: int
    head: int
    entropy: float
    effective_neighbours: float
    eps_rev: float
    rho_skew: float
    delta_orth: float
    inertia: tuple[int, int, int]
    negative_mass: float
    corner: str  # nearest of DMAP/DMTN/ATAP if within the tolerance of nearest_corner, else ATTN
    nearest_constrained: str  # nearest of DMAP/DMTN/ATAP, whatever the distance
    corner_distance: float  # its mean row total-variation distance from the head
    previous_token: float  # on the repeated random probe sequence
    induction: float


@dataclass(frozen=True)
class LayerReading:
    """The operator reading of one layer's effective walk and transport."""

    layer: int
    entropy: float
    effective_neighbours: float
    eps_rev: float
    eps_rev_content: float  # ε_rev of A_eff restricted to non-special tokens (rows renormalised)
    rho_skew: float
    delta_orth: float
    drift: float | None
    a_eff_norm: float
    gram_diagonal_ratio: float
    energy_ratio: float
    loop_inconsistency: float  # mean ‖Hol/s − I‖_F/√d over triangles of consecutive non-special tokens
    corners: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagnosis:
    """The report of :func:`diagnose`: per-head and per-layer readings, and the arrays behind the plots."""

    model: str
    text: str
    tokens: list[str]
    heads: list[HeadReading]
    layers: list[LayerReading]
    a_eff: np.ndarray  # shape [L, n, n]
    mean_gram: np.ndarray  # shape [L, D, D]
    content: np.ndarray  # non-special tokens, shape [n]

    def to_dict(self) -> dict:
        """A JSON-ready document (the arrays are left out)."""
        return {
            "model": self.model,
            "text": self.text,
            "tokens": list(self.tokens),
            "layers": [asdict(layer) for layer in self.layers],
            "heads": [asdict(head) | {"inertia": list(head.inertia)} for head in self.heads],
        }


def _augmented(weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    # q_i = x_i W + b = (x_i, 1) (W; b): biases become one more row of an exact bilinear form
    return weight if bias is None else np.vstack([weight, bias[None, :]])


def _head_reading(
    layer: int, h: int, mha: MultiHeadAttention, X: np.ndarray, P: np.ndarray, circuits, delta_orth: float
) -> HeadReading:
    head = mha.head(h)
    W_Q, W_K = _augmented(head.W_Q, head.b_Q), _augmented(head.W_K, head.b_K)
    X_aug = np.hstack([X, np.ones((X.shape[0], 1))]) if W_Q.shape[0] > X.shape[1] else X
    M = W_Q @ W_K.T
    # the bond ½(M + Mᵀ) has rank ≤ 2·d_head: its spectrum from the factors (the D − 2·d_head zeros are exact)
    bond = factored_bond_eigenvalues(W_Q, W_K)
    distances = corner_distances(X_aug, W_Q, W_K, beta=head.beta)
    nearest = min(("DMAP", "DMTN", "ATAP"), key=lambda name: distances[name])
    entropy = mean_entropy(P)
    return HeadReading(
        layer=layer,
        head=h,
        entropy=entropy,
        effective_neighbours=math.exp(entropy),
        eps_rev=reversibility_residual(P),
        rho_skew=score_skew_ratio(M),
        delta_orth=float(delta_orth),
        inertia=spectrum_inertia(bond, BOND_RTOL),
        negative_mass=spectrum_negative_mass(bond),
        corner=nearest if distances[nearest] <= CORNER_TOLERANCE else "ATTN",
        nearest_constrained=nearest,
        corner_distance=distances[nearest],
        previous_token=float(circuits[0][layer, h]),
        induction=float(circuits[1][layer, h]),
    )


def diagnose(model, text: str, *, model_name: str = "minilm") -> Diagnosis:
    r"""Read every head and layer of ``model`` on ``text`` as a Markov operator and a connection.

    Parameters
    ----------
    model : BertEncoder
        From :func:`~workbench.attention.load_minilm`.
    text : str
        One text; the pairs of non-special tokens (not ``[CLS]``/``[SEP]``) are the support of
        :math:`\delta_{\mathrm{orth}}` and :math:`d_A`, as Connection Laplacian does for BERT.
    model_name : str
        Recorded in the report.

    Returns
    -------
    Diagnosis

    Raises
    ------
    ValueError
        If ``text`` is empty, or has no token besides the special ones.

    Examples
    --------
    >>> import math
    >>> from workbench.attention import load_minilm
    >>> report = diagnose(load_minilm(), "Attention is a Markov operator.")  # about 1 s on one core
    >>> len(report.layers), len(report.heads)
    (6, 72)
    >>> all(0 <= head.eps_rev <= math.sqrt(2) for head in report.heads)  # ε_rev ≤ √2 always
    True
    """
    _check_model(model)
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a string (a label for the report), got {type(model_name).__name__}")
    if not model_name.strip():
        raise ValueError(f"model_name must be a non-empty label for the report, got {model_name!r}")
    trace = model.trace(text)
    content = ~trace.special
    if not content.any():
        raise ValueError(f"text must contain at least one non-special token, got tokens {trace.tokens}")
    pairs = content[:, None] & content[None, :]
    circuits = circuit_scores(model)
    heads: list[HeadReading] = []
    layers: list[LayerReading] = []
    a_eff, grams = [], []
    for index, layer in enumerate(model.layers):
        X, A = trace.layer_inputs[index], trace.attention[index]
        mha = layer.attention
        # δ_orth of each M_h = W_V^h W_O^h and the layer's transport Gram, from the rank-d_head factors
        head_delta = factored_orthogonality_deviation(mha.W_V, mha.W_O)
        readings = [_head_reading(index, h, mha, X, A[h], circuits, head_delta[h]) for h in range(A.shape[0])]
        heads.extend(readings)
        M = mha.value_output_maps()  # once per layer, for the energy and the loops
        A_eff = A.mean(axis=0)
        gram = factored_transport_gram(A, mha.W_V, mha.W_O, mask=pairs)
        pi = _stationary(A_eff)
        energy = effective_connection_energy(A, M, X, pi=pi)
        diagonal = np.abs(np.diag(gram.mean_gram)).mean()
        off = np.abs(gram.mean_gram - np.diag(np.diag(gram.mean_gram))).sum() / (X.shape[1] * (X.shape[1] - 1))
        corners = {name: sum(r.corner == name for r in readings) for name in OPERATORS}
        entropy = float(np.mean([r.entropy for r in readings]))
        layers.append(
            LayerReading(
                layer=index,
                entropy=entropy,
                effective_neighbours=math.exp(entropy),
                eps_rev=reversibility_residual(A_eff),
                eps_rev_content=_content_reversibility(A_eff, content),
                rho_skew=float(np.mean([r.rho_skew for r in readings])),
                delta_orth=gram.mean,
                drift=None,
                a_eff_norm=float(np.linalg.norm(A_eff)),
                gram_diagonal_ratio=float(diagonal / off),
                energy_ratio=energy / float(np.sum(pi * np.sum(X * X, axis=1))),
                loop_inconsistency=_loop_inconsistency(A, M, np.flatnonzero(content)),
                corners=corners,
            )
        )
        a_eff.append(A_eff)
        grams.append(gram.mean_gram)
    # d_A^{ℓ→ℓ+1}, on the non-special pairs
    layers = [
        LayerReading(**(asdict(r) | {"drift": geometric_drift(a_eff[r.layer], a_eff[r.layer + 1], mask=pairs)}))
        if r.layer + 1 < len(layers)
        else r
        for r in layers
    ]
    return Diagnosis(model_name, text, trace.tokens, heads, layers, np.stack(a_eff), np.stack(grams), content)


def circuit_scores(model, *, seed: int = 0, half_length: int = 24) -> tuple[np.ndarray, np.ndarray]:
    r"""Previous-token and induction scores of every head on a repeated random token sequence.

    The probe is :math:`2T` word pieces drawn uniformly from the ordinary vocabulary (ids 1999–29999 of the
    BERT vocabulary: no special or ``[unused]`` tokens), the second half repeating the first, fed without
    ``[CLS]``/``[SEP]``.  A previous-token head puts its mass on :math:`i - 1`; an induction head, in the
    second half, on the token after the earlier occurrence of the current one (:func:`induction_score`).
    A bidirectional encoder trained without such a task need not have either; the scores say how much.

    Parameters
    ----------
    model : BertEncoder
    seed : int
        Seed of the probe sequence.
    half_length : int
        :math:`T`.

    Returns
    -------
    previous_token, induction : ndarray, shape=[L, H]
    """
    _check_model(model)
    seed = check_integer("seed", seed, 0)
    half_length = check_integer("half_length", half_length, 1, model.max_length // 2)
    rng = np.random.default_rng(seed)
    half = rng.integers(1999, 30000, size=half_length)
    ids = np.concatenate([half, half])
    attention = model.trace_ids(ids).attention
    return previous_token_score(attention), induction_score(attention, ids)


def _content_reversibility(A_eff: np.ndarray, content: np.ndarray) -> float:
    """ε_rev of the walk among non-special tokens: [CLS]/[SEP] sinks hold most of π and hide the current."""
    if content.sum() < 2:
        return math.nan
    walk = A_eff[np.ix_(content, content)]
    return reversibility_residual(walk / walk.sum(axis=1, keepdims=True))


def _loop_inconsistency(A: np.ndarray, M: np.ndarray, tokens: np.ndarray) -> float:
    """Mean scale-free holonomy defect of O_eff around the triangles (t, t+1, t+2) of consecutive tokens.

    Only the three transports of each triangle are formed (O_eff_ij = Σ_h w_h(i,j) M_h, one matrix product for
    the three), never the n²d² array; the value is that of ``holonomy_deviation(O_eff, [(a, b, c, a)],
    remove_scale=True)`` (tested against it).  NaN when there are fewer than three tokens.
    """
    H, d = M.shape[0], M.shape[-1]
    maps = (M / binary_scale(M)).reshape(H, d * d)  # the defect is scale-free; dividing by 2^e is exact
    identity = np.eye(d)
    values = []
    for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False):
        # the walk a → b → c → a: Hol = O_ba O_cb O_ac in the row convention (holonomy)
        weights = A[:, [b, c, a], [a, b, c]].T  # [3, H]
        O_ba, O_cb, O_ac = ((weights / weights.sum(axis=1, keepdims=True)) @ maps).reshape(3, d, d)
        hol = O_ba @ O_cb @ O_ac
        hol = hol / binary_scale(hol)
        scale = float(np.sqrt(np.sum(hol**2))) / math.sqrt(d)
        if scale == 0.0:
            raise ValueError(f"the holonomy around tokens {(a, b, c, a)} is zero, so it has no scale to remove")
        values.append(float(np.sqrt(np.sum((hol / scale - identity) ** 2))) / math.sqrt(d))
    return float(np.mean(values)) if values else math.nan


def _stationary(A: np.ndarray) -> np.ndarray:
    from workbench.markov import MarkovOperator

    return np.asarray(MarkovOperator(A).stationary, dtype=np.float64)


def plot_diagnosis(diagnosis: Diagnosis, path=None):
    r"""Heatmaps of each layer's effective walk and mean transport Gram matrix (the Connection Laplacian Figure 2).

    Row 1: :math:`A_{\mathrm{eff}}^\ell` on the non-special tokens (the ``[CLS]``/``[SEP]`` sinks removed, rows
    renormalised for display).  Row 2: the :math:`A_{\mathrm{eff}}`-weighted mean Gram matrix
    :math:`\bar G^\ell` of the transports, its leading 48×48 block, on a symmetric colour scale.  Every heatmap
    has its own colour bar, labelled with its quantity.

    Parameters
    ----------
    diagnosis : Diagnosis
    path : str or Path, optional
        Where to save the figure (PNG, PDF, ... by suffix).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(diagnosis, Diagnosis):
        raise TypeError(f"diagnosis must be a Diagnosis (from diagnose), got {type(diagnosis).__name__}")
    import matplotlib.pyplot as plt

    L = diagnosis.a_eff.shape[0]
    keep = np.flatnonzero(diagnosis.content)
    labels = [diagnosis.tokens[i] for i in keep]
    fig, axes = plt.subplots(2, L, figsize=(3.6 * L, 6.6), squeeze=False, constrained_layout=True)
    for layer in range(L):
        walk = diagnosis.a_eff[layer][np.ix_(keep, keep)]
        walk = walk / walk.sum(axis=1, keepdims=True)
        ax = axes[0, layer]
        image = ax.imshow(walk, cmap="viridis", vmin=0.0)
        ax.set_title(f"layer {layer}: $A_{{\\rm eff}}$", fontsize=10)
        ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        ax.set_xlabel("attended token $j$", fontsize=9)
        ax.set_ylabel("query token $i$", fontsize=9)
        bar = fig.colorbar(image, ax=ax, shrink=0.75)
        bar.set_label(r"$A_{\rm eff}(i, j)$, rows renormalised", fontsize=8)
        bar.ax.tick_params(labelsize=8)
        block = diagnosis.mean_gram[layer][:48, :48]
        bound = float(np.abs(block).max())
        ax = axes[1, layer]
        image = ax.imshow(block, cmap="RdBu_r", vmin=-bound, vmax=bound)
        ratio = diagnosis.layers[layer].gram_diagonal_ratio
        ax.set_title(rf"$\bar G$: |diag| / |off-diag| = {ratio:.1f}", fontsize=9)
        ax.set_xticks([0, 16, 32, 47])
        ax.set_yticks([0, 16, 32, 47])
        ax.tick_params(labelsize=8)
        ax.set_xlabel("feature $b$ (first 48 of $D$)", fontsize=9)
        ax.set_ylabel("feature $a$", fontsize=9)
        bar = fig.colorbar(image, ax=ax, shrink=0.75)
        bar.set_label(r"mean transport Gram $\bar G_{ab}$", fontsize=8)
        bar.ax.tick_params(labelsize=8)
    fig.suptitle(f"{diagnosis.model}: {diagnosis.text!r}", fontsize=11)
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
