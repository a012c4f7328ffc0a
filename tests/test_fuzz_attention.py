"""Fuzz suite, ``workbench.attention``: every public callable, one bad argument at a time (harness: ``fuzz.py``).

Valid inputs are small (4–5 tokens, width 4–6, 2 heads) so the whole table runs in seconds (the real models'
cases are in ``test_fuzz_models.py``).
"""

import numpy as np
import pytest
from fuzz import Case, public_callables, run

from workbench import attention

N, D, DH = 5, 6, 3  # tokens, model width, head width


def _rng(seed=0):
    return np.random.default_rng(seed)


def _weights(seed=0, lead=()):
    rng = _rng(seed)
    return rng.standard_normal((*lead, D, DH)) / np.sqrt(D), rng.standard_normal((*lead, D, DH)) / np.sqrt(D)


def _X(seed=1):
    return _rng(seed).standard_normal((N, D))


def _qk(seed=2):
    rng = _rng(seed)
    return rng.standard_normal((N, DH)), rng.standard_normal((N, DH))


def _stochastic(seed=3, lead=()):
    A = _rng(seed).random((*lead, N, N)) + 0.1
    return A / A.sum(axis=-1, keepdims=True)


def _transports(seed=4, d=2):
    return _rng(seed).standard_normal((N, N, d, d))


def _link(seed=5):
    B = _rng(seed).standard_normal((N, N))
    return B - B.T


def _heads(seed=6, lead=()):
    rng = _rng(seed)
    W_Q, W_K = _weights(seed, lead)
    W_V = rng.standard_normal((*lead, D, DH)) / np.sqrt(D)
    W_O = rng.standard_normal((*lead, DH, D)) / np.sqrt(DH)
    return W_Q, W_K, W_V, W_O


def _multihead_args():
    W_Q, W_K, W_V, W_O = _heads(lead=(2,))
    rng = _rng(7)
    return (W_Q, W_K, W_V, W_O), {
        "b_Q": rng.standard_normal((2, DH)),
        "b_K": rng.standard_normal((2, DH)),
        "b_V": rng.standard_normal((2, DH)),
        "b_O": rng.standard_normal(D),
        "beta": 0.5,
        "causal": False,
    }


def _head_args():
    W_Q, W_K, W_V, W_O = _heads()
    rng = _rng(8)
    return (W_Q, W_K, W_V, W_O), {
        "b_Q": rng.standard_normal(DH),
        "b_K": rng.standard_normal(DH),
        "b_V": rng.standard_normal(DH),
        "beta": 0.5,
        "causal": False,
    }


_causal = np.tril(np.ones((N, N), dtype=bool))

CASES = [
    # heads
    Case("workbench.attention.softmax_rows", lambda: ((_rng().standard_normal((N, N)), _causal), {})),
    Case(
        "workbench.attention.attention_mask",
        lambda: ((N,), {"causal": True, "valid": np.array([True, True, False, True, True])}),
    ),
    Case("workbench.attention.AttentionHead", _head_args),
    Case("workbench.attention.MultiHeadAttention", _multihead_args),
    Case("workbench.attention.random_head", lambda: ((0, D, DH), {"d_value": 2, "scale": 0.5, "beta": 0.5})),
    Case(
        "workbench.attention.random_multihead",
        lambda: ((0, 2, D, DH), {"d_value": 2, "scale": 0.5, "beta": 0.5}),
    ),
    # the bond/link split
    Case("workbench.attention.bond_link_split", lambda: ((_rng().standard_normal((D, D)),), {})),
    Case("workbench.attention.token_split", lambda: (_qk(), {})),
    Case(
        "workbench.attention.score_split",
        lambda: ((_X(), *_weights()), {"b_Q": np.ones(DH), "b_K": -np.ones(DH)}),
    ),
    Case("workbench.attention.distance_form_logits", lambda: ((attention.token_split(*_qk()), 0.5), {})),
    Case("workbench.attention.destination_tilt", lambda: ((attention.token_split(*_qk()), 0.5), {})),
    Case("workbench.attention.exact_link", lambda: ((_rng().standard_normal(N),), {})),
    Case("workbench.attention.link_potential", lambda: ((_link(),), {})),
    Case(
        "workbench.attention.link_hodge_split",
        lambda: ((_link(),), {"weights": _stochastic() + _stochastic().T}),
    ),
    Case("workbench.attention.triangle_cycles", lambda: ((N,), {})),
    Case("workbench.attention.link_holonomy", lambda: ((_link(), [(0, 2, 3, 0), (0, 1, 4, 0)]), {})),
    Case("workbench.attention.is_exact_link", lambda: ((_link(),), {"rtol": 1e-10})),
    # the four operators
    Case("workbench.attention.family_logits", lambda: ((*_qk(), 0.5, 1.0), {"beta": 0.5})),
    Case("workbench.attention.operator_logits", lambda: ((*_qk(), "DMTN"), {"beta": 0.5})),
    Case("workbench.attention.family_operator", lambda: ((*_qk(), "ATAP"), {"beta": 0.5, "mask": _causal})),
    Case("workbench.attention.effective_form", lambda: ((*_weights(), "DMTN"), {})),
    Case("workbench.attention.operator_skew_ratio", lambda: ((*_weights(), "ATTN"), {})),
    Case("workbench.attention.parameter_count", lambda: (("DMAP", D, DH), {})),
    Case("workbench.attention.bond_inertia", lambda: ((np.diag([2.0, -1.0, 0.0, 3.0]),), {"rtol": 1e-10})),
    Case("workbench.attention.negative_mass", lambda: ((np.diag([3.0, -4.0, 1.0]),), {})),
    Case("workbench.attention.CornerHead", lambda: ((*_weights(), "DMTN"), {})),
    Case("workbench.attention.project_head", lambda: ((*_weights(), "DMAP"), {})),
    Case("workbench.attention.corner_distances", lambda: ((_X(), *_weights()), {"beta": 0.5, "mask": _causal})),
    Case(
        "workbench.attention.nearest_corner",
        lambda: ((_X(), *_weights()), {"beta": 0.5, "mask": _causal, "tol": 0.1}),
    ),
    # diagnostics
    Case("workbench.attention.row_entropy", lambda: ((_stochastic(),), {"atol": 1e-10})),
    Case("workbench.attention.mean_entropy", lambda: ((_stochastic(lead=(2,)),), {"axis": 0, "atol": 1e-10})),
    Case(
        "workbench.attention.effective_neighbours",
        lambda: ((_stochastic(lead=(2,)),), {"axis": 0, "atol": 1e-10}),
    ),
    Case("workbench.attention.uniform_entropy", lambda: ((N,), {"causal": True})),
    Case(
        "workbench.attention.reversibility_residual",
        lambda: ((_stochastic(),), {"pi": np.full(N, 1 / N), "atol": 1e-10}),
    ),
    Case("workbench.attention.score_skew_ratio", lambda: ((_rng().standard_normal((D, D)),), {})),
    Case(
        "workbench.attention.nearest_target_distance",
        lambda: ((_rng(1).standard_normal((4, 2)), _rng(2).standard_normal((6, 2))), {"reduce": "mean"}),
    ),
    Case("workbench.attention.native_spacing", lambda: ((_rng(2).standard_normal((6, 2)),), {"reduce": "mean"})),
    Case(
        "workbench.attention.beta_sweep",
        lambda: ((_rng().standard_normal((N, N)), np.array([0.0, 0.5, 2.0])), {"mask": _causal}),
    ),
    Case(
        "workbench.attention.logit_variance_at_init",
        lambda: ((0, 8, 4), {"n_tokens": 6, "n_draws": 10, "scaled": True}),
    ),
    Case("workbench.attention.previous_token_score", lambda: ((_stochastic(),), {"atol": 1e-10})),
    Case(
        "workbench.attention.induction_score",
        lambda: (
            (_stochastic()[:4, :4] / _stochastic()[:4, :4].sum(axis=1, keepdims=True), np.array([7, 3, 7, 3])),
            {},
        ),
    ),
    Case(
        "workbench.attention.repeated_random_tokens",
        lambda: ((0,), {"vocab_size": 50, "half_length": 4, "batch": 2}),
    ),
    # the connection walk
    Case("workbench.attention.propagate", lambda: ((_stochastic(), _transports(), _rng().standard_normal((N, 2))), {})),
    Case("workbench.attention.block_operator", lambda: ((_stochastic(), _transports()), {})),
    Case(
        "workbench.attention.connection_laplacian",
        lambda: ((_stochastic(), _transports()), {"kind": "unnormalized"}),
    ),
    Case(
        "workbench.attention.effective_connection",
        lambda: ((_stochastic(lead=(2,)), _rng().standard_normal((2, 2, 2))), {"fill": np.zeros((2, 2))}),
    ),
    Case(
        "workbench.attention.connection_step",
        lambda: ((_stochastic(lead=(2,)), _rng(1).standard_normal((N, 2)), _rng().standard_normal((2, 2, 2))), {}),
    ),
    Case(
        "workbench.attention.geometric_drift",
        lambda: ((_stochastic(3), _stochastic(4)), {"mask": ~np.eye(N, dtype=bool)}),
    ),
    Case(
        "workbench.attention.mixing_generator",
        lambda: ((_stochastic(), _transports()), {"pi": np.full(N, 1 / N)}),
    ),
    Case(
        "workbench.attention.connection_energy",
        lambda: ((_stochastic(), _transports(), _rng(1).standard_normal((N, 2))), {"pi": np.full(N, 1 / N)}),
    ),
    Case(
        "workbench.attention.effective_connection_energy",
        lambda: (
            (_stochastic(lead=(2,)), _rng().standard_normal((2, 2, 2)), _rng(1).standard_normal((N, 2))),
            {"pi": np.full(N, 1 / N)},
        ),
    ),
    Case("workbench.attention.polar_transports", lambda: ((_transports(),), {"partial": False, "rtol": 1e-12})),
    Case(
        "workbench.attention.orthogonality_deviation",
        lambda: ((_transports(),), {"weights": _stochastic(), "mask": ~np.eye(N, dtype=bool)}),
    ),
    Case(
        "workbench.attention.effective_transport_gram",
        lambda: (
            (_stochastic(lead=(2,)), _rng().standard_normal((2, 2, 2))),
            {"weights": _stochastic(), "mask": ~np.eye(N, dtype=bool)},
        ),
    ),
    Case(
        "workbench.attention.gauge_transform",
        lambda: ((_transports(), _rng(9).standard_normal((N, 2, 2)) + 3 * np.eye(2)), {}),
    ),
    Case("workbench.attention.holonomy", lambda: ((_transports(), (0, 2, 1, 0)), {})),
    Case(
        "workbench.attention.holonomy_deviation",
        lambda: ((_transports(), [(0, 1, 2, 0), (0, 3, 4, 0)]), {"remove_scale": True}),
    ),
    Case("workbench.attention.cycle_connection", lambda: ((N, 0.7), {"weights": 2.0})),
]

CASES += [
    Case("workbench.attention.token_corner_distances", lambda: (_qk(), {"beta": 0.5, "mask": _causal})),
    Case(
        "workbench.attention.token_corner_distances",
        lambda: (tuple(np.stack([x, 2 * x]) for x in _qk()), {"beta": 0.5, "mask": _causal}),
    ),
    Case("workbench.attention.bond_reading", lambda: (_weights(), {"rtol": 1e-10})),
    Case(
        "workbench.attention.factored_transport_gram",
        lambda: ((_stochastic(lead=(2,)), _heads(lead=(2,))[2], _heads(lead=(2,))[3]), {"mask": _causal}),
    ),
    Case("workbench.attention.transport_form", lambda: ((_heads(lead=(2,))[2], _heads(lead=(2,))[3]), {})),
    Case(
        "workbench.attention.factored_connection_energy",
        lambda: ((_stochastic(lead=(2,)), _heads(lead=(2,))[2], _heads(lead=(2,))[3], _X()), {"pi": np.full(N, 1 / N)}),
    ),
    Case(
        "workbench.attention.factored_orthogonality_deviation",
        lambda: ((_heads(lead=(2,))[2], _heads(lead=(2,))[3]), {}),
    ),
    Case(
        "workbench.attention.factored_loop_defect",
        lambda: (
            (_stochastic(lead=(2,)), _heads(lead=(2,))[2], _heads(lead=(2,))[3], [0, 1, 2, 3]),
            {"max_triangles": 2},
        ),
    ),
    Case(
        "workbench.attention.loop_defect",
        lambda: ((_stochastic(lead=(2,)), _rng(10).standard_normal((2, 3, 3)), [0, 1, 2, 3]), {}),
    ),
    Case("workbench.attention.loop_defect_operations", lambda: ((12, 64, 768, 195), {})),
]


# ---- the Grassmannian, and heads as its points ------------------------------------------------------------


def _plane(seed=14, n=D, k=DH):
    return _rng(seed).standard_normal((n, k))


def _theta():
    return attention.principal_angles(_plane(14), _plane(15))


def _subspaces(seed=16, heads=3):
    return attention.head_subspaces(attention.random_multihead(_rng(seed), heads, D, DH))


def _points(seed, h=6):
    x = _rng(seed).standard_normal((h, 2))
    return np.linalg.norm(x[:, None] - x[None], axis=-1)


_SEED = "a seed for numpy's default_rng (an int or a Generator): an argument passed through to numpy"

CASES += [
    Case("workbench.attention.subspace_basis", lambda: ((_plane(),), {"rtol": 1e-10})),
    Case(  # a stack of 2 planes against one (broadcast): the empty stack is a bad value of its own
        "workbench.attention.principal_angles", lambda: ((np.stack([_plane(14), _plane(20)]), _plane(15, k=2)), {})
    ),
    Case("workbench.attention.distance_from_angles", lambda: ((_theta(),), {"metric": "chordal"})),
    Case("workbench.attention.grassmann_distance", lambda: ((_plane(14), _plane(15)), {"metric": "fubini-study"})),
    Case("workbench.attention.grassmann_dimension", lambda: ((D, DH), {})),
    Case("workbench.attention.projection_differential", lambda: ((_plane(17, n=4, k=2),), {})),
    Case("workbench.attention.random_subspaces", lambda: ((D, DH), {"samples": 2, "seed": 0})),
    Case("workbench.attention.random_principal_angles", lambda: ((D, 2, DH), {"samples": 4, "seed": 0})),
    Case("workbench.attention.WachterLaw", lambda: ((12, 2, 3), {})),
    Case(
        "workbench.attention.head_subspaces",
        lambda: ((attention.random_multihead(_rng(16), 3, D, DH),), {"rtol": 1e-10}),
    ),
    Case("workbench.attention.head_subspace_angles", lambda: ((_subspaces(), "K"), {})),
    Case("workbench.attention.head_subspace_distances", lambda: ((_subspaces(), "V", "procrustes"), {})),
    Case("workbench.attention.subspace_null", lambda: ((D, DH), {"metric": "chordal", "samples": 32, "seed": 0})),
    Case(
        "workbench.attention.attention_pattern_distance",
        lambda: ((_stochastic(lead=(2, 3)),), {"rows": np.array([False, True, True, True, True])}),
    ),
    Case(
        "workbench.attention.mantel_test",
        lambda: (
            (_points(18), _points(19)),
            {"strata": [0, 0, 0, 1, 1, 1], "permutations": 99, "seed": 0, "alternative": "less"},
        ),
    ),
]

_RECORD = "a result record (plain dataclass or NamedTuple) the library returns; it holds, it does not compute"

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.attention.TransportForm": "made by transport_form (which has a case); its method gram has one",
    "workbench.attention.family_logits_unchecked": (
        "by contract the unchecked core (the torch layers call it on tensors they built); family_logits is its "
        "checked public front and has a case"
    ),
    **{
        f"workbench.attention.{name}": _RECORD
        for name in (
            "BetaSweep",
            "BondReading",
            "DestinationTilt",
            "EffectiveTransportGram",
            "LinkHodgeSplit",
            "LogitVariance",
            "MixingGenerator",
            "OrthogonalityDeviation",
            "ScoreSplit",
            "Subspace",
            "HeadSubspaces",
            "SubspaceNull",
            "RankCorrelation",
        )
    },
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    missing = public_callables("workbench.attention") - covered
    assert missing == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- methods of the public classes --------------------------------------------------------------------


def _head():
    args, kwargs = _head_args()
    return attention.AttentionHead(*args, **kwargs)


def _mha():
    args, kwargs = _multihead_args()
    return attention.MultiHeadAttention(*args, **kwargs)


def _corner():
    return attention.CornerHead(*_weights(), "DMTN")


def _fused_args():
    # The stacked heads of _multihead_args fused back: columns h·d_h:(h+1)·d_h of W_Q, W_K, W_V, rows of W_O.
    W_Q, W_K, W_V, W_O = _heads(lead=(2,))
    rng = _rng(7)
    fused = [np.concatenate(list(W), axis=-1) for W in (W_Q, W_K, W_V)]
    return (*fused, np.concatenate(list(W_O), axis=0), 2), {
        "b_Q": rng.standard_normal(2 * DH),
        "b_K": rng.standard_normal(2 * DH),
        "b_V": rng.standard_normal(2 * DH),
        "b_O": rng.standard_normal(D),
        "beta": 0.5,
        "causal": False,
    }


_everywhere = np.ones((N, N), dtype=bool)

METHOD_CASES = [
    Case("workbench.attention.AttentionHead.queries", lambda: ((_head(), _X()), {})),
    Case("workbench.attention.AttentionHead.keys", lambda: ((_head(), _X()), {})),
    Case("workbench.attention.AttentionHead.scores", lambda: ((_head(), _X()), {})),
    Case("workbench.attention.AttentionHead.logits", lambda: ((_head(), _X()), {})),
    Case("workbench.attention.AttentionHead.operator", lambda: ((_head(), _X()), {"mask": _causal})),
    Case("workbench.attention.AttentionHead.markov", lambda: ((_head(), _X()), {"mask": _everywhere})),
    Case("workbench.attention.CornerHead.logits", lambda: ((_corner(), _X()), {"beta": 0.5})),
    Case("workbench.attention.CornerHead.operator", lambda: ((_corner(), _X()), {"beta": 0.5, "mask": _causal})),
    Case("workbench.attention.CornerHead.markov", lambda: ((_corner(), _X()), {"beta": 0.5, "mask": _everywhere})),
    Case("workbench.attention.MultiHeadAttention.from_fused", _fused_args),
    Case(
        "workbench.attention.MultiHeadAttention.from_heads",
        lambda: (([_mha().head(0), _mha().head(1)],), {"b_O": _rng(9).standard_normal(D)}),
    ),
    Case("workbench.attention.MultiHeadAttention.head", lambda: ((_mha(), 1), {})),
    Case(
        "workbench.attention.TransportForm.gram",
        lambda: (
            (attention.transport_form(_heads(lead=(2,))[2], _heads(lead=(2,))[3]), _stochastic(lead=(2,))),
            {"weights": _stochastic(), "mask": _causal},
        ),
    ),
    Case("workbench.attention.MultiHeadAttention.attention", lambda: ((_mha(), _X()), {"mask": _causal})),
    Case("workbench.attention.MultiHeadAttention.linear_part", lambda: ((_mha(), _X()), {"mask": _causal})),
    Case("workbench.attention.WachterLaw.pdf", lambda: ((attention.WachterLaw(12, 2, 3), np.linspace(0, 1, 7)), {})),
    Case("workbench.attention.WachterLaw.cdf", lambda: ((attention.WachterLaw(12, 2, 3), 0.3), {})),
    Case(
        "workbench.attention.HeadSubspaces.concatenate",
        lambda: (([_subspaces(16, 2), _subspaces(17, 2)],), {}),
    ),
    Case("workbench.attention.SubspaceNull.quantile", lambda: ((attention.subspace_null(D, DH, samples=32), 0.05), {})),
    Case(
        "workbench.attention.SubspaceNull.fraction_below",
        lambda: ((attention.subspace_null(D, DH, samples=32), np.array([0.5, 1.5, 2.5])), {}),
    ),
]


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    missing = public_methods("workbench.attention") - {case.function for case in METHOD_CASES}
    assert missing == set()


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    run(case)


def test_mask_refusals_name_the_context():
    # The fuzz finding: a context X one token short of the mask was refused naming only the mask.
    short = _X()[:-1]
    for call in (
        lambda: _head().operator(short, mask=_causal),
        lambda: _corner().operator(short, mask=_causal),
        lambda: _mha().attention(short, mask=_causal),
    ):
        with pytest.raises(ValueError, match=r"logits shape \(.*4, 4\) of the 4 tokens in X, got shape \(5, 5\)"):
            call()


def test_corner_operator_is_the_family_operator():
    # Oracle: family_operator of the corner on q = XW_Q, k = XW_K (the route CornerHead.operator took before it
    # checked the mask against X).  Tolerance 1e-15: the same float operations in the same order.
    W_Q, W_K = _weights()
    X = _X()
    expected = attention.family_operator(X @ W_Q, X @ W_K, "DMTN", beta=0.5, mask=_causal)
    np.testing.assert_allclose(_corner().operator(X, beta=0.5, mask=_causal), expected, rtol=0, atol=1e-15)


# ---- huge entries: finite inputs whose results overflow float64 -------------------------------------------

HUGE = 1e300  # finite, but any product of two such entries (or a square) leaves the double range


def test_overflowing_logits_are_refused_naming_the_inputs():
    # A refusal, not a number: logits of size 1e300 * 1e300 are not representable.  The message names the
    # inputs (and their sizes), not beta, which is innocent here.
    q, k = _qk()
    with pytest.raises(ValueError, match=r"the logits overflow float64 for the given q and k \(max \|q\| = 1e\+300"):
        attention.family_logits(HUGE * q / np.abs(q).max(), HUGE * k / np.abs(k).max(), 0, 0)
    with pytest.raises(ValueError, match=r"the scores q·k overflow float64 for the given X, W_Q, W_K, b_Q and b_K"):
        _head().operator(HUGE * _X())
    with pytest.raises(ValueError, match=r"the logits overflow float64 for the given X, W_Q and W_K"):
        _corner().operator(HUGE * _X())
    with pytest.raises(ValueError, match=r"the score split .* overflow float64 for the given X, W_Q and W_K"):
        attention.score_split(HUGE * _X(), *_weights())
    with pytest.raises(ValueError, match=r"the holonomy around \(0, 1, 2, 0\) overflow float64 for the given O"):
        attention.holonomy(HUGE * _transports(), (0, 1, 2, 0))


def test_beta_overflow_still_names_beta():
    # The old refusal is kept where beta is the cause: finite logits times beta = 1e308.
    q, k = _qk()
    with pytest.raises(ValueError, match=r"beta must keep the logits finite in float64, got beta=1e\+308"):
        attention.family_logits(q, k, 1, 1, beta=1e308)


def test_scale_free_diagnostics_are_exact_on_huge_inputs():
    # Oracle: the same diagnostic on the unscaled input (each is homogeneous of degree 0).  Tolerance 1e-14
    # relative: multiplying by 1e300 (not a power of two) rounds every entry once, a few ulps in the ratio.
    rng = _rng(11)
    M = rng.standard_normal((D, D))
    M_S = M + M.T
    W_Q, W_K = _weights()
    transports = _transports()
    A_prev, A_next = _stochastic(), _stochastic(seed=12)
    pairs = [
        (attention.score_skew_ratio(HUGE * M), attention.score_skew_ratio(M)),
        (attention.negative_mass(HUGE * M_S), attention.negative_mass(M_S)),
        (attention.operator_skew_ratio(HUGE * W_Q, W_K), attention.operator_skew_ratio(W_Q, W_K / HUGE)),
        (
            attention.operator_skew_ratio(HUGE * W_Q, HUGE * W_K, "ATAP"),
            attention.operator_skew_ratio(W_Q, W_K, "ATAP"),
        ),
        (attention.orthogonality_deviation(HUGE * transports), attention.orthogonality_deviation(transports)),
        (attention.geometric_drift(HUGE * A_prev, A_next), attention.geometric_drift(A_prev, A_next)),
    ]
    for got, want in pairs:
        assert np.isfinite(got)
        np.testing.assert_allclose(got, want, rtol=1e-14)
    cycles = [(0, 1, 2, 0), (0, 3, 4, 1, 0)]
    np.testing.assert_allclose(
        attention.holonomy_deviation(HUGE * transports, cycles, remove_scale=True),
        attention.holonomy_deviation(transports, cycles, remove_scale=True),
        rtol=1e-13,  # a product of up to 4 transports: 4 rounded scalings compound
    )


def test_homogeneous_results_are_rescaled_exactly():
    # Oracle: the unscaled result times the scale factor (distances are of degree 1, the energy of degree 2).
    # Tolerance 1e-14 relative: one rounding of each scaled entry (1e300 and 1e100 are not powers of two).
    rng = _rng(13)
    generated, train = rng.standard_normal((7, 3)), rng.standard_normal((9, 3))
    np.testing.assert_allclose(
        attention.nearest_target_distance(HUGE * generated, HUGE * train),
        HUGE * attention.nearest_target_distance(generated, train),
        rtol=1e-14,
    )
    np.testing.assert_allclose(
        attention.native_spacing(HUGE * train), HUGE * attention.native_spacing(train), rtol=1e-14
    )
    A, transports, X = _stochastic(), _transports(), rng.standard_normal((N, 2))
    np.testing.assert_allclose(  # degree 2 in X: E(sX) = s² E(X), here 1e300 · E, still in range
        attention.connection_energy(A, transports, 1e150 * X),
        1e300 * attention.connection_energy(A, transports, X),
        rtol=1e-13,
    )
    with pytest.raises(ValueError, match=r"the connection energy overflow float64 for the given A, O, X and pi"):
        attention.connection_energy(A, transports, HUGE * X)


# ---- the Grassmannian cases: what they leave fixed, and the fuzz findings, pinned ----------------------------


def test_mantel_test_permutes_within_strata_of_any_sizes():
    # Fuzz finding (strata = nan entry): strata of unequal sizes crashed in the permutation statistic with a
    # shape-mismatch ValueError.  Oracle: the 2!·3! = 12 relabellings within the strata {0, 1}, {2, 3, 4}, {5}
    # enumerated here, Spearman's ρ of scipy on the 4 within-stratum pairs; the exact p-value counts the
    # relabellings at least as extreme (the identity included).  Tolerance 1e-12 on ρ: the same ranks, another
    # summation order; ties of ρ_π with ρ are compared with a 1e-9 margin (ρ takes few distinct values).
    import itertools

    from scipy import stats

    D1, D2 = _points(18), _points(19)
    rows, cols = np.array([(0, 1), (2, 3), (2, 4), (3, 4)]).T

    def rho(perm):
        return stats.spearmanr(D1[rows, cols], D2[perm[rows], perm[cols]]).statistic

    observed = rho(np.arange(6))
    relabelled = [
        rho(np.array([*a, *b, 5])) for a in itertools.permutations([0, 1]) for b in itertools.permutations([2, 3, 4])
    ]
    result = attention.mantel_test(D1, D2, strata=[0, 0, 1, 1, 1, 2], permutations=99)
    assert (result.pairs, result.permutations, result.exact) == (4, 12, True)
    np.testing.assert_allclose(result.rho, observed, rtol=0, atol=1e-12)
    assert result.p_value == pytest.approx(sum(r >= observed - 1e-9 for r in relabelled) / 12, rel=1e-15)


def test_mantel_strata_are_free_labels():
    # The fuzzer varies strata only as a list of numbers; any labels with equality are valid, and the result
    # depends only on which heads share one.  Oracle: the same partition labelled by ints.
    D1, D2 = _points(18), _points(19)
    by_int = attention.mantel_test(D1, D2, strata=[0, 0, 0, 1, 1, 1], permutations=99)
    by_name = attention.mantel_test(D1, D2, strata=["b", "b", "b", "a", "a", "a"], permutations=99)
    assert by_name == by_int
    with pytest.raises(ValueError, match=r"strata must give one label per head \(6\), got shape \(5,\)"):
        attention.mantel_test(D1, D2, strata=[0, 0, 0, 1, 1])


def test_principal_angles_orthonormal_flag():
    # The flag (a bool, not fuzzed): orthonormal=True on orthonormal bases of the same planes gives the angles
    # of the default.  Oracle: scipy.linalg.subspace_angles (descending).  Tolerance 1e-14 absolute: angles
    # in [0, π/2] from SVDs of 6 × 3 matrices, a few ulps of π/2.
    from scipy.linalg import subspace_angles

    A, B = _plane(14), _plane(15, k=2)
    QA, QB = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    theta = attention.principal_angles(A, B)
    np.testing.assert_allclose(attention.principal_angles(QA, QB, orthonormal=True), theta, rtol=0, atol=1e-14)
    np.testing.assert_allclose(theta, subspace_angles(A, B)[::-1], rtol=0, atol=1e-14)


def test_random_draws_take_a_generator_seed():
    # The fuzzed seed is an int; a Generator is the other valid kind: the same stream, the same draws (exact).
    np.testing.assert_array_equal(
        attention.random_subspaces(D, DH, samples=2, seed=np.random.default_rng(5)),
        attention.random_subspaces(D, DH, samples=2, seed=5),
    )
    np.testing.assert_array_equal(
        attention.random_principal_angles(D, 2, DH, samples=4, seed=np.random.default_rng(5)),
        attention.random_principal_angles(D, 2, DH, samples=4, seed=5),
    )


def test_concatenate_refuses_mixed_widths():
    # The parts are library records (the fuzzer tries only a string): heads of another d_model are refused.
    other = attention.head_subspaces(attention.random_multihead(_rng(20), 2, D + 2, DH))
    with pytest.raises(ValueError, match=r"parts must share d_model and d_head, got \[\(6, 3\), \(8, 3\)\]"):
        attention.HeadSubspaces.concatenate([_subspaces(16, 2), other])
    joined = attention.HeadSubspaces.concatenate([_subspaces(16, 2), _subspaces(17, 2)])
    assert joined.n_heads == 4 and joined.ranks["Q"] == (DH,) * 4
