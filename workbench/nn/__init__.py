"""Torch layers built from generators: the exponential map as a design pattern, with its guarantees.

Exponentials of a constrained generator inherit an exact invariant: a Markov generator gives a stochastic
matrix, a skew one an orthogonal matrix, a symmetric one an SPD matrix, a Hamiltonian one a symplectic
matrix (lie-exponential-roadmap, seed).  Each layer here is a small ``torch.nn.Module`` whose guarantee is
a catalogue identity (area ``nn``).

ExpMarkovAttention       -- e^{tQ}V for a learned banded Markov generator Q (uniformization, learnable t)
HeatKernelAttention      -- e^{-tL}V for a learned graph Laplacian, several t per head
uniformized_action       -- differentiable e^{tQ}X in torch ops (the engine's Poisson cut-off)
BandedGenerator, banded_generator, symmetric_banded_generator, multiscale_offsets -- banded generators
GivensFlowMixer          -- exactly orthogonal token or feature mixing by products of plane rotations
givens_product, givens_generator, brick_planes, random_planes -- the rotations and their generator
SPDMap                   -- exp(S), S symmetric, with a certified Lipschitz cap (Gershgorin bound)
SymplecticMap            -- exp(JH), H symmetric: preserves the symplectic form J
prefix_transports, transport, transported_scores, banded_transported_scores, gauge_change -- gauge transport
multiscale_generator, double_exponential, conjugated_generator -- the gauge transformer's mixing step
twist_generator, twisted_generator, bch_conjugation_error -- the BCH twist of non-commuting frames
curvature, holonomy      -- discrete curvature log(e^{A_{i+1}}e^{A_i}e^{-A_{i+1}}e^{-A_i}) and loop transports
principal_log, classify_map, log_lens -- the log lens: logarithms of learned maps, with reasons where none
generator_spectrum, commutator_norms, adjacent_commutators, plot_commutator_heatmap -- spectra, commutators
cartan_split, iwasawa_split, jordan_chevalley -- skew + symmetric, skew + diagonal + nilpotent, D + N

Names load on first use (PEP 562), so the numpy-only log lens works without torch; the layers need torch.
"""

from __future__ import annotations

import importlib

_MODULES = {
    "workbench.nn._exp_markov": (
        "BandedGenerator",
        "ExpMarkovAttention",
        "HeatKernelAttention",
        "banded_generator",
        "multiscale_offsets",
        "symmetric_banded_generator",
        "uniformized_action",
    ),
    "workbench.nn._flows": (
        "GivensFlowMixer",
        "GivensProduct",
        "SPDMap",
        "SymplecticMap",
        "brick_planes",
        "gershgorin_bound",
        "givens_generator",
        "givens_product",
        "random_planes",
        "symplectic_form",
    ),
    "workbench.nn._gauge": (
        "banded_transported_scores",
        "bch_conjugation_error",
        "conjugated_generator",
        "curvature",
        "double_exponential",
        "gauge_change",
        "holonomy",
        "multiscale_generator",
        "prefix_transports",
        "transport",
        "transported_scores",
        "twist_generator",
        "twisted_generator",
    ),
    "workbench.nn._log_lens": (
        "CartanSplit",
        "GeneratorSpectrum",
        "IwasawaSplit",
        "JordanChevalleySplit",
        "LogLensReport",
        "adjacent_commutators",
        "cartan_split",
        "classify_map",
        "commutator_norms",
        "generator_spectrum",
        "iwasawa_split",
        "jordan_chevalley",
        "log_lens",
        "plot_commutator_heatmap",
        "principal_log",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'workbench.nn' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
