r"""The heads of a real model as points of a Grassmannian, read from its weights, and against attention patterns.

For every layer, the four subspaces of each head (:func:`workbench.attention.head_subspaces`: the column spaces of
:math:`W_Q^h, W_K^h, W_V^h` and :math:`W_O^{h\top}` in the space the layer's attention reads) give head-by-head
geodesic distance matrices, and the query–key pair a fifth, the geodesic distance of the product manifold
:math:`\mathrm{Gr}(d_h, D)^2`,

.. math::

    D^{QK}_{ab} = \big(D^{Q\,2}_{ab} + D^{K\,2}_{ab}\big)^{1/2},

the geometry that decides where a head attends.  Each is summarised against independent uniform subspaces of the
same :math:`(D, d_h)` (:func:`workbench.attention.subspace_null`): the median principal angle of the pairs beside
the null's, the smallest angle, and how many pairs are closer than the null's 5 % quantile.

:func:`pattern_correlation` asks ISA ML01's question of one text or a corpus: are heads whose subspaces lie close
also heads that attend alike?  Spearman's :math:`\rho` between :math:`D^{QK}` (or any of the five) and the mean
total-variation distance of the heads' attention (:func:`workbench.attention.attention_pattern_distance`), with a
Mantel permutation test (:func:`workbench.attention.mantel_test`).

For a pre-LN model the attention input is the normed residual stream, so the subspaces are of that space (the norm's
gain is a diagonal map of the residual stream, the same for every head of the layer); for BERT-style post-LN models it
is the residual stream itself.  Rotary positions act inside a head's query/key space and change no subspace.

References
----------
ISA ML01 (heads as points of :math:`\mathrm{Gr}(d_{\mathrm{head}}, d_{\mathrm{model}})`); Edelman, Arias & Smith
(1998) §4.3; Mantel (1967).
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from workbench.attention import (
    HEAD_MAPS,
    HeadSubspaces,
    RankCorrelation,
    attention_pattern_distance,
    head_subspace_angles,
    head_subspaces,
    mantel_test,
    subspace_null,
)
from workbench.backend import host_array
from workbench.models._transformer import Transformer
from workbench.validation import as_array, check_in_range, check_integer, check_row_stochastic

__all__ = [
    "GEOMETRY_MAPS",
    "HeadGeometry",
    "LayerGeometry",
    "SubspaceSummary",
    "head_distance_matrices",
    "head_geometry",
    "pattern_correlation",
]

#: The distance matrices of a layer: the four subspaces and the query–key product.
GEOMETRY_MAPS = (*HEAD_MAPS, "QK")

#: The null's quantile below which a pair of heads counts as closer than chance.
CHANCE_QUANTILE = 0.05


@dataclass(frozen=True)
class SubspaceSummary:
    """One kind of subspace of one layer, summarised over its pairs of heads (angles in degrees).

    Attributes
    ----------
    median_angle : float
        The median over pairs of each pair's median principal angle.
    smallest_angle : float
        The smallest principal angle of any pair (a direction two heads nearly share).
    median_distance : float
        The median geodesic distance over pairs.
    closer_than_chance : int
        Pairs whose distance is below the random null's 5 % quantile.
    pairs : int
    """

    median_angle: float
    smallest_angle: float
    median_distance: float
    closer_than_chance: int
    pairs: int


@dataclass(frozen=True)
class LayerGeometry:
    """The head-by-head subspace geometry of one layer.

    Attributes
    ----------
    layer : int
    distances : dict of str to ndarray
        ``distances[m]`` is the ``[H, H]`` geodesic distance matrix for ``m`` in :data:`GEOMETRY_MAPS`.
    summary : dict of str to SubspaceSummary
    deficient : list of (map, head, rank)
        Rank-deficient maps (their subspaces have the numerical rank).
    """

    layer: int
    distances: dict
    summary: dict
    deficient: list


@dataclass(frozen=True)
class HeadGeometry:
    r"""The subspace geometry of every layer of a model, beside its random-subspace null (:func:`head_geometry`).

    Attributes
    ----------
    model : str
    d_model, d_head, n_heads : int
    dimension : int
        :math:`\dim\mathrm{Gr}(d_h, D) = d_h(D - d_h)`.
    null : dict
        The null's median principal angle, smallest angle (median over pairs, degrees), median geodesic distance,
        5 % quantile, and for the query–key product the median and 5 % quantile; ``samples`` and ``seed``.
    layers : list of LayerGeometry
    """

    model: str
    d_model: int
    d_head: int
    n_heads: int
    dimension: int
    null: dict
    layers: list

    def to_dict(self) -> dict:
        """Strict JSON: per layer the summaries and the distance matrices (lists of lists); undefined is None.

        A summary over no pairs (a layer of one head) is undefined: its angles and distance are ``None``.
        """
        return _finite_or_none(
            {
                "model": self.model,
                "d_model": self.d_model,
                "d_head": self.d_head,
                "n_heads": self.n_heads,
                "dimension": self.dimension,
                "metric": "geodesic",
                "null": dict(self.null),
                "layers": [
                    {
                        "layer": layer.layer,
                        "summary": {name: vars(s).copy() for name, s in layer.summary.items()},
                        "deficient": [list(item) for item in layer.deficient],
                        "distances": {name: np.round(D, 12).tolist() for name, D in layer.distances.items()},
                    }
                    for layer in self.layers
                ],
            }
        )


def _finite_or_none(value):
    """NaN and ±inf → None, recursively (JSON has no non-finite numbers)."""
    if isinstance(value, dict):
        return {key: _finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _null_summary(d_model: int, d_head: int, samples: int, seed: int):
    null = subspace_null(d_model, d_head, samples=samples, seed=seed)
    half = samples // 2
    qk = np.hypot(null.distances[:half], null.distances[half : 2 * half])  # two independent pairs per draw
    summary = {
        "median_angle": float(np.degrees(np.median(null.median_angles))),
        "smallest_angle": float(np.degrees(np.median(null.smallest_angles))),
        "median_distance": null.median,
        "chance_distance": null.quantile(CHANCE_QUANTILE),
        "qk_median_distance": float(np.median(qk)),
        "qk_chance_distance": float(np.quantile(qk, CHANCE_QUANTILE)),
        "samples": samples,
        "seed": seed,
    }
    return summary


def _summaries(angles: dict, distances: dict, null: dict) -> dict:
    """Per map: the median and smallest principal angle over pairs, the median distance, pairs closer than chance."""
    H = distances["Q"].shape[0]
    upper = np.triu_indices(H, 1)
    pair_angles = {name: _upper(angles[name]) for name in HEAD_MAPS}
    pair_angles["QK"] = [np.concatenate(qk) for qk in zip(pair_angles["Q"], pair_angles["K"], strict=True)]
    out = {}
    for name in GEOMETRY_MAPS:
        pair_distances = distances[name][upper]
        chance = null["qk_chance_distance"] if name == "QK" else null["chance_distance"]
        theta = pair_angles[name]
        out[name] = SubspaceSummary(
            median_angle=float(np.degrees(np.median([np.median(t) for t in theta]))) if theta else math.nan,
            smallest_angle=float(np.degrees(min(float(t.min()) for t in theta))) if theta else math.nan,
            median_distance=float(np.median(pair_distances)) if theta else math.nan,
            closer_than_chance=int(np.sum(pair_distances < chance)),
            pairs=int(pair_distances.size),
        )
    return out


def _upper(angles: list) -> list:
    return [angles[a][b] for a in range(len(angles)) for b in range(a + 1, len(angles))]


def head_distance_matrices(subspaces: HeadSubspaces) -> dict:
    r"""The five geodesic distance matrices of a set of heads (:data:`GEOMETRY_MAPS`), ``QK`` the product's.

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.attention import head_subspaces, random_multihead
    >>> D = head_distance_matrices(head_subspaces(random_multihead(np.random.default_rng(0), 3, 16, 4)))
    >>> sorted(D), bool(np.allclose(D["QK"] ** 2, D["Q"] ** 2 + D["K"] ** 2, rtol=1e-12))
    (['K', 'O', 'Q', 'QK', 'V'], True)
    """
    return _distances(_angles(subspaces))


def _angles(subspaces: HeadSubspaces) -> dict:
    return {name: head_subspace_angles(subspaces, name) for name in HEAD_MAPS}


def _distances(angles: dict) -> dict:
    distances = {}
    for name, theta in angles.items():
        H = len(theta)
        D = np.zeros((H, H))
        for a in range(H):
            for b in range(a + 1, H):
                D[a, b] = D[b, a] = float(np.sqrt(np.sum(theta[a][b] ** 2)))  # geodesic ‖θ‖₂
        distances[name] = D
    distances["QK"] = np.hypot(distances["Q"], distances["K"])
    return distances


def head_geometry(model, *, null_samples: int = 256, seed: int = 0, rtol: float | None = None) -> HeadGeometry:
    r"""Every layer's head subspaces, their distance matrices and their summaries against a random null.

    Parameters
    ----------
    model : Transformer
        From :func:`~workbench.models.load_model` or :func:`~workbench.models.load_minilm` (numpy or torch
        weights; read on the host).
    null_samples : int
        Random pairs of the null (:func:`~workbench.attention.subspace_null`), 16 to 4,096.
    seed : int
    rtol : float, optional
        Rank threshold (:func:`~workbench.attention.subspace_basis`).

    Returns
    -------
    HeadGeometry
        Cached per model object and arguments, and by a fingerprint of the attention weights (the same checkpoint
        loaded again is not read again); about 1.2 s for all-MiniLM-L6-v2 on one core, once.

    References
    ----------
    ISA ML01; Edelman, Arias & Smith (1998) §4.3; Absil, Edelman & Koev (2006).

    Examples
    --------
    >>> from workbench.models import load_minilm
    >>> g = head_geometry(load_minilm())
    >>> g.dimension, len(g.layers), g.layers[0].distances["QK"].shape
    (11264, 6, (12, 12))
    >>> g.null["median_angle"] > 70  # two random 32-planes of R^384 are nearly orthogonal
    True
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a workbench Transformer (load_model, load_minilm), got {type(model).__name__}")
    null_samples = check_integer("null_samples", null_samples, 16, 4096)
    seed = check_integer("seed", seed, 0)
    if rtol is not None:
        rtol = check_in_range("rtol", rtol, 0.0, 1.0, high_inclusive=False)
    if model.d_head >= model.d_model:
        raise ValueError(
            f"model must have heads narrower than the model (d_head < d_model) to be points of a Grassmannian, got "
            f"d_head = {model.d_head}, d_model = {model.d_model}: every head's subspace is the whole space"
        )
    key = (null_samples, seed, rtol)
    by_object = _CACHE.get(model, {})
    if key not in by_object:
        fingerprint = _fingerprint(model, key)
        geometry = _BY_WEIGHTS.get(fingerprint)
        if geometry is None:
            geometry = _head_geometry(model, null_samples, seed, rtol)
            if len(_BY_WEIGHTS) >= _BY_WEIGHTS_KEPT:
                _BY_WEIGHTS.pop(next(iter(_BY_WEIGHTS)))  # the oldest first
            _BY_WEIGHTS[fingerprint] = geometry
        by_object[key] = geometry
        _CACHE[model] = by_object
    return by_object[key]


#: Geometries already read, per model object (weights do not change after loading; a corpus run reads many windows).
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: And by a fingerprint of the attention weights, so that the same checkpoint loaded again is not read again.
_BY_WEIGHTS: dict[bytes, HeadGeometry] = {}
_BY_WEIGHTS_KEPT = 8


def _fingerprint(model: Transformer, key: tuple) -> bytes:
    import hashlib

    from workbench.backend import to_numpy

    digest = hashlib.blake2b(repr((model.name, key)).encode(), digest_size=20)
    for layer in model.layers:
        mha = layer.attention
        for weight in (mha.W_Q, mha.W_K, mha.W_V, mha.W_O):
            array = np.ascontiguousarray(to_numpy(weight))
            digest.update(repr((array.dtype.str, array.shape)).encode())
            digest.update(array.tobytes())
    return digest.digest()


def _head_geometry(model: Transformer, null_samples: int, seed: int, rtol) -> HeadGeometry:
    null = _null_summary(model.d_model, model.d_head, null_samples, seed)
    layers = []
    for index, layer in enumerate(model.layers):
        subspaces = head_subspaces(layer.attention, rtol=rtol)
        angles = _angles(subspaces)
        distances = _distances(angles)
        layers.append(LayerGeometry(index, distances, _summaries(angles, distances, null), subspaces.deficient))
    return HeadGeometry(
        model.name,
        model.d_model,
        model.d_head,
        model.n_heads,
        head_subspaces(model.layers[0].attention, rtol=rtol).dimension,
        null,
        layers,
    )


def pattern_correlation(
    distances,
    attention,
    *,
    rows=None,
    strata=None,
    permutations: int = 999,
    seed: int = 0,
) -> RankCorrelation:
    r"""Spearman's :math:`\rho` between a subspace distance matrix and the heads' attention-pattern distance.

    .. math::

        \rho = \operatorname{corr}_{\mathrm{rank}}\big(D_{ab},\ T_{ab}\big), \qquad
        T_{ab} = \operatorname{mean}_{\text{windows}, i}\ \tfrac12\lVert \mathsf P^{(a)}_{i\cdot} -
        \mathsf P^{(b)}_{i\cdot}\rVert_1 ,

    with the Mantel permutation p-value (one-sided: ISA ML01 predicts :math:`\rho > 0`).

    Parameters
    ----------
    distances : array, shape=[H, H]
        E.g. ``LayerGeometry.distances["QK"]``.
    attention : array, shape=[..., H, n, n], or a precomputed ``[H, H]`` pattern distance
        The heads' attention over one text or a stack of windows.
    rows : array of bool, optional
        Query rows to average over (the content tokens).
    strata : sequence, optional
        Heads' layers, for a model-wide matrix: only pairs within a layer, permuted within layers.
    permutations : int
    seed : int

    Returns
    -------
    RankCorrelation

    References
    ----------
    ISA ML01; Mantel (1967); Legendre & Legendre (2012), ch. 10.
    """
    distances = as_array("distances", distances, ndim=2)
    attention = as_array("attention", attention, min_ndim=2)
    H = distances.shape[0]
    if distances.shape != (H, H):
        raise ValueError(f"distances must be a square [H, H] matrix, got shape {tuple(distances.shape)}")
    if attention.ndim == 2:
        if rows is not None:
            raise ValueError("rows applies to attention matrices [..., H, n, n], not to a precomputed [H, H] distance")
        if tuple(attention.shape) != (H, H):
            raise ValueError(
                f"attention must be [..., {H}, n, n] or an [{H}, {H}] distance, got {tuple(attention.shape)}"
            )
        pattern = attention
    else:
        if attention.ndim < 3 or attention.shape[-3] != H:
            raise ValueError(
                f"attention must be [..., {H}, n, n] (one matrix per head of distances) or an [{H}, {H}] distance, "
                f"got shape {tuple(attention.shape)}"
            )
        check_row_stochastic("attention", attention)
        pattern = attention_pattern_distance(attention, rows=None if rows is None else host_array("rows", rows))
    try:
        return mantel_test(distances, pattern, strata=strata, permutations=permutations, seed=seed)
    except ValueError as error:  # the test names its arguments D1, D2: say which of ours they are
        raise ValueError(
            str(error).replace("D1", "distances").replace("D2", "the attention-pattern distance")
        ) from None
