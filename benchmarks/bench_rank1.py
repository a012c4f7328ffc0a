"""exp(t·uvᵀ)·B: the closed form against the tools a user would otherwise pick.

Baselines, measured in the same run on the same data:
  dense  -- scipy.linalg.expm(t·uvᵀ) @ B (forms the n×n exponential, O(n³))
  action -- scipy.sparse.linalg.expm_multiply(t·uvᵀ, B) (Al-Mohy–Higham action, O(n²) per step)
The result of each is compared with the closed form (relative Frobenius error) so a fast wrong answer
cannot pass.  Run: python benchmarks/bench_rank1.py
"""

import platform
import timeit
from functools import partial

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from workbench.expmv import expmv_rank1


def dense_action(matrix, b):
    return scipy.linalg.expm(matrix) @ b


def best_of(fn, repeat=5):
    number = max(1, int(0.2 / max(timeit.timeit(fn, number=1), 1e-6)))
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    rng = np.random.default_rng(0)
    t, k = 0.5, 8
    print(f"machine: {platform.processor() or platform.machine()}, numpy {np.__version__}, scipy {scipy.__version__}")
    print(
        f"{'n':>6} {'closed form':>12} {'dense expm@B':>13} {'expm_multiply':>14} {'dense/closed':>13} "
        f"{'action/closed':>14} {'max rel err':>12}"
    )
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
        print(
            f"{n:>6} {t_ours * 1e6:>10.1f}µs {t_dense * 1e3:>11.2f}ms {t_action * 1e3:>12.2f}ms "
            f"{t_dense / t_ours:>12.0f}× {t_action / t_ours:>13.0f}× {err:>12.1e}"
        )


if __name__ == "__main__":
    main()
