"""A notebook read as a slide deck (workbench/slides.py): what goes on which slide.

The oracle is the fixture notebook itself: its title, lead, time, objectives, numbered sections (prose, formula,
figure), concept checks, recap, exercises and citations are known, so each slide's content is known.  The build of
the decks (Sphinx's revealjs builder) is tested in tests/test_book.py, their look in tests/test_book_browser.py.
"""

import base64
import re

import nbformat
import pytest

from workbench.slides import deck, sections

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
FIRST = """# 03 — A small session

Rows of $P = D^{-1}K$ sum to one, see [the reference](reference.md#reference-a1) and {cite:p}`coifman2006diffusion`.

**Objectives.** After this notebook you can
- compute $P$;
- read a head.

**Prerequisites.** Notebook 02.

**Time.** 50 minutes in class; the code runs in about 5 s.

**Conventions.** Not for the slides."""
SECTION = """## 1. Rows that sum to one

The kernel $K$ is symmetric {cite:t}`coifman2006diffusion,chung1997spectral`.

$$
\\sum_j P_{ij} = 1
$$

More prose that stays in the notebook."""
CHECKS = """## Concept checks

**Check 1.** Is $P$ symmetric?

:::{dropdown} Answer
Not in general: $P = D^{-1}K$ is symmetric only when the degrees agree.
:::

**Check 2.** What is $P\\mathbf 1$?

:::{dropdown} Answer
$\\mathbf 1$.
:::"""
RECAP = "## Recap\n\n" + "\n".join(f"* Point {k}: " + "word " * 40 for k in range(6))
EXERCISES = """## Exercises

### Exercise 03.1 (compute)

Compute it.

### Exercise 03.2 (explore)

Explore it."""


def _notebook(with_figure: bool = True):
    figure = nbformat.v4.new_output("display_data", data={"image/png": base64.b64encode(PNG).decode()})
    cells = [
        nbformat.v4.new_markdown_cell(FIRST),
        nbformat.v4.new_code_cell("import numpy as np"),
        nbformat.v4.new_markdown_cell(SECTION),
        nbformat.v4.new_code_cell("plot()", outputs=[figure] if with_figure else []),
        nbformat.v4.new_markdown_cell(CHECKS),
        nbformat.v4.new_markdown_cell(RECAP),
        nbformat.v4.new_markdown_cell(EXERCISES),
    ]
    return nbformat.v4.new_notebook(cells=cells)


def _slides(text: str) -> dict[str, str]:
    """The deck's slides by title (the text under each ``#``/``##`` heading)."""
    parts = re.split(r"^#{1,2} (.+)$", text, flags=re.MULTILINE)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=True))


def test_sections_split_at_headings_and_keep_their_figures():
    parts = sections(_notebook())
    assert [(p.level, p.title) for p in parts][:2] == [(1, "03 — A small session"), (2, "1. Rows that sum to one")]
    assert parts[1].figures == [PNG]
    assert [p.title for p in parts if p.level == 3] == ["Exercise 03.1 (compute)", "Exercise 03.2 (explore)"]


def test_the_deck_has_its_slides_in_the_notebooks_order():
    saved = {}
    text = deck(_notebook(), "03_small", lambda name, png: saved.setdefault(name, png) and f"figures/{name}")
    slides = _slides(text)
    assert list(slides)[:4] == ["03 — A small session", "Objectives", "1. Rows that sum to one", "Check 1"]
    assert list(slides)[4:] == ["Check 2", "Recap", "Recap (continued)", "Exercises (in the notebook)", "References"]
    title = slides["03 — A small session"]
    assert "Rows of $P = D^{-1}K$ sum to one" in title and "*50 minutes in class" in title
    assert "Conventions" not in text and "Prerequisites" not in title
    assert "- compute $P$;" in slides["Objectives"] and "- read a head." in slides["Objectives"]
    # A numbered section: its first paragraph, its display formula, and its first figure (saved once).
    section = slides["1. Rows that sum to one"]
    assert "The kernel $K$ is symmetric" in section and "\\sum_j P_{ij} = 1" in section
    assert "More prose" not in section
    assert saved == {"03_small-1.png": PNG} and "```{image} figures/03_small-1.png" in section
    # A concept check: the question, then the answer as a fragment (revealed on the next click).
    check = slides["Check 1"]
    assert check.index("Is $P$ symmetric?") < check.index(":::{container} fragment") < check.index("Not in general")
    # The recap is cut between its points, the exercises are listed by title.
    assert slides["Recap"].count("* Point") + slides["Recap (continued)"].count("* Point") == 6
    assert "* Exercise 03.1 (compute)" in slides["Exercises (in the notebook)"]


def test_links_keep_their_text_and_citations_are_the_decks_own():
    text = deck(_notebook(), "03_small", lambda name, png: name)
    assert "see the reference and" in text and "reference.md" not in text
    assert "{cite:p}`03-coifman2006diffusion`" in text
    assert "{cite:t}`03-coifman2006diffusion,03-chung1997spectral`" in text
    assert ":keyprefix: 03-" in text and ":labelprefix: 03-" in text and ":filter: docname in docnames" in text


def test_a_section_without_a_figure_has_no_image_and_a_notebook_without_a_title_is_refused():
    text = deck(_notebook(with_figure=False), "03_small", lambda name, png: pytest.fail("no figure to save"))
    assert "{image}" not in text
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("## 1. No title")])
    with pytest.raises(ValueError, match=r"notebook must open with a '# NN — Title' heading, got none in '00_x'"):
        deck(notebook, "00_x", lambda name, png: name)


def test_long_prose_beside_a_figure_is_set_dense_and_the_figure_keeps_its_room():
    notebook = _notebook()
    notebook.cells[2].source = SECTION.replace("The kernel", "The kernel " + "long " * 200)
    section = _slides(deck(notebook, "03_small", lambda name, png: name))["1. Rows that sum to one"]
    assert section.startswith("\n\n:::{container} workbench-dense")
    assert int(re.search(r":height: (\d+)px", section)[1]) >= 200
