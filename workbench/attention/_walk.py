r"""The connection walk: one step :math:`\mathcal T(A, O)X`, its block matrix and the connection Laplacian.

A *connection walk* on ``n`` tokens pairs walk weights :math:`A_{ij}` on the oriented edges
:math:`j \to i` with an edge transport :math:`O_{ij} \in \mathbb R^{d\times d}`.  Features are row vectors
:math:`X_i \in \mathbb R^{1\times d}` (rows of :math:`X \in \mathbb R^{n\times d}`), and a transport acts by
right multiplication, :math:`X_j \mapsto X_j O_{ij}`.  Arrays: ``A`` has ``shape=[n, n]``, ``O`` has
``shape=[n, n, d, d]`` with ``O[i, j]`` the transport of the edge ``j → i``.  One step of the walk is

.. math::

    (\mathcal T(A, O)X)_i = \sum_j A_{ij}\, X_j O_{ij},

and the random-walk connection Laplacian is :math:`\mathcal L^{\mathrm{rw}}_c = I - \mathcal T` (the
positive convention :math:`L = I - P`).

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §3 (connection propagation operator, block matrix and
row-stacking convention, random-walk connection Laplacian and its kernel); book/reference.md §B.2.
Every displayed formula of that paper is lost; the formulas here are the reconstructions of
book/reference.md §B [RECON], checked against the surviving text and numerically.
A. Singer and H.-T. Wu, "Vector diffusion maps and the connection Laplacian", Comm. Pure Appl. Math. 65
(2012) 1067–1144.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

from workbench.attention._connection_checks import check_features, check_transports, check_walk, eye_like
from workbench.backend import namespace
from workbench.validation import as_array, check_choice, check_matching

__all__ = ["block_operator", "connection_laplacian", "propagate"]


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
    Connection-Laplacian paper §3 (connection propagation operator); book/reference.md §B.2 [RECON of
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
    A = check_walk("A", A)
    n = int(A.shape[0])
    if O is None:
        X = as_array("X", X, ndim=2)
        namespace(A=A, X=X)
        check_matching("A columns", n, "X rows", X.shape[0])
        return A @ X
    O = check_transports("O", O, n)
    X = check_features("X", X, n, int(O.shape[-1]))
    xp = namespace(A=A, O=O, X=X)
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
    Connection-Laplacian paper §3 (block matrix and the row-stacking convention); book/reference.md §B.2
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
    A = check_walk("A", A)
    n = int(A.shape[0])
    O = check_transports("O", O, n)
    xp = namespace(A=A, O=O)
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
    Connection-Laplacian paper §3 (random-walk connection Laplacian and its kernel); book/reference.md
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
        return eye_like(xp, nd, T) - T
    n = int(A.shape[0])
    degree = xp.reshape(xp.broadcast_to(xp.sum(A, axis=1)[:, None], (n, nd // max(n, 1))), (nd,))
    return degree[:, None] * eye_like(xp, nd, T) - T
