"""δ_orth of the effective transports of a real layer: from the heads vs from the dense O_eff.

The dense route is what a user would write from the definition: build O_eff (an n × n × d × d array,
`effective_connection`) and reduce it (`orthogonality_deviation`).  `effective_transport_gram` evaluates the
same weighted mean as a quadratic form in the head weights and never forms O_eff.  Both run on layer 1 of
all-MiniLM-L6-v2 (H = 12 heads, d = 384) on token sequences of n random word pieces; the two values are
compared (relative difference) so a fast wrong answer cannot pass.  Peak memory is what `tracemalloc` sees
(numpy allocations included).  Run: workbench bench transport-gram
"""

import platform
import timeit
import tracemalloc

import numpy as np

from workbench.attention import effective_connection, effective_transport_gram, load_minilm, orthogonality_deviation

#: The ``run`` keywords ``workbench bench`` may pass: this benchmark takes no command-line options.
OPTIONS = ()


def dense(A, M):
    A_eff, O_eff = effective_connection(A, M)
    return orthogonality_deviation(O_eff, weights=A_eff)


def light(A, M):
    return effective_transport_gram(A, M).mean


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
        ids = rng.integers(1999, 30000, size=n)
        A = model.trace_ids(ids).attention[layer]
        ours, t_ours, m_ours = measure(light, A, M, repeat=3)
        reference, t_dense, m_dense = measure(dense, A, M, repeat=2)
        rows.append([
            n, f"{t_ours:.2f} s", f"{t_dense:.2f} s", f"{t_dense / t_ours:.1f}×",
            f"{m_ours / 2**20:.0f} MiB", f"{m_dense / 2**20:.0f} MiB", f"{abs(ours - reference) / reference:.1e}",
        ])  # fmt: skip
    return {
        "title": "δ_orth of O_eff, MiniLM layer 1 (H = 12, d = 384): from the heads vs dense O_eff",
        "columns": ["n tokens", "from heads", "dense O_eff", "dense/heads", "peak heads", "peak dense", "rel diff"],
        "rows": rows,
        "notes": f"{platform.machine()}, numpy {np.__version__}; best of repeats; peak memory by tracemalloc",
    }
