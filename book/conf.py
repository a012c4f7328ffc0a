"""Sphinx configuration of the course site; ``workbench book build`` stages it with the pages and runs Sphinx.

Sphinx + myst-nb + sphinx-book-theme build fully offline.  (Jupyter Book 2 and mystmd fetch their page
templates from the web at build time, so they cannot build without a network.)  MathJax 2.7 is copied into
``_static/mathjax`` by the builder (workbench/book.py) from the jupyter-server-mathjax package.
"""

project = "Attention Geometry Workbench"
author = "the Attention Geometry Workbench authors"
copyright = "2026, the Attention Geometry Workbench authors"

# sphinx_design: the concept checks' answers, written ":::{dropdown} Answer" in the notebooks (closed until clicked).
extensions = [
    "myst_nb",
    "sphinxcontrib.bibtex",
    "sphinx_design",
    # The API reference (api/, written by workbench.api_reference): autodoc renders each public name's page from its
    # docstring, numpydoc reads the docstrings' numpy sections, autosummary gives each package its table.
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
]
autosummary_generate = False  # the builder writes the pages (workbench/api_reference.py), one directive each
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpy Parameters sections give the types; signatures stay readable
numpydoc_show_class_members = False  # a class page documents its methods itself (:members:)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# conf.py itself is a .py file beside the percent scripts: never a page.  experiments/ is a link the builder
# makes so that notebooks read committed results as ../experiments/results, as they do in the lab.
exclude_patterns = ["conf.py", "_build", "experiments", "**/.ipynb_checkpoints", ".jupyter_cache"]

# The notebooks are jupytext percent scripts; myst-nb reads them through jupytext.
nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:percent"}]}
# Executed at build time (figures in the pages), cached between builds; a failing cell fails the build.
# The builder sets nb_execution_cache_path beside the output folder.
nb_execution_mode = "cache"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
# A $$…$$ display inside a paragraph or list item is display maths, as JupyterLab renders the same cell.
myst_dmath_double_inline = True
myst_heading_anchors = 3
# The course's layout puts "### Solution NN.k" right under a solution notebook's title: a skipped heading level
# is a style choice there, not a broken page.  Every other warning fails the build.
suppress_warnings = ["myst.header"]

bibtex_bibfiles = ["references.bib"]
bibtex_reference_style = "author_year"
bibtex_default_style = "plain"

# MathJax 2.7, bundled: the builder copies it into _static/mathjax, so no page loads anything from the web.
# Only maths nodes, notebook outputs and bibliography entries (titles with TeX) are typeset; a '$' in code or
# prose is left alone.  The package ships
# the STIX-Web fonts of the HTML-CSS output only: use those, and no image fonts.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["$", "$"], ["\\(", "\\)"]],
        "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
        "processEscapes": True,
        "ignoreClass": "document",
        "processClass": "math|output_area|citation",
    },
    "HTML-CSS": {
        "availableFonts": [],
        "preferredFont": None,
        "webFont": "STIX-Web",
        "imageFont": None,
        "linebreaks": {"automatic": True},  # long catalogue statements break to the column's width
    },
    "messageStyle": "none",
}
if tags.has("workbench_print"):  # noqa: F821 - Sphinx gives conf.py its build tags
    # The single page `workbench book pdf` prints holds every formula of the course (over 6,000): no quick preview
    # pass, and no automatic line breaking, which measures each formula again and again (a quarter of an hour
    # for the whole course); a display wider than the printed line then runs into the page margin.
    mathjax2_config["HTML-CSS"]["linebreaks"] = {"automatic": False}
    mathjax2_config["fast-preview"] = {"disabled": True}

html_theme = "sphinx_book_theme"
html_title = "Attention Geometry Workbench"
html_static_path = ["_static"]
html_css_files = ["workbench.css"]
html_js_files = ["workbench.js"]
html_show_sourcelink = False
html_theme_options = {
    # No links to a code host in the page chrome: the site is read offline, from a checkout.
    "use_repository_button": False,
    "use_issues_button": False,
    "use_edit_page_button": False,
    "use_source_button": False,
    "use_download_button": True,
    "use_fullscreen_button": True,
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "launch_buttons": {},
    # One footer line with the copyright and both licences (the LICENSE files at the root of the repository).
    "footer_content_items": ["extra-footer"],
    "extra_footer": (
        '<p class="workbench-licence">© 2026 the Attention Geometry Workbench authors. '
        "Code: MIT licence (LICENSE). Prose, notebooks and figures: CC BY 4.0 (LICENSE-CONTENT.md).</p>"
    ),
}


def setup(app):
    """Load MathJax on every page: bibliography entries carry TeX in their titles but no maths node."""
    app.set_html_assets_policy("always")
