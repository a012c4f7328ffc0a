"""Side-by-side benchmarks, registered under the entry-point group ``workbench.benchmarks``.

Each module exposes ``run(**options) -> dict`` returning ``{"title", "columns", "rows", "notes"}``;
``workbench bench NAME`` prints it as a table (or ``--json``).  Results are recorded in RESULTS.md.

Each module also declares ``OPTIONS``, the ``run`` keywords the command line may pass (``("max_degree",)``
for ``bch``; ``()`` for a benchmark without options).  ``workbench bench`` refuses an option the named
benchmark does not declare, and ``run`` checks the values it is given before any work starts.
"""
