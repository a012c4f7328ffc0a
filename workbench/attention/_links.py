r"""Exact links, the Hodge split of a link, and its holonomy around cycles.

A link :math:`\mathcal A` (the antisymmetric part of a score) is *exact* when it is a gradient,
:math:`\mathcal A_{ij} = \varphi_i - \varphi_j`: then it is a destination tilt :math:`e^{-\beta\varphi_j}`
and the head is a Doob transform of a symmetric kernel, hence reversible.  Every link splits into an exact
and a coexact part (Hodge), and its cycle sums (holonomy; affinity :math:`= 2\beta\times` holonomy) vanish
exactly when it is exact.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §4, §7 and Table 4; book/reference.md §A.7 "Exact
bond/link split", "Distance form with site potentials", "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities"
[DERIVED].
"""

from __future__ import annotations

from typing import NamedTuple

import array_api_compat

from workbench.attention._split_checks import antisymmetric_matrix, check_antisymmetric, zero_diagonal
from workbench.backend import namespace
from workbench.markov import cycle_edges, hodge_split, segment_sums
from workbench.memory import check_memory
from workbench.validation import as_array, check_in_range, check_integer, check_square

__all__ = [
    "LinkHodgeSplit",
    "exact_link",
    "is_exact_link",
    "link_hodge_split",
    "link_holonomy",
    "link_potential",
    "triangle_cycles",
]


def exact_link(phi):
    r"""The exact (gradient) link of a potential, :math:`\mathcal A_{ij} = \varphi_i - \varphi_j`.

    A head whose link is exact is a Doob transform of its bond, hence reversible: in the logits,
    :math:`\beta(\varphi_i - \varphi_j)` is a source term (cancelled by the row softmax) plus a destination
    tilt :math:`e^{-\beta\varphi_j}`.

    Parameters
    ----------
    phi : array, shape=[..., n]

    Returns
    -------
    array, shape=[..., n, n]
        Exactly antisymmetric.

    References
    ----------
    book/reference.md §A.7 "Exact link ⇔ Doob ⇔ reversible" [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> exact_link(np.array([0.0, 1.0, 3.0])).tolist()  # by hand: φ_i - φ_j
    [[0.0, -1.0, -3.0], [1.0, 0.0, -2.0], [3.0, 2.0, 0.0]]
    """
    phi = as_array("phi", phi, min_ndim=1)
    return phi[..., :, None] - phi[..., None, :]


def link_potential(link):
    r"""Least-squares potential of a link on the complete graph, :math:`\varphi_i = \tfrac1N\sum_j\mathcal A_{ij}`.

    It minimises :math:`\sum_{i,j}(\mathcal A_{ij} - (\varphi_i - \varphi_j))^2` with :math:`\sum_i\varphi_i = 0`:
    the normal equations on :math:`K_N` read :math:`N\varphi_i - \sum_j\varphi_j = \sum_j\mathcal A_{ij}`.  For an
    exact link :math:`\mathcal A = \varphi_i - \varphi_j` it returns :math:`\varphi` minus its mean.

    Parameters
    ----------
    link : array, shape=[..., n, n]
        Antisymmetric (checked to a relative 1e-12).

    Returns
    -------
    array, shape=[..., n]

    References
    ----------
    book/reference.md §A.7 "Cycle affinities" (Hodge split of the link on the complete graph) [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([1.0, 2.0, 6.0])
    >>> link_potential(exact_link(phi)).tolist()  # φ minus its mean 3
    [-2.0, -1.0, 3.0]
    """
    link = as_array("link", link, min_ndim=2)
    check_square("link", link)
    check_antisymmetric("link", link)
    n = int(link.shape[-1])
    return namespace(link).sum(link, axis=-1) / max(n, 1)  # an empty link has the empty potential


class LinkHodgeSplit(NamedTuple):
    r"""Hodge split of a link, :math:`\mathcal A = (\varphi_i - \varphi_j) + \mathcal A^\perp`."""

    exact: object
    r"""Gradient part :math:`\varphi_i - \varphi_j`: carries no holonomy; a destination (Doob) tilt."""
    coexact: object
    r"""Divergence-free part :math:`\mathcal A^\perp` (:math:`\sum_j w_{ij}\mathcal A^\perp_{ij} = 0`): all holonomy."""


def link_hodge_split(link, weights=None):
    r"""Hodge split of a link into its exact (Doob) and coexact (circulating) parts.

    .. math::

        \mathcal A = \underbrace{(\varphi_i - \varphi_j)}_{\text{exact}} + \underbrace{\mathcal A^\perp}_{\text{coexact}},
        \qquad \sum_j w_{ij}\mathcal A^\perp_{ij} = 0,

    with :math:`\varphi` the :math:`w`-weighted least-squares potential.  On the complete graph
    :math:`K_N` with unit weights (the default) :math:`\varphi` is :func:`link_potential` and
    :math:`\mathcal A^\perp\mathbf 1 = 0`.  The exact part is absorbed by the row softmax into a destination
    tilt; only the coexact part makes the head nonreversible.  This delegates to
    :func:`workbench.markov.hodge_split`.

    Parameters
    ----------
    link : array, shape=[n, n]
        Antisymmetric.
    weights : array, shape=[n, n], optional
        Symmetric nonnegative edge weights; default: the complete graph (ones off the diagonal).  Pass the
        symmetrised mask for a masked head.

    Returns
    -------
    LinkHodgeSplit
        ``(exact, coexact)`` in the library of ``link``.

    References
    ----------
    book/reference.md §A.7 "Cycle affinities" (Hodge split of the link) [DERIVED]; L.-H. Lim, "Hodge
    Laplacians on graphs", SIAM Review 62 (2020) 685.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(4)
    >>> B = rng.standard_normal((5, 5)); link = (B - B.T) / 2
    >>> exact, coexact = link_hodge_split(link)
    >>> bool(np.allclose(exact, exact_link(link.mean(axis=1))) and np.allclose(coexact.sum(axis=1), 0.0))
    True
    """  # noqa: E501
    link = antisymmetric_matrix("link", link)
    if weights is None:
        xp = namespace(link)
        n = int(link.shape[0])
        ones = xp.ones((n, n), dtype=link.dtype, device=array_api_compat.device(link))
        weights = zero_diagonal(ones)
    else:
        namespace(link=link, weights=weights)  # one array library (markov.hodge_split names its own arguments)
    _, exact, coexact = hodge_split(link, weights)
    return LinkHodgeSplit(exact, coexact)


def triangle_cycles(n):
    r"""The triangles :math:`(0, i, j, 0)`, :math:`1 \le i < j \le n-1`: a cycle basis of the complete graph.

    There are :math:`(n-1)(n-2)/2` of them, the cyclomatic number of :math:`K_n`; each is the fundamental
    cycle of the edge :math:`\{i, j\}` with respect to the star spanning tree at vertex 0.

    Parameters
    ----------
    n : int
        Number of vertices, :math:`n \ge 0`.

    Returns
    -------
    list of tuple of int
        Closed vertex sequences, ordered by :math:`(i, j)`.

    References
    ----------
    book/reference.md §A.7 "Cycle affinities" [DERIVED].

    Examples
    --------
    >>> triangle_cycles(4)
    [(0, 1, 2, 0), (0, 1, 3, 0), (0, 2, 3, 0)]
    >>> len(triangle_cycles(10)) == 9 * 8 // 2
    True
    """
    n = check_integer("n", n, 0)
    # a 4-tuple of small ints and its list slot take about 100 bytes
    check_memory(f"the (n-1)(n-2)/2 triangles of n = {n} vertices", 100.0 * max(n - 1, 0) * max(n - 2, 0) / 2)
    return [(0, i, j, 0) for i in range(1, n) for j in range(i + 1, n)]


def link_holonomy(link, cycles=None):
    r"""Holonomy of a link around cycles, :math:`\oint_\gamma\mathcal A = \sum_m\mathcal A_{i_m i_{m+1}}`.

    For a cycle :math:`\gamma = (i_0\to i_1\to\dots\to i_k = i_0)`.  The holonomy vanishes on every cycle
    exactly when the link is exact (:math:`\mathcal A_{ij} = \varphi_i - \varphi_j`), and the cycle affinity of
    the head :math:`\mathsf P = \operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))` is twice it,

    .. math::

        \mathfrak A(\gamma) = \sum_m \log\frac{\mathsf P_{i_m i_{m+1}}}{\mathsf P_{i_{m+1} i_m}}
        = 2\beta\oint_\gamma\mathcal A,

    because the partition functions telescope and the bond cancels (see
    :func:`workbench.markov.cycle_affinities`).

    Parameters
    ----------
    link : array, shape=[n, n]
        Antisymmetric.
    cycles : sequence of sequences of int, optional
        Closed :math:`(i_0, \dots, i_{k-1}, i_0)` or open :math:`(i_0, \dots, i_{k-1})` vertex sequences.
        Default: :func:`triangle_cycles` ``(n)``, a basis of the cycle space of the complete graph.

    Returns
    -------
    array, shape=[len(cycles)]
        In the library of ``link``.

    References
    ----------
    book/reference.md §A.7 "Cycle affinities" [DERIVED]; J. Schnakenberg, Rev. Mod. Phys. 48 (1976) 571.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(5)
    >>> B = rng.standard_normal((4, 4)); link = B - B.T
    >>> by_hand = link[0, 2] + link[2, 3] + link[3, 0]
    >>> bool(np.isclose(link_holonomy(link, [(0, 2, 3, 0)])[0], by_hand))
    True
    >>> bool(np.allclose(link_holonomy(exact_link(rng.standard_normal(4))), 0.0))  # exact: no holonomy
    True
    """
    link = antisymmetric_matrix("link", link)
    n = int(link.shape[0])
    if cycles is None:
        cycles = triangle_cycles(n)
    sources, targets, starts = cycle_edges(cycles, n)  # the parser of markov.cycle_affinities
    xp = namespace(link)
    device = array_api_compat.device(link)
    if starts.size == 0:
        return xp.zeros(0, dtype=link.dtype, device=device)
    steps = link[xp.asarray(sources, device=device), xp.asarray(targets, device=device)]
    return segment_sums(steps, starts)


def is_exact_link(link, rtol=1e-10):
    r"""Whether a link is exact on the complete graph, :math:`\mathcal A_{ij} = \varphi_i - \varphi_j`.

    On :math:`K_N` the link is exact iff its holonomy vanishes on the triangle basis :math:`(0, i, j)`, i.e.

    .. math::

        r_{ij} = \mathcal A_{ij} - \mathcal A_{i0} - \mathcal A_{0j} = 0 \quad\text{for all } i, j,

    (then :math:`\varphi_i = \mathcal A_{i0}`).  The test is
    :math:`\max_{ij}|r_{ij}| \le \mathrm{rtol}\cdot\max_{ij}|\mathcal A_{ij}|`; an exact link built from a
    potential of size :math:`|\varphi|` carries rounding of order :math:`10^{-16}|\varphi|`, so choose ``rtol``
    above that relative to :math:`\max|\mathcal A|`.  By the Kolmogorov criterion this is the same as the head
    :math:`\operatorname{rownorm}\exp_\odot(\beta(\mathcal S + \mathcal A))` being reversible, for any bond.

    Parameters
    ----------
    link : array, shape=[n, n]
        Antisymmetric.
    rtol : float
        Relative tolerance, ``rtol >= 0``.

    Returns
    -------
    bool

    References
    ----------
    book/reference.md §A.7 "Exact link ⇔ Doob ⇔ reversible", "Cycle affinities" (Kolmogorov criterion)
    [DERIVED].

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([0.3, -1.2, 2.0, 0.5])
    >>> is_exact_link(exact_link(phi)), is_exact_link(exact_link(phi) + np.array(
    ...     [[0, 1, -1, 0], [-1, 0, 1, 0], [1, -1, 0, 0], [0, 0, 0, 0.0]]))  # plus a circulation on (0, 1, 2)
    (True, False)
    """
    link = antisymmetric_matrix("link", link)
    rtol = check_in_range("rtol", rtol, 0.0)
    xp = namespace(link)
    if int(link.shape[0]) == 0:
        return True
    residual = link - link[:, :1] - link[:1, :]
    scale = float(xp.max(xp.abs(link)))
    return float(xp.max(xp.abs(residual))) <= rtol * scale
