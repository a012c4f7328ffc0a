r"""An identity of your own, as a template: Kac's return-time formula :math:`\mathbb E_i[\tau_i^+] = 1/\pi_i`.

Copy this file, change the three parts (the statement, ``_derive``, ``_verify``) and run it without packaging::

    workbench check --path kac_return_time.py          # this file's identities with the catalogue's
    workbench check markov.kac --path kac_return_time.py
    workbench derive markov.kac.return_time --path kac_return_time.py

A folder works too (``--path my_identities/``: every ``.py`` file in it that defines ``IDENTITIES``; files whose
name starts with ``_`` are helpers).  To ship identities with a package instead, register the module in its
``pyproject.toml`` under ``[project.entry-points."workbench.derivations"]``.

The mathematics: for an irreducible Markov chain on finitely many states with transition matrix :math:`P` and
stationary law :math:`\pi`, the mean return time to a state is the inverse of its stationary mass (Norris,
*Markov Chains*, 1997, Theorem 1.7.7).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from workbench.catalogue import Identity, Step, Verification, by_scale, claim


def _derive() -> list[Step]:
    """The symbolic steps, each decided by sympy: here the two-state chain, where everything is explicit."""
    a, b = sp.symbols("a b", positive=True)  # the two switching probabilities, in (0, 1]
    p = sp.Matrix([[1 - a, a], [b, 1 - b]])
    pi = sp.Matrix([[b, a]]) / (a + b)
    # Leaving 0 (probability a), the chain waits in 1 a geometric time of mean 1/b before it comes back.
    return_time = (1 - a) * 1 + a * (1 + 1 / b)
    return [
        Step(
            "the two-state chain",
            p,
            statement=r"\mathsf P = \begin{pmatrix}1-a & a\\ b & 1-b\end{pmatrix},\quad 0 < a, b \le 1",
            because="the smallest irreducible chain: every quantity has a closed form",
        ),
        claim(
            "π = (b, a)/(a + b) is stationary: πP = π",
            pi * p,
            pi,
            statement=r"\pi\mathsf P = \pi,\quad \pi = \tfrac{1}{a+b}(b,\ a)",
            because="the flow out of 0, π₀a, equals the flow into 0, π₁b",
        ),
        claim(
            "the mean return time to 0 is 1/π₀",
            sp.simplify(return_time),
            1 / pi[0],
            statement=r"\mathbb E_0[\tau_0^+] = (1-a)\cdot 1 + a\left(1 + \tfrac1b\right) = \frac{a+b}{b} = \frac{1}{\pi_0}",
            because="first step analysis: stay (one step) or leave and wait a geometric time of mean 1/b in state 1",
        ),
    ]


def _return_times(p: np.ndarray) -> np.ndarray:
    """Mean return times by first-step analysis: for each i, solve h = 1 + P₋ᵢ h on the other states."""
    n = len(p)
    times = np.empty(n)
    for i in range(n):
        rest = np.delete(np.arange(n), i)
        hitting = np.linalg.solve(np.eye(n - 1) - p[np.ix_(rest, rest)], np.ones(n - 1))
        times[i] = 1.0 + p[i, rest] @ hitting
    return times


def _verify(rng: np.random.Generator, scale: str, backend: str) -> Verification:
    """Oracle: the stationary law from the left eigenvector of P (eigenvalue 1), against the return times.

    Data come from ``rng`` (the runner seeds it per identity) at a size chosen by ``scale``; the residual is
    max_i |π_i E_i[τ_i⁺] − 1|, whose rounding error is a few ulps times the condition of the linear solves.
    """
    n = by_scale(scale, 12, 200)
    p = rng.random((n, n)) + 0.05  # every entry positive: irreducible and aperiodic
    p /= p.sum(axis=1, keepdims=True)
    values, vectors = np.linalg.eig(p.T)
    pi = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
    pi /= pi.sum()
    residual = float(np.max(np.abs(pi * _return_times(p) - 1.0)))
    return Verification.from_residual(residual, 1e-10, n=n)


IDENTITIES = [
    Identity(
        name="markov.kac.return_time",
        area="markov",
        statement=r"\mathbb E_i[\tau_i^+] = \frac{1}{\pi_i}\quad\text{for an irreducible finite chain with stationary law }\pi",
        source="Kac's lemma; Norris, Markov Chains (1997), Theorem 1.7.7",
        derive=_derive,
        verify=_verify,
        backends=("numpy",),  # the check is written in numpy; list "torch" too when verify converts with to_backend
    ),
]
