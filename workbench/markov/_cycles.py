r"""Cycle affinities, the Kolmogorov criterion and the Hodge split of edge fields.

A Markov operator :math:`\mathsf P` (row-stochastic, acting from the left, :math:`(\mathsf Pf)_i =
\sum_j \mathsf P_{ij} f_j`; positive generator :math:`\mathsf L = I - \mathsf P`) whose support is
symmetric defines an undirected *support graph* and an antisymmetric edge field, the log-ratio

.. math::

    \theta_{ij} = \log\frac{\mathsf P_{ij}}{\mathsf P_{ji}} .

Its sum around a cycle :math:`\gamma = (i_0 \to i_1 \to \dots \to i_k = i_0)` is the Schnakenberg cycle
affinity :math:`\mathfrak A(\gamma)`.  The affinity is additive over the cycle space, so it is
determined by its values on a cycle basis (:math:`m - n + c` cycles for a graph with :math:`m` edges,
:math:`n` vertices and :math:`c` connected components).  The Kolmogorov criterion says the chain is
reversible exactly when every affinity vanishes, i.e. when :math:`\theta` is a gradient
(:math:`\theta_{ij} = \log\pi_j - \log\pi_i`).

For an attention head :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))`
with a symmetric bond :math:`\mathcal S` and an antisymmetric link :math:`\mathcal A`, the partition
functions telescope around a cycle and :math:`\mathfrak A(\gamma) = 2\beta\sum_m \mathcal A_{i_m i_{m+1}}`:
twice the holonomy of the link.  :func:`hodge_split` separates any antisymmetric edge field into its
gradient (exact) part, which carries no circulation, and its divergence-free (coexact) part, which
carries all of it.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4, §7; attention-geometry-math §A.4 and §A.7 "Cycle
affinities" [DERIVED].  J. Schnakenberg, "Network theory of microscopic and macroscopic behavior of master
equation systems", Rev. Mod. Phys. 48 (1976) 571.  A. Kolmogorov, "Zur Theorie der Markoffschen Ketten",
Math. Ann. 112 (1936) 155.  L.-H. Lim, "Hodge Laplacians on graphs", SIAM Review 62 (2020) 685.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import array_api_compat
import networkx as nx
import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.csgraph
import scipy.sparse.linalg

from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, as_sparse, check_nonnegative, check_square, check_symmetric, is_sparse

__all__ = [
    "HodgeDecomposition",
    "cycle_affinities",
    "cycle_basis",
    "hodge_split",
    "kolmogorov_residual",
    "support_graph",
]


# --- boundary helpers shared with _beurling_deny (dense numpy/torch or scipy.sparse) -------------------


def _square_matrix(name, x):
    """Return ``(matrix, is_sparse)``: a float dense array (numpy/torch) or a private canonical CSR array."""
    if is_sparse(x):
        # Stored zeros are kept: a stored zero distance is still a pair of the pattern.
        x = as_sparse(name, x, keep_zeros=True)
        check_square(name, x)
        return x, True
    x = as_array(name, x, ndim=2)
    check_square(name, x)
    return x, False


def _symmetry_gap(x, sparse, *, sign):
    """Return ``(max |x - sign·xᵀ|, max |x|)`` (``sign=+1``: symmetry; ``-1``: antisymmetry)."""
    if sparse:
        gap = abs(x - sign * x.T)
        return (float(gap.max()) if gap.nnz else 0.0), (float(abs(x).max()) if x.nnz else 0.0)
    if int(x.shape[0]) == 0:
        return 0.0, 0.0
    xp = namespace(x)
    gap = float(xp.max(xp.abs(x - sign * xp.matrix_transpose(x))))
    return gap, float(xp.max(xp.abs(x)))


def _check_antisymmetric(name, x, sparse, *, rtol=1e-12):
    gap, scale = _symmetry_gap(x, sparse, sign=-1)
    tiny = np.finfo(float).tiny
    if gap > rtol * max(scale, tiny):
        raise ValueError(
            f"{name} must be antisymmetric, got max |{name} + {name}^T| = {gap:.6g} "
            f"(relative {gap / max(scale, tiny):.6g})"
        )


def _like(array, reference):
    """Return the numpy ``array`` in the library, dtype and device of the dense ``reference``."""
    if array_api_compat.is_torch_array(reference):
        import torch

        return torch.as_tensor(array, dtype=reference.dtype, device=reference.device)
    return array


def _lookup(matrix, sparse, rows, cols):
    """Entries ``matrix[rows[k], cols[k]]`` (numpy index arrays); dense stays in its own library."""
    if sparse:
        return np.asarray(matrix[rows, cols], dtype=np.float64).ravel()
    xp = namespace(matrix)
    device = array_api_compat.device(matrix)
    return matrix[xp.asarray(rows, device=device), xp.asarray(cols, device=device)]


# --- the support graph and its cycles --------------------------------------------------------------------


def _support_edges(name, P, sparse):
    """Undirected edges ``i < j`` with ``P_ij > 0`` and ``P_ji > 0``; raise if the support is not symmetric."""
    n = int(P.shape[0])
    if sparse:
        coo = P.tocoo()  # row-major: the canonical CSR was sorted
        keep = (coo.data > 0) & (coo.row != coo.col)
        rows, cols = coo.row[keep].astype(np.intp), coo.col[keep].astype(np.intp)
        pattern = scipy.sparse.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
        one_way = (pattern - pattern.T).tocoo()
        forward_only = one_way.data > 0
        if forward_only.any():
            r, c = one_way.row[forward_only], one_way.col[forward_only]
            k = int(np.lexsort((c, r))[0])
            _raise_one_way(name, int(r[k]), int(c[k]), float(P[int(r[k]), int(c[k])]))
        upper = rows < cols
        return n, rows[upper], cols[upper]
    host = np.asarray(to_numpy(P))
    positive = host > 0
    np.fill_diagonal(positive, False)  # self-loops carry zero affinity and close no cycle
    one_way = positive & ~positive.T
    if one_way.any():
        i, j = (int(v) for v in np.argwhere(one_way)[0])
        _raise_one_way(name, i, j, float(host[i, j]))
    rows, cols = np.nonzero(np.triu(positive, 1))
    return n, rows.astype(np.intp), cols.astype(np.intp)


def _raise_one_way(name, i, j, value):
    raise ValueError(
        f"{name} must have symmetric support ({name}[i, j] > 0 exactly when {name}[j, i] > 0), got "
        f"{name}[{i}, {j}] = {value:.6g} but {name}[{j}, {i}] = 0: the pair ({i}, {j}) is irreversible, the "
        f"affinity log({name}[{i}, {j}]/{name}[{j}, {i}]) of any cycle through it is infinite, and {name} is "
        "reversible with respect to no positive law"
    )


def _graph(n, rows, cols):
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(zip(rows.tolist(), cols.tolist(), strict=True))
    return graph


def _nonnegative_matrix(name, P):
    P, sparse = _square_matrix(name, P)
    check_nonnegative(name, P)
    return P, sparse


def support_graph(P):
    r"""Undirected support graph :math:`\{i, j\}` with :math:`\mathsf P_{ij} > 0` and :math:`\mathsf P_{ji} > 0`.

    Cycle affinities need a symmetric support: a pair with :math:`\mathsf P_{ij} > 0 = \mathsf P_{ji}`
    makes :math:`\log(\mathsf P_{ij}/\mathsf P_{ji}) = +\infty`, and such a chain is reversible with respect
    to no positive law.  The diagonal is ignored (self-loops carry zero affinity).

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Nonnegative; a Markov operator, or any matrix of transition weights or jump rates.

    Returns
    -------
    networkx.Graph
        Vertices ``0, ..., n-1`` (isolated ones included) and one edge per supported pair.

    Raises
    ------
    ValueError
        If the support is not symmetric, naming the first offending pair in row-major order.

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.0, 1.0, 0.0]])
    >>> sorted(support_graph(P).edges)  # the path 0 - 1 - 2, read off the nonzero pairs by hand
    [(0, 1), (1, 2)]
    """
    P, sparse = _nonnegative_matrix("P", P)
    return _graph(*_support_edges("P", P, sparse))


def _fundamental_cycles(graph):
    # Paton's algorithm (networkx.cycle_basis): one cycle per non-tree edge of a spanning forest.  These
    # fundamental cycles are a basis of the cycle space over the integers and the reals, not only over GF(2).
    return [(*cycle, cycle[0]) for cycle in nx.cycle_basis(graph)]


def cycle_basis(P):
    r"""A fundamental cycle basis of the support graph of :math:`\mathsf P`, as closed vertex sequences.

    Each cycle is a tuple :math:`(i_0, i_1, \dots, i_{k-1}, i_0)`.  There are

    .. math::

        \dim Z_1 = m - n + c

    of them (the cyclomatic number: :math:`m` edges, :math:`n` vertices, :math:`c` connected components);
    on the complete graph :math:`K_N` that is :math:`(N-1)(N-2)/2`.  The cycles are the fundamental cycles of
    a spanning forest (Paton's algorithm, :func:`networkx.cycle_basis`), so every cycle of the graph is an
    integer combination of them, and any function additive over cycles, such as the affinity, is fixed by
    its values on this basis.  The orientation of each cycle is the one networkx returns.

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Nonnegative, with symmetric support (see :func:`support_graph`).

    Returns
    -------
    list of tuple of int

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" [DERIVED]; K. Paton, Comm. ACM 12 (1969) 514.

    Examples
    --------
    >>> import numpy as np
    >>> N = 5
    >>> P = np.full((N, N), 1.0 / N)  # complete support graph K_5
    >>> len(cycle_basis(P)) == N * (N - 1) // 2 - N + 1 == (N - 1) * (N - 2) // 2
    True
    """
    P, sparse = _nonnegative_matrix("P", P)
    return _fundamental_cycles(_graph(*_support_edges("P", P, sparse)))


def _cycle_edges(cycles, n):
    """Concatenated oriented edges of all cycles, and the start offset of each cycle in them."""
    if isinstance(cycles, (str, bytes)) or not isinstance(cycles, Sequence):
        raise TypeError(f"cycles must be a sequence of vertex sequences, got {type(cycles).__name__}")
    sources, targets, starts, offset = [], [], [], 0
    for k, cycle in enumerate(cycles):
        try:
            vertices = np.asarray(cycle)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cycles[{k}] must be a sequence of vertex indices, got {cycle!r}") from exc
        if vertices.ndim != 1 or (vertices.size and vertices.dtype.kind not in "iu"):
            raise TypeError(f"cycles[{k}] must be a sequence of integer vertex indices, got {cycle!r}")
        vertices = vertices.astype(np.intp)
        if vertices.size >= 2 and vertices[0] == vertices[-1]:
            vertices = vertices[:-1]  # closed form (i_0, ..., i_{k-1}, i_0)
        if vertices.size < 2:
            raise ValueError(f"cycles[{k}] must visit at least 2 vertices, got {cycle!r}")
        if vertices.min() < 0 or vertices.max() >= n:
            raise ValueError(f"cycles[{k}] must hold vertex indices in [0, {n}), got {cycle!r}")
        following = np.roll(vertices, -1)
        if np.any(vertices == following):
            raise ValueError(f"cycles[{k}] must not stay at a vertex (consecutive repeats), got {cycle!r}")
        sources.append(vertices)
        targets.append(following)
        starts.append(offset)
        offset += vertices.size
    if not starts:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty, empty
    return np.concatenate(sources), np.concatenate(targets), np.asarray(starts, dtype=np.intp)


def _segment_sums(values, starts):
    """Sums of ``values`` over the consecutive segments beginning at ``starts`` (exact, no cumulative sum)."""
    if array_api_compat.is_torch_array(values):
        import torch

        lengths = np.diff(np.append(starts, int(values.shape[0])))
        segment = torch.as_tensor(np.repeat(np.arange(starts.size), lengths), device=values.device)
        return torch.zeros(starts.size, dtype=values.dtype, device=values.device).index_add_(0, segment, values)
    return np.add.reduceat(values, starts)


def cycle_affinities(P, cycles=None):
    r"""Schnakenberg cycle affinities :math:`\mathfrak A(\gamma) = \sum_m \log(\mathsf P_{i_m i_{m+1}}/\mathsf P_{i_{m+1} i_m})`.

    For a cycle :math:`\gamma = (i_0 \to i_1 \to \dots \to i_k = i_0)`,

    .. math::

        \mathfrak A(\gamma) = \sum_{m=0}^{k-1} \log\frac{\mathsf P_{i_m i_{m+1}}}{\mathsf P_{i_{m+1} i_m}}
                           = \log\frac{\Pr(\text{run around } \gamma)}{\Pr(\text{run around } \gamma^{-1})} .

    It is odd under reversing the cycle and additive over the cycle space.  For a head
    :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))` with
    :math:`\mathcal S = \mathcal S^\top`, :math:`\mathcal A = -\mathcal A^\top`, the row partition functions
    telescope and :math:`\mathfrak A(\gamma) = 2\beta\sum_m \mathcal A_{i_m i_{m+1}}`.  The same formula with
    jump rates in place of :math:`\mathsf P` gives the affinity of a continuous-time chain.

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Nonnegative transition weights (a Markov operator, or jump rates).
    cycles : sequence of sequences of int, optional
        Cycles as vertex sequences, closed :math:`(i_0, \dots, i_{k-1}, i_0)` or open
        :math:`(i_0, \dots, i_{k-1})` (the closing step is implied).  Defaults to :func:`cycle_basis`.
        Each step must be a pair with :math:`\mathsf P_{ij} > 0` and :math:`\mathsf P_{ji} > 0`.

    Returns
    -------
    array, shape=[len(cycles)]
        In the library of ``P`` (numpy for sparse ``P``).

    References
    ----------
    Attention Geometry §4 (:math:`\mathcal R_{\gamma,b}`, [RECON] read as the affinity), §7;
    attention-geometry-math §A.4, §A.7 "Cycle affinities" [DERIVED]; Schnakenberg (1976) Rev. Mod. Phys. 48, 571.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[0.2, 0.5, 0.3], [0.1, 0.6, 0.3], [0.4, 0.4, 0.2]])
    >>> by_hand = np.log(P[0, 1] * P[1, 2] * P[2, 0] / (P[1, 0] * P[2, 1] * P[0, 2]))
    >>> a = cycle_affinities(P, [(0, 1, 2, 0)])
    >>> bool(np.isclose(a[0], by_hand, rtol=1e-14))
    True
    >>> bool(np.isclose(cycle_affinities(P, [(0, 2, 1)])[0], -by_hand, rtol=1e-14))  # reversed cycle
    True
    """  # noqa: E501
    P, sparse = _nonnegative_matrix("P", P)
    n = int(P.shape[0])
    if cycles is None:
        cycles = _fundamental_cycles(_graph(*_support_edges("P", P, sparse)))
    sources, targets, starts = _cycle_edges(cycles, n)
    if starts.size == 0:
        empty = np.zeros(0)
        return empty if sparse else _like(empty, P)
    forward = _lookup(P, sparse, sources, targets)
    backward = _lookup(P, sparse, targets, sources)
    xp = np if sparse else namespace(P)
    if not bool(xp.all((forward > 0) & (backward > 0))):
        host_f, host_b = np.asarray(to_numpy(forward)), np.asarray(to_numpy(backward))
        e = int(np.argmax(~((host_f > 0) & (host_b > 0))))
        k = int(np.searchsorted(starts, e, side="right") - 1)
        i, j = int(sources[e]), int(targets[e])
        raise ValueError(
            f"cycles[{k}] must step only along pairs with P[i, j] > 0 and P[j, i] > 0, got the step {i} -> {j} "
            f"with P[{i}, {j}] = {host_f[e]:.6g} and P[{j}, {i}] = {host_b[e]:.6g} "
            "(its log-ratio is infinite or undefined)"
        )
    return _segment_sums(xp.log(forward) - xp.log(backward), starts)


def kolmogorov_residual(P, cycles=None):
    r"""Largest cycle affinity :math:`\max_\gamma |\mathfrak A(\gamma)|` over a cycle basis: zero iff reversible.

    Kolmogorov's criterion: a chain with symmetric support is reversible (there is a law :math:`\pi > 0`
    on each connected component with :math:`\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}`) if and only if

    .. math::

        \prod_m \mathsf P_{i_m i_{m+1}} = \prod_m \mathsf P_{i_{m+1} i_m}
        \quad\Longleftrightarrow\quad \mathfrak A(\gamma) = 0

    for every cycle :math:`\gamma`.  Affinities are additive over the cycle space, so it suffices to test a
    basis (:func:`cycle_basis`); a chain on a forest is always reversible and the residual is ``0.0``.
    Then :math:`\log(\mathsf P_{ij}/\mathsf P_{ji}) = \log\pi_j - \log\pi_i` is a gradient.

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Nonnegative transition weights with symmetric support.
    cycles : sequence of sequences of int, optional
        Cycles to test instead of the fundamental basis (see :func:`cycle_affinities`).

    Returns
    -------
    float
        In nats (a log-ratio of path probabilities); compare with a tolerance of a few ulps times the
        cycle length times :math:`\max|\log \mathsf P_{ij}|`.

    References
    ----------
    attention-geometry-math §A.7 "Cycle affinities" [DERIVED]; Kolmogorov (1936) Math. Ann. 112, 155.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 0.5], [3.0, 0.5, 2.0]])  # symmetric kernel
    >>> P = K / K.sum(axis=1, keepdims=True)  # reversible: π ∝ K1 satisfies detailed balance
    >>> pi = K.sum(axis=1) / K.sum()
    >>> flux = pi[:, None] * P
    >>> bool(np.allclose(flux, flux.T)) and kolmogorov_residual(P) < 1e-14
    True
    """
    affinities = cycle_affinities(P, cycles)
    if int(affinities.shape[0]) == 0:
        return 0.0
    xp = namespace(affinities)
    return float(xp.max(xp.abs(affinities)))


# --- the Hodge split of an antisymmetric edge field -----------------------------------------------------


class HodgeDecomposition(NamedTuple):
    """The Hodge split ``edge_field = exact + coexact`` with ``exact_ij = potential_i - potential_j``."""

    potential: object
    """Vertex potential φ, mean zero on every connected component."""
    exact: object
    """Gradient part φ_i − φ_j on the edges (zero elsewhere); its cycle sums vanish."""
    coexact: object
    """Divergence-free remainder, Σ_j w_ij coexact_ij = 0 at every vertex; it carries every cycle sum."""


def _to_csr(x, sparse):
    return x if sparse else scipy.sparse.csr_array(np.asarray(to_numpy(x)))


def hodge_split(edge_field, weights=None):
    r"""Hodge split of an antisymmetric edge field into a gradient and a divergence-free part.

    For an antisymmetric field :math:`a_{ij} = -a_{ji}` on a graph with symmetric weights :math:`w_{ij} > 0`
    on its edges, the potential :math:`\varphi` is the weighted least-squares fit

    .. math::

        \varphi = \arg\min_\varphi \tfrac12\sum_{ij} w_{ij}\bigl(a_{ij} - (\varphi_i - \varphi_j)\bigr)^2,
        \qquad \Delta_w\varphi = \operatorname{div}_w a,

    with the graph Laplacian :math:`(\Delta_w\varphi)_i = \sum_j w_{ij}(\varphi_i - \varphi_j)` (positive
    convention, :math:`D - W`) and divergence :math:`(\operatorname{div}_w a)_i = \sum_j w_{ij} a_{ij}`.
    Then

    .. math::

        a = \underbrace{(\varphi_i - \varphi_j)}_{\text{exact}} + \underbrace{a^\perp}_{\text{coexact}},
        \qquad \sum_j w_{ij} a^\perp_{ij} = 0 \ \text{at every vertex},

    and the two parts are orthogonal in :math:`\langle u, v\rangle_w = \tfrac12\sum_{ij} w_{ij}u_{ij}v_{ij}`.
    Cycle sums of the exact part vanish, so the coexact part carries all circulation (for a link
    :math:`\mathcal A`, all cycle affinities).  On the complete graph with unit weights,
    :math:`\varphi_i = \tfrac1N\sum_j a_{ij}` and :math:`a^\perp\mathbf 1 = 0`.  This is the graph form of
    the continuum split :math:`\mathcal A = d\Phi + \mathcal A^\perp` of the drift 1-form.

    The normal equations are solved with scipy on the host (a dense Cholesky-type solve for dense input,
    SuperLU for sparse input) after grounding one vertex per connected component; :math:`\varphi` is then
    shifted to mean zero on each component.

    Parameters
    ----------
    edge_field : array or scipy.sparse matrix, shape=[n, n]
        Antisymmetric up to a relative 1e-12 (it is antisymmetrised as :math:`(a - a^\top)/2`).
    weights : array or scipy.sparse matrix, shape=[n, n], optional
        Symmetric nonnegative edge weights; the graph is their (off-diagonal) support, and ``edge_field``
        must vanish off it.  Default: unit weights on the support of ``edge_field``; pass ``weights`` when
        the field vanishes on some edges that belong to the graph.

    Returns
    -------
    HodgeDecomposition
        ``(potential, exact, coexact)``; ``potential`` of shape [n], ``exact`` and ``coexact`` in the format
        and library of ``edge_field`` (sparse results are CSR on the graph's pattern).

    References
    ----------
    Attention Geometry §4 (Hodge split of the drift); attention-geometry-math §A.4 and §A.7 "Hodge split of
    the link" [DERIVED]; L.-H. Lim, SIAM Review 62 (2020) 685; X. Jiang, L.-H. Lim, Y. Yao, Y. Ye,
    "Statistical ranking and combinatorial Hodge theory", Math. Program. 127 (2011) 203.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> B = rng.standard_normal((4, 4))
    >>> a = B - B.T  # a free link on the complete graph K_4
    >>> phi, exact, coexact = hodge_split(a)
    >>> bool(np.allclose(phi, a.mean(axis=1)))  # closed form φ_i = (1/N) Σ_j a_ij
    True
    >>> bool(np.allclose(coexact.sum(axis=1), 0.0) and np.allclose(exact + coexact, a))
    True
    """
    a, a_sparse = _square_matrix("edge_field", edge_field)
    _check_antisymmetric("edge_field", a, a_sparse)
    n = int(a.shape[0])
    if weights is not None:
        w, w_sparse = _square_matrix("weights", weights)
        if not (a_sparse or w_sparse):
            namespace(a, w)  # rejects mixing numpy and torch
        elif array_api_compat.is_torch_array(a) or array_api_compat.is_torch_array(w):
            raise TypeError("edge_field and weights must both be dense when either is a torch tensor")
        if tuple(w.shape) != tuple(a.shape):
            raise ValueError(
                f"edge_field and weights must have the same shape, got {tuple(a.shape)} and {tuple(w.shape)}"
            )
        check_nonnegative("weights", w)
        check_symmetric("weights", w)
    dense_solve = not a_sparse and (weights is None or not w_sparse)

    a_csr = _to_csr(a, a_sparse)
    a_csr = ((a_csr - a_csr.T) * 0.5).tocsr()
    a_csr.eliminate_zeros()
    if weights is None:
        pattern = abs(a_csr).tocoo()
        rows, cols, w_data = pattern.row, pattern.col, np.ones(pattern.nnz)
    else:
        w_coo = _to_csr(w, w_sparse).tocoo()
        keep = (w_coo.data > 0) & (w_coo.row != w_coo.col)
        rows, cols, w_data = w_coo.row[keep], w_coo.col[keep], w_coo.data[keep]
    W = scipy.sparse.csr_array((w_data, (rows, cols)), shape=(n, n))
    W = ((W + W.T) * 0.5).tocsr()  # exactly symmetric, so the coexact part is divergence-free to rounding
    W_coo = W.tocoo()
    rows, cols, w_data = W_coo.row.astype(np.intp), W_coo.col.astype(np.intp), W_coo.data

    a_on_edges = np.asarray(a_csr[rows, cols], dtype=np.float64).ravel() if rows.size else np.zeros(0)
    if weights is not None:
        indicator = scipy.sparse.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
        outside = (abs(a_csr) - abs(a_csr).multiply(indicator)).tocoo()
        outside.eliminate_zeros()
        if outside.nnz:
            k = int(np.lexsort((outside.col, outside.row))[0])
            i, j = int(outside.row[k]), int(outside.col[k])
            raise ValueError(
                f"edge_field must vanish off the support of weights, got edge_field[{i}, {j}] = "
                f"{float(a_csr[i, j]):.6g} where weights[{i}, {j}] = 0"
            )

    # Normal equations Δ_w φ = div_w a, grounded at one vertex per component (Δ_w restricted to the
    # remaining vertices is positive definite; every component's divergence sums to zero).
    divergence = np.bincount(rows, weights=w_data * a_on_edges, minlength=n).astype(np.float64)  # int if empty
    degree = np.bincount(rows, weights=w_data, minlength=n).astype(np.float64)
    laplacian = (scipy.sparse.diags_array(degree) - W).tocsr()
    n_components, labels = scipy.sparse.csgraph.connected_components(W, directed=False)
    grounded = np.zeros(n, dtype=bool)
    grounded[np.unique(labels, return_index=True)[1]] = True
    free = np.flatnonzero(~grounded)
    phi = np.zeros(n)
    if free.size:
        reduced = laplacian[free][:, free]
        if dense_solve:
            phi[free] = scipy.linalg.solve(reduced.toarray(), divergence[free], assume_a="pos")
        else:
            phi[free] = scipy.sparse.linalg.spsolve(reduced.tocsc(), divergence[free])
    counts = np.bincount(labels, minlength=n_components)
    phi -= (np.bincount(labels, weights=phi, minlength=n_components) / counts)[labels]

    exact_data = phi[rows] - phi[cols]
    exact = scipy.sparse.csr_array((exact_data, (rows, cols)), shape=(n, n))
    coexact = scipy.sparse.csr_array((a_on_edges - exact_data, (rows, cols)), shape=(n, n))
    if a_sparse:
        return HodgeDecomposition(phi, exact, coexact)
    return HodgeDecomposition(_like(phi, a), _like(exact.toarray(), a), _like(coexact.toarray(), a))
