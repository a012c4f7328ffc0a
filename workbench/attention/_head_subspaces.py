r"""Heads as points of a Grassmannian, and whether heads that lie close attend alike.

A head of multi-head attention reads its input :math:`X \in \mathbb R^{N\times D}` through :math:`XW_Q^h`,
:math:`XW_K^h`, :math:`XW_V^h` (:math:`W \in \mathbb R^{D\times d_h}`) and writes through :math:`W_O^h \in
\mathbb R^{d_h\times D}`.  What it reads depends on :math:`X` only through the projection onto the column space
of :math:`W_Q^h` (resp. :math:`W_K^h, W_V^h`), and what it writes lies in the row space of :math:`W_O^h`: four
points of :math:`\mathrm{Gr}(d_h, D)`, a manifold of dimension :math:`d_h(D - d_h)`.  The gauge :math:`W_Q \mapsto
W_QG`, :math:`W_K \mapsto W_KG^{-\top}` leaves the scores :math:`q_i\cdot k_j` and all four subspaces unchanged,
so the subspaces are properties of the head, not of its parameterisation.

ISA ML01 claims that heads which attend to similar features lie close on this manifold.  Read as a measurement:
across the heads of a model, the rank correlation between the distance of two heads' subspaces and the distance
of their attention patterns (mean total variation between their Markov operators over a corpus) is positive.
:func:`mantel_test` measures it with the permutation test that respects the dependence between pairs that share a
head; "close" is measured against independent uniformly random subspaces (:func:`subspace_null`).

Conventions: the subspaces are of the space each head reads, the attention input (for a pre-LN block, the
normed residual stream); biases are left out (an offset :math:`\mathbf 1 b` changes no direction read).

References
----------
ISA ML01 (multi-head attention as a point of a product of Grassmannians); Vaswani et al. (2017) §3.2.2; Mantel
(1967), Cancer Res. 27(2), 209–220 (the permutation test of two distance matrices); Legendre & Legendre (2012),
*Numerical Ecology*, 3rd ed., §10.5.1 (Mantel with ranks; restricted permutations within strata).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from workbench.attention._grassmann import (
    GRASSMANN_METRICS,
    distance_from_angles,
    grassmann_dimension,
    principal_angles,
    random_principal_angles,
    subspace_basis,
)
from workbench.attention._heads import MultiHeadAttention
from workbench.backend import check_view_size, host_array, to_numpy
from workbench.validation import as_array, check_choice, check_in_range, check_integer, check_row_stochastic

__all__ = [
    "HEAD_MAPS",
    "HeadSubspaces",
    "RankCorrelation",
    "SubspaceNull",
    "attention_pattern_distance",
    "head_subspace_angles",
    "head_subspace_distances",
    "head_subspaces",
    "mantel_test",
    "subspace_null",
]

#: The four subspaces of a head: the column spaces of W_Q, W_K, W_V and of W_Oᵀ.
HEAD_MAPS = ("Q", "K", "V", "O")


@dataclass(frozen=True)
class HeadSubspaces:
    """The four subspaces of every head of one multi-head attention (see :func:`head_subspaces`).

    Attributes
    ----------
    d_model : int
    d_head : int
        The width of the query/key maps (the value width may differ; ``widths`` has both).
    bases : dict of str to tuple of ndarray
        ``bases["Q"][h]`` is an orthonormal basis ``[D, r]`` of head ``h``'s query subspace.
    ranks : dict of str to tuple of int
        The numerical ranks; below the map's width means the map is rank-deficient.
    widths : dict of str to int
        The number of columns of each map (:math:`d_h`, or :math:`d_v` for V and O).
    """

    d_model: int
    d_head: int
    bases: dict
    ranks: dict
    widths: dict

    @property
    def n_heads(self) -> int:
        return len(self.bases["Q"])

    @property
    def dimension(self) -> int:
        r""":math:`\dim\mathrm{Gr}(d_h, D) = d_h(D - d_h)`, where a full-rank query subspace lies."""
        return grassmann_dimension(self.d_model, self.d_head)

    @classmethod
    def concatenate(cls, parts) -> HeadSubspaces:
        """The heads of several layers as one list (same ``d_model`` and ``d_head``), e.g. a whole model."""
        if isinstance(parts, (str, bytes)) or not isinstance(parts, Iterable):
            raise TypeError(f"parts must be a non-empty sequence of HeadSubspaces, got {type(parts).__name__}")
        parts = list(parts)
        if not parts or not all(isinstance(p, HeadSubspaces) for p in parts):
            kinds = sorted({type(p).__name__ for p in parts}) or ["nothing"]
            raise TypeError(f"parts must be a non-empty sequence of HeadSubspaces, got {', '.join(kinds)}")
        shapes = {(p.d_model, p.d_head) for p in parts}
        if len(shapes) != 1:
            raise ValueError(f"parts must share d_model and d_head, got {sorted(shapes)}")
        first = parts[0]
        return cls(
            first.d_model,
            first.d_head,
            {name: sum((p.bases[name] for p in parts), ()) for name in HEAD_MAPS},
            {name: sum((p.ranks[name] for p in parts), ()) for name in HEAD_MAPS},
            dict(first.widths),
        )

    @property
    def deficient(self) -> list[tuple[str, int, int]]:
        """``(map, head, rank)`` of every rank-deficient map."""
        return [(name, h, r) for name in HEAD_MAPS for h, r in enumerate(self.ranks[name]) if r < self.widths[name]]


def head_subspaces(attention: MultiHeadAttention, *, rtol: float | None = None) -> HeadSubspaces:
    r"""The four subspaces of every head: orthonormal bases of the column spaces of W_Q, W_K, W_V and W_Oᵀ.

    .. math::

        \operatorname{col} W_Q^h,\ \operatorname{col} W_K^h,\ \operatorname{col} W_V^h,\
        \operatorname{col} (W_O^h)^\top \subset \mathbb R^D .

    Parameters
    ----------
    attention : MultiHeadAttention
        numpy or torch weights (read on the host in float64).
    rtol : float, optional
        Rank threshold of :func:`~workbench.attention.subspace_basis`.

    Returns
    -------
    HeadSubspaces

    References
    ----------
    ISA ML01; Vaswani et al. (2017) §3.2.2.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import random_multihead
    >>> s = head_subspaces(random_multihead(np.random.default_rng(0), 4, 16, 4))
    >>> s.n_heads, s.bases["Q"][0].shape, s.dimension, s.deficient
    (4, (16, 4), 48, [])
    """
    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention must be a MultiHeadAttention, got {type(attention).__name__}")
    maps = {
        "Q": to_numpy(attention.W_Q),
        "K": to_numpy(attention.W_K),
        "V": to_numpy(attention.W_V),
        "O": np.swapaxes(to_numpy(attention.W_O), -1, -2),  # [H, D, d_v]: the row space of W_O^h
    }
    bases, ranks, widths = {}, {}, {}
    for name, stack in maps.items():
        stack = np.asarray(stack, dtype=np.float64)
        subspaces = [subspace_basis(W, rtol=rtol) for W in stack]
        bases[name] = tuple(s.basis for s in subspaces)
        ranks[name] = tuple(s.rank for s in subspaces)
        widths[name] = int(stack.shape[-1])
    return HeadSubspaces(attention.d_model, attention.d_head, bases, ranks, widths)


def _pair_angles(first: tuple, second: tuple | None = None) -> list[list[np.ndarray]]:
    """Principal angles of every pair (a, b): one batched call when the ranks agree, else one call per pair."""
    second = first if second is None else second
    if len({b.shape for b in first} | {b.shape for b in second}) == 1:
        A, B = np.stack(first), np.stack(second)
        theta = principal_angles(A[:, None], B[None, :], orthonormal=True)  # [H1, H2, m]
        return [[theta[a, b] for b in range(len(second))] for a in range(len(first))]
    return [[principal_angles(A, B, orthonormal=True) for B in second] for A in first]


def head_subspace_angles(
    subspaces: HeadSubspaces,
    map: str = "Q",
    *,
    other: HeadSubspaces | None = None,
    other_map: str | None = None,
) -> list[list[np.ndarray]]:
    r"""The principal angles between head subspaces, ``angles[a][b]`` ascending (radians).

    With ``other`` and ``other_map``: between head :math:`a`'s ``map`` subspace and head :math:`b`'s ``other_map``
    subspace of ``other`` (e.g. what a head of one layer writes, ``"O"``, against what a head of a later layer
    reads, ``"K"``: the K-composition of Elhage et al. 2021).

    Parameters
    ----------
    subspaces : HeadSubspaces
    map : {"Q", "K", "V", "O"}
    other : HeadSubspaces, optional
        Default ``subspaces``.
    other_map : {"Q", "K", "V", "O"}, optional
        Default ``map``.

    Returns
    -------
    list of list of ndarray
        ``angles[a][b]`` has :math:`\min(r_a, r_b)` entries; with the defaults ``angles[a][a]`` is zero to
        rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import random_multihead
    >>> s = head_subspaces(random_multihead(np.random.default_rng(0), 2, 12, 3))
    >>> theta = head_subspace_angles(s, "O", other=s, other_map="Q")
    >>> len(theta), len(theta[0]), theta[0][1].shape
    (2, 2, (3,))
    """
    _check_subspaces(subspaces)
    map = check_choice("map", map, HEAD_MAPS)
    other = subspaces if other is None else other
    _check_subspaces(other)
    other_map = map if other_map is None else check_choice("other_map", other_map, HEAD_MAPS)
    if other.d_model != subspaces.d_model:
        raise ValueError(
            f"other must hold subspaces of the same space, got d_model {other.d_model} and {subspaces.d_model}"
        )
    return _pair_angles(subspaces.bases[map], other.bases[other_map])


def head_subspace_distances(subspaces: HeadSubspaces, map: str = "Q", metric: str = "geodesic") -> np.ndarray:
    r"""The head-by-head Grassmannian distance matrix of one kind of subspace.

    .. math::

        D_{ab} = d\big(\operatorname{col} W^a, \operatorname{col} W^b\big), \qquad W \in \{W_Q, W_K, W_V, W_O^\top\},

    with :math:`d` one of :data:`~workbench.attention.GRASSMANN_METRICS` (default the geodesic distance
    :math:`\lVert\theta\rVert_2`).

    Parameters
    ----------
    subspaces : HeadSubspaces
    map : {"Q", "K", "V", "O"}
    metric : str

    Returns
    -------
    ndarray, shape=[H, H]
        Symmetric, zero diagonal.

    References
    ----------
    Edelman, Arias & Smith (1998) §4.3; ISA ML01.

    Examples
    --------
    Heads that share their query map sit at distance 0; independent random heads near the null's median:

    >>> import numpy as np
    >>> from workbench.attention import random_multihead
    >>> s = head_subspaces(random_multihead(np.random.default_rng(0), 3, 64, 8))
    >>> D = head_subspace_distances(s, "Q")
    >>> null = subspace_null(64, 8, samples=256, seed=0)
    >>> bool(np.all(np.abs(D[~np.eye(3, dtype=bool)] - null.median) < 0.2))
    True
    """
    metric = check_choice("metric", metric, GRASSMANN_METRICS)
    angles = head_subspace_angles(subspaces, map)
    H = len(angles)
    D = np.zeros((H, H))
    for a in range(H):
        for b in range(a + 1, H):
            D[a, b] = D[b, a] = float(distance_from_angles(angles[a][b], metric))
    return D


def _check_subspaces(subspaces) -> None:
    if not isinstance(subspaces, HeadSubspaces):
        raise TypeError(f"subspaces must be a HeadSubspaces (from head_subspaces), got {type(subspaces).__name__}")


@dataclass(frozen=True)
class SubspaceNull:
    r"""Distances and angles between independent uniform :math:`k`-planes of :math:`\mathbb R^n` (Monte Carlo).

    Attributes
    ----------
    n, k, samples, seed : int
    metric : str
    distances : ndarray, shape=[samples]
    median_angles : ndarray, shape=[samples]
        The median principal angle of each random pair.
    smallest_angles : ndarray, shape=[samples]
    """

    n: int
    k: int
    samples: int
    seed: int
    metric: str
    distances: np.ndarray
    median_angles: np.ndarray
    smallest_angles: np.ndarray

    @property
    def median(self) -> float:
        """The null median of the distance."""
        return float(np.median(self.distances))

    def quantile(self, q: float) -> float:
        """The ``q``-quantile of the null distance, ``q`` in [0, 1]."""
        return float(np.quantile(self.distances, check_in_range("q", q, 0.0, 1.0)))

    def fraction_below(self, d) -> np.ndarray:
        r"""The share of random pairs closer than ``d``: :math:`\hat p = (1 + \#\{d_s \le d\})/(1 + S)`."""
        check_view_size("d", d)
        values = host_array("d", d)
        if values.dtype.kind not in "biuf":
            raise TypeError(f"d must be real distances, got dtype {values.dtype}")
        d = values.astype(np.float64)
        if np.isnan(d).any():
            raise ValueError("d must not contain NaN (±inf are allowed: shares 1/(1 + S) and 1)")
        counts = np.searchsorted(np.sort(self.distances), d, side="right")
        return (1.0 + counts) / (1.0 + self.samples)


def subspace_null(n: int, k: int, *, metric: str = "geodesic", samples: int = 256, seed: int = 0) -> SubspaceNull:
    r"""The random-subspace null of :func:`head_subspace_distances` (cached per arguments).

    Distances between pairs of independent Haar-distributed :math:`k`-planes of :math:`\mathbb R^n`; two heads
    are *closer than chance* when their distance is below the null's 5 % quantile.  The squared cosines of the
    angles follow :class:`~workbench.attention.WachterLaw` for large :math:`n` (a test checks the sample against
    it).

    Parameters
    ----------
    n, k : int
        :math:`D` and :math:`d_h`.
    metric : str
    samples : int
        Pairs drawn, at most 4,096.
    seed : int

    Returns
    -------
    SubspaceNull

    References
    ----------
    Absil, Edelman & Koev (2006); Wachter (1980).

    Examples
    --------
    >>> null = subspace_null(384, 32, samples=128)
    >>> smallest = float(np.degrees(np.median(null.smallest_angles)))  # the Wachter edge is 56.4°
    >>> 54 < smallest < 62
    True
    """
    n = check_integer("n", n, 2)
    k = check_integer("k", k, 1, n - 1)
    metric = check_choice("metric", metric, GRASSMANN_METRICS)
    samples = check_integer("samples", samples, 1, 4096)
    seed = check_integer("seed", seed, 0)
    return _null(n, k, metric, samples, seed)


@functools.lru_cache(maxsize=32)
def _null(n: int, k: int, metric: str, samples: int, seed: int) -> SubspaceNull:
    theta = random_principal_angles(n, k, samples=samples, seed=seed)
    distances = distance_from_angles(theta, metric)
    for array in (theta, distances):
        array.setflags(write=False)
    median, smallest = np.median(theta, axis=-1), theta[:, 0].copy()
    median.setflags(write=False)
    smallest.setflags(write=False)
    return SubspaceNull(n, k, samples, seed, metric, distances, median, smallest)


def attention_pattern_distance(A, *, rows=None) -> np.ndarray:
    r"""The head-by-head mean total-variation distance between attention patterns.

    .. math::

        T_{ab} = \frac{1}{|R|}\sum_{i \in R} \tfrac12 \sum_j \big|\mathsf P^{(a)}_{ij} - \mathsf P^{(b)}_{ij}\big|
        \in [0, 1],

    averaged over any leading axes (windows of a corpus) as well, :math:`R` the rows read (default all).

    Parameters
    ----------
    A : array, shape=[..., H, n, n]
        Row-stochastic attention of every head.
    rows : array of bool, shape=[n], optional
        The query positions to average over (e.g. the content tokens).

    Returns
    -------
    ndarray, shape=[H, H]

    References
    ----------
    Levin & Peres (2017), *Markov Chains and Mixing Times*, 2nd ed., §4.1 (total variation); ISA ML01.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.stack([np.eye(3), np.full((3, 3), 1 / 3)])  # a delta head and a uniform head
    >>> attention_pattern_distance(A).round(4).tolist()
    [[0.0, 0.6667], [0.6667, 0.0]]
    """
    A = as_array("A", A, min_ndim=3)
    H, n = A.shape[-3], A.shape[-1]
    if A.shape[-2] != n or 0 in tuple(A.shape):
        raise ValueError(
            f"A must hold square attention matrices, shape [..., H, n, n] with every size ≥ 1, got {tuple(A.shape)}"
        )
    check_row_stochastic("A", A)  # in its own dtype: float32 attention gets a float32 tolerance
    A = np.asarray(to_numpy(A), dtype=np.float64)
    A = A.reshape(-1, H, n, n)
    if rows is not None:
        rows = host_array("rows", rows)
        if rows.dtype != bool or rows.shape != (n,):
            raise ValueError(f"rows must be a boolean array of shape ({n},), got {rows.dtype} {rows.shape}")
        if not rows.any():
            raise ValueError("rows must select at least one query position, got none")
        A = A[:, :, rows, :]
    T = np.zeros((H, H))
    for a in range(H):
        T[a] = 0.5 * np.abs(A[:, a : a + 1] - A).sum(axis=-1).mean(axis=(0, 2))
    return 0.5 * (T + T.T)  # exact symmetry; each half already equals the other up to rounding


@dataclass(frozen=True)
class RankCorrelation:
    """A Spearman correlation between two distance matrices and its permutation p-value (:func:`mantel_test`)."""

    rho: float
    p_value: float
    pairs: int
    permutations: int
    alternative: str
    exact: bool


def _check_distance_matrix(name: str, D) -> np.ndarray:
    D = np.asarray(to_numpy(as_array(name, D, ndim=2)), dtype=np.float64)
    if D.shape[0] != D.shape[1]:
        raise ValueError(f"{name} must be a square distance matrix, got shape {D.shape}")
    if not np.allclose(D, D.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric, got max |D - Dᵀ| = {np.abs(D - D.T).max():.3g}")
    return D


def mantel_test(
    D1,
    D2,
    *,
    strata=None,
    permutations: int = 9999,
    seed: int = 0,
    alternative: str = "greater",
) -> RankCorrelation:
    r"""Spearman's :math:`\rho` between the pairs of two distance matrices, with a Mantel permutation test.

    .. math::

        \rho = \operatorname{corr}\big(\operatorname{rank} D^{(1)}_{ab},\ \operatorname{rank} D^{(2)}_{ab}\big)
        \quad\text{over the pairs } a < b, \qquad
        p = \frac{1 + \#\{\pi : \rho_\pi \ge \rho\}}{1 + \#\pi}\ \text{(``greater'')},

    where :math:`\rho_\pi` relabels the heads of :math:`D^{(2)}` by a random permutation :math:`\pi`.  Pairs that
    share a head are not independent, so the pairs themselves are never shuffled: the whole matrix is relabelled.
    With ``strata`` (e.g. each head's layer) only pairs within a stratum enter and :math:`\pi` permutes within
    strata (a restricted permutation test; strata may differ in size).  When all relabellings number at most
    ``permutations`` they are enumerated and the p-value is exact, :math:`\#\{\pi : \rho_\pi \ge \rho\}/\#\pi`.
    (Written here rather than with ``scipy.stats.permutation_test``, whose paired mode needs strata of one size.)

    Parameters
    ----------
    D1, D2 : array, shape=[h, h]
        Symmetric (e.g. subspace distance and attention-pattern distance).
    strata : sequence of length h, optional
    permutations : int
        Random relabellings, 99 to 10**6.
    seed : int
    alternative : {"greater", "less", "two-sided"}

    Returns
    -------
    RankCorrelation

    Raises
    ------
    ValueError
        If the matrices differ in shape, are not symmetric, or give fewer than 3 pairs.

    References
    ----------
    Mantel (1967); Legendre & Legendre (2012), ch. 10; Spearman (1904), Amer. J. Psychol. 15(1), 72–101.

    Examples
    --------
    A matrix against a monotone transform of itself has ρ = 1 and the smallest p-value of the test:

    >>> import numpy as np
    >>> x = np.random.default_rng(0).standard_normal((6, 2))
    >>> D = np.linalg.norm(x[:, None] - x[None], axis=-1)
    >>> r = mantel_test(D, np.sqrt(D), permutations=999)
    >>> round(r.rho, 12), r.pairs, r.exact, r.p_value == 1 / 720
    (1.0, 15, True, True)
    """
    from scipy import stats

    D1, D2 = _check_distance_matrix("D1", D1), _check_distance_matrix("D2", D2)
    if D1.shape != D2.shape:
        raise ValueError(f"D1 and D2 must have the same shape, got {D1.shape} and {D2.shape}")
    h = D1.shape[0]
    permutations = check_integer("permutations", permutations, 99, 10**6)
    seed = check_integer("seed", seed, 0)
    alternative = check_choice("alternative", alternative, ("greater", "less", "two-sided"))
    labels = np.zeros(h, dtype=int) if strata is None else host_array("strata", strata)
    if labels.shape != (h,):
        raise ValueError(f"strata must give one label per head ({h}), got shape {labels.shape}")
    rows, cols = np.triu_indices(h, 1)
    keep = labels[rows] == labels[cols]
    rows, cols = rows[keep], cols[keep]
    if rows.size < 3:
        raise ValueError(f"the test needs at least 3 pairs of heads (within strata), got {rows.size}")
    for name, D in (("D1", D1), ("D2", D2)):
        if np.ptp(D[rows, cols]) == 0:
            raise ValueError(f"{name} must take at least two distinct values on the pairs (ρ is undefined)")
    r1 = stats.rankdata(D1[rows, cols])
    r1 = (r1 - r1.mean()) / np.linalg.norm(r1 - r1.mean())
    # Relabelling within strata maps the within-stratum pairs onto themselves, so the ranks of D2's pairs are
    # a fixed set: rank once, then each ρ_π is one dot product.
    R2 = np.zeros((h, h))
    R2[rows, cols] = stats.rankdata(D2[rows, cols])
    R2 = R2 + R2.T
    centre = R2[rows, cols].mean()
    scale = np.linalg.norm(R2[rows, cols] - centre)
    groups = [np.flatnonzero(labels == value) for value in np.unique(labels)]
    groups = [g for g in groups if g.size > 1]

    def correlations(perm: np.ndarray) -> np.ndarray:  # perm [N, h] → ρ_π [N]
        return ((R2[perm[:, rows], perm[:, cols]] - centre) / scale) @ r1

    rho = float(correlations(np.arange(h)[None])[0])
    total = math.prod(math.factorial(g.size) for g in groups)
    exact = total <= permutations
    if exact:  # every relabelling once (the identity among them)
        perms = np.tile(np.arange(h), (total, 1))
        for index, choice in enumerate(itertools.product(*(itertools.permutations(g) for g in groups))):
            for group, image in zip(groups, choice, strict=True):
                perms[index, group] = image
        null = np.concatenate([correlations(block) for block in np.array_split(perms, max(1, total // 4096))])
        count = total
    else:
        rng = np.random.default_rng(seed)
        null, done = [], 0
        while done < permutations:
            size = min(4096, permutations - done)
            perms = np.tile(np.arange(h), (size, 1))
            for group in groups:
                perms[:, group] = rng.permuted(np.tile(group, (size, 1)), axis=1)
            null.append(correlations(perms))
            done += size
        null = np.concatenate(null)
        count = permutations
    slack = 1e-12 * max(1.0, abs(rho))  # ρ_π equal to ρ up to rounding counts as "at least as extreme"
    extra = 0 if exact else 1  # the observed labelling, counted once when the relabellings are drawn
    greater = (extra + np.sum(null >= rho - slack)) / (extra + count)
    less = (extra + np.sum(null <= rho + slack)) / (extra + count)
    p_value = {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}[alternative]
    return RankCorrelation(rho, float(p_value), int(rows.size), int(count), alternative, exact)
