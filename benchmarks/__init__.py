"""Side-by-side benchmarks, registered under the entry-point group ``workbench.benchmarks``.

Each module exposes ``run(**options) -> dict`` returning ``{"title", "columns", "rows", "notes"}``;
``workbench bench NAME`` prints it as a table (or ``--json``).  Results are recorded in RESULTS.md.
"""
