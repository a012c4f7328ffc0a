"""The attention catalogue: every derivation holds, every numeric check passes, and the checks have power.

The negative controls call the residual helpers of the derivations.attention modules with one input perturbed (a link that
is not a gradient, transports in the column-vector convention, a non-stationary weight, a wrong twist, a tilt
from the wrong potential, a non-uniform row) and assert that the residual then exceeds the identity's
tolerance by orders of magnitude.
"""

# The connection-walk papers name the transport field O; the tests keep the symbol.
# ruff: noqa: E741

import math
from pathlib import Path

import numpy as np
import pytest

from workbench.attention import (
    connection_laplacian,
    cycle_connection,
    exact_link,
    gauge_transform,
    random_head,
    random_multihead,
    score_split,
)
from workbench.backend import namespace, to_backend
from workbench.catalogue import discover, select
from workbench.derivations.attention import IDENTITIES, connection, diagnostics
from workbench.derivations.attention import split as split_ids

NAMES = [identity.name for identity in IDENTITIES]


def test_names_are_unique_dotted_and_in_the_attention_area():
    assert len(NAMES) == len(set(NAMES)) == 10
    for identity in IDENTITIES:
        assert identity.name.startswith("attention.") and identity.name.count(".") == 2
        assert identity.area == "attention"
        assert any(tag in identity.source for tag in ("[SEED", "[DERIVED", "[RECON", "[CODE")), identity.source
        assert identity.statement and not identity.asymptotic
        assert identity.backends == ("numpy", "torch")  # every check runs on torch as well


def test_the_entry_point_registers_this_catalogue():
    assert [i.name for i in select(discover(), area="attention")] == sorted(NAMES)


@pytest.mark.parametrize("identity", IDENTITIES, ids=NAMES)
def test_every_claimed_step_holds(identity):
    steps = identity.derive()
    claims = [step for step in steps if step.holds is not None]
    assert claims, "derive() must claim at least one equality"
    assert all(step.holds for step in claims), [step.text for step in claims if not step.holds]


@pytest.mark.parametrize("identity", IDENTITIES, ids=NAMES)
def test_every_check_passes_at_small_scale(identity, backend):
    result = identity.verify(np.random.default_rng(0), "small", backend)
    assert result.passed, (result.residual, result.tolerance, result.sizes)
    assert 0.0 <= result.residual <= result.tolerance <= 1e-11
    assert result.sizes


@pytest.mark.parametrize("name", ["attention.link.exact_iff_reversible", "attention.family.corners"])
@pytest.mark.parametrize("seed", range(1, 9))
def test_the_reversibility_thresholds_hold_across_seeds(name, seed):
    # The free-link corners must stay visibly nonreversible (ε_rev > 0.05) on any draw, or the check
    # would fail for the wrong reason; eight fresh seeds per identity.
    (identity,) = select(IDENTITIES, name=name)
    result = identity.verify(np.random.default_rng(seed), "small", "numpy")
    assert result.passed, (result.residual, result.sizes)
    assert min(v for k, v in result.sizes.items() if k.startswith("eps_rev")) > 0.05


def test_scale_is_validated():
    with pytest.raises(ValueError, match="scale must be one of"):
        IDENTITIES[0].verify(np.random.default_rng(0), "huge", "numpy")


# ---- negative controls: a perturbed input must make the residual large -------------------------------


def test_control_a_link_that_is_not_a_gradient_is_not_a_doob_transform(rng, backend):
    # Oracle: the Doob transform with h = e^{−βφ} reproduces the head only for 𝒜 = φ_i − φ_j; one unit
    # circulation on the triangle (0, 1, 2) breaks it and ε_rev with it.
    n, D = 10, 6
    X = to_backend(0.5 * rng.standard_normal((n, D)), backend)
    head = random_head(rng, D, 3, backend=backend)
    split = score_split(X, head.W_Q, head.W_K)
    phi = to_backend(rng.standard_normal(n), backend)
    circulation = np.zeros((n, n))
    circulation[0, 1] = circulation[1, 2] = circulation[2, 0] = 1.0
    circulation -= circulation.T
    exact = exact_link(phi)
    assert split_ids._exact_link_residual(split.bond, exact, phi, head.beta) <= 1e-12
    perturbed = exact + to_backend(circulation, backend)
    assert split_ids._exact_link_residual(split.bond, perturbed, phi, head.beta) > 1e-3


def test_control_the_tilt_of_a_wrong_potential_is_not_the_bond(rng, backend):
    # Oracle: rownorm exp(β𝒮); shifting the site potential g by noise changes the tilt h = e^{βg/2} but not
    # the kernel, so the Doob transform no longer matches.
    n, D = 10, 6
    X = to_backend(rng.standard_normal((n, D)), backend)
    head = random_head(rng, D, 3, bias=True, backend=backend)
    split = score_split(X, head.W_Q, head.W_K, head.b_Q, head.b_K)
    assert split_ids._doob_tilt_residual(split, head.beta) <= 1e-12
    noisy = split._replace(potential=split.potential + to_backend(0.5 * rng.standard_normal(n), backend))
    assert split_ids._doob_tilt_residual(noisy, head.beta) > 1e-3


def test_control_transports_in_the_column_convention_break_the_mha_step(rng, backend):
    # Oracle: the head-by-head loop.  Using M_hᵀ (the column-vector convention) as transports must fail.
    n, D, H = 5, 6, 3
    X = to_backend(rng.standard_normal((n, D)), backend)
    mha = random_multihead(rng, H, D, 2, causal=True, backend=backend)
    reference = connection._head_loop(mha, X)
    A, M = mha.attention(X), mha.value_output_maps()
    assert connection._mha_step_residual(A, M, X, reference) <= 1e-12
    assert connection._mha_step_residual(A, namespace(M).matrix_transpose(M), X, reference) > 1e-2


def test_control_the_energy_identity_needs_stationary_weights_and_isometries(rng, backend):
    # Oracle: ⟨X, L_mix X⟩_π = ℰ_c(X) needs πᵀA = πᵀ and orthogonal O (connection_energy's docstring): the
    # uniform law on a skewed walk, or transports scaled by 1.1, must leave a visible gap.
    n, d = 6, 3
    A = rng.random((n, n)) ** 3
    A /= A.sum(axis=1, keepdims=True)
    O = connection._random_orthogonal(rng, n * n, d).reshape(n, n, d, d)
    X = rng.standard_normal((n, d))
    A, O, X = (to_backend(v, backend) for v in (A, O, X))
    assert connection._energy_residual(A, O, X) <= 1e-12
    assert connection._energy_residual(A, O, X, pi=to_backend(np.full(n, 1.0 / n), backend)) > 1e-3
    assert connection._energy_residual(A, 1.1 * O, X) > 1e-3


def test_control_a_wrong_twist_misses_the_ring_spectrum(backend):
    # Oracle: the closed form 2 − 2cos((2πk ± θ)/n); the spectrum at θ compared with the one at θ + 0.05.
    n, theta = 9, 1.3
    A, O = cycle_connection(n, theta)
    L = connection_laplacian(to_backend(A, backend), to_backend(O, backend), kind="unnormalized")
    assert connection._ring_spectrum_residual(L, n, theta) <= 1e-13
    assert connection._ring_spectrum_residual(L, n, theta + 0.05) > 1e-3
    # θ and θ + 2π give the same spectrum, θ and −θ too (the ± pairs swap), but θ + π does not.
    assert connection._ring_spectrum_residual(L, n, theta + 2 * math.pi) <= 1e-13
    assert connection._ring_spectrum_residual(L, n, -theta) <= 1e-13
    assert connection._ring_spectrum_residual(L, n, theta + math.pi) > 1e-2


def test_control_a_changed_edge_is_not_a_gauge_transform(rng, backend):
    # Oracle: tr(Holᵏ) is gauge invariant; the gauge transform of a field with one transport on the cycle
    # replaced has other traces.
    m, d = 5, 3
    O = rng.standard_normal((m, m, d, d)) / math.sqrt(d)
    V = to_backend(connection._random_frames(rng, m, d), backend)
    perturbed = O.copy()
    perturbed[2, 1] += 0.3 * rng.standard_normal((d, d))  # the step 1 → 2 of the cycle
    O, perturbed = to_backend(O, backend), to_backend(perturbed, backend)
    cycles = [(0, 1, 2, 0), (0, 1, 2, 3, 4, 0)]
    assert connection._holonomy_trace_gap(O, gauge_transform(O, V), cycles) <= 1e-12
    assert connection._holonomy_trace_gap(O, gauge_transform(perturbed, V), cycles) > 1e-2


def test_control_a_peaked_row_is_not_uniform(backend):
    # Oracle: log n for a uniform row; one row of the "uniform" map moved towards its first key must fail.
    n = 6
    uniform = np.full((n, n), 1.0 / n)
    causal = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    shift = np.eye(n, k=-1)
    shift[0, 0] = 1.0
    cycle = np.roll(np.eye(n), 1, axis=1)
    arrays = [to_backend(a, backend) for a in (uniform, causal, shift, cycle)]
    assert diagnostics._diagnostics_residual(*arrays) <= 1e-13
    peaked = uniform.copy()
    peaked[2] = [0.5, *[0.5 / (n - 1)] * (n - 1)]
    assert diagnostics._diagnostics_residual(to_backend(peaked, backend), *arrays[1:]) > 1e-2
    lazy = 0.5 * (cycle + np.eye(n))  # a lazy cycle reciprocates nothing either, but its self-loops are symmetric
    assert diagnostics._diagnostics_residual(*arrays[:3], to_backend(lazy, backend)) > 1e-2


# ---- the reference says what the hypotheses and the fixes of issue 37 say --------------------------------

REFERENCE = (Path(__file__).resolve().parents[1] / "book" / "reference.md").read_text()


def test_the_reference_says_causal_diagnostics_are_undefined():
    # §A.10, §B.4 and §B.6 each say what ε_rev and the energy are for a causal walk (π = δ₀) and what is reported.
    for heading in ("**Causal heads.**", "**Causal walks.**", "whose walks are\n  causal"):
        assert heading in REFERENCE, heading
    assert REFERENCE.count("$\\pi = \\delta_0$") >= 3
    assert REFERENCE.count("`workbench diagnose` reports") >= 3


def test_the_causal_shift_has_eps_rev_zero_not_sqrt2():
    # The outside case of the one-way hypothesis: a causal walk drains to token 0, so ε_rev = 0 however one-way.
    outcome = diagnostics._outside_causal_shift(np.random.default_rng(0))
    assert not outcome.passed and outcome.sizes["eps_rev"] == 0.0
    assert math.isclose(outcome.residual, math.sqrt(2), rel_tol=1e-12)


def test_a_causal_walk_has_an_energy_that_sees_token_zero_only():
    outcome = connection._outside_energy_causal(np.random.default_rng(0))
    assert not outcome.passed and outcome.residual == 1.0


def test_the_distance_names_follow_edelman_arias_smith():
    table = REFERENCE[REFERENCE.index("## C.2 Distances") : REFERENCE.index("## C.3")]
    projection = next(line for line in table.splitlines() if line.startswith("| projection |"))
    assert "the projection F-norm of Edelman–Arias–Smith" in projection and "$\\sqrt2$ ×" in projection
    assert "| Edelman–Arias–Smith §4.3 |\n| procrustes" not in table  # the old row credited them with √2‖sin θ‖₂
    assert "their chordal F-norm" in next(line for line in table.splitlines() if line.startswith("| procrustes |"))
    assert "call it the projection F-norm" in next(
        line for line in table.splitlines() if line.startswith("| chordal |")
    )


def test_the_reference_says_which_connection_equations_survive():
    assert "refers to its equations (4), (8)–(10) and (12)–(15)" not in REFERENCE
    assert "cites its equations (4), (8)–(10), (12) and (15) only" in REFERENCE
    assert "(our Eq. (13); the surviving text does not cite it)" in REFERENCE
    assert "(our Eq. (14); the surviving text does not cite it)" in REFERENCE


def test_the_corners_say_the_code_was_not_seen():
    (corners,) = select(IDENTITIES, name="attention.family.corners")
    assert "which the project could not see" in corners.source and "[RECON" in corners.source
    assert "[CODE nanochat parameterisation" not in corners.source
    assert "The corner formulas follow the author's language-model code, which the project could not see" in REFERENCE


def test_every_identity_states_its_hypotheses_in_the_reference():
    # Every attention identity declares hypotheses, and each section that holds its formula has a *Hypotheses* line.
    assert all(identity.hypotheses for identity in IDENTITIES)
    for section, following in (("## A.7", "## A.8"), ("## A.10", "## A.11"), ("# B.", "# C."), ("## C.1", "## C.2")):
        part = REFERENCE[REFERENCE.index(section) : REFERENCE.index(following)]
        assert "*Hypotheses" in part, section
    assert REFERENCE.count("*Hypotheses") >= 10
