r"""One view of every operator ``expmv`` accepts: dense or sparse, numpy, scipy or torch.

The methods of :mod:`workbench.expmv` touch :math:`A` only through :class:`LinearMap`: block products
:math:`AX`, and the cheap facts they need to choose parameters — the 1-norm, the diagonal, whether
:math:`A` is symmetric or a Markov generator, and Gershgorin bounds on its spectrum.  Each method is
therefore written once against the array namespace of ``X`` and runs unchanged on numpy, on torch
CPU and on torch CUDA.

Structured operators (banded, Kronecker sums) join by providing the same small protocol:
``shape``, ``dtype``, ``matmat(X)`` and, optionally, ``one_norm()``, ``diagonal()``,
``is_symmetric()``, ``is_markov_generator()``, ``gershgorin()``, ``namespace()``.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, as_sparse, check_finite, is_sparse

__all__ = ["AccuracyWarning", "LinearMap", "as_linear_map"]


class AccuracyWarning(UserWarning):
    """An ``expmv`` method could not meet the requested tolerance; the message says what to change."""


def _is_linear_operator(a) -> bool:
    """A scipy LinearOperator, or a subclass defined anywhere (checked without importing scipy eagerly)."""
    return any(
        cls.__name__ == "LinearOperator" and cls.__module__.startswith("scipy.sparse.linalg") for cls in type(a).__mro__
    )


def _is_torch_sparse(a) -> bool:
    if not array_api_compat.is_torch_array(a):
        return False
    import torch

    return a.layout != torch.strided


class LinearMap:
    """A square operator :math:`A` seen through block products and a few cheap facts.

    Build one with :func:`as_linear_map`.  ``kind`` is ``"dense"``, ``"scipy-sparse"``,
    ``"torch-sparse"``, ``"linear-operator"`` or ``"structured"``.
    """

    def __init__(self, a, kind: str):
        self.a = a
        self.kind = kind
        self.n = int(a.shape[0])
        self._facts: dict[str, object] = {}

    # ---- products --------------------------------------------------------------------------

    def matmat(self, x):
        """Return :math:`AX` for a block ``x`` of shape ``[n, k]`` (same library and device as ``x``)."""
        if self.kind == "linear-operator":
            return self.a.matmat(x)
        if self.kind == "structured":
            return self.a.matmat(x)
        return self.a @ x

    @property
    def dtype(self):
        """The element type of the operator's data."""
        return self.a.dtype

    def namespace(self):
        """The array namespace products live in (numpy for scipy operators)."""
        if self.kind == "dense":
            return namespace(self.a)
        if self.kind == "torch-sparse":
            import array_api_compat.torch as xp_torch

            return xp_torch
        if self.kind == "structured" and hasattr(self.a, "namespace"):
            return self.a.namespace()
        return namespace(np.empty(0))

    # ---- facts ------------------------------------------------------------------------------

    def _host_sparse(self):
        """A scipy CSR copy of an explicit operator (for facts computed once on the host)."""
        import scipy.sparse

        if "host" not in self._facts:
            if self.kind == "scipy-sparse":
                host = self.a
            elif self.kind == "torch-sparse":
                a = self.a.detach().cpu()
                host = scipy.sparse.csr_array(
                    (a.values().numpy(), a.col_indices().numpy(), a.crow_indices().numpy()), shape=a.shape
                )
            else:
                host = scipy.sparse.csr_array(to_numpy(self.a))
            self._facts["host"] = host
        return self._facts["host"]

    def explicit(self) -> bool:
        """Whether the entries of :math:`A` are available (not only its action)."""
        return self.kind in ("dense", "scipy-sparse", "torch-sparse")

    def one_norm(self) -> float:
        r""":math:`\lVert A\rVert_1` (exact for explicit and structured operators, estimated otherwise)."""
        if "one_norm" not in self._facts:
            if self.kind == "structured":
                value = float(self.a.one_norm())
            elif self.kind == "linear-operator":
                value = _one_norm_of_action(self.a)
            elif self.kind == "dense":
                xp = namespace(self.a)
                value = float(xp.max(xp.sum(xp.abs(self.a), axis=0))) if self.n else 0.0
            else:
                host = self._host_sparse()
                value = float(abs(host).sum(axis=0).max()) if host.nnz else 0.0
            self._facts["one_norm"] = value
        return self._facts["one_norm"]

    def diagonal(self) -> np.ndarray:
        """The diagonal of :math:`A` on the host, or ``None`` when only the action is known."""
        if self.kind == "structured":
            return to_numpy(self.a.diagonal()) if hasattr(self.a, "diagonal") else None
        if not self.explicit():
            return None
        if self.kind == "dense":
            return to_numpy(namespace(self.a).linalg.diagonal(self.a))
        return np.asarray(self._host_sparse().diagonal())

    def is_symmetric(self, rtol: float = 1e-12) -> bool:
        r"""Whether :math:`A = A^\\top` to ``rtol`` relative (False when it cannot be checked)."""
        if "symmetric" not in self._facts:
            if self.kind == "structured":
                value = bool(self.a.is_symmetric()) if hasattr(self.a, "is_symmetric") else False
            elif not self.explicit():
                value = False
            elif self.kind == "dense":
                xp = namespace(self.a)
                gap = float(xp.max(xp.abs(self.a - xp.matrix_transpose(self.a)))) if self.n else 0.0
                value = gap <= rtol * max(float(xp.max(xp.abs(self.a))) if self.n else 0.0, 1e-300)
            else:
                host = self._host_sparse()
                gap = abs(host - host.T)
                value = (gap.max() if gap.nnz else 0.0) <= rtol * max(abs(host).max() if host.nnz else 0.0, 1e-300)
            self._facts["symmetric"] = bool(value)
        return self._facts["symmetric"]

    def is_markov_generator(self, atol: float | None = None) -> bool:
        r"""Whether :math:`A` has nonnegative off-diagonal rates and zero row sums (to ``atol`` × max rate)."""
        if atol is None:  # rounding of a row sum: ~1e-16 per entry in float64, ~1e-7 in float32
            atol = 1e-5 if "float32" in str(self.dtype) else 1e-10
        if "markov" not in self._facts:
            if self.kind == "structured":
                value = bool(self.a.is_markov_generator()) if hasattr(self.a, "is_markov_generator") else False
            elif not self.explicit():
                value = False
            else:
                host = self._host_sparse().tocoo()
                off = host.row != host.col
                scale = max(float(np.abs(host.data).max()) if host.nnz else 0.0, 1e-300)
                sums = np.asarray(self._host_sparse().sum(axis=1)).ravel()
                value = (not off.any() or host.data[off].min() >= -atol * scale) and np.abs(sums).max(
                    initial=0.0
                ) <= atol * scale
            self._facts["markov"] = bool(value)
        return self._facts["markov"]

    def gershgorin(self) -> tuple[float, float]:
        r"""Gershgorin bounds :math:`[\min_i (a_{ii} - r_i), \max_i (a_{ii} + r_i)]` on a real spectrum."""
        if "gershgorin" not in self._facts:
            if self.kind == "structured" and hasattr(self.a, "gershgorin"):
                value = tuple(float(v) for v in self.a.gershgorin())
            elif not self.explicit():
                bound = self.one_norm()
                value = (-bound, bound)
            else:
                host = self._host_sparse()
                d = np.asarray(host.diagonal())
                radius = np.asarray(abs(host).sum(axis=1)).ravel() - np.abs(d)
                value = (float(np.min(d - radius)), float(np.max(d + radius)))
            self._facts["gershgorin"] = value
        return self._facts["gershgorin"]


def _one_norm_of_action(a) -> float:
    r""":math:`\lVert A\rVert_1` of a LinearOperator: Higham–Tisseur estimate, or a lower bound without ``rmatvec``.

    ``onenormest`` needs products with :math:`A^\top`; an operator that only defines ``matvec`` gets
    :math:`\max_x \lVert Ax\rVert_1/\lVert x\rVert_1` over the unit vectors :math:`e_1, e_n` and
    eight seeded sign vectors (a lower bound, as the estimate is).
    """
    from scipy.sparse.linalg import onenormest

    try:
        return float(onenormest(a))
    except (NotImplementedError, TypeError, ValueError):
        n = int(a.shape[0])
        rng = np.random.default_rng(0)
        probes = np.zeros((n, 10))
        probes[0, 0] = probes[-1, 1] = 1.0
        probes[:, 2:] = rng.choice([-1.0, 1.0], size=(n, 8)) / n
        images = np.column_stack([a.matvec(probes[:, j]) for j in range(probes.shape[1])])
        return float(np.max(np.abs(images).sum(axis=0) / np.abs(probes).sum(axis=0)))


def as_linear_map(a, name: str = "A") -> LinearMap:
    """Wrap ``a`` (dense numpy/torch, scipy sparse, torch sparse CSR/COO, LinearOperator, structured) as a :class:`LinearMap`.

    Raises
    ------
    TypeError
        For anything that is not a supported operator.
    ValueError
        For a non-square or non-finite operator.
    """  # noqa: E501
    if isinstance(a, LinearMap):
        return a
    if is_sparse(a):
        a = as_sparse(name, a)
        kind = "scipy-sparse"
    elif _is_torch_sparse(a):
        import torch

        if a.is_complex():
            raise TypeError(f"{name} must be real-valued, got dtype {a.dtype}")
        a = a.to_sparse_csr() if a.layout != torch.sparse_csr else a
        if not bool(torch.isfinite(a.values()).all()):
            raise ValueError(f"{name} must be finite, got non-finite stored entries")
        kind = "torch-sparse"
    elif _is_linear_operator(a):
        kind = "linear-operator"
    elif hasattr(a, "matmat") and hasattr(a, "shape") and not hasattr(a, "__array__"):
        kind = "structured"
    else:
        a = as_array(name, a, ndim=2)
        kind = "dense"
    shape = tuple(int(s) for s in a.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square matrix (shape [n, n]), got shape {shape}")
    if kind == "dense":
        check_finite(name, a)
    return LinearMap(a, kind)
