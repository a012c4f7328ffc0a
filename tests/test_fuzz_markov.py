"""Fuzz suite, ``workbench.markov``: every public callable, one bad argument at a time (harness: ``fuzz.py``).

The valid inputs are small (six points in the plane, a Gauss kernel at β = 1, its Markov operator and a
non-reversible three-state cycle), so that the whole file runs in seconds.
"""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse
from fuzz import Case, public_callables, run

from workbench import markov


def _points():
    return np.random.default_rng(0).standard_normal((6, 2))


def _kernel():
    return markov.gauss_kernel(_points(), 1.0)


def _rates():
    K = _kernel()
    return K - np.diag(np.diag(K))  # jump rates: the diagonal is ignored, zero it for clarity


def _P():
    return markov.markov_operator(_kernel())


def _pi():
    return markov.reversible_stationary_law(_kernel())


def _cycle_P():
    # The non-reversible three-state rotation of the currents docstrings; its stationary law is uniform.
    return np.array([[0.0, 0.7, 0.3], [0.3, 0.0, 0.7], [0.7, 0.3, 0.0]])


def _f():
    return _points()[:, 0]


def _g():
    return _points()[:, 1]


def _distances():
    x = _points()
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


def _graph():
    G = nx.Graph()
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("b", "c", weight=1.0)
    return G


def _generator():
    return np.array([[-1.0, 1.0, 0.0], [0.5, -1.0, 0.5], [0.0, 2.0, -2.0]])


CASES = [
    # --- samples with known geometry -----------------------------------------------------------------
    Case("workbench.markov.Circle", lambda: ((1.0, 0.5), {})),
    Case("workbench.markov.Sphere", lambda: ((2, 1.0), {})),
    Case("workbench.markov.FlatTorus", lambda: ((2, 6.0), {})),
    Case("workbench.markov.Interval", lambda: ((1.0,), {})),
    Case("workbench.markov.SwissRoll", lambda: ((4.7, 1.5, 21.0, "area"), {})),
    # --- kernels and bandwidths ------------------------------------------------------------------------
    Case("workbench.markov.gauss_kernel", lambda: ((_points(), 1.0), {})),
    Case("workbench.markov.gauss_kernel_sparse", lambda: ((_points(), 1.0), {"k": 3})),
    Case("workbench.markov.squared_distances", lambda: ((_points(),), {})),
    Case("workbench.markov.alpha_normalize", lambda: ((_kernel(), 0.5), {})),
    Case("workbench.markov.median_bandwidth", lambda: ((_points(),), {"max_points": 5, "seed": 0})),
    Case(
        "workbench.markov.bandwidth_sweep",
        lambda: ((np.random.default_rng(0).uniform(size=(30, 1)),), {"betas": [1.0, 10.0, 100.0], "k": 5, "seed": 0}),
    ),
    Case(
        "workbench.markov.graph_weights",
        lambda: ((_graph(),), {"weight": "weight", "nodelist": ["a", "b", "c"]}),
        fixed={"nodelist": "a list of graph nodes: any hashable is a valid node name, so no value is 'bad' by type"},
    ),
    # --- operators ---------------------------------------------------------------------------------------
    Case("workbench.markov.MarkovOperator", lambda: ((_P(),), {"stationary": _pi(), "atol": 1e-10})),
    Case("workbench.markov.MarkovOperator", lambda: ((scipy.sparse.csr_array(_P()),), {"stationary": _pi()})),
    Case("workbench.markov.doob_transform", lambda: ((_kernel(), np.ones(6) + _f() ** 2), {})),
    Case("workbench.markov.markov_operator", lambda: ((_kernel(),), {})),
    Case("workbench.markov.softmax_operator", lambda: ((_distances(), 1.0), {})),
    Case("workbench.markov.markov_semigroup", lambda: ((_generator(), 0.5), {})),
    Case("workbench.markov.reversible_stationary_law", lambda: ((_kernel(),), {})),
    # --- forms, cycles and currents ---------------------------------------------------------------------
    Case("workbench.markov.dirichlet_form", lambda: ((_kernel(), _f(), _g()), {})),
    Case(
        "workbench.markov.beurling_deny_split",
        lambda: ((_kernel(), _distances(), 1.0, _f()), {"killing": np.full(6, 0.1)}),
    ),
    Case(
        "workbench.markov.beurling_deny_scan",
        lambda: ((_kernel(), _distances(), [0.5, 1.0, 2.0], _f()), {"killing": np.full(6, 0.1)}),
    ),
    Case("workbench.markov.killing_measure", lambda: ((_P() * 0.9, _pi()), {"tol": 1e-10})),
    Case("workbench.markov.support_graph", lambda: ((_cycle_P(),), {})),
    Case("workbench.markov.cycle_basis", lambda: ((_cycle_P(),), {})),
    Case("workbench.markov.cycle_affinities", lambda: ((_cycle_P(),), {"cycles": [(0, 1, 2)]})),
    Case("workbench.markov.kolmogorov_residual", lambda: ((_cycle_P(),), {"cycles": [(0, 1, 2)]})),
    Case("workbench.markov.cycle_edges", lambda: (([(0, 1, 2, 0), (2, 3)], 4), {})),
    Case("workbench.markov.segment_sums", lambda: ((np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([0, 3])), {})),
    Case(
        "workbench.markov.hodge_split", lambda: ((_cycle_P() - _cycle_P().T,), {"weights": _cycle_P() + _cycle_P().T})
    ),
    # --- Bakry–Émery calculus and curvature --------------------------------------------------------------
    Case("workbench.markov.carre_du_champ", lambda: ((_rates(), _f(), _g()), {"form": "edge"})),
    Case("workbench.markov.gamma2", lambda: ((_rates(), _f(), _g()), {})),
    Case("workbench.markov.hessian_form", lambda: ((_rates(), _f() ** 2, _f(), _g()), {})),
    Case("workbench.markov.bakry_emery_curvature", lambda: ((np.ones((5, 5)) - np.eye(5),), {"vertices": [0, 3]})),
    Case(
        "workbench.markov.ollivier_ricci",
        lambda: ((np.ones((5, 5)) - np.eye(5),), {"edges": [[0, 1], [2, 4]], "idleness": 0.25}),
    ),
    # --- stationary currents and the gauge ---------------------------------------------------------------
    Case("workbench.markov.stationary_current", lambda: ((_cycle_P(), np.full(3, 1 / 3)), {})),
    Case(
        "workbench.markov.circulation",
        lambda: ((_cycle_P(), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), np.full(3, 1 / 3)), {}),
    ),
    Case("workbench.markov.hatano_nelson", lambda: ((_cycle_P(), np.full(3, 1 / 3)), {})),
    Case("workbench.markov.gauge_gradients", lambda: ((_cycle_P(), np.full(3, 1 / 3)), {})),
]

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.markov.BandwidthSweep": "a result record that bandwidth_sweep builds; its fields are not inputs",
    "workbench.markov.BeurlingDenyParts": "a result record that beurling_deny_split builds; its fields are not inputs",
    "workbench.markov.GaugeGradients": "a result record that gauge_gradients builds; its fields are not inputs",
    "workbench.markov.HodgeDecomposition": "a result record that hodge_split builds; its fields are not inputs",
    "workbench.markov.Spectrum": "a result record that MarkovOperator.spectrum builds; its fields are not inputs",
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.markov") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)
