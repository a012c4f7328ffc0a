"""Fuzz suite, the base layer (``workbench.backend``, ``workbench.validation``, ``workbench.memory``, ``workbench.rates``).

Every public callable, one bad argument at a time (harness: ``fuzz.py``).  The validators take the name
a message should use as their first argument, so a refusal of their checked value names that name
(``check_finite("K", x)`` says "K must be finite"): each such case lists the name as an alias.
"""

import numpy as np
import pytest
import scipy.sparse
from fuzz import Case, public_callables, run

_STOCHASTIC = np.array([[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]])
_GENERATOR = _STOCHASTIC - np.eye(3)
_NAME = "a name used in messages only: any string is valid, and a non-string is formatted as it is"

CASES = [
    # --- workbench.backend ---------------------------------------------------------------------------
    # The converters copy their input faithfully: NaN in is NaN out, the right answer (finite=False).
    Case(
        "workbench.backend.like",
        lambda: ((np.array([1.5, 2.0]), np.zeros(2, dtype=np.float32)), {}),
        finite=False,
    ),
    Case("workbench.backend.matrix_exp", lambda: ((np.array([[0.0, 1.0], [-1.0, 0.0]]),), {})),
    Case("workbench.backend.to_backend", lambda: ((np.array([1.0, 2.0]), "numpy"), {}), finite=False),
    Case("workbench.backend.to_numpy", lambda: ((np.array([1.0, 2.0]),), {}), finite=False),
    Case(
        "workbench.backend.host_array",
        lambda: (("ids", np.array([1.0, 2.0])), {}),
        fixed={"name": _NAME},
        aliases={"x": ("ids",)},
        finite=False,
    ),
    Case("workbench.backend.distinct_entries", lambda: ((np.arange(6.0).reshape(2, 3),), {}), finite=False),
    Case("workbench.backend.unit_roundoff", lambda: ((np.zeros(3),), {})),
    # --- workbench.validation ------------------------------------------------------------------------
    Case(
        "workbench.validation.as_array",
        lambda: (("f", np.array([[1.0, 2.0], [3.0, 4.0]])), {"ndim": 2, "min_ndim": 1}),
        fixed={"name": _NAME},
        # A valid ndim that x does not have is a refusal of x, which the message names by its name "f".
        aliases={"x": ("f",), "ndim": ("f",), "min_ndim": ("f",)},
    ),
    Case(
        "workbench.validation.as_sparse",
        lambda: (("K", scipy.sparse.csr_array(_STOCHASTIC)), {"keep_zeros": False}),
        fixed={"name": _NAME},
        aliases={"x": ("K",)},
    ),
    Case(
        "workbench.validation.check_choice",
        lambda: (("scale", "small", ("small", "large")), {}),
        fixed={"name": _NAME},
        # Choices that do not hold the value are a refusal of the value, which names it "scale".
        aliases={"value": ("scale",), "choices": ("scale",)},
    ),
    Case(
        "workbench.validation.check_flag",
        lambda: (("causal", True), {}),
        fixed={"name": _NAME},
        aliases={"value": ("causal",)},
    ),
    Case(
        "workbench.backend.check_view_size",
        lambda: (("points", np.broadcast_to(np.zeros(2), (4, 2))), {}),
        fixed={"name": _NAME},
        aliases={"x": ("points",)},
    ),
    Case(
        "workbench.validation.check_finite",
        lambda: (("K", np.array([1.0, 2.0, 3.0])), {}),
        fixed={"name": _NAME},
        aliases={"x": ("K",)},
    ),
    Case(
        "workbench.validation.check_finite_result",
        lambda: (("rate", 2.0), {"beta": 1.0}),
        fixed={"what": "a description used in messages only"},
        aliases={"value": ("rate",)},
    ),
    Case(
        "workbench.validation.check_finite_output",
        lambda: (("y", np.array([1.0, 4.0])), {"f": np.array([1.0, 2.0])}),
        fixed={"what": "a description used in messages only"},
        # A NaN or infinite x is the refusal under test: its message names the result by its description "y".
        aliases={"x": ("y",)},
    ),
    Case(
        "workbench.validation.check_in_range",
        lambda: (("beta", 0.5, 0.0, 1.0), {"low_inclusive": True, "high_inclusive": False}),
        fixed={"name": _NAME},
        aliases={"value": ("beta",)},
    ),
    Case(
        "workbench.validation.check_integer",
        lambda: (("m", 30, 1, 100), {}),
        fixed={"name": _NAME},
        aliases={"value": ("m",)},
    ),
    Case(
        "workbench.validation.check_markov_generator",
        lambda: (("Q", _GENERATOR), {"atol": 1e-10}),
        fixed={"name": _NAME},
        aliases={"x": ("Q",)},
    ),
    Case(
        "workbench.validation.check_matching",
        lambda: (("u", 3, "v", 3), {}),
        fixed={"name_a": _NAME, "name_b": _NAME},
        aliases={"size_a": ("u",), "size_b": ("v",)},
    ),
    Case(
        "workbench.memory.check_memory",
        lambda: (("a 10x10 float64 matrix", 800.0, "use a sparse kernel", 2.0**30), {}),
        fixed={"what": "a description used in messages only", "hint": "advice used in messages only"},
        aliases={"nbytes": ("needs",)},
    ),
    Case(
        "workbench.validation.check_nonnegative",
        lambda: (("K", np.array([[1.0, 0.5], [0.0, 2.0]])), {}),
        fixed={"name": _NAME},
        aliases={"x": ("K",)},
    ),
    Case(
        "workbench.validation.check_row_stochastic",
        lambda: (("P", _STOCHASTIC), {"atol": 1e-10}),
        fixed={"name": _NAME},
        aliases={"x": ("P",)},
    ),
    Case(
        "workbench.validation.check_square",
        lambda: (("A", np.eye(3)), {}),
        fixed={"name": _NAME},
        aliases={"x": ("A",)},
    ),
    Case(
        "workbench.validation.check_symmetric",
        lambda: (("K", np.array([[2.0, 1.0], [1.0, 3.0]])), {"rtol": 1e-12}),
        fixed={"name": _NAME},
        aliases={"x": ("K",)},
    ),
    Case("workbench.validation.is_sparse", lambda: ((scipy.sparse.eye(3),), {})),
    # A converter, like to_numpy: NaN in, NaN out is the correct conversion (the check that follows refuses it).
    Case("workbench.validation.as_scalar", lambda: ((np.array(4.0),), {}), finite=False),
    Case("workbench.memory.memory_limit", lambda: (("1GiB",), {})),
    Case("workbench.memory.parse_size", lambda: (("--max-memory", "4GiB"), {}), fixed={"name": _NAME}),
    Case("workbench.validation.shape_of", lambda: ((np.zeros((2, 3)),), {"name": "x"}), fixed={"name": _NAME}),
    # --- workbench.rates -----------------------------------------------------------------------------
    Case("workbench.rates.fit_rate", lambda: (([0.1, 0.01, 0.001], [3e-2, 3e-4, 3e-6]), {})),
]

#: Public callables without a case, each with the reason.
EXEMPT = {
    "workbench.backend.available_backends": "takes no arguments: nothing to fuzz",
    "workbench.memory.memory_budget": "takes no arguments: nothing to fuzz",
    "workbench.memory.available_memory": "takes no arguments: nothing to fuzz",
    "workbench.backend.namespace": (
        "takes only *arrays and **named (the harness fuzzes no variadic parameter); every array case of "
        "the suites reaches it through the function that calls it"
    ),
}


@pytest.mark.parametrize(
    "package", ["workbench.backend", "workbench.validation", "workbench.memory", "workbench.rates"]
)
def test_every_public_callable_has_a_case(package):
    covered = {case.function for case in CASES} | set(EXEMPT)
    assert public_callables(package) - covered == set()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fuzz(case):
    run(case)


# ---- huge entries: finite inputs whose results leave the double range (issue 17) --------------------------


def test_check_finite_output_names_each_input_with_its_size():
    from workbench.validation import check_finite_output

    f = np.array([1.0, 1e300])
    ok = f[:1] ** 2
    assert check_finite_output("f**2", ok, f=f[:1]) is ok  # a finite result is handed back as it is
    with (
        np.errstate(over="ignore"),
        pytest.raises(
            ValueError,
            match=r"^f\*\*2 overflows float64 \(1 non-finite entry, first at index \(1,\)\) for "
            r"f \(max \|entry\| 1e\+300\), beta = 0\.5; use smaller inputs$",
        ),
    ):
        check_finite_output("f**2", f**2, f=f, beta=0.5)


def test_like_refuses_an_entry_beyond_the_reference_dtype():
    from workbench.backend import like

    with pytest.raises(ValueError, match=r"^x has entries beyond the range of float32 \(largest \|x\| = 1e\+300"):
        like(np.array([1.0, 1e300]), np.zeros(1, dtype=np.float32))
    # NaN and inf are copied as they are (the converter is faithful); only a finite entry turned inf is refused.
    assert np.isinf(like(np.array([np.inf]), np.zeros(1, dtype=np.float32))).all()


def test_matrix_exp_refuses_an_exponential_it_cannot_represent():
    from workbench.backend import matrix_exp

    # A rotation by 1e300 radians: finite in exact arithmetic, but scaling and squaring returns NaN.
    with pytest.raises(ValueError, match=r"^matrix_exp\(matrix\) is not finite in float64 for matrix with largest"):
        matrix_exp(np.array([[0.0, 1e300], [-1e300, 0.0]]))
    with pytest.raises(ValueError, match=r"largest \|entry\| 1e\+03: the exponential overflows"):
        matrix_exp(np.array([[1000.0]]))  # e^1000 > 1.8e308


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [(0, 1), (1, 1)], ids=["off-diagonal", "diagonal"])
def test_generators_and_stochastic_matrices_with_non_finite_entries_are_refused(bad, where):
    # Issue 40: check_markov_generator accepted NaN and inf matrices (NaN compares false with every bound, so
    # neither the rate nor the row-sum test fired); check_row_stochastic accepted a NaN on the diagonal too.
    from workbench.validation import check_markov_generator, check_row_stochastic

    for check, name, valid in ((check_markov_generator, "Q", _GENERATOR), (check_row_stochastic, "P", _STOCHASTIC)):
        matrix = valid.copy()
        matrix[where] = bad
        with pytest.raises(
            ValueError,
            match=rf"^{name} must be finite, got 1 non-finite entry \(first at index \({where[0]}, {where[1]}\)\)$",
        ):
            check(name, matrix)
        with pytest.raises(ValueError, match=rf"^{name} must be finite"):
            check(name, scipy.sparse.csr_array(matrix))
