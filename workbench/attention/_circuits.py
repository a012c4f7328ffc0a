r"""Circuits: previous-token and induction scores of attention maps on repeated random token sequences.

Stacks of maps ``shape=[..., n, n]`` (e.g. ``(layers, heads, n, n)``) are accepted throughout; numpy
arrays and torch tensors alike.

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §9, Table 1; book/reference.md §A.10, §A.12 [RECON].
C. Olsson et al., "In-context learning and induction heads", Transformer Circuits Thread 2022.
"""

from __future__ import annotations

import numpy as np

from workbench.attention._head_checks import check_rng
from workbench.attention._stochastic_checks import check_stochastic, scalar_or_array
from workbench.backend import check_view_size, host_array, namespace
from workbench.memory import check_memory
from workbench.validation import check_integer, check_matching

__all__ = ["induction_score", "previous_token_score", "repeated_random_tokens"]


def previous_token_score(A, *, atol: float | None = None):
    r"""Previous-token score: the mean attention from each token to the one before it.

    .. math::

        s_{\mathrm{prev}} = \frac{1}{n-1}\sum_{i=1}^{n-1}\mathsf A_{i,i-1} \in [0, 1],

    1 exactly for the hard shift head (:math:`\mathsf A_{i,i-1} = 1`); :math:`(H_n - 1)/(n - 1)` for the
    uniform causal head (:math:`H_n` the harmonic number).

    Parameters
    ----------
    A : array, shape=[..., n, n]
        Row-stochastic attention, ``n >= 2``.
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array
        A float for one map; an array ``shape=A.shape[:-2]`` for a stack.

    References
    ----------
    Olsson et al. (2022) and Elhage et al. (2021) (previous-token heads); ISA ML01.

    Examples
    --------
    >>> import numpy as np
    >>> shift = np.eye(5, k=-1); shift[0, 0] = 1.0  # row 0 has no predecessor: it attends to itself
    >>> previous_token_score(shift)
    1.0
    """
    A = check_stochastic("A", A, atol)
    n = int(A.shape[-1])
    if n < 2:
        raise ValueError(f"A must have at least 2 tokens for a previous-token score, got shape {tuple(A.shape)}")
    xp = namespace(A)
    rows = np.arange(1, n)
    return scalar_or_array(xp.mean(A[..., rows, rows - 1], axis=-1))


def _repeated_half(tokens, n: int) -> int:
    """Check that ``tokens`` ([..., n], integers) repeat their first half; return the half length T."""
    check_view_size("tokens", tokens)
    host = host_array("tokens", tokens)
    if host.dtype.kind not in "iu":
        raise TypeError(f"tokens must be an integer array, got dtype {host.dtype}")
    if host.ndim == 0:
        raise ValueError("tokens must be a sequence of length 2T, got a scalar")
    check_matching("tokens length", host.shape[-1], "A size", n)
    if n % 2:
        raise ValueError(f"tokens must have even length 2T (a segment and its repeat), got length {n}")
    T = n // 2
    mismatch = host[..., T:] != host[..., :T]
    if mismatch.any():
        where = np.argwhere(mismatch)[0]
        k = int(where[-1])
        index = tuple(int(i) for i in where[:-1])
        row = host[index]
        prefix = f"in sequence {index[0] if len(index) == 1 else index} " if index else ""
        raise ValueError(
            f"tokens must repeat their first half (tokens[T:] == tokens[:T], T = {T}); {prefix}"
            f"first mismatch at position {T + k}: {int(row[T + k])} != {int(row[k])}"
        )
    return T


def induction_score(A, tokens, *, atol: float | None = None):
    r"""Induction score on a repeated sequence: attention to the token after the earlier occurrence.

    For tokens :math:`t` of length :math:`2T` with :math:`t_{T:} = t_{:T}`, the query at position
    :math:`i \ge T` holds the token seen at :math:`i - T`; an induction head attends to what came next
    there, the key :math:`i - T + 1`:

    .. math::

        s_{\mathrm{ind}} = \frac1T\sum_{i=T}^{2T-1}\mathsf A_{i,\,i-T+1} \in [0, 1].

    The score is positional; ``tokens`` fixes :math:`T` and certifies the repetition (a segment with
    repeated tokens of its own makes earlier occurrences ambiguous; draw it from a large vocabulary).

    Parameters
    ----------
    A : array, shape=[..., 2T, 2T]
        Row-stochastic attention.
    tokens : integer array, shape=[..., 2T]
        The sequence (or a batch of sequences) whose second half repeats the first, e.g. from
        :func:`repeated_random_tokens`.
    atol : float, optional
        Row-sum tolerance (see :func:`row_entropy`).

    Returns
    -------
    float or array
        A float for one map; an array ``shape=A.shape[:-2]`` for a stack.

    Raises
    ------
    ValueError
        If the tokens do not repeat their first half, or their length is not ``A``'s size.

    References
    ----------
    Olsson et al. (2022) (induction heads, repeated random tokens); Elhage et al. (2021); ISA ML01.

    Examples
    --------
    >>> import numpy as np
    >>> tokens = np.array([7, 3, 9, 7, 3, 9])  # T = 3
    >>> A = np.eye(6)
    >>> A[3:] = 0.0; A[3, 1] = A[4, 2] = A[5, 3] = 1.0  # each repeat attends to its earlier successor
    >>> induction_score(A, tokens)
    1.0
    """
    A = check_stochastic("A", A, atol)
    n = int(A.shape[-1])
    T = _repeated_half(tokens, n)
    rows = np.arange(T, 2 * T)
    return scalar_or_array(namespace(A).mean(A[..., rows, rows - T + 1], axis=-1))


def repeated_random_tokens(rng=None, vocab_size: int = 1000, half_length: int = 32, batch: int = 1) -> np.ndarray:
    r"""Random token sequences whose second half repeats the first: the induction-head probe.

    .. math::

        t = (s_0, \dots, s_{T-1}, s_0, \dots, s_{T-1}), \qquad s_k \sim \operatorname{Uniform}\{0, \dots,
        V - 1\} \text{ i.i.d.}

    Parameters
    ----------
    rng : numpy.random.Generator or int or None
        Randomness (``np.random.default_rng(rng)``).
    vocab_size : int
        :math:`V \ge 1`.
    half_length : int
        :math:`T \ge 1`.
    batch : int
        Number of independent sequences.

    Returns
    -------
    numpy.ndarray of int64, shape=[batch, 2T]

    References
    ----------
    Olsson et al. (2022) (repeated random tokens as the induction test).

    Examples
    --------
    >>> t = repeated_random_tokens(0, vocab_size=50, half_length=4, batch=2)
    >>> t.shape, bool((t[:, 4:] == t[:, :4]).all())
    ((2, 8), True)
    """
    vocab_size = check_integer("vocab_size", vocab_size, 1)
    half_length = check_integer("half_length", half_length, 1)
    batch = check_integer("batch", batch, 1)
    check_memory(
        f"batch = {batch} sequences of 2 × half_length = {2 * half_length} int64 tokens", 16.0 * batch * half_length
    )
    segment = check_rng("rng", rng).integers(0, vocab_size, size=(batch, half_length), dtype=np.int64)
    return np.concatenate([segment, segment], axis=1)
