"""Sphinx configuration of the forestrank documentation site.

Build (warnings are errors):

    pip install ".[docs]"
    python -m sphinx -W --keep-going -b html docs docs/_build/html

The gallery's examples (``examples/gallery/plot_*.py``) run at build time and keep their
figures; the API reference comes from the numpydoc docstrings.
"""

import forestrank

project = "forestrank"
author = "forestrank developers"
release = forestrank.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
# The Markdown pages start at level 1 and some sections skip a level on purpose.
suppress_warnings = ["myst.header", "myst.xref_missing"]
myst_heading_anchors = 3

sphinx_gallery_conf = {
    "examples_dirs": "../examples/gallery",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
}

html_theme = "pydata_sphinx_theme"  # scikit-learn's, the theme its users know
html_title = f"forestrank {release}"
