"""Fusing a product of exponentials into one by BCH/Magnus (numpy).

Modules
-------
_fusion
_stack
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
