"""Attention Geometry Workbench: the operator geometry of attention, derived and checked.

The library is layered; each layer imports only the layers below it (``tests/test_architecture.py``
holds the table and fails on any import that crosses it, on any import circle and on any import of
another module's private name).  Bottom to top:

base         -- backend (numpy/torch namespace per call, to_backend, matrix_exp, unit_roundoff),
                validation (boundary checks), memory (the memory budget, check_memory), rates (fit_rate),
                symbolic (Step, claim), lazy (PEP 562 exports)
lie          -- exact free Lie algebra: words, Lyndon/Hall/right-normed bases, BCH family, Zassenhaus,
                Hausdorff, Magnus                                                     (uses base)
expmv        -- exp(tA)·B: Taylor, Krylov, Chebyshev, uniformization, banded/Kronecker/rank-1 (uses base)
markov       -- kernels, samplers, Markov operators, Doob transforms, Dirichlet forms, Γ/Γ₂, curvature,
                cycles, Beurling–Deny                                                 (uses base)
continuum    -- symbolic continuum limits of the discrete operators                   (uses markov)
lens         -- the log lens: logarithms and Lie-group splits of learned maps (numpy) (uses base)
attention    -- heads as Markov operators, bond/link split, DMAP/DMTN/ATAP/ATTN, diagnostics, the
                connection walk, pretrained-model loaders                             (uses markov, expmv)
nn           -- torch layers from generators (imported only with torch)   (uses lie, expmv, attention, lens)
experiments  -- reproducible experiments                                               (uses all above)
catalogue    -- Identity records, discovery (entry points ``workbench.derivations``), check runner (uses base)
cli          -- the ``workbench`` command                                              (uses all)

torch is never imported here; numeric functions accept numpy arrays or torch tensors per call.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
