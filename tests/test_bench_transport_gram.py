"""The transport-gram benchmark runs and its two routes agree (the benchmark itself is timed only by `bench`)."""

from workbench.benchmarks import transport_gram


def test_transport_gram_benchmark_agrees_with_the_dense_route():
    # Oracle: the dense O_eff route of the same benchmark; the reported relative difference must be at rounding
    # level (both are sums of the same O(H²) terms in a different order).
    report = transport_gram.run(sizes=(4,))
    assert report["columns"][0] == "n tokens" and len(report["rows"]) == 1
    row = report["rows"][0]
    assert row[0] == 4 and float(row[-1]) < 1e-9
