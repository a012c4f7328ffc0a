"""``bch-fusion`` — the roadmap's fusion of a product of exponentials into one exponential (numpy).

Run by ``workbench bench bch-fusion``: the BCH/Magnus fusion error against commutator norms and its fitted
slopes, a ``safe`` flag, and the latency of a fused residual stack.

Modules
-------
_fusion             -- product_of_exponentials, fuse, commutator_summary, fusion_slopes, fusion_table
_stack              -- ResidualStack and residual_stack: a residual stack fused by each method; its table
"""

from __future__ import annotations

from workbench.lazy import lazy_exports

_MODULES = {
    "workbench.experiments.bch_fusion._fusion": (
        "MAX_ORDER",
        "check_orders",
        "commutator_summary",
        "fuse",
        "fusion_slopes",
        "fusion_table",
        "product_of_exponentials",
        "square_matrices",
    ),
    "workbench.experiments.bch_fusion._stack": (
        "FUSION_METHODS",
        "ResidualStack",
        "magnus_stack_table",
        "residual_stack",
    ),
}
__all__, __getattr__, __dir__ = lazy_exports(__name__, _MODULES, globals())
