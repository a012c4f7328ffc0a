"""exp(t·uvᵀ)·B: the closed form against the tools a user would otherwise pick.

Baselines, measured in the same run on the same data:
  dense  -- scipy.linalg.expm(t·uvᵀ) @ B (forms the n×n exponential, O(n³))
  action -- scipy.sparse.linalg.expm_multiply(t·uvᵀ, B) (Al-Mohy–Higham action, O(n²) per step)
The result of each is compared with the closed form (relative Frobenius error) so a fast wrong answer
cannot pass.  Run: workbench bench rank1
"""

import platform
import timeit
from functools import partial

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from workbench.expmv import expmv_rank1

#: The ``run`` keywords ``workbench bench`` may pass: this benchmark takes no command-line options.
OPTIONS = ()


def dense_action(matrix, b):
    return scipy.linalg.expm(matrix) @ b


def best_of(fn, repeat=5):
    number = max(1, int(0.2 / max(timeit.timeit(fn, number=1), 1e-6)))
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def run() -> dict:
    rng = np.random.default_rng(0)
    t, k = 0.5, 8
    rows = []
    for n in (100, 400, 1600):
        u, v = rng.standard_normal(n) / np.sqrt(n), rng.standard_normal(n) / np.sqrt(n)
        b = rng.standard_normal((n, k))
        outer = t * np.outer(u, v)
        ours = expmv_rank1(u, v, b, t)
        dense = scipy.linalg.expm(outer) @ b
        action = scipy.sparse.linalg.expm_multiply(outer, b)
        err = max(np.linalg.norm(x - ours) / np.linalg.norm(ours) for x in (dense, action))
        t_ours = best_of(partial(expmv_rank1, u, v, b, t))
        t_dense = best_of(partial(dense_action, outer, b), repeat=3)
        t_action = best_of(partial(scipy.sparse.linalg.expm_multiply, outer, b), repeat=3)
        rows.append([
            n, f"{t_ours * 1e6:.1f} µs", f"{t_dense * 1e3:.2f} ms", f"{t_action * 1e3:.2f} ms",
            f"{t_dense / t_ours:.0f}×", f"{t_action / t_ours:.0f}×", f"{err:.1e}",
        ])  # fmt: skip
    return {
        "title": "exp(t·uvᵀ)·B (k = 8 columns): closed form vs scipy",
        "columns": [
            "n",
            "closed form",
            "dense expm@B",
            "expm_multiply",
            "dense/closed",
            "action/closed",
            "max rel err",
        ],
        "rows": rows,
        "notes": f"{platform.machine()}, numpy {np.__version__}, scipy {scipy.__version__}; best of repeats",
    }
