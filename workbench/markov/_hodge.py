r"""The Hodge split of an antisymmetric edge field on a weighted graph: gradient plus divergence-free part.

For an antisymmetric field :math:`a_{ij} = -a_{ji}` (for an attention head, the link :math:`\mathcal A`, or the
log-ratio :math:`\log(\mathsf P_{ij}/\mathsf P_{ji})` of a Markov operator) :func:`hodge_split` fits the vertex
potential :math:`\varphi` by weighted least squares; the gradient (exact) part :math:`\varphi_i - \varphi_j`
carries no circulation and the divergence-free (coexact) remainder carries all of it, so every cycle sum
(:func:`workbench.markov.cycle_affinities`) is read off the coexact part.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4; book/reference.md §A.4 and §A.7 "Hodge split of
the link" [DERIVED].  L.-H. Lim, "Hodge Laplacians on graphs", SIAM Review 62 (2020) 685.  X. Jiang, L.-H. Lim,
Y. Yao, Y. Ye, "Statistical ranking and combinatorial Hodge theory", Math. Program. 127 (2011) 203.
"""

from __future__ import annotations

from typing import NamedTuple

import array_api_compat
import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.csgraph
import scipy.sparse.linalg

from workbench.backend import namespace, to_numpy
from workbench.markov._matrices import as_library_of, square_matrix, symmetry_gap
from workbench.validation import check_nonnegative, check_symmetric

__all__ = ["HodgeDecomposition", "hodge_split"]


def _check_antisymmetric(name, x, sparse, *, rtol=1e-12):
    gap, scale = symmetry_gap(x, sparse, sign=-1)
    tiny = np.finfo(float).tiny
    if gap > rtol * max(scale, tiny):
        raise ValueError(
            f"{name} must be antisymmetric, got max |{name} + {name}^T| = {gap:.6g} "
            f"(relative {gap / max(scale, tiny):.6g})"
        )


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
    Attention Geometry §4 (Hodge split of the drift); book/reference.md §A.4 and §A.7 "Hodge split of
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
    a, a_sparse = square_matrix("edge_field", edge_field)
    _check_antisymmetric("edge_field", a, a_sparse)
    n = int(a.shape[0])
    if weights is not None:
        w, w_sparse = square_matrix("weights", weights)
        if not (a_sparse or w_sparse):
            namespace(edge_field=a, weights=w)  # rejects mixing numpy and torch
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
    return HodgeDecomposition(
        as_library_of(phi, a), as_library_of(exact.toarray(), a), as_library_of(coexact.toarray(), a)
    )
