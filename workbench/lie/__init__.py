"""Exact free Lie algebra: words, the Lyndon, classical Hall and Chibrikov right-normed bases, and Lie series.

Coefficients are exact fractions throughout (never floats); series evaluate on numpy or torch
matrices.  Generators are ``A < B < C < …``; ``[A,B] = AB − BA``.

Work that grows with a degree is estimated before it starts (Witt counts times measured per-step costs)
and refused past its budget with a ``ValueError`` naming the parameter, the ceiling and the estimate.  The
BCH family runs on a compiled kernel and is limited by memory: the ceiling is the largest degree whose
peak-memory estimate fits the memory budget (``bch`` 24 in 0.14 GB and about 26 s, at most 26); the other
series by 10 s of estimated work (``zassenhaus`` through 21, ``magnus`` order 24 with two terms and 17 with
any number, Hall coordinates through 15, Chibrikov through 16).
Integer parameters accept Python ints, numpy integer scalars and 0-d integer arrays (never bools).

Words and Lyndon words
----------------------
format_word             -- a word with its letters named, (0, 0, 1) -> 'AAB'
is_lyndon               -- whether a word is strictly smaller than each of its proper rotations
lyndon_factorization    -- Chen–Fox–Lyndon factorisation w = l₁ l₂ ⋯ l_k, l₁ ≥ ⋯ ≥ l_k (Duval)
lyndon_words            -- Lyndon words of a given length (Duval), in lexicographic order
standard_factorization  -- w = uv with v the longest proper Lyndon suffix
witt_dimension          -- dim of the degree-n part of the free Lie algebra (Witt's formula)

Free associative algebra and bracket trees
------------------------------------------
Tree                    -- a bracket tree: a letter index, or a pair (left, right) meaning [left, right]
bracket                 -- commutator [x, y] = xy − yx of two elements {word: Fraction}
expand_tree             -- a bracket tree expanded into words with integer coefficients
tree_degree             -- number of letters in a bracket tree
tree_to_string          -- a bracket tree rendered '[A,[A,B]]' (the JSON contract's form)

Bases
-----
BASES                   -- the basis names: 'lyndon', 'hall', 'chibrikov', 'right-normed' (= 'chibrikov')
lyndon_tree             -- the standard bracketing P_w of a Lyndon word
basis_trees             -- basis elements ('lyndon', 'hall', 'chibrikov') as bracket trees
lyndon_coordinates      -- decompose a Lie polynomial (given by its words) in the Lyndon basis
change_of_basis         -- Lyndon coordinates -> coordinates in another basis, exactly

Lie series
----------
LieSeries               -- a truncated series: terms in any basis, text/LaTeX/JSON/sympy, evaluation
SERIES                  -- the named series of ``workbench derive``: name -> function of the degree
log_of_exponentials     -- log of any product of exponentials of scaled generators
bch                     -- log(e^A e^B)
bch_cost                -- what bch / bch_many will cost (CPU seconds, peak bytes), before any work
Cost                    -- such an estimate: seconds, bytes
write_series_json       -- a computed series as the JSON contract, written term by term
write_bch_json          -- bch / bch_many as that JSON, written while the engine computes it
bch_even_degree         -- the even-degree BCH terms from the lower ones, by relabelling (no solve)
symmetric_bch           -- log(e^{A/2} e^B e^{A/2})
bch_many                -- log(e^{A_1} ⋯ e^{A_k})
commutator_log          -- log(e^A e^B e^{-A} e^{-B})
hausdorff               -- e^{-A} B e^{A} (form '-A') or e^{A} B e^{-A} (form '+A')
zassenhaus              -- e^{A+B} = e^A e^B e^{C_2} e^{C_3} ⋯
magnus                  -- exact Ω(h) for A(t) = Σ t^j X_j, a Lie series with powers of h
magnus_omega            -- numeric Ω(h) on matrices, warning outside ∫‖A‖ < π
magnus_integrals        -- Ω_n for abstract A(t) as sympy nested integrals over the simplex
integrate_noncommutative -- evaluate those integrals once a polynomial A(t) is substituted
"""

from workbench.lazy import lazy_exports

# Each name loads its module on first use (PEP 562), so `from workbench.lie import bch` imports only what the
# BCH engine needs: no numpy, scipy or sympy on the compiled kernel's path.
_MODULES = {
    "workbench.lie._bases": ("BASES", "basis_trees", "change_of_basis", "lyndon_coordinates", "lyndon_tree"),
    "workbench.lie._bch": (
        "Cost",
        "bch",
        "bch_cost",
        "bch_many",
        "commutator_log",
        "hausdorff",
        "log_of_exponentials",
        "symmetric_bch",
    ),
    "workbench.lie._fast": ("bch_even_degree",),
    "workbench.lie._free": ("Tree", "bracket", "expand_tree", "tree_degree", "tree_to_string"),
    "workbench.lie._magnus": ("integrate_noncommutative", "magnus", "magnus_integrals", "magnus_omega"),
    "workbench.lie._named": ("SERIES",),
    "workbench.lie._series": ("LieSeries",),
    "workbench.lie._stream": ("write_bch_json", "write_series_json"),
    "workbench.lie._words": (
        "format_word",
        "is_lyndon",
        "lyndon_factorization",
        "lyndon_words",
        "standard_factorization",
        "witt_dimension",
    ),
    "workbench.lie._zassenhaus": ("zassenhaus",),
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
