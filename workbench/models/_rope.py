r"""Rotary position embeddings (RoPE), their scalings, and the position-dependent bilinear form they make.

A head of width :math:`d` rotates the first :math:`r \le d` coordinates of each query and key by the angles
:math:`p\,\omega_k` at position :math:`p`, in the planes :math:`(k, k + r/2)` for :math:`k < r/2` (the
"rotate-half" layout of the Hugging Face Llama code; the remaining :math:`d - r` coordinates pass unchanged):

.. math::

    \tilde q_{p,k} = q_k\cos p\omega_k - q_{k+r/2}\sin p\omega_k,\qquad
    \tilde q_{p,k+r/2} = q_{k+r/2}\cos p\omega_k + q_k\sin p\omega_k ,

that is :math:`\tilde q_p = q\,R(p)` for the row-acting matrix :math:`R(p)` of :meth:`RotaryEmbedding.rotation`,
with base frequencies :math:`\omega_k = \theta^{-2k/r}` modified by the scaling type ("linear": all divided by
the factor; "dynamic": a larger base beyond the trained length; "llama3": the long wavelengths divided by the
factor, the short ones kept, a smooth blend between; "yarn": a ramp between interpolated and extrapolated
frequencies and an attention factor :math:`a` that multiplies cos and sin).  Since the planar rotations commute
and :math:`R(p)^\top = R(-p)` (times :math:`a^2` for the factors),

.. math::

    \tilde q_i\cdot\tilde k_j = q_i\,R(i)R(j)^\top k_j^\top = a^2\, q_i\,R(i - j)\,k_j^\top ,

so with :math:`q_i = \tilde x_i\tilde W_Q`, :math:`k_j = \tilde x_j\tilde W_K` on augmented rows
:math:`\tilde x = (x, 1)`, :math:`\tilde W = \binom{W}{b}` the score is the bilinear form

.. math::

    \tilde q_i\cdot\tilde k_j = \tilde x_i\, M(j - i)\, \tilde x_j^\top ,\qquad
    M(\Delta) = a^2\,\tilde W_Q\, R(-\Delta)\, \tilde W_K^\top ,

which depends on the two positions only through the offset :math:`\Delta = j - i`
(:meth:`RotaryEmbedding.relative_form`).  At :math:`\Delta = 0` it is the unrotated form
:math:`\tilde W_Q\tilde W_K^\top` (times :math:`a^2`).

References
----------
J. Su et al., RoFormer: enhanced transformer with rotary position embedding (2021) (the rotation and its
relative form); S. Chen et al., extending context by position interpolation (2023) ("linear");
B. Peng et al., YaRN (2023); Llama 3 (Meta, 2024) (the "llama3" frequency blend); book/reference.md §A.7
(the bilinear form :math:`M = W_QW_K^\top` of a head and its augmented-row bias convention).
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from workbench.backend import like, namespace, to_numpy
from workbench.models._architecture import ROPE_TYPES, RopeSettings
from workbench.validation import as_array, as_scalar, check_finite, check_in_range, check_integer

__all__ = ["RotaryEmbedding"]


class RotaryEmbedding:
    r"""The rotary embedding of one attention layer: frequencies, cos/sin, rotations and the relative form.

    Parameters
    ----------
    d_head : int
        Width :math:`d` of each query/key head.
    settings : RopeSettings
        Base, rotated width, scaling type and parameters (from :func:`~workbench.models.parse_architecture`).

    Examples
    --------
    >>> import numpy as np
    >>> rope = RotaryEmbedding(4, RopeSettings(theta=10000.0, rotary_dim=4))
    >>> q = np.array([[1.0, 0.0, 0.0, 0.0]])
    >>> np.round(rope.rotate(q, positions=[1]), 6).tolist()  # plane (0, 2) turned by one radian
    [[0.540302, 0.0, 0.841471, 0.0]]
    """

    def __init__(self, d_head: int, settings: RopeSettings):
        d_head = check_integer("d_head", d_head, 2)
        if not isinstance(settings, RopeSettings):
            raise TypeError(f"settings must be a RopeSettings, got {type(settings).__name__}")
        if settings.rope_type not in ROPE_TYPES:
            raise ValueError(f"rope_type must be one of {', '.join(ROPE_TYPES)}, got {settings.rope_type!r}")
        if not 2 <= settings.rotary_dim <= d_head or settings.rotary_dim % 2:
            raise ValueError(f"rotary_dim must be even and in [2, {d_head}], got {settings.rotary_dim}")
        self.d_head = int(d_head)
        self.settings = settings
        self.rotary_dim = settings.rotary_dim
        self.attention_factor = self._attention_factor()

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"RotaryEmbedding(d_head={self.d_head}, rotary_dim={self.rotary_dim}, theta={s.theta:g}, "
            f"rope_type={s.rope_type!r}, factor={s.factor:g})"
        )

    # ---- frequencies ---------------------------------------------------------------------------------

    def _base_frequencies(self, theta: float) -> np.ndarray:
        r = self.rotary_dim
        return 1.0 / theta ** (np.arange(0, r, 2, dtype=np.float64) / r)

    def _attention_factor(self) -> float:
        s = self.settings
        if s.rope_type != "yarn":
            return 1.0
        if s.get("attention_factor") is not None:
            return float(s.get("attention_factor"))

        def mscale(scale, m=1.0):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        m, m_all = s.get("mscale"), s.get("mscale_all_dim")
        if m and m_all:
            return float(mscale(s.factor, m) / mscale(s.factor, m_all))
        return mscale(s.factor)

    def inv_freq(self, seq_len: int | None = None) -> np.ndarray:
        r"""The angular frequencies :math:`\omega_k`, :math:`k < r/2`, after scaling, shape [r/2].

        ``seq_len`` matters only for "dynamic" scaling (the base grows once the input is longer than the trained
        ``max_position_embeddings``); by default the trained length.
        """
        if seq_len is not None:
            seq_len = check_integer("seq_len", seq_len, 1)
        s = self.settings
        r = self.rotary_dim
        if s.rope_type == "default":
            return self._base_frequencies(s.theta)
        if s.rope_type == "linear":
            return self._base_frequencies(s.theta) / s.factor
        if s.rope_type == "dynamic":
            trained = s.max_position_embeddings
            length = trained if seq_len is None else max(int(seq_len), trained)
            base = s.theta * ((s.factor * length / trained) - (s.factor - 1)) ** (r / (r - 2))
            return self._base_frequencies(base)
        if s.rope_type == "llama3":
            return self._llama3()
        return self._yarn()

    def _llama3(self) -> np.ndarray:
        s = self.settings
        omega = self._base_frequencies(s.theta)
        old = float(s.get("original_max_position_embeddings"))
        low, high = float(s.get("low_freq_factor")), float(s.get("high_freq_factor"))
        wavelength = 2 * math.pi / omega
        long_wave = wavelength > old / low  # long wavelengths: interpolated (divided by the factor)
        short_wave = wavelength < old / high  # short wavelengths: kept
        scaled = np.where(long_wave, omega / s.factor, omega)
        smooth = (old / wavelength - low) / (high - low)
        blended = (1 - smooth) * scaled / s.factor + smooth * scaled
        return np.where(~short_wave & ~long_wave, blended, scaled)

    def _yarn(self) -> np.ndarray:
        s = self.settings
        r, base = self.rotary_dim, s.theta
        original = float(s.get("original_max_position_embeddings"))
        fast, slow = s.get("beta_fast") or 32, s.get("beta_slow") or 1

        def correction_dim(rotations):  # the coordinate index whose wavelength fits `rotations` times
            return r * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

        low, high = correction_dim(fast), correction_dim(slow)
        if s.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, r - 1)
        if low == high:
            high += 0.001  # the reference implementation's guard against a zero-width ramp
        ramp = np.clip((np.arange(r // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
        powers = base ** (np.arange(0, r, 2, dtype=np.float64) / r)
        extrapolated, interpolated = 1.0 / powers, 1.0 / (s.factor * powers)
        keep = 1.0 - ramp  # the share of the extrapolated (unscaled) frequency
        return interpolated * (1.0 - keep) + extrapolated * keep

    # ---- rotations -----------------------------------------------------------------------------------

    def cos_sin(self, positions, seq_len: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`a\cos p\omega` and :math:`a\sin p\omega` at the positions, each shape [n, r] (frequencies twice).

        ``seq_len`` (dynamic scaling only) defaults to ``max(positions) + 1``.
        """
        p = np.asarray(to_numpy(as_array("positions", positions)), dtype=np.float64).reshape(-1)
        if seq_len is None and p.size:
            seq_len = int(np.max(np.abs(p))) + 1
        angles = p[:, None] * self.inv_freq(seq_len)[None, :]
        angles = np.concatenate([angles, angles], axis=1)
        return np.cos(angles) * self.attention_factor, np.sin(angles) * self.attention_factor

    def rotate(self, x, positions=None, seq_len: int | None = None):
        r"""Rotate queries or keys ``x`` (shape [..., n, d], numpy or torch) at ``positions`` (default 0..n−1).

        Returns :math:`x\,R(p)` row by row: the first :math:`r` coordinates rotated (rotate-half layout) and
        multiplied by the attention factor :math:`a` (1 unless yarn); the other :math:`d - r` pass unchanged.
        """
        if len(getattr(x, "shape", ())) < 2:
            raise ValueError(
                f"x must be an array of shape [..., n, {self.d_head}], got {type(x).__name__} of shape "
                f"{tuple(getattr(x, 'shape', ()))}"
            )
        check_finite("x", x)
        return self._rotate(x, positions, seq_len)

    def _rotate(self, x, positions=None, seq_len: int | None = None):
        """:meth:`rotate` without the checks of ``x`` (the forward pass rotates the queries and keys it made)."""
        n = int(x.shape[-2])
        if positions is None:
            positions = np.arange(n)
        cos, sin = self.cos_sin(positions, seq_len)
        if cos.shape[0] != n:
            raise ValueError(f"positions must give one position per row of x ({n}), got {cos.shape[0]}")
        if int(x.shape[-1]) != self.d_head:
            raise ValueError(f"x must have {self.d_head} columns (the head width), got shape {tuple(x.shape)}")
        xp = namespace(x)
        cos, sin = like(cos, x), like(sin, x)
        r, half = self.rotary_dim, self.rotary_dim // 2
        rotated, rest = x[..., :r], x[..., r:]
        turned = xp.concat([-rotated[..., half:], rotated[..., :half]], axis=-1)
        out = rotated * cos + turned * sin
        return out if r == self.d_head else xp.concat([out, rest], axis=-1)

    def rotation(self, position: float, seq_len: int | None = None) -> np.ndarray:
        r"""The row-acting matrix :math:`R(p)` (d × d): :meth:`rotate` gives :math:`x R(p)` (attention factor included).

        Examples
        --------
        >>> import numpy as np
        >>> rope = RotaryEmbedding(6, RopeSettings(theta=100.0, rotary_dim=4))
        >>> x = np.random.default_rng(0).standard_normal((1, 6))
        >>> bool(np.allclose(rope.rotate(x, positions=[3]), x @ rope.rotation(3), atol=1e-15))
        True
        """
        position = check_in_range("position", position)
        cos, sin = self.cos_sin([position], seq_len if seq_len is not None else int(abs(position)) + 1)
        cos, sin = cos[0], sin[0]
        r, half = self.rotary_dim, self.rotary_dim // 2
        R = np.eye(self.d_head) * self.attention_factor
        k = np.arange(half)
        R[k, k], R[k + half, k + half] = cos[:half], cos[half:]
        R[k + half, k], R[k, k + half] = -sin[:half], sin[half:]
        if r < self.d_head:
            R[r:, r:] = np.eye(self.d_head - r)
        return R

    def relative_form(self, W_Q, W_K, offset: int, b_Q=None, b_K=None, seq_len: int | None = None) -> np.ndarray:
        r"""The bilinear form :math:`M(\Delta)` of the rotated scores at key offset :math:`\Delta = j - i`.

        .. math::

            \tilde q_i\cdot\tilde k_j = \tilde x_i\,M(j - i)\,\tilde x_j^\top ,\qquad
            M(\Delta) = \tilde W_Q\,R(-\Delta)R(0)^\top\,\tilde W_K^\top ,

        since :math:`R(i)R(j)^\top = R(i - j)R(0)^\top` (planar rotations commute); :math:`R(0)` is the identity
        times the attention factor :math:`a` on the rotated coordinates (yarn only; else :math:`a = 1`).  With
        biases the rows are augmented, :math:`\tilde x = (x, 1)` and
        :math:`\tilde W = \binom{W}{b}`, so :math:`M` is (D+1) × (D+1).

        Parameters
        ----------
        W_Q, W_K : array, shape=[D, d]
            One head's (unrotated) query and key maps, row-vector convention.
        offset : int
            :math:`\Delta = j - i` (negative for earlier keys: a causal head reads :math:`\Delta \le 0`).
        b_Q, b_K : array, shape=[d], optional
            Biases; both or neither augment the rows (a missing one counts as zero).
        seq_len : int, optional
            For "dynamic" scaling: the input length the frequencies are taken at.

        Returns
        -------
        ndarray, shape=[D, D] or [D+1, D+1]
        """
        W_Q, W_K = (
            np.asarray(to_numpy(as_array(name, W)), dtype=np.float64) for name, W in (("W_Q", W_Q), ("W_K", W_K))
        )
        if W_Q.ndim != 2 or W_Q.shape[1] != self.d_head:
            raise ValueError(f"W_Q must have shape (D, {self.d_head}), got {W_Q.shape}")
        if W_K.shape != W_Q.shape:
            raise ValueError(f"W_K must have the shape of W_Q, {W_Q.shape}, got {W_K.shape}")
        offset = as_scalar(offset)
        if isinstance(offset, bool) or not isinstance(offset, Integral):
            raise TypeError(f"offset must be an integer (the key position minus the query position), got {offset!r}")
        if b_Q is not None or b_K is not None:
            zero = np.zeros(self.d_head)
            b_Q, b_K = (zero if b is None else self._bias(name, b) for name, b in (("b_Q", b_Q), ("b_K", b_K)))
            W_Q, W_K = np.vstack([W_Q, b_Q[None, :]]), np.vstack([W_K, b_K[None, :]])
        # R(i) R(j)ᵀ = R(i − j) R(0)ᵀ: the rotation by i − j, with the attention factor squared on the rotated part
        R = self.rotation(-int(offset), seq_len) @ self.rotation(0, seq_len).T
        return W_Q @ R @ W_K.T

    def _bias(self, name: str, b) -> np.ndarray:
        b = np.asarray(to_numpy(as_array(name, b)), dtype=np.float64)
        if b.shape != (self.d_head,):
            raise ValueError(f"{name} must have shape ({self.d_head},) (one entry per head coordinate), got {b.shape}")
        return b
