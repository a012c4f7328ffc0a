"""e^{tQ}·V for a banded Markov generator: the differentiable layer kernel against what a user would pick.

The kernel of `ExpMarkovAttention` is `workbench.nn.uniformized_action` on a `BandedGenerator` (torch ops, so
gradients flow; O(n·w·d) per power).  Baselines, measured in the same run on the same data:
  dense   -- torch.linalg.matrix_exp(t·Q) @ V (forms the n×n exponential; differentiable too; n ≤ 2048)
  scipy   -- scipy.sparse.linalg.expm_multiply(t·Q, V) on the sparse generator (no gradients)
  engine  -- workbench.expmv.expmv(..., method="uniformization") on the engine's BandedMatrix (torch, no gradients)
The layer kernel is also timed forward + backward (gradients in the rates, t and V).  Every result is
compared with scipy's (relative Frobenius error), so a fast wrong answer cannot pass.  float64, one torch
thread.  Run: workbench bench exp-markov
"""

import platform
import timeit
from functools import partial

import numpy as np
import scipy.sparse
import scipy.sparse.linalg
import torch

from workbench.expmv import expmv
from workbench.nn import banded_generator, multiscale_offsets, uniformized_action

#: The ``run`` keywords ``workbench bench`` may pass: this benchmark takes no command-line options.
OPTIONS = ()


def best_of(fn, repeat=3):
    number = max(1, int(0.2 / max(timeit.timeit(fn, number=1), 1e-6)))
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def _forward_backward(logits, offsets, values, t):
    logits = logits.detach().requires_grad_(True)
    values = values.detach().requires_grad_(True)
    t = t.detach().requires_grad_(True)
    out = uniformized_action(banded_generator(logits, offsets), values, t)
    out.square().sum().backward()


def _relative(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def run(sizes=(256, 1024, 4096), d=64, t=2.0, dense_limit=2048) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rng = np.random.default_rng(0)
        offsets = multiscale_offsets(2)  # ±1, ±2, ±4
        rows = []
        for n in sizes:
            logits = torch.tensor(rng.standard_normal((len(offsets), n)))
            values = torch.tensor(rng.standard_normal((n, d)))
            time_t = torch.tensor(t, dtype=torch.float64)
            generator = banded_generator(logits, offsets)
            q_dense = generator.dense().numpy()
            q_sparse = scipy.sparse.csr_array(q_dense)
            reference = scipy.sparse.linalg.expm_multiply(t * q_sparse, values.numpy())
            with torch.no_grad():
                ours = uniformized_action(generator, values, time_t).numpy()
            banded = generator.to_banded_matrix()  # the engine's BandedMatrix, on torch like the layer
            engine = expmv(banded, values, t, method="uniformization").numpy()
            errors = [_relative(ours, reference), _relative(engine, reference)]
            with torch.no_grad():
                t_ours = best_of(partial(uniformized_action, generator, values, time_t))
            t_grad = best_of(partial(_forward_backward, logits, offsets, values, time_t))
            t_scipy = best_of(partial(scipy.sparse.linalg.expm_multiply, t * q_sparse, values.numpy()))
            t_engine = best_of(partial(expmv, banded, values, t, method="uniformization"))
            if n <= dense_limit:
                q_torch = torch.tensor(q_dense)
                dense = (torch.linalg.matrix_exp(t * q_torch) @ values).numpy()
                errors.append(_relative(dense, reference))
                t_dense = best_of(lambda q=q_torch, v=values: torch.linalg.matrix_exp(t * q) @ v, repeat=2)
                dense_cells = [f"{t_dense * 1e3:.1f} ms", f"{t_dense / t_ours:.1f}×"]
            else:
                dense_cells = ["—", "—"]
            rows.append([
                n, f"{t_ours * 1e3:.1f} ms", f"{t_grad * 1e3:.1f} ms", *dense_cells,
                f"{t_scipy * 1e3:.1f} ms", f"{t_scipy / t_ours:.1f}×",
                f"{t_engine * 1e3:.1f} ms", f"{max(errors):.1e}",
            ])  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    return {
        "title": f"e^(tQ)·V, banded Markov Q (offsets ±1, ±2, ±4), V: n×{d}, t = {t}: layer kernel vs dense and scipy",
        "columns": [
            "n",
            "layer fwd",
            "layer fwd+bwd",
            "dense matrix_exp@V",
            "dense/layer",
            "expm_multiply",
            "scipy/layer",
            "engine (no grad)",
            "max rel err",
        ],
        "rows": rows,
        "notes": (
            f"{platform.machine()}, numpy {np.__version__}, torch {torch.__version__}, float64, one torch thread; "
            "best of repeats; errors against scipy expm_multiply; dense only up to n = "
            f"{dense_limit}; GPU: not measured here (pass torch tensors on a device to the same kernel)"
        ),
    }
