"""Fuzz suite, ``workbench.lens``: every public callable, one bad argument at a time (harness: ``fuzz.py``)."""

import numpy as np
import pytest
import scipy.linalg
from fuzz import Case, public_callables, run

from workbench import lens


def _rotation(theta=0.3):
    return scipy.linalg.expm(np.array([[0.0, -theta, 0.1], [theta, 0.0, 0.0], [-0.1, 0.0, 0.0]]))


def _generators():
    rng = np.random.default_rng(0)
    return rng.standard_normal((3, 3, 3)) * 0.3


def _heatmap():
    from matplotlib.figure import Figure

    # A Figure made without pyplot is not retained by it: the thousands of calls of the fuzz suites (which close
    # pyplot's figures only after a whole case) open none, so matplotlib's "more than 20 figures" warning stays off.
    ax = Figure().subplots()
    H = lens.commutator_norms(_generators())
    return (H,), {"ax": ax, "labels": ["L0", "L1", "L2"], "title": "commutators"}


CASES = [
    Case("workbench.lens.classify_map", lambda: ((_rotation(),), {"tol": 1e-10})),
    Case("workbench.lens.principal_log", lambda: ((_rotation(), "orthogonal"), {"tol": 1e-10})),
    Case("workbench.lens.generator_spectrum", lambda: ((_generators()[0],), {})),
    Case("workbench.lens.commutator_norms", lambda: ((_generators(),), {"normalize": True})),
    Case("workbench.lens.adjacent_commutators", lambda: ((_generators(),), {"normalize": True})),
    Case(
        "workbench.lens.plot_commutator_heatmap",
        _heatmap,
        # NaN entries are part of the contract (maps without a logarithm are drawn blank); the result is an Axes.
        fixed={"ax": "a matplotlib Axes to draw on (an object matplotlib builds)"},
    ),
    Case("workbench.lens.cartan_split", lambda: ((_generators()[0],), {})),
    Case("workbench.lens.iwasawa_split", lambda: ((_generators()[0],), {})),
    Case(
        "workbench.lens.jordan_chevalley",
        lambda: ((np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]),), {}),
    ),
    Case(
        "workbench.lens.log_lens",
        lambda: ((np.stack([_rotation(0.2), _rotation(0.4)]),), {"kind": "auto", "tol": 1e-10}),
        # log_lens never raises on an individual map: a map without a real logarithm is an entry with its
        # reason and NaN norms and commutators (documented), so NaN is a correct answer here.
        finite=False,
    ),
]

_RECORD = "a result record (frozen dataclass) the library returns; it holds, it does not compute"

#: Public callables without a case, each with the reason.
EXEMPT = {
    f"workbench.lens.{name}": _RECORD
    for name in (
        "CartanSplit",
        "GeneratorSpectrum",
        "IwasawaSplit",
        "JordanChevalleySplit",
        "LensEntry",
        "LogLensReport",
    )
}


def test_every_public_callable_has_a_case():
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables("workbench.lens") - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    import matplotlib.pyplot as plt

    try:
        run(case)
    finally:
        plt.close("all")


# ---- methods of the public classes --------------------------------------------------------------------

#: The lens exports functions and frozen result records; no record method takes an argument (``to_dict``-style
#: readers take only ``self``), so there is nothing to fuzz yet.  The test keeps it that way or asks for a case.
METHOD_CASES: list[Case] = []


def test_every_public_method_has_a_case():
    from fuzz import public_methods

    assert public_methods("workbench.lens") - {case.function for case in METHOD_CASES} == set()


# ---- huge entries: finite inputs whose squares or products overflow float64 -------------------------------

HUGE = 1e300


def test_commutator_maps_of_huge_generators():
    # Oracle: the unscaled map.  The normalised map is of degree 0 (equal up to the rounding of 1e300·S, so
    # 1e-14 relative); the raw map of degree 2, so 1e150-sized generators give 1e300 · H; 1e300 ones are refused.
    rng = np.random.default_rng(3)
    S = rng.standard_normal((3, 4, 4))
    np.testing.assert_allclose(
        lens.commutator_norms(HUGE * S, normalize=True), lens.commutator_norms(S, normalize=True), rtol=1e-14
    )
    np.testing.assert_allclose(lens.adjacent_commutators(1e150 * S), 1e300 * lens.adjacent_commutators(S), rtol=1e-14)
    with pytest.raises(ValueError, match=r"generators\[0\] and generators\[1\] are too large: .* overflows float64"):
        lens.commutator_norms(HUGE * S)


def test_spectrum_and_logarithm_of_huge_maps():
    # Oracles: eigenvalues are of degree 1 (1e300 · λ, 1e-13 relative: eigvals on a rounded, rescaled matrix);
    # log(sW) = log W + (log s) I for s > 0 (scipy.linalg.logm of the unscaled W, 1e-10 absolute: logm's accuracy
    # on a log of size about 690).
    rng = np.random.default_rng(4)
    W = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    spectrum = lens.generator_spectrum(HUGE * W)
    np.testing.assert_allclose(spectrum.log_gains, HUGE * lens.generator_spectrum(W).log_gains, rtol=1e-13)
    assert lens.classify_map(HUGE * W) == "general"
    expected = np.real(scipy.linalg.logm(W)) + np.log(HUGE) * np.eye(4)
    np.testing.assert_allclose(lens.principal_log(HUGE * W), expected, rtol=0, atol=1e-10)
