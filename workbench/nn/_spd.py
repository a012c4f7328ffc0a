r"""SPD maps: :math:`x \mapsto e^{S}x` with :math:`S` symmetric, and a certified Lipschitz cap.

.. math::

    S^\top = S \;\Rightarrow\; e^{S} \succ 0,\ \lVert e^{S}\rVert_2 = e^{\lambda_{\max}(S)},

so a cap :math:`\lVert e^{S}\rVert_2 \le L` follows from any upper bound of :math:`\lambda_{\max}(S)`; the
Gershgorin bound is one that is guaranteed and costs :math:`O(d^2)`.

gershgorin_bound  -- max_i (S_ii + sum_{j != i} |S_ij|) >= lambda_max(S), differentiable almost everywhere
SPDMap            -- exp(S) x, S symmetric, with an optional Lipschitz cap certified by the bound

References
----------
Lie-Exponential Roadmap, the SPD channel-mixing items and "SPD-MLP with Lipschitz control" [SEED];
the Gershgorin cap is written out here [RECON].  G. H. Golub and C. F. Van Loan, *Matrix Computations*,
4th ed., §7.2.1 (Gershgorin).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from workbench.nn._primitives import EXP_DTYPES, check_dtype_device, check_exp_map_input, check_width
from workbench.validation import check_choice, check_finite, check_in_range

__all__ = ["SPDMap", "gershgorin_bound"]


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
        S_L = c\,S,\quad c = \frac{\log L}{\max\bigl(b(S), \log L\bigr)}, \qquad W = e^{S_L} \succ 0,

    with :math:`b(S) \ge \lambda_{\max}(S)` the spectral bound and :math:`L > 1`, so that :math:`c \in (0, 1]` for a
    bound of either sign (:math:`c = 1` below the cap).  The form :math:`\min(1, \log L / b(S))` agrees only for
    :math:`b(S) > 0`: a negative bound makes it negative, which flips the spectrum (:math:`S = \operatorname{diag}
    (-1, -10)`, :math:`L = 2` would give :math:`\lVert W\rVert_2 = 1024`).  Since :math:`\lambda_{\max}(cS) = c\,
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
    Lie-Exponential Roadmap, "SPD-MLP with Lipschitz control": :math:`W = \exp(S)`,
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
        self.d = check_width("d", d, 2, matrices=3)
        self.lipschitz = None if lipschitz is None else check_in_range("lipschitz", lipschitz, 1.0, low_inclusive=False)
        self.bound = check_choice("bound", bound, ("gershgorin", "eigvalsh"))
        self.weight = nn.Parameter(torch.randn(self.d, self.d) / math.sqrt(self.d))

    def extra_repr(self) -> str:
        return f"d={self.d}, lipschitz={self.lipschitz}, bound={self.bound!r}"

    def _spectral_bound(self, S: torch.Tensor) -> torch.Tensor:
        return gershgorin_bound(S) if self.bound == "gershgorin" else torch.linalg.eigvalsh(S)[..., -1]

    def generator(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r"""The capped symmetric generator :math:`S_L`, shape ``[d, d]``.

        ``dtype`` (float32 or float64) and ``device`` as in ``Tensor.to``; ``None`` keeps the weight's.
        """
        return self._generator(*check_dtype_device(dtype, device, dtypes=EXP_DTYPES))

    def _generator(self, dtype, device) -> torch.Tensor:
        m = self.weight.to(dtype=dtype, device=device)
        S = 0.5 * (m + m.mT)
        if self.lipschitz is None:
            return S
        log_cap = math.log(self.lipschitz)
        scale = log_cap / torch.clamp(self._spectral_bound(S), min=log_cap)  # = 1 below the cap; no 0/0
        return scale * S

    def matrix(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r""":math:`W = e^{S_L}`, shape ``[d, d]`` (``torch.linalg.matrix_exp``, differentiable); arguments as :meth:`generator`."""  # noqa: E501
        return torch.linalg.matrix_exp(self._generator(*check_dtype_device(dtype, device, dtypes=EXP_DTYPES)))

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
        check_exp_map_input(x, self.d)
        return x @ torch.linalg.matrix_exp(self._generator(x.dtype, x.device))  # W symmetric: x W^T = x W
