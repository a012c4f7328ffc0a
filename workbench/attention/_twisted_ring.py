r"""The oracle of the connection walk: a ring with planar rotation transports and a closed-form spectrum.

The cycle graph :math:`C_n` with rotations on its edges and total twist :math:`\theta` has holonomy
:math:`R(\theta)` and an unnormalised connection Laplacian with the spectrum
:math:`w(2 - 2\cos((2\pi k \pm \theta)/n))` (the discrete Aharonov–Bohm ring): the test oracle for the
connection Laplacian and for holonomy.

References
----------
R. Kenyon, "Spanning forests and the vector bundle Laplacian", Ann. Probab. 39 (2011) 1983–2017.
A. Singer and H.-T. Wu, "Vector diffusion maps and the connection Laplacian", Comm. Pure Appl. Math. 65
(2012) 1067–1144.  Oracle for book/reference.md §B.2 and §B.6.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

import math

import numpy as np

from workbench.memory import check_memory
from workbench.validation import as_array, check_in_range, check_integer

__all__ = ["cycle_connection"]


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
    the discrete Aharonov–Bohm ring.  Oracle for book/reference.md §B.2 and §B.6.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import connection_laplacian
    >>> n, theta = 5, 0.7
    >>> A, O = cycle_connection(n, theta)
    >>> L = connection_laplacian(A, O, kind="unnormalized")
    >>> k = np.arange(n)
    >>> closed_form = np.sort(np.concatenate([2 - 2 * np.cos((2 * np.pi * k + s * theta) / n) for s in (1, -1)]))
    >>> bool(np.allclose(np.linalg.eigvalsh(L), closed_form, rtol=0, atol=1e-13))
    True
    """
    n = check_integer("n", n, 3)
    check_memory(f"the n×n weights and n×n×2×2 transports of a ring of n = {n} vertices", 40.0 * n * n)
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
