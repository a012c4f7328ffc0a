r"""Splits of a generator :math:`A \in \mathfrak{gl}(d, \mathbb R)`: Cartan, Iwasawa and Jordan–Chevalley.

The Cartan split :math:`A = K + P` (skew + symmetric) and the Iwasawa split :math:`A = K + H + N` (skew +
diagonal + strictly upper) come with their product forms :math:`e^{K}e^{P}`, :math:`e^{K}e^{H}e^{N}` and the
BCH-governed distance of those to :math:`e^{A}`; the Jordan–Chevalley split :math:`A = D + N` is exact (sympy)
for small teaching examples.

cartan_split      -- K = (A - A^T)/2, P = (A + A^T)/2, with product form and BCH leading term
iwasawa_split     -- K + H + N from the strictly lower, diagonal and strictly upper parts of A
jordan_chevalley  -- exact semisimple + nilpotent parts, commuting, for matrices up to 6x6
CartanSplit, IwasawaSplit, JordanChevalleySplit -- the results

References
----------
Lie-Exponential Roadmap, the generator-field section (:math:`\exp(K)\exp(H)\exp(N)`; "K shows
conserved modes; N shows causal shears"; the Cartan split as control knobs) [SEED].  The (K, H, N) split
formulas were lost in extraction and are reconstructed here as the Lie-algebra Iwasawa decomposition
:math:`\mathfrak{gl}(d) = \mathfrak{so}(d) \oplus \mathfrak a \oplus \mathfrak n` [RECON].  A. W. Knapp, *Lie
Groups Beyond an Introduction*, VI.2 and VI.4; J. E. Humphreys, *Introduction to Lie Algebras and
Representation Theory*, §4.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Integral, Rational

import numpy as np
import scipy.linalg

from workbench.backend import to_numpy
from workbench.lens._primitives import as_matrix

__all__ = [
    "CartanSplit",
    "IwasawaSplit",
    "JordanChevalleySplit",
    "cartan_split",
    "iwasawa_split",
    "jordan_chevalley",
]

#: Largest matrix handed to the exact (sympy) Jordan–Chevalley split.
JORDAN_MAX_SIZE = 6


def _bch_degree2(parts: tuple[np.ndarray, ...]) -> np.ndarray:
    r"""The degree-2 term of :math:`\log(e^{X_1}\cdots e^{X_k})`, :math:`\tfrac12\sum_{i<j}[X_i, X_j]`.

    The degree-2 part of the multi-factor BCH series (:func:`workbench.lie.bch_many`), summed in its Lyndon
    order :math:`(i, j)`, :math:`i < j`, with coefficient :math:`\tfrac12` each; written out here because the
    lens sits below :mod:`workbench.lie` in the layer order (a test checks it against ``bch_many``).
    """
    total = np.zeros_like(parts[0])
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            total = total + 0.5 * (a @ b - b @ a)
    return total


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
        return float(np.linalg.norm(_bch_degree2(self.parts)))


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
    Lie-Exponential Roadmap, the Cartan split [SEED]; see :func:`cartan_split`.

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
    Lie-Exponential Roadmap, :math:`\exp(K)\exp(H)\exp(N)` [SEED]; see :func:`iwasawa_split` [RECON].

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
    Lie-Exponential Roadmap, the Cartan split as control knobs; orthogonal/SPD transports
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
    A = as_matrix("A", A)
    return CartanSplit(K=(A - A.T) / 2, P=(A + A.T) / 2)


def iwasawa_split(A) -> IwasawaSplit:
    r"""Iwasawa split of :math:`A \in \mathfrak{gl}(d, \mathbb R)`: compact + diagonal + nilpotent.

    .. math::

        A = K + H + N, \quad A = L + D + U\ (\text{strictly lower, diagonal, strictly upper}), \quad
        K = L - L^\top,\ H = D,\ N = U + L^\top.

    This is the vector-space direct sum :math:`\mathfrak{gl}(d) = \mathfrak{so}(d) \oplus \mathfrak a
    \oplus \mathfrak n` (skew, diagonal, strictly upper triangular), so the split is unique: the strictly
    lower part of :math:`A` can only come from :math:`K`, which fixes :math:`K`, then :math:`H` and
    :math:`N`.  It is the roadmap's compact/diagonal/nilpotent :math:`(K, H, N)` parameterisation; the
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
    Lie-Exponential Roadmap, "exponentiate in fixed order :math:`\exp(K)\exp(H)\exp(N)`"; "K shows
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
    A = as_matrix("A", A)
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
    Lie-Exponential Roadmap, the compact/diagonal/nilpotent knobs [SEED]; J. E. Humphreys,
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
        if isinstance(A, np.ndarray):  # the shape first: .tolist() of a large array is work proportional to it
            if A.ndim != 2:
                raise ValueError(f"A must be a square matrix (shape [..., n, n]), got shape {A.shape}")
            _check_jordan_size(*A.shape)
        rows = A.tolist() if isinstance(A, np.ndarray) else A
        try:
            M = sp.Matrix([[_exact_entry("A", v) for v in row] for row in rows])
        except TypeError as exc:
            if "entries" in str(exc):
                raise
            raise TypeError(f"A must be a square matrix of numbers, got {type(A).__name__}") from exc
        except ValueError as exc:  # sympy: rows of unequal length
            raise ValueError("A must be a square matrix of numbers, got rows of unequal length") from exc
    _check_jordan_size(M.rows, M.cols)
    P, J = M.jordan_form()
    N = (P * (J - sp.diag(*[J[i, i] for i in range(J.rows)])) * P.inv()).applyfunc(sp.simplify)
    return JordanChevalleySplit(D=(M - N).applyfunc(sp.simplify), N=N)


def _check_jordan_size(rows: int, cols: int) -> None:
    # A square matrix small enough for sympy's exact Jordan form.
    if rows != cols:
        raise ValueError(f"A must be a square matrix (shape [..., n, n]), got shape ({rows}, {cols})")
    if rows > JORDAN_MAX_SIZE:
        raise ValueError(
            f"A must be at most {JORDAN_MAX_SIZE}x{JORDAN_MAX_SIZE} for the exact Jordan–Chevalley split, "
            f"got {rows}x{cols}"
        )
