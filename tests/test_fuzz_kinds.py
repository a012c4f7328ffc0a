"""Fuzz suite, every kind of wrong value: each case of the nine ``test_fuzz_*`` files, replayed with
:func:`fuzz.wrong_kinds` (``None``, a string, a bare object, a ragged list, a bool, an empty array, a dict and a
10⁹-row stride-0 view) in place of each argument, one at a time.

The per-package files choose their bad values by the type of the valid argument (NaN entries for arrays, −1 for
sizes); a user passes the wrong kind of thing as often.  The accepted outcomes are those of ``fuzz.py``: a
``ValueError`` or ``TypeError`` naming the parameter, or a finite result.  A 10⁹-row view must be refused from
the memory estimate (the harness holds the library's budget to its own 6 GiB allowance), not started on.
"""

import importlib

import pytest
from fuzz import Case, run, wrong_kinds

#: The per-package fuzz files whose cases are replayed here, in layer order.
PACKAGES = ("base", "lie", "lens", "continuum", "markov", "expmv", "nn", "attention", "models")


def _cases() -> list[Case]:
    cases = []
    for package in PACKAGES:
        try:
            module = importlib.import_module(f"test_fuzz_{package}")
        except pytest.skip.Exception:  # a package file that skips itself (an optional dependency absent)
            continue
        cases += [*module.CASES, *getattr(module, "METHOD_CASES", [])]
    return cases


CASES = _cases()


def test_every_package_file_is_replayed():
    assert len({case.function.split(".")[1] for case in CASES}) >= len(PACKAGES) - 1
    assert len(CASES) > 350


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_wrong_kinds(case):
    run(case, wrong_kinds)
