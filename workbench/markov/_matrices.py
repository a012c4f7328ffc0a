r"""Square matrices, dense (numpy or torch) or :mod:`scipy.sparse`: the shared primitives of the package.

Many functions of :mod:`workbench.markov` read a square matrix that may be a dense numpy array, a dense
torch tensor or a scipy sparse matrix.  These helpers validate it (:func:`square_matrix`,
:func:`validated_kernel`), measure its (anti)symmetry (:func:`symmetry_gap`, :func:`is_symmetric`), read
entries at index pairs without leaving its library (:func:`lookup`), and do the diagonal scalings, row
sums, transposes and norms the operator classes need in either format.  They are package-internal:
public names of this private module, not exported by :mod:`workbench.markov`.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §2, §6, §7; book/reference.md §A.2, §A.6, §A.7.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, as_sparse, check_nonnegative, check_square, is_sparse

__all__ = []  # package-internal helpers only


def square_matrix(name, x):
    """Return ``(matrix, is_sparse)``: a float dense array (numpy/torch) or a private canonical CSR array."""
    if is_sparse(x):
        # Stored zeros are kept: a stored zero distance is still a pair of the pattern.
        x = as_sparse(name, x, keep_zeros=True)
        check_square(name, x)
        return x, True
    x = as_array(name, x, ndim=2)
    check_square(name, x)
    return x, False


def symmetry_gap(x, sparse, *, sign):
    """Return ``(max |x - sign·xᵀ|, max |x|)`` (``sign=+1``: symmetry; ``-1``: antisymmetry)."""
    if sparse:
        gap = abs(x - sign * x.T)
        return (float(gap.max()) if gap.nnz else 0.0), (float(abs(x).max()) if x.nnz else 0.0)
    if int(x.shape[0]) == 0:
        return 0.0, 0.0
    xp = namespace(x)
    gap = float(xp.max(xp.abs(x - sign * xp.matrix_transpose(x))))
    return gap, float(xp.max(xp.abs(x)))


def lookup(matrix, sparse, rows, cols):
    """Entries ``matrix[rows[k], cols[k]]`` (numpy index arrays); dense stays in its own library."""
    if sparse:
        return np.asarray(matrix[rows, cols], dtype=np.float64).ravel()
    xp = namespace(matrix)
    device = array_api_compat.device(matrix)
    return matrix[xp.asarray(rows, device=device), xp.asarray(cols, device=device)]


def row_sums(matrix):
    """Row sums ``matrix·1``: a numpy vector for scipy sparse, the array's own library otherwise."""
    if is_sparse(matrix):
        return np.asarray(matrix.sum(axis=1)).ravel()
    return namespace(matrix).sum(matrix, axis=-1)


def scale_rows(d, matrix):
    """``diag(d) @ matrix`` without forming ``diag(d)`` densely."""
    if is_sparse(matrix):
        # On the stored entries (a product with diags_array costs a sparse matmul, ~8× more); the pattern,
        # explicit zeros included, is kept.
        scaled = matrix.tocsr(copy=True)
        scaled.data = scaled.data * np.repeat(np.asarray(d), np.diff(scaled.indptr))
        return scaled
    return d[:, None] * matrix


def scale_columns(matrix, d):
    """``matrix @ diag(d)`` without forming ``diag(d)`` densely."""
    if is_sparse(matrix):
        scaled = matrix.tocsr(copy=True)
        scaled.data = scaled.data * np.asarray(d)[scaled.indices]
        return scaled
    return matrix * d[None, :]


def scale_both(a, matrix, b):
    """``diag(a) @ matrix @ diag(b)``; for scipy sparse in one pass over the stored entries (one copy, not two)."""
    if is_sparse(matrix):
        scaled = matrix.tocsr(copy=True)
        rows = np.repeat(np.asarray(a), np.diff(scaled.indptr))
        scaled.data = scaled.data * rows * np.asarray(b)[scaled.indices]
        return scaled
    return a[:, None] * matrix * b[None, :]


def transpose(matrix):
    """The transpose (CSR for scipy sparse)."""
    return matrix.T.tocsr() if is_sparse(matrix) else namespace(matrix).matrix_transpose(matrix)


def frobenius(matrix) -> float:
    """The Frobenius norm ``‖matrix‖_F`` as a float."""
    if is_sparse(matrix):
        return float(np.sqrt(np.sum(matrix.data**2)))
    xp = namespace(matrix)
    return float(xp.sqrt(xp.sum(matrix * matrix)))


def validated_kernel(kernel):
    """Return ``(kernel, kernel·1)`` for a square nonnegative kernel with positive row sums, else raise."""
    if is_sparse(kernel):
        kernel = as_sparse("kernel", kernel)
    else:
        kernel = as_array("kernel", kernel, ndim=2)
    check_square("kernel", kernel)
    check_nonnegative("kernel", kernel)
    degree = row_sums(kernel)
    smallest = float(to_numpy(degree).min()) if degree.shape[0] else 1.0
    if smallest <= 0.0:
        vertex = int(np.argmin(to_numpy(degree)))
        raise ValueError(
            f"kernel must have positive row sums (every vertex needs a neighbour), got row {vertex} summing to 0"
        )
    return kernel, degree


def is_symmetric(kernel, rtol: float = 1e-12) -> bool:
    """Whether ``max |K - Kᵀ| <= rtol · max |K|`` (the test that makes an operator exactly reversible)."""
    if is_sparse(kernel):
        gap = abs(kernel - kernel.T)
        return gap.nnz == 0 or float(gap.max()) <= rtol * float(abs(kernel).max())
    xp = namespace(kernel)
    return float(xp.max(xp.abs(kernel - xp.matrix_transpose(kernel)))) <= rtol * float(xp.max(xp.abs(kernel)))


def check_row_sums(name, matrix, *, atol=1e-10):
    """Raise unless every row of the scipy sparse ``matrix`` sums to 1 within ``atol``, naming the worst row.

    The sparse counterpart of the row-sum part of :func:`workbench.validation.check_row_stochastic`, with
    the same message.
    """
    sums = row_sums(matrix)
    worst = int(np.argmax(np.abs(sums - 1.0))) if sums.size else 0
    if sums.size and abs(sums[worst] - 1.0) > atol:
        raise ValueError(
            f"{name} must be row-stochastic (rows summing to 1 within {atol:g}), "
            f"got row {worst} summing to {sums[worst]:.6g}"
        )


def as_library_of(array, reference):
    """Return the numpy ``array`` in the library, dtype and device of the dense ``reference``.

    Not :func:`workbench.backend.like`: for a numpy ``reference`` this returns ``array`` unchanged (float64
    results stay float64 for a float32 input), where the base helper would cast it to the reference dtype.
    """
    if array_api_compat.is_torch_array(reference):
        import torch

        return torch.as_tensor(array, dtype=reference.dtype, device=reference.device)
    return array
