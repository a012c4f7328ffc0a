"""Random and closed-form test matrices shared by the expmv tests (not a test module)."""

import numpy as np
import scipy.sparse

from workbench.backend import to_numpy


def markov(rng, n, scale=1.0):
    """A dense Markov generator: uniform off-diagonal rates times ``scale``, rows summing to 0."""
    q = scale * rng.random((n, n))
    np.fill_diagonal(q, 0.0)
    return q - np.diag(q.sum(axis=1))


def symmetric(rng, n):
    a = rng.standard_normal((n, n))
    return (a + a.T) / 2


def nonnormal(rng, n):
    """A Gaussian matrix plus a strong upper-triangular shear (eigenvector condition ≫ 1)."""
    return rng.standard_normal((n, n)) + 3 * np.triu(rng.standard_normal((n, n)), 1)


def path_laplacian(n):
    """−L of the path graph: (Lf)_i = Σ_{j~i} (f_j − f_i); symmetric negative semidefinite."""
    return scipy.sparse.diags_array(
        [np.ones(n - 1), np.r_[-1.0, -2.0 * np.ones(n - 2), -1.0], np.ones(n - 1)], offsets=[-1, 0, 1], format="csr"
    )


def relerr(y, exact):
    return np.linalg.norm(to_numpy(y) - exact) / np.linalg.norm(exact)
