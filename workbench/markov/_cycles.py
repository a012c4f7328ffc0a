r"""Cycle affinities and the Kolmogorov criterion: the support graph, its cycle basis and cycle sums.

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
twice the holonomy of the link.  The Hodge split of an antisymmetric edge field, whose divergence-free part
carries all the circulation, is in :mod:`workbench.markov._hodge`.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4, §7; book/reference.md §A.4 and §A.7 "Cycle
affinities" [DERIVED].  J. Schnakenberg, "Network theory of microscopic and macroscopic behavior of master
equation systems", Rev. Mod. Phys. 48 (1976) 571.  A. Kolmogorov, "Zur Theorie der Markoffschen Ketten",
Math. Ann. 112 (1936) 155.  L.-H. Lim, "Hodge Laplacians on graphs", SIAM Review 62 (2020) 685.
"""

from __future__ import annotations

from collections.abc import Sequence

import array_api_compat
import networkx as nx
import numpy as np
import scipy.sparse

from workbench.backend import check_view_size, namespace, to_numpy
from workbench.markov._matrices import as_library_of, lookup, square_matrix
from workbench.validation import as_array, check_integer, check_nonnegative

__all__ = [
    "cycle_affinities",
    "cycle_basis",
    "cycle_edges",
    "kolmogorov_residual",
    "segment_sums",
    "support_graph",
]


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
    P, sparse = square_matrix(name, P)
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
    book/reference.md §A.7 "Cycle affinities" [DERIVED].

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
    book/reference.md §A.7 "Cycle affinities" [DERIVED]; K. Paton, Comm. ACM 12 (1969) 514.

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


def cycle_edges(cycles, n):
    r"""The oriented steps of all cycles, concatenated, and the offset where each cycle starts.

    A cycle :math:`\gamma_k = (i_0, i_1, \dots, i_{m-1})` (closed, with :math:`i_0` repeated at the end,
    or open, the closing step implied) contributes its steps :math:`i_0 \to i_1, \dots, i_{m-1} \to i_0`:

    .. math::

        \text{sources} = (\dots, i_0, \dots, i_{m-1}, \dots), \qquad
        \text{targets} = (\dots, i_1, \dots, i_0, \dots),

    and ``starts[k]`` is the index of the first step of :math:`\gamma_k`.  A cycle sum
    :math:`\sum_{m} a_{i_m i_{m+1}}` of an edge field is then
    ``segment_sums(a[sources, targets], starts)`` (see :func:`segment_sums`).  This is the cycle parser of
    :func:`cycle_affinities`.

    Parameters
    ----------
    cycles : sequence of sequences of int
        Vertex sequences, each visiting at least 2 vertices, with no consecutive repeat.
    n : int
        Number of vertices; every index must lie in ``[0, n)``.

    Returns
    -------
    sources, targets, starts : numpy.ndarray of intp
        ``sources`` and ``targets`` of shape [total steps]; ``starts`` of shape [len(cycles)].

    Raises
    ------
    TypeError
        If ``cycles`` is not a sequence of integer vertex sequences.
    ValueError
        If a cycle visits fewer than 2 vertices, leaves ``[0, n)`` or stays at a vertex.

    References
    ----------
    book/reference.md §A.7 "Cycle affinities" [DERIVED].

    Examples
    --------
    >>> sources, targets, starts = cycle_edges([(0, 1, 2, 0), (2, 3)], 4)
    >>> sources.tolist(), targets.tolist(), starts.tolist()  # the steps written out by hand
    ([0, 1, 2, 2, 3], [1, 2, 0, 3, 2], [0, 3])
    """
    if isinstance(cycles, (str, bytes)) or not isinstance(cycles, Sequence):
        raise TypeError(f"cycles must be a sequence of vertex sequences, got {type(cycles).__name__}")
    n = check_integer("n", n, 0)
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
            raise ValueError(f"cycles[{k}] must hold vertex indices in [0, {n}), got {cycle!r} (n = {n} vertices)")
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


def segment_sums(values, starts):
    r"""Sums of ``values`` over the consecutive segments that begin at ``starts``.

    .. math::

        s_k = \sum_{e = \text{starts}_k}^{\text{starts}_{k+1} - 1} v_e ,
        \qquad \text{starts}_{K} = \text{len}(v),

    computed segment by segment (:func:`numpy.add.reduceat`, or :meth:`torch.Tensor.index_add_`), with no
    cumulative sum whose differences would lose the small sums to cancellation.

    Parameters
    ----------
    values : array, shape=[E]
        numpy array or torch tensor (e.g. an edge field read along :func:`cycle_edges`).
    starts : numpy.ndarray of int, shape=[K]
        Strictly increasing segment offsets, ``starts[0] == 0``, all below ``E`` (as returned by
        :func:`cycle_edges`).

    Returns
    -------
    array, shape=[K]
        In the library, dtype and device of ``values``.

    References
    ----------
    book/reference.md §A.7 "Cycle affinities" [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> segment_sums(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 3])).tolist()  # 1+2+3, 4+5
    [6.0, 9.0]
    """
    values = as_array("values", values, ndim=1)
    starts = _segment_starts(starts, int(values.shape[0]))
    if starts.size == 0:
        return as_library_of(np.zeros(0), values)
    if array_api_compat.is_torch_array(values):
        import torch

        lengths = np.diff(np.append(starts, int(values.shape[0])))
        segment = torch.as_tensor(np.repeat(np.arange(starts.size), lengths), device=values.device)
        return torch.zeros(starts.size, dtype=values.dtype, device=values.device).index_add_(0, segment, values)
    return np.add.reduceat(values, starts)


def _segment_starts(starts, size: int) -> np.ndarray:
    """``starts`` as an intp array of strictly increasing offsets from 0, all below ``size``."""
    check_view_size("starts", starts)
    host = to_numpy(starts) if array_api_compat.is_torch_array(starts) else starts
    try:
        host = np.asarray(host)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"starts must be a 1-dimensional array of integer offsets, got {type(starts).__name__}"
        ) from exc
    if host.ndim != 1:
        raise ValueError(f"starts must be a 1-dimensional array of integer offsets, got shape {host.shape}")
    if host.size == 0:
        if size:
            raise ValueError(f"starts must begin with 0 when values holds {size} entries, got no offsets")
        return np.zeros(0, dtype=np.intp)
    if host.dtype.kind not in "iu":
        raise TypeError(f"starts must hold integer offsets, got dtype {host.dtype}")
    host = host.astype(np.intp)
    if host[0] != 0 or np.any(np.diff(host) <= 0) or host[-1] >= size:
        raise ValueError(
            f"starts must be strictly increasing offsets from 0, each below len(values) = {size}, "
            f"got {host.tolist()[:8]}"
        )
    return host


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
    book/reference.md §A.4, §A.7 "Cycle affinities" [DERIVED]; Schnakenberg (1976) Rev. Mod. Phys. 48, 571.

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
    sources, targets, starts = cycle_edges(cycles, n)
    if starts.size == 0:
        empty = np.zeros(0)
        return empty if sparse else as_library_of(empty, P)
    forward = lookup(P, sparse, sources, targets)
    backward = lookup(P, sparse, targets, sources)
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
    return segment_sums(xp.log(forward) - xp.log(backward), starts)


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
    book/reference.md §A.7 "Cycle affinities" [DERIVED]; Kolmogorov (1936) Math. Ann. 112, 155.

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
