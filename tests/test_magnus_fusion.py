"""MagnusBlock fusion of a trained model: fused matrices, the commutator budget, the model's decoding path, the run.

Oracles: commuting generators, for which every BCH truncation is the exact logarithm (float64 rounding); the
truncation error's fitted rate against the degree of the first omitted BCH term (ε^{N+1}); the exact product
against the r factors applied one by one (the same linear map: float64 rounding); the commutator sum and the hinge
penalty against the closed form of sl(2)'s brackets [E, F] = H, [H, E] = 2E, [H, F] = −2F; the annealed budget
against its geometric closed form; one decoding step against the full causal forward at that position (a second
algorithm); the FLOP model against its formula evaluated by hand; a resumed run against the uninterrupted one
(same seeds, one thread).  No test times anything: the wall clock is only checked to be recorded.
"""

import json
import math

import numpy as np
import pytest
import scipy.linalg

torch = pytest.importorskip("torch")

from workbench.experiments.magnus_fusion import (  # noqa: E402  # noqa: E402
    GeneratorLM,
    MagnusFusionConfig,
    budget_schedule,
    commutator_penalty,
    commutator_sum,
    decode_flop_share,
    exponential_maps,
    fused_maps,
    fused_matrix,
    fusion_wall_clock,
    magnus_fusion_rows,
    magnus_fusion_table,
    run_magnus_fusion,
)
from workbench.rates import fit_rate  # noqa: E402

torch.set_num_threads(1)


def _relative(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


# ---- fused matrices -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["diagonal", "polynomials"])
def test_every_order_is_exact_for_commuting_generators(rng, kind):
    # Oracle: commuting A_i have log(e^{A_1}⋯e^{A_r}) = Σ A_i, so every truncation equals the exact product.
    # Diagonal: every bracket is exactly 0 in floating point; tolerance 1e-14 (two expm of the same diagonal).
    # Polynomials in one M: brackets vanish only to rounding (~1e-16 ‖A‖²); tolerance 1e-12.
    if kind == "diagonal":
        generators = [np.diag(rng.uniform(-1, 1, 6)) for _ in range(4)]
        tolerance = 1e-14
    else:
        m = rng.standard_normal((6, 6)) / 6
        generators = [0.7 * m, m @ m - 0.2 * np.eye(6), np.eye(6) + 0.5 * m @ m @ m, -m]
        tolerance = 1e-12
    exact = fused_matrix(generators, "exact")
    for order in (1, 2, 3, 4):
        assert _relative(fused_matrix(generators, order), exact) < tolerance, order


def test_the_exact_route_is_the_product_of_the_factors(rng):
    # Oracle: e^{A_1} e^{A_2} e^{A_3} by scipy.linalg.expm, first factor leftmost; same arithmetic, so 1e-15.
    generators = [0.3 * rng.standard_normal((5, 5)) for _ in range(3)]
    product = scipy.linalg.expm(generators[0]) @ scipy.linalg.expm(generators[1]) @ scipy.linalg.expm(generators[2])
    assert _relative(fused_matrix(generators, "exact"), product) < 1e-15
    assert np.array_equal(fused_matrix(generators, 0), np.eye(5))


def test_truncation_error_falls_like_eps_to_the_n_plus_one(rng):
    # Oracle: the first BCH term left out of Ω_N has degree N + 1, so ‖e^{Ω_N} − Π‖ = O(ε^{N+1}) for generators
    # of size ε.  General (non-normal) Gaussian generators, ‖A_i‖_2 = ε; the fitted slope is within 0.2 of N + 1
    # (the next term's ε^{N+2} bends the line at the largest ε by less than that).
    base = [g / np.linalg.norm(g, 2) for g in rng.standard_normal((3, 5, 5))]
    scales = [0.1, 0.05, 0.025, 0.0125]
    for order in (1, 2, 3, 4):
        errors = []
        for eps in scales:
            generators = [eps * g for g in base]
            errors.append(_relative(fused_matrix(generators, order), fused_matrix(generators, "exact")))
        assert min(errors) > 1e-13  # truncation, not rounding
        assert fit_rate(scales, errors) == pytest.approx(order + 1, abs=0.2), order


@pytest.mark.parametrize(
    ("order", "error", "message"),
    [
        (7, ValueError, r"order must be an integer in \[0, 6\], got 7"),
        (-1, ValueError, r"order must be an integer in \[0, 6\], got -1"),
        ("magnus", ValueError, r"order must be an integer in \[0, 6\] or 'exact', got 'magnus'"),
        (1.5, TypeError, r"order must be an integer, got float"),
    ],
)
def test_fused_matrix_refuses_bad_orders(order, error, message):
    with pytest.raises(error, match=message):
        fused_matrix([np.eye(2), np.eye(2)], order)


def test_fused_matrix_refuses_an_overflowing_truncation():
    # e^{Ω_1} with Ω_1 = diag(900, 0) overflows float64 (e^900): an error naming Ω, never a silent inf.
    big = np.diag([300.0, 0.0])
    with pytest.raises(ValueError, match=r"exp\(Omega_1\) overflows float64 .* Omega \(max \|entry\| 900\)"):
        fused_matrix([big, big, big], 1)


# ---- the commutator budget ----------------------------------------------------------------------------------


def _sl2(a: float, b: float, c: float) -> torch.Tensor:
    e = torch.tensor([[0.0, 1.0], [0.0, 0.0]], dtype=torch.float64)
    f = torch.tensor([[0.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    h = torch.tensor([[1.0, 0.0], [0.0, -1.0]], dtype=torch.float64)
    return torch.stack([a * e, b * f, c * h])


def test_commutator_sum_and_penalty_match_the_sl2_closed_form():
    # Oracle: [aE, bF] = ab H (‖·‖_F = ab√2), [aE, cH] = −2ac E (2ac), [bF, cH] = 2bc F (2bc), for a, b, c > 0:
    # C = √2 ab + 2ac + 2bc.  Two blocks; the penalty is μ Σ_b max(0, C_b − τ).  The entries are exact binary
    # fractions times small integers, so only the square root rounds: tolerance 1e-14.
    blocks = [(0.5, 0.25, 0.125), (1.0, 2.0, 0.75)]
    closed = [math.sqrt(2) * a * b + 2 * a * c + 2 * b * c for a, b, c in blocks]
    stack = torch.stack([_sl2(*abc) for abc in blocks])
    assert commutator_sum(stack).tolist() == pytest.approx(closed, rel=1e-14)
    tau, mu = 1.0, 3.0  # block 0 is within budget (C ≈ 0.489), block 1 is over it (C ≈ 7.83)
    assert float(commutator_penalty(stack, tau, mu)) == pytest.approx(mu * (closed[1] - tau), rel=1e-14)
    assert float(commutator_penalty(stack, 10.0, mu)) == 0.0
    # Its gradient in a of the active block: μ ∂C/∂a = μ(√2 b + 2c) (closed form again).
    a = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    commutator_penalty(_sl2(a, 2.0, 0.75)[None], tau, mu).backward()
    assert float(a.grad) == pytest.approx(mu * (math.sqrt(2) * 2.0 + 2 * 0.75), rel=1e-14)


def test_the_budget_anneals_geometrically_then_holds():
    # Oracle: τ_t = τ κ^{max(0, 1 − t/(aS))}: κτ at t = 0, τ√κ halfway through the anneal, τ from t = aS on.
    tau, kappa = 0.03, 100.0
    assert budget_schedule(0, 200, tau, kappa, 0.5) == pytest.approx(kappa * tau, rel=1e-15)
    assert budget_schedule(50, 200, tau, kappa, 0.5) == pytest.approx(tau * math.sqrt(kappa), rel=1e-14)
    assert [budget_schedule(t, 200, tau, kappa, 0.5) for t in (100, 150, 200)] == [tau, tau, tau]
    assert {budget_schedule(t, 200, tau, 1.0, 0.5) for t in range(0, 201, 20)} == {tau}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: commutator_sum(torch.zeros(1, 3, 3)), r"shape \[\.\.\., r, n, n\] with r >= 2, got \(1, 3, 3\)"),
        (lambda: commutator_sum(torch.zeros(2, 3, 4)), r"generators must be square matrices, got shape \(2, 3, 4\)"),
        (lambda: commutator_penalty(torch.zeros(2, 2, 2), -1.0, 1.0), r"tau must be in \[0, inf\), got -1.0"),
        (lambda: commutator_penalty(torch.zeros(2, 2, 2), 1.0, 0.0), r"weight must be in \(0, inf\), got 0.0"),
        (lambda: budget_schedule(5, 4, 0.1, 10.0, 0.5), r"step must be an integer in \[0, 4\], got 5"),
        (lambda: budget_schedule(0, 4, 0.1, 0.5, 0.5), r"factor must be in \[1, inf\), got 0.5"),
    ],
)
def test_budget_functions_refuse_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---- the model ----------------------------------------------------------------------------------------------


def _model(init_scale: float = 0.5) -> GeneratorLM:
    torch.manual_seed(3)
    return GeneratorLM(256, 8, 2, 2, 3, mlp=True, init_scale=init_scale).double().eval()


@torch.no_grad()
def test_the_exact_product_is_the_unfused_model():
    # Oracle: x e^{A_1} e^{A_2} e^{A_3} = x Π: the fused model (one matmul by Π, scipy float64) and the unfused
    # one (three matmuls by torch.linalg.matrix_exp factors, the training path) compute the same map.  float64
    # with ‖A_i‖_2 ≈ 1 (far from the identity): the two roundings differ by ~1e-15 per block; tolerance 1e-12.
    model = _model()
    tokens = torch.randint(0, 256, (3, 12), generator=torch.Generator().manual_seed(0))
    unfused = model(tokens)
    model.set_maps(exponential_maps(model))
    assert _relative(model(tokens), unfused) < 1e-14  # the precomputed factors are the training path's factors
    model.set_maps(fused_maps(model, "exact"))
    assert _relative(model(tokens), unfused) < 1e-12
    model.set_maps(fused_maps(model, 1))  # and a truncation at these sizes is visibly not the same map
    assert _relative(model(tokens), unfused) > 1e-3


@torch.no_grad()
def test_skipping_the_sublayers_is_the_model_with_zero_generators():
    # Oracle: e^0 = I, so maps () and generators 0 give the same logits (x @ I = x exactly: tolerance 0).
    model = _model()
    for block in model.blocks:
        block.generators.zero_()
    tokens = torch.randint(0, 256, (2, 10), generator=torch.Generator().manual_seed(1))
    with_zero = model(tokens)
    model.set_maps([()] * len(model.blocks))
    assert torch.equal(model(tokens), with_zero)


@pytest.mark.parametrize("variant", ["generators", "unfused", "fused", "skipped"])
@torch.no_grad()
def test_one_decoding_step_is_the_full_forward_at_that_position(variant):
    # Oracle (second algorithm): the causal forward's logits at position p equal one step of the token at p
    # against the keys and values of positions < p kept by prefill.  float64: tolerance 1e-12.
    model = _model()
    maps = {"generators": None, "unfused": exponential_maps(model), "fused": fused_maps(model, "exact"),
            "skipped": [()] * len(model.blocks)}[variant]  # fmt: skip
    model.set_maps(maps)
    tokens = torch.randint(0, 256, (2, 9), generator=torch.Generator().manual_seed(2))
    full = model(tokens)
    for p in (1, 5, 8):
        cache = model.new_cache(2, 9)
        model.prefill(tokens[:, :p], cache)
        assert _relative(model.step(tokens[:, p], cache, p), full[:, p]) < 1e-12, p


def test_model_and_maps_refuse_bad_shapes():
    with pytest.raises(ValueError, match=r"d_model must be even and divisible by n_heads=2, got 7"):
        GeneratorLM(256, 7, 2, 1, 3)
    with pytest.raises(ValueError, match=r"n_generators must be an integer in \[2, 26\], got 1"):
        GeneratorLM(256, 8, 2, 1, 1)
    with pytest.raises(ValueError, match=r"maps must hold one tuple of matrices per block \(2\), got 1"):
        _model().set_maps([()])


def test_the_flop_model_is_its_formula():
    # Oracle: the formula by hand for d = 4, L = 2, r = 3, with MLP, V = 10, n = 5:
    # per block (4 + 3 + 8)·16 + 2·5·4 = 280, total 2·280 + 40 = 600, removable 2·2·16 = 64.
    share = decode_flop_share(4, 2, 3, True, 10, 5)
    assert share["saving"] == pytest.approx(64 / 600, rel=1e-15)
    assert share["sublayer_share"] == pytest.approx(96 / 600, rel=1e-15)
    # The longest context with a saving >= target: s(n) >= target there and < target one byte further.
    share = decode_flop_share(64, 2, 6, False, 10, 1, target=0.2)
    n = share["context_at_target"]
    assert (
        decode_flop_share(64, 2, 6, False, 10, n)["saving"]
        >= 0.2
        > decode_flop_share(64, 2, 6, False, 10, n + 1)["saving"]
    )
    assert decode_flop_share(128, 4, 4, True, 256, 1)["context_at_target"] is None  # 18 % at most, even at n = 0


# ---- the experiment -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"budgets": (None, None)}, r"budgets must be distinct, got \(None, None\)"),
        ({"budgets": (0.0,)}, r"budgets\[0\] must be in \(0, inf\), got 0.0"),
        ({"budgets": ()}, r"budgets must be a tuple of 1 to 8 budgets"),
        ({"orders": (1, 1)}, r"orders must be distinct, got \(1, 1\)"),
        ({"orders": (7,)}, r"orders\[0\] must be an integer in \[1, 6\], got 7"),
        ({"d_model": 130}, r"n_heads must divide d_model, got d_model=130 and n_heads=4"),
        ({"d_model": 9, "n_heads": 1}, r"d_model must be even \(the sinusoidal position encoding .*\), got 9"),
        ({"n_generators": 1}, r"n_generators must be an integer in \[2, 8\], got 1"),
        ({"eval_bytes": 64}, r"eval_bytes must be at least context=128, got 64"),
        ({"anneal_factor": 0.5}, r"anneal_factor must be in \[1, inf\), got 0.5"),
        ({"anneal_fraction": 0.0}, r"anneal_fraction must be in \(0, 1\], got 0.0"),
    ],
)
def test_config_refusals(overrides, message):
    with pytest.raises(ValueError, match=message):
        MagnusFusionConfig(**overrides)


def test_config_refuses_a_non_bool_mlp():
    with pytest.raises(TypeError, match=r"mlp must be a bool, got str"):
        MagnusFusionConfig(mlp="yes")


def _tiny(**overrides) -> MagnusFusionConfig:
    settings = dict(steps=6, log_every=3, eval_bytes=256, error_windows=2, time_context=32, time_repeats=1)
    return MagnusFusionConfig.preset("quick", **{**settings, **overrides})


def test_the_quick_preset_records_every_budget_and_order(tmp_path):
    config = MagnusFusionConfig.preset("quick")  # the CI preset, end to end (a few seconds)
    threads = torch.get_num_threads()
    result = run_magnus_fusion(config, out=tmp_path / "run", progress=False)
    assert torch.get_num_threads() == threads  # the timing's one thread is given back
    assert result["checks"]["all"], result["checks"]
    rows = magnus_fusion_rows(result)
    assert [(r["budget"], r["fusion"]) for r in rows] == [
        (b, f)
        for b in ("none", "0.05")
        for f in ("unfused", "identity", "order-1", "order-2", "order-3", "order-4", "exact")
    ]
    assert all(isinstance(v, (float, int)) for r in rows for k, v in r.items() if k not in ("budget", "fusion"))
    budgeted = result["runs"][1]
    assert budgeted["budget_excess"] == pytest.approx(max(budgeted["commutator_sums"]) - 0.05, rel=1e-12)
    assert result["runs"][0]["budget_excess"] is None
    assert set(budgeted["timing"]["decode"]) >= {"unfused", "fused", "skipped", "speedup", "saving", "bound"}
    table = magnus_fusion_table(result)
    assert table.count("| 0.05 |") == 7 + 1 + 1  # seven fusion rows, its commutator row, its timing row
    assert result["runs"][1]["budget_cost_bpb"] == result["runs"][1]["bpb"] - result["runs"][0]["bpb"]
    for name in ("results.json", "table.md", "fusion.png", "budget-0.pt", "budget-1.json", "run.json"):
        assert (tmp_path / "run" / name).is_file(), name


def test_a_resumed_run_gives_the_uninterrupted_rows(tmp_path):
    # Oracle: the uninterrupted run.  Each budget is seeded on its own (weights, windows), one thread: the
    # retrained budget's bpb equals the first run's to 1e-12 (a changed float32 reduction would leave ~1e-7).
    config = _tiny(budgets=(None, 0.05), orders=(1,))
    first = run_magnus_fusion(config, out=tmp_path / "run", progress=False)
    record_path = tmp_path / "run" / "run.json"
    record = json.loads(record_path.read_text())
    record.update(status="interrupted", done=["budget-0"])
    record_path.write_text(json.dumps(record))
    (tmp_path / "run" / "budget-1.json").unlink()
    resumed = run_magnus_fusion(config, out=tmp_path / "run", progress=False, resume=True)
    assert resumed["runs"][0] == first["runs"][0]  # read back
    assert resumed["runs"][1]["bpb"] == pytest.approx(first["runs"][1]["bpb"], rel=1e-12)
    assert resumed["runs"][1]["commutator_sums"] == pytest.approx(first["runs"][1]["commutator_sums"], rel=1e-12)


def test_the_wall_clock_is_recorded_for_every_variant():
    timing = fusion_wall_clock(_model().float(), context=16, batch=2, repeats=1, warmup=0)
    for workload in ("forward", "decode"):
        t = timing[workload]
        assert all(t[v] > 0 for v in ("unfused", "fused", "skipped"))
        rounds = 1 if workload == "forward" else 10
        assert [len(t["samples"][v]) for v in ("unfused", "fused", "skipped")] == [rounds] * 3
        # Oracle: the medians of the per-round ratios, recomputed from the recorded samples.
        u, f, s = (np.asarray(t["samples"][v]) for v in ("unfused", "fused", "skipped"))
        assert t["speedup"] == float(np.median(u / f))
        assert t["bound"] == float(1.0 - np.median(s / u))
    with pytest.raises(TypeError, match=r"model must be a GeneratorLM, got Linear"):
        fusion_wall_clock(torch.nn.Linear(2, 2), 4)
