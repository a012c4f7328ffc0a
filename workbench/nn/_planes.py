r"""Planes of Givens rotations: the brick-wall pattern and random perfect matchings.

A pattern of planes :math:`(i_k, j_k)`, :math:`i_k \ne j_k`, fixes where the rotations
:math:`G(i, j, \theta) = \exp\bigl(\theta(E_{ij} - E_{ji})\bigr)` of a Givens flow act.

brick_planes   -- layers of disjoint neighbour pairs, alternating (0,1),(2,3),... and (1,2),(3,4),...
random_planes  -- one random perfect matching of the coordinates per layer (seeded)

References
----------
Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" [SEED]; the brick-wall
pattern is written out here [RECON].  G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed.,
§5.1.8 (Givens rotations).
"""

from __future__ import annotations

import numpy as np

from workbench.backend import check_view_size, host_array
from workbench.memory import check_memory
from workbench.validation import check_integer

__all__ = ["brick_planes", "random_planes"]


def check_planes(planes, d: int) -> tuple[tuple[int, int], ...]:
    """Return ``planes`` as a tuple of ``(i, j)`` pairs after checking shape, range and ``i != j``."""
    check_view_size("planes", planes)
    array = host_array("planes", planes)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] < 1:
        raise ValueError(f"planes must be an integer array of shape [m, 2] with m >= 1, got shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise TypeError(f"planes must be an integer array of shape [m, 2], got dtype {array.dtype}")
    pairs = tuple((int(i), int(j)) for i, j in array)
    for position, (i, j) in enumerate(pairs):
        if not (0 <= i < d and 0 <= j < d):
            raise ValueError(f"planes must hold coordinates in [0, {d - 1}], got ({i}, {j}) at position {position}")
        if i == j:
            raise ValueError(f"planes must pair two different coordinates, got ({i}, {j}) at position {position}")
    return pairs


def _check_plane_count(d: int, layers: int) -> None:
    # a pair of ints in a tuple costs about 100 bytes; a random layer also draws a permutation of d int64
    check_memory(f"layers = {layers} layers of d // 2 planes (d = {d})", 100.0 * layers * (d // 2) + 8.0 * d)


def brick_planes(d: int, layers: int) -> tuple[tuple[int, int], ...]:
    r"""The brick-wall pattern of planes: ``layers`` alternating layers of disjoint neighbour pairs.

    Even layers pair :math:`(0,1), (2,3), \dots`; odd layers pair :math:`(1,2), (3,4), \dots`.  Within a layer
    the planes are pairwise disjoint, so its rotations commute.  With ``layers = d`` there are
    :math:`d(d-1)/2 = \dim SO(d)` planes.  For ``d = 2`` the odd layers are empty and are dropped.

    Parameters
    ----------
    d : int
        Dimension, at least 2.
    layers : int
        Number of brick layers, at least 1.

    Returns
    -------
    tuple of (int, int)
        The planes in product order.

    References
    ----------
    Lie-Exponential Roadmap, "GivensFlowMixer": learned index pairs; the brick-wall layout is the usual
    parallel ordering of disjoint rotations (Golub & Van Loan §8.5.5, parallel Jacobi orderings) [RECON].

    Examples
    --------
    >>> brick_planes(5, 2)
    ((0, 1), (2, 3), (1, 2), (3, 4))
    >>> len(brick_planes(6, 6)) == 6 * 5 // 2
    True
    """
    d = check_integer("d", d, 2)
    layers = check_integer("layers", layers, 1)
    _check_plane_count(d, layers)
    return tuple((i, i + 1) for layer in range(layers) for i in range(layer % 2, d - 1, 2))


def random_planes(d: int, layers: int, seed: int | None = 0) -> tuple[tuple[int, int], ...]:
    r"""``layers`` random perfect matchings of the coordinates (each layer's planes pairwise disjoint).

    Each layer draws a permutation :math:`\pi` of :math:`\{0, \dots, d-1\}` and pairs
    :math:`(\pi_0, \pi_1), (\pi_2, \pi_3), \dots` (sorted within a pair); an odd ``d`` leaves one coordinate out.

    Parameters
    ----------
    d : int
        Dimension, at least 2.
    layers : int
        Number of matchings, at least 1.
    seed : int or None
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    tuple of (int, int)

    References
    ----------
    Lie-Exponential Roadmap, "GivensFlowMixer": "learn angles and index pairs" [SEED]; random matchings
    are a choice made here [RECON].

    Examples
    --------
    >>> planes = random_planes(6, 2, seed=1)
    >>> len(planes), sorted(i for pair in planes[:3] for i in pair)
    (6, [0, 1, 2, 3, 4, 5])
    """
    d = check_integer("d", d, 2)
    layers = check_integer("layers", layers, 1)
    if seed is not None:
        seed = check_integer("seed", seed, 0)
    _check_plane_count(d, layers)
    rng = np.random.default_rng(seed)
    planes = []
    for _ in range(layers):
        perm = rng.permutation(d)
        planes.extend((int(min(a, b)), int(max(a, b))) for a, b in zip(perm[0:-1:2], perm[1::2], strict=True))
    return tuple(planes)
