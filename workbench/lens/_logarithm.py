r"""The principal real logarithm of a learned linear map, and which structure computes it.

:math:`S = \log W` is the generator whose flow :math:`e^{tS}` reaches :math:`W` at :math:`t = 1`.  It is exact
by structure for SPD maps (eigenvalues) and rotations (real Schur form), computed by the Mercator series
(Gauss–Legendre Padé quadrature) near the identity and by inverse scaling and squaring otherwise, and
refused with a ``ValueError`` saying why where no real principal logarithm exists (:math:`\det W = -1`, an
eigenvalue :math:`-1` or any eigenvalue on the closed negative real axis).

classify_map   -- which logarithm ``kind="auto"`` uses: spd, orthogonal, near-identity or general
principal_log  -- the principal real logarithm, checked against the structure it is asked to use

References
----------
Lie-Exponential Roadmap, "Log lens", "Log-Lens Diagnostics", "Branch cuts/logs" (restrict
:math:`\log W` to orthogonal maps with positive determinant or SPD maps, or use a Schur principal log) [SEED].
N. J. Higham, *Functions of Matrices*, SIAM 2008, ch. 11 (principal logarithm: exists and is unique and
real for real :math:`W` with no eigenvalue on :math:`(-\infty, 0]`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import scipy.linalg

from workbench.backend import unit_roundoff
from workbench.lens._primitives import DEFAULT_TOL, as_matrix, binary_scale, check_tol
from workbench.validation import check_choice

__all__ = ["KINDS", "classify_map", "principal_log"]

#: The ``kind`` values accepted by :func:`principal_log` and :func:`log_lens`.
KINDS = ("auto", "orthogonal", "spd", "near-identity")

_TINY = np.finfo(np.float64).tiny


def _symmetry_gap(W: np.ndarray) -> tuple[float, float]:
    gap = float(np.max(np.abs(W - W.T))) if W.size else 0.0
    scale = float(np.max(np.abs(W))) if W.size else 0.0
    return gap, gap / max(scale, _TINY)


def _orthogonality_gap(W: np.ndarray) -> float:
    if not W.size:
        return 0.0
    # W^T W - I = s^2 (U^T U - I/s^2) with U = W/s, s a power of two (exact): no product of huge entries
    # overflows, and a gap beyond the double range is reported as inf (it exceeds every tolerance).
    scale = float(binary_scale(W))
    U = W / scale
    with np.errstate(under="ignore"):
        return float(np.max(np.abs(U.T @ U - np.eye(W.shape[0]) / scale / scale))) * scale * scale


def _log_spd(W: np.ndarray, tol: float) -> np.ndarray:
    gap, relative = _symmetry_gap(W)
    if relative > tol:
        raise ValueError(f"W must be symmetric for kind='spd', got max |W - W^T| = {gap:.3g} (relative {relative:.3g})")
    lam, V = np.linalg.eigh((W + W.T) / 2)
    if lam.size and lam[0] <= 0:
        raise ValueError(f"W must be positive definite for kind='spd', got eigenvalue {lam[0]:.6g} <= 0")
    S = (V * np.log(lam)) @ V.T
    return (S + S.T) / 2


def _log_orthogonal(W: np.ndarray, tol: float) -> np.ndarray:
    gap = _orthogonality_gap(W)
    if gap > tol:
        raise ValueError(f"W must be orthogonal for kind='orthogonal', got max |W^T W - I| = {gap:.3g}")
    d = W.shape[0]
    if d == 0:
        return W.copy()
    det = float(np.linalg.det(W))
    if det < 0:
        raise ValueError(f"no real logarithm: det = {det:.6g} (an orthogonal map with det -1 is not in SO(d))")
    # Real Schur form W = Z T Z^T; for an orthogonal (normal) W, T is block diagonal up to rounding, with 1x1
    # blocks +1 (or -1) and standardised 2x2 rotation blocks [[c, -s], [s, c]] (LAPACK dgees).
    T, Z = scipy.linalg.schur(W, output="real")
    L = np.zeros_like(T)
    i = 0
    while i < d:
        if i + 1 < d and T[i + 1, i] != 0.0:
            c = (T[i, i] + T[i + 1, i + 1]) / 2
            s = (T[i + 1, i] - T[i, i + 1]) / 2
            if math.hypot(c + 1.0, s) <= tol:
                raise ValueError(
                    f"principal log not unique: W has a rotation block within tol = {tol:g} of the eigenvalue -1 "
                    "(rotation angle π), so log W is defined only up to the sign of the angle; perturb W, lower "
                    "tol or pick a branch by hand"
                )
            theta = math.atan2(s, c)  # in (-pi, pi): the principal angle
            L[i + 1, i], L[i, i + 1] = theta, -theta
            i += 2
        else:
            if T[i, i] < 0:
                raise ValueError(_NOT_UNIQUE)
            i += 1
    S = Z @ L @ Z.T
    return (S - S.T) / 2


_NOT_UNIQUE = (
    "principal log not unique: W has eigenvalue -1 (rotation angle π), so log W is defined only up to the "
    "sign of the angle; perturb W or pick a branch by hand"
)


def _log_near_identity(W: np.ndarray, tol: float) -> np.ndarray:
    X = W - np.eye(W.shape[0])  # exact for the diagonal (Sterbenz), untouched off it
    radius = float(np.linalg.norm(X, 2)) if W.size else 0.0
    if radius >= 1.0:
        raise ValueError(
            f"kind='near-identity' needs ||W - I||_2 < 1 (where the Mercator series converges), got {radius:.6g}"
        )
    if radius == 0.0:
        return np.zeros_like(W)
    nodes = _pade_nodes(radius)
    if nodes is None:
        return _logm(W)
    # log(I + X) = ∫_0^1 X (I + tX)^{-1} dt; m-point Gauss–Legendre is the [m/m] Padé approximant of the
    # Mercator series, accurate relative to ‖X‖ (logm loses ~1e-12 relative as W → I).
    S = np.zeros_like(W)
    eye = np.eye(W.shape[0])
    for t, weight in zip(*nodes, strict=True):
        S += weight * np.linalg.solve(eye + t * X, X)
    return S


#: Largest ‖W − I‖₂ handled by Gauss–Legendre quadrature (46 nodes at 0.9); beyond it, scipy's logm.
PADE_MAX_RADIUS = 0.9


@functools.cache
def _gauss_legendre(m: int) -> tuple[np.ndarray, np.ndarray]:
    t, w = np.polynomial.legendre.leggauss(m)
    return (t + 1) / 2, w / 2


def _pade_nodes(radius: float) -> tuple[np.ndarray, np.ndarray] | None:
    """Fewest Gauss–Legendre nodes whose [m/m] Padé error at ‖X‖₂ = radius is below ε·radius/2.

    Kenney & Laub (1989): for ‖X‖ ≤ ρ < 1 the matrix error is bounded by the scalar error at x = −ρ.
    """
    if radius > PADE_MAX_RADIUS:
        return None
    exact = math.log1p(-radius)
    for m in range(1, 65):
        t, w = _gauss_legendre(m)
        if abs(float(np.sum(w * -radius / (1 - t * radius))) - exact) <= unit_roundoff(np.float64) * radius:
            return t, w
    return None


def _logm(W: np.ndarray) -> np.ndarray:
    if W.size == 0:
        return W.copy()
    # Inverse scaling and squaring (Al-Mohy & Higham 2012); real W without eigenvalues on (-inf, 0]
    # has a real principal log, so an imaginary part is rounding only.
    return np.real(scipy.linalg.logm(W)).astype(np.float64)


def _log_general(W: np.ndarray, tol: float) -> np.ndarray:
    lam = np.linalg.eigvals(W) if W.size else np.zeros(0)
    scale = max(float(np.max(np.abs(lam))) if lam.size else 0.0, _TINY)
    for value in lam[np.argsort(lam.real)]:
        if abs(value) <= tol * scale:
            raise ValueError(f"no principal logarithm: W is singular (an eigenvalue of modulus {abs(value):.3g})")
        if value.real < 0 and abs(value.imag) <= tol * scale:
            raise ValueError(f"no real principal logarithm: eigenvalue {value.real:.6g} on the negative real axis")
    # log(sU) = log(U) + (log s) I for a scalar s > 0 (it commutes with U and moves no eigenvalue across the
    # cut); with s a power of two, U = W/s is exact and logm never squares a huge entry.
    unit = float(binary_scale(W))
    return _logm(W / unit) + math.log(unit) * np.eye(W.shape[0])


#: The structures with a logarithm of their own: the ``kind`` of :func:`principal_log_core`.
_LOGS = {
    "spd": _log_spd,
    "orthogonal": _log_orthogonal,
    "near-identity": _log_near_identity,
    "general": _log_general,
}


def classify_map_core(W: np.ndarray, tol: float) -> str:
    """Unchecked core of :func:`classify_map`: ``W`` a float64 square matrix, ``tol > 0``."""
    if _symmetry_gap(W)[1] <= tol and (W.size == 0 or np.linalg.eigvalsh((W + W.T) / 2)[0] > 0):
        return "spd"
    if _orthogonality_gap(W) <= tol:
        return "orthogonal"
    if W.size == 0 or np.linalg.norm(W - np.eye(W.shape[0]), 2) < 1.0:
        return "near-identity"
    return "general"


def classify_map(W, *, tol: float = DEFAULT_TOL) -> str:
    r"""Say which logarithm :func:`principal_log` would use for ``W`` under ``kind="auto"``.

    The first that applies, in this order:

    * ``"spd"``: :math:`W = W^\top` (relative max-norm gap :math:`\le` ``tol``) and :math:`W \succ 0`;
    * ``"orthogonal"``: :math:`\max|W^\top W - I| \le` ``tol`` (the determinant is checked by the log);
    * ``"near-identity"``: :math:`\lVert W - I\rVert_2 < 1`;
    * ``"general"``: anything else (the log then exists iff no eigenvalue lies on :math:`(-\infty, 0]`).

    Parameters
    ----------
    W : array_like, shape=[d, d]
        A real square matrix (numpy, torch or nested lists), finite.
    tol : float, optional
        Structural tolerance, > 0 (default ``1e-10``; use ~``1e-6`` for float32 weights).

    Returns
    -------
    str
        One of ``"spd"``, ``"orthogonal"``, ``"near-identity"``, ``"general"``.

    References
    ----------
    Lie-Exponential Roadmap, "Branch cuts/logs": restrict to orthogonal maps with positive
    determinant or SPD maps, or use a principal log [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> maps = [np.diag([2.0, 3.0]), np.array([[0.0, -1.0], [1.0, 0.0]]), [[1.0, 0.1], [0, 1]], [[3.0, 1], [0, 3]]]
    >>> [classify_map(W) for W in maps]
    ['spd', 'orthogonal', 'near-identity', 'general']
    """
    return classify_map_core(as_matrix("W", W), check_tol(tol))


def principal_log(W, kind: str = "auto", *, tol: float = DEFAULT_TOL) -> np.ndarray:
    r"""Principal real logarithm :math:`S = \log W` of a learned linear map, where it is well defined.

    :math:`S` is the unique real matrix with :math:`e^{S} = W` and every eigenvalue in the strip
    :math:`|\operatorname{Im}\lambda| < \pi`; it exists iff :math:`W` has no eigenvalue on
    :math:`(-\infty, 0]`.  Each kind computes it the way its structure allows:

    * ``"spd"``: :math:`W = V\Lambda V^\top \succ 0 \Rightarrow S = V \log\Lambda\, V^\top` (symmetric);
    * ``"orthogonal"``: :math:`W \in SO(d)`, real Schur form :math:`W = Z T Z^\top` with rotation blocks
      :math:`R(\theta) = \begin{psmallmatrix}\cos\theta & -\sin\theta\\ \sin\theta & \cos\theta\end{psmallmatrix}`,
      :math:`\log R(\theta) = \theta J` for :math:`|\theta| < \pi`, so :math:`S = Z\,(\oplus_k \theta_k J)\,Z^\top`
      (skew-symmetric);
    * ``"near-identity"``: :math:`\lVert W - I\rVert_2 < 1`, where the Mercator series
      :math:`\log W = \sum_{k \ge 1} (-1)^{k+1}X^k / k`, :math:`X = W - I`, converges; evaluated as
      :math:`\int_0^1 X(I + tX)^{-1}\,dt` by Gauss–Legendre quadrature (the diagonal Padé approximant
      of the series, with the node count from the Kenney–Laub bound) for :math:`\lVert X\rVert_2 \le 0.9`,
      accurate relative to :math:`\lVert X\rVert`; by inverse scaling and squaring
      (:func:`scipy.linalg.logm`) beyond;
    * ``"auto"``: :func:`classify_map` picks one of the above, or ``"general"`` (``logm`` after checking
      that no eigenvalue lies on the closed negative real axis).

    Parameters
    ----------
    W : array_like, shape=[d, d]
        A real square finite matrix: numpy array, torch tensor (detached, moved to the host) or lists.
    kind : {"auto", "orthogonal", "spd", "near-identity"}
        The structure to use.  An explicit kind is checked, not assumed.
    tol : float, optional
        Structural tolerance, > 0: relative symmetry gap, :math:`\max|W^\top W - I|`, and the distance
        at which an eigenvalue counts as :math:`-1` (orthogonal) or as lying on the negative real axis
        (general).  Default ``1e-10``; float32 weights need ~``1e-6``.

    Returns
    -------
    numpy.ndarray, shape=[d, d], float64
        :math:`S` with :math:`e^{S} = W`; exactly symmetric (SPD) or skew-symmetric (orthogonal).

    Raises
    ------
    ValueError
        If ``W`` is not square or not finite, if ``kind`` or ``tol`` is invalid, if ``W`` lacks the
        structure ``kind`` names, or if no real principal logarithm exists: ``det = -1``
        ("no real logarithm: det = -1"), an eigenvalue :math:`-1` of a rotation ("principal log not
        unique"), a singular map, or a negative real eigenvalue ("no real principal logarithm:
        eigenvalue -0.5 on the negative real axis").

    References
    ----------
    Lie-Exponential Roadmap, "Log lens" (:math:`S = \log W` when well defined), "Log-Lens
    Diagnostics" ("a numerically stable Schur-log"), "Branch cuts/logs" [SEED].
    N. J. Higham, *Functions of Matrices*, SIAM 2008, Thm 1.31 (the principal log) and ch. 11;
    A. H. Al-Mohy and N. J. Higham, "Improved inverse scaling and squaring algorithms for the matrix
    logarithm", SIAM J. Sci. Comput. 34 (2012) [CODE: scipy.linalg.logm]; C. Kenney and A. J. Laub, "Padé
    error estimates for the logarithm of a matrix", Int. J. Control 50 (1989) (the quadrature node count).

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> theta = 2.0
    >>> R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    >>> S = principal_log(R)
    >>> bool(np.allclose(S, [[0.0, -theta], [theta, 0.0]], atol=1e-14))  # log R(θ) = θJ, |θ| < π
    True
    >>> W = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> bool(np.allclose(scipy.linalg.expm(principal_log(W, "spd")), W, rtol=1e-13))
    True
    >>> principal_log(np.diag([1.0, -1.0]))
    Traceback (most recent call last):
        ...
    ValueError: no real logarithm: det = -1 (an orthogonal map with det -1 is not in SO(d))
    """
    W = as_matrix("W", W)
    check_choice("kind", kind, KINDS)
    tol = check_tol(tol)
    if kind == "auto":
        kind = classify_map_core(W, tol)
    return principal_log_core(W, kind, tol)


def principal_log_core(W: np.ndarray, kind: str, tol: float) -> np.ndarray:
    """Unchecked core of :func:`principal_log`: ``W`` float64 square, ``tol > 0``, ``kind`` a concrete structure.

    ``kind`` is one of ``"spd"``, ``"orthogonal"``, ``"near-identity"``, ``"general"`` (``"auto"`` resolved by
    :func:`classify_map_core`); the structure is checked by the logarithm itself.
    """
    return _LOGS[kind](W, tol)
