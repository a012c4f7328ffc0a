r"""Gauge and holonomy of a connection walk: changes of frame, transport around cycles, loop inconsistency.

Gauge convention (row vectors).  A change of frame :math:`X'_i = X_i V_i` (``V[i]`` invertible) carries
the transport :math:`O_{ij}` to :math:`O'_{ij} = V_j^{-1} O_{ij} V_i`; the transport along a path
:math:`i_0 \to i_1 \to \dots \to i_k` is the product :math:`O_{i_1 i_0} O_{i_2 i_1}\cdots O_{i_k i_{k-1}}`,
read left to right in the order the path is walked.

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §2 and §6 (gauge-equivariant view, local frame changes, loop
consistency); book/reference.md §B.6.
Every displayed formula of that paper is lost; the formulas here are the reconstructions of
book/reference.md §B [RECON], checked against the surviving text and numerically.
R. Kenyon, "Spanning forests and the vector bundle Laplacian", Ann. Probab. 39 (2011) 1983–2017.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from workbench.attention._connection_checks import check_transports, eye_like
from workbench.attention._overflow import binary_scale, check_overflow, overflow_ignored
from workbench.backend import namespace
from workbench.validation import as_array, check_integer, check_square, shape_of

__all__ = ["gauge_transform", "holonomy", "holonomy_deviation", "loop_defect"]


def gauge_transform(O, V):
    r"""Change of frame at every token: :math:`O'_{ij} = V_j^{-1} O_{ij} V_i` for features :math:`X'_i = X_i V_i`.

    Why this is the gauge action in the row convention: a transport must commute with the change of frame,
    i.e. transporting then re-expressing in the new frame at :math:`i` must equal re-expressing at :math:`j`
    then transporting with :math:`O'`,

    .. math::

        (X_j O_{ij}) V_i = X'_j O'_{ij} = X_j V_j O'_{ij}\ \ \forall X_j
        \iff O'_{ij} = V_j^{-1} O_{ij} V_i .

    Consequently :math:`\mathcal T(A, O')(XV) = (\mathcal T(A, O)X)V` row by row, parallel sections map to
    parallel sections, and the holonomy at the base point :math:`i_0` of a cycle is conjugated,
    :math:`\mathrm{Hol}' = V_{i_0}^{-1}\,\mathrm{Hol}\,V_{i_0}` (the inner :math:`V_{i_m}V_{i_m}^{-1}` cancel), so
    its spectrum is gauge invariant.  The flat connections are the gauge transforms of the identity,
    :math:`O_{ij} = V_j^{-1}V_i`.

    Parameters
    ----------
    O : array, shape=[n, n, d, d]
        Edge transports, ``O[i, j]`` for the edge ``j → i``.
    V : array, shape=[n, d, d]
        Invertible frame changes, one per token.

    Returns
    -------
    array, shape=[n, n, d, d]

    Raises
    ------
    ValueError
        If some ``V[i]`` is singular to working precision (:math:`\sigma_{\min} \le d\,\epsilon\,\sigma_{\max}`).

    References
    ----------
    Connection-Laplacian paper §2 and §6 (gauge-equivariant view, local frame changes);
    book/reference.md §B.6 (flat transports :math:`V_j^{-1}V_i`) [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import propagate
    >>> rng = np.random.default_rng(6)
    >>> A, O = rng.random((3, 3)), rng.standard_normal((3, 3, 2, 2))
    >>> X, V = rng.standard_normal((3, 2)), rng.standard_normal((3, 2, 2))
    >>> XV = np.einsum("ib,iba->ia", X, V)  # X'_i = X_i V_i
    >>> lhs = propagate(A, gauge_transform(O, V), XV)
    >>> rhs = np.einsum("ib,iba->ia", propagate(A, O, X), V)
    >>> bool(np.allclose(lhs, rhs, rtol=1e-12, atol=1e-12))
    True
    """
    V = as_array("V", V, ndim=3)
    check_square("V", V)
    n, d = int(V.shape[0]), int(V.shape[-1])
    O = as_array("O", O, ndim=4)
    if shape_of(O) != (n, n, d, d):
        raise ValueError(f"O must have shape (n, n, d, d) = ({n}, {n}, {d}, {d}) matching V, got shape {shape_of(O)}")
    xp = namespace(O=O, V=V)
    sigma = xp.linalg.svdvals(V)
    ratio = sigma[:, -1] / xp.where(sigma[:, 0] > 0, sigma[:, 0], xp.ones_like(sigma[:, 0]))
    singular = ratio <= d * float(xp.finfo(V.dtype).eps)
    if bool(xp.any(singular)):
        i = int(xp.argmax(xp.astype(singular, xp.int64)))
        raise ValueError(
            f"V must hold invertible matrices, got V[{i}] singular to working precision "
            f"(smallest/largest singular value {float(ratio[i]):.3g})"
        )
    V_inv = xp.linalg.inv(V)
    return V_inv[None, :, :, :] @ O @ V[:, None, :, :]


def _cycle(cycle, n: int) -> list[int]:
    """Validate a closed walk ``(i0, ..., ik = i0)`` of vertex indices in ``[0, n)``."""
    is_vector = hasattr(cycle, "shape") and len(cycle.shape) == 1
    if isinstance(cycle, (str, bytes)) or not (isinstance(cycle, Sequence) or is_vector):
        raise TypeError(f"cycle must be a sequence of vertex indices, got {type(cycle).__name__}")
    # .item() turns numpy and torch scalars into Python numbers, so a float index is still rejected
    entries = [v.item() if hasattr(v, "item") else v for v in cycle]
    vertices = [check_integer(f"cycle[{k}]", v, 0, n - 1) for k, v in enumerate(entries)]
    if len(vertices) < 2:
        raise ValueError(f"cycle must list at least two vertices (i0, ..., i0), got {tuple(vertices)}")
    if vertices[0] != vertices[-1]:
        raise ValueError(f"cycle must be closed (first vertex == last vertex), got {tuple(vertices)}")
    return vertices


def holonomy(O, cycle):
    r"""Transport around a closed walk, in the row convention: :math:`\mathrm{Hol} = O_{i_1 i_0} O_{i_2 i_1}\cdots O_{i_k i_{k-1}}`.

    The cycle is given by the vertices it visits, ``(i0, i1, ..., ik)`` with ``ik == i0``.  Each step
    :math:`i_{m-1} \to i_m` multiplies the row vector on the right by :math:`O_{i_m i_{m-1}}`, so a vector
    :math:`x` at :math:`i_0` comes back as :math:`x\,\mathrm{Hol}`.  For the triangle walked
    :math:`i \to k \to j \to i`, ``holonomy(O, (i, k, j, i))`` is :math:`O_{ki} O_{jk} O_{ij}`, the formula of
    book/reference.md §B.6.  A flat connection (:math:`O_{ij} = V_j^{-1}V_i`) has trivial holonomy
    :math:`I`; under a gauge change the holonomy is conjugated by :math:`V_{i_0}` (:func:`gauge_transform`).

    Parameters
    ----------
    O : array, shape=[n, n, d, d]
        Edge transports, ``O[i, j]`` for the edge ``j → i``.
    cycle : sequence of int
        Visited vertices, closed (first == last), at least two entries.

    Returns
    -------
    array, shape=[d, d]

    References
    ----------
    Connection-Laplacian paper §6 (curvature or holonomy proxies via loop consistency);
    book/reference.md §B.6 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(7)
    >>> O = rng.standard_normal((3, 3, 2, 2))
    >>> bool(np.array_equal(holonomy(O, (0, 2, 1, 0)), O[2, 0] @ O[1, 2] @ O[0, 1]))
    True
    """  # noqa: E501
    O = check_transports("O", O, None)
    vertices = _cycle(cycle, int(O.shape[0]))
    with overflow_ignored():
        result = _transport_product(O, vertices)
    return check_overflow(f"the holonomy around {tuple(vertices)}", result, {"O": O})


def _transport_product(O, vertices):
    result = O[vertices[1], vertices[0]]
    for a, b in itertools.pairwise(vertices[1:]):
        result = result @ O[b, a]
    return result


def holonomy_deviation(O, cycles, remove_scale: bool = False):
    r"""Loop inconsistency of the transports, :math:`\lVert \mathrm{Hol} - I_d\rVert_F/\sqrt d`, one value per cycle.

    .. math::

        \kappa(C) = \frac{\lVert \mathrm{Hol}(C) - I_d\rVert_F}{\sqrt d}, \qquad
        \kappa_{\mathrm{rel}}(C) = \frac{\lVert \mathrm{Hol}(C)/s - I_d\rVert_F}{\sqrt d},\quad
        s = \frac{\lVert\mathrm{Hol}(C)\rVert_F}{\sqrt d},

    the second with ``remove_scale=True``: the holonomy is divided by its RMS singular value :math:`s` first, so a
    scaled-orthogonal connection (:math:`O_{ij} = c\,Q_{ij}`) is judged by its rotation alone.  Both vanish for a
    flat orthogonal connection; :math:`\kappa` is not gauge invariant for non-orthogonal frame changes (the
    spectrum of the holonomy is).  A curvature proxy [RECON].

    Parameters
    ----------
    O : array, shape=[n, n, d, d]
        Edge transports.
    cycles : sequence of sequences of int
        Closed walks, as in :func:`holonomy`.
    remove_scale : bool
        Normalise each holonomy by its RMS singular value first.

    Returns
    -------
    array, shape=[len(cycles)]

    Raises
    ------
    ValueError
        With ``remove_scale``, if a holonomy is zero (it has no scale).

    References
    ----------
    Connection-Laplacian paper §6 (loop consistency); book/reference.md §B.6 [RECON].

    Examples
    --------
    A ring of four eighth turns has holonomy :math:`R(\pi) = -I`, so :math:`\kappa = \lVert -2I\rVert_F/\sqrt2 = 2`;
    a walk that retraces its steps is always trivial, and a scale :math:`3^4` is removed:

    >>> import numpy as np
    >>> from workbench.attention import cycle_connection
    >>> A, O = cycle_connection(4, np.pi, uniform=True)
    >>> holonomy_deviation(O, [(0, 1, 2, 3, 0), (0, 1, 2, 1, 0)]).round(12).tolist()
    [2.0, 0.0]
    >>> holonomy_deviation(3 * O, [(0, 1, 2, 3, 0)], remove_scale=True).round(12).tolist()
    [2.0]
    """
    O = as_array("O", O, ndim=4)
    if isinstance(cycles, (str, bytes)) or not isinstance(cycles, Sequence) or len(cycles) == 0:
        raise TypeError(f"cycles must be a nonempty sequence of cycles, got {cycles!r}")
    xp = namespace(O)
    d = int(O.shape[-1])
    identity = eye_like(xp, d, O)
    values = []
    # With remove_scale the deviation is scale-free: the transports are divided by one power of two first
    # (exact), so huge transports whose holonomy alone would overflow still give the right number.
    unit = binary_scale(O) if remove_scale else 1.0
    for k, cycle in enumerate(cycles):
        hol = holonomy(O / unit, cycle)
        if remove_scale:
            hol = hol / binary_scale(hol)
            scale = float(xp.sqrt(xp.sum(hol**2))) / math.sqrt(d)
            if scale == 0.0:
                raise ValueError(f"holonomy of cycles[{k}] is zero, so remove_scale=True has no scale to remove")
            hol = hol / scale
        with overflow_ignored():
            gap = hol - identity
            unit_gap = binary_scale(gap)  # a Frobenius norm as s·‖x/s‖: no square overflows
            values.append(xp.sqrt(xp.sum((gap / unit_gap) ** 2)) * unit_gap / math.sqrt(d))
    return check_overflow("the holonomy deviations", xp.stack(values), {"O": O})


def loop_defect(A_heads, M, tokens) -> float:
    r"""Mean scale-free holonomy defect of the effective transport around triangles of consecutive tokens.

    For the tokens :math:`t_1, t_2, \dots` (in order) and each triangle :math:`(a, b, c) = (t_s, t_{s+1},
    t_{s+2})`, the effective transports :math:`O^{\mathrm{eff}}_{ij} = \sum_h w_h(i, j) M_h` with head weights
    :math:`w_h(i,j) = A^{(h)}_{ij}/\sum_{h'}A^{(h')}_{ij}` give the holonomy of the walk
    :math:`a \to b \to c \to a`, :math:`\mathrm{Hol} = O_{ba}O_{cb}O_{ac}`; its defect with the scale removed
    is :math:`\lVert\mathrm{Hol}/s - I\rVert_F/\sqrt d` with :math:`s = \lVert\mathrm{Hol}\rVert_F/\sqrt d`.
    Only the three transports of each triangle are formed, never the :math:`n^2d^2` array; the value is that of
    ``holonomy_deviation(O_eff, cycles, remove_scale=True)`` averaged over the triangles (tested).

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        The heads' attention (nonnegative; each of the triangle's edges must carry weight in some head).
    M : array, shape=[H, d, d]
        The value-output maps :math:`M_h = W_V^hW_O^h`.
    tokens : sequence of int
        The tokens to walk, in order (e.g. the non-special ones); at least three.

    Returns
    -------
    float

    References
    ----------
    "From Self-Attention to Connection Laplacian" §6 (loop consistency); book/reference.md §B.6 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> A = np.full((2, 4, 4), 0.25)
    >>> R = np.array([[0.0, -1.0], [1.0, 0.0]])  # one rotation in both heads: the holonomy is R³, not I
    >>> round(loop_defect(A, np.stack([R, R]), [0, 1, 2, 3]), 6)  # ‖R³ − I‖_F/√2 = √2
    1.414214
    """
    A_heads = as_array("A_heads", A_heads, ndim=3)
    check_square("A_heads", A_heads)
    M = as_array("M", M, ndim=3)
    check_square("M", M)
    H, n = int(A_heads.shape[0]), int(A_heads.shape[-1])
    if int(M.shape[0]) != H:
        raise ValueError(f"M must have one map per head of A_heads, {H}, got shape {shape_of(M)}")
    if isinstance(tokens, (str, bytes)) or (not isinstance(tokens, Sequence) and not hasattr(tokens, "__len__")):
        raise TypeError(f"tokens must be a sequence of token indices, got {type(tokens).__name__}")
    tokens = [check_integer(f"tokens[{i}]", t, 0, n - 1) for i, t in enumerate(tokens)]
    if len(tokens) < 3:
        raise ValueError(f"tokens must hold at least three tokens (one triangle), got {len(tokens)}")
    A = np.asarray(A_heads, dtype=np.float64)
    if np.any(A < 0):
        raise ValueError("A_heads must be nonnegative, got a negative entry")
    maps = np.asarray(M, dtype=np.float64)
    d = maps.shape[-1]
    maps = (maps / binary_scale(maps)).reshape(H, d * d)  # the defect is scale-free; dividing by 2^e is exact
    identity = np.eye(d)
    values = []
    for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False):
        weights = A[:, [b, c, a], [a, b, c]].T  # [3, H]: the edges a→b, b→c, c→a
        totals = weights.sum(axis=1, keepdims=True)
        if not np.all(totals > 0):
            raise ValueError(f"A_heads must give weight to every edge of the triangle {(a, b, c)}, got a zero edge")
        O_ba, O_cb, O_ac = ((weights / totals) @ maps).reshape(3, d, d)
        hol = O_ba @ O_cb @ O_ac
        hol = hol / binary_scale(hol)
        scale = float(np.sqrt(np.sum(hol**2))) / math.sqrt(d)
        if scale == 0.0:
            raise ValueError(f"the holonomy around tokens {(a, b, c, a)} is zero, so it has no scale to remove")
        values.append(float(np.sqrt(np.sum((hol / scale - identity) ** 2))) / math.sqrt(d))
    return float(np.mean(values))
