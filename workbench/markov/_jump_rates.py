r"""Jump rates, the input of the Bakry–Émery and curvature functions: validation and the generator.

A matrix ``rates`` in the **jump-rates convention** has off-diagonal entries :math:`W_{ij} \ge 0`, the rates
of jumps :math:`i \to j`; its diagonal is ignored, and the negative generator is

.. math::

    (\mathcal L f)_i = \sum_{j \ne i} W_{ij}\,(f_j - f_i).

:class:`JumpRates` validates such a matrix once (dense numpy, dense torch on its device, or
:mod:`scipy.sparse`, kept :math:`O(\mathrm{nnz})`) and applies :math:`\mathcal L` and the edge form
:math:`\tfrac12\sum_j W_{ij}(f_j - f_i)(g_j - g_i)`.  It is the shared primitive of
:mod:`workbench.markov._bakry_emery` and :mod:`workbench.markov._curvature` (package-internal, not exported).

References
----------
Attention Geometry §5; book/reference.md §A.5 [RECON, standard].
D. Bakry, I. Gentil, M. Ledoux, *Analysis and Geometry of Markov Diffusion Operators*, Springer (2014),
§1.4.
"""

from __future__ import annotations

import array_api_compat
import numpy as np
import scipy.sparse

from workbench.backend import namespace, to_numpy
from workbench.validation import as_array, check_matching, check_square

__all__ = []  # package-internal helpers only


class JumpRates:
    """Validated off-diagonal jump rates: a dense array with zero diagonal, or a canonical CSR array."""

    def __init__(self, rates, name: str = "rates"):
        self.name = name
        self.sparse = scipy.sparse.issparse(rates)
        if self.sparse:
            self.W = _sparse_off_diagonal(name, rates)
            self.xp = namespace(np.empty(0))
            self.degree = np.asarray(self.W.sum(axis=1)).ravel()
        else:
            rates = as_array(name, rates, ndim=2)
            check_square(name, rates)
            xp = namespace(rates)
            n = int(rates.shape[0])
            diagonal = xp.eye(n, dtype=xp.bool, device=array_api_compat.device(rates))
            self.W = xp.where(diagonal, xp.zeros_like(rates), rates)
            _check_off_diagonal_nonnegative(name, self.W)
            self.xp = xp
            self.degree = xp.sum(self.W, axis=1)
        self.n = int(self.W.shape[0])
        if self.n == 0:
            raise ValueError(f"{name} must have at least one vertex, got shape (0, 0)")
        self._row = None
        self._row_sum = None

    def functions(self, name: str, f):
        """Return ``f`` (shape [n] or [n, m]) as an array of the rates' library, after checks."""
        if self.sparse and array_api_compat.is_torch_array(f):
            raise TypeError(f"{name} must be a numpy array when rates is a scipy.sparse matrix, got a torch tensor")
        f = as_array(name, f)
        if f.ndim not in (1, 2):
            raise ValueError(f"{name} must have shape [n] or [n, m], got shape {tuple(int(s) for s in f.shape)}")
        if not self.sparse:
            namespace(**{self.name: self.W, name: f})  # a clear TypeError when numpy and torch are mixed
        check_matching(f"{self.name} rows", self.n, name, int(f.shape[0]))
        return f

    def generator(self, f):
        """Negative generator (ℒf)_i = Σ_{j≠i} W_ij (f_j − f_i), column by column for 2-D ``f``."""
        degree = self.degree if f.ndim == 1 else self.degree[:, None]
        return self.W @ f - degree * f

    def edge_form(self, f, g):
        """½ Σ_j W_ij (f_j − f_i)(g_j − g_i), summed over coordinate differences (no cancellation)."""
        if self.sparse:
            if self._row is None:
                indptr = self.W.indptr
                self._row = np.repeat(np.arange(self.n), np.diff(indptr))
                nnz = self.W.nnz
                # Row-summing operator S (n × nnz): (S v)_i = Σ_{stored (i, j)} v_ij, O(nnz).
                self._row_sum = scipy.sparse.csr_array((np.ones(nnz), np.arange(nnz), indptr), shape=(self.n, nnz))
            row, col = self._row, self.W.indices
            weights = self.W.data if f.ndim == 1 else self.W.data[:, None]
            df = f[col] - f[row]
            dg = df if g is f else g[col] - g[row]
            return 0.5 * (self._row_sum @ (weights * df * dg))
        xp = self.xp
        if f.ndim == 2:
            columns = [self.edge_form(f[:, k], g[:, k]) for k in range(int(f.shape[1]))]
            return xp.stack(columns, axis=1) if columns else xp.zeros_like(f)
        df = f[None, :] - f[:, None]
        dg = df if g is f else g[None, :] - g[:, None]
        return 0.5 * xp.sum(self.W * df * dg, axis=1)

    def operator_form(self, f, g):
        """½[ℒ(fg) − fℒg − gℒf], the three-term form (loses digits to cancellation for smooth f)."""
        return 0.5 * (self.generator(f * g) - f * self.generator(g) - g * self.generator(f))


def _sparse_off_diagonal(name, rates):
    shape = tuple(int(s) for s in rates.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"{name} must be a square matrix (shape [..., n, n]), got shape {shape}")
    coo = scipy.sparse.coo_array(rates, copy=True)
    coo.sum_duplicates()
    data = as_array(f"{name} entries", coo.data, ndim=1)
    off = coo.row != coo.col
    row, col, data = coo.row[off], coo.col[off], data[off]
    if data.size and data.min() < 0:
        k = int(np.argmin(data))
        raise ValueError(
            f"{name} must have nonnegative off-diagonal entries (jump rates), "
            f"got {name}[{int(row[k])}, {int(col[k])}] = {data[k]:.6g}"
        )
    W = scipy.sparse.csr_array((data, (row, col)), shape=shape)
    W.sum_duplicates()
    W.sort_indices()
    return W


def _check_off_diagonal_nonnegative(name, W):
    xp = namespace(W)
    if int(W.shape[0]) == 0 or float(xp.min(W)) >= 0:
        return
    host = to_numpy(W)
    i, j = np.unravel_index(np.argmin(host), host.shape)
    raise ValueError(
        f"{name} must have nonnegative off-diagonal entries (jump rates), got {name}[{i}, {j}] = {host[i, j]:.6g}"
    )
