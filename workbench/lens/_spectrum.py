r"""The spectrum of a generator: eigenvalues as log-gains (real parts) and rotation frequencies (imaginary parts).

generator_spectrum  -- sorted eigenvalues of a generator or a stack, with rounding-level parts set to zero
GeneratorSpectrum   -- the result: eigenvalues, log-gains, frequencies, spectral abscissa, top frequency

References
----------
Lie-Exponential Roadmap, "Log lens" ("eigenstructures of S reveal dominant motions"), SPD maps
("eigenvalues are log-gains"), "Log-Lens Diagnostics" (track the spectrum of :math:`S_\ell`) [SEED].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.backend import to_numpy
from workbench.lens._primitives import binary_scale
from workbench.validation import as_array, check_square

__all__ = ["GeneratorSpectrum", "generator_spectrum"]

_EPS = np.finfo(np.float64).eps


@dataclass(frozen=True, eq=False)
class GeneratorSpectrum:
    r"""Eigenvalues of a generator (or a stack), split into log-gains and rotation frequencies.

    Attributes
    ----------
    eigenvalues : numpy.ndarray, shape=[..., d], complex
        Sorted by decreasing real part, then by decreasing imaginary part.
    log_gains : numpy.ndarray, shape=[..., d]
        :math:`\operatorname{Re}\lambda`: growth (> 0) or decay (< 0) rates of :math:`e^{tS}`.
    frequencies : numpy.ndarray, shape=[..., d]
        :math:`\operatorname{Im}\lambda`: rotation frequencies of :math:`e^{tS}`.

    References
    ----------
    Lie-Exponential Roadmap, "eigenvalues are log-gains" [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> spectrum = generator_spectrum(np.diag([-1.0, 2.0]))  # a pure scaling: gains only
    >>> spectrum.log_gains.tolist(), float(spectrum.spectral_abscissa), float(spectrum.max_frequency)
    ([2.0, -1.0], 2.0, 0.0)
    """

    eigenvalues: np.ndarray
    log_gains: np.ndarray
    frequencies: np.ndarray

    @property
    def spectral_abscissa(self) -> np.ndarray:
        r""":math:`\max_k \operatorname{Re}\lambda_k`: :math:`\lVert e^{tS}\rVert` grows like :math:`e^{t\alpha}`."""
        return self.log_gains[..., 0]

    @property
    def max_frequency(self) -> np.ndarray:
        r""":math:`\max_k |\operatorname{Im}\lambda_k|`, the fastest rotation."""
        return np.max(np.abs(self.frequencies), axis=-1) if self.frequencies.shape[-1] else self.log_gains[..., :0]


def generator_spectrum(S) -> GeneratorSpectrum:
    r"""Sorted eigenvalues of a generator :math:`S`, as log-gains and rotation frequencies.

    .. math::

        S v_k = \lambda_k v_k, \qquad \lambda_k = \underbrace{\alpha_k}_{\text{log-gain}}
        + i\,\underbrace{\omega_k}_{\text{frequency}}, \qquad e^{tS} v_k = e^{t\alpha_k} e^{it\omega_k} v_k.

    A symmetric :math:`S` (SPD map) has only log-gains, a skew one (rotation) only frequencies.  Parts of
    size below :math:`8 d\,\varepsilon\,\lVert S\rVert_F` are rounding and are set to zero, so a skew
    generator reports exactly zero log-gains and the sort is not driven by noise.

    Parameters
    ----------
    S : array_like, shape=[..., d, d]
        A real generator or a stack (e.g. one per layer), numpy or torch, finite.

    Returns
    -------
    GeneratorSpectrum

    References
    ----------
    Lie-Exponential Roadmap, "Log lens" ("eigenstructures of S reveal dominant motions"), SPD
    maps ("eigenvalues are log-gains"), "Log-Lens Diagnostics" (track the spectrum of :math:`S_\ell`) [SEED].

    Examples
    --------
    >>> import numpy as np
    >>> spectrum = generator_spectrum(np.array([[0.5, -2.0], [2.0, 0.5]]))  # eigenvalues 0.5 ± 2i
    >>> spectrum.log_gains.tolist(), spectrum.frequencies.tolist()
    ([0.5, 0.5], [2.0, -2.0])
    """
    S = as_array("S", S, min_ndim=2)
    check_square("S", S)
    S = np.array(to_numpy(S), dtype=np.float64)
    d = S.shape[-1]
    lam = np.linalg.eigvals(S) if S.size else np.zeros(S.shape[:-1], dtype=complex)
    if S.size:  # ‖S‖_F as s·‖S/s‖_F with s a power of two (exact): no square of a huge entry overflows
        scale = binary_scale(S, axis=(-2, -1))
        snap = 8 * d * _EPS * (np.linalg.norm(S / scale, axis=(-2, -1)) * scale[..., 0, 0])[..., None]
    else:
        snap = 0.0
    real = np.where(np.abs(lam.real) <= snap, 0.0, lam.real)
    imag = np.where(np.abs(lam.imag) <= snap, 0.0, lam.imag)
    lam = -np.sort(-(real + 1j * imag), axis=-1)
    return GeneratorSpectrum(lam, lam.real.copy() + 0.0, lam.imag.copy() + 0.0)
