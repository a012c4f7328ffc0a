r"""One view of every operator ``expmv`` accepts: dense or sparse, numpy, scipy or torch.

The methods of :mod:`workbench.expmv` touch :math:`A` only through :class:`LinearMap`: block products
:math:`AX`, and the cheap facts they need to choose parameters — the 1-norm, the diagonal, whether
:math:`A` is symmetric or a Markov generator, and Gershgorin bounds on its spectrum.  Each method is
therefore written once against the array namespace of ``X`` and runs unchanged on numpy, on torch
CPU and on torch CUDA.

Structured operators (banded, Kronecker sums) join by providing the same small protocol:
``shape``, ``dtype``, ``matmat(X)`` and, optionally, ``one_norm()``, ``diagonal()``,
``is_symmetric()``, ``is_markov_generator()``, ``gershgorin()``, ``namespace()``, ``to_scipy()``.

Products come in two doors.  The public ``matmat`` of :class:`LinearMap` (and of the package's
structured operators) checks its operand — numeric, finite, shape ``[n]`` or ``[n, k]``, in the array
library of the operator — and promotes it to the common dtype.  The methods call the unchecked
``_matmat`` on blocks they built themselves, so the check is not repeated at every step of a series.

What each kind of operator offers (its entries on the host, a transpose, a dense copy) is known here
and nowhere else: the methods ask :class:`LinearMap`, never its ``kind``.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.validation import check_choice, check_finite, check_in_range, check_matching, is_sparse

__all__ = ["AccuracyWarning", "LinearMap", "as_linear_map"]


class AccuracyWarning(UserWarning):
    """An ``expmv`` method could not meet the requested tolerance; the message says what to change."""


# ---- dtypes ---------------------------------------------------------------------------------------


def _numpy_compute_dtype(dtype, name: str) -> np.dtype:
    """The dtype an operand of numpy ``dtype`` is computed in: integers and bools as float64, float16 as float32."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    if dtype == np.float16:
        return np.dtype(np.float32)
    if dtype.kind in "fc":
        if dtype.itemsize > (8 if dtype.kind == "f" else 16):
            raise TypeError(
                f"{name} must have at most double precision (float32, float64, complex64 or complex128), got "
                f"dtype {dtype}; extended precision is not carried through the methods (convert with "
                ".astype(np.float64) or np.complex128)"
            )
        return dtype
    raise TypeError(f"{name} must be a numeric array (bool, integer, float or complex), got dtype {dtype}")


def as_operand(name: str, x, *, keep_integers: bool = False):
    """``x`` as a numeric array of its own library: integers and bools become float64 and float16 float32.

    Complex data is kept (unlike :func:`workbench.validation.as_array`); entries must be finite.  With
    ``keep_integers`` integer and bool data keep their dtype, for :func:`result_dtype` to promote (a block
    ``B`` of int8 with float32 :math:`A` is computed in float32, as scipy does).

    Raises
    ------
    TypeError
        For a non-numeric array or one in extended precision.
    ValueError
        For non-finite entries.

    Examples
    --------
    >>> import numpy as np
    >>> as_operand("B", [1, 2]).dtype, as_operand("B", np.array([1j], dtype=np.complex64)).dtype
    (dtype('float64'), dtype('complex64'))
    """
    namespace(**{name: x})  # rejects foreign array libraries, naming the parameter
    if array_api_compat.is_torch_array(x):
        import torch

        if x.dtype in (torch.float16, torch.bfloat16):
            x = x.float()
        elif not (x.is_floating_point() or x.is_complex() or keep_integers):
            x = x.double()
        elif x.dtype == torch.complex32:
            x = x.to(torch.complex64)
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as exc:
            raise TypeError(f"{name} must be a numeric array, got {type(x).__name__}") from exc
        keep = keep_integers and arr.dtype.kind in "iub"
        x = arr if keep else arr.astype(_numpy_compute_dtype(arr.dtype, name), copy=False)
    check_finite(name, x)
    return x


def _is_complex_dtype(dtype) -> bool:
    return "complex" in str(dtype)


def result_dtype(op: LinearMap, b):
    """The dtype of :math:`e^{tA}B`: ``result_type(A, B)`` after integer entries of :math:`A` are read as float64.

    The rule of :func:`scipy.sparse.linalg.expm_multiply` for dense and sparse :math:`A` (float32 with
    float32 or int8 stays float32, float32 with int32 or float64 becomes float64, a complex side makes the
    result complex); torch tensors follow :func:`torch.promote_types`.  A ``LinearOperator`` or structured
    operator counts with its declared ``dtype``.
    """
    op_dtype = op.dtype
    if array_api_compat.is_torch_array(b):
        import torch

        if not isinstance(op_dtype, torch.dtype):
            op_dtype = getattr(torch, np.dtype(op_dtype).name)
        if not (op_dtype.is_floating_point or op_dtype.is_complex):
            op_dtype = torch.float64
        return torch.promote_types(op_dtype, b.dtype)
    return np.result_type(_numpy_compute_dtype(op_dtype, "A"), b.dtype)


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


#: The kinds of operator a :class:`LinearMap` knows.
_KINDS = ("dense", "scipy-sparse", "torch-sparse", "linear-operator", "structured")


class LinearMap:
    """A square operator :math:`A` seen through block products and a few cheap facts.

    Build one with :func:`as_linear_map`.  ``kind`` is ``"dense"``, ``"scipy-sparse"``,
    ``"torch-sparse"``, ``"linear-operator"`` or ``"structured"``.  ``name`` is the parameter name
    refusals use for the operator (``"A"``; :func:`as_linear_map` sets the caller's).
    """

    name: str = "A"

    def __init__(self, a, kind: str):
        check_choice("kind", kind, _KINDS)
        shape = getattr(a, "shape", None)
        try:
            shape = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            raise TypeError(f"a must be an operator with a shape [n, n], got {type(a).__name__}") from None
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"a must be a square operator (shape [n, n]), got shape {shape}")
        self.a = a
        self.kind = kind
        self.n = shape[0]
        self._facts: dict[str, object] = {}

    # ---- products --------------------------------------------------------------------------

    def matmat(self, x):
        """Return :math:`AX` for ``x`` of shape ``[n, k]`` or ``[n]`` (same library and device as ``x``).

        ``x`` must be numeric and finite and live where products with :math:`A` do (see
        :meth:`check_operand`); the product has the dtype of :func:`result_dtype` (complex when either side
        is, double precision when either side is).

        Raises
        ------
        TypeError
            For a non-numeric ``x`` or one in another array library.
        ValueError
            For a non-finite ``x``, or one whose shape is not ``[n]`` or ``[n, k]``.
        """
        x = as_product_operand(self, x)
        dtype = result_dtype(self, x)
        xp = namespace(x)
        x = x if x.dtype == dtype else xp.astype(x, dtype)
        op = self.astype(dtype)
        if x.ndim == 1:
            return op._matmat(xp.reshape(x, (self.n, 1)))[:, 0]
        return op._matmat(x)

    def _matmat(self, x):
        """:math:`AX` for a block the methods built (``[n, k]``, checked and promoted): no check repeated."""
        if self.kind in ("linear-operator", "structured"):
            y = _unchecked_product(self.a)(x)
            if _is_complex_dtype(getattr(y, "dtype", "")) and not (self.is_complex or _is_complex_dtype(x.dtype)):
                raise TypeError(
                    f"A is declared real (dtype {self.dtype}), but its action returned dtype {y.dtype} for a "
                    f"{x.dtype} block; declare the operator complex (LinearOperator(..., dtype=complex)) so that "
                    "the imaginary part is kept"
                )
            return y
        return self.a @ x

    @property
    def dtype(self):
        """The element type of the operator's data."""
        return self.a.dtype

    @property
    def is_complex(self) -> bool:
        """Whether :math:`A` has a complex dtype (then "symmetric" means Hermitian throughout)."""
        return _is_complex_dtype(self.dtype)

    def astype(self, dtype) -> LinearMap:
        """The same operator with its entries in ``dtype`` (explicit kinds); action-only kinds are returned as they are.

        ``dtype`` is a floating or complex dtype: a numpy dtype or its name (``"float32"``), or a torch
        dtype for torch operators.  A ``LinearOperator`` or structured operator computes in the dtype its
        action returns.

        Raises
        ------
        TypeError
            For anything that is not a floating or complex dtype.
        """
        dtype = _as_floating_dtype(dtype, torch_like="torch" in self.namespace().__name__)
        if not self.explicit() or str(dtype) == str(self.dtype):
            return self
        if self.kind == "dense":
            out = LinearMap(namespace(self.a).astype(self.a, dtype), "dense")
        elif self.kind == "scipy-sparse":
            out = LinearMap(self.a.astype(dtype), "scipy-sparse")
        else:
            out = LinearMap(self.a.to(dtype), "torch-sparse")
        out.name = self.name
        return out

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

    def check_operand(self, b, op_name: str = "A", b_name: str = "B") -> None:
        """Raise ``TypeError`` unless the block ``b`` lives where products with :math:`A` do.

        Dense :math:`A` and ``b`` must share an array library; scipy operators act on numpy arrays and
        torch sparse ones on torch tensors; a structured operator acts in its own namespace.  Dtypes may
        differ: :func:`result_dtype` gives the common one.  ``op_name`` and ``b_name`` are the parameter
        names the caller knows the two by (they appear in the message).
        """
        if self.kind == "dense":
            namespace(**{op_name: self.a, b_name: b})
        elif self.kind in ("scipy-sparse", "linear-operator") and array_api_compat.is_torch_array(b):
            raise TypeError(
                f"a scipy operator {op_name} acts on numpy arrays; got {b_name} as a torch tensor on {b.device}"
            )
        elif self.kind == "torch-sparse" and not array_api_compat.is_torch_array(b):
            raise TypeError(f"a torch sparse {op_name} acts on torch tensors; got {b_name} as a numpy array")
        elif self.kind == "structured" and hasattr(self.a, "namespace"):
            torch_op = "torch" in self.a.namespace().__name__
            if torch_op != array_api_compat.is_torch_array(b):
                kind = "torch tensors" if torch_op else "numpy arrays"
                raise TypeError(
                    f"the structured operator {op_name} acts on {kind}; got {b_name} as {type(b).__name__} "
                    "(convert them to one library: workbench.backend.to_backend)"
                )

    def transpose_action(self):
        r"""A function computing :math:`A^* X` (:math:`A^\top X` for real :math:`A`), or ``None`` when there is none.

        Explicit operators transpose (and conjugate) their entries, a ``LinearOperator`` lends its
        ``rmatmat`` (scipy's adjoint), and a symmetric (Hermitian) operator is its own adjoint.
        """
        if self.kind == "dense":
            xp = namespace(self.a)
            a_t = xp.matrix_transpose(xp.conj(self.a) if self.is_complex else self.a)
            return lambda x: a_t @ x
        if self.kind == "scipy-sparse":
            a_t = self.a.conj().T.tocsr()
            return lambda x: a_t @ x
        if self.kind == "torch-sparse":
            a_t = self.a.t()
            if self.is_complex:  # A*X = conj(Aᵀ conj(X)): no conjugated copy of the sparse entries
                return lambda x: (a_t @ x.conj()).conj()
            return lambda x: a_t @ x
        if self.kind == "linear-operator" and self._has_adjoint():
            return self.a.rmatmat
        if self.is_symmetric():
            return self._matmat
        return None

    def _has_adjoint(self) -> bool:
        """Whether a ``LinearOperator`` really computes :math:`A^*x`, read from its definition (no product).

        Every one has ``rmatmat``, but one built from ``matvec`` alone raises when it is called: scipy's
        wrapper keeps the functions it was given, and a subclass must override ``_rmatvec``, ``_rmatmat`` or
        ``_adjoint``.
        """
        from scipy.sparse.linalg import LinearOperator

        cls = type(self.a)
        if cls.__name__ == "_CustomLinearOperator":
            return any(
                getattr(self.a, f"_CustomLinearOperator__{m}_impl", None) is not None for m in ("rmatvec", "rmatmat")
            )
        return any(
            getattr(cls, m, None) is not getattr(LinearOperator, m) for m in ("_rmatvec", "_rmatmat", "_adjoint")
        )

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
        """A float64 (complex128 for complex :math:`A`) numpy copy of an explicit operator (small n only)."""
        dtype = np.complex128 if self.is_complex else np.float64
        if self.kind == "dense":
            return np.asarray(to_numpy(self.a), dtype=dtype)
        if self.kind == "scipy-sparse":
            return self.a.toarray().astype(dtype)
        return np.asarray(to_numpy(self.a.to_dense()), dtype=dtype)

    def dense(self, like):
        """:math:`A` as a dense matrix in the library, dtype and device of ``like``, or ``None`` without entries."""
        if not (array_api_compat.is_numpy_array(like) or array_api_compat.is_torch_array(like)):
            raise TypeError(f"like must be a numpy array or a torch tensor, got {type(like).__name__}")
        xp = namespace(like=like)
        host = self.host_matrix(strict=False) if self.kind != "dense" else None
        if not (self.kind == "dense" or host is not None):
            return None
        if self.kind == "dense" and namespace(self.a) is xp:
            return xp.astype(self.a, like.dtype)
        dense = host.toarray() if host is not None else to_numpy(self.a)
        return xp.asarray(dense, dtype=like.dtype, device=array_api_compat.device(like))

    def abs_column_sums_and_diagonal(self):
        r"""Column sums of :math:`|A|` and the diagonal, as host vectors (``(None, None)`` unless explicit).

        The sums are float64, the diagonal float64 or, for complex :math:`A`, complex128.

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
        diag_dtype = np.complex128 if self.is_complex else np.float64
        return np.asarray(columns, dtype=np.float64), np.asarray(diag, dtype=diag_dtype)

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
        r"""Whether :math:`A = A^*` to ``rtol`` relative (False when it cannot be checked).

        For real :math:`A` that is :math:`A = A^\top`; for complex :math:`A` it is Hermitian symmetry, the
        property every method needs (a real spectrum, an orthonormal eigenbasis, Lanczos).  ``rtol`` is a
        finite number :math:`\ge 0`; the answer is cached per ``rtol``.
        """
        rtol = check_in_range("rtol", rtol, 0.0)
        key = ("symmetric", rtol)
        if key not in self._facts:
            if self.kind == "structured":
                value = bool(self.a.is_symmetric(rtol)) if hasattr(self.a, "is_symmetric") else False
            elif not self.explicit():
                value = False
            elif self.kind == "dense":
                xp = namespace(self.a)
                adjoint = xp.matrix_transpose(xp.conj(self.a) if self.is_complex else self.a)
                gap = float(xp.max(xp.abs(self.a - adjoint))) if self.n else 0.0
                value = gap <= rtol * max(float(xp.max(xp.abs(self.a))) if self.n else 0.0, 1e-300)
            elif self.surely_asymmetric(rtol):  # row and column sums already differ: no A − A* formed
                value = False
            else:
                host = self.host_sparse()
                gap = abs(host - host.conj().T)
                value = (gap.max() if gap.nnz else 0.0) <= rtol * max(abs(host).max() if host.nnz else 0.0, 1e-300)
            self._facts[key] = bool(value)
        return self._facts[key]

    def surely_asymmetric(self, rtol: float = 1e-12) -> bool:
        r"""A cheap look that settles most non-symmetric explicit operators before :meth:`is_symmetric`.

        :meth:`is_symmetric` asks :math:`|a_{ij} - a_{ji}| \le r\max|a|` (default :math:`r = 10^{-12}`).
        Dense: row 0 against column 0, :math:`O(n)`.  Sparse: that test implies
        :math:`|\sum_j a_{ij} - \sum_j a_{ji}| \le r\max|a|\,c_i` (:math:`c_i` the nnz of row :math:`i` and of
        column :math:`i`), checked in one pass over the entries instead of forming :math:`A - A^\top`, with the
        rounding of the two sums, at most :math:`2c_i^2u\max|a|`, allowed on top: a symmetric matrix is never
        called asymmetric, whatever ``rtol``.
        """
        rtol = check_in_range("rtol", rtol, 0.0)
        if self.n == 0:
            return False
        if self.kind == "dense":
            xp = namespace(self.a)
            column = xp.conj(self.a[:, 0]) if self.is_complex else self.a[:, 0]
            gap = float(xp.max(xp.abs(self.a[0, :] - column)))
            return gap > rtol * self.one_norm()
        if self.kind in ("scipy-sparse", "torch-sparse"):
            host = self.host_sparse().tocsr()
            if host.nnz == 0:
                return False
            rows = np.repeat(np.arange(self.n), np.diff(host.indptr))
            gap = np.abs(np.bincount(rows, host.data.real, self.n) - np.bincount(host.indices, host.data.real, self.n))
            if self.is_complex:  # Hermitian: row sums are the conjugates of column sums
                imag = host.data.imag
                gap = np.hypot(gap, np.bincount(rows, imag, self.n) + np.bincount(host.indices, imag, self.n))
            counts = np.diff(host.indptr) + np.bincount(host.indices, minlength=self.n)
            unit = np.finfo(np.float64).eps / 2  # the sums run in float64 (bincount)
            allowed = (rtol * counts + 2.1 * unit * counts.astype(np.float64) ** 2) * np.abs(host.data).max()
            return bool(np.any(gap > allowed))
        return False

    def exactly_symmetric(self) -> bool:
        r"""Dense :math:`A = A^*` entry for entry: one comparison pass, the common case ((X + X*)/2 is exact)."""
        if self.kind != "dense":
            return False
        xp = namespace(self.a)
        return bool(xp.all(self.a == xp.matrix_transpose(xp.conj(self.a) if self.is_complex else self.a)))

    def is_markov_generator(self, atol: float | None = None) -> bool:
        r"""Whether :math:`A` has nonnegative off-diagonal rates and zero row sums (to ``atol`` × max rate).

        ``atol`` is a finite number :math:`\ge 0`, or ``None`` for the rounding of a row sum in the dtype
        (1e-10 in double, 1e-5 in single precision); the answer is cached per ``atol``.
        """
        given = atol
        if atol is None:  # rounding of a row sum: ~1e-16 per entry in float64, ~1e-7 in float32
            atol = 1e-5 if "float32" in str(self.dtype) else 1e-10
        else:
            atol = check_in_range("atol", atol, 0.0)
        key = ("markov", atol)
        if key not in self._facts:
            if self.kind == "structured":
                if not hasattr(self.a, "is_markov_generator"):
                    value = False
                else:  # a structured operator has its own default, the rounding of its dtype
                    value = bool(self.a.is_markov_generator() if given is None else self.a.is_markov_generator(atol))
            elif not self.explicit() or self.is_complex:  # rates are real numbers
                value = False
            else:
                host = self.host_sparse().tocoo()
                off = host.row != host.col
                scale = max(float(np.abs(host.data).max()) if host.nnz else 0.0, 1e-300)
                sums = np.asarray(self.host_sparse().sum(axis=1)).ravel()
                value = (not off.any() or host.data[off].min() >= -atol * scale) and np.abs(sums).max(
                    initial=0.0
                ) <= atol * scale
            self._facts[key] = bool(value)
        return self._facts[key]

    def gershgorin(self) -> tuple[float, float]:
        r"""Gershgorin bounds :math:`[\min_i (\Re a_{ii} - r_i), \max_i (\Re a_{ii} + r_i)]`.

        A bound on a real spectrum (symmetric or Hermitian :math:`A`); in general on the real parts of the
        eigenvalues.
        """
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
                value = (float(np.min(d.real - radius)), float(np.max(d.real + radius)))
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


def as_product_operand(op, x, name: str = "x", op_name: str = "A"):
    """``x`` checked as the right operand of a product with ``op`` (a :class:`LinearMap`).

    Numeric and finite (integers and bools read as float64, :func:`as_operand`), of shape ``[n]`` or
    ``[n, k]`` with ``n`` the order of ``op``, and in the array library products with ``op`` live in
    (:meth:`LinearMap.check_operand`).  Refusals name ``name`` (and ``op_name``).
    """
    x = as_operand(name, x)
    if x.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape [n] or [n, k], got shape {tuple(int(s) for s in x.shape)}")
    check_matching(f"{op_name} columns", op.n, f"{name} rows", int(x.shape[0]))
    op.check_operand(x, op_name, name)
    return x


def _unchecked_product(a):
    """The product a structured operator offers for checked blocks (``_matmat_unchecked``), else its ``matmat``.

    The unchecked product is taken only from the class that defines ``matmat`` as its checked door: a
    subclass that overrides ``matmat`` (to count products, say) keeps its override.
    """
    owner = {
        name: next((c for c in type(a).__mro__ if name in vars(c)), None) for name in ("matmat", "_matmat_unchecked")
    }
    if owner["_matmat_unchecked"] is not None and owner["matmat"] is owner["_matmat_unchecked"]:
        return a._matmat_unchecked
    return a.matmat


def _as_floating_dtype(dtype, *, torch_like: bool):
    """``dtype`` as a numpy dtype, or a torch dtype when ``torch_like``; floating or complex only."""
    if torch_like:
        import torch

        if isinstance(dtype, torch.dtype):
            if dtype.is_floating_point or dtype.is_complex:
                return dtype
            raise TypeError(f"dtype must be a floating or complex dtype, got {dtype}")
    resolved = None
    if isinstance(dtype, (type, np.dtype)) or (isinstance(dtype, str) and dtype):
        try:
            resolved = np.dtype(dtype)
        except TypeError:
            resolved = None
    if resolved is None or resolved.kind not in "fc":
        raise TypeError(
            "dtype must be a floating or complex dtype (e.g. numpy.float32, 'float64', or a torch dtype for a "
            f"torch operator), got {dtype!r}"
        )
    if torch_like:
        import torch

        return getattr(torch, resolved.name)
    return resolved


def as_linear_map(a, name: str = "A") -> LinearMap:
    """Wrap ``a`` (dense numpy/torch, scipy sparse, torch sparse CSR/COO, LinearOperator, structured) as a :class:`LinearMap`.

    Entries keep their floating type, real or complex, single or double precision; integer and bool
    entries are read as float64 and float16 as float32 (:func:`as_operand`).  Products with a block of
    another dtype are formed in :func:`result_dtype`.

    Raises
    ------
    TypeError
        For anything that is not a supported operator, or data in extended precision.
    ValueError
        For a non-square or non-finite operator.
    """  # noqa: E501
    if not isinstance(name, str):
        raise TypeError(f"name must be a string (the parameter name messages use), got {type(name).__name__}")
    if not name:
        raise ValueError("name must be a non-empty string (the parameter name messages use), got ''")
    if isinstance(a, LinearMap):
        return a
    if is_sparse(a):
        a = _as_csr(name, a)
        kind = "scipy-sparse"
    elif _is_torch_sparse(a):
        import torch

        if not (a.is_floating_point() or a.is_complex()):
            a = a.double()
        a = a.to_sparse_csr() if a.layout != torch.sparse_csr else a
        if not bool(torch.isfinite(a.values().clone()).all()):  # a copy: complex CSR values have no strides
            raise ValueError(f"{name} must be finite, got non-finite stored entries")
        kind = "torch-sparse"
    elif _is_linear_operator(a):
        _numpy_compute_dtype(a.dtype, name)  # numeric, at most double precision
        kind = "linear-operator"
    elif hasattr(a, "matmat") and hasattr(a, "shape") and not hasattr(a, "__array__"):
        kind = "structured"
    else:
        a = as_operand(name, a)
        if a.ndim != 2:
            raise ValueError(f"{name} must be a 2-dimensional array, got shape {tuple(int(s) for s in a.shape)}")
        kind = "dense"
    shape = tuple(int(s) for s in a.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square matrix (shape [n, n]), got shape {shape}")
    op = LinearMap(a, kind)
    op.name = name
    return op


def _as_csr(name: str, x):
    """A private CSR copy of a scipy sparse matrix in its compute dtype, finite, summed and sorted, zeros dropped."""
    import scipy.sparse

    csr = scipy.sparse.csr_array(x, dtype=_numpy_compute_dtype(x.dtype, name), copy=True)
    csr.sum_duplicates()
    csr.sort_indices()
    bad = ~np.isfinite(csr.data)
    if bad.any():
        rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
        first, count = int(np.argmax(bad)), int(bad.sum())
        raise ValueError(
            f"{name} must be finite, got {count} non-finite {'entry' if count == 1 else 'entries'} "
            f"(first at index ({int(rows[first])}, {int(csr.indices[first])}))"
        )
    csr.eliminate_zeros()
    return csr
