r"""What each layer's weights say on their own, read once per model: the heads' forms and the transport form.

A diagnosis reads some things from the attention of a text and some from the weights alone.  The second kind
does not change from one text to the next, and at the width of a real model it is most of the work (GPT-NeoX at
Pythia-160M's shape: 4.8 of 5.4 s per text before this module):

- each head's bond :math:`M_S = \tfrac12(W_QW_K^\top + W_KW_Q^\top)` (spectrum, inertia, negative share) and its
  skew ratio :math:`\rho_{\mathrm{skew}}`, from the augmented query and key maps (a bias is one more row);
- :math:`\delta_{\mathrm{orth}}` of each head's value–output map :math:`M_h = W_V^hW_O^h`;
- the layer's :class:`~workbench.attention.TransportForm` (the transport Gram as a quadratic form in the head
  weights).

:func:`layer_forms` reads them on first use and keeps them with the model object (weights do not change after
loading, as for :func:`~workbench.models.head_geometry`).  A transport form is kept only while the forms of the
model stay under :data:`KEPT_BYTES`; past it (a 7B model's forms take gigabytes) it is read again for each text.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from workbench.attention import (
    BondReading,
    TransportForm,
    bond_reading,
    factored_orthogonality_deviation,
    score_skew_ratio,
    transport_form,
)
from workbench.models._transformer import Transformer

__all__ = []  # package-internal: the readings of workbench.models.diagnose are the public face

BOND_RTOL = 1e-10  # the default of bond_inertia: |λ| ≤ 1e-10·max|λ| counts as zero

#: Bytes of transport forms kept per model (beyond them a layer's form is read again for each text).
KEPT_BYTES = 512 * 2**20


@dataclass(frozen=True)
class LayerForms:
    """The readings of one layer that depend on its weights alone."""

    bonds: tuple[BondReading, ...]  # per head, of the augmented maps (read, used only where the scores are bilinear)
    skew: tuple[float, ...]  # ρ_skew per head, likewise
    delta_orth: np.ndarray  # δ_orth of each head's M_h = W_V^h W_O^h, shape [H]
    transport: TransportForm | None  # None where it is not kept (read again per text: transport_form_of)


def augmented(weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The map with its bias as one more row: q_i = x_i W + b = (x_i, 1) (W; b), an exact bilinear form."""
    return weight if bias is None else np.vstack([weight, bias[None, :]])


def layer_forms(model: Transformer, layer: int) -> LayerForms:
    """The :class:`LayerForms` of layer ``layer``, read once per model."""
    kept = _CACHE.setdefault(model, {})
    if layer not in kept:
        kept[layer] = _read(model, layer, _budget_left(model, kept))
    return kept[layer]


def transport_form_of(model: Transformer, layer: int) -> TransportForm:
    """The layer's transport form: the kept one, or read now."""
    forms = layer_forms(model, layer)
    if forms.transport is not None:
        return forms.transport
    mha = model.layers[layer].attention
    return transport_form(mha.W_V, mha.W_O)


#: Forms already read, per model object.
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _form_bytes(model: Transformer) -> int:
    # the form keeps the stacked W_O (d × Hr), the Gram of the stacked W_V (Hr × Hr) and a P × P table
    mha = model.layers[0].attention
    H, d, r = mha.W_V.shape
    P = H * (H + 1) // 2
    return 8 * (d * H * r + (H * r) ** 2 + P * P + 2 * P)


def _budget_left(model: Transformer, kept: dict) -> bool:
    held = sum(1 for forms in kept.values() if forms.transport is not None)
    return (held + 1) * _form_bytes(model) <= KEPT_BYTES


def _read(model: Transformer, layer: int, keep_transport: bool) -> LayerForms:
    mha = model.layers[layer].attention
    pick = lambda b, h: None if b is None else b[h]  # noqa: E731
    pairs = [
        (augmented(mha.W_Q[h], pick(mha.b_Q, h)), augmented(mha.W_K[h], pick(mha.b_K, h)))
        for h in range(mha.W_Q.shape[0])
    ]
    bonds = tuple(bond_reading(W_Q, W_K, BOND_RTOL) for W_Q, W_K in pairs)
    skew = tuple(float(score_skew_ratio(W_Q @ W_K.T)) for W_Q, W_K in pairs)
    delta = np.asarray(factored_orthogonality_deviation(mha.W_V, mha.W_O), dtype=np.float64)
    transport = transport_form(mha.W_V, mha.W_O) if keep_transport else None
    return LayerForms(bonds, skew, delta, transport)
