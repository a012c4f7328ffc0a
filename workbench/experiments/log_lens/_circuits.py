r"""The measurements of the log-lens study: head circuits, composition scores, rank alignment, change statistics.

A two-layer transformer's heads read and write a shared residual stream.  In the row convention of this workbench
(:math:`q = xW_Q`, a token's features are a row :math:`x \in \mathbb R^{1\times D}`) head :math:`h` scores the
pair (query :math:`i`, key :math:`j`) by the bilinear form of its QK circuit and writes through its OV circuit:

.. math::

    s_{ij} = x_i\, W_{QK}^h\, x_j^\top, \quad W_{QK}^h = F\,W_Q^h W_K^{h\top} F^\top, \qquad
    \text{write}_i = \sum_j P^h_{ij}\, \hat x_j\, W_{OV}^h, \quad W_{OV}^h = F\,W_V^h W_O^h,

with :math:`F = C\operatorname{diag}(\gamma)` the linear part of the pre-attention LayerNorm folded in
(:math:`C = I - \tfrac1D\mathbf 1\mathbf 1^\top` centres, :math:`\gamma` is the gain; its bias and the per-token
:math:`1/\sigma` are not linear in :math:`x` and stay out).  When a layer-0 head :math:`a` writes
:math:`z W_{OV}^a` into the stream that a layer-1 head :math:`b` reads, the write enters :math:`b`'s keys, queries or
values, and the three products are the K-, Q- and V-composition of Elhage et al. (2021):

.. math::

    K_{ab} = \frac{\lVert W_{QK}^b W_{OV}^{a\top}\rVert_F}{\lVert W_{QK}^b\rVert_F\lVert W_{OV}^a\rVert_F}, \quad
    Q_{ab} = \frac{\lVert W_{OV}^a W_{QK}^b\rVert_F}{\lVert W_{OV}^a\rVert_F\lVert W_{QK}^b\rVert_F}, \quad
    V_{ab} = \frac{\lVert W_{OV}^a W_{OV}^b\rVert_F}{\lVert W_{OV}^a\rVert_F\lVert W_{OV}^b\rVert_F} \in [0, 1].

(In the paper's column convention, :math:`W_{OV}^{\mathrm{col}} = W_{OV}^\top`, these are its
:math:`\lVert W_{QK}W_{OV}\rVert`, :math:`\lVert W_{QK}^\top W_{OV}\rVert` and :math:`\lVert W_{OV}W_{OV}\rVert`.)

head_circuits       -- every head's W_OV and W_QK, LayerNorm-folded, read off an InductionTransformer
composition_scores  -- the K-, Q- and V-composition of every (writer, reader) head pair
rank_correlation    -- Spearman's ρ of two samples (ranks with ties averaged, then Pearson)
alignment_test      -- ρ between two head-pair matrices, with the p-value of relabelling the heads
change_statistics   -- where a time series changes fastest, its peak, and how much of its change a window holds

References
----------
N. Elhage et al., "A Mathematical Framework for Transformer Circuits", Transformer Circuits Thread (2021),
sections "Attention heads as information movement" (QK and OV circuits) and "Two-layer attention-only
transformers" (Q-, K- and V-composition); C. Spearman (1904); N. Mantel (1967) (relabelling null).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from workbench.attention import effective_form
from workbench.validation import check_in_range, check_integer

__all__ = ["alignment_test", "change_statistics", "composition_scores", "head_circuits", "rank_correlation"]

#: Operators whose logits are the bilinear form x_i W_QK x_jᵀ of :func:`workbench.attention.effective_form`
#: (ATTN: W_Q W_Kᵀ; DMTN: W_Q W_Kᵀ + ½ W_N W_Nᵀ); DMAP and ATAP add a key-only quadratic term.
BILINEAR_OPERATORS = ("ATTN", "DMTN")

#: Above this many head relabellings (H_a! · H_b!) the alignment test samples instead of enumerating.
MAX_EXACT_RELABELLINGS = 40320


def _layer_norm_fold(block, d_model: int) -> np.ndarray:
    gamma = block.norm_attention.weight.detach().cpu().double().numpy()
    return (np.eye(d_model) - 1.0 / d_model) * gamma[None, :]  # C diag(γ)


def head_circuits(model, *, fold_layer_norm: bool = True) -> tuple[np.ndarray, np.ndarray]:
    r"""Every head's OV and QK circuit of a trained :class:`~workbench.experiments.InductionTransformer`.

    .. math::

        W_{OV}^{\ell h} = F_\ell W_V^{h} W_O^{h}, \qquad W_{QK}^{\ell h} = F_\ell\,\mathcal W^{h}\,F_\ell^\top,
        \qquad F_\ell = C\operatorname{diag}(\gamma_\ell)\ \ (\text{or } I \text{ without folding}),

    row convention: :math:`W_Q^h, W_K^h, W_V^h` are the :math:`D\times d_h` column blocks of the layer's
    projections and :math:`W_O^h` the :math:`d_h\times D` row block of its output map; :math:`\mathcal W^h` is
    the operator's effective form (:func:`~workbench.attention.effective_form`: :math:`W_Q^hW_K^{h\top}` for
    ATTN, :math:`W_Q^hW_K^{h\top} + \tfrac12W_N^hW_N^{h\top}` for DMTN), whose logits are
    :math:`\beta\,u_i\mathcal W^h u_j^\top` in the head's input :math:`u = \mathrm{LN}(x)`.  Head :math:`h`'s
    contribution to the attention sublayer on a sequence :math:`X` is then
    :math:`P^h\operatorname{diag}(1/\sigma)\,X\,W_{OV}^h + \mathbf 1\,\beta_{\mathrm{LN}}^\top W_V^hW_O^h`
    (:math:`\sigma` the per-token LayerNorm scale, :math:`\beta_{\mathrm{LN}}` its bias); the score's
    :math:`\beta = 1/\sqrt{d_h}` is left out.

    Parameters
    ----------
    model : InductionTransformer
        Any number of layers, operator ATTN or DMTN (:data:`BILINEAR_OPERATORS`: logits bilinear in the
        tokens); DMAP and ATAP are refused (their logits add a key-only quadratic term).
    fold_layer_norm : bool
        Fold :math:`C\operatorname{diag}(\gamma_\ell)` in (default); ``False`` gives the bare products.

    Returns
    -------
    W_OV, W_QK : numpy.ndarray, shape=[L, H, D, D], float64

    References
    ----------
    Elhage et al. (2021), "Attention heads as information movement" (the QK and OV circuits; LayerNorm folded
    into the adjacent weights).

    Examples
    --------
    >>> import numpy as np, torch
    >>> from workbench.experiments import InductionTransformer
    >>> torch.manual_seed(0) and None
    >>> model = InductionTransformer(8, 6, 8, 2)
    >>> W_OV, W_QK = head_circuits(model)
    >>> W_OV.shape, int(np.linalg.matrix_rank(W_OV[0, 0]))  # rank d_h = 4
    ((2, 2, 8, 8), 4)
    >>> bool(np.allclose(np.ones(8) @ W_OV[1, 0], 0, atol=1e-12))  # C kills the all-ones direction (LayerNorm)
    True
    """
    if getattr(model, "operator", None) not in BILINEAR_OPERATORS:
        raise ValueError(
            f"model.operator must be one of {BILINEAR_OPERATORS} (logits bilinear in the tokens), "
            f"got {getattr(model, 'operator', None)!r}"
        )
    blocks = list(model.blocks)
    D = int(model.embed.weight.shape[1])
    W_OV, W_QK = [], []
    for block in blocks:
        layer = block.attention
        dh = layer.d_head
        F = _layer_norm_fold(block, D) if fold_layer_norm else np.eye(D)
        value = layer.value.weight.detach().cpu().double().numpy()  # [D_out, D_in]: v = x Wᵀ
        out = layer.out.weight.detach().cpu().double().numpy()
        ov, qk = [], []
        for h, (W_Q, W_K) in enumerate(layer.head_weights()):
            block_h = slice(h * dh, (h + 1) * dh)
            ov.append(F @ value[block_h].T @ out[:, block_h].T)
            symmetric, skew = effective_form(W_Q, W_K, layer.operator)
            qk.append(F @ (symmetric + skew) @ F.T)
        W_OV.append(ov)
        W_QK.append(qk)
    return np.array(W_OV), np.array(W_QK)


def _normalised_products(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """‖A_a B_b‖_F / (‖A_a‖_F ‖B_b‖_F) for every a, b (0/0 := 0)."""
    product = np.linalg.norm(left[:, None] @ right[None, :], axis=(-2, -1))
    scale = np.linalg.norm(left, axis=(-2, -1))[:, None] * np.linalg.norm(right, axis=(-2, -1))[None, :]
    return np.divide(product, scale, out=np.zeros_like(product), where=scale > 0)


def composition_scores(writer_ov, reader_qk, reader_ov) -> dict[str, np.ndarray]:
    r"""K-, Q- and V-composition of every (writer head :math:`a`, reader head :math:`b`) pair, row convention.

    .. math::

        K_{ab} = \frac{\lVert W_{QK}^b W_{OV}^{a\top}\rVert_F}{\lVert W_{QK}^b\rVert_F\lVert W_{OV}^a\rVert_F},
        \quad Q_{ab} = \frac{\lVert W_{OV}^a W_{QK}^b\rVert_F}{\lVert W_{OV}^a\rVert_F\lVert W_{QK}^b\rVert_F},
        \quad V_{ab} = \frac{\lVert W_{OV}^a W_{OV}^b\rVert_F}{\lVert W_{OV}^a\rVert_F\lVert W_{OV}^b\rVert_F}

    (:math:`0/0 := 0`).  Each lies in :math:`[0, 1]` (:math:`\lVert AB\rVert_F \le \lVert A\rVert_F\lVert B\rVert_F`).
    For rank-one circuits :math:`W_{OV}^a = u v^\top` (reads :math:`u`, writes :math:`v`) and
    :math:`W_{QK}^b = p\,r^\top` (queries read :math:`p`, keys read :math:`r`), :math:`K_{ab} = |\cos(v, r)|`,
    :math:`Q_{ab} = |\cos(v, p)|`: the cosine between what :math:`a` writes and what :math:`b`'s keys (queries) read.

    Parameters
    ----------
    writer_ov : array_like, shape=[H_a, D, D]
        :math:`W_{OV}` of the writing (earlier-layer) heads.
    reader_qk, reader_ov : array_like, shape=[H_b, D, D]
        :math:`W_{QK}` and :math:`W_{OV}` of the reading (later-layer) heads.

    Returns
    -------
    dict
        ``{"K", "Q", "V"}``, each a float64 array ``shape=[H_a, H_b]``.

    References
    ----------
    Elhage et al. (2021), "Two-layer attention-only transformers": Q-, K- and V-composition.

    Examples
    --------
    >>> import numpy as np
    >>> u, v, p, r = np.eye(3)[0], np.eye(3)[1], np.eye(3)[2], np.array([0.0, 0.6, 0.8])
    >>> scores = composition_scores([np.outer(u, v)], [np.outer(p, r)], [np.outer(v, u)])
    >>> float(scores["K"][0, 0]), float(scores["Q"][0, 0]), float(scores["V"][0, 0])  # cos(v, r) = 0.6
    (0.6, 0.0, 1.0)
    """
    A = _stack("writer_ov", writer_ov)
    QK = _stack("reader_qk", reader_qk)
    OV = _stack("reader_ov", reader_ov)
    if QK.shape != OV.shape or QK.shape[1:] != A.shape[1:]:
        raise ValueError(
            f"reader_qk and reader_ov must have shape [H_b, D, D] with the writers' D = {A.shape[-1]}, "
            f"got {QK.shape} and {OV.shape}"
        )
    return {
        "K": _normalised_products(QK, np.swapaxes(A, -1, -2)).T,
        "Q": _normalised_products(A, QK),
        "V": _normalised_products(A, OV),
    }


def _stack(name: str, value) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 3 or array.shape[1] != array.shape[2] or array.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty stack of square matrices, shape [H, D, D], got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def rank_correlation(x, y) -> float:
    r"""Spearman's :math:`\rho`: the Pearson correlation of the ranks (ties get their average rank).

    .. math::

        \rho = \frac{\sum_k (R_k - \bar R)(S_k - \bar S)}{\sqrt{\sum_k (R_k - \bar R)^2\sum_k (S_k - \bar S)^2}},
        \qquad R = \operatorname{rank}(x),\ S = \operatorname{rank}(y).

    Parameters
    ----------
    x, y : array_like, shape=[n]
        Finite samples, :math:`n \ge 3`.

    Returns
    -------
    float
        In :math:`[-1, 1]`.

    Raises
    ------
    ValueError
        If a sample is constant (the ranks have no spread: :math:`\rho` is undefined), non-finite, or too short.

    References
    ----------
    C. Spearman, "The proof and measurement of association between two things", Am. J. Psychol. 15 (1904).

    Examples
    --------
    >>> rank_correlation([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 25.0, 100.0])  # monotone: ρ = 1
    1.0
    >>> rank_correlation([1.0, 2.0, 3.0], [3.0, 3.0, 3.0])
    Traceback (most recent call last):
        ...
    ValueError: y must not be constant (Spearman's rho is undefined), got all values equal to 3
    """
    from scipy.stats import rankdata

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or x.size < 3:
        raise ValueError(f"x and y must be 1-dimensional of equal length >= 3, got shapes {x.shape} and {y.shape}")
    for name, v in (("x", x), ("y", y)):
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite")
        if np.all(v == v[0]):
            raise ValueError(
                f"{name} must not be constant (Spearman's rho is undefined), got all values equal to {v[0]:g}"
            )
    R, S = rankdata(x) - (x.size + 1) / 2, rankdata(y) - (x.size + 1) / 2
    return float(np.clip(R @ S / math.sqrt((R @ R) * (S @ S)), -1.0, 1.0))


def _relabellings(rows: int, cols: int, permutations: int, seed: int):
    total = math.factorial(rows) * math.factorial(cols)
    if total <= MAX_EXACT_RELABELLINGS:
        return list(itertools.product(itertools.permutations(range(rows)), itertools.permutations(range(cols)))), True
    rng = np.random.default_rng(seed)
    drawn = [(tuple(range(rows)), tuple(range(cols)))]  # the observed labelling counts once (a valid p-value)
    drawn += [(tuple(rng.permutation(rows)), tuple(rng.permutation(cols))) for _ in range(permutations)]
    return drawn, False


def alignment_test(A, B, *, permutations: int = 9999, seed: int = 0) -> dict:
    r"""Spearman's :math:`\rho` between two head-pair matrices, with a relabelling p-value.

    :math:`\rho` compares :math:`A_{ab}` and :math:`B_{ab}` over the pairs where :math:`A` is finite.  The null
    relabels the heads of :math:`B`, rows and columns independently: :math:`\rho_{\pi\tau}` between
    :math:`A_{ab}` and :math:`B_{\pi(a)\tau(b)}`, and

    .. math::

        p = \frac{\#\{(\pi, \tau): |\rho_{\pi\tau}| \ge |\rho|\}}{\#\{(\pi, \tau)\}}

    (two-sided), over all :math:`H_a!\,H_b!` relabellings when there are at most
    :data:`MAX_EXACT_RELABELLINGS`, else over the identity and ``permutations`` random ones.  Relabelling keeps
    each matrix's structure by head (a row of large entries stays a row) and only breaks their correspondence,
    the null of a Mantel test; the pairs themselves are not independent, so a pair-level t-test would not be valid.

    Parameters
    ----------
    A, B : array_like, shape=[H_a, H_b]
        ``A`` may hold NaN (a pair without a measurement); ``B`` must be finite.
    permutations : int
        Random relabellings when the exact enumeration is too large.
    seed : int
        Seeds those draws.

    Returns
    -------
    dict
        ``rho``, ``p_value``, ``pairs`` (finite pairs used), ``relabellings``, ``exact``.

    Raises
    ------
    ValueError
        Shapes differ, fewer than 3 finite pairs, or a constant sample (see :func:`rank_correlation`).

    References
    ----------
    N. Mantel, "The detection of disease clustering and a generalized regression approach", Cancer Res. 27
    (1967) (the relabelling null); C. Spearman (1904).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[1.0, 5.0, 2.0], [7.0, 3.0, 9.0], [4.0, 8.0, 6.0]])
    >>> result = alignment_test(A, A**3)  # monotone: ρ = 1; of the 3!·3! = 36 relabellings only the identity
    >>> result["rho"], result["p_value"] * 36, result["exact"]
    (1.0, 1.0, True)
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.ndim != 2 or A.shape != B.shape:
        raise ValueError(f"A and B must be matrices of one shape [H_a, H_b], got {A.shape} and {B.shape}")
    if not np.all(np.isfinite(B)):
        raise ValueError("B must be finite")
    permutations = check_integer("permutations", permutations, 1)
    mask = np.isfinite(A)
    rho = rank_correlation(A[mask], B[mask])
    labellings, exact = _relabellings(*A.shape, permutations, seed)
    hits = 0
    for rows, cols in labellings:
        relabelled = B[np.ix_(rows, cols)][mask]
        try:
            value = rank_correlation(A[mask], relabelled)
        except ValueError:  # a relabelled sample can be constant on the mask: it is not as extreme
            continue
        hits += abs(value) >= abs(rho) - 1e-12  # ties within rounding count as extreme
    return {
        "rho": rho,
        "p_value": hits / len(labellings),
        "pairs": int(mask.sum()),
        "relabellings": len(labellings),
        "exact": exact,
    }


def _moving_average(values: np.ndarray, width: int) -> np.ndarray:
    """Centred moving average of ``width`` points; near the ends the window shrinks to the points that exist."""
    kernel = np.ones(width)
    return np.convolve(values, kernel, mode="same") / np.convolve(np.ones_like(values), kernel, mode="same")


def change_statistics(steps, values, window=None, *, smooth: int = 1) -> dict:
    r"""Where a training-time series changes fastest, where it peaks, and how much of its change a window holds.

    With :math:`s_k` the series at the logged steps :math:`\tau_k`, smoothed by a centred moving average of
    ``smooth`` points:

    * ``spike_step``: the midpoint of the interval of steepest change,
      :math:`k^* = \arg\max_k |s_{k+1} - s_k| / (\tau_{k+1} - \tau_k)`;
    * ``peak_step``: :math:`\tau_{\arg\max_k s_k}`;
    * with a window :math:`[\tau_a, \tau_b]` (e.g. the phase transition's), the **concentration**

    .. math::

        c = \frac{\sum_{k:\ [\tau_k, \tau_{k+1}] \subseteq [\tau_a, \tau_b]} |s_{k+1} - s_k|}
                 {\sum_k |s_{k+1} - s_k|} \Big/ \frac{\tau_b - \tau_a}{\tau_{\mathrm{last}} - \tau_0},

    the share of the series' total variation inside the window over the window's share of the time: 1 for a
    series that changes at a steady rate, :math:`(\tau_{\mathrm{last}} - \tau_0)/(\tau_b - \tau_a)` for one that
    jumps only inside the window, 0 for one constant there.

    Parameters
    ----------
    steps : array_like, shape=[K]
        Strictly increasing, :math:`K \ge 2`.
    values : array_like, shape=[K]
        The series; NaN values are refused.
    window : (float, float), optional
        :math:`\tau_a < \tau_b` inside the logged span.
    smooth : int
        Odd moving-average width in points (1: none).

    Returns
    -------
    dict
        ``spike_step``, ``spike_rate`` (the signed steepest slope), ``peak_step``, ``concentration`` (``None``
        without a window or for a constant series), ``window_change`` (:math:`s_b - s_a`, ``None`` without a window).

    References
    ----------
    Lie-Exponential Roadmap, "Log-Lens Diagnostics" ("use spikes in commutator norms to drive targeted
    pruning/fusion or curriculum on depth") [SEED]; the statistics are this workbench's [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> steps = np.arange(0.0, 101.0, 10.0)
    >>> jump = np.where(steps < 45, 0.0, 1.0)  # jumps between steps 40 and 50
    >>> stats = change_statistics(steps, jump, (40.0, 60.0))
    >>> stats["spike_step"], stats["concentration"]  # all the change in a fifth of the time: c = 5
    (45.0, 5.0)
    >>> change_statistics(steps, 2 * steps, (40.0, 60.0))["concentration"]  # steady change: c = 1
    1.0
    """
    tau = np.asarray(steps, dtype=np.float64)
    s = np.asarray(values, dtype=np.float64)
    if tau.ndim != 1 or tau.size < 2 or s.shape != tau.shape:
        raise ValueError(f"steps and values must be 1-dimensional of equal length >= 2, got {tau.shape} and {s.shape}")
    if not np.all(np.diff(tau) > 0):
        raise ValueError("steps must be strictly increasing")
    if not np.all(np.isfinite(s)):
        raise ValueError(f"values must be finite, got {int((~np.isfinite(s)).sum())} non-finite values")
    smooth = check_integer("smooth", smooth, 1)
    if smooth % 2 == 0:
        raise ValueError(f"smooth must be an odd integer >= 1, got {smooth}")
    s = _moving_average(s, smooth) if smooth > 1 else s
    delta = np.diff(s)
    slopes = delta / np.diff(tau)
    k = int(np.argmax(np.abs(slopes)))
    result = {
        "spike_step": float(0.5 * (tau[k] + tau[k + 1])),
        "spike_rate": float(slopes[k]),
        "peak_step": float(tau[int(np.argmax(s))]),
        "concentration": None,
        "window_change": None,
    }
    if window is None:
        return result
    a, b = (float(check_in_range("window", w, tau[0], tau[-1])) for w in window)
    if not a < b:
        raise ValueError(f"window must be (start, end) with start < end, got {tuple(window)}")
    inside = (tau[:-1] >= a) & (tau[1:] <= b)
    total = float(np.abs(delta).sum())
    result["window_change"] = float(np.interp(b, tau, s) - np.interp(a, tau, s))
    if total > 0:
        result["concentration"] = float(np.abs(delta[inside]).sum() / total / ((b - a) / (tau[-1] - tau[0])))
    return result
