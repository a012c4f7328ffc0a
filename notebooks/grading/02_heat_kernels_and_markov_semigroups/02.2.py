"""Tests of exercise 02.2: the moments of the walk's displacement, from the generating function and two numerics."""

import sympy as sp
from otter.test_files import test_case

OK_FORMAT = False
name = "02.2"
points = 5


def _as_function_of_t(expression):
    """Turn a sympy expression into a function of the float t, matching the symbol by its name."""
    expression = sp.sympify(expression)
    symbols = {str(x): x for x in expression.free_symbols}
    assert set(symbols) <= {"t"}, (
        f"the moment should depend on t only, but it has the symbols {sorted(symbols)} (substitute z = 1)"
    )
    return lambda value: complex(expression.subs(symbols["t"], value) if symbols else expression)


@test_case(points=1)
def test_keys(answer_02_2):
    keys = {"mean", "second_moment", "ive_sums", "N", "t_expmv", "expmv_second_moment"}
    assert isinstance(answer_02_2, dict), "answer_02_2 should be a dict"
    missing = keys - set(answer_02_2)
    assert not missing, f"answer_02_2 lacks the keys {sorted(missing)}"


@test_case(points=1)
def test_mean(answer_02_2):
    mean = _as_function_of_t(answer_02_2["mean"])
    for t in (0.3, 2.0, 7.5):
        assert abs(mean(t)) < 1e-12, f"E[D] = G'(1) should be 0 for every t; yours is {mean(t)} at t = {t}"


@test_case(points=1)
def test_second_moment(answer_02_2):
    second = _as_function_of_t(answer_02_2["second_moment"])
    for t in (0.3, 2.0, 7.5):
        # oracle: Var D = Var N₊ + Var N₋ = 2t for independent Poisson(t) counts, and E[D] = 0
        assert abs(second(t) - 2 * t) < 1e-12 * (1 + t), (
            f"E[D²] should be 2t; yours gives {second(t).real:.6g} at t = {t} ((z∂_z)²G at z = 1)"
        )


@test_case(points=1)
def test_ive_sums(answer_02_2):
    sums = answer_02_2["ive_sums"]
    assert {float(t) for t in sums} == {0.5, 5.0, 50.0}, "ive_sums should have the keys t = 0.5, 5, 50"
    for t, (total, moment) in sums.items():
        # oracle: Σ_k P(D = k) = 1 and Σ_k k² P(D = k) = 2t; each ive value is accurate to ~1e-15 relative
        assert abs(total - 1) < 1e-10, f"at t = {t}: Σ_k e^(−2t) I_k(2t) should be 1 (sum over all k ∈ ℤ), got {total}"
        assert abs(moment / (2 * t) - 1) < 1e-10, (
            f"at t = {t}: Σ_k k² e^(−2t) I_k(2t) should be 2t = {2 * t:g}, got {moment:.10g} (argument 2t of ive)"
        )


@test_case(points=1)
def test_expmv_moment(answer_02_2):
    N, t = int(answer_02_2["N"]), float(answer_02_2["t_expmv"])
    assert (N, t) == (4000, 50.0), f"the exercise uses a cycle of N = 4000 vertices at t = 50, got N = {N}, t = {t}"
    moment = answer_02_2["expmv_second_moment"]
    # oracle: (b), 2t; the heat never wraps around (its weight at distance N/2 is ~1e-600), expmv is normwise 2^-53
    assert abs(moment / (2 * t) - 1) < 1e-10, (
        f"the second moment Σ_j d(j, 0)² (e^(−tL)δ_0)_j should be 2t = {2 * t:g}, got {moment:.10g} "
        "(d the distance on the cycle, min(j, N − j))"
    )
