"""Every hypothesis of every identity is needed: outside it, the statement fails.

Each :class:`~workbench.catalogue.Hypothesis` carries ``outside(rng)``, the identity's own statement measured
on a case that violates that hypothesis alone.  The oracle is the identity's check itself: outside, its
residual must exceed its tolerance (a hypothesis whose outside case passes is not needed, or the case does not
leave it).  The cases are deterministic up to ``rng``; the seed is fixed so that a failure reproduces.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib

import numpy as np
import pytest

from workbench.book import catalogue_page
from workbench.catalogue import (
    CatalogueError,
    Hypothesis,
    Identity,
    Verification,
    discover,
    run_checks,
    run_outside_cases,
)

IDENTITIES = discover()
CASES = [
    pytest.param(identity, number, hypothesis, id=f"{identity.name}-H{number}")
    for identity in IDENTITIES
    for number, hypothesis in enumerate(identity.hypotheses, 1)
    if hypothesis.outside is not None
]


@pytest.mark.parametrize(("identity", "number", "hypothesis"), CASES)
def test_the_statement_fails_outside_each_hypothesis(identity, number, hypothesis):
    rng = np.random.default_rng([0, zlib.crc32(f"{identity.name}/{number}".encode())])  # as `check --hypotheses`
    outcome = hypothesis.outside(rng)
    assert isinstance(outcome, Verification), type(outcome)
    assert not outcome.passed, f"outside H{number} ({hypothesis.case}) the statement still holds: {outcome}"
    assert outcome.residual > outcome.tolerance, outcome  # NaN fails this too: an outside case must measure


def test_every_identity_states_hypotheses_or_is_reviewed_as_unconditional():
    # An identity with no hypothesis holds for every input of the types its statement names; these were read
    # one by one.  A new identity must either declare its hypotheses or be added here after the same reading.
    # An entry whose identity has since gained hypotheses (or was renamed) is stale and must go.
    unconditional = {i.name for i in IDENTITIES if not i.hypotheses}
    assert unconditional == UNCONDITIONAL, (
        sorted(unconditional - UNCONDITIONAL),
        sorted(UNCONDITIONAL - unconditional),
    )


UNCONDITIONAL = {
    "expmv.heat.cycle",  # every n ≥ 1 and real t (the Bessel generating function)
    "expmv.rank_one.closed_form",  # every u, v and t
    "markov.spectrum.sphere.bandwidth",  # stated for S^d of any radius r: l(l + d − 1)/r²
    "continuum.bakry_emery.bochner",  # every smooth metric G, smooth f and Φ, any ħ (polynomial in ħ)
    "lie.bases.agree",  # an exact change of basis in the free Lie algebra over Q, every degree
    "lie.hausdorff",  # e^{∓ad_A} is entire in the bounded ad_A: no radius
    "nn.gauge.conjugation",  # similarity commutes with exp for any real Q and invertible T_j
    "nn.gauge.covariance",  # the gauge changes cancel for any invertible S, T (queries move by S^{-T})
    "nn.log_lens.cartan",  # every real square matrix
    "nn.log_lens.iwasawa",  # every real square matrix
}


def test_a_hypothesis_without_outside_case_says_why():
    with pytest.raises(CatalogueError, match="has no outside case: give `outside` or a `reason`"):
        Hypothesis("G constant")
    with pytest.raises(CatalogueError, match="has an outside check: describe it in `case`"):
        Hypothesis("G constant", outside=lambda rng: None)
    with pytest.raises(CatalogueError, match="Hypothesis text must be a non-empty string"):
        Hypothesis("  ", reason="x")


def test_an_identity_refuses_hypotheses_that_are_not_records():
    with pytest.raises(CatalogueError, match=r"hypotheses must be workbench\.catalogue\.Hypothesis records, got str"):
        Identity("x.y", "x", "s", "src", lambda: [], lambda rng, scale, backend: None, hypotheses=("n ≥ 5",))


def _with_hypotheses():
    return next(i for i in IDENTITIES if any(h.outside is not None for h in i.hypotheses))


def test_list_json_carries_the_hypotheses_and_their_outside_cases():
    identity = _with_hypotheses()
    described = identity.describe()["hypotheses"]
    assert [h["text"] for h in described] == [h.text for h in identity.hypotheses]
    assert any("outside" in h for h in described)
    json.dumps(described)


def test_derive_and_the_catalogue_page_show_the_hypotheses():
    identity = _with_hypotheses()
    shown = subprocess.run(
        [sys.executable, "-m", "workbench", "derive", identity.name], capture_output=True, text=True, check=False
    )
    assert shown.returncode == 0, shown.stderr
    first = identity.hypotheses[0]
    assert "hypotheses:" in shown.stdout and f"H1. {first.text}" in shown.stdout
    page = catalogue_page([identity])
    assert "**Hypotheses**" in page and "*Outside:*" in page


def test_check_hypotheses_runs_the_outside_cases_as_rows_that_pass_when_the_statement_fails():
    identity = _with_hypotheses()
    shown = subprocess.run(
        [sys.executable, "-m", "workbench", "check", identity.name, "--hypotheses", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    document = json.loads(shown.stdout)
    expected = [f"outside H{k}" for k, h in enumerate(identity.hypotheses, 1) if h.outside is not None]
    assert [r["backend"] for r in document["results"]] == expected
    assert document["backends"] == ["outside"] and document["passed"]
    assert all(r["residual"] > r["tolerance"] for r in document["results"])


def test_check_hypotheses_refuses_options_that_do_not_apply():
    shown = subprocess.run(
        [sys.executable, "-m", "workbench", "check", "--hypotheses", "--scale", "large"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 2
    assert "--hypotheses runs the outside cases at their own size on the CPU, one process" in shown.stderr
    assert "drop --numeric-only, --scale, --device and --workers" in shown.stderr


def test_an_outside_case_that_holds_is_a_failing_row_that_says_so():
    holds = Hypothesis("not needed", "a case inside after all", lambda rng: Verification.from_residual(0.0, 1e-12))
    broken = Hypothesis("raises", "a case that raises", lambda rng: 1 / 0)
    identity = Identity(
        "x.y", "x", "s", "src", lambda: [], lambda rng, scale, backend: None, hypotheses=(holds, broken)
    )
    first, second = run_outside_cases([identity])
    assert (first.backend, first.passed, first.error) == (
        "outside H1",
        False,
        "the statement holds outside: a case inside after all",
    )
    assert not second.passed and second.error.startswith("ZeroDivisionError")


def test_check_hypotheses_on_an_unconditional_identity_says_there_is_nothing_to_run():
    shown = subprocess.run(
        [sys.executable, "-m", "workbench", "check", "lie.hausdorff", "--hypotheses"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "no outside case to run" in shown.stdout


@pytest.mark.parametrize("run", [run_outside_cases, run_checks])
def test_a_negative_or_fractional_seed_is_refused_by_name(run):
    identities = [i for i in IDENTITIES if i.name == "markov.curvature.graphs"]
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -1"):
        run(identities, seed=-1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        run(identities, seed=0.5)
