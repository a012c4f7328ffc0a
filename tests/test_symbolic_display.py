"""Steps that show their general statement and reason: the Step/claim API, notebook rendering, general-N proofs."""

import pytest
import sympy as sp

from workbench.catalogue import discover
from workbench.symbolic import Derivation, Step, claim, derivation, describe_instance


def _identity(name):
    (found,) = [i for i in discover() if i.name == name]
    return found


def test_claim_carries_statement_reason_and_generality():
    x = sp.Symbol("x")
    step = claim(
        "Pythagoras", sp.sin(x) ** 2 + sp.cos(x) ** 2, 1, statement=r"\sin^2x + \cos^2x = 1", because="unit circle"
    )
    assert step.holds is True and step.statement == r"\sin^2x + \cos^2x = 1" and step.because == "unit circle"
    assert step.general is False
    plain = Step("a definition", x)  # the old positional form still works
    assert (plain.holds, plain.statement, plain.because, plain.general) == (None, None, None, False)


def test_repr_latex_shows_mark_text_statement_and_reason():
    k = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"K{min(i, j)}{max(i, j)}"))
    step = claim("K is symmetric", k, k.T, statement=r"\mathsf K = \mathsf K^\top", because="built from min/max")
    latex = step._repr_latex_()
    assert latex.startswith(r"$\checkmark$ K is symmetric")
    assert r"$$\mathsf K = \mathsf K^\top$$" in latex and "because: built from min/max" in latex
    assert "checked on the symbolic instance (3×3 matrices)" in latex
    wrong = claim("1 + 1 = 3", sp.Integer(1) + 1, 3, statement="1 + 1 = 3", because="it does not")
    assert wrong.holds is False and wrong._repr_latex_().startswith(r"$\times$ 1 + 1 = 3")
    stated = Step("a definition", k, statement=r"\mathsf K", because="the kernel")
    assert stated._repr_latex_().startswith(r"$\cdot$ a definition") and "checked on" not in stated._repr_latex_()


def test_a_step_without_statement_renders_its_expression():
    x = sp.Symbol("x")
    assert "$$x^{2}$$" in Step("square", x**2)._repr_latex_()


def test_describe_instance_reads_the_expression():
    u = sp.Matrix(sp.symbols("u0:3"))
    assert describe_instance(claim("vectors", u, u)) == "checked on the symbolic instance (3-vectors)"
    a, b = sp.symbols("A B", commutative=False)
    step = claim("noncommuting", a * b, a * b)
    assert describe_instance(step) == "checked on the symbolic instance (noncommuting symbols, any associative algebra)"
    assert describe_instance(claim("general", a * b, a * b, general=True)) == "proved for general N"


def test_derivation_is_a_list_that_renders_every_step():
    x = sp.Symbol("x")
    steps = [Step("define x", x, statement="x"), claim("x = x", x, x, statement="x = x", because="reflexivity")]
    shown = derivation(steps, title="toy")
    assert isinstance(shown, list) and list(shown) == steps and shown.holds
    latex, markdown = shown._repr_latex_(), shown._repr_markdown_()
    assert latex.startswith(r"\textbf{toy}") and r"1. $\cdot$ define x" in latex and r"2. $\checkmark$ x = x" in latex
    assert "**toy**" in markdown and "2. ✓ x = x" in markdown and "*because:* reflexivity" in markdown
    assert derivation(shown) is shown


def test_identity_derive_returns_a_derivation_of_steps():
    identity = _identity("markov.dirichlet_form.gauss")
    steps = identity.derive()
    assert isinstance(steps, Derivation) and isinstance(steps, list) and steps.title == identity.name
    assert all(isinstance(s, Step) for s in steps)
    assert "π is stationary" in steps._repr_latex_()


def test_matrix_symbol_claims_are_decided_not_asserted():
    m = sp.Symbol("m", integer=True, positive=True)
    b = sp.MatrixSymbol("B", m, m)
    assert claim("skew", (b - b.T).T + (b - b.T), sp.ZeroMatrix(m, m), general=True).holds is True
    assert claim("not skew", (b + b.T).T + (b + b.T), sp.ZeroMatrix(m, m), general=True).holds is False
    q, k = sp.MatrixSymbol("Q", m, m), sp.MatrixSymbol("K", m, m)
    polarised = ((q + k) * (q + k).T - (q - k) * (q - k).T) / 4
    assert claim("polarisation", polarised, (q * k.T + k * q.T) / 2).holds is True
    assert claim("wrong polarisation", polarised, q * k.T).holds is False
    eye, zero = sp.Identity(m), sp.ZeroMatrix(m, m)
    j = sp.BlockMatrix([[zero, eye], [-eye, zero]])
    s = sp.BlockMatrix([[b + b.T, q], [q.T, k + k.T]])
    assert claim("Hamiltonian", (j * s).T * j + j * (j * s), sp.ZeroMatrix(2 * m, 2 * m)).holds is True
    assert claim("not Hamiltonian", (j * s).T * j - j * (j * s), sp.ZeroMatrix(2 * m, 2 * m)).holds is False


def test_indexed_sums_over_a_symbolic_range_are_decided():
    n = sp.Symbol("n", integer=True, positive=True)
    i, j, k = sp.symbols("i j k", integer=True)
    x, beta = sp.IndexedBase("x"), sp.Symbol("beta", positive=True)

    def kernel(a, b, shift=0):
        return sp.exp(-beta * (x[a] - x[b] - shift) ** 2)

    def balance(shift):
        degree = [sp.Sum(kernel(a, k, shift), (k, 0, n - 1)) for a in (i, j)]
        return degree[0] * kernel(i, j, shift) / degree[0], degree[1] * kernel(j, i, shift) / degree[1]

    assert claim("symmetric kernel", *balance(0), general=True).holds is True
    assert claim("shifted kernel", *balance(1), general=True).holds is False


ALL_NAMES = sorted(identity.name for identity in discover())


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_catalogue_step_states_itself_and_says_why(name):
    steps = _identity(name).derive()
    missing = [step.text[:60] for step in steps if not step.statement or not step.because]
    assert not missing, missing
    assert all(step.holds is True for step in steps if step.general)


@pytest.mark.parametrize(
    ("name", "at_least"),
    [
        ("markov.dirichlet_form.gauss", 4),
        ("markov.doob.reversible", 2),
        ("expmv.rank_one.closed_form", 2),
        ("structure.exp.hamiltonian_to_symplectic", 1),
        ("continuum.softmax.small_beta", 4),
        ("attention.family.corners", 2),
    ],
)
def test_general_proofs_are_marked_and_hold(name, at_least):
    general = [step for step in _identity(name).derive() if step.general]
    assert len(general) >= at_least and all(step.holds is True for step in general)
    assert all(describe_instance(step) == "proved for general N" for step in general)
