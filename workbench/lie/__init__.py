"""Exact free Lie algebra: words, Lyndon/Hall/right-normed bases, and Lie series.

Coefficients are exact fractions throughout (never floats); series evaluate on numpy or torch
matrices.  Generators are ``A < B < C < …``; ``[A,B] = AB − BA``.

lyndon_words            -- Lyndon words of a given length (Duval), in lexicographic order
standard_factorization  -- w = uv with v the longest proper Lyndon suffix
witt_dimension          -- dim of the degree-n part of the free Lie algebra (Witt's formula)
basis_trees             -- basis elements ('lyndon', 'hall', 'right-normed') as bracket trees
lyndon_coordinates      -- decompose a Lie polynomial (given by its words) in the Lyndon basis
change_of_basis         -- Lyndon coordinates -> coordinates in another basis, exactly
LieSeries               -- a truncated series: terms in any basis, text/LaTeX/JSON/sympy, evaluation
bch                     -- log(e^A e^B)
symmetric_bch           -- log(e^{A/2} e^B e^{A/2})
bch_many                -- log(e^{A_1} ⋯ e^{A_k})
commutator_log          -- log(e^A e^B e^{-A} e^{-B})
zassenhaus              -- e^{A+B} = e^A e^B e^{C_2} e^{C_3} ⋯
hausdorff               -- e^{-A} B e^{A} (form '-A') or e^{A} B e^{-A} (form '+A')
log_of_exponentials     -- log of any product of exponentials of scaled generators
magnus                  -- exact Ω(h) for A(t) = Σ t^j X_j, a Lie series with powers of h
magnus_omega            -- numeric Ω(h) on matrices, warning outside ∫‖A‖ < π
magnus_integrals        -- Ω_n for abstract A(t) as sympy nested integrals over the simplex
integrate_noncommutative -- evaluate those integrals once a polynomial A(t) is substituted
"""

from workbench.lie._bases import (
    BASES,
    basis_trees,
    change_of_basis,
    expand_tree,
    lyndon_coordinates,
    lyndon_tree,
    tree_to_string,
)
from workbench.lie._magnus import integrate_noncommutative, magnus, magnus_integrals, magnus_omega
from workbench.lie._series import (
    SERIES,
    LieSeries,
    bch,
    bch_many,
    commutator_log,
    hausdorff,
    log_of_exponentials,
    symmetric_bch,
    zassenhaus,
)
from workbench.lie._words import (
    format_word,
    is_lyndon,
    lyndon_factorization,
    lyndon_words,
    standard_factorization,
    witt_dimension,
)

__all__ = [
    "BASES",
    "SERIES",
    "LieSeries",
    "basis_trees",
    "bch",
    "bch_many",
    "change_of_basis",
    "commutator_log",
    "expand_tree",
    "format_word",
    "hausdorff",
    "integrate_noncommutative",
    "is_lyndon",
    "log_of_exponentials",
    "lyndon_coordinates",
    "lyndon_factorization",
    "lyndon_tree",
    "lyndon_words",
    "magnus",
    "magnus_integrals",
    "magnus_omega",
    "standard_factorization",
    "symmetric_bch",
    "tree_to_string",
    "witt_dimension",
    "zassenhaus",
]
