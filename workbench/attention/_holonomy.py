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
from typing import NamedTuple

import numpy as np

from workbench.attention._connection_checks import check_head_factors, check_transports, eye_like
from workbench.attention._overflow import binary_scale, check_overflow, overflow_ignored
from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, check_flag, check_integer, check_square, shape_of

__all__ = [
    "factored_loop_defect",
    "gauge_transform",
    "holonomy",
    "holonomy_deviation",
    "loop_defect",
    "loop_defect_operations",
]


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


def _cycle(cycle, n: int, name: str = "cycle") -> list[int]:
    """Validate a closed walk ``(i0, ..., ik = i0)`` of vertex indices in ``[0, n)``; messages name ``name``."""
    is_vector = hasattr(cycle, "shape") and len(cycle.shape) == 1
    if isinstance(cycle, (str, bytes)) or not (isinstance(cycle, Sequence) or is_vector):
        raise TypeError(f"{name} must be a sequence of vertex indices, got {type(cycle).__name__}")
    # .item() turns numpy and torch scalars into Python numbers, so a float index is still rejected
    entries = [v.item() if hasattr(v, "item") else v for v in cycle]
    vertices = [check_integer(f"{name}[{k}]", v, 0, n - 1) for k, v in enumerate(entries)]
    if len(vertices) < 2:
        raise ValueError(f"{name} must list at least two vertices (i0, ..., i0), got {tuple(vertices)}")
    if vertices[0] != vertices[-1]:
        raise ValueError(f"{name} must be closed (first vertex == last vertex), got {tuple(vertices)}")
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
    O = check_transports("O", O, None)
    if isinstance(cycles, (str, bytes)) or not isinstance(cycles, Sequence) or len(cycles) == 0:
        raise TypeError(f"cycles must be a nonempty sequence of cycles, got {cycles!r}")
    remove_scale = check_flag("remove_scale", remove_scale)
    walks = [_cycle(cycle, int(O.shape[0]), f"cycles[{k}]") for k, cycle in enumerate(cycles)]
    xp = namespace(O)
    d = int(O.shape[-1])
    identity = eye_like(xp, d, O)
    values = []
    # With remove_scale the deviation is scale-free: the transports are divided by one power of two first
    # (exact), so huge transports whose holonomy alone would overflow still give the right number.
    unit = binary_scale(O) if remove_scale else 1.0
    for k, walk in enumerate(walks):
        hol = holonomy(O / unit, walk)
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


#: Working-set bound of the loop defects (bytes): the factored route's tables and chunks, or the dense maps.  At
#: H = 12, r = 64 (GPT-2 small, ViT-B/16) the factored route needs about 340 MiB and reads all 195 triangles of an
#: image in the time the dense route reads 10 (measured: 0.49 s against 0.47 s a layer on 2 cores).
_LOOP_BYTES = 512 * 2**20
#: A triangle whose cosine tr(Hol)/(√d‖Hol‖_F) exceeds 1 − this is redone by the dense route (see
#: :func:`factored_loop_defect`): there √(2 − 2cos) would cost half the digits.
_FLAT_COSINE = 1e-6
#: A triangle whose holonomy is this many times smaller than its transports' natural size is redone densely.
_LOOP_CONDITION = 1e3


def loop_defect(A_heads, M, tokens) -> float:
    r"""Mean scale-free holonomy defect of the effective transport around triangles of consecutive tokens.

    For the tokens :math:`t_1, t_2, \dots` (in order) and each triangle :math:`(a, b, c) = (t_s, t_{s+1},
    t_{s+2})`, the effective transports :math:`O^{\mathrm{eff}}_{ij} = \sum_h w_h(i, j) M_h` with head weights
    :math:`w_h(i,j) = A^{(h)}_{ij}/\sum_{h'}A^{(h')}_{ij}` give the holonomy of the walk
    :math:`a \to b \to c \to a`, :math:`\mathrm{Hol} = O_{ba}O_{cb}O_{ac}`; its defect with the scale removed
    is :math:`\lVert\mathrm{Hol}/s - I\rVert_F/\sqrt d` with :math:`s = \lVert\mathrm{Hol}\rVert_F/\sqrt d`.
    Only the three transports of each triangle are formed, never the :math:`n^2d^2` array; the value is that of
    ``holonomy_deviation(O_eff, cycles, remove_scale=True)`` averaged over the triangles (tested).  This is the
    dense route, two :math:`d\times d\times d` products per triangle; a model's layer holds the factors
    :math:`M_h = W_V^hW_O^h`, and :func:`factored_loop_defect` reads them faster (2.5× on a MiniLM layer).

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
    H = int(A_heads.shape[0])
    if int(M.shape[0]) != H:
        raise ValueError(f"M must have one map per head of A_heads, {H}, got shape {shape_of(M)}")
    triangles, weights = _triangle_weights(A_heads, tokens)
    maps = np.asarray(to_numpy(M), dtype=np.float64)
    d = maps.shape[-1]
    maps = (maps / binary_scale(maps)).reshape(H, d * d)  # the defect is scale-free; dividing by 2^e is exact
    return float(np.mean([_dense_defect(w @ maps, d, t) for w, t in zip(weights, triangles, strict=True)]))


def loop_defect_operations(n_heads: int, rank: int, d: int, triangles: int) -> float:
    """Floating-point operations :func:`factored_loop_defect` spends on ``triangles`` triangles (its cheaper route).

    Examples
    --------
    >>> f"{loop_defect_operations(12, 64, 768, 195):.2g}"  # ViT-B/16, one image: the trace route
    '2e+10'
    >>> f"{loop_defect_operations(16, 64, 1024, 195):.2g}"  # ViT-L/16: its tables pass the memory bound, dense
    '8.6e+11'
    """
    for name, value in (("n_heads", n_heads), ("rank", rank), ("d", d), ("triangles", triangles)):
        check_integer(name, value, 1)
    return float(min(_factored_cost(n_heads, rank, d, triangles), _dense_cost(n_heads, rank, d, triangles)))


def factored_loop_defect(A_heads, W_V, W_O, tokens, *, max_triangles: int | None = None) -> float:
    r""":func:`loop_defect` of the maps :math:`M_h = W_V^hW_O^h` from the factors, without a product of maps.

    The defect needs only two numbers per triangle: expanding the square,

    .. math::

        \Bigl\lVert \frac{\mathrm{Hol}}{s} - I\Bigr\rVert_F^2\Big/d = 2 - 2\cos\theta, \qquad
        \cos\theta = \frac{\operatorname{tr}\mathrm{Hol}}{\sqrt d\,\lVert\mathrm{Hol}\rVert_F},

    and both are polynomials in the head weights of the three edges, whose coefficients depend on the layer
    alone.  Stack the factors, :math:`U = [W_V^1\cdots W_V^H]` (:math:`d\times Hr`) and :math:`V` the
    :math:`W_O^h` one above the other (:math:`Hr\times d`), and write :math:`D_x = \operatorname{diag}(w_x\otimes
    \mathbf 1_r)` for the weights of the edge :math:`x`.  Then :math:`O_x = UD_xV` and, with :math:`C = VU`
    (blocks :math:`C_{hg} = W_O^hW_V^g`), :math:`\mathrm{Hol} = UD_1CD_2CD_3V`, so

    .. math::

        \operatorname{tr}\mathrm{Hol} = \sum_{h,g,k} w_{1h}w_{2g}w_{3k}\,\operatorname{tr}(C_{hg}C_{gk}C_{kh}),
        \qquad
        \lVert\mathrm{Hol}\rVert_F^2 = \operatorname{tr}(D_2 L D_2 R),

    with :math:`L = C^\top D_1 U^\top U D_1 C` and :math:`R = CD_3VV^\top D_3C^\top`, each a combination, with
    weights :math:`w_hw_{h'}`, of :math:`H(H+1)/2` symmetric :math:`Hr\times Hr` matrices fixed by the layer.
    The trace pairs their :math:`r\times r` blocks, so one table :math:`\Phi` of the layer (pairs of heads of
    the first edge × pairs of the third × pairs of blocks) gives :math:`\lVert\mathrm{Hol}\rVert_F^2` of every
    triangle by a contraction with its weights.  Each head is first refactored as
    :math:`W_V^h = Q_hR_h`, :math:`(W_V^h, W_O^h) \to (Q_h, R_hW_O^h)` (the same :math:`M_h`): every entry
    of :math:`C`, :math:`U^\top U` and :math:`VV^\top` is then bounded by the sizes of the maps, so the
    combinations round like the products they replace.

    Cost, for :math:`T` triangles: about :math:`2H^4r^3 + H^6r^2/4` operations for the layer's tables and
    :math:`H^6/4` per triangle, against :math:`4d^3` per triangle densely (MiniLM, :math:`H = 12`,
    :math:`r = 32`, :math:`d = 384`, 60 triangles: about 3.1 against 14.8 GFLOP; measured on one core, 114 ms
    against 284 ms).  Where the dense route is the cheaper one (few triangles, or :math:`Hr \gg d`), or the
    tables would pass 512 MiB (:math:`H = 12`, :math:`r = 64` — GPT-2 small, ViT-B/16 — need about 340 MiB;
    :math:`H = 16` at :math:`r = 64` already more), the maps are formed and the dense route runs.  The tables
    depend on the weights alone and the last 32 layers' are kept, so another text on the same layers costs only
    the contraction.

    Accuracy: :math:`\sqrt{2 - 2\cos\theta}` loses half the digits as the defect goes to zero (a rounding
    :math:`\epsilon` of the cosine becomes :math:`\sqrt{2\epsilon}` of the defect), so every triangle with
    :math:`\cos\theta > 1 - 10^{-6}` (defect below :math:`1.4\cdot10^{-3}`) is redone by the dense route, as
    is every triangle whose holonomy is over :math:`10^3` times smaller than
    :math:`\prod_x (\sum_h w_{xh}\lVert M_h\rVert_F)/d` (cancellation between heads or along the walk); the
    result then matches :func:`loop_defect` to about :math:`10^{-12}` (tested).

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        The heads' attention (nonnegative; each of the triangle's edges must carry weight in some head).
    W_V : array, shape=[H, d, r]
    W_O : array, shape=[H, r, d]
        The factors of the value-output maps, :math:`M_h = W_V^hW_O^h` (any rank :math:`r`).
    tokens : sequence of int
        The tokens to walk, in order (e.g. the non-special ones); at least three.
    max_triangles : int, optional
        Average over at most this many of the triangles, evenly spaced along the walk (first and last included);
        default all.  For a budget: :func:`loop_defect_operations` gives the cost of a number of triangles.

    Returns
    -------
    float
        Equal to ``loop_defect(A_heads, W_V @ W_O, tokens)`` up to rounding (tested); with ``max_triangles``, the
        mean over the triangles kept.

    Raises
    ------
    ValueError
        If an edge of a triangle carries no weight in any head, or a holonomy is zero (it has no scale).

    References
    ----------
    "From Self-Attention to Connection Laplacian" §6 (loop consistency); book/reference.md §B.6 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A = rng.random((2, 5, 5))
    >>> W_V, W_O = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3, 4))
    >>> fast, dense = factored_loop_defect(A, W_V, W_O, range(5)), loop_defect(A, W_V @ W_O, range(5))
    >>> bool(abs(fast - dense) < 1e-12)
    True
    """
    A_heads, W_V, W_O = check_head_factors(A_heads, W_V, W_O)
    H, d, r = shape_of(W_V)
    if d == 0 or r == 0:
        raise ValueError(f"W_V and W_O must have d ≥ 1 and r ≥ 1, got shapes {shape_of(W_V)} and {shape_of(W_O)}")
    triangles, weights = _triangle_weights(A_heads, tokens)
    if max_triangles is not None:
        keep = check_integer("max_triangles", max_triangles, 1)
        if keep < len(triangles):
            chosen = np.unique(np.round(np.linspace(0, len(triangles) - 1, keep)).astype(int))
            triangles, weights = [triangles[i] for i in chosen], weights[chosen]
    U, V = (np.asarray(to_numpy(W), dtype=np.float64) for W in (W_V, W_O))
    U, V = U / binary_scale(U), V / binary_scale(V)  # scale-free: exact divisions by powers of two
    T, r = len(triangles), min(r, d)  # the rank the thin QR of the tables leaves
    if _factored_cost(H, r, d, T) >= _dense_cost(H, r, d, T):
        values = _dense_defects(weights, triangles, U, V, range(T))
    else:
        values, redo = _factored_defects(weights, U, V)
        if redo.any():
            values[redo] = _dense_defects(weights, triangles, U, V, np.flatnonzero(redo))
    return float(np.mean(values))


def _triangle_weights(A_heads, tokens) -> tuple[list[tuple[int, int, int]], np.ndarray]:
    """The triangles of consecutive tokens and their edges' head weights, [T, 3, H] (edges a→b, b→c, c→a)."""
    n = int(A_heads.shape[-1])
    if isinstance(tokens, (str, bytes)) or (not isinstance(tokens, Sequence) and not hasattr(tokens, "__len__")):
        raise TypeError(f"tokens must be a sequence of token indices, got {type(tokens).__name__}")
    tokens = [check_integer(f"tokens[{i}]", t, 0, n - 1) for i, t in enumerate(tokens)]
    if len(tokens) < 3:
        raise ValueError(f"tokens must hold at least three tokens (one triangle), got {len(tokens)}")
    A = np.asarray(to_numpy(A_heads), dtype=np.float64)
    if np.any(A < 0):
        raise ValueError("A_heads must be nonnegative, got a negative entry")
    triangles = list(zip(tokens, tokens[1:], tokens[2:], strict=False))
    a, b, c = (np.array(v) for v in zip(*triangles, strict=True))
    weights = np.moveaxis(A[:, np.stack([b, c, a], axis=1), np.stack([a, b, c], axis=1)], 0, -1)  # [T, 3, H]
    totals = weights.sum(axis=-1, keepdims=True)
    zero = ~np.all(totals[..., 0] > 0, axis=1)
    if zero.any():
        triangle = triangles[int(np.argmax(zero))]
        raise ValueError(f"A_heads must give weight to every edge of the triangle {triangle}, got a zero edge")
    return triangles, weights / totals


def _dense_defect(transports, d: int, triangle) -> float:
    """‖Hol/s − I‖_F/√d of one triangle from its three transports, ``transports`` [3, d·d]."""
    O_ba, O_cb, O_ac = transports.reshape(3, d, d)
    hol = O_ba @ O_cb @ O_ac
    hol = hol / binary_scale(hol)
    scale = float(np.sqrt(np.sum(hol**2))) / math.sqrt(d)
    if scale == 0.0:
        a, b, c = triangle
        raise ValueError(f"the holonomy around tokens {(a, b, c, a)} is zero, so it has no scale to remove")
    return float(np.sqrt(np.sum((hol / scale - np.eye(d)) ** 2))) / math.sqrt(d)


def _dense_defects(weights, triangles, U, V, which) -> np.ndarray:
    """The dense defects of the triangles ``which``, from the factors: the maps if they fit, else U D_x V per edge."""
    H, d, r = U.shape
    if H * d * d * 8 <= _LOOP_BYTES:
        maps = (U @ V).reshape(H, d * d)
        return np.array([_dense_defect(weights[t] @ maps, d, triangles[t]) for t in which])
    stacked_U, stacked_V = np.moveaxis(U, 0, 1).reshape(d, H * r), V.reshape(H * r, d)
    values = []
    for t in which:
        edges = [(stacked_U * np.repeat(w, r)) @ stacked_V for w in weights[t]]
        values.append(_dense_defect(np.stack(edges), d, triangles[t]))
    return np.array(values)


def _factored_cost(H: int, r: int, d: int, T: int) -> float:
    """Operations of the factored route, or infinity where its tables would pass :data:`_LOOP_BYTES`."""
    P = H * (H + 1) // 2
    tables = 8 * (8 * P * H * r * r + 2 * P**3 + 3 * (H * r) ** 2 + P * P * min(T, 256))
    tables += min(_LOOP_BYTES // 4, 8 * 2 * P * H * r * r)  # the column chunks
    if tables > _LOOP_BYTES:
        return math.inf
    return 8 * P * P * r**3 + 2 * P**3 * r * r + 6 * d * (H * r) ** 2 + 4 * P * H * r**3 + 2 * T * P**3


def _dense_cost(H: int, r: int, d: int, T: int) -> float:
    return T * (4 * d**3 + 6 * H * d * d) + 2 * H * d * d * r


def _factored_defects(weights, U, V) -> tuple[np.ndarray, np.ndarray]:
    """The defects of all triangles by the trace route, and the triangles to redo densely (see the docstring)."""
    d = U.shape[1]
    tables = _layer_tables(U, V)
    w1, w2, w3 = weights[:, 0], weights[:, 1], weights[:, 2]
    trace = np.einsum("th,tk,thk->t", w1, w3, np.einsum("tg,hgk->thk", w2, tables.cyclic))
    norm2 = _holonomy_norms(tables, w1, w2, w3)
    natural = (w1 @ tables.size) * (w2 @ tables.size) * (w3 @ tables.size) / d
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = np.sqrt(np.where(norm2 > 0, norm2, np.nan))
        cosine = trace / (math.sqrt(d) * norm)
        redo = ~np.isfinite(cosine) | (cosine > 1.0 - _FLAT_COSINE) | ~(natural < _LOOP_CONDITION * norm)
        values = np.sqrt(np.maximum(2.0 - 2.0 * cosine, 0.0))  # NaN where the norm is not positive
    return values, redo


class _LayerTables(NamedTuple):
    """What the trace route needs of a layer's maps alone (not of the attention): built once per layer."""

    cyclic: np.ndarray  # [H, H, H]: tr(C_hg C_gk C_kh)
    phi: np.ndarray  # [blocks, P, P]: ⟨L_p[b], R_q[b]⟩
    first: np.ndarray  # the pairs p = (h ≤ h')
    second: np.ndarray
    rows_of: np.ndarray  # the blocks b = (g ≤ g')
    cols_of: np.ndarray
    size: np.ndarray  # [H]: ‖M_h‖_F


#: The tables of the layers read most recently, by a fingerprint of their factors.  They depend on the weights
#: only, and a corpus run reads the same layers for every window: kept, the trace route costs a contraction per
#: window instead of ~0.1 s of table building per layer.  A few MiB each (P³ numbers, P = H(H+1)/2).
_TABLES: dict[bytes, _LayerTables] = {}
_TABLES_KEPT = 32


def _layer_tables(U, V) -> _LayerTables:
    import hashlib

    key = hashlib.blake2b(U.tobytes() + V.tobytes() + repr((U.shape, V.shape)).encode(), digest_size=20).digest()
    tables = _TABLES.get(key)
    if tables is None:
        Q, R = np.linalg.qr(U)  # W_V^h = Q_h R_h; (Q_h, R_h W_O^h) factor the same map with bounded entries
        tables = _build_layer_tables(Q, R @ V)
        if len(_TABLES) >= _TABLES_KEPT:
            _TABLES.pop(next(iter(_TABLES)))  # the oldest first
        _TABLES[key] = tables
    return tables


def _build_layer_tables(U, V) -> _LayerTables:
    H, d, r = U.shape
    Hr = H * r
    stacked_U, stacked_V = np.moveaxis(U, 0, 1).reshape(d, Hr), V.reshape(Hr, d)
    C = stacked_V @ stacked_U  # blocks C_hg = W_O^h W_V^g
    # tr Hol = Σ w1_h w2_g w3_k tr(C_hg C_gk C_kh); the (h, k) blocks of C[:, g] C[g, :] are C_hg C_gk
    cyclic = np.empty((H, H, H))
    for g in range(H):
        chain = C[:, g * r : (g + 1) * r] @ C[g * r : (g + 1) * r, :]
        cyclic[:, g, :] = (chain * C.T).reshape(H, r, H, r).sum(axis=(1, 3))
    phi, first, second, rows_of, cols_of = _norm_table(C, stacked_U.T @ stacked_U, stacked_V @ stacked_V.T, H, r)
    size = np.linalg.norm(V, axis=(1, 2))  # ‖M_h‖_F = ‖R_h W_O^h‖_F, Q_h being orthonormal
    return _LayerTables(cyclic, phi, first, second, rows_of, cols_of, size)


def _norm_table(C, gram_U, gram_V, H: int, r: int):
    r"""The layer's table Φ[b, p, q] = ⟨L_p[b], R_q[b]⟩ behind ‖Hol‖_F² = tr(D_2 L D_2 R) (:func:`_holonomy_norms`).

    :math:`L = \sum_{p = (h \le h')} w_{1h}w_{1h'} L_p` with :math:`L_p = X_{hh'} + X_{hh'}^\top` (once for
    :math:`h = h'`), :math:`X_{hh'} = C_h^\top G_{hh'} C_{h'}` (:math:`C_h` the row block :math:`h` of C, G the
    Gram matrix :math:`U^\top U`); R likewise from :math:`C^\top` and :math:`VV^\top`.  Both are symmetric, so
    :math:`\operatorname{tr}(D_2LD_2R) = \sum_{g \le g'} (2 - \delta_{gg'}) w_{2g}w_{2g'}\langle L[g,g'],
    R[g,g']\rangle` over the :math:`r\times r` blocks :math:`b = (g, g')`; the blocks are formed a column
    :math:`g'` at a time, in chunks that keep the working set within :data:`_LOOP_BYTES`.
    """
    first, second = np.triu_indices(H)  # the pairs p = (h ≤ h')
    P = first.size
    chunk = min(H, max(1, (_LOOP_BYTES // 4) // (2 * P * r * r * 8)))  # blocks per chunk of L and R
    sides = [_SideTerms(C, gram_U, first, second, H, r), _SideTerms(C.T, gram_V, first, second, H, r)]
    rows_of, cols_of = [], []
    for g_col in range(H):
        rows_of += list(range(g_col + 1))
        cols_of += [g_col] * (g_col + 1)
    rows_of, cols_of = np.array(rows_of), np.array(cols_of)
    phi = np.empty((rows_of.size, P, P))
    buffers = (np.empty(P * chunk * r * r), np.empty(P * chunk * r * r))
    b = 0
    for g_col in range(H):
        for g0 in range(0, g_col + 1, chunk):
            g1 = min(g_col + 1, g0 + chunk)
            L, R = (
                side.column(g_col, g0, g1, buffer[: P * (g1 - g0) * r * r].reshape(P, (g1 - g0) * r, r)).reshape(
                    P, g1 - g0, r * r
                )
                for side, buffer in zip(sides, buffers, strict=True)
            )
            np.matmul(L.transpose(1, 0, 2), R.transpose(1, 2, 0), out=phi[b : b + g1 - g0])
            b += g1 - g0
    return phi, first, second, rows_of, cols_of


def _holonomy_norms(tables: _LayerTables, w1, w2, w3) -> np.ndarray:
    """‖Hol‖_F² of every triangle: the layer's table Φ contracted with the triangles' head weights."""
    first, second, rows_of, cols_of, phi = tables.first, tables.second, tables.rows_of, tables.cols_of, tables.phi
    P = first.size
    half = np.where(first == second, 0.5, 1.0)  # the tables hold 2 L_p, 2 R_p for h = h' (exact halving)
    u1, u3 = w1[:, first] * w1[:, second] * half, w3[:, first] * w3[:, second] * half
    blocks = w2[:, rows_of] * w2[:, cols_of] * np.where(rows_of < cols_of, 2.0, 1.0)
    table = np.ascontiguousarray(phi.transpose(1, 0, 2)).reshape(P, -1)  # [p, (b, q)]
    norm2 = np.empty(w1.shape[0])
    for t0 in range(0, w1.shape[0], 256):
        t1 = min(w1.shape[0], t0 + 256)
        left = (u1[t0:t1] @ table).reshape(t1 - t0, rows_of.size, P)
        norm2[t0:t1] = np.einsum("tbq,tq,tb->t", left, u3[t0:t1], blocks[t0:t1])
    return norm2


class _SideTerms:
    r"""The blocks of :math:`L_p = X_{hh'} + X_{hh'}^\top`, :math:`X_{hh'} = C_h^\top G_{hh'}C_{h'}`, by columns.

    Both terms come out of one product per pair, :math:`[C_h^\top \mid Z_p^\top]\,[Z_p ; C_h]` with
    :math:`Z_p = G_{hh'}C_{h'}`; for :math:`h = h'` that is :math:`2X_{hh}` (:math:`X_{hh}` is symmetric), which
    the caller halves.
    """

    def __init__(self, C, gram, first, second, H: int, r: int):
        Hr, P = H * r, first.size
        rows = C.reshape(H, r, Hr)  # C_h
        gram_blocks = gram.reshape(H, r, H, r)
        self.left = np.empty((P, Hr, 2 * r))  # [C_h^T | Z_p^T]
        self.right = np.empty((P, 2 * r, Hr))  # [Z_p ; C_h]
        columns = np.ascontiguousarray(rows.transpose(0, 2, 1))  # C_h^T
        for h in range(H):
            start, stop = int(np.searchsorted(first, h)), int(np.searchsorted(first, h, side="right"))
            self.left[start:stop, :, :r] = columns[h]
            self.right[start:stop, r:, :] = rows[h]
            # Z_p = G_hh' C_h' and Z_p^T = C_h'^T G_h'h for h' = h, …, H − 1 (two products: no strided copy)
            np.matmul(gram_blocks[h, :, h:, :].transpose(1, 0, 2), rows[h:], out=self.right[start:stop, :r, :])
            np.matmul(columns[h:], gram_blocks[h:, :, h, :], out=self.left[start:stop, :, r:])
        self.r = r

    def column(self, g_col: int, g0: int, g1: int, out) -> np.ndarray:
        """L_p[g, g_col] for g in [g0, g1), every pair p (2 L_p for h = h'), into ``out`` [P, (g1 − g0)·r, r]."""
        r = self.r
        return np.matmul(self.left[:, g0 * r : g1 * r, :], self.right[:, :, g_col * r : (g_col + 1) * r], out=out)
