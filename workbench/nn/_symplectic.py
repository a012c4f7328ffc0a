r"""Symplectic maps: :math:`x \mapsto e^{JH}x` with :math:`H` symmetric preserves the standard form :math:`J`.

.. math::

    (JH)^\top J + J(JH) = 0 \;\Rightarrow\; (e^{JH})^\top J e^{JH} = J .

symplectic_form  -- the standard form J = [[0, I_n], [-I_n, 0]], d = 2n
SymplecticMap    -- exp(JH) x for a learned symmetric H: exactly symplectic

References
----------
Lie-Exponential Roadmap, "Structure by construction" and the symplectic channel-mixing items [SEED].
E. Hairer, C. Lubich and G. Wanner, *Geometric Numerical Integration*, §VI.2 (symplectic maps).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from workbench.nn._primitives import EXP_DTYPES, check_dtype_device, check_exp_map_input, check_width

__all__ = ["SymplecticMap", "symplectic_form"]


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
    d = check_width("d", d, 2, matrices=3)
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
    Lie-Exponential Roadmap, "make updates symplectic via :math:`W = \exp(A)` with Hamiltonian
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
        d = check_width("d", d, 2, matrices=3)
        if d % 2:
            raise ValueError(f"d must be an even integer >= 2, got {d}")
        self.d = d
        self.weight = nn.Parameter(torch.randn(d, d) / math.sqrt(d))

    def extra_repr(self) -> str:
        return f"d={self.d}"

    def generator(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r"""The Hamiltonian generator :math:`JH`, shape ``[d, d]``.

        ``dtype`` (float32 or float64) and ``device`` as in ``Tensor.to``; ``None`` keeps the weight's.
        """
        return self._generator(*check_dtype_device(dtype, device, dtypes=EXP_DTYPES))

    def _generator(self, dtype, device) -> torch.Tensor:
        m = self.weight.to(dtype=dtype, device=device)
        H = 0.5 * (m + m.mT)
        return symplectic_form(self.d, dtype=H.dtype, device=H.device) @ H

    def matrix(self, dtype: torch.dtype | None = None, device=None) -> torch.Tensor:
        r""":math:`W = e^{JH}`, shape ``[d, d]`` (``torch.linalg.matrix_exp``, differentiable); arguments as :meth:`generator`."""  # noqa: E501
        return torch.linalg.matrix_exp(self._generator(*check_dtype_device(dtype, device, dtypes=EXP_DTYPES)))

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
        check_exp_map_input(x, self.d)
        return x @ torch.linalg.matrix_exp(self._generator(x.dtype, x.device)).mT
