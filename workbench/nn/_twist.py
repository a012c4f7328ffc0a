r"""The BCH twist of non-commuting frames: log(e^{Φ_i} e^{-Φ_j}) by the BCH series, and its truncation error.

twist_generator        -- BCH_N(Phi_i, -Phi_j), the degree-N truncation of log(e^{Phi_i} e^{-Phi_j})
bch_conjugation_error  -- ||e^{Phi_i} e^{-Phi_j} - exp(BCH_N(Phi_i, -Phi_j))||_F = O(eps^{N+1})
twisted_generator      -- sum_ij Q_ij E_ij (x) exp(BCH_N(Phi_i, -Phi_j)), the twisted Kronecker generator

Conventions: those of :mod:`workbench.nn._transport` (edge :math:`\ell` carries :math:`e^{A_\ell}`, prefix
transports :math:`T_j = e^{A_{j-1}}\cdots e^{A_0}`, column vectors, position-major Kronecker lift).

References
----------
Lie-Exponential Roadmap, sections "double exponential", "BCH roles" [SEED]; the frame convention [RECON].
"""

from __future__ import annotations

import functools

import torch

from workbench.lie import bch
from workbench.nn._frames import (
    check_degree,
    check_matrices,
    check_same_dtype,
    evaluate_series,
    expm,
)
from workbench.nn._primitives import check_finite_result

__all__ = ["bch_conjugation_error", "twist_generator", "twisted_generator"]


@functools.cache
def _bch_series(degree: int):
    return bch(degree)


def _phi_pair(phi_i, phi_j) -> tuple[torch.Tensor, torch.Tensor]:
    a = check_matrices("phi_i", phi_i, 2)
    b = check_matrices("phi_j", phi_j, 2)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"phi_i and phi_j must be d x d for the same d, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        )
    try:
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"phi_i and phi_j must have broadcastable batch shapes, got shapes {tuple(a.shape)} and {tuple(b.shape)}"
        ) from None
    check_same_dtype("phi_j", b, "phi_i", a)
    d = a.shape[-1]
    return a.expand(*batch, d, d), b.expand(*batch, d, d)  # the documented broadcasting, made explicit


def twist_generator(phi_i: torch.Tensor, phi_j: torch.Tensor, degree: int) -> torch.Tensor:
    r"""The BCH series through ``degree`` for :math:`\log R_{i\leftarrow j} = \log(e^{\Phi_i} e^{-\Phi_j})`.

    With :math:`T_i = e^{\Phi_i}` the transport is :math:`R_{i\leftarrow j} = e^{\Phi_i} e^{-\Phi_j}` and

    .. math::

        \log(e^{\Phi_i} e^{-\Phi_j}) = \operatorname{BCH}(\Phi_i, -\Phi_j)
        = (\Phi_i - \Phi_j) - \tfrac12[\Phi_i, \Phi_j] - \tfrac1{12}[\Phi_i,[\Phi_i,\Phi_j]]
        - \tfrac1{12}[\Phi_j,[\Phi_i,\Phi_j]] + \dots

    Degree 1 is the roadmap's twist :math:`\Phi_i - \Phi_j` (exact when the :math:`\Phi` commute); each further
    degree adds the nested commutators from :func:`workbench.lie.bch` (exact rational coefficients), and
    truncation after degree :math:`N` leaves an error :math:`O(\varepsilon^{N+1})` for :math:`\Phi = O(\varepsilon)`.

    Parameters
    ----------
    phi_i, phi_j : torch.Tensor, shape=[..., d, d]
        Broadcastable batches.
    degree : int
        Truncation degree :math:`N \in [1, 10]`.

    Returns
    -------
    torch.Tensor, shape=[..., d, d]

    References
    ----------
    Lie-Exponential Roadmap, "BCH roles": "the gap between :math:`e^{-(\Phi_i-\Phi_j)}` and
    :math:`T_i^{-1}T_j` is exactly the BCH commutator series" [SEED]; signs for this module's convention [RECON].

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(8)
    >>> a, b = 0.1 * torch.randn(2, 3, 3, dtype=torch.float64, generator=g)
    >>> exact_twist = torch.linalg.matrix_exp(a) @ torch.linalg.matrix_exp(-b)
    >>> errors = [float(torch.linalg.matrix_norm(torch.linalg.matrix_exp(twist_generator(a, b, N)) - exact_twist))
    ...           for N in (1, 2, 3)]
    >>> errors[0] > 10 * errors[1] > 100 * errors[2]
    True
    """
    a, b = _phi_pair(phi_i, phi_j)
    series = _bch_series(check_degree(degree))
    return evaluate_series(series, (a, -b), f"the BCH series (degree {series.degree})", phi_i=a, phi_j=b)


def bch_conjugation_error(phi_i: torch.Tensor, phi_j: torch.Tensor, degree: int = 1) -> torch.Tensor:
    r"""Frobenius error of the twist :math:`e^{\Phi_i}e^{-\Phi_j}` against the exponential of its BCH truncation.

    .. math::

        \mathrm{err}_N = \big\|e^{\Phi_i} e^{-\Phi_j} - \exp\big(\textstyle\sum_{k\le N}
        \operatorname{BCH}^{(k)}(\Phi_i, -\Phi_j)\big)\big\|_F = O(\varepsilon^{N+1}),

    in particular :math:`\mathrm{err}_1 = \|e^{\Phi_i}e^{-\Phi_j} - e^{\Phi_i-\Phi_j}\|_F
    \approx \tfrac12 \|[\Phi_i,\Phi_j]\|_F`, zero when they commute.

    Parameters
    ----------
    phi_i, phi_j : torch.Tensor, shape=[..., d, d]
    degree : int
        :math:`N \in [1, 10]`; 1 is the naive twist :math:`e^{\Phi_i-\Phi_j}`.

    Returns
    -------
    torch.Tensor, shape=[...]

    References
    ----------
    Lie-Exponential Roadmap, "BCH roles", the twist and its BCH gap [SEED]; the error order [RECON].

    Examples
    --------
    >>> import torch
    >>> diag = torch.diag_embed(torch.tensor([[0.3, -0.2], [0.1, 0.5]], dtype=torch.float64))
    >>> float(bch_conjugation_error(diag[0], diag[1]))  # commuting: the twist is exact
    0.0
    """
    a, b = _phi_pair(phi_i, phi_j)
    exact = expm(a) @ expm(-b)
    approx = expm(twist_generator(a, b, degree))
    # e^Φ of entries near the float range overflows; the error is then refused, naming both frames.
    return check_finite_result("the BCH conjugation error", torch.linalg.matrix_norm(exact - approx), phi_i=a, phi_j=b)


def twisted_generator(generator: torch.Tensor, phis: torch.Tensor, degree: int = 1) -> torch.Tensor:
    r"""The roadmap's "content-twisted" generator: blocks :math:`Q_{ij}\exp(\operatorname{BCH}_N(\Phi_i, -\Phi_j))`.

    .. math::

        \mathcal G_N = \sum_{i,j} Q_{ij}\, E_{ij} \otimes \exp\big(\operatorname{BCH}_N(\Phi_i, -\Phi_j)\big),
        \qquad \mathcal G_1 = \sum_{i,j} Q_{ij}\, E_{ij}\otimes e^{\Phi_i-\Phi_j},

    the approximation of :func:`conjugated_generator` for :math:`T_i = e^{\Phi_i}` that replaces each exact twist
    :math:`T_iT_j^{-1} = e^{\Phi_i}e^{-\Phi_j}` by the exponential of its BCH series through degree :math:`N`
    (diagonal blocks are exactly :math:`Q_{ii} I`).  Exact for commuting :math:`\Phi` at every :math:`N`; otherwise
    each block errs by :math:`O(\varepsilon^{N+1})` (:func:`bch_conjugation_error`), and so does
    :math:`e^{t\mathcal G_N}` against the double exponential.

    Parameters
    ----------
    generator : torch.Tensor, shape=[..., n, n]
    phis : torch.Tensor, shape=[..., n, d, d]
        :math:`\Phi_i` with :math:`T_i = e^{\Phi_i}`.
    degree : int
        :math:`N \in [1, 10]`; 1 is the roadmap's :math:`e^{-(\Phi_i - \Phi_j)}` form (sign for this module's
        convention).

    Returns
    -------
    torch.Tensor, shape=[..., n d, n d]

    References
    ----------
    Lie-Exponential Roadmap, "the effective single generator of the whole attention+transport block ...
    the off-diagonal block sending :math:`j\to i` is scaled by the feature-space twist
    :math:`e^{-(\Phi_i-\Phi_j)}`" [SEED]; BCH-corrected twists [RECON].

    Examples
    --------
    >>> import torch
    >>> from workbench.nn import conjugated_generator, multiscale_generator
    >>> g = torch.Generator().manual_seed(11)
    >>> Q = multiscale_generator(torch.randn(3, 2, dtype=torch.float64, generator=g), (-1, 1))
    >>> commuting = torch.diag_embed(torch.randn(3, 2, dtype=torch.float64, generator=g))
    >>> exact = conjugated_generator(Q, torch.linalg.matrix_exp(commuting))
    >>> bool(torch.allclose(twisted_generator(Q, commuting), exact, atol=1e-14))
    True
    """
    q = check_matrices("generator", generator, 2)
    phi = check_matrices("phis", phis, 3)
    n, d = phi.shape[-3], phi.shape[-1]
    if q.shape[-1] != n:
        raise ValueError(f"generator must have shape [..., {n}, {n}] to match phis, got shape {tuple(q.shape)}")
    shape = (*phi.shape[:-3], n, n, d, d)
    left = phi.unsqueeze(-3).expand(shape)  # Φ_i along rows
    right = phi.unsqueeze(-4).expand(shape)  # Φ_j along columns
    series = _bch_series(check_degree(degree))
    twists = expm(evaluate_series(series, (left, -right), f"the BCH twist series (degree {series.degree})", phis=phi))
    blocks = q[..., None, None] * twists
    batch = blocks.shape[:-4]
    return blocks.transpose(-3, -2).reshape(*batch, n * d, n * d)
