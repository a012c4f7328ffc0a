r"""The connection walk of attention: edge transports, the connection Laplacian and its diagnostics.

A *connection walk* on ``n`` tokens pairs walk weights :math:`A_{ij}` on the oriented edges
:math:`j \to i` with an edge transport :math:`O_{ij} \in \mathbb R^{d\times d}`.  Features are row vectors
:math:`X_i \in \mathbb R^{1\times d}` (rows of :math:`X \in \mathbb R^{n\times d}`), and a transport acts by
right multiplication, :math:`X_j \mapsto X_j O_{ij}`.  Arrays: ``A`` has ``shape=[n, n]``, ``O`` has
``shape=[n, n, d, d]`` with ``O[i, j]`` the transport of the edge ``j → i``.  One step of the walk is

.. math::

    (\mathcal T(A, O)X)_i = \sum_j A_{ij}\, X_j O_{ij},

and the random-walk connection Laplacian is :math:`\mathcal L^{\mathrm{rw}}_c = I - \mathcal T` (the
positive convention :math:`L = I - P`).  Multi-head attention
:math:`\operatorname{MHA}(X) = \sum_h A^{(h)} X M_h` (value-output maps :math:`M_h = W_V^h W_O^h`) is one such
step, :math:`\operatorname{MHA}(X) = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X`, with the mean
attention :math:`A_{\mathrm{eff}}` and the attention-weighted mean of the :math:`M_h` as transport.

The module then reads the geometry of the pair :math:`(A, O)`: the π-symmetric and π-skew parts of the
generator (dissipation and drift), the connection Dirichlet energy, the polar split of each transport into a
rotation and a deformation, the scaled-orthogonality deviation :math:`\delta_{\mathrm{orth}}`, the drift
:math:`d_A` of the walk between layers, holonomy around cycles and its behaviour under a change of frame
(gauge).  :func:`cycle_connection` is the oracle: a ring whose connection Laplacian has a closed-form
spectrum.

Gauge convention (row vectors).  A change of frame :math:`X'_i = X_i V_i` (``V[i]`` invertible) carries
the transport :math:`O_{ij}` to :math:`O'_{ij} = V_j^{-1} O_{ij} V_i`; the transport along a path
:math:`i_0 \to i_1 \to \dots \to i_k` is the product :math:`O_{i_1 i_0} O_{i_2 i_1}\cdots O_{i_k i_{k-1}}`,
read left to right in the order the path is walked.

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §3 (connection walk, block matrix), §4 (MHA as a connection step, Eqs. (8)–(10)), §5
(reversibility, polar split, generator and energy, Eqs. (12)–(14)), §7 (metrics: :math:`d_A`,
:math:`\delta_{\mathrm{orth}}`, Eq. (15)); attention-geometry-math §B.1–§B.6.  Every displayed formula of
that paper is lost; the formulas here are the reconstructions of attention-geometry-math §B [RECON], checked
against the surviving text and numerically.
A. Singer and H.-T. Wu, "Vector diffusion maps and the connection Laplacian", Comm. Pure Appl. Math. 65
(2012) 1067–1144.
A. S. Bandeira, A. Singer and D. A. Spielman, "A Cheeger inequality for the graph connection Laplacian",
SIAM J. Matrix Anal. Appl. 34 (2013) 1611–1630.
R. Kenyon, "Spanning forests and the vector bundle Laplacian", Ann. Probab. 39 (2011) 1983–2017.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.markov import MarkovOperator
from workbench.validation import (
    as_array,
    check_choice,
    check_in_range,
    check_integer,
    check_matching,
    check_nonnegative,
    check_row_stochastic,
    check_square,
    shape_of,
)

__all__ = [
    "EffectiveTransportGram",
    "MixingGenerator",
    "OrthogonalityDeviation",
    "block_operator",
    "connection_energy",
    "connection_laplacian",
    "connection_step",
    "cycle_connection",
    "effective_connection",
    "effective_connection_energy",
    "effective_transport_gram",
    "gauge_transform",
    "geometric_drift",
    "holonomy",
    "holonomy_deviation",
    "mixing_generator",
    "orthogonality_deviation",
    "polar_transports",
    "propagate",
]


# --------------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------------


def _walk(name: str, A):
    """Validate walk weights: a square matrix."""
    A = as_array(name, A, ndim=2)
    check_square(name, A)
    return A


def _transports(name: str, O, n: int | None, weights_name: str = "A"):
    """Validate a transport field ``shape=[n, n, d, d]`` (against ``n`` tokens of ``weights_name`` if given)."""
    O = as_array(name, O, ndim=4)
    shape = shape_of(O)
    if n is None:
        if shape[0] != shape[1] or shape[2] != shape[3]:
            raise ValueError(f"{name} must have shape (n, n, d, d), got shape {shape}")
    elif shape[:2] != (n, n) or shape[2] != shape[3]:
        raise ValueError(
            f"{name} must have shape (n, n, d, d) = ({n}, {n}, d, d) matching {weights_name}, got shape {shape}"
        )
    return O


def _features(name: str, X, n: int, d: int):
    X = as_array(name, X, ndim=2)
    shape = shape_of(X)
    if shape != (n, d):
        raise ValueError(f"{name} must have shape (n, d) = ({n}, {d}), got shape {shape}")
    return X


def _law(name: str, pi, n: int, *, positive: bool):
    pi = as_array(name, pi, ndim=1)
    check_matching(name, pi.shape[0], "A rows", n)
    check_nonnegative(name, pi)
    if positive and float(namespace(pi).min(pi)) <= 0.0:
        host = to_numpy(pi)
        raise ValueError(f"{name} must be positive, got {name}[{int(np.argmin(host))}] = {float(host.min()):.6g}")
    return pi


def _mask(mask, shape: tuple[int, ...], xp, like):
    """Validate a boolean support mask of the given shape; return it in the library and device of ``like``."""
    if not (isinstance(mask, np.ndarray) or array_api_compat.is_torch_array(mask)):
        mask = np.asarray(mask)
    if str(mask.dtype) not in ("bool", "torch.bool"):
        raise TypeError(f"mask must be a boolean array (True = included), got dtype {mask.dtype}")
    if shape_of(mask) != shape:
        raise ValueError(f"mask must have shape {shape}, got shape {shape_of(mask)}")
    return xp.asarray(mask, device=_device(like))


def _device(x):
    return array_api_compat.device(x)


def _eye(xp, d: int, like):
    return xp.eye(d, dtype=like.dtype, device=_device(like))


def _stationary(name: str, A):
    """The stationary law of a row-stochastic ``A`` (through :class:`workbench.markov.MarkovOperator`)."""
    check_row_stochastic(name, A)
    return MarkovOperator(A).stationary


# --------------------------------------------------------------------------------------------------
# The connection walk
# --------------------------------------------------------------------------------------------------


def propagate(A, O, X):
    r"""One step of the connection walk, :math:`(\mathcal T(A, O)X)_i = \sum_j A_{ij}\, X_j O_{ij}`.

    Each neighbour's feature row is transported into the frame of token :math:`i` (right multiplication by
    :math:`O_{ij}`, the transport of the edge :math:`j \to i`), then averaged with the walk weights.  With
    ``O=None`` every transport is the identity and this is ordinary averaging :math:`AX`.

    Parameters
    ----------
    A : array, shape=[n, n]
        Walk weights (a row-stochastic :math:`A` makes this an average; any real weights are accepted).
    O : array, shape=[n, n, d, d], or None
        Edge transports, ``O[i, j]`` for the edge ``j → i``; ``None`` means :math:`O_{ij} = I_d`.
    X : array, shape=[n, d]
        Row-vector features.

    Returns
    -------
    array, shape=[n, d]
        Same library (numpy or torch) as the inputs.

    References
    ----------
    Connection-Laplacian paper §3 (connection propagation operator); attention-geometry-math §B.2 [RECON of
    the lost display; the identity case is SEED].

    Examples
    --------
    Token 0 averages itself with token 1 seen through a quarter turn of the plane:

    >>> import numpy as np
    >>> A = np.array([[0.5, 0.5], [0.0, 1.0]])
    >>> O = np.zeros((2, 2, 2, 2)); O[:, :] = np.eye(2)
    >>> O[0, 1] = [[0.0, 1.0], [-1.0, 0.0]]  # (1, 0) ↦ (0, 1)
    >>> X = np.array([[1.0, 0.0], [1.0, 0.0]])
    >>> propagate(A, O, X).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    >>> bool(np.array_equal(propagate(A, None, X), A @ X))  # identity transports: plain averaging
    True
    """
    A = _walk("A", A)
    n = int(A.shape[0])
    if O is None:
        X = as_array("X", X, ndim=2)
        namespace(A, X)
        check_matching("A columns", n, "X rows", X.shape[0])
        return A @ X
    O = _transports("O", O, n)
    X = _features("X", X, n, int(O.shape[-1]))
    xp = namespace(A, O, X)
    return xp.einsum("ij,jb,ijba->ia", A, X, O)


def block_operator(A, O):
    r"""The block matrix :math:`T(A, O) \in \mathbb R^{nd\times nd}` of the walk, blocks :math:`T_{ij} = A_{ij} O_{ij}^\top`.

    With row stacking :math:`\operatorname{vec}^r(X) = \operatorname{vec}(X^\top)` (``X.reshape(-1)``),

    .. math::

        \operatorname{vec}^r(\mathcal T(A, O)X) = T(A, O)\,\operatorname{vec}^r(X).

    The transposes come from the row-vector convention: the :math:`a`-th entry of :math:`X_j O_{ij}` is
    :math:`\sum_b (O_{ij}^\top)_{ab} X_{jb}`.

    Parameters
    ----------
    A : array, shape=[n, n]
        Walk weights.
    O : array, shape=[n, n, d, d]
        Edge transports, ``O[i, j]`` for the edge ``j → i``.

    Returns
    -------
    array, shape=[n*d, n*d]
        Rows and columns ordered token-major: index ``i*d + a`` is coordinate ``a`` of token ``i``.

    References
    ----------
    Connection-Laplacian paper §3 (block matrix and the row-stacking convention); attention-geometry-math §B.2
    [RECON of the display, SEED for the transposes].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A, O, X = rng.random((3, 3)), rng.standard_normal((3, 3, 2, 2)), rng.standard_normal((3, 2))
    >>> T = block_operator(A, O)
    >>> T.shape
    (6, 6)
    >>> bool(np.allclose(T @ X.reshape(-1), propagate(A, O, X).reshape(-1), rtol=1e-14, atol=0))
    True
    """  # noqa: E501
    A = _walk("A", A)
    n = int(A.shape[0])
    O = _transports("O", O, n)
    xp = namespace(A, O)
    d = int(O.shape[-1])
    blocks = A[:, :, None, None] * xp.matrix_transpose(O)  # (i, j, a, b) = A_ij (O_ij^T)_ab
    return xp.reshape(xp.permute_dims(blocks, (0, 2, 1, 3)), (n * d, n * d))


def connection_laplacian(A, O, kind: str = "random-walk"):
    r"""The connection Laplacian of the walk as a dense :math:`nd\times nd` matrix (positive convention).

    .. math::

        \mathcal L^{\mathrm{rw}}_c = I_{nd} - T(A, O) \quad(\text{``random-walk''}),\qquad
        \mathcal L_c = D\otimes I_d - T(A, O),\ D = \operatorname{diag}(A\mathbf 1) \quad(\text{``unnormalized''}).

    On row-stacked features, :math:`(\mathcal L^{\mathrm{rw}}_c X)_i = X_i - \sum_j A_{ij} X_j O_{ij}`.  When
    :math:`A` is row-stochastic (the random-walk reading; it is not enforced), every *parallel section* —
    :math:`X_i = X_j O_{ij}` whenever :math:`A_{ij} > 0` — lies in the kernel.  The unnormalised form takes a
    weighted adjacency :math:`A` (e.g. :func:`cycle_connection`) and is the graph connection Laplacian of
    Singer–Wu when :math:`A` is symmetric and :math:`O_{ji} = O_{ij}^\top` is orthogonal.

    Parameters
    ----------
    A : array, shape=[n, n]
        Walk weights (row-stochastic for ``"random-walk"``) or a weighted adjacency (``"unnormalized"``).
    O : array, shape=[n, n, d, d]
        Edge transports, ``O[i, j]`` for the edge ``j → i``.
    kind : {"random-walk", "unnormalized"}
        Which Laplacian.

    Returns
    -------
    array, shape=[n*d, n*d]
        Acts on ``X.reshape(-1)`` (row stacking, see :func:`block_operator`).

    References
    ----------
    Connection-Laplacian paper §3 (random-walk connection Laplacian and its kernel); attention-geometry-math
    §B.2 [RECON of the display, SEED for the kernel statement]; Singer & Wu (2012) for the unnormalised form.

    Examples
    --------
    A flat connection :math:`O_{ij} = V_j^{-1}V_i` has the parallel section :math:`X_i = c\,V_i`:

    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> n, d = 4, 3
    >>> V = rng.standard_normal((n, d, d))
    >>> O = np.linalg.inv(V)[None, :] @ V[:, None]  # O[i, j] = V_j^{-1} V_i
    >>> A = rng.random((n, n)); A /= A.sum(axis=1, keepdims=True)
    >>> X = rng.standard_normal(d) @ V  # row i is c V_i
    >>> L = connection_laplacian(A, O)
    >>> bool(np.linalg.norm(L @ X.reshape(-1)) < 1e-12 * np.linalg.norm(X))
    True
    """
    check_choice("kind", kind, ("random-walk", "unnormalized"))
    T = block_operator(A, O)
    A = as_array("A", A, ndim=2)
    xp = namespace(T)
    nd = int(T.shape[0])
    if kind == "random-walk":
        return _eye(xp, nd, T) - T
    n = int(A.shape[0])
    degree = xp.reshape(xp.broadcast_to(xp.sum(A, axis=1)[:, None], (n, nd // max(n, 1))), (nd,))
    return degree[:, None] * _eye(xp, nd, T) - T


# --------------------------------------------------------------------------------------------------
# Multi-head attention as one connection step
# --------------------------------------------------------------------------------------------------


def _heads(A_heads, M_heads):
    A_heads = as_array("A_heads", A_heads, ndim=3)
    check_square("A_heads", A_heads)
    check_nonnegative("A_heads", A_heads)
    M_heads = as_array("M_heads", M_heads, ndim=3)
    check_square("M_heads", M_heads)
    namespace(A_heads, M_heads)
    check_matching("A_heads heads", A_heads.shape[0], "M_heads heads", M_heads.shape[0])
    return A_heads, M_heads


def effective_connection(A_heads, M_heads, fill=None):
    r"""The effective walk and transport of multi-head attention, :math:`(A_{\mathrm{eff}}, O^{\mathrm{eff}})`.

    .. math::

        A_{\mathrm{eff}} = \frac1H\sum_{h=1}^H A^{(h)},\qquad
        O^{\mathrm{eff}}_{ij} = \frac{\sum_h A^{(h)}_{ij} M_h}{\sum_h A^{(h)}_{ij}}
        \quad\text{where } \textstyle\sum_h A^{(h)}_{ij} > 0,

    and :math:`O^{\mathrm{eff}}_{ij} =` ``fill`` (default :math:`I_d`) on inactive edges, where every head
    has :math:`A^{(h)}_{ij} = 0` and the edge carries no weight.  The transport is the attention-weighted mean
    of the head maps: heads form a dictionary of transports and attention selects from it edge by edge.
    With it, :math:`\operatorname{MHA}(X) = \sum_h A^{(h)} X M_h = H\,\mathcal T(A_{\mathrm{eff}},
    O^{\mathrm{eff}})X` exactly (see :func:`connection_step`); the inactive-edge value never matters because
    nonnegative weights summing to zero are all zero.

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        Nonnegative attention matrices of the heads (row-stochastic for softmax heads, zeros where masked).
    M_heads : array, shape=[H, d, d]
        Value-output maps :math:`M_h = W_V^h W_O^h` (row-vector convention, ``X @ M_h``).
    fill : array, shape=[d, d], optional
        The transport put on inactive edges; the identity by default.

    Returns
    -------
    A_eff : array, shape=[n, n]
    O_eff : array, shape=[n, n, d, d]

    References
    ----------
    Connection-Laplacian paper §4, Eqs. (8)–(10) (effective walk, effective transport, MHA as one connection
    step; the proof by active/inactive edges survives in the seed); attention-geometry-math §B.3 [RECON of the
    displays].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> A_heads = rng.random((3, 4, 4)); A_heads /= A_heads.sum(axis=2, keepdims=True)
    >>> M_heads, X = rng.standard_normal((3, 2, 2)), rng.standard_normal((4, 2))
    >>> A_eff, O_eff = effective_connection(A_heads, M_heads)
    >>> mha = sum(A_heads[h] @ X @ M_heads[h] for h in range(3))
    >>> bool(np.allclose(3 * propagate(A_eff, O_eff, X), mha, rtol=1e-13, atol=1e-15))
    True
    """
    A_heads, M_heads = _heads(A_heads, M_heads)
    xp = namespace(A_heads, M_heads, fill)
    H = int(A_heads.shape[0])
    d = int(M_heads.shape[-1])
    if fill is None:
        fill = _eye(xp, d, M_heads)
    else:
        fill = as_array("fill", fill, ndim=2)
        if shape_of(fill) != (d, d):
            raise ValueError(f"fill must have shape (d, d) = ({d}, {d}) matching M_heads, got shape {shape_of(fill)}")
    total = xp.sum(A_heads, axis=0)  # Σ_h A^(h)_ij = H A_eff(i, j)
    active = total > 0
    numerator = xp.einsum("hij,hab->ijab", A_heads, M_heads)
    # safe denominator: inactive edges are overwritten by `fill`, so no 0/0 is ever formed
    denominator = xp.where(active, total, xp.ones_like(total))
    O_eff = xp.where(active[:, :, None, None], numerator / denominator[:, :, None, None], fill)
    return total / H, O_eff


def connection_step(A_heads, X, M_heads):
    r"""Multi-head attention without biases, :math:`\sum_h A^{(h)} X M_h`, head by head.

    .. math::

        \operatorname{MHA}(X) = \sum_{h=1}^H A^{(h)} X M_h = H\,\mathcal T(A_{\mathrm{eff}}, O^{\mathrm{eff}})X,

    the second form by :func:`effective_connection`.  This function computes the first form (two matrix
    products per head), so comparing it with :func:`propagate` checks the identity.

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        Nonnegative attention matrices.
    X : array, shape=[n, d]
        Row-vector features (the input of the value projections).
    M_heads : array, shape=[H, d, d]
        Value-output maps.

    Returns
    -------
    array, shape=[n, d]

    References
    ----------
    Connection-Laplacian paper §4, Eq. (4) and Eq. (10); attention-geometry-math §B.3 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> A_heads = np.stack([np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])])
    >>> M_heads = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> connection_step(A_heads, np.array([[1.0, 0.0], [0.0, 1.0]]), M_heads).tolist()
    [[1.0, 2.0], [2.0, 1.0]]
    """
    A_heads, M_heads = _heads(A_heads, M_heads)
    X = _features("X", X, int(A_heads.shape[1]), int(M_heads.shape[-1]))
    xp = namespace(A_heads, X, M_heads)
    return xp.sum(A_heads @ (X[None, :, :] @ M_heads), axis=0)


# --------------------------------------------------------------------------------------------------
# Generator, its π-symmetric and π-skew parts, the connection energy
# --------------------------------------------------------------------------------------------------


class MixingGenerator(NamedTuple):
    r"""The generator :math:`L_{\mathrm{mix}} = I - T(A_{\mathrm{eff}}, O^{\mathrm{eff}})` and its π-split.

    Attributes
    ----------
    L_mix : array, shape=[n*d, n*d]
        The generator (positive convention).
    L_adjoint : array, shape=[n*d, n*d]
        Its adjoint :math:`L^\sharp = \Pi^{-1}L_{\mathrm{mix}}^\top\Pi` in :math:`\langle\cdot,\cdot\rangle_\pi`.
    L_sym : array, shape=[n*d, n*d]
        :math:`\tfrac12(L_{\mathrm{mix}} + L^\sharp)`, π-self-adjoint: dissipation.
    L_skew : array, shape=[n*d, n*d]
        :math:`\tfrac12(L_{\mathrm{mix}} - L^\sharp)`, π-skew-adjoint: directed drift (advection).
    pi : array, shape=[n]
        The positive weights :math:`\pi` of the inner product.
    """

    L_mix: Any
    L_adjoint: Any
    L_sym: Any
    L_skew: Any
    pi: Any


def mixing_generator(A_eff, O_eff, pi=None) -> MixingGenerator:
    r"""Split :math:`L_{\mathrm{mix}} = I - T(A_{\mathrm{eff}}, O^{\mathrm{eff}})` into π-symmetric and π-skew parts.

    With :math:`\langle X, Y\rangle_\pi = \sum_i \pi_i\langle X_i, Y_i\rangle` and
    :math:`\Pi = \operatorname{diag}(\pi)\otimes I_d`,

    .. math::

        L^\sharp = \Pi^{-1} L_{\mathrm{mix}}^\top \Pi,\qquad
        L_{\mathrm{sym}} = \tfrac12(L_{\mathrm{mix}} + L^\sharp),\qquad
        L_{\mathrm{skew}} = \tfrac12(L_{\mathrm{mix}} - L^\sharp),

    so :math:`\Pi L_{\mathrm{sym}}` is symmetric and :math:`\Pi L_{\mathrm{skew}}` antisymmetric, and
    :math:`\langle X, L_{\mathrm{mix}}X\rangle_\pi = \langle X, L_{\mathrm{sym}}X\rangle_\pi`.  The split is
    an identity for any positive :math:`\pi`; it is the natural one for the stationary law.
    :math:`L_{\mathrm{skew}} = 0` exactly when :math:`\pi_i A_{ij} O_{ij}^\top = \pi_j A_{ji} O_{ji}` on every
    edge — e.g. a reversible walk (:math:`\pi_i A_{ij} = \pi_j A_{ji}`) with :math:`O_{ji} = O_{ij}^\top`, which
    for orthogonal transports is inverse consistency :math:`O_{ji} = O_{ij}^{-1}`.

    Parameters
    ----------
    A_eff : array, shape=[n, n]
        The effective walk (row-stochastic when ``pi`` is omitted).
    O_eff : array, shape=[n, n, d, d]
        The effective transports.
    pi : array, shape=[n], optional
        Positive weights of the inner product.  Default: the stationary law of ``A_eff``
        (:class:`workbench.markov.MarkovOperator`), which must then be positive.  A causal walk has transient
        states (its stationary law sits on the first token), so pass ``pi`` explicitly there.

    Returns
    -------
    MixingGenerator
        ``(L_mix, L_adjoint, L_sym, L_skew, pi)``.

    Raises
    ------
    ValueError
        If the stationary law is not unique or not positive, or ``pi`` is not positive.

    References
    ----------
    Connection-Laplacian paper §5, Eqs. (12)–(13) (reversibility, generator, symmetric/skew decomposition);
    attention-geometry-math §B.4 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> A = rng.random((4, 4)); A /= A.sum(axis=1, keepdims=True)
    >>> gen = mixing_generator(A, rng.standard_normal((4, 4, 2, 2)))
    >>> Pi = np.diag(np.repeat(gen.pi, 2))
    >>> bool(np.allclose(Pi @ gen.L_sym, (Pi @ gen.L_sym).T, rtol=0, atol=1e-15))
    True
    >>> bool(np.allclose(gen.L_sym + gen.L_skew, gen.L_mix, rtol=0, atol=1e-15))
    True
    """
    A_eff = _walk("A_eff", A_eff)
    n = int(A_eff.shape[0])
    O_eff = _transports("O_eff", O_eff, n, "A_eff")
    if pi is None:
        pi = _stationary("A_eff", A_eff)
        if float(namespace(pi).min(pi)) <= 0.0:
            raise ValueError(
                "the π-adjoint needs π > 0, but the stationary law of A_eff vanishes on transient states "
                "(e.g. under a causal mask); pass a positive pi, such as the uniform law"
            )
    else:
        pi = _law("pi", pi, n, positive=True)
    xp = namespace(A_eff, O_eff, pi)
    d = int(O_eff.shape[-1])
    L = connection_laplacian(A_eff, O_eff)
    weight = xp.reshape(xp.broadcast_to(pi[:, None], (n, d)), (n * d,))  # diagonal of Π = diag(π) ⊗ I_d
    adjoint = xp.matrix_transpose(L) * weight[None, :] / weight[:, None]
    return MixingGenerator(L, adjoint, 0.5 * (L + adjoint), 0.5 * (L - adjoint), pi)


def connection_energy(A, O, X, pi=None):
    r"""The connection Dirichlet energy :math:`\mathcal E_c(X) = \tfrac12\sum_{i,j}\pi_i A_{ij}\lVert X_i - X_j O_{ij}\rVert^2`.

    It is nonnegative and vanishes exactly on the parallel sections of the support (:math:`X_i = X_j O_{ij}`
    wherever :math:`\pi_i A_{ij} > 0`).  Its relation to the generator :math:`L_{\mathrm{mix}} = I - T(A, O)`:
    expanding the square gives, for any :math:`A, O, \pi`,

    .. math::

        \langle X, L_{\mathrm{mix}}X\rangle_\pi - \mathcal E_c(X)
        = \sum_i \pi_i\bigl(1 - \tfrac12 r_i\bigr)\lVert X_i\rVert^2
          - \tfrac12\sum_{i,j}\pi_i A_{ij}\lVert X_j O_{ij}\rVert^2,\qquad r_i = \sum_j A_{ij}.

    Hence :math:`\langle X, L_{\mathrm{mix}}X\rangle_\pi = \mathcal E_c(X)` for every :math:`X` if and only if
    :math:`\sum_i \pi_i A_{ij} O_{ij}O_{ij}^\top = \pi_j(2 - r_j) I_d` for every :math:`j`.  The usual sufficient
    hypotheses [DERIVED]: :math:`A` row-stochastic (:math:`r = \mathbf 1`), :math:`\pi` stationary
    (:math:`\pi^\top A = \pi^\top`) and every active :math:`O_{ij}` orthogonal.  Reversibility is *not* needed.
    Under these hypotheses :math:`\langle X, L_{\mathrm{sym}} X\rangle_\pi = \mathcal E_c(X) \ge 0`, so the
    π-symmetric part is positive semidefinite even for a nonreversible walk.  Without these hypotheses (non-isometric transports,
    a non-stationary :math:`\pi`) the energy is a diagnostic, not the quadratic form of the generator.

    Parameters
    ----------
    A : array, shape=[n, n]
        Nonnegative walk weights (row-stochastic when ``pi`` is omitted).
    O : array, shape=[n, n, d, d]
        Edge transports, ``O[i, j]`` for the edge ``j → i``.
    X : array, shape=[n, d]
        Row-vector features.
    pi : array, shape=[n], optional
        Nonnegative vertex weights; default the stationary law of ``A``.

    Returns
    -------
    0-d array
        Of the inputs' library (differentiable under torch).

    References
    ----------
    Connection-Laplacian paper §5, Eq. (14) and Appendix F (connection energy); attention-geometry-math §B.4
    [RECON for the energy, DERIVED for the identity and its hypotheses].

    Examples
    --------
    Orthogonal transports, stationary law, a nonreversible walk: the energy is the quadratic form.

    >>> import numpy as np
    >>> from scipy.stats import ortho_group
    >>> rng = np.random.default_rng(4)
    >>> n, d = 5, 3
    >>> A = rng.random((n, n)); A /= A.sum(axis=1, keepdims=True)
    >>> O = ortho_group.rvs(d, size=n * n, random_state=5).reshape(n, n, d, d)
    >>> X = rng.standard_normal((n, d))
    >>> gen = mixing_generator(A, O)
    >>> x = X.reshape(-1)
    >>> form = x @ (np.repeat(gen.pi, d) * (gen.L_mix @ x))
    >>> bool(np.isclose(float(connection_energy(A, O, X)), form, rtol=1e-13, atol=0))
    True
    """  # noqa: E501
    A = _walk("A", A)
    check_nonnegative("A", A)
    n = int(A.shape[0])
    O = _transports("O", O, n)
    X = _features("X", X, n, int(O.shape[-1]))
    pi = _stationary("A", A) if pi is None else _law("pi", pi, n, positive=False)
    xp = namespace(A, O, X, pi)
    transported = xp.einsum("jb,ijba->ija", X, O)  # [i, j] = X_j O_ij
    gap = xp.sum((X[:, None, :] - transported) ** 2, axis=-1)
    return 0.5 * xp.sum(pi[:, None] * A * gap)


# --------------------------------------------------------------------------------------------------
# Polar split and scaled orthogonality
# --------------------------------------------------------------------------------------------------


def polar_transports(O, *, partial: bool = False, rtol: float | None = None):
    r"""Polar decomposition :math:`O = R\,S` of every transport: a rotation followed by a deformation.

    From the SVD :math:`O = U\Sigma V^\top`,

    .. math::

        R = U V^\top \in O(d),\qquad S = V\Sigma V^\top = (O^\top O)^{1/2} \succeq 0,\qquad R S = O.

    In the row convention :math:`X_j O = (X_j R) S`: transport rigidly, then deform.  :math:`R` is the
    length-preserving part (pure connection), :math:`S` the anisotropic scaling and shear (metric deformation).
    For nonsingular :math:`O` both factors are unique and :math:`S \succ 0`.  For singular :math:`O`,
    :math:`S` is still the unique positive semidefinite root, but the orthogonal factor is not unique (it is
    free on the kernel of :math:`O`); ``U @ Vᵀ`` from the full SVD is one orthogonal choice.  With
    ``partial=True`` the singular directions are dropped instead, :math:`R = U\,\mathbb 1[\sigma > \tau]\,V^\top`:
    the partial isometry of the seed, unique, with :math:`R^\top R` the projector onto the range of :math:`S`
    and still :math:`RS = O`.

    Parameters
    ----------
    O : array, shape=[..., d, d]
        Transports (any leading batch shape, e.g. ``[n, n]`` edges or ``[H]`` heads).
    partial : bool
        Return the partial isometry instead of an orthogonal completion.
    rtol : float, optional
        With ``partial``, singular values :math:`\sigma \le \tau = \mathrm{rtol}\cdot\sigma_{\max}` count as zero;
        default ``d`` times the machine epsilon of the dtype.

    Returns
    -------
    R : array, shape=[..., d, d]
        Orthogonal (or, with ``partial``, a partial isometry).
    S : array, shape=[..., d, d]
        Symmetric positive semidefinite.

    References
    ----------
    Connection-Laplacian paper §5 (polar decomposition, partial isometry for singular transports);
    attention-geometry-math §B.4 [RECON; right polar form chosen, the paper's side is not recoverable];
    N. J. Higham, *Functions of Matrices*, SIAM (2008), §8.1.

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> O = np.array([[2.0, 1.0], [0.0, 1.0]])
    >>> R, S = polar_transports(O)
    >>> R_ref, S_ref = scipy.linalg.polar(O, side="right")  # an independent implementation
    >>> bool(np.allclose(R, R_ref, atol=1e-14) and np.allclose(S, S_ref, atol=1e-14))
    True
    >>> bool(np.allclose(R.T @ R, np.eye(2), atol=1e-15) and np.allclose(R @ S, O, atol=1e-14))
    True
    """
    O = as_array("O", O, min_ndim=2)
    check_square("O", O)
    check_in_range("rtol", 0.0 if rtol is None else rtol, 0.0)
    xp = namespace(O)
    U, sigma, Vh = xp.linalg.svd(O, full_matrices=True)
    S = xp.matrix_transpose(Vh) @ (sigma[..., :, None] * Vh)
    if partial:
        d = int(O.shape[-1])
        tol = (d * float(xp.finfo(O.dtype).eps) if rtol is None else rtol) * sigma[..., :1]
        keep = xp.astype(sigma > tol, O.dtype)
        return (U * keep[..., None, :]) @ Vh, S
    return U @ Vh, S


class OrthogonalityDeviation(NamedTuple):
    r"""Scaled-orthogonality deviation :math:`\delta_{\mathrm{orth}}`: the weighted mean and the per-edge values.

    Attributes
    ----------
    mean : float
        Weighted mean of :math:`\delta_{\mathrm{orth}}` over the valid pairs.
    edges : array, shape=[...]
        :math:`\delta_{\mathrm{orth}}` of every transport; 0 on invalid pairs (see ``valid``).
    valid : array of bool, shape=[...]
        The pairs that enter the mean: inside ``mask``, positive weight, nonzero transport.
    """

    mean: float
    edges: Any
    valid: Any


def orthogonality_deviation(O, weights=None, mask=None, *, return_edges: bool = False):
    r"""How far transports are from scaled-orthogonal: the diagnostic :math:`\delta_{\mathrm{orth}}` of Eq. (15).

    For each transport, with Gram matrix :math:`G = O^\top O` and mean scale :math:`\mu = \operatorname{tr}(G)/d`,

    .. math::

        \delta_{\mathrm{orth}} = \frac{\lVert G - \mu I_d\rVert_F}{\mu\, d}
        \in \Bigl[0, \sqrt{1 - 1/d}\,\Bigr],

    the root-mean-square entry of :math:`G/\mu - I_d`.
    It is invariant under :math:`O \mapsto cO` and under rotations on either side, vanishes exactly for
    :math:`O = cQ` with :math:`Q` orthogonal, and attains :math:`\sqrt{1 - 1/d}` for rank-one :math:`O` (because
    :math:`\lVert G - \mu I\rVert_F^2 = \lVert G\rVert_F^2 - d\mu^2 \le (\operatorname{tr}G)^2(1 - 1/d)` for
    :math:`G \succeq 0`).  The reduction is a weighted mean over valid pairs, :math:`\sum w\,\delta/\sum w`.
    With ``weights`` (typically :math:`A_{\mathrm{eff}}`) the weights are those; without, every pair with a
    nonzero transport counts once [RECON: the paper reports "weighted means across valid token pairs" without
    the weights].  Zero transports (:math:`\mu = 0`) have no scale and never count.

    Parameters
    ----------
    O : array, shape=[..., d, d]
        Transports, e.g. ``O_eff`` with ``shape=[n, n, d, d]``.
    weights : array, shape=O.shape[:-2], optional
        Nonnegative weights of the mean (e.g. ``A_eff``); pairs of zero weight are not valid.
    mask : bool array, shape=O.shape[:-2], optional
        Admissible pairs (True = included), e.g. the causal support or the non-special-token mask.
    return_edges : bool
        Return an :class:`OrthogonalityDeviation` with the per-edge values instead of the mean alone.

    Returns
    -------
    float or OrthogonalityDeviation

    Raises
    ------
    ValueError
        If no pair is valid (all transports zero, or all masked or weighted out).

    References
    ----------
    Connection-Laplacian paper §7, Eq. (15) (transport orthogonality); attention-geometry-math §B.6 [SEED for
    the per-edge formula, RECON for the weights].

    Examples
    --------
    >>> import numpy as np
    >>> O = np.stack([3.0 * np.array([[0.6, 0.8], [-0.8, 0.6]]), np.diag([1.0, 0.0])])
    >>> result = orthogonality_deviation(O, return_edges=True)
    >>> result.edges.round(12).tolist()  # scaled rotation: 0; rank one: sqrt(1 - 1/2)
    [0.0, 0.707106781187]
    >>> bool(np.isclose(result.mean, np.sqrt(0.5) / 2, rtol=1e-14))
    True
    """
    O = as_array("O", O, min_ndim=2)
    check_square("O", O)
    xp = namespace(O, weights)  # a numpy boolean mask is accepted with torch data
    batch = shape_of(O)[:-2]
    d = int(O.shape[-1])
    gram = xp.matrix_transpose(O) @ O
    mu = xp.sum(O**2, axis=(-2, -1)) / d  # tr(OᵀO)/d without forming the trace of G
    valid = mu > 0
    if mask is not None:
        valid = valid & _mask(mask, batch, xp, O)
    if weights is not None:
        weights = as_array("weights", weights)
        if shape_of(weights) != batch:
            raise ValueError(f"weights must have shape {batch} matching O.shape[:-2], got shape {shape_of(weights)}")
        check_nonnegative("weights", weights)
        valid = valid & (weights > 0)
    if not bool(xp.any(valid)):
        raise ValueError(
            "orthogonality_deviation needs at least one valid pair (nonzero transport, inside mask, positive weight)"
        )
    scale = xp.where(valid, mu, xp.ones_like(mu))  # μ = 0 only on invalid pairs, which are zeroed below
    deviation = gram - scale[..., None, None] * _eye(xp, d, O)
    delta = xp.sqrt(xp.sum(deviation**2, axis=(-2, -1))) / (scale * d)
    delta = xp.where(valid, delta, xp.zeros_like(delta))
    w = xp.astype(valid, O.dtype) if weights is None else xp.where(valid, weights, xp.zeros_like(weights))
    mean = float(xp.sum(w * delta) / xp.sum(w))
    return OrthogonalityDeviation(mean, delta, valid) if return_edges else mean


class EffectiveTransportGram(NamedTuple):
    r""":math:`\delta_{\mathrm{orth}}` of :math:`O^{\mathrm{eff}}` and its mean Gram matrix, from the heads."""

    mean: float  # weighted mean of δ_orth over valid pairs
    edges: np.ndarray  # δ_orth per pair, shape [n, n] (0 where not valid)
    valid: np.ndarray  # pairs that count, shape [n, n]
    mean_gram: np.ndarray  # Σ w_ij G_ij / Σ w_ij, shape [d, d]


def effective_transport_gram(A_heads, M_heads, weights=None, mask=None) -> EffectiveTransportGram:
    r""":math:`\delta_{\mathrm{orth}}` and the mean Gram matrix of the effective transports, from the heads alone.

    With head weights :math:`w_h(i,j) = A^{(h)}_{ij}/\sum_g A^{(g)}_{ij}` the transport is
    :math:`O^{\mathrm{eff}}_{ij} = \sum_h w_h M_h`, so its Gram matrix is a quadratic form in :math:`w`:

    .. math::

        G_{ij} = \sum_{h,g} w_h w_g\, B_{hg},\quad B_{hg} = M_h^\top M_g,\qquad
        \operatorname{tr}G_{ij} = \sum_{h,g} w_hw_g \operatorname{tr}B_{hg},\qquad
        \lVert G_{ij}\rVert_F^2 = \sum_{h,g,h',g'} w_hw_gw_{h'}w_{g'}\langle B_{hg}, B_{h'g'}\rangle_F,

    and :math:`\lVert G - \mu I\rVert_F^2 = \lVert G\rVert_F^2 - (\operatorname{tr}G)^2/d`.  The
    :math:`H^2 \times H^2` Gram matrix of the :math:`B_{hg}` is computed once, so memory is
    :math:`O(H^2d^2 + n^2H^2)` instead of the :math:`O(n^2d^2)` of :func:`effective_connection` and its Gram
    matrices: on a MiniLM layer (:math:`H = 12`, :math:`d = 384`) a constant 177 MiB against 288 MiB, 1.1 GiB and
    4.5 GiB at 8, 16 and 32 tokens, and 20× faster at 32 (``workbench bench transport-gram``; benchmarks/RESULTS.md).
    The result equals :func:`orthogonality_deviation` applied to :math:`O^{\mathrm{eff}}` (tested).

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
        Nonnegative attention matrices.
    M_heads : array, shape=[H, d, d]
        Value-output maps.
    weights : array, shape=[n, n], optional
        Weights of the mean over pairs; default :math:`A_{\mathrm{eff}}` [RECON, as in
        :func:`orthogonality_deviation`].
    mask : bool array, shape=[n, n], optional
        Admissible pairs.

    Returns
    -------
    EffectiveTransportGram
        ``mean``, per-pair ``edges``, ``valid`` and the weighted ``mean_gram``
        :math:`\bar G = \sum w_{ij}G_{ij}/\sum w_{ij}` (numpy, computed on the host).

    References
    ----------
    Connection-Laplacian paper §7, Eq. (15) and Figure 2(b) (mean transport Gram); attention-geometry-math §B.6.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A_heads = rng.random((3, 4, 4)); A_heads /= A_heads.sum(axis=2, keepdims=True)
    >>> M_heads = rng.standard_normal((3, 5, 5))
    >>> A_eff, O_eff = effective_connection(A_heads, M_heads)
    >>> dense = orthogonality_deviation(O_eff, weights=A_eff)
    >>> bool(np.isclose(effective_transport_gram(A_heads, M_heads).mean, dense, rtol=1e-10))
    True
    """
    A_heads, M_heads = _heads(A_heads, M_heads)
    A, M = to_numpy(A_heads).astype(np.float64), to_numpy(M_heads).astype(np.float64)
    H, n, d = A.shape[0], A.shape[1], M.shape[-1]
    total = A.sum(axis=0)
    active = total > 0
    w = A / np.where(active, total, 1.0)  # head weights per edge (zero on inactive edges)
    B = (np.swapaxes(M, -1, -2)[:, None] @ M[None, :]).reshape(H * H, d * d)  # B_hg = M_hᵀ M_g (batched BLAS)
    trace_b = (M.reshape(H, d * d) @ M.reshape(H, d * d).T).reshape(H * H)  # tr(M_hᵀ M_g) = ⟨M_h, M_g⟩_F
    gram_b = B @ B.T
    u = (w[:, None] * w[None, :]).transpose(2, 3, 0, 1).reshape(n, n, H * H)  # u_ij = w(i,j) ⊗ w(i,j)
    trace_g = u @ trace_b
    norm2_g = np.sum((u @ gram_b) * u, axis=-1)
    mu = trace_g / d
    valid = active & (mu > 0)
    if mask is not None:
        valid &= to_numpy(_mask(mask, (n, n), np, A))
    pair_weights = total / H if weights is None else to_numpy(as_array("weights", weights, ndim=2)).astype(float)
    if pair_weights.shape != (n, n):
        raise ValueError(f"weights must have shape ({n}, {n}) matching A_heads, got shape {pair_weights.shape}")
    check_nonnegative("weights", pair_weights)
    valid &= pair_weights > 0
    if not valid.any():
        raise ValueError(
            "effective_transport_gram needs at least one valid pair (active edge, inside mask, positive weight)"
        )
    scale = np.where(valid, mu, 1.0)
    spread = np.maximum(norm2_g - trace_g**2 / d, 0.0)  # ‖G − μI‖² ≥ 0 up to rounding
    delta = np.where(valid, np.sqrt(spread) / (scale * d), 0.0)
    pw = np.where(valid, pair_weights, 0.0)
    mean_u = np.einsum("ij,ijk->k", pw, u) / pw.sum()
    mean_gram = (mean_u @ B).reshape(d, d)
    return EffectiveTransportGram(float((pw * delta).sum() / pw.sum()), delta, valid, mean_gram)


def effective_connection_energy(A_heads, M_heads, X, pi=None) -> float:
    r"""The connection energy :math:`\mathcal E_c(X)` of the effective walk and transport, from the heads alone.

    .. math::

        \mathcal E_c(X) = \tfrac12\sum_{i,j}\pi_i A_{\mathrm{eff}}(i,j)\,\lVert X_i - X_jO^{\mathrm{eff}}_{ij}\rVert^2,
        \qquad X_jO^{\mathrm{eff}}_{ij} = \sum_h w_h(i,j)\,(XM_h)_j,

    so only the :math:`H` products :math:`XM_h` and an :math:`n\times n\times d` array are formed.  Equal to
    :func:`connection_energy` of :func:`effective_connection` (tested).

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
    M_heads : array, shape=[H, d, d]
    X : array, shape=[n, d]
    pi : array, shape=[n], optional
        Weights of the sources; default the stationary law of :math:`A_{\mathrm{eff}}`.

    Returns
    -------
    float

    References
    ----------
    Connection-Laplacian paper §5, Eq. (14); attention-geometry-math §B.4 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> A_heads = rng.random((2, 3, 3)); A_heads /= A_heads.sum(axis=2, keepdims=True)
    >>> M_heads, X = rng.standard_normal((2, 4, 4)), rng.standard_normal((3, 4))
    >>> A_eff, O_eff = effective_connection(A_heads, M_heads)
    >>> dense = float(connection_energy(A_eff, O_eff, X))
    >>> bool(np.isclose(effective_connection_energy(A_heads, M_heads, X), dense, rtol=1e-12))
    True
    """
    A_heads, M_heads = _heads(A_heads, M_heads)
    n, d = int(A_heads.shape[1]), int(M_heads.shape[-1])
    X = to_numpy(_features("X", X, n, d)).astype(np.float64)
    A, M = to_numpy(A_heads).astype(np.float64), to_numpy(M_heads).astype(np.float64)
    total = A.sum(axis=0)
    A_eff = total / A.shape[0]
    pi = _stationary("A_eff", A_eff) if pi is None else _law("pi", pi, n, positive=False)
    pi = to_numpy(pi).astype(np.float64)
    w = A / np.where(total > 0, total, 1.0)
    moved = np.sum(w[:, :, :, None] * (X[None, :, :] @ M)[:, None, :, :], axis=0)  # X_j O_eff(i, j)
    gap = ((X[:, None, :] - moved) ** 2).sum(axis=-1)
    return float(0.5 * np.sum(pi[:, None] * A_eff * gap))


# --------------------------------------------------------------------------------------------------
# Drift of the walk across layers
# --------------------------------------------------------------------------------------------------


def geometric_drift(A_prev, A_next, mask=None) -> float:
    r"""Cosine distance between two walks on a support, :math:`d_A = 1 - \cos(\operatorname{vec}_{\mathcal M} A_{\mathrm{next}}, \operatorname{vec}_{\mathcal M} A_{\mathrm{prev}})`.

    .. math::

        d_A^{\ell\to\ell+1} = 1 - \frac{\sum_{(i,j)\in\mathcal M} A^{\ell+1}_{ij} A^{\ell}_{ij}}
        {\lVert A^{\ell+1}\rVert_{\mathcal M}\,\lVert A^{\ell}\rVert_{\mathcal M}} .

    Zero for proportional walks, in :math:`[0, 1]` for nonnegative ones (it is clipped at 0 against rounding).
    For a causal model :math:`\mathcal M` is the lower triangle, which changes nothing when both walks vanish
    above the diagonal; for an encoder it is the valid non-special-token mask.

    Parameters
    ----------
    A_prev, A_next : array, shape=[n, n]
        Effective walks of consecutive layers.
    mask : bool array, shape=[n, n], optional
        The support :math:`\mathcal M` (True = included); default every pair.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If either walk vanishes on the mask (the cosine is undefined).

    References
    ----------
    Connection-Laplacian paper §7 (metrics, geometric drift); attention-geometry-math §B.6 [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> A_prev = np.array([[1.0, 0.0], [0.5, 0.5]])
    >>> A_next = np.eye(2)
    >>> bool(np.isclose(geometric_drift(A_prev, A_next), 1 - np.sqrt(3) / 2, rtol=1e-14))  # cos = 1.5/(√1.5 √2)
    True
    """  # noqa: E501
    A_prev = _walk("A_prev", A_prev)
    A_next = _walk("A_next", A_next)
    xp = namespace(A_prev, A_next)  # a numpy boolean mask is accepted with torch data
    if shape_of(A_prev) != shape_of(A_next):
        raise ValueError(f"A_prev and A_next must have the same shape, got {shape_of(A_prev)} and {shape_of(A_next)}")
    if mask is not None:
        mask = _mask(mask, shape_of(A_prev), xp, A_prev)
        A_prev = xp.where(mask, A_prev, xp.zeros_like(A_prev))
        A_next = xp.where(mask, A_next, xp.zeros_like(A_next))
    norm_prev = float(xp.sqrt(xp.sum(A_prev**2)))
    norm_next = float(xp.sqrt(xp.sum(A_next**2)))
    for name, norm in (("A_prev", norm_prev), ("A_next", norm_next)):
        if norm == 0.0:
            raise ValueError(f"{name} must have a nonzero entry on the mask (the cosine is undefined), got all zeros")
    cosine = float(xp.sum(A_prev * A_next)) / (norm_prev * norm_next)
    return max(0.0, 1.0 - cosine)


# --------------------------------------------------------------------------------------------------
# Gauge and holonomy
# --------------------------------------------------------------------------------------------------


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
    attention-geometry-math §B.6 (flat transports :math:`V_j^{-1}V_i`) [RECON].

    Examples
    --------
    >>> import numpy as np
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
    xp = namespace(O, V)
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
    attention-geometry-math §B.6.  A flat connection (:math:`O_{ij} = V_j^{-1}V_i`) has trivial holonomy
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
    attention-geometry-math §B.6 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(7)
    >>> O = rng.standard_normal((3, 3, 2, 2))
    >>> bool(np.array_equal(holonomy(O, (0, 2, 1, 0)), O[2, 0] @ O[1, 2] @ O[0, 1]))
    True
    """  # noqa: E501
    O = _transports("O", O, None)
    vertices = _cycle(cycle, int(O.shape[0]))
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
    Connection-Laplacian paper §6 (loop consistency); attention-geometry-math §B.6 [RECON].

    Examples
    --------
    A ring of four eighth turns has holonomy :math:`R(\pi) = -I`, so :math:`\kappa = \lVert -2I\rVert_F/\sqrt2 = 2`;
    a walk that retraces its steps is always trivial, and a scale :math:`3^4` is removed:

    >>> import numpy as np
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
    identity = _eye(xp, d, O)
    values = []
    for k, cycle in enumerate(cycles):
        hol = holonomy(O, cycle)
        if remove_scale:
            scale = float(xp.sqrt(xp.sum(hol**2))) / math.sqrt(d)
            if scale == 0.0:
                raise ValueError(f"holonomy of cycles[{k}] is zero, so remove_scale=True has no scale to remove")
            hol = hol / scale
        values.append(xp.sqrt(xp.sum((hol - identity) ** 2)) / math.sqrt(d))
    return xp.stack(values)


# --------------------------------------------------------------------------------------------------
# The oracle: a ring with one twisted edge
# --------------------------------------------------------------------------------------------------


def _rotation(phi: float) -> np.ndarray:
    """The 2×2 matrix that turns row vectors counterclockwise by ``phi`` under right multiplication."""
    c, s = math.cos(phi), math.sin(phi)
    return np.array([[c, s], [-s, c]])


def cycle_connection(n: int, theta: float, weights=1.0, *, uniform: bool = False):
    r"""The cycle graph :math:`C_n` with planar rotation transports and total twist :math:`\theta` (an oracle).

    Edge :math:`m` joins :math:`m` and :math:`m+1 \bmod n` with weight :math:`w_m`.  Walking forward
    :math:`m \to m+1` turns row vectors counterclockwise by :math:`\varphi_m` (``O[m+1, m]``
    :math:`= R(\varphi_m)`), walking back undoes it (``O[m, m+1]`` :math:`= R(\varphi_m)^\top`), so
    :math:`O_{ji} = O_{ij}^\top = O_{ij}^{-1}`.  Either one edge carries the whole twist
    (:math:`\varphi_{n-1} = \theta`, the edge :math:`n-1 \to 0`; default) or every edge carries
    :math:`\theta/n` (``uniform=True``).  The two are gauge equivalent (:math:`V_m = R(-m\theta/n)` carries the
    second to the first) and the holonomy of :math:`0 \to 1 \to \dots \to n-1 \to 0` is :math:`R(\theta)`.

    For equal weights :math:`w`, the unnormalised connection Laplacian :math:`2wI - T(A, O)`
    (``connection_laplacian(A, O, kind="unnormalized")``) has the closed-form spectrum

    .. math::

        \lambda_{k,\pm} = w\Bigl(2 - 2\cos\frac{2\pi k \pm \theta}{n}\Bigr),\qquad k = 0, \dots, n-1 .

    Proof sketch: in the uniform gauge the operator commutes with the shift; on the Fourier mode
    :math:`X_m = e^{2\pi i k m/n}u` with :math:`u` an eigenvector of the rotation (:math:`uR(\varphi) =
    e^{\pm i\varphi}u`), :math:`(TX)_m = 2w\cos((2\pi k \mp \theta)/n)X_m`.  The spectrum depends on
    :math:`\theta` only modulo :math:`2\pi` (a shift of :math:`k`), and it is the flat ring's
    :math:`2 - 2\cos(2\pi k/n)` (each twice) exactly when the holonomy is trivial.

    Parameters
    ----------
    n : int
        Number of vertices, at least 3.
    theta : float
        Total twist (holonomy angle) in radians.
    weights : float or array, shape=[n]
        Positive edge weights; ``weights[m]`` is the weight of the edge ``m — m+1``.
    uniform : bool
        Spread the twist evenly over the edges instead of putting it on the edge ``n-1 → 0``.

    Returns
    -------
    A : numpy.ndarray, shape=[n, n]
        The symmetric weighted adjacency (not normalised).
    O : numpy.ndarray, shape=[n, n, 2, 2]
        Rotation transports on the edges, zero off the edges (no transport where there is no edge).

    References
    ----------
    Kenyon (2011) and Singer & Wu (2012) for connection Laplacians with holonomy on graphs; the spectrum is
    the discrete Aharonov–Bohm ring.  Oracle for attention-geometry-math §B.2 and §B.6.

    Examples
    --------
    >>> import numpy as np
    >>> n, theta = 5, 0.7
    >>> A, O = cycle_connection(n, theta)
    >>> L = connection_laplacian(A, O, kind="unnormalized")
    >>> k = np.arange(n)
    >>> closed_form = np.sort(np.concatenate([2 - 2 * np.cos((2 * np.pi * k + s * theta) / n) for s in (1, -1)]))
    >>> bool(np.allclose(np.linalg.eigvalsh(L), closed_form, rtol=0, atol=1e-13))
    True
    """
    n = check_integer("n", n, 3)
    theta = check_in_range("theta", theta)
    if isinstance(weights, (bool, np.bool_)):
        raise TypeError(f"weights must be a positive number or an array of shape ({n},), got {weights!r}")
    w = np.asarray(as_array("weights", weights), dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"weights must be a positive number or an array of shape ({n},), got shape {w.shape}")
    if w.min() <= 0:
        raise ValueError(f"weights must be positive, got weights[{int(np.argmin(w))}] = {w.min():.6g}")
    angles = np.full(n, theta / n) if uniform else np.concatenate([np.zeros(n - 1), [theta]])
    A = np.zeros((n, n))
    O = np.zeros((n, n, 2, 2))
    for m in range(n):
        nxt = (m + 1) % n
        A[nxt, m] = A[m, nxt] = w[m]
        O[nxt, m] = _rotation(angles[m])  # forward m → m+1
        O[m, nxt] = _rotation(-angles[m])  # backward, the inverse
    return A, O
