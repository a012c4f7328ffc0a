r"""Discrete Ricci curvatures of jump rates: exact Bakry–Émery curvature and Ollivier–Ricci curvature.

Both read ``rates`` in the jump-rates convention of :mod:`workbench.markov._jump_rates`: off-diagonal
entries :math:`W_{xy} \ge 0` are jump rates, the diagonal is ignored, and the negative generator is
:math:`(\mathcal L f)(x) = \sum_{y\ne x} W_{xy}(f(y) - f(x))` (a Markov operator :math:`\mathsf P` gives
:math:`\mathcal L = \mathsf P - I`; a weighted adjacency gives the unnormalised graph Laplacian;
:math:`D^{-1}A` the normalised one).

* The **Bakry–Émery curvature** :math:`K_\infty(x)` is the largest :math:`K` with
  :math:`\Gamma_2(f)(x) \ge K\,\Gamma(f)(x)` for every :math:`f` (the curvature-dimension condition
  :math:`CD(K, \infty)` at :math:`x`).  It is computed exactly from the local quadratic forms on the
  two-step ball (see :func:`bakry_emery_curvature`).
* The **Ollivier–Ricci curvature** :math:`\kappa(x, y) = 1 - W_1(m_x, m_y)/d(x, y)` compares the
  one-step laws of two vertices by optimal transport (POT does the transport).

References
----------
Attention Geometry §5 and §8 (Γ₂, the curvature tensor 𝓑); book/reference.md §A.5 "Γ₂ and
curvature" [RECON, standard].
D. Bakry, M. Émery, "Diffusions hypercontractives", Sém. Probab. XIX, LNM 1123 (1985) 177.
D. Cushing, S. Liu, N. Peyerimhoff, "Bakry–Émery curvature functions on graphs", Canad. J. Math. 72
(2020) 89 (the Schur-complement reduction to the one-sphere).
B. Klartag, G. Kozma, P. Ralli, P. Tetali, "Discrete curvature and abelian groups", Canad. J. Math. 68
(2016) 655.
Y. Ollivier, "Ricci curvature of Markov chains on metric spaces", J. Funct. Anal. 256 (2009) 810.
Y. Lin, L. Lu, S.-T. Yau, "Ricci curvature of graphs", Tohoku Math. J. 63 (2011) 605.
"""

from __future__ import annotations

import array_api_compat
import numpy as np
import scipy.sparse
import scipy.sparse.csgraph

from workbench.backend import check_view_size, host_array, to_numpy
from workbench.markov._jump_rates import JumpRates
from workbench.validation import check_finite_output, check_in_range

__all__ = ["bakry_emery_curvature", "ollivier_ricci"]


def _host_csr(jump: JumpRates):
    """Off-diagonal rates as a canonical numpy CSR array with only strictly positive entries stored."""
    if jump.sparse:
        W = jump.W.copy()
    else:
        W_dense = to_numpy(jump.W)
        W = scipy.sparse.csr_array(np.asarray(W_dense, dtype=np.float64))
    W.eliminate_zeros()  # a zero rate is not an edge: S₁(x) is where W_xy > 0
    W.sort_indices()
    return W


def _requested_vertices(vertices, n):
    if vertices is None:
        return np.arange(n), (n,)
    check_view_size("vertices", vertices)
    raw = host_array("vertices", vertices)
    if raw.dtype.kind not in "iu" or raw.ndim > 1:
        raise TypeError(f"vertices must be an integer or a 1-dimensional integer array, got {raw.dtype} {raw.shape}")
    flat = raw.reshape(-1).astype(np.int64)
    bad = (flat < 0) | (flat >= n)
    if np.any(bad):
        raise ValueError(f"vertices must be in [0, {n - 1}], got {int(flat[np.argmax(bad)])}")
    return flat, raw.shape


def _check_out_rates(W, vertices, name="rates"):
    count = np.diff(W.indptr)[vertices]
    if np.any(count == 0):
        x = int(vertices[np.argmin(count)])
        raise ValueError(
            f"{name} must have jump rates out of every requested vertex, got none out of vertex {x} "
            f"(an isolated vertex: Γ(f)({x}) = 0 for every f, so its curvature is undefined)"
        )


def bakry_emery_curvature(rates, vertices=None):
    r"""Exact Bakry–Émery curvature :math:`K_\infty(x) = \inf_f \Gamma_2(f)(x) / \Gamma(f)(x)` at each vertex.

    :math:`\Gamma` and :math:`\Gamma_2` are those of :func:`~workbench.markov._bakry_emery.gamma2` for the
    negative generator :math:`(\mathcal L f)(x) = \sum_{y\ne x} W_{xy}(f(y) - f(x))` of the jump rates
    (off-diagonal ``rates``, diagonal ignored).  :math:`K_\infty(x)` is the largest :math:`K` such that
    :math:`x` satisfies :math:`CD(K, \infty)`, :math:`\Gamma_2(f)(x) \ge K\,\Gamma(f)(x)` for all
    :math:`f`.

    Method (Cushing–Liu–Peyerimhoff).  Both forms are invariant under :math:`f \mapsto f + c`, so take
    :math:`f(x) = 0`.  Then :math:`\Gamma(f)(x) = \tfrac12\sum_{y\in S_1} W_{xy} f_y^2` is diagonal on
    the one-sphere :math:`S_1(x) = \{y : W_{xy} > 0\}`, and :math:`\Gamma_2(f)(x) = f^\top Q f` is a
    quadratic form on :math:`S_1 \cup S_2`; with :math:`a_y = W_{xy}`, :math:`d_v = \sum_w W_{vw}` and
    :math:`c_z = \sum_{y\in S_1} a_y W_{yz}`,

    .. math::

        \Gamma_2(f)(x) = \tfrac14\sum_z c_z f_z^2 - \sum_{y\in S_1}\sum_z a_y W_{yz} f_y f_z
            + \sum_{y\in S_1}\bigl(\tfrac34 d_y - \tfrac14 d_x\bigr) a_y f_y^2
            + \tfrac12\Bigl(\sum_{y\in S_1} a_y f_y\Bigr)^2 .

    Its block on the two-sphere :math:`S_2(x)` is the positive diagonal :math:`\tfrac14 c_z`, so
    minimising over :math:`f|_{S_2}` leaves the Schur complement
    :math:`A = Q_{11} - \sum_{z\in S_2} u_z u_z^\top / c_z` with :math:`(u_z)_y = a_y W_{yz}`, and

    .. math::

        K_\infty(x) = \lambda_{\min}\bigl(B^{-1/2} A B^{-1/2}\bigr), \qquad B = \tfrac12\operatorname{diag}(a).

    All local matrices are assembled at once from the two-step paths :math:`x \to y \to z` (about
    :math:`\sum_x\sum_{y\in S_1(x)}\deg y` entries) and the eigenproblems are solved in batches of equal
    degree, so a 10⁴-vertex kNN graph takes about a second.

    Parameters
    ----------
    rates : array or scipy.sparse matrix, shape=[n, n]
        Jump rates: finite, off-diagonal entries nonnegative, diagonal ignored.  Need not be symmetric.
    vertices : int or array of int, optional
        The vertices :math:`x` (default: all).  Each must have a positive rate out.

    Returns
    -------
    array, shape of ``vertices`` (``[n]`` by default)
        numpy for numpy or scipy.sparse input, a torch tensor (input dtype and device) for torch input.

    Raises
    ------
    ValueError
        For an invalid ``rates``, a vertex out of range, or a requested vertex with no rates out
        (there :math:`\Gamma(\cdot)(x) \equiv 0` and the curvature is undefined).

    References
    ----------
    Attention Geometry §5, §8; book/reference.md §A.5 "Γ₂ and curvature" [RECON, standard].
    Cushing, Liu, Peyerimhoff (2020), §2 (the curvature as a Schur-complement eigenvalue).
    Klartag, Kozma, Ralli, Tetali (2016) (values for complete graphs and hypercubes).

    Examples
    --------
    The complete graph :math:`K_n` with unit rates (the unnormalised Laplacian) has
    :math:`K_\infty = 1 + n/2`; the normalised one (:math:`D^{-1}A`) has :math:`(n+2)/(2(n-1))`; a cycle
    of length at least 5 is flat.

    >>> import numpy as np
    >>> A = np.ones((6, 6)) - np.eye(6)
    >>> bakry_emery_curvature(A).round(12).tolist()
    [4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    >>> bool(np.allclose(bakry_emery_curvature(A / 5), (6 + 2) / (2 * 5)))
    True
    >>> C = np.roll(np.eye(7), 1, axis=1) + np.roll(np.eye(7), -1, axis=1)
    >>> bool(np.allclose(bakry_emery_curvature(C, vertices=[0, 3]), 0.0))
    True
    """
    jump = JumpRates(rates)
    W = _host_csr(jump)
    X, shape = _requested_vertices(vertices, jump.n)
    _check_out_rates(W, X)
    W, binary_exponent = _rates_near_one(W)
    with np.errstate(over="ignore"):  # K_∞(W) = 2^e · K_∞(W / 2^e); an overflow is refused just below
        curvature = np.ldexp(_curvature_by_schur_complement(W, X), binary_exponent).reshape(shape)
    check_finite_output("bakry_emery_curvature", curvature, rates=rates)
    if not jump.sparse and array_api_compat.is_torch_array(jump.W):
        import torch

        return torch.as_tensor(curvature, dtype=jump.W.dtype, device=jump.W.device)
    return curvature


def _rates_near_one(W):
    r"""``(W / 4^k, 2k)`` with the integer :math:`k` that brings the largest rate into :math:`[1/2, 2)`.

    :math:`\Gamma` is linear and :math:`\Gamma_2` quadratic in the rates, so
    :math:`K_\infty(sW) = s\,K_\infty(W)` for :math:`s > 0`; the local forms hold products
    :math:`W_{xy}W_{yz}`, which overflow for rates near 1e300 and underflow for rates near 1e-200.  Dividing
    by a power of four is exact (and keeps the square roots of the rates exact) unless a rate falls below
    the double range — a rate ratio beyond it, refused rather than silently dropping an edge.
    """
    if W.nnz == 0:
        return W, 0
    _, exponent = np.frexp(W.data.max())  # max = m · 2^exponent with m in [1/2, 1)
    k = int(exponent) // 2
    if k == 0:
        return W, 0
    scaled = W.copy()
    scaled.data = np.ldexp(W.data, -2 * k)
    if np.any(scaled.data == 0):
        raise ValueError(
            "rates must have a ratio of largest to smallest positive off-diagonal entry within the double range, "
            f"got {W.data.max():.3g} / {W.data.min():.3g}"
        )
    return scaled, 2 * k


def _curvature_by_schur_complement(W, X):
    """Vectorised assembly of the local forms (see :func:`bakry_emery_curvature`) and batched eigensolves."""
    n = W.shape[0]
    indptr, indices, rate = W.indptr.astype(np.int64), W.indices.astype(np.int64), W.data
    degree = np.asarray(W.sum(axis=1)).ravel()
    m = X.size
    count = indptr[X + 1] - indptr[X]  # |S₁(x)|

    # One-step edges x → y, numbered by a global slot: slot_offset[x] + (position of y in row x).
    slot_offset = np.concatenate([[0], np.cumsum(count)[:-1]])
    owner = np.repeat(np.arange(m), count)  # which requested vertex each slot belongs to
    slot = np.arange(owner.size) - slot_offset[owner]
    first = indptr[X][owner] + slot
    y, a = indices[first], rate[first]
    d_x = degree[X][owner]

    # Two-step paths x → y → z (z ≠ y since the diagonal is gone).
    y_count = indptr[y + 1] - indptr[y]
    path_edge = np.repeat(np.arange(owner.size), y_count)
    path_offset = np.concatenate([[0], np.cumsum(y_count)[:-1]])
    second = indptr[y][path_edge] + np.arange(path_edge.size) - path_offset[path_edge]
    z = indices[second]
    u = a[path_edge] * rate[second]  # a_y W_yz
    path_owner = owner[path_edge]
    x_of_path = X[path_owner]
    away = z != x_of_path  # z = x only enters through d_y, which is global
    z, u, path_edge, path_owner, x_of_path = z[away], u[away], path_edge[away], path_owner[away], x_of_path[away]

    # Is z a neighbour of x?  Look (x, z) up among the sorted keys row·n + col of W.
    keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr)) * n + indices
    query = x_of_path * n + z
    position = np.minimum(np.searchsorted(keys, query), max(keys.size - 1, 0))
    inner = keys[position] == query
    s_y = slot[path_edge]
    s_z = position - indptr[x_of_path]

    # Block storage: requested vertices sorted by degree, so each degree class is one contiguous stack.
    order = np.argsort(count, kind="stable")
    block_size = count[order] ** 2
    block_start_sorted = np.concatenate([[0], np.cumsum(block_size)[:-1]])
    block_start = np.empty(m, dtype=np.int64)
    block_start[order] = block_start_sorted

    entry_owner, entry_row, entry_col, entry_value = [], [], [], []

    def add(owner_, row_, col_, value_):
        entry_owner.append(owner_)
        entry_row.append(row_)
        entry_col.append(col_)
        entry_value.append(value_)

    # Q₁₁ from paths that stay in S₁: ¼ c_z on the diagonal, −a_y W_yz f_y f_z split symmetrically.
    io, iy, iz, iu = path_owner[inner], s_y[inner], s_z[inner], u[inner]
    add(io, iz, iz, 0.25 * iu)
    add(io, iy, iz, -0.5 * iu)
    add(io, iz, iy, -0.5 * iu)
    # Q₁₁ diagonal (¾ d_y − ¼ d_x) a_y.
    add(owner, slot, slot, (0.75 * degree[y] - 0.25 * d_x) * a)

    # Schur complement of the S₂ block: − Σ_z u_z u_zᵀ / c_z = − V Vᵀ with V = u / √c_z.
    outer = ~inner
    if np.any(outer):
        group_key = path_owner[outer].astype(np.int64) * n + z[outer]
        _, group = np.unique(group_key, return_inverse=True)
        c = np.bincount(group, weights=u[outer])
        v = u[outer] / np.sqrt(c[group])
        global_slot = slot_offset[path_owner[outer]] + s_y[outer]
        V = scipy.sparse.csr_array((v, (global_slot, group)), shape=(owner.size, c.size))
        VVt = (V @ V.T).tocoo()
        add(owner[VVt.row], slot[VVt.row], slot[VVt.col], -VVt.data)

    entry_owner = np.concatenate(entry_owner)
    flat = (
        block_start[entry_owner]
        + np.concatenate(entry_row) * count[entry_owner]
        + np.concatenate(entry_col).astype(np.int64)
    )
    blocks = np.bincount(flat, weights=np.concatenate(entry_value), minlength=int(block_size.sum()))

    curvature = np.empty(m)
    boundaries = np.flatnonzero(np.diff(count[order])) + 1
    for group_positions in np.split(np.arange(m), boundaries):
        members = order[group_positions]
        D = int(count[members[0]])
        start = int(block_start[members[0]])
        A = blocks[start : start + members.size * D * D].reshape(members.size, D, D)
        a_local = rate[indptr[X[members]][:, None] + np.arange(D)]
        A = A + 0.5 * a_local[:, :, None] * a_local[:, None, :]  # ½ (Σ_y a_y f_y)²
        scale = np.sqrt(2.0 / a_local)  # B^{-1/2}, B = ½ diag(a)
        M = A * scale[:, :, None] * scale[:, None, :]
        curvature[members] = np.linalg.eigvalsh(0.5 * (M + np.swapaxes(M, 1, 2)))[:, 0]
    return curvature


def _import_ot():
    try:
        import ot
    except ImportError as exc:
        raise ImportError(
            "ollivier_ricci needs the optimal-transport library POT (import name `ot`); "
            "install the PyPI package `POT` (pip install POT)"
        ) from exc
    return ot


def _requested_edges(edges, support):
    n = support.shape[0]
    if edges is None:
        upper = scipy.sparse.triu(support, k=1, format="coo")
        pairs = np.stack([upper.row, upper.col], axis=1).astype(np.int64)
        return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    check_view_size("edges", edges)
    raw = host_array("edges", edges)
    if raw.ndim != 2 or raw.shape[1] != 2:
        raise ValueError(f"edges must have shape [E, 2], got shape {raw.shape}")
    if raw.size and raw.dtype.kind not in "iu":
        raise TypeError(f"edges must hold integer vertex indices, got dtype {raw.dtype}")
    pairs = raw.astype(np.int64).reshape(-1, 2)
    bad = (pairs < 0) | (pairs >= n)
    if np.any(bad):
        raise ValueError(f"edges must hold vertices in [0, {n - 1}], got {int(pairs[bad][0])}")
    same = pairs[:, 0] == pairs[:, 1]
    if np.any(same):
        raise ValueError(f"edges must join two distinct vertices, got ({pairs[same][0, 0]}, {pairs[same][0, 1]})")
    return pairs


def _one_step_law(W, x, idleness):
    """Support and masses of m_x = idleness·δ_x + (1 − idleness)·W_x·/d_x."""
    lo, hi = W.indptr[x], W.indptr[x + 1]
    support, mass = W.indices[lo:hi], W.data[lo:hi] * ((1.0 - idleness) / W.data[lo:hi].sum())
    if idleness > 0:
        support, mass = np.append(support, x), np.append(mass, idleness)
    return support, mass


def ollivier_ricci(rates, edges=None, *, idleness=0.0):
    r"""Ollivier–Ricci curvature :math:`\kappa(x, y) = 1 - W_1(m_x, m_y)/d(x, y)` of the random walk of jump rates.

    The one-step law of :math:`x` is the row-normalised jump rates with laziness
    :math:`\alpha` = ``idleness``,

    .. math::

        m_x = \alpha\,\delta_x + (1 - \alpha)\sum_{y\ne x}\frac{W_{xy}}{d_x}\,\delta_y,
        \qquad d_x = \sum_{y\ne x} W_{xy},

    (the diagonal of ``rates`` is ignored, as everywhere in the jump-rates convention: a Markov operator
    passed in loses its holding probabilities, which ``idleness`` restores uniformly).  :math:`d` is the
    shortest-path hop distance on the undirected support graph :math:`\{W_{xy} + W_{yx} > 0\}`, and
    :math:`W_1` the Wasserstein-1 distance for it, computed exactly by POT's network simplex
    (:func:`ot.emd2`) on :math:`\operatorname{supp} m_x \times \operatorname{supp} m_y`.

    Parameters
    ----------
    rates : array or scipy.sparse matrix, shape=[n, n]
        Jump rates: finite, off-diagonal entries nonnegative, diagonal ignored.
    edges : array of int, shape=[E, 2], optional
        Vertex pairs :math:`(x, y)`, :math:`x \ne y`, in the same connected component (they need not be
        adjacent).  Default: every edge :math:`x < y` of the support graph, in row-major order.
    idleness : float
        Laziness :math:`\alpha \in [0, 1]`.

    Returns
    -------
    edges : numpy.ndarray of int, shape=[E, 2]
        The pairs, as given or as enumerated.
    curvature : numpy.ndarray, shape=[E]
        :math:`\kappa(x, y)` for each pair (computed on the host for torch input).

    Raises
    ------
    ImportError
        If POT (PyPI package ``POT``, import name ``ot``) is not installed.
    ValueError
        For an invalid ``rates`` or ``edges``, a vertex with no rates out, or a pair in different
        components.

    References
    ----------
    Ollivier (2009), Definition 3 and Example 8 (the lazy cube, :math:`\kappa = 1/N`); Lin, Lu, Yau
    (2011) (the idleness parameter); J. Jost, S. Liu, "Ollivier's Ricci curvature, local clustering and
    curvature-dimension inequalities on graphs", Discrete Comput. Geom. 51 (2014) 300.

    Examples
    --------
    On the complete graph :math:`K_n` without laziness, :math:`m_x` and :math:`m_y` differ only in
    where they put the mass :math:`1/(n-1)` of the other endpoint, so :math:`\kappa = (n-2)/(n-1)`.

    >>> import numpy as np
    >>> A = np.ones((5, 5)) - np.eye(5)
    >>> edges, kappa = ollivier_ricci(A, edges=[[0, 1], [2, 4]])
    >>> bool(np.allclose(kappa, 3 / 4))
    True
    """
    jump = JumpRates(rates)
    alpha = check_in_range("idleness", idleness, 0.0, 1.0)
    ot = _import_ot()
    W = _host_csr(jump)
    support = scipy.sparse.csr_array(((W + W.T) > 0).astype(np.float64))
    # csgraph before scipy 1.15 takes only int32 index arrays (networkx and large graphs give int64).
    support.indices, support.indptr = support.indices.astype(np.int32), support.indptr.astype(np.int32)
    pairs = _requested_edges(edges, support)
    if pairs.size:
        _check_out_rates(W, np.unique(pairs))
    curvature = np.empty(pairs.shape[0])
    for k, (x, y) in enumerate(pairs):
        if support[x, y] > 0:
            d_xy = 1.0
        else:
            d_xy = float(scipy.sparse.csgraph.dijkstra(support, indices=int(x), unweighted=True)[y])
            if not np.isfinite(d_xy):
                raise ValueError(f"edges must join vertices of one connected component, got ({x}, {y})")
        support_x, mass_x = _one_step_law(W, x, alpha)
        support_y, mass_y = _one_step_law(W, y, alpha)
        # Every path between the supports is at most 1 + d(x, y) + 1 long, so the search stops there.
        distance = scipy.sparse.csgraph.dijkstra(support, indices=support_x, unweighted=True, limit=d_xy + 2.5)
        cost = np.ascontiguousarray(distance[:, support_y])
        curvature[k] = 1.0 - float(ot.emd2(mass_x, mass_y, cost)) / d_xy
    return pairs, curvature
