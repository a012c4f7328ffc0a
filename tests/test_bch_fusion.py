"""BCH/Magnus fusion micro-experiment (workbench.experiments.bch_fusion, benchmarks/bch_fusion.py).

Oracles: dense ``scipy.linalg.expm``/``logm`` products, the closed form of the leading first-order error
(½[A, B]), ``scipy.integrate.solve_ivp`` (DOP853) for the continuous flow, a fine exponential-midpoint
product as a second flow oracle, and fitted log-log slopes against the truncation order.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.linalg
import torch

import workbench.benchmarks.bch_fusion as bench
from workbench.catalogue import fit_rate
from workbench.experiments import (
    ResidualStack,
    commutator_summary,
    fuse,
    fusion_slopes,
    fusion_table,
    magnus_stack_table,
    product_of_exponentials,
    residual_stack,
)
from workbench.lie import bch_many


def _skew(rng, n):
    m = rng.standard_normal((n, n))
    return (m - m.T) / np.linalg.norm(m - m.T)


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


# --- BCH fusion table -----------------------------------------------------------------------------------------


def test_fusion_slopes_are_order_plus_one():
    """Fused error of order N falls like ε^{N+1} (first omitted BCH degree).

    Oracle: dense expm product.  Tolerance 0.3 on the fitted slope (measured within 0.02); errors at the
    rounding floor are left out of the fit by fusion_slopes.
    """
    rows = fusion_table()
    slopes = fusion_slopes(rows)
    assert set(slopes) == {1, 2, 3, 4}
    for order, slope in slopes.items():
        assert slope is not None and abs(slope - (order + 1)) < 0.3, (order, slope)
    # errors decrease with the order at every scale (each order adds a power of ε ≤ 0.1)
    for row in rows:
        errs = [row["errors"][n] for n in (1, 2, 3)]
        assert errs[0] > errs[1] > errs[2]


def test_first_order_error_is_half_the_commutator_two_factors():
    """Two factors: e^{A+B} − e^A e^B = −½[A, B] + O(ε³) (closed form from the BCH series).

    Oracle: the closed form, against dense expm.  The remainder is O(ε³) with ‖A‖_F = ‖B‖_F = ε: bound
    ‖·‖ ≤ ε³ (the cubic BCH terms have coefficients 1/12 and the dexp correction ¼‖[A+B, [A,B]]‖ ≤ ε³).
    """
    rng = np.random.default_rng(4)
    base = [_skew(rng, 6), _skew(rng, 6)]
    for eps in (1e-1, 1e-2, 1e-3):
        a, b = (eps * m for m in base)
        remainder = scipy.linalg.expm(fuse([a, b], 1)) - product_of_exponentials([a, b]) + (a @ b - b @ a) / 2
        assert np.linalg.norm(remainder) <= eps**3


def test_leading_ratio_tends_to_one():
    """ρ = err₁‖Π‖ / ‖½Σ_{i<j}[A_i, A_j]‖ → 1 and, for two factors, err₁‖Π‖ / comm_max → ½.

    Oracle: the closed form above.  ρ − 1 = O(ε): tolerance |ρ − 1| ≤ ε (measured constant ~0.05 for k = 4;
    for two skew factors the O(ε) term is orthogonal to [A, B] and ρ − 1 = O(ε²)).
    """
    for k in (2, 4):
        rows = fusion_table(n_generators=k, scales=(1e-1, 1e-2, 1e-3))
        for row in rows:
            assert abs(row["leading_ratio"] - 1.0) <= row["scale"]
    rows = fusion_table(n_generators=2, scales=(1e-2, 1e-3))
    for row in rows:
        size = np.sqrt(8)  # ‖Π‖_F of an 8×8 orthogonal matrix
        assert row["errors"][1] * size / row["comm_max"] == pytest.approx(0.5, rel=row["scale"])
        assert row["bracket_norm"] == pytest.approx(row["comm_max"] / 2, rel=1e-12)


def test_safe_flag_logic_and_thresholds():
    """safe = comm_max < comm_threshold and err_2 < err_threshold, recomputed from the row (exact logic)."""
    rows = fusion_table(scales=(1.0, 0.3, 1e-1, 1e-2))
    assert [r["safe"] for r in rows] == [False, False, True, True]  # seed defaults 1e-2 / 1e-3
    for row in rows:
        assert row["safe"] == (row["comm_max"] < 1e-2 and row["err_2"] < 1e-3)
    strict = fusion_table(scales=(1e-1, 1e-2), comm_threshold=1e-5)
    assert [r["safe"] for r in strict] == [False, False]  # comm_max ≈ 4.9e-3, 4.9e-5
    loose = fusion_table(scales=(1.0,), comm_threshold=1.0, err_threshold=0.5)
    assert loose[0]["safe"] is True  # comm_max 0.49, err_2 0.044
    tight_err = fusion_table(scales=(1e-1,), err_threshold=1e-6)
    assert tight_err[0]["safe"] is False  # err_2 ≈ 4.6e-5


def test_err2_computed_when_order_two_not_listed():
    """The safe flag always uses the order-2 error (same numbers whether or not 2 is in orders)."""
    with_two = fusion_table(scales=(1e-1,), orders=(1, 2))[0]
    without = fusion_table(scales=(1e-1,), orders=(1,))[0]
    assert without["err_2"] == with_two["errors"][2]
    assert set(without["errors"]) == {1}


def test_commutator_summary_closed_form():
    """[E12, E21] = diag(1, −1) has Frobenius norm √2; I commutes with everything (exact)."""
    e12, e21 = np.eye(2, k=1), np.eye(2, k=-1)
    comm_max, comm_mean = commutator_summary([e12, e21, np.eye(2)])
    assert comm_max == np.sqrt(2)
    assert comm_mean == pytest.approx(np.sqrt(2) / 3, rel=1e-15)


def test_commutator_summary_is_the_upper_triangle_of_the_log_lens_map():
    """The fusion summary (max, mean over i < j) against the log lens's full matrix (independent code, 1e-15)."""
    from workbench.lens import commutator_norms

    rng = np.random.default_rng(3)
    gens = [_skew(rng, 5) for _ in range(4)]
    upper = commutator_norms(gens)[np.triu_indices(4, k=1)]
    comm_max, comm_mean = commutator_summary(gens)
    assert comm_max == pytest.approx(upper.max(), rel=1e-15)
    assert comm_mean == pytest.approx(upper.mean(), rel=1e-14)


def test_second_order_error_is_the_cubic_bch_term():
    """e^{Ω_{≤2}} − Π = −Ω^{(3)} + O(ε⁴), Ω^{(3)} = bch_many(k, 3).component(3) on the generators.

    Oracle: dense expm product and the engine's degree-3 part, as a matrix (not only its norm).  Relative
    remainder ‖e^{Ω_{≤2}} − Π + Ω^{(3)}‖ / ‖Ω^{(3)}‖ = O(ε): tolerance 5ε (measured 0.60ε–0.66ε for k = 3, 4).
    """
    rng = np.random.default_rng(5)
    for k in (3, 4):
        base = [_skew(rng, 6) for _ in range(k)]
        for eps in (1e-2, 1e-3):
            mats = [eps * m for m in base]
            cubic = bch_many(k, 3).component(3).evaluate(*mats)
            remainder = scipy.linalg.expm(fuse(mats, 2)) - product_of_exponentials(mats) + cubic
            assert np.linalg.norm(remainder) <= 5 * eps * np.linalg.norm(cubic), (k, eps)


# --- fuse / product conventions -------------------------------------------------------------------------------


def test_fuse_matches_logm_of_product_in_letter_order():
    """fuse((A_1, …, A_k), N) ≈ log(e^{A_1}⋯e^{A_k}) (first generator leftmost), not the reversed product.

    Oracle: scipy logm of the dense product.  With ‖A_i‖_F = 0.05, order 5 leaves degree-6 terms
    ~(0.15)^6 ≈ 1e-5 times coefficients ≤ 1e-2: tolerance 1e-7; the reversed product differs at degree 2
    (≈ ½Σ‖[A_i, A_j]‖ ~ 1e-3).
    """
    rng = np.random.default_rng(1)
    mats = [0.05 * _skew(rng, 5) for _ in range(3)]
    exact = np.real(scipy.linalg.logm(product_of_exponentials(mats)))
    reversed_log = np.real(scipy.linalg.logm(product_of_exponentials(mats[::-1])))
    omega = fuse(mats, 5)
    assert np.linalg.norm(omega - exact) < 1e-7
    assert np.linalg.norm(omega - reversed_log) > 1e-4
    assert np.allclose(product_of_exponentials(mats[:2]), scipy.linalg.expm(mats[0]) @ scipy.linalg.expm(mats[1]))
    assert np.array_equal(fuse(mats[:1], 3), mats[0])  # log(e^A) = A


def test_fuse_torch_matches_numpy():
    """The series evaluates on torch tensors too (same float64 arithmetic; tolerance 1e-15 absolute)."""
    rng = np.random.default_rng(2)
    mats = [0.1 * _skew(rng, 4) for _ in range(4)]
    got = fuse([torch.from_numpy(m) for m in mats], 3)
    assert isinstance(got, torch.Tensor)
    assert np.allclose(got.numpy(), fuse(mats, 3), rtol=0, atol=1e-15)


# --- residual stack / Magnus ----------------------------------------------------------------------------------


def _stack_coefficients(seed=0, n=5):
    return tuple(g / np.linalg.norm(g, 2) for g in np.random.default_rng(seed).standard_normal((3, n, n)))


def test_flow_oracle_agrees_with_fine_product():
    """solve_ivp (DOP853, rtol 1e-13) against a 400-step exponential-midpoint product (global error O(h²)).

    Tolerance 1e-6 relative: the fine product's error ~ T·h²·‖A‖³/12 ≈ 0.5·(1/800)²·… ≈ 1e-7.
    """
    coefficients = _stack_coefficients()
    fine = ResidualStack(coefficients, 400, 0.5)
    assert _rel(fine.product(), fine.flow()) < 1e-6


def test_magnus_fused_slopes_against_flow():
    """Magnus order p of A(t) = X_0 + tX_1 + t²X_2: ‖e^{Ω^{[p]}(T)} − Y(T)‖ = O(T^{p+1}).

    Oracle: solve_ivp DOP853.  Tolerance 0.3 on the fitted slope in h (T = 4h; measured within 0.05).
    """
    coefficients = _stack_coefficients(seed=3)
    steps = np.geomspace(0.01, 0.05, 5)
    for order in (1, 2, 3, 4):
        errors = []
        for h in steps:
            stack = ResidualStack(coefficients, 4, 4 * h)
            errors.append(_rel(scipy.linalg.expm(stack.fused("magnus", order)), stack.flow()))
        assert abs(fit_rate(steps, errors) - (order + 1)) < 0.3, order


def test_stack_discretisation_and_bch_fusion_slopes():
    """At fixed L: midpoint stack vs flow O(h³); BCH-fused stack vs stack O(h³), O(h⁵) for orders 1, 2.

    Oracles: solve_ivp (flow), dense expm layers (stack).  Order 1 misses ½Σ h²[A_i, A_j] with
    A_i − A_j = O(h), hence h³; order 2 misses the degree-3 term, O(h⁵) for time-symmetric midpoint samples.
    Tolerance 0.3 on slopes (measured within 0.07 over 16 seeds).
    """
    coefficients = _stack_coefficients(seed=5, n=6)
    steps = np.geomspace(0.01, 0.05, 5)
    stack_err, bch_err = [], {1: [], 2: []}
    for h in steps:
        stack = ResidualStack(coefficients, 4, 4 * h)
        product = stack.product()
        stack_err.append(_rel(product, stack.flow()))
        for order in bch_err:
            bch_err[order].append(_rel(scipy.linalg.expm(stack.fused("bch", order)), product))
    assert abs(fit_rate(steps, stack_err) - 3) < 0.3
    assert abs(fit_rate(steps, bch_err[1]) - 3) < 0.3
    assert abs(fit_rate(steps, bch_err[2]) - 5) < 0.3


def test_stack_apply_and_layer_order():
    """apply (L matvecs) equals the product matrix, and layer 0 acts first (rightmost factor); exact to 1e-14."""
    stack = residual_stack(n_layers=3, dim=4, horizon=0.3, seed=2)
    x = np.random.default_rng(0).standard_normal((4, 7))
    layers = stack.layers()
    assert np.allclose(stack.apply(x), stack.product() @ x, rtol=0, atol=1e-14)
    assert np.allclose(stack.product(), layers[2] @ layers[1] @ layers[0], rtol=0, atol=1e-15)
    eye = np.eye(4)
    euler = (eye + stack.step * stack.generators()[2]) @ (eye + stack.step * stack.generators()[1])
    assert np.allclose(stack.euler_product(), euler @ (eye + stack.step * stack.generators()[0]), atol=1e-15)


def test_magnus_stack_table_rows():
    """Row structure; BCH fusion converges to the stack (errors fall with the order), Euler is O(h) off."""
    rows = magnus_stack_table(residual_stack(n_layers=4, dim=5, horizon=0.4), orders=(1, 2, 4))
    assert [(r["method"], r["order"]) for r in rows] == [
        ("euler", None), ("stack", None), ("bch", 1), ("bch", 2), ("bch", 4),
        ("magnus", 1), ("magnus", 2), ("magnus", 4),
    ]  # fmt: skip
    by = {(r["method"], r["order"]): r for r in rows}
    assert by[("stack", None)]["error_stack"] == 0.0
    assert by[("bch", 4)]["error_stack"] < by[("bch", 2)]["error_stack"] < by[("bch", 1)]["error_stack"]
    assert by[("magnus", 4)]["error_flow"] < by[("magnus", 1)]["error_flow"]
    assert by[("euler", None)]["error_stack"] > by[("stack", None)]["error_flow"]  # O(h) vs O(h²)
    assert all(r["matmuls"] == 1 for r in rows[2:]) and rows[0]["matmuls"] == 4


# --- validation -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"n_generators": 1}, ValueError, r"n_generators must be an integer in \[2, 8\], got 1"),
        ({"dim": 1}, ValueError, r"dim must be an integer >= 2, got 1"),
        ({"scales": ()}, ValueError, r"scales must be a non-empty sequence of numbers in \(0, 1\], got \(\)"),
        ({"scales": (0.1, 0.0)}, ValueError, r"scales\[1\] must be in \(0, 1\], got 0.0"),
        ({"orders": (0,)}, ValueError, r"orders\[0\] must be an integer in \[1, 6\], got 0"),
        ({"orders": (1, 1)}, ValueError, r"orders must be distinct, got \(1, 1\)"),
        ({"orders": (1.5,)}, TypeError, r"orders\[0\] must be an integer, got float"),
        ({"seed": -1}, ValueError, r"seed must be an integer >= 0, got -1"),
        ({"comm_threshold": 0.0}, ValueError, r"comm_threshold must be in \(0, inf\), got 0.0"),
        ({"err_threshold": -1}, ValueError, r"err_threshold must be in \(0, inf\), got -1.0"),
    ],
)
def test_fusion_table_validation(kwargs, error, message):
    with pytest.raises(error, match=message):
        fusion_table(**kwargs)


def test_other_validation_messages():
    a = np.zeros((2, 2))
    with pytest.raises(ValueError, match=r"order must be an integer in \[1, 6\], got 7"):
        fuse([a, a], 7)
    with pytest.raises(ValueError, match=r"generators must share one shape, got \(2, 2\) and \(3, 3\)"):
        fuse([a, np.zeros((3, 3))], 2)
    with pytest.raises(ValueError, match=r"generators must be a non-empty sequence of square matrices, got list"):
        fuse([], 2)
    with pytest.raises(ValueError, match=r"generators must hold at least 2 matrices for a commutator, got 1"):
        commutator_summary([a])
    with pytest.raises(ValueError, match=r"horizon must be in \(0, 2\], got 3.0"):
        residual_stack(horizon=3.0)
    with pytest.raises(ValueError, match=r"n_terms must be an integer in \[1, 4\], got 5"):
        residual_stack(n_terms=5)
    with pytest.raises(TypeError, match=r"stack must be a ResidualStack, got dict"):
        magnus_stack_table({})
    with pytest.raises(ValueError, match=r"method must be one of 'bch', 'magnus', got 'euler'"):
        residual_stack(dim=2).fused("euler", 2)
    with pytest.raises(ValueError, match=r"method 'bch' fuses at most 12 layers \(series size\), got n_layers=13"):
        residual_stack(n_layers=13, dim=2).fused("bch", 1)
    with pytest.raises(ValueError, match=r"floor must be in \(0, inf\), got 0.0"):
        fusion_slopes(fusion_table(scales=(0.1,)), floor=0.0)
    with pytest.raises(ValueError, match=r"rows must be a non-empty sequence of fusion_table rows, got \[\]"):
        fusion_slopes([])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{}], r"rows\[0\] must be a fusion_table row with keys 'scale' and 'errors', got \[\]"),
        ([{"scale": 0.1}], r"rows\[0\] must be a fusion_table row with keys 'scale' and 'errors', got \['scale'\]"),
        ([3], r"rows\[0\] must be a fusion_table row with keys 'scale' and 'errors', got int"),
        ([{"scale": -1.0, "errors": {1: 0.1}}], r"rows\[0\]\['scale'\] must be in \(0, inf\), got -1.0"),
        ([{"scale": 0.1, "errors": {}}], r"rows\[0\]\['errors'\] must be a non-empty mapping order -> error, got \{\}"),
        ([{"scale": 0.1, "errors": {1: float("nan")}}], r"rows\[0\]\['errors'\]\[1\] must be in \[0, inf\), got nan"),
        (
            [{"scale": 0.1, "errors": {1: 0.1}}, {"scale": 0.01, "errors": {2: 0.1}}],
            r"rows\[1\]\['errors'\] must have the orders of rows\[0\], \[1\], got \[2\]",
        ),
    ],
)
def test_fusion_slopes_validates_rows(rows, message):
    """Malformed rows used to raise a bare KeyError deep in the fit; now a ValueError names the row."""
    with pytest.raises(ValueError, match=message):
        fusion_slopes(rows)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (((np.eye(2),), 0, 1.0), ValueError, r"n_layers must be an integer >= 1, got 0"),
        (((np.eye(2),), 1.5, 1.0), TypeError, r"n_layers must be an integer, got float"),
        (((np.eye(2),), 2, 0.0), ValueError, r"horizon must be in \(0, inf\), got 0.0"),
        (((np.eye(2),), 2, float("inf")), ValueError, r"horizon must be in \(0, inf\), got inf"),
        (((), 2, 1.0), ValueError, r"coefficients must be a non-empty sequence of square matrices, got tuple"),
        (((np.ones((2, 3)),), 2, 1.0), ValueError, r"coefficients\[0\] must be a square matrix"),
        (((np.eye(2), np.eye(3)), 2, 1.0), ValueError, r"coefficients must share one shape, got \(2, 2\) and \(3, 3\)"),
        (((np.eye(2), np.full((2, 2), np.nan)), 2, 1.0), ValueError, r"coefficients\[1\] must be finite, got 4"),
    ],
)
def test_residual_stack_validates_on_construction(args, error, message):
    """Direct construction used to accept n_layers = 0 (ZeroDivisionError later in .step); now checked at once."""
    with pytest.raises(error, match=message):
        ResidualStack(*args)


def test_residual_stack_stores_float_arrays():
    """A list of nested lists is stored as a tuple of float64 arrays; n_layers and horizon are normalised."""
    stack = ResidualStack([[[0.0, 1.0], [-1.0, 0.0]]], 2, 0.5)
    assert isinstance(stack.coefficients, tuple) and stack.coefficients[0].dtype == np.float64
    assert stack.n_layers == 2 and stack.step == 0.25
    # one layer of the rotation generator: e^{hX} with h = 0.25, twice, is the rotation by 0.5 (exact oracle)
    np.testing.assert_allclose(stack.product(), [[np.cos(0.5), np.sin(0.5)], [-np.sin(0.5), np.cos(0.5)]], atol=1e-15)


# --- benchmark ------------------------------------------------------------------------------------------------


def test_benchmark_skipped_by_environment_toggle(monkeypatch):
    """GAUGE_BCH_FUSION=0 returns a skipped report with empty rows (the seed's toggle)."""
    monkeypatch.setenv("GAUGE_BCH_FUSION", "0")
    report = bench.run()
    assert "skipped" in report["title"] and report["rows"] == []
    assert "GAUGE_BCH_FUSION=0" in report["notes"]


def test_benchmark_report_structure(monkeypatch):
    """Small run: the CLI contract (title/columns/rows/notes), the extra table, JSON-serialisable.

    Structure only — timings are printed, never asserted.
    """
    monkeypatch.delenv("GAUGE_BCH_FUSION", raising=False)
    report = bench.run(scales=(1e-1, 1e-2), orders=(1, 2), n_layers=3, stack_dim=6, batch=4, repeat=1)
    assert {"title", "columns", "rows", "notes", "tables"} <= set(report)
    assert len(report["rows"]) == 2 and all(len(r) == len(report["columns"]) for r in report["rows"])
    (table,) = report["tables"]
    assert len(table["rows"]) == 2 + 2 * 2 and all(len(r) == len(table["columns"]) for r in table["rows"])
    json.dumps(report, ensure_ascii=False)


# --- catalogue identities -------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch:cpu"])
def test_identities(backend):
    """Every derivation claim holds (sympy) and every numeric verification passes at scale 'small'."""
    from workbench.derivations.nn_fusion import IDENTITIES

    assert [i.name for i in IDENTITIES] == [
        "nn.fusion.bch_orders",
        "nn.fusion.first_order",
        "nn.fusion.second_order",
        "nn.fusion.magnus_stack",
    ]
    for identity in IDENTITIES:
        steps = identity.derive()
        assert any(s.holds is not None for s in steps)
        assert all(s.holds is not False for s in steps), identity.name
        result = identity.verify(np.random.default_rng(0), "small", backend)
        assert result.passed, (identity.name, result)
