r"""Weighted graphs as Markov chains: the weighted adjacency of a networkx graph, checked for a random walk.

A graph with nonnegative edge weights :math:`w_{xy}` defines the random walk
:math:`\mathsf P = \operatorname{diag}(W\mathbf 1)^{-1} W` (row-stochastic, acting on functions from
the left) and, in the jump-rate convention, the negative generator
:math:`(\mathcal L f)(x) = \sum_y w_{xy}(f(y) - f(x))` (the unnormalised graph Laplacian with the
sign of :math:`\Delta`).  :func:`graph_weights` returns :math:`W` in the form the rest of
:mod:`workbench.markov` accepts, after the checks that make those objects well defined.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §5; book/reference.md §A.2, §A.5.
J. R. Norris, *Markov Chains*, Cambridge University Press (1997), §1.2 (communicating and closed
classes) and Thm 1.7.7 (a unique invariant law for an irreducible finite chain).
"""

from __future__ import annotations

import math
import warnings
from numbers import Real

import networkx as nx
import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import connected_components

from workbench.markov._stationary import closed_classes

__all__ = ["graph_weights"]


def _check_edge_weights(graph, weight, nodes) -> None:
    """Every edge weight among ``nodes`` must be a finite nonnegative real (absent means 1)."""
    if weight is None:  # networkx then weighs every edge 1
        return
    edges = graph.edges(nbunch=None, data=weight, default=1)
    for edge in edges:
        u, v, w = edge[0], edge[1], edge[-1]
        if nodes is not None and (u not in nodes or v not in nodes):
            continue
        if isinstance(w, bool) or not isinstance(w, Real) or not math.isfinite(w):
            raise ValueError(f"edge weights must be finite real numbers, got {weight}={w!r} on edge ({u!r}, {v!r})")
        if w < 0:
            raise ValueError(f"edge weights must be nonnegative, got {weight}={w!r} on edge ({u!r}, {v!r})")


def graph_weights(graph, *, weight="weight", nodelist=None):
    r"""Weighted adjacency :math:`W_{xy} = w_{xy}` of a networkx graph, checked for a random walk.

    Edges without the ``weight`` attribute weigh 1; parallel edges of a multigraph add up; a
    self-loop :math:`x`--:math:`x` of weight :math:`w` gives :math:`W_{xx} = w` (once, for graphs
    and digraphs alike).  An undirected graph gives a symmetric :math:`W`.  The random walk is

    .. math::

        \mathsf P = \operatorname{diag}(W\mathbf 1)^{-1} W,
        \qquad (\mathcal L f)(x) = \sum_y w_{xy}\,(f(y) - f(x))

    (negative generator, jump rates :math:`w_{xy}`).

    Parameters
    ----------
    graph : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
    weight : str or None
        Edge attribute holding the weight; ``None`` weighs every edge 1.
    nodelist : sequence, optional
        Vertex order of the rows and columns (and the vertex set: edges to other vertices are
        dropped).  Default: ``list(graph)``.

    Returns
    -------
    W : scipy.sparse.csr_array, shape=[n, n]
        float64, entrywise nonnegative, every row sum positive.
    nodelist : list
        The vertex of each row.

    Raises
    ------
    TypeError
        If ``graph`` is not a networkx graph.
    ValueError
        For an empty graph, an unknown or repeated vertex in ``nodelist``, a negative or
        non-finite edge weight (naming the edge), or a vertex with zero out-degree (naming it:
        the walk cannot leave it, so :math:`\mathsf P` has no row there).

    Warns
    -----
    UserWarning
        If the walk is not irreducible (the graph is not connected, or the digraph not strongly
        connected): with more than one closed class the stationary law is not unique; with one
        closed class it is unique but vanishes on the transient vertices.

    References
    ----------
    book/reference.md §A.2, §A.5; Norris (1997) §1.2 and Thm 1.7.7.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph()
    >>> G.add_edge("a", "b", weight=2.0)
    >>> G.add_edge("b", "c")                  # weight 1 by default
    >>> W, nodes = graph_weights(G)
    >>> nodes, W.toarray().tolist()
    (['a', 'b', 'c'], [[0.0, 2.0, 0.0], [2.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    >>> bool((W.toarray() == nx.to_numpy_array(G)).all())   # networkx's dense reference
    True
    """
    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx Graph or DiGraph, got {type(graph).__name__}")
    if graph.number_of_nodes() == 0:
        raise ValueError("graph must have at least one vertex, got an empty graph")
    try:
        hash(weight)  # networkx looks it up as a key of each edge's attribute dict
    except TypeError:
        raise TypeError(
            f"weight must be None or a string naming an edge attribute, got {type(weight).__name__}"
        ) from None
    if nodelist is None:
        nodelist = list(graph)
        nodes = None
    else:
        nodelist = list(nodelist)
        nodes = set()
        for v in nodelist:
            if v not in graph:
                raise ValueError(f"nodelist must list vertices of graph, got {v!r}, which is not a vertex")
            if v in nodes:
                raise ValueError(f"nodelist must not repeat a vertex, got {v!r} twice")
            nodes.add(v)
        if not nodelist:
            raise ValueError("nodelist must hold at least one vertex, got an empty list")
    _check_edge_weights(graph, weight, nodes)
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=nodelist, weight=weight, dtype=np.float64, format="csr")
    adjacency = scipy.sparse.csr_array(adjacency)
    out_degree = np.asarray(adjacency.sum(axis=1)).ravel()
    stuck = np.flatnonzero(out_degree <= 0)
    if stuck.size:
        more = f" ({stuck.size} such vertices)" if stuck.size > 1 else ""
        raise ValueError(
            f"every vertex must have positive out-degree, got vertex {nodelist[stuck[0]]!r} with out-degree 0{more}: "
            "a random walk cannot leave it, so P = D⁻¹W is undefined there; add a self-loop to make it "
            "absorbing, or remove it"
        )
    walk = adjacency.copy()
    walk.eliminate_zeros()  # a zero-weight edge is never taken by the walk
    components = connected_components(walk, directed=True, connection="strong", return_labels=False)
    if components > 1:
        kind = "strongly connected" if graph.is_directed() else "connected"
        classes = closed_classes(walk)
        closed, recurrent = len(classes), sum(c.size for c in classes)
        if closed > 1:
            consequence = f"{closed} closed classes, so the stationary law is not unique"
        else:
            transient = adjacency.shape[0] - recurrent
            vertices = "vertex" if transient == 1 else "vertices"
            consequence = (
                f"one closed class and {transient} transient {vertices}, so the stationary law is unique "
                "but vanishes on the transient vertices"
            )
        warnings.warn(
            f"graph is not {kind} ({components} {kind} components): the random walk has {consequence}",
            UserWarning,
            stacklevel=2,
        )
    return adjacency, nodelist
