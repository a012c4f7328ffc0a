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

try:  # written by the build from the git tag (setuptools-scm)
    from workbench._version import __version__
except ImportError:  # a source tree on sys.path that was never built
    __version__ = "0+unknown"
# The distribution that installs this package.  The import name ``workbench`` is shared with an unrelated project
# on PyPI; the command line checks this marker and says so in one line when another distribution's
# ``__init__`` has been installed over this one (``workbench.cli.foreign_package``).
__distribution__ = "attention-workbench"

__all__ = ["__distribution__", "__version__"]
