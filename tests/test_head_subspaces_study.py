"""``study_head_subspaces`` and ``study_induction_subspaces``: the heads as Grassmannian points, against attention.

Oracles:

- pretrained route, on a tiny random GPT-2 (4 heads, 2 layers, written by ``transformers`` at test time with the
  shared builders of ``checkpoints.py``) and a small corpus file: every per-layer test equals ``mantel_test`` of the
  matrices the study reports (the QK distance and the pattern distance, bit for bit; the Q/K/V/O distances of
  ``head_geometry``); the pattern distance equals ``attention_pattern_distance`` averaged over the windows of
  ``corpus_windows``, recomputed here from each window's trace; the pooled ρ equals ``scipy.stats.spearmanr`` of the
  within-layer pairs of all layers (pooling is the strata of ``mantel_test``); the model-wide test counts
  :math:`\\binom{LH}{2}` pairs; the data-aware null is ordered (5 % quantile ≤ median, angles in [0°, 90°]) and
  its closer-than-chance count is the count of the reported QK distances below its quantile;
- induction route, on a tiny ATTN model trained for 3 steps: the previous-token and induction heads are the argmaxes
  of the reported score arrays; the K-composition smallest angle equals ``scipy.linalg.subspace_angles`` between
  the column space of the previous-token head's slice of ``out.weight`` and that of
  :math:`C\\,\\operatorname{diag}(\\gamma)\\,W_K` of the induction head, read from the saved torch state dict.

Tolerances: the recomputed pattern distances repeat the study's float64 operations (asserted to 1e-12, measured 0);
Spearman's ρ from ranks agrees to 1e-12; the composition angles come from two different SVD routines on
well-separated 4-planes of :math:`\\mathbb R^{16}` (asserted to 1e-8 degrees, measured ~1e-13).  About 7 s.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from checkpoints import bpe, gpt2, save  # noqa: E402

from workbench.attention import attention_pattern_distance, mantel_test  # noqa: E402
from workbench.experiments import (  # noqa: E402
    InductionConfig,
    head_subspaces_table,
    study_head_subspaces,
    study_induction_subspaces,
)
from workbench.models import GEOMETRY_MAPS, corpus_windows, head_geometry, load_model, read_corpus  # noqa: E402

SENTENCES = [
    "the quick brown fox jumps over the lazy dog and runs into the woods",
    "attention heads read the residual stream as a walk on the tokens of a text",
    "a transport between two tokens carries one feature vector to the other",
    "the dog sleeps in the sun while the fox runs over the hills and far away",
]
WINDOWS, MAX_TOKENS, PERMUTATIONS, SEED = 3, 24, 99, 2


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return load_model(save(gpt2(seed=31), tmp_path_factory.mktemp("gpt2"), bpe(bos=False)))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    lines = [" ".join(SENTENCES[(k + j) % 4] for j in range(3)) for k in range(4)]
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def study(model, corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "run"
    result = study_head_subspaces(
        model, corpus=corpus, windows=WINDOWS, max_tokens=MAX_TOKENS, permutations=PERMUTATIONS, seed=SEED,
        out=out, progress=False,
    )  # fmt: skip
    return result, out


def _strict(path):
    def refuse(constant):
        raise AssertionError(f"non-strict JSON constant {constant} in {path}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _windows_patterns(model, corpus):
    """Per layer and model-wide attention-pattern distances, averaged over the study's windows, by hand."""
    L, H = model.n_layers, model.n_heads
    chosen = list(corpus_windows(read_corpus(corpus), model, MAX_TOKENS, WINDOWS, order="interleaved"))
    per_layer, whole = np.zeros((L, H, H)), np.zeros((L * H, L * H))
    for window in chosen:
        trace = model.trace_ids(window.ids, special=window.special)
        A = np.asarray(trace.attention, dtype=np.float64)
        rows = ~np.asarray(window.special, dtype=bool)
        per_layer += np.stack([attention_pattern_distance(A[layer], rows=rows) for layer in range(L)])
        whole += attention_pattern_distance(A.reshape(L * H, *A.shape[-2:]), rows=rows)
    return per_layer / len(chosen), whole / len(chosen), len(chosen)


def test_per_layer_tests_are_the_mantel_tests_of_the_reported_matrices(study, model, corpus):
    result, _ = study
    record = result["models"][0]
    assert result["study"] == "head-subspaces" and result["settings"]["permutations"] == PERMUTATIONS
    patterns, _, windows = _windows_patterns(model, corpus)
    assert record["windows"] == windows == WINDOWS and record["n_heads"] == 4 and record["n_layers"] == 2
    geometry = head_geometry(model, seed=SEED)
    H = model.n_heads
    for layer in record["layers"]:
        index = layer["layer"]
        QK, T = np.array(layer["qk_distance"]), np.array(layer["pattern_distance"])
        np.testing.assert_allclose(T, patterns[index], rtol=0, atol=1e-12)  # the windows' mean TV distance
        assert np.array_equal(QK, geometry.layers[index].distances["QK"])
        assert layer["median_pattern_distance"] == pytest.approx(float(np.median(T[np.triu_indices(H, 1)])))
        for name in GEOMETRY_MAPS:
            D = geometry.layers[index].distances[name]
            want = mantel_test(D, T, permutations=PERMUTATIONS, seed=SEED + index)
            got = layer["tests"][name]
            assert (got["rho"], got["p_value"], got["pairs"]) == (want.rho, want.p_value, want.pairs), name
            assert got["pairs"] == math.comb(H, 2)
            # 4 heads have 4! = 24 relabellings, fewer than PERMUTATIONS: enumerated, the p-value exact
            assert got["permutations"] == want.permutations == math.factorial(H) and got["exact"] is True
        assert layer["summary"]["QK"] == vars(geometry.layers[index].summary["QK"])


def test_pooled_and_model_wide_tests(study, model, corpus):
    from scipy import stats

    result, _ = study
    record = result["models"][0]
    L, H = model.n_layers, model.n_heads
    upper = np.triu_indices(H, 1)
    # pooled within layers: the strata of mantel_test keep the within-layer pairs only, so ρ is the Spearman ρ
    # of every layer's pairs put together
    qk = np.concatenate([np.array(layer["qk_distance"])[upper] for layer in record["layers"]])
    tv = np.concatenate([np.array(layer["pattern_distance"])[upper] for layer in record["layers"]])
    pooled = record["pooled_within_layers"]["QK"]
    assert pooled["pairs"] == L * math.comb(H, 2)
    assert pooled["rho"] == pytest.approx(float(stats.spearmanr(qk, tv).statistic), abs=1e-12)
    assert 0 < pooled["p_value"] <= 1
    wide = record["model_wide"]
    for name in GEOMETRY_MAPS:
        assert wide[name]["pairs"] == math.comb(L * H, 2), name
        assert record["pooled_within_layers"][name]["pairs"] == L * math.comb(H, 2), name
        assert -1 <= wide[name]["rho"] <= 1 and 0 < wide[name]["p_value"] <= 1
    # the model-wide pattern matrix recomputed by hand: its test is the reported one
    _, whole, _ = _windows_patterns(model, corpus)
    from workbench.attention import HeadSubspaces, head_subspaces
    from workbench.models import head_distance_matrices

    every = head_distance_matrices(HeadSubspaces.concatenate([head_subspaces(x.attention) for x in model.layers]))
    want = mantel_test(every["QK"], whole, permutations=PERMUTATIONS, seed=SEED)
    assert wide["QK"]["rho"] == pytest.approx(want.rho, abs=1e-12) and wide["QK"]["p_value"] == want.p_value
    strata = np.repeat(np.arange(L), H)
    want = mantel_test(every["QK"], whole, strata=strata, permutations=PERMUTATIONS, seed=SEED)
    assert pooled["rho"] == pytest.approx(want.rho, abs=1e-12) and pooled["p_value"] == want.p_value


def test_the_data_aware_null(study):
    result, _ = study
    for layer in result["models"][0]["layers"]:
        null = layer["data_null"]
        assert set(null) >= {
            "median_angle", "smallest_angle", "median_distance", "qk_median_distance", "qk_chance_distance",
            "samples", "qk_closer_than_chance",
        }  # fmt: skip
        assert null["samples"] == 256
        assert 0 < null["qk_chance_distance"] <= null["qk_median_distance"]
        assert 0 <= null["smallest_angle"] <= null["median_angle"] <= 90
        assert null["median_distance"] < null["qk_median_distance"]  # hypot of two positive distances
        QK = np.array(layer["qk_distance"])
        upper = np.triu_indices(QK.shape[0], 1)
        assert null["qk_closer_than_chance"] == int(np.sum(QK[upper] < null["qk_chance_distance"]))


def test_the_run_directory_and_the_table(study):
    result, out = study
    assert _strict(out / "results.json") == result
    assert json.dumps(result, allow_nan=False)
    names = {p.name for p in out.iterdir()}
    assert {"results.json", "table.md", "distances.png", "correlation.png"} <= names
    assert all((out / name).stat().st_size > 1000 for name in ("distances.png", "correlation.png"))
    table = head_subspaces_table(result)
    assert (out / "table.md").read_text(encoding="utf-8") == table + "\n"
    lines = table.splitlines()
    for layer in result["models"][0]["layers"]:
        rho = layer["tests"]["QK"]["rho"]
        assert any(line.startswith(f"| {layer['layer']} |") and f"{rho:+.2f}" in line for line in lines)
    assert any(line.startswith("| pooled within layers |") for line in lines)
    assert any(line.startswith("| model-wide |") for line in lines)


def test_study_head_subspaces_refusals(model, corpus):
    with pytest.raises(TypeError, match="models must be a Transformer or a non-empty sequence"):
        study_head_subspaces([], corpus=corpus)
    with pytest.raises(ValueError, match=r"permutations must be an integer in \[99, 1000000\], got 10"):
        study_head_subspaces(model, corpus=corpus, permutations=10, progress=False)
    with pytest.raises(ValueError, match="max_tokens"):
        study_head_subspaces(model, corpus=corpus, max_tokens=10_000, progress=False)


# ---- the induction models ------------------------------------------------------------------------------------

TINY = dict(vocab_size=8, half_length=4, d_model=16, n_heads=4, n_layers=2, steps=3, batch=4, log_every=1, eval_batch=4)


@pytest.fixture(scope="module")
def induction(tmp_path_factory):
    out = tmp_path_factory.mktemp("induction")
    result = study_induction_subspaces(InductionConfig(**TINY), seeds=(0,), permutations=99, out=out, progress=False)
    return result, out


def test_induction_heads_and_their_k_composition(induction):
    from scipy.linalg import subspace_angles

    result, out = induction
    assert result["study"] == "head-subspaces-induction" and [r["seed"] for r in result["seeds"]] == [0]
    record = result["seeds"][0]
    previous, score = np.array(record["previous_token_score"]), np.array(record["induction_score"])
    assert previous.shape == score.shape == (2, 4)
    assert record["previous_token_head"] == [0, int(np.argmax(previous[0]))]
    assert record["induction_head"] == [1, int(np.argmax(score[1]))]
    for read in ("Q", "K", "V"):
        for key in ("smallest_angle", "median_angle"):
            angles = np.array(record["composition"][read][key])
            assert angles.shape == (4, 4) and np.all((angles >= 0) & (angles <= 90)), (read, key)
    k = record["k_composition"]
    assert k["pairs"] == 16 and 1 <= k["rank_among_pairs"] <= k["pairs"]
    # Oracle: the saved weights, by scipy (module docstring)
    state = torch.load(out / "induction-seed-0" / "ATTN-attn-only.pt", weights_only=True)
    D, dh = 16, 4
    a, b = record["previous_token_head"][1], record["induction_head"][1]
    writes = state["blocks.0.attention.out.weight"].double().numpy()[:, a * dh : (a + 1) * dh]  # [D, d_h]
    W_K = state["blocks.1.attention.key.weight"].double().numpy()[b * dh : (b + 1) * dh].T  # [D, d_h]
    gamma = state["blocks.1.norm_attention.weight"].double().numpy()
    C = np.eye(D) - np.ones((D, D)) / D
    reads = C @ np.diag(gamma) @ W_K
    want = math.degrees(float(np.min(subspace_angles(writes, reads))))
    assert k["smallest_angle"] == pytest.approx(want, abs=1e-8)
    assert k["smallest_angle"] == pytest.approx(record["composition"]["K"]["smallest_angle"][a][b], abs=1e-12)
    smallest = np.array(record["composition"]["K"]["smallest_angle"])
    assert k["rank_among_pairs"] == 1 + int(np.sum(smallest < smallest[a, b]))
    # the Grassmannian points of all 8 heads: C(8, 2) pairs
    assert record["tests"]["QK"]["pairs"] == math.comb(8, 2)
    assert np.array(record["qk_distance"]).shape == np.array(record["pattern_distance"]).shape == (8, 8)
    # the run directory
    assert _strict(out / "results.json") == result
    assert (out / "table.md").read_text(encoding="utf-8") == head_subspaces_table(result) + "\n"
    assert head_subspaces_table(result).splitlines()[2].startswith("| ATTN 0 |")


def test_study_induction_subspaces_refusals(tmp_path):
    with pytest.raises(
        ValueError, match=r"out must be a run directory \(the trained models are kept there\), got None"
    ):
        study_induction_subspaces(InductionConfig(**TINY), seeds=(0,))
    with pytest.raises(TypeError, match="config must be an InductionConfig"):
        study_induction_subspaces({"steps": 3}, out=tmp_path)
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        study_induction_subspaces(InductionConfig(**TINY), seeds=(), out=tmp_path)
