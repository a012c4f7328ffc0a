r"""Attention as an operator: the bond/link split, the four operators, the connection walk, diagnostics.

Source: Attention Geometry §4, §7, §9–§10, Table 1 and Table 4 (book/reference.md §A.7, §A.10) and
"From Self-Attention to Connection Laplacian" §3–§6 (book/reference.md §B.2–§B.6).  Each identity is
derived symbolically on a small case (three tokens with symbolic scores; two tokens with symbolic 2×2
transports for the connection walk) and measured numerically on random heads through
:mod:`workbench.attention`, on numpy and on torch.  One module per subject, each ending with its own list:

split        -- attention.split.distance_form, attention.split.doob_tilt, attention.link.exact_iff_reversible
family       -- attention.family.corners
connection   -- attention.connection.mha_step, .energy, .holonomy
diagnostics  -- attention.diagnostics.uniform_and_shift
grassmann    -- attention.grassmann.gauge_invariance, .dimension
"""

from . import connection, diagnostics, family, grassmann, split

IDENTITIES = [
    *split.IDENTITIES,
    *family.IDENTITIES,
    *connection.IDENTITIES,
    *diagnostics.IDENTITIES,
    *grassmann.IDENTITIES,
]
