r"""The finite-sample Beurling–Deny split of a symmetric Dirichlet form: local + jump + killing.

A regular symmetric Dirichlet form splits (Beurling–Deny) into a diffusion part, a jump part and a killing
part,

.. math::

    \mathcal E(f,f) = \int \hbar\,\mathcal G^{ab}\partial_a f\,\partial_b f\,d\mu
                    + \tfrac12\iint (f(x) - f(y))^2\,J(dx,dy) + \int f^2\,k(dx) .

On a sample with a symmetric kernel :math:`\mathsf K` (for the Gauss kernel
:math:`\mathsf K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)`) the form is a sum over bonds, and a locality
radius :math:`r` splits the bonds into local ones (:math:`d_{ij} \le r`, the finite-sample diffusion part)
and remote ones (:math:`d_{ij} > r`, the jump part).  A sub-Markov operator (rows summing to less than one)
adds a killing measure.  Under "critical rate scaling" the remote bonds survive as a jump kernel while the
local ones converge to the diffusion part; for the Gauss kernel the natural radius is :math:`r = c/\sqrt\beta`.

This finite-sample split is a reconstruction: Attention Geometry names the Beurling–Deny decomposition and the
ATAP kernel, but its finite formulas are lost.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §6; book/reference.md §A.6 [mostly RECON].
A. Beurling, J. Deny, "Dirichlet spaces", Proc. Natl. Acad. Sci. USA 45 (1959) 208; M. Fukushima,
Y. Oshima, M. Takeda, *Dirichlet Forms and Symmetric Markov Processes*, 2nd ed., de Gruyter (2011), Thm 3.2.1.
"""

from __future__ import annotations

from dataclasses import dataclass

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.markov._matrices import lookup, square_matrix, symmetry_gap
from workbench.validation import (
    as_array,
    check_finite_output,
    check_in_range,
    check_matching,
    check_nonnegative,
    check_symmetric,
)

__all__ = ["BeurlingDenyParts", "beurling_deny_scan", "beurling_deny_split", "killing_measure"]


@dataclass(frozen=True)
class BeurlingDenyParts:
    r"""The three parts of :math:`\mathcal E(f,f)` and their sum.

    Floats from :func:`beurling_deny_split`; arrays over the radii (in the library of the inputs) from
    :func:`beurling_deny_scan`.
    """

    local: object
    r"""Diffusion part :math:`\tfrac12\sum_{d_{ij} \le r} \mathsf K_{ij}(f_i - f_j)^2`."""
    jump: object
    r"""Jump part :math:`\tfrac12\sum_{d_{ij} > r} \mathsf K_{ij}(f_i - f_j)^2`."""
    killing: object
    r"""Killing part :math:`\sum_i \kappa_i f_i^2`."""
    total: object
    r""":math:`\mathcal E(f,f)`, summed directly over all bonds (equal to the three parts to rounding)."""


def _bond_energies(kernel, distances, f, killing):
    """Per-bond energies K_ij (f_i − f_j)² and distances d_ij over the bonds i < j, plus Σ κ_i f_i²."""
    K, k_sparse = square_matrix("kernel", kernel)
    D, d_sparse = square_matrix("distances", distances)
    f = as_array("f", f, ndim=1)
    if killing is not None:
        killing = as_array("killing", killing, ndim=1)
    inputs = {"kernel": K, "distances": D, "f": f, "killing": killing}
    dense = {name: x for name, x in inputs.items() if x is not None and not _is_sparse(x)}
    xp = namespace(**dense)  # rejects mixing numpy and torch, naming the parameters
    sparse = k_sparse or d_sparse
    if sparse and not array_api_compat.is_numpy_namespace(xp):
        raise TypeError("kernel, distances, f and killing must be numpy arrays when kernel or distances is sparse")
    if tuple(K.shape) != tuple(D.shape):
        raise ValueError(f"kernel and distances must have the same shape, got {tuple(K.shape)} and {tuple(D.shape)}")
    n = int(K.shape[0])
    check_matching("kernel rows", n, "f", f.shape[0])
    check_nonnegative("kernel", K)
    check_symmetric("kernel", K)
    check_nonnegative("distances", D)
    check_symmetric("distances", D)
    if killing is not None:
        check_matching("kernel rows", n, "killing", killing.shape[0])
        check_nonnegative("killing", killing)

    if sparse:
        import scipy.sparse

        K_csr = K if k_sparse else scipy.sparse.csr_array(np.asarray(K))
        coo = scipy.sparse.triu(K_csr, k=1, format="coo")
        keep = coo.data > 0
        rows, cols = coo.row[keep].astype(np.intp), coo.col[keep].astype(np.intp)
        weights = coo.data[keep]
        if d_sparse:
            stored = scipy.sparse.csr_array((np.ones(D.nnz), D.indices, D.indptr), shape=D.shape)
            missing = np.flatnonzero(lookup(stored, True, rows, cols) == 0)
            if missing.size:
                i, j = int(rows[missing[0]]), int(cols[missing[0]])
                raise ValueError(
                    f"distances must store an entry wherever kernel is positive, got kernel[{i}, {j}] = "
                    f"{weights[missing[0]]:.6g} with no stored distances[{i}, {j}]"
                )
        d = lookup(D, d_sparse, rows, cols)
    else:
        rows, cols = np.triu_indices(n, 1)
        weights = lookup(K, False, rows, cols)
        d = lookup(D, False, rows, cols)
    device = array_api_compat.device(f)
    rows_x, cols_x = xp.asarray(rows, device=device), xp.asarray(cols, device=device)
    # The energies are quadratic in f: an f near 1e300 overflows them, refused by _scan, naming the inputs.
    with np.errstate(over="ignore", invalid="ignore"):
        df = xp.take(f, rows_x) - xp.take(f, cols_x)
        energies = weights * df * df
        killed = xp.sum(killing * f * f) if killing is not None else xp.sum(xp.zeros_like(f))
    named = {"kernel": kernel, "f": f} | ({} if killing is None else {"killing": killing})
    return xp, energies, d, killed, named


def _is_sparse(x):
    import scipy.sparse

    return scipy.sparse.issparse(x)


def _scan(xp, energies, d, killed, radii, named):
    # Sort bonds by length once; the local part is a prefix sum and the jump part a suffix sum, each
    # accumulated from its own end, so a tiny jump tail is never the difference of two large numbers.
    order = xp.argsort(d)
    d_sorted = xp.take(d, order)
    e_sorted = xp.take(energies, order)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing energy is refused just below
        prefix = xp.cumulative_sum(e_sorted, include_initial=True)
        suffix = xp.flip(xp.cumulative_sum(xp.flip(e_sorted), include_initial=True))
        total = xp.sum(energies) + killed
    count = xp.searchsorted(d_sorted, radii, side="right")  # bonds with d_ij <= r are local
    local = xp.take(prefix, count)
    jump = xp.take(suffix, count)
    ones = xp.ones_like(local)
    parts = BeurlingDenyParts(local=local, jump=jump, killing=killed * ones, total=total * ones)
    for name in ("local", "jump", "killing", "total"):
        check_finite_output(f"the {name} part of the Dirichlet energy E(f, f)", getattr(parts, name), **named)
    return parts


def beurling_deny_scan(kernel, distances, radii, f, *, killing=None):
    r"""The Beurling–Deny split of :math:`\mathcal E(f,f)` at every radius of ``radii``.

    .. math::

        \mathcal E(f,f) = \underbrace{\tfrac12\sum_{d_{ij}\le r}\mathsf K_{ij}(f_i-f_j)^2}_{\text{local}(r)}
                        + \underbrace{\tfrac12\sum_{d_{ij}>r}\mathsf K_{ij}(f_i-f_j)^2}_{\text{jump}(r)}
                        + \underbrace{\sum_i\kappa_i f_i^2}_{\text{killing}} ;

    the local part is nondecreasing in :math:`r`, the jump part nonincreasing, and the total does not
    depend on :math:`r`.  The bonds are sorted once (:math:`O(m\log m)` for :math:`m` bonds).

    For the Gauss kernel :math:`\mathsf K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)` on a dense sample of
    an :math:`m`-dimensional manifold and a smooth :math:`f`, the bond energy at length :math:`\rho` scales as
    :math:`e^{-\beta\rho^2}\rho^2\cdot\rho^{m-1}`, so at :math:`r = c/\sqrt\beta` the jump fraction tends to
    the Gaussian tail :math:`\Gamma(\tfrac m2 + 1, c^2)/\Gamma(\tfrac m2 + 1)` as :math:`\beta \to \infty`
    (after :math:`N \to \infty`): the Gauss kernel has no jump part in the limit.

    Parameters
    ----------
    kernel : array or scipy.sparse matrix, shape=[n, n]
        Symmetric, nonnegative bond weights :math:`\mathsf K_{ij}`; the diagonal is ignored.
    distances : array or scipy.sparse matrix, shape=[n, n]
        Symmetric, nonnegative bond lengths :math:`d_{ij}` (distances, not squared) in the units of the
        radii, e.g. ``numpy.sqrt(squared_distances(points))``.  A sparse ``distances`` must store an entry
        (possibly an explicit zero) wherever ``kernel`` is positive; it is read only there.
    radii : array_like, shape=[R]
        Locality radii :math:`r \ge 0`.
    f : array, shape=[n]
        A function on the vertices.
    killing : array, shape=[n], optional
        Killing measure :math:`\kappa \ge 0` (see :func:`killing_measure`); default zero.

    Returns
    -------
    BeurlingDenyParts
        Fields ``local``, ``jump``, ``killing``, ``total``, each of shape [R], in the library of the inputs
        (numpy when ``kernel`` or ``distances`` is sparse).

    References
    ----------
    Attention Geometry §6; book/reference.md §A.6 [RECON: the finite-sample split by a locality
    radius]; Fukushima–Oshima–Takeda (2011), Thm 3.2.1 (the Beurling–Deny formula).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 1.0, 3.0])
    >>> d = np.abs(x[:, None] - x[None, :])
    >>> K = np.exp(-d**2)  # Gauss kernel, β = 1
    >>> parts = beurling_deny_scan(K, d, [0.5, 1.5, 2.5], f=x)
    >>> by_hand = np.array([K[0, 1] * 1.0, K[1, 2] * 4.0, K[0, 2] * 9.0])  # bonds of length 1, 2, 3
    >>> bool(np.allclose(parts.local, [0.0, by_hand[0], by_hand[:2].sum()]))
    True
    >>> bool(np.allclose(parts.jump, [by_hand.sum(), by_hand[1:].sum(), by_hand[2]]))
    True
    """
    xp, energies, d, killed, named = _bond_energies(kernel, distances, f, killing)
    host_radii = np.asarray(to_numpy(as_array("radii", radii, ndim=1)), dtype=np.float64)
    check_nonnegative("radii", host_radii)
    radii = xp.asarray(host_radii, dtype=d.dtype, device=array_api_compat.device(d))
    return _scan(xp, energies, d, killed, radii, named)


def beurling_deny_split(kernel, distances, radius, f, *, killing=None):
    r"""The Beurling–Deny split of :math:`\mathcal E(f,f)` at one locality radius :math:`r`.

    .. math::

        \mathcal E(f,f) = \tfrac12\sum_{d_{ij}\le r}\mathsf K_{ij}(f_i-f_j)^2
                        + \tfrac12\sum_{d_{ij}>r}\mathsf K_{ij}(f_i-f_j)^2 + \sum_i\kappa_i f_i^2
                        = \text{local} + \text{jump} + \text{killing} .

    With a symmetric kernel of degree :math:`\mathsf p = \mathsf K\mathbf 1`, Markov operator
    :math:`\mathsf P = \operatorname{diag}(\mathsf p)^{-1}\mathsf K` and positive generator
    :math:`\mathsf L = I - \mathsf P`, the first two parts add up to :math:`\sum_i\mathsf p_i f_i(\mathsf Lf)_i`.
    For the Gauss kernel :math:`\mathsf K_{ij} = \exp(-\beta\lVert x_i - x_j\rVert^2)` take
    :math:`r = c/\sqrt\beta` (see :func:`beurling_deny_scan`).

    Parameters
    ----------
    kernel, distances, f, killing
        As in :func:`beurling_deny_scan`.
    radius : float
        Locality radius :math:`r \ge 0`; bonds with :math:`d_{ij} \le r` are local.

    Returns
    -------
    BeurlingDenyParts
        Fields ``local``, ``jump``, ``killing``, ``total`` as floats.

    References
    ----------
    Attention Geometry §6; book/reference.md §A.6 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x = rng.standard_normal((6, 2))
    >>> d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    >>> K = np.exp(-2.0 * d**2)  # Gauss kernel, β = 2
    >>> f, kappa = x[:, 0], np.full(6, 0.1)
    >>> parts = beurling_deny_split(K, d, 1.0 / np.sqrt(2.0), f, killing=kappa)
    >>> quadratic = f @ (np.diag(K.sum(1)) - K + np.diag(kappa)) @ f  # fᵀ(diag(p) − K + diag(κ))f
    >>> bool(np.isclose(parts.local + parts.jump + parts.killing, quadratic))
    True
    """
    radius = check_in_range("radius", radius, 0.0)
    xp, energies, d, killed, named = _bond_energies(kernel, distances, f, killing)
    radii = xp.asarray([radius], dtype=d.dtype, device=array_api_compat.device(d))
    parts = _scan(xp, energies, d, killed, radii, named)
    return BeurlingDenyParts(*(float(getattr(parts, name)[0]) for name in ("local", "jump", "killing", "total")))


def killing_measure(P, pi, *, tol=1e-10):
    r"""Killing measure :math:`\kappa_i = \pi_i(1 - \sum_j\mathsf P_{ij})` of a reversible sub-Markov operator.

    For :math:`\mathsf P \ge 0` with rows summing to at most one (the missing mass is the probability of
    being killed) and reversible with respect to :math:`\pi` (:math:`\pi_i\mathsf P_{ij} = \pi_j\mathsf P_{ji}`),
    the positive generator :math:`\mathsf L = I - \mathsf P` has the Beurling–Deny form

    .. math::

        \langle f, (I - \mathsf P) f\rangle_\pi
          = \tfrac12\sum_{ij}\pi_i\mathsf P_{ij}(f_i - f_j)^2 + \sum_i \kappa_i f_i^2 ,

    so :func:`beurling_deny_split` with ``kernel = diag(π) P`` and ``killing = κ`` splits it.

    Parameters
    ----------
    P : array or scipy.sparse matrix, shape=[n, n]
        Nonnegative, rows summing to at most ``1 + tol``.
    pi : array, shape=[n]
        A nonnegative measure (not necessarily normalised) with respect to which ``P`` is reversible.
    tol : float
        Absolute tolerance on the row sums and relative tolerance on detailed balance.

    Returns
    -------
    array, shape=[n]
        :math:`\kappa \ge 0`, in the library of ``P`` (numpy for sparse ``P``).

    References
    ----------
    Attention Geometry §6; book/reference.md §A.6 [RECON]; Fukushima–Oshima–Takeda (2011), §1.2.

    Examples
    --------
    >>> import numpy as np
    >>> K = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    >>> kappa0 = np.array([0.5, 0.0, 1.0])  # kill at rate κ₀ on top of the bonds
    >>> P = K / (K.sum(1) + kappa0)[:, None]  # sub-Markov, reversible w.r.t. π ∝ K1 + κ₀
    >>> pi = K.sum(1) + kappa0
    >>> bool(np.allclose(killing_measure(P, pi), kappa0))  # closed form: κ = π(1 − P1) = κ₀
    True
    """
    P, sparse = square_matrix("P", P)
    check_nonnegative("P", P)
    pi = as_array("pi", pi, ndim=1)
    if not sparse:
        namespace(P=P, pi=pi)  # rejects mixing numpy and torch
    elif not array_api_compat.is_numpy_array(pi):
        raise TypeError("pi must be a numpy array when P is sparse")
    tol = check_in_range("tol", tol, 0.0)
    n = int(P.shape[0])
    check_matching("P rows", n, "pi", pi.shape[0])
    check_nonnegative("pi", pi)
    if sparse:
        row_sums = np.asarray(P.sum(axis=1)).ravel()
        flux = P.multiply(pi[:, None]).tocsr()
    else:
        xp = namespace(P)
        row_sums = xp.sum(P, axis=1)
        flux = pi[:, None] * P
    host_sums = np.asarray(to_numpy(row_sums))
    if n and host_sums.max() > 1.0 + tol:
        row = int(np.argmax(host_sums))
        raise ValueError(
            f"P must be sub-stochastic (rows summing to at most 1 within tol={tol:g}), "
            f"got row {row} summing to {host_sums[row]:.6g}"
        )
    gap, scale = symmetry_gap(flux, sparse, sign=+1)
    if gap > tol * max(scale, np.finfo(float).tiny):
        raise ValueError(
            "P must be reversible with respect to pi (pi_i P_ij = pi_j P_ji), got max |pi_i P_ij - pi_j P_ji| = "
            f"{gap:.6g} (relative {gap / max(scale, np.finfo(float).tiny):.6g}, more than tol={tol:g})"
        )
    deficit = 1.0 - row_sums
    if sparse:
        return pi * np.maximum(deficit, 0.0)  # rows within tol above 1 are rounding: no killing there
    xp = namespace(P)
    return pi * xp.clip(deficit, min=0.0)
