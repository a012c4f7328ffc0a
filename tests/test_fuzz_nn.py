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
