import numpy as np
import pytest
import sympy as sp
from conftest import BACKENDS

from workbench.catalogue import (
    CatalogueError,
    Identity,
    Verification,
    _identities_of,
    claim,
    discover,
    fit_rate,
    run_checks,
    select,
)

EXPECTED = {
    "structure.exp.skew_to_orthogonal",
    "structure.exp.symmetric_to_spd",
    "structure.exp.generator_to_stochastic",
    "structure.exp.hamiltonian_to_symplectic",
    "expmv.rank_one.closed_form",
    "continuum.softmax.small_beta",
    "markov.dirichlet_form.gauss",
}


def test_discovery_finds_the_repository_catalogue():
    names = {i.name for i in discover()}
    assert EXPECTED <= names


ALL_NAMES = sorted(i.name for i in discover())


def test_the_lie_catalogue_is_registered():
    assert {"lie.bch.series", "lie.zassenhaus", "lie.hausdorff", "lie.magnus.polynomial"} <= set(ALL_NAMES)


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_identity_passes_symbolically_and_numerically(name):
    identity = select(discover(), name=name)
    results = run_checks(identity, seed=7, backends=BACKENDS)
    expected = [b for b in BACKENDS if b.split(":", 1)[0] in identity[0].backends]  # numpy-only checks skip torch
    assert [r.backend for r in results] == ["sympy", *expected]
    for r in results:
        assert r.passed, (r.backend, r.residual, r.tolerance, r.error)
        assert r.residual is not None and r.residual <= r.tolerance


def test_asymptotic_identity_reports_rate_and_expected_value():
    (result,) = run_checks(select(discover(), name="continuum.softmax.small_beta"), symbolic=False)
    assert result.expected_rate == 2.0
    assert abs(result.rate - 2.0) <= 0.05


def test_fit_rate_recovers_known_slope():
    h = np.geomspace(1e-3, 1e-1, 5)
    assert abs(fit_rate(h, 3.0 * h**1.5) - 1.5) < 1e-12


def test_fit_rate_rejects_nonpositive_errors():
    with pytest.raises(ValueError, match=r"fit_rate needs at least two positive parameters"):
        fit_rate([0.1, 0.2], [0.0, 1.0])


def test_nan_residual_fails():
    assert not Verification.from_residual(float("nan"), 1.0).passed


def _wrong(rng, scale, backend):
    return Verification.from_residual(0.5, 1e-3, n=2)


def _raises(rng, scale, backend):
    raise FloatingPointError("boom")


def _derive_false():
    return [claim("x = x + 1", sp.Symbol("x"), sp.Symbol("x") + 1)]


def _derive_nothing():
    return []


def test_runner_reports_failures_without_raising():
    broken = [
        Identity("t.wrong", "t", "", "", _derive_false, _wrong, backends=("numpy",)),
        Identity("t.raises", "t", "", "", _derive_nothing, _raises, backends=("numpy",)),
    ]
    results = {(r.name, r.backend): r for r in run_checks(broken)}
    assert not results["t.wrong", "sympy"].passed
    assert "x = x + 1" in results["t.wrong", "sympy"].error
    assert results["t.wrong", "numpy"].residual == 0.5 and not results["t.wrong", "numpy"].passed
    assert results["t.raises", "sympy"].error == "derive() claimed no equality"
    assert results["t.raises", "numpy"].error.startswith("FloatingPointError: boom")


def _killed(rng, scale, backend):
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)  # a worker that dies (out of memory, killed): never a hang


def test_rows_on_two_workers_equal_the_serial_rows_in_the_same_order():
    # Oracle: the serial run.  Each row has its own stream (seeded by the identity's name), so the split changes
    # nothing but rounding: BLAS runs one thread per worker, and a residual may differ in its last bits (1e-9
    # relative allowed; pass/fail and the problem sizes must agree exactly).
    identities = select(discover(), area="expmv")
    serial = run_checks(identities, seed=3, workers=1)
    labels = []
    forked = run_checks(identities, seed=3, workers=2, progress=labels.append)
    assert [(r.name, r.backend) for r in forked] == [(r.name, r.backend) for r in serial]
    assert sorted(labels) == sorted(f"{r.name} [{r.backend}]" for r in serial)
    for a, b in zip(serial, forked, strict=True):
        assert (a.passed, a.sizes) == (b.passed, b.sizes)
        assert b.residual == pytest.approx(a.residual, rel=1e-9, abs=1e-300)


def test_a_worker_that_dies_fails_its_row_and_the_run_ends():
    # The broken pool is reported on the rows it takes down, naming the cause; the runner does not raise or hang.
    broken = [
        Identity("t.killed", "t", "", "", _derive_nothing, _killed, backends=("numpy",)),
        Identity("t.wrong", "t", "", "", _derive_false, _wrong, backends=("numpy",)),
    ]
    results = {(r.name, r.backend): r for r in run_checks(broken, workers=2)}
    assert set(results) == {("t.killed", "sympy"), ("t.killed", "numpy"), ("t.wrong", "sympy"), ("t.wrong", "numpy")}
    killed = results["t.killed", "numpy"]
    assert not killed.passed and killed.error.startswith("worker died: ")
    with pytest.raises(ValueError, match=r"workers must be an integer >= 1, got 0"):
        run_checks(broken, workers=0)


def test_runner_rejects_unknown_scale():
    with pytest.raises(ValueError, match=r"scale must be one of 'small', 'large', got 'tiny'"):
        run_checks([], scale="tiny")


def test_select_errors_name_what_exists():
    with pytest.raises(ValueError, match=r"area must be one of .*markov.*got 'nope'"):
        select(discover(), area="nope")
    with pytest.raises(ValueError, match=r"name must be an identity or a dotted prefix of one, got 'markov.nope'"):
        select(discover(), name="markov.nope")
    assert {i.area for i in select(discover(), name="structure")} == {"structure"}


def test_entry_point_objects_must_be_identities():
    with pytest.raises(CatalogueError, match=r"expected workbench.catalogue.Identity records, got int"):
        _identities_of([1, 2], "test")


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_identity_passes_at_large_scale(name):
    # The sizes users and benchmarks run (`workbench check --scale large`); ~30 s in all on 2 cores.
    results = run_checks(select(discover(), name=name), seed=11, scale="large", backends=BACKENDS, symbolic=False)
    for r in results:
        assert r.passed, (r.backend, r.residual, r.tolerance, r.error)


def test_run_checks_names_what_it_wants_when_given_an_area_string():
    # Reproducer: run_checks("markov") raised AttributeError ('str' object has no attribute 'name').
    from workbench.catalogue import run_checks

    with pytest.raises(
        TypeError, match=r"identities must be an iterable of Identity records, .* got the string 'markov'"
    ):
        run_checks("markov")
    with pytest.raises(TypeError, match=r"identities\[0\] must be an Identity, got int"):
        run_checks([1])
