r"""The Grassmannian Gr(k, n): principal angles, the distances built from them, and random subspaces.

A :math:`k`-dimensional subspace of :math:`\mathbb R^n` is a point of the Grassmannian :math:`\mathrm{Gr}(k, n)`, a
manifold of dimension :math:`k(n - k)`.  Two subspaces with orthonormal bases :math:`Q_1 \in \mathbb R^{n\times p}`,
:math:`Q_2 \in \mathbb R^{n\times q}` meet at :math:`m = \min(p, q)` principal angles
:math:`0 \le \theta_1 \le \dots \le \theta_m \le \pi/2`, :math:`\cos\theta_i = \sigma_i(Q_1^\top Q_2)`; every
orthogonally invariant distance on the Grassmannian is a function of them.  For subspaces of different dimensions
the :math:`m` angles give the distance of the smaller one to the nearest subspace of the larger (Ye & Lim 2016);
that is the convention here.

Angles near zero are computed from sines (Knyazev & Argentati 2002, Algorithm 3.1): the cosine of a small angle
:math:`\theta` is :math:`1 - \theta^2/2`, so arccos of a rounded cosine loses half the digits; the singular values
of :math:`Q_2 - Q_1(Q_1^\top Q_2)` are the sines, accurate to rounding.  Each angle is read from whichever of its
sine and cosine is the smaller.

The null model for "close" is a pair of independent, uniformly (Haar) distributed subspaces, spans of Gaussian
matrices.  Their squared cosines follow the Jacobi (MANOVA) ensemble; for :math:`p, q, n \to \infty` at fixed ratios
:math:`\alpha = p/n \le \beta = q/n`, :math:`\alpha + \beta \le 1`, their empirical law tends to Wachter's law
(Wachter 1980), :class:`WachterLaw`.

Conventions: bases are the columns of a matrix (row-vector features :math:`X \in \mathbb R^{N\times n}` are read
by a subspace through :math:`XQ`); angles are in radians.

References
----------
Jordan (1875), "Essai sur la géométrie à n dimensions" (principal angles); Björck & Golub (1973), Math. Comp.
27(123), 579–594 (the SVD algorithm); Knyazev & Argentati (2002), SIAM J. Sci. Comput. 23(6) (the
sine-based angles); Edelman, Arias & Smith (1998), SIAM J. Matrix Anal. Appl. 20(2), 303–353, §4.3 (distances);
Conway, Hardin & Sloane (1996), Experiment. Math. 5(2), 139–159 (the chordal distance); Ye & Lim (2016), SIAM J.
Matrix Anal. Appl. 37(3), 1176–1197 (subspaces of different dimensions); Wachter (1980), Ann. Statist. 8(5),
937–957; Absil, Edelman & Koev (2006), Linear Algebra Appl. 414, 288–294 (angles between random subspaces).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.attention._head_checks import check_rng
from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, check_choice, check_in_range, check_integer

__all__ = [
    "GRASSMANN_METRICS",
    "Subspace",
    "WachterLaw",
    "distance_from_angles",
    "grassmann_dimension",
    "grassmann_distance",
    "principal_angles",
    "projection_differential",
    "random_principal_angles",
    "random_subspaces",
    "subspace_basis",
]

#: The distances :func:`grassmann_distance` knows, each a function of the principal angles θ (see there).
GRASSMANN_METRICS = ("geodesic", "chordal", "projection", "procrustes", "spectral", "fubini-study")


@dataclass(frozen=True)
class Subspace:
    """An orthonormal basis of a column space, with the numerical rank that decided its dimension.

    Attributes
    ----------
    basis : array, shape=[n, r]
        Orthonormal columns spanning the column space (the leading left singular vectors).
    rank : int
        :math:`r`, the number of singular values above ``rtol`` times the largest.
    singular_values : array, shape=[min(n, p)]
        All singular values of the matrix, descending.
    columns : int
        :math:`p`, the columns of the matrix; ``rank < columns`` means it was rank-deficient.
    """

    basis: object
    rank: int
    singular_values: object
    columns: int

    @property
    def deficient(self) -> bool:
        """Whether the matrix had fewer independent columns than columns."""
        return self.rank < self.columns


def subspace_basis(W, *, rtol: float | None = None) -> Subspace:
    r"""An orthonormal basis of the column space of ``W`` and its numerical rank.

    .. math::

        W = U\Sigma V^\top, \qquad r = \#\{i : \sigma_i > \mathrm{rtol}\cdot\sigma_1\}, \qquad
        \operatorname{col} W \approx \operatorname{span}(u_1, \dots, u_r).

    Parameters
    ----------
    W : array, shape=[n, p]
        numpy or torch.
    rtol : float, optional
        Relative threshold of the rank; default :math:`\max(n, p)\,\varepsilon` (numpy's ``matrix_rank``).

    Returns
    -------
    Subspace

    Raises
    ------
    ValueError
        If ``W`` is not a finite 2-D array with at least one row and column, is zero, or ``rtol`` is not in
        [0, 1).

    References
    ----------
    Golub & Van Loan (2013), *Matrix Computations*, 4th ed., §5.4.1 (numerical rank from the SVD).

    Examples
    --------
    >>> import numpy as np
    >>> W = np.array([[1.0, 2.0], [0.0, 0.0], [1.0, 2.0]])  # the second column is twice the first
    >>> s = subspace_basis(W)
    >>> s.rank, s.columns, s.deficient
    (1, 2, True)
    >>> bool(np.allclose(np.abs(s.basis[:, 0]), [2**-0.5, 0, 2**-0.5], atol=1e-15))
    True
    """
    W = as_array("W", W, ndim=2)
    n, p = W.shape
    if n == 0 or p == 0:
        raise ValueError(f"W must have at least one row and one column, got shape {tuple(W.shape)}")
    rtol = _check_rtol(rtol, n, p, W)
    xp = namespace(W=W)
    scale = float(xp.max(xp.abs(W)))
    if scale > 0:
        W = W / scale  # the column space is scale-free; entries near the float range would overflow the SVD
    U, s, _ = xp.linalg.svd(W, full_matrices=False)
    if float(s[0]) == 0.0:
        raise ValueError(f"W must be nonzero to span a subspace, got a zero matrix of shape {tuple(W.shape)}")
    rank = int(xp.sum(xp.astype(s > rtol * s[0], xp.int64)))
    return Subspace(U[:, :rank], rank, s, p)


def _check_rtol(rtol, n: int, p: int, W) -> float:
    if rtol is None:
        return max(n, p) * float(np.finfo(to_numpy(W[:0, :0]).dtype).eps)
    return check_in_range("rtol", rtol, 0.0, 1.0, high_inclusive=False)


def _orthonormal(name: str, A, xp):
    """Orthonormal bases of the columns of a stack ``[..., n, p]``, refusing numerically dependent columns."""
    scale = xp.max(xp.abs(A), axis=(-2, -1), keepdims=True)
    A = A / xp.where(scale > 0, scale, xp.ones_like(scale))  # scale-free; keeps the SVD away from overflow
    U, s, _ = xp.linalg.svd(A, full_matrices=False)
    n, p = A.shape[-2:]
    eps = float(np.finfo(to_numpy(A[..., :0, :0]).dtype).eps)
    top = xp.max(s, axis=-1)
    ranks = xp.sum(xp.astype(s > max(n, p) * eps * top[..., None], xp.int64), axis=-1)
    low = int(xp.min(ranks))
    if low < p:
        raise ValueError(
            f"{name} must have linearly independent columns, got numerical rank {low} < {p} columns; "
            "use subspace_basis(W).basis for the column space of a rank-deficient matrix"
        )
    return U


def principal_angles(A, B, *, orthonormal: bool = False):
    r"""The principal angles between the column spaces of ``A`` and ``B``, ascending, in radians.

    .. math::

        \cos\theta_i = \sigma_i(Q_A^\top Q_B), \qquad \sin\theta_i = \sigma_{m+1-i}\big(Q_B - Q_A Q_A^\top Q_B\big),
        \qquad i = 1, \dots, m = \min(p, q),

    each angle taken from its sine where :math:`\cos^2\theta \ge 1/2` (small angles) and from its cosine elsewhere
    (Knyazev & Argentati 2002, Algorithm 3.1, with :math:`p \ge q` arranged by swapping).

    Parameters
    ----------
    A : array, shape=[..., n, p]
    B : array, shape=[..., n, q]
        numpy or torch (the same library), leading axes broadcast.  Columns must be linearly independent; for a
        rank-deficient matrix pass ``subspace_basis(W).basis``.
    orthonormal : bool
        Whether the columns are already orthonormal (skips one SVD each).

    Returns
    -------
    array, shape=[..., min(p, q)]
        :math:`0 \le \theta_1 \le \dots \le \theta_m \le \pi/2`.

    Raises
    ------
    ValueError
        If the shapes do not match, or a matrix has dependent columns.

    References
    ----------
    Björck & Golub (1973) §3; Knyazev & Argentati (2002), Algorithm 3.1; ``scipy.linalg.subspace_angles`` computes
    the same angles (descending, one pair at a time).

    Examples
    --------
    Angles of a plane with itself, with an orthogonal plane, and with a plane sharing one direction:

    >>> import numpy as np
    >>> e = np.eye(4)
    >>> principal_angles(e[:, :2], e[:, :2]).tolist(), principal_angles(e[:, :2], e[:, 2:]).tolist()
    ([0.0, 0.0], [1.5707963267948966, 1.5707963267948966])
    >>> theta = principal_angles(e[:, :2], np.stack([e[:, 0], np.cos(0.3) * e[:, 1] + np.sin(0.3) * e[:, 2]], 1))
    >>> bool(np.allclose(theta, [0.0, 0.3], rtol=1e-14, atol=1e-15))
    True
    """
    A = as_array("A", A, min_ndim=2)
    B = as_array("B", B, min_ndim=2)
    xp = namespace(A=A, B=B)
    if A.shape[-2] != B.shape[-2]:
        raise ValueError(
            f"A and B must be subspaces of one space (the same number of rows), got shapes {tuple(A.shape)} "
            f"and {tuple(B.shape)}"
        )
    for name, X in (("A", A), ("B", B)):
        if 0 in tuple(X.shape):
            raise ValueError(f"{name} must be a non-empty matrix or stack of matrices, got shape {tuple(X.shape)}")
    if not orthonormal:
        A, B = _orthonormal("A", A, xp), _orthonormal("B", B, xp)
    if A.shape[-1] < B.shape[-1]:  # the sine formula needs the larger subspace first
        A, B = B, A
    M = xp.matmul(xp.matrix_transpose(A), B)  # [..., p, q], p ≥ q
    cosines = xp.clip(xp.linalg.svdvals(M), 0.0, 1.0)  # descending cosines = ascending angles
    theta = xp.acos(cosines)
    small = cosines * cosines >= 0.5  # angles below π/4: read from their sines
    if not bool(xp.any(small)):
        return theta
    # the n × q residual SVD only for the pairs that have a small angle (random-like pairs have none)
    batch = tuple(theta.shape[:-1])
    flat_A = xp.reshape(xp.broadcast_to(A, (*batch, *A.shape[-2:])), (-1, *A.shape[-2:]))
    flat_B = xp.reshape(xp.broadcast_to(B, (*batch, *B.shape[-2:])), (-1, *B.shape[-2:]))
    flat_M = xp.reshape(M, (-1, *M.shape[-2:]))  # M = AᵀB already has the broadcast batch shape
    flat_theta = xp.reshape(theta, (-1, theta.shape[-1]))
    flat_small = xp.reshape(small, (-1, small.shape[-1]))
    rows = xp.nonzero(xp.any(flat_small, axis=-1))[0]
    residual = flat_B[rows] - xp.matmul(flat_A[rows], flat_M[rows])
    sines = xp.flip(xp.clip(xp.linalg.svdvals(residual), 0.0, 1.0), axis=-1)  # ascending sines
    chosen = xp.where(flat_small[rows], xp.asin(sines), flat_theta[rows])
    flat_theta = xp.asarray(flat_theta, copy=True)
    flat_theta[rows] = chosen
    return xp.reshape(flat_theta, theta.shape)


def distance_from_angles(theta, metric: str = "geodesic"):
    r"""A Grassmannian distance from principal angles :math:`\theta \in [0, \pi/2]^m` (last axis).

    .. math::

        d_{\mathrm{geodesic}} = \lVert\theta\rVert_2, \quad
        d_{\mathrm{chordal}} = \lVert\sin\theta\rVert_2 = 2^{-1/2}\lVert P_1 - P_2\rVert_F, \quad
        d_{\mathrm{projection}} = \lVert P_1 - P_2\rVert_F = \sqrt 2\,\lVert\sin\theta\rVert_2,

    .. math::

        d_{\mathrm{procrustes}} = \lVert 2\sin(\theta/2)\rVert_2 = \min_{U, V} \lVert Q_1U - Q_2V\rVert_F, \quad
        d_{\mathrm{spectral}} = \lVert P_1 - P_2\rVert_2 = \sin\theta_m, \quad
        d_{\mathrm{FS}} = \arccos\textstyle\prod_i\cos\theta_i ,

    with :math:`P_i = Q_iQ_i^\top` the orthogonal projections (equal dimensions for the projection identities) and
    :math:`U, V` orthogonal.  The geodesic distance is the arc length of the Riemannian metric induced by
    :math:`\mathrm{Gr}(k, n) \ni \operatorname{col} Q \mapsto QQ^\top`; ``"chordal"`` is the chord of Conway, Hardin
    & Sloane's embedding (Edelman–Arias–Smith call it the projection F-norm); ``"projection"`` is
    :math:`\lVert P_1 - P_2\rVert_F` itself, :math:`\sqrt2` times that projection F-norm; ``"procrustes"`` is what
    Edelman–Arias–Smith call the chordal F-norm, and ``"spectral"`` their projection 2-norm (book/reference.md §C.2).

    Parameters
    ----------
    theta : array, shape=[..., m]
    metric : {"geodesic", "chordal", "projection", "procrustes", "spectral", "fubini-study"}

    Returns
    -------
    array, shape=[...]

    References
    ----------
    Edelman, Arias & Smith (1998) §4.3 (Table 4.3 lists these from the angles); Conway, Hardin & Sloane (1996) §2;
    Ye & Lim (2016), Table 2.

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.array([np.pi / 2, np.pi / 2])  # two orthogonal planes
    >>> [round(float(distance_from_angles(theta, m)), 6) for m in ("geodesic", "chordal", "projection")]
    [2.221441, 1.414214, 2.0]
    """
    metric = check_choice("metric", metric, GRASSMANN_METRICS)
    theta = as_array("theta", theta, min_ndim=1)
    xp = namespace(theta=theta)
    if bool(xp.any(theta < 0)) or bool(xp.any(theta > math.pi / 2 + 1e-12)):
        raise ValueError("theta must hold principal angles in [0, π/2]")
    if metric == "geodesic":
        return xp.sqrt(xp.sum(theta * theta, axis=-1))
    if metric in ("chordal", "projection"):
        d = xp.sqrt(xp.sum(xp.sin(theta) ** 2, axis=-1))
        return d if metric == "chordal" else math.sqrt(2.0) * d
    if metric == "procrustes":
        return xp.sqrt(xp.sum((2 * xp.sin(theta / 2)) ** 2, axis=-1))
    if metric == "spectral":
        return xp.sin(xp.max(theta, axis=-1))
    # arccos Π cos θ loses digits near 0 (the product is 1 - Σθ²/2 + …): read the angle from its sine, with
    # sin² = 1 - Π cos²θ = -expm1(Σ log1p(-sin²θ)) computed without cancellation
    product = xp.prod(xp.cos(theta), axis=-1)
    s2 = xp.sin(theta) ** 2
    right = s2 >= 1.0  # an angle of π/2: the product is 0 (log1p(-1) would be -inf)
    sine2 = -xp.expm1(xp.sum(xp.log1p(-xp.where(right, xp.zeros_like(s2), s2)), axis=-1))
    sine2 = xp.where(xp.any(right, axis=-1), xp.ones_like(sine2), sine2)
    sine = xp.sqrt(xp.clip(sine2, 0.0, 1.0))
    return xp.where(sine2 <= 0.5, xp.asin(sine), xp.acos(xp.clip(product, 0.0, 1.0)))


def grassmann_distance(A, B, metric: str = "geodesic", *, orthonormal: bool = False):
    r"""The distance between the column spaces of ``A`` and ``B`` (see :func:`distance_from_angles`).

    Parameters
    ----------
    A : array, shape=[..., n, p]
    B : array, shape=[..., n, q]
    metric : str
        One of :data:`GRASSMANN_METRICS`.
    orthonormal : bool

    Returns
    -------
    array, shape=[...]

    References
    ----------
    Edelman, Arias & Smith (1998) §4.3.

    Examples
    --------
    The gauge of a head, :math:`W \mapsto WG` with :math:`G` invertible, moves no subspace:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> W, G = rng.standard_normal((8, 3)), rng.standard_normal((3, 3)) + 3 * np.eye(3)
    >>> bool(grassmann_distance(W, W @ G) < 1e-7)
    True
    """
    metric = check_choice("metric", metric, GRASSMANN_METRICS)
    return distance_from_angles(principal_angles(A, B, orthonormal=orthonormal), metric)


def grassmann_dimension(n: int, k: int) -> int:
    r""":math:`\dim \mathrm{Gr}(k, n) = k(n - k)`.

    Examples
    --------
    >>> grassmann_dimension(384, 32)  # a head of all-MiniLM-L6-v2
    11264
    """
    n = check_integer("n", n, 1)
    k = check_integer("k", k, 0, n)
    return k * (n - k)


def projection_differential(Y):
    r"""The Jacobian of the projection :math:`Y \mapsto P(Y) = Y(Y^\top Y)^{-1}Y^\top` at a full-rank :math:`Y`.

    .. math::

        dP = (I - P)\,dY\,Y^{+} + \big((I - P)\,dY\,Y^{+}\big)^\top, \qquad Y^+ = (Y^\top Y)^{-1}Y^\top ,

    as an :math:`n^2 \times nk` matrix (row-major vec of :math:`P`, row-major vec of :math:`Y`).  Its rank is
    :math:`k(n-k) = \dim\mathrm{Gr}(k, n)`: :math:`P` depends on :math:`Y` only through its column space (the
    :math:`k^2` directions :math:`dY = YB` are its kernel), and the image of the remaining directions is the tangent
    space at :math:`P` of the embedded Grassmannian.

    Parameters
    ----------
    Y : array, shape=[n, k]
        Full column rank.

    Returns
    -------
    ndarray, shape=[n*n, n*k]

    References
    ----------
    Edelman, Arias & Smith (1998) §2.5 (the Grassmannian as a quotient; its tangent space); Absil, Mahony &
    Sepulchre (2008), *Optimization Algorithms on Matrix Manifolds*, §3.4.4.

    Examples
    --------
    >>> import numpy as np
    >>> J = projection_differential(np.random.default_rng(0).standard_normal((5, 2)))
    >>> int(np.linalg.matrix_rank(J)), grassmann_dimension(5, 2)
    (6, 6)
    """
    Y = np.asarray(to_numpy(as_array("Y", Y, ndim=2)), dtype=np.float64)
    n, k = Y.shape
    if n == 0 or k == 0:
        raise ValueError(f"Y must have at least one row and one column, got shape {Y.shape}")
    _check_work("projection_differential", n**3 * k, n=n, k=k)
    _orthonormal("Y", Y, np)
    pinv = np.linalg.pinv(Y)  # [k, n]
    complement = np.eye(n) - Y @ pinv
    # d vec(P)/d vec(Y) for row-major vec: (I-P) E_ab Y⁺ has (i, j) entry (I-P)_{ia} Y⁺_{bj}
    half = np.einsum("ia,bj->ijab", complement, pinv)  # [n, n, n, k]
    return (half + half.transpose(1, 0, 2, 3)).reshape(n * n, n * k)


def random_subspaces(n: int, k: int, *, samples: int = 1, seed=None) -> np.ndarray:
    r"""Orthonormal bases of ``samples`` independent uniformly distributed :math:`k`-planes in :math:`\mathbb R^n`.

    The column space of a Gaussian :math:`n\times k` matrix is Haar-distributed on :math:`\mathrm{Gr}(k, n)`
    (its law is invariant under every orthogonal map), so its QR factor is a uniform basis of a uniform plane.

    Parameters
    ----------
    n, k : int
        :math:`1 \le k \le n`.
    samples : int
    seed : int or numpy Generator, optional

    Returns
    -------
    ndarray, shape=[samples, n, k]

    References
    ----------
    Absil, Edelman & Koev (2006) §2; Mezzadri (2007), Notices AMS 54(5), 592–604.
    """
    n = check_integer("n", n, 1)
    k = check_integer("k", k, 1, n)
    samples = check_integer("samples", samples, 1)
    _check_work("random_subspaces", samples * n * k, n=n, k=k, samples=samples)
    rng = check_rng("seed", seed)
    Q, _ = np.linalg.qr(rng.standard_normal((samples, n, k)))
    return Q


#: The most float64 entries a random-subspace draw may hold (2**27 entries = 1 GiB).
MAX_RANDOM_ENTRIES = 2**27


def _check_work(what: str, entries: int, **sizes: int) -> None:
    if entries > MAX_RANDOM_ENTRIES:
        given = ", ".join(f"{name}={value:,}" for name, value in sizes.items())
        raise ValueError(
            f"{what} with {given} would hold {entries:,} float64 entries ({entries * 8 / 2**30:.1f} GiB), over the "
            f"budget of {MAX_RANDOM_ENTRIES:,}; make {' or '.join(sizes)} smaller"
        )


def random_principal_angles(n: int, k: int, l: int | None = None, *, samples: int = 256, seed=None) -> np.ndarray:  # noqa: E741
    r"""Principal angles between independent uniform :math:`k`- and :math:`l`-planes of :math:`\mathbb R^n`.

    The null model of :func:`~workbench.attention.head_subspace_distances`: two heads whose subspaces were drawn
    independently at random.  The angles are drawn from their exact law through the Jacobi (MANOVA) form of the
    squared cosines, :math:`\operatorname{eig}\big(R^{-1}G_1^\top G_1R^{-\top}\big)` with :math:`G` Gaussian,
    :math:`G_1` its first :math:`k` rows and :math:`G^\top G = R R^\top` (Absil, Edelman & Koev 2006 §2), in
    :math:`O(nl^2)` per sample.  Angles are read from their cosines, accurate to rounding away from 0 (random
    planes of a large space are far apart; for exact small angles use :func:`principal_angles` on
    :func:`random_subspaces`).  For :math:`k = 1`, :math:`\cos^2\theta \sim \mathrm{Beta}(l/2, (n-l)/2)` exactly;
    for large :math:`n` at fixed ratios the squared cosines follow :class:`WachterLaw`; their mean is exactly
    :math:`\mathbb E\,\tfrac1m\sum_i\cos^2\theta_i = \max(k, l)/n` (from :math:`\mathbb E\,\mathrm{tr}\,P_1P_2 =
    kl/n`).

    Parameters
    ----------
    n, k : int
    l : int, optional
        Default :math:`k`.
    samples : int
        Independent pairs.
    seed : int or numpy Generator, optional

    Returns
    -------
    ndarray, shape=[samples, min(k, l)]

    References
    ----------
    Absil, Edelman & Koev (2006); Wachter (1980).

    Examples
    --------
    >>> import numpy as np
    >>> theta = random_principal_angles(384, 32, samples=64, seed=0)
    >>> theta.shape, bool(abs(np.mean(np.cos(theta) ** 2) - 32 / 384) < 0.002)  # exact mean k/n
    ((64, 32), True)
    """
    n = check_integer("n", n, 1)
    k = check_integer("k", k, 1, n)
    l = k if l is None else check_integer("l", l, 1, n)  # noqa: E741
    samples = check_integer("samples", samples, 1)
    _check_work("random_principal_angles", samples * n * l, n=n, l=l, samples=samples)
    rng = check_rng("seed", seed)
    # By orthogonal invariance the first plane may be span(e_1..e_k).  For the second, col G with G Gaussian
    # [n, l]: Q = G R⁻ᵀ (GᵀG = RRᵀ), so the squared cosines are the eigenvalues of R⁻¹ G₁ᵀG₁ R⁻ᵀ, G₁ the first k
    # rows (the Jacobi/MANOVA form).  Only l × l matrices: no n × l orthogonalisation per sample.
    G = rng.standard_normal((samples, n, l))
    top = np.matmul(np.swapaxes(G[:, :k], 1, 2), G[:, :k])
    whole = np.matmul(np.swapaxes(G, 1, 2), G)
    R = np.linalg.cholesky(whole)  # lower: whole = R Rᵀ
    half = np.linalg.solve(R, top)  # R⁻¹ top
    C = np.linalg.solve(R, np.swapaxes(half, 1, 2))  # R⁻¹ top R⁻ᵀ, symmetric
    C = 0.5 * (C + np.swapaxes(C, 1, 2))
    m = min(k, l)
    cos2 = np.clip(np.linalg.eigvalsh(C)[:, ::-1][:, :m], 0.0, 1.0)  # descending: ascending angles
    return np.arccos(np.sqrt(cos2))


@dataclass(frozen=True)
class WachterLaw:
    r"""Wachter's limit law of the squared cosines of the principal angles between two random subspaces.

    For uniform independent :math:`p`- and :math:`q`-planes of :math:`\mathbb R^n`, :math:`p \le q`,
    :math:`p + q \le n`, as :math:`n \to \infty` with :math:`\alpha = p/n`, :math:`\beta = q/n`, the empirical law
    of :math:`\cos^2\theta_1, \dots, \cos^2\theta_p` tends to the density

    .. math::

        f(x) = \frac{\sqrt{(x - \lambda_-)(\lambda_+ - x)}}{2\pi\alpha\, x(1 - x)}, \qquad
        \lambda_\pm = \Big(\sqrt{\alpha(1-\beta)} \pm \sqrt{\beta(1-\alpha)}\Big)^2 ,

    on :math:`[\lambda_-, \lambda_+]`, of mean :math:`\beta`.  (It is the nonzero part of the spectrum of
    :math:`P_1P_2P_1`, the free multiplicative convolution of two projections; :math:`\alpha\cdot f` integrates to
    :math:`\alpha`.)  The smallest angle of two random planes thus tends to :math:`\arccos\sqrt{\lambda_+} > 0`:
    for :math:`\alpha = \beta = 1/12` (a head of all-MiniLM-L6-v2), :math:`\lambda_+ = 11/36` and no angle of two
    random heads is below :math:`56.4°` in the limit.

    Parameters
    ----------
    n, p, q : int
        Only the ratios enter; ``p + q <= n`` is required.

    References
    ----------
    Wachter (1980), Ann. Statist. 8(5), 937–957; Absil, Edelman & Koev (2006) (the largest cosine at finite n).

    Examples
    --------
    >>> law = WachterLaw(384, 32, 32)
    >>> [round(x, 4) for x in law.support], round(law.mean(), 6), round(law.cdf(law.support[1]), 6)
    ([0.0, 0.3056], 0.083333, 1.0)
    """

    n: int
    p: int
    q: int

    def __post_init__(self):
        n = check_integer("n", self.n, 2)
        p = check_integer("p", self.p, 1, n)
        q = check_integer("q", self.q, 1, n)
        if p + q > n:
            raise ValueError(
                f"p + q must be at most n (beyond it p + q - n angles are exactly 0 and the law has an atom), got "
                f"p={p}, q={q}, n={n}"
            )
        object.__setattr__(self, "p", min(p, q))
        object.__setattr__(self, "q", max(p, q))

    @property
    def ratios(self) -> tuple[float, float]:
        r""":math:`(\alpha, \beta) = (p/n, q/n)`, :math:`p \le q`."""
        return self.p / self.n, self.q / self.n

    @property
    def support(self) -> tuple[float, float]:
        r""":math:`(\lambda_-, \lambda_+)`."""
        a, b = self.ratios
        u, v = math.sqrt(a * (1 - b)), math.sqrt(b * (1 - a))
        return (u - v) ** 2, (u + v) ** 2

    def pdf(self, x):
        """The density at ``x`` (0 outside the support)."""
        a, _ = self.ratios
        low, high = self.support
        x = np.asarray(to_numpy(as_array("x", x)), dtype=np.float64)
        inside = (x > low) & (x < high)
        safe = np.where(inside, x, 0.5 * (low + high))
        value = np.sqrt(np.maximum((safe - low) * (high - safe), 0.0)) / (2 * math.pi * a * safe * (1 - safe))
        return np.where(inside, value, 0.0)

    def cdf(self, x) -> float:
        r""":math:`F(x) = \int_{\lambda_-}^x f` (adaptive quadrature; the integrand has square-root endpoints)."""
        from scipy.integrate import quad

        low, high = self.support
        x = float(np.asarray(to_numpy(as_array("x", x, ndim=0))))
        if x <= low:
            return 0.0
        if x >= high:
            return 1.0
        return float(min(1.0, quad(self.pdf, low, x, limit=200, points=[low, x])[0]))

    def mean(self) -> float:
        r""":math:`\int x f(x)\,dx`, by quadrature (equal to :math:`\beta`, the closed form; a test compares)."""
        from scipy.integrate import quad

        low, high = self.support
        return float(quad(lambda x: x * self.pdf(x), low, high, limit=200)[0])

    def smallest_angle(self) -> float:
        r"""The limit of the smallest principal angle, :math:`\arccos\sqrt{\lambda_+}` (radians)."""
        return math.acos(math.sqrt(self.support[1]))
