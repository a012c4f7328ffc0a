r"""The generator :math:`L_{\mathrm{mix}} = I - T(A, O)` of a connection walk, its π-split, and the connection energy.

Under :math:`\langle X, Y\rangle_\pi = \sum_i \pi_i\langle X_i, Y_i\rangle` the generator splits into a
π-symmetric part (dissipation) and a π-skew part (directed drift); the connection Dirichlet energy
:math:`\mathcal E_c(X) = \tfrac12\sum_{i,j}\pi_i A_{ij}\lVert X_i - X_j O_{ij}\rVert^2` is its quadratic form
under the hypotheses stated at :func:`connection_energy`.  :func:`effective_connection_energy` evaluates the
energy of multi-head attention from the heads, without the :math:`n^2d^2` transport array.

References
----------
"From Self-Attention to Connection Laplacian: A Unified Operator View of Transformers" (arXiv id not
found), §5, Eq. (12) and Appendix F (reversibility); the generator, the symmetric/skew decomposition and the
connection energy are our reconstructions (13)–(14) of displays its surviving text does not cite;
book/reference.md §B.4.
Every displayed formula of that paper is lost; the formulas here are the reconstructions of
book/reference.md §B [RECON], checked against the surviving text and numerically.
"""

# The paper names the transport field O (edge transports O_ij); the public signatures keep its symbol.
# ruff: noqa: E741

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from workbench.attention._connection_checks import (
    check_features,
    check_head_factors,
    check_heads,
    check_law,
    check_transports,
    check_walk,
    stationary_law,
)
from workbench.attention._overflow import binary_scale, check_overflow, overflow_ignored
from workbench.attention._walk import connection_laplacian
from workbench.backend import namespace, to_numpy
from workbench.validation import check_nonnegative

__all__ = [
    "MixingGenerator",
    "connection_energy",
    "effective_connection_energy",
    "factored_connection_energy",
    "mixing_generator",
]


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
    Connection-Laplacian paper §5, Eq. (12) (reversibility); the generator and its symmetric/skew
    decomposition are our reconstruction (13), which the surviving text does not cite; book/reference.md §B.4
    [RECON].

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
    A_eff = check_walk("A_eff", A_eff)
    n = int(A_eff.shape[0])
    O_eff = check_transports("O_eff", O_eff, n, "A_eff")
    if pi is None:
        pi = stationary_law("A_eff", A_eff)
        if float(namespace(pi).min(pi)) <= 0.0:
            raise ValueError(
                "the π-adjoint needs π > 0, but the stationary law of A_eff vanishes on transient states "
                "(e.g. under a causal mask); pass a positive pi, such as the uniform law"
            )
    else:
        pi = check_law("pi", pi, n, positive=True)
    xp = namespace(A_eff=A_eff, O_eff=O_eff, pi=pi)
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
    Connection-Laplacian paper §5, Eq. (14) and Appendix F (connection energy); book/reference.md §B.4
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
    A = check_walk("A", A)
    check_nonnegative("A", A)
    n = int(A.shape[0])
    O = check_transports("O", O, n)
    X = check_features("X", X, n, int(O.shape[-1]))
    pi = stationary_law("A", A) if pi is None else check_law("pi", pi, n, positive=False)
    xp = namespace(A=A, O=O, X=X, pi=pi)
    with overflow_ignored():
        transported = xp.einsum("jb,ijba->ija", X, O)  # [i, j] = X_j O_ij
        difference = X[:, None, :] - transported
        # The energy is quadratic in the differences: summed on difference / 2^e (exact) and scaled back, so
        # only an energy that is itself out of range overflows.
        unit = binary_scale(difference)
        gap = xp.sum((difference / unit) ** 2, axis=-1)
        energy = 0.5 * xp.sum(pi[:, None] * A * gap) * unit * unit
    return check_overflow("the connection energy", energy, {"A": A, "O": O, "X": X, "pi": pi})


#: Entries of one block of differences in :func:`effective_connection_energy` (2 MB of float64: cache-sized).
_ENERGY_BLOCK = 2**18


def effective_connection_energy(A_heads, M_heads, X, pi=None) -> float:
    r"""The connection energy :math:`\mathcal E_c(X)` of the effective walk and transport, from the heads alone.

    .. math::

        \mathcal E_c(X) = \tfrac12\sum_{i,j}\pi_i A_{\mathrm{eff}}(i,j)\,\lVert X_i - X_jO^{\mathrm{eff}}_{ij}\rVert^2,
        \qquad X_jO^{\mathrm{eff}}_{ij} = \sum_h w_h(i,j)\,(XM_h)_j,

    so only the :math:`H` products :math:`XM_h` and an :math:`n\times n\times d` array are formed (never the
    :math:`H\times n\times n\times d` one).  Equal to
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
    Connection-Laplacian paper §5, Eq. (14); book/reference.md §B.4 [RECON].

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import effective_connection
    >>> rng = np.random.default_rng(1)
    >>> A_heads = rng.random((2, 3, 3)); A_heads /= A_heads.sum(axis=2, keepdims=True)
    >>> M_heads, X = rng.standard_normal((2, 4, 4)), rng.standard_normal((3, 4))
    >>> A_eff, O_eff = effective_connection(A_heads, M_heads)
    >>> dense = float(connection_energy(A_eff, O_eff, X))
    >>> bool(np.isclose(effective_connection_energy(A_heads, M_heads, X), dense, rtol=1e-12))
    True
    """
    A_heads, M_heads = check_heads(A_heads, M_heads)
    n, d = int(A_heads.shape[1]), int(M_heads.shape[-1])
    X = to_numpy(check_features("X", X, n, d)).astype(np.float64)
    M = to_numpy(M_heads).astype(np.float64)
    with overflow_ignored():
        Z = (X[None, :, :] @ M).transpose(1, 0, 2)  # [j, h, d]: (X M_h)_j
    return _energy_of_moved(A_heads, X, Z, pi, {"A_heads": A_heads, "M_heads": M_heads, "X": X})


def factored_connection_energy(A_heads, W_V, W_O, X, pi=None) -> float:
    r""":func:`effective_connection_energy` of the maps :math:`M_h = W_V^hW_O^h`, from the factors.

    The moved features :math:`XM_h = (XW_V^h)W_O^h` cost :math:`2ndr` per head instead of :math:`nd^2`, and the
    :math:`d\times d` maps are never formed.

    Parameters
    ----------
    A_heads : array, shape=[H, n, n]
    W_V : array, shape=[H, d, r]
    W_O : array, shape=[H, r, d]
    X : array, shape=[n, d]
    pi : array, shape=[n], optional
        As in :func:`effective_connection_energy`.

    Returns
    -------
    float
        Equal to ``effective_connection_energy(A_heads, W_V @ W_O, X, pi)`` up to rounding (tested).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> A = rng.random((2, 3, 3)); A /= A.sum(axis=2, keepdims=True)
    >>> W_V, W_O, X = rng.standard_normal((2, 4, 2)), rng.standard_normal((2, 2, 4)), rng.standard_normal((3, 4))
    >>> dense = effective_connection_energy(A, W_V @ W_O, X)
    >>> bool(np.isclose(factored_connection_energy(A, W_V, W_O, X), dense, rtol=1e-12))
    True
    """
    A_heads, W_V, W_O = check_head_factors(A_heads, W_V, W_O)
    n, d = int(A_heads.shape[1]), int(W_V.shape[1])
    X = to_numpy(check_features("X", X, n, d)).astype(np.float64)
    U, V = to_numpy(W_V).astype(np.float64), to_numpy(W_O).astype(np.float64)
    with overflow_ignored():
        Z = ((X[None, :, :] @ U) @ V).transpose(1, 0, 2)  # [j, h, d]: ((X W_V^h) W_O^h)_j
    return _energy_of_moved(A_heads, X, Z, pi, {"A_heads": A_heads, "W_V": W_V, "W_O": W_O, "X": X})


#: The expanded square keeps about 12 digits of ℰ_c while ℰ_c is at least this share of Σ π_i A_ij (‖X_i‖² +
#: ‖X_jO_ij‖²) (a rounding of that sum, times 1/share); below it the differences are formed.
_EXPANDED_SHARE = 1e-3
#: Bytes of the per-edge arrays of the expanded square held at once (blocks of source rows).
_EXPANDED_BLOCK_BYTES = 32 * 2**20


def _energy_of_moved(A_heads, X: np.ndarray, Z: np.ndarray, pi, inputs: dict) -> float:
    r"""ℰ_c from the heads' attention and the moved features Z[j, h] = (X M_h)_j.

    Expanding the square, with :math:`m_{ij} = \sum_h w_h(i,j)Z_{jh}`,

    .. math::

        \lVert X_i - m_{ij}\rVert^2 = \lVert X_i\rVert^2 - 2\sum_h w_h(i,j)\langle X_i, Z_{jh}\rangle
        + \sum_{h,g} w_h(i,j)w_g(i,j)\langle Z_{jh}, Z_{jg}\rangle,

    needs one product :math:`X Z^\top` (:math:`n^2Hd`) and the :math:`n` Gram matrices :math:`Z_jZ_j^\top`
    (:math:`nH^2d`), never the :math:`n\times n\times d` moved features.  It cancels when the transport nearly
    moves every token onto its source; then (ℰ_c below :data:`_EXPANDED_SHARE` of the summed squares) the
    differences are formed, in blocks of sources.
    """
    n, d = X.shape
    H = Z.shape[1]
    A = to_numpy(A_heads).astype(np.float64)
    total = A.sum(axis=0)
    A_eff = total / A.shape[0]
    pi = stationary_law("A_eff", A_eff) if pi is None else check_law("pi", pi, n, positive=False)
    pi = to_numpy(pi).astype(np.float64)
    w = np.moveaxis(A / np.where(total > 0, total, 1.0), 0, -1)  # [i, j, h]
    edge = pi[:, None] * A_eff  # π_i A_eff(i, j)
    with overflow_ignored():
        unit = float(max(binary_scale(X), binary_scale(Z)))  # X / 2^e, Z / 2^e: exact, and no overflow in squares
        Xs, Zs = X / unit, Z / unit
        first, second = np.triu_indices(H)
        pairs = np.einsum("jhd,jgd->jhg", Zs, Zs)[:, first, second] * np.where(first == second, 1.0, 2.0)  # [j, p]
        own = np.sum(Xs * Xs, axis=1)
        Z_flat = Zs.reshape(n * H, d)
        rows = max(1, _EXPANDED_BLOCK_BYTES // (8 * n * max(first.size, H)))  # [rows, n, P] at a time
        energy = squares = 0.0
        for start in range(0, n, rows):
            block = slice(start, min(start + rows, n))
            wb = w[block]
            cross = np.einsum("ijh,ijh->ij", wb, (Xs[block] @ Z_flat.T).reshape(-1, n, H))  # Σ_h w_h ⟨X_i, Z_jh⟩
            moved2 = np.sum(wb[..., first] * wb[..., second] * pairs, axis=-1)  # ‖Σ_h w_h Z_jh‖²
            squares += 0.5 * float(np.sum(edge[block] * (own[block, None] + moved2)))
            energy += 0.5 * float(np.sum(edge[block] * (own[block, None] - 2.0 * cross + moved2)))
        if not energy >= _EXPANDED_SHARE * squares:  # cancellation (or a NaN): form the differences
            energy = _energy_by_differences(w, Xs, Zs, edge)
        energy *= unit * unit
    return float(check_overflow("the connection energy", np.asarray(energy), inputs))


def _energy_by_differences(w: np.ndarray, X: np.ndarray, Z: np.ndarray, edge: np.ndarray) -> float:
    """½ Σ π_i A_eff(i, j) ‖X_i − Σ_h w_h(i, j) Z_jh‖², the differences formed for a block of sources at a time."""
    n, d = X.shape
    # X_j O_eff(i, j) = Σ_h w_h(i, j) (X M_h)_j in blocks of sources whose [rows, n, d] differences stay small
    # (at n = 197, d = 768 the whole [n, n, d] array is 240 MB)
    rows = max(1, _ENERGY_BLOCK // max(n * d, 1))
    energy = 0.0
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        moved = np.einsum("ijh,jhd->ijd", w[start:stop], Z, optimize=True)
        difference = X[start:stop, None, :] - moved
        unit = float(binary_scale(difference))  # summed on difference / 2^e (exact), as in connection_energy
        gap = ((difference / unit) ** 2).sum(axis=-1)
        energy += float(0.5 * np.sum(edge[start:stop] * gap)) * unit * unit
    return energy
