r"""One view of every operator ``expmv`` accepts: dense or sparse, numpy, scipy or torch.

The methods of :mod:`workbench.expmv` touch :math:`A` only through :class:`LinearMap`: block products
:math:`AX`, and the cheap facts they need to choose parameters — the 1-norm, the diagonal, whether
:math:`A` is symmetric or a Markov generator, and Gershgorin bounds on its spectrum.  Each method is
therefore written once against the array namespace of ``X`` and runs unchanged on numpy, on torch
CPU and on torch CUDA.

Structured operators (banded, Kronecker sums) join by providing the same small protocol:
``shape``, ``dtype``, ``matmat(X)`` and, optionally, ``one_norm()``, ``diagonal()``,
``is_symmetric()``, ``is_markov_generator()``, ``gershgorin()``, ``namespace()``, ``to_scipy()``.

What each kind of operator offers (its entries on the host, a transpose, a dense copy) is known here
and nowhere else: the methods ask :class:`LinearMap`, never its ``kind``.
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
        if self.kind in ("linear-operator", "structured"):
            y = self.a.matmat(x)
            if getattr(getattr(y, "dtype", None), "kind", "f") == "c":
                raise TypeError(
                    f"A must be real-valued: its action returned dtype {y.dtype} for a {x.dtype} block "
                    "(complex A is not supported; scipy.sparse.linalg.expm_multiply handles complex data)"
                )
            return y
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

    @property
    def action_only(self) -> bool:
        """Whether :math:`A` is a scipy ``LinearOperator``: known only through its action (no entries, no structure)."""
        return self.kind == "linear-operator"

    @property
    def scipy_matrix(self):
        """The scipy sparse array when :math:`A` is one, else ``None``."""
        return self.a if self.kind == "scipy-sparse" else None

    def check_operand(self, b) -> None:
        """Raise ``TypeError`` unless the block ``b`` lives where products with :math:`A` do.

        Dense :math:`A` and ``b`` must share an array library; scipy operators act on numpy arrays and
        torch sparse ones on torch tensors; an explicit :math:`A` must have ``b``'s floating type.
        """
        if self.kind == "dense":
            namespace(self.a, b)
        elif self.kind in ("scipy-sparse", "linear-operator") and array_api_compat.is_torch_array(b):
            raise TypeError(f"a scipy operator A acts on numpy arrays; got B as a torch tensor on {b.device}")
        elif self.kind == "torch-sparse" and not array_api_compat.is_torch_array(b):
            raise TypeError("a torch sparse A acts on torch tensors; got B as a numpy array")
        if self.explicit() and str(self.dtype) != str(b.dtype):
            raise TypeError(
                f"A and B must have the same floating type, got A {self.dtype} and B {b.dtype}; convert one of them"
            )

    def transpose_action(self):
        r"""A function computing :math:`A^\top X`, or ``None`` when the operator offers none.

        Explicit operators transpose their entries, a ``LinearOperator`` lends its ``rmatmat``, and a
        symmetric operator is its own transpose.
        """
        if self.kind == "dense":
            a_t = namespace(self.a).matrix_transpose(self.a)
            return lambda x: a_t @ x
        if self.kind == "scipy-sparse":
            a_t = self.a.T.tocsr()
            return lambda x: a_t @ x
        if self.kind == "torch-sparse":
            a_t = self.a.t()
            return lambda x: a_t @ x
        if self.kind == "linear-operator" and getattr(self.a, "rmatmat", None) is not None:
            return self.a.rmatmat
        if self.is_symmetric():
            return self.matmat
        return None

    # ---- entries ----------------------------------------------------------------------------

    def host_sparse(self):
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

    def host_matrix(self, *, strict: bool = True):
        """A scipy sparse copy of an explicit or structured operator, or ``None`` when it has no entries.

        Structured operators give theirs through ``to_scipy()``; with ``strict=False`` one whose
        ``to_scipy()`` declines (a ``ValueError``, e.g. a Kronecker sum of a ``LinearOperator``) gives ``None``.
        """
        if self.explicit():
            return self.host_sparse()
        if self.kind == "structured" and hasattr(self.a, "to_scipy"):
            if strict:
                return self.a.to_scipy()
            try:
                return self.a.to_scipy()
            except ValueError:
                return None
        return None

    def host_dense(self) -> np.ndarray:
        """A float64 numpy copy of an explicit operator (small n only)."""
        if self.kind == "dense":
            return np.asarray(to_numpy(self.a), dtype=np.float64)
        if self.kind == "scipy-sparse":
            return self.a.toarray().astype(np.float64)
        return np.asarray(to_numpy(self.a.to_dense()), dtype=np.float64)

    def dense(self, like):
        """:math:`A` as a dense matrix in the library, dtype and device of ``like``, or ``None`` without entries."""
        xp = namespace(like)
        host = self.host_matrix(strict=False) if self.kind != "dense" else None
        if not (self.kind == "dense" or host is not None):
            return None
        if self.kind == "dense" and namespace(self.a) is xp:
            return xp.astype(self.a, like.dtype)
        dense = host.toarray() if host is not None else to_numpy(self.a)
        return xp.asarray(dense, dtype=like.dtype, device=array_api_compat.device(like))

    def abs_column_sums_and_diagonal(self):
        r"""Column sums of :math:`|A|` and the diagonal, as host float64 vectors (``(None, None)`` unless explicit).

        One pass over the stored entries: the exact :math:`\lVert A - \mu I\rVert_1` for every shift
        follows, :math:`\max_j \bigl(\sum_i |a_{ij}| - |a_{jj}| + |a_{jj} - \mu|\bigr)`.
        """
        if self.kind == "dense":
            xp = namespace(self.a)
            columns = to_numpy(xp.sum(xp.abs(self.a), axis=0))
            diag = to_numpy(xp.linalg.diagonal(self.a))
        elif self.kind in ("scipy-sparse", "torch-sparse"):
            host = self.host_sparse().tocsr()
            columns = np.bincount(host.indices, weights=np.abs(host.data), minlength=self.n)
            diag = host.diagonal()
        else:
            return None, None
        return np.asarray(columns, dtype=np.float64), np.asarray(diag, dtype=np.float64)

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
                host = self.host_sparse()
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
        return np.asarray(self.host_sparse().diagonal())

    def is_symmetric(self, rtol: float = 1e-12) -> bool:
        r"""Whether :math:`A = A^\top` to ``rtol`` relative (False when it cannot be checked)."""
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
                host = self.host_sparse()
                gap = abs(host - host.T)
                value = (gap.max() if gap.nnz else 0.0) <= rtol * max(abs(host).max() if host.nnz else 0.0, 1e-300)
            self._facts["symmetric"] = bool(value)
        return self._facts["symmetric"]

    def surely_asymmetric(self) -> bool:
        r"""A cheap look that settles most non-symmetric explicit operators before :meth:`is_symmetric`.

        :meth:`is_symmetric` asks :math:`|a_{ij} - a_{ji}| \le r\max|a|` (:math:`r = 10^{-12}`).
        Dense: row 0 against column 0, :math:`O(n)`.  Sparse: that test implies
        :math:`|\sum_j a_{ij} - \sum_j a_{ji}| \le r\max|a|\,(\text{nnz of row } i + \text{of column } i)`,
        checked in one pass over the entries instead of forming :math:`A - A^\top`.
        """
        rtol = 1e-12
        if self.n == 0:
            return False
        if self.kind == "dense":
            xp = namespace(self.a)
            gap = float(xp.max(xp.abs(self.a[0, :] - self.a[:, 0])))
            return gap > rtol * self.one_norm()
        if self.kind in ("scipy-sparse", "torch-sparse"):
            host = self.host_sparse().tocsr()
            if host.nnz == 0:
                return False
            rows = np.repeat(np.arange(self.n), np.diff(host.indptr))
            gap = np.abs(np.bincount(rows, host.data, self.n) - np.bincount(host.indices, host.data, self.n))
            counts = np.diff(host.indptr) + np.bincount(host.indices, minlength=self.n)
            return bool(np.any(gap > rtol * np.abs(host.data).max() * counts))
        return False

    def exactly_symmetric(self) -> bool:
        r"""Dense :math:`A = A^\top` entry for entry: one comparison pass, the common case ((X + Xᵀ)/2 is exact)."""
        if self.kind != "dense":
            return False
        xp = namespace(self.a)
        return bool(xp.all(self.a == xp.matrix_transpose(self.a)))

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
                host = self.host_sparse().tocoo()
                off = host.row != host.col
                scale = max(float(np.abs(host.data).max()) if host.nnz else 0.0, 1e-300)
                sums = np.asarray(self.host_sparse().sum(axis=1)).ravel()
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
                host = self.host_sparse()
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
        if np.dtype(a.dtype).kind not in "fiub":
            # The methods run in real arithmetic; a complex operator would lose its imaginary part.
            raise TypeError(
                f"{name} must be real-valued, got a LinearOperator of dtype {np.dtype(a.dtype)} "
                "(complex A is not supported; scipy.sparse.linalg.expm_multiply handles complex data)"
            )
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
