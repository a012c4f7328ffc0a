r"""One call that reads every head of a real model as an operator: the ``workbench diagnose`` report.

Per head (layer :math:`\ell`, head :math:`h`, on the input :math:`X^\ell` its attention reads: the layer input
of a post-LN encoder, the normed residual of a pre-LN decoder):

- mean row entropy :math:`\bar H` and the effective neighbour count :math:`e^{\bar H}` [RECON §A.10];
- the detailed-balance residual :math:`\varepsilon_{\mathrm{rev}}` of its Markov operator [RECON §A.10];
  undefined for a causal head (its walk is absorbed at the first token, so the residual is 0 for every
  causal head and says nothing);
- the score skew ratio :math:`\rho_{\mathrm{skew}} = \lVert\tilde M_A\rVert_F/\lVert\tilde M_S\rVert_F` of its
  bilinear form.  With query/key biases the scores are :math:`q_i\cdot k_j = \tilde x_i\tilde M\tilde x_j^\top`
  on augmented rows :math:`\tilde x = (x, 1)`, :math:`\tilde M = \tilde W_Q\tilde W_K^\top`,
  :math:`\tilde W = \binom{W}{b}`, so the split is exact with biases too.  A rotary head has one form per
  relative offset, :math:`\tilde M(j - i) = \tilde W_Q R_{j-i}\tilde W_K^\top`; its reading here is the form
  at offset 0, :math:`\tilde W_Q\tilde W_K^\top` (the content form, what the head compares before positions);
- the inertia of that bond :math:`\tilde M_S` (its definiteness: DMAP/DMTN need a definite bond), from the
  factors (:func:`~workbench.attention.bond_reading`);
- :math:`\delta_{\mathrm{orth}}` of its value-output map :math:`M_h = W_V^hW_O^h` [SEED Eq. (15)];
- previous-token and induction scores on a repeated random token sequence (:func:`circuit_scores`);
- the nearest of the three constrained corners DMAP, DMTN, ATAP, with its mean row total-variation
  distance, from the head's actual queries and keys (rotations included;
  :func:`~workbench.attention.token_corner_distances`); the head is called by that corner when the distance
  is at most 0.1, and ATTN otherwise (the rule of :func:`~workbench.attention.nearest_corner`).

Per layer: the entropy, both effective-neighbour conventions (the mean over heads of :math:`e^{\bar H_h}`,
which Attention Geometry Table 1 reports, and :math:`e^{\text{mean}\,\bar H_h}`, which is never larger by
Jensen's inequality), :math:`\varepsilon_{\mathrm{rev}}` of the effective walk :math:`A_{\mathrm{eff}}` (on all
tokens, and among the content tokens with rows renormalised: in an encoder the ``[CLS]``/``[SEP]`` sinks carry
most of :math:`\pi` and hide the current of the rest), :math:`\delta_{\mathrm{orth}}` of the effective
transports (weighted by :math:`A_{\mathrm{eff}}` over pairs of content tokens), the drift :math:`d_A` to the
next layer on the same pairs [SEED §B.6], :math:`\lVert A_{\mathrm{eff}}\rVert_F` (all pairs, sinks included),
the loop inconsistency (scale-free holonomy defect of :math:`O^{\mathrm{eff}}` around triangles of consecutive
tokens [RECON §B.6]; past :data:`LOOP_OPERATIONS` an evenly spaced subset of the triangles, their number in
``loop_triangles``), the diagonal dominance of the mean transport Gram matrix (Connection Laplacian's Figure
2(b) reading), the connection-energy ratio :math:`\mathcal E_c(X)/\sum_i\pi_i\lVert X_i\rVert^2`, and Spearman's
:math:`\rho` between the heads' query–key subspace distance on :math:`\mathrm{Gr}(d_h, D)^2` and their
attention-pattern distance on this text, with its Mantel p-value (199 relabellings; ISA ML01's claim that heads
which lie close attend alike, :func:`~workbench.models.pattern_correlation`).

For a model read through ``transformers`` (:class:`~workbench.models.HookedTransformer`), a reading that assumes
what a layer's mechanism breaks is ``None`` with the mechanism as its reason: q/k norms and soft-capping make the
scores no bilinear form of the input (ρ_skew, the bond's inertia and negative mass); soft-capping and a position
bias (ALiBi, T5's relative buckets) put into the scores what the corners' :math:`\operatorname{softmax}(\beta
qk^\top)` leaves out.  With a position bias the form's readings stay: they read the content form, the bias
apart.  An image has no token sequence for the previous-token and induction probes.

Per model, from the weights alone (:func:`~workbench.models.head_geometry`, read once and cached):
``Diagnosis.geometry``, every layer's head-by-head distance matrices of the Q, K, V, O subspaces and of the
query–key pair, summarised against a random-subspace null; ``to_dict()["head_geometry"]`` and the third row of
:func:`plot_diagnosis`.  A model whose heads span the whole space (:math:`d_h = D`) has no Grassmannian reading.

A value that is undefined for this model or text is ``None`` (``null`` in JSON, never NaN), and the record's
``undefined`` field says why, e.g. ``{"eps_rev": "causal: ..."}``.

References
----------
Attention Geometry §7, §9 (Table 1); "From Self-Attention to Connection Laplacian" §7 (metrics);
book/reference.md §A.7, §A.10, §B.6, §C.4; ISA ML01.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from workbench.attention import (
    OPERATORS,
    factored_connection_energy,
    factored_loop_defect,
    geometric_drift,
    induction_score,
    loop_defect_operations,
    mean_entropy,
    previous_token_score,
    reversibility_residual,
    token_corner_distances,
)
from workbench.backend import check_view_size, host_array
from workbench.models._head_geometry import HeadGeometry, head_geometry, pattern_correlation
from workbench.models._layer_forms import layer_forms, transport_form_of
from workbench.models._transformer import Trace, Transformer
from workbench.validation import check_integer

__all__ = [
    "Diagnosis",
    "HeadReading",
    "LayerReading",
    "circuit_scores",
    "diagnose",
    "diagnose_audio",
    "diagnose_ids",
    "diagnose_image",
]

CORNER_TOLERANCE = 0.1  # the default of nearest_corner: projecting may move ≤ 10% of a row's mass
#: Operations the loop defect may spend per layer (about 0.3 s on two cores, 0.6 s on one); past it, a subset of
#: triangles.  It admits the trace route's tables of a ViT-B/16 or GPT-2-small layer (2.0e10), so an image of
#: 197 tokens reads all its triangles.
LOOP_OPERATIONS = 3e10
LOOP_MIN_TRIANGLES = 8

CAUSAL = "causal: the walk is absorbed at the first token, so it has no stationary measure of full support"
FEW_TOKENS = "fewer than {k} content tokens"
NO_SEQUENCE = "an image or audio: no token ids to repeat (the previous-token and induction probes need them)"


def _check_model(model, tokenizer=None) -> Transformer:
    if not isinstance(model, Transformer):
        if type(model).__module__.startswith("transformers.") and hasattr(model, "state_dict"):
            from workbench.models._hf import from_transformers

            return from_transformers(model, tokenizer)  # read afresh each call: convert once for many texts
        raise TypeError(
            "model must be a workbench Transformer (from load_model or load_minilm) or a transformers model "
            f"object, got {type(model).__name__}"
        )
    if tokenizer is not None:
        raise ValueError(
            "tokenizer applies to a transformers model object; a workbench Transformer carries its own, got "
            f"tokenizer={type(tokenizer).__name__} with a Transformer"
        )
    return model


@dataclass(frozen=True)
class HeadReading:
    """The operator reading of one head (see the module docstring for each quantity)."""

    layer: int
    head: int
    entropy: float
    effective_neighbours: float
    eps_rev: float | None
    rho_skew: float | None  # None where the scores are not a bilinear form (q/k norms, soft-capping)
    delta_orth: float
    inertia: tuple[int, int, int] | None
    negative_mass: float | None
    corner: str | None  # nearest of DMAP/DMTN/ATAP if within the tolerance of nearest_corner, else ATTN
    nearest_constrained: str | None  # nearest of DMAP/DMTN/ATAP, whatever the distance
    corner_distance: float | None  # its mean row total-variation distance from the head
    previous_token: float | None  # on the repeated random probe sequence (None for an image)
    induction: float | None
    undefined: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LayerReading:
    """The operator reading of one layer's effective walk and transport."""

    layer: int
    entropy: float
    mean_effective_neighbours: float  # mean over heads of e^{H̄_h} (Attention Geometry Table 1)
    effective_neighbours_of_mean_entropy: float  # e^{mean_h H̄_h} ≤ the mean of e^{H̄_h} (Jensen)
    eps_rev: float | None
    eps_rev_content: float | None  # ε_rev of A_eff restricted to content tokens (rows renormalised)
    rho_skew: float | None  # mean over heads; None where the heads' is
    delta_orth: float | None
    drift: float | None  # d_A to the next layer; None for the last layer
    a_eff_norm: float
    gram_diagonal_ratio: float | None
    energy_ratio: float | None
    loop_inconsistency: float | None  # mean ‖Hol/s − I‖_F/√d over triangles of consecutive content tokens
    # Spearman ρ between the heads' query–key subspace distance and their attention-pattern distance on this text,
    # and its one-sided Mantel p-value (ISA ML01: heads that lie close attend alike); None with fewer than 3 heads
    subspace_rho: float | None = None
    subspace_p_value: float | None = None
    # how many triangles the loop defect averaged: all of them, or an evenly spaced subset within LOOP_OPERATIONS
    loop_triangles: int | None = None
    corners: dict[str, int] = field(default_factory=dict)
    undefined: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagnosis:
    """The report of :func:`diagnose`: per-head and per-layer readings, and the arrays behind the plots."""

    model: str
    text: str  # the part of the input that was read
    tokens: list[str]
    heads: list[HeadReading]
    layers: list[LayerReading]
    a_eff: np.ndarray  # shape [L, n, n]
    mean_gram: np.ndarray  # shape [L, D, D]; NaN where undefined (fewer than two content tokens)
    content: np.ndarray  # content (non-special) tokens, shape [n]
    causal: bool = False
    truncated: bool = False
    n_total: int = 0  # tokens of the whole input, before any truncation
    unknown: int = 0  # tokens the vocabulary did not know
    geometry: HeadGeometry | None = None  # the heads' subspaces, from the weights (head_geometry)

    def to_dict(self) -> dict:
        """A strict-JSON document (the arrays are left out; every undefined value is ``None``, never NaN).

        ``"head_geometry"`` holds the weights' reading (:meth:`HeadGeometry.to_dict`: per layer the summaries and
        the head-by-head distance matrices); it is the same for every text of one model.
        """
        return _strict(
            {
                "model": self.model,
                "text": self.text,
                "tokens": list(self.tokens),
                "causal": self.causal,
                "truncated": self.truncated,
                "n_total": self.n_total,
                "unknown": self.unknown,
                "layers": [asdict(layer) for layer in self.layers],
                "heads": [
                    asdict(head) | {"inertia": None if head.inertia is None else list(head.inertia)}
                    for head in self.heads
                ],
                "head_geometry": None if self.geometry is None else _without_name(self.geometry.to_dict()),
            }
        )


def _without_name(document: dict) -> dict:
    document.pop("model")  # the report names its model once, under the caller's label
    return document


def _strict(value):
    """NaN and ±inf → None, recursively (JSON has no non-finite numbers)."""
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _head_readings(layer: int, model: Transformer, X: np.ndarray, A: np.ndarray, circuits, causal_mask):
    """The readings of every head of one layer (the bond and the corners from the factors and the q, k)."""
    q, k = model.queries_keys(layer, X)
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    mechanisms = getattr(model.layers[layer], "mechanisms", {})
    # what a mechanism breaks (workbench.models._hooked.MECHANISMS): the bilinear form's readings when the scores
    # are not a bilinear form of the input; the corners (softmax of βqkᵀ) when something else enters the scores
    no_form = next((mechanisms[m] for m in ("qk_norm", "softcap") if m in mechanisms), None)
    no_corner = next((mechanisms[m] for m in ("softcap", "position_bias") if m in mechanisms), None)
    forms = layer_forms(model, layer)  # from the weights alone: read once per model
    beta = model.layers[layer].attention.beta
    eps_rev = None if model.causal else reversibility_residual(A)  # one elimination for the stack of heads
    stacked = None if no_corner is not None else token_corner_distances(q, k, beta=beta, mask=causal_mask)
    readings = []
    for h in range(A.shape[0]):
        bond = forms.bonds[h]
        if no_corner is None:
            distances = {name: float(values[h]) for name, values in stacked.items()}
            nearest = min(("DMAP", "DMTN", "ATAP"), key=lambda name: distances[name])
        entropy = mean_entropy(A[h])
        undefined = {"eps_rev": CAUSAL} if model.causal else {}
        if no_form is not None:
            undefined |= dict.fromkeys(("rho_skew", "inertia", "negative_mass"), no_form)
        if no_corner is not None:
            undefined |= dict.fromkeys(("corner", "nearest_constrained", "corner_distance"), no_corner)
        if circuits is None:
            undefined |= dict.fromkeys(("previous_token", "induction"), NO_SEQUENCE)
        readings.append(
            HeadReading(
                layer=layer,
                head=h,
                entropy=entropy,
                effective_neighbours=math.exp(entropy),
                eps_rev=None if eps_rev is None else float(eps_rev[h]),
                rho_skew=None if no_form else forms.skew[h],
                delta_orth=float(forms.delta_orth[h]),
                inertia=None if no_form else bond.inertia,
                negative_mass=None if no_form else bond.negative_mass,
                corner=None if no_corner else (nearest if distances[nearest] <= CORNER_TOLERANCE else "ATTN"),
                nearest_constrained=None if no_corner else nearest,
                corner_distance=None if no_corner else distances[nearest],
                previous_token=None if circuits is None else float(circuits[0][layer, h]),
                induction=None if circuits is None else float(circuits[1][layer, h]),
                undefined=undefined,
            )
        )
    return readings


def _triangles_within_budget(H: int, r: int, d: int, triangles: int) -> int | None:
    """None when all triangles fit :data:`LOOP_OPERATIONS`, else the most that do (at least LOOP_MIN_TRIANGLES)."""
    if loop_defect_operations(H, r, d, triangles) <= LOOP_OPERATIONS:
        return None
    low, high = 1, triangles  # the cost grows with the count: the largest count within the budget, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if loop_defect_operations(H, r, d, middle) <= LOOP_OPERATIONS else (low, middle - 1)
    return max(LOOP_MIN_TRIANGLES, low)


def _layer_reading(layer: int, model: Transformer, X, A, readings, content, pairs) -> tuple[LayerReading, np.ndarray]:
    mha = model.layers[layer].attention
    A_eff = A.mean(axis=0)
    undefined: dict[str, str] = {}
    n_content = int(content.sum())
    tokens = np.flatnonzero(content)
    if n_content >= 2:
        gram = transport_form_of(model, layer).gram(A, mask=pairs)
        D = X.shape[1]
        diagonal = np.abs(np.diag(gram.mean_gram)).mean()
        off = np.abs(gram.mean_gram - np.diag(np.diag(gram.mean_gram))).sum() / (D * (D - 1))
        delta_orth, ratio, mean_gram = gram.mean, float(diagonal / off), gram.mean_gram
    else:
        delta_orth = ratio = None
        mean_gram = np.full((X.shape[1], X.shape[1]), np.nan)
        undefined |= dict.fromkeys(("delta_orth", "gram_diagonal_ratio"), FEW_TOKENS.format(k=2))
    loop_triangles = None
    if model.causal:
        eps_rev = eps_rev_content = energy = loop = None
        undefined |= dict.fromkeys(("eps_rev", "eps_rev_content", "energy_ratio"), CAUSAL)
        undefined["loop_inconsistency"] = (
            "causal: the walk a → b → c → a needs a token to attend to a later one, which a causal head never does"
        )
    else:
        pi = _stationary(A_eff)
        eps_rev = reversibility_residual(A_eff)
        energy = factored_connection_energy(A, mha.W_V, mha.W_O, X, pi=pi) / float(np.sum(pi * np.sum(X * X, axis=1)))
        if n_content >= 2:
            walk = A_eff[np.ix_(content, content)]
            eps_rev_content = reversibility_residual(walk / walk.sum(axis=1, keepdims=True))
        else:
            eps_rev_content = None
            undefined["eps_rev_content"] = FEW_TOKENS.format(k=2)
        if n_content >= 3:
            triangles = n_content - 2
            H, _, r = mha.W_V.shape
            # 4·d³ per triangle densely, or the layer's tables by the trace route (ViT-B/16 on an image: 2e10
            # operations for all 194 triangles; ViT-L/16 8.6e11 densely): past the budget, an evenly spaced subset of
            # the triangles, the count recorded beside the mean
            keep = _triangles_within_budget(H, r, X.shape[1], triangles)
            loop = factored_loop_defect(A, mha.W_V, mha.W_O, tokens.tolist(), max_triangles=keep)
            loop_triangles = min(triangles, keep or triangles)
        else:
            loop = None
            undefined["loop_inconsistency"] = FEW_TOKENS.format(k=3) + " (no triangle to walk)"
    if readings and readings[0].rho_skew is None:
        undefined["rho_skew"] = readings[0].undefined["rho_skew"]
    entropies = np.array([r.entropy for r in readings])
    reading = LayerReading(
        layer=layer,
        entropy=float(entropies.mean()),
        mean_effective_neighbours=float(np.exp(entropies).mean()),
        effective_neighbours_of_mean_entropy=math.exp(float(entropies.mean())),
        eps_rev=eps_rev,
        eps_rev_content=eps_rev_content,
        rho_skew=None if any(r.rho_skew is None for r in readings) else float(np.mean([r.rho_skew for r in readings])),
        delta_orth=delta_orth,
        drift=None,
        a_eff_norm=float(np.linalg.norm(A_eff)),
        gram_diagonal_ratio=ratio,
        energy_ratio=energy,
        loop_inconsistency=loop,
        loop_triangles=loop_triangles,
        corners={name: sum(r.corner == name for r in readings) for name in OPERATORS},
        undefined=undefined,
    )
    return reading, mean_gram


def diagnose(
    model,
    text: str,
    *,
    model_name: str | None = None,
    max_tokens: int | None = None,
    circuits=None,
    tokenizer=None,
):
    r"""Read every head and layer of ``model`` on ``text`` as a Markov operator and a connection.

    Parameters
    ----------
    model : Transformer or a transformers model
        From :func:`~workbench.models.load_model` / :func:`~workbench.models.load_minilm`, or a ``transformers``
        model object (read by :func:`~workbench.models.from_transformers`; without its tokenizer, use
        :func:`diagnose_ids`).
    text : str
        One text.  The pairs of content tokens (not ``[CLS]``/``[SEP]``/BOS, identified by id) are the support of
        :math:`\delta_{\mathrm{orth}}` and :math:`d_A`, as Connection Laplacian does for BERT.  A text longer than
        ``max_tokens`` is cut at a word boundary, with an ``InputTruncatedWarning`` and ``truncated`` set.
    model_name : str, optional
        Recorded in the report; default the model's name.
    max_tokens : int, optional
        Default the model's ``max_positions``.
    circuits : (previous_token, induction), optional
        Precomputed :func:`circuit_scores` (a corpus run computes them once).
    tokenizer : optional
        With a ``transformers`` model object: its tokenizer (a fast tokenizer or a ``tokenizers.Tokenizer``).
        The object is read into a :class:`~workbench.models.Transformer` at every call; for many texts, read it
        once with :func:`~workbench.models.from_transformers`.

    Returns
    -------
    Diagnosis

    Raises
    ------
    ValueError
        If ``text`` is empty, or has no token besides the special ones.

    Examples
    --------
    >>> import math
    >>> from workbench.models import load_minilm
    >>> report = diagnose(load_minilm(), "Attention is a Markov operator.")  # well under 1 s after loading
    >>> len(report.layers), len(report.heads)
    (6, 72)
    >>> all(0 <= head.eps_rev <= math.sqrt(2) for head in report.heads)  # ε_rev ≤ √2 always
    True
    """
    model = _check_model(model, tokenizer)
    name = _check_name(model, model_name)
    tokens = model.tokenize(text, max_tokens)
    trace = model.trace_ids(tokens.ids, tokens=tokens.tokens, special=tokens.special)
    return _diagnose_trace(model, trace, name, tokens.text, circuits, tokens.truncated, tokens.n_total, tokens.unknown)


def diagnose_image(model, image, *, model_name: str | None = None) -> Diagnosis:
    """Read every head and layer of a vision model (ViT, DeiT, CLIP's vision tower) on one image.

    ``image`` is a file path, a PIL image or an [H, W, C] array; it goes through the checkpoint's own image
    processor (``preprocessor_config.json``).  The tokens are ``[CLS]`` (and DeiT's ``[DIST]``), flagged special,
    and ``patch r,c``; the report's ``text`` names the image.  The previous-token and induction probes need a
    token sequence and are ``None`` (with the reason).

    Examples
    --------
    >>> from workbench.models import load_model  # doctest: +SKIP
    >>> report = diagnose_image(load_model("vit-checkpoint"), "china.jpg")  # doctest: +SKIP
    """
    if not getattr(model, "vision", False):
        raise ValueError(
            f"model must be a vision model read by load_model or read_transformers, got a "
            f"{getattr(model, 'family', type(model).__name__)} model (use diagnose for text)"
        )
    name = _check_name(model, model_name)
    trace = model.trace_image(image)
    label = str(image) if isinstance(image, (str, Path)) else f"an image of {len(trace.tokens)} tokens"
    n = len(trace.tokens)
    return _diagnose_trace(model, trace, name, label, None, False, n, 0)


def diagnose_audio(model, waveform, sampling_rate: int, *, model_name: str | None = None, label: str = "") -> Diagnosis:
    """Read every head and layer of an audio encoder (whisper) on one mono waveform.

    The checkpoint's feature extractor (``preprocessor_config.json``) turns the waveform, resampled to its rate if
    needed, into log-mel frames; each encoder position is a token labelled by its start time, and the positions
    in the padding after the waveform are flagged special.  The previous-token and induction probes repeat token
    ids and are ``None`` (with the reason).
    """
    if not getattr(model, "audio", False):
        raise ValueError(
            f"model must be an audio encoder read by load_model or read_transformers, got a "
            f"{getattr(model, 'family', type(model).__name__)} model (use diagnose for text)"
        )
    if not isinstance(label, str):
        raise TypeError(f"label must be a string naming the audio, got {type(label).__name__}")
    name = _check_name(model, model_name)
    trace = model.trace_audio(waveform, sampling_rate)
    n = len(trace.tokens)
    return _diagnose_trace(model, trace, name, label or f"audio of {n} positions", None, False, n, 0)


def diagnose_ids(model, ids, *, special=None, text: str = "", model_name: str | None = None, circuits=None):
    """:func:`diagnose` of token ids directly (a corpus window, or a model without its tokenizer).

    ``special`` flags the special tokens (default: membership of the ids in the model's ``special_ids``);
    ``text`` is recorded in the report.
    """
    model = _check_model(model)
    name = _check_name(model, model_name)
    ids = host_array("ids", ids)
    check_view_size("ids", ids)  # before the membership scan
    if special is None and ids.ndim == 1 and np.issubdtype(ids.dtype, np.integer):
        special = np.isin(ids, np.fromiter(model.special_ids, dtype=np.int64, count=len(model.special_ids)))
    trace = model.trace_ids(ids, special=special)
    if not isinstance(text, str):
        raise TypeError(f"text must be a string (recorded in the report), got {type(text).__name__}")
    return _diagnose_trace(model, trace, name, text, circuits, False, int(ids.size), 0)


def _reader(model: Transformer) -> Transformer:
    """The numpy float64 model the readings use: ``model`` itself, or a numpy copy of a torch one (made once).

    Only the forward pass runs on the model's device; the readings (eigenproblems, QR, softmaxes of the corners)
    are small dense numpy work on the trace, brought back to the host.
    """
    if model.backend == "numpy":
        return model
    twin = model.__dict__.get("_numpy_twin")
    if twin is None:
        twin = model.to_backend("numpy")
        model.__dict__["_numpy_twin"] = twin
    return twin


def _host(trace: Trace) -> Trace:
    """The trace with its arrays on the host as float64 numpy (a torch trace is copied back once)."""
    from dataclasses import fields

    from workbench.backend import to_numpy

    arrays = ("ids", "special", "hidden_states", "attention_inputs", "attention")
    return replace(trace, **{f.name: to_numpy(getattr(trace, f.name)) for f in fields(trace) if f.name in arrays})


def _check_name(model: Transformer, model_name) -> str:
    if model_name is None:
        return model.name
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a string (a label for the report), got {type(model_name).__name__}")
    if not model_name.strip():
        raise ValueError(f"model_name must be a non-empty label for the report, got {model_name!r}")
    return model_name


def _diagnose_trace(model, trace: Trace, name, text, circuits, truncated, n_total, unknown) -> Diagnosis:
    trace, model = _host(trace), _reader(model)
    content = ~np.asarray(trace.special, dtype=bool)
    if not content.any():
        raise ValueError(f"text must contain at least one non-special token, got tokens {trace.tokens}")
    n = content.size
    pairs = content[:, None] & content[None, :]
    causal_mask = np.tril(np.ones((n, n), dtype=bool)) if model.causal else None
    if model.causal:
        pairs &= causal_mask
    circuits = (
        None if getattr(model, "vision", False) or getattr(model, "audio", False) else _check_circuits(model, circuits)
    )
    heads: list[HeadReading] = []
    layers: list[LayerReading] = []
    grams = []
    attention_inputs = np.asarray(trace.attention_inputs, dtype=np.float64)
    attention = np.asarray(trace.attention, dtype=np.float64)
    geometry = head_geometry(model) if model.d_head < model.d_model else None  # one full-width head: no Grassmannian
    for index in range(model.n_layers):
        X, A = attention_inputs[index], attention[index]
        readings = _head_readings(index, model, X, A, circuits, causal_mask)
        heads.extend(readings)
        reading, mean_gram = _layer_reading(index, model, X, A, readings, content, pairs)
        layers.append(_with_subspace_correlation(reading, geometry, A, content))
        grams.append(mean_gram)
    a_eff = attention.mean(axis=1)
    # d_A^{ℓ→ℓ+1}, on the content pairs
    for index in range(len(layers) - 1):
        if content.sum() < 2:  # one pair: the cosine of two positive numbers is 1, whatever the walks
            layers[index] = replace(
                layers[index], undefined=layers[index].undefined | {"drift": FEW_TOKENS.format(k=2)}
            )
            continue
        try:
            drift = geometric_drift(a_eff[index], a_eff[index + 1], mask=pairs)
        except ValueError as error:  # a walk that vanishes on the pairs: say so, do not invent a number
            layers[index] = replace(layers[index], undefined=layers[index].undefined | {"drift": str(error)})
            continue
        layers[index] = replace(layers[index], drift=drift)
    last = layers[-1]
    layers[-1] = replace(last, undefined=last.undefined | {"drift": "the last layer has no next layer"})
    return Diagnosis(
        name,
        text,
        list(trace.tokens),
        heads,
        layers,
        a_eff,
        np.stack(grams),
        content,
        causal=bool(model.causal),
        truncated=bool(truncated),
        n_total=int(n_total),
        unknown=int(unknown),
        geometry=geometry,
    )


#: Relabellings of the per-text Mantel test (its p-value resolves 1/200; the corpus study uses more).
TEXT_PERMUTATIONS = 199


def _with_subspace_correlation(reading: LayerReading, geometry, A: np.ndarray, content: np.ndarray) -> LayerReading:
    """The reading with ρ(query–key subspace distance, attention-pattern distance) of this layer on this text."""
    if geometry is None or A.shape[0] < 3:
        reason = (
            "the heads span the whole space (d_head = d_model): no Grassmannian"
            if geometry is None
            else f"{A.shape[0]} heads give fewer than 3 pairs"
        )
        return replace(
            reading, undefined=reading.undefined | dict.fromkeys(("subspace_rho", "subspace_p_value"), reason)
        )
    try:
        result = pattern_correlation(
            geometry.layers[reading.layer].distances["QK"],
            A,
            rows=content,
            permutations=TEXT_PERMUTATIONS,
            seed=reading.layer,
        )
    except ValueError as error:  # e.g. heads that all attend identically: ρ is undefined, say why
        return replace(
            reading, undefined=reading.undefined | dict.fromkeys(("subspace_rho", "subspace_p_value"), str(error))
        )
    return replace(reading, subspace_rho=result.rho, subspace_p_value=result.p_value)


def circuit_scores(model, *, seed: int = 0, half_length: int = 24) -> tuple[np.ndarray, np.ndarray]:
    r"""Previous-token and induction scores of every head on a repeated random token sequence.

    The probe is :math:`2T` tokens drawn uniformly from the model's ordinary vocabulary
    (:meth:`~workbench.models.Transformer.content_ids`: no special, added or ``[unused]`` tokens), the second
    half repeating the first, fed without special tokens.  A previous-token head puts its mass on :math:`i - 1`;
    an induction head, in the second half, on the token after the earlier occurrence of the current one
    (:func:`~workbench.attention.induction_score`).  A model trained without such a task need not have either;
    the scores say how much.

    Parameters
    ----------
    model : Transformer
    seed : int
        Seed of the probe sequence.
    half_length : int
        :math:`T`, at most half the model's positions.

    Returns
    -------
    previous_token, induction : ndarray, shape=[L, H]
    """
    model = _check_model(model)
    seed = check_integer("seed", seed, 0)
    half_length = check_integer("half_length", half_length, 1, model.max_positions // 2)
    vocabulary = np.asarray(model.content_ids())
    rng = np.random.default_rng(seed)
    half = vocabulary[rng.integers(0, vocabulary.size, size=half_length)]
    ids = np.concatenate([half, half])
    from workbench.backend import to_numpy

    attention = to_numpy(model.trace_ids(ids).attention).astype(np.float64)
    return previous_token_score(attention), induction_score(attention, ids)


def _check_circuits(model: Transformer, circuits):
    """The circuit scores given, checked: a pair of [L, H] arrays in [0, 1]; by default the model's own probe."""
    if circuits is None:
        return circuit_scores(model, half_length=min(24, model.max_positions // 2))
    shape = (model.n_layers, model.n_heads)
    if not isinstance(circuits, (tuple, list)) or len(circuits) != 2:
        raise TypeError(
            f"circuits must be the pair (previous_token, induction) of circuit_scores, got {type(circuits).__name__}"
        )
    pair = []
    for name, scores in zip(("previous_token", "induction"), circuits, strict=True):
        array = np.asarray(scores, dtype=np.float64) if isinstance(scores, np.ndarray) else None
        if array is None or array.shape != shape or not np.all((array >= 0) & (array <= 1)):
            raise ValueError(
                f"circuits must hold two arrays of shape {shape} (layers × heads) with entries in [0, 1], got "
                f"{name} = {type(scores).__name__}" + (f" of shape {array.shape}" if array is not None else "")
            )
        pair.append(array)
    return tuple(pair)


def _stationary(A: np.ndarray) -> np.ndarray:
    from workbench.markov import MarkovOperator

    return np.asarray(MarkovOperator(A).stationary, dtype=np.float64)
