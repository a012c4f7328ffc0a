"""Attention Geometry Workbench: the operator geometry of attention, derived and checked.

Layers (independent unless stated): ``markov`` (kernels, Markov operators, Dirichlet forms),
``expmv`` (exp(tA)·B), ``continuum`` (symbolic limits and expansions), ``lie`` (exact Lie series);
``catalogue`` discovers the identities that tie them to the seed papers, and ``cli`` runs them.

catalogue  -- Identity records, discovery (entry points ``workbench.derivations``), check runner
markov     -- gauss_kernel, markov_operator, softmax_operator, markov_semigroup, reversible_stationary_law,
              dirichlet_form
expmv      -- phi1, expm_rank1, expmv_rank1
continuum  -- small-β softmax, kernel-moment expansions, Cauchy–Green, Riemannian geometry in coordinates
attention  -- heads as Markov operators, bond/link split, DMAP/DMTN/ATAP/ATTN, connection walk, MiniLM
lie        -- exact free Lie algebra: bases, bch, symmetric_bch, bch_many, zassenhaus, hausdorff, magnus

torch is never imported here; numeric functions accept numpy arrays or torch tensors per call.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
