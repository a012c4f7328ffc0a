"""δ_orth of the effective transports of a real layer: from the heads vs from the dense O_eff.

The dense route is what a user would write from the definition: build O_eff (an n × n × d × d array,
`effective_connection`) and reduce it (`orthogonality_deviation`).  `effective_transport_gram` evaluates the
same weighted mean as a quadratic form in the head weights and never forms O_eff, on the H(H+1)/2 symmetric
matrices S_hg = M_hᵀM_g + M_gᵀM_h; `previous` is the same form on all H² products M_hᵀM_g (the code path
before 2026-12-01, written out here with numpy).  All run on layer 1 of all-MiniLM-L6-v2 (H = 12 heads,
d = 384) on token sequences of n random word pieces; the values are compared (largest relative difference to
the dense one) so a fast wrong answer cannot pass.  Peak memory is what `tracemalloc` sees
(numpy allocations included).  Run: workbench bench transport-gram
"""

import platform
import timeit
import tracemalloc

import numpy as np

from workbench.attention import effective_connection, effective_transport_gram, orthogonality_deviation
from workbench.models import load_minilm

#: The ``run`` keywords ``workbench bench`` may pass: this benchmark takes no command-line options.
OPTIONS = ()


def dense(A, M):
    A_eff, O_eff = effective_connection(A, M)
    return orthogonality_deviation(O_eff, weights=A_eff)


def light(A, M):
    return effective_transport_gram(A, M).mean


def previous(A, M):
    """The H² basis: all products B_hg = M_hᵀM_g, their Gram matrix B Bᵀ, the A_eff-weighted mean of δ."""
    H, n, d = A.shape[0], A.shape[1], M.shape[-1]
    total = A.sum(axis=0)
    w = A / total
    B = (np.swapaxes(M, -1, -2)[:, None] @ M[None, :]).reshape(H * H, d * d)
    trace_b = (M.reshape(H, d * d) @ M.reshape(H, d * d).T).reshape(H * H)
    u = (w[:, None] * w[None, :]).transpose(2, 3, 0, 1).reshape(n, n, H * H)
    trace_g = u @ trace_b
    norm2_g = np.sum((u @ (B @ B.T)) * u, axis=-1)
    delta = np.sqrt(np.maximum(norm2_g - trace_g**2 / d, 0.0)) / trace_g
    return float((total * delta).sum() / total.sum())


def measure(fn, A, M, repeat):
    tracemalloc.start()
    value = fn(A, M)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    seconds = min(timeit.repeat(lambda: fn(A, M), number=1, repeat=repeat))
    return value, seconds, peak


def run(sizes=(8, 16, 32)) -> dict:
    model = load_minilm()
    layer = 1
    M = model.layers[layer].attention.value_output_maps()
    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        ids = rng.integers(1999, 30000, size=n)  # ordinary word pieces of the BERT vocabulary
        A = model.trace_ids(ids).attention[layer]
        ours, t_ours, m_ours = measure(light, A, M, repeat=3)
        before, t_before, m_before = measure(previous, A, M, repeat=2)
        reference, t_dense, m_dense = measure(dense, A, M, repeat=2)
        worst = max(abs(ours - reference), abs(before - reference)) / reference
        rows.append([
            n, f"{t_ours:.2f} s", f"{t_before:.2f} s", f"{t_dense:.2f} s", f"{t_dense / t_ours:.1f}×",
            f"{m_ours / 2**20:.0f} MiB", f"{m_before / 2**20:.0f} MiB", f"{m_dense / 2**20:.0f} MiB", f"{worst:.1e}",
        ])  # fmt: skip
    return {
        "title": "δ_orth of O_eff, MiniLM layer 1 (H = 12, d = 384): from the heads vs dense O_eff",
        "columns": [
            "n tokens",
            "from heads",
            "previous (H² basis)",
            "dense O_eff",
            "dense/heads",
            "peak heads",
            "peak previous",
            "peak dense",
            "rel diff",
        ],
        "rows": rows,
        "notes": f"{platform.machine()}, numpy {np.__version__}; best of repeats; peak memory by tracemalloc",
    }
