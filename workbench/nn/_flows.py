r"""Structure-preserving linear layers built from Lie-algebra generators: Givens flows, SPD maps, symplectic maps.

The exponential map turns a generator with a linear constraint into a group element with the matching
invariant, exactly:

.. math::

    A^\top = -A \;\Rightarrow\; e^{A} \in SO(d), \qquad
    S^\top = S \;\Rightarrow\; e^{S} \succ 0,\ \lVert e^{S}\rVert_2 = e^{\lambda_{\max}(S)}, \qquad
    (JH)^\top J + J(JH) = 0 \;\Rightarrow\; (e^{JH})^\top J e^{JH} = J .

Three layers follow.  :class:`GivensFlowMixer` composes plane rotations
:math:`G(i, j, \theta) = \exp\bigl(\theta(E_{ij} - E_{ji})\bigr)` on a brick-wall (or random) pattern of planes,
applied by indexed two-row updates (:func:`givens_product`), never as a dense matrix; it equals :math:`e^{A}` for
the skew generator :math:`A = \sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})` (:func:`givens_generator`) when the planes
are pairwise disjoint, and differs from it at second order in the angles (BCH) otherwise.  :class:`SPDMap` is
:math:`x \mapsto e^{S}x` with an optional Lipschitz cap certified by the Gershgorin bound
(:func:`gershgorin_bound`).  :class:`SymplecticMap` is :math:`x \mapsto e^{JH}x` with :math:`H` symmetric and
:math:`J` the standard form (:func:`symplectic_form`).

All of them are torch, batched (batch dimensions first) and follow the dtype and device of their input.

References
----------
lie-exponential-roadmap (seed), "Structure by construction" (lines 5–11), the orthogonal / symplectic / SPD
channel-mixing items (lines 26–31), "GivensFlowMixer (exact orthogonality, fast)" and "SPD-MLP with Lipschitz
control" (lines 69–92) [SEED].  Several displays of the seed were lost in extraction; the formulas for
:math:`G(i, j, \theta)`, the brick-wall pattern and the Gershgorin cap are written out here [RECON].
G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed., §5.1.8 (Givens rotations) and §7.2.1
(Gershgorin); E. Hairer, C. Lubich and G. Wanner, *Geometric Numerical Integration*, §VI.2 (symplectic maps).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from workbench.validation import check_choice, check_finite, check_in_range, check_integer

__all__ = [
    "GivensFlowMixer",
    "GivensProduct",
    "SPDMap",
    "SymplecticMap",
    "brick_planes",
    "gershgorin_bound",
    "givens_generator",
    "givens_product",
    "random_planes",
    "symplectic_form",
]


# ---- planes ------------------------------------------------------------------------------------------------


def _check_planes(planes, d: int) -> tuple[tuple[int, int], ...]:
    """Return ``planes`` as a tuple of ``(i, j)`` pairs after checking shape, range and ``i != j``."""
    if isinstance(planes, torch.Tensor):
        planes = planes.detach().cpu().numpy()
    array = np.asarray(planes)
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
    lie-exponential-roadmap (seed), "GivensFlowMixer": learned index pairs; the brick-wall layout is the usual
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
    lie-exponential-roadmap (seed), "GivensFlowMixer": "learn angles and index pairs" [SEED]; random matchings
    are a choice made here [RECON].

    Examples
    --------
    >>> planes = random_planes(6, 2, seed=1)
    >>> len(planes), sorted(i for pair in planes[:3] for i in pair)
    (6, [0, 1, 2, 3, 4, 5])
    """
    d = check_integer("d", d, 2)
    layers = check_integer("layers", layers, 1)
    rng = np.random.default_rng(seed)
    planes = []
    for _ in range(layers):
        perm = rng.permutation(d)
        planes.extend((int(min(a, b)), int(max(a, b))) for a, b in zip(perm[0:-1:2], perm[1::2], strict=True))
    return tuple(planes)


@functools.lru_cache(maxsize=64)
def _plan(planes: tuple[tuple[int, int], ...], d: int):
    r"""Split the planes into maximal runs of consecutive, pairwise disjoint planes (stages).

    Rotations in one stage commute, so a stage is applied at once: ``y = C * x + S * x[..., partner]`` with
    ``C`` holding the cosines on both coordinates of each plane (1 elsewhere), ``S`` holding ``+sin`` at ``i``
    and ``-sin`` at ``j`` (0 elsewhere) and ``partner`` swapping ``i`` and ``j``.
    """
    stages, current, used = [], [], set()
    for k, (i, j) in enumerate(planes):
        if i in used or j in used:
            stages.append(current)
            current, used = [], set()
        current.append(k)
        used.update((i, j))
    stages.append(current)
    plan = []
    for members in stages:
        first = [planes[k][0] for k in members]
        second = [planes[k][1] for k in members]
        partner = list(range(d))
        for i, j in zip(first, second, strict=True):
            partner[i], partner[j] = j, i
        plan.append(
            (
                torch.tensor(members, dtype=torch.long),
                torch.tensor(first + second, dtype=torch.long),
                torch.tensor(partner, dtype=torch.long),
            )
        )
    return tuple(plan)


def _as_angles(angles, m: int) -> torch.Tensor:
    if not isinstance(angles, torch.Tensor):
        angles = torch.as_tensor(np.asarray(angles, dtype=np.float64))
    if not angles.is_floating_point():
        raise TypeError(f"angles must be a real floating tensor, got dtype {angles.dtype}")
    if angles.ndim < 1 or angles.shape[-1] != m:
        raise ValueError(f"angles must have last dimension {m} (one angle per plane), got shape {tuple(angles.shape)}")
    check_finite("angles", angles.detach())
    return angles


#: Input dtypes of the layers that form ``matrix_exp`` in the input's dtype (half precision overflows or loses W).
_EXP_DTYPES = (torch.float32, torch.float64)


def _check_layer_input(x, *, dtypes: tuple[torch.dtype, ...] | None = None) -> None:
    """Type checks of a layer's input: a real floating torch tensor (``dtypes`` restricts the floating dtypes)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a real floating-point tensor, got dtype {x.dtype}")
    if dtypes is not None and x.dtype not in dtypes:
        names = " or ".join(str(t) for t in dtypes)
        raise TypeError(
            f"x must have dtype {names} (the layer forms its matrix exponential in the input's dtype), "
            f"got dtype {x.dtype}"
        )


def _skew_units(planes, d: int, like: torch.Tensor) -> torch.Tensor:
    """The constant stack ``K[k] = E_{i_k j_k} - E_{j_k i_k}``, shape ``[m, d, d]``."""
    units = torch.zeros(len(planes), d, d, dtype=like.dtype, device=like.device)
    for k, (i, j) in enumerate(planes):
        units[k, i, j] += 1.0
        units[k, j, i] -= 1.0
    return units


# ---- Givens products ---------------------------------------------------------------------------------------


class GivensProduct:
    r"""The ordered product :math:`W = G(i_1, j_1, \theta_1)\, G(i_2, j_2, \theta_2) \cdots G(i_m, j_m, \theta_m)`.

    Build it with :func:`givens_product`.  :meth:`apply` computes :math:`Wx` by two-row updates,
    :meth:`as_matrix` forms :math:`W` densely (an independent path, for checks), :meth:`generator` is the skew
    :math:`A` of :func:`givens_generator` and :meth:`stage_generators` the commuting blocks whose exponentials
    multiply to :math:`W` exactly.  The angles are checked on construction (a real floating tensor, else
    ``TypeError``; last dimension ``m`` and finite, else ``ValueError``, naming ``angles``); the planes are taken
    as given, so build it through :func:`givens_product`, which validates them.

    Attributes
    ----------
    angles : torch.Tensor
        Shape ``[..., m]`` (batch dimensions first).
    planes : tuple of (int, int)
    d : int

    References
    ----------
    lie-exponential-roadmap (seed), "GivensFlowMixer": "compose :math:`m` such rotations" [SEED].

    Examples
    --------
    >>> import torch
    >>> W = givens_product(torch.tensor([0.3, 0.5, -0.2], dtype=torch.float64), [(0, 1), (2, 3), (1, 2)], 4)
    >>> W.n_stages  # (0, 1) and (2, 3) are disjoint and applied together; (1, 2) overlaps them
    2
    >>> x = torch.eye(4, dtype=torch.float64)
    >>> bool(torch.allclose(W(x).mT, W.as_matrix(), atol=1e-15))  # row c of W(I) is W e_c
    True
    """

    def __init__(self, angles: torch.Tensor, planes: tuple[tuple[int, int], ...], d: int):
        # planes and d are checked by givens_product (kept off this per-forward path); the angles are checked here
        self.angles, self.planes, self.d = _as_angles(angles, len(planes)), planes, d
        self._stages = _plan(planes, d)

    @property
    def n_stages(self) -> int:
        """Number of runs of consecutive pairwise-disjoint planes (each applied in one vectorised step)."""
        return len(self._stages)

    def _stage_factors(self, stage):
        device = self.angles.device
        members, ends, _ = (t.to(device) for t in stage)
        theta = self.angles.index_select(-1, members)
        c, s = torch.cos(theta), torch.sin(theta)
        batch = tuple(theta.shape[:-1])
        index = ends.expand(*batch, ends.numel())
        ones = torch.ones(*batch, self.d, dtype=theta.dtype, device=device)
        cos_full = ones.scatter(-1, index, torch.cat([c, c], dim=-1))
        sin_full = torch.zeros_like(ones).scatter(-1, index, torch.cat([s, -s], dim=-1))
        return cos_full, sin_full

    def apply(self, x: torch.Tensor, *, transpose: bool = False) -> torch.Tensor:
        r"""Return :math:`Wx` (or :math:`W^\top x = W^{-1}x`) for ``x`` of shape ``[..., d]``.

        Each stage of disjoint planes costs one gather and two multiply-adds over the :math:`d` coordinates,
        :math:`(Gx)_i = \cos\theta\,x_i + \sin\theta\,x_j`, :math:`(Gx)_j = -\sin\theta\,x_i + \cos\theta\,x_j`;
        the total is :math:`O(\#\text{stages}\cdot d)` per vector (:math:`O(m)` for a brick wall), no dense matrix.
        Batch dimensions of ``x`` and of the angles broadcast.

        Examples
        --------
        >>> import torch
        >>> W = givens_product(torch.tensor([0.3, -1.1]), [(0, 1), (1, 2)], 3)
        >>> x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
        >>> bool(torch.allclose(W.apply(W.apply(x), transpose=True), x))
        True
        """
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"x must be a torch tensor, got {type(x).__name__}")
        if not (x.is_floating_point() or x.is_complex()):
            raise TypeError(f"x must be a floating-point (or complex) tensor, got dtype {x.dtype}")
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x must have last dimension {self.d}, got shape {tuple(x.shape)}")
        stages = self._stages if transpose else self._stages[::-1]  # W x: the last factor acts first
        y = x
        for stage in stages:
            cos_full, sin_full = self._stage_factors(stage)
            partner = stage[2].to(x.device)
            swapped = y.index_select(-1, partner)
            y = cos_full * y - sin_full * swapped if transpose else cos_full * y + sin_full * swapped
        return y

    __call__ = apply

    def as_matrix(self) -> torch.Tensor:
        r"""Dense :math:`W`, shape ``[..., d, d]``, as a product of dense factors (for tests; :math:`O(sd^3)`).

        Each factor is :math:`G_k = I + (\cos\theta_k - 1)(E_{ii} + E_{jj}) + \sin\theta_k (E_{ij} - E_{ji})`;
        the factors of one stage (disjoint planes, :math:`s` stages in all) act on disjoint coordinates, so their
        product is :math:`I + \sum_k \bigl[(\cos\theta_k - 1)(E_{ii} + E_{jj}) + \sin\theta_k (E_{ij} - E_{ji})\bigr]`
        exactly, and one dense matrix per stage is multiplied.

        Examples
        --------
        >>> import torch
        >>> W = givens_product(torch.tensor([0.5, 0.2, -0.7], dtype=torch.float64), brick_planes(4, 2), 4).as_matrix()
        >>> bool(torch.allclose(W.mT @ W, torch.eye(4, dtype=W.dtype)))
        True
        """
        units = _skew_units(self.planes, self.d, self.angles)
        diag = torch.zeros_like(units)  # E_ii + E_jj
        for k, (i, j) in enumerate(self.planes):
            diag[k, i, i] = diag[k, j, j] = 1.0
        eye = torch.eye(self.d, dtype=self.angles.dtype, device=self.angles.device)
        c = torch.cos(self.angles)[..., None, None]
        s = torch.sin(self.angles)[..., None, None]
        terms = (c - 1) * diag + s * units  # [..., m, d, d]
        w = None
        for members, _, _ in self._stages:
            factor = eye + terms.index_select(-3, members.to(terms.device)).sum(dim=-3)
            w = factor if w is None else w @ factor
        return w

    def generator(self) -> torch.Tensor:
        r"""The skew :math:`A = \sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})`, shape ``[..., d, d]``."""
        return givens_generator(self.angles, self.planes, self.d)

    def stage_generators(self) -> list[torch.Tensor]:
        r"""Skew :math:`B_1, \dots, B_s` (one per stage) with :math:`W = e^{B_1} e^{B_2} \cdots e^{B_s}` exactly.

        Within a stage the planes are disjoint, so the rotations commute and their product is the exponential of
        the summed generator.  :math:`\log W - A` is then the BCH remainder of these factors,
        :math:`\tfrac12\sum_{a<b}[B_a, B_b] + O(\theta^3)` (:func:`workbench.lie.bch_many`).

        Examples
        --------
        >>> import torch
        >>> W = givens_product(torch.tensor([0.1, 0.2, 0.3]), brick_planes(4, 2), 4)
        >>> B = W.stage_generators()
        >>> len(B), bool(torch.allclose(sum(B), W.generator()))
        (2, True)
        """
        out = []
        for members, _, _ in self._stages:
            members = members.to(self.angles.device)
            chosen = tuple(self.planes[int(k)] for k in members)
            out.append(givens_generator(self.angles.index_select(-1, members), chosen, self.d))
        return out


def givens_product(angles, planes: Sequence[tuple[int, int]], d: int) -> GivensProduct:
    r"""The product of plane rotations :math:`W = \prod_{k=1}^{m} G(i_k, j_k, \theta_k)` (left to right).

    .. math::

        G(i, j, \theta) = \exp\bigl(\theta (E_{ij} - E_{ji})\bigr)
        = I + (\cos\theta - 1)(E_{ii} + E_{jj}) + \sin\theta\,(E_{ij} - E_{ji}),

    the rotation by :math:`\theta` in the :math:`(i, j)` plane.  :math:`W` is orthogonal with determinant 1 for
    any angles; it equals :math:`e^{A}` with :math:`A` from :func:`givens_generator` when the planes are pairwise
    disjoint (the factors commute), and otherwise :math:`\log W = A + \tfrac12 \sum_{a<b} [B_a, B_b] + \dots`
    (BCH over the stages, :meth:`GivensProduct.stage_generators`), a defect of second order in the angles.

    Parameters
    ----------
    angles : torch.Tensor or array_like
        Shape ``[..., m]``; batch dimensions first.  Differentiable.
    planes : sequence of (int, int)
        ``m`` coordinate pairs ``(i, j)`` with ``i != j`` in ``[0, d - 1]`` (``(j, i)`` is the rotation by
        :math:`-\theta`).
    d : int
        Dimension, at least 2.

    Returns
    -------
    GivensProduct
        Apply it to vectors with ``W(x)`` / :meth:`GivensProduct.apply`; densify with
        :meth:`GivensProduct.as_matrix`.

    References
    ----------
    lie-exponential-roadmap (seed), "GivensFlowMixer": :math:`W = \prod_\ell R(i_\ell, j_\ell, \theta_\ell)`,
    "equivalent to :math:`\exp(A)` with :math:`A` skew" (exact when the rotations commute) [SEED, RECON];
    Golub & Van Loan §5.1.8.

    Examples
    --------
    >>> import torch
    >>> angles = torch.tensor([0.4, -0.9], dtype=torch.float64)
    >>> W = givens_product(angles, [(0, 1), (2, 3)], 4)  # disjoint planes: W = exp(A)
    >>> bool(torch.allclose(W.as_matrix(), torch.linalg.matrix_exp(W.generator()), atol=1e-15))
    True
    >>> x = torch.randn(5, 4, dtype=torch.float64)
    >>> bool(torch.allclose(W(x).norm(dim=-1), x.norm(dim=-1)))
    True
    """
    d = check_integer("d", d, 2)
    pairs = _check_planes(planes, d)
    return GivensProduct(angles, pairs, d)


def givens_generator(angles, planes: Sequence[tuple[int, int]], d: int) -> torch.Tensor:
    r"""The skew generator :math:`A = \sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})` of a list of plane rotations.

    Parameters
    ----------
    angles : torch.Tensor or array_like
        Shape ``[..., m]``.
    planes : sequence of (int, int)
        As in :func:`givens_product`; repeated planes add their angles.
    d : int
        Dimension, at least 2.

    Returns
    -------
    torch.Tensor
        Shape ``[..., d, d]``, skew-symmetric.

    References
    ----------
    lie-exponential-roadmap (seed), "parameterize :math:`A` via Givens flows (sum of plane rotations)" [SEED].

    Examples
    --------
    >>> import torch
    >>> givens_generator(torch.tensor([2.0, 5.0]), [(0, 2), (2, 0)], 3)
    tensor([[ 0.,  0., -3.],
            [ 0.,  0.,  0.],
            [ 3.,  0.,  0.]])
    """
    d = check_integer("d", d, 2)
    pairs = _check_planes(planes, d)
    angles = _as_angles(angles, len(pairs))
    units = _skew_units(pairs, d, angles)
    return torch.einsum("...k,kab->...ab", angles, units)


# ---- the mixer ---------------------------------------------------------------------------------------------


class GivensFlowMixer(nn.Module):
    r"""An exactly orthogonal mixer :math:`x \mapsto Wx`, :math:`W = \prod_k G(i_k, j_k, \theta_k)`, learned angles.

    .. math::

        W = \prod_{k=1}^{m} \exp\bigl(\theta_k (E_{i_kj_k} - E_{j_ki_k})\bigr) \in SO(d),
        \qquad \lVert Wx \rVert = \lVert x \rVert .

    ``mix="features"`` rotates the last axis of ``x`` (channel mixing, ``x`` of shape ``[..., d]``);
    ``mix="tokens"`` rotates the sequence axis (token mixing, ``x`` of shape ``[..., d, features]``, every
    feature column rotated by the same :math:`W \in SO(n)`, :math:`n = d`).  Either way the map is orthogonal on
    the mixed axis and the Frobenius norm of each sample is preserved.

    Parameters
    ----------
    d : int
        Size of the mixed axis (features, or tokens), at least 2.
    layers : int, optional
        Number of layers of planes; default ``d`` (then a brick wall has :math:`d(d-1)/2` planes).
    planes : {'brick', 'random'}
        Brick wall (:func:`brick_planes`) or random perfect matchings (:func:`random_planes`).
    mix : {'features', 'tokens'}
        Which axis is mixed.
    seed : int
        Seed of the random planes (``planes="random"`` only); the angles use torch's generator.

    Attributes
    ----------
    angles : torch.nn.Parameter
        Shape ``[m]``, initialised uniformly in :math:`[-\pi, \pi)`; zero them for the identity.
    planes : tuple of (int, int)

    References
    ----------
    lie-exponential-roadmap (seed), "GivensFlowMixer (exact orthogonality, fast)" and the drop-in token-mixing
    experiment (line 132) [SEED]; the brick-wall layout [RECON].

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> mixer = GivensFlowMixer(6, layers=3).double()
    >>> x = torch.randn(4, 6, dtype=torch.float64)
    >>> bool(torch.allclose(mixer(x).norm(dim=-1), x.norm(dim=-1), rtol=1e-14))
    True
    >>> Q = mixer.matrix()
    >>> bool((Q.mT @ Q - torch.eye(6, dtype=Q.dtype)).abs().max() < 1e-14)
    True
    >>> tokens = GivensFlowMixer(5, mix="tokens").double()
    >>> y = tokens(torch.randn(2, 5, 3, dtype=torch.float64))
    >>> tuple(y.shape)
    (2, 5, 3)
    """

    def __init__(
        self, d: int, layers: int | None = None, *, planes: str = "brick", mix: str = "features", seed: int = 0
    ):
        super().__init__()
        self.d = check_integer("d", d, 2)
        layers = self.d if layers is None else check_integer("layers", layers, 1)
        self.pattern = check_choice("planes", planes, ("brick", "random"))
        self.mix = check_choice("mix", mix, ("features", "tokens"))
        self.planes = brick_planes(self.d, layers) if planes == "brick" else random_planes(self.d, layers, seed)
        self.angles = nn.Parameter(torch.empty(len(self.planes)))
        nn.init.uniform_(self.angles, -math.pi, math.pi)

    def extra_repr(self) -> str:
        return f"d={self.d}, planes={self.pattern!r} ({len(self.planes)}), mix={self.mix!r}"

    def product(self, dtype: torch.dtype | None = None, device=None) -> GivensProduct:
        """The current :class:`GivensProduct` (angles cast to ``dtype``/``device`` when given)."""
        return GivensProduct(self.angles.to(dtype=dtype, device=device), self.planes, self.d)

    def _check(self, x) -> None:
        _check_layer_input(x)
        if self.mix == "features" and (x.ndim < 1 or x.shape[-1] != self.d):
            raise ValueError(f"x must have shape [..., {self.d}] (features mixed), got {tuple(x.shape)}")
        if self.mix == "tokens" and (x.ndim < 2 or x.shape[-2] != self.d):
            raise ValueError(f"x must have shape [..., {self.d}, features] (tokens mixed), got {tuple(x.shape)}")
        check_finite("x", x.detach())

    def forward(self, x: torch.Tensor, *, inverse: bool = False) -> torch.Tensor:
        r"""Rotate the mixed axis: :math:`y = Wx` (or :math:`y = W^{-1}x = W^\top x` when ``inverse``).

        .. math::

            W = \prod_{k=1}^{m} G(i_k, j_k, \theta_k), \qquad \lVert y \rVert = \lVert x \rVert,

        applied by two-row updates (:meth:`GivensProduct.apply`, :math:`O(\#\text{stages}\cdot d)` per vector), no
        dense matrix.  The angles are cast to the input's dtype and device, so the output has the dtype of ``x``.

        Parameters
        ----------
        x : torch.Tensor
            Real floating, finite; shape ``[..., d]`` (``mix="features"``) or ``[..., d, features]``
            (``mix="tokens"``).
        inverse : bool
            Apply :math:`W^\top` instead.

        Returns
        -------
        torch.Tensor
            Same shape and dtype as ``x``.

        Raises
        ------
        TypeError
            ``x`` is not a real floating-point tensor (e.g. integer or complex).
        ValueError
            ``x`` has the wrong shape or holds NaN/inf, or an angle is not finite.

        Examples
        --------
        >>> import torch
        >>> mixer = GivensFlowMixer(4, layers=2)
        >>> x = torch.randn(3, 4, dtype=torch.float64)
        >>> y = mixer(x)
        >>> bool(torch.allclose(mixer(y, inverse=True), x)), y.dtype
        (True, torch.float64)
        """
        self._check(x)
        w = self.product(x.dtype, x.device)
        if self.mix == "features":
            return w.apply(x, transpose=inverse)
        return w.apply(x.transpose(-1, -2), transpose=inverse).transpose(-1, -2)

    def matrix(self) -> torch.Tensor:
        r"""Dense :math:`W`, shape ``[d, d]`` (``y = W x`` on the mixed axis)."""
        return self.product().as_matrix()

    def generator(self) -> torch.Tensor:
        r"""The skew :math:`A = \sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})` (:math:`\log W` only to first order)."""
        return self.product().generator()


# ---- SPD maps ----------------------------------------------------------------------------------------------


def gershgorin_bound(S: torch.Tensor) -> torch.Tensor:
    r"""Gershgorin upper bound on the largest eigenvalue of a symmetric matrix, shape ``[..., d, d] -> [...]``.

    .. math::

        \lambda_{\max}(S) \le \max_i \Bigl(S_{ii} + \sum_{j \ne i} \lvert S_{ij} \rvert\Bigr).

    Every eigenvalue lies in a disc centred at some :math:`S_{ii}` of radius :math:`\sum_{j\ne i}|S_{ij}|`, so the
    bound is guaranteed (a certificate), costs :math:`O(d^2)`, and is differentiable almost everywhere (a max of
    piecewise-linear functions).  It is exact for diagonal :math:`S` and for
    :math:`S = \begin{pmatrix} a & b\\ b & a\end{pmatrix}`.

    Parameters
    ----------
    S : torch.Tensor
        Shape ``[..., d, d]`` with :math:`d \ge 1`, finite (the bound of a NaN or infinite entry would be
        meaningless, so it is rejected with a ``ValueError`` naming ``S``).

    Returns
    -------
    torch.Tensor
        Shape ``[...]``.

    References
    ----------
    Golub & Van Loan, *Matrix Computations*, Theorem 7.2.1 (Gershgorin).

    Examples
    --------
    >>> import torch
    >>> S = torch.tensor([[1.0, -2.0], [-2.0, 1.0]])
    >>> gershgorin_bound(S), torch.linalg.eigvalsh(S)[-1]
    (tensor(3.), tensor(3.))
    """
    if not isinstance(S, torch.Tensor):
        raise TypeError(f"S must be a torch tensor, got {type(S).__name__}")
    if S.ndim < 2 or S.shape[-1] != S.shape[-2] or S.shape[-1] < 1:
        raise ValueError(f"S must have shape [..., d, d] with d >= 1, got {tuple(S.shape)}")
    check_finite("S", S.detach())
    diagonal = S.diagonal(dim1=-2, dim2=-1)
    radius = S.abs().sum(dim=-1) - diagonal.abs()
    return (diagonal + radius).amax(dim=-1)


class SPDMap(nn.Module):
    r"""A symmetric positive-definite linear map :math:`x \mapsto e^{S}x`, with an optional Lipschitz cap.

    .. math::

        S = \tfrac12 (M + M^\top), \qquad
        S_L = c\,S,\quad c = \min\Bigl(1, \frac{\log L}{b(S)}\Bigr), \qquad W = e^{S_L} \succ 0,

    with :math:`b(S) \ge \lambda_{\max}(S)` the spectral bound.  Since :math:`\lambda_{\max}(cS) = c\,
    \lambda_{\max}(S) \le c\, b(S) \le \log L`,

    .. math::

        \lVert Wx - Wy \rVert \le \lVert W \rVert_2 \lVert x - y \rVert
        = e^{\lambda_{\max}(S_L)} \lVert x - y \rVert \le L \lVert x - y \rVert .

    The default bound is Gershgorin (:func:`gershgorin_bound`): a guaranteed upper bound, :math:`O(d^2)`,
    differentiable almost everywhere, so the cap certifies.  Power iteration is not used: a finite number of
    steps gives a Rayleigh quotient, a *lower* bound on :math:`\lambda_{\max}`, which certifies nothing.
    ``bound="eigvalsh"`` uses the exact :math:`\lambda_{\max}` (tight, :math:`O(d^3)`, gradient undefined at a
    repeated top eigenvalue).  Scaling (rather than shifting) keeps :math:`W = I` at :math:`S = 0` and needs
    :math:`L > 1`.

    Parameters
    ----------
    d : int
        Width, at least 2.
    lipschitz : float, optional
        The cap :math:`L > 1`; ``None`` for no cap.
    bound : {'gershgorin', 'eigvalsh'}
        The spectral bound :math:`b(S)` used for the cap.

    Attributes
    ----------
    weight : torch.nn.Parameter
        :math:`M`, shape ``[d, d]``, initialised :math:`\mathcal N(0, 1/d)`.

    References
    ----------
    lie-exponential-roadmap (seed), "SPD-MLP with Lipschitz control": :math:`W = \exp(S)`,
    :math:`\lambda_{\max}(S) \le \log L`, and :math:`\lVert W\rVert_2 = e^{\lambda_{\max}(S)}` (lines 31, 88–91)
    [SEED]; the scaling cap with a Gershgorin certificate [RECON].

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> layer = SPDMap(5, lipschitz=2.0).double()
    >>> with torch.no_grad():
    ...     _ = layer.weight.mul_(10.0)  # push the spectrum past the cap
    >>> eigenvalues = torch.linalg.eigvalsh(layer.matrix())
    >>> bool(eigenvalues.min() > 0), bool(eigenvalues.max() <= 2.0 * (1 + 1e-12))
    (True, True)
    """

    def __init__(self, d: int, lipschitz: float | None = None, *, bound: str = "gershgorin"):
        super().__init__()
        self.d = check_integer("d", d, 2)
        self.lipschitz = None if lipschitz is None else check_in_range("lipschitz", lipschitz, 1.0, low_inclusive=False)
        self.bound = check_choice("bound", bound, ("gershgorin", "eigvalsh"))
        self.weight = nn.Parameter(torch.randn(self.d, self.d) / math.sqrt(self.d))

    def extra_repr(self) -> str:
        return f"d={self.d}, lipschitz={self.lipschitz}, bound={self.bound!r}"

    def _spectral_bound(self, S: torch.Tensor) -> torch.Tensor:
        return gershgorin_bound(S) if self.bound == "gershgorin" else torch.linalg.eigvalsh(S)[..., -1]

    def generator(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r"""The capped symmetric generator :math:`S_L`, shape ``[d, d]``."""
        m = self.weight.to(dtype=dtype, device=device)
        S = 0.5 * (m + m.mT)
        if self.lipschitz is None:
            return S
        log_cap = math.log(self.lipschitz)
        scale = log_cap / torch.clamp(self._spectral_bound(S), min=log_cap)  # = 1 below the cap; no 0/0
        return scale * S

    def matrix(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r""":math:`W = e^{S_L}`, shape ``[d, d]`` (``torch.linalg.matrix_exp``, differentiable)."""
        return torch.linalg.matrix_exp(self.generator(dtype, device))

    def lipschitz_bound(self) -> float:
        r"""The certified constant :math:`e^{b(S_L)} \ge \lVert W \rVert_2` (at most ``lipschitz`` when capped)."""
        with torch.no_grad():
            return math.exp(float(self._spectral_bound(self.generator())))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r"""Apply the SPD map to the last axis: :math:`y = Wx`, :math:`W = e^{S_L}` (row vectors: ``y = x @ W``).

        .. math::

            y = e^{S_L} x, \qquad \lVert y - y' \rVert \le e^{\lambda_{\max}(S_L)} \lVert x - x' \rVert
            \le L \lVert x - x' \rVert \ \text{(capped)}.

        :math:`W` is formed densely in the input's dtype and device (``torch.linalg.matrix_exp``, differentiable).

        Parameters
        ----------
        x : torch.Tensor
            Shape ``[..., d]``, dtype float32 or float64, finite.

        Returns
        -------
        torch.Tensor
            Same shape and dtype as ``x``.

        Raises
        ------
        TypeError
            ``x`` is not float32/float64 (integer, complex or half precision).
        ValueError
            ``x`` has the wrong shape or holds NaN/inf.

        Examples
        --------
        >>> import torch
        >>> layer = SPDMap(3, lipschitz=2.0)
        >>> x, x2 = torch.randn(2, 3, dtype=torch.float64)
        >>> bool((layer(x) - layer(x2)).norm() <= 2.0 * (x - x2).norm())
        True
        """
        _check_layer_input(x, dtypes=_EXP_DTYPES)
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x must have last dimension {self.d}, got shape {tuple(x.shape)}")
        check_finite("x", x.detach())
        return x @ self.matrix(x.dtype, x.device)  # W symmetric: x W^T = x W


# ---- symplectic maps ---------------------------------------------------------------------------------------


def symplectic_form(d: int, *, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
    r"""The standard symplectic form :math:`J = \begin{pmatrix} 0 & I_n \\ -I_n & 0 \end{pmatrix}`, :math:`d = 2n`.

    Parameters
    ----------
    d : int
        Even dimension, at least 2.

    References
    ----------
    Hairer, Lubich & Wanner, *Geometric Numerical Integration*, §VI.2, Definition 2.2.

    Examples
    --------
    >>> symplectic_form(2)
    tensor([[ 0.,  1.],
            [-1.,  0.]])
    """
    d = check_integer("d", d, 2)
    if d % 2:
        raise ValueError(f"d must be an even integer >= 2, got {d}")
    n = d // 2
    J = torch.zeros(d, d, dtype=dtype, device=device)
    eye = torch.eye(n, dtype=J.dtype, device=device)
    J[:n, n:] = eye
    J[n:, :n] = -eye
    return J


class SymplecticMap(nn.Module):
    r"""A symplectic linear map :math:`x \mapsto Wx`, :math:`W = e^{JH}`, :math:`H = \tfrac12(M + M^\top)`.

    :math:`JH` is Hamiltonian, :math:`(JH)^\top J + J(JH) = -HJ^2 + J^2H = 0` (using :math:`J^\top = -J`,
    :math:`J^2 = -I`), so :math:`\tfrac{d}{dt}\bigl(e^{t(JH)^\top} J e^{tJH}\bigr) = 0` and

    .. math::

        W^\top J W = J, \qquad \det W = e^{\operatorname{tr}(JH)} = 1 .

    Parameters
    ----------
    d : int
        Phase-space dimension :math:`2n` (positions then momenta), even and at least 2.

    Attributes
    ----------
    weight : torch.nn.Parameter
        :math:`M`, shape ``[d, d]``, initialised :math:`\mathcal N(0, 1/d)`.

    References
    ----------
    lie-exponential-roadmap (seed), "make updates symplectic via :math:`W = \exp(A)` with Hamiltonian
    :math:`A`" (lines 28–29) [SEED]; Hairer, Lubich & Wanner §VI.2.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) and None
    >>> layer = SymplecticMap(4).double()
    >>> W, J = layer.matrix(), symplectic_form(4, dtype=torch.float64)
    >>> bool(torch.allclose(W.mT @ J @ W, J, atol=1e-13)), round(float(torch.linalg.det(W.detach())), 12)
    (True, 1.0)
    """

    def __init__(self, d: int):
        super().__init__()
        d = check_integer("d", d, 2)
        if d % 2:
            raise ValueError(f"d must be an even integer >= 2, got {d}")
        self.d = d
        self.weight = nn.Parameter(torch.randn(d, d) / math.sqrt(d))

    def extra_repr(self) -> str:
        return f"d={self.d}"

    def generator(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r"""The Hamiltonian generator :math:`JH`, shape ``[d, d]``."""
        m = self.weight.to(dtype=dtype, device=device)
        H = 0.5 * (m + m.mT)
        return symplectic_form(self.d, dtype=H.dtype, device=H.device) @ H

    def matrix(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r""":math:`W = e^{JH}`, shape ``[d, d]`` (``torch.linalg.matrix_exp``, differentiable)."""
        return torch.linalg.matrix_exp(self.generator(dtype, device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r"""Apply the symplectic map to the last axis: :math:`y = Wx`, :math:`W = e^{JH}` (``y = x @ W.mT``).

        .. math::

            y = e^{JH} x, \qquad \omega(y, y') = \omega(x, x'), \quad \omega(u, v) = u^\top J v .

        :math:`W` is formed densely in the input's dtype and device (``torch.linalg.matrix_exp``, differentiable).

        Parameters
        ----------
        x : torch.Tensor
            Shape ``[..., d]`` (positions then momenta), dtype float32 or float64, finite.

        Returns
        -------
        torch.Tensor
            Same shape and dtype as ``x``.

        Raises
        ------
        TypeError
            ``x`` is not float32/float64 (integer, complex or half precision).
        ValueError
            ``x`` has the wrong shape or holds NaN/inf.

        Examples
        --------
        >>> import torch
        >>> layer = SymplecticMap(4)
        >>> x, x2 = torch.randn(2, 4, dtype=torch.float64)
        >>> J = symplectic_form(4, dtype=torch.float64)
        >>> bool(torch.isclose(layer(x) @ J @ layer(x2), x @ J @ x2, atol=1e-12))
        True
        """
        _check_layer_input(x, dtypes=_EXP_DTYPES)
        if x.ndim < 1 or x.shape[-1] != self.d:
            raise ValueError(f"x must have last dimension {self.d}, got shape {tuple(x.shape)}")
        check_finite("x", x.detach())
        return x @ self.matrix(x.dtype, x.device).mT
