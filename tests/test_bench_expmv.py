"""`workbench bench expmv` at small sizes, so that the benchmark cannot rot: every row agrees with scipy.

Oracle: ``scipy.sparse.linalg.expm_multiply`` on the same operator and block, in the same run (the table's "rel diff"
column).  1e-10: both methods are accurate to ~1e-14 relative here (the recorded full-size runs: ≤ 4.6e-14).
"""

from __future__ import annotations


def test_every_row_of_the_expmv_benchmark_agrees_with_scipy():
    from workbench.benchmarks import expmv

    report = expmv.run(sizes=(400, 900, 1600))
    rows = report["rows"]
    times = {float(row[2]) for row in rows}
    assert {0.1, 1.0} <= times  # the small-t rows of every operator class
    classes = {row[0] for row in rows}
    assert classes == {"path heat e^{−tL}", "grid heat e^{−tL}", "kNN random walk e^{tQ}", "banded Markov e^{tQ}",
                       "non-normal, general"}  # fmt: skip
    for row in rows:
        assert float(row[-1]) <= 1e-10, row
