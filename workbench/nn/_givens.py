r"""Givens flows: exactly orthogonal mixing by products of plane rotations, applied by two-row updates.

:class:`GivensFlowMixer` composes plane rotations :math:`G(i, j, \theta) = \exp\bigl(\theta(E_{ij} - E_{ji})\bigr)`
on a brick-wall (or random) pattern of planes, applied by indexed two-row updates (:func:`givens_product`), never
as a dense matrix; it equals :math:`e^{A}` for the skew generator :math:`A = \sum_k \theta_k (E_{i_kj_k} -
E_{j_ki_k})` (:func:`givens_generator`) when the planes are pairwise disjoint, and differs from it at second
order in the angles (BCH) otherwise.

GivensProduct    -- a product of plane rotations: apply, transpose, dense matrix, stage generators
givens_product   -- the product of the rotations of given angles on given planes
givens_generator -- the skew generator sum_k theta_k (E_{i_k j_k} - E_{j_k i_k}) of those rotations
GivensFlowMixer  -- exactly orthogonal token or feature mixing by a learned Givens product

References
----------
Lie-Exponential Roadmap, "Structure by construction", the orthogonal channel-mixing items and
"GivensFlowMixer (exact orthogonality, fast)" [SEED]; the formula for :math:`G(i, j, \theta)` is written out
here [RECON].  G. H. Golub and C. F. Van Loan, *Matrix Computations*, 4th ed., §5.1.8 (Givens rotations).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from workbench.backend import check_view_size, host_array
from workbench.memory import check_memory
from workbench.nn._planes import brick_planes, check_planes, random_planes
from workbench.nn._primitives import check_dtype_device, check_layer_input
from workbench.validation import check_choice, check_finite, check_flag, check_integer

__all__ = ["GivensFlowMixer", "GivensProduct", "givens_generator", "givens_product"]


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
    check_view_size("angles", angles)
    if not isinstance(angles, torch.Tensor):
        host = host_array("angles", angles)
        if host.dtype.kind not in "iuf":
            raise TypeError(f"angles must be real numbers (a tensor or array_like), got {type(angles).__name__}")
        angles = torch.as_tensor(host.astype(np.float64))
    if not angles.is_floating_point():
        raise TypeError(f"angles must be a real floating tensor, got dtype {angles.dtype}")
    if angles.ndim < 1 or angles.shape[-1] != m:
        raise ValueError(f"angles must have last dimension {m} (one angle per plane), got shape {tuple(angles.shape)}")
    check_finite("angles", angles.detach())
    return angles


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
    Lie-Exponential Roadmap, "GivensFlowMixer": "compose :math:`m` such rotations" [SEED].

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
        Batch dimensions of ``x`` and of the angles broadcast.  ``x`` is a finite floating (or complex) tensor
        on the device of the angles (a ``TypeError`` or ``ValueError`` naming ``x`` otherwise).

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
        if x.device != self.angles.device:
            raise TypeError(f"x must be on the device of the angles ({self.angles.device}), got {x.device}")
        check_finite("x", x.detach())
        return self._apply(x, transpose=check_flag("transpose", transpose))

    def _apply(self, x: torch.Tensor, *, transpose: bool = False) -> torch.Tensor:
        # The product for inputs GivensFlowMixer.forward has checked (once per forward, not once per call here).
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
    Lie-Exponential Roadmap, "GivensFlowMixer": :math:`W = \prod_\ell R(i_\ell, j_\ell, \theta_\ell)`,
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
    check_memory(f"the stage plan of d = {d} coordinates", 24.0 * d)
    pairs = check_planes(planes, d)
    # each stage holds three index arrays of length <= d
    check_memory(f"the stage plan of {len(pairs)} planes on d = {d} coordinates", 24.0 * d * len(pairs))
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
    Lie-Exponential Roadmap, "parameterize :math:`A` via Givens flows (sum of plane rotations)" [SEED].

    Examples
    --------
    >>> import torch
    >>> givens_generator(torch.tensor([2.0, 5.0]), [(0, 2), (2, 0)], 3)
    tensor([[ 0.,  0., -3.],
            [ 0.,  0.,  0.],
            [ 3.,  0.,  0.]])
    """
    d = check_integer("d", d, 2)
    pairs = check_planes(planes, d)
    check_memory(f"{len(pairs)} d×d plane generators (d = {d})", 8.0 * len(pairs) * d * d)
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
    Lie-Exponential Roadmap, "GivensFlowMixer (exact orthogonality, fast)" and the drop-in token-mixing
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
        """The current :class:`GivensProduct` (angles cast to ``dtype``/``device`` when given).

        ``dtype`` is a floating torch dtype and ``device`` anything ``torch.device`` accepts; ``None`` keeps
        the angles'.
        """
        dtype, device = check_dtype_device(dtype, device)
        return self._product(dtype, device)

    def _product(self, dtype, device) -> GivensProduct:
        return GivensProduct(self.angles.to(dtype=dtype, device=device), self.planes, self.d)

    def _check(self, x) -> None:
        check_layer_input(x)
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
        inverse = check_flag("inverse", inverse)
        w = self._product(x.dtype, x.device)
        if self.mix == "features":
            return w._apply(x, transpose=inverse)
        return w._apply(x.transpose(-1, -2), transpose=inverse).transpose(-1, -2)

    def matrix(self) -> torch.Tensor:
        r"""Dense :math:`W`, shape ``[d, d]`` (``y = W x`` on the mixed axis)."""
        return self.product().as_matrix()

    def generator(self) -> torch.Tensor:
        r"""The skew :math:`A = \sum_k \theta_k (E_{i_kj_k} - E_{j_ki_k})` (:math:`\log W` only to first order)."""
        return self.product().generator()
