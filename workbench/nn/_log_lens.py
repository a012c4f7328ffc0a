r"""The log lens: principal logarithms of learned linear maps, their spectra, commutators and splits.

The roadmap seed reads a trained network through its generators: for a learned linear map :math:`W` (an
attention projection, an MLP weight, a per-layer mixer) take :math:`S = \log W` where it is well defined;
:math:`S` is the generator whose flow :math:`e^{tS}` reaches :math:`W` at :math:`t = 1`.  Its eigenvalues
split into log-gains (real parts: growth or decay) and rotation frequencies (imaginary parts); the
commutators :math:`[S_\ell, S_m]` measure how much two layers interfere (zero when they could be fused
into one exponential, see the BCH series of :mod:`workbench.lie`); and a generator splits into a compact
(skew), a diagonal and a nilpotent (strictly upper) part, the seed's :math:`(K, H, N)` knobs.

* :func:`principal_log` -- the principal real logarithm, exact by structure for SPD maps (eigenvalues) and
  rotations (real Schur form), by the Mercator series (Gauss–Legendre Padé quadrature) near the identity,
  and a clear ``ValueError`` saying why where no real principal logarithm exists (:math:`\det W = -1`,
  an eigenvalue :math:`-1` or any eigenvalue on the closed negative real axis).
* :func:`classify_map` -- which of those cases a map falls in.
* :func:`generator_spectrum` -- sorted eigenvalues of a generator (or a stack), as log-gains and
  frequencies.
* :func:`commutator_norms`, :func:`adjacent_commutators`, :func:`plot_commutator_heatmap` -- the
  commutator map :math:`H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F` across depth and its heatmap.
* :func:`cartan_split`, :func:`iwasawa_split`, :func:`jordan_chevalley` -- the splits of
  :math:`A \in \mathfrak{gl}(d, \mathbb R)`, with the product forms :math:`e^{K}e^{P}` and
  :math:`e^{K}e^{H}e^{N}` and their BCH-governed distance to :math:`e^{A}`.
* :func:`log_lens` -- all of it for a list of learned maps; a map without a logarithm carries the reason
  instead of crashing the report.

These are diagnostics, not training code: inputs may be numpy arrays or torch tensors (moved to the host
and detached), results are float64 numpy arrays.

References
----------
lie-exponential-roadmap (seed), "Log lens", "Log-Lens Diagnostics", "Branch cuts/logs" (restrict
:math:`\log W` to orthogonal maps with positive determinant or SPD maps, or use a Schur principal log),
and the generator-field section (:math:`\exp(K)\exp(H)\exp(N)`; "eigenvalues are log-gains; K shows
conserved modes; N shows causal shears"; the Cartan split as control knobs) [SEED].  The
(K, H, N) split formulas were lost in extraction and are reconstructed here as the Lie-algebra Iwasawa
decomposition :math:`\mathfrak{gl}(d) = \mathfrak{so}(d) \oplus \mathfrak a \oplus \mathfrak n` [RECON].
N. J. Higham, *Functions of Matrices*, SIAM 2008, ch. 11 (principal logarithm: exists and is unique and
real for real :math:`W` with no eigenvalue on :math:`(-\infty, 0]`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Integral, Rational

import numpy as np
import scipy.linalg

from workbench.backend import to_numpy
from workbench.validation import as_array, check_choice, check_in_range, check_matching, check_square

__all__ = [
    "KINDS",
    "CartanSplit",
    "GeneratorSpectrum",
    "IwasawaSplit",
    "JordanChevalleySplit",
    "LensEntry",
    "LogLensReport",
    "adjacent_commutators",
    "cartan_split",
    "classify_map",
    "commutator_norms",
    "generator_spectrum",
    "iwasawa_split",
    "jordan_chevalley",
    "log_lens",
    "plot_commutator_heatmap",
    "principal_log",
]

#: The ``kind`` values accepted by :func:`principal_log` and :func:`log_lens`.
KINDS = ("auto", "orthogonal", "spd", "near-identity")

#: Default structural tolerance (relative, max-norm): symmetry, orthogonality, eigenvalues at -1 or 0.
DEFAULT_TOL = 1e-10

#: Largest matrix handed to the exact (sympy) Jordan–Chevalley split.
JORDAN_MAX_SIZE = 6

_TINY = np.finfo(np.float64).tiny
_EPS = np.finfo(np.float64).eps


# ---- validation ------------------------------------------------------------------------------


def _matrix(name: str, W) -> np.ndarray:
    """Return one finite real square matrix as a private float64 numpy array."""
    if isinstance(W, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got {type(W).__name__}")
    W = as_array(name, W)
    check_square(name, W)
    if len(W.shape) != 2:
        raise ValueError(f"{name} must be a single square matrix (2-dimensional), got shape {tuple(W.shape)}")
    return np.array(to_numpy(W), dtype=np.float64)


def _stack(name: str, generators) -> np.ndarray:
    """Return a list or stack of equal-size square matrices as a float64 array ``shape=[L, d, d]``."""
    if isinstance(generators, (list, tuple)):
        if not generators:
            raise ValueError(f"{name} must hold at least one matrix, got 0")
        mats = [_matrix(f"{name}[{i}]", g) for i, g in enumerate(generators)]
        for i, m in enumerate(mats[1:], start=1):
            check_matching(f"{name}[0]", mats[0].shape[0], f"{name}[{i}]", m.shape[0])
        return np.stack(mats)
    arr = as_array(name, generators, ndim=3)
    check_square(name, arr)
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one matrix, got 0")
    return np.array(to_numpy(arr), dtype=np.float64)


def _tol(tol) -> float:
    return check_in_range("tol", tol, 0.0, low_inclusive=False)


# ---- principal logarithm ---------------------------------------------------------------------


def _symmetry_gap(W: np.ndarray) -> tuple[float, float]:
    gap = float(np.max(np.abs(W - W.T))) if W.size else 0.0
    scale = float(np.max(np.abs(W))) if W.size else 0.0
    return gap, gap / max(scale, _TINY)


def _orthogonality_gap(W: np.ndarray) -> float:
    return float(np.max(np.abs(W.T @ W - np.eye(W.shape[0])))) if W.size else 0.0


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
                raise ValueError(_NOT_UNIQUE)
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
        if abs(float(np.sum(w * -radius / (1 - t * radius))) - exact) <= 0.5 * _EPS * radius:
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
    return _logm(W)


_LOGS = {
    "spd": _log_spd,
    "orthogonal": _log_orthogonal,
    "near-identity": _log_near_identity,
    "general": _log_general,
}


def _classify(W: np.ndarray, tol: float) -> str:
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
    lie-exponential-roadmap (seed), "Branch cuts/logs": restrict to orthogonal maps with positive
    determinant or SPD maps, or use a principal log [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> maps = [np.diag([2.0, 3.0]), np.array([[0.0, -1.0], [1.0, 0.0]]), [[1.0, 0.1], [0, 1]], [[3.0, 1], [0, 3]]]
    >>> [classify_map(W) for W in maps]
    ['spd', 'orthogonal', 'near-identity', 'general']
    """
    return _classify(_matrix("W", W), _tol(tol))


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
    lie-exponential-roadmap (seed), "Log lens" (:math:`S = \log W` when well defined), "Log-Lens
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
    W = _matrix("W", W)
    check_choice("kind", kind, KINDS)
    tol = _tol(tol)
    if kind == "auto":
        kind = _classify(W, tol)
    return _LOGS[kind](W, tol)


# ---- spectra ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class GeneratorSpectrum:
    r"""Eigenvalues of a generator (or a stack), split into log-gains and rotation frequencies.

    Attributes
    ----------
    eigenvalues : numpy.ndarray, shape=[..., d], complex
        Sorted by decreasing real part, then by decreasing imaginary part.
    log_gains : numpy.ndarray, shape=[..., d]
        :math:`\operatorname{Re}\lambda`: growth (> 0) or decay (< 0) rates of :math:`e^{tS}`.
    frequencies : numpy.ndarray, shape=[..., d]
        :math:`\operatorname{Im}\lambda`: rotation frequencies of :math:`e^{tS}`.

    References
    ----------
    lie-exponential-roadmap (seed), "eigenvalues are log-gains" [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> spectrum = generator_spectrum(np.diag([-1.0, 2.0]))  # a pure scaling: gains only
    >>> spectrum.log_gains.tolist(), float(spectrum.spectral_abscissa), float(spectrum.max_frequency)
    ([2.0, -1.0], 2.0, 0.0)
    """

    eigenvalues: np.ndarray
    log_gains: np.ndarray
    frequencies: np.ndarray

    @property
    def spectral_abscissa(self) -> np.ndarray:
        r""":math:`\max_k \operatorname{Re}\lambda_k`: :math:`\lVert e^{tS}\rVert` grows like :math:`e^{t\alpha}`."""
        return self.log_gains[..., 0]

    @property
    def max_frequency(self) -> np.ndarray:
        r""":math:`\max_k |\operatorname{Im}\lambda_k|`, the fastest rotation."""
        return np.max(np.abs(self.frequencies), axis=-1) if self.frequencies.shape[-1] else self.log_gains[..., :0]


def generator_spectrum(S) -> GeneratorSpectrum:
    r"""Sorted eigenvalues of a generator :math:`S`, as log-gains and rotation frequencies.

    .. math::

        S v_k = \lambda_k v_k, \qquad \lambda_k = \underbrace{\alpha_k}_{\text{log-gain}}
        + i\,\underbrace{\omega_k}_{\text{frequency}}, \qquad e^{tS} v_k = e^{t\alpha_k} e^{it\omega_k} v_k.

    A symmetric :math:`S` (SPD map) has only log-gains, a skew one (rotation) only frequencies.  Parts of
    size below :math:`8 d\,\varepsilon\,\lVert S\rVert_F` are rounding and are set to zero, so a skew
    generator reports exactly zero log-gains and the sort is not driven by noise.

    Parameters
    ----------
    S : array_like, shape=[..., d, d]
        A real generator or a stack (e.g. one per layer), numpy or torch, finite.

    Returns
    -------
    GeneratorSpectrum

    References
    ----------
    lie-exponential-roadmap (seed), "Log lens" ("eigenstructures of S reveal dominant motions"), SPD
    maps ("eigenvalues are log-gains"), "Log-Lens Diagnostics" (track the spectrum of :math:`S_\ell`) [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> spectrum = generator_spectrum(np.array([[0.5, -2.0], [2.0, 0.5]]))  # eigenvalues 0.5 ± 2i
    >>> spectrum.log_gains.tolist(), spectrum.frequencies.tolist()
    ([0.5, 0.5], [2.0, -2.0])
    """
    S = as_array("S", S, min_ndim=2)
    check_square("S", S)
    S = np.array(to_numpy(S), dtype=np.float64)
    d = S.shape[-1]
    lam = np.linalg.eigvals(S) if S.size else np.zeros(S.shape[:-1], dtype=complex)
    snap = 8 * d * _EPS * np.linalg.norm(S, axis=(-2, -1))[..., None] if S.size else 0.0
    real = np.where(np.abs(lam.real) <= snap, 0.0, lam.real)
    imag = np.where(np.abs(lam.imag) <= snap, 0.0, lam.imag)
    lam = -np.sort(-(real + 1j * imag), axis=-1)
    return GeneratorSpectrum(lam, lam.real.copy() + 0.0, lam.imag.copy() + 0.0)


# ---- commutators -----------------------------------------------------------------------------


def _commutator(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a @ b - b @ a


def commutator_norms(generators, *, normalize: bool = False) -> np.ndarray:
    r"""The commutator map :math:`H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F` of a stack of generators.

    .. math::

        H_{\ell m} = \lVert S_\ell S_m - S_m S_\ell\rVert_F, \qquad
        \tilde H_{\ell m} = \frac{H_{\ell m}}{\lVert S_\ell\rVert_F\,\lVert S_m\rVert_F} \in [0, \sqrt 2]

    (normalised, with :math:`0/0 := 0`; the bound :math:`\sqrt2` is the Böttcher–Wenzel inequality).
    :math:`H` is symmetric with zero diagonal; :math:`H_{\ell m} = 0` iff the generators commute, which implies
    :math:`e^{S_\ell}e^{S_m} = e^{S_\ell + S_m}` (the BCH series stops at degree 1, so the pair can be fused);
    the converse can fail when eigenvalues differ by nonzero multiples of :math:`2\pi i`.

    Parameters
    ----------
    generators : sequence of array_like or array, shape=[L, d, d]
        The generators :math:`S_\ell` (equal sizes), numpy or torch.
    normalize : bool
        Divide by :math:`\lVert S_\ell\rVert_F\lVert S_m\rVert_F` (scale-free interference).

    Returns
    -------
    numpy.ndarray, shape=[L, L], float64

    References
    ----------
    lie-exponential-roadmap (seed), "Log lens" (commutators quantify inter-layer interference),
    "Log-Lens Diagnostics" (track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert`) [SEED].
    A. Böttcher and D. Wenzel, "The Frobenius norm and the commutator", Linear Algebra Appl. 429 (2008).

    Examples
    --------
    >>> import numpy as np
    >>> X, Y = np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> H = commutator_norms([X, Y, 2 * X])  # [X, Y] = diag(1, -1), ‖·‖_F = √2; [X, 2X] = 0
    >>> bool(np.allclose(H, np.sqrt(2) * np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]])))
    True
    """
    stack = _stack("generators", generators)
    count = stack.shape[0]
    norms = np.linalg.norm(stack, axis=(-2, -1))
    H = np.zeros((count, count))
    for i in range(count):
        for j in range(i + 1, count):
            H[i, j] = H[j, i] = _commutator_norm(stack, norms, i, j, normalize)
    return H


def _commutator_norm(stack: np.ndarray, norms: np.ndarray, i: int, j: int, normalize: bool) -> float:
    value = float(np.linalg.norm(_commutator(stack[i], stack[j])))
    if normalize:
        denominator = float(norms[i] * norms[j])
        value = value / denominator if denominator > 0 else 0.0
    return value


def adjacent_commutators(generators, *, normalize: bool = False) -> np.ndarray:
    r"""Commutator norms of neighbouring generators along depth, :math:`\lVert[S_\ell, S_{\ell+1}]\rVert_F`.

    .. math::

        c_\ell = \lVert S_\ell S_{\ell+1} - S_{\ell+1} S_\ell\rVert_F, \qquad \ell = 0, \dots, L-2,

    divided by :math:`\lVert S_\ell\rVert_F\lVert S_{\ell+1}\rVert_F` when ``normalize`` (:math:`0/0 := 0`).
    Spikes mark where stacked layers stop being fusable into one exponential.

    Parameters
    ----------
    generators : sequence of array_like or array, shape=[L, d, d]
        The generators, equal sizes.
    normalize : bool
        Scale-free version (see :func:`commutator_norms`).

    Returns
    -------
    numpy.ndarray, shape=[L - 1], float64
        The superdiagonal of :func:`commutator_norms`.

    References
    ----------
    lie-exponential-roadmap (seed), "Log-Lens Diagnostics" (spikes in commutator norms drive pruning or
    fusion) [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> X, Y = np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> bool(np.allclose(adjacent_commutators([X, 2 * X, Y]), [0.0, 2 * np.sqrt(2)]))
    True
    """
    stack = _stack("generators", generators)
    norms = np.linalg.norm(stack, axis=(-2, -1))
    return np.array([_commutator_norm(stack, norms, i, i + 1, normalize) for i in range(stack.shape[0] - 1)])


def plot_commutator_heatmap(H, ax=None, *, labels: Sequence[str] | None = None, title: str | None = None):
    r"""Draw a commutator map :math:`H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F` as a heatmap with a colorbar.

    Parameters
    ----------
    H : array_like, shape=[L, L]
        Nonnegative entries, e.g. from :func:`commutator_norms`; NaN entries (maps without a logarithm,
        see :func:`log_lens`) are drawn blank.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when omitted.
    labels : sequence of str, optional
        One tick label per layer (default ``0, 1, ...``).
    title : str, optional
        Axes title (default: the formula).

    Returns
    -------
    matplotlib.axes.Axes
        With labelled axes and a colorbar.

    References
    ----------
    lie-exponential-roadmap (seed), "Log-lens dashboards correlating commutator heatmaps with classic
    interpretability circuits" [SEED].

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> ax = plot_commutator_heatmap(np.array([[0.0, 1.0], [1.0, 0.0]]), labels=["L0", "L1"])
    >>> ax.get_xlabel(), len(ax.figure.axes)  # the heatmap and its colorbar
    ('layer m', 2)
    >>> plt.close(ax.figure)
    """
    H = np.asarray(to_numpy(H), dtype=np.float64) if not isinstance(H, (list, tuple)) else np.asarray(H, float)
    if H.ndim != 2:
        raise ValueError(f"H must be a 2-dimensional array, got shape {H.shape}")
    check_square("H", H)
    finite = H[np.isfinite(H)]
    if np.isinf(H).any():
        raise ValueError("H must hold finite values or NaN (missing), got an infinite entry")
    if finite.size and finite.min() < 0:
        raise ValueError(f"H must be entrywise nonnegative, got minimum {finite.min():.6g}")
    count = H.shape[0]
    if labels is not None:
        labels = [str(label) for label in labels]
        check_matching("labels", len(labels), "H", count)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.8))
    image = ax.imshow(np.ma.masked_invalid(H), cmap="magma", interpolation="nearest")
    colorbar = ax.figure.colorbar(image, ax=ax)
    colorbar.set_label(r"$\|[S_\ell, S_m]\|_F$")
    ax.set_xlabel("layer m")
    ax.set_ylabel("layer ℓ")
    ticks = np.arange(count)
    ax.set_xticks(ticks, labels if labels is not None else [str(t) for t in ticks])
    ax.set_yticks(ticks, labels if labels is not None else [str(t) for t in ticks])
    ax.set_title(title if title is not None else r"commutator map $\|[S_\ell, S_m]\|_F$")
    return ax


# ---- splits of a generator -------------------------------------------------------------------


@functools.cache
def _bch_degree2(factors: int):
    from workbench.lie import bch_many

    return bch_many(factors, 2).component(2)


class _ProductForm:
    """Shared product-form diagnostics of a split ``A = X_1 + ... + X_k``."""

    _names: tuple[str, ...] = ()

    @property
    def parts(self) -> tuple[np.ndarray, ...]:
        """The parts in product order."""
        return tuple(getattr(self, name) for name in self._names)

    @property
    def norms(self) -> dict[str, float]:
        """Frobenius norm of each part, by name."""
        return {name: float(np.linalg.norm(getattr(self, name))) for name in self._names}

    @property
    def matrix(self) -> np.ndarray:
        """The sum of the parts, :math:`A`."""
        return sum(self.parts[1:], self.parts[0].copy())

    def product(self) -> np.ndarray:
        r"""The product form :math:`e^{X_1} e^{X_2} \cdots` of the parts, in order."""
        out = np.eye(self.parts[0].shape[0])
        for part in self.parts:
            out = out @ scipy.linalg.expm(part)
        return out

    def product_error(self) -> float:
        r"""Absolute Frobenius error :math:`\lVert e^{X_1}\cdots e^{X_k} - e^{A}\rVert_F` of the product form."""
        return float(np.linalg.norm(self.product() - scipy.linalg.expm(self.matrix)))

    def bch_leading(self) -> float:
        r"""Norm of the leading BCH term, :math:`\lVert\tfrac12\sum_{i<j}[X_i, X_j]\rVert_F`.

        :math:`\log(e^{X_1}\cdots e^{X_k}) = A + \tfrac12\sum_{i<j}[X_i, X_j] + O(\lVert X\rVert^3)`, so for
        :math:`A \to \varepsilon A` the product error is
        :math:`\varepsilon^2 \lVert\tfrac12\sum_{i<j}[X_i, X_j]\rVert_F + O(\varepsilon^3)` (the degree-2
        part of :func:`workbench.lie.bch_many`).
        """
        return float(np.linalg.norm(_bch_degree2(len(self._names)).evaluate(*self.parts)))


@dataclass(frozen=True, eq=False)
class CartanSplit(_ProductForm):
    r"""Cartan split :math:`A = K + P` of a generator: skew (compact) plus symmetric part.

    Attributes
    ----------
    K : numpy.ndarray
        :math:`(A - A^\top)/2 \in \mathfrak{so}(d)`.
    P : numpy.ndarray
        :math:`(A + A^\top)/2`, symmetric.

    Methods ``product()`` (:math:`e^Ke^P`), ``product_error()`` (:math:`\lVert e^Ke^P - e^A\rVert_F`) and
    ``bch_leading()`` (:math:`\tfrac12\lVert[K, P]\rVert_F`); properties ``parts``, ``norms``, ``matrix``.

    References
    ----------
    lie-exponential-roadmap (seed), the Cartan split [SEED]; see :func:`cartan_split`.

    Examples
    --------
    >>> import numpy as np
    >>> split = cartan_split(1e-3 * np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> round(split.product_error() / split.bch_leading(), 2)  # error ≈ ½‖[K, P]‖ for a small generator
    1.0
    """

    K: np.ndarray
    P: np.ndarray
    _names = ("K", "P")


@dataclass(frozen=True, eq=False)
class IwasawaSplit(_ProductForm):
    r"""Iwasawa split :math:`A = K + H + N`: skew (compact), diagonal and strictly upper (nilpotent) parts.

    Attributes
    ----------
    K : numpy.ndarray
        :math:`L - L^\top` with :math:`L` the strictly lower part of :math:`A`; in :math:`\mathfrak{so}(d)`.
    H : numpy.ndarray
        :math:`\operatorname{diag}(A)`, in the diagonal algebra :math:`\mathfrak a`.
    N : numpy.ndarray
        :math:`U + L^\top` with :math:`U` the strictly upper part of :math:`A`; in :math:`\mathfrak n`.

    Methods ``product()`` (:math:`e^Ke^He^N`), ``product_error()`` and ``bch_leading()``
    (:math:`\tfrac12\lVert[K,H] + [K,N] + [H,N]\rVert_F`); properties ``parts``, ``norms``, ``matrix``.

    References
    ----------
    lie-exponential-roadmap (seed), :math:`\exp(K)\exp(H)\exp(N)` [SEED]; see :func:`iwasawa_split` [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> split = iwasawa_split(np.diag([1.0, 2.0]))  # K = N = 0: the parts commute, the product is exact
    >>> split.norms, split.product_error() < 1e-15
    ({'K': 0.0, 'H': 2.23606797749979, 'N': 0.0}, True)
    """

    K: np.ndarray
    H: np.ndarray
    N: np.ndarray
    _names = ("K", "H", "N")


def cartan_split(A) -> CartanSplit:
    r"""Cartan split of :math:`A \in \mathfrak{gl}(d, \mathbb R)` into its compact and symmetric parts.

    .. math::

        A = K + P, \qquad K = \tfrac12(A - A^\top) \in \mathfrak{so}(d), \qquad P = \tfrac12(A + A^\top),

    orthogonal in the trace form, :math:`\operatorname{tr}(K^\top P) = 0`, so
    :math:`\lVert A\rVert_F^2 = \lVert K\rVert_F^2 + \lVert P\rVert_F^2`.  :math:`e^{K}` is a rotation,
    :math:`e^{P}` SPD; :meth:`CartanSplit.product_error` measures :math:`\lVert e^Ke^P - e^A\rVert_F`,
    governed by :math:`\tfrac12\lVert[K, P]\rVert_F` (:meth:`CartanSplit.bch_leading`).

    Parameters
    ----------
    A : array_like, shape=[d, d]
        A real square generator, numpy or torch.

    Returns
    -------
    CartanSplit

    References
    ----------
    lie-exponential-roadmap (seed), the Cartan split as control knobs; orthogonal/SPD transports
    :math:`\exp(A_\ell)`, :math:`\exp(S_\ell)` [SEED]; the Cartan decomposition
    :math:`\mathfrak{gl}(d) = \mathfrak{so}(d) \oplus \mathfrak p` (A. W. Knapp, *Lie Groups Beyond an
    Introduction*, VI.2).

    Examples
    --------
    >>> import numpy as np
    >>> split = cartan_split(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> split.K.tolist(), split.P.tolist()
    ([[0.0, 1.0], [-1.0, 0.0]], [[1.0, 1.0], [1.0, 3.0]])
    >>> float(np.trace(split.K.T @ split.P))  # orthogonal in the trace form
    0.0
    """
    A = _matrix("A", A)
    return CartanSplit(K=(A - A.T) / 2, P=(A + A.T) / 2)


def iwasawa_split(A) -> IwasawaSplit:
    r"""Iwasawa split of :math:`A \in \mathfrak{gl}(d, \mathbb R)`: compact + diagonal + nilpotent.

    .. math::

        A = K + H + N, \quad A = L + D + U\ (\text{strictly lower, diagonal, strictly upper}), \quad
        K = L - L^\top,\ H = D,\ N = U + L^\top.

    This is the vector-space direct sum :math:`\mathfrak{gl}(d) = \mathfrak{so}(d) \oplus \mathfrak a
    \oplus \mathfrak n` (skew, diagonal, strictly upper triangular), so the split is unique: the strictly
    lower part of :math:`A` can only come from :math:`K`, which fixes :math:`K`, then :math:`H` and
    :math:`N`.  It is the seed's compact/diagonal/nilpotent :math:`(K, H, N)` parameterisation; the
    product form :math:`e^{K}e^{H}e^{N}` (rotation · positive diagonal · unipotent upper) differs from
    :math:`e^{A}` by :math:`\tfrac12\lVert[K,H] + [K,N] + [H,N]\rVert_F` at leading order
    (:meth:`IwasawaSplit.bch_leading`, :meth:`IwasawaSplit.product_error`).

    Parameters
    ----------
    A : array_like, shape=[d, d]
        A real square generator, numpy or torch.

    Returns
    -------
    IwasawaSplit

    References
    ----------
    lie-exponential-roadmap (seed), "exponentiate in fixed order :math:`\exp(K)\exp(H)\exp(N)`"; "K shows
    conserved modes; N shows causal shears" [SEED]; the split formulas themselves were lost in extraction
    and are reconstructed as the Lie-algebra Iwasawa decomposition [RECON] (Knapp, *Lie Groups Beyond an
    Introduction*, VI.4; the group version is the QR decomposition).

    Examples
    --------
    >>> import numpy as np
    >>> split = iwasawa_split(np.array([[1.0, 2.0], [5.0, 3.0]]))
    >>> split.K.tolist(), split.H.tolist(), split.N.tolist()
    ([[0.0, -5.0], [5.0, 0.0]], [[1.0, 0.0], [0.0, 3.0]], [[0.0, 7.0], [0.0, 0.0]])
    """
    A = _matrix("A", A)
    lower = np.tril(A, -1)
    return IwasawaSplit(K=lower - lower.T, H=np.diag(np.diag(A)), N=np.triu(A, 1) + lower.T)


@dataclass(frozen=True, eq=False)
class JordanChevalleySplit:
    r"""Exact Jordan–Chevalley split :math:`A = D + N` (sympy matrices).

    Attributes
    ----------
    D : sympy.Matrix
        Semisimple (diagonalisable over :math:`\mathbb C`) part.
    N : sympy.Matrix
        Nilpotent part, :math:`N^d = 0`, commuting with :math:`D`.

    References
    ----------
    Humphreys, *Introduction to Lie Algebras and Representation Theory*, §4.2; see :func:`jordan_chevalley`.

    Examples
    --------
    >>> split = jordan_chevalley([[1, 1], [0, 1]])
    >>> (split.D * split.N - split.N * split.D).is_zero_matrix, (split.N**2).is_zero_matrix
    (True, True)
    """

    D: object
    N: object


def _exact_entry(name: str, value):
    import sympy as sp

    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, (Integral, np.integer)) and not isinstance(value, bool):
        return sp.Integer(int(value))
    if isinstance(value, (Fraction, Rational)):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, (float, np.floating)) and math.isfinite(value):
        return sp.Rational(repr(float(value)))  # the shortest decimal that round-trips: 0.1 -> 1/10
    raise TypeError(f"{name} must have integer, rational or finite float entries, got {type(value).__name__}")


def jordan_chevalley(A) -> JordanChevalleySplit:
    r"""Jordan–Chevalley split :math:`A = D + N`, exactly, for small matrices (sympy).

    .. math::

        A = D + N, \qquad D \text{ semisimple}, \quad N^d = 0, \quad [D, N] = 0,

    computed from the Jordan form :math:`A = P J P^{-1}` as :math:`N = P (J - \operatorname{diag} J)
    P^{-1}`, :math:`D = A - N`.  Done exactly because the numeric split is ill-conditioned (a
    perturbation of size :math:`\delta` turns a Jordan block into distinct eigenvalues, :math:`N = 0`);
    the log lens therefore uses the Cartan and Iwasawa splits for floating-point generators and this one
    for exact teaching examples.  Float entries are read as their shortest round-trip decimal
    (``0.1`` :math:`\to 1/10`).

    Parameters
    ----------
    A : sympy.Matrix or array_like, shape=[d, d]
        Integer, rational (``fractions.Fraction``, sympy) or float entries; at most 6×6.

    Returns
    -------
    JordanChevalleySplit

    References
    ----------
    lie-exponential-roadmap (seed), the compact/diagonal/nilpotent knobs [SEED]; J. E. Humphreys,
    *Introduction to Lie Algebras and Representation Theory*, §4.2 (Jordan–Chevalley decomposition).

    Examples
    --------
    >>> split = jordan_chevalley([[2, 1], [0, 2]])
    >>> split.D.tolist(), split.N.tolist()
    ([[2, 0], [0, 2]], [[0, 1], [0, 0]])
    """
    import sympy as sp

    if isinstance(A, sp.MatrixBase):
        M = sp.Matrix(A)
    else:
        if hasattr(A, "detach"):
            A = to_numpy(A)
        rows = A.tolist() if isinstance(A, np.ndarray) else A
        try:
            M = sp.Matrix([[_exact_entry("A", v) for v in row] for row in rows])
        except TypeError as exc:
            if "entries" in str(exc):
                raise
            raise TypeError(f"A must be a square matrix of numbers, got {type(A).__name__}") from exc
        except ValueError as exc:  # sympy: rows of unequal length
            raise ValueError("A must be a square matrix of numbers, got rows of unequal length") from exc
    if M.rows != M.cols:
        raise ValueError(f"A must be a square matrix (shape [..., n, n]), got shape ({M.rows}, {M.cols})")
    if M.rows > JORDAN_MAX_SIZE:
        raise ValueError(
            f"A must be at most {JORDAN_MAX_SIZE}x{JORDAN_MAX_SIZE} for the exact Jordan–Chevalley split, "
            f"got {M.rows}x{M.cols}"
        )
    P, J = M.jordan_form()
    N = (P * (J - sp.diag(*[J[i, i] for i in range(J.rows)])) * P.inv()).applyfunc(sp.simplify)
    return JordanChevalleySplit(D=(M - N).applyfunc(sp.simplify), N=N)


# ---- the report ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LensEntry:
    r"""One map of a :class:`LogLensReport`.

    Attributes
    ----------
    index : int
        Position in the input list.
    shape : tuple of int
        Shape of the map as given.
    kind : str or None
        The logarithm used (see :func:`classify_map`), or ``None`` when there is none.
    reason : str or None
        Why no principal logarithm was computed (the ``ValueError``/``TypeError`` message), else ``None``.
    log : numpy.ndarray or None
        :math:`S = \log W`.
    log_norm, spectral_abscissa, max_frequency : float
        :math:`\lVert S\rVert_F`, :math:`\max\operatorname{Re}\lambda(S)`, :math:`\max|\operatorname{Im}
        \lambda(S)|` (NaN without a log).
    cartan, iwasawa : dict
        Frobenius norms of the parts of :math:`S` (``{"K", "P"}``, ``{"K", "H", "N"}``); empty without a log.

    References
    ----------
    lie-exponential-roadmap (seed), "Log-Lens Diagnostics" [SEED]; see :func:`log_lens`.

    Examples
    --------
    >>> import numpy as np
    >>> entry = log_lens([np.diag([np.e, 1.0])]).entries[0]  # log = diag(1, 0)
    >>> entry.kind, entry.log_norm, entry.spectral_abscissa, entry.row()["iwasawa_H"]
    ('spd', 1.0, 1.0, 1.0)
    """

    index: int
    shape: tuple[int, ...]
    kind: str | None
    reason: str | None
    log: np.ndarray | None = None
    log_norm: float = math.nan
    spectral_abscissa: float = math.nan
    max_frequency: float = math.nan
    cartan: dict = field(default_factory=dict)
    iwasawa: dict = field(default_factory=dict)

    def row(self) -> dict:
        """JSON-ready summary (no matrices)."""
        return {
            "index": self.index,
            "shape": list(self.shape),
            "kind": self.kind,
            "reason": self.reason,
            "log_norm": self.log_norm,
            "spectral_abscissa": self.spectral_abscissa,
            "max_frequency": self.max_frequency,
            **{f"cartan_{k}": v for k, v in self.cartan.items()},
            **{f"iwasawa_{k}": v for k, v in self.iwasawa.items()},
        }


@dataclass(frozen=True, eq=False)
class LogLensReport:
    r"""The log lens of a list of learned maps.

    Attributes
    ----------
    entries : tuple of LensEntry
        One per map, in order.
    adjacent : numpy.ndarray, shape=[L - 1]
        :math:`\lVert[S_\ell, S_{\ell+1}]\rVert_F`; NaN where a log is missing or the sizes differ.
    commutators : numpy.ndarray, shape=[L, L]
        :math:`\lVert[S_\ell, S_m]\rVert_F` with the same NaN convention (zero diagonal where a log exists);
        ready for :func:`plot_commutator_heatmap`.

    References
    ----------
    lie-exponential-roadmap (seed), "Log-lens dashboards" [SEED]; see :func:`log_lens`.

    Examples
    --------
    >>> import numpy as np
    >>> report = log_lens([np.eye(2), np.array([[0.0, 0.0], [1.0, 1.0]])])  # the second map is singular
    >>> report.rows()[1]["reason"]
    'no principal logarithm: W is singular (an eigenvalue of modulus 0)'
    >>> report.logs[1] is None, bool(np.isnan(report.adjacent[0]))
    (True, True)
    """

    entries: tuple[LensEntry, ...]
    adjacent: np.ndarray
    commutators: np.ndarray

    @property
    def logs(self) -> list[np.ndarray | None]:
        """The logarithms, ``None`` where there is none."""
        return [entry.log for entry in self.entries]

    def rows(self) -> list[dict]:
        """JSON-ready rows, one per map."""
        return [entry.row() for entry in self.entries]


def _entry(index: int, W, kind: str, tol: float) -> LensEntry:
    try:
        shape = tuple(int(s) for s in W.shape) if hasattr(W, "shape") else tuple(np.shape(W))
    except ValueError:  # a ragged list
        shape = ()
    try:
        matrix = _matrix(f"weights[{index}]", W)
        used = _classify(matrix, tol) if kind == "auto" else kind
        S = _LOGS[used](matrix, tol)
    except (ValueError, TypeError) as exc:
        return LensEntry(index, shape, None, str(exc))
    spectrum = generator_spectrum(S)
    lam_ok = S.size > 0
    return LensEntry(
        index,
        shape,
        used,
        None,
        S,
        float(np.linalg.norm(S)),
        float(spectrum.spectral_abscissa) if lam_ok else math.nan,
        float(spectrum.max_frequency) if lam_ok else math.nan,
        cartan_split(S).norms,
        iwasawa_split(S).norms,
    )


def log_lens(weights, *, kind: str = "auto", tol: float = DEFAULT_TOL) -> LogLensReport:
    r"""Read a list of learned linear maps through their principal logarithms.

    For each map :math:`W_\ell`: the logarithm :math:`S_\ell = \log W_\ell` (:func:`principal_log`) or the
    reason there is none, :math:`\lVert S_\ell\rVert_F`, the spectral abscissa and top frequency of
    :math:`S_\ell` (:func:`generator_spectrum`), and the norms of its Cartan and Iwasawa parts; across the
    maps, the commutator map and its superdiagonal

    .. math::

        H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F, \qquad c_\ell = H_{\ell,\ell+1}.

    Never raises on an individual map (non-square, non-finite, without a real principal log): that entry
    carries the message and its commutators are NaN.

    Parameters
    ----------
    weights : sequence of array_like, or array shape=[L, d, d]
        Square maps (numpy, torch or lists; sizes may differ).
    kind : {"auto", "orthogonal", "spd", "near-identity"}
        Structure to use for every map (``"auto"`` classifies each one).
    tol : float, optional
        Structural tolerance, > 0 (see :func:`principal_log`).

    Returns
    -------
    LogLensReport

    Raises
    ------
    TypeError
        If ``weights`` is not a sequence or a stack.
    ValueError
        If ``weights`` is empty, or ``kind`` / ``tol`` is invalid.

    References
    ----------
    lie-exponential-roadmap (seed), "Log-Lens Diagnostics": periodically compute :math:`S_\ell = \log W_\ell`,
    track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert` and the spectrum of :math:`S_\ell`; "Log-lens dashboards"
    [SEED].

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> rotation = scipy.linalg.expm(np.array([[0.0, -0.3], [0.3, 0.0]]))
    >>> report = log_lens([rotation, np.diag([2.0, 0.5]), -np.eye(2) * 0.5])
    >>> [entry.kind for entry in report.entries]
    ['orthogonal', 'spd', None]
    >>> report.entries[2].reason
    'no real principal logarithm: eigenvalue -0.5 on the negative real axis'
    >>> # ‖[0.3 J, diag(log 2, -log 2)]‖_F = 0.6 √2 log 2 by hand; no log for the third map
    >>> c = report.adjacent
    >>> bool(np.isclose(c[0], 0.6 * np.sqrt(2) * np.log(2), rtol=1e-13)), bool(np.isnan(c[1]))
    (True, True)
    """
    check_choice("kind", kind, KINDS)
    tol = _tol(tol)
    if isinstance(weights, (list, tuple)):
        items = list(weights)
    elif hasattr(weights, "shape") and len(weights.shape) == 3:
        items = [weights[i] for i in range(int(weights.shape[0]))]
    else:
        raise TypeError(
            f"weights must be a sequence of square matrices or a stack shape=[L, d, d], got {type(weights).__name__}"
        )
    if not items:
        raise ValueError("weights must hold at least one matrix, got 0")
    entries = tuple(_entry(i, W, kind, tol) for i, W in enumerate(items))
    count = len(entries)
    H = np.full((count, count), np.nan)
    for i, a in enumerate(entries):
        for j in range(i, count):
            b = entries[j]
            if a.log is not None and b.log is not None and a.log.shape == b.log.shape:
                H[i, j] = H[j, i] = 0.0 if i == j else float(np.linalg.norm(_commutator(a.log, b.log)))
    adjacent = np.array([H[i, i + 1] for i in range(count - 1)])
    return LogLensReport(entries, adjacent, H)
