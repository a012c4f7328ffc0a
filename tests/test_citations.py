"""Citations are self-contained: no pointer outside the repository, every source and cite key resolves.

Three checks:

* every text file of the repository (tracked, or untracked and not ignored; ``tests/`` excepted, since this
  file names the patterns) is free of references to documents outside the repository: the names of the
  background files and folders the workbench was written from;
* every catalogue identity's ``source`` names at least one work that ``book/references.bib`` resolves;
* every MyST citation key (``{cite}``, ``{cite:p}``, ``{cite:t}``, …) used in ``notebooks/**/*.py`` and
  ``book/*.md`` is an entry of ``book/references.bib``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
BIB = ROOT / "book" / "references.bib"

#: Names of documents outside the repository (matched case-insensitively).
FORBIDDEN = ("attention-geometry-math", "shared/references", "references/seeds", "lie-exponential-roadmap", "isa-ml01")

#: A MyST citation role and its backquoted keys: {cite}`a`, {cite:p}`a, b`, {cite:t}`a`.
CITE_ROLE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]*)`")

#: An entry of a BibTeX file: ``@type{key,``.
BIB_ENTRY = re.compile(r"^\s*@(\w+)\s*\{\s*([^,\s]+)\s*,", re.MULTILINE)


def _repository_files() -> list[Path]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (the file list comes from git ls-files)")
    names: list[str] = []
    for extra in ([], ["--others", "--exclude-standard"]):
        out = subprocess.run([git, "ls-files", "-z", *extra], cwd=ROOT, capture_output=True, check=True)
        names += [name for name in out.stdout.decode().split("\0") if name]
    return sorted({ROOT / name for name in names if not name.startswith("tests/")})


def _text(path: Path) -> str | None:
    """The file's text, or None for a binary file (NUL bytes or not UTF-8) or one that is gone."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_reference_to_documents_outside_the_repository():
    files = _repository_files()
    assert any(path.suffix == ".py" for path in files), "the file list is empty: git ls-files found nothing"
    found = []
    for path in files:
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            lowered = line.lower()
            for pattern in FORBIDDEN:
                if pattern in lowered:
                    found.append(f"{path.relative_to(ROOT)}:{number}: {pattern!r}: {line.strip()[:120]}")
    assert not found, "references to documents outside the repository:\n" + "\n".join(found)


def _bib_keys() -> set[str]:
    return {key for _, key in BIB_ENTRY.findall(BIB.read_text(encoding="utf-8"))}


def test_bibliography_keys_are_unique():
    keys = [key for _, key in BIB_ENTRY.findall(BIB.read_text(encoding="utf-8"))]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    assert keys, "book/references.bib has no entries"
    assert not duplicates, f"keys defined twice in book/references.bib: {duplicates}"


def _resolvers() -> tuple[list[str], list[str]]:
    """Shorthands and author/editor surnames of the entries of ``book/references.bib``."""
    # pybtex is in the test extra: the citations are checked wherever the tests run, never skipped.
    from pybtex import database
    from pybtex.richtext import Text

    entries = database.parse_file(str(BIB)).entries
    shorthands = sorted({entry.fields["shorthand"] for entry in entries.values() if "shorthand" in entry.fields})
    surnames = set()
    for entry in entries.values():
        for persons in entry.persons.values():
            for person in persons:
                surname = Text.from_latex(" ".join(person.last_names)).render_as("text").strip()
                if surname:
                    surnames.add(surname)
    return shorthands, sorted(surnames)


def _resolves(source: str, shorthands: list[str], surnames: list[str]) -> bool:
    """The matching rule.

    A source resolves when it contains ``book/reference.md``, or the ``shorthand`` of an entry (e.g.
    "Attention Geometry", "Lie-Exponential Roadmap", as a substring, case-sensitive), or an author's or
    editor's surname of an entry as a whole word (e.g. "Reutenauer", "Al-Mohy", "Giné" in "Koltchinskii–Giné";
    "Coifman" does not match inside a longer word).
    """
    if "book/reference.md" in source or any(shorthand in source for shorthand in shorthands):
        return True
    return any(re.search(rf"(?<![\w-]){re.escape(surname)}(?![\w-])", source) for surname in surnames)


def test_every_catalogue_source_resolves_in_the_bibliography():
    shorthands, surnames = _resolvers()
    assert {"Attention Geometry", "Connection Laplacian", "Lie-Exponential Roadmap", "ISA ML01"} <= set(shorthands)
    from workbench.catalogue import discover

    identities = discover()
    assert identities, "the catalogue is empty"
    unresolved = [
        f"{identity.name}: {identity.source!r}"
        for identity in identities
        if not _resolves(identity.source, shorthands, surnames)
    ]
    assert not unresolved, "catalogue sources that name no work of book/references.bib:\n" + "\n".join(unresolved)


def test_the_matching_rule():
    shorthands, surnames = ["Attention Geometry"], ["Coifman", "Al-Mohy", "Giné"]
    assert _resolves("Attention Geometry §7 [DERIVED]", shorthands, surnames)
    assert _resolves("see book/reference.md §A.7", shorthands, surnames)
    assert _resolves("Al-Mohy–Higham (2011)", shorthands, surnames)
    assert _resolves("Monte-Carlo rate (Koltchinskii–Giné 2000)", shorthands, surnames)
    assert not _resolves("Coifmanesque kernels", shorthands, surnames)
    assert not _resolves("heat kernel by images [closed form]", shorthands, surnames)


def test_every_cite_key_is_in_the_bibliography():
    keys = _bib_keys()
    files = sorted((ROOT / "notebooks").rglob("*.py")) + sorted((ROOT / "book").glob("*.md"))
    assert any(path.parent.name == "notebooks" for path in files), "no notebooks found under notebooks/"
    missing = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for group in CITE_ROLE.findall(line):
                for key in (part.strip() for part in group.split(",")):
                    if key not in keys:
                        missing.append(f"{path.relative_to(ROOT)}:{number}: {key!r}")
    assert not missing, "citation keys that book/references.bib does not define:\n" + "\n".join(missing)
