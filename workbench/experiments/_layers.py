r"""The attention layer of the experiments: :class:`workbench.nn.OperatorAttention`, under its experiments name.

The Swiss SiT scan (Attention Geometry §9) and the induction transformers (§11) use multi-head
self-attention with the scores of one of the four operators.  The layer is a torch layer of the library and
lives in :mod:`workbench.nn`; this module keeps the name ``workbench.experiments.OperatorAttention`` for the
experiments and their users.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §7 (the four operators), §9 and §11 (the experiments).
"""

from __future__ import annotations

from workbench.nn import OperatorAttention

__all__ = ["OperatorAttention"]
