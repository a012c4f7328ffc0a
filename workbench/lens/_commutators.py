r"""The commutator map of a stack of generators across depth, its superdiagonal and its heatmap.

:math:`H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F` is zero iff the two generators commute, i.e. iff the BCH series
of :math:`e^{S_\ell}e^{S_m}` stops at degree 1 and the pair can be fused into one exponential.

commutator_norms         -- the symmetric map H (optionally scale-free, in [0, √2])
adjacent_commutators     -- its superdiagonal ‖[S_ℓ, S_{ℓ+1}]‖_F along depth
plot_commutator_heatmap  -- H as a matplotlib heatmap with a colorbar (NaN entries blank)

References
----------
Lie-Exponential Roadmap, "Log lens" (commutators quantify inter-layer interference), "Log-Lens
Diagnostics", "Log-lens dashboards" [SEED].  A. Böttcher and D. Wenzel, "The Frobenius norm and the
commutator", Linear Algebra Appl. 429 (2008).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from workbench.backend import check_view_size, host_array
from workbench.lens._primitives import as_stack, binary_scale, commutator
from workbench.validation import check_flag, check_matching, check_square

__all__ = ["adjacent_commutators", "commutator_norms", "plot_commutator_heatmap"]


def commutator_norms(generators, *, normalize: bool = False) -> np.ndarray:
    r"""The commutator map :math:`H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F` of a stack of generators.

    .. math::

        H_{\ell m} = \lVert S_\ell S_m - S_m S_\ell\rVert_F, \qquad
        \tilde H_{\ell m} = \frac{H_{\ell m}}{\lVert S_\ell\rVert_F\,\lVert S_m\rVert_F} \in [0, \sqrt 2]

    (normalised, with :math:`0/0 := 0`; the bound :math:`\sqrt2` is the Böttcher–Wenzel inequality).
    :math:`H` is symmetric with zero diagonal; :math:`H_{\ell m} = 0` iff the generators commute, which implies
    :math:`e^{S_\ell}e^{S_m} = e^{S_\ell + S_m}` (the BCH series stops at degree 1, so the pair can be fused);
    the converse can fail when eigenvalues differ by nonzero multiples of :math:`2\pi i`.

    Parameters
    ----------
    generators : sequence of array_like or array, shape=[L, d, d]
        The generators :math:`S_\ell` (equal sizes), numpy or torch.
    normalize : bool
        Divide by :math:`\lVert S_\ell\rVert_F\lVert S_m\rVert_F` (scale-free interference).

    Returns
    -------
    numpy.ndarray, shape=[L, L], float64

    References
    ----------
    Lie-Exponential Roadmap, "Log lens" (commutators quantify inter-layer interference),
    "Log-Lens Diagnostics" (track :math:`\lVert[S_\ell, S_{\ell+1}]\rVert`) [SEED].
    A. Böttcher and D. Wenzel, "The Frobenius norm and the commutator", Linear Algebra Appl. 429 (2008).

    Examples
    --------
    >>> import numpy as np
    >>> X, Y = np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> H = commutator_norms([X, Y, 2 * X])  # [X, Y] = diag(1, -1), ‖·‖_F = √2; [X, 2X] = 0
    >>> bool(np.allclose(H, np.sqrt(2) * np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]])))
    True
    """
    normalize = check_flag("normalize", normalize)
    stack, scales, norms = _scaled_stack(as_stack("generators", generators))
    count = stack.shape[0]
    H = np.zeros((count, count))
    for i in range(count):
        for j in range(i + 1, count):
            H[i, j] = H[j, i] = _commutator_norm(stack, scales, norms, i, j, normalize)
    return H


def _scaled_stack(stack: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Each S_l is divided by its power-of-two scale s_l (exact), so ‖[S_l, S_m]‖ = s_l s_m ‖[U_l, U_m]‖ is
    # formed without squaring huge entries, and the normalised map needs no scale at all.
    scales = binary_scale(stack, axis=(-2, -1))
    units = stack / scales
    return units, scales[:, 0, 0], np.linalg.norm(units, axis=(-2, -1))


def _commutator_norm(
    units: np.ndarray, scales: np.ndarray, norms: np.ndarray, i: int, j: int, normalize: bool
) -> float:
    value = float(np.linalg.norm(commutator(units[i], units[j])))
    if normalize:
        denominator = float(norms[i] * norms[j])
        return value / denominator if denominator > 0 else 0.0
    value = value * float(scales[i]) * float(scales[j])
    if not np.isfinite(value):
        raise ValueError(
            f"generators[{i}] and generators[{j}] are too large: ‖[S_{i}, S_{j}]‖_F overflows float64 "
            f"(max |entry| {float(np.max(np.abs(units[i]))) * float(scales[i]):.3g} and "
            f"{float(np.max(np.abs(units[j]))) * float(scales[j]):.3g}); use smaller generators or normalize=True"
        )
    return value


def adjacent_commutators(generators, *, normalize: bool = False) -> np.ndarray:
    r"""Commutator norms of neighbouring generators along depth, :math:`\lVert[S_\ell, S_{\ell+1}]\rVert_F`.

    .. math::

        c_\ell = \lVert S_\ell S_{\ell+1} - S_{\ell+1} S_\ell\rVert_F, \qquad \ell = 0, \dots, L-2,

    divided by :math:`\lVert S_\ell\rVert_F\lVert S_{\ell+1}\rVert_F` when ``normalize`` (:math:`0/0 := 0`).
    Spikes mark where stacked layers stop being fusable into one exponential.

    Parameters
    ----------
    generators : sequence of array_like or array, shape=[L, d, d]
        The generators, equal sizes.
    normalize : bool
        Scale-free version (see :func:`commutator_norms`).

    Returns
    -------
    numpy.ndarray, shape=[L - 1], float64
        The superdiagonal of :func:`commutator_norms`.

    References
    ----------
    Lie-Exponential Roadmap, "Log-Lens Diagnostics" (spikes in commutator norms drive pruning or
    fusion) [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> X, Y = np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> bool(np.allclose(adjacent_commutators([X, 2 * X, Y]), [0.0, 2 * np.sqrt(2)]))
    True
    """
    normalize = check_flag("normalize", normalize)
    stack, scales, norms = _scaled_stack(as_stack("generators", generators))
    return np.array([_commutator_norm(stack, scales, norms, i, i + 1, normalize) for i in range(stack.shape[0] - 1)])


def plot_commutator_heatmap(H, ax=None, *, labels: Sequence[str] | None = None, title: str | None = None):
    r"""Draw a commutator map :math:`H_{\ell m} = \lVert[S_\ell, S_m]\rVert_F` as a heatmap with a colorbar.

    Parameters
    ----------
    H : array_like, shape=[L, L]
        Nonnegative entries, e.g. from :func:`commutator_norms`; NaN entries (maps without a logarithm,
        see :func:`log_lens`) are drawn blank.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when omitted.
    labels : sequence of str, optional
        One tick label per layer (default ``0, 1, ...``).
    title : str, optional
        Axes title (default: the formula).

    Returns
    -------
    matplotlib.axes.Axes
        With labelled axes and a colorbar.

    References
    ----------
    Lie-Exponential Roadmap, "Log-lens dashboards correlating commutator heatmaps with classic
    interpretability circuits" [SEED].

    Examples
    --------
    >>> import numpy as np, matplotlib.pyplot as plt
    >>> ax = plot_commutator_heatmap(np.array([[0.0, 1.0], [1.0, 0.0]]), labels=["L0", "L1"])
    >>> ax.get_xlabel(), len(ax.figure.axes)  # the heatmap and its colorbar
    ('layer m', 2)
    >>> plt.close(ax.figure)
    """
    check_view_size("H", H)
    H = host_array("H", H)
    if H.dtype.kind == "c":
        raise TypeError(f"H must be real-valued, got dtype {H.dtype}")
    if H.dtype.kind not in "fiub":
        raise TypeError(f"H must be a numeric array, got dtype {H.dtype}")
    H = H.astype(np.float64)
    if H.ndim != 2:
        raise ValueError(f"H must be a 2-dimensional array, got shape {H.shape}")
    check_square("H", H)
    finite = H[np.isfinite(H)]
    if np.isinf(H).any():
        raise ValueError("H must hold finite values or NaN (missing), got an infinite entry")
    if finite.size and finite.min() < 0:
        raise ValueError(f"H must be entrywise nonnegative, got minimum {finite.min():.6g}")
    count = H.shape[0]
    if labels is not None:
        if isinstance(labels, str | bytes) or not isinstance(labels, Iterable):
            raise TypeError(f"labels must be a sequence of strings (one per row of H), got {type(labels).__name__}")
        labels = [str(label) for label in labels]
        check_matching("labels", len(labels), "H", count)
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 3.8))
    image = ax.imshow(np.ma.masked_invalid(H), cmap="magma", interpolation="nearest")
    colorbar = ax.figure.colorbar(image, ax=ax)
    colorbar.set_label(r"$\|[S_\ell, S_m]\|_F$")
    ax.set_xlabel("layer m")
    ax.set_ylabel("layer ℓ")
    ticks = np.arange(count)
    ax.set_xticks(ticks, labels if labels is not None else [str(t) for t in ticks])
    ax.set_yticks(ticks, labels if labels is not None else [str(t) for t in ticks])
    ax.set_title(title if title is not None else r"commutator map $\|[S_\ell, S_m]\|_F$")
    return ax
