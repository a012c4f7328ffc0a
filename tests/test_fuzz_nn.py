"""Fuzz suite, ``workbench.nn``: every public callable, one bad argument at a time (harness: ``fuzz.py``).

The functions and the layer constructors are fuzzed through their cases; the layers' forward calls are fuzzed
by ``test_forward_refuses_bad_input`` over the same table of bad values (the harness resolves public names,
and a bound ``forward`` is not one).  Valid inputs are small: 5 tokens, width 4, 2 heads.
"""

import pytest
from fuzz import Case, bad_values, names_parameter, public_callables, run

torch = pytest.importorskip("torch")

from workbench import nn as wnn  # noqa: E402

F64 = torch.float64


def _randn(*shape, seed=0, scale=1.0):
    return scale * torch.randn(*shape, dtype=F64, generator=torch.Generator().manual_seed(seed))


def _transports(n=5, d=2, seed=1):
    return wnn.prefix_transports(_randn(n - 1, d, d, seed=seed, scale=0.3))


def _markov_generator(n=5, seed=2):
    return wnn.multiscale_generator(_randn(n, 2, seed=seed), (-1, 1))


CASES = [
    # banded generators and uniformization
    Case(
        "workbench.nn.BandedGenerator",
        lambda: (([-1, 1], torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 0.0]], dtype=F64)), {}),
    ),
    Case("workbench.nn.banded_generator", lambda: ((_randn(2, 5), [-1, 1]), {"causal": False})),
    Case("workbench.nn.symmetric_banded_generator", lambda: ((_randn(2, 5), [1, 2]), {})),
    Case("workbench.nn.multiscale_offsets", lambda: ((2,), {"causal": True})),
    Case(
        "workbench.nn.uniformized_action",
        lambda: ((_markov_generator(), _randn(5, 3, seed=3), 0.7), {"rate": 5.0, "tol": 1e-12, "max_terms": 500}),
    ),
    Case(
        "workbench.nn.ExpMarkovAttention",
        lambda: ((4, 2), {"offsets": (-1, 1), "t_init": 1.0, "tol": 1e-10, "max_terms": 200}),
    ),
    Case(
        "workbench.nn.HeatKernelAttention",
        lambda: ((4, 2), {"times": (0.5, 2.0), "offsets": (1, 2), "mix": "concat", "tol": 1e-10, "max_terms": 200}),
    ),
    # Givens flows, SPD and symplectic maps
    Case("workbench.nn.brick_planes", lambda: ((5, 2), {})),
    Case("workbench.nn.random_planes", lambda: ((6, 2), {"seed": 1})),
    Case("workbench.nn.givens_product", lambda: ((_randn(3), [(0, 1), (2, 3), (1, 2)], 4), {})),
    Case("workbench.nn.givens_generator", lambda: ((_randn(2), [(0, 2), (1, 2)], 3), {})),
    Case(
        "workbench.nn.GivensFlowMixer",
        lambda: ((4, 2), {"planes": "random", "mix": "tokens", "seed": 1}),
    ),
    Case("workbench.nn.gershgorin_bound", lambda: ((_randn(3, 3) + _randn(3, 3).mT,), {})),
    Case("workbench.nn.SPDMap", lambda: ((3, 2.0), {"bound": "gershgorin"})),
    Case("workbench.nn.symplectic_form", lambda: ((4,), {"dtype": F64})),
    Case("workbench.nn.SymplecticMap", lambda: ((4,), {})),
    # gauge transport
    Case("workbench.nn.prefix_transports", lambda: ((_randn(4, 2, 2, scale=0.3),), {})),
    Case("workbench.nn.transport", lambda: ((_transports(), 3, 1), {})),
    Case(
        "workbench.nn.gauge_change",
        lambda: (
            (torch.linalg.matrix_exp(_randn(5, 2, 2, seed=4, scale=0.5)), _transports()),
            {"queries": _randn(5, 2, seed=5), "keys": _randn(5, 2, seed=6), "values": _randn(5, 2, seed=7)},
        ),
    ),
    Case("workbench.nn.transported_scores", lambda: ((_randn(5, 2, seed=5), _randn(5, 2, seed=6), _transports()), {})),
    Case(
        "workbench.nn.banded_transported_scores",
        lambda: ((_randn(5, 2, seed=5), _randn(5, 2, seed=6), _transports(), (-2, 1)), {}),
    ),
    Case("workbench.nn.multiscale_generator", lambda: ((_randn(5, 2), (-1, 1)), {})),
    Case(
        "workbench.nn.double_exponential",
        lambda: ((_markov_generator(), _transports(), _randn(5, 2, seed=8), 0.7), {"method": "uniformization"}),
    ),
    Case("workbench.nn.conjugated_generator", lambda: ((_markov_generator(), _transports()), {})),
    Case("workbench.nn.twist_generator", lambda: ((_randn(3, 3, scale=0.1), _randn(3, 3, seed=1, scale=0.1), 2), {})),
    Case(
        "workbench.nn.bch_conjugation_error",
        lambda: ((_randn(3, 3, scale=0.1), _randn(3, 3, seed=1, scale=0.1)), {"degree": 2}),
    ),
    Case(
        "workbench.nn.twisted_generator",
        lambda: ((_markov_generator(3), torch.diag_embed(_randn(3, 2, seed=9))), {"degree": 2}),
    ),
    Case("workbench.nn.curvature", lambda: ((_randn(3, 3, 3, scale=0.01),), {"degree": 4})),
    Case("workbench.nn.holonomy", lambda: ((_randn(4, 3, 3, scale=0.2), 1, 3), {"second": _randn(4, 3, 3, seed=3)})),
    # operator attention
    Case("workbench.nn.OperatorAttention", lambda: ((4, 2, "DMTN"), {"causal": True})),
    Case("workbench.nn.project_attention", lambda: ((wnn.OperatorAttention(4, 2), "DMAP"), {})),
]


#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.nn.GivensProduct": (
        "unchecked by design: built by givens_product (its checked public front, which has a case) and by "
        "GivensFlowMixer on every forward, where re-checking the planes would cost a Python loop per step"
    ),
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.nn") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


def _layers():
    torch.manual_seed(0)
    return {
        "ExpMarkovAttention": wnn.ExpMarkovAttention(4, 2, offsets=(-1, 1)).double(),
        "HeatKernelAttention": wnn.HeatKernelAttention(4, 2).double(),
        "GivensFlowMixer": wnn.GivensFlowMixer(4, layers=2).double(),
        "SPDMap": wnn.SPDMap(4, lipschitz=2.0).double(),
        "SymplecticMap": wnn.SymplecticMap(4).double(),
        "OperatorAttention": wnn.OperatorAttention(4, 2, "DMAP").double(),
    }


@pytest.mark.parametrize("name", sorted(_layers()))
def test_forward_refuses_bad_input(name):
    # The forward call, one bad input at a time (the fuzz table of a float64 tensor: NaN entry, empty, 0-d,
    # extra axis, one row short, float32, a numpy copy): a ValueError/TypeError naming x, or a finite result.
    layer = _layers()[name]
    x = _randn(2, 5, 4, seed=11)
    with torch.no_grad():
        layer(x)  # the valid call
        findings = []
        for label, bad in bad_values(x).items():
            try:
                y = layer(bad)
            except (ValueError, TypeError) as exc:
                if not names_parameter(str(exc), ("x",)):
                    findings.append(f"{label}: {type(exc).__name__} does not name 'x': {exc}")
                continue
            except Exception as exc:
                findings.append(f"{label}: {type(exc).__name__}: {exc}")
                continue
            outputs = y if isinstance(y, tuple) else (y,)
            if not all(bool(torch.isfinite(out).all()) for out in outputs):
                findings.append(f"{label}: returned a non-finite number")
    assert not findings, f"{name}.forward: " + "; ".join(findings)


# ---- methods of the public classes --------------------------------------------------------------------
#
# The harness calls a method with the instance first (never fuzzed).  The layers are the float64 ones of
# ``_layers``; the forward cases repeat ``test_forward_refuses_bad_input`` through the harness and add the
# non-contiguous copy (which must not change the answer).


def _layer(name):
    return _layers()[name]


def _x():
    return _randn(2, 5, 4, seed=11)


def _banded():
    # Exit rates 3, 5, 2.5, 0.5: a stochastic step needs rate >= 5.
    return wnn.BandedGenerator([-1, 1], torch.tensor([[0.0, 1.0, 2.0, 0.5], [3.0, 4.0, 0.5, 0.0]], dtype=F64))


def _givens():
    return wnn.givens_product(_randn(3), [(0, 1), (2, 3), (1, 2)], 4)


_TO = {"dtype": F64, "device": "cpu"}

METHOD_CASES = [
    Case("workbench.nn.BandedGenerator.matmul", lambda: ((_banded(), _randn(4, 2, seed=12)), {})),
    Case(
        "workbench.nn.BandedGenerator.stochastic_step",
        lambda: ((_banded(), _randn(4, 2, seed=12), torch.tensor(8.0, dtype=F64)), {}),
    ),
    Case("workbench.nn.BandedGenerator.stochastic_step", lambda: ((_banded(), _randn(3, 4, 2, seed=12), 8.0), {})),
    Case("workbench.nn.GivensProduct.apply", lambda: ((_givens(), _randn(3, 4, seed=13)), {"transpose": True})),
    Case("workbench.nn.ExpMarkovAttention.forward", lambda: ((_layer("ExpMarkovAttention"), _x()), {})),
    Case("workbench.nn.ExpMarkovAttention.generator", lambda: ((_layer("ExpMarkovAttention"), _x()), {})),
    Case("workbench.nn.HeatKernelAttention.forward", lambda: ((_layer("HeatKernelAttention"), _x()), {})),
    Case("workbench.nn.HeatKernelAttention.generator", lambda: ((_layer("HeatKernelAttention"), _x()), {})),
    Case("workbench.nn.GivensFlowMixer.forward", lambda: ((_layer("GivensFlowMixer"), _x()), {"inverse": True})),
    Case("workbench.nn.GivensFlowMixer.product", lambda: ((_layer("GivensFlowMixer"),), dict(_TO))),
    Case("workbench.nn.SPDMap.forward", lambda: ((_layer("SPDMap"), _x()), {})),
    Case("workbench.nn.SPDMap.generator", lambda: ((_layer("SPDMap"),), dict(_TO))),
    Case("workbench.nn.SPDMap.matrix", lambda: ((_layer("SPDMap"),), dict(_TO))),
    Case("workbench.nn.SymplecticMap.forward", lambda: ((_layer("SymplecticMap"), _x()), {})),
    Case("workbench.nn.SymplecticMap.generator", lambda: ((_layer("SymplecticMap"),), dict(_TO))),
    Case("workbench.nn.SymplecticMap.matrix", lambda: ((_layer("SymplecticMap"),), dict(_TO))),
    Case(
        "workbench.nn.OperatorAttention.forward",
        lambda: ((_layer("OperatorAttention"), _x()), {"return_operator": True}),
    ),
    Case("workbench.nn.OperatorAttention.attention", lambda: ((_layer("OperatorAttention"), _x()), {})),
]


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    assert public_methods("workbench.nn") - {case.function for case in METHOD_CASES} == set()


@pytest.mark.parametrize("case", METHOD_CASES, ids=lambda c: c.id)
def test_fuzz_method(case):
    with torch.no_grad():
        run(case)


def test_method_refusals_name_the_parameter():
    # The refusals the method fuzz cases found, pinned (each was a RuntimeError, an IndexError or a NaN).
    q = _banded()
    with pytest.raises(ValueError, match=r"x must have shape \[\.\.\., n=4, d\], got shape \(\)"):
        q.matmul(torch.tensor(1.0, dtype=F64))
    with pytest.raises(ValueError, match=r"x must be finite, got 1 non-finite entry"):
        q.matmul(torch.tensor([[1.0], [float("nan")], [0.0], [0.0]], dtype=F64))
    with pytest.raises(TypeError, match=r"x must be a torch tensor, got ndarray"):
        q.stochastic_step(_randn(4, 2).numpy(), 8.0)
    with pytest.raises(ValueError, match=r"rate must be > 0 and >= max_i\(-Q_ii\) = 5 .* got 1"):
        q.stochastic_step(_randn(4, 2), 1.0)
    with pytest.raises(ValueError, match=r"rate must be finite"):
        q.stochastic_step(_randn(4, 2), torch.tensor(float("nan"), dtype=F64))
    with pytest.raises(ValueError, match=r"rate must be broadcastable to the batch shape \(\), got shape \(0,\)"):
        q.stochastic_step(_randn(4, 2), torch.zeros(0, dtype=F64))
    with pytest.raises(ValueError, match=r"x must be finite"):
        _givens().apply(torch.tensor([float("nan"), 0.0, 0.0, 0.0], dtype=F64))
    spd = _layer("SPDMap")
    with pytest.raises(ValueError, match=r"device must name a torch device present here .*got 'no-such-choice'"):
        spd.matrix(device="no-such-choice")
    with pytest.raises(TypeError, match=r"dtype must be None or a floating torch dtype .*got 'x'"):
        _layer("SymplecticMap").generator(dtype="x")
    with pytest.raises(TypeError, match=r"dtype must be None, torch.float32 or torch.float64, got torch.float16"):
        spd.generator(dtype=torch.float16)
    with pytest.raises(TypeError, match=r"device must be None, a string, an index or a torch.device, got float"):
        _layer("GivensFlowMixer").product(device=2.5)


def test_stochastic_step_is_the_uniformized_matrix():
    # Oracle: the dense P = I + Q/λ from BandedGenerator.dense().  Tolerance 1e-15 absolute: sums of three
    # products of numbers of size <= 1 in float64.
    q, x = _banded(), _randn(4, 3, seed=14)
    expected = (torch.eye(4, dtype=F64) + q.dense() / 8.0) @ x
    torch.testing.assert_close(q.stochastic_step(x, 8.0), expected, rtol=0, atol=1e-15)
    torch.testing.assert_close(q.matmul(x), q.dense() @ x, rtol=0, atol=1e-14)  # entries up to 5: 1e-14


def _huge(x, top=1e300):
    """``x`` rescaled so that its largest |entry| is ``top`` (the harness's "huge entries" value)."""
    return x * (top / x.abs().max())


def test_huge_generators_are_refused_naming_the_generator():
    # A generator with exit rates near 1e300 needs ~λt powers: refused before any work, naming the parameter
    # that holds the generator (Q of uniformized_action, generator of double_exponential).
    q = _huge(_markov_generator())
    with pytest.raises(ValueError, match=r"^rate must be >= max_i\(-Q_ii\) = 1e\+300 \(the largest exit rate of Q\)"):
        wnn.uniformized_action(q, _randn(5, 3, seed=3), 0.7, rate=5.0)
    with pytest.raises(ValueError, match=r"powers .* rate λ = 1e\+300 from the exit rates of Q\), more than max_terms"):
        wnn.uniformized_action(q, _randn(5, 3, seed=3), 0.7)
    with pytest.raises(ValueError, match=r"rate λ = 1e\+300 from the exit rates of generator\), more than max_terms"):
        wnn.double_exponential(q, _transports(), _randn(5, 2, seed=8), 0.7, method="uniformization")


def test_overflowing_lie_series_name_the_frames():
    # Brackets of entries near 1e300 overflow float64; the refusal names the caller's parameter, not the
    # series' positional matrices[i].
    with pytest.raises(ValueError, match=r"^the BCH twist series \(degree 2\) overflows float64 for phis \(max"):
        wnn.twisted_generator(_markov_generator(3), _huge(torch.diag_embed(_randn(3, 2, seed=9))), degree=2)
    with pytest.raises(ValueError, match=r"^the group-commutator series \(degree 4\) overflows .* for generators"):
        wnn.curvature(_huge(_randn(3, 3, 3)), degree=4)
    with pytest.raises(
        ValueError, match=r"^the BCH conjugation error overflows float64 .* for phi_i \(max \|entry\| 1e\+300\)"
    ):
        wnn.bch_conjugation_error(_huge(_randn(3, 3)), _randn(3, 3, seed=1, scale=0.1), degree=2)
    with pytest.raises(
        ValueError, match=r"^the holonomy overflows float64 .* for generators \(max \|entry\| 1e\+300\)"
    ):
        wnn.holonomy(_huge(_randn(4, 3, 3)), 1, 3)


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("ExpMarkovAttention", "the generator's logits"),
        ("HeatKernelAttention", "the generator's logits"),
        ("OperatorAttention", "the layer output"),
    ],
)
def test_layers_refuse_overflowing_input_naming_x(name, what):
    # Finite x near 1e300 overflows the scores q·k (~1e600): a ValueError naming x, never a nan output.
    with (
        torch.no_grad(),
        pytest.raises(ValueError, match=rf"^{what} overflows float64 .* for x \(max \|entry\| 1e\+300\)"),
    ):
        _layer(name)(_huge(_x()))


def test_operator_attention_refuses_an_overflowed_operator_naming_x():
    with torch.no_grad(), pytest.raises(ValueError, match=r"^the attention operator overflows float64 .* for x \(max"):
        _layer("OperatorAttention").attention(_huge(_x()))
