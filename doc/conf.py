"""Sphinx configuration of the skperc documentation."""

import re

import skperc
from skperc._doc_link import DOCUMENTATION_URL

project = "skperc"
author = "The skperc developers"
copyright = "2026, The skperc developers"
release = skperc.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build"]
autosummary_generate = True

# numpydoc renders the Parameters/Attributes sections; the autosummary
# template lists the methods.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "doc_module": ("skperc",),
    "backreferences_dir": "generated",
    "reference_url": {"skperc": None},
    "download_all_examples": False,
    "show_memory": False,
}

html_theme = "pydata_sphinx_theme"
html_title = f"skperc {version}"
# where the docs are served; the estimators' HTML repr links to its pages
html_baseurl = DOCUMENTATION_URL
html_theme_options = {"navigation_with_keys": False}


_SKLEARN_ROLE = re.compile(r":(?:ref|term):`([^`<]*?)(?:\s*<[^`]*>)?`")


def _unlink_sklearn_references(app, what, name, obj, options, lines):
    """Methods inherited from scikit-learn cite its own documentation, which
    this build does not link to (it runs offline): keep their text only."""
    if getattr(obj, "__module__", "").startswith("sklearn."):
        lines[:] = [_SKLEARN_ROLE.sub(r"``\1``", line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _unlink_sklearn_references)
