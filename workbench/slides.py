"""A session's slides: a notebook read as a reveal.js deck (MyST source for sphinx-revealjs).

A teacher presents the ideas and runs the code live in the notebook; the deck carries what goes on the board.
From one executed notebook (:func:`deck`):

* a title slide: the title, the notebook's lead paragraph and its time;
* the objectives;
* one slide per numbered section (``## k. …``): its heading, its first paragraph of prose, its first display
  formula and the first figure its code drew (taken from the executed notebook's outputs);
* each concept check on a slide of its own, the answer revealed on the next click (a reveal.js fragment);
* the recap, the exercises by title, and the works the deck cites (sphinxcontrib-bibtex; each deck's keys carry a
  prefix of its own, so that every deck lists its works).

Links into other files (the reference, other notebooks) keep their text and drop the target: a deck stands alone.
The build itself (staging, executing, Sphinx) is :func:`workbench.book.slides`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Section", "deck", "sections"]

_HEADING = re.compile(r"^(#{1,3})\s+(.*\S)\s*$")
_NUMBERED = re.compile(r"^\d+[a-z]?\.\s")
_CHECK = re.compile(r"^\*\*Check (\d+)\.\*\*\s*")
_RELATIVE_LINK = re.compile(r"\[([^\]]+)\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:)[^)\s]*\)")
# A slide's geometry for its figure (slides.css sets 30 px text on a 1280 × 720 slide): characters in a line of
# prose, its height in px, and the least height a figure keeps (below it a figure says nothing).
_CHARACTERS_PER_LINE, _LINE_HEIGHT, _MIN_FIGURE = 78, 41, 200
_DENSE = 0.8  # the size of dense prose (slides.css)
_DENSE_LEAD = 600  # characters of a lead paragraph above which the title slide sets it dense
# About as much text as a 1280 × 720 slide holds at 30 px with formulas in it.
_RECAP_CHARACTERS = 650
_CITE = re.compile(r"(\{cite:[pt]\}`)([^`]+)`")
_EXERCISE = re.compile(r"^Exercise (\d+[a-z]?\.\d+) \((compute|derive|explore)\)")


@dataclass
class Section:
    """A part of a notebook under one heading: its level, title, markdown (in order) and the PNGs its code drew."""

    level: int
    title: str
    markdown: list[str] = field(default_factory=list)
    figures: list[bytes] = field(default_factory=list)


def sections(notebook) -> list[Section]:
    """The notebook's sections in order, split at every heading of level 1–3 in its markdown cells."""
    parts = [Section(0, "")]
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            lines: list[str] = []
            for line in cell.source.splitlines():
                heading = _HEADING.match(line)
                if heading:
                    parts[-1].markdown.append("\n".join(lines))
                    parts.append(Section(len(heading[1]), heading[2]))
                    lines = []
                else:
                    lines.append(line)
            parts[-1].markdown.append("\n".join(lines))
        elif cell.cell_type == "code":
            for output in cell.get("outputs", []):
                png = output.get("data", {}).get("image/png")
                if png:
                    parts[-1].figures.append(base64.b64decode(png))
    return [p for p in parts if p.title or any(m.strip() for m in p.markdown)]


def _blocks(section: Section) -> list[str]:
    """The section's markdown as blocks: paragraphs, lists, display formulas and fenced directives whole."""
    blocks, current, fence = [], [], None
    for text in section.markdown:
        for line in [*text.splitlines(), ""]:
            stripped = line.strip()
            if fence is None and stripped.startswith((":::", "```")) and len(stripped) > 3:
                fence = stripped[:3]
            elif fence is not None and stripped == fence:
                fence = None
                current.append(line)
                continue
            if fence is None and stripped.startswith("$$") and (stripped == "$$" or not stripped.endswith("$$")):
                fence = "$$"
            elif fence == "$$" and stripped.endswith("$$"):
                fence = None
                current.append(line)
                continue
            if not stripped and fence is None:
                if current:
                    blocks.append("\n".join(current).strip("\n"))
                current = []
            else:
                current.append(line)
    if current:
        blocks.append("\n".join(current).strip("\n"))
    return [b for b in blocks if b.strip()]


def _is_display(block: str) -> bool:
    return block.lstrip().startswith("$$")


def _unlink(text: str) -> str:
    """Links into other files keep their text (a deck stands alone); web links and citations stay."""
    return _RELATIVE_LINK.sub(r"\1", text)


def _labelled(blocks: list[str], label: str) -> str | None:
    """The block that opens with ``**Label.**`` and, when it ends in a colon or is followed by one, its list."""
    for i, block in enumerate(blocks):
        if block.startswith(f"**{label}.**"):
            text = block[len(f"**{label}.**") :].strip()
            if i + 1 < len(blocks) and re.match(r"^\s*[-*+] ", blocks[i + 1]) and "\n" not in text.strip():
                text += "\n\n" + blocks[i + 1]
            return text
    return None


def _figure_height(prose: str, display: bool, scale: float = 1.0) -> int:
    """The height (px) left for a figure on a 1280 × 720 slide under a heading, ``prose`` and a formula."""
    lines = -(-len(prose) // int(_CHARACTERS_PER_LINE / scale))
    return 720 - 190 - int(_LINE_HEIGHT * scale) * lines - (90 if display else 0)


def _chunks(text: str, limit: int) -> list[str]:
    """``text``, a list, cut between its points into pieces of at most about ``limit`` characters."""
    points, current = [], []
    for line in text.splitlines():
        if re.match(r"^[-*+] ", line) and current:
            points.append("\n".join(current))
            current = []
        current.append(line)
    points.append("\n".join(current))
    pieces, size = [[]], 0
    for point in points:
        if pieces[-1] and size + len(point) > limit:
            pieces.append([])
            size = 0
        pieces[-1].append(point.rstrip())
        size += len(point)
    return ["\n".join(piece).strip() for piece in pieces]


def _answer(block: str) -> str:
    """The body of a ``:::{dropdown} Answer`` block."""
    lines = block.splitlines()
    return "\n".join(lines[1:-1]).strip()


def deck(notebook, stem: str, figure: Callable[[str, bytes], str]) -> str:
    """The MyST source of ``notebook``'s deck (executed, for its figures); ``figure(name, png)`` saves a PNG.

    ``figure`` is called with a file name (``STEM-k.png``) and the bytes, and returns the path the deck links to.
    """
    parts = sections(notebook)
    title_part = next((p for p in parts if p.level == 1), None)
    if title_part is None:
        raise ValueError(f"notebook must open with a '# NN — Title' heading, got none in {stem!r}")
    intro = _blocks(title_part)
    out = [f"# {title_part.title}", ""]
    leads = [i for i, b in enumerate(intro) if not b.startswith("**")]
    lead = intro[leads[0]] if leads else ""
    listed = None  # the list a lead ending in a colon introduces: a slide of its own
    if lead.endswith(":") and leads[0] + 1 < len(intro) and re.match(r"^\s*([-*+]|\d+\.) ", intro[leads[0] + 1]):
        listed = intro[leads[0] + 1]
    time = _labelled(intro, "Time")
    if lead:
        long = len(lead) > _DENSE_LEAD
        out += [":::{container} workbench-dense", _unlink(lead), ":::", ""] if long else [_unlink(lead), ""]
    if time:
        out += [f"*{_unlink(time)}*", ""]
    if listed:
        out += ["## This session", "", _unlink(listed), ""]
    objectives = _labelled(intro, "Objectives")
    if objectives:
        out += ["## Objectives", "", _unlink(objectives), ""]
    checks, recap, exercises = [], None, []
    for part in parts:
        blocks = _blocks(part)
        if part.level == 2 and _NUMBERED.match(part.title):
            prose = next((b for b in blocks if not _is_display(b) and not b.startswith((":::", "```"))), None)
            display = next((b for b in blocks if _is_display(b)), None)
            out += [f"## {part.title}", ""]
            shown = display is not None and (prose is None or display not in prose)
            # Prose that leaves a figure too little room is set smaller (slides.css: .workbench-dense).
            dense = bool(part.figures and prose) and _figure_height(prose, shown) < _MIN_FIGURE
            if prose:
                out += [":::{container} workbench-dense", _unlink(prose), ":::", ""] if dense else [_unlink(prose), ""]
            if shown:
                out += [display, ""]
            if part.figures:
                name = f"{stem}-{part.title.split('.')[0]}.png"  # the section's number
                height = max(_MIN_FIGURE, _figure_height(prose or "", shown, _DENSE if dense else 1.0))
                out += ["```{image} " + figure(name, part.figures[0]), f":alt: the first figure of {part.title}"]
                out += [f":height: {height}px", "```", ""]
        elif part.level == 2 and part.title.lower().startswith("concept check"):
            for i, block in enumerate(blocks):
                check = _CHECK.match(block)
                if check:
                    answer = next((_answer(b) for b in blocks[i + 1 :] if b.startswith(":::{dropdown}")), "")
                    checks.append((check[1], block[check.end() :], answer))
        elif part.level == 2 and part.title.lower() == "recap":
            recap = "\n\n".join(blocks)
        elif part.level == 3 and _EXERCISE.match(part.title):
            exercises.append(part.title)
    for number, question, answer in checks:
        out += [f"## Check {number}", "", _unlink(question), ""]
        if answer:
            out += [":::{container} fragment", _unlink(answer), ":::", ""]
    if recap:  # a long recap goes on as many slides as it needs, whole points on each
        for number, chunk in enumerate(_chunks(_unlink(recap), _RECAP_CHARACTERS)):
            out += ["## Recap" + (" (continued)" if number else ""), "", chunk, ""]
    if exercises:
        out += ["## Exercises (in the notebook)", "", *(f"* {e}" for e in exercises), ""]
    text = "\n".join(out).rstrip() + "\n"
    if "{cite:" in text:  # each deck lists the works it cites: its keys carry a prefix of its own
        prefix = stem.split("_")[0] + "-"
        text = _CITE.sub(lambda m: m[1] + ",".join(prefix + k.strip() for k in m[2].split(",")) + "`", text)
        options = f":keyprefix: {prefix}\n:labelprefix: {prefix}\n:filter: docname in docnames"
        text += (
            f"\n## References\n\n::::{{container}} workbench-references\n```{{bibliography}}\n{options}\n```\n::::\n"
        )
    return text
